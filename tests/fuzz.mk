# Seeded fuzzer of the threadlet and syslet system calls, the vDSO calls and
# the memory shared with the kernel (tests/guest/threadlet-fuzz.c), with
# chaos threads. Included from the Makefile.
#
#   make fuzz [SEED=n] [TIME=seconds]        build, boot once, fuzz for TIME s
#   make fuzz-debug [SEED=n] [TIME=seconds]  the same on the lockdep/KASAN kernel
#   ... FUZZ_EXCLUDE=mtfork,rawland          leave features out (the fuzzer's -x),
#                                            e.g. to get past a known bug
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

.PHONY: fuzz fuzz-debug
fuzz: kernel image
	BUILD=$(B) KERNEL=$(BZIMAGE) tests/fuzz.sh --name fuzz $(FUZZ_ARGS)

fuzz-debug: kernel-debug image
	BUILD=$(B) KERNEL=$(KDBG)/arch/x86/boot/bzImage \
		tests/fuzz.sh --name fuzz-debug $(FUZZ_ARGS)
