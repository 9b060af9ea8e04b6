/*
 * symbol_cache.c — the symbol cache's entries: checked when mapped, written whole and renamed, trimmed to a
 * size cap (see symbol_cache.h for the format and why it holds answers per address).
 *
 * The directory is made and checked the way the build-ID cache is (cache_dir.h): the cache directory must
 * belong to us or to the user it is for, CACHE/symbols is 0700, entries are 0600 and belong to the owner of
 * the cache directory, and nothing below the cache directory is reached through a symbolic link.
 */
#include "symbol_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zlib.h>

#include "../cache_dir.h"
#include "../util.h"

#define MAX_ENTRY_SIZE ((uint64_t)1 << 32) /* larger files are not ours */
#define DEFAULT_CAP_MB 256

/* The string pool being written: each distinct string once, found again through a hash table. */
struct symbol_cache_pool {
	char *bytes;
	size_t size, capacity;
	uint32_t *slots;  /* offset + 1, 0 for an empty slot */
	uint32_t *hashes; /* each slot's string's hash: compared before the string, and kept for the rehash */
	size_t slot_count, used;
	struct pointer_table stable; /* strings added by symbol_cache_add_stable, numbering stable_offsets */
	uint32_t *stable_offsets;    /* their offsets */
	size_t stable_capacity;
};

/*
 * A frame of symbol_cache_add_stable as it was given, its strings by pointer (the module's, which stay put),
 * and its index among the pending answers' distinct frames + 1 (0: an empty slot). The frames given last are
 * kept in RECENT_FRAMES slots, each frame in one of the two its hash chooses (the one asked for last first): a
 * frame found there costs one hash of
 * these bytes, rather than a lookup per string (pool_add_stable) and one of the frame by content (frame_index).
 * The callers of a C++ program's inlined code are on the chain of most of its addresses: its 20,000 addresses
 * had 84,203 frames, of 1,539 distinct ones, and those lookups were a fifth of a cold `stackrec symbolize`. A
 * slot per frame, not a table of every frame seen: in C, whose frames repeat less, a table of every frame took
 * 1.3 MB more on libc, for no time saved.
 */
struct symbol_cache_stable_frame {
	const char *function, *system_name, *file;
	uint32_t line, column, discriminator, start_line, flags; /* the key ends here (STABLE_KEY_SIZE) */
	uint32_t index;
};

#define STABLE_KEY_SIZE offsetof(struct symbol_cache_stable_frame, index)
#define RECENT_FRAMES 1024 /* 48 KiB: on that C++ program, 2,048 saved 2% more of its instructions, 512 cost 3% */

static uint32_t pool_add(struct symbol_cache_pool *p, const char *s);
static uint64_t hash_bytes(const char *s, size_t len);

/* Table t (runs, or the pending answers' distinct frames) with twice the slots. */
static void table_grow(struct symbol_cache_runs *t)
{
	struct symbol_cache_runs old = *t;
	size_t j;

	t->slot_count = old.slot_count ? 2 * old.slot_count : 1024;
	t->slots = xcalloc(t->slot_count, sizeof(*t->slots));
	t->hashes = xcalloc(t->slot_count, sizeof(*t->hashes));
	for (size_t i = 0; i < old.slot_count; i++) {
		if (!old.slots[i])
			continue;
		for (j = old.hashes[i] & (t->slot_count - 1); t->slots[j]; j = (j + 1) & (t->slot_count - 1))
			;
		t->slots[j] = old.slots[i];
		t->hashes[j] = old.hashes[i];
	}
	free(old.slots);
	free(old.hashes);
}

/* Room in t for one more, at most three quarters full (as the pending answers' table: half full, the runs and
 * frames of a C++ program's 20,000 answers took 96 KiB, not 48): the test inline, as it is made for every frame
 * of an answer. */
static inline void table_reserve(struct symbol_cache_runs *t)
{
	if (4 * (t->count + 1) > 3 * t->slot_count)
		table_grow(t);
}

/*
 * Run sharing, for the pending answers and for an entry being built: the run of count frames (item_size bytes
 * each: an entry's frames, or the pending answers' frame indexes) at frames[first] is looked for among the
 * runs of t (owned by answers in answers[]); found, its first frame is returned, else the run is added as
 * answer owner's, and first is returned. Deep inline chains are the same for every address of a line: a C++
 * program's 20,000 random addresses had 84,203 frames, in 2,105 distinct runs.
 */
static uint32_t share_run(struct symbol_cache_runs *t, const struct symbol_cache_address *answers,
			  const void *frames, size_t item_size, uint32_t first, uint32_t count, uint32_t owner)
{
	const char *items = frames;
	size_t bytes = (size_t)count * item_size, j;
	uint32_t hash = (uint32_t)hash_bytes(items + first * item_size, bytes);

	table_reserve(t);
	for (j = hash & (t->slot_count - 1); t->slots[j]; j = (j + 1) & (t->slot_count - 1)) {
		const struct symbol_cache_address *a = &answers[t->slots[j] - 1];

		if (t->hashes[j] == hash && a->frame_count == count &&
		    !memcmp(items + a->first_frame * item_size, items + first * item_size, bytes))
			return a->first_frame;
	}
	t->slots[j] = owner + 1;
	t->hashes[j] = hash;
	t->count++;
	return first;
}

static void run_table_release(struct symbol_cache_runs *t)
{
	free(t->slots);
	free(t->hashes);
	memset(t, 0, sizeof(*t));
}

