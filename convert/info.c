/*
 * info.c — `stackrec info FILE`: what a recording contains, for a person deciding what to do with it and
 * for tests: host and run facts, counts of every block type (unknown ones too), samples, processes and
 * threads with their names, mappings and build IDs, stack errors by errno, recorder statistics, and damage.
 * With --mappings, every recorded mapping, one per line; with --files, every embedded FILE block (vDSO image,
 * JIT perf map).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../commands.h"
#include "../formats/recording_reader.h"
#include "../util.h"

#define MAX_BLOCK_TYPE 64

struct process_info {
	uint32_t pid;
	char comm[SREC_COMM_LEN];
	uint64_t samples, mappings;
	uint32_t parent_pid; /* the process it was forked from, or 0: it then runs its parent's mappings */
};

struct error_info {
	int32_t error;
	bool kernel;
	uint64_t count;
};

struct probe_info {
	uint32_t probe_id;
	char *text; /* "binary:function(arg:type, ...)" */
	uint64_t hits;
};

/* Events by what happened: a signal number or an exception type. */
struct event_info {
	uint32_t type;
	int32_t signo;
	char name[SREC_EVENT_NAME_MAX];
	uint64_t count;
};

/* Positions of 32-bit ids (pids, tids) in an array: open addressing, so that a system-wide recording's tens of
 * thousands of processes and threads cost no scan of them all per sample. */
struct id_index {
	struct id_slot {
		uint32_t id, position_plus_1; /* 0: an empty slot */
	} *slots;
	size_t cap, count;
};

struct info {
	bool list_mappings, list_files;
	struct probe_info *probes;
	size_t probe_count, probe_cap;
	uint64_t probe_hits, orphan_hits; /* PROBE_HIT blocks; of which naming no probe before them */
	struct event_info *events;
	size_t event_count, event_cap;
	uint64_t event_samples;
	uint64_t metrics_interval, metrics_event;
	uint64_t vdso_files, perf_map_files, other_files, perf_map_bytes;
	uint64_t blocks[MAX_BLOCK_TYPE + 1]; /* last slot: types beyond MAX_BLOCK_TYPE */
	uint64_t unknown_blocks, bad_blocks;
	uint64_t samples, first_ns, last_ns, user_frames, kernel_frames;
	/* dwarf mode: samples, stack bytes, copies cut short, copies whose stack end was not known */
	uint64_t unwind_samples, stack_bytes, cut_stacks, unknown_end_stacks, holed_stacks;
	uint64_t cut_off_cpu_stacks; /* of cut_stacks, off-CPU copies cut at the most they keep */
	uint64_t uprobe_steps;	     /* samples with SREC_SAMPLE_UPROBE_STEP */
	uint64_t off_cpu_samples, off_cpu_ns;
	struct process_info *procs;
	size_t proc_count, proc_cap;
	struct id_index proc_index, tids; /* procs by pid; the threads seen (positions unused) */
	char (*build_ids)[2 * SREC_BUILD_ID_MAX + 1];
	size_t build_id_count, build_id_cap;
	uint64_t mappings, mappings_with_id, mappings_id_from_file;
	struct error_info *errors;
	size_t error_count, error_cap;
	uint64_t kallsyms_lines;
	struct srec_stats stats;
	bool have_stats;
	struct srec_end end;
};

/* The slot that holds id, or the empty one where it would go (x has room). */
static struct id_slot *id_slot(const struct id_index *x, uint32_t id)
{
	size_t i = address_hash(id) & (x->cap - 1);

	while (x->slots[i].position_plus_1 && x->slots[i].id != id)
		i = (i + 1) & (x->cap - 1);
	return &x->slots[i];
}

/* id's position, or SIZE_MAX when it has none. */
static size_t id_position(const struct id_index *x, uint32_t id)
{
	const struct id_slot *slot = x->cap ? id_slot(x, id) : NULL;

	return slot && slot->position_plus_1 ? slot->position_plus_1 - 1 : SIZE_MAX;
}

