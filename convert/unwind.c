/*
 * unwind.c — offline unwinding of copied user stacks (see unwind.h).
 *
 * Why our own walk over libdw's CFI rules rather than dwfl_attach_state + dwfl_getthread_frames, as perf's
 * util/unwind-libdw.c does: libdwfl wants the modules of one process reported at their run-time addresses
 * for each thread it unwinds, so perf reports every module again for every sample. Here each module is
 * opened once for the whole recording (at its link-time addresses), the rule at each distinct pc is
 * interpreted once (cfi_rules.c), and a sample's walk is a few table look-ups and reads of its own bytes.
 *
 * A walk never reads anything but the sample's copied stack: every value comes from the recording, which is
 * untrusted, so every read is bounded by the copy, every expression by a step count, and every frame must
 * move the stack pointer up.
 */
#include "unwind.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"
#include "call_site.h"
#include "cfi_rules.h"
#include "module_file.h"
#include "placed.h"

#define EXPRESSION_STACK 16
#define EXPRESSION_STEPS 64

struct unwind_module {
	bool opened;
	struct module_file file;
	struct cfi_source cfi;
	struct elf_symbols symbols; /* for call_site_check and at_function_entry: built when first asked */
	bool entries_read;	    /* init_addr and fini_addr were read (init_and_fini) */
	GElf_Addr init_addr, fini_addr; /* where .init and .fini start (ELF addresses); 0 for none */
};

/*
 * The fp leaf fix's answer for one leaf pc: the rule to find its caller with, or NULL where it has a frame of
 * its own (or is the entry point, or has no CFI). Asked once per sample; a recording has few distinct leaves.
 */
struct leaf_rule {
	bool used;
	uint32_t module;
	uint64_t file_offset;
	uint64_t generation; /* of the CFI rules, whose pointer rule is */
	const struct cfi_rule *rule;
};

#define LEAF_RULES 1024 /* remembered, direct-mapped by (module, file offset) */

/*
 * A dwarf walk's frame, remembered by its place (placed.h): its module, file offset and CFI rule, and what the
 * caller made of it (unwind_keep_location).
 */
struct placed_frame {
	struct placed_key key;
	bool missing;
	uint8_t made; /* enum call_site_made: a return address no call made (__restore_rt, __start_context) */
	uint32_t module;
	uint64_t file_offset;
	uint64_t generation; /* of the CFI rules, whose pointer rule is */
	const struct cfi_rule *rule;
	uint32_t index;	   /* of the entry in unwinder.placed */
	uint64_t stamp;	   /* which filling of the entry this is: a frame placed by an earlier one is not its */
	uint32_t location; /* the caller's (unwind_keep_location), or UNWIND_NO_LOCATION */
	/*
	 * The frame found above this one the last time, at caller_pc (0: none yet): its entry and filling. The
	 * same place again when the next walk through here finds the same pc above: this entry says the process,
	 * the period of its mappings and how that frame was found (by this frame's rule, or by its frame pointer),
	 * so the rest of that frame's key is this one's. Most frames have the caller they had before: no hash.
	 */
	uint64_t caller_pc;
	uint64_t caller_stamp;
	uint32_t caller;
};

#define PLACED_FRAMES 4096 /* remembered, direct-mapped */

/* call_site_check's answer for a return address and the interrupted pc of a function without CFI: a hot
 * loop of hand-written assembly asks the same every sample, and the PLT's relocations are read linearly. */
struct call_site_answer {
	bool used;
	uint32_t ra_module, pc_module;
	uint64_t ra_offset, pc_offset;
	enum call_site answer;
};

#define CALL_SITE_ANSWERS 256 /* remembered, direct-mapped */

/*
 * Where each register is among a sample's values, for the register mask and count of the last sample whose
 * registers were read (a recording keeps the same registers in every sample): counting the mask's lower bits
 * for each register the fp leaf fix read was a call into libgcc (popcount) three times a sample, and a dwarf
 * walk's load_input went through the mask bit by bit.
 */
struct reg_slots {
	uint64_t mask;
	uint16_t count;
	bool valid;
	uint8_t slot[CFI_REGS]; /* index into unwind_input.regs, or REG_ABSENT */
	uint32_t known;		/* the registers below CFI_REGS the sample has */
	uint8_t listed;		/* how many: their numbers in reg, their indexes in slot of reg */
	uint8_t reg[CFI_REGS];
};

#define REG_ABSENT UINT8_MAX

struct unwinder {
	struct profile *profile;
	const struct process_maps *maps;
	const struct debug_file_search *search;
	struct module_file_callbacks callbacks;
	struct unwind_module *modules; /* by profile module index, opened on first use */
	size_t module_cap;
	struct cfi_rules rules;
	struct leaf_rule leaves[LEAF_RULES];
	struct reg_slots slots; /* of the last sample whose registers were read */
	struct placed_frame placed[PLACED_FRAMES];
	uint64_t stamps; /* the placed entries filled so far: 64 bits, so that a stamp is never given twice (a link
			  * trusted on a reused 32-bit stamp would name another frame's place) */
	bool plans_off; /* unwinder_use_plans(false): every CFI step the general way */
	struct call_site_answer call_sites[CALL_SITE_ANSWERS];
};

/* A frame's registers: values and which of them are known. */
struct regs {
	uint64_t v[CFI_REGS];
	uint32_t known;
};

/* The copied stack, and why the last read failed. */
struct memory {
	const uint8_t *bytes;
	uint64_t base; /* the address of bytes[0]: the sample's stack pointer */
	uint32_t size;
	uint32_t holes;	    /* bit i: page i of the copy (0: base's page) was not read, its bytes are not the stack's */
	bool cut;	    /* the copy ended before the stack did */
	bool read_past_end; /* a read failed because it lay past the copy */
	bool read_hole;	    /* a read failed because it lay in such a page */
};

static bool known(const struct regs *r, unsigned int reg)
{
	return reg < CFI_REGS && (r->known & (1u << reg));
}

static void set(struct regs *r, unsigned int reg, uint64_t value)
{
	r->v[reg] = value;
	r->known |= 1u << reg;
}

/* The pages of in's stack copy that were not read (bit i: page i, 0 being the stack pointer's). */
static uint32_t stack_holes(const struct unwind_input *in)
{
	return (in->header->flags & SREC_USER_STACK_HOLES_MASK) >> SREC_USER_STACK_HOLES_SHIFT;
}

/* Whether the bytes [offset, offset + n) of the copy (inside it) lie in a page that was not read. */
static bool in_hole(const struct memory *m, uint64_t offset, uint64_t n)
{
	uint64_t first = ((m->base & 4095) + offset) / 4096, last = ((m->base & 4095) + offset + n - 1) / 4096;

	return (first < 32 && (m->holes >> first) & 1) || (last < 32 && (m->holes >> last) & 1);
}

