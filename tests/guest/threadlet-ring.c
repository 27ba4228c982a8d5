// SPDX-License-Identifier: GPL-2.0
/*
 * A full completion ring makes completers wait; no event is dropped or
 * posted twice, and popping lets the waiters go on.
 */
#include "tl_test.h"
#include "tl_util.h"

#define NR	6

static struct async_head_user ahu;
static int pfd[2];
static int finished;

static long wait_pipe(void *data)
{
	char c;

	if (read(pfd[0], &c, 1) == 1)
		__atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
	return complete_threadlet_fn(data, &ahu);
}

int main(void)
{
	unsigned long stacks[NR];
	int ids[NR], seen[NR] = { 0 }, async = 0, got = 0, dup = 0;

	tl_ok(pipe(pfd) == 0 && async_head_init(&ahu, 2, NR) == 0,
	      "a ring of 2 entries, a pool of %d", NR);
	for (int i = 0; i < NR; i++) {
		ids[i] = i;
		stacks[i] = threadlet_stack_alloc(32 << 10);
		async += threadlet_exec(wait_pipe, &ids[i], stacks[i], &ahu) == 0;
	}
	tl_ok(async == NR, "%d threadlets blocked", async);
	tl_ok(write(pfd[1], "abcdef", NR) == NR, "release them all");
	for (int i = 0; i < 2000 && __atomic_load_n(&finished, __ATOMIC_ACQUIRE) < NR; i++)
		usleep(1000);
	usleep(100000);
	tl_ok(ahu.kernel_ring_idx == 2 && (ahu.flags & ASYNC_HEAD_RING_WAITERS),
	      "ring full after 2 events, completers waiting (flag set)");
	while (got + dup < NR) {
		int *ev = async_ring_pop(&ahu);

		if (!ev) {
			if (async_wait(1, ahu.user_ring_idx, &ahu) < 0)
				break;
			continue;
		}
		if (seen[*ev]++)
			dup++;
		else
			got++;
	}
	tl_ok(got == NR && dup == 0, "all %d events arrive, none twice", got);
	tl_ok(async_ring_pop(&ahu) == NULL && tl_wait_parked(&ahu, NR),
	      "ring empty, every thread parked again");
	async_head_exit(&ahu);
	for (int i = 0; i < NR; i++)
		threadlet_stack_free(stacks[i]);
	return tl_exit();
}
