// SPDX-License-Identifier: GPL-2.0
/*
 * Syslets and audit: each atom of a chain is a system call of its own, so
 * a syscall audit rule records each atom, with the atom's number,
 * arguments and result, exactly as for the same call made directly. The
 * record of async_exec() itself ends where its chain begins, before the
 * first atom: the atoms' entries must not find it still open (that would
 * be the WARN_ON in __audit_syscall_entry(), which the host runner fails).
 *
 * This process plays auditd: on a NETLINK_AUDIT socket it enables audit,
 * registers itself as the audit daemon (so records come to the socket)
 * and adds an exit rule for getppid and async_exec on x86-64. A child,
 * forked after audit was enabled (a task gets its audit context at fork,
 * and the daemon's own calls are never audited), makes 3 direct getppid()
 * calls and then runs a chain of 5 getppid atoms. Every call passes
 * markers as its first two arguments (ignored by getppid, logged as a0
 * and a1), so each record names its call. This process removes the rule
 * and disables audit again on every path once the rule is in.
 *
 * Then the backlog: with this process no longer reading and the queue
 * over a limit of 2, every audited call sleeps in audit_log_start() for
 * the backlog wait (100 ms), async_exec()'s own record among them. That
 * sleep is the call's, before its chain, and must stay with the task:
 * handed off there (a helper's review), the old task then wrote a
 * pointer to its own stack into the new head's area, which the next
 * chain's hand-off copied as a user frame (a kernel BUG in IRET, or the
 * first call returning twice). A one-atom chain must run in place.
 */
#include <linux/audit.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include "safety.h"

#define MARK_DIRECT	0x5a1ULL	/* a0 of the direct getppid() calls */
#define MARK_ATOM	0x5b1ULL	/* a0 of the getppid atoms */
#define MARK_WARMUP	0x5c1ULL	/* a0 of the first chain's getpid atom */
#define MARK_FILL	0x5d1ULL	/* a0 of the calls that fill the backlog */
#define NR_FILL		8
#define NR_DIRECT	3
#define NR_ATOMS	5
/* A record is at most MAX_AUDIT_MESSAGE_LENGTH (8970, libaudit.h) bytes. */
#define AUDIT_BUF_SIZE	(NLMSG_HDRLEN + 9000 + 64)

/* ---- the netlink side ------------------------------------------------- */

static int afd = -1;
static unsigned int aseq;

/* An AUDIT_SYSCALL record, parsed. */
struct rec {
	long nr;
	unsigned long long a0, a1;
	int success;		/* 1 yes, 0 no, -1 no field */
	int has_exit;
	long long exit;
	long pid;
	char text[320];
};

static struct rec recs[256];
static int nr_recs, nr_other;	/* AUDIT_SYSCALL records; other audit types */

/* The value after " @key=" in @msg (or at its start), up to a space. */
static const char *field(const char *msg, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key);
	const char *p = msg;

	while ((p = strstr(p, key))) {
		if ((p == msg || p[-1] == ' ') && p[klen] == '=') {
			size_t n = strcspn(p + klen + 1, " ");

			if (n >= len)
				n = len - 1;
			memcpy(out, p + klen + 1, n);
			out[n] = 0;
			return out;
		}
		p += klen;
	}
	return NULL;
}

static void parse_record(const char *msg)
{
	struct rec *r;
	char v[64];
	size_t n;

	if (nr_recs >= (int)(sizeof(recs) / sizeof(recs[0])))
		return;
	r = &recs[nr_recs++];
	memset(r, 0, sizeof(*r));
	n = strnlen(msg, sizeof(r->text) - 1);
	memcpy(r->text, msg, n);
	r->text[n] = 0;
	r->nr = field(msg, "syscall", v, sizeof(v)) ? strtol(v, NULL, 10) : -1;
	r->a0 = field(msg, "a0", v, sizeof(v)) ? strtoull(v, NULL, 16) : ~0ULL;
	r->a1 = field(msg, "a1", v, sizeof(v)) ? strtoull(v, NULL, 16) : ~0ULL;
	r->success = field(msg, "success", v, sizeof(v)) ? !strcmp(v, "yes") : -1;
	r->has_exit = !!field(msg, "exit", v, sizeof(v));
	r->exit = r->has_exit ? strtoll(v, NULL, 10) : 0;
	r->pid = field(msg, "pid", v, sizeof(v)) ? strtol(v, NULL, 10) : -1;
}

