// SPDX-License-Identifier: GPL-2.0
/*
 * Async heads: the completion ring and the pool that a struct
 * async_head_user names. The registry is mm->threadlet->heads, an xarray
 * keyed by the user address of the async_head_user (>> 3): lookups are
 * RCU-safe, so the scheduler hook can find a head without a lock.
 *
 * Lifetime: the xarray holds one reference, every syscall or parked thread
 * using the head holds one more. Unregistering (or the mm going away)
 * erases the entry, marks the head dead and sends its parked threads home;
 * the memory is freed after an RCU grace period once the last user leaves.
 */
#include <linux/compat.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include <trace/events/threadlet.h>

#include "internal.h"

/* Head ids: never 0, never reused (2^64 registrations do not happen). */
static atomic64_t async_head_ids = ATOMIC64_INIT(0);

static unsigned long async_head_key(u64 uaddr)
{
	return uaddr >> 3;
}

void async_head_put(struct async_head *head)
{
	if (refcount_dec_and_test(&head->refs)) {
		put_pid(head->tgid);
		kfree_rcu(head, rcu);
	}
}

/* Caller holds rcu_read_lock(); returns NULL or a head of this mm. */
struct async_head *async_head_lookup_rcu(struct mm_struct *mm, u64 uaddr)
{
	struct threadlet_mm *tm = READ_ONCE(mm->threadlet);

	/* A 32-bit kernel's keys hold no address above its own. */
	if (!tm || !IS_ALIGNED(uaddr, 8) || !threadlet_u64_ptr(uaddr))
		return NULL;
	return xa_load(&tm->heads, async_head_key(uaddr));
}

/*
 * The registry of @mm, allocated on first use. It lives until the mm goes,
 * so a pointer once seen stays valid.
 */
static struct threadlet_mm *threadlet_mm_get(struct mm_struct *mm)
{
	struct threadlet_mm *tm = READ_ONCE(mm->threadlet), *old;

	if (tm)
		return tm;
	tm = kzalloc(sizeof(*tm), GFP_KERNEL_ACCOUNT);
	if (!tm)
		return NULL;
	xa_init(&tm->heads);
	mutex_init(&tm->lock);
	old = cmpxchg(&mm->threadlet, NULL, tm);
	if (old) {
		kfree(tm);
		return old;
	}
	return tm;
}

/*
 * Returns a referenced head that @ahu names and that the calling thread
 * group registered, or NULL.
 *
 * The head that the caller's threadlet_reg caches (reg->head, referenced,
 * see threadlet_reg_head()) answers without the registry's xarray walk if
 * it is the one at @ahu and not dead: a dead head is out of the registry,
 * so the cache can only miss where the walk would. A miss caches what the
 * walk found. Only the task that carries the reg touches the cache, and a
 * hand-off that moves the reg away from this task happens only inside
 * this task's own sleeps, never during this function.
 */
/* The head this task's reg caches, if it is the live one at @ahu. */
static __always_inline struct async_head *
async_head_cached(struct async_head_user __user *ahu)
{
	struct threadlet_reg *reg = current->threadlet;
	struct async_head *head = reg ? reg->head : NULL;

	if (likely(head && head->uaddr == (unsigned long)ahu &&
		   !READ_ONCE(head->dead)))
		return head;
	return NULL;
}

struct async_head *async_head_get(struct async_head_user __user *ahu)
{
	struct threadlet_reg *reg = current->threadlet;
	struct async_head *head = async_head_cached(ahu);

	if (head) {
		/* The reg's reference keeps it above zero. */
		refcount_inc(&head->refs);
		return head;
	}
	rcu_read_lock();
	head = async_head_lookup_rcu(current->mm, (unsigned long)ahu);
	if (head && (head->tgid != task_tgid(current) ||
		     !refcount_inc_not_zero(&head->refs)))
		head = NULL;
	rcu_read_unlock();
	if (head && reg) {
		refcount_inc(&head->refs);
		if (reg->head)
			async_head_put(reg->head);
		reg->head = head;
	}
	return head;
}

/*
 * The id of the live async head of this process at @ahu, 0 if there is
 * none, taking no reference: for async_exec(), which refuses an unknown
 * one up front and, holding none across its chain (see there), posts at
 * its end only into the head with this id, not one registered at the same
 * address since. The cached head is one compare, as in async_head_get();
 * a miss looks it up, and caches it, through that.
 */
