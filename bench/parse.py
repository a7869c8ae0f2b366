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
            g["host"]["host_load_end"] = kv(line[10:]).get("host_load")
        elif line.startswith("@done"):
            g["done"] = True
    return g


def lo(xs):
    """The shortest run time: contention on the host only ever adds time."""
    xs = [x for x in xs if x is not None]
    return min(xs) if xs else None


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

def derive(g):
    d = {}
    alone = lo(field(runs(g, phase="slowdown", tool="none"), "elapsed_ns"))
    slow = []
    for f in sorted({r["freq"] for r in runs(g, phase="slowdown") if r["tool"] != "none"},
                    key=int):
        row = {"freq": int(f), "alone_s": alone and alone / 1e9}
        for t in ("cycsample", "perf"):
            rs = runs(g, phase="slowdown", tool=t, freq=f)
            e = lo(field(rs, "elapsed_ns"))
            row[t + "_s"] = e and e / 1e9
            row[t + "_slowdown"] = e / alone if e and alone else None
            row[t + "_samples"] = med(field(rs, "samples"))
            row[t + "_rate_after"] = med(field(rs, "rate_after"))
        c, p = row["cycsample_slowdown"], row["perf_slowdown"]
        row["overhead_ratio"] = (c - 1) / (p - 1) if c and p and p > 1 else None
        slow.append(row)
    d["slowdown"] = slow

    alone = lo(field(runs(g, phase="cost", tool="none"), "elapsed_ns"))
    cost = []
    for t in ("cycsample", "perf", "cycsample-nocg", "perf-nocg"):
        rs = runs(g, phase="cost", tool=t)
        if not rs:
            continue
        per = []
        for r in rs:
            e, n = num(r.get("elapsed_ns")), num(r.get("samples"))
            per.append((e - alone) / n if e and n and alone else None)
        e, n = lo(field(rs, "elapsed_ns")), med(field(rs, "samples"))
        ps = (e - alone) / n if e and n and alone else None
        row = {"tool": t, "freq": rs[0]["freq"], "alone_s": alone and alone / 1e9,
               "run_s": (e or 0) / 1e9, "samples": n,
               "per_sample_us": ps and ps / 1e3,
               "per_sample_us_runs": [p and p / 1e3 for p in per]}
        if t.startswith("cycsample"):
            h = [num(r["cost_total_ns"]) / num(r["cost_count"]) for r in rs
                 if num(r.get("cost_count"))]
            row["handler_us"] = med(h) and med(h) / 1e3
            row["handler_max_us"] = (med(field(rs, "cost_max_ns")) or 0) / 1e3
            row["throttled"] = med(field(rs, "throttled"))
        cost.append(row)
    d["cost"] = cost

    loss = []
    for f in sorted({r["freq"] for r in runs(g, phase="loss")}, key=int):
        c = (runs(g, phase="loss", tool="cycsample", freq=f) or [{}])[0]
        p = (runs(g, phase="loss", tool="perf", freq=f) or [{}])[0]
        ps = (runs(g, phase="loss", tool="perf-stats", freq=f) or [{}])[0]
        secs = num(c.get("duration_ns"))
        loss.append({"freq": int(f),
                     "cycsample_samples": num(c.get("samples")),
                     "cycsample_lost": num(c.get("lost")),
                     "cycsample_throttled": num(c.get("throttled")),
                     "cycsample_rate_after": num(c.get("rate_after")),
                     "perf_samples": num(p.get("samples")),
                     "perf_lost_records": num(ps.get("LOST", 0)),
                     "perf_lost_samples_records": num(ps.get("LOST_SAMPLES", 0)),
                     "perf_rate_after": num(p.get("rate_after"))})
    d["loss"] = loss
    for t, key in (("cycsample", "cycsample_lost"), ("perf", "perf_lost_records")):
        ok = [r["freq"] for r in loss if r[key] == 0]
        d["loss_max_zero_" + t] = max(ok) if ok else None

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
    return d


def read_host(path):
    h = {"sym": [], "symagree": [], "scale": [], "maps": [], "info": {}}
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


