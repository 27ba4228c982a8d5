// SPDX-License-Identifier: GPL-2.0
/* Instantiates the threadlet:* tracepoints (include/trace/events/threadlet.h). */
#define CREATE_TRACE_POINTS
#include <trace/events/threadlet.h>
