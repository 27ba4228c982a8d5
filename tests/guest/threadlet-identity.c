// SPDX-License-Identifier: GPL-2.0
/*
 * The head keeps its identity across a hand-off: TID, PID, pthread_self(),
 * errno, TLS, signal mask, sigaltstack, rseq registration, FPU control
 * state, cancel type, /proc/self, its children, joinability, and signals sent to its
 * TID. Checked from the main thread (the thread-group leader) and from a
 * pthread.
 */
#include <fenv.h>
#include <linux/rseq.h>
#include <pthread.h>
#include <signal.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "tl_test.h"
#include "tl_util.h"

static struct async_head_user ahu;
static unsigned long stack;
static __thread long tls_value;

struct blocker {
	int fd;
	pid_t tid_before, tid_after;
	int cpu_after;
	int done;
};

static long read_pipe(void *data)
{
	struct blocker *b = data;
	char c;

	b->tid_before = gettid();
	if (read(b->fd, &c, 1) != 1)
		b->tid_after = -1;
	else
		b->tid_after = gettid();
	/* A pool thread's identity has no rseq area: glibc asks the kernel. */
	b->cpu_after = sched_getcpu();
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return complete_threadlet_fn(b, &ahu);
}

static volatile pid_t sig_tid;
static volatile pthread_t sig_self;
static volatile int sig_count;

static void on_usr1(int sig)
{
	(void)sig;
	sig_tid = gettid();
	sig_self = pthread_self();
	sig_count++;
}

struct killer {
	pid_t tid;
	int fd;			/* pipe to release the threadlet afterwards */
};

/* Sends SIGUSR1 to the head's TID while its threadlet is blocked. */
static void *kill_head(void *arg)
{
	struct killer *k = arg;

	usleep(50000);
	syscall(SYS_tgkill, getpid(), k->tid, SIGUSR1);
	usleep(50000);
	if (write(k->fd, "x", 1) != 1)
		return (void *)1;
	return NULL;
}

static struct rseq *rseq_area(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
}

/*
 * Whether rseq's area names the CPU the getcpu() system call reports (not
 * glibc's sched_getcpu(), which reads the area itself). A migration
 * between the two reads can make them differ once: three tries.
 */
static int rseq_cpu_ok(void)
{
	unsigned int cpu;
	int i, before;

	if (!__rseq_size)
		return 1;
	for (i = 0; i < 3; i++) {
		before = (int)__atomic_load_n(&rseq_area()->cpu_id, __ATOMIC_RELAXED);
		if (syscall(SYS_getcpu, &cpu, NULL, NULL))
			return 0;
		if (before == (int)cpu &&
		    (int)__atomic_load_n(&rseq_area()->cpu_id, __ATOMIC_RELAXED) == before)
			return 1;
	}
	return 0;
}

/*
 * Many hand-offs in a row, each checked: the spare that takes the head's
 * rseq area over updates it when it names another CPU (on two vCPUs the
 * spares run on either), and skips only an update that changes nothing.
 */
static void check_rseq_handoffs(const char *who)
{
	int i, pfd[2], bad = 0, async = 0;
	struct blocker b;

	if (pipe(pfd))
		return;
	for (i = 0; i < 200; i++) {
		memset(&b, 0, sizeof(b));
		b.fd = pfd[0];
		if (threadlet_exec(read_pipe, &b, stack, &ahu) == 0)
			async++;
		bad += !rseq_cpu_ok();
		if (write(pfd[1], "x", 1) != 1 || tl_wait_one(&ahu) != &b)
			bad++;
		tl_wait_parked(&ahu, 4);
		bad += !rseq_cpu_ok();
	}
	tl_ok(async == 200 && bad == 0,
	      "%s: rseq cpu_id right after each of 200 hand-offs (%d async, %d wrong)",
	      who, async, bad);
	close(pfd[0]);
	close(pfd[1]);
}

