// SPDX-License-Identifier: GPL-2.0
/*
 * threadlet_on()/threadlet_off() without a system call.
 *
 * The area is the calling thread's registered struct threadlet_area; the
 * kernel pinned it, so these stores never fault. Only the owning thread
 * calls these and only its own schedule() reads the area, so program order
 * is the only ordering needed: the flag is armed last and read first.
 * The syscall forms (kernel/async/area.c) have the same semantics.
 */
#include <linux/compiler.h>
#include <uapi/linux/errno.h>
#include <uapi/linux/threadlet.h>

notrace long
__vdso_threadlet_on(struct threadlet_area *area, unsigned long head_ip,
		    unsigned long head_sp, void *ahu)
{
	u32 flags = READ_ONCE(area->flags);

	if (flags & THREADLET_ON)
		return -EBUSY;
	area->head_ip = head_ip;
	area->head_sp = head_sp;
	area->ahu = (unsigned long)ahu;
	barrier();
	WRITE_ONCE(area->flags, flags | THREADLET_ON);
	return 0;
}

long threadlet_on(struct threadlet_area *area, unsigned long head_ip,
		  unsigned long head_sp, void *ahu)
	__weak __alias(__vdso_threadlet_on);

/* Returns 1 if the threadlet ran in place, 0 if its head was handed off. */
notrace long
__vdso_threadlet_off(struct threadlet_area *area)
{
	u32 flags = READ_ONCE(area->flags);

	WRITE_ONCE(area->flags, flags & ~THREADLET_ON);
	barrier();
	if (!(flags & THREADLET_ON))
		return 0;
	area->nr_sync++;
	return 1;
}

long threadlet_off(struct threadlet_area *area)
	__weak __alias(__vdso_threadlet_off);
