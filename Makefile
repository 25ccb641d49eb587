# Convenience wrapper over CMake. Build directories live under build/.
#
#   make run        install missing packages, build release, run `clusterfit plan` (README step 1)
#   make check      the whole test suite: gcc -Werror, clang -Werror, ASan+UBSan, and TSan on the
#                   threaded transport's unit test (README step 2)
#   make build      release build only (build/release)
#   make test       gcc build + ctest only (quick)
#   make bench      release build, then every bench/bench_* binary and bench/*.py script
#   make install    cmake --install build/release (PREFIX=/usr/local, DESTDIR honoured)
#   make fuzz       libFuzzer + ASan/UBSan on each tests/fuzz/fuzz_*.c for FUZZ_SECONDS
#   make clean      remove build/

SHELL       := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
# Stages run one after another (each build is parallel inside); order matters for fail-fast.
.NOTPARALLEL:

JOBS         ?= $(shell nproc)
CTEST_JOBS   ?= 2
CMAKE        ?= cmake
CTEST        ?= ctest
GCC          ?= gcc
CLANG        ?= clang
PYTHON       ?= python3
PREFIX       ?= /usr/local
FUZZ_SECONDS ?= 60
ARGS         ?=

BUILD   := build
RELEASE := $(BUILD)/release
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
CHECK_STAGES := gcc clang asan tsan
# cmake's own make gets -j$(JOBS), not our flags/jobserver (and no "Entering directory" noise).
SUBBUILD := env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL

# $(call cmake_build,DIR,COMPILER,BUILD_TYPE,EXTRA_CMAKE_ARGS): configure (CC is only read on
# the first configure of DIR, so each compiler gets its own DIR) and build.
define cmake_build
CC=$(2) $(CMAKE) -S . -B $(1) -DCMAKE_BUILD_TYPE=$(3) -DCMAKE_EXPORT_COMPILE_COMMANDS=ON $(4)
$(SUBBUILD) $(CMAKE) --build $(1) -j $(JOBS)
endef

# $(call run_ctest,DIR,ENV[,CTEST_ARGS]): run the suite (or the tests CTEST_ARGS select) in DIR; record "PASSED FAILED" in DIR/ctest.count
# from ctest's "NN% tests passed, F tests failed out of T" line; exit non-zero on any failure.
define run_ctest
@rm -f $(1)/ctest.count; rc=0; \
$(2) $(CTEST) --test-dir $(1) --output-on-failure -j $(CTEST_JOBS) --no-tests=error $(3) \
    2>&1 | tee $(1)/ctest.log || rc=$$?; \
summary=$$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' $(1)/ctest.log | tail -n 1 || true); \
if [[ -z $$summary ]]; then echo "ctest in $(1) gave no summary line (exit $$rc)" >&2; exit 1; fi; \
failed=$$(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$$summary"); \
total=$$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$$summary"); \
echo "$$((total - failed)) $$failed" >$(1)/ctest.count; \
if ((rc != 0 || failed != 0)); then exit 1; fi
endef

.DEFAULT_GOAL := build
.PHONY: build run deps check $(CHECK_STAGES:%=check-%) test bench install fuzz clean

deps:
	@bash scripts/deps.sh

build:
	$(call cmake_build,$(RELEASE),$(GCC),RelWithDebInfo,)

run: deps build
	$(RELEASE)/clusterfit plan $(ARGS)

# Fail fast: the stages stop at the first failing build or test. The last line is always
# "check: N passed, 0 failed" on success; on failure it starts "check: FAILED".
check: deps
	@rm -f $(CHECK_STAGES:%=$(BUILD)/%/ctest.count)
	@failed_stage=; \
	for stage in $(CHECK_STAGES); do \
	    $(MAKE) --no-print-directory check-$$stage || { failed_stage=$$stage; break; }; \
	done; \
	read -r passed failed < <(cat $(CHECK_STAGES:%=$(BUILD)/%/ctest.count) 2>/dev/null | \
	    awk '{ p += $$1; f += $$2 } END { print p + 0, f + 0 }'); \
	if [[ -n $$failed_stage ]]; then \
	    echo "check: FAILED in stage $$failed_stage ($$passed passed, $$failed failed so far)"; \
	    exit 1; \
	fi; \
	echo "check: $$passed passed, $$failed failed"

check-gcc:
	@echo "==== check [1/4] gcc, -Werror, RelWithDebInfo ($(BUILD)/gcc) ===="
	$(call cmake_build,$(BUILD)/gcc,$(GCC),RelWithDebInfo,-DCFIT_WERROR=ON -DCFIT_SANITIZE=OFF)
	$(call run_ctest,$(BUILD)/gcc,)

