#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check-speedscope.py CYCREAD CAPTURE SPEEDSCOPE - does speedscope import
cycread --raw as perf script output?  Loads it into speedscope's release
build (the npm package, unpacked by scripts/setup-host at SPEEDSCOPE) in
headless Chromium, opens the sandwich view, and reads what the page lists:
one profile per thread, and for the first thread the functions it sampled.
Prints TAP; exit 1 when a check failed, 77 without Chromium.

The control: with --show-task-events the EXEC and EXIT blocks come first,
speedscope takes their "event" for the profile's and drops every sample
(it lists no function), which is why --raw prints them only on request.
"""
import base64
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from tap import check, done  # noqa: E402


def page_text(browser, index, tmp, name, raw):
    """The text of speedscope's page after importing @raw, cells split by '|'."""
    js = os.path.join(tmp, name + ".js")
    with open(js, "w") as f:
        f.write("speedscope.loadFileFromBase64(%r, %r)" %
                (name, base64.b64encode(raw.encode()).decode()))
    url = "file://%s#localProfilePath=%s&view=sandwich" % (index, js)
    r = subprocess.run(["timeout", "90", browser, "--headless", "--no-sandbox", "--disable-gpu",
                        "--virtual-time-budget=5000", "--dump-dom", url],
                       capture_output=True, text=True)
    s = re.sub(r"<(style|script)\b.*?</\1>", "", r.stdout, flags=re.S)
    s = re.sub(r"<[^>]+>", "|", s)
    return html.unescape(re.sub(r"\s*\|[\s|]*", "|", s))


def frames_of(raw, tid):
    """The function names in @tid's sample blocks, as speedscope names them."""
    names = set()
    for block in raw.split("\n\n"):
        lines = block.strip("\n").split("\n")
        head = re.match(r"^\S.*? \d+/(\d+) ", lines[0]) if lines[0] else None
        if not head or head.group(1) != tid:
            continue
        for line in lines[1:]:
            m = re.match(r"^\s*[0-9a-f]+ (.+) \((\S*)\)$", line)
            if m:
                name = re.sub(r"\+0x[0-9a-f]+$", "", m.group(1))
                names.add("??? (%s)" % m.group(2) if name == "[unknown]" else name)
    return names


def main():
    tool, cap, ss = sys.argv[1:4]
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("1..0 # SKIP no chromium")
        return 77
    index = os.path.join(ss, "package", "dist", "release", "index.html")
    check(os.path.exists(index), "speedscope's release build at %s" % index,
          "scripts/setup-host unpacks the speedscope npm package there")
    if not os.path.exists(index):
        return 1
    tmp = tempfile.mkdtemp()
    raw = subprocess.run([tool, "report", "-i", cap, "--raw"], capture_output=True,
                         text=True).stdout
    text = page_text(browser, index, tmp, "raw.txt", raw)
    check("|raw.txt - speedscope|" in text, "speedscope imports cycread --raw", text[:2000])
    threads = sorted(set(re.findall(r"\|(app pid: \d+ tid: \d+)\|", text)))
    check(threads == ["app pid: 100 tid: 100", "app pid: 100 tid: 101"],
          "one speedscope profile per thread: %s" % ", ".join(threads), text[:2000])
    cells = text.split("|")
    listed = set()
    if "Symbol Name" in cells:
        rest = cells[cells.index("Symbol Name") + 1:]
        # rows of three cells: total, self, name
        for i in range(2, len(rest), 3):
            if not re.match(r"^[\d.]+\S*s \(", rest[i - 2]):
                break
            listed.add(rest[i])
    want = frames_of(raw, "100")
    check(listed == want and want,
          "speedscope lists exactly the functions of thread 100's samples (%d)" % len(want),
          "speedscope: %s\ncycread:   %s" % (sorted(listed), sorted(want)))
    side = subprocess.run([tool, "report", "-i", cap, "--raw", "--show-task-events"],
                          capture_output=True, text=True).stdout
    text = page_text(browser, index, tmp, "side.txt", side)
    check("No symbols found." in text,
          "control: with EXEC/EXIT blocks speedscope drops every sample (why they are opt-in)",
          text[:2000])
    shutil.rmtree(tmp)
    return done()


if __name__ == "__main__":
    sys.exit(main())
