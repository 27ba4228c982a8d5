/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Yama's tests: process Q, which is not L's descendant, and L's probe,
 * which Q reads through /proc/<L>/mem (Yama checks that open as an
 * attach). Include after safety.h.
 */
#ifndef TL_YAMA_H
#define TL_YAMA_H

#include <sys/prctl.h>

#define YAMA_SCOPE	"/proc/sys/kernel/yama/ptrace_scope"
#define NOBODY		65534

static volatile int probe = 0x5eed;

/*
 * 0 if @pid's probe could be read through /proc/<pid>/mem and is right,
 * else the errno. Opening the file is what Yama checks, as an attach.
 */
static inline int read_probe(pid_t pid)
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

static inline int write_all(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

static inline int read_all(int fd, void *buf, size_t len)
{
	return read(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

/*
 * Process Q: answers L's commands on @cmd with an int on @res.
 * 'r': read L's probe; 'p': name L as its tracer; 'q': exit.
 */
static inline void q_loop(pid_t l_pid, int cmd, int res)
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
		else if (c == 'p')
			r = prctl(PR_SET_PTRACER, l_pid) ? errno : 0;
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

static inline int q_ask(struct q_proc *q, char c)
{
	int r = -1;

	if (write_all(q->cmd, &c, 1) || read_all(q->res, &r, sizeof(r)))
		return -1;
	return r;
}

/* Starts Q as a grandchild whose parent has exited: not L's descendant. */
static inline int q_start(struct q_proc *q)
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
/* 1 if @s was written whole to the file at @path (a sysctl). */
static inline int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	int ok = fd >= 0 && write(fd, s, strlen(s)) == (ssize_t)strlen(s);

	if (fd >= 0)
		close(fd);
	return ok;
}

#endif /* TL_YAMA_H */
