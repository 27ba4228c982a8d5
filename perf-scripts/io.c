// SPDX-License-Identifier: GPL-2.0
/*
 * I/O comparison: 4 KiB random reads of the data (bench.h) with N requests
 * in flight, by each method of methods[] below, in three cases:
 *   cached    the whole file is read first; blocks random with replacement;
 *   mixed     drop_caches, then the run's blocks are read once each except
 *             a random 10%: 90% of the run's reads hit the page cache;
 *   uncached  drop_caches before each run; each run reads the next slice
 *             of a fixed-seed permutation of all blocks.
 * Seeds are fixed, so runs repeat. The buffered fd has POSIX_FADV_RANDOM (no
 * readahead), and before each run mincore() checks that exactly the reads
 * the case wants will hit the page cache. Each (case, method, N) runs -r
 * times (cached: after an untimed warm-up); the median is printed. Every
 * read is checked (all 4096 bytes); any error makes the exit status 1.
 *
 * Usage: io [-c case]... [-n N]... [-r runs] [-p K] [-f data [-w]] [method ...]
 *   -l  lists the methods (posix_aio_tl runs in the -DIO_TLAIO build)
 *   -p  before each mixed or uncached run, read K other blocks, untimed: a
 *       throttled QEMU disk's burst allowance is used up before the timing
 *   -f  the data, a file or a block device [/mnt/disk/data]; -w writes it
 *       first (the -icount boots read a null_blk device, whose latency is
 *       guest time)
 * IO_PERF_CTL=<ctl-fd>,<ack-fd>: perf stat's --control fds; perf counts only
 * while a method runs. IO_TRACE=1: a getppid() before each method call and
 * a getpgrp() after it, marks for scripts/trace-io.py.
 * Output: "IO <case> <method> <N> <reads/s> <ns/read> <cpu-ns/read>" (time:
 * from the first request to the last completion, a method's setup and
 * teardown, such as a head's or a pool's threads, outside it; cpu:
 * CLOCK_PROCESS_CPUTIME_ID, all threads, the whole method call with its
 * setup and teardown), "# ..." lines with min/median/max, cache hits and
 * hand-off counts, and "IO-READS <n>", the reads done while perf counted.
 */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <threadlet.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define NBLOCKS		DATA_BLOCKS
#define BS		DATA_BS
#define R_CACHED	10000
#define R_MIXED		2000
#define R_UNCACHED	600
#define MISS_PCT	10	/* mixed: reads that go to the disk, percent */
#define MAXC		32
#define REPS_MAX	9	/* runs per (case, method, N); the median is printed */

typedef unsigned long long u64;

static const int concs[] = { 1, 8, 32 };
#define NCONC 3

enum { C_CACHED, C_MIXED, C_UNCACHED, NCASES };
static const char *const cnames[NCASES] = { "cached", "mixed", "uncached" };
static const int creqs[NCASES] = { R_CACHED, R_MIXED, R_UNCACHED };

/* Whose aio_* this binary has: glibc's, or (-DIO_TLAIO) libthreadlet-aio's. */
#ifdef IO_TLAIO
#define TLAIO_BUILD	1
#else
#define TLAIO_BUILD	0
#endif

static int fd, dfd;		/* buffered, O_DIRECT */
static atomic_int failed;
static u64 blocks[R_CACHED];	/* block numbers of the current run */
static int nreq;		/* requests in the current run */
static uint64_t (*bufs)[512];	/* one 4 KiB aligned buffer per slot */
static u64 perm[NBLOCKS];
static int reps = 5, prime;	/* -r, -p */
static unsigned char *map;	/* the file, mapped only for mincore() */
static int ctl_fd = -1, ack_fd = -1;	/* perf stat --control */
static int trace_marks;			/* IO_TRACE: marker system calls */
static long long counted_reads;	/* reads done while perf counted */
static long long t_start, t_end;	/* methods that set up, tear down outside the timing */
static const char *path = "/mnt/disk/data";

#define FAIL(...) do { if (atomic_fetch_add(&failed, 1) < 10) \
	fprintf(stderr, "io: " __VA_ARGS__); } while (0)

/* xorshift64*: fixed seeds, so runs are reproducible. */
static u64 rng_state;
static u64 rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static void verify(const uint64_t *buf, long ret, u64 block)
{
	if (ret != BS) {
		FAIL("block %llu: read returned %ld\n", block, ret);
		return;
	}
	for (int i = 0; i < 512; i++)
		if (buf[i] != block) {
			FAIL("block %llu: word %d is %llu\n", block, i,
			     (u64)buf[i]);
			return;
		}
}

/*
 * The methods are engines, as fio's are: either one call that does a whole
 * run (@run: the pool-shaped ones, whose threads take the next request
 * themselves), or per-request hooks that run_reqs() drives with N requests
 * in flight, one slot per request. A read of slot s reads block
 * blocks[req_of[s]] into bufs[s]; its result goes to res[s].
 *   setup(c)     before the clock starts: 0, or -1 after FAIL();
 *   submit(s)    starts slot s's read: 1 if it finished in place, 0 if it
 *                is in flight, -1 on error;
 *   commit()     after a batch of submits that left reads in flight
 *                [optional]: 0 or -1;
 *   reap()       waits for a read in flight: its slot, or -1 on error;
 *   teardown()   after the run [optional].
 */
