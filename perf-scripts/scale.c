// SPDX-License-Identifier: GPL-2.0
/*
 * Hand-offs per second with several heads at once: HEADS threads (none of
 * them the main thread), each with its own async head and pool, each in a
 * loop of exec -> the threadlet blocks in read() on its own pipe ->
 * hand-off -> write the byte -> completion popped. "futex" runs the same
 * loops with a pthread worker per head woken by FUTEX_WAKE. A lock that
 * every hand-off takes (tasklist_lock was one) keeps two vCPUs from doing
 * twice the work of one: compare boots with 1 and 2. "syscall" is the
 * reference: each head loops on getppid(), which shares nothing, so its
 * 2 / 1 ratio is what the host gave two vCPUs in that run.
 *
 * Usage: scale threadlet|futex|syscall [seconds] [heads]
 * Output: "SCALE <method> <heads> <loops per second>"; exit 1 if any loop
 * went wrong (a fallback, a lost or foreign completion).
 */
#include <linux/futex.h>
#include <pthread.h>
#include <string.h>
#include <threadlet.h>

#include "bench.h"

#define MAX_HEADS	8

struct head {
	struct async_head_user ahu;
	unsigned long stack;
	int pfd[2], quit;	/* quit: the head's last job, the worker ends */
	long n, bad;
	char c;
	uint32_t job, done;	/* futex */
	pthread_t worker;
};

static struct head heads[MAX_HEADS];
static volatile int stop;

static long blocker(void *data)
{
	struct head *h = data;

	if (read(h->pfd[0], &h->c, 1) != 1)
		h->bad++;
	return complete_threadlet_fn(h, &h->ahu);
}

static void *threadlet_head(void *arg)
{
	struct head *h = arg;

	if (async_head_init_pool(&h->ahu, 16, 2, 2)) {
		h->bad++;
		return NULL;
	}
	h->stack = threadlet_stack_alloc(64 << 10);
	while (!stop) {
		if (threadlet_exec(blocker, h, h->stack, &h->ahu) != 0)
			h->bad++;	/* ran in place: no spare */
		if (write(h->pfd[1], "s", 1) != 1)
			h->bad++;
		while (!async_ring_pop(&h->ahu))
			async_wait(1, h->ahu.user_ring_idx, &h->ahu);
		h->n++;
	}
	async_head_exit(&h->ahu);
	return NULL;
}

static void *futex_worker(void *arg)
{
	struct head *h = arg;
	uint32_t seen = 0;

	for (;;) {
		while (__atomic_load_n(&h->job, __ATOMIC_ACQUIRE) == seen)
			futex(&h->job, FUTEX_WAIT_PRIVATE, seen);
		seen = __atomic_load_n(&h->job, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&h->quit, __ATOMIC_ACQUIRE))
			return NULL;
		if (read(h->pfd[0], &h->c, 1) != 1)
			h->bad++;
		__atomic_add_fetch(&h->done, 1, __ATOMIC_RELEASE);
		futex(&h->done, FUTEX_WAKE_PRIVATE, 1);
	}
}

static void *futex_head(void *arg)
{
	struct head *h = arg;
	uint32_t d;

	if (pthread_create(&h->worker, NULL, futex_worker, h)) {
		h->bad++;
		return NULL;
	}
	while (!stop) {
		d = __atomic_load_n(&h->done, __ATOMIC_ACQUIRE);
		__atomic_add_fetch(&h->job, 1, __ATOMIC_RELEASE);
		futex(&h->job, FUTEX_WAKE_PRIVATE, 1);
		if (write(h->pfd[1], "s", 1) != 1)
			h->bad++;
		while (__atomic_load_n(&h->done, __ATOMIC_ACQUIRE) == d)
			futex(&h->done, FUTEX_WAIT_PRIVATE, d);
		h->n++;
	}
	/*
	 * Only this head's worker: a global flag could end another head's
	 * worker before it finishes that head's job, which then waits for it
	 * forever (a 2-vCPU boot hung so).
	 */
	__atomic_store_n(&h->quit, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&h->job, 1, __ATOMIC_RELEASE);
	futex(&h->job, FUTEX_WAKE_PRIVATE, 1);
	pthread_join(h->worker, NULL);
	return NULL;
}

static void *syscall_head(void *arg)
{
	struct head *h = arg;

	while (!stop) {
		syscall(SYS_getppid);
		h->n++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *method = argc > 1 ? argv[1] : "threadlet";
	int secs = argc > 2 ? atoi(argv[2]) : 5, nheads = argc > 3 ? atoi(argv[3]) : 2;
	int fut = !strcmp(method, "futex"), sys = !strcmp(method, "syscall");
	void *(*head_fn)(void *) = fut ? futex_head : sys ? syscall_head : threadlet_head;
	pthread_t t[MAX_HEADS];
	long total = 0, bad = 0;
	uint64_t t0;

	if ((!fut && !sys && strcmp(method, "threadlet")) || secs < 1 || nheads < 1 ||
	    nheads > MAX_HEADS) {
		fprintf(stderr, "usage: scale threadlet|futex|syscall [seconds] [heads 1-%d]\n",
			MAX_HEADS);
		return 2;
	}
	for (int i = 0; i < nheads; i++)
		if (pipe(heads[i].pfd))
			return 1;
	t0 = now();
	for (int i = 0; i < nheads; i++)
		if (pthread_create(&t[i], NULL, head_fn, &heads[i]))
			return 1;
	sleep(secs);
	stop = 1;
	for (int i = 0; i < nheads; i++) {
		pthread_join(t[i], NULL);
		total += heads[i].n;
		bad += heads[i].bad;
	}
	printf("SCALE %s %d %.0f\n", method, nheads, total / ((now() - t0) / 1e9));
	if (bad)
		printf("# scale: %ld loops went wrong (fallbacks or failed calls)\n", bad);
	return bad ? 1 : 0;
}
