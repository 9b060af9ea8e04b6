/*
 * zstd_sections.c — a copy of an ELF file with its compressed sections decompressed (see zstd_sections.h).
 * The copy is the original bytes but for the compressed bodies, then each decompressed body at the end
 * (compressed sections are debug sections, never loaded, so they may live anywhere), then a new section
 * header table pointing at them; only the ELF header's e_shoff changes in place. The copy is a file kept
 * on disk for later runs (debug_copies.h), or a memory file where none can be kept, written in pieces as the
 * sections are inflated, several at once on as many cores. 64-bit ELF files of this machine's byte order only;
 * anything else is left to libelf as it is.
 */
#include "zstd_sections.h"

#include <dlfcn.h>
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libdeflate.h>
#include <isa-l/igzip_lib.h>
#include <zstd.h>

#include "../util.h"
#include "debug_copies.h"
#include "input_file.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

#if __BYTE_ORDER == __LITTLE_ENDIAN
#define NATIVE_ELFDATA ELFDATA2LSB
#else
#define NATIVE_ELFDATA ELFDATA2MSB
#endif

#define MAX_THREADS 16

/* One compressed section, inflated into the copy at offset. */
struct section_job {
	size_t index;		/* in the section header table */
	const unsigned char *in; /* the compressed bytes (after the Elf64_Chdr) */
	size_t in_size, out_size;
	uint64_t offset;	/* of the body in the copy */
	uint32_t type;		/* ELFCOMPRESS_ZLIB or ELFCOMPRESS_ZSTD; 0: left out (never_read), empty in the copy */
	bool ok;
};

/*
 * Debug sections nothing of stackrec reads: location lists (where a variable lives: the symbolizer names
 * functions and lines, the unwinder reads CFI), macros, and the name indexes libdw 0.188 never looks at. They
 * are left out of the copy as empty sections, which libdw takes for absent (dwarf_begin_elf's check_section):
 * in libc's debug file .debug_loclists is 1.4 MB of the 10 MB inflated, memory and time of every cold run.
 * Changing this list changes the copies kept on disk: bump DEBUG_COPIES_LAYOUT (debug_copies.h).
 */
static bool never_read(const char *name)
{
	static const char *const names[] = { ".debug_loc",	    ".debug_loclists",	   ".debug_macro",
					     ".debug_macinfo",	    ".debug_pubnames",	   ".debug_pubtypes",
					     ".debug_gnu_pubnames", ".debug_gnu_pubtypes", ".debug_names" };

	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* The name of section i, or NULL when the section name table or the name is not where it should be. */
static const char *section_name(const unsigned char *file, size_t size, const Elf64_Ehdr *ehdr,
				const Elf64_Shdr *shdrs, size_t i)
{
	size_t strndx = ehdr->e_shstrndx == SHN_XINDEX ? shdrs[0].sh_link : ehdr->e_shstrndx;
	const Elf64_Shdr *names;

	if (strndx == SHN_UNDEF || strndx >= ehdr->e_shnum)
		return NULL;
	names = &shdrs[strndx];
	if (names->sh_type != SHT_STRTAB || (names->sh_flags & SHF_COMPRESSED) || names->sh_offset > size ||
	    size - names->sh_offset < names->sh_size || shdrs[i].sh_name >= names->sh_size ||
	    !memchr(file + names->sh_offset + shdrs[i].sh_name, '\0', names->sh_size - shdrs[i].sh_name))
		return NULL;
	return (const char *)file + names->sh_offset + shdrs[i].sh_name;
}

struct section_jobs {
	struct section_job *jobs; /* largest first, so that the longest is not the last one started */
	size_t count, next;	  /* next: the next job to take, shared by the threads */
	int fd;			  /* the copy */
	bool kept;		  /* a copy kept on disk (debug_copies.h), not a memory file */
	bool streamed;		  /* its zlib sections were inflated in pieces by ISA-L */
	int write_error;	  /* errno of a write that failed (any thread), else 0 */
};

/*
 * Sections are inflated in pieces of this many bytes, each written to the copy before the next is made: the
 * copy is never mapped, so its pages are not part of the run's memory (where inflating into a mapping of it made
 * every byte so, 25 MB for binutils' dwz file, of which later runs touch only what libdw reads), and the piece
 * stays in the cache while it is written. Writing into a mapping of the kept file was also the slowest way there:
 * each page's first write a page fault through the file system, 7 ms of libc's 12 MB copy against 1.4 ms for
 * pwrite, on the critical path of a cold conversion.
 */
#define STREAM_PIECE (256u << 10)

/*
 * zlib pieces are inflated by ISA-L (Debian's libisal2), whose streaming inflate is as fast as libdeflate's
 * whole-buffer one (libc's 5.8 MB .debug_info: 10.2-10.4 ms against 10.6-12.4 here, and 40 for zlib's): that
 * section alone bounds how soon a cold run can name libc's frames. It is loaded when a copy is first made, not
 * linked: every other command would pay its pages at start-up. Without it, a zlib section is inflated whole by
 * libdeflate into memory of its own, then written.
 */
static struct {
	void (*init)(struct inflate_state *);
	int (*inflate)(struct inflate_state *);
} isal;
static pthread_once_t isal_once = PTHREAD_ONCE_INIT;

static void isal_load(void)
{
	void *lib = dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);

	if (lib) {
		*(void **)&isal.init = dlsym(lib, "isal_inflate_init");
		*(void **)&isal.inflate = dlsym(lib, "isal_inflate");
	}
	if (!isal.init || !isal.inflate) {
		debug("libisal.so.2 (Debian's libisal2) not loaded: %s; zlib sections are inflated whole, in memory",
		      lib ? "no isal_inflate in it" : dlerror());
		isal.init = NULL;
		isal.inflate = NULL;
	}
}

