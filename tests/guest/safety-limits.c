// SPDX-License-Identifier: GPL-2.0
/*
 * Resource limits (finding 9) and a failed registration (finding 10a).
 *
 * Async heads are kernel memory a process allocates at will: at most
 * ASYNC_MAX_HEADS per process, then EMFILE. A threadlet area pins a page
 * for as long as it is registered: that is locked memory, charged to
 * RLIMIT_MEMLOCK unless the caller has CAP_IPC_LOCK. Pool threads are
 * threads of the user like any other and count against RLIMIT_NPROC, and
 * a pool that cannot be started leaves no thread behind. A registration
 * that fails because the head already exists writes nothing into it.
 */
#include <sys/resource.h>
#include "safety.h"

#define NOBODY	65534

static struct async_head_user heads[ASYNC_MAX_HEADS + 1];
static u64 rings[ASYNC_MAX_HEADS + 1];
static struct threadlet_area area __attribute__((aligned(128)));

/* ---- 9a: heads per process -------------------------------------------- */

static void max_heads(void *arg)
{
	int n = 0, i;
	long r;

	(void)arg;
	for (i = 0; i < ASYNC_MAX_HEADS; i++)
		n += sf_register_head(&heads[i], &rings[i], 1, 1) == 0;
	sf_ok(n == ASYNC_MAX_HEADS, "%d heads register (%d did)", ASYNC_MAX_HEADS, n);
	errno = 0;
	r = sf_register_head(&heads[ASYNC_MAX_HEADS], &rings[ASYNC_MAX_HEADS], 1, 1);
	sf_ok(r == -1 && errno == EMFILE, "head %d: -1/EMFILE (%ld/%s)",
	      ASYNC_MAX_HEADS + 1, r, strerrorname_np(errno) ?: "0");
	sf_ok(sf_unregister_head(&heads[5]) == 0, "unregister one");
	r = sf_register_head(&heads[ASYNC_MAX_HEADS], &rings[ASYNC_MAX_HEADS], 1, 1);
	sf_ok(r == 0, "then one more registers (%ld/%s)", r,
	      r ? strerrorname_np(errno) : "0");
	errno = 0;
	r = sf_register_head(&heads[5], &rings[5], 1, 1);
	sf_ok(r == -1 && errno == EMFILE, "and the next one fails again (%ld/%s)", r,
	      strerrorname_np(errno) ?: "0");
	n = 0;
	for (i = 0; i <= ASYNC_MAX_HEADS; i++)
		n += sf_unregister_head(&heads[i]) == 0;
	sf_ok(n == ASYNC_MAX_HEADS, "all %d unregister (%d)", ASYNC_MAX_HEADS, n);
}

/* ---- 9b: RLIMIT_MEMLOCK ----------------------------------------------- */

static long noop(void *data)
{
	(void)data;
	return 1;
}

static int drop_root(void)
{
	return !setresgid(NOBODY, NOBODY, NOBODY) && !setresuid(NOBODY, NOBODY, NOBODY) &&
	       geteuid() == NOBODY;
}

static void memlock(void *arg)
{
	struct rlimit zero = { 0, 0 };
	struct async_head_user ahu;
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	int limited = arg != NULL;
	long r;

	if (limited)
		sf_ok(setrlimit(RLIMIT_MEMLOCK, &zero) == 0, "RLIMIT_MEMLOCK 0");
	sf_ok(drop_root(), "%s: running as uid %d, without CAP_IPC_LOCK",
	      limited ? "limit 0" : "default limit", NOBODY);
	errno = 0;
	r = syscall(__NR_threadlet_register, &area, sizeof(area), 0);
	if (limited)
		sf_ok(r == -1 && errno == ENOMEM,
		      "limit 0: threadlet_register: -1/ENOMEM (%ld/%s)", r,
		      strerrorname_np(errno) ?: "0");
	else
		sf_ok(r == 0, "default limit: threadlet_register works (%ld/%s)", r,
		      r ? strerrorname_np(errno) : "0");
	if (r == 0)
		syscall(__NR_threadlet_register, &area, sizeof(area), THREADLET_UNREGISTER);

	r = async_head_init(&ahu, 16, 2);
	if (limited)
		sf_ok(r == -ENOMEM, "limit 0: async_head_init: -ENOMEM (%ld)", r);
	else
		sf_ok(r == 0, "default limit: async_head_init works (%ld)", r);
	if (r == 0) {
		long t = threadlet_exec(noop, NULL, stack, &ahu);

		if (!limited)
			sf_ok(t == 1, "default limit: a threadlet runs (%ld)", t);
		async_head_exit(&ahu);
	}
	if (limited) {
		r = threadlet_exec(noop, NULL, stack, &ahu);
		sf_ok(r == -ENOMEM, "limit 0: threadlet_exec: -ENOMEM (%ld)", r);
	}
	sf_ok(tl_nr_threads_settle(1) == 1, "%s: no thread left behind",
	      limited ? "limit 0" : "default limit");
}

/* ---- 9c: RLIMIT_NPROC ------------------------------------------------- */

static void nproc(void *arg)
{
	struct rlimit four = { 4, 4 };
	struct async_head_user ahu;
	long r;

	(void)arg;
	sf_ok(setrlimit(RLIMIT_NPROC, &four) == 0 && drop_root(),
	      "uid %d, RLIMIT_NPROC 4", NOBODY);
	r = async_head_init(&ahu, 64, 16);
	sf_ok(r == -EAGAIN, "async_head_init with 16 threads: -EAGAIN (%ld)", r);
	sf_ok(tl_nr_threads_settle(1) == 1, "no thread left behind (%d)", tl_nr_threads());
	r = async_head_parked(&ahu);
	sf_ok(r == -EINVAL, "and no head either (%ld)", r);
}

/* ---- 10a: a failed re-registration ------------------------------------ */

static void reregister(void *arg)
{
	struct async_head_user *h = &heads[0];
	long r;

	(void)arg;
	sf_ok(sf_register_head(h, &rings[0], 1, 1) == 0, "register a head");
	h->kernel_ring_idx = 0x5e5e5e5e5e5e5e5eULL;
	errno = 0;
	r = syscall(__NR_async_register, h, sizeof(*h), 0);
	sf_ok(r == -1 && errno == EBUSY, "registering it again: -1/EBUSY (%ld/%s)", r,
	      strerrorname_np(errno) ?: "0");
	sf_ok(h->kernel_ring_idx == 0x5e5e5e5e5e5e5e5eULL,
	      "the failed registration left kernel_ring_idx alone (%#llx)",
	      h->kernel_ring_idx);
	sf_ok(sf_unregister_head(h) == 0, "unregister");
}

int main(void)
{
	int status;

	sf_init();
	tl_ok(getuid() == 0, "running as root");
	status = sf_child(max_heads, NULL, 60);
	sf_child_ok(status, "heads per process");
	status = sf_child(memlock, (void *)1, 60);
	sf_child_ok(status, "RLIMIT_MEMLOCK 0");
	status = sf_child(memlock, NULL, 60);
	sf_child_ok(status, "default RLIMIT_MEMLOCK");
	status = sf_child(nproc, NULL, 60);
	sf_child_ok(status, "RLIMIT_NPROC");
	status = sf_child(reregister, NULL, 60);
	sf_child_ok(status, "re-registration");
	return tl_exit();
}
