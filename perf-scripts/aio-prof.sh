#!/bin/bash
# make aio-profile: aio-prof.c, linked against libthreadlet-aio and against
# glibc's AIO, in one -icount boot (no disk: the file is on tmpfs).
# Output: AIOPROF lines, also in $RESULTS/aio-prof.txt.
set -uo pipefail

NAME=aio-prof.sh
# shellcheck source=perf-scripts/common.sh
. "$(dirname "$0")/common.sh"
LIBTLAIO=${LIBTLAIO:-$(dirname "$LIBTL")/libthreadlet-aio.a}
IMG=$BUILD/aio-prof
build_bench "$HERE/aio-prof.c" "$IMG/src/aio-prof-tl" "$LIBTLAIO" "$LIBTL" || exit 1
build_bench "$HERE/aio-prof.c" "$IMG/src/aio-prof-glibc" -lrt || exit 1
bench_image aio-prof "$IMG/src/aio-prof-tl" "$IMG/src/aio-prof-glibc"
out=$BUILD/logs/aio-prof.out
BUILD=$BUILD KERNEL=$KERNEL INITRD=$IMG/initramfs.cpio "$REPO/tests/run-qemu.sh" \
	--icount --no-disk --name aio-prof --timeout 1800 --guest-timeout 1800 \
	--cmd "echo libthreadlet-aio; /tests/aio-prof-tl; echo glibc; /tests/aio-prof-glibc" > "$out" 2>&1
rc=$?
grep -E '^(libthreadlet-aio|glibc|AIOPROF)' "$BUILD/logs/aio-prof.log" | tr -d '\r' | tee "$RESULTS/aio-prof.txt"
exit $rc
