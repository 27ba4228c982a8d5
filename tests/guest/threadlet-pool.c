// SPDX-License-Identifier: GPL-2.0
/*
 * Elastic pools: async_head_init() starts min threads, a burst of blocked
 * threadlets makes the pool grow (the kernel sends a parked thread home
 * with ASYNC_GROW), idle threads above min end, a fixed pool never
 * changes, thread limits make growth fail without failing anyone, and the
 * kernel refuses bad pool settings. Two setups of one head at once: one
 * wins, and the other leaves its ring alone; a setup cancelled part way
 * leaves no registered head behind (both found by a helper's review).
 */
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "tl_test.h"
#include "tl_util.h"

#define BURST	256

static struct async_head_user ahu;
static unsigned long stacks[BURST];
static int ids[BURST];

/* Sleeps 20 ms: in place when no spare was parked, else on a spare. */
static long nap(void *data)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	return complete_threadlet_fn(data, &ahu);
}

/*
 * Runs @n nap threadlets; returns how many went async, after waiting for
 * all their completions (each exactly once) in *@all_ok.
 */
static int burst(int n, int *all_ok)
{
	int seen[BURST] = { 0 }, async = 0, inplace = 0, got = 0, bad = 0;

	for (int i = 0; i < n; i++) {
		long r = threadlet_exec(nap, &ids[i], stacks[i], &ahu);

		if (r == 0) {
			async++;
		} else if (r == 1) {
			inplace++, seen[i]++;
		} else {
			tl_diag("threadlet %d: threadlet_exec() returned %ld", i, r);
			bad++;
		}
	}
	while (got < async && !bad) {
		int *ev = tl_wait_one(&ahu);

		if (!ev || ev < ids || ev >= ids + n || seen[ev - ids]++) {
			tl_diag("completion %d of %d: event %p (ids %p..%p)", got + 1,
				async, (void *)ev, (void *)ids, (void *)(ids + n));
			bad++;
		} else {
			got++;
		}
	}
	for (int i = 0; i < n; i++) {
		if (seen[i] != 1)
			tl_diag("threadlet %d completed %d times", i, seen[i]);
		bad += seen[i] != 1;
	}
	*all_ok = !bad && async + inplace == n;
	return async;
}

static void grow_and_shrink(void)
{
	struct async_pool_stats st;
	long long t0, t1;
	int async, ok, threads;

	t0 = tl_now_ns();
	tl_ok(async_head_init(&ahu, 64, 1024) == 0, "async_head_init(64 entries, 1024 threads)");
	t1 = tl_now_ns();
	threads = tl_nr_threads() - 1;
	tl_ok(threads == TL_POOL_MIN && async_head_parked(&ahu) == TL_POOL_MIN,
	      "%d threads started and parked, not 1024 (%d parked)", threads,
	      (int)async_head_parked(&ahu));
	tl_diag("async_head_init(64, 1024) took %lld us", (t1 - t0) / 1000);
	tl_ok(ahu.low_watermark == TL_POOL_LOW && ahu.idle_timeout_ms == TL_POOL_IDLE_MS,
	      "elastic: low watermark %u, idle timeout %llu ms", ahu.low_watermark,
	      (unsigned long long)ahu.idle_timeout_ms);

	async = burst(BURST, &ok);
	tl_ok(ok, "a burst of %d blocking threadlets: all complete once (%d on spares)",
	      BURST, async);
	async_head_pool_stats(&ahu, &st);
	tl_ok(st.grown > 0 && st.threads > TL_POOL_MIN && st.threads <= 1024 &&
	      !st.grow_failed, "the pool grew to serve it: %u threads (%lu started on demand)",
	      st.threads, st.grown);
	tl_ok(async > TL_POOL_MIN, "more threadlets went async (%d) than min had threads", async);
	tl_diag("pool after the burst: %u threads, %d of %d threadlets on spares",
		st.threads, async, BURST);

	/* Idle: everything above min ends within the timeout (and some slack). */
	for (int i = 0; i < 50 && st.threads > TL_POOL_MIN; i++) {
		usleep(100000);
		async_head_pool_stats(&ahu, &st);
	}
	tl_ok(st.threads == TL_POOL_MIN && st.idle_exits > 0,
	      "idle threads above min end: %u threads, %lu ended", st.threads, st.idle_exits);
	tl_ok(tl_nr_threads_settle(1 + TL_POOL_MIN), "and are gone from /proc/self/task");
	async = burst(8, &ok);
	tl_ok(ok, "the shrunk pool serves threadlets (%d of 8 on spares)", async);
	async_head_exit(&ahu);
	tl_ok(tl_nr_threads_settle(1), "async_head_exit() ends every pool thread");
}

