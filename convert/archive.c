/*
 * archive.c — `stackrec archive` and the extraction side of `convert --archive` (see archive.h).
 */
#include "archive.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cache_dir.h"
#include "../commands.h"
#include "../formats/recording_reader.h"
#include "../formats/recording_writer.h"
#include "../util.h"
#include "debug_file.h"
#include "debuginfod_client.h"
#include "input_file.h"

#define ARCHIVE_CHUNK (32u << 20) /* FILE blocks stay well below a frame's limit */

struct wanted {
	char **build_ids; /* hex */
	char **paths;	  /* the recorded path of each */
	size_t count, cap;
};

static int collect(void *ctx, uint32_t type, const void *body, uint32_t size)
{
	struct wanted *w = ctx;
	struct srec_mapping m;
	const char *path;
	char hex[2 * SREC_BUILD_ID_MAX + 1];

	if (type != SREC_BLOCK_MAPPING || recording_parse_mapping(body, size, &m, &path) < 0 || !m.build_id_size)
		return 0;
	hex_encode(hex, m.build_id, m.build_id_size);
	for (size_t i = 0; i < w->count; i++)
		if (!strcmp(w->build_ids[i], hex))
			return 0;
	if (w->count == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->build_ids = xrealloc(w->build_ids, w->cap * sizeof(char *));
		w->paths = xrealloc(w->paths, w->cap * sizeof(char *));
	}
	w->build_ids[w->count] = xstrdup(hex);
	w->paths[w->count++] = xstrdup(path);
	return 0;
}

#define ADD_FILE_SKIPPED (-2) /* add_file: not archived, with a warning: a file missing from the archive */
#define SPARSE_SIZE_MIN (64ull << 20) /* a file of holes below this costs a fraction of a second to archive */
#define SPARSE_EXTENTS_MAX 65536      /* data extents counted; the rest of a file with more is taken as holes */

/*
 * The bytes of the size-byte file on fd that are data rather than holes, as the file system says (SEEK_DATA,
 * SEEK_HOLE: on compressing file systems, as ZFS, allocated blocks are fewer than the data). A file system
 * that cannot say: size.
 */
static uint64_t data_bytes(int fd, uint64_t size)
{
	uint64_t data = 0;
	off_t at = 0;

	for (int extents = 0; (uint64_t)at < size && extents < SPARSE_EXTENTS_MAX; extents++) {
		off_t start = lseek(fd, at, SEEK_DATA), end;

		if (start < 0)
			return errno == ENXIO ? data : size; /* ENXIO: nothing but a hole from at on */
		end = lseek(fd, start, SEEK_HOLE);
		if (end < 0)
			return size;
		data += (uint64_t)(end - start);
		at = end;
	}
	return data;
}

/*
 * Adds the file open on fd (a regular file: debug_file_find and input_file_open see to it) as FILE blocks of
 * kind SREC_FILE_DEBUG, no more than the size it had when opened. Returns that size, -1, or ADD_FILE_SKIPPED.
 */
