/*
 * debug_file.c — finds a module's ELF file by recorded path and build ID (see debug_file.h).
 */
#include "debug_file.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <libdeflate.h>

#include "../cache_dir.h"
#include "../util.h"
#include "debuginfod_client.h"
#include "input_file.h"
#include "zstd_sections.h"

#define SYSTEM_DEBUG_DIR "/usr/lib/debug"

enum candidate_result { CANDIDATE_OK, CANDIDATE_MISSING, CANDIDATE_NOT_ELF, CANDIDATE_MISMATCH, CANDIDATE_REFUSED };

/*
 * Opens path and checks that it is an ELF file with the wanted build ID (any, when want is NULL) that is safe
 * to read (input_file.h). Below root (--symfs, or NULL) links resolve inside root. A symbolic link as the last
 * component is followed only with follow_links: not for a recorded path under --symfs. When the
 * file is refused, *why (may be NULL) says why.
 */
static enum candidate_result try_candidate_at(const char *root, const char *path, const char *want, bool follow_links,
					      int *fd_out,
					      const char **why)
{
	enum candidate_result result = CANDIDATE_OK;
	const void *id = NULL;
	char have[2 * 64 + 1] = "";
	const char *refused = NULL;
	struct stat st;
	ssize_t n;
	Elf *elf;
	int fd;

	fd = input_file_open_under(root, path, follow_links, &refused);
	if (fd < 0) {
		if (why)
			*why = refused;
		return refused ? CANDIDATE_REFUSED : CANDIDATE_MISSING;
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		return CANDIDATE_MISSING;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		debug("'%s' is not an ELF file", path);
		result = CANDIDATE_NOT_ELF;
		goto out;
	}
	n = dwelf_elf_gnu_build_id(elf, &id);
	if (n > 0)
		hex_encode(have, id, n < 64 ? (size_t)n : 64);
	if (want && strcmp(want, have)) {
		debug("'%s' has build ID %s, not the recorded %s: not used", path, n > 0 ? have : "(none)", want);
		result = CANDIDATE_MISMATCH;
	} else if (!input_file_elf_ok(elf, path, (size_t)st.st_size, &refused)) {
		if (why)
			*why = refused;
		result = CANDIDATE_REFUSED;
	}
out:
	elf_end(elf);
	if (result != CANDIDATE_OK) {
		close(fd);
		return result;
	}
	*fd_out = fd;
	return CANDIDATE_OK;
}

/* A candidate found by build ID in a directory of this machine: links there are followed. */
static enum candidate_result try_candidate(const char *path, const char *want, int *fd_out)
{
	return try_candidate_at(NULL, path, want, true, fd_out, NULL);
}

/* A file of the recording machine's filesystem (a recorded path, the system debug directory) as seen here:
 * under --symfs when given (perf's option of that name), else as it is. */
static char *on_symfs(const struct debug_file_search *search, const char *path)
{
	return search->symfs ? xasprintf("%s%s", search->symfs, path) : xstrdup(path);
}

char *debug_file_dir(const struct debug_file_search *search, size_t i)
{
	return i < search->dir_count ? xstrdup(search->dirs[i]) : on_symfs(search, SYSTEM_DEBUG_DIR);
}

static bool found(const char *path, int fd, struct debug_file *out)
{
	out->path = xstrdup(path);
	out->fd = fd;
	return true;
}

