// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * libthreadlet: threadlets on top of the kernel's threadlet area, async
 * heads and vDSO threadlet_on()/threadlet_off().
 *
 * Per-thread state lives in the thread's TLS, and so does its threadlet
 * area. A hand-off moves the TLS base with the identity, so "this thread's
 * area" always means the area the kernel has registered for the current
 * task: no state of the library is tied to a kernel task.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#endif
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* The head frame and top block that switch_<arch>.asm builds; see there. */
#if defined(__x86_64__)
struct tl_head_frame {
	uint64_t top;
	uint64_t r15, r14, r13, r12, rbx, rbp;
	uint64_t ret;
};

struct tl_top {
	uint64_t unused;
	uint64_t fn, data, head;
};
_Static_assert(offsetof(struct tl_head_frame, top) == 0, "FRAME_TOP");
_Static_assert(offsetof(struct tl_head_frame, ret) == 56, "FRAME_SIZE");
_Static_assert(offsetof(struct tl_top, fn) == 8, "TOP_FN");
_Static_assert(offsetof(struct tl_top, data) == 16, "TOP_DATA");
_Static_assert(offsetof(struct tl_top, head) == 24, "TOP_HEAD");
_Static_assert(sizeof(struct tl_top) == 32, "TOP_SIZE");
#elif defined(__i386__)
struct tl_head_frame {
	uint32_t edi, esi, ebx, ebp;
	uint32_t ret;
	uint32_t args[4];
};

struct tl_top {
	uint32_t arg, data, fn;
	uint32_t pad[5];
};
_Static_assert(offsetof(struct tl_head_frame, args) == 20, "FRAME_ARGS");
_Static_assert(offsetof(struct tl_top, data) == 4, "TOP_DATA");
_Static_assert(offsetof(struct tl_top, fn) == 8, "TOP_FN");
_Static_assert(sizeof(struct tl_top) == 32, "TOP_SIZE");
#else
#error "libthreadlet supports x86-64 and i386"
#endif
_Static_assert(offsetof(struct threadlet_area, flags) == 0 &&
	       offsetof(struct threadlet_area, lib_flags) == 4, "AREA_STATE");
_Static_assert(offsetof(struct threadlet_area, home_ip) == 32, "AREA_HOME_IP");
_Static_assert(offsetof(struct threadlet_area, home_sp) == 40, "AREA_HOME_SP");
_Static_assert(sizeof(struct threadlet_area) == THREADLET_AREA_SIZE, "area");
_Static_assert(TL_LIB_UNREGISTERED == 1, "TL_LIB_UNREGISTERED");

/* The async head whose pool this thread belongs to, if it is a pool thread. */
static __thread struct async_head_user *tl_pool_ahu
	__attribute__((tls_model("initial-exec")));

/*
 * A pool of cache-miss threads: min started by async_head_init_pool(),
 * more started by a pool thread the kernel sends home with ASYNC_GROW (up
 * to max), threads above min ending after TL_POOL_IDLE_MS parked unused.
 * The threads are detached: nr_threads counts those started and not
 * ending (changed only by compare-and-swap against min and max), live
 * those still in tl_pool_main(), which async_head_exit() waits to reach 0
 * (a futex) before it frees the pool.
 */
struct tl_pool {
	struct tl_pool *next;
	struct async_head_user *ahu;
	unsigned int min, max;
	unsigned int nr_threads;
	unsigned int live;
	unsigned long grown, grow_failed, idle_exits;
	int error;		/* -errno of a pool thread that could not start */
	int ready;		/* set up: a thread that fails is a failed grow */
	/*
	 * threadlet_submit()'s queue, under qlock: jobs waiting for a
	 * cache-miss thread, and busy, the submitted threadlets handed off
	 * and not yet done (see tl_job_queue()). qmin: TL_QUEUE_MIN, 0 off.
	 */
	pthread_mutex_t qlock;
	struct tl_job *qhead, **qtail;
	unsigned int qlen, qmin;
	int busy;
};

/*
 * Set once, by tl_init(): the vDSO's functions or the syscall forms.
 * __threadlet_off_tls is exported for the inline complete_threadlet_fn()
 * (on i386, for programs built before it used __threadlet_off_tls_regs).
 * On i386 the trampoline and complete_threadlet_fn() call the vDSO's
 * forms with register arguments (switch_i386.asm), or the syscall forms
 * behind the same registers.
 */
tl_on_fn tl_on;
__threadlet_off_tls_fn __threadlet_off_tls;
#ifdef __i386__
void *tl_on_regs;
__threadlet_regs_fn __threadlet_off_tls_regs;
#endif
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;

long tl_syscall_on(struct threadlet_area *area, unsigned long ip,
		   unsigned long sp, void *ahu)
{
	TL_KEEP_ERRNO;

	(void)area;
	return syscall(__NR_threadlet_on, ip, sp, ahu) ? -errno : 0;
}

/* The kernel finds the caller's area itself: no stale pointer either. */
long tl_syscall_off_tls(long tls_offset)
{
	TL_KEEP_ERRNO;

	(void)tls_offset;
	return syscall(__NR_threadlet_off);
}

static struct tl_pool *tl_pools;

/*
 * Heads being set up by async_head_init_pool(), each an entry on the
 * stack of the thread setting it up, under tl_pools_lock: a second setup
 * of the same head says -EBUSY before it writes anything, instead of
 * wiping the first one's ring pointer.
 */
struct tl_pending {
	struct async_head_user *ahu;
	struct tl_pending *next;
};
static struct tl_pending *tl_pending;
static pthread_mutex_t tl_stacks_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t tl_pools_lock = PTHREAD_MUTEX_INITIALIZER;
/* Bumped under tl_pools_lock when a pool ends: see tl_job_pool(). */
static unsigned int tl_pools_gen;

/*
 * fork() copies the two locks as they are: held by another thread of the
 * parent, they would stay held in the child, where that thread does not
 * exist. So fork takes them, and both sides let go.
 */
static void tl_atfork_prepare(void)
{
	pthread_mutex_lock(&tl_stacks_lock);
	pthread_mutex_lock(&tl_pools_lock);
}

