/*
 * archive.h — `stackrec archive REC` bundles every file a recording needs into one file, so that it
 * converts on a machine that has none of them: `stackrec convert REC --archive REC.archive`.
 *
 * An archive is itself a recording-format file (formats/recording.h): a HOST block, one or more FILE
 * blocks of kind SREC_FILE_DEBUG per ELF file (the binary found for each recorded build ID, its separate
 * debug file when there is one, by build ID or .gnu_debuglink, and the dwz file of either, once), and
 * END. It is read with the same reader, so it shares the format's damage handling and needs no second
 * format.
 */
#ifndef STACKREC_CONVERT_ARCHIVE_H
#define STACKREC_CONVERT_ARCHIVE_H

#include <stdbool.h>

/*
 * Extracts the files of an archive into a new private directory laid out like a debug directory
 * (DIR/.build-id/xx/rest and rest.debug), for the lookup to search: stackrec-archive.XXXXXX in
 * archive_temp_parent(), removed at a Ctrl-C too (interrupt_cleanup.c). Returns the directory (to be removed
 * with archive_remove_dir), or NULL with an error printed. *damaged is set when the archive was damaged or
 * incomplete and only its intact files were extracted (said in warnings and one error line).
 */
char *archive_extract(const char *archive_path, bool *damaged);
void archive_remove_dir(char *dir);
/*
 * "archive PATH SIZE MTIME" of the archive file (its absolute path), for the caches' keys in place of the directory
 * archive_extract makes anew at every run (debug_file_search.archive_identity); NULL when it cannot be had.
 */
char *archive_file_identity(const char *archive_path);
/* Where archive_extract makes its directory: $TMPDIR when it is an absolute path, else /tmp. */
const char *archive_temp_parent(void);

/*
 * The .gnu_debugaltlink of an ELF file (dwz's link to the file holding the DWARF it shares with others): true
 * with *name pointing into elf's data and the linked file's build ID, 2 to 64 bytes, as lowercase hex into hex
 * (129 bytes); false when elf has none or it is malformed.
 */
typedef struct Elf Elf;
bool archive_debugaltlink(Elf *elf, const char **name, char *hex);

#endif