/* Gives id, which has none yet, the position. */
static void id_put(struct id_index *x, uint32_t id, size_t position)
{
	if ((x->count + 1) * 2 > x->cap) {
		struct id_index grown = { .cap = x->cap ? x->cap * 2 : 256, .count = x->count };

		grown.slots = xcalloc(grown.cap, sizeof(*grown.slots));
		for (size_t i = 0; i < x->cap; i++)
			if (x->slots[i].position_plus_1)
				*id_slot(&grown, x->slots[i].id) = x->slots[i];
		free(x->slots);
		*x = grown;
	}
	/* Positions count entries in memory: an array of 2^32 of them is out of reach. */
	*id_slot(x, id) = (struct id_slot){ .id = id, .position_plus_1 = (uint32_t)(position + 1) };
	x->count++;
}

static struct process_info *find_process(struct info *in, uint32_t pid)
{
	size_t i = id_position(&in->proc_index, pid);

	return i == SIZE_MAX ? NULL : &in->procs[i];
}

static struct process_info *process(struct info *in, uint32_t pid)
{
	struct process_info *known = find_process(in, pid);

	if (known)
		return known;
	GROW(in->procs, in->proc_cap, in->proc_count + 1);
	memset(&in->procs[in->proc_count], 0, sizeof(in->procs[0]));
	in->procs[in->proc_count].pid = pid;
	id_put(&in->proc_index, pid, in->proc_count);
	return &in->procs[in->proc_count++];
}

static void add_tid(struct info *in, uint32_t tid)
{
	if (id_position(&in->tids, tid) == SIZE_MAX)
		id_put(&in->tids, tid, in->tids.count);
}

static void add_error(struct info *in, int32_t err, bool kernel)
{
	for (size_t i = 0; i < in->error_count; i++)
		if (in->errors[i].error == err && in->errors[i].kernel == kernel) {
			in->errors[i].count++;
			return;
		}
	GROW(in->errors, in->error_cap, in->error_count + 1);
	in->errors[in->error_count++] = (struct error_info){ err, kernel, 1 };
}

static void add_build_id(struct info *in, const char *id)
{
	for (size_t i = 0; i < in->build_id_count; i++)
		if (!strcmp(in->build_ids[i], id))
			return;
	GROW(in->build_ids, in->build_id_cap, in->build_id_count + 1);
	strcpy(in->build_ids[in->build_id_count++], id);
}

static void add_probe(struct info *in, const struct recording_probe *probe)
{
	struct probe_info *p;
	char *args = xstrdup(""), *more;

	for (uint32_t a = 0; a < probe->header.arg_count; a++) {
		more = xasprintf("%s%s%.*s:%s", args, a ? ", " : "", (int)probe->args[a].name_len, probe->args[a].name,
				 recording_arg_type_name(probe->args[a].type));
		free(args);
		args = more;
	}
	GROW(in->probes, in->probe_cap, in->probe_count + 1);
	p = &in->probes[in->probe_count++];
	p->probe_id = probe->header.probe_id;
	p->hits = 0;
	p->text = xasprintf("%s:%s(%s)", probe->binary, probe->function, args);
	free(args);
}

static void add_hit(struct info *in, const void *body, uint32_t size)
{
	struct srec_probe_hit hit;
	const uint64_t *values;
	const uint8_t *strings;

	if (recording_parse_probe_hit(body, size, &hit, &values, &strings) < 0) {
		in->bad_blocks++;
		return;
	}
	in->probe_hits++;
	for (size_t i = 0; i < in->probe_count; i++)
		if (in->probes[i].probe_id == hit.probe_id) {
			in->probes[i].hits++;
			return;
		}
	in->orphan_hits++;
}

static void add_event(struct info *in, const struct srec_sample_event *e, const char *name)
{
	struct event_info *ev;

	in->event_samples++;
	for (size_t i = 0; i < in->event_count; i++) {
		ev = &in->events[i];
		if (ev->type == e->type && ev->signo == e->signo && !strcmp(ev->name, name)) {
			ev->count++;
			return;
		}
	}
	if (in->event_count >= 64) /* a hostile file may name any number of types: the first 64 are listed */
		return;
	GROW(in->events, in->event_cap, in->event_count + 1);
	ev = &in->events[in->event_count++];
	memset(ev, 0, sizeof(*ev));
	ev->type = e->type;
	ev->signo = e->signo;
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	ev->count = 1;
}

