/*
 * cfi_rules.c — compiles libdw's answer for one address into a struct cfi_rule, and keeps it (see
 * cfi_rules.h).
 */
#include "cfi_rules.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

/*
 * Memory: a slot per distinct (module, address), pointing at a rule shared by every address with the same
 * rule (a function's body mostly has a handful). Both tables are emptied when the slots reach
 * CFI_RULES_MAX_SLOTS, so a hostile recording with millions of distinct pcs costs time, never unbounded memory.
 */
#define CFI_RULES_MAX_SLOTS (1u << 20)

struct cfi_rule_slot {
	uint64_t address;
	uint32_t module;
	bool used;
	struct cfi_rule *rule; /* NULL: no CFI covers the address */
};

/* The distinct rules, by content. */
struct cfi_rule_set {
	struct cfi_rule **rules; /* open addressing; NULL is empty */
	size_t cap, count;
};

void cfi_rules_init(struct cfi_rules *rules)
{
	memset(rules, 0, sizeof(*rules));
}

static size_t slot_of(uint32_t module, uint64_t address, size_t cap)
{
	uint64_t h = (address ^ ((uint64_t)module << 40)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 17) & (cap - 1);
}

static struct cfi_rule_slot *lookup(struct cfi_rules *rules, uint32_t module, uint64_t address)
{
	size_t i = slot_of(module, address, rules->cap);

	while (rules->slots[i].used && (rules->slots[i].module != module || rules->slots[i].address != address))
		i = (i + 1) & (rules->cap - 1);
	return &rules->slots[i];
}

static void grow(struct cfi_rules *rules)
{
	struct cfi_rule_slot *old = rules->slots;
	size_t old_cap = rules->cap;

	rules->cap = old_cap ? old_cap * 2 : 1024;
	rules->slots = xcalloc(rules->cap, sizeof(*rules->slots));
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].used)
			*lookup(rules, old[i].module, old[i].address) = old[i];
	free(old);
}

static Dwarf_Op *copy_ops(const Dwarf_Op *ops, size_t nops)
{
	Dwarf_Op *copy = xmalloc(nops * sizeof(*ops));

	memcpy(copy, ops, nops * sizeof(*ops));
	return copy;
}

/* One register's rule from libdw's location description of it. */
static bool compile_reg(Dwarf_Frame *frame, int regno, struct cfi_reg *out)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(frame, regno, mem, &ops, &nops) != 0)
		return false;
	if (nops == 0) {
		out->kind = ops ? CFI_UNDEFINED : CFI_SAME;
		return true;
	}
	if (nops > UINT16_MAX)
		return false;
	/* libdw spells the common rules offset(N) and val_offset(N) as these short expressions. */
	if (ops[0].atom == DW_OP_call_frame_cfa && nops <= 3) {
		size_t i = 1;

		out->offset = 0;
		if (i < nops && ops[i].atom == DW_OP_plus_uconst)
			out->offset = (int64_t)ops[i++].number;
		if (i == nops) {
			out->kind = CFI_OFFSET;
			return true;
		}
		if (i + 1 == nops && ops[i].atom == DW_OP_stack_value) {
			out->kind = CFI_VAL_OFFSET;
			return true;
		}
	}
	if (nops == 1 && ops[0].atom == DW_OP_regx) {
		if (ops[0].number >= CFI_REGS)
			return false;
		out->kind = CFI_REGISTER;
		out->reg = (uint8_t)ops[0].number;
		return true;
	}
	out->kind = ops[nops - 1].atom == DW_OP_stack_value ? CFI_VAL_EXPRESSION : CFI_EXPRESSION;
	out->ops = copy_ops(ops, nops);
	out->nops = (uint16_t)nops;
	return true;
}

static void free_rule(struct cfi_rule *rule)
{
	if (!rule)
		return;
	free(rule->cfa_ops);
	for (int i = 0; i < CFI_REGS; i++)
		free(rule->regs[i].ops);
	free(rule);
}

