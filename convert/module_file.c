/*
 * module_file.c — opening a module's file for the symbolizer and the unwinder (see module_file.h).
 */
#include "module_file.h"

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cache_dir.h"
#include "../util.h"
#include "debuginfod_client.h"
#include "input_file.h"
#include "zstd_sections.h"

/*
 * The walk over the files dwfl_standard_find_debuginfo may open: each is checked, and those that exist other than
 * the module's own file are counted. None such means the search can only fail, and libdwfl would then load
 * libdebuginfod (libcurl and some thirty libraries: 8 MiB and 12 ms) even with no server to ask.
 */
struct candidate_walk {
	const char *root;
	struct stat self;
	bool have_self;
	size_t others;
	char **identity; /* module_file_identity's walk: each candidate that is a file is added to it, none checked */
	const struct debug_file_search *search; /* ... found by this search */
};

static void identify_file(char **identity, const char *path, const struct debug_file_search *search);

static bool candidate_ok(struct candidate_walk *w, const char *path)
{
	struct stat st;

	if (w->identity) {
		identify_file(w->identity, path, w->search);
		return true;
	}
	if (stat(path, &st) == 0 && !(w->have_self && st.st_dev == w->self.st_dev && st.st_ino == w->self.st_ino))
		w->others++;
	return input_file_candidate_ok_under(w->root, path);
}

/* Checks each of dir/sub/name for a suffix sub of subdirs (all of its trailing components, as libdwfl's
 * search explores them). */
static bool names_ok(struct candidate_walk *w, const char *dir, const char *subdirs, const char *const *names,
		     size_t name_count)
{
	bool ok = true;

	for (const char *sub = subdirs; ok && sub; sub = strchr(sub + 1, '/')) {
		while (*sub == '/')
			sub++;
		for (size_t i = 0; ok && i < name_count; i++) {
			char *candidate = *sub ? xasprintf("%s/%s/%s", dir, sub, names[i]) : xasprintf("%s/%s", dir, names[i]);

			ok = candidate_ok(w, candidate);
			free(candidate);
		}
		if (!*sub)
			break;
	}
	return ok;
}

/*
 * Whether every file dwfl_standard_find_debuginfo may open for the module at file_name is safe to open: it
 * opens them with a plain open() (a FIFO blocks it for good) and computes CRCs by reading to the end (/dev/zero
 * never ends), then libdw inflates their compressed sections at the sizes they declare. The candidates follow
 * its search (elfutils libdwfl/find-debuginfo.c): DIR/.build-id/xx/rest.debug for each absolute DIR of the
 * path; then the link name (or BASENAME.debug, and BASENAME) in the file's directory, in each relative DIR
 * under it, under each absolute DIR followed by each tail of the file's directory, and in the .dwz
 * subdirectories where it looks for .gnu_debugaltlink files. A superset is fine: candidates are stat'ed,
 * and the few that exist opened without blocking.
 */
static bool debuginfo_candidates_ok(struct candidate_walk *w, Dwfl_Module *mod, const char *path_list,
				    const char *file_name, const char *debuglink)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int bits_len = dwfl_module_build_id(mod, &bits, &vaddr);
	char *hex = bits_len > 1 ? xmalloc(2 * (size_t)bits_len + 1) : NULL;
	char *list = xstrdup(path_list ? path_list : ""), *save = NULL, *dir_copy, *base_copy, *made_up = NULL;
	const char *names[3], *file_dir, *base;
	size_t name_count = 0;
	bool ok = true;

	if (hex)
		hex_encode(hex, bits, (size_t)bits_len);
	dir_copy = xstrdup(file_name ? file_name : "");
	base_copy = xstrdup(file_name ? file_name : "");
	file_dir = dirname(dir_copy);
	base = basename(base_copy);
	if (debuglink) {
		names[name_count++] = debuglink;
		if (strchr(debuglink, '/'))
			names[name_count++] = strrchr(debuglink, '/') + 1;
	} else {
		names[name_count++] = made_up = xasprintf("%s.debug", base);
		names[name_count++] = base;
	}
	if (debuglink && debuglink[0] == '/')
		ok = candidate_ok(w, debuglink);
	for (char *d = strtok_r(list, ":", &save); ok && d; d = strtok_r(NULL, ":", &save)) {
		if (*d == '+' || *d == '-')
			d++;
		if (*d == '/') {
			char *by_id = hex ? xasprintf("%s/.build-id/%.2s/%s.debug", d, hex, hex + 2) : NULL;
			char *dwz = xasprintf("%s/.dwz", d);

			ok = (!by_id || candidate_ok(w, by_id)) && names_ok(w, d, file_dir, names, name_count) &&
			     names_ok(w, d, "", names, name_count) && names_ok(w, dwz, "", names, name_count);
			free(by_id);
			free(dwz);
		} else {
			char *sub = xasprintf("%s/%s", file_dir, d);

			ok = names_ok(w, sub, "", names, name_count);
			free(sub);
		}
	}
	if (ok) {
		char *dwz = xasprintf("%s/.dwz", file_dir);

		ok = names_ok(w, file_dir, "", names, name_count) && names_ok(w, dwz, "", names, name_count);
		free(dwz);
	}
	free(made_up);
	free(dir_copy);
	free(base_copy);
	free(list);
	free(hex);
	return ok;
}

