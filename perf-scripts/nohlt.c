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
 * translated code on every iteration (far too slow). This loop of NOPs at
 * SCHED_IDLE takes the CPU only when no other task wants it, as the idle
 * task would, and wakeups preempt it at once. The benchmark's figures are
 * its own threads' CPU time and its elapsed time; the loop is in neither
 * (a wait still lasts until the device's timer fires).
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
	for (;;)
		__asm__ volatile(".rept 63\n\tnop\n\t.endr" ::: "memory");
}
