// SPDX-License-Identifier: GPL-2.0
/*
 * Moving a user-visible identity between two threads of one group.
 *
 * Deny by default: every piece of per-task state that user space can
 * observe is either moved with the identity, compared (the hand-off falls
 * back, with a named reason, when head and spare differ), or cannot differ
 * between two threads of one group. docs/task-state.md lists each one and
 * says which; this file is the code of that table, and the two must agree.
 *
 * Moved (threadlet_swap_identity()): TID, thread-group leadership (the
 * TGID/PGID/SID links, the parent's child list, exit_signal, the pid
 * namespace's child reaper, the AMX permission), start time, children and
 * every thread of each child, signal mask, thread-directed pending
 * signals, sigaltstack, pdeath_signal, robust futex lists,
 * clear_child_tid, set_child_tid, rseq, the threadlet area, comm, timer
 * slack, and what security modules key on the thread (Yama's ptrace
 * relations, through security_task_handoff()). The TLS bases are moved
 * by the arch code (arch/x86/kernel/threadlet.c); FPU control state by the
 * user library's trampoline.
 *
 * Compared (threadlet_check_identity() and arch_threadlet_check()):
 * credentials by content, seccomp, no_new_privs, audit ids and whether the
 * thread is audited, an LSM task blob; namespaces, cgroup, SysV undo list,
 * fs_struct, file table; scheduling policy, nice, affinity, ioprio,
 * uclamp, core cookie, mempolicy; personality, per-thread prctl flags and
 * PF_ bits, CPU-time timers, syscall user dispatch, uretprobes, io_uring's
 * task context, an rseq critical section in progress, task work queued
 * for either; and the arch state
 * (GDT TLS entries, selectors, I/O permissions, PKRU, CPUID and TSC
 * faulting, L1D flushing, the spare's 64-bit return frame).
 *
 * Locking: the swap runs under the group's siglock (signal state, the CPU
 * timers another thread may arm, exit, exec and job control), and only
 * when it moves group leadership or children under tasklist_lock for
 * writing first (threadlet_swap_global()); a move of leadership also
 * holds cgroup_threadgroup_rwsem for reading, as exec does, in effect
 * (threadlet_threadgroup_begin()), and never waits for it. The TIDs move
 * under the head's pi_lock as well (threadlet_exchange_tids()). Nothing
 * is waited for but spinning locks,
 * so this runs in the scheduler hook of the sleeping head. comm is
 * moved under each task's alloc_lock, after those. Settings another
 * thread changes by TID without those locks (nice, affinity, policy,
 * ioprio, comm) may land on either task while a hand-off runs:
 * docs/task-state.md.
 */
#include <linux/cred.h>
#include <linux/fs_struct.h>
#include <linux/ioprio.h>
#include <linux/iocontext.h>
#include <linux/nsproxy.h>
#include <linux/pid_namespace.h>
#include <linux/posix-timers.h>
#include <linux/ptrace.h>
#include <linux/rseq.h>
#include <linux/cgroup.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <linux/security.h>
#include <linux/sched/rt.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>

#include "internal.h"

static bool threadlet_caps_equal(kernel_cap_t a, kernel_cap_t b)
{
	return cap_issubset(a, b) && cap_issubset(b, a);
}

static bool threadlet_groups_equal(const struct group_info *a,
				   const struct group_info *b)
{
	int i;

	if (a == b)
		return true;
	if (a->ngroups != b->ngroups)
		return false;
	for (i = 0; i < a->ngroups; i++)
		if (!gid_eq(a->gid[i], b->gid[i]))
			return false;
	return true;
}

/*
 * Whether two credentials give the same rights and the same answers to
 * every get*id()/capget() call. glibc's setuid() and friends give each
 * thread its own struct cred with the same content: a pointer compare would
 * stop every later hand-off. An LSM's blob has no generic content compare,
 * so with CONFIG_SECURITY two creds with different blobs count as
 * different (a fallback, never a leak).
 */