struct engine {
	int (*setup)(int c);
	int (*submit)(int s);
	int (*commit)(void);
	int (*reap)(void);
	void (*teardown)(void);
};

static int req_of[MAXC];
static long res[MAXC];

/*
 * Inlined into each engine's run_<engine>() (ENGINE()), where the hooks
 * are known: they become direct calls, and the loop costs what a loop
 * written for the engine would.
 */
static inline __attribute__((always_inline)) long
run_reqs(const struct engine *e, int c)
{
	int free_slots[MAXC], nfree = c, issued = 0, inflight = 0, s, r;
	long done = 0;

	if (e->setup && e->setup(c))
		return 0;
	for (s = 0; s < c; s++)
		free_slots[s] = c - 1 - s;
	t_start = now();
	while (done < nreq) {
		int started = 0;

		while (nfree && issued < nreq) {
			s = free_slots[--nfree];
			req_of[s] = issued++;
			if ((r = e->submit(s)) < 0)
				goto out;
			if (r) {
				verify(bufs[s], res[s], blocks[req_of[s]]);
				free_slots[nfree++] = s;
				done++;
			} else {
				started++;
			}
		}
		if (started && e->commit && e->commit())
			goto out;
		inflight += started;
		if (!inflight)
			continue;
		if ((s = e->reap()) < 0)
			goto out;
		verify(bufs[s], res[s], blocks[req_of[s]]);
		free_slots[nfree++] = s;
		inflight--;
		done++;
	}
out:
	t_end = now();
	if (e->teardown)
		e->teardown();
	return done;
}

#define ENGINE(name, ...)						\
	static const struct engine name##_engine = { __VA_ARGS__ };	\
	static long run_##name(int c)					\
	{								\
		return run_reqs(&name##_engine, c);			\
	}

static int sync_submit(int s)
{
	res[s] = pread(fd, bufs[s], BS, blocks[req_of[s]] * BS);
	return 1;
}

ENGINE(sync, .submit = sync_submit)

/* pthread: a pool of N threads that take the next request themselves. */
static atomic_int next_req, done_req;
static pthread_barrier_t barrier;

static void *worker(void *arg)
{
	uint64_t *buf = bufs[(uintptr_t)arg];
	int i;

	pthread_barrier_wait(&barrier);
	while ((i = atomic_fetch_add(&next_req, 1)) < nreq) {
		verify(buf, pread(fd, buf, BS, blocks[i] * BS), blocks[i]);
		atomic_fetch_add(&done_req, 1);
	}
	return NULL;
}

static long run_pthread(int c)
{
	pthread_t th[MAXC];

	atomic_store(&next_req, 0);
	atomic_store(&done_req, 0);
	pthread_barrier_init(&barrier, NULL, c + 1);
	for (int i = 0; i < c; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i)) {
			FAIL("pthread_create\n");
			exit(1);
		}
	/* The clock starts before this thread's arrival releases the
	 * workers: on one CPU it may not run again until they are done. */
	t_start = now();
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < c; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&barrier);
	return atomic_load(&done_req);
}

/*
 * pthread_queue: the pool as a per-request program uses one (libuv's, an
 * executor's): N threads take slots from a request queue and put them on
 * a completion queue, and the head waits for each completion. Both queues
 * hold at most N slots, under pq.lock.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	unsigned int rq_head, rq_tail, cq_head, cq_tail;
	int rq[MAXC], cq[MAXC], stop, c;
	pthread_t th[MAXC];
} pq = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

static void *pq_worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pq.lock);
	for (;;) {
		int s;

		while (pq.rq_head == pq.rq_tail && !pq.stop)
			pthread_cond_wait(&pq.work, &pq.lock);
		if (pq.rq_head == pq.rq_tail)
			break;
		s = pq.rq[pq.rq_head++ % MAXC];
		pthread_mutex_unlock(&pq.lock);
		res[s] = pread(fd, bufs[s], BS, blocks[req_of[s]] * BS);
		pthread_mutex_lock(&pq.lock);
		pq.cq[pq.cq_tail++ % MAXC] = s;
		pthread_cond_signal(&pq.done);
	}
	pthread_mutex_unlock(&pq.lock);
	return NULL;
}

static int pq_setup(int c)
{
	pq.rq_head = pq.rq_tail = pq.cq_head = pq.cq_tail = 0;
	pq.stop = 0;
	for (pq.c = 0; pq.c < c; pq.c++)
		if (pthread_create(&pq.th[pq.c], NULL, pq_worker, NULL)) {
			FAIL("pthread_create\n");
			return -1;
		}
	return 0;
}

static int pq_submit(int s)
{
	pthread_mutex_lock(&pq.lock);
	pq.rq[pq.rq_tail++ % MAXC] = s;
	pthread_cond_signal(&pq.work);
	pthread_mutex_unlock(&pq.lock);
	return 0;
}

static int pq_reap(void)
{
	int s;

	pthread_mutex_lock(&pq.lock);
	while (pq.cq_head == pq.cq_tail)
		pthread_cond_wait(&pq.done, &pq.lock);
	s = pq.cq[pq.cq_head++ % MAXC];
	pthread_mutex_unlock(&pq.lock);
	return s;
}

static void pq_teardown(void)
{
	pthread_mutex_lock(&pq.lock);
	pq.stop = 1;
	pthread_cond_broadcast(&pq.work);
	pthread_mutex_unlock(&pq.lock);
	while (pq.c)
		pthread_join(pq.th[--pq.c], NULL);
}

ENGINE(pq, .setup = pq_setup, .submit = pq_submit, .reap = pq_reap,
       .teardown = pq_teardown)

/*
 * posix_aio: aio_suspend() on the reads in flight, then every finished one
 * is reaped before the next are submitted, in slot order.
 */
