/*
 * folded.c — folded stacks, the input of flamegraph.pl and most flame graph tools, as
 * stackcollapse-perf.pl writes them:
 *
 *   comm;outermost;...;leaf VALUE
 *
 * one line per distinct printed stack (stacks that print the same are summed), lines sorted bytewise.
 * VALUE is what --kind asks for (output_stack_value): on-CPU samples (a count, the default when the
 * recording has on-CPU samples), off-CPU time in microseconds (as bcc's offcputime -f), or both times in
 * microseconds (wall). Stacks worth nothing under the kind (the other kind's) are left out. Inlined functions are frames of their own (outermost first); kernel frames follow the
 * user frames and end in _[k] (stackcollapse-perf.pl --kernel). --pid prints comm-PID, --tid
 * comm-PID/TID; --thread-names starts with the process name (its main thread's) and puts the thread's
 * own name after it as a frame; --annotate adds _[i] to inlined frames (_[j] is kept for JIT frames).
 *
 * Unnamed frames print as [module] (the module's basename, as perf and stackcollapse-perf.pl print them:
 * one frame per module, not one per address), [unknown] without a module; with --addrs as
 * [module <0xOFFSET>].
 *
 * Names are escaped so that no name can break flamegraph.pl's line rule ^(.*)\s+?(\d+(?:\.\d*)?)$ or its
 * frame separator: ';' becomes ':' (as stackcollapse does), control characters (newlines, tabs) and bytes
 * that begin no UTF-8 sequence (flamegraph.pl reads UTF-8) become '?',
 * and a name ending in whitespace + digits (which flamegraph.pl would read as a second, differential
 * count; Unicode's spaces and digits too, trailing_number_guard) has that whitespace turned into '_'. In the comm, spaces become '_' as stackcollapse-perf.pl does.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../convert/stack_memo.h"
#include "../util.h"
#include "frame_names.h"
#include "output.h"

struct buf {
	char *s;
	size_t len, cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
	GROW(b->s, b->cap, b->len + n + 1);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* Whether add_escaped changes byte c: ';', the control characters and DEL; in the comm, spaces too. */
static bool escaped_byte(unsigned char c, bool is_comm)
{
	return c == ';' || c < 0x20 || c == 0x7f || (c == ' ' && is_comm);
}

/*
 * Whether any of the 8 bytes of w is one add_escaped changes (a byte below 0x20, or 0x21 in the comm, which
 * takes spaces in; ';'; DEL): the tests of "Bit Twiddling Hacks" (haszero, hasless), exact for whether any byte
 * is such, eight bytes in a dozen instructions. A frame's name is read a word at a time, and a byte at a time
 * only in a word that has one: strcspn with these 33 bytes is glibc's generic one, which fills a table of 256
 * bytes at every call, and that was a third of writing the folded lines of a warm conversion.
 */
static bool word_has_escaped(uint64_t w, bool is_comm)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t semicolon = w ^ (ones * ';'), del = w ^ (ones * 0x7f);

	return ((w - ones * (is_comm ? 0x21 : 0x20)) & ~w & highs) | ((semicolon - ones) & ~semicolon & highs) |
	       ((del - ones) & ~del & highs);
}

/*
 * The code point of the UTF-8 character that ends at s[end] (exclusive), at most four bytes back to s[start], and
 * its first byte's index in *at; -1 for a byte that ends no valid character.
 */
static long char_before(const char *s, size_t start, size_t end, size_t *at)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = end - 1;
	long c;

	while (i > start && end - i < 4 && (u[i] & 0xc0) == 0x80)
		i--;
	*at = i;
	if (u[i] < 0x80)
		return end - i == 1 ? u[i] : -1;
	if (utf8_sequence_length(u + i, end - i) != end - i)
		return -1;
	c = u[i] & (0x7f >> (end - i));
	for (size_t k = i + 1; k < end; k++)
		c = c << 6 | (u[k] & 0x3f);
	return c;
}

