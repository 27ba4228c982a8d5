#!/bin/bash
# Where the instructions of one hand-off go, step by step, exactly.
#
# Builds a throwaway copy of the test kernel with
# scripts/profile-segments.patch (local_clock() stamps at each step of the
# threadlet hand-off and of the futex wake it is compared with; never part
# of the series), boots it under -icount (1 ns = 1 guest instruction), runs
# micro.c's handoff, handoff_thread and futex_handoff loops and prints the
# mean instructions of each step over 1,000 iterations
# (scripts/profile-segments.py). The stamps cost instructions themselves:
# the table subtracts the cost of one stamp, measured by two in a row.
#
# Usage: make profile-segments, or scripts/profile-segments.sh [out.md]
# after make kernel and the static $BUILD/tests/micro.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
B=${BUILD:-$repo/build}
src=$B/linux-prof obj=$B/kobj-prof img=$B/profile-segments
out=${1:-$B/results/profile-segments.md}
patch=$repo/scripts/profile-segments.patch

[ -f "$B/kobj/.config" ] && [ -x "$B/tests/micro" ] ||
	{ echo "run make kernel $B/tests/micro first" >&2; exit 1; }
# An image holding only micro.c's binary.
mkdir -p "$img/bin"
cp "$B/tests/micro" "$img/bin/micro"
echo micro > "$img/list"
NO_TOOLS=1 "$repo/tests/mkimage.sh" "$img" "$img/bin" "$img/list" >/dev/null
# A hard-linked copy of the prepared tree; the patched files get their own.
rm -rf "$src"
cp -al "$B/linux" "$src"
for f in $(sed -n 's|^+++ c/\([^[:space:]]*\).*|\1|p' "$patch"); do
	cp --remove-destination "$B/linux/$f" "$src/$f"
done
patch -s -d "$src" -p1 < "$patch"
mkdir -p "$obj"
cp "$B/kobj/.config" "$obj/.config"
make -s -C "$src" O="$obj" CC="ccache gcc" HOSTCC="ccache gcc" \
	KBUILD_BUILD_TIMESTAMP="2026-01-01 00:00:00 UTC" \
	KBUILD_BUILD_USER=threadlets KBUILD_BUILD_HOST=qemu \
	-j"$(nproc)" olddefconfig bzImage

BUILD=$B KERNEL=$obj/arch/x86/boot/bzImage INITRD=$img/initramfs.cpio \
	"$repo/tests/run-qemu.sh" --icount --no-disk \
	--name profile-segments --timeout 1200 --guest-timeout 1200 \
	--cmd "/tests/micro handoff handoff_thread futex_handoff && dmesg" \
	> /dev/null
mkdir -p "$(dirname "$out")"
python3 "$repo/scripts/profile-segments.py" "$B/logs/profile-segments.log" \
	> "$out"
cat "$out"
