// SPDX-License-Identifier: GPL-2.0
/*
 * Syslets: findings 2, 4, 5 and 10b.
 *
 * 2. A syslet atom is a system call like any other: it goes through the
 *    entry and exit work of a system call, so a ptracer sees (and may
 *    change or skip) each atom, seccomp (strict mode and filters) applies
 *    to each atom, and the syscall tracepoints count it. async_exec()
 *    itself ends for the tracer (an exit stop, returning 0) before its
 *    first atom's entry stop: entry and exit stops alternate, so a tracer
 *    that decides at entry stops never takes an atom's entry for an exit.
 * 4. A chain that went async finishes in the task that is now a cache-miss
 *    thread; that task must never return to user space at the head's
 *    async_exec() frame, even when the pool has filled up again meanwhile.
 * 5. After ASYNC_UNREGISTER nothing is written into the head's ring or
 *    indices, even by a chain that was already running.
 * 10b. umem_add() returns 0 or 1 (is the new value non-zero), never a new
 *    value that looks like an error.
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/utsname.h>
#include "safety.h"

/*
 * Atoms are the process's own system calls: built with -m32 they are i386
 * calls. There, mmap is the old one-argument call, so the six-argument
 * atom is mmap2; and getuid/getgid are the 16-bit calls of CONFIG_UID16,
 * so the atoms are getuid32/getgid32, the calls glibc makes (a kernel
 * without UID16 would fail the 16-bit ones with -ENOSYS, which would hide
 * a skip that did not happen).
 */
#ifdef __i386__
#define NR_MMAP		SYS_mmap2
#define NR_GETUID	SYS_getuid32
#define NR_GETGID	SYS_getgid32
#define REG_NR		"orig_eax"
#define REG_RET		"eax"
#define REG_ARGS	"ebx, ecx, edx, esi, edi, ebp"
#else
#define NR_MMAP		SYS_mmap
#define NR_GETUID	SYS_getuid
#define NR_GETGID	SYS_getgid
#define REG_NR		"orig_rax"
#define REG_RET		"rax"
#define REG_ARGS	"rdi, rsi, rdx, r10, r8, r9"
#endif

static struct async_head_user ahu;

/* ---- 2a: ptrace -------------------------------------------------------- */

struct tracee_out {
	long long r1[4], r2[2], r3[1];
	long done[3];		/* final atom of each chain, as an index */
};

static u64 a_fd = 1000, a_off = 0x12345, a_whence = 7;
/* mmap(0x7000000, 0, ...) or mmap2(): -EINVAL for the length 0. */
static u64 m_args[6] = { 0x7000000, 0, 1, 0x22, (u64)-1, 0x3000 };

/* The atoms of chain 1, as the tracer should see them. */
static const long chain1_nr[4] = { SYS_getppid, SYS_lseek, NR_MMAP, SYS_getpid };
static const int chain1_nargs[4] = { 0, 3, 6, 0 };

/* Index of the final atom @done in @a, -1 for NULL or an error. */
static long atom_idx(struct syslet_uatom *done, struct syslet_uatom *a)
{
	return done && !threadlet_ptr_err(done) ? done - a : -1;
}

static void tracee(struct tracee_out *o)
{
	struct syslet_uatom a[4];

	alarm(60);
	if (async_head_init(&ahu, 8, 1))
		_exit(10);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		_exit(11);
	raise(SIGSTOP);

	/* Chain 1: the tracer records every stop. */
	syslet_atom_init(&a[0], SYS_getppid, 0, &o->r1[0], &a[1], 0);
	syslet_atom_init(&a[1], SYS_lseek, 0, &o->r1[1], &a[2], 3, &a_fd, &a_off, &a_whence);
	syslet_atom_init(&a[2], NR_MMAP, 0, &o->r1[2], &a[3], 6, &m_args[0], &m_args[1],
			 &m_args[2], &m_args[3], &m_args[4], &m_args[5]);
	syslet_atom_init(&a[3], SYS_getpid, 0, &o->r1[3], NULL, 0);
	o->done[0] = atom_idx(async_exec(a, &ahu), a);
	/* Chain 2: the tracer skips getuid (orig_rax or orig_eax = -1). */
	syslet_atom_init(&a[0], NR_GETUID, 0, &o->r2[0], &a[1], 0);
	syslet_atom_init(&a[1], SYS_getpid, 0, &o->r2[1], NULL, 0);
	o->done[1] = atom_idx(async_exec(a, &ahu), a);
	/* Chain 3: the tracer makes getgid return 4242. */
	syslet_atom_init(&a[0], NR_GETGID, 0, &o->r3[0], NULL, 0);
	o->done[2] = atom_idx(async_exec(a, &ahu), a);
	_exit(0);
}

