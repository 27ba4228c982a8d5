#!/usr/bin/env python3
"""Turns the TLPROF/FUTEXPROF (and TLSCHED/FUTEXSCHED) lines of a profile-segments boot into tables.

Each line holds the mean instructions (guest ns under -icount) of each step
over 1,000 iterations, stamp cost included; the first two stamps of a
hand-off are taken back to back, so their difference is one stamp's cost,
which is subtracted from every step.
"""
import re
import sys

HANDOFF = [
    "read() from its entry to the sleep hook: pipe_read() finds the pipe "
    "empty, prepare_to_wait_event(), schedule() up to the hook",
    "hook: the area's flags",
    None,  # the stamp's own cost
    "hook: the head's checks, the resume frame, the async head (cached)",
    "hook: claim a parked spare (head->lock)",
    "hook: arch_threadlet_check() (segments, TLS entries, PKRU...)",
    "hook: threadlet_check_identity() (docs/task-state.md's compared rows)",
    "hook: threadlet_swap_identity() (siglock; TIDs, signals, pointers, LSM)",
    "hook: arch_threadlet_swap_tls()",
    "hook: wake_up_process_sync(spare); none for a spare that slept on "
    "this CPU: __schedule() enqueues it",
    "rest of __schedule(): the spare in the head's place (or the head "
    "dequeued, the spare enqueued and picked), the context switch, the "
    "spare back from schedule()",
    "spare: its signal state (recalc_sigpending() under siglock if TIF_SIGPENDING is set)",
    "spare: arch_threadlet_resume() (TLS bases, SYSRET frame)",
]
FUTEX = [
    "FUTEX_WAKE: the key, the hash bucket, the queue walk, wake_q built",
    "wake_up_q(): try_to_wake_up() of the worker",
    "from the wake-up to the worker back from schedule(): on one CPU the "
    "waker's return to user space, its FUTEX_WAIT and the context switch; "
    "on two, the IPI and the other CPU's exit from idle",
]

# The split of the step from the wake-up to the woken task back from
# schedule(): stamps in the first __schedule() on the waker's CPU after it.
SPLIT = [
    "from the end of the wake-up to __schedule() (hand-off: the hook's "
    "return, the rest of sched_submit_work(); futex: the waker's return to "
    "user space and its FUTEX_WAIT, or its preemption on the way out)",
    "rq_lock(), update_rq_clock()",
    "the sleeper's dequeue: deactivate_task() (none if it was preempted); "
    "for a direct hand-off the spare taking the head's place, "
    "threadlet_switch_fair()",
    "pick_next_task() (none after threadlet_switch_fair())",
    "bookkeeping up to context_switch() (the sched_switch tracepoint)",
    "context_switch(): switch_mm, switch_to, finish_task_switch(), up to "
    "the woken task's return from it",
    "the woken task from context_switch() back to its caller of schedule()",
]

# The split of the wake-up (try_to_wake_up()) of the spare or the waiter.
WAKE = [
    "the call, p->pi_lock taken",
    "state match, on_rq test, TASK_WAKING, wait for p->on_cpu",
    "select_task_rq(): the CPU to wake on",
    "ttwu_queue(): rq_lock(), update_rq_clock()",
    "activate_task(): the enqueue",
    "check_preempt_curr(): should the woken task preempt current",
    "the rest of ttwu_do_wakeup(): task_woken, the idle stamp",
    "unlock, return to the caller (futex: wake_up_q's task reference)",
]


def split(cols, stamp, title, names):
    print(f"#### {title}\n")
    print("Mean over the iterations of each 1,000; one stamp subtracted from each step. "
          "Iterations whose stamps are out of order (another switch came "
          "first) are not counted: " +
          ", ".join(f"{t} {sum(r[-1] for r in rows)}" for t, rows in cols) +
          ".\n")
    print("| step | " + " | ".join(t for t, _ in cols) + " |")
    print("|---|" + "---:|" * len(cols))
    tot = [0] * len(cols)
    for i, name in enumerate(names):
        vals = []
        for j, (_, rows) in enumerate(cols):
            # Sums over the valid iterations of each line of 1,000.
            v = sum(r[i] / (1000 - r[-1]) for r in rows) / len(rows) - stamp
            tot[j] += v
            vals.append(f"{v:.0f}")
        print(f"| {name} | " + " | ".join(vals) + " |")
    print("| **sum** | " + " | ".join(f"**{v:.0f}**" for v in tot) + " |\n")


def table(title, names, rows, stamp, cross):
    n = len(rows)
    mean = [sum(r[i] for r in rows) / n for i in range(len(names))]
    print(f"#### {title}\n")
    print(f"Mean of {n} line(s) of 1,000 iterations; one stamp "
          f"({stamp:.0f} instructions) subtracted from each step. "
          f"{sum(cross)} of {n * 1000} ran the woken task on another CPU "
          "than the one that woke it.\n")
    print("| step | instructions |\n|---|---:|")
    total = 0
    for name, v in zip(names, mean):
        if name is None:
            continue
        v -= stamp
        total += v
        print(f"| {name} | {v:.0f} |")
    print(f"| **sum of the steps** | **{total:.0f}** |\n")


def main():
    log = open(sys.argv[1], errors="replace").read()
    tl, tlx = {}, {}
    for kind, vals, x in re.findall(r"TLPROF (\w+) ([\d ]+) cross (\d+)",
                                    log):
        tl.setdefault(kind, []).append([int(v) for v in vals.split()])
        tlx.setdefault(kind, []).append(int(x))
    fxl = re.findall(r"FUTEXPROF ([\d ]+) cross (\d+)", log)
    fx = [[int(v) for v in vals.split()] for vals, _ in fxl]
    if not tl or not fx:
        sys.exit("profile-segments: no TLPROF/FUTEXPROF lines in the log")
    rows = [r for k in tl for r in tl[k]]
    stamp = sum(r[2] for r in rows) / len(rows)
    for kind, title in (("leader", "hand-off, head is the main thread "
                         "(micro's handoff: leadership moves)"),
                        ("thread", "hand-off, head is a second thread "
                         "(micro's handoff_thread)")):
        if kind in tl:
            table(title, HANDOFF, tl[kind], stamp, tlx[kind])
    table("futex pool wake (FUTEX_WAKE of one sleeping waiter: micro's "
          "futex_handoff, both directions)", FUTEX, fx, stamp, [int(x) for _, x in fxl])
    for tag, ftag, title, names in (
            ("TLWAKE", "FUTEXWAKE", "the wake-up, step by step (the "
             "wake_up_process_sync() and wake_up_q() steps above)", WAKE),
            ("TLSCHED", "FUTEXSCHED", "the switch, step by step (the last "
             "step of each table above)", SPLIT)):
        cols = []
        for kind, t in (("leader", "hand-off, leader"),
                        ("thread", "hand-off, thread")):
            rows = [[int(v) for v in vals.split()] + [int(bad)]
                    for k, vals, bad in re.findall(
                        tag + r" (\w+) ([\d ]+) invalid (\d+)", log)
                    if k == kind]
            if rows:
                cols.append((t, rows))
        rows = [[int(v) for v in vals.split()] + [int(bad)] for vals, bad in
                re.findall(ftag + r" ([\d ]+) invalid (\d+)", log)]
        # A direct hand-off has no try_to_wake_up(): no valid iteration.
        cols = [(t, [r for r in rs if r[-1] < 1000]) for t, rs in cols]
        cols = [(t, rs) for t, rs in cols if rs]
        if rows:
            cols.append(("futex wake", rows))
        if cols:
            split(cols, stamp, title, names)


main()
