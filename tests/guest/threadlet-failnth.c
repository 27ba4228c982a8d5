// SPDX-License-Identifier: GPL-2.0
/*
 * Systematic fault injection into every threadlet system call, with
 * fail-nth (Documentation/fault-injection/fault-injection.rst): for
 * n = 1, 2, 3, ... arm /proc/self/task/<tid>/fail-nth with n, make the
 * call, read fail-nth back (0: the n-th fault point was reached and failed;
 * n - k: the call went through only k of them) and stop at the first n the
 * call does not reach. Every call must succeed or fail with a clean errno,
 * and leave the process consistent: a failed registration registered
 * nothing, a failed post posted nothing, no thread is left behind.
 *
 * Needs a kernel with CONFIG_FAULT_INJECTION (the check-debug kernel);
 * elsewhere it prints one SKIP line and exits 4.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "tl_raw.h"
#include "tl_test.h"
#include "tl_util.h"

#define MAX_N	3000		/* fault points a call may go through */

/* ---- fail-nth --------------------------------------------------------- */

static int open_fail_nth(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/fail-nth", tid);
	return open(path, O_RDWR | O_CLOEXEC);
}

/* Makes the @n-th fault point the task behind @fd reaches fail. */
static int arm(int fd, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return pwrite(fd, buf, len, 0) == len ? 0 : -1;
}

/*
 * Reads what is left of the count and disarms. 0: the fault was injected;
 * > 0: the call did not reach it. The read itself is a fault point when
 * copy_to_user() can fail (FAULT_INJECTION_USERCOPY): a count of 1 left
 * makes it fail with EFAULT, and that is "not reached" too. -1: the task
 * is gone (ESRCH): whatever it had left, it cannot fail anything now.
 */
static long disarm(int fd)
{
	char buf[16] = "";
	long left;
	ssize_t r = pread(fd, buf, sizeof(buf) - 1, 0);

	if (r < 0 && errno == EFAULT)
		left = 1;
	else if (r <= 0)
		return -1;
	else
		left = strtol(buf, NULL, 10);
	/* Writing is a usercopy fault point too: repeat until it reads 0. */
	for (int i = 0; i < 3; i++) {
		pwrite(fd, "0", 1, 0);
		r = pread(fd, buf, sizeof(buf) - 1, 0);
		if (r > 0 && buf[0] == '0')
			break;
	}
	return left;
}

/* ---- results ------------------------------------------------------------ */

struct fi {
	const char *name;
	int injected;		/* iterations whose fault was injected */
	int succeeded;		/* ... and the call succeeded all the same */
	int nomem, fault, again, other;	/* ... and failed with this errno */
	int bad;		/* unclean result or inconsistent state */
	int reached_all;	/* a fail-nth that the call did not reach */
	char first_bad[160];
};

