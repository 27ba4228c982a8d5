#!/usr/bin/env python3
"""Where every instruction of an uncached read goes, by method, exactly.

One boot as scripts/trace-handoff.py's (scripts/tracelib.py), with
null_blk as perf-scripts/io.sh's -icount boots have it: perf-scripts/io.c
reads 600 uncached 4 KiB blocks with 32 in flight, once per method, with
IO_TRACE=1, which puts a getppid() before each method call and a
getpgrp() after it. Every instruction the one vCPU runs in between is
counted: the methods' threads, interrupts, softirqs, kernel threads, and
the idle loop (nohlt, linked at 0x10000000 so that its addresses are not
io's). The tables in OUT are instructions per read.

Usage: trace-io.py BUILD IO NOHLT INITRD OUT METHOD...
"""
import os
import sys
import tempfile

import tracelib

BUILD, IO, NOHLT, INITRD, OUT = sys.argv[1:6]
METHODS = sys.argv[6:]
NULLBLK = ("null_blk.memory_backed=1 null_blk.irqmode=2 "
           "null_blk.completion_nsec=200000 null_blk.gb=1")


def main():
    name = tracelib.Namer(os.path.join(BUILD, "kobj/vmlinux"),
                          [("nohlt", NOHLT, 0x10000000, 0x20000000),
                           (".", IO, 0, 1 << 32)])
    with tempfile.TemporaryDirectory() as tmp:
        log, con = tracelib.boot(os.path.join(BUILD, "kobj/arch/x86/boot/bzImage"),
                                 INITRD, "/tests/trace-io.sh", tmp, NULLBLK)
        lines = open(con, errors="replace").read().splitlines()
        figures = [l for l in lines if l.startswith("IO uncached ")]
        # "# requests per run: cached <n> mixed <n> uncached <n>"
        reads = [int(l.split()[-1]) for l in lines
                 if l.startswith("# requests per run:")]
        counts = tracelib.windows(log, name.kaddr("__x64_sys_getppid"),
                                  name.kaddr("__x64_sys_getpgrp"), name)
    if len(counts) != len(METHODS) or len(figures) != len(METHODS) or not reads:
        sys.exit("trace-io: %d windows and %d results for %d methods" %
                 (len(counts), len(figures), len(METHODS)))
    # io runs its methods in the order of its table, whatever ours.
    methods = [fig.split()[2] for fig in figures]
    per = {m: {f: n / reads[0] for f, n in c.items()} for m, c in zip(methods, counts)}
    base = methods[0]
    with open(OUT, "w") as out:
        out.write("Instructions per read of io.c's uncached case, N = 32, "
                  "%d reads, from the first instruction of the getppid() "
                  "before the method call to the first of the getpgrp() "
                  "after it: the whole call with its setup and teardown, "
                  "every thread, interrupt and the idle loop.\n\n" % reads[0])
        out.write("| method | ns/read (io) | CPU ns/read (io) | traced "
                  "instructions/read |\n|---|---:|---:|---:|\n")
        for m, fig in zip(methods, figures):
            f = fig.split()
            out.write("| %s | %s | %s | %.0f |\n" % (m, f[5], f[6], sum(per[m].values())))
        out.write("\nFunctions that differ from %s by 20 or more per read "
                  "in some method, largest difference first:\n\n" % base)
        out.write("| function | %s |\n|---|%s\n" % (" | ".join(methods),
                                                   "---:|" * len(methods)))
        fns = {f for m in methods for f in per[m]}
        diff = {f: max(abs(per[m].get(f, 0) - per[base].get(f, 0)) for m in methods)
                for f in fns}
        shown = sorted((f for f in fns if diff[f] >= 20), key=lambda f: (-diff[f], f))
        for f in shown:
            out.write("| `%s` | %s |\n" % (f, " | ".join(
                "%.0f" % per[m].get(f, 0) for m in methods)))
        out.write("| (the rest) | %s |\n" % " | ".join(
            "%.0f" % sum(n for f, n in per[m].items() if f not in shown)
            for m in methods))
    print("trace-io: " + ", ".join("%s %.0f" % (m, sum(per[m].values()))
                                   for m in methods) + " instructions/read; " + OUT)


main()
