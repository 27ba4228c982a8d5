// SPDX-License-Identifier: GPL-2.0
/*
 * libthreadlet's one error convention (threadlet.h): every function that
 * can fail returns -errno, or, if it returns a pointer or an address, an
 * error value that threadlet_ptr_err()/threadlet_err() turn into -errno;
 * and no function changes errno, on failure or on success.
 *
 * Each public function that can fail is made to fail here, its return
 * checked against the errno it must carry, and errno checked to still hold
 * the sentinel it was given before the call. The failures come from the
 * library's own checks and from the kernel's, so that both paths are seen.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <threadlet.h>

#include "tl_test.h"
#include "tl_util.h"

#define SENTINEL 4242		/* no errno has this number */

/*
 * Runs @expr with errno = SENTINEL, then checks that its value, as -errno
 * through @conv (a function of the convention, or plain for a number), is
 * @want and that errno is still SENTINEL.
 */
#define plain(v) ((long)(v))
#define expect(conv, expr, want, name) do {				\
	long __r;							\
	int __e;							\
									\
	errno = SENTINEL;						\
	__r = conv(expr);						\
	__e = errno;							\
	tl_ok(__r == (long)(want) && __e == SENTINEL,			\
	      "%s: %ld (want %ld), errno %s", name, __r, (long)(want),	\
	      __e == SENTINEL ? "untouched" : strerrorname_np(__e));	\
} while (0)

static struct async_head_user ahu __attribute__((aligned(64)));
static unsigned long stack;

static long noop(void *d)
{
	(void)d;
	return complete_threadlet_fn(NULL, &ahu);
}

static long nested_ret;

/* Inside a threadlet: threadlet_exec() again is -EBUSY. */
static long nested(void *d)
{
	(void)d;
	errno = SENTINEL;
	nested_ret = threadlet_exec(noop, NULL, stack, &ahu);
	if (errno != SENTINEL)
		nested_ret = -9999;
	return complete_threadlet_fn(NULL, &ahu);
}

static void heads(void)
{
	struct async_head_user other __attribute__((aligned(64))) = { 0 };
	struct async_pool_stats st;

	expect(plain, async_head_init(&ahu, 12, 2), -EINVAL,
	       "async_head_init: ring not a power of two");
	expect(plain, async_head_init_pool(&ahu, 16, 3, 2), -EINVAL,
	       "async_head_init_pool: min > max");
	expect(plain, async_head_init(&ahu, 16, 2), 0, "async_head_init");
	expect(plain, async_head_init(&ahu, 16, 2), -EBUSY, "async_head_init: twice");
	expect(plain, async_head_pool_stats(&other, &st), -EINVAL,
	       "async_head_pool_stats: not a head");
	expect(plain, async_head_pool_stats(&ahu, NULL), -EINVAL,
	       "async_head_pool_stats: NULL");
	expect(plain, async_head_pool_stats(&ahu, &st), 0, "async_head_pool_stats");
	/* The kernel's errors, through syscall(3), which sets errno. */
	expect(plain, async_head_parked(&other), -EINVAL, "async_head_parked: not a head");
	expect(plain, async_wait(0, 0, &other), -EINVAL, "async_wait: not a head");
	expect(plain, async_wait(1000, 0, &ahu), -EINVAL,
	       "async_wait: more events than the ring holds");
	expect(threadlet_ptr_err, async_ring_pop(&ahu), 0,
	       "async_ring_pop: empty ring is NULL, not an error");
	errno = SENTINEL;
	tl_ok(async_ring_pop(&ahu) == NULL && errno == SENTINEL, "async_ring_pop: NULL");
	expect(plain, async_head_exit(&other), -EINVAL, "async_head_exit: not a head");
}

static void stacks(void)
{
	unsigned long s;
	pid_t pid;
	int status;

	expect(threadlet_err, threadlet_stack_alloc(0), -EINVAL,
	       "threadlet_stack_alloc(0)");
	expect(threadlet_err, threadlet_stack_alloc((size_t)2 << 30), -EINVAL,
	       "threadlet_stack_alloc(2 GiB)");
	errno = SENTINEL;
	stack = threadlet_stack_alloc(64 << 10);
	tl_ok(!threadlet_err(stack) && stack && !(stack & 15) && errno == SENTINEL,
	      "threadlet_stack_alloc: an aligned top, errno untouched");
	s = threadlet_stack_alloc(16 << 10);
	expect(plain, threadlet_stack_free(s + 16), -EINVAL,
	       "threadlet_stack_free: not a stack top");
	expect(plain, threadlet_stack_free(s), 0, "threadlet_stack_free");
	expect(plain, threadlet_stack_free(s), -EINVAL, "threadlet_stack_free: twice");

	/* Out of address space: -ENOMEM from mmap(), errno kept. */
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 64 << 20, 64 << 20 };
		unsigned long top;

		if (setrlimit(RLIMIT_AS, &rl))
			_exit(2);
		errno = SENTINEL;
		top = threadlet_stack_alloc(512 << 20);
		_exit(threadlet_err(top) == -ENOMEM && errno == SENTINEL ? 0 : 1);
	}
	tl_ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0,
	      "threadlet_stack_alloc under RLIMIT_AS: -ENOMEM, errno untouched");
}