/* The register masks and the step plan of a rule whose other fields are set (cfi_rules.h). */
static void derive(struct cfi_rule *rule)
{
	struct cfi_step_plan *plan = &rule->plan;
	int64_t highest = INT64_MIN;
	bool common = !rule->cfa_is_expression;

	plan->lowest = INT64_MAX;
	for (unsigned int i = 0; i < CFI_REGS; i++) {
		const struct cfi_reg *c = &rule->regs[i];

		if (c->kind == CFI_SAME) {
			rule->same_regs |= 1u << i;
		} else if (c->kind != CFI_UNDEFINED) {
			rule->other_regs |= 1u << i;
			/* libdw says the stack pointer is the CFA (val_offset(0)); a step sets it to the CFA whatever
			 * its rule, unless saved: the plan does too. */
			if (c->kind == CFI_VAL_OFFSET && i == CFI_REG_SP)
				continue;
			if (c->kind != CFI_OFFSET) {
				common = false;
				continue;
			}
			plan->saved |= 1u << i;
			plan->reg[plan->count++] = (uint8_t)i;
			plan->lowest = c->offset < plan->lowest ? c->offset : plan->lowest;
			highest = c->offset > highest ? c->offset : highest;
		}
	}
	plan->same = rule->same_regs;
	/* The offsets come from the file: bounded first, so that their difference cannot overflow. */
	if (!common || !(plan->saved & (1u << rule->ra_reg)) || plan->lowest < INT64_MIN / 2 ||
	    highest > INT64_MAX / 2 || highest - plan->lowest > CFI_PLAN_MAX_SPAN) {
		memset(plan, 0, sizeof(*plan));
		return;
	}
	plan->span = (uint32_t)(highest - plan->lowest) + sizeof(uint64_t);
	for (unsigned int k = 0; k < plan->count; k++)
		plan->delta[k] = (uint16_t)(rule->regs[plan->reg[k]].offset - plan->lowest);
	plan->reg[plan->count] = plan->reg[plan->count - 1];
	plan->delta[plan->count] = plan->delta[plan->count - 1];
	plan->usable = true;
}

static struct cfi_rule *compile(Dwarf_Frame *frame)
{
	struct cfi_rule *rule = xcalloc(1, sizeof(*rule));
	Dwarf_Op *ops;
	size_t nops;
	int ra;

	ra = dwarf_frame_info(frame, NULL, NULL, &rule->signal_frame);
	if (ra < 0 || ra >= CFI_REGS || dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops == 0 || nops > UINT16_MAX)
		goto bad;
	rule->ra_reg = (uint8_t)ra;
	if (nops == 1 && ops[0].atom == DW_OP_bregx) {
		if (ops[0].number >= CFI_REGS)
			goto bad;
		rule->cfa_reg = (uint8_t)ops[0].number;
		rule->cfa_offset = (int64_t)ops[0].number2;
	} else {
		rule->cfa_is_expression = true;
		rule->cfa_ops = copy_ops(ops, nops);
		rule->cfa_nops = (uint16_t)nops;
	}
	for (int i = 0; i < CFI_REGS; i++)
		if (!compile_reg(frame, i, &rule->regs[i]))
			goto bad;
	derive(rule);
	return rule;
bad:
	free_rule(rule);
	return NULL;
}

/*
 * The rule at CFI address addr, and in *end where libdw's answer for addr stops holding (0: unknown): its search
 * of the FDE's program stops at the first advance of the location past the address it was asked for, so every
 * address from addr up to that location is answered the same way, by the same steps. (Not from the row's start,
 * which dwarf_frame_info also gives: after DW_CFA_restore_state that is the start of the row remembered, older
 * than the row asked about, and leaves a function's epilogue inside its body's row.)
 */
static struct cfi_rule *rule_from(Dwarf_CFI *cfi, Dwarf_Addr addr, Dwarf_Addr *end)
{
	Dwarf_Frame *frame = NULL;
	struct cfi_rule *rule;

	*end = 0;
	if (!cfi || dwarf_cfi_addrframe(cfi, addr, &frame) != 0)
		return NULL;
	rule = compile(frame);
	if (rule && (dwarf_frame_info(frame, NULL, end, NULL) < 0 || *end <= addr))
		*end = 0;
	free(frame);
	return rule;
}

