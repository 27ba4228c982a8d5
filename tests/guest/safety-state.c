// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread state must not leak across a hand-off (findings 3 and 11).
 *
 * A hand-off gives the head's TID to a parked pool thread, which returns to
 * user space as the head. Whatever per-thread kernel state the swap does not
 * move would silently change under the head: its fs (root, cwd, umask), its
 * file table, its namespaces, nice/affinity/ioprio, personality,
 * no_new_privs, its credentials. Where head and spare differ in such state,
 * the threadlet must sleep in place instead (threadlet_exec() returns 1 and
 * the area counts a fallback with the reason), and the head keeps its own
 * state. Where the whole process shares the state, the hand-off happens and
 * the state is intact. comm, timer slack and the parent-death signal move
 * with the head. Credentials compare by content, not by pointer.
 *
 * Each case runs in its own child process: the changes are not undoable.
 */
#include <sched.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include "safety.h"

#define IOPRIO_WHO_PROCESS	1
#define IOPRIO_IDLE		(3 << 13)	/* IOPRIO_CLASS_IDLE, level 0 */

static struct async_head_user ahu;
static unsigned long stack;

struct fb_case {
	const char *what;
	/* Before the pool exists (may be NULL). */
	int (*pre)(struct fb_case *c);
	/* In the head, after the pool is parked: 1 done, 0 failed, -1 skip. */
	int (*change)(struct fb_case *c);
	/* In the head after the threadlet: checks the head's own state. */
	void (*verify)(struct fb_case *c);
	unsigned int reason;	/* expected fallback; 0: a hand-off */
	char path[64];		/* a scratch path for the case (main() sets it) */
	ino_t ino;
	int fd;
	int uts;
};

/* ---- fs_struct: cwd, umask, root -------------------------------------- */

static int cwd_change(struct fb_case *c)
{
	if (mkdir(c->path, 0755) || unshare(CLONE_FS) || chdir(c->path))
		return 0;
	umask(027);
	return 1;
}

static void cwd_verify(struct fb_case *c)
{
	char cwd[128] = "";
	mode_t m = umask(027);

	sf_ok(getcwd(cwd, sizeof(cwd)) && !strcmp(cwd, c->path),
	      "%s: the head's cwd is still its own (%s)", c->what, cwd);
	sf_ok(m == 027, "%s: the head's umask is still 027 (%03o)", c->what, m);
}

