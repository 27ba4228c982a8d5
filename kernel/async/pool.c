// SPDX-License-Identifier: GPL-2.0
/*
 * Cache-miss threads and the hand-off.
 *
 * A cache-miss thread is an ordinary thread of the process (libthreadlet
 * creates it with pthread_create()) that parks itself in async_thread().
 * When a thread with THREADLET_ON set is about to sleep, schedule() calls
 * __threadlet_sleeping(), which claims a parked thread of the threadlet's
 * async head, swaps the two threads' user-visible identities (TID, group
 * leadership, signal state, robust list, rseq, TLS base, threadlet area)
 * and wakes it. The woken thread returns to user space at the head's resume
 * point, as the head; the sleeping task sleeps on and, when it wakes,
 * finishes the threadlet function as the cache-miss thread.
 *
 * The hook runs in the sleeping task's own context with its state already
 * set: it allocates nothing, takes only spinning locks and never sleeps.
 * Anything it cannot do safely makes it fall back to sleeping in place,
 * counted in the area and traced.
 */
#include <linux/ptrace.h>
#include <linux/sched/rt.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>

#include <trace/events/threadlet.h>

#include "internal.h"

/*
 * A user resume point or home frame of current's: in its address space
 * (below 4 GiB for a 32-bit process, whose frames are 32-bit). The limit
 * is the one exec set in the mm, TASK_SIZE without its thread-flag test.
 */
static bool threadlet_frame_ok(u64 ip, u64 sp)
{
	u64 limit = current->mm->task_size;

	return ip && sp && ip < limit && sp < limit;
}

/*
 * threadlet_handoff()'s answer when @tsk was woken on its way into
 * schedule() (a wake-up during the block plug's flush, say): it does not
 * sleep, so there is nothing to hand off and no fallback to count.
 */
#define THREADLET_NOT_SLEEPING	(-1)

/*
 * Why @tsk, about to sleep with a threadlet on, must sleep in place, or
 * THREADLET_NOT_SLEEPING.
 */
static int threadlet_check_head(struct task_struct *tsk, bool sleeping)
{
	unsigned int state = READ_ONCE(tsk->__state);

	if ((sleeping &&
	     (!(state & (TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE)) ||
	      (state & (__TASK_STOPPED | __TASK_TRACED)))) ||
	    (tsk->flags & PF_EXITING) || tsk->in_execve ||
	    __fatal_signal_pending(tsk) ||
	    (tsk->signal->flags & SIGNAL_GROUP_EXIT) ||
	    tsk->signal->group_exec_task)
		return sleeping && state == TASK_RUNNING ?
		       THREADLET_NOT_SLEEPING : THREADLET_FB_EXITING;
	if (tsk->ptrace || !list_empty(&tsk->ptraced))
		return THREADLET_FB_PTRACE;
	if (task_is_realtime(tsk))
		return THREADLET_FB_RT;
	if (!list_empty(&tsk->pi_state_list) || tsk->pi_blocked_on)
		return THREADLET_FB_PI;
#ifdef CONFIG_PREEMPT_NOTIFIERS
	/*
	 * KVM's loaded vCPU (vcpu_load() to vcpu_put()): the guest's MSRs are
	 * live, the host's FS and GS bases saved for the next VM exit. The
	 * hook runs before the notifier puts them back.
	 */
	if (!hlist_empty(&tsk->preempt_notifiers))
		return THREADLET_FB_TASK;
#endif
	/* Signal waits and parked threads: see threadlet_pin(). */
	if (tsk->threadlet_pin)
		return tsk->threadlet_pin;
	if (threadlet_call_pinned())
		return THREADLET_FB_CALL;
	if (test_tsk_restore_sigmask(tsk) ||
	    !sigisemptyset(&tsk->real_blocked))
		return THREADLET_FB_SIGNALS;
	return 0;
}

/*
 * The live async head at @uaddr that serves @reg's threadlets: the one
 * @reg cached, or else the registry's, which @reg then caches. A lookup in
 * the registry walks an xarray keyed by a user address, several levels
 * deep, on every hand-off; the cache is one compare. It holds a
 * reference, so a cached head stays valid memory after it is
 * unregistered, and its dead flag makes it miss. Only the task that
 * carries @reg uses the cache. Caller holds rcu_read_lock().
 */
