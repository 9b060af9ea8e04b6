/*
 * debuginfod_client.c — libdebuginfod through dlopen, loaded on the first lookup (see debuginfod_client.h).
 */
#include "debuginfod_client.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "../util.h"

/* The functions used, typed by libdebuginfod's own header so that a change there fails the build. */
static struct {
	bool loaded;
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_find_executable) *find_executable;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
	__typeof__(debuginfod_end) *end;
} lib;

/* Loads libdebuginfod, once (load_once). */
static void load_now(void)
{
	void *handle = dlopen(DEBUGINFOD_SONAME, RTLD_LAZY | RTLD_LOCAL);

	if (!handle) {
		warning("not asking debuginfod servers: %s (install Debian's libdebuginfod1)", dlerror());
		return;
	}
	lib.begin = (__typeof__(lib.begin))dlsym(handle, "debuginfod_begin");
	lib.find_executable = (__typeof__(lib.find_executable))dlsym(handle, "debuginfod_find_executable");
	lib.find_debuginfo = (__typeof__(lib.find_debuginfo))dlsym(handle, "debuginfod_find_debuginfo");
	lib.end = (__typeof__(lib.end))dlsym(handle, "debuginfod_end");
	if (!lib.begin || !lib.find_executable || !lib.find_debuginfo || !lib.end) {
		warning("not asking debuginfod servers: '%s' lacks the functions of libdebuginfod", DEBUGINFOD_SONAME);
		dlclose(handle);
		return;
	}
	lib.loaded = true; /* never closed: libcurl does not like being unloaded */
}

/*
 * Whether libdebuginfod is loaded, trying once; false, after one warning for the whole run, when it cannot be.
 * Once by pthread_once: convert opens modules on threads of its own (module_prefetch.h, the symbolizer's
 * workers), and with a flag of its own two of them both tried, and warned twice (seen under ASan).
 */
static bool load(void)
{
	static pthread_once_t load_once = PTHREAD_ONCE_INIT;

	pthread_once(&load_once, load_now);
	return lib.loaded;
}

bool debuginfod_client_wanted(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && *urls;
}

/* debuginfod_client_find, or its debug file alone (debuginfo_only). */
static int find(const char *build_id, char **path, bool debuginfo_only)
{
	debuginfod_client *client;
	int fd = -1;

	*path = NULL;
	if (!load())
		return -ENOSYS;
	client = lib.begin();
	if (!client)
		return -ENOMEM;
	if (!debuginfo_only)
		fd = lib.find_executable(client, (const unsigned char *)build_id, 0, path);
	if (fd < 0)
		fd = lib.find_debuginfo(client, (const unsigned char *)build_id, 0, path);
	lib.end(client);
	return fd;
}

int debuginfod_client_find(const char *build_id, char **path)
{
	return find(build_id, path, false);
}

int debuginfod_client_find_debuginfo(const char *build_id, char **path)
{
	return find(build_id, path, true);
}
