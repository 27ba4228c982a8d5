// SPDX-License-Identifier: GPL-2.0
/*
 * threadlet_submit() and async_complete(): per-request threadlets that a
 * busy pool runs as a loop.
 *
 *  - a job that does not block runs in place (1, nothing posted); one that
 *    blocks goes async (0) and its event comes once;
 *  - the queue, deterministically: with TL_QUEUE_MIN=2 and two jobs blocked
 *    on pipes, the next job waits (it has not run when the call returns),
 *    the one after runs in place (a third of two is less than one), and
 *    the first blocked job's thread runs the waiting one after posting its
 *    own event, in a thread that is not the head and without a hand-off;
 *  - async_head_exit() runs every queued job before it returns;
 *  - a job that ends its cache-miss thread with pthread_exit() leaves the
 *    pool's count of busy threads: the job queued behind it runs, and the
 *    next one is not queued to a thread that is gone;
 *  - many blocking jobs: every event exactly once, every job run once;
 *  - errors: bad arguments, a head without a pool, nesting, and
 *    async_complete()'s own (NULL event, unknown head); async_complete()
 *    from a plain thread posts and wakes async_wait(); and
 *    async_complete() against a full ring, signals and a head that ends.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tl_test.h"
#include "tl_util.h"

#define STACK		(64 * 1024)
#define NSTACKS		40

static struct async_head_user ahu;
static unsigned long stacks[NSTACKS];
static pid_t head_tid;

struct job {
	int id;
	int fd;			/* read one byte from it, or -1 */
	int ran;		/* times fn ran */
	pid_t start_tid;	/* the thread fn started in */
	pid_t end_tid;		/* the thread fn ended in */
	long nested;		/* threadlet_submit() from inside fn */
	int posted_before;	/* kernel_ring_idx when fn started */
};

static long job_fn(void *data)
{
	struct job *j = data;
	char c;

	j->start_tid = gettid();
	j->posted_before = (int)__atomic_load_n(&ahu.kernel_ring_idx, __ATOMIC_ACQUIRE);
	j->nested = threadlet_submit(job_fn, j, j, stacks[NSTACKS - 1], &ahu);
	if (j->fd >= 0 && read(j->fd, &c, 1) != 1)
		j->ran += 100;
	j->end_tid = gettid();
	__atomic_add_fetch(&j->ran, 1, __ATOMIC_RELEASE);
	return 0;
}

/* Pops @n events into @ev (NULL-filled past what came); returns how many. */
static int pop_n(void **ev, int n)
{
	int got = 0;

	while (got < n) {
		void *e = tl_wait_one(&ahu);

		if (!e)
			break;
		ev[got++] = e;
	}
	return got;
}

static void test_basic(void)
{
	struct job a = { .id = 1, .fd = -1 }, b = { .id = 2 };
	int p[2];
	void *ev[2];
	long r;

	r = threadlet_submit(job_fn, &a, &a, stacks[0], &ahu);
	tl_ok(r == 1 && a.ran == 1 && a.start_tid == head_tid,
	      "a job that does not block runs in place (ret %ld, ran %d)", r, a.ran);
	tl_ok(a.nested == -EBUSY, "threadlet_submit() inside a threadlet: -EBUSY (got %ld)",
	      a.nested);
	tl_ok(async_ring_pop(&ahu) == NULL, "nothing posted for it");

	if (pipe(p)) {
		tl_ok(0, "pipe: %m");
		return;
	}
	b.fd = p[0];
	r = threadlet_submit(job_fn, &b, &b, stacks[1], &ahu);
	tl_ok(r == 0 && gettid() == head_tid,
	      "a job that blocks goes async, the head keeps its TID (ret %ld)", r);
	tl_ok(write(p[1], "x", 1) == 1, "wake it");
	tl_ok(pop_n(ev, 1) == 1 && ev[0] == &b, "its event comes");
	tl_ok(__atomic_load_n(&b.ran, __ATOMIC_ACQUIRE) == 1 && b.end_tid != head_tid,
	      "it ended in a cache-miss thread (ran %d)", b.ran);
	tl_ok(b.nested == -EBUSY, "threadlet_submit() in it: -EBUSY (got %ld)", b.nested);
	tl_ok(async_ring_pop(&ahu) == NULL, "and only once");
	close(p[0]);
	close(p[1]);
}