static void on_host(void *ctx, const char *key, const char *value)
{
	char *k = terminal_text(key), *v = terminal_text(value);

	(void)ctx;
	printf("  %-20s %s\n", k, v);
	free(k);
	free(v);
}

static int on_block(void *ctx, uint32_t type, const void *body, uint32_t size)
{
	struct info *in = ctx;

	if (recording_block_name(type))
		in->blocks[type < MAX_BLOCK_TYPE ? type : MAX_BLOCK_TYPE]++;
	else
		in->unknown_blocks++;
	switch (type) {
	case SREC_BLOCK_HOST:
		printf("host and run:\n");
		recording_parse_host(body, size, on_host, NULL);
		break;
	case SREC_BLOCK_SAMPLE: {
		struct srec_sample s;
		const uint64_t *ips;
		struct process_info *p;

		if (recording_parse_sample(body, size, &s, &ips) < 0) {
			in->bad_blocks++;
			break;
		}
		if (!in->samples || s.time_ns < in->first_ns)
			in->first_ns = s.time_ns;
		if (s.time_ns > in->last_ns)
			in->last_ns = s.time_ns;
		in->samples++;
		in->user_frames += s.user_depth;
		in->kernel_frames += s.kernel_depth;
		p = process(in, s.pid);
		p->samples++;
		if (s.pid == s.tid || !p->comm[0])
			memcpy(p->comm, s.comm, sizeof(p->comm) - 1);
		add_tid(in, s.tid);
		if (s.flags & SREC_SAMPLE_USER_UNWIND)
			in->unwind_samples++;
		in->uprobe_steps += !!(s.flags & SREC_SAMPLE_UPROBE_STEP);
		if (s.kind == SREC_SAMPLE_OFF_CPU) {
			in->off_cpu_samples++;
			in->off_cpu_ns = add_saturating(in->off_cpu_ns, s.weight);
		}
		{
			struct srec_user_regs regs;
			const uint64_t *values;
			const uint8_t *stack;
			int got = recording_parse_user_regs(body, size, &s, &regs, &values, &stack);

			if (got < 0)
				in->bad_blocks++;
			if (got == 0 && s.flags & SREC_SAMPLE_USER_UNWIND) {
				in->stack_bytes += regs.stack_size;
				if (regs.flags & SREC_USER_STACK_CUT && !s.user_stack_error) {
					in->cut_stacks++;
					in->cut_off_cpu_stacks += s.kind == SREC_SAMPLE_OFF_CPU &&
								  regs.stack_size >= SREC_OFF_CPU_STACK_MAX;
				}
				if (regs.flags & SREC_USER_STACK_HOLES_MASK && !s.user_stack_error)
					in->holed_stacks++;
				if (regs.flags & SREC_USER_STACK_END_UNKNOWN && !s.user_stack_error)
					in->unknown_end_stacks++;
			}
		}
		{
			struct srec_sample_event event;
			const char *name;
			int got = recording_parse_sample_event(body, size, &s, &event, &name);

			if (got < 0)
				in->bad_blocks++;
			if (got == 0)
				add_event(in, &event, name);
		}
		if (s.user_stack_error)
			add_error(in, s.user_stack_error, false);
		if (s.kernel_stack_error)
			add_error(in, s.kernel_stack_error, true);
		break;
	}
	case SREC_BLOCK_MAPPING: {
		struct srec_mapping m;
		const char *path;
		char id[2 * SREC_BUILD_ID_MAX + 1] = "-";

		if (recording_parse_mapping(body, size, &m, &path) < 0) {
			in->bad_blocks++;
			break;
		}
		in->mappings++;
		process(in, m.pid)->mappings++;
		if (m.build_id_size) {
			hex_encode(id, m.build_id, m.build_id_size);
			add_build_id(in, id);
			in->mappings_with_id++;
			in->mappings_id_from_file += !!(m.flags & SREC_MAPPING_BUILD_ID_FROM_FILE);
		}
		if (in->list_mappings) {
			char *shown = terminal_text(path);

			printf("mapping pid %" PRIu32 " %" PRIx64 "-%" PRIx64 " offset %" PRIx64 " dev %x:%x inode %" PRIu64
			       " build-id %s %s%s\n",
			       m.pid, m.start, m.end, m.file_offset, m.dev_major, m.dev_minor, m.inode, id, shown,
			       m.flags & SREC_MAPPING_FROM_PROC ? " (from /proc)" : "");
			free(shown);
		}
		break;
	}
	case SREC_BLOCK_FILE: {
		struct srec_file f;
		const char *path;
		const void *data;
		char id[2 * SREC_BUILD_ID_MAX + 1] = "-";

		if (recording_parse_file(body, size, &f, &path, &data) < 0) {
			in->bad_blocks++;
			break;
		}
		if (f.kind == SREC_FILE_VDSO) {
			in->vdso_files++;
		} else if (f.kind == SREC_FILE_PERF_MAP) {
			in->perf_map_files++;
			in->perf_map_bytes += f.data_size;
		} else {
			in->other_files++;
		}
		if (f.build_id_size)
			hex_encode(id, f.build_id, f.build_id_size);
		if (in->list_files) {
			char *shown = terminal_text(path);

			printf("file %s pid %" PRIu32 " offset %" PRIu64 " size %" PRIu64 " build-id %s %s\n",
			       f.kind == SREC_FILE_VDSO	      ? "vdso"
			       : f.kind == SREC_FILE_PERF_MAP ? "perf-map"
							      : "other",
			       f.pid, f.data_offset, f.data_size, id, shown);
			free(shown);
		}
		break;
	}
	case SREC_BLOCK_TASK: {
		struct srec_task t;

		if (recording_parse_task(body, size, &t) < 0) {
			in->bad_blocks++;
			break;
		}
		if (t.pid == t.tid && t.comm[0])
			memcpy(process(in, t.pid)->comm, t.comm, SREC_COMM_LEN);
		if (t.event == SREC_TASK_FORK && t.parent_pid && t.parent_pid != t.pid) {
			const struct process_info *parent = find_process(in, t.parent_pid);
			char comm[SREC_COMM_LEN] = "";
			struct process_info *child;

			if (parent) /* a copy: process() may move the array */
				memcpy(comm, parent->comm, SREC_COMM_LEN);
			child = process(in, t.pid);
			child->parent_pid = t.parent_pid;
			/* fork copies the name; a child that never execs gets no record of its own with it */
			if (!child->comm[0])
				memcpy(child->comm, comm, SREC_COMM_LEN);
		}
		break;
	}
	case SREC_BLOCK_KALLSYMS:
		for (uint32_t i = 0; i < size; i++)
			in->kallsyms_lines += ((const char *)body)[i] == '\n';
		break;
	case SREC_BLOCK_STATS:
		recording_parse_stats(body, size, &in->stats);
		in->have_stats = true;
		break;
	case SREC_BLOCK_END:
		recording_parse_end(body, size, &in->end);
		break;
	case SREC_BLOCK_PROBE: {
		struct recording_probe probe;

		if (recording_parse_probe(body, size, &probe) < 0 || in->probe_count >= 1024) {
			in->bad_blocks++;
			break;
		}
		add_probe(in, &probe);
		break;
	}
	case SREC_BLOCK_PROBE_HIT:
		add_hit(in, body, size);
		break;
	case SREC_BLOCK_PROCESS_METRICS: {
		struct srec_process_metrics m;

		if (recording_parse_process_metrics(body, size, &m) < 0) {
			in->bad_blocks++;
			break;
		}
		if (m.reason == SREC_METRICS_EVENT)
			in->metrics_event++;
		else
			in->metrics_interval++;
		break;
	}
	default:
		break;
	}
	return 0;
}