static struct async_head *threadlet_reg_head(struct task_struct *tsk,
					     struct threadlet_reg *reg,
					     u64 uaddr)
{
	struct async_head *head = reg->head;

	if (likely(head && head->uaddr == uaddr && !READ_ONCE(head->dead)))
		return head;
	head = async_head_lookup_rcu(tsk->mm, uaddr);
	if (!head || head->tgid != task_tgid(tsk) ||
	    !refcount_inc_not_zero(&head->refs))
		return NULL;
	if (reg->head)
		async_head_put(reg->head);
	reg->head = head;
	return head;
}

/* The first thread parked on @head other than @tsk and @skip, or NULL. */
static struct async_parker *async_first_parked(struct async_head *head,
					       struct task_struct *tsk,
					       struct task_struct *skip)
{
	struct async_parker *p;

	hlist_for_each_entry(p, &head->parked, node)
		if (p->task != tsk && p->task != skip)
			return p;
	return NULL;
}

/*
 * Takes the first thread parked on @head other than @tsk and @skip (a
 * thread just refused); NULL if there is none. A parked thread never hands
 * itself off (it is pinned, see async_park()), so @tsk is only ever
 * skipped defensively.
 *
 * An elastic pool (low_watermark) left with fewer parked threads than
 * that sends one more of them home to start threads (ASYNC_GROW): it is
 * taken off the list here and returned in @grower for the caller to wake
 * (under rcu_read_lock(), as it may go as soon as it sees its state).
 * With none left, the next thread that comes to park goes instead.
 */
static struct async_parker *async_claim(struct async_head *head,
					struct task_struct *tsk,
					struct task_struct *skip,
					struct task_struct **grower)
{
	struct async_parker *p = NULL, *g;

	raw_spin_lock(&head->lock);
	if (head->dead)
		goto out;
	p = async_first_parked(head, tsk, skip);
	if (p) {
		hlist_del_init(&p->node);
		head->nr_parked--;
		WRITE_ONCE(p->state, ASYNC_CLAIMED);
	}
	if (head->nr_parked >= head->low_watermark || head->grow_busy)
		goto out;
	g = async_first_parked(head, tsk, NULL);
	if (!g) {
		head->grow_pending = true;
		goto out;
	}
	hlist_del_init(&g->node);
	head->nr_parked--;
	head->grow_busy = true;
	*grower = g->task;
	/* Pairs with async_park()'s acquire: the parker may go. */
	smp_store_release(&g->state, ASYNC_GROW_HOME);
out:
	raw_spin_unlock(&head->lock);
	return p;
}

/*
 * Gives a claimed thread back, or lets it go if its head died meanwhile.
 * It goes to the bottom of the stack: it was refused, and on top it would
 * be the next claim's first choice again, so that one thread that differs
 * from the heads (traced, another nice or affinity) would keep every
 * hand-off from the threads parked below it. Finding the bottom walks the
 * stack (at most max_threads), on this path only: the claims and parks of
 * the common path stay one hlist operation each.
 */
static void async_unclaim(struct async_head *head, struct async_parker *p,
			  int state)
{
	struct hlist_node *last = NULL, *n;

	raw_spin_lock(&head->lock);
	if (state == ASYNC_PARKED && !head->dead) {
		hlist_for_each(n, &head->parked)
			last = n;
		if (last)
			hlist_add_behind(&p->node, last);
		else
			hlist_add_head(&p->node, &head->parked);
		head->nr_parked++;
		WRITE_ONCE(p->state, ASYNC_PARKED);
	} else {
		/*
		 * Once the state is out, @p (on the parker's stack) may be
		 * gone: the task is read first. Its task_struct outlives an
		 * exit by an RCU grace period, and our caller holds
		 * rcu_read_lock().
		 */
		struct task_struct *task = p->task;

		/* Pairs with async_park()'s acquire: the parker may go. */
		smp_store_release(&p->state, state == ASYNC_PARKED ?
				  ASYNC_SHUTDOWN : state);
		wake_up_process(task);
	}
	raw_spin_unlock(&head->lock);
}

/*
 * Hands @tsk's head context to a parked thread of the threadlet's head.
 * Returns 0 on success or the THREADLET_FB_* reason for sleeping in place
 * (or THREADLET_NOT_SLEEPING).
 * @sleeping: called from schedule(), so @tsk must really be going to sleep;
 * otherwise from async_exec() for SYSLET_ASYNC, in process context.
 */
