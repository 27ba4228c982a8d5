#!/bin/bash
# Threadlet micro-benchmark (perf-scripts/micro.c) in QEMU, in two modes:
#   icount  -icount shift=0,sleep=off: guest time counts guest instructions
#           (1 ns = 1 instruction), so the figures repeat exactly;
#   wall    plain TCG: guest time follows the host clock.
# Each boot runs the benchmark once as is, then under perf stat (the figures
# of that second run include perf's tracepoint overhead), then perf stat
# of single paths to show which of them enter the kernel.
#
# Results: $RESULTS/micro-icount.txt and $RESULTS/micro-wall.txt; serial
# logs: $BUILD/logs/micro-<mode>.log.
#
# Determinism: icount mode boots ICOUNT_RUNS times (the later runs go to
# micro-icount-<n>.txt), and the figures of the first micro run of each
# boot are compared with those of the first boot: the spread per figure,
# then "DETERMINISM ok: ..." or "DETERMINISM NOT ok: ...", in
# $RESULTS/micro-determinism.txt. Figures that wait for the
# host's disk (the cold reads) are left out: -icount does not make host I/O
# deterministic.
#
# Exit status 0 only if every run passed its checks (missed targets and a
# spread over the limit are reported, not failures).
#
# Environment (defaults in brackets):
#   BUILD    build dir [<repo>/build]
#   KERNEL   bzImage [$BUILD/kobj/arch/x86/boot/bzImage]
#   LIBTL    libthreadlet.a [$BUILD/user/libthreadlet.a]
#   MICRO    the static benchmark binary [$BUILD/tests/micro], rebuilt
#            here if older than micro.c or LIBTL
#   RESULTS  where the result files go [$BUILD/results]
#   MODES    which modes to run ["icount wall"]
#   ICOUNT_RUNS  boots in icount mode, to check determinism [2]
#   SPREAD_MAX   the largest spread, in %, that still counts as the same [1]
#   ICOUNT_APPEND, WALL_APPEND  extra kernel command line
#   TIMEOUT  host timeout per boot, seconds [900]
#
# tests/run-qemu.sh adds tsc=reliable (a fine-grained CLOCK_MONOTONIC) and,
# with --icount, boots one CPU.
set -uo pipefail

NAME=micro.sh
# shellcheck source=perf-scripts/common.sh
. "$(dirname "$0")/common.sh"
MICRO=${MICRO:-$BUILD/tests/micro}
READS=${READS:-$(dirname "$MICRO")/reads}
MODES=${MODES:-icount wall}
ICOUNT_APPEND=${ICOUNT_APPEND:-}
WALL_APPEND=${WALL_APPEND:-}
TIMEOUT=${TIMEOUT:-900}
ICOUNT_RUNS=${ICOUNT_RUNS:-2}
SPREAD_MAX=${SPREAD_MAX:-1}

build_bench "$HERE/micro.c" "$MICRO" || exit 1
build_bench "$HERE/reads.c" "$READS" || exit 1

# A guest image of our own, holding only the benchmarks (plus busybox and
# perf): the main image and its test list stay as they are.
IMG=$BUILD/bench-micro
mkdir -p "$IMG/bin" "$RESULTS" "$BUILD/logs"
cp "$MICRO" "$IMG/bin/micro"
cp "$READS" "$IMG/bin/reads"
echo micro > "$IMG/list"
[ -f "$IMG/disk.img" ] || [ ! -f "$BUILD/disk.img" ] || cp "$BUILD/disk.img" "$IMG/disk.img"
"$REPO/tests/mkimage.sh" "$IMG" "$IMG/bin" "$IMG/list" || exit 1

events=task-clock,context-switches,page-faults,raw_syscalls:sys_enter
events=$events,threadlet:threadlet_handoff,threadlet:threadlet_sync
# One guest command line (run-qemu.sh turns spaces into '+', so no '+' and
# no quotes here).
guest="/tests/micro && /tests/reads && echo == perf stat, whole run, its figures include the overhead"
guest="$guest of perf on every system call && perf stat -e $events /tests/micro"
for b in call null_vdso null_syscall getppid handoff; do
	guest="$guest && echo == perf stat, $b only && perf stat -e $events /tests/micro $b"
done

# Runs: "icount" (and "icount-2", ... up to ICOUNT_RUNS), "wall".
runs=""
for mode in $MODES; do
	case $mode in
	icount)
		runs="$runs icount"
		for ((i = 2; i <= ICOUNT_RUNS; i++)); do runs="$runs icount-$i"; done ;;
	wall) runs="$runs wall" ;;
	*) die "unknown mode $mode" ;;
	esac
done

