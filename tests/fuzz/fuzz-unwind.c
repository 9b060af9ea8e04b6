/*
 * fuzz-unwind.c — libFuzzer target for the offline unwinder (convert/unwind.c, convert/cfi_rules.c): whatever
 * registers and stack bytes a recording carries, unwinding them with the CFI of real binaries must neither
 * crash, nor hang, nor read outside the copied stack, and must end every walk in a valid way.
 *
 * Built and run by `make fuzz-unwind` (clang -fsanitize=fuzzer,address,undefined); tests/t0003-fuzz-unwind.sh
 * replays the seed corpus tests/fuzz/unwind-corpus/ (written by `make fuzz-unwind-seeds` from the dwarf-mode
 * samples of fixtures/unwind.rec and fixtures/deep.rec) and fuzzes briefly.
 *
 * Set up once: one process whose mappings are those of the recordings fixtures/unwind.rec and deep.rec, at
 * the same addresses: the fixture binary fixtures/bin/unwind (found by its build ID, through a search whose
 * --debug-dir is fixtures/debug, as convert finds files) and, when this machine has them, libc and the dynamic
 * loader, whose CFI has what compilers rarely emit (a signal frame, register expressions). Any other pid has
 * no mappings at all.
 *
 * An input is what a sample carries after its IPs (formats/recording.h):
 *
 *   struct srec_user_regs  uint64_t regs[]  uint8_t stack[]
 *
 * made valid enough to get past the checks and into the walk:
 *   - machine is 62 (x86-64); reg_mask keeps its bits below 17 and always has rsp and rip, reg_count is its
 *     number of bits, and missing register bytes are zero;
 *   - an IP that no mapping covers is moved into the text of the fixture, libc or ld.so (its top byte picks
 *     which, the rest modulo the size says where), so that rules are looked up at many real pcs;
 *   - the stack is the rest of the input (at most SREC_USER_STACK_MAX bytes), stack_size its length.
 * Bits of flags that the format leaves unused (FUZZ_* below) ask for less help, so that the other paths are
 * reached too: registers of another machine, a mask without rsp or rip, an unmapped IP, a process without
 * mappings, a smaller frame limit.
 *
 * Each walk must return at most the frames asked for, a known end with a reason exactly when it is not
 * complete, the sampled pc as its first frame, and frames that resolve to known modules; and the same walk
 * again with every CFI step taken the general way, not by a rule's plan (unwinder_use_plans).
 */
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convert/debug_file.h"
#include "convert/process_maps.h"
#include "convert/profile.h"
#include "convert/unwind.h"
#include "formats/recording.h"

#define FUZZ_RAW_MACHINE (1u << 31)  /* keep the input's machine */
#define FUZZ_RAW_MASK (1u << 30)     /* keep the input's reg_mask, all 64 bits, even without rsp or rip */
#define FUZZ_RAW_IP (1u << 29)	     /* keep an IP that no mapping covers */
#define FUZZ_NO_MAPPINGS (1u << 28)  /* the sample is of the process without mappings: frame pointers only */
#define FUZZ_MAX_SHIFT 16	     /* bits 16-22: nonzero is the frame limit (1-127), to end walks as too deep */
#define FUZZ_MAX_MASK 0x7fu
#define FUZZ_FLAGS (FUZZ_RAW_MACHINE | FUZZ_RAW_MASK | FUZZ_RAW_IP | FUZZ_NO_MAPPINGS | \
		    (FUZZ_MAX_MASK << FUZZ_MAX_SHIFT))

#define PID 29918	     /* of the process in fixtures/unwind.rec */
#define PID_UNMAPPED 29919
#define TIME_NS 1220426789302ull /* its recording's start */

#ifndef FUZZ_FIXTURES_DIR
#define FUZZ_FIXTURES_DIR "fixtures"
#endif

#define REG_SP 7
#define REG_IP 16

/* A broken invariant is a bug in the unwinder, not in the input: crash so that libFuzzer keeps the input. */
#define ASSERT(cond)                                                                          \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			fprintf(stderr, "fuzz-unwind: invariant broken: %s (%s:%d)\n", #cond, \
				__FILE__, __LINE__);                                          \
			abort();                                                              \
		}                                                                             \
	} while (0)

static struct profile profile;
static struct process_maps maps;
static struct debug_file_search search;
static struct unwinder *unwinder;
static const char *debug_dirs[1];
static struct {
	uint64_t start, end;
} texts[3]; /* the executable mappings of the fixture, libc and ld.so (at unwind.rec's addresses) */
static size_t text_count;
static bool verbose;		      /* FUZZ_UNWIND_VERBOSE=1: print every walk */

/*
 * Maps the executable PT_LOAD of the ELF file at path into process PID at load_base (the address of its
 * first byte), with its build ID, as a MAPPING block of the recording would. Returns false when the file is
 * not there or has no executable segment.
 */
