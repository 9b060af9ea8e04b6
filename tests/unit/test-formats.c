/*
 * test-formats.c — unit tests of the pprof, speedscope, d3 and trace output formats on a profile built by
 * hand, small enough to know every expected number: a user stack with an inline chain, kernel frames, an
 * unnamed frame, a C++ name and a non-ASCII file name, a library mapped at two load biases, two
 * processes of two threads each (one thread name needing JSON escapes), a stack seen both on- and off-CPU,
 * and a timeline of every sample (two of them overlapping by clock jitter).
 *
 * Usage: test-formats [DIR]. Prints TAP. With DIR, also writes every format there (the same bytes the
 * checks saw) for tests/t4000-formats.sh to hand to the real consumers (pprof, the speedscope schema)
 * and to compare with the golden files in tests/data/:
 *   pprof.pb.gz  speedscope.json  speedscope-wall.json  d3.json  d3-annotated.json  trace.jsonl
 *   expected-flat.txt (function and flat sample count of every named leaf)
 *   folded.txt  folded-off.txt  folded-wall.txt (--kind on, off, wall: for pprof's totals to match)
 *   empty.pb.gz  empty-speedscope.json  empty-d3.json  empty-trace.jsonl  (a profile without samples)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "formats/json_writer.h"
#include "util.h"
#include "formats/output.h"
#include "profile.pb-c.h"

static int test_number, failures;

static void ok(int passed, const char *title)
{
	printf("%sok %d - %s\n", passed ? "" : "not ", ++test_number, title);
	if (!passed)
		failures++;
}

#define NS_PER_SAMPLE 1000000 /* 1000 Hz */

static struct profile_module modules[] = {
	{ "/usr/bin/app", "0123456789abcdef0123456789abcdef01234567", 0x401000, 0x402000, 0x1000, false,
	  true, true, true, true },
	{ "/usr/lib/x86_64-linux-gnu/libc.so.6", "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00", 0x7f0000028000,
	  0x7f000017d000, 0x28000, false, true, false, false, false },
	{ "[kernel.kallsyms]", NULL, 0, 0, 0, true, true, false, false, false },
	{ "/opt/plugin/libplugin.so", "deadbeef", 0x7f1000000000, 0x7f1000010000, 0, false, false, false, false,
	  false },
};

static struct profile_frame frames_inline[] = {
	{ "leaf", "leaf", "app.c", 10, 5, 8, true },
	{ "hot_inline", "hot_inline", "app.c", 20, 3, 18, true },
	{ "mid", "mid", "app.c", 30, 7, 28, false },
};
static struct profile_frame frame_top = { "top", "top", "app.c", 40, 2, 38, false };
static struct profile_frame frame_main = { "main", "main", "app.c", 50, 9, 45, false };
static struct profile_frame frame_start = { "__libc_start_call_main", "__libc_start_call_main", NULL, 0, 0, 0,
					    false };
static struct profile_frame frame_clear_user = { "clear_user", "clear_user", NULL, 0, 0, 0, false };
static struct profile_frame frame_sys_read = { "__x64_sys_read", "__x64_sys_read", NULL, 0, 0, 0, false };
static struct profile_frame frame_unnamed = { NULL, NULL, NULL, 0, 0, 0, false };
static struct profile_frame frame_cxx = { "std::vector<int>::push_back(int const&)",
					  "_ZNSt6vectorIiSaIiEE9push_backERKi", "src/caf\xc3\xa9.cc", 77, 0, 70,
					  false };
static struct profile_frame frame_memcpy = { "memcpy", "__memcpy_avx_unaligned_erms", NULL, 0, 0, 0, false };

#define USER PROFILE_LOCATION_USER
#define KERNEL PROFILE_LOCATION_KERNEL
#define FP PROFILE_UNWIND_FRAME_POINTER

static struct profile_location locations[] = {
	{ USER, FP, 0, 0x401136, 0x1136, false, frames_inline, 3, NULL },
	{ USER, FP, 0, 0x401200, 0x1200, true, &frame_top, 1, NULL },
	{ USER, FP, 0, 0x401300, 0x1300, true, &frame_main, 1, NULL },
	{ USER, FP, 1, 0x7f0000029d90, 0x29d90, true, &frame_start, 1, NULL },
	{ KERNEL, FP, 2, 0xffffffff81234567, 0xffffffff81234567, false, &frame_clear_user, 1, NULL },
	{ KERNEL, FP, 2, 0xffffffff81000abc, 0xffffffff81000abc, true, &frame_sys_read, 1, NULL },
	{ USER, FP, 3, 0x7f1000001234, 0x1234, false, &frame_unnamed, 1, "no file with that build ID" },
	{ USER, FP, 0, 0x401400, 0x1400, true, &frame_cxx, 1, NULL },
	/* libc's second segment: another load bias, outside the recorded mapping */
	{ USER, FP, 1, 0x7f0000200010, 0x1ff010, false, &frame_memcpy, 1, NULL },
};

