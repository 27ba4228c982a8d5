// SPDX-License-Identifier: GPL-2.0
/*
 * Syslets: chains that run in place, chains that block and complete
 * through the ring, every stop condition and branch, a umem_add loop,
 * SYSLET_ASYNC/SYNC/NO_COMPLETE, chains sharing a queue (SYSLET_NEXT_QUEUE),
 * and bad input.
 */
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "tl_test.h"
#include "tl_util.h"

typedef unsigned long long u64;

_Static_assert(sizeof(struct syslet_queue) == 16 &&
	       offsetof(struct syslet_queue, nr) == 4 &&
	       offsetof(struct syslet_queue, entries) == 8,
	       "one syslet_queue layout for 32-bit and 64-bit programs");

static struct async_head_user ahu;
static int datafd;

/* Builds a chain of @n preads of blocks @first.. into @bufs. */
static u64 a_fd, a_len = 4096, a_buf[8], a_off[8];
static long long rets[8];
static uint64_t bufs[8][512];

static void pread_chain(struct syslet_uatom *at, int n, u64 first)
{
	a_fd = datafd;
	for (int i = 0; i < n; i++) {
		a_buf[i] = (uintptr_t)bufs[i];
		a_off[i] = (first + i) * 4096;
		rets[i] = -999;
		syslet_atom_init(&at[i], SYS_pread64, 0, &rets[i],
				 i + 1 < n ? &at[i + 1] : NULL, 4,
				 &a_fd, &a_buf[i], &a_len, &a_off[i]);
	}
}

static int pread_ok(int n, u64 first)
{
	for (int i = 0; i < n; i++)
		if (rets[i] != 4096 || bufs[i][0] != first + i ||
		    bufs[i][511] != first + i)
			return 0;
	return 1;
}

static void cached_chain(void)
{
	struct syslet_uatom at[4], *done;
	struct threadlet_stats s0, s1;

	for (int i = 0; i < 4; i++)		/* warm the page cache */
		tl_ok(pread(datafd, bufs[i], 4096, (10 + i) * 4096) == 4096,
		      "warm block %d", 10 + i);
	pread_chain(at, 4, 10);
	threadlet_stats(&s0);
	done = async_exec(at, &ahu);
	threadlet_stats(&s1);
	tl_ok(done == &at[3], "cached chain runs in place, returns its last atom");
	tl_ok(pread_ok(4, 10), "every ret_ptr holds 4096 and the bytes are right");
	tl_ok(s1.nr_handoffs == s0.nr_handoffs && s1.nr_sync == s0.nr_sync + 1,
	      "no hand-off, one run in place");
	tl_ok(async_ring_pop(&ahu) == NULL, "nothing posted");
}

static void blocking_chains(void)
{
	struct syslet_uatom at[4], *done = NULL;
	static char c;
	static long long r_read, r_getpid;
	static u64 a_pfd, a_c, a_one = 1;
	pid_t tid = gettid();
	int pfd[2];
	u64 first = 5000;	/* the data file has 16384 blocks */

	tl_ok(pipe(pfd) == 0, "pipe");
	a_pfd = pfd[0];
	a_c = (uintptr_t)&c;
	syslet_atom_init(&at[0], SYS_read, 0, &r_read, &at[1], 3, &a_pfd, &a_c, &a_one);
	syslet_atom_init(&at[1], SYS_getpid, 0, &r_getpid, NULL, 0);
	r_read = r_getpid = -999;
	done = async_exec(at, &ahu);
	tl_ok(done == NULL, "chain blocked on a pipe: NULL at once");
	tl_ok(gettid() == tid && getpid() == tid, "head keeps its TID");
	tl_ok(r_read == -999, "the read is still pending");
	tl_ok(write(pfd[1], "s", 1) == 1, "fill the pipe");
	tl_ok(tl_wait_one(&ahu) == &at[1], "final atom arrives");
	tl_ok(async_ring_pop(&ahu) == NULL, "exactly once");
	tl_ok(r_read == 1 && c == 's' && r_getpid == getpid(), "every ret_ptr right");
	tl_ok(tl_wait_parked(&ahu, 2), "cache-miss thread parked again");
	close(pfd[0]);
	close(pfd[1]);

	/* A cold read: retry if QEMU completes the I/O before it sleeps. */
	done = (void *)1;
	for (int i = 0; i < 8 && done; i++) {
		tl_drop_caches();
		first += 300;
		pread_chain(at, 4, first);
		errno = 0;
		done = async_exec(at, &ahu);
		if (done) {
			struct threadlet_stats st;

			threadlet_stats(&st);
			tl_diag("cold chain ran in place (try %d): done=at+%ld rets %lld %lld %lld %lld, fallbacks %llu reason %u",
				i + 1, (long)(done - at), rets[0], rets[1], rets[2], rets[3],
				st.nr_fallbacks, st.last_fallback);
			if (!pread_ok(4, first))
				break;
		}
	}
	tl_ok(done == NULL && errno == 0, "chain of cold ext4 reads went async, errno untouched");
	tl_ok(tl_wait_one(&ahu) == &at[3] && pread_ok(4, first),
	      "final atom arrives, all four reads right");
	tl_ok(tl_wait_parked(&ahu, 2), "cache-miss thread parked again");
}