/*
 * crc (zlib's CRC-32, the format's) continued over the n bytes at p. libdeflate computes the same CRC-32 as zlib's
 * crc32 (the gzip polynomial), with the CPU's carry-less multiply where there is one: zlib's took 2.7M
 * instructions for a C++ program's 700 KB entry, a fiftieth of a cold run, and as much again for each warm run's
 * check of the entry. zlib still combines two CRCs (crc32_combine).
 */
static uLong crc_more(uLong crc, const void *p, size_t n)
{
	return libdeflate_crc32((uint32_t)crc, p, n);
}

static uint32_t entry_crc(const void *data, size_t size)
{
	size_t skip = offsetof(struct symbol_cache_header, flags);

	return (uint32_t)crc_more(0, (const unsigned char *)data + skip, size - skip);
}

/*
 * Whether string offset off (or NONE, when none_ok) names a NUL-terminated string inside the pool, given
 * strings_end, one past the pool's last NUL (0 when it has none): an offset below it has a NUL after it in
 * the pool, and one at or past it none. One search of the pool, not one per string: a warm run checks every
 * string offset of the entry, and the search per offset was a fifth of its start-up.
 */
static bool string_ok(uint32_t off, size_t strings_end, bool none_ok)
{
	if (off == SYMBOL_CACHE_NONE)
		return none_ok;
	return off < strings_end;
}

static const char *string_at(const struct symbol_cache_view *v, uint32_t off)
{
	return off == SYMBOL_CACHE_NONE ? NULL : v->strings + off;
}

/* A section [offset, offset + count * size) inside the file after the header, 8-byte aligned. */
static bool section_ok(uint64_t offset, uint64_t count, uint64_t size, uint64_t file_size)
{
	if (offset < sizeof(struct symbol_cache_header) || offset % 8 || offset > file_size)
		return false;
	return count <= (file_size - offset) / size;
}

const char *symbol_cache_check(const void *data, size_t size, const struct symbol_cache_key *key,
			       struct symbol_cache_view *view)
{
	const struct symbol_cache_header *h = data;
	const char *base = data, *last_nul;
	size_t strings_end;

	memset(view, 0, sizeof(*view));
	if (size < sizeof(*h) || memcmp(h->magic, SYMBOL_CACHE_MAGIC, sizeof(h->magic)))
		return "not a symbol cache entry";
	if (h->version != SYMBOL_CACHE_VERSION || h->header_size != sizeof(*h))
		return "another version";
	if (h->file_size != size)
		return "cut short or grown";
	if (h->crc != entry_crc(data, size))
		return "checksum mismatch";
	if (!section_ok(h->addresses_offset, h->address_count, sizeof(*view->addresses), size) ||
	    !section_ok(h->frames_offset, h->frame_count, sizeof(*view->frames), size) ||
	    !section_ok(h->strings_offset, h->strings_size, 1, size))
		return "a section outside the file";
	view->header = h;
	view->addresses = (const void *)(base + h->addresses_offset);
	view->frames = (const void *)(base + h->frames_offset);
	view->strings = base + h->strings_offset;
	view->address_count = (size_t)h->address_count;
	view->frame_count = (size_t)h->frame_count;
	view->strings_size = (size_t)h->strings_size;
	last_nul = view->strings_size ? memrchr(view->strings, '\0', view->strings_size) : NULL;
	strings_end = last_nul ? (size_t)(last_nul - view->strings) + 1 : 0;
	if (!string_ok(h->build_id, strings_end, false) || !string_ok(h->rules, strings_end, false) ||
	    !string_ok(h->identity, strings_end, false) || !string_ok(h->debug_reason, strings_end, true))
		goto bad_string;
	for (size_t i = 0; i < view->address_count; i++) {
		const struct symbol_cache_address *a = &view->addresses[i];

		if (i && a->address <= view->addresses[i - 1].address)
			goto bad;
		if (a->frame_count > SYMBOL_CACHE_MAX_FRAMES || a->first_frame > view->frame_count ||
		    a->frame_count > view->frame_count - a->first_frame)
			goto bad;
	}
	for (size_t i = 0; i < view->frame_count; i++) {
		const struct symbol_cache_frame *f = &view->frames[i];

		if (!string_ok(f->function, strings_end, true) || !string_ok(f->system_name, strings_end, true) ||
		    !string_ok(f->file, strings_end, true) || f->flags > 1)
			goto bad_string;
	}
	if (key && (strcmp(string_at(view, h->build_id), key->build_id) || strcmp(string_at(view, h->rules), key->rules)))
		return "another binary or naming rules";
	if (key && strcmp(string_at(view, h->identity), key->identity))
		return "made from other files";
	return NULL;
bad:
	memset(view, 0, sizeof(*view));
	return "addresses out of order or frames outside the file";
bad_string:
	memset(view, 0, sizeof(*view));
	return "a string outside the file";
}

/* The frames of answer a into out[0, a->frame_count); their strings copied, or with borrow pointing into v. */
static void view_frames(const struct symbol_cache_view *v, const struct symbol_cache_address *a,
			struct profile_frame *out, bool borrow)
{
	for (uint32_t i = 0; i < a->frame_count; i++) {
		const struct symbol_cache_frame *in =
			&v->frames[v->frame_ids ? v->frame_ids[a->first_frame + i] : a->first_frame + i];
		const char *s;

		out[i] = (struct profile_frame){
			.line = in->line,
			.column = in->column,
			.discriminator = in->discriminator,
			.start_line = in->start_line,
			.inlined = in->flags & 1,
		};
		out[i].function = (char *)((s = string_at(v, in->function)) && !borrow ? xstrdup(s) : s);
		out[i].system_name = (char *)((s = string_at(v, in->system_name)) && !borrow ? xstrdup(s) : s);
		out[i].file = (char *)((s = string_at(v, in->file)) && !borrow ? xstrdup(s) : s);
	}
}