static uint32_t stack0[] = { 0, 1, 2, 3 };
static uint32_t stack1[] = { 4, 5, 1, 2, 3 };
static uint32_t stack2[] = { 6, 7, 3 };
static uint32_t stack3[] = { 8, 1, 2, 3 };

#define ON PROFILE_SAMPLE_ON_CPU
#define OFF PROFILE_SAMPLE_OFF_CPU
#define MS 1000000ull

/* Process 200 is the busiest (9 ms on-CPU against 8), and in it thread 201 (7 ms). */
static struct profile_stack stacks[] = {
	{ 100, 100, "app", ON, stack0, 4, 5, 5 * NS_PER_SAMPLE, 0, 0, 0 },
	{ 100, 100, "app", OFF, stack0, 4, 2, 0, 7 * MS, 0, 0 }, /* the same frames, waiting */
	{ 100, 101, "w\xc3\xb6rker \"1\"", ON, stack1, 5, 3, 3 * NS_PER_SAMPLE, 0, 0, 0 },
	{ 200, 200, "other", ON, stack2, 3, 2, 2 * NS_PER_SAMPLE, 0, 0, -14 },
	{ 200, 201, "other-2", ON, stack3, 4, 7, 7 * NS_PER_SAMPLE, 0, 0, 0 },
};

#define T0 5000000000ull /* the first sample, on the recording's clock */

/* In time order, as profile_finish() leaves it. */
static struct profile_sample timeline[] = {
	{ T0, MS, 0 },
	{ T0 + MS / 2, MS, 2 },
	{ T0 + 1 * MS, MS, 0 },
	{ T0 + 14 * MS / 10, MS, 2 }, /* starts before the previous one of its thread ends: clock jitter */
	{ T0 + 2 * MS, MS, 0 },
	{ T0 + 2 * MS, MS, 3 },
	{ T0 + 3 * MS, 4 * MS, 1 },	/* off the CPU from 3 to 7 ms */
	{ T0 + 3 * MS, MS, 3 },
	{ T0 + 4 * MS, MS, 4 },
	{ T0 + 5 * MS, MS, 2 },
	{ T0 + 5 * MS, MS, 4 },
	{ T0 + 6 * MS, MS, 4 },
	{ T0 + 7 * MS, MS, 0 },
	{ T0 + 7 * MS, MS, 4 },
	{ T0 + 8 * MS, MS, 0 },
	{ T0 + 8 * MS, MS, 4 },
	{ T0 + 9 * MS, 3 * MS, 1 },	/* off the CPU from 9 to 12 ms */
	{ T0 + 9 * MS, MS, 4 },
	{ T0 + 10 * MS, MS, 4 },
};

static const struct profile test_profile = {
	.info = {
		.command_line = "stackrec record -F 1000 -o app.rec -- ./app",
		.hostname = "testhost",
		.kernel_release = "6.1.0-test",
		.event = "cpu-clock",
		.frequency_hz = 1000,
		.start_realtime_ns = 1700000000123456789ull,
		.duration_ns = 2500000000ull,
	},
	.modules = modules,
	.module_count = 4,
	.locations = locations,
	.location_count = 9,
	.stacks = stacks,
	.stack_count = 5,
	.keep_timeline = true,
	.timeline = timeline,
	.timeline_count = 19,
	.total_samples = 19,
	.on_cpu_samples = 17,
	.off_cpu_samples = 2,
	.total_on_cpu_ns = 17 * NS_PER_SAMPLE,
	.total_off_cpu_ns = 7 * MS,
	.lost_samples = 0,
	.user_stack_errors = 0,
	.kernel_stack_errors = 2,
};

/* Writes `name` to memory; returns 0 and sets *data, *size (caller frees). */
static int write_format(const char *name, const struct output_options *options, char **data, size_t *size)
{
	const struct output_format *format = output_format_find(name);
	FILE *out;
	int ret;

	*data = NULL;
	*size = 0;
	if (!format)
		return -1;
	out = open_memstream(data, size);
	if (!out)
		return -1;
	ret = format->write(&test_profile, options, out);
	if (fclose(out))
		ret = -1;
	return ret;
}

static void save(const char *dir, const char *file, const char *data, size_t size)
{
	char path[4096];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f)) {
		printf("# cannot write %s\n", path);
		failures++;
	}
}

/* Writes a format twice: checks success, non-empty output, identical bytes; saves it. */
static char *check_format(const char *dir, const char *name, const struct output_options *options,
			  const char *file, size_t *size)
{
	char *a, *b, title[256];
	size_t a_size, b_size;
	int ret_a = write_format(name, options, &a, &a_size);
	int ret_b = write_format(name, options, &b, &b_size);

	snprintf(title, sizeof(title), "%s writes %s", name, file);
	ok(!ret_a && a_size > 0, title);
	snprintf(title, sizeof(title), "%s is deterministic (%s written twice is identical)", name, file);
	ok(!ret_b && a_size == b_size && !memcmp(a, b, a_size), title);
	free(b);
	save(dir, file, a, a_size);
	*size = a_size;
	return a;
}

