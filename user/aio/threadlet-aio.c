// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * POSIX AIO on syslets: aio_read(), aio_write(), aio_fsync(), aio_error(),
 * aio_return(), aio_suspend(), aio_cancel() and lio_listio(), with their
 * *64 names, for programs written against glibc's <aio.h>.
 *
 * Each read or write is one system call (pread64, pwrite64, read or
 * write) run as a threadlet in the submitting thread: if the call does
 * not block, it completes before the submission returns; if it blocks,
 * the caller is handed off and goes on at once, and the cache-miss thread
 * that finishes the call records the result and sends the notification
 * itself (cm_run()). It then runs, in place, what waits for a thread: the
 * requests its one let start, and those in the loop queue. When many
 * requests are handed off (AIO_LOOP_MIN), a new read waits
 * there, a quarter of those in flight at most, for the next such thread
 * to finish: many requests in flight cost a thread pool's one sleep each,
 * not a hand-off and a park each. Its threadlet stack comes back through
 * the completion ring (posted when the thread parks, off that stack).
 * aio_fsync() and transfers of TL_AIO_ASYNC_BYTES or more, which the
 * caller wants overlapped, are syslet atoms that go async at once; so is
 * any request when no threadlet stack is to be had. Their final atoms
 * come through the same ring: a reaper thread (all signals blocked) waits
 * on it while any is in flight and ends them. A caller that is
 * itself a threadlet (threadlet_exec() and async_exec() say EBUSY) makes
 * the system call in place: if it blocks, its own threadlet is handed off.
 *
 * Ordering. Requests on a regular file or block device start at once, in
 * parallel (positioned I/O: their order does not matter); so do reads on
 * any descriptor that has positioned I/O, which is known only when the
 * pread64 does not fail with ESPIPE (no system call is spent to ask
 * first). On anything else (sockets, pipes, terminals), and for writes
 * with O_APPEND, O_SYNC or O_DSYNC, they run one at a time per
 * descriptor, in submission order, as glibc's do: a request queued
 * behind another has not started and aio_cancel() cancels it.
 * aio_fsync() waits for the requests on its descriptor that were
 * submitted before it.
 *
 * State lives in struct req, allocated per request and found from the
 * aiocb through a table keyed by the aiocb's address, and, for
 * aio_return(), through the aiocb's glibc-private __next_prio. aio_error()
 * and aio_return() of an aiocb that was never submitted, or whose status
 * was retrieved, report EINVAL.
 *
 * aio_error(), aio_return() and aio_suspend() are async-signal-safe, as
 * POSIX requires (a SIGEV_SIGNAL handler retrieves its request): they
 * take no lock. The status is in the aiocb (cb_mark()); aio_return()
 * hands its request to a lock-free list (req_retire()), which every
 * holder of aio_lock that uses the table empties first.
 *
 * Locking: one mutex (aio_lock) guards the table, the per-descriptor
 * queues and every request's state; results are published under it and
 * a sequence counter (aio_seq) is bumped, and futex-woken when a thread
 * waits in aio_suspend(). No system call that can block runs under the
 * lock.
 */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <threadlet.h>
#include <time.h>
#include <unistd.h>

#define AIO_RING	1024		/* completions in flight at most */
#define AIO_THREADS	64		/* cache-miss threads, at most */
#define AIO_THREADS_MIN 16		/* made at the first request */
#define AIO_STREAM_THREADS 64		/* stream helpers, at most */
#define AIO_STREAM_IDLE_S 10		/* a helper idle this long ends */
#define AIO_MAXREQ	65536		/* requests not yet retrieved */
#define HASH_BITS	12
#define TL_AIO_ASYNC_BYTES (256 << 10)	/* and larger: async at once */
#define TL_AIO_LISTIO_MAX 65536	/* sysconf(_SC_AIO_LISTIO_MAX) is glibc's */
/*
 * Threadlet stacks: at most AIO_STACKS exist (twice the cache-miss threads
 * that can hold one blocked), kept for reuse once made. An application's
 * signal handler may run on one, so they are as large as a small thread's.
 */
#define AIO_STACKS	(2 * AIO_THREADS)
#define AIO_STACK_SIZE	(256 << 10)
#define STACK_TO_MAKE	1UL		/* reserved, not yet allocated */
#define STACK_EVENT	1UL		/* a stack top in the ring: tagged */
/*
 * The loop queue: a read waits there, instead of starting
 * with a hand-off of its own, while AIO_LOOP_MIN or more cache-miss
 * threads run parallel requests and the queue holds fewer than a third
 * of their number (so at most a quarter of the requests in flight wait,
 * and each that waits has a thread to come), and fewer than
 * AIO_LOOP_MAX. Waiting trades a request's start for a hand-off's CPU:
 * worth it only with many in flight (at 8 on a 200 us device, starting
 * at 4 made each read 14% slower, at 32 starting at 4 or 16 was alike).
 */
#define AIO_LOOP_MIN	16		/* TL_AIO_LOOP_MIN sets another */
#define AIO_LOOP_MAX	16

enum req_state { RQ_QUEUED, RQ_RUNNING, RQ_DONE };

struct fdq;

struct req {
	struct syslet_uatom atom;	/* made only to run as one */
	unsigned long long args[5];
	unsigned int nr, nargs;		/* the system call */
	unsigned int aflags;		/* SYSLET_ASYNC: go async at once */
	long long ret;
	struct aiocb *cb;		/* or an aiocb64: see aiocb_offset() */
	int exclusive;			/* runs alone on its descriptor */
	enum req_state state;
	int error;			/* EINPROGRESS until done */
	ssize_t result;
	struct sigevent sev;		/* copied at submission */
	struct lio_group *group;	/* lio_listio() with a notification */
	struct fdq *q;			/* serialized descriptors, fsync */
	struct req *qnext;		/* in q's pending list */
	struct req *hnext;		/* in the table */
	unsigned long long seq;		/* submission order */
	unsigned long stack;		/* threadlet stack top, or 0 */
	int inloop;			/* RQ_QUEUED in the loop queue */
	struct req *rnext;		/* in aio_retired */
};

/*
 * One per descriptor that had requests. An exclusive request (on a
 * descriptor that is not a regular file or block device, an O_APPEND
 * write, an fsync) starts only when nothing else on the descriptor runs
 * and nothing is queued before it; the others start at once unless
 * something is queued (behind an exclusive one, in order).
 */
struct fdq {
	int fd;
	unsigned int running;		/* started, not done */
	struct req *pending, **tail;	/* not started, in order */
	struct fdq *next;
};

struct lio_group {
	unsigned int left;
	struct sigevent sev;
};

static pthread_mutex_t aio_lock = PTHREAD_MUTEX_INITIALIZER;
static struct req *aio_table[1 << HASH_BITS];
static struct fdq *aio_fdqs;
static unsigned int aio_nreq;
static uint32_t aio_seq;		/* bumped at every completion */
static uint32_t aio_waiters;		/* threads in aio_suspend() */
static unsigned long long aio_nsubmit;	/* the next request's seq */
static unsigned long aio_stk[AIO_STACKS];	/* stacks free for reuse */
static unsigned int aio_nstk;		/* in aio_stk[] */
static unsigned int aio_stk_total;	/* made or reserved */
static struct req *aio_retired;		/* retrieved by aio_return() */

/*
 * The loop queue (under aio_lock), and the cache-miss threads that will
 * look at it again: each runs a parallel request (atomic: a submitter
 * adds itself after a hand-off, without the lock; a thread leaves under
 * the lock, when it finds the queue empty). A request joins the queue
 * only while it holds fewer than aio_cm_busy, so each has a thread that
 * has not yet looked for the last time.
 */
