#!/bin/bash
# Boots the test kernel in QEMU and judges the run from its serial log.
#
# Usage: run-qemu.sh [options]
#   --run "a b c"    guest tests to run (default: all, in tests/list order)
#   --cmd "cmd"      run one shell command in the guest instead of tests
#   --shell          interactive shell in the guest (no timeout, no verdict)
#   --timeout S      host timeout for the whole boot (default 600)
#   --guest-timeout S  per-test timeout inside the guest (default 120)
#   --icount         deterministic mode: -icount shift=0,sleep=off, one
#                    vCPU, and no input from the host that varies between
#                    boots: a fixed RTC start, QEMU's random numbers (RDRAND)
#                    from a fixed seed, no address space randomization in
#                    the guest (norandmaps)
#   --no-disk        no virtio disk (its requests complete in host time,
#                    so under --icount they would shift every later event)
#   --smp N          N vCPUs, 1 to 4 (default 2; --icount boots one)
#   --kvm            use KVM (hangs at boot on some hosts; TCG is default)
#   --log FILE       where to save the serial log (default build/logs/...)
#   --name NAME      name of the run, used for the default log file
#   --append "..."   extra kernel command line
#   --drive-opts "a=b,..."  extra -drive options for the disk, e.g. QEMU's
#                    throttling.iops-total=N (default: none)
#
# Verdict (exit status 0 only if all hold):
#   - the guest printed a TAP plan and a result line for every planned test,
#     and every result is "ok";
#   - the guest reached the end marker before the timeout;
#   - the kernel log has no BUG:, WARNING:, Oops, panic, lockdep, RCU stall,
#     soft lockup or hung task report, and the initramfs unpacked whole.
# Exit status: 0 pass, 1 test failure, 2 kernel report, 3 timeout/crash.
#
# Environment: BUILD, KERNEL, INITRD, DISK (defaults under build/), and
# QEMU_BIN [qemu-system-x86_64] (qemu-system-i386 boots the i386 kernel),
# QEMU_MEM [1G]: the guest's memory, which holds the unpacked initramfs.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
B=${BUILD:-$HERE/../build}
KERNEL=${KERNEL:-$B/kobj/arch/x86/boot/bzImage}
INITRD=${INITRD:-$B/initramfs.cpio}
DISK=${DISK:-$B/disk.img}

run="" cmd="" shell=0 timeout=600 gtimeout=120 icount=0 kvm=0 log="" name=run append="" drive_opts="" disk=1 cpus=2
while [ $# -gt 0 ]; do
	case "$1" in
	--run) run=$2; shift ;;
	--cmd) cmd=$2; shift ;;
	--shell) shell=1 ;;
	--timeout) timeout=$2; shift ;;
	--guest-timeout) gtimeout=$2; shift ;;
	--icount) icount=1 ;;
	--no-disk) disk=0 ;;
	--smp) cpus=$2; shift ;;
	--kvm) kvm=1 ;;
	--log) log=$2; shift ;;
	--name) name=$2; shift ;;
	--append) append=$2; shift ;;
	--drive-opts) drive_opts=$2; shift ;;
	*) echo "run-qemu: unknown option $1" >&2; exit 64 ;;
	esac
	shift
done

files=("$KERNEL" "$INITRD")
[ "$disk" = 0 ] || files+=("$DISK")
for f in "${files[@]}"; do
	[ -f "$f" ] || { echo "run-qemu: $f missing: run 'make image' first" >&2; exit 64; }
done

