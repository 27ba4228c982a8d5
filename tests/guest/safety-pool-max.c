// SPDX-License-Identifier: GPL-2.0
/*
 * max_cachemiss_threads bounds the threads parked on a head, also when
 * the threads that come back from hand-offs find the pool refilled.
 *
 * A hand-off leaves the sleeping task with the identity of the pool
 * thread it claimed; when its work is done it parks as that pool thread.
 * Meanwhile new threads may have parked in its place (here: one more
 * raw parker after each hand-off; in an elastic pool, the threads it
 * started while the others were out). Each such return would then add a
 * thread above max for good, and the pool's list, which the scheduler
 * hook walks under a raw spinlock, would grow with the process's threads.
 *
 * max 1: K syslets go async one after the other, each claiming the one
 * parked thread, and a new parker refills the pool after each.
 * Expected: when the K completers are done, one thread is parked; the
 * others went home with -EBUSY and ended.
 */
#include "safety.h"

#define K 8

static struct async_head_user ahu;
static u64 ring[64];
static struct threadlet_area main_area __attribute__((aligned(128)));
static struct syslet_uatom atoms[K];
static long long rets[K];
static u64 fds[K], one = 1;
static char buf[K];
static int pfd[K][2];
static long home_ret[2 * K + 2];
static int nhome;

static void *parker(void *arg)
{
	long r;

	(void)arg;
	if (syscall(__NR_threadlet_register, &__threadlet_area,
		    sizeof(__threadlet_area), 0))
		return NULL;
	r = sf_park_home(&__threadlet_area, NULL, &ahu);
	home_ret[__atomic_fetch_add(&nhome, 1, __ATOMIC_ACQ_REL) % (2 * K + 2)] = r;
	syscall(__NR_threadlet_register, &__threadlet_area,
		sizeof(__threadlet_area), THREADLET_UNREGISTER);
	return NULL;
}

static int start_parker(void)
{
	pthread_t t;

	return !pthread_create(&t, NULL, parker, NULL) && !pthread_detach(t) &&
	       tl_wait_parked(&ahu, 1);
}

static void over_max(void *arg)
{
	int i, ok = 1, busy = 0;
	long parked;

	(void)arg;
	sf_ok(syscall(__NR_threadlet_register, &main_area, sizeof(main_area), 0) == 0 &&
	      sf_register_head(&ahu, ring, 64, 1) == 0, "head with max_cachemiss_threads 1");
	for (i = 0; i < K && ok; i++) {
		ok = start_parker() && !pipe(pfd[i]);
		fds[i] = pfd[i][0];
		atoms[i].flags = SYSLET_ASYNC;
		atoms[i].nr = SYS_read;
		atoms[i].ret_ptr = (uintptr_t)&rets[i];
		atoms[i].arg_ptr[0] = (uintptr_t)&fds[i];
		atoms[i].arg_ptr[1] = (uintptr_t)&buf[i];
		atoms[i].arg_ptr[2] = (uintptr_t)&one;
		/* Claims the one parked thread; the chain's task waits in read(). */
		ok = ok && syscall(__NR_async_exec, &atoms[i], &ahu) == 0;
		ok = ok && tl_wait_parked(&ahu, 0);
	}
	sf_ok(ok, "%d syslets went async, each on a fresh parker", K);
	sf_ok(start_parker(), "one more parker fills the pool");
	for (i = 0; i < K; i++)
		ok = ok && write(pfd[i][1], "x", 1) == 1;
	for (i = 0; i < K; i++)
		ok = ok && sf_wait_event(&ahu, 5000) != NULL;
	sf_ok(ok, "the %d chains posted their final atoms", K);
	for (i = 0; i < 2000 && __atomic_load_n(&nhome, __ATOMIC_ACQUIRE) < K; i++)
		usleep(1000);
	parked = async_head_parked(&ahu);
	sf_ok(parked == 1, "one thread parked, max 1 (%ld)", parked);
	for (i = 0; i < nhome && i < 2 * K + 2; i++)
		busy += home_ret[i] == -EBUSY;
	sf_ok(busy == K, "%d of the %d chains' tasks went home with -EBUSY", busy, K);
	sf_ok(sf_unregister_head(&ahu) == 0, "unregister");
	sf_ok(tl_nr_threads_settle(1) == 1, "every parker ended");
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(over_max, NULL, 60);
	sf_child_ok(status, "a pool refilled while its threads were out");
	return tl_exit();
}
