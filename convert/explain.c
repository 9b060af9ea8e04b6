/*
 * explain.c — `convert --explain` (see explain.h). Each unnamed reason the symbolizer gives is a short fact
 * ("no file with that build ID"); here it gets the advice that goes with it, and groups are ranked by how
 * many samples they touch, because a frame in 40% of the samples matters more than ten in 0.1%.
 */
#include "explain.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

struct group {
	uint32_t module;
	const char *reason;
	uint64_t samples;    /* samples whose stack holds a location of this group */
	uint64_t last_stack; /* stack index + 1 that last counted, so that a stack counts once */
};

static const struct {
	const char *reason;
	const char *advice;
} advice_table[] = {
	{ "no file with that build ID",
	  "install its debug package, pass --debug-dir or --archive, set DEBUGINFOD_URLS, or convert where it was "
	  "recorded (the build-ID cache)" },
	{ "build ID mismatch",
	  "the file at the recorded path was rebuilt or upgraded: convert with --archive, the build-ID cache or "
	  "--debug-dir holding the recorded build" },
	{ "no file at the recorded path",
	  "the file is gone and was recorded without a build ID: keep the file, or record with a kernel or "
	  "binaries that give build IDs" },
	{ "no file for this mapping", "anonymous or special mapping: nothing on disk can name it" },
	{ "JIT map missing",
	  "anonymous executable memory: run the JIT with its perf map on (node --perf-basic-prof, "
	  "java -XX:+DumpPerfMapAtExit) while recording" },
	{ "not an ELF file", "the file found is not an ELF file: pass the right one with --debug-dir" },
	{ "debug file of another build",
	  "a separate debug file was there but belongs to another build (its build ID or its .gnu_debuglink CRC "
	  "differs; -v names it): install the debug file of the recorded build" },
	{ "no symbols",
	  "the file is stripped: install its debug package or pass --debug-dir with its debug file" },
	{ "no symbol covers the address",
	  "the symbol table has a gap there (stripped local symbols?): install its debug package" },
	{ "address outside the file's loadable segments",
	  "the mapping does not match the file: it was probably replaced after recording" },
	{ "no mapping for the address",
	  "the recording has no mapping for it (the process started before recording or mapped it quickly): "
	  "record with -p or the command under stackrec" },
	{ "no kernel symbols in the recording", "record as root or with CAP_SYSLOG so kallsyms can be read" },
	{ "kernel addresses were hidden (kernel.kptr_restrict) when recording",
	  "record as root, or set sysctl kernel.kptr_restrict=0 while recording" },
	{ "no kernel symbol covers the address", "a module loaded after recording started: record again" },
	{ "libdwfl failed", "libdwfl could not read the file: run with -v for its error" },
};

const char *explain_advice(const char *reason)
{
	for (size_t i = 0; i < sizeof(advice_table) / sizeof(advice_table[0]); i++)
		if (!strcmp(reason, advice_table[i].reason))
			return advice_table[i].advice;
	if (strstr(reason, "zstd"))
		return "decompressing zstd debug sections needs elfutils 0.189 or later: use a zlib or uncompressed "
		       "debug file";
	return "run with -v for details";
}

static int by_samples(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	return strcmp(x->reason, y->reason);
}

void explain_unnamed(const struct profile *p, FILE *out)
{
	struct group *groups = NULL;
	uint32_t *group_of;
	size_t count = 0;

	/* One group per (module, reason); locations point at theirs. */
	group_of = xcalloc(p->location_count ? p->location_count : 1, sizeof(*group_of));
	for (size_t i = 0; i < p->location_count; i++) {
		const struct profile_location *loc = &p->locations[i];
		size_t g;

		group_of[i] = UINT32_MAX;
		if (!loc->unnamed_reason || loc->synthetic)
			continue;
		for (g = 0; g < count; g++)
			if (groups[g].module == loc->module && !strcmp(groups[g].reason, loc->unnamed_reason))
				break;
		if (g == count) {
			groups = xrealloc(groups, (count + 1) * sizeof(*groups));
			groups[count++] = (struct group){ .module = loc->module, .reason = loc->unnamed_reason };
		}
		group_of[i] = g;
	}
	for (size_t s = 0; s < p->stack_count; s++) {
		const struct profile_stack *st = &p->stacks[s];

		for (uint32_t d = 0; d < st->depth; d++) {
			uint32_t g = st->locations[d] < p->location_count ? group_of[st->locations[d]] : UINT32_MAX;

			if (g != UINT32_MAX && groups[g].last_stack != s + 1) {
				groups[g].last_stack = s + 1;
				groups[g].samples += st->count;
			}
		}
	}
	if (count)
		qsort(groups, count, sizeof(*groups), by_samples);

	if (!count)
		fprintf(out, "explain: every frame was named\n");
	else
		fprintf(out, "explain: unnamed frames by module and reason (share of samples they appear in):\n");
	for (size_t g = 0; g < count; g++) {
		const struct profile_module *m = groups[g].module < p->module_count ? &p->modules[groups[g].module] : NULL;
		const char *name = m ? strrchr(m->path, '/') : NULL;
		double pct = p->total_samples ? 100.0 * groups[g].samples / p->total_samples : 0;

		name = name && name[1] ? name + 1 : m ? m->path : "(no module)";
		fprintf(out, "  %5.1f%%  %s", pct, name);
		if (m && m->build_id)
			fprintf(out, " (build ID %.12s%s)", m->build_id, strlen(m->build_id) > 12 ? "..." : "");
		fprintf(out, "  %s: %s\n", groups[g].reason, explain_advice(groups[g].reason));
	}
	free(group_of);
	free(groups);
}

