#!/bin/bash
# I/O comparison benchmark (perf-scripts/io.c) in QEMU. Up to four boots:
#   wall       plain TCG, 2 vCPUs: every method timed in the cached, mixed
#              (90% page-cache hits) and uncached cases; then every
#              (case, method, N) in its own process under
#                perf stat -x ';' -e task-clock,context-switches,cpu-migrations,
#                  page-faults,raw_syscalls:sys_enter,threadlet:threadlet_handoff,
#                  threadlet:threadlet_fallback
#              counting only while the method runs (per-read figures); then
#              fio's psync, posixaio, libaio and io_uring engines on the
#              same reads (cached and uncached), for the cross-check, and
#              posixaio again with libthreadlet-aio.so preloaded
#              (posixaio_tl).
#   throttled  the uncached case, perf stat and fio again, on a disk that
#              QEMU throttles ($THROTTLE), so that every uncached read waits.
#   icount 1,2 -icount shift=0,sleep=off, one vCPU, twice (a boot per case
#              each time), with no virtio disk and no input from the host
#              that varies (run-qemu.sh --icount --no-disk): the CPU time of
#              the io process (all threads) per read, in guest instructions,
#              reading a null_blk device that io fills at boot (-w), with
#              a SCHED_IDLE busy loop (nohlt.c) instead of HLT when the
#              guest idles; the two runs must agree within 1% for a figure
#              to count as deterministic.
#
# posix_aio_tl, io.c's posix_aio code on libthreadlet-aio, is a second
# build of io.c (io-tlaio, -DIO_TLAIO): the library's aio_* replace glibc's,
# so one binary cannot have both. Each boot runs it right after io, and
# its IO lines join io's.
#
# Results: $RESULTS/io.md (tables), $RESULTS/io-{cached,mixed,uncached,
# throttled}.png (reads/s vs concurrency), $RESULTS/io-raw.txt (the guests'
# output: IO lines, hand-off counts, perf stat CSV, fio lines); serial logs
# $BUILD/logs/io-{wall,throttled}.log and io-ic<k>-<case>.log.
#
# Environment (defaults in brackets):
#   BUILD    build dir [<repo>/build]
#   KERNEL   bzImage [$BUILD/kobj/arch/x86/boot/bzImage]
#   LIBTL    libthreadlet.a [$BUILD/user/libthreadlet.a]
#   LIBTLAIO libthreadlet-aio.a, beside it libthreadlet-aio.so (for fio)
#            [the directory of $LIBTL]
#   RESULTS  where the result files go [$BUILD/results]
#   WALL_APPEND  extra kernel command line of the wall and throttled boots
#            [tsc_early_khz=<the host's TSC frequency, from dmesg>]
#   TIMEOUT  host timeout for each boot, seconds [2400]
#   THROTTLE QEMU -drive options of the throttled boot
#            [throttling.iops-total=1000]; empty: no throttled boot
#   WALL_RUNS  1: the wall boot [1]; 0: none
#   ICOUNT_RUNS  number of -icount boots [2]; 0: none, 1: no repeat check
#   NULLBLK_NS  completion time of the -icount boots' disk, guest ns
#            [200000]: they read the data from a memory-backed null_blk
#            device that completes each request on a guest timer, so that
#            uncached reads block and still repeat exactly
set -uo pipefail

NAME=io.sh
# shellcheck source=perf-scripts/common.sh
. "$(dirname "$0")/common.sh"
# Under host load the guest often fails to calibrate its TSC against the
# PIT and falls back to jiffies (1 ms clock steps, and clock_gettime
# becomes a system call). Under TCG the guest reads the host's TSC, so the
# host's TSC frequency is given to the guest instead (tsc_early_khz).
if [ -z "${WALL_APPEND+set}" ]; then
	khz=$(dmesg 2>/dev/null | sed -n 's/.*tsc: Detected \([0-9]*\)\.\([0-9]\)[0-9]* MHz.*/\1\2/p' | head -n1)
	WALL_APPEND=${khz:+tsc_early_khz=${khz}00}
fi
TIMEOUT=${TIMEOUT:-2400}
THROTTLE=${THROTTLE-throttling.iops-total=1000}
ICOUNT_RUNS=${ICOUNT_RUNS:-2}
WALL_RUNS=${WALL_RUNS:-1}
LIBTLAIO=${LIBTLAIO:-$(dirname "$LIBTL")/libthreadlet-aio.a}
{ [ -f "$LIBTLAIO" ] && [ -f "${LIBTLAIO%.a}.so" ]; } || die "no library at $LIBTLAIO or ${LIBTLAIO%.a}.so (make user)"

IMG=$BUILD/bench-io
BIN=$IMG/bin/io
mkdir -p "$IMG/bin" "$RESULTS" "$BUILD/logs"
build_bench "$HERE/io.c" "$BIN" -luring -laio -lrt || exit 1
# The methods of io-tlaio (their aio_* are libthreadlet-aio's, before
# glibc's); every other method is io's.
TLAIO_METHODS="posix_aio_tl"
build_bench "$HERE/io.c" "$IMG/bin/io-tlaio" -DIO_TLAIO "$LIBTLAIO" "$LIBTL" -luring -laio -lrt || exit 1
cp "${LIBTLAIO%.a}.so" "$IMG/bin/libthreadlet-aio.so"
build_bench "$HERE/nohlt.c" "$IMG/bin/nohlt" || exit 1
# fio needs System V shared memory, which the guest kernel lacks.
SHIM=$IMG/bin/fio-shm.so
if [ ! -f "$SHIM" ] || [ "$HERE/fio-shm.c" -nt "$SHIM" ]; then
	echo "  CC      $SHIM"
	$CC -O2 -Wall -Wextra -Werror -shared -fPIC -o "$SHIM" "$HERE/fio-shm.c" || exit 1
fi

# QEMU lets a burst of a tenth of a second's worth of I/O through before it
# throttles: io reads that many blocks, untimed, before each throttled run
# (-p), and fio starts counting after a ramp of 200 ms.
th_iops=$(echo "$THROTTLE" | sed -n 's/.*iops-total=\([0-9]*\).*/\1/p')
th_bps=$(echo "$THROTTLE" | sed -n 's/.*bps-total=\([0-9]*\).*/\1/p')
PRIME=$(( ${th_iops:-0} / 10 + ${th_bps:-0} / 40960 + 10 ))
[ "$PRIME" -le 6000 ] || die "THROTTLE '$THROTTLE' allows too large a burst to fill before each run"

