/*
 * cfi_rules.h — how to find a caller's registers at one code address, from a module's call frame
 * information (.eh_frame, else .debug_frame), compiled once per distinct address and kept.
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

struct cfi_rule {
	bool cfa_is_expression; /* else CFA = register cfa_reg + cfa_offset */
	bool signal_frame;	/* the caller was interrupted, not called: its pc is exact */
	uint8_t cfa_reg;
	uint8_t ra_reg;
	uint16_t cfa_nops;
	int64_t cfa_offset;
	Dwarf_Op *cfa_ops;
	struct cfi_reg regs[CFI_REGS];
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
	uint64_t lookups, misses; /* for -v */
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
/* How many distinct rules are kept now (for -v). */
size_t cfi_rules_distinct(const struct cfi_rules *rules);
void cfi_rules_release(struct cfi_rules *rules);

#endif