static int threadlet_handoff(struct task_struct *tsk, struct threadlet_reg *reg,
			     bool sleeping)
{
	struct threadlet_area *a = reg->karea;
	u64 ip = READ_ONCE(a->head_ip), sp = READ_ONCE(a->head_sp);
	struct task_struct *spare, *grower = NULL;
	struct async_head *head;
	struct async_parker *p;
	bool direct;
	int ret, tries;

	ret = threadlet_check_head(tsk, sleeping);
	if (ret)
		return ret;
	if (!reg->syslet && !threadlet_frame_ok(ip, sp))
		return THREADLET_FB_BAD_FRAME;

	rcu_read_lock();
	head = threadlet_reg_head(tsk, reg, READ_ONCE(a->ahu));
	if (!head) {
		rcu_read_unlock();
		return THREADLET_FB_NO_HEAD;
	}
	/*
	 * A spare the checks refuse is given back and one other is tried:
	 * the pool's threads may differ among themselves (one traced, one
	 * that changed its nice), and two checks bound the hook's work.
	 */
	for (tries = 0, spare = NULL;; tries++) {
		p = async_claim(head, tsk, spare, &grower);
		if (grower)
			wake_up_process(grower);
		grower = NULL;
		if (!p) {
			rcu_read_unlock();
			return tries ? ret : THREADLET_FB_NO_SPARE;
		}
		spare = p->task;
		ret = arch_threadlet_check(tsk, spare);
		if (!ret)
			ret = threadlet_check_identity(tsk, spare, &p->rseq_cpu);
		if (!ret)
			break;
		async_unclaim(head, p, ASYNC_PARKED);
		if (tries) {
			rcu_read_unlock();
			return ret;
		}
	}
	/*
	 * Disarm the head's area before it moves to @spare. The spare may
	 * still be on its way into schedule() on another CPU, and from the
	 * swap on, its own call of this hook finds this area: armed, it
	 * would hand itself off as a second head.
	 */
	WRITE_ONCE(a->flags, a->flags & ~THREADLET_ON);
	/*
	 * Orders that store before the swap's store of spare->threadlet;
	 * the hook reads the area through that pointer (a dependency).
	 */
	smp_wmb();
	ret = threadlet_swap_identity(tsk, spare);
	if (ret) {
		/* Nothing moved: the threadlet goes on in place, still on. */
		WRITE_ONCE(a->flags, a->flags | THREADLET_ON);
		async_unclaim(head, p, ret == THREADLET_FB_EXITING ?
			      ASYNC_ABORTED : ASYNC_PARKED);
		rcu_read_unlock();
		return ret;
	}
	/*
	 * This task now carries the spare's identity, which was a member of
	 * the pool: when it is done it parks again, or goes home if the
	 * pool filled up meanwhile (async_park()).
	 */
	tsk->threadlet->cachemiss = true;
	/*
	 * A syslet chain that went async runs to its end in this task and
	 * never hands off again: async_exec() holds @reg, and tells whether
	 * it is still the head by comparing it with tsk->threadlet, which
	 * only this task's own hand-off could change. async_exec() unpins.
	 */
	if (reg->syslet)
		tsk->threadlet_pin = THREADLET_FB_CALL;

	/* The head's area moved to @spare, off, as it was handed off. */
	WRITE_ONCE(a->nr_handoffs, a->nr_handoffs + 1);
	p->head_ip = ip;
	p->head_sp = sp;
	/*
	 * A syslet head resumes at the async_exec() frame, which the spare
	 * takes whole. It is written straight into the spare's own frame:
	 * the spare, claimed, sleeps or spins in async_park() and never
	 * returns to the frame it parked with once it is handed off, and no
	 * tracer reads it (threadlet_check_identity() refused a traced one).
	 */
	p->full_regs = reg->syslet;
	if (p->full_regs)
		*task_pt_regs(spare) = *reg->frame;	/* set before syslet */
	arch_threadlet_swap_tls(tsk, spare, &p->tls);
	trace_threadlet_handoff(tsk, spare);
	/*
	 * A spare that last slept on this CPU is enqueued by __schedule()
	 * itself, under its runqueue lock (threadlet_next_lock()). The
	 * reference is taken while the spare still waits for its claimer,
	 * so it cannot have exited; __schedule() or schedule() drops it.
	 */
	direct = sleeping && !tsk->threadlet_next &&
		 task_cpu(spare) == raw_smp_processor_id();
	if (direct) {
		get_task_struct(spare);
		tsk->threadlet_next = spare;
	}
	/*
	 * Publishes the swapped identity, the frame and the TLS bases to the
	 * spare, which reads them after its acquire in async_park(). From
	 * then on the spare may run (it can be awake, spinning on a signal),
	 * return to user space and exit: only rcu_read_lock() keeps its
	 * task_struct for the wake-up (the last reference of an exited task
	 * is dropped after a grace period).
	 */
	smp_store_release(&p->state, ASYNC_HANDOFF);
	/*
	 * In schedule(), the spare is this task's successor on this CPU;
	 * a syslet that goes async now keeps running, so not then.
	 */
	if (sleeping && !direct)
		wake_up_process_sync(spare);
	else if (!sleeping)
		wake_up_process(spare);
	rcu_read_unlock();
	return 0;
}

