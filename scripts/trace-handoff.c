// SPDX-License-Identifier: GPL-2.0
/*
 * Guest side of scripts/trace-handoff.py: one threadlet hand-off from the
 * main thread, one from a second thread and one futex pool wake (as
 * micro.c's handoff, handoff_thread and futex_handoff time them), then a
 * cached 4 KiB pread(), the same read as a one-atom syslet and the same
 * two reads as a chain whose second atom comes from a queue (io.c's
 * syslet and syslet_chains), each run TRACE_REPS times between two
 * marker system calls, getppid() where the measured path starts and
 * getpgrp() where it ends. The host turns
 * QEMU's instruction log on when this prints TRACE-READY and sends a byte
 * on the second serial port, and turns it off at TRACE-DONE.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <termios.h>
#include <threadlet.h>
#include <unistd.h>

#define TRACE_REPS	3
#define POOL		2

static struct async_head_user ahu;
static unsigned long stack;
static int pfd[2];
static volatile int marking;
static char byte;
static uint32_t job, done, waiting;
static int rfd;
static char rbuf[4096] __attribute__((aligned(4096)));

static void mark_start(void)
{
	if (marking)
		syscall(SYS_getppid);
}

static void mark_end(void)
{
	if (marking)
		syscall(SYS_getpgrp);
}

static void die(const char *what)
{
	printf("trace-handoff: %s failed\n", what);
	exit(1);
}

static long blocker_fn(void *data)
{
	mark_start();
	if (read(pfd[0], &byte, 1) != 1)
		die("read");
	return complete_threadlet_fn(data, &ahu);
}

static void handoff(void)
{
	if (threadlet_exec(blocker_fn, &byte, stack, &ahu) != 0)
		die("threadlet_exec (no hand-off)");
	mark_end();
	if (write(pfd[1], "x", 1) != 1)
		die("write");
	async_wait(1, ahu.user_ring_idx, &ahu);
	if (async_ring_pop(&ahu) != &byte)
		die("async_ring_pop");
	while (async_head_parked(&ahu) != POOL)
		sched_yield();
}

/* A second thread's first hand-offs register it: they are not traced. */
static void *thread_head(void *arg)
{
	int i;

	for (i = 0; i < 20; i++)
		handoff();
	marking = 1;
	for (i = 0; i < TRACE_REPS; i++)
		handoff();
	marking = 0;
	return arg;
}

static void futex_op(uint32_t *a, int op, uint32_t v)
{
	syscall(SYS_futex, a, op, v, NULL, NULL, 0);
}

static void *futex_worker(void *arg)
{
	uint32_t seen = 0;

	for (;;) {
		__atomic_store_n(&waiting, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&job, __ATOMIC_ACQUIRE) == seen)
			futex_op(&job, FUTEX_WAIT_PRIVATE, seen);
		__atomic_store_n(&waiting, 0, __ATOMIC_RELAXED);
		mark_end();
		seen = __atomic_load_n(&job, __ATOMIC_ACQUIRE);
		__atomic_store_n(&done, done + 1, __ATOMIC_RELEASE);
		futex_op(&done, FUTEX_WAKE_PRIVATE, 1);
	}
	return arg;
}

/*
 * On one vCPU, once the worker said it is about to wait and yielded the
 * CPU back, it sleeps in FUTEX_WAIT (micro.c checks /proc instead).
 */
static void futex_wake(void)
{
	uint32_t d = __atomic_load_n(&done, __ATOMIC_ACQUIRE);

	while (!__atomic_load_n(&waiting, __ATOMIC_ACQUIRE))
		sched_yield();
	sched_yield();
	mark_start();
	__atomic_store_n(&job, job + 1, __ATOMIC_RELEASE);
	futex_op(&job, FUTEX_WAKE_PRIVATE, 1);
	while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) == d)
		futex_op(&done, FUTEX_WAIT_PRIVATE, d);
}

static void cached_pread(void)
{
	mark_start();
	if (pread(rfd, rbuf, sizeof(rbuf), 0) != sizeof(rbuf))
		die("pread");
	mark_end();
}

/* A chain of @n pread atoms (1 or 2), the second taken from a queue. */
static void syslet_pread(unsigned int n)
{
	static unsigned long long fd, len = sizeof(rbuf), buf, off, ent;
	static long long ret[2];
	static struct syslet_uatom a[2];
	static struct syslet_queue q;
	struct syslet_uatom *last;

	fd = rfd;
	buf = (uintptr_t)rbuf;
	for (unsigned int i = 0; i < 2; i++)
		syslet_atom_init(&a[i], SYS_pread64, SYSLET_STOP_ON_NON_POSITIVE,
				 &ret[i], NULL, 4, &fd, &buf, &len, &off);
	ent = (uintptr_t)&a[1];
	q = (struct syslet_queue){ .head = 0, .nr = 1, .entries = (uintptr_t)&ent };
	if (n == 2)
		syslet_link_queue(&a[0], &q);
	mark_start();
	last = async_exec(&a[0], &ahu);
	mark_end();
	if (last != &a[n - 1] || ret[n - 1] != sizeof(rbuf))
		die("async_exec");
}

int main(void)
{
	struct termios t;
	pthread_t th;
	int i, tty;
	char c;

	stack = threadlet_stack_alloc(1 << 16);
	rfd = open("/proc/self/exe", O_RDONLY);
	if (threadlet_err(stack) || async_head_init(&ahu, 16, POOL) || pipe(pfd) ||
	    rfd < 0)
		die("setup");
	if (pthread_create(&th, NULL, futex_worker, NULL))
		die("pthread_create");
	for (i = 0; i < 200; i++) {
		handoff();
		futex_wake();
		cached_pread();
		syslet_pread(1);
		syslet_pread(2);
	}
	tty = open("/dev/ttyS1", O_RDWR | O_NOCTTY);
	if (tty < 0 || tcgetattr(tty, &t))
		die("/dev/ttyS1");
	cfmakeraw(&t);
	tcsetattr(tty, TCSANOW, &t);
	printf("TRACE-READY\n");
	fflush(stdout);
	if (read(tty, &c, 1) != 1)
		die("read /dev/ttyS1");
	marking = 1;
	for (i = 0; i < TRACE_REPS; i++)
		handoff();
	marking = 0;
	if (pthread_create(&th, NULL, thread_head, NULL) || pthread_join(th, NULL))
		die("thread head");
	marking = 1;
	for (i = 0; i < TRACE_REPS; i++)
		futex_wake();
	for (i = 0; i < TRACE_REPS; i++)
		cached_pread();
	for (i = 0; i < TRACE_REPS; i++)
		syslet_pread(1);
	for (i = 0; i < TRACE_REPS; i++)
		syslet_pread(2);
	marking = 0;
	printf("TRACE-DONE\n");
	fflush(stdout);
	return 0;
}
