/*
 * pprof.c — `-f pprof`: the profile as Google's profile.proto (formats/profile.proto), gzip-compressed,
 * as `pprof`, Go tooling, Pyroscope, Parca and Perfetto read it.
 *
 * The mapping from our profile (convert/profile.h) to profile.proto:
 *   - Sample types: always the three [samples/count, cpu/nanoseconds, off_cpu/nanoseconds], so that a
 *     reader finds a value at the same index in every file. The default is cpu when the profile has on-CPU
 *     samples, else off_cpu (--kind on or off chooses). The period type is cpu/nanoseconds with a period
 *     of 1e9 / frequency when the recording sampled at a frequency, else the default type without one.
 *   - Samples: one per distinct stack of one kind and thread: values [count, ns, 0] on-CPU, [count, 0, ns]
 *     off-CPU, and a label kind ("on_cpu", "off_cpu"), so that the stacks of the two kinds stay two samples
 *     even in pprof, which merges samples with the same locations and labels (-tagfocus=kind=off_cpu).
 *   - Mappings: one per module and load bias (address - file offset), so that every location's address
 *     lies in its mapping and address - memory_start + file_offset is its true file offset even when a
 *     library is mapped in several segments or by several processes. The main binary comes first (the
 *     non-library module in the stacks of most samples), the kernel is "[kernel.kallsyms]".
 *   - Locations: one per profile location, id = index + 1, with one Line per frame of its inline chain,
 *     innermost first as both we and pprof order them. An unnamed location has no Line: pprof shows its
 *     address, and can symbolize it later from the mapping's build ID and file offset.
 *   - Functions: deduplicated by (name, system_name, filename, start_line).
 *   - Labels: pid and tid (numbers), comm (the process: its main thread's name), thread_name and kind
 *     (strings); then the probe context of the stack's frames (convert/enrich.h), leaf first, one label
 *     "FUNCTION.ARG" per argument: a number (s64, u64 as its bits) or a string (a pointer in hex, a
 *     captured string).
 *   - Events (fatal signals, exceptions) are no samples and have no values to give: left out (-f report
 *     and -f trace show them).
 *   - Comments: the record command line, host, kernel, event, and any lost samples.
 *
 * Deterministic: tables are filled in profile order (already deterministic), protobuf-c packs fields in
 * number order, and the gzip header carries no time stamp or name (deflate's own gzip wrapper).
 */
#include "output.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "frame_names.h"
#include "../util.h"

#define VALUES 3 /* samples/count, cpu/nanoseconds, off_cpu/nanoseconds */
#define LABELS 5 /* pid, tid, comm, thread_name, kind */

/* The string table: index 0 is "", every other string once, in first-use order. */
struct string_table {
	char **strings;
	size_t count, capacity;
	uint32_t *slots; /* open addressing: string index + 1, 0 = empty */
	size_t slot_count;
};

static uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull; /* FNV-1a */
	}
	return h;
}

#define HASH_SEED 0xcbf29ce484222325ull

static void string_table_rehash(struct string_table *t)
{
	size_t n = t->slot_count ? t->slot_count * 2 : 1024;

	free(t->slots);
	t->slots = xcalloc(n, sizeof(*t->slots));
	t->slot_count = n;
	for (size_t i = 0; i < t->count; i++) {
		const char *s = t->strings[i];
		size_t slot = hash_bytes(HASH_SEED, s, strlen(s)) & (n - 1);

		while (t->slots[slot])
			slot = (slot + 1) & (n - 1);
		t->slots[slot] = i + 1;
	}
}

static int64_t intern_valid(struct string_table *t, const char *s)
{
	size_t slot;

	if (!s || !*s)
		return 0;
	if ((t->count + 1) * 2 > t->slot_count)
		string_table_rehash(t);
	slot = hash_bytes(HASH_SEED, s, strlen(s)) & (t->slot_count - 1);
	while (t->slots[slot]) {
		uint32_t index = t->slots[slot] - 1;

		if (!strcmp(t->strings[index], s))
			return index;
		slot = (slot + 1) & (t->slot_count - 1);
	}
	GROW(t->strings, t->capacity, t->count + 1);
	t->strings[t->count] = xstrdup(s);
	t->slots[slot] = t->count + 1;
	return t->count++;
}

