#!/usr/bin/env python3
"""Where every instruction of one hand-off, and of one syslet atom, goes.

Boots the test kernel once under -icount with one instruction per
translation block (-singlestep), runs scripts/trace-handoff.c, and turns
QEMU's execution log (-d exec,nochain: one line per instruction executed)
on only around the traced calls, through the monitor. Each path (PATHS:
a hand-off from the main thread, one from a second thread, a futex pool
wake; a cached pread() and the same read as syslet atoms) runs between
a getppid() and a getpgrp() marker; the instructions
between the first instruction of the two system calls are attributed to
the function that contains them (vmlinux and the program's symbols) and
written as tables to OUT. The boot and the counting are scripts/tracelib.py.

Usage: trace-handoff.py BUILD PROGRAM INITRD OUT
"""
import collections
import os
import sys
import tempfile

import tracelib

BUILD, PROG, INITRD, OUT = sys.argv[1:5]
PATHS = ["hand-off, head is the main thread (micro's handoff)",
         "hand-off, head is a second thread (micro's handoff_thread)",
         "futex pool wake: FUTEX_WAKE to the worker back in user space "
         "(micro's futex_handoff)",
         "pread() of a cached 4 KiB page",
         "async_exec() of that pread as a one-atom chain, in place "
         "(io.c's syslet, cached)",
         "async_exec() of a chain of two such atoms, the second taken from "
         "a queue (io.c's syslet_chains, cached)"]


def main():
    name = tracelib.Namer(os.path.join(BUILD, "kobj/vmlinux"),
                          [(".", PROG, 0, 1 << 32)])
    with tempfile.TemporaryDirectory() as tmp:
        log, _ = tracelib.boot(os.path.join(BUILD, "kobj/arch/x86/boot/bzImage"),
                               INITRD, "/tests/trace-handoff", tmp, timeout=600)
        counts = tracelib.windows(log, name.kaddr("__x64_sys_getppid"),
                                  name.kaddr("__x64_sys_getpgrp"), name)
    # trace-handoff.c runs each path the same number of times, in order.
    REPS = len(counts) // len(PATHS)
    if not REPS or len(counts) != REPS * len(PATHS):
        sys.exit("trace-handoff: %d traced paths, not a multiple of %d" %
                 (len(counts), len(PATHS)))
    sizes = [sum(c.values()) for c in counts]
    with open(OUT, "w") as out:
        out.write("Instructions from the first instruction of the getppid() "
                  "marker to the first of the getpgrp() marker (both "
                  "markers' entry and exit are included, the same in each "
                  "path), attributed to the function that holds each one.\n")
        for k, title in enumerate(PATHS):
            runs = sizes[k * REPS:(k + 1) * REPS]
            total = collections.Counter()
            for c in counts[k * REPS:(k + 1) * REPS]:
                total.update(c)
            out.write("\n### %s\n\n%s instructions in the %d runs: %s.\n\n"
                      % (title, "Identical" if len(set(runs)) == 1
                         else "Not identical", REPS,
                         ", ".join(str(n) for n in runs)))
            out.write("| function | instructions |\n|---|---:|\n")
            rest = 0
            for fn, n in sorted(total.items(), key=lambda x: (-x[1], x[0])):
                if n / REPS >= 10:
                    out.write("| `%s` | %.0f |\n" % (fn, n / REPS))
                else:
                    rest += n
            out.write("| (functions under 10 each) | %.0f |\n" % (rest / REPS))
            out.write("| **total** | **%.0f** |\n" % (sum(total.values()) / REPS))
    print("trace-handoff: " + ", ".join(
        "%d" % n for n in sizes[::REPS]) + " instructions; " + OUT)


main()