static void tl_atfork_parent(void)
{
	pthread_mutex_unlock(&tl_pools_lock);
	pthread_mutex_unlock(&tl_stacks_lock);
}

static void tl_pool_thread_gone(void *arg);
static pthread_key_t tl_pool_key;
static int tl_pool_key_ok;

/*
 * A fork child has no registered area and no pool (the kernel keeps
 * neither across fork); forget the parent's, also the pool the forking
 * thread remembers (tl_job_cache: a new generation) and its cache-miss
 * marks. Their memory is the child's to leak: the parent's threads that
 * own it do not exist here. A child forked by a pool thread, in the rest
 * of a threadlet, is a copy of a thread whose head frame is the parent's
 * new head's: it is marked, and ends when the threadlet does
 * (tl_forked_cm_end()), and its pool thread's destructor is dropped.
 */
static void tl_atfork_child(void)
{
	__threadlet_area.flags = 0;
	__threadlet_area.lib_flags |= TL_LIB_UNREGISTERED;
	if (__threadlet_area.lib_flags & TL_LIB_CACHEMISS) {
		__threadlet_area.lib_flags |= TL_LIB_FORKED_CM;
		if (tl_pool_key_ok)
			pthread_setspecific(tl_pool_key, NULL);
	}
	__threadlet_area.lib_flags &= ~TL_LIB_CACHEMISS;
	tl_pool_ahu = NULL;
	tl_pools = NULL;
	tl_pending = NULL;
	tl_pools_gen++;
	tl_atfork_parent();
}

/*
 * The threadlet that a fork child of a pool thread went on with ended:
 * there is no head to return to, nor a pool or ring to post to; the
 * child's only thread ends as a thread whose start routine returned
 * does when it is the last one, with exit(0).
 */
static void __attribute__((noreturn)) tl_forked_cm_end(void)
{
	exit(0);
}

/*
 * tl_pool_key: each pool thread's pool, as thread-specific data whose
 * destructor runs if the thread ends anywhere but at the end of
 * tl_pool_main(): the rest of a threadlet that went async runs in a pool
 * thread's identity, and a pthread_exit() or cancellation there ends that
 * thread.
 */
static pthread_once_t tl_pool_key_once = PTHREAD_ONCE_INIT;

static void tl_pool_key_init(void)
{
	tl_pool_key_ok = pthread_key_create(&tl_pool_key, tl_pool_thread_gone) == 0;
}

static void tl_init(void)
{
	const char *force = getenv("THREADLET_FORCE_SYSCALL");

	pthread_atfork(tl_atfork_prepare, tl_atfork_parent, tl_atfork_child);
	if (!force || strcmp(force, "1")) {
		void *on = threadlet_vdso_sym("__vdso_threadlet_on");
		void *off = threadlet_vdso_sym("__vdso_threadlet_off_tls");
#ifdef __i386__
		void *on_regs = threadlet_vdso_sym("__vdso_threadlet_on_regs");
		void *off_regs = threadlet_vdso_sym("__vdso_threadlet_off_tls_regs");

		if (threadlet_ptr_err(on_regs) || threadlet_ptr_err(off_regs))
			on = NULL;	/* an older vDSO: all four or none */
#endif

		if (on && !threadlet_ptr_err(on) && !threadlet_ptr_err(off)) {
			tl_on = (tl_on_fn)on;
			__threadlet_off_tls = (__threadlet_off_tls_fn)off;
#ifdef __i386__
			tl_on_regs = on_regs;
			__threadlet_off_tls_regs = (__threadlet_regs_fn)off_regs;
#endif
		}
	}
	if (!tl_on || !__threadlet_off_tls) {
		tl_on = tl_syscall_on;
		__threadlet_off_tls = tl_syscall_off_tls;
#ifdef __i386__
		tl_on_regs = (void *)tl_syscall_on_regs;
		__threadlet_off_tls_regs = tl_syscall_off_regs;
#endif
		return;
	}
	/*
	 * Touch the vDSO text now, so that a threadlet never takes (and
	 * sleeps in) the fault that first maps it.
	 */
	(void)*(volatile const char *)tl_on;
	(void)*(volatile const char *)__threadlet_off_tls;
#ifdef __i386__
	(void)*(volatile const char *)tl_on_regs;
	(void)*(volatile const char *)__threadlet_off_tls_regs;
#endif
}

int threadlet_uses_vdso(void)
{
	pthread_once(&tl_once, tl_init);
	return tl_on != tl_syscall_on;
}

/* Registers the calling thread's area on first use. */
static int tl_register(void)
{
	TL_KEEP_ERRNO;

	pthread_once(&tl_once, tl_init);
	if (!(__threadlet_area.lib_flags & TL_LIB_UNREGISTERED))
		return 0;
#ifdef __i386__
	/*
	 * The vDSO's __vdso_threadlet_on_regs stores the low halves of these
	 * only: their high halves must be 0, as every write of this library
	 * leaves them (and the TLS image starts them).
	 */
	__threadlet_area.head_ip = 0;
	__threadlet_area.head_sp = 0;
	__threadlet_area.ahu = 0;
#endif
	if (syscall(__NR_threadlet_register, &__threadlet_area, sizeof(__threadlet_area), 0))
		return -errno;
	__threadlet_area.lib_flags &= ~TL_LIB_UNREGISTERED;
	return 0;
}

static void tl_unregister(void)
{
	if (!(__threadlet_area.lib_flags & TL_LIB_UNREGISTERED) &&
	    !syscall(__NR_threadlet_register, &__threadlet_area, sizeof(__threadlet_area),
		     THREADLET_UNREGISTER))
		__threadlet_area.lib_flags |= TL_LIB_UNREGISTERED;
}

void threadlet_stats(struct threadlet_stats *st)
{
	st->nr_sync = __threadlet_area.nr_sync;
	st->nr_handoffs = __threadlet_area.nr_handoffs;
	st->nr_fallbacks = __threadlet_area.nr_fallbacks;
	st->last_fallback = __threadlet_area.last_fallback;
}

