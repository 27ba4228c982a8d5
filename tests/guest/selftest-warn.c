// SPDX-License-Identifier: GPL-2.0
/*
 * Runner self-test: the test itself passes, but it makes the kernel print a
 * WARN_ON through LKDTM; the runner must fail the run on the kernel report.
 */
#include <fcntl.h>
#include <unistd.h>
#include "tl_test.h"

int main(void)
{
	int fd = open("/sys/kernel/debug/provoke-crash/DIRECT", O_WRONLY);

	tl_ok(fd >= 0 && write(fd, "WARNING", 7) == 7, "LKDTM WARNING triggered");
	return tl_exit();
}
