// SPDX-License-Identifier: GPL-2.0
/*
 * The wake-up of a head waiting in async_wait(). A completer that parks
 * right after posting does not wake a lone waiter on its CPU: it makes it
 * its successor, and the park's sleep switches to it (async_wake(),
 * threadlet_next in __schedule()). Whatever path a completion takes, every
 * waiter whose condition holds must return, and none before: a waiter
 * whose count is not reached yet sleeps again, two waiters both return, a
 * waiter of another nice value (which the direct switch refuses) returns,
 * a waiter interrupted by signals returns, and thousands of round trips
 * lose no wake-up, and a waiter for eight completions is woken once, not
 * by each post. Everything runs on one CPU, where the direct path is
 * taken. A watchdog turns a lost wake-up into a failure, not a hang: it
 * fails the test when no round ends for 30 s, however long the whole run
 * takes (a debug kernel under TCG takes minutes), and shows where each
 * task is.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "safety.h"
#include "tl_test.h"
#include "tl_util.h"

#define ROUNDS	2000

static struct async_head_user ahu;
static int pfd[2];
static unsigned long stacks[2];
static const char *volatile phase = "setup";
static volatile unsigned long progress;
static long long phase_start;

/* Starts phase @what, and says how long the one before took. */
static void set_phase(const char *what)
{
	long long now = tl_now_ns();

	if (phase_start)
		tl_diag("\"%s\" took %lld ms", phase, (now - phase_start) / 1000000);
	phase_start = now;
	phase = what;
	progress++;
}

static long read_one(void *data)
{
	char c;

	(void)data;
	if (read(pfd[0], &c, 1) != 1)
		return complete_threadlet_fn(NULL, &ahu);
	return complete_threadlet_fn(&ahu, &ahu);
}

/*
 * Signals are blocked here: the timer's must not cut the sleep short.
 * @progress counts the steps that end (a round, a phase).
 */
static void *watchdog(void *arg)
{
	unsigned long seen = progress;
	long long last = tl_now_ns();

	(void)arg;
	for (;;) {
		sleep(1);
		if (progress != seen) {
			seen = progress;
			last = tl_now_ns();
		} else if (tl_now_ns() - last > 30 * 1000000000LL) {
			break;
		}
	}
	tl_diag("ring %llu/%llu, %ld parked", ahu.kernel_ring_idx, ahu.user_ring_idx,
		async_head_parked(&ahu));
	sf_dump_tasks(getpid());
	tl_ok(0, "no wake-up lost: \"%s\" made no progress for 30 s (step %lu)", phase,
	      progress);
	tl_exit();
	_exit(1);
}

/*
 * Starts a threadlet on stack @s that blocks on the pipe: 1 if it went
 * async. A stack is free again once its completion is popped.
 */
static int start_blocked(int s)
{
	return threadlet_exec(read_one, NULL, stacks[s], &ahu) == 0;
}

static void *write_later(void *arg)
{
	usleep((useconds_t)(unsigned long)arg);
	if (write(pfd[1], "x", 1) != 1)
		abort();
	return NULL;
}

static int pop_all(void)
{
	int n = 0;

	while (async_ring_pop(&ahu))
		n++;
	return n;
}

/* async_wait(2) returns only after the second completion. */
static void wait_for_two(void)
{
	unsigned long long idx = ahu.user_ring_idx;
	pthread_t th;
	long ret;

	set_phase("wait for two");
	tl_ok(start_blocked(0) && start_blocked(1), "two threadlets blocked on the pipe");
	tl_ok(write(pfd[1], "x", 1) == 1, "release the first");
	pthread_create(&th, NULL, write_later, (void *)100000UL);
	ret = async_wait(2, idx, &ahu);
	tl_ok(ret >= 2 && ahu.kernel_ring_idx - idx == 2,
	      "async_wait(2) returns after both completions (%ld, %llu posted)", ret,
	      ahu.kernel_ring_idx - idx);
	pthread_join(th, NULL);
	tl_ok(pop_all() == 2, "both events popped");
}

static unsigned long long waiter_idx;
static long waiter_ret;
static int waiter_nice;

static void *waiter(void *arg)
{
	(void)arg;
	if (waiter_nice)
		setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), waiter_nice);
	waiter_ret = async_wait(1, waiter_idx, &ahu);
	return NULL;
}

/*
 * Blocks a threadlet on the pipe and starts a thread at @nice that waits
 * for its completion; returns once that thread is asleep in async_wait().
 */
static pthread_t start_waiter(const char *what, int nice)
{
	pthread_t th;

	set_phase(what);
	waiter_idx = ahu.user_ring_idx;
	waiter_nice = nice;
	tl_ok(start_blocked(0), "%s: a threadlet blocked on the pipe", what);
	pthread_create(&th, NULL, waiter, NULL);
	usleep(50000);
	return th;
}

/* Two threads wait: one completion lets both go. */
static void two_waiters(void)
{
	pthread_t th = start_waiter("two waiters", 0), w;
	long ret;

	pthread_create(&w, NULL, write_later, (void *)50000UL);
	ret = async_wait(1, waiter_idx, &ahu);
	pthread_join(w, NULL);
	pthread_join(th, NULL);
	tl_ok(ret == 1 && waiter_ret == 1, "both waiters return one completion (%ld, %ld)", ret,
	      waiter_ret);
	tl_ok(pop_all() == 1, "the event popped");
}

