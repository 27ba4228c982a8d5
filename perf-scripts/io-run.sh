#!/bin/sh
# io-run.sh wall | throttled <primer reads> | icount [case]: the guest side
# of perf-scripts/io.sh (the kernel command line is too short for it).
# wall and throttled take a third argument, methods separated by commas:
# those alone, in every step (a short run). Its output is read by
# perf-scripts/report.py ingest io.
set -eu
mode=$1 prime=${2:-0} only=${3:-}
methods=$(/tests/io -l)
[ -z "$only" ] || methods=$(echo "$only" | tr , ' ')
# iobin <method>: the io build that runs it: posix_aio_tl's aio_* are
# libthreadlet-aio's (io-tlaio, built with -DIO_TLAIO), the rest io's.
iobin() {
	case $1 in
	posix_aio_tl) echo /tests/io-tlaio ;;
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
if [ -z "$only" ]; then
	# shellcheck disable=SC2086
	/tests/io $copts $opts $wopt > /tmp/out.all 2>&1 || { echo "io: exit $?"; rc=1; }
	# shellcheck disable=SC2086
	/tests/io-tlaio $copts $opts >> /tmp/out.all 2>&1 || { echo "io-tlaio: exit $?"; rc=1; }
	runs=3
else
	: > /tmp/out.all
	runs=0
	for m in $methods; do
		runs=$((runs + 1))
		force=""
		[ "$m" != threadlet_syscall ] || force=THREADLET_FORCE_SYSCALL=1
		# shellcheck disable=SC2086
		env $force "$(iobin $m)" $copts $opts $wopt $m >> /tmp/out.all 2>&1 ||
			{ echo "io $m: exit $?"; rc=1; }
	done
fi
cat /tmp/out.all
[ "$(grep -c '^io: all reads checked' /tmp/out.all)" = $runs ] || { echo "io: did not finish"; rc=1; }
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
#    "FIO case engine N run reads-asked ramped", fio's JSON output, then
#    "FIO-END" (ramped: reads in the ramp are done but not counted).
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
		--output-format=json
}
fio_extra="" ramped=0
[ "$mode" != throttled ] || fio_extra="--ramp_time=200ms" ramped=1
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
			case " $methods " in
			*" $om "*) ;;
			*) continue ;;
			esac
			for r in 1 2 3; do
				# ours right before each fio run: both see the same host load
				# shellcheck disable=SC2086
				"$(iobin $om)" -c "$c" -n "$n" -r 1 $opts $om > /tmp/xio 2>&1 || { echo "io $c $om $n: exit $?"; rc=1; }
				grep -q '^io: all reads checked' /tmp/xio || { echo "io $c $om $n: did not finish"; rc=1; }
				sed -n "s/^IO $c $om $n /XIO $c $om $n $r /p" /tmp/xio
				fio_job "$c" "$e" "$n" "$per" > /tmp/fio.out 2>&1 || { echo "fio $c $e $n: exit $?"; rc=1; }
				grep -q '"jobs"' /tmp/fio.out || { echo "fio $c $e $n: no result"; cat /tmp/fio.out; rc=1; }
				# report.py reads the JSON between these two lines
				echo "FIO $c $e $n $r $((per * jobs)) $ramped"
				cat /tmp/fio.out
				echo FIO-END
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