static const struct {
	const char *reason;
	const char *advice;
} unwind_advice[] = {
	{ "stack copy too small", "the stacks are deeper than the copy: record with a larger --call-graph dwarf,SIZE" },
	{ "too deep", "more user frames than a stack keeps (127)" },
	{ "the module's file was not found",
	  "its CFI is needed to go on: make the file available as for naming it (--debug-dir, --archive, "
	  "DEBUGINFOD_URLS, the build-ID cache)" },
	{ "no CFI and no frame pointer",
	  "code without unwind information (JIT, hand-written assembly) that keeps no frame pointer either" },
	{ "CFI rule could not be applied", "the CFI needs a register the recording does not keep" },
	{ "stack pointer did not move up", "the stack or its CFI is inconsistent here" },
	{ "registers of another machine", "convert supports x86-64 registers only" },
};

void explain_unwinding(const struct profile *p, const char *call_graph, FILE *out)
{
	uint64_t by_method[PROFILE_UNWIND_NONE + 1] = { 0 }, user_frames = 0;

	for (size_t s = 0; s < p->stack_count; s++) {
		const struct profile_stack *st = &p->stacks[s];

		for (uint32_t d = 0; d < st->depth; d++) {
			const struct profile_location *loc = &p->locations[st->locations[d]];

			if (loc->kind == PROFILE_LOCATION_KERNEL || loc->synthetic || loc->unwind > PROFILE_UNWIND_NONE)
				continue;
			by_method[loc->unwind] += st->count;
			user_frames += st->count;
		}
	}
	if (user_frames) {
		fprintf(out, "explain: user frames found by (share of frames in samples):");
		for (int m = PROFILE_UNWIND_FRAME_POINTER; m < PROFILE_UNWIND_NONE; m++)
			if (by_method[m])
				fprintf(out, " %s %.1f%%", profile_unwind_name((enum profile_unwind)m),
					100.0 * (double)by_method[m] / (double)user_frames);
		fprintf(out, "%s%s%s\n", call_graph ? " (recorded with --call-graph " : "", call_graph ? call_graph : "",
			call_graph ? ")" : "");
	}
	if (p->leaf_fixes)
		fprintf(out, "explain: %.1f%% of samples had a frameless leaf whose caller the frame-pointer walk skipped; "
			     "put back from the copied top of stack\n",
			100.0 * (double)p->leaf_fixes / (double)(p->total_samples ? p->total_samples : 1));
	for (size_t i = 0; i < p->unwind_stop_count; i++) {
		const struct profile_unwind_stop *stop = &p->unwind_stops[i];
		const char *advice = "";

		for (size_t j = 0; j < ARRAY_SIZE(unwind_advice); j++)
			if (!strcmp(unwind_advice[j].reason, stop->reason))
				advice = unwind_advice[j].advice;
		fprintf(out, "explain: %.1f%% of samples end in %s: %s: %s",
			100.0 * (double)stop->samples / (double)(p->total_samples ? p->total_samples : 1),
			stop->truncated ? "[truncated]" : "[incomplete]", stop->reason, advice);
		if (call_graph && !strcmp(stop->reason, "stack copy too small"))
			fprintf(out, " (this one: %s)", call_graph);
		fputc('\n', out);
	}
}
