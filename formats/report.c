/*
 * report.c — `-f report`: a report for people, one per fatal signal or C++ exception the recording holds
 * (and with --all-events, one per sample that has a frame with probe context): what happened, to which
 * thread of which process and when, then every frame innermost first with its function, file:line (inline
 * frames too) and the values of the probed call active in it, then the process's metrics nearest the event.
 * Described in docs/formats.md; deterministic like every format (times are the recording's).
 *
 * It shows only what is known: a frame without context shows none, a value that could not be captured
 * says so, and a recording whose probe hits cannot be trusted says why no frame shows any
 * (profile.context_omitted, convert/enrich.h).
 */
#include "output.h"

#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../convert/demangle.h"
#include "../util.h"

/* si_code names of the fatal signals a recording holds (<signal.h>), by signal; generic ones apply to all. */
struct code_name {
	int signo; /* 0: any signal */
	int code;
	const char *name;
};

static const struct code_name code_names[] = {
	{ SIGSEGV, SEGV_MAPERR, "SEGV_MAPERR" }, { SIGSEGV, SEGV_ACCERR, "SEGV_ACCERR" },
	{ SIGSEGV, SEGV_BNDERR, "SEGV_BNDERR" }, { SIGSEGV, SEGV_PKUERR, "SEGV_PKUERR" },
	{ SIGBUS, BUS_ADRALN, "BUS_ADRALN" },	{ SIGBUS, BUS_ADRERR, "BUS_ADRERR" },
	{ SIGBUS, BUS_OBJERR, "BUS_OBJERR" },	{ SIGBUS, BUS_MCEERR_AR, "BUS_MCEERR_AR" },
	{ SIGBUS, BUS_MCEERR_AO, "BUS_MCEERR_AO" }, { SIGFPE, FPE_INTDIV, "FPE_INTDIV" },
	{ SIGFPE, FPE_INTOVF, "FPE_INTOVF" },	{ SIGFPE, FPE_FLTDIV, "FPE_FLTDIV" },
	{ SIGFPE, FPE_FLTOVF, "FPE_FLTOVF" },	{ SIGFPE, FPE_FLTUND, "FPE_FLTUND" },
	{ SIGFPE, FPE_FLTRES, "FPE_FLTRES" },	{ SIGFPE, FPE_FLTINV, "FPE_FLTINV" },
	{ SIGFPE, FPE_FLTSUB, "FPE_FLTSUB" },	{ SIGILL, ILL_ILLOPC, "ILL_ILLOPC" },
	{ SIGILL, ILL_ILLOPN, "ILL_ILLOPN" },	{ SIGILL, ILL_ILLADR, "ILL_ILLADR" },
	{ SIGILL, ILL_ILLTRP, "ILL_ILLTRP" },	{ SIGILL, ILL_PRVOPC, "ILL_PRVOPC" },
	{ SIGILL, ILL_PRVREG, "ILL_PRVREG" },	{ SIGILL, ILL_COPROC, "ILL_COPROC" },
	{ SIGILL, ILL_BADSTK, "ILL_BADSTK" },	{ SIGTRAP, TRAP_BRKPT, "TRAP_BRKPT" },
	{ SIGTRAP, TRAP_TRACE, "TRAP_TRACE" },	{ SIGTRAP, TRAP_BRANCH, "TRAP_BRANCH" },
	{ SIGTRAP, TRAP_HWBKPT, "TRAP_HWBKPT" }, { 0, SI_USER, "SI_USER" },
	{ 0, SI_KERNEL, "SI_KERNEL" },		{ 0, SI_QUEUE, "SI_QUEUE" },
	{ 0, SI_TIMER, "SI_TIMER" },		{ 0, SI_MESGQ, "SI_MESGQ" },
	{ 0, SI_ASYNCIO, "SI_ASYNCIO" },	{ 0, SI_SIGIO, "SI_SIGIO" },
	{ 0, SI_TKILL, "SI_TKILL" },
};

static const char *code_name(int signo, int code)
{
	/* A positive code is the signal's own (the kernel's fault codes); zero and below are generic senders. */
	for (size_t i = 0; i < ARRAY_SIZE(code_names); i++)
		if (code_names[i].code == code &&
		    (code_names[i].signo == signo || (!code_names[i].signo && (code <= 0 || code == SI_KERNEL))))
			return code_names[i].name;
	return NULL;
}

/* Whether si_addr means something: a fault the kernel raised for one of the signals that carry an address. */
static bool has_address(int signo, int code)
{
	return code > 0 && code != SI_KERNEL &&
	       (signo == SIGSEGV || signo == SIGBUS || signo == SIGFPE || signo == SIGILL || signo == SIGTRAP);
}

/* Bytes as a C string literal: quotes, backslashes and every byte that is not printable ASCII escaped. */
static void write_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else if (*c == '\n')
			fputs("\\n", out);
		else if (*c == '\t')
			fputs("\\t", out);
		else if (*c < 0x20 || *c >= 0x7f)
			fprintf(out, "\\x%02x", *c);
		else
			fputc(*c, out);
	}
	fputc('"', out);
}

