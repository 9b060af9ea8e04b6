/*
 * speedscope.c — `-f speedscope`: speedscope's own file format (https://www.speedscope.app, schema
 * tests/data/speedscope-file-format-schema.json), which it opens with no conversion step.
 *
 * One "evented" profile per thread, named "THREAD (pid N, tid M)" by its last name, as perf names a thread
 * (a new thread runs under its creator's name until it names itself): the thread's samples as a timeline in
 * real time order, each sample an interval in which its stack's frames are open: an on-CPU sample covers
 * [time - period, time), the period its tick ends, an off-CPU sample [time, time + time off the CPU).
 * --kind picks the intervals: on-CPU (on), off-CPU (off) or both (wall); the unit is nanoseconds, counted
 * from the profile's earliest interval, so that every thread shares one time axis. speedscope's time order
 * view is then the thread's real timeline, and its flame graph ("left heavy") and sandwich views sum the
 * intervals: time on-CPU (for a constant period proportional to folded's sample counts), off-CPU or both.
 *
 * Events: one sample's interval opens its frames root first and closes them leaf first. An interval that
 * starts where the previous one ended closes and opens only the frames in which the two stacks differ, as
 * speedscope's own importers do, so that a function running through many samples is one box. Samples
 * overlap by clock jitter (an on-CPU tick before the previous period ran out) and where a thread woke within
 * the period of its next tick, which then counts time it was off the CPU: an interval starts no earlier than
 * the previous one ended, and one that ends before is dropped, so that events are in time order and nest, as
 * speedscope requires. What is cut so is the on-CPU period, an estimate, never the measured time off the CPU
 * (when an on-CPU period was placed from its tick on, the off-CPU interval after it lost up to a period: 9% of
 * the time off the CPU of a thread that ran and slept 5 ms by turns).
 *
 * The file opens (activeProfileIndex) on the busiest thread of the main process: the process with the most
 * time of the kind shown (on-CPU time for wall, unless there is none), and in it the thread with the most.
 *
 * A frame is a function, as speedscope's own importers make them (its pprof importer keys frames by name,
 * file and start line): frames are shared by every profile and deduplicated by (name, file, line), where
 * `line` is the line the function starts at, so a function is one box per call path in the flame graph and
 * one row in the tables, however many of its lines were sampled (pprof and trace keep those lines). Every
 * frame of an inline chain is its own frame, so inlined functions show in the flame graph; `file` is the
 * source file, or the module's path when the source is unknown (kernel and unnamed frames).
 *
 * Needs the profile's timeline (output_format.timeline). Written in one pass: the frame table is completed
 * while the events are written, so "shared" comes after "profiles" in the object (JSON member order carries
 * no meaning).
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

/* A thread: its run of stacks (stacks are sorted by pid, tid) and how busy it was. */
struct thread {
	size_t first_stack;
	size_t named_by; /* its stack whose first sample is latest: that stack's name is the thread's last */
	uint64_t busy, busy_tie; /* compared in this order: see busy_values() */
	size_t first_sample, sample_count; /* its run in the per-thread sample order */
};

struct writer {
	const struct profile *profile;
	const struct output_options *options;
	enum output_kind kind;
	struct frame_table frames;
	uint32_t **stack_frames; /* per stack: its frame numbers root first, made on first use */
	uint32_t *stack_depth;
	uint64_t origin; /* the earliest interval's start: 0 on every thread's time axis */
};

static bool shown(enum output_kind kind, enum profile_sample_kind sample_kind)
{
	if (sample_kind == PROFILE_SAMPLE_EVENT)
		return false; /* no interval: events are in -f report and -f trace */
	if (kind == OUTPUT_KIND_WALL)
		return true;
	return (kind == OUTPUT_KIND_OFF_CPU) == (sample_kind == PROFILE_SAMPLE_OFF_CPU);
}

/* How busy a stack makes its thread, for activeProfileIndex: the time of the kind shown, for wall on-CPU time
 * first and off-CPU time to break ties (a thread that never ran is not busy however long it waited). */
static void busy_values(const struct profile_stack *s, enum output_kind kind, uint64_t *busy, uint64_t *tie)
{
	*busy = add_saturating(*busy, kind == OUTPUT_KIND_OFF_CPU ? s->off_cpu_ns : s->on_cpu_ns);
	*tie = add_saturating(*tie, kind == OUTPUT_KIND_WALL ? s->off_cpu_ns : 0);
}

static bool busier(uint64_t busy, uint64_t tie, uint64_t than_busy, uint64_t than_tie)
{
	return busy > than_busy || (busy == than_busy && tie > than_tie);
}

/* The frame numbers of stack i, root first (cached: names are made once per stack, not once per sample). */
static const uint32_t *stack_frames(struct writer *w, uint32_t i, uint32_t *depth)
{
	const struct profile_stack *s = &w->profile->stacks[i];
	uint32_t n = 0;

	if (!w->stack_frames[i]) {
		for (uint32_t d = 0; d < s->depth; d++)
			n += w->profile->locations[s->locations[d]].frame_count;
		w->stack_frames[i] = xmalloc((n ? n : 1) * sizeof(**w->stack_frames));
		n = 0;
		for (uint32_t d = s->depth; d-- > 0;) {
			const struct profile_location *loc = &w->profile->locations[s->locations[d]];

			for (uint32_t f = loc->frame_count; f-- > 0;)
				w->stack_frames[i][n++] =
					(uint32_t)frame_number(&w->frames, w->profile, loc, f, w->options);
		}
		w->stack_depth[i] = n;
	}
	*depth = w->stack_depth[i];
	return w->stack_frames[i];
}

