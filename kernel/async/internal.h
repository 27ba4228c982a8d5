/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _KERNEL_ASYNC_INTERNAL_H
#define _KERNEL_ASYNC_INTERNAL_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/refcount.h>
#include <linux/sched/task_stack.h>
#include <linux/spinlock.h>
#include <linux/threadlet.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <uapi/linux/threadlet.h>
#include <asm/syscall.h>
#include <asm/threadlet.h>
#include <asm/unistd.h>

/*
 * A registered threadlet area. It belongs to a user-visible identity, not
 * to a kernel task: a hand-off moves it with the TID and the TLS base.
 * task->threadlet is written only by the task itself, or, for a parked
 * cache-miss thread, by the task that claimed it (see struct async_parker).
 */
struct threadlet_reg {
	struct threadlet_area __user	*uarea;
	struct threadlet_area		*karea;	/* kernel view of the pinned page */
	struct page			*page;
	void				*vmap;	/* karea's mapping of a highmem page */
	/* Charged to this user's locked_vm, or NULL (CAP_IPC_LOCK). */
	struct user_struct		*user;
	unsigned long			nr_locked;	/* pages charged */
	/* The last async head a hand-off used, referenced (pool.c). */
	struct async_head		*head;
	/*
	 * Set while async_exec() runs a syslet chain: a hand-off resumes the
	 * head from its async_exec() syscall frame (returning 0) instead of
	 * the area's head_ip/head_sp. That frame is @frame: while an atom
	 * runs, task_pt_regs() holds the atom's own frame (syslet.c).
	 */
	bool				syslet;
	struct pt_regs			*frame;
	/*
	 * Set by a hand-off on the identity the sleeping task takes over: it
	 * belonged to a parked pool member, so it has no frame to return to
	 * when it finds the pool full, and goes home (async_park()). Cleared
	 * when it parks.
	 */
	bool				cachemiss;
	/*
	 * Went home with ASYNC_GROW from this head (referenced): its next
	 * park, on any head, or its end ends that head's grow_busy.
	 */
	struct async_head		*grow_head;
	/*
	 * A syslet completion this identity owes @held_head (referenced):
	 * a signal came while its completer waited for ring space, and the
	 * completer went home to take it (syslet.c). The identity's next
	 * async_thread() posts it before anything else; its exit posts it
	 * if a slot is free, without waiting. Only the task that has the
	 * identity touches these.
	 */
	struct async_head		*held_head;
	u64				held_event;
	/*
	 * The user stack pointer of the threadlet context a signal handler
	 * interrupted (THREADLET_SIGNAL); only the task that has the
	 * identity touches it.
	 */
	unsigned long			sig_sp;
};

/*
 * Per-mm registry of async heads, allocated at the first registration.
 * lock serialises registration and unregistration (which write user
 * memory, so it is a mutex) and guards nr_heads; lookups use RCU.
 */
struct threadlet_mm {
	struct xarray			heads;
	struct mutex			lock;	/* registration, nr_heads */
	unsigned int			nr_heads;
};

/*
 * Kernel side of a struct async_head_user, found in mm->threadlet_heads by
 * its user address. The ring geometry is copied at registration and never
 * re-read from user memory.
 */
struct async_head {
	refcount_t			refs;	/* the xarray's, plus one per user */
	unsigned long			uaddr;
	u64				id;	/* unique: tells a later head apart */
	struct pid			*tgid;	/* thread group that registered it */
	u64 __user			*ring;
	u32				ring_mask;
	u32				max_threads;

	/* parked, nr_parked, dead, grow_*; dead is also set under post_lock */
	raw_spinlock_t			lock;
	/*
	 * A stack: the last thread to park is the first claimed. A thread
	 * a claim refused (it differs from the head) goes to the bottom.
	 */
	struct hlist_head		parked;
	u32				nr_parked;
	bool				dead;
	/*
	 * Elastic pool: low_watermark and idle (jiffies, 0: never) are
	 * fixed at registration. grow_busy: a thread went home with
	 * ASYNC_GROW and has not parked again; grow_pending: a hand-off
	 * found too few parked and no thread to send, so the next thread
	 * that comes to park goes instead.
	 */
	u32				low_watermark;
	unsigned long			idle;
	bool				grow_busy;
	bool				grow_pending;

	struct mutex			post_lock;	/* kidx and ring slots */
	u64				kidx;		/* completions posted */
	/* kidx once kernel_ring_idx says so too: what async_wait() waits for */
	u64				published;
	unsigned long			space_gen;	/* bumped by async_wait() */
	wait_queue_head_t		wait;	/* waiters and ring-full posters */
	struct rcu_head			rcu;
};

