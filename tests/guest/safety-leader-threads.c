// SPDX-License-Identifier: GPL-2.0
/*
 * A hand-off of the main thread moves group leadership: it writes every
 * thread's group_leader under tasklist_lock held for writing, with
 * interrupts off. A process with tens of thousands of threads would hold
 * the whole system's fork, exit and wait that long at every hand-off of
 * its main thread, as often as it liked. Past 1024 threads the main
 * thread sleeps in place (THREADLET_FB_TASK).
 *
 * Expected: with 1000 threads the main thread's blocked threadlet is
 * handed off; with 1100 it falls back with FB_TASK. (Its threadlet waits
 * for a pipe that a thread writes 50 ms after it sleeps: a short
 * nanosleep() can expire before the task gets to sleep on a loaded host.)
 */
#include "safety.h"

static struct async_head_user ahu;
static volatile int stop;

static void *idle(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		pause();
	return NULL;
}

/* Grows the process to @n threads in all; returns how many it has. */
static int grow_to(pthread_t *t, int *have, int n, pthread_attr_t *attr)
{
	while (tl_nr_threads() < n && *have < 1200)
		if (pthread_create(&t[(*have)++], attr, idle, NULL))
			break;
	return tl_nr_threads();
}

/* A threadlet of the main thread that surely blocks (safety.h's sf_block). */
static long one_handoff(unsigned long stack)
{
	struct threadlet_stats s0, s1;
	struct sf_block b;
	int done;
	long ret = -1;

	if (sf_block_prepare(&b, &ahu))
		ret = sf_block_run(&b, stack, &s0, &s1, &done);
	sf_block_finish(&b);
	return ret;
}

static void run(void *arg)
{
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	static pthread_t t[1200];
	pthread_attr_t attr;
	int have = 0, n;
	unsigned long long fb;
	long ret;

	(void)arg;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	sf_ok(!threadlet_err(stack) && !async_head_init(&ahu, 16, 2) && getpid() == gettid(),
	      "the main thread is the head of a pool of 2");
	n = grow_to(t, &have, 1000, &attr);
	ret = one_handoff(stack);
	sf_ok(ret == 0 && getpid() == gettid(),
	      "with %d threads the main thread is handed off (%ld)", n, ret);
	n = grow_to(t, &have, 1100, &attr);
	fb = __threadlet_area.nr_fallbacks;
	ret = one_handoff(stack);
	sf_ok(ret != 0 && __threadlet_area.nr_fallbacks > fb &&
	      __threadlet_area.last_fallback == THREADLET_FB_TASK,
	      "with %d threads it sleeps in place (FB_TASK; exec %ld, last fallback %u)", n,
	      ret, (unsigned int)__threadlet_area.last_fallback);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < have; i++)
		pthread_kill(t[i], SIGUSR1);
	for (int i = 0; i < have; i++)
		pthread_join(t[i], NULL);
	async_head_exit(&ahu);
}

static void on_usr1(int sig)
{
	(void)sig;
}

int main(void)
{
	int status;

	sf_init();
	signal(SIGUSR1, on_usr1);
	status = sf_child(run, NULL, 120);
	sf_child_ok(status, "a main thread with a thousand threads beside it");
	return tl_exit();
}