static long long add_file(struct recording_writer *writer, int fd, const char *path, const char *hex)
{
	struct srec_file f = { .kind = SREC_FILE_DEBUG, .path_size = (uint32_t)strlen(path) + 1 };
	unsigned char *chunk;
	uint64_t offset = 0, size;
	struct stat st;
	ssize_t n;
	int ret = 0;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	size = (uint64_t)st.st_size;
	/* Mostly holes and large: a file of any size costs its owner nothing, and would have us read and archive
	 * gigabytes of zeros (a binary another user made sparse at a recorded path). Smaller ones are archived:
	 * ld leaves the padding between segments aligned to 2 MiB as holes (-z max-page-size=0x200000), so that
	 * a small program is mostly holes. */
	if (size > SPARSE_SIZE_MIN) {
		uint64_t data = data_bytes(fd, size);

		if (data < size / 2) {
			warning("'%s' is mostly holes (%llu bytes, %llu of data): not archived", path,
				(unsigned long long)size, (unsigned long long)data);
			return ADD_FILE_SKIPPED;
		}
	}
	chunk = xmalloc(ARCHIVE_CHUNK);

	f.build_id_size = (uint8_t)(strlen(hex) / 2);
	for (size_t i = 0; i < f.build_id_size && i < SREC_BUILD_ID_MAX; i++)
		sscanf(hex + 2 * i, "%2hhx", &f.build_id[i]);
	do {
		size_t got = 0;

		size_t want = size - offset < ARCHIVE_CHUNK ? (size_t)(size - offset) : ARCHIVE_CHUNK;

		while (got < want && (n = pread(fd, chunk + got, want - got, (off_t)(offset + got))) > 0)
			got += (size_t)n;
		if (got == 0 && offset > 0)
			break;
		f.data_offset = offset;
		f.data_size = got;
		/* The block is the header, the path, then the content: path and content go as one tail. */
		{
			unsigned char *tail = xmalloc(f.path_size + got);

			memcpy(tail, path, f.path_size);
			memcpy(tail + f.path_size, chunk, got);
			ret = recording_writer_add(writer, SREC_BLOCK_FILE, &f, sizeof(f), tail, f.path_size + got);
			free(tail);
		}
		offset += got;
		if (ret < 0 || got < ARCHIVE_CHUNK || offset >= size)
			break;
	} while (1);
	free(chunk);
	return ret < 0 ? -1 : (long long)offset;
}

bool archive_debugaltlink(Elf *elf, const char **name, char *hex)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = debug_file_section(elf, ".gnu_debugaltlink", &shdr);
	const char *end;
	Elf_Data *data;
	size_t id_size;

	/* A file name, its NUL, then the dwz file's build ID (libdw/dwarf_getalt.c reads it so). */
	if (!scn || shdr.sh_type == SHT_NOBITS || (shdr.sh_flags & SHF_COMPRESSED) || !(data = elf_getdata(scn, NULL)) ||
	    !data->d_buf || !(end = memchr(data->d_buf, '\0', data->d_size)))
		return false;
	id_size = data->d_size - (size_t)(end + 1 - (const char *)data->d_buf);
	if (id_size < 2 || id_size > 64 || end == data->d_buf)
		return false;
	*name = data->d_buf;
	hex_encode(hex, (const unsigned char *)end + 1, id_size);
	return true;
}

/* What `stackrec archive` writes into one archive. */
struct archiving {
	struct recording_writer *writer;
	char *path_list; /* where libdwfl looks for separate debug files (debug_file_dwfl_path) */
	char **keys;	 /* each file archived: its build ID, with ".debug" for a debug file */
	size_t key_count;
	size_t files, missing;
	long long bytes;
	int status;
};

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/*
 * Archives the file open on fd (at path, with build ID hex; a separate debug file when debug_file), once however
 * many modules need it, then the dwz file its .gnu_debugaltlink names, found as convert finds it (by its build ID
 * in the debug directories, else at the link's path). Extraction places a file by its build ID and by whether its
 * path ends in ".debug" (a debug file: .build-id/xx/rest.debug, where convert looks for debug and dwz files), so
 * a debug file named otherwise is archived under its path with ".debug" added.
 */
