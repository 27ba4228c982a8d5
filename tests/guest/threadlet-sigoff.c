// SPDX-License-Identifier: GPL-2.0
/*
 * A signal handler that sleeps inside a threadlet.
 *
 * Part 1: a threadlet raises a signal at itself and its handler sleeps.
 * The handler is not part of the threadlet: its sleep falls back, and
 * does not hand the head off (which would give the head the handler's
 * signal mask). Once the handler has returned, the threadlet hands off at
 * its next sleep as usual, and posts its event (not its data).
 *
 * Part 2, the vDSO: threadlet_off_tls() tests and clears the flag of the
 * task that runs it, found from its thread pointer. A pointer to the area
 * computed before a hand-off points at the new head's area after it; the
 * TLS form must never touch that one. The threadlet takes both, then
 * sleeps in a system call (hand-off), and while the new head has its own
 * threadlet on (armed, spinning without sleeping), the cache-miss thread
 * calls threadlet_off_tls(): it must return 0 and leave the new head's
 * flag and counters alone.
 *
 * Part 3: a handler that siglongjmp()s within the threadlet never returns
 * to the context it interrupted: the rest of the threadlet runs in place,
 * and the next threadlet_exec() hands off again.
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tl_test.h"
#include "tl_util.h"
#include "tl_raw.h"

#define NRUNS		20
#define STACK_SZ	(64 << 10)

typedef long (*on_fn)(struct threadlet_area *, unsigned long, unsigned long, void *);
typedef long (*off_tls_fn)(long);

static struct async_head_user ahu;
static on_fn vdso_on;
static off_tls_fn vdso_off_tls;

static int tid_raw(void)
{
	return (int)syscall(SYS_gettid);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };

	syscall(SYS_nanosleep, &ts, NULL);
}

/* ---- part 1 -------------------------------------------------------------- */

static volatile int handled, handler_tid;

/*
 * Its sleep falls back: the handler is not the threadlet. A timed sleep
 * need not reach schedule() (under TCG its timer can expire first), so
 * it sleeps again until the hook has counted a fallback.
 */
static void sleepy_handler(int sig)
{
	unsigned long long fb = __threadlet_area.nr_fallbacks;

	(void)sig;
	handler_tid = tid_raw();
	for (int i = 0; i < 100 && __threadlet_area.nr_fallbacks == fb; i++)
		sleep_ms(2);
	handled++;
}

struct job1 {
	int fd;
	int tid_before, tid_handler, tid_mid, tid_after;
	int done;
};

static char marker;	/* the event; the data is the job */

static long fn1(void *data)
{
	struct job1 *j = data;
	char c;

	j->tid_before = tid_raw();
	syscall(SYS_tgkill, getpid(), j->tid_before, SIGUSR1);
	j->tid_handler = handler_tid;
	j->tid_mid = tid_raw();
	/* The handler returned here: this sleep hands off again. */
	if (read(j->fd, &c, 1) != 1)
		j->tid_after = -1;
	else
		j->tid_after = tid_raw();
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return complete_threadlet_fn(&marker, &ahu);
}

static void part1(unsigned long stack, int me)
{
	int async = 0, other = 0, right = 0, wrong = 0, in_handler = 0, after = 0;
	int masked = 0, head_bad = 0, unparked = 0, fds[2];
	unsigned long long fb0 = __threadlet_area.nr_fallbacks;
	sigset_t cur;

	tl_ok(pipe(fds) == 0, "pipe");
	signal(SIGUSR1, sleepy_handler);
	for (int i = 0; i < NRUNS; i++) {
		struct job1 j = { .fd = fds[0] };
		long r = threadlet_exec(fn1, &j, stack, &ahu);

		async += r == 0;
		other += r != 0;
		if (tid_raw() != me)
			head_bad++;
		sigprocmask(SIG_BLOCK, NULL, &cur);
		masked += sigismember(&cur, SIGUSR1);
		if (write(fds[1], "x", 1) != 1)
			tl_diag("write to the pipe failed");
		while (!__atomic_load_n(&j.done, __ATOMIC_ACQUIRE))
			usleep(100);
		in_handler += j.tid_handler != j.tid_before || j.tid_mid != j.tid_before;
		after += j.tid_after != j.tid_before;
		if (r == 0) {
			void *ev = tl_wait_one(&ahu);

			right += ev == &marker;
			wrong += ev != &marker;
		}
		unparked += !tl_wait_parked(&ahu, 8);
	}
	tl_ok(handled == NRUNS, "the handler ran in every threadlet (%d of %d)", handled, NRUNS);
	tl_ok(in_handler == 0,
	      "a sleep in the handler never handed the head off (%d times it did)", in_handler);
	tl_ok(__threadlet_area.nr_fallbacks - fb0 >= NRUNS,
	      "it fell back instead (%llu fallbacks)", __threadlet_area.nr_fallbacks - fb0);
	tl_ok(async == NRUNS && after == NRUNS && other == 0,
	      "after the handler returned, the threadlet handed off at its read() (%d async, %d moved, %d other)",
	      async, after, other);
	tl_ok(head_bad == 0, "the head came back with its own TID (%d not)", head_bad);
	tl_ok(masked == 0, "the head came back with its own signal mask (SIGUSR1 blocked %d times)",
	      masked);
	tl_ok(right == async && wrong == 0,
	      "each threadlet posted its event, not its data (%d of %d, %d wrong)",
	      right, async, wrong);
	tl_ok(unparked == 0, "the pool parked again after each threadlet (%d not)", unparked);
	signal(SIGUSR1, SIG_DFL);
	close(fds[0]);
	close(fds[1]);
}

