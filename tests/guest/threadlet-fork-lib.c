// SPDX-License-Identifier: GPL-2.0
/*
 * libthreadlet across fork() (found by a helper's review):
 *
 * 1. A child has no pool: the kernel keeps none across fork. The library
 *    forgot the parent's pool list but not the pool the forking thread
 *    remembered for threadlet_submit(), so the child queued its jobs on
 *    the parent's pool, whose threads do not exist there: submit said 0
 *    (queued) and the job never ran, even after the child's own
 *    async_head_init() on the same head. Expected: -EINVAL without a pool,
 *    and the job runs once the child has one.
 * 2. fork() while another thread holds the library's stack list lock:
 *    the child inherited the lock held by a thread it does not have, and
 *    its first threadlet_stack_alloc() hung. Expected: every child
 *    allocates a stack and exits.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <threadlet.h>
#include <time.h>
#include <unistd.h>
#include "tl_test.h"
#include "tl_util.h"

static struct async_head_user ahu;
static volatile int ran, stop;

static long sleeper(void *d)
{
	struct timespec ts = { 0, 300 * 1000 * 1000 };

	(void)d;
	nanosleep(&ts, NULL);
	return 0;
}

static long setflag(void *d)
{
	(void)d;
	ran = 1;
	return 0;
}

/* The child's verdict as its exit status: a bit per failed check. */
static int child_submit(void)
{
	static int ev[2];
	int bad = 0;
	long r;

	r = threadlet_submit(setflag, NULL, &ev[0], threadlet_stack_alloc(65536), &ahu);
	usleep(100000);
	if (r != -EINVAL || ran)
		bad |= 1;
	if (async_head_init(&ahu, 64, 8))
		return bad | 2;
	r = threadlet_submit(setflag, NULL, &ev[1], threadlet_stack_alloc(65536), &ahu);
	for (int i = 0; i < 2000 && !async_ring_pop(&ahu); i++)
		usleep(1000);
	if (r < 0 || !ran)
		bad |= 4;
	if (async_head_exit(&ahu))
		bad |= 8;
	return bad;
}

static void *churn(void *arg)
{
	(void)arg;
	while (!stop) {
		unsigned long s[8];

		for (int i = 0; i < 8; i++)
			s[i] = threadlet_stack_alloc(1 << 14);
		for (int i = 0; i < 8; i++)
			threadlet_stack_free(s[i]);
	}
	return NULL;
}

int main(void)
{
	static int ev[16];
	int st = -1, hung = 0, bad = 0, n = 0;
	pthread_t t;
	pid_t p;

	tl_ok(async_head_init(&ahu, 256, 16) == 0, "async head");
	for (int i = 0; i < 16; i++)
		n += threadlet_submit(sleeper, NULL, &ev[i], threadlet_stack_alloc(65536), &ahu) == 0;
	tl_diag("%d of 16 submitted threadlets blocked or queued", n);
	p = fork();
	if (p == 0)
		_exit(child_submit());
	waitpid(p, &st, 0);
	tl_ok(WIFEXITED(st) && !(WEXITSTATUS(st) & 1),
	      "child: threadlet_submit() without a pool of its own is -EINVAL, runs nothing (status %#x)", st);
	tl_ok(WIFEXITED(st) && !(WEXITSTATUS(st) & ~1),
	      "child: after its own async_head_init(), the job runs (status %#x)", st);
	/* The submitted threadlets that went async post their events. */
	for (int i = 0; i < 16 && n; i++, n--)
		if (!tl_wait_one(&ahu))
			break;

	pthread_create(&t, NULL, churn, NULL);
	for (int i = 0; i < 40; i++) {
		p = fork();
		if (p == 0) {
			unsigned long s = threadlet_stack_alloc(1 << 14);

			threadlet_stack_free(s);
			_exit(threadlet_err(s) ? 1 : 0);
		}
		for (n = 0; n < 3000; n++) {
			if (waitpid(p, &st, WNOHANG) == p)
				break;
			usleep(1000);
		}
		if (n == 3000) {
			hung++;
			kill(p, SIGKILL);
			waitpid(p, &st, 0);
		} else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			bad++;
		}
	}
	stop = 1;
	pthread_join(t, NULL);
	tl_ok(!hung && !bad, "40 forks beside a thread churning stacks: %d children hung, %d failed",
	      hung, bad);
	async_head_exit(&ahu);
	return tl_exit();
}