def md_kernel(k, g, d):
    o = []
    h, i = g["host"], g["info"]
    o.append("## %s (%s)\n" % (k, i.get("kernel", "?")))
    o.append("Date %s, QEMU %s (TCG, -smp 2), host load %s -> %s, perf %s.\n" % (
        h.get("date"), h.get("qemu"), h.get("host_load"), h.get("host_load_end"),
        i.get("perf", "?").replace("perf_version_", "")))
    o.append("\n### Slowdown (demo; run time under the tool / run time alone)\n")
    o.append("| Hz | alone s | cycsample s | perf s | cycsample slowdown | perf slowdown | "
             "overhead ratio | samples c/p | max_sample_rate after c/p |")
    o.append("|---|---|---|---|---|---|---|---|---|")
    for r in d["slowdown"]:
        o.append("| %d | %s | %s | %s | %s | %s | %s | %s/%s | %s/%s |" % (
            r["freq"], fmt(r["alone_s"]), fmt(r["cycsample_s"]), fmt(r["perf_s"]),
            fmt(r["cycsample_slowdown"], "%.3f"), fmt(r["perf_slowdown"], "%.3f"),
            fmt(r["overhead_ratio"]), fmt(r["cycsample_samples"], "%.0f"),
            fmt(r["perf_samples"], "%.0f"), fmt(r["cycsample_rate_after"], "%.0f"),
            fmt(r["perf_rate_after"], "%.0f")))
    o.append("\n### Per-sample cost (deep: 16-frame user chain, 20 % of the work in "
             "the kernel)\n")
    o.append("| tool | Hz | alone s | run s | samples | (run - alone) / samples us | "
             "per run (vs shortest alone) | module handler mean us | max us |")
    o.append("|---|---|---|---|---|---|---|---|---|")
    for r in d["cost"]:
        o.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["tool"], r["freq"], fmt(r["alone_s"]), fmt(r["run_s"]),
            fmt(r["samples"], "%.0f"), fmt(r["per_sample_us"], "%.1f"),
            " ".join(fmt(x, "%.0f") for x in r["per_sample_us_runs"]),
            fmt(r.get("handler_us"), "%.1f"), fmt(r.get("handler_max_us"), "%.0f")))
    o.append("\n### Loss (mt: 2 threads, both CPUs busy, default rings / buffers)\n")
    o.append("| Hz per CPU | cycsample samples | cycsample lost | perf samples | "
             "perf LOST records | max_sample_rate after c/p |")
    o.append("|---|---|---|---|---|---|")
    for r in d["loss"]:
        o.append("| %d | %s | %s | %s | %s | %s/%s |" % (
            r["freq"], fmt(r["cycsample_samples"], "%.0f"), fmt(r["cycsample_lost"], "%.0f"),
            fmt(r["perf_samples"], "%.0f"), fmt(r["perf_lost_records"], "%.0f"),
            fmt(r["cycsample_rate_after"], "%.0f"), fmt(r["perf_rate_after"], "%.0f")))
    o.append("\nHighest rate tried with zero loss: cycsample %s Hz, perf %s Hz.\n" % (
        d.get("loss_max_zero_cycsample"), d.get("loss_max_zero_perf")))
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
        o.append("\n### Handler cost against user callchain depth (cycsample, 1000 Hz, "
                 "--max-stack 127)\n")
        o.append("| recursion depth | samples | handler mean us | max us |")
        o.append("|---|---|---|---|")
        for r in d["depth"]:
            o.append("| %d | %s | %s | %s |" % (r["depth"], fmt(r["samples"], "%.0f"),
                                                fmt(r["handler_us"], "%.1f"),
                                                fmt(r["handler_max_us"], "%.0f")))
    return "\n".join(o) + "\n"


def md_host(h):
    o = ["## Host: symbolization and report scaling\n"]
    i = h["info"]
    o.append("Date %s, %s CPUs, load %s, binutils addr2line %s, elfutils eu-addr2line %s.  "
             "Rates from CPU time (user + system).\n" % (
                 i.get("date"), i.get("cpus"), i.get("load", "?"), i.get("addr2line"),
                 i.get("eu-addr2line")))
    o.append("| file | tool | addresses | wall s | CPU s | addresses/s | peak RSS MiB | "
             "cycread speed-up |")
    o.append("|---|---|---|---|---|---|---|---|")
    by = {}
    for s in h["sym"]:
        by.setdefault(s["file"], {})[s["tool"]] = s
    for f, t in by.items():
        c = t.get("cycread", {}).get("addrs_per_s")
        for name in ("cycread", "addr2line", "eu-addr2line"):
            s = t.get(name)
            if not s:
                continue
            r = s["addrs_per_s"]
            o.append("| %s | %s | %s | %s | %s | %s | %.1f | %s |" % (
                os.path.basename(f), name, s["addrs"], s["secs"], s.get("cpu", "-"),
                fmt(r, "%.0f"), num(s["maxrss_kb"]) / 1024,
                "-" if name == "cycread" or not (c and r) else "%.1fx" % (c / r)))
    for a in h["symagree"]:
        o.append("\nLines and inline frames on %s (%s addresses): same as addr2line -f -i "
                 "%s, differing only in a clone or version suffix, an alias or a file's "
                 "directory %s, other %s." % (
                     os.path.basename(a["file"]), a["addrs"], a["same"],
                     a.get("near", a.get("alias", "-")), a.get("other", "-")))
    if h["scale"]:
        o.append("\n\n| samples x frames | output | capture MB | wall s | CPU s | "
                 "ns per frame (CPU) | peak RSS MiB | output MB | pruned frames |")
        o.append("|---|---|---|---|---|---|---|---|---|")
        for s in h["scale"]:
            n, fr = num(s["samples"]), num(s.get("frames", "1"))
            cpu = num(s.get("cpu", s["secs"]))
            o.append("| %d x %d | %s | %.1f | %s | %s | %s | %.1f | %s | %s |" % (
                n, fr, s.get("output", "table"), num(s["bytes"]) / 1e6, s["secs"],
                s.get("cpu", "-"), fmt(cpu and cpu / (n * fr) * 1e9, "%.0f"),
                num(s["maxrss_kb"]) / 1024,
                fmt(num(s["out_bytes"]) / 1e6 if "out_bytes" in s else None, "%.2f"),
                s.get("pruned", "-")))
    for m in h["maps"]:
        o.append("\nA capture with %s mappings and %s samples: report in %s s (CPU %s s), "
                 "peak RSS %.1f MiB." % (m["maps"], m["samples"], m["secs"], m.get("cpu", "-"),
                                         num(m["maxrss_kb"]) / 1024))
    return "\n".join(o) + "\n"


def main():
    out = sys.argv[1]
    res = {"kernels": {}, "host": read_host(os.path.join(out, "host.log"))}
    md = ["# cycsample vs perf (scripts/bench)\n",
          "Figures under QEMU TCG: only the ratios within one guest boot mean "
          "something.  Run times are the shortest of the repetitions (contention on the shared host only adds time); sample counts and handler costs are medians.\n"]
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
    if res["host"]["sym"] or res["host"]["scale"]:
        md.append(md_host(res["host"]))
        for s in res["host"]["sym"]:
            for key in ("secs", "maxrss_kb", "addrs_per_s"):
                tsv.append("\t".join(["host", "symbolize", s["tool"], s["file"], "", "",
                                      key, str(s[key])]))
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


if __name__ == "__main__":
    main()