/*
 * 0: handed off; a THREADLET_FB_* reason: fell back (counted);
 * THREADLET_NOT_SLEEPING: woken already, neither. @flags: the area's
 * flags, THREADLET_ON set, read by the caller through @reg, the pointer it
 * read once: a dependency that pairs with threadlet_handoff()'s smp_wmb().
 */
static int threadlet_try_handoff(struct task_struct *tsk,
				 struct threadlet_reg *reg, u32 flags,
				 bool sleeping)
{
	struct threadlet_area *a = reg->karea;
	int reason;

	/* A signal handler runs on top of the threadlet (area.c). */
	if (flags & THREADLET_SIGNAL)
		reason = THREADLET_FB_SIGNALS;
	else
		reason = threadlet_handoff(tsk, reg, sleeping);
	if (reason <= 0)
		return reason;
	/* @a is still this task's area: only a successful hand-off moves it. */
	WRITE_ONCE(a->nr_fallbacks, a->nr_fallbacks + 1);
	WRITE_ONCE(a->last_fallback, reason);
	trace_threadlet_fallback(tsk, reason);
	return reason;
}

/*
 * Every sleep of a registered task that is not parked comes here, and
 * most (a cache-miss thread's, a head's outside a threadlet) are not
 * armed: the flag is tested before threadlet_try_handoff() and the
 * hand-off inlined in it save their registers.
 */
void __threadlet_sleeping(struct task_struct *tsk, struct threadlet_reg *reg)
{
	u32 flags = READ_ONCE(reg->karea->flags);

	if (flags & THREADLET_ON)
		threadlet_try_handoff(tsk, reg, flags, true);
}

/*
 * Hands the head off now, without sleeping (SYSLET_ASYNC). Returns 0 if it
 * did, so that the caller goes on as a cache-miss thread.
 */
int threadlet_handoff_now(struct task_struct *tsk, struct threadlet_reg *reg)
{
	u32 flags = READ_ONCE(reg->karea->flags);

	if (!(flags & THREADLET_ON))
		return -EAGAIN;
	return threadlet_try_handoff(tsk, reg, flags, false) == 0 ? 0 : -EAGAIN;
}

/*
 * Sets up the return to user space at this identity's home frame. Whoever
 * calls it must not return to the frame it was called from: that stack may
 * be gone, or be the head's. A home frame that user space broke since
 * async_thread() checked it leaves the thread no frame to return to: the
 * registers are still those of the call it parked from, for a syslet
 * completer the head's async_exec() frame, which the head already returned
 * from in another task. A handler that returned would run that frame
 * twice, so the SIGSEGV is fatal, as when a signal frame cannot be built.
 */
long async_go_home(long ret)
{
	struct threadlet_area *a = current->threadlet->karea;
	u64 ip = READ_ONCE(a->home_ip), sp = READ_ONCE(a->home_sp);
	struct pt_regs *regs = task_pt_regs(current);

	if (threadlet_frame_ok(ip, sp))
		arch_threadlet_set_frame(regs, ip, sp);
	else
		force_fatal_sig(SIGSEGV);
	return ret;
}

/*
 * An identity sent home with ASYNC_GROW holds @head's grow_busy until it
 * parks again or ends (async_grow_done()), whichever head it parks on: a
 * grower that parks elsewhere, or exits, must not stop @head from ever
 * growing again. Only the task that has the identity touches grow_head;
 * the head's lock orders grow_busy.
 */
