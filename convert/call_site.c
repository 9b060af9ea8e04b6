/*
 * call_site.c — whether a return address comes back from a call to a given function (see call_site.h).
 *
 * Everything read is the module's file as found by build ID (hostile: every offset is checked against the
 * file's size and its executable segments). x86-64 only, as the unwinder is.
 */
#include "call_site.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define CALL_MAX_LENGTH 9 /* notrack, REX, FF, ModRM, SIB, disp32: the longest indirect call */

/* The file's bytes at ELF address addr through its executable PT_LOAD segments: *before bytes before it and
 * *after from it on, within the segment. NULL when addr is in none (or the file has no bytes: a debug file). */
static const unsigned char *code_at(const struct module_file *mf, GElf_Addr addr, size_t *before, size_t *after)
{
	size_t size;
	const unsigned char *raw = mf->elf && !mf->debug_only ? (const unsigned char *)elf_rawfile(mf->elf, &size) : NULL;

	if (!raw)
		return NULL;
	for (size_t i = 0; i < mf->segment_count; i++) {
		const struct module_segment *s = &mf->segments[i];

		if (!s->executable || addr < s->vaddr || addr - s->vaddr > s->size || s->offset > size ||
		    s->size > size - s->offset)
			continue;
		*before = addr - s->vaddr;
		*after = s->size - *before;
		return raw + s->offset + *before;
	}
	return NULL;
}

static int32_t read_le32(const unsigned char *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* The length of an FF /2 (call r/m64) at p, from its ModRM, SIB and displacement; 0 when p is not one. */
static size_t indirect_call_length(const unsigned char *p, size_t avail)
{
	size_t n = 0;
	unsigned mod, rm;

	if (n < avail && p[n] == 0x3e) /* notrack (CET) */
		n++;
	if (n < avail && (p[n] & 0xf0) == 0x40) /* REX */
		n++;
	if (n + 2 > avail || p[n] != 0xff || ((p[n + 1] >> 3) & 7) != 2)
		return 0;
	mod = p[n + 1] >> 6;
	rm = p[n + 1] & 7;
	n += 2;
	if (mod == 3)
		return n;
	if (rm == 4) { /* SIB */
		if (n >= avail)
			return 0;
		if (mod == 0 && (p[n] & 7) == 5)
			n += 4; /* no base: disp32 */
		n++;
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		n += 4; /* disp32, or rip + disp32 */
	return n;
}

enum call_kind {
	NO_CALL,
	DIRECT_CALL,
	INDIRECT_CALL,
	MADE_RETURN, /* no call, but where the kernel, the C library or Go's runtime has a function return (made_return) */
};

/* The instruction that ends where end does (before bytes of code before it): a call, and a direct one's target
 * displacement. Bytes that merely decode as a call are taken as one: only "no call" is a finding. */
static enum call_kind call_before(const unsigned char *end, size_t before, int32_t *displacement)
{
	if (before >= 5 && end[-5] == 0xe8) {
		*displacement = read_le32(end - 4);
		return DIRECT_CALL;
	}
	for (size_t length = 2; length <= CALL_MAX_LENGTH && length <= before; length++)
		if (indirect_call_length(end - length, length) == length)
			return INDIRECT_CALL;
	return NO_CALL;
}

/* The name of the symbol whose relocation fills the GOT slot at ELF address slot, or NULL. */
static const char *slot_symbol(Elf *elf, GElf_Addr slot)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr shdr, link_shdr;
		Elf_Data *data;
		Elf_Scn *symtab;
		size_t count;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA || shdr.sh_entsize != sizeof(Elf64_Rela) ||
		    !(data = elf_getdata(scn, NULL)) || !(symtab = elf_getscn(elf, shdr.sh_link)) ||
		    !gelf_getshdr(symtab, &link_shdr))
			continue;
		count = data->d_size / shdr.sh_entsize;
		for (size_t i = 0; i < count; i++) {
			GElf_Rela rela;
			GElf_Sym sym;
			Elf_Data *syms;

			if (!gelf_getrela(data, (int)i, &rela) || rela.r_offset != slot)
				continue;
			/* IRELATIVE and the like have no symbol: which function the slot gets is decided at run time */
			if (!GELF_R_SYM(rela.r_info) || !(syms = elf_getdata(symtab, NULL)) ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(rela.r_info), &sym) ||
			    GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC)
				return NULL;
			return elf_strptr(elf, link_shdr.sh_link, sym.st_name);
		}
	}
	return NULL;
}