/* The uapi header's list of reasons, the same names as the tracepoint's. */
#define TL_FB_NAME(name, str, desc)	[THREADLET_FB_##name] = str,
static const char *const tl_fallback_names[THREADLET_FB_NR] = {
	[THREADLET_FB_NONE] = "none",
	__THREADLET_FALLBACKS(TL_FB_NAME)
};
#undef TL_FB_NAME

const char *threadlet_fallback_name(unsigned int reason)
{
	if (reason >= THREADLET_FB_NR)
		return (const char *)(long)-EINVAL;
	return tl_fallback_names[reason];
}

/* ---- stacks ---------------------------------------------------------- */

/*
 * Stacks handed out, so that threadlet_stack_free() can refuse a pointer
 * it did not return (-EINVAL) instead of unmapping or reading memory
 * that is not a stack. Allocation is not a fast path; a list will do.
 */
struct tl_stack {
	struct tl_stack *next;
	unsigned long top;
	char *base;
	size_t map_size;
};

static struct tl_stack *tl_stacks;

unsigned long threadlet_stack_alloc(size_t size)
{
	TL_KEEP_ERRNO;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), map_size;
	struct tl_stack *st;
	char *base;

	if (!size || size > (1UL << 30))
		return (unsigned long)-EINVAL;
	st = malloc(sizeof(*st));
	if (!st)
		return (unsigned long)-ENOMEM;
	map_size = ((size + page - 1) & ~(page - 1)) + page;
	base = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (base == MAP_FAILED) {
		free(st);
		return (unsigned long)-ENOMEM;
	}
	if (mprotect(base, page, PROT_NONE)) {	/* the guard page */
		munmap(base, map_size);
		free(st);
		return (unsigned long)-ENOMEM;
	}
	st->base = base;
	st->map_size = map_size;
	st->top = (unsigned long)(base + map_size);
	pthread_mutex_lock(&tl_stacks_lock);
	st->next = tl_stacks;
	tl_stacks = st;
	pthread_mutex_unlock(&tl_stacks_lock);
	return st->top;
}

int threadlet_stack_free(unsigned long stack_top)
{
	TL_KEEP_ERRNO;
	struct tl_stack **pp, *st = NULL;

	pthread_mutex_lock(&tl_stacks_lock);
	for (pp = &tl_stacks; *pp; pp = &(*pp)->next) {
		if ((*pp)->top == stack_top) {
			st = *pp;
			*pp = st->next;
			break;
		}
	}
	pthread_mutex_unlock(&tl_stacks_lock);
	if (!st)
		return -EINVAL;
	munmap(st->base, st->map_size);
	free(st);
	return 0;
}

/* ---- running threadlets ---------------------------------------------- */

#ifdef __i386__
/*
 * switch_i386.asm finds this thread's area at tl_area_tpoff from the
 * thread pointer. Set before any code of this library runs; a constant
 * (the area is initial-exec TLS of this module). Were it read as 0 by a
 * constructor that runs earlier, the fast path would test the TCB's first
 * two words (its self pointer, the DTV), which are never 0: the slow path,
 * which sets it.
 */
long tl_area_tpoff;

static inline void tl_set_area_tpoff(void)
{
	tl_area_tpoff = __threadlet_area_tls_offset();
}

static void __attribute__((constructor)) tl_init_tpoff(void)
{
	tl_set_area_tpoff();
}
#else
static inline void tl_set_area_tpoff(void) { }
#endif

/* Starts fn on its stack; the caller has checked everything. */
static long tl_run(long (*fn)(void *), void *data, unsigned long stack_top,
		   struct async_head_user *ahu)
{
#ifdef __i386__
	return tl_switch_run(fn, data, stack_top, ahu);
#else
	return tl_switch_run(fn, data, stack_top, ahu, &__threadlet_area);
#endif
}

/*
 * Everything threadlet_exec() (switch_x86_64.asm) does not do on its fast
 * path: argument errors, the first use in this thread, nesting.
 */
long tl_exec_slow(long (*fn)(void *), void *data, unsigned long stack_top,
		  struct async_head_user *ahu)
{
	int ret;

	tl_set_area_tpoff();
	/*
	 * No stack ends in the first page; nor can the top block fit there.
	 * Nor in the last: that is an error value of threadlet_stack_alloc().
	 */
	if (!fn || !ahu || stack_top < 4096 || threadlet_err(stack_top) ||
	    (stack_top & 15))
		return -EINVAL;
	ret = tl_register();
	if (ret)
		return ret;
	/* Not in a cache-miss thread, nor inside a running threadlet. */
	if ((__threadlet_area.lib_flags & TL_LIB_CACHEMISS) ||
	    (__threadlet_area.flags & THREADLET_ON))
		return -EBUSY;
	return tl_run(fn, data, stack_top, ahu);
}

/* Parks a cache-miss thread for good; returns only by going home. */
static void __attribute__((noreturn))
tl_cachemiss_done(void *event, struct async_head_user *ahu)
{
	long ret = syscall(__NR_async_thread, event, ahu);

	/*
	 * Only an error before parking comes back here: the head is gone or
	 * the ring is bad. The event is lost; the thread goes home to end.
	 */
	tl_go_home(&__threadlet_area, ret ? -errno : 0);
}

/*
 * complete_threadlet_fn() (threadlet.h) in full. Its inline part found no
 * threadlet on: what is left is a cache-miss thread, which parks for good,
 * or a call from outside a threadlet.
 */
long __complete_threadlet_fn(void *event, struct async_head_user *ahu)
{
	long ret = __threadlet_off_tls(__threadlet_area_tls_offset());

	if (ret > 0)
		return ret;		/* still on, for a caller of its own */
	if (__threadlet_area.lib_flags & TL_LIB_CACHEMISS)
		tl_cachemiss_done(event, ahu);
	if (__threadlet_area.lib_flags & TL_LIB_FORKED_CM)
		tl_forked_cm_end();
	return -EINVAL;			/* not inside a threadlet */
}

/*
 * fn returned on the threadlet stack and the area is not in its resting
 * state (see switch_x86_64.asm): either this is a cache-miss thread whose
 * fn returned without completing, or fn returned in place without calling
 * complete_threadlet_fn(). Returns only in the second case.
 *
 * The flag is cleared first and lib_flags read after: until the clear, a
 * signal handler that sleeps may still hand the head off, and returning
 * would then take this cache-miss thread back to the head's frame, on a
 * stack the new head is using.
 */