static void archive_file(struct archiving *a, int fd, const char *path, const char *hex, bool debug_file)
{
	char *key = xasprintf("%s%s", hex, debug_file ? ".debug" : ""), alt_hex[2 * 64 + 1], *alt_path, *name;
	const char *alt_name;
	long long n;
	Elf *elf;
	int alt_fd;

	for (size_t i = 0; i < a->key_count; i++)
		if (!strcmp(a->keys[i], key)) {
			free(key);
			return;
		}
	a->keys = xrealloc(a->keys, (a->key_count + 1) * sizeof(char *));
	a->keys[a->key_count++] = key;
	name = debug_file && !ends_with(path, ".debug") ? xasprintf("%s.debug", path) : xstrdup(path);
	n = add_file(a->writer, fd, name, hex);
	debug("archived %s as '%s' (%lld bytes)", path, name, n);
	free(name);
	if (n == ADD_FILE_SKIPPED) {
		a->missing++;
		return;
	}
	if (n < 0) {
		a->status = 1;
		return;
	}
	a->bytes += n;
	a->files++;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	/* Debian's stripped binaries keep the .gnu_debugaltlink of the DWARF that went to their debug files */
	if (debug_file_has_debug_info(elf) && archive_debugaltlink(elf, &alt_name, alt_hex)) {
		alt_fd = debug_file_find_alt(NULL, a->path_list, path, alt_name, alt_hex, &alt_path);
		if (alt_fd >= 0) {
			archive_file(a, alt_fd, alt_path, alt_hex, true);
			close(alt_fd);
			free(alt_path);
		} else {
			warning("'%s': its dwz file '%s' (build ID %s) was not found; not archived", path, alt_name,
				alt_hex);
			a->missing++;
		}
	}
	elf_end(elf);
}

/*
 * The separate debug file of the file found for build ID hex (open on fd at path): by build ID in a debug
 * directory, else through its .gnu_debuglink as libdwfl follows it, else from the debuginfod servers of
 * DEBUGINFOD_URLS, which convert asks too (a debug file only a server had was left out, and the other machine
 * got unnamed frames). An fd with its path in *debug_path, or -1.
 * As in convert (module_file.c), a refused candidate (a FIFO in a debug directory) means no debug file at all.
 */
static int find_debug_file(const struct debug_file_search *search, const char *path_list, int fd, const char *path,
			   const char *hex, char **debug_path)
{
	const char *link, *refused = NULL;
	GElf_Word crc;
	Elf *elf;
	int debug_fd = -1;

	for (size_t d = 0; d <= search->dir_count && debug_fd < 0 && !refused; d++) {
		char *dir = debug_file_dir(search, d), *rel = build_id_hex_rel_path(hex, ".debug");

		*debug_path = rel ? xasprintf("%s/%s", dir, rel) : NULL;
		debug_fd = *debug_path ? input_file_open(*debug_path, true, &refused) : -1;
		if (debug_fd < 0) {
			free(*debug_path);
			*debug_path = NULL;
		}
		free(dir);
		free(rel);
	}
	if (debug_fd >= 0 || refused)
		return debug_fd;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	link = elf ? dwelf_elf_gnu_debuglink(elf, &crc) : NULL;
	if (link)
		debug_fd = debug_file_find_by_link(NULL, path_list, path, link, crc, hex, debug_path);
	elf_end(elf);
	if (debug_fd < 0 && debuginfod_client_wanted()) {
		debug_fd = debuginfod_client_find_debuginfo(hex, debug_path);
		if (debug_fd >= 0 && !strcmp(*debug_path, path)) { /* the file found already came from there */
			close(debug_fd);
			debug_fd = -1;
		}
		if (debug_fd < 0) {
			free(*debug_path);
			*debug_path = NULL;
			debug_fd = -1; /* not a negative errno */
		}
	}
	return debug_fd;
}

