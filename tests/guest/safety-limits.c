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
 * What the kernel allocates for heads is charged to the memory cgroup of
 * the process: a full cgroup gets ENOMEM, not memory from outside it.
 */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
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

/* ---- 9d: memory cgroups ------------------------------------------------ */

#define CG		"/sys/fs/cgroup"
#define CG_TL		CG "/tl-limits"
#define CG_WORKERS	32	/* each registers ASYNC_MAX_HEADS heads */

struct cg_result {
	int ok, enomem, other, done;
};

static struct cg_result *cg_res;

static int cg_write(const char *file, const char *val)
{
	int fd = open(file, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	close(fd);
	return ret;
}

/* The number in @file, or after "@key " in it; -1 if there is none. */
static long long cg_read(const char *file, const char *key)
{
	char buf[4096], *p = buf;
	ssize_t n;
	int fd = open(file, O_RDONLY);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (key) {
		size_t k = strlen(key);

		for (; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
			if (!strncmp(p, key, k) && p[k] == ' ')
				return strtoll(p + k + 1, NULL, 10);
		return -1;
	}
	return strtoll(p, NULL, 10);
}

/*
 * A worker moves itself into the cgroup, faults in its user memory, says
 * it is ready, then on "go" registers all the heads it may, reports, and
 * holds them until told to end. At the limit the cgroup's OOM killer may
 * end it instead: whatever it registered is then freed with it.
 */
static void cg_worker(int idx, int ready, int go, int end)
{
	struct cg_result *res = &cg_res[idx];
	char c;

	if (cg_write(CG_TL "/cgroup.procs", "0"))
		_exit(2);
	memset(heads, 0, sizeof(heads));
	memset(rings, 0, sizeof(rings));
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		_exit(2);
	for (int i = 0; i < ASYNC_MAX_HEADS; i++) {
		if (sf_register_head(&heads[i], &rings[i], 1, 1) == 0)
			res->ok++;
		else if (errno == ENOMEM)
			res->enomem++;
		else
			res->other++;
	}
	__atomic_store_n(&res->done, 1, __ATOMIC_RELEASE);
	if (read(end, &c, 1) != 1)
		_exit(2);
	_exit(0);
}

/*
 * Runs CG_WORKERS workers in CG_TL, with memory.max at what they use
 * before registering plus @headroom bytes (0: no limit). Fills @sum with
 * the heads that the workers alive at the end hold, and @killed; returns
 * how much memory.current grew while they held them.
 */
static long long cg_round(long long headroom, struct cg_result *sum, int *killed)
{
	int ready[2], go[2], end[2], n = 0, left, st;
	pid_t pids[CG_WORKERS] = { 0 };
	long long base, held;
	char buf[CG_WORKERS], c;

	memset(cg_res, 0, CG_WORKERS * sizeof(*cg_res));
	memset(sum, 0, sizeof(*sum));
	*killed = 0;
	if (pipe(ready) || pipe(go) || pipe(end))
		return -1;
	for (int i = 0; i < CG_WORKERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			cg_worker(i, ready[1], go[0], end[0]);
		n += pids[i] > 0;
	}
	for (int i = 0; i < n; i++)
		if (read(ready[0], &c, 1) != 1)
			break;
	base = cg_read(CG_TL "/memory.current", NULL);
	if (headroom) {
		snprintf(buf, sizeof(buf), "%lld", base + headroom);
		cg_write(CG_TL "/memory.max", buf);
	}
	memset(buf, 'g', sizeof(buf));
	if (write(go[1], buf, n) != n)
		return -1;
	/* Until every worker is done or gone (60 s at most). */
	for (int t = 0; t < 6000; t++) {
		left = 0;
		for (int i = 0; i < CG_WORKERS; i++) {
			if (pids[i] <= 0)
				continue;
			if (waitpid(pids[i], &st, WNOHANG) == pids[i]) {
				*killed += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
				pids[i] = 0;
			} else if (!__atomic_load_n(&cg_res[i].done, __ATOMIC_ACQUIRE)) {
				left++;
			}
		}
		if (!left)
			break;
		usleep(10000);
	}
	held = cg_read(CG_TL "/memory.current", NULL);
	if (headroom)
		sf_ok(held <= base + headroom,
		      "memory.current (%lld) stays within memory.max (%lld)", held,
		      base + headroom);
	for (int i = 0; i < CG_WORKERS; i++) {
		if (pids[i] <= 0)
			continue;
		sum->ok += cg_res[i].ok;
		sum->enomem += cg_res[i].enomem;
		sum->other += cg_res[i].other;
	}
	if (write(end[1], buf, n) != n)
		return -1;
	while (wait(NULL) > 0)
		;
	cg_write(CG_TL "/memory.max", "max");
	close(ready[0]), close(ready[1]), close(go[0]), close(go[1]);
	close(end[0]), close(end[1]);
	return held - base;
}

static void memcg(void *arg)
{
	const int all = CG_WORKERS * ASYNC_MAX_HEADS;
	struct cg_result sum;
	long long grew, events, ooms;
	int killed;

	(void)arg;
	if (access(CG "/cgroup.controllers", F_OK) &&
	    mount("cgroup2", CG, "cgroup2", 0, NULL)) {
		sf_skip("no cgroup2 (CONFIG_CGROUPS off?)");
		return;
	}
	if (cg_write(CG "/cgroup.subtree_control", "+memory")) {
		sf_skip("no memory controller (CONFIG_MEMCG off?)");
		return;
	}
	cg_res = mmap(NULL, CG_WORKERS * sizeof(*cg_res), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sf_ok(cg_res != MAP_FAILED && (mkdir(CG_TL, 0755) == 0 || errno == EEXIST),
	      "a memory cgroup for %d workers", CG_WORKERS);

	grew = cg_round(0, &sum, &killed);
	sf_ok(sum.ok == all && !sum.enomem && !sum.other && !killed,
	      "no limit: all %d heads register (%d, %d ENOMEM, %d other, %d killed)", all,
	      sum.ok, sum.enomem, sum.other, killed);
	/*
	 * At least 64 bytes a head: a kernel head is a kmalloc-96 object on
	 * i386 and larger on x86-64; memory.current moves in pages through
	 * the per-CPU charge stock, so only a lower bound is stable. Without
	 * the charge it would not grow at all.
	 */
	sf_ok(grew >= all * 64LL, "and are charged to the cgroup: +%lld bytes (>= %d)",
	      grew, all * 64);

	/*
	 * 256 KiB of room: the charges fail at the limit, and the cgroup's
	 * OOM killer ends workers (any of them, whose memory is then freed)
	 * or the allocation fails with ENOMEM. Either way the heads that
	 * exist at once fit in the cgroup.
	 */
	grew = cg_round(256 << 10, &sum, &killed);
	events = cg_read(CG_TL "/memory.events", "max");
	ooms = cg_read(CG_TL "/memory.events", "oom_kill");
	sf_ok(sum.ok < all && !sum.other && (killed || sum.enomem),
	      "256 KiB of room: the survivors hold %d of %d heads; %d ENOMEM, %d workers killed",
	      sum.ok, all, sum.enomem, killed);
	/* A worker can also be killed after it is done, holding its heads. */
	sf_ok(events > 0 && ooms >= killed,
	      "memory.events: at the limit %lld times, %lld OOM kills (>= %d)", events, ooms,
	      killed);
	errno = 0;
	sf_ok(rmdir(CG_TL) == 0, "the cgroup is empty and goes (%s)",
	      errno ? strerrorname_np(errno) : "0");
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
	status = sf_child(memcg, NULL, 120);
	sf_child_ok(status, "memory cgroup");
	return tl_exit();
}
