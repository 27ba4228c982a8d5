// SPDX-License-Identifier: GPL-2.0
/*
 * I/O comparison: 4 KiB random reads of /mnt/disk/data (every 4 KiB block b
 * holds the 64-bit value b, 512 times) with N requests in flight, by
 *   sync               pread() in one thread (N = 1 only)
 *   pthread            a pool of N threads doing pread()
 *   posix_aio          glibc aio_read() + aio_suspend() (glibc runs these
 *                      on its own helper threads)
 *   kaio               libaio io_submit()/io_getevents() on an O_DIRECT fd
 *                      (in BOTH cases: without O_DIRECT KAIO is synchronous;
 *                      so its "cached" figures bypass the page cache)
 *   io_uring           liburing, buffered reads
 *   threadlet_vdso     threadlet_exec() of a function doing one pread, N
 *                      cache-miss threads, completions from the ring
 *   threadlet_syscall  the same with THREADLET_FORCE_SYSCALL=1 (the library
 *                      picks the path once per process: run in a child)
 *   syslet             one async_exec() of a single pread atom per request
 * in two cases:
 *   cached    the whole file is read first; block numbers are random with
 *             replacement over the whole file (fixed seed per run);
 *   uncached  drop_caches before each run; every run reads the next slice
 *             of a fixed-seed permutation of all blocks (no block repeats
 *             within a run; slices wrap around the file after 16384
 *             blocks), with POSIX_FADV_RANDOM on the buffered fd so
 *             readahead does not prefetch neighbours.
 * Each (case, method, N) is run REPS times (cached: after one untimed
 * warm-up run); the median time is printed.
 * Every read is checked (all 4096 bytes), and completions must equal
 * requests; any error makes the exit status non-zero.
 *
 * Usage: io [method ...]   (default: all; threadlet_syscall runs in a child
 *                           process with THREADLET_FORCE_SYSCALL=1)
 * Output: "IO <case> <method> <concurrency> <reads/s> <ns_per_read>" (median
 * of REPS runs), plus "# ..." lines with min/median/max and, for threadlets
 * and syslets, the calling thread's hand-off counts over the REPS runs.
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <threadlet.h>
#include <time.h>
#include <unistd.h>

#define PATH		"/mnt/disk/data"
#define NBLOCKS		(64 * 256)
#define BS		4096
#define R_CACHED	10000
#define R_UNCACHED	600
#define MAXC		32
#define REPS		5	/* runs per (case, method, N); the median is printed */

typedef unsigned long long u64;

static const int concs[] = { 1, 8, 32 };
#define NCONC 3

enum { M_SYNC, M_PTHREAD, M_POSIX_AIO, M_KAIO, M_URING, M_TL_VDSO, M_TL_SYSCALL,
       M_SYSLET, NMETHODS };
static const char *const mnames[NMETHODS] = {
	"sync", "pthread", "posix_aio", "kaio", "io_uring", "threadlet_vdso",
	"threadlet_syscall", "syslet",
};

static int fd, dfd;		/* buffered, O_DIRECT */
static atomic_int failed;
static u64 blocks[R_CACHED];	/* block numbers of the current run */
static int nreq;		/* requests in the current run */
static uint64_t (*bufs)[512];	/* one 4 KiB aligned buffer per slot */
static u64 perm[NBLOCKS];

#define FAIL(...) do { if (atomic_fetch_add(&failed, 1) < 10) \
	fprintf(stderr, "io: " __VA_ARGS__); } while (0)

static long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

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

/* ---- sync ---- */
static long run_sync(int c)
{
	(void)c;
	for (int i = 0; i < nreq; i++)
		verify(bufs[0], pread(fd, bufs[0], BS, blocks[i] * BS), blocks[i]);
	return nreq;
}

/* ---- pthread pool ---- */
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

static long long t_start;	/* methods that set up outside the timing */

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
	pthread_barrier_wait(&barrier);
	t_start = now();
	for (int i = 0; i < c; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&barrier);
	return atomic_load(&done_req);
}

