# Sourced by the perf-scripts/*.sh drivers: shared defaults, checks, and
# the rule that builds a static benchmark against libthreadlet.
# Callers set NAME (for messages) before sourcing.

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-$REPO/build}
KERNEL=${KERNEL:-$BUILD/kobj/arch/x86/boot/bzImage}
LIBTL=${LIBTL:-$BUILD/user/libthreadlet.a}
RESULTS=${RESULTS:-$BUILD/results}
CC=${CC:-gcc}

die() { echo "$NAME: $*" >&2; exit 64; }

[ -f "$KERNEL" ] || die "no kernel at $KERNEL (make kernel)"
[ -f "$LIBTL" ] || die "no library at $LIBTL (make user)"

# build_bench <source.c> <binary> [extra libraries...]: (re)builds a static
# benchmark when it is older than its source or the library.
build_bench() {
	local src=$1 bin=$2
	shift 2
	local h fresh=1
	for h in "$src" "$LIBTL" "$(dirname "$src")"/*.h; do
		[ ! "$h" -nt "$bin" ] || fresh=0
	done
	if [ -x "$bin" ] && [ "$fresh" = 1 ]; then
		return 0
	fi
	mkdir -p "$(dirname "$bin")"
	echo "  CC      $bin"
	$CC -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -pthread \
		-I"$REPO/user/include" -I"$REPO/include/uapi" -static \
		-o "$bin" "$src" "$LIBTL" "$@"
}
