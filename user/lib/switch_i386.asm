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
;   +0   mxcsr (4 bytes)  +4 x87 control word (2 bytes)
;   +8   edi  +12 esi  +16 ebx  +20 ebp
;   +24  return address of threadlet_exec / tl_switch_run, then its arguments
; The offsets are checked against struct tl_head_frame in threadlet.c with
; _Static_assert. Unlike x86-64 there is no top block: across threadlet_on()
; and fn, the callee-saved registers (saved in the frame) hold what this
; code needs, and fn preserves them, in the head and in a cache-miss thread
; alike: ebx the frame, esi fn, edi data, ebp the area's offset.
;
; The area is this thread's __threadlet_area, at tl_area_tpoff from the
; thread pointer (%gs base): nasm has no PIC form of an initial-exec TLS
; access for i386, so threadlet.c stores the offset, a constant, in a
; hidden variable at load time, and this code reads it through the GOT.
;
; Unwinding (cfi.inc), as on x86-64: while fn runs, tl_switch_run's frame
; is the head frame (ebx + 28 is its CFA), so a backtrace from fn walks
; into the caller of threadlet_exec(). After a hand-off those frames are the
; new head's: .resume clears the stack_top argument in the head frame (an
; argument slot belongs to the callee), and the rules take the frame as
; the head's only while that argument still equals the threadlet stack's
; top (esp + 16 at the call of fn); otherwise the unwind ends at
; tl_switch_run, with a return address of 0. Unlike x86-64's TOP_HEAD,
; the word compared is on the head's stack: a cache-miss thread's
; backtrace reads that one word of it. (Between the hand-off and .resume
; it may still show the head's callers.)
;
; endbr32 where an indirect branch lands: threadlet_exec, .resume and
; .home, as on x86-64; the fast path runs one.
FRAME_MXCSR	equ 0
FRAME_FCW	equ 4
FRAME_ARGS	equ 28		; first argument, above the return address
FRAME_STACK_TOP	equ FRAME_ARGS + 8

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

; ecx = the GOT, for position-independent data references.
%macro LOAD_GOT 0
	call	%%pc
%%pc:
	cfi_adjust_cfa_offset 4
	pop	ecx
	cfi_adjust_cfa_offset -4
	add	ecx, _GLOBAL_OFFSET_TABLE_ + $$ - %%pc wrt ..gotpc
%endmacro

; tl_switch_run's frame while esp is on the threadlet stack (fn and the
; code after it). CFA: ebx + 28, the head frame's, while its stack_top
; argument equals esp + 16; else (after a hand-off) esp + 16, the threadlet
; stack's top. The return address: the word at ebx + 24, or 0.
%macro CFI_ON_THREADLET_STACK 0
	cfi_escape DW_CFA_def_cfa_expression, 16, \
		DW_OP_breg0 + DW_EBX, FRAME_STACK_TOP, DW_OP_deref, \
		DW_OP_breg0 + CFI_SP, 16, DW_OP_eq, DW_OP_bra, 5, 0, \
		DW_OP_breg0 + CFI_SP, 16, \
		DW_OP_skip, 2, 0, \
		DW_OP_breg0 + DW_EBX, FRAME_ARGS
	cfi_escape DW_CFA_val_expression, CFI_RA, 17, \
		DW_OP_drop, \
		DW_OP_breg0 + DW_EBX, FRAME_STACK_TOP, DW_OP_deref, \
		DW_OP_breg0 + CFI_SP, 16, DW_OP_eq, DW_OP_bra, 4, 0, \
		DW_OP_lit0, \
		DW_OP_skip, 3, 0, \
		DW_OP_breg0 + DW_EBX, FRAME_ARGS - 4, DW_OP_deref
%endmacro

	global threadlet_exec:function (threadlet_exec.end - threadlet_exec)
	global tl_switch_run:function hidden (tl_switch_run.end - tl_switch_run)
	global tl_park_home:function hidden (tl_park_home.end - tl_park_home)
	global tl_go_home:function hidden (tl_go_home.end - tl_go_home)
	extern _GLOBAL_OFFSET_TABLE_
	extern tl_on
	extern tl_area_tpoff
	extern tl_exec_slow
	extern tl_fn_returned_slow

