// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * Example: open + fstat + read + close of a file as one syslet chain.
 *
 * Arguments go by pointer, so the fd that open() returns into `fd` is the
 * first argument of the next three atoms. Every atom stops the chain on a
 * negative result, so the final atom says how far it got. If the chain
 * blocks (a cold page cache), async_exec() returns NULL at once and the
 * final atom arrives in the completion ring.
 *
 * Atoms name the process's own system calls: built with -m32, they are
 * i386 calls, and fstat is fstat64, whose struct stat64 is glibc's.
 *
 * Usage: syslet_file [path]   (default /mnt/disk/README)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <threadlet.h>

#ifdef __i386__
#define FSTAT_NR	SYS_fstat64
typedef struct stat64 file_stat;
#else
#define FSTAT_NR	SYS_fstat
typedef struct stat file_stat;
#endif

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/mnt/disk/README";
	static char buf[4096];
	struct async_head_user ahu;
	struct syslet_uatom atoms[4], *done;
	file_stat st;
	long long fd = -1, fstat_ret = -1, nread = -1, close_ret = -1;
	unsigned long long a_path = (uintptr_t)path, a_flags = O_RDONLY;
	unsigned long long a_st = (uintptr_t)&st, a_buf = (uintptr_t)buf;
	unsigned long long a_len = sizeof(buf) - 1;
	unsigned int stop = SYSLET_STOP_ON_NEGATIVE;

	if (async_head_init(&ahu, 8, 1))
		return 1;
	syslet_atom_init(&atoms[0], SYS_open, stop, &fd, &atoms[1], 2,
			 &a_path, &a_flags);
	syslet_atom_init(&atoms[1], FSTAT_NR, stop, &fstat_ret, &atoms[2], 2,
			 (unsigned long long *)&fd, &a_st);
	syslet_atom_init(&atoms[2], SYS_read, stop, &nread, &atoms[3], 3,
			 (unsigned long long *)&fd, &a_buf, &a_len);
	syslet_atom_init(&atoms[3], SYS_close, stop, &close_ret, NULL, 1,
			 (unsigned long long *)&fd);

	done = async_exec(&atoms[0], &ahu);
	if (threadlet_ptr_err(done)) {
		fprintf(stderr, "async_exec: %s\n", strerror(-threadlet_ptr_err(done)));
		return 1;
	}
	if (!done) {
		printf("# chain went async; waiting for its final atom\n");
		while (!(done = async_ring_pop(&ahu)))
			async_wait(1, ahu.user_ring_idx, &ahu);
	}
	async_head_exit(&ahu);

	printf("# final atom %ld: open=%lld fstat=%lld read=%lld close=%lld\n",
	       (long)(done - atoms), fd, fstat_ret, nread, close_ret);
	if (done != &atoms[3] || fd < 0 || fstat_ret || close_ret ||
	    nread != (st.st_size < (off_t)a_len ? st.st_size : (off_t)a_len)) {
		printf("not ok 1 open+fstat+read+close chain\n1..1\n");
		return 1;
	}
	printf("# %s: %.*s", path, (int)nread, buf);
	printf("ok 1 open+fstat+read+close chain read %lld bytes of %s\n1..1\n",
	       nread, path);
	return 0;
}
