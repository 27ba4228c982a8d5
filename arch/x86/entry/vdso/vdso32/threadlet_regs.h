/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct threadlet_area as threadlet_regs.S sees it; vthreadlet.c checks
 * these against the uapi header. The 64-bit fields are little-endian:
 * their low halves are at these offsets.
 */
#ifndef _VDSO32_THREADLET_REGS_H
#define _VDSO32_THREADLET_REGS_H

#define TL_AREA_FLAGS	0
#define TL_AREA_HEAD_IP	8
#define TL_AREA_HEAD_SP	16
#define TL_AREA_AHU	24
#define TL_AREA_NR_SYNC	64
#define TL_AREA_ON	1	/* THREADLET_ON */

#endif /* _VDSO32_THREADLET_REGS_H */
