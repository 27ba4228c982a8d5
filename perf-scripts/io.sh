#!/bin/bash
# I/O comparison benchmark (perf-scripts/io.c) in QEMU, wall-clock TCG
# (no -icount: idle time spent waiting for the disk must count).
# The guest runs io once with every method (the timings in the table), then
# each method again in its own process under
#   perf stat -x ';' -e task-clock,context-switches,cpu-migrations,page-faults,
#        raw_syscalls:sys_enter,threadlet:threadlet_handoff,threadlet:threadlet_fallback
# (that run's timings, with perf's tracepoint overhead on every system call,
# are kept as IO-perf lines in the raw log). Each process first reads the
# whole 64 MiB file to warm the cache: that is in the perf counts too.
#
# Results: $RESULTS/io.md (table), $RESULTS/io-cached.png and
# $RESULTS/io-uncached.png (reads/s vs concurrency), $RESULTS/io-raw.txt
# (the guest's output: IO lines, hand-off counts, perf stat CSV);
# serial log $BUILD/logs/io-wall.log.
#
# Environment (defaults in brackets):
#   BUILD    build dir [<repo>/build]
#   KERNEL   bzImage [$BUILD/kobj/arch/x86/boot/bzImage]
#   LIBTL    libthreadlet.a [$BUILD/user/libthreadlet.a]
#   RESULTS  where the result files go [$BUILD/results]
#   WALL_APPEND  extra kernel command line
#   TIMEOUT  host timeout for the boot, seconds [1200]
set -uo pipefail

NAME=io.sh
# shellcheck source=perf-scripts/common.sh
. "$(dirname "$0")/common.sh"
WALL_APPEND=${WALL_APPEND:-}
TIMEOUT=${TIMEOUT:-1200}

IMG=$BUILD/bench-io
BIN=$IMG/bin/io
mkdir -p "$IMG/bin" "$RESULTS" "$BUILD/logs"
build_bench "$HERE/io.c" "$BIN" -luring -laio -lrt || exit 1

# The guest script (the kernel command line is too short for the loop).
METHODS="sync pthread posix_aio kaio io_uring threadlet_vdso threadlet_syscall syslet"
cat > "$IMG/bin/io-run.sh" <<EOF
#!/bin/sh
ev=task-clock,context-switches,cpu-migrations,page-faults,raw_syscalls:sys_enter
ev=\$ev,threadlet:threadlet_handoff,threadlet:threadlet_fallback
echo
echo "io-run: start"
echo "# clocksource \$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" \
	"(available: \$(cat /sys/devices/system/clocksource/clocksource0/available_clocksource))"
rc=0
# 1. Timed run of every method, without perf (threadlet_syscall runs in a
#    child process of io with THREADLET_FORCE_SYSCALL=1).
echo "== all methods, no perf"
/tests/io > /tmp/out.all 2>&1 || { echo "io: exit \$?"; rc=1; }
cat /tmp/out.all
[ \$(grep -c '^io: all reads checked' /tmp/out.all) = 2 ] || { echo "io: did not finish"; rc=1; }
# 2. Each method again under perf stat; its IO lines are renamed IO-perf
#    (tracepoints on every system call slow the syscall-heavy methods).
for m in $METHODS; do
	echo "== \$m"
	if [ \$m = threadlet_syscall ]; then
		export THREADLET_FORCE_SYSCALL=1
	else
		unset THREADLET_FORCE_SYSCALL
	fi
	perf stat -x ';' -e \$ev -o /tmp/perf.\$m /tests/io \$m > /tmp/out.\$m 2>&1 || { echo "io \$m: exit \$?"; rc=1; }
	sed 's/^IO /IO-perf /' /tmp/out.\$m
	# perf stat exits 0 even when io dies of a signal
	grep -q '^io: all reads checked' /tmp/out.\$m || { echo "io \$m: did not finish"; rc=1; }
	grep -v '^#' /tmp/perf.\$m | grep . | sed "s/^/PERF;\$m;/"
done
echo "io-run: rc=\$rc"
exit \$rc
EOF
chmod +x "$IMG/bin/io-run.sh"
echo io > "$IMG/list"
[ -f "$IMG/disk.img" ] || [ ! -f "$BUILD/disk.img" ] || cp "$BUILD/disk.img" "$IMG/disk.img"
"$REPO/tests/mkimage.sh" "$IMG" "$IMG/bin" "$IMG/list" || exit 1

log=$BUILD/logs/io-wall.log
raw=$RESULTS/io-raw.txt
echo "  QEMU    io (wall) -> $RESULTS/io.md"
BUILD=$BUILD KERNEL=$KERNEL INITRD=$IMG/initramfs.cpio DISK=$IMG/disk.img \
	"$REPO/tests/run-qemu.sh" --name io-wall --log "$log" \
	--timeout "$TIMEOUT" --guest-timeout "$TIMEOUT" \
	--append "$WALL_APPEND" --cmd "/tests/io-run.sh" > /dev/null
rc=$?
{
	echo "# I/O comparison, wall-clock TCG, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "# kernel $KERNEL; $(qemu-system-x86_64 --version | head -n1)"
	echo "# run-qemu.sh exit $rc; serial log $log"
	grep -v -e '^\[' -e '^TL-' "$log" | sed 's/^.*\x1b\[2J//' | sed -n '/^# clocksource/,$p'
} > "$raw"

