// SPDX-License-Identifier: GPL-2.0
/*
 * An area armed by another thread while its own thread waits inside a
 * threadlet system call for ring space, to post the syslet completion its
 * identity holds (a completer that a signal sent home while the ring was
 * full). Any thread can set THREADLET_ON in any area. The kernel pins such
 * a wait to its task (THREADLET_FB_CALL); were it handed off, the identity
 * and the reg with the held completion would move to a parked spare S1,
 * resuming at s1_resume(), while the call went on with the reg it read:
 *
 *  - "unregister": threadlet_register(UNREGISTER) would then free the reg
 *    S1 carries (a use-after-free at its next sleep, a double free at its
 *    exit) and leak the caller's new one (a pinned page, locked_vm);
 *  - "async_thread": async_thread(), the call that parks it again, and S1,
 *    which unregisters that identity's area, would both post the held
 *    completion and both drop its head reference (refcount_t "underflow;
 *    use-after-free" at exit).
 *
 * Steps, the same for both:
 *  1. S0 parks on a head whose one-slot ring is full.
 *  2. H runs a one-atom SYSLET_ASYNC chain: S0 takes H's identity, H (as S0)
 *     runs the atom and waits to post; a signal sends it home at S0's home
 *     frame holding the completion.
 *  3. There (still as S0) it makes the call, which waits for ring space.
 *     S1 parks.
 *  4. Main arms the area of the waiting thread: THREADLET_ON, the head, a
 *     resume frame (s1_resume()).
 *  5. Main frees the slot; the call posts.
 * Expected: no hand-off (its sleeps count FB_CALL fallbacks), the final
 * atom posted once, the unregister returning 0. Before the fix, the first
 * case freed S1's area and the second posted twice.
 */
#include "safety.h"

enum { UNREGISTER, ASYNC_THREAD };
static const char *const call_name[] = { "unregister", "async_thread" };

static struct async_head_user ahu;
static u64 ring[1];
static struct threadlet_area area_s0 __attribute__((aligned(128)));
static struct threadlet_area area_s1 __attribute__((aligned(128)));
static struct threadlet_area area_h __attribute__((aligned(128)));

static struct syslet_uatom atom;
static long long atom_ret;

static int call;
static volatile pid_t s0_tid;
static volatile long s0_park_ret = 1, exec_ret = 1, unreg_ret = 1;
static volatile int exec_back, held_home, in_call, unreg_done, unreg_errno;
static volatile int s1_resumed, s1_alive;

static void on_usr1(int sig)
{
	(void)sig;
}

/* Unregisters S0's identity's area, recording the result. */
static void unregister_s0(void)
{
	long r = syscall(__NR_threadlet_register, &area_s0, sizeof(area_s0),
			 THREADLET_UNREGISTER);

	unreg_errno = r ? errno : 0;
	unreg_ret = r;
	__atomic_store_n(&unreg_done, 1, __ATOMIC_RELEASE);
}

/*
 * The frame S1 would resume at, as S0's identity. It unregisters that
 * identity's area, as a program might (the second case's double post),
 * or, in the first case, sleeps (the use-after-free). Never returns.
 */
static void __attribute__((noreturn, used)) s1_resume(void)
{
	__atomic_store_n(&s1_resumed, 1, __ATOMIC_RELEASE);
	if (call == ASYNC_THREAD)
		unregister_s0();
	usleep(20000);			/* the hook reads this task's area */
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
	__atomic_store_n(&in_call, 1, __ATOMIC_RELEASE);
	if (call == UNREGISTER)
		unregister_s0();
	else	/* park again: async_thread() posts the held completion first */
		sf_park_home(&area_s0, NULL, &ahu);
	for (;;)		/* never return: this stack is S0's, the TLS not */
		usleep(100000);
}

static void *s1_main(void *arg)
{
	(void)arg;
	if (!syscall(__NR_threadlet_register, &area_s1, sizeof(area_s1), 0))
		sf_park_home(&area_s1, NULL, &ahu);
	return NULL;
}

