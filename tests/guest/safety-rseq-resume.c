// SPDX-License-Identifier: GPL-2.0
/*
 * A sleep in the rseq update on the way back to user space, inside a
 * threadlet (found by a helper's review).
 *
 * After a preemption the kernel updates the thread's rseq area before it
 * returns to user space (__rseq_handle_notify_resume()), reading t->rseq
 * again after each access, and an access may fault and sleep. Inside a
 * threadlet that sleep was handed off: the task went on with the rseq
 * area of the pool thread it swapped with (libthreadlet's have none),
 * the update failed, and force_sigsegv() killed the process.
 *
 * Made likely here: the head's rseq area is a private page of its own,
 * emptied before each threadlet and read, so that the zero page is mapped
 * there: the hook can read it, the update's write faults. Another thread
 * changes the protection of 64 MiB over and over, holding mmap_lock for
 * writing as it walks the page tables. A threadlet's sched_yield() lets
 * that thread run (all on one CPU), and its return updates the area: a
 * write fault that waits for mmap_lock. Expected: the process lives; such
 * sleeps stay with the task, counted as FB_CALL fallbacks, and nothing is
 * handed off.
 */
#include <sched.h>
#include <sys/rseq.h>
#include "safety.h"

#define ITERS	200
#define PG	4096
#define BALLAST	(64 << 20)

static struct async_head_user ahu;
static volatile int stop;

static char *ballast;

static void *protector(void *arg)
{
	(void)arg;
	while (!stop) {
		mprotect(ballast, BALLAST, PROT_READ);
		mprotect(ballast, BALLAST, PROT_READ | PROT_WRITE);
	}
	return NULL;
}

static long yield_fn(void *arg)
{
	(void)arg;
	sched_yield();
	return complete_threadlet_fn(NULL, &ahu);
}

static int pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void scenario(void *arg)
{
	struct threadlet_stats st0, st1;
	int inplace = 0, other = 0;
	unsigned long stack;
	struct rseq *rs;
	pthread_t f;

	(void)arg;
	/* Every thread on CPU 0, the pool's too: affinity is compared. */
	sf_ok(pin_cpu0() == 0, "this process on CPU 0");
	rs = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ballast = mmap(NULL, BALLAST, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stack = threadlet_stack_alloc(64 << 10);
	sf_ok(rs != MAP_FAILED && ballast != MAP_FAILED && !threadlet_err(stack) &&
	      async_head_init(&ahu, 16, 2) == 0 && tl_wait_parked(&ahu, 2),
	      "a page, 64 MiB, a stack and an async head with two threads");
	memset(ballast, 1, BALLAST);
	/* glibc's area out, the page's in. */
	if (__rseq_size)	/* registered with the struct's size, as libthreadlet's */
		syscall(SYS_rseq, (char *)__builtin_thread_pointer() + __rseq_offset,
			sizeof(*rs), RSEQ_FLAG_UNREGISTER, RSEQ_SIG);
	errno = 0;
	sf_ok(syscall(SYS_rseq, rs, sizeof(*rs), 0, RSEQ_SIG) == 0,
	      "this thread's rseq area is a page of its own (%s)", strerror(errno));
	sf_ok(pthread_create(&f, NULL, protector, NULL) == 0,
	      "a thread changes the protection of 64 MiB over and over");
	threadlet_stats(&st0);
	for (int i = 0; i < ITERS; i++) {
		long r;

		madvise(rs, PG, MADV_DONTNEED);
		(void)*(volatile uint32_t *)&rs->cpu_id_start;	/* the zero page */
		r = threadlet_exec(yield_fn, NULL, stack, &ahu);

		if (r == 1)
			inplace++;
		else
			other++;
		if (r == 0)	/* handed off: let it finish */
			for (int k = 0; k < 1000 && !async_ring_pop(&ahu); k++)
				usleep(1000);
	}
	threadlet_stats(&st1);
	stop = 1;
	pthread_join(f, NULL);
	tl_diag("%d threadlets: %d in place, %d other; %llu hand-offs, %llu fallbacks (last %s)",
		ITERS, inplace, other, st1.nr_handoffs - st0.nr_handoffs,
		st1.nr_fallbacks - st0.nr_fallbacks,
		threadlet_fallback_name(st1.last_fallback));
	sf_ok(inplace == ITERS && st1.nr_handoffs == st0.nr_handoffs,
	      "every threadlet ran in place, none handed off");
	if (st1.nr_fallbacks == st0.nr_fallbacks)
		sf_skip("no rseq update slept inside a threadlet");
	else
		sf_ok(st1.last_fallback == THREADLET_FB_CALL,
		      "the rseq update's sleeps stayed with the task (FB_CALL)");
	syscall(SYS_rseq, rs, sizeof(*rs), RSEQ_FLAG_UNREGISTER, RSEQ_SIG);
	async_head_exit(&ahu);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(scenario, NULL, 90);
	sf_child_ok(status, "a sleep in the rseq update inside a threadlet");
	return tl_exit();
}
