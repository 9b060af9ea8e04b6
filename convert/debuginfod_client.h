/*
 * debuginfod_client.h — asks debuginfod servers for a file by build ID, through libdebuginfod loaded with
 * dlopen the first time a lookup is actually made.
 *
 * Why not link it: libdebuginfod pulls in libcurl and some thirty libraries more (TLS, Kerberos, LDAP, ...),
 * whose loading and constructors cost every run of the program several milliseconds, about as much as a
 * `stackrec symbolize` of 200,000 addresses from a warm symbol cache. Only a run with DEBUGINFOD_URLS set and
 * a module found nowhere else needs it. elfutils' own libdwfl loads it the same way. It stays a dependency of
 * the package (libdebuginfod1); when it cannot be loaded, a run says so on one line, once, and goes on
 * without debuginfod.
 */
#ifndef STACKREC_CONVERT_DEBUGINFOD_CLIENT_H
#define STACKREC_CONVERT_DEBUGINFOD_CLIENT_H

#include <stdbool.h>

/*
 * Asks the servers of DEBUGINFOD_URLS (the caller has checked that it is set) for the executable with
 * build_id (lowercase hex), else for its debug file. Returns an fd on the file libdebuginfod downloaded into
 * its cache with *path (allocated) naming it, or a negative errno (-ENOSYS when libdebuginfod cannot be
 * loaded).
 */
int debuginfod_client_find(const char *build_id, char **path);
/* The same for the debug file alone: what `stackrec archive` adds beside an executable found elsewhere. */
int debuginfod_client_find_debuginfo(const char *build_id, char **path);

/* Whether there are servers to ask: DEBUGINFOD_URLS is set and not empty (libdebuginfod's own rule). */
bool debuginfod_client_wanted(void);

#endif
