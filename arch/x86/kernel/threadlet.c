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
#include <asm/prctl.h>
#include <asm/threadlet.h>
#include <uapi/linux/threadlet.h>

/* Arch state that stops a hand-off between @head (current) and @spare. */
int arch_threadlet_check(struct task_struct *head, struct task_struct *spare)
{
	if (test_tsk_thread_flag(head, TIF_ADDR32) || in_ia32_syscall())
		return THREADLET_FB_COMPAT;
	if (test_tsk_thread_flag(head, TIF_IO_BITMAP) ||
	    test_tsk_thread_flag(spare, TIF_IO_BITMAP))
		return THREADLET_FB_ARCH;
	current_save_fsgs();
	/* Selector-based TLS (set_thread_area) is not a base we can move. */
	if (head->thread.fsindex || head->thread.gsindex ||
	    spare->thread.fsindex || spare->thread.gsindex)
		return THREADLET_FB_ARCH;
	return 0;
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
	do_arch_prctl_64(head, ARCH_SET_GS, spare->thread.gsbase);
}

/*
 * Makes current return to user space at the head's resume point with the
 * head's TLS bases. Changing ip and sp makes the syscall exit use IRET.
 */
void arch_threadlet_resume(struct pt_regs *regs, unsigned long ip,
			   unsigned long sp, const struct threadlet_tls *tls)
{
	do_arch_prctl_64(current, ARCH_SET_FS, tls->fsbase);
	do_arch_prctl_64(current, ARCH_SET_GS, tls->gsbase);
	regs->ip = ip;
	regs->sp = sp;
}