static uint8_t *gunzip(const char *data, size_t size, size_t *out_size)
{
	z_stream z;
	size_t capacity = 1 << 16;
	uint8_t *out = malloc(capacity);
	int ret;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + 15) != Z_OK)
		return NULL;
	z.next_in = (Bytef *)data;
	z.avail_in = size;
	do {
		if (z.total_out == capacity) {
			capacity *= 2;
			out = realloc(out, capacity);
		}
		z.next_out = out + z.total_out;
		z.avail_out = capacity - z.total_out;
		ret = inflate(&z, Z_NO_FLUSH);
	} while (ret == Z_OK);
	*out_size = z.total_out;
	inflateEnd(&z);
	if (ret != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}

static const char *str(const Perftools__Profiles__Profile *p, int64_t index)
{
	return index >= 0 && (size_t)index < p->n_string_table ? p->string_table[index] : "<bad index>";
}

static const Perftools__Profiles__Function *function(const Perftools__Profiles__Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	return NULL;
}

static const Perftools__Profiles__Mapping *mapping(const Perftools__Profiles__Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_mapping; i++)
		if (p->mapping[i]->id == id)
			return p->mapping[i];
	return NULL;
}

static void check_pprof(const char *data, size_t size)
{
	const unsigned char *h = (const unsigned char *)data;
	size_t raw_size;
	uint8_t *raw;
	Perftools__Profiles__Profile *p;
	const Perftools__Profiles__Location *loc;
	int inline_ok = 0, address_ok = 1, labels_ok = 1, kernel_ok = 0, cxx_ok = 0;

	ok(size > 10 && h[0] == 0x1f && h[1] == 0x8b && h[2] == 8 && h[3] == 0 && !h[4] && !h[5] && !h[6] && !h[7],
	   "pprof: gzip member without name or time stamp");
	raw = gunzip(data, size, &raw_size);
	p = raw ? perftools__profiles__profile__unpack(NULL, raw_size, raw) : NULL;
	ok(p != NULL, "pprof: gunzips and unpacks as profile.proto");
	if (!p) {
		free(raw);
		return;
	}
	ok(p->n_string_table > 0 && !strcmp(p->string_table[0], ""), "pprof: string_table[0] is empty");
	ok(p->n_sample_type == 3 && !strcmp(str(p, p->sample_type[0]->type), "samples") &&
		   !strcmp(str(p, p->sample_type[0]->unit), "count") &&
		   !strcmp(str(p, p->sample_type[1]->type), "cpu") &&
		   !strcmp(str(p, p->sample_type[1]->unit), "nanoseconds") &&
		   !strcmp(str(p, p->sample_type[2]->type), "off_cpu") &&
		   !strcmp(str(p, p->sample_type[2]->unit), "nanoseconds") &&
		   !strcmp(str(p, p->default_sample_type), "cpu") && p->period == 1000000 &&
		   p->period_type && !strcmp(str(p, p->period_type->type), "cpu") &&
		   p->time_nanos == 1700000000123456789ll && p->duration_nanos == 2500000000ll,
	   "pprof: sample types samples/count, cpu/nanoseconds, off_cpu/nanoseconds; period, times");
	ok(p->n_mapping == 5 && !strcmp(str(p, p->mapping[0]->filename), "/usr/bin/app") &&
		   p->mapping[0]->id == 1 && p->mapping[0]->memory_start == 0x401000 &&
		   p->mapping[0]->file_offset == 0x1000 &&
		   !strcmp(str(p, p->mapping[0]->build_id), "0123456789abcdef0123456789abcdef01234567") &&
		   p->mapping[0]->has_inline_frames && !p->mapping[3]->has_line_numbers,
	   "pprof: main binary first, one mapping per module and load bias");
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Mapping *m;

		loc = p->location[i];
		m = mapping(p, loc->mapping_id);
		if (!m || loc->address < m->memory_start || loc->address >= m->memory_limit ||
		    loc->address - m->memory_start + m->file_offset != locations[loc->id - 1].file_offset)
			address_ok = 0;
		if (loc->id == 1 && loc->n_line == 3 &&
		    !strcmp(str(p, function(p, loc->line[0]->function_id)->name), "leaf") &&
		    !strcmp(str(p, function(p, loc->line[1]->function_id)->name), "hot_inline") &&
		    !strcmp(str(p, function(p, loc->line[2]->function_id)->name), "mid") && loc->line[0]->line == 10 &&
		    loc->line[0]->column == 5 && function(p, loc->line[0]->function_id)->start_line == 8)
			inline_ok = 1;
		if (loc->id == 5 && loc->n_line == 1 && !strcmp(str(p, m->filename), "[kernel.kallsyms]"))
			kernel_ok = 1;
		if (loc->id == 8 && loc->n_line == 1) {
			const Perftools__Profiles__Function *f = function(p, loc->line[0]->function_id);

			cxx_ok = !strcmp(str(p, f->system_name), "_ZNSt6vectorIiSaIiEE9push_backERKi") &&
				 !strcmp(str(p, f->filename), "src/caf\xc3\xa9.cc");
		}
	}
	ok(address_ok, "pprof: every location lies in its mapping at its true file offset");
	ok(inline_ok, "pprof: inline chain as Lines innermost first with line, column, start_line");
	ok(kernel_ok, "pprof: kernel frames under [kernel.kallsyms]");
	ok(cxx_ok, "pprof: functions keep system_name and file name");
	ok(p->n_location == 9 && p->location[6]->n_line == 0, "pprof: unnamed location has no Line");
	ok(p->n_function == 10, "pprof: functions deduplicated");
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		if (s->n_label != 5 || s->n_value != 3 || s->value[0] != (int64_t)stacks[i].count ||
		    s->value[1] != (int64_t)stacks[i].on_cpu_ns || s->value[2] != (int64_t)stacks[i].off_cpu_ns || strcmp(str(p, s->label[0]->key), "pid") ||
		    s->label[0]->num != stacks[i].pid || strcmp(str(p, s->label[1]->key), "tid") ||
		    s->label[1]->num != stacks[i].tid || strcmp(str(p, s->label[2]->key), "comm") ||
		    strcmp(str(p, s->label[3]->key), "thread_name") ||
		    strcmp(str(p, s->label[3]->str), stacks[i].comm) || strcmp(str(p, s->label[4]->key), "kind") ||
		    strcmp(str(p, s->label[4]->str), stacks[i].kind == OFF ? "off_cpu" : "on_cpu"))
			labels_ok = 0;
	}
	ok(p->n_sample == 5 && labels_ok && !strcmp(str(p, p->sample[2]->label[2]->str), "app"),
	   "pprof: one sample per stack and kind: count, on- and off-CPU ns, pid, tid, comm, thread_name, kind");
	ok(p->n_comment >= 2 && strstr(str(p, p->comment[0]), "stackrec record -F 1000") &&
		   strstr(str(p, p->comment[1]), "testhost"),
	   "pprof: comments carry the command line and host");
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
}

