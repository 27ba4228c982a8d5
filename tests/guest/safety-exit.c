// SPDX-License-Identifier: GPL-2.0
/*
 * A head with a multi-threaded child hands off, then exits (finding 1).
 *
 * Every thread of a child process has its own real_parent: the task that
 * forked the child. A hand-off moves the head's children to the task that
 * takes over the head; all their threads must move, not only the child's
 * leader. Otherwise, when the head exits, the kernel reparents the child
 * and finds threads whose parent is another task: BUG() in
 * forget_original_parent(), and the guest panics (so this test has a file
 * of its own).
 *
 * Process tree: this test T forks P. In P a pthread H forks C, which starts
 * two more threads and waits, and C2, which waits for a byte and exits 5.
 * H's threadlet blocks and hands off; H checks that C and C2 are its own
 * children (waitpid with __WNOTHREAD) and exits. C's threads then belong to
 * another thread of P. P exits: C's threads all show PPid 1. C exits when
 * told, and T reaps P normally.
 */
#include <poll.h>
#include "safety.h"

struct exit_ctx {
	int rel[2];		/* T releases C */
	int done[2];		/* C says goodbye */
	pid_t c;		/* C's PID, for T */
};

static struct async_head_user ahu;
static unsigned long stack;
static struct exit_ctx *x;

/* Threads of process @pid and whether each one's PPid is @want. */
static int ppids_are(pid_t pid, pid_t want, int *n, int *bad_ppid)
{
	char path[64], val[32];
	struct dirent *e;
	DIR *d;
	int ok = 1;

	*n = 0;
	*bad_ppid = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, atoi(e->d_name));
		if (!sf_status_field(path, "PPid", val, sizeof(val))) {
			ok = 0;
			continue;
		}
		(*n)++;
		if (atoi(val) != want) {
			ok = 0;
			*bad_ppid = atoi(val);
		}
	}
	closedir(d);
	return ok;
}

/* Waits up to 2 s for all 3 threads of @pid to have PPid @want. */
static int settle_ppids(pid_t pid, pid_t want, int *n, int *bad)
{
	for (int i = 0; i < 2000; i++) {
		if (ppids_are(pid, want, n, bad) && *n == 3)
			return 1;
		usleep(1000);
	}
	return 0;
}

static int read_byte(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&p, 1, ms) == 1 && read(fd, &c, 1) == 1;
}

static void *c_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* C: two more threads, then wait to be released. */
static void c_main(int ready)
{
	pthread_t t[2];

	alarm(120);		/* P closed rel[1] and done[0] before H started */
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, c_thread, NULL))
			_exit(20);
	if (tl_nr_threads_settle(3) != 3 || write(ready, "r", 1) != 1)
		_exit(21);
	read_byte(x->rel[0], 120000);
	if (write(x->done[1], "d", 1) != 1)
		_exit(22);
	_exit(0);
}

/* H: a pthread of P that forks C and C2, hands off, and exits. */
static void *h_main(void *arg)
{
	struct threadlet_stats s0, s1;
	struct sf_block b;
	int rp[2], c2p[2], st, n, bad, done;
	pid_t c, c2, r;
	long ret;

	(void)arg;
	if (pipe(rp) || pipe(c2p)) {
		sf_ok(0, "pipes");
		return NULL;
	}
	fflush(stdout);
	c = fork();
	if (c == 0)
		c_main(rp[1]);
	c2 = fork();
	if (c2 == 0) {
		alarm(60);
		_exit(read_byte(c2p[0], 60000) ? 5 : 6);
	}
	x->c = c;
	close(rp[1]);
	sf_ok(c > 0 && read_byte(rp[0], 30000), "H forked C, which started 2 more threads");
	sf_ok(ppids_are(c, getpid(), &n, &bad) && n == 3,
	      "C has 3 threads, PPid %d (%d threads)", getpid(), n);

	if (!sf_block_prepare(&b, &ahu)) {
		sf_ok(0, "writer thread");
		return NULL;
	}
	ret = sf_block_run(&b, stack, &s0, &s1, &done);
	sf_ok(ret == 0 && s1.nr_handoffs == s0.nr_handoffs + 1 && done,
	      "H's threadlet blocked and handed off (%ld, %llu hand-offs)", ret,
	      s1.nr_handoffs - s0.nr_handoffs);

	r = waitpid(c, &st, WNOHANG | __WNOTHREAD);
	sf_ok(r == 0, "after the hand-off C is H's own child: waitpid(C, WNOHANG|__WNOTHREAD) = 0 (%d, %s)",
	      r, r < 0 ? strerrorname_np(errno) : "-");
	sf_ok(write(c2p[1], "x", 1) == 1, "release C2");
	r = waitpid(c2, &st, __WNOTHREAD);
	sf_ok(r == c2 && WIFEXITED(st) && WEXITSTATUS(st) == 5,
	      "waitpid(C2, __WNOTHREAD) in the head reaps it, status 5 (%d)", r);
	sf_block_finish(&b);
	tl_wait_parked(&ahu, 2);
	close(rp[0]);
	close(c2p[0]);
	close(c2p[1]);
	return NULL;
}

/* P: the head's process. */
static void p_main(void *arg)
{
	pthread_t h;
	int n, bad;

	(void)arg;
	close(x->rel[1]);
	close(x->done[0]);
	stack = threadlet_stack_alloc(64 << 10);
	sf_ok(!threadlet_err(stack) && async_head_init(&ahu, 16, 2) == 0, "P: async_head_init");
	sf_ok(pthread_create(&h, NULL, h_main, NULL) == 0, "P: start H");
	sf_ok(pthread_join(h, NULL) == 0, "P: H exited, pthread_join() returned");
	if (x->c <= 0)
		return;
	sf_ok(settle_ppids(x->c, getpid(), &n, &bad),
	      "P: C's %d threads belong to P still (PPid %d)", n, bad ? bad : getpid());
	async_head_exit(&ahu);
	sf_ok(settle_ppids(x->c, getpid(), &n, &bad),
	      "P: and after the pool exited (%d threads, PPid %d)", n, bad ? bad : getpid());
}

int main(void)
{
	char path[64], st[32] = "";
	int status, n, bad, alive;

	sf_init();
	signal(SIGPIPE, SIG_IGN);
	x = sf_shared(4096);
	if (pipe(x->rel) || pipe(x->done))
		return 1;
	status = sf_child(p_main, NULL, 90);
	sf_child_ok(status, "P");
	close(x->rel[0]);
	close(x->done[1]);
	if (x->c <= 0) {
		sf_ok(0, "C was started");
		return tl_exit();
	}
	sf_ok(settle_ppids(x->c, 1, &n, &bad),
	      "P gone: all of C's threads are reparented to init, PPid 1 (%d threads, PPid %d)",
	      n, bad ? bad : 1);
	sf_ok(write(x->rel[1], "q", 1) == 1 && read_byte(x->done[0], 20000),
	      "C exits when told");
	snprintf(path, sizeof(path), "/proc/%d/status", x->c);
	for (int i = 0; i < 5000; i++) {
		if (!sf_status_field(path, "State", st, sizeof(st)) || st[0] == 'Z' ||
		    st[0] == 'X')
			break;
		usleep(1000);
	}
	st[0] = 0;
	/* X: being released by the parent that reaped it, a moment before gone. */
	alive = sf_status_field(path, "State", st, sizeof(st)) && st[0] != 'Z' && st[0] != 'X';
	sf_ok(!alive, "C is gone (or dead, or a zombie for init to reap) (%s)",
	      st[0] ? st : "gone");
	if (alive)
		kill(x->c, SIGKILL);
	return tl_exit();
}