/*
 * The index of s in t, added if new. profile.proto is proto3, whose string fields must be valid UTF-8: strict
 * readers (Python's protobuf) refuse the whole file otherwise, so bytes that begin no sequence become U+FFFD,
 * as in the JSON formats.
 */
static int64_t intern(struct string_table *t, const char *s)
{
	char *valid = s ? utf8_replace_invalid(s, "\xef\xbf\xbd") : NULL;
	int64_t index;

	if (!valid)
		return intern_valid(t, s);
	index = intern_valid(t, valid);
	free(valid);
	return index;
}

static void string_table_init(struct string_table *t)
{
	memset(t, 0, sizeof(*t));
	GROW(t->strings, t->capacity, 1);
	t->strings[0] = xstrdup("");
	t->count = 1;
	string_table_rehash(t);
	/* "" is index 0 by construction; intern() never looks it up. */
}

static void string_table_release(struct string_table *t)
{
	for (size_t i = 0; i < t->count; i++)
		free(t->strings[i]);
	free(t->strings);
	free(t->slots);
}

/* Functions, deduplicated by their four string-table/line fields. */
struct function_table {
	Perftools__Profiles__Function *functions;
	size_t count, capacity;
	uint32_t *slots; /* function index + 1 */
	size_t slot_count;
};

static uint64_t function_hash(const Perftools__Profiles__Function *f)
{
	int64_t key[4] = { f->name, f->system_name, f->filename, f->start_line };

	return hash_bytes(HASH_SEED, key, sizeof(key));
}

static bool function_equal(const Perftools__Profiles__Function *a, const Perftools__Profiles__Function *b)
{
	return a->name == b->name && a->system_name == b->system_name && a->filename == b->filename &&
	       a->start_line == b->start_line;
}

static void function_table_rehash(struct function_table *t)
{
	size_t n = t->slot_count ? t->slot_count * 2 : 1024;

	free(t->slots);
	t->slots = xcalloc(n, sizeof(*t->slots));
	t->slot_count = n;
	for (size_t i = 0; i < t->count; i++) {
		size_t slot = function_hash(&t->functions[i]) & (n - 1);

		while (t->slots[slot])
			slot = (slot + 1) & (n - 1);
		t->slots[slot] = i + 1;
	}
}

/* The id (index + 1) of the function with f's fields, added if new. */
static uint64_t function_id(struct function_table *t, const Perftools__Profiles__Function *f)
{
	size_t slot;

	if ((t->count + 1) * 2 > t->slot_count)
		function_table_rehash(t);
	slot = function_hash(f) & (t->slot_count - 1);
	while (t->slots[slot]) {
		uint32_t index = t->slots[slot] - 1;

		if (function_equal(&t->functions[index], f))
			return index + 1;
		slot = (slot + 1) & (t->slot_count - 1);
	}
	GROW(t->functions, t->capacity, t->count + 1);
	t->functions[t->count] = *f;
	t->functions[t->count].id = t->count + 1;
	t->slots[slot] = t->count + 1;
	return ++t->count;
}

/* One pprof Mapping: the locations of one module at one load bias. */
struct mapping_group {
	uint32_t module;
	uint64_t bias; /* address - file_offset, modulo 2^64 */
	uint64_t low, high;
	uint64_t id; /* pprof mapping id, once ordered */
};

struct location_key {
	uint32_t module;
	uint64_t bias;
	uint32_t location;
};

static int compare_location_keys(const void *a, const void *b)
{
	const struct location_key *x = a, *y = b;

	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	if (x->bias != y->bias)
		return x->bias < y->bias ? -1 : 1;
	return x->location < y->location ? -1 : x->location > y->location;
}

