#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check-pprof.py - does go tool pprof read a cycread --pprof file as cycread
reports the same samples?  Prints TAP; exits 1 when a check failed.

  check-pprof.py --cycread BIN --capture CAP [--filter ARGS] [--top N]
      write the pprof file with BIN from CAP and compare
  check-pprof.py --pprof FILE --period TABLE --samples TABLE [--top N]
      compare a pprof file written elsewhere (the guest) with the tables
      "cycread report --sort sym --children [--weight samples]" printed there

Checks, for both sample types (cycles, the default, and samples):
  - go tool pprof -top: the first N functions (by flat, then name) and their
    flat% and cum% equal cycread's Self and Children shares, row for row;
  - go tool pprof -raw: the per-function sums of the samples' values
    (samples and cycles of the samples each function is the leaf of) equal
    cycread's Samples column and its shares, every function, and the totals
    equal cycread's.
pprof (with -symbolize=none: the names are cycread's) has no "[k]": it is
taken off cycread's names before comparing.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from tap import check, done  # noqa: E402


def short(name):
    for mark in (" [k]", " (inlined)"):
        if name.endswith(mark):
            return name[:-len(mark)]
    return name


def cycread_table(text):
    """name -> [children %, self %, samples]; and the totals line."""
    rows = {}
    total = None
    for line in text.splitlines():
        m = re.match(r"^# total: (\d+) samples(?:, (\d+) \S+)?$", line)
        if m:
            total = (int(m.group(1)), int(m.group(2) or 0))
            continue
        m = re.match(r"^ +([\d.]+)% +([\d.]+)% +(\d+)  (.*)$", line)
        if not m:
            continue
        row = rows.setdefault(short(m.group(4)), [0.0, 0.0, 0])
        row[0] += float(m.group(1))
        row[1] += float(m.group(2))
        row[2] += int(m.group(3))
    return rows, total


def pprof(*args):
    env = dict(os.environ, PPROF_TMPDIR=tempfile.gettempdir(), HOME=tempfile.gettempdir())
    r = subprocess.run(["go", "tool", "pprof", "-symbolize=none"] + list(args),
                       capture_output=True, text=True, env=env)
    return r.returncode, r.stdout, r.stderr


def pprof_top(path, index):
    """(flat %, cum %, name) per node.  pprof prints small shares with more
    digits ("0.075%"): the shares are computed from its absolute values and
    its total, as cycread computes them, and compared at two decimals."""
    # -unit=ns: plain numbers for the clock's nanoseconds too (and "ns" on counts)
    rc, out, err = pprof("-top", "-unit=ns", "-nodecount=100000", "-nodefraction=0",
                         "-edgefraction=0", "-sample_index=" + index, path)
    rows, total = [], None
    for line in out.splitlines():
        m = re.search(r"^Showing nodes accounting for .* of (\d+)\S* total", line)
        if m:
            total = int(m.group(1))
        # a share under 0.0001 % is printed in exponent form ("9.6e-05%")
        pct = r"[\d.]+(?:e[+-]\d+)?%"
        m = re.match(r"^ *(\d+)(?:ns)? +%s +%s +(\d+)(?:ns)? +%s  (.*)$" % (pct, pct, pct), line)
        if m and total:
            name = re.sub(r" \(inline\)$", "", m.group(3))
            rows.append((int(m.group(1)), 100.0 * int(m.group(1)) / total,
                         100.0 * int(m.group(2)) / total, name))
    return rc, rows, err + out


def pprof_raw(path):
    """Per leaf function: [samples, cycles]; the totals; the sample types; per
    location (address, ((function, file:line), ...)) innermost first; the raw text."""
    rc, out, err = pprof("-raw", path)
    samples, locs, types, chains, cur = [], {}, [], [], None
    part = None
    for line in out.splitlines():
        if part == "s" and not types:
            # "samples/count cycles/count[dflt]": the sample types
            types = [t.split("/")[0] for t in line.split()]
        if line.startswith("Samples:"):
            part = "s"
        elif line.startswith("Locations"):
            part = "l"
        elif line.startswith("Mappings"):
            part = None
        elif part == "s":
            m = re.match(r"^ +(\d+) +(\d+): ([\d ]+)$", line)
            if m:
                samples.append((int(m.group(1)), int(m.group(2)), m.group(3).split()))
        elif part == "l":
            # "ID: 0xADDR M=N function file:line s=N", the innermost line first
            m = re.match(r"^ +(\d+): 0x([0-9a-f]+) M=\d+ (.*) s=\d+", line)
            c = re.match(r"^ {13}(.*) s=\d+$", line)
            if m:
                name, src = m.group(3).rsplit(" ", 1)
                locs[m.group(1)] = name
                cur = [int(m.group(2), 16), [(name, src if src != ":0" else "")]]
                chains.append(cur)
            elif c and cur:
                name, src = c.group(1).rsplit(" ", 1)
                cur[1].append((name, src if src != ":0" else ""))
    leaf = {}
    for count, cycles, ids in samples:
        name = locs.get(ids[0], "?") if ids else "?"
        v = leaf.setdefault(name, [0, 0])
        v[0] += count
        v[1] += cycles
    total = (sum(s[0] for s in samples), sum(s[1] for s in samples))
    return rc, leaf, total, types, set((a, tuple(c)) for a, c in chains), err + out


def cycread_chains(raw):
    """From --raw --raw-details: per frame address, the functions there
    (inlined ones first) with their source lines, as pprof's locations."""
    chains = []
    for block in raw.split("\n\n"):
        cur, inlined = None, False
        for line in block.split("\n")[1:]:
            m = re.match(r"^\t *([0-9a-f]+) (.+?)(?:\+0x[0-9a-f]+)? \((\S*)\)(?: (\S+:\d+))?",
                         line)
            if not m:
                continue
            addr, name, src = int(m.group(1), 16), m.group(2), m.group(4) or ""
            if cur is not None and cur[0] == addr and inlined:
                cur[1].append((name, src))
            else:
                cur = [addr, [(name, src)]]
                chains.append(cur)
            # an inline frame: the next frame, at the same address, is its caller
            inlined = m.group(3) == "inlined"
    return set((a, tuple(c)) for a, c in chains)


def compare(path, period_text, samples_text, top, label, raw=None, inline=None):
    raw_rc, leaf, raw_total, types, chains, raw_text = pprof_raw(path)
    check(raw_rc == 0 and leaf and len(types) == 2,
          "%s: go tool pprof -raw reads it (%d leaf functions, sample types %s)" %
          (label, len(leaf), " ".join(types)), raw_text)
    event = types[1] if len(types) == 2 else "cycles"
    tables = {event: cycread_table(period_text), "samples": cycread_table(samples_text)}
    for index, (rows, total) in tables.items():
        rc, prow, text = pprof_top(path, index)
        check(rc == 0 and prow, "%s: go tool pprof -top -sample_index=%s reads it" %
              (label, index), text)
        # pprof leaves out functions whose value is 0 (samples of period 0):
        # cycread shows them at 0.00 %
        shown = set(p[3] for p in prow)
        rows = {name: r for name, r in rows.items() if name in shown or r[0] > 0}
        ours = sorted(((-r[1], name) for name, r in rows.items() if r[2]), key=lambda x: x)
        # ranked as cycread ranks its printed rows: by the share at two
        # decimals, then by name (exact shares would order ties differently
        # and move a different function into the last places of the top N)
        theirs = sorted(((-float("%.2f" % p[1]), p[3]) for p in prow if p[0]), key=lambda x: x)
        want = ["%6.2f%%  %s" % (-s, name) for s, name in ours[:top]]
        got = ["%6.2f%%  %s" % (-s, name) for s, name in theirs[:top]]
        check(want == got and len(want) == min(top, len(ours)),
              "%s: top %d by %s: pprof flat%% equals cycread's self share, row for row" %
              (label, len(want), index),
              "cycread:\n" + "\n".join(want) + "\npprof:\n" + "\n".join(got))
        cum_want = sorted("%6.2f%%  %s" % (r[0], name) for name, r in rows.items())
        cum_got = sorted("%6.2f%%  %s" % (p[2], p[3]) for p in prow)
        check(cum_want == cum_got, "%s: by %s, pprof cum%% equals cycread's children share "
              "for all %d functions" % (label, index, len(cum_want)),
              "cycread:\n" + "\n".join(cum_want) + "\npprof:\n" + "\n".join(cum_got))
    rows, total = tables[event]
    want = sorted("%s %d" % (name, r[2]) for name, r in rows.items() if r[2])
    got = sorted("%s %d" % (name, v[0]) for name, v in leaf.items())
    check(want == got, "%s: -raw samples per leaf function equal cycread's Samples column" %
          label, "cycread:\n" + "\n".join(want) + "\npprof:\n" + "\n".join(got))
    shares = sorted("%s %.2f%%" % (name, 100.0 * v[1] / raw_total[1] if raw_total[1] else 0)
                    for name, v in leaf.items())
    ours = sorted("%s %.2f%%" % (name, r[1]) for name, r in rows.items() if r[2])
    check(shares == ours, "%s: -raw cycles per leaf function give cycread's self shares" %
          label, "cycread:\n" + "\n".join(ours) + "\npprof:\n" + "\n".join(shares))
    check(total is not None and raw_total == total,
          "%s: -raw totals %s equal cycread's %s" % (label, raw_total, total))
    if inline:
        found = [c for a, c in chains
                 if len(c) > 1 and any(f[0] == inline and re.search(r":[1-9]\d*$", f[1])
                                       for f in c[:-1])]
        check(found, "%s: %s is an inline Line (with its source line) of a location: %s" %
              (label, inline, " < ".join("%s %s" % f for f in found[0]) if found else "none"))
    if raw is None:
        return
    # unnamed frames: cycread prints file+offset, pprof the function "[file]"
    unnamed = set(a for a, c in chains if c[0][0].startswith("["))
    ours = sorted(c for c in cycread_chains(raw) if c[0] not in unnamed)
    theirs = sorted(c for c in chains if c[0] not in unnamed)
    fmt = lambda cs: ["%x %s" % (a, " < ".join("%s %s" % f for f in c)) for a, c in cs]
    check(ours == theirs and any(len(c) > 1 for a, c in ours),
          "%s: every location's lines (inline frames first) equal --raw-details' frames "
          "(%d locations, %d with inline frames)" %
          (label, len(ours), sum(len(c) > 1 for a, c in ours)),
          "cycread:\n" + "\n".join(fmt(ours)[:15]) + "\npprof:\n" + "\n".join(fmt(theirs)[:15]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cycread")
    ap.add_argument("--capture")
    ap.add_argument("--filter", default="")
    ap.add_argument("--pprof")
    ap.add_argument("--period")
    ap.add_argument("--samples")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--label", default="pprof")
    ap.add_argument("--expect-inline", metavar="FUNCTION",
                    help="FUNCTION must appear inlined in a location, with its line")
    ap.add_argument("--lines", action="store_true",
                    help="also compare the locations' lines with --raw --raw-details")
    a = ap.parse_args()
    if a.cycread:
        tmp = tempfile.mkdtemp()
        path = os.path.join(tmp, "profile.pb.gz")
        base = [a.cycread, "report", "-i", a.capture] + a.filter.split()
        r = subprocess.run(base + ["--pprof", path, "-q"], capture_output=True, text=True)
        check(r.returncode == 0 and os.path.getsize(path) > 0,
              "%s: cycread --pprof writes the file" % a.label, r.stderr)
        period = subprocess.run(base + ["--sort", "sym", "--children", "--weight", "period"],
                                capture_output=True, text=True).stdout
        samples = subprocess.run(base + ["--sort", "sym", "--children", "--weight", "samples"],
                                 capture_output=True, text=True).stdout
        raw = subprocess.run(base + ["--raw", "--raw-details"], capture_output=True,
                             text=True).stdout if a.lines else None
    else:
        path = a.pprof
        with open(a.period) as f:
            period = f.read()
        with open(a.samples) as f:
            samples = f.read()
        raw = None
    compare(path, period, samples, a.top, a.label, raw, a.expect_inline)
    return done()


if __name__ == "__main__":
    sys.exit(main())
