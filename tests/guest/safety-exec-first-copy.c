// SPDX-License-Identifier: GPL-2.0
/*
 * async_exec() must not be handed off before its chain starts.
 *
 * async_exec() reads current->threadlet into a local (reg, and ka = its
 * kernel view of the area), checks that the area is not armed, and only
 * then copies the first atom from user memory. That copy can fault and
 * sleep. Any thread of the process can arm the area meanwhile (flags,
 * ahu, head_ip/head_sp are plain user memory). The kernel pins that sleep
 * to the task (THREADLET_FB_CALL) until async_exec() arms the area
 * itself. Before the fix, the scheduler hook handed the caller off to a
 * parked spare S at that sleep: S's task ran at head_ip with H's identity
 * and H's reg, while H's task went on in async_exec() with the stale
 * locals: it writes ka->ahu and THREADLET_ON into the area S's task
 * now owns, sets reg->syslet = true and reg->frame = &frame (its own
 * kernel stack) in S's reg, runs the chain as S, posts and parks. From
 * then on every sleep of S's task with that area armed is taken for a
 * syslet hand-off and copies *reg->frame, a dead frame on another task's
 * kernel stack, into the claimed spare's user pt_regs
 * (threadlet_handoff(): "*task_pt_regs(spare) = *reg->frame"), and pins
 * the task (FB_CALL) for good.
 *
 * Deterministic sleeps without userfaultfd (not in the test kernels): the
 * first atom straddles two pages mapped from two files of the ext4 test
 * disk, evicted from the page cache before each call, so the copy takes
 * two page faults that each wait for disk I/O. The main thread arms H's
 * area while H is inside the call (seen asleep in /proc, or after a delay
 * swept over the call's duration): an arming that lands between the
 * "not armed" check and the second fault's sleep meets a sleep of the
 * copy. A late arming is harmless (H spins without sleeping until it has
 * cleared the flag); an early one is -EBUSY.
 *
 * Expected: no hand-off (S never resumes at head_ip, the area counts no
 * hand-off); sleeps with the area armed are counted as FB_CALL fallbacks.
 * Should S's task resume as H, the test keeps that task from sleeping
 * until H's task has posted (and so re-armed the area for the last time),
 * and disarms it, so that the stale frame is never used.
 */
#include <sched.h>
#include <sys/stat.h>
#include "safety.h"

#define PG		4096
#define SPLIT		40	/* bytes of the atom in the first page */
#define ITERS		400
#define SECS		20

static struct async_head_user ahu;
static u64 ring[16];
static struct threadlet_area area_s __attribute__((aligned(128)));
static struct threadlet_area area_h __attribute__((aligned(128)));

static long long atom_ret;
static char path_a[64], path_b[64];

static volatile pid_t h_tid;
static int h_ready, go = -1, armed = -1, h_done = -1, stop;
static long h_busy, h_inplace, h_other, h_notevicted, h_calls;
static long long h_dur_ns = 200000;	/* last call's duration */
static int resumed, cleaned;
static pid_t resume_tid;

static inline void cpu_pause(void)
{
	__asm__ volatile("rep; nop" ::: "memory");
}

/*
 * The head's resume point, in S's task after a hand-off inside
 * async_exec(). This task now carries H's reg, which H's task re-arms
 * (THREADLET_ON, reg->syslet) until it has run the chain and posted: no
 * sleep until the post is seen, then disarm for good.
 */
static void __attribute__((noreturn, used)) resume_fn(void)
{
	long long t0 = tl_now_ns();

	resume_tid = syscall(SYS_gettid);
	__atomic_store_n(&resumed, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&ahu.kernel_ring_idx, __ATOMIC_ACQUIRE)) {
		if (tl_now_ns() - t0 > 10000000000LL)
			for (;;)	/* never posted: never sleep armed */
				cpu_pause();
		cpu_pause();
	}
	__atomic_store_n(&area_h.flags, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&cleaned, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
}

static void *s_main(void *arg)
{
	(void)arg;
	if (syscall(__NR_threadlet_register, &area_s, sizeof(area_s), 0))
		return NULL;
	sf_park_home(&area_s, NULL, &ahu);
	for (;;)
		usleep(100000);
}

