// SPDX-License-Identifier: GPL-2.0
/*
 * The fallback reasons' names, which the uapi header's one list
 * (__THREADLET_FALLBACKS) gives both libthreadlet and the kernel's
 * tracepoint: threadlet_fallback_name() has a name for every reason,
 * non-empty and unique, and an error value past the last; the running
 * kernel's threadlet_fallback format lists the same name for each value
 * (TRACE_DEFINE_ENUM turned every enumerator into its number); and a real
 * fallback (no spare) is traced with the name the library gives it.
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/syscall.h>
#include "tl_test.h"
#include "tl_util.h"

#define TRACING "/sys/kernel/tracing/"
#define EVENT TRACING "events/threadlet/threadlet_fallback/"

static struct async_head_user ahu;
static unsigned long stack, stack2;
static int pfd[2];

/* The whole of a (tracefs) file, NUL-terminated, or NULL. */
static char *slurp(const char *path)
{
	size_t len = 0, size = 1 << 16;
	char *buf = malloc(size);
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((n = read(fd, buf + len, size - len - 1)) > 0) {
		len += n;
		if (len + 1 == size) {
			char *b = realloc(buf, size *= 2);

			if (!b)
				break;
			buf = b;
		}
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	int ok = fd >= 0 && write(fd, s, strlen(s)) == (ssize_t)strlen(s);

	if (fd >= 0)
		close(fd);
	return ok;
}

static void library_names(void)
{
	const char *name[THREADLET_FB_NR];
	int bad = 0, dup = 0;
	const char *p;

	for (unsigned int r = 0; r < THREADLET_FB_NR; r++) {
		errno = 4242;
		name[r] = threadlet_fallback_name(r);
		if (!name[r] || threadlet_ptr_err(name[r]) || !name[r][0] ||
		    errno != 4242) {
			tl_diag("reason %u: no name", r);
			name[r] = NULL;
			bad++;
			continue;
		}
		for (unsigned int q = 0; q < r; q++)
			if (name[q] && !strcmp(name[q], name[r])) {
				tl_diag("reasons %u and %u: both \"%s\"", q, r, name[r]);
				dup++;
			}
	}
	tl_ok(!bad, "threadlet_fallback_name: a name for each of the %d values",
	      THREADLET_FB_NR);
	tl_ok(!dup, "threadlet_fallback_name: the names are unique");
	tl_ok(name[THREADLET_FB_NONE] && !strcmp(name[THREADLET_FB_NONE], "none") &&
	      name[THREADLET_FB_NO_SPARE] &&
	      !strcmp(name[THREADLET_FB_NO_SPARE], "no_spare"),
	      "threadlet_fallback_name: \"none\" for 0, \"no_spare\" for NO_SPARE");
	errno = 4242;
	p = threadlet_fallback_name(THREADLET_FB_NR);
	tl_ok(threadlet_ptr_err(p) == -EINVAL && errno == 4242,
	      "threadlet_fallback_name(THREADLET_FB_NR): -EINVAL, errno untouched");
	tl_ok(threadlet_ptr_err(threadlet_fallback_name(UINT_MAX)) == -EINVAL,
	      "threadlet_fallback_name(UINT_MAX): -EINVAL");
}

/* The event's format: the kernel's { value, "name" } for each reason. */
static void format_names(void)
{
	char *fmt = slurp(EVENT "format"), want[64];
	int missing = 0;

	tl_ok(fmt != NULL, "the threadlet_fallback event has a format");
	if (!fmt)
		return;
	for (unsigned int r = 1; r < THREADLET_FB_NR; r++) {
		const char *name = threadlet_fallback_name(r);

		snprintf(want, sizeof(want), "{ %u, \"%s\" }", r,
			 threadlet_ptr_err(name) ? "?" : name);
		if (!strstr(fmt, want)) {
			tl_diag("format lacks %s", want);
			missing++;
		}
	}
	tl_ok(!missing, "the format names each reason as the library does");
	tl_ok(!strstr(fmt, "THREADLET_FB_"),
	      "the format has numbers, no enumerators (TRACE_DEFINE_ENUM)");
	if (missing || strstr(fmt, "THREADLET_FB_"))
		tl_diag("%s", fmt);
	free(fmt);
}

static int first;		/* the blocking threadlet's event */

static long block_on_pipe(void *data)
{
	char c;

	if (read(pfd[0], &c, 1) != 1)
		c = 0;
	return complete_threadlet_fn(data, &ahu);
}

static long short_sleep(void *data)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	return complete_threadlet_fn(data, &ahu);
}

/* A fallback for want of a spare, traced: reason=no_spare, our TID. */
static void traced_fallback(void)
{
	struct threadlet_stats st;
	char want[96], *trace;
	long r1, r2;

	stack = threadlet_stack_alloc(64 << 10);
	stack2 = threadlet_stack_alloc(64 << 10);
	if (pipe(pfd) || async_head_init(&ahu, 16, 1) || threadlet_err(stack) ||
	    threadlet_err(stack2) || !tl_wait_parked(&ahu, 1)) {
		tl_ok(0, "set up a head with a pool of one");
		return;
	}
	tl_ok(write_file(TRACING "trace", "") &&
	      write_file(EVENT "enable", "1"), "threadlet_fallback enabled");
	r1 = threadlet_exec(block_on_pipe, &first, stack, &ahu);
	r2 = threadlet_exec(short_sleep, NULL, stack2, &ahu);
	threadlet_stats(&st);
	write_file(EVENT "enable", "0");
	tl_ok(r1 == 0 && r2 == 1 && st.last_fallback == THREADLET_FB_NO_SPARE,
	      "the second threadlet fell back for want of a spare (%ld, %ld, %s)",
	      r1, r2, threadlet_fallback_name(st.last_fallback));
	trace = slurp(TRACING "trace");
	snprintf(want, sizeof(want), "threadlet_fallback: tid=%ld reason=%s",
		 (long)syscall(SYS_gettid),
		 threadlet_fallback_name(THREADLET_FB_NO_SPARE));
	tl_ok(trace && strstr(trace, want), "traced as \"%s\"", want);
	if (trace && !strstr(trace, want))
		tl_diag("%s", trace);
	free(trace);
	tl_ok(write(pfd[1], "x", 1) == 1 && tl_wait_one(&ahu) == &first,
	      "the first one completes");
	tl_ok(async_head_exit(&ahu) == 0, "async_head_exit");
}

int main(void)
{
	library_names();
	format_names();
	traced_fallback();
	return tl_exit();
}
