#!/usr/bin/env python3
"""The benchmarks' one record format and one report generator.

  report.py ingest BENCH --mode icount|wall [--boot N] [--case C] FILE
      a guest's output (micro, micro32, micro32-i386, io, scale, server) as
      records,
      one JSON object a line: {bench, method, case, params, figure, unit,
      boot, mode, date}
  report.py report [--results DIR] [--readme FILE --template FILE] [--no-plots]
      DIR/*.jsonl -> DIR/micro.md, io.md, scale.md, server.md, the determinism
      comparisons (micro- and io-determinism.txt), the plots, and the
      README's figures section between its markers, from the template

A template is markdown with {{ expression }} fields, Python expressions
evaluated with fig(bench, method, case, mode, boot, unit, **params),
date(bench), tgt(bench, target), det(bench), the tables micro(),
micro32(), io(case, ...), scale() and server(mode), and the number formats
n0, n1, x2;
a field whose figure has no record reads "-".
"""
import argparse, glob, json, os, re, shutil, subprocess, sys, time
from statistics import median

SPREAD_MAX = 1.0        # % between boots that still counts as the same
BEGIN, END = "<!-- figures:begin -->", "<!-- figures:end -->"
NO_DET = "no second -icount boot"

# ---- ingest -----------------------------------------------------------------
def rec(bench, method, figure, unit, case="", **params):
    return dict(bench=bench, method=method, case=case, params=params,
                figure=figure, unit=unit)

# micro.c's figures in the tables' order, each with its baseline: cheap
# operations against the direct call (the syslet against the system call it
# makes, the syscall path against the vDSO path it replaces), the threadlet
# hand-offs against the futex pool doing the same, the pool against creating
# a thread per job. call and pthread are the two anchors.
BASE = dict(call="call", null_vdso="call", null_syscall="null_vdso", getppid="call",
            syslet_null="getppid", pthread="pthread", pthread_mean="pthread",
            handoff="futex_handoff", handoff_mean="futex_handoff_mean",
            handoff_min="futex_handoff_min", roundtrip="futex_roundtrip",
            futex_handoff="pthread", futex_handoff_mean="pthread_mean",
            futex_handoff_min="pthread", futex_pingpong="pthread", futex_roundtrip="pthread",
            handoff_thread="futex_handoff", roundtrip_thread="futex_roundtrip", clock="call")
# The threadlet issue's targets: (name, a, b, test of a and b, what is wanted).
TARGETS = [("vdso_minus_call", "null_vdso", "call", lambda a, b: a - b <= 60, "<= 60 ns"),
           ("syscall_over_vdso", "null_syscall", "null_vdso", lambda a, b: a >= 10 * b, ">= 10x"),
           ("pthread_over_handoff", "pthread", "handoff", lambda a, b: a > 5 * b, "> 5x")]

def ingest_micro(lines, bench):
    """micro.c's first run of the boot (before perf stat) and reads.c's:
    "RESULT <name> <ns> [<iterations> <what>]"."""
    out, on = [], False
    for l in lines:
        on = on or "threadlet micro-benchmark:" in l
        if on and l.startswith("== "):
            break
        m = re.match(r"^RESULT (\S+) ([0-9.]+)(?: (\d+) (.*))?$", l) if on else None
        if m and m[3]:
            out.append(rec(bench, m[1], float(m[2]), "ns/op", iters=int(m[3]), what=m[4],
                           base=BASE.get(m[1], m[1])))
        elif m:
            out.append(rec(bench, m[1], float(m[2]), "ns/read"))
    out.sort(key=lambda r: list(BASE).index(r["method"]) if r["method"] in BASE else len(BASE))
    f = {r["method"]: r["figure"] for r in out}
    if "null_vdso" in f and "call" in f:
        out.append(rec(bench, "vdso_minus_call", round(f["null_vdso"] - f["call"], 1), "ns/op"))
    for name, a, b, test, want in TARGETS:
        if a in f and b in f and f[b] > 0:
            got = "%.1f ns" % (f[a] - f[b]) if "minus" in name else "%.2fx" % (f[a] / f[b])
            out.append(rec(bench, name, int(test(f[a], f[b])), "target",
                           text="%s, want %s" % (got, want)))
    return out

IO_HASH = re.compile(r"^# (\w+) (\w+) (\d+): ns/read min (\S+) median \S+ max (\S+), "
                     r"cpu-ns/read min (\S+) median \S+ max (\S+) over (\d+) runs; "
                     r"cache hits (\d+)\.\.(\d+) of (\d+)(?:; hand-offs (\d+) fallbacks (\d+))?")

