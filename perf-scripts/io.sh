#!/bin/bash
# I/O comparison (io.c) in QEMU. Up to four kinds of boots:
#   wall       plain TCG, 2 vCPUs: every method in the cached, mixed and
#              uncached cases; then each (case, method, N) in its own process
#              under perf stat, counting only while the method runs; then
#              fio's engines on the same reads, and posixaio with
#              libthreadlet-aio.so preloaded (posixaio_tl).
#   throttled  the uncached case, perf stat and fio on a disk QEMU throttles.
#   icount k   -icount shift=0,sleep=off, one vCPU, a boot per case, with no
#              virtio disk: io reads a null_blk device it fills at boot (-w),
#              and a SCHED_IDLE busy loop (nohlt.c) replaces HLT.
# posix_aio_tl is a second build of io.c (io-tlaio, -DIO_TLAIO) on
# libthreadlet-aio, whose aio_* replace glibc's; each boot runs it after io.
# Results: $RESULTS/io-<boot>.jsonl (records), then report.py's io.md,
# io-determinism.txt and plots; io-raw.txt (the guests' output); serial
# logs $BUILD/logs/io-*.log.
#
# Environment [defaults]: BUILD, KERNEL, LIBTL, RESULTS (common.sh);
# LIBTLAIO [beside LIBTL, with its .so]; WALL_APPEND; TIMEOUT per boot
# [2400 s]; THROTTLE, the throttled boot's -drive options
# [throttling.iops-total=1000; empty: no such boot]; WALL_RUNS [1; 0: none];
# WALL_METHODS, methods separated by commas for a short run [all];
# ICOUNT_RUNS [2; 0: none, 1: no repeat check]; NULLBLK_NS [200000].
set -uo pipefail

NAME=io.sh
# shellcheck source=perf-scripts/common.sh
. "$(dirname "$0")/common.sh"
TIMEOUT=${TIMEOUT:-2400}
THROTTLE=${THROTTLE-throttling.iops-total=1000}
ICOUNT_RUNS=${ICOUNT_RUNS:-2}
WALL_RUNS=${WALL_RUNS:-1}
LIBTLAIO=${LIBTLAIO:-$(dirname "$LIBTL")/libthreadlet-aio.a}
{ [ -f "$LIBTLAIO" ] && [ -f "${LIBTLAIO%.a}.so" ]; } || die "no library at $LIBTLAIO or ${LIBTLAIO%.a}.so (make user)"

IMG=$BUILD/bench-io
BIN=$IMG/bin/io
mkdir -p "$IMG/bin" "$RESULTS" "$BUILD/logs"
build_bench "$HERE/io.c" "$BIN" -luring -laio -lrt || exit 1
build_bench "$HERE/io.c" "$IMG/bin/io-tlaio" -DIO_TLAIO "$LIBTLAIO" "$LIBTL" -luring -laio -lrt || exit 1
cp "${LIBTLAIO%.a}.so" "$IMG/bin/libthreadlet-aio.so"
build_bench "$HERE/nohlt.c" "$IMG/bin/nohlt" || exit 1
# fio needs System V shared memory, which the guest kernel lacks.
SHIM=$IMG/bin/fio-shm.so
if [ ! -f "$SHIM" ] || [ "$HERE/fio-shm.c" -nt "$SHIM" ]; then
	echo "  CC      $SHIM"
	$CC -O2 -Wall -Wextra -Werror -shared -fPIC -o "$SHIM" "$HERE/fio-shm.c" || exit 1
fi

# QEMU lets a burst of a tenth of a second's worth of I/O through before it
# throttles: io reads that many blocks, untimed, before each throttled run
# (-p), and fio starts counting after a ramp of 200 ms.
th_iops=$(echo "$THROTTLE" | sed -n 's/.*iops-total=\([0-9]*\).*/\1/p')
th_bps=$(echo "$THROTTLE" | sed -n 's/.*bps-total=\([0-9]*\).*/\1/p')
PRIME=$(( ${th_iops:-0} / 10 + ${th_bps:-0} / 40960 + 10 ))
[ "$PRIME" -le 6000 ] || die "THROTTLE '$THROTTLE' allows too large a burst to fill before each run"

cp "$HERE/io-run.sh" "$IMG/bin/io-run.sh"
echo io > "$IMG/list"
[ -f "$IMG/disk.img" ] || [ ! -f "$BUILD/disk.img" ] || cp "$BUILD/disk.img" "$IMG/disk.img"
"$REPO/tests/mkimage.sh" "$IMG" "$IMG/bin" "$IMG/list" || exit 1

# boot <name> <guest command> [run-qemu.sh options]: one boot; its guest
# output goes to $IMG/out.<name>, run-qemu.sh's exit status to
# $IMG/rc.<name>.
boot() {
	local name=$1 cmd=$2 log=$BUILD/logs/io-$1.log
	shift 2
	BUILD=$BUILD KERNEL=$KERNEL INITRD=$IMG/initramfs.cpio DISK=$IMG/disk.img \
		"$REPO/tests/run-qemu.sh" --name "io-$name" --log "$log" \
		--timeout "$TIMEOUT" --guest-timeout "$TIMEOUT" --cmd "$cmd" "$@" > /dev/null
	echo $? > "$IMG/rc.$name"
	tr -d '\r' < "$log" | grep -v -e '^\[' -e '^TL-' | sed 's/^.*\x1b\[2J//' |
		sed -n '/^# clocksource/,$p' > "$IMG/out.$name"
}