u64 async_head_id(struct async_head_user __user *ahu)
{
	struct async_head *head = async_head_cached(ahu);
	u64 id;

	if (head)
		return head->id;
	head = async_head_get(ahu);
	if (!head)
		return 0;
	id = head->id;
	async_head_put(head);
	return id;
}

/*
 * Marks @head dead and sends every parked thread home. Once this returns,
 * no completion is written into the ring and no flag into the
 * async_head_user: async_post() tests dead under post_lock, and a post
 * under way when dead was set has finished. The application may free both
 * as soon as ASYNC_UNREGISTER returns. A post can hold post_lock for as
 * long as a fault on the ring takes (a stalled FUSE or userfaultfd page):
 * SIGKILL ends that wait, and with it the process, which then frees
 * nothing it could still see written.
 */
static void async_head_kill(struct async_head *head)
{
	struct async_parker *p;
	struct hlist_node *tmp;

	raw_spin_lock(&head->lock);
	WRITE_ONCE(head->dead, true);
	hlist_for_each_entry_safe(p, tmp, &head->parked, node) {
		/*
		 * @p lives on the parker's stack, which it may leave as soon
		 * as it sees the new state: read the task first. head->lock
		 * is a raw spinlock (no preemption, so an RCU read side):
		 * the task_struct outlives the parker's exit that long.
		 */
		struct task_struct *task = p->task;

		hlist_del_init(&p->node);
		head->nr_parked--;
		/* Pairs with async_park()'s acquire: the parker may go. */
		smp_store_release(&p->state, ASYNC_SHUTDOWN);
		wake_up_process(task);
	}
	raw_spin_unlock(&head->lock);
	/* Lets a poster waiting for ring space see dead and leave. */
	wake_up_all(&head->wait);
	if (!mutex_lock_killable(&head->post_lock))
		mutex_unlock(&head->post_lock);
}

static int async_unregister(struct async_head_user __user *ahu)
{
	struct threadlet_mm *tm = READ_ONCE(current->mm->threadlet);
	unsigned long key = async_head_key((unsigned long)ahu);
	struct async_head *head;

	if (!tm)
		return -EINVAL;
	if (mutex_lock_killable(&tm->lock))
		return -EINTR;
	head = xa_load(&tm->heads, key);
	if (!head || head->tgid != task_tgid(current)) {
		mutex_unlock(&tm->lock);
		return -EINVAL;
	}
	/*
	 * Dead, and the last post done, before the address is free: a head
	 * registered at @ahu again zeroes kernel_ring_idx, which a post to
	 * this one that passed its dead test would otherwise overwrite.
	 */
	async_head_kill(head);
	xa_erase(&tm->heads, key);
	tm->nr_heads--;
	mutex_unlock(&tm->lock);
	async_head_put(head);
	return 0;
}

static struct async_head *async_head_alloc(struct async_head_user *k,
					   unsigned long uaddr)
{
	u64 entries = k->ring_size_bytes / sizeof(u64);
	struct async_head *head;

	/* Reserved for later meanings: zero, and only known flags. */
	if (k->__reserved || (k->flags & ~ASYNC_HEAD_RING_WAITERS))
		return ERR_PTR(-EINVAL);
	if (k->ring_size_bytes % sizeof(u64) || !entries ||
	    entries > ASYNC_RING_MAX_ENTRIES || !is_power_of_2(entries))
		return ERR_PTR(-EINVAL);
	if (!k->max_cachemiss_threads ||
	    k->max_cachemiss_threads > ASYNC_MAX_CACHEMISS)
		return ERR_PTR(-EINVAL);
	if (!IS_ALIGNED(k->completion_ring, sizeof(u64)))
		return ERR_PTR(-EINVAL);
	if (k->low_watermark > k->max_cachemiss_threads ||
	    k->idle_timeout_ms > ASYNC_MAX_IDLE_MS)
		return ERR_PTR(-EINVAL);
	if (!threadlet_u64_ptr(k->completion_ring) ||
	    !access_ok(u64_to_user_ptr(k->completion_ring), k->ring_size_bytes))
		return ERR_PTR(-EFAULT);

	head = kzalloc(sizeof(*head), GFP_KERNEL_ACCOUNT);
	if (!head)
		return ERR_PTR(-ENOMEM);
	refcount_set(&head->refs, 1);
	head->uaddr = uaddr;
	head->id = atomic64_inc_return(&async_head_ids);
	head->tgid = get_pid(task_tgid(current));
	head->ring = u64_to_user_ptr(k->completion_ring);
	head->ring_mask = entries - 1;
	head->max_threads = k->max_cachemiss_threads;
	head->low_watermark = k->low_watermark;
	head->idle = msecs_to_jiffies(k->idle_timeout_ms);
	raw_spin_lock_init(&head->lock);
	INIT_HLIST_HEAD(&head->parked);
	mutex_init(&head->post_lock);
	init_waitqueue_head(&head->wait);
	return head;
}