static int compare_process(const void *a, const void *b)
{
	const struct process_info *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* A kind of stack copy, when there are any: its count, its share of the dwarf samples and what it means. */
static void print_copies(const char *label, uint64_t count, uint64_t samples, const char *meaning)
{
	if (count)
		printf("  %-20s %" PRIu64 " (%.1f%%): %s\n", label, count, 100.0 * (double)count / (double)samples,
		       meaning);
}

static void print_info(struct info *in, const struct recording_reader *r)
{
	printf("blocks:\n");
	for (uint32_t t = 1; t < MAX_BLOCK_TYPE; t++)
		if (in->blocks[t])
			printf("  %-20s %" PRIu64 "\n", recording_block_name(t), in->blocks[t]);
	if (in->unknown_blocks)
		printf("  %-20s %" PRIu64 " (skipped)\n", "unknown types", in->unknown_blocks);
	if (in->bad_blocks)
		printf("  %-20s %" PRIu64 " (skipped)\n", "malformed", in->bad_blocks);
	printf("samples:\n");
	/* Events are stacks too (SAMPLE blocks of kind EVENT), but no samples: record's summary and convert count
	 * them apart, and so does "events:" below. */
	printf("  %-20s %" PRIu64 "%s\n", "samples", in->samples - in->event_samples,
	       in->event_samples ? " (and the events' stacks, under events:)" : "");
	if (in->off_cpu_samples)
		printf("  %-20s %" PRIu64 " on-CPU, %" PRIu64 " off-CPU (%.3f s off the CPU)\n", "kinds",
		       in->samples - in->event_samples - in->off_cpu_samples, in->off_cpu_samples,
		       (double)in->off_cpu_ns / 1e9);
	printf("  %-20s %.3f s\n", "time span", in->samples ? (double)(in->last_ns - in->first_ns) / 1e9 : 0.0);
	/* As record's summary counts them: processes with samples. Others only had mappings or tasks recorded. */
	size_t sampled = 0;
	for (size_t i = 0; i < in->proc_count; i++)
		sampled += in->procs[i].samples > 0;
	printf("  %-20s %zu (%zu more with mappings or tasks only)\n", "processes", sampled, in->proc_count - sampled);
	printf("  %-20s %zu\n", "threads", in->tids.count);
	printf("  %-20s %.1f user, %.1f kernel%s\n", "mean stack depth",
	       in->samples ? (double)in->user_frames / (double)in->samples : 0.0,
	       in->samples ? (double)in->kernel_frames / (double)in->samples : 0.0,
	       in->unwind_samples ? " (user stacks are unwound by convert)" : "");
	if (in->uprobe_steps)
		printf("  %-20s %" PRIu64 " samples: their pc, in a uprobe's copy of the probed instruction, is given "
		       "as the probed instruction's\n", "in a uprobe's step", in->uprobe_steps);
	if (in->unwind_samples) {
		/* A cut copy is where convert's [truncated] frames come from: say how often, and what helps. */
		printf("  %-20s %" PRIu64 " samples, %.0f bytes of stack each on average\n", "dwarf stacks",
		       in->unwind_samples, (double)in->stack_bytes / (double)in->unwind_samples);
		/* A cut copy truncates a stack only if its frames go on past it (a thread's copy may end in its
		 * TLS, above its last frame): convert --explain counts the stacks that were truncated. */
		printf("  %-20s %" PRIu64 " (%.1f%%)%s", "cut stack copies", in->cut_stacks,
		       100.0 * (double)in->cut_stacks / (double)in->unwind_samples,
		       in->cut_stacks > in->cut_off_cpu_stacks
			       ? ": the stack's mapping went on past the copy; stacks whose frames did are truncated "
				 "by convert (convert --explain counts them): for those, record with a larger "
				 "--call-graph dwarf,SIZE"
			       : "");
		/* A larger SIZE does not help those (bpf/profile.bpf.c). */
		if (in->cut_off_cpu_stacks)
			printf("%s%" PRIu64 " off-CPU copies at the most one keeps, %u bytes, whatever SIZE asks",
			       in->cut_stacks > in->cut_off_cpu_stacks ? "; " : ": ", in->cut_off_cpu_stacks,
			       SREC_OFF_CPU_STACK_MAX);
		putchar('\n');
		print_copies("unknown-end copies", in->unknown_end_stacks, in->unwind_samples,
			     "the stack's end could not be looked up (another thread was changing the mappings): copied "
			     "up to SIZE, maybe whole; convert ends as truncated any stack that needed more");
		print_copies("copies with holes", in->holed_stacks, in->unwind_samples,
			     "a page of the stack was not in memory (never touched, as in a large local array, or "
			     "swapped out): copied past it as zeros; convert stops a stack only where it needs that page");
	}
	for (size_t i = 0; i < in->error_count; i++)
		printf("  %-20s %" PRIu64 " %s -%s\n", i ? "" : "failed stacks", in->errors[i].count,
		       in->errors[i].kernel ? "kernel" : "user", errno_name(in->errors[i].error) ?: "?");
	printf("mappings:\n");
	printf("  %-20s %" PRIu64 " (%" PRIu64 " with a build ID, %" PRIu64 " of those read from the file)\n",
	       "mappings", in->mappings, in->mappings_with_id, in->mappings_id_from_file);
	printf("  %-20s %zu\n", "distinct build IDs", in->build_id_count);
	printf("  %-20s %" PRIu64 "\n", "kernel symbols", in->kallsyms_lines);
	printf("files:\n");
	printf("  %-20s %" PRIu64 "\n", "vdso images", in->vdso_files);
	printf("  %-20s %" PRIu64 " blocks, %" PRIu64 " bytes\n", "perf maps", in->perf_map_files, in->perf_map_bytes);
	if (in->other_files)
		printf("  %-20s %" PRIu64 "\n", "other files", in->other_files);
	if (in->probe_count || in->probe_hits) {
		printf("probes:\n");
		for (size_t i = 0; i < in->probe_count; i++) {
			char *text = terminal_text(in->probes[i].text);

			printf("  %-20s %s: %" PRIu64 " hit%s\n", i ? "" : "probes", text, in->probes[i].hits,
			       in->probes[i].hits == 1 ? "" : "s");
			free(text);
		}
		printf("  %-20s %" PRIu64 "%s\n", "probe hits", in->probe_hits,
		       in->orphan_hits ? " (some name no probe of the file)" : "");
		if (in->orphan_hits)
			printf("  %-20s %" PRIu64 "\n", "hits of no probe", in->orphan_hits);
		if (in->have_stats)
			printf("  %-20s %" PRIu64 "%s\n", "lost probe hits", in->stats.lost_probe_hits,
			       in->stats.lost_probe_hits ? ": convert shows no probe values (a call's values cannot be known)"
							 : "");
	}
	if (in->event_samples || (in->have_stats && in->stats.lost_event_samples)) {
		printf("events:\n");
		printf("  %-20s %" PRIu64 "\n", "events", in->event_samples);
		for (size_t i = 0; i < in->event_count; i++) {
			const struct event_info *ev = &in->events[i];
			const char *abbrev = ev->type == SREC_EVENT_SIGNAL ? sigabbrev_np(ev->signo) : NULL;

			if (ev->type == SREC_EVENT_SIGNAL)
				printf("  %-20s %" PRIu64 " SIG%s (signal %" PRId32 ")\n", "", ev->count, abbrev ? abbrev : "?",
				       ev->signo);
			else if (ev->type == SREC_EVENT_EXCEPTION) {
				char *name = terminal_text(ev->name[0] ? ev->name : "?");

				printf("  %-20s %" PRIu64 " exception %s\n", "", ev->count, name);
				free(name);
			}
			else
				printf("  %-20s %" PRIu64 " of unknown type %" PRIu32 "\n", "", ev->count, ev->type);
		}
		if (in->have_stats)
			printf("  %-20s %" PRIu64 "\n", "lost events", in->stats.lost_event_samples);
	}
	if (in->metrics_interval || in->metrics_event)
		printf("metrics:\n  %-20s %" PRIu64 " at intervals, %" PRIu64 " at events\n", "process metrics",
		       in->metrics_interval, in->metrics_event);
	if (in->have_stats) {
		printf("recorder:\n");
		printf("  %-20s %" PRIu64 "\n", "samples written", in->stats.samples);
		printf("  %-20s %" PRIu64 "\n", "lost samples", in->stats.lost_samples);
		printf("  %-20s %" PRIu64 "\n", "lost side-band", in->stats.lost_events);
		if (r->header.version_minor >= 2) {
			printf("  %-20s %" PRIu64 "\n", "probe hits written", in->stats.probe_hits);
			printf("  %-20s %" PRIu64 "\n", "lost probe hits", in->stats.lost_probe_hits);
			printf("  %-20s %" PRIu64 "\n", "events written", in->stats.events);
			printf("  %-20s %" PRIu64 "\n", "lost events", in->stats.lost_event_samples);
		}
		printf("  %-20s %.3f s\n", "duration", (double)in->stats.duration_ns / 1e9);
	}
	printf("processes (by samples):\n");
	sort_array(in->procs, in->proc_count, sizeof(*in->procs), compare_process);
	for (size_t i = 0; i < in->proc_count; i++) {
		char *comm = terminal_text(in->procs[i].comm[0] ? in->procs[i].comm : "?");

		printf("  %-8" PRIu32 " %-16s %8" PRIu64 " samples %4" PRIu64 " mappings", in->procs[i].pid, comm,
		       in->procs[i].samples, in->procs[i].mappings);
		free(comm);
		/* A child forked without exec has no mappings of its own: convert uses its parent's. */
		if (in->procs[i].parent_pid)
			printf(", forked from %" PRIu32, in->procs[i].parent_pid);
		printf("\n");
	}
	printf("file:\n");
	printf("  %-20s %u.%u\n", "format version", r->header.version_major, r->header.version_minor);
	printf("  %-20s %zu bytes in %" PRIu64 " frames\n", "size", r->size, r->damage.frames);
	printf("  %-20s %s\n", "frame numbers", r->damage.numbered_frames ? "yes" : "no (written before format 1.2)");
	printf("  %-20s %s\n", "complete", r->damage.has_end && !r->damage.truncated ? "yes (end marker)" : "no");
}

int cmd_info(int argc, char **argv)
{
	static const struct option options[] = {
		{ "mappings", no_argument, NULL, 'm' },
		{ "files", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct recording_reader reader;
	struct info in = { 0 };
	int c, ret = 0;

	while ((c = getopt_long(argc, argv, "mfvh", options, NULL)) != -1) {
		switch (c) {
		case 'm':
			in.list_mappings = true;
			break;
		case 'f':
			in.list_files = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			printf("usage: stackrec info [--mappings] [--files] [-v] FILE\n\nShows what a recording contains; "
			       "--mappings lists every recorded mapping,\n--files every embedded file (vDSO image, JIT perf "
			       "map). Damage is summarized in one\nwarning per kind; -v gives one per damaged frame.\n"
			       "Exits 3 when the file is damaged or cut short, 1 when it cannot be read.\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind + 1 != argc) {
		error("usage: stackrec info [--mappings] [--files] [-v] FILE");
		return 2;
	}
	if (recording_reader_open(&reader, argv[optind]) < 0)
		return 1;
	recording_reader_for_each(&reader, on_block, &in,
				  verbose ? RECORDING_WARN_EACH : RECORDING_WARN_SUMMARY);
	print_info(&in, &reader);
	fflush(stdout);
	if (recording_reader_report_damage(&reader)) {
		ret = EXIT_PARTIAL;
	} else if (in.bad_blocks) {
		error("'%s' is damaged: %" PRIu64 " blocks could not be parsed and were skipped", argv[optind],
		      in.bad_blocks);
		ret = EXIT_PARTIAL;
	}
	recording_reader_close(&reader);
	free(in.procs);
	free(in.proc_index.slots);
	free(in.tids.slots);
	free(in.build_ids);
	free(in.errors);
	for (size_t i = 0; i < in.probe_count; i++)
		free(in.probes[i].text);
	free(in.probes);
	free(in.events);
	return ret;
}
