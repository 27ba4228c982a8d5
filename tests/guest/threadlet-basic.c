// SPDX-License-Identifier: GPL-2.0
/*
 * Threadlets, the two basic paths: a threadlet that does not block runs in
 * place with no system call; one that blocks returns 0 to the head at once
 * and its event arrives in the ring exactly once.
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <threadlet.h>
#include <unistd.h>
#include "tl_test.h"
#include "tl_util.h"

static struct async_head_user ahu;

static long count_syscalls(int fd, long (*fn)(void *), void *arg)
{
	long long n = -1;

	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	fn(arg);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &n, sizeof(n)) != sizeof(n))
		return -1;
	return (long)n;
}

static long add_one(void *data)
{
	long *v = data;

	(*v)++;
	return complete_threadlet_fn(v, &ahu);
}

static long empty(void *data)
{
	(void)data;
	return 0;
}

static unsigned long stack;

static long run_add_one(void *data)
{
	return threadlet_exec(add_one, data, stack, &ahu);
}

struct blocker {
	int fd;
	char c;
	long n;
	pid_t tid_before, tid_after;
};

static long read_pipe(void *data)
{
	struct blocker *b = data;

	b->tid_before = gettid();
	b->n = read(b->fd, &b->c, 1);
	b->tid_after = gettid();
	return complete_threadlet_fn(b, &ahu);
}

static volatile int spin_stop;

/* Competes for CPU 0, so the threadlet below gets preempted. */
static void *spinner(void *arg)
{
	(void)arg;
	while (!spin_stop)
		;
	return NULL;
}

static long busy(void *data)
{
	long long end = *(long long *)data;
	struct timespec ts;

	do
		clock_gettime(CLOCK_MONOTONIC, &ts);
	while (ts.tv_sec * 1000000000LL + ts.tv_nsec < end);
	return complete_threadlet_fn(data, &ahu);
}

/* Runs in a child, before anything set the library up there. */
static int syscall_path_child(void)
{
	long v = 41, r;

	setenv("THREADLET_FORCE_SYSCALL", "1", 1);
	if (async_head_init(&ahu, 16, 2))
		return 10;
	if (threadlet_uses_vdso())
		return 11;
	r = threadlet_exec(add_one, &v, stack, &ahu);
	async_head_exit(&ahu);
	return r == 1 && v == 42 ? 0 : 12;
}

int main(void)
{
	struct threadlet_stats st0, st1;
	struct blocker b = { 0 };
	long v = 0, r, base, n;
	int pfd[2], status, fd;
	pid_t pid, tid = gettid();
	void *ev;

	stack = threadlet_stack_alloc(64 << 10);
	tl_ok(!threadlet_err(stack) && (stack & 15) == 0, "threadlet_stack_alloc gives an aligned top");

	pid = fork();
	if (pid == 0)
		_exit(syscall_path_child());
	status = -1;
	if (waitpid(pid, &status, 0) != pid)
		status = -1;
	tl_ok(status != -1 && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0,
	      "THREADLET_FORCE_SYSCALL=1: syscall path, same result (status %d)",
	      WEXITSTATUS(status));

	tl_ok(async_head_init(&ahu, 16, 2) == 0, "async_head_init(16 entries, 2 threads)");
	tl_ok(async_head_parked(&ahu) == 2, "both pool threads parked");
	tl_ok(threadlet_uses_vdso(), "threadlet_on/off found in the vDSO");

	r = threadlet_exec(add_one, &v, stack, &ahu);
	threadlet_stats(&st0);
	tl_ok(r == 1 && v == 1, "non-blocking threadlet ran in place (ret %ld)", r);
	tl_ok(st0.nr_sync == 1 && st0.nr_handoffs == 0, "area counts 1 sync run");
	tl_ok(async_ring_pop(&ahu) == NULL, "nothing posted for a sync run");

	fd = tl_tracepoint_counter("raw_syscalls/sys_enter");
	tl_ok(fd >= 0, "raw_syscalls:sys_enter counter opened");
	base = count_syscalls(fd, empty, NULL);
	n = count_syscalls(fd, run_add_one, &v);
	tl_ok(n == base && v == 2,
	      "non-blocking threadlet makes no system call (%ld vs %ld baseline)",
	      n, base);

	tl_ok(pipe(pfd) == 0, "pipe");
	b.fd = pfd[0];
	r = threadlet_exec(read_pipe, &b, stack, &ahu);
	tl_ok(r == 0, "threadlet blocked on an empty pipe: head returns 0 (ret %ld)", r);
	tl_ok(gettid() == tid, "head keeps its TID (%d)", gettid());
	tl_ok(b.n == 0 && b.tid_after == 0, "the read is still blocked");
	threadlet_stats(&st1);
	tl_ok(st1.nr_handoffs == 1, "area counts the hand-off");
	tl_ok(async_head_parked(&ahu) == 1, "one pool thread took over the head");
	tl_ok(write(pfd[1], "x", 1) == 1, "fill the pipe");
	r = async_wait(1, ahu.user_ring_idx, &ahu);
	tl_ok(r == 1, "async_wait wakes for the completion (ret %ld)", r);
	ev = async_ring_pop(&ahu);
	tl_ok(ev == &b && b.n == 1 && b.c == 'x', "event arrives with the result");
	tl_ok(async_ring_pop(&ahu) == NULL, "exactly once");
	tl_ok(b.tid_before == tid && b.tid_after != tid && b.tid_after > 0,
	      "the blocked part finished as another thread (%d -> %d)",
	      b.tid_before, b.tid_after);
	for (int i = 0; i < 1000 && async_head_parked(&ahu) != 2; i++)
		usleep(1000);
	tl_ok(async_head_parked(&ahu) == 2, "the cache-miss thread parked again");

	{
		cpu_set_t cpu0;
		pthread_t t;
		struct timespec ts;
		long long end;
		struct threadlet_stats s0, s1;
		long ret;
		char line[256];
		long nvcsw = -1;
		FILE *f;

		CPU_ZERO(&cpu0);
		CPU_SET(0, &cpu0);
		sched_setaffinity(0, sizeof(cpu0), &cpu0);
		pthread_create(&t, NULL, spinner, NULL);
		pthread_setaffinity_np(t, sizeof(cpu0), &cpu0);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		end = ts.tv_sec * 1000000000LL + ts.tv_nsec + 100000000LL;
		threadlet_stats(&s0);
		ret = threadlet_exec(busy, &end, stack, &ahu);
		threadlet_stats(&s1);
		spin_stop = 1;
		pthread_join(t, NULL);
		f = fopen("/proc/thread-self/status", "r");
		while (f && fgets(line, sizeof(line), f))
			sscanf(line, "nonvoluntary_ctxt_switches: %ld", &nvcsw);
		if (f)
			fclose(f);
		tl_ok(ret == 1 && nvcsw > 0 && s1.nr_handoffs == s0.nr_handoffs &&
		      s1.nr_fallbacks == s0.nr_fallbacks,
		      "a preempted threadlet (%ld involuntary switches) still runs in place",
		      nvcsw);
	}

	async_head_exit(&ahu);
	tl_ok(1, "async_head_exit joined the pool");
	threadlet_stack_free(stack);
	return tl_exit();
}
