/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_THREADLET_H
#define _LINUX_THREADLET_H

/*
 * Hooks that the scheduler, fork, exec, exit and the mm call into the
 * threadlet core (kernel/async/). With CONFIG_THREADLETS=n they are empty
 * inlines, so call sites need no #ifdef.
 */

#include <linux/sched.h>
#include <uapi/linux/threadlet.h>

struct kernel_siginfo;
struct mm_struct;
struct pid;
struct pt_regs;
struct threadlet_reg;

#ifdef CONFIG_THREADLETS

void __threadlet_sleeping(struct task_struct *tsk, struct threadlet_reg *reg);
void threadlet_exit(struct task_struct *tsk);
void threadlet_execve(struct task_struct *tsk);
void threadlet_mm_init(struct mm_struct *mm);
void threadlet_mm_exit(struct mm_struct *mm);
void __threadlet_signal_deliver(struct threadlet_reg *reg, struct pt_regs *regs);
void __threadlet_sigreturn(struct threadlet_reg *reg, struct pt_regs *regs);
/* kernel/sched/core.c: wake @p in place of current, about to sleep. */
int wake_up_process_sync(struct task_struct *p);

/*
 * Called from sched_submit_work() when @tsk is about to sleep. Only tasks
 * that registered a threadlet area pay more than this one test.
 */
static inline void threadlet_sleeping(struct task_struct *tsk)
{
	/*
	 * A parked spare's reg is not its own for long: a hand-off on another
	 * CPU swaps it and may free it (threadlet_handoff()). So a parked
	 * sleep never touches it: the park's pin is set before the spare can
	 * sleep, and only the spare itself (current) writes it.
	 */
	struct threadlet_reg *reg = READ_ONCE(tsk->threadlet);

	if (unlikely(reg) && tsk->threadlet_pin != THREADLET_FB_PARKED)
		__threadlet_sleeping(tsk, reg);
}

/* A new task starts with no area: each thread registers its own. */
static inline void threadlet_fork(struct task_struct *p)
{
	p->threadlet = NULL;
	p->threadlet_pin = 0;
	p->threadlet_next = NULL;
}

/*
 * Brackets a sleep that belongs to this kernel task rather than to the
 * user identity it carries: a wait for signals to this thread (sigsuspend,
 * sigtimedwait, pause), or a parked cache-miss thread. The hook never hands
 * such a sleep off; it counts a fallback with @reason (a THREADLET_FB_*
 * value) instead. Only current writes its own field, so no locking.
 * Returns what threadlet_unpin() restores.
 */
static inline int threadlet_pin(int reason)
{
	int old = current->threadlet_pin;

	current->threadlet_pin = reason;
	return old;
}

static inline void threadlet_unpin(int old)
{
	current->threadlet_pin = old;
}

/*
 * The arch's signal delivery calls this before it writes a handler's frame
 * (@regs: the interrupted user context), and each sigreturn after it has
 * restored one: a handler that interrupts a threadlet does not run as part
 * of it (see __threadlet_signal_deliver()).
 */
static inline void threadlet_signal_deliver(struct pt_regs *regs)
{
	struct threadlet_reg *reg = current->threadlet;

	if (unlikely(reg))
		__threadlet_signal_deliver(reg, regs);
}

static inline void threadlet_sigreturn(struct pt_regs *regs)
{
	struct threadlet_reg *reg = current->threadlet;

	if (unlikely(reg))
		__threadlet_sigreturn(reg, regs);
}

/*
 * Whether @p no longer has the thread ID @tid that a lookup found it by: a
 * hand-off exchanges two tasks' thread IDs under their siglock, so a
 * sender that looked @p up before and queues a thread-directed signal
 * after, under that lock, must look it up again (kernel/signal.c).
 */
static inline bool threadlet_tid_moved(struct task_struct *p, struct pid *tid)
{
	return READ_ONCE(p->thread_pid) != tid;
}

/*
 * Whether @p no longer has the thread ID @nr, in current's pid namespace,
 * that a lookup found it by. A hand-off exchanges the IDs under the
 * head's pi_lock and siglock: a PI futex waiter that found the owner by
 * the TID in the futex word checks it again under the owner's pi_lock
 * (kernel/futex/pi.c), a tracer under the tracee's siglock
 * (kernel/ptrace.c).
 */
static inline bool threadlet_vtid_moved(struct task_struct *p, pid_t nr)
{
	return task_pid_vnr(p) != nr;
}

#else /* !CONFIG_THREADLETS */

static inline void threadlet_sleeping(struct task_struct *tsk) { }
static inline void threadlet_fork(struct task_struct *p) { }
static inline int threadlet_pin(int reason) { return 0; }
static inline void threadlet_unpin(int old) { }
static inline void threadlet_exit(struct task_struct *tsk) { }
static inline void threadlet_execve(struct task_struct *tsk) { }
static inline void threadlet_mm_init(struct mm_struct *mm) { }
static inline void threadlet_mm_exit(struct mm_struct *mm) { }
static inline void threadlet_signal_deliver(struct pt_regs *regs) { }
static inline void threadlet_sigreturn(struct pt_regs *regs) { }
static inline bool threadlet_tid_moved(struct task_struct *p, struct pid *tid)
{
	return false;
}

static inline bool threadlet_vtid_moved(struct task_struct *p, pid_t nr)
{
	return false;
}

#endif /* CONFIG_THREADLETS */

/*
 * kernel/signal.c: do_send_sig_info() of a thread-directed signal to @p,
 * found by thread ID @tid; sends nothing and sets *@moved if a hand-off
 * gave that ID to another task since (threadlet_tid_moved()).
 */
int do_send_sig_info_tid(int sig, struct kernel_siginfo *info,
			 struct task_struct *p, struct pid *tid, bool *moved);

#endif /* _LINUX_THREADLET_H */