/* pprof's own test for a shared library (its libRx: "[.]so$|[.]so[._][0-9]+"). */
static bool is_shared_library(const char *path)
{
	for (const char *p = path ? strstr(path, ".so") : NULL; p; p = strstr(p + 1, ".so"))
		if (!p[3] || ((p[3] == '.' || p[3] == '_') && p[4] >= '0' && p[4] <= '9'))
			return true;
	return false;
}

/*
 * The main binary: of the user modules that are neither shared libraries nor "[pseudo]" files, the one in
 * the stacks of most samples (ties: the lowest index); failing that, any user module by the same rule.
 */
static uint32_t main_module(const struct profile *profile)
{
	uint64_t *samples = xcalloc(profile->module_count + 1, sizeof(*samples));
	uint32_t *seen = xcalloc(profile->module_count + 1, sizeof(*seen)); /* stack index + 1 */
	uint32_t best = PROFILE_NO_MODULE;

	for (size_t i = 0; i < profile->stack_count; i++) {
		const struct profile_stack *s = &profile->stacks[i];

		for (uint32_t d = 0; d < s->depth; d++) {
			uint32_t m = profile->locations[s->locations[d]].module;

			if (m < profile->module_count && seen[m] != i + 1) {
				seen[m] = i + 1;
				samples[m] += s->count;
			}
		}
	}
	for (int pass = 0; pass < 2 && best == PROFILE_NO_MODULE; pass++)
		for (uint32_t m = 0; m < profile->module_count; m++) {
			const struct profile_module *mod = &profile->modules[m];

			if (mod->is_kernel || !samples[m] || (best != PROFILE_NO_MODULE && samples[m] <= samples[best]))
				continue;
			if (pass == 0 && (!mod->path || mod->path[0] == '[' || is_shared_library(mod->path)))
				continue;
			best = m;
		}
	free(seen);
	free(samples);
	return best;
}

/*
 * Groups the profile's locations into mappings. Fills groups (ordered: main module first, then by module
 * index and bias, ids 1..n) and location_group[i] (index into groups, or SIZE_MAX without a module).
 */
static size_t build_mapping_groups(const struct profile *profile, struct mapping_group **groups_out,
				   size_t *location_group)
{
	struct location_key *keys = xcalloc(profile->location_count + 1, sizeof(*keys));
	struct mapping_group *groups = xcalloc(profile->location_count + 1, sizeof(*groups));
	size_t key_count = 0, group_count = 0;
	uint32_t main = main_module(profile);
	uint64_t next_id = 1;

	for (size_t i = 0; i < profile->location_count; i++) {
		const struct profile_location *loc = &profile->locations[i];

		location_group[i] = SIZE_MAX;
		if (loc->module >= profile->module_count)
			continue;
		keys[key_count++] = (struct location_key){ loc->module, loc->address - loc->file_offset, i };
	}
	sort_array(keys, key_count, sizeof(*keys), compare_location_keys);
	for (size_t i = 0; i < key_count; i++) {
		uint64_t address = profile->locations[keys[i].location].address;
		struct mapping_group *g = group_count ? &groups[group_count - 1] : NULL;

		if (!g || g->module != keys[i].module || g->bias != keys[i].bias) {
			g = &groups[group_count++];
			*g = (struct mapping_group){ keys[i].module, keys[i].bias, address, address, 0 };
		}
		if (address < g->low)
			g->low = address;
		if (address > g->high)
			g->high = address;
		location_group[keys[i].location] = group_count - 1;
	}
	for (size_t i = 0; i < group_count; i++)
		if (groups[i].module == main)
			groups[i].id = next_id++;
	for (size_t i = 0; i < group_count; i++)
		if (groups[i].module != main)
			groups[i].id = next_id++;
	free(keys);
	*groups_out = groups;
	return group_count;
}

