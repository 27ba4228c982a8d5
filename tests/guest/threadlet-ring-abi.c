// SPDX-License-Identifier: GPL-2.0
/*
 * One ring layout for 64-bit and 32-bit processes.
 *
 * struct async_head_user and the completion ring have fixed-size fields,
 * so a 32-bit and a 64-bit program read the same bytes the same way. This
 * test builds twice from this file (threadlet-ring-abi and -m32). The
 * writer registers a head whose struct and ring live in a memfd, has
 * three threads post an event each with async_thread() (the kernel writes
 * the ring and kernel_ring_idx), then runs the other build as a reader on
 * the same memfd: it must find, through its own struct definitions, the
 * same index and the same three records, and pop them.
 */
#include <sys/mman.h>
#include "safety.h"

#define NEV	3

struct shared {
	struct async_head_user ahu;
	u64 expected[NEV];
	u64 popped[NEV];
};

#define RING_OFF	4096
#define RING_N		16
#define MAP_LEN		8192

_Static_assert(sizeof(struct async_head_user) == 64 &&
	       offsetof(struct async_head_user, kernel_ring_idx) == 0 &&
	       offsetof(struct async_head_user, user_ring_idx) == 8 &&
	       offsetof(struct async_head_user, completion_ring) == 16,
	       "one async_head_user layout for 32-bit and 64-bit programs");

static struct shared *sh;
static u64 *ring;
static struct threadlet_area areas[NEV] __attribute__((aligned(128)));

struct poster {
	int i;
	long reg, ret;
};

/* Posts this thread's event, parks, and comes home when the head goes. */
static void *post(void *arg)
{
	struct poster *p = arg;
	struct threadlet_area *a = &areas[p->i];

	p->reg = syscall(__NR_threadlet_register, a, sizeof(*a), 0);
	if (!p->reg)
		p->ret = sf_park_home(a, (void *)(uintptr_t)sh->expected[p->i], &sh->ahu);
	syscall(__NR_threadlet_register, a, sizeof(*a), THREADLET_UNREGISTER);
	return NULL;
}

static const char *other_build(const char *self)
{
	size_t n = strlen(self);

	if (n > 4 && !strcmp(self + n - 4, "-m32"))
		return "/tests/threadlet-ring-abi";
	return "/tests/threadlet-ring-abi-m32";
}

/* The reader: checks and pops what the other build's writer left. */
static int reader(int fd)
{
	int bad = 0;

	sh = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED)
		return 2;
	ring = (u64 *)((char *)sh + RING_OFF);
	if (sh->ahu.kernel_ring_idx != NEV || sh->ahu.user_ring_idx != 0 ||
	    sh->ahu.completion_ring == 0 || sh->ahu.ring_size_bytes != RING_N * 8)
		bad |= 4;
	for (int i = 0; i < NEV; i++) {
		int found = 0;

		for (int j = 0; j < NEV; j++)
			found += ring[i] == sh->expected[j];
		if (found != 1)
			bad |= 8;
		sh->popped[i] = ring[i];
		ring[i] = 0;
	}
	__atomic_store_n(&sh->ahu.user_ring_idx, NEV, __ATOMIC_RELEASE);
	return bad;
}

int main(int argc, char **argv)
{
	struct poster p[NEV];
	pthread_t t[NEV];
	char fdstr[16];
	int fd, st, n = 0;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "read"))
		return reader(atoi(argv[2]));

	fd = memfd_create("ring-abi", 0);
	tl_ok(fd >= 0 && !ftruncate(fd, MAP_LEN), "memfd for the head and its ring");
	sh = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd < 0 || sh == MAP_FAILED)
		return tl_exit();
	ring = (u64 *)((char *)sh + RING_OFF);
	for (int i = 0; i < NEV; i++)
		sh->expected[i] = (uintptr_t)(0x5eed0000UL + 0x100 * i + sizeof(long));
	tl_ok(sf_register_head(&sh->ahu, ring, RING_N, NEV) == 0, "async_register on the memfd");
	for (int i = 0; i < NEV; i++) {
		p[i] = (struct poster){ .i = i, .reg = -1 };
		n += !pthread_create(&t[i], NULL, post, &p[i]);
	}
	tl_ok(n == NEV && tl_wait_parked(&sh->ahu, NEV), "%d threads posted an event each and parked",
	      NEV);
	tl_ok(sh->ahu.kernel_ring_idx == NEV, "kernel_ring_idx %llu",
	      (unsigned long long)sh->ahu.kernel_ring_idx);

	snprintf(fdstr, sizeof(fdstr), "%d", fd);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl(other_build(argv[0]), other_build(argv[0]), "read", fdstr, (char *)NULL);
		_exit(errno == ENOEXEC ? 126 : 127);
	}
	st = -1;
	if (pid > 0 && waitpid(pid, &st, 0) != pid)
		st = -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 126 && sizeof(long) == 4) {
		/* A native i386 kernel runs no 64-bit programs. */
		tl_skip_test("this kernel cannot run the 64-bit reader (ENOEXEC)");
		tl_skip_test("no pops to check");
	} else {
		tl_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "%s-bit reader (%s) found the same index and records and popped them (status %#x)",
		      sizeof(long) == 8 ? "32" : "64", other_build(argv[0]), st);
		tl_ok(sh->ahu.user_ring_idx == NEV && !ring[0] && !ring[1] && !ring[2],
		      "its pops are this process's: user_ring_idx %llu, slots zero",
		      (unsigned long long)sh->ahu.user_ring_idx);
	}
	for (int i = 0; i < NEV; i++)
		if (sh->popped[i] != sh->expected[0] && sh->popped[i] != sh->expected[1] &&
		    sh->popped[i] != sh->expected[2])
			tl_diag("record %d: %#llx", i, (unsigned long long)sh->popped[i]);

	tl_ok(sf_unregister_head(&sh->ahu) == 0, "unregister: the posters go home");
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < NEV; i++)
		tl_ok(p[i].reg == 0 && p[i].ret == 0, "poster %d: registered, home with 0 (%ld, %ld)",
		      i, p[i].reg, p[i].ret);
	return tl_exit();
}
