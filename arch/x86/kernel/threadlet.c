// SPDX-License-Identifier: GPL-2.0
/*
 * x86-64 part of the threadlet hand-off: the user TLS bases and the frame
 * at which the new head returns to user space.
 *
 * The TLS base is per identity: the head keeps its FS/GS base, so errno,
 * pthread_self() and every __thread variable stay the head's. The sleeping
 * task (current, in the scheduler hook) switches its own bases right away;
 * the kernel does not use FS, and its GS is swapped on entry. The woken
 * task loads the head's bases itself, in process context, because its
 * thread.fsbase would be overwritten when it was last switched out.
 */
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <asm/proto.h>
#include <asm/pkru.h>
#include <asm/prctl.h>
#include <asm/threadlet.h>
#include <uapi/linux/threadlet.h>

/* A GDT descriptor as one word, to compare without a memcmp() call. */
static inline u64 threadlet_desc(const struct desc_struct *d)
{
	u64 v;

	BUILD_BUG_ON(sizeof(*d) != sizeof(v));
	memcpy(&v, d, sizeof(v));
	return v;
}

/*
 * Per-thread modes that user space sets with prctl()/arch_prctl(): CPUID
 * faulting (ARCH_SET_CPUID), RDTSC faulting (PR_SET_TSC), L1D flushing
 * (PR_SET_SPECULATION_CTRL).
 */
#define THREADLET_TIF_COMPARE	(_TIF_NOCPUID | _TIF_NOTSC | _TIF_SPEC_L1D_FLUSH)

/*
 * Arch state that stops a hand-off between @head (current) and @spare:
 * what user space can see of its thread and the hand-off does not move.
 * The TLS bases move (below); the GDT TLS entries, the I/O permissions,
 * CPUID faulting and PKRU must be the same in both.
 */
int arch_threadlet_check(struct task_struct *head, struct task_struct *spare)
{
	struct pt_regs *regs;
	int i;

	if (test_tsk_thread_flag(head, TIF_ADDR32) || in_ia32_syscall())
		return THREADLET_FB_COMPAT;
	if (test_tsk_thread_flag(head, TIF_IO_BITMAP) ||
	    test_tsk_thread_flag(spare, TIF_IO_BITMAP) ||
	    head->thread.iopl_emul != spare->thread.iopl_emul ||
	    (read_task_thread_flags(head) & THREADLET_TIF_COMPARE) !=
	    (read_task_thread_flags(spare) & THREADLET_TIF_COMPARE))
		return THREADLET_FB_ARCH;
	/* The spare returns with its own cs and ss: they must be 64-bit. */
	regs = task_pt_regs(spare);
	if (regs->cs != __USER_CS || regs->ss != __USER_DS ||
	    (task_thread_info(spare)->status & TS_COMPAT))
		return THREADLET_FB_COMPAT;
	/* set_thread_area() entries: get_thread_area() reads them back. */
	for (i = 0; i < GDT_ENTRY_TLS_ENTRIES; i++)
		if (threadlet_desc(&head->thread.tls_array[i]) !=
		    threadlet_desc(&spare->thread.tls_array[i]))
			return THREADLET_FB_ARCH;
#ifdef CONFIG_X86_CPU_RESCTRL
	/* The resctrl group (/sys/fs/resctrl/.../tasks) is per task. */
	if (READ_ONCE(head->closid) != READ_ONCE(spare->closid) ||
	    READ_ONCE(head->rmid) != READ_ONCE(spare->rmid))
		return THREADLET_FB_ARCH;
#endif
#ifdef CONFIG_X86_INTEL_MEMORY_PROTECTION_KEYS
	/* current's PKRU is live in the register, a sleeper's in thread. */
	if (cpu_feature_enabled(X86_FEATURE_OSPKE) &&
	    read_pkru() != spare->thread.pkru)
		return THREADLET_FB_ARCH;
#endif
	current_save_fsgs();
	/*
	 * Selector-based TLS (set_thread_area) is not a base we can move;
	 * nor do DS and ES, which 64-bit code leaves zero.
	 */
	savesegment(ds, head->thread.ds);
	savesegment(es, head->thread.es);
	if (head->thread.fsindex || head->thread.gsindex ||
	    spare->thread.fsindex || spare->thread.gsindex ||
	    head->thread.ds != spare->thread.ds ||
	    head->thread.es != spare->thread.es)
		return THREADLET_FB_ARCH;
	return 0;
}

/*
 * A thread about to park saves what a claimer reads from its
 * thread_struct: the TLS bases and selectors, which the context switch
 * saves only when it switches out (a claim may come first), and PKRU.
 */
void arch_threadlet_park(void)
{
	current_save_fsgs();
	savesegment(ds, current->thread.ds);
	savesegment(es, current->thread.es);
#ifdef CONFIG_X86_INTEL_MEMORY_PROTECTION_KEYS
	if (cpu_feature_enabled(X86_FEATURE_OSPKE))
		current->thread.pkru = read_pkru();
#endif
}

/*
 * The process's permission for dynamic FPU features (AMX) is kept in the
 * group leader's task: it follows leadership. Caller holds siglock, which
 * guards it (xstate_request_perm()).
 */
void arch_threadlet_move_leader(struct task_struct *old,
				struct task_struct *new)
{
#ifdef CONFIG_X86_64
	new->thread.fpu.perm = old->thread.fpu.perm;
	new->thread.fpu.guest_perm = old->thread.fpu.guest_perm;
#endif
}

/*
 * Saves current's (the head's) bases in @head_tls and takes @spare's.
 * arch_threadlet_check() has just saved current's live bases.
 */
void arch_threadlet_swap_tls(struct task_struct *head,
			     struct task_struct *spare,
			     struct threadlet_tls *head_tls)
{
	head_tls->fsbase = head->thread.fsbase;
	head_tls->gsbase = head->thread.gsbase;
	do_arch_prctl_64(head, ARCH_SET_FS, spare->thread.fsbase);
	/* Most programs leave GS alone: then the two bases are the same. */
	if (spare->thread.gsbase != head_tls->gsbase)
		do_arch_prctl_64(head, ARCH_SET_GS, spare->thread.gsbase);
}

/*
 * Makes the system call that @regs belongs to return to user space at @ip
 * with stack @sp: a resume point or a home frame. In a 64-bit task rcx and
 * r11 mean nothing there (a system call clobbers them); set as the SYSCALL
 * instruction sets them, they let the exit take SYSRET instead of IRET
 * (do_syscall_64() checks them, the flags and the selectors).
 */
void arch_threadlet_set_frame(struct pt_regs *regs, unsigned long ip,
			      unsigned long sp)
{
	regs->ip = ip;
	regs->sp = sp;
#ifdef CONFIG_X86_64
	if (user_64bit_mode(regs)) {
		regs->cx = ip;
		regs->r11 = regs->flags;
	}
#endif
}

/*
 * Makes current return to user space at the head's resume point with the
 * head's TLS bases.
 */
void arch_threadlet_resume(struct pt_regs *regs, unsigned long ip,
			   unsigned long sp, const struct threadlet_tls *tls)
{
	do_arch_prctl_64(current, ARCH_SET_FS, tls->fsbase);
	/*
	 * thread.gsbase is current's live user GS base: saved when it
	 * parked (arch_threadlet_park()), or restored from there since.
	 */
	if (current->thread.gsbase != tls->gsbase)
		do_arch_prctl_64(current, ARCH_SET_GS, tls->gsbase);
	arch_threadlet_set_frame(regs, ip, sp);
}
