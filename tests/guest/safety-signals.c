// SPDX-License-Identifier: GPL-2.0
/*
 * Temporary signal masks never cross a hand-off (finding 6).
 *
 * sigsuspend() installs its mask before it sleeps and only then marks the
 * task for restoring the old one; sigtimedwait() unblocks the signals it
 * waits for and keeps the real mask aside (real_blocked, which is empty
 * when the mask is). A hand-off in either sleep would give the head the
 * temporary mask, and leave the real one behind in the task that becomes
 * a pool thread: the head would run with signals it had blocked, the pool
 * thread with signals unblocked. Both must sleep in place instead
 * (fallback THREADLET_FB_SIGNALS), and wake up as they would without
 * threadlets.
 */
#include "safety.h"

static struct async_head_user ahu;
static unsigned long stack;

static volatile int usr1_count;
static volatile pid_t usr1_tid;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_tid = gettid();
	usr1_count++;
}

struct waiter {
	pid_t head_tid;
	int entered;
	int stop;
	long ret;
	int err;
};

/* Sends SIGUSR1 to the head's TID once its threadlet sleeps, 50 ms later. */
static void *killer(void *arg)
{
	struct waiter *w = arg;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (int i = 0; i < 10000 && !__atomic_load_n(&w->entered, __ATOMIC_ACQUIRE) &&
	     !__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	sf_wait_sleeping(w->head_tid, &w->stop);
	usleep(50000);
	syscall(SYS_tgkill, getpid(), w->head_tid, SIGUSR1);
	return NULL;
}

static long suspend_fn(void *data)
{
	struct waiter *w = data;
	sigset_t m;

	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);		/* SIGUSR1 gets through */
	__atomic_store_n(&w->entered, 1, __ATOMIC_RELEASE);
	w->ret = sigsuspend(&m);
	w->err = errno;
	return complete_threadlet_fn(w, &ahu);
}

/* Set of blocked signals of the calling thread, from the kernel's view. */
static int mask_is(const sigset_t *want)
{
	sigset_t got;

	if (pthread_sigmask(SIG_SETMASK, NULL, &got))
		return 0;
	for (int s = 1; s < 32; s++)
		if (sigismember(&got, s) != sigismember(want, s))
			return 0;
	return 1;
}

static void sigsuspend_case(void *arg)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct threadlet_stats s0, s1;
	struct waiter w = { .head_tid = gettid() };
	sigset_t orig;
	pthread_t k;
	long ret;

	(void)arg;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&orig);
	sigaddset(&orig, SIGUSR1);
	sigaddset(&orig, SIGUSR2);
	pthread_sigmask(SIG_SETMASK, &orig, NULL);
	stack = threadlet_stack_alloc(64 << 10);
	if (threadlet_err(stack) || async_head_init(&ahu, 16, 2) ||
	    pthread_create(&k, NULL, killer, &w)) {
		sf_ok(0, "sigsuspend: set-up");
		return;
	}
	threadlet_stats(&s0);
	ret = threadlet_exec(suspend_fn, &w, stack, &ahu);
	threadlet_stats(&s1);
	sf_ok(ret == 1, "sigsuspend: the threadlet slept in place, threadlet_exec() = 1 (%ld)",
	      ret);
	sf_ok(s1.nr_fallbacks > s0.nr_fallbacks && s1.nr_handoffs == s0.nr_handoffs &&
	      s1.last_fallback == THREADLET_FB_SIGNALS,
	      "sigsuspend: fallback, reason signals (%llu fallbacks, reason %u, %llu hand-offs)",
	      s1.nr_fallbacks - s0.nr_fallbacks, s1.last_fallback,
	      s1.nr_handoffs - s0.nr_handoffs);
	sf_ok(mask_is(&orig),
	      "sigsuspend: the head's mask is its own again (SIGUSR1 and SIGUSR2 blocked)");
	sf_ok(ret == 1 && w.ret == -1 && w.err == EINTR && usr1_count == 1 &&
	      usr1_tid == w.head_tid,
	      "sigsuspend: SIGUSR1 to the head's TID woke it, handler ran there (%ld/%d, %d runs)",
	      w.ret, w.err, usr1_count);
	/*
	 * When it went async, the sleeping task is a pool thread now, with
	 * everything blocked: it never wakes, and the process's exit ends it.
	 */
	__atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
	pthread_join(k, NULL);
}