static void async_grow_start(struct threadlet_reg *reg, struct async_head *head)
{
	refcount_inc(&head->refs);
	reg->grow_head = head;
}

void async_grow_done(struct threadlet_reg *reg)
{
	struct async_head *head = reg->grow_head;

	if (!head)
		return;
	reg->grow_head = NULL;
	raw_spin_lock(&head->lock);
	head->grow_busy = false;
	raw_spin_unlock(&head->lock);
	async_head_put(head);
}

/* A successor from async_post() that this thread does not sleep for. */
static void async_wake_next(struct task_struct *next)
{
	if (next) {
		wake_up_process(next);
		put_task_struct(next);
	}
}

/*
 * Parks the caller on @head until a sleeping threadlet claims it, @head is
 * unregistered, a signal arrives, it stays unclaimed for the head's idle
 * time, or an elastic pool needs it to start threads (ASYNC_GROW, also
 * instead of parking: see async_claim()). The parker lives on this stack, so
 * the caller must not leave before whoever took it off the list is done
 * with it: that is what ASYNC_CLAIMED waits for.
 *
 * No more than max_threads park. A new member gets -EBUSY at once, unless
 * it has no frame to return to (@no_frame: it posted an event, and the
 * stack it came from may be gone; or it runs a syslet chain the head
 * returned from): then it goes home with -EBUSY, to end. So does a thread
 * that a hand-off left with a pool member's identity (cachemiss), which
 * cannot go back to the frame it came from: it finds the pool full only
 * when threads started since (an elastic pool that grew while it was out)
 * took its place.
 *
 * @next, a task async_post() did not wake (async_wake()), runs in this
 * thread's place when it first sleeps here, without a wake-up of its own
 * (threadlet_next, see __schedule()); it is woken the usual way if this
 * thread leaves without sleeping. The reference to it is consumed.
 */
long async_park(struct async_head *head, struct task_struct *next, bool no_frame)
{
	struct async_parker p = {
		.task = current, .state = ASYNC_PARKED, .rseq_cpu = -1,
	};
	struct threadlet_reg *reg = current->threadlet;
	long left = head->idle ?: MAX_SCHEDULE_TIMEOUT;
	bool member = reg->cachemiss;
	int state, pin;

	/* What a claimer reads from this thread, saved before it can claim. */
	arch_threadlet_park();
	async_grow_done(reg);
	raw_spin_lock(&head->lock);
	if (head->dead || head->nr_parked >= head->max_threads) {
		raw_spin_unlock(&head->lock);
		async_wake_next(next);
		if (head->dead)
			return async_go_home(0);
		return member || no_frame ? async_go_home(-EBUSY) : -EBUSY;
	}
	if (head->grow_pending && !head->grow_busy) {
		/* A hand-off found the pool short and no one to send. */
		head->grow_pending = false;
		head->grow_busy = true;
		raw_spin_unlock(&head->lock);
		async_wake_next(next);
		async_grow_start(reg, head);
		return async_go_home(ASYNC_GROW);
	}
	reg->cachemiss = false;
	hlist_add_head(&p.node, &head->parked);
	head->nr_parked++;
	raw_spin_unlock(&head->lock);
	trace_threadlet_park(current, head->nr_parked);

	/* This sleep is the pool's, whatever another thread writes in the area. */
	pin = threadlet_pin(THREADLET_FB_PARKED);

	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		/* Pairs with the release of whoever took us off the list. */
		state = smp_load_acquire(&p.state);
		if (state != ASYNC_PARKED && state != ASYNC_CLAIMED)
			break;
		if (state == ASYNC_PARKED && (signal_pending(current) || !left)) {
			raw_spin_lock(&head->lock);
			if (READ_ONCE(p.state) == ASYNC_PARKED) {
				hlist_del_init(&p.node);
				head->nr_parked--;
				p.state = left ? ASYNC_ABORTED : ASYNC_IDLE;
			}
			raw_spin_unlock(&head->lock);
			continue;
		}
		/* Claimed: the claimer holds only spinlocks, so wait here. */
		if (state == ASYNC_CLAIMED && (signal_pending(current) || !left)) {
			cpu_relax();
		} else {
			/* schedule() consumes it, sleeping or not. */
			if (next) {
				current->threadlet_next = next;
				next = NULL;
			}
			left = schedule_timeout(left);
		}
	}
	__set_current_state(TASK_RUNNING);
	async_wake_next(next);
	threadlet_unpin(pin);

	switch (state) {
	case ASYNC_HANDOFF:
		/*
		 * This thread is the head now: its signal state came with it.
		 * The swap set TIF_SIGPENDING, under siglock, if that state
		 * has a signal to take, and every signal since sets it too; a
		 * flag that is set may be this thread's own from before (a
		 * signal it spun on while claimed), which only a recalc under
		 * siglock can clear.
		 */
		if (test_thread_flag(TIF_SIGPENDING)) {
			spin_lock_irq(&current->sighand->siglock);
			recalc_sigpending();
			spin_unlock_irq(&current->sighand->siglock);
		}
		/*
		 * The head's rseq area came with it, outside any critical
		 * section (threadlet_check_identity()). If it names this CPU
		 * it is what the return-to-user update would write; from here
		 * on a preemption or migration sets that update itself
		 * (rseq_preempt(), rseq_migrate()), as for any task.
		 */
		if (p.rseq_cpu != raw_smp_processor_id())
			rseq_set_notify_resume(current);
		if (p.full_regs) {
			/*
			 * A syslet head: async_exec() returns 0 (NULL) from
			 * the frame the claimer wrote into this task's own.
			 */
			current->threadlet->syslet = false;
			current->threadlet->frame = NULL;
			arch_threadlet_resume(NULL, 0, 0, &p.tls);
		} else {
			arch_threadlet_resume(task_pt_regs(current), p.head_ip,
					      p.head_sp, &p.tls);
		}
		trace_threadlet_resume(current);
		return 0;
	case ASYNC_SHUTDOWN:
		return async_go_home(0);
	case ASYNC_GROW_HOME:
		async_grow_start(reg, head);
		return async_go_home(ASYNC_GROW);
	case ASYNC_IDLE:
		return async_go_home(-ETIMEDOUT);
	default:
		return async_go_home(-EINTR);
	}
}

