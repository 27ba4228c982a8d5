// SPDX-License-Identifier: GPL-2.0
/* Runner self-test: a guest test that fails must fail the run. */
#include "tl_test.h"

int main(void)
{
	tl_ok(1, "a check that passes");
	tl_ok(0, "a check that fails on purpose");
	return tl_exit();
}