static long async_query_parked(struct async_head_user __user *ahu)
{
	struct async_head *head = async_head_get(ahu);
	long ret;

	if (!head)
		return -EINVAL;
	ret = READ_ONCE(head->nr_parked);
	async_head_put(head);
	return ret;
}

/*
 * async_register - register @ahu as an async head: its completion ring and
 * its pool of cache-miss threads. With ASYNC_UNREGISTER, end it: parked
 * threads return home, later async_thread() calls on it fail with -EINVAL.
 * With ASYNC_QUERY_PARKED, return the number of parked threads.
 */
SYSCALL_DEFINE3(async_register, struct async_head_user __user *, ahu,
		u32, len, u32, flags)
{
	struct async_head_user k;
	struct async_head *head;
	struct threadlet_mm *tm;
	int ret;

	if (flags & ~(ASYNC_UNREGISTER | ASYNC_QUERY_PARKED) ||
	    hweight32(flags) > 1)
		return -EINVAL;
	if (!IS_ALIGNED((unsigned long)ahu, 8))
		return -EINVAL;
	if (flags & ASYNC_UNREGISTER)
		return async_unregister(ahu);
	if (flags & ASYNC_QUERY_PARKED)
		return async_query_parked(ahu);
	if (len != sizeof(k))
		return -EINVAL;
	if (copy_from_user(&k, ahu, sizeof(k)))
		return -EFAULT;

	head = async_head_alloc(&k, (unsigned long)ahu);
	if (IS_ERR(head))
		return PTR_ERR(head);
	tm = threadlet_mm_get(current->mm);
	if (!tm) {
		ret = -ENOMEM;
		goto fail;
	}
	/*
	 * Under tm->lock, so that nothing touches the user structure of a
	 * head that is already registered: -EBUSY leaves it as it was. The
	 * stores below may wait for a fault that SIGKILL alone ends.
	 */
	if (mutex_lock_killable(&tm->lock)) {
		ret = -EINTR;
		goto fail;
	}
	if (xa_load(&tm->heads, async_head_key((unsigned long)ahu))) {
		ret = -EBUSY;
	} else if (tm->nr_heads >= ASYNC_MAX_HEADS) {
		ret = -EMFILE;
	} else if (put_user(0, &ahu->kernel_ring_idx) ||
		   put_user(0, &ahu->flags)) {
		ret = -EFAULT;
	} else {
		ret = xa_insert(&tm->heads, async_head_key((unsigned long)ahu),
				head, GFP_KERNEL_ACCOUNT);
		if (!ret)
			tm->nr_heads++;
	}
	mutex_unlock(&tm->lock);
	if (ret)
		goto fail;
	return 0;
fail:
	async_head_put(head);
	return ret;
}

/* async_wait() ran since @gen was read, or @head was unregistered. */
static bool async_space_news(struct async_head *head, unsigned long gen)
{
	return READ_ONCE(head->space_gen) != gen || READ_ONCE(head->dead);
}

/*
 * Waits until the ring slot for the next completion is empty. @wait: a
 * signal ends the wait (-EINTR); else a full slot is -EAGAIN at once.
 *
 * ASYNC_HEAD_RING_WAITERS asks the consumer to call async_wait() after a
 * pop. Only the holder of post_lock ever waits here, so the flag is its
 * own: it clears it once its slot is free, and a consumer that pops from
 * a ring that has space makes no system call for it. A consumer that saw
 * the flag just before makes one call for nothing.
 *
 * No lost wake-up: the flag is set, then (full barrier) the slot read
 * again, with space_gen read before both. A consumer clears the slot,
 * then (full barrier: libthreadlet's exchange) reads the flag. Either
 * this read sees the slot clear, or that one sees the flag, and its
 * async_wait() bumps space_gen past the value read here.
 */