struct stop {
	int exec;		/* which async_exec() call (1..3) */
	int entry;
	long long nr;		/* entry: orig_rax; exit: the entry's nr */
	unsigned long args[6];	/* the argument registers, as the call sees them */
	long long orig_rax, rax;	/* orig_eax, eax in a 32-bit build */
};

static struct stop stops[64];
static int nr_stops;

static void trace_atoms(void)
{
	struct tracee_out *o = sf_shared(4096);
	int st, sig = 0, exec = 0, bad = 0, stopped, want_entry = 1, alternate = 1;
	int exec_exit = 0, exec_ended = 0, in_chain = 0;
	long long last_nr = -1;
	pid_t pid;

	memset(o, 0xff, sizeof(*o));
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		tracee(o);
	stopped = sf_waitpid(pid, &st, __WALL, 20000) && WIFSTOPPED(st);
	sf_ok(stopped && WSTOPSIG(st) == SIGSTOP, "ptrace: tracee stopped for us");
	if (!stopped) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
		return;
	}
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL);
	/*
	 * A tracer that keeps no state but the alternation ptrace(2)
	 * promises: each entry stop is followed by an exit stop. The stops
	 * after async_exec()'s exit, up to the next async_exec() or exit,
	 * are its chain's atoms.
	 */
	for (int n = 0; n < 10000; n++) {
		struct __ptrace_syscall_info info;
		struct user_regs_struct regs;

		if (ptrace(PTRACE_SYSCALL, pid, 0, sig))
			break;
		sig = 0;
		if (!sf_waitpid(pid, &st, __WALL, 20000)) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, __WALL);
			break;
		}
		if (!WIFSTOPPED(st))
			break;
		if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
			sig = WSTOPSIG(st);
			continue;
		}
		if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof(info), &info) <= 0 ||
		    ptrace(PTRACE_GETREGS, pid, 0, &regs)) {
			bad++;
			continue;
		}
		if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
			alternate &= want_entry;
			want_entry = 0;
			last_nr = info.entry.nr;
			if (info.entry.nr == __NR_async_exec) {
				exec++;
				in_chain = 0;
				exec_exit = 1;
				continue;
			}
			if (!in_chain || info.entry.nr == SYS_exit_group)
				continue;
			if (nr_stops < 64) {
				struct stop *s = &stops[nr_stops++];

				s->exec = exec;
				s->entry = 1;
				s->nr = info.entry.nr;
				unsigned long args[6] = SF_REG_ARGS(regs);

				s->orig_rax = SF_REG_NR(regs);
				s->rax = SF_REG_RET(regs);
				memcpy(s->args, args, sizeof(args));
			}
			if (exec == 2 && info.entry.nr == NR_GETUID) {
				SF_REG_NR(regs) = -1;
				ptrace(PTRACE_SETREGS, pid, 0, &regs);
			}
		} else if (info.op == PTRACE_SYSCALL_INFO_EXIT) {
			alternate &= !want_entry;
			want_entry = 1;
			if (exec_exit) {
				/* async_exec() ends where its chain begins, returning 0. */
				exec_exit = 0;
				exec_ended += last_nr == __NR_async_exec && info.exit.rval == 0;
				in_chain = 1;
				continue;
			}
			if (!in_chain)
				continue;
			if (nr_stops < 64) {
				struct stop *s = &stops[nr_stops++];

				s->exec = exec;
				s->entry = 0;
				s->nr = last_nr;
				s->orig_rax = SF_REG_NR(regs);
				s->rax = SF_REG_RET(regs);
			}
			if (exec == 3 && last_nr == NR_GETGID) {
				SF_REG_RET(regs) = 4242;
				ptrace(PTRACE_SETREGS, pid, 0, &regs);
			}
		}
	}
	if (!WIFEXITED(st) && !WIFSIGNALED(st)) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
	}
	sf_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && !bad,
	      "ptrace: tracee ran its 3 chains and exited (%s, %d bad stops)",
	      sf_status_str(st), bad);
	sf_ok(alternate, "ptrace: entry and exit stops alternate, chains included");
	sf_ok(exec == 3 && exec_ended == 3,
	      "ptrace: each async_exec() has its exit stop, returning 0, before its chain (%d of %d)",
	      exec_ended, exec);

	/* Chain 1: E X for each atom, in order, with its number and arguments. */
	{
		long long want[4] = { getpid(), -EBADF, -EINVAL, pid };
		int seq = 1, args = 1, rets = 1, k = 0;

		for (int i = 0; i < nr_stops; i++) {
			struct stop *s = &stops[i];

			if (s->exec != 1)
				continue;
			if (k >= 8 || s->entry != !(k & 1) || s->nr != chain1_nr[k / 2]) {
				seq = 0;
				break;
			}
			if (s->entry) {
				const u64 lseek_args[3] = { a_fd, a_off, a_whence };
				const u64 *want_args = k / 2 == 1 ? lseek_args : m_args;

				/*
				 * An i386 call gets the low halves of the
				 * atom's u64 arguments in 32-bit registers.
				 */
				args &= s->orig_rax == chain1_nr[k / 2];
				for (int j = 0; j < chain1_nargs[k / 2]; j++)
					args &= s->args[j] == (unsigned long)want_args[j];
			} else {
				rets &= s->rax == want[k / 2] && o->r1[k / 2] == want[k / 2];
			}
			k++;
		}
		seq &= k == 8;
		sf_ok(seq, "ptrace: an entry and an exit stop for each of the 4 atoms (%d stops in chain 1)",
		      k);
		sf_ok(seq && args, "ptrace: " REG_NR " and " REG_ARGS " at each entry stop are the atom's");
		sf_ok(seq && rets && o->done[0] == 3,
		      "ptrace: " REG_RET " at each exit stop is the atom's result (%lld %lld %lld %lld)",
		      o->r1[0], o->r1[1], o->r1[2], o->r1[3]);
	}
	sf_ok(o->r2[0] == -ENOSYS && o->r2[1] == pid && o->done[1] == 1,
	      "ptrace: " REG_NR " = -1 at the entry stop skips the atom: -ENOSYS (%lld), the next one runs",
	      o->r2[0]);
	if (o->r2[0] == (unsigned int)-ENOSYS)
		tl_diag("ptrace: that is -ENOSYS zero-extended from 32 bits: eax as the tracer's PTRACE_SETREGS wrote it back");
	sf_ok(o->r3[0] == 4242 && o->done[2] == 0,
	      "ptrace: " REG_RET " = 4242 at the exit stop is the atom's stored result (%lld)", o->r3[0]);
	if (nr_stops == 0)
		tl_diag("ptrace: no stop inside async_exec() at all");
}