/* The PLT section (.plt, .plt.sec, .plt.got) holding ELF address addr into *shdr: false when none does. */
static bool plt_section(Elf *elf, GElf_Addr addr, GElf_Shdr *shdr)
{
	size_t strndx;

	if (!elf || elf_getshdrstrndx(elf, &strndx) < 0)
		return false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		const char *name;

		if (gelf_getshdr(scn, shdr) && (shdr->sh_flags & SHF_EXECINSTR) && addr >= shdr->sh_addr &&
		    addr - shdr->sh_addr < shdr->sh_size && (name = elf_strptr(elf, strndx, shdr->sh_name)) &&
		    !strncmp(name, ".plt", 4))
			return true;
	}
	return false;
}

/* Whether ELF address addr is in a PLT section. */
static bool in_plt(Elf *elf, GElf_Addr addr)
{
	GElf_Shdr shdr;

	return plt_section(elf, addr, &shdr);
}

/*
 * The function a PLT entry at ELF address entry jumps to: its `jmp *SLOT(%rip)` (after an endbr64 and a bnd
 * prefix, as .plt.sec entries have them), and the symbol the slot's relocation names. NULL when that is not
 * what the entry holds (the lazy-binding entry 0, an IFUNC).
 */
static const char *plt_target(const struct module_file *mf, GElf_Addr entry)
{
	static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t before, after, n = 0;
	const unsigned char *p = code_at(mf, entry, &before, &after);

	if (!p)
		return NULL;
	if (after >= sizeof(endbr64) && !memcmp(p, endbr64, sizeof(endbr64)))
		n += sizeof(endbr64);
	if (n < after && p[n] == 0xf2) /* bnd */
		n++;
	if (n + 6 > after || p[n] != 0xff || p[n + 1] != 0x25)
		return NULL;
	return slot_symbol(mf->elf, entry + n + 6 + (GElf_Addr)(int64_t)read_le32(p + n + 2));
}

const char *call_site_plt_function(const struct module_file *mf, GElf_Addr addr)
{
	GElf_Shdr shdr;
	uint64_t entry_size;

	if (!plt_section(mf->elf, addr, &shdr))
		return NULL;
	entry_size = shdr.sh_entsize >= 8 && shdr.sh_entsize <= 32 ? shdr.sh_entsize : 16;
	return plt_target(mf, addr - (addr - shdr.sh_addr) % entry_size);
}

/* The code at the return address at file offset ra_offset of mf: its Dwfl address in *ra_addr, how many bytes
 * there are before it in *before and from it on in *after. NULL when it cannot be read. */
static const unsigned char *code_around(const struct module_file *mf, uint64_t ra_offset, Dwarf_Addr *ra_addr,
					size_t *before, size_t *after)
{
	return module_file_address(mf, ra_offset, ra_addr) ? code_at(mf, *ra_addr - mf->bias, before, after) : NULL;
}

/* Whether the code at at (after bytes from it on) is glibc's __start_context, where makecontext has the context's
 * function return: mov %rbx, %rsp; mov (%rsp), %rdi; test %rdi, %rdi (after an endbr64 where glibc is built for
 * CET). */
static bool start_context_at(const unsigned char *at, size_t after)
{
	static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const unsigned char start_context[] = { 0x48, 0x89, 0xdc, 0x48, 0x8b, 0x3c, 0x24, 0x48, 0x85, 0xff };
	size_t skip = after >= sizeof(endbr64) && !memcmp(at, endbr64, sizeof(endbr64)) ? sizeof(endbr64) : 0;

	return after - skip >= sizeof(start_context) && !memcmp(at + skip, start_context, sizeof(start_context));
}

