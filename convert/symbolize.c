/*
 * symbolize.c — `stackrec symbolize`: a drop-in for GNU addr2line that names addresses of one binary with
 * convert's symbolizer, so it finds debug information the way convert does (build ID, debug directories,
 * .gnu_debuglink, debuginfod).
 *
 * The output layout is addr2line's (binutils 2.40 addr2line.c, translate_addresses), line for line, so that
 * scripts written for it (stackcollapse-perf.pl --inline, ...) read ours: "??:0" for an address that nothing
 * covers, "FILE:?" for a named address without a line, the discriminator after the line, " at " and
 * " (inlined by) " with -p. Its rules for what counts as found are kept too (covered(), symtab_function()): the
 * address must lie in an allocated section, and data symbols do not name code.
 *
 * Addresses are read from the command line, else one per line from stdin; each answer is flushed before the
 * next line is read, so that another program can drive it through a pipe, one address at a time.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cache_dir.h"
#include "debug_copies.h"
#include "../commands.h"
#include "../formats/json_writer.h"
#include "../util.h"
#include "demangle.h"
#include "symbolizer.h"

/* Bytes being put together: text answers, and the memo's copies of them. */
struct text_buffer {
	char *data;
	size_t size, capacity;
};

/*
 * Text answers by address: lists of addresses repeat (a profile's hot addresses, a log's crash sites), and an
 * answer asked again is copied rather than looked up and formatted again. An answer's text is kept the second
 * time its address is asked, not the first: keeping every answer kept a copy of the whole output of a list
 * that never repeats (15 MB for 20,000 addresses of a C++ program, whose answers with their inline chains are
 * 750 bytes), and of a profile's long tail. Open addressing on the address; a slot is empty (length 0, offset
 * 0), seen once (length 0, offset MEMO_SEEN) or holds an answer (an answer is never empty). Bounded by
 * MEMO_MAX_TEXT and MEMO_MAX_SLOTS; answers not kept are looked up (in the symbol cache) and formatted again.
 * With the cache on, only the entry's answers are kept: those found in this run are in its pending answers.
 */
struct answer_memo {
	struct memo_slot {
		uint64_t address;
		uint32_t offset, length; /* of the answer in text */
	} *slots;
	size_t slot_count, used; /* slot_count: 0 or a power of two */
	struct text_buffer text; /* MEMO_MAX_TEXT of address space when mapped (memo_reserve) */
	bool mapped;
	bool full; /* nothing more is kept or remembered */
};

/* Answers kept; later ones are formatted every time. A profile's hottest addresses are most of its list (with
 * weights 1/rank, the first 1,400 of 20,000 addresses are three quarters of it), and 1 MiB keeps them even where
 * answers are long: 16 MiB took 8 MiB more memory on a C++ program's skewed list to save a fifth of its time. */
#define MEMO_MAX_TEXT ((size_t)1 << 20)
#define MEMO_SLOTS ((size_t)1 << 15) /* the memo's first table: 22,937 addresses before it grows */
#define MEMO_MAX_SLOTS ((size_t)1 << 18) /* 4 MiB of slots: addresses past 183,500 are not remembered */
#define MEMO_SEEN UINT32_MAX		 /* the offset of a slot whose address was asked once */
#define FLUSH_SIZE ((size_t)1 << 15)	 /* answers written out in blocks of about this size */

/* A symbol that may name code, as binutils chooses them (symtab_index_build). */
struct code_symbol {
	GElf_Addr value;
	GElf_Addr section;	 /* the address its section starts at (Dwfl addresses, as value) */
	const char *name, *file; /* file: the STT_FILE symbol binutils gives it, or NULL */
	char *function;		 /* its frames' function name (demangled with -C), made the first time */
	GElf_Xword size;	 /* st_size: of several symbols at one address, the largest names it */
	uint32_t order;		 /* its position in the table */
};

