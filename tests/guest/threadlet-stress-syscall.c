// SPDX-License-Identifier: GPL-2.0
/*
 * threadlet-stress again, with threadlet_on/off as system calls
 * (THREADLET_FORCE_SYSCALL=1) and under perf stat with the syscall and
 * threadlet tracepoints enabled: the conditions of a crash seen once in
 * the I/O benchmark. The stress test's own TAP lines are passed through;
 * this program checks that it ran to its plan and that perf saw every
 * hand-off, since perf stat exits 0 even when its workload dies.
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tl_test.h"

#define EVENTS "raw_syscalls:sys_enter,threadlet:threadlet_handoff," \
	       "threadlet:threadlet_sync,threadlet:threadlet_fallback"

int main(void)
{
	int pfd[2], status, plan = 0, oks = 0, not_oks = 0, lines = 0;
	unsigned long long handoffs = 0, syncs = 0;
	char line[512];
	FILE *out;
	pid_t pid;

	setenv("THREADLET_FORCE_SYSCALL", "1", 1);
	if (pipe(pfd))
		return 1;
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		execl("/usr/bin/perf", "perf", "stat", "-x", ";", "-e", EVENTS,
		      "/tests/threadlet-stress", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	out = fdopen(pfd[0], "r");
	while (out && fgets(line, sizeof(line), out)) {
		unsigned long long v;
		int n;

		lines++;
		if (sscanf(line, "1..%d", &n) == 1)
			plan = n;
		else if (!strncmp(line, "not ok ", 7))
			not_oks++;
		else if (!strncmp(line, "ok ", 3))
			oks++;
		if (sscanf(line, "%llu;", &v) == 1 && strstr(line, "threadlet_handoff"))
			handoffs = v;
		else if (sscanf(line, "%llu;", &v) == 1 && strstr(line, "threadlet_sync"))
			syncs = v;
		printf("# %s", line);
	}
	waitpid(pid, &status, 0);
	tl_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "perf stat threadlet-stress exited 0 (status %#x)", status);
	tl_ok(plan > 0 && oks == plan && not_oks == 0,
	      "stress test on the syscall path ran its plan: %d of %d ok, %d not ok",
	      oks, plan, not_oks);
	/* 1000 threadlets, half of them blocking: both kinds happened. */
	tl_ok(handoffs > 0 && syncs >= 500,
	      "perf counted %llu hand-offs and %llu in-place runs", handoffs, syncs);
	return tl_exit();
}
