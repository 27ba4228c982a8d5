// SPDX-License-Identifier: GPL-2.0
/*
 * Syslets: chains of system calls run by async_exec() in the calling task.
 *
 * A chain runs with the caller's threadlet area armed, so the hand-off of
 * pool.c applies unchanged: if an atom sleeps, a parked thread takes the
 * caller's identity and returns from async_exec() with 0 (NULL), while
 * this task finishes the chain as a cache-miss thread, posts the final
 * atom and parks. One mechanism, two front ends.
 *
 * Everything read from user memory is copied before use; results and
 * faults are reported through ret_ptr. A chain is bounded only by the
 * caller's patience: it stops at any pending signal (the atom it did not
 * run gets -EINTR) and reschedules between atoms.
 */
#include <linux/blk-cgroup.h>
#include <linux/entry-common.h>
#include <linux/memcontrol.h>
#include <linux/nospec.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/syscalls.h>
#include <linux/task_work.h>
#include <linux/uaccess.h>
#include <asm/syscall.h>
#include <asm/unistd.h>
#ifdef CONFIG_IA32_EMULATION
#include <asm/ia32_unistd.h>	/* __NR_ia32_* */
#endif

#include <trace/events/threadlet.h>

#include "internal.h"

/*
 * The system call ABIs a chain can use: the one async_exec() itself was
 * called through. A 64-bit task's atoms are x86-64 calls; a 32-bit task's
 * (in_ia32_syscall(): int $0x80, SYSENTER, SYSCALL32, and every call on
 * an i386 kernel) are i386 calls, run as the 32-bit entry runs them.
 *
 * Each ABI forbids the calls that never return to the chain (exit, exec,
 * sigreturn), create tasks that would start in the middle of it, or
 * re-enter the async machinery itself; and i386's vm86 calls, which
 * rewrite the frame and the task's stack top for a return in vm86 mode
 * that never comes once the atom's frame is restored.
 */
#ifdef CONFIG_X86_64
static bool syslet_nr_forbidden_64(unsigned int nr)
{
	switch (nr) {
	case __NR_exit:
	case __NR_exit_group:
	case __NR_execve:
	case __NR_execveat:
	case __NR_fork:
	case __NR_vfork:
	case __NR_clone:
	case __NR_clone3:
	case __NR_rt_sigreturn:
	case __NR_threadlet_register:
	case __NR_threadlet_on:
	case __NR_threadlet_off:
	case __NR_async_register:
	case __NR_async_thread:
	case __NR_async_wait:
	case __NR_async_exec:
	case __NR_async_complete:
		return true;
	}
	return false;
}

/* See threadlet_call_pinned(). */
static const u16 threadlet_nr_pinned_64[] __initconst = {
	__NR_seccomp, __NR_prctl, __NR_capset, __NR_setgroups,
	__NR_setuid, __NR_setgid, __NR_setreuid, __NR_setregid,
	__NR_setresuid, __NR_setresgid, __NR_setfsuid, __NR_setfsgid,
	__NR_setns, __NR_unshare, __NR_keyctl, __NR_add_key, __NR_request_key,
	__NR_personality, __NR_landlock_restrict_self, __NR_execve,
	__NR_execveat, __NR_close_range,
#ifdef CONFIG_X86_X32_ABI
	__NR_x32_execve, __NR_x32_execveat,
#endif
};

unsigned long threadlet_pinned_map64[BITS_TO_LONGS(THREADLET_NR_PINNED64)] __ro_after_init;

static void syslet_set_args_64(struct pt_regs *regs, const unsigned long *args)
{
	regs->di = args[0];
	regs->si = args[1];
	regs->dx = args[2];
	regs->r10 = args[3];
	regs->r8 = args[4];
	regs->r9 = args[5];
}

/* @nr < NR_syscalls, or -1: "no such call". */
static long syslet_call_64(struct pt_regs *regs, long nr)
{
	if (nr < 0)
		return __x64_sys_ni_syscall(regs);
	return x64_sys_call(regs, array_index_nospec(nr, NR_syscalls));
}
#else
static inline bool syslet_nr_forbidden_64(unsigned int nr) { return true; }
static inline void syslet_set_args_64(struct pt_regs *regs,
				      const unsigned long *args) { }