static bool read_word(struct memory *m, uint64_t addr, uint64_t *value)
{
	uint64_t offset = addr - m->base;

	if (addr < m->base || offset > m->size || m->size - offset < sizeof(*value)) {
		if (addr >= m->base)
			m->read_past_end = true;
		return false;
	}
	if (m->holes && in_hole(m, offset, sizeof(*value))) {
		m->read_hole = true;
		return false;
	}
	memcpy(value, m->bytes + offset, sizeof(*value));
	return true;
}

/* Whether sp lies within two words of the end of the copy (in terms that cannot overflow: values are hostile). */
static bool at_top(const struct memory *m, uint64_t sp)
{
	uint64_t slack = 2 * sizeof(uint64_t);

	return sp >= m->base && sp - m->base >= (m->size > slack ? m->size - slack : 0);
}

/* Where a DW_OP_skip or DW_OP_bra at ops[i] goes: the op at that byte offset of the expression. */
static bool branch_target(const Dwarf_Op *ops, size_t nops, size_t i, size_t *to)
{
	/* The operand is a 2-byte signed offset from the end of this 3-byte operation. */
	uint64_t target = ops[i].offset + 3 + (uint64_t)(int64_t)(int16_t)ops[i].number;

	for (size_t j = 0; j < nops; j++) {
		if (ops[j].offset == target) {
			*to = j;
			return true;
		}
	}
	return false;
}

/*
 * Evaluates a DWARF expression of CFI (DWARF 5 section 2.5) over the frame's registers and the copied stack.
 * *result is the top of the stack; the caller knows whether it is an address or a value. The CFA, when the
 * expression asks for it (DW_OP_call_frame_cfa), is cfa.
 */
static bool evaluate(const Dwarf_Op *ops, size_t nops, const struct regs *r, const uint64_t *cfa, struct memory *m,
		     uint64_t *result)
{
	uint64_t stack[EXPRESSION_STACK], a, b;
	size_t depth = 0, steps = 0;

#define PUSH(x)                                \
	do {                                   \
		if (depth == EXPRESSION_STACK) \
			return false;          \
		stack[depth++] = (x);          \
	} while (0)
#define POP(x)                        \
	do {                          \
		if (depth == 0)       \
			return false; \
		(x) = stack[--depth]; \
	} while (0)

	for (size_t i = 0; i < nops; i++) {
		uint8_t atom = ops[i].atom;

		if (++steps > EXPRESSION_STEPS)
			return false;
		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			PUSH((uint64_t)(atom - DW_OP_lit0));
			continue;
		}
		if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
			if (!known(r, atom - DW_OP_breg0))
				return false;
			PUSH(r->v[atom - DW_OP_breg0] + ops[i].number);
			continue;
		}
		switch (atom) {
		case DW_OP_bregx:
			/* The register number is 64 bits (the file's ULEB128): checked whole, or 2^32 + 3 would pass
			 * known() as rbx and index v[] far out of bounds. */
			if (ops[i].number >= CFI_REGS || !known(r, (unsigned int)ops[i].number))
				return false;
			PUSH(r->v[ops[i].number] + ops[i].number2);
			break;
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
		case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
		case DW_OP_constu: case DW_OP_consts:
			PUSH(ops[i].number);
			break;
		case DW_OP_call_frame_cfa:
			if (!cfa)
				return false;
			PUSH(*cfa);
			break;
		case DW_OP_dup: POP(a); PUSH(a); PUSH(a); break;
		case DW_OP_drop: POP(a); break;
		case DW_OP_over:
			if (depth < 2)
				return false;
			a = stack[depth - 2];
			PUSH(a);
			break;
		case DW_OP_swap: POP(a); POP(b); PUSH(a); PUSH(b); break;
		case DW_OP_deref:
			POP(a);
			if (!read_word(m, a, &b))
				return false;
			PUSH(b);
			break;
		case DW_OP_plus_uconst: POP(a); PUSH(a + ops[i].number); break;
		case DW_OP_plus: POP(b); POP(a); PUSH(a + b); break;
		case DW_OP_minus: POP(b); POP(a); PUSH(a - b); break;
		case DW_OP_mul: POP(b); POP(a); PUSH(a * b); break;
		case DW_OP_and: POP(b); POP(a); PUSH(a & b); break;
		case DW_OP_or: POP(b); POP(a); PUSH(a | b); break;
		case DW_OP_xor: POP(b); POP(a); PUSH(a ^ b); break;
		case DW_OP_shl: POP(b); POP(a); PUSH(b < 64 ? a << b : 0); break;
		case DW_OP_shr: POP(b); POP(a); PUSH(b < 64 ? a >> b : 0); break;
		case DW_OP_shra: POP(b); POP(a); PUSH((uint64_t)((int64_t)a >> (b < 63 ? b : 63))); break;
		case DW_OP_neg: POP(a); PUSH(0 - a); break;
		case DW_OP_not: POP(a); PUSH(~a); break;
		case DW_OP_eq: POP(b); POP(a); PUSH(a == b); break;
		case DW_OP_ne: POP(b); POP(a); PUSH(a != b); break;
		case DW_OP_lt: POP(b); POP(a); PUSH((int64_t)a < (int64_t)b); break;
		case DW_OP_le: POP(b); POP(a); PUSH((int64_t)a <= (int64_t)b); break;
		case DW_OP_gt: POP(b); POP(a); PUSH((int64_t)a > (int64_t)b); break;
		case DW_OP_ge: POP(b); POP(a); PUSH((int64_t)a >= (int64_t)b); break;
		case DW_OP_skip: {
			size_t to;

			if (!branch_target(ops, nops, i, &to))
				return false;
			i = to - 1;
			break;
		}
		case DW_OP_bra: {
			size_t to;

			POP(a);
			if (a) {
				if (!branch_target(ops, nops, i, &to))
					return false;
				i = to - 1;
			}
			break;
		}
		case DW_OP_nop:
		case DW_OP_stack_value: /* the result is the value itself; the rule's kind already says so */
			break;
		default:
			return false; /* not an operation CFI uses */
		}
	}
	if (depth == 0)
		return false;
	*result = stack[depth - 1];
	return true;
#undef PUSH
#undef POP
}

/* The caller's value of one register under rule c. false when it cannot be known. */
static inline __attribute__((always_inline)) bool caller_value(const struct cfi_reg *c, const struct regs *callee, uint64_t cfa, struct memory *m,
			 uint64_t *value)
{
	uint64_t addr;

	switch (c->kind) {
	case CFI_SAME:
		return false; /* handled by the caller: the value stays, known or not */
	case CFI_OFFSET:
		return read_word(m, cfa + (uint64_t)c->offset, value);
	case CFI_VAL_OFFSET:
		*value = cfa + (uint64_t)c->offset;
		return true;
	case CFI_REGISTER:
		if (!known(callee, c->reg))
			return false;
		*value = callee->v[c->reg];
		return true;
	case CFI_EXPRESSION:
		return evaluate(c->ops, c->nops, callee, &cfa, m, &addr) && read_word(m, addr, value);
	case CFI_VAL_EXPRESSION:
		return evaluate(c->ops, c->nops, callee, &cfa, m, value);
	default:
		return false;
	}
}

