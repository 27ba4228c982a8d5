// SPDX-License-Identifier: GPL-2.0
/*
 * The same N file reads, four ways, in one run:
 *   syscalls   N pread() system calls;
 *   syslet     one chain of N pread atoms, one async_exec();
 *   threadlets N threadlets of one pread each;
 *   threadlet  one threadlet doing the N preads.
 * Cached: the blocks are in the page cache, nothing blocks, every method
 * runs in place. Cold: drop_caches first, so the reads block and the
 * asynchronous methods hand off (the figure then includes waiting for the
 * completion). Every read is checked against the data file's pattern
 * (each 4 KiB block holds its block number); a wrong byte fails the run.
 *
 * Usage: reads [-f data [-w]]: the data file or device (default
 * /mnt/disk/data, on the virtio disk); -w writes the data there first
 * (perf-scripts/micro.sh's -icount boots read a memory-backed null_blk
 * device, whose latency is guest time, so cold reads repeat exactly).
 *
 * Prints "RESULT <case> <ns per read>" lines; under -icount, ns are guest
 * instructions.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <threadlet.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define N	16
#define REPS	200

typedef unsigned long long u64;

static struct async_head_user ahu;
static int fd, failed;
static uint64_t bufs[N][512];

static void check(u64 first)
{
	for (int i = 0; i < N; i++)
		if (bufs[i][0] != first + i || bufs[i][511] != first + i) {
			if (!failed++)
				fprintf(stderr, "wrong bytes in block %llu\n", first + i);
			return;
		}
	memset(bufs, 0, sizeof(bufs));
}

static void by_syscalls(u64 first)
{
	for (int i = 0; i < N; i++)
		if (pread(fd, bufs[i], 4096, (first + i) * 4096) != 4096)
			failed++;
}

static struct syslet_uatom atoms[N];
static long long rets[N];
static u64 a_fd, a_len = 4096, a_buf[N], a_off[N];

static void by_syslet(u64 first)
{
	struct syslet_uatom *done;

	a_fd = fd;
	for (int i = 0; i < N; i++) {
		a_buf[i] = (uintptr_t)bufs[i];
		a_off[i] = (first + i) * 4096;
		syslet_atom_init(&atoms[i], SYS_pread64, SYSLET_STOP_ON_NON_POSITIVE,
				 &rets[i], i + 1 < N ? &atoms[i + 1] : NULL, 4,
				 &a_fd, &a_buf[i], &a_len, &a_off[i]);
	}
	done = async_exec(atoms, &ahu);
	while (!done) {
		done = async_ring_pop(&ahu);
		if (!done)
			async_wait(1, ahu.user_ring_idx, &ahu);
	}
	if (done != &atoms[N - 1] || rets[N - 1] != 4096)
		failed++;
}

struct job {
	u64 block;
	int idx, n;
};

static long read_fn(void *data)
{
	struct job *j = data;

	for (int i = 0; i < j->n; i++)
		if (pread(fd, bufs[j->idx + i], 4096, (j->block + i) * 4096) != 4096)
			failed++;
	return complete_threadlet_fn(j, &ahu);
}

static unsigned long stacks[N];

static void by_threadlets(u64 first)
{
	static struct job jobs[N];
	int pending = 0;

	for (int i = 0; i < N; i++) {
		jobs[i] = (struct job){ first + i, i, 1 };
		pending += threadlet_exec(read_fn, &jobs[i], stacks[i], &ahu) == 0;
	}
	while (pending) {
		if (async_ring_pop(&ahu))
			pending--;
		else
			async_wait(1, ahu.user_ring_idx, &ahu);
	}
}

static void by_one_threadlet(u64 first)
{
	struct job j = { first, 0, N };

	if (threadlet_exec(read_fn, &j, stacks[0], &ahu) == 0)
		while (!async_ring_pop(&ahu))
			async_wait(1, ahu.user_ring_idx, &ahu);
}

static void drop_caches(void)
{
	int dfd = open("/proc/sys/vm/drop_caches", O_WRONLY);

	if (dfd < 0 || write(dfd, "3", 1) != 1)
		failed++;
	close(dfd);
}

static void run(const char *name, void (*fn)(u64), int cold)
{
	struct threadlet_stats s0, s1;
	long long t, total = 0;
	int reps = cold ? 10 : REPS;

	threadlet_stats(&s0);
	for (int r = 0; r < reps; r++) {
		/* Cold runs read fresh blocks, far from the last readahead. */
		u64 first = cold ? 2000 + r * 700 : 100;

		if (cold)
			drop_caches();
		t = now();
		fn(first);
		total += now() - t;
		check(first);
	}
	threadlet_stats(&s1);
	printf("  %-22s %10.1f ns/read  (%llu hand-offs)\n", name,
	       (double)total / reps / N, s1.nr_handoffs - s0.nr_handoffs);
	printf("RESULT %s %.1f\n", name, (double)total / reps / N);
}

int main(int argc, char **argv)
{
	const char *path = "/mnt/disk/data";
	int opt, wflag = 0;

	while ((opt = getopt(argc, argv, "f:w")) != -1) {
		if (opt == 'f') {
			path = optarg;
		} else if (opt == 'w') {
			wflag = 1;
		} else {
			fprintf(stderr, "usage: reads [-f data [-w]]\n");
			return 64;
		}
	}
	if (wflag && data_write(path))
		return 1;
	fd = open(path, O_RDONLY);
	if (fd < 0 || async_head_init_pool(&ahu, 64, N, N)) {
		perror("setup");
		return 1;
	}
	for (int i = 0; i < N; i++)
		stacks[i] = threadlet_stack_alloc(32 << 10);
	by_syscalls(100);	/* warm the cache for the cached cases */
	check(100);
	printf("%d reads of 4 KiB from %s, per read:\n", N, path);
	run("cached_syscalls", by_syscalls, 0);
	run("cached_syslet", by_syslet, 0);
	run("cached_threadlets", by_threadlets, 0);
	run("cached_one_threadlet", by_one_threadlet, 0);
	run("cold_syscalls", by_syscalls, 1);
	run("cold_syslet", by_syslet, 1);
	run("cold_threadlets", by_threadlets, 1);
	run("cold_one_threadlet", by_one_threadlet, 1);
	async_head_exit(&ahu);
	printf("reads: %s\n", failed ? "FAILED" : "all reads checked");
	return failed != 0;
}