; long threadlet_exec(long (*fn)(void *), void *data, unsigned long stack_top,
;                     struct async_head_user *ahu)
;
; As on x86-64, one straight line for the common case: bad arguments, an
; area not yet registered, a cache-miss thread and a nested call fail the
; tests and take tl_exec_slow() (a tail call: the arguments are in place).
threadlet_exec:
	cfi_startproc
	endbr32
	LOAD_GOT
	mov	edx, [ecx + tl_area_tpoff wrt ..gotoff]
	cmp	dword [esp + 4], 0		; fn
	je	.slow
	cmp	dword [esp + 16], 0		; ahu
	je	.slow
	mov	eax, [esp + 12]			; stack_top
	test	al, 15
	jnz	.slow
	cmp	eax, 4096			; no stack ends in the first page
	jb	.slow
	mov	eax, [gs:edx + AREA_STATE]
	or	eax, [gs:edx + AREA_STATE + 4]
	jz	tl_switch_run.checked
.slow:
	jmp	tl_exec_slow
.end:
	cfi_endproc

; long tl_switch_run(long (*fn)(void *), void *data, unsigned long stack_top,
;                    struct async_head_user *ahu)
;
; Arguments checked, area registered, no threadlet on. Returns 1 (ran in
; place) or 0 (as the new head after a hand-off). threadlet_on()'s result
; is not tested, for the reasons given in switch_x86_64.asm.
tl_switch_run:
	cfi_startproc
	LOAD_GOT
	mov	edx, [ecx + tl_area_tpoff wrt ..gotoff]
.checked:				; ecx = GOT, edx = the area's offset
	PUSH_CALLEE_SAVED
	sub	esp, 8
	cfi_adjust_cfa_offset 8
	stmxcsr	[esp + FRAME_MXCSR]
	fnstcw	[esp + FRAME_FCW]		; the head frame is complete
	mov	ebx, esp
	cfi_def_cfa DW_EBX, FRAME_ARGS
	mov	ebp, edx
	mov	esi, [ebx + FRAME_ARGS]		; fn
	mov	edi, [ebx + FRAME_ARGS + 4]	; data

	sub	esp, 4				; 16-byte aligned after 4 arguments
	push	dword [ebx + FRAME_ARGS + 12]	; ahu
	push	ebx				; sp: the frame
	lea	edx, [ecx + .resume wrt ..gotoff]
	push	edx				; ip: .resume
	mov	edx, [gs:0]			; the thread pointer (the TCB's self)
	add	edx, ebp
	push	edx				; this thread's area
	call	[ecx + tl_on wrt ..gotoff]	; on(area, .resume, frame, ahu)

	mov	eax, [ebx + FRAME_STACK_TOP]	; stack_top
	lea	esp, [eax - 16]			; 16-byte aligned, room for the argument
	CFI_ON_THREADLET_STACK
	mov	[esp], edi
	call	esi				; fn(data)

	; Still the head, fn completed in place and its threadlet_off() ran:
	; the area is at rest. Anything else is for C.
	mov	ecx, [gs:ebp + AREA_STATE]
	or	ecx, [gs:ebp + AREA_STATE + 4]
	jnz	.returned_slow
.done:
	lea	esp, [ebx + 8]
	cfi_def_cfa CFI_SP, 20
	cfi_restore CFI_RA
	POP_CALLEE_SAVED
	mov	eax, 1
	ret

.returned_slow:
	CFI_ON_THREADLET_STACK
	CFI_CALLEE_SAVED_AT
	mov	[esp], edi
	call	tl_fn_returned_slow		; returns only to the head
	jmp	.done

.resume:				; new head after a hand-off, eax = 0
	cfi_def_cfa CFI_SP, FRAME_ARGS
	cfi_restore CFI_RA
	endbr32
	mov	dword [esp + FRAME_STACK_TOP], 0 ; the cache-miss thread's unwind ends here
	ldmxcsr	[esp + FRAME_MXCSR]
	fldcw	[esp + FRAME_FCW]
	add	esp, 8
	cfi_def_cfa_offset 20
	POP_CALLEE_SAVED
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

	section .note.GNU-stack noalloc noexec nowrite progbits
