// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input to every threadlet system call and library call gets the
 * documented errno, and leaves nothing behind (threads, file descriptors).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "tl_test.h"
#include "tl_util.h"

/*
 * An address user space may not pass: the kernel's direct map, or for a
 * 32-bit program, whose pointers cannot reach it, the top page of its
 * 4 GiB (above its TASK_SIZE). KERNEL_ADDR is the kernel's address for
 * the u64 fields of the uapi structures, which a 32-bit program can fill.
 */
#define KERNEL_ADDR	0xffff888000000000ULL
#if UINTPTR_MAX > 0xffffffffUL
#define KERNEL_PTR	((void *)KERNEL_ADDR)
#else
#define KERNEL_PTR	((void *)0xfffff000UL)
#endif

static struct threadlet_area area __attribute__((aligned(128)));
static struct threadlet_area area2 __attribute__((aligned(128)));
static uint64_t ring[16] __attribute__((aligned(8)));	/* see heads() */

static long sys(long nr, long a, long b, long c)
{
	return syscall(nr, a, b, c);
}

static void fill_addr(struct async_head_user *a, uint64_t r, uint64_t bytes,
		      uint64_t threads)
{
	memset(a, 0, sizeof(*a));
	a->completion_ring = r;
	a->ring_size_bytes = bytes;
	a->max_cachemiss_threads = threads;
}

