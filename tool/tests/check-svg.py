#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check-svg.py SVG FOLDED - structural checks of a cycread flame graph.

The SVG must be well-formed XML, carry its script and its controls (title,
details line, search, reset zoom), and hold exactly one frame per node of
the call tree the folded stacks describe, each with a title tooltip and
widths that add up: a frame is never wider than its parent.
"""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def tree_nodes(folded):
    nodes = {(): 0}
    for line in open(folded, encoding="utf-8"):
        stack, count = line.rstrip("\n").rsplit(" ", 1)
        frames = tuple(stack.split(";"))
        nodes[()] += int(count)
        for i in range(1, len(frames) + 1):
            nodes[frames[:i]] = nodes.get(frames[:i], 0) + int(count)
    return nodes


def main():
    svg, folded = sys.argv[1], sys.argv[2]
    root = ET.parse(svg).getroot()
    errors = []
    if root.find(NS + "script") is None:
        errors.append("no <script>")
    ids = {e.get("id") for e in root.iter() if e.get("id")}
    for want in ("title", "details", "search", "reset", "matched", "frames"):
        if want not in ids:
            errors.append("no element #" + want)
    frames = [g for g in root.iter(NS + "g") if g.get("class") == "f"]
    nodes = tree_nodes(folded)
    if len(frames) != len(nodes):
        errors.append("%d frames for %d call-tree nodes" % (len(frames), len(nodes)))
    total = int(frames[0].get("data-w")) if frames else 0
    if total != nodes[()]:
        errors.append("root has %d samples, folded stacks %d" % (total, nodes[()]))
    for g in frames:
        if g.find(NS + "title") is None or g.find(NS + "rect") is None:
            errors.append("frame without title or rect: " + g.get("data-n", "?"))
        if int(g.get("data-w")) > total:
            errors.append("frame wider than the root: " + g.get("data-n", "?"))
    for e in errors:
        print("error:", e)
    print("%d frames checked" % len(frames))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
