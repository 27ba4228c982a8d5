#!/bin/bash
# Lints every man page in man/: groff -ww (every warning category) and
# mandoc -Tlint at warning level must print nothing, man -l must render
# each page and each link; links must point at a page in the same
# section whose NAME lists them; every public function of libthreadlet
# (user/lib/libthreadlet.map) has a section 3 page and every system call
# (threadlet.h's __NR_*) a section 2 page. Prints what is wrong and exits
# 1, or prints nothing and exits 0.
#
# Usage: scripts/man-lint.sh [MANDIR]   (default: the repository's man/;
# an installed MANDIR is checked the same way, links included)
set -uo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "${1:-$REPO/man}" || exit 1
bad=0
err() { echo "man-lint: $*"; bad=1; }

# The text of a page's NAME section, joined into one line.
names() { sed -n '/^\.SH NAME/,/^\.SH/{/^\.SH/d;p}' "$1" | tr '\n' ' '; }

pages=$(ls man[237]/*.[237] 2>/dev/null)
[ -n "$pages" ] || err "no pages in man/"
for p in $pages; do
	name=${p##*/}; name=${name%.*}
	if [ -L "$p" ]; then
		t=$(readlink "$p")
		case "$t" in */*) err "$p: link to another directory ($t)"; continue ;; esac
		[ -f "${p%/*}/$t" ] && [ ! -L "${p%/*}/$t" ] ||
			{ err "$p: link to a missing page ($t)"; continue; }
		names "${p%/*}/$t" | grep -qw -- "$name" ||
			err "$p: $t does not list $name in NAME"
	else
		names "$p" | grep -qw -- "$name" || err "$p: NAME does not list $name"
		out=$(groff -ww -man -z "$p" 2>&1)
		[ -z "$out" ] || err "$p: groff: $out"
		if command -v mandoc > /dev/null; then
			out=$(mandoc -Tlint -W warning "$p" 2>&1)
			[ -z "$out" ] || err "$p: mandoc: $out"
		fi
	fi
	if command -v man > /dev/null; then
		out=$(MANWIDTH=80 man -l "$p" 2>&1 > /dev/null)
		[ $? = 0 ] && [ -z "$out" ] || err "$p: man -l: $out"
	fi
done

# Coverage: the library's exports (not its private __ ABI) and the calls.
funcs=$(sed -n 's/^[[:space:]]*\([a-z][a-z0-9_]*\);$/\1/p' "$REPO/user/lib/libthreadlet.map")
calls=$(sed -En 's/^#[[:space:]]*define[[:space:]]+__NR_([a-z0-9_]+)[[:space:]].*/\1/p' \
	"$REPO/user/include/threadlet.h" | sort -u)
[ -n "$funcs" ] || err "no functions found in user/lib/libthreadlet.map"
[ -n "$calls" ] || err "no __NR_ definitions found in user/include/threadlet.h"
for f in $funcs; do
	[ -e "man3/$f.3" ] || err "no man3/$f.3 for libthreadlet's $f"
done
for f in $calls; do
	[ -e "man2/$f.2" ] || err "no man2/$f.2 for system call $f"
done
exit $bad