/* ---- part 3 -------------------------------------------------------------- */

/*
 * A handler that never returns to the context it interrupted (it
 * siglongjmp()s within the threadlet): the threadlet runs on in place, its
 * sleeps fall back, and the next threadlet_exec() may hand off again.
 */
static sigjmp_buf jb;

static void jumping_handler(int sig)
{
	(void)sig;
	siglongjmp(jb, 1);
}

struct job3 {
	int tid_before, tid_after, jumped;
	int fd, released;
};

static long fn3(void *data)
{
	struct job3 *j = data;

	j->tid_before = tid_raw();
	if (!sigsetjmp(jb, 1))
		syscall(SYS_tgkill, getpid(), j->tid_before, SIGUSR2);
	else
		j->jumped = 1;
	sleep_ms(2);
	j->tid_after = tid_raw();
	return complete_threadlet_fn(j, &ahu);
}

/*
 * Sleeps until the head writes to @j->fd, which it does only once it has
 * the CPU back: a hand-off. A timed sleep is no proof of one: under TCG
 * its timer can expire before the task reaches schedule(), and then
 * nothing sleeps. The poll() timeout turns a fallback into a failure
 * instead of a hang.
 */
static long fn_block(void *data)
{
	struct job3 *j = data;
	struct pollfd p = { .fd = j->fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, 5000) == 1 && read(j->fd, &c, 1) == 1)
		j->released = 1;
	return complete_threadlet_fn(data, &ahu);
}

static void part3(unsigned long stack)
{
	struct job3 j = { 0 };
	unsigned long long fb0;
	int fds[2];
	long r;
	void *ev;

	signal(SIGUSR2, jumping_handler);
	r = threadlet_exec(fn3, &j, stack, &ahu);
	tl_ok(j.jumped, "the handler siglongjmp()ed back into the threadlet");
	tl_ok(r == 1 && j.tid_after == j.tid_before,
	      "the rest of that threadlet ran in place (returned %ld, TID %d -> %d)", r,
	      j.tid_before, j.tid_after);
	tl_ok(__threadlet_area.flags == THREADLET_SIGNAL,
	      "its area is off, marked as left by a handler (flags %#x)", __threadlet_area.flags);
	tl_ok(pipe(fds) == 0, "pipe");
	j.fd = fds[0];
	fb0 = __threadlet_area.nr_fallbacks;
	r = threadlet_exec(fn_block, &j, stack, &ahu);
	tl_ok(r == 0, "the next threadlet hands off again (%ld)", r);
	if (r != 0) {
		struct threadlet_stats st;

		threadlet_stats(&st);
		tl_diag("%llu fallbacks, the last: %s, %ld threads parked",
			__threadlet_area.nr_fallbacks - fb0,
			threadlet_fallback_name(st.last_fallback), async_head_parked(&ahu));
	}
	if (write(fds[1], "x", 1) != 1)
		tl_diag("write to the pipe failed");
	ev = r == 0 ? tl_wait_one(&ahu) : NULL;
	tl_ok(r != 0 || ev == &j, "and posts its completion");
	tl_ok(r != 0 || j.released, "which it made after the head released it");
	close(fds[0]);
	close(fds[1]);
	tl_ok(tl_wait_parked(&ahu, 8), "the pool parked again");
	tl_ok(__threadlet_area.flags == 0, "the head's area is at rest (flags %#x)",
	      __threadlet_area.flags);
	signal(SIGUSR2, SIG_DFL);
}

/* ---- part 2 -------------------------------------------------------------- */

struct job2 {
	long tls_offset;
	struct threadlet_area *stale;	/* taken before the hand-off */
	int tid_before, tid_after;
	int head_armed;			/* the new head's threadlet is on */
	long off_ret;			/* threadlet_off_tls() in the cache-miss thread */
	unsigned int head_flags;	/* the new head's flags right after it */
	unsigned long long head_sync0, head_sync1;
	int checked;
	int done;
};

