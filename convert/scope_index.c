/*
 * scope_index.c — a unit's scope tree, walked once, answering dwarf_getscopes' question (see scope_index.h).
 *
 * The walk follows libdw's __libdw_visit_scopes with dwarf_getscopes' pruning: a DIE is kept when
 * dwarf_ranges gives it a non-empty range (dwarf_haspc could match it), and its children are walked when it is
 * kept and is a kind of DIE that may hold scopes. Nodes are kept in that visiting order with parent, first
 * child and next sibling links, so that "the first child containing pc" is the one libdw would find.
 *
 * Unlike dwarf_getscopes, a namespace, class or structure (which has no address of its own) is walked
 * through: its children are taken as its parent's. clang puts a C++ function defined in a namespace there,
 * and rustc nearly every function; pruned with their namespace, such functions had no scope, so their
 * inlined frames were lost and the function took its innermost inlinee's line (addr2line and
 * llvm-symbolizer walk through them too).
 */
#include "scope_index.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

#define NO_NODE UINT32_MAX
#define MAX_DEPTH 512 /* deeper than any compiler nests scopes: such a unit is left to libdw */

struct scope_node {
	Dwarf_Die die;
	uint32_t first_range, range_count; /* into scope_unit.ranges */
	uint32_t parent, first_child, next_sibling;
	uint32_t sorted_first, sorted_count; /* its children's ranges by address in scope_unit.sorted (sort_children) */
	uint16_t depth;	 /* 0 for the unit's children; at most MAX_DEPTH */
	bool expanded;	 /* its children were walked (first_child is then final) */
};

struct scope_range {
	Dwarf_Addr low, high;
	uint32_t node;
};

struct scope_unit {
	void *key;	     /* the unit DIE's address in the DWARF data */
	Dwarf_Die cudie;
	bool failed;	     /* libdw could not walk it: callers ask libdw */
	bool too_big;	     /* ... or it took more than SCOPE_VISITS_MAX steps: no one is asked */
	uint64_t visits;     /* DIEs walked over */
	struct scope_node *nodes;
	size_t node_count, node_capacity;
	struct scope_range *ranges; /* each node's ranges, by node */
	size_t range_count, range_capacity;
	uint32_t first_top;	    /* the first child of the unit DIE */
	struct scope_range *top;    /* the top level's ranges sorted by address, when they do not overlap */
	size_t top_count;
	uint32_t *sorted;	    /* indexes into ranges: each sorted group of children (sort_children) */
	size_t sorted_count, sorted_capacity;
};

/*
 * The most DIEs one unit's walk may step over. Imported units may import one unit many times over: two
 * imports of the next unit, forty deep, is 2^40 walks of a file of a few KB. Real units have a few million
 * DIEs at most; libdw's walk has the same fan-out, so such a unit gets no scopes at all.
 */
#define SCOPE_VISITS_MAX (1u << 24)

/* Children of one scope, from how many ranges on, are searched by address rather than one after another. */
#define SORTED_MIN_RANGES 4 /* on cxxwork: 8 took 1.2% more instructions, 2 1% fewer (libc: 0.2% more) */

static bool may_have_scopes(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_entry_point:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
		return true;
	default:
		return false;
	}
}

/* One level being walked: the children of parent (NO_NODE: the unit's), at depth. */
struct walk {
	struct scope_index *index;
	struct scope_unit *unit;
	uint32_t parent, depth;
	uint32_t last_child; /* the last node kept, to link its next sibling */
	uint32_t nesting;    /* namespaces, classes and imported units walked through at this level */
};

/* A DIE without addresses whose children may have them: walked through (see the top of this file). */
static bool walked_through(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type;
}

static bool has_address_attribute(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges) ||
	       dwarf_hasattr(die, DW_AT_abstract_origin) || dwarf_hasattr(die, DW_AT_specification);
}

/*
 * Most DIEs (types, members, variables) have no address attribute of their own or through an origin:
 * dwarf_ranges would give them none, found faster from the abbreviation alone. Which attributes a DIE has is
 * its abbreviation's: asked once per abbreviation (die->abbrev, which dwarf_tag has read), as a unit's top
 * level has thousands of DIEs and a few dozen abbreviations.
 */