static bool threadlet_creds_equal(const struct cred *a, const struct cred *b)
{
	if (a == b)
		return true;
	if (!uid_eq(a->uid, b->uid) || !gid_eq(a->gid, b->gid) ||
	    !uid_eq(a->suid, b->suid) || !gid_eq(a->sgid, b->sgid) ||
	    !uid_eq(a->euid, b->euid) || !gid_eq(a->egid, b->egid) ||
	    !uid_eq(a->fsuid, b->fsuid) || !gid_eq(a->fsgid, b->fsgid) ||
	    a->securebits != b->securebits)
		return false;
	if (!threadlet_caps_equal(a->cap_inheritable, b->cap_inheritable) ||
	    !threadlet_caps_equal(a->cap_permitted, b->cap_permitted) ||
	    !threadlet_caps_equal(a->cap_effective, b->cap_effective) ||
	    !threadlet_caps_equal(a->cap_bset, b->cap_bset) ||
	    !threadlet_caps_equal(a->cap_ambient, b->cap_ambient))
		return false;
#ifdef CONFIG_KEYS
	if (a->jit_keyring != b->jit_keyring ||
	    a->session_keyring != b->session_keyring ||
	    a->process_keyring != b->process_keyring ||
	    a->thread_keyring != b->thread_keyring ||
	    a->request_key_auth != b->request_key_auth)
		return false;
#endif
#ifdef CONFIG_SECURITY
	if (a->security != b->security)
		return false;
#endif
	return a->user == b->user && a->user_ns == b->user_ns &&
	       a->ucounts == b->ucounts &&
	       threadlet_groups_equal(a->group_info, b->group_info);
}

/* Threads that never changed their creds share them: test that inline. */
static inline bool threadlet_creds_same(const struct cred *a,
					const struct cred *b)
{
	return likely(a == b) || threadlet_creds_equal(a, b);
}

static bool threadlet_seccomp_equal(struct task_struct *a,
				    struct task_struct *b)
{
#ifdef CONFIG_SECCOMP
	return a->seccomp.mode == b->seccomp.mode &&
	       a->seccomp.filter == b->seccomp.filter &&
	       test_task_syscall_work(a, SECCOMP) ==
	       test_task_syscall_work(b, SECCOMP);
#else
	return true;
#endif
}

/*
 * Audit login ids, and whether the thread is audited at all: that is
 * decided per thread when it is created (audit_alloc()).
 */
static bool threadlet_audit_equal(struct task_struct *a,
				  struct task_struct *b)
{
#ifdef CONFIG_AUDITSYSCALL
	if (!a->audit_context != !b->audit_context ||
	    test_task_syscall_work(a, SYSCALL_AUDIT) !=
	    test_task_syscall_work(b, SYSCALL_AUDIT))
		return false;
#endif
#ifdef CONFIG_AUDIT
	return uid_eq(a->loginuid, b->loginuid) && a->sessionid == b->sessionid;
#else
	return true;
#endif
}

/*
 * A security module's per-task blob (AppArmor's exec and hat state,
 * TOMOYO's domain) has no generic compare and is not moved: with one, the
 * head stays where it is.
 */
static bool threadlet_lsm_none(struct task_struct *a, struct task_struct *b)
{
#ifdef CONFIG_SECURITY
	return !a->security && !b->security;
#else
	return true;
#endif
}

/* The ioprio that ioprio_get() would report for @p, or the default. */
static int threadlet_ioprio(struct task_struct *p)
{
	struct io_context *ioc = READ_ONCE(p->io_context);

	return ioc ? READ_ONCE(ioc->ioprio) : IOPRIO_DEFAULT;
}

/*
 * The whole mask, a size known at compile time: one word compare for
 * small configurations instead of a __bitmap_equal() call. Bits past
 * nr_cpu_ids are clear in a task's mask.
 */
