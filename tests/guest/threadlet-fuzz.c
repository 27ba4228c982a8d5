// SPDX-License-Identifier: GPL-2.0
/*
 * threadlet-fuzz: a bounded, seeded fuzzer for the threadlet and syslet
 * system calls (451..458), the vDSO's threadlet_on()/threadlet_off() and
 * the memory shared with the kernel (per-thread areas, struct
 * async_head_user, completion rings), with chaos threads around them.
 *
 *   threadlet-fuzz [-s SEED] [-t SECONDS] [-n ITERATIONS] [-r ROUND]
 *                  [-R ROUND_SECONDS] [-x FEATURE,...] [-v] [-h]
 *
 * Without -s/-t/-n/-x it reads tl.fuzz_seed=, tl.fuzz_time=, tl.fuzz_iters=
 * and tl.fuzz_exclude= (and tl.fuzz_verbose=1) from /proc/cmdline, since
 * the guest's /init runs tests without arguments; defaults: seed 1, 60 s.
 * -x leaves features out (-h lists them), to fuzz on past a known bug:
 * e.g. -x mtfork (multithreaded fork/exec children), -x overpark (more
 * threads parked on a head than its max_cachemiss_threads).
 *
 * How it runs. The parent runs rounds of ROUND_SECONDS (default 5), each
 * in a forked child in its own process group. Round N's seed is derived
 * from SEED and N alone, and is printed before the round starts, so a
 * kernel report in the serial log can be tied to it. The child starts
 * worker threads that call the new system calls with random, often
 * hostile arguments (bad/unaligned/unmapped/read-only pointers, bad
 * lengths and flags, random syslet chains with forbidden and unknown
 * system calls, loops, bad next/arg/ret pointers, chains and threadlets
 * that block on pipes, futexes, nanosleep and disk I/O so that they go
 * async), parked threads of its own next to libthreadlet's pools, and
 * chaos threads: signals, SIGSTOP/SIGCONT of the whole process from a
 * forked helper, ptrace attach/detach from a forked helper, fork and exec,
 * threads exiting in the middle of a threadlet or while parked,
 * mprotect/munmap of rings, of async_head_user memory and of registered
 * areas, per-thread credential changes and unshare(). A round ends in one
 * of several ways (orderly shutdown, exit_group with everything in flight,
 * exec from a threadlet, SIGKILL, the leader exiting first, ...).
 *
 * A child killed by a signal is expected and only reported ("# round N
 * seed S: child ended by signal X"). The test fails only if the kernel
 * misbehaves in a way user space can see: a round that cannot be reaped
 * (a hang: its seed is printed, thread states dumped, sysrq-w written to
 * the kernel log, then it is killed), or a broken contract (a head that
 * changed its TID, an event posted twice or for a threadlet that ran in
 * place, an unknown event in a ring, a forbidden atom that ran, a
 * deterministic error code that differs, ...), printed as "VIOLATION".
 * Kernel reports (BUG, WARNING, KASAN, lockdep, ...) are found by the
 * host runner in the serial log.
 *
 * Reproducing. Every run prints its seed and the exact command line:
 *   make fuzz SEED=S TIME=T [FUZZ_EXCLUDE=..]  (host: boots the guest, runs this)
 *   threadlet-fuzz -s S -t T [-x ..]   (in the guest, e.g. make shell)
 *   threadlet-fuzz -s S -r N -t 5      (round N alone, same round seed)
 * The seed fixes every random choice of every thread; the interleaving of
 * the threads is not reproducible, so a run replays the same kinds and
 * mixes of operations, not the same schedule. Run a failing seed a few
 * times.
 *
 * The same source builds as a 32-bit (i386) program, threadlet-fuzz-m32
 * (make fuzz M32=1 on the x86-64 kernel, make fuzz-i386 on the i386 one),
 * with the same operations and the same oracle. What differs is the ABI,
 * kept to the "system call ABI" block below and a few #ifdefs: raw calls
 * by int $0x80, the landing code, the i386 numbers of the atoms and of
 * the calls random atoms must not make, 64-bit arguments (umem_add's
 * increment, pread64's and fadvise64's offsets) in two halves, and the
 * addresses that are no user memory. A seed gives other choices in the
 * two builds: reproduce with the build that found it.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <threadlet.h>
#include "tl_raw.h"

typedef unsigned long long u64;

/*
 * The system call ABI of this build. Addresses that no user pointer of
 * the build reaches: FZ_KADDR and FZ_KTEXT are the kernel's direct map and
 * text on x86-64; on i386 they are the i386 kernel's (PAGE_OFFSET, 3 GiB),
 * which a 32-bit task on the x86-64 kernel sees as a hole no mapping
 * reaches (its mappings grow down from below the stack, near 4 GiB).
 * FZ_USER_END is the first page past user space: x86-64's TASK_SIZE_MAX;
 * on i386 a 32-bit task's TASK_SIZE on the x86-64 kernel, and the fixmap
 * on the i386 kernel. FZ_NONCANON: non-canonical on x86-64; on i386 the
 * last page, past user space on both kernels. But the x86-64 kernel's
 * access_ok() takes every 32-bit address for user memory (g_compat): a
 * 32-bit task's call fails there only when the memory is touched, after
 * the checks that come before it (-EBUSY, say). In the __u64 fields of the uapi structures (atoms,
 * async_head_user) the 64-bit values stay what they are on both: no
 * 32-bit pointer, so refused.
 */
#ifdef __x86_64__
#define FZ_NAME			"threadlet-fuzz"
#define FZ_KADDR		0xffff888000000000ULL
#define FZ_KTEXT		0xffffffff81000000ULL
#define FZ_USER_END		0x00007ffffffff000ULL
#define FZ_NONCANON		0x8000000000000000ULL
#define FZ_REG_IP		REG_RIP
#define FZ_REG_SP		REG_RSP
#define FZ_NR_setresuid		SYS_setresuid
#define FZ_NR_setresgid		SYS_setresgid
#elif defined(__i386__)
#define FZ_NAME			"threadlet-fuzz-m32"
#define FZ_KADDR		0xc0000000ULL
#define FZ_KTEXT		0xc1000000ULL
#define FZ_USER_END		0xffffe000ULL
#define FZ_NONCANON		0xfffff000ULL
#define FZ_REG_IP		REG_EIP
#define FZ_REG_SP		REG_ESP
/* The 32-bit uid calls, as glibc makes them (not the 16-bit ones). */
#define FZ_NR_setresuid		SYS_setresuid32
#define FZ_NR_setresgid		SYS_setresgid32
#else
#error "threadlet-fuzz: x86-64 or i386"
#endif

/* A 32-bit build on the x86-64 kernel (see FZ_NONCANON); set by main(). */
static int g_compat;

/* libthreadlet's private lib_flags bits (user/lib/internal.h). */
#define FZ_LIB_UNREGISTERED	(1U << 0)
#define FZ_LIB_CACHEMISS	(1U << 1)

#define DEFAULT_SEED		1ULL
#define DEFAULT_TIME		60
#define DEFAULT_ROUND		5
#define REAPER_GRACE		10	/* s after a round's deadline: the child exits */
#define HANG_GRACE		30	/* s after a round's deadline: a hang */
#define OUT_FD			987	/* the round child's real stdout */
#define EXIT_VIOLATION		99

#define MAX_THR		64
#define MAX_WORKERS	6
#define MAX_PARKERS	5
#define NLIB		2
#define NRAW		4
#define NPIPES		4
#define NFUTEX		8
#define NTOK		8192
#define NCHAIN		1024
#define MAXA		8
#define NSTACK		320
#define STACK_SZ	(64 << 10)
#define LAND_SZ		(16 << 10)
#define NLAND		256
#define SCRATCH_SZ	(16 << 10)
#define THRMEM_SZ	(4096 + SCRATCH_SZ + 4096)
#define SENTINEL	0x5a5a5a5a5a5a5a5aLL

/* ---- random numbers ---------------------------------------------------- */

static u64 splitmix64(u64 *x)
{
	u64 z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

struct rng {
	u64 s;
};

static void rng_seed(struct rng *r, u64 seed)
{
	u64 x = seed;

	r->s = splitmix64(&x);
	if (!r->s)
		r->s = 1;
}

static u64 rnd(struct rng *r)		/* xorshift64* */
{
	u64 x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static u64 below(struct rng *r, u64 n)
{
	return n ? rnd(r) % n : 0;
}

static int chance(struct rng *r, unsigned int permille)
{
	return below(r, 1000) < permille;
}

static u64 round_seed(u64 seed, unsigned int round)
{
	u64 x = seed ^ (0xd1b54a32d192ed03ULL * (round + 1));

	return splitmix64(&x);
}

/* ---- raw system calls and output ---------------------------------------- */

/*
 * A system call that touches no TLS (errno, and on i386 the vDSO's entry,
 * which glibc finds through %gs): a task may come back from it with
 * another identity. i386: int $0x80, arguments in ebx, ecx, edx, esi,
 * edi; the sixth (ebp) is never used here (RS0..RS4), so it is not passed.
 */
#ifdef __x86_64__
static inline long rsys(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#else
static inline long rsys(long n, long a, long b, long c, long d, long e, long f)
{
	long ret;

	(void)f;
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(n), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e)
			 : "memory");
	return ret;
}
#endif
#define RS0(n)			rsys(n, 0, 0, 0, 0, 0, 0)
#define RS1(n, a)		rsys(n, (long)(a), 0, 0, 0, 0, 0)
#define RS2(n, a, b)		rsys(n, (long)(a), (long)(b), 0, 0, 0, 0)
#define RS3(n, a, b, c)		rsys(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define RS4(n, a, b, c, d)	rsys(n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

/*
 * A 64-bit argument of a system call or an atom, in @v: one register on
 * x86-64; on i386 two, the low half first, as the i386 entries of
 * umem_add, pread64 and fadvise64 take it. Returns the registers used.
 */
static unsigned int arg64(u64 *v, u64 x)
{
	v[0] = x;
#ifdef __i386__
	v[0] = (uint32_t)x;
	v[1] = x >> 32;
	return 2;
#else
	return 1;
#endif
}

/* umem_add(@uptr, @inc), raw. */
static long fz_umem_add(u64 uptr, u64 inc)
{
	u64 a[2];

	arg64(a, inc);
#ifdef __i386__
	return RS3(__NR_umem_add, (uintptr_t)uptr, a[0], a[1]);
#else
	return RS2(__NR_umem_add, uptr, a[0]);
#endif
}

/* A random long that is never negative, whatever the size of a long. */
static long rnd_long(struct rng *r)
{
	return (long)(rnd(r) >> (65 - 8 * sizeof(long)));
}

static int g_out = 1;
static int g_verbose;

/* -x: features to leave out, e.g. to fuzz past a known bug. */
enum {
	XF_MTFORK, XF_FORK, XF_EXEC, XF_STOP, XF_TRACE, XF_MEMCHAOS, XF_CREDS,
	XF_UNSHARE, XF_RAWLAND, XF_KAMIKAZE, XF_SPAWN, XF_LIBHEAD, XF_FAILNTH,
	XF_RANDOM, XF_PARK, XF_PARKERS, XF_THREXIT, XF_LEADER, XF_EXECFINALE,
	XF_EXITFINALE, XF_KILLFINALE, XF_MAINFINALE, XF_OVERPARK, XF_NR
};
static const char *const xf_name[XF_NR] = {
	"mtfork", "fork", "exec", "stop", "trace", "memchaos", "creds", "unshare",
	"rawland", "kamikaze", "spawn", "libhead", "failnth", "random", "park",
	"parkers", "threxit", "leader", "execfinale", "exitfinale", "killfinale",
	"mainfinale", "overpark",
};
static unsigned int g_exclude;
#define EXCLUDED(f)	(g_exclude & (1U << (f)))

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[600];
	va_list ap;
	int n;

	buf[0] = '#';
	buf[1] = ' ';
	va_start(ap, fmt);
	n = vsnprintf(buf + 2, sizeof(buf) - 3, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	n += 2;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(g_out, buf, n) < 0) {
		/* nothing to do about it */
	}
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- memory shared by the parent and a round's child -------------------- */

enum {
	ST_TL_EXEC, ST_TL_ASYNC, ST_TL_INPLACE, ST_SYSLET, ST_SYSLET_ASYNC,
	ST_POPPED, ST_LANDED, ST_PARKED, ST_FORKS, ST_EXECS, ST_SIGNALS,
	ST_STOPS, ST_TRACES, ST_MEMCHAOS, ST_SPAWNED, ST_FAULT_HANDOFF, ST_NR
};
static const char *const st_name[ST_NR] = {
	"threadlet_exec", "went-async", "in-place", "async_exec", "syslet-async",
	"events-popped", "landed-heads", "parks", "forks", "execs", "signals",
	"stops", "ptraces", "mem-chaos", "spawned", "fault-handoffs",
};

#define NVIOL	8
struct shared {
	u64 iters;		/* operations done in this round */
	u64 budget;		/* stop at this many (0: no limit) */
	uint32_t violations;
	uint32_t nmsg;
	char msg[NVIOL][240];
	uint32_t kamikaze;	/* a deliberate wild jump ran: SIGSEGV expected */
	char finale[48];
	u64 stat[ST_NR];
	struct {
		int32_t tid;
		int32_t role;
		int32_t op;
	} flight[MAX_THR];
};
static struct shared *g_sh;

/* Set while this thread has fail-nth armed: what fails then was injected. */
static __thread int t_injecting;

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...)
{
	char buf[480];
	va_list ap;
	uint32_t i;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (t_injecting) {
		if (g_verbose)
			say("(fail-nth armed, not counted) %s", buf);
		return;
	}
	if (g_sh) {
		__atomic_add_fetch(&g_sh->violations, 1, __ATOMIC_SEQ_CST);
		i = __atomic_fetch_add(&g_sh->nmsg, 1, __ATOMIC_SEQ_CST);
		if (i < NVIOL) {
			memcpy(g_sh->msg[i], buf, sizeof(g_sh->msg[i]) - 1);
			g_sh->msg[i][sizeof(g_sh->msg[i]) - 1] = 0;
		}
	}
	say("VIOLATION: %s (tid %d)", buf, (int)RS0(SYS_gettid));
}

static void stat_inc(int i)
{
	if (g_sh)
		__atomic_add_fetch(&g_sh->stat[i], 1, __ATOMIC_RELAXED);
}

/*
 * A task came back from a system call into a frame that belongs to another
 * task (the head's), which is running there too: leave at once, touching
 * as little of that stack as possible.
 */
static void __attribute__((noreturn)) rogue_return(const char *what)
{
	static const char m[] = "# VIOLATION: a call returned in a task that is not the head (rogue return): ";
	uint32_t i;

	if (g_sh) {
		__atomic_add_fetch(&g_sh->violations, 1, __ATOMIC_SEQ_CST);
		i = __atomic_fetch_add(&g_sh->nmsg, 1, __ATOMIC_SEQ_CST);
		if (i < NVIOL) {
			strncpy(g_sh->msg[i], what, sizeof(g_sh->msg[i]) - 1);
		}
	}
	RS3(SYS_write, g_out, m, sizeof(m) - 1);
	RS3(SYS_write, g_out, what, strlen(what));
	RS3(SYS_write, g_out, "\n", 1);
	for (;;)
		RS1(SYS_exit, 0);
}

/* ---- the vDSO --------------------------------------------------------------- */

typedef long (*vdso_on_fn)(struct threadlet_area *, unsigned long, unsigned long, void *);
typedef long (*vdso_off_fn)(struct threadlet_area *);
static vdso_on_fn vdso_on;
static vdso_off_fn vdso_off;

/* A vDSO function, or NULL where this vDSO has none. */
static void *vdso_sym_or_null(const char *name)
{
	void *p = threadlet_vdso_sym(name);

	return threadlet_ptr_err(p) ? NULL : p;
}

/* ---- parking and landing, in assembly --------------------------------------- */

/*
 * Parking is tl_raw_park() (tl_raw.h), with the home frame recorded in the
 * area the kernel has and in the TLS area libthreadlet's tl_go_home() uses.
 *
 * fz_land: a head's resume point for raw threadlet_on() calls; switches to
 * C on the landing stack the caller gave as head_sp, aligned to 16 bytes
 * at the call (both ABIs).
 */
#ifdef __x86_64__
#define FZ_SP	"%rsp"
#else
#define FZ_SP	"%esp"
#endif
__asm__(
	".text\n"
	".globl fz_land\n"
	".type fz_land, @function\n"
	"fz_land:\n"
	"	and $-16, " FZ_SP "\n"
	"	call fz_landed\n"
	"	ud2\n"
	".size fz_land, .-fz_land\n");
void fz_land(void);
void fz_landed(void) __attribute__((noreturn, used));

/* ---- round state ------------------------------------------------------------ */

enum role {
	R_MAIN, R_WORKER, R_PARKER, R_CONSUMER, R_TICKER, R_FEEDER, R_STOPPER,
	R_TRACER, R_MEMCHAOS, R_SPAWNED, R_REAPER, R_NR
};
static const char *const role_name[R_NR] = {
	"main", "worker", "parker", "consumer", "ticker", "feeder", "stopper",
	"tracer", "memchaos", "spawned", "reaper",
};

enum op {
	OP_NONE, OP_TL_EXEC, OP_TL_HOSTILE, OP_SYSLET, OP_SYSLET_HOSTILE,
	OP_REG, OP_ONOFF, OP_LAND, OP_VDSO, OP_AREG, OP_AWAIT, OP_ATHREAD,
	OP_PARK, OP_UMEM, OP_FORK, OP_EXEC, OP_SPAWN, OP_CREDS, OP_UNSHARE,
	OP_AREA_VICTIM, OP_SCHED, OP_SIGALT, OP_LIBHEAD, OP_FAILNTH,
	OP_KAMIKAZE, OP_NR
};
static const char *const op_name[OP_NR] = {
	"-", "tl_exec", "tl_exec_hostile", "syslet", "syslet_hostile",
	"register", "onoff_syscall", "raw_on_land", "vdso_onoff", "async_register",
	"async_wait", "async_thread", "park", "umem_add", "fork", "exec", "spawn",
	"creds", "unshare", "area_victim", "sched_fifo", "sigaltstack", "libhead",
	"fail_nth", "kamikaze",
};

struct thr {
	int used, alive, role, idx;
	int tid0, curtid, op;
	pthread_t pself;		/* pthread_self() at thread_setup(): its TLS */
	struct rng rng;
	char *rawpage;			/* page for this thread's raw areas */
	struct threadlet_area *rawarea;	/* registered raw area (NULL: TLS area) */
	unsigned long land;		/* landing stack top */
	char *scratch;			/* SCRATCH_SZ + guard, for random atoms */
	int budget;			/* spawned threads: operations left */
	void *altstack;
	int nocheck;			/* fail-nth armed: errors are injected */
};

enum { M_RW, M_NONE, M_GONE, M_LOST };

struct libhead {
	pthread_mutex_t lock;
	int state;			/* 0 none, 1 live, 2 dying */
	unsigned int entries, pool;
};

struct rawhead {
	pthread_mutex_t lock;
	char *ahupage, *ringpage;
	struct async_head_user *ahu;
	unsigned int entries;
	unsigned int maxthr;
	int registered;			/* as far as we know, under lock */
	int quiet;			/* unregistered, marked, pages untouched since */
	int ahu_state, ring_state;	/* M_* */
};

struct job {
	int kind, strict;
	int fd;
	uint32_t *fword;
	long arg;
	struct async_head_user *ahu;
	void *event;
	unsigned long stack2;
};

enum { T_FREE, T_ISSUED, T_ASYNC, T_POPPED, T_LEAKED };

struct token {
	int state, head;
	unsigned long stack;
	struct job job;
};

/* Expectation for a checked atom's result. */
enum {
	X_ANY, X_GETPID, X_GETPPID, X_GETTID, X_ZERO, X_SLEEP, X_EPERM, X_EINVAL,
	X_UMEMCTR
};

struct chain {
	struct syslet_uatom at[MAXA + 1];	/* [MAXA]: a terminator */
	long long ret[MAXA + 1];
	u64 val[MAXA][6];
	u64 ctr;
	struct syslet_queue q;			/* hostile chains' SYSLET_NEXT_QUEUE */
	u64 qent[4];
	struct timespec ts;
	char buf[64];
	struct pollfd pfd;
	uint8_t expect[MAXA + 1];
	int state, head, checked, linear, nat, loop_at;
	int tid;
	int popped_at;			/* atom index of the event the consumer popped */
	unsigned int gen;		/* chain_alloc()'s count when taken: tells uses apart */
	int hostile, rawhead;
};

enum {
	F_ORDERLY, F_EXIT_MAIN, F_EXEC_WORKER, F_SIGKILL, F_LEADER_EXIT,
	F_EXIT_IN_THREADLET, F_NR
};
static const char *const finale_name[F_NR] = {
	"orderly", "exit_group-from-main", "exec-from-threadlet", "SIGKILL",
	"leader-exits-first", "exit_group-from-threadlet",
};

struct cfg {
	int nworkers, nparkers, nlib, nraw;
	int stopper, tracer, memchaos, creds, unshare, kamikaze, rawland;
	int finale;
	int force_syscall;
};

static struct {
	u64 seed;
	unsigned int round;
	struct cfg cfg;
	long long start, deadline;
	volatile int stop;		/* 1: workers stop; 2: round over */
	volatile int exec_req, exit_req, leader_gone;
	pid_t pid, ppid;
	pthread_key_t key;
	struct thr thr[MAX_THR];
	pthread_mutex_t thr_lock;
	int spawns;

	int pipes[NPIPES][2];
	uint32_t futex[NFUTEX];
	int diskfd;
	char *diskmap;
	size_t disklen;

	struct libhead lib[NLIB];
	struct rawhead raw[NRAW];
	char *region;			/* raw heads' pages live in here */
	char *thrmem;			/* per-thread pages, by struct thr index */
	char *rawpage[MAX_THR];		/* each slot's raw area page (it may move) */

	struct token *tok;
	struct chain *ch;
	char *junk;			/* read-only page of 0xff, then a hole */
	char *unmapped;			/* an address with nothing mapped */
	char *ropage;			/* read-only zero page */
	char *sharedpage;		/* MAP_SHARED page, for areas */
	struct syslet_uatom *nested;	/* a tame chain for threadlets */
	u64 nested_val[2];

