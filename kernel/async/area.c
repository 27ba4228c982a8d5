// SPDX-License-Identifier: GPL-2.0
/*
 * The per-thread threadlet area: registration, the syscall forms of
 * threadlet_on()/threadlet_off(), and its life across fork, exec and exit.
 *
 * The area is pinned (FOLL_LONGTERM) for as long as it is registered, so
 * that the scheduler hook can read and write it through the kernel mapping
 * without faulting; so it must be anonymous, shmem or hugetlb memory.
 * Everything the kernel reads from it is a user value that user space
 * could have passed in a syscall anyway.
 */
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include <trace/events/threadlet.h>

#include "internal.h"

/*
 * The pinned page counts against RLIMIT_MEMLOCK of the registering user,
 * as io_uring's registered buffers do (user->locked_vm, so no mmap_lock is
 * needed), unless the caller may lock memory at will. The pin holds the
 * whole folio (a huge page cannot be split, migrated or reclaimed while
 * a part of it is pinned), so the whole folio is charged: each area in
 * it pays for all of it, as an io_uring buffer does outside the buffer
 * table.
 */
static int threadlet_account_page(struct threadlet_reg *reg,
				  struct page *page)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long nr = folio_nr_pages(page_folio(page));
	struct user_struct *user;
	unsigned long cur;

	if (capable(CAP_IPC_LOCK))
		return 0;
	user = current_user();
	cur = atomic_long_read(&user->locked_vm);
	do {
		if (cur + nr > limit || cur + nr < cur)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, cur + nr));
	reg->user = get_uid(user);
	reg->nr_locked = nr;
	return 0;
}

static void threadlet_unaccount_page(struct threadlet_reg *reg)
{
	if (reg->user) {
		atomic_long_sub(reg->nr_locked, &reg->user->locked_vm);
		free_uid(reg->user);
	}
}

static void threadlet_reg_free(struct threadlet_reg *reg)
{
	async_grow_done(reg);
	if (reg->held_head)
		async_head_put(reg->held_head);
	if (reg->head)
		async_head_put(reg->head);
	if (reg->vmap)
		vunmap(reg->vmap);
	unpin_user_page(reg->page);
	threadlet_unaccount_page(reg);
	kfree(reg);
}

/*
 * A kernel address for the pinned area page that stays valid until the
 * registration ends, usable from the scheduler hook: the direct map, or,
 * for a highmem page (32-bit kernels), a mapping of its own (kmap()'s
 * few slots are meant for short uses).
 */
static void *threadlet_map_page(struct threadlet_reg *reg, struct page *page)
{
	if (!PageHighMem(page))
		return page_address(page);
	reg->vmap = vmap(&page, 1, VM_MAP, PAGE_KERNEL);
	return reg->vmap;
}

/*
 * The area must be anonymous, shmem or hugetlb memory, as io_uring's
 * registered buffers must: a page cache page of a file is written back by
 * its file system, which knows nothing of the kernel's stores through the
 * direct map (they never dirty the page, so writeback drops them), and a
 * long-term pin holds it against truncation and reclaim for as long as
 * the thread lives.
 */
static bool threadlet_page_ok(struct page *page)
{
	struct folio *folio = page_folio(page);
	struct address_space *mapping;

	if (folio_test_anon(folio) || folio_test_hugetlb(folio))
		return true;
	mapping = folio_mapping(folio);
	return mapping && shmem_mapping(mapping);
}