/* The entry's answer for address in view v, or NULL. */
static const struct symbol_cache_address *view_answer(const struct symbol_cache_view *v, uint64_t address)
{
	size_t i = UPPER_BOUND(v->addresses, v->address_count, address, address);

	return i && v->addresses[i - 1].address == address ? &v->addresses[i - 1] : NULL;
}

/*
 * Buckets over a valid entry's addresses, so that a lookup reads one or two of them where a binary search
 * read a dozen and more, most of them from memory on a list of random addresses: bucket b holds the addresses
 * whose distance from the first, shifted right by bucket_shift, is b, from bucket_first[b] to
 * bucket_first[b + 1]. At most as many buckets as addresses.
 */
static void index_build(struct symbol_cache *c)
{
	const struct symbol_cache_address *a = c->view.addresses;
	size_t n = c->view.address_count, buckets, i = 0;
	uint64_t span;

	if (!n)
		return;
	span = a[n - 1].address - a[0].address;
	while ((span >> c->bucket_shift) >= n)
		c->bucket_shift++;
	buckets = (size_t)(span >> c->bucket_shift) + 1;
	c->bucket_first = xmalloc((buckets + 1) * sizeof(*c->bucket_first));
	c->bucket_count = buckets;
	for (size_t b = 0; b <= buckets; b++) {
		while (i < n && (a[i].address - a[0].address) >> c->bucket_shift < b)
			i++;
		c->bucket_first[b] = (uint32_t)i;
	}
}

/* The valid entry's answer for address, through its buckets, or NULL. */
static const struct symbol_cache_address *entry_answer(const struct symbol_cache *c, uint64_t address)
{
	const struct symbol_cache_address *a = c->view.addresses;
	uint64_t b;

	if (!c->bucket_count || address < a[0].address)
		return NULL;
	b = (address - a[0].address) >> c->bucket_shift;
	if (b >= c->bucket_count)
		return NULL;
	for (uint32_t i = c->bucket_first[b]; i < c->bucket_first[b + 1]; i++)
		if (a[i].address == address)
			return &a[i];
	return NULL;
}

/* Answer a of view v, its strings copied: *frames allocated (NULL when *count is 0). */
static void view_copy(const struct symbol_cache_view *v, const struct symbol_cache_address *a,
		      struct profile_frame **frames, uint32_t *count)
{
	*count = a->frame_count;
	*frames = a->frame_count ? xcalloc(a->frame_count, sizeof(**frames)) : NULL;
	view_frames(v, a, *frames, false);
}

bool symbol_cache_view_find(const struct symbol_cache_view *v, uint64_t address, struct profile_frame **frames,
			    uint32_t *count)
{
	const struct symbol_cache_address *a = view_answer(v, address);

	if (a)
		view_copy(v, a, frames, count);
	return a;
}

/* ---- the directory -------------------------------------------------------------------------------- */

/* CACHE/symbols (cache_dir_open_sub). */
static int open_dir(const char *cache_dir, bool create, uid_t *owner, gid_t *group)
{
	return cache_dir_open_sub(cache_dir, "symbols", create, owner, group, "symbol cache");
}

/* Whether a build ID is one a file name can be made of: lowercase hex, after "go-" for a Go build ID. It comes
 * from a recording (hex-encoded there) or a profile cache entry (checked there): this is the last guard before
 * it names a file, renamed into place, under the cache directory. */
static bool build_id_names_a_file(const char *build_id)
{
	const char *p = strncmp(build_id, "go-", 3) ? build_id : build_id + 3;

	return *p && hex_lowercase(p);
}

void symbol_cache_open(struct symbol_cache *c, const char *cache_dir, const struct symbol_cache_key *key)
{
	const char *why;
	uid_t owner;
	gid_t group;
	int dir_fd, fd;

	memset(c, 0, sizeof(*c));
	if (!cache_dir || !key->build_id || strlen(key->build_id) < 4 || !build_id_names_a_file(key->build_id))
		return;
	c->dir = xstrdup(cache_dir);
	c->name = xasprintf("%s.%s", key->build_id, key->rules);
	c->key.build_id = xstrdup(key->build_id);
	c->key.rules = xstrdup(key->rules);
	c->key.identity = xstrdup(key->identity);
	dir_fd = open_dir(cache_dir, false, &owner, &group);
	if (dir_fd < 0)
		return;
	c->map = cache_dir_map(dir_fd, c->name, MAX_ENTRY_SIZE, false, &c->map_size, &fd);
	close(dir_fd);
	if (!c->map)
		return;
	why = symbol_cache_check(c->map, c->map_size, &c->key, &c->view);
	if (why) {
		debug("symbol cache entry '%s/symbols/%s' not used: %s", cache_dir, c->name, why);
	} else {
		c->valid = true;
		index_build(c);
		cache_dir_touch(fd); /* used now: the trim keeps it longest */
		debug("symbol cache entry '%s/symbols/%s': %zu addresses", cache_dir, c->name, c->view.address_count);
	}
	close(fd);
}

static size_t address_slot(uint64_t address, size_t slot_count)
{
	address ^= address >> 29;
	address *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(address ^ (address >> 32)) & (slot_count - 1);
}

/* The pending answer for address, or NULL. */
static const struct symbol_cache_address *pending_find(const struct symbol_cache *c, uint64_t address)
{
	if (!c->slot_count)
		return NULL;
	for (size_t i = address_slot(address, c->slot_count); c->pending_slots[i]; i = (i + 1) & (c->slot_count - 1))
		if (c->pending[c->pending_slots[i] - 1].address == address)
			return &c->pending[c->pending_slots[i] - 1];
	return NULL;
}

