// SPDX-License-Identifier: GPL-2.0
/*
 * Threadlet micro-benchmark: the cost of one operation, in ns of
 * CLOCK_MONOTONIC (under QEMU -icount shift=0, guest instructions), averaged
 * over many iterations after a warm-up; the loops that sleep and wake
 * (pthread, handoff, futex_handoff) report the median iteration. Each
 * measurement is one entry of METHODS() below; "micro [name...]" runs the
 * named ones only. Output: "RESULT <name> <ns/op> <iterations> <what>"
 * (perf-scripts/report.py holds the baselines and targets); every operation
 * is checked, and any failed check makes the exit status 1.
 *
 * (f) hand-off: t0 in a threadlet right before it blocks in read() on an
 * empty pipe, t1 in its head right after threadlet_exec() returned 0 in
 * another task. (h) the thread-pool alternative, timed the same way: t0 in
 * the head before FUTEX_WAKE of a worker asleep in FUTEX_WAIT, t1 in the
 * worker after its wait returned. Each (f) and (h) iteration starts with
 * the spare parked, or the worker asleep, and checks that it was woken.
 * profile and profile_futex (only when named) run (f)'s and (h)'s round
 * trips without those waits, for scripts/profile.sh to sample.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <threadlet.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define STACK_SIZE	(64 << 10)
#define RING_ENTRIES	16
#define POOL_THREADS	2

#define N_CHEAP		20000	/* call, threadlets, getppid, clock */
#define N_THREAD	1000	/* pthread_create + join */
#define N_HANDOFF	1000	/* hand-offs and round trips */
#define N_WARM_CHEAP	1000
#define N_WARM_SLOW	50
#define N_PROFILE	20000
#define TICK_GAP	1000		/* ns between two clock reads: an interrupt */
#define TICK_WAIT_MAX	3000000		/* ns: three ticks at HZ=1000 */

static struct async_head_user ahu;
static unsigned long stack;
static int failed;

/*
 * Every timed loop starts right after an interrupt, normally the timer
 * tick: under -icount the ticks land at different instruction counts in
 * different boots, and a loop that took one tick more or less would not
 * repeat ("call" measured 5.0 in one boot and 5.2 in the next).
 */
static void tick_sync(void)
{
	uint64_t start = now(), t0 = start, t1;

	do {
		t1 = now();
		if (t1 - t0 > TICK_GAP)
			return;
		t0 = t1;
	} while (t1 - start < TICK_WAIT_MAX);
}