static int threadlet_reg_alloc(struct threadlet_area __user *uarea)
{
	struct threadlet_reg *reg;
	struct page *page;
	void *base;
	int ret;

	reg = kzalloc(sizeof(*reg), GFP_KERNEL_ACCOUNT);
	if (!reg)
		return -ENOMEM;
	ret = pin_user_pages_fast((unsigned long)uarea, 1,
				  FOLL_WRITE | FOLL_LONGTERM, &page);
	if (ret != 1) {
		kfree(reg);
		return ret < 0 ? ret : -EFAULT;
	}
	ret = -EOPNOTSUPP;
	if (!threadlet_page_ok(page))
		goto unpin;
	ret = threadlet_account_page(reg, page);
	if (ret)
		goto unpin;
	ret = -ENOMEM;
	base = threadlet_map_page(reg, page);
	if (!base)
		goto unaccount;
	reg->uarea = uarea;
	reg->page = page;
	reg->karea = base + offset_in_page(uarea);
	current->threadlet = reg;
	return 0;

unaccount:
	threadlet_unaccount_page(reg);
unpin:
	unpin_user_page(page);
	kfree(reg);
	return ret;
}

static int threadlet_unregister(struct threadlet_area __user *uarea)
{
	struct threadlet_reg *reg = current->threadlet;
	int pin, ret;

	if (!reg || reg->uarea != uarea)
		return -EINVAL;
	if (READ_ONCE(reg->karea->flags) & THREADLET_ON)
		return -EBUSY;
	/*
	 * The wait for ring space must not move @reg to another task: it is
	 * freed below, as this task's. Any thread can arm the area meanwhile.
	 */
	pin = threadlet_pin(THREADLET_FB_CALL);
	ret = async_post_held(reg, true);
	threadlet_unpin(pin);
	if (ret)
		return -ERESTARTNOINTR;
	current->threadlet = NULL;
	threadlet_reg_free(reg);
	return 0;
}

/*
 * Reserved fields must be zero and flags may hold only known bits when the
 * area is registered, so that they can be given a meaning later: an old
 * kernel then refuses a program that relies on one. (The area stays
 * writable by user space; what it writes there later is not read.)
 */
static int threadlet_area_check(struct threadlet_area __user *uarea)
{
	struct threadlet_area k;

	if (copy_from_user(&k, uarea, sizeof(k)))
		return -EFAULT;
	if (k.__reserved0 || memchr_inv(k.__reserved, 0, sizeof(k.__reserved)))
		return -EINVAL;
	if (k.flags & ~(THREADLET_ON | THREADLET_SIGNAL))
		return -EINVAL;
	return 0;
}

/*
 * threadlet_register - register (or, with THREADLET_UNREGISTER, drop) the
 * calling thread's threadlet area. One area per thread.
 */
SYSCALL_DEFINE3(threadlet_register, struct threadlet_area __user *, area,
		u32, len, u32, flags)
{
	int ret;

	if (flags & ~THREADLET_UNREGISTER)
		return -EINVAL;
	if (flags & THREADLET_UNREGISTER)
		return threadlet_unregister(area);
	if (len != sizeof(struct threadlet_area))
		return -EINVAL;
	if (!IS_ALIGNED((unsigned long)area, THREADLET_AREA_SIZE))
		return -EINVAL;
	if (!access_ok(area, len))
		return -EFAULT;
	if (current->threadlet)
		return -EBUSY;
	ret = threadlet_area_check(area);
	if (ret)
		return ret;
	return threadlet_reg_alloc(area);
}

/*
 * threadlet_on - the reference (slow) path of the vDSO's threadlet_on():
 * record where the head resumes and which async head serves it, then arm
 * the hand-off. Fails with -EBUSY if a threadlet is already on.
 */
SYSCALL_DEFINE3(threadlet_on, unsigned long, head_ip, unsigned long, head_sp,
		struct async_head_user __user *, ahu)
{
	struct threadlet_reg *reg = current->threadlet;
	struct threadlet_area *a;

	if (!reg)
		return -EINVAL;
	a = reg->karea;
	if (READ_ONCE(a->flags) & THREADLET_ON)
		return -EBUSY;
	WRITE_ONCE(a->head_ip, head_ip);
	WRITE_ONCE(a->head_sp, head_sp);
	WRITE_ONCE(a->ahu, (unsigned long)ahu);
	/*
	 * The hook runs in this task, after this store: program order
	 * suffices. A THREADLET_SIGNAL left by an earlier threadlet (its
	 * handler did not return to it) is stale: cleared.
	 */
	WRITE_ONCE(a->flags, THREADLET_ON);
	return 0;
}

