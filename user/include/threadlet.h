/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * libthreadlet: run a function synchronously, and move the caller on to a
 * parked cache-miss thread only if the function blocks in the kernel.
 *
 *	long fn(void *data)
 *	{
 *		... anything, including blocking system calls ...
 *		return complete_threadlet_fn(event, ahu);
 *	}
 *
 *	ret = threadlet_exec(fn, data, stack_top, ahu);
 *	  1: fn ran to completion in this thread, nothing is posted;
 *	  0: fn blocked; this thread (same TID, TLS, signal mask) goes on, and
 *	     event arrives in ahu's completion ring when fn finishes;
 *	 <0: -errno, fn did not run.
 *
 * Errors, one convention for every function that can fail (as liburing's):
 *  - a function that returns a number returns -errno on failure;
 *  - a function that returns a pointer (or an address, such as a stack
 *    top) returns an error value on failure: -errno converted to the
 *    pointer type, in the last page of the address space, where no user
 *    object can be. threadlet_ptr_err() and threadlet_err() give the
 *    -errno of such a value, 0 for a real pointer (NULL included);
 *  - errno is never set: the library is safe to call between a failing
 *    call and the code that reads errno.
 * See README.md for the rules a threadlet function must follow.
 */
#ifndef THREADLET_H
#define THREADLET_H

#include <stddef.h>
#include <linux/threadlet.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * System call numbers, the same on x86-64 and i386 (a 32-bit process's
 * syslet atoms name i386 system calls). Each is defined only if not yet
 * defined, so that kernel headers that have them can come first.
 */
/* The largest errno a function returns as an error value (the kernel's). */
#define THREADLET_MAX_ERRNO	4095

/* -errno if @v (an address a function returned) is an error value, else 0. */
static inline int threadlet_err(unsigned long v)
{
	return v >= (unsigned long)-THREADLET_MAX_ERRNO ? (int)(long)v : 0;
}

/* -errno if @p (a pointer a function returned) is an error value, else 0. */
static inline int threadlet_ptr_err(const void *p)
{
	return threadlet_err((unsigned long)p);
}

#ifndef __NR_threadlet_register
#define __NR_threadlet_register	451
#endif
#ifndef __NR_threadlet_on
#define __NR_threadlet_on	452
#endif
#ifndef __NR_threadlet_off
#define __NR_threadlet_off	453
#endif
#ifndef __NR_async_register
#define __NR_async_register	454
#endif
#ifndef __NR_async_thread
#define __NR_async_thread	455
#endif
#ifndef __NR_async_wait
#define __NR_async_wait	456
#endif
#ifndef __NR_async_exec
#define __NR_async_exec	457
#endif
#ifndef __NR_umem_add
#define __NR_umem_add	458
#endif
#ifndef __NR_async_complete
#define __NR_async_complete	459
#endif

/*
 * Set up @ahu: a ring of @ring_entries (a power of two) completions and an
 * elastic pool of cache-miss threads: @min_threads started now (the call
 * returns when they are parked), more started on demand up to
 * @max_threads, those above @min_threads ending when idle. With
 * min == max the pool is fixed. Returns 0 or -errno (-EINVAL, -EBUSY for
 * a head already set up, -ENOMEM, -EAGAIN when the first threads cannot
 * be started).
 *
 * Growth: when a hand-off leaves fewer than TL_POOL_LOW (or min, if
 * smaller) threads parked, the kernel sends one parked thread back here to
 * start half again as many threads as the pool has (at least TL_POOL_LOW),
 * never more than max; a hand-off never waits for it (with no spare
 * parked, a threadlet runs in place). A thread that cannot be started
 * (RLIMIT_NPROC, a pids cgroup) is counted, not reported as an error.
 * Shrinking: a thread parked TL_POOL_IDLE_MS unused ends if the pool has
 * more than min.
 */
#define TL_POOL_MIN		16	/* async_head_init()'s min */
#define TL_POOL_LOW		4	/* low watermark and least growth */
#define TL_POOL_IDLE_MS		1000	/* idle time before a thread ends */
int async_head_init_pool(struct async_head_user *ahu, unsigned int ring_entries,
			 unsigned int min_threads, unsigned int max_threads);
/* async_head_init_pool() with min = min(max, TL_POOL_MIN). */
int async_head_init(struct async_head_user *ahu, unsigned int ring_entries,
		    unsigned int max_cachemiss_threads);
/*
 * Ends the pool (waits for threadlets still running), frees the ring.
 * Returns 0, or -EINVAL if @ahu is not a head that async_head_init*() set up.
 */
int async_head_exit(struct async_head_user *ahu);

struct async_pool_stats {
	unsigned int min, max;
	unsigned int threads;		/* started and not ended */
	unsigned long grown;		/* threads started on demand */
	unsigned long grow_failed;	/* threads that could not start or register */
	unsigned long idle_exits;	/* threads that ended idle */
};
/* The pool's figures; -EINVAL if @ahu has no pool of this library. */
int async_head_pool_stats(struct async_head_user *ahu, struct async_pool_stats *st);
/* Next completion or NULL if there is none (not an error); advances user_ring_idx. */
void *async_ring_pop(struct async_head_user *ahu);
/* Sleep until @min_wait_events completions are past @user_ring_idx.
 * Returns how many are, -EINTR on a signal. */