struct symbolize {
	struct symbolizer_module module;
	struct symbolizer_options options;
	bool addresses, functions, inlines, pretty, basenames, json;
	const char *section_name;	 /* -j: addresses are offsets into this section */
	GElf_Addr section_low, section_high; /* its address range */
	int address_digits; /* addr2line prints addresses as wide as the ELF class: 16 or 8 hex digits */
	struct section_range {
		GElf_Addr addr, size;
	} *sections; /* the allocated sections, in table order (allocated_section) */
	size_t section_count;
	bool sections_read;
	size_t last_section;	   /* the section of the address asked before (allocated_section) */
	bool last_section_first;   /* it overlaps no section before it: it is the first to hold its addresses */
	struct code_symbol *symtab; /* symtab_index_build */
	size_t symtab_count;
	bool symtab_built;
	struct text_buffer out;	  /* text answers not yet handed to stdout (flush_answers) */
	struct answer_memo memo;  /* text answers by address, for addresses asked again */
	bool caching;		  /* answers found are added to the symbol cache's (answer_address) */
	struct memo_slot *found; /* answer_batch_text's memo slots of a batch */
	size_t found_capacity;
	uint64_t *lines; /* the addresses of the lines read */
	size_t lines_capacity;
	struct profile_frame *cached; /* an answer from the symbol cache, its strings borrowed */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: stackrec symbolize [-e BINARY] [-a] [-f] [-i] [-C] [-p] [-s] [-j SECTION] [--json] [ADDR...]\n"
		"\n"
		"Names addresses of BINARY (default a.out) as GNU addr2line does, with convert's debug-file lookup.\n"
		"ADDRs are hexadecimal ELF virtual addresses, with or without 0x; without any, one per line is read\n"
		"from stdin and each answer is written and flushed before the next line is read.\n"
		"\n"
		"  -e, --exe BINARY      the executable or shared object whose addresses these are (not a .o or .ko)\n"
		"  -a, --addresses       print each address first\n"
		"  -f, --functions       print the function name before FILE:LINE\n"
		"  -i, --inlines         also print the functions the one at the address was inlined into\n"
		"  -C, --demangle        demangle C++ and Rust names\n"
		"  -p, --pretty-print    one line per address: FUNC at FILE:LINE, then \" (inlined by) ...\"\n"
		"  -s, --basenames       strip directories from file names\n"
		"  -j, --section NAME    ADDRs are offsets into section NAME\n"
		"  -b, -r, -R            accepted for addr2line's sake, and ignored\n"
		"      --json            one JSON object per line and address (see docs/symbolize.md)\n"
		"      --debug-dir DIR   also look for files by build ID in DIR/.build-id/ (repeatable)\n"
		"      --debuginfod URL  ask this debuginfod server for files by build ID (default: $DEBUGINFOD_URLS)\n"
		"      --no-cache        do not use the symbol cache or kept decompressed debug files (docs/symbol-cache.md)\n"
		"  -v, --verbose         say on stderr where the binary's file and debug information came from\n"
		"  -h, -H, --help        show this help\n"
		"  -V, --version         show stackrec's version\n"
		"\n"
		"See docs/symbolize.md.\n");
}

/* BINARY's build ID in lowercase hex into hex (empty when it has none). -1 with a message when BINARY is no
 * readable ELF file. Opened without blocking and read only when it is a regular file: a FIFO would wait for a
 * writer forever, a device give anything. */
static int read_build_id(const char *path, char *hex, size_t hex_size)
{
	const void *id = NULL;
	const char *damage;
	GElf_Ehdr ehdr;
	struct stat st;
	ssize_t n;
	Elf *elf;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return error("'%s' is not a regular file", path);
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		close(fd);
		return error("'%s' is not an ELF file", path);
	}
	if ((damage = module_file_elf_damage(elf, (uint64_t)st.st_size))) {
		elf_end(elf);
		close(fd);
		return error("cannot use '%s': %s", path, damage);
	}
	/* A .o or .ko: libdwfl lays its sections out where it likes, not at their (all zero) addresses, so offsets
	 * would name other code than addr2line's. Refused rather than answered wrongly. */
	if (gelf_getehdr(elf, &ehdr) && ehdr.e_type == ET_REL) {
		elf_end(elf);
		close(fd);
		return error("cannot use '%s': a relocatable object file (.o, .ko): symbolize reads executables and "
			     "shared objects", path);
	}
	hex[0] = '\0';
	n = dwelf_elf_gnu_build_id(elf, &id);
	if (n > 0 && (size_t)n * 2 < hex_size)
		hex_encode(hex, id, (size_t)n);
	elf_end(elf);
	close(fd);
	return 0;
}

/* Whether allocated section i overlaps one before it in the table (which would then be the first to hold some
 * of its addresses). */
static bool overlaps_earlier(const struct symbolize *s, size_t i)
{
	const struct section_range *r = &s->sections[i];

	for (size_t j = 0; j < i; j++)
		if (s->sections[j].addr < r->addr + r->size && r->addr < s->sections[j].addr + s->sections[j].size)
			return true;
	return false;
}

/* The allocated section holding addr (the first in the table), as [*low, *high); false when none does:
 * addr2line looks nowhere else. The sections are read once: reading every header for every address was a
 * twentieth of a cold run. */
static bool allocated_section(struct symbolize *s, GElf_Addr addr, GElf_Addr *low, GElf_Addr *high)
{
	if (!s->sections_read) {
		Elf_Scn *scn = NULL;
		size_t capacity = 0;

		s->sections_read = true;
		while ((scn = elf_nextscn(s->module.file.elf, scn))) {
			GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);

			if (!sh || !(sh->sh_flags & SHF_ALLOC))
				continue;
			GROW(s->sections, capacity, s->section_count + 1);
			s->sections[s->section_count++] = (struct section_range){ sh->sh_addr, sh->sh_size };
		}
	}
	/* The section of the address before, first: a list's addresses are nearly all in .text, which had them
	 * compared with the thirty sections before it, a fiftieth of a cold run. Sections can overlap (a
	 * .tbss has the addresses of what follows it): that one is taken only when no section before it in the
	 * table holds the address, as the search through the table would. */
	if (s->last_section < s->section_count) {
		const struct section_range *r = &s->sections[s->last_section];

		if (addr >= r->addr && addr - r->addr < r->size && s->last_section_first) {
			*low = r->addr;
			*high = r->addr + r->size;
			return true;
		}
	}
	for (size_t i = 0; i < s->section_count; i++) {
		if (addr >= s->sections[i].addr && addr - s->sections[i].addr < s->sections[i].size) {
			*low = s->sections[i].addr;
			*high = s->sections[i].addr + s->sections[i].size;
			s->last_section = i;
			s->last_section_first = !overlaps_earlier(s, i);
			return true;
		}
	}
	return false;
}