/* The offset of stable string s in the pool (symbol_cache_add_stable): found by its pointer after the first
 * time. */
static uint32_t pool_add_stable(struct symbol_cache_pool *p, const char *s)
{
	bool added;
	size_t n;

	if (!s)
		return SYMBOL_CACHE_NONE;
	n = pointer_table_add(&p->stable, s, &added);
	if (added) {
		GROW(p->stable_offsets, p->stable_capacity, n + 1);
		p->stable_offsets[n] = pool_add(p, s);
	}
	return p->stable_offsets[n];
}

/* Frame f as an entry holds it, its strings added to pool (stable: by pointer, pool_add_stable). */
static struct symbol_cache_frame stored_frame(struct symbol_cache_pool *pool, const struct profile_frame *f,
					      bool stable)
{
	uint32_t (*add)(struct symbol_cache_pool *, const char *) = stable ? pool_add_stable : pool_add;

	return (struct symbol_cache_frame){
		.function = add(pool, f->function),
		.system_name = add(pool, f->system_name),
		.file = add(pool, f->file),
		.line = f->line,
		.column = f->column,
		.discriminator = f->discriminator,
		.start_line = f->start_line,
		.flags = f->inlined ? 1 : 0,
	};
}

/* The answers added in this run, as a view: their frames and strings as the entry will hold them. */
static struct symbol_cache_view pending_view(const struct symbol_cache *c)
{
	return (struct symbol_cache_view){ .frames = c->frames,
					   .frame_ids = c->pending_frames,
					   .strings = c->pool ? c->pool->bytes : NULL };
}

bool symbol_cache_lookup(const struct symbol_cache *c, uint64_t address, struct profile_frame **frames,
			 uint32_t *count)
{
	const struct symbol_cache_address *a = c->valid ? entry_answer(c, address) : NULL;
	struct symbol_cache_view pending;

	if (a) {
		view_copy(&c->view, a, frames, count);
		return true;
	}
	a = pending_find(c, address);
	if (!a)
		return false;
	pending = pending_view(c);
	view_copy(&pending, a, frames, count);
	return true;
}

bool symbol_cache_peek_into(const struct symbol_cache *c, uint64_t address, struct profile_frame *frames,
			    uint32_t *count, bool *pending)
{
	const struct symbol_cache_address *a = c->valid ? entry_answer(c, address) : NULL;
	struct symbol_cache_view view;

	if (a) {
		*count = a->frame_count;
		*pending = false;
		view_frames(&c->view, a, frames, true);
		return true;
	}
	a = pending_find(c, address);
	if (!a)
		return false;
	view = pending_view(c);
	*count = a->frame_count;
	*pending = true;
	view_frames(&view, a, frames, true);
	return true;
}

/* Whether an answer for address is to be remembered: the cache is on, has room, and has none for it yet. */
static bool wanted(const struct symbol_cache *c, uint64_t address, uint32_t count)
{
	return c->dir && count <= SYMBOL_CACHE_MAX_FRAMES && c->pending_count < UINT32_MAX - 1 &&
	       c->pending_frame_count + count < UINT32_MAX && !pending_find(c, address);
}

/* The index of frame f among the pending answers' distinct frames (added when new). Deep inline chains share
 * their outer frames: keeping each once, and runs of 4-byte indexes, took a C++ program's pending frames from
 * 312 to 88 KiB. */
static uint32_t frame_index(struct symbol_cache *c, const struct symbol_cache_frame *f)
{
	struct symbol_cache_runs *t = &c->frame_table;
	uint32_t hash = (uint32_t)hash_bytes((const char *)f, sizeof(*f));
	size_t j;

	table_reserve(t);
	for (j = hash & (t->slot_count - 1); t->slots[j]; j = (j + 1) & (t->slot_count - 1))
		if (t->hashes[j] == hash && !memcmp(&c->frames[t->slots[j] - 1], f, sizeof(*f)))
			return t->slots[j] - 1;
	GROW(c->frames, c->frame_capacity, c->frame_count + 1);
	c->frames[c->frame_count] = *f;
	t->slots[j] = (uint32_t)c->frame_count + 1;
	t->hashes[j] = hash;
	t->count++;
	return (uint32_t)c->frame_count++;
}

/* The index of stable frame f among the pending answers' distinct frames: from its slot among the recent
 * frames (symbol_cache_stable_frame), else stored (its strings pooled by pointer) and put in that slot. */
static uint32_t stable_frame_index(struct symbol_cache *c, const struct profile_frame *f)
{
	struct symbol_cache_stable_frame key = { .function = f->function, .system_name = f->system_name,
						 .file = f->file, .line = f->line, .column = f->column,
						 .discriminator = f->discriminator, .start_line = f->start_line,
						 .flags = f->inlined ? 1 : 0 };
	struct symbol_cache_stable_frame *set;
	struct symbol_cache_frame stored;

	if (!c->recent_frames)
		c->recent_frames = xcalloc(RECENT_FRAMES, sizeof(*c->recent_frames));
	set = &c->recent_frames[hash_bytes((const char *)&key, STABLE_KEY_SIZE) & (RECENT_FRAMES - 2)];
	if (set[0].index && !memcmp(&set[0], &key, STABLE_KEY_SIZE))
		return set[0].index - 1;
	if (set[1].index && !memcmp(&set[1], &key, STABLE_KEY_SIZE)) {
		key = set[1]; /* asked for last now */
		set[1] = set[0];
		set[0] = key;
		return key.index - 1;
	}
	stored = stored_frame(c->pool, f, true);
	key.index = frame_index(c, &stored) + 1;
	set[1] = set[0]; /* the one used longer ago goes */
	set[0] = key;
	return key.index - 1;
}