	/*
	 * Threadlet stacks, reused only 50 ms after they were freed: a
	 * cache-miss thread may still run a few instructions on its stack
	 * after its event was posted (when parking fails).
	 */
	pthread_mutex_t stack_lock;
	struct {
		unsigned long top;
		long long freed;
	} stack_q[NSTACK];
	int sq_head, sq_len, nstack_alloc;

	pthread_mutex_t land_lock;
	int nland;

	int failnth;			/* /proc/thread-self/fail-nth exists */
	char self_exe[256];

	/*
	 * Who last marked each slot dead, and whom thr_new() gave it to
	 * since: kept apart from struct thr, which thr_new() clears, so that
	 * a thread that finds its slot taken can say by whom.
	 */
	struct {
		int site, by_tid, by_role, op, owner_tid, next_gen, own_tls;
		long long when;
	} dead[MAX_THR];
} g;

static struct async_head_user lib_ahu[NLIB] __attribute__((aligned(4096)));
static struct async_head_user never_ahu[2] __attribute__((aligned(64)));
static __thread struct thr *t_self;

enum {
	DS_NONE, DS_RAW_EXIT, DS_LANDED, DS_LAND, DS_KAMIKAZE, DS_DTOR, DS_START,
	DS_SPAWNED_EXIT, DS_PARKER_EXIT, DS_MAIN_END, DS_NR
};
static const char *const ds_name[DS_NR] = {
	"-", "fn_raw_exit", "fz_landed", "op_land", "kamikaze", "thr_dtor", "thr_start",
	"spawned_exit", "parker_exit", "thread_main_end",
};

/* What g.dead says of slot @i, for a violation message. */
static const char *dead_str(int i, char *buf, size_t len)
{
	if (i < 0 || i >= MAX_THR || !g.dead[i].site) {
		snprintf(buf, len, "slot %d never marked dead", i);
		return buf;
	}
	snprintf(buf, len, "slot %d: marked dead at %s by tid %d (%s, %s TLS) %lld us ago, owner %d, op %s, %d reuses",
		 i, ds_name[g.dead[i].site], g.dead[i].by_tid,
		 g.dead[i].by_role >= 0 ? role_name[g.dead[i].by_role] : "no slot",
		 g.dead[i].own_tls ? "its" : "another",
		 (now_ns() - g.dead[i].when) / 1000, g.dead[i].owner_tid,
		 g.dead[i].op >= 0 && g.dead[i].op < OP_NR ? op_name[g.dead[i].op] : "?",
		 g.dead[i].next_gen);
	return buf;
}

/* Marks @t dead from site @site, remembering who did it (see g.dead). */
static void thr_dead(struct thr *t, int site)
{
	int i = t->idx;

	if (i < 0 || i >= MAX_THR)
		return;
	g.dead[i].site = site;
	g.dead[i].by_tid = (int)RS0(SYS_gettid);
	g.dead[i].by_role = t_self ? t_self->role : -1;
	g.dead[i].op = t->op;
	g.dead[i].owner_tid = t->tid0;
	g.dead[i].own_tls = pthread_equal(pthread_self(), t->pself);
	g.dead[i].when = now_ns();
	__atomic_store_n(&t->alive, 0, __ATOMIC_RELEASE);
}

/*
 * This task carries the identity in its TLS (a borrowed one, after a
 * hand-off), and that identity ends here: mark its slot dead, then exit
 * this thread only.
 */
static int pool_identity(void);

static void __attribute__((noreturn)) exit_identity(int site)
{
	int tid = (int)RS0(SYS_gettid);
	uint32_t on = __threadlet_area.flags & THREADLET_ON;
	struct thr *s = t_self;

	if (s)
		thr_dead(s, site);
	/*
	 * Nothing above sleeps in a system call (gettid does not), so a TID
	 * that changed here changed at a page fault that slept: legal, and
	 * why thr_new() reuses a dead slot only once its TID is gone.
	 */
	if ((int)RS0(SYS_gettid) != tid && on)
		stat_inc(ST_FAULT_HANDOFF);
	/*
	 * A hand-off at a fault since the caller looked (FN_RAW_EXIT) may
	 * have left this task a cache-miss thread with a library pool
	 * thread's identity, which must not end here (see pool_identity()):
	 * send it home instead, where the library ends it (no head:
	 * async_thread() fails with -EINVAL, tl_pool_main() leaves and
	 * counts it). From the test to the exit nothing touches memory.
	 */
	if (pool_identity())
		complete_threadlet_fn(NULL, NULL);
	for (;;)
		RS1(SYS_exit, 0);
}

/* ---- diagnostics for identity violations --------------------------------------------------- */

/* The last ops this identity ran (TLS: it moves with the identity). */
#define RING_N	8
static __thread struct {
	int op, tid, slot;
} t_ring[RING_N];
static __thread unsigned int t_ringn;

static void ring_note(struct thr *t, int op)
{
	unsigned int i = t_ringn++ % RING_N;

	t_ring[i].op = op;
	t_ring[i].tid = (int)RS0(SYS_gettid);
	t_ring[i].slot = t ? t->idx : -1;
}

static int ring_str(char *buf, size_t len)
{
	int n = 0;

	for (unsigned int k = 0; k < RING_N && k < t_ringn; k++) {
		unsigned int i = (t_ringn - 1 - k) % RING_N;
		int op = t_ring[i].op;

		n += snprintf(buf + n, len - (size_t)n, "%s%s/t%d/s%d", k ? "," : "",
			      op >= 0 && op < OP_NR ? op_name[op] : "?", t_ring[i].tid,
			      t_ring[i].slot);
		if ((size_t)n >= len)
			break;
	}
	return n;
}

/*
 * Every raw (non-TLS) area a thread of this process registered, with the
 * TID that did: an identity keeps its area until it unregisters it or
 * ends, so a live TID here still has it.
 */
#define NAREG	256
static struct {
	pthread_mutex_t lock;
	struct {
		uintptr_t a;
		int tid, slot;
	} e[NAREG];
} areg = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int tid_alive(int tid)
{
	return tid > 0 && RS3(SYS_tgkill, g.pid, tid, 0) == 0;
}

/* Another live thread of ours that registered @a, or 0. */
static int areg_other(const void *a, int *slot)
{
	int me = (int)RS0(SYS_gettid), who = 0;

	pthread_mutex_lock(&areg.lock);
	for (int i = 0; i < NAREG; i++)
		if (areg.e[i].a == (uintptr_t)a && areg.e[i].tid != me &&
		    tid_alive(areg.e[i].tid)) {
			who = areg.e[i].tid;
			if (slot)
				*slot = areg.e[i].slot;
			break;
		}
	pthread_mutex_unlock(&areg.lock);
	return who;
}

static void areg_note(struct thr *t, const void *a, int add)
{
	int me = (int)RS0(SYS_gettid), other, oslot = -1, freei = -1;

	if (add && (other = areg_other(a, &oslot)))
		say("diag AREA-SHARED: tid %d (slot %d, %s) registered area %p, which live tid %d (slot %d) registered and never unregistered",
		    me, t ? t->idx : -1, t ? role_name[t->role] : "?", a, other, oslot);
	pthread_mutex_lock(&areg.lock);
	for (int i = 0; i < NAREG; i++) {
		if (areg.e[i].a == (uintptr_t)a && areg.e[i].tid == me) {
			areg.e[i].a = 0;
			areg.e[i].tid = 0;
		}
		if (freei < 0 && (!areg.e[i].a || !tid_alive(areg.e[i].tid)))
			freei = i;
	}
	if (add && freei >= 0) {
		areg.e[freei].a = (uintptr_t)a;
		areg.e[freei].tid = me;
		areg.e[freei].slot = t ? t->idx : -1;
	}
	pthread_mutex_unlock(&areg.lock);
}

static int area_shared(struct thr *t);

/* Everything a rogue return knows, before rogue_return() leaves. */
static void rogue_detail(const char *what, struct thr *t, int exp_tid, const struct chain *c)
{
	char b[1400], d1[200], d2[200];
	struct thr *s = t_self;
	struct threadlet_area *ra = t ? t->rawarea : NULL;
	int n, other = 0, oslot = -1;

	if (ra)
		other = areg_other(ra, &oslot);
	n = snprintf(b, sizeof(b),
		     "diag ROGUE %s: gettid %d, expected %d; stack's slot %d (%s tid0 %d alive %d op %s); "
		     "TLS slot %d (%s tid0 %d), pthread_self %s the stack's; "
		     "TLS area flags %x lib_flags %x ip %llx sp %llx ahu %llx; raw area %p (shared %d, flags %x ip %llx sp %llx ahu %llx; also registered by live tid %d slot %d); "
		     "stack slot: %s; TLS slot: %s; ring: ",
		     what, (int)RS0(SYS_gettid), exp_tid,
		     t ? t->idx : -1, t ? role_name[t->role] : "?", t ? t->tid0 : 0, t ? t->alive : -1,
		     t && t->op >= 0 && t->op < OP_NR ? op_name[t->op] : "?",
		     s ? s->idx : -1, s ? role_name[s->role] : "?", s ? s->tid0 : 0,
		     t && pthread_equal(pthread_self(), t->pself) ? "is" : "is not",
		     __threadlet_area.flags, __threadlet_area.lib_flags,
		     (u64)__threadlet_area.head_ip, (u64)__threadlet_area.head_sp,
		     (u64)__threadlet_area.ahu,
		     (void *)ra, t ? area_shared(t) : 0, ra ? ra->flags : 0,
		     ra ? (u64)ra->head_ip : 0, ra ? (u64)ra->head_sp : 0, ra ? (u64)ra->ahu : 0,
		     other, oslot,
		     dead_str(t ? t->idx : -1, d1, sizeof(d1)), dead_str(s ? s->idx : -1, d2, sizeof(d2)));
	if (n > 0 && (size_t)n < sizeof(b))
		n += ring_str(b + n, sizeof(b) - (size_t)n);
	if (c && n > 0 && (size_t)n < sizeof(b)) {
		n += snprintf(b + n, sizeof(b) - (size_t)n, "; chain nat %d tid %d:", c->nat, c->tid);
		for (int i = 0; i < c->nat && i < MAXA && (size_t)n < sizeof(b); i++)
			n += snprintf(b + n, sizeof(b) - (size_t)n, " [%u f%x r%lld]",
				      (unsigned int)c->at[i].nr, (unsigned int)c->at[i].flags, c->ret[i]);
	}
	say("%s", b);
}

/* ---- small helpers ---------------------------------------------------------- */

static void flight(struct thr *t, int op)
{
	t->op = op;
	if (g_sh && t->idx >= 0 && t->idx < MAX_THR)
		g_sh->flight[t->idx].op = op;
}

static int round_over(void)
{
	return g.stop || (g_sh->budget && __atomic_load_n(&g_sh->iters, __ATOMIC_RELAXED) >= g_sh->budget) ||
	       now_ns() >= g.deadline;
}

static void count_iter(void)
{
	__atomic_add_fetch(&g_sh->iters, 1, __ATOMIC_RELAXED);
}

static unsigned long stack_get(void)
{
	long long now = now_ns();
	unsigned long s = 0;
	int alloc = 0;

	pthread_mutex_lock(&g.stack_lock);
	if (g.sq_len && now - g.stack_q[g.sq_head].freed > 50000000LL) {
		s = g.stack_q[g.sq_head].top;
		g.sq_head = (g.sq_head + 1) % NSTACK;
		g.sq_len--;
	} else if (g.nstack_alloc < NSTACK) {
		alloc = ++g.nstack_alloc;
	}
	pthread_mutex_unlock(&g.stack_lock);
	if (alloc) {
		s = threadlet_stack_alloc(STACK_SZ);
		if (threadlet_err(s))
			s = 0;		/* no stack, as from an empty queue */
	}
	return s;
}

static void stack_put(unsigned long s)
{
	pthread_mutex_lock(&g.stack_lock);
	if (s && g.sq_len < NSTACK) {
		int i = (g.sq_head + g.sq_len) % NSTACK;

		g.stack_q[i].top = s;
		g.stack_q[i].freed = now_ns();
		g.sq_len++;
	}
	pthread_mutex_unlock(&g.stack_lock);
}

