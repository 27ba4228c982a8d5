// SPDX-License-Identifier: GPL-2.0
/*
 * A timer on a thread's own CPU clock stays with the kernel task whose CPU
 * time it measures, while every lookup of it goes by the thread ID it was
 * set for. A hand-off moved the ID and left the timer queued on the task
 * that no longer had it: once the identity with that ID exited,
 * timer_delete() found no task, warned (posix-cpu-timers.c, "should never
 * happen") and freed the timer still queued, a use-after-free when the old
 * task exited (KASAN, found by a helper's review, as an unprivileged
 * user). The check meant to refuse such a hand-off tested a flag that 6.1
 * sets only for process timers.
 *
 * Expected, as uid 65534: a threadlet of a thread with an armed thread CPU
 * timer blocks in place (FB_TASK); the identity exits; timer_delete()
 * returns 0, and the kernel log stays clean (the runner fails on the
 * warning). Once no timer is armed, the next threadlet is handed off.
 */
#include <time.h>
#include "safety.h"

static struct async_head_user ahu;
static unsigned long stack;

struct out {
	long exec1, exec2, del;
	unsigned long long handoffs1, handoffs2;
	unsigned int last_fallback;
	int armed, done1, done2;
};

static struct out *o;
static timer_t tmr;

static void *h_main(void *arg)
{
	struct threadlet_stats s0, s1;
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };
	struct itimerspec its = { .it_value = { .tv_sec = 1000 } };
	struct sf_block b;

	(void)arg;
	o->armed = !syscall(__NR_timer_create, CLOCK_THREAD_CPUTIME_ID, &sev, &tmr) &&
		   !syscall(__NR_timer_settime, tmr, 0, &its, NULL);
	if (!o->armed || !sf_block_prepare(&b, &ahu))
		return NULL;
	o->exec1 = sf_block_run(&b, stack, &s0, &s1, &o->done1);
	o->handoffs1 = s1.nr_handoffs - s0.nr_handoffs;
	o->last_fallback = s1.last_fallback;
	sf_block_finish(&b);
	return NULL;	/* this identity exits; its timer must go with its task */
}

static void run(void *arg)
{
	struct threadlet_stats s0, s1;
	struct sf_block b;
	pthread_t h;

	(void)arg;
	if (setgid(65534) || setuid(65534))
		return;
	stack = threadlet_stack_alloc(64 << 10);
	if (threadlet_err(stack) || async_head_init(&ahu, 16, 2) || !tl_wait_parked(&ahu, 2))
		return;
	if (pthread_create(&h, NULL, h_main, NULL))
		return;
	pthread_join(h, NULL);
	o->del = syscall(__NR_timer_delete, tmr);
	usleep(100000);
	/* No timer left: a hand-off again. */
	tl_wait_parked(&ahu, 2);
	if (sf_block_prepare(&b, &ahu)) {
		o->exec2 = sf_block_run(&b, stack, &s0, &s1, &o->done2);
		o->handoffs2 = s1.nr_handoffs - s0.nr_handoffs;
		sf_block_finish(&b);
	}
	async_head_exit(&ahu);
}

int main(void)
{
	int status;

	sf_init();
	o = sf_shared(sizeof(*o));
	for (int i = 0; i < 3; i++) {
		memset(o, 0, sizeof(*o));
		o->exec1 = o->exec2 = o->del = -99;
		status = sf_child(run, NULL, 60);
		sf_ok(sf_exited0(status) && o->armed, "round %d: a thread CPU timer armed, as uid 65534 (%s)",
		      i, sf_status_str(status));
		sf_ok(o->exec1 == 1 && o->done1 && o->handoffs1 == 0 &&
		      o->last_fallback == THREADLET_FB_TASK,
		      "round %d: its threadlet blocked in place (threadlet_exec %ld, %llu hand-offs, last fallback %u)",
		      i, o->exec1, o->handoffs1, o->last_fallback);
		sf_ok(o->del == 0, "round %d: timer_delete() after the thread exited: %ld", i, o->del);
		sf_ok(o->exec2 == 0 && o->done2 && o->handoffs2 == 1,
		      "round %d: with no timer armed, the next threadlet is handed off (%ld, %llu)",
		      i, o->exec2, o->handoffs2);
	}
	return tl_exit();
}