static bool threadlet_cpus_equal(const struct cpumask *a,
				 const struct cpumask *b)
{
	return bitmap_equal(cpumask_bits(a), cpumask_bits(b),
			    sizeof(*a) * BITS_PER_BYTE);
}

static int threadlet_check_sched(struct task_struct *a, struct task_struct *b)
{
	if (a->policy != b->policy || a->static_prio != b->static_prio ||
	    a->sched_reset_on_fork != b->sched_reset_on_fork ||
	    !threadlet_cpus_equal(&a->cpus_mask, &b->cpus_mask) ||
	    threadlet_ioprio(a) != threadlet_ioprio(b))
		return THREADLET_FB_SCHED;
#ifdef CONFIG_UCLAMP_TASK
	if (memcmp(a->uclamp_req, b->uclamp_req, sizeof(a->uclamp_req)))
		return THREADLET_FB_SCHED;
#endif
#ifdef CONFIG_NUMA
	if (a->mempolicy != b->mempolicy)
		return THREADLET_FB_SCHED;
#endif
#ifdef CONFIG_SCHED_CORE
	if (a->core_cookie != b->core_cookie)
		return THREADLET_FB_SCHED;
#endif
	return 0;
}

/*
 * Task flags that user space sets per thread (PR_SET_IO_FLUSHER,
 * PR_MCE_KILL) or that decide what it may do (a failed RLIMIT_NPROC
 * check makes the next execve() fail).
 */
#define THREADLET_USER_PF	(PF_MEMALLOC_NOIO | PF_LOCAL_THROTTLE | \
				 PF_MCE_PROCESS | PF_MCE_EARLY | \
				 PF_NPROC_EXCEEDED)

/*
 * Whether @t is inside an rseq critical section. Such a section must be
 * aborted when its thread sleeps and moves; handed off, the sleeper would
 * come back under the spare's rseq area and never abort it. Reads user
 * memory without faulting: the hook may not sleep, and an unreadable area
 * counts as inside. *@cpu is the CPU the area names (cpu_id_start and
 * cpu_id agree), or -1: the spare that takes the area over skips the
 * return-to-user update of an area that already names its CPU
 * (async_park()).
 */
static bool threadlet_in_rseq_cs(struct task_struct *t, int *cpu)
{
#ifdef CONFIG_RSEQ
	struct rseq __user *rs = t->rseq;
	u64 ids, cs;

	*cpu = -1;
	if (!rs)
		return false;
	BUILD_BUG_ON(offsetof(struct rseq, cpu_id) !=
		     offsetof(struct rseq, cpu_id_start) + sizeof(u32) ||
		     offsetof(struct rseq, cpu_id_start) != 0);
	/* One user access region for both words, faults not taken. */
	pagefault_disable();
	if (!user_read_access_begin(rs, offsetofend(struct rseq, rseq_cs)))
		goto fault;
	unsafe_get_user(cs, &rs->rseq_cs, fault_end);
	unsafe_get_user(ids, (u64 __user *)&rs->cpu_id_start, fault_end);
	user_read_access_end();
	pagefault_enable();
	if (cs)
		return true;
	if (lower_32_bits(ids) == upper_32_bits(ids))
		*cpu = lower_32_bits(ids);
	return false;
fault_end:
	user_read_access_end();
fault:
	pagefault_enable();
	return true;
#else
	*cpu = -1;
	return false;
#endif
}

/*
 * Whether a timer on one of @t's own CPU clocks is queued on @t. It
 * measures this task's CPU time, so it stays with the task while the
 * thread ID it was set by moves, and every later lookup of the timer's
 * task goes by that ID: a hand-off would leave it queued on a task the ID
 * no longer finds. Caller holds siglock, under which timers are queued
 * (posix_cpu_timer_set(), which also checks that its task still has the
 * ID, patch 0012) and dequeued. The process's timers are in ->signal.
 */
