# SPDX-License-Identifier: MIT
# concsched build. Out of tree into build/ (BUILD=...). Quiet unless V=1.
#   make            build the concsched binary, BPF objects, tests, examples
#   make deps       install every package and fetch the VM kernel (root)
#   make test       check-layout, then unit + host + VM tests (TAP, tools/test-lanes)
#   make test-repeat N=20 TESTS="tests/vm/NAME.t ..."  the flake hunter
#   make test-kernels  the VM tests on each VM kernel (sid, trixie-backports)
#   make check-layout  userspace/ layout: no include/call cycle, no upward arrow,
#                      every export on its file's prefix
#   make bench      benchmarks (results go to docs/perf.md by hand)
#   make bench-bugs every strategy on the bug-class corpus (hours; docs/perf.md)
#   make vmlinux    regenerate build/vmlinux.h
#   make install    PREFIX=/usr/local DESTDIR=
#   make format     clang-format every C file; make format-check in CI

BUILD    ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

ARCH_DEF := -D__TARGET_ARCH_x86
CFLAGS   ?= -O2 -g
CFLAGS   += -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers \
	    -std=gnu11 -D_GNU_SOURCE -DCONCSCHED_VERSION='"$(VERSION)"' \
	    -Ibpf -Iuserspace -I$(BUILD)/skel -Itests $(shell pkg-config --cflags jansson)
LDLIBS   += -lbpf -lelf -lz -ldw -lcapstone -lsqlite3 -lpthread -lm \
	    $(shell pkg-config --libs jansson)
BPF_CFLAGS := -g -O2 -target bpf $(ARCH_DEF) -I$(BUILD) -Ibpf -Wall -Werror \
	      -Wno-missing-declarations -Wno-unused-function

