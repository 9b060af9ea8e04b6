/*
 * zstd_sections.c — a copy of an ELF file with its zstd-compressed sections decompressed (see
 * zstd_sections.h). The copy is the original bytes, then each decompressed body appended at the end
 * (compressed sections are debug sections, never loaded, so they may live anywhere), then a new section
 * header table pointing at them; only the ELF header's e_shoff changes in place. 64-bit ELF files of this
 * machine's byte order only; anything else is left to libelf as it is.
 */
#include "zstd_sections.h"

#include <elf.h>
#include <endian.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "../util.h"
#include "input_file.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

#if __BYTE_ORDER == __LITTLE_ENDIAN
#define NATIVE_ELFDATA ELFDATA2LSB
#else
#define NATIVE_ELFDATA ELFDATA2MSB
#endif

static bool write_at(int fd, const void *buf, size_t size, uint64_t offset)
{
	return pwrite(fd, buf, size, (off_t)offset) == (ssize_t)size;
}

int zstd_sections_decompress(int fd, const char *path)
{
	unsigned char *file = MAP_FAILED;
	Elf64_Shdr *shdrs = NULL;
	Elf64_Ehdr ehdr;
	struct stat st;
	size_t size, found = 0;
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
	for (size_t i = 0; i < ehdr.e_shnum; i++) {
		Elf64_Chdr chdr;

		if (!(shdrs[i].sh_flags & SHF_COMPRESSED) || shdrs[i].sh_offset > size ||
		    size - shdrs[i].sh_offset < shdrs[i].sh_size || shdrs[i].sh_size < sizeof(chdr))
			continue;
		memcpy(&chdr, file + shdrs[i].sh_offset, sizeof(chdr));
		found += chdr.ch_type == ELFCOMPRESS_ZSTD;
	}
	if (!found)
		goto out;
	copy = memfd_create("zstd-decompressed", MFD_CLOEXEC);
	if (copy < 0 || !write_at(copy, file, size, 0))
		goto out;
	end = (size + 7) & ~(uint64_t)7;
	for (size_t i = 0; i < ehdr.e_shnum; i++) {
		Elf64_Chdr chdr;
		void *body;
		size_t n;

		if (!(shdrs[i].sh_flags & SHF_COMPRESSED) || shdrs[i].sh_offset > size ||
		    size - shdrs[i].sh_offset < shdrs[i].sh_size || shdrs[i].sh_size < sizeof(chdr))
			continue;
		memcpy(&chdr, file + shdrs[i].sh_offset, sizeof(chdr));
		/* debug_file.c refused files that declare more (input_file.h); this allocation must not trust the
		 * header either, whoever hands the file over. */
		if (chdr.ch_type != ELFCOMPRESS_ZSTD || chdr.ch_size > (1ull << 32) ||
		    chdr.ch_size > (uint64_t)size * INPUT_FILE_MAX_INFLATION) {
			if (chdr.ch_type == ELFCOMPRESS_ZSTD)
				debug("'%s': section %zu declares %llu bytes decompressed: left compressed", path, i,
				      (unsigned long long)chdr.ch_size);
			continue;
		}
		body = xmalloc(chdr.ch_size ? chdr.ch_size : 1);
		n = ZSTD_decompress(body, chdr.ch_size, file + shdrs[i].sh_offset + sizeof(chdr),
				    shdrs[i].sh_size - sizeof(chdr));
		if (ZSTD_isError(n) || n != chdr.ch_size || !write_at(copy, body, n, end)) {
			debug("'%s': section %zu: cannot decompress zstd data", path, i);
			free(body);
			goto out;
		}
		free(body);
		shdrs[i].sh_flags &= ~(Elf64_Xword)SHF_COMPRESSED;
		shdrs[i].sh_offset = end;
		shdrs[i].sh_size = n;
		shdrs[i].sh_addralign = chdr.ch_addralign ? chdr.ch_addralign : 1;
		end = (end + n + 7) & ~(uint64_t)7;
	}
	ehdr.e_shoff = end;
	ok = write_at(copy, shdrs, ehdr.e_shnum * sizeof(*shdrs), end) && write_at(copy, &ehdr, sizeof(ehdr), 0);
out:
	free(shdrs);
	munmap(file, size);
	if (!ok) {
		if (copy >= 0)
			close(copy);
		return -1;
	}
	debug("'%s': decompressed %zu zstd-compressed sections (elfutils before 0.189 reads only zlib)", path, found);
	return copy;
}