/*
 * Receives one datagram within @ms. Audit records are kept; an ack or a
 * reply for request @seq is returned: 1 with *@err its error (0: ack),
 * 2 for a reply copied to @reply. 0 for anything else, -1 on timeout.
 * The kernel sets an audit record's nlmsg_len to the payload length
 * alone (a quirk auditd relies on): the datagram's length is used instead.
 */
static int recv_one(int ms, unsigned int seq, int *err, void *reply, size_t rlen)
{
	char buf[AUDIT_BUF_SIZE]
		__attribute__((aligned(NLMSG_ALIGNTO)));
	struct pollfd pfd = { afd, POLLIN, 0 };
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	ssize_t n;

	if (poll(&pfd, 1, ms) <= 0)
		return -1;
	n = recv(afd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	if (n < (ssize_t)NLMSG_HDRLEN)
		return 0;
	buf[n] = 0;
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr *e = NLMSG_DATA(nlh);

		if (nlh->nlmsg_seq != seq ||
		    n < (ssize_t)(NLMSG_HDRLEN + sizeof(*e)))
			return 0;
		*err = e->error;
		return 1;
	}
	if (seq && nlh->nlmsg_seq == seq && reply) {
		size_t len = n - NLMSG_HDRLEN;

		memcpy(reply, NLMSG_DATA(nlh), len < rlen ? len : rlen);
		return 2;
	}
	if (nlh->nlmsg_type == AUDIT_SYSCALL)
		parse_record((char *)NLMSG_DATA(nlh));
	else if (nlh->nlmsg_type >= 1100)
		nr_other++;
	return 0;
}

/* Reads records until none came for @ms milliseconds. */
static void drain(int ms)
{
	int err;

	for (int i = 0; i < 10000; i++)
		if (recv_one(ms, 0, &err, NULL, 0) < 0)
			return;
}

/*
 * Sends request @type with @data and waits (up to 5 s) for its ack and,
 * with @reply, its reply. Returns 0 or -errno.
 */