int cmd_archive(int argc, char **argv)
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },   { "debug-dir", required_argument, NULL, 'd' },
		{ "no-cache", no_argument, NULL, 'K' },	      { "cache-dir", required_argument, NULL, 'C' },
		{ "verbose", no_argument, NULL, 'v' },	      { "debuginfod", required_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },	      { NULL, 0, NULL, 0 },
	};
	struct debug_file_search search = { 0 };
	struct recording_reader reader;
	struct recording_writer writer;
	struct wanted w = { 0 };
	struct archiving a = { 0 };
	const char *out_opt = NULL, *cache_opt = NULL;
	char *out = NULL, *cache = NULL;
	bool no_cache = false;
	int c, status = 0;

	while ((c = getopt_long(argc, argv, "o:d:vh", options, NULL)) != -1) {
		switch (c) {
		case 'o': out_opt = optarg; break;
		case 'd':
			search.dirs = xrealloc(search.dirs, (search.dir_count + 1) * sizeof(char *));
			search.dirs[search.dir_count++] = optarg;
			break;
		case 'K': no_cache = true; break;
		case 'C': cache_opt = optarg; break;
		case 'U': setenv("DEBUGINFOD_URLS", optarg, 1); break; /* as convert --debuginfod */
		case 'v': verbose = true; break;
		case 'h':
			printf("usage: stackrec archive REC [-o OUT] [--debug-dir DIR] [--debuginfod URL] [--cache-dir DIR | "
			       "--no-cache]\n\n"
			       "Bundles the binaries and debug files REC needs (found as convert finds them, debuginfod\n"
			       "servers too: --debuginfod URL or $DEBUGINFOD_URLS) into OUT (default REC.archive), for\n"
			       "`stackrec convert REC --archive OUT` on another machine.\n");
			return 0;
		default: return 2;
		}
	}
	if (optind + 1 != argc) {
		error("usage: stackrec archive REC [-o OUT] [--debug-dir DIR] [--debuginfod URL] [--cache-dir DIR | "
		      "--no-cache]");
		return 2;
	}
	if (recording_reader_open(&reader, argv[optind]) < 0)
		return 1;
	/* Build IDs in a lost frame of REC cannot be archived: the archive is written, and partial says so. */
	recording_reader_for_each(&reader, collect, &w, RECORDING_WARN_SUMMARY);
	if (recording_reader_report_damage(&reader))
		status = EXIT_PARTIAL;
	recording_reader_close(&reader);
	if (!no_cache)
		cache = cache_opt ? xstrdup(cache_opt) : cache_dir_default();
	search.cache_dir = cache;
	out = out_opt ? xstrdup(out_opt) : xasprintf("%s.archive", argv[optind]);
	if (recording_writer_open_replacing(&writer, out) < 0) {
		status = 1;
		goto cleanup;
	}
	recording_writer_add(&writer, SREC_BLOCK_HOST, SREC_HOST_ARCHIVE_OF "=", strlen(SREC_HOST_ARCHIVE_OF "="),
			     argv[optind], strlen(argv[optind]) + 1);
	a.writer = &writer;
	a.path_list = debug_file_dwfl_path(&search);
	for (size_t i = 0; i < w.count && !a.status; i++) {
		struct debug_file file;
		const char *reason = NULL;
		char *debug_path;
		int debug_fd;

		if (debug_file_find(&search, w.paths[i], w.build_ids[i], &file, &reason) < 0) {
			warning("'%s' (build ID %s): %s; not archived", w.paths[i], w.build_ids[i], reason);
			a.missing++;
			continue;
		}
		archive_file(&a, file.fd, file.path, w.build_ids[i], false);
		debug_fd = find_debug_file(&search, a.path_list, file.fd, file.path, w.build_ids[i], &debug_path);
		if (debug_fd >= 0) {
			archive_file(&a, debug_fd, debug_path, w.build_ids[i], true);
			close(debug_fd);
			free(debug_path);
		}
		debug_file_release(&file);
	}
	if (a.status)
		status = a.status;
	if (recording_writer_close(&writer, 0) < 0)
		status = 1;
	else
		fprintf(stderr, "stackrec: archived %zu files (%.1f MB) for %zu build IDs to '%s'%s\n", a.files,
			(double)a.bytes / 1e6, w.count, out, a.missing ? " (some missing: see the warnings)" : "");
cleanup:
	for (size_t i = 0; i < w.count; i++) {
		free(w.build_ids[i]);
		free(w.paths[i]);
	}
	free(w.build_ids);
	free(w.paths);
	for (size_t i = 0; i < a.key_count; i++)
		free(a.keys[i]);
	free(a.keys);
	free(a.path_list);
	free(search.dirs);
	free(cache);
	free(out);
	return status;
}

