/*
 * demangle.c — symbol demangling with libiberty (see demangle.h). cplus_demangle in DMGL_AUTO style
 * tries Rust first (legacy Rust names are valid Itanium C++ names too), then the C++ ABI.
 */
#include "demangle.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

char *demangle_name(const char *name, bool demangle)
{
	char *d = NULL, *copy;

	if (demangle && name[0] == '_')
		d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	copy = strdup(d ? d : name);
	free(d);
	if (!copy)
		abort(); /* out of memory: cannot report without util.h, and it cannot happen quietly */
	return copy;
}

char *demangle_type_name(const char *name)
{
	/* DMGL_TYPES lets the v3 demangler take a bare <type>, which is what a type_info name is. */
	char *d = cplus_demangle_v3(name, DMGL_PARAMS | DMGL_ANSI | DMGL_TYPES), *copy;

	copy = strdup(d ? d : name);
	free(d);
	if (!copy)
		abort();
	return copy;
}