static void check(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void check(int cond, const char *fmt, ...)
{
	va_list ap;

	if (cond)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "micro: CHECK FAILED: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	failed = 1;
}

static int open_pipe(int pfd[2])
{
	if (!pipe(pfd))
		return 0;
	check(0, "pipe: %s", strerror(errno));
	return -1;
}

/*
 * bench_<name>(n, warm, fig), the methods: warm untimed iterations, then n
 * timed ones; fig[] gets the figures of its rows, in ns per operation.
 */
static unsigned long nr_empty;

/*
 * Shaped like null_fn, so that the difference is the threadlet machinery
 * alone; noipa: really called, and its result really tested.
 */
static __attribute__((noipa)) long empty_fn(void *data)
{
	(void)data;
	nr_empty++;
	return 1;
}

static void bench_call(long n, long warm, double *fig)
{
	long i, bad = 0;
	uint64_t t0;

	for (i = 0; i < warm; i++)
		bad += empty_fn(NULL) != 1;
	tick_sync();
	t0 = now();
	for (i = 0; i < n; i++)
		bad += empty_fn(NULL) != 1;
	t0 = now() - t0;
	check(!bad, "direct call: %ld calls did not return 1", bad);
	check(nr_empty == (unsigned long)(n + warm), "empty_fn ran %lu times", nr_empty);
	fig[0] = (double)t0 / n;
}

static unsigned long nr_null;

static long null_fn(void *data)
{
	(void)data;
	nr_null++;
	return complete_threadlet_fn(NULL, &ahu);
}

static void bench_null_vdso(long n, long warm, double *fig)
{
	struct threadlet_stats st0, st1;
	long i, r, bad = 0;
	unsigned long runs;
	uint64_t t0;

	for (i = 0; i < warm; i++)
		bad += threadlet_exec(null_fn, NULL, stack, &ahu) != 1;
	threadlet_stats(&st0);
	runs = nr_null;
	tick_sync();
	t0 = now();
	for (i = 0; i < n; i++) {
		r = threadlet_exec(null_fn, NULL, stack, &ahu);
		bad += r != 1;
	}
	t0 = now() - t0;
	threadlet_stats(&st1);
	check(!bad, "null threadlet: %ld execs did not return 1", bad);
	check(nr_null - runs == (unsigned long)n,
	      "null threadlet: ran %lu times, want %ld", nr_null - runs, n);
	check(st1.nr_sync - st0.nr_sync == (unsigned long long)n &&
	      st1.nr_handoffs == st0.nr_handoffs,
	      "null threadlet: area counts %llu sync, %llu hand-offs, want %ld, 0",
	      st1.nr_sync - st0.nr_sync, st1.nr_handoffs - st0.nr_handoffs, n);
	check(async_ring_pop(&ahu) == NULL, "null threadlet: something was posted");
	fig[0] = (double)t0 / n;
}

/*
 * The library picks the syscall path once per process, at first use, from
 * THREADLET_FORCE_SYSCALL: null_vdso's loop in a fork child, which sends
 * back its figure and exits with its checks' status.
 */
static void bench_null_syscall(long n, long warm, double *fig)
{
	int pfd[2], status;
	pid_t pid;

	if (open_pipe(pfd))
		return;
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		setenv("THREADLET_FORCE_SYSCALL", "1", 1);
		stack = threadlet_stack_alloc(STACK_SIZE);
		check(!threadlet_err(stack), "child: threadlet_stack_alloc");
		check(async_head_init(&ahu, RING_ENTRIES, 1) == 0, "child: async_head_init");
		check(threadlet_uses_vdso() == 0,
		      "child: THREADLET_FORCE_SYSCALL=1 still uses the vDSO");
		if (!failed)
			bench_null_vdso(n, warm, fig);
		async_head_exit(&ahu);
		if (write(pfd[1], fig, sizeof(*fig)) != sizeof(*fig))
			_exit(2);
		_exit(failed);
	}
	close(pfd[1]);
	check(pid > 0, "fork: %s", strerror(errno));
	check(read(pfd[0], fig, sizeof(*fig)) == sizeof(*fig),
	      "no result from the syscall-path child");
	close(pfd[0]);
	check(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "syscall-path child failed (status 0x%x)", status);
}

static void bench_getppid(long n, long warm, double *fig)
{
	pid_t ppid = getppid();
	long i, bad = 0;
	uint64_t t0;

	for (i = 0; i < warm; i++)
		syscall(SYS_getppid);
	tick_sync();
	t0 = now();
	for (i = 0; i < n; i++)
		bad += syscall(SYS_getppid) != ppid;
	t0 = now() - t0;
	check(!bad, "getppid: %ld wrong answers", bad);
	fig[0] = (double)t0 / n;
}

static void bench_clock(long n, long warm, double *fig)
{
	uint64_t t0, sink = 0;
	long i;

	for (i = 0; i < warm; i++)
		sink += now();
	tick_sync();
	t0 = now();
	for (i = 0; i < n; i++)
		sink += now();
	t0 = now() - t0;
	check(sink != 0, "clock_gettime returned 0");
	fig[0] = (double)t0 / n;
}

static unsigned long nr_thread_runs;

static void *empty_thread(void *arg)
{
	(void)arg;
	__atomic_fetch_add(&nr_thread_runs, 1, __ATOMIC_RELAXED);
	return NULL;
}