/* Two pages, from file A and file B; NULL on failure. */
static char *map_atom(int fda, int fdb)
{
	char *p = mmap(NULL, 2 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (mmap(p, PG, PROT_READ, MAP_SHARED | MAP_FIXED, fda, 0) == MAP_FAILED ||
	    mmap(p + PG, PG, PROT_READ, MAP_SHARED | MAP_FIXED, fdb, 0) == MAP_FAILED) {
		munmap(p, 2 * PG);
		return NULL;
	}
	return p;
}

static int resident(char *p)
{
	unsigned char vec[2] = { 1, 1 };

	if (mincore(p, 2 * PG, vec))
		return 1;
	return (vec[0] & 1) || (vec[1] & 1);
}

/* Both pages out of the page cache, then mapped again. */
static char *fresh_atom(int fda, int fdb)
{
	char *p;

	posix_fadvise(fda, 0, 0, POSIX_FADV_DONTNEED);
	posix_fadvise(fdb, 0, 0, POSIX_FADV_DONTNEED);
	p = map_atom(fda, fdb);
	if (p && resident(p)) {
		munmap(p, 2 * PG);
		tl_drop_caches();
		p = map_atom(fda, fdb);
		if (p && resident(p))
			h_notevicted++;
	}
	return p;
}

static void *h_main(void *arg)
{
	int fda, fdb;

	(void)arg;
	h_tid = syscall(SYS_gettid);
	fda = open(path_a, O_RDONLY);
	fdb = open(path_b, O_RDONLY);
	if (fda < 0 || fdb < 0 ||
	    syscall(__NR_threadlet_register, &area_h, sizeof(area_h), 0))
		return NULL;
	__atomic_store_n(&h_ready, 1, __ATOMIC_RELEASE);

	for (int i = 0; i < ITERS && !__atomic_load_n(&stop, __ATOMIC_ACQUIRE); i++) {
		char *p = fresh_atom(fda, fdb);
		long long t0, t1;
		long r;

		if (!p)
			break;
		t0 = tl_now_ns();
		__atomic_store_n(&go, i, __ATOMIC_RELEASE);
		r = syscall(__NR_async_exec, p + PG - SPLIT, &ahu);
		t1 = tl_now_ns();
		/* Here only if not handed off. */
		__atomic_store_n(&h_done, i, __ATOMIC_RELEASE);
		h_calls++;
		if (r == -1 && errno == EBUSY)
			h_busy++;
		else if (r == (long)(uintptr_t)(p + PG - SPLIT))
			h_inplace++, h_dur_ns = t1 - t0;
		else
			h_other++;
		/* No sleep until the arming of this call is over and undone. */
		while (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) != i &&
		       !__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
			sched_yield();
		__atomic_store_n(&area_h.flags, 0, __ATOMIC_RELEASE);
		munmap(p, 2 * PG);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	close(fda);
	close(fdb);
	return NULL;
}

static int write_file(const char *path, const char *buf)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int ok = fd >= 0 && write(fd, buf, PG) == PG && !fsync(fd);

	if (fd >= 0)
		close(fd);
	return ok;
}

/* H's state letter, from a /proc stat file kept open. */
static char state_of(int fd)
{
	char buf[512], *p;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static void scenario(void *arg)
{
	struct syslet_uatom atom;
	char a[PG], b[PG], spath[64];
	pthread_t ts, th;
	long long t_end;
	char *stack;
	int sfd, armed_inside = 0;

	(void)arg;
	atom_ret = -1;		/* its page present: the chain's store never faults */
	memset(&atom, 0, sizeof(atom));
	atom.nr = SYS_getpid;
	atom.ret_ptr = (uintptr_t)&atom_ret;
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	memcpy(a + PG - SPLIT, &atom, SPLIT);
	memcpy(b, (char *)&atom + SPLIT, sizeof(atom) - SPLIT);
	snprintf(path_a, sizeof(path_a), "/mnt/disk/tl-exec-copy-a.%d", getpid());
	snprintf(path_b, sizeof(path_b), "/mnt/disk/tl-exec-copy-b.%d", getpid());
	if (!write_file(path_a, a) || !write_file(path_b, b)) {
		sf_skip("no writable ext4 disk at /mnt/disk");
		return;
	}

	sf_ok(sf_register_head(&ahu, ring, 16, 4) == 0, "async head, 16-slot ring");
	pthread_create(&ts, NULL, s_main, NULL);
	sf_ok(tl_wait_parked(&ahu, 1), "S parked");

	/* H's area, ready to arm: head, resume frame (a stack of its own). */
	stack = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	memset(stack, 0, 1 << 16);	/* no fault on it in resume_fn() */
	area_h.ahu = (uintptr_t)&ahu;
	area_h.head_ip = (uintptr_t)resume_fn;
	area_h.head_sp = (uintptr_t)(stack + (1 << 16) - 8);

	pthread_create(&th, NULL, h_main, NULL);
	for (int i = 0; i < 3000 && !__atomic_load_n(&h_ready, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	snprintf(spath, sizeof(spath), "/proc/self/task/%d/stat", h_tid);
	sfd = open(spath, O_RDONLY);
	sf_ok(h_ready && sfd >= 0, "H registered its area");
	if (!h_ready || sfd < 0)
		return;

	t_end = tl_now_ns() + SECS * 1000000000LL;
	for (int i = 0; i < ITERS; i++) {
		long long t0, delay;
		int inside = 0;

		while (__atomic_load_n(&go, __ATOMIC_ACQUIRE) != i &&
		       !__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
			sched_yield();
		if (__atomic_load_n(&go, __ATOMIC_ACQUIRE) != i)
			break;
		/* Arm when H is seen asleep, or after a delay swept over the call. */
		delay = (long long)(i % 16 + 1) * h_dur_ns / 24;
		t0 = tl_now_ns();
		for (;;) {
			char st = state_of(sfd);

			if (__atomic_load_n(&h_done, __ATOMIC_ACQUIRE) == i)
				break;
			if (st == 'D' || st == 'S' || tl_now_ns() - t0 > delay) {
				inside = 1;
				break;
			}
			sched_yield();
		}
		__atomic_store_n(&area_h.flags, THREADLET_ON, __ATOMIC_RELEASE);
		inside = inside && __atomic_load_n(&h_done, __ATOMIC_ACQUIRE) != i;
		__atomic_store_n(&armed, i, __ATOMIC_RELEASE);
		armed_inside += inside;

		/*
		 * H comes back, or (the bug) S resumes as H. H may already
		 * be in its next call: it needs only armed == i to go on.
		 */
		while (__atomic_load_n(&h_done, __ATOMIC_ACQUIRE) < i &&
		       !__atomic_load_n(&resumed, __ATOMIC_ACQUIRE))
			usleep(50);
		if (__atomic_load_n(&resumed, __ATOMIC_ACQUIRE) ||
		    area_h.nr_fallbacks >= 5 || tl_now_ns() > t_end)
			break;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	if (resumed)
		for (int i = 0; i < 10000 && !__atomic_load_n(&cleaned, __ATOMIC_ACQUIRE); i++)
			usleep(1000);
	else
		pthread_join(th, NULL);

	tl_diag("%ld calls: %ld in place, %ld EBUSY, %ld other, %ld not evicted; "
		"armed inside %d times; area: %llu hand-offs, %llu fallbacks (last %u)",
		h_calls, h_inplace, h_busy, h_other, h_notevicted, armed_inside,
		area_h.nr_handoffs, area_h.nr_fallbacks, area_h.last_fallback);
	if (!resumed && !area_h.nr_fallbacks && !area_h.nr_handoffs) {
		sf_skip("no sleep of async_exec() met the armed area");
	} else {
		sf_ok(!resumed && !area_h.nr_handoffs,
		      "async_exec() not handed off before its chain (S resumed as H: %s, tid %d, H %d)",
		      resumed ? "yes" : "no", resume_tid, h_tid);
		sf_ok(resumed || !h_other, "every call returned its atom or EBUSY (%ld other)",
		      h_other);
	}
	if (resumed)
		sf_ok(cleaned, "the moved area disarmed after the stale post (%llu posted)",
		      ahu.kernel_ring_idx);
	sf_ok(sf_unregister_head(&ahu) == 0, "unregister the head");
	usleep(100000);
	unlink(path_a);
	unlink(path_b);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(scenario, NULL, 90);
	sf_child_ok(status, "an area armed while async_exec() copies its first atom");
	return tl_exit();
}
