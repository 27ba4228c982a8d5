// SPDX-License-Identifier: GPL-2.0
/*
 * What security modules and keyrings tie to a thread, across a hand-off
 * (docs/task-state.md, open gaps 6 and 16 of the first review).
 *
 * Yama. With ptrace_scope 1 a process may only attach to its descendants,
 * unless the tracee named it with PR_SET_PTRACER. Yama keeps that relation
 * on the task_structs that held the thread IDs at the time; a hand-off of
 * the main thread gives the PID to another task. Process L and process Q
 * (not related by descent) name each other; opening /proc/<pid>/mem, which
 * Yama checks as an attach, tells whether each may reach the other. L's main
 * thread hands off; both must still reach each other, also after the task
 * that slept in the threadlet has exited as a pool thread, and not after L
 * revokes. Without security_task_handoff(), Q is refused right after the
 * hand-off and L once the old task has exited.
 *
 * Task work. Work queued for a task runs when that task returns to user
 * space; handed off, the head's would run in the cache-miss thread. The
 * hook falls back (THREADLET_FB_TASK) while the head has any. A recvmmsg()
 * that drops a passed descriptor (the file's final fput() is queued as
 * task work) and then waits for its next datagram sleeps in place; the
 * same wait without the descriptor is handed off (the control). The one kind of work that another process
 * queues for a thread, keyctl(KEYCTL_SESSION_TO_PARENT), is refused while
 * the parent has other threads (which a head with a pool has), and works
 * for a single-threaded parent (the control).
 */
#include <fcntl.h>
#include <linux/keyctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include "safety.h"
#include "tl_yama.h"

static struct async_head_user ahu;

static void yama_relations(void *arg)
{
	struct threadlet_stats s0, s1;
	struct q_proc q;
	struct sf_block b;
	unsigned long stack;
	pid_t pid = getpid();
	int done, r1, r2;
	long ret;

	(void)arg;
	/* As an unprivileged user: CAP_SYS_PTRACE would pass Yama by. */
	if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY) ||
	    prctl(PR_SET_DUMPABLE, 1)) {
		sf_ok(0, "drop to uid %d", NOBODY);
		return;
	}
	stack = threadlet_stack_alloc(64 << 10);
	if (threadlet_err(stack) || q_start(&q) || async_head_init(&ahu, 16, 2) ||
	    !sf_block_prepare(&b, &ahu)) {
		sf_ok(0, "Yama: set-up");
		return;
	}
	tl_wait_parked(&ahu, 2);
	r1 = q_ask(&q, 'r');
	r2 = read_probe(q.pid);
	sf_ok(r1 == EACCES && r2 == EACCES,
	      "without PR_SET_PTRACER, neither reaches the other (%s, %s)",
	      strerror(r1), strerror(r2));
	sf_ok(prctl(PR_SET_PTRACER, q.pid) == 0 && q_ask(&q, 'p') == 0,
	      "L names Q, Q names L (PR_SET_PTRACER)");
	sf_ok(q_ask(&q, 'r') == 0, "Q reads L");
	sf_ok(read_probe(q.pid) == 0, "L reads Q");

	ret = sf_block_run(&b, stack, &s0, &s1, &done);
	sf_ok(ret == 0 && s1.nr_handoffs == s0.nr_handoffs + 1 && done && b.n == 1,
	      "L's main thread hands off (%ld)", ret);
	sf_ok(getpid() == pid && gettid() == pid && b.tid_after != pid,
	      "the PID stays with the head, the threadlet ended in %d", b.tid_after);
	sf_ok(q_ask(&q, 'r') == 0, "after the hand-off, Q still reads L");
	sf_ok(read_probe(q.pid) == 0, "after the hand-off, L still reads Q");

	/* The task that slept in the threadlet exits with the pool. */
	sf_block_finish(&b);
	tl_wait_parked(&ahu, 2);
	async_head_exit(&ahu);
	sf_ok(tl_nr_threads_settle(1) == 1, "pool threads gone");
	sf_ok(q_ask(&q, 'r') == 0, "after the old task exited, Q still reads L");
	sf_ok(read_probe(q.pid) == 0, "after the old task exited, L still reads Q");

	r1 = prctl(PR_SET_PTRACER, 0);
	r2 = q_ask(&q, 'r');
	sf_ok(r1 == 0 && r2 == EACCES, "L revokes: Q is refused (%s)", strerror(r2));
	sf_ok(read_probe(q.pid) == 0, "L still reads Q");
	q_ask(&q, 'q');
	threadlet_stack_free(stack);
}