/*
 * A span of a module's .eh_frame answered alike: [start, end) (module addresses), the span rule_from gave for
 * start, or the union of such spans that overlap (an address in both is answered by the same steps as either
 * span's start, so all of them are). A function's body is mostly one row of its FDE, and the samples of a hot
 * function stop at hundreds of its addresses: those past the first are answered by a span, not by libdw
 * interpreting the FDE again (two thirds of the CFI compiled for the leaves of 8,000 node samples). Spans of
 * .debug_frame are not kept: .eh_frame is asked first, and may cover addresses of a .debug_frame span. This
 * takes an FDE to cover its span alone, as the format has it: in a file whose FDEs overlap, or whose program
 * advances past its FDE's end (no linker makes either), an address of the span that libdw would look up in
 * another FDE, or find none for, gets the span's rule; the frames of that file alone.
 */
struct cfi_span {
	uint64_t start, end;
	uint32_t module;
	struct cfi_rule *rule; /* interned */
};

/* Spans of a module kept do not overlap (keep_span merges those that do): a span "equals" any span it
 * overlaps, so a look-up of [a, a + 1) finds the span holding a. */
static int compare_spans(const void *x, const void *y)
{
	const struct cfi_span *a = x, *b = y;

	if (a->module != b->module)
		return a->module < b->module ? -1 : 1;
	if (a->end <= b->start)
		return -1;
	return b->end <= a->start ? 1 : 0;
}

static const struct cfi_span *span_holding(const struct cfi_rules *rules, uint32_t module, uint64_t addr)
{
	struct cfi_span key = { .start = addr, .end = addr + 1, .module = module };
	const struct cfi_span *const *found;

	if (addr == UINT64_MAX)
		return NULL;
	found = tfind(&key, (void *const *)&rules->spans, compare_spans);
	return found ? *found : NULL;
}

/* Keeps the span [start, end) of rule, merged with those it overlaps. */
static void keep_span(struct cfi_rules *rules, uint32_t module, uint64_t start, uint64_t end, struct cfi_rule *rule)
{
	struct cfi_span *span = xmalloc(sizeof(*span)), *const *kept;

	*span = (struct cfi_span){ .start = start, .end = end, .module = module, .rule = rule };
	while ((kept = tfind(span, (void *const *)&rules->spans, compare_spans))) {
		struct cfi_span *old = *kept;

		if (old->rule != rule) { /* cannot be, by the reasoning above: keep what is known */
			free(span);
			return;
		}
		span->start = old->start < span->start ? old->start : span->start;
		span->end = old->end > span->end ? old->end : span->end;
		tdelete(old, &rules->spans, compare_spans);
		free(old);
	}
	tsearch(span, &rules->spans, compare_spans);
}

static uint64_t hash_ops(uint64_t h, const Dwarf_Op *ops, size_t nops)
{
	for (size_t i = 0; i < nops; i++)
		h = (h ^ ops[i].atom ^ ops[i].number * 31 ^ ops[i].number2 * 131 ^ ops[i].offset) * 0x100000001b3ull;
	return h;
}

static uint64_t hash_rule(const struct cfi_rule *r)
{
	uint64_t h = 0xcbf29ce484222325ull;

	h = (h ^ r->cfa_is_expression ^ (uint64_t)r->signal_frame << 1 ^ (uint64_t)r->cfa_reg << 8 ^
	     (uint64_t)r->ra_reg << 16 ^ (uint64_t)r->cfa_offset << 24) * 0x100000001b3ull;
	h = hash_ops(h, r->cfa_ops, r->cfa_nops);
	for (int i = 0; i < CFI_REGS; i++) {
		const struct cfi_reg *c = &r->regs[i];

		h = (h ^ c->kind ^ (uint64_t)c->reg << 8 ^ (uint64_t)c->offset << 16) * 0x100000001b3ull;
		h = hash_ops(h, c->ops, c->nops);
	}
	return h;
}

static bool same_ops(const Dwarf_Op *a, const Dwarf_Op *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].atom != b[i].atom || a[i].number != b[i].number || a[i].number2 != b[i].number2 ||
		    a[i].offset != b[i].offset)
			return false;
	return true;
}

