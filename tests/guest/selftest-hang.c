// SPDX-License-Identifier: GPL-2.0
/* Runner self-test: a guest that never finishes must fail on the timeout. */
#include <unistd.h>
#include "tl_test.h"

int main(void)
{
	tl_diag("sleeping forever");
	for (;;)
		pause();
}
