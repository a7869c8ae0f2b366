// SPDX-License-Identifier: GPL-2.0
/*
 * The call-graph trees under the top table's rows (-G, --call-graph
 * caller|callee), in the layout of perf report's "graph" mode:
 *
 *	    30.29%        7  app     compute
 *	           |
 *	           ---compute
 *	              do_work
 *	              |
 *	              |--20.00%--main
 *	              |          __libc_start_main
 *	              |
 *	               --10.29%--other
 *
 * A chain continues on the next line while one caller (or callee) holds all
 * of the weight; where it splits, each branch gets its share of the whole
 * report's weight.  Without --children the paths are whole stacks: callee
 * order from the sampled function up to the outermost caller, caller order
 * the other way.  With --children they start at the row's function: callee
 * order goes up to its callers, caller order down to what it called.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define TREE_INDENT "           "
#define TREE_NONE UINT32_MAX

struct tnode {
	u64 key; /* the function: name, object and kernel bit */
	u32 fi; /* a frame_info naming it */
	bool kernel;
	u64 weight;
	u32 parent;
	u32 first_kid;
	u32 next;
};

struct tree {
	struct tnode *n;
	u32 nr;
	u32 alloc;
	struct u64map kids; /* hash of (parent, key) -> node */
};

static u64 fn_key(const struct frame_info *fi, bool kernel)
{
	return (u64)fi->func << 32 | (u64)fi->dso << 1 | kernel;
}

static u64 kid_hash(u32 parent, u64 key)
{
	return hash64(key ^ hash64(parent));
}

static u32 new_node(struct tree *t, u32 parent, u64 key, u32 fi, bool kernel)
{
	struct tnode *n;

	VEC_GROW(t->n, t->nr, t->alloc);
	n = &t->n[t->nr];
	*n = (struct tnode){ .key = key,
			     .fi = fi,
			     .kernel = kernel,
			     .parent = parent,
			     .first_kid = TREE_NONE,
			     .next = TREE_NONE };
	if (parent != TREE_NONE) {
		n->next = t->n[parent].first_kid;
		t->n[parent].first_kid = t->nr;
	}
	return t->nr++;
}

static u32 kid(struct tree *t, u32 parent, u32 fi_idx, const struct frame_info *fi, bool kernel)
{
	u64 key = fn_key(fi, kernel), h = kid_hash(parent, key), idx;
	u32 k;

	if (u64map_get(&t->kids, h, &idx) && t->n[idx].parent == parent && t->n[idx].key == key)
		return idx;
	/* a hash collision (or a new kid): look through the siblings */
	for (k = t->n[parent].first_kid; k != TREE_NONE; k = t->n[k].next)
		if (t->n[k].key == key)
			return k;
	k = new_node(t, parent, key, fi_idx, kernel);
	if (!u64map_get(&t->kids, h, NULL))
		u64map_put(&t->kids, h, k);
	return k;
}

/* Add the path of one entry, in the order the tree reads it. */
static void add_path(struct tree *t, const struct report *rep, const struct report_opts *o,
		     const struct tree_ref *ref)
{
	const struct rsample *rs = &rep->samples[ref->sample];
	u64 w = report_weight(rep, rs);
	int j, end, step;
	u32 cur = 0;

	if (o->graph == GRAPH_CALLEE) {
		j = ref->frame;
		end = rs->nr;
		step = 1;
	} else {
		j = o->children ? (int)ref->frame : rs->nr - 1;
		end = -1;
		step = -1;
	}
	t->n[0].weight += w;
	for (; j != end; j += step) {
		u32 fi = rep->frames[rs->first + j];

		cur = kid(t, cur, fi, res_fi(rep->r, fi), j < rs->nr_kernel);
		t->n[cur].weight += w;
	}
}

static void node_name(const struct report *rep, const struct tnode *n, struct sbuf *sb)
{
	sbuf_reset(sb);
	sbuf_addstr(sb, res_str(rep->r, res_fi(rep->r, n->fi)->func));
	if (n->kernel)
		sbuf_addstr(sb, " [k]");
	else if (res_fi(rep->r, n->fi)->flags & FI_INLINE)
		sbuf_addstr(sb, " (inlined)");
}

