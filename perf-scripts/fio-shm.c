// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for fio in the test guest, whose kernel has no System V
 * IPC (tinyconfig, CONFIG_SYSVIPC=n): fio keeps its job table in a shmget()
 * segment, and shmget() fails there with ENOSYS, which stops fio. Here a
 * segment is a shared anonymous mapping, so it is shared with fio's forked
 * job processes as well as its threads. Only the calls fio makes are
 * covered; the I/O path is untouched.
 */
#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/shm.h>

#define MAX_SEGS 64

static struct {
	void *addr;
	size_t size;
} segs[MAX_SEGS];

int shmget(key_t key, size_t size, int flags)
{
	(void)key;
	(void)flags;
	for (int id = 0; id < MAX_SEGS; id++) {
		if (segs[id].addr)
			continue;
		segs[id].addr = mmap(NULL, size, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (segs[id].addr == MAP_FAILED) {
			segs[id].addr = NULL;
			errno = ENOMEM;
			return -1;
		}
		segs[id].size = size;
		return id;
	}
	errno = ENOSPC;
	return -1;
}

void *shmat(int id, const void *addr, int flags)
{
	(void)addr;
	(void)flags;
	if (id < 0 || id >= MAX_SEGS || !segs[id].addr) {
		errno = EINVAL;
		return (void *)-1;
	}
	return segs[id].addr;
}

/* The mapping lives until exit: fio detaches once, at the end. */
int shmdt(const void *addr)
{
	(void)addr;
	return 0;
}

/* IPC_RMID right after shmat() is fio's normal use: nothing to do. */
int shmctl(int id, int cmd, struct shmid_ds *buf)
{
	(void)cmd;
	(void)buf;
	if (id < 0 || id >= MAX_SEGS || !segs[id].addr) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}
