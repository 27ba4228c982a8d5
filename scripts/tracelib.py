"""Shared by scripts/trace-handoff.py and scripts/trace-io.py: one boot of
the test kernel under -icount with one instruction per translation block
(-singlestep), QEMU's execution log (-d exec,nochain: one line per
instruction) on only while the guest runs what it traces, and the
instructions between two marker system calls counted by function.

The guest prints TRACE-READY, waits for a byte on its second serial port
(sent once the log is on), and prints TRACE-DONE when it is done.
"""
import bisect
import collections
import os
import re
import socket
import subprocess
import sys
import time


def symbols(path):
    """The text symbols of an ELF file, as sorted addresses and names."""
    out = subprocess.run(["nm", "-n", path], capture_output=True, text=True,
                         check=True).stdout
    addrs, names = [], []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tTwW":
            addrs.append(int(f[0], 16))
            names.append(f[2])
    return addrs, names


class Namer:
    """Function names for instruction addresses: the kernel's (vmlinux)
    and those of user programs given as (label, ELF, low, high), each
    linked within [low, high); any other user address is the vDSO's."""

    def __init__(self, vmlinux, programs):
        self.kernel = symbols(vmlinux)
        self.programs = [(label, symbols(path), lo, hi)
                         for label, path, lo, hi in programs]
        self.cache = {}

    def kaddr(self, name):
        return self.kernel[0][self.kernel[1].index(name)]

    def __call__(self, pc):
        n = self.cache.get(pc)
        if n is None:
            n = self.cache[pc] = self._name(pc)
        return n

    def _name(self, pc):
        if pc >= 1 << 63:
            a, names = self.kernel
            return "[k] " + names[bisect.bisect_right(a, pc) - 1]
        for label, (a, names), lo, hi in self.programs:
            i = bisect.bisect_right(a, pc) - 1
            if lo <= pc < hi and i >= 0:
                return "[%s] %s" % (label, names[i])
        return "[.] vdso"


def boot(kernel, initrd, cmd, tmp, append="", timeout=1800):
    """Boots, runs @cmd as the guest's command, logs every instruction
    between TRACE-READY and TRACE-DONE; returns (log, console) paths."""
    fifo = os.path.join(tmp, "ttyS1")
    for end in (".in", ".out"):
        os.mkfifo(fifo + end)
    mon, log, con = (os.path.join(tmp, n) for n in ("mon", "exec.log", "console"))
    cmdline = ("console=ttyS0 panic=-1 oops=panic loglevel=5 tsc=reliable "
               "no_timer_check tl.timeout=%d tl.cmd=%s "
               "sysctl.kernel.hung_task_timeout_secs=0 norandmaps %s"
               % (timeout, cmd, append)).strip()
    qemu = subprocess.Popen(
        ["qemu-system-x86_64", "-nographic", "-no-reboot", "-m", "1G",
         "-smp", "1", "-kernel", kernel, "-initrd", initrd, "-append", cmdline,
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

    def monitor(command):
        # The guest powers off after TRACE-DONE: QEMU may be gone.
        try:
            sock.sendall((command + "\n").encode())
        except OSError:
            return
        time.sleep(0.5)

    def wait_for(word):
        t0 = time.time()
        while word not in open(con, errors="replace").read():
            if qemu.poll() is not None or time.time() - t0 > timeout:
                sys.exit("trace: no %s (console: %s)" % (word, con))
            time.sleep(0.2)

    wait_for("TRACE-READY")
    monitor("log exec,nochain")
    # A newline too: a guest shell's read of the terminal needs one.
    os.write(tty, b"g\n")
    wait_for("TRACE-DONE")
    monitor("log none")
    monitor("quit")
    qemu.wait()
    os.close(tty)
    os.close(drain)
    return log, con


def windows(log, start, end, name):
    """Counts, one per window, of the instructions from one at @start (its
    first included) to the next at @end (not included), by name()."""
    pc_re = re.compile(r"\[[0-9a-f]+/([0-9a-f]+)/")
    out, cur = [], None
    with open(log, errors="replace") as f:
        for line in f:
            m = pc_re.search(line)
            if not m:
                continue
            pc = int(m.group(1), 16)
            if pc == start:
                cur = collections.Counter({name(pc): 1})
            elif pc == end and cur is not None:
                out.append(cur)
                cur = None
            elif cur is not None:
                cur[name(pc)] += 1
    return out