/* Perl's \s under Unicode rules (flamegraph.pl reads UTF-8): the White_Space property. */
static bool unicode_space(long c)
{
	return (c >= 0x09 && c <= 0x0d) || c == ' ' || c == 0x85 || c == 0xa0 || c == 0x1680 ||
	       (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

/*
 * A name that ends in whitespace, then digits (flamegraph.pl's \s+?(\d+(?:\.\d*)?)$ would read them as a second,
 * differential count): that whitespace becomes '_'. Under Unicode rules \s takes the no-break and ideographic
 * spaces and \d every script's digits (Arabic-Indic, fullwidth, ...): every character past ASCII counts as a
 * digit here, which at worst turns a space that needed no guard. b's name starts at start.
 */
static void trailing_number_guard(struct buf *b, size_t start)
{
	size_t end = b->len, at;
	bool digits = false;
	long c;

	while (end > start && (c = char_before(b->s, start, end, &at)) >= 0) {
		if (unicode_space(c)) {
			if (!digits)
				return;
			b->s[at] = '_';
			memmove(b->s + at + 1, b->s + end, b->len - end + 1);
			b->len -= end - at - 1;
			return;
		}
		if (!((c >= '0' && c <= '9') || c == '.' || c >= 0x80))
			return;
		digits |= c != '.';
		end = at;
	}
}

/* Appends name escaped (see the top of this file); is_comm also turns spaces into '_'. */
static void add_escaped(struct buf *b, const char *name, bool is_comm)
{
	size_t start, end, i;
	uint64_t high = 0;

	if (!*name)
		name = "[unknown]";
	start = b->len;
	buf_add(b, name, strlen(name));
	end = b->len;
	for (i = start; i < end; i += 8) {
		uint64_t w = 0;

		memcpy(&w, b->s + i, end - i < 8 ? end - i : 8); /* the NUL and zeros past the end: escaped, not here */
		high |= w & 0x8080808080808080ull;
		if (!word_has_escaped(w, is_comm) && end - i >= 8)
			continue;
		for (size_t j = i; j < i + 8 && j < end; j++) {
			unsigned char c = (unsigned char)b->s[j];

			if (!escaped_byte(c, is_comm))
				continue;
			if (c == ';')
				b->s[j] = ':';
			else if (c == ' ')
				b->s[j] = '_';
			else
				b->s[j] = '?';
		}
	}
	/* Bytes past ASCII must be UTF-8: flamegraph.pl reads its input so, and dies on a thread name the kernel
	 * cut at 15 bytes in the middle of a character. A byte that begins no sequence becomes '?' too. */
	for (i = start; high && i < end;) {
		size_t len = utf8_sequence_length((const unsigned char *)b->s + i, end - i);

		if (!len)
			b->s[i] = '?';
		i += len ? len : 1;
	}
	trailing_number_guard(b, start);
}

/* A key of stack_memo (convert/stack_memo.h) made of words. */
struct key {
	uint64_t *w;
	size_t n, cap;
};

/* Appends the n bytes at s to k: their count, then the bytes, zero-padded to whole words. */
static void key_add_bytes(struct key *k, const char *s, size_t n)
{
	size_t words = (n + sizeof(*k->w) - 1) / sizeof(*k->w);

	GROW(k->w, k->cap, k->n + 1 + words);
	k->w[k->n++] = n;
	if (words) {
		k->w[k->n + words - 1] = 0;
		memcpy(k->w + k->n, s, n);
	}
	k->n += words;
}

/*
 * A location's frames as every line that shows it has them, ";outer;...;inner" escaped: made once per location,
 * not once per stack through it (a JIT program's long names were a third of its conversion). Locations whose
 * segments read the same (a function's other addresses) share an id: stacks whose lines read the same are
 * found by their ids, not by their text.
 */
struct segment {
	char *text; /* NULL until made */
	size_t len;
	uint32_t id; /* the first location (met) whose segment reads the same */
};

struct segments {
	struct segment *of; /* by location */
	struct stack_memo texts; /* segment text to its id */
	struct key key;
	struct buf scratch;	 /* where a segment is made, then copied to the arena at its size */
	struct arena arena;	 /* the segments' texts */
	char **fallback_names;	 /* by module, and last for no module: "[module]", made when first needed */
	struct segment *unnamed; /* by module, and last for no module: the segment of its unnamed user locations */
};

/*
 * The name of an unnamed frame of loc: its module's, "[libc.so.6]", the same for all of the module's addresses,
 * made once per module (a recording of a program without symbols has thousands of such locations).
 */
static const char *fallback_name(struct segments *segments, const struct profile *p,
				 const struct profile_location *loc)
{
	size_t m = loc->module < p->module_count ? loc->module : p->module_count;

	if (!segments->fallback_names[m])
		segments->fallback_names[m] = profile_location_fallback_name(p, loc);
	return segments->fallback_names[m];
}

static void add_frame(struct segments *segments, struct buf *b, const struct profile *p,
		      const struct profile_location *loc, uint32_t f, const struct output_options *options)
{
	const struct profile_frame *frame = &loc->frames[f];

	if (frame->function) {
		add_escaped(b, frame->function, false);
	} else if (options->addrs) {
		char *module = loc->module < p->module_count ? profile_module_short_name(&p->modules[loc->module])
							       : xstrdup("unknown");
		char *s = xasprintf("[%s <0x%" PRIx64 ">]", module, loc->file_offset);

		add_escaped(b, s, false);
		free(s);
		free(module);
	} else {
		add_escaped(b, fallback_name(segments, p, loc), false);
	}
	if (loc->kind == PROFILE_LOCATION_KERNEL)
		buf_add(b, "_[k]", 4);
	else if (options->annotate && loc->kind == PROFILE_LOCATION_JIT)
		buf_add(b, "_[j]", 4);
	else if (options->annotate && frame->inlined)
		buf_add(b, "_[i]", 4);
}

static const struct segment *location_segment(struct segments *segments, const struct profile *p, uint32_t l,
					      const struct output_options *options)
{
	struct segment *sg = &segments->of[l], *unnamed = NULL;
	const struct profile_location *loc = &p->locations[l];

	/* Every unnamed user location of a module reads "[module]": made once, not escaped and looked up for each */
	if (!sg->text && !options->addrs && loc->kind == PROFILE_LOCATION_USER && loc->frame_count == 1 &&
	    !loc->frames[0].function && !loc->frames[0].inlined) {
		unnamed = &segments->unnamed[loc->module < p->module_count ? loc->module : p->module_count];
		if (unnamed->text)
			*sg = *unnamed;
	}
	if (!sg->text) {
		struct buf *b = &segments->scratch;
		uint32_t *id, count;

		b->len = 0;
		for (uint32_t f = loc->frame_count; f-- > 0;) {
			buf_add(b, ";", 1);
			add_frame(segments, b, p, loc, f, options);
		}
		sg->text = arena_alloc(&segments->arena, b->len + 1);
		memcpy(sg->text, b->s ? b->s : "", b->len);
		sg->text[b->len] = '\0';
		sg->len = b->len;
		segments->key.n = 0;
		key_add_bytes(&segments->key, sg->text, sg->len);
		id = stack_memo_find(&segments->texts, segments->key.w, (uint32_t)segments->key.n, &count);
		sg->id = id ? *id : l;
		if (!id)
			stack_memo_add(&segments->texts, segments->key.w, (uint32_t)segments->key.n, &l, 1);
		if (unnamed)
			*unnamed = *sg;
	}
	return sg;
}

struct line {
	char *stack;
	uint64_t count;
};

static int compare_lines(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->stack, ((const struct line *)b)->stack);
}

/*
 * Stacks that print the same (the same names at other addresses, other threads) are one line: found by the
 * line's start and its segments' ids (a few words a stack, where a JIT program's lines are kilobytes), and made,
 * sorted and printed once. Lines that read the same all the same (inlined frames split between locations
 * otherwise) are summed after the sort.
 */
static int folded_write(const struct profile *p, const struct output_options *options, FILE *out)
{
	struct line *lines = xcalloc(p->stack_count ? p->stack_count : 1, sizeof(*lines));
	struct segments segments = { .of = xcalloc(p->location_count ? p->location_count : 1, sizeof(*segments.of)),
				     .fallback_names = xcalloc(p->module_count + 1, sizeof(*segments.fallback_names)),
				     .unnamed = xcalloc(p->module_count + 1, sizeof(*segments.unnamed)) };
	struct stack_memo printed; /* a line's start and segment ids to its index in lines */
	enum output_kind kind = output_kind_of(p, options);
	struct buf b = { 0 }; /* each line is made here, then copied at its size: no growing per line */
	struct key key = { 0 };
	const struct profile_stack *head = NULL; /* the stack whose line start b and key begin with */
	const char *head_process = NULL;	 /* --thread-names: its process's name */
	size_t n = 0, head_len = 0, head_words = 0;

	stack_memo_init(&segments.texts);
	stack_memo_init(&printed);

	for (size_t i = 0; i < p->stack_count; i++) {
		const struct profile_stack *s = &p->stacks[i];
		uint64_t value = output_stack_value(s, kind);
		const char *process;

		if (!value)
			continue;
		/*
		 * A line's start follows from the stack's pid, tid and name alone: it is made (escaped, with its key
		 * words) again only where they change from the stack before. Unsorted stacks (stacks_in_any_order)
		 * change more often, which costs time, not bytes. --thread-names' process name is looked for among
		 * the neighbouring stacks (process_comm), so that mode needs them sorted: convert never leaves them
		 * in any order with it.
		 */
		assert(!options->thread_names || !p->stacks_in_any_order);
		process = options->thread_names ? process_comm(p, i) : NULL;
		if (!head || head->pid != s->pid || head->tid != s->tid || memcmp(head->comm, s->comm, sizeof(s->comm)) ||
		    (process && strncmp(process, head_process, sizeof(s->comm)))) {
			char comm[sizeof(s->comm) + 1] = { 0 };
			char id[32];

			head = s;
			head_process = process;
			b.len = 0;
			/* --thread-names: the process (its main thread's name then) first, then the thread as a frame. */
			memcpy(comm, process ? process : s->comm, sizeof(s->comm));
			add_escaped(&b, comm[0] ? comm : "[unknown]", true);
			if (options->per_tid)
				snprintf(id, sizeof(id), "-%u/%u", s->pid, s->tid);
			else if (options->per_pid)
				snprintf(id, sizeof(id), "-%u", s->pid);
			else
				id[0] = '\0';
			buf_add(&b, id, strlen(id));
			if (options->thread_names) {
				memcpy(comm, s->comm, sizeof(s->comm));
				buf_add(&b, ";", 1);
				add_escaped(&b, comm[0] ? comm : "[unknown]", true);
			}
			head_len = b.len;
			key.n = 0;
			key_add_bytes(&key, b.s, b.len);
			head_words = key.n;
		}
		b.len = head_len;
		b.s[b.len] = '\0'; /* a stack of no frames is its start alone */
		key.n = head_words;
		GROW(key.w, key.cap, key.n + s->depth);
		for (uint32_t d = s->depth; d-- > 0;)
			key.w[key.n++] = location_segment(&segments, p, s->locations[d], options)->id;
		{
			uint32_t *line, count, index = (uint32_t)n;

			line = stack_memo_find(&printed, key.w, (uint32_t)key.n, &count);
			if (line) {
				lines[*line].count += value;
				continue;
			}
			stack_memo_add(&printed, key.w, (uint32_t)key.n, &index, 1);
		}
		for (uint32_t d = s->depth; d-- > 0;) {
			const struct segment *sg = &segments.of[s->locations[d]];

			buf_add(&b, sg->text, sg->len);
		}
		lines[n].stack = memcpy(xmalloc(b.len + 1), b.s, b.len + 1);
		lines[n++].count = value;
	}
	free(b.s);
	free(key.w);
	free(segments.key.w);
	stack_memo_release(&printed);
	stack_memo_release(&segments.texts);
	sort_array(lines, n, sizeof(*lines), compare_lines);
	for (size_t i = 0; i < n;) {
		uint64_t count = lines[i].count;
		size_t j;

		for (j = i + 1; j < n && !strcmp(lines[j].stack, lines[i].stack); j++)
			count += lines[j].count;
		fprintf(out, "%s %" PRIu64 "\n", lines[i].stack, count);
		i = j;
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i].stack);
	free(lines);
	for (size_t m = 0; m <= p->module_count; m++)
		free(segments.fallback_names[m]);
	free(segments.fallback_names);
	free(segments.unnamed);
	free(segments.scratch.s);
	arena_release(&segments.arena);
	free(segments.of);
	return 0;
}

const struct output_format output_folded = {
	.name = "folded",
	.description = "folded stacks for flamegraph.pl (comm;outer;...;leaf VALUE, see --kind), the default",
	.binary = false,
	.one_kind = true,
	.stacks_in_any_order = true,
	.write = folded_write,
};
