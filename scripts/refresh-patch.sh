#!/bin/bash
# Regenerates the diff of one patch from the edited build tree, keeping its
# header. Edit the upstream file in build/linux, then:
#   scripts/refresh-patch.sh patches/0002-....patch [file ...]
# naming, relative to the tree, any upstream file the patch did not touch
# before. Each upstream file belongs to exactly one patch of the series.
set -euo pipefail

PATCH=$1
KSRC=${KSRC:-$(dirname "$0")/../build/linux}
TARBALL=/usr/src/linux-source-6.1.tar.xz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mapfile -t files < <({ sed -n 's|^+++ b/||p' "$PATCH" | cut -f1
			printf '%s\n' "${@:2}"; } | grep . | awk '!seen[$0]++')
tar -C "$tmp" -xf "$TARBALL" "${files[@]/#/linux-source-6.1/}"
sed '/^---$/q' "$PATCH" > "$tmp/new"
for f in "${files[@]}"; do
	echo "diff --git a/$f b/$f" >> "$tmp/new"
	diff -u --label "a/$f" --label "b/$f" "$tmp/linux-source-6.1/$f" "$KSRC/$f" >> "$tmp/new" || true
done
cp "$tmp/new" "$PATCH"
# Record it as applied, so prepare-kernel.sh does not revert it.
state=$KSRC/.threadlets/applied
for a in "$state"/*-"$(basename "$PATCH")"; do
	[ -e "$a" ] && cp "$PATCH" "$a"
done
echo "refreshed $PATCH (${#files[@]} files)"