/*
 * Adds a wanted answer, its frames stored as the entry stores them and their strings in the pool: keeping
 * each answer's allocated frames until the entry was written, then hashing every string again, nearly tripled
 * a cold `stackrec symbolize` on C++ (deep inline chains, long names) and its memory.
 */
static void insert(struct symbol_cache *c, uint64_t address, const struct profile_frame *frames, uint32_t count,
		   bool stable)
{
	size_t i;

	/* Up to three quarters full, not half: 20,000 answers take 32,768 slots, not 65,536 (128 KiB of a cold
	 * `stackrec symbolize`'s peak), for a probe or two more on a new address. */
	if (4 * (c->pending_count + 1) > 3 * c->slot_count) {
		c->slot_count = c->slot_count ? 2 * c->slot_count : 1024;
		free(c->pending_slots);
		c->pending_slots = xcalloc(c->slot_count, sizeof(*c->pending_slots));
		for (size_t j = 0; j < c->pending_count; j++) {
			for (i = address_slot(c->pending[j].address, c->slot_count); c->pending_slots[i];
			     i = (i + 1) & (c->slot_count - 1))
				;
			c->pending_slots[i] = (uint32_t)j + 1;
		}
	}
	if (!c->pool)
		c->pool = xcalloc(1, sizeof(*c->pool));
	GROW(c->pending, c->pending_capacity, c->pending_count + 1);
	c->pending[c->pending_count] = (struct symbol_cache_address){
		.address = address, .first_frame = (uint32_t)c->pending_frame_count, .frame_count = count };
	GROW(c->pending_frames, c->pending_frame_capacity, c->pending_frame_count + count);
	for (uint32_t k = 0; k < count; k++) {
		struct symbol_cache_frame f;

		if (stable) {
			c->pending_frames[c->pending_frame_count + k] = stable_frame_index(c, &frames[k]);
			continue;
		}
		f = stored_frame(c->pool, &frames[k], false);
		c->pending_frames[c->pending_frame_count + k] = frame_index(c, &f);
	}
	if (count) { /* stored once: an answer asked before for another address shares its run */
		uint32_t first = (uint32_t)c->pending_frame_count;

		c->pending[c->pending_count].first_frame = share_run(&c->runs, c->pending, c->pending_frames,
								     sizeof(*c->pending_frames), first, count,
								     (uint32_t)c->pending_count);
		if (c->pending[c->pending_count].first_frame == first)
			c->pending_frame_count += count;
	}
	c->pending_count++;
	for (i = address_slot(address, c->slot_count); c->pending_slots[i]; i = (i + 1) & (c->slot_count - 1))
		;
	c->pending_slots[i] = (uint32_t)c->pending_count;
}

void symbol_cache_add(struct symbol_cache *c, uint64_t address, const struct profile_frame *frames, uint32_t count)
{
	if (wanted(c, address, count))
		insert(c, address, frames, count, false);
}

void symbol_cache_add_stable(struct symbol_cache *c, uint64_t address, const struct profile_frame *frames,
			     uint32_t count)
{
	if (wanted(c, address, count))
		insert(c, address, frames, count, true);
}

bool symbol_cache_has_symtab(const struct symbol_cache *c)
{
	return c->view.header->flags & SYMBOL_CACHE_FLAG_HAS_SYMTAB;
}

const char *symbol_cache_debug_reason(const struct symbol_cache *c)
{
	return string_at(&c->view, c->view.header->debug_reason);
}

/* ---- writing ------------------------------------------------------------------------------------- */

/* A hash of the len bytes at s: util.h's, seeded with the length, as it was when it was written here. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	return hash_words(len * 0x9e3779b97f4a7c15ull, s, len);
}

static void pool_rehash(struct symbol_cache_pool *p)
{
	size_t count = p->slot_count ? 2 * p->slot_count : 1024;
	uint32_t *old = p->slots, *old_hashes = p->hashes;
	size_t old_count = p->slot_count;

	p->slots = xcalloc(count, sizeof(*p->slots));
	p->hashes = xcalloc(count, sizeof(*p->hashes));
	p->slot_count = count;
	for (size_t i = 0; i < old_count; i++) {
		size_t j;

		if (!old[i])
			continue;
		for (j = old_hashes[i] & (count - 1); p->slots[j]; j = (j + 1) & (count - 1))
			;
		p->slots[j] = old[i];
		p->hashes[j] = old_hashes[i];
	}
	free(old);
	free(old_hashes);
}

/* The offset of s in the pool (added when new); NONE for NULL, or when the pool would pass 4 GiB. */
static uint32_t pool_add(struct symbol_cache_pool *p, const char *s)
{
	size_t len, j;
	uint32_t hash;

	if (!s)
		return SYMBOL_CACHE_NONE;
	if (2 * (p->used + 1) > p->slot_count)
		pool_rehash(p);
	len = strlen(s) + 1;
	hash = (uint32_t)hash_bytes(s, len - 1);
	for (j = hash & (p->slot_count - 1); p->slots[j]; j = (j + 1) & (p->slot_count - 1))
		if (p->hashes[j] == hash && p->slots[j] - 1 + len <= p->size && /* memcmp may read all len bytes */
		    !memcmp(p->bytes + p->slots[j] - 1, s, len))
			return p->slots[j] - 1;
	if (p->size + len >= SYMBOL_CACHE_NONE - 1)
		return SYMBOL_CACHE_NONE;
	GROW(p->bytes, p->capacity, p->size + len);
	memcpy(p->bytes + p->size, s, len);
	p->slots[j] = (uint32_t)p->size + 1;
	p->hashes[j] = hash;
	p->used++;
	p->size += len;
	return (uint32_t)(p->size - len);
}