/* -j SECTION: its address range; false when the binary has no such section. */
static bool named_section(struct symbolize *s)
{
	GElf_Shdr sh;

	if (!debug_file_section(s->module.file.elf, s->section_name, &sh))
		return false;
	/* A section not loaded (.debug_info, .comment) holds no code: every offset in it is ??:0, as addr2line
	 * answers; its address 0 would have made its offsets the text's. */
	s->section_low = sh.sh_addr;
	s->section_high = sh.sh_flags & SHF_ALLOC ? sh.sh_addr + sh.sh_size : sh.sh_addr;
	return true;
}

static int compare_code_symbols(const void *a, const void *b)
{
	const struct code_symbol *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order; /* qsort is not stable */
}

/* Where the allocated section shndx of elf (the binary or its debug file: their section headers are the same)
 * starts, as a Dwfl address; false when it is not allocated or there is none. */
static bool symbol_section(Elf *elf, GElf_Word shndx, Dwarf_Addr bias, GElf_Addr *start)
{
	Elf_Scn *scn = elf && shndx != SHN_UNDEF && shndx < SHN_LORESERVE ? elf_getscn(elf, shndx) : NULL;
	GElf_Shdr mem, *sh = scn ? gelf_getshdr(scn, &mem) : NULL;

	if (!sh || !(sh->sh_flags & SHF_ALLOC))
		return false;
	*start = sh->sh_addr + bias;
	return true;
}

/*
 * The symbols binutils names code with when DWARF does not (bfd's _bfd_elf_find_function): no data, section
 * or file symbols, none undefined or absolute, none of annobin's markers; for a local symbol the file symbol
 * before it is its file, for a global one only when no other symbol came between. Sorted by address and, at
 * one address, in table order: binutils takes the first of several at one address. Built once, on the first
 * address DWARF does not name, instead of reading the whole symbol table for each such address.
 */
static void symtab_index_build(struct symbolize *s)
{
	Dwfl_Module *mod = s->module.file.mod;
	const char *last_file = NULL;
	bool symbol_seen = false, file_after_symbol = false;
	size_t capacity = 0;
	int n = dwfl_module_getsymtab(mod);

	s->symtab_built = true;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value, section;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, &elf, &bias);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name)
			continue;
		if (type == STT_FILE) {
			last_file = name;
			file_after_symbol = symbol_seen;
			continue;
		}
		symbol_seen = true;
		if (type == STT_OBJECT || type == STT_TLS || type == STT_SECTION || type == STT_COMMON ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS)
			continue;
		if (!sym.st_size && GELF_ST_BIND(sym.st_info) == STB_LOCAL && type == STT_NOTYPE &&
		    GELF_ST_VISIBILITY(sym.st_other) == STV_HIDDEN)
			continue; /* annobin's markers, which bfd passes over too */
		if (!symbol_section(elf, shndx, bias, &section))
			continue; /* not of an allocated section: it names no address */
		GROW(s->symtab, capacity, s->symtab_count + 1);
		s->symtab[s->symtab_count++] = (struct code_symbol){
			.value = value,
			.section = section,
			.name = name,
			.size = sym.st_size,
			.order = (uint32_t)i,
			.file = last_file && (GELF_ST_BIND(sym.st_info) == STB_LOCAL || !file_after_symbol) ? last_file
													 : NULL,
		};
	}
	sort_array(s->symtab, s->symtab_count, sizeof(*s->symtab), compare_code_symbols);
}

/*
 * The symbol binutils names code at addr with: the nearest at or before addr of the section [low, high) that
 * holds addr (sizes do not bound it; of several at one address the largest, as llvm-symbolizer's too, and of
 * those the first in the table, whatever their binding: a marker of size 0 such as Go's runtime.text gives
 * way to the function that starts there), and its file. A symbol of another
 * section at those addresses does not count: `_edata`, which ends .data where .bss starts, or the nameless
 * labels LTO leaves in .debug_info with values over .text. libdwfl's dwfl_module_addrinfo differs on each
 * point, so the command follows binutils here.
 */
static const struct code_symbol *symtab_function(struct symbolize *s, GElf_Addr addr, GElf_Addr low)
{
	struct code_symbol *found;
	size_t i;

	if (!s->symtab_built)
		symtab_index_build(s);
	i = UPPER_BOUND(s->symtab, s->symtab_count, value, addr);
	while (i && s->symtab[i - 1].value >= low && s->symtab[i - 1].section != low)
		i--;
	if (!i || s->symtab[i - 1].value < low)
		return NULL;
	found = &s->symtab[i - 1];
	/* the largest of the section's at that address, the first in the table of those (sorted by order) */
	for (size_t j = i - 1; j-- > 0 && s->symtab[j].value == found->value;)
		if (s->symtab[j].section == low && s->symtab[j].size >= found->size)
			found = &s->symtab[j];
	if (!found->function)
		found->function = demangle_name(found->name, s->options.demangle);
	return found;
}

/*
 * The frames at ELF address addr, as addr2line finds them: DWARF's through the shared symbolizer; where
 * DWARF names no function, binutils' symbol (symtab_function) and the line table's line. 0 when nothing
 * names addr or it lies outside every allocated section. The strings are borrowed (the module's and the
 * symbol index's): free only *frames.
 */