/* An fd on a memory file holding image, when it is an ELF file with the wanted build ID. Else -1. */
static int image_candidate(const char *name, const void *image, size_t size, const char *build_id)
{
	int fd = memfd_create(name, MFD_CLOEXEC), verified_fd = -1;
	char *fd_path;

	if (fd < 0)
		return -1;
	if (write(fd, image, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	fd_path = xasprintf("/proc/self/fd/%d", fd);
	if (try_candidate(fd_path, build_id, &verified_fd) != CANDIDATE_OK)
		verified_fd = -1;
	free(fd_path);
	close(fd);
	return verified_fd;
}

/*
 * An fd on a copy of this process's vDSO when it can stand for the recorded one: same build ID, or,
 * without a recorded build ID, the recording made under the kernel release running now. Else -1.
 */
static int running_vdso(const struct debug_file_search *search, const char *build_id)
{
	unsigned long long start, end;
	char line[512];
	struct utsname uts;
	bool found_vdso = false;
	int verified_fd;
	FILE *maps;

	if (!build_id && (!search->kernel_release || uname(&uts) < 0 || strcmp(uts.release, search->kernel_release)))
		return -1;
	maps = fopen("/proc/self/maps", "r");
	if (!maps)
		return -1;
	while (fgets(line, sizeof(line), maps))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &start, &end) == 2) {
			found_vdso = true;
			break;
		}
	fclose(maps);
	if (!found_vdso || end <= start)
		return -1;
	verified_fd = image_candidate("vdso", (const void *)(uintptr_t)start, end - start, build_id);
	if (verified_fd >= 0)
		debug("[vdso]: using the running kernel's vDSO%s", build_id ? " (same build ID)" : " (same kernel release)");
	return verified_fd;
}

/*
 * Asks the debuginfod servers of DEBUGINFOD_URLS for the executable with build_id, then for its debug file
 * (which keeps the program headers and the symbols, so it names frames as well). libdebuginfod downloads
 * into its own cache ($DEBUGINFOD_CACHE_PATH). Returns the fd with *out filled, or -1.
 */
static int from_debuginfod(const char *build_id, const char *path, struct debug_file *out)
{
	char *found_path = NULL;
	int fd = -1, verified = -1;

	if (!debuginfod_client_wanted())
		return -1;
	fd = debuginfod_client_find(build_id, &found_path);
	if (fd < 0) {
		free(found_path);
		debug("debuginfod has no file with build ID %s for '%s' (%s)", build_id, path, strerror(-fd));
		return -1;
	}
	close(fd);
	if (try_candidate(found_path, build_id, &verified) == CANDIDATE_OK) {
		debug("found %s for '%s' through debuginfod", found_path, path);
		out->path = found_path;
		out->fd = verified;
		return verified;
	}
	free(found_path);
	return -1;
}

/* An fd on the vDSO image the recorder embedded, when its build ID is the recorded one. Else -1. */
static int recorded_vdso(const struct debug_file_search *search, const char *build_id)
{
	if (!search->vdso_image || !search->vdso_size)
		return -1;
	return image_candidate("recorded-vdso", search->vdso_image, search->vdso_size, build_id);
}

int debug_file_find(const struct debug_file_search *search, const char *path, const char *build_id,
		    struct debug_file *out, const char **reason)
{
	enum candidate_result at_path = CANDIDATE_MISSING;
	const char *refused = NULL;
	size_t len = strlen(path);
	int fd = -1;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if (build_id && (!*build_id || !hex_lowercase(build_id)))
		build_id = NULL;

	/* 1. The recorded path. Pseudo-paths ("[vdso]", "//anon") name no file; a ".." would climb out of
	 * --symfs (and the kernel never reports one). */
	if (path[0] == '/' && path[1] != '/' && !input_file_path_ok(path)) {
		input_file_refused(path, "has a '..' component: not looked up");
		at_path = CANDIDATE_REFUSED;
		refused = "recorded path with '..'";
	} else if (path[0] == '/' && path[1] != '/') {
		char *recorded = xstrndup(path, len > 10 && !strcmp(path + len - 10, " (deleted)") ? len - 10 : len);
		char *real = on_symfs(search, recorded);

		free(recorded);

		at_path = try_candidate_at(search->symfs, real, build_id, !search->symfs, &fd, &refused);
		if (at_path == CANDIDATE_OK && found(real, fd, out)) {
			free(real);
			return 0;
		}
		free(real);
	}

	/* 2. The build-ID cache that record fills: CACHE/.build-id/xx/rest. */
	if (build_id && strlen(build_id) > 2 && search->cache_dir) {
		char *candidate = xasprintf("%s/.build-id/%.2s/%s", search->cache_dir, build_id, build_id + 2);
		enum candidate_result r = try_candidate(candidate, build_id, &fd);

		if (r == CANDIDATE_OK && found(candidate, fd, out)) {
			debug("found %s for '%s' in the build-ID cache", candidate, path);
			free(candidate);
			return 0;
		}
		free(candidate);
	}