BPF_SRCS   := $(wildcard probes/*.bpf.c sched/*.bpf.c)
BPF_OBJS   := $(patsubst %.bpf.c,$(BUILD)/bpf/%.bpf.o,$(notdir $(BPF_SRCS)))
SKELS      := $(patsubst %.bpf.c,$(BUILD)/skel/%.skel.h,$(notdir $(BPF_SRCS)))
# userspace/: one folder per responsibility (docs/DESIGN.md "Layout"); the
# unit tests and benchmarks link everything but the command-line folder.
USR_DIRS   := lib vm kernel coverage strategies results run replay campaign experiment cli
USR_SRCS   := $(foreach d,$(USR_DIRS),$(wildcard userspace/$(d)/*.c))
USR_HDRS   := $(foreach d,$(USR_DIRS),$(wildcard userspace/$(d)/*.h))
USR_OBJS   := $(patsubst userspace/%.c,$(BUILD)/obj/%.o,$(USR_SRCS))
LIB_OBJS   := $(filter-out $(BUILD)/obj/cli/%,$(USR_OBJS))
UNIT_SRCS  := $(wildcard tests/unit/*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%.t,$(UNIT_SRCS))
PROG_SRCS  := $(wildcard tests/programs/*.c examples/*.c)
PROG_BINS  := $(patsubst %.c,$(BUILD)/%,$(PROG_SRCS))
# Shared libraries of test targets (tests/programs/lib/NAME.c: libNAME.so)
TESTLIB_BINS := $(patsubst tests/programs/lib/%.c,$(BUILD)/tests/programs/lib/lib%.so,$(wildcard tests/programs/lib/*.c))
# Programs also built static, non-PIE and stripped (probe/symbolizer tests).
VARIANT_PROGS := $(patsubst %,$(BUILD)/tests/programs/%,$(shell cat tests/programs/VARIANTS 2>/dev/null))
VARIANT_BINS  := $(foreach p,$(VARIANT_PROGS),$(p)-static $(p)-nopie $(p)-stripped)
# The GoogleTest/CTest project of tests/gtest (docs/experiment.md "Test
# suites"), configured and built by cmake in its own build directory.
GTEST_BIN  := $(BUILD)/tests/gtest/account_test
BENCH_SRCS := $(wildcard tools/bench/*.c)
BENCH_BINS := $(patsubst tools/bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps test test-unit test-host test-vm test-repeat test-kernels check-layout bench bench-bugs bench-real vmlinux install uninstall clean format format-check

all: $(BUILD)/concsched $(UNIT_BINS) $(PROG_BINS) $(TESTLIB_BINS) $(VARIANT_BINS) $(BENCH_BINS) $(GTEST_BIN)

deps:
	$(Q)tools/deps.sh

$(BUILD)/vmlinux.h:
	$(call msg,VMLINUX,$@)
	$(Q)mkdir -p $(BUILD) && BPFTOOL=$(BPFTOOL) tools/gen-vmlinux.sh $@

vmlinux:
	$(Q)rm -f $(BUILD)/vmlinux.h
	$(Q)$(MAKE) --no-print-directory $(BUILD)/vmlinux.h

$(BUILD)/bpf/%.bpf.o: probes/%.bpf.c $(BUILD)/vmlinux.h $(wildcard bpf/*.h)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D) && $(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bpf/%.bpf.o: sched/%.bpf.c $(BUILD)/vmlinux.h $(wildcard bpf/*.h)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D) && $(CLANG) $(BPF_CFLAGS) -c $< -o $@

# bpftool 7.5 (libbpf 1.5) emits map->link, a field libbpf 1.4 lacks (docs/kernel.md).
$(BUILD)/skel/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)mkdir -p $(@D) && $(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf | sed '/map->link = /d' >$@

$(BUILD)/obj/%.o: userspace/%.c $(SKELS) $(USR_HDRS) $(wildcard bpf/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/concsched: $(USR_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/tests/unit/%.t: tests/unit/%.c $(LIB_OBJS) tests/tap.h tests/tap_taskset.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $< $(LIB_OBJS) -o $@ $(LDLIBS)

# Test targets: -O0 keeps their loads/stores and lock calls where the source has them.
$(BUILD)/tests/programs/%: tests/programs/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) -O1 -g -pthread -Wall -Werror $< -o $@
# Programs made of a shared body (tests/programs/*.h) and a few defines.
$(patsubst %,$(BUILD)/tests/programs/%,race_one_of_10 race_one_of_20 race_one_of_100): \
	tests/programs/race_one_of_n.h
$(BUILD)/tests/programs/race_trylock_wrap $(BUILD)/tests/programs/clean_trylock_wrap: \
	tests/programs/trylock_wrap.h
$(BUILD)/tests/programs/race_pipeline_ledger $(BUILD)/tests/programs/clean_pipeline_ledger: \
	tests/programs/pipeline_ledger.h
$(BUILD)/tests/programs/race_uaf_printf $(BUILD)/tests/programs/clean_uaf_printf: \
	tests/programs/uaf_printf.h
$(BUILD)/tests/programs/lib/lib%.so: tests/programs/lib/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) -O1 -g -pthread -shared -fPIC -Wall -Werror $< -o $@
# Link the library above, found through its RUNPATH.
LIB_PROGS := $(patsubst %,$(BUILD)/tests/programs/%,in_library probe_scope)
$(LIB_PROGS): $(BUILD)/tests/programs/%: tests/programs/%.c $(BUILD)/tests/programs/lib/libsharedsync.so
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) -O1 -g -pthread -Wall -Werror $< -o $@ \
		-L$(BUILD)/tests/programs/lib -lsharedsync -Wl,-rpath,'$$ORIGIN/lib'
$(BUILD)/tests/programs/%-static: tests/programs/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) -O1 -g -pthread -static -Wall -Werror $< -o $@
$(BUILD)/tests/programs/%-nopie: tests/programs/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) -O1 -g -pthread -no-pie -fno-pie -Wall -Werror $< -o $@
$(BUILD)/tests/programs/%-stripped: $(BUILD)/tests/programs/%
	$(call msg,STRIP,$@)
	$(Q)strip -s $< -o $@
$(BUILD)/examples/%: examples/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) -O1 -g -pthread -Wall -Werror $< -o $@
$(GTEST_BIN): tests/gtest/CMakeLists.txt $(wildcard tests/gtest/*.cc)
	$(call msg,CMAKE,$@)
	+$(Q)cmake -S tests/gtest -B $(BUILD)/tests/gtest >/dev/null && \
		cmake --build $(BUILD)/tests/gtest >/dev/null
$(BUILD)/bench/%: tools/bench/%.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $< $(LIB_OBJS) -o $@ $(LDLIBS)

# Every test gets a timeout (tools/run-test); the VM tests need root and
# the VM kernel that `make deps` caches. TESTS= narrows the set; --timer
# prints each file's wall time (what docs/testing.md's time table reads).
PROVE ?= prove --timer
# Unit and host tests run one at a time (host tests attach probes to the
# same libraries); VM tests VM_JOBS at a time: each VM's TCG emulation runs
# on one host core.
VM_JOBS ?= 2
# The VM files in the order prove starts them: the longest first (their
# seconds in docs/testing.md's time table), then the rest by name, so the
# two lanes end close together instead of one waiting on a long file
# started last.
VM_LONG := 44-clean-corpus 58-run-jobs-steered 49-schedule 50-noise-access 48-replay-order
VM_TESTS = $(wildcard $(VM_LONG:%=tests/vm/%.t)) \
	$(filter-out $(VM_LONG:%=tests/vm/%.t),$(sort $(wildcard tests/vm/*.t)))
# Every test target first measures the machine's speed (tools/test-speed):
# the tests' limits scale with it, so a slow or loaded machine gets longer
# limits, not failures (docs/testing.md). make test runs the unit and host
# tests one after another in one of the VM_JOBS lanes, beside the VM tests
# in the others (tools/test-lanes; TEST_VERBOSE=1 for every check's line).
test: all check-layout
	$(Q)tools/test-speed $(BUILD)
	$(Q)tools/test-lanes -j $(VM_JOBS) $(sort $(wildcard $(BUILD)/tests/unit/*.t)) \
		$(sort $(wildcard tests/host/*.t)) -- $(VM_TESTS)
test-unit: all
	$(Q)tools/test-speed $(BUILD)
	$(Q)$(PROVE) --exec tools/run-test -r $(BUILD)/tests/unit
test-host: all
	$(Q)tools/test-speed $(BUILD)
	$(Q)$(PROVE) --exec tools/run-test -r tests/host
test-vm: all
	$(Q)tools/test-speed $(BUILD)
	$(Q)$(PROVE) --exec tools/run-test -j$(VM_JOBS) $(VM_TESTS)
# The flake hunter: each of TESTS (default: every VM test) N times, VM_JOBS
# at a time, and a table of how often each check failed (tools/test-repeat).
N ?= 20
TESTS ?= $(wildcard tests/vm/*.t)
test-repeat: all
	$(Q)tools/test-speed $(BUILD)
	$(Q)tools/test-repeat -n $(N) -j $(VM_JOBS) $(TESTS)
# The VM tests on each cached kernel (docs/vm.md "Kernels"): sid's, then
# trixie-backports' (CONCSCHED_VM_KERNEL picks the one a VM boots).
VM_KERNELS ?= sid trixie-backports
test-kernels: all
	$(Q)tools/test-speed $(BUILD)
	$(Q)set -e; for k in $(VM_KERNELS); do \
		echo "== VM tests on the $$k kernel"; \
		CONCSCHED_VM_KERNEL=$$k $(PROVE) --exec tools/run-test -j$(VM_JOBS) $(VM_TESTS); \
	done
# userspace/ layout (tools/check-layout --help); the objects feed its symbol check.
check-layout: $(BUILD)/concsched
	$(Q)tools/check-layout --build $(BUILD)

bench: all
	$(Q)tools/bench/run

# Real threaded programs (compressors) against Helgrind: race warnings,
# round-trip failures, cost (tools/bench/real.sh; docs/races.md).
bench-real: all
	$(Q)tools/bench/real.sh

# Every strategy on the bug-class corpus, 5 seeds each (hours in the VM),
# then what a steered --access run costs on each program (~30 minutes).
bench-bugs: all
	$(Q)tools/bench/bugs/run
	$(Q)tools/bench/bugs/cost

install: $(BUILD)/concsched
	install -D -m 0755 $(BUILD)/concsched $(DESTDIR)$(PREFIX)/bin/concsched
	install -D -m 0644 man/concsched.1 $(DESTDIR)$(PREFIX)/share/man/man1/concsched.1
	install -D -m 0755 tools/vm-kernel.sh $(DESTDIR)$(PREFIX)/lib/concsched/vm-kernel.sh
	install -D -m 0755 tools/vm-init.sh $(DESTDIR)$(PREFIX)/lib/concsched/vm-init.sh

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/concsched $(DESTDIR)$(PREFIX)/share/man/man1/concsched.1
	rm -rf $(DESTDIR)$(PREFIX)/lib/concsched

clean:
	rm -rf $(BUILD)

FMT_SRCS = $(wildcard bpf/*.h probes/*.c sched/*.c userspace/*/*.c userspace/*/*.h tests/*.h tests/unit/*.c tests/programs/*.c tests/programs/*.h tests/programs/lib/*.c examples/*.c tools/bench/*.c)
format:
	clang-format -i $(FMT_SRCS)
format-check:
	clang-format --dry-run -Werror $(FMT_SRCS)

# The seed 000 study (docs/studies/tsa.md, tools/study/tsa.sh): campaigns of
# tsa, tsa-h and the RND baselines on tests/programs/study_*, ~40 minutes in
# the VM. Not part of `make test`. STUDY_N, STUDY_R, STUDY_R_BEST,
# STUDY_SUBJECTS, STUDY_STRATEGIES override the design.
# The host-stall study (docs/sched.md "A host stall is not the owner's
# run"): stops its own VM's qemu at random moments while serial fifo runs;
# TAP. On a quiet machine only: see the file's head. Not part of make test.
.PHONY: study-sched-stall
study-sched-stall: $(BUILD)/concsched $(BUILD)/tests/programs/serial_order
	$(Q)prove --exec tools/run-test tools/study/sched-stall.t

.PHONY: study-tsa
study-tsa: $(BUILD)/concsched $(patsubst %.c,$(BUILD)/%,$(wildcard tests/programs/study_*.c))
	$(Q)tools/study/tsa.sh $(BUILD)/study-tsa
