#!/usr/bin/env python3
"""Turns perf report's output from profile.sh into the profile tables.

Reads the sections "== profile <loop>" ... "== end <loop>" (perf report
--stdio -n --sort sym), each loop's "PROFILE <loop> <iterations>" line and
the micro.c figures of the same boot, and writes markdown: for the
threadlet round trip and the futex pool's, the guest instructions per
iteration of each phase and of each function with at least MIN_SHARE of
the samples.

A function's instructions per iteration are its share of the loop's
samples times the loop's instructions per iteration, which micro.c
measured in a run without perf ("PROFILE <loop> <n> <ns per iteration>",
the first such line of each loop; 1 ns = 1 instruction under -icount).
"""
import argparse
import re
import sys

TITLES = {
    "profile": "threadlet round trip: exec, the threadlet blocks in read(), "
               "hand-off, the head writes the byte, the completion is posted, "
               "the head's async_wait() returns, pop",
    "profile_futex": "futex pool round trip: FUTEX_WAKE a worker, write the byte, "
                     "FUTEX_WAIT until the worker has read it",
}

# Phases of one hand-off and completion, by function name (first match).
PHASES = [
    ("hand-off: sleep hook, claim, identity checks", r"threadlet_handoff|"
     r"__threadlet_sleeping|threadlet_try_handoff|threadlet_check|async_claim|"
     r"threadlet_reg_head|threadlet_creds|threadlet_cpus|threadlet_seccomp|"
     r"threadlet_audit|threadlet_lsm|threadlet_ioprio|threadlet_in_rseq|"
     r"threadlet_frame_ok"),
    ("hand-off: identity swap", r"threadlet_swap|exchange_tids|swap_|transfer_pid|"
     r"threadlet_move_leader|threadlet_adopt|hlists_swap|recalc_sigpending"),
    ("TLS bases and arch state", r"arch_threadlet|current_save_fsgs|x86_.*base|"
     r"load_gs_index|read_pkru|do_arch_prctl|save_fsgs|wrfsbase|rdfsbase"),
    ("async head lookup", r"async_head_get|async_head_put|async_head_lookup|"
     r"^xa_load|^xas_"),
    ("park, resume as head", r"async_park|async_thread|async_go_home"),
    ("ring post", r"async_post|async_wait_for_slot"),
    ("head's wait", r"async_wait|__x64_sys_async_wait"),
    ("futex", r"futex"),
    ("pipe read and write", r"pipe_|anon_pipe|_copy_(to|from)_iter|copy_page_(to|from)_iter|"
     r"atime|file_update_time|current_time|timestamp_truncate|fsnotify|"
     r"inode_needs_update_time|^copyin|^copyout|page_copy_sane|kmap_local|"
     r"vfs_read|vfs_write|ksys_read|ksys_write|fdget_pos|fdput_pos|__fget|"
     r"^fput|^fdput|init_sync_kiocb|rw_verify_area|__x64_sys_read|__x64_sys_write"),
    ("wake-up", r"try_to_wake_up|ttwu|wake_up|__wake_up|wake_q|select_task_rq|"
     r"enqueue|check_preempt|activate_task|resched_curr|autoremove_wake|"
     r"default_wake"),
    ("context switch, scheduler", r"schedule|__switch_to|switch_mm|finish_task_switch|"
     r"pick_next|put_prev|set_next|dequeue|update_curr|update_load|"
     r"update_cfs|__update_load|reweight|update_rq|sched_|psi_|cpuacct|"
     r"rb_|place_entity|__calc_delta|update_min_vruntime|"
     r"prepare_to_wait|finish_wait|init_wait_entry|hrtick|pick_"),
    ("locks (and irq-off regions, see above)", r"_raw_spin|raw_spin|mutex_|"
     r"__lock_text|_raw_write|_raw_read"),
    ("return to user: rseq, resume work", r"rseq|mem_cgroup_handle_over_high|"
     r"resume_user_mode|blkcg_maybe_throttle"),
    ("system call entry and exit", r"entry_SYSCALL|do_syscall|syscall_|x64_sys_call|"
     r"exit_to_user|fpregs|restore_fpregs|switch_fpu|fpu__|xfd_|error_entry|"
     r"native_iret|irqentry"),
    ("user space: libthreadlet, micro.c, libc", r"^\[\.\]"),
]
OTHER = "other kernel"