static inline long syslet_call_64(struct pt_regs *regs, long nr)
{
	return __ia32_sys_ni_syscall(regs);
}
#endif

#if defined(CONFIG_X86_32) || defined(CONFIG_IA32_EMULATION)
#ifdef CONFIG_X86_64
#define SYSLET_NR32(name)	__NR_ia32_##name
#else
#define SYSLET_NR32(name)	__NR_##name
#endif

static bool syslet_nr_forbidden_32(unsigned int nr)
{
	switch (nr) {
	case SYSLET_NR32(exit):
	case SYSLET_NR32(exit_group):
	case SYSLET_NR32(execve):
	case SYSLET_NR32(execveat):
	case SYSLET_NR32(fork):
	case SYSLET_NR32(vfork):
	case SYSLET_NR32(clone):
	case SYSLET_NR32(clone3):
	case SYSLET_NR32(sigreturn):
	case SYSLET_NR32(rt_sigreturn):
	case SYSLET_NR32(vm86old):
	case SYSLET_NR32(vm86):
	case SYSLET_NR32(threadlet_register):
	case SYSLET_NR32(threadlet_on):
	case SYSLET_NR32(threadlet_off):
	case SYSLET_NR32(async_register):
	case SYSLET_NR32(async_thread):
	case SYSLET_NR32(async_wait):
	case SYSLET_NR32(async_exec):
	case SYSLET_NR32(async_complete):
		return true;
	}
	return false;
}

/* See threadlet_call_pinned(). */
static const u16 threadlet_nr_pinned_32[] __initconst = {
	SYSLET_NR32(seccomp), SYSLET_NR32(prctl), SYSLET_NR32(capset),
	SYSLET_NR32(setgroups), SYSLET_NR32(setgroups32), SYSLET_NR32(setuid),
	SYSLET_NR32(setuid32), SYSLET_NR32(setgid), SYSLET_NR32(setgid32),
	SYSLET_NR32(setreuid), SYSLET_NR32(setreuid32), SYSLET_NR32(setregid),
	SYSLET_NR32(setregid32), SYSLET_NR32(setresuid),
	SYSLET_NR32(setresuid32), SYSLET_NR32(setresgid),
	SYSLET_NR32(setresgid32), SYSLET_NR32(setfsuid),
	SYSLET_NR32(setfsuid32), SYSLET_NR32(setfsgid), SYSLET_NR32(setfsgid32),
	SYSLET_NR32(setns), SYSLET_NR32(unshare), SYSLET_NR32(keyctl),
	SYSLET_NR32(add_key), SYSLET_NR32(request_key),
	SYSLET_NR32(personality), SYSLET_NR32(landlock_restrict_self),
	SYSLET_NR32(execve), SYSLET_NR32(execveat), SYSLET_NR32(close_range),
};

unsigned long threadlet_pinned_map32[BITS_TO_LONGS(IA32_NR_syscalls)] __ro_after_init;

static void syslet_set_args_32(struct pt_regs *regs, const unsigned long *args)
{
	regs->bx = (u32)args[0];
	regs->cx = (u32)args[1];
	regs->dx = (u32)args[2];
	regs->si = (u32)args[3];
	regs->di = (u32)args[4];
	regs->bp = (u32)args[5];
}

static unsigned int syslet_nr_calls(bool ia32)
{
	return ia32 ? IA32_NR_syscalls : NR_syscalls;
}

/* @nr < IA32_NR_syscalls, or -1: "no such call". */
static long syslet_call_32(struct pt_regs *regs, long nr)
{
	if (nr < 0)
		return __ia32_sys_ni_syscall(regs);
	return ia32_sys_call(regs, array_index_nospec(nr, IA32_NR_syscalls));
}
#else
static inline bool syslet_nr_forbidden_32(unsigned int nr) { return true; }
static inline void syslet_set_args_32(struct pt_regs *regs,
				      const unsigned long *args) { }
