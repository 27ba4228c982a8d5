// SPDX-License-Identifier: GPL-2.0
/*
 * Moving a user-visible identity between two threads of one group.
 *
 * threadlet_swap_identity() exchanges everything by which user space can
 * tell one thread from another, so that the thread returning to user space
 * at the head's resume point *is* the head: TID, thread-group leadership
 * (the TGID's task, the parent's child list, exit_signal), children,
 * signal mask, thread-directed pending signals, sigaltstack, robust futex
 * lists, clear_child_tid, the rseq registration and the threadlet area.
 * The TLS base is exchanged by the arch code (arch/x86/kernel/threadlet.c);
 * FPU control state is the user library's job (callee-saved by the ABI).
 *
 * Not moved, and documented for users: scheduling attributes, CPU
 * affinity, per-thread CPU-time clocks and accounting, comm, ioprio.
 *
 * Locking: tasklist_lock for writing (pids, leader, children), then the
 * group's siglock (signal state). Both are spinning locks, so this runs in
 * the scheduler hook of the sleeping head.
 */
#include <linux/ptrace.h>
#include <linux/rseq.h>
#include <linux/sched/rt.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>

#include "internal.h"

static bool seccomp_same(struct task_struct *a, struct task_struct *b)
{
#ifdef CONFIG_SECCOMP
	return a->seccomp.mode == b->seccomp.mode &&
	       a->seccomp.filter == b->seccomp.filter;
#else
	return true;
#endif
}

/*
 * Whether @spare can take @head's identity. Reads fields that change only
 * under locks the two tasks' owners take, so a stale answer is re-checked
 * where it matters, under tasklist_lock.
 */
int threadlet_check_identity(struct task_struct *head,
			     struct task_struct *spare)
{
	if (spare->ptrace || !list_empty(&spare->ptraced))
		return THREADLET_FB_PTRACE;
	if (task_is_realtime(spare))
		return THREADLET_FB_RT;
	if (!list_empty(&spare->pi_state_list))
		return THREADLET_FB_PI;
	if (rcu_access_pointer(head->cred) != rcu_access_pointer(spare->cred) ||
	    rcu_access_pointer(head->real_cred) !=
	    rcu_access_pointer(spare->real_cred) ||
	    !seccomp_same(head, spare))
		return THREADLET_FB_CREDS;
	return 0;
}

/* Makes @new the thread-group leader in place of @old, as de_thread() does. */
static void threadlet_move_leader(struct task_struct *old,
				  struct task_struct *new)
{
	struct task_struct *t;

	transfer_pid(old, new, PIDTYPE_TGID);
	transfer_pid(old, new, PIDTYPE_PGID);
	transfer_pid(old, new, PIDTYPE_SID);
	list_replace_rcu(&old->tasks, &new->tasks);
	list_replace_init(&old->sibling, &new->sibling);
	for_each_thread(old, t)
		t->group_leader = new;
	new->exit_signal = old->exit_signal;
	old->exit_signal = -1;
}

static void threadlet_adopt_children(struct list_head *list,
				     struct task_struct *parent)
{
	struct task_struct *child;

	list_for_each_entry(child, list, sibling) {
		child->real_parent = parent;
		if (!child->ptrace)
			child->parent = parent;
	}
}

static void swap_lists(struct list_head *a, struct list_head *b)
{
	LIST_HEAD(tmp);

	list_splice_init(a, &tmp);
	list_splice_init(b, a);
	list_splice(&tmp, b);
}

static void swap_children(struct task_struct *a, struct task_struct *b)
{
	swap_lists(&a->children, &b->children);
	threadlet_adopt_children(&a->children, a);
	threadlet_adopt_children(&b->children, b);
}

static void swap_signals(struct task_struct *a, struct task_struct *b)
{
	swap(a->blocked, b->blocked);
	swap_lists(&a->pending.list, &b->pending.list);
	swap(a->pending.signal, b->pending.signal);
	swap(a->sas_ss_sp, b->sas_ss_sp);
	swap(a->sas_ss_size, b->sas_ss_size);
	swap(a->sas_ss_flags, b->sas_ss_flags);
}

static void swap_user_pointers(struct task_struct *a, struct task_struct *b)
{
	struct threadlet_reg *tmp_reg;

	swap(a->robust_list, b->robust_list);
#ifdef CONFIG_COMPAT
	swap(a->compat_robust_list, b->compat_robust_list);
#endif
	swap(a->clear_child_tid, b->clear_child_tid);
	swap(a->set_child_tid, b->set_child_tid);
#ifdef CONFIG_RSEQ
	swap(a->rseq, b->rseq);
	swap(a->rseq_sig, b->rseq_sig);
#endif
	/* A parked spare's own hook reads it locklessly: threadlet_sleeping(). */
	tmp_reg = a->threadlet;
	WRITE_ONCE(a->threadlet, b->threadlet);
	WRITE_ONCE(b->threadlet, tmp_reg);
}

/*
 * Gives @head's identity to @spare and @spare's to @head. @head is current,
 * about to sleep; @spare is parked and claimed, so it cannot run user code
 * or exit until told. Returns THREADLET_FB_EXITING, changing nothing, if
 * the group started to exit or exec meanwhile.
 */
int threadlet_swap_identity(struct task_struct *head,
			    struct task_struct *spare)
{
	struct sighand_struct *sighand = head->sighand;

	write_lock_irq(&tasklist_lock);
	spin_lock(&sighand->siglock);
	if ((head->signal->flags & SIGNAL_GROUP_EXIT) ||
	    head->signal->group_exec_task ||
	    (spare->flags & PF_EXITING) || spare->ptrace || head->ptrace) {
		spin_unlock(&sighand->siglock);
		write_unlock_irq(&tasklist_lock);
		return THREADLET_FB_EXITING;
	}

	exchange_tids(head, spare);
	if (thread_group_leader(head))
		threadlet_move_leader(head, spare);
	swap_children(head, spare);
	swap_signals(head, spare);
	swap_user_pointers(head, spare);

	recalc_sigpending();
	recalc_sigpending_and_wake(spare);
	spin_unlock(&sighand->siglock);
	write_unlock_irq(&tasklist_lock);

	rseq_set_notify_resume(head);
	rseq_set_notify_resume(spare);
	return 0;
}