/* The CFA under rule for the callee's registers. false when it cannot be computed. */
static inline __attribute__((always_inline)) bool cfa_of(const struct cfi_rule *rule, const struct regs *callee, struct memory *m, uint64_t *cfa)
{
	if (rule->cfa_is_expression)
		return evaluate(rule->cfa_ops, rule->cfa_nops, callee, NULL, m, cfa);
	if (!known(callee, rule->cfa_reg))
		return false;
	*cfa = callee->v[rule->cfa_reg] + (uint64_t)rule->cfa_offset;
	return true;
}

/*
 * cfi_step by the rule's plan (cfi_rules.h), inlined in the walk, in place: true with r the caller's registers,
 * *pc and *cfa_out as cfi_step would set them (it would return 1), or false, nothing changed, where the plan
 * does not apply (the general way then answers). The plan saves the return address, so a step by it always
 * finds the caller. In place: the registers the rule leaves as they are stay, the others it does not save are
 * no longer known, so nothing is copied.
 */
static inline __attribute__((always_inline)) bool planned_step(const struct cfi_rule *rule, struct regs *r,
							       const struct memory *m, uint64_t *pc, uint64_t *cfa_out)
{
	const struct cfi_step_plan *plan = &rule->plan;
	uint64_t cfa, lowest, at;
	const uint8_t *words;

	if (!(r->known & (1u << rule->cfa_reg)))
		return false;
	cfa = r->v[rule->cfa_reg] + (uint64_t)rule->cfa_offset;
	lowest = cfa + (uint64_t)plan->lowest;
	at = lowest - m->base;
	/* Neither below the stack pointer (the general way's popped-register case: at wraps past the copy's size,
	 * which ends below 2^64 in a walk that takes plans) nor past the copy. */
	if (m->size < plan->span || at > m->size - plan->span)
		return false;
	words = m->bytes + at;
	r->known = (plan->same & r->known) | plan->saved;
	/* count read once: the compiler cannot know the stores to r leave the plan as it is. */
	for (unsigned int k = 0, count = plan->count; k < count; k += 2) { /* an odd count's last again: cfi_rules.h */
		memcpy(&r->v[plan->reg[k]], words + plan->delta[k], sizeof(uint64_t));
		memcpy(&r->v[plan->reg[k + 1]], words + plan->delta[k + 1], sizeof(uint64_t));
	}
	/* The ABI's rule, as the general way applies it: the caller's stack pointer is the CFA unless saved. */
	if (!(plan->saved & (1u << CFI_REG_SP)))
		set(r, CFI_REG_SP, cfa);
	*cfa_out = cfa;
	*pc = r->v[rule->ra_reg];
	return true;
}

/*
 * One step with CFI: from the callee's registers to the caller's. Returns 1 with *caller and *pc set, 0 at
 * the outermost frame (the return address is undefined), -1 when the step cannot be made.
 */
static __attribute__((noinline)) int cfi_step(const struct cfi_rule *rule, const struct regs *callee,
					       struct memory *m, struct regs *caller, uint64_t *pc, uint64_t *cfa_out)
{
	uint64_t cfa, value;

	if (!cfa_of(rule, callee, m, &cfa))
		return -1;
	*cfa_out = cfa;
	if (rule->regs[rule->ra_reg].kind == CFI_UNDEFINED)
		return 0;
	/* The registers the rule leaves as they are, known where the callee's are: copied whole, one block, rather
	 * than one by one (a dozen a step); the values of the others are read nowhere until set, as known says. */
	memcpy(caller->v, callee->v, sizeof(caller->v));
	caller->known = rule->same_regs & callee->known;
	/* In register order, as the stack is read (m says why the last read failed). */
	for (uint32_t other = rule->other_regs; other; other &= other - 1) {
		unsigned int i = (unsigned int)__builtin_ctz(other);
		const struct cfi_reg *c = &rule->regs[i];

		if (c->kind == CFI_OFFSET) { /* nearly every saved register: caller_value's case, without its switch */
			uint64_t addr = cfa + (uint64_t)c->offset;

			if (i != rule->ra_reg && addr < m->base) {
				/* Saved below the stack pointer: the epilogue already popped it back (clang emits no
				 * .cfi_restore after `pop %rbp`), so the register holds the caller's value again. */
				if (known(callee, i)) /* else it stays unknown: nothing below the copy can be read */
					set(caller, i, callee->v[i]);
			} else if (read_word(m, addr, &value)) {
				set(caller, i, value);
			}
		} else if (caller_value(c, callee, cfa, m, &value)) {
			set(caller, i, value);
		}
	}
	/* The ABI's rule, whatever the CFI says of the stack pointer: the caller's is the CFA. */
	if (!(rule->regs[CFI_REG_SP].kind == CFI_OFFSET || rule->regs[CFI_REG_SP].kind == CFI_EXPRESSION) ||
	    !known(caller, CFI_REG_SP))
		set(caller, CFI_REG_SP, cfa);
	if (!known(caller, rule->ra_reg))
		return -1;
	*pc = caller->v[rule->ra_reg];
	return 1;
}

/*
 * cfi_step's answer for the return address alone (*pc; 1, 0 or -1 as it returns), without the caller's other
 * registers: the fp leaf fix asks only that, once per sample.
 */
static int return_address_step(const struct cfi_rule *rule, const struct regs *callee, struct memory *m, uint64_t *pc)
{
	const struct cfi_reg *c = &rule->regs[rule->ra_reg];
	struct regs caller;
	uint64_t cfa;

	if (rule->ra_reg == CFI_REG_SP) /* cfi_step's rule for the stack pointer would apply to it */
		return cfi_step(rule, callee, m, &caller, pc, &cfa);
	if (!cfa_of(rule, callee, m, &cfa))
		return -1;
	if (c->kind == CFI_UNDEFINED)
		return 0;
	if (c->kind == CFI_SAME) {
		if (!known(callee, rule->ra_reg))
			return -1;
		*pc = callee->v[rule->ra_reg];
		return 1;
	}
	return caller_value(c, callee, cfa, m, pc) ? 1 : -1;
}

/* One frame-pointer step: the frame record at rbp holds the caller's rbp and the return address. */
static int fp_step(const struct regs *callee, struct memory *m, struct regs *caller, uint64_t *pc)
{
	uint64_t bp, saved_bp, ra;

	if (!known(callee, CFI_REG_FP) || !known(callee, CFI_REG_SP))
		return -1;
	bp = callee->v[CFI_REG_FP];
	if (bp < callee->v[CFI_REG_SP] || bp % sizeof(uint64_t) || !read_word(m, bp, &saved_bp) ||
	    !read_word(m, bp + sizeof(uint64_t), &ra))
		return -1;
	/* Which callee-saved registers the skipped code saved where is unknown: only these are. */
	memset(caller, 0, sizeof(*caller));
	set(caller, CFI_REG_FP, saved_bp);
	set(caller, CFI_REG_SP, bp + 2 * sizeof(uint64_t));
	set(caller, CFI_REG_RA, ra);
	*pc = ra;
	return 1;
}

