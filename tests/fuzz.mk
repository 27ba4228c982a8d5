# Seeded fuzzer of the threadlet and syslet system calls, the vDSO calls and
# the memory shared with the kernel (tests/guest/threadlet-fuzz.c), with
# chaos threads. Included from the Makefile.
#
#   make fuzz [SEED=n] [TIME=seconds]        build, boot once, fuzz for TIME s
#   make fuzz-debug [SEED=n] [TIME=seconds]  the same on the lockdep/KASAN kernel
#   make fuzz-i386 [SEED=n] [TIME=seconds]   the 32-bit build on the native i386
#                                            kernel (qemu-system-i386)
#   ... M32=1                                fuzz and fuzz-debug run the 32-bit
#                                            build (threadlet-fuzz-m32, the same
#                                            source) on the x86-64 kernel
#   ... FUZZ_EXCLUDE=mtfork,rawland          leave features out (the fuzzer's -x),
#                                            e.g. to get past a known bug
#   ... PEERS=1                              fuzz and fuzz-debug run it beside
#                                            Debian's stress-ng and trinity
#                                            (tests/image/fuzz-peers), from an
#                                            image of their own
#
# Defaults: SEED=1, TIME=60. The guest reads both from the kernel command
# line (tl.fuzz_seed=, tl.fuzz_time=). Each round's seed is printed before
# the round runs; tests/fuzz.sh ties every kernel report in the serial log
# (build/logs/fuzz.log) to its round and prints how to reproduce it.
# SEED and TIME count only when given on the make command line: TIME in
# the environment is GNU time's output format.
FUZZ_SEED := $(if $(filter command line override file,$(origin SEED)),$(SEED),1)
FUZZ_TIME := $(if $(filter command line override file,$(origin TIME)),$(TIME),60)
FUZZ_EXCLUDE ?=
FUZZ_ARGS = --seed $(FUZZ_SEED) --time $(FUZZ_TIME) $(if $(FUZZ_EXCLUDE),--exclude $(FUZZ_EXCLUDE))
# M32=1: the 32-bit build; its runs keep logs of their own (fuzz-m32.log).
FUZZ_M32 := $(if $(filter 1,$(M32)),-m32)
FUZZ_BIN  = --bin threadlet-fuzz$(FUZZ_M32) \
	    --repro "make $@$(if $(FUZZ_M32), M32=1)$(if $(FUZZ_PEERS), PEERS=1)"
# PEERS=1: the image with stress-ng and trinity, in $(B)/peers.
FUZZ_PEERS := $(filter 1,$(PEERS))
FUZZ_IMAGE = $(if $(FUZZ_PEERS),mkdir -p $(B)/peers && WITH_PEERS=1 tests/mkimage.sh $(B)/peers $(TBIN) tests/list &&)
FUZZ_ENV = $(if $(FUZZ_PEERS),INITRD=$(B)/peers/initramfs.cpio DISK=$(B)/peers/disk.img)
FUZZ_RUN = $(if $(FUZZ_PEERS),--peers)
FUZZ_NAME = $(if $(FUZZ_PEERS),-peers)

# The 32-bit build is not in tests/list (neither is threadlet-fuzz): the
# images get it as one of the other programs of $(TBIN).
tests: $(TBIN)/threadlet-fuzz-m32

.PHONY: fuzz fuzz-debug fuzz-i386
fuzz: kernel image
	$(FUZZ_IMAGE) BUILD=$(B) KERNEL=$(BZIMAGE) $(FUZZ_ENV) \
		tests/fuzz.sh --name fuzz$(FUZZ_M32)$(FUZZ_NAME) $(FUZZ_BIN) $(FUZZ_RUN) $(FUZZ_ARGS)

fuzz-debug: kernel-debug image
	$(FUZZ_IMAGE) BUILD=$(B) KERNEL=$(KDBG)/arch/x86/boot/bzImage $(FUZZ_ENV) \
		tests/fuzz.sh --name fuzz-debug$(FUZZ_M32)$(FUZZ_NAME) $(FUZZ_BIN) $(FUZZ_RUN) $(FUZZ_ARGS)

# As tests/check.sh boots the i386 kernel (an Intel vendor string: see there).
fuzz-i386: kernel-i386 image-i386
	BUILD=$(B) KERNEL=$(KOBJ32)/arch/x86/boot/bzImage INITRD=$(B32)/initramfs.cpio \
		DISK=$(B32)/disk.img QEMU_BIN=qemu-system-i386 QEMU_CPU=max,vendor=GenuineIntel \
		tests/fuzz.sh --name fuzz-i386 --bin threadlet-fuzz-m32 --repro "make fuzz-i386" \
		$(FUZZ_ARGS)
