; SPDX-License-Identifier: LGPL-2.1 OR MIT
;
; libthreadlet stack switch for x86-64 (System V ABI), nasm syntax.
;
; threadlet_exec() runs fn on its own stack. Before switching to it, the
; head saves its callee-saved registers in a frame on its own stack and
; tells the kernel (through threadlet_on) where that frame is. Then:
;   - fn returns in this thread: we switch back and return 1. fn preserved
;     the callee-saved registers and we never touched them, so the frame
;     is dropped, not reloaded;
;   - fn blocks: the kernel returns a parked thread to .resume with
;     rsp = the head frame and rax = 0, and that thread, now the head,
;     restores the frame and returns 0. The blocked task finishes fn as a
;     cache-miss thread and never comes back to the head frame.
;
; Head frame, on the head's stack, from its lowest address (= head_sp):
;   +0   threadlet stack pointer at the call of fn (the "top block")
;   +8   r15  +16 r14  +24 r13  +32 r12  +40 rbx  +48 rbp
;   +56  return address of threadlet_exec
; Top block, the 32 bytes under the threadlet stack's top:
;   +8   fn  +16 data  +24 the head's rsp at entry (-> return address)
; The head's mxcsr and x87 control word: in tl_head_ctl, this thread's
; TLS right after its area, which moves with the head at a hand-off.
; The top block is the threadlet's: the cache-miss thread keeps using it
; (data, for a thread whose fn returns without completing), and once fn
; has completed the program may free or reuse the stack. So the new head
; never touches it: .resume reads its TLS and its own stack. (A signal
; handler that runs before .resume and starts a threadlet of its own
; replaces tl_head_ctl: the head then returns with the handler's control
; words, which are the defaults; no other state is affected.) The offsets
; are checked against struct tl_head_frame and struct tl_top in
; threadlet.c with _Static_assert.
;
; Unwinding (cfi.inc; the call frame information follows the code). While
; fn runs, the frame that called it is tl_switch_run's, whose CFA is
; TOP_HEAD + 8 on the head's stack: a backtrace from fn walks into the
; caller of threadlet_exec(). After a hand-off the frames on the head's
; stack are the new head's, not the cache-miss thread's, so there the
; unwind ends at tl_switch_run: the rules take the head frame as this
; threadlet's only while its FRAME_TOP still points back at this top
; block, which .resume clears (on the new head's own stack) before it
; pops the frame; otherwise they give tl_switch_run a CFA at the
; threadlet stack's top and a return address of 0, the end of the stack
; for libgcc and gdb alike. As on i386, a cache-miss thread's backtrace
; reads that one word of the head's stack. (In the few instructions
; between the hand-off and .resume, it may still show the head's
; callers.)
;
; endbr64 (CET's indirect branch tracking) stands where an indirect branch
; lands: threadlet_exec (called through the PLT or a pointer), .resume
; (where the kernel sends a new head) and .home (tl_go_home's jmp, and the
; kernel's return of a parked thread). The hidden functions are only called
; directly, and the returns after the calls need none. The fast path runs
; one endbr64, a NOP on a CPU without CET.
FRAME_TOP	equ 0
FRAME_SIZE	equ 56		; up to the return address
CTL_MXCSR	equ AREA_SIZE	; tl_head_ctl, from the area
CTL_FCW		equ AREA_SIZE + 4
TOP_FN		equ 8
TOP_DATA	equ 16
TOP_HEAD	equ 24
TOP_SIZE	equ 32

; The System V callee-saved registers, in the frame order above, with
; their unwind rules: each push moves the CFA offset and records the slot.
; The pops return each register to "not saved" (the callee-saved registers
; are the caller's own values again).
%macro PUSH_CALLEE_SAVED 0
	push	rbp
	cfi_adjust_cfa_offset 8
	cfi_offset DW_RBP, -cfi_cfa
	push	rbx
	cfi_adjust_cfa_offset 8
	cfi_offset DW_RBX, -cfi_cfa
	push	r12
	cfi_adjust_cfa_offset 8
	cfi_offset DW_R12, -cfi_cfa
	push	r13
	cfi_adjust_cfa_offset 8
	cfi_offset DW_R13, -cfi_cfa
	push	r14
	cfi_adjust_cfa_offset 8
	cfi_offset DW_R14, -cfi_cfa
	push	r15
	cfi_adjust_cfa_offset 8
	cfi_offset DW_R15, -cfi_cfa
%endmacro

%macro POP_CALLEE_SAVED 0
	pop	r15
	cfi_adjust_cfa_offset -8
	cfi_restore DW_R15
	pop	r14
	cfi_adjust_cfa_offset -8
	cfi_restore DW_R14
	pop	r13
	cfi_adjust_cfa_offset -8
	cfi_restore DW_R13
	pop	r12
	cfi_adjust_cfa_offset -8
	cfi_restore DW_R12
	pop	rbx
	cfi_adjust_cfa_offset -8
	cfi_restore DW_RBX
	pop	rbp
	cfi_adjust_cfa_offset -8
	cfi_restore DW_RBP
%endmacro

; The rules of the frames that PUSH_CALLEE_SAVED built (CFA = rsp + 64 or
; an expression), for code reached by a jump.
%macro CFI_CALLEE_SAVED_AT 0
	cfi_offset DW_RBP, -16
	cfi_offset DW_RBX, -24
	cfi_offset DW_R12, -32
	cfi_offset DW_R13, -40
	cfi_offset DW_R14, -48
	cfi_offset DW_R15, -56
%endmacro

	default rel

%include "area.inc"
%include "cfi.inc"

; DWARF register numbers (x86-64 psABI).
DW_RBX	equ 3
DW_RBP	equ 6
DW_R12	equ 12
DW_R13	equ 13
DW_R14	equ 14
DW_R15	equ 15

; tl_switch_run's frame while rsp is at the top block (fn and the code
; after it). CFA: TOP_HEAD + 8 while the head frame's FRAME_TOP (at
; TOP_HEAD - FRAME_SIZE) equals rsp, else (after a hand-off) the threadlet
; stack's top, rsp + TOP_SIZE; the return address: the word at TOP_HEAD,
; or 0. The callee-saved registers keep their rules
; (CFA - 16 ... - 56, the head frame's slots).
%macro CFI_AT_TOP_BLOCK 0
	cfi_escape DW_CFA_def_cfa_expression, 22, \
		DW_OP_breg0 + CFI_SP, TOP_HEAD, DW_OP_deref, \
		DW_OP_dup, DW_OP_const1u, FRAME_SIZE, DW_OP_minus, DW_OP_deref, \
		DW_OP_breg0 + CFI_SP, 0, DW_OP_eq, DW_OP_bra, 6, 0, \
		DW_OP_drop, DW_OP_breg0 + CFI_SP, TOP_SIZE, \
		DW_OP_skip, 2, 0, \
		DW_OP_plus_uconst, 8
	cfi_escape DW_CFA_val_expression, CFI_RA, 21, \
		DW_OP_drop, DW_OP_breg0 + CFI_SP, TOP_HEAD, DW_OP_deref, \
		DW_OP_dup, DW_OP_const1u, FRAME_SIZE, DW_OP_minus, DW_OP_deref, \
		DW_OP_breg0 + CFI_SP, 0, DW_OP_eq, DW_OP_bra, 5, 0, \
		DW_OP_drop, DW_OP_lit0, DW_OP_skip, 1, 0, \
		DW_OP_deref
%endmacro

	global threadlet_exec:function (threadlet_exec.end - threadlet_exec)
	global tl_switch_run:function hidden (tl_switch_run.end - tl_switch_run)
	global tl_park_home:function hidden (tl_park_home.end - tl_park_home)
	global tl_go_home:function hidden (tl_go_home.end - tl_go_home)
	global tl_job_switch:function hidden (tl_job_switch.end - tl_job_switch)
	extern tl_on
	extern tl_job_next
	extern tl_exec_slow
	extern tl_fn_returned_slow
	extern tl_resumed

; long threadlet_exec(long (*fn)(void *) [rdi], void *data [rsi],
;                     unsigned long stack_top [rdx],
;                     struct async_head_user *ahu [rcx])
;
; Every threadlet that does not block runs all of this, so the common case
; is one straight line: bad arguments, a thread whose area is not yet
; registered, a cache-miss thread and a nested call all fail the tests
; below and take tl_exec_slow(), which sorts them out in C. Falls into
; tl_switch_run with rdx already at the top block.
; Area state 0 means: registered, not a cache-miss thread, no threadlet
; running (lib_flags starts as TL_LIB_UNREGISTERED in every new thread).
threadlet_exec:
	cfi_startproc
	endbr64
	mov	r8, [rel __threadlet_area wrt ..gottpoff]
	add	r8, [fs:0]			; this thread's area
	test	rdi, rdi
	jz	tl_exec_slow
	test	rcx, rcx
	jz	tl_exec_slow
	test	dl, 15
	jnz	tl_exec_slow
	cmp	qword [r8 + AREA_STATE], 0
	jne	tl_exec_slow
	sub	rdx, TOP_SIZE			; not above 0 signed: below
	jg	tl_switch_run.top		; 32, or an error value
	add	rdx, TOP_SIZE
	jmp	tl_exec_slow
.end:
	cfi_endproc

; long tl_switch_run(fn [rdi], data [rsi], stack_top [rdx], ahu [rcx],
;                    struct threadlet_area *area [r8])
;
; Arguments checked, area registered, no threadlet on. Returns 1 (ran in
; place) or 0 (as the new head after a hand-off).
;
; threadlet_on()'s result is not tested: the vDSO form fails only when a
; threadlet is already on, which the callers ruled out, and nothing else
; can set the flag. The syscall form also fails if the kernel does not
; know the area (a raw unregister or fork behind the library's back):
; then nothing can be handed off, fn runs in place and we return 1, which
; is the truth.
tl_switch_run:
	cfi_startproc personality
	sub	rdx, TOP_SIZE
.top:
	mov	[rdx + TOP_HEAD], rsp
	mov	[rdx + TOP_DATA], rsi
	mov	[rdx + TOP_FN], rdi
	stmxcsr	[r8 + CTL_MXCSR]
	fnstcw	[r8 + CTL_FCW]
	PUSH_CALLEE_SAVED
	push	rdx				; the head frame is complete
	cfi_adjust_cfa_offset 8

	; On only once on the threadlet stack: from the flag on, any sleep
	; (a fault in the syscall form's C wrapper, say) hands the head off,
	; and the cache-miss thread must go on where fn will run, not on the
	; head's stack, which the new head pops at .resume.
	mov	rdi, r8
	lea	rsi, [.resume]
	mov	rdx, rsp
	pop	rsp				; the top block, 16-byte aligned
	CFI_AT_TOP_BLOCK
	call	[rel tl_on]			; (area, .resume, frame, ahu)
	mov	rdi, [rsp + TOP_DATA]
	call	[rsp + TOP_FN]

	; Still the head, fn completed in place and its threadlet_off() ran:
	; state 0 again. Anything else (fn returned without completing, or
	; this is a cache-miss thread whose fn returned) is for C.
	mov	rcx, [rel __threadlet_area wrt ..gottpoff]
	cmp	qword [fs:rcx + AREA_STATE], 0
	jne	.returned_slow
.done:
	mov	rsp, [rsp + TOP_HEAD]
	cfi_def_cfa CFI_SP, 8
	cfi_restore CFI_RA
	cfi_restore DW_RBP
	cfi_restore DW_RBX
	cfi_restore DW_R12
	cfi_restore DW_R13
	cfi_restore DW_R14
	cfi_restore DW_R15
	mov	eax, 1
	ret

.returned_slow:
	CFI_AT_TOP_BLOCK
	CFI_CALLEE_SAVED_AT
	mov	rdi, [rsp + TOP_DATA]
	call	tl_fn_returned_slow		; returns only to the head
	jmp	.done

.resume:				; new head after a hand-off, rax = 0
	cfi_def_cfa CFI_SP, FRAME_SIZE + 8
	cfi_restore CFI_RA
	endbr64
	mov	qword [rsp + FRAME_TOP], 0	; the cache-miss thread's unwind ends here
	mov	rdx, [rel __threadlet_area wrt ..gottpoff]
	ldmxcsr	[fs:rdx + CTL_MXCSR]
	fldcw	[fs:rdx + CTL_FCW]
	call	tl_resumed			; rsp is 16-byte aligned here
	xor	eax, eax
	add	rsp, 8
	cfi_def_cfa_offset 56
	POP_CALLEE_SAVED
	ret
.end:
	cfi_endproc

; long tl_park_home(struct threadlet_area *area [rdi], void *ahu [rsi])
;
; Parks the calling pool thread with async_thread(NULL, ahu). Its own frame
; here is the identity's home: the kernel returns to .home (with the
; frame's rsp) when the pool ends or a signal interrupts the wait, and
; tl_go_home() jumps there when a cache-miss thread cannot park again.
tl_park_home:
	cfi_startproc
	PUSH_CALLEE_SAVED
	sub	rsp, 8
	cfi_adjust_cfa_offset 8
	lea	rax, [.home]
	mov	[rdi + AREA_HOME_IP], rax
	mov	[rdi + AREA_HOME_SP], rsp
	mov	eax, NR_ASYNC_THREAD
	xor	edi, edi
	syscall
.home:
	endbr64
	add	rsp, 8
	cfi_adjust_cfa_offset -8
	POP_CALLEE_SAVED
	ret
.end:
	cfi_endproc

; noreturn void tl_go_home(struct threadlet_area *area [rdi], long ret [rsi])
;
; From the moving of rsp on, the frame is tl_park_home's, at .home.
tl_go_home:
	cfi_startproc
	mov	rax, rsi
	mov	rsp, [rdi + AREA_HOME_SP]
	cfi_def_cfa_offset 64
	CFI_CALLEE_SAVED_AT
	jmp	[rdi + AREA_HOME_IP]
.end:
	cfi_endproc

; noreturn void tl_job_switch(struct tl_job *job [rdi], void *event [rsi],
;                             struct async_head_user *ahu [rdx])
;
; A cache-miss thread leaves the stack of the threadlet it finished for the
; stack of the queued job it runs next (threadlet.c): the job lies at the
; top of that stack, 16-byte aligned, so it is the new rsp, and
; tl_job_next() posts @event only once nothing uses the old stack. The
; frames left behind are the finished threadlet's: the unwind ends here.
tl_job_switch:
	cfi_startproc
	mov	rsp, rdi
	cfi_undefined CFI_RA
	call	tl_job_next
	ud2
.end:
	cfi_endproc

	section .note.GNU-stack noalloc noexec nowrite progbits
