// SPDX-License-Identifier: GPL-2.0
/*
 * A syslet chain does the work that the exit to user space would have
 * done after each of its atoms (resume_user_mode_work()).
 *
 * Between two atoms a chain never returns to user space, and a cache-miss
 * thread that finishes a chain may park without returning there at all.
 * Before the fix, the task work queued on the way stayed queued: the CPU
 * time limits and timers (run as task work) never fired, so an endless
 * chain outran RLIMIT_CPU; and the last fput() of a file an atom closed
 * never ran, so a close() in a chain that went async closed nothing while
 * its thread stayed parked (and a chain of pipe2()/close() filled the
 * system's file table past RLIMIT_NOFILE).
 *
 * Expected:
 *   1. an endless getppid() chain of an unprivileged process with
 *      RLIMIT_CPU 1 s (soft) is ended by SIGXCPU, as a user-space loop is;
 *   2. a chain that blocks in read(), goes on in a cache-miss thread and
 *      then closes the write end of another pipe: the reader of that pipe
 *      sees end of file once the chain has completed, while the thread is
 *      parked;
 *   3. an endless chain of pipe2() and two close()s, with RLIMIT_NOFILE 64:
 *      the open files of the system stay bounded (/proc/sys/fs/file-nr).
 *
 * And, found with them: a syslet queue not aligned to 4 bytes is refused
 * (-EINVAL): its head could straddle two cache lines, and the kernel's
 * locked compare-and-exchange on it would be a split lock.
 */
#include <poll.h>
#include <sys/resource.h>
#include "safety.h"

static struct async_head_user ahu;

/* 1: RLIMIT_CPU ends an endless chain. */
static void cpu_limit(void *arg)
{
	static struct syslet_uatom at;
	static long long ret;
	struct rlimit rl = { 1, 3 };
	int chain = arg != NULL, status;
	pid_t pid;
	long long t0;

	pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(10);
		if (chain && async_head_init(&ahu, 8, 1))
			_exit(11);
		if (setrlimit(RLIMIT_CPU, &rl))
			_exit(12);
		if (chain) {
			syslet_atom_init(&at, SYS_getppid, 0, &ret, &at, 0);
			async_exec(&at, &ahu);
			_exit(13);	/* only a handled signal would end it */
		}
		for (volatile unsigned long i = 0;; i++)
			;
	}
	t0 = tl_now_ns();
	if (pid < 0 || !sf_waitpid(pid, &status, 0, 20000)) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
		sf_ok(0, "%s: RLIMIT_CPU (1 s) did not end it within 20 s",
		      chain ? "endless chain" : "user-space loop");
		return;
	}
	sf_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU,
	      "%s: ended by SIGXCPU after %.1f s (%s)",
	      chain ? "endless chain" : "user-space loop",
	      (tl_now_ns() - t0) / 1e9, sf_status_str(status));
}

/* 2: a close() in a chain that went async closes the file. */
static void close_async(void *arg)
{
	static struct syslet_uatom at[2];
	static long long r[2] = { 1, 1 };
	static u64 rfd, buf, len = 1, wfd;
	static char c;
	struct pollfd p;
	int pa[2], pb[2], n, i;
	void *done;

	(void)arg;
	sf_ok(async_head_init(&ahu, 8, 2) == 0 && !pipe(pa) && !pipe(pb),
	      "async head, two pipes");
	sf_ok(tl_wait_parked(&ahu, 2), "two threads parked");
	rfd = pa[0];
	buf = (uintptr_t)&c;
	wfd = dup(pb[1]);	/* the chain closes the last write end */
	syslet_atom_init(&at[0], SYS_read, 0, &r[0], &at[1], 3, &rfd, &buf, &len);
	syslet_atom_init(&at[1], SYS_close, 0, &r[1], NULL, 1, &wfd);
	done = async_exec(at, &ahu);
	sf_ok(done == NULL, "the chain blocked in read() and went async (%p)", done);
	close(pb[1]);
	sf_ok(write(pa[1], "x", 1) == 1, "wake the read");
	done = sf_wait_event(&ahu, 5000);
	sf_ok(done == &at[1] && r[0] == 1 && r[1] == 0,
	      "the chain completed: read %lld, close %lld", r[0], r[1]);
	for (i = 0; i < 2000 && async_head_parked(&ahu) < 2; i++)
		usleep(1000);
	p = (struct pollfd){ .fd = pb[0], .events = POLLIN };
	n = poll(&p, 1, 2000);
	sf_ok(n == 1 && (p.revents & POLLHUP) && read(pb[0], &c, 1) == 0,
	      "the reader sees end of file with the thread parked (poll %d, revents %#x, parked %ld)",
	      n, p.revents, async_head_parked(&ahu));
	async_head_exit(&ahu);
}

