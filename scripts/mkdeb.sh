#!/bin/bash
# make deb: Debian binary packages of libthreadlet, built with dpkg-deb
# from a staged make install (no debian/ source package: the tree builds
# a kernel too, which the packages do not contain):
#   libthreadlet1       the shared library (SONAME libthreadlet.so.1)
#   libthreadlet-aio1   POSIX AIO on syslets (SONAME libthreadlet-aio.so.1)
#   libthreadlet-dev    headers, static libraries, development links,
#                       pkg-config files, man pages
# into $BUILD/deb/, then lintian on them if it is installed (its output
# in $BUILD/deb/lintian.txt; the tags it still reports are explained in
# docs/install.md). Exits 1 if a package cannot be built, or if lintian
# reports an error or a warning not listed in packaging/lintian-expected.
#
# Environment: BUILD, DEB_REVISION (default 1), DEB_MAINTAINER (default:
# the author of the last commit), LINTIAN=0 to skip lintian.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
B=${BUILD:-$REPO/build}
D=$B/deb
VERSION=$(make -s -C "$REPO/user" version)
SOMAJOR=${VERSION%%.*}
DEBVER=$VERSION-${DEB_REVISION:-1}
ARCH=$(dpkg-architecture -qDEB_HOST_ARCH)
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
MAINT=${DEB_MAINTAINER:-$(git -C "$REPO" log -1 --format='%an <%ae>')}
DATE=$(git -C "$REPO" log -1 --format=%aD)
export SOURCE_DATE_EPOCH=$(git -C "$REPO" log -1 --format=%ct)

rm -rf "$D"
mkdir -p "$D"
STAGE=$D/stage

# Debian's build flags (hardening, fortify) on top of the library's own;
# through the environment, so that user/Makefile's += still apply.
cd "$REPO"
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
export CFLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
export LDFLAGS="$(dpkg-buildflags --get LDFLAGS)"
make -s -C user O="$D/obj" > "$D/build.log" 2>&1 ||
	{ cat "$D/build.log"; exit 1; }
make -s -C user O="$D/obj" install DESTDIR="$STAGE" PREFIX=/usr \
	LIBDIR="/usr/lib/$MA" >> "$D/build.log" 2>&1
for p in man/man[237]/*.[237]; do
	m=$STAGE/usr/share/man/man${p##*.}
	mkdir -p "$m"
	if [ -L "$p" ]; then
		ln -s "$(readlink "$p").gz" "$m/${p##*/}.gz"
	else
		gzip -9n < "$p" > "$m/${p##*/}.gz"
	fi
done
# As dh_strip: the debugging information would go to a -dbgsym package.
strip --strip-unneeded --remove-section=.comment --remove-section=.note \
	"$STAGE/usr/lib/$MA"/lib*.so."$VERSION"
strip --strip-debug --remove-section=.comment --remove-section=.note \
	--enable-deterministic-archives "$STAGE/usr/lib/$MA"/lib*.a

# pkg <name>: the package's tree, with the paths (relative to STAGE) given
# on stdin moved into it.
pkg() {
	local p=$D/$1 f
	mkdir -p "$p/DEBIAN" "$p/usr/share/doc/$1"
	while read -r f; do
		mkdir -p "$p/$(dirname "$f")"
		mv "$STAGE/$f" "$p/$f"
	done
	install -m 644 "$REPO/packaging/copyright" "$p/usr/share/doc/$1/copyright"
	{
		echo "libthreadlet ($DEBVER) unstable; urgency=medium"
		echo
		echo "  * Built from $(git -C "$REPO" describe --always --dirty)."
		echo
		echo " -- $MAINT  $DATE"
	} | gzip -9n > "$p/usr/share/doc/$1/changelog.Debian.gz"
}
cd "$STAGE"
L=usr/lib/$MA
printf '%s\n' "$L/libthreadlet.so.$VERSION" "$L/libthreadlet.so.1" | pkg libthreadlet1
printf '%s\n' "$L/libthreadlet-aio.so.$VERSION" "$L/libthreadlet-aio.so.1" | pkg libthreadlet-aio1
find . ! -type d | sed 's|^\./||' | sort | pkg libthreadlet-dev
cd "$D"

# Dependencies on the C library, as dpkg-shlibdeps finds them (it wants
# a debian/control; libthreadlet's own shlibs come from shlibs.local).
mkdir -p shlibdeps/debian
printf 'Source: libthreadlet\n\nPackage: libthreadlet1\nArchitecture: any\n' \
	> shlibdeps/debian/control
echo "libthreadlet $SOMAJOR libthreadlet1 (>= $VERSION)" > shlibdeps/debian/shlibs.local
depends() {	# depends <shared object>
	(cd shlibdeps && dpkg-shlibdeps -O -l"$D/libthreadlet1/$L" "$1" 2>/dev/null) |
		sed -n 's/^shlibs:Depends=//p'
}
DEP_TL=$(depends "$D/libthreadlet1/$L/libthreadlet.so.$VERSION")
DEP_AIO=$(depends "$D/libthreadlet-aio1/$L/libthreadlet-aio.so.$VERSION")