static void write_context(FILE *out, const struct profile *p, const struct profile_hit *hit)
{
	const struct profile_probe *probe = &p->probes[hit->probe];

	for (uint32_t a = 0; a < probe->arg_count; a++) {
		fprintf(out, "        %s = ", probe->args[a].name);
		switch (probe->args[a].type) {
		case PROFILE_ARG_S64: fprintf(out, "%" PRId64, (int64_t)hit->values[a]); break;
		case PROFILE_ARG_U64: fprintf(out, "%" PRIu64, hit->values[a]); break;
		case PROFILE_ARG_PTR: fprintf(out, "0x%" PRIx64, hit->values[a]); break;
		case PROFILE_ARG_STR:
			if (hit->strings[a]) {
				write_quoted(out, hit->strings[a]);
				if (hit->strings_cut & (1u << a))
					fputs("...", out); /* as gdb marks a string it did not print whole */
			} else
				fprintf(out, "(not read; pointer 0x%" PRIx64 ")", hit->values[a]);
			break;
		}
		fputc('\n', out);
	}
}

/* s as text a terminal shows as it is (terminal_text): names and paths come from binaries and recordings that
 * another user may have made, and a report is read on a terminal. */
static void put_text(FILE *out, const char *s)
{
	char *shown = terminal_text(s);

	fputs(shown, out);
	free(shown);
}

/* A fixed-size name (comm) that may fill its array without a NUL, as put_text. */
static void put_name(FILE *out, const char *name, size_t size)
{
	char *copy = xstrndup(name, size);

	put_text(out, copy[0] ? copy : "?");
	free(copy);
}

/* The file name of a source path, for a compact line (the trace carries the whole path). */
static const char *source_name(const char *file)
{
	const char *slash = strrchr(file, '/');

	return slash && slash[1] ? slash + 1 : file;
}

static void write_frames(FILE *out, const struct profile *p, const struct profile_stack *s)
{
	uint32_t n = 0, hit;

	fprintf(out, "  stack, innermost first:\n");
	for (uint32_t d = 0; d < s->depth; d++) {
		const struct profile_location *loc = &p->locations[s->locations[d]];
		const struct profile_module *m = loc->module < p->module_count ? &p->modules[loc->module] : NULL;
		bool context = profile_stack_context(s, d, &hit);

		for (uint32_t f = 0; f < loc->frame_count; f++) {
			const struct profile_frame *frame = &loc->frames[f];
			char *name = frame->function ? xstrdup(frame->function) : profile_location_fallback_name(p, loc);
			char *module = m ? profile_module_short_name(m) : NULL;

			fprintf(out, "    #%-3u ", n++);
			put_text(out, name);
			if (frame->file && frame->line) {
				fputs(" at ", out);
				put_text(out, source_name(frame->file));
				fprintf(out, ":%u", frame->line);
			}
			if (frame->inlined)
				fprintf(out, " (inlined)");
			if (loc->kind == PROFILE_LOCATION_KERNEL)
				fprintf(out, " [kernel]");
			else if (module && !loc->synthetic) {
				fputs(" [", out);
				put_text(out, module);
				fputc(']', out);
			}
			if (!frame->function && !loc->synthetic)
				fprintf(out, " (0x%" PRIx64 ": %s)", loc->address, loc->unnamed_reason ? loc->unnamed_reason : "unnamed");
			fputc('\n', out);
			/* The values belong to the call, which is the physical function: the chain's last frame. */
			if (context && f + 1 == loc->frame_count)
				write_context(out, p, &p->hits[hit]);
			free(name);
			free(module);
		}
	}
}

static void write_time(FILE *out, const struct profile *p, uint64_t time_ns)
{
	const struct profile_info *info = &p->info;

	if (!info->start_monotonic_ns || time_ns < info->start_monotonic_ns) {
		fprintf(out, "  time:    %" PRIu64 " ns on the recording's clock\n", time_ns);
		return;
	}
	fprintf(out, "  time:    %.6f s after the recording started", (double)(time_ns - info->start_monotonic_ns) / 1e9);
	if (info->start_realtime_ns) {
		uint64_t wall = info->start_realtime_ns + (time_ns - info->start_monotonic_ns);
		time_t secs = (time_t)(wall / 1000000000u);
		struct tm tm;
		char stamp[32];

		if (gmtime_r(&secs, &tm) && strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm))
			fprintf(out, " (%s.%06u UTC)", stamp, (unsigned int)(wall % 1000000000u / 1000));
	}
	fputc('\n', out);
}

static void write_thread(FILE *out, const struct profile *p, const struct profile_stack *s)
{
	const char *process = profile_process_name(p, s->pid, s->first_ns);

	fputs("  thread:  ", out);
	put_name(out, s->comm, sizeof(s->comm));
	fprintf(out, " (tid %" PRIu32 ") of process %" PRIu32 " (", s->tid, s->pid);
	put_name(out, process ? process : "", 16);
	fputs(")\n", out);
}