long async_wait(unsigned long min_wait_events, unsigned long user_ring_idx,
		struct async_head_user *ahu);

/*
 * A stack for threadlets: returns its top, with a guard page below, or an
 * error value (threadlet_err(): -EINVAL for a size of 0 or over 1 GiB,
 * -ENOMEM).
 */
unsigned long threadlet_stack_alloc(size_t size);
/* 0, or -EINVAL for a top that threadlet_stack_alloc() did not return. */
int threadlet_stack_free(unsigned long stack_top);

long threadlet_exec(long (*fn)(void *), void *data, unsigned long stack_top,
		    struct async_head_user *ahu);

/*
 * Per-request threadlets that a busy pool runs as a loop. Like
 * threadlet_exec(), @fn(@data) runs in the calling thread on @stack_top and
 * moves on to a cache-miss thread only if it blocks; but @fn simply
 * returns (it must not call complete_threadlet_fn()), and @event, which
 * must not be NULL, is what is posted when it went async. And when at
 * least TL_QUEUE_MIN submitted threadlets are blocked in cache-miss
 * threads, the call may queue @fn instead of running it (at most a third
 * as many as are blocked wait): the first of those threads to finish runs
 * it next, in place of parking while this thread starts it with a
 * hand-off. Returns
 *   1: @fn ran to completion here, nothing is posted;
 *   0: @fn went async or waits in the queue: @event is posted when it is
 *      done, from a cache-miss thread (identity rules as for threadlets);
 *  <0: -EINVAL (bad argument, or @ahu has no pool of async_head_init*()),
 *      -EBUSY (called in a threadlet or a cache-miss thread).
 * The top 48 bytes of the stack hold the request until the event is
 * posted. A queued @fn waits for a thread busy with an earlier
 * one: it is for work that ends (disk I/O, page faults), not for waits
 * that may last (a pipe, a socket). async_head_exit() runs every queued
 * @fn before it returns. TL_QUEUE_MIN in the environment (secure_getenv;
 * 0 turns queueing off, at most ASYNC_MAX_CACHEMISS) sets the threshold
 * for pools set up after it.
 */
#define TL_QUEUE_MIN		16
long threadlet_submit(long (*fn)(void *), void *data, void *event,
		      unsigned long stack_top, struct async_head_user *ahu);

/*
 * The library's private ABI for the inline fast path below; do not use
 * them directly. __threadlet_area is the calling thread's area (defined
 * in the library; initial-exec, as glibc's __rseq_offset users do), and
 * __threadlet_off_tls the vDSO's threadlet_off_tls() or the syscall form
 * of threadlet_off().
 */
typedef long (*__threadlet_off_tls_fn)(long tls_offset);
extern __thread struct threadlet_area __threadlet_area
	__attribute__((tls_model("initial-exec")));
extern __threadlet_off_tls_fn __threadlet_off_tls;
#ifdef __i386__
/*
 * i386: the vDSO's __vdso_threadlet_off_tls_regs (or the syscall form
 * behind the same registers): not a C function. The TLS offset in %eax,
 * the result in %eax, every other register preserved, any stack
 * alignment. Called from inline asm, so that the completion in a
 * threadlet's function costs neither pushes nor a callee-saved register
 * nor the stack alignment of a C call.
 */
typedef void (*__threadlet_regs_fn)(void);
extern __threadlet_regs_fn __threadlet_off_tls_regs;
#if defined(__has_attribute)
#if __has_attribute(noplt)
/* Called through the GOT: no %ebx that the PLT would need kept. */
__attribute__((noplt))
#endif
#endif
#endif
long __complete_threadlet_fn(void *event, struct async_head_user *ahu);

/*
 * The offset of this thread's area from the thread pointer: a constant,
 * which GCC folds into one load. On i386 it would fold into a "pushl
 * x@gotntpoff" that ld cannot relax in a static link: the empty asm keeps
 * it a movl into a register. Without the builtin the thread pointer is
 * read (the TCB's self pointer at %fs:0 or %gs:0).
 */
static inline long __threadlet_area_tls_offset(void)
{
#if defined(__has_builtin) && __has_builtin(__builtin_thread_pointer)
	long off = (char *)&__threadlet_area - (char *)__builtin_thread_pointer();

#ifdef __i386__
	__asm__("" : "+r" (off));	/* a movl x@gotntpoff, which ld relaxes */
#endif
	return off;
#else
	char *tp;

#ifdef __x86_64__
	__asm__("mov %%fs:0, %0" : "=r" (tp));
#else
	__asm__("mov %%gs:0, %0" : "=r" (tp));
#endif
	return (char *)&__threadlet_area - tp;
#endif
}

