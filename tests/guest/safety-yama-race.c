// SPDX-License-Identifier: GPL-2.0
/*
 * Yama's PR_SET_PTRACER from a second thread against hand-offs of the main
 * thread (found by a helper's review). A relation names the group leader,
 * and a hand-off of the main thread moves leadership, and then the
 * relations that name the old leader, to the new one. prctl() found the
 * leader without a lock: between the move and the relations' move, it
 * found the new leader, revoked nothing that named it, and then the
 * relation of the old leader moved there; the tracer the process had just
 * revoked could still attach (and a new one named then was refused).
 * Expected: with ptrace_scope 1, Q, named and revoked again and again by
 * L's second thread, is refused every time after a revoke, and reads L's
 * memory after it was named (but for a check that races a hand-off).
 */
#include <sys/prctl.h>
#include "safety.h"

#define YAMA_SCOPE	"/proc/sys/kernel/yama/ptrace_scope"
#define NOBODY		65534

static struct async_head_user ahu;
static volatile int probe = 0x5eed;
static int stop;

static int read_probe(pid_t pid)
{
	char path[32];
	int val = 0, fd, err;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return errno;
	n = pread64(fd, &val, sizeof(val), (off64_t)(uintptr_t)&probe);
	err = errno;
	close(fd);
	if (n < 0)
		return err;
	return n == sizeof(val) && val == 0x5eed ? 0 : EIO;
}

static int write_all(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

static int read_all(int fd, void *buf, size_t len)
{
	return read(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

static void q_loop(pid_t l_pid, int cmd, int res)
{
	pid_t me = getpid();
	char c;
	int r;

	prctl(PR_SET_DUMPABLE, 1);
	if (write_all(res, &me, sizeof(me)))
		_exit(1);
	while (read_all(cmd, &c, 1) == 0) {
		if (c == 'r')
			r = read_probe(l_pid);
		else
			_exit(0);
		if (write_all(res, &r, sizeof(r)))
			_exit(1);
	}
	_exit(0);
}

struct q_proc {
	int cmd, res;
	pid_t pid;
};

static int q_ask(struct q_proc *q, char c)
{
	int r = -1;

	if (write_all(q->cmd, &c, 1) || read_all(q->res, &r, sizeof(r)))
		return -1;
	return r;
}

static int q_start(struct q_proc *q)
{
	int cmd[2], res[2], status;
	pid_t l_pid = getpid(), m;

	if (pipe(cmd) || pipe(res))
		return -1;
	m = fork();
	if (m < 0)
		return -1;
	if (m == 0) {
		if (fork() == 0) {
			close(cmd[1]);
			close(res[0]);
			q_loop(l_pid, cmd[0], res[1]);
		}
		_exit(0);
	}
	close(cmd[0]);
	close(res[1]);
	q->cmd = cmd[1];
	q->res = res[0];
	if (waitpid(m, &status, 0) != m ||
	    read_all(q->res, &q->pid, sizeof(q->pid)))
		return -1;
	return 0;
}

static long nap_fn(void *data)
{
	struct timespec ts = { 0, 20 * 1000 };

	nanosleep(&ts, NULL);
	return complete_threadlet_fn(data, &ahu);
}

struct res {
	int rounds, open_after_revoke, refused_after_set, other;
	int first_round;
};

static struct q_proc q;
static struct res R;

static void *revoker(void *arg)
{
	long long end = tl_now_ns() + 15LL * 1000000000LL;
	unsigned int seed = 12345;

	(void)arg;
	while (tl_now_ns() < end && R.rounds < 200000) {
		int r1, r2, r3;
		volatile int spin;

		r1 = prctl(PR_SET_PTRACER, q.pid);
		r2 = q_ask(&q, 'r');
		if (r1 == 0 && r2 == EACCES)
			R.refused_after_set++;
		spin = rand_r(&seed) % 20000;
		while (spin-- > 0)
			;
		r1 = prctl(PR_SET_PTRACER, 0);
		r3 = q_ask(&q, 'r');
		R.rounds++;
		if (r1 == 0 && r3 == 0) {
			if (!R.open_after_revoke++)
				R.first_round = R.rounds;
		} else if (r1 || r3 != EACCES)
			R.other++;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void run(void *arg)
{
	unsigned long stack;
	pthread_t t;
	int n = 0, ev, i;

	(void)arg;
	if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY) ||
	    prctl(PR_SET_DUMPABLE, 1)) {
		sf_ok(0, "drop to uid %d", NOBODY);
		return;
	}
	stack = threadlet_stack_alloc(64 << 10);
	if (threadlet_err(stack) || q_start(&q) || async_head_init(&ahu, 16, 2)) {
		sf_ok(0, "set-up");
		return;
	}
	sf_ok(q_ask(&q, 'r') == EACCES, "Q refused without a relation");
	if (pthread_create(&t, NULL, revoker, NULL)) {
		sf_ok(0, "thread");
		return;
	}
	for (i = 0; !__atomic_load_n(&stop, __ATOMIC_ACQUIRE); i++)
		if (threadlet_exec(nap_fn, &ev, stack, &ahu) == 0) {
			n++;
			sf_wait_event(&ahu, 5000);
		}
	pthread_join(t, NULL);
	tl_diag("%d main-thread hand-offs, %d rounds", n, R.rounds);
	sf_ok(R.open_after_revoke == 0,
	      "after PR_SET_PTRACER(0) Q is refused: %d of %d rounds Q still read L (first in round %d)",
	      R.open_after_revoke, R.rounds, R.first_round);
	/*
	 * Yama's check reads the leader and then the relations without a
	 * lock: one that races the move of both may find neither, and
	 * refuses. That window fails closed, as one during exec does.
	 */
	sf_ok(R.refused_after_set * 10 < R.rounds,
	      "after PR_SET_PTRACER(Q) Q reads L: refused in %d of %d rounds (checks that raced a hand-off)",
	      R.refused_after_set, R.rounds);
	tl_diag("other results: %d", R.other);
	q_ask(&q, 'q');
	async_head_exit(&ahu);
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	int ok = fd >= 0 && write(fd, s, strlen(s)) == (ssize_t)strlen(s);

	if (fd >= 0)
		close(fd);
	return ok;
}

int main(void)
{
	int status;

	char old[8] = "0";
	int fd = open(YAMA_SCOPE, O_RDONLY);

	sf_init();
	if (fd >= 0) {
		if (read(fd, old, sizeof(old) - 1) < 1)
			strcpy(old, "0");
		close(fd);
	}
	tl_ok(write_str(YAMA_SCOPE, "1"), "ptrace_scope = 1");
	status = sf_child(run, NULL, 90);
	sf_child_ok(status, "the racing process");
	write_str(YAMA_SCOPE, old);
	return tl_exit();
}