/* mod's build ID in lowercase hex into hex (2 * 64 + 1 bytes); false when it has none. */
static bool build_id_hex(Dwfl_Module *mod, char *hex)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int bits_len = dwfl_module_build_id(mod, &bits, &vaddr);

	if (bits_len <= 1 || bits_len > 64)
		return false;
	hex_encode(hex, bits, (size_t)bits_len);
	return true;
}

/*
 * The separate debug file of mod, decompressed on all cores (zstd_sections.h), found where libdwfl's search
 * would find it first: by build ID (debug_file_debuginfo_by_build_id), else by its .gnu_debuglink (link with
 * crc; debug_file_debuginfo_by_link). *name takes the path (libdwfl frees it). -1: libdwfl's search decides.
 */
static int debuginfo_decompressed(Dwfl_Module *mod, const char *root, const char *path_list, const char *file_name,
				  const char *link, GElf_Word crc, bool cfi_only, char **name)
{
	char hex[2 * 64 + 1], *path = NULL;
	bool have_id = build_id_hex(mod, hex);
	int fd = have_id ? debug_file_debuginfo_by_build_id(root, path_list, hex, cfi_only, &path) : -1;

	/* libdwfl's path search comes after its build-ID search found nothing usable. */
	if (fd < 0 && link && crc)
		fd = debug_file_debuginfo_by_link(root, path_list, file_name, link, crc, have_id ? hex : NULL,
						  cfi_only, &path);
	if (fd < 0) {
		free(path);
		return -1;
	}
	free(*name);
	*name = path;
	return fd;
}

/*
 * Whether libdwfl asks checked_find_debuginfo for mod's dwz file (find_debug_altlink in libdwfl/
 * dwfl_module_getdwarf.c: the .gnu_debugaltlink's name as the link, CRC 0) rather than for its debug file (the
 * main file's .gnu_debuglink). Then its DWARF is open already, and the link's build ID goes into hex.
 */
static bool alt_link_asked(Dwfl_Module *mod, const char *debuglink, GElf_Word crc, char *hex)
{
	GElf_Addr bias;
	GElf_Word main_crc;
	Elf *main_elf;
	const char *main_link, *alt_name;
	const void *alt_id;
	ssize_t alt_len;
	Dwarf *dw;

	if (!debuglink || crc)
		return false;
	/* A .gnu_debuglink with CRC 0 is asked for just so: then mod's DWARF is not to be asked for (libdwfl
	 * would be looking for it). */
	main_elf = dwfl_module_getelf(mod, &bias);
	main_link = main_elf ? dwelf_elf_gnu_debuglink(main_elf, &main_crc) : NULL;
	if (main_link && !main_crc && !strcmp(main_link, debuglink))
		return false;
	dw = dwfl_module_getdwarf(mod, &bias);
	alt_len = dw ? dwelf_dwarf_gnu_debugaltlink(dw, &alt_name, &alt_id) : -1;
	if (alt_len < 3 || alt_len > 64 || strcmp(alt_name, debuglink))
		return false;
	hex_encode(hex, alt_id, (size_t)alt_len);
	return true;
}

/*
 * libdwfl's find_debuginfo callback: dwfl_standard_find_debuginfo, once every file it may open has been
 * checked (debuginfo_candidates_ok), for the file's name as given and as its symbolic links resolve.
 * userdata is the module's, set by module_file_open to its callbacks.
 */
