/*
 * input_file.c — refusing the files hostile input can point convert at (see input_file.h).
 */
#include "input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util.h"

/* The paths already warned about: a module's candidates are tried by several lookups (ours, libdwfl's, the
 * explanation of a missing debug file), and one line per refused file is enough. */
static char **refused;
static size_t refused_count, refused_cap;
static pthread_mutex_t refused_lock = PTHREAD_MUTEX_INITIALIZER; /* modules are opened by several threads */

void input_file_refused(const char *path, const char *what)
{
	pthread_mutex_lock(&refused_lock);
	for (size_t i = 0; i < refused_count; i++)
		if (!strcmp(refused[i], path))
			goto out;
	GROW(refused, refused_cap, refused_count + 1);
	refused[refused_count++] = xstrdup(path);
	warning("'%s' %s", path, what);
out:
	pthread_mutex_unlock(&refused_lock);
}

static const char *type_name(mode_t mode)
{
	return S_ISFIFO(mode)	? "a FIFO"
	       : S_ISCHR(mode)	? "a character device"
	       : S_ISBLK(mode)	? "a block device"
	       : S_ISDIR(mode)	? "a directory"
	       : S_ISSOCK(mode) ? "a socket"
				: "not a file";
}

/* Refuses what stat says is not a regular file, naming its type. */
static bool refuse_type(const char *path, mode_t mode, const char **reason)
{
	char *what;

	if (S_ISREG(mode))
		return false;
	what = xasprintf("is not a regular file (%s): not read", type_name(mode));
	input_file_refused(path, what);
	free(what);
	if (reason)
		*reason = "not a regular file";
	return true;
}

int input_file_open(const char *path, bool follow_links, const char **reason)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (follow_links ? 0 : O_NOFOLLOW));

	if (fd < 0) {
		if (errno == ELOOP && !follow_links) {
			input_file_refused(path, "is a symbolic link under --symfs: not followed");
			if (reason)
				*reason = "symbolic link under --symfs";
		} else if (reason) {
			*reason = NULL;
		}
		return -1;
	}
	if (fstat(fd, &st) < 0 || refuse_type(path, st.st_mode, reason)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The part of path below root ("usr/bin/x" for root "/r" and path "/r/usr/bin/x"), or NULL when path is not
 * under root. */
static const char *below_root(const char *root, const char *path)
{
	size_t len = root ? strlen(root) : 0;

	if (!len || strncmp(path, root, len) || (path[len] != '/' && path[len] != '\0'))
		return NULL;
	path += len;
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

int input_file_open_under(const char *root, const char *path, bool follow_links, const char **reason)
{
	const char *rest = below_root(root, path);
	struct open_how how = {
		.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (follow_links ? 0 : O_NOFOLLOW),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	struct stat st;
	int root_fd, fd, saved;

	if (!rest)
		return input_file_open(path, follow_links, reason);
	if (reason)
		*reason = NULL;
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return -1;
	/* glibc 2.36 has no openat2() wrapper; the kernel has had the call since 5.6. */
	fd = (int)syscall(SYS_openat2, root_fd, rest, &how, sizeof(how));
	saved = errno;
	close(root_fd);
	if (fd < 0) {
		if (saved == ELOOP && !follow_links) {
			input_file_refused(path, "is a symbolic link under --symfs: not followed");
			if (reason)
				*reason = "symbolic link under --symfs";
		} else if (saved == ENOSYS) {
			input_file_refused(path, "cannot be opened inside --symfs: this kernel has no openat2 (Linux 5.6)");
			if (reason)
				*reason = "no openat2";
		}
		return -1;
	}
	if (fstat(fd, &st) < 0 || refuse_type(path, st.st_mode, reason)) {
		close(fd);
		return -1;
	}
	return fd;
}

bool input_file_elf_ok(Elf *elf, const char *path, size_t file_size, const char **reason)
{
	uint64_t declared = 0, limit = (uint64_t)file_size * INPUT_FILE_MAX_INFLATION;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		GElf_Chdr chdr;

		if (!sh || !(sh->sh_flags & SHF_COMPRESSED) || !gelf_getchdr(scn, &chdr))
			continue;
		/* Summed: a thousand sections each just below the limit are as bad as one above it. */
		if (__builtin_add_overflow(declared, chdr.ch_size, &declared))
			declared = UINT64_MAX;
		if (declared > limit) {
			char *what = xasprintf("declares %llu bytes of compressed sections, more than %d times its size "
					       "(%zu bytes): not read",
					       (unsigned long long)declared, INPUT_FILE_MAX_INFLATION, file_size);

			input_file_refused(path, what);
			free(what);
			if (reason)
				*reason = "compressed sections too large";
			return false;
		}
	}
	return true;
}

bool input_file_path_ok(const char *path)
{
	for (const char *p = path; (p = strstr(p, "..")); p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return false;
	return true;
}

bool input_file_candidate_ok(const char *candidate)
{
	struct stat st;
	Elf *elf;
	bool ok;
	int fd;

	/* stat follows links as libdwfl's open() will, and never blocks on a FIFO. */
	if (stat(candidate, &st) < 0)
		return true;
	if (refuse_type(candidate, st.st_mode, NULL))
		return false;
	fd = input_file_open(candidate, true, NULL);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ok = !elf || elf_kind(elf) != ELF_K_ELF || input_file_elf_ok(elf, candidate, (size_t)st.st_size, NULL);
	elf_end(elf);
	close(fd);
	return ok;
}

bool input_file_candidate_ok_under(const char *root, const char *candidate)
{
	char *real;
	bool inside;

	if (!below_root(root, candidate))
		return input_file_candidate_ok(candidate);
	real = realpath(candidate, NULL);
	if (!real)
		return true; /* nothing there (or a dangling link): libdwfl's open() fails too */
	inside = below_root(root, real) != NULL;
	free(real);
	if (!inside) {
		input_file_refused(candidate, "leads out of --symfs through a symbolic link: not read");
		return false;
	}
	return input_file_candidate_ok(candidate);
}
