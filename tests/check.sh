#!/bin/bash
# "make check": every guest test in one boot, then the runner's own
# self-tests, then the host-side checks of the build. Ends with the line
# "N passed, N failed" that CI reads.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
B=${BUILD:-$HERE/../build}
pass=0 fail=0

count() {	# count <name> <status>
	if [ "$2" = 0 ]; then
		pass=$((pass + 1)); echo "PASS $1"
	else
		fail=$((fail + 1)); echo "FAIL $1"
	fi
}

# count_lines <command...>: counts each "PASS ..."/"FAIL ..." line the script
# prints (with BUILD set); other lines pass through.
count_lines() {
	local verdict what
	while read -r verdict what; do
		case "$verdict" in
		PASS) count "$what" 0 ;;
		FAIL) count "$what" 1 ;;
		*) echo "$verdict $what" ;;
		esac
	done < <(BUILD=$B "$@")
}

# guest_run <what> <name> [run-qemu args]: one boot; each guest test is
# one result, and a kernel report, a crash or a timeout one more.
guest_run() {
	local what=$1 name=$2 log=$B/logs/$2.log rc summary ok bad plan missing
	shift 2
	"$HERE/run-qemu.sh" --name "$name" --timeout 1200 "$@"
	rc=$?
	summary=$(grep '^TL-SUMMARY' "$log" | tail -n1)
	ok=$(echo "$summary" | sed -n 's/.* ok=\([0-9]*\).*/\1/p')
	bad=$(echo "$summary" | sed -n 's/.* fail=\([0-9]*\).*/\1/p')
	plan=$(echo "$summary" | sed -n 's/.* plan=\([0-9]*\).*/\1/p')
	pass=$((pass + ${ok:-0}))
	fail=$((fail + ${bad:-0}))
	missing=$(( ${plan:-0} - ${ok:-0} - ${bad:-0} ))
	[ "$missing" -le 0 ] || fail=$((fail + missing))
	# A kernel report or a crash fails the run even when every test said ok.
	[ "$rc" -lt 2 ]
	count "$what run is clean (no kernel report, no crash, no timeout)" $?
}

# 1. All guest tests on the x86-64 kernel, one boot; then the 32-bit ones
# on the native i386 kernel (qemu-system-i386), one boot.
guest_run "guest" check
# QEMU's "max" i386 CPU says AuthenticAMD with a K7 family, for which the
# i386 kernel warns that SMP is unsupported: an Intel vendor string.
BUILD=$B KERNEL=$B/kobj-i386/arch/x86/boot/bzImage INITRD=$B/i386/initramfs.cpio \
	DISK=$B/i386/disk.img QEMU_BIN=qemu-system-i386 QEMU_CPU=max,vendor=GenuineIntel \
	guest_run "i386 guest" check-i386

# The Open POSIX AIO tests against libthreadlet-aio, and glibc's beside
# them, in one more boot (a SKIP line when ../shared is absent).
count_lines "$HERE/posix-aio.sh"

# 2. The runner must fail each of these runs, for the right reason.
expect_fail() {	# expect_fail <name> <expected exit> <run-qemu args...>
	local name=$1 want=$2
	shift 2
	"$HERE/run-qemu.sh" --name "selftest-$name" "$@" > /dev/null 2>&1
	local got=$?
	[ "$got" = "$want" ]
	count "runner fails a run with $name (exit $got, want $want)" $?
}
expect_fail failing-test 1 --run "boot selftest-fail"
expect_fail kernel-warning 2 --run "selftest-warn"
expect_fail leftover-process 1 --run "selftest-leftover boot"
expect_fail guest-hang 3 --run "selftest-hang" --timeout 40 --guest-timeout 600
expect_fail too-long-command-line 64 --append "tl.pad=$(printf '%02100d' 0)"

# 3. A second build right after the first must not rebuild either kernel.
before=$(stat -c %Y "$B/kobj/arch/x86/boot/bzImage" "$B/kobj-i386/arch/x86/boot/bzImage")
make -s -C "$HERE/.." kernel kernel-i386 > "$B/logs/rebuild.log" 2>&1
after=$(stat -c %Y "$B/kobj/arch/x86/boot/bzImage" "$B/kobj-i386/arch/x86/boot/bzImage")
[ "$before" = "$after" ]
count "kernels are not rebuilt when nothing changed" $?

# 4. Kernel style: checkpatch.pl on our kernel files and patches.
"$HERE/../scripts/checkpatch.sh" > "$B/logs/checkpatch.log" 2>&1
count "checkpatch.pl is clean on our kernel files and patches" $?

# 5. The man pages lint clean (groff -ww, mandoc -Tlint, man -l); the
# library installs into a temporary DESTDIR, and programs build against
# it with pkg-config, shared and static (one PASS or FAIL line per check;
# the programs stay in build/install-check/).
"$HERE/../scripts/man-lint.sh" > "$B/logs/man-lint.log" 2>&1
count "man pages lint clean (groff -ww, mandoc -Tlint, man -l)" $?
# The fallback reasons: the uapi header's list is well formed and keeps
# the released values; docs/threadlets.md and threadlets(7) list it.
"$HERE/../scripts/fallback-check.sh" > "$B/logs/fallback-check.log" 2>&1
count "fallback reasons: docs and man pages list the uapi header's" $?
# make image ran install-check.sh (make install-stage) before the guest
# boot, which ran the programs it built (install-run): its lines are in
# the log.
if [ -f "$B/logs/install-check.log" ]; then
	count_lines cat "$B/logs/install-check.log"
else
	count "install-check ran before the guest image was built" 1
fi

# 6. make deb: the packages, lintian, dpkg -i into a scratch root, a
# program built against them.
count_lines "$HERE/deb-check.sh"

# 7. The benchmarks' report tool (perf-scripts/report.py) on a fixed set
# of guest outputs in tests/report/, against the expected tables.
count_lines "$HERE/report-check.sh"

# 8. The kernel series (make series): it applies with git am to a fresh
# upstream import, the tree after it equals build/linux for our files, and
# checkpatch.pl --strict finds no error in any patch. The build after
# every patch is make series-check, not run here (it takes too long).
count_lines "$HERE/series-check.sh"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
