#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""parse.py BENCH_DIR - turn scripts/bench's raw logs into tables.

Reads BENCH_DIR/*/guest.log (one per kernel) and BENCH_DIR/host.log; writes
BENCH_DIR/results.json (every run and every derived figure), results.tsv
(one run per line) and results.md (the tables Documentation/performance.rst
quotes).  Figures only: nothing here passes or fails.
"""
import glob
import json
import math
import os
import re
import statistics
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def kv(text):
    out = {}
    for tok in text.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            out[k] = v
    return out


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def read_guest(path):
    g = {"runs": [], "files": {}, "info": {}, "host": {}}
    cur = None
    for raw in open(path, errors="replace"):
        line = ANSI.sub("", raw.rstrip("\n"))
        if cur is not None:
            if line == "@end":
                cur = None
            else:
                g["files"][name].append(line)
            continue
        if line.startswith("@file "):
            name = line.split()[1]
            g["files"][name] = []
            cur = name
        elif line.startswith("@r "):
            g["runs"].append(kv(line[3:]))
        elif line.startswith("@info "):
            g["info"] = kv(line[6:])
        elif line.startswith("@host "):
            g["host"].update(kv(line[6:]))
        elif line.startswith("@host-end "):
            end = kv(line[10:])
            g["host"]["host_load_end"] = end.get("host_load")
            for key in ("wall_s", "host_cpu_s"):
                if key in end:
                    g["host"][key] = end[key]
        elif line.startswith("@done"):
            g["done"] = True
    return g


def runs(g, **want):
    return [r for r in g["runs"] if all(r.get(k) == str(v) for k, v in want.items())]


def field(rs, key):
    return [num(r.get(key)) for r in rs]


# --- flat profiles ---------------------------------------------------------

def profile(lines):
    """{key: samples} from a cycread report or a perf report -n."""
    prof = {}
    for line in lines:
        if line.startswith("@total "):
            prof[None] = int(line.split()[1])
            continue
        if line.startswith("#") or "%" not in line:
            continue
        w = line.split()
        if len(w) < 4 or not w[0].endswith("%"):
            continue
        try:
            n = int(w[1])
        except ValueError:
            continue
        dso = w[2]
        rest = w[3:]
        if rest and rest[0] in ("[.]", "[k]"):       # perf
            kernel = rest[0] == "[k]"
            sym = " ".join(rest[1:])
            if re.fullmatch(r"0x[0-9a-f]+", sym):    # perf: unresolved, per address
                sym = "[%s]" % dso
        else:                                          # cycread
            kernel = rest[-1] == "[k]"
            sym = " ".join(rest[:-1] if kernel else rest)
        key = "%s %s" % (dso, sym)
        prof[key] = prof.get(key, 0) + n
    return prof


def by_dso(prof):
    out = {}
    for k, v in prof.items():
        d = None if k is None else k.split(" ", 1)[0]
        out[d] = out.get(d, 0) + v if d is not None else v
    return out


def agreement(pa, pb, top=10):
    na = pa.pop(None, None) or sum(pa.values())
    nb = pb.pop(None, None) or sum(pb.values())
    if not na or not nb:
        return None
    sa = {k: v / na for k, v in pa.items()}
    sb = {k: v / nb for k, v in pb.items()}
    ta = sorted(sa, key=lambda k: -sa[k])[:top]
    tb = sorted(sb, key=lambda k: -sb[k])[:top]
    rows = []
    for k in sorted(set(ta) | set(tb), key=lambda k: -(sa.get(k, 0) + sb.get(k, 0))):
        a, b = sa.get(k, 0.0), sb.get(k, 0.0)
        # 3 sigma of the difference of two independent sample proportions,
        # at least 1 percentage point.
        sig = math.sqrt(a * (1 - a) / na + b * (1 - b) / nb)
        tol = max(0.01, 3 * sig)
        rows.append({"key": k, "cycsample": a, "perf": b, "diff": a - b, "tol": tol,
                     "within": abs(a - b) <= tol, "in_top_a": k in ta, "in_top_b": k in tb})
    return {"samples_cycsample": na, "samples_perf": nb,
            "top_overlap": len(set(ta) & set(tb)), "rows": rows,
            "all_within": all(r["within"] for r in rows)}


# --- derived figures ---------------------------------------------------------

TOOLS = ("cycsample", "perf", "cycsample-nocg", "perf-nocg")
TOOL_TITLE = {"cycsample": "cycsample -g", "perf": "perf -g", "cycsample-nocg": "cycsample",
              "perf-nocg": "perf"}
# The pairs the goals compare: cycsample's figure over perf's.
PAIRS = (("cg", "cycsample", "perf"), ("nocg", "cycsample-nocg", "perf-nocg"))


# The figure of a cell: the least of its repetitions' per-sample costs, each
# against the cheapest run alone.  Under -icount a run's time counts the
# instructions the guest executed: what the sampler costs is in every run,
# what else happens in one only ever adds.  With mt on one CPU the runs that
# stand out are such additions: perf's runs of mt took about 0.5 ms more in
# 0 to 17 of 17 to 30 runs a boot, as much at 1 kHz as at 20 kHz, whether
# cycsample.ko was loaded or not, and a median of three keeps the step
# whenever two runs of a cell had it (two cost phases per kernel: 3 of 144
# figures 3.3 to 5.1 % apart by the median, none beyond 0.85 % by the least).
# The median and the largest are kept beside it, so a dear run still shows
# (Documentation/performance.rst, "perf's dear runs are steps").
FIGURE = "min"


def spread(xs):
    """min, median, max of the values that exist."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"min": min(xs), "med": statistics.median(xs), "max": max(xs), "n": len(xs)}


def ratio(a, b):
    return a / b if a is not None and b else None


def derive_cost(g):
    """Per workload and rate: the runs alone, each tool's per-sample figures."""
    pinned = g["info"].get("pin", "0") == "1"
    # mt's cost runs on one CPU (run.sh's MT_CPUS=1) split as the pinned ones do
    mt_one = g["info"].get("mt_cpus") == "1"
    cells = []
    wls = []
    for r in runs(g, phase="cost"):
        if r["wl"] not in wls:
            wls.append(r["wl"])
    for wl in wls:
        freqs = sorted({r["freq"] for r in runs(g, phase="cost", wl=wl) if r["tool"] != "none"},
                       key=int)
        for f in freqs:
            size = runs(g, phase="cost", wl=wl, freq=f)[0].get("size")
            alone = runs(g, phase="cost", wl=wl, tool="none", size=size)
            ae = spread(field(alone, "elapsed_ns"))
            ac = spread(field(alone, "cpu_ns"))
            cell = {"wl": wl, "freq": int(f), "size": size,
                    "pinned": pinned and (wl != "mt" or mt_one),
                    "alone_ms": ae and {k: (v / 1e6 if k != "n" else v) for k, v in ae.items()},
                    "tools": {}}
            for t in TOOLS:
                rs = runs(g, phase="cost", wl=wl, tool=t, freq=f)
                if not rs:
                    continue
                reps = []
                for r in rs:
                    e, c, n = num(r.get("elapsed_ns")), num(r.get("cpu_ns")), num(r.get("samples"))
                    tc = num(r.get("tool_cpu_ns"))
                    rep = {"rep": int(r["rep"]), "samples": n, "status": r.get("status"),
                           "rate_after": num(r.get("rate_after")), "lost": num(r.get("lost")),
                           "throttled": num(r.get("throttled")),
                           "slowdown": e / ae[FIGURE] if e and ae else None,
                           "per_sample_us": (e - ae[FIGURE]) / n / 1e3 if e and n and ae
                           else None,
                           "reader_cpu_ms": (tc - c) / 1e6 if tc and c else None}
                    if cell["pinned"] and c and n and ac:
                        rep["path_us"] = (c - ac[FIGURE]) / n / 1e3
                        rep["reader_run_us"] = rep["per_sample_us"] - rep["path_us"]
                    if cell["pinned"] and num(r.get("cost_count")):
                        rep["handler_us"] = num(r["cost_total_ns"]) / num(r["cost_count"]) / 1e3
                    reps.append(rep)
                row = {"reps": reps}
                for key in ("per_sample_us", "path_us", "reader_run_us", "reader_cpu_ms",
                            "samples", "slowdown", "handler_us", "rate_after", "lost"):
                    row[key] = spread([x.get(key) for x in reps])
                cell["tools"][t] = row
            for name, a, b in PAIRS:
                ta, tb = cell["tools"].get(a), cell["tools"].get(b)
                at = lambda k, stat: ratio(*(t and t[k] and t[k][stat] for t in (ta, tb)))
                cell["ratio_" + name] = at("per_sample_us", FIGURE)
                # the split is a picture of the medians, as its tables say
                cell["path_ratio_" + name] = at("path_us", "med")
            cells.append(cell)
    return cells


def lowest_rate(g, tool_prefix):
    """The lowest limit left by a run under the kernel's default throttle (mt runs have
    none: see bench/guest/run.sh)."""
    xs = [num(r.get("rate_after")) for r in g["runs"]
          if r["phase"] in ("cost", "loss") and r.get("pct") != "0"
          and r["tool"] in (tool_prefix, tool_prefix + "-nocg")]
    xs = [x for x in xs if x is not None]
    return min(xs) if xs else None


def goals(d):
    """The issue's goals, as this run measured them."""
    out = {}
    for name, limit in (("cg", 0.8), ("nocg", 0.9)):
        rs = [c["ratio_" + name] for c in d["cost"] if c.get("ratio_" + name) is not None]
        out["ratio_" + name] = {
            "limit": limit, "cells": len(rs), "met": sum(1 for x in rs if x <= limit),
            "min": min(rs) if rs else None, "med": statistics.median(rs) if rs else None,
            "max": max(rs) if rs else None}
    # "met" is None where the run measured nothing for the goal (a phase not run)
    c, p = d["lowest_rate_cycsample"], d["lowest_rate_perf"]
    out["rate"] = {"cycsample": c, "perf": p,
                   "met": None if c is None or p is None else c >= p}
    ten = [x for x in d["loss"] if x["freq"] == 10000]
    lost = ten[0]["cycsample_lost"] if ten else None
    out["loss_10k"] = {"lost": lost,
                       "samples": ten[0]["cycsample_samples"] if ten else None,
                       "met": None if lost is None else lost == 0}
    return out


def derive(g):
    d = {"cost": derive_cost(g)}
    d["lowest_rate_cycsample"] = lowest_rate(g, "cycsample")
    d["lowest_rate_perf"] = lowest_rate(g, "perf")

    loss = []
    for f in sorted({r["freq"] for r in runs(g, phase="loss")}, key=int):
        c = (runs(g, phase="loss", tool="cycsample", freq=f) or [{}])[0]
        p = (runs(g, phase="loss", tool="perf", freq=f) or [{}])[0]
        ps = (runs(g, phase="loss", tool="perf-stats", freq=f) or [{}])[0]
        loss.append({"freq": int(f),
                     "secs": num(c.get("duration_ns")) and num(c["duration_ns"]) / 1e9,
                     "cycsample_samples": num(c.get("samples")),
                     "cycsample_lost": num(c.get("lost")),
                     "cycsample_throttled": num(c.get("throttled")),
                     "cycsample_rate_after": num(c.get("rate_after")),
                     "cycsample_reader_cpu_ms": (num(c.get("tool_cpu_ns")) or 0) / 1e6 -
                     (num(c.get("cpu_ns")) or 0) / 1e6,
                     "perf_samples": num(p.get("samples")),
                     "perf_lost_records": num(ps.get("LOST", 0)),
                     "perf_lost_samples_records": num(ps.get("LOST_SAMPLES", 0)),
                     "perf_throttle_records": num(ps.get("THROTTLE", 0)),
                     "perf_rate_after": num(p.get("rate_after"))})
    d["loss"] = loss

    depth = []
    for r in runs(g, phase="depth"):
        n = num(r.get("cost_count"))
        depth.append({"depth": int(r["wl"][4:]), "samples": num(r.get("samples")),
                      "handler_us": n and num(r["cost_total_ns"]) / n / 1e3,
                      "handler_max_us": (num(r.get("cost_max_ns")) or 0) / 1e3})
    d["depth"] = sorted(depth, key=lambda x: x["depth"])

    agree = {}
    for wl in ("demo", "demo-fixed", "mt"):
        a, b = g["files"].get(wl + "-cycsample"), g["files"].get(wl + "-perf")
        if a and b:
            pa, pb = profile(a), profile(b)
            agree[wl] = agreement(dict(pa), dict(pb))
            agree[wl + " by dso"] = agreement(by_dso(pa), by_dso(pb))
    d["agreement"] = agree
    d["goals"] = goals(d)
    return d


def repeatability(prev, cur):
    """Per-sample figures of this run against the previous run's, per cell."""
    rows = []
    for k, kd in cur.items():
        pk = prev.get(k)
        if not pk:
            continue
        # derived again from the previous runs: its stored figures may be of
        # another FIGURE
        prev_cost = (derive_cost({"info": pk.get("info", {}), "runs": pk["runs"]})
                     if pk.get("runs") else pk["derived"].get("cost", []))
        old = {(c["wl"], c["freq"]): c for c in prev_cost}
        for c in kd["derived"]["cost"]:
            o = old.get((c["wl"], c["freq"]))
            if not o or o.get("size") != c.get("size"):
                continue
            for t, row in c["tools"].items():
                a = o["tools"].get(t, {}).get("per_sample_us")
                b = row.get("per_sample_us")
                if a and b and a[FIGURE]:
                    rows.append({"kernel": k, "wl": c["wl"], "freq": c["freq"], "tool": t,
                                 "previous_us": a[FIGURE], "now_us": b[FIGURE],
                                 "change": b[FIGURE] / a[FIGURE] - 1})
    return rows


def read_host(path):
    h = {"sym": [], "symagree": [], "scale": [], "cg": [], "maps": [], "info": {}}
    if not os.path.exists(path):
        return h
    for line in open(path):
        w = line.split(None, 1)
        if not w or not w[0].startswith("@"):
            continue
        tag, rest = w[0][1:], kv(w[1] if len(w) > 1 else "")
        if tag in h and isinstance(h[tag], list):
            h[tag].append(rest)
        elif tag == "host-info":
            h["info"] = rest
    for s in h["sym"]:
        # CPU time (user + system) when given: host load moves it less than wall time
        secs = num(s.get("cpu", s["secs"]))
        s["addrs_per_s"] = num(s["addrs"]) / secs if secs else None
    return h


# --- output ------------------------------------------------------------------

def fmt(v, f="%.2f"):
    return "-" if v is None else f % v


def sp(x, f="%.2f"):
    """least [median, max] of a spread."""
    if not x:
        return "-"
    if x["n"] == 1 or x["min"] == x["max"]:
        return f % x[FIGURE]
    return ("%s [%s, %s]" % (f, f, f)) % (x[FIGURE], x["med"], x["max"])


def med_of(x):
    return x and x["med"]


def verdict(met):
    """A goal's verdict: met, NOT met, or not measured (None: the phase did not run)."""
    return "not measured" if met is None else "met" if met else "NOT met"


def md_kernel(k, g, d):
    o = []
    h, i = g["host"], g["info"]
    clock = "QEMU -icount shift=0 (guest time: 1 ns per instruction)" \
        if h.get("icount") == "1" else "plain TCG (host time: a cross-check only)"
    o.append("## %s (%s)\n" % (k, i.get("kernel", "?")))
    o.append("Date %s, QEMU %s, %s, -smp 2, guest command line + %s, perf %s, %s "
             "repetitions, about %s samples "
             "per run, single-threaded workloads %s.  Host: load %s -> %s, guest run "
             "%s s wall, %s s of host CPU.\n" % (
                 h.get("date"), h.get("qemu"), clock,
                 (h.get("cmdline") or "nothing").replace(",", " "),
                 i.get("perf", "?").replace("perf_version_", ""), i.get("reps"),
                 i.get("nsamp"), "pinned to CPU 0 with their sampler"
                 if i.get("pin") == "1" else "not pinned",
                 h.get("host_load"), h.get("host_load_end"), h.get("wall_s", "?"),
                 h.get("host_cpu_s", "?")))
    o.append("\n### Per-sample cost: (run - least alone) / samples, us (least [median, "
             "max])\n")
    o.append("cg: with callchains (cycread -g, perf record -g); nocg: without.  Ratio: "
             "cycsample's least over perf's.\n")
    o.append("| workload | Hz | alone ms | cycsample cg | perf cg | ratio cg | "
             "cycsample nocg | perf nocg | ratio nocg |")
    o.append("|---|---|---|---|---|---|---|---|---|")
    for c in d["cost"]:
        t = c["tools"]
        ps = lambda n: sp(t.get(n, {}).get("per_sample_us"))
        o.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
            c["wl"], c["freq"], sp(c["alone_ms"], "%.3f"), ps("cycsample"), ps("perf"),
            fmt(c.get("ratio_cg")), ps("cycsample-nocg"), ps("perf-nocg"),
            fmt(c.get("ratio_nocg"))))
    o.append("\n### Where the time goes (medians; pinned workloads, and mt on one CPU)\n")
    o.append("path: the workload's own CPU time per sample (the interrupt, the handler, "
             "perf's core); reader: what the sampler's reader took from the workload "
             "during the run, per sample; handler: the module's own statistics "
             "(cost_total_ns / cost_count).  Reader CPU: the sampler's whole CPU time, "
             "start-up and post-processing included (ms per run).\n")
    o.append("| workload | Hz | tool | samples | path us | reader us | handler us | "
             "reader CPU ms | slowdown | lowest rate after | lost |")
    o.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for c in d["cost"]:
        for tn, t in c["tools"].items():
            o.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                c["wl"], c["freq"], tn, fmt(med_of(t["samples"]), "%.0f"),
                fmt(med_of(t["path_us"])), fmt(med_of(t["reader_run_us"])),
                fmt(med_of(t["handler_us"])), fmt(med_of(t["reader_cpu_ms"]), "%.0f"),
                fmt(med_of(t["slowdown"]), "%.3f"),
                fmt(t["rate_after"] and t["rate_after"]["min"], "%.0f"),
                fmt(t["lost"] and t["lost"]["max"], "%.0f")))
    o.append("\nLowest kernel.perf_event_max_sample_rate after any run: cycsample %s, "
             "perf %s.\n" % (fmt(d["lowest_rate_cycsample"], "%.0f"),
                              fmt(d["lowest_rate_perf"], "%.0f")))
    if d["loss"]:
        o.append("\n### Loss (mt: 2 threads, both CPUs busy, default rings / buffers)\n")
        o.append("| Hz per CPU | guest s | cycsample samples | lost | throttled | "
                 "perf samples | perf LOST records | THROTTLE records | "
                 "max_sample_rate after c/p |")
        o.append("|---|---|---|---|---|---|---|---|---|")
        for r in d["loss"]:
            o.append("| %d | %s | %s | %s | %s | %s | %s | %s | %s/%s |" % (
                r["freq"], fmt(r["secs"], "%.1f"), fmt(r["cycsample_samples"], "%.0f"),
                fmt(r["cycsample_lost"], "%.0f"), fmt(r["cycsample_throttled"], "%.0f"),
                fmt(r["perf_samples"], "%.0f"), fmt(r["perf_lost_records"], "%.0f"),
                fmt(r["perf_throttle_records"], "%.0f"),
                fmt(r["cycsample_rate_after"], "%.0f"), fmt(r["perf_rate_after"], "%.0f")))
    gl = d["goals"]
    o.append("\n### Goals (issue 16 part 2), as this run measures them\n")
    for name, what in (("cg", "with callchains"), ("nocg", "without callchains")):
        x = gl["ratio_" + name]
        o.append("- Per-sample cost %s at most %.1fx perf's: met in %d of %d cells; "
                 "ratio %s (median), %s-%s." % (what, x["limit"], x["met"], x["cells"],
                                                fmt(x["med"]), fmt(x["min"]), fmt(x["max"])))
    o.append("- perf_event_max_sample_rate never lower for cycsample than for perf: %s "
             "(lowest %s against %s)." % (verdict(gl["rate"]["met"]),
                                           fmt(gl["rate"]["cycsample"], "%.0f"),
                                           fmt(gl["rate"]["perf"], "%.0f")))
    o.append("- Zero ring loss at 10 kHz per CPU on mt, default ring: %s (%s lost of %s)." % (
        verdict(gl["loss_10k"]["met"]),
        fmt(gl["loss_10k"]["lost"], "%.0f"), fmt(gl["loss_10k"]["samples"], "%.0f")))
    for wl, a in d["agreement"].items():
        if not a:
            continue
        o.append("\n### Agreement: %s (shares of samples; top-10 overlap %d/10)\n" % (
            wl, a["top_overlap"]))
        o.append("Samples: cycsample %d, perf %d.  Tolerance per row: 3 sigma of the "
                 "difference of two sampled proportions, at least 1 point.\n" % (
                     a["samples_cycsample"], a["samples_perf"]))
        o.append("| symbol | cycsample % | perf % | diff | tolerance | within | top-10 c/p |")
        o.append("|---|---|---|---|---|---|---|")
        for r in a["rows"]:
            o.append("| %s | %.2f | %.2f | %+.2f | %.2f | %s | %s/%s |" % (
                r["key"], 100 * r["cycsample"], 100 * r["perf"], 100 * r["diff"],
                100 * r["tol"], "yes" if r["within"] else "NO",
                "y" if r["in_top_a"] else "-", "y" if r["in_top_b"] else "-"))
    if d["depth"]:
        o.append("\n### Handler cost against user callchain depth (cycsample, "
                 "--max-stack 127)\n")
        o.append("| recursion depth | samples | handler mean us | max us |")
        o.append("|---|---|---|---|")
        for r in d["depth"]:
            o.append("| %d | %s | %s | %s |" % (r["depth"], fmt(r["samples"], "%.0f"),
                                                fmt(r["handler_us"], "%.2f"),
                                                fmt(r["handler_max_us"], "%.1f")))
    return "\n".join(o) + "\n"


def rst_table(header, rows):
    """A simple-table of RST: header is a list of column titles."""
    cols = list(zip(*([header] + rows)))
    w = [max(len(str(x)) for x in c) for c in cols]
    line = " ".join("=" * n for n in w)
    fmt_row = lambda r: " ".join(str(x).ljust(n) for x, n in zip(r, w)).rstrip()
    return "\n".join([line, fmt_row(header), line] + [fmt_row(r) for r in rows] + [line])


def rst_kernel(k, g, d):
    """The tables Documentation/performance.rst quotes, in its own markup."""
    o = [k, "-" * len(k), ""]
    o.append("Per-sample cost, us of guest time: least [median, max] of %s repetitions." %
             g["info"].get("reps"))
    o.append("")
    rows = []
    for c in d["cost"]:
        t = c["tools"]
        ps = lambda n: sp(t.get(n, {}).get("per_sample_us"))
        rows.append([c["wl"], c["freq"], ps("cycsample"), ps("perf"), fmt(c.get("ratio_cg")),
                     ps("cycsample-nocg"), ps("perf-nocg"), fmt(c.get("ratio_nocg"))])
    o.append(rst_table(["workload", "Hz", "cycsample -g", "perf -g", "ratio",
                        "cycsample", "perf", "ratio"], rows))
    o.append("")
    rows = []
    for c in d["cost"]:
        if not c["pinned"]:
            continue
        t = c["tools"]
        m = lambda n, key, f="%.2f": fmt(med_of(t.get(n, {}).get(key)), f)
        rows.append([c["wl"], c["freq"], m("cycsample", "path_us"), m("perf", "path_us"),
                     fmt(c.get("path_ratio_cg")), m("cycsample", "reader_run_us"),
                     m("perf", "reader_run_us"), m("cycsample", "handler_us"),
                     m("cycsample-nocg", "path_us"), m("perf-nocg", "path_us"),
                     fmt(c.get("path_ratio_nocg")), m("cycsample-nocg", "handler_us")])
    if rows:
        o.append("Split (pinned workloads and mt on one CPU, medians, us per sample): "
                 "path = the workload's own CPU time, reader = the reader's share of the "
                 "run, handler = the module's statistics.")
        o.append("")
        o.append(rst_table(["workload", "Hz", "path c -g", "path p -g", "ratio", "reader c",
                            "reader p", "handler", "path c", "path p", "ratio", "handler"],
                           rows))
        o.append("")
    return "\n".join(o) + "\n"


def md_repeat(rows):
    o = ["## Repeatability: per-sample figures against the previous run\n"]
    if not rows:
        o.append("No previous run with the same kernels and sizes.\n")
        return "\n".join(o) + "\n"
    worst = max(rows, key=lambda r: abs(r["change"]))
    o.append("%d figures compared; largest change %+.2f %% (%s %s %d Hz %s); %d beyond "
             "2 %%.\n" % (len(rows), 100 * worst["change"], worst["kernel"], worst["wl"],
                           worst["freq"], worst["tool"],
                           sum(1 for r in rows if abs(r["change"]) >= 0.02)))
    o.append("| kernel | workload | Hz | tool | previous us | now us | change % |")
    o.append("|---|---|---|---|---|---|---|")
    for r in rows:
        o.append("| %s | %s | %d | %s | %.3f | %.3f | %+.2f |" % (
            r["kernel"], r["wl"], r["freq"], r["tool"], r["previous_us"], r["now_us"],
            100 * r["change"]))
    return "\n".join(o) + "\n"


def rst_repeat(rows):
    """Repeatability in performance.rst's markup: one line per kernel, workload and
    rate, each tool's change of its per-sample figure since the previous run."""
    if not rows:
        return ""
    cells = {}
    for r in rows:
        cells.setdefault((r["kernel"], r["wl"], r["freq"]), {})[r["tool"]] = r["change"]
    tools = [t for t in TOOLS if any(t in c for c in cells.values())]
    out = []
    for (k, wl, f), c in cells.items():
        out.append([k.replace("arm64-", ""), wl, f] +
                   ["%+.1f %%" % (100 * c[t]) if t in c else "-" for t in tools])
    beyond = sum(1 for r in rows if abs(r["change"]) >= 0.02)
    return "\n".join(["Repeatability: per-sample figures, change since the previous run",
                      "", "%d figures, %d of them by 2 %% or more." % (len(rows), beyond), "",
                      rst_table(["kernel", "workload", "Hz"] + [TOOL_TITLE[t] for t in tools],
                                out), ""])


def md_host(h):
    o = ["## Host: symbolization and report scaling\n"]
    i = h["info"]
    o.append("Date %s, %s CPUs, load %s, binutils addr2line %s, elfutils eu-addr2line %s.  "
             "Rates from CPU time (user + system).\n" % (
                 i.get("date"), i.get("cpus"), i.get("load", "?"), i.get("addr2line"),
                 i.get("eu-addr2line")))
    o.append("| file | addresses | tool | wall s | CPU s | addresses/s | peak RSS MiB | "
             "instructions | cycread speed-up (CPU) | (instructions) |")
    o.append("|---|---|---|---|---|---|---|---|---|---|")
    by = {}
    for s in h["sym"]:
        by.setdefault((s["file"], s.get("list", "random")), {})[s["tool"]] = s
    for (f, lst), t in by.items():
        c = t.get("cycread", {}).get("addrs_per_s")
        ci = num(t.get("cycread", {}).get("ir", "-"))
        for name in ("cycread", "addr2line", "eu-addr2line"):
            s = t.get(name)
            if not s:
                continue
            r, ir = s["addrs_per_s"], num(s.get("ir", "-"))
            o.append("| %s | %s %s | %s | %s | %s | %s | %.1f | %s | %s | %s |" % (
                os.path.basename(f), s["addrs"], lst, name, s["secs"], s.get("cpu", "-"),
                fmt(r, "%.0f"), num(s["maxrss_kb"]) / 1024, fmt(ir and ir / 1e6, "%.0fM"),
                "-" if name == "cycread" or not (c and r) else "%.1fx" % (c / r),
                "-" if name == "cycread" or not (ci and ir) else "%.2fx" % (ir / ci)))
    for a in h["symagree"]:
        o.append("\nLines and inline frames on %s (%s addresses): same as addr2line -f -i "
                 "%s, differing only in a clone or version suffix, an alias or a file's "
                 "directory %s, other %s." % (
                     os.path.basename(a["file"]), a["addrs"], a["same"],
                     a.get("near", a.get("alias", "-")), a.get("other", "-")))
    if h["scale"]:
        o.append("\n\n| samples x frames | output | capture MB | wall s | CPU s | "
                 "ns per frame (CPU) | peak RSS MiB | output MB | pruned frames | load |")
        o.append("|---|---|---|---|---|---|---|---|---|---|")
        for s in h["scale"]:
            n, fr = num(s["samples"]), num(s.get("frames", "1"))
            cpu = num(s.get("cpu", s["secs"]))
            o.append("| %d x %d | %s | %.1f | %s | %s | %s | %.1f | %s | %s | %s |" % (
                n, fr, s.get("output", "table"), num(s["bytes"]) / 1e6, s["secs"],
                s.get("cpu", "-"), fmt(cpu and cpu / (n * fr) * 1e9, "%.0f"),
                num(s["maxrss_kb"]) / 1024,
                fmt(num(s["out_bytes"]) / 1e6 if "out_bytes" in s else None, "%.2f"),
                s.get("pruned", "-"), s.get("load", "-")))
    if h["cg"]:
        o.append("\n\nInstructions executed (callgrind, whatever the host's load), in "
                 "millions, inclusive per phase: reading the capture (of it, sorting the "
                 "events), resolving the frames, the filters, the output.\n")
        o.append("| samples x frames | output | total | read | (sort) | resolve | select | "
                 "output |")
        o.append("|---|---|---|---|---|---|---|---|")
        for c in h["cg"]:
            if "total" not in c:
                o.append("| %s | %s | skipped: %s |" % (c.get("samples", "-"), c["output"],
                                                       c.get("skipped", "-")))
                continue
            o.append("| %s x %s | %s | %s |" % (
                c["samples"], c["frames"], c["output"], " | ".join(
                    "%.0f" % (num(c[k]) / 1e6)
                    for k in ("total", "read", "sort", "build", "select", "out"))))
    for m in h["maps"]:
        o.append("\nA capture with %s mappings and %s samples: report in %s s (CPU %s s), "
                 "peak RSS %.1f MiB." % (m["maps"], m["samples"], m["secs"], m.get("cpu", "-"),
                                         num(m["maxrss_kb"]) / 1024))
    return "\n".join(o) + "\n"


def main():
    out = sys.argv[1]
    res = {"kernels": {}, "host": read_host(os.path.join(out, "host.log"))}
    md = ["# cycsample vs perf (scripts/bench)\n",
          "Times are guest time under QEMU -icount (1 ns per instruction executed, "
          "whatever the host's load), except in sections marked plain TCG.  Every "
          "per-sample cost is the least of the repetitions, each against the least "
          "of the workload's runs without a sampler at the same size, with the "
          "median and the largest in brackets (the runs alone likewise: least "
          "[median, max]); other figures are medians.\n"]
    tsv = ["kernel\tphase\ttool\tworkload\tfreq\trep\tkey\tvalue"]
    for log in sorted(glob.glob(os.path.join(out, "*", "guest.log"))):
        k = os.path.basename(os.path.dirname(log))
        g = read_guest(log)
        if not g["runs"]:
            continue
        d = derive(g)
        res["kernels"][k] = {"info": g["info"], "host": g["host"], "runs": g["runs"],
                             "derived": d, "complete": g.get("done", False)}
        md.append(md_kernel(k, g, d))
        for r in g["runs"]:
            for key, v in r.items():
                if key not in ("phase", "tool", "wl", "freq", "rep"):
                    tsv.append("\t".join([k, r["phase"], r["tool"], r["wl"], r["freq"],
                                          r["rep"], key, v]))
    prev = os.path.join(out, "previous.json")
    if os.path.exists(prev):
        try:
            old = json.load(open(prev))["kernels"]
        except (ValueError, KeyError):
            old = {}
        res["repeatability"] = repeatability(old, res["kernels"])
        md.append(md_repeat(res["repeatability"]))
    if res["host"]["sym"] or res["host"]["scale"]:
        md.append(md_host(res["host"]))
        for s in res["host"]["sym"]:
            for key in ("secs", "maxrss_kb", "addrs_per_s"):
                tsv.append("\t".join(["host", "symbolize", s["tool"], s["file"], "", "",
                                      key, str(s[key])]))
        for c in res["host"]["cg"]:
            for key in ("total", "read", "sort", "build", "select", "out"):
                if key in c:
                    tsv.append("\t".join(["host", "callgrind", "cycread " + c["output"],
                                          c["samples"], "", "", key, c[key]]))
        for s in res["host"]["scale"]:
            for key in ("secs", "cpu", "maxrss_kb", "bytes", "out_bytes", "pruned"):
                if key in s:
                    tsv.append("\t".join(["host", "scale", "cycread " + s.get("output", ""),
                                          s["samples"], "", "", key, s[key]]))
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    with open(os.path.join(out, "results.tsv"), "w") as f:
        f.write("\n".join(tsv) + "\n")
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(out, "results.rst"), "w") as f:
        f.write("\n".join(rst_kernel(k, {"info": v["info"]}, v["derived"])
                          for k, v in res["kernels"].items()))
        f.write("\n" + rst_repeat(res.get("repeatability", [])))


if __name__ == "__main__":
    main()
