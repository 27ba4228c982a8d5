#!/bin/bash
# Threadlet micro-benchmark (micro.c, with reads.c) in QEMU, in the modes of
# MODES: icount (-icount shift=0,sleep=off: 1 ns = 1 guest instruction, so
# figures repeat exactly; ICOUNT_RUNS boots, reading null_blk instead of the
# virtio disk) and wall (plain TCG). Each boot runs micro, then micro under
# perf stat (its figures include perf's overhead) and per path, then micro32
# (the same as a 32-bit program); if the i386 kernel is built, one more
# -icount boot runs micro32 on it. These boots halt when idle (no nohlt.c):
# a second runnable task adds CFS work to every wakeup micro.c times.
# Results in $RESULTS: micro-<run>.txt (guest output), micro-<run>.jsonl
# (records), then report.py's micro.md, micro-cost.png, determinism.
# Exit status 0 only if every run passed its checks.
#
# Environment [defaults]: BUILD, KERNEL, LIBTL, RESULTS, TIMEOUT per boot
# [900 s], NULLBLK_NS (common.sh); MICRO [$BUILD/tests/micro], MICRO32
# [$BUILD/tests/micro32; empty: none] on LIBTL32 [$BUILD/user32/libthreadlet.a];
# KERNEL32, BUSYBOX32 [$BUILD/kobj-i386/arch/x86/boot/bzImage,
# $BUILD/i386/busybox]; MODES ["icount wall"]; ICOUNT_RUNS [2];
# ICOUNT_APPEND, WALL_APPEND (extra kernel command line).
set -euo pipefail

NAME=micro.sh
# shellcheck source=perf-scripts/common.sh
. "$(dirname "$0")/common.sh"
MICRO=${MICRO:-$BUILD/tests/micro}
READS=${READS:-$(dirname "$MICRO")/reads}
MICRO32=${MICRO32-$BUILD/tests/micro32}
ICOUNT_RUNS=${ICOUNT_RUNS:-2}

build_bench "$HERE/micro.c" "$MICRO"
[ -z "$MICRO32" ] ||
	CC="$CC -m32" LIBTL=${LIBTL32:-$BUILD/user32/libthreadlet.a} build_bench "$HERE/micro.c" "$MICRO32"
build_bench "$HERE/reads.c" "$READS"
# The image: micro first (its list), reads and micro32 beside it.
IMG=$BUILD/bench-micro
mkdir -p "$IMG/bin"
cp "$READS" "$IMG/bin/reads"
rm -f "$IMG/bin/micro32"
[ -z "$MICRO32" ] || cp "$MICRO32" "$IMG/bin/micro32"
cp "$MICRO" "$IMG/bin/micro"
bench_image bench-micro "$IMG/bin/micro"

# One guest command line (run-qemu.sh turns spaces into '+', so no '+' and
# no quotes here). reads: the -icount boots have no virtio disk; their
# reads go to null_blk (common.sh).
events=task-clock,context-switches,page-faults,raw_syscalls:sys_enter
events=$events,threadlet:threadlet_handoff,threadlet:threadlet_sync
guest_cmd() { # <reads options>
	local g b
	g="/tests/micro && /tests/reads $1 && echo == perf stat, whole run, its figures include the overhead"
	g="$g of perf on every system call && perf stat -e $events /tests/micro"
	for b in call null_vdso null_syscall getppid syslet_null handoff futex_handoff; do
		g="$g && echo == perf stat, $b only && perf stat -e $events /tests/micro $b"
	done
	[ -z "$MICRO32" ] || g="$g && echo == micro32, the same as a 32-bit program && /tests/micro32"
	echo "$g"
}

# Runs: "icount" (and "icount-2", ... up to ICOUNT_RUNS), "wall".
runs=""
for mode in ${MODES:-icount wall}; do
	case $mode in
	icount) runs="$runs icount"
		for ((i = 2; i <= ICOUNT_RUNS; i++)); do runs="$runs icount-$i"; done ;;
	wall) runs="$runs wall" ;;
	*) die "unknown mode $mode" ;;
	esac
done

# header <title> <kernel> <qemu> <exit status>: a guest output's first lines
header() {
	echo "# threadlet micro-benchmark$1"
	echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'), kernel $2"
	echo "# qemu: $3; run-qemu.sh exit $4"
}

