/*
 * kernel_symbols.c — parses the kallsyms text of a recording and answers address → symbol by binary
 * search (see kernel_symbols.h).
 *
 * Lines look like "ffffffff81000000 T _stext" or "ffffffffc0a01000 t ext4_fill_super\t[ext4]". Several
 * names often share an address (aliases); one is kept, chosen the way perf's choose_best_symbol does and
 * independently of input order: global before weak before local, fewer leading underscores, shorter,
 * then bytewise smaller. A line without a name ("ffffffff81000e10 T", since 1.4) only says where the symbol
 * before it ends: an address there has no name, and a named alias at its address wins.
 */
#include "kernel_symbols.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

void kernel_symbols_init(struct kernel_symbols *ks)
{
	memset(ks, 0, sizeof(*ks));
	ks->text_max = KERNEL_SYMBOLS_TEXT_MAX;
}

void kernel_symbols_add_text(struct kernel_symbols *ks, const char *text, size_t size)
{
	/* Past the bound, this block and every one after it: a later one appended would join a cut line */
	if (ks->dropped || size > ks->text_max - ks->text_len) {
		ks->dropped += size;
		return;
	}
	GROW(ks->text, ks->text_cap, ks->text_len + size + 1);
	memcpy(ks->text + ks->text_len, text, size);
	ks->text_len += size;
	ks->text[ks->text_len] = '\0';
}

static int binding_rank(char type)
{
	if (type == 'T')
		return 0;
	if (type == 'W' || type == 'w')
		return 1;
	return 2;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Orders by address, then the preferred alias first. */
static int compare_symbols(const void *a, const void *b)
{
	const struct kernel_symbol *x = a, *y = b;
	size_t lx, ly;

	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	if (!x->name[0] != !y->name[0])
		return x->name[0] ? -1 : 1; /* a name before a mere end */
	if (binding_rank(x->type) != binding_rank(y->type))
		return binding_rank(x->type) - binding_rank(y->type);
	lx = leading_underscores(x->name);
	ly = leading_underscores(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

size_t kernel_symbols_finish(struct kernel_symbols *ks)
{
	char *line = ks->text, *end = ks->text ? ks->text + ks->text_len : NULL; /* no kallsyms: NULL + 0 is UB */
	bool any_address = false;
	size_t kept = 0;

	if (ks->dropped && ks->text) { /* the kept text's last line may be cut: not read */
		char *last = memrchr(ks->text, '\n', ks->text_len);

		ks->text_len = last ? (size_t)(last + 1 - ks->text) : 0;
		end = ks->text + ks->text_len;
	}
	if (ks->dropped)
		warning("the recording's kernel symbols hold more than %zu bytes of text: %" PRIu64 " bytes beyond that "
			"not read (the kernel frames they would name stay unnamed)",
			ks->text_max, ks->dropped);
	while (line && line < end) {
		char *eol = memchr(line, '\n', (size_t)(end - line));
		char *p = line, *name, *module = NULL, *q;
		unsigned long long address;
		char type;

		if (eol)
			*eol = '\0';
		line = eol ? eol + 1 : NULL;
		address = strtoull(p, &q, 16);
		if (q == p || *q != ' ')
			continue;
		p = q + 1;
		type = *p;
		if (!type || (p[1] != ' ' && p[1] != '\0'))
			continue;
		name = p[1] ? p + 2 : p + 1;
		for (q = name; *q && !isspace((unsigned char)*q); q++)
			;
		if (q == name && *q) /* a name must follow the space; none at all is an end (above) */
			continue;
		if (*q) {
			*q++ = '\0';
			while (isspace((unsigned char)*q))
				q++;
			if (*q == '[') {
				module = q + 1;
				q = strchr(module, ']');
				if (q)
					*q = '\0';
			}
		}
		if (!strchr("TtWw", type))
			continue;
		GROW(ks->symbols, ks->cap, ks->count + 1);
		ks->symbols[ks->count++] = (struct kernel_symbol){ address, name, module, type };
		if (address)
			any_address = true;
	}
	if (ks->count && !any_address) {
		ks->hidden = true;
		ks->count = 0;
		return 0;
	}
	if (ks->count)
		sort_array(ks->symbols, ks->count, sizeof(*ks->symbols), compare_symbols);
	/* Keep the preferred (first) name of each address. */
	for (size_t i = 0; i < ks->count; i++)
		if (!kept || ks->symbols[kept - 1].address != ks->symbols[i].address)
			ks->symbols[kept++] = ks->symbols[i];
	ks->count = kept;
	return kept;
}

const struct kernel_symbol *kernel_symbols_find(const struct kernel_symbols *ks, uint64_t address)
{
	size_t lo = 0, hi = ks->count;
	const struct kernel_symbol *s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->symbols[mid].address <= address)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &ks->symbols[lo - 1];
	if (!s->name[0])
		return NULL; /* past the end of the function before it */
	/*
	 * Without sizes the last symbol of the kernel image would swallow the gap up to the modules; a
	 * module symbol is only trusted inside its own module's run of symbols.
	 */
	if (lo < ks->count && s->module != ks->symbols[lo].module &&
	    (!s->module || !ks->symbols[lo].module || strcmp(s->module, ks->symbols[lo].module)) &&
	    address - s->address > (1u << 20))
		return NULL;
	return s;
}

void kernel_symbols_release(struct kernel_symbols *ks)
{
	free(ks->text);
	free(ks->symbols);
	memset(ks, 0, sizeof(*ks));
}