# tsc=reliable: the TCG CPU has no constant_tsc and there is no HPET
# without ACPI, so the kernel would fall back to 1 ms jiffies for
# CLOCK_MONOTONIC; the TSC is what -icount makes deterministic.
# no_timer_check: the IO-APIC timer check at boot counts ticks over a
# short busy loop; TCG on a loaded host can miss them there and the check
# panics ("IO-APIC + timer doesn't work!") although the timer works.
cmdline="console=ttyS0 panic=-1 oops=panic loglevel=5 tsc=reliable no_timer_check"
cmdline="$cmdline tl.timeout=$gtimeout"
[ -z "$run" ] || cmdline="$cmdline tl.run=$(echo "$run" | tr ' ' ',')"
[ -z "$cmd" ] || cmdline="$cmdline tl.cmd=$(echo "$cmd" | tr ' ' '+')"
[ "$shell" = 0 ] || cmdline="$cmdline tl.shell=1"
# Under -icount with sleep=off an idle guest's clock jumps to its next
# timer, while a disk request takes host time: a task waiting for the disk
# can be "blocked for more than 30 seconds" of guest time after a few
# milliseconds. The hung-task detector means nothing there.
[ "$icount" = 0 ] || cmdline="$cmdline sysctl.kernel.hung_task_timeout_secs=0"
# Address space layouts from the (seeded) RNG would still differ from one
# build of a program to the next; without randomization they do not.
[ "$icount" = 0 ] || cmdline="$cmdline norandmaps"
[ -z "$append" ] || cmdline="$cmdline $append"
# The x86 boot protocol takes at most 2047 bytes (COMMAND_LINE_SIZE - 1).
if [ ${#cmdline} -gt 2047 ]; then
	echo "run-qemu: kernel command line of ${#cmdline} bytes, the limit is 2047" >&2
	exit 64
fi

# Two sockets of one core: SeaBIOS lists one MP-table CPU per socket, and
# without ACPI the MP table is how the kernel finds the second CPU.
# With -icount, QEMU 7.2 runs vCPUs round-robin and never schedules the
# second one again once it spins in cpu_init() at boot: use one CPU.
case "$cpus" in 1|2|3|4) ;; *) echo "run-qemu: --smp takes 1 to 4" >&2; exit 64 ;; esac
smp=$cpus,sockets=$cpus,cores=1,threads=1
[ "$icount" = 0 ] || smp=1
qemu=("${QEMU_BIN:-qemu-system-x86_64}" -nographic -no-reboot -m "${QEMU_MEM:-1G}" -smp "$smp"
	-kernel "$KERNEL" -initrd "$INITRD" -append "$cmdline" -nic none)
[ "$disk" = 0 ] ||
	qemu+=(-drive "file=$DISK,if=virtio,format=raw,snapshot=on${drive_opts:+,$drive_opts}")
if [ "$kvm" = 1 ]; then
	qemu+=(-enable-kvm -cpu host)
else
	qemu+=(-accel tcg -cpu "${QEMU_CPU:-max}")
fi
# shellcheck disable=SC2054 # QEMU's options take commas
[ "$icount" = 0 ] ||
	qemu+=(-icount shift=0,sleep=off -rtc base=2026-01-01T00:00:00,clock=vm -seed 1)

if [ "$shell" = 1 ]; then
	exec "${qemu[@]}" -serial mon:stdio -display none -nographic
fi

mkdir -p "$B/logs"
[ -n "$log" ] || log=$B/logs/$name.log
start=$(date +%s)
# A guest that hangs may spin with interrupts off and print nothing: at the
# timeout, QEMU's monitor says where each vCPU is (tests/hang-dump.py)
# before QEMU is stopped, and that goes to the end of the log.
mon=$B/logs/$name.mon
rm -f "$mon" "$log.hang"
"${qemu[@]}" -monitor "unix:$mon,server=on,wait=off" < /dev/null > "$log" 2>&1 &
qpid=$!
(
	for ((i = 0; i < timeout; i++)); do
		sleep 1
		kill -0 "$qpid" 2> /dev/null || exit 0
	done
	python3 "$(dirname "$0")/hang-dump.py" "$mon" \
		"${KERNEL%/arch/x86/boot/bzImage}/System.map" > "$log.hang" 2>&1
	kill "$qpid" 2> /dev/null
	sleep 5
	kill -9 "$qpid" 2> /dev/null
) &
wpid=$!
wait "$qpid"
qrc=$?
wait "$wpid"
rm -f "$mon"
secs=$(( $(date +%s) - start ))
tr -d '\r' < "$log" > "$log.tmp" && mv "$log.tmp" "$log"

verdict=0
reason=""
if [ -f "$log.hang" ]; then
	cat "$log.hang" >> "$log"
	rm -f "$log.hang"
	qrc=124
