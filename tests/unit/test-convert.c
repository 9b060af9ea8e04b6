/*
 * test-convert.c — unit tests of convert's parts (profile, the arena, process maps, kernel symbols, demangling,
 * folded output, the sorted ELF symbol table), and a small recording writer for tests/t3000-convert.sh.
 *
 *   test-convert                 runs the unit tests, prints TAP, exits 1 on any failure
 *   test-convert write OUT       writes a recording to OUT from a script on stdin, one block per line:
 *       host KEY=VALUE
 *       mapping PID START END OFFSET PATH BUILD_ID|- TIME
 *       exec PID TIME [NAME]                (a TASK block SREC_TASK_EXEC, NAME the comm it exec'd as)
 *       fork PID PARENT_PID TIME            (a TASK block SREC_TASK_FORK of the main thread)
 *       existing PID TIME                   (a TASK block SREC_TASK_EXISTING: running when recording started)
 *       kallsyms FILE                       (the file's text as one KALLSYMS block)
 *       file KIND BUILD_ID OFFSET PATH FILE (a FILE block: KIND a number (3: SREC_FILE_DEBUG), the bytes of FILE
 *                                            as the content at OFFSET of the file PATH; archives are such files)
 *       [repeat N] sample PID TID COMM TIME USER_IPS KERNEL_IPS [USER_ERROR[/KERNEL_ERROR]] [kind=on|off]
 *                                           [weight=NS] [top=HEX] [rbp=HEX]
 *                                           [dwarf=PC]
 *                                           (top=HEX: the sample keeps rsp and rip (the leaf IP) and one
 *                                            word HEX of stack at rsp, as a fp sample for the leaf repair;
 *                                            rbp=HEX: and rbp, HEX, first of its registers;
 *                                            dwarf=PC: and it is unwound offline from rip PC, as with
 *                                            --call-graph dwarf: give "-" for USER_IPS)
 *                                           (IPs hex, comma-separated, leaf first; "-" for none; an on-CPU
 *                                            sample of weight 1 ms unless told; repeat N writes N samples
 *                                            back to back, each starting when the previous one's weight ends)
 *       repeat-timed N sample ...           (N samples about 1 ms apart from TIME, on CPUs 0 and 1, as
 *                                            a real recording has them: a file that does not compress
 *                                            to nothing, for memory tests)
 *       stats SAMPLES
 *       flush                               (ends a frame; prints the file size after it)
 *       end                                 (END block; without it the file is left cut short)
 *   test-convert dump-vdso OUT   copies this process's vDSO image to OUT
 */
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../convert/cfi_rules.h"
#include "../../convert/demangle.h"
#include "../../convert/enrich.h"
#include "../../convert/jit_maps.h"
#include "../../convert/kernel_symbols.h"
#include "../../convert/process_maps.h"
#include "../../convert/profile.h"
#include "../../convert/memo_window.h"
#include "../../convert/raw_sample_memo.h"
#include "../../convert/stack_memo.h"
#include "../../convert/elf_symbols.h"
#include "../../formats/output.h"
#include "../../formats/recording_reader.h"
#include "../../formats/recording_writer.h"
#include "../../cache_dir.h"
#include "../../file_cut_guard.h"
#include "../../interrupt_cleanup.h"
#include "../../util.h"

static int test_number, failures;

static void ok(bool cond, const char *title)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++test_number, title);
	if (!cond)
		failures++;
}

static void ok_str(const char *actual, const char *expected, const char *title)
{
	bool same = actual && !strcmp(actual, expected);

	ok(same, title);
	if (!same)
		printf("#   expected: '%s'\n#   actual:   '%s'\n", expected, actual ? actual : "(null)");
}

/* One sample of stack (leaf first), as convert hands it over. */
static void add(struct profile *p, uint32_t pid, uint32_t tid, const char *comm, enum profile_sample_kind kind,
		uint64_t time_ns, uint64_t weight_ns, const uint32_t *stack, uint32_t depth, int32_t user_error)
{
	struct profile_sample_info s = { pid, tid, comm, kind, time_ns, weight_ns, user_error, 0 };

	profile_add_sample(p, &s, stack, depth);
}

#define ON PROFILE_SAMPLE_ON_CPU
#define OFF PROFILE_SAMPLE_OFF_CPU

/* On- and off-CPU samples of one stack stay two stacks; the timeline follows the sorted stacks. */
static void test_profile_kinds(void)
{
	struct profile p;
	uint32_t m, a, b, stack[2];
	const struct profile_stack *on, *off;

	profile_init(&p);
	p.keep_timeline = true;
	m = profile_intern_module(&p, "/bin/x", NULL, 0, 0, 0, false);
	a = profile_intern_location(&p, PROFILE_LOCATION_USER, m, 0x10, 0x10, false, PROFILE_UNWIND_PC);
	b = profile_intern_location(&p, PROFILE_LOCATION_USER, m, 0x20, 0x20, true, PROFILE_UNWIND_FRAME_POINTER);
	stack[0] = a;
	stack[1] = b;
	add(&p, 9, 9, "z", ON, 500, 1000, stack, 1, 0);		/* stack 0: another thread, first seen */
	add(&p, 5, 5, "t", OFF, 300, 7000, stack, 2, 0);	/* stack 1 */
	add(&p, 5, 5, "t", ON, 100, 1000, stack, 2, 0);		/* stack 2: the same frames on-CPU */
	add(&p, 5, 5, "t", OFF, 200, 3000, stack, 2, 0);
	add(&p, 5, 5, "t", ON, 200, 1000, stack, 2, 0);
	ok(p.stack_count == 3 && p.on_cpu_samples == 3 && p.off_cpu_samples == 2 && p.total_on_cpu_ns == 3000 &&
		   p.total_off_cpu_ns == 10000 && p.timeline_count == 5,
	   "on- and off-CPU samples of one stack do not merge; totals per kind");
	profile_finish(&p);
	on = &p.stacks[0];
	off = &p.stacks[1];
	ok(on->pid == 5 && on->kind == ON && on->count == 2 && on->on_cpu_ns == 2000 && !on->off_cpu_ns &&
		   off->pid == 5 && off->kind == OFF && off->count == 2 && off->off_cpu_ns == 10000 && !off->on_cpu_ns &&
		   p.stacks[2].pid == 9,
	   "sorted: one thread's on-CPU stack before its off-CPU stack, each with its own values");
	ok(p.timeline[0].time_ns == 100 && p.timeline[0].stack == 0 && p.timeline[1].time_ns == 200 &&
		   p.timeline[1].stack == 0 && p.timeline[2].time_ns == 200 && p.timeline[2].stack == 1 &&
		   p.timeline[2].weight_ns == 3000 && p.timeline[3].stack == 1 && p.timeline[4].time_ns == 500 &&
		   p.timeline[4].stack == 2,
	   "the timeline is in time order (then stack) and points at the sorted stacks");
	profile_release(&p);
}

static void test_profile(void)
{
	struct profile p;
	uint32_t a, b, c, m, stack1[2], stack2[1];

	profile_init(&p);
	m = profile_intern_module(&p, "/bin/x", "abcd", 0x1000, 0x2000, 0, false);
	ok(profile_intern_module(&p, "/other/path/x", "abcd", 0, 0, 0, false) == m, "modules dedupe by build ID");
	ok(profile_intern_module(&p, "/bin/y", NULL, 0, 0, 0, false) != m, "modules without build ID by path");
	ok(profile_intern_module(&p, "/bin/y", NULL, 0, 0, 0, false) ==
		   profile_intern_module(&p, "/bin/y", "", 0, 0, 0, false),
	   "an empty build ID is no build ID");
	a = profile_intern_location(&p, PROFILE_LOCATION_USER, m, 0x1010, 0x10, false, PROFILE_UNWIND_FRAME_POINTER);
	b = profile_intern_location(&p, PROFILE_LOCATION_USER, m, 0x5010, 0x10, true, PROFILE_UNWIND_FRAME_POINTER);
	c = profile_intern_location(&p, PROFILE_LOCATION_USER, m, 0x9010, 0x10, false, PROFILE_UNWIND_FRAME_POINTER);
	ok(a != b && a == c && p.locations[a].address == 0x1010, "locations intern by module, offset, return flag");
	ok(profile_intern_marker(&p, PROFILE_LOCATION_USER, "[x]") ==
		   profile_intern_marker(&p, PROFILE_LOCATION_USER, "[x]"),
	   "markers intern by name");
	stack1[0] = a;
	stack1[1] = b;
	stack2[0] = b;
	for (int i = 0; i < 1000; i++)
		add(&p, 7, 8, "t", ON, i, 10, stack1, 2, 0);
	add(&p, 7, 8, "t", ON, 0, 10, stack2, 1, -14);
	add(&p, 6, 6, "t", ON, 0, 10, stack1, 2, 0);
	ok(p.stack_count == 3 && p.total_samples == 1002 && p.total_on_cpu_ns == 10020 && !p.timeline_count,
	   "stacks aggregate samples; no timeline unless asked for");
	profile_finish(&p);
	ok(p.stacks[0].pid == 6 && p.stacks[1].pid == 7 && p.stacks[1].depth == 1 && p.stacks[2].count == 1000,
	   "profile_finish sorts by pid, tid, comm, root first");
	ok(p.stacks[1].user_error == -14 && p.user_stack_errors == 1, "stack errors are kept");
	ok(p.locations[a].frame_count == 1 && p.locations[a].unnamed_reason, "unsymbolized locations get a frame");
	profile_release(&p);
	test_profile_kinds();
}

static struct srec_mapping mapping(uint32_t pid, uint64_t start, uint64_t end, uint64_t off, uint64_t time)
{
	return (struct srec_mapping){ .pid = pid, .start = start, .end = end, .file_offset = off, .time_ns = time };
}

/*
 * process_maps_period's promise, by brute force: at any two times up to last with the same period, every
 * address of ips resolves the same in pid; and the period changes somewhere (at least changes times). And
 * process_maps_period_span's: the same period, over exactly the times that have it.
 */
static bool periods_hold(const struct process_maps *maps, uint32_t pid, uint64_t last, const uint64_t *ips,
			 size_t count, unsigned int changes)
{
	unsigned int seen = 0;

	for (uint64_t t = 0; t <= last; t++) {
		uint64_t period = process_maps_period(maps, pid, t), from, until;

		if (process_maps_period_span(maps, pid, t, &from, &until) != period || t < from || t >= until)
			return false;
		for (uint64_t u = 0; u <= last; u++)
			if ((process_maps_period(maps, pid, u) == period) != (u >= from && u < until))
				return false;
		if (t && period != process_maps_period(maps, pid, t - 1))
			seen++;
		for (uint64_t u = 0; u < t; u++) {
			if (process_maps_period(maps, pid, u) != period)
				continue;
			for (size_t i = 0; i < count; i++) {
				uint32_t m1 = UINT32_MAX, m2 = UINT32_MAX;
				uint64_t o1 = 0, o2 = 0;
				bool r1 = process_maps_resolve(maps, pid, t, ips[i], &m1, &o1);
				bool r2 = process_maps_resolve(maps, pid, u, ips[i], &m2, &o2);

				if (r1 != r2 || m1 != m2 || o1 != o2)
					return false;
			}
		}
	}
	return seen >= changes;
}