/* ---- 2b, 2c: seccomp --------------------------------------------------- */

struct seccomp_out {
	long long r[2];
	int after;		/* the child went on after async_exec() */
	int sigsys, sigsys_at_return, sys_nr, sig_code, sig_arch;
	long long ppid;
};

static struct seccomp_out *so;

#define SENTINEL	0x5e5e5e5e5e5eLL

/*
 * Strict mode set by the chain's first atom: the second, getppid, is not
 * in the strict set and kills the process before it runs. The child has
 * no other thread, and leaves with exit(), which strict mode allows.
 */
static void strict_child(void)
{
	static u64 ring[8], a_opt = PR_SET_SECCOMP, a_mode = SECCOMP_MODE_STRICT;
	struct syslet_uatom a[2];

	alarm(30);
	so->ppid = getppid();
	if (sf_register_head(&ahu, ring, 8, 1))
		_exit(10);
	syslet_atom_init(&a[0], SYS_prctl, 0, &so->r[0], &a[1], 2, &a_opt, &a_mode);
	syslet_atom_init(&a[1], SYS_getppid, 0, &so->r[1], NULL, 0);
	async_exec(a, &ahu);
	so->after = 1;
	syscall(SYS_exit, 0);
}

static int install_filter(unsigned int action)
{
	struct sock_filter f[] = {
		SF_FILTER_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};

	return sf_filter(f);
}