static uint32_t covered(struct symbolize *s, GElf_Addr addr, struct profile_frame **frames)
{
	Dwarf_Addr dwfl_addr = addr + s->module.file.bias;
	GElf_Addr low, high;
	GElf_Sym sym;
	const struct code_symbol *symbol;
	struct profile_frame *f;
	uint32_t count;

	*frames = NULL;
	if (s->section_name) {
		low = s->section_low;
		high = s->section_high;
		if (addr < low || addr >= high)
			return 0;
	} else if (!s->module.file.elf || !allocated_section(s, addr, &low, &high)) {
		return 0;
	}
	count = symbolizer_name_address(&s->module, dwfl_addr, &s->options, frames, &sym);
	if (count && !sym.st_value && !sym.st_info)
		return count; /* DWARF named the function */
	symbol = symtab_function(s, dwfl_addr, low + s->module.file.bias);
	if (!count)
		*frames = xcalloc(1, sizeof(**frames));
	f = &(*frames)[count ? count - 1 : 0];
	f->function = symbol ? symbol->function : NULL;
	f->system_name = symbol ? (char *)symbol->name : NULL;
	if (!f->file && !f->line && count <= 1)
		symbolizer_line_position(&s->module, dwfl_addr, f); /* after symbolizer_name_address: its module */
	if (!f->file && symbol && symbol->file)
		f->file = (char *)symbol->file;
	if (!symbol && !f->file && !f->line) {
		free(*frames);
		*frames = NULL;
		return 0;
	}
	return count ? count : 1;
}

static const char *file_name(const struct symbolize *s, const char *file)
{
	const char *slash;

	if (!file)
		return "??";
	if (s->basenames && (slash = strrchr(file, '/')))
		return slash + 1;
	return file;
}

/* Room for n more bytes at the end of b. */
static char *text_reserve(struct text_buffer *b, size_t n)
{
	if (b->size + n > b->capacity)
		GROW(b->data, b->capacity, b->size + n);
	return b->data + b->size;
}

static void put_bytes(struct text_buffer *b, const char *bytes, size_t n)
{
	memcpy(text_reserve(b, n), bytes, n);
	b->size += n;
}

static void put_string(struct text_buffer *b, const char *string)
{
	put_bytes(b, string, strlen(string));
}

/* "0x" and addr in hex, digits wide, zero-padded ("0x%0*" PRIx64). */
static void put_address(struct text_buffer *b, uint64_t addr, int digits)
{
	char buf[2 + 16];
	int n = 0;

	for (uint64_t a = addr; a; a >>= 4)
		n++;
	if (n < digits)
		n = digits;
	buf[0] = '0';
	buf[1] = 'x';
	for (int i = n + 1; i >= 2; i--, addr >>= 4)
		buf[i] = "0123456789abcdef"[addr & 15];
	put_bytes(b, buf, (size_t)n + 2);
}

/*
 * n in decimal at p, without printf (printf was most of a warm run's time); returns the end. Its digits are
 * counted first and written in place, two at a time: a digit at a time into a buffer then copied was a tenth
 * of a cold run on a C++ program's skewed list (two numbers a frame, each a memcpy call).
 */
static char *format_uint(char *p, uint32_t n)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				    "8081828384858687888990919293949596979899";
	int digits = n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 10000 ? 4 : n < 100000 ? 5 : n < 1000000 ? 6
		   : n < 10000000 ? 7 : n < 100000000 ? 8 : n < 1000000000 ? 9 : 10;
	char *end = p + digits;

	p = end;
	while (n >= 100) {
		p -= 2;
		memcpy(p, &pairs[2 * (n % 100)], 2);
		n /= 100;
	}
	if (n >= 10) {
		p -= 2;
		memcpy(p, &pairs[2 * n], 2);
	} else {
		*--p = (char)('0' + n);
	}
	return end;
}

#define LITERAL(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1) /* a string literal at p: its end */

/* Room for a frame's text besides its function and file names: " at ", ':', a line, " (discriminator N)",
 * '\n' and " (inlined by) ". */
#define FRAME_TEXT_EXTRA 64

static void print_text(struct symbolize *s, uint64_t addr, const struct profile_frame *frames, uint32_t count)
{
	struct text_buffer *b = &s->out;

	if (s->addresses) {
		put_address(b, addr, s->address_digits);
		put_string(b, s->pretty ? ": " : "\n");
	}
	if (!count) {
		if (s->functions)
			put_string(b, s->pretty ? "?? " : "??\n");
		put_string(b, "??:0\n");
		return;
	}
	/* Each frame's text at once, in room reserved for all of it: a reservation per string, and the calls for
	 * each, were half of writing the answers, a seventh of a cold run on C++ (its answers are 750 bytes). */
	for (uint32_t i = 0; i < count; i++) {
		const struct profile_frame *f = &frames[i];
		const char *function = f->function && *f->function ? f->function : "??";
		const char *file = file_name(s, f->file);
		size_t function_length = s->functions ? strlen(function) : 0, file_length = strlen(file);
		char *p = text_reserve(b, function_length + file_length + FRAME_TEXT_EXTRA);

		if (s->functions) {
			memcpy(p, function, function_length);
			p += function_length;
			p = s->pretty ? LITERAL(p, " at ") : LITERAL(p, "\n");
		}
		memcpy(p, file, file_length);
		p += file_length;
		*p++ = ':';
		/* addr2line keeps the address's discriminator for the callers' lines too (it is one variable). */
		if (f->line) {
			p = format_uint(p, f->line);
			if (frames[0].discriminator) {
				p = LITERAL(p, " (discriminator ");
				p = format_uint(p, frames[0].discriminator);
				*p++ = ')';
			}
			*p++ = '\n';
		} else {
			p = LITERAL(p, "?\n");
		}
		if (s->inlines && i + 1 < count && s->pretty)
			p = LITERAL(p, " (inlined by) ");
		b->size = (size_t)(p - b->data);
		if (!s->inlines)
			break;
	}
}

