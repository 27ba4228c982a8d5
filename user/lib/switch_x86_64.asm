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
;   +0   mxcsr (4 bytes)  +4 x87 control word (2 bytes)
;   +8   fn  +16 data  +24 the head's rsp at entry (-> return address)
; The cache-miss thread keeps using the top block (data, for a thread
; whose fn returns without completing); the new head only reads it, at
; .resume, with rsp on its own stack. The offsets are checked against
; struct tl_head_frame and struct tl_top in threadlet.c with _Static_assert.
FRAME_TOP	equ 0
TOP_MXCSR	equ 0
TOP_FCW		equ 4
TOP_FN		equ 8
TOP_DATA	equ 16
TOP_HEAD	equ 24
TOP_SIZE	equ 32

; The System V callee-saved registers, in the frame order above.
%macro PUSH_CALLEE_SAVED 0
	push	rbp
	push	rbx
	push	r12
	push	r13
	push	r14
	push	r15
%endmacro

%macro POP_CALLEE_SAVED 0
	pop	r15
	pop	r14
	pop	r13
	pop	r12
	pop	rbx
	pop	rbp
%endmacro

	default rel

%include "area.inc"

	global threadlet_exec:function
	global tl_switch_run:function hidden
	global tl_park_home:function hidden
	global tl_go_home:function hidden
	extern tl_on
	extern tl_exec_slow
	extern tl_fn_returned_slow

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
	sub	rdx, TOP_SIZE			; borrows if stack_top is 0
	jnb	tl_switch_run.top
	add	rdx, TOP_SIZE
	jmp	tl_exec_slow

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
	sub	rdx, TOP_SIZE
.top:
	mov	[rdx + TOP_HEAD], rsp
	mov	[rdx + TOP_DATA], rsi
	mov	[rdx + TOP_FN], rdi
	stmxcsr	[rdx + TOP_MXCSR]
	fnstcw	[rdx + TOP_FCW]
	PUSH_CALLEE_SAVED
	push	rdx				; the head frame is complete

	mov	rdi, r8
	lea	rsi, [.resume]
	mov	rdx, rsp
	call	[rel tl_on]			; (area, .resume, frame, ahu)

	pop	rsp				; the top block, 16-byte aligned
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
	mov	eax, 1
	ret

.returned_slow:
	mov	rdi, [rsp + TOP_DATA]
	call	tl_fn_returned_slow		; returns only to the head
	jmp	.done

.resume:				; new head after a hand-off, rax = 0
	mov	rdx, [rsp + FRAME_TOP]
	ldmxcsr	[rdx + TOP_MXCSR]
	fldcw	[rdx + TOP_FCW]
	add	rsp, 8
	POP_CALLEE_SAVED
	ret

; long tl_park_home(struct threadlet_area *area [rdi], void *ahu [rsi])
;
; Parks the calling pool thread with async_thread(NULL, ahu). Its own frame
; here is the identity's home: the kernel returns to .home (with the
; frame's rsp) when the pool ends or a signal interrupts the wait, and
; tl_go_home() jumps there when a cache-miss thread cannot park again.
tl_park_home:
	PUSH_CALLEE_SAVED
	sub	rsp, 8
	lea	rax, [.home]
	mov	[rdi + AREA_HOME_IP], rax
	mov	[rdi + AREA_HOME_SP], rsp
	mov	eax, NR_ASYNC_THREAD
	xor	edi, edi
	syscall
.home:
	add	rsp, 8
	POP_CALLEE_SAVED
	ret

; noreturn void tl_go_home(struct threadlet_area *area [rdi], long ret [rsi])
tl_go_home:
	mov	rax, rsi
	mov	rsp, [rdi + AREA_HOME_SP]
	jmp	[rdi + AREA_HOME_IP]

	section .note.GNU-stack noalloc noexec nowrite progbits
