// SPDX-License-Identifier: GPL-2.0
/*
 * The thread-group leader never becomes a cache-miss thread (finding 7).
 *
 * A hand-off exchanges TIDs. A parked main thread would later give its
 * TID, which is the PID, to a thread that is not the group leader, and
 * take a pthread's TID as the leader: async_thread() refuses to park the
 * main thread (EINVAL). A pthread parks as before. And the other way
 * round, a hand-off *from* the main thread keeps the leader's identity
 * with the head: getpid() == gettid() there, and /proc/<pid> stays after
 * the task that slept in the threadlet has gone on and exited as a pool
 * thread.
 */
#include "safety.h"

static struct async_head_user ahu;
static u64 ring[8];
static struct threadlet_area main_area __attribute__((aligned(128)));
static struct threadlet_area thread_area __attribute__((aligned(128)));

struct parked {
	long reg, ret;
	int back;
};

static void on_alarm(int sig)
{
	(void)sig;
}

/* A pthread with its own area parks on @ahu by hand. */
static void *park_thread(void *arg)
{
	struct parked *p = arg;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	p->reg = syscall(__NR_threadlet_register, &thread_area, sizeof(thread_area), 0);
	if (p->reg)
		return NULL;
	p->ret = sf_park_home(&thread_area, NULL, &ahu);
	__atomic_store_n(&p->back, 1, __ATOMIC_RELEASE);
	syscall(__NR_threadlet_register, &thread_area, sizeof(thread_area),
		THREADLET_UNREGISTER);
	return NULL;
}

static void leader_park(void *arg)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct parked p = { 0 };
	pthread_t t;
	long ret;
	int i;

	(void)arg;
	sf_ok(sf_register_head(&ahu, ring, 8, 2) == 0, "raw async head, room for 2 threads");

	/* Control: the same parking from a pthread works. */
	sf_ok(pthread_create(&t, NULL, park_thread, &p) == 0, "start a pthread");
	for (i = 0; i < 5000 && async_head_parked(&ahu) != 1 &&
	     !__atomic_load_n(&p.back, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	sf_ok(p.reg == 0 && async_head_parked(&ahu) == 1,
	      "a pthread parks with async_thread(NULL, ahu) (register %ld, parked %ld)",
	      p.reg, async_head_parked(&ahu));
	sf_ok(sf_unregister_head(&ahu) == 0, "unregister the head");
	for (i = 0; i < 5000 && !__atomic_load_n(&p.back, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	sf_ok(p.back && p.ret == 0, "the pthread came home with 0 (%ld)", p.ret);
	pthread_join(t, NULL);

	/*
	 * The main thread. Should it park, SIGALRM ends the wait after 2 s
	 * (async_thread then comes back at the home frame with -EINTR).
	 */
	sf_ok(sf_register_head(&ahu, ring, 8, 2) == 0, "register the head again");
	sf_ok(syscall(__NR_threadlet_register, &main_area, sizeof(main_area), 0) == 0,
	      "main thread registers an area");
	sigaction(SIGALRM, &sa, NULL);
	alarm(2);
	ret = sf_park_home(&main_area, NULL, &ahu);
	alarm(0);
	sf_ok(ret == -EINVAL && getpid() == gettid(),
	      "async_thread() from the main thread: -EINVAL (%ld%s)", ret,
	      ret == -EINTR ? ": it parked" : "");
	sf_ok(async_head_parked(&ahu) == 0, "nothing parked");
	sf_ok(sf_unregister_head(&ahu) == 0, "unregister");
}

/* ---- a hand-off from the main thread ----------------------------------- */

static void leader_handoff(void *arg)
{
	struct threadlet_stats s0, s1;
	struct sf_block b;
	char path[64], proc[32] = "", want[32];
	pid_t pid = getpid();
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	int done;
	long ret;

	(void)arg;
	if (!stack || async_head_init(&ahu, 16, 2) || !sf_block_prepare(&b, &ahu)) {
		sf_ok(0, "hand-off from main: set-up");
		return;
	}
	sf_ok(pid == gettid(), "main thread is the leader (%d)", pid);
	ret = sf_block_run(&b, stack, &s0, &s1, &done);
	sf_ok(ret == 0 && s1.nr_handoffs == s0.nr_handoffs + 1 && done && b.n == 1,
	      "main thread's threadlet went async and completed (%ld)", ret);
	sf_ok(getpid() == pid && gettid() == pid,
	      "after the hand-off: getpid() == gettid() == %d", pid);
	sf_ok(b.tid_after != pid && b.tid_after > 0,
	      "the threadlet finished in a pool thread (%d)", b.tid_after);
	sf_block_finish(&b);
	tl_wait_parked(&ahu, 2);
	/* Every pool thread, the task that slept in the threadlet too, exits. */
	async_head_exit(&ahu);
	sf_ok(tl_nr_threads_settle(1) == 1, "pool threads gone");
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, pid);
	sf_ok(access(path, R_OK) == 0, "%s exists after the pool exited", path);
	snprintf(want, sizeof(want), "%d", pid);
	sf_ok(readlink("/proc/self", proc, sizeof(proc) - 1) > 0 && !strcmp(proc, want),
	      "/proc/self -> %s", proc);
	sf_ok(getpid() == gettid(), "still getpid() == gettid()");
	threadlet_stack_free(stack);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(leader_park, NULL, 60);
	sf_child_ok(status, "main thread parks");
	status = sf_child(leader_handoff, NULL, 60);
	sf_child_ok(status, "hand-off from main");
	return tl_exit();
}