/* ---- sigtimedwait ----------------------------------------------------- */

static long timedwait_fn(void *data)
{
	struct waiter *w = data;
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	sigset_t m;

	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	w->ret = sigtimedwait(&m, NULL, &ts);
	w->err = errno;
	return complete_threadlet_fn(w, &ahu);
}

/*
 * SigBlk of every thread but the calling one, from /proc; 1 if all equal
 * @want (or, with @want NULL, all equal each other, stored in @got).
 */
static int others_sigblk(const char *want, char *got, size_t len, int *n)
{
	char path[96], val[64];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int ok = 1;

	*n = 0;
	if (!d)
		return 0;
	got[0] = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == gettid())
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/status", atoi(e->d_name));
		if (!sf_status_field(path, "SigBlk", val, sizeof(val))) {
			ok = 0;
			continue;
		}
		(*n)++;
		if (!got[0])
			snprintf(got, len, "%s", val);
		if (strcmp(val, want ? want : got)) {
			ok = 0;
			snprintf(got, len, "%s", val);
		}
	}
	closedir(d);
	return ok;
}

static void sigtimedwait_case(void *arg)
{
	struct threadlet_stats s0, s1;
	struct waiter w = { .head_tid = gettid() };
	char base[64], after[64], path[64], head[64];
	sigset_t none;
	int n0 = 0, n1 = 0;
	long ret;

	(void)arg;
	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	stack = threadlet_stack_alloc(64 << 10);
	if (threadlet_err(stack) || async_head_init(&ahu, 16, 2)) {
		sf_ok(0, "sigtimedwait: set-up");
		return;
	}
	sf_ok(others_sigblk(NULL, base, sizeof(base), &n0) && n0 == 2 &&
	      strcmp(base, "0000000000000000"),
	      "sigtimedwait: the 2 pool threads block signals (SigBlk %s)", base);
	threadlet_stats(&s0);
	ret = threadlet_exec(timedwait_fn, &w, stack, &ahu);
	threadlet_stats(&s1);
	if (ret == 0)
		sf_wait_event(&ahu, 5000);
	tl_wait_parked(&ahu, 2);
	sf_ok(ret == 1, "sigtimedwait: the threadlet slept in place, threadlet_exec() = 1 (%ld)",
	      ret);
	sf_ok(s1.nr_fallbacks > s0.nr_fallbacks && s1.nr_handoffs == s0.nr_handoffs &&
	      s1.last_fallback == THREADLET_FB_SIGNALS,
	      "sigtimedwait: fallback, reason signals (%llu fallbacks, reason %u, %llu hand-offs)",
	      s1.nr_fallbacks - s0.nr_fallbacks, s1.last_fallback,
	      s1.nr_handoffs - s0.nr_handoffs);
	sf_ok(w.ret == -1 && w.err == EAGAIN, "sigtimedwait: timed out (%ld/%d)",
	      w.ret, w.err);
	sf_ok(others_sigblk(base, after, sizeof(after), &n1) && n1 == 2,
	      "sigtimedwait: every pool thread still blocks %s (%d threads, %s)", base, n1,
	      after);
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", gettid());
	sf_ok(sf_status_field(path, "SigBlk", head, sizeof(head)) &&
	      !strcmp(head, "0000000000000000") && mask_is(&none),
	      "sigtimedwait: the head still blocks nothing (%s)", head);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(sigsuspend_case, NULL, 60);
	sf_child_ok(status, "sigsuspend");
	status = sf_child(sigtimedwait_case, NULL, 60);
	sf_child_ok(status, "sigtimedwait");
	return tl_exit();
}
