// SPDX-License-Identifier: GPL-2.0
/*
 * Signals sent to the head's TID while it is handed off, again and again.
 *
 * tgkill() looks the target up by TID under RCU, then takes its siglock
 * to queue the signal; the hand-off exchanges the two tasks' TIDs under
 * that same siglock. A tgkill() that found the head's kernel task just
 * before the exchange queued the signal on it just after, when that task
 * carried a pool thread's identity: the signal sent to the head went to a
 * pool thread, which blocks every signal, and was never delivered there
 * or to the head. The same lookup-then-lock serves tkill(),
 * rt_tgsigqueueinfo() and SIGEV_THREAD_ID timers, and SIGIO to a file's
 * owner thread (F_SETOWN_EX with F_OWNER_TID), sent by send_sigio().
 *
 * A thread sends SIGRTMIN (queued, one by one) to the head's TID while
 * the head's threadlets block and are handed off: by tgkill(), then as
 * the SIGIO (F_SETSIG SIGRTMIN) of a pipe whose owner is the head's TID,
 * for each byte it writes there.
 * Expected: every signal sent runs the handler in the head's TID, and
 * no other thread has one pending.
 *
 * The re-check must not turn a full queue into a retry: with
 * RLIMIT_SIGPENDING at 0, tgkill() of a real-time signal fails with
 * EAGAIN, and a file's real-time SIGIO falls back to plain SIGIO, for a
 * thread owner and a process owner alike, as without threadlets (the first
 * version of the re-check looped for good in both, interrupts off in the
 * second).
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include "safety.h"

#define NSEND	5000

static struct async_head_user ahu;
static pid_t head_tid;
static volatile int got_head, got_other, stop, sent, handoffs;
static int sigio_pipe[2] = { -1, -1 };	/* SIGIO mode: the pipe */

static void on_rt(int sig)
{
	(void)sig;
	if (syscall(SYS_gettid) == head_tid)
		got_head++;
	else
		got_other++;
}

static long nap_fn(void *data)
{
	struct timespec ts = { 0, 30 * 1000 };

	nanosleep(&ts, NULL);
	return complete_threadlet_fn(data, &ahu);
}

static void *sender(void *arg)
{
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/*
	 * At least NSEND, and on until the head was handed off often enough
	 * meanwhile (a slow kernel can run a few hand-offs only in NSEND's
	 * time), up to four times as many.
	 */
	for (int i = 0; i < NSEND || (handoffs <= 300 && i < 4 * NSEND); i++) {
		if (sigio_pipe[1] >= 0 ? write(sigio_pipe[1], "s", 1) == 1 :
		    syscall(SYS_tgkill, getpid(), head_tid, SIGRTMIN) == 0)
			sent++;
		struct timespec ts = { 0, 10 * 1000 + (i & 63) * 500 };

		nanosleep(&ts, NULL);	/* a varying phase against the hand-offs */
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Threads other than the head with SIGRTMIN pending. */
static int others_pending(void)
{
	DIR *d = opendir("/proc/self/task");
	char path[300], val[64];
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == head_tid)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		if (sf_status_field(path, "SigPnd", val, sizeof(val)) &&
		    (strtoull(val, NULL, 16) >> (SIGRTMIN - 1)) & 1)
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* SIGIO mode: a pipe whose reader is owned by the head's TID. */
static int sigio_setup(void)
{
	struct f_owner_ex owner = { F_OWNER_TID, head_tid };

	/* If the queue of rt signals overflowed: plain SIGIO, not counted. */
	signal(SIGIO, SIG_IGN);
	return !pipe(sigio_pipe) && !fcntl(sigio_pipe[0], F_SETOWN_EX, &owner) &&
	       !fcntl(sigio_pipe[0], F_SETSIG, SIGRTMIN) &&
	       !fcntl(sigio_pipe[0], F_SETFL, O_ASYNC | O_NONBLOCK);
}

static void run(void *arg)
{
	struct sigaction sa = { .sa_handler = on_rt, .sa_flags = SA_RESTART };
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	const char *how = arg ? "SIGIO" : "tgkill()";
	int ev, pend;
	pthread_t s;

	head_tid = syscall(SYS_gettid);
	sigaction(SIGRTMIN, &sa, NULL);
	if (arg && !sigio_setup()) {
		sf_ok(0, "a pipe whose SIGIO goes to the head's TID");
		return;
	}
	sf_ok(!threadlet_err(stack) && !async_head_init(&ahu, 64, 4) &&
	      !pthread_create(&s, NULL, sender, NULL), "a head, a pool, a sender");
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		if (threadlet_exec(nap_fn, &ev, stack, &ahu) == 0) {
			handoffs++;
			sf_wait_event(&ahu, 5000);
		}
	pthread_join(s, NULL);
	for (int i = 0; i < 200 && got_head + got_other < sent; i++)
		usleep(10000);
	pend = others_pending();
	sf_ok(handoffs > 300, "%s: %d hand-offs while the signals came", how, handoffs);
	sf_ok(got_head == sent && !got_other && !pend,
	      "%s: all %d signals sent to the head's TID ran there (%d there, %d elsewhere, "
	      "%d other threads hold one pending)", how, sent, got_head, got_other, pend);
	async_head_exit(&ahu);
}

/* Whether SIGIO is pending for this thread; takes it if so. */
static int take_sigio(void)
{
	struct timespec zero = { 0, 0 };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	return sigtimedwait(&set, NULL, &zero) == SIGIO;
}

/* A real-time SIGIO of a pipe owned as @type, with a full queue. */
static int sigio_falls_back(int type)
{
	struct f_owner_ex owner = { type, type == F_OWNER_TID ?
				    (pid_t)syscall(SYS_gettid) : getpid() };
	int p[2], ok;

	if (pipe(p) || fcntl(p[0], F_SETOWN_EX, &owner) ||
	    fcntl(p[0], F_SETSIG, SIGRTMIN) ||
	    fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK))
		return 0;
	ok = write(p[1], "f", 1) == 1 && take_sigio();
	close(p[0]);
	close(p[1]);
	return ok;
}

static void run_full(void *arg)
{
	struct rlimit none = { 0, 0 };
	sigset_t set;
	long ret;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigaddset(&set, SIGIO);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (setrlimit(RLIMIT_SIGPENDING, &none)) {
		sf_ok(0, "RLIMIT_SIGPENDING 0");
		return;
	}
	ret = syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGRTMIN);
	sf_ok(ret == -1 && errno == EAGAIN,
	      "full queue: tgkill() of SIGRTMIN fails with EAGAIN (%ld, errno %d)",
	      ret, errno);
	sf_ok(sigio_falls_back(F_OWNER_TID),
	      "full queue: a thread owner's SIGRTMIN SIGIO falls back to SIGIO");
	sf_ok(sigio_falls_back(F_OWNER_PID),
	      "full queue: a process owner's SIGRTMIN SIGIO falls back to SIGIO");
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(run, NULL, 150);
	sf_child_ok(status, "tgkill() to a head's TID across its hand-offs");
	status = sf_child(run, "sigio", 150);
	sf_child_ok(status, "SIGIO to a head's TID across its hand-offs");
	status = sf_child(run_full, NULL, 30);
	sf_child_ok(status, "a full signal queue is no retry");
	return tl_exit();
}
