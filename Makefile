# stackrec — record stacks with eBPF, convert them offline. See README.md.
#
#   make              build ./stackrec (installs missing Debian build packages first, as root)
#   make check        run every test (tests/README.md); SANITIZE=1 builds with ASan+UBSan
#   make demo         record the bundled demo workload and print its top stacks
#   make fixtures     rebuild fixtures/ recordings and expected outputs (needs root and BPF)
#   make bench        measure stackrec against perf side by side (bench/run.sh; about 12 minutes, BENCH_QUICK=1
#                     about 2) and write the table to docs/performance.md; a benchmark, not part of `make check`
#   make stress       a 60 s system-wide recording under exec storms and 64 threads (bench/stress.sh): samples,
#                     lost, peak memory, convert time, unnamed processes, written to docs/performance.md
#   V=1               show full commands
#
# Sources are found by wildcard: a new file in record/, convert/ or formats/ needs no Makefile change.

CC := cc
CLANG ?= clang
BPFTOOL ?= bpftool
OUT := build
# Set before CFLAGS_BASE, whose -I$(OUT) (the skeletons) is expanded where it is defined.
ifeq ($(SANITIZE),1)
OUT := build-sanitize
endif

# Debian packages the build and the tests need; `make deps` installs the missing ones.
BUILD_PACKAGES := clang llvm bpftool libbpf-dev libelf-dev libdw-dev libdebuginfod-dev libzstd-dev libdeflate-dev libisal-dev \
	zlib1g-dev libiberty-dev libprotobuf-c-dev protobuf-c-compiler pkg-config make gcc
TEST_PACKAGES := elfutils zstd time python3-jsonschema libclang-rt-14-dev binutils procps libc6-dbg debuginfod curl g++ \
	golang-go dwz binutils-x86-64-linux-gnu-dbg liburing-dev
# ... and `make bench`: perf to compare with, the workloads (Debian's own python3, xz, sqlite3, built without
# frame pointers), libc's symbols (__libc_start_call_main), and F's binaries to symbolize: libbfd's and the
# assembler's debug files, the Go and C++ compilers for its own programs.
BENCH_PACKAGES := linux-perf sqlite3 xz-utils python3 libc6-dbg gcc coreutils mawk time binutils elfutils llvm \
	libbinutils-dbg binutils-x86-64-linux-gnu-dbg golang-go g++

CFLAGS_BASE := -std=gnu11 -g -O2 -Wall -Wextra -Werror -Wno-missing-field-initializers \
	-fno-omit-frame-pointer -D_GNU_SOURCE -I$(OUT) -I.
ifeq ($(SANITIZE),1)
CFLAGS_BASE += -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif
CFLAGS ?=
override CFLAGS := $(CFLAGS_BASE) $(CFLAGS)
# libbpf, libprotobuf-c and libdeflate are linked in statically: only what a command calls of them is then paged
# in, with the rest of ./stackrec, where each shared library costs its headers, symbol tables, data and the first
# pages of its code, touched at start-up whether or not the command uses it (`stackrec symbolize` never calls libbpf
# or libprotobuf-c): 300-400 KiB of a cold `stackrec symbolize`'s peak RSS on a C++ program. elfutils' and zlib stay
# shared (static libdw took 1.6% more instructions), and so does libzstd: its assembly functions have two global
# symbols at one address, which elf_symbols and libdwfl name differently (test-convert checks its own symbols).
LIBS := -Wl,-Bstatic -lbpf -ldeflate -lprotobuf-c -Wl,-Bdynamic -lelf -ldw -lzstd -lz -liberty

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