static void fill_mapping(const struct profile *profile, const struct mapping_group *g, struct string_table *strings,
			 Perftools__Profiles__Mapping *m)
{
	const struct profile_module *mod = &profile->modules[g->module];

	perftools__profiles__mapping__init(m);
	m->id = g->id;
	if (mod->start < mod->end && mod->start - mod->file_offset == g->bias && g->low >= mod->start &&
	    g->high < mod->end) {
		/* The recorded mapping holds every location: use it as recorded. */
		m->memory_start = mod->start;
		m->memory_limit = mod->end;
		m->file_offset = mod->file_offset;
	} else {
		/* Another segment (or process) of the module: the smallest range that holds its locations. */
		m->memory_start = g->low;
		m->memory_limit = g->high + 1;
		m->file_offset = g->low - g->bias;
	}
	m->filename = intern(strings, mod->is_kernel && !mod->path ? "[kernel.kallsyms]" : mod->path);
	m->build_id = intern(strings, mod->build_id);
	m->has_functions = mod->has_functions;
	m->has_filenames = mod->has_filenames;
	m->has_line_numbers = mod->has_line_numbers;
	m->has_inline_frames = mod->has_inline_frames;
}

static Perftools__Profiles__ValueType *value_type(struct string_table *strings, const char *type, const char *unit)
{
	Perftools__Profiles__ValueType *v = xmalloc(sizeof(*v));

	perftools__profiles__value_type__init(v);
	v->type = intern(strings, type);
	v->unit = intern(strings, unit);
	return v;
}

static void add_comment(Perftools__Profiles__Profile *p, struct string_table *strings, char *text)
{
	p->comment = xrealloc(p->comment, (p->n_comment + 1) * sizeof(*p->comment));
	p->comment[p->n_comment++] = intern(strings, text);
	free(text);
}

static void add_comments(const struct profile *profile, Perftools__Profiles__Profile *p,
			 struct string_table *strings)
{
	const struct profile_info *info = &profile->info;

	if (info->command_line)
		add_comment(p, strings, xasprintf("command: %s", info->command_line));
	if (info->hostname)
		add_comment(p, strings, xasprintf("host: %s", info->hostname));
	if (info->kernel_release)
		add_comment(p, strings, xasprintf("kernel: %s", info->kernel_release));
	if (info->event && info->frequency_hz)
		add_comment(p, strings, xasprintf("event: %s at %" PRIu64 " Hz", info->event, info->frequency_hz));
	else if (info->event)
		add_comment(p, strings, xasprintf("event: %s", info->event));
	if (profile->lost_samples)
		add_comment(p, strings, xasprintf("lost samples: %" PRIu64, profile->lost_samples));
	if (profile->user_stack_errors || profile->kernel_stack_errors)
		add_comment(p, strings,
			    xasprintf("samples with a failed stack read: user %" PRIu64 ", kernel %" PRIu64,
				      profile->user_stack_errors, profile->kernel_stack_errors));
}

/* The thread name of a stack as a C string (comm is at most 16 bytes, NUL-terminated when shorter). */
static Perftools__Profiles__Label *fill_label(Perftools__Profiles__Label *label, int64_t key)
{
	perftools__profiles__label__init(label);
	label->key = key;
	return label;
}

/*
 * The labels of one frame's context into l[]: "FUNCTION.ARG" with a number (s64, u64 as its bits; unit
 * "count") or a string ("0x..." for a pointer, the captured text for a string, "\"\"" for an empty one,
 * "(not read; pointer 0x...)" when it could not be read). Returns their count, the probe's arg_count.
 */
static size_t context_labels(const struct profile *profile, const struct profile_hit *hit,
			     struct string_table *strings, Perftools__Profiles__Label *l)
{
	const struct profile_probe *probe = &profile->probes[hit->probe];
	int64_t count_unit = intern(strings, "count");

