// SPDX-License-Identifier: GPL-2.0
/*
 * A self-contained interactive flame graph.
 *
 * The stacks are merged into a tree (root "all", then the command, then the
 * frames from the outermost caller to the sampled function), children
 * sorted by name as in the folded output.  Every frame becomes a <g> with its
 * position in weight units (data-x, data-w: cycles, or samples with
 * --weight samples), depth (data-d) and name (data-n), a <title> tooltip, a
 * <rect> and a <text> placed for the full view, so the picture renders even
 * without scripts.  The embedded script re-places frames on zoom (click a
 * frame; "Reset Zoom" or Escape to undo), shows name, weight (in the unit
 * that #frames' data-unit names) and percentage of the hovered frame at the
 * bottom, and highlights frames matching a regular expression ("Search" or
 * Ctrl-F), printing the matched share of the whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define SVG_WIDTH 1200
#define SVG_PAD 10
#define SVG_FRAME_H 16
#define SVG_TOP 34
#define SVG_BOTTOM 26
#define SVG_CHAR_W 7.0 /* average glyph width of the 12px font, for trimming */

enum node_kind {
	NODE_ROOT,
	NODE_COMM,
	NODE_USER,
	NODE_KERNEL,
	NODE_JIT,
	NODE_INLINE,
	NODE_UNKNOWN,
};

struct fnode {
	u32 name; /* stack_names id */
	u32 depth;
	u64 count; /* weight of this frame and below */
	u64 x; /* weight left of this frame */
	u8 kind;
};

/* The frames wide enough to draw, in drawing order. */
struct ftree {
	struct fnode *n;
	u32 nr;
	u32 alloc;
	u32 max_depth;
	u64 total; /* the weight of every sample */
	u64 pruned; /* frames narrower than a pixel, left out */
	struct stack_names sn;
};

static u8 frame_kind(const struct report *rep, u32 fi, bool kernel)
{
	const struct frame_info *f = res_fi(rep->r, fi);

	if (!(f->flags & FI_RESOLVED))
		return NODE_UNKNOWN;
	if (f->flags & FI_JIT)
		return NODE_JIT;
	if (f->flags & FI_INLINE)
		return NODE_INLINE;
	return kernel ? NODE_KERNEL : NODE_USER;
}

/* A frame is drawn when at least one pixel wide, as flame graph tools do. */
static bool wide_enough(const struct ftree *t, u64 count)
{
	return count * (SVG_WIDTH - 2 * SVG_PAD) >= t->total;
}

static __noinline void grow_nodes(struct ftree *t)
{
	VEC_GROW(t->n, t->nr, t->alloc);
}

static inline void keep_node(struct ftree *t, u32 name, u32 depth, u64 x, u64 count, u8 kind)
{
	/* most frames of a large profile: counted, nothing else */
	if (depth && !wide_enough(t, count)) {
		t->pruned++;
		return;
	}
	if (t->nr >= t->alloc)
		grow_nodes(t);
	t->n[t->nr++] = (struct fnode){
		.name = name, .depth = depth, .count = count, .x = x, .kind = kind
	};
	t->max_depth = MAX(t->max_depth, depth);
}

static int name_cmp(const void *a, const void *b, void *arg)
{
	const struct strtab *strs = arg;

	return strcmp(strtab_str(strs, *(const u32 *)a), strtab_str(strs, *(const u32 *)b));
}