static struct req *aio_loopq, **aio_loopq_tail = &aio_loopq;
static unsigned int aio_loopq_len;
static int aio_loop_min = AIO_LOOP_MIN;
static int aio_cm_busy;
/* Atoms gone async and not yet ended: the reaper waits on the ring while
 * any is. It may dip below 0 for a moment (reaped before counted). */
static int aio_atoms;

/*
 * Stream requests that would have slept in their submitter (see
 * stream_would_wait()), for the stream helper threads, all under
 * aio_lock: the queue, the helpers, those waiting for work.
 */
static struct req *aio_sq, **aio_sq_tail = &aio_sq;
static unsigned int aio_sq_threads, aio_sq_idle;
static pthread_cond_t aio_sq_cond = PTHREAD_COND_INITIALIZER;

static struct async_head_user aio_ahu;
static pthread_once_t aio_once = PTHREAD_ONCE_INIT;
static int aio_atfork_set;	/* under aio_once; never reset */
static int aio_init_error;
static int aio_ready;			/* tl_aio_init() succeeded */
static pid_t aio_pid;

/* ---- the table ------------------------------------------------------------ */

static unsigned int hash_cb(const struct aiocb *cb)
{
	uintptr_t x = (uintptr_t)cb;

	x ^= x >> 17;
	x *= 0x9e3779b1u;
	return (unsigned int)(x >> 7) & ((1u << HASH_BITS) - 1);
}

static struct req **table_slot(const struct aiocb *cb)
{
	struct req **pp = &aio_table[hash_cb(cb)];

	while (*pp && (*pp)->cb != cb)
		pp = &(*pp)->hnext;
	return pp;
}

static void table_del(struct req *r)
{
	struct req **pp = table_slot(r->cb);

	if (*pp == r) {
		*pp = r->hnext;
		aio_nreq--;
	}
}

static void req_free(struct req *r);

/*
 * aio_return() gives its request back here, without aio_lock: a push onto
 * a list that only aio_drain_retired() empties, whole, so no request is
 * popped while another thread or a signal handler pushes. Lock-free.
 */
