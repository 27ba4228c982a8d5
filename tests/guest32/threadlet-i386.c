// SPDX-License-Identifier: GPL-2.0
/*
 * libthreadlet in a 32-bit (i386) process on the x86-64 kernel: the
 * 32-bit vDSO's threadlet_on/off, registration, the pool, the ring, the
 * errors, and the hand-off of a threadlet that blocks, with the head's
 * identity kept: TID, pthread_self(), the %gs selector and the GDT TLS
 * entry glibc's TLS uses, an extra set_thread_area() entry only the head
 * has, __thread variables, errno and the signal mask. The checks run
 * twice: through the vDSO, then again in a child that uses the system
 * calls (THREADLET_FORCE_SYSCALL=1).
 */
#include <asm/ldt.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tl_test.h"
#include "tl_util.h"

#ifndef __i386__
#error "build this test with -m32"
#endif

static struct async_head_user ahu;
static int runs;
static __thread long tls_value;

static unsigned short gs_sel(void)
{
	unsigned short gs;

	__asm__ volatile("mov %%gs, %0" : "=r"(gs));
	return gs;
}

/* The base of GDT TLS entry @entry as get_thread_area() reads it back. */
static long tls_entry_base(int entry)
{
	struct user_desc d = { .entry_number = entry };

	if (syscall(SYS_get_thread_area, &d))
		return -1;
	return (long)d.base_addr;
}

struct blocker {
	int fd, extra;
	pid_t tid_before, tid_after;
	long extra_before, extra_after;
	int done;
};

/* Blocks in read() on an empty pipe: the head is handed off there. */
static long read_pipe(void *data)
{
	struct blocker *b = data;
	char c;

	runs++;
	b->tid_before = gettid();
	b->extra_before = tls_entry_base(b->extra);
	if (read(b->fd, &c, 1) != 1)
		b->tid_after = -1;
	else
		b->tid_after = gettid();
	b->extra_after = tls_entry_base(b->extra);
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return complete_threadlet_fn(b, &ahu);
}

static void *write_later(void *arg)
{
	usleep(50000);
	return (void *)(long)write(*(int *)arg, "x", 1);
}

static long quick(void *data)
{
	runs++;
	*(long *)data = 42;
	return complete_threadlet_fn(data, &ahu);
}

/*
 * One hand-off from the head, with a set_thread_area() entry the pool
 * threads do not have (made after they started) and everything the head
 * must keep checked afterwards.
 */
static void check_handoff(void)
{
	static char base_mark[16];
	struct user_desc d = {
		.entry_number = -1, .base_addr = (uintptr_t)base_mark,
		.limit = 0xfff, .seg_32bit = 1, .limit_in_pages = 1, .useable = 1,
	};
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	struct threadlet_stats st0, st1;
	struct blocker b = { 0 };
	pthread_t self = pthread_self(), w;
	unsigned short gs = gs_sel();
	long *tls_addr = &tls_value, glibc_base = tls_entry_base(gs >> 3);
	pid_t tid = gettid();
	sigset_t mask, got;
	int pfd[2], err, n;
	long r;

	tl_ok(syscall(SYS_set_thread_area, &d) == 0 && tls_entry_base(d.entry_number) ==
	      (long)(uintptr_t)base_mark, "set_thread_area: a GDT TLS entry of the head's own (%d)",
	      d.entry_number);
	if (pipe(pfd) || !stack)
		return;
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	tls_value = tid * 3;
	b.fd = pfd[0];
	b.extra = d.entry_number;
	pthread_create(&w, NULL, write_later, &pfd[1]);

	threadlet_stats(&st0);
	errno = 1234;
	r = threadlet_exec(read_pipe, &b, stack, &ahu);
	err = errno;
	threadlet_stats(&st1);
	tl_ok(r == 0, "blocking threadlet went async (ret %ld)", r);
	tl_ok(st1.nr_handoffs == st0.nr_handoffs + 1 && st1.nr_fallbacks == st0.nr_fallbacks,
	      "one hand-off counted, no fallback (%llu, %llu, last %u)",
	      st1.nr_handoffs - st0.nr_handoffs, st1.nr_fallbacks - st0.nr_fallbacks,
	      st1.last_fallback);
	tl_ok(gettid() == tid, "head keeps its TID (%d)", tid);
	tl_ok(pthread_equal(pthread_self(), self), "pthread_self() kept");
	tl_ok(err == 1234, "errno kept (%d)", err);
	tl_ok(&tls_value == tls_addr && tls_value == tid * 3,
	      "__thread variable kept (address and value)");
	tl_ok(gs_sel() == gs && tls_entry_base(gs >> 3) == glibc_base,
	      "%%gs selector %#x and its GDT entry's base kept", gs);
	tl_ok(tls_entry_base(d.entry_number) == (long)(uintptr_t)base_mark,
	      "the head's own set_thread_area() entry kept");
	pthread_sigmask(SIG_SETMASK, NULL, &got);
	tl_ok(sigismember(&got, SIGUSR2) && !sigismember(&got, SIGUSR1),
	      "signal mask kept");
	for (n = 0; n < 10000 && !async_ring_pop(&ahu); n++)
		usleep(1000);
	pthread_join(w, NULL);
	tl_ok(n < 10000 && __atomic_load_n(&b.done, __ATOMIC_ACQUIRE),
	      "completion posted once the read returned");
	tl_ok(b.tid_before == tid && b.tid_after > 0 && b.tid_after != tid,
	      "the threadlet went on as a cache-miss thread (TID %d -> %d)",
	      b.tid_before, b.tid_after);
	tl_ok(b.extra_before == (long)(uintptr_t)base_mark && b.extra_after == 0,
	      "...with that thread's own TLS entries (extra entry %#lx -> %#lx)",
	      (unsigned long)b.extra_before, (unsigned long)b.extra_after);
	tl_ok(tl_wait_parked(&ahu, 2), "the pool is parked again");
	d.base_addr = 0;
	d.limit = 0;
	d.seg_32bit = 0;
	d.limit_in_pages = 0;
	d.read_exec_only = 1;
	d.seg_not_present = 1;
	d.useable = 0;
	syscall(SYS_set_thread_area, &d);
	sigemptyset(&mask);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	close(pfd[0]);
	close(pfd[1]);
	threadlet_stack_free(stack);
}