static struct aiocb aio_cbs[MAXC];
static const struct aiocb *aio_list[MAXC];
static int aio_c, aio_fin[MAXC], aio_nfin, aio_next;

static int aio_setup(int c)
{
	aio_c = c;
	aio_nfin = aio_next = 0;
	memset(aio_list, 0, sizeof(aio_list));
	return 0;
}

static int aio_submit(int s)
{
	aio_cbs[s] = (struct aiocb){ .aio_fildes = fd, .aio_buf = bufs[s],
		.aio_nbytes = BS, .aio_offset = blocks[req_of[s]] * BS };
	if (aio_read(&aio_cbs[s])) {
		FAIL("aio_read: %m\n");
		return -1;
	}
	aio_list[s] = &aio_cbs[s];
	return 0;
}

static int aio_reap(void)
{
	while (aio_next == aio_nfin) {
		if (aio_suspend(aio_list, aio_c, NULL) && errno != EINTR) {
			FAIL("aio_suspend: %m\n");
			return -1;
		}
		aio_nfin = aio_next = 0;
		for (int s = 0; s < aio_c; s++) {
			if (!aio_list[s] || aio_error(&aio_cbs[s]) == EINPROGRESS)
				continue;
			res[s] = aio_return(&aio_cbs[s]);
			aio_list[s] = NULL;
			aio_fin[aio_nfin++] = s;
		}
	}
	return aio_fin[aio_next++];
}

ENGINE(aio, .setup = aio_setup, .submit = aio_submit, .reap = aio_reap)

/*
 * kaio: a batch of submits is one io_submit(); io_getevents() takes every
 * finished read. KAIO needs O_DIRECT (without it io_submit() is
 * synchronous), in every case.
 */
static io_context_t kaio_ctx;
static struct iocb kaio_cbs[MAXC], *kaio_batch[MAXC];
static struct io_event kaio_ev[MAXC];
static int kaio_c, kaio_nbatch, kaio_nev, kaio_next;

static int kaio_setup(int c)
{
	int r;

	kaio_ctx = 0;
	kaio_c = c;
	kaio_nbatch = kaio_nev = kaio_next = 0;
	if ((r = io_setup(c, &kaio_ctx))) {
		FAIL("io_setup: %s\n", strerror(-r));
		return -1;
	}
	return 0;
}

static int kaio_submit(int s)
{
	io_prep_pread(&kaio_cbs[s], dfd, bufs[s], BS, blocks[req_of[s]] * BS);
	kaio_batch[kaio_nbatch++] = &kaio_cbs[s];
	return 0;
}

static int kaio_commit(void)
{
	int r = io_submit(kaio_ctx, kaio_nbatch, kaio_batch);

	if (r != kaio_nbatch) {
		FAIL("io_submit: %d\n", r);
		return -1;
	}
	kaio_nbatch = 0;
	return 0;
}

static int kaio_reap(void)
{
	int s;

	while (kaio_next == kaio_nev) {
		int n = io_getevents(kaio_ctx, 1, kaio_c, kaio_ev, NULL);

		if (n < 0 && n != -EINTR) {
			FAIL("io_getevents: %s\n", strerror(-n));
			return -1;
		}
		kaio_nev = n > 0 ? n : 0;
		kaio_next = 0;
	}
	s = (struct iocb *)kaio_ev[kaio_next].obj - kaio_cbs;
	res[s] = (long)kaio_ev[kaio_next++].res;
	return s;
}

static void kaio_teardown(void)
{
	io_destroy(kaio_ctx);
}

ENGINE(kaio, .setup = kaio_setup, .submit = kaio_submit, .commit = kaio_commit,
       .reap = kaio_reap, .teardown = kaio_teardown)

/*
 * io_uring: a batch of submits is one io_uring_submit(). The kernel does
 * not hand off a thread that has used io_uring (its context is per task:
 * kernel/async/identity.c), so this engine runs in a thread of its own
 * (THREAD), or every threadlet method after it would fall back to sync
 * reads.
 */
static struct io_uring ring;