/*
 * The end of a threadlet function: returns 1 if it ran in place (nothing
 * is posted), and never returns in a cache-miss thread (@event is posted
 * into @ahu's ring and the thread parks); -EINVAL outside a threadlet.
 * Inline, so that the common case is the vDSO call and one test.
 *
 * The head may be handed off at any instruction before the flag is clear:
 * a signal handler or a page fault there may sleep. So the flag is tested
 * and cleared in one instruction, in the area of whoever runs it, found
 * from the thread pointer (a pointer computed before a hand-off would be
 * the new head's): 0 means this is now a cache-miss thread, or no
 * threadlet was on (the syscall form returns -EINVAL for an area the
 * kernel does not know, which a cache-miss thread may have unregistered).
 */
static inline long __threadlet_off_here(void)
{
#ifdef __i386__
	long ret = __threadlet_area_tls_offset();

	__asm__ __volatile__("call {*%1|%1}"
			     : "+a" (ret) : "m" (__threadlet_off_tls_regs)
			     : "cc", "memory");
#else
	long ret = __threadlet_off_tls(__threadlet_area_tls_offset());
#endif
	return ret;
}

static inline long complete_threadlet_fn(void *event,
					 struct async_head_user *ahu)
{
	long ret = __threadlet_off_here();

	if (__builtin_expect(ret > 0, 1))
		return ret;
	return __complete_threadlet_fn(event, ahu);
}

/*
 * Syslets: chains of system calls run in the kernel (see
 * include/uapi/linux/threadlet.h for struct syslet_uatom and SYSLET_*).
 * An atom's number is one of the calling process's own system calls:
 * x86-64 numbers in a 64-bit process, i386 numbers in a 32-bit one.
 *
 * async_exec() returns the final atom when the chain ran in place, NULL
 * when it went async (the final atom will be posted into ahu's ring unless
 * it has SYSLET_NO_COMPLETE), or an error value when it could not start
 * (threadlet_ptr_err(): -EINVAL, -EBUSY, -EFAULT, -ENOMEM).
 */
struct syslet_uatom *async_exec(struct syslet_uatom *atom,
				struct async_head_user *ahu);
/*
 * Adds @inc to *@uptr: 0 if the new value is zero, 1 if not (for loop
 * counters), -EFAULT for a bad pointer. The new value is *@uptr.
 */
int umem_add(unsigned long long *uptr, unsigned long long inc);

/*
 * Fills @a: run system call @nr with the @nargs arguments found at the
 * unsigned long long pointers that follow, store the result at @ret (may
 * be NULL), then go on with @next (NULL ends the chain). Returns 0, or
 * -EINVAL (@a is NULL or @nargs is over 6; @a is then left untouched).
 */
int syslet_atom_init(struct syslet_uatom *a, unsigned int nr,
		      unsigned int flags, long long *ret,
		      struct syslet_uatom *next, unsigned int nargs, ...);

static inline void syslet_link(struct syslet_uatom *a, struct syslet_uatom *next)
{
	a->next = (unsigned long)next;
}

/* After @a, the chain takes its next atom from @q (SYSLET_NEXT_QUEUE). */
static inline void syslet_link_queue(struct syslet_uatom *a, struct syslet_queue *q)
{
	a->flags |= SYSLET_NEXT_QUEUE;
	a->next = (unsigned long)q;
}


/* Introspection, for tests and tools. */

/*
 * A function of the vDSO the kernel mapped into this process, by name
 * (for example "__vdso_threadlet_off_tls"), or an error value
 * (threadlet_ptr_err(): -ENOENT if the vDSO has no function by that name,
 * -ENOSYS if the process has no vDSO or one this code cannot read, -EINVAL
 * for a NULL @name). For programs that call the vDSO's functions directly.
 */
void *threadlet_vdso_sym(const char *name);
struct threadlet_stats {
	unsigned long long nr_sync;		/* ran to completion in place */
	unsigned long long nr_handoffs;		/* went async */
	unsigned long long nr_fallbacks;	/* slept in place */
	unsigned int last_fallback;		/* enum threadlet_fallback */
};
/* Counters of the calling thread's threadlet area (its identity). */
void threadlet_stats(struct threadlet_stats *st);
/*
 * The name of fallback reason @reason (enum threadlet_fallback, such as
 * last_fallback): "none" for THREADLET_FB_NONE, else the name the
 * threadlet:threadlet_fallback tracepoint prints ("no_spare", ...). An
 * error value (threadlet_ptr_err(): -EINVAL) for a number that is not a
 * reason this library knows (one a newer kernel added).
 */
const char *threadlet_fallback_name(unsigned int reason);
/* Number of threads parked on @ahu right now, or -errno. */
long async_head_parked(struct async_head_user *ahu);
/* 1 if threadlet_on/off go through the vDSO, 0 if through system calls. */
int threadlet_uses_vdso(void);

#ifdef __cplusplus
}
#endif

#endif /* THREADLET_H */
