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
# logs: $BUILD/logs/micro-<mode>.log. Exit status 0 only if both runs
# passed their checks (missed targets are reported, not failures).
#
# Environment (defaults in brackets):
#   BUILD    build dir [<repo>/build]
#   KERNEL   bzImage [$BUILD/kobj/arch/x86/boot/bzImage]
#   LIBTL    libthreadlet.a [$BUILD/user/libthreadlet.a]
#   MICRO    the static benchmark binary [$BUILD/tests/micro], rebuilt
#            here if older than micro.c or LIBTL
#   RESULTS  where the result files go [$BUILD/results]
#   MODES    which modes to run ["icount wall"]
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

status=0
for mode in $MODES; do
	case $mode in
	icount) flags=(--icount); append=$ICOUNT_APPEND ;;
	wall) flags=(); append=$WALL_APPEND ;;
	*) die "unknown mode $mode" ;;
	esac
	log=$BUILD/logs/micro-$mode.log
	out=$RESULTS/micro-$mode.txt
	echo "  QEMU    micro ($mode) -> $out"
	BUILD=$BUILD KERNEL=$KERNEL INITRD=$IMG/initramfs.cpio DISK=$IMG/disk.img \
		"$REPO/tests/run-qemu.sh" "${flags[@]}" --name "micro-$mode" \
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
	grep -E '^TARGET' "$out" | head -n 3 | sed "s/^/  $mode: /"
	[ "$rc" = 0 ] || { echo "micro.sh: $mode run failed (exit $rc), see $log" >&2; status=1; }
done
exit $status