/* Writes format `name` of profile p to memory (caller frees). */
static char *write_profile(const struct profile *p, const char *name, const struct output_options *options,
			   size_t *size)
{
	char *data = NULL;
	FILE *out = open_memstream(&data, size);

	if (!out || output_format_find(name)->write(p, options, out) != 0)
		*size = 0;
	if (out)
		fclose(out);
	return data;
}

/* The pprof output of profile p, unpacked (NULL when it does not read back): *data keeps the output, *raw its
 * unzipped bytes, saved as file in dir unless dir is NULL. */
static Perftools__Profiles__Profile *context_pprof(const char *dir, const char *file, const struct profile *p,
						   char **data, uint8_t **raw)
{
	struct output_options all = { .all_events = true };
	size_t size, raw_size;

	*data = write_profile(p, "pprof", &all, &size);
	save(dir, file, *data, size);
	*raw = gunzip(*data, size, &raw_size);
	return *raw ? perftools__profiles__profile__unpack(NULL, raw_size, *raw) : NULL;
}

/*
 * Probe context in pprof (labels), trace (a context member) and report: the profile of the other checks
 * with a probe on top() whose call is known in the first stack (location 1, "top").
 */
static void check_context(const char *dir)
{
	struct profile p = test_profile;
	struct profile_stack with_context[sizeof(stacks) / sizeof(stacks[0])];
	uint32_t hits[4] = { PROFILE_NO_HIT, 0, PROFILE_NO_HIT, PROFILE_NO_HIT };
	struct profile_probe probe = { .probe_id = 3, .binary = "/usr/bin/app", .function = "top", .arg_count = 3,
				       .args = { { "id", PROFILE_ARG_S64 }, { "p", PROFILE_ARG_PTR }, { "s", PROFILE_ARG_STR } },
				       .hits = 1 };
	struct profile_hit hit = { .probe = 0, .time_ns = 42, .values = { (uint64_t)-5, 0x1000, 0x2000 },
				   .strings = { NULL, NULL, "a\"b\n" } };
	struct output_options all = { .all_events = true };
	Perftools__Profiles__Profile *pp;
	const Perftools__Profiles__Sample *sample;
	size_t size, raw_size;
	char *data;
	uint8_t *raw;
	int labels_ok = 0;

	memcpy(with_context, stacks, sizeof(stacks));
	with_context[0].hits = hits;
	p.stacks = with_context;
	p.probes = &probe;
	p.probe_count = 1;
	p.hits = &hit;
	p.hit_count = 1;

	data = write_profile(&p, "pprof", &all, &size);
	raw = gunzip(data, size, &raw_size);
	pp = raw ? perftools__profiles__profile__unpack(NULL, raw_size, raw) : NULL;
	if (pp && pp->n_sample == 5) {
		sample = pp->sample[0];
		labels_ok = sample->n_label == 8 && !strcmp(str(pp, sample->label[5]->key), "top.id") &&
			    sample->label[5]->num == -5 && !strcmp(str(pp, sample->label[6]->key), "top.p") &&
			    !strcmp(str(pp, sample->label[6]->str), "0x1000") &&
			    !strcmp(str(pp, sample->label[7]->key), "top.s") &&
			    !strcmp(str(pp, sample->label[7]->str), "a\"b\n") && pp->sample[1]->n_label == 5;
	}
	ok(labels_ok, "pprof: a frame's context as labels FUNCTION.ARG of its sample, numbers and strings");
	if (pp)
		perftools__profiles__profile__free_unpacked(pp, NULL);
	free(raw);
	free(data);

	/* pprof drops a label whose fields are all 0: the number 0 has a unit, the empty string is written "\"\"",
	 * and a string not read says so (t4000 has pprof read context-zero.pb.gz). */
	hit.values[0] = 0;
	hit.strings[2] = "";
	pp = context_pprof(dir, "context-zero.pb.gz", &p, &data, &raw);
	labels_ok = pp && pp->n_sample == 5 && pp->sample[0]->n_label == 8 &&
		    pp->sample[0]->label[5]->num == 0 && !strcmp(str(pp, pp->sample[0]->label[5]->num_unit), "count") &&
		    !strcmp(str(pp, pp->sample[0]->label[7]->str), "\"\"");
	if (pp)
		perftools__profiles__profile__free_unpacked(pp, NULL);
	free(raw);
	free(data);
	hit.strings[2] = NULL;
	pp = context_pprof(NULL, NULL, &p, &data, &raw);
	labels_ok = labels_ok && pp && pp->n_sample == 5 && pp->sample[0]->n_label == 8 &&
		    !strcmp(str(pp, pp->sample[0]->label[7]->str), "(not read; pointer 0x2000)");
	ok(labels_ok, "pprof: a context value 0 with the unit count, an empty string as \"\", a string not read said");
	if (pp)
		perftools__profiles__profile__free_unpacked(pp, NULL);
	free(raw);
	free(data);
	hit.values[0] = (uint64_t)-5;
	hit.strings[2] = "a\"b\n";

	data = write_profile(&p, "trace", &all, &size);
	ok(size && strstr(data, "\"function\":\"top\",\"system_name\":\"top\"") &&
		   strstr(data, "\"synthetic\":false,\"context\":{\"probe\":3,\"function\":\"top\",\"time_ns\":42,"
				"\"values\":{\"id\":-5,\"p\":\"0x1000\",\"s\":\"a\\\"b\\n\"}}}") &&
		   strstr(data, "\"probes\":[{\"id\":3,\"binary\":\"/usr/bin/app\",\"function\":\"top\",\"build_id\":null,"
				"\"address\":\"0x0\",\"args\":[{\"name\":\"id\",\"type\":\"s64\"},{\"name\":\"p\",\"type\":"
				"\"ptr\"},{\"name\":\"s\",\"type\":\"str\"}],\"hits\":1}]"),
	   "trace: the context member on the frame of the call, the probes in the header");
	free(data);

	data = write_profile(&p, "report", &all, &size);
	ok(size && strstr(data, "on-CPU sample with probe context") &&
		   strstr(data, "top at app.c:40 [app]\n        id = -5\n        p = 0x1000\n        s = \"a\\\"b\\n\"\n") &&
		   strstr(data, "no fatal signals or exceptions recorded\n"),
	   "report --all-events: a report per sample with context, values signed, in hex, quoted and escaped");
	free(data);
}

