// SPDX-License-Identifier: GPL-2.0
/*
 * x86 part of the threadlet hand-off (x86-64, with or without 32-bit
 * programs, and i386): the user TLS and the frame at which the new head
 * returns to user space.
 *
 * The TLS is per identity: the head keeps its FS/GS base (64-bit code) or
 * its set_thread_area() entries and the FS/GS selectors that use them
 * (32-bit code), so errno, pthread_self() and every __thread variable stay
 * the head's. The sleeping task (current, in the scheduler hook) switches
 * its own right away; the kernel does not use FS, and its GS is swapped on
 * entry. The woken task loads the head's itself, in process context,
 * because its thread_struct would be overwritten when it was last switched
 * out.
 */
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <asm/desc.h>
#include <asm/fpu/xstate.h>
#include <asm/fsgsbase.h>
#include <asm/pkru.h>
#include <asm/threadlet.h>
#include <uapi/linux/threadlet.h>

/* A GDT descriptor as one word, to compare without a memcmp() call. */
static inline u64 threadlet_desc(const struct desc_struct *d)
{
	u64 v;

	BUILD_BUG_ON(sizeof(*d) != sizeof(v));
	memcpy(&v, d, sizeof(v));
	return v;
}

/*
 * Whether @a and @b have the same set_thread_area() entries: one test of
 * the words' differences, which the compiler unrolls, not a branch each.
 */
static inline bool threadlet_tls_equal(struct task_struct *a,
				       struct task_struct *b)
{
	u64 diff = 0;
	int i;

	for (i = 0; i < GDT_ENTRY_TLS_ENTRIES; i++)
		diff |= threadlet_desc(&a->thread.tls_array[i]) ^
			threadlet_desc(&b->thread.tls_array[i]);
	return !diff;
}

/*
 * Per-thread modes that user space sets with prctl()/arch_prctl(): CPUID
 * faulting (ARCH_SET_CPUID), RDTSC faulting (PR_SET_TSC), L1D flushing
 * (PR_SET_SPECULATION_CTRL).
 */
#define THREADLET_TIF_COMPARE	(_TIF_NOCPUID | _TIF_NOTSC | _TIF_SPEC_L1D_FLUSH)

/*
 * Where each kernel keeps a task's user segment state. x86-64: the
 * selectors and bases in thread_struct, saved from the registers by the
 * context switch (and by current_save_fsgs()). i386: DS, ES and FS in the
 * entry frame, GS live in the register and saved in thread.gs by the
 * context switch.
 */
#ifdef CONFIG_X86_64
/* The user code segment a task entered the kernel from: 64- or 32-bit. */
static inline bool threadlet_user32(struct task_struct *t)
{
	return task_pt_regs(t)->cs == __USER32_CS;
}

/* Saves current's live selectors and bases into its thread_struct. */
static void threadlet_save_segs(void)
{
	current_save_fsgs();
	savesegment(ds, current->thread.ds);
	savesegment(es, current->thread.es);
}

static inline u16 threadlet_ds(struct task_struct *t) { return t->thread.ds; }
static inline u16 threadlet_es(struct task_struct *t) { return t->thread.es; }
static inline u16 threadlet_fs(struct task_struct *t) { return t->thread.fsindex; }
static inline u16 threadlet_gs(struct task_struct *t) { return t->thread.gsindex; }

/* A selector of one of the GDT's TLS entries. */
static inline bool threadlet_tls_sel(u16 sel)
{
	return !(sel & SEGMENT_TI_MASK) &&
	       (sel >> 3) >= GDT_ENTRY_TLS_MIN && (sel >> 3) <= GDT_ENTRY_TLS_MAX;
}
#else
static inline bool threadlet_user32(struct task_struct *t)
{
	return true;
}

static void threadlet_save_segs(void)
{
	savesegment(gs, current->thread.gs);
}