static bool map_file(const char *path, uint64_t load_base, bool text)
{
	struct srec_mapping m = { .time_ns = TIME_NS, .pid = PID };
	const void *build_id;
	bool found = false;
	size_t phnum;
	ssize_t n;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum && !found; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
				continue;
			m.start = load_base + (ph.p_vaddr & ~0xfffull);
			m.end = (load_base + ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffull;
			m.file_offset = ph.p_offset & ~0xfffull;
			found = true;
		}
		n = dwelf_elf_gnu_build_id(elf, &build_id);
		if (n > 0 && n <= SREC_BUILD_ID_MAX) {
			m.build_id_size = (uint8_t)n;
			memcpy(m.build_id, build_id, (size_t)n);
		}
	}
	elf_end(elf);
	close(fd);
	if (!found)
		return false;
	m.prot = 5; /* PROT_READ | PROT_EXEC */
	m.path_size = (uint32_t)strlen(path) + 1;
	process_maps_add_mapping(&maps, &profile, &m, path);
	if (text && text_count < sizeof(texts) / sizeof(texts[0])) {
		texts[text_count].start = m.start;
		texts[text_count++].end = m.end;
	}
	return true;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("FUZZ_UNWIND_FIXTURES");
	char bin[PATH_MAX], debug[PATH_MAX];

	(void)argc, (void)argv;
	if (!dir)
		dir = FUZZ_FIXTURES_DIR;
	verbose = getenv("FUZZ_UNWIND_VERBOSE") && atoi(getenv("FUZZ_UNWIND_VERBOSE"));
	unsetenv("DEBUGINFOD_URLS"); /* look nothing up on the network */
	elf_version(EV_CURRENT);
	snprintf(bin, sizeof(bin), "%s/bin/unwind", dir);
	snprintf(debug, sizeof(debug), "%s/debug", dir);

	profile_init(&profile);
	process_maps_init(&maps);
	/*
	 * The load bases of fixtures/unwind.rec and of fixtures/deep.rec (`stackrec info --mappings`), both in
	 * one process (they do not overlap), so that the stacks of the seeds walk through.
	 */
	if (!map_file(bin, 0x5575d3acd000ull, true) || !map_file(bin, 0x560fe9346000ull, false)) {
		fprintf(stderr, "fuzz-unwind: cannot map '%s' (set FUZZ_UNWIND_FIXTURES to the fixtures directory)\n",
			bin);
		exit(1);
	}
	map_file("/usr/lib/x86_64-linux-gnu/libc.so.6", 0x7fbd7162d000ull, true);
	map_file("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", 0x7fbd71824000ull, true);
	map_file("/usr/lib/x86_64-linux-gnu/libc.so.6", 0x7fb6912cb000ull, false);
	map_file("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", 0x7fb6914c2000ull, false);
	process_maps_finish(&maps);

	debug_dirs[0] = strdup(debug);
	search.dirs = debug_dirs;
	search.dir_count = 1;
	unwinder = unwinder_new(&profile, &maps, &search);
	return 0;
}

/* Copies up to want bytes of the input into out and moves past them; what the input lacks stays as it was. */
static void take(const uint8_t **data, size_t *size, void *out, size_t want)
{
	size_t n = *size < want ? *size : want;

	memcpy(out, *data, n);
	*data += n;
	*size -= n;
}