static inline long syslet_call_32(struct pt_regs *regs, long nr)
{
	return __x64_sys_ni_syscall(regs);
}

static inline unsigned int syslet_nr_calls(bool ia32)
{
	return NR_syscalls;
}
#endif

static bool syslet_forbidden(unsigned int nr, bool ia32)
{
	return ia32 ? syslet_nr_forbidden_32(nr) : syslet_nr_forbidden_64(nr);
}

/*
 * Fills the maps threadlet_call_pinned() tests, once at boot: a bit test
 * on every armed sleep, where a switch over the numbers cost a call and
 * a chain of compares.
 */
static int __init threadlet_pinned_init(void)
{
	int i;

#ifdef CONFIG_X86_64
	for (i = 0; i < ARRAY_SIZE(threadlet_nr_pinned_64); i++)
		__set_bit(threadlet_nr_pinned_64[i], threadlet_pinned_map64);
#endif
#if defined(CONFIG_X86_32) || defined(CONFIG_IA32_EMULATION)
	for (i = 0; i < ARRAY_SIZE(threadlet_nr_pinned_32); i++)
		__set_bit(threadlet_nr_pinned_32[i], threadlet_pinned_map32);
#endif
	return 0;
}
core_initcall(threadlet_pinned_init);

static void syslet_set_args(struct pt_regs *regs, const unsigned long *args,
			    bool ia32)
{
	if (ia32)
		syslet_set_args_32(regs, args);
	else
		syslet_set_args_64(regs, args);
}

static bool syslet_stops(u32 flags, long ret)
{
	return ((flags & SYSLET_STOP_ON_NONZERO) && ret != 0) ||
	       ((flags & SYSLET_STOP_ON_ZERO) && ret == 0) ||
	       ((flags & SYSLET_STOP_ON_NEGATIVE) && ret < 0) ||
	       ((flags & SYSLET_STOP_ON_NON_POSITIVE) && ret <= 0);
}

/*
 * The user words every atom reads or writes (its arguments, its result, a
 * queue's entry): each a single access in a user access region of its
 * own, which is what get_user() and put_user() do, without their call
 * and might_fault() check per word: an atom makes up to eight of them.
 * Faults are handled as in any user access; a chain runs in process
 * context, where they may sleep.
 */
static int syslet_get_u64(u64 uptr, u64 *val)
{
	u64 __user *p = threadlet_u64_ptr(uptr);

	if (!p || !user_read_access_begin(p, sizeof(*p)))
		return -EFAULT;
	unsafe_get_user(*val, p, efault);
	user_read_access_end();
	return 0;
efault:
	user_read_access_end();
	return -EFAULT;
}

static int syslet_put_s64(u64 uptr, s64 val)
{
	s64 __user *p = threadlet_u64_ptr(uptr);

	if (!p || !user_write_access_begin(p, sizeof(*p)))
		return -EFAULT;
	unsafe_put_user(val, p, efault);
	user_write_access_end();
	return 0;
efault:
	user_write_access_end();
	return -EFAULT;
}

/*
 * Runs call @nr (< syslet_nr_calls(@ia32)) of the chain's ABI; -1 gives
 * "no such call", what the entry code leaves in ax before the call.
 */
static long syslet_call(struct pt_regs *regs, long nr, bool ia32)
{
	return ia32 ? syslet_call_32(regs, nr) : syslet_call_64(regs, nr);
}

/*
 * Runs one atom (already copied to @a) as the system call it stands for
 * and returns its result. While it runs, task_pt_regs() is the atom's own
 * frame: @frame, the async_exec() frame, with the atom's number and
 * arguments. That frame is what a ptrace tracer reads and writes at its
 * syscall stops, what seccomp filters and audit decide on, and what the
 * sys_enter/sys_exit tracepoints record, exactly as for the same call made
 * directly. The entry work may change the number (a tracer, a filter) or
 * skip the call (-1: the result is what it left in ax, the "no such
 * call" error unless a filter set another); the exit work may change the result. The
 * async_exec() frame is put back before the next atom (on i386 with the
 * FS selector the atom ended with, see below).
 */