static int draw_cmp(const void *a, const void *b, void *arg)
{
	const struct fnode *x = a, *y = b;

	(void)arg;
	if (x->x != y->x)
		return x->x < y->x ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

struct open_frame {
	u32 name;
	u8 kind;
	u64 x;
};

/*
 * The call tree, without building it: the stacks sorted by name at each
 * depth (children left to right by name, a stack that ends before a depth
 * after those that go on), so every frame is a run of consecutive samples;
 * one pass opens and closes frames where consecutive stacks part and keeps
 * those at least a pixel wide.  Memory: the sorted sample numbers and the
 * kept frames, whatever the number of distinct stacks.
 */
static void tree_build(struct ftree *t, const struct report *rep)
{
	struct stack_order o = { .ended_last = true };
	struct open_frame *open = NULL;
	u32 *ids, *rank, *order, n, i, k, len, common, cur = 0, alloc_open = 0;
	u64 x = 0; /* weight of the samples before this one */
	u8 *same;

	stack_names_init(&t->sn, rep);
	n = t->sn.strs.nr;
	ids = xmalloc(sizeof(*ids) * (n ? n : 1));
	rank = xmalloc(sizeof(*rank) * (n ? n : 1));
	for (i = 0; i < n; i++)
		ids[i] = i;
	sort(ids, n, sizeof(*ids), name_cmp, &t->sn.strs);
	for (i = 0; i < n; i++)
		rank[ids[i]] = i + 1;
	o.rank_mid = o.rank_last = rank;
	o.max_rank = n;
	order = stack_sort(&t->sn, &o, &same);
	t->total = rep->total;
	keep_node(t, strtab_intern(&t->sn.strs, "all"), 0, 0, t->total, NODE_ROOT);
	for (i = 0; i <= rep->nr_samples; i++) {
		u32 s = i < rep->nr_samples ? order[i] : 0;

		len = i < rep->nr_samples ? stack_len(&t->sn, s) : 0;
		for (common = 0; common < cur && common < len; common++)
			if (open[common].name != stack_name(&t->sn, s, common))
				break;
		for (k = cur; k > common; k--)
			keep_node(t, open[k - 1].name, k, open[k - 1].x, x - open[k - 1].x,
				  open[k - 1].kind);
		for (k = common; k < len; k++) {
			const struct rsample *rs = &rep->samples[s];
			u32 j = rs->nr - k; /* frame index of depth k, innermost first */

			VEC_GROW(open, k, alloc_open);
			open[k].name = stack_name(&t->sn, s, k);
			open[k].x = x;
			open[k].kind =
				k ? frame_kind(rep, rep->frames[rs->first + j], j < rs->nr_kernel)
				  : NODE_COMM;
		}
		cur = len;
		if (i < rep->nr_samples)
			x += report_weight(rep, &rep->samples[s]);
	}
	/* drawing order: left to right, parents before their children */
	sort(t->n, t->nr, sizeof(*t->n), draw_cmp, NULL);
	free(open);
	free(order);
	free(same);
	free(ids);
	free(rank);
}

static void xml_escape(FILE *out, const char *s)
{
	size_t n;

	for (; *s; s++) {
		n = utf8_char_len(s);
		if (n != 1) {
			if (n)
				fwrite(s, 1, n, out);
			else
				fputs("\xef\xbf\xbd", out);
			s += n ? n - 1 : 0;
			continue;
		}
		switch (*s) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&apos;", out);
			break;
		default:
			fputc(*s, out);
		}
	}
}

static void node_color(const struct ftree *t, const struct fnode *n, char *buf, size_t len)
{
	const char *name = strtab_str(&t->sn.strs, n->name);
	u64 h = hash_bytes(name, strlen(name), 0);
	unsigned int v1 = h & 0xff, v2 = (h >> 8) & 0xff;

	switch (n->kind) {
	case NODE_ROOT:
	case NODE_COMM:
		snprintf(buf, len, "rgb(%u,%u,%u)", 170 + v1 % 30, 170 + v1 % 30, 190 + v2 % 30);
		break;
	case NODE_KERNEL:
		snprintf(buf, len, "rgb(%u,%u,%u)", 90 + v1 % 50, 150 + v2 % 50, 220 + v1 % 30);
		break;
	case NODE_JIT:
		snprintf(buf, len, "rgb(%u,%u,%u)", 80 + v1 % 50, 190 + v2 % 50, 80 + v1 % 40);
		break;
	case NODE_INLINE:
		/* aqua, as flame graph tools colour "_[i]" frames */
		snprintf(buf, len, "rgb(%u,%u,%u)", 80 + v1 % 40, 200 + v2 % 40, 200 + v1 % 40);
		break;
	case NODE_UNKNOWN:
		snprintf(buf, len, "rgb(%u,%u,%u)", 185 + v1 % 20, 185 + v1 % 20, 185 + v1 % 20);
		break;
	default:
		/* warm colours: red through orange to yellow */
		snprintf(buf, len, "rgb(%u,%u,%u)", 220 + v1 % 35, 90 + v2 % 130, 40 + v1 % 30);
	}
}

static const char svg_style[] =
	"<style type=\"text/css\">\n"
	"  text { font-family: Verdana, Helvetica, sans-serif; font-size: 12px; fill: #000; }\n"
	"  g.f text { pointer-events: none; }\n"
	"  g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
	"  g.f.anc rect { opacity: 0.55; }\n"
	"  g.f.hit rect { fill: rgb(230,0,230); }\n"
	"  .btn { cursor: pointer; fill: #0645ad; }\n"
	"  #title { font-size: 16px; }\n"
	"</style>\n";