struct unwinder *unwinder_new(struct profile *profile, const struct process_maps *maps,
			      const struct debug_file_search *search)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));

	u->profile = profile;
	u->maps = maps;
	u->search = search;
	module_file_callbacks_init(&u->callbacks, search);
	u->callbacks.cfi_only = true; /* the symbolizer opens the same files again for names and lines */
	cfi_rules_init(&u->rules);
	return u;
}

void unwinder_use_plans(struct unwinder *u, bool use)
{
	u->plans_off = !use;
}

void unwinder_for_each_module(const struct unwinder *u,
			      void (*fn)(void *ctx, uint32_t module, const struct module_file *mf), void *ctx)
{
	for (size_t i = 0; i < u->module_cap; i++)
		if (u->modules[i].opened)
			fn(ctx, (uint32_t)i, &u->modules[i].file);
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	debug("unwinding: %llu CFI look-ups, %llu distinct addresses, %llu compiled, %zu distinct rules",
	      (unsigned long long)u->rules.lookups, (unsigned long long)u->rules.misses,
	      (unsigned long long)u->rules.compiled, cfi_rules_distinct(&u->rules));
	cfi_rules_release(&u->rules);
	for (size_t i = 0; i < u->module_cap; i++)
		if (u->modules[i].opened) {
			elf_symbols_release(&u->modules[i].symbols);
			module_file_close(&u->modules[i].file);
		}
	free(u->modules);
	module_file_callbacks_release(&u->callbacks);
	free(u);
}

void unwind_resolve(struct unwinder *u, uint32_t pid, uint64_t time_ns, struct unwind_frame *frame)
{
	frame->module = PROFILE_NO_MODULE;
	frame->file_offset = frame->pc;
	process_maps_resolve(u->maps, pid, time_ns, frame->pc, &frame->module, &frame->file_offset);
}

static struct unwind_module *module_of(struct unwinder *u, uint32_t index)
{
	struct unwind_module *m;

	if (index >= u->profile->module_count)
		return NULL;
	if (index >= u->module_cap) {
		size_t old = u->module_cap;

		GROW(u->modules, u->module_cap, (size_t)index + 1);
		memset(u->modules + old, 0, (u->module_cap - old) * sizeof(*u->modules));
	}
	m = &u->modules[index];
	if (!m->opened) {
		m->opened = true;
		module_file_open(&m->file, &u->profile->modules[index], u->search, &u->callbacks);
		if (!m->file.reason) {
			/* A debug file alone has .eh_frame's header but not its bytes: .debug_frame, if any, is its CFI. */
			if (!m->file.debug_only)
				m->cfi.eh = dwfl_module_eh_cfi(m->file.mod, &m->cfi.eh_bias);
			m->cfi.module = m->file.mod;
		}
	}
	return m->file.reason ? NULL : m;
}

const struct module_file *unwind_module_file(struct unwinder *u, uint32_t module)
{
	struct unwind_module *m = module_of(u, module);

	return m ? &m->file : NULL;
}

/*
 * Whether path names memory no file backs (anonymous executable memory: a JIT's code, or a memfd), whose CFI
 * no file could give: a frame there takes a frame-pointer step, as without CFI, and is not a module whose file
 * was not found, which ended the walk (94.9% of node --perf-basic-prof's dwarf samples ended at their first JIT
 * frame).
 */
static bool anonymous_memory(const char *path)
{
	return debug_file_anonymous(path) || !strncmp(path, "/memfd:", 7);
}

/*
 * The CFI rule for frame f, or NULL when none covers it. *missing is set when the frame is in a file that
 * could not be found: its CFI is unknown, not absent, and guessing with the frame pointer there would skip
 * callers of its frameless functions (most of Debian's libc) without a trace.
 */
static const struct cfi_rule *rule_for(struct unwinder *u, const struct unwind_frame *f, bool *missing)
{
	const struct cfi_rule *rule;
	struct unwind_module *m;
	Dwarf_Addr addr;

	*missing = false;
	if (f->module == PROFILE_NO_MODULE)
		return NULL;
	if (!(m = module_of(u, f->module))) {
		*missing = u->profile->modules[f->module].path[0] == '/' &&
			   !anonymous_memory(u->profile->modules[f->module].path);
		return NULL;
	}
	if (!module_file_address(&m->file, f->file_offset, &addr))
		return NULL;
	/* A return address may be one past the end of its function (a call to a noreturn function). */
	rule = cfi_rules_find(&u->rules, f->module, &m->cfi, f->is_return_address ? addr - 1 : addr);
	/* A thread in rt_sigreturn is at the byte after its trampoline's syscall, one past the signal frame's FDE
	 * (glibc's __restore_rt): that rule holds there. The frame-pointer guess named the interrupted function's
	 * caller's caller instead (main;outer;__restore_rt, skipping middle;interrupted_leaf). */
	if (!rule && !f->is_return_address && addr > 0 &&
	    (rule = cfi_rules_find(&u->rules, f->module, &m->cfi, addr - 1)) && !rule->signal_frame)
		rule = NULL;
	return rule;
}

/* Which return address no call made return address f (resolved) is, if any (enum call_site_made). */
static enum call_site_made made_return(struct unwinder *u, const struct unwind_frame *f)
{
	struct unwind_module *m = f->module == PROFILE_NO_MODULE ? NULL : module_of(u, f->module);

	return m ? call_site_made_return(&m->file, f->file_offset) : CALL_SITE_MADE_NONE;
}

/*
 * Frame f of process pid (pc, is_return_address and method set) at time_ns, in the period of its mappings'
 * history: its entry of the memo, with its module, file offset and CFI rule as unwind_resolve and rule_for find
 * them (also set in f). callee: the entry of the frame below f in the walk, NULL for the first.
 */
static struct placed_frame *place_frame(struct unwinder *u, uint32_t pid, uint64_t time_ns, uint64_t period,
					struct unwind_frame *f, struct placed_frame *callee)
{
	struct placed_frame *p;
	struct placed_key key;
	bool found, missing;
	const struct cfi_rule *rule;

