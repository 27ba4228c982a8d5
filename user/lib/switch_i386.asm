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
FRAME_MXCSR	equ 0
FRAME_FCW	equ 4
FRAME_ARGS	equ 28		; first argument, above the return address

%macro PUSH_CALLEE_SAVED 0
	push	ebp
	push	ebx
	push	esi
	push	edi
%endmacro

%macro POP_CALLEE_SAVED 0
	pop	edi
	pop	esi
	pop	ebx
	pop	ebp
%endmacro

; ecx = the GOT, for position-independent data references.
%macro LOAD_GOT 0
	call	%%pc
%%pc:	pop	ecx
	add	ecx, _GLOBAL_OFFSET_TABLE_ + $$ - %%pc wrt ..gotpc
%endmacro

%include "area.inc"

	global threadlet_exec:function
	global tl_switch_run:function hidden
	global tl_park_home:function hidden
	global tl_go_home:function hidden
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

; long tl_switch_run(long (*fn)(void *), void *data, unsigned long stack_top,
;                    struct async_head_user *ahu)
;
; Arguments checked, area registered, no threadlet on. Returns 1 (ran in
; place) or 0 (as the new head after a hand-off). threadlet_on()'s result
; is not tested, for the reasons given in switch_x86_64.asm.
tl_switch_run:
	LOAD_GOT
	mov	edx, [ecx + tl_area_tpoff wrt ..gotoff]
.checked:				; ecx = GOT, edx = the area's offset
	PUSH_CALLEE_SAVED
	sub	esp, 8
	stmxcsr	[esp + FRAME_MXCSR]
	fnstcw	[esp + FRAME_FCW]		; the head frame is complete
	mov	ebx, esp
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

	mov	eax, [ebx + FRAME_ARGS + 8]	; stack_top
	lea	esp, [eax - 16]			; 16-byte aligned, room for the argument
	mov	[esp], edi
	call	esi				; fn(data)

	; Still the head, fn completed in place and its threadlet_off() ran:
	; the area is at rest. Anything else is for C.
	mov	ecx, [gs:ebp + AREA_STATE]
	or	ecx, [gs:ebp + AREA_STATE + 4]
	jnz	.returned_slow
.done:
	lea	esp, [ebx + 8]
	POP_CALLEE_SAVED
	mov	eax, 1
	ret

.returned_slow:
	mov	[esp], edi
	call	tl_fn_returned_slow		; returns only to the head
	jmp	.done

.resume:				; new head after a hand-off, eax = 0
	ldmxcsr	[esp + FRAME_MXCSR]
	fldcw	[esp + FRAME_FCW]
	add	esp, 8
	POP_CALLEE_SAVED
	ret

; long tl_park_home(struct threadlet_area *area, void *ahu)
;
; Parks the calling pool thread with async_thread(NULL, ahu); see
; switch_x86_64.asm. The frame here is the identity's home.
tl_park_home:
	PUSH_CALLEE_SAVED
	mov	edx, [esp + 20]			; area
	mov	ecx, [esp + 24]			; ahu
	call	.pc
.pc:	pop	eax
	add	eax, .home - .pc
	mov	[edx + AREA_HOME_IP], eax
	mov	dword [edx + AREA_HOME_IP + 4], 0
	mov	[edx + AREA_HOME_SP], esp
	mov	dword [edx + AREA_HOME_SP + 4], 0
	mov	eax, NR_ASYNC_THREAD
	xor	ebx, ebx			; event: none
	int	0x80				; ecx: ahu
.home:
	POP_CALLEE_SAVED
	ret

; noreturn void tl_go_home(struct threadlet_area *area, long ret)
tl_go_home:
	mov	ecx, [esp + 4]
	mov	eax, [esp + 8]
	mov	esp, [ecx + AREA_HOME_SP]
	jmp	[ecx + AREA_HOME_IP]

	section .note.GNU-stack noalloc noexec nowrite progbits