/*
 * Sorts the pending answers by address: a radix sort a byte at a time, over the bytes that differ between
 * addresses (two or three in a binary's text). Addresses are distinct. qsort's compare calls took 2% of a
 * cold `stackrec symbolize`.
 */
static void sort_pending(struct symbol_cache_address *pending, size_t n)
{
	struct symbol_cache_address *from = pending, *to, *spare;
	uint64_t any = 0, all = UINT64_MAX;

	if (n < 2)
		return;
	for (size_t i = 0; i < n; i++) {
		any |= pending[i].address;
		all &= pending[i].address;
	}
	to = spare = xmalloc(n * sizeof(*spare));
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t starts[256] = { 0 }, sum = 0;

		if (!(((any ^ all) >> shift) & 0xff))
			continue; /* the same byte in every address */
		for (size_t i = 0; i < n; i++)
			starts[(from[i].address >> shift) & 0xff]++;
		for (size_t b = 0; b < 256; b++) {
			size_t count = starts[b];

			starts[b] = sum;
			sum += count;
		}
		for (size_t i = 0; i < n; i++) /* in order within a byte value: each pass keeps the previous ones' */
			to[starts[(from[i].address >> shift) & 0xff]++] = from[i];
		to = from; /* the next pass reads what this one wrote */
		from = to == pending ? spare : pending;
	}
	if (from != pending)
		memcpy(pending, from, n * sizeof(*pending));
	free(spare);
}

struct builder {
	struct symbol_cache_address *addresses;
	size_t address_count, address_capacity;
	struct symbol_cache_frame *frames;
	size_t frame_count, frame_capacity;
	struct symbol_cache_pool pool;
	/* The new answers' strings (offsets in the cache's pool, + 1, 0 for an empty slot) to their offsets in
	 * pool: each string hashed once, not once per frame. */
	uint32_t *from, *to;
	size_t map_count;
	struct symbol_cache_runs runs; /* the entry's distinct runs: addresses with the same answer share one */
	uint32_t *run_of_pending;      /* by a pending run's first frame: its run in the entry + 1, 0: none yet */
};

/* The frames of the last answer added, just appended: shared with an earlier answer's run when the same. */
static void share_last_run(struct builder *b)
{
	struct symbol_cache_address *a = &b->addresses[b->address_count - 1];
	uint32_t first = a->first_frame;

	if (!a->frame_count)
		return;
	a->first_frame = share_run(&b->runs, b->addresses, b->frames, sizeof(*b->frames), first, a->frame_count,
				   (uint32_t)(b->address_count - 1));
	if (a->first_frame != first)
		b->frame_count = first;
}

/* Offset off of the cache's pool as an offset of the entry's: the entry's pool is laid out anew, in the order
 * of the answers by address, so that an entry has the same bytes whatever the order its answers came in. */
static uint32_t map_string(struct builder *b, const struct symbol_cache_pool *pool, uint32_t off)
{
	size_t j;

	if (off == SYMBOL_CACHE_NONE)
		return off;
	for (j = address_slot(off, b->map_count); b->from[j]; j = (j + 1) & (b->map_count - 1))
		if (b->from[j] == off + 1)
			return b->to[j];
	b->from[j] = off + 1;
	return b->to[j] = pool_add(&b->pool, pool->bytes + off);
}

static void add_answer(struct builder *b, uint64_t address, const struct profile_frame *frames, uint32_t count)
{
	GROW(b->addresses, b->address_capacity, b->address_count + 1);
	b->addresses[b->address_count++] = (struct symbol_cache_address){
		.address = address, .first_frame = (uint32_t)b->frame_count, .frame_count = count };
	GROW(b->frames, b->frame_capacity, b->frame_count + count);
	for (uint32_t i = 0; i < count; i++)
		b->frames[b->frame_count++] = stored_frame(&b->pool, &frames[i], false);
	share_last_run(b);
}

/* Adds answer a of this run, its frames and strings already as the entry holds them. */
static void add_pending(struct builder *b, const struct symbol_cache *c, const struct symbol_cache_address *a)
{
	uint32_t *known = a->frame_count ? &b->run_of_pending[a->first_frame] : NULL;

	GROW(b->addresses, b->address_capacity, b->address_count + 1);
	b->addresses[b->address_count] = *a;
	if (known && *known) { /* a pending run already in the entry: the same strings, the same run */
		b->addresses[b->address_count++].first_frame = *known - 1;
		return;
	}
	b->addresses[b->address_count++].first_frame = (uint32_t)b->frame_count;
	GROW(b->frames, b->frame_capacity, b->frame_count + a->frame_count);
	for (uint32_t i = 0; i < a->frame_count; i++) {
		struct symbol_cache_frame f = c->frames[c->pending_frames[a->first_frame + i]];

		f.function = map_string(b, c->pool, f.function);
		f.system_name = map_string(b, c->pool, f.system_name);
		f.file = map_string(b, c->pool, f.file);
		b->frames[b->frame_count++] = f;
	}
	share_last_run(b);
	if (known)
		*known = b->addresses[b->address_count - 1].first_frame + 1;
}

/* The entry's bytes: the mapped answers (when valid) merged with the new ones, by address. */
/*
 * What is only needed to add answers: dropped before the entry is built, so that its memory is there for the
 * builder's (the entry's sections are as large as the pending answers again).
 */