static int checked_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
				  const char *file_name, const char *debuglink, GElf_Word crc, char **debuginfo_file_name)
{
	const struct module_file_callbacks *cb = *userdata;
	struct candidate_walk w = { 0 };
	const char *path_list = cb ? cb->debuginfo_path : NULL, *root = cb ? cb->symfs : NULL;
	char *canonical, *path = NULL, alt_hex[2 * 64 + 1];
	bool ok, alt;
	int fd;

	/* The dwz file, found as libdw would find it (which libdwfl's search cannot, below) and decompressed on
	 * all cores: else libdw opens it and libelf inflates its sections one after the other (the assembler's:
	 * 9 MB of zlib). The unwinder reads only .debug_frame, which never refers to it. */
	alt = alt_link_asked(mod, debuglink, crc, alt_hex);
	if (alt && cb && cb->cfi_only)
		return -1;
	if (alt &&
	    (fd = debug_file_debuginfo_alt(root, path_list, file_name, debuglink, alt_hex, &path)) >= 0) {
		free(*debuginfo_file_name);
		*debuginfo_file_name = path;
		return fd;
	}
	/* The vDSO's image, named by no path (debug_file.c): libdwfl's search would take that name for a file in
	 * the current directory ("[vdso] embedded in the recording.debug", ./.debug/...). By build ID only. */
	if (file_name && (!strcmp(file_name, DEBUG_FILE_RECORDED_VDSO) || !strcmp(file_name, DEBUG_FILE_RUNNING_VDSO))) {
		char hex[2 * 64 + 1];

		fd = debuginfo_decompressed(mod, root, path_list, NULL, NULL, 0, cb && cb->cfi_only, debuginfo_file_name);
		/* and from the debuginfod servers, which libdwfl's search asks after its paths */
		if (fd < 0 && debuginfod_client_wanted() && build_id_hex(mod, hex)) {
			fd = debuginfod_client_find_debuginfo(hex, &path);
			if (fd >= 0) {
				free(*debuginfo_file_name);
				*debuginfo_file_name = path;
			} else {
				free(path);
			}
		}
		return fd;
	}
	canonical = file_name ? realpath(file_name, NULL) : NULL;

	/* A .gnu_debuglink (it has a CRC; a .gnu_debugaltlink has none and may be a path) names a file beside
	 * the binary: a path in it would lead the search out of --symfs and the debug directories. */
	if (debuglink && crc && strchr(debuglink, '/')) {
		char *what = xasprintf("has a .gnu_debuglink that is a path ('%s'): not followed", debuglink);

		input_file_refused(file_name ? file_name : modname, what);
		free(what);
		free(canonical);
		return -1;
	}
	w.root = root;
	w.have_self = file_name && stat(file_name, &w.self) == 0;
	ok = debuginfo_candidates_ok(&w, mod, path_list, file_name, debuglink) &&
	     (!canonical || !strcmp(canonical, file_name) ||
	      debuginfo_candidates_ok(&w, mod, path_list, canonical, debuglink));
	free(canonical);
	if (!ok)
		return -1;
	/* The debug file found by build ID or .gnu_debuglink as libdwfl would find it, its compressed sections
	 * decompressed on all cores rather than by libelf on one (which reads no zstd ones). Not for a
	 * .gnu_debugaltlink (a link without a CRC): its dwz file was looked for above. */
	if (!(debuglink && !crc) &&
	    (fd = debuginfo_decompressed(mod, root, path_list, file_name, debuglink, crc, cb && cb->cfi_only,
					 debuginfo_file_name)) >= 0)
		return fd;
	/* Nothing to find but through debuginfod, and no server to ask (see struct candidate_walk). A dwz file
	 * (a .gnu_debugaltlink: a link without a CRC) not found above libdwfl's search cannot find either,
	 * whatever exists: it wants the module's own build ID in it; libdw then looks for the file itself
	 * (libdw/dwarf_getalt.c). */
	if ((!w.others || (debuglink && !crc)) && !debuginfod_client_wanted())
		return -1;
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink, crc,
					    debuginfo_file_name);
}

