#!/bin/bash
# The Debian packages as a user gets them: make deb (scripts/mkdeb.sh,
# lintian included), dpkg -i of the three packages into a scratch root
# (its own dpkg database; dependencies on the host's libc are forced, as
# that database has no libc6), a program built against that root with
# pkg-config alone, shared and static, the man pages readable, and
# dpkg -P leaving no file behind.
#
# Prints one "PASS ..." or "FAIL ..." line per check for tests/check.sh
# to count, and exits 1 if any failed. Environment: BUILD.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
B=${BUILD:-$REPO/build}
W=$B/deb-check
CHECK_PREFIX=deb
. "$HERE/checklib.sh"

rm -rf "$W"
mkdir -p "$W"
R=$(mktemp -d)
trap 'rm -rf "$R"' EXIT
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
PKGS="libthreadlet1 libthreadlet-aio1 libthreadlet-dev"

check "make deb builds $PKGS, lintian clean but for packaging/lintian-expected" \
	env BUILD="$B" "$REPO/scripts/mkdeb.sh"
mkdir -p "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/info"
touch "$R/var/lib/dpkg/status" "$R/var/lib/dpkg/available"
DPKG="dpkg --root=$R --force-script-chrootless --force-depends"
check "dpkg -i of the three packages into a scratch root" $DPKG -i "$B"/deb/*.deb
installed() {
	local p
	for p in $PKGS; do
		dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Status}\n' "$p" |
			grep -q "install ok installed" || { echo "$p not installed"; return 1; }
	done
}
check "dpkg says all three are installed" installed

pc() {
	PKG_CONFIG_LIBDIR=$R/usr/lib/$MA/pkgconfig PKG_CONFIG_PATH= \
		PKG_CONFIG_SYSROOT_DIR=$R pkg-config "$@"
}
build() {	# build <out> [-static]
	local static=
	[ "${2:-}" = -static ] && static=--static
	gcc ${2:-} -O2 -Wall -Wextra -Werror $(pc --cflags threadlet) -o "$W/$1" \
		"$REPO/user/examples/syslet_file.c" $(pc $static --libs threadlet)
}
check "syslet_file builds against the packages, shared" build syslet_file-shared
resolved() {
	readelf -d "$W/syslet_file-shared" | grep -F "(NEEDED)" | grep -qF "[libthreadlet.so.1]" &&
	LD_LIBRARY_PATH=$R/usr/lib/$MA ldd -r "$W/syslet_file-shared" > "$W/ldd.txt" 2>&1 &&
	! grep -E "not found|undefined symbol" "$W/ldd.txt" &&
	grep -qF "$R/usr/lib/$MA/libthreadlet.so.1" "$W/ldd.txt"
}
check "it NEEDs libthreadlet.so.1, resolved from the package" resolved
check "syslet_file builds against the packages, static" build syslet_file-static -static
manpages() {
	local p
	for p in man2/async_exec.2 man2/threadlet_off.2 man3/threadlet_exec.3 \
		 man3/async_head_exit.3 man7/threadlets.7; do
		MANWIDTH=80 man -l "$R/usr/share/man/$p.gz" | grep -q . ||
			{ echo "$p.gz does not render"; return 1; }
	done
}
check "man -l renders the packaged pages and links" manpages

left() {
	$DPKG -P $PKGS || return 1
	local l
	l=$(find "$R" ! -type d ! -path "$R/var/lib/dpkg/*")
	[ -z "$l" ] || { echo "left: $l"; return 1; }
}
check "dpkg -P removes every file" left

[ "$fails" = 0 ]
