/*
 * output.c — the table of output formats (see output.h), and what --kind makes of a stack's values for the
 * formats that show one value. Adding a format: one new file in formats/ and one line here.
 */
#include "output.h"

#include <string.h>

extern const struct output_format output_folded, output_pprof, output_speedscope, output_d3, output_trace,
	output_report;

const struct output_format *const output_formats[] = {
	&output_folded,
	&output_pprof,
	&output_speedscope,
	&output_d3,
	&output_trace,
	&output_report,
	NULL,
};

const struct output_format *output_format_find(const char *name)
{
	for (size_t i = 0; output_formats[i]; i++)
		if (!strcmp(output_formats[i]->name, name))
			return output_formats[i];
	return NULL;
}

int output_kind_parse(const char *name, enum output_kind *kind)
{
	if (!strcmp(name, "on"))
		*kind = OUTPUT_KIND_ON_CPU;
	else if (!strcmp(name, "off"))
		*kind = OUTPUT_KIND_OFF_CPU;
	else if (!strcmp(name, "wall"))
		*kind = OUTPUT_KIND_WALL;
	else
		return -1;
	return 0;
}

enum output_kind output_kind_of(const struct profile *profile, const struct output_options *options)
{
	if (options && options->kind != OUTPUT_KIND_DEFAULT)
		return options->kind;
	/* A recording with no samples at all is an (empty) on-CPU profile, as recordings always were. */
	return profile->on_cpu_samples || !profile->off_cpu_samples ? OUTPUT_KIND_ON_CPU : OUTPUT_KIND_OFF_CPU;
}

const char *output_kind_unit(enum output_kind kind)
{
	return kind == OUTPUT_KIND_OFF_CPU || kind == OUTPUT_KIND_WALL ? "microseconds" : "samples";
}

/* ns in whole microseconds, rounded: (ns + 500) / 1000 wrapped to 0 near 2^64 (a forged weight), and its stack
 * was left out of the output. */
static uint64_t rounded_us(uint64_t ns)
{
	return ns / 1000 + (ns % 1000 >= 500);
}

uint64_t output_stack_value(const struct profile_stack *stack, enum output_kind kind)
{
	bool off = stack->kind == PROFILE_SAMPLE_OFF_CPU;

	if (stack->kind == PROFILE_SAMPLE_EVENT)
		return 0; /* an event is no sample and no time: -f report and -f trace show it */
	switch (kind) {
	case OUTPUT_KIND_DEFAULT:
	case OUTPUT_KIND_ON_CPU:
		return off ? 0 : stack->count;
	case OUTPUT_KIND_OFF_CPU:
		return off ? rounded_us(stack->off_cpu_ns) : 0;
	case OUTPUT_KIND_WALL:
		return rounded_us(off ? stack->off_cpu_ns : stack->on_cpu_ns);
	}
	return 0;
}