	for (uint32_t a = 0; a < probe->arg_count; a++) {
		char *key = xasprintf("%s.%s", probe->function, probe->args[a].name), hex[24];
		Perftools__Profiles__Label *label = fill_label(&l[a], intern(strings, key));

		switch (probe->args[a].type) {
		case PROFILE_ARG_S64:
		case PROFILE_ARG_U64:
			/* pprof keeps a label only if one of its fields is not 0: the value 0 needs its unit. "count" is
			 * a unit pprof neither prints nor asks -tagfocus for (measurement.Scale) */
			label->num = (int64_t)hit->values[a];
			label->num_unit = count_unit;
			break;
		case PROFILE_ARG_PTR:
			snprintf(hex, sizeof(hex), "0x%" PRIx64, hit->values[a]);
			label->str = intern(strings, hex);
			break;
		case PROFILE_ARG_STR:
			if (hit->strings_cut & (1u << a)) {
				char *start = xasprintf("%s…", hit->strings[a]); /* a label is only text: "…" says it went on */

				label->str = intern(strings, start);
				free(start);
			} else if (!hit->strings[a]) {
				/* as -f report says it */
				char *unread = xasprintf("(not read; pointer 0x%" PRIx64 ")", hit->values[a]);

				label->str = intern(strings, unread);
				free(unread);
			} else {
				/* string 0 is "", which pprof takes for no string, and the label for none */
				label->str = intern(strings, hit->strings[a][0] ? hit->strings[a] : "\"\"");
			}
			break;
		}
		free(key);
	}
	return probe->arg_count;
}

/* Compresses data as a gzip member with a fixed header (no name, no time) and writes it to out. */
static int write_gzip(const uint8_t *data, size_t size, FILE *out)
{
	unsigned char buffer[65536];
	z_stream z;
	int ret;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return error("cannot initialize zlib");
	z.next_in = (Bytef *)data;
	z.avail_in = size; /* protobuf-c's packed size fits in uInt for any profile we can hold */
	do {
		z.next_out = buffer;
		z.avail_out = sizeof(buffer);
		ret = deflate(&z, Z_FINISH);
		if (ret == Z_STREAM_ERROR) {
			deflateEnd(&z);
			return error("cannot compress the pprof profile");
		}
		if (fwrite(buffer, 1, sizeof(buffer) - z.avail_out, out) != sizeof(buffer) - z.avail_out) {
			deflateEnd(&z);
			return error("cannot write the pprof profile");
		}
	} while (ret != Z_STREAM_END);
	deflateEnd(&z);
	return 0;
}