/* ---- POSIX AIO ---- */
static long run_posix_aio(int c)
{
	struct aiocb cbs[MAXC];
	const struct aiocb *list[MAXC];
	int req_of[MAXC], issued = 0, inflight = 0;
	long done = 0;

	memset(cbs, 0, sizeof(cbs));
	for (int s = 0; s < c; s++)
		list[s] = NULL;
	while (done < nreq) {
		for (int s = 0; s < c && issued < nreq; s++) {
			if (list[s])
				continue;
			cbs[s] = (struct aiocb){ .aio_fildes = fd, .aio_buf = bufs[s],
				.aio_nbytes = BS, .aio_offset = blocks[issued] * BS };
			req_of[s] = issued++;
			if (aio_read(&cbs[s])) {
				FAIL("aio_read: %m\n");
				return done;
			}
			list[s] = &cbs[s];
			inflight++;
		}
		if (aio_suspend(list, c, NULL) && errno != EINTR) {
			FAIL("aio_suspend: %m\n");
			return done;
		}
		for (int s = 0; s < c; s++) {
			if (!list[s] || aio_error(&cbs[s]) == EINPROGRESS)
				continue;
			verify(bufs[s], aio_return(&cbs[s]), blocks[req_of[s]]);
			list[s] = NULL;
			inflight--;
			done++;
		}
	}
	return done;
}

/* ---- KAIO (libaio, O_DIRECT) ---- */
static long run_kaio(int c)
{
	io_context_t ctx = 0;
	struct iocb cbs[MAXC], *cbp[MAXC];
	struct io_event ev[MAXC];
	int issued = 0, r;
	long done = 0;

	if ((r = io_setup(c, &ctx))) {
		FAIL("io_setup: %s\n", strerror(-r));
		return 0;
	}
	t_start = now();
	for (int s = 0; s < c && issued < nreq; s++, issued++) {
		io_prep_pread(&cbs[s], dfd, bufs[s], BS, blocks[issued] * BS);
		cbs[s].data = (void *)(uintptr_t)issued;
		cbp[s] = &cbs[s];
	}
	if ((r = io_submit(ctx, issued, cbp)) != issued) {
		FAIL("io_submit: %d\n", r);
		goto out;
	}
	while (done < nreq) {
		int n = io_getevents(ctx, 1, c, ev, NULL);

		if (n < 0) {
			if (n == -EINTR)
				continue;
			FAIL("io_getevents: %s\n", strerror(-n));
			break;
		}
		for (int k = 0; k < n; k++) {
			struct iocb *cb = ev[k].obj;
			int s = cb - cbs, i = (uintptr_t)cb->data;

			verify(bufs[s], (long)ev[k].res, blocks[i]);
			done++;
			if (issued < nreq) {
				io_prep_pread(cb, dfd, bufs[s], BS, blocks[issued] * BS);
				cb->data = (void *)(uintptr_t)issued++;
				if ((r = io_submit(ctx, 1, &cb)) != 1) {
					FAIL("io_submit: %d\n", r);
					goto out;
				}
			}
		}
	}
out:
	io_destroy(ctx);
	return done;
}

/* ---- io_uring ---- */
static long run_uring(int c)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int issued = 0, req_of[MAXC], r;
	long done = 0;

	if ((r = io_uring_queue_init(MAXC, &ring, 0))) {
		FAIL("io_uring_queue_init: %s\n", strerror(-r));
		return 0;
	}
	t_start = now();
	for (int s = 0; s < c && issued < nreq; s++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_read(sqe, fd, bufs[s], BS, blocks[issued] * BS);
		io_uring_sqe_set_data(sqe, (void *)(uintptr_t)s);
		req_of[s] = issued++;
	}
	io_uring_submit(&ring);
	while (done < nreq) {
		if ((r = io_uring_wait_cqe(&ring, &cqe))) {
			if (r == -EINTR)
				continue;
			FAIL("io_uring_wait_cqe: %s\n", strerror(-r));
			break;
		}
		int s = (uintptr_t)io_uring_cqe_get_data(cqe);

		verify(bufs[s], cqe->res, blocks[req_of[s]]);
		io_uring_cqe_seen(&ring, cqe);
		done++;
		if (issued < nreq) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_read(sqe, fd, bufs[s], BS, blocks[issued] * BS);
			io_uring_sqe_set_data(sqe, (void *)(uintptr_t)s);
			req_of[s] = issued++;
			io_uring_submit(&ring);
		}
	}
	io_uring_queue_exit(&ring);
	return done;
}

/* ---- threadlets and syslets ---- */
static struct async_head_user ahu;
static unsigned long stacks[MAXC];

struct tl_req {
	int slot, idx;
	long ret;
};
static struct tl_req tl_reqs[MAXC];

static long tl_fn(void *data)
{
	struct tl_req *rq = data;

	rq->ret = pread(fd, bufs[rq->slot], BS, blocks[rq->idx] * BS);
	return complete_threadlet_fn(rq, &ahu);
}

static int head_init(int c)
{
	int r;

	memset(&ahu, 0, sizeof(ahu));
	if ((r = async_head_init(&ahu, 64, c))) {
		FAIL("async_head_init: %s\n", strerror(-r));
		return -1;
	}
	return 0;
}

