/*
 * die_attributes.h — what the symbolizer reads of a function DIE (its linkage name and name, declaration line,
 * and for an inlined subroutine its call site), in one pass over the attributes of each DIE of its origin chain.
 *
 * dwarf_attr_integrate looks for one attribute at a time: it walks the DIE's attributes, and when the attribute
 * is not there, walks them twice more for DW_AT_abstract_origin and DW_AT_specification, follows the one found,
 * and starts again there. An inlined C++ function's names are two or three DIEs away, so its four attributes
 * took about fifteen walks of a DIE's attributes; those were a twelfth of a cold `stackrec symbolize` on C++.
 * Each attribute is taken from the first DIE of the chain that has it, as dwarf_attr_integrate takes it.
 */
#ifndef STACKREC_CONVERT_DIE_ATTRIBUTES_H
#define STACKREC_CONVERT_DIE_ATTRIBUTES_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

struct die_attributes {
	const char *linkage; /* DW_AT_linkage_name, else DW_AT_MIPS_linkage_name, integrated; NULL: none */
	const char *name;    /* DW_AT_name, integrated */
	uint32_t decl_line;  /* DW_AT_decl_line, integrated; 0: none (or past 32 bits) */
	/* The DIE's own (not integrated): */
	bool has_call_file;
	uint32_t call_file, call_line, call_column; /* 0: none */
};

/*
 * Reads die's attributes into *out; false when they could not be read so (a DWARF error, a unit DIE on the
 * chain): the caller then asks libdw one attribute at a time, as before, which gives libdw's answer.
 */
bool die_attributes_read(Dwarf_Die *die, struct die_attributes *out);

#endif
