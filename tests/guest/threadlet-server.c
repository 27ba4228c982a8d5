// SPDX-License-Identifier: GPL-2.0
/*
 * The example server (user/examples/tlhttpd.c) over loopback TCP: every
 * byte it sends is checked, with a warm and a cold page cache; its error
 * answers; that a client that stalls mid-request or stops reading holds
 * only its own connection while others are served (the head goes on in
 * a cache-miss thread); and its counters after SIGTERM: the connections
 * of a warm cache ran in place, the cold ones were handed off.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tl_test.h"

#ifdef __i386__
#define SERVER	"/tests/tlhttpd-m32"
#else
#define SERVER	"/tests/tlhttpd"
#endif
#define ROOT	"/mnt/disk/www"
#define NFILES	32
#define NCLIENTS 8

static int port;
static unsigned long n_reqs;	/* requests this test made */

static size_t file_size(int i)
{
	static const size_t sizes[] = { 1, 4096, 65536, 200000 };

	return sizes[i % 4];
}

static unsigned char file_byte(int i, size_t k)
{
	return k * 31 + i * 7 + (k >> 9);
}

static int write_file(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int ok = fd >= 0 && write(fd, p, n) == (ssize_t)n;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

static int make_root(void)
{
	unsigned char *buf = malloc(200000);
	char path[64];

	if (!buf || (mkdir(ROOT, 0755) && errno != EEXIST) ||
	    (mkdir(ROOT "/sub", 0755) && errno != EEXIST))
		return -1;
	for (int i = 0; i < NFILES; i++) {
		for (size_t k = 0; k < file_size(i); k++)
			buf[k] = file_byte(i, k);
		snprintf(path, sizeof(path), ROOT "/f%d.bin", i);
		if (write_file(path, buf, file_size(i)))
			return -1;
	}
	free(buf);
	unlink(ROOT "/out");
	unlink(ROOT "/fifo");
	if (write_file(ROOT "/index.html", "<p>threadlets</p>\n", 18) ||
	    write_file(ROOT "/sub/index.html", "sub\n", 4) ||
	    write_file(ROOT "/empty.txt", "", 0) ||
	    write_file("/mnt/disk/secret", "secret\n", 7) ||
	    symlink("/mnt/disk/secret", ROOT "/out") ||
	    mkfifo(ROOT "/fifo", 0644))
		return -1;
	return 0;
}

/* The guest boots with lo down; it gets 127.0.0.1 when it comes up. */
static int loopback_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int s = socket(AF_INET, SOCK_DGRAM, 0), ret = -1;

	if (s >= 0 && !ioctl(s, SIOCGIFFLAGS, &ifr)) {
		ifr.ifr_flags |= IFF_UP;
		ret = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	if (s >= 0)
		close(s);
	return ret;
}

struct client {
	int fd;
	size_t len;
	char buf[16384];
};

struct resp {
	int status;
	int keep;
	long long clen;
	unsigned char *body;	/* malloc'ed, clen bytes */
};

static int connect_server(struct client *c)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET, .sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct timeval tv = { .tv_sec = 20 };

	c->len = 0;
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (c->fd < 0)
		return -1;
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(c->fd);
		return -1;
	}
	return 0;
}