static long files_open(void)
{
	long nr = -1, unused, max;
	FILE *f = fopen("/proc/sys/fs/file-nr", "r");

	if (f && fscanf(f, "%ld %ld %ld", &nr, &unused, &max) != 3)
		nr = -1;
	if (f)
		fclose(f);
	return nr;
}

/* 3: a chain of pipe2() and close() does not pile up open files. */
static void file_table(void *arg)
{
	static struct syslet_uatom at[3];
	static long long r[3];
	static int fds[2];
	static u64 a_fds, a_flags = O_NONBLOCK, a_rd, a_wr;
	struct rlimit rl = { 64, 64 };
	long before = files_open(), peak = before, now;
	int status, i;
	pid_t pid;

	(void)arg;
	pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534) || setrlimit(RLIMIT_NOFILE, &rl))
			_exit(10);
		if (async_head_init(&ahu, 8, 1))
			_exit(11);
		a_fds = (uintptr_t)fds;
		/* pipe2(); close(fds[0]); close(fds[1]); again */
		syslet_atom_init(&at[0], SYS_pipe2, 0, &r[0], &at[1], 2, &a_fds, &a_flags);
		syslet_atom_init(&at[1], SYS_close, 0, &r[1], &at[2], 1, &a_rd);
		syslet_atom_init(&at[2], SYS_close, 0, &r[2], &at[0], 1, &a_wr);
		/* The closes read the numbers pipe2() wrote: fds[] as u64s. */
		a_rd = 3;
		a_wr = 4;
		for (i = 3; i < 64; i++)
			close(i);
		async_exec(at, &ahu);
		_exit(12);
	}
	for (i = 0; i < 30; i++) {
		usleep(100000);
		now = files_open();
		if (now > peak)
			peak = now;
	}
	kill(pid, SIGKILL);
	sf_waitpid(pid, &status, 0, 10000);
	sf_ok(before >= 0 && peak - before < 10000,
	      "open files of the system: %ld before, at most %ld during 3 s of the chain",
	      before, peak);
}

/* 4: a queue whose head could straddle two cache lines is refused. */
static void misaligned_queue(void *arg)
{
	static struct syslet_uatom at[2];
	static long long r[2];
	static u64 entries[1];
	static char line[192] __attribute__((aligned(64)));
	struct syslet_queue *q = (struct syslet_queue *)(line + 62);
	void *done;

	(void)arg;
	sf_ok(async_head_init(&ahu, 8, 1) == 0, "async head");
	entries[0] = (uintptr_t)&at[1];
	memset(q, 0, sizeof(*q));
	q->nr = 1;
	q->entries = (uintptr_t)entries;
	syslet_atom_init(&at[0], SYS_getppid, 0, &r[0], NULL, 0);
	syslet_link_queue(&at[0], q);
	syslet_atom_init(&at[1], SYS_getpid, 0, &r[1], NULL, 0);
	r[1] = 7;
	done = async_exec(&at[0], &ahu);
	sf_ok(done == &at[0] && r[0] == -EINVAL && r[1] == 7 && q->head == 0,
	      "queue at line offset 62: -EINVAL in the taking atom, nothing taken (%lld, head %u)",
	      r[0], q->head);
	q = (struct syslet_queue *)(line + 60);
	memset(q, 0, sizeof(*q));
	q->nr = 1;
	q->entries = (uintptr_t)entries;
	syslet_link_queue(&at[0], q);
	done = async_exec(&at[0], &ahu);
	sf_ok(done == &at[1] && r[0] == getppid() && r[1] == getpid() && q->head == 1,
	      "queue at line offset 60 (4-byte aligned): the atom is taken and runs (%lld, head %u)",
	      r[1], q->head);
	async_head_exit(&ahu);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(cpu_limit, NULL, 60);
	sf_child_ok(status, "RLIMIT_CPU, user-space loop");
	status = sf_child(cpu_limit, (void *)1, 60);
	sf_child_ok(status, "RLIMIT_CPU, endless syslet chain");
	status = sf_child(close_async, NULL, 60);
	sf_child_ok(status, "close() in a chain that went async");
	status = sf_child(file_table, NULL, 60);
	sf_child_ok(status, "pipe2()/close() chain and the file table");
	status = sf_child(misaligned_queue, NULL, 60);
	sf_child_ok(status, "misaligned syslet queue");
	return tl_exit();
}