/*
 * Per-iteration costs of the loops that sleep and wake: their mean moves
 * by several percent between boots (a rare iteration pays for RCU
 * callbacks or a tick), their median repeats.
 */
static uint64_t samples[N_THREAD > N_HANDOFF ? N_THREAD : N_HANDOFF];
static long nr_samples;

static void sample(uint64_t v)
{
	if (nr_samples < (long)(sizeof(samples) / sizeof(samples[0])))
		samples[nr_samples++] = v;
}

static double samples_median(void)
{
	if (!nr_samples)
		return 0;
	qsort(samples, nr_samples, sizeof(samples[0]), cmp_u64);
	if (nr_samples % 2)
		return (double)samples[nr_samples / 2];
	return (samples[nr_samples / 2 - 1] + samples[nr_samples / 2]) / 2.0;
}

/* fig: median, mean */
static void bench_pthread(long n, long warm, double *fig)
{
	unsigned long runs;
	long i, bad = 0;
	uint64_t t0, s;
	pthread_t t;

	for (i = 0; i < warm; i++)
		bad += pthread_create(&t, NULL, empty_thread, NULL) ||
		       pthread_join(t, NULL);
	runs = nr_thread_runs;
	nr_samples = 0;
	tick_sync();
	t0 = now();
	for (i = 0; i < n; i++) {
		s = now();
		bad += pthread_create(&t, NULL, empty_thread, NULL) ||
		       pthread_join(t, NULL);
		sample(now() - s);
	}
	t0 = now() - t0;
	check(!bad, "pthread: %ld create/join failures", bad);
	check(nr_thread_runs - runs == (unsigned long)n,
	      "pthread: %lu threads ran, want %ld", nr_thread_runs - runs, n);
	fig[0] = samples_median();
	fig[1] = (double)t0 / n;
}

struct blocker {
	int fd;
	char c;
	long n;
	uint64_t t0;		/* set right before the threadlet blocks */
};

static long blocker_fn(void *data)
{
	struct blocker *b = data;

	__atomic_store_n(&b->t0, now(), __ATOMIC_RELEASE);
	b->n = read(b->fd, &b->c, 1);
	return complete_threadlet_fn(b, &ahu);
}

static int wait_pool_parked(void)
{
	long i, parked = -1;

	for (i = 0; i < 1000000; i++) {
		parked = async_head_parked(&ahu);
		if (parked == POOL_THREADS)
			return 0;
		sched_yield();
	}
	check(0, "handoff: pool has %ld parked threads, want %d",
	      parked, POOL_THREADS);
	return -1;
}

static int handoff_once(struct blocker *b, int wfd, char c,
			uint64_t *handoff, uint64_t *hmin, uint64_t *round)
{
	uint64_t r0, t1, r1, h;
	long r;
	void *ev;

	b->n = -1;
	b->c = 0;
	r0 = now();
	r = threadlet_exec(blocker_fn, b, stack, &ahu);
	t1 = now();
	if (r != 0) {
		check(0, "handoff: exec returned %ld, want 0", r);
		return -1;
	}
	h = t1 - __atomic_load_n(&b->t0, __ATOMIC_ACQUIRE);
	*handoff += h;
	sample(h);
	if (h < *hmin)
		*hmin = h;
	if (write(wfd, &c, 1) != 1) {
		check(0, "handoff: write: %s", strerror(errno));
		return -1;
	}
	r = async_wait(1, ahu.user_ring_idx, &ahu);
	ev = async_ring_pop(&ahu);
	r1 = now();
	*round += r1 - r0;
	if (r < 1 || ev != b || b->n != 1 || b->c != c) {
		check(0, "handoff: wait %ld, event %p (want %p), read %ld '%c'",
		      r, ev, (void *)b, b->n, b->c);
		return -1;
	}
	if (async_ring_pop(&ahu) != NULL) {
		check(0, "handoff: completion posted twice");
		return -1;
	}
	return wait_pool_parked();
}

