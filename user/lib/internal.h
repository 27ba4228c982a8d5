/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
#ifndef TL_INTERNAL_H
#define TL_INTERNAL_H

#include <errno.h>
#include <threadlet.h>
#include <unwind.h>

#define TL_HIDDEN __attribute__((visibility("hidden")))

/*
 * threadlet_area.lib_flags. TL_LIB_UNREGISTERED: the kernel does not know
 * this area (yet); every thread starts so. TL_LIB_CACHEMISS: this identity
 * is a pool (cache-miss) thread. TL_LIB_FORKED_CM: the fork child's copy of
 * a pool thread, which has no head to go back to or pool to park in.
 */
#define TL_LIB_UNREGISTERED	(1U << 0)
#define TL_LIB_CACHEMISS	(1U << 1)
#define TL_LIB_FORKED_CM	(1U << 2)

/*
 * No function of the library changes errno (threadlet.h): one that calls
 * something that may (syscall(3), malloc, mmap) starts with TL_KEEP_ERRNO,
 * which puts errno back when the function returns, after its return value
 * (which may read errno) is computed.
 */
static inline void tl_errno_restore(const int *saved)
{
	errno = *saved;
}

#define TL_KEEP_ERRNO \
	const int tl_saved_errno __attribute__((cleanup(tl_errno_restore))) = errno

typedef long (*tl_on_fn)(struct threadlet_area *, unsigned long,
			 unsigned long, void *);


TL_HIDDEN extern tl_on_fn tl_on;

/* The syscall forms of threadlet_on() and threadlet_off_tls(). */
TL_HIDDEN long tl_syscall_on(struct threadlet_area *area, unsigned long ip,
			     unsigned long sp, void *ahu);
TL_HIDDEN long tl_syscall_off_tls(long tls_offset);

/*
 * switch_<arch>.asm. On i386 tl_switch_run() finds the area itself, at
 * tl_area_tpoff from the thread pointer (nasm has no PIC initial-exec TLS
 * access for i386), and calls threadlet_on() through tl_on_regs.
 */
#ifdef __i386__
TL_HIDDEN extern long tl_area_tpoff;
/* The vDSO's __vdso_threadlet_on_regs, or tl_syscall_on_regs. */
TL_HIDDEN extern void *tl_on_regs;
/* Not C functions: registers as the vDSO's *_regs forms. */
TL_HIDDEN void tl_syscall_on_regs(void);
TL_HIDDEN void tl_syscall_off_regs(void);
TL_HIDDEN long tl_switch_run(long (*fn)(void *), void *data,
			     unsigned long stack_top,
			     struct async_head_user *ahu);
#else
TL_HIDDEN long tl_switch_run(long (*fn)(void *), void *data,
			     unsigned long stack_top,
			     struct async_head_user *ahu,
			     struct threadlet_area *area);
#endif
TL_HIDDEN long tl_park_home(struct threadlet_area *area,
			    struct async_head_user *ahu);
TL_HIDDEN void tl_go_home(struct threadlet_area *area, long ret)
	__attribute__((noreturn));

/*
 * threadlet_submit(): a cache-miss thread moves to the stack of the queued
 * job it runs next (switch_<arch>.asm), then calls tl_job_next() there.
 */
struct tl_job;
TL_HIDDEN void tl_job_switch(struct tl_job *job, void *event,
			     struct async_head_user *ahu)
	__attribute__((noreturn));
TL_HIDDEN void tl_job_next(struct tl_job *job, void *event,
			   struct async_head_user *ahu)
	__attribute__((noreturn));

/* threadlet.c, called from switch_x86_64.asm */
TL_HIDDEN long tl_exec_slow(long (*fn)(void *), void *data,
			    unsigned long stack_top,
			    struct async_head_user *ahu);
TL_HIDDEN void tl_fn_returned_slow(void *data);
TL_HIDDEN void tl_resumed(void);

/* threadlet.c, named in the trampolines' unwind information (cfi.inc) */
TL_HIDDEN _Unwind_Reason_Code tl_personality(int version, _Unwind_Action actions,
					     _Unwind_Exception_Class cls,
					     struct _Unwind_Exception *ue,
					     struct _Unwind_Context *ctx);

#endif /* TL_INTERNAL_H */
