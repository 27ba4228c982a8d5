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

static long do_disk_read(void *data)
{
	struct job *j = data;
	uint64_t buf[512];
	int fd = open("/mnt/disk/data", O_RDONLY);
	long n = pread(fd, buf, sizeof(buf), 1000 * 4096);

	close(fd);
	finish(j, n == sizeof(buf) && buf[0] == 1000 && buf[511] == 1000);
	return complete_threadlet_fn(j, &ahu);
}

static long do_page_fault(void *data)
{
	struct job *j = data;
	volatile uint64_t *map = j->arg;

	finish(j, map[2000 * 512] == 2000);	/* block 2000, not resident */
	return complete_threadlet_fn(j, &ahu);
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
	ret = threadlet_exec(fn, j, stack, &ahu);
	threadlet_stats(&st1);
	tl_ok(ret == 0, "%s: head returns 0 (ret %ld)", j->name, ret);
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
	void *map;
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

	tl_ok(tl_drop_caches(), "drop_caches");
	expect_handoff(&disk_job, do_disk_read, NULL, 0);
	tl_ok(disk_job.result == 1, "ext4 read: right bytes");

	fd = open("/mnt/disk/data", O_RDONLY);
	map = mmap(NULL, 64 << 20, PROT_READ, MAP_SHARED, fd, 0);
	tl_ok(map != MAP_FAILED && tl_drop_caches(), "mmap the data file, drop caches");
	fault_job.arg = map;
	expect_handoff(&fault_job, do_page_fault, NULL, 0);
	tl_ok(fault_job.result == 1, "page fault: right bytes");
	munmap(map, 64 << 20);
	close(fd);

	async_head_exit(&ahu);
	threadlet_stack_free(stack);
	return tl_exit();
}
