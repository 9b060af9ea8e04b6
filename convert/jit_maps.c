/*
 * jit_maps.c — parses embedded perf maps and names JIT addresses (see jit_maps.h).
 */
#include "jit_maps.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

struct jit_symbol {
	uint64_t start, end;
	uint32_t line;	/* position in the map: a later line for the same code wins (code can be recompiled) */
	const char *name; /* in its process's text */
};

struct jit_process {
	uint32_t pid;
	char *text; /* the map; once parsed, its lines each end in a NUL, and the symbols' names are there */
	size_t text_len, text_cap;
	struct jit_symbol *symbols;
	size_t symbol_count, symbol_cap;
};

void jit_maps_init(struct jit_maps *maps)
{
	memset(maps, 0, sizeof(*maps));
	maps->text_max = JIT_MAPS_TEXT_MAX;
	maps->symbols_left = JIT_MAPS_SYMBOLS_MAX;
}

static struct jit_process *find(const struct jit_maps *maps, uint32_t pid)
{
	for (size_t i = 0; i < maps->count; i++)
		if (maps->processes[i].pid == pid)
			return &maps->processes[i];
	return NULL;
}

void jit_maps_add_text(struct jit_maps *maps, uint32_t pid, uint64_t data_offset, const char *text, size_t size)
{
	struct jit_process *proc = find(maps, pid);

	if (!proc) {
		GROW(maps->processes, maps->cap, maps->count + 1);
		proc = &maps->processes[maps->count++];
		memset(proc, 0, sizeof(*proc));
		proc->pid = pid;
	}
	if (data_offset != proc->text_len) /* a piece lost to damage: keep what lines up */
		return;
	if (size > maps->text_max - maps->text_bytes) {
		maps->text_dropped += size;
		return;
	}
	maps->text_bytes += size;
	GROW(proc->text, proc->text_cap, proc->text_len + size + 1);
	memcpy(proc->text + proc->text_len, text, size);
	proc->text_len += size;
	proc->text[proc->text_len] = '\0';
}

static int compare_symbols(const void *a, const void *b)
{
	const struct jit_symbol *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Parses the map's lines; returns how many made no sense. The text is the file's bytes: a NUL inside it ends
 * only its line, which is skipped, never the rest of the map. Lines end in "\n", "\r\n" or the end of the text. */
static uint64_t parse(struct jit_process *proc, uint64_t *symbols_left, uint64_t *symbols_dropped)
{
	uint32_t line_no = 0;
	uint64_t bad = 0;
	char *text_end = proc->text ? proc->text + proc->text_len : NULL; /* no offset on NULL: UBSan */

	for (char *line = proc->text, *next; line && line < text_end; line = next) {
		char *eol = memchr(line, '\n', (size_t)(text_end - line));
		uint64_t start, size;
		char *end;

		if (!eol)
			eol = text_end;
		*eol = '\0';
		next = eol < text_end ? eol + 1 : NULL;
		if (eol > line && eol[-1] == '\r') /* a CRLF line end: the '\r' is not the name's */
			*--eol = '\0';
		line_no++;
		if (line == eol)
			continue;
		if (memchr(line, '\0', (size_t)(eol - line))) {
			bad++;
			continue;
		}
		start = strtoull(line, &end, 16);
		if (end == line || *end != ' ') {
			bad++;
			continue;
		}
		line = end + 1;
		size = strtoull(line, &end, 16);
		if (end == line || *end != ' ' || size == 0 || start + size < start) {
			bad++;
			continue;
		}
		if (!*symbols_left) {
			(*symbols_dropped)++;
			continue;
		}
		(*symbols_left)--;
		GROW(proc->symbols, proc->symbol_cap, proc->symbol_count + 1);
		proc->symbols[proc->symbol_count++] =
			(struct jit_symbol){ .start = start, .end = start + size, .line = line_no, .name = end + 1 };
	}
	sort_array(proc->symbols, proc->symbol_count, sizeof(*proc->symbols), compare_symbols);
	/* the text is kept for the names in it: a copy of each (node: thousands) cost as much as the parse */
	return bad;
}

static int compare_processes(const void *a, const void *b)
{
	const struct jit_process *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void jit_maps_finish(struct jit_maps *maps)
{
	for (size_t i = 0; i < maps->count; i++) {
		uint64_t bad = parse(&maps->processes[i], &maps->symbols_left, &maps->symbols_dropped);

		if (bad)
			warning("the perf map of pid %" PRIu32 " has %" PRIu64 " malformed lines: skipped them",
				maps->processes[i].pid, bad);
		maps->bad_lines += bad;
	}
	if (maps->text_dropped)
		warning("the perf maps hold more than %" PRIu64 " bytes in all: %" PRIu64 " bytes beyond that not read "
			"(their JIT frames stay unnamed)",
			maps->text_max, maps->text_dropped);
	if (maps->symbols_dropped)
		warning("the perf maps hold more than %llu symbols in all: %" PRIu64 " lines beyond them not read (their "
			"JIT frames stay unnamed)",
			JIT_MAPS_SYMBOLS_MAX, maps->symbols_dropped);
	if (maps->count)
		sort_array(maps->processes, maps->count, sizeof(*maps->processes), compare_processes);
}

static const struct jit_process *lookup_process(const struct jit_maps *maps, uint32_t pid)
{
	size_t lo = 0, hi = maps->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (maps->processes[mid].pid == pid)
			return &maps->processes[mid];
		if (maps->processes[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int jit_maps_has(const struct jit_maps *maps, uint32_t pid)
{
	return lookup_process(maps, pid) != NULL;
}

const char *jit_maps_lookup(const struct jit_maps *maps, uint32_t pid, uint64_t address)
{
	const struct jit_process *proc = lookup_process(maps, pid);
	const struct jit_symbol *best = NULL;
	size_t lo = 0, hi;

	if (!proc)
		return NULL;
	hi = proc->symbol_count;
	while (lo < hi) { /* first symbol starting after address */
		size_t mid = lo + (hi - lo) / 2;

		if (proc->symbols[mid].start <= address)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Symbols rarely overlap; look back a little for the latest line that covers the address. */
	for (size_t i = lo; i-- > 0 && lo - i <= 16;)
		if (address < proc->symbols[i].end && (!best || proc->symbols[i].line > best->line))
			best = &proc->symbols[i];
	return best ? best->name : NULL;
}

void jit_maps_release(struct jit_maps *maps)
{
	for (size_t i = 0; i < maps->count; i++) {
		struct jit_process *proc = &maps->processes[i];

		free(proc->symbols);
		free(proc->text);
	}
	free(maps->processes);
	memset(maps, 0, sizeof(*maps));
}