# Table: ratio to sync pread of the same case.
md=$RESULTS/io.md
{
	echo "# I/O comparison: 4 KiB random reads of /mnt/disk/data"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), QEMU TCG wall clock, 2 vCPUs, virtio-blk,"
	req=$(sed -n 's/^# requests per run: cached \([0-9]*\) uncached \([0-9]*\)$/\1 \2/p' "$raw" | head -n1)
	echo "ext4. Cached: ${req%% *} reads per run, file in the page cache; uncached: ${req##* } reads"
	echo "of fresh blocks after drop_caches. Each figure is the median of"
	echo "$(sed -n 's/^# runs per figure: \([0-9]*\).*/\1/p' "$raw" | head -n1) runs (min/max in io-raw.txt). KAIO uses O_DIRECT in both cases"
	echo "(so its cached row does not read from the page cache)."
	echo "Guest $(grep -m1 '^# clocksource' "$raw" | cut -c3-); $(grep -m1 '^# clock step' "$raw" | cut -c3-)"
	echo "(a step of a tick, e.g. 4000000 ns, means jiffies: times are then quantised to it)."
	echo "These figures come from a run without perf; each method then ran again under perf"
	echo "stat (figures of that run: IO-perf lines in io-raw.txt). run-qemu.sh exit $rc."
	echo
	echo "| case | method | concurrency | reads/s | ns/read | ratio to sync |"
	echo "| --- | --- | ---: | ---: | ---: | ---: |"
	for c in cached uncached; do
		for m in $METHODS; do grep "^IO $c $m " "$raw"; done
	done | awk '
		{ c[NR] = $2; m[NR] = $3; n[NR] = $4; r[NR] = $5; ns[NR] = $6
		  if ($3 == "sync") base[$2] = $5 }
		END { for (i = 1; i <= NR; i++)
			printf "| %s | %s | %d | %d | %d | %s |\n", c[i], m[i], n[i], r[i], ns[i],
				(c[i] in base) ? sprintf("%.2f", r[i] / base[c[i]]) : "-" }'
	echo
	echo "perf stat per method (one process: warm-up read of the whole file, cached"
	echo "runs, uncached runs; both cases together):"
	echo
	echo "| method | task-clock ms | context-switches | cpu-migrations | page-faults | syscalls | hand-offs | fallbacks |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	grep '^PERF;' "$raw" | awk -F';' '
		{ if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 }
		  v[$2, $5] = $3 }
		END { for (i = 1; i <= n; i++) { m = order[i]
			printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", m,
				v[m, "task-clock"], v[m, "context-switches"], v[m, "cpu-migrations"],
				v[m, "page-faults"], v[m, "raw_syscalls:sys_enter"],
				v[m, "threadlet:threadlet_handoff"], v[m, "threadlet:threadlet_fallback"] } }'
	echo
	echo "Throughput plots: io-cached.png, io-uncached.png."
} > "$md"

# Plots: reads/s against concurrency, one line per method, one plot per case.
dat=$IMG/plot
rm -rf "$dat"; mkdir -p "$dat"
grep '^IO ' "$raw" | while read -r _ c m n r _; do
	echo "$n $r" >> "$dat/$c-$m.dat"
done
for c in cached uncached; do
	plots=""
	for m in $METHODS; do
		[ -f "$dat/$c-$m.dat" ] || continue
		if [ "$m" = sync ]; then
			# one point at N = 1: draw it as a flat reference line
			v=$(awk '{print $2}' "$dat/$c-$m.dat")
			printf '1 %s\n32 %s\n' "$v" "$v" > "$dat/$c-$m.dat"
			plots="$plots${plots:+, }'$dat/$c-$m.dat' using 1:2 with lines dashtype 2 lw 2 title 'sync pread (N=1)'"
		else
			t=$m; [ "$m" = kaio ] && t="kaio (O_DIRECT)"
			plots="$plots${plots:+, }'$dat/$c-$m.dat' using 1:2 with linespoints lw 2 pt 7 title '$t'"
		fi
	done
	[ -n "$plots" ] || continue
	gnuplot <<EOF || echo "io.sh: gnuplot failed for $c" >&2
set terminal pngcairo size 900,600 font ',10' noenhanced
set output '$RESULTS/io-$c.png'
set title '4 KiB random reads, $c (QEMU TCG, wall clock)'
set xlabel 'requests in flight (concurrency)'
set ylabel 'reads/s'
set logscale x 2
set xtics (1, 8, 32)
set xrange [0.8:40]
set yrange [0:*]
set grid
set key outside right
plot $plots
EOF
done
cs=$(sed -n 's/^# clocksource \([^ ]*\).*/\1/p' "$raw" | head -n1)
[ "$cs" = tsc ] || echo "io.sh: warning: guest clocksource '$cs', not tsc (TSC calibration failed at boot?): times are quantised to a tick" >&2
echo "  RESULTS $md $RESULTS/io-cached.png $RESULTS/io-uncached.png"
[ "$rc" = 0 ] || { echo "io.sh: run failed (exit $rc), see $log" >&2; exit 1; }
exit 0