/* fig: hand-off median, mean, fastest, round trip */
static void bench_handoff(long n, long warm, double *fig)
{
	struct threadlet_stats st0, st1;
	uint64_t h = 0, rt = 0, ih = 0, irt = 0, min = UINT64_MAX, imin = UINT64_MAX;
	struct blocker b = { 0 };
	pid_t tid = gettid();
	int pfd[2];
	long i;

	if (open_pipe(pfd))
		return;
	b.fd = pfd[0];
	for (i = 0; i < warm; i++)
		if (handoff_once(&b, pfd[1], 'w', &ih, &imin, &irt))
			goto out;
	threadlet_stats(&st0);
	nr_samples = 0;
	tick_sync();
	for (i = 0; i < n; i++)
		if (handoff_once(&b, pfd[1], 'a' + i % 26, &h, &min, &rt))
			goto out;
	threadlet_stats(&st1);
	check(st1.nr_handoffs - st0.nr_handoffs == (unsigned long long)n &&
	      st1.nr_fallbacks == st0.nr_fallbacks,
	      "handoff: area counts %llu hand-offs, %llu fallbacks, want %ld, 0",
	      st1.nr_handoffs - st0.nr_handoffs,
	      st1.nr_fallbacks - st0.nr_fallbacks, n);
	check(gettid() == tid, "handoff: head TID changed (%d -> %d)", tid, gettid());
	fig[0] = samples_median();
	fig[1] = (double)h / n;
	fig[2] = (double)min;
	fig[3] = (double)rt / n;
out:
	close(pfd[0]);
	close(pfd[1]);
}

/*
 * (f) with the head a second thread: no group leadership moves. Its n and
 * warm are handoff's, so that gcc keeps one copy of bench_handoff().
 */
static void *handoff_thread_main(void *fig)
{
	bench_handoff(N_HANDOFF, N_WARM_SLOW, fig);
	return NULL;
}

/* fig: hand-off median, round trip */
static void bench_handoff_thread(long n, long warm, double *fig)
{
	double f[4] = { 0 };
	pthread_t t;

	(void)n;
	(void)warm;
	if (pthread_create(&t, NULL, handoff_thread_main, f) || pthread_join(t, NULL))
		check(0, "handoff_thread: pthread_create/join");
	fig[0] = f[0];
	fig[1] = f[3];
}

static void bench_syslet_null(long n, long warm, double *fig)
{
	struct threadlet_stats st0, st1;
	struct syslet_uatom atom, *done;
	unsigned long long kidx;
	long long ppid = getppid(), ret;
	long i, bad = 0;
	uint64_t t0;

	syslet_atom_init(&atom, SYS_getppid, 0, &ret, NULL, 0);
	for (i = 0; i < warm; i++) {
		ret = -1;
		done = async_exec(&atom, &ahu);
		bad += done != &atom || ret != ppid;
	}
	threadlet_stats(&st0);
	kidx = __atomic_load_n(&ahu.kernel_ring_idx, __ATOMIC_ACQUIRE);
	tick_sync();
	t0 = now();
	for (i = 0; i < n; i++) {
		ret = -1;
		done = async_exec(&atom, &ahu);
		bad += done != &atom || ret != ppid;
	}
	t0 = now() - t0;
	threadlet_stats(&st1);
	check(!bad, "syslet: %ld of %ld async_exec() did not return the atom "
	      "with getppid() in *ret_ptr", bad, n + warm);
	check(st1.nr_sync - st0.nr_sync == (unsigned long long)n &&
	      st1.nr_handoffs == st0.nr_handoffs &&
	      st1.nr_fallbacks == st0.nr_fallbacks,
	      "syslet: area counts %llu sync, %llu hand-offs, %llu fallbacks, "
	      "want %ld, 0, 0", st1.nr_sync - st0.nr_sync,
	      st1.nr_handoffs - st0.nr_handoffs,
	      st1.nr_fallbacks - st0.nr_fallbacks, n);
	check(__atomic_load_n(&ahu.kernel_ring_idx, __ATOMIC_ACQUIRE) == kidx &&
	      async_ring_pop(&ahu) == NULL, "syslet: a completion was posted");
	fig[0] = (double)t0 / n;
}

