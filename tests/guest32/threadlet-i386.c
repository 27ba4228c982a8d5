// SPDX-License-Identifier: GPL-2.0
/*
 * libthreadlet in a 32-bit (i386) process on the x86-64 kernel. The
 * kernel does not hand off 32-bit tasks yet: a threadlet that blocks
 * sleeps in place, returns 1 and counts a fallback with reason
 * THREADLET_FB_COMPAT. Everything else works as on x86-64: the 32-bit
 * vDSO's threadlet_on/off, registration, the pool, the ring, the errors.
 * The checks run twice: through the vDSO, then again in a child that
 * uses the system calls (THREADLET_FORCE_SYSCALL=1).
 */
#include <stdint.h>
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

static long quick(void *data)
{
	runs++;
	*(long *)data = 42;
	return complete_threadlet_fn(data, &ahu);
}

static long sleeper(void *data)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	runs++;
	*(long *)data = nanosleep(&ts, NULL);
	return complete_threadlet_fn(data, &ahu);
}

static void checks(int want_vdso)
{
	int threads0 = tl_nr_threads();
	struct threadlet_stats st0, st1;
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	long v = 0, r;

	tl_ok(threadlet_uses_vdso() == want_vdso, "threadlet_on/off through the %s",
	      want_vdso ? "32-bit vDSO" : "system calls");
	tl_ok(stack && !(stack & 15), "threadlet_stack_alloc gives an aligned top");
	tl_ok(async_head_init(&ahu, 16, 2) == 0, "async_head_init(16 entries, 2 threads)");
	tl_ok(tl_wait_parked(&ahu, 2), "both pool threads parked");
	tl_ok(tl_nr_threads() == threads0 + 2, "pool threads started");

	threadlet_stats(&st0);
	r = threadlet_exec(quick, &v, stack, &ahu);
	threadlet_stats(&st1);
	tl_ok(r == 1 && v == 42 && runs == 1, "non-blocking threadlet ran in place (ret %ld)", r);
	tl_ok(st1.nr_sync == st0.nr_sync + 1, "area counts 1 sync run");
	tl_ok(async_ring_pop(&ahu) == NULL, "nothing posted");

	st0 = st1;
	v = -1;
	r = threadlet_exec(sleeper, &v, stack, &ahu);
	threadlet_stats(&st1);
	tl_ok(r == 1 && v == 0 && runs == 2,
	      "blocking threadlet slept in place and returned 1 (ret %ld)", r);
	tl_ok(st1.nr_fallbacks == st0.nr_fallbacks + 1 &&
	      st1.nr_handoffs == st0.nr_handoffs &&
	      st1.last_fallback == THREADLET_FB_COMPAT,
	      "one fallback, reason compat (%llu, last %u)",
	      st1.nr_fallbacks - st0.nr_fallbacks, st1.last_fallback);
	tl_ok(async_ring_pop(&ahu) == NULL, "still nothing posted");

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
