/*
 * symbol_table.c — libdwfl's symbol choice from symbols sorted once (see symbol_table.h).
 *
 * The rules are those of libdwfl's __libdwfl_addrsym (dwfl_module_addrsym.c): of the symbols at or below the
 * address that have a name, a section and are no section, file or TLS symbol, first the globals, then — when no
 * global was chosen — the locals; a symbol with a size is a candidate when it covers the address, and
 * replaces the one chosen so far when it starts higher, binds more strongly (global, weak, local), or starts
 * at the same address and is smaller without binding more weakly (or as small and binding more strongly).
 * Candidates are found from the sorted symbols and the largest end up to each position, and then tried in
 * table order, as libdwfl tries them, so ties go the same way.
 */
#include "symbol_table.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

struct symbol_table_entry {
	GElf_Addr value; /* the symbol's address in the module */
	GElf_Sym sym;
	const char *name;
	GElf_Word shndx; /* its section, extended indices resolved */
	int index;	 /* in the table */
};

static int compare_entries(const void *a, const void *b)
{
	const struct symbol_table_entry *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

static int compare_index(const void *a, const void *b)
{
	const struct symbol_table_entry *const *x = a, *const *y = b;

	return ((*x)->index > (*y)->index) - ((*x)->index < (*y)->index);
}

static int compare_addr(const void *a, const void *b)
{
	const GElf_Addr *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

/* Sorts entries by address and fills ends with the largest end up to each position. */
static GElf_Addr *sort_with_ends(struct symbol_table_entry *entries, size_t count)
{
	GElf_Addr *ends = xmalloc((count ? count : 1) * sizeof(*ends)), max = 0;

	sort_array(entries, count, sizeof(*entries), compare_entries);
	for (size_t i = 0; i < count; i++) {
		GElf_Addr end = entries[i].value + entries[i].sym.st_size;

		if (end < entries[i].value)
			end = UINT64_MAX; /* wrapped: covers everything above */
		if (end > max)
			max = end;
		ends[i] = max;
	}
	return ends;
}

static void build(struct symbol_table *t, Dwfl_Module *mod)
{
	int count = dwfl_module_getsymtab(mod), first_global = dwfl_module_getsymtab_first_global(mod);
	size_t global_cap = 0, local_cap = 0, sizeless_cap = 0;
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr ehdr_mem, *ehdr = elf ? gelf_getehdr(elf, &ehdr_mem) : NULL;

	t->built = true;
	/* ppc64's function descriptors make libdwfl try a second value per symbol: leave those to it. */
	if (count < 0 || first_global < 0 || !ehdr || ehdr->e_machine == EM_PPC64 || ehdr->e_type == ET_REL)
		return;
	for (int i = 1; i < count; i++) {
		struct symbol_table_entry e = { .index = i };
		int type;

		e.name = dwfl_module_getsym_info(mod, i, &e.sym, &e.value, &e.shndx, NULL, NULL);
		type = GELF_ST_TYPE(e.sym.st_info);
		if (!e.name || !e.name[0] || e.sym.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE ||
		    type == STT_TLS)
			continue;
		if (first_global > 1 && i < first_global) {
			GROW(t->locals, local_cap, t->local_count + 1);
			t->locals[t->local_count++] = e;
		} else {
			GROW(t->globals, global_cap, t->global_count + 1);
			t->globals[t->global_count++] = e;
			if (!e.sym.st_size) {
				GROW(t->sizeless_globals, sizeless_cap, t->sizeless_global_count + 1);
				t->sizeless_globals[t->sizeless_global_count++] = e.value;
			}
		}
	}
	t->global_ends = sort_with_ends(t->globals, t->global_count);
	t->local_ends = sort_with_ends(t->locals, t->local_count);
	sort_array(t->sizeless_globals, t->sizeless_global_count, sizeof(*t->sizeless_globals), compare_addr);
	t->usable = true;
}

static int binding_value(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

/* Whether s replaces the symbol chosen so far (NULL: none), by libdwfl's rules for symbols with a size. */
static bool better(const struct symbol_table_entry *best, const struct symbol_table_entry *s)
{
	if (!best || best->value < s->value || binding_value(&best->sym) < binding_value(&s->sym))
		return true;
	return best->value == s->value &&
	       ((best->sym.st_size > s->sym.st_size && binding_value(&best->sym) <= binding_value(&s->sym)) ||
		(best->sym.st_size >= s->sym.st_size && binding_value(&best->sym) < binding_value(&s->sym)));
}

/* The symbol with a size covering addr that libdwfl chooses among entries, or NULL when none covers it. */
static const struct symbol_table_entry *covering(const struct symbol_table_entry *entries, const GElf_Addr *ends,
						 size_t count, GElf_Addr addr)
{
	const struct symbol_table_entry *best = NULL, **found = NULL;
	size_t lo = UPPER_BOUND(entries, count, value, addr), n = 0, cap = 0;

	for (size_t j = lo; j-- > 0 && ends[j] > addr;) { /* below j no symbol reaches addr */
		const struct symbol_table_entry *e = &entries[j];

		if (e->sym.st_size && addr - e->value < e->sym.st_size) {
			GROW(found, cap, n + 1);
			found[n++] = e;
		}
	}
	sort_array(found, n, sizeof(*found), compare_index); /* tried in table order, as libdwfl does */
	for (size_t i = 0; i < n; i++)
		if (better(best, found[i]))
			best = found[i];
	free(found);
	return best;
}

/* The one allocated section of the main file that holds module address addr: 0 when none, -1 when several
 * overlap (libdwfl's choice between them is not ours to guess). */
static long section_of(Dwfl_Module *mod, GElf_Addr addr)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;
	long found = 0;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);

		if (!sh || !(sh->sh_flags & SHF_ALLOC) || addr < sh->sh_addr + bias ||
		    addr - (sh->sh_addr + bias) >= sh->sh_size)
			continue;
		if (found)
			return -1;
		found = (long)elf_ndxscn(scn);
	}
	return found;
}