static int async_wait_for_slot(struct async_head *head, u64 __user *slot,
			       bool wait)
{
	struct async_head_user __user *ahu = (void __user *)head->uaddr;
	bool flagged = false;
	unsigned long gen;
	u64 cur;

	for (;;) {
		if (READ_ONCE(head->dead))
			return -EINVAL;
		gen = READ_ONCE(head->space_gen);
		smp_rmb();	/* space_gen before the slot */
		if (get_user(cur, slot))
			return -EFAULT;
		if (cur && wait && !flagged) {
			if (put_user(ASYNC_HEAD_RING_WAITERS, &ahu->flags))
				return -EFAULT;
			flagged = true;
			smp_mb();	/* the flag before the slot's second read */
			if (get_user(cur, slot))
				return -EFAULT;
		}
		if (!cur)
			return flagged && put_user(0, &ahu->flags) ? -EFAULT : 0;
		if (!wait)
			return -EAGAIN;
		/*
		 * async_wait() bumps space_gen; the timeout covers a consumer
		 * that frees slots without calling it.
		 */
		if (wait_event_interruptible_timeout(head->wait,
						     async_space_news(head, gen),
						     HZ / 10) < 0)
			return -EINTR;
	}
}

/*
 * An async_wait() sleeper on head->wait: the completions it waits for, so
 * that a post wakes it only once they are published.
 */
struct async_waiter {
	struct wait_queue_entry wq;
	struct async_head *head;
	unsigned long user_ring_idx;
	unsigned long min_wait_events;
};

/*
 * @min completions are published past @idx, or @head is gone. Signed: @idx
 * may be an index that is published but not yet counted in published.
 */
static bool async_wait_done(struct async_head *head, unsigned long idx,
			    unsigned long min)
{
	return (long)(READ_ONCE(head->published) - idx) >= (long)min ||
	       READ_ONCE(head->dead);
}

/* The sleeper @wq, an async_wait() entry, has its completions. */
static bool async_waiter_done(struct wait_queue_entry *wq)
{
	struct async_waiter *w = container_of(wq, struct async_waiter, wq);

	return async_wait_done(w->head, w->user_ring_idx, w->min_wait_events);
}

/*
 * Wake function of an async_wait() sleeper, called under head->wait.lock
 * by whoever wakes the queue: after a post (which publishes first, so it
 * sees at least its own completion), at unregister (dead), and by
 * async_wait()'s release of completers waiting for space. A sleeper that
 * waits for more than has been published stays asleep: without this, a
 * head waiting for eight completions was woken by each post, to find the
 * count short and sleep again, two context switches for nothing.
 */
static int async_waiter_wake(struct wait_queue_entry *wq, unsigned int mode,
			     int sync, void *key)
{
	if (!async_waiter_done(wq))
		return 0;
	return autoremove_wake_function(wq, mode, sync, key);
}

/*
 * Wakes whoever waits on @head after a post. A completer that parks right
 * after (@next not NULL) takes a lone async_wait() sleeper that last ran
 * on this CPU and whose completions are all published now, as its
 * successor instead: *@next is that task, referenced and off the queue,
 * for async_park() to hand the CPU to as it sleeps (threadlet_next, see
 * __schedule()). Taking the entry off is what autoremove_wake_function()
 * does when it wakes; the task is woken later, when the completer sleeps
 * or by schedule() if it does not, and rechecks its condition then as
 * after any wake-up.
 */
static void async_wake(struct async_head *head, struct task_struct **next)
{
	struct wait_queue_entry *w;
	unsigned long flags;

	if (next) {
		spin_lock_irqsave(&head->wait.lock, flags);
		w = list_first_entry_or_null(&head->wait.head,
					     struct wait_queue_entry, entry);
		if (w && list_is_singular(&head->wait.head) &&
		    w->func == async_waiter_wake && async_waiter_done(w) &&
		    task_cpu(w->private) == raw_smp_processor_id()) {
			*next = w->private;
			get_task_struct(*next);
			list_del_init_careful(&w->entry);
		}
		spin_unlock_irqrestore(&head->wait.lock, flags);
		if (*next)
			return;
	}
	/* The completer parks next: a waiting head may run on this CPU. */
	__wake_up_sync(&head->wait, TASK_NORMAL);
}

/*
 * async_post - append @event to @head's completion ring. Runs in process
 * context in the completing thread, in @head's mm; may fault. post_lock
 * orders completers, so each event takes exactly one slot. @wait: wait for
 * a free slot, until a signal ends the wait with -EINTR and nothing posted
 * (a full ring must not keep a thread from its signals: glibc's setuid()
 * waits for every thread to take one). Without @wait, as in an exiting
 * thread, which no signal stops (its SIGKILL is already taken), a busy
 * post_lock or a full slot is -EAGAIN at once. @next: see async_wake();
 * set only if the post succeeded.
 */