/* Whether zlib sections can be streamed (ISA-L is there). */
static bool can_stream(void)
{
	pthread_once(&isal_once, isal_load);
	return isal.inflate != NULL;
}

/*
 * Writes n bytes of a section at offset of the copy. A kept copy's pieces are handed to the disk as they are
 * written (sync_file_range starts the writing back and does not wait): the keeper's fdatasync (debug_copies.c)
 * then finds little left, where a cold conversion waited 4-5 ms at its end for libc's 12 MB copy. Only a hint:
 * a failed write-back is fdatasync's to report.
 */
static bool write_piece(struct section_jobs *w, const void *piece, size_t n, uint64_t offset)
{
	if (!fd_pwrite_all(w->fd, piece, n, offset)) {
		__atomic_store_n(&w->write_error, errno ? errno : EIO, __ATOMIC_RELAXED);
		return false;
	}
	if (w->kept)
		sync_file_range(w->fd, (off_t)offset, (off_t)n, SYNC_FILE_RANGE_WRITE);
	return true;
}

/* A zlib section inflated in pieces by ISA-L, which checks the stream's Adler-32; fails when the stream does not
 * decompress to exactly the declared size. */
static bool stream_zlib(struct section_jobs *w, const struct section_job *j, unsigned char *piece)
{
	struct inflate_state *z = xmalloc(sizeof(*z)); /* 200 KB of tables and history: not for a thread's stack */
	uint64_t written = 0;
	size_t in_left = j->in_size;
	bool ok = false;

	isal.init(z);
	z->crc_flag = ISAL_ZLIB;
	z->next_in = (uint8_t *)j->in;
	while (z->block_state != ISAL_BLOCK_FINISH) {
		uint32_t in_now = in_left > (1u << 30) ? 1u << 30 : (uint32_t)in_left;
		size_t made;
		int r;

		z->avail_in = in_now;
		z->next_out = piece;
		z->avail_out = STREAM_PIECE;
		r = isal.inflate(z);
		in_left -= in_now - z->avail_in;
		made = STREAM_PIECE - z->avail_out;
		/* anything but ISAL_DECOMP_OK fails: ISAL_NEED_DICT too (a preset dictionary, which libdeflate and
		 * zlib refuse here as well), not decoded without it */
		if (r != ISAL_DECOMP_OK || made > j->out_size - written ||
		    (made && !write_piece(w, piece, made, j->offset + written)))
			goto out;
		written += made;
		if (!made && !in_left && z->block_state != ISAL_BLOCK_FINISH)
			goto out; /* the input ended before the stream did */
	}
	ok = written == j->out_size;
out:
	free(z);
	return ok;
}