static void test_process_maps(void)
{
	struct process_maps maps;
	struct profile p;
	struct srec_mapping m;
	uint32_t module, a, b, c;
	uint64_t off;

	profile_init(&p);
	process_maps_init(&maps);
	m = mapping(1, 0x1000, 0x3000, 0x100, 10);
	process_maps_add_mapping(&maps, &p, &m, "/a");
	m = mapping(1, 0x2000, 0x4000, 0, 50);
	process_maps_add_mapping(&maps, &p, &m, "/b");
	m = mapping(1, 0x6000, 0x7000, 0, 10);
	process_maps_add_mapping(&maps, &p, &m, "/e");
	process_maps_add_exec(&maps, 1, 100);
	m = mapping(1, 0x1000, 0x5000, 0, 110);
	process_maps_add_mapping(&maps, &p, &m, "/c");
	for (int i = 0; i < 200; i++) { /* many unrelated mappings */
		m = mapping(1, 0x100000 + i * 0x1000, 0x100800 + i * 0x1000, 0, 5);
		process_maps_add_mapping(&maps, &p, &m, "/d");
	}
	process_maps_finish(&maps);
	a = profile_intern_module(&p, "/a", NULL, 0, 0, 0, false);
	b = profile_intern_module(&p, "/b", NULL, 0, 0, 0, false);
	c = profile_intern_module(&p, "/c", NULL, 0, 0, 0, false);
	ok(process_maps_resolve(&maps, 1, 20, 0x1234, &module, &off) && module == a && off == 0x334,
	   "file offset = ip - start + file_offset");
	ok(process_maps_resolve(&maps, 1, 60, 0x2100, &module, &off) && module == b && off == 0x100,
	   "the newest mapping at or before the sample wins");
	ok(process_maps_resolve(&maps, 1, 20, 0x2100, &module, &off) && module == a,
	   "a mapping from after the sample is not used when an older one covers");
	ok(process_maps_resolve(&maps, 1, 5, 0x3100, &module, &off) && module == b,
	   "falls back to a later mapping when none is older");
	ok(process_maps_resolve(&maps, 1, 120, 0x1100, &module, &off) && module == c,
	   "after exec the new image's mapping is used");
	ok(process_maps_resolve(&maps, 1, 90, 0x6100, &module, &off) &&
		   !process_maps_resolve(&maps, 1, 120, 0x6100, &module, &off),
	   "after exec, mappings from before it no longer apply");
	ok(process_maps_resolve(&maps, 1, 90, 0x4100, &module, &off) == false,
	   "a mapping of the next image does not apply before its exec");
	ok(process_maps_resolve(&maps, 1, 90, 0x100000 + 150 * 0x1000 + 0x10, &module, &off) && off == 0x10,
	   "lookup among many mappings");
	ok(!process_maps_resolve(&maps, 2, 90, 0x1100, &module, &off), "unknown process: no mapping");
	ok(periods_hold(&maps, 1, 130, (const uint64_t[]){ 0x1234, 0x2100, 0x3100, 0x4100, 0x6100 }, 5, 4),
	   "within one period of its mappings' history, a process resolves every address the same");
	process_maps_release(&maps);
	profile_release(&p);
}

/*
 * The fp stack memo answers what was added under the same key, and nothing for another key (a longer one with
 * the same prefix included); over its byte bound it starts over, so it never holds more.
 */
static void test_stack_memo(void)
{
	struct stack_memo m;
	uint64_t key[8] = { 100, 3, 0, 0x401000, 0x402000, 0x403000, 0, 0 };
	uint32_t locations[6] = { 7, 8, 9, 10, 11, 12 }, count = 0;
	const uint32_t *found;
	bool right = true, bounded = true;

	stack_memo_init(&m);
	ok(!stack_memo_find(&m, key, 6, &count), "stack memo: empty, nothing found");
	stack_memo_add(&m, key, 6, locations, 3);
	found = stack_memo_find(&m, key, 6, &count);
	ok(found && count == 3 && !memcmp(found, locations, 3 * sizeof(*found)), "stack memo: a stack is found again");
	ok(!stack_memo_find(&m, key, 7, &count), "stack memo: a longer stack with the same start is another");
	key[1] = 4; /* another period of the process */
	ok(!stack_memo_find(&m, key, 6, &count), "stack memo: another period is another stack");
	stack_memo_release(&m);

	stack_memo_init(&m);
	m.max_bytes = 4096;
	for (uint64_t i = 0; i < 10000; i++) {
		key[3] = i;
		locations[0] = (uint32_t)i;
		stack_memo_add(&m, key, 6, locations, 1 + i % 6);
		bounded &= m.bytes <= m.max_bytes;
		found = stack_memo_find(&m, key, 6, &count);
		right &= found && count == 1 + i % 6 && found[0] == (uint32_t)i;
		key[3] = i / 2; /* an older stack: gone after a start over, else as it was added */
		found = stack_memo_find(&m, key, 6, &count);
		right &= !found || (count == 1 + (i / 2) % 6 && found[0] == (uint32_t)(i / 2));
	}
	ok(right && bounded, "stack memo: past its bound it starts over, never holding more, never answering wrong");
	stack_memo_release(&m);
}

/*
 * A memo's window: asked at every sample while at least its least answers of every MEMO_WINDOW look-ups come; a
 * window with fewer leaves it out for MEMO_PAUSE samples, then it is asked again and judged by the next window.
 */
static void test_memo_window(void)
{
	struct memo_window w;
	bool asked = true;
	uint32_t left_out = 0;

	memo_window_init(&w, MEMO_WINDOW / 4);
	for (int i = 0; i < 4 * MEMO_WINDOW; i++) {
		asked &= memo_window_wanted(&w);
		memo_window_count(&w, i % 4 == 0); /* a quarter answered: kept */
	}
	ok(asked, "memo window: a memo that answers its least of every window is asked at every sample");
	for (int i = 0; i < MEMO_WINDOW; i++) {
		asked &= memo_window_wanted(&w);
		memo_window_count(&w, i < MEMO_WINDOW / 4 - 1); /* one answer short */
	}
	while (!memo_window_wanted(&w))
		left_out++;
	ok(asked && left_out == MEMO_PAUSE, "memo window: one answer short of its least leaves the next MEMO_PAUSE out");
	memo_window_count(&w, true);
	for (int i = 1; i < MEMO_WINDOW; i++) {
		asked &= memo_window_wanted(&w);
		memo_window_count(&w, true);
	}
	ok(asked && memo_window_wanted(&w), "memo window: after the pause a window that answers keeps it asked");

	memo_window_init(&w, MEMO_WINDOW / 16);
	for (int i = 0; i < 4 * MEMO_WINDOW; i++) {
		asked &= memo_window_wanted(&w);
		memo_window_count(&w, i % 16 == 0); /* a sixteenth */
	}
	memo_window_count(&w, false);
	for (int i = 1; i < MEMO_WINDOW; i++)
		memo_window_count(&w, false);
	ok(asked && !memo_window_wanted(&w), "memo window: each memo is judged by its own least");
}

/*
 * The bytes an arena holds from malloc: its chunks, each linked by its first 8 bytes to the one before (util.c),
 * at their usable sizes (under ASan, exactly what was asked). *chunks is set to how many there are.
 */
static size_t arena_bytes_held(const struct arena *a, size_t *chunks)
{
	size_t bytes = 0;

	*chunks = 0;
	for (const void *chunk = a->chunk; chunk; chunk = *(const void *const *)chunk) {
		bytes += malloc_usable_size((void *)chunk);
		++*chunks;
	}
	return bytes;
}

/*
 * Arena blocks around its thresholds (chunks of 64 KiB with an 8-byte link first; a block over a quarter of
 * that gets a chunk of its own), with small ones between them: each is aligned to 8 bytes, no two overlap (each
 * filled with its own byte, all checked after the last allocation), and the arena holds a chunk of its exact
 * size for each large block, not a whole 64 KiB one (the raw sample memo's budget counts a block's bytes).
 */
static void test_arena(void)
{
	enum { QUARTER = 16 << 10, CHUNK = 64 << 10, HEADER = 8 };
	/* the last is asked again once the first chunk's room is less than it */
	static const size_t around[] = { QUARTER - 1, QUARTER, QUARTER + 1, QUARTER + 8, 2 * QUARTER, CHUNK / 2 + 1,
					 CHUNK - HEADER - 1, CHUNK - HEADER, CHUNK - 1, CHUNK, CHUNK + 1, QUARTER + 1 };
	static const size_t small[] = { 1, 7, 8, 9, 24, 100 };
	struct {
		unsigned char *p;
		size_t size;
	} blocks[ARRAY_SIZE(around) * (ARRAY_SIZE(small) + 1)];
	size_t n = 0, large_bytes = 0, large_count = 0, chunks, held;
	bool aligned = true, intact = true, apart = true;
	struct arena a = { 0 };

	/* small blocks first: the first chunk is then an ordinary one, which every small block below fits in */
	for (size_t l = 0; l < ARRAY_SIZE(around); l++) {
		for (size_t s = 0; s < ARRAY_SIZE(small); s++) {
			blocks[n].size = small[(s + l) % ARRAY_SIZE(small)];
			blocks[n].p = arena_alloc(&a, blocks[n].size);
			n++;
		}
		blocks[n].size = around[l];
		blocks[n].p = arena_alloc(&a, blocks[n].size);
		if (around[l] > QUARTER) {
			large_bytes += HEADER + ((around[l] + 7) & ~(size_t)7);
			large_count++;
		}
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		aligned &= (uintptr_t)blocks[i].p % 8 == 0;
		memset(blocks[i].p, (int)(i % 255 + 1), blocks[i].size);
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < blocks[i].size; k++)
			intact &= blocks[i].p[k] == (unsigned char)(i % 255 + 1);
		for (size_t j = 0; j < i; j++)
			apart &= blocks[i].p + blocks[i].size <= blocks[j].p || blocks[j].p + blocks[j].size <= blocks[i].p;
	}
	ok(aligned, "arena: every block is aligned to 8 bytes, around the chunk thresholds too");
	ok(apart && intact, "arena: no two blocks overlap; each keeps its own bytes until the last allocation");
	held = arena_bytes_held(&a, &chunks);
	/*
	 * A large block that does not fit in the current chunk's room gets a chunk of header + its size (one that
	 * fits is cut from the room); the small ones all fit in the first chunk. malloc rounds each chunk up by a
	 * few bytes (32 is generous).
	 */
	ok(chunks <= large_count + 1 && held <= CHUNK + large_bytes + 32 * chunks,
	   "arena: one 64 KiB chunk, and for large blocks at most their own sizes, not 64 KiB each");
	if (held > CHUNK + large_bytes + 32 * chunks)
		printf("#   %zu chunks hold %zu bytes, for %zu of large blocks\n", chunks, held, large_bytes);
	ok(a.used <= a.size && a.size == CHUNK, "arena: the current chunk is the ordinary one, within its size");
	arena_release(&a);
	ok(!a.chunk && !a.used && !a.size, "arena: released, it is empty");
	blocks[0].p = arena_alloc(&a, CHUNK + 1);
	memset(blocks[0].p, 1, CHUNK + 1);
	ok(a.chunk && a.size == HEADER + CHUNK + 8, "arena: a large first block makes the current chunk, of its size");
	arena_release(&a);
}

/* The raw sample memo's spill function for the test: adds up the repeats it is handed. */
static void add_repeats(void *ctx, const struct raw_sample_answer *a)
{
	((uint64_t *)ctx)[a->stack] += a->repeats;
}

/*
 * The raw sample memo answers a block met again whatever its time, weight and CPU, and nothing for a block that
 * differs in any other byte (its last one too), in size or in period; over its byte bound it starts over, never
 * holding more, and every repeat it counted reaches the spill function once.
 */