static int chroot_change(struct fb_case *c)
{
	char marker[160];
	int fd;

	snprintf(marker, sizeof(marker), "%s/sf-marker", c->path);
	if (mkdir(c->path, 0755))
		return 0;
	fd = open(marker, O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		return 0;
	close(fd);
	return !unshare(CLONE_FS) && !chroot(c->path) && !chdir("/");
}

static void chroot_verify(struct fb_case *c)
{
	sf_ok(access("/sf-marker", F_OK) == 0 && access("/tests", F_OK) != 0,
	      "%s: the head is still inside its chroot (marker seen, /tests not)",
	      c->what);
}

/* umask is in the fs_struct all threads share: changed for everyone. */
static int umask_change(struct fb_case *c)
{
	(void)c;
	umask(077);
	return 1;
}

static void umask_verify(struct fb_case *c)
{
	mode_t m = umask(077);

	sf_ok(m == 077, "%s: umask intact after the hand-off (%03o)", c->what, m);
}

/* ---- files_struct ----------------------------------------------------- */

static int files_change(struct fb_case *c)
{
	struct stat st;

	if (unshare(CLONE_FILES))
		return 0;
	/* This fd exists only in the head's own table. */
	c->fd = open(c->path, O_CREAT | O_RDWR, 0600);
	if (c->fd < 0 || fstat(c->fd, &st))
		return 0;
	c->ino = st.st_ino;
	return 1;
}

static void files_verify(struct fb_case *c)
{
	struct stat st;
	int ok = fstat(c->fd, &st) == 0 && st.st_ino == c->ino;

	sf_ok(ok, "%s: fd %d opened after unshare(CLONE_FILES) is still the head's file",
	      c->what, c->fd);
}

/* ---- nsproxy ---------------------------------------------------------- */

/*
 * A UTS namespace of the head's own. Without CONFIG_UTS_NS, a mount
 * namespace instead; unshare(CLONE_NEWNS) also unshares the fs_struct,
 * but the kernel compares namespaces first, so the reason is the same.
 */
static int ns_change(struct fb_case *c)
{
	char marker[160];
	int fd;

	if (!unshare(CLONE_NEWUTS)) {
		c->uts = 1;
		return !sethostname("sf-head", 7);
	}
	if (errno != EINVAL)
		return 0;
	tl_diag("%s: no UTS namespaces in this kernel, using a mount namespace",
		c->what);
	snprintf(marker, sizeof(marker), "%s/sf-marker", c->path);
	if (mkdir(c->path, 0755) || unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("sf", c->path, "tmpfs", 0, NULL))
		return 0;
	fd = open(marker, O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static void ns_verify(struct fb_case *c)
{
	char marker[160];
	struct utsname u;

	if (c->uts) {
		sf_ok(uname(&u) == 0 && !strcmp(u.nodename, "sf-head"),
		      "%s: the head is still in its UTS namespace (%s)", c->what,
		      u.nodename);
		return;
	}
	snprintf(marker, sizeof(marker), "%s/sf-marker", c->path);
	sf_ok(access(marker, F_OK) == 0,
	      "%s: the head still sees the tmpfs of its mount namespace", c->what);
}

/* ---- scheduling ------------------------------------------------------- */

static int nice_change(struct fb_case *c)
{
	(void)c;
	return !setpriority(PRIO_PROCESS, gettid(), 5);
}

static void nice_verify(struct fb_case *c)
{
	int n;

	errno = 0;
	n = getpriority(PRIO_PROCESS, gettid());
	sf_ok(errno == 0 && n == 5, "%s: the head's nice is still 5 (%d)", c->what, n);
}

static int affinity_change(struct fb_case *c)
{
	cpu_set_t one;

	(void)c;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return -1;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	return !sched_setaffinity(gettid(), sizeof(one), &one);
}

static void affinity_verify(struct fb_case *c)
{
	cpu_set_t got;
	int ok = !sched_getaffinity(0, sizeof(got), &got) &&
		 CPU_COUNT(&got) == 1 && CPU_ISSET(0, &got);

	sf_ok(ok, "%s: the head's affinity is still CPU 0 only (%d CPUs)", c->what,
	      CPU_COUNT(&got));
}

static int ioprio_change(struct fb_case *c)
{
	(void)c;
	return !syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, gettid(), IOPRIO_IDLE);
}

static void ioprio_verify(struct fb_case *c)
{
	long p = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, gettid());

	sf_ok(p == IOPRIO_IDLE, "%s: the head's ioprio is still idle (%#lx)", c->what, p);
}

/* ---- task ------------------------------------------------------------- */

static int persona_change(struct fb_case *c)
{
	(void)c;
	return syscall(SYS_personality, PER_LINUX | ADDR_NO_RANDOMIZE) >= 0;
}

static void persona_verify(struct fb_case *c)
{
	long p = syscall(SYS_personality, 0xffffffffUL);

	sf_ok(p == (PER_LINUX | ADDR_NO_RANDOMIZE),
	      "%s: the head's personality is still ADDR_NO_RANDOMIZE (%#lx)", c->what, p);
}

/* ---- no_new_privs and credentials -------------------------------------- */

static int nnp_change(struct fb_case *c)
{
	(void)c;
	return !prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

static void nnp_verify(struct fb_case *c)
{
	int v = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);

	sf_ok(v == 1, "%s: no_new_privs still 1 in the head (%d)", c->what, v);
}

static int nothing(struct fb_case *c)
{
	(void)c;
	return 1;
}

/*
 * glibc's setuid() runs setuid() in every thread (the pool threads leave
 * their park for the SIGSETXID handler and park again): every thread then
 * has its own cred object, all with the same content.
 */
static int setuid_change(struct fb_case *c)
{
	(void)c;
	return !setuid(getuid()) && tl_wait_parked(&ahu, 2);
}

static void setuid_verify(struct fb_case *c)
{
	sf_ok(getuid() == 0 && geteuid() == 0, "%s: still root", c->what);
}

/* The head's euid only (a raw system call: glibc would change every thread). */
static int euid_change(struct fb_case *c)
{
	(void)c;
	return !syscall(SYS_setresuid, -1, 65534, -1) &&
	       syscall(SYS_geteuid) == 65534;
}

static void euid_verify(struct fb_case *c)
{
	long e = syscall(SYS_geteuid);

	sf_ok(e == 65534, "%s: the head's euid is still 65534 (%ld)", c->what, e);
}

/* ---- moved with the head ---------------------------------------------- */

static int comm_change(struct fb_case *c)
{
	(void)c;
	return !prctl(PR_SET_NAME, "sf-head", 0, 0, 0);
}

static void comm_verify(struct fb_case *c)
{
	char path[64], comm[32] = "";
	int fd, n = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", gettid());
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
	}
	comm[n > 0 ? n : 0] = 0;
	comm[strcspn(comm, "\n")] = 0;
	sf_ok(!strcmp(comm, "sf-head"), "%s: %s says sf-head (%s)", c->what, path, comm);
}

static int slack_change(struct fb_case *c)
{
	(void)c;
	return !prctl(PR_SET_TIMERSLACK, 123456, 0, 0, 0);
}

static void slack_verify(struct fb_case *c)
{
	long s = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);

	sf_ok(s == 123456, "%s: the head's timer slack is still 123456 ns (%ld)",
	      c->what, s);
}

static int pdeath_change(struct fb_case *c)
{
	(void)c;
	return !prctl(PR_SET_PDEATHSIG, SIGUSR2, 0, 0, 0);
}

static void pdeath_verify(struct fb_case *c)
{
	int sig = 0;

	sf_ok(!prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0) && sig == SIGUSR2,
	      "%s: the head's parent-death signal is still SIGUSR2 (%d)", c->what, sig);
}

/* ---- the driver ------------------------------------------------------- */

