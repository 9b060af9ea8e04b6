/*
 * build_id.c — reads the GNU build ID of an ELF file, for mappings whose build ID the kernel did not give
 * (its page was not in memory, or the mapping came from /proc). Cached by file identity (device, inode,
 * size, modification time): `-a` sees the same libc in every process. The cache belongs to the thread that
 * drains the buffers; build_id_read_fd, uncached, may be called from any thread.
 */
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../formats/recording.h"
#include "../util.h"
#include "recorder.h"

struct cached_build_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	uint8_t size_of_id; /* 0: the file has none */
	uint8_t id[SREC_BUILD_ID_MAX];
};

static struct cached_build_id *cache;
static size_t cache_count, cache_cap;

/*
 * A target's ELF file, read rather than mapped, has each part it reads copied whole into the recorder's memory:
 * the section headers, a note area, the section names. The file is the target's own, and its sizes say what it
 * likes: a sparse file declaring a gigabyte of notes would be a gigabyte of the recorder's memory. Executables
 * and libraries have some dozens of sections, build ID notes of 36 bytes and a few KiB of section names; the
 * bounds are far above that (Debian's largest objects: fpc's units, 28,362 sections and 1.1 MiB of names).
 */
#define SECTIONS_MAX (1u << 16)
#define AREA_MAX (16u << 20)
#define PHDRS_MAX 65535u

/* A field of size bytes at off of the header bytes h, in the file's byte order. */
static uint64_t field(const unsigned char *h, size_t off, size_t size, bool big)
{
	uint64_t v = 0;

	for (size_t i = 0; i < size; i++)
		v |= (uint64_t)h[off + (big ? size - 1 - i : i)] << (8 * i);
	return v;
}

/*
 * Before libelf sees the file: elf_begin(ELF_C_READ) allocates (and touches) one Elf_Scn per section the
 * header declares, extended numbering included (the count in section 0's sh_size), and gelf_getphdr reads every
 * program header (the count in section 0's sh_info with e_phnum PN_XNUM): both as large as the file says.
 */
static bool elf_header_bounded(int fd)
{
	unsigned char h[64], s0[64];
	bool is64, big;
	uint64_t shoff, shnum, phnum;

	if (pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG))
		return true; /* not ELF, or short: libelf says so itself */
	is64 = h[EI_CLASS] == ELFCLASS64;
	big = h[EI_DATA] == ELFDATA2MSB;
	shoff = is64 ? field(h, 0x28, 8, big) : field(h, 0x20, 4, big);
	phnum = is64 ? field(h, 0x38, 2, big) : field(h, 0x2c, 2, big);
	shnum = is64 ? field(h, 0x3c, 2, big) : field(h, 0x30, 2, big);
	if ((shnum == 0 || phnum == PN_XNUM) && shoff) {
		if (pread(fd, s0, sizeof(s0), (off_t)shoff) != (ssize_t)sizeof(s0))
			return false;
		if (shnum == 0)
			shnum = is64 ? field(s0, 0x20, 8, big) : field(s0, 0x14, 4, big);
		if (phnum == PN_XNUM)
			phnum = is64 ? field(s0, 0x2c, 4, big) : field(s0, 0x1c, 4, big);
	}
	return shnum <= SECTIONS_MAX && phnum <= PHDRS_MAX;
}

/* Whether the parts of elf that libelf copies into memory when read stay small: see above. */
static bool elf_read_bounded(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t sections, phnum, names;
	uint64_t notes = 0;
	GElf_Shdr shdr;

	if (elf_getshdrnum(elf, &sections) != 0 || sections > SECTIONS_MAX)
		return false;
	if (elf_getshdrstrndx(elf, &names) == 0 && (scn = elf_getscn(elf, names)) && gelf_getshdr(scn, &shdr) &&
	    shdr.sh_size > AREA_MAX)
		return false;
	/* All the note areas together: libelf keeps each one read until elf_end. */
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_NOTE &&
		    (shdr.sh_size > AREA_MAX || (notes += shdr.sh_size) > AREA_MAX))
			return false;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return true;
	if (phnum > PHDRS_MAX)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr phdr;

		if (gelf_getphdr(elf, (int)i, &phdr) && phdr.p_type == PT_NOTE &&
		    (phdr.p_filesz > AREA_MAX || (notes += phdr.p_filesz) > AREA_MAX))
			return false;
	}
	return true;
}

struct Elf *elf_begin_bounded(int fd)
{
	Elf *elf;

	if (!elf_header_bounded(fd))
		return NULL;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_read_bounded(elf)) {
		elf_end(elf);
		return NULL;
	}
	return elf;
}

int build_id_read_fd(int fd, uint8_t out[SREC_BUILD_ID_MAX], uint8_t *size)
{
	const void *id;
	ssize_t n;
	Elf *elf;

	elf_version(EV_CURRENT);
	/* Read, not mapped: a target may cut its file short meanwhile, and a mapping's page past the new end kills
	 * the recorder with SIGBUS (file_cut_guard.c would stop it cleanly, the recording lost); a read just fails.
	 * What is read is bounded: elf_begin_bounded. */
	elf = elf_begin_bounded(fd);
	if (!elf)
		return -1;
	n = dwelf_elf_gnu_build_id(elf, &id);
	if (n > 0) {
		*size = (uint8_t)(n > SREC_BUILD_ID_MAX ? SREC_BUILD_ID_MAX : n);
		memcpy(out, id, *size);
	}
	elf_end(elf);
	return n > 0 ? 0 : -1;
}

int build_id_read(const char *path, uint8_t out[SREC_BUILD_ID_MAX], uint8_t *size)
{
	struct cached_build_id *c = NULL;
	struct stat st;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	for (size_t i = 0; i < cache_count; i++) {
		c = &cache[i];
		if (c->dev == st.st_dev && c->ino == st.st_ino && c->size == st.st_size &&
		    c->mtime.tv_sec == st.st_mtim.tv_sec && c->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			close(fd);
			if (!c->size_of_id)
				return -1;
			memcpy(out, c->id, c->size_of_id);
			*size = c->size_of_id;
			return 0;
		}
	}
	GROW(cache, cache_cap, cache_count + 1);
	c = &cache[cache_count++];
	memset(c, 0, sizeof(*c));
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	c->size = st.st_size;
	c->mtime = st.st_mtim;
	ret = build_id_read_fd(fd, c->id, &c->size_of_id);
	close(fd);
	if (ret == 0) {
		memcpy(out, c->id, c->size_of_id);
		*size = c->size_of_id;
	}
	return ret;
}

void build_id_cache_release(void)
{
	free(cache);
	cache = NULL;
	cache_count = cache_cap = 0;
}
