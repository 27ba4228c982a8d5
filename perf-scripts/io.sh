#!/bin/bash
# I/O comparison (io.c) in QEMU. Up to three kinds of boots:
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
# The guest side is io-run.sh. Results: $RESULTS/io-<boot>.jsonl (records),
# then report.py's io.md, io-determinism.txt and plots; io-raw.txt (the
# guests' output); serial logs $BUILD/logs/io-*.log.
#
# Environment [defaults]: BUILD, KERNEL, LIBTL, RESULTS, NULLBLK_NS
# (common.sh); LIBTLAIO [beside LIBTL, with its .so]; WALL_APPEND; TIMEOUT
# per boot [2400 s]; THROTTLE, the throttled boot's -drive options
# [throttling.iops-total=1000; empty: no such boot]; WALL_RUNS [1; 0: none];
# WALL_METHODS, methods separated by commas for a short run [all];
# ICOUNT_RUNS [2; 0: none, 1: no repeat check].
set -uo pipefail

NAME=io.sh
# shellcheck source=perf-scripts/common.sh
. "$(dirname "$0")/common.sh"
TIMEOUT=${TIMEOUT:-2400}
THROTTLE=${THROTTLE-throttling.iops-total=1000}
ICOUNT_RUNS=${ICOUNT_RUNS:-2}
LIBTLAIO=${LIBTLAIO:-$(dirname "$LIBTL")/libthreadlet-aio.a}
{ [ -f "$LIBTLAIO" ] && [ -f "${LIBTLAIO%.a}.so" ]; } || die "no library at $LIBTLAIO or ${LIBTLAIO%.a}.so (make user)"

IMG=$BUILD/bench-io
build_bench "$HERE/io.c" "$IMG/bin/io" -luring -laio -lrt || exit 1
build_bench "$HERE/io.c" "$IMG/bin/io-tlaio" -DIO_TLAIO "$LIBTLAIO" "$LIBTL" -luring -laio -lrt || exit 1
build_bench "$HERE/nohlt.c" "$IMG/bin/nohlt" || exit 1
# fio needs System V shared memory, which the guest kernel lacks.
SHIM=$IMG/bin/fio-shm.so
if [ ! -f "$SHIM" ] || [ "$HERE/fio-shm.c" -nt "$SHIM" ]; then
	echo "  CC      $SHIM"
	$CC -O2 -Wall -Wextra -Werror -shared -fPIC -o "$SHIM" "$HERE/fio-shm.c" || exit 1
fi
cp "${LIBTLAIO%.a}.so" "$IMG/bin/libthreadlet-aio.so"
cp "$HERE/io-run.sh" "$IMG/bin/io-run.sh"
bench_image bench-io "$IMG/bin/io" || exit 1

# QEMU lets a burst of a tenth of a second's worth of I/O through before it
# throttles: io reads that many blocks, untimed, before each throttled run
# (-p), and fio starts counting after a ramp of 200 ms.
th_iops=$(echo "$THROTTLE" | sed -n 's/.*iops-total=\([0-9]*\).*/\1/p')
th_bps=$(echo "$THROTTLE" | sed -n 's/.*bps-total=\([0-9]*\).*/\1/p')
PRIME=$(( ${th_iops:-0} / 10 + ${th_bps:-0} / 40960 + 10 ))
[ "$PRIME" -le 6000 ] || die "THROTTLE '$THROTTLE' allows too large a burst to fill before each run"

# io_boot <name> <guest command> [run-qemu.sh options]: one boot; its guest
# output goes to $IMG/out.<name>, run-qemu.sh's exit status to $IMG/rc.<name>.
io_boot() {
	local name=$1 cmd=$2
	shift 2
	boot "io-$name" "$IMG" --cmd "$cmd" "$@"
	echo $? > "$IMG/rc.$name"
	guest_out "$BUILD/logs/io-$name.log" | sed -n '/^# clocksource/,$p' > "$IMG/out.$name"
}

rm -f "$IMG"/rc.* "$IMG"/out.*
if [ "${WALL_RUNS:-1}" = 1 ]; then
	echo "  QEMU    io (wall) -> $RESULTS/io.md"
	io_boot wall "/tests/io-run.sh wall 0 ${WALL_METHODS:-}" --append "$WALL_APPEND"