static inline u16 threadlet_ds(struct task_struct *t) { return task_pt_regs(t)->ds; }
static inline u16 threadlet_es(struct task_struct *t) { return task_pt_regs(t)->es; }
static inline u16 threadlet_fs(struct task_struct *t) { return task_pt_regs(t)->fs; }
static inline u16 threadlet_gs(struct task_struct *t) { return t->thread.gs; }
#endif

/*
 * Arch state that stops a hand-off between @head (current) and @spare:
 * what user space can see of its thread and the hand-off does not move.
 * The TLS moves (below); the I/O permissions, CPUID faulting and PKRU must
 * be the same in both.
 *
 * The spare returns to user space through its own entry frame, with its
 * own code segment, at the head's resume point: both must run code of the
 * same width (a 64-bit process that runs some 32-bit code, or the other
 * way round, falls back with THREADLET_FB_COMPAT). How each entered the
 * kernel does not matter: a 32-bit spare parked with int $0x80 returns
 * through IRET wherever the head entered (int $0x80, the vDSO's SYSENTER
 * or SYSCALL, a page fault), as a signal return does; so does a 64-bit
 * spare that parked in an int $0x80 call (the end of a chain of i386
 * calls that 64-bit code started), whose compat mark
 * arch_threadlet_resume() clears.
 */
int arch_threadlet_check(struct task_struct *head, struct task_struct *spare)
{
	struct pt_regs *regs = task_pt_regs(spare);
	bool compat = threadlet_user32(head);
	unsigned long hflags = read_task_thread_flags(head);
	unsigned long sflags = read_task_thread_flags(spare);

	if (compat != threadlet_user32(spare) ||
	    ((hflags ^ sflags) & _TIF_ADDR32) ||
	    (!compat && regs->cs != __USER_CS) || regs->ss != __USER_DS)
		return THREADLET_FB_COMPAT;
	if (((hflags | sflags) & _TIF_IO_BITMAP) ||
	    head->thread.iopl_emul != spare->thread.iopl_emul ||
	    ((hflags ^ sflags) & THREADLET_TIF_COMPARE))
		return THREADLET_FB_ARCH;
	/*
	 * set_thread_area() entries: 32-bit TLS, moved below; in 64-bit code
	 * they are the same in both (get_thread_area() reads them back).
	 */
	if (!compat && !threadlet_tls_equal(head, spare))
		return THREADLET_FB_ARCH;
#ifdef CONFIG_X86_CPU_RESCTRL
	/* The resctrl group (/sys/fs/resctrl/.../tasks) is per task. */
	if (READ_ONCE(head->closid) != READ_ONCE(spare->closid) ||
	    READ_ONCE(head->rmid) != READ_ONCE(spare->rmid))
		return THREADLET_FB_ARCH;
#endif
#ifdef CONFIG_X86_64
	/*
	 * The dynamic features (AMX) each task has enabled: a signal frame
	 * restored by the other task (a threadlet started in a handler) is
	 * cut to the features of the task that restores it. A task enables
	 * one only after the process has the permission, which is never
	 * taken back; without it, all tasks have the same features.
	 */
	if (unlikely(READ_ONCE(head->group_leader->thread.fpu.perm.__state_perm) &
		     XFEATURE_MASK_USER_DYNAMIC) &&
	    head->thread.fpu.fpstate->user_xfeatures !=
	    spare->thread.fpu.fpstate->user_xfeatures)
		return THREADLET_FB_ARCH;
#endif
#ifdef CONFIG_X86_INTEL_MEMORY_PROTECTION_KEYS
	/* current's PKRU is live in the register, a sleeper's in thread. */
	if (cpu_feature_enabled(X86_FEATURE_OSPKE) &&
	    read_pkru() != spare->thread.pkru)
		return THREADLET_FB_ARCH;
#endif
	threadlet_save_segs();
	/*
	 * DS and ES do not move: 64-bit code leaves them zero, 32-bit code
	 * at __USER_DS. In 64-bit code the FS and GS selectors are zero and
	 * the bases move; 32-bit code moves the selectors with the entries.
	 */
	if ((!compat && (threadlet_fs(head) || threadlet_gs(head) ||
			 threadlet_fs(spare) || threadlet_gs(spare))) ||
	    threadlet_ds(head) != threadlet_ds(spare) ||
	    threadlet_es(head) != threadlet_es(spare))
		return THREADLET_FB_ARCH;
	return 0;
}