int async_post(struct async_head *head, u64 event, bool wait,
	       struct task_struct **next)
{
	struct async_head_user __user *ahu = (void __user *)head->uaddr;
	u64 __user *slot;
	int ret;

	if (wait) {
		if (mutex_lock_interruptible(&head->post_lock))
			return -EINTR;
	} else if (!mutex_trylock(&head->post_lock)) {
		return -EAGAIN;
	}
	/* Unregistered: the ring may be freed memory by now. */
	if (READ_ONCE(head->dead)) {
		mutex_unlock(&head->post_lock);
		return -EINVAL;
	}
	slot = head->ring + (head->kidx & head->ring_mask);
	ret = async_wait_for_slot(head, slot, wait);
	if (!ret && put_user(event, slot))
		ret = -EFAULT;
	if (!ret) {
		u64 next = head->kidx + 1;

		/*
		 * The slot, then our count, then the index that publishes
		 * them, then the published count. A consumer that sees the
		 * index may pop the event and call async_wait() with that
		 * index at once, on another CPU; async_wait() takes an index
		 * above head->kidx for a bad one. Waiters wait for the
		 * published count, so they never return before the index
		 * shows what they waited for (a poster may be held up between
		 * the two for as long as its CPU is taken away).
		 */
		smp_wmb();	/* the slot before the count */
		WRITE_ONCE(head->kidx, next);
		smp_wmb();	/* the count before the index; async_wait() */
		if (put_user(next, &ahu->kernel_ring_idx)) {
			/*
			 * Not published: take the event back, or every later
			 * post would wait for this slot, which no consumer
			 * pops (it reads only what the index shows). Should
			 * the ring itself have gone too, the next post's wait
			 * for the slot reports that: -EFAULT either way.
			 */
			WRITE_ONCE(head->kidx, next - 1);
			ret = put_user(0, slot) ?: -EFAULT;
		} else {
			smp_wmb();	/* the index before the published count */
			WRITE_ONCE(head->published, next);
		}
	}
	if (!ret)
		trace_threadlet_post(current, event, head->kidx);
	mutex_unlock(&head->post_lock);
	if (!ret)
		async_wake(head, next);
	return ret;
}

/*
 * async_post_held - post the completion @reg holds (see struct
 * threadlet_reg), if any. Returns -EINTR if a signal ended the wait (@wait),
 * the completion still held; otherwise 0: posted, or lost with its head
 * (unregistered, a bad ring) or, without @wait, for want of a free slot.
 */
int async_post_held(struct threadlet_reg *reg, bool wait)
{
	struct async_head *head = reg->held_head;

	if (!head)
		return 0;
	if (async_post(head, reg->held_event, wait, NULL) == -EINTR)
		return -EINTR;
	reg->held_head = NULL;
	async_head_put(head);
	return 0;
}

/*
 * async_complete - post @event into @ahu's completion ring and return.
 *
 * async_thread() posts and parks; this is the post alone, for a cache-miss
 * thread that finished a threadlet and goes on with queued work instead of
 * parking (libthreadlet's threadlet_submit()), or for any thread of the
 * process that completes work of its own through the ring. It gives no
 * more than user space has: the ring and its indexes are the process's
 * own memory, and the wake-up is that of any completion.
 *
 * Waits for a free slot like any completer; a signal during that wait
 * restarts the call after its handler, nothing posted. Returns 0, -EINVAL
 * for a NULL @event (an empty slot) or a head that is unknown or
 * unregistered, -EFAULT for a ring that is not the process's memory.
 */
SYSCALL_DEFINE2(async_complete, void __user *, event,
		struct async_head_user __user *, ahu)
{
	struct async_head *head;
	int ret;

	if (!event)
		return -EINVAL;
	head = async_head_get(ahu);
	if (!head)
		return -EINVAL;
	ret = async_post(head, (unsigned long)event, true, NULL);
	async_head_put(head);
	return ret == -EINTR ? -ERESTARTNOINTR : ret;
}

/*
 * Sleeps until async_wait_done(): 0, or -EINTR on a signal. The entry's
 * wake function checks the count, so only the post that completes it
 * wakes this task (see async_waiter_wake()); the check here after
 * prepare_to_wait_event() covers a post between the caller's test and the
 * queueing.
 */
