/*
 * elf_symbols.c — a module's ELF symbol table sorted by address (see elf_symbols.h).
 */
#include "elf_symbols.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

struct elf_symbol {
	GElf_Addr value; /* as dwfl_module_getsym_info resolves it: a Dwfl address */
	GElf_Sym sym;
	const char *name;
	GElf_Word shndx;
	uint32_t index;	  /* in the table: the last tie-break, as libdwfl keeps the first it finds */
	uint8_t global;	  /* in the table's global part (libdwfl's first pass) */
	uint8_t binding;  /* higher is preferred: global 3, weak 2, local 1 */
};

struct elf_section_range {
	GElf_Addr low, high; /* Dwfl addresses */
	GElf_Word index;
};

static int binding_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

static int by_value(const void *a, const void *b)
{
	const struct elf_symbol *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int by_low(const void *a, const void *b)
{
	const struct elf_section_range *x = a, *y = b;

	return x->low < y->low ? -1 : x->low > y->low;
}

static void build_sections(struct elf_symbols *t, Dwfl_Module *mod)
{
	Dwarf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	if (!elf)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);

		if (!sh || !(sh->sh_flags & SHF_ALLOC) || !sh->sh_size || sh->sh_addr + sh->sh_size < sh->sh_addr)
			continue;
		if (t->section_count == cap) {
			cap = cap ? 2 * cap : 32;
			t->sections = xrealloc(t->sections, cap * sizeof(*t->sections));
		}
		t->sections[t->section_count++] = (struct elf_section_range){
			.low = sh->sh_addr + bias, .high = sh->sh_addr + sh->sh_size + bias, .index = (GElf_Word)elf_ndxscn(scn)
		};
	}
	if (t->section_count)
		qsort(t->sections, t->section_count, sizeof(*t->sections), by_low);
}

static void build(struct elf_symbols *t, Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	int first_global = dwfl_module_getsymtab_first_global(mod);

	t->built = true;
	if (n <= 1)
		return;
	if (first_global <= 0)
		first_global = 1; /* only a dynamic symbol table read through the program headers: all one pass */
	t->symbols = xcalloc((size_t)n, sizeof(*t->symbols));
	for (int i = 1; i < n; i++) {
		struct elf_symbol s = { .index = (uint32_t)i, .global = i >= first_global };
		int type;

		s.name = dwfl_module_getsym_info(mod, i, &s.sym, &s.value, &s.shndx, NULL, NULL);
		type = GELF_ST_TYPE(s.sym.st_info);
		if (!s.name || !s.name[0] || s.sym.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE ||
		    type == STT_TLS)
			continue;
		s.binding = (uint8_t)binding_rank(&s.sym);
		t->symbols[t->count++] = s;
	}
	if (!t->count)
		return;
	qsort(t->symbols, t->count, sizeof(*t->symbols), by_value);
	t->max_end = xcalloc(t->count, sizeof(*t->max_end));
	for (size_t i = 0; i < t->count; i++) {
		GElf_Addr end = t->symbols[i].value + t->symbols[i].sym.st_size;

		if (end < t->symbols[i].value)
			end = UINT64_MAX; /* a hostile size wraps: it covers everything above */
		t->max_end[i] = i && t->max_end[i - 1] > end ? t->max_end[i - 1] : end;
	}
	build_sections(t, mod);
}

/* The index of the allocated section holding addr, SHN_ABS for none (libdwfl's answer then). */
static GElf_Word section_of(const struct elf_symbols *t, GElf_Addr addr)
{
	size_t lo = 0, hi = t->section_count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->sections[mid].low <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Sections may overlap (.tbss): look back over every one starting at or below addr. */
	for (size_t i = lo; i-- > 0;)
		if (addr < t->sections[i].high)
			return t->sections[i].index;
	return SHN_ABS;
}

/* Whether candidate c is preferred to the best so far (NULL: always). */
static bool better(const struct elf_symbol *c, const struct elf_symbol *best)
{
	if (!best)
		return true;
	if (c->global != best->global)
		return c->global;
	if (c->binding != best->binding)
		return c->binding > best->binding;
	if (c->value != best->value)
		return c->value > best->value;
	if (c->sym.st_size != best->sym.st_size)
		return c->sym.st_size < best->sym.st_size;
	return c->index < best->index;
}

const char *elf_symbols_lookup(struct elf_symbols *t, Dwfl_Module *mod, GElf_Addr addr, GElf_Sym *symbol)
{
	const struct elf_symbol *best = NULL, *label = NULL;
	size_t lo = 0, hi;

	memset(symbol, 0, sizeof(*symbol));
	if (!t->built)
		build(t, mod);
	hi = t->count;
	while (lo < hi) { /* lo: the first symbol above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (t->symbols[mid].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* Every symbol covering addr lies where the running maximum end is still above addr. */
	for (size_t i = lo; i-- > 0 && t->max_end[i] > addr;) {
		const struct elf_symbol *s = &t->symbols[i];

		if (s->sym.st_size && addr - s->value < s->sym.st_size && better(s, best))
			best = s;
	}
	if (!best) {
		GElf_Addr min_label = t->max_end[lo - 1];
		GElf_Word addr_section = SHN_UNDEF;

		for (size_t i = lo; i-- > 0 && t->symbols[i].value >= min_label;) {
			const struct elf_symbol *s = &t->symbols[i];

			if (s->sym.st_size)
				continue;
			if (s->shndx >= SHN_LORESERVE) {
				if (s->value != addr)
					continue;
			} else {
				if (addr_section == SHN_UNDEF)
					addr_section = section_of(t, addr);
				if (s->shndx != addr_section)
					continue;
			}
			if (!label || (s->value == label->value && better(s, label)))
				label = s;
		}
		best = label;
	}
	if (!best)
		return NULL;
	*symbol = best->sym;
	return best->name;
}

void elf_symbols_release(struct elf_symbols *t)
{
	free(t->symbols);
	free(t->max_end);
	free(t->sections);
	memset(t, 0, sizeof(*t));
}
