// SPDX-License-Identifier: GPL-2.0
/*
 * Threadlets over a process's life: no spare thread means running in
 * place (counted); nesting is refused; fork gives a child that can set up
 * its own head; exit and exec with a threadlet blocked and threads parked
 * end promptly.
 */
#include <signal.h>
#include <sys/wait.h>
#include "tl_test.h"
#include "tl_util.h"

static struct async_head_user ahu;
static unsigned long stack, stack2;
static int pfd[2];

struct job {
	int done;
	long nested;
};

static long block_on_pipe(void *data)
{
	struct job *j = data;
	char c;

	if (read(pfd[0], &c, 1) == 1)
		__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return complete_threadlet_fn(j, &ahu);
}

static long short_sleep(void *data)
{
	struct job *j = data;
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return complete_threadlet_fn(j, &ahu);
}

static long noop(void *data)
{
	(void)data;
	return complete_threadlet_fn(NULL, &ahu);
}

static long nest(void *data)
{
	struct job *j = data;

	j->nested = threadlet_exec(noop, NULL, stack2, &ahu);
	return complete_threadlet_fn(j, &ahu);
}

/* Child: blocks a threadlet, parks a pool, then exits or execs. */
static int child_leaves(int how)
{
	struct job j = { 0 };

	if (async_head_init(&ahu, 16, 4) || pipe(pfd))
		_exit(20);
	if (threadlet_exec(block_on_pipe, &j, stack, &ahu) != 0)
		_exit(21);
	if (how == 'x')
		execl("/bin/true", "true", (char *)NULL);
	_exit(0);
}

static int wait_prompt(pid_t pid, int *status)
{
	for (int i = 0; i < 5000; i++) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 1;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
	return 0;
}

int main(void)
{
	struct job a = { 0 }, b = { 0 }, n = { 0 };
	struct threadlet_stats st0, st1;
	pid_t pid;
	int status, prompt;
	long r;

	stack = threadlet_stack_alloc(64 << 10);
	stack2 = threadlet_stack_alloc(64 << 10);
	tl_ok(pipe(pfd) == 0 && async_head_init(&ahu, 16, 1) == 0,
	      "async_head_init with a pool of 1");

	r = threadlet_exec(block_on_pipe, &a, stack, &ahu);
	tl_ok(r == 0 && async_head_parked(&ahu) == 0,
	      "first blocking threadlet takes the only spare");
	threadlet_stats(&st0);
	r = threadlet_exec(short_sleep, &b, stack2, &ahu);
	threadlet_stats(&st1);
	tl_ok(r == 1 && b.done, "second one, no spare left: ran in place (ret %ld)", r);
	tl_ok(st1.nr_fallbacks > st0.nr_fallbacks &&
	      st1.last_fallback == THREADLET_FB_NO_SPARE,
	      "fallback counted, reason no_spare (%llu, %u)", st1.nr_fallbacks,
	      st1.last_fallback);
	tl_ok(write(pfd[1], "x", 1) == 1 && tl_wait_one(&ahu) == &a && a.done,
	      "first one completes through the ring");
	tl_ok(tl_wait_parked(&ahu, 1), "spare parked again");

	r = threadlet_exec(nest, &n, stack, &ahu);
	tl_ok(r == 1 && n.nested == -EBUSY,
	      "threadlet_exec inside a threadlet: -EBUSY (%ld)", n.nested);

	pid = fork();
	if (pid == 0) {
		struct job c = { 0 };

		/* The parent's head and pool do not exist here. */
		if (async_head_init(&ahu, 16, 2) || pipe(pfd))
			_exit(10);
		if (threadlet_exec(block_on_pipe, &c, stack, &ahu) != 0)
			_exit(11);
		if (write(pfd[1], "y", 1) != 1 || tl_wait_one(&ahu) != &c)
			_exit(12);
		async_head_exit(&ahu);
		_exit(0);
	}
	prompt = wait_prompt(pid, &status);
	tl_ok(prompt && WIFEXITED(status) && !WEXITSTATUS(status),
	      "fork: child sets up its own head and hands off (status %d)",
	      WEXITSTATUS(status));

	pid = fork();
	if (pid == 0)
		child_leaves('e');
	prompt = wait_prompt(pid, &status);
	tl_ok(prompt && WIFEXITED(status) && !WEXITSTATUS(status),
	      "exit with a threadlet blocked and threads parked ends promptly");

	pid = fork();
	if (pid == 0)
		child_leaves('x');
	prompt = wait_prompt(pid, &status);
	tl_ok(prompt && WIFEXITED(status) && !WEXITSTATUS(status),
	      "exec with a threadlet blocked and threads parked works (status %d)",
	      WEXITSTATUS(status));

	/* Overflowing a threadlet stack hits its guard page. */
	pid = fork();
	if (pid == 0) {
		volatile char *top = (volatile char *)stack;

		top[-1] = 1;				/* inside: fine */
		top[-(64 << 10) - 1] = 1;		/* one below: guard */
		_exit(0);
	}
	prompt = wait_prompt(pid, &status);
	tl_ok(prompt && WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
	      "a write below the stack hits the guard page (SIGSEGV)");

	async_head_exit(&ahu);
	threadlet_stack_free(stack);
	threadlet_stack_free(stack2);
	return tl_exit();
}
