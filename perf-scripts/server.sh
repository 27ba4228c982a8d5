#!/bin/bash
# The example server (user/examples/tlhttpd.c) under load
# (perf-scripts/httpload.c, driven by server-guest.sh in the guest): its
# threadlet, pthread-per-connection and inline models, in one -icount boot
# (1 ns = 1 guest instruction) and one wall-clock TCG boot, both with the
# null_blk device of the -icount I/O runs (common.sh) for the cold loads.
# Figures per
# request: guest time from the first request to the last response, and the
# server's CPU time (all its threads). Results in $RESULTS: server-<mode>.txt
# (the guest's SERVER lines), server.jsonl (the records), report.py's
# server.md. Environment [defaults]: as micro.sh; TLHTTPD
# [$BUILD/tests/tlhttpd, from make tests]; TIMEOUT per boot [900 s].
set -uo pipefail

NAME=server.sh
# shellcheck source=perf-scripts/common.sh
. "$(dirname "$0")/common.sh"
TLHTTPD=${TLHTTPD:-$BUILD/tests/tlhttpd}
IMG=$BUILD/bench-server
[ -x "$TLHTTPD" ] || die "no server at $TLHTTPD (make tests)"
build_bench "$HERE/httpload.c" "$IMG/bin/httpload" || exit 1
cp "$HERE/server-guest.sh" "$IMG/bin/server-guest"
bench_image bench-server "$IMG/bin/server-guest" "$TLHTTPD" || exit 1

status=0
: > "$RESULTS/server.jsonl"
for mode in icount wall; do
	opts=(--no-disk)
	append=$NULLBLK_APPEND
	[ "$mode" = wall ] || opts+=(--icount)
	[ "$mode" = icount ] || append+=" $WALL_APPEND"
	opts+=(--append "$append")
	echo "  QEMU    server, $mode"
	raw=$RESULTS/server-$mode.txt
	if boot "server-$mode" "$IMG" "${opts[@]}" --cmd /tests/server-guest; then
		{ date -u '+# %Y-%m-%d %H:%M:%S UTC'; guest_out "$BUILD/logs/server-$mode.log" | grep -a '^SERVER '; } > "$raw"
		python3 "$HERE/report.py" ingest server --mode "$mode" "$raw" >> "$RESULTS/server.jsonl" || status=1
	else
		echo "$NAME: boot failed, see $BUILD/logs/server-$mode.log" >&2
		status=1
	fi
done
python3 "$HERE/report.py" report --results "$RESULTS" > /dev/null || status=1
cat "$RESULTS/server.md"
exit $status