	/* 3. The .build-id trees of --debug-dir and the system: binaries first, in every directory, then debug
	 * files. A binary has the bytes and .eh_frame, and libdwfl finds its debug file beside it by build ID; a
	 * debug file alone names frames but has no code bytes nor file offsets (module_file.h). */
	if (build_id && strlen(build_id) > 2) {
		for (int debug_suffix = 0; debug_suffix <= 1; debug_suffix++) {
			for (size_t i = 0; i <= search->dir_count; i++) {
				char *dir = debug_file_dir(search, i);
				char *candidate = xasprintf("%s/.build-id/%.2s/%s%s", dir, build_id, build_id + 2,
							    debug_suffix ? ".debug" : "");

				free(dir);
				if (try_candidate_at(search->symfs, candidate, build_id, true, &fd, NULL) == CANDIDATE_OK &&
				    found(candidate, fd, out)) {
					debug("found %s for '%s' by build ID", candidate, path);
					free(candidate);
					return 0;
				}
				free(candidate);
			}
		}
	}

	/* 4. debuginfod servers (DEBUGINFOD_URLS, or convert --debuginfod). */
	if (build_id && (fd = from_debuginfod(build_id, path, out)) >= 0)
		return 0;

	/* 5. The vDSO is no file: the recording's image, else the running kernel's own. */
	if (!strcmp(path, "[vdso]") && (fd = recorded_vdso(search, build_id)) >= 0) {
		out->path = xstrdup(DEBUG_FILE_RECORDED_VDSO);
		out->fd = fd;
		return 0;
	}
	if (!strcmp(path, "[vdso]") && !search->symfs && (fd = running_vdso(search, build_id)) >= 0) {
		out->path = xstrdup(DEBUG_FILE_RUNNING_VDSO);
		out->fd = fd;
		return 0;
	}

	if (at_path == CANDIDATE_MISMATCH)
		*reason = "build ID mismatch";
	else if (at_path == CANDIDATE_REFUSED && refused)
		*reason = refused;
	else if (at_path == CANDIDATE_NOT_ELF)
		*reason = "not an ELF file";
	else if (debug_file_anonymous(path))
		*reason = "JIT map missing"; /* anonymous executable memory, and no perf map named it */
	else if (!build_id)
		*reason = path[0] == '/' ? "no file at the recorded path" : "no file for this mapping";
	else
		*reason = "no file with that build ID";
	return -1;
}

/*
 * For a debug file found at candidate and open on fd: the name libdwfl would give it (its real path) into *path,
 * and an fd on a copy with its compressed sections decompressed (fd itself when it has none).
 */
static int decompressed_copy(const char *candidate, int fd, bool cfi_only, char **path)
{
	int decompressed;

	*path = realpath(candidate, NULL);
	if (!*path)
		*path = xstrdup(candidate);
	decompressed = zstd_sections_decompress(fd, *path, true, cfi_only);
	if (decompressed < 0)
		return fd;
	close(fd);
	return decompressed;
}

/* The first candidate of libdwfl's build-ID search (debug_file_debuginfo_by_build_id), open as it is: an fd with its
 * path in *candidate (to free), or -1. */
static int open_by_build_id(const char *root, const char *path_list, const char *build_id, char **candidate)
{
	char *list, *save = NULL;
	int fd = -1;

	*candidate = NULL;
	if (!build_id || strlen(build_id) <= 2 || !hex_lowercase(build_id))
		return -1;
	list = xstrdup(path_list ? path_list : "");
	/* libdwfl's order (__libdwfl_open_by_build_id): the first candidate that opens is the one it checks. */
	for (char *d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char *path;
		enum candidate_result r;

		if (*d == '+' || *d == '-')
			d++;
		if (*d != '/')
			continue;
		path = xasprintf("%s/.build-id/%.2s/%s.debug", d, build_id, build_id + 2);
		r = try_candidate_at(root, path, build_id, true, &fd, NULL);
		if (r == CANDIDATE_MISSING) {
			free(path);
			continue;
		}
		if (r == CANDIDATE_OK)
			*candidate = path;
		else
			free(path);
		break;
	}
	free(list);
	return *candidate ? fd : -1;
}

