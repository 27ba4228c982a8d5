# Benchmarks in perf-scripts/, included from the top-level Makefile after
# B, CC, CFLAGS and BZIMAGE are set. Records go to $(B)/results/*.jsonl;
# every bench target ends with make report.
#   make bench-micro  micro.c (and reads.c) in QEMU with -icount (1 ns = 1
#                     guest instruction) and in wall-clock TCG (micro.sh)
#   make bench-io     the I/O comparison (io.sh: wall-clock, throttled-disk
#                     and -icount boots; THROTTLE, ICOUNT_RUNS, WALL_RUNS and
#                     WALL_METHODS pass through)
#   make bench        both
#   make bench-scale  hand-offs per second of two heads on 1 and 2 vCPUs,
#                     beside the futex pool, wall time (scale.sh; RUNS)
#   make bench-server the example server (user/examples/tlhttpd.c) under
#                     httpload.c's loads, threadlet against pthread and
#                     inline, -icount and wall time (server.sh)
#   make report       report.py on the records: every table, plot and
#                     determinism check, and README.md's figures section,
#                     generated from docs/figures.md.in

# Static, like the guest tests; its headers are tracked by -MMD -MP.
MICRO_BIN := $(B)/tests/micro
$(MICRO_BIN): perf-scripts/micro.c $(B)/user/libthreadlet.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -Iuser/include -Iinclude/uapi -static -o $@ $< \
		$(B)/user/libthreadlet.a
-include $(MICRO_BIN).d

BENCH_ENV := BUILD=$(B) KERNEL=$(BZIMAGE) LIBTL=$(B)/user/libthreadlet.a MICRO=$(MICRO_BIN)
REPORT := python3 perf-scripts/report.py report --results $(B)/results \
	  --readme README.md --template docs/figures.md.in

.PHONY: bench bench-micro bench-io bench-scale bench-server report
report:
	$(REPORT)

bench: kernel image $(MICRO_BIN)
	$(BENCH_ENV) perf-scripts/micro.sh
	$(BENCH_ENV) perf-scripts/io.sh
	$(REPORT)

bench-micro: kernel image $(MICRO_BIN)
	$(BENCH_ENV) perf-scripts/micro.sh
	$(REPORT)

bench-io: kernel image
	$(BENCH_ENV) perf-scripts/io.sh
	$(REPORT)

bench-scale: kernel image
	$(BENCH_ENV) perf-scripts/scale.sh
	$(REPORT)

bench-server: kernel image
	$(BENCH_ENV) perf-scripts/server.sh
	$(REPORT)
