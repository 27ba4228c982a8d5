// SPDX-License-Identifier: GPL-2.0
/*
 * An area armed by another thread while its own thread waits inside
 * async_thread() for ring space, to post the completion its identity
 * holds (async_post_held()). Were that wait handed off, the identity, and
 * the reg with the held completion, would move to a parked spare S1; S1,
 * resuming as that identity, unregisters its area, which posts the same
 * held completion while the first post is under way: the event twice in
 * the ring, the head's reference dropped twice (refcount_t "underflow;
 * use-after-free" at exit). The kernel pins async_thread()'s waits before
 * the park to the task (THREADLET_FB_CALL).
 *
 * Expected: no hand-off inside async_thread() (FB_CALL fallbacks counted),
 * the chain's final atom posted once (kernel_ring_idx 1), nothing in the
 * kernel log.
 */
#include "safety.h"

static struct async_head_user ahu;
static u64 ring[1];
static struct threadlet_area area_s0 __attribute__((aligned(128)));
static struct threadlet_area area_s1 __attribute__((aligned(128)));
static struct threadlet_area area_h __attribute__((aligned(128)));

static struct syslet_uatom atom;
static long long atom_ret;

static volatile pid_t s0_tid, s1_tid, h_tid;
static volatile long s0_park_ret = 1, s1_park_ret = 1;
static volatile long exec_ret = 1;
static volatile int exec_back, held_home, in_unreg, unreg_done;
static volatile long unreg_ret = 1;
static volatile int unreg_errno;
static volatile int s1_resumed, s1_go_sleep, s1_alive;
static volatile pid_t s1_resume_tid;
static volatile int got_usr1;
static volatile long athread_ret = 1;
static volatile int athread_back;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1 = 1;
}

/* The frame S1 resumes at, as S0's identity. Never returns. */
static void __attribute__((noreturn, used)) s1_resume(void)
{
	long r;

	s1_resume_tid = syscall(SYS_gettid);
	__atomic_store_n(&s1_resumed, 1, __ATOMIC_RELEASE);
	/* This identity's area, with the completion still recorded in it. */
	r = syscall(__NR_threadlet_register, &area_s0, sizeof(area_s0),
		    THREADLET_UNREGISTER);
	unreg_errno = r ? errno : 0;
	unreg_ret = r;
	__atomic_store_n(&unreg_done, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&s1_alive, 1, __ATOMIC_RELEASE);
	for (;;)
		usleep(100000);
}

static void *s0_main(void *arg)
{
	long r;

	(void)arg;
	s0_tid = syscall(SYS_gettid);
	if (syscall(__NR_threadlet_register, &area_s0, sizeof(area_s0), 0))
		return NULL;
	r = sf_park_home(&area_s0, NULL, &ahu);
	/*
	 * Here: H's task, carrying S0's identity, home with the completion
	 * it could not post (-EINTR), or an error before parking.
	 */
	s0_park_ret = r;
	if (r != -EINTR)
		return NULL;
	__atomic_store_n(&held_home, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&ahu.flags, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&in_unreg, 1, __ATOMIC_RELEASE);
	/* Park again: async_thread() posts the held completion first. */
	r = sf_park_home(&area_s0, NULL, &ahu);
	athread_ret = r;
	__atomic_store_n(&athread_back, 1, __ATOMIC_RELEASE);
	for (;;)		/* never return: this stack is S0's, the TLS not */
		usleep(100000);
}

static void *s1_main(void *arg)
{
	(void)arg;
	s1_tid = syscall(SYS_gettid);
	if (syscall(__NR_threadlet_register, &area_s1, sizeof(area_s1), 0))
		return NULL;
	s1_park_ret = sf_park_home(&area_s1, NULL, &ahu);
	return NULL;
}

static void *h_main(void *arg)
{
	(void)arg;
	h_tid = syscall(SYS_gettid);
	if (syscall(__NR_threadlet_register, &area_h, sizeof(area_h), 0))
		return NULL;
	memset(&atom, 0, sizeof(atom));
	atom.flags = SYSLET_ASYNC;
	atom.nr = SYS_getpid;
	atom.ret_ptr = (uintptr_t)&atom_ret;
	exec_ret = syscall(__NR_async_exec, &atom, &ahu);
	/* On S0's task now, as H: it went async (0). */
	__atomic_store_n(&exec_back, 1, __ATOMIC_RELEASE);
	for (;;)
		usleep(100000);
}

