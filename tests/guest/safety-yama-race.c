// SPDX-License-Identifier: GPL-2.0
/*
 * Yama's PR_SET_PTRACER from a second thread against hand-offs of the main
 * thread (found by a helper's review). A relation names the group leader,
 * and a hand-off of the main thread moves leadership, and then the
 * relations that name the old leader, to the new one. prctl() found the
 * leader without a lock: between the move and the relations' move, it
 * found the new leader, revoked nothing that named it, and then the
 * relation of the old leader moved there; the tracer the process had just
 * revoked could still attach (and a new one named then was refused).
 * Expected: with ptrace_scope 1, Q, named and revoked again and again by
 * L's second thread, is refused every time after a revoke, and reads L's
 * memory after it was named (but for a check that races a hand-off).
 */
#include <sys/prctl.h>
#include "safety.h"
#include "tl_yama.h"

static struct async_head_user ahu;
static int stop;

static long nap_fn(void *data)
{
	struct timespec ts = { 0, 20 * 1000 };

	nanosleep(&ts, NULL);
	return complete_threadlet_fn(data, &ahu);
}

struct res {
	int rounds, open_after_revoke, refused_after_set, other;
	int first_round;
};

static struct q_proc q;
static struct res R;

static void *revoker(void *arg)
{
	long long end = tl_now_ns() + 15LL * 1000000000LL;
	unsigned int seed = 12345;

	(void)arg;
	while (tl_now_ns() < end && R.rounds < 200000) {
		int r1, r2, r3;
		volatile int spin;

		r1 = prctl(PR_SET_PTRACER, q.pid);
		r2 = q_ask(&q, 'r');
		if (r1 == 0 && r2 == EACCES)
			R.refused_after_set++;
		spin = rand_r(&seed) % 20000;
		while (spin-- > 0)
			;
		r1 = prctl(PR_SET_PTRACER, 0);
		r3 = q_ask(&q, 'r');
		R.rounds++;
		if (r1 == 0 && r3 == 0) {
			if (!R.open_after_revoke++)
				R.first_round = R.rounds;
		} else if (r1 || r3 != EACCES)
			R.other++;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void run(void *arg)
{
	unsigned long stack;
	pthread_t t;
	int n = 0, ev, i;

	(void)arg;
	if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY) ||
	    prctl(PR_SET_DUMPABLE, 1)) {
		sf_ok(0, "drop to uid %d", NOBODY);
		return;
	}
	stack = threadlet_stack_alloc(64 << 10);
	if (threadlet_err(stack) || q_start(&q) || async_head_init(&ahu, 16, 2)) {
		sf_ok(0, "set-up");
		return;
	}
	sf_ok(q_ask(&q, 'r') == EACCES, "Q refused without a relation");
	if (pthread_create(&t, NULL, revoker, NULL)) {
		sf_ok(0, "thread");
		return;
	}
	for (i = 0; !__atomic_load_n(&stop, __ATOMIC_ACQUIRE); i++)
		if (threadlet_exec(nap_fn, &ev, stack, &ahu) == 0) {
			n++;
			sf_wait_event(&ahu, 5000);
		}
	pthread_join(t, NULL);
	tl_diag("%d main-thread hand-offs, %d rounds", n, R.rounds);
	sf_ok(R.open_after_revoke == 0,
	      "after PR_SET_PTRACER(0) Q is refused: %d of %d rounds Q still read L (first in round %d)",
	      R.open_after_revoke, R.rounds, R.first_round);
	/*
	 * Yama's check reads the leader and then the relations without a
	 * lock: one that races the move of both may find neither, and
	 * refuses. That window fails closed, as one during exec does.
	 */
	sf_ok(R.refused_after_set * 10 < R.rounds,
	      "after PR_SET_PTRACER(Q) Q reads L: refused in %d of %d rounds (checks that raced a hand-off)",
	      R.refused_after_set, R.rounds);
	tl_diag("other results: %d", R.other);
	q_ask(&q, 'q');
	async_head_exit(&ahu);
}

int main(void)
{
	int fd = open(YAMA_SCOPE, O_RDONLY), status;
	char old[8] = "0";

	sf_init();
	if (fd >= 0) {
		if (read(fd, old, sizeof(old) - 1) < 1)
			strcpy(old, "0");
		close(fd);
	}
	tl_ok(write_str(YAMA_SCOPE, "1"), "ptrace_scope = 1");
	status = sf_child(run, NULL, 90);
	sf_child_ok(status, "the racing process");
	write_str(YAMA_SCOPE, old);
	return tl_exit();
}
