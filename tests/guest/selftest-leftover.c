// SPDX-License-Identifier: GPL-2.0
/*
 * Runner self-test: a test that leaves a process behind must fail, and
 * the run must go on (the process holds the test's output open).
 */
#include <unistd.h>
#include "tl_test.h"

int main(void)
{
	pid_t pid = fork();

	if (pid == 0)
		for (;;)
			pause();
	tl_ok(pid > 0, "forked a child that outlives this test");
	return tl_exit();
}