void module_file_callbacks_init(struct module_file_callbacks *cb, const struct debug_file_search *search)
{
	memset(cb, 0, sizeof(*cb));
	cb->debuginfo_path = debug_file_dwfl_path(search);
	cb->symfs = search->symfs ? xstrdup(search->symfs) : NULL;
	cb->callbacks.find_elf = dwfl_build_id_find_elf;
	cb->callbacks.find_debuginfo = checked_find_debuginfo;
	cb->callbacks.section_address = dwfl_offline_section_address;
	cb->callbacks.debuginfo_path = &cb->debuginfo_path;
	elf_version(EV_CURRENT);
}

void module_file_callbacks_release(struct module_file_callbacks *cb)
{
	free(cb->debuginfo_path);
	free(cb->symfs);
	cb->debuginfo_path = NULL;
	cb->symfs = NULL;
}

/*
 * When the file open in mf is a debug file alone — an executable PT_LOAD segment that occupies memory but no
 * file bytes, which no loadable binary has — places it through the recorded mapping m. Such a file keeps each
 * segment's p_vaddr and p_memsz but not its p_offset, so a file offset cannot be turned into an address
 * through its headers. The recorded mapping can: the loader maps the executable segment from its page-aligned
 * p_vaddr at the page-aligned file offset the mapping records, whatever that offset was in the binary. Only a
 * file with one executable segment can be placed so; with several, which one was mapped is unknown.
 */
static void place_debug_only(struct module_file *mf, const struct profile_module *m)
{
	size_t phnum, executable = 0, empty = 0;
	GElf_Phdr segment = { 0 };
	uint64_t page = 4096; /* the loader aligns to the recording machine's pages: x86-64's, as unwind.c assumes */

	if (elf_getphdrnum(mf->elf, &phnum) < 0)
		return;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(mf->elf, (int)i, &mem);

		if (!ph || ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		executable++;
		if (ph->p_filesz == 0 && ph->p_memsz > 0) {
			empty++;
			segment = *ph;
		}
	}
	/* Without a recorded mapping (stackrec symbolize: addresses, not file offsets) there is nothing to place. */
	if (!empty || m->end <= m->start)
		return;
	mf->debug_only = true;
	if (executable != 1) {
		mf->reason = "debug file alone, with several executable segments";
		return;
	}
	if (m->file_offset % page) {
		mf->reason = "debug file alone, and a mapping not at a page boundary";
		return;
	}
	mf->map_offset = m->file_offset;
	mf->map_vaddr = segment.p_vaddr & ~(page - 1);
	mf->map_size = segment.p_vaddr + segment.p_memsz - mf->map_vaddr;
	debug("'%s' is a debug file alone: its executable segment placed at the recorded file offset %#llx",
	      mf->path, (unsigned long long)m->file_offset);
}

/* Keeps mf->elf's entry point and PT_LOAD program headers, in file order (what module_file_address looks
 * through). */
static void read_segments(struct module_file *mf)
{
	GElf_Ehdr ehdr;
	size_t phnum;

	if (gelf_getehdr(mf->elf, &ehdr) && ehdr.e_entry)
		mf->entry = ehdr.e_entry + mf->bias;
	if (elf_getphdrnum(mf->elf, &phnum) < 0 || !phnum)
		return;
	mf->segments = xcalloc(phnum, sizeof(*mf->segments));
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(mf->elf, (int)i, &mem);

		if (!ph || ph->p_type != PT_LOAD)
			continue;
		mf->segments[mf->segment_count++] = (struct module_segment){
			.offset = ph->p_offset,
			.size = ph->p_filesz,
			.vaddr = ph->p_vaddr,
			.executable = ph->p_flags & PF_X,
		};
	}
}

/*
 * Whether the ELF file on fd may hold split DWARF's skeleton units: it has a .debug_addr section, which a
 * skeleton unit needs for its addresses (DWARF 5's and GCC's DWARF 4 extension alike). When it has none, its
 * zlib sections can go through the memory copy, whose lack of a directory only matters for the .dwo and .dwp
 * files libdw finds relative to the file: inflated on all cores, and the sections nothing reads (.debug_loc)
 * left out — a Go binary's own DWARF was 2.2 MB of libelf's inflations in a cold `stackrec symbolize`.
 */
static bool may_have_split_dwarf(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) < 0) {
		elf_end(elf);
		return true; /* not known: libelf's, as before */
	}
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		const char *name = sh ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;

		found = !name || !strncmp(name, ".debug_addr", strlen(".debug_addr"));
	}
	elf_end(elf);
	return found;
}

