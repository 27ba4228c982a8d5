/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM threadlet

#if !defined(_TRACE_THREADLET_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_THREADLET_H

#include <linux/sched.h>
#include <linux/tracepoint.h>

/*
 * What the threadlet core did, for perf stat -e 'threadlet:*'. Task fields
 * are kernel pids, which a hand-off exchanges: "tid" is the user-visible
 * thread the event concerns, read when the event fires.
 */

DECLARE_EVENT_CLASS(threadlet_tid,
	TP_PROTO(struct task_struct *tsk),
	TP_ARGS(tsk),
	TP_STRUCT__entry(__field(pid_t, tid)),
	TP_fast_assign(__entry->tid = tsk->pid;),
	TP_printk("tid=%d", __entry->tid)
);

/* A threadlet or syslet ran to completion in place (syscall path only). */
DEFINE_EVENT(threadlet_tid, threadlet_sync,
	TP_PROTO(struct task_struct *tsk),
	TP_ARGS(tsk)
);

/* The woken spare returns to user space as the head. */
DEFINE_EVENT(threadlet_tid, threadlet_resume,
	TP_PROTO(struct task_struct *tsk),
	TP_ARGS(tsk)
);

/* Fires in the sleeping task after the swap: head_tid is the head's TID. */
TRACE_EVENT(threadlet_handoff,
	TP_PROTO(struct task_struct *sleeper, struct task_struct *new_head),
	TP_ARGS(sleeper, new_head),
	TP_STRUCT__entry(
		__field(pid_t, head_tid)
		__field(pid_t, sleeper_tid)
	),
	TP_fast_assign(
		__entry->head_tid = new_head->pid;
		__entry->sleeper_tid = sleeper->pid;
	),
	TP_printk("head_tid=%d now_running_as=%d", __entry->head_tid,
		  __entry->sleeper_tid)
);

TRACE_EVENT(threadlet_fallback,
	TP_PROTO(struct task_struct *tsk, int reason),
	TP_ARGS(tsk, reason),
	TP_STRUCT__entry(
		__field(pid_t, tid)
		__field(int, reason)
	),
	TP_fast_assign(
		__entry->tid = tsk->pid;
		__entry->reason = reason;
	),
	TP_printk("tid=%d reason=%s", __entry->tid,
		  __print_symbolic(__entry->reason,
			{ 1, "no_spare" }, { 2, "no_head" }, { 3, "ptrace" },
			{ 4, "rt" }, { 5, "pi" }, { 6, "compat" },
			{ 7, "signals" }, { 8, "creds" }, { 9, "arch" },
			{ 10, "bad_frame" }, { 11, "exiting" }, { 12, "fs" },
			{ 13, "files" }, { 14, "namespaces" }, { 15, "sched" },
			{ 16, "task" }, { 17, "parked" }))
);

TRACE_EVENT(threadlet_post,
	TP_PROTO(struct task_struct *tsk, u64 event, u64 kidx),
	TP_ARGS(tsk, event, kidx),
	TP_STRUCT__entry(
		__field(pid_t, tid)
		__field(u64, event)
		__field(u64, kidx)
	),
	TP_fast_assign(
		__entry->tid = tsk->pid;
		__entry->event = event;
		__entry->kidx = kidx;
	),
	TP_printk("tid=%d event=0x%llx kernel_ring_idx=%llu", __entry->tid,
		  __entry->event, __entry->kidx)
);

TRACE_EVENT(threadlet_park,
	TP_PROTO(struct task_struct *tsk, u32 nr_parked),
	TP_ARGS(tsk, nr_parked),
	TP_STRUCT__entry(
		__field(pid_t, tid)
		__field(u32, nr_parked)
	),
	TP_fast_assign(
		__entry->tid = tsk->pid;
		__entry->nr_parked = nr_parked;
	),
	TP_printk("tid=%d nr_parked=%u", __entry->tid, __entry->nr_parked)
);

#endif /* _TRACE_THREADLET_H */

#include <trace/define_trace.h>