static void drop_pending_lookups(struct symbol_cache *c)
{
	free(c->pending_slots);
	c->pending_slots = NULL;
	c->slot_count = 0;
	run_table_release(&c->runs);
	run_table_release(&c->frame_table);
	free(c->pool->slots);
	free(c->pool->hashes);
	c->pool->slots = c->pool->hashes = NULL;
	c->pool->slot_count = 0;
	pointer_table_release(&c->pool->stable);
	free(c->pool->stable_offsets);
	c->pool->stable_offsets = NULL;
	c->pool->stable_capacity = 0;
	free(c->recent_frames);
	c->recent_frames = NULL;
}

/* Frees what build_entry left in b. */
static void builder_release(struct builder *b)
{
	free(b->addresses);
	free(b->frames);
	free(b->from);
	free(b->to);
	free(b->run_of_pending);
	run_table_release(&b->runs);
	free(b->pool.bytes);
	free(b->pool.slots);
	free(b->pool.hashes);
}

/* The entry in *b, its header in *h (crc included): the mapped answers (when valid) merged with the new ones,
 * by address. Written from there, section by section, rather than copied into one buffer first. */
/* Starts an entry: its header's fixed fields and the module's strings, the string map, the pending answers
 * sorted by address. */
static void builder_start(struct builder *b, struct symbol_cache_header *h, struct symbol_cache *c, bool has_symtab,
			  const char *debug_reason)
{
	drop_pending_lookups(c);
	*h = (struct symbol_cache_header){ .version = SYMBOL_CACHE_VERSION, .header_size = sizeof(*h) };
	memcpy(h->magic, SYMBOL_CACHE_MAGIC, sizeof(h->magic));
	h->flags = has_symtab ? SYMBOL_CACHE_FLAG_HAS_SYMTAB : 0;
	h->build_id = pool_add(&b->pool, c->key.build_id);
	h->rules = pool_add(&b->pool, c->key.rules);
	h->identity = pool_add(&b->pool, c->key.identity);
	h->debug_reason = pool_add(&b->pool, debug_reason);
	for (b->map_count = 1024; b->map_count < 2 * c->pool->used; b->map_count *= 2)
		;
	b->from = xcalloc(b->map_count, sizeof(*b->from));
	b->to = xmalloc(b->map_count * sizeof(*b->to));
	b->run_of_pending = xcalloc(c->pending_frame_count + 1, sizeof(*b->run_of_pending));
	sort_pending(c->pending, c->pending_count);
}

static void build_entry(struct symbol_cache *c, bool has_symtab, const char *debug_reason, struct builder *out,
			struct symbol_cache_header *out_header)
{
	struct builder b = { 0 };
	struct symbol_cache_header h;
	size_t old = c->valid ? c->view.address_count : 0, i = 0, j = 0;
	size_t skip = offsetof(struct symbol_cache_header, flags);
	uLong crc;

	builder_start(&b, &h, c, has_symtab, debug_reason);
	while (i < old || j < c->pending_count) {
		uint64_t a = i < old ? c->view.addresses[i].address : UINT64_MAX;
		uint64_t p = j < c->pending_count ? c->pending[j].address : UINT64_MAX;

		if (j < c->pending_count && (i == old || p < a)) {
			if (!b.address_count || b.addresses[b.address_count - 1].address != p)
				add_pending(&b, c, &c->pending[j]);
			j++;
		} else {
			struct profile_frame *frames = NULL;
			uint32_t count = 0;

			if (symbol_cache_view_find(&c->view, a, &frames, &count))
				add_answer(&b, a, frames, count);
			profile_frames_free(frames, count);
			i++;
			if (p == a)
				j++; /* asked again by a run racing with this one: the same answer */
		}
	}
	h.addresses_offset = sizeof(h);
	h.address_count = b.address_count;
	h.frames_offset = h.addresses_offset + b.address_count * sizeof(*b.addresses);
	h.frame_count = b.frame_count;
	h.strings_offset = h.frames_offset + b.frame_count * sizeof(*b.frames);
	h.strings_size = b.pool.size;
	h.file_size = h.strings_offset + h.strings_size;
	crc = crc_more(0, (const char *)&h + skip, sizeof(h) - skip);
	crc = crc_more(crc, b.addresses, b.address_count * sizeof(*b.addresses));
	crc = crc_more(crc, b.frames, b.frame_count * sizeof(*b.frames));
	h.crc = (uint32_t)crc_more(crc, b.pool.bytes, b.pool.size);
	free(b.from); /* what the sections are made of stays; the rest goes now */
	free(b.to);
	free(b.run_of_pending);
	b.from = b.to = b.run_of_pending = NULL;
	run_table_release(&b.runs);
	*out = b;
	*out_header = h;
}

/* Bytes written to a file through a buffer, their CRC kept. */
struct file_writer {
	int fd;
	bool ok;
	uLong crc;
	uint64_t size;
	size_t used;
	char buffer[1 << 16];
};

/* Writes out what the buffer holds, its CRC taken now: over the whole buffer, not piece by piece as it was
 * filled (an address is 16 bytes, a frame 32), which zlib's crc32 went through a byte at a time, half of writing
 * a C++ program's entry. */
static void writer_flush(struct file_writer *w)
{
	w->crc = crc_more(w->crc, w->buffer, w->used);
	w->ok = w->ok && fd_write_all(w->fd, w->buffer, w->used);
	w->used = 0;
}

static void writer_put(struct file_writer *w, const void *p, size_t n)
{
	if (!n)
		return;
	w->size += n;
	if (w->used + n > sizeof(w->buffer))
		writer_flush(w);
	if (n > sizeof(w->buffer)) {
		w->crc = crc_more(w->crc, p, n);
		w->ok = w->ok && fd_write_all(w->fd, p, n);
		return;
	}
	memcpy(w->buffer + w->used, p, n);
	w->used += n;
}

