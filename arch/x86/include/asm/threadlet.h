/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _ASM_X86_THREADLET_H
#define _ASM_X86_THREADLET_H

/*
 * What the threadlet core (kernel/async/) needs from the architecture to
 * move a head between two tasks. See arch/x86/kernel/threadlet.c.
 */

#include <asm/desc_defs.h>
#include <asm/segment.h>

struct pt_regs;
struct task_struct;

/*
 * The user TLS that travels with an identity. 64-bit code: the FS and GS
 * bases (the selectors are zero, the GDT TLS entries the same in head and
 * spare). 32-bit code: the set_thread_area() entries and the FS and GS
 * selectors that point into them (compat).
 */
struct threadlet_tls {
	unsigned long fsbase;
	unsigned long gsbase;
	struct desc_struct tls_array[GDT_ENTRY_TLS_ENTRIES];
	unsigned short fsindex;
	unsigned short gsindex;
	bool compat;
};

int arch_threadlet_check(struct task_struct *head, struct task_struct *spare);
void arch_threadlet_park(void);
void arch_threadlet_move_leader(struct task_struct *old,
				struct task_struct *new);
void arch_threadlet_swap_tls(struct task_struct *head,
			     struct task_struct *spare,
			     struct threadlet_tls *head_tls);
void arch_threadlet_resume(struct pt_regs *regs, unsigned long ip,
			   unsigned long sp, const struct threadlet_tls *tls);
void arch_threadlet_set_frame(struct pt_regs *regs, unsigned long ip,
			      unsigned long sp);

#endif /* _ASM_X86_THREADLET_H */
