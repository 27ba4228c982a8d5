// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * tlhttpd: a static-file HTTP/1.1 server, one threadlet per connection.
 *
 * The main thread accepts connections and runs each one's whole life as a
 * threadlet: plain blocking code that reads a request, opens the file,
 * sends it and waits for the next request of a keep-alive connection. A
 * connection whose files are in the page cache and whose client keeps up
 * is served right there, in the accepting thread, with no other thread
 * involved. The first time its code blocks (a disk read, a slow client, an
 * idle keep-alive connection), the kernel hands the accepting thread's
 * context to a parked cache-miss thread, which goes back to accepting,
 * while the connection goes on in the thread it blocked in. Its end posts
 * the connection into the ring, where the accepting thread finds it and
 * reuses its slot and stack.
 *
 * -m pthread serves each connection in a thread of its own, -m inline in
 * the accepting thread, one at a time: the two models threadlets join.
 *
 * Usage: tlhttpd [-a addr] [-p port] [-r root] [-c conns] [-k seconds]
 *                [-m threadlet|pthread|inline]
 *   -a, -p  where to listen [127.0.0.1, 8080; port 0 picks a free one]
 *   -r      the document root [.]; nothing outside it is served (openat2()
 *           with RESOLVE_BENEATH: no "..", absolute or magic link out)
 *   -c      connections served at once [64]: also the pool's threads
 *   -k      idle time before a connection is closed [5 s]
 * Prints "tlhttpd: listening on ADDR:PORT" on stdout when it accepts. On
 * SIGTERM or SIGINT it stops accepting, lets the connections end, prints
 * its counters on stdout and exits 0. cpu-ns counts the CPU time of all
 * its threads from the first line to the signal, in ns.
 *
 * Connection code runs in whichever thread it was handed to: it uses no
 * stdio (a FILE lock is owned by a thread pointer, which stays with the
 * head) and no lock held across a call that may block.
 */
#define _FILE_OFFSET_BITS 64	/* files over 2 GiB in a 32-bit build */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <threadlet.h>
#include <time.h>
#include <unistd.h>

#define REQ_MAX		8192		/* request line and headers */
#define STACK_SIZE	(128 << 10)
#define MAX_CONNS	1024

enum mode { M_THREADLET, M_PTHREAD, M_INLINE };

struct conn {
	int fd;
	struct conn *next;	/* free list, or pthread mode's done list */
	unsigned long stack;	/* threadlet mode */
	size_t len;		/* bytes in buf */
	char buf[REQ_MAX];
};

static struct async_head_user ahu;
static int rootfd, idle_s = 5;
static enum mode mode = M_THREADLET;
static struct conn *free_conns;
static unsigned int busy;	/* connections not yet back in free_conns */

static atomic_ulong n_conns, n_inplace, n_async, n_reqs, n_2xx, n_4xx,
		    n_5xx, n_bytes;

/* pthread mode: finished connections, for the accepting thread. */
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static struct conn *done_conns;

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 431: return "Request Header Fields Too Large";
	case 505: return "HTTP Version Not Supported";
	default: return "Internal Server Error";
	}
}

static const char *content_type(const char *path)
{
	static const char *const types[][2] = {
		{ ".html", "text/html" }, { ".txt", "text/plain" },
		{ ".css", "text/css" }, { ".js", "text/javascript" },
		{ ".json", "application/json" }, { ".png", "image/png" },
		{ ".jpg", "image/jpeg" }, { ".svg", "image/svg+xml" },
	};
	const char *dot = strrchr(path, '.');

	for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(dot, types[i][0]))
			return types[i][1];
	return "application/octet-stream";
}

static int send_all(int fd, const char *p, size_t n, int flags)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | flags);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= w;
	}
	return 0;
}

/* Sends the status line and headers; MSG_MORE when a body follows. */
static int send_head(int fd, int status, long long len, const char *type,
		     int keep, int body)
{
	char hdr[512], date[64];
	struct tm tm;
	time_t t = time(NULL);
	int n;

	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT",
		 gmtime_r(&t, &tm));
	n = snprintf(hdr, sizeof(hdr),
		     "HTTP/1.1 %d %s\r\nServer: tlhttpd\r\nDate: %s\r\n"
		     "Content-Type: %s\r\nContent-Length: %lld\r\n"
		     "Connection: %s\r\n\r\n", status, reason(status), date,
		     type, len, keep ? "keep-alive" : "close");
	if (status < 300)
		n_2xx++;
	else if (status < 500)
		n_4xx++;
	else
		n_5xx++;
	return send_all(fd, hdr, n, body ? MSG_MORE : 0);
}