enum { JOB_NOTE, JOB_READ, JOB_STOP };

/* The head bumps job to hand over a job, the worker done when it is done. */
struct fworker {
	uint32_t job;
	uint32_t done;
	uint32_t parked;	/* worker: 1 from the end of a job to its next wake */
	int kind, fd;
	char c, got;
	long n;
	uint64_t t1;		/* worker: when it saw the job */
	pid_t tid;
};

static void *futex_worker(void *arg)
{
	struct fworker *w = arg;
	uint32_t seen = 0;
	uint64_t t1;

	w->tid = gettid();
	for (;;) {
		__atomic_store_n(&w->parked, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&w->job, __ATOMIC_ACQUIRE) == seen)
			futex(&w->job, FUTEX_WAIT_PRIVATE, seen);
		t1 = now();
		__atomic_store_n(&w->parked, 0, __ATOMIC_RELAXED);
		seen = __atomic_load_n(&w->job, __ATOMIC_ACQUIRE);
		if (w->kind == JOB_STOP)
			return NULL;
		w->t1 = t1;
		if (w->kind == JOB_READ)
			w->n = read(w->fd, &w->got, 1);
		__atomic_store_n(&w->done, w->done + 1, __ATOMIC_RELEASE);
		futex(&w->done, FUTEX_WAKE_PRIVATE, 1);
	}
}

static void stop_worker(struct fworker *w, pthread_t t)
{
	w->kind = JOB_STOP;
	__atomic_store_n(&w->job, w->job + 1, __ATOMIC_RELEASE);
	futex(&w->job, FUTEX_WAKE_PRIVATE, 1);
	pthread_join(t, NULL);
}

/*
 * Past "parked" the worker's only sleep is its FUTEX_WAIT, so state S
 * means it is there: every iteration then pays a real sleep and wake-up.
 */
static int wait_worker_asleep(struct fworker *w)
{
	char path[64], buf[256], *p;
	long i;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", w->tid);
	for (i = 0; i < 1000000; i++) {
		if (__atomic_load_n(&w->parked, __ATOMIC_ACQUIRE)) {
			f = fopen(path, "r");
			p = f && fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
			if (f)
				fclose(f);
			if (!p) {
				check(0, "futex: cannot read %s", path);
				return -1;
			}
			if (p[1] == ' ' && p[2] == 'S')
				return 0;
		}
		sched_yield();
	}
	check(0, "futex: the worker does not go to sleep");
	return -1;
}

static int futex_once(struct fworker *w, int kind, int wfd, char c,
		      uint64_t *handoff, uint64_t *hmin, uint64_t *round)
{
	uint32_t d = __atomic_load_n(&w->done, __ATOMIC_ACQUIRE);
	uint64_t t0, t2, h;
	long woke;

	if (wait_worker_asleep(w))
		return -1;
	w->kind = kind;
	w->n = -1;
	w->got = 0;
	t0 = now();
	__atomic_store_n(&w->job, w->job + 1, __ATOMIC_RELEASE);
	woke = futex(&w->job, FUTEX_WAKE_PRIVATE, 1);
	if (kind == JOB_READ && write(wfd, &c, 1) != 1) {
		check(0, "futex: write: %s", strerror(errno));
		return -1;
	}
	while (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE) == d)
		futex(&w->done, FUTEX_WAIT_PRIVATE, d);
	t2 = now();
	if (woke != 1 || (kind == JOB_READ && (w->n != 1 || w->got != c)) ||
	    w->t1 < t0 || w->t1 > t2) {
		check(0, "futex: wake woke %ld (want 1), read %ld '%c' (want '%c'), "
		      "worker started %lld ns after t0 of %llu", woke, w->n,
		      w->got, kind == JOB_READ ? c : 0,
		      (long long)(w->t1 - t0), (unsigned long long)(t2 - t0));
		return -1;
	}
	h = w->t1 - t0;
	*handoff += h;
	sample(h);
	if (h < *hmin)
		*hmin = h;
	*round += t2 - t0;
	return 0;
}