def ingest_io(lines, case_as):
    """io.c's IO and '#' lines, PERF (perf stat CSV), XIO (ours paired with
    fio), FIO (fio's --output-format=json between FIO and FIO-END)."""
    out, i = [], 0

    def add(bench, x, figure, unit, **params):
        """A record of the case, method and N in x[1], x[2] and x[3]."""
        out.append(rec(bench, x[2], figure, unit, case_as or x[1], n=int(x[3]), **params))
    while i < len(lines):
        l, f, p = lines[i], lines[i].split(), lines[i].split(";")
        i += 1
        if re.match(r"^((io|fio)( \w+ \w+ \d+)?: |Segmentation fault|Bus error|Aborted|Killed)",
                    l) and "all reads checked" not in l:
            out.append(rec("io", "failure", 1, "failure", text=l))
        if l.startswith("IO ") and len(f) == 7:
            for unit, v in zip(("reads/s", "ns/read", "cpu-ns/read"), f[4:]):
                add("io", f, float(v), unit)
        m = IO_HASH.match(l)
        if m:
            for r in out[-3:]:
                if r["unit"] == "ns/read":
                    r["params"].update(min=float(m[4]), max=float(m[5]), runs=int(m[8]))
                if r["unit"] == "cpu-ns/read":
                    r["params"].update(min=float(m[6]), max=float(m[7]))
            if m[12]:
                add("io", m, int(m[12]), "hand-offs")
        if l.startswith("PERF;") and re.match(r"^[0-9.]+$", p[5]) and float(p[4]) > 0:
            add("io-perf", p, float(p[5]) / float(p[4]), p[7] + "/read", reads=int(p[4]))
        if l.startswith("XIO "):
            add("io-paired", f, float(f[5]), "reads/s", run=int(f[4]), cpu=float(f[7]))
        if l.startswith("FIOPERF;") and re.match(r"^[0-9.]+$", p[6]):
            add("fio-perf", p, float(p[6]), p[8], part=p[4], reads=int(p[5]))
        if l.startswith("FIO ") and len(f) == 7:
            body = []
            while i < len(lines) and not lines[i].startswith("FIO-END"):
                body.append(lines[i])
                i += 1
            try:
                body = body[next(k for k, b in enumerate(body) if b.startswith("{")):]
                job = json.loads("\n".join(body))["jobs"][0]
                rd, n = job["read"], int(f[3])
                cpu = (job["usr_cpu"] + job["sys_cpu"]) / 100 * rd["runtime"] * 1e6 * \
                    (n if f[2] == "psync" else 1) / max(rd["total_ios"], 1)
                add("fio", f, rd["iops"], "IOPS", run=int(f[4]), asked=int(f[5]),
                    done=rd["total_ios"], error=job["error"], ramped=int(f[6]), cpu=cpu)
            except (ValueError, KeyError, IndexError, StopIteration):
                add("fio", f, 0, "IOPS", run=int(f[4]), error="no json")
    return out