/*
 * The lone waiter has another nice value than the completer: the direct
 * switch cannot give it the completer's place, so it is enqueued.
 */
static void other_nice(void)
{
	pthread_t th = start_waiter("a waiter of another nice value", 5);

	tl_ok(write(pfd[1], "x", 1) == 1, "release it");
	pthread_join(th, NULL);
	tl_ok(waiter_ret == 1, "a waiter at nice 5 returns one completion (%ld)", waiter_ret);
	tl_ok(pop_all() == 1, "the event popped");
}

static volatile int ticks;

static void on_tick(int sig)
{
	(void)sig;
	ticks++;
}

/*
 * Round trips: block, write, wait, pop. @itimer: a 1 ms timer interrupts
 * the waits (an -EINTR is retried). The timer's signals take most of the
 * time on a debug kernel under TCG (each costs about as much as its
 * period there), so that phase also ends after 20 s, with at least
 * MIN_ROUNDS done.
 */
#define MIN_ROUNDS	100

static void round_trips(int itimer)
{
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	struct sigaction sa = { .sa_handler = on_tick, .sa_flags = SA_RESTART };
	int blocked = 0, got = 0, eintr = 0, bad = 0, rounds = 0;
	long long end = tl_now_ns() + 20 * 1000000000LL;

	set_phase(itimer ? "round trips under a 1 ms timer" : "round trips");
	if (itimer) {
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
	}
	for (int i = 0; i < ROUNDS && (!itimer || i < MIN_ROUNDS || tl_now_ns() < end); i++) {
		unsigned long long idx = ahu.user_ring_idx;
		long ret;

		rounds++;
		if (!start_blocked(0)) {
			/* It ran in place, for want of a hand-off: no event. */
			struct threadlet_stats st;

			threadlet_stats(&st);
			tl_diag("round %d: ran in place (last fallback %s, parked %ld)", i,
				threadlet_fallback_name(st.last_fallback), async_head_parked(&ahu));
			bad++;
			continue;
		}
		blocked++;
		if (write(pfd[1], "x", 1) != 1)
			bad++;
		while ((ret = async_wait(1, idx, &ahu)) == -EINTR)
			eintr++;
		if (ret != 1) {
			tl_diag("round %d: async_wait returned %ld, ring %llu/%llu", i, ret,
				ahu.kernel_ring_idx, ahu.user_ring_idx);
			bad++;
		}
		got += pop_all();
		progress++;
	}
	if (itimer) {
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
		sa.sa_handler = SIG_DFL;
		sigaction(SIGALRM, &sa, NULL);
	}
	tl_ok(rounds >= MIN_ROUNDS && blocked == rounds && got == rounds && !bad,
	      "%s: %d of %d rounds blocked, %d completions, %d bad waits (%d EINTR, %d ticks)",
	      phase, blocked, rounds, got, bad, eintr, ticks);
}

/*
 * A waiter for eight completions sleeps through the first seven posts:
 * async_wait()'s wake function checks its count, so only the eighth wakes
 * it. Counted with its voluntary context switches, which a wake-up for a
 * short count adds one by one (it wakes, finds seven or fewer, sleeps).
 * The posts come from this thread with async_complete(), a pause after
 * each, so that a waiter woken early would run and sleep again.
 */
static long many_nvcsw;

static void *wait_for_eight(void *arg)
{
	struct rusage before, after;

	(void)arg;
	getrusage(RUSAGE_THREAD, &before);
	waiter_ret = async_wait(8, waiter_idx, &ahu);
	getrusage(RUSAGE_THREAD, &after);
	many_nvcsw = after.ru_nvcsw - before.ru_nvcsw;
	return NULL;
}

static void wait_for_eight_posts(void)
{
	static int tokens[8];
	pthread_t th;
	int ok = 1;

	set_phase("a waiter for eight");
	waiter_idx = ahu.user_ring_idx;
	pthread_create(&th, NULL, wait_for_eight, NULL);
	usleep(50000);
	for (int i = 0; i < 8; i++) {
		ok &= syscall(__NR_async_complete, &tokens[i], &ahu) == 0;
		usleep(5000);
	}
	pthread_join(th, NULL);
	tl_ok(ok && waiter_ret == 8, "a waiter for eight returns with eight (%ld)", waiter_ret);
	tl_ok(many_nvcsw >= 1 && many_nvcsw <= 2,
	      "and slept through the first seven posts (%ld context switches)", many_nvcsw);
	tl_ok(pop_all() == 8, "the eight events popped");
}

int main(void)
{
	pthread_t dog;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	tl_ok(sched_setaffinity(0, sizeof(one), &one) == 0, "pinned to CPU 0");
	tl_ok(pipe(pfd) == 0 && async_head_init(&ahu, 64, 4) == 0, "a ring of 64, a pool of 4");
	stacks[0] = threadlet_stack_alloc(64 << 10);
	stacks[1] = threadlet_stack_alloc(64 << 10);
	tl_ok(stacks[0] && stacks[1], "two threadlet stacks");
	{
		sigset_t all, old;

		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		pthread_create(&dog, NULL, watchdog, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_detach(dog);
	}

	wait_for_two();
	two_waiters();
	other_nice();
	wait_for_eight_posts();
	round_trips(0);
	round_trips(1);
	set_phase("exit");

	async_head_exit(&ahu);
	threadlet_stack_free(stacks[0]);
	threadlet_stack_free(stacks[1]);
	return tl_exit();
}