bool cfi_rule_same(const struct cfi_rule *a, const struct cfi_rule *b)
{
	if (a->cfa_is_expression != b->cfa_is_expression || a->signal_frame != b->signal_frame ||
	    a->cfa_reg != b->cfa_reg || a->ra_reg != b->ra_reg || a->cfa_offset != b->cfa_offset ||
	    a->cfa_nops != b->cfa_nops || !same_ops(a->cfa_ops, b->cfa_ops, a->cfa_nops))
		return false;
	for (int i = 0; i < CFI_REGS; i++) {
		const struct cfi_reg *x = &a->regs[i], *y = &b->regs[i];

		if (x->kind != y->kind || x->reg != y->reg || x->offset != y->offset || x->nops != y->nops ||
		    !same_ops(x->ops, y->ops, x->nops))
			return false;
	}
	return true;
}

static struct cfi_rule **rule_slot(struct cfi_rule_set *set, const struct cfi_rule *rule, uint64_t hash)
{
	size_t i = (size_t)(hash >> 7) & (set->cap - 1);

	while (set->rules[i] && !cfi_rule_same(set->rules[i], rule))
		i = (i + 1) & (set->cap - 1);
	return &set->rules[i];
}

/* The shared copy of rule: an equal one already kept (rule is freed), or rule itself, now kept. */
static struct cfi_rule *intern_rule(struct cfi_rule_set *set, struct cfi_rule *rule)
{
	struct cfi_rule **slot;

	if ((set->count + 1) * 2 > set->cap) {
		struct cfi_rule **old = set->rules;
		size_t old_cap = set->cap;

		set->cap = old_cap ? old_cap * 2 : 256;
		set->rules = xcalloc(set->cap, sizeof(*set->rules));
		for (size_t i = 0; i < old_cap; i++)
			if (old[i])
				*rule_slot(set, old[i], hash_rule(old[i])) = old[i];
		free(old);
	}
	slot = rule_slot(set, rule, hash_rule(rule));
	if (*slot) {
		free_rule(rule);
		return *slot;
	}
	set->count++;
	return *slot = rule;
}

static void release_all(struct cfi_rules *rules)
{
	tdestroy(rules->spans, free);
	rules->spans = NULL;
	for (size_t i = 0; rules->set && i < rules->set->cap; i++)
		free_rule(rules->set->rules[i]);
	if (rules->set)
		free(rules->set->rules);
	free(rules->set);
	free(rules->slots);
	rules->set = NULL;
	rules->slots = NULL;
	rules->cap = rules->count = 0;
	rules->generation++;
}

const struct cfi_rule *cfi_rules_find(struct cfi_rules *rules, uint32_t module, struct cfi_source *src,
				      Dwarf_Addr addr)
{
	struct cfi_rule_slot *slot;
	struct cfi_rule *rule;

	rules->lookups++;
	if (rules->count >= CFI_RULES_MAX_SLOTS)
		release_all(rules); /* start over rather than grow without bound */
	if (!rules->set)
		rules->set = xcalloc(1, sizeof(*rules->set));
	if ((rules->count + 1) * 2 > rules->cap)
		grow(rules);
	slot = lookup(rules, module, addr);
	if (slot->used)
		return slot->rule;
	rules->misses++;
	slot->used = true;
	slot->module = module;
	slot->address = addr;
	rules->count++;
	if (src->eh) {
		const struct cfi_span *span = span_holding(rules, module, addr);
		Dwarf_Addr end;

		if (span)
			return slot->rule = span->rule;
		rules->compiled++;
		rule = rule_from(src->eh, addr - src->eh_bias, &end);
		if (rule) {
			slot->rule = intern_rule(rules->set, rule);
			if (end && end + src->eh_bias > addr) /* in module addresses, unless that overflows */
				keep_span(rules, module, addr, end + src->eh_bias, slot->rule);
			return slot->rule;
		}
	}
	if (!src->debug_loaded && src->module) {
		/* Only now, for an address .eh_frame does not cover: this loads the separate debug file. */
		src->debug = dwfl_module_dwarf_cfi(src->module, &src->debug_bias);
		src->debug_loaded = true;
	}
	rule = NULL;
	if (src->debug) {
		Dwarf_Addr end;

		rules->compiled++;
		rule = rule_from(src->debug, addr - src->debug_bias, &end);
	}
	return slot->rule = rule ? intern_rule(rules->set, rule) : NULL;
}

size_t cfi_rules_distinct(const struct cfi_rules *rules)
{
	return rules->set ? rules->set->count : 0;
}

void cfi_rules_release(struct cfi_rules *rules)
{
	release_all(rules);
	memset(rules, 0, sizeof(*rules));
}
