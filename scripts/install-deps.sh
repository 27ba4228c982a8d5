#!/bin/sh
# Installs every Debian package the project needs. Idempotent: when all
# packages are present it does nothing and touches no package list.
set -eu

PKGS="linux-source-6.1 build-essential gcc-multilib g++-multilib bc bison flex libelf-dev
libssl-dev dwarves cpio xz-utils rsync kmod ccache nasm e2fsprogs
qemu-system-x86 busybox-static linux-perf fio liburing-dev libaio-dev
groff-base mandoc man-db pkg-config dpkg-dev lintian
gnuplot-nox python3 stress-ng trinity"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing"
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
