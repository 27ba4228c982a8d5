#!/bin/bash
# "make series": exports the kernel side (overlay + patches, as laid out
# by prepare-kernel.sh in build/linux) as a git format-patch series
# against the pinned upstream tree.
#
#   build/series/git       scratch repository; its first commit, tagged
#                          "upstream", is Debian's linux-source-6.1 tarball
#   build/series/patches   0000-cover-letter.patch, 0001-....patch, ...
#
# The split is patches/export/NN-name: "F: path" lines name the files the
# patch adds or changes (taken whole from build/linux), then a blank line,
# then the commit message. Every file that differs between upstream and
# build/linux must be named exactly once. Commits have fixed dates, so the
# same input gives the same series, hashes included.
# Usage: mkseries.sh <repo-root>
set -euo pipefail

REPO=$(cd "${1:-$(dirname "$0")/..}" && pwd)
B=${BUILD:-$REPO/build}
KSRC=$B/linux
OUT=$B/series
GIT=$OUT/git
SPECS=$REPO/patches/export
TARBALL=/usr/src/linux-source-6.1.tar.xz
NAME="Threadlets developers"
EMAIL="threadlets@localhost"
DATE="2026-01-01 00:00:00 +0000"

die() { echo "mkseries: $*" >&2; exit 1; }
g() { git -C "$GIT" "$@"; }
export GIT_AUTHOR_NAME=$NAME GIT_AUTHOR_EMAIL=$EMAIL GIT_AUTHOR_DATE=$DATE
export GIT_COMMITTER_NAME=$NAME GIT_COMMITTER_EMAIL=$EMAIL GIT_COMMITTER_DATE=$DATE

[ -f "$KSRC/.threadlets/upstream-version" ] || die "$KSRC missing: run 'make prepare'"
version=$(cat "$KSRC/.threadlets/upstream-version")

# 1. The upstream import, once per package version.
if [ "$(cat "$OUT/upstream-version" 2>/dev/null)" != "$version" ]; then
	echo "mkseries: importing linux-source-6.1 $version into $GIT"
	rm -rf "$OUT"
	mkdir -p "$GIT"
	tar -C "$GIT" --strip-components=1 -xf "$TARBALL"
	g init -q
	g config core.autocrlf false
	g config gc.auto 0
	g add -A -f .
	g commit -q -m "Linux 6.1 (Debian linux-source-6.1 $version)" \
		-m "The unchanged contents of /usr/src/linux-source-6.1.tar.xz."
	g tag upstream
	echo "$version" > "$OUT/upstream-version"
fi

# 2. Which files we change: every overlay file and every file a patch
# touches. The export must name each exactly once.
ours=$(mktemp)
named=$(mktemp)
trap 'rm -f "$ours" "$named"' EXIT
{
	cat "$KSRC/.threadlets/overlay-files"
	sed -n 's|^+++ b/||p' "$KSRC"/.threadlets/applied/*.patch | cut -f1
} | sort -u > "$ours"
sed -n 's/^F: //p' "$SPECS"/[0-9]* | sort > "$named"
dup=$(uniq -d "$named")
[ -z "$dup" ] || die "named by two patches of patches/export: $dup"
missing=$(comm -23 "$ours" "$named")
[ -z "$missing" ] || die "in build/linux but in no patch of patches/export: $missing"
extra=$(comm -13 "$ours" "$named")
[ -z "$extra" ] || die "named in patches/export but not ours: $extra"

# 3. One commit per spec, on a fresh branch from upstream.
g checkout -q -f -B series upstream
g clean -q -fdx
for spec in "$SPECS"/[0-9]*; do
	while read -r f; do
		mkdir -p "$GIT/$(dirname "$f")"
		cp "$KSRC/$f" "$GIT/$f"
		g add -f "$f"
	done < <(sed -n 's/^F: //p' "$spec")
	sed '1,/^$/d' "$spec" | g commit -q -s -F - ||
		die "$(basename "$spec"): nothing to commit"
done

# 4. The series, with the cover letter filled in.
rm -rf "$OUT/patches"
g format-patch -q --cover-letter --base=upstream --no-signature \
	-o "$OUT/patches" upstream..series
cover=$OUT/patches/0000-cover-letter.patch
subject=$(sed -n '1p' "$SPECS/cover-letter")
python3 - "$cover" "$SPECS/cover-letter" "$subject" <<'EOF'
import sys
path, blurb, subject = sys.argv[1:]
text = open(path).read()
body = open(blurb).read().split('\n', 2)[2].rstrip('\n')
text = text.replace('*** SUBJECT HERE ***', subject)
text = text.replace('*** BLURB HERE ***', body)
open(path, 'w').write(text)
EOF
n=$(ls "$OUT/patches" | grep -cv '^0000-')
echo "mkseries: $n patches and a cover letter against linux-source-6.1 $version in $OUT/patches"
