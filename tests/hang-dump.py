#!/usr/bin/env python3
"""Where a hung guest's CPUs are: asked of QEMU's monitor, not of the guest.

    hang-dump.py MONITOR_SOCKET [SYSTEM_MAP]

run-qemu.sh calls it when a boot times out, before it stops QEMU. A guest
that spins with interrupts off (a spinlock taken twice, say) prints no
soft-lockup or RCU report, and sysrq needs interrupts; the monitor still
reads every vCPU's registers and memory. For each vCPU this prints the
instruction pointer and, from the top of its stack, every word that is an
address in the kernel's text, symbolized with System.map (the test kernels
are not relocatable): the kernel's own "? func+off" guesses, by hand; three
times, a second apart.
"""
import bisect
import re
import socket
import sys
import time

PROMPT = b"(qemu) "
# Several looks tell a CPU that spins in one place from a busy one.
SAMPLES = 3
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\x1b[=>]|\r")


def load_map(path):
    addrs, names = [], []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[1] in "tTwW":
                    addrs.append(int(parts[0], 16))
                    names.append(parts[2])
    except OSError:
        return None
    order = sorted(range(len(addrs)), key=addrs.__getitem__)
    return [addrs[i] for i in order], [names[i] for i in order]


def symbolize(sym, addr):
    if not sym:
        return None
    addrs, names = sym
    i = bisect.bisect_right(addrs, addr) - 1
    if i < 0 or i + 1 >= len(addrs) or addr - addrs[i] > 0x10000:
        return None
    return "%s+%#x" % (names[i], addr - addrs[i])


class Monitor:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(10)
        self.s.connect(path)
        self.read_prompt()

    def read_prompt(self):
        buf = b""
        end = time.time() + 10
        while not buf.endswith(PROMPT) and time.time() < end:
            chunk = self.s.recv(65536)
            if not chunk:
                break
            buf += chunk
        return ANSI.sub("", buf.decode("latin-1"))

    def cmd(self, line):
        self.s.sendall(line.encode() + b"\n")
        out = self.read_prompt()
        # The monitor echoes the command line first.
        lines = out.splitlines()
        return "\n".join(l for l in lines[1:] if not l.startswith("(qemu)"))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sym = load_map(sys.argv[2]) if len(sys.argv) > 2 else None
    mon = Monitor(sys.argv[1])
    for sample in range(SAMPLES):
        if sample:
            time.sleep(1)
        mon.cmd("stop")
        dump(mon, sym, sample)
        mon.cmd("cont")


def dump(mon, sym, sample):
    cpus = re.findall(r"CPU #(\d+)", mon.cmd("info cpus"))
    print("TL-HANG-DUMP sample %d of %d, a second apart: %d vCPUs (QEMU monitor; "
          "System.map %s)" % (sample + 1, SAMPLES, len(cpus), "used" if sym else "missing"))
    for cpu in cpus:
        mon.cmd("cpu " + cpu)
        regs = mon.cmd("info registers")
        wide = "RIP=" in regs
        ip = re.search(r"[RE]IP=([0-9a-f]+)", regs)
        sp = re.search(r"[RE]SP=([0-9a-f]+)", regs)
        cs = re.search(r"CS =([0-9a-f]+)", regs)
        efl = re.search(r"[RE]FL=([0-9a-f]+)", regs)
        if not (ip and sp):
            print("cpu %s: no registers:\n%s" % (cpu, regs))
            continue
        ipv, spv = int(ip.group(1), 16), int(sp.group(1), 16)
        user = cs and int(cs.group(1), 16) & 3
        irqs = efl and (int(efl.group(1), 16) >> 9) & 1
        print("cpu %s: %s ip %#x %s sp %#x, interrupts %s"
              % (cpu, "user" if user else "kernel", ipv,
                 symbolize(sym, ipv) or "", spv, "on" if irqs else "off"))
        if user:
            continue
        words = mon.cmd("x/160%sx %#x" % ("g" if wide else "w", spv))
        seen = []
        for line in words.splitlines():
            for w in re.findall(r"0x([0-9a-f]+)", line.split(":", 1)[-1]):
                name = symbolize(sym, int(w, 16))
                if name:
                    seen.append(name)
        print("  stack text words: " + (" ".join(seen) if seen else "none"))


if __name__ == "__main__":
    main()