/* ---- task work --------------------------------------------------------- */

/*
 * The threadlet receives two datagrams with one recvmmsg(), which waits
 * for both. The first is there already; when it carries a descriptor
 * (SCM_RIGHTS) that the receiver has no room for, the kernel drops the
 * file, whose last reference that is: fput() queues the release as task
 * work on the receiver, which then sleeps for the second datagram. That
 * comes from the head right after threadlet_exec() returned 0 (handed
 * off), or from a writer thread once the head's TID has been asleep for
 * 50 ms (in place).
 */
struct tw_job {
	int sv[2];
	pid_t head_tid;
	int kicked;
	int n;			/* recvmmsg()'s result */
	int flags0;		/* the first message's msg_flags */
	pthread_t writer;
};

static void tw_kick(struct tw_job *j)
{
	if (!__atomic_exchange_n(&j->kicked, 1, __ATOMIC_ACQ_REL))
		send(j->sv[0], "2", 1, 0);
}

static void *tw_writer(void *arg)
{
	struct tw_job *j = arg;

	sf_wait_sleeping(j->head_tid, &j->kicked);
	usleep(50000);
	tw_kick(j);
	return NULL;
}

static long tw_fn(void *data)
{
	struct tw_job *j = data;
	char b0, b1;
	struct iovec iov[2] = { { &b0, 1 }, { &b1, 1 } };
	struct mmsghdr m[2];

	memset(m, 0, sizeof(m));
	m[0].msg_hdr.msg_iov = &iov[0];
	m[0].msg_hdr.msg_iovlen = 1;
	m[1].msg_hdr.msg_iov = &iov[1];
	m[1].msg_hdr.msg_iovlen = 1;
	j->n = recvmmsg(j->sv[1], m, 2, 0, NULL);
	j->flags0 = m[0].msg_hdr.msg_flags;
	return complete_threadlet_fn(j, &ahu);
}

/* Sends the first datagram, with a memfd's only reference if @pass_fd. */
static int tw_send_first(struct tw_job *j, int pass_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { "1", 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	int mfd = -1, ok;

	if (pass_fd) {
		mfd = memfd_create("safety-lsm", 0);
		if (mfd < 0)
			return 0;
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &mfd, sizeof(int));
	}
	ok = sendmsg(j->sv[0], &mh, 0) == 1;
	if (mfd >= 0)
		close(mfd);	/* the datagram holds the last reference */
	return ok;
}

static long tw_run(struct tw_job *j, int pass_fd, unsigned long stack,
		   struct threadlet_stats *s0, struct threadlet_stats *s1)
{
	long ret = -1000;

	memset(j, 0, sizeof(*j));
	j->n = -999;
	j->head_tid = gettid();
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, j->sv))
		return ret;
	if (!tw_send_first(j, pass_fd) ||
	    pthread_create(&j->writer, NULL, tw_writer, j))
		goto out;
	threadlet_stats(s0);
	ret = threadlet_exec(tw_fn, j, stack, &ahu);
	threadlet_stats(s1);
	if (ret == 0) {
		tw_kick(j);
		if (sf_wait_event(&ahu, 10000) != j)
			ret = -1001;
	}
	tw_kick(j);
	pthread_join(j->writer, NULL);
out:
	close(j->sv[0]);
	close(j->sv[1]);
	return ret;
}