static void json_frame(struct json_writer *w, const struct symbolize *s, const struct profile_frame *f)
{
	json_key(w, "function");
	json_string(w, f && f->function && *f->function ? f->function : NULL);
	json_key(w, "file");
	json_string(w, f && f->file && *f->file ? file_name(s, f->file) : NULL); /* "" is an unnamed file symbol */
	json_key(w, "line");
	if (f && f->line)
		json_uint(w, f->line);
	else
		json_null(w);
	json_key(w, "column");
	if (f && f->column)
		json_uint(w, f->column);
	else
		json_null(w);
}

static void print_json(struct symbolize *s, uint64_t addr, const struct profile_frame *frames, uint32_t count)
{
	struct json_writer w;

	json_writer_init(&w, stdout);
	json_begin_object(&w);
	json_key(&w, "address");
	json_hex(&w, addr);
	json_frame(&w, s, count ? &frames[0] : NULL);
	json_key(&w, "discriminator");
	json_uint(&w, count ? frames[0].discriminator : 0);
	json_key(&w, "inlined_by");
	json_begin_array(&w);
	for (uint32_t i = 1; i < count; i++) {
		json_begin_object(&w);
		json_frame(&w, s, &frames[i]);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	json_end_line(&w);
	json_writer_release(&w);
}

/* Hands the text answers so far to stdout, and with wait (the next read may block) flushes stdout too. */
static void flush_answers(struct symbolize *s, bool wait)
{
	if (s->out.size)
		fwrite_unlocked(s->out.data, 1, s->out.size, stdout);
	s->out.size = 0;
	if (wait)
		fflush(stdout);
}

/* The slot an address starts at in a table of slot_count (a power of two) slots. */
static size_t memo_hash(uint64_t address, size_t slot_count)
{
	return address_hash(address) & (slot_count - 1);
}

/* The memo's slot for address: the one holding it, else the empty one where it would go. */
static struct memo_slot *memo_slot(struct answer_memo *m, uint64_t address)
{
	size_t i = memo_hash(address, m->slot_count);

	while ((m->slots[i].length || m->slots[i].offset == MEMO_SEEN) && m->slots[i].address != address)
		i = (i + 1) & (m->slot_count - 1);
	return &m->slots[i];
}

/*
 * Reserves the memo's address space: its answers are then never copied to a grown buffer, and its memory is
 * touched only where answers are. The slots start at MEMO_SLOTS, rather than growing from a small table
 * (each growth touched as much memory again; a table this large is mapped afresh by calloc, its pages touched
 * only where slots are used). A grown buffer is the fallback where the reservation fails.
 */
static void memo_reserve(struct answer_memo *m)
{
	void *text = mmap(NULL, MEMO_MAX_TEXT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			  -1, 0);

	if (text != MAP_FAILED) {
		m->text.data = text;
		m->text.capacity = MEMO_MAX_TEXT;
		m->mapped = true;
	}
	m->slot_count = MEMO_SLOTS;
	m->slots = xcalloc(m->slot_count, sizeof(*m->slots));
}

static void memo_release(struct answer_memo *m)
{
	if (m->mapped)
		munmap(m->text.data, MEMO_MAX_TEXT);
	else
		free(m->text.data);
	free(m->slots);
}

/* Notes that address was answered with the bytes text[0, length): the first time, that it was asked; the
 * second, the bytes, while there is room. */
static void memo_note(struct answer_memo *m, uint64_t address, const char *text, size_t length)
{
	struct memo_slot *slot;

	if (!length || m->full)
		return;
	if (!m->slot_count)
		memo_reserve(m);
	if (10 * (m->used + 1) > 7 * m->slot_count) { /* at most 70% full */
		struct memo_slot *old = m->slots;
		size_t old_count = m->slot_count;

		if (2 * old_count > MEMO_MAX_SLOTS) {
			m->full = true; /* a list of this many addresses: those kept stay */
			return;
		}
		m->slot_count = 2 * old_count;
		m->slots = xcalloc(m->slot_count, sizeof(*m->slots));
		for (size_t i = 0; i < old_count; i++)
			if (old[i].length || old[i].offset == MEMO_SEEN)
				*memo_slot(m, old[i].address) = old[i];
		free(old);
	}
	slot = memo_slot(m, address);
	if (slot->length)
		return;
	if (slot->offset != MEMO_SEEN) {
		*slot = (struct memo_slot){ .address = address, .offset = MEMO_SEEN };
		m->used++;
		return;
	}
	if (m->text.size + length > MEMO_MAX_TEXT) {
		m->full = true;
		return;
	}
	slot->address = address;
	slot->offset = (uint32_t)m->text.size;
	slot->length = (uint32_t)length;
	put_bytes(&m->text, text, length);
}

#define NO_DIGITS_16 -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1

/* The value of each hex digit, -1 for every other byte: one load a digit, where two comparisons took twice. */
static const signed char hex_values[256] = {
	NO_DIGITS_16, NO_DIGITS_16, NO_DIGITS_16,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -1, -1, -1, -1, -1,		     /* '0'-'9' */
	-1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, /* 'A'-'F' */
	NO_DIGITS_16,
	-1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, /* 'a'-'f' */
	NO_DIGITS_16, NO_DIGITS_16, NO_DIGITS_16, NO_DIGITS_16, NO_DIGITS_16, NO_DIGITS_16, NO_DIGITS_16,
	NO_DIGITS_16, NO_DIGITS_16,
};

/*
 * The common forms of an address, up to 16 hex digits after an optional 0x, read fast: *end receives the
 * first character after the digits. false for anything else (no digits, more of them): the caller goes to
 * parse_address, which reads those as strtoull does.
 */
static inline bool parse_hex_address(const char *text, uint64_t *addr, const char **end)
{
	const unsigned char *p = (const unsigned char *)text;
	uint64_t value = 0;
	int n = 0, digit;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; n < 17 && (digit = hex_values[p[n]]) >= 0; n++)
		value = value << 4 | (uint64_t)digit;
	if (!n || n > 16)
		return false;
	*addr = value;
	*end = (const char *)p + n;
	return true;
}