static void fill(struct async_head_user *a, uint64_t *r, uint64_t bytes,
		 uint64_t threads)
{
	fill_addr(a, (uintptr_t)r, bytes, threads);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void registration(void)
{
	long sz = sizeof(area);

	tl_errno(sys(__NR_threadlet_register, (long)&area, sz, 4), EINVAL, "register: unknown flag");
	tl_errno(sys(__NR_threadlet_register, (long)&area, sz - 8, 0), EINVAL, "register: wrong size");
	tl_errno(sys(__NR_threadlet_register, (long)&area + 64, sz, 0), EINVAL, "register: misaligned");
	tl_errno(sys(__NR_threadlet_register, 0, sz, 0), EFAULT, "register: NULL");
	tl_errno(sys(__NR_threadlet_register, (long)KERNEL_PTR, sz, 0), EFAULT, "register: kernel pointer");
	tl_errno(sys(__NR_threadlet_on, 1, 1, 0), EINVAL, "threadlet_on: not registered");
	tl_errno(sys(__NR_threadlet_off, 0, 0, 0), EINVAL, "threadlet_off: not registered");
	tl_errno(sys(__NR_threadlet_register, (long)&area, sz, THREADLET_UNREGISTER), EINVAL,
		 "unregister: not registered");
	tl_ok(sys(__NR_threadlet_register, (long)&area, sz, 0) == 0, "register");
	tl_errno(sys(__NR_threadlet_register, (long)&area, sz, 0), EBUSY, "register: twice");
	tl_errno(sys(__NR_threadlet_register, (long)&area2, sz, 0), EBUSY, "register: a second area");
	tl_errno(sys(__NR_threadlet_register, (long)&area2, sz, THREADLET_UNREGISTER), EINVAL,
		 "unregister: not this thread's area");
	tl_ok(sys(__NR_threadlet_on, 0x1000, 0x2000, 0) == 0 && (area.flags & THREADLET_ON),
	      "threadlet_on syscall arms the area");
	tl_errno(sys(__NR_threadlet_on, 0x1000, 0x2000, 0), EBUSY, "threadlet_on: already on");
	tl_errno(sys(__NR_threadlet_register, (long)&area, sz, THREADLET_UNREGISTER), EBUSY,
		 "unregister: threadlet on");
	tl_ok(sys(__NR_threadlet_off, 0, 0, 0) == 1, "threadlet_off: 1 (ran in place)");
	tl_ok(sys(__NR_threadlet_off, 0, 0, 0) == 0, "threadlet_off again: 0");
}

/* A fresh mapping of @fd (-1: anonymous), one page, zeroed. */
static void *map_one(int fd, int flags)
{
	void *p;

	if (fd >= 0 && ftruncate(fd, 4096))
		return NULL;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, flags, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* The area's memory, in a thread of its own (an area per thread). */
static void *area_memory(void *arg)
{
	char path[] = "/mnt/disk/tl-area.XXXXXX";
	long sz = sizeof(struct threadlet_area);
	int fd = mkstemp(path), mfd = memfd_create("tl-area", 0);
	void *p;

	(void)arg;
	if (fd < 0) {
		tl_skip_test("register in a file mapping: no writable disk");
	} else {
		unlink(path);
		p = map_one(fd, MAP_SHARED);
		tl_errno(p ? sys(__NR_threadlet_register, (long)p, sz, 0) : 0, EOPNOTSUPP,
			 "register: in a shared mapping of an ext4 file");
		p = map_one(fd, MAP_PRIVATE);
		tl_ok(p && sys(__NR_threadlet_register, (long)p, sz, 0) == 0 &&
		      sys(__NR_threadlet_register, (long)p, sz, THREADLET_UNREGISTER) == 0,
		      "register: in a private mapping of that file (copied on write)");
		close(fd);
	}
	p = mfd >= 0 ? map_one(mfd, MAP_SHARED) : NULL;
	tl_ok(p && sys(__NR_threadlet_register, (long)p, sz, 0) == 0 &&
	      sys(__NR_threadlet_register, (long)p, sz, THREADLET_UNREGISTER) == 0,
	      "register: in a shared memfd mapping (shmem)");
	if (mfd >= 0)
		close(mfd);
	return NULL;
}

static void heads(void)
{
	/* The i386 ABI aligns a u64 to 4; a head must be aligned to 8. */
	struct async_head_user a __attribute__((aligned(8))), b __attribute__((aligned(8)));
	long sz = sizeof(a);

	fill(&a, ring, sizeof(ring), 2);
	tl_errno(sys(__NR_async_register, (long)&a, sz, 8), EINVAL, "async_register: unknown flag");
	tl_errno(sys(__NR_async_register, (long)&a, sz, ASYNC_UNREGISTER | ASYNC_QUERY_PARKED),
		 EINVAL, "async_register: two ops");
	tl_errno(sys(__NR_async_register, (long)&a + 4, sz, 0), EINVAL, "async_register: misaligned");
	tl_errno(sys(__NR_async_register, (long)&a, sz + 8, 0), EINVAL, "async_register: wrong size");
	tl_errno(sys(__NR_async_register, 0, sz, 0), EFAULT, "async_register: NULL");
	tl_errno(sys(__NR_async_register, (long)KERNEL_PTR, sz, 0), EFAULT, "async_register: kernel pointer");
	fill(&b, ring, 0, 2);
	tl_errno(sys(__NR_async_register, (long)&b, sz, 0), EINVAL, "async_register: zero ring");
	fill(&b, ring, 24, 2);
	tl_errno(sys(__NR_async_register, (long)&b, sz, 0), EINVAL, "async_register: 3 entries");
	fill(&b, ring, 12, 2);
	tl_errno(sys(__NR_async_register, (long)&b, sz, 0), EINVAL, "async_register: size not a multiple of 8");
	fill(&b, ring, (ASYNC_RING_MAX_ENTRIES * 2ULL) * 8, 2);
	tl_errno(sys(__NR_async_register, (long)&b, sz, 0), EINVAL, "async_register: oversized ring");
	fill(&b, ring, sizeof(ring), 0);
	tl_errno(sys(__NR_async_register, (long)&b, sz, 0), EINVAL, "async_register: no threads");
	fill(&b, ring, sizeof(ring), ASYNC_MAX_CACHEMISS + 1);
	tl_errno(sys(__NR_async_register, (long)&b, sz, 0), EINVAL, "async_register: too many threads");
	fill_addr(&b, KERNEL_ADDR, sizeof(ring), 2);
	tl_errno(sys(__NR_async_register, (long)&b, sz, 0), EFAULT, "async_register: kernel ring");
	fill(&b, (uint64_t *)((char *)ring + 4), 64, 2);
	tl_errno(sys(__NR_async_register, (long)&b, sz, 0), EINVAL, "async_register: misaligned ring");
	tl_errno(sys(__NR_async_register, (long)&b, sz, ASYNC_UNREGISTER), EINVAL,
		 "unregister: unknown head");
	tl_errno(sys(__NR_async_register, (long)&b, sz, ASYNC_QUERY_PARKED), EINVAL,
		 "query: unknown head");

	tl_ok(sys(__NR_async_register, (long)&a, sz, 0) == 0, "async_register");
	tl_errno(sys(__NR_async_register, (long)&a, sz, 0), EBUSY, "async_register: twice");
	tl_ok(sys(__NR_async_register, (long)&a, sz, ASYNC_QUERY_PARKED) == 0, "query: 0 parked");

	tl_errno(sys(__NR_async_wait, 1, 0, (long)&b), EINVAL, "async_wait: unknown head");
	tl_errno(sys(__NR_async_wait, 17, 0, (long)&a), EINVAL, "async_wait: more than the ring");
	tl_errno(sys(__NR_async_wait, 1, 5, (long)&a), EINVAL, "async_wait: index past the kernel's");
	tl_ok(sys(__NR_async_wait, 0, 0, (long)&a) == 0, "async_wait(0): returns at once");
	/* A handler without SA_RESTART ends the wait; a stop and continue does not. */
	struct sigaction sa = { .sa_handler = on_alarm };
	pid_t parent = getpid(), child;
	long long t0, ms;
	long r;

	sigaction(SIGALRM, &sa, NULL);
	ualarm(100000, 0);
	tl_errno(sys(__NR_async_wait, 1, 0, (long)&a), EINTR, "async_wait: interrupted by a signal");
	child = fork();
	if (child == 0) {
		usleep(50000);
		kill(parent, SIGSTOP);
		usleep(50000);
		kill(parent, SIGCONT);
		_exit(0);
	}
	ualarm(400000, 0);
	t0 = tl_now_ns();
	r = sys(__NR_async_wait, 1, 0, (long)&a);
	ms = (tl_now_ns() - t0) / 1000000;
	tl_ok(r == -1 && errno == EINTR && ms >= 350,
	      "async_wait: a stop and continue does not end it (returned %ld, errno %d, after %lld ms)",
	      r, errno, ms);
	waitpid(child, NULL, 0);

	/* async_thread needs a registered area with a home frame, and a head. */
	tl_errno(sys(__NR_async_thread, 0, (long)&a, 0), EINVAL, "async_thread: no home frame");
	area.home_ip = 0x1000;
	area.home_sp = 0x2000;
	tl_errno(sys(__NR_async_thread, 0, (long)&b, 0), EINVAL, "async_thread: unknown head");
	sys(__NR_threadlet_on, 0x1000, 0x2000, 0);
	tl_errno(sys(__NR_async_thread, 0, (long)&a, 0), EBUSY, "async_thread: threadlet on");
	sys(__NR_threadlet_off, 0, 0, 0);
	fill(&b, ring, sizeof(ring), 1);
	area.home_ip = area.home_sp = 0;

	tl_ok(sys(__NR_async_register, (long)&a, sz, ASYNC_UNREGISTER) == 0, "unregister");
	tl_errno(sys(__NR_async_register, (long)&a, sz, ASYNC_UNREGISTER), EINVAL, "unregister: twice");
	tl_ok(sys(__NR_threadlet_register, (long)&area, sizeof(area), THREADLET_UNREGISTER) == 0,
	      "threadlet area unregistered");
}

static long noop(void *d)
{
	(void)d;
	return 1;
}

static struct async_head_user *exit_ahu;
static int exit_ret;

static long exit_fn(void *data)
{
	exit_ret = async_head_exit(exit_ahu);
	return complete_threadlet_fn(data, exit_ahu);
}

static void library(void)
{
	struct async_head_user a;
	unsigned long stack = threadlet_stack_alloc(16 << 10);

	tl_ok(async_head_init(&a, 0, 2) == -EINVAL, "async_head_init: zero ring");
	tl_ok(async_head_init(&a, 12, 2) == -EINVAL, "async_head_init: ring not a power of two");
	tl_ok(async_head_init(&a, 1 << 20, 2) == -EINVAL, "async_head_init: oversized ring");
	tl_ok(async_head_init(&a, 16, 0) == -EINVAL, "async_head_init: no threads");
	tl_ok(async_head_init(NULL, 16, 2) == -EINVAL, "async_head_init: NULL");
	tl_ok(async_head_init(&a, 16, 2) == 0, "async_head_init");
	tl_ok(async_head_init(&a, 16, 2) == -EBUSY, "async_head_init: twice");
	{
		static uint64_t raw_ring[8];
		struct async_head_user r = {
			.completion_ring = (uintptr_t)raw_ring,
			.ring_size_bytes = sizeof(raw_ring),
			.max_cachemiss_threads = 1,
		};

		tl_ok(syscall(__NR_async_register, &r, sizeof(r), 0) == 0,
		      "a head registered without the library");
		tl_ok(async_head_init(&r, 16, 2) == -EBUSY &&
		      r.completion_ring == (uintptr_t)raw_ring && r.ring_size_bytes == sizeof(raw_ring),
		      "async_head_init on it: -EBUSY, and it is left as it was");
		syscall(__NR_async_register, &r, sizeof(r), ASYNC_UNREGISTER);
	}
	tl_ok(threadlet_exec(noop, NULL, stack + 8, &a) == -EINVAL, "threadlet_exec: misaligned stack");
	tl_ok(threadlet_exec(noop, NULL, 0, &a) == -EINVAL, "threadlet_exec: no stack");
	tl_ok(threadlet_exec(NULL, NULL, stack, &a) == -EINVAL, "threadlet_exec: NULL fn");
	tl_ok(threadlet_exec(noop, NULL, stack, NULL) == -EINVAL, "threadlet_exec: NULL head");
	tl_ok(threadlet_exec(noop, NULL, stack, &a) == 1, "a fn that forgets complete_threadlet_fn still returns 1");
	exit_ahu = &a;
	tl_ok(threadlet_exec(exit_fn, &exit_ret, stack, &a) == 1 && exit_ret == -EBUSY,
	      "async_head_exit() inside a threadlet: -EBUSY (%d), the pool stays", exit_ret);
	/* The area is registered now: these take the fast path. */
	tl_ok(threadlet_exec(noop, NULL, (unsigned long)-EBUSY, &a) == -EINVAL,
	      "threadlet_exec: an error value as the stack (-EBUSY, 16-byte aligned)");
	tl_ok(threadlet_exec(noop, NULL, (unsigned long)-4080, &a) == -EINVAL,
	      "threadlet_exec: an error value as the stack (-4080)");
	tl_ok(threadlet_exec(noop, NULL, 32, &a) == -EINVAL, "threadlet_exec: a stack top of 32");
	tl_ok(complete_threadlet_fn(NULL, &a) == -EINVAL, "complete_threadlet_fn outside a threadlet");
	tl_ok(threadlet_err(threadlet_stack_alloc(0)) == -EINVAL,
	      "threadlet_stack_alloc(0): -EINVAL");
	tl_ok(threadlet_stack_free(stack + 16) == -EINVAL,
	      "threadlet_stack_free of a non-stack: -EINVAL, ignored");
	async_head_exit(&a);
	threadlet_stack_free(stack);
}

static int nr_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	int threads0 = tl_nr_threads(), fds0 = nr_fds();
	pthread_t t;

	registration();
	if (pthread_create(&t, NULL, area_memory, NULL) == 0)
		pthread_join(t, NULL);
	heads();
	library();
	tl_ok(tl_nr_threads_settle(threads0) == threads0 && nr_fds() == fds0,
	      "no thread or file descriptor left behind");
	return tl_exit();
}
