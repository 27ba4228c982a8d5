// SPDX-License-Identifier: GPL-2.0
/*
 * Every way of blocking that the contract lists hands the head off: the
 * head returns 0 while the blocked part still sleeps, and the event
 * arrives in the ring exactly once.
 */
#include <linux/futex.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "tl_test.h"
#include "tl_util.h"

static struct async_head_user ahu;
static unsigned long stack;

struct job {
	const char *name;
	long result;
	int done;		/* set by the threadlet when it finishes */
	void *arg;
};

static void finish(struct job *j, long result)
{
	j->result = result;
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
}

static long do_nanosleep(void *data)
{
	struct job *j = data;
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	finish(j, nanosleep(&ts, NULL));
	return complete_threadlet_fn(j, &ahu);
}

static uint32_t futex_word;

static long do_futex(void *data)
{
	struct job *j = data;

	while (!__atomic_load_n(&futex_word, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	finish(j, 0);
	return complete_threadlet_fn(j, &ahu);
}

/* Block numbers of the data file that the I/O jobs read, one per try. */
static uint64_t next_block = 1000;

static long do_disk_read(void *data)
{
	struct job *j = data;
	uint64_t buf[512], blk = (uint64_t)(uintptr_t)j->arg;
	int fd = open("/mnt/disk/data", O_RDONLY);
	long n = pread(fd, buf, sizeof(buf), blk * 4096);

	close(fd);
	finish(j, n == sizeof(buf) && buf[0] == blk && buf[511] == blk);
	return complete_threadlet_fn(j, &ahu);
}

static volatile uint64_t *map;

static long do_page_fault(void *data)
{
	struct job *j = data;
	uint64_t blk = (uint64_t)(uintptr_t)j->arg;

	finish(j, map[blk * 512] == blk);
	return complete_threadlet_fn(j, &ahu);
}

/*
 * Disk I/O sleeps only if the request is still in flight when the task
 * waits for it, and QEMU sometimes completes it first: then the threadlet
 * rightly runs in place. Try fresh, non-resident blocks until one sleeps.
 */
static long run_io(struct job *j, long (*fn)(void *))
{
	long ret = 1;

	for (int i = 0; i < 8 && ret == 1; i++) {
		if (i && !j->result)
			break;		/* ran in place with wrong bytes */
		tl_drop_caches();
		next_block += 300;	/* beyond the last one's readahead */
		j->arg = (void *)(uintptr_t)next_block;
		j->done = 0;
		ret = threadlet_exec(fn, j, stack, &ahu);
		if (ret == 1)
			tl_diag("%s: I/O finished before sleeping, try %d ran in place",
				j->name, i + 1);
	}
	return ret;
}

/*
 * Runs @fn as a threadlet and checks the head got control back first.
 * @still_blocked: the blocked part cannot have finished yet when the head
 * runs (it waits 200 ms or for the head), so check that it has not.
 */
static void expect_handoff(struct job *j, long (*fn)(void *),
			   void (*release)(void), int still_blocked)
{
	struct threadlet_stats st0, st1;
	long ret;

	threadlet_stats(&st0);
	ret = j->arg == &map ? run_io(j, fn) : threadlet_exec(fn, j, stack, &ahu);
	threadlet_stats(&st1);
	tl_ok(ret == 0, "%s: head returns 0 (ret %ld)", j->name, ret);
	if (ret != 0)
		return;		/* nothing will be posted */
	tl_ok(st1.nr_handoffs == st0.nr_handoffs + 1,
	      "%s: counted as a hand-off", j->name);
	if (still_blocked)
		tl_ok(!__atomic_load_n(&j->done, __ATOMIC_ACQUIRE),
		      "%s: head runs while the threadlet still sleeps", j->name);
	if (release)
		release();
	tl_ok(tl_wait_one(&ahu) == j && j->done, "%s: event arrives", j->name);
	tl_ok(async_ring_pop(&ahu) == NULL, "%s: exactly once", j->name);
	tl_ok(tl_wait_parked(&ahu, 2), "%s: cache-miss thread parked again",
	      j->name);
}

static void wake_futex(void)
{
	__atomic_store_n(&futex_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

int main(void)
{
	struct job sleep_job = { .name = "nanosleep" };
	struct job futex_job = { .name = "futex wait" };
	struct job disk_job = { .name = "ext4 read after drop_caches" };
	struct job fault_job = { .name = "page fault on a non-resident mmap page" };
	long long t0, t1;
	int fd;

	stack = threadlet_stack_alloc(64 << 10);
	tl_ok(async_head_init(&ahu, 16, 2) == 0, "async_head_init");

	t0 = tl_now_ns();
	expect_handoff(&sleep_job, do_nanosleep, NULL, 1);
	t1 = tl_now_ns();
	tl_ok(sleep_job.result == 0 && t1 - t0 >= 200000000LL,
	      "nanosleep: slept its 200 ms in the cache-miss thread");

	expect_handoff(&futex_job, do_futex, wake_futex, 1);
	tl_ok(futex_job.result == 0, "futex wait: woken by the head");

	tl_ok(tl_drop_caches(), "drop_caches works");
	disk_job.arg = &map;
	expect_handoff(&disk_job, do_disk_read, NULL, 0);
	tl_ok(disk_job.result == 1, "ext4 read: right bytes");

	fd = open("/mnt/disk/data", O_RDONLY);
	map = mmap(NULL, 64 << 20, PROT_READ, MAP_SHARED, fd, 0);
	tl_ok(map != MAP_FAILED, "mmap the data file");
	fault_job.arg = &map;
	expect_handoff(&fault_job, do_page_fault, NULL, 0);
	tl_ok(fault_job.result == 1, "page fault: right bytes");
	munmap((void *)map, 64 << 20);
	close(fd);

	async_head_exit(&ahu);
	threadlet_stack_free(stack);
	return tl_exit();
}