	if (callee && callee->caller_stamp && callee->caller_pc == f->pc) {
		p = &u->placed[callee->caller % PLACED_FRAMES];
		if (p->stamp == callee->caller_stamp && p->generation == u->rules.generation)
			goto placed;
	}
	key = placed_key(pid, period, f);
	p = placed_entry(u->placed, sizeof(*u->placed), PLACED_FRAMES, &key, &found);
	if (!found || p->generation != u->rules.generation) {
		unwind_resolve(u, pid, time_ns, f);
		rule = rule_for(u, f, &missing);
		/* Stamps start at 1: 0 is the stamp of no entry and of no link. */
		*p = (struct placed_frame){ .key = key, .missing = missing,
					    .made = f->is_return_address ? made_return(u, f) : CALL_SITE_MADE_NONE,
					    .module = f->module,
					    .file_offset = f->file_offset, .generation = u->rules.generation,
					    .rule = rule, .index = (uint32_t)(p - u->placed),
					    .stamp = ++u->stamps,
					    .location = UNWIND_NO_LOCATION };
	}
	/* Not where f took the callee's own entry: its key, which says how f was found, is gone. */
	if (callee && callee != p) {
		callee->caller_pc = f->pc;
		callee->caller = p->index;
		callee->caller_stamp = p->stamp;
	}
placed:
	f->module = p->module;
	f->file_offset = p->file_offset;
	f->placed = p->index;
	f->placed_stamp = p->stamp;
	f->location = p->location;
	return p;
}

void unwind_keep_location(struct unwinder *u, const struct unwind_frame *f, uint32_t location)
{
	struct placed_frame *p = &u->placed[f->placed % PLACED_FRAMES];

	if (p->stamp == f->placed_stamp)
		p->location = location;
}

/* The sample's registers and stack, in the unwinder's terms. false when they are not for this machine. */
static void reg_slots_fill(struct reg_slots *s, uint64_t mask, uint16_t count)
{
	*s = (struct reg_slots){ .mask = mask, .count = count, .valid = true };
	memset(s->slot, REG_ABSENT, sizeof(s->slot));
	for (unsigned int n = 0; mask && n < count; mask &= mask - 1, n++) {
		unsigned int reg = (unsigned int)__builtin_ctzll(mask);

		if (reg < CFI_REGS) {
			s->slot[reg] = (uint8_t)n;
			s->known |= 1u << reg;
			s->reg[s->listed++] = (uint8_t)reg;
		}
	}
}

/* s for the mask and count of in's registers: the n-th set bit is regs[n] (but past the count: none). */
static inline void reg_slots_for(struct reg_slots *s, const struct unwind_input *in)
{
	if (!s->valid || s->mask != in->header->reg_mask || s->count != in->header->reg_count)
		reg_slots_fill(s, in->header->reg_mask, in->header->reg_count);
}

bool unwind_input_pc(const struct unwind_input *in, uint64_t *pc)
{
	uint64_t below = in->header->reg_mask & ((1ull << CFI_REG_RA) - 1);
	unsigned int n = (unsigned int)__builtin_popcountll(below);

	if (in->header->machine != 62 /* EM_X86_64 */ || !(in->header->reg_mask & (1ull << CFI_REG_RA)) ||
	    n >= in->header->reg_count)
		return false;
	*pc = in->regs[n];
	return true;
}

/* in's registers and stack into r and m (slots: kept for the registers of the samples read). */
static bool load_input(struct reg_slots *slots, const struct unwind_input *in, struct regs *r, struct memory *m)
{

	/* Cleared before any check can fail: unwind_user_stack reads m's flags on the way out, whatever load_input
	 * returned (found by tests/fuzz/fuzz-unwind.c: registers without rsp left them uninitialized). */
	memset(m, 0, sizeof(*m));
	if (in->header->machine != 62 /* EM_X86_64 */)
		return false;
	memset(r, 0, sizeof(*r));
	reg_slots_for(slots, in);
	for (unsigned int i = 0; i < slots->listed; i++)
		r->v[slots->reg[i]] = in->regs[slots->slot[slots->reg[i]]];
	r->known = slots->known;
	if (!known(r, CFI_REG_SP) || !known(r, CFI_REG_RA))
		return false;
	m->bytes = in->stack;
	m->base = r->v[CFI_REG_SP];
	m->size = in->header->stack_size;
	m->cut = in->header->flags & (SREC_USER_STACK_CUT | SREC_USER_STACK_END_UNKNOWN); /* maybe cut: not whole */
	m->holes = stack_holes(in);
	return true;
}

/*
 * The alternate signal stack (sigaltstack, SA_ONSTACK) the signal frame whose trampoline runs at stack pointer
 * sp was delivered on, as [*low, *low + *size): false when it was delivered on the stack it interrupted. x86-64's
 * rt_sigframe less the return address the handler popped: sp is its ucontext, whose uc_stack (ss_sp at +16,
 * ss_flags at +24, ss_size at +32) the kernel fills with the thread's alternate stack as set up (flags 0 or
 * SS_AUTODISARM; SS_DISABLE when there is none). The handler ran on it when sp lies inside: a handler without
 * SA_ONSTACK runs on the interrupted stack though one is set up. If the interrupted stack pointer lies outside
 * it too, that stack is another mapping, which the copy (of the handler's stack) does not reach at any SIZE.
 */
static bool signal_stack_of(const struct memory *m, uint64_t sp, uint64_t *low, uint64_t *size)
{
	struct memory look = *m; /* a look, not a step: a failed read is no reason for the walk to end */
	uint64_t ss_sp, ss_flags, ss_size;

	if (!read_word(&look, sp + 16, &ss_sp) || !read_word(&look, sp + 24, &ss_flags) ||
	    !read_word(&look, sp + 32, &ss_size))
		return false;
	if (((uint32_t)ss_flags & 2) /* SS_DISABLE */ || sp < ss_sp || sp - ss_sp >= ss_size)
		return false;
	*low = ss_sp;
	*size = ss_size;
	return true;
}

/* Whether address lies outside the copy (values are hostile: no sums that can overflow). */
static bool outside_copy(const struct memory *m, uint64_t address)
{
	return address < m->base || address - m->base >= m->size;
}

/*
 * Whether a step from frame f (its stack pointer callee_sp) to a caller whose stack pointer is caller_sp went up
 * the stack, as each caller's frame lies above its callee's. One exception, where the CFI says so: a function
 * interrupted where its return address is in a register and the CFA is its stack pointer (glibc's __vfork pops
 * it into rdi for the system call, as the child would overwrite it on the shared stack: a shell's fork is an
 * off-CPU stack of every shell script) has its caller's frame where it stands. Only for the frame interrupted:
 * the step after it is a return address's, so a walk cannot stand still twice.
 */
static bool moved_up(const struct cfi_rule *rule, const struct unwind_frame *f, uint64_t caller_sp, uint64_t callee_sp)
{
	if (caller_sp > callee_sp)
		return true;
	return caller_sp == callee_sp && rule && !f->is_return_address && rule->regs[rule->ra_reg].kind == CFI_REGISTER;
}

/* Whether return address ra of process pid (at time_ns) follows a call of the function that holds frame f's pc
 * (placed: its module and file offset set). */