/*
 * TL_QUEUE_MIN=2. Jobs 0 and 1 block on their pipes (busy 2); job 2 waits
 * in the queue (3 * 0 < 2); job 3 runs in place (3 * 1 >= 2). Waking job
 * 0 must post its event, then run job 2 in the same thread: job 2 sees
 * job 0's event already posted, starts outside the head, and its event
 * follows. Job 1's comes when its pipe is written.
 */
static void test_queue(void)
{
	struct job j[4] = { { .id = 0 }, { .id = 1 }, { .id = 2, .fd = -1 },
			    { .id = 3, .fd = -1 } };
	int p[2][2];
	void *ev[3];
	long r[4];
	unsigned long long k0;

	if (pipe(p[0]) || pipe(p[1])) {
		tl_ok(0, "pipe: %m");
		return;
	}
	j[0].fd = p[0][0];
	j[1].fd = p[1][0];
	k0 = ahu.kernel_ring_idx;
	for (int i = 0; i < 4; i++)
		r[i] = threadlet_submit(job_fn, &j[i], &j[i], stacks[2 + i], &ahu);
	tl_ok(r[0] == 0 && r[1] == 0, "two jobs block (%ld %ld)", r[0], r[1]);
	tl_ok(r[2] == 0 && __atomic_load_n(&j[2].ran, __ATOMIC_ACQUIRE) == 0,
	      "the third waits in the queue: 0, not run yet (ret %ld, ran %d)", r[2], j[2].ran);
	tl_ok(r[3] == 1 && j[3].ran == 1 && j[3].start_tid == head_tid,
	      "the fourth runs in place: the queue holds under a third of the busy (ret %ld)",
	      r[3]);
	tl_ok(ahu.kernel_ring_idx == k0, "nothing posted yet");

	tl_ok(write(p[0][1], "x", 1) == 1, "wake the first");
	tl_ok(pop_n(ev, 2) == 2 && ev[0] == &j[0] && ev[1] == &j[2],
	      "the first's event, then the queued job's");
	tl_ok(j[2].ran == 1 && j[2].start_tid != head_tid && j[2].start_tid == j[0].end_tid,
	      "the queued job ran once, in the first job's thread, not the head (tid %d, %d)",
	      j[2].start_tid, j[0].end_tid);
	tl_ok(j[2].posted_before == (int)k0 + 1,
	      "it started after the first's event was posted (index %d, want %llu)",
	      j[2].posted_before, k0 + 1);
	tl_ok(j[2].nested == -EBUSY, "threadlet_submit() in a queued job: -EBUSY (got %ld)",
	      j[2].nested);
	tl_ok(j[1].ran == 0, "the second still blocks");
	tl_ok(write(p[1][1], "x", 1) == 1, "wake the second");
	tl_ok(pop_n(ev, 1) == 1 && ev[0] == &j[1], "its event comes");
	tl_ok(async_ring_pop(&ahu) == NULL, "nothing else");
	for (int i = 0; i < 2; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
}

static int exit_pipes[2][2];

static void *write_later(void *arg)
{
	(void)arg;
	usleep(200 * 1000);
	for (int i = 0; i < 2; i++)
		if (write(exit_pipes[i][1], "x", 1) != 1)
			return NULL;
	return NULL;
}

/* Queued jobs run before async_head_exit() returns, whose pool is blocked. */
static void test_exit_runs_queue(void)
{
	struct job j[4] = { { .id = 0 }, { .id = 1 }, { .id = 2, .fd = -1 },
			    { .id = 3, .fd = -1 } };
	pthread_t th;
	long r[3];

	if (pipe(exit_pipes[0]) || pipe(exit_pipes[1])) {
		tl_ok(0, "pipe: %m");
		return;
	}
	j[0].fd = exit_pipes[0][0];
	j[1].fd = exit_pipes[1][0];
	for (int i = 0; i < 3; i++)
		r[i] = threadlet_submit(job_fn, &j[i], &j[i], stacks[10 + i], &ahu);
	tl_ok(r[0] == 0 && r[1] == 0 && r[2] == 0 && j[2].ran == 0,
	      "two jobs block, one waits (%ld %ld %ld, ran %d)", r[0], r[1], r[2], j[2].ran);
	if (pthread_create(&th, NULL, write_later, NULL)) {
		tl_ok(0, "pthread_create");
		return;
	}
	tl_ok(async_head_exit(&ahu) == 0, "async_head_exit() with a job queued");
	tl_ok(j[0].ran == 1 && j[1].ran == 1 && j[2].ran == 1,
	      "every job ran once before it returned (%d %d %d)", j[0].ran, j[1].ran, j[2].ran);
	pthread_join(th, NULL);
	tl_neg(threadlet_submit(job_fn, &j[3], &j[3], stacks[14], &ahu), EINVAL,
	       "threadlet_submit() on the ended head");
	for (int i = 0; i < 2; i++) {
		close(exit_pipes[i][0]);
		close(exit_pipes[i][1]);
	}
}

/*
 * 600 jobs that sleep 200 us each, up to 32 in flight (TL_QUEUE_MIN=2):
 * every event once, every job run once; how many were queued (started
 * outside the head) is a diagnostic, as it depends on timing.
 */
#define MANY	600
#define INFL	32

static struct job many[MANY];

static long sleep_fn(void *data)
{
	struct job *j = data;
	struct timespec ts = { 0, 200 * 1000 };

	j->start_tid = gettid();
	nanosleep(&ts, NULL);
	__atomic_add_fetch(&j->ran, 1, __ATOMIC_RELEASE);
	return 0;
}

static void test_many(void)
{
	int slot_of[MANY], free_slots[INFL], nfree = INFL, next = 0, done = 0, bad = 0;
	int queued = 0, inplace = 0, inflight = 0;

	for (int s = 0; s < INFL; s++)
		free_slots[s] = s;
	while (done < MANY && !bad) {
		while (nfree && next < MANY) {
			int s = free_slots[--nfree];
			long r;

			many[next] = (struct job){ .id = next, .fd = -1 };
			slot_of[next] = s;
			r = threadlet_submit(sleep_fn, &many[next], &many[next],
					     stacks[s], &ahu);
			if (r == 1) {
				free_slots[nfree++] = s;
				done++;
				inplace++;
			} else if (r == 0) {
				inflight++;
			} else {
				bad++;
			}
			next++;
		}
		if (!inflight)
			continue;
		struct job *j = tl_wait_one(&ahu);

		if (!j || j < many || j >= many + MANY) {
			bad++;
			break;
		}
		if (__atomic_load_n(&j->ran, __ATOMIC_ACQUIRE) != 1)
			bad++;
		if (j->start_tid != head_tid)
			queued++;
		free_slots[nfree++] = slot_of[j->id];
		inflight--;
		done++;
	}
	tl_ok(!bad && done == MANY, "%d sleeping jobs, 32 in flight: every event once (%d done)",
	      MANY, done);
	int once = 1;

	for (int i = 0; i < MANY; i++)
		once &= many[i].ran == 1;
	tl_ok(once, "every job ran exactly once");
	tl_ok(async_ring_pop(&ahu) == NULL, "no stray event");
	tl_diag("%d ran in place, %d from the queue, %d after a hand-off", inplace, queued,
		MANY - inplace - queued);
}

static void *post_later(void *arg)
{
	usleep(50 * 1000);
	return (void *)syscall(__NR_async_complete, arg, &ahu);
}

static void test_async_complete(void)
{
	static int token;
	struct async_head_user other = { 0 };
	pthread_t th;
	void *ret = NULL;
	long n;

	tl_errno(syscall(__NR_async_complete, NULL, &ahu), EINVAL, "async_complete(NULL event)");
	tl_errno(syscall(__NR_async_complete, &token, &other), EINVAL,
		 "async_complete() on an unknown head");
	tl_errno(syscall(__NR_async_complete, &token, (void *)8), EINVAL,
		 "async_complete() on a bad head pointer");
	if (pthread_create(&th, NULL, post_later, &token)) {
		tl_ok(0, "pthread_create");
		return;
	}
	n = async_wait(1, ahu.user_ring_idx, &ahu);
	pthread_join(th, &ret);
	tl_ok(n == 1 && ret == NULL, "async_complete() from a plain thread wakes async_wait() "
	      "(%ld, ret %ld)", n, (long)ret);
	tl_ok(async_ring_pop(&ahu) == &token && async_ring_pop(&ahu) == NULL,
	      "and posts its event once");
}

/*
 * async_complete() under attack, on a head of its own with a ring of 4:
 *  - a poster that waits for a full ring takes a signal (its handler runs)
 *    and goes on waiting, nothing posted twice; popping one lets it post;
 *  - two threads post as fast as they can while the head is ended under
 *    them: each call returns 0 or EINVAL, none hangs, including those
 *    waiting for the full ring when the head goes.
 */
static struct async_head_user ahu2;
static int hostile_sigs;
static volatile int spam_stop;

static void on_usr1(int sig)
{
	(void)sig;
	__atomic_add_fetch(&hostile_sigs, 1, __ATOMIC_RELAXED);
}

static void *post_one(void *arg)
{
	long r = syscall(__NR_async_complete, arg, &ahu2);

	return (void *)(r == 0 ? 0L : (long)errno);
}

struct spam {
	long posted, einval, other;
	int done;
};

static void *spam_posts(void *arg)
{
	struct spam *sp = arg;
	static int tok;

	while (!spam_stop) {
		long r = syscall(__NR_async_complete, &tok, &ahu2);

		if (r == 0)
			sp->posted++;
		else if (errno == EINVAL)
			sp->einval++;
		else
			sp->other++;
		if (r && sp->einval > 1000)
			break;
	}
	__atomic_store_n(&sp->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_complete_hostile(void)
{
	static int tokens[5];
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct spam sp[2] = { { 0 }, { 0 } };
	pthread_t th, spammer[2];
	void *ret = (void *)-1L;
	int ok = 1, i;

	sigaction(SIGUSR1, &sa, NULL);
	if (async_head_init(&ahu2, 4, 1)) {
		tl_ok(0, "a second head with a ring of 4");
		return;
	}
	for (i = 0; i < 4; i++)
		ok &= syscall(__NR_async_complete, &tokens[i], &ahu2) == 0;
	tl_ok(ok, "four posts fill a ring of 4");
	pthread_create(&th, NULL, post_one, &tokens[4]);
	usleep(50000);
	pthread_kill(th, SIGUSR1);
	usleep(50000);
	tl_ok(__atomic_load_n(&hostile_sigs, __ATOMIC_RELAXED) == 1 &&
	      ahu2.kernel_ring_idx == 4,
	      "a poster waiting for the full ring takes a signal and posts nothing (%d, %llu)",
	      hostile_sigs, ahu2.kernel_ring_idx);
	tl_ok(async_ring_pop(&ahu2) == &tokens[0], "pop one");
	pthread_join(th, &ret);
	tl_ok(ret == NULL && ahu2.kernel_ring_idx == 5,
	      "then its call, restarted after the handler, posts once (%ld, %llu)",
	      (long)ret, ahu2.kernel_ring_idx);
	for (i = 1; i < 5; i++)
		ok &= async_ring_pop(&ahu2) == &tokens[i];
	tl_ok(ok && async_ring_pop(&ahu2) == NULL, "the ring holds the other four in order");

	for (i = 0; i < 2; i++)
		pthread_create(&spammer[i], NULL, spam_posts, &sp[i]);
	for (i = 0; i < 50; i++) {
		while (async_ring_pop(&ahu2))
			;
		usleep(1000);
	}
	tl_ok(async_head_exit(&ahu2) == 0, "the head ends under two posting threads");
	for (i = 0; i < 200 && !(__atomic_load_n(&sp[0].done, __ATOMIC_ACQUIRE) &&
				 __atomic_load_n(&sp[1].done, __ATOMIC_ACQUIRE)); i++)
		usleep(10000);
	spam_stop = 1;
	tl_ok(sp[0].done && sp[1].done, "both posters see it within 2 s (none hangs on the ring)");
	for (i = 0; i < 2; i++)
		pthread_join(spammer[i], NULL);
	tl_ok(sp[0].posted + sp[1].posted > 0 && sp[0].einval > 0 && sp[1].einval > 0 &&
	      !sp[0].other && !sp[1].other,
	      "every call returned 0 or EINVAL (%ld and %ld posted, %ld other errors)",
	      sp[0].posted, sp[1].posted, sp[0].other + sp[1].other);
}

static struct async_head_user ahu3;
static int exiter_pipe[2];

/* An event of @h within 2 s, or NULL. */
static void *event_within_2s(struct async_head_user *h)
{
	void *ev = NULL;

	for (int i = 0; i < 2000 && !(ev = async_ring_pop(h)); i++)
		usleep(1000);
	return ev;
}
static pid_t exiter_tid;

/* Blocks, then ends its thread: a cache-miss thread by then. */
static long exiter_fn(void *data)
{
	char c;

	(void)data;
	if (read(exiter_pipe[0], &c, 1) == 1) {
		exiter_tid = gettid();
		pthread_exit(NULL);
	}
	return 0;
}

/*
 * With TL_QUEUE_MIN=1 one blocked job makes the next wait in the queue.
 * The blocked one then calls pthread_exit() in its cache-miss thread:
 * that thread was counted busy, the one to take the queue. Before the
 * fix the count stayed, the waiting job never ran, and every later job
 * was queued to no thread.
 */
static void test_pthread_exit(void)
{
	struct job q = { .id = 0, .fd = -1 }, c = { .id = 1, .fd = -1 };
	static int exiter_ev;
	long r[3];
	void *ev;

	setenv("TL_QUEUE_MIN", "1", 1);
	r[0] = async_head_init(&ahu3, 64, 4);
	setenv("TL_QUEUE_MIN", "2", 1);
	if (r[0] || pipe(exiter_pipe)) {
		tl_ok(0, "a head with TL_QUEUE_MIN=1, a pipe");
		return;
	}
	r[0] = threadlet_submit(exiter_fn, NULL, &exiter_ev, stacks[20], &ahu3);
	r[1] = threadlet_submit(job_fn, &q, &q, stacks[21], &ahu3);
	tl_ok(r[0] == 0 && r[1] == 0 && q.ran == 0,
	      "pthread_exit: a job blocks, the next waits (%ld %ld)", r[0], r[1]);
	tl_ok(write(exiter_pipe[1], "x", 1) == 1, "pthread_exit: the first ends its thread");
	ev = event_within_2s(&ahu3);
	tl_ok(ev == &q && q.ran == 1 && q.start_tid == exiter_tid,
	      "pthread_exit: the waiting job runs, in that thread, and posts (ran %d)", q.ran);
	r[2] = threadlet_submit(job_fn, &c, &c, stacks[22], &ahu3);
	tl_ok(r[2] == 1 ? c.ran == 1 : r[2] == 0 && event_within_2s(&ahu3) == &c,
	      "pthread_exit: the next job runs, not queued to a thread that is gone (%ld, ran %d)",
	      r[2], c.ran);
	usleep(100000);
	tl_ok(async_ring_pop(&ahu3) == NULL, "pthread_exit: no event of the ended job");
	tl_ok(async_head_exit(&ahu3) == 0, "pthread_exit: async_head_exit()");
	close(exiter_pipe[0]);
	close(exiter_pipe[1]);
}

int main(void)
{
	struct async_head_user nopool = { 0 };
	struct job j = { .fd = -1 };
	long r;

	setenv("TL_QUEUE_MIN", "2", 1);
	head_tid = gettid();
	for (int i = 0; i < NSTACKS; i++) {
		stacks[i] = threadlet_stack_alloc(STACK);
		if (threadlet_err(stacks[i])) {
			tl_ok(0, "threadlet_stack_alloc");
			return tl_exit();
		}
	}
	tl_neg(threadlet_submit(NULL, &j, &j, stacks[0], &ahu), EINVAL, "NULL fn");
	tl_neg(threadlet_submit(job_fn, &j, NULL, stacks[0], &ahu), EINVAL, "NULL event");
	tl_neg(threadlet_submit(job_fn, &j, &j, stacks[0] - 8, &ahu), EINVAL, "unaligned stack");
	tl_neg(threadlet_submit(job_fn, &j, &j, 0, &ahu), EINVAL, "stack 0");
	tl_neg(threadlet_submit(job_fn, &j, &j, stacks[0], NULL), EINVAL, "NULL head");
	tl_neg(threadlet_submit(job_fn, &j, &j, stacks[0], &nopool), EINVAL,
	       "a head without a pool");
	tl_ok(j.ran == 0, "none of them ran fn");

	r = async_head_init(&ahu, 64, 32);
	tl_ok(r == 0, "async_head_init (%ld)", r);
	if (r)
		return tl_exit();
	test_basic();
	test_queue();
	test_async_complete();
	test_complete_hostile();
	test_many();
	test_exit_runs_queue();
	test_pthread_exit();

	tl_ok(async_head_init(&ahu, 64, 32) == 0, "a new head at the same address");
	r = threadlet_submit(job_fn, &j, &j, stacks[0], &ahu);
	tl_ok(r == 1 && j.ran == 1, "threadlet_submit() finds the new pool (%ld)", r);
	tl_ok(async_head_exit(&ahu) == 0, "async_head_exit");
	return tl_exit();
}
