// SPDX-License-Identifier: GPL-2.0
/*
 * 1,000 threadlets, every other one blocking, through a pool of 8: every
 * threadlet completes exactly once (in place or through the ring), the
 * pool ends with the threads it started with, and nothing is left behind.
 */
#include <stdint.h>
#include "tl_test.h"
#include "tl_util.h"

#define NR_THREADLETS	1000
#define POOL		8
#define NR_STACKS	(POOL + 2)

static struct async_head_user ahu;

struct job {
	int id;
	int stack;		/* index into stacks[] */
	int runs;
};

static struct job jobs[NR_THREADLETS];
static unsigned long stacks[NR_STACKS];
static int stack_busy[NR_STACKS];
static int completed[NR_THREADLETS];

static long work(void *data)
{
	struct job *j = data;
	struct timespec ts = { 0, 300 * 1000 };

	__atomic_add_fetch(&j->runs, 1, __ATOMIC_RELAXED);
	if (j->id % 2)
		nanosleep(&ts, NULL);
	return complete_threadlet_fn(j, &ahu);
}

static int bad;

static void reap(struct job *j)
{
	if (!j || j->id < 0 || j->id >= NR_THREADLETS || completed[j->id]++)
		bad++;
	else
		stack_busy[j->stack] = 0;
}

static int free_stack(void)
{
	for (;;) {
		struct job *j;

		for (int i = 0; i < NR_STACKS; i++)
			if (!stack_busy[i])
				return i;
		j = async_ring_pop(&ahu);
		if (j)
			reap(j);
		else
			async_wait(1, ahu.user_ring_idx, &ahu);
	}
}

int main(void)
{
	int threads0 = tl_nr_threads(), async = 0, sync = 0, errors = 0, missing = 0;
	struct threadlet_stats st;
	struct job *j;

	for (int i = 0; i < NR_STACKS; i++)
		stacks[i] = threadlet_stack_alloc(32 << 10);
	tl_ok(async_head_init(&ahu, 16, POOL) == 0, "async_head_init, pool of %d", POOL);
	tl_ok(threadlet_uses_vdso() == !getenv("THREADLET_FORCE_SYSCALL"),
	      "threadlet_on/off through the %s",
	      threadlet_uses_vdso() ? "vDSO" : "syscall path");
	tl_ok(tl_nr_threads() == threads0 + POOL, "pool threads started (%d)",
	      tl_nr_threads());

	for (int i = 0; i < NR_THREADLETS; i++) {
		int s = free_stack();
		long r;

		jobs[i].id = i;
		jobs[i].stack = s;
		stack_busy[s] = 1;
		r = threadlet_exec(work, &jobs[i], stacks[s], &ahu);
		if (r == 1) {
			sync++;
			reap(&jobs[i]);
		} else if (r == 0) {
			async++;
		} else {
			errors++;
		}
	}
	for (;;) {
		int done = 0;

		for (int i = 0; i < NR_THREADLETS; i++)
			done += completed[i] != 0;
		if (done == NR_THREADLETS)
			break;
		j = async_ring_pop(&ahu);
		if (j)
			reap(j);
		else if (async_wait(1, ahu.user_ring_idx, &ahu) < 0)
			break;
	}
	for (int i = 0; i < NR_THREADLETS; i++)
		missing += completed[i] != 1 || jobs[i].runs != 1;
	threadlet_stats(&st);
	tl_diag("%d sync, %d async, %llu fallbacks", sync, async, st.nr_fallbacks);
	tl_ok(errors == 0, "no threadlet_exec error");
	tl_ok(async > 0 && sync >= NR_THREADLETS / 2, "both paths taken");
	tl_ok(missing == 0 && bad == 0, "every threadlet ran and completed exactly once");
	tl_ok((unsigned long long)async == st.nr_handoffs,
	      "hand-offs counted (%llu)", st.nr_handoffs);
	tl_ok(async_ring_pop(&ahu) == NULL, "ring is empty");
	tl_ok(tl_wait_parked(&ahu, POOL), "whole pool parked again");
	tl_ok(tl_nr_threads() == threads0 + POOL, "no thread gained or lost");
	async_head_exit(&ahu);
	tl_ok(tl_nr_threads_settle(threads0) == threads0,
	      "thread count back to %d after exit", threads0);
	for (int i = 0; i < NR_STACKS; i++)
		threadlet_stack_free(stacks[i]);
	return tl_exit();
}
