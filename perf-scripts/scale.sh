#!/bin/bash
# Scaling of the blocking path (perf-scripts/scale.c): hand-offs per second
# with two heads blocking continuously, on 1 and on 2 vCPUs, beside the
# futex pool measured the same way, and two getppid() loops, which share
# nothing: what the host gave 2 vCPUs in that run. Wall time under
# multi-threaded TCG (one host thread per vCPU): -icount runs the vCPUs in
# turn, so it cannot show scaling. Each vCPU count is booted RUNS times;
# the figures are medians. Results: $RESULTS/scale.txt (every boot's
# figures), scale.jsonl (the records) and report.py's scale.md; logs
# $BUILD/logs/scale-<n>-<run>.log.
# Environment [defaults]: as micro.sh; RUNS [3]; SECONDS_PER [5], the
# length of each measurement; TIMEOUT per boot [300 s].
set -uo pipefail

NAME=scale.sh
# shellcheck source=perf-scripts/common.sh
. "$(dirname "$0")/common.sh"
RUNS=${RUNS:-3}
SECS=${SECONDS_PER:-5}
TIMEOUT=${TIMEOUT:-300}
IMG=$BUILD/bench-scale
build_bench "$HERE/scale.c" "$IMG/bin/scale" && bench_image bench-scale "$IMG/bin/scale" || exit 1

raw=$RESULTS/scale.txt
: > "$raw"
status=0
# The boots alternate between 1 and 2 vCPUs: a host that gets slower or
# faster during the run then moves both medians alike.
for ((run = 1; run <= RUNS; run++)); do
	for cpus in 1 2; do
		echo "  QEMU    scale, $cpus vCPU(s), boot $run of $RUNS"
		boot "scale-$cpus-$run" "$IMG" --smp "$cpus" --no-disk --cmd \
			"/tests/scale threadlet $SECS 2 && /tests/scale futex $SECS 2 && /tests/scale syscall $SECS 2" ||
			{ echo "$NAME: boot failed, see $BUILD/logs/scale-$cpus-$run.log" >&2; status=1; }
		# <vcpus> <method> <heads> <loops/s>: one record each
		grep -a -o 'SCALE [a-z]* [0-9]* [0-9]*' "$BUILD/logs/scale-$cpus-$run.log" |
			sed "s/^SCALE /$cpus /" >> "$raw"
	done
done
python3 "$HERE/report.py" ingest scale --mode wall "$raw" > "$RESULTS/scale.jsonl" || status=1
python3 "$HERE/report.py" report --results "$RESULTS" > /dev/null || status=1
cat "$RESULTS/scale.md"
exit $status
