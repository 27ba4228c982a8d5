#!/bin/sh
# Guest side of scripts/trace-io.py: writes io's data to null_blk, then
# runs its uncached N = 32 case once per method with IO_TRACE=1 (a
# getppid() before each method call, a getpgrp() after it) while the host
# logs every instruction. nohlt keeps the vCPU out of HLT, as in the
# -icount boots of perf-scripts/io.sh.
/tests/nohlt &
/tests/io -c cached -n 1 -r 1 -f /dev/nullb0 -w sync > /dev/null || echo "trace-io: io -w failed"
echo TRACE-READY
read -r _ < /dev/ttyS1
# The method names are words: split on purpose.
# shellcheck disable=SC2046
IO_TRACE=1 /tests/io -c uncached -n 32 -r 1 -f /dev/nullb0 $(cat /tests/trace-io.methods)
echo TRACE-DONE
