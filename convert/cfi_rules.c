/*
 * cfi_rules.c — compiles libdw's answer for one address into a struct cfi_rule, and keeps it (see
 * cfi_rules.h).
 */
#include "cfi_rules.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

struct cfi_rule_slot {
	uint64_t address;
	uint32_t module;
	bool used;
	struct cfi_rule *rule; /* NULL: no CFI covers the address */
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
	return rule;
bad:
	free_rule(rule);
	return NULL;
}

static struct cfi_rule *rule_from(Dwarf_CFI *cfi, Dwarf_Addr addr)
{
	Dwarf_Frame *frame = NULL;
	struct cfi_rule *rule;

	if (!cfi || dwarf_cfi_addrframe(cfi, addr, &frame) != 0)
		return NULL;
	rule = compile(frame);
	free(frame);
	return rule;
}

const struct cfi_rule *cfi_rules_find(struct cfi_rules *rules, uint32_t module, struct cfi_source *src,
				      Dwarf_Addr addr)
{
	struct cfi_rule_slot *slot;
	struct cfi_rule *rule;

	rules->lookups++;
	if ((rules->count + 1) * 2 > rules->cap)
		grow(rules);
	slot = lookup(rules, module, addr);
	if (slot->used)
		return slot->rule;
	rules->misses++;
	rule = src->eh ? rule_from(src->eh, addr - src->eh_bias) : NULL;
	if (!rule && !src->debug_loaded && src->module) {
		/* Only now, for an address .eh_frame does not cover: this loads the separate debug file. */
		src->debug = dwfl_module_dwarf_cfi(src->module, &src->debug_bias);
		src->debug_loaded = true;
	}
	if (!rule && src->debug)
		rule = rule_from(src->debug, addr - src->debug_bias);
	slot->used = true;
	slot->module = module;
	slot->address = addr;
	slot->rule = rule;
	rules->count++;
	return rule;
}

void cfi_rules_release(struct cfi_rules *rules)
{
	for (size_t i = 0; i < rules->cap; i++)
		if (rules->slots[i].used)
			free_rule(rules->slots[i].rule);
	free(rules->slots);
	memset(rules, 0, sizeof(*rules));
}
