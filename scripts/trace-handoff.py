#!/usr/bin/env python3
"""Where every instruction of one hand-off goes, exactly.

Boots the test kernel once under -icount with one instruction per
translation block (-singlestep), runs scripts/trace-handoff.c, and turns
QEMU's execution log (-d exec,nochain: one line per instruction executed)
on only around the traced calls, through the monitor. Each path (a
hand-off from the main thread, one from a second thread, a futex pool
wake) runs between a getppid() and a getpgrp() marker; the instructions
between the first instruction of the two system calls are attributed to
the function that contains them (vmlinux and the program's symbols) and
written as tables to OUT.

Usage: trace-handoff.py BUILD PROGRAM INITRD OUT
"""
import bisect
import collections
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

BUILD, PROG, INITRD, OUT = sys.argv[1:5]
VMLINUX = os.path.join(BUILD, "kobj/vmlinux")
KERNEL = os.path.join(BUILD, "kobj/arch/x86/boot/bzImage")
PATHS = ["hand-off, head is the main thread (micro's handoff)",
         "hand-off, head is a second thread (micro's handoff_thread)",
         "futex pool wake: FUTEX_WAKE to the worker back in user space "
         "(micro's futex_handoff)"]


def symbols(path):
    out = subprocess.run(["nm", "-n", path], capture_output=True, text=True,
                         check=True).stdout
    addrs, names = [], []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tTwW":
            addrs.append(int(f[0], 16))
            names.append(f[2])
    return addrs, names


def boot(tmp):
    fifo = os.path.join(tmp, "ttyS1")
    for end in (".in", ".out"):
        os.mkfifo(fifo + end)
    mon, log, con = (os.path.join(tmp, n) for n in ("mon", "exec.log", "console"))
    cmdline = ("console=ttyS0 panic=-1 oops=panic loglevel=5 tsc=reliable "
               "no_timer_check tl.timeout=600 tl.cmd=/tests/trace-handoff "
               "sysctl.kernel.hung_task_timeout_secs=0 norandmaps")
    qemu = subprocess.Popen(
        ["qemu-system-x86_64", "-nographic", "-no-reboot", "-m", "1G",
         "-smp", "1", "-kernel", KERNEL, "-initrd", INITRD, "-append", cmdline,
         "-nic", "none", "-accel", "tcg", "-cpu", "max",
         "-icount", "shift=0,sleep=off", "-singlestep", "-display", "none",
         "-rtc", "base=2026-01-01T00:00:00,clock=vm", "-seed", "1",
         "-serial", "file:" + con, "-serial", "pipe:" + fifo,
         "-monitor", "unix:%s,server=on,wait=off" % mon, "-D", log],
        stdin=subprocess.DEVNULL)
    # QEMU opens the pipe's .in for reading: this open waits for it.
    tty = os.open(fifo + ".in", os.O_WRONLY)
    drain = os.open(fifo + ".out", os.O_RDONLY | os.O_NONBLOCK)
    while not os.path.exists(mon):
        time.sleep(0.1)
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(mon)

    def monitor(cmd):
        # The guest powers off after TRACE-DONE: QEMU may be gone.
        try:
            sock.sendall((cmd + "\n").encode())
        except OSError:
            return
        time.sleep(0.5)

    def wait_for(word):
        t0 = time.time()
        while word not in open(con, errors="replace").read():
            if qemu.poll() is not None or time.time() - t0 > 600:
                sys.exit("trace-handoff: no %s (console: %s)" % (word, con))
            time.sleep(0.2)

    wait_for("TRACE-READY")
    monitor("log exec,nochain")
    os.write(tty, b"g")
    wait_for("TRACE-DONE")
    monitor("log none")
    monitor("quit")
    qemu.wait()
    os.close(tty)
    os.close(drain)
    return log


def main():
    kaddr, kname = symbols(VMLINUX)
    uaddr, uname = symbols(PROG)
    start = kaddr[kname.index("__x64_sys_getppid")]
    end = kaddr[kname.index("__x64_sys_getpgrp")]

    def name(pc):
        if pc >= 1 << 63:
            i = bisect.bisect_right(kaddr, pc) - 1
            return "[k] " + kname[i]
        i = bisect.bisect_right(uaddr, pc) - 1
        return "[.] " + uname[i] if pc < 1 << 32 and i >= 0 else "[.] vdso"

    with tempfile.TemporaryDirectory() as tmp:
        log = boot(tmp)
        pcs = [int(m.group(1), 16) for m in
               re.finditer(r"\[[0-9a-f]+/([0-9a-f]+)/", open(log).read())]
    windows, i0 = [], None
    for i, pc in enumerate(pcs):
        if pc == start:
            i0 = i
        elif pc == end and i0 is not None:
            windows.append((i0, i))
            i0 = None
    # trace-handoff.c runs each path the same number of times, in order.
    REPS = len(windows) // len(PATHS)
    if not REPS or len(windows) != REPS * len(PATHS):
        sys.exit("trace-handoff: %d traced paths, not a multiple of %d" %
                 (len(windows), len(PATHS)))
    with open(OUT, "w") as out:
        out.write("Instructions from the first instruction of the getppid() "
                  "marker to the first of the getpgrp() marker (both "
                  "markers' entry and exit are included, the same in each "
                  "path), attributed to the function that holds each one.\n")
        for k, title in enumerate(PATHS):
            runs = windows[k * REPS:(k + 1) * REPS]
            counts = [collections.Counter(name(pcs[i]) for i in range(a, b))
                      for a, b in runs]
            total = collections.Counter()
            for c in counts:
                total.update(c)
            out.write("\n### %s\n\n%s instructions in the %d runs: %s.\n\n"
                      % (title, "Identical" if len({b - a for a, b in runs}) == 1
                         else "Not identical", REPS,
                         ", ".join(str(b - a) for a, b in runs)))
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
        "%d" % (b - a) for a, b in windows[::REPS]) + " instructions; " + OUT)


main()