static void conditions(void)
{
	struct syslet_uatom at[4];
	static long long r[4];
	static u64 bad_fd = (u64)-1, zero, a_zero;

	/* getppid() > 0, close(-1) < 0, umem_add(&zero, 0) == 0 */
#define GETPPID(i, fl, nx) syslet_atom_init(&at[i], SYS_getppid, fl, &r[i], nx, 0)
#define BADCLOSE(i, fl, nx) syslet_atom_init(&at[i], SYS_close, fl, &r[i], nx, 1, &bad_fd)
#define ZERO(i, fl, nx) syslet_atom_init(&at[i], __NR_umem_add, fl, &r[i], nx, 2, &a_zero, &zero)
	zero = 0;
	a_zero = (uintptr_t)&zero;

	GETPPID(0, SYSLET_STOP_ON_NONZERO, &at[1]);
	GETPPID(1, 0, NULL);
	tl_ok(async_exec(at, &ahu) == &at[0], "STOP_ON_NONZERO stops on getppid()");
	ZERO(0, SYSLET_STOP_ON_NONZERO, &at[1]);
	GETPPID(1, 0, NULL);
	tl_ok(async_exec(at, &ahu) == &at[1], "STOP_ON_NONZERO goes on after 0");
	ZERO(0, SYSLET_STOP_ON_ZERO, &at[1]);
	GETPPID(1, 0, NULL);
	tl_ok(async_exec(at, &ahu) == &at[0], "STOP_ON_ZERO stops on 0");
	BADCLOSE(0, SYSLET_STOP_ON_NEGATIVE, &at[1]);
	GETPPID(1, 0, NULL);
	tl_ok(async_exec(at, &ahu) == &at[0] && r[0] == -EBADF,
	      "STOP_ON_NEGATIVE stops on -EBADF");
	GETPPID(0, SYSLET_STOP_ON_NEGATIVE, &at[1]);
	GETPPID(1, 0, NULL);
	tl_ok(async_exec(at, &ahu) == &at[1], "STOP_ON_NEGATIVE goes on after > 0");
	ZERO(0, SYSLET_STOP_ON_NON_POSITIVE, &at[1]);
	GETPPID(1, 0, NULL);
	tl_ok(async_exec(at, &ahu) == &at[0], "STOP_ON_NON_POSITIVE stops on 0");
	GETPPID(0, SYSLET_STOP_ON_NON_POSITIVE, &at[1]);
	GETPPID(1, 0, NULL);
	tl_ok(async_exec(at, &ahu) == &at[1], "STOP_ON_NON_POSITIVE goes on after > 0");

	/* Branch: if close(-1) fails go to at[1] (the else), else at[2]. */
	BADCLOSE(0, SYSLET_STOP_ON_NEGATIVE | SYSLET_SKIP_TO_NEXT_ON_STOP, &at[2]);
	GETPPID(1, 0, NULL);
	ZERO(2, 0, NULL);
	r[1] = r[2] = -999;
	tl_ok(async_exec(at, &ahu) == &at[1] && r[1] > 0 && r[2] == -999,
	      "SKIP_TO_NEXT_ON_STOP takes the branch to atom + 1");
	GETPPID(0, SYSLET_STOP_ON_NEGATIVE | SYSLET_SKIP_TO_NEXT_ON_STOP, &at[2]);
	r[1] = r[2] = -999;
	tl_ok(async_exec(at, &ahu) == &at[2] && r[1] == -999 && r[2] == 0,
	      "and follows next when the condition does not hold");
}

