/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the safety-*.c guest tests: regression tests for the
 * security findings against threadlets and syslets.
 *
 * Most checks change process-wide or per-thread state that must not leak
 * into the next check (credentials, fs, seccomp, limits), or may crash the
 * process on a kernel that gets them wrong. They run in forked children
 * with sf_child(); a child reports with sf_ok(), which continues this
 * process's TAP numbering and keeps the counters in shared memory, so the
 * parent picks them up even if the child dies half way.
 */
#ifndef SAFETY_H
#define SAFETY_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "tl_raw.h"
#include "tl_test.h"
#include "tl_util.h"

/*
 * The system call ABI of this build, for ptrace, seccomp and audit: the
 * same tests run as 64-bit and as 32-bit (-m32) programs, and a 32-bit
 * program's syslet atoms are i386 calls.
 */
#ifdef __x86_64__
#define SF_AUDIT_ARCH		AUDIT_ARCH_X86_64
#define SF_REG_NR(r)		((r).orig_rax)
#define SF_REG_RET(r)		((r).rax)
#define SF_REG_ARGS(r)		{ (r).rdi, (r).rsi, (r).rdx, (r).r10, (r).r8, (r).r9 }
#else
#define SF_AUDIT_ARCH		AUDIT_ARCH_I386
#define SF_REG_NR(r)		((r).orig_eax)
#define SF_REG_RET(r)		((r).eax)
#define SF_REG_ARGS(r)		{ (r).ebx, (r).ecx, (r).edx, (r).esi, (r).edi, (r).ebp }
#endif

/*
 * A seccomp filter of a test: SF_FILTER_NR starts it (calls of the other
 * ABI pass, then the number is loaded), sf_filter() installs it with
 * no_new_privs. The test includes <linux/audit.h>, <linux/filter.h>,
 * <linux/seccomp.h> and <stddef.h>.
 */
#define SF_FILTER_NR							\
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)), \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SF_AUDIT_ARCH, 1, 0),	\
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),			\
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))

#define sf_filter(f)							\
	({								\
		struct sock_fprog __prog = { sizeof(f) / sizeof((f)[0]), (f) }; \
		!prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) &&		\
		!syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &__prog); \
	})

typedef unsigned long long u64;

/* A limit of the uapi header, for headers older than it. */
#ifndef ASYNC_MAX_HEADS
#define ASYNC_MAX_HEADS		256	/* async heads per process */
#endif

/* ---- TAP from forked children ---------------------------------------- */

struct sf_counts {
	int pass, fail, skip;
};

static struct sf_counts *sf_counts;

/* Maps the counters shared with children; call first in main(). */
static inline void sf_init(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	sf_counts = p == MAP_FAILED ? NULL : p;
}

static inline void sf_sync(void)
{
	if (sf_counts) {
		sf_counts->pass = tl_pass;
		sf_counts->fail = tl_fail;
		sf_counts->skip = tl_skip;
	}
}

static inline void sf_load(void)
{
	if (sf_counts) {
		tl_pass = sf_counts->pass;
		tl_fail = sf_counts->fail;
		tl_skip = sf_counts->skip;
	}
}

/*
 * tl_ok() that a forked child can use: the parent sees the result. The
 * condition is evaluated first, so the message may print what it found.
 */
#define sf_ok(cond, ...) do {						\
	int __sf_cond = !!(cond);					\
									\
	tl_ok(__sf_cond, __VA_ARGS__);					\
	sf_sync();							\
} while (0)

static inline void sf_skip(const char *why)
{
	tl_skip_test(why);
	sf_sync();
}

/* MAP_SHARED memory for results that a child leaves behind. */
static inline void *sf_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

/*
 * waitpid() for up to @ms milliseconds of the monotonic clock (a count of
 * sleeps would run long on a loaded guest); 1 if @pid changed state.
 */
static inline int sf_waitpid(pid_t pid, int *status, int flags, int ms)
{
	long long end = tl_now_ns() + ms * 1000000LL;

	for (;;) {
		pid_t r = waitpid(pid, status, flags | WNOHANG);

		if (r == pid)
			return 1;
		if ((r < 0 && errno != EINTR) || tl_now_ns() > end)
			return 0;
		usleep(1000);
	}
}

#define SF_TIMEOUT	(-1)
#define SF_EXIT_ORPHAN	99	/* a child whose parent died before it ran */

/* One /proc file of a task, on one line (newlines as " | "). */
static inline void sf_read_line(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	for (char *c = buf; *c; c++)
		if (*c == '\n')
			*c = c[1] ? '|' : 0;
}