static int uring_setup(int c)
{
	int r;

	(void)c;
	if ((r = io_uring_queue_init(MAXC, &ring, 0))) {
		FAIL("io_uring_queue_init: %s\n", strerror(-r));
		return -1;
	}
	return 0;
}

static int uring_submit(int s)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

	io_uring_prep_read(sqe, fd, bufs[s], BS, blocks[req_of[s]] * BS);
	io_uring_sqe_set_data(sqe, (void *)(uintptr_t)s);
	return 0;
}

static int uring_commit(void)
{
	io_uring_submit(&ring);
	return 0;
}

static int uring_reap(void)
{
	struct io_uring_cqe *cqe;
	int r, s;

	while ((r = io_uring_wait_cqe(&ring, &cqe)))
		if (r != -EINTR) {
			FAIL("io_uring_wait_cqe: %s\n", strerror(-r));
			return -1;
		}
	s = (uintptr_t)io_uring_cqe_get_data(cqe);
	res[s] = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	return s;
}

static void uring_teardown(void)
{
	io_uring_queue_exit(&ring);
}

ENGINE(uring, .setup = uring_setup, .submit = uring_submit, .commit = uring_commit,
       .reap = uring_reap, .teardown = uring_teardown)

/*
 * The threadlet engines share one head; a read's event is &res[s].
 * threadlet_vdso and threadlet_syscall: threadlet_exec() per read;
 * threadlet_submit: threadlet_submit() per read, which may queue it behind
 * the cache-miss threads; syslet: a one-atom chain per read.
 */
static struct async_head_user ahu;
static unsigned long stacks[MAXC];

static int head_init(int c)
{
	int r;

	memset(&ahu, 0, sizeof(ahu));
	if ((r = async_head_init_pool(&ahu, 64, c, c))) {
		FAIL("async_head_init: %s\n", strerror(-r));
		return -1;
	}
	return 0;
}

static void head_exit(void)
{
	async_head_exit(&ahu);
}

static void *pop_one(void)
{
	void *ev;

	while (!(ev = async_ring_pop(&ahu))) {
		long r = async_wait(1, ahu.user_ring_idx, &ahu);

		if (r < 0 && r != -EINTR) {
			FAIL("async_wait: %s\n", strerror(-r));
			return NULL;
		}
	}
	return ev;
}

static int tl_started(long r, const char *what)
{
	if (r == 0 || r == 1)
		return r;
	FAIL("%s returned %ld (%#lx)\n", what, r, (unsigned long)r);
	return -1;
}

/* The index in @base[0..@n) of the event pop_one() gives, or -1. */
static int pop_index(const void *base, size_t size, int n)
{
	const char *ev = pop_one(), *b = base;

	if (!ev)
		return -1;
	if (ev < b || ev >= b + (size_t)n * size || (size_t)(ev - b) % size) {
		FAIL("unknown event %p\n", (const void *)ev);
		return -1;
	}
	return (size_t)(ev - b) / size;
}

static int tl_reap(void)
{
	return pop_index(res, sizeof(res[0]), MAXC);
}

static long tl_read(long *r)
{
	int s = r - res;

	return pread(fd, bufs[s], BS, blocks[req_of[s]] * BS);
}

static long tl_fn(void *data)
{
	*(long *)data = tl_read(data);
	return complete_threadlet_fn(data, &ahu);
}

static int tl_submit(int s)
{
	return tl_started(threadlet_exec(tl_fn, &res[s], stacks[s], &ahu), "threadlet_exec");
}

ENGINE(tl, .setup = head_init, .submit = tl_submit, .reap = tl_reap, .teardown = head_exit)

/* threadlet_submit()'s fn returns; the library posts its event. */
static long tl_submit_fn(void *data)
{
	*(long *)data = tl_read(data);
	return 0;
}

static int tlq_submit(int s)
{
	return tl_started(threadlet_submit(tl_submit_fn, &res[s], &res[s], stacks[s], &ahu),
		       "threadlet_submit");
}

ENGINE(tlq, .setup = head_init, .submit = tlq_submit, .reap = tl_reap, .teardown = head_exit)

static struct syslet_uatom atoms[MAXC];
static long long sl_ret[MAXC];
static u64 sl_fd, sl_len = BS, sl_buf[MAXC], sl_off[MAXC];

static int sl_setup(int c)
{
	sl_fd = fd;
	return head_init(c);
}

static int sl_submit(int s)
{
	struct syslet_uatom *a;

	sl_buf[s] = (uintptr_t)bufs[s];
	sl_off[s] = blocks[req_of[s]] * BS;
	sl_ret[s] = 0;
	syslet_atom_init(&atoms[s], SYS_pread64, 0, &sl_ret[s], NULL,
			 4, &sl_fd, &sl_buf[s], &sl_len, &sl_off[s]);
	a = async_exec(&atoms[s], &ahu);
	if (a && a != &atoms[s]) {
		FAIL("async_exec: %p %s\n", (void *)a, strerror(-threadlet_ptr_err(a)));
		return -1;
	}
	res[s] = sl_ret[s];
	return a == &atoms[s];
}

