/*
 * trace.c — `-f trace`: the enriched trace, the format other tools build on. Specified, with its
 * stability rules, in docs/trace-format.md; change the two together and bump TRACE_FORMAT_VERSION on any
 * change a reader could notice other than a new member.
 *
 * JSON Lines: a header record (format, version, recording facts, totals, modules), then one record per
 * distinct stack of one kind (the profile aggregates identical samples; "count" says how many there were,
 * "on_cpu_ns" and "off_cpu_ns" their time) with every frame, leaf first and every inline frame on its own,
 * carrying all we know about it: address, module, build ID, file offset, function, mangled name, file,
 * line, column, whether it is inlined, how it was unwound, and why it is unnamed if it is. Then one small
 * record per sample in time order (time, thread, kind, weight and the "id" of its stack), so that the time
 * of every sample is in the file while each stack is written once. Then the events (fatal signals,
 * exceptions: stacks of kind "event", no samples) and the process metrics. A frame of a probed call carries
 * its "context": the values the call was entered with (convert/enrich.h). Every member is always present (null
 * when unknown), so readers need no guessing; addresses are hex strings because JSON numbers are exact
 * only up to 2^53.
 */
#include "output.h"

#include <inttypes.h>
#include <string.h>

#include "json_writer.h"
#include "../commands.h"
#include "../util.h"

#define TRACE_FORMAT_VERSION 1

static const char *kind_name(enum profile_location_kind kind)
{
	switch (kind) {
	case PROFILE_LOCATION_USER:
		return "user";
	case PROFILE_LOCATION_KERNEL:
		return "kernel";
	case PROFILE_LOCATION_JIT:
		return "jit";
	}
	return "unknown";
}

static void kv_string_or_null(struct json_writer *w, const char *key, const char *s)
{
	json_key(w, key);
	json_string(w, s);
}

static void kv_positive_or_null(struct json_writer *w, const char *key, uint64_t value)
{
	json_key(w, key);
	if (value)
		json_uint(w, value);
	else
		json_null(w);
}

/* What the samples measure: "on_cpu" (also for no samples at all), "off_cpu", or "mixed" when both. */
static const char *sample_kind(const struct profile *profile)
{
	if (profile->on_cpu_samples && profile->off_cpu_samples)
		return "mixed";
	return profile->off_cpu_samples ? "off_cpu" : "on_cpu";
}

