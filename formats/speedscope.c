/*
 * speedscope.c — `-f speedscope`: speedscope's own file format (https://www.speedscope.app, schema
 * tests/data/speedscope-file-format-schema.json), which it opens with no conversion step.
 *
 * One "sampled" profile per process, or per thread with --tid, named "COMM (pid N)" / "THREAD (pid N,
 * tid M)". Each distinct stack is one sample (speedscope sums weights, so aggregation loses nothing for a
 * flame graph or its tables; only the "time order" view shows stacks in profile order rather than in time).
 * Weights are the stacks' weights in nanoseconds (on-CPU: samples × period); a profile without weights
 * (unknown frequency) uses sample counts with unit "none".
 *
 * A frame is a function, as speedscope's own importers make them (its pprof importer keys frames by name,
 * file and start line): frames are shared by every profile and deduplicated by (name, file, line), where
 * `line` is the line the function starts at, so a function is one box per call path in the flame graph and
 * one row in the tables, however many of its lines were sampled (pprof and trace keep those lines). Every
 * frame of an inline chain is its own frame, so inlined functions show in the flame graph; `file` is the
 * source file, or the module's path when the source is unknown (kernel and unnamed frames). Samples list
 * frame indexes root first, as speedscope wants.
 *
 * Written in one pass: the frame table is completed while the samples are written, so "shared" comes
 * after "profiles" in the object (JSON member order carries no meaning).
 */
#include "output.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "frame_names.h"
#include "json_writer.h"
#include "../commands.h"
#include "../util.h"

struct speedscope_frame {
	char *name;
	const char *file; /* borrowed from the profile, or NULL */
	uint32_t line; /* where the function starts, or 0 */
};

struct frame_table {
	struct key_index index;
	struct speedscope_frame *frames;
	size_t capacity;
};

static size_t frame_number(struct frame_table *t, const struct profile *profile, const struct profile_location *loc,
			   uint32_t f, const struct output_options *options)
{
	const struct profile_frame *frame = &loc->frames[f];
	const char *file = frame->file;
	char *name = frame_display_name(profile, loc, f, options);
	char *key;
	size_t key_len, number;
	bool added;

	if (!file && loc->module < profile->module_count)
		file = profile->modules[loc->module].path;
	key = xasprintf("%s%c%s%c%" PRIu32, name, 0, file ? file : "", 0, frame->start_line);
	key_len = strlen(name) + 1 + (file ? strlen(file) : 0) + 1;
	key_len += strlen(key + key_len);
	number = key_index_get(&t->index, key, key_len, &added);
	free(key);
	if (!added) {
		free(name);
		return number;
	}
	GROW(t->frames, t->capacity, number + 1);
	t->frames[number] = (struct speedscope_frame){ name, file, frame->start_line };
	return number;
}

static bool same_group(const struct profile_stack *a, const struct profile_stack *b, bool per_tid)
{
	return a->pid == b->pid && (!per_tid || a->tid == b->tid);
}

static char *profile_name(const struct profile *profile, size_t first, bool per_tid)
{
	const struct profile_stack *s = &profile->stacks[first];
	char comm[17];

	if (per_tid) {
		snprintf(comm, sizeof(comm), "%.16s", s->comm);
		return xasprintf("%s (pid %" PRIu32 ", tid %" PRIu32 ")", comm, s->pid, s->tid);
	}
	snprintf(comm, sizeof(comm), "%.16s", process_comm(profile, first));
	return xasprintf("%s (pid %" PRIu32 ")", comm, s->pid);
}

/* Writes the profile of stacks [first, end) and returns end. */
static size_t write_profile(struct json_writer *w, struct frame_table *frames, const struct profile *profile,
			    size_t first, const struct output_options *options, bool use_weight)
{
	bool per_tid = options && options->per_tid;
	size_t end = first;
	uint64_t total = 0;
	char *name = profile_name(profile, first, per_tid);

	while (end < profile->stack_count && same_group(&profile->stacks[first], &profile->stacks[end], per_tid))
		end++;

	json_newline(w);
	json_begin_object(w);
	json_kv_string(w, "type", "sampled");
	json_kv_string(w, "name", name);
	json_kv_string(w, "unit", use_weight ? "nanoseconds" : "none");
	json_kv_uint(w, "startValue", 0);
	json_key(w, "samples");
	json_begin_array(w);
	for (size_t i = first; i < end; i++) {
		const struct profile_stack *s = &profile->stacks[i];

		json_newline(w);
		json_begin_array(w);
		for (uint32_t d = s->depth; d-- > 0;) {
			const struct profile_location *loc = &profile->locations[s->locations[d]];

			for (uint32_t f = loc->frame_count; f-- > 0;)
				json_uint(w, frame_number(frames, profile, loc, f, options));
		}
		json_end_array(w);
		total += use_weight ? s->weight : s->count;
	}
	json_end_array(w);
	json_key(w, "weights");
	json_begin_array(w);
	for (size_t i = first; i < end; i++)
		json_uint(w, use_weight ? profile->stacks[i].weight : profile->stacks[i].count);
	json_end_array(w);
	json_kv_uint(w, "endValue", total);
	json_end_object(w);
	free(name);
	return end;
}

static int speedscope_write(const struct profile *profile, const struct output_options *options, FILE *out)
{
	struct json_writer w;
	struct frame_table frames = { 0 };
	bool use_weight = profile->total_weight > 0 || !profile->total_samples;
	int ret;

	key_index_init(&frames.index);
	json_writer_init(&w, out);
	json_begin_object(&w);
	json_kv_string(&w, "$schema", "https://www.speedscope.app/file-format-schema.json");
	json_kv_string(&w, "name", profile->info.command_line ? profile->info.command_line : "stackrec profile");
	json_kv_uint(&w, "activeProfileIndex", 0);
	json_kv_string(&w, "exporter", "stackrec " STACKREC_VERSION);
	json_key(&w, "profiles");
	json_begin_array(&w);
	for (size_t i = 0; i < profile->stack_count;)
		i = write_profile(&w, &frames, profile, i, options, use_weight);
	json_end_array(&w);
	json_newline(&w);
	json_key(&w, "shared");
	json_begin_object(&w);
	json_key(&w, "frames");
	json_begin_array(&w);
	for (size_t i = 0; i < frames.index.count; i++) {
		const struct speedscope_frame *f = &frames.frames[i];

		json_newline(&w);
		json_begin_object(&w);
		json_kv_string(&w, "name", f->name);
		if (f->file)
			json_kv_string(&w, "file", f->file);
		if (f->line)
			json_kv_uint(&w, "line", f->line);
		json_end_object(&w);
		free(f->name);
	}
	json_end_array(&w);
	json_end_object(&w);
	json_end_object(&w);
	json_end_line(&w);
	ret = json_writer_release(&w);
	free(frames.frames);
	key_index_release(&frames.index);
	return ret ? error("cannot write the speedscope output") : 0;
}

const struct output_format output_speedscope = {
	.name = "speedscope",
	.description = "speedscope JSON (https://www.speedscope.app), one profile per process (per thread with --tid)",
	.binary = false,
	.write = speedscope_write,
};
