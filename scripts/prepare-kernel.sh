#!/bin/bash
# Lays out the kernel source tree we build: Debian's linux-source-6.1,
# unpacked once into $KSRC, plus our patch series, plus our overlay of new
# files. Everything it does is incremental, so that make only recompiles
# what a change really touches:
#   - the tarball is unpacked again only when the package version changes;
#   - patches are reverse-applied only from the first one that changed;
#   - overlay files are copied only when their content differs.
# Usage: prepare-kernel.sh <repo-root> <ksrc-dir>
set -euo pipefail

REPO=$(cd "$1" && pwd)
mkdir -p "$(dirname "$2")"
KSRC=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
TARBALL=/usr/src/linux-source-6.1.tar.xz
STATE=$KSRC/.threadlets
OVERLAY_DIRS="arch include kernel Documentation"

die() { echo "prepare-kernel: $*" >&2; exit 1; }

[ -f "$TARBALL" ] || die "$TARBALL missing: run scripts/install-deps.sh"
version=$(dpkg-query -W -f='${Version}' linux-source-6.1)

# 1. Pristine upstream, recorded with its exact package version.
if [ ! -f "$STATE/upstream-version" ] ||
   [ "$(cat "$STATE/upstream-version")" != "$version" ]; then
	echo "prepare-kernel: unpacking linux-source-6.1 $version"
	rm -rf "$KSRC" "$KSRC.tmp"
	mkdir -p "$KSRC.tmp"
	tar -C "$KSRC.tmp" -xf "$TARBALL"
	mv "$KSRC.tmp/linux-source-6.1" "$KSRC"
	rmdir "$KSRC.tmp"
	mkdir -p "$STATE/applied"
	(cd "$KSRC" && find . -path ./.threadlets -prune -o -type f -print |
		sed 's|^\./||' | sort) > "$STATE/upstream-files"
	echo "$version" > "$STATE/upstream-version"
fi

# 2. Patch series. $STATE/applied holds a copy of each applied patch, named
# NNNN-name, so the tree's state is known without touching it.
mapfile -t series < <(grep -v -e '^#' -e '^[[:space:]]*$' "$REPO/patches/series")
mapfile -t applied < <(cd "$STATE/applied" && ls | sort)

first_diff=0
while [ $first_diff -lt ${#applied[@]} ] && [ $first_diff -lt ${#series[@]} ]; do
	old="$STATE/applied/${applied[$first_diff]}"
	new="$REPO/patches/${series[$first_diff]}"
	[ "${applied[$first_diff]#*-}" = "${series[$first_diff]}" ] || break
	cmp -s "$old" "$new" || break
	first_diff=$((first_diff + 1))
done

for ((i = ${#applied[@]} - 1; i >= first_diff; i--)); do
	p="$STATE/applied/${applied[$i]}"
	echo "prepare-kernel: reverting ${applied[$i]#*-}"
	patch -d "$KSRC" -p1 -R -s --no-backup-if-mismatch < "$p" ||
		die "cannot revert ${applied[$i]#*-}; remove $KSRC and rebuild"
	rm -f "$p"
done

for ((i = first_diff; i < ${#series[@]}; i++)); do
	name=${series[$i]}
	p="$REPO/patches/$name"
	[ -f "$p" ] || die "patches/series names $name, which does not exist"
	echo "prepare-kernel: applying $name"
	if ! patch -d "$KSRC" -p1 -s -N --no-backup-if-mismatch --dry-run < "$p" >/dev/null; then
		patch -d "$KSRC" -p1 -N --no-backup-if-mismatch --dry-run < "$p" >&2 || true
		die "patch $name does not apply to linux-source-6.1 $version"
	fi
	patch -d "$KSRC" -p1 -s -N --no-backup-if-mismatch < "$p"
	cp "$p" "$STATE/applied/$(printf '%04d' "$i")-$name"
done

# 3. Overlay of new files. An overlay file must never shadow an upstream one:
# upstream changes go through patches/ so that they are reviewable diffs.
for d in $OVERLAY_DIRS; do
	[ ! -d "$REPO/$d" ] || (cd "$REPO" && find "$d" -type f)
done | sort > "$STATE/overlay-files.new"
clash=$(comm -12 "$STATE/overlay-files.new" "$STATE/upstream-files")
[ -z "$clash" ] || die "overlay files shadow upstream files: $clash"
if [ -f "$STATE/overlay-files" ]; then
	comm -23 "$STATE/overlay-files" "$STATE/overlay-files.new" |
		while read -r gone; do rm -f "$KSRC/$gone"; done
fi
while read -r f; do
	mkdir -p "$KSRC/$(dirname "$f")"
	cmp -s "$REPO/$f" "$KSRC/$f" || cp "$REPO/$f" "$KSRC/$f"
done < "$STATE/overlay-files.new"
mv "$STATE/overlay-files.new" "$STATE/overlay-files"
echo "prepare-kernel: linux-source-6.1 $version, ${#series[@]} patches, $(wc -l < "$STATE/overlay-files") overlay files"