static void req_retire(struct req *r)
{
	struct req *old = __atomic_load_n(&aio_retired, __ATOMIC_RELAXED);

	do
		r->rnext = old;
	while (!__atomic_compare_exchange_n(&aio_retired, &old, r, 1,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/*
 * Takes the retrieved requests out of the table and frees them. Caller
 * holds aio_lock, before it looks anything up in the table: the aiocb of
 * a retrieved request may be reused at once, or freed (the table only
 * compares its address).
 */
static void aio_drain_retired(void)
{
	struct req *r = __atomic_exchange_n(&aio_retired, NULL, __ATOMIC_ACQUIRE);

	while (r) {
		struct req *next = r->rnext;

		table_del(r);
		req_free(r);
		r = next;
	}
}

/*
 * The mark of an aiocb with a request whose status is unretrieved:
 * aio_magic in glibc's private __abs_prio and __policy (which this library,
 * replacing glibc's AIO, owns), set with the request under aio_lock and
 * cleared by aio_return(). With it, aio_error(), aio_return() and
 * aio_suspend() read __error_code, written last with release, without the
 * lock or the table; an aiocb without it (never submitted, retrieved, a
 * fork child's copy of the parent's: the child gets a new aio_magic) has
 * no request here.
 * aio_magic is random (AT_RANDOM), never 0, so another aiocb, zeroed or
 * not, bears it by chance with a probability of 2^-64.
 */
static uint64_t aio_magic;

static uint64_t cb_mark(const struct aiocb *cb)
{
	uint64_t m;

	memcpy(&m, &cb->__abs_prio, sizeof(m));
	return m;
}

static void cb_set_mark(struct aiocb *cb, uint64_t m)
{
	memcpy(&cb->__abs_prio, &m, sizeof(m));
}

_Static_assert(offsetof(struct aiocb, __policy) ==
	       offsetof(struct aiocb, __abs_prio) + sizeof(int), "aiocb mark");

/*
 * Requests are kept for reuse: a burst of them would otherwise overflow
 * malloc's per-thread cache and cost a trip through its bins each. At
 * most AIO_REQ_CACHE are kept. Caller holds aio_lock.
 */
#define AIO_REQ_CACHE	1024
static struct req *aio_free_reqs;	/* linked by hnext */
static unsigned int aio_nfree;

static struct req *req_alloc(void)
{
	struct req *r = aio_free_reqs;

	if (!r)
		return malloc(sizeof(*r));
	aio_free_reqs = r->hnext;
	aio_nfree--;
	return r;
}

static void req_free(struct req *r)
{
	if (aio_nfree >= AIO_REQ_CACHE) {
		free(r);
		return;
	}
	r->hnext = aio_free_reqs;
	aio_free_reqs = r;
	aio_nfree++;
}

/* ---- notification ------------------------------------------------------- */

struct thread_note {
	void (*fn)(union sigval);
	union sigval val;
	int detach;			/* made joinable by the caller's attributes */
};

/*
 * The thread of a SIGEV_THREAD notification. Nobody joins it: made with
 * the caller's attributes, which this library must not change (another
 * thread may use them at the same time), it detaches itself.
 */
static void *note_thread(void *arg)
{
	struct thread_note n = *(struct thread_note *)arg;

	free(arg);
	if (n.detach)
		pthread_detach(pthread_self());
	n.fn(n.val);
	return NULL;
}

/* Sends @sev's notification; called without aio_lock, never in a syslet. */
static void notify(const struct sigevent *sev)
{
	siginfo_t si;

	switch (sev->sigev_notify) {
	case SIGEV_SIGNAL:
	case SIGEV_THREAD_ID:
		if (!sev->sigev_signo)
			break;
		memset(&si, 0, sizeof(si));
		si.si_signo = sev->sigev_signo;
		si.si_code = SI_ASYNCIO;
		si.si_pid = aio_pid;
		si.si_uid = getuid();
		si.si_value = sev->sigev_value;
		if (sev->sigev_notify == SIGEV_SIGNAL)
			syscall(SYS_rt_sigqueueinfo, aio_pid, si.si_signo, &si);
		else
			syscall(SYS_rt_tgsigqueueinfo, aio_pid, sev->_sigev_un._tid,
				si.si_signo, &si);
		break;
	case SIGEV_THREAD: {
		struct thread_note *n = malloc(sizeof(*n));
		pthread_attr_t attr, *ap = sev->sigev_notify_attributes;
		int state = PTHREAD_CREATE_DETACHED;
		pthread_t t;

		if (!n)
			break;
		n->fn = sev->sigev_notify_function;
		n->val = sev->sigev_value;
		if (!ap) {
			pthread_attr_init(&attr);
			pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
			ap = &attr;
		}
		pthread_attr_getdetachstate(ap, &state);
		n->detach = state != PTHREAD_CREATE_DETACHED;
		if (pthread_create(&t, ap, note_thread, n))
			free(n);
		if (ap == &attr)
			pthread_attr_destroy(&attr);
		break;
	}
	default:
		break;
	}
}

static int sigevent_ok(const struct sigevent *sev)
{
	switch (sev->sigev_notify) {
	case SIGEV_NONE:
		return 1;
	case SIGEV_SIGNAL:
	case SIGEV_THREAD_ID:
		/* 0 is the null signal: a zeroed aiocb asks for nothing. */
		return sev->sigev_signo >= 0 && sev->sigev_signo < NSIG;
	case SIGEV_THREAD:
		return sev->sigev_notify_function != NULL;
	default:
		return 0;
	}
}

/* ---- running requests ----------------------------------------------------- */

/*
 * Requests to start, in order, by the loop that owns the list: the
 * outermost req_start_list() of a call, or a cache-miss thread's cm_run().
 * It lives on that loop's stack and is passed down, never kept per thread:
 * a caller that is itself a threadlet may be handed off inside the loop,
 * and its rest, with the list, goes on in another thread.
 */
struct startq {
	struct req *head, **tail;
};

static void req_start(struct req *r, struct startq *sq);

/*
 * Takes off @q's pending list what can start now, in order (see struct
 * fdq), and counts it running: returned as a list linked by qnext for
 * req_start_list() to start once aio_lock is dropped. Caller holds it.
 */
static struct req *fdq_take(struct fdq *q)
{
	struct req *start = NULL, **stail = &start;

	while (q->pending) {
		struct req *n = q->pending;

		if (n->exclusive && q->running)
			break;
		q->pending = n->qnext;
		if (!q->pending)
			q->tail = &q->pending;
		n->qnext = NULL;
		n->state = RQ_RUNNING;
		q->running++;
		*stail = n;
		stail = &n->qnext;
		if (n->exclusive)
			break;
	}
	return start;
}

static void startq_add(struct startq *sq, struct req *start)
{
	*sq->tail = start;
	while (start->qnext)
		start = start->qnext;
	sq->tail = &start->qnext;
}

static struct req *startq_take(struct startq *sq)
{
	struct req *n = sq->head;

	if (n) {
		sq->head = n->qnext;
		if (!sq->head)
			sq->tail = &sq->head;
		n->qnext = NULL;
	}
	return n;
}

/*
 * Starts the requests of @start in order. One that completes in place may
 * start the next one on its descriptor from inside req_start(): those go
 * to @sq, the list of the loop this runs under, which starts them in turn,
 * so that a long queue does not recurse once per request. Without @sq
 * this is the outermost call, and its loop.
 */
static void req_start_list(struct req *start, struct startq *sq)
{
	struct startq own = { NULL, &own.head };
	struct req *n;

	if (!start)
		return;
	if (sq) {
		startq_add(sq, start);
		return;
	}
	startq_add(&own, start);
	while ((n = startq_take(&own)) != NULL)
		req_start(n, &own);
}

/*
 * Gives back the threadlet stack reserved for @r, if any: among the free
 * ones, or uncounted if it was not made yet. Caller holds aio_lock and
 * knows that nothing runs on it.
 */
static void req_put_stack(struct req *r)
{
	if (!r->stack)
		return;
	if (r->stack == STACK_TO_MAKE)
		aio_stk_total--;
	else
		aio_stk[aio_nstk++] = r->stack;
	r->stack = 0;
}

/*
 * @r is done (or cancelled): publish its result, wake aio_suspend(),
 * start what waited for it (see req_start_list() for @sq). Caller holds
 * aio_lock; returns with it dropped, after the notifications.
 */
static void req_finish_unlock(struct req *r, int error, ssize_t result,
			      struct startq *sq)
{
	struct sigevent note, gnote;
	int has_note = r->sev.sigev_notify != SIGEV_NONE, has_gnote = 0;
	struct fdq *q = r->q;
	struct req *start;

	if (q && r->state == RQ_RUNNING)
		q->running--;
	/* Its threadlet ran in place or was popped: the stack is free. */
	req_put_stack(r);
	r->error = error;
	r->result = result;
	r->state = RQ_DONE;
	r->cb->__return_value = result;
	__atomic_store_n(&r->cb->__error_code, error, __ATOMIC_RELEASE);
	if (has_note)
		note = r->sev;
	if (r->group && --r->group->left == 0) {
		gnote = r->group->sev;
		has_gnote = 1;
		free(r->group);
	}
	r->group = NULL;
	start = q ? fdq_take(q) : NULL;
	/*
	 * Sequentially consistent, as aio_suspend()'s count and read of
	 * aio_seq are: either it counted itself before this load, and is
	 * woken, or its read of aio_seq comes after this bump, and it does
	 * not sleep on the old value. Nobody waiting: no system call.
	 */
	__atomic_add_fetch(&aio_seq, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&aio_lock);
	if (__atomic_load_n(&aio_waiters, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &aio_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	if (has_note)
		notify(&note);
	if (has_gnote)
		notify(&gnote);
	req_start_list(start, sq);
}

static void req_done(struct req *r, long long ret, struct startq *sq)
{
	pthread_mutex_lock(&aio_lock);
	if (ret < 0)
		req_finish_unlock(r, (int)-ret, -1, sq);
	else
		req_finish_unlock(r, 0, (ssize_t)ret, sq);
}

/*
 * A read that submit() started as a pread64 on a descriptor without
 * positioned I/O (a pipe, a socket, a terminal: ESPIPE, nothing read):
 * from now on it is a read() that runs alone on its descriptor, in
 * submission order, as fd_kind()'s FD_STREAM requests do. Every read
 * started with it failed the same way and comes here too, each going back
 * among the pending requests by its seq: each was submitted after those
 * that ran with it and before any still pending. Then what can start
 * does, this one or an earlier one; the last to stop running starts the
 * first.
 */
static void req_make_stream(struct req *r, struct startq *sq)
{
	struct fdq *q = r->q;
	struct req **pp, *start;

	r->nr = SYS_read;
	r->nargs = 3;
	pthread_mutex_lock(&aio_lock);
	r->exclusive = 1;
	r->state = RQ_QUEUED;
	q->running--;
	for (pp = &q->pending; *pp && (*pp)->seq < r->seq; pp = &(*pp)->qnext)
		;
	r->qnext = *pp;
	*pp = r;
	if (!r->qnext)
		q->tail = &r->qnext;
	start = fdq_take(q);
	pthread_mutex_unlock(&aio_lock);
	req_start_list(start, sq);
}

/*
 * The system call of @r's atom, without errno: after a hand-off this runs
 * in a cache-miss thread, and glibc's syscall() would write the errno of
 * whichever thread the compiler computed its address in.
 */
static long req_syscall(const struct req *r)
{
	long ret;
#ifdef __x86_64__
	register long r10 __asm__("r10") = (long)r->args[3];
	register long r8 __asm__("r8") = (long)r->args[4];

	__asm__ __volatile__("syscall"
			     : "=a" (ret)
			     : "0" ((long)r->nr), "D" ((long)r->args[0]),
			       "S" ((long)r->args[1]), "d" ((long)r->args[2]),
			       "r" (r10), "r" (r8)
			     : "rcx", "r11", "memory");
#else
	__asm__ __volatile__("int $0x80"
			     : "=a" (ret)
			     : "0" ((long)r->nr), "b" ((long)r->args[0]),
			       "c" ((long)r->args[1]), "d" ((long)r->args[2]),
			       "S" ((long)r->args[3]), "D" ((long)r->args[4])
			     : "memory");
#endif
	return ret;
}

/*
 * @r's system call returned r->ret, in place, in a cache-miss thread or
 * as an atom popped from the ring. A pread64 on a descriptor without positioned
 * I/O read nothing and becomes an ordered read().
 */
static void req_ended(struct req *r, struct startq *sq)
{
	if (r->ret == -ESPIPE && r->nr == SYS_pread64) {
		req_make_stream(r, sq);
		return;
	}
	req_done(r, r->ret, sq);
}

/*
 * Takes a request for a cache-miss thread to run in place: the next that
 * its own ones let start (queued to its @sq by req_start_list()), else the
 * head of the loop queue. @counted: the thread is in aio_cm_busy; it
 * leaves when it finds nothing, or before it runs an exclusive request,
 * which may block for good (a pipe). A request run in place needs no
 * threadlet stack: one reserved for it goes back.
 */
static struct req *cm_take(struct startq *sq, int *counted)
{
	struct req *n = startq_take(sq);

	pthread_mutex_lock(&aio_lock);
	if (!n && aio_loopq) {
		n = aio_loopq;
		aio_loopq = n->qnext;
		if (!aio_loopq)
			aio_loopq_tail = &aio_loopq;
		aio_loopq_len--;
		n->qnext = NULL;
		n->inloop = 0;
		n->state = RQ_RUNNING;
	}
	if (*counted && (!n || n->exclusive)) {
		__atomic_sub_fetch(&aio_cm_busy, 1, __ATOMIC_RELAXED);
		*counted = 0;
	}
	if (n)
		req_put_stack(n);
	pthread_mutex_unlock(&aio_lock);
	return n;
}

/*
 * A cache-miss thread, on @r's threadlet stack: @r's system call returned
 * after its submitter was handed off. It ends @r (result, aio_suspend()'s
 * wake-up, notification), then runs in place, one after the other, what
 * cm_take() gives it, and parks when nothing is left. r->stack is this
 * thread's until it parks: it is taken off @r first (a running request is
 * no one else's to touch), so that ending @r does not free it, and posted
 * as the event of the park, which the kernel writes once this thread is
 * off it. Not inlined: TLS addresses computed before the hand-off would be
 * the head's.
 */
static long __attribute__((noinline)) cm_run(struct req *r)
{
	struct startq sq = { NULL, &sq.head };
	unsigned long stack = r->stack;
	int counted = !r->exclusive;

	r->stack = 0;
	do {
		req_ended(r, &sq);
		r = cm_take(&sq, &counted);
		if (r)
			r->ret = req_syscall(r);
	} while (r);
	return complete_threadlet_fn((void *)(stack | STACK_EVENT), &aio_ahu);
}

/*
 * A request as a threadlet. Where its end runs is decided by the one
 * instruction that clears the threadlet flag (complete_threadlet_fn()'s
 * test, inline): set, this is still the head, which ends @r on return
 * (req_start()); clear, a hand-off made this a cache-miss thread, which
 * ends it in cm_run(). The head may be handed off up to that instruction
 * (a page fault after the call may sleep), so no earlier test would do:
 * a hand-off after it posted @r itself, as an atom's event, and left the
 * count of busy cache-miss threads one too high for good.
 */
static long req_fn(void *data)
{
	struct req *r = data;
	long ret;

	r->ret = req_syscall(r);
	ret = __threadlet_off_here();
	if (__builtin_expect(ret > 0, 1))
		return ret;
	return cm_run(r);
}

/*
 * A stream helper: runs the requests of aio_sq one after the other, each
 * a blocking call in this thread, and ends after AIO_STREAM_IDLE_S
 * without work. All signals blocked, as in the reaper.
 */
static void *stream_helper(void *arg)
{
	struct timespec ts;
	struct req *r;

	(void)arg;
	pthread_mutex_lock(&aio_lock);
	for (;;) {
		r = aio_sq;
		if (!r) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += AIO_STREAM_IDLE_S;
			aio_sq_idle++;
			if (pthread_cond_timedwait(&aio_sq_cond, &aio_lock, &ts) == ETIMEDOUT &&
			    !aio_sq) {
				aio_sq_idle--;
				break;
			}
			aio_sq_idle--;
			continue;
		}
		aio_sq = r->qnext;
		if (!aio_sq)
			aio_sq_tail = &aio_sq;
		r->qnext = NULL;
		req_put_stack(r);
		pthread_mutex_unlock(&aio_lock);
		r->ret = req_syscall(r);
		req_ended(r, NULL);
		pthread_mutex_lock(&aio_lock);
	}
	aio_sq_threads--;
	pthread_mutex_unlock(&aio_lock);
	return NULL;
}

/*
 * A read or write of a stream (a pipe, a socket, a terminal) that cannot
 * go on at once. As a threadlet it is handed off only if a cache-miss
 * thread is parked, the kernel's checks accept it (the caller's nice,
 * affinity, ptrace, PI futexes... may refuse it) and no other submitter
 * took that thread meanwhile; otherwise it sleeps in its submitter for as
 * long as the stream stays empty or full, and aio_read() must return once
 * the request is queued. So such a request always goes to the stream
 * helpers. Only the caller's own threadlet may sleep where it is (it is
 * handed off itself).
 */
static int stream_would_wait(const struct req *r)
{
	struct pollfd p = {
		.fd = (int)r->args[0], .events = r->nr == SYS_read ? POLLIN : POLLOUT,
	};

	if (!r->exclusive || (r->nr != SYS_read && r->nr != SYS_write) ||
	    (__threadlet_area.flags & THREADLET_ON))
		return 0;
	return poll(&p, 1, 0) == 0;
}

/*
 * Gives @r to the stream helpers, starting one if none is idle (up to
 * AIO_STREAM_THREADS; past that @r waits for one). 0, or -1 if no helper
 * exists and none could be started: @r is not queued then.
 */
static int stream_queue(struct req *r)
{
	sigset_t all, old;
	pthread_attr_t attr;
	int start = 0, err;
	pthread_t t;

	pthread_mutex_lock(&aio_lock);
	if (!aio_sq_idle && aio_sq_threads < AIO_STREAM_THREADS) {
		aio_sq_threads++;
		start = 1;
	}
	*aio_sq_tail = r;
	aio_sq_tail = &r->qnext;
	pthread_cond_signal(&aio_sq_cond);
	pthread_mutex_unlock(&aio_lock);
	if (!start)
		return 0;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t, &attr, stream_helper, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (!err)
		return 0;
	pthread_mutex_lock(&aio_lock);
	aio_sq_threads--;
	if (!aio_sq_threads) {
		/* Nobody to take it: take it back, unless a helper did. */
		struct req **pp;

		for (pp = &aio_sq; *pp && *pp != r; pp = &(*pp)->qnext)
			;
		if (*pp) {
			*pp = r->qnext;
			if (aio_sq_tail == &r->qnext)
				aio_sq_tail = pp;
			r->qnext = NULL;
			pthread_mutex_unlock(&aio_lock);
			return -1;
		}
	}
	pthread_mutex_unlock(&aio_lock);
	return 0;
}

/*
 * Runs @r: as a threadlet if it has a stack (one reserved at submission
 * is made here, without aio_lock), otherwise as its syslet atom; in place
 * (ended here) or handed off (the cache-miss thread, or for an atom the
 * reaper, ends it); or by a stream helper (stream_would_wait()).
 */
static void req_run(struct req *r, struct startq *sq)
{
	struct syslet_uatom *done;
	long ret;

	if (stream_would_wait(r) && !stream_queue(r))
		return;

	if (r->stack == STACK_TO_MAKE) {
		unsigned long top = threadlet_stack_alloc(AIO_STACK_SIZE);

		if (!threadlet_err(top)) {
			r->stack = top;
		} else {
			pthread_mutex_lock(&aio_lock);
			req_put_stack(r);
			pthread_mutex_unlock(&aio_lock);
		}
	}
	if (r->stack) {
		/* Read first: once handed off, @r is the cache-miss thread's. */
		int parallel = !r->exclusive;

		ret = threadlet_exec(req_fn, r, r->stack, &aio_ahu);
		if (ret == 1)
			req_ended(r, sq);
		else if (ret == 0 && parallel)
			__atomic_add_fetch(&aio_cm_busy, 1, __ATOMIC_RELAXED);
		if (ret >= 0)
			return;
		/* Refused (-EBUSY: the caller is a threadlet): see below. */
	}
	ret = syslet_atom_init(&r->atom, r->nr, r->aflags, &r->ret, NULL,
			       r->nargs, &r->args[0], &r->args[1], &r->args[2],
			       &r->args[3], &r->args[4]);
	if (ret) {
		req_done(r, ret, sq);
		return;
	}
	done = async_exec(&r->atom, &aio_ahu);
	if (done == &r->atom) {
		req_ended(r, sq);
	} else if (!done) {
		/* Gone async: the reaper waits on the ring from the first. */
		if (__atomic_fetch_add(&aio_atoms, 1, __ATOMIC_SEQ_CST) == 0)
			syscall(SYS_futex, &aio_atoms, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	} else if (threadlet_ptr_err(done) == -EBUSY) {
		/*
		 * The caller is itself a threadlet: the call runs in it, and
		 * if it blocks, the caller's threadlet is what is handed off.
		 */
		r->ret = req_syscall(r);
		req_ended(r, sq);
	} else if (threadlet_ptr_err(done)) {	/* could not run at all */
		req_done(r, threadlet_ptr_err(done), sq);
	}
}

/*
 * A write raises SIGPIPE at the thread that makes it on a pipe or socket
 * nobody reads, and SIGXFSZ past RLIMIT_FSIZE. glibc makes every request
 * in a thread with all signals blocked, where the signal stays pending,
 * and the request just ends with EPIPE or EFBIG; so do the cache-miss
 * threads and stream helpers here. A write that runs in the caller's
 * thread (in place, or until its hand-off) blocks both meanwhile and
 * takes back one it raised: one pending now and not before. The caller's
 * own threadlet is left alone, as it runs the write itself.
 */
static void req_start(struct req *r, struct startq *sq)
{
	sigset_t mask, old, before, after;
	struct timespec zero = { 0, 0 };

	if ((r->nr != SYS_write && r->nr != SYS_pwrite64) ||
	    (__threadlet_area.flags & THREADLET_ON)) {
		req_run(r, sq);
		return;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGPIPE);
	sigaddset(&mask, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &mask, &old);
	sigpending(&before);
	req_run(r, sq);		/* @r may be gone from here on */
	sigpending(&after);
	if (sigismember(&after, SIGPIPE) && !sigismember(&before, SIGPIPE))
		sigaddset(&mask, SIGPIPE);
	else
		sigdelset(&mask, SIGPIPE);
	if (sigismember(&after, SIGXFSZ) && !sigismember(&before, SIGXFSZ))
		sigaddset(&mask, SIGXFSZ);
	else
		sigdelset(&mask, SIGXFSZ);
	while (!sigisemptyset(&mask)) {
		int sig = sigtimedwait(&mask, NULL, &zero);

		if (sig <= 0)
			break;
		sigdelset(&mask, sig);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * Pops all the ring holds. Caller holds aio_lock. A stack goes back among
 * the free ones; the atoms are returned, linked by qnext in the order
 * they completed, for the caller to end without the lock.
 */
static struct req *ring_pop_locked(void)
{
	struct req *atoms = NULL, **tail = &atoms;
	void *ev;

	while ((ev = async_ring_pop(&aio_ahu)) != NULL) {
		uintptr_t v = (uintptr_t)ev;

		if (v & STACK_EVENT) {
			aio_stk[aio_nstk++] = v & ~STACK_EVENT;
			continue;
		}
		/* An atom's event is its request (the first member). */
		*tail = (struct req *)ev;
		tail = &(*tail)->qnext;
	}
	*tail = NULL;
	return atoms;
}

/* Ends the atoms ring_pop_locked() returned. */
static void end_atoms(struct req *a)
{
	while (a) {
		struct req *n = a->qnext;

		a->qnext = NULL;
		__atomic_sub_fetch(&aio_atoms, 1, __ATOMIC_SEQ_CST);
		req_ended(a, NULL);
		a = n;
	}
}

/*
 * The reaper: ends every request whose atom went async. While none is in
 * flight it sleeps on aio_atoms, not on the ring, so that the stacks that
 * cache-miss threads post do not wake it: a submitter that needs a stack
 * pops them. All signals are blocked here, so that notifications reach
 * the application's threads and async_wait() is not interrupted.
 *
 * Nothing here unregisters the head while the process runs, so the
 * reaper never ends: without it every async request would hang. An
 * unexpected error is retried after a pause. (Kernels before the fix of
 * async_post()'s order could fail async_wait() with EINVAL for the index
 * of an event just popped; the reaper ended then, under fio at iodepth
 * 32, and every later request stayed EINPROGRESS.)
 */
static void *reaper(void *arg)
{
	(void)arg;
	for (;;) {
		unsigned long idx;
		struct req *a;
		long ret;

		pthread_mutex_lock(&aio_lock);
		a = ring_pop_locked();
		idx = aio_ahu.user_ring_idx;
		pthread_mutex_unlock(&aio_lock);
		if (a) {
			end_atoms(a);
			continue;
		}
		if (__atomic_load_n(&aio_atoms, __ATOMIC_SEQ_CST) == 0) {
			syscall(SYS_futex, &aio_atoms, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
			continue;
		}
		ret = async_wait(1, idx, &aio_ahu);
		if (ret < 0 && ret != -EINTR) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static void aio_atfork_child(void)
{
	uint64_t *ring = (uint64_t *)(uintptr_t)aio_ahu.completion_ring;
	uint64_t mask = aio_ahu.ring_size_bytes / sizeof(uint64_t) - 1;

	/*
	 * Stacks the parent's threads gave back and no one popped are free;
	 * taken once, so that a later fork does not count them again.
	 */
	for (uint64_t i = aio_ahu.user_ring_idx;
	     ring && i != aio_ahu.kernel_ring_idx && aio_nstk < AIO_STACKS; i++)
		if (ring[i & mask] & STACK_EVENT)
			aio_stk[aio_nstk++] = ring[i & mask] & ~STACK_EVENT;
	aio_ahu.user_ring_idx = aio_ahu.kernel_ring_idx;
	/* The parent's requests, head and reaper are not the child's. */
	memset(aio_table, 0, sizeof(aio_table));
	aio_retired = NULL;
	aio_fdqs = NULL;
	aio_nreq = 0;
	aio_waiters = 0;
	aio_loopq = NULL;
	aio_loopq_tail = &aio_loopq;
	aio_loopq_len = 0;
	aio_cm_busy = 0;
	aio_atoms = 0;
	aio_sq = NULL;
	aio_sq_tail = &aio_sq;
	aio_sq_threads = 0;
	aio_sq_idle = 0;
	pthread_cond_init(&aio_sq_cond, NULL);
	/* The free stacks are mapped here too; those in use are lost. */
	aio_stk_total = aio_nstk;
	aio_once = (pthread_once_t)PTHREAD_ONCE_INIT;
	aio_ready = 0;
	aio_magic = 0;		/* the parent's aiocbs are not marked here */
	pthread_mutex_init(&aio_lock, NULL);
}

static void tl_aio_init(void)
{
	const char *env = secure_getenv("TL_AIO_LOOP_MIN");
	const void *rnd;
	sigset_t all, old;
	pthread_t t;
	int err;

	/* 1 to AIO_THREADS; above, the loop queue is never used. */
	if (env && *env) {
		char *end;
		unsigned long v = strtoul(env, &end, 10);

		if (!*end && v >= 1)
			aio_loop_min = v > AIO_THREADS ? AIO_THREADS + 1 : (int)v;
	}
	aio_pid = getpid();
	/* In a fork child, another one: AT_RANDOM's bytes plus the PID. */
	rnd = (const void *)getauxval(AT_RANDOM);
	if (rnd)
		memcpy(&aio_magic, rnd, sizeof(aio_magic));
	aio_magic += (uint64_t)aio_pid;
	if (!aio_magic)
		aio_magic = 1;
	err = async_head_init_pool(&aio_ahu, AIO_RING, AIO_THREADS_MIN, AIO_THREADS);
	if (err) {
		aio_init_error = err < 0 ? -err : EAGAIN;
		return;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t, NULL, reaper, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		async_head_exit(&aio_ahu);
		aio_init_error = EAGAIN;
		return;
	}
	pthread_detach(t);
	aio_init_error = 0;
	__atomic_store_n(&aio_ready, 1, __ATOMIC_RELEASE);
	/*
	 * Once per process image: a child that initializes again inherits
	 * the registration, and a second one would run the handler twice in
	 * its own children, counting each free stack twice.
	 */
	if (!aio_atfork_set) {
		aio_atfork_set = 1;
		pthread_atfork(NULL, NULL, aio_atfork_child);
	}
}

/* ---- submission ------------------------------------------------------------ */

enum fd_kind { FD_BAD = -1, FD_PARALLEL, FD_ORDERED, FD_STREAM };

/*
 * How requests on @fd run: FD_PARALLEL (a regular file or block device,
 * positioned I/O), FD_ORDERED (a write there with O_APPEND, where the
 * order is the file's content, or with O_SYNC/O_DSYNC, so that no write
 * is durable before one submitted earlier: one at a time) or
 * FD_STREAM (anything else: read()/write() without an offset, one at a
 * time, as glibc falls back to on ESPIPE); FD_BAD for a descriptor that
 * is not open for @op.
 */
static enum fd_kind fd_kind(int fd, int op)
{
	/* stat64: an i386 fstat() fails with EOVERFLOW on a file over 2 GiB */
	struct stat64 st;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fstat64(fd, &st))
		return FD_BAD;
	if (op == LIO_READ && (fl & O_ACCMODE) == O_WRONLY)
		return FD_BAD;
	if (op == LIO_WRITE && (fl & O_ACCMODE) == O_RDONLY)
		return FD_BAD;
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return FD_STREAM;
	return op == LIO_WRITE && (fl & (O_APPEND | O_DSYNC)) ? FD_ORDERED : FD_PARALLEL;
}

static struct fdq *fdq_get(int fd)
{
	struct fdq *q;

	for (q = aio_fdqs; q; q = q->next)
		if (q->fd == fd)
			break;
	if (!q) {
		q = calloc(1, sizeof(*q));
		if (!q)
			return NULL;
		q->fd = fd;
		q->tail = &q->pending;
		q->next = aio_fdqs;
		aio_fdqs = q;
	}
	return q;
}

/*
 * Checks @cb and enqueues a request for it; starts it unless it must
 * wait. @op: LIO_READ, LIO_WRITE, O_SYNC/O_DSYNC for aio_fsync(), or -1
 * (a bad aio_lio_opcode). Returns 0 or an errno for the caller to report;
 * a bad descriptor, offset, priority or opcode is the request's status.
 */
/*
 * The offset of @cb. On x86-64 aiocb and aiocb64 are one layout. On i386
 * (without _FILE_OFFSET_BITS=64) aiocb has a 32-bit off_t aio_offset and
 * padding where aiocb64 has a 64-bit one: a plain aiocb's offset is the
 * 32-bit one, sign-extended (a negative one is EINVAL), the padding ignored.
 */
static long long aiocb_offset(const struct aiocb *cb, int is64)
{
	if (is64)
		return ((const struct aiocb64 *)cb)->aio_offset;
	return cb->aio_offset;
}

/*
 * Submits a request on @cb: 0, an error number, or AIOCB_IN_USE (EINVAL
 * to the caller) when @cb's last request still runs: then @cb, which
 * holds that request's status, is left alone.
 */
#define AIOCB_IN_USE	(-1)

static int submit(struct aiocb *cb, int op, struct lio_group *group, int is64)
{
	long long off = aiocb_offset(cb, is64);
	struct req *r, **slot, *atoms = NULL;
	enum fd_kind kind = FD_BAD;
	int nr = 0, nargs = 0, wait = 0, loop = 0, err = 0;

	/* Set up once; tl_aio_init() published aio_ready with release. */
	if (!__atomic_load_n(&aio_ready, __ATOMIC_ACQUIRE)) {
		pthread_once(&aio_once, tl_aio_init);
		if (aio_init_error)
			return aio_init_error;
	}
	if (!sigevent_ok(&cb->aio_sigevent))
		return EINVAL;
	/*
	 * POSIX lets a bad descriptor, offset or length be found at the call
	 * or later. As glibc does, and as the Open POSIX tests expect, a bad
	 * priority fails the call, the rest is the request's status; and
	 * aio_fsync() checks its descriptor at the call and no priority.
	 */
	if ((op == LIO_READ || op == LIO_WRITE) &&
	    (cb->aio_reqprio < 0 || cb->aio_reqprio > AIO_PRIO_DELTA_MAX))
		return EINVAL;
	if (op == LIO_READ) {
		/*
		 * No fcntl() and fstat() per read: it is a pread64 at once,
		 * whose own checks give a bad or write-only descriptor its
		 * EBADF; one on a pipe, socket or terminal fails with ESPIPE
		 * before it reads anything and becomes an ordered read()
		 * (req_start()).
		 */
		kind = FD_PARALLEL;
		if (off < 0 || (ssize_t)cb->aio_nbytes < 0)
			err = EINVAL;
		nr = SYS_pread64;
		nargs = sizeof(long) == 4 ? 5 : 4;
	} else if (op == LIO_WRITE) {
		kind = fd_kind(cb->aio_fildes, op);
		if (kind == FD_BAD)
			err = EBADF;
		else if (off < 0 || (ssize_t)cb->aio_nbytes < 0)
			err = EINVAL;
		if (kind == FD_STREAM) {
			nr = SYS_write;
			nargs = 3;
		} else {
			nr = SYS_pwrite64;
			/* i386's take the offset as two words, low then high */
			nargs = sizeof(long) == 4 ? 5 : 4;
		}
	} else if (op == O_SYNC || op == O_DSYNC) {
		kind = fd_kind(cb->aio_fildes, LIO_NOP);
		if (kind == FD_BAD)
			return EBADF;
		nr = op == O_DSYNC ? SYS_fdatasync : SYS_fsync;
		nargs = 1;
	} else {
		err = EINVAL;		/* lio_listio(): a bad aio_lio_opcode */
	}

	pthread_mutex_lock(&aio_lock);
	aio_drain_retired();
	slot = table_slot(cb);
	if (*slot && (*slot)->state < RQ_DONE) {
		pthread_mutex_unlock(&aio_lock);
		return AIOCB_IN_USE;
	}
	if (aio_nreq >= AIO_MAXREQ) {
		pthread_mutex_unlock(&aio_lock);
		return EAGAIN;
	}
	if (*slot) {			/* a finished request on this aiocb */
		r = *slot;
		table_del(r);
	} else {
		r = req_alloc();
		if (!r) {
			pthread_mutex_unlock(&aio_lock);
			return EAGAIN;
		}
	}
	/* The atom is made in req_start() if it is needed. */
	memset(&r->args, 0, sizeof(*r) - offsetof(struct req, args));
	r->cb = cb;
	r->sev = cb->aio_sigevent;
	r->error = EINPROGRESS;
	r->args[0] = (uint64_t)cb->aio_fildes;
	r->args[1] = (uint64_t)(uintptr_t)cb->aio_buf;
	r->args[2] = cb->aio_nbytes;
	if (sizeof(long) == 4) {
		r->args[3] = (uint32_t)(uint64_t)off;
		r->args[4] = (uint32_t)((uint64_t)off >> 32);
	} else {
		r->args[3] = (uint64_t)off;
	}
	/*
	 * A large transfer and a sync go async at once: copying the one
	 * takes long even from the page cache, the other waits for the
	 * device wherever there is one, and the caller asked for them to
	 * overlap.
	 */
	r->nr = nr;
	r->nargs = nargs;
	if (op == O_SYNC || op == O_DSYNC || cb->aio_nbytes >= TL_AIO_ASYNC_BYTES)
		r->aflags = SYSLET_ASYNC;

	slot = table_slot(cb);
	*slot = r;
	aio_nreq++;
	r->seq = aio_nsubmit++;
	cb->__error_code = EINPROGRESS;
	cb->__return_value = 0;
	cb->__next_prio = (struct aiocb *)(void *)r;
	cb_set_mark(cb, aio_magic);
	r->group = group;
	if (err) {
		r->state = RQ_RUNNING;
		req_finish_unlock(r, err, -1, NULL);
		return 0;
	}
	r->exclusive = kind != FD_PARALLEL || op == O_SYNC || op == O_DSYNC;
	r->q = fdq_get(cb->aio_fildes);
	if (!r->q) {
		table_del(r);
		req_free(r);
		pthread_mutex_unlock(&aio_lock);
		return EAGAIN;
	}
	wait = r->q->pending || (r->exclusive && r->q->running);
	/*
	 * Reads only: a request that waits runs on its descriptor number when
	 * it starts, and a write must not land in a file opened on that
	 * number after a close().
	 */
	if (!wait && r->nr == SYS_pread64 && !(r->aflags & SYSLET_ASYNC) &&
	    aio_loopq_len < AIO_LOOP_MAX) {
		int busy = __atomic_load_n(&aio_cm_busy, __ATOMIC_RELAXED);

		loop = busy >= aio_loop_min && 3 * (int)aio_loopq_len < busy;
	}
	if (!(r->aflags & SYSLET_ASYNC) && !loop) {
		if (!aio_nstk)
			atoms = ring_pop_locked();
		if (aio_nstk) {
			r->stack = aio_stk[--aio_nstk];
		} else if (aio_stk_total < AIO_STACKS) {
			aio_stk_total++;
			r->stack = STACK_TO_MAKE;
		}
	}
	if (wait) {
		*r->q->tail = r;
		r->q->tail = &r->qnext;
		r->state = RQ_QUEUED;
	} else if (loop) {
		/* Started, as far as its descriptor's order goes. */
		r->q->running++;
		*aio_loopq_tail = r;
		aio_loopq_tail = &r->qnext;
		aio_loopq_len++;
		r->inloop = 1;
		r->state = RQ_QUEUED;
	} else {
		r->q->running++;
		r->state = RQ_RUNNING;
	}
	pthread_mutex_unlock(&aio_lock);
	if (!wait && !loop)
		req_start(r, NULL);
	end_atoms(atoms);
	return 0;
}

static int submit_errno(struct aiocb *cb, int op, int is64)
{
	int err = submit(cb, op, NULL, is64);

	if (err) {
		errno = err == AIOCB_IN_USE ? EINVAL : err;
		return -1;
	}
	return 0;
}

int aio_read(struct aiocb *cb)
{
	return submit_errno(cb, LIO_READ, 0);
}

int aio_write(struct aiocb *cb)
{
	return submit_errno(cb, LIO_WRITE, 0);
}

int aio_fsync(int op, struct aiocb *cb)
{
	if (op != O_SYNC && op != O_DSYNC) {
		errno = EINVAL;
		return -1;
	}
	return submit_errno(cb, op, 0);
}

/* ---- status --------------------------------------------------------------- */

/* Whether @cb has a request of this process whose status is unretrieved. */
static int cb_marked(const struct aiocb *cb)
{
	uint64_t m = aio_magic;

	return m && cb_mark(cb) == m;
}

/*
 * Async-signal-safe. "May fail with EINVAL" for an aiocb that is not an
 * operation whose status is unretrieved: returned as the status, as the
 * Open POSIX tests read it (an error number is what aio_error() returns).
 * Only a marked aiocb has one: the mark is set with the request and
 * cleared when the status is retrieved.
 */
int aio_error(const struct aiocb *cb)
{
	if (!cb_marked(cb))
		return EINVAL;
	return __atomic_load_n(&cb->__error_code, __ATOMIC_ACQUIRE);
}

/*
 * Async-signal-safe. The result was published in the aiocb before its
 * __error_code (req_finish_unlock()); the request itself is retired for
 * the next holder of aio_lock to free. POSIX allows one call per request:
 * two at once on one aiocb, or one racing a new submission on it, are
 * the caller's race.
 */
ssize_t aio_return(struct aiocb *cb)
{
	ssize_t ret;
	int err;

	if (!cb_marked(cb) ||
	    (err = __atomic_load_n(&cb->__error_code, __ATOMIC_ACQUIRE)) == EINPROGRESS) {
		errno = EINVAL;
		return -1;
	}
	ret = cb->__return_value;
	cb_set_mark(cb, 0);
	if (cb->__next_prio)	/* lio_listio() marks one it did not queue */
		req_retire((struct req *)(void *)cb->__next_prio);
	if (ret < 0)
		errno = err;
	return ret;
}

/*
 * Whether an aiocb of @list is done, or is none of ours (aio_suspend()
 * returns at once for it, as for one done). Without aio_lock: see
 * cb_mark().
 */
static int any_done(const struct aiocb *const list[], int n)
{
	for (int i = 0; i < n; i++) {
		if (!list[i])
			continue;
		if (aio_error(list[i]) != EINPROGRESS)
			return 1;
	}
	return 0;
}

static int suspend(const struct aiocb *const list[], int n,
		   const struct timespec *timeout);

static void aio_unwait(void *arg)
{
	(void)arg;
	__atomic_sub_fetch(&aio_waiters, 1, __ATOMIC_SEQ_CST);
}

/*
 * A cancellation point, as POSIX requires: a pending cancellation acts at
 * the call, and one that comes while it sleeps ends the sleep (suspend());
 * the cleanup (the library is built with -fexceptions) uncounts the
 * waiter either way.
 */
int aio_suspend(const struct aiocb *const list[], int n,
		const struct timespec *timeout)
{
	int ret;

	pthread_testcancel();
	if (n > 0 && any_done(list, n))	/* no need to count */
		return 0;
	/* Counted before its first read of aio_seq: req_finish_unlock(). */
	__atomic_add_fetch(&aio_waiters, 1, __ATOMIC_SEQ_CST);
	pthread_cleanup_push(aio_unwait, NULL);
	ret = suspend(list, n, timeout);
	pthread_cleanup_pop(1);
	return ret;
}

static int suspend(const struct aiocb *const list[], int n,
		   const struct timespec *timeout)
{
	struct timespec end, now, rel;

	if (n < 0) {
		errno = EINVAL;
		return -1;
	}
	if (timeout) {
		clock_gettime(CLOCK_MONOTONIC, &end);
		end.tv_sec += timeout->tv_sec;
		end.tv_nsec += timeout->tv_nsec;
		if (end.tv_nsec >= 1000000000L) {
			end.tv_sec++;
			end.tv_nsec -= 1000000000L;
		}
	}
	for (;;) {
		uint32_t seq = __atomic_load_n(&aio_seq, __ATOMIC_SEQ_CST);
		long ret;
		int type;

		if (any_done(list, n))
			return 0;
		if (timeout) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			rel.tv_sec = end.tv_sec - now.tv_sec;
			rel.tv_nsec = end.tv_nsec - now.tv_nsec;
			if (rel.tv_nsec < 0) {
				rel.tv_sec--;
				rel.tv_nsec += 1000000000L;
			}
			if (rel.tv_sec < 0) {
				errno = EAGAIN;
				return -1;
			}
		}
		/*
		 * Cancelable while it sleeps, as glibc's own cancellation
		 * points are: asynchronously, for the system call only.
		 * Handed off in a threadlet, the head's type is put back at
		 * .resume, and this restores the cache-miss thread's.
		 */
		pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &type);
		ret = syscall(SYS_futex, &aio_seq, FUTEX_WAIT_PRIVATE, seq,
			      timeout ? &rel : NULL, NULL, 0);
		pthread_setcanceltype(type, NULL);
		if (ret < 0 && errno == EINTR)
			return -1;
	}
}

/* ---- cancellation ----------------------------------------------------------- */

/*
 * Cancels @r if it has not started. Caller holds aio_lock and gets it
 * back (the notification is sent without it). Returns AIO_CANCELED,
 * AIO_NOTCANCELED or AIO_ALLDONE for @r.
 */
static int cancel_one(struct req *r)
{
	struct req **pp;
	struct fdq *q = r->q;

	if (r->state >= RQ_DONE)
		return AIO_ALLDONE;
	if (r->state != RQ_QUEUED)
		return AIO_NOTCANCELED;
	if (r->inloop) {
		for (pp = &aio_loopq; *pp != r; pp = &(*pp)->qnext)
			;
		*pp = r->qnext;
		if (aio_loopq_tail == &r->qnext)
			aio_loopq_tail = pp;
		aio_loopq_len--;
		r->inloop = 0;
		q->running--;
	} else {
		for (pp = &q->pending; *pp != r; pp = &(*pp)->qnext)
			;
		*pp = r->qnext;
		if (q->tail == &r->qnext)
			q->tail = pp;
	}
	r->qnext = NULL;
	req_finish_unlock(r, ECANCELED, -1, NULL);
	pthread_mutex_lock(&aio_lock);
	return AIO_CANCELED;
}

int aio_cancel(int fd, struct aiocb *cb)
{
	int ret = AIO_ALLDONE, one;

	if (fcntl(fd, F_GETFD) < 0) {
		errno = EBADF;
		return -1;
	}
	if (cb && cb->aio_fildes != fd) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&aio_lock);
	aio_drain_retired();
	if (cb) {
		struct req *r = *table_slot(cb);

		ret = r ? cancel_one(r) : AIO_ALLDONE;
		pthread_mutex_unlock(&aio_lock);
		return ret;
	}
	for (unsigned int i = 0; i < (1u << HASH_BITS); i++) {
restart:
		for (struct req *r = aio_table[i]; r; r = r->hnext) {
			/* A done request's aiocb may be gone already. */
			if (r->state >= RQ_DONE || r->cb->aio_fildes != fd)
				continue;
			one = cancel_one(r);
			if (one == AIO_NOTCANCELED)
				ret = AIO_NOTCANCELED;
			else if (ret != AIO_NOTCANCELED)
				ret = AIO_CANCELED;
			if (one == AIO_CANCELED)
				goto restart;	/* the lock was dropped */
		}
	}
	pthread_mutex_unlock(&aio_lock);
	return ret;
}

/* ---- lio_listio -------------------------------------------------------------- */

static int listio(int mode, struct aiocb *const list[], int n,
		  struct sigevent *sev, int is64)
{
	struct lio_group *group = NULL;
	int failed = 0, err;

	if ((mode != LIO_WAIT && mode != LIO_NOWAIT) || n < 0 || n > TL_AIO_LISTIO_MAX ||
	    (mode == LIO_NOWAIT && sev && !sigevent_ok(sev))) {
		errno = EINVAL;
		return -1;
	}
	if (mode == LIO_NOWAIT && sev && sev->sigev_notify != SIGEV_NONE) {
		group = malloc(sizeof(*group));
		if (!group) {
			errno = EAGAIN;
			return -1;
		}
		group->left = 1;	/* this call's own reference */
		group->sev = *sev;
	}
	for (int i = 0; i < n; i++) {
		struct aiocb *cb = list[i];

		if (!cb || cb->aio_lio_opcode == LIO_NOP)
			continue;
		if (group) {
			pthread_mutex_lock(&aio_lock);
			group->left++;
			pthread_mutex_unlock(&aio_lock);
		}
		err = submit(cb, cb->aio_lio_opcode == LIO_READ ||
				 cb->aio_lio_opcode == LIO_WRITE ? cb->aio_lio_opcode : -1,
			     group, is64);
		if (err && err != AIOCB_IN_USE) {
			/*
			 * Not queued: aio_error() reports why, aio_return()
			 * -1 (a status with no request, marked by hand).
			 */
			cb->__error_code = err;
			cb->__return_value = -1;
			cb->__next_prio = NULL;
			cb_set_mark(cb, aio_magic);
		}
		if (err) {
			failed = 1;
			if (group) {
				pthread_mutex_lock(&aio_lock);
				group->left--;
				pthread_mutex_unlock(&aio_lock);
			}
		}
	}
	if (group) {
		struct sigevent note = { .sigev_notify = SIGEV_NONE };

		pthread_mutex_lock(&aio_lock);
		if (--group->left == 0) {
			note = group->sev;
			free(group);
		}
		pthread_mutex_unlock(&aio_lock);
		notify(&note);
	}
	if (mode == LIO_WAIT) {
		for (int i = 0; i < n; i++) {
			const struct aiocb *one[1] = { list[i] };

			if (!list[i] || list[i]->aio_lio_opcode == LIO_NOP)
				continue;
			while (aio_error(list[i]) == EINPROGRESS)
				if (aio_suspend(one, 1, NULL) && errno == EINTR) {
					errno = EINTR;
					return -1;
				}
			if (aio_error(list[i]))
				failed = 1;
		}
	}
	if (failed) {
		errno = EIO;
		return -1;
	}
	return 0;
}

int lio_listio(int mode, struct aiocb *const list[], int n, struct sigevent *sev)
{
	return listio(mode, list, n, sev, 0);
}

/*
 * ---- the *64 names (fio calls only these) ----------------------------------
 * aiocb64 has aiocb's size and layout but for aio_offset on i386 (32 bits
 * and padding in aiocb, 64 bits in aiocb64, at the same place): there the
 * names that read the offset are functions of their own, the others
 * aliases. On x86-64 all are aliases.
 */
_Static_assert(sizeof(struct aiocb) == sizeof(struct aiocb64), "aiocb64 size");
_Static_assert(offsetof(struct aiocb, aio_offset) ==
	       offsetof(struct aiocb64, aio_offset), "aiocb64 offset");
_Static_assert(offsetof(struct aiocb, aio_sigevent) ==
	       offsetof(struct aiocb64, aio_sigevent), "aiocb64 sigevent");
_Static_assert(offsetof(struct aiocb, __error_code) ==
	       offsetof(struct aiocb64, __error_code), "aiocb64 status");
_Static_assert(sizeof(long) == 8 ||
	       sizeof(((struct aiocb *)0)->aio_offset) == 4, "i386 off_t");

#if __SIZEOF_LONG__ == 8
_Static_assert(sizeof(((struct aiocb *)0)->aio_offset) == 8, "x86-64 off_t");
int aio_read64(struct aiocb64 *cb) __attribute__((alias("aio_read")));
int aio_write64(struct aiocb64 *cb) __attribute__((alias("aio_write")));
int lio_listio64(int mode, struct aiocb64 *const list[], int n,
		 struct sigevent *sev) __attribute__((alias("lio_listio")));
#else
int aio_read64(struct aiocb64 *cb)
{
	return submit_errno((struct aiocb *)cb, LIO_READ, 1);
}

int aio_write64(struct aiocb64 *cb)
{
	return submit_errno((struct aiocb *)cb, LIO_WRITE, 1);
}

int lio_listio64(int mode, struct aiocb64 *const list[], int n,
		 struct sigevent *sev)
{
	return listio(mode, (struct aiocb *const *)list, n, sev, 1);
}
#endif
/* No offset read: the same code for both layouts. */
int aio_fsync64(int op, struct aiocb64 *cb) __attribute__((alias("aio_fsync")));
int aio_error64(const struct aiocb64 *cb) __attribute__((alias("aio_error")));
ssize_t aio_return64(struct aiocb64 *cb) __attribute__((alias("aio_return")));
int aio_suspend64(const struct aiocb64 *const list[], int n,
		  const struct timespec *timeout) __attribute__((alias("aio_suspend")));
int aio_cancel64(int fd, struct aiocb64 *cb) __attribute__((alias("aio_cancel")));