static void exec(void)
{
	expect(plain, threadlet_exec(NULL, NULL, stack, &ahu), -EINVAL,
	       "threadlet_exec: NULL fn");
	expect(plain, threadlet_exec(noop, NULL, stack + 8, &ahu), -EINVAL,
	       "threadlet_exec: misaligned stack");
	expect(plain, threadlet_exec(noop, NULL, threadlet_stack_alloc(0), &ahu), -EINVAL,
	       "threadlet_exec: an error value as the stack");
	expect(plain, threadlet_exec(noop, NULL, stack, &ahu), 1,
	       "threadlet_exec: runs in place");
	expect(plain, threadlet_exec(nested, NULL, stack, &ahu), 1,
	       "threadlet_exec: the outer one runs");
	tl_ok(nested_ret == -EBUSY, "threadlet_exec inside a threadlet: -EBUSY (%ld)",
	      nested_ret);
	expect(plain, complete_threadlet_fn(NULL, &ahu), -EINVAL,
	       "complete_threadlet_fn outside a threadlet");
}

static void syslets(void)
{
	struct async_head_user other __attribute__((aligned(64))) = { 0 };
	struct syslet_uatom a, b;
	unsigned long long x = 0, seven = 7;
	long long r = -999;
	struct syslet_uatom *done;

	memset(&b, 0x5a, sizeof(b));
	expect(plain, syslet_atom_init(&b, SYS_getppid, 0, &r, NULL, 7,
				       &x, &x, &x, &x, &x, &x, &x), -EINVAL,
	       "syslet_atom_init: 7 arguments");
	tl_ok(b.nr == 0x5a5a5a5a, "syslet_atom_init: the atom is left as it was");
	expect(plain, syslet_atom_init(NULL, SYS_getppid, 0, &r, NULL, 0), -EINVAL,
	       "syslet_atom_init: NULL atom");
	expect(plain, syslet_atom_init(&a, SYS_getppid, 0, &r, NULL, 0), 0,
	       "syslet_atom_init");

	expect(threadlet_ptr_err, async_exec((struct syslet_uatom *)16, &ahu), -EFAULT,
	       "async_exec: unreadable atom");
	expect(threadlet_ptr_err, async_exec(&a, &other), -EINVAL,
	       "async_exec: not a head");
	errno = SENTINEL;
	done = async_exec(&a, &ahu);
	tl_ok(done == &a && r == getppid() && errno == SENTINEL,
	      "async_exec: runs in place, returns the final atom, errno untouched");

	expect(plain, umem_add((unsigned long long *)16, 1), -EFAULT,
	       "umem_add: bad pointer");
	expect(plain, umem_add(&x, seven), 1, "umem_add: non-zero result");
	expect(plain, umem_add(&x, -seven), 0, "umem_add: zero result");
}

static void vdso(void)
{
	void *p;

	expect(threadlet_ptr_err, threadlet_vdso_sym("__vdso_no_such_function"),
	       -ENOENT, "threadlet_vdso_sym: no such function");
	expect(threadlet_ptr_err, threadlet_vdso_sym(NULL), -EINVAL,
	       "threadlet_vdso_sym: NULL name");
	errno = SENTINEL;
	p = threadlet_vdso_sym("__vdso_threadlet_off_tls");
	tl_ok(p && !threadlet_ptr_err(p) && errno == SENTINEL,
	      "threadlet_vdso_sym: a function of ours, errno untouched");
}

int main(void)
{
	heads();
	stacks();
	exec();
	syslets();
	vdso();
	expect(plain, async_head_exit(&ahu), 0, "async_head_exit");
	expect(plain, async_head_exit(&ahu), -EINVAL, "async_head_exit: twice");
	expect(plain, threadlet_stack_free(stack), 0, "threadlet_stack_free");
	return tl_exit();
}