static int wait_flag(volatile int *f, int ms)
{
	for (int i = 0; i < ms && !__atomic_load_n(f, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	return __atomic_load_n(f, __ATOMIC_ACQUIRE);
}

static int wait_ring_waiter(pid_t tid, int ms)
{
	for (int i = 0; i < ms; i++) {
		char st = sf_task_state(tid);

		if ((__atomic_load_n(&ahu.flags, __ATOMIC_ACQUIRE) & ASYNC_HEAD_RING_WAITERS) &&
		    (st == 'S' || st == 'D'))
			return 1;
		usleep(1000);
	}
	return 0;
}

static void scenario(void *arg)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pthread_t t0, t1, th;
	char *stack;
	int handed;

	(void)arg;
	sigaction(SIGUSR1, &sa, NULL);
	ring[0] = 0xf011;			/* the only slot is taken */
	sf_ok(sf_register_head(&ahu, ring, 1, 4) == 0, "async head, 1-slot ring, full");

	pthread_create(&t0, NULL, s0_main, NULL);
	sf_ok(tl_wait_parked(&ahu, 1), "S0 parked");

	pthread_create(&th, NULL, h_main, NULL);
	sf_ok(wait_flag(&exec_back, 3000) && exec_ret == 0,
	      "H's SYSLET_ASYNC chain went async (async_exec %ld)", exec_ret);
	/* H's task, as S0, waits to post the final atom. */
	sf_ok(wait_ring_waiter(s0_tid, 3000), "the completer waits for ring space");
	syscall(SYS_tgkill, getpid(), s0_tid, SIGUSR1);
	sf_ok(wait_flag(&held_home, 3000),
	      "a signal sent the completer home holding its completion (%ld)", s0_park_ret);
	if (!held_home)
		return;

	pthread_create(&t1, NULL, s1_main, NULL);
	sf_ok(tl_wait_parked(&ahu, 1), "S1 parked");
	sf_ok(wait_flag(&in_unreg, 3000) && wait_ring_waiter(s0_tid, 3000),
	      "async_thread() waits to post the held completion");

	/* Arm the area of the thread inside async_thread(), from this thread. */
	stack = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	area_s0.ahu = (uintptr_t)&ahu;
	area_s0.head_ip = (uintptr_t)s1_resume;
	area_s0.head_sp = (uintptr_t)(stack + (1 << 16) - 8);
	__atomic_store_n(&area_s0.flags, THREADLET_ON, __ATOMIC_RELEASE);

	handed = wait_flag(&s1_resumed, 2000);
	tl_diag("hand-off inside async_thread(): %s (area: %llu hand-offs, %llu fallbacks, last %u)",
		handed ? "yes" : "no", area_s0.nr_handoffs, area_s0.nr_fallbacks,
		area_s0.last_fallback);
	__atomic_store_n(&area_s0.flags, 0, __ATOMIC_RELEASE);
	sf_ok(!handed && area_s0.nr_fallbacks &&
	      area_s0.last_fallback == THREADLET_FB_CALL,
	      "async_thread()'s wait is not handed off (FB_CALL)");
	if (handed)
		usleep(200000);		/* S1's unregister waits for post_lock */

	/* Room for one completion: the first post goes through. */
	ring[0] = 0;
	syscall(__NR_async_wait, 0UL, 0UL, &ahu);
	for (int i = 0; i < 3000 && !ring[0]; i++)
		usleep(1000);
	sf_ok(ring[0] == (uintptr_t)&atom, "the chain's final atom was posted (slot %#llx)", ring[0]);
	/* Consume it, as a program would, and make room again. */
	ring[0] = 0;
	ahu.user_ring_idx = 1;
	syscall(__NR_async_wait, 0UL, 1UL, &ahu);
	if (handed)
		wait_flag(&unreg_done, 3000);
	usleep(300000);
	sf_ok(ahu.kernel_ring_idx == 1 && ring[0] == 0,
	      "posted once (kernel_ring_idx %llu, slot %#llx; S1's unregister %ld errno %d)",
	      ahu.kernel_ring_idx, ring[0], unreg_ret, unreg_errno);

	/* End the head (the parked thread goes home), then exit_group. */
	sf_ok(sf_unregister_head(&ahu) == 0, "unregister the head");
	usleep(100000);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(scenario, NULL, 60);
	sf_child_ok(status, "held completion moved during async_thread()");
	return tl_exit();
}
