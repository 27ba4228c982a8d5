// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/<pid> looked up, and listed, while that thread is handed off.
 *
 * procfs finds a task by the number in the name, then took the task's
 * struct pid for the new inode. A hand-off in between gave the task a pool
 * thread's TID, so the dentry of /proc/<P> (or /proc/<P>/task/<T>, or a
 * file under it) was bound to the pool thread: its status showed that
 * thread's Pid, and writes to the caller's own attr and loginuid files
 * failed. The dentry stayed wrong as long as the pool thread lived.
 *
 * A looker mounts a fresh procfs (no dentry cached), reads the Pid: line
 * of the head's status by name, by the task directory, and after listing
 * both directories (readdir fills the cache itself), then unmounts, again
 * and again while the head hands off. Done for a main-thread head and for
 * a head in a second thread.
 *
 * Expected: every status read shows the number its path names.
 */
#include <dirent.h>
#include <sys/mount.h>
#include "safety.h"

#define TRIES	1500

static struct async_head_user ahu;
static int looking_done;
static pid_t head_tid;

static long nap_fn(void *data)
{
	struct timespec ts = { 0, 20 * 1000 };

	nanosleep(&ts, NULL);
	return complete_threadlet_fn(data, &ahu);
}

/* Hands the calling thread off until *@stop_flag; the count. */
static int handoffs_until(int *stop_flag)
{
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	int ev, n = 0;

	if (threadlet_err(stack))
		return -1;
	while (!__atomic_load_n(stop_flag, __ATOMIC_ACQUIRE))
		if (threadlet_exec(nap_fn, &ev, stack, &ahu) == 0) {
			n++;
			sf_wait_event(&ahu, 5000);
		}
	threadlet_stack_free(stack);
	return n;
}

/* The Pid: of @path's status file, or -errno. */
static int status_pid(const char *path)
{
	char buf[1024], *p;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	p = strstr(buf, "\nPid:");
	return p ? atoi(p + 5) : -EINVAL;
}

/* Reads every entry of @dir, so that readdir instantiates them. */
static void list_dir(const char *dir)
{
	DIR *d = opendir(dir);

	if (!d)
		return;
	while (readdir(d))
		;
	closedir(d);
}

struct look {
	int tries, wrong, failed, first_got, first_path;
};

/*
 * One try on a fresh procfs at @mnt: the status of /proc/<tid> and of
 * /proc/<pid>/task/<tid>, by lookup or (@listed) after readdir of / and of
 * <pid>/task.
 */
static void look_once(struct look *l, const char *mnt, pid_t tid, int listed)
{
	char path[2][128];
	int i;

	if (mount("proc", mnt, "proc", 0, NULL)) {
		l->failed++;
		return;
	}
	snprintf(path[0], sizeof(path[0]), "%s/%d/status", mnt, tid);
	snprintf(path[1], sizeof(path[1]), "%s/%d/task/%d/status", mnt,
		 getpid(), tid);
	if (listed) {
		char task[128];

		snprintf(task, sizeof(task), "%s/%d/task", mnt, getpid());
		list_dir(mnt);
		list_dir(task);
	}
	for (i = 0; i < 2; i++) {
		int got = status_pid(path[i]);

		if (got == tid)
			continue;
		if (!l->wrong++) {
			l->first_got = got;
			l->first_path = i;
		}
	}
	l->tries++;
	if (umount(mnt))
		l->failed++;
}

static void look(struct look *l, pid_t tid)
{
	char mnt[] = "/tmp/tlprocXXXXXX";
	int i;

	memset(l, 0, sizeof(*l));
	if (!mkdtemp(mnt)) {
		l->failed = 1;
		return;
	}
	for (i = 0; i < TRIES; i++)
		look_once(l, mnt, tid, i & 1);
	rmdir(mnt);
}

static void report(const char *who, struct look *l, int n)
{
	sf_ok(n > 100 && l->tries == TRIES && !l->failed,
	      "%s: %d hand-offs beside %d fresh mounts (%d mounts failed)",
	      who, n, l->tries, l->failed);
	sf_ok(!l->wrong,
	      "%s: every status shows its own Pid (%d wrong, first %s gave %d)",
	      who, l->wrong, l->first_path ? "task/<tid>" : "<tid>",
	      l->first_got);
}

static void *looker(void *arg)
{
	look(arg, head_tid);
	__atomic_store_n(&looking_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The main thread hands off; a second thread looks it up. */
static void run_main(void *arg)
{
	struct look l;
	pthread_t t;
	int n;

	(void)arg;
	head_tid = getpid();
	if (async_head_init(&ahu, 16, 2) ||
	    pthread_create(&t, NULL, looker, &l)) {
		sf_ok(0, "main thread: a head and a looker");
		return;
	}
	n = handoffs_until(&looking_done);
	pthread_join(t, NULL);
	report("main thread", &l, n);
	async_head_exit(&ahu);
}

static int second_n;

static void *second_head(void *arg)
{
	(void)arg;
	if (async_head_init(&ahu, 16, 2)) {
		second_n = -1;
		__atomic_store_n(&head_tid, -1, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&head_tid, gettid(), __ATOMIC_RELEASE);
	second_n = handoffs_until(&looking_done);
	async_head_exit(&ahu);
	return NULL;
}

/* A second thread hands off; the main thread looks it up. */
static void run_second(void *arg)
{
	struct look l;
	pthread_t t;

	(void)arg;
	if (pthread_create(&t, NULL, second_head, NULL)) {
		sf_ok(0, "second thread: a head");
		return;
	}
	while (!__atomic_load_n(&head_tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	if (head_tid > 0)
		look(&l, head_tid);
	__atomic_store_n(&looking_done, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	if (head_tid < 0) {
		sf_ok(0, "second thread: a head");
		return;
	}
	report("second thread", &l, second_n);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(run_main, NULL, 240);
	sf_child_ok(status, "/proc of a main-thread head during its hand-offs");
	status = sf_child(run_second, NULL, 240);
	sf_child_ok(status, "/proc of a second-thread head during its hand-offs");
	return tl_exit();
}