static int send_str(struct client *c, const char *s)
{
	size_t n = strlen(s);

	return send(c->fd, s, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

/* Reads one response; for HEAD (@head) no body. -1 on a malformed one. */
static int read_resp(struct client *c, struct resp *r, int head)
{
	char *end, *h;
	size_t hlen, have;
	ssize_t n;

	memset(r, 0, sizeof(*r));
	r->clen = -1;
	while (!(end = memmem(c->buf, c->len, "\r\n\r\n", 4))) {
		if (c->len == sizeof(c->buf) - 1)
			return -1;
		n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
		if (n <= 0)
			return -1;
		c->len += n;
	}
	hlen = end + 4 - c->buf;
	end[2] = 0;
	if (sscanf(c->buf, "HTTP/1.1 %d ", &r->status) != 1)
		return -1;
	for (h = strstr(c->buf, "\r\n"); h && h[2]; h = strstr(h + 2, "\r\n")) {
		if (!strncasecmp(h + 2, "Content-Length:", 15))
			r->clen = atoll(h + 17);
		else if (!strncasecmp(h + 2, "Connection: keep-alive", 22))
			r->keep = 1;
	}
	if (r->clen < 0 || r->clen > (1 << 20))
		return -1;
	r->body = malloc(r->clen + 1);
	if (!r->body)
		return -1;
	if (head) {
		memmove(c->buf, c->buf + hlen, c->len - hlen);
		c->len -= hlen;
		return 0;
	}
	have = c->len - hlen < (size_t)r->clen ? c->len - hlen : (size_t)r->clen;
	memcpy(r->body, c->buf + hlen, have);
	memmove(c->buf, c->buf + hlen + have, c->len - hlen - have);
	c->len -= hlen + have;
	while (have < (size_t)r->clen) {
		n = recv(c->fd, r->body + have, r->clen - have, 0);
		if (n <= 0)
			return -1;
		have += n;
	}
	return 0;
}

/* One request on @c; the status, or -1 if no well-formed answer came. */
static int request(struct client *c, const char *req, struct resp *r, int head)
{
	__atomic_add_fetch(&n_reqs, 1, __ATOMIC_RELAXED);
	if (send_str(c, req) || read_resp(c, r, head)) {
		free(r->body);
		r->body = NULL;
		return -1;
	}
	return r->status;
}

/* GET /f@i.bin on @c: 1 if every byte is right. */
static int get_file(struct client *c, int i)
{
	char req[96];
	struct resp r;
	int ok;

	snprintf(req, sizeof(req), "GET /f%d.bin HTTP/1.1\r\nHost: t\r\n\r\n", i);
	ok = request(c, req, &r, 0) == 200 && r.keep &&
	     r.clen == (long long)file_size(i);
	for (size_t k = 0; ok && k < file_size(i); k++)
		ok = r.body[k] == file_byte(i, k);
	free(r.body);
	return ok;
}

/* One fresh connection, one request: the status, or -1. */
static int status_of(const char *req, int head)
{
	struct client c;
	struct resp r;
	int st;

	if (connect_server(&c))
		return -1;
	st = request(&c, req, &r, head);
	free(r.body);
	close(c.fd);
	return st;
}

static void *cold_client(void *arg)
{
	int id = (intptr_t)arg, ok = 1;
	struct client *c = malloc(sizeof(*c));

	if (!c || connect_server(c))
		return (void *)0;
	for (int i = id; i < NFILES; i += NCLIENTS)
		ok &= get_file(c, i);
	close(c->fd);
	free(c);
	return (void *)(intptr_t)ok;
}

static void drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);

	sync();
	if (fd >= 0) {
		if (write(fd, "3", 1) != 1)
			tl_diag("drop_caches: %s", strerror(errno));
		close(fd);
	}
}

/* Requests the server must refuse, each on a connection of its own. */
static const struct {
	const char *req, *what;
	int status;
} errors[] = {
	{ "GET /out HTTP/1.1\r\n\r\n", "a symlink out of the root", 403 },
	{ "GET /../secret HTTP/1.1\r\n\r\n", "/../secret", 403 },
	{ "GET /%2e%2e/secret HTTP/1.1\r\n\r\n", "/%2e%2e/secret", 403 },
	{ "GET /fifo HTTP/1.1\r\n\r\n", "a FIFO, without waiting for a writer", 403 },
	{ "GET /a%00b HTTP/1.1\r\n\r\n", "an escaped NUL", 400 },
	{ "GET /%zz HTTP/1.1\r\n\r\n", "a bad escape", 400 },
	{ "GET f0.bin HTTP/1.1\r\n\r\n", "a target without /", 400 },
	{ "POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\nx", "POST", 405 },
	{ "GET / HTTP/2.0\r\n\r\n", "HTTP/2.0", 505 },
	{ "hello\r\n\r\n", "no request line", 400 },
};