status=0
for run in $runs; do
	mode=${run%%-*} boot=${run#*-}
	[ "$boot" != "$run" ] || boot=1
	if [ "$mode" = icount ]; then
		flags=(--icount --no-disk) append="$NULLBLK_APPEND ${ICOUNT_APPEND:-}"
		guest=$(guest_cmd "-w -f /dev/nullb0")
	else
		flags=() append=$WALL_APPEND guest=$(guest_cmd "")
	fi
	out=$RESULTS/micro-$run.txt
	echo "  QEMU    micro ($run) -> $out"
	rc=0
	boot "micro-$run" "$IMG" "${flags[@]}" --append "$append" --cmd "$guest" || rc=$?
	qemu="$(qemu-system-x86_64 --version | head -n1), ${flags[*]:-no icount}, append: $append"
	{
		header ", mode $mode" "$KERNEL" "$qemu" "$rc"
		guest_out "$BUILD/logs/micro-$run.log" | sed -n '/threadlet micro-benchmark:/,$p' |
			sed 's/^.*\(threadlet micro-benchmark:\)/\1/' || true
	} > "$out.all"
	sed '/^== micro32/,$d' "$out.all" > "$out"
	if [ -n "$MICRO32" ]; then
		{
			header " as a 32-bit program, mode $mode" "$KERNEL" "$qemu" "$rc"
			sed '1,/^== micro32/d' "$out.all"
		} > "$RESULTS/micro32-$run.txt"
	fi
	rm -f "$out.all"
	[ "$rc" = 0 ] || { echo "$NAME: $run run failed (exit $rc), see $BUILD/logs/micro-$run.log" >&2; status=1; }
	# Records: the boot's first micro run (micro.c's and reads.c's figures)
	# and micro32's, replacing the run's records before (none if no figures).
	recs=$RESULTS/micro-$run.jsonl
	[ "$run" != icount ] || rm -f "$RESULTS"/micro-icount*.jsonl
	rm -f "$recs"
	for b in micro ${MICRO32:+micro32}; do
		python3 "$HERE/report.py" ingest "$b" --mode "$mode" --boot "$boot" \
			"$RESULTS/$b-$run.txt" >> "$recs" || status=1
	done
done

# The 32-bit benchmark on the native i386 kernel too, when it is built
# (make kernel-i386 image-i386): one -icount boot of micro32 alone, from
# an image of its own with the i386 busybox and the micro32 just built.
K32=${KERNEL32:-$BUILD/kobj-i386/arch/x86/boot/bzImage}
BB32=${BUSYBOX32:-$BUILD/i386/busybox}
out=$RESULTS/micro32-i386-icount.txt
rm -f "${out%.txt}.jsonl"
if [ -n "$MICRO32" ] && [ -f "$K32" ] && [ -f "$BB32" ] && [[ " $runs " == *" icount "* ]]; then
	echo "  QEMU    micro32 (icount, i386 kernel) -> $out"
	mkdir -p "$IMG/i386/bin"
	cp "$MICRO32" "$IMG/i386/bin/micro32"
	BUSYBOX=$BB32 NO_TOOLS=1 bench_image bench-micro/i386 "$IMG/i386/bin/micro32"
	rc=0
	KERNEL=$K32 QEMU_BIN=qemu-system-i386 QEMU_CPU=max,vendor=GenuineIntel \
		boot micro32-i386 "$IMG/i386" --icount --no-disk --cmd /tests/micro32 || rc=$?
	{
		header " as a 32-bit program on the native i386 kernel, mode icount" "$K32" \
			"qemu-system-i386, --icount --no-disk" "$rc"
		guest_out "$BUILD/logs/micro32-i386.log" | grep -v -e SeaBIOS -e 'Booting from' || true
	} > "$out"
	[ "$rc" = 0 ] || { echo "$NAME: i386 run failed (exit $rc)" >&2; status=1; }
fi
[ ! -s "$out" ] || python3 "$HERE/report.py" ingest micro32-i386 --mode icount "$out" \
	> "${out%.txt}.jsonl" || status=1
python3 "$HERE/report.py" report --results "$RESULTS" || status=1
echo "  RESULTS $RESULTS/micro.md $RESULTS/micro-cost.png"
exit $status