static int sl_reap(void)
{
	int s = pop_index(atoms, sizeof(atoms[0]), MAXC);

	if (s >= 0)
		res[s] = sl_ret[s];
	return s;
}

ENGINE(sl, .setup = sl_setup, .submit = sl_submit, .reap = sl_reap, .teardown = head_exit)

/*
 * threadlet_loop: pthread's pool model as plain synchronous code: each
 * threadlet reads requests until none is left; one that blocks goes on as
 * a cache-miss thread and the head starts the next.
 */
struct tl_loop {
	int slot;
	long done;
};
static struct tl_loop tl_loops[MAXC];

static long tl_loop_fn(void *data)
{
	struct tl_loop *lp = data;
	uint64_t *buf = bufs[lp->slot];
	int i;

	while ((i = atomic_fetch_add(&next_req, 1)) < nreq) {
		verify(buf, pread(fd, buf, BS, blocks[i] * BS), blocks[i]);
		lp->done++;
	}
	return complete_threadlet_fn(lp, &ahu);
}

static long run_threadlet_loop(int c)
{
	long done = 0;
	int s;

	atomic_store(&next_req, 0);
	if (head_init(c))
		return 0;
	t_start = now();
	for (s = 0; s < c && atomic_load(&next_req) < nreq; s++) {
		tl_loops[s] = (struct tl_loop){ s, 0 };
		if (tl_started(threadlet_exec(tl_loop_fn, &tl_loops[s], stacks[s], &ahu),
			    "threadlet_exec") < 0)
			break;
	}
	/*
	 * async_head_exit() joins the loops, as the pool's head joins its
	 * threads: the spares end at once, each loop's thread when its loop
	 * is done (its event is not posted), and it returns when all are.
	 */
	async_head_exit(&ahu);
	while (s--)
		done += tl_loops[s].done;
	return done;
}

/*
 * syslet_chains: threadlet_loop's model as syslets. N chains take pread
 * atoms from one queue (SYSLET_NEXT_QUEUE), as the loop's threadlets take
 * requests: chain k starts with read k, and whichever chain finishes a
 * read takes the next one queued. Each read goes to a buffer of its own
 * (rbufs, made and touched once by main()). A chain that blocks goes on in
 * a cache-miss thread and posts the last atom it ran when the queue is
 * empty; once all have, the head checks every read. The checks are timed,
 * as the other methods' are: under -icount, time is instructions, wherever
 * they run.
 */
static struct syslet_uatom ch_atoms[R_CACHED];
static long long ch_ret[R_CACHED];
static u64 ch_buf[R_CACHED], ch_off[R_CACHED], ch_ent[R_CACHED];
static struct syslet_queue ch_q;
static uint64_t (*rbufs)[512];

static long run_syslet_chains(int c)
{
	int inflight = 0, k;
	long done = 0;

	if (head_init(c))
		return 0;
	sl_fd = fd;
	for (int i = 0; i < nreq; i++) {
		ch_buf[i] = (uintptr_t)rbufs[i];
		ch_off[i] = blocks[i] * BS;
		ch_ret[i] = 0;
		syslet_atom_init(&ch_atoms[i], SYS_pread64, 0, &ch_ret[i], NULL,
				 4, &sl_fd, &ch_buf[i], &sl_len, &ch_off[i]);
		syslet_link_queue(&ch_atoms[i], &ch_q);
		ch_ent[i] = (uintptr_t)&ch_atoms[i];
	}
	c = c < nreq ? c : nreq;
	ch_q = (struct syslet_queue){ .head = c, .nr = nreq, .entries = (uintptr_t)ch_ent };
	t_start = now();
	for (k = 0; k < c; k++) {
		struct syslet_uatom *a = async_exec(&ch_atoms[k], &ahu);

		if (threadlet_ptr_err(a)) {
			FAIL("async_exec: %s\n", strerror(-threadlet_ptr_err(a)));
			break;
		}
		inflight += !a;
	}
	while (inflight && pop_index(ch_atoms, sizeof(ch_atoms[0]), nreq) >= 0)
		inflight--;
	for (int i = 0; i < nreq; i++) {
		verify(rbufs[i], ch_ret[i], blocks[i]);
		done += ch_ret[i] != 0;
	}
	t_end = now();
	head_exit();
	return done;
}

enum {
	N1 = 1,		/* N = 1 only */
	STATS = 2,	/* print the hand-off counts */
	TLAIO = 4,	/* POSIX AIO on libthreadlet-aio: only (and alone) in -DIO_TLAIO */
	VDSO = 8,	/* needs threadlet_on/off in the vDSO */
	SYSCALL = 16,	/* needs THREADLET_FORCE_SYSCALL=1: run in a child by default */
	GLIBC_AIO = 32,	/* not in -DIO_TLAIO */
	THREAD = 64,	/* run_reqs() in a thread of its own */
};

/*
 * The methods, in the order they run: a whole run, or ENGINE()'s run_<engine>.
 * A run's blocks depend on the index of its method (same_as: another's, to
 * read the same blocks); SEEDS spaces them and stays 9, so that the first
 * nine methods' blocks stay the same.
 */
