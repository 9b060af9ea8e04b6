/*
 * kernel_symbols.h — names kernel addresses from the /proc/kallsyms snapshot a recording carries.
 *
 * The KALLSYMS blocks hold the text of /proc/kallsyms (function symbols only) from the recording machine,
 * so kernel frames are named offline without that machine's vmlinux. kallsyms gives no sizes: a symbol
 * covers the addresses up to the next symbol.
 */
#ifndef STACKREC_CONVERT_KERNEL_SYMBOLS_H
#define STACKREC_CONVERT_KERNEL_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kernel_symbol {
	uint64_t address;
	const char *name;   /* points into kernel_symbols.text */
	const char *module; /* "ext4" for "[ext4]", or NULL for the kernel image */
	char type;	    /* 'T', 't', 'W', ... */
};

/*
 * The kallsyms text kept, at most: /proc/kallsyms with every module loaded is 5 to 20 MB, and its symbols take
 * about as much again; a forged recording of a few highly compressed frames made convert hold gigabytes.
 */
#define KERNEL_SYMBOLS_TEXT_MAX (64u << 20)

struct kernel_symbols {
	char *text; /* every KALLSYMS block appended, then cut into strings by kernel_symbols_finish() */
	size_t text_len, text_cap;
	size_t text_max;     /* KERNEL_SYMBOLS_TEXT_MAX (kernel_symbols_init; a test makes it smaller) */
	uint64_t dropped;    /* bytes of text beyond that, not kept (kernel_symbols_finish warns once) */
	struct kernel_symbol *symbols; /* sorted by address, one per address */
	size_t count, cap;
	bool hidden; /* every address was 0: kernel.kptr_restrict hid them when recording */
	bool cut;    /* none, and the recording has no STATS: it ended before they were written (at the end) */
};

void kernel_symbols_init(struct kernel_symbols *ks);
/* Appends the text of one KALLSYMS block (blocks may split the text anywhere), up to text_max in all. */
void kernel_symbols_add_text(struct kernel_symbols *ks, const char *text, size_t size);
/* Parses and sorts what was added. Returns the number of symbols. */
size_t kernel_symbols_finish(struct kernel_symbols *ks);
/* The symbol covering address, or NULL. */
const struct kernel_symbol *kernel_symbols_find(const struct kernel_symbols *ks, uint64_t address);
void kernel_symbols_release(struct kernel_symbols *ks);

#endif