/* fig: hand-off median, mean, fastest, empty job's and read's round trips */
static void bench_futex_handoff(long n, long warm, double *fig)
{
	uint64_t h = 0, hmin = UINT64_MAX, pp = 0, rh = 0, rmin = UINT64_MAX, rt = 0;
	uint64_t ih = 0, imin = UINT64_MAX, irt = 0;
	/* Static: a worker that never slept again is detached, not joined. */
	static struct fworker w;
	pthread_t t;
	int pfd[2] = { -1, -1 };
	long i;

	if (pthread_create(&t, NULL, futex_worker, &w)) {
		check(0, "futex: pthread_create");
		return;
	}
	while (!__atomic_load_n(&w.parked, __ATOMIC_ACQUIRE))
		sched_yield();
	if (open_pipe(pfd))
		goto out;
	w.fd = pfd[0];
	for (i = 0; i < warm; i++)
		if (futex_once(&w, JOB_NOTE, -1, 0, &ih, &imin, &irt) ||
		    futex_once(&w, JOB_READ, pfd[1], 'w', &ih, &imin, &irt))
			goto out;
	nr_samples = 0;
	tick_sync();
	for (i = 0; i < n; i++)
		if (futex_once(&w, JOB_NOTE, -1, 0, &h, &hmin, &pp))
			goto out;
	fig[0] = samples_median();
	tick_sync();
	for (i = 0; i < n; i++)
		if (futex_once(&w, JOB_READ, pfd[1], 'a' + i % 26, &rh, &rmin, &rt))
			goto out;
	fig[1] = (double)h / n;
	fig[2] = (double)hmin;
	fig[3] = (double)pp / n;
	fig[4] = (double)rt / n;
out:
	if (!wait_worker_asleep(&w))
		stop_worker(&w, t);
	else
		pthread_detach(t);
	if (pfd[0] >= 0) {
		close(pfd[0]);
		close(pfd[1]);
	}
}

/* (f)'s round trip n times: exec, block, write, wait, pop; nothing else. */
static void bench_profile(long n, long warm, double *fig)
{
	struct blocker b = { 0 };
	long i, bad = 0;
	uint64_t t0;
	int pfd[2];

	(void)warm;
	(void)fig;
	if (open_pipe(pfd))
		return;
	b.fd = pfd[0];
	t0 = now();
	for (i = 0; i < n; i++) {
		b.n = -1;
		bad += threadlet_exec(blocker_fn, &b, stack, &ahu) != 0;
		bad += write(pfd[1], "p", 1) != 1;
		bad += async_wait(1, ahu.user_ring_idx, &ahu) < 1;
		bad += async_ring_pop(&ahu) != &b || b.n != 1;
	}
	t0 = now() - t0;
	check(!bad, "profile: %ld checks of %ld iterations failed", bad, n);
	printf("PROFILE profile %ld %.1f\n", n, (double)t0 / n);
	close(pfd[0]);
	close(pfd[1]);
}

/* The pool's version: wake the worker to read a byte, write it, wait. */
static void bench_profile_futex(long n, long warm, double *fig)
{
	static struct fworker w;
	long i, bad = 0;
	uint64_t t0;
	uint32_t d;
	pthread_t t;
	int pfd[2];

	(void)warm;
	(void)fig;
	if (open_pipe(pfd))
		return;
	if (pthread_create(&t, NULL, futex_worker, &w)) {
		check(0, "profile_futex: pthread_create");
		return;
	}
	w.fd = pfd[0];
	w.kind = JOB_READ;
	t0 = now();
	for (i = 0; i < n; i++) {
		d = __atomic_load_n(&w.done, __ATOMIC_ACQUIRE);
		w.n = -1;
		__atomic_store_n(&w.job, w.job + 1, __ATOMIC_RELEASE);
		futex(&w.job, FUTEX_WAKE_PRIVATE, 1);
		bad += write(pfd[1], "p", 1) != 1;
		while (__atomic_load_n(&w.done, __ATOMIC_ACQUIRE) == d)
			futex(&w.done, FUTEX_WAIT_PRIVATE, d);
		bad += w.n != 1;
	}
	t0 = now() - t0;
	check(!bad, "profile_futex: %ld of %ld iterations failed", bad, n);
	printf("PROFILE profile_futex %ld %.1f\n", n, (double)t0 / n);
	stop_worker(&w, t);
	close(pfd[0]);
	close(pfd[1]);
}