/*
 * speedscope names a thread's profile by its last name, as perf does: a new thread runs under its creator's name
 * until it names itself. Stacks are sorted by name, so the thread's names here are, in bytes, "a-first" (its
 * first sample), "m-last" (its last name) and "other-2": neither the first stack nor the last has the name.
 */
static void check_thread_renamed(void)
{
	struct profile p = test_profile;
	struct profile_stack renamed[sizeof(stacks) / sizeof(stacks[0])];
	struct output_options plain = { 0 };
	size_t size;
	char *data;

	memcpy(renamed, stacks, sizeof(stacks));
	renamed[2].pid = 200, renamed[2].tid = 201; /* pid 200, tid 201: stacks 2, 3 and 4 */
	renamed[3].tid = 201;
	snprintf(renamed[2].comm, sizeof(renamed[2].comm), "a-first");
	snprintf(renamed[3].comm, sizeof(renamed[3].comm), "m-last");
	renamed[2].first_ns = T0;
	renamed[3].first_ns = T0 + 5 * MS;
	renamed[4].first_ns = T0 + 2 * MS;
	p.stacks = renamed;
	data = write_profile(&p, "speedscope", &plain, &size);
	ok(data && strstr(data, "\"name\":\"m-last (pid 200, tid 201)\"") && !strstr(data, "a-first (pid") &&
		   !strstr(data, "other-2 (pid"),
	   "speedscope: a renamed thread's profile has its last name");
	free(data);
}