/* A zstd section (one frame or several) inflated in pieces; fails when it does not decompress to exactly the
 * declared size. */
static bool stream_zstd(struct section_jobs *w, const struct section_job *j, unsigned char *piece)
{
	ZSTD_DStream *z = ZSTD_createDStream();
	ZSTD_inBuffer in = { j->in, j->in_size, 0 };
	ZSTD_bounds bounds = ZSTD_dParam_getBounds(ZSTD_d_windowLogMax);
	uint64_t written = 0;
	int window_log = bounds.lowerBound;
	bool ok = false;

	/* The window streaming keeps: as large as the section, as the one-shot ZSTD_decompress allowed (the default
	 * stops at 128 MiB), but no larger, whatever a frame declares (a stream needs no window beyond its output). */
	while (window_log < bounds.upperBound && ((uint64_t)1 << window_log) < j->out_size)
		window_log++;
	if (z)
		ZSTD_DCtx_setParameter(z, ZSTD_d_windowLogMax, window_log); /* refused: the default stands */
	while (z) {
		ZSTD_outBuffer out = { piece, STREAM_PIECE, 0 };
		size_t r = ZSTD_decompressStream(z, &out, &in);

		if (ZSTD_isError(r) || out.pos > j->out_size - written ||
		    (out.pos && !write_piece(w, piece, out.pos, j->offset + written)))
			break;
		written += out.pos;
		if (r == 0 && in.pos == in.size) { /* the last frame ended with the input */
			ok = written == j->out_size;
			break;
		}
		if (!out.pos && in.pos == in.size)
			break; /* the input ended before the frame did */
	}
	ZSTD_freeDStream(z);
	return ok;
}

/* A zlib section inflated whole by libdeflate (without ISA-L), which checks the stream's Adler-32 as zlib does
 * and fails when the stream does not decompress to exactly the declared size; then written. */
static bool inflate_whole(struct libdeflate_decompressor **d, struct section_jobs *w, const struct section_job *j)
{
	unsigned char *out;
	bool ok;

	if (!*d && !(*d = libdeflate_alloc_decompressor()))
		return false;
	out = malloc(j->out_size ? j->out_size : 1); /* up to 4 GiB (plan_jobs): failing is an answer */
	if (!out)
		return false;
	ok = libdeflate_zlib_decompress(*d, j->in, j->in_size, out, j->out_size, NULL) == LIBDEFLATE_SUCCESS &&
	     write_piece(w, out, j->out_size, j->offset);
	free(out);
	return ok;
}

static void *inflate_sections(void *arg)
{
	struct section_jobs *w = arg;
	struct libdeflate_decompressor *d = NULL; /* this thread's, made at its first zlib section without ISA-L */
	unsigned char *piece = xmalloc(STREAM_PIECE);
	size_t k;

	while ((k = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) < w->count) {
		struct section_job *j = &w->jobs[k];

		if (!j->type)
			j->ok = true;
		else if (j->type == ELFCOMPRESS_ZLIB && w->streamed)
			j->ok = stream_zlib(w, j, piece);
		else if (j->type == ELFCOMPRESS_ZLIB)
			j->ok = inflate_whole(&d, w, j);
		else
			j->ok = stream_zstd(w, j, piece);
	}
	if (d)
		libdeflate_free_decompressor(d);
	free(piece);
	return NULL;
}