int debug_file_debuginfo_by_build_id(const char *root, const char *path_list, const char *build_id, bool cfi_only,
				     char **path)
{
	char *candidate;
	int fd = open_by_build_id(root, path_list, build_id, &candidate);

	*path = NULL;
	if (fd < 0)
		return -1;
	fd = decompressed_copy(candidate, fd, cfi_only, path);
	free(candidate);
	return fd;
}

int debug_file_find_alt(const char *root, const char *path_list, const char *debug_name, const char *alt_name,
			const char *alt_build_id, char **path)
{
	const char *slash = debug_name ? strrchr(debug_name, '/') : NULL;
	char *candidate = NULL;
	int fd = open_by_build_id(root, path_list, alt_build_id, path);

	if (fd >= 0 || !alt_build_id || !hex_lowercase(alt_build_id) || !alt_name || !*alt_name)
		return fd;
	/* Then where libdw looks (libdw/dwarf_getalt.c): the link's path, absolute (the recording machine's, so
	 * under --symfs) or relative to the debug file's directory. */
	if (alt_name[0] == '/')
		candidate = root ? xasprintf("%s%s", root, alt_name) : xstrdup(alt_name);
	else if (slash)
		candidate = xasprintf("%.*s/%s", (int)(slash - debug_name), debug_name, alt_name);
	if (candidate && try_candidate_at(root, candidate, alt_build_id, true, &fd, NULL) == CANDIDATE_OK) {
		*path = candidate;
		return fd;
	}
	free(candidate);
	return -1;
}

int debug_file_debuginfo_alt(const char *root, const char *path_list, const char *debug_name, const char *alt_name,
			     const char *alt_build_id, char **path)
{
	char *candidate;
	int fd = debug_file_find_alt(root, path_list, debug_name, alt_name, alt_build_id, &candidate);

	*path = NULL;
	if (fd < 0)
		return -1;
	fd = decompressed_copy(candidate, fd, false, path);
	free(candidate);
	return fd;
}

static bool file_crc32(const char *root, const char *path, uint32_t *crc);

/* What one candidate of the path search is (try_linked). */
enum linked { LINKED_NONE, LINKED_INVALID, LINKED_FOUND, LINKED_ASK_LIBDWFL };

/*
 * One candidate of the path search, checked as libdwfl's validate() does: LINKED_FOUND with *fd open on it when
 * it is the debug file; LINKED_NONE when nothing is there (the search looks further in this entry);
 * LINKED_INVALID when it is of another build or CRC (the search goes on with the next entry); LINKED_ASK_LIBDWFL
 * when anything else is there (the main file by another name, a file that cannot be opened or is no ELF file):
 * libdwfl's own search then decides.
 */
