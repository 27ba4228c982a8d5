// SPDX-License-Identifier: GPL-2.0
/*
 * Where a cached POSIX AIO read's instructions go (make aio-profile): each
 * call of io.c's posix_aio loop timed on its own, in rounds of 32 reads
 * of 4 KiB from a file in the page cache (tmpfs), against sync pread()
 * of the same blocks. Under -icount a guest ns is an instruction; a
 * round's figure is divided by 32, less the cost of the clock reads.
 * Linked against glibc's AIO or (scripts/aio-prof.sh) libthreadlet-aio.
 */
#include <aio.h>
#include <errno.h>
#include <string.h>

#include "../perf-scripts/bench.h"

#define BS	4096
#define N	32
#define ROUNDS	2000
#define NBLK	1024

enum { T_PREAD, T_READ, T_SUSPEND, T_ERROR, T_RETURN, T_CLOCK, T_NR };
static const char *const names[T_NR] = {
	"pread()", "aio_read()", "aio_suspend(), all done", "aio_error()",
	"aio_return()", "(the clock read, subtracted)",
};

int main(int argc, char **argv)
{
	static char bufs[N][BS] __attribute__((aligned(4096)));
	const struct aiocb *list[N];
	struct aiocb cbs[N];
	uint64_t sum[T_NR] = { 0 }, t;
	unsigned int seed = 1;
	int fd = open(argc > 1 ? argv[1] : "/tmp/aio-prof", O_RDWR | O_CREAT, 0600);

	if (fd < 0)
		return perror("open"), 1;
	memset(bufs[0], 0x5a, BS);
	for (int b = 0; b < NBLK; b++)
		if (pwrite(fd, bufs[0], BS, (off_t)b * BS) != BS)
			return perror("pwrite"), 1;
	memset(cbs, 0, sizeof(cbs));
	for (int r = 0; r < ROUNDS + 10; r++) {
		uint64_t d[T_NR];
		off_t off[N];
		int bad = 0;

		for (int s = 0; s < N; s++)
			off[s] = (off_t)(rand_r(&seed) % NBLK) * BS;
		t = now();
		d[T_CLOCK] = now() - t;
		t = now();
		for (int s = 0; s < N; s++)
			bad |= pread(fd, bufs[s], BS, off[s]) != BS;
		d[T_PREAD] = now() - t;
		for (int s = 0; s < N; s++) {
			cbs[s] = (struct aiocb){ .aio_fildes = fd, .aio_buf = bufs[s],
				.aio_nbytes = BS, .aio_offset = off[s] };
			list[s] = &cbs[s];
		}
		t = now();
		for (int s = 0; s < N; s++)
			bad |= aio_read(&cbs[s]);
		d[T_READ] = now() - t;
		t = now();
		bad |= aio_suspend(list, N, NULL);
		d[T_SUSPEND] = now() - t;
		/* A read that went async (none should) is waited for here. */
		for (int s = 0; s < N; s++)
			while (aio_error(&cbs[s]) == EINPROGRESS)
				aio_suspend(&list[s], 1, NULL);
		t = now();
		for (int s = 0; s < N; s++)
			bad |= aio_error(&cbs[s]);
		d[T_ERROR] = now() - t;
		t = now();
		for (int s = 0; s < N; s++)
			bad |= aio_return(&cbs[s]) != BS;
		d[T_RETURN] = now() - t;
		if (bad)
			return fprintf(stderr, "aio-prof: a call failed\n"), 1;
		for (int i = 0; r >= 10 && i < T_NR; i++)	/* 10 to warm up */
			sum[i] += d[i];
	}
	for (int i = 0; i < T_NR; i++) {
		double per = (double)(sum[i] - (i == T_CLOCK ? 0 : sum[T_CLOCK])) / ROUNDS;

		printf("AIOPROF %-32s %10.1f\n", names[i], i == T_SUSPEND ||
		       i == T_CLOCK ? per : per / N);
	}
	printf("AIOPROF %-32s %10.1f\n", "a read, all calls, minus pread()",
	       (double)(sum[T_READ] + sum[T_ERROR] + sum[T_RETURN] - 3 * sum[T_CLOCK]
			+ sum[T_SUSPEND] - sum[T_CLOCK] - (sum[T_PREAD] - sum[T_CLOCK]))
	       / ROUNDS / N);
	return 0;
}