static void write_metrics(FILE *out, const struct profile *p, const struct profile_stack *s, uint64_t time_ns)
{
	const struct profile_metrics *m = profile_metrics_near(p, s->pid, s->tid, time_ns);

	if (!m) {
		fprintf(out, "  metrics: none recorded\n");
		return;
	}
	fprintf(out, "  metrics: %s: CPU %.3f s user, %.3f s system; RSS %" PRIu64 " KiB, VM %" PRIu64
		     " KiB; %" PRIu32 " thread%s\n",
		m->at_event ? "at the event" : "the last reading before it", (double)m->user_time_ns / 1e9,
		(double)m->system_time_ns / 1e9, m->rss_bytes / 1024, m->vm_bytes / 1024, m->threads,
		m->threads == 1 ? "" : "s");
}

static void write_event(FILE *out, const struct profile *p, const struct profile_event *e)
{
	const struct profile_stack *s = &p->stacks[e->stack];

	if (e->type == PROFILE_EVENT_SIGNAL) {
		const char *abbrev = sigabbrev_np(e->signo), *code = code_name(e->signo, e->code);

		fprintf(out, "fatal signal SIG%s (signal %" PRId32 ", %s)", abbrev ? abbrev : "?", e->signo,
			code ? code : "code ?");
		if (!code)
			fprintf(out, " [si_code %" PRId32 "]", e->code);
		if (has_address(e->signo, e->code))
			fprintf(out, " at address 0x%" PRIx64, e->address);
		fputc('\n', out);
	} else if (e->type == PROFILE_EVENT_EXCEPTION) {
		char *type = e->name ? demangle_type_name(e->name) : NULL;

		fputs("C++ exception thrown: ", out);
		put_text(out, type ? type : "(type unknown)");
		if (e->name && strcmp(type, e->name)) {
			fputs(" (", out);
			put_text(out, e->name);
			fputc(')', out);
		}
		fprintf(out, ", object at 0x%" PRIx64 "\n", e->address);
		free(type);
	} else {
		fprintf(out, "event of unknown type %u\n", (unsigned int)e->type);
	}
	write_thread(out, p, s);
	write_time(out, p, e->time_ns);
	write_frames(out, p, s);
	write_metrics(out, p, s, e->time_ns);
}

static void write_sample(FILE *out, const struct profile *p, const struct profile_sample *sample)
{
	const struct profile_stack *s = &p->stacks[sample->stack];

	fprintf(out, "%s sample with probe context\n", s->kind == PROFILE_SAMPLE_OFF_CPU ? "off-CPU" : "on-CPU");
	write_thread(out, p, s);
	write_time(out, p, sample->time_ns);
	write_frames(out, p, s);
	write_metrics(out, p, s, sample->time_ns);
}

static bool has_context(const struct profile_stack *s)
{
	return s->hits != NULL; /* the profile keeps no array for a stack without context */
}

static int report_write(const struct profile *p, const struct output_options *options, FILE *out)
{
	size_t shown = 0, e = 0, t = 0;

	fprintf(out, "stackrec report: %zu fatal signal%s or exception%s", p->event_count, p->event_count == 1 ? "" : "s",
		p->event_count == 1 ? "" : "s");
	if (p->info.command_line) {
		fputs(" in the recording of '", out);
		put_text(out, p->info.command_line);
		fputc('\'', out);
	}
	fputc('\n', out);
	if (p->lost_event_samples)
		fprintf(out, "warning: %" PRIu64 " events were lost while recording (ring buffer full)\n",
			p->lost_event_samples);
	if (p->probe_count) {
		fprintf(out, "probes:");
		for (size_t i = 0; i < p->probe_count; i++) {
			fprintf(out, "%s ", i ? "," : "");
			put_text(out, p->probes[i].function);
			fprintf(out, " (%" PRIu64 " hit%s)", p->probes[i].hits, p->probes[i].hits == 1 ? "" : "s");
		}
		fprintf(out, "; %" PRIu64 " hit%s lost while recording\n", p->lost_probe_hits,
			p->lost_probe_hits == 1 ? "" : "s");
	}
	if (p->context_omitted)
		fprintf(out, "warning: no frame shows probe values: %s\n", p->context_omitted);
	/* Events, and with --all-events samples with context, merged in time order. */
	while (e < p->event_count || (options->all_events && t < p->timeline_count)) {
		if (options->all_events && t < p->timeline_count && !has_context(&p->stacks[p->timeline[t].stack])) {
			t++;
			continue;
		}
		fprintf(out, "\n== %zu: ", ++shown);
		if (e < p->event_count &&
		    (!options->all_events || t >= p->timeline_count || p->events[e].time_ns <= p->timeline[t].time_ns))
			write_event(out, p, &p->events[e++]);
		else
			write_sample(out, p, &p->timeline[t++]);
	}
	if (!p->event_count)
		fprintf(out, "\nno fatal signals or exceptions recorded%s\n",
			shown ? "" : options->all_events ? ", and no sample has a frame with probe context" : "");
	return ferror(out) ? error("cannot write the report") : 0;
}

const struct output_format output_report = {
	.name = "report",
	.description = "a report per fatal signal or C++ exception: thread, time, frames with probe values, metrics",
	.binary = false,
	.timeline = false, /* events are kept apart; --all-events asks for the timeline (convert.c) */
	.write = report_write,
};
