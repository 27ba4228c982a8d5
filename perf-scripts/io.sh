#!/bin/bash
# I/O comparison benchmark (perf-scripts/io.c) in QEMU. Up to four boots:
#   wall       plain TCG, 2 vCPUs: every method timed in the cached, mixed
#              (90% page-cache hits) and uncached cases; then every
#              (case, method, N) in its own process under
#                perf stat -x ';' -e task-clock,context-switches,cpu-migrations,
#                  page-faults,raw_syscalls:sys_enter,threadlet:threadlet_handoff,
#                  threadlet:threadlet_fallback
#              counting only while the method runs (per-read figures); then
#              fio's psync, posixaio, libaio and io_uring engines on the
#              same reads (cached and uncached), for the cross-check, and
#              posixaio again with libthreadlet-aio.so preloaded
#              (posixaio_tl).
#   throttled  the uncached case, perf stat and fio again, on a disk that
#              QEMU throttles ($THROTTLE), so that every uncached read waits.
#   icount 1,2 -icount shift=0,sleep=off, one vCPU, twice (a boot per case
#              each time), with no virtio disk and no input from the host
#              that varies (run-qemu.sh --icount --no-disk): the CPU time of
#              the io process (all threads) per read, in guest instructions,
#              reading a null_blk device that io fills at boot (-w), with
#              a SCHED_IDLE busy loop (nohlt.c) instead of HLT when the
#              guest idles; the two runs must agree within 1% for a figure
#              to count as deterministic.
#
# posix_aio_tl, io.c's posix_aio code on libthreadlet-aio, is a second
# build of io.c (io-tlaio, -DIO_TLAIO): the library's aio_* replace glibc's,
# so one binary cannot have both. Each boot runs it right after io, and
# its IO lines join io's.
#
# Results: $RESULTS/io-<boot>.jsonl (the records), and from them (report.py)
# io.md, io-determinism.txt and the plots io-{cached,mixed,uncached,
# throttled}.png, io-icount-{mixed,uncached}.png; io-raw.txt (the guests'
# output: IO lines, hand-off counts, perf stat CSV, fio JSON); serial logs
# $BUILD/logs/io-{wall,throttled}.log and io-ic<k>-<case>.log.
#
# Environment (defaults in brackets):
#   BUILD    build dir [<repo>/build]
#   KERNEL   bzImage [$BUILD/kobj/arch/x86/boot/bzImage]
#   LIBTL    libthreadlet.a [$BUILD/user/libthreadlet.a]
#   LIBTLAIO libthreadlet-aio.a, beside it libthreadlet-aio.so (for fio)
#            [the directory of $LIBTL]
#   RESULTS  where the result files go [$BUILD/results]
#   WALL_APPEND  extra kernel command line of the wall and throttled boots
#            [common.sh's: tsc_early_khz=<the host's TSC frequency>]
#   TIMEOUT  host timeout for each boot, seconds [2400]
#   THROTTLE QEMU -drive options of the throttled boot
#            [throttling.iops-total=1000]; empty: no throttled boot
#   WALL_RUNS  1: the wall boot [1]; 0: none
#   WALL_METHODS  the wall and throttled boots run these methods alone,
#            separated by commas (a short run) [all]
#   ICOUNT_RUNS  number of -icount boots [2]; 0: none, 1: no repeat check
#   NULLBLK_NS  completion time of the -icount boots' disk, guest ns
#            [200000]: they read the data from a memory-backed null_blk
#            device that completes each request on a guest timer, so that
#            uncached reads block and still repeat exactly
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