static void umem_loop(void)
{
	struct syslet_uatom at[2];
	static long long r[2];
	static u64 count, minus_one = (u64)-1, minus_one_hi = 0xffffffff, a_ptr;
	int pfd[2];
	static u64 a_wfd, a_byte, a_one = 1;
	char buf[32];

	tl_ok(umem_add(&count, 5) == 1 && count == 5,
	      "umem_add adds, returns 1 for a non-zero sum");
	tl_ok(umem_add(&count, (u64)-5) == 0 && count == 0,
	      "umem_add returns 0 for a zero sum");
	count = 0;
	tl_ok(umem_add(&count, (u64)-5) == 1 && count == (u64)-5,
	      "umem_add of a sum in [-4095, -1] is not an error");
	tl_ok(umem_add(NULL, 1) == -EFAULT, "umem_add(NULL): -EFAULT");
	count = 10;
	a_ptr = (uintptr_t)&count;
	a_byte = (uintptr_t)"x";
	tl_ok(pipe(pfd) == 0, "pipe");
	a_wfd = pfd[1];
	/* do { write(1 byte) } while (--count): counts down with umem_add */
	syslet_atom_init(&at[0], SYS_write, 0, &r[0], &at[1], 3, &a_wfd, &a_byte, &a_one);
	/* A 32-bit process passes the 64-bit increment as two halves. */
	syslet_atom_init(&at[1], __NR_umem_add, SYSLET_STOP_ON_ZERO, &r[1], &at[0],
			 sizeof(long) == 4 ? 3 : 2, &a_ptr, &minus_one, &minus_one_hi);
	tl_ok(async_exec(at, &ahu) == &at[1] && count == 0 && r[1] == 0,
	      "umem_add loop ends at zero");
	tl_ok(read(pfd[0], buf, sizeof(buf)) == 10, "and ran its body 10 times");
	close(pfd[0]);
	close(pfd[1]);
}