fi
if [ $qrc = 124 ] || [ $qrc = 137 ]; then
	verdict=3 reason="timeout: guest still running after ${timeout}s"
elif ! grep -q '^TL-GUEST-DONE' "$log"; then
	verdict=3 reason="guest did not finish (crash or panic, qemu exit $qrc)"
fi

# Kernel reports. Test output is indented by the guest's /init, so these
# patterns only match lines the kernel printed.
reports='BUG:|WARNING:|Oops|Kernel panic|general protection fault|UBSAN:|'
reports+='possible recursive locking|circular locking dependency|inconsistent lock state|'
reports+='DEBUG_LOCKS_WARN_ON|lockdep|detected stalls? on CPU|rcu: INFO|RCU stall|'
reports+='soft lockup|hard LOCKUP|blocked for more than|'
# The check-debug kernel's KASAN (also a "BUG:"), debugobjects,
# and the kmemleak listing that the guest prints after the tests.
reports+='BUG: KASAN|ODEBUG:|unreferenced object|'
# An image that did not fit the guest's memory: tests would be missing.
reports+='Initramfs unpacking failed'
# Call-trace lines are not reports: a trace of an expected event (an
# allocation failure under fault injection) can list a lockdep_* function.
frame='^(\[ *[0-9]+\.[0-9]+\] )? *(\? )?[A-Za-z0-9_.]+\+0x[0-9a-f]+/0x[0-9a-f]+( \[[^]]*\])?$'
kreports() { grep -E -v '^    ' "$log" | grep -E -v "$frame" | grep -E "$@" "$reports"; }
if kreports -q; then
	[ $verdict = 0 ] && verdict=2
	reason="${reason:+$reason; }kernel report: $(kreports -m1)"
fi
# kmemleak's count, from a guest whose kernel has it.
leaks=$(sed -n 's/^TL-KMEMLEAK leaks=//p' "$log" | tail -n1)
if [ -n "$leaks" ] && [ "$leaks" != 0 ]; then
	[ $verdict = 0 ] && verdict=2
	reason="${reason:+$reason; }kmemleak: $leaks unreferenced objects"
fi

if [ -n "$cmd" ]; then
	sed -n '/^TL-CMD-RC=/!p' "$log" | grep -v '^\[' || true
	crc=$(sed -n 's/^TL-CMD-RC=//p' "$log")
	[ "$verdict" != 0 ] || [ "$crc" = 0 ] || verdict=1 reason="command exited $crc"
	[ -z "$reason" ] || echo "run-qemu: $reason (log: $log)" >&2
	exit $verdict
fi

plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$log" | head -n1)
oks=$(grep -cE '^ok [0-9]+' "$log")
fails=$(grep -cE '^not ok [0-9]+' "$log")
grep -E '^(not )?ok [0-9]+' "$log" | sed 's/^/  /'
# A failed test's own failing checks and diagnostics, so that a log that
# is not kept (CI's) still says what failed.
awk '/^# run /		{ n = 0; delete buf; next }
     /^    +(not ok|# )/	{ if (n < 20) buf[n++] = $0; next }
     /^not ok [0-9]+/	{ for (i = 0; i < n; i++) print "  " buf[i]; n = 0 }' "$log"
if [ -z "$plan" ]; then
	[ $verdict = 0 ] && verdict=3
	reason="${reason:+$reason; }no TAP plan in the log"
elif [ $((oks + fails)) -ne "$plan" ]; then
	[ $verdict = 0 ] && verdict=3
	reason="${reason:+$reason; }$((oks + fails)) of $plan results"
fi
if [ "$fails" -gt 0 ] && [ $verdict = 0 ]; then
	verdict=1 reason="$fails test(s) failed"
fi
echo "run-qemu: $name: ${oks} ok, ${fails} not ok, ${secs}s${reason:+, $reason}; log: $log"
# Machine-readable summary for the callers (tests/check.sh).
echo "TL-SUMMARY ok=$oks fail=$fails plan=${plan:-0} verdict=$verdict${leaks:+ leaks=$leaks}" >> "$log"
exit $verdict
