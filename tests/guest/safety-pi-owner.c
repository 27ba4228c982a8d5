// SPDX-License-Identifier: GPL-2.0
/*
 * A PI futex the head owns, while a waiter comes during its hand-off.
 *
 * The head owns a PI futex in user space only: the word holds its TID and
 * the kernel has no state for it yet, so it may hand off. A waiter's
 * FUTEX_LOCK_PI looks the owner up by that TID, then takes the owner's
 * pi_lock and attaches the new PI state to it. If the hand-off exchanged
 * the TIDs in between, the state was attached to the old kernel task,
 * which by then carried a pool thread's identity: the head's later
 * FUTEX_UNLOCK_PI failed (EINVAL, glibc aborts), and the waiter boosted
 * and waited on the wrong thread.
 *
 * A waiter locks and unlocks the futex while the head's threadlets block
 * and are handed off, at a phase that moves against each hand-off.
 * Expected: the head's FUTEX_UNLOCK_PI always succeeds, and the waiter
 * always gets the lock.
 */
#include <linux/futex.h>
#include "safety.h"

#define ROUNDS	3000

static struct async_head_user ahu;
static uint32_t fword;
static int go, entered, done, stop;

static long nap_fn(void *data)
{
	struct timespec ts = { 0, 50 * 1000 };

	__atomic_store_n(&entered, 1, __ATOMIC_RELEASE);
	nanosleep(&ts, NULL);
	return complete_threadlet_fn(data, &ahu);
}

static long futex_pi(int op)
{
	return syscall(SYS_futex, &fword, op, 0, NULL, NULL, 0);
}

/* Locks and unlocks once per round, right after the threadlet started. */
static void *waiter(void *arg)
{
	int seen = 0;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		int now = __atomic_load_n(&go, __ATOMIC_ACQUIRE);

		if (now == seen)
			continue;
		seen = now;
		while (!__atomic_load_n(&entered, __ATOMIC_ACQUIRE))
			;
		for (volatile int k = 0; k < (seen * 7) % 400; k++)
			;
		if (futex_pi(FUTEX_LOCK_PI_PRIVATE) ||
		    futex_pi(FUTEX_UNLOCK_PI_PRIVATE))
			__atomic_store_n(&done, -errno, __ATOMIC_RELEASE);
		else
			__atomic_store_n(&done, seen, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void run(void *arg)
{
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	uint32_t tid = syscall(SYS_gettid);
	int ev, i, k, d, handoffs = 0, bad = 0, lost = 0;
	long long end;
	pthread_t w;

	(void)arg;
	if (threadlet_err(stack) || async_head_init(&ahu, 16, 2) ||
	    pthread_create(&w, NULL, waiter, NULL)) {
		sf_ok(0, "a head, a pool, a waiter");
		return;
	}
	for (i = 1; i <= ROUNDS && !bad && !lost; i++) {
		uint32_t expect = 0;

		if (!__atomic_compare_exchange_n(&fword, &expect, tid, 0,
						 __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED)) {
			bad = -1;
			break;
		}
		__atomic_store_n(&entered, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&go, i, __ATOMIC_RELEASE);
		if (threadlet_exec(nap_fn, &ev, stack, &ahu) == 0) {
			handoffs++;
			sf_wait_event(&ahu, 5000);
		}
		/* The waiter's FUTEX_LOCK_PI: the word shows FUTEX_WAITERS. */
		for (k = 0; k < 2000 && !(__atomic_load_n(&fword, __ATOMIC_ACQUIRE) &
					   FUTEX_WAITERS); k++)
			usleep(100);
		expect = tid;
		if (!__atomic_compare_exchange_n(&fword, &expect, 0, 0,
						 __ATOMIC_RELEASE,
						 __ATOMIC_RELAXED) &&
		    futex_pi(FUTEX_UNLOCK_PI_PRIVATE))
			bad = errno;
		/*
		 * The waiter's lock and unlock: 30 s of the monotonic clock,
		 * as a loaded host may hold a vCPU off for a second or more.
		 * A waiter that failed stores its error at once.
		 */
		end = tl_now_ns() + 30000000000LL;
		while (!bad && (d = __atomic_load_n(&done, __ATOMIC_ACQUIRE)) != i &&
		       d >= 0 && tl_now_ns() < end)
			usleep(200);
		if (!bad && __atomic_load_n(&done, __ATOMIC_ACQUIRE) != i)
			lost = i;
	}
	sf_ok(handoffs >= 100,
	      "%d of %d rounds handed off while a PI waiter came", handoffs,
	      i - 1);
	sf_ok(!bad, "the head's FUTEX_UNLOCK_PI always succeeded (error %d in round %d)",
	      bad, i - 1);
	sf_ok(!lost && !bad, "the waiter always got the lock (not in round %d, done %d)",
	      lost, __atomic_load_n(&done, __ATOMIC_ACQUIRE));
	if (bad || lost)
		_exit(0);	/* the waiter may wait on the wrong thread for good */
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(w, NULL);
	async_head_exit(&ahu);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(run, NULL, 240);
	sf_child_ok(status, "PI futex owner across hand-offs");
	return tl_exit();
}