def parse(path):
    """Yields (loop, [(samples, sym)]) for each profiled loop, and the
    micro.c RESULT lines."""
    sections, results, iterations, cur = {}, {}, {}, None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^== profile (\S+)", line)
            if m:
                cur = m.group(1)
                sections[cur] = []
                continue
            if line.startswith("== end"):
                cur = None
                continue
            m = re.match(r"^RESULT (\S+) (\S+)", line)
            if m and m.group(1) not in results:
                results[m.group(1)] = float(m.group(2))
            m = re.match(r"^PROFILE (\S+) (\d+) ([0-9.]+)", line)
            if m and m.group(1) not in iterations:
                iterations[m.group(1)] = float(m.group(3))
            if cur is None or line.startswith("#"):
                continue
            m = re.match(r"^\s*([0-9.]+)%\s+(\d+)\s+(\[[.k]\])\s+(.*\S)\s*$", line)
            if m:
                sections[cur].append((int(m.group(2)), m.group(3) + " " + m.group(4)))
    return sections, results, iterations


def phase_of(sym):
    name = sym.split(" ", 1)[1]
    if sym.startswith("[.]"):
        return PHASES[-1][0]
    for title, rx in PHASES[:-1]:
        if re.search(rx, name):
            return title
    return OTHER


def table(loop, rows, period, min_share, per_iter):
    total = sum(s for s, _ in rows)
    scale = total * period / per_iter   # samples per iteration, times period
    out = ["### %s" % TITLES.get(loop, loop), "",
           "%.0f instructions per iteration (without perf); %d samples, one per "
           "%d instructions or more." % (per_iter, total, period), "",
           "| phase | instructions / iteration | share |", "|---|---:|---:|"]
    phases = {}
    for s, sym in rows:
        phases[phase_of(sym)] = phases.get(phase_of(sym), 0) + s
    order = [p for p, _ in PHASES] + [OTHER]
    for p in order:
        if p in phases:
            out.append("| %s | %.0f | %.1f%% |" % (p, phases[p] * period / scale,
                                                   100.0 * phases[p] / total))
    out += ["", "| function | phase | instructions / iteration | share |",
            "|---|---|---:|---:|"]
    rest = 0
    for s, sym in sorted(rows, key=lambda r: -r[0]):
        if s < min_share * total:
            rest += s
            continue
        out.append("| `%s` | %s | %.0f | %.1f%% |" % (sym, phase_of(sym), s * period / scale,
                                                      100.0 * s / total))
    out.append("| (%d functions below %.1f%% each) | | %.0f | %.1f%% |" % (
        sum(1 for s, _ in rows if s < min_share * total), 100 * min_share,
        rest * period / scale, 100.0 * rest / total))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--period", type=int, required=True)
    ap.add_argument("--kernel", default="")
    ap.add_argument("--min-share", type=float, default=0.005)
    ap.add_argument("raw")
    args = ap.parse_args()
    sections, results, iterations = parse(args.raw)
    if not sections or not all(sections.values()) or \
            any(loop not in iterations for loop in sections):
        sys.exit("profile.py: no samples or no iteration count in %s" % args.raw)
    out = ["## Profile of the blocking path (-icount, perf cpu-clock sampling)", ""]
    figs = [(k, results[k]) for k in ("handoff", "roundtrip", "futex_handoff",
                                      "futex_roundtrip") if k in results]
    if figs:
        out.append("micro.c in the same boot, without perf: " +
                   ", ".join("%s %.1f" % kv for kv in figs) + " instructions.")
        out.append("")
    for loop, rows in sections.items():
        out += table(loop, rows, args.period, args.min_share, iterations[loop]) + [""]
    print("\n".join(out).rstrip())


if __name__ == "__main__":
    main()