/* In a child: pool of 2, change the head, block a threadlet, verify. */
static void run_case(void *arg)
{
	struct fb_case *c = arg;
	struct threadlet_stats s0, s1;
	struct sf_block b;
	int r, done;
	long ret;

	if (c->pre && !c->pre(c)) {
		sf_ok(0, "%s: set-up before the pool", c->what);
		return;
	}
	stack = threadlet_stack_alloc(64 << 10);
	r = async_head_init(&ahu, 16, 2);
	if (threadlet_err(stack) || r || !sf_block_prepare(&b, &ahu)) {
		sf_ok(0, "%s: async_head_init (%d) and the writer thread", c->what, r);
		return;
	}
	r = c->change(c);
	if (r < 0) {
		sf_block_finish(&b);
		sf_skip(c->what);
		return;
	}
	if (!r) {
		sf_ok(0, "%s: changing the head's state: %s", c->what, strerror(errno));
		sf_block_finish(&b);
		return;
	}
	ret = sf_block_run(&b, stack, &s0, &s1, &done);
	if (c->reason) {
		int why = s1.last_fallback == c->reason;

		sf_ok(ret == 1, "%s: the threadlet slept in place: threadlet_exec() = 1 (%ld)",
		      c->what, ret);
		sf_ok(s1.nr_fallbacks > s0.nr_fallbacks &&
		      s1.nr_handoffs == s0.nr_handoffs && why,
		      "%s: a fallback, reason %u (%llu fallbacks, reason %u, %llu hand-offs)",
		      c->what, c->reason, s1.nr_fallbacks - s0.nr_fallbacks,
		      s1.last_fallback, s1.nr_handoffs - s0.nr_handoffs);
	} else {
		sf_ok(ret == 0 && s1.nr_handoffs == s0.nr_handoffs + 1,
		      "%s: the threadlet handed off: threadlet_exec() = 0 (%ld, %llu hand-offs, last fallback %u)",
		      c->what, ret, s1.nr_handoffs - s0.nr_handoffs, s1.last_fallback);
	}
	sf_ok(done && b.n == 1, "%s: the threadlet's read completed (%ld)", c->what, b.n);
	c->verify(c);
	sf_block_finish(&b);
}

#define CASE(w, p, ch, v, r) \
	{ .what = (w), .pre = (p), .change = (ch), .verify = (v), .reason = (r) }

static struct fb_case cases[] = {
	/* Finding 3: differing per-thread state falls back ... */
	CASE("fs: unshare(CLONE_FS), chdir, umask in the head", NULL,
	     cwd_change, cwd_verify, THREADLET_FB_FS),
	CASE("fs: chroot in the head", NULL, chroot_change, chroot_verify,
	     THREADLET_FB_FS),
	CASE("files: unshare(CLONE_FILES) in the head", NULL, files_change,
	     files_verify, THREADLET_FB_FILES),
	CASE("namespaces: a namespace of the head's own", NULL, ns_change,
	     ns_verify, THREADLET_FB_NAMESPACES),
	CASE("sched: nice 5 in the head", NULL, nice_change, nice_verify,
	     THREADLET_FB_SCHED),
	CASE("sched: head affine to CPU 0", NULL, affinity_change,
	     affinity_verify, THREADLET_FB_SCHED),
	CASE("sched: ioprio idle in the head", NULL, ioprio_change,
	     ioprio_verify, THREADLET_FB_SCHED),
	CASE("task: personality in the head", NULL, persona_change,
	     persona_verify, THREADLET_FB_TASK),
	CASE("creds: no_new_privs in the head only", NULL, nnp_change,
	     nnp_verify, THREADLET_FB_CREDS),
	/* ... the same state in every thread does not ... */
	CASE("no_new_privs before the pool", nnp_change, nothing, nnp_verify, 0),
	CASE("umask changed process-wide", NULL, umask_change, umask_verify, 0),
	/* ... and these move with the head. */
	CASE("comm set in the head", NULL, comm_change, comm_verify, 0),
	CASE("timer slack set in the head", NULL, slack_change, slack_verify, 0),
	CASE("pdeath signal set in the head", NULL, pdeath_change,
	     pdeath_verify, 0),
	/* Finding 11: credentials compare by content. */
	CASE("creds: setuid(getuid()) in every thread", NULL, setuid_change,
	     setuid_verify, 0),
	CASE("creds: euid 65534 in the head only", NULL, euid_change,
	     euid_verify, THREADLET_FB_CREDS),
};

/* Removes what a case leaves in /tmp (a mount goes with its namespace). */
static void cleanup(struct fb_case *c)
{
	char marker[96];

	snprintf(marker, sizeof(marker), "%s/sf-marker", c->path);
	unlink(marker);
	unlink(c->path);
	rmdir(c->path);
}

int main(void)
{
	sf_init();
	tl_ok(getuid() == 0, "running as root");
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fb_case *c = &cases[i];
		int status;

		snprintf(c->path, sizeof(c->path), "/tmp/sf-state-%u", i);
		cleanup(c);
		status = sf_child(run_case, c, 60);
		sf_child_ok(status, c->what);
		cleanup(c);
	}
	return tl_exit();
}
