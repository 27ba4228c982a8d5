// SPDX-License-Identifier: GPL-2.0
/*
 * threadlet_on()/threadlet_off() without a system call.
 *
 * The area is the calling thread's registered struct threadlet_area; the
 * kernel pinned it, so these accesses never fault. Only the owning thread
 * calls these. The kernel writes flags only in that thread's own
 * schedule(), when a threadlet that is on sleeps: the hand-off clears
 * THREADLET_ON, and the thread goes on as a cache-miss thread with another
 * identity, including another thread pointer (TLS).
 *
 * Arming cannot race with that: nothing hands off before the flag is set,
 * which is done last, after the resume point it guards (barrier() keeps
 * the compiler to that order). Disarming can: a signal handler, or a page
 * fault, may sleep between any two instructions of the threadlet, so
 * threadlet_off() must test and clear the flag in one instruction (btr).
 * Even then a pointer to the area computed before a hand-off is stale
 * after it: it points at the area of the new head. threadlet_off_tls()
 * takes the area's offset from the thread pointer instead, so that the
 * one instruction also finds the area of whoever runs it.
 *
 * The syscall forms (kernel/async/area.c) have the same semantics.
 */
#include <linux/compiler.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <asm/asm.h>
#include <uapi/linux/errno.h>
#include <uapi/linux/threadlet.h>

#ifdef __x86_64__
#define TL_TP_SEG	"%%fs:"		/* the user thread pointer's segment */
#else
#define TL_TP_SEG	"%%gs:"
#endif

notrace long
__vdso_threadlet_on(struct threadlet_area *area, unsigned long head_ip,
		    unsigned long head_sp, void *ahu)
{
	if (area->flags & THREADLET_ON)
		return -EBUSY;
	area->head_ip = head_ip;
	area->head_sp = head_sp;
	area->ahu = (unsigned long)ahu;
	barrier();
	area->flags = THREADLET_ON;	/* a THREADLET_SIGNAL left is stale */
	return 0;
}

long threadlet_on(struct threadlet_area *area, unsigned long head_ip,
		  unsigned long head_sp, void *ahu)
	__weak __alias(__vdso_threadlet_on);

/*
 * Returns 1 if the threadlet ran in place, 0 if its head was handed off
 * (the kernel cleared the flag then) or none was on. Once the btr found
 * the flag set, nothing can hand off this thread any more: nr_sync is
 * still this thread's.
 */
notrace long
__vdso_threadlet_off(struct threadlet_area *area)
{
	bool on;

	asm volatile("btrl %[bit], %[flags]" CC_SET(c)
		     : CC_OUT(c) (on), [flags] "+m" (area->flags)
		     : [bit] "Ir" (0) : "memory");
	area->nr_sync += on;
	return on;
}

long threadlet_off(struct threadlet_area *area)
	__weak __alias(__vdso_threadlet_off);

/*
 * threadlet_off() of the area at @tls_offset from the thread pointer (the
 * %fs base on x86-64, %gs on i386): for an area that is a TLS variable,
 * @tls_offset is what its "initial-exec" access adds to the thread
 * pointer. Tests and clears the flag of whoever runs the btr, before or
 * after a hand-off.
 */
notrace long
__vdso_threadlet_off_tls(long tls_offset)
{
	bool on;

	asm volatile("btrl %[bit], " TL_TP_SEG "%c[flags](%[off])" CC_SET(c)
		     : CC_OUT(c) (on)
		     : [bit] "Ir" (0), [off] "r" (tls_offset),
		       [flags] "i" (offsetof(struct threadlet_area, flags))
		     : "memory");
#ifdef __x86_64__
	asm volatile("addq %[on], %%fs:%c[nr](%[off])"
		     : : [on] "r" ((unsigned long)on), [off] "r" (tls_offset),
		       [nr] "i" (offsetof(struct threadlet_area, nr_sync))
		     : "memory");
#else
	asm volatile("addl %[on], %%gs:%c[nr](%[off])\n\t"
		     "adcl $0, %%gs:%c[nr]+4(%[off])"
		     : : [on] "r" ((unsigned long)on), [off] "r" (tls_offset),
		       [nr] "i" (offsetof(struct threadlet_area, nr_sync))
		     : "memory", "cc");
#endif
	return on;
}

long threadlet_off_tls(long tls_offset)
	__weak __alias(__vdso_threadlet_off_tls);
