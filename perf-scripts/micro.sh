#!/bin/bash
# Threadlet micro-benchmark (perf-scripts/micro.c) in QEMU, in two modes:
#   icount  -icount shift=0,sleep=off: guest time counts guest instructions
#           (1 ns = 1 instruction), so the figures repeat exactly;
#   wall    plain TCG: guest time follows the host clock.
# Each boot runs the benchmark once as is, then under perf stat (the figures
# of that second run include perf's tracepoint overhead), then perf stat
# of single paths to show which of them enter the kernel.
#
# Each boot ends with the same benchmark built as a 32-bit program
# (micro32, on the 32-bit library): $RESULTS/micro32-<mode>.txt; and if
# the native i386 kernel and its image are built, one more -icount boot
# runs micro32 there: $RESULTS/micro32-i386-icount.txt.
#
# Results: $RESULTS/micro-icount.txt and $RESULTS/micro-wall.txt; serial
# logs: $BUILD/logs/micro-<mode>.log. Then, from whichever of them exist:
# $RESULTS/micro.md, every figure as cost per operation and as a ratio to
# its baseline (named by micro.c), and $RESULTS/micro-cost.png, the costs
# side by side on a log scale.
#
# Determinism: icount mode boots ICOUNT_RUNS times (the later runs go to
# micro-icount-<n>.txt), and the figures of the first micro run of each
# boot are compared with those of the first boot: the spread per figure,
# then "DETERMINISM ok: ..." or "DETERMINISM NOT ok: ...", in
# $RESULTS/micro-determinism.txt and in micro.md. The -icount boots read
# from null_blk instead of the virtio disk, so their cold reads repeat too.
# Unlike io.sh's, these boots do halt (no nohlt.c): they idle only around
# the cold reads, have repeated to the instruction in every run, and a
# second runnable task, even at SCHED_IDLE, adds CFS bookkeeping to every
# wakeup that micro.c times (futex_handoff: +175 instructions, 5.6%).
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
#   MICRO32  the same, -m32, on LIBTL32 [$BUILD/tests/micro32]; empty: none
#   LIBTL32  the 32-bit libthreadlet.a [$BUILD/user32/libthreadlet.a]
#   RESULTS  where the result files go [$BUILD/results]
#   MODES    which modes to run ["icount wall"]
#   ICOUNT_RUNS  boots in icount mode, to check determinism [2]
#   SPREAD_MAX   the largest spread, in %, that still counts as the same [1]
#   ICOUNT_APPEND, WALL_APPEND  extra kernel command line
#   TIMEOUT  host timeout per boot, seconds [900]
#   NULLBLK_NS  completion time of null_blk requests in the -icount boots,
#            guest ns [200000]
#
# tests/run-qemu.sh adds tsc=reliable (a fine-grained CLOCK_MONOTONIC) and,
# with --icount, boots one CPU with no input that varies between boots.
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
			sed 's/^.*\(threadlet micro-benchmark:\)/\1/' |
			sed '/^== micro32/,$d'
	} > "$out"
	if [ -n "$MICRO32" ]; then
		{
			echo "# threadlet micro-benchmark as a 32-bit program, mode $mode"
			sed -n 2,4p "$out"
			grep -v -e '^\[' -e '^TL-' "$log" | sed -n '/^== micro32/,$p' | sed 1d
		} > "$RESULTS/micro32-$run.txt"
		grep -E '^TARGET' "$RESULTS/micro32-$run.txt" | head -n 3 | sed "s/^/  $run (32-bit): /"
	fi
	grep -E '^TARGET' "$out" | head -n 3 | sed "s/^/  $run: /"
	[ "$rc" = 0 ] || { echo "micro.sh: $run run failed (exit $rc), see $log" >&2; status=1; }
done

