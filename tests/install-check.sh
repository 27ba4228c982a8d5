#!/bin/bash
# The library as a user gets it: make install into a temporary DESTDIR,
# then programs built against that tree with pkg-config alone (no path
# into this repository), shared and static, x86-64 and i386.
#
# Prints one "PASS ..." or "FAIL ..." line per check for tests/check.sh
# to count, and exits 1 if any failed. The programs it builds are left in
# build/install-check/ with the installed tree (root/), for the guest to
# run: tests/mkimage.sh puts them in the image (root/usr/local as
# /usr/local) and tests/image/install-run runs them there, the shared ones
# with LD_LIBRARY_PATH=/usr/local/lib.
#
# Environment: BUILD (the build directory, default ../build).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
B=${BUILD:-$REPO/build}
W=$B/install-check
CC=${CC:-gcc}
CFLAGS="-O2 -Wall -Wextra -Werror -D_GNU_SOURCE"
CHECK_PREFIX=install-check
. "$HERE/checklib.sh"

rm -rf "$W"
mkdir -p "$W"
DEST=$(mktemp -d)
trap 'rm -rf "$DEST"' EXIT
VERSION=$(make -s -C "$REPO/user" version)
LIB=$DEST/usr/local/lib
LIB32=$DEST/usr/local/lib32

# pkg-config sees only the installed tree, with its paths under DEST.
pc() {	# pc <pkgconfig dir> <args...>
	local dir=$1
	shift
	PKG_CONFIG_LIBDIR=$dir PKG_CONFIG_PATH= PKG_CONFIG_SYSROOT_DIR=$DEST pkg-config "$@"
}

# 1. Installing, 64-bit (top level: library, headers, .pc, man pages)
# and 32-bit (the library alone, into lib32).
check "make install DESTDIR=\$(mktemp -d)" \
	make -s -C "$REPO" B="$B" install DESTDIR="$DEST"
check "make -C user ARCH=i386 install LIBDIR=/usr/local/lib32" \
	make -s -C "$REPO/user" ARCH=i386 O="$B/user32" install DESTDIR="$DEST" \
	LIBDIR=/usr/local/lib32
expected() {
	local f
	for f in include/threadlet.h include/threadlet/linux/threadlet.h \
		 lib/libthreadlet.a "lib/libthreadlet.so.$VERSION" lib/libthreadlet.so.1 \
		 lib/libthreadlet.so lib/pkgconfig/threadlet.pc \
		 lib/libthreadlet-aio.a "lib/libthreadlet-aio.so.$VERSION" \
		 lib/libthreadlet-aio.so.1 lib/libthreadlet-aio.so \
		 lib/pkgconfig/threadlet-aio.pc lib32/libthreadlet.a \
		 lib32/libthreadlet.so.1 lib32/pkgconfig/threadlet.pc \
		 share/man/man2/async_exec.2 share/man/man3/threadlet_exec.3 \
		 share/man/man7/threadlets.7; do
		[ -e "$DEST/usr/local/$f" ] || { echo "missing /usr/local/$f"; return 1; }
	done
	cmp "$REPO/include/uapi/linux/threadlet.h" \
		"$DEST/usr/local/include/threadlet/linux/threadlet.h"
}
check "the headers, libraries, .pc files and man pages are installed" expected
check "pkg-config --modversion threadlet is $VERSION" \
	test "$(pc "$LIB/pkgconfig" --modversion threadlet)" = "$VERSION"
soname() {	# soname <file> <soname>
	readelf -d "$1" | grep -F "(SONAME)" | grep -qF "[$2]" ||
		{ readelf -d "$1" | grep -E "SONAME|NEEDED"; return 1; }
}
check "readelf -d: libthreadlet.so has SONAME libthreadlet.so.1" \
	soname "$LIB/libthreadlet.so" libthreadlet.so.1
check "readelf -d: libthreadlet-aio.so has SONAME libthreadlet-aio.so.1" \
	soname "$LIB/libthreadlet-aio.so" libthreadlet-aio.so.1
check "readelf -d: the i386 libthreadlet.so has SONAME libthreadlet.so.1" \
	soname "$LIB32/libthreadlet.so" libthreadlet.so.1
mkdir -p "$W/root"
cp -a "$DEST/." "$W/root/"

