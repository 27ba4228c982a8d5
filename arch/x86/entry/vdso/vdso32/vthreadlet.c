// SPDX-License-Identifier: GPL-2.0
/*
 * threadlet_on()/threadlet_off() in the 32-bit vDSO. The area has 64-bit
 * fields only, so the code is the 64-bit one, built for i386. The forms
 * with register arguments are in threadlet_regs.S.
 */
#define BUILD_VDSO32

#ifdef CONFIG_X86_64
/* As vdso32/vclock_gettime.c: a 32-bit build inside a 64-bit kernel. */
#undef CONFIG_64BIT
#undef CONFIG_X86_64
#define CONFIG_X86_32 1
#define BUILD_VDSO32_64
#endif

#include "../vthreadlet.c"

#include <linux/build_bug.h>
#include "threadlet_regs.h"

static_assert(offsetof(struct threadlet_area, flags) == TL_AREA_FLAGS);
static_assert(offsetof(struct threadlet_area, head_ip) == TL_AREA_HEAD_IP);
static_assert(offsetof(struct threadlet_area, head_sp) == TL_AREA_HEAD_SP);
static_assert(offsetof(struct threadlet_area, ahu) == TL_AREA_AHU);
static_assert(offsetof(struct threadlet_area, nr_sync) == TL_AREA_NR_SYNC);
static_assert(THREADLET_ON == TL_AREA_ON);