/* Extraction. */

struct extract {
	const char *archive_path;
	char *dir;
	int failed;
	bool is_archive; /* its HOST block says archive_of=: made by `stackrec archive` */
	uint64_t written, limit; /* bytes extracted so far (not counting holes), and at most (archive_extract) */
};

#define EXTRACT_PAGE 4096 /* zeros in pages this size are written as holes */

static bool all_zero(const unsigned char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && !memcmp(p, p + 1, n - 1));
}

/* The bytes of data in pages not all zeros: what extracting it puts on the disk (the rest become holes). */
static uint64_t nonzero_bytes(const unsigned char *data, size_t size)
{
	uint64_t bytes = 0;

	for (size_t at = 0; at < size; at += EXTRACT_PAGE) {
		size_t n = size - at < EXTRACT_PAGE ? size - at : EXTRACT_PAGE;

		bytes += all_zero(data + at, n) ? 0 : n;
	}
	return bytes;
}

/* Writes data at offset of fd, which ends there, its pages of zeros as holes; false with errno. */
static bool write_with_holes(int fd, const unsigned char *data, size_t size, uint64_t offset)
{
	for (size_t at = 0; at < size; at += EXTRACT_PAGE) {
		size_t n = size - at < EXTRACT_PAGE ? size - at : EXTRACT_PAGE;

		if (!all_zero(data + at, n) && pwrite(fd, data + at, n, (off_t)(offset + at)) != (ssize_t)n)
			return false;
	}
	return ftruncate(fd, (off_t)(offset + size)) == 0; /* the holes at the end too */
}

static void archive_of(void *ctx, const char *key, const char *value)
{
	(void)value;
	if (!strcmp(key, SREC_HOST_ARCHIVE_OF))
		((struct extract *)ctx)->is_archive = true;
}