static long syslet_run_atom(const struct syslet_uatom *a,
			    struct pt_regs *frame, bool *refused)
{
	struct pt_regs *regs = task_pt_regs(current);
	bool ia32 = in_ia32_syscall();
	unsigned int nr_calls = syslet_nr_calls(ia32);
	unsigned long args[6] = { 0 };
	long nr, ret;
	int i;

	/*
	 * An unknown flag or a number outside the table is a malformed atom,
	 * and some calls a chain may not make; neither runs, nor one whose
	 * arguments cannot be read. *@refused: the chain ends at it, whatever
	 * its flags (which may mean something else to a later kernel) say.
	 */
	*refused = true;
	if ((a->flags & ~SYSLET_ALL_FLAGS) || a->nr >= nr_calls)
		return -EINVAL;
	if (syslet_forbidden(a->nr, ia32))
		return -EPERM;
	for (i = 0; i < 6 && a->arg_ptr[i]; i++) {
		u64 v;

		if (syslet_get_u64(a->arg_ptr[i], &v))
			return -EFAULT;
		args[i] = v;
	}
	*refused = false;
	regs->orig_ax = a->nr;
	regs->ax = syslet_call(regs, -1, ia32);	/* as the entry code sets it */
	syslet_set_args(regs, args, ia32);

	nr = syscall_enter_from_user_mode_work(regs, a->nr);
	if (nr != -1) {
		/* A tracer may have asked for any number: check it again. */
		if ((unsigned long)nr >= nr_calls)
			regs->ax = syslet_call(regs, -1, ia32);
		else if (nr != a->nr && syslet_forbidden(nr, ia32))
			regs->ax = -EPERM;
		else
			regs->ax = syslet_call(regs, nr, ia32);
	}
	syscall_exit_work_nested(regs);
	/*
	 * An i386 call's result is what the 32-bit process sees in %eax: a
	 * 32-bit tracer writes it back zero-extended (putreg32()), so read
	 * it sign-extended, as syscall_get_error() does and as an i386
	 * kernel stores it.
	 */
	ret = ia32 ? (long)(int)regs->ax : (long)regs->ax;
#ifdef CONFIG_X86_32
	/*
	 * The user FS selector of an i386 task lives in its frame, and a
	 * hand-off in the atom loaded the identity's into this one
	 * (threadlet_load_tls32()): it stays with the identity.
	 */
	frame->fs = regs->fs;
#endif
	*regs = *frame;

	/* Restart codes must not reach user space: the chain is not restarted. */
	if (ret == -ERESTARTSYS || ret == -ERESTARTNOINTR ||
	    ret == -ERESTARTNOHAND || ret == -ERESTART_RESTARTBLOCK)
		ret = -EINTR;
	return ret;
}

/*
 * async_exec() itself ends, for everything that pairs a system call's
 * entry with its exit, where its chain begins: a ptrace tracer gets its
 * exit stop (returning 0) before the first atom's entry stop, the
 * sys_exit tracepoint and audit record it there, and its return to user
 * space skips them (syscall_exit_work_early()). Nested inside it, the
 * atoms' stops would break the alternation of entry and exit stops that
 * tracers rely on, and a tracer that decides at entry stops would take an
 * atom's entry for an exit. Returns the frame that user space gets back:
 * a tracer may have changed it at the stop.
 */
static struct pt_regs *syslet_trace_begin(void)
{
	struct pt_regs *regs = task_pt_regs(current);

	regs_set_return_value(regs, 0);
	syscall_exit_work_early(regs);
	return regs;
}