/*
 * The address in text, as bfd_scan_vma reads it (strtoull base 16: an optional 0x, digits up to the first
 * other character). The common forms are read by parse_hex_address: strtoull was a tenth of a warm run.
 * Anything else (spaces, signs, more digits) goes to strtoull itself.
 */
static uint64_t parse_address(const char *text)
{
	uint64_t addr;
	const char *end;

	return parse_hex_address(text, &addr, &end) ? addr : strtoull(text, NULL, 16);
}

/* Where an answer came from, which says whether its address was asked before in this run (memo_note). */
enum answer_source {
	ANSWER_FOUND,	/* found in the debug information (and added to the symbol cache's answers, if it is on) */
	ANSWER_PENDING, /* one of the symbol cache's answers added in this run: the address was asked before */
	ANSWER_ENTRY,	/* the symbol cache entry's */
};

/* The answer for addr, found and written: text to s->out, JSON to stdout. */
static enum answer_source answer_address(struct symbolize *s, uint64_t addr)
{
	uint64_t elf_addr = s->section_name ? addr + s->section_low : addr; /* -j: an offset, printed as given */
	enum answer_source source = ANSWER_FOUND;
	struct profile_frame *frames;
	uint32_t count;
	bool borrowed = false, pending;

	if (!s->cached)
		s->cached = xcalloc(SYMBOL_CACHE_MAX_FRAMES, sizeof(*s->cached));
	if (s->section_name) { /* -j bounds the symbols by its section: answers the cache does not hold */
		count = covered(s, elf_addr, &frames);
	} else if (symbol_cache_peek_into(&s->module.cache, elf_addr, s->cached, &count, &pending)) {
		/* the cache's strings borrowed, into one array for every answer: printed before the cache is closed,
		 * with no copies and no allocation */
		frames = s->cached;
		borrowed = true;
		source = pending ? ANSWER_PENDING : ANSWER_ENTRY;
	} else {
		count = covered(s, elf_addr, &frames);
		symbolizer_cache_answer(&s->module, elf_addr, frames, count); /* stored as the entry holds it */
	}
	if (s->json)
		print_json(s, addr, frames, count);
	else
		print_text(s, addr, frames, count);
	if (!borrowed)
		free(frames); /* its strings are borrowed too (covered) */
	return source;
}

/* The memo's answer for address: its slot's offset and length (length 0: none), from a slot in cache. */
static struct memo_slot memo_find(struct answer_memo *m, uint64_t address)
{
	return m->used ? *memo_slot(m, address) : (struct memo_slot){ 0 };
}

#define PREFETCH_AHEAD 16 /* addresses whose memo slot, then answer, are fetched from memory while one is copied */

/*
 * Answers addresses, in this order, as text. First each address's memo slot is found; then each answer is
 * copied from the memo, or found (and noted in the memo: memo_note) and written. On a list of random
 * addresses the time went to waiting for memory, the slot and then the answer of each: both are prefetched
 * PREFETCH_AHEAD addresses ahead.
 */
