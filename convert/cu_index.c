/*
 * cu_index.c — address → compilation unit, with or without .debug_aranges (see cu_index.h for why).
 */
#include "cu_index.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

struct cu_range {
	Dwarf_Addr low, high; /* [low, high) in DWARF addresses */
	Dwarf_Off die_offset; /* the CU DIE */
};

static int compare_ranges(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return x->high < y->high ? -1 : x->high > y->high;
}

int cu_index_build(struct cu_index *index, Dwfl_Module *mod)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t unit_type;
	size_t cap = 0;

	if (index->built)
		return index->dwarf ? 0 : -1;
	index->built = true;
	index->dwarf = dwfl_module_getdwarf(mod, &index->bias);
	if (!index->dwarf)
		return -1;
	while (dwarf_get_units(index->dwarf, cu, &cu, &version, &unit_type, &cudie, &subdie) == 0) {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;

		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial && unit_type != DW_UT_skeleton)
			continue;
		while ((off = dwarf_ranges(&cudie, off, &base, &start, &end)) > 0) {
			if (start >= end)
				continue;
			GROW(index->ranges, cap, index->count + 1);
			index->ranges[index->count++] =
				(struct cu_range){ .low = start, .high = end, .die_offset = dwarf_dieoffset(&cudie) };
		}
	}
	if (index->count)
		sort_array(index->ranges, index->count, sizeof(*index->ranges), compare_ranges);
	return 0;
}

Dwarf_Die *cu_index_addrdie(struct cu_index *index, Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Die *result,
			    Dwarf_Addr *bias)
{
	Dwarf_Die *die = dwfl_module_addrdie(mod, addr, bias);
	Dwarf_Addr dwarf_addr;
	size_t lo = 0, hi;

	if (die) {
		*result = *die;
		return result;
	}
	if (cu_index_build(index, mod) < 0)
		return NULL;
	*bias = index->bias;
	dwarf_addr = addr - index->bias;
	/* The last range starting at or before the address; ranges rarely nest, so look back a little. */
	hi = index->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (index->ranges[mid].low <= dwarf_addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && lo - i <= 8;) {
		if (dwarf_addr < index->ranges[i].high)
			return dwarf_offdie(index->dwarf, index->ranges[i].die_offset, result);
	}
	return NULL;
}

void cu_index_release(struct cu_index *index)
{
	free(index->ranges);
	memset(index, 0, sizeof(*index));
}