static void fixed_pool(void)
{
	struct async_pool_stats st;
	int ok;

	tl_ok(async_head_init_pool(&ahu, 64, 4, 4) == 0, "a fixed pool of 4");
	tl_ok(ahu.low_watermark == 0 && ahu.idle_timeout_ms == 0, "is not elastic");
	burst(32, &ok);
	async_head_pool_stats(&ahu, &st);
	tl_ok(ok && st.threads == 4 && !st.grown, "32 threadlets: all complete, still 4 threads");
	async_head_exit(&ahu);
	tl_ok(async_head_init_pool(&ahu, 64, 0, 4) == -EINVAL &&
	      async_head_init_pool(&ahu, 64, 5, 4) == -EINVAL &&
	      async_head_init_pool(&ahu, 64, 4, 1025) == -EINVAL,
	      "min 0, min > max, max > 1024: -EINVAL");
}

/* Blocks (a hand-off), then ends the thread it runs in: a pool thread. */
static long nap_exit(void *data)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	(void)data;
	nanosleep(&ts, NULL);
	pthread_exit(NULL);
}

static void *exit_head(void *arg)
{
	async_head_exit(&ahu);
	*(int *)arg = 1;
	return NULL;
}

/*
 * The rest of a threadlet that went async runs in a pool thread's
 * identity; pthread_exit() there ends that pool thread. The pool counts
 * it gone (libthreadlet's thread-specific data destructor): before, it
 * stayed counted, async_head_exit() waited for it for ever, and the pool
 * never replaced it.
 */
static void pool_thread_exits(void)
{
	struct async_pool_stats st;
	struct timespec until;
	int done = 0;
	pthread_t t;
	long r;

	tl_ok(async_head_init_pool(&ahu, 64, 2, 2) == 0 && tl_wait_parked(&ahu, 2),
	      "a fixed pool of 2, parked");
	r = threadlet_exec(nap_exit, NULL, stacks[0], &ahu);
	tl_ok(r == 0, "a threadlet that blocks is handed off (%ld)", r);
	for (int i = 0; i < 3000; i++) {
		async_head_pool_stats(&ahu, &st);
		if (st.threads < 2)
			break;
		usleep(1000);
	}
	tl_ok(st.threads == 1, "its pthread_exit() in the pool thread: the pool counts 1 thread (%u)",
	      st.threads);
	pthread_create(&t, NULL, exit_head, &done);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	tl_ok(pthread_timedjoin_np(t, NULL, &until) == 0 && done,
	      "async_head_exit() returns");
}

/*
 * Growth that RLIMIT_NPROC stops is counted; every threadlet completes.
 * The limit is set once the pool's min threads run, at the number of
 * tasks this user has then (the child and its 4 pool threads), so every
 * growth fails whatever the timing: a burst always asks for one.
 */
static void nproc_limit(void)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 5, 5 };
		struct async_pool_stats ps;
		int ok, async;

		if (setgid(65534) || setuid(65534) ||
		    async_head_init_pool(&ahu, 64, 4, 64) ||
		    setrlimit(RLIMIT_NPROC, &rl))
			_exit(2);
		async = burst(64, &ok);
		/*
		 * A pool thread that was sent to grow may still hold the
		 * place it reserved for the thread it failed to start.
		 */
		async_head_pool_stats(&ahu, &ps);
		for (int i = 0; i < 200 && ps.threads != 4; i++) {
			usleep(10000);
			async_head_pool_stats(&ahu, &ps);
		}
		printf("# RLIMIT_NPROC 5: %u threads, %lu started, %lu failed, %d async\n",
		       ps.threads, ps.grown, ps.grow_failed, async);
		async_head_exit(&ahu);
		fflush(stdout);
		_exit(ok && ps.grow_failed > 0 && ps.threads == 4 ? 0 : 1);
	}
	st = -1;
	if (pid > 0)
		waitpid(pid, &st, 0);
	tl_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "RLIMIT_NPROC stops growth: counted, and every threadlet completes (status %#x)",
	      st);
}