/*
 * The work the exit to user space does (resume_user_mode_work()), which a
 * chain does not reach between its atoms, nor a cache-miss thread that
 * parks after one: queued task work (the last fput() of a file an atom
 * closed, the CPU-time limits and timers), memory.high and block cgroup
 * throttling. Each of these sets TIF_NOTIFY_RESUME, so one test covers
 * them. The flag itself stays set for the real exit, whose rseq fixup
 * must see the frame user space gets. Process context, no locks held.
 */
static void syslet_user_work(void)
{
	int pin;

	if (!test_thread_flag(TIF_NOTIFY_RESUME))
		return;
	/* Pairs with task_work_add(): the work is queued before the flag. */
	smp_rmb();
	if (task_work_pending(current)) {
		/*
		 * task_work_run() takes the whole list before it runs the
		 * first work, so the hand-off's test of task_works no longer
		 * sees the rest: a work that sleeps would hand the head off
		 * and leave the others to the identity this task takes.
		 */
		pin = threadlet_pin(THREADLET_FB_TASK);
		task_work_run();
		threadlet_unpin(pin);
	}
	mem_cgroup_handle_over_high(GFP_KERNEL);
	blkcg_maybe_throttle_current();
}

static int syslet_store(const struct syslet_uatom *a, long ret)
{
	if (!a->ret_ptr)
		return 0;
	return syslet_put_s64(a->ret_ptr, ret);
}

/*
 * Takes the atom that follows an atom with SYSLET_NEXT_QUEUE from the
 * queue at @uq: *@next is entries[head], head advanced by one, or 0 when
 * the queue is empty. Returns 0, -EFAULT when the queue cannot be read or
 * written, -EINVAL when it is misaligned, -EINTR on a signal while other
 * threads keep changing head.
 *
 * head moves only by a compare-and-exchange from a value below nr, so each
 * entry is taken once however many chains take at once. Everything here
 * is user memory: a thread of the process that rewrites head or nr can
 * make its own chains run an atom twice or end early, no more. A take
 * gives a chain no atom it could not reach through next (any thread of
 * the process may rewrite the atom a next points to), and the chain runs
 * it in the task that ran the chain so far, with the identity it has: no
 * chain moves to another task, so no identity is checked here. The retry
 * loop runs only while another thread changed head between the read and
 * the exchange; it reschedules and stops at a signal, so such a thread
 * cannot keep this one in the kernel.
 */
