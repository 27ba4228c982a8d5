# Benchmarks in perf-scripts/, included from the top-level Makefile after
# B, CC, CFLAGS and BZIMAGE are set:
#
#   make bench-micro   build the kernel, the image and perf-scripts/micro.c,
#                      then run it in QEMU with -icount (1 ns = 1 guest
#                      instruction) and in wall-clock TCG; the records go to
#                      $(B)/results/micro.jsonl, the tables to micro.md.

MICRO_BIN := $(B)/tests/micro

# Static, like the guest tests; linked against the library in $(B)/user.
# Its headers are tracked by -MMD -MP ($(MICRO_BIN).d).
$(MICRO_BIN): perf-scripts/micro.c $(B)/user/libthreadlet.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -Iuser/include -Iinclude/uapi -static -o $@ $< \
		$(B)/user/libthreadlet.a
-include $(MICRO_BIN).d

# make report: perf-scripts/report.py on the records in $(B)/results/*.jsonl:
# every table, plot and determinism check there, and README.md's figures
# section, generated from docs/figures.md.in. Every bench target ends with it.
REPORT := python3 perf-scripts/report.py report --results $(B)/results \
	  --readme README.md --template docs/figures.md.in

.PHONY: bench-micro report
report:
	$(REPORT)

bench-micro: kernel image $(MICRO_BIN)
	BUILD=$(B) KERNEL=$(BZIMAGE) LIBTL=$(B)/user/libthreadlet.a \
		MICRO=$(MICRO_BIN) perf-scripts/micro.sh
	$(REPORT)

# make bench: both benchmarks. make bench-io: the I/O comparison alone;
# perf-scripts/io.sh builds perf-scripts/io.c and the fio shim itself (into
# $(B)/bench-io/bin), boots wall-clock, throttled-disk and two -icount
# guests, and writes $(B)/results/io.jsonl, io.md and the plots.
# THROTTLE, ICOUNT_RUNS and WALL_RUNS pass through (see io.sh).
.PHONY: bench bench-io
bench: kernel image $(MICRO_BIN)
	BUILD=$(B) KERNEL=$(BZIMAGE) LIBTL=$(B)/user/libthreadlet.a \
		MICRO=$(MICRO_BIN) perf-scripts/micro.sh
	BUILD=$(B) KERNEL=$(BZIMAGE) LIBTL=$(B)/user/libthreadlet.a \
		perf-scripts/io.sh
	$(REPORT)

bench-io: kernel image
	BUILD=$(B) KERNEL=$(BZIMAGE) LIBTL=$(B)/user/libthreadlet.a \
		perf-scripts/io.sh
	$(REPORT)

# make profile: one -icount boot that samples the threadlet hand-off loop
# and the futex pool's with perf; the breakdown by phase and function goes
# to $(B)/results/profile.md (perf-scripts/profile.sh). PERIOD passes through.
.PHONY: profile
profile: kernel image $(MICRO_BIN)
	BUILD=$(B) KERNEL=$(BZIMAGE) LIBTL=$(B)/user/libthreadlet.a \
		MICRO=$(MICRO_BIN) perf-scripts/profile.sh

# make bench-scale: hand-offs per second of two heads on 1 and 2 vCPUs,
# wall time, beside the futex pool (perf-scripts/scale.sh). RUNS passes
# through.
.PHONY: bench-scale
bench-scale: kernel image
	BUILD=$(B) KERNEL=$(BZIMAGE) LIBTL=$(B)/user/libthreadlet.a \
		perf-scripts/scale.sh
	$(REPORT)

# make aio-profile: a cached POSIX AIO read call by call, libthreadlet-aio
# against glibc's, in one -icount boot (perf-scripts/aio-prof.sh);
# $(B)/results/aio-prof.txt.
.PHONY: aio-profile
aio-profile: kernel image user
	BUILD=$(B) KERNEL=$(BZIMAGE) LIBTL=$(B)/user/libthreadlet.a \
		perf-scripts/aio-prof.sh