static enum call_site return_address_calls(struct unwinder *u, uint32_t pid, uint64_t time_ns,
					   const struct unwind_frame *f, uint64_t ra)
{
	struct unwind_frame at_call = { .pc = ra - 1 };
	struct call_site_answer *a;
	Dwarf_Addr pc_addr;
	size_t slot;

	unwind_resolve(u, pid, time_ns, &at_call); /* the call is before ra, which may be where its mapping ends */
	if (at_call.module == PROFILE_NO_MODULE || f->module == PROFILE_NO_MODULE)
		return CALL_SITE_UNKNOWN; /* no file to read: JIT code, or no code at all */
	slot = address_hash(at_call.file_offset ^ (uint64_t)at_call.module << 40 ^ f->file_offset * 31 ^ f->module) %
	       CALL_SITE_ANSWERS;
	a = &u->call_sites[slot];
	if (a->used && a->ra_module == at_call.module && a->ra_offset == at_call.file_offset + 1 &&
	    a->pc_module == f->module && a->pc_offset == f->file_offset)
		return a->answer;
	*a = (struct call_site_answer){ .used = true, .ra_module = at_call.module, .ra_offset = at_call.file_offset + 1,
					.pc_module = f->module, .pc_offset = f->file_offset, .answer = CALL_SITE_UNKNOWN };
	/* Both opened before either is taken by address: opening one may move u->modules. */
	if (module_of(u, at_call.module) && module_of(u, f->module)) {
		struct unwind_module *ra_module = &u->modules[at_call.module], *pc_module = &u->modules[f->module];

		if (module_file_address(&pc_module->file, f->file_offset, &pc_addr))
			a->answer = call_site_check(
				&(struct call_site_module){ &ra_module->file, &ra_module->symbols }, at_call.file_offset + 1,
				&(struct call_site_module){ &pc_module->file, &pc_module->symbols }, pc_addr);
	}
	return a->answer;
}

/*
 * Where module's .init and .fini start (ELF addresses; 0 for none): _init and _fini, which a stripped library
 * does not name. Read from its section headers once.
 */
static void init_and_fini(struct unwind_module *module)
{
	GElf_Shdr shdr;

	module->entries_read = true;
	if (debug_file_section(module->file.elf, ".init", &shdr))
		module->init_addr = shdr.sh_addr;
	if (debug_file_section(module->file.elf, ".fini", &shdr))
		module->fini_addr = shdr.sh_addr;
}

/*
 * Whether interrupted pc f is the first instruction of a function (its symbol's value, or .init's or .fini's
 * start): nothing is pushed yet, and [sp] is the return address of the call that came there, direct or not
 * (_init and _fini, which ld.so calls through a register, have no CFI: the frame-pointer guess there skipped
 * two callers in 2.7% of a dlopen loop's samples, and ended 3.6% of them).
 */
static bool at_function_entry(struct unwinder *u, const struct unwind_frame *f)
{
	struct unwind_module *module;
	Dwarf_Addr addr;
	GElf_Sym sym;

	if (f->is_return_address || f->module == PROFILE_NO_MODULE || !(module = module_of(u, f->module)) ||
	    !module->file.mod || !module_file_address(&module->file, f->file_offset, &addr))
		return false;
	if (elf_symbols_lookup(&module->symbols, module->file.mod, addr, &sym) && sym.st_value == addr &&
	    GELF_ST_TYPE(sym.st_info) == STT_FUNC)
		return true;
	if (!module->entries_read)
		init_and_fini(module);
	addr -= module->file.bias;
	return addr && (addr == module->init_addr || addr == module->fini_addr);
}

/* The caller's registers when the word on top of r's stack, top, is the return address (nothing was pushed
 * since the call, or the interrupted function made no frame): *pc top, *leaf set. */
static int return_from_top(const struct regs *r, struct regs *caller, uint64_t top, uint64_t *pc, bool *leaf)
{
	memset(caller, 0, sizeof(*caller));
	if (known(r, CFI_REG_FP))
		set(caller, CFI_REG_FP, r->v[CFI_REG_FP]); /* not pushed: the caller's */
	set(caller, CFI_REG_SP, r->v[CFI_REG_SP] + sizeof(uint64_t));
	set(caller, CFI_REG_RA, top);
	*pc = top;
	*leaf = true;
	return 1;
}

/* Whether the word on top of r's stack, *top, is a return address that follows a call of f's function. */
static bool top_returns_from(struct unwinder *u, uint32_t pid, uint64_t time_ns, const struct unwind_frame *f,
			     const struct regs *r, struct memory *m, uint64_t *top)
{
	return known(r, CFI_REG_SP) && read_word(m, r->v[CFI_REG_SP], top) && *top &&
	       return_address_calls(u, pid, time_ns, f, *top) == CALL_SITE_CALLS;
}

/* Whether some mapping of process pid (at time_ns) holds pc. */
static bool mapped(struct unwinder *u, uint32_t pid, uint64_t time_ns, uint64_t pc)
{
	struct unwind_frame at = { .pc = pc };

	unwind_resolve(u, pid, time_ns, &at);
	return at.module != PROFILE_NO_MODULE;
}

/*
 * The caller of interrupted frame f, where no CFI covers its pc (hand-written assembly): as fp_step finds it,
 * unless that return address follows a call of another function, or no call at all. Then f's function may have
 * made no frame of its own, rbp still its caller's, and rbp + 8 the return address of its caller's caller: the
 * word on top of the stack is taken instead (*leaf set) when both show it, that word following a call of f's
 * function and the frame pointer's return address a call of the function that word returns into. Otherwise
 * the frame pointer's return address stays when it follows some call (f's function may have been reached by a
 * tail call from the one called there), and the walk ends (-2) when it follows none. At a function's first
 * instruction (at_function_entry) the word on top of the stack is taken at once; so it is where rbp leads to no
 * frame, or to a return address in no mapping, in code built without frame pointers (glibc's __clone3 ends its
 * CFI before the system call a parent waits in through posix_spawn: every such wait was [unknown]), when it
 * follows a call of f's function. As fp_step returns; *pc the caller's.
 */