/* An error page; the connection stays open only after a 403 or a 404. */
static int send_error(int fd, int status, int keep, int head_only)
{
	char body[128];
	int n = snprintf(body, sizeof(body), "%d %s\n", status, reason(status));

	keep = keep && (status == 403 || status == 404);
	if (send_head(fd, status, n, "text/plain", keep, !head_only) ||
	    (!head_only && send_all(fd, body, n, 0)))
		return -1;
	return keep ? 0 : -1;
}

static int hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decodes %XX in place; -1 for a bad escape or a NUL. */
static int url_decode(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (*s == '%') {
			int hi = hex(s[1]), lo = hi < 0 ? -1 : hex(s[2]);

			if (lo < 0 || !(hi | lo))
				return -1;
			*o++ = hi << 4 | lo;
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
	return 0;
}

/*
 * @path below directory @dfd, or -1 with errno; never outside the root.
 * O_NONBLOCK, as nginx opens files: opening a FIFO or a device does not
 * wait (respond() serves only regular files, whose reads ignore it).
 */
static int open_below(int dfd, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};

	while (*path == '/')
		path++;
	return syscall(SYS_openat2, dfd, *path ? path : ".", &how,
		       sizeof(how));
}

/* Serves one parsed request. 0: keep the connection, -1: close it. */
static int respond(int fd, char *method, char *target, int keep)
{
	int head_only = !strcmp(method, "HEAD"), ffd, ret = -1;
	struct stat st;
	char *q;
	off_t off = 0;

	if (!head_only && strcmp(method, "GET"))
		return send_error(fd, 405, 0, 0);
	q = strpbrk(target, "?#");
	if (q)
		*q = 0;
	if (target[0] != '/' || url_decode(target))
		return send_error(fd, 400, 0, head_only);
	ffd = open_below(rootfd, target);
	if (ffd >= 0 && fstat(ffd, &st))
		st.st_mode = 0;
	if (ffd >= 0 && S_ISDIR(st.st_mode)) {
		int dfd = ffd;

		ffd = open_below(dfd, "index.html");
		close(dfd);
		target = "index.html";
		if (ffd >= 0 && fstat(ffd, &st))
			st.st_mode = 0;
	}
	if (ffd < 0)
		return send_error(fd, errno == ENOENT || errno == ENOTDIR ?
				  404 : 403, keep, head_only);
	if (!S_ISREG(st.st_mode)) {
		close(ffd);
		return send_error(fd, 403, keep, head_only);
	}
	if (send_head(fd, 200, st.st_size, content_type(target), keep,
		      !head_only && st.st_size))
		goto out;
	while (!head_only && off < st.st_size) {
		ssize_t n = sendfile(fd, ffd, &off, st.st_size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out;
		n_bytes += n;
	}
	ret = keep ? 0 : -1;
out:
	close(ffd);
	return ret;
}

/*
 * Reads until the buffer holds a whole request head; returns its length
 * (through the blank line), 0 when the client closed or went idle between
 * requests, -1 on an error, -2 when the head does not fit.
 */
static long read_head(struct conn *c)
{
	for (;;) {
		char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
		ssize_t n;

		if (end)
			return end + 4 - c->buf;
		if (c->len == sizeof(c->buf) - 1)
			return -2;
		n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return c->len || (n < 0 && errno != EAGAIN) ? -1 : 0;
		c->len += n;
	}
}

/* A connection's whole life: requests until close, error or idle time. */
static void serve(struct conn *c)
{
	struct timeval tv = { .tv_sec = idle_s };
	int one = 1;

	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->len = 0;
	for (;;) {
		long hlen = read_head(c);
		char *line, *method, *target, *version, *save, *sp, *h;
		int keep;

		if (hlen == -2)
			send_error(c->fd, 431, 0, 0);
		if (hlen <= 0)
			break;
		n_reqs++;
		c->buf[hlen - 2] = 0;	/* ends the last header line */
		line = strtok_r(c->buf, "\r\n", &save);
		method = line ? strtok_r(line, " ", &sp) : NULL;
		target = method ? strtok_r(NULL, " ", &sp) : NULL;
		version = target ? strtok_r(NULL, " ", &sp) : NULL;
		if (!version || strtok_r(NULL, " ", &sp)) {
			send_error(c->fd, 400, 0, 0);
			break;
		}
		if (strncmp(version, "HTTP/1.", 7) || !version[7] || version[8]) {
			send_error(c->fd, 505, 0, 0);
			break;
		}
		keep = version[7] != '0';
		while ((h = strtok_r(NULL, "\r\n", &save))) {
			if (!strncasecmp(h, "Connection:", 11)) {
				if (strcasestr(h + 11, "close"))
					keep = 0;
				else if (strcasestr(h + 11, "keep-alive"))
					keep = 1;
			} else if (!strncasecmp(h, "Transfer-Encoding:", 18) ||
				   (!strncasecmp(h, "Content-Length:", 15) &&
				    atol(h + 15))) {
				/* No request here has a body: not read. */
				send_error(c->fd, strcmp(method, "GET") &&
					   strcmp(method, "HEAD") ? 405 : 400,
					   0, 0);
				goto out;
			}
		}
		if (respond(c->fd, method, target, keep))
			break;
		/* A pipelined request may follow the one just served. */
		c->len -= hlen;
		memmove(c->buf, c->buf + hlen, c->len);
	}
out:
	close(c->fd);
}

static long conn_threadlet(void *data)
{
	serve(data);
	return complete_threadlet_fn(data, &ahu);
}

static void *conn_thread(void *data)
{
	struct conn *c = data;

	serve(c);
	pthread_mutex_lock(&done_lock);
	c->next = done_conns;
	done_conns = c;
	pthread_cond_signal(&done_cond);
	pthread_mutex_unlock(&done_lock);
	return NULL;
}

static void put_conn(struct conn *c)
{
	c->next = free_conns;
	free_conns = c;
	busy--;
}

/*
 * Takes back the connections that ended elsewhere; with @wait, sleeps
 * until one has. The ring holds one entry per connection, so it never
 * fills.
 */
static void reap(int wait)
{
	struct conn *c;

	if (mode == M_THREADLET) {
		while (!(c = async_ring_pop(&ahu)) && wait)
			if (async_wait(1, ahu.user_ring_idx, &ahu) < 0)
				wait = 0;	/* a signal: back to the loop */
		for (; c; c = async_ring_pop(&ahu))
			put_conn(c);
	} else if (mode == M_PTHREAD) {
		pthread_mutex_lock(&done_lock);
		while (!done_conns && wait)
			pthread_cond_wait(&done_cond, &done_lock);
		c = done_conns;
		done_conns = NULL;
		pthread_mutex_unlock(&done_lock);
		while (c) {
			struct conn *next = c->next;

			put_conn(c);
			c = next;
		}
	}
}

static void start(struct conn *c)
{
	pthread_attr_t attr;
	pthread_t t;
	long r;

	n_conns++;
	switch (mode) {
	case M_THREADLET:
		r = threadlet_exec(conn_threadlet, c, c->stack, &ahu);
		if (r == 1) {
			n_inplace++;
			put_conn(c);
		} else if (r == 0) {
			n_async++;
		} else {
			fprintf(stderr, "tlhttpd: threadlet_exec: %s\n",
				strerror(-r));
			close(c->fd);
			put_conn(c);
		}
		break;
	case M_PTHREAD:
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, STACK_SIZE);
		if (pthread_create(&t, &attr, conn_thread, c)) {
			close(c->fd);
			put_conn(c);
		} else {
			n_async++;
		}
		pthread_attr_destroy(&attr);
		break;
	case M_INLINE:
		serve(c);
		n_inplace++;
		put_conn(c);
		break;
	}
}

static unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int usage(void)
{
	fprintf(stderr, "usage: tlhttpd [-a addr] [-p port] [-r root] [-c conns]"
		" [-k seconds] [-m threadlet|pthread|inline]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *addr = "127.0.0.1", *root = ".";
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t salen = sizeof(sa);
	unsigned int nconns = 64, i, ring;
	int port = 8080, opt, lfd, sfd, one = 1;
	struct threadlet_stats st;
	unsigned long long cpu;
	struct conn *conns;
	sigset_t sigs;

	while ((opt = getopt(argc, argv, "a:p:r:c:k:m:")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'r': root = optarg; break;
		case 'c': nconns = atoi(optarg); break;
		case 'k': idle_s = atoi(optarg); break;
		case 'm':
			if (!strcmp(optarg, "threadlet"))
				mode = M_THREADLET;
			else if (!strcmp(optarg, "pthread"))
				mode = M_PTHREAD;
			else if (!strcmp(optarg, "inline"))
				mode = M_INLINE;
			else
				return usage();
			break;
		default:
			return usage();
		}
	}
	if (optind != argc || !nconns || nconns > MAX_CONNS || idle_s <= 0 ||
	    port < 0 || port > 65535 || inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return usage();
	sa.sin_port = htons(port);

	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		perror(root);
		return 1;
	}
	/*
	 * SIGTERM and SIGINT are read from a signalfd by the accepting
	 * thread: blocked before any other thread starts, so none takes them.
	 */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	/* A client gone mid-response: sendfile() fails with EPIPE instead. */
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	/*
	 * TCP_DEFER_ACCEPT: a connection is accepted once its first data is
	 * in, so a whole request served from the page cache never blocks.
	 */
	if (sfd < 0 || lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(lfd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &idle_s,
		       sizeof(idle_s)) ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 128) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &salen)) {
		perror("tlhttpd: listen");
		return 1;
	}

	conns = calloc(nconns, sizeof(*conns));
	if (!conns)
		return 1;
	for (ring = 1; ring < nconns; ring <<= 1)
		;
	/*
	 * A fixed pool, a thread per connection that may block: with no
	 * thread parked, a connection that blocks would keep the accepting
	 * thread with it until it ends.
	 */
	if (mode == M_THREADLET) {
		long r = async_head_init_pool(&ahu, ring, nconns, nconns);

		if (r) {
			fprintf(stderr, "tlhttpd: async_head_init_pool: %s\n",
				strerror(-r));
			return 1;
		}
	}
	for (i = 0; i < nconns; i++) {
		if (mode == M_THREADLET) {
			conns[i].stack = threadlet_stack_alloc(STACK_SIZE);
			if (threadlet_err(conns[i].stack)) {
				fprintf(stderr, "tlhttpd: no stack\n");
				return 1;
			}
		}
		conns[i].next = free_conns;
		free_conns = &conns[i];
	}

	printf("tlhttpd: listening on %s:%d\n", addr, ntohs(sa.sin_port));
	fflush(stdout);
	cpu = cpu_ns();
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = lfd, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};
		struct signalfd_siginfo si;
		struct conn *c;
		int fd;

		reap(!free_conns);
		if (!free_conns)
			continue;
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (read(sfd, &si, sizeof(si)) == sizeof(si))
			break;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;	/* EAGAIN, a connection reset, EMFILE */
		c = free_conns;
		free_conns = c->next;
		busy++;
		c->fd = fd;
		start(c);
	}
	cpu = cpu_ns() - cpu;
	close(lfd);
	while (busy)
		reap(1);
	if (mode == M_THREADLET) {
		threadlet_stats(&st);
		async_head_exit(&ahu);
	}

	printf("tlhttpd: connections %lu in-place %lu async %lu requests %lu "
	       "2xx %lu 4xx %lu 5xx %lu bytes %lu cpu-ns %llu\n", n_conns,
	       n_inplace, n_async, n_reqs, n_2xx, n_4xx, n_5xx, n_bytes, cpu);
	if (mode == M_THREADLET)
		printf("tlhttpd: threadlets in-place %llu handoffs %llu "
		       "fallbacks %llu last-fallback %s\n", st.nr_sync,
		       st.nr_handoffs, st.nr_fallbacks,
		       threadlet_fallback_name(st.last_fallback));
	return 0;
}
