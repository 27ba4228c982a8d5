// SPDX-License-Identifier: GPL-2.0
/*
 * A syslet chain that went async, whose task's new area (a parked
 * spare's) another thread arms. async_exec() decides "still the head" by
 * comparing current->threadlet with the reg it read at entry (and keeps
 * that reg's karea pointer). Were a later atom's sleep handed off, the task
 * could get a reg at that address again: the very reg it started with (the
 * identity that took it parked and was claimed back, below), or a new reg
 * that kzalloc() placed where the first one was freed (the new head
 * unregistered it, unmapped its page, registered another area and parked).
 * async_exec() would then take the chain for one that ran in place: write
 * through the stale kernel pointer (after reuse, into a page that was
 * unpinned and may be freed) and return the final atom at the original
 * frame, which already returned NULL in the other task, posting nothing.
 * The kernel pins the rest of a chain that went async to its task
 * (THREADLET_FB_CALL).
 *
 * The deterministic form here: H's chain goes async at atom 0 (S0 takes
 * H's identity, async_exec() returns NULL there); H's task runs atom 1, a
 * pipe read. Meanwhile the new H parks itself. Main arms the area H's task
 * now carries (S0's), so atom 2's pipe read hands it off to the only
 * parked thread, the new H: H's task gets H's reg back.
 * Expected: no second hand-off (FB_CALL fallbacks counted in S0's area),
 * async_exec() returns once (NULL), the final atom is posted.
 */
#include "safety.h"

static struct async_head_user ahu;
static u64 ring[4];
static struct threadlet_area area_s0 __attribute__((aligned(128)));
static struct threadlet_area area_h __attribute__((aligned(128)));

static struct syslet_uatom at[4];
static long long at_ret[4];
static u64 a_fd, a_buf, a_one = 1;
static char rbuf[4];
static int pfd[2];

static volatile pid_t s0_tid;
static volatile int exec_returns, h_parked_call, resumed;
static volatile long exec_ret[4];

static void __attribute__((noreturn, used)) resume_fn(void)
{
	__atomic_store_n(&resumed, 1, __ATOMIC_RELEASE);
	for (;;)
		usleep(100000);
}

static void *s0_main(void *arg)
{
	(void)arg;
	s0_tid = syscall(SYS_gettid);
	if (syscall(__NR_threadlet_register, &area_s0, sizeof(area_s0), 0))
		return NULL;
	sf_park_home(&area_s0, NULL, &ahu);
	for (;;)
		usleep(100000);
}

static void atom(int i, unsigned int flags, unsigned int nr, int nargs)
{
	memset(&at[i], 0, sizeof(at[i]));
	at[i].flags = flags;
	at[i].nr = nr;
	at[i].ret_ptr = (uintptr_t)&at_ret[i];
	if (nargs) {
		at[i].arg_ptr[0] = (uintptr_t)&a_fd;
		at[i].arg_ptr[1] = (uintptr_t)&a_buf;
		at[i].arg_ptr[2] = (uintptr_t)&a_one;
	}
	if (i)
		at[i - 1].next = (uintptr_t)&at[i];
}

static void *h_main(void *arg)
{
	long r;
	int n;

	(void)arg;
	if (syscall(__NR_threadlet_register, &area_h, sizeof(area_h), 0))
		return NULL;
	a_fd = pfd[0];
	a_buf = (uintptr_t)rbuf;
	atom(0, SYSLET_ASYNC, SYS_getpid, 0);
	atom(1, 0, SYS_read, 3);
	atom(2, 0, SYS_read, 3);
	atom(3, SYSLET_SYNC, SYS_getpid, 0);
	r = syscall(__NR_async_exec, &at[0], &ahu);
	n = __atomic_fetch_add(&exec_returns, 1, __ATOMIC_ACQ_REL);
	if (n < 4)
		exec_ret[n] = r;
	if (n == 0 && r == 0) {
		/* The new H: park, so that H's task can claim its reg back. */
		__atomic_store_n(&h_parked_call, 1, __ATOMIC_RELEASE);
		sf_park_home(&area_h, NULL, &ahu);
	}
	for (;;)
		usleep(100000);
}

static void scenario(void *arg)
{
	pthread_t t0, th;
	char *stack;
	void *ev = NULL;

	(void)arg;
	if (pipe(pfd))
		return;
	sf_ok(sf_register_head(&ahu, ring, 4, 4) == 0, "async head, 4-slot ring");
	pthread_create(&t0, NULL, s0_main, NULL);
	sf_ok(tl_wait_parked(&ahu, 1), "S0 parked");

	pthread_create(&th, NULL, h_main, NULL);
	for (int i = 0; i < 3000 && !h_parked_call; i++)
		usleep(1000);
	sf_ok(h_parked_call && exec_ret[0] == 0, "the chain went async (async_exec %ld)",
	      exec_ret[0]);
	sf_ok(tl_wait_parked(&ahu, 1), "the new H parked");
	/* H's task (as S0) sleeps in atom 1's read. */
	for (int i = 0; i < 3000 && sf_task_state(s0_tid) != 'S'; i++)
		usleep(1000);

	/* Arm the area H's task carries now, then let atom 1 end. */
	stack = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	area_s0.ahu = (uintptr_t)&ahu;
	area_s0.head_ip = (uintptr_t)resume_fn;
	area_s0.head_sp = (uintptr_t)(stack + (1 << 16) - 8);
	__atomic_store_n(&area_s0.flags, THREADLET_ON, __ATOMIC_RELEASE);
	if (write(pfd[1], "a", 1) != 1)
		return;
	/* Atom 2's read sleeps: a hand-off to the parked new H. */
	for (int i = 0; i < 2000 && !resumed; i++)
		usleep(1000);
	tl_diag("second hand-off: %s", resumed ? "yes" : "no");
	__atomic_store_n(&area_s0.flags, 0, __ATOMIC_RELEASE);
	sf_ok(!resumed && area_s0.nr_fallbacks &&
	      area_s0.last_fallback == THREADLET_FB_CALL,
	      "the rest of the chain is not handed off (FB_CALL)");
	if (write(pfd[1], "b", 1) != 1)
		return;

	ev = sf_wait_event(&ahu, 2000);
	usleep(200000);
	sf_ok(exec_returns == 1,
	      "async_exec() returned once (%d times: %ld, %ld)", exec_returns,
	      exec_ret[0], exec_ret[1]);
	sf_ok(ev == &at[3], "the final atom was posted (%p, expected %p)", ev, (void *)&at[3]);
	sf_ok(sf_unregister_head(&ahu) == 0, "unregister the head");
	usleep(100000);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(scenario, NULL, 60);
	sf_child_ok(status, "a chain that got its first reg back");
	return tl_exit();
}
