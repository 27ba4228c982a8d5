// SPDX-License-Identifier: GPL-2.0
/*
 * A cache-miss thread sent home to a home frame that user space broke.
 * async_go_home() has no frame to return to then: the thread's registers
 * are still those of the call it parked from, and for a syslet chain that
 * went async that is the old head's async_exec() frame, which the head
 * already returned from in another task. A catchable SIGSEGV whose
 * handler returns would resume that frame a second time, on the head's
 * stack, with the spare's TID. The signal must be fatal.
 *
 * H's chain goes async at atom 0 (S0 takes H's identity), H's task (now
 * with S0's identity) sleeps in atom 1's pipe read; main breaks S0's home
 * frame, unregisters the head and lets the read end. The chain ends with
 * no head: its task goes home, to the broken frame.
 * Expected: the process dies of SIGSEGV with its handler never run, and
 * async_exec() returned once.
 */
#include "safety.h"

struct shared {
	int exec_returns, handled;
	pid_t h_tid, s0_tid, ret_tid[4];
	long ret[4];
};

static struct shared *sh;
static struct async_head_user ahu;
static u64 ring[4];
static struct threadlet_area area_s0 __attribute__((aligned(128)));
static struct threadlet_area area_h __attribute__((aligned(128)));
static struct syslet_uatom at[3];
static long long at_ret[3];
static u64 a_fd, a_buf, a_one = 1;
static char rbuf[4];
static int pfd[2];

static void on_segv(int sig)
{
	(void)sig;
	__atomic_add_fetch(&sh->handled, 1, __ATOMIC_SEQ_CST);
}

static void *s0_main(void *arg)
{
	(void)arg;
	sh->s0_tid = syscall(SYS_gettid);
	if (syscall(__NR_threadlet_register, &area_s0, sizeof(area_s0), 0))
		return NULL;
	sf_park_home(&area_s0, NULL, &ahu);
	for (;;)
		usleep(100000);
}

static void *h_main(void *arg)
{
	long r;
	int n;

	(void)arg;
	sh->h_tid = syscall(SYS_gettid);
	if (syscall(__NR_threadlet_register, &area_h, sizeof(area_h), 0))
		return NULL;
	a_fd = pfd[0];
	a_buf = (uintptr_t)rbuf;
	for (int i = 0; i < 3; i++) {
		at[i].nr = SYS_getpid;
		at[i].ret_ptr = (uintptr_t)&at_ret[i];
		if (i)
			at[i - 1].next = (uintptr_t)&at[i];
	}
	at[0].flags = SYSLET_ASYNC;
	at[1].nr = SYS_read;
	at[1].arg_ptr[0] = (uintptr_t)&a_fd;
	at[1].arg_ptr[1] = (uintptr_t)&a_buf;
	at[1].arg_ptr[2] = (uintptr_t)&a_one;
	r = syscall(__NR_async_exec, &at[0], &ahu);
	n = __atomic_fetch_add(&sh->exec_returns, 1, __ATOMIC_SEQ_CST);
	if (n < 4) {
		sh->ret[n] = r;
		sh->ret_tid[n] = syscall(SYS_gettid);
	}
	for (;;)
		usleep(100000);
}

static void scenario(void *arg)
{
	pthread_t t0, th;

	(void)arg;
	signal(SIGSEGV, on_segv);
	if (pipe(pfd))
		return;
	sf_ok(sf_register_head(&ahu, ring, 4, 4) == 0, "async head, 4-slot ring");
	pthread_create(&t0, NULL, s0_main, NULL);
	sf_ok(tl_wait_parked(&ahu, 1), "S0 parked");
	pthread_create(&th, NULL, h_main, NULL);
	for (int i = 0; i < 3000 && !__atomic_load_n(&sh->exec_returns, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	sf_ok(sh->exec_returns == 1 && sh->ret[0] == 0, "the chain went async (async_exec %ld)",
	      sh->ret[0]);
	/* H's task, as S0, sleeps in atom 1's read. */
	for (int i = 0; i < 3000 && sf_task_state(sh->s0_tid) != 'S'; i++)
		usleep(1000);

	area_s0.home_ip = 0;
	area_s0.home_sp = 0;
	sf_ok(sf_unregister_head(&ahu) == 0, "unregister the head");
	if (write(pfd[1], "a", 1) != 1)
		return;
	/* The chain's task goes home now: this process should be ending. */
	usleep(2000000);
	tl_diag("still alive: async_exec returned %d times, handler ran %d times",
		sh->exec_returns, sh->handled);
}

int main(void)
{
	int status;

	sf_init();
	sh = sf_shared(sizeof(*sh));
	status = sf_child(scenario, NULL, 60);
	tl_diag("child: %s; async_exec returned %d times (tids %d, %d; H %d, S0 %d), handler %d",
		sf_status_str(status), sh->exec_returns, sh->ret_tid[0], sh->ret_tid[1],
		sh->h_tid, sh->s0_tid, sh->handled);
	sf_ok(status != SF_TIMEOUT && WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
	      "a thread sent to a broken home frame kills its process with SIGSEGV");
	sf_ok(sh->handled == 0, "the SIGSEGV handler did not run (%d)", sh->handled);
	sf_ok(sh->exec_returns == 1, "async_exec() returned once (%d)", sh->exec_returns);
	return tl_exit();
}