# The 32-bit benchmark on the native i386 kernel too, when it is built
# (make kernel-i386 image-i386): one -icount boot of micro32 alone, from
# an image of its own with the i386 busybox and the micro32 just built.
K32=$BUILD/kobj-i386/arch/x86/boot/bzImage
BB32=$BUILD/i386/busybox
if [ -n "$MICRO32" ] && [ -f "$K32" ] && [ -f "$BB32" ] && [[ " $runs " == *" icount "* ]]; then
	out=$RESULTS/micro32-i386-icount.txt
	echo "  QEMU    micro32 (icount, i386 kernel) -> $out"
	mkdir -p "$IMG/i386/bin"
	cp "$MICRO32" "$IMG/i386/bin/micro32"
	echo micro32 > "$IMG/i386/list"
	BUSYBOX=$BB32 NO_TOOLS=1 "$REPO/tests/mkimage.sh" "$IMG/i386" "$IMG/i386/bin" \
		"$IMG/i386/list" || exit 1
	BUILD=$BUILD KERNEL=$K32 INITRD=$IMG/i386/initramfs.cpio DISK=$BUILD/i386/disk.img \
		QEMU_BIN=qemu-system-i386 QEMU_CPU=max,vendor=GenuineIntel \
		"$REPO/tests/run-qemu.sh" --icount --no-disk --name micro32-i386 \
		--timeout "$TIMEOUT" --guest-timeout "$TIMEOUT" --cmd "/tests/micro32" \
		> "$IMG/i386/out.txt" 2>&1
	rc=$?
	{
		echo "# threadlet micro-benchmark as a 32-bit program on the native i386 kernel, mode icount"
		echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'), kernel $K32"
		echo "# qemu: qemu-system-i386, --icount --no-disk; run-qemu.sh exit $rc"
		grep -v -e '^\[' -e '^TL-' -e SeaBIOS -e 'Booting from' "$IMG/i386/out.txt"
	} > "$out"
	[ "$rc" = 0 ] || { echo "micro.sh: i386 run failed (exit $rc)" >&2; status=1; }
fi

# first_run <file>: the output of the boot's first micro and reads runs,
# the ones without perf.
first_run() {
	awk '/^== perf stat/ { exit } /^threadlet micro-benchmark:/ { on = 1 } on' "$1"
}