/*
 * The size-less symbol libdwfl falls back on when no symbol with a size covers addr. It keeps the last one,
 * in table order, that starts at or above the end of every symbol before it and lies in addr's section, and
 * uses it only when it starts at or above the end of every symbol at or below addr: so the answer starts
 * exactly at M, the highest end of those symbols, and is the last size-less symbol at M in table order (the
 * locals come after the globals). *ask_libdwfl is set where that is not certain: a candidate that is absolute
 * or in another section, or an address in no section or in several.
 */
static const struct symbol_table_entry *sizeless(const struct symbol_table *t, Dwfl_Module *mod, GElf_Addr addr,
						 bool *ask_libdwfl)
{
	size_t g = UPPER_BOUND(t->globals, t->global_count, value, addr);
	size_t l = UPPER_BOUND(t->locals, t->local_count, value, addr);
	const struct symbol_table_entry *best = NULL;
	long addr_section = -2;
	GElf_Addr m = 0;
	int best_pass = 0;

	*ask_libdwfl = false;
	if (g)
		m = t->global_ends[g - 1];
	if (l && t->local_ends[l - 1] > m)
		m = t->local_ends[l - 1];
	for (int pass = 0; pass < 2; pass++) {
		const struct symbol_table_entry *entries = pass ? t->globals : t->locals;

		for (size_t j = pass ? g : l; j-- > 0 && entries[j].value == m;) {
			const struct symbol_table_entry *e = &entries[j];

			if (e->sym.st_size)
				continue;
			if (addr_section == -2)
				addr_section = section_of(mod, addr);
			if (e->shndx >= SHN_LORESERVE || addr_section <= 0 || section_of(mod, e->value) != addr_section) {
				*ask_libdwfl = true;
				return NULL;
			}
			if (!best || (pass == best_pass && e->index > best->index)) {
				best = e; /* the last in table order; a local (pass 0) over any global */
				best_pass = pass;
			}
		}
	}
	return best;
}

const char *symbol_table_addrinfo(struct symbol_table *t, Dwfl_Module *mod, GElf_Addr addr, GElf_Sym *sym)
{
	const struct symbol_table_entry *best;
	GElf_Off offset;

	if (!t->built)
		build(t, mod);
	if (!t->usable)
		return dwfl_module_addrinfo(mod, addr, &offset, sym, NULL, NULL, NULL);
	best = covering(t->globals, t->global_ends, t->global_count, addr);
	if (!best) {
		/* A global size-less symbol exactly at addr may stop libdwfl before the locals: let it decide. */
		if (t->sizeless_global_count && bsearch(&addr, t->sizeless_globals, t->sizeless_global_count,
							sizeof(addr), compare_addr))
			return dwfl_module_addrinfo(mod, addr, &offset, sym, NULL, NULL, NULL);
		best = covering(t->locals, t->local_ends, t->local_count, addr);
	}
	if (!best) {
		bool ask_libdwfl;

		best = sizeless(t, mod, addr, &ask_libdwfl);
		if (ask_libdwfl)
			return dwfl_module_addrinfo(mod, addr, &offset, sym, NULL, NULL, NULL);
	}
	if (!best)
		return NULL;
	*sym = best->sym;
	return best->name;
}

void symbol_table_release(struct symbol_table *t)
{
	free(t->globals);
	free(t->locals);
	free(t->global_ends);
	free(t->local_ends);
	free(t->sizeless_globals);
	memset(t, 0, sizeof(*t));
}
