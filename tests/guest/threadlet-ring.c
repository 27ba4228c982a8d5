// SPDX-License-Identifier: GPL-2.0
/*
 * A full completion ring makes completers wait; no event is dropped or
 * posted twice, and popping lets the waiters go on. A waiting completer
 * still takes its signals: glibc's setuid() signals every thread and waits
 * for each, and must not wait for the ring to drain. That holds for a
 * threadlet's completer (async_thread() starts again after the handler)
 * and for a syslet's (it takes the signal at its home frame and posts the
 * completion when it parks again).
 */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "tl_test.h"
#include "tl_util.h"

#define NR	6

static struct async_head_user ahu;
static int pfd[2];
static int finished;

static long wait_pipe(void *data)
{
	char c;

	if (read(pfd[0], &c, 1) == 1)
		__atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
	return complete_threadlet_fn(data, &ahu);
}

static int setuid_done;

static void *do_setuid(void *arg)
{
	(void)arg;
	if (setuid(getuid()) == 0)
		__atomic_store_n(&setuid_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * While the ring is full and completers wait, setuid() in another thread
 * (glibc signals every thread, the completers' identities included, and
 * waits for all) must finish within 3 s, with nothing posted meanwhile.
 */
static void check_setuid_while_full(const char *who)
{
	unsigned long long idx = ahu.kernel_ring_idx;
	pthread_t th;
	int i;

	setuid_done = 0;
	if (pthread_create(&th, NULL, do_setuid, NULL)) {
		tl_ok(0, "%s: start the setuid() thread", who);
		return;
	}
	for (i = 0; i < 3000 && !__atomic_load_n(&setuid_done, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	tl_ok(__atomic_load_n(&setuid_done, __ATOMIC_ACQUIRE),
	      "%s: setuid() finished in %d ms while completers wait for the ring", who, i);
	tl_ok(ahu.kernel_ring_idx == idx, "%s: no completion posted meanwhile (%llu)", who,
	      ahu.kernel_ring_idx);
	/* If setuid() hangs, draining below lets it finish. */
	pthread_detach(th);
}

/*
 * Pops NR events, each one of the NR objects of @size bytes at @base, and
 * checks that each arrives exactly once.
 */
static void drain(const char *who, const void *base, size_t size)
{
	int seen[NR] = { 0 }, got = 0, bad = 0;

	while (got + bad < NR) {
		const char *ev = async_ring_pop(&ahu);
		size_t off = (size_t)(ev - (const char *)base);

		if (!ev) {
			if (async_wait(1, ahu.user_ring_idx, &ahu) < 0)
				break;
			continue;
		}
		if (ev < (const char *)base || off % size || off / size >= NR ||
		    seen[off / size]++)
			bad++;
		else
			got++;
	}
	tl_ok(got == NR && bad == 0, "%s: all %d events arrive, none twice or foreign (%d)",
	      who, got, bad);
	tl_ok(async_ring_pop(&ahu) == NULL && tl_wait_parked(&ahu, NR),
	      "%s: ring empty, every thread parked again", who);
}

static void wait_full(const char *who)
{
	for (int i = 0; i < 2000 && !(ahu.flags & ASYNC_HEAD_RING_WAITERS); i++)
		usleep(1000);
	usleep(100000);
	tl_ok(ahu.kernel_ring_idx - ahu.user_ring_idx == 2 &&
	      (ahu.flags & ASYNC_HEAD_RING_WAITERS),
	      "%s: ring full after 2 events, completers waiting (flag set)", who);
}

static void threadlets(void)
{
	static int ids[NR];
	unsigned long stacks[NR];
	int async = 0;

	for (int i = 0; i < NR; i++) {
		ids[i] = i;
		stacks[i] = threadlet_stack_alloc(32 << 10);
		async += threadlet_exec(wait_pipe, &ids[i], stacks[i], &ahu) == 0;
	}
	tl_ok(async == NR, "%d threadlets blocked", async);
	tl_ok(write(pfd[1], "abcdef", NR) == NR, "release them all");
	for (int i = 0; i < 2000 && __atomic_load_n(&finished, __ATOMIC_ACQUIRE) < NR; i++)
		usleep(1000);
	wait_full("threadlets");
	check_setuid_while_full("threadlets");
	drain("threadlets", ids, sizeof(ids[0]));
	for (int i = 0; i < NR; i++)
		threadlet_stack_free(stacks[i]);
}

static void syslets(void)
{
	static struct syslet_uatom at[NR];
	static long long rets[NR];
	static char bufs[NR];
	unsigned long long a_fd = (unsigned long long)pfd[0], a_one = 1;
	unsigned long long a_buf[NR];
	int async = 0;

	for (int i = 0; i < NR; i++) {
		a_buf[i] = (unsigned long)&bufs[i];
		syslet_atom_init(&at[i], SYS_read, 0, &rets[i], NULL, 3, &a_fd, &a_buf[i], &a_one);
	}
	for (int i = 0; i < NR; i++) {
		async += async_exec(&at[i], &ahu) == NULL;
	}
	tl_ok(async == NR, "%d syslets blocked", async);
	tl_ok(write(pfd[1], "abcdef", NR) == NR, "release them all");
	wait_full("syslets");
	check_setuid_while_full("syslets");

	drain("syslets", at, sizeof(at[0]));
	for (int i = 0; i < NR; i++)
		async -= rets[i] == 1;
	tl_ok(async == 0, "syslets: every read atom returned 1");
}

int main(void)
{
	tl_ok(pipe(pfd) == 0 && async_head_init(&ahu, 2, NR) == 0,
	      "a ring of 2 entries, a pool of %d", NR);
	threadlets();
	syslets();
	async_head_exit(&ahu);
	return tl_exit();
}
