# SPDX-License-Identifier: GPL-2.0
#
# folded.sh - shell helpers over folded stacks ("comm;outer;...;leaf COUNT",
# the output of cycread --folded and demo/perfsample --folded), sourced by
# tests/guest/e2e-guest.sh and by the exercises' checks
# (Documentation/exercises/).  POSIX sh and busybox awk.

# samples whose leaf frame is $2, in folded file $1
leaf_count()
{
	awk -v f="$2" '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, fr, ";");
		if (fr[k] == f) t += c } END { print t + 0 }' "$1"
}

# samples whose stack ends with the chain $2 (e.g. "main;do_round;hot_loop")
chain_count()
{
	awk -v ch="$2" '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s);
		if (substr(s, length(s) - length(ch)) == ";" ch) t += c } END { print t + 0 }' "$1"
}

# share of $2 among the four work functions, in tenths of a percent
share10()
{
	w=$(( $(leaf_count "$1" hot_loop) + $(leaf_count "$1" lib_checksum) +
	      $(leaf_count "$1" warm_inner) + $(leaf_count "$1" tiny_leaf) ))
	[ "$w" -gt 0 ] || { echo 0; return; }
	echo $(( $(leaf_count "$1" "$2") * 1000 / w ))
}

# the leaf frame with the most samples in folded file $1
top_leaf()
{
	awk '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, fr, ";"); t[fr[k]] += c }
		END { for (f in t) if (t[f] > best) { best = t[f]; top = f } print top }' "$1"
}

within()
{
	# within VALUE10 WANT_PERCENT TOL_PERCENT
	[ "$1" -ge $(( ($2 - $3) * 10 )) ] && [ "$1" -le $(( ($2 + $3) * 10 )) ]
}