static void event(struct json_writer *json, const char *type, uint32_t frame, uint64_t at)
{
	json_newline(json);
	json_begin_object(json);
	json_kv_string(json, "type", type);
	json_kv_uint(json, "frame", frame);
	json_kv_uint(json, "at", at);
	json_end_object(json);
}

/* Sample's interval, on the recording's clock: on-CPU the period its tick ends, off-CPU its time off the CPU. */
static void interval(const struct profile *profile, const struct profile_sample *sample, uint64_t *start,
		     uint64_t *end)
{
	if (profile->stacks[sample->stack].kind == PROFILE_SAMPLE_ON_CPU) {
		*end = sample->time_ns;
		*start = *end > sample->weight_ns ? *end - sample->weight_ns : 0;
	} else {
		*start = sample->time_ns;
		*end = add_saturating(*start, sample->weight_ns); /* never before the start (a hostile weight) */
	}
}

/* The events of one thread's samples of the kind shown (order[]: their indexes in the timeline, in time order). */
static void write_events(struct json_writer *json, struct writer *w, const uint32_t *order, size_t count)
{
	const struct profile *profile = w->profile;
	const uint32_t *open = NULL; /* the open stack's frames, root first */
	uint32_t open_depth = 0;
	uint64_t open_end = 0;

	for (size_t i = 0; i < count; i++) {
		const struct profile_sample *sample = &profile->timeline[order[i]];
		uint64_t start, end;
		const uint32_t *frames;
		uint32_t depth, common = 0;

		interval(profile, sample, &start, &end);
		start -= w->origin;
		end -= w->origin;
		if (open && start < open_end)
			start = open_end;
		if (end <= start)
			continue;
		frames = stack_frames(w, sample->stack, &depth);
		if (open && start == open_end)
			while (common < open_depth && common < depth && open[common] == frames[common])
				common++;
		for (uint32_t d = open_depth; d-- > common;)
			event(json, "C", open[d], open_end);
		for (uint32_t d = common; d < depth; d++)
			event(json, "O", frames[d], start);
		open = frames;
		open_depth = depth;
		open_end = end;
	}
	for (uint32_t d = open_depth; d-- > 0;)
		event(json, "C", open[d], open_end);
}

/* The evented profile of thread t, which has at least one sample of the kind shown (order[]: as above). */
static void write_thread(struct json_writer *json, struct writer *w, const struct thread *t, const uint32_t *order)
{
	const struct profile *profile = w->profile;
	const struct profile_stack *s = &profile->stacks[t->named_by];
	uint64_t first = UINT64_MAX, last = 0, start, end;
	char comm[17], *name;

	for (size_t i = 0; i < t->sample_count; i++) { /* a long wait may end after later samples */
		interval(profile, &profile->timeline[order[i]], &start, &end);
		if (start < first)
			first = start;
		if (end > last)
			last = end;
	}
	first -= w->origin;
	last -= w->origin;
	name = xasprintf("%s (pid %" PRIu32 ", tid %" PRIu32 ")", shown_comm(s->comm, comm), s->pid, s->tid);
	json_newline(json);
	json_begin_object(json);
	json_kv_string(json, "type", "evented");
	json_kv_string(json, "name", name);
	json_kv_string(json, "unit", "nanoseconds");
	json_kv_uint(json, "startValue", first);
	json_kv_uint(json, "endValue", last);
	json_key(json, "events");
	json_begin_array(json);
	write_events(json, w, order, t->sample_count);
	json_end_array(json);
	json_end_object(json);
	free(name);
}

/*
 * The threads of the profile that have samples of the kind shown, and the timeline's indexes grouped by
 * thread, each group in time order (a counting sort: the timeline is in time order already).
 */
