/* SPDX-License-Identifier: GPL-2.0 */
/*
 * threadlet_on() and threadlet_off_tls() with the arguments in registers,
 * for the i386 trampoline of a threadlet library: every 32-bit threadlet
 * calls both, and the cdecl forms (vthreadlet.c) cost pushes, stack
 * loads and the stack alignment of the caller. Like __kernel_vsyscall,
 * these are not C functions. They preserve every register but their
 * result (and the flags). The area is the caller's registered struct threadlet_area
 * at a TLS offset from the %gs base, as for threadlet_off_tls().
 *
 * __vdso_threadlet_on_regs: %ebp = the area's TLS offset, %ecx = head_ip,
 * %ebx = head_sp, %edx = ahu. threadlet_on(), with its result in the
 * carry flag: clear when armed, set when a threadlet was on already
 * (-EBUSY); every register is preserved, %eax too. A caller that knows
 * no threadlet is on (it tested the area) has nothing to load or test.
 * Only the low halves of the 64-bit fields are stored:
 * their high halves stay 0 in a 32-bit task's area, which nothing but
 * that task writes (a task that writes them gets a frame or head that is
 * not its own, and a fallback, never a hand-off to it).
 *
 * __vdso_threadlet_off_tls_regs: %eax = the area's TLS offset.
 * threadlet_off_tls(): %eax = 1 if a threadlet was on (it is off now,
 * and counted in nr_sync), else 0. The flag is tested and cleared by one
 * btr, in the area of whoever runs it (see vthreadlet.c).
 *
 * The offsets are checked against the uapi header in vthreadlet.c.
 */
#include <linux/linkage.h>
#include <asm/dwarf2.h>
#include "threadlet_regs.h"

	.text
	.globl	__vdso_threadlet_on_regs
	.type	__vdso_threadlet_on_regs, @function
	ALIGN
__vdso_threadlet_on_regs:
	CFI_STARTPROC
	testb	$TL_AREA_ON, %gs:TL_AREA_FLAGS(%ebp)	/* clears CF */
	jnz	1f
	movl	%ecx, %gs:TL_AREA_HEAD_IP(%ebp)
	movl	%ebx, %gs:TL_AREA_HEAD_SP(%ebp)
	movl	%edx, %gs:TL_AREA_AHU(%ebp)
	/* Last: nothing hands off before the resume frame is in place. */
	movl	$TL_AREA_ON, %gs:TL_AREA_FLAGS(%ebp)
	ret
1:	stc
	ret
	CFI_ENDPROC
	.size	__vdso_threadlet_on_regs, . - __vdso_threadlet_on_regs

	.globl	__vdso_threadlet_off_tls_regs
	.type	__vdso_threadlet_off_tls_regs, @function
	ALIGN
__vdso_threadlet_off_tls_regs:
	CFI_STARTPROC
	btrl	$0, %gs:TL_AREA_FLAGS(%eax)
	jnc	1f
	addl	$1, %gs:TL_AREA_NR_SYNC(%eax)
	adcl	$0, %gs:TL_AREA_NR_SYNC+4(%eax)
	movl	$1, %eax
	ret
1:	xorl	%eax, %eax
	ret
	CFI_ENDPROC
	.size	__vdso_threadlet_off_tls_regs, . - __vdso_threadlet_off_tls_regs
