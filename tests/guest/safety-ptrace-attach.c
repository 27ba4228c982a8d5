// SPDX-License-Identifier: GPL-2.0
/*
 * PTRACE_SEIZE of the head's TID while the head is handed off, again and
 * again.
 *
 * ptrace() finds the tracee by its TID, then attaches under tasklist_lock;
 * the common hand-off exchanges TIDs under siglock only. A tracer whose
 * lookup found the head's task just before the exchange attached to it
 * after, when that task carried a pool thread's identity: the tracer
 * traced a thread it had not named, and the thread with the TID it named
 * was not traced (its next request on that TID failed with ESRCH).
 *
 * Another process seizes the head's TID, interrupts it, waits for it and
 * detaches, again and again, while the head's threadlets block and are
 * handed off in between.
 * Expected: each request after a successful PTRACE_SEIZE finds the
 * thread the tracer seized.
 */
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include "safety.h"

#define ROUNDS	1500

static struct async_head_user ahu;

struct shared {
	pid_t head_tid;
	int stop, seized, wrong, errors, first_errno;
};

static long nap_fn(void *data)
{
	struct timespec ts = { 0, 20 * 1000 };

	nanosleep(&ts, NULL);
	return complete_threadlet_fn(data, &ahu);
}

static void tracer(struct shared *sh)
{
	pid_t tid;
	int status;

	while (!(tid = __atomic_load_n(&sh->head_tid, __ATOMIC_ACQUIRE)))
		usleep(1000);

	for (int i = 0; i < ROUNDS; i++) {
		if (ptrace(PTRACE_SEIZE, tid, 0, 0)) {
			if (!sh->errors++)
				sh->first_errno = errno;
			continue;
		}
		sh->seized++;
		if (ptrace(PTRACE_INTERRUPT, tid, 0, 0)) {
			/* The task this tracer attached to has another TID. */
			sh->wrong++;
			break;
		}
		if (waitpid(tid, &status, __WALL) != tid ||
		    ptrace(PTRACE_DETACH, tid, 0, 0)) {
			sh->wrong++;
			break;
		}
		usleep(i % 50 * 10);
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
}

/* The head: a second thread, neither the leader nor a parent. */
static void *head_thread(void *arg)
{
	struct shared *sh = arg;
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	int ev, handoffs = 0;

	if (threadlet_err(stack) || async_head_init(&ahu, 16, 2)) {
		sf_ok(0, "a head with a pool of 2");
		__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&sh->head_tid, syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE))
		if (threadlet_exec(nap_fn, &ev, stack, &ahu) == 0) {
			handoffs++;
			sf_wait_event(&ahu, 5000);
		}
	sf_ok(handoffs > 100 && sh->seized > ROUNDS / 2,
	      "%d hand-offs beside %d seizes (%d failed, first errno %d)",
	      handoffs, sh->seized, sh->errors, sh->first_errno);
	sf_ok(!sh->wrong, "the seized thread always had the TID the tracer named (%d not)",
	      sh->wrong);
	if (sh->wrong)
		_exit(0);	/* a pool thread may be left traced and stopped */
	async_head_exit(&ahu);
	return NULL;
}

/* The tracer is forked first: a child of the head would move with it. */
static void run(void *arg)
{
	struct shared *sh = arg;
	int status;
	pthread_t h;
	pid_t t;

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	t = fork();
	if (t == 0) {
		tracer(sh);
		_exit(0);
	}
	if (t < 0 || pthread_create(&h, NULL, head_thread, sh)) {
		sf_ok(0, "a tracer and a head thread");
		return;
	}
	pthread_join(h, NULL);
	waitpid(t, &status, 0);
}

int main(void)
{
	struct shared *sh = sf_shared(sizeof(*sh));
	int status;

	sf_init();
	status = sf_child(run, sh, 180);
	sf_child_ok(status, "PTRACE_SEIZE of a head's TID across its hand-offs");
	return tl_exit();
}