# 2. Programs built with pkg-config's flags and nothing else.
build() {	# build <out> <pkgconfig dir> <pkgs> <src> [cc flags: -static, -m32, -I...]
	local out=$1 dir=$2 pkgs=$3 src=$4 cflags libs static=
	shift 4
	case " $* " in *" -static "*) static=--static ;; esac
	cflags=$(pc "$dir" --cflags $pkgs) &&
	libs=$(pc "$dir" $static --libs $pkgs) &&
	echo "$CC $* $CFLAGS $cflags -o $out $src $libs" &&
	$CC "$@" $CFLAGS $cflags -o "$W/$out" "$src" $libs
}
needs() {	# needs <binary> <lib>: dynamic, NEEDs it, and ld.so resolves it
	readelf -d "$W/$1" | grep -F "(NEEDED)" | grep -qF "[$2]" ||
		{ echo "$1 does not need $2"; return 1; }
	LD_LIBRARY_PATH=$LIB ldd -r "$W/$1" > "$W/$1.ldd" 2>&1 || return 1
	! grep -E "not found|undefined symbol" "$W/$1.ldd" &&
	grep -qF "$LIB/$2" "$W/$1.ldd"
}
static() {	# static <binary>: built, and NEEDs nothing
	[ -f "$W/$1" ] && ! readelf -d "$W/$1" | grep -q NEEDED
}
EX=$REPO/user/examples/syslet_file.c
# threadlet.h after headers that number the system calls, spelled otherwise.
printf '#define __NR_threadlet_register (451)\n#define __NR_umem_add (0 + 458)\n#include <threadlet.h>\nint main(void) { return __NR_async_exec != 457; }\n' > "$W/nr-first.c"
check "threadlet.h builds after headers that define its __NR_* (-Werror)" \
	build nr-first "$LIB/pkgconfig" threadlet "$W/nr-first.c" -Wall -Werror -c
# threadlet.h is C++ too (extern "C", no C++ keyword as a name).
build_cxx() { CC=g++ build "$@"; }
printf '#include <threadlet.h>\nint main() { struct syslet_uatom a = {}; return (int)a.user_data; }\n' > "$W/cxx.cc"
check "threadlet.h builds as C++ (g++ -Wall -Werror)" \
	build_cxx cxx "$LIB/pkgconfig" threadlet "$W/cxx.cc" -Wall -Werror -c
AIO=$REPO/tests/guest/aio-basic.c
check "syslet_file, shared: cc \$(pkg-config --cflags --libs threadlet)" \
	build syslet_file-shared "$LIB/pkgconfig" threadlet "$EX"
check "syslet_file, shared: NEEDED libthreadlet.so.1, resolved in DESTDIR" \
	needs syslet_file-shared libthreadlet.so.1
check "syslet_file, static: cc -static \$(pkg-config --static --libs threadlet)" \
	build syslet_file-static "$LIB/pkgconfig" threadlet "$EX" -static
check "syslet_file, static: no NEEDED" static syslet_file-static
check "syslet_file, i386 static: cc -m32 -static against lib32" \
	build syslet_file-m32-static "$LIB32/pkgconfig" threadlet "$EX" -m32 -static
# aio-basic includes its test helpers from tests/guest (not the library's).
check "aio-basic, shared: pkg-config threadlet-aio threadlet" \
	build aio-basic-shared "$LIB/pkgconfig" "threadlet-aio threadlet" "$AIO" \
	-I"$REPO/tests/guest"
check "aio-basic, shared: NEEDED libthreadlet-aio.so.1, resolved in DESTDIR" \
	needs aio-basic-shared libthreadlet-aio.so.1
check "aio-basic, static: pkg-config --static threadlet-aio threadlet" \
	build aio-basic-static "$LIB/pkgconfig" "threadlet-aio threadlet" "$AIO" \
	-static -I"$REPO/tests/guest"
check "aio-basic, static: no NEEDED" static aio-basic-static

# 3. The installed man pages lint clean, links included.
check "man-lint on the installed pages" "$REPO/scripts/man-lint.sh" "$DEST/usr/local/share/man"

# 4. Uninstall removes every file and link that install wrote.
left() {
	make -s -C "$REPO" B="$B" uninstall DESTDIR="$DEST" &&
	make -s -C "$REPO/user" ARCH=i386 O="$B/user32" uninstall DESTDIR="$DEST" \
		LIBDIR=/usr/local/lib32 || return 1
	local l
	l=$(find "$DEST" ! -type d)
	[ -z "$l" ] || { echo "left: $l"; return 1; }
}
check "make uninstall leaves no file behind" left

[ "$fails" = 0 ]
