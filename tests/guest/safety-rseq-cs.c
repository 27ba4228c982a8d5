// SPDX-License-Identifier: GPL-2.0
/*
 * A threadlet that blocks inside an rseq critical section.
 *
 * The section must be aborted when its thread sleeps and moves. Handed
 * off, the sleeper would come back under the pool thread's rseq area and
 * never abort it, so the hook reads the head's rseq_cs pointer (without
 * faulting) and sleeps in place while it is set (THREADLET_FB_TASK).
 *
 * The head's glibc rseq area gets a valid descriptor of a section that
 * does not hold the threadlet's code (so the kernel clears it on the way
 * back, as for any section left), then the threadlet blocks on a pipe.
 * Expected: with the pointer set, it sleeps in place with FB_TASK; the
 * same threadlet without it is handed off.
 */
#include <sys/rseq.h>
#include "safety.h"

static struct async_head_user ahu;

/*
 * The section: a few bytes of code nobody runs. Its abort address follows
 * the signature the kernel checks (glibc registered RSEQ_SIG); it is never
 * jumped to, as the section never holds the instruction pointer.
 */
static void never_run(void)
{
	__asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop");
}

static const uint32_t abort_sig[2] = { RSEQ_SIG, 0 };

static struct {
	uint32_t version, flags;
	uint64_t start_ip, post_commit_offset, abort_ip;
} __attribute__((aligned(32))) cs;

static volatile uint64_t *rseq_cs_word(void)
{
	return (volatile uint64_t *)((char *)__builtin_thread_pointer() +
				     __rseq_offset + 8);
}

static int set_cs;

static long rseq_fn(void *data)
{
	if (set_cs)
		*rseq_cs_word() = (uintptr_t)&cs;
	return sf_block_fn(data);
}

/* One blocking threadlet; its threadlet_exec() result. */
static long one(unsigned long stack)
{
	struct sf_block b;
	long ret = -1;

	if (sf_block_prepare(&b, &ahu)) {
		ret = threadlet_exec(rseq_fn, &b, stack, &ahu);
		if (ret == 0) {
			sf_block_kick(&b);
			if (sf_wait_event(&ahu, 10000) != &b)
				ret = -2;
		}
	}
	*rseq_cs_word() = 0;
	sf_block_finish(&b);
	return ret;
}

static void run(void *arg)
{
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	unsigned long long fb, ho;
	long ret;

	(void)arg;
	cs.start_ip = (uintptr_t)never_run;
	cs.post_commit_offset = 4;
	cs.abort_ip = (uintptr_t)&abort_sig[1];
	sf_ok(!threadlet_err(stack) && !async_head_init(&ahu, 16, 2),
	      "a head with a pool of 2");
	ret = one(stack);
	sf_ok(ret == 0, "without a section the threadlet is handed off (%ld)", ret);
	set_cs = 1;
	fb = __threadlet_area.nr_fallbacks;
	ho = __threadlet_area.nr_handoffs;
	ret = one(stack);
	sf_ok(ret == 1 && __threadlet_area.nr_fallbacks > fb &&
	      __threadlet_area.nr_handoffs == ho &&
	      __threadlet_area.last_fallback == THREADLET_FB_TASK,
	      "inside a section it sleeps in place (FB_TASK; exec %ld, last fallback %u)",
	      ret, (unsigned int)__threadlet_area.last_fallback);
	set_cs = 0;
	ret = one(stack);
	sf_ok(ret == 0, "after it, handed off again (%ld)", ret);
	async_head_exit(&ahu);
}

int main(void)
{
	int status;

	sf_init();
	if (!__rseq_size) {
		tl_skip_test("glibc registered no rseq area");
		return tl_exit();
	}
	status = sf_child(run, NULL, 60);
	sf_child_ok(status, "a threadlet inside an rseq critical section");
	return tl_exit();
}
