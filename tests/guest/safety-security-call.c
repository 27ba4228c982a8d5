// SPDX-License-Identifier: GPL-2.0
/*
 * A system call that changes its caller's own sandbox or credentials and
 * sleeps on its way. seccomp(SET_MODE_FILTER) copies the filter from user
 * memory: a filter in a file page that is not in the page cache makes
 * that copy sleep on the disk, inside a threadlet. Handed off there, the
 * call would go on in the task that now carries a pool thread's identity
 * and attach the filter to it: seccomp() returns 0 to the head, which is
 * not filtered, and a pool thread is. Such calls sleep in place
 * (THREADLET_FB_CALL), as do capset(), setgroups(), the set*id() calls,
 * setns(), unshare(), prctl(), keyctl(), personality() and
 * landlock_restrict_self().
 *
 * Expected: seccomp() returns 0, the head is filtered (PR_GET_SECCOMP),
 * and the sleep in it fell back with FB_CALL.
 *
 * execve() is pinned too: it may sleep before it is under way (copying
 * the path, allocating), and handed off there the new image would run in
 * the task that carries a pool thread's identity, with that thread's
 * signal mask. A path in a page on disk makes the copy sleep; the path
 * does not exist, so the call returns ENOENT, and must do so in place.
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include "safety.h"

static struct async_head_user ahu;
static struct sock_fprog prog;
static volatile long rc = 1;

static const char *exec_path;
static volatile int exec_errno;

static long install_fn(void *data)
{
	rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
	return complete_threadlet_fn(data, &ahu);
}

static long exec_fn(void *data)
{
	char *argv[] = { "x", NULL };

	rc = syscall(SYS_execve, exec_path, argv, argv + 1);
	exec_errno = errno;
	return complete_threadlet_fn(data, &ahu);
}

/* A path that does not exist, in a file page that is not in the page cache. */
static int path_on_disk(const char *path)
{
	static const char name[] = "/nonexistent/tl-exec-path";

	exec_path = sf_page_on_disk(path, name, sizeof(name));
	return exec_path ? 0 : -1;
}

/* A filter of one "allow" in a file page that is not in the page cache. */
static int filter_on_disk(const char *path)
{
	struct sock_filter allow[512];

	for (int i = 0; i < 512; i++)
		allow[i] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = 1;
	prog.filter = sf_page_on_disk(path, allow, sizeof(allow));
	return prog.filter ? 0 : -1;
}

struct result {
	int skip, slept, in_place, filtered;
	long rc;
	int exec_errno;
	unsigned int last_fallback;
};

static struct result *res;

/* One try in a process of its own: a filter installed stays. */
static void run(void *arg)
{
	int exec = *(int *)arg >= 100;
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	unsigned long long fb0;
	char path[64];
	long ret;
	int ev;

	snprintf(path, sizeof(path), "/mnt/disk/tl-%s.%d", exec ? "exec" : "seccomp", getpid());
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || threadlet_err(stack) ||
	    async_head_init(&ahu, 16, 2) ||
	    (exec ? path_on_disk(path) : filter_on_disk(path))) {
		res->skip = 1;
		return;
	}
	fb0 = __threadlet_area.nr_fallbacks;
	ret = threadlet_exec(exec ? exec_fn : install_fn, &ev, stack, &ahu);
	if (ret == 0)
		sf_wait_event(&ahu, 10000);
	res->slept = ret == 0 || __threadlet_area.nr_fallbacks > fb0;
	res->in_place = ret != 0;
	res->last_fallback = __threadlet_area.last_fallback;
	res->rc = rc;
	res->filtered = prctl(PR_GET_SECCOMP) == 2;
	res->exec_errno = exec_errno;
	tl_diag("try %d: threadlet_exec %ld; fallbacks %llu -> %llu, last %u",
		*(int *)arg, ret, fb0, (unsigned long long)__threadlet_area.nr_fallbacks,
		res->last_fallback);
	async_head_exit(&ahu);
	unlink(path);
}

/*
 * Runs tries @base, @base + 1, ... (up to 8: the page cache may keep the
 * page anyway) until one counts: the copy slept and fell back with
 * FB_CALL (a wake just before the sleep is counted otherwise), or it was
 * handed off, or the child failed. Returns its status, the try in *@try.
 */
static int tries(int base, int *try)
{
	int status = 0;

	for (*try = base; *try < base + 8; ++*try) {
		memset(res, 0, sizeof(*res));
		status = sf_child(run, try, 60);
		if (res->skip || !sf_exited0(status) ||
		    (res->slept && (res->last_fallback == THREADLET_FB_CALL || !res->in_place)))
			break;
	}
	return status;
}

int main(void)
{
	int status = 0, i;

	sf_init();
	res = sf_shared(sizeof(*res));
	status = tries(0, &i);
	if (res->skip) {
		sf_skip("no /mnt/disk");
		return tl_exit();
	}
	sf_ok(sf_exited0(status), "a seccomp filter copied from a page on disk: child %s",
	      sf_status_str(status));
	sf_ok(res->slept, "the copy slept in %d tries", i + 1);
	sf_ok(res->rc == 0, "seccomp() returned 0 (%ld)", res->rc);
	sf_ok(res->filtered, "the head that installed the filter is filtered");
	sf_ok(res->in_place && res->last_fallback == THREADLET_FB_CALL,
	      "its sleep in seccomp() was not handed off (FB_CALL; last fallback %u)",
	      res->last_fallback);

	status = tries(100, &i);
	sf_ok(sf_exited0(status) && res->slept,
	      "execve() of a path in a page on disk slept in %d tries: child %s", i - 99,
	      sf_status_str(status));
	sf_ok(res->rc == -1 && res->exec_errno == ENOENT, "execve() returned ENOENT (%ld, %d)",
	      res->rc, res->exec_errno);
	sf_ok(res->in_place && res->last_fallback == THREADLET_FB_CALL,
	      "its sleep in execve() was not handed off (FB_CALL; last fallback %u)",
	      res->last_fallback);
	return tl_exit();
}
