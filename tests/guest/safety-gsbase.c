// SPDX-License-Identifier: GPL-2.0
/*
 * The GS base moves with the identity (docs/task-state.md), also at the
 * edge of what user space can set. With FSGSBASE, WRGSBASE sets any
 * canonical base, also one at or above TASK_SIZE_MAX, which ARCH_SET_GS
 * refuses. The hand-off once moved the base with ARCH_SET_GS and, when
 * that failed, silently left the head with the pool thread's base, and
 * the blocked threadlet with the head's.
 *
 * Expected: for each base, the head has it after the hand-off, and the
 * threadlet, gone on in the cache-miss thread, has that thread's base:
 * the pool's, also when the pool's is such a base. (A 64-bit test: in
 * 32-bit code GS selects a TLS entry.)
 */
#include <sys/auxv.h>
#include "safety.h"

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE		(1 << 1)
#endif

static struct async_head_user ahu;
static unsigned long stack;
static int pfd[2];

struct run {
	unsigned long in, out;	/* the threadlet's GS base before and after */
	long n;
};

static unsigned long gs_read(void)
{
	unsigned long v;

	__asm__ volatile("rdgsbase %0" : "=r"(v));
	return v;
}

static void gs_write(unsigned long v)
{
	__asm__ volatile("wrgsbase %0" :: "r"(v) : "memory");
}

static long fn(void *data)
{
	struct run *r = data;
	char c;

	r->in = gs_read();
	r->n = read(pfd[0], &c, 1);
	r->out = gs_read();
	return complete_threadlet_fn(r, &ahu);
}

/*
 * A threadlet that blocks once, with the head's GS base @base; the head's
 * base after threadlet_exec() in @head. Returns 1 if it was handed off.
 */
static int blocked_once(struct run *r, unsigned long base, unsigned long *head)
{
	long ret;

	memset(r, 0, sizeof(*r));
	gs_write(base);
	ret = threadlet_exec(fn, r, stack, &ahu);
	*head = gs_read();
	gs_write(0);
	if (write(pfd[1], "k", 1) != 1)
		return -1;
	if (ret == 0 && sf_wait_event(&ahu, 5000) != r)
		return -1;
	return ret == 0;
}

int main(void)
{
	static const unsigned long bases[] = {
		0x12345000UL, 0x7ffffffff000UL, 0xffff800000001000UL, 0xffffffffff600000UL,
	};
	unsigned long head;
	struct run r;
	int i, h;

	sf_init();
	if (!(getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE)) {
		sf_skip("no FSGSBASE");
		return tl_exit();
	}
	stack = threadlet_stack_alloc(64 << 10);
	sf_ok(!threadlet_err(stack) && !pipe(pfd) && async_head_init(&ahu, 16, 2) == 0 &&
	      tl_wait_parked(&ahu, 2), "async head, two threads parked, GS base 0");
	for (i = 0; i < (int)(sizeof(bases) / sizeof(bases[0])); i++) {
		h = blocked_once(&r, bases[i], &head);
		sf_ok(h == 1 && head == bases[i] && r.in == bases[i] && r.out == 0,
		      "GS base %#lx: handed off %d, the head has %#lx, the threadlet %#lx then %#lx",
		      bases[i], h, head, r.in, r.out);
	}
	/* The other way: pool threads that start from a kernel-half base. */
	async_head_exit(&ahu);
	gs_write(0xffff800000002000UL);
	sf_ok(async_head_init(&ahu, 16, 2) == 0 && tl_wait_parked(&ahu, 2),
	      "a new pool, started with GS base 0xffff800000002000");
	h = blocked_once(&r, 0x5000, &head);
	sf_ok(h == 1 && head == 0x5000 && r.in == 0x5000 && r.out == 0xffff800000002000UL,
	      "GS base 0x5000, that pool: handed off %d, the head has %#lx, the threadlet %#lx then %#lx",
	      h, head, r.in, r.out);
	async_head_exit(&ahu);
	return tl_exit();
}