static void task_work(void *arg)
{
	struct threadlet_stats s0, s1;
	struct tw_job j;
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	long ret;

	(void)arg;
	if (threadlet_err(stack) || async_head_init(&ahu, 16, 2)) {
		sf_ok(0, "task work: set-up");
		return;
	}
	tl_wait_parked(&ahu, 2);
	ret = tw_run(&j, 0, stack, &s0, &s1);
	sf_ok(ret == 0 && s1.nr_handoffs == s0.nr_handoffs + 1 && j.n == 2,
	      "control: recvmmsg() waiting for its second datagram hands off "
	      "(%ld, %d received)", ret, j.n);

	tl_wait_parked(&ahu, 2);
	ret = tw_run(&j, 1, stack, &s0, &s1);
	sf_ok(ret == 1 && s1.nr_handoffs == s0.nr_handoffs &&
	      s1.nr_fallbacks > s0.nr_fallbacks &&
	      s1.last_fallback == THREADLET_FB_TASK && j.n == 2,
	      "after dropping a passed file (its last fput() queued as task "
	      "work) it sleeps in place: THREADLET_FB_TASK (%ld, handoffs +%llu, "
	      "reason %u, %d received)", ret, s1.nr_handoffs - s0.nr_handoffs,
	      s1.last_fallback, j.n);
	sf_ok(j.flags0 & MSG_CTRUNC, "the descriptor was dropped (MSG_CTRUNC)");

	tl_wait_parked(&ahu, 2);
	async_head_exit(&ahu);
	threadlet_stack_free(stack);
}

/* ---- keyctl(KEYCTL_SESSION_TO_PARENT) ------------------------------------ */

static long keyctl(int op, unsigned long a2)
{
	return syscall(SYS_keyctl, op, a2, 0, 0, 0);
}

static long session_keyring(void)
{
	return keyctl(KEYCTL_GET_KEYRING_ID, (unsigned long)KEY_SPEC_SESSION_KEYRING);
}

/* A child joins a new session keyring and asks to give it to us: its errno. */
static int child_session_to_parent(void)
{
	int status;
	pid_t c = fork();

	if (c == 0) {
		if (keyctl(KEYCTL_JOIN_SESSION_KEYRING, 0) < 0)
			_exit(100);
		_exit(keyctl(KEYCTL_SESSION_TO_PARENT, 0) ? errno : 0);
	}
	if (c < 0 || waitpid(c, &status, 0) != c || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void keyctl_parent(void *arg)
{
	long before, after;
	int r;

	(void)arg;
	/* Control: a single-threaded parent gets the new session keyring. */
	before = session_keyring();
	r = child_session_to_parent();
	after = session_keyring();	/* the work ran on return from wait */
	sf_ok(r == 0 && before > 0 && after > 0 && after != before,
	      "control: single-threaded parent: the child's session keyring "
	      "arrives (%d, %ld -> %ld)", r, before, after);

	if (async_head_init(&ahu, 16, 2)) {
		sf_ok(0, "keyctl: pool");
		return;
	}
	tl_wait_parked(&ahu, 2);
	before = session_keyring();
	r = child_session_to_parent();
	sf_ok(r == EPERM && session_keyring() == before,
	      "a parent with a pool: KEYCTL_SESSION_TO_PARENT refused (%s)",
	      r > 0 ? strerror(r) : "?");
	async_head_exit(&ahu);
}

int main(void)
{
	char scope[8] = "0";
	int fd, status;
	ssize_t n;

	sf_init();
	/* Q is re-parented here, not to init: reaped below. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fd = open(YAMA_SCOPE, O_RDONLY);
	sf_ok(fd >= 0, "Yama is in the kernel (%s)", YAMA_SCOPE);
	if (fd >= 0) {
		n = read(fd, scope, sizeof(scope) - 1);
		scope[n > 0 ? n : 0] = '\0';
		close(fd);
		sf_ok(write_str(YAMA_SCOPE, "1"), "ptrace_scope = 1 (relational)");
		status = sf_child(yama_relations, NULL, 60);
		sf_child_ok(status, "Yama relations");
		write_str(YAMA_SCOPE, scope);
	}
	status = sf_child(task_work, NULL, 60);
	sf_child_ok(status, "task work");
	status = sf_child(keyctl_parent, NULL, 60);
	sf_child_ok(status, "keyctl");
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	return tl_exit();
}