static int interrupted_without_cfi(struct unwinder *u, uint32_t pid, uint64_t time_ns, const struct unwind_frame *f,
				   const struct regs *r, struct memory *m, struct regs *caller, uint64_t *pc, bool *leaf)
{
	int step;
	enum call_site by_frame_pointer;
	struct unwind_frame in_caller;
	struct memory look;
	uint64_t top;

	*leaf = false;
	/* at its first byte, any call (ld.so calls _init through a register: CALL_SITE_UNKNOWN) */
	if (known(r, CFI_REG_SP) && read_word(m, r->v[CFI_REG_SP], &top) && top && at_function_entry(u, f) &&
	    return_address_calls(u, pid, time_ns, f, top) != CALL_SITE_NONE)
		return return_from_top(r, caller, top, pc, leaf);
	/* on a copy of m: a failed read of a step not taken is not why the walk ends later */
	look = *m;
	step = fp_step(r, &look, caller, pc);
	if (f->module == PROFILE_NO_MODULE) { /* JIT code: no file to read calls from */
		*m = look;
		return step;
	}
	if (step <= 0 || !*pc || !mapped(u, pid, time_ns, *pc)) {
		struct memory top_look = *m;

		if (top_returns_from(u, pid, time_ns, f, r, &top_look, &top))
			return return_from_top(r, caller, top, pc, leaf);
		*m = look;
		return step;
	}
	*m = look;
	by_frame_pointer = return_address_calls(u, pid, time_ns, f, *pc);
	if (by_frame_pointer == CALL_SITE_UNKNOWN || by_frame_pointer == CALL_SITE_CALLS)
		return step;
	if (top_returns_from(u, pid, time_ns, f, r, m, &top)) {
		in_caller = (struct unwind_frame){ .pc = top - 1 };
		unwind_resolve(u, pid, time_ns, &in_caller);
		/* fp_step found a frame, so rbp is known: the frame rbp + 8 returned from is the caller's */
		if (return_address_calls(u, pid, time_ns, &in_caller, *pc) == CALL_SITE_CALLS)
			return return_from_top(r, caller, top, pc, leaf);
	}
	return by_frame_pointer == CALL_SITE_NONE ? -2 : step;
}

uint32_t unwind_user_stack(struct unwinder *u, const struct unwind_input *in, struct unwind_frame *frames,
			   uint32_t max, enum unwind_end *end, const char **why)
{
	struct regs frame_regs[2], *r = &frame_regs[0], *caller = &frame_regs[1], *swap;
	struct memory m;
	enum profile_unwind method = PROFILE_UNWIND_PC;
	bool activation = true;
	uint32_t n = 0;
	uint64_t pc, callee_sp;
	const char *reason = NULL;
	uint64_t period;
	bool plans;
	struct placed_frame *placed = NULL; /* the last frame's */
	bool on_signal_stack = false; /* a signal frame was delivered on an alternate stack: signal_stack_of */
	uint64_t signal_stack_low = 0, signal_stack_size = 0;

	*end = UNWIND_LOST;
	if (!load_input(&u->slots, in, r, &m)) {
		reason = "registers of another machine";
		goto out;
	}
	/* Read once: the compiler cannot know the frames' stores leave u->plans_off. A planned step's bounds check
	 * is one compare where the copy ends below 2^64 (values are hostile). */
	plans = !u->plans_off && m.base <= UINT64_MAX - m.size && !m.holes; /* a plan reads words unchecked */
	period = process_maps_period(u->maps, in->pid, in->time_ns);
	pc = r->v[CFI_REG_RA];
	while (n < max) {
		struct unwind_frame *f = &frames[n++];
		const struct cfi_rule *rule;
		int step;

		f->pc = pc;
		f->is_return_address = !activation;
		f->method = method;
		placed = place_frame(u, in->pid, in->time_ns, period, f, placed);
		rule = placed->rule;
		if (placed->missing) {
			reason = "the module's file was not found";
			goto out;
		}
		/* makecontext's __start_context, named where it is: the outermost frame of its context, which nothing
		 * called; above it are the context's data. A signal handler's __restore_rt, named where it is too,
		 * under its signal frame's rule. (enum call_site_made: the byte before either is no function's) */
		if (placed->made == CALL_SITE_MADE_START_CONTEXT) {
			f->is_return_address = false;
			*end = UNWIND_COMPLETE;
			goto out;
		}
		if (placed->made == CALL_SITE_MADE_SIGRETURN && rule && rule->signal_frame)
			f->is_return_address = false;
		f->cfa = 0;
		callee_sp = r->v[CFI_REG_SP];
		if (rule && rule->signal_frame && !on_signal_stack)
			on_signal_stack = signal_stack_of(&m, callee_sp, &signal_stack_low, &signal_stack_size);
		if (rule && rule->plan.usable && plans && planned_step(rule, r, &m, &pc, &f->cfa)) {
			/* The general way's checks below, of a step that found the caller (r is the caller's now). */
			method = PROFILE_UNWIND_CFI;
			activation = rule->signal_frame;
			if (pc == 0) {
				*end = UNWIND_COMPLETE;
				goto out;
			}
			if (!rule->signal_frame && !moved_up(rule, f, r->v[CFI_REG_SP], callee_sp)) {
				reason = "stack pointer did not move up";
				goto out;
			}
			continue;
		}
		if (rule) {
			step = cfi_step(rule, r, &m, caller, &pc, &f->cfa);
			method = PROFILE_UNWIND_CFI;
			activation = rule->signal_frame;
		} else {
			bool leaf = false;

			step = f->is_return_address ? fp_step(r, &m, caller, &pc)
						    : interrupted_without_cfi(u, in->pid, in->time_ns, f, r, &m, caller, &pc,
									      &leaf);
			if (step == -2) {
				reason = "no CFI, and the frame pointer leads to no return address";
				goto out;
			}
			/* The frame record's address + 16 is the CFA of a function that made one; an interrupted
			 * function may not have made it yet (or never does), and its rbp is then its caller's. */
			if (step > 0 && f->is_return_address)
				f->cfa = r->v[CFI_REG_FP] + 2 * sizeof(uint64_t);
			method = leaf ? PROFILE_UNWIND_FP_LEAF_FIX : PROFILE_UNWIND_FRAME_POINTER;
			activation = false;
		}
		/* A return address of 0 ends a stack when CFI found it; read through a guessed frame pointer, it
		 * is more likely a zeroed word than the end. */
		if (step == 0 || (step > 0 && pc == 0 && rule)) {
			*end = UNWIND_COMPLETE;
			goto out;
		}
		if (step > 0 && pc == 0)
			step = -1;
		if (step < 0 && on_signal_stack && outside_copy(&m, r->v[CFI_REG_SP]) &&
		    r->v[CFI_REG_SP] - signal_stack_low >= signal_stack_size) {
			reason = UNWIND_SIGNAL_STACK;
			*end = UNWIND_TRUNCATED;
			goto out;
		}
		if (step < 0 && m.cut && m.read_past_end) {
			reason = UNWIND_COPY_TOO_SMALL;
			goto out;
		}
		if (step < 0 && m.read_hole) {
			reason = "a stack page not in memory when sampled";
			goto out;
		}
		/* A frame at the very end of a stack copied whole is the entry point, even without CFI that says
		 * so (the dynamic loader's _start has none): there is no room for a caller above it. */
		if (step < 0 && !m.cut && at_top(&m, r->v[CFI_REG_SP])) {
			*end = UNWIND_COMPLETE;
			goto out;
		}
		if (step < 0) {
			struct unwind_module *fm = rule || f->module == PROFILE_NO_MODULE ? NULL : module_of(u, f->module);

			reason = rule ? "CFI rule could not be applied"
			     : fm && fm->file.debug_only ? UNWIND_DEBUG_FILE_ALONE
							 : "no CFI and no frame pointer";
			goto out;
		}
		/* Each caller's frame lies above its callee's; a signal frame may return to any stack. */
		if (!rule || !rule->signal_frame) {
			if (!moved_up(rule, f, caller->v[CFI_REG_SP], callee_sp)) {
				reason = "stack pointer did not move up";
				goto out;
			}
		}
		swap = r; /* the caller's registers are the next callee's: no copy */
		r = caller;
		caller = swap;
	}
	reason = UNWIND_TOO_DEEP;
	*end = UNWIND_TRUNCATED;
out:
	if (*end == UNWIND_LOST && m.read_past_end && m.cut)
		*end = UNWIND_TRUNCATED;
	if (why)
		*why = reason;
	return n;
}