# figures <file>: "name ns" for every figure of the first run: micro's and
# the reads (the cold ones wait for null_blk, in guest time).
figures() {
	first_run "$1" | awk '/^RESULT / { print $2, $3 }'
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

# The table and the plot, from the runs that exist: the first icount boot,
# the later ones (their figure and spread), the wall run.
md=$RESULTS/micro.md
main=$RESULTS/micro-icount.txt
[[ " $runs " == *" icount "* ]] || main=$RESULTS/micro-wall.txt
cols=""
for run in $runs; do
	[ -s "$RESULTS/micro-$run.txt" ] && first_run "$RESULTS/micro-$run.txt" |
		grep -q '^RESULT ' && cols="$cols $run"
done
if [ -n "$cols" ]; then
	# rows: "name<TAB>iters<TAB>what" in micro.c's order, from its table
	rows=$(first_run "$main" | awk '
		/^RESULT / { res[$2] = 1 }
		/^  [a-z_]+ +[0-9.]+ +[0-9]+ / { n++; name[n] = $1; it[n] = $3
			w = ""; from = $4 == "-" ? 5 : 7
			for (i = from; i <= NF; i++) w = w (w == "" ? "" : " ") $i
			what[n] = w }
		END { for (i = 1; i <= n; i++) if (name[i] in res)
			printf "%s\t%s\t%s\n", name[i], it[i], what[i] }')
	dat=$IMG/cost.dat
	{
		echo "# Threadlet micro-benchmark"
		echo
		echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(qemu-system-x86_64 --version | head -n1),"
		echo "kernel $KERNEL, library $LIBTL. Columns per run:"
		for run in $cols; do
			case $run in
			icount) echo "- **icount**: \`-icount shift=0,sleep=off\`, 1 vCPU: 1 ns = 1 guest instruction;" ;;
			icount-*) echo "- **${run}**: the same, another boot (spread = |a - b| / min(a, b) against boot 1);" ;;
			wall) echo "- **wall**: plain TCG, 2 vCPUs, guest time follows the host clock (noisy: compare within the run);" ;;
			esac
		done
		echo
		echo "Each figure is the mean cost of one operation over *iters* iterations"
		echo "after a warm-up, from the first run of the boot (without perf). *x base*"
		echo "is the figure divided by its baseline's figure from the same run; the"
		echo "baseline is named in the *baseline* column. Raw output: micro-<run>.txt."
		echo
		hdr="| operation | what it measures | iters | baseline |"
		sep="| --- | --- | ---: | --- |"
		for run in $cols; do
			case $run in
			icount-*) hdr="$hdr $run ns/op | spread |"; sep="$sep ---: | ---: |" ;;
			*) hdr="$hdr $run ns/op | $run x base |"; sep="$sep ---: | ---: |" ;;
			esac
		done
		echo "$hdr"
		echo "$sep"
		: > "$dat"
		while IFS=$'\t' read -r name iters what; do
			base=$(first_run "$main" | awk -v n="$name" '$1 == "BASELINE" && $2 == n { print $3 }')
			line="| $name | $what | $iters | ${base:--} |"
			datl=$name
			a=$(first_run "$RESULTS/micro-icount.txt" 2>/dev/null | awk -v n="$name" '$1 == "RESULT" && $2 == n { print $3 }')
			for run in $cols; do
				f=$RESULTS/micro-$run.txt
				v=$(first_run "$f" | awk -v n="$name" '$1 == "RESULT" && $2 == n { print $3 }')
				r=$(first_run "$f" | awk -v n="$name" '$1 == "BASELINE" && $2 == n { print $4 }')
				case $run in
				icount-*)
					s=$(awk -v a="${a:-0}" -v b="${v:-0}" 'BEGIN {
						if (a <= 0 || b <= 0) { print "-"; exit }
						d = a - b; if (d < 0) d = -d
						printf "%.2f%%", 100 * d / (a < b ? a : b) }')
					line="$line ${v:--} | $s |" ;;
				*)
					line="$line ${v:--} | ${r:--} |"
					datl="$datl ${v:--}" ;;
				esac
			done
			echo "$line"
			echo "$datl" >> "$dat"
		done <<< "$rows"
		echo
		echo "Ratios and targets (first run of each boot):"
		echo
		for run in $cols; do
			first_run "$RESULTS/micro-$run.txt" | grep -E '^(RATIO|TARGET) ' |
				sed "s/^/    $run: /"
		done
		if [ -s "$det" ]; then
			echo
			echo "Determinism of -icount (all figures of the first run;"
			echo "micro-determinism.txt):"
			echo
			grep '^DETERMINISM' "$det" | sed 's/^/    /'
		fi
		echo
		echo "![cost per operation](micro-cost.png)"
	} > "$md"

	# One cluster per operation, one bar per mode (not the later icount boots).
	i=2
	plots=""
	for run in $cols; do
		case $run in icount-*) continue ;; esac
		plots="$plots${plots:+, }'$dat' using $i:xtic(1) title '$run'"
		i=$((i + 1))
	done
	gnuplot <<GP || echo "micro.sh: gnuplot failed" >&2
set terminal pngcairo size 1100,650 font ',10' noenhanced
set output '$RESULTS/micro-cost.png'
set title 'threadlet micro-benchmark: cost per operation (icount: 1 ns = 1 guest instruction)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set datafile missing '-'
set logscale y 10
set ylabel 'ns per operation (log scale)'
set xtics rotate by -35 scale 0
set grid ytics mytics
set key top left
set bmargin 8
plot $plots
GP
	echo "  RESULTS $md $RESULTS/micro-cost.png"
fi
exit $status
