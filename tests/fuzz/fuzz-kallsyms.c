/*
 * fuzz-kallsyms.c — libFuzzer target for the kallsyms parser (convert/kernel_symbols.c): whatever text a
 * recording's KALLSYMS blocks hold, cut wherever blocks cut it, parsing must neither crash nor hang, the
 * symbols must come out sorted by address with one per address, and a lookup must return the symbol that
 * covers the address (the last one at or below it).
 *
 * Input: the text, cut into up to four KALLSYMS blocks where its first byte says; the addresses looked up are
 * every symbol's, one below and one above, and a few taken from the text's last bytes.
 * Built by `make fuzz-kallsyms-build`; tests/t0005-fuzz-parsers.sh replays tests/fuzz/kallsyms-corpus/.
 */
#include <stdint.h>
#include <string.h>

#include "convert/kernel_symbols.h"
#include "tests/fuzz/fuzz-input.h"

static volatile uint64_t sink;

static void check_lookup(const struct kernel_symbols *ks, uint64_t address)
{
	const struct kernel_symbol *s = kernel_symbols_find(ks, address);

	if (!s)
		return;
	ASSERT(s >= ks->symbols && s < ks->symbols + ks->count);
	ASSERT(s->address <= address);
	ASSERT(s + 1 == ks->symbols + ks->count || s[1].address > address);
	sink += strlen(s->name) + (s->module ? strlen(s->module) : 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kernel_symbols ks;
	const char *text;
	size_t len, pos = 0;
	unsigned pieces;

	if (size < 1)
		return 0;
	pieces = data[0] % 4 + 1;
	text = (const char *)data + 1;
	len = size - 1;
	kernel_symbols_init(&ks);
	for (unsigned i = 0; i < pieces; i++) {
		size_t n = i + 1 == pieces ? len - pos : (len - pos) / (pieces - i);

		kernel_symbols_add_text(&ks, text + pos, n);
		pos += n;
	}
	ASSERT(kernel_symbols_finish(&ks) == ks.count);
	for (size_t i = 0; i < ks.count; i++) {
		ASSERT(ks.symbols[i].name);
		ASSERT(i == 0 || ks.symbols[i - 1].address < ks.symbols[i].address);
		if (i < 64) {
			check_lookup(&ks, ks.symbols[i].address);
			check_lookup(&ks, ks.symbols[i].address - 1);
			check_lookup(&ks, ks.symbols[i].address + 1);
		}
	}
	for (size_t i = 0; i + 8 <= len && i < 64; i += 8) {
		uint64_t address;

		memcpy(&address, text + len - 8 - i, 8);
		check_lookup(&ks, address);
	}
	kernel_symbols_release(&ks);
	return 0;
}