static bool threadlet_thread_timers(struct task_struct *t)
{
#ifdef CONFIG_POSIX_TIMERS
	struct posix_cputimer_base *base = t->posix_cputimers.bases;

	return timerqueue_getnext(&base[CPUCLOCK_PROF].tqhead) ||
	       timerqueue_getnext(&base[CPUCLOCK_VIRT].tqhead) ||
	       timerqueue_getnext(&base[CPUCLOCK_SCHED].tqhead);
#else
	return false;
#endif
}

static int threadlet_check_task(struct task_struct *a, struct task_struct *b,
				int *rseq_cpu)
{
	if (a->personality != b->personality ||
	    (a->flags & THREADLET_USER_PF) != (b->flags & THREADLET_USER_PF) ||
	    READ_ONCE(a->atomic_flags) != READ_ONCE(b->atomic_flags))
		return THREADLET_FB_TASK;
#ifdef CONFIG_GENERIC_ENTRY
	if (test_task_syscall_work(a, SYSCALL_USER_DISPATCH) ||
	    test_task_syscall_work(b, SYSCALL_USER_DISPATCH))
		return THREADLET_FB_TASK;
#endif
#ifdef CONFIG_UPROBES
	/* Return addresses that a uretprobe replaced live in the task. */
	if ((a->utask && a->utask->return_instances) ||
	    (b->utask && b->utask->return_instances))
		return THREADLET_FB_TASK;
#endif
#ifdef CONFIG_IO_URING
	/* io_uring's per-task context: registered ring fds, io-wq, issuer. */
	if (a->io_uring || b->io_uring)
		return THREADLET_FB_TASK;
#endif
#ifdef CONFIG_BPF_SYSCALL
	/* BPF task storage (a BPF LSM's per-thread policy) stays per task. */
	if (rcu_access_pointer(a->bpf_storage) ||
	    rcu_access_pointer(b->bpf_storage))
		return THREADLET_FB_TASK;
#endif
	if (threadlet_in_rseq_cs(a, rseq_cpu))
		return THREADLET_FB_TASK;
	/*
	 * Work queued for a task runs when that task returns to user space:
	 * handed off, the head's would run in the cache-miss thread. Work
	 * another task queues for this one (a session keyring for the
	 * parent, KEYCTL_SESSION_TO_PARENT) names the thread that should
	 * see its effect. No work can be queued between this test and the
	 * swap: the head is current, the spare sleeps parked, io_uring's
	 * targets fell back above, and keyctl refuses a target that has
	 * other threads, which both have.
	 */
	if (READ_ONCE(a->task_works) || READ_ONCE(b->task_works))
		return THREADLET_FB_TASK;
	return 0;
}

/*
 * Whether @spare can take @head's identity: 0, or the THREADLET_FB_* reason
 * why not. @head is current, about to sleep; @spare is parked and claimed,
 * so neither changes its own state meanwhile. Of what other tasks can
 * change, ptrace and CPU timers are checked again under the swap's locks,
 * a TSYNC seccomp filter changes both alike, and settings made by TID are
 * the documented race (see the top of this file).
 * *@rseq_cpu: the CPU @head's rseq area names, or -1 (see
 * threadlet_in_rseq_cs()). Caller holds rcu_read_lock() for the creds and
 * the cgroup.
 */
int threadlet_check_identity(struct task_struct *head,
			     struct task_struct *spare, int *rseq_cpu)
{
	int ret;