METHODS="sync pthread posix_aio posix_aio_tl kaio io_uring threadlet_vdso threadlet_syscall syslet threadlet_loop"
CASES="cached mixed uncached throttled"

# The guest script: the kernel command line is too short for it.
sed -e "s/__METHODS__/$METHODS/" -e "s/__TLAIO__/$TLAIO_METHODS/" -e "s/__RAMP__/200ms/" > "$IMG/bin/io-run.sh" <<'GUEST'
#!/bin/sh
# io-run.sh wall | throttled <primer reads> | icount [case]: the guest side
# of perf-scripts/io.sh (the kernel command line is too short for it).
mode=$1 prime=${2:-0}
methods="__METHODS__"
# iobin <method>: the io build that runs it (posix_aio_tl: io-tlaio)
iobin() {
	case " __TLAIO__ " in
	*" $1 "*) echo /tests/io-tlaio ;;
	*) echo /tests/io ;;
	esac
}
ev=task-clock,context-switches,cpu-migrations,page-faults,raw_syscalls:sys_enter
ev=$ev,threadlet:threadlet_handoff,threadlet:threadlet_fallback
fev=task-clock,context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_clock_gettime
rc=0 wopt=""
echo
echo "io-run: start $mode"
echo "# clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" \
	"(available: $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource))"
case $mode in
wall) cases="cached mixed uncached" fio_cases="cached uncached" opts="" ;;
throttled) cases=uncached fio_cases=uncached opts="-p $prime" ;;
icount) cases=${2:-cached mixed uncached} fio_cases="" opts="-r 3"
	# No virtio disk (its latency is host time): io writes the data to
	# null_blk, whose latency is guest time.
	[ -b /dev/nullb0 ] || { echo "io-run: no /dev/nullb0"; exit 1; }
	opts="$opts -f /dev/nullb0" wopt=-w
	# QEMU's clock warp when the vCPU halts is racy (nohlt.c): never halt.
	/tests/nohlt &
	nohlt=$!
	echo "# icount data: /dev/nullb0 (null_blk, $(cat /sys/module/null_blk/parameters/completion_nsec) ns completions)" ;;
*) echo "io-run: unknown mode $mode"; exit 64 ;;
esac
copts=""
for c in $cases; do copts="$copts -c $c"; done

# 1. Timed run of every method, without perf (threadlet_syscall runs in a
#    child process of io with THREADLET_FORCE_SYSCALL=1), then io-tlaio's
#    (the data is written once, by io: -w).
echo "== all methods, no perf"
# shellcheck disable=SC2086
/tests/io $copts $opts $wopt > /tmp/out.all 2>&1 || { echo "io: exit $?"; rc=1; }
# shellcheck disable=SC2086
/tests/io-tlaio $copts $opts >> /tmp/out.all 2>&1 || { echo "io-tlaio: exit $?"; rc=1; }
cat /tmp/out.all
[ "$(grep -c '^io: all reads checked' /tmp/out.all)" = 3 ] || { echo "io: did not finish"; rc=1; }
if [ "$mode" = icount ]; then
	kill "$nohlt" || { echo "io-run: nohlt died"; rc=1; }
	echo "io-run: rc=$rc"
	exit $rc
fi

# 2. Each (case, method, N) again in its own process under perf stat, one
#    run (cached: plus its warm-up run), counting only while a method runs
#    (io drives perf through the control fifos). Its IO lines are renamed
#    IO-perf: tracepoints on every system call slow the syscall-heavy
#    methods (and "# <case> ..." lines become "#-perf <case> ..."). PERF
#    lines: case;method;N;reads counted;<perf CSV>.
mkfifo /tmp/perf.ctl /tmp/perf.ack
exec 8<>/tmp/perf.ctl 9<>/tmp/perf.ack
for c in $cases; do
	for m in $methods; do
		for n in 1 8 32; do
			[ "$m" = sync ] && [ "$n" != 1 ] && continue
			if [ "$m" = threadlet_syscall ]; then
				export THREADLET_FORCE_SYSCALL=1
			else
				unset THREADLET_FORCE_SYSCALL
			fi
			# shellcheck disable=SC2086
			IO_PERF_CTL=8,9 perf stat -x ';' -e $ev -D -1 --control fd:8,9 \
				-o /tmp/perf.out "$(iobin $m)" -c $c -n $n -r 1 $opts $m \
				> /tmp/out 2>&1 || { echo "io $c $m $n: exit $?"; rc=1; }
			grep -v '^Events [a-z]*abled' /tmp/out |
				sed -e 's/^IO /IO-perf /' -e 's/^# \([a-z]* [a-z_]* [0-9]*:\)/#-perf \1/'
			# perf stat exits 0 even when io dies of a signal
			grep -q '^io: all reads checked' /tmp/out || { echo "io $c $m $n: did not finish"; rc=1; }
			reads=$(sed -n 's/^IO-READS //p' /tmp/out)
			grep -v -e '^#' -e '^Events' /tmp/perf.out | grep . | sed "s/^/PERF;$c;$m;$n;$reads;/"
		done
	done
done
unset THREADLET_FORCE_SYSCALL