/*
 * Whether f is at its module's ELF entry point (ld.so's _start, the first instruction of every program started
 * by exec): the kernel jumped there, nothing called it, so there is no caller to find. Asked before the CFI:
 * Debian's ld.so leaves _start out of .eh_frame, and looking further would read its whole separate debug file
 * (which has no .debug_frame either) in every conversion of a recording that sampled a program's start.
 */
static bool at_entry(struct unwinder *u, const struct unwind_frame *f)
{
	struct unwind_module *m = f->module == PROFILE_NO_MODULE ? NULL : module_of(u, f->module);
	Dwarf_Addr addr;

	return m && m->file.entry && module_file_address(&m->file, f->file_offset, &addr) && addr == m->file.entry;
}

bool unwind_leaf_caller(struct unwinder *u, const struct unwind_input *in, uint64_t leaf_pc, uint64_t *return_address)
{
	struct unwind_frame leaf = { .pc = leaf_pc };

	unwind_resolve(u, in->pid, in->time_ns, &leaf);
	return unwind_leaf_caller_of(u, in, &leaf, return_address);
}

/* The rule that finds the caller of the leaf frame f (not a return address), or NULL when there is none. */
static const struct cfi_rule *leaf_rule(struct unwinder *u, const struct unwind_frame *f)
{
	size_t i = address_hash(f->file_offset ^ (uint64_t)f->module << 40) % LEAF_RULES;
	struct leaf_rule *l = &u->leaves[i];
	const struct cfi_rule *rule;
	bool missing;

	if (l->used && l->module == f->module && l->file_offset == f->file_offset &&
	    l->generation == u->rules.generation)
		return l->rule;
	rule = at_entry(u, f) ? NULL : rule_for(u, f, &missing);
	/* A frame of its own: the CFA is computed from the frame pointer, and the walk found the caller. */
	if (rule && !rule->cfa_is_expression && rule->cfa_reg == CFI_REG_FP)
		rule = NULL;
	*l = (struct leaf_rule){ .used = true, .module = f->module, .file_offset = f->file_offset,
				 .generation = u->rules.generation, .rule = rule };
	return rule;
}

/* The sample's register reg (slots: reg_slots_for in), as load_input sets it; false when the sample did not keep it. */
static bool input_reg(const struct reg_slots *slots, const struct unwind_input *in, unsigned int reg, uint64_t *value)
{
	if (reg >= CFI_REGS || slots->slot[reg] == REG_ABSENT)
		return false;
	*value = in->regs[slots->slot[reg]];
	return true;
}

bool unwind_leaf_caller_recipe(struct unwinder *u, const struct unwind_input *in, const struct unwind_frame *leaf,
			       uint64_t *return_address, struct unwind_leaf_recipe *recipe)
{
	const struct cfi_rule *rule;
	struct regs r;
	struct memory m;
	uint64_t sp, ip, base, pc, offset;

	*recipe = (struct unwind_leaf_recipe){ .kind = UNWIND_LEAF_ASK };
	/* load_input's checks, on the two registers they are about. */
	if (leaf->is_return_address || in->header->machine != 62 /* EM_X86_64 */)
		return false;
	reg_slots_for(&u->slots, in);
	if (!input_reg(&u->slots, in, CFI_REG_SP, &sp) || !input_reg(&u->slots, in, CFI_REG_RA, &ip) ||
	    ip != leaf->pc)
		return false;
	rule = leaf_rule(u, leaf);
	if (!rule) {
		recipe->kind = UNWIND_LEAF_NONE;
		return false;
	}
	/* The usual rule, a register plus an offset for the CFA and the return address saved at an offset from it,
	 * reads one register and one word: this runs for every fp sample, and a sample keeps a dozen registers. */
	if (!rule->cfa_is_expression && rule->ra_reg != CFI_REG_SP && rule->regs[rule->ra_reg].kind == CFI_OFFSET) {
		if (!input_reg(&u->slots, in, rule->cfa_reg, &base))
			return false;
		offset = (uint64_t)rule->cfa_offset + (uint64_t)rule->regs[rule->ra_reg].offset;
		*recipe = (struct unwind_leaf_recipe){ .reg_mask = in->header->reg_mask,
						       .offset = offset,
						       .reg_count = in->header->reg_count,
						       .kind = UNWIND_LEAF_WORD,
						       .sp_slot = u->slots.slot[CFI_REG_SP],
						       .ra_slot = u->slots.slot[CFI_REG_RA],
						       .base_slot = u->slots.slot[rule->cfa_reg] };
		m = (struct memory){ .bytes = in->stack, .base = sp, .size = in->header->stack_size,
				     .holes = stack_holes(in) };
		if (!read_word(&m, base + offset, &pc))
			return false;
	} else if (!load_input(&u->slots, in, &r, &m) || return_address_step(rule, &r, &m, &pc) != 1) {
		return false;
	}
	if (pc == 0)
		return false;
	*return_address = pc;
	return true;
}

bool unwind_leaf_caller_of(struct unwinder *u, const struct unwind_input *in, const struct unwind_frame *leaf,
			   uint64_t *return_address)
{
	struct unwind_leaf_recipe recipe;

	return unwind_leaf_caller_recipe(u, in, leaf, return_address, &recipe);
}

/* The checks of unwind_leaf_caller_recipe that depend on the sample, on the registers the recipe has slots for. */
bool unwind_leaf_caller_by(struct unwinder *u, const struct unwind_leaf_recipe *recipe, const struct unwind_input *in,
			   const struct unwind_frame *leaf, uint64_t *return_address)
{
	struct memory m;
	uint64_t pc;

	if (recipe->kind == UNWIND_LEAF_NONE)
		return false;
	if (recipe->kind != UNWIND_LEAF_WORD || leaf->is_return_address || in->header->machine != 62 ||
	    in->header->reg_mask != recipe->reg_mask || in->header->reg_count != recipe->reg_count)
		return unwind_leaf_caller_of(u, in, leaf, return_address);
	if (in->regs[recipe->ra_slot] != leaf->pc)
		return false;
	m = (struct memory){ .bytes = in->stack, .base = in->regs[recipe->sp_slot], .size = in->header->stack_size,
			     .holes = stack_holes(in) };
	if (!read_word(&m, in->regs[recipe->base_slot] + recipe->offset, &pc) || pc == 0)
		return false;
	*return_address = pc;
	return true;
}
