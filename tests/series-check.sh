#!/bin/bash
# Checks the kernel series that scripts/mkseries.sh exports (make series).
# One PASS or FAIL line per check, for tests/check.sh; exit status 1 if
# any failed:
#   - the series applies with git am to a fresh clone of the upstream import;
#   - after the last patch, the files it touches are exactly ours, and each
#     is identical to the prepared tree build/linux (overlay + patches);
#   - scripts/checkpatch.pl --strict reports no ERROR on any patch (its
#     warnings and checks go to build/logs/series-checkpatch.log).
# With --build (make series-check) also: the kernel builds after every
# patch (our fragment on tinyconfig, olddefconfig at each patch, one
# object dir, bzImage), one line per patch; logs in build/logs/series-*.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
B=${BUILD:-$REPO/build}
OUT=$B/series
# The tree is build/series/linux and the objects build/series/kobj: the
# same relative layout as build/linux and build/kobj, so that ccache
# (paths relative to CCACHE_BASEDIR) hits the main build's entries.
AM=$OUT/linux
KOBJ=$OUT/kobj
LOG=$B/logs
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$REPO")} CCACHE_NOHASHDIR=1
mkdir -p "$LOG"

failed=0
result() {	# result <status> <what>
	if [ "$1" = 0 ]; then echo "PASS $2"; else echo "FAIL $2"; failed=1; fi
}

if ! "$REPO/scripts/mkseries.sh" "$REPO" > "$LOG/series-export.log" 2>&1; then
	result 1 "series: make series exports the kernel series (see $LOG/series-export.log)"
	exit 1
fi
mapfile -t patches < <(ls "$OUT"/patches/[0-9]*.patch | grep -v '/0000-cover-letter')

ours=$({ cat "$B/linux/.threadlets/overlay-files"
	 sed -n 's|^+++ b/||p' "$B"/linux/.threadlets/applied/*.patch | cut -f1; } | sort -u)

# 1. git am on a fresh clone of the upstream commit. Without --build the
# clone checks out only our files and checkpatch.pl with its data (a
# sparse checkout: git am needs no others, and the whole tree is 80,000
# files); with --build, the whole tree.
[ "${1:-}" = --build ] || AM=$OUT/am
rm -rf "$AM"
if [ "${1:-}" = --build ]; then
	git clone -q --branch upstream "$OUT/git" "$AM"
else
	git clone -q --no-checkout --branch upstream "$OUT/git" "$AM" &&
		{ echo "$ours"; echo scripts/checkpatch.pl; echo scripts/spelling.txt
		  echo scripts/const_structs.checkpatch
		  # what checkpatch.pl looks for to know it is in a kernel tree
		  printf '%s\n' COPYING CREDITS Kbuild Makefile README \
			drivers/Makefile fs/Makefile init/Makefile ipc/Makefile \
			lib/Makefile; } |
		git -C "$AM" sparse-checkout set --no-cone --stdin &&
		git -C "$AM" read-tree -mu HEAD
fi > "$LOG/series-am.log" 2>&1 &&
	git -C "$AM" -c user.name=check -c user.email=check@localhost -c gc.auto=0 \
		am -q "${patches[@]}" >> "$LOG/series-am.log" 2>&1
am=$?
result $am "series: ${#patches[@]} patches apply with git am to a fresh upstream import"
[ $am = 0 ] || exit 1

# 2. The tree after the last patch is the prepared tree, for our files.
touched=$(git -C "$AM" diff --name-only upstream HEAD | sort)
same=0
[ "$ours" = "$touched" ] || { same=1; diff <(echo "$ours") <(echo "$touched") > "$LOG/series-tree.log"; }
for f in $ours; do
	cmp -s "$AM/$f" "$B/linux/$f" || { same=1; echo "differs: $f" >> "$LOG/series-tree.log"; }
done
result $same "series: the tree after the last patch equals build/linux for our $(echo "$ours" | wc -l) files"

# 3. checkpatch --strict, in the kernel tree (so it can look up git ids).
# A patch checkpatch.pl could not check (it failed without a "total:"
# line) counts as an error; a clean patch prints nothing under --terse.
: > "$LOG/series-checkpatch.log"
unchecked=0
for p in "$OUT"/patches/*.patch; do
	out=$(cd "$AM" && perl scripts/checkpatch.pl --strict --terse "$p" 2>&1)
	rc=$?
	echo "$out" >> "$LOG/series-checkpatch.log"
	[ $rc = 0 ] || echo "$out" | grep -q '^total: ' || unchecked=$((unchecked + 1))
done
errors=$(( $(grep -c ': ERROR:' "$LOG/series-checkpatch.log") + unchecked ))
warnings=$(grep -c ': WARNING:' "$LOG/series-checkpatch.log")
checks=$(grep -c ': CHECK:' "$LOG/series-checkpatch.log")
[ "$errors" = 0 ]
result $? "series: checkpatch.pl --strict: $errors errors ($warnings warnings, $checks checks) in ${#patches[@]} patches"

[ "${1:-}" = --build ] || exit $failed

# 4. The kernel builds after every patch, incrementally in one object dir.
KMAKE=(make -C "$AM" O="$KOBJ" CC="ccache gcc" HOSTCC="ccache gcc" -j"${JOBS:-2}"
       KBUILD_BUILD_TIMESTAMP="2026-01-01 00:00:00 UTC" KBUILD_BUILD_USER=threadlets
       KBUILD_BUILD_HOST=qemu)
mapfile -t commits < <(git -C "$AM" rev-list --reverse upstream..HEAD)
rm -rf "$KOBJ"
mkdir -p "$KOBJ"
i=0
for c in upstream "${commits[@]}"; do
	name=$(git -C "$AM" log -1 --format=%s "$c")
	git -C "$AM" checkout -q "$c"
	log=$LOG/series-build-$(printf '%02d' $i).log
	if [ $i = 0 ]; then
		"${KMAKE[@]}" -s tinyconfig > "$log" 2>&1 &&
			(cd "$KOBJ" && "$AM/scripts/kconfig/merge_config.sh" -m -O "$KOBJ" \
				"$KOBJ/.config" "$REPO/config/threadlets.config") >> "$log" 2>&1
	fi
	nice "${KMAKE[@]}" -s olddefconfig >> "$log" 2>&1 &&
		nice "${KMAKE[@]}" -s bzImage >> "$log" 2>&1
	rc=$?
	if [ $i -gt 0 ] || [ $rc != 0 ]; then
		result $rc "series: the kernel builds after patch $i ($name)"
	fi
	i=$((i + 1))
done
# The last patch must have turned the feature on.
grep -q '^CONFIG_THREADLETS=y' "$KOBJ/.config"
result $? "series: CONFIG_THREADLETS=y in the build of the whole series"
exit $failed
