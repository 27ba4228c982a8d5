// SPDX-License-Identifier: GPL-2.0
/*
 * threadlet_on()/threadlet_off() without a system call.
 *
 * The area is the calling thread's registered struct threadlet_area; the
 * kernel pinned it, so these accesses never fault. Only the owning thread
 * calls these, and the kernel touches flags only in that thread's own
 * schedule() (the hand-off clears it while the thread sleeps), so plain
 * accesses in program order suffice: the flag is armed last, after the
 * resume point it guards (barrier() keeps the compiler to that order).
 * The syscall forms (kernel/async/area.c) have the same semantics.
 */
#include <linux/compiler.h>
#include <uapi/linux/errno.h>
#include <uapi/linux/threadlet.h>

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
	area->flags |= THREADLET_ON;
	return 0;
}

long threadlet_on(struct threadlet_area *area, unsigned long head_ip,
		  unsigned long head_sp, void *ahu)
	__weak __alias(__vdso_threadlet_on);

/*
 * Returns 1 if the threadlet ran in place, 0 if its head was handed off
 * (the kernel cleared the flag then). Branch-free: this is on the path of
 * every threadlet that completes in place.
 */
notrace long
__vdso_threadlet_off(struct threadlet_area *area)
{
	u32 on = READ_ONCE(area->flags) & THREADLET_ON;

	area->flags &= ~THREADLET_ON;
	area->nr_sync += on;
	return on;
}

long threadlet_off(struct threadlet_area *area)
	__weak __alias(__vdso_threadlet_off);
