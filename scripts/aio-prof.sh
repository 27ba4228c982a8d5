#!/bin/bash
# make aio-profile: aio-prof.c, linked against libthreadlet-aio and against
# glibc's AIO, in one -icount boot (no disk: the file is on tmpfs).
# Output: AIOPROF lines, also in $RESULTS/aio-prof.txt.
set -uo pipefail

NAME=aio-prof.sh
# shellcheck source=perf-scripts/common.sh
. "$(dirname "$0")/../perf-scripts/common.sh"
LIBTLAIO=${LIBTLAIO:-$(dirname "$LIBTL")/libthreadlet-aio.a}
IMG=$BUILD/aio-prof
build_bench "$HERE/aio-prof.c" "$IMG/src/aio-prof-tl" "$LIBTLAIO" "$LIBTL" || exit 1
build_bench "$HERE/aio-prof.c" "$IMG/src/aio-prof-glibc" -lrt || exit 1
bench_image aio-prof "$IMG/src/aio-prof-tl" "$IMG/src/aio-prof-glibc"
TIMEOUT=1800 boot aio-prof "$IMG" --icount --no-disk \
	--cmd "echo libthreadlet-aio; /tests/aio-prof-tl; echo glibc; /tests/aio-prof-glibc"
rc=$?
guest_out "$BUILD/logs/aio-prof.log" | grep -E '^(libthreadlet-aio|glibc|AIOPROF)' |
	tee "$RESULTS/aio-prof.txt"
exit $rc