# 3. fio, the same reads: psync with N jobs (threads), posixaio, libaio
#    (O_DIRECT, as our kaio) and io_uring with iodepth N, and posixaio_tl
#    (posixaio with libthreadlet-aio.so preloaded); three runs each,
#    each right after one run of our matching method (XIO lines: case
#    method N pair reads/s ns/read cpu-ns/read), then the job under perf
#    stat twice: in full and with one read per job, so that the difference
#    is what the reads cost.
#    FIO lines: case engine N run reads-asked iops runtime-ms error
#    reads-counted ramped (reads in the ramp are done but not counted)
#    usr% sys% (fio's rusage of its job threads over the job's runtime).
fio_job() { # case engine N reads-per-job [wrapper...]
	fc=$1 fe=$2 fn=$3 per=$4
	shift 4
	jobs=1 depth=$fn direct=0 inv=0 engine=$fe pre=/tests/fio-shm.so
	[ "$fe" = psync ] && jobs=$fn depth=1
	[ "$fe" = posixaio_tl ] && engine=posixaio pre=/tests/libthreadlet-aio.so:$pre
	[ "$fe" = libaio ] && direct=1
	if [ "$fc" != cached ]; then
		sync
		echo 3 > /proc/sys/vm/drop_caches
		inv=1
	fi
	"$@" env LD_PRELOAD=$pre fio --name=io --filename=/mnt/disk/data --rw=randread --bs=4k --size=64m \
		--io_size=$((per * 4))k --ioengine="$engine" --iodepth="$depth" --numjobs="$jobs" \
		--thread --group_reporting --direct=$direct --invalidate=$inv $fio_extra \
		--output-format=terse --terse-version=3
}
fio_extra="" ramped=0
[ "$mode" = throttled ] && fio_extra="--ramp_time=__RAMP__" ramped=1
for c in $fio_cases; do
	[ "$c" = cached ] && cat /mnt/disk/data > /dev/null
	nreq=600
	[ "$c" = cached ] && nreq=10000
	for e in psync posixaio posixaio_tl libaio io_uring; do
		for n in 1 8 32; do
			jobs=1
			[ "$e" = psync ] && jobs=$n
			per=$(( (nreq + jobs - 1) / jobs ))
			case $e in
			psync) om=pthread; [ "$n" = 1 ] && om=sync ;;
			posixaio) om=posix_aio ;;
			posixaio_tl) om=posix_aio_tl ;;
			libaio) om=kaio ;;
			*) om=$e ;;
			esac
			for r in 1 2 3; do
				# ours right before each fio run: both see the same host load
				# shellcheck disable=SC2086
				"$(iobin $om)" -c "$c" -n "$n" -r 1 $opts $om > /tmp/xio 2>&1 || { echo "io $c $om $n: exit $?"; rc=1; }
				grep -q '^io: all reads checked' /tmp/xio || { echo "io $c $om $n: did not finish"; rc=1; }
				sed -n "s/^IO $c $om $n /XIO $c $om $n $r /p" /tmp/xio
				fio_job "$c" "$e" "$n" "$per" > /tmp/fio.out 2>&1 || { echo "fio $c $e $n: exit $?"; rc=1; }
				grep -q '^3;' /tmp/fio.out || { echo "fio $c $e $n: no result"; cat /tmp/fio.out; rc=1; }
				grep '^3;' /tmp/fio.out | awk -F';' -v c="$c" -v e="$e" -v n="$n" -v r="$r" -v ios=$((per * jobs)) \
					-v ramp="$ramped" \
					'{ sub("%", "", $88); sub("%", "", $89)
					   print "FIO", c, e, n, r, ios, $8, $9, $5, $6 / 4, ramp, $88, $89 }'
			done
			for k in full base; do
				p=$per
				[ $k = base ] && p=1
				fio_job "$c" "$e" "$n" "$p" perf stat -x ';' -e $fev -o /tmp/perf.fio > /tmp/fio.out 2>&1 ||
					{ echo "fio perf $c $e $n: exit $?"; rc=1; }
				grep -v '^#' /tmp/perf.fio | grep . | sed "s/^/FIOPERF;$c;$e;$n;$k;$((p * jobs));/"
			done
		done
	done
done
echo "io-run: rc=$rc"
exit $rc
GUEST
chmod +x "$IMG/bin/io-run.sh"
echo io > "$IMG/list"
[ -f "$IMG/disk.img" ] || [ ! -f "$BUILD/disk.img" ] || cp "$BUILD/disk.img" "$IMG/disk.img"
"$REPO/tests/mkimage.sh" "$IMG" "$IMG/bin" "$IMG/list" || exit 1

# boot <name> <guest command> [run-qemu.sh options]: one boot; its guest
# output goes to $IMG/out.<name>, run-qemu.sh's exit status to
# $IMG/rc.<name>.
boot() {
	local name=$1 cmd=$2 log=$BUILD/logs/io-$1.log
	shift 2
	BUILD=$BUILD KERNEL=$KERNEL INITRD=$IMG/initramfs.cpio DISK=$IMG/disk.img \
		"$REPO/tests/run-qemu.sh" --name "io-$name" --log "$log" \
		--timeout "$TIMEOUT" --guest-timeout "$TIMEOUT" --cmd "$cmd" "$@" > /dev/null
	echo $? > "$IMG/rc.$name"
	tr -d '\r' < "$log" | grep -v -e '^\[' -e '^TL-' | sed 's/^.*\x1b\[2J//' |
		sed -n '/^# clocksource/,$p' > "$IMG/out.$name"
}

rm -f "$IMG"/rc.* "$IMG"/out.*
if [ "$WALL_RUNS" = 1 ]; then
	echo "  QEMU    io (wall) -> $RESULTS/io.md"
	boot wall "/tests/io-run.sh wall" --append "$WALL_APPEND"
fi
# The throttled boot runs on its own, before the -icount pairs: its
# figures are host time, and the host has two cores.
if [ -n "$THROTTLE" ]; then
	echo "  QEMU    io (throttled: $THROTTLE)"
	boot throttled "/tests/io-run.sh throttled $PRIME" --append "$WALL_APPEND" \
		--drive-opts "$THROTTLE"