/*
 * Whether @ret, stored for a getppid atom that seccomp stopped, is the
 * parent's PID, i.e. getppid ran. A stopped call may still store a value
 * (the syscall number, after seccomp's rollback): with a parent whose PID
 * happens to be 110 the two cannot be told apart, and the answer is no.
 */
static int ran_getppid(long long ret)
{
	return ret == so->ppid && so->ppid != __NR_getppid;
}

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	so->sigsys++;
	so->sys_nr = si->si_syscall;
	so->sig_code = si->si_code;
	so->sig_arch = si->si_arch;
}

/* A deny-list of getppid with @action, then a chain [getppid, getpid]. */
static void filter_child(unsigned int action)
{
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
	struct syslet_uatom a[2], *done;

	alarm(30);
	so->ppid = getppid();
	sigaction(SIGSYS, &sa, NULL);
	if (async_head_init(&ahu, 8, 1) || !install_filter(action))
		_exit(10);
	syslet_atom_init(&a[0], SYS_getppid, 0, &so->r[0], &a[1], 0);
	syslet_atom_init(&a[1], SYS_getpid, 0, &so->r[1], NULL, 0);
	done = async_exec(a, &ahu);
	/* Read at once: a SIGSYS is delivered as async_exec() returns. */
	so->sigsys_at_return = so->sigsys;
	so->after = done == &a[1] ? 1 : 2;
	_exit(0);
}

static int run_seccomp_child(void (*fn)(unsigned int), unsigned int action)
{
	int status;
	pid_t pid;

	memset(so, 0, sizeof(*so));
	so->r[0] = so->r[1] = SENTINEL;
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		fn(action);
	if (!sf_waitpid(pid, &status, 0, 30000)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return SF_TIMEOUT;
	}
	return status;
}

static void strict_wrap(unsigned int unused)
{
	(void)unused;
	strict_child();
}