static void bad_settings(void)
{
	struct async_head_user h;
	static unsigned long long ring[4];

	memset(&h, 0, sizeof(h));
	h.completion_ring = (unsigned long)ring;
	h.ring_size_bytes = sizeof(ring);
	h.max_cachemiss_threads = 4;
	h.low_watermark = 5;
	tl_errno(syscall(__NR_async_register, &h, sizeof(h), 0), EINVAL,
		 "low_watermark above max_cachemiss_threads");
	h.low_watermark = 4;
	h.idle_timeout_ms = ASYNC_MAX_IDLE_MS + 1;
	tl_errno(syscall(__NR_async_register, &h, sizeof(h), 0), EINVAL,
		 "idle_timeout_ms above ASYNC_MAX_IDLE_MS");
	h.idle_timeout_ms = ASYNC_MAX_IDLE_MS;
	tl_ok(syscall(__NR_async_register, &h, sizeof(h), 0) == 0 &&
	      syscall(__NR_async_register, &h, sizeof(h), ASYNC_UNREGISTER) == 0,
	      "the largest settings register");
}

static struct async_head_user race_ahu;
static pthread_barrier_t race_bar;

static void *race_init(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&race_bar);
	return (void *)(long)async_head_init_pool(&race_ahu, 64, 1, 1);
}

/*
 * Before the fix both passed the check for a pool, and the loser's
 * failure (the kernel's -EBUSY) zeroed the winner's ring pointer.
 */
static void init_race(void)
{
	int runs = 200, one = 0, ring_kept = 0;

	for (int n = 0; n < runs; n++) {
		pthread_t t[2];
		void *r[2];

		pthread_barrier_init(&race_bar, NULL, 2);
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, race_init, NULL);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], &r[i]);
		pthread_barrier_destroy(&race_bar);
		if ((r[0] == 0) + (r[1] == 0) == 1 &&
		    (long)r[0] + (long)r[1] == -EBUSY)
			one++;
		if (r[0] == 0 || r[1] == 0) {
			ring_kept += race_ahu.completion_ring != 0 && race_ahu.ring_size_bytes != 0;
			async_head_exit(&race_ahu);
		}
	}
	tl_ok(one == runs, "two setups of one head at once: one wins, one -EBUSY (%d of %d)",
	      one, runs);
	tl_ok(ring_kept == runs, "and the winner's ring stays set (%d of %d)", ring_kept, runs);
}

static void *cancel_init(void *arg)
{
	return (void *)(long)async_head_init_pool(arg, 64, 32, 32);
}

/*
 * The setup waits for its threads to park (a sleep, a cancellation
 * point). Cancelled there, it left the head registered with 32 threads
 * parked and in no list: async_head_exit() said -EINVAL. Now it runs to
 * its end, and the cancellation acts at the thread's next cancellation
 * point.
 */
static void init_cancel(void)
{
	static struct async_head_user heads[10];
	int bad = 0, finished = 0;

	for (int n = 0; n < 10; n++) {
		pthread_t t;
		void *res;

		pthread_create(&t, NULL, cancel_init, &heads[n]);
		usleep(2000 + n * 3000);
		pthread_cancel(t);
		pthread_join(t, &res);
		if (res == PTHREAD_CANCELED) {
			bad += async_head_parked(&heads[n]) >= 0;
		} else {
			finished++;
			bad += res != NULL || async_head_exit(&heads[n]) != 0;
		}
	}
	tl_ok(!bad, "a setup cancelled part way leaves no head behind (%d finished, %d bad)",
	      finished, bad);
}

int main(void)
{
	for (int i = 0; i < BURST; i++) {
		ids[i] = i;
		stacks[i] = threadlet_stack_alloc(16 << 10);
	}
	grow_and_shrink();
	fixed_pool();
	pool_thread_exits();
	nproc_limit();
	bad_settings();
	init_race();
	init_cancel();
	return tl_exit();
}