enum {
	FIRST = 1,	/* before this process touches the library */
	ALWAYS = 2,	/* even when not named */
	NAMED = 4,	/* only when named, and then alone */
};

/*
 * The methods, in the order they run (FIRST ones first): name, iterations,
 * warm-up iterations, flags, then its rows, the RESULT lines of fig[0],
 * fig[1]... A new one goes last, so that the others' figures stay
 * comparable. main() calls each bench_<name>() directly, with constants, so
 * that gcc compiles the timed loops inside main(), which it knows runs once,
 * as it always has: their instruction counts depend on how it allocates
 * main()'s registers, so after a change to main() compare their
 * disassembly with the old binary's.
 */
#define METHODS(X)								\
	X(null_syscall, N_CHEAP, N_WARM_CHEAP, FIRST,				\
	  { "null_syscall", "(c) null threadlet, THREADLET_FORCE_SYSCALL=1" })	\
	X(call, N_CHEAP, N_WARM_CHEAP, 0,					\
	  { "call", "(a) direct call of fn(data) { n++; return 1; }" })		\
	X(null_vdso, N_CHEAP, N_WARM_CHEAP, 0,					\
	  { "null_vdso", "(b) null threadlet, threadlet_on/off in the vDSO" })	\
	X(getppid, N_CHEAP, N_WARM_CHEAP, 0,					\
	  { "getppid", "(d) syscall(SYS_getppid)" })				\
	X(clock, N_CHEAP, N_WARM_CHEAP, ALWAYS,					\
	  { "clock", "clock_gettime(CLOCK_MONOTONIC), the timer" })		\
	X(pthread, N_THREAD, N_WARM_SLOW, 0,					\
	  { "pthread", "(e) pthread_create + pthread_join, empty thread (median)" }, \
	  { "pthread_mean", "(e) the same, mean" })				\
	X(handoff, N_HANDOFF, N_WARM_SLOW, 0,					\
	  { "handoff", "(f) threadlet blocks -> head runs again (median)" },	\
	  { "handoff_mean", "(f) the same, mean" },				\
	  { "handoff_min", "(f) the same, fastest iteration" },			\
	  { "roundtrip", "(f) exec -> block -> write -> completion popped" })	\
	X(syslet_null, N_CHEAP, N_WARM_CHEAP, 0,				\
	  { "syslet_null", "(g) async_exec() of one getppid atom, in place" })	\
	X(futex_handoff, N_HANDOFF, N_WARM_SLOW, 0,				\
	  { "futex_handoff", "(h) FUTEX_WAKE -> sleeping worker runs the job (median)" }, \
	  { "futex_handoff_mean", "(h) the same, mean" },			\
	  { "futex_handoff_min", "(h) the same, fastest iteration" },		\
	  { "futex_pingpong", "(h) wake worker -> empty job -> head sees it done" }, \
	  { "futex_roundtrip", "(h) wake worker -> write -> worker read -> head sees it" }) \
	X(handoff_thread, N_HANDOFF, N_WARM_SLOW, 0,				\
	  { "handoff_thread", "(f) as handoff, the head a second thread, not the leader" }, \
	  { "roundtrip_thread", "(f) as roundtrip, the head a second thread" })	\
	X(profile, N_PROFILE, 0, NAMED)						\
	X(profile_futex, N_PROFILE, 0, NAMED)