fi
# Each case gets its own -icount boots, so that every case starts from the
# state a boot leaves and a case's figures do not depend on what ran
# before it in the boot.
# Boot ic<k>-<case>; its output and status are then gathered into
# out.icount-<k> and rc.icount-<k>.
for c in cached mixed uncached; do
	pids=()
	for k in $(seq 1 "$ICOUNT_RUNS"); do
		echo "  QEMU    io (icount $k, $c)"
		boot "ic$k-$c" "/tests/io-run.sh icount $c" --icount --no-disk \
			--append "$NULLBLK_APPEND" &
		pids+=($!)
	done
	[ ${#pids[@]} = 0 ] || wait "${pids[@]}"
done
for k in $(seq 1 "$ICOUNT_RUNS"); do
	r=0
	for c in cached mixed uncached; do
		cat "$IMG/out.ic$k-$c"
		[ "$(cat "$IMG/rc.ic$k-$c")" = 0 ] || r=1
	done > "$IMG/out.icount-$k"
	echo $r > "$IMG/rc.icount-$k"
done

# One raw file; the throttled boot's uncached case is renamed "throttled",
# the -icount boots' IO lines "IC<k>".
raw=$RESULTS/io-raw.txt
rc=0
{
	echo "# I/O comparison, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "# kernel $KERNEL; $(qemu-system-x86_64 --version | head -n1)"
	for f in "$IMG"/rc.wall "$IMG"/rc.throttled "$IMG"/rc.icount-*; do
		[ -f "$f" ] || continue
		b=${f##*/rc.}
		r=$(cat "$f")
		[ "$r" = 0 ] || rc=1
		if [ "${b#icount-}" != "$b" ]; then
			echo "## boot $b: run-qemu.sh exit $r; serial logs $BUILD/logs/io-ic${b#icount-}-{cached,mixed,uncached}.log"
		else
			echo "## boot $b: run-qemu.sh exit $r; serial log $BUILD/logs/io-$b.log"
		fi
		case $b in
		wall) cat "$IMG/out.$b" ;;
		throttled) sed -e 's/^\(IO\|IO-perf\|FIO\|#\|#-perf\) uncached /\1 throttled /' \
			-e 's/^\(PERF\|FIOPERF\);uncached;/\1;throttled;/' "$IMG/out.$b" ;;
		icount-*) sed -e "s/^IO /IC${b#icount-} /" -e "s/^# \(cached\|mixed\|uncached\) /#IC${b#icount-} \1 /" "$IMG/out.$b" ;;
		esac
	done
} > "$raw"

# Determinism: every figure of the -icount boots (guest ns and CPU ns per
# read) against boot 1, spread = |a - b| / min(a, b), limit 1%; then one
# verdict line, "DETERMINISM ok: ..." or "DETERMINISM NOT ok: ...".
det=$RESULTS/io-determinism.txt
rm -f "$det"
if [ "$ICOUNT_RUNS" -ge 2 ]; then
	grep '^IC[0-9]* ' "$raw" | awk -v runs="$ICOUNT_RUNS" '
		{ b = substr($1, 3); k = $2 " " $3 " " $4
		  if (!(k in seen)) { seen[k] = 1; order[++n] = k }
		  v[k, b, "ns"] = $6; v[k, b, "cpu"] = $7 }
		END { split("ns cpu", fs, " ")
		  for (i = 1; i <= n; i++) for (f = 1; f <= 2; f++) {
			k = order[i]; a = v[k, 1, fs[f]]
			for (b = 2; b <= runs; b++) {
				total++
				if (!((k, 1, fs[f]) in v) || !((k, b, fs[f]) in v) || a <= 0 || v[k, b, fs[f]] <= 0) {
					bad++; print "SPREAD", b, k, fs[f], "missing"; continue }
				d = a - v[k, b, fs[f]]; if (d < 0) d = -d
				m = a < v[k, b, fs[f]] ? a : v[k, b, fs[f]]
				printf "SPREAD %d %s %s %d %d %.2f%%\n", b, k, fs[f], a, v[k, b, fs[f]], 100 * d / m
				if (100 * d / m > 1) bad++; else if (d == 0) same++ } }
		  if (total == 0) print "DETERMINISM NOT ok: no figures"
		  else if (bad) printf "DETERMINISM NOT ok: %d of %d figures over 1%%\n", bad, total
		  else printf "DETERMINISM ok: all %d figures within 1%% (%d identical)\n", total, same }' > "$det"
	grep '^DETERMINISM' "$det" | sed 's/^/  /'
fi

# field <regex> <sed replacement>: the first match in the raw file.
field() { sed -n "s/$1/$2/p" "$raw" | head -n1; }