/* Pops one completion, waiting if needed. */
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

static long run_threadlet(int c)
{
	int free_slots[MAXC], nfree = c, issued = 0, inflight = 0;
	long done = 0;

	if (head_init(c))
		return 0;
	for (int s = 0; s < c; s++)
		free_slots[s] = c - 1 - s;
	t_start = now();
	while (done < nreq) {
		while (nfree && issued < nreq) {
			int s = free_slots[--nfree];
			struct tl_req *rq = &tl_reqs[s];
			long r;

			*rq = (struct tl_req){ s, issued++, 0 };
			r = threadlet_exec(tl_fn, rq, stacks[s], &ahu);
			if (r == 1) {
				verify(bufs[s], rq->ret, blocks[rq->idx]);
				free_slots[nfree++] = s;
				done++;
			} else if (r == 0) {
				inflight++;
			} else {
				FAIL("threadlet_exec returned %ld (%#lx)\n", r,
				     (unsigned long)r);
				goto out;
			}
		}
		if (!inflight)
			continue;
		struct tl_req *rq = pop_one();

		if (!rq)
			goto out;
		verify(bufs[rq->slot], rq->ret, blocks[rq->idx]);
		free_slots[nfree++] = rq->slot;
		inflight--;
		done++;
	}
out:
	async_head_exit(&ahu);
	return done;
}

static struct syslet_uatom atoms[MAXC];
static long long sl_ret[MAXC];
static u64 sl_fd, sl_len = BS, sl_buf[MAXC], sl_off[MAXC];

static long run_syslet(int c)
{
	int free_slots[MAXC], req_of[MAXC], nfree = c, issued = 0, inflight = 0;
	long done = 0;

	if (head_init(c))
		return 0;
	sl_fd = fd;
	for (int s = 0; s < c; s++)
		free_slots[s] = c - 1 - s;
	t_start = now();
	while (done < nreq) {
		while (nfree && issued < nreq) {
			int s = free_slots[--nfree];
			struct syslet_uatom *a;

			req_of[s] = issued;
			sl_buf[s] = (uintptr_t)bufs[s];
			sl_off[s] = blocks[issued++] * BS;
			sl_ret[s] = 0;
			syslet_atom_init(&atoms[s], SYS_pread64, 0, &sl_ret[s], NULL,
					 4, &sl_fd, &sl_buf[s], &sl_len, &sl_off[s]);
			errno = 0;
			a = async_exec(&atoms[s], &ahu);
			if (a == &atoms[s]) {
				verify(bufs[s], sl_ret[s], blocks[req_of[s]]);
				free_slots[nfree++] = s;
				done++;
			} else if (!a && !errno) {
				inflight++;
			} else {
				FAIL("async_exec: %p %m\n", (void *)a);
				goto out;
			}
		}
		if (!inflight)
			continue;
		struct syslet_uatom *a = pop_one();

		if (!a)
			goto out;
		int s = a - atoms;

		if (s < 0 || s >= c) {
			FAIL("unknown event %p\n", (void *)a);
			goto out;
		}
		verify(bufs[s], sl_ret[s], blocks[req_of[s]]);
		free_slots[nfree++] = s;
		inflight--;
		done++;
	}
out:
	async_head_exit(&ahu);
	return done;
}

static long (*const mfns[NMETHODS])(int) = {
	run_sync, run_pthread, run_posix_aio, run_kaio, run_uring,
	run_threadlet, run_threadlet, run_syslet,
};

/* ---- driver ---- */
static void drop_caches(void)
{
	int f = open("/proc/sys/vm/drop_caches", O_WRONLY);

	sync();
	if (f < 0 || write(f, "3", 1) != 1)
		FAIL("drop_caches: %m\n");
	if (f >= 0)
		close(f);
}