struct kid_order {
	const struct tree *t;
	const struct report *rep;
};

static int kid_cmp(const void *a, const void *b, void *arg)
{
	const struct kid_order *ord = arg;
	const struct tnode *x = &ord->t->n[*(const u32 *)a], *y = &ord->t->n[*(const u32 *)b];
	const struct resolver *r = ord->rep->r;
	int d;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	d = strcmp(res_str(r, res_fi(r, x->fi)->func), res_str(r, res_fi(r, y->fi)->func));
	return d ? d : (int)x->kernel - (int)y->kernel;
}

/* The kids of @node worth showing, heaviest first; the caller frees them. */
static u32 shown_kids(const struct tree *t, const struct report *rep, double limit, u32 node,
		      u32 **out)
{
	u32 nr = 0, alloc = 0, k;

	*out = NULL;
	for (k = t->n[node].first_kid; k != TREE_NONE; k = t->n[k].next) {
		if (report_pct(t->n[k].weight, rep->total) < limit)
			continue;
		VEC_GROW(*out, nr, alloc);
		(*out)[nr++] = k;
	}
	sort(*out, nr, sizeof(**out), kid_cmp, &(struct kid_order){ t, rep });
	return nr;
}

struct printer {
	const struct tree *t;
	const struct report *rep;
	double limit;
	FILE *out;
	struct sbuf name;
};

static void print_kids(struct printer *pr, u32 node, const char *prefix);

/*
 * Print @node's name, then the names below it while one kid holds all of
 * its weight, each line after the first with @prefix; then the branches.
 */
static void print_chain(struct printer *pr, u32 node, const char *prefix)
{
	u32 *kids, nr;

	for (;;) {
		node_name(pr->rep, &pr->t->n[node], &pr->name);
		fprintf(pr->out, "%s\n", pr->name.buf);
		nr = shown_kids(pr->t, pr->rep, pr->limit, node, &kids);
		if (nr != 1 || pr->t->n[kids[0]].weight != pr->t->n[node].weight)
			break;
		node = kids[0];
		free(kids);
		fputs(prefix, pr->out);
	}
	free(kids);
	print_kids(pr, node, prefix);
}

static void print_kids(struct printer *pr, u32 node, const char *prefix)
{
	u32 *kids, nr, i;

	nr = shown_kids(pr->t, pr->rep, pr->limit, node, &kids);
	for (i = 0; i < nr; i++) {
		bool last = i + 1 == nr;
		char share[32], *next;

		snprintf(share, sizeof(share), "--%.2f%%--",
			 report_pct(pr->t->n[kids[i]].weight, pr->rep->total));
		fprintf(pr->out, "%s|\n%s%s%s", prefix, prefix, last ? " " : "|", share);
		next = xasprintf("%s%s%*s", prefix, last ? " " : "|", (int)strlen(share), "");
		print_chain(pr, kids[i], next);
		free(next);
	}
	free(kids);
}

void report_tree(const struct report *rep, const struct report_opts *o, const struct tree_ref *refs,
		 u32 nr, FILE *out)
{
	struct printer pr = { .rep = rep, .limit = o->graph_limit, .out = out };
	struct tree t = { 0 };
	u32 i, *kids, nk;

	new_node(&t, TREE_NONE, 0, 0, false);
	for (i = 0; i < nr; i++)
		add_path(&t, rep, o, &refs[i]);
	pr.t = &t;
	nk = shown_kids(&t, rep, pr.limit, 0, &kids);
	if (nk == 1 && t.n[kids[0]].weight == t.n[0].weight) {
		fputs(TREE_INDENT "|\n" TREE_INDENT "---", out);
		print_chain(&pr, kids[0], TREE_INDENT "   ");
	} else {
		print_kids(&pr, 0, TREE_INDENT);
	}
	if (nk)
		fputc('\n', out);
	free(kids);
	sbuf_free(&pr.name);
	u64map_free(&t.kids);
	free(t.n);
}
