// SPDX-License-Identifier: GPL-2.0
/*
 * Every uapi structure of include/uapi/linux/threadlet.h that the kernel
 * reads: a non-zero reserved field, or a flag bit the header does not
 * define, is -EINVAL, so that each can be given a meaning later.
 *
 *   struct threadlet_area    threadlet_register(): __reserved0, each
 *                            __reserved[i], flags beyond ON|SIGNAL;
 *                            the call's flags beyond UNREGISTER
 *   struct async_head_user   async_register(): __reserved, flags beyond
 *                            RING_WAITERS; the call's flags beyond
 *                            UNREGISTER|QUERY_PARKED
 *   struct syslet_uatom      async_exec(): flags beyond SYSLET_ALL_FLAGS
 *                            (the atom is not run, its result is -EINVAL,
 *                            and it is the chain's final atom, whatever
 *                            its flags say: async_exec(2))
 *
 * Each case is checked next to the same structure with the field zero,
 * which the kernel accepts, so that a failure for another reason cannot
 * pass for the check.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <threadlet.h>

#include "tl_test.h"
#include "tl_util.h"

static struct threadlet_area area __attribute__((aligned(128)));
static uint64_t ring[16];

static long sys(long nr, long a, long b, long c)
{
	return syscall(nr, a, b, c);
}

static long reg(void)
{
	return sys(__NR_threadlet_register, (long)&area, sizeof(area), 0);
}

static long unreg(void)
{
	return sys(__NR_threadlet_register, (long)&area, sizeof(area),
		   THREADLET_UNREGISTER);
}

static void areas(void)
{
	int bad = 0, i;

	memset(&area, 0, sizeof(area));
	area.__reserved0 = 1;
	tl_errno(reg(), EINVAL, "threadlet_area: __reserved0 set");
	area.__reserved0 = 0;
	for (i = 0; i < 6; i++) {
		area.__reserved[i] = 1ULL << (i * 10);
		errno = 0;
		bad += !(reg() == -1 && errno == EINVAL);
		area.__reserved[i] = 0;
	}
	tl_ok(!bad, "threadlet_area: each __reserved[i] set: EINVAL (%d not)", bad);
	for (bad = 0, i = 2; i < 32; i++) {
		area.flags = 1U << i;
		errno = 0;
		bad += !(reg() == -1 && errno == EINVAL);
	}
	area.flags = 0;
	tl_ok(!bad, "threadlet_area: each unknown flags bit: EINVAL (%d not)", bad);
	for (bad = 0, i = 1; i < 32; i++) {
		errno = 0;
		bad += !(sys(__NR_threadlet_register, (long)&area, sizeof(area),
			     (long)(1UL << i)) == -1 && errno == EINVAL);
	}
	tl_ok(!bad, "threadlet_register: each unknown flag: EINVAL (%d not)", bad);
	tl_ok(reg() == 0, "threadlet_area: all zero: registered");
	tl_ok(unreg() == 0, "and unregistered");
	area.flags = THREADLET_SIGNAL;
	tl_ok(reg() == 0, "threadlet_area: THREADLET_SIGNAL is a known bit");
	tl_ok(unreg() == 0, "and unregistered");
}

static void fill(struct async_head_user *a)
{
	memset(a, 0, sizeof(*a));
	a->completion_ring = (uintptr_t)ring;
	a->ring_size_bytes = sizeof(ring);
	a->max_cachemiss_threads = 2;
}

static long hreg(struct async_head_user *a, long flags)
{
	return sys(__NR_async_register, (long)a, sizeof(*a), flags);
}

static void heads(void)
{
	struct async_head_user a __attribute__((aligned(8)));
	int bad = 0, i;

	fill(&a);
	a.__reserved = 1;
	tl_errno(hreg(&a, 0), EINVAL, "async_head_user: __reserved low bit set");
	a.__reserved = 1ULL << 63;
	tl_errno(hreg(&a, 0), EINVAL, "async_head_user: __reserved high bit set");
	fill(&a);
	for (i = 1; i < 32; i++) {
		a.flags = 1U << i;
		errno = 0;
		bad += !(hreg(&a, 0) == -1 && errno == EINVAL);
	}
	tl_ok(!bad, "async_head_user: each unknown flags bit: EINVAL (%d not)", bad);
	fill(&a);
	for (bad = 0, i = 2; i < 32; i++) {
		errno = 0;
		bad += !(hreg(&a, (long)(1UL << i)) == -1 && errno == EINVAL);
	}
	tl_ok(!bad, "async_register: each unknown flag: EINVAL (%d not)", bad);
	a.flags = ASYNC_HEAD_RING_WAITERS;	/* left by an earlier registration */
	tl_ok(hreg(&a, 0) == 0, "async_head_user: known flags, zero reserved: registered");
	tl_ok(hreg(&a, ASYNC_UNREGISTER) == 0, "and unregistered");
}

static void atoms(void)
{
	static struct async_head_user ahu __attribute__((aligned(64)));
	struct syslet_uatom at[2], *done;
	long long r[2];
	int bad = 0, i;

	tl_ok(async_head_init(&ahu, 16, 1) == 0, "async_head_init");
	for (i = 0; i < 32; i++) {
		unsigned int bit = 1U << i;

		if (bit & SYSLET_ALL_FLAGS)
			continue;
		syslet_atom_init(&at[0], SYS_getppid, bit, &r[0], &at[1], 0);
		syslet_atom_init(&at[1], SYS_getppid, 0, &r[1], NULL, 0);
		r[0] = r[1] = -999;
		done = async_exec(at, &ahu);
		if (done != &at[0] || r[0] != -EINVAL || r[1] != -999) {
			tl_diag("flag 0x%x: done %p (at %p), r %lld %lld", bit,
				(void *)done, (void *)at, r[0], r[1]);
			bad++;
		}
	}
	tl_ok(!bad, "syslet_uatom: each unknown flag: not run, -EINVAL, the chain ends (%d not)",
	      bad);
	syslet_atom_init(&at[0], SYS_getppid, 0, &r[0], &at[1], 0);
	syslet_atom_init(&at[1], SYS_getppid, 0, &r[1], NULL, 0);
	tl_ok(async_exec(at, &ahu) == &at[1] && r[0] == getppid() && r[1] == getppid(),
	      "syslet_uatom: known flags: the chain runs");
	async_head_exit(&ahu);
}

int main(void)
{
	areas();
	heads();
	atoms();
	return tl_exit();
}