rm -f "$IMG"/rc.* "$IMG"/out.*
if [ "$WALL_RUNS" = 1 ]; then
	echo "  QEMU    io (wall) -> $RESULTS/io.md"
	boot wall "/tests/io-run.sh wall 0 ${WALL_METHODS:-}" --append "$WALL_APPEND"
fi
# The throttled boot runs on its own, before the -icount pairs: its
# figures are host time, and the host has two cores.
if [ -n "$THROTTLE" ]; then
	echo "  QEMU    io (throttled: $THROTTLE)"
	boot throttled "/tests/io-run.sh throttled $PRIME ${WALL_METHODS:-}" --append "$WALL_APPEND" \
		--drive-opts "$THROTTLE"
fi
# Each case gets its own -icount boots, so that every case starts from the
# state a boot leaves and a case's figures do not depend on what ran
# before it in the boot.
# Boot ic<k>-<case>; its output and status are then gathered into
# out.icount-<k> and rc.icount-<k>.
for c in cached mixed uncached; do
	pids=()
	for k in $(seq 1 "$ICOUNT_RUNS"); do
		echo "  QEMU    io (icount $k, $c)"
		boot "ic$k-$c" "/tests/io-run.sh icount $c" --icount --no-disk \
			--append "$NULLBLK_APPEND" &
		pids+=($!)
	done
	[ ${#pids[@]} = 0 ] || wait "${pids[@]}"
done
for k in $(seq 1 "$ICOUNT_RUNS"); do
	r=0
	for c in cached mixed uncached; do
		cat "$IMG/out.ic$k-$c"
		[ "$(cat "$IMG/rc.ic$k-$c")" = 0 ] || r=1
	done > "$IMG/out.icount-$k"
	echo $r > "$IMG/rc.icount-$k"
done

# One raw file; the throttled boot's uncached case is renamed "throttled",
# the -icount boots' IO lines "IC<k>".
raw=$RESULTS/io-raw.txt
rc=0
{
	echo "# I/O comparison, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "# kernel $KERNEL; $(qemu-system-x86_64 --version | head -n1)"
	for f in "$IMG"/rc.wall "$IMG"/rc.throttled "$IMG"/rc.icount-*; do
		[ -f "$f" ] || continue
		b=${f##*/rc.}
		r=$(cat "$f")
		[ "$r" = 0 ] || rc=1
		if [ "${b#icount-}" != "$b" ]; then
			echo "## boot $b: run-qemu.sh exit $r; serial logs $BUILD/logs/io-ic${b#icount-}-{cached,mixed,uncached}.log"
		else
			echo "## boot $b: run-qemu.sh exit $r; serial log $BUILD/logs/io-$b.log"
		fi
		case $b in
		wall) cat "$IMG/out.$b" ;;
		throttled) sed -e 's/^\(IO\|IO-perf\|FIO\|#\|#-perf\) uncached /\1 throttled /' \
			-e 's/^\(PERF\|FIOPERF\);uncached;/\1;throttled;/' "$IMG/out.$b" ;;
		icount-*) sed -e "s/^IO /IC${b#icount-} /" -e "s/^# \(cached\|mixed\|uncached\) /#IC${b#icount-} \1 /" "$IMG/out.$b" ;;
		esac
	done
} > "$raw"

# Records: each boot's figures (the throttled boot's as case "throttled")
# in io-<boot>.jsonl, which replaces the records of that boot before it;
# then the report, from every boot's records.
date=$(date -u '+%Y-%m-%d %H:%M UTC')
[ "$ICOUNT_RUNS" = 0 ] || rm -f "$RESULTS"/io-icount-*.jsonl
for f in "$IMG"/out.wall "$IMG"/out.throttled "$IMG"/out.icount-*; do
	[ -f "$f" ] || continue
	b=${f##*/out.}
	case $b in
	wall) args=(--mode wall) ;;
	throttled) args=(--mode wall --case throttled) ;;
	*) args=(--mode icount --boot "${b#icount-}") ;;
	esac
	rm -f "$RESULTS/io-$b.jsonl"
	python3 "$HERE/report.py" ingest io "${args[@]}" --date "$date" "$f" > "$RESULTS/io-$b.jsonl" || rc=1
done
python3 "$HERE/report.py" report --results "$RESULTS" || rc=1
cs=$(sed -n 's/^# clocksource \([^ ]*\).*/\1/p' "$raw" | head -n1)
[ "$cs" = tsc ] || echo "io.sh: warning: guest clocksource '$cs', not tsc (TSC calibration failed at boot?): times are quantised to a tick" >&2
echo "  RESULTS $RESULTS/io.md"
[ "$rc" = 0 ] || { echo "io.sh: a boot failed, see $BUILD/logs/io-*.log and $raw" >&2; exit 1; }