/* One hand-off from the calling thread, checking everything it keeps. */
static void check_identity(const char *who)
{
	struct blocker b = { 0 };
	sigset_t mask, got;
	stack_t ss = { 0 }, ss_got;
	static char altstack[1 << 16];
	struct killer k;
	pthread_t killer, self = pthread_self();
	pid_t tid = gettid(), pid = getpid();
	long *tls_addr = &tls_value;
	int pfd[2], err, round, ctype = -1;
	long ret;

	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	ss.ss_sp = altstack;
	ss.ss_size = sizeof(altstack);
	sigaltstack(&ss, NULL);
	tls_value = tid * 3;
	fesetround(FE_UPWARD);
	round = fegetround();
	if (pipe(pfd))
		return;
	b.fd = pfd[0];
	k.tid = tid;
	k.fd = pfd[1];
	sig_count = 0;

	errno = 1234;
	ret = threadlet_exec(read_pipe, &b, stack, &ahu);
	err = errno;
	tl_ok(ret == 0, "%s: threadlet went async", who);
	tl_ok(gettid() == tid, "%s: gettid() kept (%d)", who, tid);
	tl_ok(getpid() == pid, "%s: getpid() kept", who);
	tl_ok(pthread_equal(pthread_self(), self), "%s: pthread_self() kept", who);
	tl_ok(err == 1234, "%s: errno kept (%d)", who, err);
	tl_ok(&tls_value == tls_addr && tls_value == tid * 3,
	      "%s: TLS variable kept (address and value)", who);
	pthread_sigmask(SIG_SETMASK, NULL, &got);
	tl_ok(sigismember(&got, SIGUSR2) && !sigismember(&got, SIGUSR1),
	      "%s: signal mask kept", who);
	tl_ok(sigaltstack(NULL, &ss_got) == 0 && ss_got.ss_sp == altstack,
	      "%s: sigaltstack kept", who);
	tl_ok(fegetround() == round, "%s: FPU rounding mode kept", who);
	/* glibc's read() makes it asynchronous for its call, which blocked. */
	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &ctype);
	tl_ok(ctype == PTHREAD_CANCEL_DEFERRED, "%s: cancel type kept: deferred (%d)", who,
	      ctype);
	tl_ok(__rseq_size == 0 || ((int)rseq_area()->cpu_id >= 0 && rseq_cpu_ok()),
	      "%s: rseq registration kept (cpu_id %d)", who,
	      __rseq_size ? (int)rseq_area()->cpu_id : -1);

	pthread_create(&killer, NULL, kill_head, &k);
	while (!__atomic_load_n(&b.done, __ATOMIC_ACQUIRE) || sig_count == 0)
		async_wait(1, ahu.user_ring_idx, &ahu);
	pthread_join(killer, NULL);
	tl_ok(sig_count == 1 && sig_tid == tid && pthread_equal(sig_self, self),
	      "%s: tgkill to the head's TID ran the handler in the head", who);
	tl_ok(tl_wait_one(&ahu) == &b, "%s: event arrives", who);
	tl_ok(b.tid_before == tid && b.tid_after > 0 && b.tid_after != tid,
	      "%s: threadlet finished as another thread (%d)", who, b.tid_after);
	tl_ok(b.cpu_after >= 0, "%s: sched_getcpu() in the cache-miss thread (%d)",
	      who, b.cpu_after);
	tl_ok(tl_wait_parked(&ahu, 4), "%s: pool parked again", who);
	fesetround(FE_TONEAREST);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	close(pfd[0]);
	close(pfd[1]);
}

static void *thread_head(void *arg)
{
	(void)arg;
	check_identity("pthread head");
	check_rseq_handoffs("pthread head");
	return (void *)(long)gettid();
}

int main(void)
{
	char proc[64] = { 0 }, want[32];
	struct sigaction sa = { .sa_handler = on_usr1 };
	pthread_t t;
	void *tret;
	pid_t child;
	int status;

	sigaction(SIGUSR1, &sa, NULL);
	stack = threadlet_stack_alloc(64 << 10);
	tl_ok(async_head_init(&ahu, 16, 4) == 0, "async_head_init");

	child = fork();
	if (child == 0) {
		usleep(300000);
		_exit(7);
	}
	tl_ok(getpid() == gettid(), "main thread is the group leader");
	check_identity("main thread");
	check_rseq_handoffs("main thread");
	tl_ok(getpid() == gettid(), "main thread: getpid() == gettid() after");
	snprintf(want, sizeof(want), "%d", getpid());
	tl_ok(readlink("/proc/self", proc, sizeof(proc) - 1) > 0 &&
	      !strcmp(proc, want), "main thread: /proc/self -> %s", proc);
	tl_ok(access("/proc/self/status", R_OK) == 0, "/proc/self/status readable");
	tl_ok(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 7,
	      "child forked before the hand-off can be waited for");

	tl_ok(pthread_create(&t, NULL, thread_head, NULL) == 0, "start a pthread head");
	tl_ok(pthread_join(t, &tret) == 0 && (long)tret > 0,
	      "pthread_join of a head thread works");

	async_head_exit(&ahu);
	threadlet_stack_free(stack);
	return tl_exit();
}