status=0
for run in $runs; do
	mode=${run%%-*}
	case $mode in
	icount) flags=(--icount); append=$ICOUNT_APPEND ;;
	wall) flags=(); append=$WALL_APPEND ;;
	esac
	log=$BUILD/logs/micro-$run.log
	out=$RESULTS/micro-$run.txt
	echo "  QEMU    micro ($run) -> $out"
	BUILD=$BUILD KERNEL=$KERNEL INITRD=$IMG/initramfs.cpio DISK=$IMG/disk.img \
		"$REPO/tests/run-qemu.sh" "${flags[@]}" --name "micro-$run" \
		--timeout "$TIMEOUT" --guest-timeout "$TIMEOUT" \
		--append "$append" --cmd "$guest" > /dev/null
	rc=$?
	{
		echo "# threadlet micro-benchmark, mode $mode"
		echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'), kernel $KERNEL"
		echo "# qemu: $(qemu-system-x86_64 --version | head -n1)," \
			"${flags[*]:-no icount}, append: $append"
		echo "# run-qemu.sh exit $rc; serial log $log"
		# The guest's output without kernel messages, runner markers and
		# the firmware's escape sequences that precede the first line.
		grep -v -e '^\[' -e '^TL-' "$log" |
			sed -n '/threadlet micro-benchmark:/,$p' |
			sed 's/^.*\(threadlet micro-benchmark:\)/\1/'
	} > "$out"
	grep -E '^TARGET' "$out" | head -n 3 | sed "s/^/  $run: /"
	[ "$rc" = 0 ] || { echo "micro.sh: $run run failed (exit $rc), see $log" >&2; status=1; }
done

# first_run <file>: the output of the boot's first micro and reads runs,
# the ones without perf.
first_run() {
	awk '/^== perf stat/ { exit } /^threadlet micro-benchmark:/ { on = 1 } on' "$1"
}

# figures <file>: "name ns" for every figure of the first run that should
# repeat: micro's, and the cached reads (cold reads wait for host I/O).
figures() {
	first_run "$1" | awk '/^RESULT / && $2 !~ /^cold_/ { print $2, $3 }'
}

# Determinism: each later icount boot against the first.
det=$RESULTS/micro-determinism.txt
rm -f "$det"
if [[ " $runs " == *" icount-2 "* ]] && [ -s "$RESULTS/micro-icount.txt" ]; then
	{
		echo "# determinism of -icount: figures of boot 1 and boot n," \
			"spread = |a - b| / min(a, b), limit $SPREAD_MAX%"
		for ((i = 2; i <= ICOUNT_RUNS; i++)); do
			f=$RESULTS/micro-icount-$i.txt
			echo "# boot 1 vs boot $i ($f)"
			awk -v boot="$i" -v max="$SPREAD_MAX" '
				# boot n first (NR == FNR), then boot 1 in micro.c order
				NR == FNR { b[$1] = $2; next }
				{ a = $2; n++
				  if (!($1 in b) || a <= 0 || b[$1] <= 0) {
					s = "missing"; bad = bad " " $1
				  } else {
					d = a - b[$1]; if (d < 0) d = -d
					m = a < b[$1] ? a : b[$1]
					s = sprintf("%.2f%%", 100 * d / m)
					if (100 * d / m > max) bad = bad " " $1
				  }
				  printf "SPREAD %s %s %s %s %s\n", boot, $1, a, ($1 in b) ? b[$1] : "missing", s
				  delete b[$1] }
				END { for (k in b) { bad = bad " " k; n++
					printf "SPREAD %s %s missing %s missing\n", boot, k, b[k] }
				      if (n == 0) print "VERDICT " boot " none"
				      else if (bad == "") print "VERDICT " boot " ok"
				      else print "VERDICT " boot bad }' \
				<(figures "$f") <(figures "$RESULTS/micro-icount.txt")
		done
	} > "$det"
	echo "  determinism (boot 1 vs later boots, -icount):"
	awk '/^SPREAD/ { printf "    boot 1 vs %s  %-22s %12s %12s  %s\n", $2, $3, $4, $5, $6 }' "$det"
	# One verdict line for all boots.
	awk -v max="$SPREAD_MAX" '
		/^VERDICT/ { if ($3 == "none") none = 1
			     else for (i = 3; i <= NF; i++)
				if ($i != "ok" && !($i in bad)) { bad[$i] = 1; list = list " " $i } }
		END { if (none) print "DETERMINISM NOT ok: a run has no figures"
		      else if (list == "") print "DETERMINISM ok: all figures within " max "%"
		      else print "DETERMINISM NOT ok: over " max "%:" list }' "$det" | tee -a "$det"
fi

exit $status