static int async_wait_sleep(struct async_head *head, unsigned long idx,
			    unsigned long min)
{
	struct async_waiter w = {
		.head = head, .user_ring_idx = idx, .min_wait_events = min,
	};
	int ret = 0;

	init_wait_entry(&w.wq, 0);
	w.wq.func = async_waiter_wake;
	for (;;) {
		long intr = prepare_to_wait_event(&head->wait, &w.wq,
						  TASK_INTERRUPTIBLE);

		if (async_wait_done(head, idx, min))
			break;
		if (intr) {
			ret = -ERESTARTSYS;
			break;
		}
		schedule();
	}
	finish_wait(&head->wait, &w.wq);
	return ret;
}

/*
 * A 32-bit process passes the low half of its 64-bit ring index. The
 * index it read is at most head->kidx and less than a ring behind it, so
 * it is the one with kidx's high half, or the one before that when the low
 * half wrapped since: without this, after 2^32 completions every index
 * would be 2^32 behind, and async_wait() would never sleep. The index
 * taken is the one within 2^31 of kidx: one above kidx stays a bad index.
 */
static unsigned long async_compat_idx(struct async_head *head, u32 idx)
{
	u64 k = READ_ONCE(head->kidx);

	return k - (s64)(s32)((u32)k - idx);
}

/*
 * async_wait - sleep until at least @min_wait_events completions are past
 * @user_ring_idx. Also lets completers waiting for ring space go on.
 * Returns the number of completions past @user_ring_idx, -EINTR when a
 * signal handler without SA_RESTART runs (a stop, a tracer's attach or
 * the freezer restart the call, as a handler with SA_RESTART does; the
 * call changes nothing that a restart would repeat), -EINVAL for an
 * unknown head or a @min_wait_events larger than the ring.
 */
SYSCALL_DEFINE3(async_wait, unsigned long, min_wait_events,
		unsigned long, user_ring_idx,
		struct async_head_user __user *, ahu)
{
	struct async_head *head = async_head_get(ahu);
	long ret;

	if (!head)
		return -EINVAL;
	ret = -EINVAL;
	/*
	 * Pairs with the barrier between async_post()'s count and index: an
	 * index the caller read from kernel_ring_idx is not above the count.
	 */
	smp_rmb();
	if (in_compat_syscall())
		user_ring_idx = async_compat_idx(head, user_ring_idx);
	if (min_wait_events > (unsigned long)head->ring_mask + 1 ||
	    user_ring_idx > READ_ONCE(head->kidx))
		goto out;

	WRITE_ONCE(head->space_gen, head->space_gen + 1);
	/*
	 * Most calls find nobody queued: the caller is not yet, and only a
	 * completer waiting for space gains from this wake-up. wq_has_sleeper()
	 * orders the bump before the test, pairing with the barrier in the
	 * waiter's prepare_to_wait_event() before it reads space_gen: a
	 * completer queued after the test sees the new value and goes on.
	 */
	if (wq_has_sleeper(&head->wait))
		wake_up_all(&head->wait);
	ret = async_wait_sleep(head, user_ring_idx, min_wait_events);
	if (ret)
		goto out;
	ret = READ_ONCE(head->dead) ? -EINVAL :
	      max(0L, (long)(READ_ONCE(head->published) - user_ring_idx));
	/* A count a 32-bit caller could take for an error: S32_MAX at most. */
	if (in_compat_syscall())
		ret = min(ret, (long)S32_MAX);
	/* The published count before the caller's read of the index. */
	smp_rmb();
out:
	async_head_put(head);
	return ret;
}

/* A new or duplicated mm has no async heads: a fork child starts clean. */
void threadlet_mm_init(struct mm_struct *mm)
{
	mm->threadlet = NULL;
}

/* Last user of @mm is gone: no thread can be parked on any head. */
void threadlet_mm_exit(struct mm_struct *mm)
{
	struct threadlet_mm *tm = mm->threadlet;
	struct async_head *head;
	unsigned long key;

	if (!tm)
		return;
	xa_for_each(&tm->heads, key, head) {
		xa_erase(&tm->heads, key);
		async_head_kill(head);
		async_head_put(head);
		cond_resched();
	}
	xa_destroy(&tm->heads);
	mm->threadlet = NULL;
	kfree(tm);
}
