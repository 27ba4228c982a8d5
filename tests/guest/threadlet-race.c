// SPDX-License-Identifier: GPL-2.0
/*
 * A pool of one, and a head that blocks again as soon as the previous
 * threadlet completes: the only spare is claimed while it may still be on
 * its way into schedule() on the other CPU, right after posting (the
 * window in which a claimed spare once saw the head's area, still armed,
 * as its own and handed itself off: two heads). Every
 * hand-off must still give exactly one head (same TID, every exec 0 or 1,
 * every completion once).
 */
#include <stdint.h>
#include <time.h>
#include "tl_test.h"
#include "tl_util.h"

#define ROUNDS	4000

static struct async_head_user ahu;
static int done[ROUNDS];

static long nap(void *data)
{
	struct timespec ts = { 0, 1000 };

	nanosleep(&ts, NULL);
	return complete_threadlet_fn(data, &ahu);
}

int main(void)
{
	unsigned long stacks[2] = { threadlet_stack_alloc(32 << 10),
				    threadlet_stack_alloc(32 << 10) };
	int tid = gettid(), bad_ret = 0, bad_ev = 0, bad_tid = 0, async = 0;
	int threads0 = tl_nr_threads();
	long r;

	tl_ok(async_head_init(&ahu, 4, 1) == 0, "async_head_init, pool of 1");
	for (int i = 0; i < ROUNDS; i++) {
		r = threadlet_exec(nap, &done[i], stacks[i % 2], &ahu);
		if (r == 0) {
			int *ev;

			async++;
			/*
			 * Poll, not async_wait(): the head keeps its CPU, so
			 * the next exec claims the spare from here while the
			 * spare parks on the other CPU.
			 */
			while (!(ev = async_ring_pop(&ahu)))
				__builtin_ia32_pause();
			if (ev != &done[i])
				bad_ev++;
			else
				done[i]++;
		} else if (r == 1) {
			done[i]++;
		} else {
			if (bad_ret++ < 5)
				tl_diag("round %d: threadlet_exec returned %ld", i, r);
		}
		if (gettid() != tid)
			bad_tid++;
	}
	for (int i = 0; i < ROUNDS; i++)
		bad_ev += done[i] != 1;
	tl_diag("%d of %d went async", async, ROUNDS);
	tl_ok(bad_ret == 0, "every threadlet_exec returned 0 or 1 (%d did not)", bad_ret);
	tl_ok(bad_tid == 0, "the head kept its TID (%d changes)", bad_tid);
	tl_ok(bad_ev == 0, "every threadlet completed exactly once (%d wrong)", bad_ev);
	tl_ok(async > ROUNDS / 10, "hand-offs happened");
	tl_ok(tl_wait_parked(&ahu, 1), "the spare parked again");
	async_head_exit(&ahu);
	tl_ok(tl_nr_threads_settle(threads0) == threads0,
	      "thread count back to %d", threads0);
	return tl_exit();
}