/*
 * Loads 32-bit TLS @tls into current: the GDT TLS entries of this CPU,
 * then the FS and GS selectors, which take their bases from them (as
 * set_thread_area() refreshes a selector in use). A null selector keeps
 * the base it had, which the identity carries too. Preemption is off from
 * the GDT load to the selector loads: a context switch in between would
 * load the entries of whoever runs next.
 */
static void threadlet_load_tls32(const struct threadlet_tls *tls)
{
	struct thread_struct *t = &current->thread;
	unsigned short __maybe_unused sel;

	preempt_disable();
	memcpy(t->tls_array, tls->tls_array, sizeof(t->tls_array));
	load_TLS(t, smp_processor_id());
#ifdef CONFIG_X86_64
	/*
	 * DS and ES (the same selectors in both, arch_threadlet_check()) are
	 * live too and keep the base of the entry they loaded: reload one
	 * that selects a TLS entry, as set_thread_area() does. The i386
	 * exit to user space loads them from the frame.
	 */
	savesegment(ds, sel);
	if (threadlet_tls_sel(sel))
		loadsegment(ds, sel);
	savesegment(es, sel);
	if (threadlet_tls_sel(sel))
		loadsegment(es, sel);
	t->fsindex = tls->fsindex;
	t->gsindex = tls->gsindex;
	loadsegment(fs, tls->fsindex);
	if (!tls->fsindex)
		x86_fsbase_write_cpu(tls->fsbase);
	load_gs_index(tls->gsindex);
	if (!tls->gsindex)
		x86_gsbase_write_cpu_inactive(tls->gsbase);
	t->fsbase = tls->fsbase;
	t->gsbase = tls->gsbase;
#else
	/* The exit to user space loads FS from the frame; GS is live. */
	task_pt_regs(current)->fs = tls->fsindex;
	t->gs = tls->gsindex;
	loadsegment(gs, tls->gsindex);
#endif
	preempt_enable();
}

/* @t's user TLS, as threadlet_save_segs() or the park saved it. */
static void threadlet_save_tls(struct task_struct *t,
			       struct threadlet_tls *tls, bool compat)
{
#ifdef CONFIG_X86_64
	tls->fsbase = t->thread.fsbase;
	tls->gsbase = t->thread.gsbase;
#endif
	tls->compat = compat;
	if (compat) {
		memcpy(tls->tls_array, t->thread.tls_array,
		       sizeof(tls->tls_array));
		tls->fsindex = threadlet_fs(t);
		tls->gsindex = threadlet_gs(t);
	}
}

/*
 * A thread about to park saves what a claimer reads from its
 * thread_struct: the TLS bases and selectors, which the context switch
 * saves only when it switches out (a claim may come first), and PKRU.
 */
void arch_threadlet_park(void)
{
	threadlet_save_segs();
#ifdef CONFIG_X86_INTEL_MEMORY_PROTECTION_KEYS
	if (cpu_feature_enabled(X86_FEATURE_OSPKE))
		current->thread.pkru = read_pkru();
#endif
}

/*
 * The process's permission for dynamic FPU features (AMX) is kept in the
 * group leader's task: it follows leadership. Caller holds siglock, which
 * guards it (xstate_request_perm()).
 */
void arch_threadlet_move_leader(struct task_struct *old,
				struct task_struct *new)
{
#ifdef CONFIG_X86_64
	new->thread.fpu.perm = old->thread.fpu.perm;
	new->thread.fpu.guest_perm = old->thread.fpu.guest_perm;
#endif
}

