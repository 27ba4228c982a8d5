// SPDX-License-Identifier: GPL-2.0
/*
 * One parked thread that cannot take a head's identity must not stop the
 * pool from handing off to the others.
 *
 * async_claim() takes the first parked thread (the stack's top, the last
 * to park). When threadlet_check_identity() or arch_threadlet_check()
 * refuses it (its nice, affinity, ioprio, a per-thread CPU timer, an
 * io_uring context, a tracer, an RT policy, ...), the hand-off tries one
 * other, and the refused thread goes to the bottom of the stack. Before
 * the fix it went back on top: every later hand-off of every head claimed
 * it again and fell back, while compatible threads stayed parked below
 * it, until it left (a signal, the idle timeout, the head's end). A
 * cache-miss thread whose threadlet used io_uring once (its task keeps
 * the context) stopped a fixed-size pool for good when it parked.
 *
 * Here, with raw parking (no libthreadlet pool): P1 parks with the head's
 * nice; P2 raises its own nice by one, then parks, on top. H arms its
 * area (a resume frame of its own) and sleeps in a pipe read.
 * Expected: H is handed off to P1 (P1's task resumes at H's frame) the
 * first time. Before the fix each of the rounds fell back (FB_SCHED).
 */
#include <sys/resource.h>
#include "safety.h"

#define ROUNDS	3

static struct async_head_user ahu;
static u64 ring[16];
static struct threadlet_area area_p1 __attribute__((aligned(128)));
static struct threadlet_area area_p2 __attribute__((aligned(128)));
static struct threadlet_area area_h __attribute__((aligned(128)));

static int pfd[2];
static volatile pid_t p1_tid, h_tid, resume_tid;
static int p_ok[2], resumed, h_round = -1, h_in_read = -1, h_back = -1, h_off[ROUNDS];
static unsigned long long h_fb[ROUNDS];
static unsigned int h_reason[ROUNDS];

static void *parker(void *arg)
{
	struct threadlet_area *a = arg ? &area_p2 : &area_p1;

	if (arg && setpriority(PRIO_PROCESS, 0, 1))
		return NULL;
	if (!arg)
		p1_tid = syscall(SYS_gettid);
	if (syscall(__NR_threadlet_register, a, sizeof(*a), 0))
		return NULL;
	__atomic_store_n(&p_ok[arg != NULL], 1, __ATOMIC_RELEASE);
	/* A claimed parker does not come back here: it is the head now. */
	sf_park_home(a, NULL, &ahu);
	__atomic_store_n(&a->flags, 0, __ATOMIC_RELEASE);
	syscall(__NR_threadlet_register, a, sizeof(*a), THREADLET_UNREGISTER);
	return NULL;
}

/* H's resume frame: runs in the parked thread that took H's identity. */
static void __attribute__((noreturn, used)) resume_fn(void)
{
	resume_tid = syscall(SYS_gettid);
	__atomic_store_n(&resumed, 1, __ATOMIC_RELEASE);
	for (;;)
		usleep(100000);
}

static void *h_main(void *arg)
{
	char *stack = arg, c;

	h_tid = syscall(SYS_gettid);
	if (syscall(__NR_threadlet_register, &area_h, sizeof(area_h), 0))
		return NULL;
	for (int i = 0; i < ROUNDS; i++) {
		unsigned long long fb0;

		while (__atomic_load_n(&h_round, __ATOMIC_ACQUIRE) != i)
			usleep(1000);
		fb0 = area_h.nr_fallbacks;
		/* Armed: the next sleep hands H off, or falls back. */
		if (syscall(__NR_threadlet_on, (unsigned long)(uintptr_t)resume_fn,
			    (unsigned long)(uintptr_t)(stack + (1 << 16) - 8), &ahu))
			break;
		__atomic_store_n(&h_in_read, i, __ATOMIC_RELEASE);
		if (read(pfd[0], &c, 1) != 1)
			break;
		/* Handed off: this is P1's identity now, with P1's area, off. */
		h_off[i] = syscall(__NR_threadlet_off);
		h_reason[i] = area_h.last_fallback;
		h_fb[i] = area_h.nr_fallbacks - fb0;
		__atomic_store_n(&h_back, i, __ATOMIC_RELEASE);
		if (h_off[i] != 1)
			break;
	}
	for (;;)
		usleep(100000);
}

static void scenario(void *arg)
{
	char *stack;
	pthread_t t;
	int fell = 0, rounds = 0;

	(void)arg;
	stack = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	sf_ok(stack != MAP_FAILED && !pipe(pfd) && sf_register_head(&ahu, ring, 16, 8) == 0,
	      "async head (8 threads), a pipe, a resume stack");

	sf_ok(!pthread_create(&t, NULL, parker, NULL) && tl_wait_parked(&ahu, 1) &&
	      p_ok[0], "P1 parked with the head's nice");
	sf_ok(!pthread_create(&t, NULL, parker, (void *)1) && tl_wait_parked(&ahu, 2) &&
	      p_ok[1], "P2 parked last, with nice +1");
	pthread_create(&t, NULL, h_main, stack);

	for (int i = 0; i < ROUNDS && !resumed; i++) {
		__atomic_store_n(&h_round, i, __ATOMIC_RELEASE);
		for (int j = 0; j < 2000 && !resumed; j++) {
			char st = h_tid ? sf_task_state(h_tid) : 0;

			if (st == 'S' && __atomic_load_n(&h_in_read, __ATOMIC_ACQUIRE) == i)
				break;
			usleep(1000);
		}
		usleep(20000);
		if (write(pfd[1], "x", 1) != 1)
			break;
		for (int j = 0; j < 2000 && __atomic_load_n(&h_back, __ATOMIC_ACQUIRE) != i &&
		     !resumed; j++)
			usleep(1000);
		rounds++;
		if (__atomic_load_n(&h_back, __ATOMIC_ACQUIRE) == i && h_off[i] == 1 && h_fb[i]) {
			fell++;
			tl_diag("round %d: H slept in place, fallback reason %u (%ld parked)",
				i, h_reason[i], async_head_parked(&ahu));
		}
	}
	tl_diag("area: %llu hand-offs, %llu fallbacks, last %u; resumed in %d (P1 %d, H %d)",
		area_h.nr_handoffs, area_h.nr_fallbacks, area_h.last_fallback,
		resume_tid, p1_tid, h_tid);
	sf_ok(resumed && resume_tid == h_tid && !fell,
	      "H handed off to the compatible parked thread (%d of %d rounds fell back)",
	      fell, rounds);
	sf_ok(sf_unregister_head(&ahu) == 0, "unregister the head");
	usleep(100000);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(scenario, NULL, 60);
	sf_child_ok(status, "an incompatible thread on top of the pool");
	return tl_exit();
}