static int pipefd[2];

static long fn2(void *data)
{
	struct job2 *j = data;
	char c;

	j->tls_offset = __threadlet_area_tls_offset();
	j->stale = &__threadlet_area;
	j->tid_before = tid_raw();
	if (read(pipefd[0], &c, 1) != 1)	/* blocks: the head is handed off */
		j->tid_after = -1;
	else
		j->tid_after = tid_raw();
	if (j->tid_after != j->tid_before && j->tid_after > 0) {
		/* A cache-miss thread now: wait for the new head to arm. */
		while (!__atomic_load_n(&j->head_armed, __ATOMIC_ACQUIRE))
			usleep(200);
		j->head_sync0 = j->stale->nr_sync;
		j->off_ret = vdso_off_tls(j->tls_offset);
		j->head_flags = j->stale->flags;
		j->head_sync1 = j->stale->nr_sync;
		__atomic_store_n(&j->checked, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return complete_threadlet_fn(j, &ahu);
}

/* Never reached: the head's own threadlet below does not sleep. */
static void not_resumed(void)
{
	abort();
}

static void part2(unsigned long stack)
{
	struct job2 j = { 0 };
	unsigned long spin;
	long r, on, off;
	int spun_out = 0;

	if (!vdso_on || !vdso_off_tls) {
		tl_skip_test("no threadlet_on/threadlet_off_tls in the vDSO");
		return;
	}
	tl_ok(pipe(pipefd) == 0, "pipe");
	r = threadlet_exec(fn2, &j, stack, &ahu);
	tl_ok(r == 0, "a threadlet that blocks in read() went async (%ld)", r);
	if (r != 0)
		return;

	/*
	 * The new head wakes the cache-miss thread, arms its own threadlet and
	 * spins without sleeping (a sleep would hand it off), yielding the
	 * CPU, until the cache-miss thread has made its call; then it disarms.
	 */
	if (write(pipefd[1], "x", 1) != 1)
		tl_diag("write to the pipe failed");
	on = vdso_on(&__threadlet_area, (unsigned long)not_resumed,
		     (unsigned long)&spin, &ahu);
	tl_ok(on == 0, "the new head armed its own threadlet (%ld)", on);
	__atomic_store_n(&j.head_armed, 1, __ATOMIC_RELEASE);
	for (spin = 0; !__atomic_load_n(&j.checked, __ATOMIC_ACQUIRE); spin++) {
		if (spin > 2000000) {
			spun_out = 1;
			break;
		}
		syscall(SYS_sched_yield);
	}
	off = vdso_off_tls(__threadlet_area_tls_offset());
	tl_ok(!spun_out, "the cache-miss thread made its call");
	tl_ok(j.stale == &__threadlet_area,
	      "the pointer taken before the hand-off is the new head's area");
	tl_ok(j.off_ret == 0,
	      "threadlet_off_tls() in the cache-miss thread returned 0 (%ld)", j.off_ret);
	tl_ok(j.head_flags & THREADLET_ON,
	      "it left the new head's threadlet on (flags %#x)", j.head_flags);
	tl_ok(j.head_sync1 == j.head_sync0,
	      "it left the new head's nr_sync alone (%llu -> %llu)", j.head_sync0, j.head_sync1);
	tl_ok(off == 1, "the new head's own threadlet_off_tls() found it on (%ld)", off);
	while (!__atomic_load_n(&j.done, __ATOMIC_ACQUIRE))
		usleep(100);
	tl_ok(tl_wait_one(&ahu) == &j, "the threadlet's completion was posted");
	tl_ok(tl_wait_parked(&ahu, 8), "the pool parked again");
	close(pipefd[0]);
	close(pipefd[1]);
}

int main(void)
{
	unsigned long stack;
	int me = tid_raw();

	vdso_on = (on_fn)threadlet_vdso_sym("__vdso_threadlet_on");
	vdso_off_tls = (off_tls_fn)threadlet_vdso_sym("__vdso_threadlet_off_tls");
	if (threadlet_ptr_err(vdso_on) || threadlet_ptr_err(vdso_off_tls))
		vdso_on = NULL, vdso_off_tls = NULL;	/* no vDSO functions */
	tl_ok(async_head_init(&ahu, 64, 8) == 0, "async_head_init");
	stack = threadlet_stack_alloc(STACK_SZ);
	tl_ok(!threadlet_err(stack), "threadlet stack");
	if (threadlet_err(stack))
		return tl_exit();
	part1(stack, me);
	part2(stack);
	part3(stack);
	async_head_exit(&ahu);
	threadlet_stack_free(stack);
	return tl_exit();
}
