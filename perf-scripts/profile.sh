#!/bin/bash
# Where the instructions of a blocking threadlet go: one -icount boot
# samples micro.c's "profile" and "profile_futex" loops with perf's
# cpu-clock, one sample every PERIOD guest instructions, and report.py profile
# writes the breakdown by function and phase. Under -icount a function's
# share of the samples is its share of the instructions; the instructions
# per iteration come from a run of the same loops without perf.
# Results: $RESULTS/profile.md, profile-raw.txt; log $BUILD/logs/profile.log.
# Environment: as micro.sh; PERIOD [500] (perf's cpu-clock takes none below
# 10,000 ns, so the guest turns off perf's sample-rate throttling); TIMEOUT.
set -uo pipefail

NAME=profile.sh
# shellcheck source=perf-scripts/common.sh
. "$(dirname "$0")/common.sh"
MICRO=${MICRO:-$BUILD/tests/micro}
PERIOD=${PERIOD:-10000}
TIMEOUT=${TIMEOUT:-900}

build_bench "$HERE/micro.c" "$MICRO" || exit 1

IMG=$BUILD/bench-profile
bench_image bench-profile "$MICRO" || exit 1

# One guest command line: no '+' and no quotes (see run-qemu.sh).
report="perf report --stdio --no-children -n --comms $(basename "$MICRO") --sort sym --percent-limit 0"
m=/tests/$(basename "$MICRO")
g="$m handoff futex_handoff && $m profile profile_futex"
g="$g && echo 200000 > /proc/sys/kernel/perf_event_max_sample_rate"
g="$g && echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent"
for b in profile profile_futex; do
	g="$g && perf record -q -e cpu-clock -c $PERIOD -a -o /tmp/$b.data $m $b"
	g="$g && echo == profile $b && $report -i /tmp/$b.data && echo == end $b"
done

log=$BUILD/logs/profile.log
raw=$RESULTS/profile-raw.txt
echo "  QEMU    profile (icount, one sample per $PERIOD instructions) -> $RESULTS/profile.md"
BUILD=$BUILD KERNEL=$KERNEL INITRD=$IMG/initramfs.cpio DISK=$BUILD/disk.img \
	"$REPO/tests/run-qemu.sh" --icount --no-disk --name profile \
	--timeout "$TIMEOUT" --guest-timeout "$TIMEOUT" --cmd "$g" > /dev/null
rc=$?
grep -v -e '^\[' -e '^TL-' "$log" | sed 's/^ *//' > "$raw"
[ "$rc" = 0 ] || { echo "$NAME: the guest run failed (exit $rc), see $log" >&2; exit 1; }
python3 "$HERE/report.py" profile --period "$PERIOD" "$raw" > "$RESULTS/profile.md" ||
	exit 1
cat "$RESULTS/profile.md"