#define SEEDS 9
static const struct method {
	const char *name;
	long (*run)(int c);
	int flags;
	int same_as;
} methods[] = {
	{ "sync", run_sync, N1, 0 },
	{ "pthread", run_pthread, 0, 1 },
	{ "posix_aio", run_aio, GLIBC_AIO, 2 },
	{ "kaio", run_kaio, 0, 3 },
	{ "io_uring", run_uring, THREAD, 4 },
	{ "threadlet_vdso", run_tl, STATS | VDSO, 5 },
	{ "threadlet_syscall", run_tl, STATS | SYSCALL, 6 },
	{ "syslet", run_sl, STATS, 7 },
	{ "threadlet_loop", run_threadlet_loop, STATS, 8 },
	{ "threadlet_submit", run_tlq, STATS | VDSO, 5 },
	{ "pthread_queue", run_pq, 0, 1 },
	{ "syslet_chains", run_syslet_chains, STATS, 7 },
	{ "posix_aio_tl", run_aio, STATS | TLAIO, 2 },
};
#define NMETHODS (int)(sizeof(methods) / sizeof(methods[0]))

/* A method flagged THREAD runs in a thread of its own. */
struct run_thread {
	long (*run)(int c);
	int c;
	long done;
};

static void *run_thread(void *arg)
{
	struct run_thread *t = arg;

	t->done = t->run(t->c);
	return NULL;
}

static long run_method(const struct method *m, int c)
{
	struct run_thread t = { m->run, c, 0 };
	pthread_t th;

	if (!(m->flags & THREAD))
		return m->run(c);
	if (pthread_create(&th, NULL, run_thread, &t)) {
		FAIL("pthread_create\n");
		return 0;
	}
	pthread_join(th, NULL);
	return t.done;
}

/*
 * drop_caches leaves the pages still held in per-CPU LRU batches (the last
 * few read); POSIX_FADV_DONTNEED drains those batches on every CPU and
 * drops the file's pages again.
 */
static void drop_caches(void)
{
	int f = open("/proc/sys/vm/drop_caches", O_WRONLY), r;

	sync();
	if (f < 0 || write(f, "3", 1) != 1)
		FAIL("drop_caches: %m\n");
	if (f >= 0)
		close(f);
	if ((r = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)))
		FAIL("POSIX_FADV_DONTNEED: %s\n", strerror(r));
}

static void warm_cache(void)
{
	static char big[1 << 20];
	off_t off = 0;
	ssize_t n;

	/* The data's blocks only: a block device may be larger. */
	while (off < (off_t)NBLOCKS * BS &&
	       (n = pread(fd, big, sizeof(big), off)) > 0)
		off += n;
	if (off != (off_t)NBLOCKS * BS)
		FAIL("warm-up read %lld bytes\n", (long long)off);
}

/* One uncached read outside the timed window, checked like the others. */
static void read_block(u64 block)
{
	verify(bufs[0], pread(fd, bufs[0], BS, block * BS), block);
}

/* Reads of the current run whose block is in the page cache now. */
static int resident(void)
{
	static unsigned char vec[NBLOCKS];
	int n = 0;

	if (mincore(map, (size_t)NBLOCKS * BS, vec)) {
		FAIL("mincore: %m\n");
		return -1;
	}
	for (int i = 0; i < nreq; i++)
		n += vec[blocks[i]] & 1;
	return n;
}

/*
 * Sends "enable" or "disable" to perf stat and waits for its "ack". With
 * IO_TRACE set, also marks the same points for scripts/trace-io.py:
 * getppid() where a method call starts, getpgrp() where it ends.
 */
static void perf_ctl(const char *cmd)
{
	char c = 0;

	if (trace_marks)
		syscall(cmd[0] == 'e' ? SYS_getppid : SYS_getpgrp);
	if (ctl_fd < 0)
		return;
	if (write(ctl_fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd)) {
		FAIL("perf control: %m\n");
		return;
	}
	while (c != '\n')
		if (read(ack_fd, &c, 1) != 1) {
			FAIL("perf ack: %m\n");
			return;
		}
}

/* Sets up a run's blocks and the page cache; returns the hits it must have. */
static int prepare(int cs, int slot)
{
	static char miss[R_CACHED];
	static int idx[R_CACHED];
	int nmiss;

	if (cs == C_CACHED) {
		rng_state = 0x9E3779B97F4A7C15ULL ^ (u64)(slot + 1);
		for (int i = 0; i < nreq; i++)
			blocks[i] = rng() % NBLOCKS;
		return nreq;
	}
	/* The next slice of the permutation: no block repeats within a run,
	 * and caches are dropped before each. */
	for (int i = 0; i < nreq; i++)
		blocks[i] = perm[((u64)slot * nreq + i) % NBLOCKS];
	drop_caches();
	/* blocks right after the run's slice: never among its own */
	for (int i = 0; i < prime; i++)
		read_block(perm[((u64)slot * nreq + nreq + i) % NBLOCKS]);
	if (cs == C_UNCACHED)
		return 0;
	/* mixed: a random MISS_PCT% of the reads stay uncached */
	nmiss = nreq * MISS_PCT / 100;
	memset(miss, 0, sizeof(miss));
	for (int i = 0; i < nreq; i++)
		idx[i] = i;
	rng_state = 0xA5A5A5A55A5A5A5AULL ^ (u64)(slot + 1);
	for (int k = 0; k < nmiss; k++) {
		int j = k + rng() % (nreq - k), t = idx[k];

		idx[k] = idx[j];
		idx[j] = t;
		miss[idx[k]] = 1;
	}
	for (int i = 0; i < nreq; i++)
		if (!miss[i])
			read_block(blocks[i]);
	return nreq - nmiss;
}