static void seccomp_atoms(void)
{
	int st;
	long r;

	so = sf_shared(4096);
	st = run_seccomp_child(strict_wrap, 0);
	sf_ok(st != SF_TIMEOUT && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	      "seccomp strict: set by an atom, the next atom (getppid) kills the process (%s)",
	      sf_status_str(st));
	sf_ok(so->r[0] == 0 && !so->after && !ran_getppid(so->r[1]),
	      "seccomp strict: getppid never ran (prctl %lld, getppid %#llx, went on %d)",
	      so->r[0], so->r[1], so->after);

	errno = 0;
	r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, NULL);
	if (r == -1 && errno == EINVAL) {
		sf_skip("seccomp RET_ERRNO: no CONFIG_SECCOMP_FILTER");
		sf_skip("seccomp RET_KILL_PROCESS: no CONFIG_SECCOMP_FILTER");
		sf_skip("seccomp RET_TRAP: no CONFIG_SECCOMP_FILTER");
		return;
	}

	st = run_seccomp_child(filter_child, SECCOMP_RET_ERRNO | EPERM);
	sf_ok(sf_exited0(st) && so->r[0] == -EPERM && so->r[1] > 0 && so->after == 1,
	      "seccomp RET_ERRNO: getppid atom -EPERM (%lld), getpid atom works (%lld) (%s)",
	      so->r[0], so->r[1], sf_status_str(st));

	st = run_seccomp_child(filter_child, SECCOMP_RET_KILL_PROCESS);
	sf_ok(st != SF_TIMEOUT && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS &&
	      !so->after && !ran_getppid(so->r[0]),
	      "seccomp RET_KILL_PROCESS: the getppid atom kills the process before it runs (%s, ret %#llx)",
	      sf_status_str(st), so->r[0]);

	st = run_seccomp_child(filter_child, SECCOMP_RET_TRAP);
	sf_ok(sf_exited0(st) && so->after && so->sigsys == 1 && so->sigsys_at_return == 1 &&
	      so->sys_nr == __NR_getppid && so->sig_code == 1 /* SYS_SECCOMP */ &&
	      so->sig_arch == (int)SF_AUDIT_ARCH && !ran_getppid(so->r[0]),
	      "seccomp RET_TRAP: SIGSYS for syscall %d by async_exec()'s return (%d signals, si_syscall %d, atom %lld) (%s)",
	      __NR_getppid, so->sigsys, so->sys_nr, so->r[0], sf_status_str(st));
}

/* ---- 2d: tracepoints --------------------------------------------------- */

static long long counted(int fd, void (*fn)(void))
{
	long long n = -1;

	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	fn();
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &n, sizeof(n)) != sizeof(n))
		return -1;
	return n;
}

static void five_getppid(void)
{
	for (int i = 0; i < 5; i++)
		getppid();
}

static struct syslet_uatom five[5];
static long long five_r[5];

static void five_atoms(void)
{
	async_exec(five, &ahu);
}

/*
 * A counter of raw_syscalls:@event (sys_enter, sys_exit) for system call
 * @nr of this process's ABI only; -1 if it cannot be set up.
 */
