// SPDX-License-Identifier: GPL-2.0
/*
 * aio_error() and aio_return() in a signal handler (found by a helper's
 * review).
 *
 * POSIX lists both as async-signal-safe: the classic SIGEV_SIGNAL program
 * retrieves its request in the handler. libthreadlet-aio took its one
 * mutex in aio_return() always, and in aio_error() for an aiocb with no
 * request; a handler that interrupted the same thread inside aio_read()
 * or aio_return() then waited for a lock its own thread held, forever.
 *
 * T submits, waits for and retrieves cached reads on one aiocb in a loop
 * (so it holds the library's lock often); the main thread signals T as
 * fast as it can. The handler asks for the status of an aiocb never
 * submitted (EINVAL from both) and retrieves one request the main thread
 * completed before (its byte count once, EINVAL after). Expected: T ends
 * (no handler waits forever), every read is right, every answer in the
 * handler is right.
 */
#include <aio.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include "tl_test.h"
#include "tl_util.h"

#define LEN	512
#define SECS	2

static int fd;
static struct aiocb never, hcb;
static char hbuf[LEN];
static volatile int stop;
static volatile long handled, h_bad, h_retrieved, h_einval;
static long loops, t_bad;
static volatile pid_t t_tid;

static void on_usr1(int sig)
{
	int e = errno;
	ssize_t r;

	(void)sig;
	handled++;
	if (aio_error(&never) != EINVAL)
		h_bad++;
	errno = 0;
	if (aio_return(&never) != -1 || errno != EINVAL)
		h_bad++;
	errno = 0;
	r = aio_return(&hcb);
	if (r == LEN && !h_retrieved)
		h_retrieved++;
	else if (r == -1 && errno == EINVAL && h_retrieved)
		h_einval++;
	else
		h_bad++;
	errno = e;
}

static void *t_main(void *arg)
{
	char buf[LEN];
	struct aiocb cb;

	(void)arg;
	t_tid = syscall(SYS_gettid);
	while (!stop) {
		const struct aiocb *l[1] = { &cb };

		memset(&cb, 0, sizeof(cb));
		cb.aio_fildes = fd;
		cb.aio_buf = buf;
		cb.aio_nbytes = LEN;
		cb.aio_offset = (loops % 8) * LEN;
		memset(buf, 0, LEN);
		if (aio_read(&cb)) {
			if (errno == EINTR)
				continue;
			t_bad++;
			break;
		}
		while (aio_error(&cb) == EINPROGRESS)
			aio_suspend(l, 1, NULL);
		if (aio_return(&cb) != LEN || buf[0] != (char)('a' + loops % 8) ||
		    buf[LEN - 1] != (char)('a' + loops % 8))
			t_bad++;
		loops++;
	}
	return NULL;
}

int main(void)
{
	char path[] = "/tmp/aio-signal.XXXXXX", blk[LEN];
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	const struct aiocb *l[1] = { &hcb };
	struct timespec until;
	long long t_end;
	long sent = 0;
	pthread_t t;
	pid_t tid;
	int joined;

	fd = mkstemp(path);
	if (fd < 0) {
		tl_skip_test("no temporary file");
		return tl_exit();
	}
	unlink(path);
	for (int i = 0; i < 8; i++) {
		memset(blk, 'a' + i, LEN);
		if (write(fd, blk, LEN) != LEN)
			return 2;
	}
	hcb.aio_fildes = fd;
	hcb.aio_buf = hbuf;
	hcb.aio_nbytes = LEN;
	tl_ok(aio_read(&hcb) == 0, "submit the request the handler retrieves");
	while (aio_error(&hcb) == EINPROGRESS)
		aio_suspend(l, 1, NULL);
	tl_ok(aio_error(&hcb) == 0, "it completed");
	sigaction(SIGUSR1, &sa, NULL);

	pthread_create(&t, NULL, t_main, NULL);
	while (!t_tid || !__atomic_load_n(&loops, __ATOMIC_RELAXED))
		usleep(1000);
	tid = t_tid;
	t_end = tl_now_ns() + SECS * 1000000000LL;
	while (tl_now_ns() < t_end) {
		if (syscall(SYS_tgkill, getpid(), tid, SIGUSR1) == 0)
			sent++;
		if (sent % 16 == 0)
			sched_yield();
	}
	stop = 1;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 20;
	joined = pthread_timedjoin_np(t, NULL, &until) == 0;
	tl_ok(joined, "T ended: no handler waited for the library's lock "
	      "(%ld signals sent, %ld handled, %ld reads)", sent, handled, loops);
	if (!joined)
		return tl_exit();	/* exit_group() ends T */
	tl_ok(handled > 100, "the handler ran often (%ld)", handled);
	tl_ok(!t_bad, "every read in T returned its block (%ld wrong)", t_bad);
	tl_ok(!h_bad, "every answer in the handler was right (%ld wrong)", h_bad);
	tl_ok(h_retrieved == 1 && h_einval == handled - 1,
	      "the handler retrieved the request once, EINVAL after (%ld, %ld)",
	      h_retrieved, h_einval);
	tl_ok(aio_error(&hcb) == EINVAL, "its status is gone after aio_return()");
	return tl_exit();
}