static void fi_bad(struct fi *f, unsigned int n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fi_bad(struct fi *f, unsigned int n, const char *fmt, ...)
{
	va_list ap;
	char msg[128];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tl_diag("%s: fail-nth %u: %s", f->name, n, msg);
	if (!f->bad++)
		snprintf(f->first_bad, sizeof(f->first_bad), "n=%u: %s", n, msg);
}

static int clean_errno(long err)
{
	return err == ENOMEM || err == EFAULT || err == EAGAIN;
}

/* Counts a result (0 or -errno) of an iteration whose fault was injected. */
static void fi_count(struct fi *f, unsigned int n, long ret)
{
	f->injected++;
	if (ret >= 0)
		f->succeeded++;
	else if (ret == -ENOMEM)
		f->nomem++;
	else if (ret == -EFAULT)
		f->fault++;
	else if (ret == -EAGAIN)
		f->again++;
	else {
		f->other++;
		fi_bad(f, n, "failed with %s", strerrorname_np((int)-ret));
	}
}

/*
 * Books one iteration: @left from disarm(), @ret the call's 0 or -errno.
 * A call that did not reach the fault must have succeeded.
 */
static void fi_done(struct fi *f, unsigned int n, long left, long ret)
{
	if (left > 0) {
		f->reached_all = n;
		if (ret < 0)
			fi_bad(f, n, "failed (%s) with no fault injected",
			       strerrorname_np((int)-ret));
	} else if (left == 0) {
		fi_count(f, n, ret);
	} else {
		fi_bad(f, n, "cannot read fail-nth back");
	}
}

static void fi_report(struct fi *f, int threads0)
{
	int threads = tl_nr_threads_settle(threads0);

	if (threads != threads0)
		fi_bad(f, f->reached_all, "%d threads, %d before", threads, threads0);
	tl_diag("%s: %d faults injected: %d absorbed (call succeeded), "
		"%d ENOMEM, %d EFAULT, %d EAGAIN, %d other; not reached at "
		"fail-nth %d", f->name, f->injected, f->succeeded, f->nomem,
		f->fault, f->again, f->other, f->reached_all);
	tl_ok(!f->bad && f->reached_all,
	      "%s: went through %d injected faults, all clean%s%s", f->name,
	      f->injected, f->bad ? "; first problem: " : "",
	      f->bad ? f->first_bad : (f->reached_all ? "" : "; no end in sight"));
}

/* ---- helpers ------------------------------------------------------------ */

static int self_fd;		/* fail-nth of the main thread's TID */

static long sys_ret(long r)
{
	return r < 0 ? -errno : r;
}

/*
 * A page in a 2 MiB range of its own, so that the first touch from the
 * kernel also allocates the page table: a failable allocation on the way
 * to every get_user()/put_user()/pin_user_pages() on it.
 */
struct fresh {
	void *map;
	char *p;
};

static char *fresh_page(struct fresh *f)
{
	const uintptr_t huge = 2UL << 20;

	f->map = mmap(NULL, 2 * huge, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (f->map == MAP_FAILED) {
		f->map = NULL;
		return NULL;
	}
	f->p = (char *)(((uintptr_t)f->map + huge - 1) & ~(huge - 1));
	return f->p;
}

static void fresh_free(struct fresh *f)
{
	if (f->map)
		munmap(f->map, 4UL << 20);
	f->map = NULL;
}

static long sys_register(struct threadlet_area *a, unsigned int flags)
{
	return sys_ret(syscall(__NR_threadlet_register, a, sizeof(*a), flags));
}

static long sys_async_register(struct async_head_user *k, unsigned int flags)
{
	return sys_ret(syscall(__NR_async_register, k, sizeof(*k), flags));
}

/* A head for raw system calls, with its ring at @ring (power-of-2 bytes). */
static void head_setup(struct async_head_user *k, void *ring, size_t bytes,
		       unsigned int threads)
{
	memset(k, 0, sizeof(*k));
	k->completion_ring = (uintptr_t)ring;
	k->ring_size_bytes = bytes;
	k->max_cachemiss_threads = threads;
}

/* ---- threadlet_register ------------------------------------------------- */

static void t_threadlet_register(void)
{
	struct fi f = { .name = "threadlet_register" };
	int threads0 = tl_nr_threads();

	for (unsigned int n = 1; n <= MAX_N && !f.reached_all; n++) {
		struct fresh fr;
		struct threadlet_area *a = (void *)fresh_page(&fr);
		long r, u, left;

		if (!a) {
			fi_bad(&f, n, "mmap failed");
			break;
		}
		arm(self_fd, n);
		r = sys_register(a, 0);
		left = disarm(self_fd);
		fi_done(&f, n, left, r);
		if (r && !clean_errno(-r))
			fi_bad(&f, n, "returned %ld", r);
		/* Registered exactly when it said so. */
		u = sys_register(a, THREADLET_UNREGISTER);
		if (u != (r ? -EINVAL : 0))
			fi_bad(&f, n, "register %ld, then unregister %ld", r, u);
		/* And the thread can register again. */
		if (sys_register(a, 0) || sys_register(a, THREADLET_UNREGISTER))
			fi_bad(&f, n, "register after a failure fails");
		fresh_free(&fr);
	}
	fi_report(&f, threads0);
}

/* ---- async_register ------------------------------------------------------ */

/*
 * Runs before any other head exists in this process, so that the first
 * iterations also fail the per-mm registry's allocation.
 */
static void t_async_register(void)
{
	struct fi f = { .name = "async_register" };
	static uint64_t ring[8];
	static struct async_head_user k;
	int threads0 = tl_nr_threads();

	for (unsigned int n = 1; n <= MAX_N && !f.reached_all; n++) {
		long r, q, u, left;

		head_setup(&k, ring, sizeof(ring), 1);
		arm(self_fd, n);
		r = sys_async_register(&k, 0);
		left = disarm(self_fd);
		fi_done(&f, n, left, r);
		if (r && !clean_errno(-r))
			fi_bad(&f, n, "returned %ld", r);
		q = sys_async_register(&k, ASYNC_QUERY_PARKED);
		u = sys_async_register(&k, ASYNC_UNREGISTER);
		if (r == 0 && (q != 0 || u != 0))
			fi_bad(&f, n, "registered, but query %ld, unregister %ld", q, u);
		if (r < 0 && (q != -EINVAL || u != -EINVAL))
			fi_bad(&f, n, "failed (%ld), but query %ld, unregister %ld",
			       r, q, u);
	}
	/* Registering still works. */
	head_setup(&k, ring, sizeof(ring), 1);
	if (sys_async_register(&k, 0) || sys_async_register(&k, ASYNC_UNREGISTER))
		fi_bad(&f, 0, "register/unregister after the loop failed");
	fi_report(&f, threads0);
}

/* ---- umem_add -------------------------------------------------------------- */

static void t_umem_add(void)
{
	struct fi f = { .name = "umem_add" };
	int threads0 = tl_nr_threads();

	for (unsigned int n = 1; n <= MAX_N && !f.reached_all; n++) {
		struct fresh fr;
		unsigned long long *v = (void *)fresh_page(&fr);
		long r, left;

		if (!v) {
			fi_bad(&f, n, "mmap failed");
			break;
		}
		arm(self_fd, n);
		r = sys_ret(syscall(__NR_umem_add, v, 5ULL));
		left = disarm(self_fd);
		fi_done(&f, n, left, r < 0 ? r : 0);
		if (r < 0 && r != -EFAULT)
			fi_bad(&f, n, "returned %ld", r);
		/* Added exactly when it said so (whatever it returns then). */
		if (*v != (r < 0 ? 0ULL : 5ULL))
			fi_bad(&f, n, "returned %ld, the variable holds %llu", r, *v);
		fresh_free(&fr);
	}
	fi_report(&f, threads0);
}

/* ---- async_thread and async_wait ----------------------------------------- */

struct helper {
	struct async_head_user *k;
	unsigned int n;
	int state;		/* 1 armed and calling, 2 returned */
	long ret, left;
	int setup_err;
};

#define EVENT ((void *)0x5ca1ab1eUL)

/* A thread of its own: post EVENT and park, with fail-nth armed. */
static void *helper_main(void *arg)
{
	struct helper *h = arg;
	static struct threadlet_area area __attribute__((aligned(128)));
	int fd = open_fail_nth(gettid());

	memset(&area, 0, sizeof(area));
	if (fd < 0 || sys_register(&area, 0)) {
		h->setup_err = 1;
		__atomic_store_n(&h->state, 2, __ATOMIC_RELEASE);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	__atomic_store_n(&h->state, 1, __ATOMIC_RELEASE);
	arm(fd, h->n);
	h->ret = tl_raw_park(&area, EVENT, h->k, &area);
	h->left = disarm(fd);
	sys_register(&area, THREADLET_UNREGISTER);
	close(fd);
	__atomic_store_n(&h->state, 2, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Posts then parks: the ring is on a fresh page, so the post's first
 * access to it faults in the page table. The main thread ends the head
 * once the helper has parked, which sends it home.
 */
static void t_async_thread(void)
{
	struct fi f = { .name = "async_thread" };
	struct fi w = { .name = "async_wait" };
	static struct async_head_user k;
	int threads0 = tl_nr_threads();
	unsigned int wn = 1;	/* async_wait's own fail-nth */

	for (unsigned int n = 1; n <= MAX_N && !f.reached_all; n++) {
		struct fresh fr;
		uint64_t *ring = (void *)fresh_page(&fr);
		struct helper h = { .k = &k, .n = n };
		pthread_t t;
		long r, left, q;
		int i;

		if (!ring) {
			fi_bad(&f, n, "mmap failed");
			break;
		}
		head_setup(&k, ring, 4096, 1);
		if (sys_async_register(&k, 0)) {
			fi_bad(&f, n, "async_register failed");
			fresh_free(&fr);
			break;
		}
		if (pthread_create(&t, NULL, helper_main, &h)) {
			fi_bad(&f, n, "pthread_create failed");
			sys_async_register(&k, ASYNC_UNREGISTER);
			fresh_free(&fr);
			break;
		}
		/* Up to 10 s for the helper to park or to return. */
		for (i = 0; i < 10000; i++) {
			if (__atomic_load_n(&h.state, __ATOMIC_ACQUIRE) == 2 ||
			    sys_async_register(&k, ASYNC_QUERY_PARKED) == 1)
				break;
			usleep(1000);
		}
		if (i == 10000)
			fi_bad(&f, n, "helper neither parked nor returned in 10 s");

		/*
		 * async_wait on the head before it ends: the completion is in
		 * the ring iff the post succeeded.
		 */
		if (__atomic_load_n(&h.state, __ATOMIC_ACQUIRE) != 2) {
			long kidx = __atomic_load_n(&k.kernel_ring_idx, __ATOMIC_ACQUIRE);

			arm(self_fd, wn);
			q = sys_ret(syscall(__NR_async_wait, 1UL, 0UL, &k));
			left = disarm(self_fd);
			if (!w.reached_all)
				fi_done(&w, wn++, left, q);
			if (q != kidx || kidx != 1)
				fi_bad(&w, wn, "async_wait(1) %ld with %ld posted", q, kidx);
		}

		r = sys_async_register(&k, ASYNC_UNREGISTER);
		pthread_join(t, NULL);
		if (h.setup_err) {
			fi_bad(&f, n, "helper could not register its area");
			fresh_free(&fr);
			break;
		}
		if (r)
			fi_bad(&f, n, "unregister %ld", r);
		fi_done(&f, n, h.left, h.ret);
		if (h.ret && !clean_errno(-h.ret))
			fi_bad(&f, n, "returned %ld", h.ret);
		/* Posted exactly when it parked. */
		if (h.ret == 0 && (k.kernel_ring_idx != 1 || ring[0] != (uintptr_t)EVENT))
			fi_bad(&f, n, "returned 0 but idx %llu, slot %#lx",
			       (unsigned long long)k.kernel_ring_idx, (unsigned long)ring[0]);
		if (h.ret < 0 && (k.kernel_ring_idx != 0 || ring[0] != 0))
			fi_bad(&f, n, "failed (%ld) but idx %llu, slot %#lx", h.ret,
			       (unsigned long long)k.kernel_ring_idx, (unsigned long)ring[0]);
		fresh_free(&fr);
	}
	fi_report(&f, threads0);
	if (!w.reached_all)
		tl_diag("async_wait: no run of it with the helper parked");
	fi_report(&w, threads0);
}

/* ---- async_head_init (async_register + pool threads in async_thread) ---- */

static void t_async_head_init(void)
{
	struct fi f = { .name = "async_head_init" };
	static struct async_head_user ahu;
	int threads0 = tl_nr_threads();

	for (unsigned int n = 1; n <= MAX_N && !f.reached_all; n++) {
		long r, left, parked;
		int threads;

		arm(self_fd, n);
		r = async_head_init(&ahu, 8, 2);
		left = disarm(self_fd);
		fi_done(&f, n, left, r);
		if (r && !clean_errno(-r))
			fi_bad(&f, n, "returned %ld", r);
		parked = async_head_parked(&ahu);
		if (r == 0) {
			threads = tl_nr_threads();
			if (parked != 2 || threads != threads0 + 2)
				fi_bad(&f, n, "set up, but %ld parked, %d threads",
				       parked, threads);
			async_head_exit(&ahu);
		} else if (parked != -EINVAL) {
			fi_bad(&f, n, "failed (%ld), but the head is there (%ld)",
			       r, parked);
			async_head_exit(&ahu);
		}
		threads = tl_nr_threads_settle(threads0);
		if (threads != threads0)
			fi_bad(&f, n, "%ld: %d threads left, %d before", r,
			       threads, threads0);
	}
	fi_report(&f, threads0);
}

/* ---- async_exec: open + read --------------------------------------------- */

static const char file_path[] = "/tmp/threadlet-failnth.txt";
static const char file_data[] = "fail-nth syslet data\n";

static void t_async_exec(void)
{
	struct fi f = { .name = "async_exec(open, read)" };
	static uint64_t ring[8];
	static struct async_head_user k;
	int threads0 = tl_nr_threads(), lost_fds = 0;
	char buf[64];
	long long fd, nread;
	unsigned long long path = (uintptr_t)file_path, flags = O_RDONLY;
	unsigned long long ubuf = (uintptr_t)buf, len = sizeof(buf);
	struct syslet_uatom a[2], *done;
	int wfd = open(file_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (wfd < 0 || write(wfd, file_data, sizeof(file_data) - 1) < 0) {
		fi_bad(&f, 0, "cannot write %s", file_path);
		fi_report(&f, threads0);
		return;
	}
	close(wfd);
	/* No pool: with no spare to hand off to, the chain runs in place. */
	head_setup(&k, ring, sizeof(ring), 1);
	if (sys_async_register(&k, 0)) {
		fi_bad(&f, 0, "async_register failed");
		fi_report(&f, threads0);
		return;
	}
	/* A first run registers this thread's area and warms the caches. */
	syslet_atom_init(&a[0], SYS_open, SYSLET_STOP_ON_NEGATIVE, &fd, &a[1], 2,
			 &path, &flags);
	syslet_atom_init(&a[1], SYS_read, 0, &nread, NULL, 3,
			 (unsigned long long *)&fd, &ubuf, &len);
	done = async_exec(a, &k);
	if (done != &a[1] || nread != sizeof(file_data) - 1)
		fi_bad(&f, 0, "the chain does not work without faults");
	if (fd >= 0)
		close(fd);

	for (unsigned int n = 1; n <= MAX_N && !f.reached_all; n++) {
		int next_fd = dup(0);	/* the number open() will get */
		long left, r;
		int e;

		close(next_fd);
		fd = nread = -12345;
		memset(buf, 0, sizeof(buf));
		arm(self_fd, n);
		done = async_exec(a, &k);
		e = -threadlet_ptr_err(done);
		left = disarm(self_fd);

		if (!done || e) {
			/* Did not start: the first atom could not be read. */
			r = -e;
			if (e != EFAULT && e != ENOMEM)
				fi_bad(&f, n, "async_exec %s",
				       e ? strerrorname_np(e) : "NULL (went async)");
		} else if (done == &a[0]) {
			r = fd;
			if (fd >= 0 || !clean_errno(-fd))
				fi_bad(&f, n, "stopped at open, which returned %lld", fd);
		} else if (done == &a[1]) {
			r = nread < 0 ? nread : 0;
			if (fd < 0)
				fi_bad(&f, n, "read ran after a failed open (%lld)", fd);
			else if (nread < 0 ? !clean_errno(-nread) :
				 nread != sizeof(file_data) - 1 ||
				 memcmp(buf, file_data, nread))
				fi_bad(&f, n, "read returned %lld", nread);
		} else {
			r = 0;
			fi_bad(&f, n, "async_exec returned %p", (void *)done);
		}
		if (fd >= 0) {
			close(fd);
		} else if (fcntl(next_fd, F_GETFD) >= 0) {
			/*
			 * open() worked, but reading the next atom failed and
			 * its -EFAULT replaced the descriptor (docs/threadlets.md
			 * says so): user space cannot know the number.
			 */
			lost_fds++;
			close(next_fd);
		}
		fi_done(&f, n, left, r);
	}
	if (lost_fds)
		tl_diag("async_exec: %d descriptors opened, then replaced by "
			"-EFAULT for an unreadable next atom", lost_fds);
	if (sys_async_register(&k, ASYNC_UNREGISTER))
		fi_bad(&f, 0, "unregister failed");
	unlink(file_path);
	fi_report(&f, threads0);
}

/* ---- threadlet_exec that blocks and hands off ---------------------------- */

static struct async_head_user tl_ahu;
static int pool_fd = -1;	/* fail-nth of the pool thread's TID */

struct job {
	long slept;		/* nanosleep() */
	long opened;		/* open() after the hand-off */
	long nread;
	pid_t tid_after;	/* the cache-miss thread's TID */
};

static long blocking_fn(void *data)
{
	struct job *j = data;
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	char buf[64];
	int fd;

	j->slept = nanosleep(&ts, NULL) ? -errno : 0;
	/* Now (normally) the cache-miss thread: allocate some more. */
	fd = open(file_path, O_RDONLY);
	j->opened = fd < 0 ? -errno : fd;
	if (fd >= 0) {
		j->nread = read(fd, buf, sizeof(buf));
		if (j->nread < 0)
			j->nread = -errno;
		close(fd);
	}
	j->tid_after = gettid();
	return complete_threadlet_fn(j, &tl_ahu);
}

/* The TID of a thread other than @a, or 0. */
static pid_t other_tid(pid_t a)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	pid_t found = 0;

	while (d && (e = readdir(d))) {
		pid_t t = atoi(e->d_name);

		if (t > 0 && t != a)
			found = t;
	}
	if (d)
		closedir(d);
	return found;
}

static void t_threadlet_exec(void)
{
	struct fi f = { .name = "threadlet_exec (blocks, hands off)" };
	int threads0 = tl_nr_threads(), handoffs = 0, inplace = 0, lost = 0;
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	pid_t me = gettid();
	int wfd = open(file_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (threadlet_err(stack) || wfd < 0 || write(wfd, file_data, sizeof(file_data) - 1) < 0) {
		fi_bad(&f, 0, "setup failed");
		fi_report(&f, threads0);
		return;
	}
	close(wfd);
	for (unsigned int n = 1; n <= MAX_N && !f.reached_all; n++) {
		struct job j = { .slept = 1, .opened = -12345, .nread = -12345 };
		pid_t pool_tid;
		long rc, left = -1;
		void *ev = NULL;

		/* A 512 KiB ring: calloc() maps it fresh, untouched. */
		if (async_head_init(&tl_ahu, 65536, 1)) {
			fi_bad(&f, n, "async_head_init failed");
			break;
		}
		/* Helpers of the earlier tests may still be listed. */
		tl_nr_threads_settle(threads0 + 1);
		pool_tid = other_tid(me);
		pool_fd = pool_tid ? open_fail_nth(pool_tid) : -1;
		if (pool_fd < 0) {
			fi_bad(&f, n, "no fail-nth for the pool thread");
			async_head_exit(&tl_ahu);
			break;
		}

		arm(self_fd, n);
		rc = threadlet_exec(blocking_fn, &j, stack, &tl_ahu);
		if (rc == 1) {
			/* Ran in place: this task did everything. */
			left = disarm(self_fd);
			inplace++;
		} else if (rc == 0) {
			/*
			 * Handed off: this is the pool thread now, under our
			 * TID; the armed task finishes blocking_fn under the
			 * pool thread's TID, posts and parks again.
			 */
			handoffs++;
			disarm(self_fd);
			if (gettid() != me)
				fi_bad(&f, n, "TID %d after the hand-off, %d before",
				       gettid(), me);
			for (int i = 0; i < 5000 && !ev; i++) {
				ev = async_ring_pop(&tl_ahu);
				if (!ev)
					usleep(1000);
			}
			if (ev && ev != &j)
				fi_bad(&f, n, "event %p, expected %p", ev, (void *)&j);
			if (ev && j.tid_after != pool_tid)
				fi_bad(&f, n, "cache-miss thread ran as TID %d, not %d",
				       j.tid_after, pool_tid);
			/*
			 * No event: the post failed and the thread went home
			 * and ended (libthreadlet drops the event then). Its
			 * fault was injected; it has nothing left to read.
			 */
			if (!ev) {
				lost++;
				left = 0;
				if (tl_nr_threads_settle(threads0) != threads0)
					fi_bad(&f, n, "no event, and the pool thread is still there");
			} else {
				left = disarm(pool_fd);
			}
		} else {
			disarm(self_fd);
			if (!clean_errno(-rc))
				fi_bad(&f, n, "threadlet_exec returned %ld", rc);
		}
		if (rc >= 0 && (ev || rc == 1)) {
			if (j.slept && j.slept != -EFAULT)
				fi_bad(&f, n, "nanosleep returned %ld", j.slept);
			if (j.opened < 0 && !clean_errno(-j.opened))
				fi_bad(&f, n, "open returned %ld", j.opened);
			if (j.opened >= 0 && j.nread != sizeof(file_data) - 1 &&
			    !(j.nread < 0 && clean_errno(-j.nread)))
				fi_bad(&f, n, "read returned %ld", j.nread);
		}
		/* A lost event is a failed post: -EFAULT from the ring. */
		fi_done(&f, n, left, rc < 0 ? rc : !ev && rc == 0 ? -EFAULT :
			j.slept < 0 ? j.slept : j.opened < 0 ? j.opened :
			j.nread < 0 ? j.nread : 0);
		close(pool_fd);
		pool_fd = -1;
		async_head_exit(&tl_ahu);
		if (tl_nr_threads_settle(threads0) != threads0)
			fi_bad(&f, n, "threads left behind");
	}
	tl_diag("threadlet_exec: %d hand-offs, %d in place, %d events lost",
		handoffs, inplace, lost);
	threadlet_stack_free(stack);
	unlink(file_path);
	fi_report(&f, threads0);
}

/* ---- debugfs attributes -------------------------------------------------- */

static void attr_missing(const char *rel)
{
	tl_diag("cannot set /sys/kernel/debug/%s", rel);
}

int main(void)
{
	int threads0 = tl_nr_threads(), missing;

	self_fd = open_fail_nth(gettid());
	if (self_fd < 0) {
		printf("1..0 # SKIP no fail-nth (a kernel without CONFIG_FAULT_INJECTION)\n");
		return 4;
	}
	missing = tl_fi_open(attr_missing);
	if (missing)
		tl_diag("%d fault-injection attributes not set: fewer fault points", missing);
	/* threadlet_register and async_register first: see there. */
	t_threadlet_register();
	t_async_register();
	t_umem_add();
	t_async_thread();
	t_async_head_init();
	t_async_exec();
	t_threadlet_exec();
	tl_fi_restore();
	tl_ok(tl_nr_threads_settle(threads0) == threads0, "no thread left behind");
	return tl_exit();
}