/* The value after @key in the server's counters, or -1. */
static long counter(const char *out, const char *key)
{
	const char *p = strstr(out, key);

	return p ? atol(p + strlen(key)) : -1;
}

int main(void)
{
	static struct client c, slow, stalled;
	char out[1024] = "", line[128], big[8192];
	int pfd[2], status, ok;
	struct resp r;
	pthread_t th[NCLIENTS];
	ssize_t n;
	size_t got = 0;
	pid_t pid;
	FILE *f;

	if (loopback_up() || make_root()) {
		tl_ok(0, "set up: lo up and the document root (%s)", strerror(errno));
		return tl_exit();
	}
	if (pipe(pfd))
		return 1;
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		execl(SERVER, SERVER, "-p", "0", "-r", ROOT, "-c", "32",
		      "-k", "30", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	ok = f && fgets(line, sizeof(line), f) &&
	     sscanf(line, "tlhttpd: listening on 127.0.0.1:%d", &port) == 1;
	line[strcspn(line, "\n")] = 0;
	tl_ok(ok, "server started: %s", ok ? line : "no listening line");
	if (!ok) {
		kill(pid, SIGKILL);
		return tl_exit();
	}

	/* Warm: everything was just written. */
	ok = !connect_server(&c) &&
	     request(&c, "GET / HTTP/1.1\r\nHost: t\r\n\r\n", &r, 0) == 200 &&
	     r.clen == 18 && !memcmp(r.body, "<p>threadlets</p>\n", 18);
	free(r.body);
	tl_ok(ok, "GET / serves index.html");
	ok = 1;
	for (int i = 0; i < NFILES; i++)
		ok &= get_file(&c, i);
	tl_ok(ok, "warm cache: %d files on one keep-alive connection, every byte right",
	      NFILES);
	ok = request(&c, "HEAD /f3.bin HTTP/1.1\r\n\r\n", &r, 1) == 200 &&
	     r.clen == (long long)file_size(3);
	free(r.body);
	ok = ok && get_file(&c, 2);
	tl_ok(ok, "HEAD: the length, no body (the next response is intact)");
	ok = send_str(&c, "GET /f1.bin HTTP/1.1\r\n\r\nGET /empty.txt HTTP/1.1\r\n\r\n") == 0 &&
	     !read_resp(&c, &r, 0) && r.status == 200 &&
	     r.clen == (long long)file_size(1);
	free(r.body);
	ok = ok && !read_resp(&c, &r, 0) && r.status == 200 && r.clen == 0;
	free(r.body);
	n_reqs += 2;
	tl_ok(ok, "two pipelined requests, two responses in order");
	ok = request(&c, "GET /sub/ HTTP/1.1\r\n\r\n", &r, 0) == 200 &&
	     r.clen == 4 && !memcmp(r.body, "sub\n", 4);
	free(r.body);
	tl_ok(ok, "a directory serves its index.html");
	ok = request(&c, "GET /none HTTP/1.1\r\n\r\n", &r, 0) == 404 && r.keep;
	free(r.body);
	ok = ok && get_file(&c, 5);
	tl_ok(ok, "404 keeps the connection");
	close(c.fd);

	/* Errors, each on a connection of its own. */
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		tl_ok(status_of(errors[i].req, 0) == errors[i].status, "%s: %d",
		      errors[i].what, errors[i].status);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	memcpy(big, "GET /", 5);
	tl_ok(status_of(big, 0) == 431, "a request head of 8 KiB: 431");
	n_reqs--;	/* never a whole request head */

	/*
	 * A whole request with "Connection: close" from a warm cache: the
	 * server accepts a connection only once its data is in
	 * (TCP_DEFER_ACCEPT), reads it, answers into the socket buffer and
	 * closes, so the connection's threadlet never blocks.
	 */
	ok = 1;
	for (int i = 0; i < 8; i++) {
		char req[96];

		snprintf(req, sizeof(req),
			 "GET /f%d.bin HTTP/1.1\r\nConnection: close\r\n\r\n", i);
		ok &= status_of(req, 0) == 200;
	}
	tl_ok(ok, "8 requests with Connection: close");

	/*
	 * A client that stalls halfway through its request, and one that
	 * asks for 200 KB and reads none of it: each keeps a thread of the
	 * server, and the head goes on. -k 30: an inline server would
	 * answer the next client only after 30 s; the socket timeout is 20.
	 */
	ok = !connect_server(&stalled) &&
	     !send_str(&stalled, "GET /f0.bin HTTP/1.1\r\nHo");
	ok = ok && !connect_server(&slow);
	if (ok) {
		int sz = 4096;

		setsockopt(slow.fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		ok = !send_str(&slow, "GET /f3.bin HTTP/1.1\r\n\r\n");
		n_reqs += 2;
	}
	usleep(200000);
	ok = ok && status_of("GET /f7.bin HTTP/1.1\r\n\r\n", 0) == 200;
	tl_ok(ok, "a stalled and a non-reading client do not hold up the next one");
	ok = !send_str(&stalled, "st: t\r\n\r\n") && !read_resp(&stalled, &r, 0) &&
	     r.status == 200 && r.clen == 1 && r.body[0] == file_byte(0, 0);
	free(r.body);
	tl_ok(ok, "the stalled request completes when the rest of it comes");
	ok = !read_resp(&slow, &r, 0) && r.status == 200 &&
	     r.clen == (long long)file_size(3);
	for (size_t k = 0; ok && k < file_size(3); k++)
		ok = r.body[k] == file_byte(3, k);
	free(r.body);
	tl_ok(ok, "the non-reading client gets all 200000 bytes when it reads");
	close(stalled.fd);
	close(slow.fd);

	/* A client that resets its connection in the middle of a response. */
	ok = !connect_server(&c);
	if (ok) {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };
		int sz = 4096;

		setsockopt(c.fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		ok = !send_str(&c, "GET /f7.bin HTTP/1.1\r\n\r\n") &&
		     recv(c.fd, c.buf, 100, 0) > 0;
		close(c.fd);
		n_reqs++;
	}
	usleep(100000);
	ok = ok && status_of("GET /f6.bin HTTP/1.1\r\n\r\n", 0) == 200;
	tl_ok(ok, "a client that resets mid-response: the server goes on");

	/* Cold: the server's reads wait for the disk. */
	drop_caches();
	for (intptr_t i = 0; i < NCLIENTS; i++)
		pthread_create(&th[i], NULL, cold_client, (void *)i);
	ok = 1;
	for (int i = 0; i < NCLIENTS; i++) {
		void *res;

		pthread_join(th[i], &res);
		ok &= res != NULL;
	}
	tl_ok(ok, "cold cache: %d clients at once, %d files, every byte right",
	      NCLIENTS, NFILES);

	kill(pid, SIGTERM);
	while (got < sizeof(out) - 1 &&
	       (n = fread(out + got, 1, sizeof(out) - 1 - got, f)) > 0)
		got += n;
	out[got] = 0;
	fclose(f);
	ok = waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	     WEXITSTATUS(status) == 0;
	tl_ok(ok, "SIGTERM: the server exits 0 (status %#x)", status);
	for (char *p = out; (p = strchr(p, '\n')); )
		*p++ = ' ';
	tl_diag("%s", out);
	tl_ok(counter(out, " requests ") == (long)n_reqs,
	      "the server counted %ld requests, the test made %lu",
	      counter(out, " requests "), n_reqs);
	tl_ok(counter(out, "threadlets in-place ") > 0,
	      "connections ran to completion in place (%ld)",
	      counter(out, "threadlets in-place "));
	tl_ok(counter(out, " handoffs ") > 0,
	      "connections that blocked were handed off (%ld)",
	      counter(out, " handoffs "));
	/* 404; 403 four times; 400 four times; 405; 431; and the 505. */
	tl_ok(counter(out, " 4xx ") == 11 && counter(out, " 5xx ") == 1,
	      "the 11 4xx and one 5xx answers asked for, no other");
	return tl_exit();
}