/*
 * Writes a new entry (no valid one to merge with) straight from the pending answers, as build_entry would
 * build it, byte for byte: the addresses as their runs get their places (the first time an address uses a
 * pending run, in address order), then the runs in that order, their strings mapped into the entry's pool,
 * then the pool, and the header last. Building the sections first held the pending answers twice (go:
 * 24,000 frames, 1.7 MiB at close). false when a write failed.
 */
static bool write_fresh_entry(struct symbol_cache *c, int fd, bool has_symtab, const char *debug_reason)
{
	struct builder b = { 0 };
	struct symbol_cache_header h;
	struct file_writer *w = xcalloc(1, sizeof(*w));
	size_t skip = offsetof(struct symbol_cache_header, flags);
	uint32_t frames = 0;
	uLong crc;
	bool ok;

	builder_start(&b, &h, c, has_symtab, debug_reason);
	w->fd = fd;
	w->ok = lseek(fd, sizeof(h), SEEK_SET) == (off_t)sizeof(h);
	w->crc = 0;
	for (size_t i = 0; i < c->pending_count; i++) {
		struct symbol_cache_address a = c->pending[i];
		uint32_t *known = &b.run_of_pending[a.first_frame];

		if (a.frame_count && !*known) {
			*known = frames + 1;
			frames += a.frame_count;
		}
		a.first_frame = a.frame_count ? *known - 1 : frames;
		writer_put(w, &a, sizeof(a));
	}
	for (size_t i = 0, next = 0; i < c->pending_count; i++) {
		const struct symbol_cache_address *a = &c->pending[i];

		if (!a->frame_count || b.run_of_pending[a->first_frame] - 1 != next)
			continue; /* no frames, or a run written before */
		for (uint32_t k = 0; k < a->frame_count; k++) {
			struct symbol_cache_frame f = c->frames[c->pending_frames[a->first_frame + k]];

			f.function = map_string(&b, c->pool, f.function);
			f.system_name = map_string(&b, c->pool, f.system_name);
			f.file = map_string(&b, c->pool, f.file);
			writer_put(w, &f, sizeof(f));
		}
		next += a->frame_count;
	}
	writer_put(w, b.pool.bytes, b.pool.size);
	writer_flush(w);
	ok = w->ok;
	h.addresses_offset = sizeof(h);
	h.address_count = c->pending_count;
	h.frames_offset = h.addresses_offset + c->pending_count * sizeof(struct symbol_cache_address);
	h.frame_count = frames;
	h.strings_offset = h.frames_offset + (uint64_t)frames * sizeof(struct symbol_cache_frame);
	h.strings_size = b.pool.size;
	h.file_size = h.strings_offset + h.strings_size;
	crc = crc_more(0, (const char *)&h + skip, sizeof(h) - skip);
	h.crc = (uint32_t)crc32_combine(crc, w->crc, (z_off_t)w->size);
	ok = ok && w->size + sizeof(h) == h.file_size && pwrite(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h);
	free(w);
	builder_release(&b);
	return ok;
}

/* Writes the entry as a temporary file in the directory, renamed over the old one. */
static void write_entry(struct symbol_cache *c, bool has_symtab, const char *debug_reason)
{
	char tmp[12];
	struct symbol_cache_header h;
	struct builder b;
	bool written;
	uid_t owner;
	gid_t group;
	int dir_fd = open_dir(c->dir, true, &owner, &group), fd;

	if (dir_fd < 0) {
		debug("cannot use the symbol cache in '%s': %s", c->dir, strerror(errno));
		return;
	}
	fd = cache_dir_temp_file(dir_fd, owner, group, tmp);
	if (fd < 0) {
		debug("cannot write to the symbol cache '%s': %s", c->dir, strerror(errno));
		goto out;
	}
	if (!c->valid) {
		written = write_fresh_entry(c, fd, has_symtab, debug_reason);
	} else {
		build_entry(c, has_symtab, debug_reason, &b, &h);
		written = fd_write_all(fd, &h, sizeof(h)) &&
			  fd_write_all(fd, b.addresses, b.address_count * sizeof(*b.addresses)) &&
			  fd_write_all(fd, b.frames, b.frame_count * sizeof(*b.frames)) &&
			  fd_write_all(fd, b.pool.bytes, b.pool.size);
		builder_release(&b);
	}
	if (!cache_dir_install(dir_fd, fd, tmp, c->name, written)) {
		debug("cannot write the symbol cache entry '%s': %s", c->name, strerror(errno));
		goto out;
	}
	debug("symbol cache entry '%s/symbols/%s' written", c->dir, c->name);
	cache_dir_trim(dir_fd, cache_dir_cap("STACKREC_SYMBOL_CACHE_MB", DEFAULT_CAP_MB), "symbol cache");
out:
	close(dir_fd);
}

void symbol_cache_close(struct symbol_cache *c, bool has_symtab, const char *debug_reason)
{
	if (c->dir && c->pending_count)
		write_entry(c, has_symtab, debug_reason);
	if (c->pool) {
		free(c->pool->bytes);
		free(c->pool->slots);
		free(c->pool->hashes);
		pointer_table_release(&c->pool->stable);
		free(c->pool->stable_offsets);
		free(c->pool);
	}
	free(c->pending_frames);
	free(c->frames);
	free(c->pending);
	free(c->pending_slots);
	run_table_release(&c->runs);
	run_table_release(&c->frame_table);
	free(c->recent_frames);
	free(c->bucket_first);
	if (c->map)
		munmap((void *)c->map, c->map_size);
	free(c->dir);
	free(c->name);
	free((char *)c->key.build_id);
	free((char *)c->key.rules);
	free((char *)c->key.identity);
	memset(c, 0, sizeof(*c));
}