/* Whether elf has a compressed section with bytes (zstd_sections_decompress's to copy). */
static bool has_compressed_sections(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);

		if (sh && (sh->sh_flags & SHF_COMPRESSED) && sh->sh_type != SHT_NOBITS)
			return true;
	}
	return false;
}

/*
 * module_file_elf_damage (module_file.h). A binary cut short (`head -c 3000 /usr/bin/gzip`) or with a damaged
 * section count was answered "??:0" for every address by symbolize, exit 0, where addr2line says "file format
 * not recognized" and exits 1; convert named its frames "no symbols".
 */
const char *module_file_elf_damage(Elf *elf, uint64_t size)
{
	GElf_Ehdr ehdr;
	size_t sections, names, segments;

	if (!gelf_getehdr(elf, &ehdr))
		return "its ELF header cannot be read";
	/* elf_getphdrnum: e_phnum is PN_XNUM when section 0 holds the count */
	if (elf_getphdrnum(elf, &segments) < 0)
		return "its program header table is damaged";
	if (segments && (ehdr.e_phoff > size || (uint64_t)segments * ehdr.e_phentsize > size - ehdr.e_phoff))
		return "cut short: its program headers lie past its end";
	/* The header's own count first: libelf counts no sections where the table lies past the end. */
	if (ehdr.e_shnum && (ehdr.e_shoff > size || (uint64_t)ehdr.e_shnum * ehdr.e_shentsize > size - ehdr.e_shoff))
		return "its section headers lie past its end: cut short, or a damaged header";
	if (elf_getshdrnum(elf, &sections) < 0 || (ehdr.e_shoff && !sections))
		return "its section header table is damaged";
	if (sections && (ehdr.e_shoff > size || (uint64_t)sections * ehdr.e_shentsize > size - ehdr.e_shoff))
		return "its section headers lie past its end: cut short, or a damaged header";
	if (sections && (elf_getshdrstrndx(elf, &names) < 0 || names >= sections))
		return "its section names are damaged";
	return NULL;
}

/*
 * Reports the ELF file open on fd as module name in a libdwfl session of its own, which owns fd from then on,
 * and makes it mf's (ending mf's session, if any). false when libdwfl cannot: then fd is closed and a session
 * mf had is left as it was; without one, mf->reason says why.
 */
static bool report(struct module_file *mf, const char *name, const char *path, int fd)
{
	Dwfl *dwfl = dwfl_begin(&mf->callbacks->callbacks);
	Dwfl_Module *mod;
	void **userdata = NULL;
	const char *damage;
	struct stat st;
	uint64_t size = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : UINT64_MAX;
	GElf_Addr bias;
	Elf *elf;

	if (!dwfl) {
		close(fd);
		if (!mf->dwfl)
			mf->reason = "libdwfl failed";
		return false;
	}
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, name, path, fd, 0, false);
	dwfl_report_end(dwfl, NULL, NULL);
	elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	if (elf && (damage = module_file_elf_damage(elf, size))) {
		debug("'%s': %s", path, damage);
		dwfl_end(dwfl);
		if (!mf->dwfl)
			mf->reason = "damaged ELF file";
		return false;
	}
	if (!elf) {
		if (!mod)
			close(fd);
		debug("'%s': %s", path, dwfl_errmsg(-1));
		dwfl_end(dwfl);
		if (!mf->dwfl)
			mf->reason = "not an ELF file";
		return false;
	}
	if (mf->dwfl)
		dwfl_end(mf->dwfl);
	mf->dwfl = dwfl;
	mf->mod = mod;
	mf->elf = elf;
	mf->bias = bias;
	/* The callbacks, for checked_find_debuginfo to find the debuginfo path. */
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (userdata)
		*userdata = (void *)mf->callbacks;
	return true;
}

/* The copy of fd with its compressed sections decompressed (zstd_sections.h), or -1 when none was made. */
static int decompressed_copy(int fd, const char *path, bool cfi_only)
{
	/* zlib sections are libelf's where the binary may have split DWARF: it may name its .dwo files relative
	 * to the binary, which the copy has no directory for. */
	return zstd_sections_decompress(fd, path, !may_have_split_dwarf(fd), cfi_only);
}