static int audit_request(int type, const void *data, size_t len, void *reply, size_t rlen)
{
	char buf[NLMSG_SPACE(sizeof(struct audit_rule_data))]
		__attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int err = -ETIMEDOUT;

	if (len > sizeof(buf) - NLMSG_HDRLEN)
		return -EINVAL;
	memset(buf, 0, sizeof(buf));
	nlh->nlmsg_len = NLMSG_LENGTH(len);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++aseq;
	memcpy(NLMSG_DATA(nlh), data, len);
	if (sendto(afd, buf, nlh->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	/* A reply is sent by a kernel thread: it may come after the ack. */
	for (int i = 0, acked = 0, replied = !reply; i < 1000; i++) {
		int r = recv_one(5000, aseq, &err, reply, rlen);

		if (r < 0)
			return -ETIMEDOUT;
		acked |= r == 1;
		replied |= r == 2;
		if (acked && (err || replied))
			return err;
	}
	return -ETIMEDOUT;
}

static int audit_set(unsigned int mask, unsigned int enabled, unsigned int pid)
{
	struct audit_status s = { .mask = mask, .enabled = enabled, .pid = pid };

	return audit_request(AUDIT_SET, &s, sizeof(s), NULL, 0);
}

static int audit_get(struct audit_status *s)
{
	memset(s, 0xff, sizeof(*s));
	return audit_request(AUDIT_GET, NULL, 0, s, sizeof(*s));
}

/* always,exit -F arch=<this build's> -S getppid -S async_exec */
static struct audit_rule_data rule = {
	.flags = AUDIT_FILTER_EXIT,
	.action = AUDIT_ALWAYS,
	.field_count = 1,
	.fields = { AUDIT_ARCH },
	.values = { SF_AUDIT_ARCH },
	.fieldflags = { AUDIT_EQUAL },
};

static void rule_init(void)
{
	rule.mask[AUDIT_WORD(__NR_getppid)] |= AUDIT_BIT(__NR_getppid);
	rule.mask[AUDIT_WORD(__NR_async_exec)] |= AUDIT_BIT(__NR_async_exec);
}

/* ---- the audited child ------------------------------------------------ */

struct child_out {
	int init;			/* async_head_init() result */
	int warmup;			/* the first chain ran in place */
	long long direct[NR_DIRECT];	/* the direct calls' results */
	long long r[NR_ATOMS];		/* the atoms' results */
	long done;			/* final atom's index, -1 NULL */
	int err;			/* async_exec()'s error, as an errno */
	unsigned long long chain;	/* the chain's address: async_exec()'s a0 */
	pid_t pid;
	long backlog_done;		/* (c): the chain's final atom, 0, or -1 */
	long long backlog_r;		/* (c): its result */
	long long backlog_ms;		/* (c): how long async_exec() took */
	unsigned long long fb_call;	/* (c): fallbacks counted over it */
};

static struct child_out *co;
static int p2c[2], c2p[2];
static unsigned int backlog_limit, backlog_wait;	/* the settings found */

static void tell(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		_exit(20);
}

/* Waits for @c on @fd, up to @ms; 1 if it came. */
static int hear(int fd, char c, int ms)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	char got;

	return poll(&pfd, 1, ms) == 1 && read(fd, &got, 1) == 1 && got == c;
}

static void child(void)
{
	static struct async_head_user ahu;
	static struct syslet_uatom w, a[NR_ATOMS];
	static unsigned long long w0 = MARK_WARMUP, w1, m0 = MARK_ATOM, idx[NR_ATOMS];
	static long long wr;
	struct syslet_uatom *done;

	alarm(60);
	close(afd);
	close(p2c[1]);
	close(c2p[0]);
	co->pid = getpid();
	co->init = async_head_init(&ahu, 8, 1);
	if (co->init)
		_exit(10);
	/* Registers this thread's area: the chain below is then all atoms. */
	syslet_atom_init(&w, SYS_getpid, 0, &wr, NULL, 2, &w0, &w1);
	co->warmup = async_exec(&w, &ahu) == &w && wr == getpid();
	tell(c2p[1], 'r');

	if (!hear(p2c[0], 'a', 30000))
		_exit(11);
	for (int i = 0; i < NR_DIRECT; i++)
		co->direct[i] = syscall(SYS_getppid, (long)MARK_DIRECT, (long)i);
	tell(c2p[1], 'a');

	if (!hear(p2c[0], 'b', 30000))
		_exit(12);
	for (int i = 0; i < NR_ATOMS; i++) {
		idx[i] = i;
		co->r[i] = -999;
		syslet_atom_init(&a[i], SYS_getppid, 0, &co->r[i],
				 i < NR_ATOMS - 1 ? &a[i + 1] : NULL, 2, &m0, &idx[i]);
	}
	co->chain = (uintptr_t)a;
	done = async_exec(a, &ahu);
	co->err = -threadlet_ptr_err(done);
	co->done = done && !co->err ? done - a : -1;
	tell(c2p[1], 'b');

	if (!hear(p2c[0], 'c', 30000))
		_exit(13);
	{
		struct threadlet_stats s0, s1;
		long long t0;

		for (int i = 0; i < NR_FILL; i++)
			syscall(SYS_getppid, (long)MARK_FILL, (long)i);
		co->backlog_r = -999;
		syslet_atom_init(&w, SYS_getpid, 0, &co->backlog_r, NULL, 0);
		threadlet_stats(&s0);
		t0 = tl_now_ns();
		done = async_exec(&w, &ahu);
		co->backlog_ms = (tl_now_ns() - t0) / 1000000;
		threadlet_stats(&s1);
		co->backlog_done = done == &w ? 1 : done ? -1 : 0;
		co->fb_call = s1.nr_fallbacks - s0.nr_fallbacks;
		if (!done)
			tl_wait_one(&ahu);
	}
	tell(c2p[1], 'c');

	hear(p2c[0], 'x', 30000);
	async_head_exit(&ahu);
	_exit(0);
}

/* ---- checks ----------------------------------------------------------- */

/*
 * Checks the getppid records marked @mark: one per index 0..@n-1, each a
 * success with the parent's PID as exit, from the child. Returns how many
 * there are; *@good says whether all are as they should be.
 */
static int marked(unsigned long long mark, int n, pid_t ppid, int *good, int *first)
{
	int seen[8] = { 0 }, count = 0;

	*good = 1;
	*first = -1;
	for (int i = 0; i < nr_recs; i++) {
		struct rec *r = &recs[i];

		if (r->nr != __NR_getppid || r->a0 != mark)
			continue;
		if (*first < 0)
			*first = i;
		count++;
		if (r->a1 >= (unsigned long long)n || seen[r->a1]++ ||
		    r->success != 1 || !r->has_exit || r->exit != ppid ||
		    r->pid != co->pid) {
			*good = 0;
			tl_diag("unexpected: %s", r->text);
		}
	}
	return count;
}

static void audited(void)
{
	pid_t me = getpid(), pid;
	int st = SF_TIMEOUT, good, first, n, ready, in_order;
	int before, after_a, other;

	co = sf_shared(4096);
	memset(co, 0, sizeof(*co));
	co->done = -2;
	if (pipe(p2c) || pipe(c2p)) {
		sf_ok(0, "pipes");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		child();
	close(p2c[0]);
	close(c2p[1]);
	if (pid < 0) {
		sf_ok(0, "fork");
		return;
	}

	ready = hear(c2p[0], 'r', 30000);
	sf_ok(ready && co->init == 0 && co->warmup,
	      "child: async_head_init (%d) and a first chain (registers the area) ran",
	      co->init);
	drain(500);
	before = marked(MARK_DIRECT, NR_DIRECT, me, &good, &first) +
		 marked(MARK_ATOM, NR_ATOMS, me, &good, &first);
	tl_diag("%d AUDIT_SYSCALL records before the direct calls", nr_recs);
	for (int i = 0; i < nr_recs; i++)
		tl_diag("record: %.160s", recs[i].text);

	/* (a) 3 direct getppid() calls. */
	if (ready)
		tell(p2c[1], 'a');
	ready = ready && hear(c2p[0], 'a', 30000);
	drain(500);
	after_a = nr_recs;
	n = marked(MARK_DIRECT, NR_DIRECT, me, &good, &first);
	sf_ok(ready && co->direct[0] == me && co->direct[NR_DIRECT - 1] == me,
	      "direct: getppid() returned this process's PID %d (%lld)", me, co->direct[0]);
	sf_ok(before == 0 && n == NR_DIRECT,
	      "direct: %d getppid() calls give exactly %d syscall=%d records (%d)",
	      NR_DIRECT, NR_DIRECT, __NR_getppid, n);
	sf_ok(n == NR_DIRECT && good,
	      "direct: each record is its own call's (a1), success=yes exit=%d pid=%d",
	      me, co->pid);
	if (first >= 0)
		tl_diag("record: %s", recs[first].text);

	/* (b) one chain of 5 getppid atoms. */
	if (ready)
		tell(p2c[1], 'b');
	ready = ready && hear(c2p[0], 'b', 30000);
	drain(500);
	sf_ok(ready && co->done == NR_ATOMS - 1 && co->r[0] == me && co->r[NR_ATOMS - 1] == me,
	      "chain: ran in place to its final atom (%ld, errno %d), atoms returned %lld..%lld",
	      co->done, co->err, co->r[0], co->r[NR_ATOMS - 1]);
	n = marked(MARK_ATOM, NR_ATOMS, me, &good, &first);
	sf_ok(n == NR_ATOMS && nr_recs - after_a >= NR_ATOMS,
	      "chain: %d getppid atoms give exactly %d more syscall=%d records (%d)",
	      NR_ATOMS, NR_ATOMS, __NR_getppid, n);
	sf_ok(n == NR_ATOMS && good,
	      "chain: one record per atom, with its arguments (a0, a1), success=yes exit=%d",
	      me);
	if (first >= 0)
		tl_diag("record: %s", recs[first].text);

	/*
	 * async_exec()'s own record: one, for the call (a0 the chain), ended
	 * before the atoms' records; no second one at its exit.
	 */
	{
		int exec = 0, exec_at = -1;

		for (int i = after_a; i < nr_recs; i++)
			if (recs[i].nr == __NR_async_exec && recs[i].a0 == co->chain) {
				exec++;
				if (exec_at < 0)
					exec_at = i;
			}
		if (exec_at >= 0)
			tl_diag("record: %s", recs[exec_at].text);
		sf_ok(exec == 1 && (first < 0 || exec_at < first),
		      "chain: exactly one syscall=%d record for async_exec(), before the atoms' (%d)",
		      __NR_async_exec, exec);
		/* The atoms' records come in chain order. */
		in_order = n == NR_ATOMS;
		for (int i = after_a, k = 0; i < nr_recs; i++)
			if (recs[i].nr == __NR_getppid && recs[i].a0 == MARK_ATOM)
				in_order &= recs[i].a1 == (unsigned long long)k++;
		sf_ok(in_order, "chain: the atoms' records come in chain order");
	}

	/* (c) async_exec() whose own record waits for the backlog. */
	if (ready) {
		struct audit_status bs = {
			.mask = AUDIT_STATUS_BACKLOG_LIMIT | AUDIT_STATUS_BACKLOG_WAIT_TIME,
			.backlog_limit = 2, .backlog_wait_time = 100,
		};
		int small = 1, big = 1 << 20;

		ready = audit_request(AUDIT_SET, &bs, sizeof(bs), NULL, 0) == 0;
		setsockopt(afd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
		if (ready)
			tell(p2c[1], 'c');
		ready = ready && hear(c2p[0], 'c', 30000);
		setsockopt(afd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
		drain(500);
		bs.backlog_limit = backlog_limit;
		bs.backlog_wait_time = backlog_wait;
		if (audit_request(AUDIT_SET, &bs, sizeof(bs), NULL, 0))
			tl_diag("could not restore the backlog settings");
		sf_ok(ready && co->backlog_done == 1 && co->backlog_r == co->pid,
		      "backlog: a chain whose async_exec() record waits for the backlog runs in "
		      "place (%ld: 1 in place, 0 handed off; %lld ms, %llu fallbacks)",
		      co->backlog_done, co->backlog_ms, co->fb_call);
	}

	if (ready)
		tell(p2c[1], 'x');
	close(p2c[1]);
	if (!sf_waitpid(pid, &st, 0, 30000)) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		st = SF_TIMEOUT;
	}
	close(c2p[0]);
	sf_child_ok(st, "audited child");
	drain(200);
	other = 0;
	for (int i = 0; i < nr_recs; i++)
		if (recs[i].nr == __NR_getppid && recs[i].a0 != MARK_DIRECT &&
		    recs[i].a0 != MARK_ATOM && recs[i].a0 != MARK_FILL) {
			other++;
			tl_diag("stray: %s", recs[i].text);
		}
	sf_ok(other == 0, "no other getppid records (%d); %d AUDIT_SYSCALL records, %d others in all",
	      other, nr_recs, nr_other);
}

int main(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct audit_status s;
	int err, err2, old_enabled;

	sf_init();
	afd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (afd < 0 && errno == EPROTONOSUPPORT) {
		printf("1..0 # SKIP no NETLINK_AUDIT (a kernel without CONFIG_AUDIT)\n");
		return 4;
	}
	if (afd < 0 || bind(afd, (struct sockaddr *)&sa, sizeof(sa))) {
		tl_ok(0, "NETLINK_AUDIT socket: %s", strerror(errno));
		return tl_exit();
	}

	err = audit_get(&s);
	if (err || s.pid != 0) {
		printf("1..0 # SKIP AUDIT_GET: %s, audit daemon %u\n",
		       err ? strerror(-err) : "ok", err ? 0 : s.pid);
		return 4;
	}
	old_enabled = s.enabled;
	backlog_limit = s.backlog_limit;
	backlog_wait = s.backlog_wait_time;
	tl_diag("audit: enabled %u, pid %u, backlog_limit %u, features %#x",
		s.enabled, s.pid, s.backlog_limit, s.feature_bitmap);
	err = audit_set(AUDIT_STATUS_ENABLED | AUDIT_STATUS_PID, 1, getpid());
	if (err) {
		/* The enabled flag may have been set before the PID failed. */
		audit_set(AUDIT_STATUS_ENABLED, old_enabled, 0);
		printf("1..0 # SKIP AUDIT_SET enabled=1 pid=%d: %s\n", getpid(), strerror(-err));
		return 4;
	}
	err = audit_get(&s);
	tl_ok(!err && s.enabled == 1 && s.pid == (unsigned int)getpid(),
	      "AUDIT_SET: audit enabled (%u), this process is the audit daemon (%u, %d)",
	      s.enabled, s.pid, getpid());

	rule_init();
	err = audit_request(AUDIT_ADD_RULE, &rule, sizeof(rule), NULL, 0);
	tl_ok(!err, "AUDIT_ADD_RULE: always,exit arch=%s getppid, async_exec (%s)",
	      sizeof(long) == 8 ? "b64" : "b32", err ? strerror(-err) : "ok");
	if (!err) {
		sf_sync();
		audited();
		sf_load();
		err = audit_request(AUDIT_DEL_RULE, &rule, sizeof(rule), NULL, 0);
		tl_ok(!err, "AUDIT_DEL_RULE (%s)", err ? strerror(-err) : "ok");
	}

	err = audit_set(AUDIT_STATUS_ENABLED | AUDIT_STATUS_PID, 0, 0);
	err2 = audit_get(&s);
	tl_ok(!err && !err2 && s.enabled == 0 && s.pid == 0,
	      "AUDIT_SET: audit disabled, no audit daemon (%s; enabled %u, pid %u)",
	      err ? strerror(-err) : "ok", s.enabled, s.pid);
	close(afd);
	return tl_exit();
}
