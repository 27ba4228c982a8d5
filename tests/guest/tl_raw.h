/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw pieces shared by the guest tests that go below libthreadlet: parking
 * a thread by hand (threadlet-failnth, threadlet-fuzz, the safety-* tests)
 * and the debugfs fault-injection filters (threadlet-failnth,
 * threadlet-fuzz).
 *
 * tl_raw_park() is a global symbol defined by an asm block: include this
 * header from one translation unit of a program only.
 */
#ifndef TL_RAW_H
#define TL_RAW_H

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <threadlet.h>

/* ---- parking at a home frame ------------------------------------------ */

/*
 * long tl_raw_park(struct threadlet_area *area, void *event,
 *		    struct async_head_user *ahu, struct threadlet_area *also)
 *
 * What libthreadlet's tl_park_home() does, for threads a test parks by
 * hand: records this frame as the home (home_ip/home_sp) of @area and of
 * @also (pass @area again when there is one area; threadlet-fuzz passes
 * the TLS area libthreadlet's tl_go_home() uses), then calls
 * async_thread(event, ahu). @area must be registered.
 *
 * Returns async_thread()'s raw result, 0 or -errno, whether it comes back
 * normally (an error before parking) or at the home frame: the head ended
 * (0), a signal (-EINTR), or a cache-miss thread of this identity went
 * home. The kernel resumes at the home frame with only ip and sp set, so
 * the callee-saved registers are kept on that frame and restored from it;
 * 6 pushes and 8 bytes keep %rsp 16-byte aligned as at a call. A claim
 * for a hand-off does not come back here: it returns at the claiming
 * head's frame.
 */
long tl_raw_park(struct threadlet_area *area, void *event,
		 struct async_head_user *ahu, struct threadlet_area *also);
#ifdef __x86_64__
__asm__(
	"	.text\n"
	"	.globl	tl_raw_park\n"
	"	.type	tl_raw_park, @function\n"
	"tl_raw_park:\n"
	"	push	%rbp\n"
	"	push	%rbx\n"
	"	push	%r12\n"
	"	push	%r13\n"
	"	push	%r14\n"
	"	push	%r15\n"
	"	sub	$8, %rsp\n"
	"	lea	1f(%rip), %rax\n"
	"	mov	%rax, 32(%rdi)\n"	/* area->home_ip */
	"	mov	%rsp, 40(%rdi)\n"	/* area->home_sp */
	"	mov	%rax, 32(%rcx)\n"	/* also->home_ip */
	"	mov	%rsp, 40(%rcx)\n"	/* also->home_sp */
	"	mov	%rsi, %rdi\n"
	"	mov	%rdx, %rsi\n"
	"	mov	$455, %eax\n"		/* __NR_async_thread */
	"	syscall\n"
	"1:	add	$8, %rsp\n"
	"	pop	%r15\n"
	"	pop	%r14\n"
	"	pop	%r13\n"
	"	pop	%r12\n"
	"	pop	%rbx\n"
	"	pop	%rbp\n"
	"	ret\n"
	"	.size	tl_raw_park, .-tl_raw_park\n");
#else
/*
 * i386: arguments on the stack, ebp/ebx/esi/edi callee-saved; 4 pushes
 * and 12 bytes keep %esp 16-byte aligned as at a call. The home frame's
 * upper halves are written as zero. int $0x80 takes event in %ebx, ahu
 * in %ecx.
 */
__asm__(
	"	.text\n"
	"	.globl	tl_raw_park\n"
	"	.type	tl_raw_park, @function\n"
	"tl_raw_park:\n"
	"	push	%ebp\n"
	"	push	%ebx\n"
	"	push	%esi\n"
	"	push	%edi\n"
	"	sub	$12, %esp\n"
	"	call	2f\n"
	"2:	pop	%eax\n"
	"	add	$1f-2b, %eax\n"
	"	mov	32(%esp), %edx\n"	/* area */
	"	mov	%eax, 32(%edx)\n"	/* area->home_ip */
	"	movl	$0, 36(%edx)\n"
	"	mov	%esp, 40(%edx)\n"	/* area->home_sp */
	"	movl	$0, 44(%edx)\n"
	"	mov	44(%esp), %edx\n"	/* also */
	"	mov	%eax, 32(%edx)\n"
	"	movl	$0, 36(%edx)\n"
	"	mov	%esp, 40(%edx)\n"
	"	movl	$0, 44(%edx)\n"
	"	mov	36(%esp), %ebx\n"	/* event */
	"	mov	40(%esp), %ecx\n"	/* ahu */
	"	mov	$455, %eax\n"		/* __NR_async_thread */
	"	int	$0x80\n"
	"1:	add	$12, %esp\n"
	"	pop	%edi\n"
	"	pop	%esi\n"
	"	pop	%ebx\n"
	"	pop	%ebp\n"
	"	ret\n"
	"	.size	tl_raw_park, .-tl_raw_park\n");
