# Benchmarks in perf-scripts/, included from the top-level Makefile after
# B, CC, CFLAGS and BZIMAGE are set:
#
#   make bench-micro   build the kernel, the image and perf-scripts/micro.c,
#                      then run it in QEMU with -icount (1 ns = 1 guest
#                      instruction) and in wall-clock TCG; the figures go to
#                      $(B)/results/micro-icount.txt and micro-wall.txt.

MICRO_BIN := $(B)/tests/micro

# Static, like the guest tests; linked against the library in $(B)/user.
$(MICRO_BIN): perf-scripts/micro.c $(B)/user/libthreadlet.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iuser/include -Iinclude/uapi -static -o $@ $< \
		$(B)/user/libthreadlet.a

.PHONY: bench-micro
bench-micro: kernel image $(MICRO_BIN)
	BUILD=$(B) KERNEL=$(BZIMAGE) LIBTL=$(B)/user/libthreadlet.a \
		MICRO=$(MICRO_BIN) perf-scripts/micro.sh

# make bench: both benchmarks. make bench-io: the I/O comparison alone;
# perf-scripts/io.sh builds perf-scripts/io.c and the fio shim itself (into
# $(B)/bench-io/bin), boots wall-clock, throttled-disk and two -icount
# guests, and writes $(B)/results/io.md and io-{cached,mixed,uncached,
# throttled}.png. THROTTLE and ICOUNT_RUNS pass through (see io.sh).
.PHONY: bench bench-io
bench: kernel image $(MICRO_BIN)
	BUILD=$(B) KERNEL=$(BZIMAGE) LIBTL=$(B)/user/libthreadlet.a \
		MICRO=$(MICRO_BIN) perf-scripts/micro.sh
	BUILD=$(B) KERNEL=$(BZIMAGE) LIBTL=$(B)/user/libthreadlet.a \
		perf-scripts/io.sh

bench-io: kernel image
	BUILD=$(B) KERNEL=$(BZIMAGE) LIBTL=$(B)/user/libthreadlet.a \
		perf-scripts/io.sh

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
