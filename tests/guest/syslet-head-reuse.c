// SPDX-License-Identifier: GPL-2.0
/*
 * A syslet chain that went async on head A ends after A was unregistered
 * and a head B was registered at the same address.
 *
 * After ASYNC_UNREGISTER returns, nothing more is written for A: a chain
 * that completes later goes home without posting, and the application may
 * free (and reuse) the async_head_user and the ring. async_exec() holds no
 * reference on its head across the chain and looked it up again by address
 * at the end, so it posted A's final atom into B's ring, and its thread
 * parked in B's pool.
 *
 * Expected: B's ring stays empty, B's pool gets no thread, and the atom's
 * own result is stored.
 */
#include "safety.h"

static struct async_head_user ahu __attribute__((aligned(64)));

static void run(void *arg)
{
	static struct syslet_uatom at[1];
	static long long r0 = 12345;
	static unsigned long long a_fd, a_buf, a_len = 1;
	static char buf[8];
	static uint64_t ring_b[16] __attribute__((aligned(8)));
	struct syslet_uatom *done;
	long parked;
	int p[2], i;

	(void)arg;
	if (pipe(p) || async_head_init_pool(&ahu, 16, 2, 2)) {
		sf_ok(0, "a pipe and head A with 2 threads");
		return;
	}
	for (i = 0; i < 2000 && async_head_parked(&ahu) < 2; i++)
		usleep(1000);
	a_fd = p[0];
	a_buf = (uintptr_t)buf;
	syslet_atom_init(&at[0], SYS_read, 0, &r0, NULL, 3, &a_fd, &a_buf, &a_len);
	done = async_exec(at, &ahu);
	sf_ok(!done, "a read of an empty pipe went async on A (%p)", (void *)done);
	if (done)
		return;
	sf_ok(!syscall(__NR_async_register, &ahu, sizeof(ahu), ASYNC_UNREGISTER),
	      "A unregistered");

	/* The memory reused: head B at the same address, its own ring. */
	memset(&ahu, 0, sizeof(ahu));
	ahu.completion_ring = (uintptr_t)ring_b;
	ahu.ring_size_bytes = sizeof(ring_b);
	ahu.max_cachemiss_threads = 4;
	sf_ok(!syscall(__NR_async_register, &ahu, sizeof(ahu), 0),
	      "B registered at A's address");

	sf_ok(write(p[1], "x", 1) == 1, "the chain's byte written");
	for (i = 0; i < 5000 && __atomic_load_n(&r0, __ATOMIC_ACQUIRE) == 12345; i++)
		usleep(1000);
	usleep(200000);		/* a post would come after the result */
	parked = syscall(__NR_async_register, &ahu, sizeof(ahu), ASYNC_QUERY_PARKED);
	sf_ok(r0 == 1, "the read atom stored its result (%lld)", r0);
	sf_ok(__atomic_load_n(&ahu.kernel_ring_idx, __ATOMIC_ACQUIRE) == 0 && !ring_b[0],
	      "nothing posted into B's ring (index %llu, slot %#llx)",
	      (unsigned long long)ahu.kernel_ring_idx, (unsigned long long)ring_b[0]);
	sf_ok(parked == 0, "no thread parked in B's pool (%ld)", parked);
	syscall(__NR_async_register, &ahu, sizeof(ahu), ASYNC_UNREGISTER);
}

int main(void)
{
	int status;

	sf_init();
	status = sf_child(run, NULL, 60);
	sf_child_ok(status, "a chain of an unregistered head posts nowhere");
	return tl_exit();
}
