// SPDX-License-Identifier: GPL-2.0
/*
 * threadlet_on()/threadlet_off() in the 32-bit vDSO. The area has 64-bit
 * fields only, so the code is the 64-bit one, built for i386.
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