/* Our own script; see the file comment for what it does. */
static const char svg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"'use strict';\n"
	"var W = "
	"%d, PAD = %d, CHAR_W = %.1f;\n"
	"var frames = [], total = 1, unit, details, matched, resetBtn, zoomed = null, re = null;\n"
	"function attr(g, a) { return g.getAttribute('data-' + a); }\n"
	"function num(g, a) { return +attr(g, a); }\n"
	"function pct(n) { return (100 * n / total).toFixed(2) + '%%'; }\n"
	"function fit(t, name, w) {\n"
	"  var max = Math.floor(w / CHAR_W);\n"
	"  t.textContent = max < 3 ? '' :\n"
	"    name.length <= max ? name : name.substr(0, max - 2) + '..';\n"
	"}\n"
	"function place(x0, w0, zd) {\n"
	"  var scale = (W - 2 * PAD) / w0;\n"
	"  frames.forEach(function (g) {\n"
	"    var x = num(g, 'x'), w = num(g, 'w'), d = num(g, 'd');\n"
	"    var lo = Math.max(x, x0), hi = Math.min(x + w, x0 + w0);\n"
	"    var pw = (hi - lo) * scale;\n"
	"    if (hi <= lo || pw < 0.1) { g.style.display = 'none'; return; }\n"
	"    g.style.display = '';\n"
	"    var px = PAD + (lo - x0) * scale;\n"
	"    var r = g.getElementsByTagName('rect')[0], t = g.getElementsByTagName('text')[0];\n"
	"    r.setAttribute('x', px.toFixed(2));\n"
	"    r.setAttribute('width', pw.toFixed(2));\n"
	"    t.setAttribute('x', (px + 3).toFixed(2));\n"
	"    fit(t, attr(g, 'n'), pw - 6);\n"
	"    if (d < zd) g.classList.add('anc'); else g.classList.remove('anc');\n"
	"  });\n"
	"}\n"
	"function zoom(g) {\n"
	"  zoomed = g;\n"
	"  place(num(g, 'x'), num(g, 'w'), num(g, 'd'));\n"
	"  resetBtn.style.opacity = 1;\n"
	"}\n"
	"function unzoom() {\n"
	"  zoomed = null;\n"
	"  place(0, total, -1);\n"
	"  resetBtn.style.opacity = 0;\n"
	"}\n"
	"function search(s) {\n"
	"  frames.forEach(function (g) { g.classList.remove('hit'); });\n"
	"  matched.textContent = '';\n"
	"  re = null;\n"
	"  if (!s) return;\n"
	"  try { re = new RegExp(s); }\n"
	"  catch (e) { matched.textContent = 'bad expression'; return; }\n"
	"  var spans = [];\n"
	"  frames.forEach(function (g) {\n"
	"    if (num(g, 'd') > 0 && re.test(attr(g, 'n'))) {\n"
	"      g.classList.add('hit');\n"
	"      spans.push([num(g, 'x'), num(g, 'x') + num(g, 'w')]);\n"
	"    }\n"
	"  });\n"
	"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  var sum = 0, end = -1;\n"
	"  spans.forEach(function (s) {\n"
	"    if (s[1] <= end) return;\n"
	"    sum += s[1] - Math.max(s[0], end);\n"
	"    end = s[1];\n"
	"  });\n"
	"  matched.textContent = 'Matched: ' + pct(sum);\n"
	"}\n"
	"function ask() {\n"
	"  var s = window.prompt('Search frames (regular expression)', re ? re.source : '');\n"
	"  if (s !== null) search(s);\n"
	"}\n"
	"function init() {\n"
	"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
	"  details = document.getElementById('details');\n"
	"  matched = document.getElementById('matched');\n"
	"  resetBtn = document.getElementById('reset');\n"
	"  total = frames.length ? num(frames[0], 'w') : 1;\n"
	"  unit = document.getElementById('frames').getAttribute('data-unit');\n"
	"  frames.forEach(function (g) {\n"
	"    g.addEventListener('mouseover', function () {\n"
	"      details.textContent = attr(g, 'n') + ' (' + num(g, 'w') + ' ' + unit + ', ' +\n"
	"        pct(num(g, 'w')) + ')';\n"
	"    });\n"
	"    g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
	"    g.addEventListener('click', function () { zoom(g); });\n"
	"  });\n"
	"  resetBtn.addEventListener('click', unzoom);\n"
	"  document.getElementById('search').addEventListener('click', ask);\n"
	"  window.addEventListener('keydown', function (e) {\n"
	"    if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); ask(); }\n"
	"    else if (e.key === 'Escape') { unzoom(); search(''); }\n"
	"  });\n"
	"}\n"
	"window.addEventListener('load', init);\n"
	"]]></script>\n";

