/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
#ifndef TL_INTERNAL_H
#define TL_INTERNAL_H

#include <threadlet.h>

#define TL_HIDDEN __attribute__((visibility("hidden")))

/* threadlet_area.lib_flags: this identity is a pool (cache-miss) thread. */
#define TL_LIB_CACHEMISS	(1U << 0)

typedef long (*tl_on_fn)(struct threadlet_area *, unsigned long,
			 unsigned long, void *);
typedef long (*tl_off_fn)(struct threadlet_area *);

TL_HIDDEN void *tl_vdso_sym(const char *name);

/* switch_x86_64.asm */
TL_HIDDEN long tl_switch_run(long (*fn)(void *), void *data,
			     unsigned long stack_top,
			     struct async_head_user *ahu,
			     struct threadlet_area *area, tl_on_fn on);
TL_HIDDEN long tl_park_home(struct threadlet_area *area,
			    struct async_head_user *ahu);
TL_HIDDEN void tl_go_home(struct threadlet_area *area, long ret)
	__attribute__((noreturn));
TL_HIDDEN void tl_fn_returned(long ret, void *data,
			      struct async_head_user *ahu);

#endif /* TL_INTERNAL_H */