/*
 * A parked cache-miss thread. Lives on that thread's kernel stack while it
 * sleeps in async_thread(). Whoever removes it from head->parked (under
 * head->lock) owns it: the parked thread itself, async_unregister(), or a
 * sleeping head that claims it for a hand-off. In the last case the parked
 * thread does not touch its own identity until state says HANDOFF.
 */
enum async_park_state {
	ASYNC_PARKED,
	ASYNC_CLAIMED,		/* a head is moving its identity here */
	ASYNC_HANDOFF,		/* return to user space as the head */
	ASYNC_SHUTDOWN,		/* the head was unregistered: go home */
	ASYNC_ABORTED,		/* hand-off abandoned: the group is exiting */
	ASYNC_GROW_HOME,	/* go home with ASYNC_GROW: start more threads */
	ASYNC_IDLE,		/* parked idle_timeout_ms unclaimed: go home */
};

struct async_parker {
	struct hlist_node		node;
	struct task_struct		*task;
	int				state;
	/* Filled by the claiming head before state becomes HANDOFF. */
	unsigned long			head_ip;
	unsigned long			head_sp;
	struct threadlet_tls		tls;
	/* The CPU the head's rseq area names, or -1: see async_park(). */
	int				rseq_cpu;
	bool				full_regs;	/* syslet: its frame is set */
};

/*
 * A user address from a __u64 field of the uapi structures, or NULL when
 * it does not fit in a pointer (a 32-bit kernel): never a truncated one,
 * which would name other memory than the caller's.
 */
static inline void __user *threadlet_u64_ptr(u64 v)
{
	return v == (unsigned long)v ? u64_to_user_ptr(v) : NULL;
}

/* head.c */
struct async_head *async_head_get(struct async_head_user __user *ahu);
u64 async_head_id(struct async_head_user __user *ahu);
struct async_head *async_head_lookup_rcu(struct mm_struct *mm, u64 uaddr);
void async_head_put(struct async_head *head);
int async_post(struct async_head *head, u64 event, bool wait,
	       struct task_struct **next);
int async_post_held(struct threadlet_reg *reg, bool wait);

/* pool.c */
int threadlet_handoff_now(struct task_struct *tsk, struct threadlet_reg *reg);
long async_park(struct async_head *head, struct task_struct *next, bool no_frame);
long async_go_home(long ret);
void async_grow_done(struct threadlet_reg *reg);

/* syslet.c */
/*
 * The 64-bit map holds the x32 calls' numbers too (their own execve() and
 * execveat() lie past the 64-bit table, at 512 and up).
 */
#ifdef CONFIG_X86_X32_ABI
#define THREADLET_NR_PINNED64	(X32_NR_syscalls > NR_syscalls ? \
				 X32_NR_syscalls : NR_syscalls)
#else
#define THREADLET_NR_PINNED64	NR_syscalls
#endif
extern unsigned long threadlet_pinned_map64[];
extern unsigned long threadlet_pinned_map32[];

/*
 * Whether current, about to sleep, is inside a system call that changes
 * its own sandbox or credentials: seccomp filters, no_new_privs and the
 * other prctl() settings, capabilities, groups and ids, namespaces, the
 * keyrings (keyctl(), and add_key() and request_key(), which create the
 * thread, process or session keyring they name), the personality, a
 * Landlock domain; close_range(), whose CLOSE_RANGE_UNSHARE is an
 * unshare() of the file table; and exec, whose new image takes the signal
 * mask and other state of the task that runs it. Such a call may
 * sleep before it commits (seccomp() copies its filter from user memory,
 * setns() waits for a lock); handed off there, it would commit to this
 * task after it took a pool thread's identity, and return success to the
 * head, which never got what it asked for. So it sleeps in place
 * (THREADLET_FB_CALL). The number is the frame's: a syslet atom's while
 * it runs, in the ABI of the call that started it; -1, which no map
 * holds, at a fault taken in user space. The maps are syslet.c's, filled
 * at boot and read-only after it.
 */
static inline bool threadlet_call_pinned(void)
{
	unsigned long nr = syscall_get_nr(current, task_pt_regs(current));

#ifdef CONFIG_X86_64
	if (!in_ia32_syscall()) {
		nr &= ~(unsigned long)__X32_SYSCALL_BIT;
		return nr < THREADLET_NR_PINNED64 &&
		       test_bit(nr, threadlet_pinned_map64);
	}
#endif
#if defined(CONFIG_X86_32) || defined(CONFIG_IA32_EMULATION)
	return nr < IA32_NR_syscalls && test_bit(nr, threadlet_pinned_map32);
#else
	return false;
#endif
}

/* identity.c */
int threadlet_check_identity(struct task_struct *head,
			     struct task_struct *spare, int *rseq_cpu);
int threadlet_swap_identity(struct task_struct *head,
			    struct task_struct *spare);

#endif /* _KERNEL_ASYNC_INTERNAL_H */
