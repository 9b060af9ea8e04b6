/*
 * die_attributes.c — a function DIE's names, declaration line and call site in one pass over each DIE of its
 * origin chain (see die_attributes.h).
 *
 * The chain is dwarf_attr_integrate's (elfutils libdw/dwarf_attr_integrate.c): from a DIE without the
 * attribute, its DW_AT_abstract_origin, else its DW_AT_specification, at most 16 DIEs in all. It does not
 * depend on the attribute looked for, so one walk of it answers every attribute: each is the first DIE's of
 * the chain that has it, its first occurrence there (dwarf_attr's). dwarf_attr_integrate goes on from a split
 * unit's DIE to its skeleton unit: a function's chain never reaches a unit DIE, and one that does is left to
 * libdw.
 */
#include "die_attributes.h"

#include <dwarf.h>

#define MAX_CHAIN 16 /* dwarf_attr_integrate's */

enum which {
	LINKAGE,
	MIPS_LINKAGE,
	NAME,
	DECL_LINE,
	ORIGIN,
	SPECIFICATION,
	CALL_FILE,
	CALL_LINE,
	CALL_COLUMN,
	WHICH_COUNT,
};

/* The attributes of one DIE that are looked for, each its first occurrence. */
struct found {
	Dwarf_Attribute attr[WHICH_COUNT];
	unsigned int mask; /* 1 << which: found */
};

static int note_attribute(Dwarf_Attribute *attr, void *arg)
{
	struct found *f = arg;
	enum which w;

	switch (dwarf_whatattr(attr)) {
	case DW_AT_linkage_name: w = LINKAGE; break;
	case DW_AT_MIPS_linkage_name: w = MIPS_LINKAGE; break;
	case DW_AT_name: w = NAME; break;
	case DW_AT_decl_line: w = DECL_LINE; break;
	case DW_AT_abstract_origin: w = ORIGIN; break;
	case DW_AT_specification: w = SPECIFICATION; break;
	case DW_AT_call_file: w = CALL_FILE; break;
	case DW_AT_call_line: w = CALL_LINE; break;
	case DW_AT_call_column: w = CALL_COLUMN; break;
	default: return DWARF_CB_OK;
	}
	if (!(f->mask & (1u << w))) {
		f->attr[w] = *attr;
		f->mask |= 1u << w;
	}
	return DWARF_CB_OK;
}

static bool is_unit(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_compile_unit || tag == DW_TAG_partial_unit || tag == DW_TAG_type_unit ||
	       tag == DW_TAG_skeleton_unit;
}

/* An attribute's unsigned value as die_udata in symbolizer.c reads it: 0 when it is none or past 32 bits. */
static uint32_t udata(Dwarf_Attribute *attr)
{
	Dwarf_Word value;

	if (dwarf_formudata(attr, &value) != 0)
		return 0;
	return value > UINT32_MAX ? 0 : (uint32_t)value;
}

bool die_attributes_read(Dwarf_Die *die, struct die_attributes *out)
{
	Dwarf_Attribute integrated[DECL_LINE + 1]; /* LINKAGE .. DECL_LINE: from the first DIE that has each */
	unsigned int have = 0;
	bool linkage_known = false; /* DW_AT_linkage_name found, a string */
	Dwarf_Die at = *die, next;

	*out = (struct die_attributes){ 0 };
	for (int hop = 0; hop < MAX_CHAIN; hop++) {
		struct found f = { .mask = 0 };
		Dwarf_Attribute *ref;

		if (is_unit(&at) || dwarf_getattrs(&at, note_attribute, &f, 0) != 1)
			return false;
		for (int w = LINKAGE; w <= DECL_LINE; w++) {
			if ((f.mask & (1u << w)) && !(have & (1u << w))) {
				integrated[w] = f.attr[w];
				have |= 1u << w;
			}
		}
		if (hop == 0) {
			out->has_call_file = f.mask & (1u << CALL_FILE);
			out->call_file = out->has_call_file ? udata(&f.attr[CALL_FILE]) : 0;
			out->call_line = f.mask & (1u << CALL_LINE) ? udata(&f.attr[CALL_LINE]) : 0;
			out->call_column = f.mask & (1u << CALL_COLUMN) ? udata(&f.attr[CALL_COLUMN]) : 0;
		}
		if (!linkage_known && (have & (1u << LINKAGE)))
			linkage_known = dwarf_formstring(&integrated[LINKAGE]) != NULL;
		if ((have & (1u << NAME)) && (have & (1u << DECL_LINE)) &&
		    (linkage_known || (have & (1u << MIPS_LINKAGE))))
			break; /* all found (DW_AT_MIPS_linkage_name is asked only without another): the rest of the
				* chain cannot change them */
		ref = f.mask & (1u << ORIGIN) ? &f.attr[ORIGIN] : f.mask & (1u << SPECIFICATION) ? &f.attr[SPECIFICATION] : NULL;
		if (!ref || !dwarf_formref_die(ref, &next))
			break;
		at = next;
	}
	if (have & (1u << LINKAGE))
		out->linkage = dwarf_formstring(&integrated[LINKAGE]);
	if (!out->linkage && (have & (1u << MIPS_LINKAGE)))
		out->linkage = dwarf_formstring(&integrated[MIPS_LINKAGE]);
	if (have & (1u << NAME))
		out->name = dwarf_formstring(&integrated[NAME]);
	if (have & (1u << DECL_LINE))
		out->decl_line = udata(&integrated[DECL_LINE]);
	return true;
}
