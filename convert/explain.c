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
#include "unwind.h"

/*
 * Why no mapping covers a user address. The location cannot tell (one location serves every stack that holds
 * it): the stack and its process can.
 */
enum unmapped_cause {
	CAUSE_NONE = 0,		 /* not an unmapped address: the reason says it all */
	CAUSE_NOT_RECORDED,	 /* the process started before recording, or the recording has none of its mappings */
	CAUSE_NO_FRAME_POINTERS, /* a return address read by a frame-pointer walk through code without them */
	CAUSE_NOT_COVERED	 /* recorded from its start, yet none of its mappings covers the address */
};

struct group {
	uint32_t module;
	const char *reason;
	enum unmapped_cause cause;
	uint32_t culprit;    /* CAUSE_NO_FRAME_POINTERS: the module of the frame below; else PROFILE_NO_MODULE */
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
	{ "damaged ELF file",
	  "the file found is cut short or damaged (its header tables lie past its end; -v says which): copy it "
	  "whole, or pass a whole copy with --debug-dir or --archive" },
	{ "not a regular file",
	  "a FIFO, device or directory stands where the file should be, and convert never opens those "
	  "(docs/convert.md): pass the real file with --debug-dir" },
	{ "symbolic link under --symfs",
	  "the file under --symfs is a symbolic link, which could point out of that tree: copy the file it "
	  "points to in its place" },
	{ "compressed sections too large",
	  "its compressed sections declare more than 64 times the file's size once decompressed: a damaged or "
	  "hostile file, refused (docs/convert.md)" },
	{ "recorded path with '..'",
	  "the recording names a path with '..', which no kernel reports: a damaged or forged recording" },
	{ "debug file of another build",
	  "a separate debug file was there but belongs to another build (its build ID or its .gnu_debuglink CRC "
	  "differs; -v names it): install the debug file of the recorded build" },
	{ "no symbols",
	  "the file is stripped: install its debug package or pass --debug-dir with its debug file" },
	{ "no symbol covers the address",
	  "the symbol table has a gap there (stripped local symbols?): install its debug package" },
	{ "address outside the file's loadable segments",
	  "the mapping does not match the file: it was probably replaced after recording" },
	{ PROFILE_UNNAMED_NO_MAPPING,
	  "the recording has no mapping for it (the process started before recording or mapped it quickly): "
	  "record with -p or the command under stackrec" },
	{ PROFILE_UNNAMED_NO_KALLSYMS, "record as root or with CAP_SYSLOG so kallsyms can be read" },
	{ PROFILE_UNNAMED_KALLSYMS_CUT, "they are written when the recording ends: stop record with Ctrl-C or SIGTERM, "
					"not SIGKILL, and leave it room on the disk" },
	{ PROFILE_UNNAMED_KERNEL_HIDDEN,
	  "record as root with sysctl kernel.kptr_restrict at 0 or 1 (2 hides them from root too)" },
	{ PROFILE_UNNAMED_NO_KERNEL_SYMBOL, "a module loaded after recording started: record again" },
	{ "libdwfl failed", "libdwfl could not read the file: run with -v for its error" },
	{ "debug file alone, with several executable segments",
	  "only the separate debug file was found, and it cannot say which executable segment was mapped: pass "
	  "the binary too (--debug-dir, --archive)" },
	{ "debug file alone, and a mapping not at a page boundary",
	  "only the separate debug file was found, and the recorded mapping cannot place it: pass the binary too" },
	{ "no openat2", "this kernel (before Linux 5.6) cannot resolve paths inside --symfs safely: convert elsewhere" },
	/* Why an unwound stack stopped short (unwind.c), for explain_unwinding. */
	{ UNWIND_COPY_TOO_SMALL, "the stacks are deeper than the copy: record with a larger --call-graph dwarf,SIZE" },
	{ UNWIND_OFF_CPU_COPY_AT_MOST,
	  "off-CPU samples keep at most 32 KiB of a stack, whatever --call-graph dwarf,SIZE asks (on-CPU samples "
	  "keep up to SIZE, at most 64 KiB)" },
	{ "a stack page not in memory when sampled",
	  "the unwinder needed bytes of a stack page the kernel had not mapped in (never touched, as in the middle of "
	  "a large local array, or swapped out), which no copy can read: a larger SIZE does not help" },
	{ UNWIND_SIGNAL_STACK,
	  "a signal handler ran on its own stack (sigaltstack, SA_ONSTACK): the stack it interrupted is another "
	  "mapping, which no --call-graph dwarf,SIZE copies; --call-graph fp follows frame pointers onto it (losing "
	  "the interrupted function)" },
	{ UNWIND_TOO_DEEP, "more user frames than a stack keeps (127)" },
	{ "the module's file was not found",
	  "its CFI is needed to go on: make the file available as for naming it (--debug-dir, --archive, "
	  "DEBUGINFOD_URLS, the build-ID cache)" },
	{ UNWIND_DEBUG_FILE_ALONE,
	  "make the binary itself available (--archive, or at its recorded path under --symfs): its .eh_frame is the "
	  "CFI, which a debug file does not keep" },
	{ "no CFI and no frame pointer",
	  "code without unwind information (JIT, hand-written assembly) that keeps no frame pointer either" },
	{ "no CFI, and the frame pointer leads to no return address",
	  "code without unwind information (hand-written assembly) whose frame pointer is not its caller's frame: "
	  "the word there follows no call instruction" },
	{ "a return address that follows no call",
	  "a frame-pointer walk (--call-graph fp) through code built without frame pointers took a saved register "
	  "or a word of data for one, and what it found beyond is not the stack either: record with --call-graph "
	  "dwarf" },
	{ "CFI rule could not be applied", "the CFI needs a register the recording does not keep" },
	{ "stack pointer did not move up", "the stack or its CFI is inconsistent here" },
	{ "registers of another machine", "convert supports x86-64 registers only" },
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

/* What to do about a group's frames: the reason's advice, or for an unmapped address its cause's. */
static void print_advice(FILE *out, const struct group *g, const char *culprit, const char *call_graph)
{
	switch (g->cause) {
	case CAUSE_NO_FRAME_POINTERS:
		/* A dwarf recording walks a frame pointer only where it has no CFI: the binary of that frame was not
		 * found (a debug file alone has none), or its code has no unwind information */
		if (call_graph && !strncmp(call_graph, "dwarf", 5))
			fprintf(out, "no CFI for %s (the frame below it), so its frame pointer was followed, and it keeps "
				     "none: make the binary itself available (--archive, or at its recorded path under "
				     "--symfs; a debug file alone has no CFI), unless its code has no unwind information",
				culprit);
		else
			fprintf(out, "no frame pointers in %s (the frame below it); record with --call-graph dwarf",
				culprit);
		break;
	case CAUSE_NOT_COVERED:
		fputs("the process was recorded from its start, yet none of its recorded mappings covers it: code run "
		      "before its exec into the recorded command, or its mmap records were lost (while recording: "
		      "stackrec info shows lost side-band; or in a damaged part of the file)",
		      out);
		break;
	default:
		fputs(explain_advice(g->reason), out);
		break;
	}
}

/*
 * Why the user address at depth d of st has no mapping. The "started before recording" advice holds only for
 * a process that ran before recording started or of which the recording has no mapping at all. Otherwise a
 * return address found by walking frame pointers most likely is garbage read from a frame that some code
 * without frame pointers left: the first mapped frame below the run of unmapped ones (toward the leaf) is
 * that code, *culprit its module.
 */
static enum unmapped_cause unmapped_cause(const struct profile *p, const struct process_maps *maps,
					  const struct profile_stack *st, uint32_t d, uint32_t *culprit)
{
	const struct profile_location *loc = &p->locations[st->locations[d]];

	*culprit = PROFILE_NO_MODULE;
	if (!maps || !process_maps_has_mappings(maps, st->pid))
		return CAUSE_NOT_RECORDED;
	if (loc->is_return_address && loc->unwind == PROFILE_UNWIND_FRAME_POINTER) {
		for (uint32_t i = d; i-- > 0;) {
			const struct profile_location *below =
				st->locations[i] < p->location_count ? &p->locations[st->locations[i]] : NULL;

			if (!below || below->kind == PROFILE_LOCATION_KERNEL || below->synthetic)
				break;
			if (below->module != PROFILE_NO_MODULE && below->module < p->module_count) {
				*culprit = below->module;
				return CAUSE_NO_FRAME_POINTERS;
			}
		}
	}
	return process_maps_existed_at_start(maps, st->pid) ? CAUSE_NOT_RECORDED : CAUSE_NOT_COVERED;
}

static int by_samples(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	int c;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	c = strcmp(x->reason, y->reason);
	if (c)
		return c;
	if (x->cause != y->cause)
		return x->cause < y->cause ? -1 : 1;
	return x->culprit < y->culprit ? -1 : x->culprit > y->culprit;
}

static uint32_t group_number(struct group **groups, size_t *count, uint32_t module, const char *reason,
			     enum unmapped_cause cause, uint32_t culprit)
{
	size_t g;

