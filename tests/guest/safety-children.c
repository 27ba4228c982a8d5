// SPDX-License-Identifier: GPL-2.0
/*
 * A hand-off moves the head's children with its identity: every thread of
 * every child process is re-parented, under tasklist_lock for writing with
 * interrupts off, the whole system's fork, exit, wait and kill held up
 * behind it. Children that were never reaped count as well, and a program
 * can have as many as RLIMIT_NPROC allows, so that walk would make each of
 * its hand-offs a stall for everyone. Past THREADLET_MAX_CHILD_THREADS
 * (256) threads in child processes of the head and the spare, the
 * threadlet sleeps in place (THREADLET_FB_TASK).
 *
 * Two cases, each in a child process of its own with a pool:
 *  - 8 unreaped children: the hand-off moves them; after it they are
 *    still the head's (waitpid() reaps them from the head's TID);
 *  - 300 unreaped children: no hand-off, an FB_TASK fallback, and the
 *    threadlet completes in place.
 */
#include "safety.h"

static struct async_head_user ahu;

static int zombies(int n, pid_t *pids)
{
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			return i;
		if (!pids[i])
			_exit(0);
	}
	return n;
}

static void children(void *arg)
{
	int n = (int)(intptr_t)arg, made, reaped = 0;
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	struct threadlet_stats s0, s1;
	struct sf_block b;
	pid_t *pids = calloc(n, sizeof(*pids));
	int done;
	long ret;

	if (!pids || threadlet_err(stack) || async_head_init(&ahu, 16, 2)) {
		sf_ok(0, "%d children: set-up", n);
		return;
	}
	tl_wait_parked(&ahu, 2);
	made = zombies(n, pids);
	sf_ok(made == n, "%d children forked, not reaped (%d)", n, made);
	usleep(200000);			/* they have exited */
	if (!sf_block_prepare(&b, &ahu)) {
		sf_ok(0, "%d children: a blocking threadlet", n);
		return;
	}
	ret = sf_block_run(&b, stack, &s0, &s1, &done);
	sf_block_finish(&b);
	if (n <= 8) {
		sf_ok(ret == 0 && done && s1.nr_handoffs == s0.nr_handoffs + 1,
		      "%d children: handed off and completed (%ld)", n, ret);
	} else {
		sf_ok(ret == 1 && done && s1.nr_handoffs == s0.nr_handoffs &&
		      s1.nr_fallbacks == s0.nr_fallbacks + 1 &&
		      s1.last_fallback == THREADLET_FB_TASK,
		      "%d children: ran in place, fallback TASK (%ld, last %u)", n, ret,
		      s1.last_fallback);
	}
	for (int i = 0; i < made; i++)
		reaped += waitpid(pids[i], NULL, WNOHANG) == pids[i];
	sf_ok(reaped == made, "%d children: all reaped by the head's TID (%d)", n, reaped);
	async_head_exit(&ahu);
	free(pids);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(children, (void *)8, 60);
	sf_child_ok(status, "a head with 8 children");
	status = sf_child(children, (void *)300, 60);
	sf_child_ok(status, "a head with 300 children");
	return tl_exit();
}