static enum linked try_linked(const char *root, const char *candidate, const struct stat *main_st,
			      const char *build_id, bool check_crc, uint32_t crc, int *fd)
{
	struct stat st;
	uint32_t have;

	if (stat(candidate, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? LINKED_NONE : LINKED_ASK_LIBDWFL;
	if (st.st_dev == main_st->st_dev && st.st_ino == main_st->st_ino)
		return LINKED_ASK_LIBDWFL;
	switch (try_candidate_at(root, candidate, build_id, true, fd, NULL)) {
	case CANDIDATE_OK:
		break;
	case CANDIDATE_MISMATCH:
		return LINKED_INVALID;
	default:
		return LINKED_ASK_LIBDWFL;
	}
	/* libdwfl checks only the build ID when the module has one, else the CRC the link records. */
	if (!build_id && check_crc && (!file_crc32(root, candidate, &have) || have != crc)) {
		close(*fd);
		*fd = -1;
		return LINKED_INVALID;
	}
	return LINKED_FOUND;
}

/*
 * The candidates of one entry of the search path, in libdwfl's order, until one is not LINKED_NONE: for "", the
 * binary's directory; for a relative entry, that subdirectory of it; for an absolute entry DIR, DIR followed by
 * each tail of the binary's absolute directory (DIR/usr/lib/x, DIR/lib/x, DIR/x), then DIR itself.
 */
static enum linked try_entry(const char *root, const char *entry, const char *file_dir, const char *link,
			     const struct stat *main_st, const char *build_id, bool check_crc, uint32_t crc, int *fd,
			     char **path)
{
	enum linked r = LINKED_NONE;
	const char *sub = file_dir;

	/* A relative entry with a '/' libdwfl explores in ways of its own; debug_file_dwfl_path makes none. */
	if (*entry != '/' && strchr(entry, '/'))
		return LINKED_ASK_LIBDWFL;
	if (*entry != '/') {
		*path = *entry ? xasprintf("%s/%s/%s", file_dir, entry, link) : xasprintf("%s/%s", file_dir, link);
		r = try_linked(root, *path, main_st, build_id, check_crc, crc, fd);
	} else if (file_dir[0] == '/') {
		while (r == LINKED_NONE) {
			sub = sub ? strchr(sub, '/') : NULL;
			if (sub)
				sub++;
			if (sub && !*sub)
				break;
			free(*path);
			*path = sub ? xasprintf("%s/%s/%s", entry, sub, link) : xasprintf("%s/%s", entry, link);
			r = try_linked(root, *path, main_st, build_id, check_crc, crc, fd);
			if (!sub)
				break;
		}
	}
	if (r != LINKED_FOUND) {
		free(*path);
		*path = NULL;
	}
	return r;
}

int debug_file_find_by_link(const char *root, const char *path_list, const char *file_name, const char *link,
			    uint32_t crc, const char *build_id, char **path)
{
	const char *slash = file_name ? strrchr(file_name, '/') : NULL;
	enum linked r = LINKED_NONE;
	char *list, *entries, *entry, *file_dir;
	bool default_check = true;
	struct stat main_st;
	int fd = -1;

	*path = NULL;
	if (!link || !*link || strchr(link, '/') || !slash || stat(file_name, &main_st) < 0 ||
	    (build_id && !hex_lowercase(build_id)))
		return -1;
	file_dir = xstrndup(file_name, (size_t)(slash - file_name));
	list = entries = xstrdup(path_list ? path_list : "");
	/* A leading '+' or '-' of the whole path, or of an entry, turns CRC checks on or off. */
	if (*entries == '+' || *entries == '-')
		default_check = *entries++ == '+';
	while ((r == LINKED_NONE || r == LINKED_INVALID) && (entry = strsep(&entries, ":"))) {
		bool check = default_check;

		if (*entry == '+' || *entry == '-')
			check = *entry++ == '+';
		r = try_entry(root, entry, file_dir, link, &main_st, build_id, check && crc, crc, &fd, path);
	}
	free(list);
	free(file_dir);
	return r == LINKED_FOUND ? fd : -1;
}

int debug_file_debuginfo_by_link(const char *root, const char *path_list, const char *file_name, const char *link,
				 uint32_t crc, const char *build_id, bool cfi_only, char **path)
{
	int fd = debug_file_find_by_link(root, path_list, file_name, link, crc, build_id, path), copy;

	if (fd < 0)
		return -1;
	copy = zstd_sections_decompress(fd, *path, true, cfi_only);
	close(fd);
	if (copy < 0) {
		free(*path);
		*path = NULL;
	}
	return copy;
}

bool debug_file_anonymous(const char *path)
{
	return !strncmp(path, "//anon", 6) || !strncmp(path, "[anon", 5);
}

void debug_file_release(struct debug_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	f->path = NULL;
	f->fd = -1;
}

char *debug_file_dwfl_path(const struct debug_file_search *search)
{
	char *system_dir = on_symfs(search, SYSTEM_DEBUG_DIR);
	char *path = xasprintf(":.debug:%s", system_dir);

	free(system_dir);

	for (size_t i = 0; i < search->dir_count; i++) {
		char *longer = xasprintf("%s:%s", path, search->dirs[i]);

		free(path);
		path = longer;
	}
	return path;
}

/*
 * The CRC-32 of a file's bytes, as .gnu_debuglink records it (zlib's crc32). False if it cannot be read, or
 * is no regular file: the link is data of the binary, and /dev/zero would never end. Reads no more than the
 * size the file had when opened.
 */
static bool file_crc32(const char *root, const char *path, uint32_t *crc)
{
	unsigned char buf[65536];
	uint32_t c = 0;
	ssize_t n = 0;
	struct stat st;
	off_t left;
	int fd = input_file_open_under(root, path, true, NULL);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return false;
	}
	for (left = st.st_size; left > 0 && (n = read(fd, buf, left < (off_t)sizeof(buf) ? (size_t)left : sizeof(buf))) > 0;
	     left -= n)
		c = libdeflate_crc32(c, buf, (size_t)n); /* zlib's CRC-32, faster */
	close(fd);
	*crc = c;
	return left == 0;
}

/* Whether the .gnu_debuglink target NAME exists where libdwfl looks for it — beside the file (its recorded
 * directory DIR, under --symfs), in DIR/.debug/, or as DIR/NAME under a debug directory — with a CRC other
 * than the one the link records. */
static bool debuglink_rejected(const struct debug_file_search *search, const char *dir, const char *name,
			       uint32_t want_crc)
{
	char *local_dir;
	bool rejected = false;

	/* A link names a file beside the binary, never a path: "../../etc/x" would climb out of --symfs. */
	if (strchr(name, '/') || !strcmp(name, "..") || !strcmp(name, "."))
		return false;
	local_dir = on_symfs(search, dir);

	for (size_t i = 0; i < search->dir_count + 3 && !rejected; i++) {
		char *debug_dir = i >= 2 ? debug_file_dir(search, i - 2) : NULL;
		char *candidate = i == 0   ? xasprintf("%s/%s", local_dir, name)
				  : i == 1 ? xasprintf("%s/.debug/%s", local_dir, name)
					   : xasprintf("%s%s/%s", debug_dir, dir, name);
		uint32_t crc;

		free(debug_dir);

		if (file_crc32(search->symfs, candidate, &crc) && crc != want_crc) {
			debug("'%s' is the .gnu_debuglink target but its CRC %08x is not the linked %08x: not used",
			      candidate, crc, want_crc);
			rejected = true;
		}
		free(candidate);
	}
	free(local_dir);
	return rejected;
}

const char *debug_file_rejected_debuginfo(const struct debug_file_search *search, const char *build_id,
					  const char *recorded_path, Elf *elf)
{
	const char *reason = NULL;
	const char *link;
	GElf_Word crc;

	if (build_id) {
		char *rel = build_id_hex_rel_path(build_id, ".debug");

		for (size_t i = 0; rel && i <= search->dir_count && !reason; i++) {
			char *dir = debug_file_dir(search, i), *candidate = xasprintf("%s/%s", dir, rel);
			int fd = -1;

			free(dir);

			if (try_candidate_at(search->symfs, candidate, build_id, true, &fd, NULL) == CANDIDATE_MISMATCH)
				reason = "debug file of another build";
			else if (fd >= 0)
				close(fd);
			free(candidate);
		}
		free(rel);
	}
	link = elf ? dwelf_elf_gnu_debuglink(elf, &crc) : NULL;
	if (!reason && link && recorded_path && recorded_path[0] == '/') {
		char *dir = xstrdup(recorded_path);

		*strrchr(dir, '/') = '\0';
		if (debuglink_rejected(search, dir, link, crc))
			reason = "debug file of another build";
		free(dir);
	}
	return reason;
}

Elf_Scn *debug_file_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *section;

		if (gelf_getshdr(scn, shdr) && (section = elf_strptr(elf, shstrndx, shdr->sh_name)) &&
		    !strcmp(section, name))
			return scn;
	}
	return NULL;
}

bool debug_file_has_debug_info(Elf *elf)
{
	GElf_Shdr shdr;

	return debug_file_section(elf, ".debug_info", &shdr) && shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0;
}