/*
 * threadlet_off - disarm. Returns 1 if the threadlet was still on, that is,
 * it ran to completion in place; 0 if its head was handed off, in which
 * case the caller now runs as a cache-miss thread.
 */
SYSCALL_DEFINE0(threadlet_off)
{
	struct threadlet_reg *reg = current->threadlet;
	struct threadlet_area *a;
	u32 flags;

	if (!reg)
		return -EINVAL;
	a = reg->karea;
	flags = READ_ONCE(a->flags);
	WRITE_ONCE(a->flags, flags & ~THREADLET_ON);
	if (!(flags & THREADLET_ON))
		return 0;
	WRITE_ONCE(a->nr_sync, a->nr_sync + 1);
	trace_threadlet_sync(current);
	return 1;
}

/*
 * A signal handler is about to interrupt this task; @regs is the user
 * context it interrupts. If a threadlet is on, the handler does not run as
 * part of it: a hand-off inside the handler would give the head the
 * handler's signal mask (the handler's sigreturn would restore the real
 * one in the cache-miss thread) and leave the cache-miss thread to return
 * from a frame on a stack it no longer owns. So THREADLET_SIGNAL makes
 * every sleep fall back until the sigreturn that restores this context,
 * which is known by its stack pointer: a nested handler's sigreturn
 * restores the outer handler's, on another part of the stack (or on the
 * alternate stack). The outermost interruption is the one recorded.
 *
 * Runs in the task itself, before the handler's frame is written (which
 * may sleep), so it orders against the hook and the vDSO by program order.
 */
void __threadlet_signal_deliver(struct threadlet_reg *reg, struct pt_regs *regs)
{
	struct threadlet_area *a = reg->karea;
	u32 flags = READ_ONCE(a->flags);

	if ((flags & (THREADLET_ON | THREADLET_SIGNAL)) != THREADLET_ON)
		return;
	reg->sig_sp = user_stack_pointer(regs);
	WRITE_ONCE(a->flags, flags | THREADLET_SIGNAL);
}

/*
 * A sigreturn restored @regs. If it is the context the recorded handler
 * interrupted, the threadlet may hand off again. A handler that does not
 * return there (it changed the saved stack pointer, or longjmp()ed) leaves
 * the flag set: the rest of that threadlet runs in place, and the next
 * threadlet_on() clears it. Either way no hand-off happens while a handler
 * frame of the threadlet may still be live, which is what matters.
 */
void __threadlet_sigreturn(struct threadlet_reg *reg, struct pt_regs *regs)
{
	struct threadlet_area *a = reg->karea;
	u32 flags = READ_ONCE(a->flags);

	if ((flags & THREADLET_SIGNAL) && user_stack_pointer(regs) == reg->sig_sp)
		WRITE_ONCE(a->flags, flags & ~THREADLET_SIGNAL);
}

/*
 * Runs in do_exit() before exit_mm(): a held completion can still be
 * posted, if a slot is free. It does not wait: nothing would end the wait
 * (the exit's SIGKILL is taken), and the poster that holds post_lock may be
 * another exiting thread waiting for the same ring.
 */
void threadlet_exit(struct task_struct *tsk)
{
	struct threadlet_reg *reg = tsk->threadlet;

	if (reg) {
		async_post_held(reg, false);
		tsk->threadlet = NULL;
		threadlet_reg_free(reg);
	}
}

/*
 * The area, and the ring of any held completion, live in the old mm: a new
 * program must register its own, and the completion is lost with the ring.
 * Called by begin_new_exec() right after exec_mmap(), so that an exec that
 * fails after that point exits with no area: threadlet_exit() never posts
 * into the new program's memory.
 */
void threadlet_execve(struct task_struct *tsk)
{
	struct threadlet_reg *reg = tsk->threadlet;

	if (reg) {
		tsk->threadlet = NULL;
		threadlet_reg_free(reg);
	}
}