void tl_fn_returned_slow(void *data)
{
	__threadlet_off_tls(__threadlet_area_tls_offset());
	if (__threadlet_area.lib_flags & TL_LIB_CACHEMISS)
		tl_cachemiss_done(data, tl_pool_ahu);
	if (__threadlet_area.lib_flags & TL_LIB_FORKED_CM)
		tl_forked_cm_end();
}

/*
 * The new head after a hand-off, at .resume (switch_<arch>.asm), before
 * threadlet_exec() returns 0. glibc's cancellation points (read(),
 * write(), ...) make the caller's cancel type asynchronous around their
 * system call and put it back after it: when the call blocks and is
 * handed off, the "after" runs in the cache-miss thread, on its own
 * thread's state, and the head was left asynchronously cancelable for
 * good (a pthread_cancel() could then end it anywhere, holding malloc's
 * lock, say). POSIX calls nothing here but the cancel functions
 * async-cancel-safe, so threadlet_exec() was called with the type
 * deferred: that is the head's type again.
 */
void tl_resumed(void)
{
	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
}

/*
 * The personality routine of the trampoline frame that calls fn (the
 * "zPR" CIE of cfi.inc). A C++ exception, pthread_exit() or a
 * cancellation that unwinds out of fn while this thread is still the head
 * passes here in the cleanup phase: the threadlet is turned off, as when
 * fn completes in place, so that the caller's frames the unwinding goes
 * on into run as the head with no threadlet on (an exception caught
 * there, or the thread's exit). The flag is cleared first, as in
 * tl_fn_returned_slow(). In a cache-miss thread the unwind rules end at
 * this frame: an exception finds no handler (std::terminate(), as when it
 * leaves a thread's start routine), and a forced unwind (pthread_exit())
 * ends the thread; nothing is done here. Nothing else uses the frame, so
 * there is no table to read and no landing pad.
 */
_Unwind_Reason_Code tl_personality(int version, _Unwind_Action actions,
				   _Unwind_Exception_Class cls,
				   struct _Unwind_Exception *ue,
				   struct _Unwind_Context *ctx)
{
	(void)cls;
	(void)ue;
	(void)ctx;
	if (version != 1)
		return _URC_FATAL_PHASE1_ERROR;
	if (actions & _UA_CLEANUP_PHASE)
		__threadlet_off_tls(__threadlet_area_tls_offset());
	return _URC_CONTINUE_UNWIND;
}

/* ---- async heads and their pools ------------------------------------- */

static void *tl_pool_main(void *arg);

