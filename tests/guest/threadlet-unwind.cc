// SPDX-License-Identifier: GPL-2.0
/*
 * Unwinding out of a threadlet's fn: a C++ exception caught by the caller
 * of threadlet_exec(), pthread_exit() and a cancellation inside fn.
 *
 * The trampoline frame that calls fn has a personality routine
 * (tl_personality()): unwinding through it while the thread is still the
 * head turns the threadlet off, as a completion in place does. Before it,
 * the threadlet stayed on: the next threadlet_exec() failed with EBUSY,
 * and the next blocking call handed the head off to a frame the
 * exception had already popped.
 *
 * Expected: after each unwind the caller's frames run with no threadlet
 * on (a new threadlet runs and completes in place; a blocking read in the
 * caller is not handed off, the area counts no hand-off); a threadlet that
 * blocks and is handed off after that still works; an exception thrown in
 * a cache-miss thread, which no frame of that thread catches, ends the
 * program with std::terminate() (SIGABRT), as one that leaves a thread's
 * start routine does.
 */
#include <exception>
#include <stdexcept>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tl_test.h"
#include "tl_util.h"

#define STACK	(64 << 10)

static struct async_head_user ahu;

static long fn_done(void *arg)
{
	(void)arg;
	return complete_threadlet_fn(NULL, &ahu);
}

static long fn_throw(void *arg)
{
	(void)arg;
	throw std::runtime_error("from a threadlet");
}

/* Blocks on the pipe (a hand-off), then completes. */
static long fn_block(void *arg)
{
	int *pfd = (int *)arg;
	char c;

	if (read(pfd[0], &c, 1) != 1)
		c = 0;
	return complete_threadlet_fn((void *)(uintptr_t)(unsigned char)c, &ahu);
}

/* Blocks (a hand-off), then throws in the cache-miss thread. */
static long fn_block_throw(void *arg)
{
	int *pfd = (int *)arg;
	char c;

	if (read(pfd[0], &c, 1) != 1)
		c = 0;
	throw std::runtime_error("from a cache-miss thread");
}

static long fn_exit(void *arg)
{
	(void)arg;
	pthread_exit((void *)42);
}

static long fn_cancel(void *arg)
{
	(void)arg;
	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
	pthread_testcancel();	/* a cancel is pending: acted on here */
	return complete_threadlet_fn(NULL, &ahu);
}

/*
 * The caller's side after an unwind: no threadlet on. A threadlet runs in
 * place; a read that blocks here (on a pipe the writer fills 50 ms later)
 * is not handed off.
 */
static int after_unwind(unsigned long stack, const char *what)
{
	struct threadlet_stats st0 = {}, st1 = {};
	int pfd[2], ok = 1;
	pid_t w;
	long r;
	char c;

	r = threadlet_exec(fn_done, NULL, stack, &ahu);
	tl_ok(r == 1, "%s: the next threadlet runs in place (%ld)", what, r);
	ok &= r == 1;
	if (pipe(pfd))
		return 0;
	threadlet_stats(&st0);
	w = fork();
	if (w == 0) {
		usleep(50000);
		_exit(write(pfd[1], "x", 1) != 1);
	}
	r = read(pfd[0], &c, 1);
	threadlet_stats(&st1);
	waitpid(w, NULL, 0);
	tl_ok(r == 1 && st1.nr_handoffs == st0.nr_handoffs,
	      "%s: a blocking read in the caller is not handed off (%llu hand-offs)",
	      what, (unsigned long long)(st1.nr_handoffs - st0.nr_handoffs));
	ok &= r == 1 && st1.nr_handoffs == st0.nr_handoffs;
	close(pfd[0]);
	close(pfd[1]);
	return ok;
}

/* A threadlet that blocks is handed off and completes, popped here. */
static void handoff_works(unsigned long stack, const char *what)
{
	int pfd[2];
	void *ev = NULL;
	long r;

	if (pipe(pfd))
		return;
	r = threadlet_exec(fn_block, pfd, stack, &ahu);
	if (r == 0) {
		if (write(pfd[1], "y", 1) != 1)
			r = -1;
		for (int i = 0; i < 5000 && !(ev = async_ring_pop(&ahu)); i++)
			async_wait(1, ahu.user_ring_idx, &ahu);
	}
	tl_ok(r == 0 && ev == (void *)(uintptr_t)'y',
	      "%s: a threadlet that blocks is handed off and completes (%ld, %p)",
	      what, r, ev);
	close(pfd[0]);
	close(pfd[1]);
}

struct exit_case {
	long (*fn)(void *);
	unsigned long stack;
	int cleanup_ok;		/* after_unwind() in the cleanup handler */
};

static void exit_cleanup(void *arg)
{
	struct exit_case *c = (struct exit_case *)arg;

	c->cleanup_ok = after_unwind(c->stack, c->fn == fn_exit ?
				     "pthread_exit(), in the caller's cleanup" :
				     "a cancellation, in the caller's cleanup");
}

static void *exit_thread(void *arg)
{
	struct exit_case *c = (struct exit_case *)arg;
	long r;

	if (c->fn == fn_cancel)
		pthread_cancel(pthread_self());
	pthread_cleanup_push(exit_cleanup, c);
	r = threadlet_exec(c->fn, NULL, c->stack, &ahu);
	tl_ok(0, "threadlet_exec() returned %ld after fn ended the thread", r);
	pthread_cleanup_pop(0);
	return NULL;
}

int main(void)
{
	unsigned long stack = threadlet_stack_alloc(STACK);
	struct exit_case c = {};
	pthread_t t;
	void *ret;
	int caught = 0, st;
	pid_t pid;

	tl_ok(!threadlet_err(stack) && async_head_init(&ahu, 16, 2) == 0,
	      "a stack and an async head with two cache-miss threads");
	tl_ok(tl_wait_parked(&ahu, 2), "both parked");

	try {
		threadlet_exec(fn_throw, NULL, stack, &ahu);
	} catch (const std::runtime_error &e) {
		caught = 1;
	}
	tl_ok(caught, "an exception thrown in fn is caught by the caller");
	after_unwind(stack, "exception");
	handoff_works(stack, "exception");

	c.fn = fn_exit;
	c.stack = threadlet_stack_alloc(STACK);
	pthread_create(&t, NULL, exit_thread, &c);
	pthread_join(t, &ret);
	tl_ok(ret == (void *)42 && c.cleanup_ok,
	      "pthread_exit() in fn: the thread ends with its value (%p)", ret);

	c.fn = fn_cancel;
	c.cleanup_ok = 0;
	pthread_create(&t, NULL, exit_thread, &c);
	pthread_join(t, &ret);
	tl_ok(ret == PTHREAD_CANCELED && c.cleanup_ok,
	      "a cancellation in fn: the thread ends as cancelled");
	handoff_works(stack, "after both");

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int pfd[2];

		/* A fork child has no pool of its parent's: one of its own. */
		if (pipe(pfd) || async_head_init(&ahu, 16, 1) || !tl_wait_parked(&ahu, 1))
			_exit(2);
		alarm(20);
		if (threadlet_exec(fn_block_throw, pfd, stack, &ahu) != 0)
			_exit(3);	/* not handed off */
		if (write(pfd[1], "z", 1) != 1)
			_exit(4);
		pause();
		_exit(5);
	}
	waitpid(pid, &st, 0);
	tl_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
	      "an exception in a cache-miss thread ends the program with SIGABRT (status %#x)",
	      st);
	async_head_exit(&ahu);
	return tl_exit();
}
