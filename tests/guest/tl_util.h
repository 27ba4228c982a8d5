/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the threadlet guest tests. */
#ifndef TL_UTIL_H
#define TL_UTIL_H

#include <dirent.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <threadlet.h>
#include <time.h>
#include <unistd.h>

/* Waits up to 2 s for @n threads parked on @ahu. */
static inline int tl_wait_parked(struct async_head_user *ahu, long n)
{
	for (int i = 0; i < 2000; i++) {
		if (async_head_parked(ahu) == n)
			return 1;
		usleep(1000);
	}
	return 0;
}

/* Threads of this process, from /proc/self/task. */
/*
 * A disabled perf counter of @event (a tracepoint, "group/name") for this
 * thread, or -1: how the tests count system calls and atoms.
 */
static inline int tl_tracepoint_counter(const char *event)
{
	struct perf_event_attr attr;
	char path[128], buf[32] = "";
	int fd;

	memset(&attr, 0, sizeof(attr));	/* { 0 } warns in C++ */

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/id", event);
	fd = open(path, O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = strtoull(buf, NULL, 10);
	attr.disabled = 1;
	return syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
}

static inline int tl_nr_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * Threads of this process once they number @want, waiting up to 2 s.
 * pthread_join() returns when the thread clears its TID, in exit_mm(),
 * before release_task() takes it out of /proc/self/task: on a busy host
 * a joined thread can still be listed for a moment. A thread that is
 * really left behind is still there after 2 s.
 */
static inline int tl_nr_threads_settle(int want)
{
	int n = tl_nr_threads();

	for (int i = 0; i < 2000 && n != want; i++) {
		usleep(1000);
		n = tl_nr_threads();
	}
	return n;
}

static inline int tl_drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	int ok;

	sync();
	ok = fd >= 0 && write(fd, "3", 1) == 1;
	if (fd >= 0)
		close(fd);
	return ok;
}

static inline long long tl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Pops exactly one completion, waiting for it; NULL if none came. */
static inline void *tl_wait_one(struct async_head_user *ahu)
{
	void *ev;

	for (int i = 0; i < 100; i++) {
		ev = async_ring_pop(ahu);
		if (ev)
			return ev;
		async_wait(1, ahu->user_ring_idx, ahu);
	}
	return NULL;
}

#endif /* TL_UTIL_H */
