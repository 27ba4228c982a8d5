// SPDX-License-Identifier: GPL-2.0
/*
 * An elastic pool whose new threads cannot register their area.
 *
 * A thread the pool grows by (ASYNC_GROW) registers its threadlet area,
 * which RLIMIT_MEMLOCK may refuse (-ENOMEM). Such a thread left, but kept
 * its place in the pool's count of threads: the idle shrink then ended
 * real threads while the count was above min, down to none parked, and
 * with none parked nothing grew the pool again.
 *
 * Expected: after a burst whose grown threads all fail, the pool counts
 * only the threads that exist; after the idle time it keeps min parked;
 * and it still hands off.
 */
#include <linux/capability.h>
#include <sys/resource.h>
#include "safety.h"

#define MIN	4
#define MAX	64
#define BURST	32

static struct async_head_user ahu;
static unsigned long stacks[BURST];

static long nap(void *data)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	return complete_threadlet_fn(data, &ahu);
}

static long nothing(void *data)
{
	return complete_threadlet_fn(data, &ahu);
}

/* Runs @nr blocking threadlets and waits for them; how many went async. */
static int burst(int nr)
{
	int async = 0, pending = 0;

	for (int i = 0; i < nr; i++)
		if (threadlet_exec(nap, (void *)(uintptr_t)(i + 1), stacks[i], &ahu) == 0) {
			async++;
			pending++;
		}
	while (pending && sf_wait_event(&ahu, 10000))
		pending--;
	return async;
}

/* Root's pool threads would pin past the limit with CAP_IPC_LOCK. */
static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
	return syscall(SYS_capset, &h, d);
}

static void run(void *arg)
{
	struct async_pool_stats st;
	struct rlimit old, zero;
	long parked;
	int async, i;

	(void)arg;
	for (i = 0; i < BURST; i++)
		stacks[i] = threadlet_stack_alloc(64 << 10);
	if (drop_ipc_lock() || async_head_init_pool(&ahu, 256, MIN, MAX) ||
	    getrlimit(RLIMIT_MEMLOCK, &old)) {
		sf_ok(0, "a pool of %d to %d threads without CAP_IPC_LOCK", MIN, MAX);
		return;
	}
	threadlet_exec(nothing, NULL, stacks[0], &ahu);	/* registers this thread */
	for (i = 0; i < 5000 && async_head_parked(&ahu) < MIN; i++)
		usleep(1000);

	/* No new area can be charged: every grown thread fails to register. */
	zero = old;
	zero.rlim_cur = 0;
	setrlimit(RLIMIT_MEMLOCK, &zero);
	async = burst(BURST);
	usleep(200000);
	async_head_pool_stats(&ahu, &st);
	parked = async_head_parked(&ahu);
	sf_ok(async > 0 && st.grow_failed > 0,
	      "a burst of %d: %d handed off, %lu grown threads failed", BURST, async,
	      st.grow_failed);
	sf_ok(st.threads == (unsigned int)parked,
	      "the pool counts the threads it has (%u counted, %ld parked)",
	      st.threads, parked);

	setrlimit(RLIMIT_MEMLOCK, &old);
	sleep(4);	/* the idle time is 1 s */
	async_head_pool_stats(&ahu, &st);
	parked = async_head_parked(&ahu);
	sf_ok(parked >= MIN && st.threads == (unsigned int)parked,
	      "after the idle time: %ld parked, %u counted, min %d", parked,
	      st.threads, MIN);
	async = burst(8);
	sf_ok(async > 0, "it still hands off (%d of 8)", async);
	async_head_exit(&ahu);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(run, NULL, 120);
	sf_child_ok(status, "a pool whose grown threads cannot register");
	return tl_exit();
}