fi
# The throttled boot runs on its own, before the -icount boots: its
# figures are host time, and the host has two cores.
if [ -n "$THROTTLE" ]; then
	echo "  QEMU    io (throttled: $THROTTLE)"
	io_boot throttled "/tests/io-run.sh throttled $PRIME ${WALL_METHODS:-}" --append "$WALL_APPEND" \
		--drive-opts "$THROTTLE"
fi
# Each case gets its own -icount boots, so that every case starts from the
# state a boot leaves and its figures do not depend on what ran before it.
# Boot ic<k>-<case>; their output and status are then gathered into
# out.icount-<k> and rc.icount-<k>.
for c in cached mixed uncached; do
	pids=()
	for k in $(seq 1 "$ICOUNT_RUNS"); do
		echo "  QEMU    io (icount $k, $c)"
		io_boot "ic$k-$c" "/tests/io-run.sh icount $c" --icount --no-disk \
			--append "$NULLBLK_APPEND" &
		pids+=($!)
	done
	[ ${#pids[@]} = 0 ] || wait "${pids[@]}"
done
for k in $(seq 1 "$ICOUNT_RUNS"); do
	cat "$IMG"/out.ic"$k"-{cached,mixed,uncached} > "$IMG/out.icount-$k"
	r=$(sort -u "$IMG"/rc.ic"$k"-{cached,mixed,uncached})
	[ "$r" = 0 ] && echo 0 > "$IMG/rc.icount-$k" || echo 1 > "$IMG/rc.icount-$k"
done

# Records: each boot's figures (the throttled boot's as case "throttled")
# in io-<boot>.jsonl, replacing that boot's records before; the boots'
# output in one raw file (the throttled boot's uncached case renamed
# "throttled", the -icount boots' IO lines "IC<k>"); then the report.
date=$(date -u '+%Y-%m-%d %H:%M UTC')
raw=$RESULTS/io-raw.txt
rc=0
[ "$ICOUNT_RUNS" = 0 ] || rm -f "$RESULTS"/io-icount-*.jsonl
echo "# I/O comparison, $date; kernel $KERNEL; $(qemu-system-x86_64 --version | head -n1)" > "$raw"
for b in wall throttled $(seq -f icount-%g 1 "$ICOUNT_RUNS"); do
	[ -f "$IMG/rc.$b" ] || continue
	[ "$(cat "$IMG/rc.$b")" = 0 ] || rc=1
	echo "## boot $b: run-qemu.sh exit $(cat "$IMG/rc.$b"); serial logs $BUILD/logs/io-*.log" >> "$raw"
	case $b in
	wall) args=(--mode wall) sed=(-e '') ;;
	throttled) args=(--mode wall --case throttled)
		sed=(-e 's/^\(IO\|IO-perf\|FIO\|#\|#-perf\) uncached /\1 throttled /'
		     -e 's/^\(PERF\|FIOPERF\);uncached;/\1;throttled;/') ;;
	*) args=(--mode icount --boot "${b#icount-}")
		sed=(-e "s/^IO /IC${b#icount-} /" -e "s/^# \(cached\|mixed\|uncached\) /#IC${b#icount-} \1 /") ;;
	esac
	sed "${sed[@]}" "$IMG/out.$b" >> "$raw"
	python3 "$HERE/report.py" ingest io "${args[@]}" --date "$date" "$IMG/out.$b" \
		> "$RESULTS/io-$b.jsonl" || rc=1
done
python3 "$HERE/report.py" report --results "$RESULTS" || rc=1
cs=$(sed -n 's/^# clocksource \([^ ]*\).*/\1/p' "$raw" | head -n1)
[ "$cs" = tsc ] || echo "$NAME: warning: guest clocksource '$cs', not tsc (TSC calibration failed at boot?): times are quantised to a tick" >&2
echo "  RESULTS $RESULTS/io.md"
[ "$rc" = 0 ] || { echo "$NAME: a boot failed, see $BUILD/logs/io-*.log and $raw" >&2; exit 1; }