static void run(int cs, int m, int ci)
{
	const char *cname = cnames[cs], *mname = methods[m].name;
	int c = concs[ci], hits, hits_min = creqs[cs], hits_max = 0, want;
	int bm = methods[m].same_as;
	struct threadlet_stats s0, s1;
	uint64_t t0, t1, c0, c1, t[REPS_MAX], cpu[REPS_MAX];
	long done;

	nreq = creqs[cs];
	threadlet_stats(&s0);
	/* cached: one untimed warm-up run first (r = -1) */
	for (int r = cs == C_CACHED ? -1 : 0; r < reps; r++) {
		want = prepare(cs, ((cs * SEEDS + bm) * NCONC + ci) * REPS_MAX + r + 1);
		hits = resident();
		if (hits < hits_min)
			hits_min = hits;
		if (hits > hits_max)
			hits_max = hits;
		if (hits != want)
			FAIL("%s %s N=%d: %d of %d reads would hit the page cache, not %d\n",
			     cname, mname, c, hits, nreq, want);
		memset(bufs, 0, (size_t)MAXC * BS);
		t_start = t_end = 0;
		perf_ctl("enable\n");
		c0 = cpu_now();
		t0 = now();
		done = run_method(&methods[m], c);
		t1 = now();
		c1 = cpu_now();
		perf_ctl("disable\n");
		counted_reads += nreq;
		if (t_start)
			t0 = t_start;
		if (t_end)
			t1 = t_end;
		if (r >= 0) {
			t[r] = t1 - t0;
			cpu[r] = c1 - c0;
		}
		if (done != nreq)
			FAIL("%s %s N=%d: %ld completions for %d requests\n",
			     cname, mname, c, done, nreq);
	}
	threadlet_stats(&s1);
	qsort(t, reps, sizeof(t[0]), cmp_u64);
	qsort(cpu, reps, sizeof(cpu[0]), cmp_u64);
	printf("IO %s %s %d %.0f %.0f %.0f\n", cname, mname, c,
	       nreq * 1e9 / t[reps / 2], (double)t[reps / 2] / nreq,
	       (double)cpu[reps / 2] / nreq);
	printf("# %s %s %d: ns/read min %.0f median %.0f max %.0f, cpu-ns/read min %.0f median %.0f max %.0f over %d runs; cache hits %d..%d of %d",
	       cname, mname, c, (double)t[0] / nreq, (double)t[reps / 2] / nreq,
	       (double)t[reps - 1] / nreq, (double)cpu[0] / nreq,
	       (double)cpu[reps / 2] / nreq, (double)cpu[reps - 1] / nreq, reps,
	       hits_min, hits_max, nreq);
	if (methods[m].flags & STATS)
		printf("; hand-offs %llu fallbacks %llu in place %llu",
		       s1.nr_handoffs - s0.nr_handoffs,
		       s1.nr_fallbacks - s0.nr_fallbacks, s1.nr_sync - s0.nr_sync);
	printf("\n");
	fflush(stdout);
}

/* This program again, the same options, one method, THREADLET_FORCE_SYSCALL=1. */
static int run_child(int argc, char **argv, const char *method)
{
	char *args[argc + 2];
	pid_t pid;
	int st, n = 0;

	/* The data is written once, by the parent: no -w for the child. */
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "-w"))
			args[n++] = argv[i];
	args[n] = (char *)method;
	args[n + 1] = NULL;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		setenv("THREADLET_FORCE_SYSCALL", "1", 1);
		execv("/proc/self/exe", args);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		FAIL("child %s failed\n", method);
		return 1;
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: io [-c cached|mixed|uncached]... [-n 1|8|32]... "
		"[-r runs] [-p K] [-f data [-w]] [method ...] | -l\n");
	return 64;
}

