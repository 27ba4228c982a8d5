// SPDX-License-Identifier: GPL-2.0
/*
 * setpgid() and setsid() from another thread while the main thread is
 * handed off, again and again.
 *
 * A main-thread hand-off moves group leadership, under tasklist_lock.
 * setpgid() read current->group_leader and its ID before it took that
 * lock: a hand-off in between left it with the old leader, which by then
 * carried a pool thread's identity, and a setpgid(0, 0) that cannot fail
 * failed with EINVAL or ESRCH. setsid() read the session ID the same way
 * and could make the process a session whose ID is a pool thread's TID.
 *
 * Expected: every setpgid(0, 0) and setpgid(getpid(), getpid()) from a
 * second thread succeeds during the hand-offs; a setsid() from a second
 * thread during hand-offs gives the process's ID as its session; and
 * setpgid()'s EINVAL for a negative pgid, also one taken from a negative
 * pid, is as before.
 */
#include "safety.h"

static struct async_head_user ahu;
static int stop;

static long nap_fn(void *data)
{
	struct timespec ts = { 0, 20 * 1000 };

	nanosleep(&ts, NULL);
	return complete_threadlet_fn(data, &ahu);
}

struct pg_result {
	int calls, failed, first_errno;
};

static void *setpgid_loop(void *arg)
{
	struct pg_result *r = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		pid_t me = getpid();
		int ret = r->calls & 1 ? setpgid(me, me) : setpgid(0, 0);

		r->calls++;
		if (ret) {
			if (!r->failed++)
				r->first_errno = errno;
		}
	}
	return NULL;
}

/* Hands the main thread off until *@stop, or @max times; the count. */
static int handoffs_until(int *stop_flag, int max)
{
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	int ev, n = 0, i;

	if (threadlet_err(stack))
		return -1;
	for (i = 0; i < max && !__atomic_load_n(stop_flag, __ATOMIC_ACQUIRE); i++)
		if (threadlet_exec(nap_fn, &ev, stack, &ahu) == 0) {
			n++;
			sf_wait_event(&ahu, 5000);
		}
	return n;
}

static void run_setpgid(void *arg)
{
	struct pg_result r = { 0, 0, 0 };
	int n, never = 0;
	pthread_t t;

	(void)arg;
	if (async_head_init(&ahu, 16, 2) || getpid() != gettid() ||
	    pthread_create(&t, NULL, setpgid_loop, &r)) {
		sf_ok(0, "setpgid: a main-thread head and a second thread");
		return;
	}
	n = handoffs_until(&never, 3000);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	sf_ok(n > 500 && r.calls > 1000,
	      "setpgid: %d main-thread hand-offs beside %d calls", n, r.calls);
	sf_ok(!r.failed && getpgid(0) == getpid(),
	      "setpgid: every call succeeded (%d failed, first errno %d)",
	      r.failed, r.first_errno);
	async_head_exit(&ahu);
}

static int sid_done;
static pid_t sid_got;

static void *setsid_once(void *arg)
{
	(void)arg;
	usleep(rand() % 3000);
	sid_got = setsid();
	__atomic_store_n(&sid_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* One process: a setsid() from a second thread at a random moment. */
static void one_setsid(void *arg)
{
	pthread_t t;

	srand((unsigned int)(uintptr_t)arg);
	if (async_head_init(&ahu, 16, 2) ||
	    pthread_create(&t, NULL, setsid_once, NULL))
		_exit(3);
	handoffs_until(&sid_done, 100000);
	pthread_join(t, NULL);
	_exit(sid_got == getpid() && getsid(0) == getpid() ? 0 : 1);
}

static void run_setsid(void *arg)
{
	int i, bad = 0, other = 0, status;

	(void)arg;
	for (i = 0; i < 100; i++) {
		status = sf_child(one_setsid, (void *)(uintptr_t)(i + 1), 30);
		if (status != SF_TIMEOUT && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 1)
			bad++;
		else if (!sf_exited0(status))
			other++;
	}
	sf_ok(!bad && !other,
	      "setsid: the session ID is the process's in 100 processes "
	      "(%d wrong, %d failed otherwise)", bad, other);
}

int main(void)
{
	int status, err;

	sf_init();
	err = setpgid(-1, 0) ? errno : 0;
	tl_ok(err == EINVAL, "setpgid(-1, 0): EINVAL, its pgid being -1 (errno %d)", err);
	err = setpgid(0, -1) ? errno : 0;
	tl_ok(err == EINVAL, "setpgid(0, -1): EINVAL (errno %d)", err);
	status = sf_child(run_setpgid, NULL, 120);
	sf_child_ok(status, "setpgid() beside main-thread hand-offs");
	status = sf_child(run_setsid, NULL, 240);
	sf_child_ok(status, "setsid() beside main-thread hand-offs");
	return tl_exit();
}