static bool mapped(uint64_t ip)
{
	uint32_t module;
	uint64_t offset;

	return process_maps_resolve(&maps, PID, TIME_NS, ip, &module, &offset);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct srec_user_regs h = { 0 };
	struct unwind_input in = { .pid = PID, .time_ns = TIME_NS, .header = &h };
	struct unwind_frame *frames, *general;
	enum unwind_end end, end_general;
	const char *why = NULL, *why_general = NULL;
	uint64_t *regs, ra;
	uint8_t *stack;
	uint32_t max, n, n_general, fuzz;
	int ip_index = -1;

	take(&data, &size, &h, sizeof(h));
	fuzz = h.flags & FUZZ_FLAGS;
	h.flags &= ~FUZZ_FLAGS;
	if (!(fuzz & FUZZ_RAW_MACHINE))
		h.machine = 62;
	if (!(fuzz & FUZZ_RAW_MASK))
		h.reg_mask = (h.reg_mask & ((1ull << 17) - 1)) | 1ull << REG_SP | 1ull << REG_IP;
	h.reg_count = (uint16_t)__builtin_popcountll(h.reg_mask);
	if (fuzz & FUZZ_NO_MAPPINGS)
		in.pid = PID_UNMAPPED;

	/* Registers and stack in buffers of exactly their size, so that any read past them is reported. */
	regs = calloc(h.reg_count ? h.reg_count : 1, sizeof(*regs));
	if (!regs)
		abort();
	take(&data, &size, regs, h.reg_count * sizeof(*regs));
	for (int reg = 0, i = 0; reg < 64; reg++) {
		if (!(h.reg_mask & (1ull << reg)))
			continue;
		if (reg == REG_IP)
			ip_index = i;
		i++;
	}
	if (ip_index >= 0 && !(fuzz & FUZZ_RAW_IP) && !mapped(regs[ip_index])) {
		uint64_t ip = regs[ip_index];
		size_t t = (ip >> 56) % text_count; /* the top byte picks the module, the rest the offset */

		regs[ip_index] = texts[t].start + ip % (texts[t].end - texts[t].start);
	}

	h.stack_size = (uint32_t)(size < SREC_USER_STACK_MAX ? size : SREC_USER_STACK_MAX);
	stack = malloc(h.stack_size ? h.stack_size : 1);
	if (!stack)
		abort();
	take(&data, &size, stack, h.stack_size);
	in.regs = regs;
	in.stack = stack;

	max = (fuzz >> FUZZ_MAX_SHIFT) & FUZZ_MAX_MASK;
	if (max == 0 || max > SREC_MAX_STACK_DEPTH)
		max = SREC_MAX_STACK_DEPTH;
	frames = malloc(max * sizeof(*frames));
	if (!frames)
		abort();
	n = unwind_user_stack(unwinder, &in, frames, max, &end, &why);
	if (verbose) {
		fprintf(stderr, "fuzz-unwind: %u frames, %s%s%s:", n,
			end == UNWIND_COMPLETE ? "complete" : end == UNWIND_TRUNCATED ? "truncated" : "lost",
			why ? ", " : "", why ? why : "");
		for (uint32_t i = 0; i < n && i < max; i++)
			fprintf(stderr, " %#llx/%d", (unsigned long long)frames[i].pc, (int)frames[i].method);
		fputc('\n', stderr);
	}
	ASSERT(n <= max);
	ASSERT(end == UNWIND_COMPLETE || end == UNWIND_TRUNCATED || end == UNWIND_LOST);
	ASSERT((end == UNWIND_COMPLETE) == (why == NULL));
	if (h.machine == 62 && ip_index >= 0 && (h.reg_mask & (1ull << REG_SP))) {
		ASSERT(n >= 1);
		ASSERT(frames[0].pc == regs[ip_index] && !frames[0].is_return_address);
	}
	for (uint32_t i = 0; i < n; i++) {
		ASSERT(frames[i].module == PROFILE_NO_MODULE || frames[i].module < profile.module_count);
		ASSERT(frames[i].method == PROFILE_UNWIND_PC || frames[i].method == PROFILE_UNWIND_CFI ||
		       frames[i].method == PROFILE_UNWIND_FRAME_POINTER || frames[i].method == PROFILE_UNWIND_FP_LEAF_FIX);
		/* the word on top of the stack is taken only for an interrupted frame without CFI (call_site.h) */
		ASSERT(frames[i].method != PROFILE_UNWIND_FP_LEAF_FIX || (i > 0 && !frames[i - 1].is_return_address));
		ASSERT((frames[i].method == PROFILE_UNWIND_PC) == (i == 0));
		ASSERT(i == 0 || frames[i].pc != 0);
	}
	/* A CFI step by a rule's plan answers as the general way: the same walk, frame for frame. */
	general = malloc(max * sizeof(*general));
	if (!general)
		abort();
	unwinder_use_plans(unwinder, false);
	n_general = unwind_user_stack(unwinder, &in, general, max, &end_general, &why_general);
	unwinder_use_plans(unwinder, true);
	ASSERT(n_general == n && end_general == end && why_general == why);
	for (uint32_t i = 0; i < n; i++)
		ASSERT(general[i].pc == frames[i].pc && general[i].file_offset == frames[i].file_offset &&
		       general[i].module == frames[i].module &&
		       general[i].is_return_address == frames[i].is_return_address &&
		       general[i].method == frames[i].method && general[i].cfa == frames[i].cfa);
	free(general);

	/* Frame-pointer mode: the leaf caller, for the sampled pc and for one it cannot be. */
	if (ip_index >= 0) {
		ra = 0;
		if (unwind_leaf_caller(unwinder, &in, regs[ip_index], &ra))
			ASSERT(ra != 0);
		ASSERT(!unwind_leaf_caller(unwinder, &in, regs[ip_index] ^ 1, &ra));
	}
	/* And by the recipe the leaf fix gave for the leaf: the same answer, for this sample and its registers. */
	if (ip_index >= 0) {
		struct unwind_frame leaf = { .pc = regs[ip_index] };
		struct unwind_leaf_recipe recipe;
		uint64_t first = 0, again = 0;
		bool found;

		unwind_resolve(unwinder, in.pid, in.time_ns, &leaf);
		found = unwind_leaf_caller_recipe(unwinder, &in, &leaf, &first, &recipe);
		ASSERT(unwind_leaf_caller_by(unwinder, &recipe, &in, &leaf, &again) == found);
		ASSERT(!found || again == first);
		leaf.pc ^= 1;
		ASSERT(!unwind_leaf_caller_by(unwinder, &recipe, &in, &leaf, &again));
	}
	free(frames);
	free(stack);
	free(regs);
	return 0;
}