/* A thread named "" (prctl(PR_SET_NAME, "")) is "[unknown]" in every format, as in folded: d3 had "", speedscope
 * " (pid 100, tid 100)", and pprof no thread_name, which -tags then left out. */
static void check_empty_thread_name(void)
{
	struct profile p = test_profile;
	struct profile_stack unnamed[sizeof(stacks) / sizeof(stacks[0])];
	struct output_options plain = { 0 };
	size_t d3_size, speedscope_size;
	char *d3, *speedscope;

	memcpy(unnamed, stacks, sizeof(stacks));
	unnamed[0].comm[0] = unnamed[1].comm[0] = '\0';
	p.stacks = unnamed;
	d3 = write_profile(&p, "d3", &plain, &d3_size);
	speedscope = write_profile(&p, "speedscope", &plain, &speedscope_size);
	ok(d3 && strstr(d3, "\"name\":\"[unknown]\"") && !strstr(d3, "\"name\":\"\"") && speedscope &&
		   strstr(speedscope, "\"name\":\"[unknown] (pid 100, tid 100)\""),
	   "a thread without a name is [unknown] in d3 and speedscope, as in folded");
	free(d3);
	free(speedscope);
}

static void check_json_writer(void)
{
	struct json_writer w;
	char *data = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&data, &size);
	const char *expect = "{\"s\":\"q\\\" b\\\\ n\\n t\\t c\\u0001 del\x7f \xc3\xa9 \xe2\x82\xac bad\xef\xbf\xbd"
			     " trunc\xef\xbf\xbd\xef\xbf\xbd\",\"n\":[18446744073709551615,-5,true,null,\"0xff\"]}\n";

	json_writer_init(&w, out);
	json_begin_object(&w);
	json_kv_string(&w, "s", "q\" b\\ n\n t\t c\x01 del\x7f \xc3\xa9 \xe2\x82\xac bad\xff trunc\xe2\x82");
	json_key(&w, "n");
	json_begin_array(&w);
	json_uint(&w, UINT64_MAX);
	json_int(&w, -5);
	json_bool(&w, true);
	json_string(&w, NULL);
	json_hex(&w, 255);
	json_end_array(&w);
	json_end_object(&w);
	json_end_line(&w);
	ok(!json_writer_release(&w) && !fclose(out) && !strcmp(data, expect),
	   "json writer escapes control characters, keeps UTF-8, replaces each invalid byte");
	if (strcmp(data, expect))
		printf("# got:    %s# expect: %s", data, expect);
	free(data);
}

static void check_terminal_text(void)
{
	char *got = terminal_text("esc\x1b[2J bel\a nl\n del\x7f back\\ \xc3\xa9 \xe2\x82\xac c1\xc2\x9b bad\xff cut\xe2\x82");
	const char *expect = "esc\\x1b[2J bel\\x07 nl\\x0a del\\x7f back\\\\ \xc3\xa9 \xe2\x82\xac c1\\xc2\\x9b bad\\xff"
			     " cut\\xe2\\x82";

	ok(!strcmp(got, expect), "terminal_text escapes C0 and C1 controls, DEL, a backslash, invalid bytes; keeps UTF-8");
	if (strcmp(got, expect))
		printf("# got:    %s\n# expect: %s\n", got, expect);
	free(got);
}

/* A profile without samples (nothing recorded) still gives valid output in every format. */
static void check_empty(const char *dir)
{
	static const struct profile empty = { 0 };
	static const char *const names[] = { "pprof", "speedscope", "d3", "trace" };
	static const char *const files[] = { "empty.pb.gz", "empty-speedscope.json", "empty-d3.json",
					     "empty-trace.jsonl" };
	struct output_options plain = { 0 };
	int all_ok = 1;

	for (size_t i = 0; i < 4; i++) {
		char *data = NULL;
		size_t size = 0;
		FILE *out = open_memstream(&data, &size);
		int ret = output_format_find(names[i])->write(&empty, &plain, out);

		if (fclose(out) || ret || !size)
			all_ok = 0;
		save(dir, files[i], data, size);
		free(data);
	}
	ok(all_ok, "an empty profile gives output in every format");
}

static void write_expected_flat(const char *dir)
{
	/* Named leaf functions and their flat on-CPU samples: what pprof -top must show (unnamed: 2 at
	 * 0x7f1000001234). */
	static const char flat[] = "leaf 5\nclear_user 3\nmemcpy 7\n";

	save(dir, "expected-flat.txt", flat, sizeof(flat) - 1);
}

