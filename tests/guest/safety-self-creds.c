// SPDX-License-Identifier: GPL-2.0
/*
 * Calls that set the caller's own credentials or audit identity after a
 * copy from user memory that may sleep (found by a helper's review):
 *
 *   - add_key() to KEY_SPEC_THREAD_KEYRING creates the thread keyring,
 *     which commit_creds() installs on current;
 *   - a write of /proc/thread-self/loginuid sets current's login ID.
 *
 * Handed off in that sleep, the call finished in the task that by then
 * carried a pool thread's identity: the pool thread got the keyring or
 * the login ID, and the head that asked did not. Both now sleep in place
 * (THREADLET_FB_CALL), like the calls in safety-security-call. Their
 * arguments are in a page on disk, evicted, so the copy sleeps.
 *
 * Expected: the threadlet runs in place with FB_CALL, and afterwards the
 * head has the thread keyring (with the key), or the login ID.
 */
#include <linux/keyctl.h>
#include "safety.h"

static struct async_head_user ahu;
static char *payload;		/* a page on disk: the key, then "1234" */
static volatile long rc;
static int lfd;

struct out {
	int skip, slept, in_place, ok;
	long rc;
	unsigned int last_fallback;
};

static struct out *o;

static long key_fn(void *data)
{
	rc = syscall(__NR_add_key, "user", "tl-self-creds", payload, 16,
		     KEY_SPEC_THREAD_KEYRING);
	return complete_threadlet_fn(data, &ahu);
}

static long loginuid_fn(void *data)
{
	rc = write(lfd, payload + 64, 4);
	return complete_threadlet_fn(data, &ahu);
}

static int on_disk(const char *path)
{
	static char buf[68];

	memcpy(buf, "0123456789abcdef", 16);
	memcpy(buf + 64, "1234", 4);
	payload = sf_page_on_disk(path, buf, sizeof(buf));
	return payload ? 0 : -1;
}

static long loginuid_now(void)
{
	char buf[32] = { 0 };
	int fd = open("/proc/thread-self/loginuid", O_RDONLY);
	long n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	return n > 0 ? atol(buf) : -1;
}

/* One try in a process of its own: the keyring or login ID stays. */
static void run(void *arg)
{
	int which = *(int *)arg / 100;
	unsigned long stack = threadlet_stack_alloc(64 << 10);
	unsigned long long fb0;
	char path[64];
	long ret;
	int ev;

	snprintf(path, sizeof(path), "/mnt/disk/tl-creds.%d", getpid());
	if (threadlet_err(stack) || async_head_init(&ahu, 16, 2) || on_disk(path)) {
		o->skip = 1;
		return;
	}
	unlink(path);
	if (which == 1)
		lfd = open("/proc/thread-self/loginuid", O_WRONLY);
	fb0 = __threadlet_area.nr_fallbacks;
	ret = threadlet_exec(which ? loginuid_fn : key_fn, &ev, stack, &ahu);
	if (ret == 0)
		sf_wait_event(&ahu, 10000);
	o->slept = ret == 0 || __threadlet_area.nr_fallbacks > fb0;
	o->in_place = ret != 0;
	o->last_fallback = __threadlet_area.last_fallback;
	o->rc = rc;
	if (which == 0)
		o->ok = rc > 0 && syscall(__NR_keyctl, KEYCTL_SEARCH, KEY_SPEC_THREAD_KEYRING,
					  "user", "tl-self-creds", 0) == rc;
	else
		o->ok = rc == 4 && loginuid_now() == 1234;
	async_head_exit(&ahu);
}

static void check(int which, const char *what)
{
	int status = 0, i;

	for (i = which * 100; i < which * 100 + 8; i++) {
		memset(o, 0, sizeof(*o));
		status = sf_child(run, &i, 60);
		/*
		 * A try counts once the copy slept and fell back with FB_CALL;
		 * a wake that comes just before the sleep is counted otherwise.
		 */
		if (o->skip || !sf_exited0(status) ||
		    (o->slept && (o->last_fallback == THREADLET_FB_CALL || !o->in_place)))
			break;
	}
	if (o->skip) {
		sf_skip("no /mnt/disk");
		return;
	}
	sf_ok(sf_exited0(status) && o->slept, "%s: the copy slept (try %d): child %s", what,
	      i - which * 100 + 1, sf_status_str(status));
	sf_ok(o->in_place && o->last_fallback == THREADLET_FB_CALL,
	      "%s: not handed off (FB_CALL; last fallback %u)", what, o->last_fallback);
	sf_ok(o->ok, "%s: the head that asked has it (%ld)", what, o->rc);
}

int main(void)
{
	sf_init();
	o = sf_shared(sizeof(*o));
	check(0, "add_key() to the thread keyring");
	check(1, "write of /proc/thread-self/loginuid");
	return tl_exit();
}