static void flags(void)
{
	struct syslet_uatom at[2], *done;
	struct threadlet_stats s0, s1;
	static long long r[2];
	static u64 a_fd, a_buf, a_one = 1;
	static char c;
	int pfd[2];

	syslet_atom_init(&at[0], SYS_getppid, SYSLET_ASYNC, &r[0], NULL, 0);
	done = async_exec(at, &ahu);
	tl_ok(done == NULL, "SYSLET_ASYNC goes async at once");
	tl_ok(tl_wait_one(&ahu) == &at[0] && r[0] == getppid(), "and completes");
	tl_ok(tl_wait_parked(&ahu, 2), "pool parked again");

	tl_ok(pipe(pfd) == 0, "pipe");
	a_fd = pfd[0];
	a_buf = (uintptr_t)&c;
	syslet_atom_init(&at[0], SYS_read, SYSLET_SYNC, &r[0], NULL, 3, &a_fd, &a_buf, &a_one);
	if (fork() == 0) {
		usleep(100000);
		_exit(write(pfd[1], "y", 1) != 1);
	}
	threadlet_stats(&s0);
	done = async_exec(at, &ahu);
	threadlet_stats(&s1);
	wait(NULL);
	tl_ok(done == &at[0] && r[0] == 1 && s1.nr_handoffs == s0.nr_handoffs,
	      "SYSLET_SYNC blocks in place, no hand-off");

	syslet_atom_init(&at[0], SYS_read, SYSLET_NO_COMPLETE, &r[0], NULL, 3, &a_fd, &a_buf, &a_one);
	r[0] = -999;
	done = async_exec(at, &ahu);
	tl_ok(done == NULL, "NO_COMPLETE chain went async");
	tl_ok(write(pfd[1], "z", 1) == 1, "fill the pipe");
	for (int i = 0; i < 1000 && r[0] == -999; i++)
		usleep(1000);
	tl_ok(tl_wait_parked(&ahu, 2) && r[0] == 1 && async_ring_pop(&ahu) == NULL,
	      "NO_COMPLETE: chain finished, nothing posted");
	close(pfd[0]);
	close(pfd[1]);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * umem_add(*@cell, 1) as an atom (@cell holds the counter's address), followed
 * by an atom taken from @q. A 32-bit process passes the 1 as two halves.
 */
static void add_atom(struct syslet_uatom *a, long long *r,
		     struct syslet_queue *q, u64 *cell)
{
	static u64 one = 1, hi;

	syslet_atom_init(a, __NR_umem_add, 0, r, NULL,
			 sizeof(long) == 4 ? 3 : 2, cell, &one, &hi);
	syslet_link_queue(a, q);
}

#define QN 3000
static struct syslet_uatom q_atoms[QN];
static u64 q_entries[QN], q_cells[QN], q_count[QN];
static long long q_ret[QN];

/*
 * Two chains that block on a pipe, then both take from one queue of QN
 * atoms on two CPUs: each atom runs exactly once, and each chain posts
 * the last atom it ran.
 */
static void shared_queue(void)
{
	static struct syslet_queue q;
	static long long r[2];
	static u64 a_fd, a_buf[2], a_one = 1;
	struct syslet_uatom at[2], *ev[2];
	static char c[2];
	int pfd[2], once = 1, posted = 0;

	for (int i = 0; i < QN; i++) {
		q_cells[i] = (uintptr_t)&q_count[i];
		q_count[i] = 0;
		add_atom(&q_atoms[i], &q_ret[i], &q, &q_cells[i]);
		q_entries[i] = (uintptr_t)&q_atoms[i];
	}
	q = (struct syslet_queue){ .head = 0, .nr = QN,
				   .entries = (uintptr_t)q_entries };
	tl_ok(pipe(pfd) == 0, "pipe");
	a_fd = pfd[0];
	for (int k = 0; k < 2; k++) {
		a_buf[k] = (uintptr_t)&c[k];
		syslet_atom_init(&at[k], SYS_read, SYSLET_ASYNC, &r[k], NULL, 3,
				 &a_fd, &a_buf[k], &a_one);
		syslet_link_queue(&at[k], &q);
		tl_ok(async_exec(&at[k], &ahu) == NULL, "queue chain %d went async", k);
	}
	tl_ok(q.head == 0, "nothing taken while both chains wait");
	tl_ok(write(pfd[1], "ab", 2) == 2, "release both chains");
	ev[0] = tl_wait_one(&ahu);
	ev[1] = tl_wait_one(&ahu);
	for (int i = 0; i < QN; i++) {
		once &= q_count[i] == 1 && q_ret[i] == 1;
		posted += &q_atoms[i] == ev[0] || &q_atoms[i] == ev[1];
	}
	/* A chain that woke after the other had taken all ran only its read. */
	for (int k = 0; k < 2; k++)
		posted += ev[0] == &at[k] || ev[1] == &at[k];
	tl_ok(once, "every queued atom ran exactly once");
	tl_ok(q.head == QN && q.nr == QN, "head = nr = %d (%u)", QN, q.head);
	tl_ok(r[0] == 1 && r[1] == 1 && ev[0] != ev[1] && posted == 2,
	      "each chain posted the last atom it ran");
	tl_ok(async_ring_pop(&ahu) == NULL, "nothing more posted");
	tl_ok(tl_wait_parked(&ahu, 2), "cache-miss threads parked again");
	close(pfd[0]);
	close(pfd[1]);
}

/* Sets the queue's head to 1 until stop_reset: a hostile co-thread. */
static volatile int stop_reset;

static void *reset_head(void *arg)
{
	struct syslet_queue *q = arg;

	while (!stop_reset)
		__atomic_store_n(&q->head, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* Queues that are empty, grow, end early, or are bad or hostile. */
static void queue_edges(void)
{
	static struct syslet_queue q;
	static long long r[4];
	static u64 cnt, cell, entries[4], qp, minus_one = (u64)-1, minus_one_hi = 0xffffffff;
	struct syslet_uatom at[4], *done;
	long pg = sysconf(_SC_PAGESIZE);
	struct syslet_queue *ro;
	pthread_t th;

	add_atom(&at[0], &r[0], &q, &cell);
	add_atom(&at[1], &r[1], &q, &cell);
	add_atom(&at[2], &r[2], &q, &cell);
	entries[0] = (uintptr_t)&at[1];
	entries[1] = (uintptr_t)&at[2];
	q = (struct syslet_queue){ .entries = (uintptr_t)entries };
	cell = (uintptr_t)&cnt;
	tl_ok(async_exec(at, &ahu) == &at[0] && r[0] == 1 && q.head == 0 && cnt == 1,
	      "empty queue: the chain ends at the atom that found it empty");
	q.nr = 2;
	tl_ok(async_exec(at, &ahu) == &at[2] && q.head == 2 && cnt == 4,
	      "nr raised: the next chain takes the new entries");
	q.head = 5;
	tl_ok(async_exec(at, &ahu) == &at[0] && q.head == 5 && r[0] == 1,
	      "head beyond nr: empty, head left alone");
	q = (struct syslet_queue){ .nr = 2, .entries = (uintptr_t)entries };
	entries[0] = 0;
	tl_ok(async_exec(at, &ahu) == &at[0] && q.head == 1 && r[0] == 1,
	      "a zero entry ends the chain, taken");
	entries[0] = (uintptr_t)&at[1];

	at[0].next = 0x10;
	tl_ok(async_exec(at, &ahu) == &at[0] && r[0] == -EFAULT,
	      "bad queue pointer: -EFAULT replaces the result");
	at[0].next = (uintptr_t)&q;
	q = (struct syslet_queue){ .nr = 1, .entries = 0x10 };
	tl_ok(async_exec(at, &ahu) == &at[0] && r[0] == -EFAULT && q.head == 1,
	      "bad entries pointer: -EFAULT");
	q = (struct syslet_queue){ .nr = 1, .entries = (uintptr_t)entries };
	entries[0] = 0x10;
	tl_ok(async_exec(at, &ahu) == &at[0] && r[0] == -EFAULT,
	      "bad atom in an entry: -EFAULT");
	entries[0] = (uintptr_t)&at[1];

	ro = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED) {
		tl_ok(0, "mmap a read-only queue");
		return;
	}
	*ro = (struct syslet_queue){ .nr = 1, .entries = (uintptr_t)entries };
	mprotect(ro, pg, PROT_READ);
	at[0].next = (uintptr_t)ro;
	tl_ok(async_exec(at, &ahu) == &at[0] && r[0] == -EFAULT && ro->head == 0,
	      "read-only queue: -EFAULT, nothing taken");
	munmap(ro, pg);

	/*
	 * An endless queue: every entry is at[3], which gives its entry back
	 * (umem_add(&q, -1) lowers head, the low half of q's first u64),
	 * while another thread keeps setting head to 1 under it, so that
	 * takes race with its stores. head stays in 0..2 below nr: only a
	 * signal ends the chain.
	 */
	q = (struct syslet_queue){ .nr = 4, .entries = (uintptr_t)entries };
	at[0].next = (uintptr_t)&q;
	for (int i = 0; i < 4; i++)
		entries[i] = (uintptr_t)&at[3];
	qp = (uintptr_t)&q;
	syslet_atom_init(&at[3], __NR_umem_add, 0, &r[3], NULL,
			 sizeof(long) == 4 ? 3 : 2, &qp, &minus_one, &minus_one_hi);
	syslet_link_queue(&at[3], &q);
	stop_reset = 0;
	tl_ok(pthread_create(&th, NULL, reset_head, &q) == 0, "start a head resetter");
	signal(SIGALRM, on_alarm);
	ualarm(200000, 0);
	done = async_exec(at, &ahu);
	tl_ok(done == &at[3] && r[3] == -EINTR && q.head <= 2,
	      "queue reset under the chain: a signal ends it (at+%ld, %lld, head %u)",
	      (long)(done - at), r[3], q.head);
	stop_reset = 1;
	pthread_join(th, NULL);
}

/*
 * A next atom whose first 16 bytes (flags, nr, ret_ptr) are readable and
 * the rest on a PROT_NONE page: the kernel reads part of it before the
 * fault. The -EFAULT goes to the last good atom's ret_ptr, not to the one
 * the partial read found.
 */
static void straddling_next(struct syslet_uatom *at, long long *r)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct syslet_uatom *n, *done;

	if (m == MAP_FAILED) {
		tl_ok(0, "mmap for a straddling atom");
		return;
	}
	n = (struct syslet_uatom *)(m + pg - 16);
	memset(n, 0, 16);
	n->nr = SYS_getppid;
	n->ret_ptr = (uintptr_t)&r[1];
	tl_ok(mprotect(m + pg, pg, PROT_NONE) == 0, "mprotect the atom's second half");
	r[0] = r[1] = 7;
	syslet_atom_init(&at[0], SYS_getppid, 0, &r[0], n, 0);
	done = async_exec(at, &ahu);
	tl_ok(done == &at[0] && r[0] == -EFAULT && r[1] == 7,
	      "next atom half unmapped: -EFAULT in the last good atom (%lld, %lld)",
	      r[0], r[1]);
	munmap(m, 2 * pg);
}

static void bad_input(void)
{
	struct syslet_uatom at[3], *done;
	static long long r[3];
	static u64 a_bad = 0x10, a_fd;
	int status;
	pid_t pid;

	errno = 0;
	tl_ok(threadlet_ptr_err(async_exec((void *)0x10, &ahu)) == -EFAULT && errno == 0,
	      "bad atom pointer: -EFAULT, errno untouched");
	syslet_atom_init(&at[0], SYS_getppid, 0, &r[0], NULL, 0);
	struct async_head_user other = { 0 };
	tl_ok(threadlet_ptr_err(async_exec(at, &other)) == -EINVAL, "unknown head: -EINVAL");

	syslet_atom_init(&at[0], SYS_getppid, 0, &r[0], &at[1], 0);
	syslet_atom_init(&at[1], SYS_close, 0, &r[1], &at[2], 1, (u64 *)0x10);
	syslet_atom_init(&at[2], SYS_getppid, 0, &r[2], NULL, 0);
	r[2] = 77;
	tl_ok(async_exec(at, &ahu) == &at[1] && r[1] == -EFAULT && r[2] == 77,
	      "bad arg pointer mid-chain: -EFAULT in its ret_ptr, and the chain ends there");
	syslet_atom_init(&at[0], SYS_getppid, 0, &r[0], (void *)0x10, 0);
	tl_ok(async_exec(at, &ahu) == &at[0] && r[0] == -EFAULT,
	      "bad next pointer: -EFAULT in the last good atom");
	straddling_next(at, r);
	syslet_atom_init(&at[0], SYS_getppid, 0x200, &r[0], NULL, 0);
	tl_ok(async_exec(at, &ahu) == &at[0] && r[0] == -EINVAL, "unknown flag: -EINVAL");
	/* A refused atom is final: its next, or its queue, is not followed. */
	syslet_atom_init(&at[0], SYS_getppid, 0x200, &r[0], &at[1], 0);
	syslet_atom_init(&at[1], SYS_getppid, 0, &r[1], NULL, 0);
	r[1] = 77;
	tl_ok(async_exec(at, &ahu) == &at[0] && r[0] == -EINVAL && r[1] == 77,
	      "unknown flag with a next atom: -EINVAL, and the next does not run");
	syslet_atom_init(&at[0], SYS_fork, 0, &r[0], &at[1], 0);
	tl_ok(async_exec(at, &ahu) == &at[0] && r[0] == -EPERM && r[1] == 77,
	      "forbidden call with a next atom: -EPERM, and the next does not run");
	syslet_atom_init(&at[0], 4000, 0, &r[0], NULL, 0);
	done = async_exec(at, &ahu);
	tl_ok(done == &at[0] && r[0] == -EINVAL, "syscall number 4000: -EINVAL (%lld)",
	      r[0]);
	syslet_atom_init(&at[0], 1U << 31, 0, &r[0], NULL, 0);
	done = async_exec(at, &ahu);
	tl_ok(done == &at[0] && r[0] == -EINVAL, "syscall number 2^31: -EINVAL (%lld)",
	      r[0]);
	static const int forbidden[] = { SYS_fork, SYS_vfork, SYS_clone, SYS_clone3,
		SYS_execve, SYS_exit, SYS_exit_group, SYS_rt_sigreturn, __NR_async_exec,
		__NR_async_thread, __NR_threadlet_register, __NR_async_complete };
	int all = 1;

	for (unsigned int i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++) {
		syslet_atom_init(&at[0], forbidden[i], 0, &r[0], NULL, 1, &a_bad);
		all &= async_exec(at, &ahu) == &at[0] && r[0] == -EPERM;
	}
	tl_ok(all, "fork, clone, exec, exit, sigreturn, async calls: -EPERM");
#ifdef __i386__
	/*
	 * vm86 rewrites the frame, and the task's stack top, which only a
	 * return in vm86 mode puts back: after an atom's frame is restored
	 * that never comes (a native kernel with CONFIG_X86_LEGACY_VM86).
	 */
	syslet_atom_init(&at[0], SYS_vm86old, 0, &r[0], NULL, 1, &a_bad);
	all = async_exec(at, &ahu) == &at[0] && r[0] == -EPERM;
	syslet_atom_init(&at[0], SYS_vm86, 0, &r[0], NULL, 2, &a_bad, &a_bad);
	all &= async_exec(at, &ahu) == &at[0] && r[0] == -EPERM;
	tl_ok(all, "vm86old, vm86: -EPERM (%lld)", r[0]);
#endif
	syslet_atom_init(&at[0], SYS_getppid, 0, &r[0], NULL, 0);
	at[0].ret_ptr = 0x10;
	tl_ok(async_exec(at, &ahu) == &at[0], "bad ret_ptr: chain stops there");

	/* An endless chain stops at a signal... */
	syslet_atom_init(&at[0], SYS_getppid, 0, &r[0], &at[0], 0);
	signal(SIGALRM, on_alarm);
	ualarm(100000, 0);
	tl_ok(async_exec(at, &ahu) == &at[0] && r[0] == -EINTR,
	      "endless chain: a signal stops it, -EINTR in ret_ptr");
	/* ...and dies promptly with SIGKILL. */
	pid = fork();
	if (pid == 0) {
		async_head_init(&ahu, 8, 1);
		async_exec(at, &ahu);
		_exit(0);
	}
	usleep(200000);
	kill(pid, SIGKILL);
	tl_ok(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status),
	      "endless chain: SIGKILL ends the process");
	(void)a_fd;
}

int main(void)
{
	int threads0 = tl_nr_threads();

	datafd = open("/mnt/disk/data", O_RDONLY);
	tl_ok(datafd >= 0 && async_head_init(&ahu, 16, 2) == 0, "async_head_init");
	cached_chain();
	blocking_chains();
	conditions();
	umem_loop();
	flags();
	shared_queue();
	queue_edges();
	bad_input();
	async_head_exit(&ahu);
	tl_ok(tl_nr_threads_settle(threads0) == threads0, "no thread left behind");
	return tl_exit();
}