	if (spare->ptrace || !list_empty(&spare->ptraced))
		return THREADLET_FB_PTRACE;
	if (task_is_realtime(spare))
		return THREADLET_FB_RT;
	if (!list_empty(&spare->pi_state_list))
		return THREADLET_FB_PI;
	if (!threadlet_creds_same(rcu_dereference(head->cred),
				  rcu_dereference(spare->cred)) ||
	    !threadlet_creds_same(rcu_dereference(head->real_cred),
				  rcu_dereference(spare->real_cred)) ||
	    !threadlet_seccomp_equal(head, spare) ||
	    !threadlet_audit_equal(head, spare) ||
	    !threadlet_lsm_none(head, spare) ||
	    task_no_new_privs(head) != task_no_new_privs(spare))
		return THREADLET_FB_CREDS;
	/* Before fs: a new mount namespace comes with its own fs_struct. */
	if (head->nsproxy != spare->nsproxy)
		return THREADLET_FB_NAMESPACES;
	if (head->fs != spare->fs)
		return THREADLET_FB_FS;
	if (head->files != spare->files)
		return THREADLET_FB_FILES;
#ifdef CONFIG_SYSVIPC
	/* Semaphore undo lists: shared unless unshare(CLONE_SYSVSEM). */
	if (head->sysvsem.undo_list != spare->sysvsem.undo_list)
		return THREADLET_FB_NAMESPACES;
#endif
#ifdef CONFIG_CGROUPS
	if (task_css_set(head) != task_css_set(spare))
		return THREADLET_FB_NAMESPACES;
#endif
	ret = threadlet_check_sched(head, spare);
	if (!ret)
		ret = threadlet_check_task(head, spare, rseq_cpu);
	return ret;
}

/*
 * Makes @new the thread-group leader in place of @old, as de_thread() does
 * for exec, including the process's start time and, for the init of a pid
 * namespace, the namespace's reaper. Caller holds tasklist_lock for writing.
 *
 * Unlike exec, this happens while the other threads run, and the leader's
 * alloc_lock guards the process's rlimits (task_lock_group_leader(), which
 * reads the leader again under that lock). Caller holds @old's too: a
 * reader of the rlimits that locked @old is done, and one that comes after
 * finds @new. It is only tried (spin_trylock(), else the head sleeps in
 * place): alloc_lock must not be waited for under tasklist_lock held for
 * writing, which an interrupt's reader could then wait for in turn.
 */
static void threadlet_move_leader(struct task_struct *old,
				  struct task_struct *new)
{
	struct pid *tgid = task_tgid(new);
	struct task_struct *t;
	enum pid_type type;

	/* transfer_pid() of the links only a leader has, inline. */
	for (type = PIDTYPE_TGID; type < PIDTYPE_MAX; type++)
		hlist_replace_rcu(&old->pid_links[type], &new->pid_links[type]);
	list_replace_rcu(&old->tasks, &new->tasks);
	list_replace_init(&old->sibling, &new->sibling);
	for_each_thread(old, t)
		t->group_leader = new;
	new->exit_signal = old->exit_signal;
	old->exit_signal = -1;
	/* Only a process whose ID is 1 in its namespace reaps for it. */
	if (unlikely(is_child_reaper(tgid)) &&
	    ns_of_pid(tgid)->child_reaper == old)
		ns_of_pid(tgid)->child_reaper = new;
	arch_threadlet_move_leader(old, new);
}

/*
 * Every thread of a child process names the thread that forked it as its
 * real parent (copy_process() copies the creator's real_parent into each
 * new thread), so every thread follows, not just the child's leader:
 * forget_original_parent() checks each of them.
 */
static void threadlet_adopt_children(struct list_head *list,
				     struct task_struct *parent)
{
	struct task_struct *child, *t;

	list_for_each_entry(child, list, sibling) {
		for_each_thread(child, t) {
			t->real_parent = parent;
			if (!t->ptrace)
				t->parent = parent;
		}
	}
}

/*
 * Moving children re-parents every thread of every child process under
 * tasklist_lock for writing, with interrupts off, and a program may have
 * as many children as RLIMIT_NPROC allows, reaped or not: past this many
 * threads in all, a hand-off would stall the whole system's fork, exit and
 * wait, each time. Such a head sleeps in place (THREADLET_FB_TASK). The
 * count stops at the limit, so the test costs no more than a walk that
 * is allowed; with no children at all (a main-thread head's common case)
 * it is two list tests. Caller holds tasklist_lock.
 */