static int pprof_write(const struct profile *profile, const struct output_options *options, FILE *out)
{
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	struct string_table strings;
	struct function_table functions = { 0 };
	struct mapping_group *groups = NULL;
	size_t *location_group = xcalloc(profile->location_count + 1, sizeof(*location_group));
	size_t group_count, line_count = 0, id_count = 0;
	Perftools__Profiles__Mapping *mappings;
	Perftools__Profiles__Location *locations;
	Perftools__Profiles__Line *lines, **line_ptrs;
	Perftools__Profiles__Sample *samples;
	Perftools__Profiles__Label *labels, **label_ptrs;
	uint64_t *location_ids;
	int64_t *values;
	enum output_kind kind = output_kind_of(profile, options);
	bool default_off_cpu = kind == OUTPUT_KIND_OFF_CPU || (kind == OUTPUT_KIND_WALL && !profile->on_cpu_samples);
	const char *default_type = default_off_cpu ? "off_cpu" : "cpu";
	int64_t key_pid, key_tid, key_comm, key_thread, key_kind;
	size_t sample_count = 0, label_count = 0;
	uint8_t *packed;
	size_t packed_size;
	int ret;

	/* pprof shows kernel and inline frames its own way: of the options only --kind counts (the default). */
	string_table_init(&strings);

	/* Sample types, period and times. */
	p.n_sample_type = VALUES;
	p.sample_type = xmalloc(VALUES * sizeof(*p.sample_type));
	p.sample_type[0] = value_type(&strings, "samples", "count");
	p.sample_type[1] = value_type(&strings, "cpu", "nanoseconds");
	p.sample_type[2] = value_type(&strings, "off_cpu", "nanoseconds");
	p.default_sample_type = intern(&strings, default_type);
	if (profile->info.frequency_hz) {
		p.period_type = value_type(&strings, "cpu", "nanoseconds");
		p.period = 1000000000ull / profile->info.frequency_hz;
	} else {
		p.period_type = value_type(&strings, default_type, "nanoseconds");
	}
	p.time_nanos = profile->info.start_realtime_ns;
	p.duration_nanos = profile->info.duration_ns;

	/* Mappings. */
	group_count = build_mapping_groups(profile, &groups, location_group);
	mappings = xcalloc(group_count + 1, sizeof(*mappings));
	p.n_mapping = group_count;
	p.mapping = xcalloc(group_count + 1, sizeof(*p.mapping));
	for (size_t i = 0; i < group_count; i++) {
		fill_mapping(profile, &groups[i], &strings, &mappings[i]);
		p.mapping[groups[i].id - 1] = &mappings[i];
	}

	/* Locations, their lines and functions. */
	for (size_t i = 0; i < profile->location_count; i++)
		line_count += profile->locations[i].frame_count;
	locations = xcalloc(profile->location_count + 1, sizeof(*locations));
	lines = xcalloc(line_count + 1, sizeof(*lines));
	line_ptrs = xcalloc(line_count + 1, sizeof(*line_ptrs));
	p.n_location = profile->location_count;
	p.location = xcalloc(profile->location_count + 1, sizeof(*p.location));
	line_count = 0;
	for (size_t i = 0; i < profile->location_count; i++) {
		const struct profile_location *loc = &profile->locations[i];
		Perftools__Profiles__Location *l = &locations[i];

		perftools__profiles__location__init(l);
		l->id = i + 1;
		if (location_group[i] != SIZE_MAX)
			l->mapping_id = groups[location_group[i]].id;
		l->address = loc->address;
		l->line = &line_ptrs[line_count];
		for (uint32_t f = 0; f < loc->frame_count; f++) {
			const struct profile_frame *frame = &loc->frames[f];
			Perftools__Profiles__Function fn = PERFTOOLS__PROFILES__FUNCTION__INIT;
			Perftools__Profiles__Line *line = &lines[line_count];

			if (!frame->function)
				continue; /* unnamed: pprof shows the address */
			fn.name = intern(&strings, frame->function);
			fn.system_name = intern(&strings, frame->system_name);
			fn.filename = intern(&strings, frame->file);
			fn.start_line = frame->start_line;
			perftools__profiles__line__init(line);
			line->function_id = function_id(&functions, &fn);
			line->line = frame->line;
			line->column = frame->column;
			line_ptrs[line_count++] = line;
			l->n_line++;
		}
		p.location[i] = l;
	}
	p.n_function = functions.count;
	p.function = xcalloc(functions.count + 1, sizeof(*p.function));
	for (size_t i = 0; i < functions.count; i++)
		p.function[i] = &functions.functions[i];

	/* Samples: one per distinct stack, with its count and times and its thread as labels. */
	key_pid = intern(&strings, "pid");
	key_tid = intern(&strings, "tid");
	key_comm = intern(&strings, "comm");
	key_thread = intern(&strings, "thread_name");
	key_kind = intern(&strings, "kind");
	for (size_t i = 0; i < profile->stack_count; i++) {
		const struct profile_stack *s = &profile->stacks[i];
		uint32_t hit;

		if (s->kind == PROFILE_SAMPLE_EVENT)
			continue; /* no sample: events are in -f report and -f trace */
		id_count += s->depth;
		sample_count++;
		for (uint32_t d = 0; d < s->depth; d++)
			if (profile_stack_context(s, d, &hit))
				label_count += profile->probes[profile->hits[hit].probe].arg_count;
	}
	label_count += LABELS * sample_count;
	samples = xcalloc(sample_count + 1, sizeof(*samples));
	labels = xcalloc(label_count + 1, sizeof(*labels));
	label_ptrs = xcalloc(label_count + 1, sizeof(*label_ptrs));
	location_ids = xcalloc(id_count + 1, sizeof(*location_ids));
	values = xcalloc(VALUES * sample_count + 1, sizeof(*values));
	p.n_sample = sample_count;
	p.sample = xcalloc(sample_count + 1, sizeof(*p.sample));
	id_count = 0;
	label_count = 0;
	sample_count = 0;
	for (size_t i = 0; i < profile->stack_count; i++) {
		const struct profile_stack *s = &profile->stacks[i];
		Perftools__Profiles__Sample *sample = &samples[sample_count];
		Perftools__Profiles__Label *l = &labels[label_count];
		int64_t *v = &values[VALUES * sample_count];
		char thread[17], process[17];
		size_t n = LABELS;
		uint32_t hit;

		if (s->kind == PROFILE_SAMPLE_EVENT)
			continue;
		const char *thread_name = shown_comm(s->comm, thread);
		const char *process_name = shown_comm(process_comm(profile, i), process);

		perftools__profiles__sample__init(sample);
		sample->n_location_id = s->depth;
		sample->location_id = &location_ids[id_count];
		for (uint32_t d = 0; d < s->depth; d++)
			location_ids[id_count++] = (uint64_t)s->locations[d] + 1;
		sample->n_value = VALUES;
		sample->value = v;
		v[0] = s->count;
		/* int64 in the format: a saturated (hostile) time is INT64_MAX, not -1 */
		v[1] = s->on_cpu_ns > INT64_MAX ? INT64_MAX : (int64_t)s->on_cpu_ns;
		v[2] = s->off_cpu_ns > INT64_MAX ? INT64_MAX : (int64_t)s->off_cpu_ns;
		fill_label(&l[0], key_pid)->num = s->pid;
		fill_label(&l[1], key_tid)->num = s->tid;
		fill_label(&l[2], key_comm)->str = intern(&strings, process_name);
		fill_label(&l[3], key_thread)->str = intern(&strings, thread_name);
		fill_label(&l[4], key_kind)->str = intern(&strings, profile_sample_kind_name(s->kind));
		/* The context of probed frames, leaf first: "FUNCTION.ARG" = the value of the call active there. */
		for (uint32_t d = 0; d < s->depth; d++)
			if (profile_stack_context(s, d, &hit))
				n += context_labels(profile, &profile->hits[hit], &strings, &l[n]);
		for (size_t k = 0; k < n; k++)
			label_ptrs[label_count + k] = &l[k];
		sample->n_label = n;
		sample->label = &label_ptrs[label_count];
		label_count += n;
		p.sample[sample_count++] = sample;
	}

	add_comments(profile, &p, &strings);

	/* The string table last: every string is interned by now. */
	p.n_string_table = strings.count;
	p.string_table = strings.strings;

	packed_size = perftools__profiles__profile__get_packed_size(&p);
	packed = xmalloc(packed_size + 1);
	perftools__profiles__profile__pack(&p, packed);
	ret = write_gzip(packed, packed_size, out);

	free(packed);
	for (size_t i = 0; i < p.n_sample_type; i++)
		free(p.sample_type[i]);
	free(p.sample_type);
	free(p.period_type);
	free(p.comment);
	free(p.sample);
	free(values);
	free(location_ids);
	free(label_ptrs);
	free(labels);
	free(samples);
	free(p.function);
	free(functions.functions);
	free(functions.slots);
	free(p.location);
	free(line_ptrs);
	free(lines);
	free(locations);
	free(p.mapping);
	free(mappings);
	free(groups);
	free(location_group);
	string_table_release(&strings);
	return ret;
}

const struct output_format output_pprof = {
	.name = "pprof",
	.description = "gzip-compressed profile.proto for pprof (go tool pprof, Pyroscope, Parca)",
	.binary = true,
	.write = pprof_write,
};
