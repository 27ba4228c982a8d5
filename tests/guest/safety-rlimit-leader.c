// SPDX-License-Identifier: GPL-2.0
/*
 * A hand-off of the main thread moves group leadership while the other
 * threads run. The process's rlimits are guarded by the leader's
 * alloc_lock, which getrlimit(), setrlimit(), fork and exec took with
 * task_lock(current->group_leader) and released with
 * task_unlock(current->group_leader), reading the leader twice. A move in
 * between left the old leader's lock held for good and released the new
 * one's: the old leader task then spun forever at its next task_lock()
 * (its exit_mm(), with mmap_lock held), and a prlimit() of it from another
 * process spun holding tasklist_lock, stalling every fork and exit.
 *
 * Two threads loop getrlimit()/setrlimit() while the main thread's
 * threadlet blocks and is handed off thousands of times.
 * Expected: the process ends (every old leader task exits), twice.
 */
#include <sys/resource.h>
#include "safety.h"

static struct async_head_user ahu;
static volatile int stop;

static long nap_fn(void *data)
{
	struct timespec ts = { 0, 50 * 1000 };

	nanosleep(&ts, NULL);
	return complete_threadlet_fn(data, &ahu);
}

static void *rl_spin(void *arg)
{
	struct rlimit r;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		getrlimit(RLIMIT_NOFILE, &r);
		setrlimit(RLIMIT_NOFILE, &r);
	}
	return NULL;
}

static void stress(void *arg)
{
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	struct threadlet_stats s0, s1;
	pthread_t t[2];
	int ev, i;

	(void)arg;
	if (threadlet_err(stack) || async_head_init(&ahu, 64, 4) || getpid() != gettid()) {
		sf_ok(0, "set-up: the main thread is the head");
		return;
	}
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, rl_spin, NULL);
	threadlet_stats(&s0);
	for (i = 0; i < 3000; i++)
		if (threadlet_exec(nap_fn, &ev, stack, &ahu) == 0 &&
		    sf_wait_event(&ahu, 5000) != &ev)
			break;
	threadlet_stats(&s1);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	sf_ok(s1.nr_handoffs - s0.nr_handoffs > 300,
	      "%llu main-thread hand-offs beside getrlimit()/setrlimit()",
	      (unsigned long long)(s1.nr_handoffs - s0.nr_handoffs));
	sf_ok(getpid() == gettid(), "the head still leads the group");
	async_head_exit(&ahu);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(stress, NULL, 90);
	sf_child_ok(status, "a process whose leader moved under its rlimit lock");
	status = sf_child(stress, NULL, 90);
	sf_child_ok(status, "and a second one after it");
	return tl_exit();
}
