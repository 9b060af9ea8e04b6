/*
 * probes.h — user-defined probes (`record --probe 'BINARY:FUNCTION(ARG, ...)'`): the parsed and resolved
 * probe (probe_spec.c) that probes.c attaches as a uprobe and describes in a PROBE block.
 */
#ifndef STACKREC_RECORD_PROBES_H
#define STACKREC_RECORD_PROBES_H

#include <stdbool.h>
#include <stdint.h>

#define PROBE_ARG_REGS 6       /* rdi rsi rdx rcx r8 r9 */
#define PROBE_ARGS_MAX_SPEC 6 /* arguments one probe may name (SREC_PROBE_ARGS_MAX) */
#define PROBES_MAX 16	       /* --probe options one recording may have */

struct probe_arg {
	char *name;	  /* as written: a parameter name or argN */
	int reg;	  /* 0..5: the integer argument register (rdi..r9); -1 until resolved */
	bool string;	  /* str(NAME): capture the string it points to */
	const char *type; /* the PROBE block's TYPE: "s64", "u64", "ptr" or "str" */
	unsigned int bytes; /* the value's size: 1, 2, 4 or 8 (a raw argN: 8), extended to 64 bits by TYPE */
};

struct probe {
	uint32_t id;	/* PROBE and PROBE_HIT probe_id: 1, 2, ... in command-line order */
	char *spec;	/* the option's text, for messages */
	char *binary;	/* as given */
	char *path;	/* resolved absolute path (what is attached and recorded) */
	char *function;
	uint64_t address; /* st_value of the function's symbol */
	uint8_t build_id[20];
	uint8_t build_id_size;
	struct probe_arg args[PROBE_ARGS_MAX_SPEC];
	unsigned int arg_count;
};

/* Parses spec into p (syntax only). 0, or -1 with an error printed; release p either way. */
int probe_parse(struct probe *p, const char *spec);
/* Finds the function in the binary and the register of each named parameter (DWARF). 0, or -1 with one
 * error line: an unknown parameter lists those the function has. */
int probe_resolve(struct probe *p);
/*
 * Whether two resolved probes are on the same code: one binary (by build ID, else path) and one address (a
 * function and its alias). convert shows a frame the context of one probe only, so record refuses the second.
 */
bool probe_same_place(const struct probe *a, const struct probe *b);
void probe_release(struct probe *p);

#endif
