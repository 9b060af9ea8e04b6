/* util.c — messages, allocation and the small helpers shared by every part of stackrec; see util.h. */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool verbose;

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char line[4096];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "stackrec: %s%s\n", prefix, line);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void debug(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

static void *check_alloc(void *p, size_t size)
{
	if (!p && size) {
		fprintf(stderr, "stackrec: error: out of memory allocating %zu bytes\n", size);
		exit(1);
	}
	return p;
}

void *xmalloc(size_t size)
{
	return check_alloc(malloc(size ? size : 1), size);
}

void *xcalloc(size_t count, size_t size)
{
	return check_alloc(calloc(count ? count : 1, size ? size : 1), count * size);
}

void *xrealloc(void *ptr, size_t size)
{
	return check_alloc(realloc(ptr, size ? size : 1), size);
}

char *xstrdup(const char *s)
{
	return check_alloc(strdup(s), strlen(s) + 1);
}

char *xstrndup(const char *s, size_t n)
{
	return check_alloc(strndup(s, n), n + 1);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return check_alloc(NULL, 1);
	return s;
}

void grow_array(void **array, size_t *capacity, size_t needed, size_t elem_size)
{
	size_t cap = *capacity;

	if (needed <= cap)
		return;
	cap = cap ? cap : 16;
	while (cap < needed)
		cap *= 2;
	*array = xrealloc(*array, cap * elem_size);
	*capacity = cap;
}

void hex_encode(char *out, const unsigned char *bytes, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * n] = '\0';
}

bool output_replaceable(const char *path)
{
	struct stat st;

	return lstat(path, &st) < 0 || S_ISREG(st.st_mode);
}