static int syslet_take(u64 uq, u64 *next)
{
	struct syslet_queue __user *q = threadlet_u64_ptr(uq);
	u64 entries;
	u32 head, nr;

	*next = 0;
	if (!q)
		return -EFAULT;
	/*
	 * head must not straddle two cache lines: a locked instruction on it
	 * would be a split lock, which stalls the machine or, with split lock
	 * detection, is fatal in the kernel. Aligned as a u32 (the i386 ABI
	 * aligns the struct no further), it cannot.
	 */
	if (!IS_ALIGNED(uq, sizeof(u32)))
		return -EINVAL;
	/* One user access region for the queue: its fields are adjacent. */
	for (;;) {
		if (!user_access_begin(q, sizeof(*q)))
			return -EFAULT;
		unsafe_get_user(head, &q->head, efault);
		unsafe_get_user(nr, &q->nr, efault);
		if (head >= nr) {
			user_access_end();
			return 0;
		}
		if (unsafe_try_cmpxchg_user(&q->head, &head, head + 1, efault))
			break;
		user_access_end();
		if (signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	unsafe_get_user(entries, &q->entries, efault);
	user_access_end();
	return syslet_get_u64(entries + (u64)head * sizeof(u64), next);
efault:
	user_access_end();
	return -EFAULT;
}

/*
 * Runs the chain from @uatom, whose first atom is already in @a. Returns
 * the final atom's user address, with @a holding its copy (only its flags
 * and ret_ptr when its successor could not be read). @reg is the
 * area armed for the hand-off: SYSLET_ASYNC hands off before its atom,
 * SYSLET_SYNC runs its atom with the area disarmed. @frame is the
 * async_exec() frame that reg->frame names (see async_exec()).
 */
static u64 syslet_run_chain(u64 uatom, struct syslet_uatom *a,
			    struct threadlet_reg *reg, struct pt_regs *frame)
{
	struct threadlet_area *ka = reg->karea;
	u64 next, ret_ptr;
	u32 flags;
	long ret;

	for (;;) {
		bool sync, refused;

		if (current->threadlet == reg && (a->flags & SYSLET_ASYNC))
			threadlet_handoff_now(current, reg);
		/*
		 * Only the head may touch @reg's area: once handed off (just
		 * now, or by an earlier atom's sleep), it is the new head's,
		 * which may have armed a threadlet in it.
		 */
		sync = current->threadlet == reg && (a->flags & SYSLET_SYNC);
		if (sync)
			WRITE_ONCE(ka->flags, ka->flags & ~THREADLET_ON);
		ret = syslet_run_atom(a, frame, &refused);
		if (sync && current->threadlet == reg)
			WRITE_ONCE(ka->flags, ka->flags | THREADLET_ON);
		if (syslet_store(a, ret) || refused)
			return uatom;

		if (syslet_stops(a->flags, ret)) {
			if (!(a->flags & SYSLET_SKIP_TO_NEXT_ON_STOP))
				return uatom;
			next = uatom + sizeof(*a);
		} else if (a->flags & SYSLET_NEXT_QUEUE) {
			int err = syslet_take(a->next, &next);

			if (err) {
				/* Its result is replaced: no successor. */
				syslet_store(a, err);
				return uatom;
			}
		} else {
			next = a->next;
		}
		if (!next)
			return uatom;
		/*
		 * Read straight into @a: a stack copy to read into would be
		 * cleared at every atom (INIT_STACK_ALL_ZERO) and copied
		 * again. What a failed read may have overwritten, the two
		 * fields this atom is still used for, is put back.
		 */
		flags = a->flags;
		ret_ptr = a->ret_ptr;
		if (!threadlet_u64_ptr(next) ||
		    copy_from_user(a, u64_to_user_ptr(next), sizeof(*a))) {
			a->flags = flags;
			a->ret_ptr = ret_ptr;
			/* This atom's result is replaced: its successor is bad. */
			syslet_store(a, -EFAULT);
			return uatom;
		}
		uatom = next;
		/* A CPU-time limit's signal is sent by this work. */
		syslet_user_work();
		if (signal_pending(current)) {
			syslet_store(a, -EINTR);
			return uatom;
		}
		cond_resched();
	}
}

/*
 * async_exec - run the syslet chain at @uatom. Returns the final atom when
 * nothing blocked (or it blocked with no spare thread: then it ran in
 * place), 0 when it went async (the final atom will be posted into @ahu's
 * ring unless it has SYSLET_NO_COMPLETE), -EINVAL for a thread without a
 * threadlet area or an unknown @ahu, -EBUSY inside a threadlet, -EFAULT if
 * the first atom cannot be read.
 */
SYSCALL_DEFINE2(async_exec, struct syslet_uatom __user *, uatom,
		struct async_head_user __user *, ahu)
{
	struct threadlet_reg *reg = current->threadlet;
	struct syslet_uatom a;
	struct pt_regs frame;
	struct task_struct *next = NULL;
	struct async_head *head;
	struct threadlet_area *ka;
	long ret;
	u64 final, head_id;
	int pin;

	if (!reg)
		return -EINVAL;
	ka = reg->karea;
	/*
	 * Until the area is armed below, a sleep (a fault on the first
	 * atom) stays with this task, whatever another thread writes in
	 * the area: @reg and @ka must still be this task's when it is. From
	 * then on a hand-off pins the rest of the call itself (pool.c).
	 */
	pin = threadlet_pin(THREADLET_FB_CALL);
	ret = -EBUSY;
	if (READ_ONCE(ka->flags) & THREADLET_ON)
		goto unpin;
	ret = -EFAULT;
	if (copy_from_user(&a, uatom, sizeof(a)))
		goto unpin;
	/*
	 * No reference is held across the chain: an atom may end the task
	 * (a seccomp kill, strict mode) without returning here. The hook
	 * finds the head by the area's ahu; the end of the chain looks it
	 * up again, and posts only if it is still the head of @head_id: one
	 * unregistered meanwhile has been promised no more completions, and
	 * a head registered at the same address since did not run the chain.
	 */
	ret = -EINVAL;
	head_id = async_head_id(ahu);
	if (!head_id)
		goto unpin;

	/*
	 * The call's exit work (a tracer's exit stop, audit's record, which
	 * may sleep for the backlog) runs before the area is armed, pinned:
	 * a hand-off there would give the frame to the spare's head, and
	 * this task would then write reg->frame, a pointer into its own
	 * stack, into what is the new head's reg by then, for its next
	 * chain's hand-off to copy. A hand-off resumes the head at this
	 * frame, not at an atom's; reg->frame is set before reg->syslet.
	 */
	frame = *syslet_trace_begin();
	reg->frame = &frame;
	WRITE_ONCE(ka->ahu, (unsigned long)ahu);
	reg->syslet = true;
	/* As threadlet_on(): a THREADLET_SIGNAL still set is stale. */
	WRITE_ONCE(ka->flags, THREADLET_ON);
	threadlet_unpin(pin);
	final = syslet_run_chain((unsigned long)uatom, &a, reg, &frame);

	if (current->threadlet == reg) {
		/* Still the head: everything ran in this task. */
		WRITE_ONCE(ka->flags, ka->flags & ~THREADLET_ON);
		reg->syslet = false;
		reg->frame = NULL;
		WRITE_ONCE(ka->nr_sync, ka->nr_sync + 1);
		trace_threadlet_sync(current);
		ret = final;
	} else {
		/*
		 * A cache-miss thread now: complete, then park; or go home if
		 * the head was unregistered meanwhile (nothing is posted).
		 * A parked thread may never return to user space: what the
		 * chain left for that return is done first.
		 */
		syslet_user_work();
		head = async_head_get(ahu);
		if (head && head->id != head_id) {
			/* Unregistered, and another head registered there. */
			async_head_put(head);
			head = NULL;
		}
		if (!head) {
			ret = async_go_home(0);
		} else if (!(a.flags & SYSLET_NO_COMPLETE) &&
			   async_post(head, final, true, &next) == -EINTR) {
			/*
			 * The ring is full and a signal came: this thread has
			 * no frame but its identity's home to take it at. Hold
			 * the completion (and the reference) there; a parked
			 * identity holds none, so the slot is free.
			 */
			reg = current->threadlet;
			reg->held_head = head;
			reg->held_event = final;
			ret = async_go_home(-EINTR);
		} else {
			ret = async_park(head, next, true);
			async_head_put(head);
		}
	}
unpin:
	threadlet_unpin(pin);
	return ret;
}

/*
 * umem_add - add @inc to the u64 at @uptr. Returns 0 when the new value is
 * zero and 1 when it is not (a count-down atom stops on zero), -EFAULT for
 * a bad pointer. The new value itself is at @uptr: returned, any value in
 * [-4095, -1] would read as an error.
 */
static long do_umem_add(u64 __user *uptr, u64 inc)
{
	u64 val;

	if (get_user(val, uptr))
		return -EFAULT;
	val += inc;
	if (put_user(val, uptr))
		return -EFAULT;
	return val != 0;
}

SYSCALL_DEFINE2(umem_add, u64 __user *, uptr, u64, inc)
{
	return do_umem_add(uptr, inc);
}

#if defined(CONFIG_X86_32) || defined(CONFIG_IA32_EMULATION)
/*
 * The i386 entry (native and compat): @inc comes in two registers, the
 * low half first, as for the other i386 calls with 64-bit arguments
 * (arch/x86/kernel/sys_ia32.c).
 */
SYSCALL_DEFINE3(ia32_umem_add, u64 __user *, uptr, u32, inc_lo, u32, inc_hi)
{
	return do_umem_add(uptr, ((u64)inc_hi << 32) | inc_lo);
}
#endif
