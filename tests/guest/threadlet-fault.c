// SPDX-License-Identifier: GPL-2.0
/*
 * A threadlet is handed off at a page fault, not only in a system call.
 *
 * semantics.md lists a page fault that sleeps among the hand-off points. A
 * threadlet reads who it is (gettid() and a TLS variable), makes one plain
 * store to a page that is not mapped yet, and reads again, while two other
 * threads hold mmap_lock for write as often as they can (mprotect() of a
 * large populated region). When the fault sleeps on mmap_lock the head is
 * handed off right at that store: the threadlet finishes as the cache-miss
 * thread, with that thread's TID and TLS, and the head returns 0 from
 * threadlet_exec() with its own.
 *
 * What must hold for every threadlet, handed off or not: TID and TLS agree
 * before and after the store (they move together, never one without the
 * other); the head comes back with its own TID and TLS; a threadlet that
 * went async posts exactly one completion. How many were handed off at the
 * store depends on the scheduler; the test says how many, and skips that
 * one check when none was.
 *
 * This is why an application must not keep "who am I" (a TID, or a pointer
 * into its TLS computed before) across any memory access in a threadlet,
 * and why threadlet-fuzz's oracle re-reads both after every step.
 */
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tl_test.h"
#include "tl_util.h"

#define NJOBS		400
#define BIG		(64UL << 20)
#define STACK_SZ	(64 << 10)

static struct async_head_user ahu;
static volatile int stop;
static __thread int t_me;	/* the TID of the task that owns this TLS */

static int tid_raw(void)
{
	return (int)syscall(SYS_gettid);
}

/*
 * Whose TLS this is, read afresh on each call (noipa: the compiler may not
 * keep the TLS address across the store). The first task to read a TLS
 * block records its TID there; TLS blocks are never shared between tasks.
 */
static __attribute__((noipa)) int tls_owner(void)
{
	if (!t_me)
		t_me = tid_raw();
	return t_me;
}

struct job {
	char *page;		/* not mapped yet: the store faults */
	int tid_before, tid_after, tls_before, tls_after;
	int done;
};

static long fn(void *data)
{
	struct job *j = data;

	j->tid_before = tid_raw();
	j->tls_before = tls_owner();
	j->page[0] = 1;		/* the only thing in between */
	j->tid_after = tid_raw();
	j->tls_after = tls_owner();
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return complete_threadlet_fn(j, &ahu);
}

/* Pops one completion, polling for up to @ms milliseconds; NULL if none. */
static void *wait_event(int ms)
{
	for (int i = 0; i <= ms; i++) {
		void *ev = async_ring_pop(&ahu);

		if (ev)
			return ev;
		usleep(1000);
	}
	return NULL;
}

/* Holds mmap_lock for write as often as it can. */
static void *locker(void *arg)
{
	char *big = arg;

	while (!stop) {
		mprotect(big, BIG, PROT_READ);
		mprotect(big, BIG, PROT_READ | PROT_WRITE);
	}
	return NULL;
}

int main(void)
{
	static struct job jobs[NJOBS];
	int moved = 0, async = 0, inplace = 0, other = 0, posted = 0, extra = 0;
	int disagree = 0, head_bad = 0, unparked = 0, lockers = 0, me;
	unsigned long stack;
	pthread_t lt[2];
	char *big, *pages;

	me = tid_raw();
	tl_ok(tls_owner() == me, "the head's TLS is its own");
	tl_ok(async_head_init(&ahu, 1024, 8) == 0, "async_head_init");
	big = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	pages = mmap(NULL, NJOBS * 4096UL, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stack = threadlet_stack_alloc(STACK_SZ);
	tl_ok(big != MAP_FAILED && pages != MAP_FAILED && !threadlet_err(stack),
	      "mappings");
	if (big == MAP_FAILED || pages == MAP_FAILED || threadlet_err(stack))
		return tl_exit();
	for (int i = 0; i < 2; i++)
		lockers += !pthread_create(&lt[i], NULL, locker, big);
	tl_ok(lockers == 2, "two threads loop on mprotect()");

	for (int i = 0; i < NJOBS; i++) {
		struct job *j = &jobs[i];
		void *ev;
		long r;

		j->page = pages + (size_t)i * 4096;
		/* A threadlet that went async still runs on the stack: wait. */
		r = threadlet_exec(fn, j, stack, &ahu);
		if (r == 0)
			async++;
		else if (r == 1)
			inplace++;
		else
			other++;
		if (tid_raw() != me || tls_owner() != me)
			head_bad++;
		while (!__atomic_load_n(&j->done, __ATOMIC_ACQUIRE))
			usleep(100);
		if (r == 0) {
			ev = wait_event(10000);
			posted += ev == j;
			extra += ev && ev != j;
		}
		if (async_ring_pop(&ahu))
			extra++;
		if (j->tid_before != j->tls_before || j->tid_after != j->tls_after) {
			if (disagree++ < 5)
				tl_diag("job %d: TID %d with the TLS of %d before the store, TID %d with the TLS of %d after",
					i, j->tid_before, j->tls_before, j->tid_after, j->tls_after);
		}
		if (j->tid_before != j->tid_after && moved++ < 3)
			tl_diag("job %d: handed off at the store, TID %d -> %d, threadlet_exec() returned %ld",
				i, j->tid_before, j->tid_after, r);
		/* The threadlet is done with the stack once it is parked again. */
		unparked += !tl_wait_parked(&ahu, 8);
	}
	stop = 1;
	for (int i = 0; i < lockers; i++)
		pthread_join(lt[i], NULL);

	tl_diag("%d threadlets: %d went async, %d in place, %d other; %d handed off at one plain store",
		NJOBS, async, inplace, other, moved);
	tl_ok(other == 0, "threadlet_exec() returned 0 or 1 every time (%d other)", other);
	tl_ok(disagree == 0, "TID and TLS agree before and after the store, in every threadlet (%d disagree)",
	      disagree);
	tl_ok(head_bad == 0, "the head came back with its own TID and TLS every time (%d not)",
	      head_bad);
	tl_ok(posted == async && extra == 0,
	      "one completion per threadlet that went async (%d of %d, %d extra)", posted, async,
	      extra);
	tl_ok(unparked == 0, "the whole pool parked again after each threadlet (%d times not)",
	      unparked);
	if (moved)
		tl_ok(moved <= async, "a hand-off at the store is an async return (%d of %d)",
		      moved, async);
	else
		tl_skip_test("no fault slept on mmap_lock in this run");
	async_head_exit(&ahu);
	threadlet_stack_free(stack);
	return tl_exit();
}