md=$RESULTS/io.md
{
	echo "# I/O comparison: 4 KiB random reads of /mnt/disk/data"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), QEMU 7.2 TCG, virtio-blk, ext4, 64 MiB file"
	echo "(16384 blocks). Made by \`perf-scripts/io.sh\` (\`make bench\`); raw output in"
	echo "io-raw.txt. Kernel $KERNEL, built $(date -u -r "$KERNEL" '+%Y-%m-%d %H:%M UTC');"
	echo "libthreadlet $LIBTL, built $(date -u -r "$LIBTL" '+%Y-%m-%d %H:%M UTC')."
	echo "Extra kernel command line of the wall and throttled boots: \`${WALL_APPEND:-none}\`."
	echo "Boots: $(grep '^## boot' "$raw" | sed 's/^## boot \([^:]*\): run-qemu.sh exit \([0-9]*\).*/\1 (exit \2)/' | paste -sd, - | sed 's/,/, /g')."
	echo
	# Every error the guest printed, by boot: a benchmark that fails a check
	# must not pass for a result.
	fails=$(awk '/^## boot / { b = $3; sub(":", "", b) }
		/^(io|fio)( [a-z_]+ [a-z_]+ [0-9]+)?: / && !/all reads checked/ { print "- " b ": `" $0 "`" }
		/^(Segmentation fault|Bus error|Aborted|Killed)/ { print "- " b ": `" $0 "`" }' "$raw" | sort | uniq -c |
		sed 's/^ *\([0-9]*\) \(.*\)/\2 (×\1)/')
	if [ -n "$fails" ]; then
		echo "## Failures in this run"
		echo
		echo "The guests reported these errors (a method whose process died has no figure"
		echo "from that point on in its boot's tables):"
		echo
		echo "$fails"
		echo
	fi
	echo "## Cases"
	echo
	echo "- **cached**: the file is in the page cache; $(field '^# requests per run: cached \([0-9]*\).*' '\1') reads per run at random"
	echo "  blocks (with replacement), after one untimed warm-up run."
	echo "- **mixed**: drop_caches, then the run's $(field '^# requests per run: cached [0-9]* mixed \([0-9]*\).*' '\1') distinct blocks are read once"
	echo "  each except a random $(field '^# mixed: \([0-9]*\)%.*' '\1')% of them (untimed): $((100 - $(field '^# mixed: \([0-9]*\)%.*' '\1')))% of the timed reads hit the"
	echo "  page cache, the rest go to the disk."
	echo "- **uncached**: drop_caches, then $(field '^# requests per run: .* uncached \([0-9]*\)$' '\1') reads of distinct blocks."
	if [ -n "$THROTTLE" ]; then
		echo "- **throttled**: the uncached case on a disk QEMU throttles with"
		echo "  \`-drive ...,$THROTTLE\` (\`THROTTLE\`); before each run $PRIME"
		echo "  other blocks are read, untimed, to use up QEMU's burst allowance (a tenth"
		echo "  of a second's worth), so every timed read is throttled.${th_iops:+ The cap is}"
		[ -z "$th_iops" ] || echo "  $th_iops reads/s: a figure well above it would mean the guest's clock is wrong."
	fi
	echo
	echo "Before every run, mincore() counts the run's reads that will hit the page cache;"
	echo "io fails unless that is all of them (cached), exactly 90% (mixed) or none"
	echo "(uncached, throttled). Every read is checked (all 4096 bytes: each block holds"
	echo "its number) and completions must equal requests. The buffered fd has"
	echo "POSIX_FADV_RANDOM (no readahead). KAIO uses O_DIRECT in every case, so its"
	echo "cached and mixed rows read from the disk. posix_aio_tl is posix_aio's code"
	echo "(aio_read() + aio_suspend(), the same blocks) linked against libthreadlet-aio"
	echo "(POSIX AIO on syslets) instead of glibc's AIO. Wall-clock figures: plain TCG, 2"
	echo "vCPUs, median of $(field '^# runs per figure: \([0-9]*\).*' '\1') runs; they move by tens of percent between runs on this"
	echo "2-core host (other QEMU runs share it): compare within one table only. Guest"
	echo "$(grep -m1 '^# clocksource' "$raw" | cut -c3-); $(grep -m1 '^# clock step' "$raw" | cut -c3-)."
	echo
	echo "## Throughput (wall clock)"
	echo
	echo "CPU µs/read: CLOCK_PROCESS_CPUTIME_ID of the io process (all its threads) over"
	echo "the whole method call, per read; work done in interrupts is charged to whatever"
	echo "runs then (for KAIO, often the idle task). Ratio: reads/s against sync pread."
	echo
	echo "| case | method | N | reads/s | ns/read | CPU µs/read | ratio to sync |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
	for c in $CASES; do
		for m in $METHODS; do grep "^IO $c $m " "$raw"; done
	done | awk '
		{ c[NR] = $2; m[NR] = $3; n[NR] = $4; r[NR] = $5; ns[NR] = $6; cpu[NR] = $7
		  if ($3 == "sync") base[$2] = $5 }
		END { for (i = 1; i <= NR; i++)
			printf "| %s | %s | %d | %d | %d | %.1f | %s |\n", c[i], m[i], n[i], r[i], ns[i],
				cpu[i] / 1000, (c[i] in base) ? sprintf("%.2f", r[i] / base[c[i]]) : "-" }'
	echo
	echo "## Per read, from perf stat"
	echo
	echo "Each (case, method, N) ran again in its own process under perf stat, one"
	echo "run (cached: and its warm-up run); io switches counting on only while the method"
	echo "runs (\`perf stat -D -1 --control\`), so warm-ups, drop_caches and setup outside"
	echo "the method are not counted. Counts are divided by the reads done while"
	echo "counting. task-clock is summed over all threads of the process."
	echo
	echo "| case | method | N | reads | task-clock µs/read | syscalls/read | context switches/read | hand-offs/read | fallbacks/read |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	grep '^PERF;' "$raw" | awk -F';' '
		function per(x, d) { return (x ~ /^[0-9.]+$/ && d > 0) ? sprintf(d == 1000 ? "%.1f" : "%.3f", x * d / rd[k]) : x }
		{ k = $2 ";" $3 ";" $4
		  if (!(k in seen)) { seen[k] = 1; order[++n] = k }
		  rd[k] = $5; v[k, $8] = $6 }
		END { for (i = 1; i <= n; i++) { k = order[i]; split(k, f, ";")
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", f[1], f[2], f[3], rd[k],
				per(v[k, "task-clock"], 1000), per(v[k, "raw_syscalls:sys_enter"], 1),
				per(v[k, "context-switches"], 1), per(v[k, "threadlet:threadlet_handoff"], 1),
				per(v[k, "threadlet:threadlet_fallback"], 1) } }'
	echo
	if grep -q '^FIO ' "$raw"; then
		echo "## Cross-check against fio $(fio --version 2>/dev/null | sed 's/^fio-//')"
		echo
		echo "fio ran the same reads in the same boot (4 KiB randread of the same file,"
		echo "fio's random map: no block twice in a job): psync with N jobs (threads,"
		echo "\`--thread\`) against our sync (N = 1) and pthread pool, posixaio, libaio"
		echo "(\`--direct=1\`, as our kaio) and io_uring with iodepth N, and posixaio_tl:"
		echo "posixaio with libthreadlet-aio.so preloaded over glibc's AIO (against our"
		echo "posix_aio_tl); cached after reading"
		echo "the file, uncached after drop_caches (and fio's own invalidate)$( [ -n "$THROTTLE" ] && echo "; throttled with a 200 ms \`--ramp_time\` (not counted) instead of primer reads")."
		echo "fio runs with perf-scripts/fio-shm.c preloaded: the guest kernel has no System V"
		echo "IPC, and the shim gives fio its job table as a shared anonymous mapping instead."
		echo "Three fio runs each; fio's IOPS (its runtime excludes job setup). Ours: our"
		echo "matching method run once (io -c case -n N -r 1) right before each fio run, so"
		echo "both see the same load on the host; median and min–max of the three pairs."
		echo "*Agrees* when the two min–max ranges overlap."
		echo "System calls per read: fio's job under perf stat in full and with one read per"
		echo "job, difference divided by the difference in reads (so fio's start-up is not"
		echo "counted; n/a where the start-up varied by more than the reads added); ours"
		echo "from the perf table above. clock_gettime is a system call only when the guest's"
		echo "clocksource has no vDSO support (jiffies; this run: $(grep -m1 '^# clocksource' "$raw" | cut -d' ' -f3))."
		echo "CPU per read: ours is the process CPU time (all threads) of the paired runs;"
		echo "fio's is its own rusage of the job threads ((usr + sys)% × runtime × jobs /"
		echo "reads); medians of the three runs, neither under perf."
		echo
		echo "| case | ours | fio engine | N | ours reads/s (min–max) | fio IOPS (min–max) | fio/ours | agrees | syscalls/read ours / fio | fio clock_gettime calls/read | CPU µs/read ours / fio |"
		echo "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |"
		{ grep -e '^FIO ' -e '^XIO ' -e '^FIOPERF;' -e '^PERF;' "$raw"
		  grep -E '^# (cached|mixed|uncached|throttled) [a-z_]+ [0-9]+: ns/read' "$raw"; } | awk '
			function abs(x) { return x < 0 ? -x : x }
			function ours(e, n) {
				if (e == "psync") return n == 1 ? "sync" : "pthread"
				if (e == "posixaio") return "posix_aio"
				if (e == "posixaio_tl") return "posix_aio_tl"
				return e == "libaio" ? "kaio" : "io_uring" }
			/^FIO / { k = $2 " " $3 " " $4
				  if (!(k in cnt)) order[++nk] = k
				  cnt[k]++; iops[k, cnt[k]] = $7
				  # CPU of the job threads per read; for N jobs, N times the runtime
				  cpu[k, cnt[k]] = ($12 + $13) / 100 * $8 * 1000 * ($3 == "psync" ? $4 : 1) / $10
				  if ($9 != 0 || ($10 != $6 && !$11) || $10 > $6 || $10 <= 0) bad[k] = bad[k] sprintf(" run %d: error %s, %s of %s reads;", $5, $9, $10, $6)
				  next }
			/^FIOPERF;/ { split($0, f, ";"); fp[f[2] " " f[3] " " f[4], f[5], f[9]] = f[7]
				  fr[f[2] " " f[3] " " f[4], f[5]] = f[6]; next }
			/^PERF;/ { split($0, f, ";"); op[f[2] " " f[3] " " f[4], f[8]] = f[6]; ord[f[2] " " f[3] " " f[4]] = f[5]; next }
			/^XIO / { k = $2 " " $3 " " $4; xn[k]++; xr[k, xn[k]] = $6; xc[k, xn[k]] = $8 / 1000 }
			# the timed run, for rows without pairs (a guest script without them)
			/^# / { sub(":", "", $4); k = $2 " " $3 " " $4
				if (!(k in tmed)) { tmin[k] = 1e9 / $11; tmed[k] = 1e9 / $9; tmax[k] = 1e9 / $7; tcpu[k] = $16 / 1000 } }
			function med3(a, n,   i, j, t) {	# median of a[1..n], sorts a
				for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j] < a[j - 1]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
				return a[int((n + 1) / 2)] }
			function fper(k, ev, d,   full, base, dr) {
				full = fp[k, "full", ev]; base = fp[k, "base", ev]
				dr = fr[k, "full"] - fr[k, "base"]
				if (full !~ /^[0-9.]+$/ || base !~ /^[0-9.]+$/ || dr <= 0) return "?"
				# start-up costs that vary by more than the reads add
				if (full < base) return "n/a"
				return sprintf(d == 1000 ? "%.1f" : "%.2f", (full - base) * d / dr) }
			function oper(k, ev, d) {
				if (op[k, ev] !~ /^[0-9.]+$/ || ord[k] <= 0) return "?"
				return sprintf(d == 1000 ? "%.1f" : "%.2f", op[k, ev] * d / ord[k]) }
			END { for (i = 1; i <= nk; i++) { k = order[i]; split(k, f, " ")
				m = ours(f[2], f[3]); ok = f[1] " " m " " f[3]
				if (ok in xn) {
					for (j = 1; j <= xn[ok]; j++) y[j] = xc[ok, j]
					ocpu[ok] = med3(y, xn[ok])
					for (j = 1; j <= xn[ok]; j++) y[j] = xr[ok, j]
					omed[ok] = med3(y, xn[ok]); omin[ok] = y[1]; omax[ok] = y[xn[ok]] }
				else if (ok in tmed) {
					omed[ok] = tmed[ok]; omin[ok] = tmin[ok]; omax[ok] = tmax[ok]; ocpu[ok] = tcpu[ok]
					m = m " (timed run, not paired)" }
				lo = hi = iops[k, 1]
				for (j = 1; j <= cnt[k]; j++) { x[j] = iops[k, j]; if (x[j] < lo) lo = x[j]; if (x[j] > hi) hi = x[j] }
				# median of the runs (insertion sort)
				for (a = 2; a <= cnt[k]; a++) for (b = a; b > 1 && x[b] < x[b - 1]; b--) { t = x[b]; x[b] = x[b - 1]; x[b - 1] = t }
				med = x[int((cnt[k] + 1) / 2)]
				for (j = 1; j <= cnt[k]; j++) x[j] = cpu[k, j]
				for (a = 2; a <= cnt[k]; a++) for (b = a; b > 1 && x[b] < x[b - 1]; b--) { t = x[b]; x[b] = x[b - 1]; x[b - 1] = t }
				fc = sprintf("%.1f", x[int((cnt[k] + 1) / 2)])
				if (!(ok in omed)) { printf "| %s | %s (no figure) | %s | %s | - | %d (%d–%d) | - | - | - | - | - |\n", f[1], m, f[2], f[3], med, lo, hi; continue }
				agree = (lo <= omax[ok] && hi >= omin[ok]) ? "yes" : "no"
				if (k in bad) agree = agree ", fio:" bad[k]
				oc = sprintf("%.1f", ocpu[ok])
				printf "| %s | %s | %s | %s | %d (%d–%d) | %d (%d–%d) | %.2f | %s | %s / %s | %s | %s / %s |\n",
					f[1], m, f[2], f[3], omed[ok], omin[ok], omax[ok], med, lo, hi, med / omed[ok], agree,
					oper(ok, "raw_syscalls:sys_enter", 1), fper(k, "raw_syscalls:sys_enter", 1),
					fper(k, "syscalls:sys_enter_clock_gettime", 1), oc, fc
				if (agree !~ /^no/) continue
				# what the gap in time per read is made of, as measured
				dt = 1e6 / med - 1e6 / omed[ok]
				note = sprintf("- %s %s N=%s (fio %s): fio takes %.1f µs %s per read (1/throughput).",
					f[1], m, f[3], f[2], abs(dt), (dt < 0) ? "less" : "more")
				if (oc != "?" && fc != "?") {
					dc = fc - oc
					note = note sprintf(" Its job threads spend %.1f µs %s CPU per read than our process:",
						abs(dc), (dc < 0) ? "less" : "more")
					if (dc * dt > 0 && abs(dc) >= 0.5 * abs(dt))
						note = note " that covers at least half of the gap."
					else
						note = note " that does not cover half of the gap."
				}
				notes[++nn] = note }
			  if (nn) {
				printf "\nWhere the ranges do not overlap, the measured difference in CPU per read\n"
				printf "against the difference in time per read (for N > 1 the CPU is spread over\n"
				printf "threads and 2 vCPUs, so only the sign and size are comparable):\n\n"
				for (i = 1; i <= nn; i++) print notes[i] } }'
		echo
	fi
	if grep -q '^IC1 ' "$raw"; then
		echo "## Deterministic mode (-icount)"
		echo
		echo "\`tests/run-qemu.sh --icount --no-disk\`: -icount shift=0,sleep=off, one vCPU,"
		echo "so guest time counts guest instructions (1 ns = 1 instruction); a fixed RTC"
		echo "start, QEMU's random numbers from a fixed seed, no address space"
		echo "randomization (norandmaps) and no virtio disk, so nothing the host does"
		echo "reaches the guest at a varying moment. The guest never halts: when it"
		echo "would idle, a busy loop at SCHED_IDLE (\`perf-scripts/nohlt.c\`) runs instead,"
		echo "because QEMU 7.2 moves the clock to the next timer when the vCPU halts, and"
		echo "that races with its count of the instructions just run. The data is read"
		echo "from $(sed -n 's/^# icount data: //p' "$IMG/out.icount-1" | head -n1):"
		echo "the same 64 MiB, written there by \`io -w\` at boot, on a device that completes"
		echo "each request on a guest-time timer (\`NULLBLK_NS\`), so uncached reads block"
		echo "and their timing does not depend on the host. The"
		echo "figure is the io process's CPU time per read (CLOCK_PROCESS_CPUTIME_ID, all"
		echo "threads, the whole method call): the guest instructions it ran per read,"
		echo "interrupts that land while it runs included. Median of 3 runs per boot;"
		echo "each case has a boot of its own, so every case starts from the same state."
		echo "Ratio: instructions per read against sync pread of the same case (lower is"
		echo "cheaper). A figure *repeats* when its $ICOUNT_RUNS runs (boots) agree within 1%"
		echo "(spread = |boot 1 − boot n| / the smaller of the two, the largest over the"
		echo "boots; the check of \`io-determinism.txt\`)."
		echo
		hdr="| case | method | N |" sep="| --- | --- | ---: |"
		for k in $(seq 1 "$ICOUNT_RUNS"); do hdr="$hdr boot $k |"; sep="$sep ---: |"; done
		echo "$hdr spread | repeats (≤ 1%) | ratio to sync |"
		echo "$sep ---: | --- | ---: |"
		# spread and verdict per row: the CPU figure's largest spread in
		# io-determinism.txt (boot 1 against each other boot)
		detf=$det
		[ -s "$detf" ] || detf=/dev/null
		awk -v runs="$ICOUNT_RUNS" -v cases="$CASES" -v methods="$METHODS" '
			src == "det" { if ($1 == "SPREAD" && $6 == "cpu") { k = $3 " " $4 " " $5
				if ($7 == "missing") miss[k] = 1
				else if (!(k in sp) || $9 + 0 > sp[k]) sp[k] = $9 + 0 }
			  next }
			{ b = substr($1, 3); k = $2 " " $3 " " $4; seen[k] = 1; v[k, b] = $7 }
			END { nc = split(cases, cs, " "); nm = split(methods, ms, " ")
			  # rows in the order of the other tables
			  for (c = 1; c <= nc; c++) for (m = 1; m <= nm; m++) for (j = 1; j <= 3; j++) {
				k = cs[c] " " ms[m] " " substr("1 8 32", j == 1 ? 1 : j == 2 ? 3 : 5, j == 3 ? 2 : 1)
				if (k in seen) order[++n] = k }
			  for (i = 1; i <= n; i++) { k = order[i]; split(k, f, " ")
				line = sprintf("| %s | %s | %s |", f[1], f[2], f[3])
				for (b = 1; b <= runs; b++)
					line = line (((k, b) in v) ? sprintf(" %d |", v[k, b]) : " - |")
				base = v[f[1] " sync 1", 1]
				if ((k in miss) || !(k in sp)) { s = "-"; rep = "-"; nmiss++ }
				else { s = sprintf("%.2f%%", sp[k]); rep = sp[k] <= 1 ? "yes" : "**no**"
				       total++; ctot[f[1]]++
				       if (sp[k] <= 1) { good++; cgood[f[1]]++ } }
				printf "%s %s | %s | %s |\n", line, s, rep, (base > 0) ? sprintf("%.2f", v[k, 1] / base) : "-" }
			  printf "\n%d of %d figures repeat within 1%%", good, total
			  if (nmiss) printf " (%d without a figure from every boot)", nmiss
			  sep = " (by case: "
			  for (c = 1; c <= nc; c++) if (cs[c] in ctot) { printf "%s%s %d of %d", sep, cs[c], cgood[cs[c]], ctot[cs[c]]; sep = ", " }
			  printf ").\n" }' src=det "$detf" src=ic - < <(grep '^IC[0-9]* ' "$raw")
		echo
		if [ -s "$det" ]; then
			echo "Both figures of every row (guest ns and CPU ns per read), boot 1 against"
			echo "the other boots (\`io-determinism.txt\`): **$(grep '^DETERMINISM' "$det")**."
			echo
		fi
		if grep -q '^# icount data: /dev/nullb0' "$IMG/out.icount-1"; then
			echo "Time per read in guest ns, boot 1, where the disk's latency counts: on"
			echo "null_blk it is guest time too, so these are deterministic throughput"
			echo "figures (uncached: every read waits $NULLBLK_NS ns for the disk; N reads"
			echo "in flight can overlap). Ratio to sync pread of the same case (lower is faster)."
			echo
			echo "| case | method | N | guest ns/read | ratio to sync |"
			echo "| --- | --- | ---: | ---: | ---: |"
			grep '^IC1 \(mixed\|uncached\) ' "$raw" | awk '
				{ k[NR] = $2 " | " $3 " | " $4; ns[NR] = $6; if ($3 == "sync") base[$2] = $6; c[NR] = $2 }
				END { for (i = 1; i <= NR; i++)
					printf "| %s | %d | %s |\n", k[i], ns[i],
						(c[i] in base) ? sprintf("%.2f", ns[i] / base[c[i]]) : "-" }'
			echo
		fi
	fi
	echo "Throughput plots (wall clock): $(for c in $CASES; do grep -q "^IO $c " "$raw" && printf 'io-%s.png ' "$c"; done)"
	if grep -q '^IC1 ' "$raw"; then
		echo
		echo "Deterministic plots (-icount, boot 1): io-icount-mixed.png and"
		echo "io-icount-uncached.png (reads per second of guest time against"
		echo "concurrency), io-icount-cpu.png (instructions per read, N = 32)."
	fi
} > "$md"

# mcolor <method>: the method's colour in every plot (gnuplot's default
# palette has eight, and there are ten methods).
mcolor() {
	case $1 in
	sync) echo '#555555' ;; pthread) echo '#009e73' ;; posix_aio) echo '#56b4e9' ;;
	posix_aio_tl) echo '#cc79a7' ;;
	kaio) echo '#e69f00' ;; io_uring) echo '#d8c000' ;; threadlet_vdso) echo '#0072b2' ;;
	threadlet_syscall) echo '#d55e00' ;; syslet) echo '#000000' ;; *) echo '#9400d3' ;;
	esac
}

# tput_plot <prefix> <case> <png> <title> <ylabel>: reads/s against
# concurrency, one line per method, from the "N reads/s" files
# $dat/<prefix><case>-<method>.dat; sync (N = 1 only) is drawn as a flat
# reference line. Adds the PNG to $pngs.
tput_plot() {
	local pre=$1 c=$2 png=$3 title=$4 ylabel=$5 plots="" m t v f
	for m in $METHODS; do
		f=$dat/$pre$c-$m.dat
		[ -s "$f" ] || continue
		if [ "$m" = sync ]; then
			v=$(awk '{print $2}' "$f")
			printf '1 %s\n32 %s\n' "$v" "$v" > "$f"
			plots="$plots${plots:+, }'$f' using 1:2 with lines dashtype 2 lw 2 lc rgb '$(mcolor sync)' title 'sync pread (N=1)'"
		else
			t=$m; [ "$m" = kaio ] && t="kaio (O_DIRECT)"
			plots="$plots${plots:+, }'$f' using 1:2 with linespoints lw 2 pt 7 lc rgb '$(mcolor "$m")' title '$t'"
		fi
	done
	[ -n "$plots" ] || return 0
	gnuplot <<GP || { echo "io.sh: gnuplot failed for $png" >&2; return 0; }
set terminal pngcairo size 900,600 font ',10' noenhanced
set output '$png'
set title '$title'
set xlabel 'requests in flight (concurrency)'
set ylabel '$ylabel'
set logscale x 2
set xtics (1, 8, 32)
set xrange [0.8:40]
set yrange [0:*]
set grid
set key outside right
plot $plots
GP
	pngs="$pngs $png"
}

# Wall-clock plots, one per case.
dat=$IMG/plot
rm -rf "$dat"; mkdir -p "$dat"
grep '^IO ' "$raw" | while read -r _ c m n r _; do
	echo "$n $r" >> "$dat/$c-$m.dat"
done
pngs=""
for c in $CASES; do
	title=$c
	[ "$c" = mixed ] && title="mixed, 90% page-cache hits"
	[ "$c" = throttled ] && title="uncached, disk throttled ($THROTTLE)"
	tput_plot "" "$c" "$RESULTS/io-$c.png" \
		"4 KiB random reads, $title (QEMU TCG, wall clock)" "reads/s"
done
# Deterministic plots, from boot 1 of the -icount runs: guest reads/s
# against concurrency for the cases that wait for the device, and the CPU
# instructions per read of every method side by side (N = 32, sync N = 1).
if grep -q '^IC1 ' "$raw"; then
	grep '^IC1 ' "$raw" | while read -r _ c m n r _; do
		echo "$n $r" >> "$dat/ic-$c-$m.dat"
	done
	for c in mixed uncached; do
		title="$c, null_blk, $NULLBLK_NS ns per request"
		[ "$c" = mixed ] && title="mixed (90% page-cache hits), null_blk, $NULLBLK_NS ns per request"
		tput_plot ic- "$c" "$RESULTS/io-icount-$c.png" \
			"4 KiB random reads, $title (QEMU -icount: guest time, deterministic)" \
			"reads per second of guest time"
	done
	# one row per case, one column per method
	awk -v methods="$METHODS" '
		/^IC1 / && (($3 == "sync" && $4 == 1) || $4 == 32) { v[$2, $3] = $7; if (!($2 in seen)) { seen[$2] = 1; cs[++n] = $2 } }
		END { nm = split(methods, ms, " ")
		      for (i = 1; i <= n; i++) { line = cs[i]
			for (m = 1; m <= nm; m++) line = line " " (((cs[i], ms[m]) in v) ? v[cs[i], ms[m]] : "-")
			print line } }' "$raw" > "$dat/ic-cpu.dat"
	cols="" i=2
	for m in $METHODS; do
		t=$m; [ "$m" = sync ] && t="sync (N=1)"; [ "$m" = kaio ] && t="kaio (O_DIRECT)"
		cols="$cols${cols:+, }'$dat/ic-cpu.dat' using $i:xtic(1) lc rgb '$(mcolor "$m")' title '$t'"
		i=$((i + 1))
	done
	gnuplot <<GP || echo "io.sh: gnuplot failed for icount cpu" >&2
set terminal pngcairo size 1000,600 font ',10' noenhanced
set output '$RESULTS/io-icount-cpu.png'
set title 'CPU per 4 KiB read at N = 32 (sync: N = 1), guest instructions (QEMU -icount, deterministic)'
set ylabel 'instructions per read (io process, all threads)'
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set datafile missing '-'
set yrange [0:*]
set grid ytics
set key outside right
plot $cols
GP
	pngs="$pngs $RESULTS/io-icount-cpu.png"
fi
cs=$(sed -n 's/^# clocksource \([^ ]*\).*/\1/p' "$raw" | head -n1)
[ "$cs" = tsc ] || echo "io.sh: warning: guest clocksource '$cs', not tsc (TSC calibration failed at boot?): times are quantised to a tick" >&2
echo "  RESULTS $md$pngs"
[ "$rc" = 0 ] || { echo "io.sh: a boot failed, see $BUILD/logs/io-*.log and $raw" >&2; exit 1; }
exit 0