static void test_raw_sample_memo(void)
{
	struct raw_sample_memo m;
	struct srec_sample s = { .time_ns = 1000, .weight = 7, .pid = 5, .tid = 6, .cpu = 0, .kind = SREC_SAMPLE_ON_CPU,
				 .user_depth = 2, .comm = "prog" };
	unsigned char block[sizeof(s) + 3 * sizeof(uint64_t) + 5] = { 0 }, other[sizeof(block)], large[200] = { 0 };
	uint32_t size = sizeof(block);
	struct raw_sample_answer answer = { .stack = 0 }, *found;
	uint64_t spilled[2] = { 0 }, counted = 0, hash;
	bool right = true, bounded = true;

	memcpy(block, &s, sizeof(s));
	memcpy(block + sizeof(s), (const uint64_t[]){ 0x401000, 0x402000, 0x403000 }, 3 * sizeof(uint64_t));
	memcpy(block + size - 5, "stack", 5);
	raw_sample_memo_init(&m, add_repeats, spilled);
	ok(!raw_sample_memo_find(&m, block, size, 1, &hash), "raw sample memo: empty, nothing found");
	raw_sample_memo_add(&m, hash, block, size, 1, &answer);
	memcpy(other, block, size);
	s.time_ns = 2000, s.weight = 9, s.cpu = 1;
	memcpy(other, &s, sizeof(s));
	found = raw_sample_memo_find(&m, other, size, 1, &hash);
	ok(found && found->stack == 0, "raw sample memo: a block is found again at another time, weight and CPU");
	if (found)
		found->repeats++;
	ok(!raw_sample_memo_find(&m, other, size, 2, &hash),
	   "raw sample memo: another period is another sample");
	ok(!raw_sample_memo_find(&m, other, size - 1, 1, &hash),
	   "raw sample memo: a shorter block is another sample");
	for (uint32_t i = offsetof(struct srec_sample, pid); i < size; i++) {
		if (i >= offsetof(struct srec_sample, cpu) && i < offsetof(struct srec_sample, kind))
			continue;
		memcpy(other, block, size);
		other[i] ^= 1;
		right &= !raw_sample_memo_find(&m, other, size, 1, &hash);
	}
	ok(right, "raw sample memo: a block that differs in any byte but its time, weight and CPU is another sample");
	raw_sample_memo_release(&m);
	ok(spilled[0] == 1, "raw sample memo: its repeats are spilled when it is released");

	spilled[0] = 0;
	raw_sample_memo_init(&m, add_repeats, spilled);
	m.max_bytes = 4096;
	right = true;
	for (uint64_t i = 0; i < 10000; i++) {
		uint64_t ip = i / 3; /* each block three times: added, then found twice (unless the memo started over) */

		memcpy(block + sizeof(s), &ip, sizeof(ip));
		found = raw_sample_memo_find(&m, block, size, 1, &hash);
		if (found) {
			right &= found->stack == ip % 2;
			found->repeats++;
			counted++;
		} else {
			answer.stack = (uint32_t)(ip % 2);
			raw_sample_memo_add(&m, hash, block, size, 1, &answer);
		}
		bounded &= m.bytes <= m.max_bytes;
	}
	raw_sample_memo_release(&m);
	ok(right && bounded && counted > 0 && spilled[0] + spilled[1] == counted,
	   "raw sample memo: past its bound it starts over, never holding more, every repeat spilled once");

	/*
	 * Blocks alike but in their last byte, past the 96 bytes the hash reads, share a hash: a few are kept, never
	 * mixed up.
	 */
	raw_sample_memo_init(&m, add_repeats, spilled);
	right = true;
	counted = 0;
	memcpy(large, block, size);
	for (int round = 0; round < 2; round++)
		for (uint32_t i = 0; i < 40; i++) {
			large[sizeof(large) - 1] = (unsigned char)i;
			found = raw_sample_memo_find(&m, large, sizeof(large), 1, &hash);
			if (found) {
				right &= found->stack == i;
				counted++;
			} else {
				answer.stack = i;
				raw_sample_memo_add(&m, hash, large, sizeof(large), 1, &answer);
			}
		}
	ok(right && counted > 0 && counted < 40 && m.count == counted,
	   "raw sample memo: of blocks that share a hash it keeps a few, and answers each with its own");
	raw_sample_memo_release(&m);
}

/* A child forked without exec resolves through its parent's mappings at the fork (perf's thread__clone_maps). */
static void test_process_maps_fork(void)
{
	struct process_maps maps;
	struct profile p;
	struct srec_mapping m;
	uint32_t module, parent_image, exec_image, own;
	uint64_t off;

	profile_init(&p);
	process_maps_init(&maps);
	m = mapping(10, 0x1000, 0x2000, 0x100, 5);
	process_maps_add_mapping(&maps, &p, &m, "/parent");
	process_maps_add_fork(&maps, 11, 10, 20);
	process_maps_add_fork(&maps, 10, 10, 25); /* a thread of 10: nothing inherited */
	process_maps_add_exec(&maps, 10, 40);
	m = mapping(10, 0x1000, 0x3000, 0, 41);
	process_maps_add_mapping(&maps, &p, &m, "/exec");
	m = mapping(11, 0x1000, 0x1800, 0, 60); /* the child's own mmap over part of the inherited one */
	process_maps_add_mapping(&maps, &p, &m, "/own");
	process_maps_add_fork(&maps, 12, 11, 65);
	process_maps_add_exec(&maps, 11, 80);
	process_maps_add_fork(&maps, 13, 10, 100);
	process_maps_add_fork(&maps, 20, 21, 1); /* a loop, as a hostile recording may have */
	process_maps_add_fork(&maps, 21, 20, 2);
	process_maps_add_fork(&maps, 22, 22, 2);
	process_maps_add_existing(&maps, 10);
	m = mapping(1000, 0x1000, 0x2000, 0, 1);
	process_maps_add_mapping(&maps, &p, &m, "/parent");
	for (uint32_t pid = 1001; pid <= 1020; pid++) /* a chain of forks: 1020 is 20 forks below 1000 */
		process_maps_add_fork(&maps, pid, pid - 1, pid);
	for (int i = 0; i < 100000; i++) /* many forks each way between two processes */
		process_maps_add_fork(&maps, 30 + (i & 1), 31 - (i & 1), (uint64_t)i);
	process_maps_finish(&maps);
	parent_image = profile_intern_module(&p, "/parent", NULL, 0, 0, 0, false);
	exec_image = profile_intern_module(&p, "/exec", NULL, 0, 0, 0, false);
	own = profile_intern_module(&p, "/own", NULL, 0, 0, 0, false);
	ok(process_maps_resolve(&maps, 11, 30, 0x1100, &module, &off) && module == parent_image && off == 0x200,
	   "fork: the child resolves through its parent's mapping");
	ok(process_maps_resolve(&maps, 11, 50, 0x1100, &module, &off) && module == parent_image,
	   "fork: the parent as it was at the fork, not after its exec");
	ok(process_maps_resolve(&maps, 11, 55, 0x1100, &module, &off) && module == parent_image,
	   "fork: the child's later mmap does not apply before it");
	ok(process_maps_resolve(&maps, 11, 70, 0x1100, &module, &off) && module == own,
	   "fork: the child's own mmap wins after it");
	ok(process_maps_resolve(&maps, 11, 70, 0x1900, &module, &off) && module == parent_image,
	   "fork: inherited where the child's own mmap does not reach");
	ok(!process_maps_resolve(&maps, 11, 90, 0x1900, &module, &off), "fork: nothing inherited after the child's exec");
	ok(process_maps_resolve(&maps, 12, 90, 0x1900, &module, &off) && module == parent_image &&
		   process_maps_resolve(&maps, 12, 90, 0x1100, &module, &off) && module == own,
	   "fork: a grandchild through its parent's own mapping, then its grandparent's");
	ok(process_maps_resolve(&maps, 13, 99, 0x2100, &module, &off) && module == exec_image,
	   "fork: a sample stamped before its fork record uses that fork");
	ok(!process_maps_resolve(&maps, 20, 10, 0x1100, &module, &off) &&
		   !process_maps_resolve(&maps, 22, 10, 0x1100, &module, &off),
	   "fork: a loop of forks ends, without a mapping");
	ok(process_maps_resolve(&maps, 1016, 2000, 0x1100, &module, &off) && module == parent_image &&
		   !process_maps_resolve(&maps, 1017, 2000, 0x1100, &module, &off),
	   "fork: a chain is followed 16 forks up, no further");
	ok(!process_maps_resolve(&maps, 30, 50000, 0x1100, &module, &off) && !process_maps_has_mappings(&maps, 30),
	   "fork: many forks back and forth end, without a mapping");
	ok(maps.forks == 5 + 20 + 100000, "fork: new threads are not forks of processes");
	ok(process_maps_has_mappings(&maps, 12) && !process_maps_has_mappings(&maps, 20) &&
		   !process_maps_has_mappings(&maps, 99),
	   "fork: a child has mappings through its parent; a loop or an unknown process has none");
	ok(process_maps_existed_at_start(&maps, 10) && !process_maps_existed_at_start(&maps, 11),
	   "a process running at start is known as such");
	ok(periods_hold(&maps, 11, 100, (const uint64_t[]){ 0x1100, 0x1900, 0x2100 }, 3, 3) &&
		   periods_hold(&maps, 12, 100, (const uint64_t[]){ 0x1100, 0x1900 }, 2, 1) &&
		   periods_hold(&maps, 13, 120, (const uint64_t[]){ 0x1100, 0x2100 }, 2, 1),
	   "fork: within one period of a child's history, it resolves every address the same");
	process_maps_release(&maps);
	profile_release(&p);
}

static void test_kernel_symbols(void)
{
	static const char text[] = "ffffffff81000100 T b_second\n"
				   "ffffffff81000000 t __alias\n"
				   "ffffffff81000000 T _stext\n"
				   "ffffffff81000000 T startup\n"
				   "ffffffff81000200 D data_is_skipped\n"
				   "ffffffffc0001000 t mod_func\t[ext4]\n"
				   "ffffffffc0002000 t mod_other\t[ext4]\n";
	/* 1.4: a line without a name only ends the symbol before it; a named alias at its address wins */
	static const char ends[] = "ffffffff81000000 T first\nffffffff81000100 t\nffffffff81000200 T \n"
				   "ffffffff81000300 T\nffffffff81000300 t third\nffffffff81000400 T\n";
	struct kernel_symbols ks;
	const struct kernel_symbol *s;

	kernel_symbols_init(&ks);
	kernel_symbols_add_text(&ks, text, 40); /* split mid-line, as blocks may */
	kernel_symbols_add_text(&ks, text + 40, sizeof(text) - 41);
	ok(kernel_symbols_finish(&ks) == 4, "kallsyms: functions kept, one per address");
	s = kernel_symbols_find(&ks, 0xffffffff81000010);
	ok_str(s ? s->name : NULL, "startup", "kallsyms: global, fewest underscores, shortest alias");
	s = kernel_symbols_find(&ks, 0xffffffff81000150);
	ok_str(s ? s->name : NULL, "b_second", "kallsyms: address → preceding symbol");
	s = kernel_symbols_find(&ks, 0xffffffffc0001004);
	ok(s && !strcmp(s->name, "mod_func") && s->module && !strcmp(s->module, "ext4"), "kallsyms: module");
	ok(!kernel_symbols_find(&ks, 0xffffffff80000000), "kallsyms: below the first symbol");
	ok(!kernel_symbols_find(&ks, 0xffffffffb0000000), "kallsyms: not in the gap before the modules");
	kernel_symbols_release(&ks);

	kernel_symbols_init(&ks);
	kernel_symbols_add_text(&ks, ends, sizeof(ends) - 1);
	ok(kernel_symbols_finish(&ks) == 5, "kallsyms: ends kept, one per address");
	s = kernel_symbols_find(&ks, 0xffffffff810000ff);
	ok_str(s ? s->name : NULL, "first", "kallsyms: up to its end");
	ok(!kernel_symbols_find(&ks, 0xffffffff81000100), "kallsyms: past its end, no name");
	ok(!kernel_symbols_find(&ks, 0xffffffff81000250), "kallsyms: an end with a trailing space");
	s = kernel_symbols_find(&ks, 0xffffffff81000310);
	ok_str(s ? s->name : NULL, "third", "kallsyms: a name before an end at the same address");
	ok(!kernel_symbols_find(&ks, 0xffffffff81000400), "kallsyms: past the last end");
	kernel_symbols_release(&ks);

	kernel_symbols_init(&ks);
	kernel_symbols_add_text(&ks, "0000000000000000 T a\n0000000000000000 T b\n", 42);
	ok(kernel_symbols_finish(&ks) == 0 && ks.hidden, "kallsyms: all-zero addresses mean hidden");
	kernel_symbols_release(&ks);

	/* The text is bounded: a forged recording of a few highly compressed frames made convert hold gigabytes. */
	kernel_symbols_init(&ks);
	ok(ks.text_max == KERNEL_SYMBOLS_TEXT_MAX, "kallsyms: the text is bounded by default");
	ks.text_max = 60;
	kernel_symbols_add_text(&ks, "ffffffff81000000 T one\n", 23);
	kernel_symbols_add_text(&ks, "ffffffff81000100 T two\n", 23);
	kernel_symbols_add_text(&ks, "ffffffff81000200 T three\n", 25);
	ok(kernel_symbols_finish(&ks) == 2 && ks.dropped == 25 && (s = kernel_symbols_find(&ks, 0xffffffff81000210)) &&
		   !strcmp(s->name, "two"),
	   "kallsyms: text past the bound is not kept, and counted");
	kernel_symbols_release(&ks);
}