static void checks(int want_vdso)
{
	int threads0 = tl_nr_threads();
	struct threadlet_stats st0, st1;
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	long v = 0, r;

	tl_ok(threadlet_uses_vdso() == want_vdso, "threadlet_on/off through the %s",
	      want_vdso ? "32-bit vDSO" : "system calls");
	tl_ok(!threadlet_err(stack) && !(stack & 15), "threadlet_stack_alloc gives an aligned top");
	tl_ok(async_head_init(&ahu, 16, 2) == 0, "async_head_init(16 entries, 2 threads)");
	tl_ok(tl_wait_parked(&ahu, 2), "both pool threads parked");
	tl_ok(tl_nr_threads() == threads0 + 2, "pool threads started");

	threadlet_stats(&st0);
	r = threadlet_exec(quick, &v, stack, &ahu);
	threadlet_stats(&st1);
	tl_ok(r == 1 && v == 42 && runs == 1, "non-blocking threadlet ran in place (ret %ld)", r);
	tl_ok(st1.nr_sync == st0.nr_sync + 1, "area counts 1 sync run");
	tl_ok(async_ring_pop(&ahu) == NULL, "nothing posted");

	check_handoff();
	tl_ok(runs == 2 && async_ring_pop(&ahu) == NULL, "nothing else posted");

	tl_ok(threadlet_exec(NULL, &v, stack, &ahu) == -EINVAL, "NULL fn: -EINVAL");
	tl_ok(threadlet_exec(quick, &v, stack - 8, &ahu) == -EINVAL,
	      "misaligned stack: -EINVAL");
	tl_ok(threadlet_exec(quick, &v, stack, NULL) == -EINVAL, "NULL ahu: -EINVAL");
	tl_ok(complete_threadlet_fn(NULL, &ahu) == -EINVAL,
	      "complete_threadlet_fn outside a threadlet: -EINVAL");
	tl_ok(async_head_init(&ahu, 16, 2) == -EBUSY, "second async_head_init: -EBUSY");
	tl_ok(async_wait(1000, ahu.user_ring_idx, &ahu) == -EINVAL,
	      "async_wait for more than the ring holds: -EINVAL");

	async_head_exit(&ahu);
	tl_ok(tl_nr_threads_settle(threads0) == threads0, "async_head_exit joined the pool");
	threadlet_stack_free(stack);
}

int main(int argc, char **argv)
{
	int st;
	pid_t pid;

	if (argc > 1) {		/* the child: same checks, system calls, quiet */
		setenv("THREADLET_FORCE_SYSCALL", "1", 1);
		if (!freopen("threadlet-i386-syscall.out", "w", stdout))
			return 1;
		checks(0);
		return tl_exit();
	}
	checks(1);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "syscall", (char *)NULL);
		_exit(127);
	}
	st = -1;
	if (pid > 0 && waitpid(pid, &st, 0) != pid)
		st = -1;
	tl_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "the same checks pass through the system calls (status %#x)", st);
	if (st) {
		FILE *f = fopen("threadlet-i386-syscall.out", "r");
		char line[256];

		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "not ok", 6))
				tl_diag("syscall path: %.200s", line);
		if (f)
			fclose(f);
	}
	unlink("threadlet-i386-syscall.out");
	return tl_exit();
}