/*
 * Where each task of @pid is, for a child about to be killed for taking
 * too long: state, the call it is in (number, stack and instruction
 * pointers) and its kernel stack.
 */
static inline void sf_dump_tasks(pid_t pid)
{
	char dir[32], path[320], stat[256], call[128], stack[1024];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		char *st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/stat", dir, e->d_name);
		sf_read_line(path, stat, sizeof(stat));
		st = strrchr(stat, ')');
		snprintf(path, sizeof(path), "%s/%s/syscall", dir, e->d_name);
		sf_read_line(path, call, sizeof(call));
		snprintf(path, sizeof(path), "%s/%s/stack", dir, e->d_name);
		sf_read_line(path, stack, sizeof(stack));
		tl_diag("task %s: state %c, call %s, stack %s", e->d_name,
			st && st[1] ? st[2] : '?', call, stack);
	}
	if (d)
		closedir(d);
}

/*
 * Runs @fn in a forked child (which ends with _exit(0) when @fn returns)
 * and waits up to @secs for it, killing it after that. Returns its wait
 * status, or SF_TIMEOUT.
 */
static inline int sf_child(void (*fn)(void *), void *arg, int secs)
{
	int status;
	pid_t pid;

	sf_sync();
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return SF_TIMEOUT;
	if (pid == 0) {
		/* Killed with this process (the guest's timeout kills only it). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(SF_EXIT_ORPHAN);
		fn(arg);
		fflush(stdout);
		_exit(0);
	}
	if (!sf_waitpid(pid, &status, 0, secs * 1000)) {
		sf_dump_tasks(pid);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		status = SF_TIMEOUT;
	}
	sf_load();
	return status;
}

static inline const char *sf_status_str(int status)
{
	static char buf[48];

	if (status == SF_TIMEOUT)
		return "timed out, killed";
	if (WIFEXITED(status))
		snprintf(buf, sizeof(buf), "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, sizeof(buf), "killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, sizeof(buf), "status %#x", status);
	return buf;
}

static inline int sf_exited0(int status)
{
	return status != SF_TIMEOUT && WIFEXITED(status) && !WEXITSTATUS(status);
}

/* Checks that a child ran to its end: no crash, no timeout. */
#define sf_child_ok(status, what) do {					\
	int __sf_status = (status);					\
									\
	sf_ok(sf_exited0(__sf_status), "%s: child exited normally (%s)", \
	      what, sf_status_str(__sf_status));			\
} while (0)

/* ---- /proc ----------------------------------------------------------- */

/* The state letter of thread @tid of this process, or 0. */
static inline char sf_task_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* The value of "@key:" in @path (a /proc status file), as a string. */
static inline int sf_status_field(const char *path, const char *key,
				  char *val, size_t len)
{
	size_t klen = strlen(key);
	char line[256];
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		snprintf(val, len, "%s", line + klen + 1 + strspn(line + klen + 1, " \t"));
		val[strcspn(val, "\n")] = 0;
		found = 1;
	}
	fclose(f);
	return found;
}

/*
 * Waits up to 10 s for thread @tid to sleep interruptibly ('S': a pipe
 * read, sigsuspend); 1 if it did. Stops early once *@stop is set.
 */
static inline int sf_wait_sleeping(pid_t tid, const int *stop)
{
	for (int i = 0; i < 10000; i++) {
		if (sf_task_state(tid) == 'S')
			return 1;
		if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE))
			return 0;
		usleep(1000);
	}
	return 0;
}

/* ---- a page whose first access sleeps on the disk -------------------- */

/*
 * @len bytes of @data at the start of a page of the file @path (on the
 * test disk), evicted from the page cache and mapped read-only: the first
 * access, a system call's copy from it included, waits for the disk. The
 * page stays mapped (the tests' processes are short); NULL on failure.
 */
static inline void *sf_page_on_disk(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	void *p;

	if (fd < 0)
		return NULL;
	if (len > 4096 || write(fd, data, len) != (ssize_t)len || ftruncate(fd, 4096)) {
		close(fd);
		return NULL;
	}
	fsync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	tl_drop_caches();
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, 4096, MADV_PAGEOUT);
	return p;
}

/* ---- completions ------------------------------------------------------ */

/* Pops one completion, polling for up to @ms milliseconds; NULL if none. */
static inline void *sf_wait_event(struct async_head_user *ahu, int ms)
{
	for (int i = 0; i <= ms; i++) {
		void *ev = async_ring_pop(ahu);

		if (ev)
			return ev;
		usleep(1000);
	}
	return NULL;
}

