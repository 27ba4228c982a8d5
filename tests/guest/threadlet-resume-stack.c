// SPDX-License-Identifier: GPL-2.0
/*
 * The new head never touches the threadlet's stack.
 *
 * After a hand-off the kernel sends a pool thread to the library's resume
 * point as the new head, while the blocked task finishes the threadlet as
 * a cache-miss thread and posts its event; once the event is popped, the
 * program may free or reuse the stack (docs/threadlets.md). The resume
 * point once read the head's MXCSR and x87 control word from the stack's
 * top block, and on x86-64 cleared a word there for the unwinder: a new
 * head delayed at the resume point (a signal, preemption) read and wrote
 * a stack already freed (SIGSEGV), or already reused by the next
 * threadlet, whose return then crashed. Found by a helper's review.
 *
 * Here a signal handler holds the new head at the resume point (the
 * area's head_ip, read inside the threadlet) while another thread pops
 * the event and unmaps the stack. Expected: no crash; at least once the
 * stack was freed while the new head was held there; and the head's MXCSR
 * rounding mode, set before threadlet_exec(), is still its own after.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <threadlet.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include "tl_test.h"

static struct async_head_user ahu;
static unsigned long resume_ip;
static pid_t head_tid;
static volatile int cur_iter = -1, held_iter = -2, stop;
static volatile int held, freed_while_held;
static volatile unsigned long cur_stack;
static int job;

#define RC_MASK		0x6000u		/* MXCSR rounding control */
#define RC_ZERO		0x6000u		/* toward zero */

static unsigned int mxcsr_get(void)
{
	unsigned int v;

	__asm__ volatile("stmxcsr %0" : "=m"(v));
	return v;
}

static void mxcsr_set(unsigned int v)
{
	__asm__ volatile("ldmxcsr %0" :: "m"(v));
}

#ifdef __x86_64__
#define UC_IP(uc)	((uc)->uc_mcontext.gregs[REG_RIP])
#else
#define UC_IP(uc)	((uc)->uc_mcontext.gregs[REG_EIP])
#endif

static void on_usr1(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	(void)sig;
	(void)si;
	if ((unsigned long)UC_IP(uc) == resume_ip && held_iter != cur_iter) {
		held_iter = cur_iter;
		held++;
		nanosleep(&ts, NULL);
	}
}

static void on_segv(int sig)
{
	static const char msg[] = "not ok - SIGSEGV: the new head touched a freed stack\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

static long fn(void *d)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	(void)d;
	resume_ip = __threadlet_area.head_ip;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	return complete_threadlet_fn(&job, &ahu);
}

static void *kicker(void *a)
{
	(void)a;
	while (!stop) {
		syscall(SYS_tgkill, getpid(), head_tid, SIGUSR1);
		for (volatile int i = 0; i < 20000; i++)
			;
	}
	return NULL;
}

static void *consumer(void *a)
{
	(void)a;
	for (;;) {
		while (!async_ring_pop(&ahu))
			async_wait(1, ahu.user_ring_idx, &ahu);
		if (held_iter == cur_iter)
			freed_while_held++;
		threadlet_stack_free(cur_stack);	/* allowed: its event was popped */
		__atomic_store_n(&cur_stack, 0, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa = { 0 };
	unsigned int mxcsr0 = mxcsr_get();
	int i, handoffs = 0, mxcsr_ok = 1;
	pthread_t t;
	sigset_t s;

	head_tid = gettid();
	tl_ok(async_head_init_pool(&ahu, 64, 4, 4) == 0, "async head, 4 threads");
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGSEGV, on_segv);
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	pthread_create(&t, NULL, consumer, NULL);
	pthread_create(&t, NULL, kicker, NULL);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	for (i = 0; i < 400 && freed_while_held < 3; i++) {
		unsigned long st = threadlet_stack_alloc(1 << 16);
		long r;

		__atomic_store_n(&cur_stack, st, __ATOMIC_RELEASE);
		cur_iter = i;
		mxcsr_set((mxcsr0 & ~RC_MASK) | RC_ZERO);
		r = threadlet_exec(fn, NULL, st, &ahu);
		mxcsr_ok &= (mxcsr_get() & RC_MASK) == RC_ZERO;
		mxcsr_set(mxcsr0);
		if (r == 0) {
			handoffs++;
		} else {
			threadlet_stack_free(st);
			cur_stack = 0;
		}
		while (__atomic_load_n(&cur_stack, __ATOMIC_ACQUIRE))
			sched_yield();
	}
	stop = 1;
	tl_diag("%d threadlets, %d handed off, the new head held at the resume point %d times",
		i, handoffs, held);
	tl_ok(handoffs > 0 && freed_while_held > 0,
	      "the stack was freed while the new head was held at the resume point (%d times), no crash",
	      freed_while_held);
	tl_ok(mxcsr_ok, "the head's MXCSR rounding mode survived every threadlet_exec()");
	return tl_exit();
}
