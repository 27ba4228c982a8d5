// SPDX-License-Identifier: GPL-2.0
/*
 * libthreadlet-aio in a grandchild (found by a helper's review).
 *
 * tl_aio_init() registered its fork handler every time it ran, and it runs
 * again in every child that uses AIO: in a grandchild the handler ran
 * twice and took each free threadlet stack it found in the ring twice,
 * so two requests could run on one stack at once.
 *
 * P uses AIO, forks G1, which uses it and leaves stacks in the ring, and
 * forks G2, which starts six reads that block at once. Expected: in G2
 * each blocked read is on a stack of its own (the user stack pointers in
 * /proc/self/task/<tid>/syscall differ), and all six complete.
 */
#include <aio.h>
#include <dirent.h>
#include <sys/wait.h>
#include "tl_test.h"

/* The user stack pointers of this process's threads blocked in read(). */
static int blocked_sps(unsigned long *sps, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		char p[300], l[512] = "", *t = l;
		unsigned long v[9];
		int k = 0;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/self/task/%s/syscall", e->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (!fgets(l, sizeof(l), f))
			l[0] = 0;
		fclose(f);
		if (strncmp(l, "0 ", 2) && strncmp(l, "3 ", 2))	/* read(), 64- or 32-bit */
			continue;
		while (k < 9 && *t)
			v[k++] = strtoul(t, &t, 0);
		if (k == 9 && n < max)
			sps[n++] = v[7];
	}
	if (d)
		closedir(d);
	return n;
}

static void block_reads(int n, int pfd[][2], struct aiocb *cb, char *buf)
{
	for (int i = 0; i < n; i++) {
		if (pipe(pfd[i]))
			_exit(20);
		memset(&cb[i], 0, sizeof(cb[i]));
		cb[i].aio_fildes = pfd[i][0];
		cb[i].aio_buf = buf + 64 * i;
		cb[i].aio_nbytes = 1;
		if (aio_read(&cb[i]))
			_exit(21);
	}
	usleep(300000);		/* each blocked in a cache-miss thread */
}

static int finish(int n, int pfd[][2], struct aiocb *cb)
{
	int bad = 0;

	for (int i = 0; i < n; i++) {
		const struct aiocb *l[1] = { &cb[i] };

		if (write(pfd[i][1], "x", 1) != 1)
			bad++;
		while (aio_error(&cb[i]) == EINPROGRESS)
			aio_suspend(l, 1, NULL);
		bad += aio_return(&cb[i]) != 1;
	}
	return bad;
}

int main(void)
{
	static char buf[4096];
	static int pfd[8][2];
	static struct aiocb cb[8];
	int st = -1;
	pid_t g1;

	block_reads(1, pfd, cb, buf);
	tl_ok(finish(1, pfd, cb) == 0, "P: one read");
	fflush(stdout);
	g1 = fork();
	if (g1 == 0) {
		pid_t g2;

		block_reads(3, pfd, cb, buf);
		if (finish(3, pfd, cb))
			_exit(30);
		g2 = fork();
		if (g2 == 0) {
			unsigned long sps[16];
			int n, dup = 0;

			block_reads(6, pfd, cb, buf);
			n = blocked_sps(sps, 16);
			for (int i = 0; i < n; i++)
				for (int j = i + 1; j < n; j++)
					dup += sps[i] == sps[j];
			if (finish(6, pfd, cb))
				_exit(40);
			_exit(dup ? 41 : n >= 6 ? 0 : 42);
		}
		if (waitpid(g2, &st, 0) != g2 || !WIFEXITED(st))
			_exit(50);
		_exit(WEXITSTATUS(st));
	}
	waitpid(g1, &st, 0);
	tl_ok(WIFEXITED(st) && WEXITSTATUS(st) != 41,
	      "G2: six blocked reads, each on a stack of its own (status %#x)", st);
	tl_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "G1 and G2: every read completed (status %#x)", st);
	return tl_exit();
}