static void test_demangle(void)
{
	char *s;

	s = demangle_name("_ZN2ns3fooEic", true);
	ok_str(s, "ns::foo(int, char)", "demangles C++");
	free(s);
	s = demangle_name("_ZN4core3ptr13drop_in_place17h0123456789abcdefE", true);
	ok_str(s, "core::ptr::drop_in_place", "demangles legacy Rust without the hash");
	free(s);
	s = demangle_name("_ZN2ns3fooEic", false);
	ok_str(s, "_ZN2ns3fooEic", "--no-demangle keeps the name");
	free(s);
	s = demangle_name("main", true);
	ok_str(s, "main", "C names stay");
	free(s);
}

/* util.h's pointer_table numbers each pointer once, in the order added, through growth. */
static void test_pointer_table(void)
{
	struct pointer_table t = { 0 };
	static char keys[3000];
	bool added, all_new = true, all_same = true;

	for (size_t i = 0; i < sizeof(keys); i++)
		all_new &= pointer_table_add(&t, &keys[i], &added) == i && added;
	ok(all_new && t.count == sizeof(keys), "pointer_table: each new pointer gets the next number");
	for (size_t i = sizeof(keys); i-- > 0;)
		all_same &= pointer_table_add(&t, &keys[i], &added) == i && !added;
	ok(all_same && t.count == sizeof(keys), "pointer_table: a pointer seen keeps its number after growing");
	pointer_table_release(&t);
	ok(!t.keys && !t.count, "pointer_table: released is empty");
}

/* The folded writer makes exactly `expected` of p. */
static void check_folded(const struct profile *p, const struct output_options *options, const char *expected,
			 const char *title)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	output_format_find("folded")->write(p, options, f);
	fclose(f);
	ok_str(out, expected, title);
	free(out);
}

/* A profile by hand: one stack with odd names, for the folded writer. */
/*
 * flamegraph.pl reads UTF-8: its \s takes the no-break and ideographic spaces, its \d every script's digits, so a
 * leaf named "tick<NBSP>42" read as a differential line ("tick", 42 before). Such a space becomes '_'.
 */
static void test_folded_unicode_numbers(void)
{
	static const char *names[] = { "tick\xc2\xa0" "42", "wide\xe3\x80\x80" "7", "arabic digit 1\xd9\xa3", "no\xc2\xa0" "digits" };
	struct output_options options = { 0 };
	struct profile p;
	uint32_t stack[1];

	profile_init(&p);
	for (uint32_t i = 0; i < 4; i++) {
		struct profile_location *l;

		stack[0] = profile_intern_location(&p, PROFILE_LOCATION_USER, PROFILE_NO_MODULE, 0x1000 + i, 0x1000 + i,
						   false, PROFILE_UNWIND_PC);
		l = &p.locations[stack[0]];
		l->frames = xcalloc(1, sizeof(*l->frames));
		l->frames[0].function = xstrdup(names[i]);
		l->frame_count = 1;
		add(&p, 5, 5, "t", ON, 10 + i, 1000000, stack, 1, 0);
	}
	profile_finish(&p);
	check_folded(&p, &options,
		     "t;arabic digit_1\xd9\xa3 1\nt;no\xc2\xa0" "digits 1\nt;tick_42 1\nt;wide_7 1\n",
		     "folded: a Unicode space before digits (any script's) becomes '_', one before letters stays");
	profile_release(&p);
}

/* A forged off-CPU weight near 2^64: the stack's time saturates, and folded shows it, rounded without wrapping
 * (it wrapped to 0, and the stack was left out). */
static void test_folded_huge_weight(void)
{
	struct output_options options = { .kind = OUTPUT_KIND_OFF_CPU };
	struct profile p;
	uint32_t stack[1];
	struct profile_location *l;

	profile_init(&p);
	stack[0] = profile_intern_location(&p, PROFILE_LOCATION_USER, PROFILE_NO_MODULE, 0x1000, 0x1000, false,
					   PROFILE_UNWIND_PC);
	l = &p.locations[stack[0]];
	l->frames = xcalloc(1, sizeof(*l->frames));
	l->frames[0].function = xstrdup("blocked");
	l->frame_count = 1;
	add(&p, 5, 5, "t", OFF, 10, UINT64_MAX - 100, stack, 1, 0);
	add(&p, 5, 5, "t", OFF, 20, 1000, stack, 1, 0);
	profile_finish(&p);
	check_folded(&p, &options, "t;blocked 18446744073709552\n",
		     "folded --kind off: a weight near 2^64 saturates the stack's time, not wraps it");
	ok(p.total_off_cpu_ns == UINT64_MAX, "profile: the total off-CPU time saturates too");
	profile_release(&p);
}

static void test_folded(void)
{
	const struct output_format *folded = output_format_find("folded");
	struct output_options options = { 0 };
	struct profile p;
	uint32_t m, k, u, n, mk, stack[4];
	struct profile_location *l;

	ok(folded != NULL, "folded is in the format table");
	if (!folded)
		return;
	profile_init(&p);
	m = profile_intern_module(&p, "/usr/lib/libx.so.1 (deleted)", "ab", 0, 0, 0, false);
	k = profile_intern_location(&p, PROFILE_LOCATION_KERNEL, PROFILE_NO_MODULE, 0xffff1, 0xffff1, false, PROFILE_UNWIND_KERNEL);
	u = profile_intern_location(&p, PROFILE_LOCATION_USER, m, 0x1234, 0x234, true, PROFILE_UNWIND_FRAME_POINTER);
	n = profile_intern_location(&p, PROFILE_LOCATION_USER, m, 0x1300, 0x300, true, PROFILE_UNWIND_FRAME_POINTER);
	mk = profile_intern_marker(&p, PROFILE_LOCATION_USER, "[user stack error -EFAULT]");
	l = &p.locations[k];
	l->frames = xcalloc(1, sizeof(*l->frames));
	l->frames[0].function = xstrdup("do_sys;call\n 12");
	l->frame_count = 1;
	l = &p.locations[u];
	l->frames = xcalloc(2, sizeof(*l->frames));
	l->frames[0].function = xstrdup("inner 3.5");
	l->frames[0].inlined = true;
	l->frames[1].function = xstrdup("outer");
	l->frame_count = 2;
	p.locations[n].unnamed_reason = "no symbols";
	stack[0] = k;
	stack[1] = u;
	stack[2] = n;
	stack[3] = mk;
	add(&p, 5, 6, "my thread", ON, 10, 1000000, stack, 4, -14);
	add(&p, 5, 7, "my thread", ON, 10, 1000000, stack, 4, -14);
	add(&p, 5, 6, "my thread", OFF, 20, 2500, stack, 4, -14); /* 2.5 µs: rounds to 3 */
	add(&p, 5, 6, "my thread", OFF, 30, 400, stack, 2, 0);	  /* 0.4 µs: rounds to nothing */
	profile_finish(&p);

	check_folded(&p, &options,
		     "my_thread;[user stack error -EFAULT];[libx.so.1];outer;inner_3.5;do_sys:call?_12_[k] 2\n",
		     "folded: escaping, inline frames, unnamed frames, kernel suffix, threads summed");

	options.per_tid = true;
	options.annotate = true;
	options.addrs = true;
	check_folded(&p, &options,
		     "my_thread-5/6;[user stack error -EFAULT];[libx.so.1 <0x300>];outer;inner_3.5_[i];do_sys:call?_12_[k] 1\n"
		     "my_thread-5/7;[user stack error -EFAULT];[libx.so.1 <0x300>];outer;inner_3.5_[i];do_sys:call?_12_[k] 1\n",
		     "folded: --tid --annotate --addrs");

	options.annotate = options.addrs = false;
	options.kind = OUTPUT_KIND_OFF_CPU;
	check_folded(&p, &options,
		     "my_thread-5/6;[user stack error -EFAULT];[libx.so.1];outer;inner_3.5;do_sys:call?_12_[k] 3\n",
		     "folded --kind off: off-CPU microseconds, rounded; a stack worth nothing is left out");

	options.kind = OUTPUT_KIND_WALL;
	check_folded(&p, &options,
		     "my_thread-5/6;[user stack error -EFAULT];[libx.so.1];outer;inner_3.5;do_sys:call?_12_[k] 1003\n"
		     "my_thread-5/7;[user stack error -EFAULT];[libx.so.1];outer;inner_3.5;do_sys:call?_12_[k] 1000\n",
		     "folded --kind wall: on-CPU periods and off-CPU time of each thread in microseconds");
	ok(output_kind_of(&p, NULL) == OUTPUT_KIND_ON_CPU, "the default kind is on with on-CPU samples");
	p.on_cpu_samples = 0;
	ok(output_kind_of(&p, NULL) == OUTPUT_KIND_OFF_CPU, "the default kind is off without them");
	profile_release(&p);
}

