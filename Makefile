# Threadlets and syslets for Linux: build, boot and test.
#
#   make run     build kernel, library and image, boot, run the demo
#   make check   build everything, boot, run all tests; ends "N passed, N failed"
#   make test T=name   boot and run one guest test
#   make shell   interactive shell in the guest
#   make check-debug   all guest tests and fault injection on a debug kernel
#                      (lockdep, KASAN, UBSAN, kmemleak...: config/debug.config)
#   make bench-micro   threadlet micro-benchmark, -icount and wall modes
#   make kernel | user | image | clean | distclean
#   make install | uninstall   libthreadlet, headers, .pc, man pages
#              (DESTDIR, PREFIX=/usr/local, LIBDIR, INCLUDEDIR, UAPI_INCLUDEDIR, MANDIR)
#   make man-lint   groff -ww and mandoc -Tlint on every man page
#   make fallback-check   docs and man pages list the uapi header's
#                fallback reasons (scripts/fallback-check.sh)
#   make install-check   install into a temporary DESTDIR, build against it
#   make series  the kernel side as a git format-patch series against the
#                pinned upstream, in build/series/patches (scripts/mkseries.sh)
#   make series-check   it applies with git am, equals build/linux, is
#                checkpatch --strict clean, and builds after every patch
#                (make check runs all but the per-patch builds)
#   make deb     Debian packages libthreadlet1, libthreadlet-aio1, libthreadlet-dev
#                in build/deb/ (dpkg-deb, then lintian); make deb-check installs
#                them into a scratch root and builds against them
#
# Every target first runs scripts/install-deps.sh (apt-get, idempotent).

B        := $(CURDIR)/build
KSRC     := $(B)/linux
KOBJ     := $(B)/kobj
BZIMAGE  := $(KOBJ)/arch/x86/boot/bzImage
TBIN     := $(B)/tests
JOBS     ?= $(shell nproc)
KCC      ?= ccache gcc
KMAKE    := $(MAKE) -C $(KSRC) O=$(KOBJ) CC="$(KCC)" HOSTCC="$(KCC)" \
	    KBUILD_BUILD_TIMESTAMP="2026-01-01 00:00:00 UTC" KBUILD_BUILD_USER=threadlets \
	    KBUILD_BUILD_HOST=qemu -j$(JOBS)
export CCACHE_DIR ?= $(HOME)/.ccache
# Paths under the parent of this checkout are hashed relative to the
# compiler's directory, so a second checkout or worktree beside this one
# (and the profiling tree under build/) hits the same cache entries.
export CCACHE_BASEDIR ?= $(abspath $(CURDIR)/..)
export CCACHE_NOHASHDIR ?= 1