static bool may_have_ranges(struct scope_index *index, Dwarf_Die *die)
{
	const Dwarf_Abbrev *abbrev = die->abbrev;
	bool added;
	size_t n;

	if (!abbrev || abbrev == (const Dwarf_Abbrev *)-1l) /* not read, or libdw's "none" */
		return has_address_attribute(die);
	n = pointer_table_add(&index->abbrevs, abbrev, &added);
	if (added) {
		GROW(index->may_have_ranges, index->may_have_ranges_capacity, n + 1);
		index->may_have_ranges[n] = has_address_attribute(die);
	}
	return index->may_have_ranges[n];
}

/* Keeps die as a child of w->parent when it has ranges. -1 on a DWARF error. */
static int keep(struct walk *w, Dwarf_Die *die)
{
	struct scope_unit *u = w->unit;
	size_t first = u->range_count;
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	uint32_t node;

	if (!may_have_ranges(w->index, die))
		return 0;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (start >= end)
			continue;
		GROW(u->ranges, u->range_capacity, u->range_count + 1);
		u->ranges[u->range_count++] = (struct scope_range){ .low = start, .high = end };
	}
	/* libdw passes over a missing .debug_ranges and fails on other errors; its error numbers are not public,
	 * so any error leaves the unit to libdw, which then gives its own answer. */
	if (off < 0 && dwarf_errno() != 0) {
		u->range_count = first;
		return -1;
	}
	if (u->range_count == first)
		return 0;
	if (u->node_count >= UINT32_MAX - 1)
		return -1;
	node = (uint32_t)u->node_count;
	GROW(u->nodes, u->node_capacity, u->node_count + 1);
	u->nodes[u->node_count++] = (struct scope_node){ .die = *die, .first_range = (uint32_t)first,
							 .range_count = (uint32_t)(u->range_count - first),
							 .parent = w->parent, .first_child = NO_NODE,
							 .next_sibling = NO_NODE, .sorted_first = NO_NODE,
							 .depth = (uint16_t)w->depth };
	for (size_t i = first; i < u->range_count; i++)
		u->ranges[i].node = node;
	if (w->last_child != NO_NODE)
		u->nodes[w->last_child].next_sibling = node;
	else if (w->parent != NO_NODE)
		u->nodes[w->parent].first_child = node;
	else
		u->first_top = node;
	w->last_child = node;
	return 0;
}

static int walk_children(struct walk *w, Dwarf_Die *first);

/* The children of die, an imported unit's (DW_AT_import) or die's own, walked as w's. */
static int walk_through(struct walk *w, Dwarf_Die *die, bool imported_unit)
{
	Dwarf_Die inner;
	Dwarf_Attribute attr;
	int ret = 0;

	if (imported_unit && !dwarf_formref_die(dwarf_attr(die, DW_AT_import, &attr), &inner))
		return 0;
	if (dwarf_child(imported_unit ? &inner : die, &inner) != 0)
		return 0;
	if (w->nesting >= MAX_DEPTH) /* a hostile file's nesting: the unit is left to libdw */
		return -1;
	w->nesting++;
	ret = walk_children(w, &inner);
	w->nesting--;
	return ret;
}

/* first and its siblings; an imported unit's children, and a namespace's, class's or structure's, are walked
 * in its place (libdw does so for an imported unit). */
static int walk_children(struct walk *w, Dwarf_Die *first)
{
	Dwarf_Die child = *first;
	int ret;

	do {
		int tag = dwarf_tag(&child);

		if (++w->unit->visits > SCOPE_VISITS_MAX) {
			w->unit->too_big = true;
			return -1;
		}
		if (tag == DW_TAG_imported_unit || walked_through(tag)) {
			if (walk_through(w, &child, tag == DW_TAG_imported_unit) < 0)
				return -1;
		} else if (keep(w, &child) < 0) {
			return -1;
		}
	} while ((ret = dwarf_siblingof(&child, &child)) == 0);
	return ret < 0 ? -1 : 0;
}