static void warm_cache(void)
{
	static char big[1 << 20];
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, big, sizeof(big), off)) > 0)
		off += n;
	if (off != (off_t)NBLOCKS * BS)
		FAIL("warm-up read %lld bytes\n", (long long)off);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static void run(int cached, int m, int ci)
{
	const char *cs = cached ? "cached" : "uncached";
	int c = concs[ci];
	struct threadlet_stats s0, s1;
	long long t0, t1, t[REPS];
	long done;

	nreq = cached ? R_CACHED : R_UNCACHED;
	threadlet_stats(&s0);
	/* cached: one untimed warm-up run first (r = -1) */
	for (int r = cached ? -1 : 0; r < REPS; r++) {
		if (cached) {
			rng_state = 0x9E3779B97F4A7C15ULL ^
				    (u64)((m * NCONC + ci) * REPS + r + 1);
			for (int i = 0; i < nreq; i++)
				blocks[i] = rng() % NBLOCKS;
		} else {
			/* The next slice of the permutation: no block repeats
			 * within a run, and caches are dropped before each. */
			int slot = (m * NCONC + ci) * REPS + r;

			for (int i = 0; i < nreq; i++)
				blocks[i] = perm[(slot * R_UNCACHED + i) % NBLOCKS];
			drop_caches();
		}
		memset(bufs, 0, (size_t)MAXC * BS);
		t_start = 0;
		t0 = now();
		done = mfns[m](c);
		t1 = now();
		if (t_start)
			t0 = t_start;
		if (r >= 0)
			t[r] = t1 - t0;
		if (done != nreq)
			FAIL("%s %s N=%d: %ld completions for %d requests\n",
			     cs, mnames[m], c, done, nreq);
	}
	threadlet_stats(&s1);
	qsort(t, REPS, sizeof(t[0]), cmp_ll);
	/* the median of REPS runs */
	printf("IO %s %s %d %.0f %.0f\n", cs, mnames[m], c,
	       nreq * 1e9 / t[REPS / 2], (double)t[REPS / 2] / nreq);
	printf("# %s %s %d: ns/read min %.0f median %.0f max %.0f over %d runs",
	       cs, mnames[m], c, (double)t[0] / nreq, (double)t[REPS / 2] / nreq,
	       (double)t[REPS - 1] / nreq, REPS);
	if (m >= M_TL_VDSO)
		printf("; hand-offs %llu fallbacks %llu in place %llu",
		       s1.nr_handoffs - s0.nr_handoffs,
		       s1.nr_fallbacks - s0.nr_fallbacks, s1.nr_sync - s0.nr_sync);
	printf("\n");
	fflush(stdout);
}

static int run_child(const char *self, const char *method)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		setenv("THREADLET_FORCE_SYSCALL", "1", 1);
		execl("/proc/self/exe", self, method, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		FAIL("child %s failed\n", method);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int want[NMETHODS] = { 0 }, all = argc < 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		int m;

		for (m = 0; m < NMETHODS && strcmp(argv[i], mnames[m]); m++)
			;
		if (m == NMETHODS) {
			fprintf(stderr, "io: unknown method %s\n", argv[i]);
			return 64;
		}
		want[m] = 1;
	}
	if (all)
		for (int m = 0; m < NMETHODS; m++)
			want[m] = m != M_TL_SYSCALL;	/* run in a child below */
	if ((want[M_TL_VDSO] && !threadlet_uses_vdso()) ||
	    (want[M_TL_SYSCALL] && threadlet_uses_vdso())) {
		fprintf(stderr, "io: threadlet_vdso needs THREADLET_FORCE_SYSCALL unset, "
			"threadlet_syscall needs it set to 1\n");
		return 64;
	}

	fd = open(PATH, O_RDONLY);
	dfd = open(PATH, O_RDONLY | O_DIRECT);
	bufs = aligned_alloc(BS, (size_t)MAXC * BS);
	if (fd < 0 || dfd < 0 || !bufs) {
		perror("io: setup");
		return 1;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	for (int s = 0; s < MAXC; s++)
		if (!(stacks[s] = threadlet_stack_alloc(64 << 10))) {
			perror("io: threadlet_stack_alloc");
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

	{
		/* The clock's step: jiffies (a TSC that failed to calibrate)
		 * would quantise every run's time to a tick. */
		long long a, b, step = -1;

		for (int i = 0; i < 100; i++) {
			a = now();
			while ((b = now()) == a)
				;
			if (step < 0 || b - a < step)
				step = b - a;
		}
		printf("# clock step %lld ns (smallest of 100)\n", step);
	}
	printf("# requests per run: cached %d uncached %d\n", R_CACHED, R_UNCACHED);
	printf("# runs per figure: %d (median)\n", REPS);
	for (int cached = 1; cached >= 0; cached--) {
		if (cached)
			warm_cache();
		for (int m = 0; m < NMETHODS; m++) {
			if (!want[m])
				continue;
			for (int ci = 0; ci < NCONC; ci++)
				if (m != M_SYNC || concs[ci] == 1)
					run(cached, m, ci);
		}
	}
	if (all)
		run_child(argv[0], mnames[M_TL_SYSCALL]);
	printf("io: %s\n", failed ? "FAILED" : "all reads checked");
	return failed != 0;
}
