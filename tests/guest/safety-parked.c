// SPDX-License-Identifier: GPL-2.0
/*
 * A parked thread never hands off, and never claims itself (finding 8).
 *
 * A thread's threadlet area is plain user memory: any thread of the
 * process can write THREADLET_ON, an async head and a resume frame into
 * the area of a thread that is inside async_thread(). When that thread
 * then sleeps, the scheduler hook must not treat it as a threadlet whose
 * head can be handed off: it is on the head's parked list itself, and
 * would claim itself as its own spare. It must sleep on without touching
 * its area at all: a hand-off may swap the area of a parked thread and
 * free it while that thread is in the hook, so the hook must not count a
 * fallback there either (it once counted THREADLET_FB_PARKED).
 *
 * The sleeps are made deterministic with a full ring: X calls
 * async_thread(event, ahu) on a head whose only ring slot is taken, so it
 * sleeps in the kernel waiting for room (its area not armed yet). Then the
 * main thread arms X's area, with X's own home frame as the head's resume
 * frame, so a wrong hand-off brings X back home with 0 as if the head had
 * ended. Then it frees the slot: X posts its event and parks, and goes to
 * sleep parked, with its area armed. It is the only thread parked there.
 */
#include "safety.h"

static struct async_head_user ahu;
static u64 ring[1];
static struct threadlet_area x_area __attribute__((aligned(128)));

struct parker {
	pid_t tid;
	long reg;
	long ret;
	int back;		/* X came back from async_thread() */
	int head_gone;		/* set before the head is unregistered */
	int back_too_early;	/* X came back before that */
};

static void *parker_main(void *arg)
{
	struct parker *p = arg;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	p->tid = gettid();
	p->reg = syscall(__NR_threadlet_register, &x_area, sizeof(x_area), 0);
	if (p->reg)
		return NULL;
	p->ret = sf_park_home(&x_area, (void *)0x5555, &ahu);
	p->back_too_early = !__atomic_load_n(&p->head_gone, __ATOMIC_ACQUIRE);
	__atomic_store_n(&p->back, 1, __ATOMIC_RELEASE);
	/* Disarm before anything can sleep, then drop the area. */
	__atomic_store_n(&x_area.flags, 0, __ATOMIC_RELEASE);
	syscall(__NR_threadlet_register, &x_area, sizeof(x_area), THREADLET_UNREGISTER);
	return NULL;
}

static void parked_armed(void *arg)
{
	struct parker p = { 0 };
	u64 fallbacks;
	pthread_t t;
	char state = 0;
	int i;

	(void)arg;
	ring[0] = 0xf011;		/* the only slot is taken */
	sf_ok(sf_register_head(&ahu, ring, 1, 2) == 0, "async head, 1-slot ring, full");
	sf_ok(pthread_create(&t, NULL, parker_main, &p) == 0, "start X");

	/* X waits for room in the ring, inside async_thread(). */
	for (i = 0; i < 10000; i++) {
		state = p.tid ? sf_task_state(p.tid) : 0;
		if ((__atomic_load_n(&ahu.flags, __ATOMIC_ACQUIRE) & ASYNC_HEAD_RING_WAITERS) &&
		    (state == 'D' || state == 'S'))
			break;
		if (__atomic_load_n(&p.back, __ATOMIC_ACQUIRE))
			break;
		usleep(1000);
	}
	sf_ok(p.reg == 0 && !p.back && (ahu.flags & ASYNC_HEAD_RING_WAITERS),
	      "X sleeps in async_thread() waiting for ring space (state %c)", state ? state : '?');

	/* Arm X's area from this thread: THREADLET_ON, the head, a frame. */
	x_area.ahu = (uintptr_t)&ahu;
	x_area.head_ip = x_area.home_ip;
	x_area.head_sp = x_area.home_sp;
	__atomic_store_n(&x_area.flags, THREADLET_ON, __ATOMIC_RELEASE);

	/* Its next wait for space (every 100 ms) is a sleep with the area armed. */
	for (i = 0; i < 3000 && !x_area.nr_fallbacks && !x_area.nr_handoffs; i++)
		usleep(1000);
	tl_diag("while posting: %llu fallbacks (last reason %u), %llu hand-offs",
		x_area.nr_fallbacks, x_area.last_fallback, x_area.nr_handoffs);

	/* Room: X posts its event and parks, armed. */
	ring[0] = 0;
	syscall(__NR_async_wait, 0UL, 0UL, &ahu);
	for (i = 0; i < 5000; i++) {
		if (__atomic_load_n(&p.back, __ATOMIC_ACQUIRE))
			break;
		if (async_head_parked(&ahu) == 1 && sf_task_state(p.tid) == 'S')
			break;
		usleep(1000);
	}
	fallbacks = x_area.nr_fallbacks;
	usleep(100000);
	state = sf_task_state(p.tid);
	sf_ok(ring[0] == 0x5555 && ahu.kernel_ring_idx == 1,
	      "X posted its event (slot %#llx, index %llu)", ring[0], ahu.kernel_ring_idx);
	sf_ok(x_area.nr_handoffs == 0 && !p.back,
	      "X never handed off (hand-offs %llu, came back %s with %ld)",
	      x_area.nr_handoffs, p.back ? "yes" : "no", p.ret);
	sf_ok(state == 'S' && async_head_parked(&ahu) == 1 &&
	      x_area.nr_fallbacks == fallbacks && x_area.last_fallback != THREADLET_FB_PARKED,
	      "X sleeps parked, armed, and its sleep did not touch its area (state %c, %llu more fallbacks, last reason %u)",
	      state ? state : '?', x_area.nr_fallbacks - fallbacks, x_area.last_fallback);
	tl_diag("parked on the head: %ld", async_head_parked(&ahu));

	/* The end of the head sends X home. */
	__atomic_store_n(&p.head_gone, 1, __ATOMIC_RELEASE);
	sf_ok(sf_unregister_head(&ahu) == 0, "unregister the head");
	for (i = 0; i < 5000 && !__atomic_load_n(&p.back, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	sf_ok(p.back && !p.back_too_early, "X came home when the head ended (%ld)", p.ret);
	if (p.back)
		pthread_join(t, NULL);
	sf_ok(tl_nr_threads_settle(1) == 1, "no thread left behind");
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(parked_armed, NULL, 60);
	sf_child_ok(status, "armed parked thread");
	return tl_exit();
}
