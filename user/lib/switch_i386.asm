; SPDX-License-Identifier: LGPL-2.1 OR MIT
;
; libthreadlet stack switch for i386 (System V cdecl: arguments on the
; stack, ebx/esi/edi/ebp callee-saved, the stack 16-byte aligned at
; calls), nasm syntax, position-independent.
;
; The same protocol as switch_x86_64.asm: the head saves its callee-saved
; registers in a frame on its own stack and gives that frame to
; threadlet_on() as the resume point; fn runs on the threadlet stack.
; After a hand-off the spare returns to .resume as the head, eax = 0.
;
; Head frame, from its lowest address (= head_sp):
;   +0   edi  +4 esi  +8 ebx  +12 ebp
;   +16  return address of threadlet_exec / tl_switch_run, then its
;        arguments; once fn and data are copied to the top block, their
;        two slots hold mxcsr (4 bytes) and the x87 control word (2 bytes)
;        for .resume (argument slots belong to the callee)
; Top block, the 32 bytes under the threadlet stack's top (esp at the
; call of fn):
;   +0   fn's argument (data; fn's to change)  +4 data  +8 fn
; The top block is the threadlet's, which the program may free or reuse
; once fn has completed: the new head never touches it.
; The offsets are checked against struct tl_head_frame and struct tl_top
; in threadlet.c with _Static_assert. Across threadlet_on() and fn, two
; callee-saved registers hold what this code needs after fn, and fn
; preserves them, in the head and in a cache-miss thread alike: ebx the
; frame, ebp the area's offset. esi and edi are never changed: when fn
; returns in place they are the caller's again, and only ebx and ebp are
; reloaded. fn and data are read from the top block, never from the
; head's stack once the threadlet is on (after a hand-off that stack is
; the new head's).
;
; threadlet_on() and threadlet_off_tls() are the vDSO's forms with their
; arguments in registers (arch/x86/entry/vdso/vdso32/threadlet_regs.S),
; which preserve every register but their result (threadlet_on: none, its
; result is the carry flag): tl_on_regs here, and
; __threadlet_off_tls_regs in complete_threadlet_fn() (threadlet.h). With
; THREADLET_FORCE_SYSCALL=1 or without them, tl_syscall_on_regs and
; tl_syscall_off_regs below: the system calls, behind the same registers.
;
; The area is this thread's __threadlet_area, at tl_area_tpoff from the
; thread pointer (%gs base): nasm has no PIC form of an initial-exec TLS
; access for i386, so threadlet.c stores the offset, a constant, in a
; hidden variable at load time, and this code reads it pc-relative (one
; call/pop finds the pc, which also gives .resume and tl_on_regs).
;
; Unwinding (cfi.inc), as on x86-64: while fn runs, the frame that calls
; it is the head frame (ebx + 20 is its CFA), so a backtrace from fn walks
; into the caller of threadlet_exec(). After a hand-off those frames are the
; new head's: .resume clears the stack_top argument in the head frame (an
; argument slot belongs to the callee), and the rules take the frame as
; the head's only while that argument still equals the threadlet stack's
; top (esp + 32 at the call of fn); otherwise the unwind ends at
; threadlet_exec, with a return address of 0. Unlike x86-64's TOP_HEAD,
; the word compared is on the head's stack: a cache-miss thread's
; backtrace reads that one word of it. (Between the hand-off and .resume
; it may still show the head's callers.)
;
; endbr32 where an indirect branch lands: threadlet_exec, .resume and
; .home, as on x86-64; the fast path runs one.
FRAME_ARGS	equ 20		; first argument, above the return address
FRAME_STACK_TOP	equ FRAME_ARGS + 8
FRAME_MXCSR	equ FRAME_ARGS	; fn's slot, once fn is in the top block
FRAME_FCW	equ FRAME_ARGS + 4	; data's
TOP_DATA	equ 4
TOP_FN		equ 8
TOP_SIZE	equ 32

%include "area.inc"
%include "cfi.inc"

; DWARF register numbers (i386 psABI).
DW_EBX	equ 3
DW_EBP	equ 5
DW_ESI	equ 6
DW_EDI	equ 7

; The callee-saved registers, with their unwind rules (see x86-64).
%macro PUSH_CALLEE_SAVED 0
	push	ebp
	cfi_adjust_cfa_offset 4
	cfi_offset DW_EBP, -cfi_cfa
	push	ebx
	cfi_adjust_cfa_offset 4
	cfi_offset DW_EBX, -cfi_cfa
	push	esi
	cfi_adjust_cfa_offset 4
	cfi_offset DW_ESI, -cfi_cfa
	push	edi
	cfi_adjust_cfa_offset 4
	cfi_offset DW_EDI, -cfi_cfa
%endmacro

%macro POP_CALLEE_SAVED 0
	pop	edi
	cfi_adjust_cfa_offset -4
	cfi_restore DW_EDI
	pop	esi
	cfi_adjust_cfa_offset -4
	cfi_restore DW_ESI
	pop	ebx
	cfi_adjust_cfa_offset -4
	cfi_restore DW_EBX
	pop	ebp
	cfi_adjust_cfa_offset -4
	cfi_restore DW_EBP
%endmacro

; Where PUSH_CALLEE_SAVED put them, for code reached by a jump.
%macro CFI_CALLEE_SAVED_AT 0
	cfi_offset DW_EBP, -8
	cfi_offset DW_EBX, -12
	cfi_offset DW_ESI, -16
	cfi_offset DW_EDI, -20
%endmacro

; The frame that calls fn while esp is on the threadlet stack (fn and the
; code after it). CFA: ebx + 20, the head frame's, while its stack_top
; argument equals esp + 32; else (after a hand-off) esp + 32, the threadlet
; stack's top. The return address: the word at ebx + 16, or 0.
%macro CFI_ON_THREADLET_STACK 0
	cfi_escape DW_CFA_def_cfa_expression, 16, \
		DW_OP_breg0 + DW_EBX, FRAME_STACK_TOP, DW_OP_deref, \
		DW_OP_breg0 + CFI_SP, TOP_SIZE, DW_OP_eq, DW_OP_bra, 5, 0, \
		DW_OP_breg0 + CFI_SP, TOP_SIZE, \
		DW_OP_skip, 2, 0, \
		DW_OP_breg0 + DW_EBX, FRAME_ARGS
	cfi_escape DW_CFA_val_expression, CFI_RA, 17, \
		DW_OP_drop, \
		DW_OP_breg0 + DW_EBX, FRAME_STACK_TOP, DW_OP_deref, \
		DW_OP_breg0 + CFI_SP, TOP_SIZE, DW_OP_eq, DW_OP_bra, 4, 0, \
		DW_OP_lit0, \
		DW_OP_skip, 3, 0, \
		DW_OP_breg0 + DW_EBX, FRAME_ARGS - 4, DW_OP_deref
%endmacro

	global threadlet_exec:function (threadlet_exec.end - threadlet_exec)
	global tl_switch_run:function hidden (tl_switch_run.end - tl_switch_run)
	global tl_syscall_on_regs:function hidden (tl_syscall_on_regs.end - tl_syscall_on_regs)
	global tl_syscall_off_regs:function hidden (tl_syscall_off_regs.end - tl_syscall_off_regs)
	global tl_park_home:function hidden (tl_park_home.end - tl_park_home)
	global tl_go_home:function hidden (tl_go_home.end - tl_go_home)
	global tl_job_switch:function hidden (tl_job_switch.end - tl_job_switch)
	extern tl_job_next
	extern tl_on_regs
	extern tl_area_tpoff
	extern tl_exec_slow
	extern tl_fn_returned_slow
	extern tl_resumed
	extern tl_syscall_on
	extern tl_syscall_off_tls

; long tl_switch_run(long (*fn)(void *), void *data, unsigned long stack_top,
;                    struct async_head_user *ahu)
;
; Arguments checked, area registered, no threadlet on: threadlet_exec()
; without its tests, for tl_exec_slow(). Returns as threadlet_exec().
tl_switch_run:
	cfi_startproc
	PUSH_CALLEE_SAVED
	call	.pc
.pc:
	cfi_adjust_cfa_offset 4
	pop	ecx
	cfi_adjust_cfa_offset -4
	mov	ebp, [ecx + tl_area_tpoff - .pc]
	add	ecx, threadlet_exec.pc - .pc	; as threadlet_exec's
	mov	edx, [esp + FRAME_ARGS + 12]	; ahu
	mov	eax, [esp + FRAME_STACK_TOP]
	jmp	threadlet_exec.checked
.end:
	cfi_endproc

; long threadlet_exec(long (*fn)(void *), void *data, unsigned long stack_top,
;                     struct async_head_user *ahu)
;
; Returns 1 (ran in place) or 0 (as the new head after a hand-off). As on
; x86-64, one straight line for the common case: bad arguments, an area
; not yet registered, a cache-miss thread and a nested call fail the tests
; and take tl_exec_slow() (a tail call, once the registers are back: the
; arguments are in place). The head frame is built first, so that the
; tests have registers to work in.
;
; threadlet_on()'s result is not tested, for the reasons given in
; switch_x86_64.asm.
threadlet_exec:
	cfi_startproc personality
	endbr32
	PUSH_CALLEE_SAVED
	call	.pc
.pc:
	cfi_adjust_cfa_offset 4
	pop	ecx
	cfi_adjust_cfa_offset -4
	mov	ebp, [ecx + tl_area_tpoff - .pc]
	mov	eax, [gs:ebp + AREA_STATE]
	or	eax, [gs:ebp + AREA_STATE + 4]
	jnz	.slow
	cmp	dword [esp + FRAME_ARGS], 0	; fn
	je	.slow
	mov	edx, [esp + FRAME_ARGS + 12]	; ahu
	test	edx, edx
	jz	.slow
	mov	eax, [esp + FRAME_STACK_TOP]	; stack_top
	test	al, 15
	jnz	.slow
	cmp	eax, 4096			; no stack ends in the first page
	jb	.slow
	cmp	eax, -4096			; nor is an error value one
	ja	.slow
.checked:	; eax = stack_top, ecx = .pc, edx = ahu, ebp = the area's offset
	mov	ebx, esp			; the head frame is complete
	cfi_def_cfa DW_EBX, FRAME_ARGS
	lea	esp, [eax - TOP_SIZE + TOP_FN + 4]
	push	dword [ebx + FRAME_ARGS]	; TOP_FN
	push	dword [ebx + FRAME_ARGS + 4]	; TOP_DATA
	push	dword [ebx + FRAME_ARGS + 4]	; fn's argument; esp 16-byte aligned
	CFI_ON_THREADLET_STACK
	stmxcsr	[ebx + FRAME_MXCSR]		; in the fn and data slots
	fnstcw	[ebx + FRAME_FCW]
	mov	eax, [ecx + tl_on_regs - .pc]
	lea	ecx, [ecx + .resume - .pc]
	call	eax				; on: ebp area, ecx .resume, ebx frame, edx ahu
	call	[esp + TOP_FN]			; fn(data)

	; Still the head, fn completed in place and its threadlet_off() ran:
	; the area is at rest. Anything else is for C.
	mov	ecx, [gs:ebp + AREA_STATE]
	or	ecx, [gs:ebp + AREA_STATE + 4]
	jnz	.returned_slow
.done:
	lea	esp, [ebx + 8]			; esi and edi: the caller's still
	cfi_def_cfa CFI_SP, 12
	cfi_restore CFI_RA
	cfi_restore DW_EDI
	cfi_restore DW_ESI
	pop	ebx
	cfi_adjust_cfa_offset -4
	cfi_restore DW_EBX
	pop	ebp
	cfi_adjust_cfa_offset -4
	cfi_restore DW_EBP
	mov	eax, 1
	ret

.returned_slow:
	CFI_ON_THREADLET_STACK
	CFI_CALLEE_SAVED_AT
	mov	eax, [esp + TOP_DATA]
	mov	[esp], eax
	call	tl_fn_returned_slow		; returns only to the head
	jmp	.done

.resume:				; new head after a hand-off, eax = 0
	cfi_def_cfa CFI_SP, FRAME_ARGS
	cfi_restore CFI_RA
	endbr32
	ldmxcsr	[esp + FRAME_MXCSR]
	fldcw	[esp + FRAME_FCW]
	mov	dword [esp + FRAME_STACK_TOP], 0 ; the cache-miss thread's unwind ends here
	sub	esp, 12				; 16-byte aligned at the call
	cfi_adjust_cfa_offset 12
	call	tl_resumed
	add	esp, 12
	cfi_adjust_cfa_offset -12
	xor	eax, eax
	POP_CALLEE_SAVED
	ret

.slow:
	cfi_def_cfa CFI_SP, FRAME_ARGS
	CFI_CALLEE_SAVED_AT
	POP_CALLEE_SAVED
	jmp	tl_exec_slow
.end:
	cfi_endproc

; tl_syscall_on_regs(ebp = area offset, ecx = head_ip, ebx = head_sp,
;                    edx = ahu): CF set if not armed
; long tl_syscall_off_regs(eax = area offset)
;
; The system call forms behind the registers of the vDSO's
; __vdso_threadlet_on_regs and __vdso_threadlet_off_tls_regs: tl_syscall_on()
; and tl_syscall_off_tls() (threadlet.c), every register but the result
; preserved, called on a 16-byte aligned stack (the callers' may not be).
tl_syscall_on_regs:
	cfi_startproc
	push	eax
	cfi_adjust_cfa_offset 4
	push	ecx
	cfi_adjust_cfa_offset 4
	push	edx
	cfi_adjust_cfa_offset 4
	push	ebp
	cfi_adjust_cfa_offset 4
	cfi_offset DW_EBP, -cfi_cfa
	mov	ebp, esp
	cfi_def_cfa DW_EBP, 20
	and	esp, -16
	push	edx				; ahu
	push	ebx				; head_sp
	push	ecx				; head_ip
	push	0				; the area: the kernel knows it
	call	tl_syscall_on
	neg	eax				; CF: not armed
	mov	esp, ebp
	cfi_def_cfa CFI_SP, 20
	pop	ebp
	cfi_adjust_cfa_offset -4
	cfi_restore DW_EBP
	pop	edx
	cfi_adjust_cfa_offset -4
	pop	ecx
	cfi_adjust_cfa_offset -4
	pop	eax
	cfi_adjust_cfa_offset -4
	ret
.end:
	cfi_endproc

tl_syscall_off_regs:
	cfi_startproc
	push	ecx
	cfi_adjust_cfa_offset 4
	push	edx
	cfi_adjust_cfa_offset 4
	push	ebp
	cfi_adjust_cfa_offset 4
	cfi_offset DW_EBP, -cfi_cfa
	mov	ebp, esp
	cfi_def_cfa DW_EBP, 16
	and	esp, -16
	sub	esp, 12
	push	eax				; the area's offset
	call	tl_syscall_off_tls
	mov	esp, ebp
	cfi_def_cfa CFI_SP, 16
	pop	ebp
	cfi_adjust_cfa_offset -4
	cfi_restore DW_EBP
	pop	edx
	cfi_adjust_cfa_offset -4
	pop	ecx
	cfi_adjust_cfa_offset -4
	ret
.end:
	cfi_endproc

; long tl_park_home(struct threadlet_area *area, void *ahu)
;
; Parks the calling pool thread with async_thread(NULL, ahu); see
; switch_x86_64.asm. The frame here is the identity's home.
tl_park_home:
	cfi_startproc
	PUSH_CALLEE_SAVED
	mov	edx, [esp + 20]			; area
	mov	ecx, [esp + 24]			; ahu
	call	.pc
.pc:
	cfi_adjust_cfa_offset 4
	pop	eax
	cfi_adjust_cfa_offset -4
	add	eax, .home - .pc
	mov	[edx + AREA_HOME_IP], eax
	mov	dword [edx + AREA_HOME_IP + 4], 0
	mov	[edx + AREA_HOME_SP], esp
	mov	dword [edx + AREA_HOME_SP + 4], 0
	mov	eax, NR_ASYNC_THREAD
	xor	ebx, ebx			; event: none
	int	0x80				; ecx: ahu
.home:
	endbr32
	POP_CALLEE_SAVED
	ret
.end:
	cfi_endproc

; noreturn void tl_go_home(struct threadlet_area *area, long ret)
;
; From the moving of esp on, the frame is tl_park_home's, at .home.
tl_go_home:
	cfi_startproc
	mov	ecx, [esp + 4]
	mov	eax, [esp + 8]
	mov	esp, [ecx + AREA_HOME_SP]
	cfi_def_cfa_offset 20
	CFI_CALLEE_SAVED_AT
	jmp	[ecx + AREA_HOME_IP]
.end:
	cfi_endproc

; noreturn void tl_job_switch(struct tl_job *job, void *event,
;                             struct async_head_user *ahu)
;
; See switch_x86_64.asm: esp becomes the job, at the top of its stack and
; 16-byte aligned, and the three arguments go on to tl_job_next() with the
; stack aligned at the call, as the i386 psABI wants.
tl_job_switch:
	cfi_startproc
	mov	eax, [esp + 4]
	mov	ecx, [esp + 8]
	mov	edx, [esp + 12]
	lea	esp, [eax - 4]
	cfi_undefined CFI_RA
	push	edx
	cfi_adjust_cfa_offset 4
	push	ecx
	cfi_adjust_cfa_offset 4
	push	eax
	cfi_adjust_cfa_offset 4
	call	tl_job_next
	ud2
.end:
	cfi_endproc

	section .note.GNU-stack noalloc noexec nowrite progbits
