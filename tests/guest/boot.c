// SPDX-License-Identifier: GPL-2.0
/*
 * Sanity of the test image itself: our kernel is the one that booted, and
 * the virtio ext4 disk holds the data the I/O tests rely on.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "tl_test.h"

int main(void)
{
	struct utsname u;
	uint64_t buf[512];
	int fd, good = 1;

	tl_ok(uname(&u) == 0 && strstr(u.release, "-threadlets") != NULL,
	      "uname -r has our localversion (%s)", u.release);
	tl_ok(sysconf(_SC_NPROCESSORS_ONLN) == 2, "2 CPUs online (%ld)",
	      sysconf(_SC_NPROCESSORS_ONLN));

	fd = open("/mnt/disk/data", O_RDONLY);
	tl_ok(fd >= 0, "test disk mounted, /mnt/disk/data opens");
	for (uint64_t blk = 0; fd >= 0 && blk < 64 * 256; blk += 997) {
		if (pread(fd, buf, sizeof(buf), blk * 4096) != sizeof(buf) ||
		    buf[0] != blk || buf[511] != blk) {
			good = 0;
			break;
		}
	}
	tl_ok(fd >= 0 && good, "data file blocks hold their block number");
	tl_ok(access("/sys/kernel/tracing/events/raw_syscalls", F_OK) == 0,
	      "syscall tracepoints available for perf");
	return tl_exit();
}
