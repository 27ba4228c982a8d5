#!/bin/sh
# In the guest (perf-scripts/server.sh): the example server's three models
# (user/examples/tlhttpd.c: threadlet, pthread, inline) under the same
# loads from perf-scripts/httpload.c, each on a server of its own, with 64
# files of 4 KiB on tmpfs (a warm page cache: the disk's latency would be
# host time). Prints "SERVER <model> <load> <requests> <ns> <server-cpu-ns>".
# Loads: close-1, one client, a connection per request ("Connection:
# close"); close-8, eight such clients; keep-8, eight clients on keep-alive
# connections. One untimed round of every load comes first: the first
# connections of a boot cost the client about a fifth more (the network
# stack's first allocations, the early-boot reseeds of the kernel's random
# generator), which would count against whichever model came first.
# The cold loads (cold-close-8, cold-keep-8: as close-8 and keep-8) serve
# 200 files from ext2 on the boot's null_blk device, whose reads complete
# after a set time of guest time (perf-scripts/common.sh), with the page
# cache dropped before each run and every request for a file of its own,
# so every response blocks on a read: the case threadlets exist for.
set -eu
root=/tmp/www
mkdir -p $root
i=0
while [ $i -lt 64 ]; do
	dd if=/dev/zero of=$root/f$i bs=4096 count=1 2>/dev/null
	i=$((i + 1))
done
cold=/tmp/cold
mkdir -p $cold
mke2fs -F -b 4096 /dev/nullb0 16384 > /dev/null
mount -t ext4 /dev/nullb0 $cold
i=0
while [ $i -lt 200 ]; do
	dd if=/dev/zero of=$cold/f$i bs=4096 count=1 2>/dev/null
	i=$((i + 1))
done
sync
ifconfig lo up
port=8000
# load <model> <load> [print]: one server, one run of the load
load() {
	port=$((port + 1))
	dir=$root files=64
	case $2 in
	cold-*)
		dir=$cold files=200
		echo 3 > /proc/sys/vm/drop_caches
		;;
	esac
	/tests/tlhttpd -m "$1" -p $port -r $dir -c 16 > /tmp/srv.out &
	pid=$!
	while ! grep -q listening /tmp/srv.out; do sleep 0.01; done
	case $2 in
	close-1) args="-c 1 -r 200" ;;
	close-8 | cold-close-8) args="-c 8 -r 25" ;;
	keep-8 | cold-keep-8) args="-c 8 -r 25 -k" ;;
	esac
	# shellcheck disable=SC2086
	out=$(/tests/httpload -p $port -f $files -s 4096 $args)
	kill -TERM $pid
	wait $pid
	[ "${3:-}" = print ] || return 0
	cpu=$(sed -n 's/.* cpu-ns \([0-9]*\).*/\1/p' /tmp/srv.out)
	# shellcheck disable=SC2086
	set -- "$1" "$2" $out
	echo "SERVER $1 $2 $4 $5 $cpu"
	grep -a threadlets /tmp/srv.out || true
}
for l in close-1 close-8 keep-8; do
	load threadlet $l
done
for model in threadlet pthread inline; do
	for l in close-1 close-8 keep-8 cold-close-8 cold-keep-8; do
		load $model $l print
	done
done