def ingest(a):
    lines = open(a.file, encoding="utf-8", errors="replace").read().splitlines()
    if a.bench.startswith("micro"):
        recs = ingest_micro(lines, a.bench)
    elif a.bench == "io":
        recs = ingest_io(lines, a.case)
    elif a.bench == "server":       # SERVER <model> <load> <requests> <ns> <cpu-ns>
        recs = [r for f in (l.split() for l in lines) if len(f) == 6 and f[0] == "SERVER"
                for r in (rec("server", f[1], int(f[4]) / int(f[3]), "ns/request", f[2]),
                          rec("server", f[1], int(f[5]) / int(f[3]), "cpu-ns/request", f[2]))]
    else:
        recs = [rec("scale", f[1], float(f[3]), "loops/s", vcpus=int(f[0]), heads=int(f[2]))
                for f in (l.split() for l in lines) if len(f) == 4]
    if not recs:
        sys.exit("report.py: no figures in %s" % a.file)
    # the run's date: --date, or the driver's "# YYYY-MM-DD HH:MM:SS UTC" line
    m = re.search(r"^# (\d{4}-\d\d-\d\d \d\d:\d\d):\d\d UTC", "\n".join(lines[:5]), re.M)
    date = a.date or (m[1] + " UTC" if m else time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    for r in recs:
        r.update(boot=a.boot, mode=a.mode, date=date)
        print(json.dumps(r, sort_keys=True))

# ---- reading records --------------------------------------------------------
class Records:
    def __init__(self, recs):
        self.recs = recs

    def sel(self, params={}, **kw):
        return [r for r in self.recs if all(r.get(k) == v for k, v in kw.items())
                and all(r["params"].get(k) == v for k, v in params.items())]

    def figs(self, params={}, **kw):
        return [r["figure"] for r in self.sel(params, **kw)]

    def fig(self, bench, method, case="", mode="icount", boot=1, unit=None, **params):
        rs = [r for r in self.sel(bench=bench, method=method, case=case, mode=mode,
                                  boot=boot, params=params) if unit in (None, r["unit"])]
        return rs[0]["figure"] if rs else None

    def date(self, bench, mode=None):
        ds = sorted(r["date"] for r in self.recs if r["bench"] == bench and
                    mode in (None, r["mode"]))
        return ds[-1] if ds else "no run"

def fmt(f):
    return lambda x: "-" if x is None else f.format(x)

n0, n1, x2 = fmt("{:,.0f}"), fmt("{:,.1f}"), fmt("{:.2f}")
pct = lambda s: "-" if s is None else "%.2f%%" % s

def spread(a, b):
    if a is None or b is None or (a != b and min(a, b) <= 0):
        return None
    return 0.0 if a == b else 100.0 * abs(a - b) / min(a, b)

def md(head, rows):
    """A markdown table; a heading that ends in ":" right-aligns its column."""
    line = lambda cells: "| " + " | ".join(str(c) for c in cells) + " |"
    return [line(h[:-1] if h.endswith(":") else h for h in head),
            line("---:" if h.endswith(":") else "---" for h in head)] + [line(r) for r in rows]

def ratio(v, base):
    return x2(v / base) if v and base else "-"

def determinism(R, bench):
    """Every -icount figure of boot n > 1 against boot 1, of the benchmarks
    whose name starts with @bench: lines and verdict (None: no such boot)."""
    key = lambda r: (r["bench"], r["method"], r["case"], r["unit"],
                     json.dumps(r["params"], sort_keys=True))
    recs = [r for r in R.recs if r["bench"].startswith(bench) and r["mode"] == "icount"
            and r["unit"] != "target"]
    first = {key(r): r["figure"] for r in recs if r["boot"] == 1}
    out, bad, same = [], [], 0
    for r in (r for r in recs if r["boot"] != 1):
        a, name = first.get(key(r)), " ".join(x for x in key(r)[:4] if x)
        s = spread(a, r["figure"])
        if s is None or s > SPREAD_MAX:
            bad.append(name)
        same += s == 0
        out.append("SPREAD boot1/boot%d %s %s %s %s" % (r["boot"], name, a, r["figure"],
                                                        "missing" if s is None else pct(s)))
    if not out:
        return out, None
    if bad:
        return out, "DETERMINISM NOT ok: %d of %d figures over %g%%: %s" % (
            len(bad), len(out), SPREAD_MAX, " ".join(bad))
    return out, "DETERMINISM ok: all %d figures within %g%% (%d identical)" % (
        len(out), SPREAD_MAX, same)

def runs(R, bench):
    """(mode, boot) pairs with records of @bench: icount boots, then wall."""
    return sorted({(r["mode"], r["boot"]) for r in R.sel(bench=bench)},
                  key=lambda mb: (mb[0] != "icount", mb[1]))

def run_name(mb):
    return mb[0] if mb[1] == 1 else "%s-%d" % mb

def write(res, name, lines):
    with open(os.path.join(res, name), "w", encoding="utf-8") as f:
        f.write("\n".join(lines).rstrip() + "\n")

def plot(res, png, data, size, title, script):
    """gnuplot: @script after the terminal, output and title; $d is @data."""
    gp = "$d << EOD\n%s\nEOD\n%s\n" % ("\n".join(data), "\n".join([
        "set terminal pngcairo size %s font ',10' noenhanced" % size,
        "set output '%s'" % os.path.join(res, png), "set title '%s'" % title] + script))
    if subprocess.run(["gnuplot"], input=gp.encode()).returncode:
        print("report.py: gnuplot failed for %s" % png, file=sys.stderr)

HISTOGRAM = ["set style fill solid 0.8 border -1", "set boxwidth 0.9",
             "set datafile missing '-'"]

# ---- micro ------------------------------------------------------------------
def micro_table(R):
    """Every operation in every boot: -icount boot 1, the other -icount boots
    (spread against boot 1), wall (ratio to the baseline)."""
    cols, rows = runs(R, "micro"), []
    op = lambda m, mode, boot=1: R.fig("micro", m, mode=mode, boot=boot, unit="ns/op")
    head = ["operation", "what it measures", "iters:", "baseline"]
    for mode, boot in cols:
        name = run_name((mode, boot))
        head += ["%s ns/op:" % name, "spread:" if boot > 1 else "%s x base:" % name]
    for r in R.sel(bench="micro", mode=cols[0][0], boot=cols[0][1], unit="ns/op"):
        m, p = r["method"], r["params"]
        if not p.get("iters"):
            continue
        row = [m, p["what"], p["iters"], p.get("base", "-")]
        for mode, boot in cols:
            v = op(m, mode, boot)
            row += [n1(v), pct(spread(op(m, mode), v)) if boot > 1
                    else ratio(v, op(p.get("base"), mode))]
        rows.append(row)
    return md(head, rows)

def micro_compare(R):
    """64-bit and 32-bit programs, and the 32-bit one on the i386 kernel."""
    ops = [("call", "direct call"), ("null_vdso", "null threadlet, vDSO"),
           ("null_syscall", "null threadlet, system calls"), ("getppid", "`getppid()`"),
           ("syslet_null", "null syslet (one `getppid` atom)"), ("handoff", "hand-off (median)"),
           ("roundtrip", "round trip"), ("futex_handoff", "futex pool wake (median)"),
           ("futex_roundtrip", "futex pool round trip")]
    vs = {"handoff": "futex_handoff", "roundtrip": "futex_roundtrip"}
    rows = []
    for m, title in ops:
        row = [title]
        for b in ("micro", "micro32", "micro32-i386"):
            v, base = R.fig(b, m, unit="ns/op"), R.fig(b, vs.get(m, ""), unit="ns/op")
            row.append(n1(v) + (" (%.2f×)" % (v / base) if v and base else ""))
        rows.append(row)
    return md(["operation", "64-bit, x86-64 kernel:", "32-bit, x86-64 kernel:",
               "32-bit, i386 kernel:"], rows)

def micro_short(R):
    """The README's table: -icount boot 1, one row per operation."""
    rows = []
    for r in R.sel(bench="micro", mode="icount", boot=1, unit="ns/op"):
        m, p, v = r["method"], r["params"], r["figure"]
        if not p.get("iters") or m.endswith(("_mean", "_min")):
            continue
        b = R.fig("micro", p.get("base"), unit="ns/op")
        vs = ("(baseline)" if p.get("base") == m else
              "%s × `%s`" % (x2(v / b), p["base"]) if b else "-")
        rows.append(["`%s`: %s" % (m, p["what"]), n1(v), vs])
    return md(["operation", "guest instructions:", "× baseline"], rows)

def micro_report(R, res, det, plots):
    out = ["# Threadlet micro-benchmark", "",
           "Run %s. Columns per boot: *icount* is `-icount shift=0,sleep=off`, one vCPU "
           "(1 ns = 1 guest instruction), *icount-n* another such boot (spread = |a - b| / "
           "min(a, b) against boot 1), *wall* plain TCG, 2 vCPUs (host time: noisy). Each "
           "figure is the mean cost of one operation over *iters* iterations after a "
           "warm-up (the three that sleep and wake: the median), from the first run of "
           "the boot (without perf); *x base* is it divided by its baseline's figure from "
           "the same boot." % R.date("micro"), ""]
    out += micro_table(R) + ["", "Targets:", ""]
    out += ["- %s %s: %s %s" % (run_name((r["mode"], r["boot"])), r["method"],
                                "met" if r["figure"] else "MISSED", r["params"]["text"])
            for r in R.sel(bench="micro", unit="target")]
    if R.sel(bench="micro32"):
        out += ["", "## The same as 32-bit programs (-icount, boot 1)", ""] + micro_compare(R)
    if det:
        out += ["", "Determinism of -icount (micro-determinism.txt): " + det]
    write(res, "micro.md", out + ["", "![cost per operation](micro-cost.png)"])
    if not plots:
        return
    cols = [mb for mb in runs(R, "micro") if mb[1] == 1]
    data = [" ".join([r["method"]] + [str(R.fig("micro", r["method"], mode=m, unit="ns/op")
                                          or "-") for m, _ in cols])
            for r in R.sel(bench="micro", mode=cols[0][0], boot=1, unit="ns/op")]
    plot(res, "micro-cost.png", data, "1100,650", "threadlet micro-benchmark: cost per "
         "operation (icount: 1 ns = 1 guest instruction)", [
             "set style data histograms", "set style histogram clustered gap 1"] + HISTOGRAM + [
             "set logscale y 10", "set ylabel 'ns per operation (log scale)'",
             "set xtics rotate by -35 scale 0", "set grid ytics mytics", "set key top left",
             "set bmargin 8",
             "plot " + ", ".join("$d using %d:xtic(1) title '%s'" % (i + 2, m)
                                 for i, (m, _) in enumerate(cols))])

# ---- io ---------------------------------------------------------------------
METHODS = ["sync", "pthread", "pthread_queue", "posix_aio", "posix_aio_tl", "kaio", "io_uring",
           "threadlet_vdso", "threadlet_syscall", "syslet", "syslet_chains", "threadlet_loop",
           "threadlet_submit"]
COLOR = dict(sync="#555555", pthread="#009e73", posix_aio="#56b4e9", posix_aio_tl="#cc79a7",
             kaio="#e69f00", io_uring="#d8c000", threadlet_vdso="#0072b2",
             threadlet_syscall="#d55e00", syslet="#000000", threadlet_loop="#9400d3",
             threadlet_submit="#8c564b", pthread_queue="#7f7f7f",
             syslet_chains="#bcbd22")
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#17becf"]
CASES = ["cached", "mixed", "uncached", "throttled"]
FIO_OURS = dict(posixaio="posix_aio", posixaio_tl="posix_aio_tl", libaio="kaio",
                io_uring="io_uring")

def io_methods(R):
    """METHODS, then any other method of the records, in their order: a
    method new to io.c shows up without an edit here."""
    seen = list(dict.fromkeys(r["method"] for r in R.sel(bench="io")))
    return METHODS + [m for m in seen if m not in METHODS]

def color(m):
    return COLOR.get(m) or PALETTE[sum(map(ord, m)) % len(PALETTE)]

def io_rows(R, mode, boot=1, bench="io"):
    """(case, method, N) in the tables' order."""
    have = {(r["case"], r["method"], r["params"].get("n"))
            for r in R.sel(bench=bench, mode=mode, boot=boot)}
    return [(c, m, n) for c in CASES for m in io_methods(R) for n in (1, 8, 32)
            if (c, m, n) in have]

def io_fig(R, c, m, n, unit, mode="wall", boot=1, bench="io"):
    return R.fig(bench, m, c, mode, boot, unit, n=n)

def io_wall(R):
    rows = []
    for c, m, n in io_rows(R, "wall"):
        v, base = io_fig(R, c, m, n, "reads/s"), io_fig(R, c, "sync", 1, "reads/s")
        rows.append([c, m, n, n0(v), n0(io_fig(R, c, m, n, "ns/read")),
                     n1(io_fig(R, c, m, n, "cpu-ns/read") / 1000), x2(v / base) if base else "-"])
    out = ["## Throughput (wall clock)", "",
           "CPU µs/read: CLOCK_PROCESS_CPUTIME_ID of the io process (all its threads) "
           "over the whole method call, per read. Ratio: reads/s against sync pread.", ""]
    out += md(["case", "method", "N:", "reads/s:", "ns/read:", "CPU µs/read:",
               "ratio to sync:"], rows)
    ev = ["task-clock", "raw_syscalls:sys_enter", "context-switches",
          "threadlet:threadlet_handoff", "threadlet:threadlet_fallback"]
    rows = []
    for c, m, n in io_rows(R, "wall", bench="io-perf"):
        v = [io_fig(R, c, m, n, e + "/read", bench="io-perf") for e in ev]
        rows.append([c, m, n, n1(v[0] and v[0] * 1000)] +
                    ["-" if x is None else "%.3f" % x for x in v[1:]])
    if not rows:
        return out
    return out + ["", "## Per read, from perf stat", "",
                  "Each (case, method, N) again in its own process under perf stat, counting "
                  "only while the method runs (`perf stat -D -1 --control`); counts per read.",
                  ""] + md(["case", "method", "N:", "task-clock µs/read:", "syscalls/read:",
                            "context switches/read:", "hand-offs/read:", "fallbacks/read:"], rows)

def io_fio(R):
    """fio's engines against our methods on the same reads: the ranges, whether
    they overlap, and where they do not, whether CPU time covers the gap."""
    rows, notes = [], []
    rng = lambda v: "%s (%s–%s)" % (n0(median(v)), n0(v[0]), n0(v[-1]))
    more = lambda d: "less" if d < 0 else "more"
    keys = {(r["case"], r["method"], r["params"]["n"]) for r in R.sel(bench="fio")}
    for c, e, n in sorted(keys, key=lambda k: (CASES.index(k[0]), k[1], k[2])):
        m = FIO_OURS.get(e, "sync" if n == 1 else "pthread")
        fio = R.sel(bench="fio", method=e, case=c, params={"n": n})
        ours = R.sel(bench="io-paired", method=m, case=c, params={"n": n})
        fv, ov = sorted(r["figure"] for r in fio), sorted(r["figure"] for r in ours)
        if not ov:
            rows.append([c, m + " (no figure)", e, n, "-", rng(fv), "-", "-", "-"])
            continue
        errs = [p for p in (r["params"] for r in fio) if p.get("error") or
                (p.get("done", 0) != p.get("asked") and not p.get("ramped"))]
        agree = "yes" if fv[0] <= ov[-1] and fv[-1] >= ov[0] else "no"
        if errs:
            agree += ", fio: %d runs with an error or a short count" % len(errs)
        fm, om = median(fv), median(ov)
        fc, oc = (median(r["params"]["cpu"] for r in rs) / 1000 for rs in (fio, ours))
        rows.append([c, m, e, n, rng(ov), rng(fv), x2(fm / om), agree,
                     "%s / %s" % (n1(oc), n1(fc))])
        if agree.startswith("no"):
            dt, dc = 1e6 / fm - 1e6 / om, fc - oc
            notes.append("- %s %s N=%d (fio %s): fio takes %.1f µs %s per read; its job threads "
                         "spend %.1f µs %s CPU per read than our process: that %s half of the gap."
                         % (c, m, n, e, abs(dt), more(dt), abs(dc), more(dc),
                            "covers at least" if dc * dt > 0 and abs(dc) >= abs(dt) / 2
                            else "does not cover"))
    if not rows:
        return []
    out = ["", "## Cross-check against fio", "",
           "fio's engines on the same reads in the same boot (psync with N jobs against our "
           "sync and pthread, posixaio, posixaio with libthreadlet-aio.so preloaded, libaio "
           "`--direct=1` and io_uring with iodepth N), three runs each, each right after a "
           "run of our matching method; fio read from `--output-format=json`. Medians and "
           "min–max; *agrees* when the two ranges overlap. CPU per read: ours the process "
           "CPU time, fio's its rusage of the job threads.", ""]
    out += md(["case", "ours", "fio engine", "N:", "ours reads/s:", "fio IOPS:", "fio/ours:",
               "agrees", "CPU µs/read ours / fio:"], rows)
    return out + ([""] + notes if notes else [])

def io_icount(R, det):
    boots = sorted({r["boot"] for r in R.sel(bench="io", mode="icount")})
    if not boots:
        return []
    fig = lambda c, m, n, unit, boot=1: io_fig(R, c, m, n, unit, "icount", boot)
    rows, repeats = [], []
    for c, m, n in io_rows(R, "icount"):
        vs = [fig(c, m, n, "cpu-ns/read", b) for b in boots]
        ss = [spread(vs[0], v) for v in vs[1:]]
        s = None if not ss or None in ss else max(ss)
        if s is not None:
            repeats.append(s <= SPREAD_MAX)
        rows.append([c, m, n] + [n0(v) for v in vs] +
                    [pct(s), "-" if s is None else "yes" if s <= SPREAD_MAX else "**no**",
                     ratio(vs[0], fig(c, "sync", 1, "cpu-ns/read"))])
    out = ["", "## Deterministic mode (-icount)", "",
           "One vCPU, 1 ns = 1 guest instruction, no input from the host that varies; "
           "the data on a memory-backed null_blk device that completes each request on a "
           "guest-time timer, and a SCHED_IDLE loop (nohlt.c) instead of HLT. Figure: the "
           "io process's CPU time per read (all threads), median of its runs in each boot; "
           "ratio against sync pread of the same case. A figure repeats when its boots "
           "agree within %g%%." % SPREAD_MAX, ""]
    out += md(["case", "method", "N:"] + ["boot %d:" % b for b in boots] +
              ["spread:", "repeats", "ratio to sync:"], rows)
    if repeats:
        out += ["", "%d of %d figures repeat within %g%%." % (sum(repeats), len(repeats),
                                                              SPREAD_MAX)]
    if det:
        out += ["", "Every -icount figure, boot 1 against the others: **%s**." % det]
    rows = [[c, m, n, n0(fig(c, m, n, "ns/read")),
             ratio(fig(c, m, n, "ns/read"), fig(c, "sync", 1, "ns/read"))]
            for c, m, n in io_rows(R, "icount") if c != "cached"]
    out += ["", "Guest ns per read, boot 1, where the disk's latency counts (guest time "
            "too, so deterministic):", ""]
    return out + md(["case", "method", "N:", "guest ns/read:", "ratio to sync:"], rows)

def io_table(R, case, n=32, unit="cpu-ns/read", scale=1):
    """One row for the README: @unit per method at N = @n (sync: N = 1)."""
    ms = [m for m in io_methods(R)
          if io_fig(R, case, m, 1 if m == "sync" else n, unit, "icount")]
    base = io_fig(R, case, "sync", 1, unit, "icount")
    cells = [n0(base / scale) if scale == 1 else n1(base / scale)]
    for m in ms[1:]:
        v = io_fig(R, case, m, n, unit, "icount")
        cells.append(x2(v / base) if scale == 1 else n1(v / scale))
    return md(["", "sync:"] + ["%s N=%d:" % (m, n) for m in ms[1:]],
              [[case + (", instructions per read" if scale == 1 else ", guest µs per read")]
               + cells])

def io_report(R, res, det, plots):
    if not R.sel(bench="io"):
        return
    out = ["# I/O comparison: 4 KiB random reads", "",
           "Run %s (`perf-scripts/io.sh`). Cases: cached (the file in the page cache), "
           "mixed (exactly 90%% of the reads hit the page cache), uncached (drop_caches "
           "first), throttled (uncached on a disk QEMU throttles). Every read is checked, "
           "and mincore() checks the page-cache hits before each run." % R.date("io"), ""]
    fails = R.sel(bench="io", unit="failure")
    if fails:
        out += ["## Failures in this run", "", "The guests reported these errors (a method "
                "whose process died has no figure from that point on in its boot):", ""]
        out += ["- %s boot %d: `%s`" % (r["mode"], r["boot"], r["params"]["text"]) for r in fails]
        out.append("")
    if R.sel(bench="io", mode="wall"):
        out += io_wall(R) + io_fio(R)
    write(res, "io.md", out + io_icount(R, det))
    if plots:
        io_plots(R, res)

def io_plots(R, res):
    # instructions per read of every method side by side, N = 32 (sync: N = 1),
    # one cluster per case: -icount, boot 1
    cases = [c for c in CASES if R.sel(bench="io", case=c, mode="icount")]
    ms = [m for m in io_methods(R) if R.sel(bench="io", method=m, mode="icount")]
    if cases:
        data = [" ".join([c] + [str(io_fig(R, c, m, 1 if m == "sync" else 32, "cpu-ns/read",
                                           "icount") or "-") for m in ms]) for c in cases]
        plot(res, "io-icount-cpu.png", data, "1000,600", "CPU per 4 KiB read at N = 32 (sync: "
             "N = 1), guest instructions (QEMU -icount)", [
                 "set ylabel 'instructions per read (io process, all threads)'",
                 "set style data histogram", "set style histogram cluster gap 1"] + HISTOGRAM + [
                 "set yrange [0:*]", "set grid ytics", "set key outside right",
                 "plot " + ", ".join("$d using %d:xtic(1) lc rgb '%s' title '%s'" %
                                     (i + 2, color(m), m) for i, m in enumerate(ms))])
    # reads per second against requests in flight, a line per method
    for mode, c in [("wall", c) for c in CASES] + [("icount", "mixed"), ("icount", "uncached")]:
        data, series = [], []
        for m in io_methods(R):
            ns = [n for n in (1, 8, 32) if io_fig(R, c, m, n, "ns/read", mode)]
            if not ns:
                continue
            v = [1e9 / io_fig(R, c, m, n, "ns/read", mode) for n in ns]
            if m == "sync":
                ns, v = [1, 32], v * 2
            data += ["%d %g" % nv for nv in zip(ns, v)] + ["", ""]
            series.append("$d index %d using 1:2 with %s lw 2 lc rgb '%s' title '%s'" % (
                len(series), "lines dashtype 2" if m == "sync" else "linespoints pt 7",
                color(m), m))
        if series:
            plot(res, "io-%s%s.png" % ("icount-" if mode == "icount" else "", c), data,
                 "900,600", "4 KiB random reads, %s (%s)" % (
                     c, "QEMU -icount: guest time" if mode == "icount" else "wall clock"), [
                     "set xlabel 'requests in flight'", "set ylabel 'reads per second'",
                     "set logscale x 2", "set xtics (1, 8, 32)", "set xrange [0.8:40]",
                     "set yrange [0:*]", "set grid", "set key outside right",
                     "plot " + ", ".join(series)])

# ---- scale, README, main ----------------------------------------------------
def scale_table(R):
    """Loops per second at 1 and 2 vCPUs, each the median of its boots."""
    rows = []
    for m in ("threadlet", "futex", "syscall"):
        one, two = (median(R.figs({"vcpus": c}, bench="scale", method=m) or [0]) for c in (1, 2))
        if one and two:
            rows.append([m, n0(one), n0(two), "%.2f×" % (two / one)])
    return md(["method", "1 vCPU:", "2 vCPUs:", "2 / 1:"], rows)

SERVER_LOADS = [("close-1", "one client, a connection per request"),
                ("close-8", "eight clients, a connection per request"),
                ("keep-8", "eight clients, keep-alive"),
                ("cold-close-8", "cold cache, eight clients, a connection per request"),
                ("cold-keep-8", "cold cache, eight clients, keep-alive")]

def server_table(R, mode="icount"):
    """Per request: guest time and the server's CPU, by load and model."""
    rows = []
    for load, what in SERVER_LOADS:
        base = R.fig("server", "threadlet", load, mode, unit="cpu-ns/request")
        for m in ("threadlet", "pthread", "inline"):
            t, c = (R.fig("server", m, load, mode, unit=u) for u in ("ns/request", "cpu-ns/request"))
            if t is not None:
                rows.append([what if m == "threadlet" else "", m, n1(t / 1000), n0(c),
                             x2(c / base) if base else "-"])
    return md(["load", "server", "µs per request", "server CPU ns per request",
               "CPU vs threadlet"], rows) if rows else ["no run"]

def render(template, R, dets):
    def tgt(bench, name):
        rs = R.sel(bench=bench, method=name, mode="icount", boot=1, unit="target")
        return "no figure" if not rs else "met" if rs[0]["figure"] else "missed"
    env = dict(fig=R.fig, date=R.date, n0=n0, n1=n1, x2=x2, tgt=tgt,
               det=lambda b: dets[b] or NO_DET,
               micro=lambda: "\n".join(micro_short(R)), micro32=lambda: "\n".join(micro_compare(R)),
               scale=lambda: "\n".join(scale_table(R)),
               server=lambda mode="icount": "\n".join(server_table(R, mode)),
               io=lambda *a, **k: "\n".join(io_table(R, *a, **k)))

    def field(m):
        try:
            return str(eval(m[1], env))
        except (TypeError, ZeroDivisionError):     # a figure without a record
            return "-"
    return re.sub(r"\{\{(.*?)\}\}", field, template, flags=re.S)

def update_readme(a, R, dets):
    """The README between its markers: the template, rendered."""
    text = open(a.readme, encoding="utf-8").read()
    gen = render(open(a.template, encoding="utf-8").read(), R, dets)
    if BEGIN not in text or END not in text:
        sys.exit("report.py: no %s ... %s in %s" % (BEGIN, END, a.readme))
    head, rest = text.split(BEGIN, 1)
    new = head + BEGIN + "\n" + gen.strip("\n") + "\n" + END + rest.split(END, 1)[1]
    png = os.path.join(a.results, "io-icount-uncached.png")
    if os.path.exists(png):         # the README's plot, from this run
        shutil.copy(png, os.path.join(os.path.dirname(a.template), "io-icount-uncached.png"))
    if new != text:
        with open(a.readme, "w", encoding="utf-8") as f:
            f.write(new)

def report(a):
    recs = []
    for p in sorted(glob.glob(os.path.join(a.results, "*.jsonl"))):
        recs += [json.loads(l) for l in open(p, encoding="utf-8") if l.strip()]
    if not recs:
        sys.exit("report.py: no records in %s" % a.results)
    R, dets = Records(recs), {}
    for b in ("micro", "io"):
        lines, dets[b] = determinism(R, b)
        write(a.results, b + "-determinism.txt",
              lines + [dets[b] or "DETERMINISM: " + NO_DET])
    if R.sel(bench="micro"):
        micro_report(R, a.results, dets["micro"], not a.no_plots)
    io_report(R, a.results, dets["io"], not a.no_plots)
    if R.sel(bench="scale"):
        write(a.results, "scale.md", ["Two heads blocking continuously, loops per second, wall "
                                      "time, median of the boots (%s):" % R.date("scale"), ""]
              + scale_table(R))
    if R.sel(bench="server"):
        write(a.results, "server.md", sum(
            (["The example server, %s (%s):" % (m, R.date("server", m)), ""] + server_table(R, m) + [""]
             for m in ("icount", "wall") if R.sel(bench="server", mode=m)), []))
    if a.readme:
        update_readme(a, R, dets)
    for b, d in dets.items():
        if any(r["bench"].startswith(b) for r in recs):
            print("%s: %s" % (b, d or NO_DET))

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    i, r = (sub.add_parser(c) for c in ("ingest", "report"))
    i.add_argument("bench", choices=["micro", "micro32", "micro32-i386", "io", "scale", "server"])
    i.add_argument("--mode", choices=["icount", "wall"], required=True)
    i.add_argument("--boot", type=int, default=1)
    i.add_argument("--case", default="", help="io: count every case as this one")
    i.add_argument("--date", help="of the run [the file's date line, or now]")
    r.add_argument("--results", default="build/results")
    r.add_argument("--readme")
    r.add_argument("--template", default="docs/figures.md.in")
    r.add_argument("--no-plots", action="store_true")
    i.add_argument("file")
    a = ap.parse_args()
    dict(ingest=ingest, report=report)[a.cmd](a)

if __name__ == "__main__":
    main()