/* A perf map is a file anyone's process writes: a NUL byte ends its line, not the whole map. */
static void test_jit_maps(void)
{
	static const char text[] = "1000 10 first\n"
				   "2000 10 bro\0ken\n"
				   "garbage\n"
				   "\n"
				   "3000 10 after_nul";
	struct jit_maps maps;

	jit_maps_init(&maps);
	jit_maps_add_text(&maps, 42, 0, text, 14);
	jit_maps_add_text(&maps, 42, 14, text + 14, sizeof(text) - 1 - 14);
	jit_maps_finish(&maps);
	ok_str(jit_maps_lookup(&maps, 42, 0x1008), "first", "jit map: a line before a NUL byte");
	ok(!jit_maps_lookup(&maps, 42, 0x2008), "jit map: the line with a NUL byte is skipped");
	ok_str(jit_maps_lookup(&maps, 42, 0x3004), "after_nul", "jit map: the lines after a NUL byte are read");
	ok(maps.bad_lines == 2, "jit map: the NUL line and the garbage line are counted");
	jit_maps_release(&maps);

	/* All the maps' text is bounded: a recording can hold any number of maps of a gigabyte each. */
	jit_maps_init(&maps);
	ok(maps.text_max == JIT_MAPS_TEXT_MAX, "jit maps: their text is bounded by default");
	maps.text_max = 28;
	jit_maps_add_text(&maps, 1, 0, "1000 10 one\n", 12);
	jit_maps_add_text(&maps, 2, 0, "2000 10 two\n", 12);
	jit_maps_add_text(&maps, 3, 0, "3000 10 three\n", 14);
	jit_maps_add_text(&maps, 2, 12, "2100 10 more\n", 13);
	jit_maps_finish(&maps);
	ok_str(jit_maps_lookup(&maps, 1, 0x1008), "one", "jit maps: the first map within the bound is read");
	ok_str(jit_maps_lookup(&maps, 2, 0x2008), "two", "jit maps: the second map within the bound is read");
	ok(!jit_maps_lookup(&maps, 3, 0x3008) && !jit_maps_lookup(&maps, 2, 0x2108) && maps.text_bytes == 24 &&
		   maps.text_dropped == 27,
	   "jit maps: text past the bound is not kept, and counted");
	jit_maps_release(&maps);

	/* ... and so are their symbols (a six-byte line is one). */
	jit_maps_init(&maps);
	ok(maps.symbols_left == JIT_MAPS_SYMBOLS_MAX, "jit maps: their symbols are bounded by default");
	maps.symbols_left = 2;
	jit_maps_add_text(&maps, 1, 0, "1000 10 one\n1100 10 two\n1200 10 three\n", 37);
	jit_maps_finish(&maps);
	ok(jit_maps_lookup(&maps, 1, 0x1108) && !jit_maps_lookup(&maps, 1, 0x1208) && maps.symbols_dropped == 1,
	   "jit maps: symbols past the bound are not kept, and counted");
	jit_maps_release(&maps);
}

/*
 * Adds text to process pid's map from a buffer of exactly its bytes, no NUL after them (a FILE block's data is
 * not terminated either), in two pieces cut at cut; the buffer is freed at once. Under SANITIZE=1, a parse that
 * reads past the text or a name left pointing into the caller's buffer is then an ASan error.
 */
static void add_map_text(struct jit_maps *maps, uint32_t pid, const char *text, size_t cut)
{
	size_t len = strlen(text);
	char *exact = xmalloc(len ? len : 1);

	memcpy(exact, text, len);
	jit_maps_add_text(maps, pid, 0, exact, cut);
	jit_maps_add_text(maps, pid, cut, exact + cut, len - cut);
	free(exact);
}

/*
 * The ends of a perf map's lines: the last line of a map the JIT is still writing has no newline, a map written
 * with CRLF line ends has a '\r' before each '\n' (it is not part of the name), and empty lines are skipped
 * without being counted as bad. Names point into the map's kept text, so each must end exactly where its line
 * does: its first and last byte named, the byte after it not.
 */
static void test_jit_maps_line_ends(void)
{
	struct jit_maps maps;

	jit_maps_init(&maps);
	/* no final newline; cut inside the last name */
	add_map_text(&maps, 1, "1000 10 first\n2000 20 second\n3000 30 last", 38);
	/* CRLF, the cut between a '\r' and its '\n'; and CRLF with the last line unterminated */
	add_map_text(&maps, 2, "1000 10 first\r\n2000 20 second\r\n3000 30 last\r\n", 14);
	add_map_text(&maps, 3, "1000 10 first\r\n\r\n3000 30 last", 15);
	/* empty lines first, between and last; spaces inside and at the end of a name are the name's */
	add_map_text(&maps, 4, "\n\n1000 10 LazyCompile:*f /x.js:1\n\n\n2000 20 padded  \n3000 30 last\n\n\n", 5);
	/* one line, no newline at all, cut right after its SIZE; 32 bytes: capacities double from 16, so a text of
	 * a power of two bytes would fill its buffer to the last byte, and a name not ended within it be overread */
	add_map_text(&maps, 5, "4000 8 name_that_ends_at_byte_32", 6);
	jit_maps_finish(&maps);

	ok_str(jit_maps_lookup(&maps, 1, 0x1000), "first", "jit map, no final newline: the first line");
	ok_str(jit_maps_lookup(&maps, 1, 0x2000), "second", "jit map, no final newline: the second line");
	ok_str(jit_maps_lookup(&maps, 1, 0x302f), "last", "jit map, no final newline: the last line, whole");
	ok(!jit_maps_lookup(&maps, 1, 0x3030), "jit map, no final newline: the last line's SIZE is its size");
	ok_str(jit_maps_lookup(&maps, 2, 0x100f), "first", "jit map, CRLF: no '\\r' in the first name, cut before '\\n'");
	ok_str(jit_maps_lookup(&maps, 2, 0x2000), "second", "jit map, CRLF: none in the second");
	ok_str(jit_maps_lookup(&maps, 2, 0x302f), "last", "jit map, CRLF: none in the last");
	ok_str(jit_maps_lookup(&maps, 3, 0x1000), "first", "jit map, CRLF and no final newline: the first line");
	ok_str(jit_maps_lookup(&maps, 3, 0x3000), "last", "jit map, CRLF and no final newline: the last line");
	ok_str(jit_maps_lookup(&maps, 4, 0x1000), "LazyCompile:*f /x.js:1", "jit map: a name's spaces are its own");
	ok_str(jit_maps_lookup(&maps, 4, 0x2000), "padded  ", "jit map: and so are its trailing spaces (as perf)");
	ok_str(jit_maps_lookup(&maps, 4, 0x302f), "last", "jit map: the last line before empty lines");
	ok(!jit_maps_lookup(&maps, 4, 0x3030), "jit map: empty lines make no symbol");
	ok_str(jit_maps_lookup(&maps, 5, 0x4007), "name_that_ends_at_byte_32", "jit map: one line, no newline");
	ok(maps.bad_lines == 0, "jit map: empty lines and CRLF line ends are not malformed lines");
	jit_maps_release(&maps);
}

/* A PROBE_HIT body of a probe with arguments (id:s64, name:str). */
static size_t hit(uint64_t *buf, uint32_t pid, uint32_t tid, uint64_t time_ns, uint64_t cfa, int64_t id,
		  const char *name)
{
	struct srec_probe_hit h = { .time_ns = time_ns, .pid = pid, .tid = tid, .probe_id = 7, .value_count = 2,
				    .cfa = cfa };
	uint16_t len = (uint16_t)strlen(name);
	unsigned char *b = (unsigned char *)buf;

	h.strings_size = (uint16_t)(2 + len);
	memcpy(b, &h, sizeof(h));
	buf[4] = (uint64_t)id;
	buf[5] = 0x5000;
	memcpy(b + 48, &len, 2);
	memcpy(b + 50, name, len);
	return 50 + len;
}

/* An enricher of p's probe 1 (p's only probe) for a file of file_size bytes, given n hits (buf: room for one). */
static struct enricher *enricher_with_hits(struct profile *p, uint64_t file_size, uint64_t n, uint64_t *buf)
{
	struct enricher *e;

	p->context_omitted = NULL;
	p->probe_count = 1;
	e = enricher_new(p, file_size, SREC_VERSION_MINOR);
	for (uint64_t i = 0; i < n; i++)
		enrich_add_hit(e, i, buf, (uint32_t)hit(buf, 10, 11, 100 + i, 0x7000, 1, "x"));
	enrich_finish_hits(e, false, true);
	return e;
}

/* The directory of the checked-in fixtures: this binary is ROOT/build*\/tests/test-convert. */
static char *fixtures_dir(void)
{
	char *exe = realpath("/proc/self/exe", NULL), *slash, *dir;

	for (int i = 0; exe && i < 3 && (slash = strrchr(exe, '/')); i++)
		*slash = '\0';
	dir = exe ? xasprintf("%s/fixtures", exe) : NULL;
	free(exe);
	return dir;
}

/*
 * Enrichment (convert/enrich.c) on the real symbols of fixtures/bin/unwind: a probe on descend() (st_value
 * 0x12c0), locations in descend and in hot, hits of several calls, threads and depths. A frame gets the
 * latest hit of its own thread, probe and CFA at or before the sample, or nothing.
 */
