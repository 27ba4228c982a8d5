// SPDX-License-Identifier: GPL-2.0
/*
 * Load for the example server (user/examples/tlhttpd.c), in the guest:
 * C clients, each making R GETs of FILES files of SIZE bytes in the
 * server's root, over loopback TCP; every response's status and length
 * are checked.
 *
 * Usage: httpload -p port [-c C] [-r R] [-k] [-w root] [-f FILES] [-s SIZE]
 *   -k  keep-alive: one connection per client; else one per request, with
 *       "Connection: close"
 *   -w  first write the files into root (f0 ... f<FILES-1>), untimed
 * Output: "HTTPLOAD <requests> <ns>", ns of CLOCK_MONOTONIC (guest
 * instructions under -icount) from the first request to the last
 * response. Exit status 1 if any request failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>

#include "bench.h"

#define MAXC	64

static int port, clients = 1, reqs = 100, keep, nfiles = 64, size = 4096;
static atomic_int failed;
static pthread_barrier_t start;

static int connect_server(void)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET, .sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Sends @req on @fd and reads the whole response: 0 if it is a 200 of @size. */
static int get(int fd, const char *req, char *buf, size_t cap)
{
	size_t n = strlen(req), len = 0, hlen;
	char *end;
	ssize_t r;
	long clen;

	if (send(fd, req, n, MSG_NOSIGNAL) != (ssize_t)n)
		return -1;
	while (!(end = memmem(buf, len, "\r\n\r\n", 4))) {
		r = recv(fd, buf + len, cap - len - 1, 0);
		if (r <= 0)
			return -1;
		len += r;
	}
	hlen = end + 4 - buf;
	buf[hlen - 1] = 0;
	end = strcasestr(buf, "\r\nContent-Length:");
	clen = end ? atol(end + 17) : -1;
	if (strncmp(buf, "HTTP/1.1 200 ", 13) || clen != size)
		return -1;
	for (len -= hlen; len < (size_t)clen; len += r) {
		r = recv(fd, buf, cap - 1, 0);
		if (r <= 0)
			return -1;
	}
	return len == (size_t)clen ? 0 : -1;
}

static void *client(void *arg)
{
	int id = (intptr_t)arg, fd = -1, i;
	char req[96], *buf = malloc(65536);

	pthread_barrier_wait(&start);
	for (i = 0; buf && i < reqs && !failed; i++) {
		if (fd < 0 && (fd = connect_server()) < 0)
			break;
		snprintf(req, sizeof(req), "GET /f%d HTTP/1.1\r\n%s\r\n",
			 (id + i * clients) % nfiles,
			 keep ? "" : "Connection: close\r\n");
		if (get(fd, req, buf, 65536))
			break;
		if (!keep) {
			close(fd);
			fd = -1;
		}
	}
	if (i < reqs)
		failed++;
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static int write_files(const char *root)
{
	char path[256], *data = calloc(1, size);

	for (int i = 0; data && i < nfiles; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/f%d", root, i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, data, size) != size)
			return -1;
		close(fd);
	}
	free(data);
	return data ? 0 : -1;
}

int main(int argc, char **argv)
{
	pthread_t th[MAXC];
	uint64_t t0, t1;
	int opt;

	while ((opt = getopt(argc, argv, "p:c:r:kw:f:s:")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'c': clients = atoi(optarg); break;
		case 'r': reqs = atoi(optarg); break;
		case 'k': keep = 1; break;
		case 'f': nfiles = atoi(optarg); break;
		case 's': size = atoi(optarg); break;
		case 'w':
			if (write_files(optarg)) {
				perror("httpload: writing the files");
				return 1;
			}
			break;
		default:
			goto usage;
		}
	}
	if (!port || clients < 1 || clients > MAXC || reqs < 1 || nfiles < 1 ||
	    size < 0 || size > 60000) {
usage:
		fprintf(stderr, "usage: httpload -p port [-c clients] [-r requests] "
			"[-k] [-w root] [-f files] [-s size]\n");
		return 2;
	}
	pthread_barrier_init(&start, NULL, clients + 1);
	for (intptr_t i = 0; i < clients; i++)
		if (pthread_create(&th[i], NULL, client, (void *)i))
			return 1;
	t0 = now();
	pthread_barrier_wait(&start);
	for (int i = 0; i < clients; i++)
		pthread_join(th[i], NULL);
	t1 = now();
	if (failed) {
		fprintf(stderr, "httpload: %d clients failed\n", failed);
		return 1;
	}
	printf("HTTPLOAD %d %llu\n", clients * reqs,
	       (unsigned long long)(t1 - t0));
	return 0;
}