#define MAX_ROWS	5
#define INDEX(name, ...)	M_##name,
#define DESCRIBE(name, n, warm, flags, ...) { #name, n, flags, { __VA_ARGS__ } },

enum { METHODS(INDEX) NR_METHODS };

static const struct method {
	const char *name;
	long n;
	int flags;
	struct {
		const char *name, *what;
	} rows[MAX_ROWS];
} methods[] = { METHODS(DESCRIBE) };

/*
 * Figures are printed after the last measurement: console output while they
 * run would land in the next one's timed loop (serial interrupts).
 */
static double figs[NR_METHODS][MAX_ROWS];
static int ran[NR_METHODS];
static int nr_names;
static char **names;

static int named(const char *name)
{
	for (int i = 0; i < nr_names; i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

static int selected(const char *name, int flags)
{
	return (flags & ALWAYS) || named(name) || (!nr_names && !(flags & NAMED));
}

/* RUN_PASS(FIRST), (NAMED), (REST): run those of the methods asked for. */
#define RUN_PASS(pass)	METHODS(RUN_##pass)
#define RUN(in_pass, name, n, warm, flags)					\
	if ((in_pass) && selected(#name, flags)) {				\
		bench_##name(n, warm, figs[M_##name]);				\
		ran[M_##name] = 1;						\
	}
#define RUN_FIRST(name, n, warm, flags, ...)	RUN((flags) == FIRST, name, n, warm, flags)
#define RUN_NAMED(name, n, warm, flags, ...)	RUN((flags) == NAMED, name, n, warm, flags)
#define RUN_REST(name, n, warm, flags, ...)				\
	RUN(!((flags) & (FIRST | NAMED)), name, n, warm, flags)

static void print_clocksource(void)
{
	char buf[64] = "?";
	FILE *f;

	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
	printf("threadlet micro-benchmark: clocksource %s, %ld CPU(s) online\n",
	       buf, sysconf(_SC_NPROCESSORS_ONLN));
}

int main(int argc, char **argv)
{
	int profiling = 0;
	uint64_t step;

	nr_names = argc - 1;
	names = argv + 1;
	for (int i = 0; i < nr_names; i++) {
		int k = 0;

		while (k < NR_METHODS && strcmp(names[i], methods[k].name))
			k++;
		if (k == NR_METHODS) {
			fprintf(stderr, "micro: unknown measurement %s\n", names[i]);
			return 64;
		}
		profiling |= methods[k].flags & NAMED;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	RUN_PASS(FIRST)

	print_clocksource();
	step = clock_step();
	printf("clock step %llu ns\n", (unsigned long long)step);
	/* A tick-based clocksource: boot the guest with tsc=reliable. */
	check(step <= 1000, "CLOCK_MONOTONIC moves in steps of %llu ns",
	      (unsigned long long)step);
	stack = threadlet_stack_alloc(STACK_SIZE);
	check(!threadlet_err(stack), "threadlet_stack_alloc");
	check(async_head_init(&ahu, RING_ENTRIES, POOL_THREADS) == 0,
	      "async_head_init");
	check(async_head_parked(&ahu) == POOL_THREADS, "pool not parked");
	check(threadlet_uses_vdso() == 1, "threadlet_on/off not in the vDSO");
	if (failed)
		return 1;
	if (profiling) {
		RUN_PASS(NAMED)
		return failed ? 1 : 0;
	}
	RUN_PASS(REST)
	async_head_exit(&ahu);
	threadlet_stack_free(stack);

	for (int k = 0; k < NR_METHODS; k++)
		for (int j = 0; ran[k] && j < MAX_ROWS && methods[k].rows[j].name; j++)
			printf("RESULT %s %.1f %ld %s\n", methods[k].rows[j].name,
			       figs[k][j], methods[k].n, methods[k].rows[j].what);
	if (failed) {
		printf("micro: FAILED (see the checks above)\n");
		return 1;
	}
	printf("micro: all checks passed\n");
	return 0;
}
