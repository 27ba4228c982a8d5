// SPDX-License-Identifier: GPL-2.0
/*
 * fork() in the rest of a threadlet, in the cache-miss thread that took
 * it over after a hand-off (found by a helper's review). The child is a
 * copy of that thread: it has no head to go back to, since the head frame
 * the threadlet was started from is the parent's new head's, long popped,
 * and no pool. Before the fix the child's completion returned into that
 * stale frame and ran the parent's main() from the middle, and a child
 * forked by a submitted job took the next job of the parent's queue and
 * ran it a second time. Expected: the child ends with status 0 when its
 * threadlet ends (completed, or fn returned), runs nothing else, and the
 * parent goes on as without the fork.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <threadlet.h>
#include <unistd.h>
#include "tl_test.h"
#include "tl_util.h"

static struct async_head_user ahu;
static int gate[2], res[2];
static pid_t main_pid;
static volatile pid_t child;

/* Anything of main() that a child reaches is a failure of its own. */
static void only_parent(void)
{
	if (getpid() != main_pid)
		_exit(77);
}

/* Blocks on the gate, then forks; @how 1: the child returns from fn. */
static long fork_after_block(void *how)
{
	char c;
	pid_t p;

	if (read(gate[0], &c, 1) != 1)
		_exit(90);
	p = fork();
	if (p > 0)
		__atomic_store_n(&child, p, __ATOMIC_RELEASE);
	if (p == 0 && how)
		return 0;
	return complete_threadlet_fn(&ahu, &ahu);
}

/* Waits for the child forked in a threadlet: its status, or -1. */
static int wait_child(void)
{
	int st = -1;

	for (int i = 0; i < 5000 && !__atomic_load_n(&child, __ATOMIC_ACQUIRE); i++) {
		usleep(1000);
		only_parent();
	}
	only_parent();
	if (!child)
		return -1;
	for (int i = 0; i < 5000; i++) {
		if (waitpid(child, &st, WNOHANG) == child)
			return st;
		usleep(1000);
		only_parent();
	}
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	return -1;
}

static void exec_case(long how, const char *what)
{
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	long ret;
	int st;

	child = 0;
	ret = threadlet_exec(fork_after_block, (void *)how, stack, &ahu);
	only_parent();
	tl_ok(ret == 0, "%s: the threadlet blocks and is handed off (%ld)", what, ret);
	tl_ok(write(gate[1], "x", 1) == 1, "%s: the gate opens, the threadlet forks", what);
	st = wait_child();
	tl_ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "%s: the child ends with status 0 (wait status %#x; 77: it ran main())", what, st);
	tl_ok(tl_wait_one(&ahu) == &ahu, "%s: the parent's threadlet completes", what);
	threadlet_stack_free(stack);
}

static long job_block(void *d)
{
	char c;

	(void)d;
	return read(gate[0], &c, 1);
}

static long job_fork(void *d)
{
	pid_t p;

	(void)d;
	p = fork();
	if (p > 0)
		__atomic_store_n(&child, p, __ATOMIC_RELEASE);
	return 0;
}

static long job_count(void *d)
{
	pid_t me = getpid();

	(void)d;
	if (write(res[1], &me, sizeof(me)) != sizeof(me))
		_exit(91);
	return 0;
}

/*
 * Four jobs block, so the next two are queued (TL_QUEUE_MIN=4): the
 * first thread that finishes takes the forking job, and a thread takes
 * the counting one after it. It must run once, in the parent.
 */
static void submit_case(void)
{
	static int ev[6];
	unsigned long stacks[6];
	int runs = 0, in_child = 0, st, n = 0;
	pid_t who;

	child = 0;
	for (int i = 0; i < 6; i++)
		stacks[i] = threadlet_stack_alloc(64 << 10);
	for (int i = 0; i < 4; i++)
		n += threadlet_submit(job_block, NULL, &ev[i], stacks[i], &ahu) == 0;
	tl_ok(n == 4, "submit: four jobs block");
	tl_ok(threadlet_submit(job_fork, NULL, &ev[4], stacks[4], &ahu) == 0 &&
	      threadlet_submit(job_count, NULL, &ev[5], stacks[5], &ahu) == 0,
	      "submit: a forking job and a counting one are queued");
	tl_ok(write(gate[1], "x", 1) == 1, "submit: one blocked job ends");
	st = wait_child();
	tl_ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "submit: the child of the queued job ends with status 0 (wait status %#x)", st);
	tl_ok(write(gate[1], "xxx", 3) == 3, "submit: the other three end");
	for (int i = 0; i < 6; i++)
		if (!tl_wait_one(&ahu))
			break;
	close(res[1]);
	while (read(res[0], &who, sizeof(who)) == sizeof(who)) {
		runs++;
		in_child += who != main_pid;
	}
	tl_ok(runs == 1 && !in_child, "submit: the counting job ran once (%d, %d in the child)",
	      runs, in_child);
	for (int i = 0; i < 6; i++)
		threadlet_stack_free(stacks[i]);
}

int main(void)
{
	main_pid = getpid();
	setenv("TL_QUEUE_MIN", "4", 1);
	tl_ok(pipe(gate) == 0 && pipe(res) == 0 && async_head_init(&ahu, 64, 8) == 0,
	      "pipes, a head with a pool of 8");
	exec_case(0, "completed");
	exec_case(1, "fn returned");
	submit_case();
	async_head_exit(&ahu);
	return tl_exit();
}
