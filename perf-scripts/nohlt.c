// SPDX-License-Identifier: GPL-2.0
/*
 * nohlt: keeps the one vCPU of an -icount boot out of HLT, so that its
 * figures repeat from boot to boot.
 *
 * Under -icount shift=0,sleep=off, QEMU 7.2 moves the guest clock to the
 * next timer deadline when every vCPU is halted. Its main loop may do that
 * in the short time after the vCPU has executed HLT but before the vCPU
 * thread has added the instructions of its last time slice to the clock:
 * the deadline is then measured from a clock that is behind, and the timer
 * fires late by a number of instructions that depends on host timing. Each
 * wait for null_blk is such an idle period; with thousands of them and
 * threads that interleave, two boots drifted apart by up to 28%.
 *
 * idle=poll would keep the kernel out of HLT, but its PAUSE leaves QEMU's
 * translated code on every iteration (far too slow). This loop runs at
 * SCHED_IDLE, so a waking task preempts it at once. SCHED_IDLE alone is
 * not enough: CFS still gives it a share (weight 3 against 1024), and
 * when its vruntime is the smallest (after a long run of the benchmark, or
 * when a new thread is queued behind it) the tick hands it a whole tick.
 * So it calls sched_yield() every 10,000 or so instructions: yield skips
 * it in favour of any other runnable task within the wakeup granularity
 * of its vruntime, which for weight 3 is 341 times the granularity, and
 * the task it robs waits at most one round of this loop, not a tick.
 * Not on every round: a task woken while the loop is inside sched_yield()
 * is charged for the rest of it (its CPU time starts at the wakeup), and
 * the rarer the calls, the rarer that is.
 *
 * The benchmark's figures are its own threads' CPU time and its elapsed
 * time; the loop is in neither (a wait still lasts until the device's
 * timer fires).
 *
 * Runs until killed. Exit status 1 if it cannot switch to SCHED_IDLE.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>

int main(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	if (sched_setscheduler(0, SCHED_IDLE, &sp)) {
		fprintf(stderr, "nohlt: SCHED_IDLE: %s\n", strerror(errno));
		return 1;
	}
	for (;;) {
		for (int i = 0; i < 100; i++)
			__asm__ volatile(".rept 100\n\tnop\n\t.endr" ::: "memory");
		sched_yield();
	}
}
