/* cache_dir.c — the build-ID cache's location and layout, see cache_dir.h. */
#include "cache_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

char *cache_dir_default(void)
{
	const char *dir = getenv("STACKREC_CACHE_DIR");

	if (dir && *dir)
		return xstrdup(dir);
	dir = getenv("XDG_CACHE_HOME");
	if (dir && *dir)
		return xasprintf("%s/stackrec", dir);
	dir = getenv("HOME");
	if (dir && *dir)
		return xasprintf("%s/.cache/stackrec", dir);
	return NULL;
}

char *build_id_rel_path(const uint8_t *id, size_t n, const char *suffix)
{
	char hex[2 * 64 + 1];

	if (n < 2 || n > 64)
		return NULL;
	hex_encode(hex, id, n);
	return build_id_hex_rel_path(hex, suffix);
}

char *build_id_hex_rel_path(const char *hex, const char *suffix)
{
	if (!hex || strlen(hex) < 4)
		return NULL;
	return xasprintf(".build-id/%.2s/%s%s", hex, hex + 2, suffix);
}
