/*
 * output.c — the table of output formats (see output.h). Adding a format: one new file in formats/ and
 * one line here.
 */
#include "output.h"

#include <string.h>

extern const struct output_format output_folded, output_pprof, output_speedscope, output_d3, output_trace;

const struct output_format *const output_formats[] = {
	&output_folded,
	&output_pprof,
	&output_speedscope,
	&output_d3,
	&output_trace,
	NULL,
};

const struct output_format *output_format_find(const char *name)
{
	for (size_t i = 0; output_formats[i]; i++)
		if (!strcmp(output_formats[i]->name, name))
			return output_formats[i];
	return NULL;
}
