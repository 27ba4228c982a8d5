#!/bin/bash
# The Open POSIX Test Suite's 72 AIO tests, from the peer conformance suite
# in ../shared/conformance/posix-aio (used in place, never copied into this
# repository), in one boot of the test kernel: against libthreadlet-aio
# linked in, on ext4 (/mnt/disk, the virtual disk) and on tmpfs (/tmp);
# against glibc's own AIO on tmpfs beside them; and dynamically linked
# against glibc with libthreadlet-aio.so interposed by LD_PRELOAD. In the
# same boot Debian's fio (posixaio engine, unmodified) runs through
# LD_PRELOAD on ext4: random 4 KiB writes then verify=crc32c, at iodepth 1,
# 8 and 32, through the page cache and with O_DIRECT (every request a disk
# request). fio runs without the suite too.
#
# Prints a "PASS ..." or "FAIL ..." line per run for tests/check.sh to
# count: libthreadlet-aio must fail none and pass at least MIN, by default
# as many as glibc's AIO passes in the same boot; glibc must fail none.
# Which tests do not pass, and why POSIX allows it: docs/posix-aio.md.
# Without the suite it prints one "SKIP posix-aio: ..." line and exits 0.
#
# Environment: BUILD, KERNEL (as run-qemu.sh), POSIX_AIO_SUITE (the suite's
# directory), MIN.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
B=${BUILD:-$REPO/build}
SUITE=${POSIX_AIO_SUITE:-$REPO/../shared/conformance/posix-aio}
W=$B/posix-aio

suite=1
if [ ! -x "$SUITE/run.sh" ]; then
	echo "SKIP posix-aio: no conformance suite at $SUITE (../shared absent)"
	suite=0
fi

rm -rf "$W"
mkdir -p "$W/root/posix-aio" "$B/logs"
build() {	# build <dir> [AIO_LINK] [STATIC]
	AIO_LINK=${2:-} STATIC=${3-1} "$SUITE/run.sh" --build-only "$W/root/posix-aio/$1" \
		> "$W/build-$1.log" 2>&1 ||
		{ echo "FAIL posix-aio: building the suite ($1), see $W/build-$1.log"; exit 1; }
}
if [ $suite = 1 ]; then
	build threadlet "$B/user/libthreadlet-aio.a $B/user/libthreadlet.a"
	build glibc
	build dynamic "" ""
fi
cp "$B/user/libthreadlet-aio.so" "$W/root/posix-aio/"
# fio keeps its job table in System V shm, which the test kernel lacks.
${CC:-gcc} -O2 -Wall -Wextra -Werror -shared -fPIC -o "$W/root/posix-aio/fio-shm.so" \
	"$REPO/perf-scripts/fio-shm.c" || { echo "FAIL posix-aio: building fio-shm.so"; exit 1; }

# A second cpio after the test image's: the kernel unpacks both.
(cd "$W/root" && find posix-aio | cpio -o -H newc --quiet) > "$W/extra.cpio"
cat "$B/initramfs.cpio" "$W/extra.cpio" > "$W/initramfs.cpio"

runner=/posix-aio/threadlet/posix-aio-run.sh
cmd=""
if [ $suite = 1 ]; then
	cmd="cd /mnt/disk; env TMPDIR=/mnt/disk SCRATCH=/mnt/disk VERBOSE=1 sh $runner;"
	cmd="$cmd cd /tmp; env VERBOSE=1 sh $runner;"
	cmd="$cmd env VERBOSE=1 sh /posix-aio/glibc/posix-aio-run.sh;"
	cmd="$cmd env AIO_PRELOAD=/posix-aio/libthreadlet-aio.so VERBOSE=1 sh /posix-aio/dynamic/posix-aio-run.sh;"
fi
# fio: each run bounded by timeout(1), so a hang is a failed run, not a
# guest timeout. --direct=1: O_DIRECT, the verify pass reads the disk too.
pre=/posix-aio/libthreadlet-aio.so:/posix-aio/fio-shm.so
cmd="$cmd cd /mnt/disk; for m in 0 1; do for d in 1 8 32; do"
cmd="$cmd env LD_PRELOAD=$pre timeout 300 fio --name=v\$m-\$d --filename=/mnt/disk/fio.dat"
cmd="$cmd --ioengine=posixaio --rw=randwrite --bs=4k --size=8m --iodepth=\$d --direct=\$m"
cmd="$cmd --thread --verify=crc32c --do_verify=1 --verify_fatal=1 --minimal;"
cmd="$cmd echo fio-rc=\$?; done; done"
# The test image and the suite's three builds, unpacked, outgrow 1 GiB.
QEMU_MEM=2G INITRD=$W/initramfs.cpio "$HERE/run-qemu.sh" --name posix-aio --timeout 1500 \
	--guest-timeout 1200 --cmd "$cmd" > "$W/run.out" 2>&1
rc=$?
log=$B/logs/posix-aio.log
mapfile -t sums < <(grep -E '^posix-aio: [0-9]+ passed' "$log")

judge() {	# judge <index> <what> <min passed>
	local s=${sums[$1]:-} p f
	p=$(echo "$s" | sed -n 's/^posix-aio: \([0-9]*\) passed.*/\1/p')
	f=$(echo "$s" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
	if [ -n "$p" ] && [ "$f" = 0 ] && [ "$p" -ge "$3" ]; then
		echo "PASS posix-aio, $2: $s"
	else
		echo "FAIL posix-aio, $2: ${s:-no summary} (want >= $3 passed, 0 failed; $log)"
	fi
}
glibc=$(echo "${sums[2]:-}" | sed -n 's/^posix-aio: \([0-9]*\) passed.*/\1/p')
MIN=${MIN:-${glibc:-65}}
if [ $suite = 1 ]; then
	judge 0 "libthreadlet-aio on ext4" "$MIN"
	judge 1 "libthreadlet-aio on tmpfs" "$MIN"
	judge 2 "glibc's AIO on tmpfs, same boot" 0
	judge 3 "libthreadlet-aio.so by LD_PRELOAD over glibc, tmpfs" "$MIN"
fi
# fio: six runs, each exit 0 with its terse error field 0.
fio_ok=$(grep -c '^fio-rc=0' "$log")
fio_clean=$(grep -o 'fio-3[.0-9]*;v[0-9]*-[0-9]*;[0-9]*;[0-9]*' "$log" | awk -F';' '$4 == 0' | wc -l)
if [ "$fio_ok" = 6 ] && [ "$fio_clean" = 6 ]; then
	echo "PASS posix-aio, fio posixaio by LD_PRELOAD, verify=crc32c, iodepth 1, 8, 32, cached and O_DIRECT, ext4"
else
	echo "FAIL posix-aio, fio posixaio by LD_PRELOAD: $fio_ok of 6 exited 0, $fio_clean of 6 without error ($log)"
fi
for t in TIMEOUT CRASH; do
	n=$(grep -c "^$t " "$log")
	[ "$n" = 0 ] || echo "# posix-aio: $n test(s) $t, see $log"
done
[ "$rc" -lt 2 ] || echo "FAIL posix-aio: the boot had a kernel report, crash or timeout (exit $rc)"
exit 0