/* The children of die, a child of parent (NO_NODE: die is the unit) at depth - 1. */
static int walk_die(struct scope_index *index, struct scope_unit *u, Dwarf_Die *die, uint32_t parent,
		    uint32_t depth)
{
	struct walk w = { .index = index, .unit = u, .parent = parent, .depth = depth, .last_child = NO_NODE };
	Dwarf_Die child;
	int ret;

	if (depth > MAX_DEPTH)
		return -1;
	ret = dwarf_child(die, &child);
	if (ret != 0)
		return ret < 0 ? -1 : 0;
	return walk_children(&w, &child);
}

struct range_by_address {
	Dwarf_Addr low;
	uint32_t range; /* its index in scope_unit.ranges: ranges are added in node order */
};

static int compare_by_address(const void *a, const void *b)
{
	const struct range_by_address *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return x->range < y->range ? -1 : x->range > y->range;
}

/*
 * Node n's children, whose ranges are ranges[first, end) (a scope's children are walked, and added, one after
 * another), sorted by address for a binary search (sorted_child_containing) when there are several and no two of
 * those ranges overlap: then at most one child contains an address, the one the walk through all of them finds.
 * Functions with many inlined calls have dozens of children, and going through all of them at every level of
 * every address's chain was a tenth of a cold `stackrec symbolize` on C++. Where ranges overlap, which child
 * comes first in the DWARF decides (innermost), and the children stay searched one after another.
 */
static void sort_children(struct scope_unit *u, uint32_t n, size_t first, size_t end)
{
	size_t count = end - first;
	struct range_by_address *by_address;
	Dwarf_Addr high = 0;

	if (count < SORTED_MIN_RANGES || u->sorted_count + count > UINT32_MAX)
		return;
	by_address = xmalloc(count * sizeof(*by_address));
	for (size_t i = 0; i < count; i++)
		by_address[i] = (struct range_by_address){ .low = u->ranges[first + i].low, .range = (uint32_t)(first + i) };
	sort_array(by_address, count, sizeof(*by_address), compare_by_address);
	for (size_t i = 0; i < count; i++) {
		const struct scope_range *r = &u->ranges[by_address[i].range];

		if (i && r->low < high) {
			free(by_address);
			return; /* overlapping ranges, even of one child: searched in DWARF order */
		}
		if (r->high > high)
			high = r->high;
	}
	GROW(u->sorted, u->sorted_capacity, u->sorted_count + count);
	u->nodes[n].sorted_first = (uint32_t)u->sorted_count;
	u->nodes[n].sorted_count = (uint32_t)count;
	for (size_t i = 0; i < count; i++)
		u->sorted[u->sorted_count++] = by_address[i].range;
	free(by_address);
}

/*
 * Walks node n's children the first time the chain passes through it: of a unit's scopes, most are never
 * on the way to an address asked (a profile's addresses are a few per function), and walking them all was
 * most of the index's cost. Children are kept in the order libdw visits them, as a whole walk would. -1 on
 * a DWARF error: the unit is then left to libdw.
 */
static int expand(struct scope_index *index, struct scope_unit *u, uint32_t n)
{
	Dwarf_Die die;
	size_t first = u->range_count;

	if (u->nodes[n].expanded)
		return 0;
	u->nodes[n].expanded = true;
	die = u->nodes[n].die;
	if (!may_have_scopes(dwarf_tag(&die)) || !dwarf_haschildren(&die))
		return 0;
	if (walk_die(index, u, &die, n, u->nodes[n].depth + 1u) < 0)
		return -1;
	sort_children(u, n, first, u->range_count);
	return 0;
}