/*
 * folded sums the stacks that print the same: the same names at other addresses, and the same frames split
 * otherwise between locations (an inline chain in one location, or its frames in two); stacks that differ in
 * any frame stay apart. Stacks leaf first; frames of a location innermost first.
 */
static void check_folded_sums(void)
{
	static struct profile_frame inner_b = { "b", "b", NULL, 0, 0, 0, true }, outer_a = { "a", "a", NULL, 0, 0, 0, false },
				    c = { "c", "c", NULL, 0, 0, 0, false }, d = { "d", "d", NULL, 0, 0, 0, false };
	static struct profile_frame chain[] = { { "b", "b", NULL, 0, 0, 0, true }, { "a", "a", NULL, 0, 0, 0, false } };
	static struct profile_location locs[] = {
		{ USER, FP, 0, 0x401010, 0x1010, false, chain, 2, NULL },   /* 0: a;b in one location */
		{ USER, FP, 0, 0x401020, 0x1020, false, &inner_b, 1, NULL }, /* 1: b */
		{ USER, FP, 0, 0x401030, 0x1030, true, &outer_a, 1, NULL },  /* 2: a */
		{ USER, FP, 0, 0x401040, 0x1040, true, &c, 1, NULL },	     /* 3: c */
		{ USER, FP, 0, 0x401050, 0x1050, true, &c, 1, NULL },	     /* 4: c at another address */
		{ USER, FP, 0, 0x401060, 0x1060, true, &d, 1, NULL },	     /* 5: d */
	};
	static uint32_t s0[] = { 0, 3 }, s1[] = { 1, 2, 4 }, s2[] = { 1, 2, 3 }, s3[] = { 1, 2, 5 }, s4[] = { 2, 3 };
	static struct profile_stack sums[] = {
		{ 1, 1, "app", ON, s0, 2, 1, NS_PER_SAMPLE, 0, 0, 0 },
		{ 1, 2, "app", ON, s1, 3, 2, 2 * NS_PER_SAMPLE, 0, 0, 0 },
		{ 2, 3, "app", ON, s2, 3, 4, 4 * NS_PER_SAMPLE, 0, 0, 0 },
		{ 1, 1, "app", ON, s3, 3, 8, 8 * NS_PER_SAMPLE, 0, 0, 0 },
		{ 1, 1, "app", ON, s4, 2, 16, 16 * NS_PER_SAMPLE, 0, 0, 0 },
		{ 1, 1, "app2", ON, s0, 2, 32, 32 * NS_PER_SAMPLE, 0, 0, 0 },
	};
	struct profile p = { .modules = modules, .module_count = 1, .locations = locs, .location_count = 6,
			     .stacks = sums, .stack_count = 6, .total_samples = 63, .on_cpu_samples = 63 };
	struct output_options plain = { 0 };
	char *data = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&data, &size);
	int ret = out ? output_format_find("folded")->write(&p, &plain, out) : -1;

	if (out && fclose(out))
		ret = -1;
	ok(!ret && data && !strcmp(data, "app2;c;a;b 32\napp;c;a 16\napp;c;a;b 7\napp;d;a;b 8\n"),
	   "folded: stacks that print the same are one line, however their frames fall into locations");
	if (data && strcmp(data, "app2;c;a;b 32\napp;c;a 16\napp;c;a;b 7\napp;d;a;b 8\n"))
		fprintf(stderr, "# folded wrote:\n%s", data);
	free(data);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : NULL;
	struct output_options plain = { 0 };
	struct output_options wall = { .kind = OUTPUT_KIND_WALL };
	struct output_options off = { .kind = OUTPUT_KIND_OFF_CPU };
	struct output_options annotated = { .per_pid = true, .annotate = true, .addrs = true };
	size_t size;
	char *data;

	ok(output_format_find("pprof") && output_format_find("speedscope") && output_format_find("d3") &&
		   output_format_find("trace") && output_format_find("pprof")->binary,
	   "pprof, speedscope, d3 and trace are in the format table");

	data = check_format(dir, "pprof", &plain, "pprof.pb.gz", &size);
	check_pprof(data, size);
	free(data);
	check_folded_sums();
	check_terminal_text();

	check_context(dir);

	data = check_format(dir, "speedscope", &plain, "speedscope.json", &size);
	ok(size && strstr(data, "\"name\":\"app (pid 100, tid 100)\"") &&
		   strstr(data, "\"name\":\"w\xc3\xb6rker \\\"1\\\" (pid 100, tid 101)\"") &&
		   strstr(data, "\"type\":\"evented\"") && strstr(data, "\"unit\":\"nanoseconds\"") &&
		   strstr(data, "\"activeProfileIndex\":3,"),
	   "speedscope: an evented profile per thread in ns, names escaped, opens on the busiest thread");
	ok(size && strstr(data, "{\"type\":\"C\",\"frame\":0,\"at\":3000000},\n{\"type\":\"O\",\"frame\":0,\"at\":7000000}") &&
		   strstr(data, "{\"type\":\"C\",\"frame\":0,\"at\":9000000}]"),
	   "speedscope --kind on: on-CPU intervals, a gap where the thread was off the CPU");
	ok(size && strstr(data, "{\"type\":\"C\",\"frame\":6,\"at\":2400000}"),
	   "speedscope: an interval that overlaps the previous one starts where that one ended");
	free(data);
	data = check_format(dir, "speedscope", &wall, "speedscope-wall.json", &size);
	/* From the earliest period's start (T0 - 1 ms): thread 100 off the CPU 4-8 ms, then on it in the period its
	 * tick at 9 ms ends (the one at 8 ms, whose period the sleep covered, trimmed away): one box for leaf. */
	ok(size && strstr(data, "{\"type\":\"O\",\"frame\":5,\"at\":4000000}") &&
		   strstr(data, "{\"type\":\"C\",\"frame\":5,\"at\":9000000}") &&
		   !strstr(data, "{\"type\":\"C\",\"frame\":5,\"at\":8000000}"),
	   "speedscope --kind wall: on- and off-CPU intervals of one stack in one timeline");
	free(data);
	data = check_format(dir, "speedscope", &off, "speedscope-off.json", &size);
	ok(size && strstr(data, "\"activeProfileIndex\":0,") && strstr(data, "\"startValue\":4000000,\"endValue\":13000000"),
	   "speedscope --kind off: only the threads and intervals off the CPU");
	free(data);

	data = check_format(dir, "d3", &plain, "d3.json", &size);
	ok(size && !strncmp(data, "{\"name\":\"root\",\"value\":17,\"unit\":\"samples\",", 43) &&
		   strstr(data, "\"name\":\"clear_user_[k]\",\"value\":3,\"libtype\":\"kernel\"") &&
		   strstr(data, "\"name\":\"hot_inline\",\"value\":5,\"libtype\":\"inlined\"") &&
		   strstr(data, "\"name\":\"[libplugin.so]\",\"value\":2,\"children\""),
	   "d3: root value is the total, libtype kernel and inlined, unnamed frames");
	free(data);
	data = check_format(dir, "d3", &off, "d3-off.json", &size);
	ok(size && !strncmp(data, "{\"name\":\"root\",\"value\":7000,\"unit\":\"microseconds\",", 48) &&
		   !strstr(data, "other"),
	   "d3 --kind off: off-CPU microseconds, only the stacks off the CPU");
	free(data);
	data = check_format(dir, "d3", &annotated, "d3-annotated.json", &size);
	ok(size && strstr(data, "\"name\":\"app-100\"") && strstr(data, "\"name\":\"clear_user_[k]\"") &&
		   strstr(data, "\"name\":\"leaf_[i]\"") && strstr(data, "\"name\":\"[libplugin.so <0x1234>]\""),
	   "d3 --pid --annotate --addrs: comm-PID, _[k] _[i], [module <0xOFFSET>]");
	free(data);

	data = check_format(dir, "trace", &plain, "trace.jsonl", &size);
	ok(size && !strncmp(data, "{\"type\":\"header\",\"format\":\"stackrec-trace\",\"version\":1,", 54) &&
		   strstr(data, "\"unnamed_reason\":\"no file with that build ID\"") &&
		   strstr(data, "\"kernel_stack_error\":{\"errno\":14,\"name\":\"EFAULT\"}") &&
		   strstr(data, "\"address\":\"0xffffffff81234567\""),
	   "trace: versioned header, unnamed reasons, stack errors, hex addresses");
	ok(size && strstr(data, "\"sample_kind\":\"mixed\"") && strstr(data, "\"sample_records\":19,") &&
		   strstr(data, "\"type\":\"stack\",\"id\":1,\"pid\":100,\"tid\":100,\"comm\":\"app\",\"kind\":\"off_cpu\","
				"\"count\":2,\"weight_ns\":7000000,\"on_cpu_ns\":0,\"off_cpu_ns\":7000000,") &&
		   strstr(data, "\n{\"type\":\"sample\",\"time_ns\":5003000000,\"pid\":100,\"tid\":100,\"kind\":\"off_cpu\","
				"\"weight_ns\":4000000,\"stack\":1}\n"),
	   "trace: stacks carry their kind and values, samples their time, weight and stack");
	free(data);

	data = check_format(dir, "folded", &plain, "folded.txt", &size);
	free(data);
	data = check_format(dir, "folded", &off, "folded-off.txt", &size);
	ok(size && !strcmp(data, "app;__libc_start_call_main;main;top;mid;hot_inline;leaf 7000\n"),
	   "folded --kind off: off-CPU microseconds");
	free(data);
	data = check_format(dir, "folded", &wall, "folded-wall.txt", &size);
	free(data);
	check_empty(dir);
	check_thread_renamed();
	check_empty_thread_name();
	write_expected_flat(dir);
	check_json_writer();

	printf("1..%d\n", test_number);
	return failures ? 1 : 0;
}