static int raw_syscall_counter(const char *event, long nr)
{
	char path[64], filter[32];
	int fd;

	snprintf(path, sizeof(path), "raw_syscalls/%s", event);
	snprintf(filter, sizeof(filter), "id == %ld", nr);
	fd = tl_tracepoint_counter(path);
	if (fd >= 0 && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter)) {
		tl_diag("%s: filter \"%s\": %s", path, filter, strerror(errno));
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * A 32-bit process on the x86-64 kernel: the syscalls:sys_{enter,exit}_*
 * events ignore its system calls, direct or not
 * (ARCH_TRACE_IGNORE_COMPAT_SYSCALLS). The raw_syscalls events see them,
 * with the i386 number as id.
 */
static int compat_tracepoints(void)
{
	struct utsname u;

	return sizeof(long) == 4 && uname(&u) == 0 && !strcmp(u.machine, "x86_64");
}

static void tracepoints(void)
{
	int compat = compat_tracepoints();
	const char *ev_enter = compat ? "raw_syscalls:sys_enter id == getppid" :
					"syscalls:sys_enter_getppid";
	int fd_enter, fd_exit;
	long long direct, chain, chain_exit;

	if (compat) {
		tl_diag("32-bit process on the x86-64 kernel: syscalls:sys_enter_* ignore its system calls, counted with raw_syscalls:sys_enter instead");
		fd_enter = raw_syscall_counter("sys_enter", __NR_getppid);
		fd_exit = raw_syscall_counter("sys_exit", __NR_getppid);
	} else {
		fd_enter = tl_tracepoint_counter("syscalls/sys_enter_getppid");
		fd_exit = tl_tracepoint_counter("syscalls/sys_exit_getppid");
	}
	sf_ok(fd_enter >= 0, "%s counter opened", ev_enter);
	for (int i = 0; i < 5; i++)
		syslet_atom_init(&five[i], SYS_getppid, 0, &five_r[i],
				 i < 4 ? &five[i + 1] : NULL, 0);
	five_atoms();		/* registers this thread's area */
	direct = counted(fd_enter, five_getppid);
	chain = counted(fd_enter, five_atoms);
	sf_ok(direct == 5, "tracepoint: 5 direct getppid() calls count 5 (%lld)", direct);
	sf_ok(chain == 5 && five_r[4] == getppid(),
	      "tracepoint: a chain of 5 getppid atoms counts 5 (%lld)", chain);
	if (fd_exit >= 0) {
		chain_exit = counted(fd_exit, five_atoms);
		tl_diag("%s for the chain: %lld",
			compat ? "raw_syscalls:sys_exit id == getppid" :
				 "syscalls:sys_exit_getppid", chain_exit);
		close(fd_exit);
	}
	if (fd_enter >= 0)
		close(fd_enter);
	if (compat) {
		/* The atoms are compat calls there too: ignored like direct ones. */
		int fd = tl_tracepoint_counter("syscalls/sys_enter_getppid");

		direct = counted(fd, five_getppid);
		chain = counted(fd, five_atoms);
		sf_ok(fd >= 0 && chain == direct,
		      "tracepoint: syscalls:sys_enter_getppid treats the atoms as the direct compat calls (direct %lld, chain %lld)",
		      direct, chain);
		if (fd >= 0)
			close(fd);
	}
}

/* ---- 4: no return into the head's frame --------------------------------- */

struct async_out {
	int init, went_async, reentered, x_reg, x_parked;
	int event_ok, read_ok, alive;
	long returns, reentry_ret;
	long long r_read;
};

static struct async_out *ao;
static struct threadlet_area x_area __attribute__((aligned(128)));

static void *x_main(void *arg)
{
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	ao->x_reg = syscall(__NR_threadlet_register, &x_area, sizeof(x_area), 0) == 0;
	if (ao->x_reg)
		sf_park_home(&x_area, NULL, &ahu);
	return NULL;
}

/*
 * A system call that touches no TLS (errno) on its way back. i386: int
 * $0x80, not the vDSO's entry, which glibc finds through %gs.
 */
static inline long raw_syscall2(long nr, long a, long b)
{
	long r;

#ifdef __x86_64__
	__asm__ volatile("syscall" : "=a"(r) : "0"(nr), "D"(a), "S"(b)
			 : "rcx", "r11", "memory");
#else
	__asm__ volatile("int $0x80" : "=a"(r) : "0"(nr), "b"(a), "c"(b)
			 : "memory");
#endif
	return r;
}

/*
 * The async_exec() call, deep below a large unused frame: the head runs on
 * above it afterwards, so a task that wrongly returns at this frame finds
 * it intact and is caught by the count, before it touches anything of the
 * head's. (Through libc it would crash at once: the head's later calls
 * from the same frames overwrite the return addresses.)
 */
static __attribute__((noinline)) long exec_deep(struct syslet_uatom *a)
{
	long r = raw_syscall2(__NR_async_exec, (long)a, (long)&ahu);

	if (__atomic_add_fetch(&ao->returns, 1, __ATOMIC_SEQ_CST) > 1) {
		/* Not the head: the task that ran the chain. End it. */
		ao->reentered = 1;
		ao->reentry_ret = r;
		raw_syscall2(SYS_exit, 0, 0);
	}
	return r;
}

static __attribute__((noinline)) long exec_below(struct syslet_uatom *a)
{
	char pad[256 << 10];
	long r;

	__asm__ volatile("" : : "r"(pad) : "memory");
	r = exec_deep(a);
	__asm__ volatile("" : : "r"(pad) : "memory");
	return r;
}

static void async_full_pool_child(void)
{
	static u64 a_fd, a_buf, a_one = 1;
	static long long r_pid;
	static char c;
	struct syslet_uatom a[1], p[1];
	pthread_t x;
	int pfd[2];

	alarm(30);
	ao->init = async_head_init(&ahu, 16, 1) == 0 && pipe(pfd) == 0;
	if (!ao->init)
		_exit(10);
	/* The library registers this thread's area. */
	syslet_atom_init(&p[0], SYS_getpid, 0, &r_pid, NULL, 0);
	ao->init = async_exec(p, &ahu) == &p[0] && r_pid == getpid();
	a_fd = pfd[0];
	a_buf = (uintptr_t)&c;
	ao->r_read = -999;
	syslet_atom_init(&a[0], SYS_read, 0, &ao->r_read, NULL, 3, &a_fd, &a_buf, &a_one);
	ao->went_async = exec_below(a) == 0;

	/* The pool's only thread is the head now: X fills the pool again. */
	pthread_create(&x, NULL, x_main, NULL);
	for (int i = 0; i < 5000 && async_head_parked(&ahu) != 1; i++)
		usleep(1000);
	ao->x_parked = async_head_parked(&ahu) == 1;

	/* The chain completes: its task posts, and finds no room to park. */
	if (write(pfd[1], "x", 1) != 1)
		_exit(11);
	ao->event_ok = sf_wait_event(&ahu, 10000) == &a[0];
	ao->read_ok = ao->r_read == 1 && c == 'x';
	usleep(300000);
	ao->alive = getpid() > 0 && syscall(SYS_getppid) > 0;
	_exit(0);
}

static void async_into_full_pool(void)
{
	int status;
	pid_t pid;

	ao = sf_shared(4096);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		async_full_pool_child();
	if (!sf_waitpid(pid, &status, 0, 40000)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		status = SF_TIMEOUT;
	}
	sf_ok(ao->init && ao->went_async, "full pool: the chain went async (NULL)");
	sf_ok(ao->x_reg && ao->x_parked, "full pool: a second thread parked meanwhile");
	sf_ok(ao->event_ok && ao->read_ok, "full pool: the final atom was posted (read %lld)",
	      ao->r_read);
	sf_ok(!ao->reentered && ao->returns == 1,
	      "full pool: async_exec() returned once, never into the head's frame again (%ld returns%s%ld)",
	      ao->returns, ao->reentered ? ", then with " : "",
	      ao->reentered ? ao->reentry_ret : 0L);
	sf_ok(sf_exited0(status) && ao->alive,
	      "full pool: no SIGSEGV, the process went on (%s)", sf_status_str(status));
}

/* ---- 5: nothing posted after ASYNC_UNREGISTER ------------------------- */

static void unregister_child(void *arg)
{
	static u64 a_fd, a_buf, a_one = 1;
	static long long r_read;
	static char c;
	struct syslet_uatom a[1];
	u64 *ring;
	int pfd[2], i, zero = 1;
	unsigned int n;

	(void)arg;
	if (async_head_init(&ahu, 16, 1) || pipe(pfd)) {
		sf_ok(0, "unregister: set-up");
		return;
	}
	a_fd = pfd[0];
	a_buf = (uintptr_t)&c;
	r_read = -999;
	syslet_atom_init(&a[0], SYS_read, 0, &r_read, NULL, 3, &a_fd, &a_buf, &a_one);
	sf_ok(async_exec(a, &ahu) == NULL, "unregister: the chain went async");
	sf_ok(sf_unregister_head(&ahu) == 0, "unregister: ASYNC_UNREGISTER");
	/*
	 * The ring's memory is the user's again. Zero slots are what a post
	 * would take (the realistic case: the memory was reused), and the
	 * indices get sentinels.
	 */
	ring = (u64 *)(uintptr_t)ahu.completion_ring;
	n = ahu.ring_size_bytes / sizeof(u64);
	memset(ring, 0, n * sizeof(u64));
	ahu.kernel_ring_idx = 0x5e5e5e5e5e5e5e5eULL;
	ahu.user_ring_idx = 0x6e6e6e6e6e6e6e6eULL;
	ahu.flags = 0;
	sf_ok(write(pfd[1], "x", 1) == 1, "unregister: complete the read");
	for (i = 0; i < 5000 && __atomic_load_n(&r_read, __ATOMIC_ACQUIRE) == -999; i++)
		usleep(1000);
	usleep(300000);
	sf_ok(r_read == 1, "unregister: the chain ran to its end (%lld)", r_read);
	for (unsigned int k = 0; k < n; k++)
		zero &= ring[k] == 0;
	sf_ok(zero && ahu.kernel_ring_idx == 0x5e5e5e5e5e5e5e5eULL &&
	      ahu.user_ring_idx == 0x6e6e6e6e6e6e6e6eULL && ahu.flags == 0,
	      "unregister: nothing written into the ring or the head (slot 0 %#llx, kernel_ring_idx %#llx)",
	      ring[0], ahu.kernel_ring_idx);
}

/* ---- 10b: umem_add ----------------------------------------------------- */

/*
 * umem_add() as a raw system call, -1/errno. The i386 entry takes the
 * 64-bit increment in two registers, the low half first.
 */
static long sys_umem_add(void *uptr, u64 inc)
{
#ifdef __i386__
	return syscall(__NR_umem_add, uptr, (unsigned long)inc, (unsigned long)(inc >> 32));
#else
	return syscall(__NR_umem_add, uptr, inc);
#endif
}

static void umem(void)
{
	static u64 v, a_ptr, a_inc, a_inc_hi;
	struct syslet_uatom a[2];
	static long long r[2];
	long ret;

	v = 0;
	ret = sys_umem_add(&v, 0ULL);
	sf_ok(ret == 0 && v == 0, "umem_add: to 0 returns 0 (%ld)", ret);
	v = 7;
	ret = sys_umem_add(&v, 3ULL);
	sf_ok(ret == 1 && v == 10, "umem_add: 7 + 3 returns 1, stores 10 (%ld, %llu)", ret, v);
	v = -10ULL;
	errno = 0;
	ret = sys_umem_add(&v, 5ULL);
	sf_ok(ret == 1 && v == -5ULL,
	      "umem_add: to 2^64 - 5 returns 1, not an errno (%ld, errno %d)", ret, errno);
	v = 5;
	ret = sys_umem_add(&v, -5ULL);
	sf_ok(ret == 0 && v == 0, "umem_add: 5 - 5 returns 0 (%ld)", ret);
	errno = 0;
	ret = sys_umem_add((void *)0x10, 1ULL);
	sf_ok(ret == -1 && errno == EFAULT, "umem_add: bad pointer: -1/EFAULT (%ld/%d)",
	      ret, errno);

	/* As an atom: a result of 1 does not stop a STOP_ON_NEGATIVE chain. */
	v = -10ULL;
	a_ptr = (uintptr_t)&v;
	a_inc = 5;
	a_inc_hi = a_inc >> 32;
	r[0] = r[1] = -999;
	/* A 32-bit process passes the increment as two halves, as above. */
	syslet_atom_init(&a[0], __NR_umem_add, SYSLET_STOP_ON_NEGATIVE, &r[0], &a[1],
			 sizeof(long) == 4 ? 3 : 2, &a_ptr, &a_inc, &a_inc_hi);
	syslet_atom_init(&a[1], SYS_getpid, 0, &r[1], NULL, 0);
	sf_ok(async_exec(a, &ahu) == &a[1] && r[0] == 1 && r[1] == getpid() && v == -5ULL,
	      "umem_add atom: 1 in ret_ptr, the chain goes on (%lld)", r[0]);
}

int main(void)
{
	int status;

	sf_init();
	trace_atoms();
	seccomp_atoms();
	sf_ok(async_head_init(&ahu, 16, 2) == 0, "async_head_init");
	tracepoints();
	umem();
	async_head_exit(&ahu);
	async_into_full_pool();
	status = sf_child(unregister_child, NULL, 60);
	sf_child_ok(status, "unregister");
	return tl_exit();
}
