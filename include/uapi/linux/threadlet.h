/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef _UAPI_LINUX_THREADLET_H
#define _UAPI_LINUX_THREADLET_H

/*
 * Threadlets: user functions that run synchronously in the calling thread
 * and move the caller (the "head") to a parked cache-miss thread only if
 * they block in the kernel.
 *
 * Reserved fields must be zero and flags fields may hold only the bits
 * defined here when a structure is handed to the kernel (-EINVAL
 * otherwise), so that they can be given a meaning later.
 *
 * Every structure here has fixed-size fields, so that 32-bit and 64-bit
 * processes share one layout and the compat entry points need no
 * translation. Pointers travel as __u64; on a 32-bit kernel an address
 * that does not fit in a pointer is -EFAULT, never truncated.
 */

#include <linux/types.h>

/*
 * Per-thread area shared with the kernel, registered once per thread with
 * threadlet_register(). The kernel pins the page that holds it, so that
 * schedule() can read it without faulting. It must be aligned to its size,
 * which keeps it inside one page.
 *
 * User space writes flags, head_ip, head_sp, ahu, home_ip and home_sp
 * (normally through the vDSO's threadlet_on()/threadlet_off()). The kernel
 * treats all of them as untrusted user values. The counters are written by
 * the kernel (or its vDSO) only.
 */
struct threadlet_area {
	__u32 flags;		/* THREADLET_ON while a threadlet runs */
	__u32 lib_flags;	/* owned by the user library, never read by the kernel */
	__u64 head_ip;		/* where the head resumes after a hand-off ... */
	__u64 head_sp;		/* ... and on which stack */
	__u64 ahu;		/* struct async_head_user whose pool serves it */
	__u64 home_ip;		/* where this thread resumes when its pool ends */
	__u64 home_sp;
	__u64 nr_handoffs;	/* kernel: hand-offs of this thread's head */
	__u64 nr_fallbacks;	/* kernel: sleeps that could not hand off */
	__u64 nr_sync;		/* vDSO/kernel: threadlets that completed in place */
	__u32 last_fallback;	/* kernel: enum threadlet_fallback of the last one */
	__u32 __reserved0;	/* reserved: 0 when registered, or -EINVAL */
	__u64 __reserved[6];	/* the same */
} __attribute__((aligned(128)));

#define THREADLET_AREA_SIZE	128

/* threadlet_area.flags */
#define THREADLET_ON		(1U << 0)
/*
 * Kernel: a signal handler interrupted the threadlet and has not returned
 * to it yet. While it is set, a sleep does not hand the head off (it falls
 * back, THREADLET_FB_SIGNALS): the handler is not part of the threadlet.
 * Cleared by the sigreturn to the interrupted context, or by the next
 * threadlet_on().
 */
#define THREADLET_SIGNAL	(1U << 1)

/* threadlet_register() flags */
#define THREADLET_UNREGISTER	(1U << 0)

/*
 * Why a sleeping threadlet did not hand off its head (last_fallback):
 * X(NAME, "name", "what it covers") for each THREADLET_FB_<NAME>, in the
 * order of their values (the ABI: a new reason goes at the end). This list
 * is the only one: the enum below, the threadlet_fallback tracepoint's names
 * and libthreadlet's threadlet_fallback_name() are made from it, and
 * scripts/fallback-check.sh checks the docs and man pages against it. The
 * full list of what each reason covers is in docs/threadlets.md.
 * (__THREADLET_FB_LIST() only makes the list one expression to checkpatch.pl.)
 */
#define __THREADLET_FALLBACKS(X) __THREADLET_FB_LIST(			\
	X(NO_SPARE,	"no_spare",	"no parked cache-miss thread")	\
	X(NO_HEAD,	"no_head",	"ahu is not a registered async head") \
	X(PTRACE,	"ptrace",	"head or spare is ptraced")	\
	X(RT,		"rt",		"RT/deadline scheduling policy") \
	X(PI,		"pi",		"owns or waits on a PI futex/rt_mutex") \
	X(COMPAT,	"compat",	"head, spare differ: 32/64-bit") \
	X(SIGNALS,	"signals",	"a signal wait, or a temporary signal mask") \
	X(CREDS,	"creds",	"creds, seccomp, no_new_privs, audit ids") \
	X(ARCH,		"arch",		"TLS selectors, I/O bitmap, PKRU, ...") \
	X(BAD_FRAME,	"bad_frame",	"head_ip/head_sp not user addresses") \
	X(EXITING,	"exiting",	"exit, exec or a group stop under way") \
	X(FS,		"fs",		"head and spare differ in root, cwd, umask") \
	X(FILES,	"files",	"... in their file descriptor table") \
	X(NAMESPACES,	"namespaces",	"... in namespaces or cgroup")	\
	X(SCHED,	"sched",	"... in policy, nice, affinity, ioprio") \
	X(TASK,		"task",		"... prctl flags, CPU timers, rseq cs, ...") \
	X(PARKED,	"parked",	"a parked cache-miss thread's own sleep") \
	X(CALL,		"call",		"a wait inside a threadlet system call"))
#define __THREADLET_FB_LIST(...)	__VA_ARGS__

#define __THREADLET_FB_ENUM(name, str, desc)	THREADLET_FB_##name,
enum threadlet_fallback {
	THREADLET_FB_NONE = 0,
	__THREADLET_FALLBACKS(__THREADLET_FB_ENUM)
	THREADLET_FB_NR,
};

#undef __THREADLET_FB_ENUM

