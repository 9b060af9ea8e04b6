/*
 * cfi_rules.h — how to find a caller's registers at one code address, from a module's call frame
 * information (.eh_frame, else .debug_frame), compiled once per distinct address and kept (from .eh_frame, once
 * per span of addresses that libdw answers alike: see cfi_rules.c).
 *
 * libdw interprets the CFI (dwarf_cfi_addrframe, dwarf_frame_cfa, dwarf_frame_register); this file turns
 * its answer into a small rule that the unwinder (unwind.c) applies to every sample that stopped at that
 * address, so the CFI of a hot address is interpreted once, not once per sample as perf does.
 *
 * Registers are numbered as DWARF numbers them for the machine; today x86-64: 0-15 the general registers
 * (3 rbx, 6 rbp, 7 rsp, 12-15 r12-r15), 16 the return address (rip).
 */
#ifndef STACKREC_CONVERT_CFI_RULES_H
#define STACKREC_CONVERT_CFI_RULES_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

#define CFI_REGS 17	    /* x86-64: DWARF registers 0-16 */
#define CFI_REG_SP 7	    /* x86-64 rsp */
#define CFI_REG_FP 6	    /* x86-64 rbp */
#define CFI_REG_RA 16	    /* x86-64 return address column (rip) */

enum cfi_reg_kind {
	CFI_UNDEFINED,	 /* cannot be recovered: for the return address, the outermost frame */
	CFI_SAME,	 /* the caller's value is this frame's */
	CFI_OFFSET,	 /* saved at CFA + offset */
	CFI_VAL_OFFSET,	 /* is CFA + offset */
	CFI_REGISTER,	 /* in register `reg` of this frame */
	CFI_EXPRESSION,	 /* saved at the address that ops compute */
	CFI_VAL_EXPRESSION /* is the value that ops compute */
};

struct cfi_reg {
	uint8_t kind; /* enum cfi_reg_kind */
	uint8_t reg;
	uint16_t nops;
	int64_t offset;
	Dwarf_Op *ops; /* owned by the rule; libdw's own may not outlive the frame it came from */
};

/*
 * A rule of the common form, as one step applies it: the CFA a register plus an offset, and every register that
 * is neither left as it is nor undefined saved at the CFA plus an offset (gcc's and clang's code has little
 * else). Where the words of all those offsets lie inside the copied stack, checked once for them all, a step is
 * a block copy of the callee's registers and `count` loads: no rule kinds looked at, no bounds checked per
 * register (they were most of a warm dwarf conversion). Anywhere else (a word past the copy or below it, the
 * CFA's register unknown) the step takes the general way, which gives the same answer there.
 */
#define CFI_PLAN_MAX_SPAN 4096 /* bytes from the lowest saved word to the highest: larger rules are not planned */

struct cfi_step_plan {
	bool usable;	   /* the rule has the common form and saves the return address */
	uint8_t count;	   /* registers saved at CFA + offset */
	uint32_t same;	   /* bit r: the caller's register r is the callee's (where the callee's is known) */
	uint32_t saved;	   /* bit r: saved at CFA + offset */
	int64_t lowest;	   /* the lowest of those offsets */
	uint32_t span;	   /* highest offset - lowest + 8: the bytes from CFA + lowest that the loads read */
	/* The saved registers, in register order, and where each was saved (offset - lowest); an odd count's last
	 * one again after it, so that a step loads two at a time (loading one twice is harmless): fewer loop
	 * turns, of a loop most of a planned step's instructions were. */
	uint8_t reg[CFI_REGS + 1];
	uint16_t delta[CFI_REGS + 1];
};

struct cfi_rule {
	bool cfa_is_expression; /* else CFA = register cfa_reg + cfa_offset */
	bool signal_frame;	/* the caller was interrupted, not called: its pc is exact */
	uint8_t cfa_reg;
	uint8_t ra_reg;
	uint16_t cfa_nops;
	int64_t cfa_offset;
	Dwarf_Op *cfa_ops;
	struct cfi_reg regs[CFI_REGS];
	/* Bit r for DWARF register r: the registers whose rule is CFI_SAME, and those whose rule is neither that
	 * nor undefined (a step visits only these, not all CFI_REGS: most of a rule's registers are undefined). */
	uint32_t same_regs, other_regs;
	struct cfi_step_plan plan; /* derived from the fields above, as they are */
};

/* Where a module's CFI is; the unwinder fills it when it opens the module. */
struct cfi_source {
	Dwarf_CFI *eh;	      /* .eh_frame, or NULL */
	Dwarf_Addr eh_bias;   /* CFI address = module address - bias */
	Dwarf_CFI *debug;     /* .debug_frame of the module or its debug file, or NULL */
	Dwarf_Addr debug_bias;
	bool debug_loaded;    /* debug was looked for (it needs the separate debug file: only on demand) */
	void *module;	      /* Dwfl_Module, to look for .debug_frame on demand */
};

struct cfi_rules {
	struct cfi_rule_slot *slots; /* open addressing by (module, address) */
	size_t cap, count;
	struct cfi_rule_set *set;    /* the distinct rules the slots share */
	void *spans;		     /* tsearch tree of .eh_frame spans answered alike, by (module, addresses) */
	uint64_t lookups, misses, compiled; /* for -v */
	uint64_t generation; /* counts the times everything was released (past CFI_RULES_MAX_SLOTS): rules found
				before are gone */
};

void cfi_rules_init(struct cfi_rules *rules);
/*
 * The rule at module address addr of module `module` (an index the caller chooses, with src its CFI): from
 * .eh_frame, else .debug_frame. NULL when neither covers addr or the rule makes no sense. Remembered, misses
 * too: the pointer stays valid until cfi_rules_release, or until rules->generation changes.
 */
const struct cfi_rule *cfi_rules_find(struct cfi_rules *rules, uint32_t module, struct cfi_source *src,
				      Dwarf_Addr addr);
/* Whether two rules say the same, field by field (the rules of two struct cfi_rules too). */
bool cfi_rule_same(const struct cfi_rule *a, const struct cfi_rule *b);
/* How many distinct rules are kept now (for -v). */
size_t cfi_rules_distinct(const struct cfi_rules *rules);
void cfi_rules_release(struct cfi_rules *rules);

#endif
