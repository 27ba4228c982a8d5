#!/bin/bash
# Boots the test kernel once and runs the threadlet fuzzer
# (tests/guest/threadlet-fuzz.c) in it, then ties every kernel report in
# the serial log to the fuzzer round, and so the seed, that was running.
#
# Usage: tests/fuzz.sh [--seed S] [--time T] [--exclude F,..] [--name NAME]
#                      [--bin PROGRAM] [--repro CMD] [-- run-qemu options]
#   --seed S   the fuzzer's seed (default 1)
#   --time T   seconds of fuzzing (default 60); the guest gets T+120 s,
#              the whole boot T+300 s
#   --exclude F,...  features the fuzzer leaves out (its -x), e.g. to get
#              past a known bug; "threadlet-fuzz -h" lists them
#   --name N   name of the run: the log is $BUILD/logs/N.log (default fuzz)
#   --bin P    the guest's fuzzer: threadlet-fuzz (default), or its 32-bit
#              build threadlet-fuzz-m32
#   --repro C  the host command that runs this again, for the reproduce
#              lines (default "make fuzz")
#   --peers    run the fuzzer beside Debian's stress-ng and trinity
#              (tests/image/fuzz-peers; an image made with WITH_PEERS=1)
# BUILD, KERNEL, INITRD, DISK, QEMU_BIN and QEMU_CPU are passed on to
# tests/run-qemu.sh (see there).
#
# Exit status: that of run-qemu.sh (0 pass, 1 fuzzer failure, 2 kernel
# report, 3 timeout or crash).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
B=${BUILD:-$HERE/../build}
seed=1 time=60 name=fuzz exclude="" bin=threadlet-fuzz repro="make fuzz" peers=0
while [ $# -gt 0 ]; do
	case "$1" in
	--seed) seed=$2; shift ;;
	--time) time=$2; shift ;;
	--name) name=$2; shift ;;
	--exclude) exclude=$2; shift ;;
	--bin) bin=$2; shift ;;
	--repro) repro=$2; shift ;;
	--peers) peers=1 ;;
	--) shift; break ;;
	*) echo "fuzz.sh: unknown option $1" >&2; exit 64 ;;
	esac
	shift
done
case "$seed$time" in
*[!0-9]*|"") echo "fuzz.sh: SEED and TIME must be numbers" >&2; exit 64 ;;
esac
case "$bin" in
threadlet-fuzz|threadlet-fuzz-m32) ;;
*) echo "fuzz.sh: --bin takes threadlet-fuzz or threadlet-fuzz-m32" >&2; exit 64 ;;
esac
case "$exclude" in
*[!a-z,]*) echo "fuzz.sh: --exclude takes feature names, comma-separated" >&2; exit 64 ;;
esac
append="tl.fuzz_seed=$seed tl.fuzz_time=$time${exclude:+ tl.fuzz_exclude=$exclude}"
run=$bin note=""
if [ "$peers" = 1 ]; then
	run=fuzz-peers note=", beside stress-ng and trinity"
	append="$append tl.fuzz_bin=$bin"
fi

# Extra run-qemu options; an --append of theirs joins ours.
extra=()
while [ $# -gt 0 ]; do
	if [ "$1" = --append ] && [ $# -gt 1 ]; then
		append="$append $2"
		shift 2
	else
		extra+=("$1")
		shift
	fi
done

mkdir -p "$B/logs"
log=$B/logs/$name.log
echo "fuzz.sh: $bin, seed $seed, ${time}s of fuzzing${exclude:+, without $exclude}$note; log $log"
"$HERE/run-qemu.sh" --name "$name" --log "$log" --run "$run" \
	--guest-timeout $((time + 120)) --timeout $((time + 300)) \
	--append "$append" "${extra[@]}"
rc=$?
[ -f "$log" ] || exit $rc

# The fuzzer's own lines are indented by the guest's /init; the kernel's
# are not. Same report patterns as run-qemu.sh.
reports='BUG:|WARNING:|Oops|Kernel panic|general protection fault|UBSAN:|'
reports+='possible recursive locking|circular locking dependency|inconsistent lock state|'
reports+='DEBUG_LOCKS_WARN_ON|lockdep|detected stalls? on CPU|rcu: INFO|RCU stall|'
reports+='soft lockup|hard LOCKUP|blocked for more than|kernel BUG at|Unable to handle'
# Call-trace lines are not reports (as in run-qemu.sh): a trace of an
# expected event (fault injection) can list a lockdep_* function.
frame='^(\[ *[0-9]+\.[0-9]+\] )? *(\? )?[A-Za-z0-9_.]+\+0x[0-9a-f]+/0x[0-9a-f]+( \[[^]]*\])?$'
xopt=${exclude:+ FUZZ_EXCLUDE=$exclude}
gxopt=${exclude:+ -x $exclude}
# The patterns go through the environment: -v would eat their backslashes.
RE=$reports FRAME=$frame awk -v seed="$seed" -v xopt="$xopt" -v gxopt="$gxopt" \
	-v bin="$bin" -v repro="$repro" '
	/^    # round [0-9]+ seed [0-9]+ \(/ { round = $3; rseed = $5; secs = $6; gsub(/[()s]/, "", secs) }
	/^    # (VIOLATION|HANG)/ { sub(/^    # /, ""); print "fuzz.sh: round " round ": " $0 }
	/^    # round [0-9]+ seed [0-9]+: child ended by signal/ { sub(/^    # /, ""); sig[++nsig] = $0 }
	!/^    / && $0 !~ ENVIRON["FRAME"] && $0 ~ ENVIRON["RE"] {
		n++
		if (n <= 10) {
			if (round == "")
				print "fuzz.sh: kernel report before the fuzzer started: " $0
			else
				printf "fuzz.sh: kernel report in round %s (round seed %s): %s\n" \
				       "fuzz.sh:   reproduce: %s SEED=%s TIME=<as before>%s, " \
				       "or in the guest: %s -s %s -r %s -t %s%s\n",
				       round, rseed, $0, repro, seed, xopt, bin, seed, round, secs, gxopt
		}
	}
	/^    # threadlet-fuzz: seed=.*iterations=/ { sub(/^    # /, ""); summary = $0 }
	END {
		for (i = 1; i <= nsig && i <= 5; i++)
			print "fuzz.sh: (diagnostic) " sig[i]
		if (nsig > 5)
			print "fuzz.sh: (diagnostic) ... " nsig - 5 " more rounds ended by a signal"
		if (n > 10)
			print "fuzz.sh: ... " n - 10 " more kernel report lines"
		if (summary != "")
			print "fuzz.sh: " summary
	}' "$log"
exit $rc