/* A pool thread leaves: live (what async_head_exit() waits for) drops. */
static void tl_pool_left(struct tl_pool *pool)
{
	if (__atomic_sub_fetch(&pool->live, 1, __ATOMIC_ACQ_REL) == 0)
		syscall(SYS_futex, &pool->live, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Starts one detached pool thread, counted in nr_threads and live. */
static int tl_pool_start(struct tl_pool *pool)
{
	pthread_attr_t attr;
	pthread_t t;
	int ret;

	pthread_once(&tl_pool_key_once, tl_pool_key_init);
	__atomic_add_fetch(&pool->live, 1, __ATOMIC_ACQ_REL);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = -pthread_create(&t, &attr, tl_pool_main, pool);
	pthread_attr_destroy(&attr);
	if (ret)
		tl_pool_left(pool);
	return ret;
}

/* Reserves a place for one more thread, if the pool has fewer than max. */
static int tl_pool_reserve(struct tl_pool *pool)
{
	unsigned int n = __atomic_load_n(&pool->nr_threads, __ATOMIC_RELAXED);

	do {
		if (n >= pool->max)
			return 0;
	} while (!__atomic_compare_exchange_n(&pool->nr_threads, &n, n + 1, 0,
					      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	return 1;
}

/*
 * ASYNC_GROW: the kernel found fewer than the low watermark parked. Start
 * half again as many threads as the pool has (at least the watermark), up
 * to max. A thread that cannot be started (RLIMIT_NPROC, the cgroup's
 * pids limit, memory) is counted in grow_failed; the hand-offs that find
 * no spare meanwhile run in place, as they always may.
 */
static void tl_pool_grow(struct tl_pool *pool)
{
	unsigned int n = __atomic_load_n(&pool->nr_threads, __ATOMIC_RELAXED) / 2;

	if (n < TL_POOL_LOW)
		n = TL_POOL_LOW;
	while (n-- && tl_pool_reserve(pool)) {
		if (tl_pool_start(pool)) {
			__atomic_sub_fetch(&pool->nr_threads, 1, __ATOMIC_ACQ_REL);
			__atomic_add_fetch(&pool->grow_failed, 1, __ATOMIC_RELAXED);
			return;
		}
		__atomic_add_fetch(&pool->grown, 1, __ATOMIC_RELAXED);
	}
}

/* -ETIMEDOUT: end this thread if the pool has more than min. */
static int tl_pool_shrink(struct tl_pool *pool)
{
	unsigned int n = __atomic_load_n(&pool->nr_threads, __ATOMIC_RELAXED);

	do {
		if (n <= pool->min)
			return 0;
	} while (!__atomic_compare_exchange_n(&pool->nr_threads, &n, n - 1, 0,
					      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	__atomic_add_fetch(&pool->idle_exits, 1, __ATOMIC_RELAXED);
	return 1;
}

/*
 * A pool thread: registers its area, marks its identity as a cache-miss
 * thread and parks. It comes back to tl_park_home() when the pool ends
 * (0), on a signal (-EINTR: park again), to start threads (ASYNC_GROW),
 * after its idle time (-ETIMEDOUT: end, or park again), when the pool is
 * full without it (-EBUSY: end) or on an error.
 */
/*
 * A pool thread's identity only ever runs the ends of threadlets that
 * blocked. Registered with rseq, as glibc registers every thread, it
 * would make each hand-off cost an rseq update on two returns to user
 * space: the parked thread's, whose switch away flags one for the area
 * it then no longer has, and the one the hand-off sets for this area on
 * the kernel task that takes it over. Unregistered (glibc's own mark for
 * a failed registration in cpu_id), glibc's sched_getcpu() in a
 * cache-miss thread makes the system call instead. The head keeps its
 * own registration across a hand-off.
 */
static void tl_pool_rseq_off(void)
{
#if defined(RSEQ_SIG) && defined(__GLIBC__)
	/* glibc's area is at __rseq_offset from the thread pointer. */
	char *tp = (char *)&__threadlet_area - __threadlet_area_tls_offset();
	struct rseq *rs = (struct rseq *)(tp + __rseq_offset);

	if (!__rseq_size)
		return;
	if (syscall(SYS_rseq, rs, sizeof(*rs), RSEQ_FLAG_UNREGISTER, RSEQ_SIG) == 0)
		__atomic_store_n(&rs->cpu_id, RSEQ_CPU_ID_REGISTRATION_FAILED,
				 __ATOMIC_RELAXED);
#endif
}

/*
 * The destructor of tl_pool_key: a pool thread's identity ended in the
 * rest of a threadlet (pthread_exit(), a cancellation) instead of going
 * home. It leaves the pool's count of threads too, so that the pool can
 * grow again. (A raw exit system call runs no destructor: see
 * threadlet_exec(3).)
 */
static void tl_pool_thread_gone(void *arg)
{
	struct tl_pool *pool = arg;

	__atomic_sub_fetch(&pool->nr_threads, 1, __ATOMIC_ACQ_REL);
	tl_pool_left(pool);
}

/*
 * A pool thread. It owns one count in nr_threads (tl_pool_reserve()) from
 * before it starts until it leaves: tl_pool_shrink() takes it back when
 * idle, and every other way out gives it back here, so that a thread that
 * never parked is not counted as one the pool has.
 */
static void *tl_pool_main(void *arg)
{
	struct tl_pool *pool = arg;
	struct async_head_user *ahu = pool->ahu;
	int counted = 1;
	sigset_t all;
	long ret;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	ret = tl_register();
	if (ret) {
		/*
		 * async_head_init() reports it (RLIMIT_MEMLOCK: -ENOMEM); a
		 * thread the pool grew by counts as a failed grow.
		 */
		if (__atomic_load_n(&pool->ready, __ATOMIC_ACQUIRE))
			__atomic_add_fetch(&pool->grow_failed, 1, __ATOMIC_RELAXED);
		else
			__atomic_store_n(&pool->error, (int)ret, __ATOMIC_RELEASE);
		goto out;
	}
	__threadlet_area.lib_flags |= TL_LIB_CACHEMISS;
	tl_pool_ahu = ahu;
	tl_pool_rseq_off();
	if (tl_pool_key_ok)
		pthread_setspecific(tl_pool_key, pool);
	for (;;) {
		ret = tl_park_home(&__threadlet_area, ahu);
		if (ret == ASYNC_GROW) {
			tl_pool_grow(pool);
		} else if (ret == -ETIMEDOUT) {
			if (tl_pool_shrink(pool)) {
				counted = 0;
				break;
			}
		} else if (ret != -EINTR) {
			/* -EBUSY: max_cachemiss_threads are parked without it. */
			break;
		}
	}
	if (tl_pool_key_ok)
		pthread_setspecific(tl_pool_key, NULL);
	__threadlet_area.lib_flags &= ~TL_LIB_CACHEMISS;
	tl_unregister();
out:
	if (counted)
		__atomic_sub_fetch(&pool->nr_threads, 1, __ATOMIC_ACQ_REL);
	tl_pool_left(pool);
	return NULL;
}

/* Waits until every thread of @pool has left tl_pool_main(). */
static void tl_pool_wait_gone(struct tl_pool *pool)
{
	unsigned int n;

	while ((n = __atomic_load_n(&pool->live, __ATOMIC_ACQUIRE)))
		syscall(SYS_futex, &pool->live, FUTEX_WAIT_PRIVATE, n, NULL, NULL, 0);
}

long async_head_parked(struct async_head_user *ahu)
{
	TL_KEEP_ERRNO;
	long ret = syscall(__NR_async_register, ahu, sizeof(*ahu),
			   ASYNC_QUERY_PARKED);

	return ret < 0 ? -errno : ret;
}

/*
 * Waits until @n pool threads are parked. A new thread parks within its
 * first time slice, so yield to them while the count grows (on one CPU
 * that is what lets them run at all), else sleep, 20 us doubling up to
 * 1 ms. A pool thread that could not register its area ends the wait
 * with its error; about 10 s without all of them parked is an error.
 */
static int tl_pool_wait_parked(struct tl_pool *pool, unsigned int n)
{
	long long slept = 0;
	long step = 20000, last = -1;
	unsigned int yields = 0;

	for (;;) {
		long parked = async_head_parked(pool->ahu);
		int error = __atomic_load_n(&pool->error, __ATOMIC_ACQUIRE);
		struct timespec ts = { 0, step };

		if (error)
			return error;
		if (parked < 0)
			return (int)parked;
		if ((unsigned long)parked >= n)
			return 0;
		if (parked > last && yields < 4 * n) {
			last = parked;
			yields++;
			sched_yield();
			continue;
		}
		if (slept >= 10000000000LL)
			break;
		nanosleep(&ts, NULL);
		slept += step;
		if (step < 1000000)
			step *= 2;
	}
	return -ETIMEDOUT;
}

static unsigned int tl_queue_min(void);

/*
 * Claims @ahu for a setup (see struct tl_pending): 0, or -EBUSY if it has
 * a pool or another thread is setting it up.
 */
static int tl_pending_add(struct tl_pending *me, struct async_head_user *ahu)
{
	struct tl_pending *p;
	struct tl_pool *pool;

	pthread_mutex_lock(&tl_pools_lock);
	for (pool = tl_pools; pool && pool->ahu != ahu; pool = pool->next)
		;
	for (p = tl_pending; p && p->ahu != ahu; p = p->next)
		;
	if (!pool && !p) {
		me->ahu = ahu;
		me->next = tl_pending;
		tl_pending = me;
	}
	pthread_mutex_unlock(&tl_pools_lock);
	return pool || p ? -EBUSY : 0;
}

/* Ends @me's claim; publishes @pool, if set up, in the same step. */
static void tl_pending_end(struct tl_pending *me, struct tl_pool *pool)
{
	struct tl_pending **pp;

	pthread_mutex_lock(&tl_pools_lock);
	for (pp = &tl_pending; *pp && *pp != me; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = me->next;
	if (pool) {
		pool->next = tl_pools;
		tl_pools = pool;
	}
	pthread_mutex_unlock(&tl_pools_lock);
}

static int tl_pool_setup(struct async_head_user *ahu, unsigned int ring_entries,
			 unsigned int min_threads, unsigned int max_threads,
			 struct tl_pool **out);

/*
 * The setup is not a cancellation point (its waits are): a cancellation
 * there would leave a registered head and parked threads that nothing
 * can end.
 */
int async_head_init_pool(struct async_head_user *ahu, unsigned int ring_entries,
			 unsigned int min_threads, unsigned int max_threads)
{
	TL_KEEP_ERRNO;
	struct tl_pending me;
	struct tl_pool *pool = NULL;
	int ret, cancel;

	if (!ahu || !ring_entries || (ring_entries & (ring_entries - 1)) ||
	    ring_entries > ASYNC_RING_MAX_ENTRIES || !min_threads ||
	    min_threads > max_threads || max_threads > ASYNC_MAX_CACHEMISS)
		return -EINVAL;
	if (tl_pending_add(&me, ahu))
		return -EBUSY;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	ret = tl_pool_setup(ahu, ring_entries, min_threads, max_threads, &pool);
	tl_pending_end(&me, ret ? NULL : pool);
	pthread_setcancelstate(cancel, NULL);
	return ret;
}

/* async_head_init_pool() for a head claimed by tl_pending_add(). */
static int tl_pool_setup(struct async_head_user *ahu, unsigned int ring_entries,
			 unsigned int min_threads, unsigned int max_threads,
			 struct tl_pool **out)
{
	struct tl_pool *pool;
	uint64_t *ring;
	unsigned int i;
	int ret = 0;

	/* Registered behind the library's back: its indices are live. */
	if (syscall(__NR_async_register, ahu, sizeof(*ahu), ASYNC_QUERY_PARKED) >= 0)
		return -EBUSY;
	pool = calloc(1, sizeof(*pool));
	ring = calloc(ring_entries, sizeof(*ring));
	if (!pool || !ring) {
		free(pool);
		free(ring);
		return -ENOMEM;
	}
	memset(ahu, 0, sizeof(*ahu));
	ahu->completion_ring = (uintptr_t)ring;
	ahu->ring_size_bytes = ring_entries * sizeof(*ring);
	ahu->max_cachemiss_threads = max_threads;
	if (min_threads < max_threads) {
		ahu->low_watermark = TL_POOL_LOW < min_threads ? TL_POOL_LOW : min_threads;
		ahu->idle_timeout_ms = TL_POOL_IDLE_MS;
	}
	if (syscall(__NR_async_register, ahu, sizeof(*ahu), 0)) {
		ret = -errno;
		goto fail;
	}
	pool->ahu = ahu;
	pool->min = min_threads;
	pool->max = max_threads;
	pthread_mutex_init(&pool->qlock, NULL);
	pool->qtail = &pool->qhead;
	pool->qmin = tl_queue_min();
	for (i = 0; i < min_threads && !ret; i++) {
		/* Counted first: a thread that fails gives its count back. */
		__atomic_add_fetch(&pool->nr_threads, 1, __ATOMIC_ACQ_REL);
		ret = tl_pool_start(pool);
		if (ret)
			__atomic_sub_fetch(&pool->nr_threads, 1, __ATOMIC_ACQ_REL);
	}
	if (!ret)
		ret = tl_pool_wait_parked(pool, min_threads);
	if (!ret)
		__atomic_store_n(&pool->ready, 1, __ATOMIC_RELEASE);
	if (ret) {
		syscall(__NR_async_register, ahu, sizeof(*ahu), ASYNC_UNREGISTER);
		tl_pool_wait_gone(pool);
		goto fail;
	}
	*out = pool;
	return 0;
fail:
	free(pool);
	free(ring);
	ahu->completion_ring = 0;
	return ret;
}

int async_head_init(struct async_head_user *ahu, unsigned int ring_entries,
		    unsigned int max_cachemiss_threads)
{
	unsigned int min = max_cachemiss_threads;

	if (min > TL_POOL_MIN)
		min = TL_POOL_MIN;
	return async_head_init_pool(ahu, ring_entries, min, max_cachemiss_threads);
}

static struct tl_pool *tl_pool_find(struct async_head_user *ahu)
{
	struct tl_pool *pool;

	pthread_mutex_lock(&tl_pools_lock);
	for (pool = tl_pools; pool && pool->ahu != ahu; pool = pool->next)
		;
	pthread_mutex_unlock(&tl_pools_lock);
	return pool;
}

int async_head_pool_stats(struct async_head_user *ahu, struct async_pool_stats *st)
{
	struct tl_pool *pool = tl_pool_find(ahu);

	if (!pool || !st)
		return -EINVAL;
	st->min = pool->min;
	st->max = pool->max;
	st->threads = __atomic_load_n(&pool->nr_threads, __ATOMIC_RELAXED);
	st->grown = __atomic_load_n(&pool->grown, __ATOMIC_RELAXED);
	st->grow_failed = __atomic_load_n(&pool->grow_failed, __ATOMIC_RELAXED);
	st->idle_exits = __atomic_load_n(&pool->idle_exits, __ATOMIC_RELAXED);
	return 0;
}

int async_head_exit(struct async_head_user *ahu)
{
	TL_KEEP_ERRNO;
	struct tl_pool **pp, *pool = NULL;

	/*
	 * A threadlet, or a pool thread running one, would wait for its own
	 * thread to end: every pool thread has to, and one that runs a
	 * threadlet that went async is one.
	 */
	if ((__threadlet_area.flags & THREADLET_ON) ||
	    (__threadlet_area.lib_flags & TL_LIB_CACHEMISS))
		return -EBUSY;
	pthread_mutex_lock(&tl_pools_lock);
	for (pp = &tl_pools; *pp; pp = &(*pp)->next) {
		if ((*pp)->ahu == ahu) {
			pool = *pp;
			*pp = pool->next;
			break;
		}
	}
	if (pool)
		__atomic_add_fetch(&tl_pools_gen, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&tl_pools_lock);
	if (!pool)
		return -EINVAL;
	syscall(__NR_async_register, ahu, sizeof(*ahu), ASYNC_UNREGISTER);
	tl_pool_wait_gone(pool);
	free((void *)(uintptr_t)ahu->completion_ring);
	ahu->completion_ring = 0;
	pthread_mutex_destroy(&pool->qlock);
	free(pool);
	return 0;
}

void *async_ring_pop(struct async_head_user *ahu)
{
	TL_KEEP_ERRNO;
	uint64_t *ring = (uint64_t *)(uintptr_t)ahu->completion_ring;
	uint64_t mask = ahu->ring_size_bytes / sizeof(uint64_t) - 1;
	uint64_t u = ahu->user_ring_idx;
	uint64_t ev;

	if (__atomic_load_n(&ahu->kernel_ring_idx, __ATOMIC_ACQUIRE) == u)
		return NULL;
	/*
	 * Read and clear the slot in one locked instruction, a full
	 * barrier: a completer waiting for this slot sets the flag, then
	 * reads the slot again (async_wait_for_slot()); either it sees the
	 * slot clear or the load below sees its flag.
	 */
	ev = __atomic_exchange_n(&ring[u & mask], 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ahu->user_ring_idx, u + 1, __ATOMIC_RELEASE);
	/* The index as one word: in syscall()'s variable arguments a 64-bit
	 * value would take two of i386's and push ahu out of its place. */
	if (__atomic_load_n(&ahu->flags, __ATOMIC_ACQUIRE) & ASYNC_HEAD_RING_WAITERS)
		syscall(__NR_async_wait, 0UL, (unsigned long)(u + 1), ahu);
	return (void *)(uintptr_t)ev;
}

long async_wait(unsigned long min_wait_events, unsigned long user_ring_idx,
		struct async_head_user *ahu)
{
	TL_KEEP_ERRNO;
	long ret = syscall(__NR_async_wait, min_wait_events, user_ring_idx, ahu);

	return ret < 0 ? -errno : ret;
}

/* ---- threadlet_submit(): per-request threadlets with a queue --------- */

/*
 * A submitted threadlet. It lies at the top of its own threadlet stack,
 * which is the application's until the event is popped, so a job needs no
 * memory of its own and the queue no limit but the rule of tl_job_queue().
 * The thread that runs a job owns it; a queued job belongs to the queue.
 */
struct tl_job {
	long (*fn)(void *);
	void *data;
	void *event;
	struct tl_pool *pool;
	struct tl_job *next;
};
#define TL_JOB_SPACE	48	/* threadlet.h: the top 48 bytes of the stack */
_Static_assert(sizeof(struct tl_job) <= TL_JOB_SPACE, "TL_JOB_SPACE");

/* TL_QUEUE_MIN from the environment (secure_getenv): 0 turns queueing off. */
static unsigned int tl_queue_min(void)
{
	const char *env = secure_getenv("TL_QUEUE_MIN");
	char *end;
	unsigned long v;

	if (!env || !*env)
		return TL_QUEUE_MIN;
	v = strtoul(env, &end, 10);
	if (*end || v > ASYNC_MAX_CACHEMISS)
		return TL_QUEUE_MIN;
	return (unsigned int)v;
}

/*
 * The pool of @ahu, remembered per thread for the next call: the cache
 * holds while no pool has ended since (tl_pools_gen), and a pool ends only
 * in async_head_exit(), which the application does not race with its own
 * submissions. The cache moves with the head's TLS at a hand-off, which
 * is right: it is the head's.
 */
static __thread struct {
	struct async_head_user *ahu;
	struct tl_pool *pool;
	unsigned int gen;
} tl_job_cache __attribute__((tls_model("initial-exec")));

static struct tl_pool *tl_job_pool(struct async_head_user *ahu)
{
	unsigned int gen = __atomic_load_n(&tl_pools_gen, __ATOMIC_ACQUIRE);

	if (tl_job_cache.ahu != ahu || tl_job_cache.gen != gen || !tl_job_cache.pool) {
		tl_job_cache.pool = tl_pool_find(ahu);
		tl_job_cache.ahu = ahu;
		tl_job_cache.gen = gen;
	}
	return tl_job_cache.pool;
}

/*
 * Queues @job instead of starting it when enough cache-miss threads run
 * submitted threadlets that one of them takes it soon: at least qmin, and
 * more than three times the jobs already waiting, so that at most a
 * quarter of what is in flight waits, and a thread that finishes goes on
 * with a waiting job instead of parking while the head starts the next
 * one with a hand-off.
 *
 * Why a queued job always has a thread: busy is decremented only under
 * qlock, by a thread that found the queue empty (tl_job_take()), and
 * incremented by the head after threadlet_exec() returned 0, possibly
 * after that thread's decrement. So busy never counts a thread that has
 * already looked at the queue for the last time, and busy >= 1 here, under
 * qlock, means at least one thread will look at it after this job is in.
 */
static bool tl_job_queue(struct tl_pool *pool, struct tl_job *job)
{
	bool queued = false;
	int busy;

	if (!pool->qmin ||
	    __atomic_load_n(&pool->busy, __ATOMIC_RELAXED) < (int)pool->qmin)
		return false;
	pthread_mutex_lock(&pool->qlock);
	busy = __atomic_load_n(&pool->busy, __ATOMIC_RELAXED);
	if (busy >= (int)pool->qmin && 3 * pool->qlen < (unsigned int)busy) {
		job->next = NULL;
		*pool->qtail = job;
		pool->qtail = &job->next;
		pool->qlen++;
		queued = true;
	}
	pthread_mutex_unlock(&pool->qlock);
	return queued;
}

/* The next waiting job, or NULL and this thread no longer busy. */
static struct tl_job *tl_job_take(struct tl_pool *pool)
{
	struct tl_job *job;

	pthread_mutex_lock(&pool->qlock);
	job = pool->qhead;
	if (job) {
		pool->qhead = job->next;
		if (!pool->qhead)
			pool->qtail = &pool->qhead;
		pool->qlen--;
	} else {
		__atomic_sub_fetch(&pool->busy, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&pool->qlock);
	return job;
}

/*
 * A cache-miss thread finished @job: run the next waiting job on its own
 * stack, or post the event and park. The event and the pool are read
 * before the stack is left: once the event is out, the application may
 * reuse the stack the job lies on.
 */
static void __attribute__((noreturn)) tl_job_done(struct tl_job *job)
{
	struct tl_pool *pool = job->pool;
	void *event = job->event;
	struct tl_job *next;

	if (__threadlet_area.lib_flags & TL_LIB_FORKED_CM)
		tl_forked_cm_end();	/* the queue is the parent's */
	next = tl_job_take(pool);

	if (!next)
		tl_cachemiss_done(event, pool->ahu);
	tl_job_switch(next, event, pool->ahu);
}

/*
 * The cleanup of a submitted job's frame (the library is built with
 * -fexceptions): *@jobp is set while fn runs. A pthread_exit() or a
 * cancellation that ends a cache-miss thread inside fn unwinds through
 * here. That thread is counted busy, and tl_job_queue() counts on each
 * busy thread to look at the queue once more: it does so now, and runs
 * what it finds in place, posting each event, as tl_job_done() would have
 * had it returned, before it goes; the job that ended it posts nothing.
 * A head (a job that ran in place) has nothing to do here. Not inlined:
 * a TLS address computed before a hand-off would be the head's.
 */
static void __attribute__((noinline)) tl_job_unwound(struct tl_job **jobp)
{
	struct tl_pool *pool;
	struct tl_job *next;

	if (!*jobp || !(__threadlet_area.lib_flags & TL_LIB_CACHEMISS))
		return;
	pool = (*jobp)->pool;
	while ((next = tl_job_take(pool)) != NULL) {
		void *event = next->event;

		next->fn(next->data);
		syscall(__NR_async_complete, event, pool->ahu);
	}
}

#define TL_JOB_RUNNING(name, job) \
	struct tl_job *name __attribute__((cleanup(tl_job_unwound))) = (job)

/*
 * tl_job_switch() (switch_<arch>.asm) moved this cache-miss thread onto
 * @job's stack: @event, the finished job's, may go out now. If the head
 * is gone (async_head_exit()), the event is lost, and the job still runs:
 * async_head_exit() waits for every submitted threadlet, queued or not.
 */
void tl_job_next(struct tl_job *job, void *event, struct async_head_user *ahu)
{
	TL_JOB_RUNNING(running, job);

	syscall(__NR_async_complete, event, ahu);
	job->fn(job->data);
	running = NULL;
	tl_job_done(job);
}

/*
 * Runs a job as a threadlet: in place (returns 1, nothing posted), or on
 * from a hand-off in a cache-miss thread, which ends it in tl_job_done().
 * A head whose flag is already off (fn broke the rule and completed
 * itself) just returns.
 */
static long tl_job_fn(void *arg)
{
	struct tl_job *job = arg;
	TL_JOB_RUNNING(running, job);
	long ret;

	job->fn(job->data);
	running = NULL;
	ret = __threadlet_off_tls(__threadlet_area_tls_offset());
	if (ret > 0 ||
	    !(__threadlet_area.lib_flags & (TL_LIB_CACHEMISS | TL_LIB_FORKED_CM)))
		return 1;
	tl_job_done(job);
}

long threadlet_submit(long (*fn)(void *), void *data, void *event,
		      unsigned long stack_top, struct async_head_user *ahu)
{
	struct tl_pool *pool;
	struct tl_job *job;
	long ret;

	if (!fn || !event || !ahu || stack_top < 4096 ||
	    threadlet_err(stack_top) || (stack_top & 15))
		return -EINVAL;
	if ((__threadlet_area.lib_flags & TL_LIB_CACHEMISS) ||
	    (__threadlet_area.flags & THREADLET_ON))
		return -EBUSY;
	pool = tl_job_pool(ahu);
	if (!pool)
		return -EINVAL;
	job = (struct tl_job *)(stack_top - TL_JOB_SPACE);
	*job = (struct tl_job){
		.fn = fn, .data = data, .event = event, .pool = pool,
	};
	if (tl_job_queue(pool, job))
		return 0;
	ret = threadlet_exec(tl_job_fn, job, (unsigned long)job, ahu);
	if (ret == 0)
		__atomic_add_fetch(&pool->busy, 1, __ATOMIC_RELAXED);
	return ret;
}

/* ---- syslets: atoms name the calling process's own system calls ----- */

struct syslet_uatom *async_exec(struct syslet_uatom *atom,
				struct async_head_user *ahu)
{
	TL_KEEP_ERRNO;
	long ret = tl_register();

	if (ret)
		return (struct syslet_uatom *)ret;
	ret = syscall(__NR_async_exec, atom, ahu);
	if (ret == -1)
		ret = -errno;	/* never a final atom: that is user memory */
	return (struct syslet_uatom *)ret;
}

int umem_add(unsigned long long *uptr, unsigned long long inc)
{
	TL_KEEP_ERRNO;
#ifdef __i386__
	/* The increment in two registers, the low half first. */
	long ret = syscall(__NR_umem_add, uptr, (unsigned long)inc,
			   (unsigned long)(inc >> 32));
#else
	long ret = syscall(__NR_umem_add, uptr, inc);
#endif

	return ret < 0 ? -errno : (int)ret;
}

int syslet_atom_init(struct syslet_uatom *a, unsigned int nr,
		     unsigned int flags, long long *ret,
		     struct syslet_uatom *next, unsigned int nargs, ...)
{
	va_list ap;
	unsigned int i;

	if (!a || nargs > 6)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->flags = flags;
	a->nr = nr;
	a->ret_ptr = (uintptr_t)ret;
	a->next = (uintptr_t)next;
	va_start(ap, nargs);
	for (i = 0; i < nargs; i++)
		a->arg_ptr[i] = (uintptr_t)va_arg(ap, unsigned long long *);
	va_end(ap);
	return 0;
}
