// SPDX-License-Identifier: GPL-2.0
/*
 * async_exec() through int $0x80 from 64-bit code: a chain of i386 calls
 * in a 64-bit process (found by a helper's review). The task that ends
 * such a chain after a hand-off parks inside that int $0x80 call, with
 * its compat mark set; the hand-off refused such a spare for any 64-bit
 * head (THREADLET_FB_COMPAT), so after one chain per pool thread every
 * hand-off of the program slept in place. Expected: the chains go async
 * with the head's registers kept, and 64-bit chains and threadlets are
 * handed off after them. x86-64 only.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "tl_test.h"
#include "tl_util.h"

#define NR_ASYNC_EXEC_I386	457
#define NR_GETPPID_I386		64
#define POOL			4

/*
 * async_exec(@atom, @ahu) by int $0x80; 1 if the registers that call
 * keeps came back as they went in: the callee-saved ones, and rcx (@ahu)
 * and r8-r11, which int $0x80 keeps too (a hand-off once made its return
 * to the head set rcx and r11 as SYSCALL does).
 */
static long int80_exec(void *atom, void *ahu, int *regs_ok)
{
	unsigned long out[10];
	void *cx = ahu;
	long ret;

	__asm__ volatile("push %%rbp\n\t"
			 "push %%rbx\n\t"
			 "mov %[atom], %%rbx\n\t"
			 "mov $0x1111, %%r12\n\t"
			 "mov $0x2222, %%r13\n\t"
			 "mov $0x3333, %%r14\n\t"
			 "mov $0x4444, %%r15\n\t"
			 "mov $0x5555, %%rbp\n\t"
			 "mov $0x8888, %%r8\n\t"
			 "mov $0x9999, %%r9\n\t"
			 "mov $0xaaaa, %%r10\n\t"
			 "mov $0xbbbb, %%r11\n\t"
			 "int $0x80\n\t"
			 "mov %%r12, 0(%[out])\n\t"
			 "mov %%r13, 8(%[out])\n\t"
			 "mov %%r14, 16(%[out])\n\t"
			 "mov %%r15, 24(%[out])\n\t"
			 "mov %%rbp, 32(%[out])\n\t"
			 "mov %%rcx, 40(%[out])\n\t"
			 "mov %%r8, 48(%[out])\n\t"
			 "mov %%r9, 56(%[out])\n\t"
			 "mov %%r10, 64(%[out])\n\t"
			 "mov %%r11, 72(%[out])\n\t"
			 "pop %%rbx\n\t"
			 "pop %%rbp\n\t"
			 : "=a" (ret), "+c" (cx)
			 : "0" ((long)NR_ASYNC_EXEC_I386), [atom] "r" (atom),
			   [out] "D" (out)
			 : "memory", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
			   "rdx", "rsi");
	*regs_ok = out[0] == 0x1111 && out[1] == 0x2222 && out[2] == 0x3333 &&
		   out[3] == 0x4444 && out[4] == 0x5555 &&
		   out[5] == (unsigned long)ahu && out[6] == 0x8888 &&
		   out[7] == 0x9999 && out[8] == 0xaaaa && out[9] == 0xbbbb;
	if (!*regs_ok)
		tl_diag("rcx %#lx (ahu %p) r8 %#lx r9 %#lx r10 %#lx r11 %#lx",
			out[5], ahu, out[6], out[7], out[8], out[9]);
	return ret;
}

static struct async_head_user *ahu;

static int pfd[2];

/* Writes the byte block_once() waits for, after a while. */
static void *write_later(void *arg)
{
	(void)arg;
	usleep(50000);
	if (write(pfd[1], "x", 1) != 1)
		abort();
	return NULL;
}

/* Blocks on the pipe @data until the byte comes. */
static long block_once(void *data)
{
	char c;

	if (read(((int *)data)[0], &c, 1) != 1)
		return complete_threadlet_fn(&c, ahu);
	return complete_threadlet_fn(data, ahu);
}

int main(void)
{
	char *low = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	struct syslet_uatom *at = (void *)(low + 4096);
	static long long r;
	struct threadlet_stats st;
	int async = 0, regs = 0, events = 0, ok, handed = 0;
	struct syslet_uatom *done;

	tl_ok(low != MAP_FAILED && (uintptr_t)low < (1ULL << 32), "memory below 4 GiB");
	ahu = (void *)low;
	tl_ok(async_head_init(ahu, 16, POOL) == 0 && tl_wait_parked(ahu, POOL),
	      "a head, %d threads parked", POOL);
	/* The library registers this thread's area at its first chain. */
	syslet_atom_init(&at[0], SYS_getppid, 0, &r, NULL, 0);
	tl_ok(async_exec(at, ahu) == &at[0] && r == getppid(), "a 64-bit chain in place");
	/* Every pool thread ends i386 chains, and parks in their call. */
	for (int i = 0; i < 4 * POOL; i++) {
		long ret;

		syslet_atom_init(&at[0], NR_GETPPID_I386, SYSLET_ASYNC, &r, NULL, 0);
		ret = int80_exec(at, ahu, &ok);
		regs += ok;
		if (ret != 0 && ret != (long)(uintptr_t)&at[0])
			tl_diag("chain %d: %ld", i, ret);
		if (ret == 0) {
			async++;
			events += tl_wait_one(ahu) == &at[0] && r == getppid();
		}
		tl_wait_parked(ahu, POOL);
	}
	tl_ok(async == 4 * POOL && events == async && regs == 4 * POOL,
	      "int $0x80 chains go async: %d of %d, %d events, registers kept %d times",
	      async, 4 * POOL, events, regs);

	for (int i = 0; i < POOL; i++) {
		syslet_atom_init(&at[0], SYS_getppid, SYSLET_ASYNC, &r, NULL, 0);
		done = async_exec(at, ahu);
		if (!done && tl_wait_one(ahu) == &at[0])
			handed++;
		tl_wait_parked(ahu, POOL);
	}
	threadlet_stats(&st);
	tl_ok(handed == POOL, "then 64-bit chains go async: %d of %d (last fallback %s)",
	      handed, POOL, threadlet_fallback_name(st.last_fallback));

	handed = 0;
	tl_ok(pipe(pfd) == 0, "a pipe");
	for (int i = 0; i < POOL; i++) {
		unsigned long stack = threadlet_stack_alloc(64 << 10);
		pthread_t th;

		pthread_create(&th, NULL, write_later, NULL);
		if (threadlet_exec(block_once, pfd, stack, ahu) == 0)
			handed += tl_wait_one(ahu) == pfd;
		pthread_join(th, NULL);
		tl_wait_parked(ahu, POOL);
		threadlet_stack_free(stack);
	}
	threadlet_stats(&st);
	tl_ok(handed == POOL, "and threadlets are handed off: %d of %d (last fallback %s)",
	      handed, POOL, threadlet_fallback_name(st.last_fallback));
	async_head_exit(ahu);
	return tl_exit();
}