static int compare_ranges(const void *a, const void *b)
{
	const struct scope_range *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* The top level sorted by address, for a binary search, unless two of its nodes overlap: then which comes
 * first in the DWARF decides, and the search goes through them in order. */
static void sort_top(struct scope_unit *u)
{
	for (uint32_t n = u->first_top; n != NO_NODE; n = u->nodes[n].next_sibling)
		u->top_count += u->nodes[n].range_count;
	u->top = xmalloc((u->top_count ? u->top_count : 1) * sizeof(*u->top));
	u->top_count = 0;
	for (uint32_t n = u->first_top; n != NO_NODE; n = u->nodes[n].next_sibling)
		for (uint32_t r = 0; r < u->nodes[n].range_count; r++)
			u->top[u->top_count++] = u->ranges[u->nodes[n].first_range + r];
	sort_array(u->top, u->top_count, sizeof(*u->top), compare_ranges);
	for (size_t i = 1; i < u->top_count; i++) {
		if (u->top[i].low < u->top[i - 1].high && u->top[i].node != u->top[i - 1].node) {
			free(u->top);
			u->top = NULL;
			u->top_count = 0;
			return;
		}
	}
}

static struct scope_unit *unit_build(struct scope_index *index, Dwarf_Die *cudie)
{
	struct scope_unit *u = xcalloc(1, sizeof(*u));

	u->key = cudie->addr;
	u->cudie = *cudie;
	u->first_top = NO_NODE;
	if (walk_die(index, u, cudie, NO_NODE, 0) < 0) {
		u->failed = true;
		free(u->nodes);
		free(u->ranges);
		u->nodes = NULL;
		u->ranges = NULL;
	} else {
		sort_top(u);
	}
	return u;
}

static size_t slot_of(const struct scope_index *index, const void *key)
{
	return address_hash((uintptr_t)key) & (index->capacity - 1);
}

static struct scope_unit *unit_of(struct scope_index *index, Dwarf_Die *cudie)
{
	size_t i;

	if (index->capacity) {
		for (i = slot_of(index, cudie->addr); index->units[i]; i = (i + 1) & (index->capacity - 1))
			if (index->units[i]->key == cudie->addr)
				return index->units[i];
	}
	if (2 * (index->count + 1) > index->capacity) {
		struct scope_unit **old = index->units;
		size_t old_capacity = index->capacity;

		index->capacity = old_capacity ? 2 * old_capacity : 64;
		index->units = xcalloc(index->capacity, sizeof(*index->units));
		for (size_t j = 0; j < old_capacity; j++) {
			if (!old[j])
				continue;
			for (i = slot_of(index, old[j]->key); index->units[i]; i = (i + 1) & (index->capacity - 1))
				;
			index->units[i] = old[j];
		}
		free(old);
	}
	for (i = slot_of(index, cudie->addr); index->units[i]; i = (i + 1) & (index->capacity - 1))
		;
	index->units[i] = unit_build(index, cudie);
	index->count++;
	return index->units[i];
}

static bool node_has(const struct scope_unit *u, uint32_t n, Dwarf_Addr pc)
{
	const struct scope_node *node = &u->nodes[n];

	for (uint32_t r = 0; r < node->range_count; r++) {
		const struct scope_range *range = &u->ranges[node->first_range + r];

		if (pc >= range->low && pc < range->high)
			return true;
	}
	return false;
}

/* The first of n and its next siblings that contains pc, or NO_NODE. */
static uint32_t first_containing(const struct scope_unit *u, uint32_t n, Dwarf_Addr pc)
{
	for (; n != NO_NODE; n = u->nodes[n].next_sibling)
		if (node_has(u, n, pc))
			return n;
	return NO_NODE;
}

static uint32_t top_containing(const struct scope_unit *u, Dwarf_Addr pc)
{
	size_t i;

	if (!u->top)
		return first_containing(u, u->first_top, pc);
	i = UPPER_BOUND(u->top, u->top_count, low, pc); /* the last range starting at or before pc: i - 1 */
	return i && pc < u->top[i - 1].high ? u->top[i - 1].node : NO_NODE;
}

/* The child of node n containing pc, by its children's sorted ranges (sort_children: they do not overlap). */
static uint32_t sorted_child_containing(const struct scope_unit *u, uint32_t n, Dwarf_Addr pc)
{
	const uint32_t *sorted = u->sorted + u->nodes[n].sorted_first;
	size_t lo = 0, hi = u->nodes[n].sorted_count;

	while (lo < hi) { /* the last range starting at or before pc: lo - 1 */
		size_t mid = lo + (hi - lo) / 2;

		if (u->ranges[sorted[mid]].low <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < u->ranges[sorted[lo - 1]].high ? u->ranges[sorted[lo - 1]].node : NO_NODE;
}

static int innermost(struct scope_index *index, struct scope_unit *u, uint32_t n, Dwarf_Addr pc, uint32_t *best,
		     unsigned *inlined);

/*
 * innermost() under the children of node n (expanded): through the one child containing pc when they are
 * sorted, else through each of them.
 */
static int innermost_child(struct scope_index *index, struct scope_unit *u, uint32_t n, Dwarf_Addr pc,
			   uint32_t *best, unsigned *inlined)
{
	uint32_t child, inner;
	unsigned below;

	if (u->nodes[n].sorted_first == NO_NODE)
		return innermost(index, u, u->nodes[n].first_child, pc, best, inlined);
	*best = NO_NODE;
	*inlined = 0;
	child = sorted_child_containing(u, n, pc);
	if (child == NO_NODE)
		return 0;
	if (expand(index, u, child) < 0 || innermost_child(index, u, child, pc, &inner, &below) < 0)
		return -1;
	*best = inner != NO_NODE ? inner : child;
	*inlined = below + (dwarf_tag((Dwarf_Die *)&u->nodes[child].die) == DW_TAG_inlined_subroutine);
	return 0;
}

/*
 * The innermost node containing pc under n and its next siblings, with *inlined the number of inlined
 * subroutines on the way to it, in *best (NO_NODE when none); each node on the way has its children read
 * (expand), and -1 says that failed. Where two siblings contain pc (gcc, with LTO above all, gives sibling
 * lexical blocks overlapping ranges), the way through more inlined subroutines wins, the first on a tie: libdw's
 * dwarf_getscopes takes the first sibling and so can miss the function inlined at pc (libbfd's bfd_assert in
 * bfd_elf_size_dynamic_sections), which binutils and llvm-symbolizer, going by the narrowest scope, find.
 */
static int innermost(struct scope_index *index, struct scope_unit *u, uint32_t n, Dwarf_Addr pc, uint32_t *best,
		     unsigned *inlined)
{
	*best = NO_NODE;
	*inlined = 0;
	for (n = first_containing(u, n, pc); n != NO_NODE; n = first_containing(u, u->nodes[n].next_sibling, pc)) {
		unsigned below;
		uint32_t inner;

		if (expand(index, u, n) < 0 || innermost_child(index, u, n, pc, &inner, &below) < 0)
			return -1;
		below += dwarf_tag((Dwarf_Die *)&u->nodes[n].die) == DW_TAG_inlined_subroutine;
		if (*best == NO_NODE || below > *inlined) {
			*best = inner != NO_NODE ? inner : n;
			*inlined = below;
		}
	}
	return 0;
}

int scope_index_chain(struct scope_index *index, Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die **chain)
{
	struct scope_unit *u = unit_of(index, cudie);
	uint32_t n, inner = NO_NODE;
	unsigned inlined;
	int count = 1; /* the unit */

	if (u->failed)
		return u->too_big ? -2 : -1;
	if (u->top) { /* the top level does not overlap: its one node at pc */
		n = top_containing(u, pc);
		if (n != NO_NODE && (expand(index, u, n) < 0 || innermost_child(index, u, n, pc, &inner, &inlined) < 0))
			goto failed;
		if (inner == NO_NODE)
			inner = n;
	} else if (innermost(index, u, u->first_top, pc, &inner, &inlined) < 0) {
		goto failed;
	}
	if (inner == NO_NODE)
		return 0;
	for (n = inner; n != NO_NODE; n = u->nodes[n].parent)
		count++;
	/* One array for every chain, not one allocated and freed per address. */
	GROW(index->chain, index->chain_capacity, (size_t)count);
	*chain = index->chain;
	count = 0;
	for (n = inner; n != NO_NODE; n = u->nodes[n].parent)
		(*chain)[count++] = u->nodes[n].die;
	(*chain)[count++] = u->cudie;
	return count;
failed:
	u->failed = true; /* answers given so far were libdw's: the rest come from libdw too */
	return u->too_big ? -2 : -1;
}

void scope_index_release(struct scope_index *index)
{
	for (size_t i = 0; i < index->capacity; i++) {
		struct scope_unit *u = index->units[i];

		if (!u)
			continue;
		free(u->nodes);
		free(u->ranges);
		free(u->top);
		free(u->sorted);
		free(u);
	}
	free(index->units);
	pointer_table_release(&index->abbrevs);
	free(index->may_have_ranges);
	free(index->chain);
	memset(index, 0, sizeof(*index));
}
