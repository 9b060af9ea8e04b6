/*
 * unwind.h — the user part of a sample's stack, found offline: convert's stage between reading a sample
 * and symbolizing it.
 *
 * With --call-graph dwarf a sample carries the user registers and the live top of the user stack
 * (formats/recording.h, struct srec_user_regs). The unwinder walks it with each module's CFI, found by
 * build ID as the symbolizer finds files (debug_file.h): the CFA and the caller's registers from the rule at
 * the pc (cfi_rules.h), reading saved values from the copied bytes. Where no CFI covers a pc (JIT code,
 * hand-written assembly, a module whose file is missing) it takes one frame-pointer step and goes on with CFI
 * from the caller. Every frame says how it was found.
 *
 * With --call-graph fp the stack was walked while recording; the registers and top words it also carries
 * repair the walk's one blind spot: a leaf function with no frame of its own at the sampled pc (gcc leaves
 * leaf functions frameless even with -fno-omit-frame-pointer; every function is frameless at its first
 * instruction), whose caller the walk skips.
 */
#ifndef STACKREC_CONVERT_UNWIND_H
#define STACKREC_CONVERT_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "../formats/recording.h"
#include "debug_file.h"
#include "module_file.h"
#include "process_maps.h"
#include "profile.h"

enum unwind_end {
	UNWIND_COMPLETE,  /* the outermost frame: CFI says the return address is undefined, or it is 0 */
	UNWIND_TRUNCATED, /* the next frame lies past a stack copy that was cut (SIZE too small), on a stack not
			     copied (a signal handler's alternate stack interrupted another), or too deep */
	UNWIND_LOST	  /* no way to the next frame: no CFI and no usable frame pointer, or nonsense values */
};

struct unwind_frame {
	uint64_t pc;
	uint64_t file_offset;	/* of pc in module */
	uint32_t module;	/* profile module, or PROFILE_NO_MODULE when no mapping covers pc */
	bool is_return_address; /* look it up at pc - 1: a call's return address, not an interrupted pc */
	enum profile_unwind method;
	/*
	 * The frame's canonical frame address (the stack pointer before the call that made it: on x86-64 its
	 * stack pointer at entry plus 8), as the CFI rule at its pc computes it, or its frame pointer + 16 where a
	 * frame-pointer step found its caller; 0 when unknown: frames of a frame-pointer walk while recording
	 * (fp mode: IPs only), and an interrupted frame without CFI, whose frame pointer may still be its
	 * caller's. Probe context is matched to calls by it (enrich.h).
	 */
	uint64_t cfa;
	/*
	 * unwind_user_stack's: what the caller made of this frame when it met it before in the same process and
	 * period of its mappings (unwind_keep_location), or UNWIND_NO_LOCATION; and which entry of its memo of
	 * frames holds this one's place, and which filling of it.
	 */
	uint32_t location;
	uint32_t placed;
	uint64_t placed_stamp;
};

/* Why a stack ends in [incomplete] at a frame whose module was found as its separate debug file only: such a
 * file keeps no .eh_frame (the CFI of nearly every binary), so the walk had none there. */
#define UNWIND_DEBUG_FILE_ALONE "only a debug file of the module was found, and it has no CFI"
/* Why a stack ends in [truncated] (unwind_user_stack's why): the copy ended before the stack did. */
#define UNWIND_COPY_TOO_SMALL "stack copy too small"
/* ... the stack a signal handler on an alternate signal stack interrupted: another mapping, not in the copy. */
#define UNWIND_SIGNAL_STACK "the interrupted stack, off the signal stack, was not copied"
/* why a stack with more frames than a sample keeps (SREC_MAX_STACK_DEPTH) ends: the walk, or the fp walk's IPs */
#define UNWIND_TOO_DEEP "too deep"
/* ... an off-CPU sample's copy, at the most one keeps (SREC_OFF_CPU_STACK_MAX): convert's, not the unwinder's. */
#define UNWIND_OFF_CPU_COPY_AT_MOST "off-CPU stack copy at its most"

/* What a sample kept of its user context. */
struct unwind_input {
	uint32_t pid;
	uint64_t time_ns;
	const struct srec_user_regs *header;
	const uint64_t *regs; /* header->reg_count values, in ascending DWARF register number */
	const uint8_t *stack; /* header->stack_size bytes from the stack pointer up */
};

struct unwinder;

struct unwinder *unwinder_new(struct profile *profile, const struct process_maps *maps,
			      const struct debug_file_search *search);