#define THREADLET_MAX_CHILD_THREADS	256

/*
 * Moving leadership writes every thread's group_leader, under the same
 * locks: a main thread whose process has more threads than this sleeps in
 * place (THREADLET_FB_TASK), so that a program cannot make each hand-off
 * hold them as long as it likes.
 */
#define THREADLET_MAX_LEADER_THREADS	1024

static bool threadlet_children_few(struct task_struct *a,
				   struct task_struct *b)
{
	struct task_struct *parents[2] = { a, b }, *child, *t;
	unsigned int n = 0, i;

	if (list_empty(&a->children) && list_empty(&b->children))
		return true;
	for (i = 0; i < ARRAY_SIZE(parents); i++)
		list_for_each_entry(child, &parents[i]->children, sibling)
			for_each_thread(child, t)
				if (++n > THREADLET_MAX_CHILD_THREADS)
					return false;
	return true;
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
	if (!list_empty(&a->children) || !list_empty(&b->children)) {
		swap_lists(&a->children, &b->children);
		threadlet_adopt_children(&a->children, a);
		threadlet_adopt_children(&b->children, b);
	}
	swap(a->pdeath_signal, b->pdeath_signal);
}

static void swap_signals(struct task_struct *a, struct task_struct *b)
{
	swap(a->blocked, b->blocked);
	if (!list_empty(&a->pending.list) || !list_empty(&b->pending.list))
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

/* Per-thread settings that are plain values: the thread's start time, slack. */
static void swap_attributes(struct task_struct *a, struct task_struct *b)
{
	swap(a->start_time, b->start_time);
	swap(a->start_boottime, b->start_boottime);
	swap(a->timer_slack_ns, b->timer_slack_ns);
	swap(a->default_timer_slack_ns, b->default_timer_slack_ns);
}

/*
 * comm is read under alloc_lock (get_task_comm()): one task at a time.
 * Threads mostly share their name, so the locked swap is for names that
 * differ. A write to /proc/<tid>/comm by another thread while this runs
 * may be lost, as docs/task-state.md says for settings made by TID.
 */
static void swap_comm(struct task_struct *a, struct task_struct *b)
{
	char ca[TASK_COMM_LEN], cb[TASK_COMM_LEN];
	u64 wa[2], wb[2];

	BUILD_BUG_ON(sizeof(wa) != TASK_COMM_LEN);
	memcpy(wa, a->comm, sizeof(wa));
	memcpy(wb, b->comm, sizeof(wb));
	if (wa[0] == wb[0] && wa[1] == wb[1])
		return;
	task_lock(a);
	memcpy(ca, a->comm, TASK_COMM_LEN);
	task_unlock(a);
	task_lock(b);
	memcpy(cb, b->comm, TASK_COMM_LEN);
	memcpy(b->comm, ca, TASK_COMM_LEN);
	task_unlock(b);
	task_lock(a);
	memcpy(a->comm, cb, TASK_COMM_LEN);
	task_unlock(a);
}

/*
 * A cgroup migration of the whole group (cgroup.procs) holds
 * cgroup_threadgroup_rwsem for writing while it walks the group and while
 * its controllers find the group's leader among the tasks it moves
 * (cgroup_taskset_for_each_leader(): cpuset rebinds the process's memory,
 * memcg moves its charges there). Leadership that moved in between would
 * show them no leader, or two. exec's de_thread() holds the lock for
 * reading across its move of leadership; a leader's swap holds it too, in
 * effect: returns 0 when no writer can run until the swap is done, 1 when
 * it took the lock (threadlet_threadgroup_end() drops it), -1 when a
 * migration runs (the head then sleeps in place: the hook cannot wait).
 *
 * Caller holds rcu_read_lock() across the swap. A writer first waits for
 * a grace period (rcu_sync_enter()), so while the rwsem's rcu_sync is idle
 * none gets past that before the swap ends: percpu_down_read()'s own fast
 * path, without the per-CPU count, which only a reader that outlives its
 * RCU section needs. The hand-off saves the count's two updates.
 */
static int threadlet_threadgroup_begin(void)
{
#ifdef CONFIG_CGROUPS
	if (rcu_sync_is_idle(&cgroup_threadgroup_rwsem.rss))
		return 0;
	return percpu_down_read_trylock(&cgroup_threadgroup_rwsem) ? 1 : -1;
#else
	return 0;
#endif
}

static void threadlet_threadgroup_end(int held)
{
#ifdef CONFIG_CGROUPS
	if (held > 0)
		percpu_up_read(&cgroup_threadgroup_rwsem);
#endif
}

/*
 * Whether the swap must take tasklist_lock: it moves group leadership or
 * children (pid hashes, the tasks and sibling lists, real_parent), or a
 * pdeath_signal that the exit of the process's parent reads under that
 * lock. None of that changes under us unless we change it: only @head
 * forks its children or gives up leadership, and @spare is claimed. A
 * child another thread's exit re-parents to @head or @spare meanwhile
 * stays with that kernel task, as if its exit had picked the other
 * thread (find_new_reaper() takes any live thread).
 */
static bool threadlet_swap_global(struct task_struct *head,
				  struct task_struct *spare)
{
	return thread_group_leader(head) ||
	       !list_empty(&head->children) || !list_empty(&spare->children) ||
	       head->pdeath_signal != spare->pdeath_signal;
}

/*
 * Exchanges the TIDs of @head and @spare, unless either owns or waits on a
 * PI futex (THREADLET_FB_PI). A PI waiter finds the owner by the TID in the
 * futex word, then attaches its state to that task under the task's
 * pi_lock and checks the TID again there (attach_to_pi_owner()). With the
 * exchange under @head's pi_lock, an attach to @head either completed
 * before it, and is seen here, or sees the new TID and looks the owner up
 * again, then finds @spare. The lockless test in threadlet_check_head()
 * only saves this work in the common case.
 *
 * @spare's pi_lock is not taken: it is a parked pool thread, which owns a
 * PI futex only if the program's own threadlet left one locked. An attach
 * to it racing the exchange can only give that program's futex the wrong
 * owner, which the program could do to itself without threadlets by
 * writing the futex word. siglock nests outside pi_lock, as in
 * signal_wake_up().
 */
static int threadlet_exchange_tids(struct task_struct *head,
				   struct task_struct *spare)
{
	int ret = 0;

	raw_spin_lock(&head->pi_lock);
	if (!list_empty(&head->pi_state_list) || head->pi_blocked_on ||
	    !list_empty(&spare->pi_state_list))
		ret = THREADLET_FB_PI;
	else
		exchange_tids(head, spare);
	raw_spin_unlock(&head->pi_lock);
	return ret;
}

/*
 * Whether recalculating TIF_SIGPENDING for both tasks after the swap would
 * change nothing, the common case: nothing is queued, trapped or frozen
 * that would set the flag for either, whichever mask each gets, and
 * @head's is clear, so recalc_sigpending() has nothing to clear either
 * (recalc_sigpending_and_wake() of @spare never clears). Caller holds
 * siglock, under which all of it is queued and set.
 */
static bool threadlet_signals_quiet(struct task_struct *head,
				    struct task_struct *spare)
{
	return !(read_task_thread_flags(head) & _TIF_SIGPENDING) &&
	       sigisemptyset(&head->pending.signal) &&
	       sigisemptyset(&spare->pending.signal) &&
	       sigisemptyset(&head->signal->shared_pending.signal) &&
	       !((head->jobctl | spare->jobctl) & JOBCTL_TRAP_FREEZE) &&
	       !cgroup_task_frozen(head) && !cgroup_task_frozen(spare);
}

/*
 * Gives @head's identity to @spare and @spare's to @head. @head is current,
 * about to sleep; @spare is parked and claimed, so it cannot run user code
 * or exit until told. Returns 0, or the THREADLET_FB_* reason, changing
 * nothing, when the two may not swap: THREADLET_FB_EXITING if the group
 * started to exit, exec or stop meanwhile.
 *
 * The common case (not the leader, no children) takes only the group's
 * siglock: the TIDs move by exchange_tids(), whose readers use RCU, and
 * what else moves is the two tasks' own. Exec, exit and job control set
 * their flags under siglock, so they are seen here or wait for the swap.
 * A tracer that attaches meanwhile holds tasklist_lock, not siglock: it
 * attaches to the kernel task it looked up by TID, which may carry the
 * other identity by then, as with any lookup by TID during a hand-off;
 * from then on hand-offs of either are refused. Caller holds
 * rcu_read_lock() (threadlet_threadgroup_begin()).
 */
int threadlet_swap_identity(struct task_struct *head,
			    struct task_struct *spare)
{
	struct sighand_struct *sighand = head->sighand;
	bool global = threadlet_swap_global(head, spare);
	/* Only @head gives up leadership: this stays true until the end. */
	bool leader = thread_group_leader(head);
	int ret = 0, tg = 0;

	if (leader) {
		tg = threadlet_threadgroup_begin();
		if (tg < 0)
			return THREADLET_FB_TASK;
	}
	if (global) {
		write_lock_irq(&tasklist_lock);
		spin_lock(&sighand->siglock);
	} else {
		spin_lock_irq(&sighand->siglock);
	}
	if ((head->signal->flags & SIGNAL_GROUP_EXIT) ||
	    head->signal->group_exec_task ||
	    (head->jobctl & JOBCTL_PENDING_MASK) ||
	    (spare->jobctl & JOBCTL_PENDING_MASK) ||
	    (spare->flags & PF_EXITING) || spare == head ||
	    thread_group_leader(spare))
		ret = THREADLET_FB_EXITING;
	else if (spare->ptrace || head->ptrace ||
		 !list_empty(&spare->ptraced) || !list_empty(&head->ptraced))
		ret = THREADLET_FB_PTRACE;
	else if (threadlet_thread_timers(head) || threadlet_thread_timers(spare))
		ret = THREADLET_FB_TASK;
	else if (global && !threadlet_children_few(head, spare))
		ret = THREADLET_FB_TASK;
	else if (leader &&
		 READ_ONCE(head->signal->nr_threads) > THREADLET_MAX_LEADER_THREADS)
		ret = THREADLET_FB_TASK;
	/* Last but the TIDs; see threadlet_move_leader(). */
	else if (leader && !spin_trylock(&head->alloc_lock))
		ret = THREADLET_FB_TASK;
	if (ret)
		goto out;

	ret = threadlet_exchange_tids(head, spare);
	if (ret) {
		if (leader)
			task_unlock(head);
		goto out;
	}
	if (global) {
		if (leader) {
			threadlet_move_leader(head, spare);
			task_unlock(head);
		}
		swap_children(head, spare);
	}
	swap_signals(head, spare);
	swap_user_pointers(head, spare);
	swap_attributes(head, spare);
	/* Under siglock: see yama_task_handoff(). */
	security_task_handoff(head, spare);

	if (!threadlet_signals_quiet(head, spare)) {
		recalc_sigpending();
		recalc_sigpending_and_wake(spare);
	}
out:
	if (global) {
		spin_unlock(&sighand->siglock);
		write_unlock_irq(&tasklist_lock);
	} else {
		spin_unlock_irq(&sighand->siglock);
	}
	threadlet_threadgroup_end(tg);
	if (ret)
		return ret;
	swap_comm(head, spare);
	/* @spare's, if the area needs it, is async_park()'s to set. */
	rseq_set_notify_resume(head);
	return 0;
}