CC       := gcc
CFLAGS   := -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -pthread
GUEST_TESTS := $(patsubst tests/guest/%.c,$(TBIN)/%,$(wildcard tests/guest/*.c))
EXAMPLES := $(patsubst user/examples/%.c,$(TBIN)/%,$(wildcard user/examples/*.c))

OVERLAY  := $(shell find arch include kernel Documentation -type f 2>/dev/null)
PATCHES  := patches/series $(wildcard patches/*.patch)

.PHONY: install uninstall man-lint fallback-check install-check deb deb-check series series-check
.PHONY: all deps kernel kernel-debug kernel-i386 image-i386 prepare user user32 tests install-stage image run check check-debug test shell clean distclean
.DEFAULT_GOAL := all

all: kernel image

deps:
	@scripts/install-deps.sh

# --- kernel -----------------------------------------------------------------
prepare: deps
	@scripts/prepare-kernel.sh $(CURDIR) $(KSRC)

$(KOBJ)/.config: config/threadlets.config $(PATCHES) scripts/kconfig-check.sh | prepare
	@mkdir -p $(KOBJ)
	$(KMAKE) -s tinyconfig
	cd $(KOBJ) && $(KSRC)/scripts/kconfig/merge_config.sh -m -O $(KOBJ) \
		$(KOBJ)/.config $(CURDIR)/config/threadlets.config >/dev/null
	$(KMAKE) -s olddefconfig
	scripts/kconfig-check.sh config/threadlets.config $(KOBJ)/.config

# The same kernel with lockdep, RCU checking, KASAN, UBSAN, kmemleak,
# debugobjects and fault injection (config/debug.config), for check-debug.
KDBG := $(B)/kobj-debug
$(KDBG)/.config: $(KOBJ)/.config config/debug.config
	@mkdir -p $(KDBG)
	cd $(KDBG) && $(KSRC)/scripts/kconfig/merge_config.sh -m -O $(KDBG) \
		$(KOBJ)/.config $(CURDIR)/config/debug.config >/dev/null
	$(MAKE) -C $(KSRC) O=$(KDBG) -s olddefconfig
	scripts/kconfig-check.sh config/debug.config $(KDBG)/.config

kernel-debug: kernel $(KDBG)/.config
	@$(KMAKE:$(KOBJ)=$(KDBG)) -s bzImage

# The same overlay and patches as a native i386 kernel (config/i386.config
# on top of the x86-64 fragment, minus its 64-bit-only options).
KOBJ32   := $(B)/kobj-i386
BZIMAGE32 := $(KOBJ32)/arch/x86/boot/bzImage
KMAKE32  := $(KMAKE:$(KOBJ)=$(KOBJ32)) ARCH=i386
$(KOBJ32)/.config: config/threadlets.config config/i386.config $(PATCHES) scripts/kconfig-check.sh | prepare
	@mkdir -p $(KOBJ32)
	$(KMAKE32) -s tinyconfig
	cd $(KOBJ32) && $(KSRC)/scripts/kconfig/merge_config.sh -m -O $(KOBJ32) \
		$(KOBJ32)/.config $(CURDIR)/config/threadlets.config \
		$(CURDIR)/config/i386.config >/dev/null
	$(KMAKE32) -s olddefconfig
	grep -v -e '^CONFIG_64BIT=' -e '^CONFIG_IA32_EMULATION=' \
		-e '^CONFIG_LOCALVERSION=' config/threadlets.config | \
		cat - config/i386.config > $(KOBJ32)/fragment.config
	scripts/kconfig-check.sh $(KOBJ32)/fragment.config $(KOBJ32)/.config

kernel-i386: prepare $(KOBJ32)/.config
	@echo "  KERNEL  $(BZIMAGE32)"
	@$(KMAKE32) -s bzImage

kernel: prepare $(KOBJ)/.config
	@echo "  KERNEL  $(BZIMAGE)"
	@$(KMAKE) -s bzImage
	@echo "  KERNEL  $$(cat $(KOBJ)/include/config/kernel.release)"

# --- the kernel series -----------------------------------------------------------
# build/series/git: the upstream tarball as the first commit (tag
# upstream), then one commit per patches/export/NN-name; the series in
# build/series/patches. series-check builds the kernel after every patch
# (slow: the first build and the patches that change sched.h or
# mm_types.h recompile most of it), so make check runs only the rest.
series: prepare
	@scripts/mkseries.sh $(CURDIR)

series-check: prepare
	@BUILD=$(B) tests/series-check.sh --build

# --- user space ---------------------------------------------------------------
LIBTL    := $(B)/user/libthreadlet.a
TCFLAGS  := $(CFLAGS) -MMD -MP -Iuser/include -Iinclude/uapi

user: deps
	@$(MAKE) -s -C user O=$(B)/user

# The same library for 32-bit (i386) programs, and their guest tests.
LIBTL32  := $(B)/user32/libthreadlet.a
GUEST32  := $(patsubst tests/guest32/%.c,$(TBIN)/%,$(wildcard tests/guest32/*.c))

user32: deps
	@$(MAKE) -s -C user ARCH=i386 O=$(B)/user32

$(LIBTL): user
$(LIBTL32): user32

GUEST_H  := $(wildcard tests/guest/*.h)

$(TBIN)/%: tests/guest/%.c $(GUEST_H) $(LIBTL) | deps
	@mkdir -p $(TBIN)
	$(CC) $(TCFLAGS) -static -o $@ $< $(LIBTL) -lm

# The POSIX AIO tests link libthreadlet-aio first, over glibc's AIO.
LIBAIO   := $(B)/user/libthreadlet-aio.a
$(LIBAIO): user
$(TBIN)/aio-%: tests/guest/aio-%.c $(GUEST_H) $(LIBAIO) $(LIBTL) | deps
	@mkdir -p $(TBIN)
	$(CC) $(TCFLAGS) -static -o $@ $< $(LIBAIO) $(LIBTL) -lm

# The same for i386, from the same sources: aio-NAME-m32.
LIBAIO32 := $(B)/user32/libthreadlet-aio.a
$(LIBAIO32): user32
$(TBIN)/aio-%-m32: tests/guest/aio-%.c $(GUEST_H) $(LIBAIO32) $(LIBTL32) | deps
	@mkdir -p $(TBIN)
	$(CC) -m32 $(TCFLAGS) -static -o $@ $< $(LIBAIO32) $(LIBTL32) -lm

$(TBIN)/%: tests/guest32/%.c $(GUEST_H) $(LIBTL32) | deps
	@mkdir -p $(TBIN)
	$(CC) -m32 $(TCFLAGS) -Itests/guest -static -o $@ $< $(LIBTL32) -lm

# The guest tests that apply to 32-bit tasks also run as i386 programs,
# built from the same source: NAME-m32 in tests/list.
M32_TESTS := boot $(patsubst %-m32,%,$(filter %-m32,$(shell grep -v '^\#' tests/list)))
GUEST_M32 := $(patsubst %,$(TBIN)/%-m32,$(M32_TESTS))

$(TBIN)/%-m32: tests/guest/%.c $(GUEST_H) $(LIBTL32) | deps
	@mkdir -p $(TBIN)
	$(CC) -m32 $(TCFLAGS) -static -o $@ $< $(LIBTL32) -lm

# C++ guest tests (unwinding through the trampolines), both ABIs.
CXX      := g++
TCXXFLAGS := $(filter-out -std=%,$(TCFLAGS))
GUEST_CXX := $(patsubst tests/guest/%.cc,$(TBIN)/%,$(wildcard tests/guest/*.cc))

$(TBIN)/%: tests/guest/%.cc $(GUEST_H) $(LIBTL) | deps
	@mkdir -p $(TBIN)
	$(CXX) $(TCXXFLAGS) -static -o $@ $< $(LIBTL)

$(TBIN)/%-m32: tests/guest/%.cc $(GUEST_H) $(LIBTL32) | deps
	@mkdir -p $(TBIN)
	$(CXX) -m32 $(TCXXFLAGS) -static -o $@ $< $(LIBTL32)

$(TBIN)/%-m32: user/examples/%.c $(LIBTL32) | deps
	@mkdir -p $(TBIN)
	$(CC) -m32 $(TCFLAGS) -static -o $@ $< $(LIBTL32)

$(TBIN)/%: user/examples/%.c $(LIBTL) | deps
	@mkdir -p $(TBIN)
	$(CC) $(TCFLAGS) -static -o $@ $< $(LIBTL)

tests: user user32 $(GUEST_TESTS) $(GUEST_CXX) $(GUEST32) $(GUEST_M32) $(EXAMPLES)
# threadlet-server-m32 runs the example server's 32-bit build.
tests: $(TBIN)/tlhttpd-m32

# The test programs' header dependencies (-MMD -MP in TCFLAGS).
-include $(wildcard $(TBIN)/*.d)

# --- installing -----------------------------------------------------------------
# The library, its headers and .pc files (user/Makefile), and the man pages.
# PREFIX and MANDIR default here, the other directories in user/Makefile.
PREFIX   ?= /usr/local
MANDIR   ?= $(PREFIX)/share/man
INSTVARS := DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" \
	    $(foreach v,LIBDIR INCLUDEDIR UAPI_INCLUDEDIR PKGCONFIGDIR,$(if $($(v)),$(v)="$($(v))"))
MANPAGES := $(wildcard man/man[237]/*.[237])

install: user
	@$(MAKE) -s -C user O=$(B)/user $(INSTVARS) install
	@for p in $(MANPAGES); do \
		d="$(DESTDIR)$(MANDIR)/man$${p##*.}"; install -d "$$d" || exit 1; \
		if [ -L "$$p" ]; then ln -sf "$$(readlink "$$p")" "$$d/$${p##*/}"; \
		else install -m 644 "$$p" "$$d/"; fi || exit 1; \
	done

uninstall:
	@$(MAKE) -s -C user O=$(B)/user $(INSTVARS) uninstall
	@for p in $(MANPAGES); do \
		rm -f "$(DESTDIR)$(MANDIR)/man$${p##*.}/$${p##*/}"; \
	done

man-lint: deps
	@scripts/man-lint.sh

fallback-check:
	@scripts/fallback-check.sh

# Installs into a temporary DESTDIR and builds programs against it with
# pkg-config, shared and static; they stay in build/install-check/.
install-check: user user32
	@BUILD=$(B) tests/install-check.sh

# The same, for the guest image: its programs run in the guest
# (install-run), and make check counts its result lines from the log, so
# a failure here is counted there instead of stopping the build.
install-stage: user user32
	@mkdir -p $(B)/logs
	@BUILD=$(B) tests/install-check.sh > $(B)/logs/install-check.log 2>&1; \
	echo "install-check: $$(grep -c '^PASS' $(B)/logs/install-check.log) passed," \
		"$$(grep -c '^FAIL' $(B)/logs/install-check.log) failed" \
		"(build/logs/install-check.log)"

deb: deps
	@BUILD=$(B) scripts/mkdeb.sh

deb-check: deps
	@BUILD=$(B) tests/deb-check.sh

# --- guest image --------------------------------------------------------------
image: deps tests install-stage
	@tests/mkimage.sh $(B) $(TBIN) tests/list

# The native i386 guest: a static i386 busybox, and the 32-bit builds of
# the tests (boot, threadlet-i386 and every NAME-m32 of tests/list).
B32 := $(B)/i386
$(B32)/busybox: scripts/busybox-i386.sh
	@scripts/busybox-i386.sh $@

image-i386: deps tests $(B32)/busybox
	@mkdir -p $(B32)
	@{ echo boot-m32; echo threadlet-i386; grep -- '-m32$$' tests/list; } > $(B32)/list
	@BUSYBOX=$(B32)/busybox NO_TOOLS=1 tests/mkimage.sh $(B32) $(TBIN) $(B32)/list

# --- benchmarks -----------------------------------------------------------------
include perf-scripts/perf.mk

# The profilers: where the instructions of the blocking path go.
# make profile: one -icount boot that samples the hand-off loop and the futex
# pool's with perf (scripts/profile.sh; PERIOD) into $(B)/results/profile.md.
# make aio-profile: a cached POSIX AIO read call by call, libthreadlet-aio
# against glibc's, one -icount boot (scripts/aio-prof.sh).
.PHONY: profile aio-profile
profile: kernel image $(MICRO_BIN)
	$(BENCH_ENV) scripts/profile.sh

aio-profile: kernel image user
	$(BENCH_ENV) scripts/aio-prof.sh

# make profile-segments: where the instructions of one hand-off and of one
# futex pool wake go, step by step, from local_clock() stamps in a
# throwaway kernel (scripts/profile-segments.sh; -icount) into
# $(B)/results/profile-segments.md.
.PHONY: profile-segments
profile-segments: kernel $(MICRO_BIN)
	BUILD=$(B) scripts/profile-segments.sh

# make trace-handoff: every instruction of one hand-off (from the main thread
# and from a second thread), of one futex pool wake, and of a cached pread()
# alone and as syslet atoms, by function, from
# QEMU's instruction log (scripts/trace-handoff.py; -icount, single-stepped)
# into $(B)/results/trace-handoff.md.
.PHONY: trace-handoff
trace-handoff: kernel user
	mkdir -p $(B)/trace-handoff/bin $(B)/results
	$(CC) $(CFLAGS) -static -I$(CURDIR)/user/include -I$(CURDIR)/include/uapi \
		-o $(B)/trace-handoff/bin/trace-handoff scripts/trace-handoff.c $(LIBTL)
	echo trace-handoff > $(B)/trace-handoff/list
	NO_TOOLS=1 tests/mkimage.sh $(B)/trace-handoff $(B)/trace-handoff/bin \
		$(B)/trace-handoff/list > /dev/null
	scripts/trace-handoff.py $(B) $(B)/trace-handoff/bin/trace-handoff \
		$(B)/trace-handoff/initramfs.cpio $(B)/results/trace-handoff.md

# make trace-io: every instruction of io.c's uncached reads (N = 32), per
# read and by function, for TRACE_IO_METHODS, the same way
# (scripts/trace-io.py) into $(B)/results/trace-io.md. nohlt is linked
# apart from io, so that its addresses name its own functions.
# posix_aio_tl among them: io is its build (-DIO_TLAIO), whose
# posix_aio_tl is libthreadlet-aio's and whose other methods are io's.
TRACE_IO_METHODS ?= pthread io_uring threadlet_vdso syslet threadlet_loop
TRACE_IO_TLAIO = $(if $(filter posix_aio_tl,$(TRACE_IO_METHODS)),-DIO_TLAIO $(LIBAIO))
.PHONY: trace-io
trace-io: kernel user
	mkdir -p $(B)/trace-io/bin $(B)/results
	$(CC) $(CFLAGS) -static -I$(CURDIR)/user/include -I$(CURDIR)/include/uapi \
		-o $(B)/trace-io/bin/io perf-scripts/io.c $(TRACE_IO_TLAIO) $(LIBTL) -luring -laio -lrt
	$(CC) $(CFLAGS) -static -Wl,-Ttext-segment=0x10000000 \
		-o $(B)/trace-io/bin/nohlt perf-scripts/nohlt.c
	cp scripts/trace-io.sh $(B)/trace-io/bin/
	echo $(TRACE_IO_METHODS) > $(B)/trace-io/bin/trace-io.methods
	echo trace-io.sh > $(B)/trace-io/list
	NO_TOOLS=1 tests/mkimage.sh $(B)/trace-io $(B)/trace-io/bin \
		$(B)/trace-io/list > /dev/null
	scripts/trace-io.py $(B) $(B)/trace-io/bin/io $(B)/trace-io/bin/nohlt \
		$(B)/trace-io/initramfs.cpio $(B)/results/trace-io.md $(TRACE_IO_METHODS)

include tests/fuzz.mk

# --- running ------------------------------------------------------------------
# The main job: boot, run the demos (a syslet chain, the threadlet basics,
# the example server), then the micro-benchmark in deterministic (-icount)
# mode.
run: kernel image $(MICRO_BIN)
	tests/run-qemu.sh --name run --run "boot syslet_file threadlet-basic threadlet-server"
	BUILD=$(B) KERNEL=$(BZIMAGE) MICRO=$(MICRO_BIN) MODES=icount ICOUNT_RUNS=1 perf-scripts/micro.sh
	@sed "/^== perf stat/,\$$d" $(B)/results/micro-icount.txt

check: kernel image kernel-i386 image-i386
	@tests/check.sh

# Every guest test on the debug kernel, then the fault-injection test,
# which only that kernel can run. The guest ends with a kmemleak scan:
# prints the number of leaks the tests made, and fails on any.
# no5lvl: with 5-level paging (QEMU's "max" CPU has LA57), identify_cpu()
# clears boot_cpu_data's LA57 bit for a moment at boot, and KASAN, which
# derives its shadow range from it, reports any interrupt that runs then
# as a wild-memory-access. 4-level paging has no such window.
# The whole list, then fail-nth and the fuzzer (tl.last: the list itself
# no longer fits the kernel command line), seed 1, for DEBUG_FUZZ_TIME s.
DEBUG_FUZZ_TIME ?= 120
check-debug: kernel-debug image
	@KERNEL=$(KDBG)/arch/x86/boot/bzImage tests/run-qemu.sh --name check-debug \
		--timeout 1800 --guest-timeout 600 \
		--append "no5lvl tl.fuzz_seed=1 tl.fuzz_time=$(DEBUG_FUZZ_TIME) tl.last=threadlet-failnth,threadlet-fuzz"; \
		rc=$$?; \
	leaks=$$(sed -n 's/^TL-KMEMLEAK leaks=//p' $(B)/logs/check-debug.log | tail -n1); \
	echo "check-debug: kmemleak: $${leaks:-no count} leaks"; \
	[ $$rc = 0 ] && [ "$$leaks" = 0 ]

test: kernel image
	tests/run-qemu.sh --name test-$(T) --run "$(T)"

shell: kernel image
	tests/run-qemu.sh --shell

clean:
	rm -rf $(B)/tests $(B)/initramfs.* $(B)/logs $(B)/disk.img
	-[ -d $(KOBJ) ] && $(KMAKE) -s clean

distclean:
	rm -rf $(B)
