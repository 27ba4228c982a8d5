# Sourced by the perf-scripts/*.sh drivers (NAME set first): defaults,
# checks, and the helpers that build a benchmark, its image and boot it.

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
mkdir -p "$RESULTS" "$BUILD/logs"
export BUILD KERNEL

# Under host load the guest often fails to calibrate its TSC against the
# PIT and falls back to jiffies (1 ms clock steps, and clock_gettime
# becomes a system call). Under TCG the guest reads the host's TSC, so the
# wall-clock boots are given the host's TSC frequency (tsc_early_khz).
if [ -z "${WALL_APPEND+set}" ]; then
	khz=$(dmesg 2>/dev/null | sed -n 's/.*tsc: Detected \([0-9]*\)\.\([0-9]\)[0-9]* MHz.*/\1\2/p' | head -n1) || khz=""
	WALL_APPEND=${khz:+tsc_early_khz=${khz}00}
fi

# The -icount boots' data device: a memory-backed null_blk whose requests
# complete after NULLBLK_NS of guest time (the virtio disk's complete in
# host time). NULLBLK_APPEND is its kernel command line.
NULLBLK_NS=${NULLBLK_NS:-200000}
NULLBLK_APPEND="null_blk.memory_backed=1 null_blk.irqmode=2 null_blk.completion_nsec=$NULLBLK_NS null_blk.gb=1"

# build_bench <source.c> <binary> [extra options and libraries...]:
# (re)builds a static benchmark when it is older than its source, a header
# it includes (from <binary>.d, which gcc -MMD -MP writes), the library or
# a library given.
build_bench() {
	local src=$1 bin=$2 f fresh=0
	shift 2
	if [ -x "$bin" ] && [ -f "$bin.d" ]; then
		fresh=1
		# the first rule of the .d file: "<binary>: <source> <headers...>"
		for f in $(sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' "$bin.d" | head -n1 | cut -d: -f2-) \
			"$LIBTL" "$@"; do
			[ ! "$f" -nt "$bin" ] || fresh=0
		done
	fi
	[ "$fresh" = 0 ] || return 0
	mkdir -p "$(dirname "$bin")"
	echo "  CC      $bin"
	$CC -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -pthread -MMD -MP -MF "$bin.d" \
		-I"$REPO/user/include" -I"$REPO/include/uapi" -static \
		-o "$bin" "$src" "$LIBTL" "$@"
}

# bench_image <name> <binary>...: a guest image of its own in $BUILD/<name>
# (busybox, perf, fio, <name>/bin/* and these binaries, by their base
# names, in its test list), so that the main image and its list stay as
# they are. tests/mkimage.sh makes the same bytes from the same inputs.
bench_image() {
	local img=$BUILD/$1 b
	shift
	mkdir -p "$img/bin"
	: > "$img/list"
	for b in "$@"; do
		[ "$b" -ef "$img/bin/${b##*/}" ] || cp "$b" "$img/bin/"
		basename "$b" >> "$img/list"
	done
	"$REPO/tests/mkimage.sh" "$img" "$img/bin" "$img/list"
}

# boot <name> <image dir> [run-qemu.sh options...]: one boot of that
# image, TIMEOUT [900 s] for it and for the guest; serial log
# $BUILD/logs/<name>.log. KERNEL and QEMU_* may be set for it.
boot() {
	local name=$1 img=$2
	shift 2
	INITRD=$img/initramfs.cpio DISK=$img/disk.img "$REPO/tests/run-qemu.sh" --name "$name" --log "$BUILD/logs/$name.log" \
		--timeout "${TIMEOUT:-900}" --guest-timeout "${TIMEOUT:-900}" "$@" > /dev/null
}

# guest_out <log>: the guest's output: no kernel messages, runner markers
# or the firmware's escape sequences before the first line.
guest_out() {
	tr -d '\r' < "$1" | sed 's/^.*\x1b\[2J//' | grep -a -v -e '^\[' -e '^TL-'
}
