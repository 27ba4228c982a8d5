#!/bin/bash
# Runs the kernel's checkpatch.pl on our kernel files (--strict, except for
# trace event headers and uapi headers, where --strict asks for kernel-only
# macros such as BIT()) and on
# every patch of the series. Exit status 0 only if all are clean.
# Trace event headers may end a macro with a semicolon: a TRACE_DEFINE_ENUM()
# per item of a list needs one (as upstream's afs.h, rxrpc.h and others do).
set -uo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CP="perl $REPO/build/linux/scripts/checkpatch.pl --no-tree --quiet"
[ -f "$REPO/build/linux/scripts/checkpatch.pl" ] || {
	echo "checkpatch: build/linux missing: run 'make prepare'" >&2
	exit 2
}
cd "$REPO" || exit 2
fail=0
while read -r f; do
	case "$f" in
	include/trace/events/*) opts="--ignore TRAILING_SEMICOLON" ;;
	include/uapi/*) opts= ;;
	*) opts=--strict ;;
	esac
	$CP $opts -f "$REPO/$f" || fail=1
done < <(find arch include kernel -name '*.[ch]' | sort)
for p in $(grep -v -e '^#' -e '^$' patches/series); do
	$CP "$REPO/patches/$p" || fail=1
done
[ $fail = 0 ] && echo "checkpatch: clean"
exit $fail
