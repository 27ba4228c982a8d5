/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The benchmarks' data: 64 MiB in which every 4 KiB block b holds the
 * 64-bit value b, 512 times. tests/mkimage.sh puts the same bytes in
 * /mnt/disk/data on the test disk; data_write() puts them on a device
 * that starts empty (the -icount boots' memory-backed null_blk, whose
 * latency is guest time, unlike the virtio disk's).
 */
#ifndef PERF_SCRIPTS_DATA_H
#define PERF_SCRIPTS_DATA_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

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