/*
 * The async head: one completion ring and one pool of parked cache-miss
 * threads. Registered with async_register(); its address is its name in
 * every later call.
 *
 * Ring protocol. completion_ring points to ring_size_bytes / 8 __u64 slots
 * (a power of two). kernel_ring_idx and user_ring_idx count completions
 * since registration and never wrap back; slot = idx & (entries - 1).
 * The kernel writes a non-zero event into an empty (zero) slot, then
 * advances kernel_ring_idx (release). User space reads the index (acquire),
 * reads the slot, writes zero back, then advances user_ring_idx. A completer
 * that finds its slot still full sets ASYNC_HEAD_RING_WAITERS and waits;
 * user space that sees the flag after consuming calls async_wait() with
 * min_wait_events == 0 to let it go on. Events are never dropped.
 *
 * Elastic pools. With low_watermark set, a hand-off that leaves fewer
 * threads parked than that sends one more parked thread home with
 * ASYNC_GROW (or, if none is left, the next thread that comes to park), to
 * start more threads and park again; one at a time. With idle_timeout_ms
 * set, a thread parked that long without being claimed goes home with
 * -ETIMEDOUT, to end if the pool has more threads than it needs. Both are
 * read at registration; 0 turns them off.
 */
struct async_head_user {
	__u64 kernel_ring_idx;
	__u64 user_ring_idx;
	__u64 completion_ring;
	__u64 ring_size_bytes;
	__u64 max_cachemiss_threads;
	__u32 flags;		/* ASYNC_HEAD_* set by the kernel */
	__u32 low_watermark;	/* <= max_cachemiss_threads */
	__u64 idle_timeout_ms;	/* <= ASYNC_MAX_IDLE_MS */
	__u64 __reserved;	/* reserved: 0 when registered, or -EINVAL */
};

/*
 * What async_thread() returns at a home frame besides 0 (the head was
 * unregistered), -EINTR (a signal) and -ETIMEDOUT (idle_timeout_ms).
 */
#define ASYNC_GROW		1	/* the pool is short of parked threads */

/* async_head_user.flags */
#define ASYNC_HEAD_RING_WAITERS	(1U << 0)

/* async_register() flags */
#define ASYNC_UNREGISTER	(1U << 0)	/* end the head, send its pool home */
#define ASYNC_QUERY_PARKED	(1U << 1)	/* return how many threads are parked */

/* Limits */
#define ASYNC_RING_MAX_ENTRIES	(1U << 16)
#define ASYNC_MAX_CACHEMISS	1024
#define ASYNC_MAX_HEADS		256	/* per process; more: EMFILE */
#define ASYNC_MAX_IDLE_MS	3600000	/* idle_timeout_ms: one hour */

/*
 * Syslets: a chain of system calls ("atoms") that async_exec() runs in the
 * kernel. Arguments are passed by pointer, so atoms can share variables
 * (one atom's ret_ptr can be the next one's argument); argument fetching
 * stops at the first zero arg_ptr.
 *
 * After an atom ran, its result goes to *ret_ptr (if set). The chain then
 * follows next, unless a SYSLET_STOP_ON_* condition holds for the result:
 * then it stops there or, with SYSLET_SKIP_TO_NEXT_ON_STOP, continues with
 * the atom that follows this one in memory (atom + 1). The atom at which
 * the chain ends is its final atom: async_exec() returns it, or, when the
 * chain went async, posts it into the completion ring.
 *
 * With SYSLET_NEXT_QUEUE, next points to a struct syslet_queue instead,
 * and the chain goes on with the atom it takes from there: the address in
 * entries[head], head advanced by one. A take is atomic against the other
 * chains taking from the same queue, so chains started on one queue share
 * its atoms as a thread pool shares requests, each atom run once. A chain
 * that finds head >= nr (or takes a zero entry) ends there. User space may
 * queue more atoms while chains run: write the entries, then raise nr.
 * The kernel writes head only. A queue not aligned to 4 bytes ends the
 * chain with -EINVAL in the taking atom's result.
 */
struct syslet_uatom {
	__u32 flags;
	__u32 nr;		/* x86-64 system call number */
	__u64 ret_ptr;		/* __s64 *: where the result is stored */
	__u64 next;		/* struct syslet_uatom *: next atom, 0 ends */
	__u64 arg_ptr[6];	/* __u64 *: pointers to the arguments */
	__u64 user_data;	/* for user space, never read by the kernel */
};

struct syslet_queue {
	__u32 head;		/* next entry to take; advanced by the kernel */
	__u32 nr;		/* entries[0..nr) are queued */
	__u64 entries;		/* __u64 *: atom addresses */
};

#define SYSLET_ASYNC			(1U << 0)	/* go async at once */
#define SYSLET_SYNC			(1U << 1)	/* never go async here */
#define SYSLET_NO_COMPLETE		(1U << 2)	/* do not post if final */
#define SYSLET_STOP_ON_NONZERO		(1U << 3)
#define SYSLET_STOP_ON_ZERO		(1U << 4)
#define SYSLET_STOP_ON_NEGATIVE		(1U << 5)
#define SYSLET_STOP_ON_NON_POSITIVE	(1U << 6)
#define SYSLET_SKIP_TO_NEXT_ON_STOP	(1U << 7)
#define SYSLET_NEXT_QUEUE		(1U << 8)	/* next: a syslet_queue */
#define SYSLET_STOP_MASK	(SYSLET_STOP_ON_NONZERO | SYSLET_STOP_ON_ZERO | \
				 SYSLET_STOP_ON_NEGATIVE | SYSLET_STOP_ON_NON_POSITIVE)
#define SYSLET_ALL_FLAGS	(SYSLET_ASYNC | SYSLET_SYNC | SYSLET_NO_COMPLETE | \
				 SYSLET_STOP_MASK | SYSLET_SKIP_TO_NEXT_ON_STOP | \
				 SYSLET_NEXT_QUEUE)

#endif /* _UAPI_LINUX_THREADLET_H */