static void write_header(struct json_writer *w, const struct profile *profile)
{
	const struct profile_info *info = &profile->info;

	json_begin_object(w);
	json_kv_string(w, "type", "header");
	json_kv_string(w, "format", "stackrec-trace");
	json_kv_uint(w, "version", TRACE_FORMAT_VERSION);
	json_kv_string(w, "producer", "stackrec " STACKREC_VERSION);
	json_kv_string(w, "records", "stacks");
	json_kv_string(w, "sample_kind", sample_kind(profile));
	kv_string_or_null(w, "command_line", info->command_line);
	kv_string_or_null(w, "hostname", info->hostname);
	kv_string_or_null(w, "kernel_release", info->kernel_release);
	kv_string_or_null(w, "event", info->event);
	kv_positive_or_null(w, "frequency_hz", info->frequency_hz);
	kv_positive_or_null(w, "start_time_ns", info->start_realtime_ns);
	kv_positive_or_null(w, "duration_ns", info->duration_ns);
	json_kv_uint(w, "total_samples", profile->total_samples);
	json_kv_uint(w, "total_weight_ns", add_saturating(profile->total_on_cpu_ns, profile->total_off_cpu_ns));
	json_kv_uint(w, "lost_samples", profile->lost_samples);
	json_kv_uint(w, "user_stack_errors", profile->user_stack_errors);
	json_kv_uint(w, "kernel_stack_errors", profile->kernel_stack_errors);
	json_kv_uint(w, "on_cpu_samples", profile->on_cpu_samples);
	json_kv_uint(w, "off_cpu_samples", profile->off_cpu_samples);
	json_kv_uint(w, "total_on_cpu_ns", profile->total_on_cpu_ns);
	json_kv_uint(w, "total_off_cpu_ns", profile->total_off_cpu_ns);
	kv_positive_or_null(w, "start_monotonic_ns", info->start_monotonic_ns);
	json_kv_uint(w, "sample_records", profile->timeline_count);
	json_kv_uint(w, "event_records", profile->event_count);
	json_kv_uint(w, "lost_events", profile->lost_event_samples);
	json_kv_uint(w, "probe_hits", profile->probe_hits);
	json_kv_uint(w, "lost_probe_hits", profile->lost_probe_hits);
	kv_string_or_null(w, "context_omitted", profile->context_omitted);
	json_key(w, "probes");
	json_begin_array(w);
	for (size_t i = 0; i < profile->probe_count; i++) {
		const struct profile_probe *probe = &profile->probes[i];

		json_begin_object(w);
		json_kv_uint(w, "id", probe->probe_id);
		json_kv_string(w, "binary", probe->binary);
		json_kv_string(w, "function", probe->function);
		kv_string_or_null(w, "build_id", probe->build_id);
		json_kv_hex(w, "address", probe->address);
		json_key(w, "args");
		json_begin_array(w);
		for (uint32_t a = 0; a < probe->arg_count; a++) {
			json_begin_object(w);
			json_kv_string(w, "name", probe->args[a].name);
			json_kv_string(w, "type", profile_arg_type_name(probe->args[a].type));
			json_end_object(w);
		}
		json_end_array(w);
		json_kv_uint(w, "hits", probe->hits);
		json_end_object(w);
	}
	json_end_array(w);
	json_key(w, "modules");
	json_begin_array(w);
	for (size_t i = 0; i < profile->module_count; i++) {
		const struct profile_module *m = &profile->modules[i];

		json_begin_object(w);
		json_kv_uint(w, "id", i);
		kv_string_or_null(w, "path", m->path);
		kv_string_or_null(w, "build_id", m->build_id);
		json_kv_hex(w, "start", m->start);
		json_kv_hex(w, "end", m->end);
		json_kv_hex(w, "file_offset", m->file_offset);
		json_kv_bool(w, "kernel", m->is_kernel);
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
	json_end_line(w);
}

/* A stack read error: null, or {"errno": 14, "name": "EFAULT"}. */
static void kv_error(struct json_writer *w, const char *key, int32_t err)
{
	const char *name;

	json_key(w, key);
	if (!err) {
		json_null(w);
		return;
	}
	name = errno_name(err); /* not -err here: a recording's INT_MIN has no negation */
	json_begin_object(w);
	json_kv_int(w, "errno", err < 0 ? -(int64_t)err : err);
	kv_string_or_null(w, "name", name);
	json_end_object(w);
}

/*
 * A frame's context: {"probe": ID, "function": NAME, "time_ns": T, "values": {"ARG": VALUE, ...}} with s64 and
 * u64 values as JSON numbers (exact in the text; readers that parse numbers as doubles lose digits past 2^53),
 * ptr as a hex string, str as a string or null when it could not be read.
 */
static void write_context(struct json_writer *w, const struct profile *profile, const struct profile_hit *hit)
{
	const struct profile_probe *probe = &profile->probes[hit->probe];

	json_key(w, "context");
	json_begin_object(w);
	json_kv_uint(w, "probe", probe->probe_id);
	json_kv_string(w, "function", probe->function);
	json_kv_uint(w, "time_ns", hit->time_ns);
	json_key(w, "values");
	json_begin_object(w);
	for (uint32_t a = 0; a < probe->arg_count; a++) {
		json_key(w, probe->args[a].name);
		switch (probe->args[a].type) {
		case PROFILE_ARG_S64: json_int(w, (int64_t)hit->values[a]); break;
		case PROFILE_ARG_U64: json_uint(w, hit->values[a]); break;
		case PROFILE_ARG_PTR: json_hex(w, hit->values[a]); break;
		case PROFILE_ARG_STR: json_string(w, hit->strings[a]); break;
		}
	}
	json_end_object(w);
	if (hit->strings_cut) {
		json_key(w, "cut");
		json_begin_array(w);
		for (uint32_t a = 0; a < probe->arg_count; a++)
			if (hit->strings_cut & (1u << a))
				json_string(w, probe->args[a].name);
		json_end_array(w);
	}
	json_end_object(w);
}

static void write_frame(struct json_writer *w, const struct profile *profile, uint32_t location, uint32_t f,
			const struct profile_hit *context)
{
	const struct profile_location *loc = &profile->locations[location];
	const struct profile_frame *frame = &loc->frames[f];
	const struct profile_module *m = loc->module < profile->module_count ? &profile->modules[loc->module] : NULL;

	json_begin_object(w);
	json_kv_hex(w, "address", loc->address);
	json_kv_uint(w, "location", location);
	json_kv_string(w, "kind", kind_name(loc->kind));
	kv_string_or_null(w, "module", m ? m->path : NULL);
	kv_string_or_null(w, "build_id", m ? m->build_id : NULL);
	json_kv_hex(w, "file_offset", loc->file_offset);
	kv_string_or_null(w, "function", frame->function);
	kv_string_or_null(w, "system_name", frame->system_name);
	kv_string_or_null(w, "file", frame->file);
	kv_positive_or_null(w, "line", frame->line);
	kv_positive_or_null(w, "column", frame->column);
	kv_positive_or_null(w, "start_line", frame->start_line);
	json_kv_bool(w, "inlined", frame->inlined);
	json_kv_string(w, "unwind", profile_unwind_name(loc->unwind));
	json_kv_bool(w, "return_address", loc->is_return_address);
	kv_string_or_null(w, "unnamed_reason", frame->function ? NULL : loc->unnamed_reason);
	json_kv_bool(w, "synthetic", loc->synthetic);
	if (context && f + 1 == loc->frame_count) /* the call's values, on its physical function's frame */
		write_context(w, profile, context);
	json_end_object(w);
}

static void write_stack(struct json_writer *w, const struct profile *profile, size_t id)
{
	const struct profile_stack *s = &profile->stacks[id];
	char comm[17];

	snprintf(comm, sizeof(comm), "%.16s", s->comm);
	json_begin_object(w);
	json_kv_string(w, "type", "stack");
	json_kv_uint(w, "id", id);
	json_kv_uint(w, "pid", s->pid);
	json_kv_uint(w, "tid", s->tid);
	json_kv_string(w, "comm", comm);
	json_kv_string(w, "kind", profile_sample_kind_name(s->kind));
	json_kv_uint(w, "count", s->count);
	json_kv_uint(w, "weight_ns", s->on_cpu_ns + s->off_cpu_ns);
	json_kv_uint(w, "on_cpu_ns", s->on_cpu_ns);
	json_kv_uint(w, "off_cpu_ns", s->off_cpu_ns);
	kv_error(w, "user_stack_error", s->user_error);
	kv_error(w, "kernel_stack_error", s->kernel_error);
	json_key(w, "frames");
	json_begin_array(w);
	for (uint32_t d = 0; d < s->depth; d++) {
		const struct profile_location *loc = &profile->locations[s->locations[d]];
		uint32_t hit;
		const struct profile_hit *context = profile_stack_context(s, d, &hit) ? &profile->hits[hit] : NULL;

		for (uint32_t f = 0; f < loc->frame_count; f++)
			write_frame(w, profile, s->locations[d], f, context);
	}
	json_end_array(w);
	json_end_object(w);
	json_end_line(w);
}

/* A sample: when, which thread, which kind, its weight, and the id of its stack record. */
static void write_sample(struct json_writer *w, const struct profile *profile, const struct profile_sample *sample)
{
	const struct profile_stack *s = &profile->stacks[sample->stack];

	json_begin_object(w);
	json_kv_string(w, "type", "sample");
	json_kv_uint(w, "time_ns", sample->time_ns);
	json_kv_uint(w, "pid", s->pid);
	json_kv_uint(w, "tid", s->tid);
	json_kv_string(w, "kind", profile_sample_kind_name(s->kind));
	json_kv_uint(w, "weight_ns", sample->weight_ns);
	json_kv_uint(w, "stack", sample->stack);
	json_end_object(w);
	json_end_line(w);
}

/* An event: when, which thread, what happened, and the id of its stack record. */
static void write_event(struct json_writer *w, const struct profile *profile, const struct profile_event *e)
{
	const struct profile_stack *s = &profile->stacks[e->stack];
	const char *abbrev = e->type == PROFILE_EVENT_SIGNAL ? sigabbrev_np(e->signo) : NULL;
	char signal[16];

	json_begin_object(w);
	json_kv_string(w, "type", "event");
	json_kv_uint(w, "time_ns", e->time_ns);
	json_kv_uint(w, "pid", s->pid);
	json_kv_uint(w, "tid", s->tid);
	json_kv_string(w, "event", e->type == PROFILE_EVENT_SIGNAL	 ? "signal"
				   : e->type == PROFILE_EVENT_EXCEPTION ? "exception"
									: "unknown");
	json_key(w, "signal");
	if (e->type == PROFILE_EVENT_SIGNAL) {
		json_begin_object(w);
		json_kv_int(w, "number", e->signo);
		snprintf(signal, sizeof(signal), "SIG%s", abbrev ? abbrev : "?");
		kv_string_or_null(w, "name", abbrev ? signal : NULL);
		json_kv_int(w, "code", e->code);
		json_end_object(w);
	} else {
		json_null(w);
	}
	json_kv_hex(w, "address", e->address);
	kv_string_or_null(w, "exception_type", e->name);
	json_kv_uint(w, "stack", e->stack);
	json_end_object(w);
	json_end_line(w);
}

/* A process's metrics at one moment. */
static void write_metrics(struct json_writer *w, const struct profile_metrics *m)
{
	json_begin_object(w);
	json_kv_string(w, "type", "metrics");
	json_kv_uint(w, "time_ns", m->time_ns);
	json_kv_uint(w, "pid", m->pid);
	kv_positive_or_null(w, "tid", m->tid);
	json_kv_string(w, "reason", m->at_event ? "event" : "interval");
	json_kv_uint(w, "threads", m->threads);
	json_kv_uint(w, "user_time_ns", m->user_time_ns);
	json_kv_uint(w, "system_time_ns", m->system_time_ns);
	json_kv_uint(w, "rss_bytes", m->rss_bytes);
	json_kv_uint(w, "vm_bytes", m->vm_bytes);
	json_end_object(w);
	json_end_line(w);
}

static int trace_write(const struct profile *profile, const struct output_options *options, FILE *out)
{
	struct json_writer w;

	(void)options; /* the trace carries everything; display options do not apply */
	json_writer_init(&w, out);
	write_header(&w, profile);
	for (size_t i = 0; i < profile->stack_count; i++)
		write_stack(&w, profile, i);
	for (size_t i = 0; i < profile->timeline_count; i++)
		write_sample(&w, profile, &profile->timeline[i]);
	for (size_t i = 0; i < profile->event_count; i++)
		write_event(&w, profile, &profile->events[i]);
	for (size_t i = 0; i < profile->metrics_count; i++)
		write_metrics(&w, &profile->metrics[i]);
	return json_writer_release(&w) ? error("cannot write the trace output") : 0;
}

const struct output_format output_trace = {
	.name = "trace",
	.description = "enriched trace, JSON Lines: every frame with module, build ID, offset, source, inline and unwind facts; every sample's time",
	.binary = false,
	.timeline = true,
	.write = trace_write,
};