static void test_enrich(void)
{
	static const char build_id[] = "7463e9a7aa7b858681f82125c018da6486b5afc7";
	struct recording_probe probe = { .header = { .probe_id = 7, .arg_count = 2, .address = 0x12c0,
						     .build_id_size = 20 },
					 .binary = "/x/unwind", .function = "descend",
					 .args = { { "id", 2, RECORDING_ARG_S64 }, { "name", 4, RECORDING_ARG_STR } } };
	char *dir = fixtures_dir(), *bin = dir ? xasprintf("%s/bin/unwind", dir) : NULL;
	const char *dirs[1] = { dir };
	struct debug_file_search search = { .dirs = dirs, .dir_count = 1 };
	struct process_maps maps;
	struct profile p;
	struct enricher *e;
	struct unwinder *u;
	uint32_t module, in_descend, in_hot, locs[4], hits[4];
	uint64_t cfas[4], buf[32], ordinal = 0;
	struct {
		uint32_t pid, tid;
		uint64_t time_ns, cfa;
		int64_t id;
		const char *name;
	} calls[] = {
		{ 10, 11, 100, 0x7000, 1, "one" },   /* three calls at one depth, one after the other */
		{ 10, 11, 200, 0x7000, 2, "two" },
		{ 10, 11, 300, 0x7000, 3, "three" },
		{ 10, 11, 250, 0x6f00, 99, "deep" }, /* a recursive call inside the second */
		{ 10, 12, 280, 0x7000, 50, "other" }, /* another thread, same CFA */
		{ 20, 11, 290, 0x7000, 60, "other" }, /* another process, same tid and CFA */
	};

	for (size_t i = 0; i < sizeof(build_id) / 2; i++) {
		unsigned int byte;

		sscanf(build_id + 2 * i, "%2x", &byte);
		probe.header.build_id[i] = (uint8_t)byte;
	}
	unsetenv("DEBUGINFOD_URLS");
	profile_init(&p);
	process_maps_init(&maps);
	process_maps_finish(&maps);
	module = profile_intern_module(&p, bin ? bin : "?", build_id, 0x1000, 0x2000, 0x1000, false);
	in_descend = profile_intern_location(&p, PROFILE_LOCATION_USER, module, 0x55550012d0, 0x12d0, true,
					     PROFILE_UNWIND_CFI);
	in_hot = profile_intern_location(&p, PROFILE_LOCATION_USER, module, 0x5555001330, 0x1330, true,
					 PROFILE_UNWIND_CFI);
	u = unwinder_new(&p, &maps, &search);
	e = enricher_new(&p, 1 << 20, SREC_VERSION_MINOR);
	ok(enrich_add_probe(e, &probe) == 0 && enrich_add_probe(e, &probe) < 0, "enrich: a probe id is added once");
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
		size_t n = hit(buf, calls[i].pid, calls[i].tid, calls[i].time_ns, calls[i].cfa, calls[i].id, calls[i].name);

		enrich_add_hit(e, ordinal++, buf, (uint32_t)n);
	}
	enrich_finish_hits(e, false, true);
	ok(!p.context_omitted && p.probe_hits == ARRAY_SIZE(calls) && p.probes[0].hits == ARRAY_SIZE(calls),
	   "enrich: hits counted, context trusted");

	/* At 260: the recursive call innermost, the second call outside it; hot's frame has no probe. */
	locs[0] = in_hot, locs[1] = in_descend, locs[2] = in_descend;
	cfas[0] = 0x6e00, cfas[1] = 0x6f00, cfas[2] = 0x7000;
	ok(enrich_stack(e, u, 10, 11, 260, locs, cfas, 3, hits), "enrich: a stack with probed frames gets context");
	ok(hits[0] == PROFILE_NO_HIT && hits[1] != PROFILE_NO_HIT && hits[2] != PROFILE_NO_HIT &&
	   p.hits[hits[1]].time_ns == 250 && p.hits[hits[2]].time_ns == 200,
	   "enrich: recursion: each frame the call at its own CFA, the latest before the sample");
	/* At 300 exactly, the third call (entered then); at 150 the first; before any, nothing. */
	ok(enrich_stack(e, u, 10, 11, 300, locs + 2, cfas + 2, 1, hits) && p.hits[hits[0]].time_ns == 300,
	   "enrich: a hit at the sample's time is the frame's call");
	ok(enrich_stack(e, u, 10, 11, 150, locs + 2, cfas + 2, 1, hits) && p.hits[hits[0]].time_ns == 100,
	   "enrich: a later call's values never reach an earlier sample");
	ok(!enrich_stack(e, u, 10, 11, 50, locs + 2, cfas + 2, 1, hits) && hits[0] == PROFILE_NO_HIT,
	   "enrich: no call entered yet: no context");
	/* Other threads and processes see their own calls only; an unknown CFA or another CFA gets nothing. */
	ok(enrich_stack(e, u, 10, 12, 400, locs + 2, cfas + 2, 1, hits) && p.hits[hits[0]].time_ns == 280,
	   "enrich: another thread gets its own call");
	ok(!enrich_stack(e, u, 30, 11, 400, locs + 2, cfas + 2, 1, hits), "enrich: a thread without hits gets none");
	cfas[3] = 0;
	locs[3] = in_descend;
	ok(!enrich_stack(e, u, 10, 11, 400, locs + 3, cfas + 3, 1, hits) && enrich_frames_without_cfa(e) == 1,
	   "enrich: a frame whose CFA is unknown gets none, and is counted");
	cfas[3] = 0x7008;
	ok(!enrich_stack(e, u, 10, 11, 400, locs + 3, cfas + 3, 1, hits), "enrich: no call at the frame's CFA: none");

	/* Pass 3: the values of the hits shown, read again in file order. */
	ok(enrich_wants_values(e), "enrich: values are wanted for the hits shown");
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
		size_t n = hit(buf, calls[i].pid, calls[i].tid, calls[i].time_ns, calls[i].cfa, calls[i].id, calls[i].name);

		enrich_add_hit_values(e, i, buf, (uint32_t)n);
	}
	{
		bool all = true;

		for (size_t h = 0; h < p.hit_count; h++) {
			size_t i = 0;

			while (i < ARRAY_SIZE(calls) && calls[i].time_ns != p.hits[h].time_ns)
				i++;
			all = all && i < ARRAY_SIZE(calls) && (int64_t)p.hits[h].values[0] == calls[i].id &&
			      p.hits[h].strings[1] && !strcmp(p.hits[h].strings[1], calls[i].name);
		}
		ok(all && p.hit_count == 5, "enrich: each shown hit has its own call's id and name");
	}
	enricher_free(e);

	/* Lost hits: no frame gets context, and the reason is given; likewise a hit of no probe. */
	p.lost_probe_hits = 1;
	e = enricher_new(&p, 1 << 20, SREC_VERSION_MINOR);
	enrich_add_hit(e, 0, buf, (uint32_t)hit(buf, 10, 11, 100, 0x7000, 1, "one"));
	enrich_finish_hits(e, false, true);
	ok(p.context_omitted && !enrich_stack(e, u, 10, 11, 200, locs + 2, cfas + 2, 1, hits),
	   "enrich: lost hits: no context, a reason");
	enricher_free(e);
	p.lost_probe_hits = 0;
	p.context_omitted = NULL;
	e = enricher_new(&p, 1 << 20, SREC_VERSION_MINOR);
	hit(buf, 10, 11, 100, 0x7000, 1, "one");
	((struct srec_probe_hit *)buf)->probe_id = 8;
	ok(enrich_add_hit(e, 0, buf, 64) < 0, "enrich: a hit of an unknown probe is refused");
	enrich_finish_hits(e, false, true);
	ok(p.context_omitted && !enrich_stack(e, u, 10, 11, 200, locs + 2, cfas + 2, 1, hits),
	   "enrich: ... and ends context");
	enricher_free(e);
	/* A file of 4,000 bytes may hold 3,000 hits (a real one packs a hit in 2.4 bytes): context is shown. */
	e = enricher_with_hits(&p, 4000, 3000, buf);
	ok(!p.context_omitted, "enrich: three hits in four bytes of file are not too many");
	enricher_free(e);
	/* More hits than the file's size can hold (one per byte, plus 1,024): none is trusted. */
	e = enricher_with_hits(&p, 0, 1100, buf);
	ok(p.context_omitted && strstr(p.context_omitted, "file's size") &&
		   !enrich_stack(e, u, 10, 11, 5000, locs + 2, cfas + 2, 1, hits),
	   "enrich: a file with more hits than its size implies gets no context");
	enricher_free(e);
	unwinder_free(u);
	process_maps_release(&maps);
	profile_release(&p);
	free(bin);
	free(dir);
}

/* Events measure no time: counted apart, out of every value of the outputs that show time or samples. */
static void test_events(void)
{
	struct profile p;
	uint32_t stack[1], index;
	struct profile_sample_info s = { .pid = 1, .tid = 1, .comm = "c", .kind = PROFILE_SAMPLE_EVENT, .time_ns = 5 };

	profile_init(&p);
	p.keep_timeline = true;
	stack[0] = profile_intern_marker(&p, PROFILE_LOCATION_USER, "f");
	index = profile_add_sample(&p, &s, stack, 1);
	profile_add_event(&p, &(struct profile_event){ .time_ns = 5, .stack = index, .type = PROFILE_EVENT_SIGNAL,
							.signo = 11, .code = 1 });
	add(&p, 1, 1, "c", ON, 4, 1000, stack, 1, 0);
	profile_finish(&p);
	ok(p.event_count == 1 && p.total_samples == 1 && p.timeline_count == 1 && p.total_on_cpu_ns == 1000,
	   "events: not samples, not in the timeline");
	ok(p.stacks[p.events[0].stack].kind == PROFILE_SAMPLE_EVENT, "events: the event's stack follows the sort");
	for (size_t i = 0; i < p.stack_count; i++)
		if (p.stacks[i].kind == PROFILE_SAMPLE_EVENT)
			ok(output_stack_value(&p.stacks[i], OUTPUT_KIND_ON_CPU) == 0 &&
				   output_stack_value(&p.stacks[i], OUTPUT_KIND_WALL) == 0,
			   "events: no value in folded, d3 or speedscope");
	profile_release(&p);
}

/* Whether Dwfl address addr lies in an executable section of mod's file: code, what the symbolizer names. */
static bool in_code(Dwfl_Module *mod, GElf_Addr addr)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);

		if (sh && (sh->sh_flags & SHF_EXECINSTR) && addr >= sh->sh_addr + bias &&
		    addr - (sh->sh_addr + bias) < sh->sh_size)
			return true;
	}
	return false;
}

/*
 * elf_symbols_lookup answers as dwfl_module_addrinfo does, the same name and symbol, at code addresses
 * around the start and the end of symbols spread over the whole table (sized, size-less, aliases, padding
 * between functions) of this test program and of libc (with its debug file's full symbol table when
 * libc6-dbg is installed). (Outside code they differ: at 0, libdwfl names an absolute version symbol.)
 */
static void test_symbol_table_file(const char *path)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks callbacks = { .find_elf = dwfl_build_id_find_elf,
						  .find_debuginfo = dwfl_standard_find_debuginfo,
						  .section_address = dwfl_offline_section_address,
						  .debuginfo_path = &debuginfo_path };
	struct elf_symbols table = { 0 };
	Dwfl *dwfl = dwfl_begin(&callbacks);
	Dwfl_Module *mod;
	int n, step, checked = 0, mismatches = 0;
	char *title;

	dwfl_report_begin(dwfl);
	mod = dwfl_report_offline(dwfl, "module", path, -1);
	dwfl_report_end(dwfl, NULL, NULL);
	n = mod ? dwfl_module_getsymtab(mod) : -1;
	if (n <= 1) {
		printf("# %s: no symbols, skipped\n", path);
		dwfl_end(dwfl);
		return;
	}
	step = n / 500 + 1;
	for (int i = 1; i < n; i += step) {
		GElf_Sym sym;
		GElf_Addr value;

		if (!dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL))
			continue;
		GElf_Addr around[] = { value - 1, value, value + 1, value + sym.st_size - 1, value + sym.st_size,
				       value + sym.st_size + 3 };
		for (size_t j = 0; j < ARRAY_SIZE(around); j++) {
			GElf_Sym a, b;
			GElf_Off offset;
			const char *x, *y;

			if (!in_code(mod, around[j]))
				continue;
			x = elf_symbols_lookup(&table, mod, around[j], &a);
			y = dwfl_module_addrinfo(mod, around[j], &offset, &b, NULL, NULL, NULL);
			checked++;
			if (!x != !y || (x && (strcmp(x, y) || memcmp(&a, &b, sizeof(a))))) {
				if (mismatches++ < 5)
					printf("#   %s 0x%" PRIx64 ": '%s', libdwfl '%s'\n", path, (uint64_t)around[j],
					       x ? x : "(none)", y ? y : "(none)");
			}
		}
	}
	title = xasprintf("elf_symbols answers as dwfl_module_addrinfo: %d addresses of %s", checked, path);
	ok(mismatches == 0 && checked > 0, title);
	free(title);
	elf_symbols_release(&table);
	dwfl_end(dwfl);
}

static void test_symbol_table(void)
{
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (len > 0) {
		self[len] = '\0';
		test_symbol_table_file(self);
	}
	if (access("/lib/x86_64-linux-gnu/libc.so.6", R_OK) == 0)
		test_symbol_table_file("/lib/x86_64-linux-gnu/libc.so.6");
}

/*
 * cfi_rules_find answers from the spans it keeps (cfi_rules.c) as libdw does for each address alone: every
 * address of a window of path's .text (functions with prologues, epilogues and DW_CFA_remember_state, as
 * libc's have), asked in a scattered order, so that most are answered from a span another address left,
 * against a fresh struct cfi_rules per address, which compiles each.
 */
