; SPDX-License-Identifier: LGPL-2.1 OR MIT
;
; libthreadlet stack switch for x86-64 (System V ABI), nasm syntax.
;
; A threadlet runs on its own stack. Before switching to it, the head saves
; its callee-saved state in a frame on its own stack and tells the kernel
; (through threadlet_on) where that frame is. Two things can then happen:
;   - fn returns in this thread: we switch back to the frame and return 1;
;   - fn blocks: the kernel returns a parked thread to .resume with
;     rsp = the frame and rax = 0, and that thread, now the head, restores
;     the frame and returns 0. The blocked task finishes fn as a cache-miss
;     thread and never comes back to this frame.
;
; Head frame, from its lowest address (= head_sp). The offsets are checked
; against struct tl_head_frame in threadlet.c with _Static_assert.
;   +0   mxcsr (4 bytes)       +4   x87 control word (2 bytes)
;   +8   padding (16 bytes, keeps rsp 16-byte aligned at the call)
;   +24  r15  +32 r14  +40 r13  +48 r12  +56 rbx  +64 rbp
;   +72  return address of tl_switch_run
FRAME_MXCSR	equ 0
FRAME_FCW	equ 4
FRAME_R15	equ 24
FRAME_SIZE	equ 72		; without the return address

; struct threadlet_area
AREA_HOME_IP	equ 32
AREA_HOME_SP	equ 40

NR_ASYNC_THREAD	equ 455

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
	section .text

	global tl_switch_run:function hidden
	global tl_park_home:function hidden
	global tl_go_home:function hidden
	extern tl_fn_returned

; long tl_switch_run(long (*fn)(void *) [rdi], void *data [rsi],
;                    unsigned long stack_top [rdx], void *ahu [rcx],
;                    struct threadlet_area *area [r8],
;                    long (*on)(area, ip, sp, ahu) [r9])
;
; Hot path: every threadlet that does not block runs all of it, so it saves
; only what a resumed head needs and restores the FPU control state only
; at .resume (a function that returns normally preserves it itself).
tl_switch_run:
	PUSH_CALLEE_SAVED
	sub	rsp, FRAME_R15
	stmxcsr	[rsp + FRAME_MXCSR]
	fnstcw	[rsp + FRAME_FCW]

	mov	r12, rdi		; fn
	mov	r13, rsi		; data
	mov	r14, rdx		; stack top
	mov	r15, rcx		; ahu

	mov	rdi, r8
	lea	rsi, [.resume]
	mov	rdx, rsp
	call	r9			; threadlet_on(area, .resume, frame, ahu)
	test	rax, rax
	jnz	.out			; -errno: fn never ran

	mov	rbx, rsp		; the head frame, callee-saved across fn
	mov	rsp, r14
	mov	rdi, r13
	call	r12			; fn(data)

	; fn returned without going through complete_threadlet_fn(), or after
	; it returned 1. tl_fn_returned() returns only if this is still the
	; head; a cache-miss thread completes and parks there.
	mov	rdi, rax
	mov	rsi, r13
	mov	rdx, r15
	call	tl_fn_returned
	mov	rsp, rbx
	mov	eax, 1
	jmp	.out

.resume:				; new head after a hand-off, rax = 0
	ldmxcsr	[rsp + FRAME_MXCSR]
	fldcw	[rsp + FRAME_FCW]
.out:
	add	rsp, FRAME_R15
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
