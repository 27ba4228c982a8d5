// SPDX-License-Identifier: GPL-2.0
/*
 * An elastic pool keeps growing whatever the thread it sent to grow does.
 *
 * A hand-off that leaves fewer than low_watermark threads parked sends one
 * more parked thread home with ASYNC_GROW, and sends no other until that
 * one parks again (head->grow_busy). The growth belongs to the head: a
 * grower may instead end (its program's choice, or a failed thread start
 * that makes it give up), or park on another head. Either way the first
 * head must go on growing; before the fix it never grew again.
 *
 * Raw parkers, low_watermark 2:
 *  1. P1 and P2 park on head A. A syslet of the main thread goes async
 *     and claims P2 (the last to park): one is left, so P1 goes home with
 *     ASYNC_GROW. P1 ends (case "ends") or parks on head B ("parks
 *     elsewhere"). The syslet completes and its task parks on A.
 *  2. P3 parks on A: two parked. A second syslet claims P3; one is left,
 *     and the kernel must send it home with ASYNC_GROW again.
 */
#include "safety.h"

static struct async_head_user ahu_a, ahu_b;
static u64 ring_a[16], ring_b[4];
static struct threadlet_area main_area __attribute__((aligned(128)));

static int growers, other_back, grower_mode;

/* The growers' way: record ASYNC_GROW, then end, or park on head B. */
static void *parker(void *arg)
{
	long r;

	(void)arg;
	if (syscall(__NR_threadlet_register, &__threadlet_area,
		    sizeof(__threadlet_area), 0))
		return NULL;
	/* A claimed parker does not come back here: it is the head now. */
	r = sf_park_home(&__threadlet_area, NULL, &ahu_a);
	if (r == ASYNC_GROW) {
		__atomic_add_fetch(&growers, 1, __ATOMIC_ACQ_REL);
		if (grower_mode == 1)
			r = sf_park_home(&__threadlet_area, NULL, &ahu_b);
	} else {
		__atomic_add_fetch(&other_back, 1, __ATOMIC_ACQ_REL);
	}
	syscall(__NR_threadlet_register, &__threadlet_area,
		sizeof(__threadlet_area), THREADLET_UNREGISTER);
	return NULL;
}

static int wait_growers(int n)
{
	for (int i = 0; i < 5000 && __atomic_load_n(&growers, __ATOMIC_ACQUIRE) < n; i++)
		usleep(1000);
	return __atomic_load_n(&growers, __ATOMIC_ACQUIRE);
}

static int start_parker(int parked)
{
	pthread_t t;

	return !pthread_create(&t, NULL, parker, NULL) && !pthread_detach(t) &&
	       tl_wait_parked(&ahu_a, parked);
}

/*
 * One syslet that goes async (SYSLET_ASYNC: a hand-off before its atom,
 * which claims a parked thread) and then reads a byte this thread writes.
 * 1 if it went async and its atom was posted into A's ring.
 */
static int block_once(void)
{
	static struct syslet_uatom atom;
	static long long atom_ret;
	static u64 fd, buf, one = 1;
	static char c;
	int pfd[2], ok;
	long r;

	if (pipe(pfd))
		return 0;
	fd = pfd[0];
	buf = (uintptr_t)&c;
	memset(&atom, 0, sizeof(atom));
	atom.flags = SYSLET_ASYNC;
	atom.nr = SYS_read;
	atom.ret_ptr = (uintptr_t)&atom_ret;
	atom.arg_ptr[0] = (uintptr_t)&fd;
	atom.arg_ptr[1] = (uintptr_t)&buf;
	atom.arg_ptr[2] = (uintptr_t)&one;
	atom_ret = -1;
	r = syscall(__NR_async_exec, &atom, &ahu_a);
	ok = r == 0 && write(pfd[1], "g", 1) == 1 &&
	     sf_wait_event(&ahu_a, 5000) == &atom && atom_ret == 1;
	close(pfd[0]);
	close(pfd[1]);
	return ok;
}

static void grow_twice(void *arg)
{
	const char *how = arg ? "parks elsewhere" : "ends";
	int n;

	grower_mode = arg ? 1 : 0;
	memset(&ahu_a, 0, sizeof(ahu_a));
	ahu_a.completion_ring = (uintptr_t)ring_a;
	ahu_a.ring_size_bytes = sizeof(ring_a);
	ahu_a.max_cachemiss_threads = 8;
	ahu_a.low_watermark = 2;
	sf_ok(syscall(__NR_threadlet_register, &main_area, sizeof(main_area), 0) == 0 &&
	      syscall(__NR_async_register, &ahu_a, sizeof(ahu_a), 0) == 0 &&
	      sf_register_head(&ahu_b, ring_b, 4, 4) == 0,
	      "%s: head A (low watermark 2) and head B", how);

	sf_ok(start_parker(1) && start_parker(2), "%s: P1 and P2 parked on A", how);
	sf_ok(block_once(), "%s: a syslet claimed one and completed", how);
	n = wait_growers(1);
	sf_ok(n == 1, "%s: the other went home with ASYNC_GROW (%d)", how, n);
	if (grower_mode == 1) {
		for (int i = 0; i < 5000 && async_head_parked(&ahu_b) != 1; i++)
			usleep(1000);
		sf_ok(async_head_parked(&ahu_b) == 1, "%s: the grower parked on B", how);
	}
	/* The syslet's task parked on A as it completed. */
	sf_ok(tl_wait_parked(&ahu_a, 1) && start_parker(2), "%s: two parked on A again", how);
	sf_ok(block_once(), "%s: a second syslet claimed one and completed", how);
	n = wait_growers(2);
	sf_ok(n == 2, "%s: A sent a grower home again (%d growers)", how, n);
	sf_ok(!__atomic_load_n(&other_back, __ATOMIC_ACQUIRE), "%s: no parker came back otherwise", how);
	sf_ok(sf_unregister_head(&ahu_b) == 0 && sf_unregister_head(&ahu_a) == 0,
	      "%s: unregister both heads", how);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(grow_twice, NULL, 60);
	sf_child_ok(status, "a grower that ends");
	status = sf_child(grow_twice, (void *)1, 60);
	sf_child_ok(status, "a grower that parks on another head");
	return tl_exit();
}