static void test_cfi_spans_file(const char *path, uint64_t window)
{
	static const Dwfl_Callbacks callbacks = { .find_elf = dwfl_build_id_find_elf,
						  .find_debuginfo = dwfl_standard_find_debuginfo,
						  .section_address = dwfl_offline_section_address };
	Dwfl *dwfl = dwfl_begin(&callbacks);
	struct cfi_source src = { .debug_loaded = true };
	struct cfi_rules spans;
	uint64_t text = 0, size = 0, checked = 0, mismatches = 0, compiled;
	Dwfl_Module *mod;
	Elf_Scn *scn = NULL;
	GElf_Addr bias;
	Elf *elf;
	char *title;

	dwfl_report_begin(dwfl);
	mod = dwfl_report_offline(dwfl, "module", path, -1);
	dwfl_report_end(dwfl, NULL, NULL);
	elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);

		if (sh && (sh->sh_flags & SHF_EXECINSTR) && sh->sh_size > size) { /* the largest: .text */
			text = sh->sh_addr + bias;
			size = sh->sh_size;
		}
	}
	src.eh = mod ? dwfl_module_eh_cfi(mod, &src.eh_bias) : NULL;
	if (!src.eh || size - size / 3 < window) {
		ok(false, "cfi spans: the file has .eh_frame and a .text to look at");
		dwfl_end(dwfl);
		return;
	}
	cfi_rules_init(&spans);
	/* i * 40503 mod window visits every address once (40503 is odd, window a power of two), scattered. */
	for (uint64_t i = 0; i < window; i++) {
		uint64_t addr = text + size / 3 + (i * 40503) % window;
		const struct cfi_rule *answer = cfi_rules_find(&spans, 0, &src, addr), *libdw;
		struct cfi_rules alone;

		cfi_rules_init(&alone);
		libdw = cfi_rules_find(&alone, 0, &src, addr);
		if (answer && libdw ? !cfi_rule_same(answer, libdw) : answer != libdw) {
			if (mismatches++ < 5)
				printf("#   %s 0x%" PRIx64 ": the span's rule is not libdw's\n", path, addr);
		}
		cfi_rules_release(&alone);
		checked++;
	}
	compiled = spans.compiled;
	title = xasprintf("cfi spans answer as libdw alone: %" PRIu64 " addresses of %s, %" PRIu64 " compiled",
			  checked, path, compiled);
	ok(mismatches == 0 && compiled < checked / 4, title);
	free(title);
	cfi_rules_release(&spans);
	dwfl_end(dwfl);
}

static void test_cfi_spans(void)
{
	test_cfi_spans_file("/lib/x86_64-linux-gnu/libc.so.6", 1 << 16);
}

/*
 * The list of temporaries outputs_discard_pending removes (util.c), used by several threads at once (a parallel
 * convert's symbol cache entries, debug copies' keepers): each thread adds and removes names of its own, and
 * none may read a name another frees (the list once compared names in other threads' slots unlocked: a
 * use-after-free under ASan, make check SANITIZE=1).
 */
#define PENDING_THREADS 4
#define PENDING_ROUNDS 20000

static void *pending_churn(void *arg)
{
	char name[64];

	for (int i = 0; i < PENDING_ROUNDS; i++) {
		snprintf(name, sizeof(name), "/nonexistent/pending-%ld-%d", (long)(intptr_t)arg, i);
		pending_output_add(name);
		pending_output_remove(name);
	}
	return NULL;
}

static void test_pending_outputs_threads(void)
{
	pthread_t threads[PENDING_THREADS];
	int started = 0;

	while (started < PENDING_THREADS &&
	       pthread_create(&threads[started], NULL, pending_churn, (void *)(intptr_t)started) == 0)
		started++;
	for (int i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	ok(started == PENDING_THREADS, "temporaries listed and unlisted by four threads at once");
}

static int run_tests(void)
{
	test_enrich();
	test_events();
	test_profile();
	test_process_maps();
	test_process_maps_fork();
	test_stack_memo();
	test_memo_window();
	test_cfi_spans();
	test_raw_sample_memo();
	test_arena();
	test_kernel_symbols();
	test_demangle();
	test_pointer_table();
	test_folded();
	test_folded_unicode_numbers();
	test_folded_huge_weight();
	test_jit_maps();
	test_jit_maps_line_ends();
	test_symbol_table();
	test_pending_outputs_threads();
	printf("1..%d\n", test_number);
	return failures ? 1 : 0;
}

/* The recording writer for shell tests. */

static size_t parse_ips(const char *s, uint64_t *ips, size_t max)
{
	size_t n = 0;

	if (!strcmp(s, "-"))
		return 0;
	while (*s && n < max) {
		char *end;

		ips[n++] = strtoull(s, &end, 16);
		s = *end == ',' ? end + 1 : end;
		if (end == s && *s)
			break;
	}
	return n;
}

static void parse_build_id(const char *hex, struct srec_mapping *m)
{
	m->build_id_size = 0;
	if (!strcmp(hex, "-"))
		return;
	for (size_t i = 0; hex[2 * i] && hex[2 * i + 1] && i < SREC_BUILD_ID_MAX; i++) {
		unsigned int byte;

		sscanf(hex + 2 * i, "%2x", &byte);
		m->build_id[i] = (uint8_t)byte;
		m->build_id_size = (uint8_t)(i + 1);
	}
}

static int write_recording(const char *path)
{
	struct recording_writer w;
	char line[8192];
	bool ended = false;
	uint64_t ips[2 * SREC_MAX_STACK_DEPTH];

	if (recording_writer_open(&w, path) < 0)
		return 1;
	while (fgets(line, sizeof(line), stdin)) {
		char a[9][4096];
		long repeat = 1;
		bool timed = false;
		char *p = line;
		int n;

		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(p, "repeat-timed ", 13)) {
			repeat = strtol(p + 13, &p, 10);
			timed = true;
			while (*p == ' ')
				p++;
		} else if (!strncmp(p, "repeat ", 7)) {
			repeat = strtol(p + 7, &p, 10);
			while (*p == ' ')
				p++;
		}
		if (!strncmp(p, "host ", 5)) {
			recording_writer_add(&w, SREC_BLOCK_HOST, p + 5, strlen(p + 5) + 1, NULL, 0);
		} else if (sscanf(p, "mapping %4095s %4095s %4095s %4095s %4095s %4095s %4095s", a[0], a[1], a[2], a[3],
				  a[4], a[5], a[6]) == 7) {
			struct srec_mapping m = mapping((uint32_t)strtoul(a[0], NULL, 0), strtoull(a[1], NULL, 16),
							strtoull(a[2], NULL, 16), strtoull(a[3], NULL, 16),
							strtoull(a[6], NULL, 0));

			parse_build_id(a[5], &m);
			m.prot = 5;
			m.path_size = (uint32_t)strlen(a[4]) + 1;
			recording_writer_add(&w, SREC_BLOCK_MAPPING, &m, sizeof(m), a[4], m.path_size);
		} else if ((n = sscanf(p, "exec %4095s %4095s %4095s", a[0], a[1], a[3])) >= 2 ||
			   sscanf(p, "existing %4095s %4095s", a[0], a[1]) == 2 ||
			   sscanf(p, "fork %4095s %4095s %4095s", a[0], a[2], a[1]) == 3) {
			struct srec_task t = { .pid = (uint32_t)strtoul(a[0], NULL, 0),
					       .tid = (uint32_t)strtoul(a[0], NULL, 0),
					       .time_ns = strtoull(a[1], NULL, 0),
					       .event = !strncmp(p, "fork ", 5)	     ? SREC_TASK_FORK
							: !strncmp(p, "existing ", 9) ? SREC_TASK_EXISTING
										      : SREC_TASK_EXEC };

			if (t.event == SREC_TASK_FORK)
				t.parent_pid = (uint32_t)strtoul(a[2], NULL, 0);
			if (t.event == SREC_TASK_EXEC && n == 3) /* exec PID TIME NAME: the name it exec'd as */
				memcpy(t.comm, a[3], strnlen(a[3], sizeof(t.comm) - 1));
			recording_writer_add(&w, SREC_BLOCK_TASK, &t, sizeof(t), NULL, 0);
		} else if (sscanf(p, "file %4095s %4095s %4095s %4095s %4095s", a[0], a[1], a[2], a[3], a[4]) == 5) {
			struct srec_mapping id;
			struct srec_file f = { .kind = (uint32_t)strtoul(a[0], NULL, 0),
					       .data_offset = strtoull(a[2], NULL, 0),
					       .path_size = (uint32_t)strlen(a[3]) + 1 };
			FILE *in = fopen(a[4], "r");
			size_t cap = 65536, got = 0, n;
			unsigned char *tail = xmalloc(f.path_size + cap);

			if (!in)
				return error("cannot open '%s'", a[4]) ? 1 : 1;
			while ((n = fread(tail + f.path_size + got, 1, cap - got, in)) > 0) /* the whole file */
				if ((got += n) == cap)
					tail = xrealloc(tail, f.path_size + (cap *= 2));
			fclose(in);
			parse_build_id(a[1], &id);
			f.build_id_size = id.build_id_size;
			memcpy(f.build_id, id.build_id, sizeof(f.build_id));
			f.data_size = got;
			memcpy(tail, a[3], f.path_size);
			recording_writer_add(&w, SREC_BLOCK_FILE, &f, sizeof(f), tail, f.path_size + got);
			free(tail);
		} else if (sscanf(p, "kallsyms %4095s", a[0]) == 1) {
			FILE *f = fopen(a[0], "r");
			char *text = NULL;
			size_t len = 0, got;
			char chunk[65536];

			if (!f)
				return error("cannot open '%s'", a[0]) ? 1 : 1;
			while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
				text = xrealloc(text, len + got);
				memcpy(text + len, chunk, got);
				len += got;
			}
			fclose(f);
			recording_writer_add(&w, SREC_BLOCK_KALLSYMS, text, len, NULL, 0);
			free(text);
		} else if ((n = sscanf(p, "sample %4095s %4095s %4095s %4095s %4095s %4095s %4095s %4095s %4095s", a[0],
				       a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8])) >= 6) {
			struct srec_sample s = { .pid = (uint32_t)strtoul(a[0], NULL, 0),
						 .tid = (uint32_t)strtoul(a[1], NULL, 0),
						 .time_ns = strtoull(a[3], NULL, 0),
						 .weight = 1000000,
						 .kind = SREC_SAMPLE_ON_CPU };
			size_t nu = parse_ips(a[4], ips, SREC_MAX_STACK_DEPTH);
			size_t nk = parse_ips(a[5], ips + nu, SREC_MAX_STACK_DEPTH);
			char errors[2][64] = { "0", "0" };
			struct srec_user_regs regs = { .machine = 62, .reg_count = 2, .stack_size = 8,
						       .reg_mask = 1ull << 7 | 1ull << 16, .stack_wanted = 8 };
			uint64_t top[3] = { 0x7ffc0000, nu ? ips[0] : 0, 0 }; /* rsp, rip; then the stack word */
			uint64_t rbp = 0;
			unsigned char tail[sizeof(ips) + sizeof(regs) + sizeof(rbp) + sizeof(top)];
			size_t len = (nu + nk) * sizeof(*ips);

			for (int i = 6; i < n; i++) { /* kind=on|off, weight=NS, USER_ERROR[/KERNEL_ERROR], top=HEX */
				if (!strncmp(a[i], "top=", 4)) {
					s.flags |= SREC_SAMPLE_USER_REGS;
					top[2] = strtoull(a[i] + 4, NULL, 16);
				} else if (!strncmp(a[i], "rbp=", 4)) {
					regs.reg_mask |= 1ull << 6;
					regs.reg_count = 3;
					rbp = strtoull(a[i] + 4, NULL, 16);
				} else if (!strncmp(a[i], "dwarf=", 6)) {
					s.flags |= SREC_SAMPLE_USER_REGS | SREC_SAMPLE_USER_UNWIND;
					top[1] = strtoull(a[i] + 6, NULL, 16);
				} else if (!strcmp(a[i], "kind=off"))
					s.kind = SREC_SAMPLE_OFF_CPU;
				else if (!strncmp(a[i], "weight=", 7))
					s.weight = strtoull(a[i] + 7, NULL, 0);
				else if (strcmp(a[i], "kind=on"))
					sscanf(a[i], "%63[^/]/%63s", errors[0], errors[1]);
			}
			s.user_stack_error = (int32_t)strtol(errors[0], NULL, 0);
			s.kernel_stack_error = (int32_t)strtol(errors[1], NULL, 0);
			s.user_depth = (uint16_t)nu;
			s.kernel_depth = (uint16_t)nk;
			memcpy(s.comm, a[2], strnlen(a[2], sizeof(s.comm) - 1));
			memcpy(tail, ips, len);
			if (s.flags & SREC_SAMPLE_USER_REGS) {
				memcpy(tail + len, &regs, sizeof(regs));
				len += sizeof(regs);
				if (regs.reg_count == 3) { /* in ascending register number: rbp (6) before rsp (7) */
					memcpy(tail + len, &rbp, sizeof(rbp));
					len += sizeof(rbp);
				}
				memcpy(tail + len, top, sizeof(top));
				len += sizeof(top);
			}
			for (long i = 0; i < repeat; i++) {
				if (timed) {
					/* 0..1 ms, mixed (splitmix64's finalizer) so that it is no progression: a
					 * sample's time is written as the delta from the one before (format 1.3) */
					uint64_t jitter = (uint64_t)i * 0x9e3779b97f4a7c15ull;

					jitter = (jitter ^ jitter >> 30) * 0xbf58476d1ce4e5b9ull;
					jitter = (jitter ^ jitter >> 27) * 0x94d049bb133111ebull;
					jitter = (jitter ^ jitter >> 31) >> 44;

					s.time_ns = strtoull(a[3], NULL, 0) + (uint64_t)i * 1000000 + jitter;
					s.cpu = (uint32_t)(i & 1);
				} else if (i) {
					s.time_ns += s.weight; /* repeat N: back to back, each where the previous ends */
				}
				recording_writer_add(&w, SREC_BLOCK_SAMPLE, &s, sizeof(s), tail, len);
			}
		} else if (sscanf(p, "event %4095s %4095s %4095s %4095s %4095s %4095s %4095s %4095s %4095s", a[0], a[1],
				  a[2], a[3], a[4], a[5], a[6], a[7], a[8]) == 9) {
			/* event PID TID COMM TIME UIPS KIPS signal SIGNO/CODE ADDR | exception NAME ADDR */
			struct srec_sample s = { .pid = (uint32_t)strtoul(a[0], NULL, 0),
						 .tid = (uint32_t)strtoul(a[1], NULL, 0),
						 .time_ns = strtoull(a[3], NULL, 0),
						 .kind = SREC_SAMPLE_EVENT,
						 .flags = SREC_SAMPLE_EVENT_INFO };
			size_t nu = parse_ips(a[4], ips, SREC_MAX_STACK_DEPTH);
			size_t nk = parse_ips(a[5], ips + nu, SREC_MAX_STACK_DEPTH);
			struct srec_sample_event ev = { .address = strtoull(a[8], NULL, 16) };
			unsigned char tail[sizeof(ips) + sizeof(ev) + 4096];
			size_t len = (nu + nk) * sizeof(*ips);

			if (!strcmp(a[6], "signal")) {
				ev.type = SREC_EVENT_SIGNAL;
				sscanf(a[7], "%d/%d", &ev.signo, &ev.code);
			} else {
				ev.type = SREC_EVENT_EXCEPTION;
				ev.name_size = (uint32_t)strlen(a[7]) + 1;
			}
			s.user_depth = (uint16_t)nu;
			s.kernel_depth = (uint16_t)nk;
			memcpy(s.comm, a[2], strnlen(a[2], sizeof(s.comm) - 1));
			memcpy(tail, ips, len);
			memcpy(tail + len, &ev, sizeof(ev));
			len += sizeof(ev);
			if (ev.name_size)
				memcpy(tail + len, a[7], ev.name_size), len += ev.name_size;
			recording_writer_add(&w, SREC_BLOCK_SAMPLE, &s, sizeof(s), tail, len);
		} else if ((n = sscanf(p, "probe %4095s %4095s %4095s %4095s %4095s %4095s %4095s %4095s", a[0], a[1],
				       a[2], a[3], a[4], a[5], a[6], a[7])) >= 5) {
			/* probe ID BUILD_ID ADDR BINARY FUNCTION [NAME:TYPE ...] */
			struct srec_mapping id;
			struct srec_probe pr = { .probe_id = (uint32_t)strtoul(a[0], NULL, 0),
						 .address = strtoull(a[2], NULL, 16) };
			char strings[4 * 4096];
			size_t len = 0;

			parse_build_id(a[1], &id);
			pr.build_id_size = id.build_id_size;
			memcpy(pr.build_id, id.build_id, sizeof(pr.build_id));
			for (int i = 3; i < n; i++) {
				memcpy(strings + len, a[i], strlen(a[i]) + 1);
				len += strlen(a[i]) + 1;
			}
			pr.arg_count = (uint32_t)(n - 5);
			pr.strings_size = (uint32_t)len;
			recording_writer_add(&w, SREC_BLOCK_PROBE, &pr, sizeof(pr), strings, len);
		} else if (sscanf(p, "hit %4095s %4095s %4095s %4095s %4095s %4095s %4095s", a[0], a[1], a[2], a[3], a[4],
				  a[5], a[6]) == 7) {
			/* hit PID TID TIME PROBE CFA V1,V2,... STR1|STR2|... ("-": none) */
			struct srec_probe_hit h = { .pid = (uint32_t)strtoul(a[0], NULL, 0),
						    .tid = (uint32_t)strtoul(a[1], NULL, 0),
						    .time_ns = strtoull(a[2], NULL, 0),
						    .probe_id = (uint32_t)strtoul(a[3], NULL, 0),
						    .cfa = strtoull(a[4], NULL, 16) };
			unsigned char tail[SREC_PROBE_ARGS_MAX * 8 + 4096];
			size_t nv = parse_ips(a[5], ips, SREC_PROBE_ARGS_MAX), len = nv * 8;

			memcpy(tail, ips, len);
			for (char *str = strcmp(a[6], "-") ? strtok(a[6], "|") : NULL; str; str = strtok(NULL, "|")) {
				uint16_t sl = (uint16_t)strlen(str);

				memcpy(tail + len, &sl, 2);
				memcpy(tail + len + 2, str, sl);
				len += 2 + sl;
			}
			h.value_count = (uint16_t)nv;
			h.strings_size = (uint16_t)(len - nv * 8);
			recording_writer_add(&w, SREC_BLOCK_PROBE_HIT, &h, sizeof(h), tail, len);
		} else if (sscanf(p, "metrics %4095s %4095s %4095s %4095s %4095s %4095s", a[0], a[1], a[2], a[3], a[4],
				  a[5]) == 6) {
			/* metrics PID TID TIME interval|event THREADS RSS_BYTES */
			struct srec_process_metrics m = { .pid = (uint32_t)strtoul(a[0], NULL, 0),
							  .tid = (uint32_t)strtoul(a[1], NULL, 0),
							  .time_ns = strtoull(a[2], NULL, 0),
							  .reason = !strcmp(a[3], "event") ? SREC_METRICS_EVENT
											   : SREC_METRICS_INTERVAL,
							  .threads = (uint32_t)strtoul(a[4], NULL, 0),
							  .rss_bytes = strtoull(a[5], NULL, 0),
							  .user_time_ns = 1500000000,
							  .system_time_ns = 250000000,
							  .vm_bytes = 2 * strtoull(a[5], NULL, 0) };

			recording_writer_add(&w, SREC_BLOCK_PROCESS_METRICS, &m, sizeof(m), NULL, 0);
		} else if (sscanf(p, "stats %4095s %4095s %4095s", a[0], a[1], a[2]) == 3) {
			/* stats SAMPLES LOST_PROBE_HITS LOST_EVENTS */
			struct srec_stats st = { .samples = strtoull(a[0], NULL, 0),
						 .lost_probe_hits = strtoull(a[1], NULL, 0),
						 .lost_event_samples = strtoull(a[2], NULL, 0) };

			recording_writer_add(&w, SREC_BLOCK_STATS, &st, sizeof(st), NULL, 0);
		} else if (sscanf(p, "stats %4095s", a[0]) == 1) {
			struct srec_stats st = { .samples = strtoull(a[0], NULL, 0) };

			recording_writer_add(&w, SREC_BLOCK_STATS, &st, sizeof(st), NULL, 0);
		} else if (!strcmp(p, "flush")) {
			recording_writer_flush(&w);
			printf("%lld\n", (long long)lseek(w.fd, 0, SEEK_CUR));
		} else if (!strcmp(p, "end")) {
			ended = true;
			break;
		} else if (*p && *p != '#') {
			return error("cannot parse script line '%s'", line) ? 1 : 1;
		}
	}
	if (ended)
		return recording_writer_close(&w, 1) < 0;
	recording_writer_flush(&w);
	recording_writer_abandon(&w);
	return 0;
}

