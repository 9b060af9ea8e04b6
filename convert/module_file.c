/*
 * module_file.c — opening a module's file for the symbolizer and the unwinder (see module_file.h).
 */
#include "module_file.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util.h"
#include "zstd_sections.h"

void module_file_callbacks_init(struct module_file_callbacks *cb, const struct debug_file_search *search)
{
	memset(cb, 0, sizeof(*cb));
	cb->debuginfo_path = debug_file_dwfl_path(search);
	cb->callbacks.find_elf = dwfl_build_id_find_elf;
	cb->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	cb->callbacks.section_address = dwfl_offline_section_address;
	cb->callbacks.debuginfo_path = &cb->debuginfo_path;
	elf_version(EV_CURRENT);
}

void module_file_callbacks_release(struct module_file_callbacks *cb)
{
	free(cb->debuginfo_path);
	cb->debuginfo_path = NULL;
}

void module_file_open(struct module_file *mf, const struct profile_module *m, const struct debug_file_search *search,
		      const struct module_file_callbacks *cb)
{
	struct debug_file file;
	const char *reason = NULL;
	char *name;
	int decompressed;

	memset(mf, 0, sizeof(*mf));
	if (debug_file_find(search, m->path, m->build_id, &file, &reason) < 0) {
		debug("'%s'%s%s: %s", m->path, m->build_id ? " build ID " : "", m->build_id ? m->build_id : "",
		      reason);
		mf->reason = reason;
		return;
	}
	mf->path = file.path;
	decompressed = zstd_sections_decompress(file.fd, file.path);
	if (decompressed >= 0) {
		close(file.fd);
		file.fd = decompressed;
	}
	mf->dwfl = dwfl_begin(&cb->callbacks);
	if (!mf->dwfl) {
		close(file.fd);
		mf->reason = "libdwfl failed";
		return;
	}
	name = profile_module_short_name(m);
	dwfl_report_begin(mf->dwfl);
	mf->mod = dwfl_report_elf(mf->dwfl, name, file.path, file.fd, 0, false);
	free(name);
	dwfl_report_end(mf->dwfl, NULL, NULL);
	if (!mf->mod) {
		close(file.fd);
		debug("'%s': %s", file.path, dwfl_errmsg(-1));
		mf->reason = "not an ELF file";
		return;
	}
	mf->elf = dwfl_module_getelf(mf->mod, &mf->bias);
	if (!mf->elf)
		mf->reason = "not an ELF file";
}

void module_file_close(struct module_file *mf)
{
	if (mf->dwfl)
		dwfl_end(mf->dwfl);
	free(mf->path);
	memset(mf, 0, sizeof(*mf));
}

/* The PT_LOAD segment holding file offset off, among executable segments or the others. */
static bool segment_address(Elf *elf, size_t phnum, uint64_t off, bool executable, GElf_Addr *vaddr)
{
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (!ph || ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) != !executable)
			continue;
		if (off >= ph->p_offset && off - ph->p_offset < ph->p_filesz) {
			*vaddr = off - ph->p_offset + ph->p_vaddr;
			return true;
		}
	}
	return false;
}

bool module_file_address(const struct module_file *mf, uint64_t off, Dwarf_Addr *addr)
{
	GElf_Addr vaddr;
	size_t phnum;

	if (!mf->elf || elf_getphdrnum(mf->elf, &phnum) < 0)
		return false;
	/* Executable segments first; then any (rare: data executed, or a writable text). */
	if (!segment_address(mf->elf, phnum, off, true, &vaddr) && !segment_address(mf->elf, phnum, off, false, &vaddr))
		return false;
	*addr = vaddr + mf->bias;
	return true;
}
