#!/bin/bash
# The fallback reasons have one list, __THREADLET_FALLBACKS() in
# include/uapi/linux/threadlet.h: the enum, the tracepoint's names and
# libthreadlet's threadlet_fallback_name() are made from it by the C
# preprocessor. The prose that explains each reason cannot be, so this
# checks it against the list:
#  - the list itself: each NAME once, its name NAME in lower case, a
#    description; the reasons of the first release keep their values (the
#    list starts with them; a new reason goes at the end);
#  - the table in docs/threadlets.md and the list in threadlets(7) name
#    every reason, in the list's order, and no other;
#  - every THREADLET_FB_* (or FB_*) named in the docs, the man pages, the
#    kernel and the library is a reason, THREADLET_FB_NONE or _NR.
# Prints what is wrong and exits 1, or prints nothing and exits 0.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO" || exit 1
bad=0
err() { echo "fallback-check: $*"; bad=1; }

# The values of the first release (ABI): the list must start with these.
released=(NO_SPARE NO_HEAD PTRACE RT PI COMPAT SIGNALS CREDS ARCH BAD_FRAME
	EXITING FS FILES NAMESPACES SCHED TASK PARKED)

# One line per reason, "NAME<TAB>name<TAB>description", from the header
# through the preprocessor (so it sees what the compiler sees).
list=$(printf '%s\n' '#include <linux/threadlet.h>' \
	'#define X(n, s, d) @@ n @@ s @@ d @@' '__THREADLET_FALLBACKS(X)' |
	${CC:-cc} -E -P -Iinclude/uapi -x c - 2> /dev/null |
	grep -o '@@ .* @@' | sed 's/ @@ @@ /\n/g; s/^@@ //; s/ @@$//' |
	sed -E 's/^([A-Z0-9_]+) @@ "([^"]*)" @@ "(.*)"$/\1\t\2\t\3/')
[ -n "$list" ] || { err "no __THREADLET_FALLBACKS() list in include/uapi/linux/threadlet.h"; exit 1; }
NAMES=$(cut -f1 <<< "$list")

while IFS=$'\t' read -r N s d; do
	[[ "$N" =~ ^[A-Z][A-Z0-9_]*$ ]] || { err "header: malformed entry: $N"; continue; }
	lc=$(tr '[:upper:]' '[:lower:]' <<< "$N")
	[ "$s" = "$lc" ] || err "header: THREADLET_FB_$N is named \"$s\", not \"$lc\""
	[ -n "$d" ] || err "header: THREADLET_FB_$N has no description"
done <<< "$list"
dups=$(sort <<< "$NAMES" | uniq -d)
[ -z "$dups" ] || err "header: listed twice: $dups"
dups=$(cut -f2 <<< "$list" | sort | uniq -d)
[ -z "$dups" ] || err "header: name used twice: $dups"
got=$(head -n ${#released[@]} <<< "$NAMES" | tr '\n' ' ')
[ "$got" = "${released[*]} " ] ||
	err "header: the released reasons changed value: the list must start with ${released[*]}, not $got"

# same <what> <names, one a line>: the names equal the header's, in order.
same() {
	local d
	d=$(diff <(echo "$NAMES") <(echo "$2") | grep '^[<>]' |
		sed 's/^</missing:/; s/^>/not a reason, or out of order:/' | tr '\n' ' ')
	[ -z "$d" ] || err "$1 differs from the header's list: $d"
}

# docs/threadlets.md: the rows of the table under "| reason | when |".
docs=$(sed -n '/^| reason | when |$/,/^$/p' docs/threadlets.md |
	sed -n 's/^| `\([A-Z0-9_]*\)` |.*/\1/p')
same "docs/threadlets.md's table" "$docs"

# threadlets(7): the .TP entries of its Fallbacks section.
man=$(sed -n '/^\.SS Fallbacks$/,/^\.S[SH] /p' man/man7/threadlets.7 |
	sed -n 's/^\.B THREADLET_FB_\([A-Z0-9_]*\)$/\1/p')
same "threadlets(7)'s Fallbacks" "$man"

# Every reason named anywhere else exists.
known=$(printf '%s\n' "$NAMES" NONE NR)
while IFS=: read -r f n; do
	grep -qx "$n" <<< "$known" || err "$f names THREADLET_FB_$n, which is no reason"
done < <(grep -rEo '\b(THREADLET_)?FB_[A-Z0-9_]+' README.md docs man Documentation \
		include kernel arch user tests perf-scripts 2> /dev/null |
	sed -E 's/:(THREADLET_)?FB_/:/' | sort -u)
exit $bad
