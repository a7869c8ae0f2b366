#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check-svg.py SVG FOLDED - structural checks of a cycread flame graph.

The SVG must be well-formed XML, carry its script and its controls (title,
details line, search, reset zoom), and hold exactly one frame per node of
the call tree the folded stacks describe that is at least a pixel wide (the
others are counted in the #pruned note), each with a title tooltip, at its
depth with its sample count: a frame is never wider than its parent.
"""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
DRAWN_PX = 1180  # SVG_WIDTH - 2 * SVG_PAD in report_svg.c


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
    total = nodes[()]
    wide = {k: v for k, v in nodes.items() if not k or v * DRAWN_PX >= total}
    if len(frames) != len(wide):
        errors.append("%d frames for %d call-tree nodes a pixel wide" % (len(frames), len(wide)))
    pruned = [e for e in root.iter(NS + "text") if e.get("id") == "pruned"]
    said = int(pruned[0].text.split()[0]) if pruned else 0
    if said != len(nodes) - len(wide):
        errors.append("%d frames said pruned, %d are narrower than a pixel"
                      % (said, len(nodes) - len(wide)))
    drawn = sorted((int(g.get("data-d")), int(g.get("data-w"))) for g in frames)
    want = sorted((len(k), v) for k, v in wide.items())
    if drawn != want:
        errors.append("frames' depths and sample counts differ from the call tree's")
    if frames and int(frames[0].get("data-w")) != total:
        errors.append("root has %s samples, folded stacks %d" % (frames[0].get("data-w"), total))
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