static void *h_main(void *arg)
{
	(void)arg;
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
	const char *name;
	pthread_t t0, t1, th;
	char *stack;
	int handed;

	call = (int)(intptr_t)arg;
	name = call_name[call];
	sigaction(SIGUSR1, &sa, NULL);
	ring[0] = 0xf011;			/* the only slot is taken */
	sf_ok(sf_register_head(&ahu, ring, 1, 4) == 0, "%s: async head, 1-slot ring, full", name);

	pthread_create(&t0, NULL, s0_main, NULL);
	sf_ok(tl_wait_parked(&ahu, 1), "%s: S0 parked", name);

	pthread_create(&th, NULL, h_main, NULL);
	sf_ok(wait_flag(&exec_back, 3000) && exec_ret == 0,
	      "%s: H's SYSLET_ASYNC chain went async (async_exec %ld)", name, exec_ret);
	/* H's task, as S0, waits to post the final atom. */
	sf_ok(wait_ring_waiter(s0_tid, 3000), "%s: the completer waits for ring space", name);
	syscall(SYS_tgkill, getpid(), s0_tid, SIGUSR1);
	sf_ok(wait_flag(&held_home, 3000),
	      "%s: a signal sent the completer home holding its completion (%ld)", name,
	      s0_park_ret);
	if (!held_home)
		return;

	pthread_create(&t1, NULL, s1_main, NULL);
	sf_ok(tl_wait_parked(&ahu, 1), "%s: S1 parked", name);
	sf_ok(wait_flag(&in_call, 3000) && wait_ring_waiter(s0_tid, 3000),
	      "%s: the call waits to post the held completion", name);

	/* Arm the area of the waiting thread, from this thread. */
	stack = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	area_s0.ahu = (uintptr_t)&ahu;
	area_s0.head_ip = (uintptr_t)s1_resume;
	area_s0.head_sp = (uintptr_t)(stack + (1 << 16) - 8);
	__atomic_store_n(&area_s0.flags, THREADLET_ON, __ATOMIC_RELEASE);

	handed = wait_flag(&s1_resumed, 2000);
	tl_diag("%s: hand-off inside the call: %s (area: %llu hand-offs, %llu fallbacks, last %u)",
		name, handed ? "yes" : "no", area_s0.nr_handoffs, area_s0.nr_fallbacks,
		area_s0.last_fallback);
	__atomic_store_n(&area_s0.flags, 0, __ATOMIC_RELEASE);
	sf_ok(!handed && area_s0.nr_fallbacks &&
	      area_s0.last_fallback == THREADLET_FB_CALL,
	      "%s: the call's wait is not handed off (FB_CALL)", name);
	if (handed)
		usleep(200000);		/* S1's unregister waits for post_lock */

	/* Room for one completion: the held one is posted. */
	ring[0] = 0;
	syscall(__NR_async_wait, 0UL, 0UL, &ahu);
	for (int i = 0; i < 3000 && !ring[0]; i++)
		usleep(1000);
	sf_ok(ring[0] == (uintptr_t)&atom, "%s: the chain's final atom was posted (slot %#llx)",
	      name, ring[0]);
	/* Consume it, as a program would, and make room again. */
	ring[0] = 0;
	ahu.user_ring_idx = 1;
	syscall(__NR_async_wait, 0UL, 1UL, &ahu);
	if (handed || call == UNREGISTER)
		wait_flag(&unreg_done, 3000);
	usleep(300000);
	sf_ok(ahu.kernel_ring_idx == 1 && ring[0] == 0,
	      "%s: posted once (kernel_ring_idx %llu, slot %#llx)", name,
	      ahu.kernel_ring_idx, ring[0]);
	if (call == UNREGISTER)
		sf_ok(unreg_done && unreg_ret == 0, "%s: the unregister returned 0 (errno %d)",
		      name, unreg_errno);
	if (handed)
		sf_ok(wait_flag(&s1_alive, 3000), "%s: the task that took the area can sleep", name);

	/* End the head (the parked thread goes home), then exit_group. */
	sf_ok(sf_unregister_head(&ahu) == 0, "%s: unregister the head", name);
	usleep(100000);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(scenario, (void *)(intptr_t)UNREGISTER, 60);
	sf_child_ok(status, "held completion, area armed during threadlet_register(UNREGISTER)");
	status = sf_child(scenario, (void *)(intptr_t)ASYNC_THREAD, 60);
	sf_child_ok(status, "held completion, area armed during async_thread()");
	return tl_exit();
}
