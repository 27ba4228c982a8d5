// SPDX-License-Identifier: GPL-2.0
/*
 * async_ring_pop() wakes the completers that wait for ring space with
 * async_wait(0, index, ahu), and names the head in it.
 *
 * In the i386 library the index went through syscall(3)'s variable
 * arguments as a 64-bit value, two argument words: the kernel saw the
 * index's high half (0) as the head, refused the call with EINVAL, and a
 * waiting completer only saw its slot at its next 100 ms poll.
 *
 * A seccomp filter traps any async_wait() whose head argument is 0; the
 * ring of 2 fills with 6 completions, and the test pops them all with
 * async_ring_pop() alone, as an event loop that polls the ring does.
 * Expected: every event arrives, and no wake was trapped.
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include "safety.h"

#define NR	6

static struct async_head_user ahu;
static int pfd[2];
static volatile sig_atomic_t trapped;

static long wait_pipe(void *data)
{
	char c;

	if (read(pfd[0], &c, 1) != 1)
		return 0;
	return complete_threadlet_fn(data, &ahu);
}

static void on_sigsys(int sig)
{
	(void)sig;
	trapped++;
}

/* Traps async_wait() with 0 in its third argument word: a head of NULL. */
static int trap_headless_wait(void)
{
	struct sock_filter f[] = {
		SF_FILTER_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_async_wait, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2]) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
	};

	return sf_filter(f);
}

static void run(void *arg)
{
	static int ids[NR];
	unsigned long stacks[NR];
	int seen[NR] = { 0 }, async = 0, got = 0, bad = 0, i;
	long long end;

	(void)arg;
	/* Before the pool: its threads inherit the filter, so hand-offs go on. */
	signal(SIGSYS, on_sigsys);
	if (!trap_headless_wait() || pipe(pfd) || async_head_init(&ahu, 2, NR)) {
		sf_ok(0, "a filter, a pipe and a head with a ring of 2");
		return;
	}
	for (i = 0; i < NR; i++) {
		ids[i] = i;
		stacks[i] = threadlet_stack_alloc(32 << 10);
		async += threadlet_exec(wait_pipe, &ids[i], stacks[i], &ahu) == 0;
	}
	sf_ok(async == NR && write(pfd[1], "abcdef", NR) == NR,
	      "%d threadlets blocked, then released", async);
	for (i = 0; i < 5000 && !(ahu.flags & ASYNC_HEAD_RING_WAITERS); i++)
		usleep(1000);
	sf_ok(ahu.flags & ASYNC_HEAD_RING_WAITERS, "the ring filled: completers wait");

	end = tl_now_ns() + 20000000000LL;
	while (got + bad < NR && tl_now_ns() < end) {
		int *ev = async_ring_pop(&ahu);

		if (!ev)
			usleep(1000);
		else if (ev < ids || ev >= ids + NR || seen[ev - ids]++)
			bad++;
		else
			got++;
	}
	sf_ok(got == NR && !bad, "all %d events popped, none twice or foreign (%d)",
	      got, bad);
	sf_ok(!trapped, "every wake named the head (%d trapped with none)",
	      (int)trapped);
	async_head_exit(&ahu);
	for (i = 0; i < NR; i++)
		threadlet_stack_free(stacks[i]);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(run, NULL, 120);
	sf_child_ok(status, "async_ring_pop() wakes the completers waiting for space");
	return tl_exit();
}
