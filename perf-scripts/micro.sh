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
# Environment [defaults]: BUILD [<repo>/build], KERNEL, LIBTL, RESULTS
# (common.sh); MICRO [$BUILD/tests/micro], MICRO32 [$BUILD/tests/micro32;
# empty: none] on LIBTL32 [$BUILD/user32/libthreadlet.a]; KERNEL32,
# BUSYBOX32 [$BUILD/kobj-i386/arch/x86/boot/bzImage, $BUILD/i386/busybox];
# MODES ["icount wall"]; ICOUNT_RUNS [2]; ICOUNT_APPEND, WALL_APPEND (extra
# kernel command line); TIMEOUT per boot [900 s]; NULLBLK_NS [200000].
set -euo pipefail

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

build_bench "$HERE/micro.c" "$MICRO" || exit 1
MICRO32=${MICRO32-$BUILD/tests/micro32}
LIBTL32=${LIBTL32:-$BUILD/user32/libthreadlet.a}
if [ -n "$MICRO32" ]; then
	CC="$CC -m32" LIBTL=$LIBTL32 build_bench "$HERE/micro.c" "$MICRO32" || exit 1
fi
build_bench "$HERE/reads.c" "$READS" || exit 1

# A guest image of our own, holding only the benchmarks (plus busybox and
# perf): the main image and its test list stay as they are.
IMG=$BUILD/bench-micro
mkdir -p "$IMG/bin" "$RESULTS" "$BUILD/logs"
cp "$MICRO" "$IMG/bin/micro"
cp "$READS" "$IMG/bin/reads"
rm -f "$IMG/bin/micro32"
[ -z "$MICRO32" ] || cp "$MICRO32" "$IMG/bin/micro32"
echo micro > "$IMG/list"
[ ! -f "$BUILD/disk.img" ] || [ "$IMG/disk.img" -nt "$BUILD/disk.img" ] ||
	cp "$BUILD/disk.img" "$IMG/disk.img"
"$REPO/tests/mkimage.sh" "$IMG" "$IMG/bin" "$IMG/list" || exit 1

events=task-clock,context-switches,page-faults,raw_syscalls:sys_enter
events=$events,threadlet:threadlet_handoff,threadlet:threadlet_sync
# One guest command line (run-qemu.sh turns spaces into '+', so no '+' and
# no quotes here).
# reads: the -icount boots have no virtio disk; their reads go to null_blk
# (common.sh).
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
	icount) flags=(--icount --no-disk) append="$NULLBLK_APPEND $ICOUNT_APPEND"
		guest=$(guest_cmd "-w -f /dev/nullb0") ;;
	wall) flags=() append=$WALL_APPEND guest=$(guest_cmd "") ;;
	esac
	log=$BUILD/logs/micro-$run.log
	out=$RESULTS/micro-$run.txt
	echo "  QEMU    micro ($run) -> $out"
	rc=0
	BUILD=$BUILD KERNEL=$KERNEL INITRD=$IMG/initramfs.cpio DISK=$IMG/disk.img \
		"$REPO/tests/run-qemu.sh" "${flags[@]}" --name "micro-$run" \
		--timeout "$TIMEOUT" --guest-timeout "$TIMEOUT" \
		--append "$append" --cmd "$guest" > /dev/null || rc=$?
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
			sed 's/^.*\(threadlet micro-benchmark:\)/\1/' |
			sed '/^== micro32/,$d' || true
	} > "$out"
	if [ -n "$MICRO32" ]; then
		{
			echo "# threadlet micro-benchmark as a 32-bit program, mode $mode"
			sed -n 2,4p "$out"
			grep -v -e '^\[' -e '^TL-' "$log" | sed -n '/^== micro32/,$p' | sed 1d || true
		} > "$RESULTS/micro32-$run.txt"
	fi
	[ "$rc" = 0 ] || { echo "micro.sh: $run run failed (exit $rc), see $log" >&2; status=1; }
done

# The 32-bit benchmark on the native i386 kernel too, when it is built
# (make kernel-i386 image-i386): one -icount boot of micro32 alone, from
# an image of its own with the i386 busybox and the micro32 just built.
K32=${KERNEL32:-$BUILD/kobj-i386/arch/x86/boot/bzImage}
BB32=${BUSYBOX32:-$BUILD/i386/busybox}
if [ -n "$MICRO32" ] && [ -f "$K32" ] && [ -f "$BB32" ] && [[ " $runs " == *" icount "* ]]; then
	out=$RESULTS/micro32-i386-icount.txt
	echo "  QEMU    micro32 (icount, i386 kernel) -> $out"
	mkdir -p "$IMG/i386/bin"
	cp "$MICRO32" "$IMG/i386/bin/micro32"
	echo micro32 > "$IMG/i386/list"
	BUSYBOX=$BB32 NO_TOOLS=1 "$REPO/tests/mkimage.sh" "$IMG/i386" "$IMG/i386/bin" \
		"$IMG/i386/list" || exit 1
	rc=0
	BUILD=$BUILD KERNEL=$K32 INITRD=$IMG/i386/initramfs.cpio DISK=$BUILD/i386/disk.img \
		QEMU_BIN=qemu-system-i386 QEMU_CPU=max,vendor=GenuineIntel \
		"$REPO/tests/run-qemu.sh" --icount --no-disk --name micro32-i386 \
		--timeout "$TIMEOUT" --guest-timeout "$TIMEOUT" --cmd "/tests/micro32" \
		> "$IMG/i386/out.txt" 2>&1 || rc=$?
	{
		echo "# threadlet micro-benchmark as a 32-bit program on the native i386 kernel, mode icount"
		echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'), kernel $K32"
		echo "# qemu: qemu-system-i386, --icount --no-disk; run-qemu.sh exit $rc"
		grep -v -e '^\[' -e '^TL-' -e SeaBIOS -e 'Booting from' "$IMG/i386/out.txt" || true
	} > "$out"
	[ "$rc" = 0 ] || { echo "micro.sh: i386 run failed (exit $rc)" >&2; status=1; }
fi

# Records: the first micro run of each boot (micro.c's and reads.c's
# figures) and micro32's, in micro-<run>.jsonl, which replaces the records
# of the same run before it (a run without figures leaves none); then the
# report, from every run's records.
[[ " $runs " != *" icount "* ]] || rm -f "$RESULTS"/micro-icount*.jsonl
for run in $runs; do
	mode=${run%%-*} boot=${run#*-}
	[ "$boot" != "$run" ] || boot=1
	recs=$RESULTS/micro-$run.jsonl
	rm -f "$recs"
	for b in micro ${MICRO32:+micro32}; do
		f=$RESULTS/$b-$run.txt
		{ [ -s "$f" ] && python3 "$HERE/report.py" ingest "$b" --mode "$mode" --boot "$boot" "$f" >> "$recs"; } ||
			status=1
	done
done
rm -f "$RESULTS/micro32-i386-icount.jsonl"
[ ! -s "$RESULTS/micro32-i386-icount.txt" ] ||
	python3 "$HERE/report.py" ingest micro32-i386 --mode icount "$RESULTS/micro32-i386-icount.txt" \
		> "$RESULTS/micro32-i386-icount.jsonl" || status=1
python3 "$HERE/report.py" report --results "$RESULTS" || status=1
echo "  RESULTS $RESULTS/micro.md $RESULTS/micro-cost.png"
exit $status
