#!/bin/bash
# Where the instructions of a blocking threadlet go: one -icount boot
# samples micro.c's "profile" and "profile_futex" loops with perf's
# cpu-clock, one sample every PERIOD guest instructions (perf takes none
# below 10,000 ns unless the guest turns its sample-rate throttling off),
# and profile-report.py writes the breakdown by function and phase. Under
# -icount a function's share of the samples is its share of the
# instructions; the instructions per iteration come from the same loops
# run without perf. Results: $RESULTS/profile.md, profile-raw.txt.
# Boots and builds as the benchmarks do (perf-scripts/common.sh).
# Environment: as micro.sh; PERIOD [10000]; TIMEOUT [900].
set -uo pipefail

NAME=profile.sh
# shellcheck source=perf-scripts/common.sh
. "$(dirname "$0")/../perf-scripts/common.sh"
MICRO=${MICRO:-$BUILD/tests/micro}
PERIOD=${PERIOD:-10000}
build_bench "$REPO/perf-scripts/micro.c" "$MICRO" || exit 1
bench_image bench-profile "$MICRO" || exit 1

# One guest command line: no '+' and no quotes (see run-qemu.sh).
m=/tests/$(basename "$MICRO")
g="$m handoff futex_handoff && $m profile profile_futex"
g="$g && echo 200000 > /proc/sys/kernel/perf_event_max_sample_rate"
g="$g && echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent"
for b in profile profile_futex; do
	g="$g && perf record -q -e cpu-clock -c $PERIOD -a -o /tmp/$b.data $m $b && echo == profile $b"
	g="$g && perf report --stdio --no-children -n --comms ${m##*/} --sort sym --percent-limit 0"
	g="$g -i /tmp/$b.data && echo == end $b"
done
echo "  QEMU    profile (icount, one sample per $PERIOD instructions) -> $RESULTS/profile.md"
boot profile "$BUILD/bench-profile" --icount --no-disk --cmd "$g" ||
	die "the guest run failed, see $BUILD/logs/profile.log"
grep -v -e '^\[' -e '^TL-' "$BUILD/logs/profile.log" | sed 's/^ *//' > "$RESULTS/profile-raw.txt"
python3 "$HERE/profile-report.py" --period "$PERIOD" "$RESULTS/profile-raw.txt" > "$RESULTS/profile.md" &&
	cat "$RESULTS/profile.md"