static void answer_batch_text(struct symbolize *s, const uint64_t *addresses, size_t count)
{
	struct answer_memo *m = &s->memo;
	struct memo_slot *found = NULL;

	/* With nothing in the memo (a cold run keeps no answers there), found[] is not filled: its 64 KiB were
	 * a tenth of what the symbol cache's answers add to a cold run's peak. */
	if (m->used) {
		GROW(s->found, s->found_capacity, count);
		found = s->found;
		for (size_t i = 0; i < count; i++) {
			if (i + PREFETCH_AHEAD < count)
				__builtin_prefetch(&m->slots[memo_hash(addresses[i + PREFETCH_AHEAD], m->slot_count)]);
			found[i] = memo_find(m, addresses[i]);
		}
	}
	for (size_t i = 0; i < count; i++) {
		struct memo_slot slot = found ? found[i] : (struct memo_slot){ 0 };

		if (found && i + PREFETCH_AHEAD < count && found[i + PREFETCH_AHEAD].length)
			__builtin_prefetch(m->text.data + found[i + PREFETCH_AHEAD].offset);
		if (!slot.length)
			slot = memo_find(m, addresses[i]); /* kept earlier in this batch? */
		if (slot.length) {
			put_bytes(&s->out, m->text.data + slot.offset, slot.length);
		} else {
			size_t start = s->out.size;
			enum answer_source source = answer_address(s, addresses[i]);

			/* An answer found and added to the symbol cache's is in its pending answers the next time
			 * (ANSWER_PENDING), and is formatted from there each time it is asked again: the memo keeps
			 * neither its address (on a list of distinct addresses a slot for each) nor its text (on a
			 * C++ program's skewed list 1.3 MiB of a cold run's 8.5 MiB peak, against addr2line's 6.3,
			 * for a third of its CPU time; it stays four times as fast as addr2line). The memo is for
			 * the entry's answers (warm) and for runs without the cache. */
			if (source == ANSWER_ENTRY || !s->caching)
				memo_note(m, addresses[i], s->out.data + start, s->out.size - start);
		}
		if (s->out.size >= FLUSH_SIZE)
			flush_answers(s, false);
	}
}

#define TEXT_BATCH 4096 /* addresses whose memo slots are found at once: found[] stays small */

/* Answers addresses, in this order. */
static void answer_batch(struct symbolize *s, const uint64_t *addresses, size_t count)
{
	if (!s->json) {
		for (size_t i = 0; i < count; i += TEXT_BATCH)
			answer_batch_text(s, addresses + i, count - i < TEXT_BATCH ? count - i : TEXT_BATCH);
		return;
	}
	for (size_t i = 0; i < count; i++)
		answer_address(s, addresses[i]);
}

/* The address on a line or argument: bfd_scan_vma's reading, cut to 32 bits for a 32-bit ELF file. */
static uint64_t address_of(const struct symbolize *s, const char *text)
{
	uint64_t addr = parse_address(text);

	return s->address_digits == 8 ? addr & 0xffffffffu : addr;
}

/*
 * The addresses of the complete lines in buf[*start, size) into s->lines, *start moved past them. A line
 * that is just an address ends at its digits, and is read without looking for its end first; any other is
 * cut at its newline and read as a whole. buf[size] must be writable (a NUL is put there, so that reading
 * digits stops at the end of the data).
 */
static size_t read_lines(struct symbolize *s, char *buf, size_t *start, size_t size)
{
	size_t count = 0, at = *start;

	buf[size] = '\0';
	while (at < size) {
		const char *end;
		char *nl;
		uint64_t addr;

		if (parse_hex_address(buf + at, &addr, &end) && *end == '\n') {
			nl = (char *)end;
		} else {
			nl = memchr(buf + at, '\n', size - at);
			if (!nl)
				break; /* the rest of this line is still to come */
			*nl = '\0';
			addr = parse_address(buf + at);
		}
		if (count == s->lines_capacity)
			GROW(s->lines, s->lines_capacity, count + 1);
		s->lines[count++] = s->address_digits == 8 ? addr & 0xffffffffu : addr;
		at = (size_t)(nl - buf) + 1;
	}
	*start = at;
	return count;
}

/*
 * Answers each line of stdin. Input is read in blocks, all complete lines of a block are answered (as one
 * batch), and the answers are flushed before the next read, which may wait: a program on the other end of a
 * pipe, sending one address at a time, has its answer before we wait for its next address, and a file of
 * addresses is answered without a write per address. Blocks of 16 KiB, not 64: the addresses of a block
 * (8 bytes each) and their memo slots (16) are held at once, 3.5 times the block, and a read per 2,000
 * addresses costs nothing next to answering them.
 */