static int compare_by_size(const void *a, const void *b)
{
	const struct section_job *x = a, *y = b;

	if (x->out_size != y->out_size)
		return x->out_size > y->out_size ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int compare_by_offset(const void *a, const void *b)
{
	const struct section_job *x = a, *y = b;

	return (x->in > y->in) - (x->in < y->in); /* all point into one mapping */
}

/* Inflates the jobs into the copy on up to one thread per core (this one included); false when one failed. */
static bool run_jobs(struct section_jobs *w)
{
	pthread_t threads[MAX_THREADS];
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	size_t wanted = cores > 1 ? (size_t)cores : 1, started = 0;
	bool ok = true;

	if (wanted > MAX_THREADS)
		wanted = MAX_THREADS;
	if (wanted > w->count)
		wanted = w->count;
	sort_array(w->jobs, w->count, sizeof(*w->jobs), compare_by_size);
	for (; started + 1 < wanted; started++)
		if (thread_start_without_signals(&threads[started], inflate_sections, w) != 0)
			break; /* fewer threads: the ones there are (this one at least) do all the work */
	inflate_sections(w);
	for (size_t t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
	for (size_t k = 0; k < w->count; k++)
		ok &= w->jobs[k].ok;
	return ok;
}

/*
 * Reserves the blocks of bytes [from, to) of fd, rounded out to whole pages (up to end): a page is written back
 * whole, so a page where a gap meets a hole needs the hole's blocks too where a block is smaller than a page.
 * posix_fallocate, which writes where the file system cannot reserve. false with errno when it failed.
 */
static bool reserve(int fd, uint64_t from, uint64_t to, uint64_t end)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	int err;

	from -= from % page;
	to = to + page - 1 < end ? (to + page - 1) / page * page : end;
	err = posix_fallocate(fd, (off_t)from, (off_t)(to - from));
	errno = err;
	return !err;
}

/*
 * The parts of the copy that are not inflated, with w->jobs in file order: the original bytes but the
 * compressed bodies, which would only take room (the gaps between them, in file order; in a hostile file
 * sections may overlap: a gap is then empty), are written to the copy; or, with reserve_only, the disk blocks
 * of every byte the copy will have are reserved in it: those gaps, the bodies and the section header table at
 * the end. The bodies' places in the original stay holes. false when a write or a reservation failed (errno).
 */
static bool copy_gaps(struct section_jobs *w, const unsigned char *file, size_t size, bool reserve_only,
		      uint64_t copy_size)
{
	size_t done = 0;
	uint64_t bodies = (size + 7) & ~(uint64_t)7;

	for (size_t k = 0; k <= w->count; k++) {
		size_t to = k < w->count ? (size_t)(w->jobs[k].in - sizeof(Elf64_Chdr) - file) : size;

		if (to > done && !(reserve_only ? reserve(w->fd, done, to, copy_size)
						: write_piece(w, file + done, to - done, done)))
			return false;
		if (k < w->count && (size_t)(w->jobs[k].in + w->jobs[k].in_size - file) > done)
			done = (size_t)(w->jobs[k].in + w->jobs[k].in_size - file);
	}
	return !reserve_only || reserve(w->fd, bodies, copy_size, copy_size);
}

/*
 * The jobs of a copy of file (size bytes, headers ehdr and shdrs) into w->jobs: the compressed sections it
 * decompresses, and those it leaves out (never read; with cfi_only, all but .debug_frame). Returns the offset
 * where the section header table goes, after the bodies; *zstd counts the zstd sections, *left_out those left
 * out. shdrs' alignments of the sections decompressed are set to the bodies'.
 */
static uint64_t plan_jobs(struct section_jobs *w, const unsigned char *file, size_t size, const Elf64_Ehdr *ehdr,
			  Elf64_Shdr *shdrs, const char *path, bool zlib, bool cfi_only, size_t *zstd, size_t *left_out)
{
	uint64_t end = (size + 7) & ~(uint64_t)7, total = 0;
	size_t capacity = 0;

	w->count = *zstd = *left_out = 0;
	for (size_t i = 0; i < ehdr->e_shnum; i++) {
		Elf64_Chdr chdr;
		const char *name;

		if (!(shdrs[i].sh_flags & SHF_COMPRESSED) || shdrs[i].sh_type == SHT_NOBITS ||
		    shdrs[i].sh_offset > size || size - shdrs[i].sh_offset < shdrs[i].sh_size ||
		    shdrs[i].sh_size < sizeof(chdr))
			continue;
		memcpy(&chdr, file + shdrs[i].sh_offset, sizeof(chdr));
		if (chdr.ch_type != ELFCOMPRESS_ZSTD && (chdr.ch_type != ELFCOMPRESS_ZLIB || !zlib))
			continue;
		name = section_name(file, size, ehdr, shdrs, i);
		if (never_read(name) || (cfi_only && (!name || strcmp(name, ".debug_frame")))) {
			(*left_out)++;
			GROW(w->jobs, capacity, w->count + 1);
			w->jobs[w->count++] = (struct section_job){ .index = i, .in = file + shdrs[i].sh_offset + sizeof(chdr),
								    .in_size = shdrs[i].sh_size - sizeof(chdr),
								    .offset = end };
			continue;
		}
		/* debug_file.c refused files that declare more (input_file.h); this allocation must not trust the
		 * header either, whoever hands the file over. */
		if (chdr.ch_size > (1ull << 32) || total + chdr.ch_size > (uint64_t)size * INPUT_FILE_MAX_INFLATION) {
			debug("'%s': section %zu declares %llu bytes decompressed: left compressed", path, i,
			      (unsigned long long)chdr.ch_size);
			continue;
		}
		total += chdr.ch_size;
		*zstd += chdr.ch_type == ELFCOMPRESS_ZSTD;
		GROW(w->jobs, capacity, w->count + 1);
		w->jobs[w->count++] = (struct section_job){ .index = i, .in = file + shdrs[i].sh_offset + sizeof(chdr),
							    .in_size = shdrs[i].sh_size - sizeof(chdr),
							    .out_size = chdr.ch_size, .offset = end, .type = chdr.ch_type };
		shdrs[i].sh_addralign = chdr.ch_addralign ? chdr.ch_addralign : 1;
		end = (end + chdr.ch_size + 7) & ~(uint64_t)7;
	}
	return end;
}

/* A memory file of size bytes for a copy that is not kept, or -1. */
static int memory_copy(uint64_t size)
{
	int fd = memfd_create("decompressed-sections", MFD_CLOEXEC);

	if (fd >= 0 && ftruncate(fd, (off_t)size) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Writes the copy: the original's bytes but the compressed bodies (w->jobs in file order), each body inflated,
 * then the new section header table at end and the ELF header pointing at it (shdrs and ehdr changed to say so).
 * False when a write or a section failed (said with -v).
 */
static bool fill_copy(struct section_jobs *w, const unsigned char *file, size_t size, Elf64_Shdr *shdrs,
		      Elf64_Ehdr *ehdr, uint64_t end, uint64_t copy_size, const char *path)
{
	if (!copy_gaps(w, file, size, false, copy_size)) {
		debug("'%s': cannot write its decompressed copy: %s", path, strerror(errno));
		return false;
	}
	if (!run_jobs(w)) {
		if (w->write_error)
			debug("'%s': cannot write its decompressed copy: %s", path, strerror(w->write_error));
		else
			debug("'%s': cannot decompress its compressed sections", path);
		return false;
	}
	for (size_t k = 0; k < w->count; k++) {
		Elf64_Shdr *sh = &shdrs[w->jobs[k].index];

		sh->sh_flags &= ~(Elf64_Xword)SHF_COMPRESSED;
		sh->sh_offset = w->jobs[k].offset;
		sh->sh_size = w->jobs[k].out_size;
	}
	ehdr->e_shoff = end;
	if (!write_piece(w, shdrs, ehdr->e_shnum * sizeof(*shdrs), end) || !write_piece(w, ehdr, sizeof(*ehdr), 0)) {
		debug("'%s': cannot write its decompressed copy: %s", path, strerror(errno));
		return false;
	}
	return true;
}

int zstd_sections_decompress(int fd, const char *path, bool zlib, bool cfi_only)
{
	unsigned char *file = MAP_FAILED;
	struct section_jobs w = { .fd = -1 };
	struct debug_copy kept = { .dir_fd = -1, .fd = -1 };
	Elf64_Shdr *shdrs = NULL;
	Elf64_Ehdr ehdr;
	struct stat st;
	size_t size, zstd = 0, left_out = 0, copy_size = 0;
	uint64_t end;
	int copy = -1;
	bool ok = false;

	if (fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(ehdr))
		return -1;
	size = (size_t)st.st_size;
	file = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (file == MAP_FAILED)
		return -1;
	memcpy(&ehdr, file, sizeof(ehdr));
	if (memcmp(ehdr.e_ident, ELFMAG, SELFMAG) || ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    ehdr.e_ident[EI_DATA] != NATIVE_ELFDATA || ehdr.e_shentsize != sizeof(Elf64_Shdr) || ehdr.e_shnum == 0 ||
	    ehdr.e_shoff > size || (size - ehdr.e_shoff) / sizeof(Elf64_Shdr) < ehdr.e_shnum)
		goto out;
	shdrs = xmalloc(ehdr.e_shnum * sizeof(*shdrs));
	memcpy(shdrs, file + ehdr.e_shoff, ehdr.e_shnum * sizeof(*shdrs));
	/* A whole copy (zlib sections too) kept from an earlier run serves the unwinder as well: it reads only the
	 * pages of .debug_frame. The unwinder makes none: it asks in warm conversions too, and needs one section. */
	end = plan_jobs(&w, file, size, &ehdr, shdrs, path, zlib, false, &zstd, &left_out);
	if (w.count && zlib) {
		copy = debug_copies_find(&kept, fd, path, end + ehdr.e_shnum * sizeof(*shdrs), !cfi_only);
		if (copy >= 0) {
			ok = true;
			goto out;
		}
	}
	if (cfi_only && w.count)
		end = plan_jobs(&w, file, size, &ehdr, shdrs, path, zlib, true, &zstd, &left_out);
	if (!w.count)
		goto out;
	copy_size = end + ehdr.e_shnum * sizeof(*shdrs);
	sort_array(w.jobs, w.count, sizeof(*w.jobs), compare_by_offset);
	/* The copy is the kept file debug_copies_find began, its blocks reserved first (a full disk then makes a memory
	 * file of it before anything is inflated), else a memory file. */
	w.fd = kept.fd;
	if (kept.fd >= 0 && !copy_gaps(&w, file, size, true, copy_size)) {
		debug("'%s': no room to keep a decompressed copy: %s", path, strerror(errno));
		debug_copies_keep(&kept, false);
	}
	copy = kept.fd >= 0 ? kept.fd : memory_copy(copy_size);
	if (copy < 0)
		goto out;
	w.fd = copy;
	w.kept = kept.fd >= 0;
	w.streamed = zlib && can_stream();
	ok = fill_copy(&w, file, size, shdrs, &ehdr, end, copy_size, path);
	if (!ok && w.kept && w.write_error) {
		/* a full disk (quota, a file system that allocates at write-back) after the reservation: a memory file */
		debug("'%s': no room to keep a decompressed copy: %s", path, strerror(w.write_error));
		debug_copies_keep(&kept, false); /* closes copy */
		copy = memory_copy(copy_size);
		if (copy < 0)
			goto out;
		w.fd = copy;
		w.kept = false;
		w.write_error = 0;
		w.next = 0;
		sort_array(w.jobs, w.count, sizeof(*w.jobs), compare_by_offset);
		ok = fill_copy(&w, file, size, shdrs, &ehdr, end, copy_size, path);
	}
out:
	/* after every debug_copies_find (on kept as initialized, it does nothing) */
	if (kept.fd >= 0 && copy == kept.fd) /* made now: kept (or not) once filled */
		copy = debug_copies_keep(&kept, ok);
	else
		debug_copies_keep(&kept, false);
	free(w.jobs);
	free(shdrs);
	munmap(file, size);
	if (!ok) {
		if (copy >= 0)
			close(copy);
		return -1;
	}
	if (!copy_size)
		return copy; /* a kept copy */
	debug("'%s': decompressed %zu compressed sections (%zu zstd, which elfutils before 0.189 cannot read), left out "
	      "%zu %s", path, w.count - left_out, zstd, left_out, cfi_only ? "not read by the unwinder" : "never read");
	return copy;
}