check-clang:
	@echo "==== check [2/4] clang, -Werror, RelWithDebInfo ($(BUILD)/clang) ===="
	$(call cmake_build,$(BUILD)/clang,$(CLANG),RelWithDebInfo,-DCFIT_WERROR=ON -DCFIT_SANITIZE=OFF)
	$(call run_ctest,$(BUILD)/clang,)

check-asan:
	@echo "==== check [3/4] gcc, ASan+UBSan, Debug ($(BUILD)/asan) ===="
	$(call cmake_build,$(BUILD)/asan,$(GCC),Debug,-DCFIT_WERROR=OFF -DCFIT_SANITIZE=ON)
	$(call run_ctest,$(BUILD)/asan,$(SAN_ENV))

# The tcp transport's I/O threads (src/bench/transport_tcp.c) under ThreadSanitizer: only the
# comm unit test is built and run (it forces threads on, whatever the machine's CPU count).
check-tsan:
	@echo "==== check [4/4] gcc, TSan, Debug, the threaded transport's unit test ($(BUILD)/tsan) ===="
	CC=$(GCC) $(CMAKE) -S . -B $(BUILD)/tsan -DCMAKE_BUILD_TYPE=Debug -DCFIT_WERROR=OFF -DCFIT_SANITIZE=OFF -DCFIT_TSAN=ON
	$(SUBBUILD) $(CMAKE) --build $(BUILD)/tsan -j $(JOBS) --target test_comm
	$(call run_ctest,$(BUILD)/tsan,TSAN_OPTIONS=halt_on_error=1,-R '^unit/test_comm$$')

test: check-gcc

# bench/*.py modules the scripts import, not benchmarks themselves
BENCH_MODULES := bench/benchcli.py bench/fidelity_args.py

bench: build
	@for src in $(wildcard bench/*.c); do \
	    b=$(RELEASE)/bench_$$(basename $$src .c); \
	    echo "==== bench: $$b ===="; \
	    $$b; \
	done
	@for py in $(filter-out $(BENCH_MODULES),$(wildcard bench/*.py)); do \
	    echo "==== bench: $(PYTHON) $$py $(RELEASE)/clusterfit ===="; \
	    $(PYTHON) $$py $(RELEASE)/clusterfit; \
	done

install: build
	DESTDIR="$(DESTDIR)" $(CMAKE) --install $(RELEASE) --prefix "$(PREFIX)"

# Fuzzing (optional, clang only; needs libclang-rt-14-dev for libFuzzer). The library is built
# with coverage instrumentation in build/fuzz; each target fuzzes a copy of its stored corpus
# (new inputs never land in tests/), and crash/leak reproducers go to build/fuzz/artifacts/.
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_CFLAGS  := -std=c11 -g -O1 -fno-omit-frame-pointer -D_POSIX_C_SOURCE=200809L \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Iinclude -Isrc
# the libraries the static library's exporter objects need (as CMakeLists.txt links them)
FUZZ_LIBS    := $(shell pkg-config --libs yaml-0.1 libmicrohttpd gnutls libxcrypt zlib 2>/dev/null) -lpthread -ldl -lm

fuzz:
	@if [[ -z "$(FUZZ_TARGETS)" ]]; then echo "fuzz: no tests/fuzz/fuzz_*.c targets"; exit 0; fi
	CC=$(CLANG) $(CMAKE) -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCFIT_SANITIZE=ON -DCFIT_TESTS=OFF -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link
	$(SUBBUILD) $(CMAKE) --build $(FUZZ_DIR) -j $(JOBS) --target clusterfit_static
	@mkdir -p $(FUZZ_DIR)/artifacts
	@for t in $(FUZZ_TARGETS); do \
	    echo "==== fuzz: $$t for $(FUZZ_SECONDS) s ===="; \
	    $(CLANG) $(FUZZ_CFLAGS) tests/fuzz/$$t.c $(FUZZ_DIR)/libclusterfit.a $(FUZZ_LIBS) -o $(FUZZ_DIR)/$$t; \
	    rm -rf $(FUZZ_DIR)/corpus/$$t; mkdir -p $(FUZZ_DIR)/corpus/$$t; \
	    if [[ -d tests/fuzz/corpus/$$t ]]; then cp -R tests/fuzz/corpus/$$t/. $(FUZZ_DIR)/corpus/$$t/; fi; \
	    $(SAN_ENV) $(FUZZ_DIR)/$$t -max_total_time=$(FUZZ_SECONDS) \
	        -artifact_prefix=$(FUZZ_DIR)/artifacts/$$t- $(FUZZ_DIR)/corpus/$$t; \
	done

clean:
	rm -rf $(BUILD)
