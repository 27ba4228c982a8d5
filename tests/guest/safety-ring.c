// SPDX-License-Identifier: GPL-2.0
/*
 * The completion ring after a failed or a waiting post.
 *
 * A post writes the event into its slot, then kernel_ring_idx, which
 * publishes it. When that second write faults (the async_head_user page
 * made read-only after registration), the call fails with EFAULT and
 * must post nothing: an event left in the slot is never popped (the
 * index did not move), and every later post would wait for that slot.
 *
 * A completer that waits for ring space sets ASYNC_HEAD_RING_WAITERS, so
 * that the consumer calls async_wait() after a pop to let it go on. Once
 * it has its slot the flag must be clear again, or every later pop of
 * libthreadlet makes a system call for nobody.
 *
 * Expected: after the EFAULT both slots are empty and a later post lands
 * at once; the waiters flag is clear once the waiting completer posted.
 */
#include "safety.h"

static struct async_head_user *ahu;
static u64 *ring;
static volatile long late_ret = 1;
static volatile int late_done;

static void *late_post(void *arg)
{
	(void)arg;
	late_ret = syscall(__NR_async_complete, (void *)0x5678, ahu);
	__atomic_store_n(&late_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int wait_done(int ms)
{
	for (int i = 0; i < ms && !__atomic_load_n(&late_done, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	return late_done;
}

/* The head and its ring on pages of their own. */
static int new_head(unsigned int entries)
{
	ahu = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ring = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	late_done = 0;
	late_ret = 1;
	return ahu != MAP_FAILED && ring != MAP_FAILED &&
	       sf_register_head(ahu, ring, entries, 1) == 0;
}

static void failed_post(void *arg)
{
	pthread_t t;
	long r;
	int e;

	(void)arg;
	sf_ok(new_head(2), "head with a 2-slot ring");
	sf_ok(mprotect(ahu, 4096, PROT_READ) == 0, "async_head_user page read-only");
	errno = 0;
	r = syscall(__NR_async_complete, (void *)0x1234, ahu);
	e = errno;
	sf_ok(r == -1 && e == EFAULT, "async_complete: -1/EFAULT (got %ld/%d)", r, e);
	sf_ok(ring[0] == 0 && ring[1] == 0,
	      "nothing is posted on EFAULT (slots %#llx %#llx)",
	      (unsigned long long)ring[0], (unsigned long long)ring[1]);
	sf_ok(mprotect(ahu, 4096, PROT_READ | PROT_WRITE) == 0, "page writable again");

	sf_ok(pthread_create(&t, NULL, late_post, NULL) == 0, "post again from a thread");
	wait_done(2000);
	sf_ok(late_done && late_ret == 0 && ahu->kernel_ring_idx == 1 &&
	      async_ring_pop(ahu) == (void *)0x5678,
	      "the next post lands at once (done %d, index %llu, slot 0 %#llx)",
	      late_done, (unsigned long long)ahu->kernel_ring_idx,
	      (unsigned long long)ring[0]);
	sf_ok(sf_unregister_head(ahu) == 0, "unregister");
	sf_ok(wait_done(2000), "the poster came back");
	if (late_done)
		pthread_join(t, NULL);
}

static void waiters_flag(void *arg)
{
	pthread_t t;
	int i;

	(void)arg;
	sf_ok(new_head(1), "head with a 1-slot ring");
	ring[0] = 0xf00;			/* full: nobody will pop it */
	sf_ok(pthread_create(&t, NULL, late_post, NULL) == 0, "a completer posts");
	for (i = 0; i < 5000 && !(ahu->flags & ASYNC_HEAD_RING_WAITERS); i++)
		usleep(1000);
	sf_ok(ahu->flags & ASYNC_HEAD_RING_WAITERS, "it waits for space: flag set");
	ring[0] = 0;
	syscall(__NR_async_wait, 0UL, 0UL, ahu);
	sf_ok(wait_done(2000) && late_ret == 0, "it posted once the slot was free");
	pthread_join(t, NULL);
	sf_ok(async_ring_pop(ahu) == (void *)0x5678, "its event popped");
	sf_ok(!(ahu->flags & ASYNC_HEAD_RING_WAITERS),
	      "the flag is clear once nobody waits (flags %#x)", ahu->flags);
	sf_ok(sf_unregister_head(ahu) == 0, "unregister");
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(failed_post, NULL, 30);
	sf_child_ok(status, "a post whose index cannot be written");
	status = sf_child(waiters_flag, NULL, 30);
	sf_child_ok(status, "a completer that waited for space");
	return tl_exit();
}