void module_file_open_lazy(struct module_file *mf, const struct profile_module *m,
			   const struct debug_file_search *search, const struct module_file_callbacks *cb)
{
	struct debug_file file;
	const char *reason = NULL;
	char *name;
	int kept;

	memset(mf, 0, sizeof(*mf));
	mf->symfs = search->symfs;
	mf->callbacks = cb;
	if (debug_file_find(search, m->path, m->build_id, &file, &reason) < 0) {
		debug("'%s'%s%s: %s", m->path, m->build_id ? " build ID " : "", m->build_id ? m->build_id : "",
		      reason);
		mf->reason = reason;
		return;
	}
	mf->path = file.path;
	kept = fcntl(file.fd, F_DUPFD_CLOEXEC, 0); /* libdwfl owns file.fd; this one is for the copy, if made */
	name = profile_module_short_name(m);
	if (!report(mf, name, file.path, file.fd)) {
		free(name);
		if (kept >= 0)
			close(kept);
		return;
	}
	free(name);
	if (kept >= 0 && has_compressed_sections(mf->elf)) {
		mf->copy_pending = true;
		mf->copy_fd = kept;
	} else if (kept >= 0) {
		close(kept);
	}
	read_segments(mf);
	place_debug_only(mf, m);
}

void module_file_copy_sections(struct module_file *mf)
{
	char *name;
	int decompressed;

	if (!mf->copy_pending)
		return;
	mf->copy_pending = false;
	decompressed = decompressed_copy(mf->copy_fd, mf->path, mf->callbacks && mf->callbacks->cfi_only);
	close(mf->copy_fd);
	if (decompressed < 0)
		return; /* the file as it is, as when the copy was made at open */
	/* The same file but for its sections' bytes: the same program headers, so segments and entry stay; a
	 * session that cannot be made leaves the file as it is. */
	name = xstrdup(dwfl_module_info(mf->mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
	report(mf, name, mf->path, decompressed);
	free(name);
}

void module_file_open(struct module_file *mf, const struct profile_module *m, const struct debug_file_search *search,
		      const struct module_file_callbacks *cb)
{
	module_file_open_lazy(mf, m, search, cb);
	module_file_copy_sections(mf);
}

/* A path as libdw joins it (libdw/dwarf_getalt.c __libdw_filepath): FILE when absolute, else DIR/FILE when DIR is
 * absolute, else DEBUGDIR/DIR/FILE. */
static char *libdw_path(const char *debugdir, const char *dir, const char *file)
{
	if (file[0] == '/')
		return xstrdup(file);
	if (dir && dir[0] == '/')
		return xasprintf("%s/%s", dir, file);
	return dir && *dir ? xasprintf("%s/%s/%s", debugdir, dir, file) : xasprintf("%s/%s", debugdir, file);
}

static bool libdw_candidate_ok(const char *root, const char *debugdir, const char *dir, const char *file)
{
	char *path;
	bool ok;

	if (!file || !*file)
		return true;
	path = libdw_path(debugdir, dir, file);
	ok = input_file_candidate_ok_under(root, path);
	free(path);
	return ok;
}

bool module_file_dwarf_files_ok(const struct module_file *mf, Dwarf *dw)
{
	const char *main_file = NULL, *debug_file = NULL, *alt_name;
	const void *alt_id;
	ssize_t alt_len;
	char *dir_copy, *debugdir, *dwp;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	bool ok = true;

	dwfl_module_info(mf->mod, NULL, NULL, NULL, NULL, NULL, &main_file, &debug_file);
	if (!debug_file)
		debug_file = main_file ? main_file : mf->path;
	dir_copy = xstrdup(debug_file ? debug_file : "/");
	debugdir = dirname(dir_copy);

	/* The .gnu_debugaltlink (dwz) file, where libdw looks for it (by build ID in /usr/lib/debug, then at its
	 * name beside the debug file) when checked_find_debuginfo did not give it to libdwfl: checked either way,
	 * as libdw 0.188 says of no Dwarf whether its alternate is set without looking for it. */
	alt_len = dwelf_dwarf_gnu_debugaltlink(dw, &alt_name, &alt_id);
	if (alt_len > 2 && alt_len <= 64) {
		char hex[2 * 64 + 1], *by_id, *alt_path = NULL;
		int alt_fd;

		hex_encode(hex, alt_id, (size_t)alt_len);
		/* Found by convert's search (under --symfs, in the debug directories, an archive's among them), the
		 * dwz file went to libdw through checked_find_debuginfo, and libdw looks for no other: the files at
		 * this machine's paths are not its business (a FIFO there dropped the DWARF of a right archive). */
		alt_fd = debug_file_find_alt(mf->symfs, mf->callbacks ? mf->callbacks->debuginfo_path : NULL, debug_file,
					     alt_name, hex, &alt_path);
		if (alt_fd >= 0) {
			/* with DWARF of its own, or libdwfl does not set it as dw's alternate, and libdw looks again */
			Elf *alt_elf = elf_begin(alt_fd, ELF_C_READ_MMAP, NULL);

			if (!debug_file_has_debug_info(alt_elf)) {
				close(alt_fd);
				alt_fd = -1;
			}
			elf_end(alt_elf);
		}
		free(alt_path);
		if (alt_fd >= 0) {
			close(alt_fd);
		} else if (mf->symfs) {
			/* libdw would look for it on this machine, out of the tree --symfs names */
			warning("'%s': its dwz file '%s' (build ID %s) is not under --symfs: its DWARF is not read",
				debug_file ? debug_file : "?", alt_name, hex);
			ok = false;
		} else {
			by_id = xasprintf("/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
			ok = input_file_candidate_ok(by_id) && libdw_candidate_ok(mf->symfs, debugdir, NULL, alt_name);
			free(by_id);
		}
	}

	/* Split DWARF: the .dwp package beside the file, then each skeleton unit's .dwo, beside the debug file
	 * and in its compilation directory (libdw/libdw_find_split_unit.c). No subdie is asked of
	 * dwarf_get_units: that would open the .dwo files. libdw looks for a split unit only for a skeleton
	 * unit (DWARF 5's unit type; in DWARF 4 libdw makes a childless unit with DW_AT_GNU_dwo_id and
	 * DW_AT_GNU_dwo_name one), so only those have their attributes read: reading every unit's root DIE
	 * was a tenth of the instructions of a cold conversion with libc's debug file. */
	dwp = xasprintf("%s.dwp", debug_file ? debug_file : "");
	while (ok && dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0) {
		Dwarf_Attribute name_attr, dir_attr;
		const char *dwo, *comp_dir;

		if (unit_type != DW_UT_skeleton)
			continue;
		if (!dwarf_attr(&cudie, DW_AT_dwo_name, &name_attr) && !dwarf_attr(&cudie, DW_AT_GNU_dwo_name, &name_attr))
			continue;
		dwo = dwarf_formstring(&name_attr);
		comp_dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &dir_attr));
		ok = input_file_candidate_ok_under(mf->symfs, dwp) && libdw_candidate_ok(mf->symfs, debugdir, NULL, dwo) &&
		     libdw_candidate_ok(mf->symfs, debugdir, comp_dir, dwo);
	}
	free(dwp);
	free(dir_copy);
	return ok;
}

void module_file_close(struct module_file *mf)
{
	if (mf->copy_pending)
		close(mf->copy_fd);
	if (mf->dwfl)
		dwfl_end(mf->dwfl);
	free(mf->path);
	free(mf->segments);
	memset(mf, 0, sizeof(*mf));
}

/* The PT_LOAD segment holding file offset off, among executable segments or the others. */
static bool segment_address(const struct module_file *mf, uint64_t off, bool executable, GElf_Addr *vaddr)
{
	for (size_t i = 0; i < mf->segment_count; i++) {
		const struct module_segment *sg = &mf->segments[i];

		if (sg->executable != executable)
			continue;
		if (off >= sg->offset && off - sg->offset < sg->size) {
			*vaddr = off - sg->offset + sg->vaddr;
			return true;
		}
	}
	return false;
}
bool module_file_address(const struct module_file *mf, uint64_t off, Dwarf_Addr *addr)
{
	GElf_Addr vaddr;

	if (mf->debug_only) {
		if (off < mf->map_offset || off - mf->map_offset >= mf->map_size)
			return false;
		*addr = mf->map_vaddr + (off - mf->map_offset) + mf->bias;
		return true;
	}
	if (!mf->elf)
		return false;
	/* Executable segments first; then any (rare: data executed, or a writable text). */
	if (!segment_address(mf, off, true, &vaddr) && !segment_address(mf, off, false, &vaddr))
		return false;
	*addr = vaddr + mf->bias;
	return true;
}

char *module_file_go_build_id(Elf *elf)
{
	static const char owner[] = "Go";
	Elf_Scn *scn = NULL;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		Elf_Data *data = sh && sh->sh_type == SHT_NOTE ? elf_getdata(scn, NULL) : NULL;
		size_t offset = 0, next, name_offset, desc_offset;
		GElf_Nhdr note;

		while (data && (next = gelf_getnote(data, offset, &note, &name_offset, &desc_offset)) > 0) {
			const unsigned char *desc = (const unsigned char *)data->d_buf + desc_offset;
			bool printable = note.n_descsz >= 1 && note.n_descsz <= GO_BUILD_ID_MAX;
			char *key;

			offset = next;
			/* Go's linker pads the owner to "Go\0\0" (n_namesz 4); "Go\0" is accepted too. */
			if (note.n_type != 4 || note.n_namesz < sizeof(owner) || note.n_namesz > 4 ||
			    memcmp((const char *)data->d_buf + name_offset, "Go\0\0", note.n_namesz))
				continue;
			for (size_t i = 0; printable && i < note.n_descsz; i++)
				printable = desc[i] > ' ' && desc[i] < 0x7f;
			if (!printable)
				return NULL;
			key = xmalloc(3 + 2 * (size_t)note.n_descsz + 1);
			memcpy(key, "go-", 3);
			hex_encode(key + 3, desc, note.n_descsz);
			return key;
		}
	}
	return NULL;
}