static unsigned long land_get(void)
{
	char *p;

	pthread_mutex_lock(&g.land_lock);
	if (g.nland >= NLAND) {
		pthread_mutex_unlock(&g.land_lock);
		return 0;
	}
	g.nland++;
	pthread_mutex_unlock(&g.land_lock);
	p = mmap(NULL, LAND_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? 0 : (unsigned long)p + LAND_SZ - 64;
}

static struct token *tok_alloc(struct rng *r)
{
	for (int i = 0; i < 48; i++) {
		struct token *t = &g.tok[below(r, NTOK)];
		int exp = T_FREE;

		if (__atomic_compare_exchange_n(&t->state, &exp, T_ISSUED, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return t;
	}
	return NULL;
}

static unsigned int g_chain_gen;

static struct chain *chain_alloc(struct rng *r)
{
	for (int i = 0; i < 48; i++) {
		struct chain *c = &g.ch[below(r, NCHAIN)];
		int exp = T_FREE;

		if (__atomic_compare_exchange_n(&c->state, &exp, T_ISSUED, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			c->gen = __atomic_add_fetch(&g_chain_gen, 1, __ATOMIC_RELAXED);
			return c;
		}
	}
	return NULL;
}

/* Register the calling thread's TLS area behind the library's back. */
static long tls_register_raw(void)
{
	long r = RS3(__NR_threadlet_register, &__threadlet_area, sizeof(struct threadlet_area), 0);

	if (!r)
		__threadlet_area.lib_flags &= ~FZ_LIB_UNREGISTERED;
	return r;
}

static long tls_unregister_raw(void)
{
	long r = RS3(__NR_threadlet_register, &__threadlet_area, sizeof(struct threadlet_area),
		     THREADLET_UNREGISTER);

	if (!r)
		__threadlet_area.lib_flags |= FZ_LIB_UNREGISTERED;
	return r;
}

/* The thread's raw area is in the MAP_SHARED pages: fork children may write it. */
static int area_shared(struct thr *t)
{
	char *a = (char *)t->rawarea;

	return a && g.sharedpage && a >= g.sharedpage && a < g.sharedpage + MAX_THR * 128;
}

/* Makes sure the library has registered this thread's TLS area. */
static void tls_register_lib(void)
{
	async_exec((struct syslet_uatom *)8, NULL);	/* registers, then EFAULT */
}

/*
 * A pointer of a random hostile kind, aligned to @align when it can be.
 * As an argument of an i386 call it is cut to 32 bits, and still no user
 * memory: the 64-bit ones end up in the unmapped first 8 MiB or at 0.
 */
static u64 bad_ptr(struct rng *r, unsigned int align)
{
	switch (below(r, 9)) {
	case 0: return 0;
	case 1: return (u64)(uintptr_t)g.unmapped + below(r, 4096 / align) * align;
	case 2: return FZ_KADDR + below(r, 1 << 20) * align;
	case 3: return 0xffffffffffffffffULL & ~(u64)(align - 1);
	case 4: return 0x8000000000000000ULL;
	case 5: return (u64)(uintptr_t)g.junk + below(r, 4096 / align) * align;
	case 6: return (u64)(uintptr_t)g.ropage + below(r, 4096 / align) * align;
	case 7: return FZ_USER_END + below(r, 4096 / align) * align;
	default: return (u64)(uintptr_t)g.junk + 4096 - align;	/* runs into the hole */
	}
}

static int pick_tid(struct rng *r)
{
	for (int i = 0; i < 8; i++) {
		struct thr *t = &g.thr[below(r, MAX_THR)];

		if (t->used && t->alive && t->curtid > 0)
			return t->curtid;
	}
	return g.pid;
}

/* ---- threadlet functions ---------------------------------------------------- */

enum {
	FN_NOOP, FN_SLEEP, FN_PIPE, FN_FUTEX, FN_POLL, FN_DISK, FN_FAULT, FN_MULTI,
	FN_NESTED, FN_SYSLET, FN_OFF, FN_SIGSELF, FN_SIGMASK, FN_SPIN, FN_FORK,
	FN_UNREG, FN_PTHREAD_EXIT, FN_RAW_EXIT, FN_EXEC, FN_EXIT_GROUP, FN_NR
};

static void fn_block(struct job *j, int kind)
{
	char c;

	switch (kind) {
	case FN_SLEEP:
		sleep_us(j->arg % 3000 + 1);
		break;
	case FN_PIPE:
		if (read(j->fd, &c, 1) < 0) {
			/* EINTR from the ticker: fine */
		}
		break;
	case FN_FUTEX: {
		struct timespec ts = { 0, (j->arg % 4000 + 100) * 1000 };

		syscall(SYS_futex, j->fword, FUTEX_WAIT_PRIVATE,
			__atomic_load_n(j->fword, __ATOMIC_RELAXED), &ts, NULL, 0);
		break;
	}
	case FN_POLL: {
		struct pollfd p = { .fd = j->fd, .events = POLLIN };

		poll(&p, 1, (int)(j->arg % 5) + 1);
		break;
	}
	case FN_DISK:
		if (g.diskfd >= 0) {
			char buf[512];
			off_t off = (off_t)(j->arg % (g.disklen / 4096)) * 4096;

			posix_fadvise(g.diskfd, off, 4096, POSIX_FADV_DONTNEED);
			if (pread(g.diskfd, buf, sizeof(buf), off) < 0) {
				/* fine */
			}
		} else {
			sleep_us(500);
		}
		break;
	case FN_FAULT:
		if (g.diskmap) {
			size_t off = (size_t)(j->arg % (g.disklen / 4096)) * 4096;

			madvise(g.diskmap + off, 4096, MADV_DONTNEED);
			posix_fadvise(g.diskfd, (off_t)off, 4096, POSIX_FADV_DONTNEED);
			(void)*(volatile char *)(g.diskmap + off);	/* a major fault */
		} else {
			sleep_us(300);
		}
		break;
	}
}

/*
 * Whether this task now runs with the identity of one of libthreadlet's
 * pool threads: the rest of a threadlet that went async on a library
 * head, claimed by a pool thread (a parker of ours parked there has a
 * slot in its TLS). Call it with the threadlet off: a cache-miss thread
 * stays one, so the answer holds until the thread ends. Such a thread
 * must not end with a raw exit: libthreadlet counts its pool threads
 * (pool->live), and async_head_exit() waits until each has left
 * tl_pool_main() or ended through pthread_exit() (whose destructor
 * counts it), so a raw exit would leave the orderly finale, or a
 * worker's op_libhead(), waiting for ever (the reaper's "finale stuck").
 */
static __attribute__((noipa)) int pool_identity(void)
{
	return !t_self && (__threadlet_area.lib_flags & FZ_LIB_CACHEMISS) &&
	       !(__threadlet_area.flags & THREADLET_ON);
}

static long fz_fn(void *data)
{
	struct job *j = data;
	uint32_t on = __threadlet_area.flags & THREADLET_ON;
	int cachemiss = !on && (__threadlet_area.lib_flags & FZ_LIB_CACHEMISS);
	int inplace = on && j->strict;
	int tid0 = (int)RS0(SYS_gettid);
	long r;

	switch (j->kind) {
	case FN_NOOP:
		break;
	case FN_SLEEP: case FN_PIPE: case FN_FUTEX: case FN_POLL:
	case FN_DISK: case FN_FAULT:
		fn_block(j, j->kind);
		break;
	case FN_MULTI:
		fn_block(j, FN_SLEEP);
		fn_block(j, FN_POLL);
		fn_block(j, FN_FUTEX);
		break;
	case FN_NESTED:
		r = threadlet_exec(fz_fn, j, j->stack2, j->ahu);
		/* In place or as a cache-miss thread: always refused. */
		if ((inplace || cachemiss) && r != -EBUSY)
			violation("threadlet_exec inside a threadlet returned %ld, not -EBUSY (%s)",
				  r, inplace ? "in place" : "cache-miss");
		fn_block(j, FN_SLEEP);
		break;
	case FN_SYSLET: {
		/*
		 * Any page fault that sleeps may hand the threadlet off, in
		 * this code as well as in a system call: whether it is still
		 * on is read right before the raw call, with only gettid()
		 * (which does not sleep) in between, and a TID that changed
		 * while this task became a cache-miss thread is a hand-off
		 * at a fault after the call, not a rogue return. The TID
		 * and the TLS still have to agree (checked below).
		 */
		uint32_t on0 = __atomic_load_n(&__threadlet_area.flags, __ATOMIC_RELAXED) & THREADLET_ON;
		int tid = (int)RS0(SYS_gettid);
		long ra = RS2(__NR_async_exec, g.nested, g.raw[0].ahu);
		int now = (int)RS0(SYS_gettid);
		int became_cm = !(__threadlet_area.flags & THREADLET_ON) &&
				(__threadlet_area.lib_flags & FZ_LIB_CACHEMISS);
		struct syslet_uatom *a = ra > 0 ? (struct syslet_uatom *)ra : NULL;

		if (now != tid && on0 && became_cm) {
			stat_inc(ST_FAULT_HANDOFF);
		} else if (now != tid) {
			say("diag FN_SYSLET: tid %d -> %d; threadlet %s before the call (flags %x now, lib_flags %x now); async_exec returned %ld",
			    tid, now, on0 ? "on" : "off", __threadlet_area.flags,
			    __threadlet_area.lib_flags, ra);
			rogue_detail("async_exec in a threadlet", t_self, tid, NULL);
			rogue_return("async_exec in a threadlet returned in a task with another TID");
		} else if (on0 && j->strict && ra != -EBUSY) {
			violation("async_exec inside a running threadlet returned %ld, not -EBUSY", ra);
		} else if (!(on0 && j->strict) && a && (a < g.nested || a > g.nested + 2)) {
			violation("nested async_exec returned %p, not an atom of its chain", (void *)a);
		}
		fn_block(j, FN_SLEEP);
		break;
	}
	case FN_OFF: {
		/*
		 * The job's fields are read before the flag: a load of *j may
		 * fault and sleep, and a hand-off there turns this task into
		 * a cache-miss thread between the test and the call (seed 8,
		 * round 192). From the flag's load to the call nothing sleeps.
		 */
		int strict;

		fn_block(j, FN_POLL);
		strict = j->strict;
		__asm__ volatile("" ::: "memory");
		on = __threadlet_area.flags & THREADLET_ON;
		cachemiss = !on && (__threadlet_area.lib_flags & FZ_LIB_CACHEMISS);
		inplace = on && strict;
		r = RS0(__NR_threadlet_off);
		if ((inplace && r != 1) || (cachemiss && r != 0))
			violation("raw threadlet_off in a threadlet (%s) returned %ld",
				  inplace ? "on" : "cache-miss", r);
		fn_block(j, FN_SLEEP);
		break;
	}
	case FN_SIGSELF:
		RS3(SYS_tgkill, g.pid, RS0(SYS_gettid), (j->arg & 1) ? SIGUSR1 : SIGUSR2);
		fn_block(j, FN_SLEEP);
		break;
	case FN_SIGMASK: {
		struct pollfd p = { .fd = j->fd, .events = POLLIN };
		struct timespec ts = { 0, 1000000 };
		sigset_t m;

		sigemptyset(&m);
		sigaddset(&m, SIGUSR2);
		ppoll(&p, 1, &ts, &m);
		break;
	}
	case FN_SPIN: {
		volatile unsigned long x = 0;

		for (long i = 0; i < 20000 + j->arg % 20000; i++)
			x += i;
		break;
	}
	case FN_FORK:
		/*
		 * A raw fork with the threadlet on: glibc's fork() would run its
		 * lock juggling as threadlet code, which may hand off half-way.
		 */
		if (RS0(SYS_fork) == 0) {
			if (j->arg & 1) {
				struct timespec ts = { 0, 2000000 };

				RS2(SYS_nanosleep, &ts, NULL);
			}
			RS1(SYS_exit_group, 0);
		}
		fn_block(j, FN_SLEEP);
		break;
	case FN_UNREG:
		fn_block(j, FN_SLEEP);
		on = __threadlet_area.flags & THREADLET_ON;
		inplace = on && j->strict;
		r = RS3(__NR_threadlet_register, &__threadlet_area, sizeof(struct threadlet_area),
			THREADLET_UNREGISTER);
		if (inplace && r != -EBUSY)
			violation("unregistering the area of a running threadlet returned %ld, not -EBUSY", r);
		if (!r)
			__threadlet_area.lib_flags |= FZ_LIB_UNREGISTERED;
		break;
	case FN_PTHREAD_EXIT:
		fn_block(j, (int)(j->arg % 2) ? FN_SLEEP : FN_NOOP);
		/*
		 * glibc's thread exit is user code that sleeps (locks, frees):
		 * with the threadlet still on it would hand off half-way and
		 * the head would go on with a torn-down thread. Disarm first;
		 * a cache-miss thread (not on) exits as what it is; one of the
		 * library's pool threads leaves its pool as it ends (the
		 * library's thread-specific data destructor).
		 */
		__threadlet_off_tls(__threadlet_area_tls_offset());
		RS0(__NR_threadlet_off);
		pthread_exit(NULL);
	case FN_RAW_EXIT:
		fn_block(j, (int)(j->arg % 2) ? FN_SLEEP : FN_NOOP);
		/* A raw exit runs no destructor: never a library pool thread. */
		if (pool_identity())
			break;
		exit_identity(DS_RAW_EXIT);
	case FN_EXEC: {
		char seed[32], *argv[] = { FZ_NAME, "--exec-child", seed, "1", NULL };

		fn_block(j, FN_SLEEP);
		snprintf(seed, sizeof(seed), "%llu", (u64)j->arg);
		snprintf(g_sh->finale, sizeof(g_sh->finale), "exec from a threadlet");
		execv(g.self_exe, argv);
		break;
	}
	case FN_EXIT_GROUP:
		fn_block(j, FN_SLEEP);
		snprintf(g_sh->finale, sizeof(g_sh->finale), "exit_group from a threadlet");
		RS1(SYS_exit_group, 0);
		break;
	}
	/* No system call in these kinds: a hand-off at a page fault. */
	if ((j->kind == FN_NOOP || j->kind == FN_SPIN) && (int)RS0(SYS_gettid) != tid0)
		stat_inc(ST_FAULT_HANDOFF);
	/*
	 * A hand-off moves TID and TLS together: whoever we are, both agree.
	 * The threadlet may still be on, and a page fault that sleeps (on
	 * mmap_lock, or in reclaim under memory pressure) hands it off
	 * between any two reads: the TLS is compared with a TID read before
	 * and after it that did not change meanwhile. Once handed off, it
	 * stays the cache-miss thread, so the loop ends.
	 */
	for (;;) {
		int tid1 = (int)RS0(SYS_gettid);
		struct thr *me = t_self;
		int tid2 = (int)RS0(SYS_gettid);
		char d[160];

		if (tid1 != tid2)
			continue;
		if (me && me->tid0 && me->tid0 != tid1)
			violation("threadlet (fn %d) runs with the TLS of %s %d but TID %d; %s",
				  j->kind, role_name[me->role], me->tid0, tid1,
				  dead_str(me->idx, d, sizeof(d)));
		break;
	}
	return complete_threadlet_fn(j->event, j->ahu);
}

static int pick_fn(struct rng *r)
{
	static const uint8_t w[FN_NR] = {
		[FN_NOOP] = 10, [FN_SLEEP] = 20, [FN_PIPE] = 12, [FN_FUTEX] = 8,
		[FN_POLL] = 6, [FN_DISK] = 6, [FN_FAULT] = 5, [FN_MULTI] = 6,
		[FN_NESTED] = 3, [FN_SYSLET] = 3, [FN_OFF] = 3, [FN_SIGSELF] = 3,
		[FN_SIGMASK] = 2, [FN_SPIN] = 3, [FN_FORK] = 1, [FN_UNREG] = 1,
		[FN_PTHREAD_EXIT] = 1, [FN_RAW_EXIT] = 1,
	};
	unsigned int sum = 0, x;
	int i;

	for (i = 0; i < FN_NR; i++)
		if (!EXCLUDED(XF_THREXIT) || (i != FN_PTHREAD_EXIT && i != FN_RAW_EXIT))
			sum += w[i];
	x = (unsigned int)below(r, sum);
	for (i = 0; i < FN_NR; i++) {
		if (EXCLUDED(XF_THREXIT) && (i == FN_PTHREAD_EXIT || i == FN_RAW_EXIT))
			continue;
		if (x < w[i])
			return i;
		x -= w[i];
	}
	return FN_NOOP;
}

static void job_fill(struct job *j, struct rng *r, int kind, struct async_head_user *ahu,
		     void *event, int strict)
{
	memset(j, 0, sizeof(*j));
	j->kind = kind;
	j->strict = strict;
	j->fd = g.pipes[below(r, NPIPES)][0];
	j->fword = &g.futex[below(r, NFUTEX)];
	j->arg = rnd_long(r);
	j->ahu = ahu;
	j->event = event;
}

/* ---- landing: a head handed off by a raw threadlet_on() ---------------------- */

void fz_landed(void)
{
	/* The head's area moved here, disarmed by the hand-off. */
	long r = RS0(__NR_threadlet_off);
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	struct thr *s = t_self;

	if (s && !(s->land && sp < s->land && sp >= s->land - LAND_SZ)) {
		int owner = -1;
		char rb[300];

		for (int i = 0; i < MAX_THR; i++)
			if (g.thr[i].land && sp < g.thr[i].land && sp >= g.thr[i].land - LAND_SZ)
				owner = i;
		rb[0] = 0;
		ring_str(rb, sizeof(rb));
		say("diag FOREIGN-LANDING: tid %d (TLS slot %d %s tid0 %d, its land %lx, raw area %p shared %d) landed on sp %lx: landing stack of slot %d (%s tid0 %d, raw area %p); ring %s",
		    (int)RS0(SYS_gettid), s->idx, role_name[s->role], s->tid0, s->land,
		    (void *)s->rawarea, area_shared(s), (unsigned long)sp, owner,
		    owner >= 0 ? role_name[g.thr[owner].role] : "?",
		    owner >= 0 ? g.thr[owner].tid0 : 0,
		    owner >= 0 ? (void *)g.thr[owner].rawarea : NULL, rb);
	}

	if (r != 0)
		violation("a head handed off by a raw threadlet_on found its area still on (%ld)", r);
	stat_inc(ST_LANDED);
	exit_identity(DS_LANDED);
}

/* ---- operations -------------------------------------------------------------- */

static void check_exec_ret(long r, const char *what)
{
	if (r != 0 && r != 1 && r != -EINVAL && r != -EBUSY && r != -EFAULT && r != -ENOMEM)
		violation("%s returned %ld", what, r);
}

/* threadlet_exec on a library head: the checked path. */
static void op_tl_exec(struct thr *t, int hostile)
{
	struct rng *r = &t->rng;
	struct token *tok = tok_alloc(r);
	struct async_head_user *ahu;
	unsigned long stack, xstack;
	int h = -1, checked = 0, kind;
	int tid = (int)RS0(SYS_gettid);
	pthread_t self = pthread_self();
	void *event;
	long ret;

	/*
	 * With a raw area registered, libthreadlet's syscall form would arm
	 * that area with its own frame and never disarm it: skip. (The vDSO
	 * form only writes the TLS area, which the kernel then ignores.)
	 */
	if (t->rawarea && g.cfg.force_syscall)
		tok = NULL;
	if (!tok)
		return;
	stack = stack_get();
	if (!stack) {
		__atomic_store_n(&tok->state, T_FREE, __ATOMIC_RELEASE);
		return;
	}
	kind = pick_fn(r);
	if (!hostile) {
		h = (int)below(r, g.cfg.nlib);
		ahu = &lib_ahu[h];
		checked = 1;
	} else {
		switch (below(r, 6)) {
		case 0: case 1: case 2:
			ahu = g.raw[below(r, g.cfg.nraw)].ahu;
			break;
		case 3:
			ahu = &never_ahu[0];
			break;
		case 4:
			ahu = (struct async_head_user *)((char *)&lib_ahu[0] + 4);
			break;
		default:
			ahu = (struct async_head_user *)(uintptr_t)bad_ptr(r, 8);
			break;
		}
	}
	event = checked ? (void *)tok : (chance(r, 500) ? NULL : (void *)(uintptr_t)(rnd(r) | 1));
	job_fill(&tok->job, r, kind, ahu, event, !t->rawarea);
	if (hostile && chance(r, 200))
		tok->job.ahu = g.raw[below(r, g.cfg.nraw)].ahu;	/* complete elsewhere */
	if (kind == FN_NESTED && !(tok->job.stack2 = stack_get()))
		tok->job.kind = FN_SLEEP;
	if (g.exec_req && t->role == R_WORKER && chance(r, 300)) {
		tok->job.kind = FN_EXEC;
		tok->job.arg = rnd_long(r) >> 1;
	} else if (g.exit_req && t->role == R_WORKER && chance(r, 300)) {
		tok->job.kind = FN_EXIT_GROUP;
	}
	tok->head = h;
	tok->stack = stack;

	xstack = stack;
	if (hostile && chance(r, 150)) {
		static const unsigned long bad[] = { 0, 8, 4095, 4096 + 8 };

		xstack = chance(r, 500) ? bad[below(r, 4)] : stack - 8;
	}
	stat_inc(ST_TL_EXEC);
	ret = threadlet_exec(fz_fn, &tok->job, xstack, hostile && chance(r, 50) ? NULL : ahu);
	if ((int)RS0(SYS_gettid) != tid) {
		rogue_detail(hostile ? "threadlet_exec(hostile)" : "threadlet_exec", t, tid, NULL);
		rogue_return("threadlet_exec returned in a task with another TID");
	}
	if (pthread_self() != self)
		violation("threadlet_exec: pthread_self() changed");
	check_exec_ret(ret, "threadlet_exec");
	if (xstack != stack && ret >= 0 && (xstack & 15))
		violation("threadlet_exec with a misaligned stack ran the function (%ld)", ret);

	if (ret == 0) {
		stat_inc(ST_TL_ASYNC);
		if (checked) {
			int exp = T_ISSUED;

			if (!__atomic_compare_exchange_n(&tok->state, &exp, T_ASYNC, 0,
							 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				/* Popped already (T_POPPED): done. */
				if (tok->job.stack2)
					stack_put(tok->job.stack2);
				__atomic_store_n(&tok->state, T_FREE, __ATOMIC_RELEASE);
				stack_put(stack);
			}
		} else {
			__atomic_store_n(&tok->state, T_LEAKED, __ATOMIC_RELEASE);
		}
		return;
	}
	/* Ran in place, or did not run: nothing may have been posted. */
	if (ret == 1)
		stat_inc(ST_TL_INPLACE);
	if (checked && __atomic_load_n(&tok->state, __ATOMIC_ACQUIRE) != T_ISSUED)
		violation("threadlet_exec returned %ld but its event was posted", ret);
	if (tok->job.stack2)
		stack_put(tok->job.stack2);
	stack_put(stack);
	__atomic_store_n(&tok->state, T_FREE, __ATOMIC_RELEASE);
}

/* ---- syslet chains ----------------------------------------------------------- */

/*
 * System calls a random atom must never make: they reach beyond the round.
 * Atoms are calls of the caller's ABI: for a 32-bit task, i386 numbers.
 */
static int nr_banned(unsigned int nr)
{
	static const uint16_t ban[] = {
#ifdef __x86_64__
		3, 9, 10, 11, 12, 13, 14, 25, 28, 30, 31, 33, 37, 38, 62, 80, 81, 101, 103,
		105, 106, 109, 112, 113, 114, 116, 117, 119, 122, 123, 126, 129, 131, 135,
		141, 142, 144, 151, 153, 155, 157, 158, 159, 160, 161, 163, 164, 165, 166,
		167, 168, 169, 170, 171, 175, 176, 200, 203, 206, 216, 218, 222, 223, 227,
		234, 237, 238, 246, 251, 256, 272, 273, 279, 292, 297, 298, 300, 301, 302,
		305, 308, 310, 311, 313, 314, 317, 320, 321, 323, 329, 334, 424, 425, 426,
		427, 428, 429, 430, 431, 432, 433, 436, 438, 440, 442, 443, 446, 447, 448,
		450,
#else
		/*
		 * The same calls by their i386 numbers, and the i386 calls
		 * with the same effects: the 16- and 32-bit uid calls, the old
		 * signal calls (signal, sigaction, sigprocmask, ssetmask),
		 * mmap2, ipc (shmat, shmctl), umount, stime, nice, the time64
		 * setters, and set_thread_area (the TLS descriptor that %gs
		 * uses, as arch_prctl is %fs on x86-64).
		 */
		6, 12, 21, 22, 23, 25, 26, 27, 34, 37, 45, 46, 48, 51, 52, 57, 61, 63, 66,
		67, 69, 70, 71, 74, 75, 79, 81, 87, 88, 90, 91, 97, 103, 104, 111, 115, 117,
		121, 124, 125, 126, 128, 129, 133, 136, 138, 139, 152, 154, 156, 163, 164,
		170, 172, 174, 175, 178, 185, 186, 192, 203, 204, 206, 208, 210, 213, 214,
		215, 216, 217, 219, 238, 241, 243, 245, 257, 258, 259, 260, 264, 270, 274,
		276, 283, 289, 294, 310, 311, 317, 330, 335, 336, 338, 339, 340, 343, 346,
		347, 348, 350, 351, 354, 357, 374, 380, 384, 386, 396, 397, 404, 405, 409,
		424, 425, 426, 427, 428, 429, 430, 431, 432, 433, 436, 438, 440, 442, 443,
		446, 447, 448, 450,
#endif
	};

	for (unsigned int i = 0; i < sizeof(ban) / sizeof(ban[0]); i++)
		if (ban[i] == nr)
			return 1;
	return 0;
}

static const unsigned int forbidden_nrs[] = {
	SYS_exit, SYS_exit_group, SYS_execve, SYS_execveat, SYS_fork, SYS_vfork,
	SYS_clone, SYS_clone3, SYS_rt_sigreturn,
#ifdef __i386__
	SYS_sigreturn,
#endif
	__NR_threadlet_register,
	__NR_threadlet_on, __NR_threadlet_off, __NR_async_register,
	__NR_async_thread, __NR_async_wait, __NR_async_exec, __NR_async_complete,
};

enum {
	A_GETPID, A_GETPPID, A_GETTID, A_YIELD, A_NANOSLEEP, A_READPIPE, A_WRITEPIPE,
	A_FUTEX, A_POLL, A_UMEM, A_PREAD, A_FADVISE, A_GETCWD, A_FORBIDDEN, A_BADNR,
	A_BADFLAGS, A_RANDOM, A_NR
};

/* Fills atom @i of @c with a tame (or, with @random, any allowed) call. */
static void atom_fill(struct chain *c, int i, struct rng *r, int kind, struct thr *t)
{
	struct syslet_uatom *a = &c->at[i];
	u64 *v = c->val[i];
	unsigned int nr = SYS_getpid, nargs = 0;

	memset(a, 0, sizeof(*a));
	c->expect[i] = X_ANY;
	switch (kind) {
	case A_GETPID:
		nr = SYS_getpid;
		c->expect[i] = X_GETPID;
		break;
	case A_GETPPID:
		nr = SYS_getppid;
		c->expect[i] = X_GETPPID;
		break;
	case A_GETTID:
		nr = SYS_gettid;
		c->expect[i] = X_GETTID;
		break;
	case A_YIELD:
		nr = SYS_sched_yield;
		c->expect[i] = X_ZERO;
		break;
	case A_NANOSLEEP:
		nr = SYS_nanosleep;
		c->ts.tv_sec = 0;
		c->ts.tv_nsec = (long)(below(r, 2000) + 20) * 1000;
		v[0] = (u64)(uintptr_t)&c->ts;
		v[1] = 0;
		nargs = 2;
		c->expect[i] = X_SLEEP;
		break;
	case A_READPIPE:
		nr = SYS_read;
		v[0] = (u64)g.pipes[below(r, NPIPES)][0];
		v[1] = (u64)(uintptr_t)c->buf;
		v[2] = 1;
		nargs = 3;
		break;
	case A_WRITEPIPE:
		nr = SYS_write;
		v[0] = (u64)g.pipes[below(r, NPIPES)][1];
		v[1] = (u64)(uintptr_t)c->buf;
		v[2] = 1;
		nargs = 3;
		break;
	case A_FUTEX:
		nr = SYS_futex;
		c->ts.tv_sec = 0;
		c->ts.tv_nsec = (long)(below(r, 3000) + 50) * 1000;
		v[0] = (u64)(uintptr_t)&g.futex[below(r, NFUTEX)];
		v[1] = FUTEX_WAIT_PRIVATE;
		v[2] = *(uint32_t *)(uintptr_t)v[0];
		v[3] = (u64)(uintptr_t)&c->ts;
		nargs = 4;
		break;
	case A_POLL:
		nr = SYS_poll;
		c->pfd.fd = g.pipes[below(r, NPIPES)][0];
		c->pfd.events = POLLIN;
		v[0] = (u64)(uintptr_t)&c->pfd;
		v[1] = 1;
		v[2] = below(r, 4);
		nargs = 3;
		break;
	case A_UMEM:
		nr = __NR_umem_add;
		v[0] = (u64)(uintptr_t)&c->val[i][5];
		nargs = 1 + arg64(&v[1], below(r, 100));
		c->val[i][5] = below(r, 1000);
		break;
	case A_PREAD:
		if (g.diskfd < 0) {
			nr = SYS_getpid;
			c->expect[i] = X_GETPID;
			break;
		}
		nr = SYS_pread64;
		v[0] = (u64)g.diskfd;
		v[1] = (u64)(uintptr_t)c->buf;
		v[2] = sizeof(c->buf);
		nargs = 3 + arg64(&v[3], below(r, g.disklen / 4096) * 4096);
		break;
	case A_FADVISE:
		if (g.diskfd < 0) {
			nr = SYS_sched_yield;
			break;
		}
		nr = SYS_fadvise64;
		v[0] = (u64)g.diskfd;
		nargs = 1 + arg64(&v[1], below(r, g.disklen / 4096) * 4096);
		v[nargs++] = 4096 * (1 + below(r, 8));
		v[nargs++] = POSIX_FADV_DONTNEED;
		c->expect[i] = X_ZERO;
		break;
	case A_GETCWD:
		nr = SYS_getcwd;
		v[0] = (u64)(uintptr_t)c->buf;
		v[1] = sizeof(c->buf);
		nargs = 2;
		break;
	case A_FORBIDDEN:
		nr = forbidden_nrs[below(r, sizeof(forbidden_nrs) / sizeof(forbidden_nrs[0]))];
		for (nargs = 0; nargs < 3; nargs++)
			v[nargs] = 0;
		c->expect[i] = X_EPERM;
		break;
	case A_BADNR: {
		static const unsigned int bad[] = { 512, 1000, 0x40000000 | 39, 0x7fffffff,
						    0x80000000, 0xffffffff, 459 + 600 };

		nr = bad[below(r, sizeof(bad) / sizeof(bad[0]))];
		c->expect[i] = X_EINVAL;
		break;
	}
	case A_BADFLAGS:
		nr = SYS_getpid;
		do	/* one flag the kernel does not know */
			a->flags = (uint32_t)(1U << below(r, 32));
		while (a->flags & SYSLET_ALL_FLAGS);
		c->expect[i] = X_EINVAL;
		break;
	case A_RANDOM: {
		static const u64 benign[] = { 0, 1, 2, 3, 4, 8, 16, 64, 4096, 1000 };

		do
			nr = (unsigned int)below(r, 451);
		while (nr_banned(nr));
		nargs = 6;
		for (int k = 0; k < 6; k++) {
			switch (below(r, 4)) {
			case 0:
				v[k] = (u64)(uintptr_t)t->scratch + below(r, 3) * 1024;
				break;
			case 1:
				v[k] = (u64)g.pipes[below(r, NPIPES)][below(r, 2)];
				break;
			default:
				v[k] = benign[below(r, sizeof(benign) / sizeof(benign[0]))];
				break;
			}
		}
		break;
	}
	}
	a->nr = nr;
	a->ret_ptr = (u64)(uintptr_t)&c->ret[i];
	for (unsigned int k = 0; k < nargs && k < 6; k++)
		a->arg_ptr[k] = (u64)(uintptr_t)&v[k];
	c->ret[i] = SENTINEL;
}

static int pick_atom(struct rng *r, int hostile, int random_ok)
{
	static const uint8_t w[A_NR] = {
		[A_GETPID] = 10, [A_GETPPID] = 4, [A_GETTID] = 6, [A_YIELD] = 3,
		[A_NANOSLEEP] = 14, [A_READPIPE] = 8, [A_WRITEPIPE] = 4, [A_FUTEX] = 6,
		[A_POLL] = 5, [A_UMEM] = 5, [A_PREAD] = 5, [A_FADVISE] = 3, [A_GETCWD] = 2,
		[A_FORBIDDEN] = 4, [A_BADNR] = 2, [A_BADFLAGS] = 2, [A_RANDOM] = 8,
	};
	unsigned int sum = 0, x;
	int i, n = random_ok ? A_NR : A_RANDOM;

	(void)hostile;
	for (i = 0; i < n; i++)
		sum += w[i];
	x = (unsigned int)below(r, sum);
	for (i = 0; i < n; i++) {
		if (x < w[i])
			return i;
		x -= w[i];
	}
	return A_GETPID;
}

static int in_chain(u64 p, struct chain **cp, int *idx);

/*
 * Builds a chain in @c. Tame chains are linear or have one counted loop;
 * hostile ones get random flags, bad pointers, jumps into junk, and (on raw
 * heads, where a signal can always stop them) random calls and endless loops.
 */
static void chain_build(struct chain *c, struct rng *r, struct thr *t, int hostile, int rawhead)
{
	int n = 1 + (int)below(r, MAXA);
	int i;

	c->nat = n;
	c->linear = 1;
	c->loop_at = -1;
	c->checked = !hostile && !t->nocheck;
	memset(c->buf, 0, sizeof(c->buf));
	for (i = 0; i < n; i++) {
		atom_fill(c, i, r, pick_atom(r, hostile, hostile && rawhead && !EXCLUDED(XF_RANDOM)), t);
		c->at[i].next = i + 1 < n ? (u64)(uintptr_t)&c->at[i + 1] : 0;
		if (chance(r, 100))
			c->at[i].flags |= SYSLET_ASYNC;
		else if (chance(r, 60))
			c->at[i].flags |= SYSLET_SYNC;
	}
	/* The terminator catches SKIP_TO_NEXT_ON_STOP off the end. */
	atom_fill(c, MAXA, r, A_GETPID, t);
	c->at[MAXA].ret_ptr = 0;

	if (n >= 3 && chance(r, 250)) {
		/* A counted loop: atom j counts down and jumps back to b. */
		int b = (int)below(r, n - 2), j = b + 1 + (int)below(r, n - b - 2);

		atom_fill(c, j, r, A_UMEM, t);
		c->ctr = 1 + below(r, 20);
		c->val[j][0] = (u64)(uintptr_t)&c->ctr;
		arg64(&c->val[j][1], (u64)-1LL);
		c->at[j].flags = SYSLET_STOP_ON_ZERO | SYSLET_SKIP_TO_NEXT_ON_STOP;
		c->at[j].next = (u64)(uintptr_t)&c->at[b];
		c->expect[j] = X_UMEMCTR;
		c->linear = 0;
		c->loop_at = j;
		for (i = b; i < j; i++)
			if (c->expect[i] == X_EPERM || c->expect[i] == X_EINVAL)
				atom_fill(c, i, r, A_GETPID, t), c->at[i].next = (u64)(uintptr_t)&c->at[i + 1];
	}
	if (!hostile) {
		if (chance(r, 100)) {
			i = (int)below(r, n);
			c->at[i].flags |= SYSLET_STOP_ON_NEGATIVE;
			c->linear = 0;
		}
		return;
	}
	c->linear = 0;
	/*
	 * Buffers the kernel writes move to this thread's scratch, which ends
	 * in a guard page: below, a length may become any number (an
	 * argument pointer aimed at a result), and c->buf or c->pfd would
	 * then overflow into other chains.
	 */
	for (i = 0; i <= MAXA; i++)
		for (int k = 0; k < 6 && i < MAXA; k++) {
			if (c->val[i][k] == (u64)(uintptr_t)c->buf)
				c->val[i][k] = (u64)(uintptr_t)t->scratch + SCRATCH_SZ / 2;
			else if (c->val[i][k] == (u64)(uintptr_t)&c->pfd)
				c->val[i][k] = (u64)(uintptr_t)t->scratch + SCRATCH_SZ - 4096;
		}
	*(struct pollfd *)(t->scratch + SCRATCH_SZ - 4096) = c->pfd;
	for (i = 0; i < n; i++) {
		struct syslet_uatom *a = &c->at[i];

		if (chance(r, 150))
			a->flags |= (uint32_t)(1U << below(r, 8));
		if (chance(r, 40))
			a->flags = (uint32_t)rnd(r);
		if (chance(r, 80))
			a->next = bad_ptr(r, 8);
		else if (chance(r, 50))
			a->next = (u64)(uintptr_t)g.junk + below(r, 4096);	/* unaligned junk */
		else if (rawhead && chance(r, 20))
			a->next = (u64)(uintptr_t)&c->at[below(r, i + 1)];	/* endless */
		if (chance(r, 60))
			a->arg_ptr[below(r, 6)] = bad_ptr(r, chance(r, 800) ? 8 : 1);
		if (chance(r, 40))
			a->arg_ptr[below(r, 6)] = (u64)(uintptr_t)&c->ret[below(r, n)];
		if (chance(r, 50))
			a->ret_ptr = bad_ptr(r, 8);
		else if (chance(r, 40))
			a->ret_ptr = 0;
		else if (chance(r, 30))	/* rewrite a later atom's argument pointer */
			a->ret_ptr = (u64)(uintptr_t)&c->at[below(r, n)].arg_ptr[below(r, 6)];
		else if (chance(r, 30))
			a->ret_ptr = (u64)(uintptr_t)&c->at[below(r, n)].user_data;
		if (chance(r, 60))
			a->flags |= SYSLET_NO_COMPLETE;
		if (chance(r, 60)) {	/* go on with an atom taken from c->q */
			a->flags |= SYSLET_NEXT_QUEUE;
			a->next = chance(r, 10) ? bad_ptr(r, 4) : (u64)(uintptr_t)&c->q;
		}
		/*
		 * A random flags word may name a queue at the next atom: read
		 * as one, an atom's ret_ptr (into c->ret) is the entries and
		 * its flags the head, and entries[head] lies in another chain,
		 * whose atoms the kernel then rightly runs (seed 24, round 8).
		 * Queues in our chains are c->q only.
		 */
		if ((a->flags & SYSLET_NEXT_QUEUE) && a->next != (u64)(uintptr_t)&c->q &&
		    in_chain(a->next, &(struct chain *){ NULL }, &(int){ 0 }))
			a->flags &= ~SYSLET_NEXT_QUEUE;
	}
	/* At most four takes: a queue of the chain's atoms adds no endless loop. */
	c->q = (struct syslet_queue){ .head = (uint32_t)below(r, 3), .nr = (uint32_t)below(r, 5),
		.entries = chance(r, 10) ? bad_ptr(r, 8) : (u64)(uintptr_t)c->qent };
	for (i = 0; i < 4; i++)
		c->qent[i] = chance(r, 5) ? bad_ptr(r, 8) : (u64)(uintptr_t)&c->at[below(r, n)];
}

static int in_chain(u64 p, struct chain **cp, int *idx)
{
	u64 base = (u64)(uintptr_t)g.ch, off;
	struct chain *c;

	if (p < base || p >= base + (u64)NCHAIN * sizeof(struct chain))
		return 0;
	c = &g.ch[(p - base) / sizeof(struct chain)];
	off = p - (u64)(uintptr_t)c->at;
	if (p < (u64)(uintptr_t)c->at || off % sizeof(struct syslet_uatom) ||
	    off / sizeof(struct syslet_uatom) > MAXA)
		return -1;
	*cp = c;
	*idx = (int)(off / sizeof(struct syslet_uatom));
	return 1;
}

/*
 * Checks a finished tame chain whose final atom is @f. @inplace: it ran in
 * the calling task, whose TID @tid the gettid atoms must have seen.
 */
static void chain_check(struct chain *c, int f, int inplace, int tid)
{
	for (int i = 0; i <= MAXA; i++) {
		long long v = c->ret[i];

		if (i == MAXA && !c->at[MAXA].ret_ptr)
			continue;
		if (i >= c->nat && i != MAXA)
			continue;
		if (v == SENTINEL || v == -EINTR)
			continue;
		switch (c->expect[i]) {
		case X_GETPID:
			if (v != g.pid)
				violation("syslet getpid atom %d returned %lld, not %d", i, v, g.pid);
			break;
		case X_GETPPID:
			if (v != g.ppid)
				violation("syslet getppid atom %d returned %lld, not %d", i, v, g.ppid);
			break;
		case X_GETTID:
			if (inplace && v != tid)
				violation("syslet gettid atom %d returned %lld in place, not the caller's %d",
					  i, v, tid);
			if (v <= 0)
				violation("syslet gettid atom %d returned %lld", i, v);
			break;
		case X_ZERO:
			if (v != 0)
				violation("syslet atom %d (nr %u) returned %lld, not 0", i, c->at[i].nr, v);
			break;
		case X_SLEEP:
			if (v != 0)
				violation("syslet nanosleep atom %d returned %lld", i, v);
			break;
		case X_EPERM:
			if (v != -EPERM)
				violation("forbidden syslet atom %d (nr %u) returned %lld, not -EPERM",
					  i, c->at[i].nr, v);
			break;
		case X_EINVAL:
			if (v != -EINVAL)
				violation("malformed syslet atom %d (nr %#x flags %#x) returned %lld, not -EINVAL",
					  i, c->at[i].nr, c->at[i].flags, v);
			break;
		case X_UMEMCTR:
			if (f > c->loop_at && f != c->loop_at && (v != 0 || c->ctr != 0))
				violation("syslet loop left with counter %llu (atom said %lld)", c->ctr, v);
			break;
		}
	}
	if (c->linear) {
		/* Every atom up to the final one ran; none after it. */
		for (int i = 0; i < c->nat; i++) {
			if (i <= f && c->ret[i] == SENTINEL)
				violation("linear chain: atom %d of %d (final %d) has no result", i, c->nat, f);
			if (i > f && c->ret[i] != SENTINEL)
				violation("linear chain: atom %d after the final %d has a result %lld",
					  i, f, c->ret[i]);
		}
		/* Only a signal, or an atom the kernel refused, ends it early. */
		if (f < c->nat - 1 && c->ret[f] != -EINTR &&
		    !(c->expect[f] == X_EPERM && c->ret[f] == -EPERM) &&
		    !(c->expect[f] == X_EINVAL && c->ret[f] == -EINVAL))
			violation("linear chain of %d ended early at atom %d with %lld", c->nat, f, c->ret[f]);
	}
}

static void op_syslet(struct thr *t, int hostile)
{
	struct rng *r = &t->rng;
	struct chain *c = chain_alloc(r);
	struct async_head_user *ahu;
	struct syslet_uatom *first, *ret;
	int h = -1, rawhead = 0, tid = (int)RS0(SYS_gettid), f, e;

	if (!c)
		return;
	if (!hostile || chance(r, 400)) {
		h = (int)below(r, g.cfg.nlib);
		ahu = &lib_ahu[h];
	} else {
		rawhead = 1;
		ahu = chance(r, 900) ? g.raw[below(r, g.cfg.nraw)].ahu :
				       (struct async_head_user *)(uintptr_t)bad_ptr(r, 8);
	}
	chain_build(c, r, t, hostile, rawhead);
	c->head = h;
	c->tid = tid;
	c->hostile = hostile;
	c->rawhead = rawhead;
	first = &c->at[0];
	if (hostile && chance(r, 60))
		first = (struct syslet_uatom *)(uintptr_t)bad_ptr(r, chance(r, 500) ? 8 : 1);
	stat_inc(ST_SYSLET);
	ret = async_exec(first, ahu);
	e = -threadlet_ptr_err(ret);
	if ((int)RS0(SYS_gettid) != tid) {
		rogue_detail(hostile ? "async_exec(hostile)" : "async_exec", t, tid, c);
		rogue_return("async_exec returned in a task with another TID");
	}
	if (!ret) {
		/* Went async: the final atom will be posted (unless NO_COMPLETE). */
		int exp = T_ISSUED;

		stat_inc(ST_SYSLET_ASYNC);
		if (!c->checked || rawhead) {
			__atomic_store_n(&c->state, T_LEAKED, __ATOMIC_RELEASE);
			return;
		}
		if (!__atomic_compare_exchange_n(&c->state, &exp, T_ASYNC, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			__atomic_store_n(&c->state, T_FREE, __ATOMIC_RELEASE);
		return;
	}
	if (e) {
		if (e != EINVAL && e != EBUSY && e != EFAULT && e != ENOMEM)
			violation("async_exec failed with errno %d", e);
		if (first == &c->at[0] && c->checked && e == EFAULT)
			violation("async_exec of a readable chain failed with EFAULT");
		goto done;
	}
	/* Ran in place: the final atom is one of ours. */
	{
		struct chain *rc;

		if (in_chain((u64)(uintptr_t)ret, &rc, &f) != 1) {
			u64 jb = (u64)(uintptr_t)g.junk, rv = (u64)(uintptr_t)ret;

			if (!hostile || !(rv >= jb && rv < jb + 3 * 4096))
				if (!hostile || in_chain(rv, &rc, &f) == 0)
					violation("async_exec returned %p, not an atom of its chain",
						  (void *)ret);
			goto done;
		}
		if (rc != c) {
			violation("async_exec returned atom %d of another chain: chain %d gen %u "
				  "(hostile %d raw %d tid %d state %d), not chain %d gen %u "
				  "(hostile %d raw %d tid %d)", f, (int)(rc - g.ch), rc->gen,
				  rc->hostile, rc->rawhead, rc->tid, rc->state, (int)(c - g.ch),
				  c->gen, hostile, rawhead, c->tid);
			rogue_detail("async_exec returned another chain's atom", t, tid, c);
			goto done;
		}
	}
	if (c->checked)
		chain_check(c, f, 1, tid);
	if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != T_ISSUED) {
		char rets[160];
		int n = 0;

		for (int i = 0; i < c->nat && n < (int)sizeof(rets) - 24; i++)
			n += snprintf(rets + n, sizeof(rets) - n, " %u:%#x:%lld", c->at[i].nr,
				      c->at[i].flags, c->ret[i]);
		violation("async_exec ran in place (final atom %d of %d) but atom %d of its chain was "
			  "posted; nr:flags:ret%s", f, c->nat, c->popped_at, rets);
	}
done:
	__atomic_store_n(&c->state, T_FREE, __ATOMIC_RELEASE);
}

/* ---- the consumer: pops every ring ------------------------------------------ */

static void check_event(int h, u64 ev)
{
	u64 tb = (u64)(uintptr_t)g.tok, jb = (u64)(uintptr_t)g.junk;
	struct chain *c;
	int f, k;

	stat_inc(ST_POPPED);
	if (!ev) {
		violation("lib head %d: an empty slot was published (event 0)", h);
		return;
	}
	if (ev >= tb && ev < tb + (u64)NTOK * sizeof(struct token)) {
		struct token *t = &g.tok[(ev - tb) / sizeof(struct token)];
		int s;

		if ((ev - tb) % sizeof(struct token)) {
			violation("lib head %d: misaligned token event %#llx", h, ev);
			return;
		}
		if (t->head != h) {
			violation("lib head %d: got the event of a threadlet of head %d", h, t->head);
			return;
		}
		s = T_ISSUED;
		if (__atomic_compare_exchange_n(&t->state, &s, T_POPPED, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return;		/* the issuer finishes it */
		if (s == T_ASYNC) {
			if (t->job.stack2)
				stack_put(t->job.stack2);
			stack_put(t->stack);
			__atomic_store_n(&t->state, T_FREE, __ATOMIC_RELEASE);
			return;
		}
		violation("lib head %d: threadlet event %#llx delivered in state %d (twice, or never issued)",
			  h, ev, s);
		return;
	}
	k = in_chain(ev, &c, &f);
	if (k == 1) {
		int s = T_ISSUED;

		if (c->state == T_LEAKED)
			return;		/* hostile chain */
		if (c->head != h) {
			violation("lib head %d: got the final atom of a chain of head %d", h, c->head);
			return;
		}
		if (c->checked)
			chain_check(c, f, 0, 0);
		c->popped_at = f;
		if (__atomic_compare_exchange_n(&c->state, &s, T_POPPED, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return;
		if (s == T_ASYNC) {
			__atomic_store_n(&c->state, T_FREE, __ATOMIC_RELEASE);
			return;
		}
		if (s == T_LEAKED)
			return;		/* a hostile chain, marked so just now */
		violation("lib head %d: final atom %#llx delivered in state %d", h, ev, s);
		return;
	}
	if (k < 0 || (ev >= jb && ev < jb + 3 * 4096))
		return;		/* a hostile chain ended in junk, the zero page or mid-atom */
	violation("lib head %d: foreign event %#llx in the ring", h, ev);
}

/*
 * Empties a raw head's ring, whatever its indices say: they get out of
 * step on purpose here (a head unregistered and registered again while
 * completions of its first life still post, zapped or replaced pages),
 * and a slot left full would make every later completer wait forever.
 */
#define QUIET_IDX	0x5155494554494458ULL
#define QUIET_FLAGS	0x51554945U

/*
 * After ASYNC_UNREGISTER returns, the kernel writes nothing more into the
 * ring or the async_head_user: mark both, and check the marks later (under
 * the head's lock, while no one of ours writes them).
 */
static void quiet_mark(struct rawhead *rh)
{
	rh->quiet = 0;
	if (rh->ahu_state != M_RW || rh->ring_state != M_RW)
		return;
	memset(rh->ringpage, 0, rh->entries * 8);
	rh->ahu->kernel_ring_idx = QUIET_IDX;
	rh->ahu->flags = QUIET_FLAGS;
	rh->quiet = 1;
}

static void quiet_check(struct rawhead *rh)
{
	volatile uint64_t *ring = (uint64_t *)rh->ringpage;
	unsigned int i;

	if (!rh->quiet || rh->ahu_state != M_RW || rh->ring_state != M_RW)
		return;
	for (i = 0; i < rh->entries && !ring[i]; i++)
		;
	if (i < rh->entries || rh->ahu->kernel_ring_idx != QUIET_IDX ||
	    rh->ahu->flags != QUIET_FLAGS)
		violation("raw head %ld was written after ASYNC_UNREGISTER returned "
			  "(slot %u: %#llx, kernel idx %#llx, flags %#x)", (long)(rh - g.raw), i,
			  i < rh->entries ? (u64)ring[i] : 0ULL, rh->ahu->kernel_ring_idx,
			  rh->ahu->flags);
	rh->quiet = 0;
}

static int raw_pop(struct rawhead *rh)
{
	volatile struct async_head_user *a = rh->ahu;
	volatile uint64_t *ring = (uint64_t *)rh->ringpage;
	u64 k;
	int n = 0;

	for (unsigned int i = 0; i < rh->entries; i++)
		if (ring[i]) {
			ring[i] = 0;
			n++;
		}
	k = __atomic_load_n(&a->kernel_ring_idx, __ATOMIC_ACQUIRE);
	__atomic_store_n(&a->user_ring_idx, k, __ATOMIC_RELEASE);
	if (n && (__atomic_load_n(&a->flags, __ATOMIC_ACQUIRE) & ASYNC_HEAD_RING_WAITERS))
		RS3(__NR_async_wait, 0, k, a);
	return n;
}

static void consume_all(struct rng *r, int block)
{
	for (int h = 0; h < g.cfg.nlib; h++) {
		struct libhead *lh = &g.lib[h];
		void *ev;

		pthread_mutex_lock(&lh->lock);
		if (lh->state == 1)
			for (int n = 0; n < 256 && (ev = async_ring_pop(&lib_ahu[h])); n++)
				check_event(h, (u64)(uintptr_t)ev);
		pthread_mutex_unlock(&lh->lock);
	}
	for (int i = 0; i < g.cfg.nraw; i++) {
		struct rawhead *rh = &g.raw[i];

		pthread_mutex_lock(&rh->lock);
		if (!rh->registered) {
			if (chance(r, 100))
				quiet_check(rh);
		} else if (rh->ahu_state == M_RW && rh->ring_state == M_RW) {
			raw_pop(rh);
		}
		pthread_mutex_unlock(&rh->lock);
	}
	if (block && g.cfg.nlib) {
		int h = (int)below(r, g.cfg.nlib);
		long w;

		/* Waits for one more; the ticker's signals bound it. */
		if (g.lib[h].state == 1) {
			w = async_wait(1, lib_ahu[h].user_ring_idx, &lib_ahu[h]);
			if (w < 0 && w != -EINTR && w != -EINVAL)
				violation("async_wait(1) on lib head %d returned %ld", h, w);
		}
	}
}

/* ---- more operations ------------------------------------------------------------ */

static void op_register(struct thr *t)
{
	struct rng *r = &t->rng;
	long ret;
	u64 p;

	switch (below(r, 10)) {
	case 0:		/* unknown flags */
		ret = RS3(__NR_threadlet_register, t->rawpage, 128, (rnd(r) | 2) & ~1ULL);
		if (ret != -EINVAL)
			violation("threadlet_register with unknown flags returned %ld", ret);
		break;
	case 1: {	/* bad length */
		static const u64 lens[] = { 0, 1, 64, 127, 129, 256, 4096, 0xffffffff };

		ret = RS3(__NR_threadlet_register, t->rawpage, lens[below(r, 8)], 0);
		if (ret != -EINVAL)
			violation("threadlet_register with a bad length returned %ld", ret);
		break;
	}
	case 2:		/* misaligned */
		p = (u64)(uintptr_t)t->rawpage + 1 + below(r, 127);
		ret = RS3(__NR_threadlet_register, p, 128, 0);
		if (ret != -EINVAL)
			violation("threadlet_register of a misaligned area returned %ld", ret);
		break;
	case 3:		/* kernel or non-canonical address */
		p = chance(r, 500) ? FZ_KADDR + below(r, 1 << 16) * 128 : FZ_NONCANON;
		ret = RS3(__NR_threadlet_register, p, 128, 0);
		/* g_compat: unmapped user memory, refused when pinned. */
		if (ret != -EFAULT && !(g_compat && (ret == -EBUSY || ret == -ENOMEM)))
			violation("threadlet_register of kernel address %#llx returned %ld", p, ret);
		break;
	case 4: {	/* unmapped, read-only, junk, vDSO: never registrable */
		static const int kinds[] = { 0, 1, 2, 3 };
		int k = kinds[below(r, 4)];

		p = k == 0 ? (u64)(uintptr_t)g.unmapped : k == 1 ? (u64)(uintptr_t)g.ropage :
		    k == 2 ? (u64)(uintptr_t)g.junk : (u64)getauxval(AT_SYSINFO_EHDR);
		p += below(r, 32) * 128;
		ret = RS3(__NR_threadlet_register, p, 128, 0);
		/*
		 * A thread with no area yet reads a readable page's bytes
		 * before it pins the page: the junk page's 0xff and the
		 * vDSO's code are no valid area (-EINVAL, as for any
		 * nonzero reserved field), checked before the write access.
		 */
		if (ret == 0) {
			violation("threadlet_register of an unwritable page (%d) succeeded", k);
			RS3(__NR_threadlet_register, p, 128, THREADLET_UNREGISTER);
		} else if (ret != -EFAULT && ret != -EBUSY && ret != -ENOMEM &&
			   !(ret == -EINVAL && (k == 2 || k == 3))) {
			violation("threadlet_register of an unwritable page (%d) returned %ld",
				  k, ret);
		}
		break;
	}
	case 5:		/* unregister something never registered */
		p = (u64)(uintptr_t)&never_ahu[1];
		ret = RS3(__NR_threadlet_register, p & ~127ULL, 128, THREADLET_UNREGISTER);
		if (ret != -EINVAL)
			violation("unregistering a foreign area returned %ld", ret);
		break;
	case 6: case 7: {	/* move between the TLS area and a raw one */
		if (t->role == R_PARKER)
			break;
		if (!t->rawarea) {
			struct threadlet_area *a;

			a = (struct threadlet_area *)(t->rawpage + below(r, 4096 / 128) * 128);
			/*
			 * Or in the MAP_SHARED pages, at this slot's own place:
			 * fork children register the same places (an area shared
			 * across processes); two threads of one process sharing
			 * an area would only crash user space.
			 */
			if (chance(r, 100) && g.sharedpage)
				a = (struct threadlet_area *)(g.sharedpage + t->idx * 128);
			ret = tls_unregister_raw();
			if (ret && ret != -EINVAL)
				violation("unregistering the TLS area returned %ld", ret);
			memset(a, 0, sizeof(*a));
			ret = RS3(__NR_threadlet_register, a, 128, 0);
			if (ret == 0) {
				t->rawarea = a;
				areg_note(t, a, 1);
			}
			else if (ret != -EBUSY && ret != -ENOMEM)	/* ENOMEM: RLIMIT_MEMLOCK */
				violation("threadlet_register of a fresh raw area returned %ld", ret);
			ret = RS3(__NR_threadlet_register, a, 128, 0);
			if (ret != -EBUSY)
				violation("registering a second area returned %ld, not -EBUSY", ret);
		} else {
			ret = RS3(__NR_threadlet_register, t->rawarea, 128, THREADLET_UNREGISTER);
			if (ret)
				violation("unregistering our raw area returned %ld", ret);
			else
				areg_note(t, t->rawarea, 0);
			t->rawarea = NULL;
			if (chance(r, 500)) {
				ret = tls_register_raw();
				if (ret && ret != -ENOMEM)
					violation("registering the TLS area again returned %ld", ret);
			}
		}
		break;
	}
	case 8:		/* the stack, a file mapping: odd but valid places */
		if (!t->rawarea) {
			char buf[512] __attribute__((aligned(128)));
			struct threadlet_area *a = (struct threadlet_area *)buf;

			ret = tls_unregister_raw();
			memset(buf, 0, sizeof(buf));
			ret = RS3(__NR_threadlet_register, a, 128, 0);
			if (ret && ret != -EBUSY && ret != -ENOMEM)
				violation("threadlet_register of a stack area returned %ld", ret);
			RS0(__NR_threadlet_off);
			RS3(__NR_threadlet_on, 0, 0, 0);
			sleep_us(50);
			RS0(__NR_threadlet_off);
			if (!ret && RS3(__NR_threadlet_register, a, 128, THREADLET_UNREGISTER))
				violation("unregistering a stack area failed");
			tls_register_raw();
		}
		break;
	default:	/* double registration of the TLS area */
		ret = RS3(__NR_threadlet_register, &__threadlet_area, 128, 0);
		if (ret == 0)
			__threadlet_area.lib_flags &= ~FZ_LIB_UNREGISTERED;
		else if (ret != -EBUSY && ret != -ENOMEM)
			violation("registering the TLS area returned %ld", ret);
		break;
	}
}

/* Raw threadlet_on()/off() syscalls with frames that can never be used. */
static void op_onoff(struct thr *t)
{
	struct rng *r = &t->rng;
	static const u64 bad_ips[] = { 0, FZ_KTEXT, FZ_NONCANON, ~0ULL };
	u64 ip, sp, ahu;
	long on, on2, off, x;
	int nohead;

	ip = bad_ips[below(r, 4)];
	sp = chance(r, 500) ? (u64)(uintptr_t)&ip : bad_ips[below(r, 4)];
	if (chance(r, 300)) {
		ip = (u64)(uintptr_t)fz_land;
		sp = (u64)(uintptr_t)&ip;
	}
	/* Never a registered head, so no hand-off can happen either way. */
	ahu = chance(r, 300) ? (u64)(uintptr_t)&never_ahu[0] : bad_ptr(r, 8);
	nohead = 1;
	on = RS3(__NR_threadlet_on, ip, sp, ahu);
	if (on != 0 && on != -EINVAL && on != -EBUSY)
		violation("threadlet_on returned %ld", on);
	if (on == 0) {
		on2 = RS3(__NR_threadlet_on, ip, sp, ahu);
		if (on2 != -EBUSY)
			violation("a second threadlet_on returned %ld, not -EBUSY", on2);
		x = RS2(__NR_async_exec, g.ch, &lib_ahu[0]);
		if (x != -EBUSY)
			violation("async_exec while on returned %ld, not -EBUSY", x);
		x = RS2(__NR_async_thread, 0, &lib_ahu[0]);
		if (x != -EBUSY)
			violation("async_thread while on returned %ld, not -EBUSY", x);
		x = RS3(__NR_threadlet_register, t->rawarea ? (void *)t->rawarea : (void *)&__threadlet_area,
			128, THREADLET_UNREGISTER);
		if (x == 0) {
			violation("unregistering an area that is on succeeded");
			if (!t->rawarea)
				__threadlet_area.lib_flags |= FZ_LIB_UNREGISTERED;
			else
				t->rawarea = NULL;
		}
	}
	switch (below(r, 4)) {
	case 0:
		sleep_us(below(r, 1500) + 1);
		break;
	case 1: {
		char c;
		struct pollfd p = { .fd = g.pipes[below(r, NPIPES)][0], .events = POLLIN };

		if (poll(&p, 1, 2) > 0 && read(p.fd, &c, 1) < 0) {
			/* fine */
		}
		break;
	}
	case 2:
		sched_yield();
		break;
	default:
		break;
	}
	off = RS0(__NR_threadlet_off);
	if (on == 0 && nohead && off != 1 && !area_shared(t))
		violation("threadlet_off after an on with no usable head returned %ld, not 1", off);
	if (on != 0 && off != 0 && off != -EINVAL && !area_shared(t))
		violation("threadlet_off with nothing on returned %ld", off);
}

/*
 * A raw threadlet_on (syscall or vDSO) whose head resumes at fz_land on a
 * landing stack, on a raw head served by our parkers, then a sleep. If the
 * head is handed off, the landed head exits, and this task goes on as the
 * parker whose identity it now has: it leaves at once.
 */
static void op_land(struct thr *t)
{
	struct rng *r = &t->rng;
	struct rawhead *rh = &g.raw[below(r, g.cfg.nraw)];
	int use_vdso = vdso_on && !t->rawarea && chance(r, 500);
	int tid = (int)RS0(SYS_gettid);
	long on, off;

	if (!t->land && !(t->land = land_get()))
		return;
	if (t->rawarea || (__threadlet_area.lib_flags & FZ_LIB_UNREGISTERED))
		use_vdso = 0;
	if (use_vdso)
		on = vdso_on(&__threadlet_area, (unsigned long)fz_land, t->land, rh->ahu);
	else
		on = RS3(__NR_threadlet_on, fz_land, t->land, rh->ahu);
	if (on)
		return;
	switch (below(r, 3)) {
	case 0:
		sleep_us(below(r, 2000) + 1);
		break;
	case 1: {
		char c;

		if (read(g.pipes[below(r, NPIPES)][0], &c, 1) < 0) {
			/* EINTR */
		}
		break;
	}
	default: {
		struct timespec ts = { 0, 500000 };

		syscall(SYS_futex, &g.futex[0], FUTEX_WAIT_PRIVATE, g.futex[0], &ts, NULL, 0);
		break;
	}
	}
	off = use_vdso ? vdso_off(&__threadlet_area) : RS0(__NR_threadlet_off);
	if (off == 1)
		return;		/* slept in place (or not at all) */
	if (off != 0)
		violation("threadlet_off after a raw on returned %ld", off);
	/*
	 * Handed off: this task has the identity of the parked thread that
	 * took over (its TLS, its struct thr); the worker's identity landed
	 * and exits. Do not touch @t (the worker's, maybe reused by now).
	 */
	if ((int)RS0(SYS_gettid) == tid) {
		/* A fork child sharing the area may have turned it off. */
		if (!area_shared(t))
			violation("raw hand-off: threadlet_off said 0 but the TID is still %d", tid);
		return;
	}
	exit_identity(DS_LAND);
}

/* vDSO on/off with nothing in between: never a hand-off. */
static void op_vdso(struct thr *t)
{
	struct rng *r = &t->rng;
	struct threadlet_area *a = &__threadlet_area;
	long on, off, x;

	if (!vdso_on || t->rawarea || (a->lib_flags & FZ_LIB_UNREGISTERED) || (a->flags & THREADLET_ON))
		return;
	on = vdso_on(a, (unsigned long)fz_land, (unsigned long)&x, &never_ahu[0]);
	if (on != 0)
		violation("vDSO threadlet_on on an idle area returned %ld", on);
	x = vdso_on(a, (unsigned long)fz_land, (unsigned long)&x, &never_ahu[0]);
	if (x != -EBUSY)
		violation("a second vDSO threadlet_on returned %ld", x);
	if (chance(r, 500))
		sleep_us(below(r, 500) + 1);	/* no head: sleeps in place */
	off = vdso_off(a);
	if (off != 1)
		violation("vDSO threadlet_off returned %ld, not 1 (nothing could hand off)", off);
	off = vdso_off(a);
	if (off != 0)
		violation("a second vDSO threadlet_off returned %ld", off);
}

/*
 * Some raw heads are elastic: a hand-off that leaves few parked sends a
 * parker home with ASYNC_GROW, and parkers idle a few ms go home with
 * -ETIMEDOUT. Raw parkers just park again.
 */
static void raw_elastic(struct rawhead *rh, struct rng *r)
{
	rh->ahu->low_watermark = chance(r, 300) ? (unsigned int)below(r, rh->maxthr + 1) : 0;
	rh->ahu->idle_timeout_ms = chance(r, 300) ? 1 + below(r, 50) : 0;
}

static void op_async_register(struct thr *t)
{
	struct rng *r = &t->rng;
	struct rawhead *rh = &g.raw[below(r, g.cfg.nraw)];
	struct async_head_user k;
	long ret;
	u64 p;

	switch (below(r, 12)) {
	case 0:		/* bad flags */
		ret = RS3(__NR_async_register, rh->ahu, sizeof(k),
			  chance(r, 500) ? (ASYNC_UNREGISTER | ASYNC_QUERY_PARKED) : (rnd(r) | 4) & ~3ULL);
		if (ret != -EINVAL)
			violation("async_register with bad flags returned %ld", ret);
		break;
	case 1:		/* misaligned */
		ret = RS3(__NR_async_register, (char *)rh->ahu + 1 + below(r, 7), sizeof(k),
			  below(r, 3));
		if (ret != -EINVAL)
			violation("async_register of a misaligned head returned %ld", ret);
		break;
	case 2: {	/* bad length */
		static const u64 lens[] = { 0, 8, 63, 65, 128, 0xffffffff };

		ret = RS3(__NR_async_register, &never_ahu[0], lens[below(r, 6)], 0);
		if (ret != -EINVAL)
			violation("async_register with a bad length returned %ld", ret);
		break;
	}
	case 3:		/* kernel, unmapped or straddling memory */
		p = chance(r, 300) ? FZ_KADDR : chance(r, 500) ?
			(u64)(uintptr_t)g.unmapped : (u64)(uintptr_t)g.junk + 4096 - 32;
		ret = RS3(__NR_async_register, p, sizeof(k), 0);
		if (ret != -EFAULT)
			violation("async_register of unreadable memory %#llx returned %ld", p, ret);
		break;
	case 4: {	/* bad geometry, in a scratch head that is never registered */
		struct async_head_user *s = (struct async_head_user *)(t->scratch + 8 * below(r, 8));
		static const u64 sizes[] = { 0, 4, 12, 24, 8 * 3, 8ULL << 17, 8 * 65536 + 8 };
		int which = (int)below(r, 4);

		memset(s, 0, sizeof(*s));
		s->completion_ring = (u64)(uintptr_t)t->scratch + 1024;
		s->ring_size_bytes = 64;
		s->max_cachemiss_threads = 1;
		if (which == 0)
			s->ring_size_bytes = sizes[below(r, 7)];
		else if (which == 1)
			s->max_cachemiss_threads = chance(r, 500) ? 0 : 1025 + below(r, 1 << 20);
		else if (which == 2)
			s->completion_ring += 1 + below(r, 7);
		else if (chance(r, 500))
			s->low_watermark = 2 + (unsigned int)below(r, 1U << 31);
		else
			s->idle_timeout_ms = ASYNC_MAX_IDLE_MS + 1 + below(r, 1ULL << 40);
		ret = RS3(__NR_async_register, s, sizeof(*s), 0);
		if (ret != -EINVAL) {
			violation("async_register with bad geometry (%d) returned %ld", which, ret);
			if (!ret)
				RS3(__NR_async_register, s, sizeof(*s), ASYNC_UNREGISTER);
		}
		break;
	}
	case 5:		/* unknown heads */
		ret = RS3(__NR_async_register, &never_ahu[0], sizeof(k),
			  chance(r, 500) ? ASYNC_UNREGISTER : ASYNC_QUERY_PARKED);
		if (ret != -EINVAL)
			violation("async_register on an unknown head returned %ld", ret);
		break;
	case 6:		/* a ring in kernel space */
		memset(&k, 0, sizeof(k));
		{
			struct async_head_user *s = (struct async_head_user *)t->scratch;

			memset(s, 0, sizeof(*s));
			/* A __u64: a kernel address for both ABIs (see FZ_KADDR). */
			s->completion_ring = 0xffff888000000000ULL;
			s->ring_size_bytes = 64;
			s->max_cachemiss_threads = 1;
			ret = RS3(__NR_async_register, s, sizeof(*s), 0);
			if (ret != -EFAULT) {
				violation("async_register with a kernel ring returned %ld", ret);
				if (!ret)
					RS3(__NR_async_register, s, sizeof(*s), ASYNC_UNREGISTER);
			}
		}
		break;
	case 7:		/* query the library heads */
		p = below(r, g.cfg.nlib);
		ret = RS3(__NR_async_register, &lib_ahu[p], sizeof(k), ASYNC_QUERY_PARKED);
		if (ret != -EINVAL && (ret < 0 || ret > ASYNC_MAX_CACHEMISS))
			violation("ASYNC_QUERY_PARKED on lib head %llu returned %ld", p, ret);
		break;
	default:	/* register / unregister / query a raw head */
		pthread_mutex_lock(&rh->lock);
		if (rh->ahu_state == M_LOST) {
			/* someone else may have the address now: hands off */
		} else if (rh->ahu_state != M_RW) {
			rh->quiet = 0;
			ret = RS3(__NR_async_register, rh->ahu, sizeof(k), 0);
			if (ret != -EFAULT)
				violation("async_register of an unmapped/protected head returned %ld", ret);
			if (!ret)
				rh->registered = 1;
		} else if (!rh->registered || chance(r, 200)) {
			if (!rh->registered) {
				quiet_check(rh);	/* and forget: registering writes */
				if (rh->ring_state == M_RW)
					memset(rh->ringpage, 0, rh->entries * 8);
				rh->ahu->user_ring_idx = 0;
				/* Reserved: refused unless zero, and nothing registered. */
				rh->ahu->flags = QUIET_FLAGS;
				rh->ahu->__reserved = chance(r, 2) ? rnd(r) | 1 : 0;
				ret = RS3(__NR_async_register, rh->ahu, sizeof(k), 0);
				if (ret != -EINVAL)
					violation("async_register of raw head %ld with junk in flags/__reserved returned %ld",
						  (long)(rh - g.raw), ret);
				if (!ret)
					rh->registered = 1;
				rh->ahu->flags = 0;
				rh->ahu->__reserved = 0;
			}
			rh->ahu->completion_ring = (u64)(uintptr_t)rh->ringpage;
			rh->ahu->ring_size_bytes = rh->entries * 8;
			rh->ahu->max_cachemiss_threads = rh->maxthr;
			raw_elastic(rh, r);
			ret = RS3(__NR_async_register, rh->ahu, sizeof(k), 0);
			if (rh->registered && ret != -EBUSY)
				violation("registering raw head %ld again returned %ld, not -EBUSY",
					  (long)(rh - g.raw), ret);
			else if (!rh->registered && ret && ret != -ENOMEM)
				violation("async_register of raw head %ld returned %ld",
					  (long)(rh - g.raw), ret);
			if (!ret)
				rh->registered = 1;
		} else if (chance(r, 500)) {
			ret = RS3(__NR_async_register, rh->ahu, sizeof(k), ASYNC_UNREGISTER);
			if (ret)
				violation("unregistering raw head %ld returned %ld", (long)(rh - g.raw), ret);
			rh->registered = 0;
			quiet_mark(rh);
		} else {
			ret = RS3(__NR_async_register, rh->ahu, sizeof(k), ASYNC_QUERY_PARKED);
			/*
			 * A thread that a hand-off left with a pool member's
			 * identity parks even on a full pool: up to a thread
			 * of ours more each.
			 */
			if (ret < 0 || ret > (long)(rh->maxthr + MAX_THR))
				violation("ASYNC_QUERY_PARKED on raw head %ld (max %u) returned %ld",
					  (long)(rh - g.raw), rh->maxthr, ret);
		}
		pthread_mutex_unlock(&rh->lock);
		break;
	}
}

static void op_async_wait(struct thr *t)
{
	struct rng *r = &t->rng;
	int h = (int)below(r, g.cfg.nlib);
	struct async_head_user *a = &lib_ahu[h];
	long ret;

	switch (below(r, 6)) {
	case 0:		/* unknown head */
		ret = RS3(__NR_async_wait, below(r, 4), 0, chance(r, 500) ? (void *)&never_ahu[0] :
			  (void *)(uintptr_t)bad_ptr(r, 1));
		if (ret != -EINVAL)
			violation("async_wait on an unknown head returned %ld", ret);
		break;
	case 1:		/* more than the ring holds */
		ret = RS3(__NR_async_wait, g.lib[h].entries + 1 + below(r, 1000), 0, a);
		if (ret != -EINVAL)
			violation("async_wait for more than the ring holds returned %ld", ret);
		break;
	case 2:		/* an index past the kernel's */
		ret = RS3(__NR_async_wait, 0, a->kernel_ring_idx + 1000000 + below(r, 1ULL << 40), a);
		if (ret != -EINVAL)
			violation("async_wait with an index past the kernel's returned %ld", ret);
		break;
	case 3:		/* min 0: returns at once */
		ret = RS3(__NR_async_wait, 0, 0, a);
		if (ret < 0 && ret != -EINVAL && ret != -EINTR)
			violation("async_wait(0, 0) returned %ld", ret);
		break;
	default: {	/* a raw head, possibly blocking; the ticker bounds it */
		struct rawhead *rh = &g.raw[below(r, g.cfg.nraw)];

		ret = RS3(__NR_async_wait, below(r, 2), below(r, 3), rh->ahu);
		if (ret < -EINVAL || (ret < 0 && ret != -EINVAL && ret != -EINTR))
			violation("async_wait on a raw head returned %ld", ret);
		break;
	}
	}
}

/* Parks the calling thread on @ahu for a while (it may be claimed). */
static long park_once(struct thr *t, struct async_head_user *ahu, void *event)
{
	struct threadlet_area *ka = t->rawarea ? t->rawarea : &__threadlet_area;
	long r;

	__threadlet_area.lib_flags |= FZ_LIB_CACHEMISS;
	r = tl_raw_park(ka, event, ahu, &__threadlet_area);
	__threadlet_area.lib_flags &= ~FZ_LIB_CACHEMISS;
	stat_inc(ST_PARKED);
	return r;
}

static void op_async_thread(struct thr *t)
{
	struct rng *r = &t->rng;
	long ret;

	switch (below(r, 4)) {
	case 0:		/* a raw area has no home frame: refused */
		if (!t->rawarea)
			break;
		ret = RS2(__NR_async_thread, 0, g.raw[below(r, g.cfg.nraw)].ahu);
		/*
		 * -EBUSY (a threadlet is on) is checked first. Our area is
		 * never left on, but a shared one may be armed by a fork
		 * child that registered the same place (fork_child()).
		 */
		if (ret != -EINVAL && !(ret == -EBUSY && area_shared(t)))
			violation("async_thread without a home frame returned %ld%s", ret,
				  area_shared(t) ? " (shared area)" : "");
		break;
	case 1:		/* unknown head */
		ret = RS2(__NR_async_thread, 0, chance(r, 500) ? (void *)&never_ahu[0] :
			  (void *)(uintptr_t)bad_ptr(r, 8));
		/* -EBUSY first, as in case 0: a shared area may be armed. */
		if (ret != -EINVAL && !(ret == -EBUSY && area_shared(t)))
			violation("async_thread on an unknown head returned %ld%s", ret,
				  area_shared(t) ? " (shared area)" : "");
		break;
	default:	/* park for a while on a raw head (a worker in its TLS area only) */
		if (t->rawarea || EXCLUDED(XF_PARK))
			break;
		ret = park_once(t, g.raw[below(r, g.cfg.nraw)].ahu, NULL);
		if (ret != 0 && ret != -EINTR && ret != -EINVAL && ret != -EBUSY && ret != -EFAULT &&
		    ret != ASYNC_GROW && ret != -ETIMEDOUT)
			violation("async_thread (park) returned %ld", ret);
		break;
	}
}

static void op_umem(struct thr *t)
{
	struct rng *r = &t->rng;
	u64 v = rnd(r), inc = rnd(r), p;
	long ret;

	switch (below(r, 3)) {
	case 0: {
		u64 v0 = v;

		if (chance(r, 200))
			inc = -v0;	/* to zero */
		ret = fz_umem_add((uintptr_t)&v, inc);
		if (ret != (v0 + inc != 0) || v != v0 + inc)
			violation("umem_add(%#llx + %#llx) returned %ld, memory %#llx", v0, inc, ret, v);
		break;
	}
	case 1:
		p = bad_ptr(r, chance(r, 700) ? 8 : 1);
		if (!p)
			p = 8;
		ret = fz_umem_add(p, inc);
		if (ret != -EFAULT)
			violation("umem_add at %#llx returned %ld, not -EFAULT", p, ret);
		return;
	default: {
		u64 vals[2] = { v, v };
		char *q = (char *)vals + below(r, 8);
		u64 old, now;

		memcpy(&old, q, 8);
		ret = fz_umem_add((uintptr_t)q, inc);
		memcpy(&now, q, 8);
		if (ret != (old + inc != 0) || now != old + inc)
			violation("umem_add (unaligned) of %#llx to %#llx gave %ld, memory %#llx",
				  inc, old, ret, now);
		return;
	}
	}
	{
		u64 x = 1000, y;

		y = (u64)fz_umem_add((uintptr_t)&x, inc);
		if (y != (1000 + inc != 0) || x != 1000 + inc)
			violation("umem_add(1000 + %#llx) returned %#llx, memory %#llx", inc, y, x);
	}
	{
		u64 ro = (u64)(uintptr_t)g.ropage + below(r, 512) * 8;

		ret = fz_umem_add(ro, inc);
		if (ret != -EFAULT)
			violation("umem_add to a read-only page returned %ld", ret);
	}
}

/* A fork child: a few raw operations (with threads, sometimes), then exit. */
static void fork_child(struct rng *r, int exec_it)
{
	static struct async_head_user cahu __attribute__((aligned(64)));
	static u64 cring[16];
	struct syslet_uatom a[2];
	static u64 ts_val[2];
	struct timespec ts = { 0, 200000 };
	long ret;

	signal(SIGALRM, SIG_DFL);
	alarm(3);
	g_sh = NULL;		/* violations are reported by the exit status */
	/*
	 * This thread's TLS is a copy of the forking thread's: t_self still
	 * names the parent's slot (its tid0 the parent thread's TID), which
	 * is no thread of this process. fz_fn() would take the child for a
	 * threadlet that runs with another thread's TLS.
	 */
	t_self = NULL;
	if (g.sharedpage && chance(r, 300)) {
		/* The area a thread of the parent may have: shared across processes. */
		struct threadlet_area *sa = (struct threadlet_area *)(g.sharedpage + below(r, MAX_THR) * 128);

		tls_unregister_raw();
		if (!RS3(__NR_threadlet_register, sa, 128, 0)) {
			RS3(__NR_threadlet_on, 0, 0, &never_ahu[0]);
			sleep_us(below(r, 2000));
			RS0(__NR_threadlet_off);
			RS3(__NR_threadlet_register, sa, 128, THREADLET_UNREGISTER);
		}
	}
	/* The parent's heads do not exist here. */
	ret = RS3(__NR_async_register, &lib_ahu[0], sizeof(cahu), ASYNC_QUERY_PARKED);
	if (ret != -EINVAL) {
		say("VIOLATION: a fork child sees its parent's async head (%ld)", ret);
		_exit(EXIT_VIOLATION);
	}
	memset(&cahu, 0, sizeof(cahu));
	cahu.completion_ring = (u64)(uintptr_t)cring;
	cahu.ring_size_bytes = sizeof(cring);
	cahu.max_cachemiss_threads = 2;
	if (RS3(__NR_async_register, &cahu, sizeof(cahu), 0))
		_exit(0);
	tls_register_lib();
	ts_val[0] = (u64)(uintptr_t)&ts;
	syslet_atom_init(&a[0], SYS_getpid, 0, NULL, &a[1], 0);
	syslet_atom_init(&a[1], SYS_nanosleep, 0, NULL, NULL, 2, &ts_val[0], &ts_val[1]);
	if (async_exec(a, &cahu) != &a[1])
		_exit(0);	/* no spare: ran in place */
	if (chance(r, 500) && !EXCLUDED(XF_MTFORK)) {
		/* A multithreaded child: a pool and a threadlet that blocks. */
		static struct async_head_user lahu __attribute__((aligned(64)));
		static struct job j;
		unsigned long st = threadlet_stack_alloc(STACK_SZ);

		if (threadlet_err(st) || async_head_init(&lahu, 4, 1 + (unsigned int)below(r, 3)))
			_exit(0);
		memset(&j, 0, sizeof(j));
		j.kind = FN_SLEEP;
		j.arg = 2000;
		j.ahu = &lahu;
		j.fd = -1;
		j.fword = &g.futex[0];
		threadlet_exec(fz_fn, &j, st, &lahu);
		if (chance(r, 500))
			sleep_us(below(r, 3000));
	}
	if (exec_it)
		execl("/bin/true", "true", (char *)NULL);
	_exit(0);
}

static void op_fork(struct thr *t, int exec_it)
{
	struct rng *r = &t->rng;
	u64 cseed = rnd(r);
	pid_t p;

	stat_inc(exec_it ? ST_EXECS : ST_FORKS);
	p = fork();
	if (p == 0) {
		struct rng cr;

		rng_seed(&cr, cseed);
		/* The exec'd fuzzer starts threads: a multithreaded child. */
		if (exec_it && chance(&cr, 400) && !EXCLUDED(XF_MTFORK)) {
			char seed[32], *argv[] = { FZ_NAME, "--exec-child", seed, "0", NULL };

			alarm(5);
			snprintf(seed, sizeof(seed), "%llu", cseed);
			execv(g.self_exe, argv);
			_exit(0);
		}
		fork_child(&cr, exec_it);
	}
}

static void *thread_main(void *arg);
static struct thr *thr_new(int role, struct rng *r);
static int thr_start(struct thr *t);

static void op_spawn(struct thr *t)
{
	struct thr *n;

	if (g.spawns > 200)
		return;
	n = thr_new(R_SPAWNED, &t->rng);
	if (n) {
		n->budget = 5 + (int)below(&t->rng, 40);
		if (thr_start(n))
			n->used = 0;
		else
			stat_inc(ST_SPAWNED);
	}
}

static void op_creds(struct thr *t)
{
	struct rng *r = &t->rng;
	static const long ids[] = { 0, 1, 1000, 65534 };

	/*
	 * Raw system calls: this task only. Not glibc's setresuid(), which
	 * signals every thread and waits for each to answer, under a lock
	 * pthread_create() needs: a completer waiting (killable only) for
	 * ring space cannot answer until the ring is drained.
	 */
	switch (below(r, 7)) {
	case 0: case 1: case 2:
		RS3(FZ_NR_setresuid, ids[below(r, 4)], ids[below(r, 4)], 0);
		break;
	case 3: case 4:
		RS3(FZ_NR_setresgid, ids[below(r, 4)], ids[below(r, 4)], 0);
		break;
	default:
		RS3(FZ_NR_setresuid, 0, 0, 0);
		RS3(FZ_NR_setresgid, 0, 0, 0);
		break;
	}
}

static void op_unshare(struct thr *t)
{
	static const long fl[] = { CLONE_FS, CLONE_FILES, CLONE_FS | CLONE_FILES, CLONE_SYSVSEM };

	RS1(SYS_unshare, fl[below(&t->rng, 4)]);
}

/* mprotect/munmap the page of our registered raw area while the kernel uses it. */
static void op_area_victim(struct thr *t)
{
	struct rng *r = &t->rng;
	int how = (int)below(r, 3);
	struct syslet_uatom *a;
	struct chain *c;
	long x;

	if (!t->rawarea)
		return;
	if (how == 0)
		mprotect(t->rawpage, 4096, PROT_NONE);
	else if (how == 1)
		mprotect(t->rawpage, 4096, PROT_READ);
	else
		munmap(t->rawpage, 4096);
	x = RS3(__NR_threadlet_on, 0, 0, &never_ahu[0]);
	sleep_us(below(r, 300) + 1);
	if (x == 0 && RS0(__NR_threadlet_off) != 1 && !area_shared(t))
		violation("threadlet_off with an unmapped area did not return 1");
	c = chain_alloc(r);
	if (c) {
		chain_build(c, r, t, 0, 0);
		c->head = 0;
		c->tid = (int)RS0(SYS_gettid);
		a = async_exec(&c->at[0], &lib_ahu[0]);
		if ((int)RS0(SYS_gettid) != c->tid) {
			rogue_detail("async_exec(area_victim)", t, c->tid, c);
			rogue_return("async_exec returned in a task with another TID");
		}
		if (!a) {		/* went async */
			int exp = T_ISSUED;

			if (!__atomic_compare_exchange_n(&c->state, &exp, T_ASYNC, 0,
							 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				__atomic_store_n(&c->state, T_FREE, __ATOMIC_RELEASE);
		} else {
			__atomic_store_n(&c->state, T_FREE, __ATOMIC_RELEASE);
		}
	}
	if (how == 2) {
		void *p = mmap(t->rawpage, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (p != t->rawpage) {
			/*
			 * Someone took the address: give up the raw area, use
			 * a new page (from two, so that it cannot fill a hole).
			 */
			if (!RS3(__NR_threadlet_register, t->rawarea, 128, THREADLET_UNREGISTER))
				areg_note(t, t->rawarea, 0);
			t->rawarea = NULL;
			p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p != MAP_FAILED)
				t->rawpage = g.rawpage[t->idx] = p;
			return;
		}
	} else {
		mprotect(t->rawpage, 4096, PROT_READ | PROT_WRITE);
	}
	/* The kernel kept the old page: unregister and forget it. */
	if (chance(r, 500)) {
		x = RS3(__NR_threadlet_register, t->rawarea, 128, THREADLET_UNREGISTER);
		if (x)
			violation("unregistering a raw area whose page was replaced returned %ld", x);
		else
			areg_note(t, t->rawarea, 0);
		t->rawarea = NULL;
	}
}

static void op_sched(struct thr *t)
{
	struct sched_param sp = { .sched_priority = 1 };

	if (RS3(SYS_sched_setscheduler, 0, SCHED_FIFO, &sp))
		return;
	op_tl_exec(t, 0);
	sp.sched_priority = 0;
	RS3(SYS_sched_setscheduler, 0, SCHED_OTHER, &sp);
}

static void op_sigalt(struct thr *t)
{
	stack_t ss = { 0 };

	if (!t->altstack)
		t->altstack = mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->altstack == MAP_FAILED) {
		t->altstack = NULL;
		return;
	}
	if (chance(&t->rng, 500)) {
		ss.ss_sp = t->altstack;
		ss.ss_size = 64 << 10;
	} else {
		ss.ss_flags = SS_DISABLE;
	}
	sigaltstack(&ss, NULL);
	op_tl_exec(t, 0);
}

/* Ends a library head (with threadlets in flight) and sets it up again. */
static void op_libhead(struct thr *t)
{
	struct rng *r = &t->rng;
	int h = (int)below(r, g.cfg.nlib);
	struct libhead *lh = &g.lib[h];
	int ret;

	pthread_mutex_lock(&lh->lock);
	if (lh->state != 1) {
		pthread_mutex_unlock(&lh->lock);
		return;
	}
	lh->state = 2;
	pthread_mutex_unlock(&lh->lock);
	async_head_exit(&lib_ahu[h]);
	ret = async_head_init(&lib_ahu[h], lh->entries, lh->pool);
	if (ret && ret != -EAGAIN && ret != -ETIMEDOUT && ret != -ENOMEM)
		violation("async_head_init again on lib head %d returned %d", h, ret);
	pthread_mutex_lock(&lh->lock);
	lh->state = ret ? 0 : 1;
	pthread_mutex_unlock(&lh->lock);
}

/* fail-nth (debug kernels): make the Nth fault point of the next call fail. */
/* Writes @val to this task's fail-nth; 0 disarms. */
static int failnth_write(const char *path, int val)
{
	char buf[16];
	int fd = open(path, O_WRONLY), n, ok;

	if (fd < 0)
		return 0;
	n = snprintf(buf, sizeof(buf), "%d", val);
	ok = write(fd, buf, n) == n;
	close(fd);
	return ok;
}

/*
 * Calls with the Nth fault point of this task failing (fail-nth: slab,
 * page allocation or user copy, on debug kernels), none of which can hand
 * the task's identity off (fail-nth would stay behind). Errors are expected
 * then: the oracles stand down (t_injecting), chains are not checked, and
 * the ticker's signals are blocked (a signal frame that cannot be
 * written would be a SIGSEGV).
 */
static void op_failnth(struct thr *t)
{
	struct rng *r = &t->rng;
	sigset_t block, old;
	char path[64];

	if (!g.failnth)
		return;
	snprintf(path, sizeof(path), "/proc/self/task/%d/fail-nth", (int)RS0(SYS_gettid));
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	t->nocheck = t_injecting = 1;
	if (failnth_write(path, 1 + (int)below(r, 8))) {
		/* Nothing that can hand off: fail-nth stays with the task. */
		switch (below(r, 5)) {
		case 0:
			op_register(t);
			break;
		case 1:
			op_async_register(t);
			break;
		case 2:
			op_umem(t);
			break;
		case 3:
			op_onoff(t);
			break;
		default: {
			struct rawhead *rh = &g.raw[below(r, g.cfg.nraw)];

			pthread_mutex_lock(&rh->lock);
			if (!rh->registered && rh->ahu_state == M_RW) {
				rh->quiet = 0;
				rh->ahu->completion_ring = (u64)(uintptr_t)rh->ringpage;
				rh->ahu->ring_size_bytes = rh->entries * 8;
				rh->ahu->max_cachemiss_threads = rh->maxthr;
				if (!RS3(__NR_async_register, rh->ahu, sizeof(*rh->ahu), 0))
					rh->registered = 1;
			}
			pthread_mutex_unlock(&rh->lock);
			break;
		}
		}
	}
	/* Disarm, whatever happened (the disarming write may be the Nth). */
	for (int i = 0; i < 3 && !failnth_write(path, 0); i++)
		;
	failnth_write(path, 0);
	t->nocheck = t_injecting = 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* A wild resume point: the spare that lands there dies. */
static void op_kamikaze(struct thr *t)
{
	struct rng *r = &t->rng;
	struct rawhead *rh = &g.raw[below(r, g.cfg.nraw)];

	__atomic_add_fetch(&g_sh->kamikaze, 1, __ATOMIC_SEQ_CST);
	if (RS3(__NR_threadlet_on, 0x1000 + below(r, 1 << 20) * 16, 0x2000, rh->ahu))
		return;
	sleep_us(1000);
	if (RS0(__NR_threadlet_off) != 0)
		return;
	/* Handed off: the spare dies at the wild frame; we have its identity. */
	exit_identity(DS_KAMIKAZE);
}

static int pick_op(struct thr *t)
{
	struct rng *r = &t->rng;
	uint8_t w[OP_NR] = {
		[OP_TL_EXEC] = 30, [OP_TL_HOSTILE] = 7, [OP_SYSLET] = 20,
		[OP_SYSLET_HOSTILE] = 10, [OP_REG] = 6, [OP_ONOFF] = 5, [OP_VDSO] = 4,
		[OP_AREG] = 7, [OP_AWAIT] = 4, [OP_ATHREAD] = 3, [OP_UMEM] = 3,
		[OP_FORK] = 1, [OP_EXEC] = 1, [OP_SPAWN] = 2, [OP_SIGALT] = 1,
		[OP_AREA_VICTIM] = 2, [OP_LIBHEAD] = 1, [OP_FAILNTH] = 2,
	};
	unsigned int sum = 0, x;
	int i;

	if (EXCLUDED(XF_FORK))
		w[OP_FORK] = 0;
	if (EXCLUDED(XF_EXEC))
		w[OP_EXEC] = 0;
	if (EXCLUDED(XF_SPAWN))
		w[OP_SPAWN] = 0;
	if (EXCLUDED(XF_LIBHEAD))
		w[OP_LIBHEAD] = 0;
	if (EXCLUDED(XF_FAILNTH))
		w[OP_FAILNTH] = 0;
	w[OP_LAND] = g.cfg.rawland ? 3 : 0;
	w[OP_CREDS] = g.cfg.creds ? 2 : 0;
	w[OP_UNSHARE] = g.cfg.unshare ? 1 : 0;
	w[OP_SCHED] = g.cfg.creds ? 1 : 0;
	w[OP_KAMIKAZE] = g.cfg.kamikaze && now_ns() > (g.start + g.deadline) / 2 &&
			 chance(r, 20) ? 1 : 0;
	if (t->role == R_SPAWNED) {
		w[OP_LAND] = w[OP_SPAWN] = w[OP_LIBHEAD] = w[OP_EXEC] = w[OP_KAMIKAZE] = 0;
		w[OP_AREA_VICTIM] = w[OP_REG] = 0;
	}
	for (i = 0; i < OP_NR; i++)
		sum += w[i];
	x = (unsigned int)below(r, sum);
	for (i = 0; i < OP_NR; i++) {
		if (x < w[i])
			return i;
		x -= w[i];
	}
	return OP_TL_EXEC;
}

static void run_op(struct thr *t, int op)
{
	ring_note(t, op);
	flight(t, op);
	switch (op) {
	case OP_TL_EXEC: op_tl_exec(t, 0); break;
	case OP_TL_HOSTILE: op_tl_exec(t, 1); break;
	case OP_SYSLET: op_syslet(t, 0); break;
	case OP_SYSLET_HOSTILE: op_syslet(t, 1); break;
	case OP_REG: op_register(t); break;
	case OP_ONOFF: op_onoff(t); break;
	case OP_LAND: op_land(t); break;
	case OP_VDSO: op_vdso(t); break;
	case OP_AREG: op_async_register(t); break;
	case OP_AWAIT: op_async_wait(t); break;
	case OP_ATHREAD: op_async_thread(t); break;
	case OP_UMEM: op_umem(t); break;
	case OP_FORK: op_fork(t, 0); break;
	case OP_EXEC: op_fork(t, 1); break;
	case OP_SPAWN: op_spawn(t); break;
	case OP_CREDS: op_creds(t); break;
	case OP_UNSHARE: op_unshare(t); break;
	case OP_AREA_VICTIM: op_area_victim(t); break;
	case OP_SCHED: op_sched(t); break;
	case OP_SIGALT: op_sigalt(t); break;
	case OP_LIBHEAD: op_libhead(t); break;
	case OP_FAILNTH: op_failnth(t); break;
	case OP_KAMIKAZE: op_kamikaze(t); break;
	}
	flight(t, OP_NONE);
	count_iter();
}

/* ---- threads -------------------------------------------------------------------- */

static void thr_dtor(void *p)
{
	struct thr *t = p;

	if (t)
		thr_dead(t, DS_DTOR);
}

static struct thr *thr_new(int role, struct rng *r)
{
	struct thr *t = NULL;

	pthread_mutex_lock(&g.thr_lock);
	for (int i = 0; i < MAX_THR; i++) {
		/*
		 * A slot marked dead is reused only once its owner's TID is
		 * gone: a threadlet that reads its slot from the TLS and
		 * then touches memory may be handed off at that page fault
		 * (the contract), and mark the head's slot, not its own.
		 * The TID and the TLS move together, so a live TID is a
		 * live slot, whoever marked it.
		 */
		if (!g.thr[i].used || (!g.thr[i].alive && !tid_alive(g.thr[i].tid0))) {
			t = &g.thr[i];
			if (t->used)
				g.dead[i].next_gen++;
			memset(t, 0, sizeof(*t));
			t->used = 1;
			t->alive = 1;
			t->idx = i;
			break;
		}
	}
	g.spawns++;
	pthread_mutex_unlock(&g.thr_lock);
	if (!t)
		return NULL;
	t->role = role;
	rng_seed(&t->rng, rnd(r));
	g_sh->flight[t->idx].role = role;
	g_sh->flight[t->idx].op = 0;
	g_sh->flight[t->idx].tid = 0;
	return t;
}

static int thr_start(struct thr *t)
{
	pthread_attr_t at;
	pthread_t pt;
	int ret;

	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 256 << 10);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&pt, &at, thread_main, t);
	pthread_attr_destroy(&at);
	if (ret)
		thr_dead(t, DS_START);
	return ret;
}

static void thread_setup(struct thr *t)
{
	t_self = t;
	t->pself = pthread_self();
	pthread_setspecific(g.key, t);
	t->tid0 = t->curtid = (int)RS0(SYS_gettid);
	g_sh->flight[t->idx].tid = t->tid0;
	t->rawpage = g.rawpage[t->idx];
	t->scratch = g.thrmem + (size_t)t->idx * THRMEM_SZ + 4096;
	memset(t->scratch, 0, SCRATCH_SZ);
}

/*
 * A thread's own loop runs with its own identity, always: a hand-off keeps
 * the head's TID, a parked thread comes home as itself, and an operation
 * that gives the identity away exits. Anything else is a broken hand-off.
 */
static void check_identity(struct thr *t, int last_op)
{
	int tid = (int)RS0(SYS_gettid);
	char d[160];

	if (tid == t->tid0 && t_self == t)
		return;
	rogue_detail("check_identity", t, t->tid0, NULL);
	violation("%s %d runs as TID %d (TLS of %s %d, %s pthread) after op %s; %s", role_name[t->role],
		  t->tid0, tid, t_self ? role_name[t_self->role] : "?", t_self ? t_self->tid0 : 0,
		  pthread_equal(pthread_self(), t->pself) ? "its" : "another",
		  op_name[last_op], dead_str(t->idx, d, sizeof(d)));
	rogue_return("a thread's loop runs with another identity");
}

static void worker_loop(struct thr *t)
{
	int op = OP_NONE;

	tls_register_lib();
	while (!round_over()) {
		check_identity(t, op);
		if (t->role == R_SPAWNED && t->budget-- <= 0)
			break;
		t->curtid = (int)RS0(SYS_gettid);
		op = pick_op(t);
		run_op(t, op);
	}
	if (t->role == R_SPAWNED) {
		switch (below(&t->rng, 3)) {
		case 0:
			pthread_exit(NULL);
		case 1:
			thr_dead(t, DS_SPAWNED_EXIT);
			for (;;)
				RS1(SYS_exit, 0);
		default:
			break;
		}
	}
}

static void parker_loop(struct thr *t)
{
	struct rng *r = &t->rng;
	long ret;

	if (tls_register_raw() && !(__threadlet_area.lib_flags & FZ_LIB_UNREGISTERED)) {
		/* registered already */
	}
	while (g.stop < 2 && now_ns() < g.deadline + 2000000000LL) {
		struct async_head_user *ahu;
		void *ev = NULL;

		t->curtid = (int)RS0(SYS_gettid);
		if (chance(r, 80) && !EXCLUDED(XF_OVERPARK)) {
			ahu = &lib_ahu[below(r, g.cfg.nlib)];
		} else {
			struct rawhead *rh = &g.raw[below(r, g.cfg.nraw)];

			ahu = rh->ahu;
			if (chance(r, 100))
				ev = (void *)(uintptr_t)(rnd(r) | 1);	/* post, then park */
		}
		flight(t, OP_PARK);
		ret = park_once(t, ahu, ev);
		flight(t, OP_NONE);
		check_identity(t, OP_PARK);
		count_iter();
		switch (ret) {
		case -EINTR:
			if (chance(r, 15) && !EXCLUDED(XF_THREXIT)) {
				/* Exit where a parked thread would be. */
				if (chance(r, 500))
					pthread_exit(NULL);
				thr_dead(t, DS_PARKER_EXIT);
				for (;;)
					RS1(SYS_exit, 0);
			}
			break;
		case -EINVAL:
			/* Not a head now, or our area is gone (FN_UNREG). */
			if (tls_register_raw() == 0) {
				/* registered it again */
			}
			sleep_us(200 + below(r, 1000));
			break;
		case 0: case -EBUSY: case -EFAULT:
			sleep_us(100 + below(r, 2000));
			break;
		case ASYNC_GROW: case -ETIMEDOUT:
			break;		/* an elastic raw head: park again */
		default:
			violation("parked thread: async_thread returned %ld", ret);
			sleep_us(1000);
			break;
		}
	}
}

static void ticker_loop(struct thr *t)
{
	struct rng *r = &t->rng;
	long long leader_gone_at = 0;

	while (g.stop < 2) {
		for (int i = 0; i < MAX_THR; i++) {
			struct thr *x = &g.thr[i];

			if (x == t || !x->used || !x->alive || x->curtid <= 0 || x->role == R_REAPER)
				continue;
			if (chance(r, 600)) {
				RS3(SYS_tgkill, g.pid, x->curtid, chance(r, 700) ? SIGUSR1 : SIGUSR2);
				stat_inc(ST_SIGNALS);
			}
		}
		if (chance(r, 50))
			RS2(SYS_kill, g.pid, SIGUSR1);
		if (g.leader_gone) {
			if (!leader_gone_at)
				leader_gone_at = now_ns();
			else if (now_ns() - leader_gone_at > 300000000LL)
				RS1(SYS_exit_group, 0);
		}
		sleep_us(5000 + below(r, 15000));
	}
}

static void feeder_loop(struct thr *t)
{
	struct rng *r = &t->rng;
	int n = 0;

	while (g.stop < 2) {
		char c = 'x';
		int p = (int)below(r, NPIPES);

		if (write(g.pipes[p][1], &c, 1) < 0) {
			/* full, or EINTR */
		}
		if (++n % 64 == 0)
			for (int i = 0; i < NPIPES; i++)
				fcntl(g.pipes[i][1], F_SETFL, O_NONBLOCK);
		if (chance(r, 500)) {
			int f = (int)below(r, NFUTEX);

			__atomic_add_fetch(&g.futex[f], 1, __ATOMIC_RELAXED);
			syscall(SYS_futex, &g.futex[f], FUTEX_WAKE_PRIVATE, 1 + below(r, 3), NULL, NULL, 0);
		}
		sleep_us(300 + below(r, 2500));
	}
}

static void consumer_loop(struct thr *t)
{
	struct rng *r = &t->rng;

	while (g.stop < 2) {
		t->curtid = (int)RS0(SYS_gettid);
		consume_all(r, chance(r, 100));
		sleep_us(200 + below(r, 1500));
	}
}

/* SIGSTOP and SIGCONT of the whole process from a forked helper. */
static void stopper_loop(struct thr *t)
{
	struct rng *r = &t->rng;

	while (!round_over()) {
		long us = 1000 + (long)below(r, 20000);
		pid_t p;

		sleep_us(100000 + below(r, 500000));
		if (round_over())
			break;
		stat_inc(ST_STOPS);
		p = fork();
		if (p == 0) {
			struct timespec ts = { 0, us * 1000 };

			RS2(SYS_kill, g.pid, SIGSTOP);
			RS2(SYS_nanosleep, &ts, NULL);
			RS2(SYS_kill, g.pid, SIGCONT);
			RS2(SYS_kill, g.pid, SIGCONT);
			RS1(SYS_exit_group, 0);
		}
	}
}

static int trace_wait(pid_t tid, int ms, int *st)
{
	struct timespec ts = { 0, 1000000 };

	for (int i = 0; i < ms; i++) {
		long w = RS3(SYS_wait4, tid, st, __WALL | WNOHANG);

		if (w == tid)
			return 1;
		if (w < 0)
			return 0;
		RS2(SYS_nanosleep, &ts, NULL);
	}
	return 0;
}

/* PTRACE_SEIZE, INTERRUPT, a few SYSCALL steps, DETACH, from a forked helper. */
static void tracer_helper(pid_t tid, int steps)
{
	int st = 0, sig;

	signal(SIGALRM, SIG_DFL);
	alarm(3);
	if (RS4(SYS_ptrace, PTRACE_SEIZE, tid, 0, PTRACE_O_TRACESYSGOOD))
		RS1(SYS_exit_group, 0);
	RS4(SYS_ptrace, PTRACE_INTERRUPT, tid, 0, 0);
	if (!trace_wait(tid, 300, &st))
		RS1(SYS_exit_group, 0);		/* the exit detaches */
	for (int i = 0; i < steps; i++) {
		sig = 0;
		if (WIFSTOPPED(st) && (st >> 16) == 0 && WSTOPSIG(st) != (SIGTRAP | 0x80) &&
		    WSTOPSIG(st) != SIGTRAP && WSTOPSIG(st) != SIGSTOP && WSTOPSIG(st) != SIGTSTP &&
		    WSTOPSIG(st) != SIGTTIN && WSTOPSIG(st) != SIGTTOU)
			sig = WSTOPSIG(st);
		if (RS4(SYS_ptrace, PTRACE_SYSCALL, tid, 0, sig))
			break;
		if (!trace_wait(tid, 50, &st)) {
			RS4(SYS_ptrace, PTRACE_INTERRUPT, tid, 0, 0);
			if (!trace_wait(tid, 100, &st))
				break;
		}
	}
	RS4(SYS_ptrace, PTRACE_DETACH, tid, 0, 0);
	RS1(SYS_exit_group, 0);
}

static void tracer_loop(struct thr *t)
{
	struct rng *r = &t->rng;

	while (!round_over()) {
		pid_t tid, p;
		int steps = 1 + (int)below(r, 8);

		sleep_us(150000 + below(r, 600000));
		if (round_over())
			break;
		tid = pick_tid(r);
		stat_inc(ST_TRACES);
		p = fork();
		if (p == 0)
			tracer_helper(tid, steps);
	}
}

/* mprotect/munmap/zap the memory of raw heads: async_head_user and rings. */
static void memchaos_loop(struct thr *t)
{
	struct rng *r = &t->rng;

	while (!round_over()) {
		struct rawhead *rh = &g.raw[below(r, g.cfg.nraw)];
		int ring = chance(r, 500);
		char *pg;
		int *state;

		sleep_us(3000 + below(r, 40000));
		pthread_mutex_lock(&rh->lock);
		pg = ring ? rh->ringpage : rh->ahupage;
		state = ring ? &rh->ring_state : &rh->ahu_state;
		stat_inc(ST_MEMCHAOS);
		switch (*state) {
		case M_RW:
			switch (below(r, 4)) {
			case 0:
				if (!mprotect(pg, 4096, PROT_NONE))
					*state = M_NONE;
				break;
			case 1:
				if (!munmap(pg, 4096))
					*state = M_GONE;
				break;
			case 2:		/* zero it under the kernel's feet */
				madvise(pg, 4096, MADV_DONTNEED);
				rh->quiet = 0;
				break;
			default:	/* replace it by a fresh page, in one step */
				mmap(pg, 4096, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
				rh->quiet = 0;
				break;
			}
			break;
		case M_NONE:
			if (!mprotect(pg, 4096, PROT_READ | PROT_WRITE))
				*state = M_RW;
			break;
		case M_GONE: {
			void *p = mmap(pg, 4096, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

			if (p == pg)
				*state = M_RW;
			else
				*state = M_LOST;
			rh->quiet = 0;
			break;
		}
		default:
			break;
		}
		pthread_mutex_unlock(&rh->lock);
	}
}

/* The round's last word: exits if the finale did not. */
static void dump_threads(const char *why)
{
	/* getdents64 by hand: no malloc, whatever state the threads left it in */
	char dbuf[4096];
	int dfd = open("/proc/self/task", O_RDONLY | O_DIRECTORY);
	long nd = dfd >= 0 ? syscall(SYS_getdents64, dfd, dbuf, sizeof(dbuf)) : 0;

	say("round %u: %s; threads:", g.round, why);
	for (long off = 0; off < nd;) {
		struct linux_dirent64 {
			uint64_t d_ino;
			int64_t d_off;
			unsigned short d_reclen;
			unsigned char d_type;
			char d_name[];
		} *e = (void *)(dbuf + off);
		char path[320], buf[256], wchan[64] = "?";
		int fd, n;

		off += e->d_reclen;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		fd = open(path, O_RDONLY);
		n = fd >= 0 ? (int)read(fd, buf, sizeof(buf) - 1) : 0;
		if (fd >= 0)
			close(fd);
		buf[n > 0 ? n : 0] = 0;
		if (strchr(buf, '\n'))
			*strchr(buf, '\n') = 0;
		snprintf(path, sizeof(path), "/proc/self/task/%s/wchan", e->d_name);
		fd = open(path, O_RDONLY);
		n = fd >= 0 ? (int)read(fd, wchan, sizeof(wchan) - 1) : 0;
		if (fd >= 0)
			close(fd);
		if (n > 0)
			wchan[n] = 0;
		{
			char sc[160] = "?";

			snprintf(path, sizeof(path), "/proc/self/task/%s/syscall", e->d_name);
			fd = open(path, O_RDONLY);
			n = fd >= 0 ? (int)read(fd, sc, sizeof(sc) - 1) : 0;
			if (fd >= 0)
				close(fd);
			if (n > 0)
				sc[n] = 0;
			if (strchr(sc, '\n'))
				*strchr(sc, '\n') = 0;
			say("  %.40s wchan=%s syscall=%.80s", buf, wchan, sc);
		}
	}
	if (dfd >= 0)
		close(dfd);
	for (int h = 0; h < g.cfg.nlib; h++)
		say("  lib head %d at %p: state %d, kernel idx %llu, user idx %llu, %u entries, pool %u",
		    h, (void *)&lib_ahu[h], g.lib[h].state, lib_ahu[h].kernel_ring_idx,
		    lib_ahu[h].user_ring_idx, g.lib[h].entries, g.lib[h].pool);
	for (int i = 0; i < g.cfg.nraw; i++)
		say("  raw head %d at %p: registered %d, pages %d/%d, %u entries, max %u", i,
		    (void *)g.raw[i].ahu, g.raw[i].registered, g.raw[i].ahu_state, g.raw[i].ring_state,
		    g.raw[i].entries, g.raw[i].maxthr);
}

static void reaper_loop(struct thr *t)
{
	(void)t;
	while (now_ns() < g.deadline + REAPER_GRACE * 1000000000LL)
		sleep_us(50000);
	dump_threads("the finale did not finish in time (reaper exits)");
	snprintf(g_sh->finale, sizeof(g_sh->finale), "reaper: finale stuck");
	RS1(SYS_exit_group, 3);
}

static void *thread_main(void *arg)
{
	struct thr *t = arg;

	thread_setup(t);
	switch (t->role) {
	case R_WORKER: case R_SPAWNED: worker_loop(t); break;
	case R_PARKER: parker_loop(t); break;
	case R_CONSUMER: consumer_loop(t); break;
	case R_TICKER: ticker_loop(t); break;
	case R_FEEDER: feeder_loop(t); break;
	case R_STOPPER: stopper_loop(t); break;
	case R_TRACER: tracer_loop(t); break;
	case R_MEMCHAOS: memchaos_loop(t); break;
	case R_REAPER: reaper_loop(t); break;
	}
	/* Leave without touching pthread state a hand-off may have moved. */
	thr_dead(t, DS_MAIN_END);
	for (;;)
		RS1(SYS_exit, 0);
	return NULL;
}

/* ---- signals ------------------------------------------------------------------ */

static void on_usr(int sig)
{
	(void)sig;
}

static void on_fatal(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	struct thr *t = t_self;

	say("round %u: fatal signal %d at ip=%#llx sp=%#llx addr=%p tid=%d role=%s op=%s%s", g.round, sig,
	    (u64)(unsigned long)uc->uc_mcontext.gregs[FZ_REG_IP],
	    (u64)(unsigned long)uc->uc_mcontext.gregs[FZ_REG_SP],
	    si->si_addr, (int)RS0(SYS_gettid),
	    t ? role_name[t->role] : "?", t ? op_name[t->op] : "?",
	    g_sh && g_sh->kamikaze ? " (after a kamikaze op)" : "");
	signal(sig, SIG_DFL);
}

static void signals_setup(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_flags = SA_RESTART | SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_flags = 0;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESETHAND;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
}

/* ---- a round, in its own process ------------------------------------------------ */

static void *map(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		say("round %u: mmap of %zu bytes failed", g.round, len);
		_exit(2);
	}
	return p;
}

static void round_memory(struct rng *r)
{
	char *p;

	g.tok = map((size_t)NTOK * sizeof(struct token), PROT_READ | PROT_WRITE);
	g.ch = map((size_t)NCHAIN * sizeof(struct chain), PROT_READ | PROT_WRITE);
	/*
	 * junk: a read-only page of 0xff, then a PROT_NONE page (what runs
	 * off its end faults), then a read-only zero page. No hole is left
	 * in the address space anywhere: a later mmap would fill it. The
	 * unmapped address is below the (non-PIE, static) binary at 4 MiB,
	 * where nothing is ever mapped.
	 */
	p = map(3 * 4096, PROT_READ | PROT_WRITE);
	memset(p, 0xff, 4096);
	mprotect(p, 4096, PROT_READ);
	mprotect(p + 4096, 4096, PROT_NONE);
	g.junk = p;
	g.ropage = p + 2 * 4096;
	mprotect(g.ropage, 4096, PROT_READ);
	g.unmapped = (char *)0x100000;
	if (msync(g.unmapped, 4096, MS_ASYNC) == 0 || errno != ENOMEM) {
		say("round %u: %p is mapped; no unmapped address to use", g.round, g.unmapped);
		_exit(2);
	}
	/* Per-thread pages: [raw areas 4K][scratch 16K][PROT_NONE 4K] each. */
	g.thrmem = map((size_t)MAX_THR * THRMEM_SZ, PROT_READ | PROT_WRITE);
	for (int i = 0; i < MAX_THR; i++) {
		g.rawpage[i] = g.thrmem + (size_t)i * THRMEM_SZ;
		mprotect(g.thrmem + (size_t)i * THRMEM_SZ + 4096 + SCRATCH_SZ, 4096, PROT_NONE);
	}
	g.sharedpage = mmap(NULL, MAX_THR * 128, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			    -1, 0);
	if (g.sharedpage == MAP_FAILED)
		g.sharedpage = NULL;

	/* A tame chain that threadlets run: getpid, then a short sleep. */
	{
		static struct timespec ts = { 0, 300000 };

		g.nested = map(4096, PROT_READ | PROT_WRITE);
		g.nested_val[0] = (u64)(uintptr_t)&ts;
		g.nested_val[1] = 0;
		syslet_atom_init(&g.nested[0], SYS_getpid, 0, NULL, &g.nested[1], 0);
		syslet_atom_init(&g.nested[1], SYS_nanosleep, SYSLET_NO_COMPLETE, NULL, NULL, 2,
				 &g.nested_val[0], &g.nested_val[1]);
		g.nested[2] = g.nested[0];
		g.nested[2].next = 0;
	}

	/* Raw heads: an async_head_user page and a ring page each, with gaps. */
	g.region = map((size_t)(NRAW * 4 + 1) * 4096, PROT_NONE);
	for (int i = 0; i < NRAW; i++) {
		struct rawhead *rh = &g.raw[i];

		pthread_mutex_init(&rh->lock, NULL);
		rh->ahupage = g.region + (size_t)(i * 4 + 1) * 4096;
		rh->ringpage = g.region + (size_t)(i * 4 + 3) * 4096;
		mprotect(rh->ahupage, 4096, PROT_READ | PROT_WRITE);
		mprotect(rh->ringpage, 4096, PROT_READ | PROT_WRITE);
		rh->ahu = (struct async_head_user *)(rh->ahupage + 8 * below(r, 4096 / 8 - 8));
		rh->entries = 1U << below(r, 10);
		rh->maxthr = 1 + (unsigned int)below(r, 6);
		if (EXCLUDED(XF_OVERPARK))
			rh->maxthr = ASYNC_MAX_CACHEMISS;	/* never more parked than allowed */
	}
}

static void round_files(struct rng *r)
{
	struct stat st;

	for (int i = 0; i < NPIPES; i++) {
		if (pipe(g.pipes[i])) {
			say("round %u: pipe failed", g.round);
			_exit(2);
		}
		fcntl(g.pipes[i][1], F_SETFL, O_NONBLOCK);
	}
	g.diskfd = open("/mnt/disk/data", O_RDONLY);
	if (g.diskfd >= 0 && !fstat(g.diskfd, &st) && st.st_size >= 1 << 20) {
		g.disklen = (size_t)st.st_size;
		g.diskmap = mmap(NULL, g.disklen, PROT_READ, MAP_SHARED, g.diskfd, 0);
		if (g.diskmap == MAP_FAILED)
			g.diskmap = NULL;
	} else if (g.diskfd >= 0) {
		close(g.diskfd);
		g.diskfd = -1;
	}
	(void)r;
	{
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/task/%d/fail-nth", (int)RS0(SYS_gettid));
		g.failnth = !access(path, W_OK);
	}
}

static void round_config(struct rng *r, struct cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->nworkers = 2 + (int)below(r, MAX_WORKERS - 1);
	c->nparkers = (int)below(r, MAX_PARKERS + 1);
	c->nlib = 1 + (int)below(r, NLIB);
	c->nraw = 1 + (int)below(r, NRAW);
	c->stopper = chance(r, 500);
	c->tracer = chance(r, 500);
	c->memchaos = chance(r, 600);
	c->creds = chance(r, 400);
	c->unshare = chance(r, 300);
	c->kamikaze = chance(r, 80);
	c->rawland = chance(r, 600);
	c->force_syscall = chance(r, 250);
	c->finale = (int)below(r, 10);
	c->finale = c->finale < 4 ? F_ORDERLY : c->finale - 4 + 1;
	if (c->finale >= F_NR)
		c->finale = F_ORDERLY;
	c->stopper &= !EXCLUDED(XF_STOP);
	c->tracer &= !EXCLUDED(XF_TRACE);
	c->memchaos &= !EXCLUDED(XF_MEMCHAOS);
	c->creds &= !EXCLUDED(XF_CREDS);
	c->unshare &= !EXCLUDED(XF_UNSHARE);
	c->kamikaze &= !EXCLUDED(XF_KAMIKAZE);
	c->rawland &= !EXCLUDED(XF_RAWLAND);
	if (EXCLUDED(XF_PARKERS))
		c->nparkers = 0;
	if ((c->finale == F_EXIT_MAIN && EXCLUDED(XF_MAINFINALE)) ||
	    (c->finale == F_EXEC_WORKER && EXCLUDED(XF_EXECFINALE)) ||
	    (c->finale == F_SIGKILL && EXCLUDED(XF_KILLFINALE)) ||
	    (c->finale == F_LEADER_EXIT && EXCLUDED(XF_LEADER)) ||
	    (c->finale == F_EXIT_IN_THREADLET && EXCLUDED(XF_EXITFINALE)))
		c->finale = F_ORDERLY;
}

static void spawn(int role, struct rng *r)
{
	struct thr *t = thr_new(role, r);

	if (t && thr_start(t))
		t->used = 0;
}

static int count_alive(int role)
{
	int n = 0;

	for (int i = 0; i < MAX_THR; i++)
		n += g.thr[i].used && g.thr[i].alive && g.thr[i].role == role;
	return n;
}

static void reap_children(void)
{
	int st;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
		if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_VIOLATION)
			violation("a fork/exec child (pid %d) reported a violation", p);
}

static void finale_orderly(void)
{
	long long until;

	snprintf(g_sh->finale, sizeof(g_sh->finale), "orderly");
	g.stop = 1;
	until = now_ns() + 3000000000LL;
	while (now_ns() < until && (count_alive(R_WORKER) || count_alive(R_SPAWNED)))
		sleep_us(5000);
	/* Send the raw heads' parked threads home, end the library's heads. */
	for (int i = 0; i < g.cfg.nraw; i++) {
		struct rawhead *rh = &g.raw[i];

		pthread_mutex_lock(&rh->lock);
		if (rh->registered)
			RS3(__NR_async_register, rh->ahu, sizeof(*rh->ahu), ASYNC_UNREGISTER);
		rh->registered = 0;
		pthread_mutex_unlock(&rh->lock);
	}
	for (int h = 0; h < g.cfg.nlib; h++) {
		struct libhead *lh = &g.lib[h];
		int live;

		pthread_mutex_lock(&lh->lock);
		live = lh->state == 1;
		lh->state = 2;
		pthread_mutex_unlock(&lh->lock);
		if (live) {
			long q;

			async_head_exit(&lib_ahu[h]);
			q = RS3(__NR_async_register, &lib_ahu[h], sizeof(lib_ahu[h]), ASYNC_QUERY_PARKED);
			if (q != -EINVAL)
				violation("lib head %d still answers after async_head_exit (%ld)", h, q);
		}
	}
	g.stop = 2;
	sleep_us(20000);
	RS1(SYS_exit_group, 0);
}

static void __attribute__((noreturn)) round_child(u64 rseed, unsigned int round, int secs)
{
	struct rng r;
	int fd;

	setpgid(0, 0);
	fd = fcntl(1, F_DUPFD, OUT_FD);
	if (fd >= 0)
		g_out = fd;
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	g.seed = rseed;
	g.round = round;
	g.pid = getpid();
	g.ppid = getppid();
	g.start = now_ns();
	g.deadline = g.start + secs * 1000000000LL;
	rng_seed(&r, rseed);
	round_config(&r, &g.cfg);
	if (g.cfg.force_syscall)
		setenv("THREADLET_FORCE_SYSCALL", "1", 1);
	if (readlink("/proc/self/exe", g.self_exe, sizeof(g.self_exe) - 1) < 0)
		strcpy(g.self_exe, "/tests/" FZ_NAME);
	pthread_mutex_init(&g.thr_lock, NULL);
	pthread_mutex_init(&g.stack_lock, NULL);
	pthread_mutex_init(&g.land_lock, NULL);
	pthread_key_create(&g.key, thr_dtor);
	signals_setup();
	vdso_on = (vdso_on_fn)vdso_sym_or_null("__vdso_threadlet_on");
	vdso_off = (vdso_off_fn)vdso_sym_or_null("__vdso_threadlet_off");
	round_memory(&r);
	round_files(&r);
	if (g_verbose)
		say("round %u: %d workers, %d parkers, %d lib heads, %d raw heads, %s%s%s%s%s%s%s%s, finale %s",
		    round, g.cfg.nworkers, g.cfg.nparkers, g.cfg.nlib, g.cfg.nraw,
		    g.cfg.force_syscall ? "syscalls" : "vDSO", g.cfg.stopper ? " stopper" : "",
		    g.cfg.tracer ? " tracer" : "", g.cfg.memchaos ? " memchaos" : "",
		    g.cfg.creds ? " creds" : "", g.cfg.unshare ? " unshare" : "",
		    g.cfg.kamikaze ? " kamikaze" : "", g.cfg.rawland ? " rawland" : "",
		    finale_name[g.cfg.finale]);

	for (int h = 0; h < g.cfg.nlib; h++) {
		struct libhead *lh = &g.lib[h];
		int ret;

		pthread_mutex_init(&lh->lock, NULL);
		lh->entries = 1U << below(&r, 7);
		lh->pool = 1 + (unsigned int)below(&r, 6);
		ret = async_head_init(&lib_ahu[h], lh->entries, lh->pool);
		if (ret)
			say("round %u: async_head_init(%u, %u) returned %d", round, lh->entries, lh->pool, ret);
		lh->state = ret ? 0 : 1;
	}
	for (int i = 0; i < g.cfg.nraw; i++) {
		struct rawhead *rh = &g.raw[i];

		rh->ahu->completion_ring = (u64)(uintptr_t)rh->ringpage;
		rh->ahu->ring_size_bytes = rh->entries * 8;
		rh->ahu->max_cachemiss_threads = rh->maxthr;
		raw_elastic(rh, &r);
		if (!RS3(__NR_async_register, rh->ahu, sizeof(*rh->ahu), 0))
			rh->registered = 1;
		else
			violation("registering raw head %d failed", i);
	}

	spawn(R_REAPER, &r);
	spawn(R_TICKER, &r);
	spawn(R_FEEDER, &r);
	spawn(R_CONSUMER, &r);
	if (g.cfg.stopper)
		spawn(R_STOPPER, &r);
	if (g.cfg.tracer)
		spawn(R_TRACER, &r);
	if (g.cfg.memchaos)
		spawn(R_MEMCHAOS, &r);
	for (int i = 0; i < g.cfg.nparkers; i++)
		spawn(R_PARKER, &r);
	for (int i = 0; i < g.cfg.nworkers; i++)
		spawn(R_WORKER, &r);

	/* Keep the population up until the deadline; reap fork children. */
	while (!round_over()) {
		reap_children();
		if (g.spawns < 150) {
			if (count_alive(R_WORKER) < g.cfg.nworkers)
				spawn(R_WORKER, &r);
			if (count_alive(R_PARKER) < g.cfg.nparkers)
				spawn(R_PARKER, &r);
		}
		if (g.cfg.finale == F_EXEC_WORKER && now_ns() > g.deadline - 800000000LL)
			g.exec_req = 1;
		if (g.cfg.finale == F_EXIT_IN_THREADLET && now_ns() > g.deadline - 800000000LL)
			g.exit_req = 1;
		sleep_us(20000);
	}
	reap_children();
	switch (g.cfg.finale) {
	case F_EXIT_MAIN:
		snprintf(g_sh->finale, sizeof(g_sh->finale), "exit_group from main");
		RS1(SYS_exit_group, 0);
		break;
	case F_SIGKILL:
		snprintf(g_sh->finale, sizeof(g_sh->finale), "SIGKILL");
		RS2(SYS_kill, g.pid, SIGKILL);
		break;
	case F_LEADER_EXIT:
		snprintf(g_sh->finale, sizeof(g_sh->finale), "leader exited first");
		g.leader_gone = 1;
		pthread_exit(NULL);
	case F_EXEC_WORKER:
	case F_EXIT_IN_THREADLET:
		/* The workers did not do it: exit with everything in flight. */
		snprintf(g_sh->finale, sizeof(g_sh->finale), "exit_group (no threadlet took the finale)");
		RS1(SYS_exit_group, 0);
		break;
	default:
		finale_orderly();
	}
	RS1(SYS_exit_group, 0);
	_exit(0);
}

/* ---- --exec-child: what a round execs into -------------------------------------- */

static struct async_head_user x_ahu __attribute__((aligned(64)));
static int x_pipe[2];

static long x_fn(void *data)
{
	char c;
	long how = (long)(uintptr_t)data;

	if (read(x_pipe[0], &c, 1) < 0) {
		/* fine */
	}
	if (how == 2)
		RS1(SYS_exit_group, 0);
	return complete_threadlet_fn(data, &x_ahu);
}

static void *x_writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++) {
		if (write(x_pipe[1], "x", 1) < 0) {
			/* fine */
		}
		sleep_us(1000);
	}
	return NULL;
}

static int exec_child(int argc, char **argv)
{
	struct rng r;
	pthread_t w;
	unsigned long st[4];
	int depth = argc > 3 ? atoi(argv[3]) : 0;
	int tid = (int)RS0(SYS_gettid);

	alarm(5);
	if (fcntl(OUT_FD, F_GETFD) >= 0)
		g_out = OUT_FD;
	rng_seed(&r, strtoull(argv[2], NULL, 0));
	if (async_head_init(&x_ahu, 4, 1 + (unsigned int)below(&r, 3)) || pipe(x_pipe))
		return 0;
	if (pthread_create(&w, NULL, x_writer, NULL))
		return 0;
	for (int i = 0; i < 4; i++) {
		long ret;

		st[i] = threadlet_stack_alloc(STACK_SZ);
		if (threadlet_err(st[i]))
			return 0;
		ret = threadlet_exec(x_fn, (void *)(uintptr_t)(chance(&r, 100) ? 2 : 1), st[i], &x_ahu);
		if ((int)RS0(SYS_gettid) != tid) {
			say("VIOLATION: exec child: the head's TID changed");
			return EXIT_VIOLATION;
		}
		if (ret != 0 && ret != 1) {
			say("VIOLATION: exec child: threadlet_exec returned %ld", ret);
			return EXIT_VIOLATION;
		}
	}
	switch (below(&r, 4)) {
	case 0:
		if (depth > 0) {
			char *nargv[] = { argv[0], "--exec-child", argv[2], "0", NULL };

			execv("/proc/self/exe", nargv);
		}
		break;
	case 1:
		execl("/bin/true", "true", (char *)NULL);
		break;
	case 2:
		async_head_exit(&x_ahu);
		break;
	default:
		break;
	}
	return 0;
}

/* ---- the parent --------------------------------------------------------------------- */

/* The value of " key" on the kernel command line, up to the next blank. */
static int read_cmdline_str(const char *key, char *val, size_t len)
{
	char buf[4096], *p;
	int fd = open("/proc/cmdline", O_RDONLY), n;
	size_t kl = strlen(key);

	if (fd < 0)
		return 0;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	for (p = buf; (p = strstr(p, key)); p += kl) {
		if (p != buf && p[-1] != ' ')
			continue;
		p += kl;
		n = (int)strcspn(p, " \n");
		snprintf(val, len, "%.*s", n, p);
		return 1;
	}
	return 0;
}

static int read_cmdline(const char *key, u64 *val)
{
	char buf[64];

	if (!read_cmdline_str(key, buf, sizeof(buf)))
		return 0;
	*val = strtoull(buf, NULL, 0);
	return 1;
}

/* "a,b,c" into g_exclude; 0, or -1 for an unknown name. */
static int parse_exclude(const char *list)
{
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int i;

		for (i = 0; i < XF_NR && strcmp(tok, xf_name[i]); i++)
			;
		if (i == XF_NR) {
			say("threadlet-fuzz: unknown feature \"%s\" for -x", tok);
			return -1;
		}
		g_exclude |= 1U << i;
	}
	return 0;
}

static void dump_child(pid_t pid)
{
	char path[320];
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		char buf[512], wchan[64] = "?", sysc[96] = "?";
		int fd, n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, e->d_name);
		fd = open(path, O_RDONLY);
		n = fd >= 0 ? (int)read(fd, buf, sizeof(buf) - 1) : 0;
		if (fd >= 0)
			close(fd);
		buf[n > 0 ? n : 0] = 0;
		if (strchr(buf, '\n'))
			*strchr(buf, '\n') = 0;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", pid, e->d_name);
		fd = open(path, O_RDONLY);
		n = fd >= 0 ? (int)read(fd, wchan, sizeof(wchan) - 1) : 0;
		if (fd >= 0)
			close(fd);
		if (n > 0)
			wchan[n] = 0;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/syscall", pid, e->d_name);
		fd = open(path, O_RDONLY);
		n = fd >= 0 ? (int)read(fd, sysc, sizeof(sysc) - 1) : 0;
		if (fd >= 0)
			close(fd);
		if (n > 0)
			sysc[n] = 0;
		if (strchr(sysc, '\n'))
			*strchr(sysc, '\n') = 0;
		say("  task %s: %.70s wchan=%s syscall=%.40s", e->d_name, buf, wchan, sysc);
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stack", pid, e->d_name);
		fd = open(path, O_RDONLY);
		n = fd >= 0 ? (int)read(fd, buf, sizeof(buf) - 1) : 0;
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			char *l, *save = NULL;

			buf[n] = 0;
			for (l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
				say("    %s", l);
		}
	}
	if (d)
		closedir(d);
}

static void flight_report(void)
{
	for (int i = 0; i < MAX_THR; i++)
		if (g_sh->flight[i].op)
			say("  in flight: %s (tid %d): %s", role_name[g_sh->flight[i].role % R_NR],
			    g_sh->flight[i].tid, op_name[g_sh->flight[i].op % OP_NR]);
}

static void sysrq(char c)
{
	int fd = open("/proc/sysrq-trigger", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, &c, 1) < 0) {
			/* fine */
		}
		close(fd);
	}
}

/* The host's command that boots a guest and runs this build. */
static const char *host_make(void)
{
#ifdef __i386__
	return g_compat ? "make fuzz M32=1" : "make fuzz-i386";
#else
	return "make fuzz";
#endif
}

static void usage(void)
{
	char names[300] = "";

	for (int i = 0; i < XF_NR; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? "," : "",
			 xf_name[i]);
	say("usage: " FZ_NAME " [-s SEED] [-t SECONDS] [-n ITERATIONS] [-r ROUND] [-R ROUND_SECONDS]");
	say("%*s[-x FEATURE,...] [-v]", (int)sizeof("usage: " FZ_NAME " ") - 1, "");
	say("  -x leaves features out: %s", names);
}

int main(int argc, char **argv)
{
	u64 seed = DEFAULT_SEED, iters = 0, v;
	long time_s = DEFAULT_TIME, round_s = DEFAULT_ROUND, guest_timeout = 0;
	unsigned int first_round = 0, round;
	int have_seed = 0, have_time = 0, have_iters = 0, have_x = 0, have_r = 0, opt;
	int failed = 0, hangs = 0;
	char xlist[256] = "", xarg[270];
	u64 total = 0;
	long long start, end;
	char cmd[256];
	long ret;

#ifdef __i386__
	{
		struct utsname u;

		g_compat = !uname(&u) && !strcmp(u.machine, "x86_64");
	}
#endif
	if (argc > 2 && !strcmp(argv[1], "--exec-child"))
		return exec_child(argc, argv);
	setvbuf(stdout, NULL, _IONBF, 0);
	while ((opt = getopt(argc, argv, "s:t:n:r:R:x:vh")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); have_seed = 1; break;
		case 't': time_s = strtol(optarg, NULL, 0); have_time = 1; break;
		case 'n': iters = strtoull(optarg, NULL, 0); have_iters = 1; break;
		case 'r': first_round = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'R': round_s = strtol(optarg, NULL, 0); have_r = 1; break;
		case 'v': g_verbose = 1; break;
		case 'h': usage(); return 0;
		case 'x':
			snprintf(xlist + strlen(xlist), sizeof(xlist) - strlen(xlist), "%s%s",
				 xlist[0] ? "," : "", optarg);
			have_x = 1;
			break;
		default:
			usage();
			printf("not ok 1 " FZ_NAME " # bad arguments\n1..1\n");
			return 1;
		}
	}
	if (!have_seed && read_cmdline("tl.fuzz_seed=", &v))
		seed = v;
	if (!have_time && read_cmdline("tl.fuzz_time=", &v))
		time_s = (long)v;
	if (!have_iters && read_cmdline("tl.fuzz_iters=", &v))
		iters = v;
	if (!have_x)
		read_cmdline_str("tl.fuzz_exclude=", xlist, sizeof(xlist));
	if (xlist[0] && parse_exclude(xlist)) {
		usage();
		printf("not ok 1 " FZ_NAME " # bad -x\n1..1\n");
		return 1;
	}
	if (read_cmdline("tl.fuzz_verbose=", &v))
		g_verbose = (int)v;
	if (read_cmdline("tl.timeout=", &v))
		guest_timeout = (long)v;
	if (g_verbose) {
		/* The kernel's "segfault at" lines, for threads that block SIGSEGV. */
		int fd = open("/proc/sys/kernel/printk", O_WRONLY);

		if (fd >= 0) {
			if (write(fd, "7", 1) < 0) {
				/* fine */
			}
			close(fd);
		}
	}
	if (time_s < 1)
		time_s = 1;
	if (round_s < 1)
		round_s = 1;
	if (round_s > time_s)
		round_s = time_s;
	/* Leave room for a hang to be seen and reported inside the guest's timeout. */
	if (guest_timeout && time_s + round_s + HANG_GRACE + 25 > guest_timeout) {
		long t = guest_timeout - round_s - HANG_GRACE - 25;

		say("threadlet-fuzz: the guest's %lds timeout leaves %lds of fuzzing", guest_timeout,
		    t > 1 ? t : 1);
		time_s = t > 1 ? t : 1;
	}

	/*
	 * Are 451..458 ours? (On newer kernels those numbers are other calls:
	 * never fuzz them.) Bad flags are EINVAL, and umem_add adds.
	 */
	ret = RS3(__NR_threadlet_register, 0, 0, ~0U);
	{
		u64 x = 5;
		long u = fz_umem_add((uintptr_t)&x, 1);

		if (ret == -EINVAL && x == 6 && (u == 1 || u == 6) &&
		    RS3(__NR_async_register, &never_ahu[0], 64, 3) == -EINVAL)
			ret = 0;
		else
			ret = -ENOSYS;
	}
	if (ret == -ENOSYS) {
		say("threadlet-fuzz: no threadlet system calls in this kernel");
		printf("ok 1 " FZ_NAME " # SKIP no threadlets\n1..1\n");
		return 4;
	}
	g_sh = mmap(NULL, sizeof(*g_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g_sh == MAP_FAILED) {
		printf("not ok 1 " FZ_NAME " # mmap\n1..1\n");
		return 1;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	snprintf(cmd, sizeof(cmd), FZ_NAME " -s %llu -t %ld", seed, time_s);
	if (have_r)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " -R %ld", round_s);
	if (iters)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " -n %llu", iters);
	if (first_round)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " -r %u", first_round);
	if (xlist[0])
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " -x %s", xlist);
	say("threadlet-fuzz: seed=%llu time=%lds rounds of %lds%s", seed, time_s, round_s,
	    iters ? " (iteration budget)" : "");
	snprintf(xarg, sizeof(xarg), "%s%s", xlist[0] ? " -x " : "", xlist);
	say("reproduce: %s   (host: %s SEED=%llu TIME=%ld%s%s)", cmd, host_make(), seed, time_s,
	    xlist[0] ? " FUZZ_EXCLUDE=" : "", xlist);

	tl_fi_open(NULL);
	start = now_ns();
	end = start + time_s * 1000000000LL;
	for (round = first_round; ; round++) {
		long long now = now_ns(), deadline, hard;
		u64 rs = round_seed(seed, round);
		int secs, st = 0, reaped = 0, conted = 0;
		pid_t pid;

		if (now >= end - 500000000LL || (iters && total >= iters))
			break;
		secs = (int)((end - now + 500000000LL) / 1000000000LL);
		if (secs > round_s)
			secs = (int)round_s;
		if (secs < 1)
			secs = 1;
		memset(g_sh, 0, sizeof(*g_sh));
		g_sh->budget = iters ? iters - total : 0;
		say("round %u seed %llu (%ds)", round, rs, secs);
		pid = fork();
		if (pid < 0) {
			say("fork failed: %s", strerror(errno));
			failed = 1;
			break;
		}
		if (pid == 0)
			round_child(rs, round, secs);
		setpgid(pid, pid);
		deadline = now_ns() + secs * 1000000000LL;
		hard = deadline + HANG_GRACE * 1000000000LL;
		while (!reaped) {
			pid_t w;
			int st2;

			/* Our round child, or orphans of its helpers (we are their subreaper). */
			while ((w = waitpid(-1, &st2, WNOHANG | __WALL)) > 0)
				if (w == pid) {
					st = st2;
					reaped = 1;
				}
			if (reaped)
				break;
			if (now_ns() > hard && !conted) {
				/* A stop that nobody continued is not a hang. */
				say("round %u seed %llu: not reaped %ds after its deadline; SIGCONT",
				    round, rs, HANG_GRACE);
				kill(pid, SIGCONT);
				kill(-pid, SIGCONT);
				conted = 1;
				hard = now_ns() + 5000000000LL;
				continue;
			}
			if (now_ns() > hard) {
				say("HANG: round %u seed %llu: the round child did not exit (%ds after its deadline)",
				    round, rs, HANG_GRACE + 5);
				say("reproduce: " FZ_NAME " -s %llu -r %u -t %d%s", seed, round, secs, xarg);
				dump_child(pid);
				flight_report();
				sysrq('w');
				kill(pid, SIGKILL);
				kill(-pid, SIGKILL);
				for (int i = 0; i < 2000 && waitpid(pid, &st, WNOHANG | __WALL) != pid; i++)
					sleep_us(10000);
				if (kill(pid, 0) == 0 && waitpid(pid, &st, WNOHANG | __WALL) != pid)
					say("HANG: round %u: the child survives SIGKILL for 20s", round);
				failed = 1;
				hangs = 1;
				break;
			}
			sleep_us(10000);
		}
		total += g_sh->iters;
		if (reaped) {
			if (WIFSIGNALED(st))
				say("round %u seed %llu: child ended by signal %d (%s)%s; %llu iterations",
				    round, rs, WTERMSIG(st), strsignal(WTERMSIG(st)),
				    g_sh->kamikaze ? ", after a kamikaze op" : "", g_sh->iters);
			else
				say("round %u seed %llu: child exited %d (%s); %llu iterations", round, rs,
				    WEXITSTATUS(st), g_sh->finale[0] ? g_sh->finale : "?", g_sh->iters);
			if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL && g_verbose)
				flight_report();
			if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_VIOLATION)
				g_sh->violations++;
		}
		/* The round's helpers and fork children: end them, reap them. */
		kill(-pid, SIGKILL);
		for (int i = 0; ; i++) {
			if (waitpid(-1, &st, WNOHANG | __WALL) < 0 && errno == ECHILD)
				break;
			if (i == 2000) {
				say("HANG: round %u seed %llu: a process of the round survives SIGKILL for 20s",
				    round, rs);
				sysrq('w');
				failed = hangs = 1;
				break;
			}
			sleep_us(10000);
		}
		if (g_verbose) {
			char line[400];
			int n = 0;

			for (int i = 0; i < ST_NR; i++)
				n += snprintf(line + n, sizeof(line) - n, " %s=%llu", st_name[i], g_sh->stat[i]);
			say("round %u stats:%s", round, line);
		}
		if (g_sh->violations) {
			say("round %u seed %llu: %u violation(s) of the kernel's contract", round, rs,
			    g_sh->violations);
			for (uint32_t i = 0; i < g_sh->nmsg && i < NVIOL; i++)
				say("  %s", g_sh->msg[i]);
			say("reproduce: " FZ_NAME " -s %llu -r %u -t %d%s", seed, round, secs, xarg);
			failed = 1;
		}
		if (hangs)
			break;
	}
	tl_fi_restore();
	say("threadlet-fuzz: seed=%llu iterations=%llu time=%llds rounds=%u", seed, total,
	    (now_ns() - start + 500000000LL) / 1000000000LL, round - first_round);
	say("reproduce: %s", cmd);
	printf("%sok 1 " FZ_NAME " seed=%llu iterations=%llu\n1..1\n", failed ? "not " : "",
	       seed, total);
	return failed;
}