	for (g = 0; g < *count; g++)
		if ((*groups)[g].module == module && (*groups)[g].cause == cause && (*groups)[g].culprit == culprit &&
		    !strcmp((*groups)[g].reason, reason))
			return (uint32_t)g;
	*groups = xrealloc(*groups, (*count + 1) * sizeof(**groups));
	(*groups)[(*count)++] = (struct group){ .module = module, .reason = reason, .cause = cause, .culprit = culprit };
	return (uint32_t)g;
}

/* The file name of a module, for humans: "libc.so.6", "[vdso]"; "(no module)". */
static const char *module_name(const struct profile *p, uint32_t module)
{
	const struct profile_module *m = module < p->module_count ? &p->modules[module] : NULL;
	const char *name = m ? strrchr(m->path, '/') : NULL;

	return name && name[1] ? name + 1 : m ? m->path : "(no module)";
}

#define GROUP_NONE UINT32_MAX
#define GROUP_BY_STACK (UINT32_MAX - 1) /* an unmapped user address: its group depends on the stack */

void explain_unnamed(const struct profile *p, const struct process_maps *maps, const char *call_graph, FILE *out)
{
	struct group *groups = NULL;
	uint32_t *group_of;
	size_t count = 0;

	/* One group per (module, reason), and per cause for unmapped addresses; locations point at theirs. */
	group_of = xcalloc(p->location_count ? p->location_count : 1, sizeof(*group_of));
	for (size_t i = 0; i < p->location_count; i++) {
		const struct profile_location *loc = &p->locations[i];

		group_of[i] = GROUP_NONE;
		if (!loc->unnamed_reason || loc->synthetic)
			continue;
		if (loc->kind == PROFILE_LOCATION_USER && !strcmp(loc->unnamed_reason, PROFILE_UNNAMED_NO_MAPPING))
			group_of[i] = GROUP_BY_STACK;
		else
			group_of[i] = group_number(&groups, &count, loc->module, loc->unnamed_reason, CAUSE_NONE,
						   PROFILE_NO_MODULE);
	}
	for (size_t s = 0; s < p->stack_count; s++) {
		const struct profile_stack *st = &p->stacks[s];

		for (uint32_t d = 0; d < st->depth; d++) {
			uint32_t loc = st->locations[d], g = loc < p->location_count ? group_of[loc] : GROUP_NONE;

			if (g == GROUP_BY_STACK) {
				uint32_t culprit;
				enum unmapped_cause cause = unmapped_cause(p, maps, st, d, &culprit);

				g = group_number(&groups, &count, p->locations[loc].module, p->locations[loc].unnamed_reason,
						 cause, culprit);
			}
			if (g != GROUP_NONE && groups[g].last_stack != s + 1) {
				groups[g].last_stack = s + 1;
				groups[g].samples += st->count;
			}
		}
	}
	if (count)
		sort_array(groups, count, sizeof(*groups), by_samples);

	if (!p->stack_count && !p->event_count)
		fprintf(out, "explain: no samples, so no frames to name\n");
	else if (!count)
		fprintf(out, "explain: every frame was named\n");
	else
		fprintf(out, "explain: unnamed frames by module and reason (share of samples they appear in):\n");
	for (size_t g = 0; g < count; g++) {
		const struct profile_module *m = groups[g].module < p->module_count ? &p->modules[groups[g].module] : NULL;
		double pct = p->total_samples ? 100.0 * groups[g].samples / p->total_samples : 0;

		/* Names from the recording, escaped as info escapes them: the output is most often a terminal. */
		char *name = terminal_text(module_name(p, groups[g].module)),
		     *culprit = terminal_text(module_name(p, groups[g].culprit));

		fprintf(out, "  %5.1f%%  %s", pct, name);
		if (m && m->build_id)
			fprintf(out, " (build ID %.12s%s)", m->build_id, strlen(m->build_id) > 12 ? "..." : "");
		fprintf(out, "  %s: ", groups[g].reason);
		print_advice(out, &groups[g], culprit, call_graph);
		fputc('\n', out);
		free(name);
		free(culprit);
	}
	free(group_of);
	free(groups);
}

void explain_unwinding(const struct profile *p, const char *recorded_call_graph, FILE *out)
{
	uint64_t by_method[PROFILE_UNWIND_NONE + 1] = { 0 }, user_frames = 0;
	/* From the recording's HOST block: escaped, as info shows it */
	char *call_graph = recorded_call_graph ? terminal_text(recorded_call_graph) : NULL;

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
		const char *advice = explain_advice(stop->reason);
		fprintf(out, "explain: %.1f%% of samples end in %s: %s: %s",
			100.0 * (double)stop->samples / (double)(p->total_samples ? p->total_samples : 1),
			stop->truncated ? "[truncated]" : "[incomplete]", stop->reason, advice);
		if (call_graph && !strcmp(stop->reason, UNWIND_COPY_TOO_SMALL))
			fprintf(out, " (this one: %s)", call_graph);
		fputc('\n', out);
	}
	if (p->user_stack_errors)
		fprintf(out, "explain: %.1f%% of samples have a user stack the kernel could not read ([user stack error "
			     "-E...], under the frames it had): samples taken while a process exec'd (its old stack gone, "
			     "the new not set up) or exited, or of a stack not mapped\n",
			100.0 * (double)p->user_stack_errors / (double)(p->total_samples ? p->total_samples : 1));
	if (p->kernel_stack_errors)
		fprintf(out, "explain: %.1f%% of samples have a kernel stack that could not be read ([kernel stack error "
			     "-E...]_[k])\n",
			100.0 * (double)p->kernel_stack_errors / (double)(p->total_samples ? p->total_samples : 1));
	free(call_graph);
}

void explain_context(const struct profile *p, uint64_t frames_without_cfa, const char *call_graph, FILE *out)
{
	uint64_t frames = 0;
	uint32_t hit;

	if (!p->probe_count)
		return;
	for (size_t s = 0; s < p->stack_count; s++)
		for (uint32_t d = 0; d < p->stacks[s].depth; d++)
			frames += profile_stack_context(&p->stacks[s], d, &hit) ? p->stacks[s].count : 0;
	fprintf(out, "explain: %zu probes, %" PRIu64 " probe hits (%" PRIu64 " lost while recording); %" PRIu64
		     " frames in samples and events show the values of their call\n",
		p->probe_count, p->probe_hits, p->lost_probe_hits, frames);
	if (p->context_omitted)
		fprintf(out, "explain: no frame shows probe values: %s\n", p->context_omitted);
	if (frames_without_cfa)
		fprintf(out,
			"explain: %" PRIu64 " frames of probed functions show no values: their canonical frame address is "
			"unknown%s, and a value is never guessed (record with --call-graph dwarf)\n",
			frames_without_cfa, call_graph && !strncmp(call_graph, "fp", 2) ? " in an fp recording" : "");
}