/* Whether the code at at (before bytes before it, after from it on) is where a return address no call made
 * leads: a signal handler's, a makecontext function's or a goroutine's, which the kernel, the C library or Go's
 * runtime put on the stack. */
static enum call_site_made made_return(const unsigned char *at, size_t before, size_t after)
{
	/* mov $15, %rax; syscall: rt_sigreturn (glibc's __restore_rt, after a nop) */
	static const unsigned char sigreturn[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };

	if (after >= sizeof(sigreturn) && !memcmp(at, sigreturn, sizeof(sigreturn)))
		return CALL_SITE_MADE_SIGRETURN;
	if (start_context_at(at, after))
		return CALL_SITE_MADE_START_CONTEXT;
	/* Go's runtime.goexit + 1: a nop, then the call of goexit1 that ends a goroutine whose function returned */
	if (before >= 1 && after >= 1 && at[-1] == 0x90 && at[0] == 0xe8)
		return CALL_SITE_MADE_GOEXIT;
	return CALL_SITE_MADE_NONE;
}

/* What comes before the return address at (before bytes before it, after from it on): call_before's answer,
 * or MADE_RETURN where no call made it but it is one. */
static enum call_kind return_address_kind(const unsigned char *at, size_t before, size_t after, int32_t *displacement)
{
	enum call_kind kind = call_before(at, before, displacement);

	return kind == NO_CALL && made_return(at, before, after) != CALL_SITE_MADE_NONE ? MADE_RETURN : kind;
}

enum call_site_made call_site_made_return(const struct module_file *mf, uint64_t ra_offset)
{
	Dwarf_Addr ra_addr;
	size_t before, after;
	const unsigned char *at = code_around(mf, ra_offset, &ra_addr, &before, &after);

	return at ? made_return(at, before, after) : CALL_SITE_MADE_NONE;
}

bool call_site_follows_no_call(const struct module_file *mf, uint64_t ra_offset)
{
	Dwarf_Addr ra_addr;
	size_t before, after;
	int32_t displacement;
	const unsigned char *at = code_around(mf, ra_offset, &ra_addr, &before, &after);

	return at && return_address_kind(at, before, after, &displacement) == NO_CALL;
}

enum call_site call_site_check(const struct call_site_module *ra, uint64_t ra_offset, const struct call_site_module *pc,
			       Dwarf_Addr pc_addr)
{
	Dwarf_Addr ra_addr;
	GElf_Sym pc_sym;
	const char *pc_name, *target_name;
	const unsigned char *end;
	size_t before, after;
	int32_t displacement;
	GElf_Addr target, entry;

	if (!(end = code_around(ra->file, ra_offset, &ra_addr, &before, &after)))
		return CALL_SITE_UNKNOWN;
	switch (return_address_kind(end, before, after, &displacement)) {
	case NO_CALL:
		return CALL_SITE_NONE;
	case INDIRECT_CALL:
	case MADE_RETURN:
		return CALL_SITE_UNKNOWN;
	case DIRECT_CALL:
		break;
	}
	if (!(pc_name = elf_symbols_lookup(pc->symbols, pc->file->mod, pc_addr, &pc_sym)))
		return CALL_SITE_UNKNOWN;
	target = ra_addr + (GElf_Addr)(int64_t)displacement; /* a Dwfl address of ra's module */
	entry = pc_sym.st_value + pc->file->bias;
	/* Not through the PLT, a direct call lands in ra's own module: the function's entry, or another place. */
	if (!in_plt(ra->file->elf, target - ra->file->bias))
		return ra->file == pc->file && target == entry ? CALL_SITE_CALLS : CALL_SITE_OTHER;
	/* Through the PLT, to the function its slot's relocation names, in whichever module defines it. */
	if (!*pc_name || !(target_name = plt_target(ra->file, target - ra->file->bias)) || !*target_name)
		return CALL_SITE_UNKNOWN;
	return strcmp(target_name, pc_name) ? CALL_SITE_OTHER : CALL_SITE_CALLS;
}