# symbols: every exported symbol of a library, at this version.
symbols() {	# symbols <soname> <package> <file>
	echo "$1 $2 #MINVER#"
	echo "* Build-Depends-Package: libthreadlet-dev"
	nm -D --defined-only "$3" | awk -v v="$VERSION" \
		'{ s = $3; if ($2 == "A") s = s "@" s; else if (s !~ /@/) s = s "@Base"; sub(/@@/, "@", s); print " " s " " v }' |
		sort
}

control() {	# control <package> <section> <depends> <multi-arch> <description...>
	local p=$1 sec=$2 dep=$3 ma=$4
	shift 4
	{
		echo "Package: $p"
		echo "Source: libthreadlet"
		echo "Version: $DEBVER"
		echo "Architecture: $ARCH"
		echo "Maintainer: $MAINT"
		echo "Installed-Size: $(du -sk --exclude=DEBIAN "$p" | cut -f1)"
		[ -z "$dep" ] || echo "Depends: $dep"
		echo "Section: $sec"
		echo "Priority: optional"
		echo "Multi-Arch: $ma"
		printf '%s\n' "$@"
	} > "$p/DEBIAN/control"
	(cd "$p" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | sort |
		xargs -r md5sum > DEBIAN/md5sums)
}

LONG=" A threadlet is a plain function that runs synchronously in the calling
 thread and gets a thread of its own only if it blocks in the kernel: the
 caller's identity (thread ID, TLS, signal mask) is handed to a parked
 thread, which returns in its place. Syslets run chains of system calls
 in the kernel on the same mechanism. Needs a kernel with the threadlet
 system calls."
control libthreadlet1 libs "$DEP_TL" same \
	"Description: threadlets and syslets for Linux - shared library" "$LONG" \
	" ." " This package contains the shared library."
symbols libthreadlet.so.1 libthreadlet1 "libthreadlet1/$L/libthreadlet.so.$VERSION" \
	> libthreadlet1/DEBIAN/symbols
echo "libthreadlet $SOMAJOR libthreadlet1 (>= $VERSION)" > libthreadlet1/DEBIAN/shlibs
echo "activate-noawait ldconfig" > libthreadlet1/DEBIAN/triggers

control libthreadlet-aio1 libs "$DEP_AIO" same \
	"Description: threadlets and syslets for Linux - POSIX AIO library" "$LONG" \
	" ." " This package contains libthreadlet-aio, the POSIX asynchronous I/O" \
	" functions (aio_read, lio_listio, ...) on syslets, in place of the C" \
	" library's thread pool; it can be preloaded over it with LD_PRELOAD."
symbols libthreadlet-aio.so.1 libthreadlet-aio1 \
	"libthreadlet-aio1/$L/libthreadlet-aio.so.$VERSION" > libthreadlet-aio1/DEBIAN/symbols
echo "libthreadlet-aio $SOMAJOR libthreadlet-aio1 (>= $VERSION)" > libthreadlet-aio1/DEBIAN/shlibs
echo "activate-noawait ldconfig" > libthreadlet-aio1/DEBIAN/triggers

control libthreadlet-dev libdevel \
	"libthreadlet1 (= $DEBVER), libthreadlet-aio1 (= $DEBVER), libc6-dev" same \
	"Description: threadlets and syslets for Linux - development files" "$LONG" \
	" ." " This package contains the headers, the static libraries, the" \
	" pkg-config files (threadlet, threadlet-aio) and the manual pages:" \
	" threadlets(7), the system calls (2) and the library functions (3)."

for p in libthreadlet1 libthreadlet-aio1 libthreadlet-dev; do
	find "$p" -type d -exec chmod 755 {} +
	find "$p" -type f -exec chmod 644 {} +
	chmod 644 "$p"/DEBIAN/*
	dpkg-deb --root-owner-group -Zxz --build "$p" "${p}_${DEBVER}_$ARCH.deb" > /dev/null
	echo "  DEB     $D/${p}_${DEBVER}_$ARCH.deb"
done

[ "${LINTIAN:-1}" != 0 ] && command -v lintian > /dev/null || exit 0
lintian --info --display-info --pedantic --no-tag-display-limit ./*.deb > lintian.txt 2>&1 || true
# The errors and warnings (E:, W:) must all be expected ones.
grep -E '^[EW]: ' lintian.txt | sed 's/^[EW]: [^ ]* \(\S*: \)\?//' | awk '{print $1}' |
	sort -u > lintian-tags.txt
unexpected=$(grep -vxFf <(grep -v '^#' "$REPO/packaging/lintian-expected") lintian-tags.txt || true)
echo "  LINTIAN $D/lintian.txt: $(grep -c '^[EWIP]: ' lintian.txt || true) tags"
if [ -n "$unexpected" ]; then
	echo "mkdeb: lintian errors or warnings not in packaging/lintian-expected:"
	grep -E '^[EW]: ' lintian.txt | grep -wFf <(echo "$unexpected")
	exit 1
fi