#ifdef CONFIG_X86_64
/*
 * Sets current's 64-bit FS base: what ARCH_SET_FS does, without its
 * checks and selector load. The base is one the kernel already ran user
 * code with, and arch_threadlet_check() found both FS selectors null. A
 * context switch saves the live base: with preemption off, the register
 * and thread.fsbase agree whenever it looks.
 */
static __always_inline void threadlet_set_fsbase(unsigned long base)
{
	preempt_disable();
	x86_fsbase_write_cpu(base);
	current->thread.fsbase = base;
	preempt_enable();
}

/*
 * The same for the user GS base. Not ARCH_SET_GS: it refuses a base at or
 * above TASK_SIZE_MAX, which WRGSBASE lets user space set, and it would
 * load the null selector that arch_threadlet_check() found already.
 */
static __always_inline void threadlet_set_gsbase(unsigned long base)
{
	preempt_disable();
	x86_gsbase_write_cpu_inactive(base);
	current->thread.gsbase = base;
	preempt_enable();
}
#endif

/*
 * Saves current's (the head's) bases in @head_tls and takes @spare's.
 * arch_threadlet_check() has just saved current's live bases.
 */
void arch_threadlet_swap_tls(struct task_struct *head,
			     struct task_struct *spare,
			     struct threadlet_tls *head_tls)
{
	if (threadlet_user32(head)) {
		struct threadlet_tls spare_tls;

		threadlet_save_tls(head, head_tls, true);
		threadlet_save_tls(spare, &spare_tls, true);
		threadlet_load_tls32(&spare_tls);
		return;
	}
#ifdef CONFIG_X86_64
	threadlet_save_tls(head, head_tls, false);
	threadlet_set_fsbase(spare->thread.fsbase);
	/* Most programs leave GS alone: then the two bases are the same. */
	if (spare->thread.gsbase != head_tls->gsbase)
		threadlet_set_gsbase(spare->thread.gsbase);
#endif
}

/*
 * Makes the system call that @regs belongs to return to user space at @ip
 * with stack @sp: a resume point or a home frame. In a 64-bit task rcx and
 * r11 mean nothing there (a system call clobbers them); set as the SYSCALL
 * instruction sets them, they let the exit take SYSRET instead of IRET
 * (do_syscall_64() checks them, the flags and the selectors).
 */
void arch_threadlet_set_frame(struct pt_regs *regs, unsigned long ip,
			      unsigned long sp)
{
	regs->ip = ip;
	regs->sp = sp;
#ifdef CONFIG_X86_64
	if (user_64bit_mode(regs)) {
		regs->cx = ip;
		regs->r11 = regs->flags;
	}
#endif
}

/*
 * Makes current return to user space with the head's TLS bases, at the
 * head's resume point @ip and @sp through @regs, or with @regs NULL
 * through its frame as it is: a syslet head's whole frame, which the
 * claimer copied, and whose rcx and r11 an int $0x80 call from 64-bit
 * code must get back as they were.
 */
void arch_threadlet_resume(struct pt_regs *regs, unsigned long ip,
			   unsigned long sp, const struct threadlet_tls *tls)
{
	if (tls->compat) {
		threadlet_load_tls32(tls);
		if (regs)
			arch_threadlet_set_frame(regs, ip, sp);
		return;
	}
#ifdef CONFIG_X86_64
	/*
	 * Its own call, if it parked in an int $0x80 one, is over: what
	 * returns now is the head's 64-bit context, whose exit work (the
	 * error's width, a restart's number) must not be a 32-bit call's.
	 */
	current_thread_info()->status &= ~TS_COMPAT;
	threadlet_set_fsbase(tls->fsbase);
	/*
	 * thread.gsbase is current's live user GS base: saved when it
	 * parked (arch_threadlet_park()), or restored from there since.
	 */
	if (current->thread.gsbase != tls->gsbase)
		threadlet_set_gsbase(tls->gsbase);
#endif
	if (regs)
		arch_threadlet_set_frame(regs, ip, sp);
}