static int dump_vdso(const char *path)
{
	unsigned long long start = 0, end = 0;
	char line[512];
	FILE *maps = fopen("/proc/self/maps", "r"), *out;

	while (maps && fgets(line, sizeof(line), maps))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%llx-%llx", &start, &end);
	if (maps)
		fclose(maps);
	if (end <= start || !(out = fopen(path, "w")))
		return 1;
	fwrite((const void *)(uintptr_t)start, 1, end - start, out);
	return fclose(out) != 0;
}

static int count_block(void *ctx, uint32_t type, const void *body, uint32_t size)
{
	(void)type, (void)body, (void)size;
	++*(size_t *)ctx;
	return 0;
}

/*
 * read-cut REC OUT: what convert does with a recording another program cuts short while it reads it. OUT made as
 * convert makes -o, REC mapped by the reader, then cut to its first 64 bytes and read: file_cut_guard.c is to
 * stop the process with one line and exit 1, OUT's temporary file removed. Returns 0 (with a line saying so)
 * only if the read came back, which it must not.
 */
static int read_cut(const char *rec_path, const char *out_path)
{
	struct recording_reader r;
	size_t blocks = 0;
	struct output_file output;

	file_cut_guard_install();
	if (output_create(out_path, &output) < 0 || recording_reader_open(&r, rec_path) < 0)
		return 2;
	if (truncate(rec_path, 64) < 0) {
		perror("truncate");
		return 2;
	}
	recording_reader_for_each(&r, count_block, &blocks, RECORDING_WARN_NONE);
	printf("read %zu blocks of the cut recording, no fault\n", blocks);
	return 0;
}

/*
 * interrupted OUT CACHE DIR: what convert leaves when Ctrl-C or kill stops it. OUT made as convert makes -o, a
 * temporary entry made in the cache directory CACHE as the caches make theirs, DIR (the test's, with files in
 * it) pending as convert --archive's extracted files are; then SIGTERM. interrupt_cleanup.c is to remove all
 * three and let the process die of the signal. Returns 0 (with a line saying so) only if it did not die.
 */
static int interrupted(const char *out_path, const char *cache_path, const char *dir)
{
	struct output_file output;
	char cache_tmp[12];
	int cache_fd = open(cache_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	interrupt_cleanup_install();
	if (output_create(out_path, &output) < 0 || cache_fd < 0 || cache_dir_temp_file(cache_fd, 0, 0, cache_tmp) < 0)
		return 2;
	pending_dir_set(dir);
	kill(getpid(), SIGTERM);
	printf("still running after SIGTERM\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "interrupted"))
		return interrupted(argv[2], argv[3], argv[4]);
	if (argc == 4 && !strcmp(argv[1], "read-cut"))
		return read_cut(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "dump-vdso"))
		return dump_vdso(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "write"))
		return write_recording(argv[2]);
	if (argc != 1) {
		fprintf(stderr, "usage: test-convert [write OUT <SCRIPT]\n");
		return 2;
	}
	return run_tests();
}
