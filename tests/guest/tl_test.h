/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal TAP helpers for the guest tests, in the spirit of kselftest.h:
 * every check prints one "ok"/"not ok" line, tl_exit() prints the plan and
 * turns the counts into the exit status the guest's /init reports.
 */
#ifndef TL_TEST_H
#define TL_TEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tl_pass, tl_fail, tl_skip;

static inline void tl_ok(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void tl_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", cond ? "" : "not ", tl_pass + tl_fail + tl_skip + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (cond)
		tl_pass++;
	else
		tl_fail++;
}

static inline void tl_skip_test(const char *why)
{
	printf("ok %d # SKIP %s\n", tl_pass + tl_fail + tl_skip + 1, why);
	fflush(stdout);
	tl_skip++;
}

/* Check that a call failed with the expected errno ("-1/errno" style). */
#define tl_errno(expr, err, name) do {					\
	errno = 0;							\
	long __r = (long)(expr);					\
	int __e = errno;						\
	tl_ok(__r == -1 && __e == (err), "%s: -1/%s (got %ld/%s)",	\
	      name, strerrorname_np(err), __r,				\
	      __e ? strerrorname_np(__e) : "0");			\
} while (0)

/* Check a "-errno" style return value. */
#define tl_neg(expr, err, name) do {					\
	long __r = (long)(expr);					\
	tl_ok(__r == -(err), "%s: -%s (got %ld)", name,		\
	      strerrorname_np(err), __r);				\
} while (0)

static inline void tl_diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void tl_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline int tl_exit(void)
{
	printf("1..%d\n", tl_pass + tl_fail + tl_skip);
	printf("# %d passed, %d failed, %d skipped\n", tl_pass, tl_fail, tl_skip);
	fflush(stdout);
	return tl_fail ? 1 : 0;
}

#endif /* TL_TEST_H */