/*
 * Appends " PATH SIZE MTIME" of path to *identity when it is a file; for a file extracted from search's archive,
 * "ARCHIVE-IDENTITY/RELATIVE-PATH SIZE": the archive's own identity stands for the new directory and the new files'
 * times of every run, which kept every module's symbol cache entry from being used with --archive.
 */
static void identify_file(char **identity, const char *path, const struct debug_file_search *search)
{
	size_t n = search->archive_dir && search->archive_identity ? strlen(search->archive_dir) : 0;
	struct stat st;
	char *more;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	if (n && !strncmp(path, search->archive_dir, n) && path[n] == '/')
		more = xasprintf("%s%s%s%s %lld", *identity ? *identity : "", *identity ? "; " : "",
				 search->archive_identity, path + n, (long long)st.st_size);
	else
		more = xasprintf("%s%s%s %lld %lld.%09ld", *identity ? *identity : "", *identity ? "; " : "", path,
				 (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	free(*identity);
	*identity = more;
}

char *module_file_identity(const struct module_file *mf, const char *build_id, const struct debug_file_search *search)
{
	struct candidate_walk w = { .root = search->symfs, .search = search };
	const char *link;
	char *identity = NULL, *path_list, *canonical;
	GElf_Word crc = 0;

	identify_file(&identity, mf->path, search);
	if (!identity)
		return NULL;
	/* The debuginfod servers asked (convert --debuginfod sets DEBUGINFOD_URLS): an entry made without them,
	 * from the symbol table alone, kept them from ever being asked for the DWARF they have. */
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (urls && *urls) {
		char *more = xasprintf("%s; debuginfod %s", identity, urls);

		free(identity);
		identity = more;
	}
	/* By build ID in each debug directory: also where a module without a Dwfl_Module yet would be found. */
	for (size_t i = 0; i <= search->dir_count; i++) {
		char *rel = build_id_hex_rel_path(build_id, ".debug"), *dir = debug_file_dir(search, i);
		char *path = rel ? xasprintf("%s/%s", dir, rel) : NULL;

		if (path)
			identify_file(&identity, path, search);
		free(path);
		free(rel);
		free(dir);
	}
	/* Then every file checked_find_debuginfo's walk would look at for it: the .gnu_debuglink target (or
	 * BASENAME.debug) beside the file, in .debug/, under each debug directory after every tail of the file's
	 * directory, in the .dwz directories; for the file's name and the one its links resolve to. */
	if (!mf->mod)
		return identity;
	link = mf->elf ? dwelf_elf_gnu_debuglink(mf->elf, &crc) : NULL;
	path_list = debug_file_dwfl_path(search);
	w.identity = &identity;
	debuginfo_candidates_ok(&w, mf->mod, path_list, mf->path, link);
	canonical = realpath(mf->path, NULL);
	if (canonical && strcmp(canonical, mf->path))
		debuginfo_candidates_ok(&w, mf->mod, path_list, canonical, link);
	free(canonical);
	free(path_list);
	return identity;
}
