// SPDX-License-Identifier: GPL-2.0
/*
 * hunt-fault-handoff: the pattern of threadlet-fuzz's exit_identity(), in
 * isolation. A threadlet reads its thread's identity (gettid() and a TLS
 * variable), then makes one plain store, no system call, to a page that
 * is not mapped yet, while another thread holds mmap_lock for write
 * (mprotect() of a large populated region, in a loop). The fault sleeps
 * on mmap_lock, the threadlet is on, so the head is handed off right
 * there: the store completes in a task with another TID and TLS.
 *
 * This is the contract (semantics.md: a page fault, a contended sleeping
 * lock), and exactly what makes threadlet-fuzz mark a live head's slot
 * dead: whatever the threadlet read of "who am I" before any memory
 * access may be stale after it.
 *
 * Output: how many threadlets saw their TID and TLS change across the
 * store, and how many returned 0 (went async). Exit 0 when at least one
 * did (the hand-off at a fault happened), 1 otherwise.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <threadlet.h>

#define NJOBS		400
#define BIG		(64UL << 20)
#define STACK_SZ	(64 << 10)

static struct async_head_user ahu;
static volatile int stop;
__thread int t_me;		/* "which slot is mine": like t_self */

/* A fresh read of this thread's t_me: never cached across the fault. */
static int __attribute__((noinline)) my_slot(void)
{
	int v;

	__asm__ volatile("mov %%fs:t_me@tpoff, %0" : "=r"(v) : : "memory");
	return v;
}

struct job {
	char *page;			/* fresh page: the store faults */
	int tid_before, tid_after, me_before, me_after;
	int done;
};

static long gettid_raw(void)
{
	return syscall(SYS_gettid);
}

static long fn(void *data)
{
	struct job *j = data;

	j->tid_before = (int)gettid_raw();
	j->me_before = my_slot();
	j->page[0] = 1;			/* the only thing in between */
	j->tid_after = (int)gettid_raw();
	j->me_after = my_slot();
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return complete_threadlet_fn(j, &ahu);
}

/* Holds mmap_lock for write as much as it can. */
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
	int moved = 0, async = 0, inplace = 0, other = 0;
	pthread_t lt[2];
	char *big, *pages;
	unsigned long stack;

	t_me = (int)gettid_raw();
	if (async_head_init(&ahu, 1024, 8)) {
		perror("async_head_init");
		return 2;
	}
	big = mmap(NULL, BIG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		   -1, 0);
	pages = mmap(NULL, NJOBS * 4096UL, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (big == MAP_FAILED || pages == MAP_FAILED)
		return 2;
	for (int i = 0; i < 2; i++)
		pthread_create(&lt[i], NULL, locker, big);
	for (int i = 0; i < NJOBS; i++) {
		struct job *j = &jobs[i];
		long r;

		stack = threadlet_stack_alloc(STACK_SZ);
		if (!stack)
			return 2;
		/* Touch the stack first: only the job's page may fault. */
		memset((char *)stack - 16384, 0, 16384);
		j->page = pages + (size_t)i * 4096;
		r = threadlet_exec(fn, j, stack, &ahu);
		if (r == 0)
			async++;
		else if (r == 1)
			inplace++;
		else
			other++;
		while (!__atomic_load_n(&j->done, __ATOMIC_ACQUIRE))
			usleep(100);
		if (j->tid_before != j->tid_after) {
			if (moved < 5)
				printf("job %d: tid %d (TLS says %d) before the store, tid %d (TLS says %d) after; threadlet_exec returned %ld in tid %d\n",
				       i, j->tid_before, j->me_before, j->tid_after, j->me_after, r,
				       (int)gettid_raw());
			moved++;
		}
		while (async_ring_pop(&ahu))
			;
	}
	stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(lt[i], NULL);
	printf("hunt-fault-handoff: %d threadlets, %d went async, %d in place, %d other; %d changed TID across one plain store\n",
	       NJOBS, async, inplace, other, moved);
	return moved ? 0 : 1;
}
