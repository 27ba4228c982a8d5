// SPDX-License-Identifier: GPL-2.0
/*
 * close_range(fd, fd, CLOSE_RANGE_UNSHARE) is an unshare() of the file
 * table: it makes the caller a private copy with the range closed, and
 * installs it. A sleep on its way (here locks_remove_posix(), which waits
 * for file_rwsem while other threads read /proc/locks) handed the head off
 * (found by a helper's review): the private table went to the task that
 * took a pool thread's identity, and the head kept the shared table with
 * the descriptor still open, after close_range() had returned 0 to it.
 * Expected: such a sleep falls back with FB_CALL, and the descriptor is
 * closed for the caller every time.
 */
#include <linux/close_range.h>
#include "safety.h"

static struct async_head_user ahu;
static int fd, stop;
static volatile long rc = -99;

static long close_fn(void *data)
{
	rc = syscall(SYS_close_range, fd, fd, CLOSE_RANGE_UNSHARE);
	return complete_threadlet_fn(data, &ahu);
}

/*
 * Holds file_rwsem for writing, again and again: /proc/locks lists every
 * lock under it, the more of them the longer (see one()).
 */
static void *locks_reader(void *arg)
{
	size_t len = 1 << 18;
	char *buf = malloc(len);
	int f = open("/proc/locks", O_RDONLY);

	(void)arg;
	while (buf && f >= 0 && !__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		if (pread(f, buf, len, 0) < 0)
			break;
	if (f >= 0)
		close(f);
	free(buf);
	return NULL;
}

struct out {
	int tries, handed, pinned, other, open_after;
};
static struct out *o;

static void one(void *arg)
{
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	unsigned long long fb0;
	char path[64];
	pthread_t w[2];
	long ret;
	int ev;

	(void)arg;
	snprintf(path, sizeof(path), "/tmp/tl-close-range.%d", getpid());
	fd = open(path, O_RDWR | O_CREAT, 0600);
	unlink(path);
	if (fd < 0 || threadlet_err(stack) ||
	    async_head_init(&ahu, 16, 2) || !tl_wait_parked(&ahu, 2))
		_exit(3);
	/* Locks on every other byte, which do not merge: a long /proc/locks. */
	for (int i = 1; i <= 400; i++) {
		struct flock one = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				     .l_start = 2 * i, .l_len = 1 };

		if (fcntl(fd, F_SETLK, &one))
			_exit(3);
	}
	pthread_create(&w[0], NULL, locks_reader, NULL);
	pthread_create(&w[1], NULL, locks_reader, NULL);
	usleep(1000);
	fb0 = __threadlet_area.nr_fallbacks;
	ret = threadlet_exec(close_fn, &ev, stack, &ahu);
	if (ret == 0) {
		sf_wait_event(&ahu, 5000);
		__atomic_add_fetch(&o->handed, 1, __ATOMIC_RELAXED);
	} else if (__threadlet_area.nr_fallbacks > fb0) {
		__atomic_add_fetch(__threadlet_area.last_fallback == THREADLET_FB_CALL ?
				   &o->pinned : &o->other, 1, __ATOMIC_RELAXED);
	}
	if (rc == 0 && fcntl(fd, F_GETFD) >= 0)
		__atomic_add_fetch(&o->open_after, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&o->tries, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(w[0], NULL);
	pthread_join(w[1], NULL);
	_exit(0);
}

int main(void)
{
	int i;

	sf_init();
	o = sf_shared(sizeof(*o));
	for (i = 0; i < 600 && o->pinned + o->handed < 3; i++)
		sf_child(one, NULL, 20);
	tl_diag("%d tries: %d slept in place (FB_CALL), %d handed off, %d other fallbacks",
		o->tries, o->pinned, o->handed, o->other);
	tl_ok(o->tries == i, "every try ran (%d of %d)", o->tries, i);
	if (o->pinned + o->handed == 0)
		tl_skip_test("close_range() never slept inside the threadlet");
	else
		tl_ok(o->pinned > 0, "close_range() slept inside the threadlet (%d times)",
		      o->pinned + o->handed);
	tl_ok(o->handed == 0 && o->other == 0,
	      "its sleep was never handed off: %d hand-offs, %d other fallbacks",
	      o->handed, o->other);
	tl_ok(o->open_after == 0,
	      "the descriptor is closed for the caller once close_range() returned 0 (open in %d)",
	      o->open_after);
	return tl_exit();
}
