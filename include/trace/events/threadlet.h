/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM threadlet

#if !defined(_TRACE_THREADLET_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_THREADLET_H

#include <linux/sched.h>
#include <linux/tracepoint.h>
#include <uapi/linux/threadlet.h>

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

/*
 * The reasons' names come from the uapi list. TRACE_DEFINE_ENUM puts their
 * values in the format file, for perf and trace-cmd.
 */
#undef __THREADLET_FB_DEFINE_ENUM
#undef __THREADLET_FB_SYMBOL
#define __THREADLET_FB_DEFINE_ENUM(name, str, desc) \
	TRACE_DEFINE_ENUM(THREADLET_FB_##name);
#define __THREADLET_FB_SYMBOL(name, str, desc) { THREADLET_FB_##name, str },

TRACE_DEFINE_ENUM(THREADLET_FB_NONE);
__THREADLET_FALLBACKS(__THREADLET_FB_DEFINE_ENUM)

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
			__THREADLET_FALLBACKS(__THREADLET_FB_SYMBOL)
			{ THREADLET_FB_NONE, "none" }))
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