static size_t find_threads(const struct profile *profile, enum output_kind kind, struct thread **threads_out,
			   uint32_t **order_out)
{
	struct thread *threads = xcalloc(profile->stack_count + 1, sizeof(*threads));
	uint32_t *thread_of = xcalloc(profile->stack_count + 1, sizeof(*thread_of));
	uint32_t *order = xcalloc(profile->timeline_count + 1, sizeof(*order));
	size_t count = 0, next = 0;

	for (size_t i = 0; i < profile->stack_count; i++) {
		const struct profile_stack *s = &profile->stacks[i];

		if (!count || s->pid != profile->stacks[threads[count - 1].first_stack].pid ||
		    s->tid != profile->stacks[threads[count - 1].first_stack].tid)
			threads[count++] = (struct thread){ .first_stack = i, .named_by = i };
		else if (s->first_ns > profile->stacks[threads[count - 1].named_by].first_ns)
			threads[count - 1].named_by = i; /* stacks of a thread are in name order, not time order */
		thread_of[i] = (uint32_t)(count - 1);
		if (shown(kind, s->kind))
			busy_values(s, kind, &threads[count - 1].busy, &threads[count - 1].busy_tie);
	}
	for (size_t i = 0; i < profile->timeline_count; i++)
		if (shown(kind, profile->stacks[profile->timeline[i].stack].kind))
			threads[thread_of[profile->timeline[i].stack]].sample_count++;
	for (size_t t = 0; t < count; t++) {
		threads[t].first_sample = next;
		next += threads[t].sample_count;
		threads[t].sample_count = 0;
	}
	for (size_t i = 0; i < profile->timeline_count; i++) {
		struct thread *t = &threads[thread_of[profile->timeline[i].stack]];

		if (shown(kind, profile->stacks[profile->timeline[i].stack].kind))
			order[t->first_sample + t->sample_count++] = (uint32_t)i;
	}
	/* Threads without samples of the kind get no profile. */
	next = 0;
	for (size_t t = 0; t < count; t++)
		if (threads[t].sample_count)
			threads[next++] = threads[t];
	free(thread_of);
	*threads_out = threads;
	*order_out = order;
	return next;
}

/* The index of the busiest thread of the busiest process (ties: the lowest pid, then tid). */
static size_t active_thread(const struct profile *profile, const struct thread *threads, size_t count)
{
	uint64_t best_busy = 0, best_tie = 0;
	size_t best = 0;

	for (size_t t = 0; t < count;) {
		uint32_t pid = profile->stacks[threads[t].first_stack].pid;
		uint64_t busy = 0, tie = 0;
		size_t first = t, busiest = t;

		for (; t < count && profile->stacks[threads[t].first_stack].pid == pid; t++) {
			busy += threads[t].busy;
			tie += threads[t].busy_tie;
			if (busier(threads[t].busy, threads[t].busy_tie, threads[busiest].busy, threads[busiest].busy_tie))
				busiest = t;
		}
		if (first == 0 || busier(busy, tie, best_busy, best_tie)) {
			best_busy = busy;
			best_tie = tie;
			best = busiest;
		}
	}
	return best;
}

static int speedscope_write(const struct profile *profile, const struct output_options *options, FILE *out)
{
	struct writer w = { profile, options, output_kind_of(profile, options), { { 0 } }, NULL, NULL, 0 };
	struct json_writer json;
	struct thread *threads;
	uint32_t *order;
	size_t count;
	int ret;

	key_index_init(&w.frames.index);
	w.stack_frames = xcalloc(profile->stack_count + 1, sizeof(*w.stack_frames));
	w.stack_depth = xcalloc(profile->stack_count + 1, sizeof(*w.stack_depth));
	/* The earliest interval's start: every "at" counts from it. */
	w.origin = profile->timeline_count ? UINT64_MAX : 0;
	for (size_t i = 0; i < profile->timeline_count; i++) {
		uint64_t start, end;

		interval(profile, &profile->timeline[i], &start, &end);
		if (start < w.origin)
			w.origin = start;
	}
	count = find_threads(profile, w.kind, &threads, &order);
	json_writer_init(&json, out);
	json_begin_object(&json);
	json_kv_string(&json, "$schema", "https://www.speedscope.app/file-format-schema.json");
	json_kv_string(&json, "name", profile->info.command_line ? profile->info.command_line : "stackrec profile");
	json_kv_uint(&json, "activeProfileIndex", active_thread(profile, threads, count));
	json_kv_string(&json, "exporter", "stackrec " STACKREC_VERSION);
	json_key(&json, "profiles");
	json_begin_array(&json);
	for (size_t t = 0; t < count; t++)
		write_thread(&json, &w, &threads[t], &order[threads[t].first_sample]);
	json_end_array(&json);
	json_newline(&json);
	json_key(&json, "shared");
	json_begin_object(&json);
	json_key(&json, "frames");
	json_begin_array(&json);
	for (size_t i = 0; i < w.frames.index.count; i++) {
		const struct speedscope_frame *f = &w.frames.frames[i];

		json_newline(&json);
		json_begin_object(&json);
		json_kv_string(&json, "name", f->name);
		if (f->file)
			json_kv_string(&json, "file", f->file);
		if (f->line)
			json_kv_uint(&json, "line", f->line);
		json_end_object(&json);
		free(f->name);
	}
	json_end_array(&json);
	json_end_object(&json);
	json_end_object(&json);
	json_end_line(&json);
	ret = json_writer_release(&json);
	for (size_t i = 0; i < profile->stack_count; i++)
		free(w.stack_frames[i]);
	free(w.stack_frames);
	free(w.stack_depth);
	free(threads);
	free(order);
	free(w.frames.frames);
	key_index_release(&w.frames.index);
	return ret ? error("cannot write the speedscope output") : 0;
}

const struct output_format output_speedscope = {
	.name = "speedscope",
	.description = "speedscope JSON (https://www.speedscope.app): each thread's timeline, on-/off-CPU per --kind",
	.binary = false,
	.one_kind = true,
	.timeline = true,
	.write = speedscope_write,
};
