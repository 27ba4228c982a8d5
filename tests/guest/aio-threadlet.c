// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX AIO called from inside an application's threadlet. libthreadlet-aio
 * runs a request in place when its caller is itself a threadlet, inside
 * the loop that starts requests in order; if that request blocks, the
 * application's threadlet is handed off and the rest of the loop goes on
 * in a cache-miss thread, while the head runs on. The loop's list must
 * go with it: kept per thread, the head was left marked as inside the
 * loop for good, and every later request it started that way (a read on
 * a pipe) was queued to a list nobody ran and stayed EINPROGRESS.
 */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "tl_test.h"
#include "tl_util.h"

static struct async_head_user ahu;
static int pfd[2];
static struct aiocb cb1, cb2;
static char b1, b2;
static int submitted = -1;

/* An aio_read() on the empty pipe: its read runs here, and blocks. */
static long read_in_threadlet(void *data)
{
	(void)data;
	cb1.aio_fildes = pfd[0];
	cb1.aio_buf = &b1;
	cb1.aio_nbytes = 1;
	submitted = aio_read(&cb1);
	return complete_threadlet_fn(&cb1, &ahu);
}

/* 1 once @cb is done, 0 if it is still in progress after @secs. */
static int wait_cb(struct aiocb *cb, int secs)
{
	const struct aiocb *list[1] = { cb };
	long long end = tl_now_ns() + secs * 1000000000LL;
	struct timespec ts = { 0, 100000000 };

	while (aio_error(cb) == EINPROGRESS) {
		if (tl_now_ns() > end)
			return 0;
		aio_suspend(list, 1, &ts);
	}
	return 1;
}

int main(void)
{
	static struct aiocb warm;
	unsigned long stack;
	char buf[16];
	long ret;

	tl_ok(pipe(pfd) == 0 && async_head_init(&ahu, 16, 4) == 0, "a pipe, a head");
	stack = threadlet_stack_alloc(256 << 10);
	tl_ok(stack != 0, "a threadlet stack");

	/* The library is set up by a request outside any threadlet. */
	warm.aio_fildes = open("/proc/self/stat", O_RDONLY);
	warm.aio_buf = buf;
	warm.aio_nbytes = sizeof(buf);
	tl_ok(aio_read(&warm) == 0 && wait_cb(&warm, 10) && aio_return(&warm) > 0,
	      "a first read, outside a threadlet");

	ret = threadlet_exec(read_in_threadlet, NULL, stack, &ahu);
	tl_ok(ret == 0, "a threadlet whose aio_read() blocks on the pipe is handed off (%ld)",
	      ret);
	usleep(100000);
	tl_ok(write(pfd[1], "a", 1) == 1, "the pipe gets a byte");
	tl_ok(wait_cb(&cb1, 10) && aio_return(&cb1) == 1 && b1 == 'a',
	      "the threadlet's read ends with it");
	tl_ok(tl_wait_one(&ahu) == &cb1 && submitted == 0,
	      "the threadlet completes, its aio_read() returned 0");

	/* The head starts a read on the pipe, which has data. */
	tl_ok(write(pfd[1], "b", 1) == 1, "a byte for the head's read");
	cb2.aio_fildes = pfd[0];
	cb2.aio_buf = &b2;
	cb2.aio_nbytes = 1;
	tl_ok(aio_read(&cb2) == 0, "the head's aio_read() on the pipe");
	tl_ok(wait_cb(&cb2, 10), "its read ends (status %d)", aio_error(&cb2));
	tl_ok(aio_return(&cb2) == 1 && b2 == 'b', "and got the byte");

	async_head_exit(&ahu);
	threadlet_stack_free(stack);
	return tl_exit();
}
