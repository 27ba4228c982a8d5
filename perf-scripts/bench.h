/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the benchmarks share: the clocks, the raw futex call, and their
 * data: 64 MiB in which every 4 KiB block b holds the
 * 64-bit value b, 512 times. tests/mkimage.sh puts the same bytes in
 * /mnt/disk/data on the test disk; data_write() puts them on a device
 * that starts empty (the -icount boots' memory-backed null_blk, whose
 * latency is guest time, unlike the virtio disk's).
 */
#ifndef PERF_SCRIPTS_BENCH_H
#define PERF_SCRIPTS_BENCH_H

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* CLOCK_MONOTONIC in ns: under QEMU -icount, guest instructions. */
static inline uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The CPU time of the whole process (all threads), in ns. */
static inline uint64_t cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The smallest step CLOCK_MONOTONIC takes: on a jiffies clocksource (a TSC
 * that failed to calibrate) a whole tick, and every figure would be noise.
 */
static inline uint64_t clock_step(void)
{
	uint64_t t0, t1, step = UINT64_MAX;

	for (int i = 0; i < 100; i++) {
		t0 = now();
		do
			t1 = now();
		while (t1 == t0);
		if (t1 - t0 < step)
			step = t1 - t0;
	}
	return step;
}

/* For qsort(). */
static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* FUTEX_WAIT and FUTEX_WAKE without glibc's wrappers around them. */
static inline long futex(uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

#define DATA_BLOCKS	(64 * 256)
#define DATA_BS		4096

/* Returns 0, or -1 after saying why on stderr. */
static inline int data_write(const char *path)
{
	static uint64_t blk[DATA_BS / 8] __attribute__((aligned(DATA_BS)));
	int wfd = open(path, O_WRONLY);

	if (wfd < 0) {
		fprintf(stderr, "%s: %m\n", path);
		return -1;
	}
	for (uint64_t b = 0; b < DATA_BLOCKS; b++) {
		for (int i = 0; i < DATA_BS / 8; i++)
			blk[i] = b;
		if (pwrite(wfd, blk, DATA_BS, (off_t)(b * DATA_BS)) != DATA_BS) {
			fprintf(stderr, "write %s: %m\n", path);
			close(wfd);
			return -1;
		}
	}
	if (fsync(wfd) || close(wfd)) {
		fprintf(stderr, "fsync %s: %m\n", path);
		return -1;
	}
	return 0;
}

#endif
