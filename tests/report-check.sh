#!/bin/bash
# perf-scripts/report.py on a small fixed set of guest outputs (tests/report/:
# micro.c's, io-run.sh's with fio JSON, scale's, server-guest.sh's): ingest, report, and the
# generated files compared with tests/report/expected.txt; then a changed
# record must change the README's figures section. One PASS or FAIL line
# per check. UPDATE=1 rewrites expected.txt from this run instead.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
D=$HERE/report
R=$HERE/../perf-scripts/report.py
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

ing() { python3 "$R" ingest --date "2026-01-01 00:00 UTC" "$@"; }
ing micro --mode icount --boot 1 "$D/micro.txt" > "$T/micro.jsonl"
ing micro --mode icount --boot 2 "$D/micro.txt" >> "$T/micro.jsonl"
ing io --mode icount --boot 1 "$D/io-icount.txt" > "$T/io.jsonl"
ing io --mode icount --boot 2 "$D/io-icount-2.txt" >> "$T/io.jsonl"
ing io --mode wall "$D/io-wall.txt" >> "$T/io.jsonl"
ing scale --mode wall "$D/scale.txt" > "$T/scale.jsonl"
ing server --mode icount "$D/server.txt" > "$T/server.jsonl"
printf '# title\n\n<!-- figures:begin -->\n<!-- figures:end -->\n\nthe rest\n' > "$T/README.md"

report() {
	python3 "$R" report --results "$T" --readme "$T/README.md" \
		--template "$D/template.md" --no-plots > "$T/stdout"
}
report
for f in stdout micro.jsonl io.jsonl micro.md micro-determinism.txt io.md \
	io-determinism.txt scale.md server.jsonl server.md README.md; do
	echo "==> $f"
	cat "$T/$f"
done > "$T/out"
if [ "${UPDATE:-0}" = 1 ]; then
	cp "$T/out" "$D/expected.txt"
fi
if diff -u "$D/expected.txt" "$T/out" > "$T/diff"; then
	echo "PASS report.py: tables, determinism and README section as expected"
else
	head -n 60 "$T/diff"
	echo "FAIL report.py: output differs from tests/report/expected.txt"
fi

# Editing a record, then reporting again, changes the README.
sed -i '/"boot": 1,/s/"figure": 70.1, "method": "null_vdso"/"figure": 81.5, "method": "null_vdso"/' \
	"$T/micro.jsonl"
cp "$T/README.md" "$T/README.before"
report
if ! cmp -s "$T/README.md" "$T/README.before" && grep -q 'costs 81.5,' "$T/README.md" &&
	grep -q '^the rest$' "$T/README.md"; then
	echo "PASS report.py: an edited record changes the README's figures"
else
	echo "FAIL report.py: an edited record did not change the README's figures"
fi