#endif
_Static_assert(offsetof(struct threadlet_area, home_ip) == 32 &&
	       offsetof(struct threadlet_area, home_sp) == 40 &&
	       __NR_async_thread == 455, "tl_raw_park");

/* ---- fault-injection filters (debugfs) -------------------------------- */

/*
 * fail-nth (Documentation/fault-injection/fault-injection.rst) overrides
 * probability, interval, times and task-filter, but not the per-capability
 * filters: by default failslab and fail_page_alloc skip every allocation
 * that may sleep (ignore-gfp-wait) and fail_page_alloc every order-0 one
 * (min-order), so almost nothing in a system call could fail. tl_fi_open()
 * opens those. Probability stays 0 and task-filter is set, so only a task
 * that armed fail-nth sees a fault; verbose 0 keeps the injections
 * themselves off the console. tl_fi_restore() puts the old values back.
 */
struct tl_fi_attr {
	const char *path, *value;
	char old[32];
	int set;
};

static inline struct tl_fi_attr *tl_fi_attrs(size_t *nr)
{
	static struct tl_fi_attr attrs[] = {
		{ .path = "failslab/ignore-gfp-wait", .value = "N" },
		{ .path = "failslab/task-filter", .value = "Y" },
		{ .path = "failslab/verbose", .value = "0" },
		{ .path = "fail_page_alloc/ignore-gfp-wait", .value = "N" },
		{ .path = "fail_page_alloc/min-order", .value = "0" },
		{ .path = "fail_page_alloc/task-filter", .value = "Y" },
		{ .path = "fail_page_alloc/verbose", .value = "0" },
		{ .path = "fail_usercopy/task-filter", .value = "Y" },
		{ .path = "fail_usercopy/verbose", .value = "0" },
	};

	*nr = sizeof(attrs) / sizeof(attrs[0]);
	return attrs;
}

/*
 * Writes @value to /sys/kernel/debug/@rel, first saving the old value in
 * @old (@oldlen bytes, newline cut) unless @old is NULL. debugfs attribute
 * files are not seekable: read and write, no pread. 0 or -1.
 */
static inline int tl_debugfs_write(const char *rel, const char *value,
				   char *old, size_t oldlen)
{
	char path[128];
	int fd, ok;

	snprintf(path, sizeof(path), "/sys/kernel/debug/%s", rel);
	if (old) {
		ssize_t r = -1;

		fd = open(path, O_RDONLY);
		if (fd >= 0) {
			r = read(fd, old, oldlen - 1);
			close(fd);
		}
		if (r <= 0)
			return -1;
		old[r] = 0;
		old[strcspn(old, "\n")] = 0;
	}
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ok = write(fd, value, strlen(value)) == (ssize_t)strlen(value);
	close(fd);
	return ok ? 0 : -1;
}

/*
 * Opens the filters. Calls @missing (unless NULL) with each attribute it
 * could not set; returns how many those were.
 */
static inline int tl_fi_open(void (*missing)(const char *rel))
{
	size_t nr;
	struct tl_fi_attr *a = tl_fi_attrs(&nr);
	int n = 0;

	for (size_t i = 0; i < nr; i++) {
		a[i].set = !tl_debugfs_write(a[i].path, a[i].value,
					     a[i].old, sizeof(a[i].old));
		if (!a[i].set) {
			if (missing)
				missing(a[i].path);
			n++;
		}
	}
	return n;
}

static inline void tl_fi_restore(void)
{
	size_t nr;
	struct tl_fi_attr *a = tl_fi_attrs(&nr);

	for (size_t i = 0; i < nr; i++)
		if (a[i].set)
			tl_debugfs_write(a[i].path, a[i].old, NULL, 0);
}

#endif /* TL_RAW_H */