/* The interrupted pc among in's registers (DWARF register 16 on x86-64): false when it was not kept. */
bool unwind_input_pc(const struct unwind_input *in, uint64_t *pc);
/*
 * Unwinds the user stack of a dwarf-mode sample into frames (leaf first, at most max). Returns the count;
 * *end says how the walk ended. *why, when not NULL, gets a static string for an end that is not complete.
 */
uint32_t unwind_user_stack(struct unwinder *u, const struct unwind_input *in, struct unwind_frame *frames,
			   uint32_t max, enum unwind_end *end, const char **why);
/*
 * Keeps what the caller made of frame f of the last unwind_user_stack (convert: its profile location) with the
 * unwinder's memo of the frame's place, unless another frame has since taken the memo entry: a frame met again
 * in the same process and period of its mappings (placed.h) then comes with it (unwind_frame.location), and
 * costs the caller no look-up of its own.
 */
#define UNWIND_NO_LOCATION UINT32_MAX
void unwind_keep_location(struct unwinder *u, const struct unwind_frame *f, uint32_t location);

/*
 * Frame-pointer mode: when the leaf function at leaf_pc has no frame of its own there (its CFA is not
 * computed from the frame pointer), its caller's return address, read from the copied top of stack.
 */
bool unwind_leaf_caller(struct unwinder *u, const struct unwind_input *in, uint64_t leaf_pc, uint64_t *return_address);
/* The same for a leaf frame that unwind_resolve already placed (convert has, for every sample). */
bool unwind_leaf_caller_of(struct unwinder *u, const struct unwind_input *in, const struct unwind_frame *leaf,
			   uint64_t *return_address);

/*
 * How the leaf fix found (or did not find) the caller of one leaf, for a caller that meets the leaf again and
 * keeps this with it (convert's sample memo): no caller whatever the sample (the leaf has a frame of its own, or
 * no CFI), or the word its rule reads, by where the registers it needs are among the sample's values, which
 * holds for samples that kept the same registers. The rule's look-up by the leaf's place and the registers'
 * were most of a warm fp conversion's leaf fix. Zeroed: UNWIND_LEAF_ASK.
 */
enum unwind_leaf_kind {
	UNWIND_LEAF_ASK,  /* nothing known: unwind_leaf_caller_by asks unwind_leaf_caller_of */
	UNWIND_LEAF_NONE, /* no caller to put back, for any sample */
	UNWIND_LEAF_WORD  /* the word at the base register's value plus offset, for samples of reg_mask */
};

struct unwind_leaf_recipe {
	uint64_t reg_mask; /* WORD: the registers of the samples the slots below are for */
	uint64_t offset; /* WORD: added to the base register's value (modulo 2^64) */
	uint16_t reg_count;
	uint8_t kind; /* enum unwind_leaf_kind */
	uint8_t sp_slot, ra_slot, base_slot; /* WORD: those registers' indexes in unwind_input.regs */
};

/* unwind_leaf_caller_of, and *recipe (not NULL) for unwind_leaf_caller_by to answer the same for this leaf. */
bool unwind_leaf_caller_recipe(struct unwinder *u, const struct unwind_input *in, const struct unwind_frame *leaf,
			       uint64_t *return_address, struct unwind_leaf_recipe *recipe);
/* unwind_leaf_caller_of's answer for leaf, by the recipe unwind_leaf_caller_recipe gave for it. */
bool unwind_leaf_caller_by(struct unwinder *u, const struct unwind_leaf_recipe *recipe, const struct unwind_input *in,
			   const struct unwind_frame *leaf, uint64_t *return_address);
/* Resolves pc of the sample's process to its module and file offset (PROFILE_NO_MODULE when unmapped). */
void unwind_resolve(struct unwinder *u, uint32_t pid, uint64_t time_ns, struct unwind_frame *frame);
/* The open file of profile module `module` (opened on first use), or NULL when it cannot be found. */
const struct module_file *unwind_module_file(struct unwinder *u, uint32_t module);
/*
 * Whether CFI steps may take a rule's plan (cfi_rules.h), the default, or always the general way: the answers
 * are the same, which tests/fuzz/fuzz-unwind.c checks by walking each input both ways.
 */
void unwinder_use_plans(struct unwinder *u, bool use);
/*
 * Calls fn with every module the unwinder opened (for its CFI, its entry point or a frame's address), found or
 * not (mf->reason): what its frames depend on besides the recording, for the profile cache (profile_cache.h).
 */
void unwinder_for_each_module(const struct unwinder *u,
			      void (*fn)(void *ctx, uint32_t module, const struct module_file *mf), void *ctx);
void unwinder_free(struct unwinder *u);

#endif