/*
 * async_thread - post @event (if not NULL) into @ahu's completion ring,
 * then park the caller as a cache-miss thread of @ahu.
 *
 * Returns 0 at the head's resume point when a sleeping threadlet hands its
 * head to this thread. Returns at the caller's home frame (the area's
 * home_ip/home_sp) with 0 when @ahu is unregistered and with -EINTR when a
 * signal ends the wait: once an event is posted, the stack the call came
 * from may already be gone. A signal that comes while the ring is full
 * (before anything is posted) restarts the call after its handler. Errors
 * before parking return normally.
 */
SYSCALL_DEFINE2(async_thread, void __user *, event,
		struct async_head_user __user *, ahu)
{
	struct threadlet_reg *reg = current->threadlet;
	struct task_struct *next = NULL;
	struct async_head *head;
	struct threadlet_area *a;
	long ret;
	int pin;

	if (!reg)
		return -EINVAL;
	a = reg->karea;
	if (READ_ONCE(a->flags) & THREADLET_ON)
		return -EBUSY;
	if (!threadlet_frame_ok(READ_ONCE(a->home_ip), READ_ONCE(a->home_sp)))
		return -EINVAL;
	/*
	 * The main thread keeps its TID == PID identity: a hand-off to a
	 * parked leader would give that TID to a task that is not the leader.
	 */
	if (thread_group_leader(current))
		return -EINVAL;
	/*
	 * Up to the park, the waits for ring space keep this identity on
	 * this task, whatever another thread writes in the area meanwhile:
	 * the held completion is @reg's and the checks above were of it.
	 */
	pin = threadlet_pin(THREADLET_FB_CALL);
	/* Nothing happened yet: after the handler, the call starts again. */
	ret = -ERESTARTNOINTR;
	if (async_post_held(reg, true))
		goto unpin;
	ret = -EINVAL;
	head = async_head_get(ahu);
	if (!head)
		goto unpin;
	if (event) {
		ret = async_post(head, (unsigned long)event, true, &next);
		if (ret == -EINTR)
			ret = -ERESTARTNOINTR;
		if (ret)
			goto out;
	}
	threadlet_unpin(pin);
	ret = async_park(head, next, !!event);
	async_head_put(head);
	return ret;
out:
	async_head_put(head);
unpin:
	threadlet_unpin(pin);
	return ret;
}
