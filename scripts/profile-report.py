#!/usr/bin/env python3
"""make profile's report: scripts/profile.sh's guest output (perf report
--stdio of micro.c's "profile" and "profile_futex" loops, sampled with
cpu-clock under -icount) -> where one hand-off's instructions go, by
phase and by function (markdown).

  profile-report.py --period P [--min-share S] FILE
"""
import argparse, re, sys

PROFILE_TITLES = {
    "profile": "threadlet round trip: exec, the threadlet blocks in read(), "
               "hand-off, the head writes the byte, the completion is posted, "
               "the head's async_wait() returns, pop",
    "profile_futex": "futex pool round trip: FUTEX_WAKE a worker, write the byte, "
                     "FUTEX_WAIT until the worker has read it",
}

# Phases of one hand-off and completion, by function name (first match).
PHASES = [
    ('hand-off: sleep hook, claim, identity checks', r"threadlet_handoff|__threadlet_sleeping|"
     r"threadlet_try_handoff|threadlet_check|async_claim|threadlet_reg_head|threadlet_creds|"
     r"threadlet_cpus|threadlet_seccomp|threadlet_audit|threadlet_lsm|threadlet_ioprio|"
     r"threadlet_in_rseq|threadlet_frame_ok"),
    ('hand-off: identity swap', r"threadlet_swap|exchange_tids|swap_|transfer_pid|"
     r"threadlet_move_leader|threadlet_adopt|hlists_swap|recalc_sigpending"),
    ('TLS bases and arch state', r"arch_threadlet|current_save_fsgs|x86_.*base|load_gs_index|"
     r"read_pkru|do_arch_prctl|save_fsgs|wrfsbase|rdfsbase"),
    ('async head lookup', r"async_head_get|async_head_put|async_head_lookup|^xa_load|^xas_"),
    ('park, resume as head', r"async_park|async_thread|async_go_home"),
    ('ring post', r"async_post|async_wait_for_slot"),
    ("head's wait", r"async_wait|__x64_sys_async_wait"),
    ('futex', r"futex"),
    ('pipe read and write', r"pipe_|anon_pipe|_copy_(to|from)_iter|copy_page_(to|from)_iter|atime|"
     r"file_update_time|current_time|timestamp_truncate|fsnotify|inode_needs_update_time|^copyin|"
     r"^copyout|page_copy_sane|kmap_local|vfs_read|vfs_write|ksys_read|ksys_write|fdget_pos|"
     r"fdput_pos|__fget|^fput|^fdput|init_sync_kiocb|rw_verify_area|__x64_sys_read|"
     r"__x64_sys_write"),
    ('wake-up', r"try_to_wake_up|ttwu|wake_up|__wake_up|wake_q|select_task_rq|enqueue|"
     r"check_preempt|activate_task|resched_curr|autoremove_wake|default_wake"),
    ('context switch, scheduler', r"schedule|__switch_to|switch_mm|finish_task_switch|pick_next|"
     r"put_prev|set_next|dequeue|update_curr|update_load|update_cfs|__update_load|reweight|"
     r"update_rq|sched_|psi_|cpuacct|rb_|place_entity|__calc_delta|update_min_vruntime|"
     r"prepare_to_wait|finish_wait|init_wait_entry|hrtick|pick_"),
    ('locks (and irq-off regions, see above)',
     r"_raw_spin|raw_spin|mutex_|__lock_text|_raw_write|_raw_read"),
    ('return to user: rseq, resume work', r"rseq|mem_cgroup_handle_over_high|resume_user_mode|"
     r"blkcg_maybe_throttle"),
    ('system call entry and exit', r"entry_SYSCALL|do_syscall|syscall_|x64_sys_call|exit_to_user|"
     r"fpregs|restore_fpregs|switch_fpu|fpu__|xfd_|error_entry|native_iret|irqentry"),
    ('user space: libthreadlet, micro.c, libc', r"^\[\.\]"),
]
OTHER = "other kernel"

def phase_of(sym):
    if sym.startswith("[.]"):
        return PHASES[-1][0]
    return next((t for t, rx in PHASES[:-1] if re.search(rx, sym.split(" ", 1)[1])), OTHER)

def profile_table(loop, rows, period, min_share, per_iter):
    """A function's instructions per iteration: its share of the loop's
    samples times the loop's instructions per iteration, which micro.c
    measured without perf (1 ns = 1 instruction under -icount)."""
    total = sum(s for s, _ in rows)
    per = lambda s: "%.0f | %.1f%%" % (s * per_iter / total, 100.0 * s / total)
    out = ["### %s" % PROFILE_TITLES.get(loop, loop), "",
           "%.0f instructions per iteration (without perf); %d samples, one per "
           "%d instructions or more." % (per_iter, total, period), "",
           "| phase | instructions / iteration | share |", "|---|---:|---:|"]
    phases = {}
    for s, sym in rows:
        phases[phase_of(sym)] = phases.get(phase_of(sym), 0) + s
    out += ["| %s | %s |" % (p, per(phases[p])) for p, _ in PHASES + [(OTHER, 0)] if p in phases]
    out += ["", "| function | phase | instructions / iteration | share |", "|---|---|---:|---:|"]
    big = [(s, sym) for s, sym in sorted(rows, key=lambda r: -r[0]) if s >= min_share * total]
    out += ["| `%s` | %s | %s |" % (sym, phase_of(sym), per(s)) for s, sym in big]
    out.append("| (%d functions below %.1f%% each) | | %s |" % (
        len(rows) - len(big), 100 * min_share, per(total - sum(s for s, _ in big))))
    return out

def profile(a):
    """The sections "== profile <loop>" ... "== end <loop>" (perf report
    --stdio -n --sort sym), each loop's first "PROFILE <loop> <n> <ns per
    iteration>" line, and micro.c's RESULT lines of the same boot."""
    sections, results, iters, cur = {}, {}, {}, None
    for line in open(a.file, encoding="utf-8", errors="replace").read().splitlines():
        m = re.match(r"^== (profile|end) ?(\S*)", line)
        if m:
            cur = m[2] if m[1] == "profile" else None
            if cur:
                sections[cur] = []
            continue
        m = re.match(r"^RESULT (\S+) (\S+)", line)
        if m:
            results.setdefault(m[1], float(m[2]))
        m = re.match(r"^PROFILE (\S+) (\d+) ([0-9.]+)", line)
        if m:
            iters.setdefault(m[1], float(m[3]))
        m = re.match(r"^\s*([0-9.]+)%\s+(\d+)\s+(\[[.k]\])\s+(.*\S)\s*$", line)
        if cur and m and not line.startswith("#"):
            sections[cur].append((int(m[2]), m[3] + " " + m[4]))
    if not sections or not all(sections.values()) or any(k not in iters for k in sections):
        sys.exit("profile-report.py: no samples or no iteration count in %s" % a.file)
    out = ["## Profile of the blocking path (-icount, perf cpu-clock sampling)", ""]
    figs = [(k, results[k]) for k in ("handoff", "roundtrip", "futex_handoff",
                                      "futex_roundtrip") if k in results]
    if figs:
        out += ["micro.c in the same boot, without perf: " +
                ", ".join("%s %.1f" % kv for kv in figs) + " instructions.", ""]
    for loop, rows in sections.items():
        out += profile_table(loop, rows, a.period, a.min_share, iters[loop]) + [""]
    print("\n".join(out).rstrip())

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--period", type=int, required=True)
    ap.add_argument("--min-share", type=float, default=0.005)
    ap.add_argument("file")
    profile(ap.parse_args())

if __name__ == "__main__":
    main()