static int extract_block(void *ctx, uint32_t type, const void *body, uint32_t size)
{
	struct extract *x = ctx;
	struct srec_file f;
	const char *path;
	const void *data;
	uint64_t disk;
	size_t len;
	struct stat st;
	char *rel, *target, *slash;
	int fd;

	if (type == SREC_BLOCK_HOST)
		recording_parse_host(body, size, archive_of, x);

	if (type != SREC_BLOCK_FILE || recording_parse_file(body, size, &f, &path, &data) < 0 ||
	    f.kind != SREC_FILE_DEBUG || f.build_id_size < 2)
		return 0;
	if (x->failed)
		return 0;
	/* Zeros cost no disk, and a program's padding between segments aligned to 2 MiB is zeros that compress a
	 * thousand times: only the rest counts. */
	disk = nonzero_bytes(data, f.data_size);
	if (disk > x->limit - x->written) {
		x->failed = 1;
		error("'%s': its files would take more than %d times its size once extracted: damaged or forged archive",
		      x->archive_path, INPUT_FILE_MAX_INFLATION);
		return 0;
	}
	x->written += disk;
	len = strlen(path);
	rel = build_id_rel_path(f.build_id, f.build_id_size, len > 6 && !strcmp(path + len - 6, ".debug") ? ".debug" : "");
	target = xasprintf("%s/%s", x->dir, rel);
	slash = strrchr(target, '/');
	*slash = '\0';
	mkdir(target, 0700); /* DIR/.build-id/xx; DIR/.build-id exists */
	*slash = '/';
	fd = open(target, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		x->failed = 1;
		error("cannot write '%s': %s", target, strerror(errno));
	} else if (fstat(fd, &st) < 0 || (f.data_offset && f.data_offset != (uint64_t)st.st_size) ||
		   (!f.data_offset && ftruncate(fd, 0) < 0)) {
		/* `archive` writes each file's blocks in order, each where the last ended (a file archived twice
		 * starts again at 0): an offset anywhere else is damage or a forgery, and would make a sparse file
		 * of any size, then read to its end. */
		x->failed = 1;
		error("'%s': a block of '%s' is at offset %llu, not where the file's bytes so far end (%llu): damaged "
		      "archive",
		      x->archive_path, path, (unsigned long long)f.data_offset, (unsigned long long)st.st_size);
	} else if (!write_with_holes(fd, data, f.data_size, f.data_offset)) {
		x->failed = 1;
		error("cannot write '%s': %s", target, strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	free(target);
	free(rel);
	return 0;
}

char *archive_file_identity(const char *archive_path)
{
	char *path = realpath(archive_path, NULL), *identity = NULL;
	struct stat st;

	if (path && stat(path, &st) == 0 && S_ISREG(st.st_mode))
		identity = xasprintf("archive %s %lld %lld.%09ld", path, (long long)st.st_size,
				     (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	free(path);
	return identity;
}

const char *archive_temp_parent(void)
{
	const char *dir = getenv("TMPDIR");

	return dir && dir[0] == '/' ? dir : "/tmp"; /* as mkdtemp(1) and GNU sort: a relative one is not used */
}

char *archive_extract(const char *archive_path, bool *damaged)
{
	struct recording_reader reader;
	struct extract x = { 0 };
	char *build_id_dir;
	sigset_t mask;
	bool made;
	int err;

	if (recording_reader_open(&reader, archive_path) < 0)
		return NULL;
	x.dir = xasprintf("%s/stackrec-archive.XXXXXX", archive_temp_parent());
	pending_create_begin(&mask);
	made = mkdtemp(x.dir) != NULL;
	err = errno;
	if (made) {
		/* Without symbolic links or doubled slashes ($TMPDIR may have them): the caches' keys name the files
		 * extracted here by their place in this directory, found by prefix in their real paths
		 * (debug_file_search.archive_dir) */
		char *real = realpath(x.dir, NULL);

		if (real) {
			free(x.dir);
			x.dir = real;
		}
	}
	if (made)
		pending_dir_set(x.dir); /* a Ctrl-C or a file cut short leaves no directory behind (interrupt_cleanup.c) */
	pending_create_end(&mask);
	if (!made) {
		error("cannot create a directory in '%s' for '%s': %s", archive_temp_parent(), archive_path,
		      strerror(err));
		free(x.dir);
		recording_reader_close(&reader);
		return NULL;
	}
	x.archive_path = archive_path;
	/* Its blocks are compressed, zeros a thousand times and more: what they may fill the disk with is bounded as
	 * compressed sections are (input_file.h); binaries and debug files compress 3 to 10 times. */
	x.limit = (uint64_t)reader.size * INPUT_FILE_MAX_INFLATION;
	build_id_dir = xasprintf("%s/.build-id", x.dir);
	mkdir(build_id_dir, 0700);
	free(build_id_dir);
	recording_reader_for_each(&reader, extract_block, &x,
				  verbose ? RECORDING_WARN_EACH : RECORDING_WARN_SUMMARY);
	*damaged = recording_reader_report_damage(&reader);
	if (*damaged)
		warning("'%s': using the files that were intact", archive_path);
	recording_reader_close(&reader);
	/* A recording given for its archive (--archive app.rec) has nothing to give: said, not silently ignored. */
	if (!x.is_archive && !*damaged && !x.failed) {
		error("'%s' is not an archive made by `stackrec archive` (no archive_of): not used", archive_path);
		x.failed = 1;
	}
	if (x.failed) {
		/* Its files cannot be trusted whole: none is used, and convert says so in its exit status. */
		archive_remove_dir(x.dir);
		return NULL;
	}
	return x.dir;
}

void archive_remove_dir(char *dir)
{
	if (!dir)
		return;
	remove_tree(dir);
	pending_dir_clear(dir); /* after: a stop signal meanwhile finishes the removal */
	free(dir);
}