static void answer_stdin(struct symbolize *s)
{
	size_t size = 0, capacity = 1 << 14, start = 0, lines;
	char *buf = xmalloc(capacity + 1);

	for (;;) {
		ssize_t n;

		/* Not answer_batch(s, s->lines, read_lines(...)): the order arguments are evaluated in is the
		 * compiler's, and read_lines may move s->lines (clang read the old pointer: a use after free). */
		lines = read_lines(s, buf, &start, size);
		answer_batch(s, s->lines, lines);
		memmove(buf, buf + start, size - start); /* the part of a line read so far */
		size -= start;
		start = 0;
		if (size == capacity) {
			capacity *= 2;
			buf = xrealloc(buf, capacity + 1);
		}
		flush_answers(s, true);
		n = read(STDIN_FILENO, buf + size, capacity - size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		size += (size_t)n;
	}
	if (size) { /* a last line without its newline */
		uint64_t addr;

		buf[size] = '\0';
		addr = address_of(s, buf);
		answer_batch(s, &addr, 1);
	}
	free(buf);
}

/* Answers the ADDR arguments. */
static void answer_arguments(struct symbolize *s, char **args, size_t count)
{
	uint64_t *addresses = xcalloc(count, sizeof(*addresses));

	for (size_t i = 0; i < count; i++)
		addresses[i] = address_of(s, args[i]);
	answer_batch(s, addresses, count);
	free(addresses);
}

int cmd_symbolize(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "exe", required_argument, NULL, 'e' },
		{ "addresses", no_argument, NULL, 'a' },
		{ "functions", no_argument, NULL, 'f' },
		{ "inlines", no_argument, NULL, 'i' },
		{ "demangle", no_argument, NULL, 'C' },
		{ "pretty-print", no_argument, NULL, 'p' },
		{ "basenames", no_argument, NULL, 's' },
		{ "section", required_argument, NULL, 'j' },
		{ "target", required_argument, NULL, 'b' },
		{ "recurse-limit", no_argument, NULL, 'r' },
		{ "no-recurse-limit", no_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'J' },
		{ "debug-dir", required_argument, NULL, 'd' },
		{ "debuginfod", required_argument, NULL, 'U' },
		{ "no-cache", no_argument, NULL, 'K' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' }, /* -V, and -H for help: addr2line's short forms */
		{ 0 },
	};
	struct symbolize s = { .address_digits = 16 };
	struct module_file_callbacks callbacks;
	struct profile_module m = { 0 };
	char build_id[2 * 64 + 1];
	const char *binary = "a.out"; /* addr2line's default */
	char *cache_dir = NULL;
	bool no_cache = false;
	int opt, status = 0;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "e:afiCpsj:b:rRvhHV", long_options, NULL)) != -1) {
		switch (opt) {
		case 'e': binary = optarg; break;
		case 'a': s.addresses = true; break;
		case 'f': s.functions = true; break;
		case 'i': s.inlines = true; break;
		case 'C': s.options.demangle = true; break;
		case 'p': s.pretty = true; break;
		case 's': s.basenames = true; break;
		case 'j': s.section_name = optarg; break;
		case 'b': /* addr2line's BFD target: libelf reads every ELF target itself, and nothing else */
			if (strncmp(optarg, "elf32-", 6) && strncmp(optarg, "elf64-", 6) && strcmp(optarg, "default")) {
				error("'%s': invalid bfd target: only ELF is read (elf64-x86-64, elf32-i386, ...)", optarg);
				status = 1; /* as addr2line's exit status for it */
				goto release_options;
			}
			break;
		case 'r': /* addr2line's demangler recursion limit: libiberty's default applies */
		case 'R': break;
		case 'J': s.json = true; break;
		case 'd':
			if (symbolizer_options_add_debug_dir(&s.options, optarg) < 0) {
				status = 2;
				goto release_options;
			}
			break;
		case 'U': setenv("DEBUGINFOD_URLS", optarg, 1); break; /* libdebuginfod and libdwfl read it */
		case 'K': no_cache = true; break;
		case 'v': verbose = true; break;
		case 'h':
		case 'H': usage(stdout); goto release_options;
		case 'V': printf("stackrec symbolize %s\n", STACKREC_VERSION); goto release_options;
		default: usage(stderr); status = 2; goto release_options;
		}
	}

	/* Opened as convert opens a recorded module: its path and the build ID read from the file now. */
	if (read_build_id(binary, build_id, sizeof(build_id)) < 0) {
		status = 1;
		goto release_options;
	}
	m.path = realpath(binary, NULL);
	if (!m.path) {
		error("cannot open '%s': %s", binary, strerror(errno));
		status = 1;
		goto release_options;
	}
	m.build_id = build_id[0] ? build_id : NULL;
	if (!no_cache)
		cache_dir = cache_dir_default();
	s.options.symbol_cache_dir = cache_dir;
	debug_copies_set_dir(cache_dir);
	s.options.cache_rules = "addr2line";
	module_file_callbacks_init(&callbacks, &s.options.search);
	symbolizer_module_open(&s.module, &m, &s.options, &callbacks);
	s.module.borrow_names = true; /* each answer is printed at once: no copies of its names */
	s.caching = s.module.cache.dir && !s.section_name;
	if (s.module.file.reason) {
		error("cannot use '%s': %s", binary, s.module.file.reason);
		status = 1;
	} else {
		if (gelf_getclass(s.module.file.elf) == ELFCLASS32)
			s.address_digits = 8;
		if (s.section_name && !named_section(&s)) {
			error("'%s' has no section '%s'", binary, s.section_name);
			status = 1;
		} else if (optind < argc) {
			answer_arguments(&s, argv + optind, (size_t)(argc - optind));
		} else {
			answer_stdin(&s);
		}
		flush_answers(&s, false);
		if (ferror(stdout) || fflush(stdout) == EOF) {
			error("cannot write the answers: %s", strerror(errno));
			status = 1;
		}
	}
	free(s.out.data);
	free(s.sections);
	memo_release(&s.memo);
	free(s.found);
	free(s.lines);
	free(s.cached);
	symbolizer_module_close(&s.module);
	for (size_t i = 0; i < s.symtab_count; i++) /* after the module: its cache pools these by pointer */
		free(s.symtab[i].function);
	free(s.symtab);
	module_file_callbacks_release(&callbacks);
	free(m.path);
	debug_copies_set_dir(NULL);
	free(cache_dir);
release_options:
	symbolizer_options_release(&s.options);
	return status;
}