int main(int argc, char **argv)
{
	int want[NMETHODS] = { 0 }, want_case[NCASES] = { 0 }, want_conc[NCONC] = { 0 };
	int all, any_case = 0, any_conc = 0, opt, nopts, wflag = 0;
	const char *ctl = getenv("IO_PERF_CTL");

	setvbuf(stdout, NULL, _IOLBF, 0);
	trace_marks = !!getenv("IO_TRACE");
	while ((opt = getopt(argc, argv, "c:n:r:p:f:wl")) != -1) {
		int k;

		switch (opt) {
		case 'c':
			for (k = 0; k < NCASES && strcmp(optarg, cnames[k]); k++)
				;
			if (k == NCASES)
				return usage();
			want_case[k] = any_case = 1;
			break;
		case 'n':
			for (k = 0; k < NCONC && atoi(optarg) != concs[k]; k++)
				;
			if (k == NCONC)
				return usage();
			want_conc[k] = any_conc = 1;
			break;
		case 'r':
			reps = atoi(optarg);
			if (reps < 1 || reps > REPS_MAX)
				return usage();
			break;
		case 'f':
			path = optarg;
			break;
		case 'w':
			wflag = 1;
			break;
		case 'l':	/* the methods, for io-run.sh */
			for (int m = 0; m < NMETHODS; m++)
				printf("%s%s", methods[m].name, m < NMETHODS - 1 ? " " : "\n");
			return 0;
		case 'p':
			prime = atoi(optarg);
			if (prime < 0 || prime > NBLOCKS - R_CACHED)
				return usage();
			break;
		default:
			return usage();
		}
	}
	nopts = optind;
	all = optind == argc;
	for (int i = optind; i < argc; i++) {
		int m;

		for (m = 0; m < NMETHODS && strcmp(argv[i], methods[m].name); m++)
			;
		if (m == NMETHODS) {
			fprintf(stderr, "io: unknown method %s\n", argv[i]);
			return 64;
		}
		if (methods[m].flags & (TLAIO_BUILD ? GLIBC_AIO : TLAIO)) {
			fprintf(stderr, "io: %s is not in this build\n", argv[i]);
			return 64;
		}
		want[m] = 1;
	}
	for (int k = 0; k < NCASES; k++)
		want_case[k] |= !any_case;
	for (int k = 0; k < NCONC; k++)
		want_conc[k] |= !any_conc;
	for (int m = 0; all && m < NMETHODS; m++)
		want[m] = TLAIO_BUILD ? !!(methods[m].flags & TLAIO) :
			  !(methods[m].flags & (TLAIO | SYSCALL));
	for (int m = 0; m < NMETHODS; m++)
		if (want[m] && (methods[m].flags & (VDSO | SYSCALL)) &&
		    (methods[m].flags & (threadlet_uses_vdso() ? SYSCALL : VDSO))) {
			fprintf(stderr, "io: %s needs THREADLET_FORCE_SYSCALL %s\n",
				methods[m].name, methods[m].flags & VDSO ? "unset" : "=1");
			return 64;
		}
	if (ctl && sscanf(ctl, "%d,%d", &ctl_fd, &ack_fd) != 2) {
		fprintf(stderr, "io: IO_PERF_CTL must be <ctl-fd>,<ack-fd>\n");
		return 64;
	}

	bufs = aligned_alloc(BS, (size_t)MAXC * BS);
	rbufs = aligned_alloc(BS, (size_t)R_CACHED * BS);
	if (!bufs || !rbufs) {
		perror("io: setup");
		return 1;
	}
	if (wflag && data_write(path))
		return 1;
	fd = open(path, O_RDONLY);
	dfd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0 || dfd < 0) {
		perror("io: setup");
		return 1;
	}
	map = mmap(NULL, (size_t)NBLOCKS * BS, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("io: mmap");
		return 1;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	memset(rbufs, 0, (size_t)R_CACHED * BS);	/* no page faults in the runs */
	for (int s = 0; s < MAXC; s++)
		if (threadlet_err(stacks[s] = threadlet_stack_alloc(64 << 10))) {
			fprintf(stderr, "io: threadlet_stack_alloc: %s\n",
				strerror(-threadlet_err(stacks[s])));
			return 1;
		}
	/* Fisher-Yates with a fixed seed: fresh blocks for uncached runs. */
	for (int i = 0; i < NBLOCKS; i++)
		perm[i] = i;
	rng_state = 0x1234567887654321ULL;
	for (int i = NBLOCKS - 1; i > 0; i--) {
		int j = rng() % (i + 1);
		u64 t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}

	printf("# clock step %llu ns (smallest of 100)\n", (unsigned long long)clock_step());
	printf("# requests per run: cached %d mixed %d uncached %d\n",
	       R_CACHED, R_MIXED, R_UNCACHED);
	printf("# mixed: %d%% of the reads miss the page cache\n", MISS_PCT);
	printf("# runs per figure: %d (median)\n", reps);
	printf("# primer reads before each mixed/uncached run: %d\n", prime);
	for (int cs = 0; cs < NCASES; cs++) {
		if (!want_case[cs])
			continue;
		if (cs == C_CACHED)
			warm_cache();
		for (int m = 0; m < NMETHODS; m++) {
			if (!want[m])
				continue;
			for (int ci = 0; ci < NCONC; ci++)
				if (want_conc[ci] && (!(methods[m].flags & N1) || concs[ci] == 1))
					run(cs, m, ci);
		}
	}
	printf("IO-READS %lld\n", counted_reads);
	for (int m = 0; all && !TLAIO_BUILD && m < NMETHODS; m++)
		if (methods[m].flags & SYSCALL)
			run_child(nopts, argv, methods[m].name);
	printf("io: %s\n", failed ? "FAILED" : "all reads checked");
	return failed != 0;
}