/* ---- a threadlet that blocks on a pipe ------------------------------- */

/*
 * sf_block_fn() reads one byte from an empty pipe. The byte comes from
 * the head right after threadlet_exec() returned 0 (a hand-off happened),
 * or, when the threadlet sleeps in place, from a writer thread once the
 * head's TID has been asleep for 50 ms. Either way the threadlet blocks
 * for sure, and nothing hangs. The writer is started by sf_block_prepare()
 * before the caller changes its own state, so it keeps the process's fs,
 * files and credentials (and can read /proc after a chroot).
 */
struct sf_block {
	struct async_head_user *ahu;
	int pfd[2];
	pid_t head_tid;
	int entered;		/* the threadlet is about to read */
	int kicked;		/* the byte was written */
	int writer_started;
	pthread_t writer;
	long n;			/* read()'s result */
	pid_t tid_after;	/* gettid() in the threadlet after the read */
};

static inline int sf_block_kick(struct sf_block *b)
{
	if (__atomic_exchange_n(&b->kicked, 1, __ATOMIC_ACQ_REL))
		return 1;
	return write(b->pfd[1], "k", 1) == 1;
}

static inline void *sf_block_writer(void *arg)
{
	struct sf_block *b = arg;

	for (int i = 0; i < 10000 && !__atomic_load_n(&b->entered, __ATOMIC_ACQUIRE) &&
	     !__atomic_load_n(&b->kicked, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	sf_wait_sleeping(b->head_tid, &b->kicked);
	usleep(50000);
	sf_block_kick(b);
	return NULL;
}

static inline long sf_block_fn(void *data)
{
	struct sf_block *b = data;
	char c;

	__atomic_store_n(&b->entered, 1, __ATOMIC_RELEASE);
	b->n = read(b->pfd[0], &c, 1);
	b->tid_after = gettid();
	return complete_threadlet_fn(b, b->ahu);
}

/* Call in the head before changing its state. 1 on success. */
static inline int sf_block_prepare(struct sf_block *b, struct async_head_user *ahu)
{
	memset(b, 0, sizeof(*b));
	b->ahu = ahu;
	b->head_tid = gettid();
	b->n = -999;
	if (pipe(b->pfd))
		return 0;
	if (pthread_create(&b->writer, NULL, sf_block_writer, b))
		return 0;
	b->writer_started = 1;
	return 1;
}

/*
 * Runs the threadlet from the head. If it went async, wakes it at once and
 * waits (up to 10 s) for its event. Returns threadlet_exec()'s result;
 * *@completed says whether the threadlet finished (in place or posted).
 */
static inline long sf_block_run(struct sf_block *b, unsigned long stack,
				struct threadlet_stats *s0,
				struct threadlet_stats *s1, int *completed)
{
	long ret;

	threadlet_stats(s0);
	ret = threadlet_exec(sf_block_fn, b, stack, b->ahu);
	threadlet_stats(s1);
	*completed = ret == 1;
	if (ret == 0) {
		sf_block_kick(b);
		*completed = sf_wait_event(b->ahu, 10000) == b;
	}
	return ret;
}

static inline void sf_block_finish(struct sf_block *b)
{
	sf_block_kick(b);
	if (b->writer_started)
		pthread_join(b->writer, NULL);
	close(b->pfd[0]);
	close(b->pfd[1]);
}

/* ---- raw parking ------------------------------------------------------ */

/* tl_raw_park() with one area: the tests' own stand-in for tl_park_home(). */
static inline long sf_park_home(struct threadlet_area *area, void *event,
				struct async_head_user *ahu)
{
	return tl_raw_park(area, event, ahu, area);
}

/* Registers @ring of @entries slots as async head @ahu, without a pool. */
static inline long sf_register_head(struct async_head_user *ahu, u64 *ring,
				    unsigned int entries, unsigned int threads)
{
	memset(ahu, 0, sizeof(*ahu));
	ahu->completion_ring = (uintptr_t)ring;
	ahu->ring_size_bytes = entries * sizeof(u64);
	ahu->max_cachemiss_threads = threads;
	return syscall(__NR_async_register, ahu, sizeof(*ahu), 0);
}

static inline long sf_unregister_head(struct async_head_user *ahu)
{
	return syscall(__NR_async_register, ahu, sizeof(*ahu), ASYNC_UNREGISTER);
}

#endif /* SAFETY_H */
