#!/bin/bash
# Builds the guest initramfs and the ext4 test disk.
# Usage: mkimage.sh <build-dir> <test-bin-dir> <test-list>
# The initramfs holds busybox, /init, the static test programs (in the order
# of <test-list>), Debian's perf and fio with every library they load, and
# the library and programs of tests/install-check.sh.
# Environment: BUSYBOX, the busybox to use [/bin/busybox]; NO_TOOLS=1
# leaves perf and fio out (the native i386 guest, which cannot run them);
# WITH_PEERS=1 adds stress-ng, trinity and tests/image/fuzz-peers.
# The disk holds data files for the I/O tests; it is made with mke2fs -d so
# no root mount is needed, and QEMU opens it with snapshot=on.
set -euo pipefail

B=$(cd "$1" && pwd)
BIN=$2
LIST=$3
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$B/initramfs.d

rm -rf "$ROOT"
mkdir -p "$ROOT"/{bin,sbin,usr/bin,etc,proc,sys,dev,tmp,mnt,tests,lib64}
cp "${BUSYBOX:-/bin/busybox}" "$ROOT/bin/busybox"
cp "$HERE/image/init" "$ROOT/init"
grep -v '^#' "$LIST" > "$ROOT/tests/list"
# A test is a program built in <test-bin-dir>, or a script in tests/image/.
for t in $(cat "$ROOT/tests/list"); do
	if [ -e "$BIN/$t" ]; then
		cp "$BIN/$t" "$ROOT/tests/$t"
	else
		cp "$HERE/image/$t" "$ROOT/tests/$t"
	fi
done
for extra in "$BIN"/*; do
	[ -e "$ROOT/tests/$(basename "$extra")" ] || cp "$extra" "$ROOT/tests/"
done

# Dynamically linked host tools: copy the binary and every library ldd names,
# at the same absolute path, so the guest's ld.so finds them.
copy_elf() {
	local src=$1 dst=$2
	cp -L "$src" "$ROOT$dst"
	ldd "$src" | awk '/=>/ {print $3} /^\t\/lib/ {print $1}' | while read -r lib; do
		[ -n "$lib" ] && [ -f "$lib" ] || continue
		mkdir -p "$ROOT$(dirname "$lib")"
		cp -Ln "$lib" "$ROOT$lib"
	done
}
if [ "${NO_TOOLS:-0}" != 1 ]; then
	copy_elf /usr/bin/perf /usr/bin/perf
	copy_elf /usr/bin/fio /usr/bin/fio
fi
echo "root:x:0:0:root:/:/bin/sh" > "$ROOT/etc/passwd"
# WITH_PEERS=1: Debian's stress-ng and trinity, for tests/image/fuzz-peers, and
# the user nobody that trinity's -X (drop privileges) switches to.
if [ "${WITH_PEERS:-0}" = 1 ]; then
	copy_elf /usr/bin/stress-ng /usr/bin/stress-ng
	copy_elf /usr/bin/trinity /usr/bin/trinity
	cp "$HERE/image/fuzz-peers" "$ROOT/tests/"
	echo "nobody:x:65534:65534:nobody:/nonexistent:/bin/false" >> "$ROOT/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' > "$ROOT/etc/group"
fi

# The library as installed by tests/install-check.sh and the programs it
# built against that tree with pkg-config, for /tests/install-run. The
# shared ones need the glibc that perf's copy brought.
INST=$B/install-check
if [ "${NO_TOOLS:-0}" != 1 ] && [ -d "$INST/root/usr/local/lib" ]; then
	mkdir -p "$ROOT/usr/local" "$ROOT/tests/install"
	cp -a "$INST/root/usr/local/lib" "$INST/root/usr/local/lib32" "$ROOT/usr/local/"
	for p in syslet_file-static syslet_file-m32-static syslet_file-shared \
		 aio-basic-static aio-basic-shared; do
		[ ! -f "$INST/$p" ] || cp "$INST/$p" "$ROOT/tests/install/"
	done
fi

# The same inputs give the same bytes (fixed times, inode numbers from the
# archive order): -icount boots of two builds then start from one state.
find "$ROOT" -exec touch -h -d @1767225600 {} +
(cd "$ROOT" && find . | LC_ALL=C sort | cpio -o -H newc --quiet --reproducible) > "$B/initramfs.cpio.tmp"
mv "$B/initramfs.cpio.tmp" "$B/initramfs.cpio"

if [ ! -f "$B/disk.img" ] || [ "$HERE/mkimage.sh" -nt "$B/disk.img" ]; then
	D=$B/disk.d
	rm -rf "$D"
	mkdir -p "$D"
	# 64 MiB of reproducible data: bytes depend only on the offset, so tests
	# can check any 4 KiB block they read (see tests/guest/tl_test.h).
	python3 - "$D/data" <<'PY'
import sys, struct
with open(sys.argv[1], "wb") as f:
    for blk in range(64 * 256):
        f.write(struct.pack("<Q", blk) * 512)
PY
	echo "threadlets test disk" > "$D/README"
	rm -f "$B/disk.img"
	# No lazy inode-table or journal init: ext4lazyinit would write to
	# the disk in the background of every boot, timed by the host.
	mke2fs -q -t ext4 -E lazy_itable_init=0,lazy_journal_init=0 \
		-d "$D" -L tldisk "$B/disk.img" 128M
	rm -rf "$D"
fi
echo "mkimage: $(du -h "$B/initramfs.cpio" | cut -f1) initramfs, $(wc -l < "$ROOT/tests/list") tests"