BPF_SRCS := $(wildcard bpf/*.bpf.c)
SKELETONS := $(patsubst bpf/%.bpf.c,$(OUT)/%.skel.h,$(BPF_SRCS))
PROTO_SRCS := $(wildcard formats/*.proto)
PROTO_C := $(patsubst formats/%.proto,$(OUT)/%.pb-c.c,$(PROTO_SRCS))
# record/ last: its BPF skeletons' bytes (740 KiB of .rodata) then come after the constants the other commands read,
# rather than between them, where the pages around those constants took some of them into every command's RSS.
SRCS := stackrec.c util.c cache_dir.c file_cut_guard.c interrupt_cleanup.c $(wildcard convert/*.c formats/*.c record/*.c)
OBJS := $(patsubst %.c,$(OUT)/%.o,$(SRCS)) $(PROTO_C:.c=.o)
LIB_OBJS := $(filter-out $(OUT)/stackrec.o,$(OBJS))
TEST_SRCS := $(wildcard tests/unit/*.c)
TEST_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(TEST_SRCS))

# `STACKREC=PATH make bench` (or `make bench BENCH_STACKREC=PATH`) measures that build instead of ./stackrec.
ifeq ($(origin STACKREC)$(origin BENCH_STACKREC),environmentundefined)
BENCH_STACKREC := $(STACKREC)
endif
STACKREC := stackrec
ifeq ($(SANITIZE),1)
STACKREC := $(OUT)/stackrec
endif

.PHONY: all deps check demo fixtures bench stress clean unit-tests
.SECONDARY:
.SECONDEXPANSION:
all: deps $(STACKREC)

deps:
	@missing=; for p in $(BUILD_PACKAGES) $(if $(filter check demo fixtures,$(MAKECMDGOALS)),$(TEST_PACKAGES)) \
			$(if $(filter bench,$(MAKECMDGOALS)),$(BENCH_PACKAGES)) $(if $(filter stress,$(MAKECMDGOALS)),gcc time); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" -ne 0 ]; then echo "stackrec: missing Debian packages:$$missing (run as root: apt-get install$$missing)" >&2; exit 1; fi; \
		echo "  APT      $$missing"; \
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	fi

$(STACKREC): $(OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(OUT)/vmlinux.h: | deps
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(OUT)
	$(Q)if [ ! -r /sys/kernel/btf/vmlinux ]; then echo "stackrec: this kernel has no BTF (/sys/kernel/btf/vmlinux): CONFIG_DEBUG_INFO_BTF is needed to build the BPF programs" >&2; exit 1; fi
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(OUT)/%.bpf.o: bpf/%.bpf.c bpf/%.h $(OUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUT) -Ibpf -c $< -o $@

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(OUT)/%.pb-c.c $(OUT)/%.pb-c.h: formats/%.proto | deps
	$(call msg,PROTOC,$@)
	$(Q)mkdir -p $(OUT)
	$(Q)protoc-c --proto_path=formats --c_out=$(OUT) $<

$(OUT)/%.pb-c.o: $(OUT)/%.pb-c.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(filter-out -Werror -Wextra,$(CFLAGS)) -c $< -o $@

# Every object may include a skeleton or generated proto header: generate them first.
$(OUT)/%.o: %.c $(SKELETONS) $(PROTO_C) | deps
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/tests/%: tests/unit/%.c $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

unit-tests: $(TEST_BINS)

# make fuzz [FUZZ_SECONDS=60]: builds the libFuzzer target tests/fuzz/fuzz-recording.c with clang (needs
# libclang-rt-14-dev) and fuzzes the recording reader for FUZZ_SECONDS from the seeds in tests/fuzz/corpus/,
# keeping what it learns in $(OUT)/fuzz/corpus/ and any crashing input in $(OUT)/fuzz/crash-*; the same for
# each parser's target (FUZZ_PARSERS below) and the unwinder's (fuzz-unwind), then runs the damage campaign
# (fuzz-damage, below).
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS := -std=gnu11 -g -O1 -fno-omit-frame-pointer -D_GNU_SOURCE -I. \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_LIB_SRCS := util.c formats/recording_reader.c formats/recording_writer.c

$(OUT)/fuzz/fuzz-recording: tests/fuzz/fuzz-recording.c tests/fuzz/fuzz-input.h $(FUZZ_LIB_SRCS) \
		$(wildcard formats/recording*.h) util.h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_LIB_SRCS) -lzstd -ldeflate -lz

# make fuzz-unwind [FUZZ_SECONDS=60]: the same for the offline unwinder (tests/fuzz/fuzz-unwind.c): register
# values and stack bytes walked with the CFI of fixtures/bin/unwind (and of this machine's libc and ld.so), from
# the seeds in tests/fuzz/unwind-corpus/ (`make fuzz-unwind-seeds` writes them from fixtures/*.rec, and edge-*
# from one of them, cut where a planned CFI step's saved registers lie; crash-* seeds are inputs that once
# failed), learning in $(OUT)/fuzz/unwind-corpus/, crashing inputs in $(OUT)/fuzz/unwind-crash-*.
FUZZ_UNWIND_SRCS := util.c cache_dir.c convert/unwind.c convert/cfi_rules.c convert/module_file.c \
	convert/debug_file.c convert/debuginfod_client.c convert/input_file.c convert/zstd_sections.c convert/debug_copies.c \
	convert/process_maps.c convert/profile.c convert/call_site.c convert/elf_symbols.c

$(OUT)/fuzz/fuzz-unwind: tests/fuzz/fuzz-unwind.c $(FUZZ_UNWIND_SRCS) $(wildcard convert/*.h formats/recording*.h) \
		util.h cache_dir.h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -DFUZZ_FIXTURES_DIR='"$(CURDIR)/fixtures"' -o $@ $< $(FUZZ_UNWIND_SRCS) \
		-ldw -lelf -lzstd -ldeflate -lz

# make fuzz-symbol-cache [FUZZ_SECONDS=60]: the same for the symbol cache's reader (tests/fuzz/fuzz-symbol-cache.c),
# from the entries in tests/fuzz/symbol-cache-corpus/ (`make fuzz-symbol-cache-seeds` writes them), learning in
# $(OUT)/fuzz/symbol-cache-corpus/, crashing inputs in $(OUT)/fuzz/symbol-cache-crash-*.
FUZZ_SYMBOL_CACHE_SRCS := util.c cache_dir.c convert/symbol_cache.c convert/profile.c

$(OUT)/fuzz/fuzz-symbol-cache: tests/fuzz/fuzz-symbol-cache.c $(FUZZ_SYMBOL_CACHE_SRCS) convert/symbol_cache.h \
		convert/profile.h util.h cache_dir.h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_SYMBOL_CACHE_SRCS) -ldeflate -lz

$(OUT)/fuzz/unwind-seeds: tests/fuzz/unwind-seeds.c $(FUZZ_LIB_SRCS) $(wildcard formats/recording*.h) util.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(FUZZ_LIB_SRCS) -lzstd -ldeflate -lz

# The parsers' targets (tests/fuzz/fuzz-NAME.c, seeds in tests/fuzz/NAME-corpus/, crash-* seeds are inputs
# that once failed): the perf-map and kallsyms parsers, the archive reader, ELF/debug-file loading with the
# symbolizer on top, and the profile cache's reader. `make fuzz-NAME-build` builds one; `make fuzz` fuzzes each for FUZZ_SECONDS.
FUZZ_PARSERS := jit-maps kallsyms archive elf profile-cache
FUZZ_jit-maps_SRCS := util.c convert/jit_maps.c
FUZZ_kallsyms_SRCS := util.c convert/kernel_symbols.c
FUZZ_archive_SRCS := util.c cache_dir.c formats/recording_reader.c formats/recording_writer.c convert/archive.c \
	convert/debug_file.c convert/debuginfod_client.c convert/input_file.c convert/zstd_sections.c convert/debug_copies.c
FUZZ_elf_SRCS := util.c cache_dir.c convert/symbolizer.c convert/module_file.c convert/debug_file.c \
	convert/debuginfod_client.c convert/archive.c formats/recording_reader.c formats/recording_writer.c \
	convert/input_file.c convert/zstd_sections.c convert/debug_copies.c convert/cu_index.c convert/demangle.c convert/profile.c \
	convert/kernel_symbols.c convert/elf_symbols.c convert/scope_index.c convert/symbol_cache.c \
	convert/die_attributes.c convert/call_site.c
FUZZ_profile-cache_SRCS := $(FUZZ_elf_SRCS) convert/profile_cache.c
FUZZ_LIBS := -ldw -lelf -lzstd -ldeflate -lz -liberty

$(OUT)/fuzz/fuzz-%: tests/fuzz/fuzz-%.c tests/fuzz/fuzz-input.h $$(FUZZ_$$*_SRCS) $(wildcard convert/*.h formats/*.h) \
		util.h cache_dir.h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_$*_SRCS) $(FUZZ_LIBS)

# convert as a whole on a recording (tests/fuzz/fuzz-convert.c): every source but the recorder's and the command's
# main, seeded by fixtures/*.rec, whose binaries it finds under fixtures/ as the damage campaign does.
FUZZ_CONVERT_SRCS := util.c cache_dir.c file_cut_guard.c interrupt_cleanup.c $(wildcard convert/*.c formats/*.c)
$(OUT)/fuzz/fuzz-convert: tests/fuzz/fuzz-convert.c tests/fuzz/fuzz-input.h $(FUZZ_CONVERT_SRCS) $(PROTO_C) \
		$(wildcard convert/*.h formats/*.h) util.h cache_dir.h commands.h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -I$(OUT) -DFUZZ_FIXTURES_DIR='"$(CURDIR)/fixtures"' -o $@ $< $(FUZZ_CONVERT_SRCS) \
		$(PROTO_C) $(FUZZ_LIBS) -lprotobuf-c

# symbolize's reading of addresses (tests/fuzz/fuzz-symbolize.c), which includes convert/symbolize.c for its
# static functions: every other source of convert.
FUZZ_SYMBOLIZE_SRCS := $(filter-out convert/symbolize.c,$(FUZZ_CONVERT_SRCS))
$(OUT)/fuzz/fuzz-symbolize: tests/fuzz/fuzz-symbolize.c tests/fuzz/fuzz-input.h convert/symbolize.c $(FUZZ_SYMBOLIZE_SRCS) \
		$(PROTO_C) $(wildcard convert/*.h formats/*.h) util.h cache_dir.h commands.h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -I$(OUT) -DFUZZ_FIXTURES_DIR='"$(CURDIR)/fixtures"' -o $@ $< $(FUZZ_SYMBOLIZE_SRCS) \
		$(PROTO_C) $(FUZZ_LIBS) -lprotobuf-c

fuzz-symbolize-build: $(OUT)/fuzz/fuzz-symbolize
fuzz-symbolize: fuzz-symbolize-build
	$(Q)mkdir -p $(OUT)/fuzz/symbolize-corpus
	$(Q)$(OUT)/fuzz/fuzz-symbolize -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
		-artifact_prefix=$(OUT)/fuzz/symbolize- -print_final_stats=1 $(OUT)/fuzz/symbolize-corpus \
		tests/fuzz/symbolize-corpus

fuzz-convert-build: $(OUT)/fuzz/fuzz-convert
fuzz-convert: fuzz-convert-build
	$(Q)mkdir -p $(OUT)/fuzz/convert-corpus
	$(Q)cp -n fixtures/*.rec $(OUT)/fuzz/convert-corpus/
	$(Q)$(OUT)/fuzz/fuzz-convert -max_total_time=$(FUZZ_SECONDS) -close_fd_mask=3 -max_len=65536 \
		-dict=tests/fuzz/fuzz-recording.dict -artifact_prefix=$(OUT)/fuzz/convert- -print_final_stats=1 \
		$(OUT)/fuzz/convert-corpus

# The damage campaign (tests/fuzz/damage-campaign.sh): damage.c makes the variants of fixtures/*.rec. `make
# fuzz` runs the full campaign on ./stackrec and the ASan+UBSan build; tests/t0004-damage.sh a short one.
$(OUT)/fuzz/damage: tests/fuzz/damage.c $(FUZZ_LIB_SRCS) $(wildcard formats/recording*.h) util.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(FUZZ_LIB_SRCS) -lzstd -ldeflate -lz

# Variants a recording (12 recordings: 6 fixtures, as checked in and numbered): on the plain build, and fewer on
# the ASan+UBSan build, which runs several times slower.
DAMAGE_VARIANTS ?= 400
DAMAGE_VARIANTS_SANITIZE ?= 250

.PHONY: fuzz fuzz-build fuzz-convert fuzz-convert-build fuzz-symbolize fuzz-symbolize-build fuzz-unwind fuzz-unwind-build fuzz-unwind-seeds fuzz-profile-cache-seeds fuzz-symbol-cache-seeds fuzz-damage-build fuzz-damage \
	$(patsubst %,fuzz-%-build,$(FUZZ_PARSERS)) fuzz-parsers fuzz-symbol-cache fuzz-symbol-cache-build
fuzz-build: $(OUT)/fuzz/fuzz-recording
fuzz-unwind-build: $(OUT)/fuzz/fuzz-unwind
fuzz-damage-build: $(OUT)/fuzz/damage
fuzz-symbol-cache-build: $(OUT)/fuzz/fuzz-symbol-cache
$(patsubst %,fuzz-%-build,$(FUZZ_PARSERS)): fuzz-%-build: $(OUT)/fuzz/fuzz-%

fuzz: fuzz-build fuzz-parsers fuzz-unwind fuzz-symbol-cache fuzz-convert fuzz-symbolize fuzz-damage
	$(Q)mkdir -p $(OUT)/fuzz/corpus
	$(Q)$(OUT)/fuzz/fuzz-recording -max_total_time=$(FUZZ_SECONDS) -close_fd_mask=2 -max_len=16384 \
		-dict=tests/fuzz/fuzz-recording.dict -artifact_prefix=$(OUT)/fuzz/ -print_final_stats=1 \
		$(OUT)/fuzz/corpus tests/fuzz/corpus

fuzz-parsers: $(patsubst %,$(OUT)/fuzz/fuzz-%,$(FUZZ_PARSERS))
	$(Q)for t in $(FUZZ_PARSERS); do \
		mkdir -p $(OUT)/fuzz/$$t-corpus && \
		echo "  FUZZ     $$t for $(FUZZ_SECONDS) s" && \
		$(OUT)/fuzz/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -close_fd_mask=2 -max_len=65536 \
			-artifact_prefix=$(OUT)/fuzz/$$t- -print_final_stats=1 $(OUT)/fuzz/$$t-corpus \
			tests/fuzz/$$t-corpus || exit 1; \
	done

# Both builds: the plain one, and the ASan+UBSan one built here if it is not there.
fuzz-damage: $(OUT)/fuzz/damage $(STACKREC)
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 build-sanitize/stackrec
	$(Q)tests/fuzz/damage-campaign.sh -n $(DAMAGE_VARIANTS) -s 7 $(OUT)/fuzz/damage ./$(STACKREC)
	$(Q)tests/fuzz/damage-campaign.sh -n $(DAMAGE_VARIANTS_SANITIZE) -s 8 $(OUT)/fuzz/damage build-sanitize/stackrec

fuzz-unwind: fuzz-unwind-build
	$(Q)mkdir -p $(OUT)/fuzz/unwind-corpus
	$(Q)$(OUT)/fuzz/fuzz-unwind -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -dict=tests/fuzz/fuzz-unwind.dict \
		-artifact_prefix=$(OUT)/fuzz/unwind- -print_final_stats=1 $(OUT)/fuzz/unwind-corpus tests/fuzz/unwind-corpus

fuzz-symbol-cache: fuzz-symbol-cache-build
	$(Q)mkdir -p $(OUT)/fuzz/symbol-cache-corpus
	$(Q)$(OUT)/fuzz/fuzz-symbol-cache -max_total_time=$(FUZZ_SECONDS) -max_len=16384 \
		-artifact_prefix=$(OUT)/fuzz/symbol-cache- -print_final_stats=1 $(OUT)/fuzz/symbol-cache-corpus \
		tests/fuzz/symbol-cache-corpus

# The symbol cache's seeds: the entries symbolize and convert write for the fixtures (tests/fuzz/symbol-cache-seeds.sh).
fuzz-symbol-cache-seeds: $(STACKREC)
	$(Q)mkdir -p tests/fuzz/symbol-cache-corpus
	$(Q)tests/fuzz/symbol-cache-seeds.sh ./$(STACKREC) tests/fuzz/symbol-cache-corpus

# The profile cache's seeds: the entries convert writes for each fixture, with and without a timeline.
fuzz-profile-cache-seeds: $(STACKREC) $(OUT)/tests/test-convert
	$(Q)mkdir -p tests/fuzz/profile-cache-corpus
	$(Q)for rec in fixtures/*.rec; do for f in folded speedscope; do \
		tmp=$$(mktemp -d) && \
		STACKREC_CACHE_DIR=$$tmp ./$(STACKREC) convert $$rec --symfs fixtures/sysroot --debug-dir fixtures/debug \
			-f $$f -o /dev/null && \
		cp $$tmp/profiles/* tests/fuzz/profile-cache-corpus/$$(basename $$rec .rec)-$$f && rm -rf $$tmp || exit 1; \
	done; done
	$(Q)# kernel addresses kallsyms names, in a module, and does not name (no fixture has one)
	$(Q)tmp=$$(mktemp -d) && \
		$(OUT)/tests/test-convert write $$tmp/kernel.rec <tests/fuzz/profile-cache-kernel/script >/dev/null && \
		STACKREC_CACHE_DIR=$$tmp ./$(STACKREC) convert $$tmp/kernel.rec -o /dev/null && \
		cp $$tmp/profiles/* tests/fuzz/profile-cache-corpus/kernel-folded && rm -rf $$tmp

fuzz-unwind-seeds: $(OUT)/fuzz/unwind-seeds
	$(Q)mkdir -p tests/fuzz/unwind-corpus
	$(Q)$(OUT)/fuzz/unwind-seeds fixtures/unwind.rec 4 tests/fuzz/unwind-corpus/unwind
	$(Q)$(OUT)/fuzz/unwind-seeds fixtures/deep.rec 2 tests/fuzz/unwind-corpus/deep
	$(Q)tests/fuzz/unwind-signal-seed.py tests/fuzz/unwind-corpus/unwind-1.bin tests/fuzz/unwind-corpus/signal-1.bin
	$(Q)tests/fuzz/unwind-edge-seeds.py tests/fuzz/unwind-corpus/unwind-1.bin tests/fuzz/unwind-corpus/edge

check: deps $(STACKREC) unit-tests
	$(Q)STACKREC=$(CURDIR)/$(STACKREC) UNIT_DIR=$(CURDIR)/$(OUT)/tests SANITIZE=$(SANITIZE) tests/run-tests.sh

demo: deps $(STACKREC)
	$(Q)fixtures/demo.sh ./$(STACKREC)

fixtures: deps $(STACKREC)
	$(Q)$(MAKE) -C fixtures STACKREC=$(CURDIR)/$(STACKREC) regenerate

bench: deps $(if $(BENCH_STACKREC),,$(STACKREC))
	$(Q)STACKREC=$(if $(BENCH_STACKREC),$(abspath $(BENCH_STACKREC)),$(CURDIR)/$(STACKREC)) BENCH_QUICK=$(BENCH_QUICK) \
		bench/run.sh

stress: deps $(if $(BENCH_STACKREC),,$(STACKREC))
	$(Q)STACKREC=$(if $(BENCH_STACKREC),$(abspath $(BENCH_STACKREC)),$(CURDIR)/$(STACKREC)) bench/stress.sh

clean:
	rm -rf build build-sanitize stackrec

-include $(OBJS:.o=.d)