static void emit_frame(FILE *out, const struct ftree *t, const struct fnode *n, u64 total,
		       const char *unit, int height)
{
	const char *name = strtab_str(&t->sn.strs, n->name);
	double scale = (double)(SVG_WIDTH - 2 * SVG_PAD) / (total ? total : 1);
	double x = SVG_PAD + n->x * scale, w = n->count * scale;
	int y = height - SVG_BOTTOM - (int)(n->depth + 1) * SVG_FRAME_H;
	/* a hostile capture's periods can make w anything: clamp before the int */
	double chars = (w - 6) / SVG_CHAR_W;
	int max = chars > 0 ? (int)MIN(chars, (double)SVG_WIDTH) : 0;
	size_t len = strlen(name);
	char color[32];

	node_color(t, n, color, sizeof(color));
	fprintf(out, "<g class=\"f\" data-x=\"%llu\" data-w=\"%llu\" data-d=\"%u\" data-n=\"", n->x,
		n->count, n->depth);
	xml_escape(out, name);
	fputs("\"><title>", out);
	xml_escape(out, name);
	fprintf(out, " (%llu %s, %.2f%%)</title>", n->count, unit,
		total ? 100.0 * n->count / total : 0.0);
	fprintf(out,
		"<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" rx=\"2\" "
		"fill=\"%s\"/>",
		x, y, w, SVG_FRAME_H - 1, color);
	fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + 11.5);
	if (max >= 3) {
		if ((int)len <= max) {
			xml_escape(out, name);
		} else {
			size_t n = max - 2;
			char *cut;

			/* never cut a UTF-8 sequence in two */
			while (n && ((u8)name[n] & 0xc0) == 0x80)
				n--;
			cut = xstrndup(name, n);

			xml_escape(out, cut);
			fputs("..", out);
			free(cut);
		}
	}
	fputs("</text></g>\n", out);
}

int report_svg(const struct report *rep, const char *path, const char *title, u64 *pruned)
{
	struct ftree t = { 0 };
	struct out_file o;
	int height, ret;
	FILE *out;
	u32 i;

	ret = out_open(&o, path);
	if (ret)
		return ret;
	out = o.f;
	tree_build(&t, rep);
	height = SVG_TOP + (t.max_depth + 1) * SVG_FRAME_H + SVG_BOTTOM;

	fputs("<?xml version=\"1.0\" standalone=\"no\"?>\n", out);
	fprintf(out,
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n",
		SVG_WIDTH, height, SVG_WIDTH, height);
	fprintf(out,
		"<!-- flame graph written by cycread: width is the share of %s, "
		"bottom-up from caller to callee -->\n",
		report_unit(rep));
	fputs(svg_style, out);
	fprintf(out, svg_script, SVG_WIDTH, SVG_PAD, SVG_CHAR_W);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f6f6f4\"/>\n",
		SVG_WIDTH, height);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">", SVG_WIDTH / 2);
	xml_escape(out, title);
	fputs("</text>\n", out);
	fprintf(out,
		"<text id=\"reset\" class=\"btn\" x=\"%d\" y=\"22\" style=\"opacity:0\">"
		"Reset Zoom</text>\n",
		SVG_PAD);
	fprintf(out,
		"<text id=\"search\" class=\"btn\" x=\"%d\" y=\"22\" text-anchor=\"end\">"
		"Search</text>\n",
		SVG_WIDTH - SVG_PAD);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", SVG_PAD, height - 8);
	fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n",
		SVG_WIDTH - SVG_PAD, height - 8);
	if (t.pruned)
		fprintf(out,
			"<text id=\"pruned\" x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
			"style=\"font-size:10px; fill:#777\">%llu frames narrower than a pixel "
			"not drawn</text>\n",
			SVG_WIDTH / 2, height - 8, (unsigned long long)t.pruned);
	fprintf(out, "<g id=\"frames\" data-unit=\"%s\">\n", report_unit(rep));
	for (i = 0; i < t.nr; i++)
		emit_frame(out, &t, &t.n[i], t.total, report_unit(rep), height);
	fputs("</g>\n</svg>\n", out);
	ret = out_close(&o, 0);
	if (pruned)
		*pruned = t.pruned;
	free(t.n);
	stack_names_free(&t.sn);
	return ret;
}
