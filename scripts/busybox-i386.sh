#!/bin/sh
# Puts Debian's static i386 busybox at <dest>, for the native i386 guest.
# The package is downloaded and unpacked, not installed: installed, it
# would replace the amd64 busybox-static that the x86-64 guests use.
# Usage: busybox-i386.sh <dest>
set -eu
dest=$1
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# apt-get update fails as a whole when one index is caught mid-sync on
# the mirror (seen with bookworm-security); busybox comes from the main
# archive, so a partial update is enough: try the download, and update
# again, up to three times, only while it fails.
if ! dpkg --print-foreign-architectures | grep -qx i386; then
	$SUDO dpkg --add-architecture i386
	$SUDO apt-get update -qq || true
fi
n=0
until (cd "$tmp" && apt-get download -qq busybox-static:i386 2>/dev/null); do
	n=$((n + 1))
	if [ $n -gt 3 ]; then
		echo "busybox-i386: cannot download busybox-static:i386" >&2
		exit 1
	fi
	sleep $((n * 10))
	$SUDO apt-get update -qq || true
done
dpkg-deb -x "$tmp"/busybox-static_*_i386.deb "$tmp/x"
mkdir -p "$(dirname "$dest")"
cp "$tmp/x/bin/busybox" "$dest"
echo "busybox-i386: $dest"
