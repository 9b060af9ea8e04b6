/*
 * profile_cache.c — the profile cache: a recording's samples as convert counted them, kept between runs (see
 * profile_cache.h for what an entry holds, when it is used and its format).
 */
#include "profile_cache.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../cache_dir.h"
#include "../util.h"

#define DEFAULT_CAP_MB 256
#define MAX_ENTRY_SIZE ((size_t)1 << 30) /* read whole: a bound on what a damaged or hostile entry makes us allocate */
#define NO_STRING UINT32_MAX
#define LOCATION_UNNAMED UINT32_MAX /* a location's frame count: unnamed, why follows (a string) */
#define KEY_CHUNK ((size_t)1 << 20) /* hashed at a time, page aligned */
#define KEY_KEEP_PAGES_MAX ((size_t)4 << 20) /* a recording larger than this has its pages given back once hashed */

/* ---- the key ----------------------------------------------------------------------------------------- */

/* Finds the build ID note of the program itself (the first object dl_iterate_phdr reports). */
static int own_build_id(struct dl_phdr_info *info, size_t size, void *ctx)
{
	char *out = ctx;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (end - p >= (ptrdiff_t)sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *n = (const void *)p;
			size_t name = (n->n_namesz + 3) & ~3u, desc = (n->n_descsz + 3) & ~3u;

			if ((size_t)(end - p) - sizeof(*n) < name + desc)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(p + sizeof(*n), "GNU", 4) &&
			    n->n_descsz <= 64) {
				hex_encode(out, (const unsigned char *)p + sizeof(*n) + name, n->n_descsz);
				return 1;
			}
			p += sizeof(*n) + name + desc;
		}
	}
	return 1; /* only the program itself */
}

char *profile_cache_key(const void *data, size_t size, bool keep_timeline, const struct debug_file_search *search)
{
	char self[129] = "", *key, *more;
	uint32_t crc = 0, adler = 1;

	dl_iterate_phdr(own_build_id, self);
	if (!self[0])
		return NULL;
	/* The bytes by their size, CRC-32 and Adler-32: a byte changed, or a few near each other, always changes the
	 * CRC; libdeflate computes both at several GB/s (a 64-bit multiply hash took 2 ms of 1.1 MB). A mapped page
	 * stays resident once read: those of a large file are given back as they are hashed, as the reader gives back
	 * those it has read, so that memory follows the profile and not the file (pass 1 maps them in again). */
	for (size_t at = 0; at < size; at += KEY_CHUNK) {
		size_t n = size - at < KEY_CHUNK ? size - at : KEY_CHUNK;

		crc = libdeflate_crc32(crc, (const unsigned char *)data + at, n);
		adler = libdeflate_adler32(adler, (const unsigned char *)data + at, n);
		if (size > KEY_KEEP_PAGES_MAX)
			madvise((void *)((uintptr_t)data + at), n, MADV_DONTNEED);
	}
	key = xasprintf("stackrec %s; recording %zu bytes crc32 %08x adler32 %08x; timeline %d; symfs %s; cache %s", self,
			size, crc, adler, keep_timeline,
			search->symfs ? search->symfs : "-", search->cache_dir ? search->cache_dir : "-");
	for (size_t i = 0; i < search->dir_count; i++) {
		more = xasprintf("%s; debug dir %s", key, search->dirs[i]);
		free(key);
		key = more;
	}
	return key;
}

/* ---- what the unwinder read ----------------------------------------------------------------------------- */

/*
 * Identity of what module file mf found: module_file_identity; the recording's own vDSO image is named by the key;
 * the running kernel's by its release (a vDSO used without a recorded build ID is taken for the same release's).
 */
static char *found_identity(const struct module_file *mf, const char *build_id, const struct debug_file_search *search)
{
	struct utsname uts;

	if (mf->reason)
		return xasprintf("missing: %s", mf->reason);
	if (mf->path && !strcmp(mf->path, DEBUG_FILE_RUNNING_VDSO))
		return uname(&uts) == 0 ? xasprintf("%s %s", mf->path, uts.release) : NULL;
	if (mf->path && !strcmp(mf->path, DEBUG_FILE_RECORDED_VDSO))
		return xstrdup(mf->path);
	return module_file_identity(mf, build_id, search);
}

void profile_cache_add_module(struct profile_cache_walk *modules, uint32_t module, const struct module_file *mf,
			      const char *build_id, const struct debug_file_search *search)
{
	GROW(modules->list, modules->cap, modules->count + 1);
	modules->list[modules->count++] =
		(struct profile_cache_module){ .module = module, .identity = found_identity(mf, build_id, search) };
}

bool profile_cache_walk_holds(const struct profile_cache_walk *modules, const struct profile *p,
				const struct debug_file_search *search)
{
	struct module_file_callbacks callbacks;
	bool hold = true;

	module_file_callbacks_init(&callbacks, search);
	callbacks.cfi_only = true; /* as the unwinder opens them */
	for (size_t i = 0; i < modules->count && hold; i++) {
		const struct profile_cache_module *cm = &modules->list[i];
		const struct profile_module *m;
		struct module_file mf;
		char *now;

		if (cm->module >= p->module_count) {
			debug("profile cache: a module the entry lists is not the recording's");
			hold = false;
			break;
		}
		m = &p->modules[cm->module];
		module_file_open_lazy(&mf, m, search, &callbacks);
		now = found_identity(&mf, m->build_id, search);
		module_file_close(&mf);
		hold = now && cm->identity && !strcmp(now, cm->identity);
		if (!hold)
			debug("profile cache: '%s' has changed since (%s, was %s)", m->path, now ? now : "unknown",
			      cm->identity ? cm->identity : "unknown");
		free(now);
	}
	module_file_callbacks_release(&callbacks);
	return hold;
}

void profile_cache_walk_release(struct profile_cache_walk *modules)
{
	for (size_t i = 0; i < modules->count; i++)
		free(modules->list[i].identity);
	free(modules->list);
	free(modules->vdso_image);
	free(modules->vdso_build_id);
	memset(modules, 0, sizeof(*modules));
}

/* ---- writing ------------------------------------------------------------------------------------------ */

struct out {
	unsigned char *bytes;
	size_t size, cap;
};

static void put(struct out *o, const void *p, size_t n)
{
	if (!n)
		return; /* p may be NULL then (an empty string's, a stack without locations') */
	if (o->cap - o->size < n) {
		size_t cap = o->cap ? o->cap : 4096;

		while (cap - o->size < n)
			cap *= 2;
		o->bytes = xrealloc(o->bytes, cap);
		o->cap = cap;
	}
	memcpy(o->bytes + o->size, p, n);
	o->size += n;
}

static void put8(struct out *o, uint8_t v) { put(o, &v, 1); }
static void put32(struct out *o, uint32_t v) { put(o, &v, 4); }
static void put64(struct out *o, uint64_t v) { put(o, &v, 8); }

static void put_string(struct out *o, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	put32(o, s ? (uint32_t)n : NO_STRING);
	put(o, s, n);
}

static void save_frame(struct out *o, const struct profile_frame *f)
{
	put_string(o, f->function);
	put_string(o, f->system_name);
	put_string(o, f->file);
	put32(o, f->line);
	put32(o, f->column);
	put32(o, f->start_line);
	put32(o, f->discriminator);
	put8(o, f->inlined);
}

static void save_profile(struct out *o, const struct profile *p)
{
	const struct profile_info *info = &p->info;

	put_string(o, info->command_line);
	put_string(o, info->hostname);
	put_string(o, info->kernel_release);
	put_string(o, info->event);
	put64(o, info->frequency_hz);
	put64(o, info->start_realtime_ns);
	put64(o, info->start_monotonic_ns);
	put64(o, info->duration_ns);
	put64(o, p->process_count);
	for (size_t i = 0; i < p->process_count; i++) {
		put32(o, p->processes[i].pid);
		put(o, p->processes[i].name, sizeof(p->processes[i].name));
		put64(o, p->processes[i].time_ns);
	}
	put64(o, p->module_count);
	for (size_t i = 0; i < p->module_count; i++) {
		const struct profile_module *m = &p->modules[i];

		put_string(o, m->path);
		put_string(o, m->build_id);
		put64(o, m->start);
		put64(o, m->end);
		put64(o, m->file_offset);
		put8(o, (uint8_t)(m->is_kernel | m->has_functions << 1 | m->has_filenames << 2 | m->has_line_numbers << 3 |
				  m->has_inline_frames << 4));
	}
	put64(o, p->location_count);
	for (size_t i = 0; i < p->location_count; i++) {
		const struct profile_location *l = &p->locations[i];

		put8(o, (uint8_t)l->kind);
		put8(o, (uint8_t)l->unwind);
		put8(o, (uint8_t)(l->is_return_address | l->synthetic << 1));
		put32(o, l->module);
		put64(o, l->address);
		put64(o, l->file_offset);
		if (l->unnamed_reason) { /* a kernel address kallsyms does not name: why */
			put32(o, LOCATION_UNNAMED);
			put_string(o, l->unnamed_reason);
			continue;
		}
		put32(o, l->frame_count);
		for (uint32_t f = 0; f < l->frame_count; f++)
			save_frame(o, &l->frames[f]);
	}
	put64(o, p->stack_count);
	for (size_t i = 0; i < p->stack_count; i++) {
		const struct profile_stack *s = &p->stacks[i];

		put32(o, s->pid);
		put32(o, s->tid);
		put(o, s->comm, sizeof(s->comm));
		put8(o, (uint8_t)s->kind);
		put32(o, s->depth);
		put64(o, s->count);
		put64(o, s->on_cpu_ns);
		put64(o, s->off_cpu_ns);
		put64(o, s->first_ns);
		put32(o, (uint32_t)s->user_error);
		put32(o, (uint32_t)s->kernel_error);
		put(o, s->locations, s->depth * sizeof(*s->locations));
		put8(o, s->hits != NULL);
		if (s->hits)
			put(o, s->hits, s->depth * sizeof(*s->hits));
	}
	put64(o, p->timeline_count);
	for (size_t i = 0; i < p->timeline_count; i++) {
		put64(o, p->timeline[i].time_ns);
		put64(o, p->timeline[i].weight_ns);
		put32(o, p->timeline[i].stack);
	}
	put64(o, p->total_samples);
	put64(o, p->on_cpu_samples);
	put64(o, p->off_cpu_samples);
	put64(o, p->total_on_cpu_ns);
	put64(o, p->total_off_cpu_ns);
	put64(o, p->event_count);
	for (size_t i = 0; i < p->event_count; i++) {
		const struct profile_event *e = &p->events[i];

		put64(o, e->time_ns);
		put32(o, e->stack);
		put8(o, (uint8_t)e->type);
		put32(o, (uint32_t)e->signo);
		put32(o, (uint32_t)e->code);
		put64(o, e->address);
		put_string(o, e->name);
	}
	put64(o, p->probe_count);
	for (size_t i = 0; i < p->probe_count; i++) {
		const struct profile_probe *pr = &p->probes[i];

		put32(o, pr->probe_id);
		put_string(o, pr->binary);
		put_string(o, pr->function);
		put_string(o, pr->build_id);
		put64(o, pr->address);
		put32(o, pr->arg_count);
		for (uint32_t a = 0; a < pr->arg_count; a++) {
			put_string(o, pr->args[a].name);
			put8(o, (uint8_t)pr->args[a].type);
		}
		put64(o, pr->hits);
	}
	put64(o, p->hit_count);
	for (size_t i = 0; i < p->hit_count; i++) {
		const struct profile_hit *h = &p->hits[i];

		put32(o, h->probe);
		put64(o, h->time_ns);
		for (int a = 0; a < PROFILE_PROBE_ARGS; a++)
			put64(o, h->values[a]);
		for (int a = 0; a < PROFILE_PROBE_ARGS; a++)
			put_string(o, h->strings[a]);
		put8(o, h->strings_cut);
	}
	put64(o, p->metrics_count);
	for (size_t i = 0; i < p->metrics_count; i++) {
		const struct profile_metrics *m = &p->metrics[i];

		put64(o, m->time_ns);
		put32(o, m->pid);
		put32(o, m->tid);
		put8(o, m->at_event);
		put32(o, m->threads);
		put64(o, m->user_time_ns);
		put64(o, m->system_time_ns);
		put64(o, m->rss_bytes);
		put64(o, m->vm_bytes);
	}
	put64(o, p->probe_hits);
	put64(o, p->lost_probe_hits);
	put64(o, p->lost_event_samples);
	put_string(o, p->context_omitted);
	put64(o, p->lost_samples);
	put64(o, p->user_stack_errors);
	put64(o, p->kernel_stack_errors);
	put64(o, p->unnamed_locations);
	put64(o, p->leaf_fixes);
	put64(o, p->truncated_stacks);
	put64(o, p->incomplete_stacks);
	put32(o, (uint32_t)p->unwind_stop_count);
	for (size_t i = 0; i < p->unwind_stop_count; i++) {
		put_string(o, p->unwind_stops[i].reason);
		put8(o, p->unwind_stops[i].truncated);
		put64(o, p->unwind_stops[i].samples);
	}
}

void *profile_cache_serialize(const char *key, const struct profile *p, const struct profile_cache_walk *modules,
			      size_t *size)
{
	struct profile_cache_header h = { .version = PROFILE_CACHE_VERSION, .header_size = sizeof(h) };
	struct out o = { 0 };

	memcpy(h.magic, PROFILE_CACHE_MAGIC, sizeof(h.magic));
	put(&o, &h, sizeof(h));
	put_string(&o, key);
	put32(&o, (uint32_t)modules->count);
	for (size_t i = 0; i < modules->count; i++) {
		put32(&o, modules->list[i].module);
		put_string(&o, modules->list[i].identity);
	}
	put64(&o, modules->frames_without_cfa);
	put64(&o, modules->vdso_size);
	put(&o, modules->vdso_image, modules->vdso_size);
	put_string(&o, modules->vdso_build_id);
	save_profile(&o, p);
	h.file_size = o.size;
	h.crc = libdeflate_crc32(0, o.bytes + sizeof(h), o.size - sizeof(h));
	memcpy(o.bytes, &h, sizeof(h));
	*size = o.size;
	return o.bytes;
}

/* The entry's name: its key's hash. */
static char *entry_name(const char *key)
{
	return xasprintf("%016llx", (unsigned long long)hash_words(0x9e3779b97f4a7c15ull, key, strlen(key)));
}

void profile_cache_save(const char *cache_dir, const char *key, const struct profile *p,
			const struct profile_cache_walk *modules)
{
	char tmp[12], *name = entry_name(key);
	size_t size;
	void *bytes = profile_cache_serialize(key, p, modules, &size);
	uid_t owner;
	gid_t group;
	int dir_fd = cache_dir_open_sub(cache_dir, "profiles", true, &owner, &group, "profile cache"), fd;

	if (dir_fd < 0)
		goto out;
	fd = cache_dir_temp_file(dir_fd, owner, group, tmp);
	if (fd < 0) {
		debug("cannot write to the profile cache '%s/profiles': %s", cache_dir, strerror(errno));
		goto out;
	}
	if (!cache_dir_install(dir_fd, fd, tmp, name, fd_write_all(fd, bytes, size))) {
		debug("cannot write the profile cache entry '%s': %s", name, strerror(errno));
		goto out;
	}
	debug("profile cache entry '%s/profiles/%s' written (%zu bytes)", cache_dir, name, size);
	cache_dir_trim(dir_fd, cache_dir_cap("STACKREC_PROFILE_CACHE_MB", DEFAULT_CAP_MB), "profile cache");
out:
	if (dir_fd >= 0)
		close(dir_fd);
	free(bytes);
	free(name);
}

/* ---- reading ------------------------------------------------------------------------------------------ */

struct in {
	const unsigned char *p;
	size_t left;
	bool bad;
};

static void get(struct in *in, void *out, size_t n)
{
	if (!n)
		return;
	if (in->bad || in->left < n) {
		in->bad = true;
		memset(out, 0, n);
		return;
	}
	memcpy(out, in->p, n);
	in->p += n;
	in->left -= n;
}

static uint8_t get8(struct in *in) { uint8_t v; get(in, &v, 1); return v; }
static uint32_t get32(struct in *in) { uint32_t v; get(in, &v, 4); return v; }
static uint64_t get64(struct in *in) { uint64_t v; get(in, &v, 8); return v; }

/* A count of elements of at least min_size bytes each that the bytes left can hold; 0 and bad when not. */
static size_t get_count(struct in *in, uint64_t count, size_t min_size)
{
	if (in->bad || count > in->left / min_size) {
		in->bad = true;
		return 0;
	}
	return (size_t)count;
}

/*
 * An array of a count read from the entry, each element at least min_size bytes of it: zeroed, *cap its count (read
 * elements are counted apart, as each is whole). Never more than the bytes left can hold.
 */
static void *get_array(struct in *in, size_t min_size, size_t elem_size, size_t *cap)
{
	*cap = get_count(in, get64(in), min_size);
	return xcalloc(*cap ? *cap : 1, elem_size);
}

/* A string: its bytes, which must hold no NUL, pointing into the entry; NULL when it has none (or is bad). */
static const char *get_bytes(struct in *in, uint32_t *len)
{
	const char *s;

	*len = get32(in);
	if (*len == NO_STRING || in->bad)
		return NULL;
	if (*len > in->left || memchr(in->p, '\0', *len)) {
		in->bad = true;
		return NULL;
	}
	s = (const char *)in->p;
	in->p += *len;
	in->left -= *len;
	return s;
}

static char *get_string(struct in *in)
{
	uint32_t len;
	const char *s = get_bytes(in, &len);

	return s ? xstrndup(s, len) : NULL;
}

/* A string the profile holds as a static one (a reason): kept in the profile's arena. */
static const char *get_arena_string(struct in *in, struct profile *p)
{
	uint32_t len;
	const char *s = get_bytes(in, &len);
	char *copy;

	if (!s)
		return NULL;
	copy = arena_alloc(&p->stack_arrays, (size_t)len + 1);
	memcpy(copy, s, len);
	copy[len] = '\0';
	return copy;
}

/*
 * Whether a build ID is one a recording gives (lowercase hex of at most 20 bytes, as convert encodes them): it
 * becomes part of file names (the symbol cache's entries, the debug files looked for). A run that uses an entry
 * without reading the recording takes its modules' build IDs from the entry alone.
 */
static bool build_id_ok(const char *s)
{
	size_t n = strlen(s);

	return n && n <= 40 && hex_lowercase(s);
}

/* A thread or process name: 16 bytes, NUL-terminated as convert makes them. */
static void get_name(struct in *in, char name[16])
{
	get(in, name, 16);
	if (name[15])
		in->bad = true;
}

static void load_frame(struct in *in, struct profile_frame *f)
{
	uint8_t inlined;

	f->function = get_string(in);
	f->system_name = get_string(in);
	f->file = get_string(in);
	f->line = get32(in);
	f->column = get32(in);
	f->start_line = get32(in);
	f->discriminator = get32(in);
	inlined = get8(in);
	f->inlined = inlined != 0;
	if (inlined > 1)
		in->bad = true; /* every byte as save_frame writes it: an entry reads back to itself */
}

/* The arrays of p grow by one element read at a time and counted once whole, so that profile_release frees
 * exactly what was read when the entry turns out bad halfway. */
static void load_profile(struct in *in, struct profile *p)
{
	struct profile_info *info = &p->info;
	size_t n;

	info->command_line = get_string(in);
	info->hostname = get_string(in);
	info->kernel_release = get_string(in);
	info->event = get_string(in);
	info->frequency_hz = get64(in);
	info->start_realtime_ns = get64(in);
	info->start_monotonic_ns = get64(in);
	info->duration_ns = get64(in);

	p->processes = get_array(in, 28, sizeof(*p->processes), &p->process_cap);
	for (size_t i = 0; i < p->process_cap && !in->bad; i++, p->process_count++) {
		p->processes[i].pid = get32(in);
		get_name(in, p->processes[i].name);
		p->processes[i].time_ns = get64(in);
	}

	p->modules = get_array(in, 33, sizeof(*p->modules), &p->module_cap);
	for (size_t i = 0; i < p->module_cap && !in->bad; i++, p->module_count++) {
		struct profile_module *m = &p->modules[i];
		uint8_t flags;

		m->path = get_string(in);
		m->build_id = get_string(in);
		if (m->build_id && !build_id_ok(m->build_id))
			in->bad = true;
		m->start = get64(in);
		m->end = get64(in);
		m->file_offset = get64(in);
		flags = get8(in);
		if (!m->path || flags >> 5)
			in->bad = true;
		m->is_kernel = flags & 1;
		m->has_functions = flags >> 1 & 1;
		m->has_filenames = flags >> 2 & 1;
		m->has_line_numbers = flags >> 3 & 1;
		m->has_inline_frames = flags >> 4 & 1;
	}

	p->locations = get_array(in, 27, sizeof(*p->locations), &p->location_cap);
	for (size_t i = 0; i < p->location_cap && !in->bad; i++, p->location_count++) {
		struct profile_location *l = &p->locations[i];
		uint8_t flags;
		uint32_t frames;

		l->kind = get8(in);
		l->unwind = get8(in);
		flags = get8(in);
		l->is_return_address = flags & 1;
		l->synthetic = flags >> 1 & 1;
		l->module = get32(in);
		l->address = get64(in);
		l->file_offset = get64(in);
		frames = get32(in);
		if (l->kind < PROFILE_LOCATION_USER || l->kind > PROFILE_LOCATION_JIT || l->unwind < PROFILE_UNWIND_FRAME_POINTER ||
		    l->unwind > PROFILE_UNWIND_NONE || flags >> 2 || (frames > 1 && frames != LOCATION_UNNAMED) ||
		    (l->synthetic && frames != 1) || (frames == LOCATION_UNNAMED && l->kind != PROFILE_LOCATION_KERNEL) ||
		    (l->module != PROFILE_NO_MODULE && l->module >= p->module_count)) {
			in->bad = true;
			break;
		}
		if (frames == LOCATION_UNNAMED) {
			l->frames = PROFILE_UNNAMED_FRAMES;
			l->frame_count = 1;
			l->unnamed_reason = get_arena_string(in, p);
			if (!l->unnamed_reason)
				in->bad = true;
		} else if (frames) {
			/* Before symbolization only a marker, JIT code and a kernel address (kallsyms) have a frame: one,
			 * named. */
			l->frames = xcalloc(1, sizeof(*l->frames));
			l->frame_count = 1;
			load_frame(in, l->frames);
			if (!l->frames[0].function || !l->frames[0].system_name)
				in->bad = true;
		}
	}

	p->stacks = get_array(in, 70, sizeof(*p->stacks), &p->stack_cap);
	for (size_t i = 0; i < p->stack_cap && !in->bad; i++, p->stack_count++) {
		struct profile_stack *s = &p->stacks[i];
		uint8_t has_hits;

		s->pid = get32(in);
		s->tid = get32(in);
		get_name(in, s->comm);
		s->kind = get8(in);
		s->depth = (uint32_t)get_count(in, get32(in), sizeof(uint32_t));
		s->count = get64(in);
		s->on_cpu_ns = get64(in);
		s->off_cpu_ns = get64(in);
		s->first_ns = get64(in);
		s->user_error = (int32_t)get32(in);
		s->kernel_error = (int32_t)get32(in);
		if (in->bad || s->kind > PROFILE_SAMPLE_EVENT)
			break;
		s->locations = arena_alloc(&p->stack_arrays, (s->depth ? s->depth : 1) * sizeof(*s->locations));
		get(in, s->locations, s->depth * sizeof(*s->locations));
		for (uint32_t d = 0; d < s->depth; d++)
			if (s->locations[d] >= p->location_count)
				in->bad = true;
		has_hits = get8(in);
		if (has_hits > 1)
			in->bad = true;
		if (has_hits == 1) {
			s->hits = arena_alloc(&p->stack_arrays, (s->depth ? s->depth : 1) * sizeof(*s->hits));
			get(in, s->hits, s->depth * sizeof(*s->hits));
		}
	}

	p->timeline = get_array(in, 20, sizeof(*p->timeline), &p->timeline_cap);
	for (size_t i = 0; i < p->timeline_cap && !in->bad; i++, p->timeline_count++) {
		p->timeline[i].time_ns = get64(in);
		p->timeline[i].weight_ns = get64(in);
		p->timeline[i].stack = get32(in);
		if (p->timeline[i].stack >= p->stack_count)
			in->bad = true;
	}
	p->total_samples = get64(in);
	p->on_cpu_samples = get64(in);
	p->off_cpu_samples = get64(in);
	p->total_on_cpu_ns = get64(in);
	p->total_off_cpu_ns = get64(in);

	p->events = get_array(in, 33, sizeof(*p->events), &p->event_cap);
	for (size_t i = 0; i < p->event_cap && !in->bad; i++, p->event_count++) {
		struct profile_event *e = &p->events[i];

		e->time_ns = get64(in);
		e->stack = get32(in);
		e->type = get8(in);
		e->signo = (int32_t)get32(in);
		e->code = (int32_t)get32(in);
		e->address = get64(in);
		e->name = get_string(in);
		if (e->stack >= p->stack_count || (e->type != PROFILE_EVENT_SIGNAL && e->type != PROFILE_EVENT_EXCEPTION))
			in->bad = true;
	}

	p->probes = get_array(in, 36, sizeof(*p->probes), &p->probe_cap);
	for (size_t i = 0; i < p->probe_cap && !in->bad; i++, p->probe_count++) {
		struct profile_probe *pr = &p->probes[i];
		uint32_t args;

		pr->probe_id = get32(in);
		pr->binary = get_string(in);
		pr->function = get_string(in);
		pr->build_id = get_string(in);
		pr->address = get64(in);
		args = get32(in);
		if (args > PROFILE_PROBE_ARGS)
			in->bad = true;
		for (uint32_t a = 0; a < args && !in->bad; a++, pr->arg_count++) {
			pr->args[a].name = get_string(in);
			pr->args[a].type = get8(in);
			if (!pr->args[a].name || pr->args[a].type > PROFILE_ARG_STR)
				in->bad = true;
		}
		pr->hits = get64(in);
		if (!pr->binary || !pr->function)
			in->bad = true;
	}

	p->hits = get_array(in, 4 + 8 + 8 * PROFILE_PROBE_ARGS + 4 * PROFILE_PROBE_ARGS + 1, sizeof(*p->hits), &p->hit_cap);
	for (size_t i = 0; i < p->hit_cap && !in->bad; i++, p->hit_count++) {
		struct profile_hit *h = &p->hits[i];

		h->probe = get32(in);
		h->time_ns = get64(in);
		for (int a = 0; a < PROFILE_PROBE_ARGS; a++)
			h->values[a] = get64(in);
		for (int a = 0; a < PROFILE_PROBE_ARGS; a++)
			h->strings[a] = get_string(in);
		h->strings_cut = get8(in);
		if (h->probe >= p->probe_count)
			in->bad = true;
		/* a cut mark only on a string argument that was read, as convert writes them */
		for (uint32_t a = 0; !in->bad && a < 8; a++)
			if ((h->strings_cut >> a & 1) && (a >= p->probes[h->probe].arg_count ||
							  p->probes[h->probe].args[a].type != PROFILE_ARG_STR ||
							  !h->strings[a]))
				in->bad = true;
	}
	/* A stack's hits, now that the hits are known. */
	for (size_t i = 0; i < p->stack_count && !in->bad; i++)
		for (uint32_t d = 0; p->stacks[i].hits && d < p->stacks[i].depth; d++)
			if (p->stacks[i].hits[d] != PROFILE_NO_HIT && p->stacks[i].hits[d] >= p->hit_count)
				in->bad = true;

	p->metrics = get_array(in, 53, sizeof(*p->metrics), &p->metrics_cap);
	for (size_t i = 0; i < p->metrics_cap && !in->bad; i++, p->metrics_count++) {
		struct profile_metrics *m = &p->metrics[i];
		uint8_t at_event;

		m->time_ns = get64(in);
		m->pid = get32(in);
		m->tid = get32(in);
		at_event = get8(in);
		m->at_event = at_event != 0;
		m->threads = get32(in);
		m->user_time_ns = get64(in);
		m->system_time_ns = get64(in);
		m->rss_bytes = get64(in);
		m->vm_bytes = get64(in);
		if (at_event > 1)
			in->bad = true;
	}
	p->probe_hits = get64(in);
	p->lost_probe_hits = get64(in);
	p->lost_event_samples = get64(in);
	p->context_omitted = get_arena_string(in, p);
	p->lost_samples = get64(in);
	p->user_stack_errors = get64(in);
	p->kernel_stack_errors = get64(in);
	p->unnamed_locations = get64(in);
	p->leaf_fixes = get64(in);
	p->truncated_stacks = get64(in);
	p->incomplete_stacks = get64(in);
	n = get32(in);
	if (n > ARRAY_SIZE(p->unwind_stops))
		in->bad = true;
	for (size_t i = 0; i < n && !in->bad; i++, p->unwind_stop_count++) {
		uint8_t truncated;

		p->unwind_stops[i].reason = get_arena_string(in, p);
		truncated = get8(in);
		p->unwind_stops[i].truncated = truncated != 0;
		p->unwind_stops[i].samples = get64(in);
		if (truncated > 1 || !p->unwind_stops[i].reason)
			in->bad = true; /* every stop has its reason (explain.c compares them) */
	}
}

const char *profile_cache_parse(const void *data, size_t size, const char *key, struct profile *out,
				struct profile_cache_walk *modules)
{
	struct profile_cache_header h;
	struct in in = { (const unsigned char *)data, size, false };
	const char *stored_key;
	uint32_t key_len;
	size_t n;

	memset(out, 0, sizeof(*out)); /* no tables: nothing is interned into a profile read whole */
	memset(modules, 0, sizeof(*modules));
	if (size < sizeof(h))
		return "not a profile cache entry";
	memcpy(&h, data, sizeof(h));
	if (memcmp(h.magic, PROFILE_CACHE_MAGIC, sizeof(h.magic)))
		return "not a profile cache entry";
	if (h.version != PROFILE_CACHE_VERSION || h.header_size != sizeof(h) || h.flags)
		return "another version";
	if (h.file_size != size)
		return "cut short or grown";
	if (h.crc != libdeflate_crc32(0, (const unsigned char *)data + sizeof(h), size - sizeof(h)))
		return "checksum mismatch";
	in.p += sizeof(h);
	in.left -= sizeof(h);
	stored_key = get_bytes(&in, &key_len);
	if (!stored_key)
		return "no key";
	if (key && (strlen(key) != key_len || memcmp(key, stored_key, key_len)))
		return "another recording, stackrec or options";
	n = get_count(&in, get32(&in), 8);
	modules->list = xcalloc(n ? n : 1, sizeof(*modules->list));
	modules->cap = n;
	for (size_t i = 0; i < n && !in.bad; i++, modules->count++) {
		modules->list[i].module = get32(&in);
		modules->list[i].identity = get_string(&in);
	}
	modules->frames_without_cfa = get64(&in);
	modules->vdso_size = get_count(&in, get64(&in), 1);
	if (modules->vdso_size) {
		modules->vdso_image = xmalloc(modules->vdso_size);
		get(&in, modules->vdso_image, modules->vdso_size);
	}
	modules->vdso_build_id = get_string(&in);
	if (modules->vdso_build_id && !build_id_ok(modules->vdso_build_id))
		in.bad = true;
	load_profile(&in, out);
	for (size_t i = 0; i < modules->count && !in.bad; i++)
		if (modules->list[i].module >= out->module_count || !modules->list[i].identity)
			in.bad = true;
	if (in.bad || in.left) {
		profile_release(out);
		profile_cache_walk_release(modules);
		return in.bad ? "damaged: a count, index or string out of bounds" : "bytes after its end";
	}
	return NULL;
}

bool profile_cache_load(const char *cache_dir, const char *key, struct profile *out,
			struct profile_cache_walk *modules)
{
	char *name = entry_name(key);
	const char *why;
	const void *bytes = NULL;
	size_t size = 0;
	uid_t owner;
	gid_t group;
	int dir_fd = cache_dir_open_sub(cache_dir, "profiles", false, &owner, &group, "profile cache"), fd = -1;
	bool found = false;

	/* Read whole: its pages mapped in at once (a copy into a fresh buffer took as long as parsing it). */
	if (dir_fd >= 0)
		bytes = cache_dir_map(dir_fd, name, MAX_ENTRY_SIZE, true, &size, &fd);
	if (bytes) {
		why = profile_cache_parse(bytes, size, key, out, modules);
		if (why) {
			debug("profile cache entry '%s/profiles/%s' not used: %s", cache_dir, name, why);
		} else {
			cache_dir_touch(fd); /* used now: the trim keeps it longest */
			found = true;
			debug("profile cache entry '%s/profiles/%s': %zu stacks, %zu locations", cache_dir, name,
			      out->stack_count, out->location_count);
		}
		munmap((void *)bytes, size);
		close(fd);
	}
	if (dir_fd >= 0)
		close(dir_fd);
	free(name);
	return found;
}

/* ---- using it ---------------------------------------------------------------------------------------- */

static bool same_string(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

bool profile_cache_fits(const struct profile *first, const struct profile *cached)
{
	const struct profile_info *a = &first->info, *b = &cached->info;

	if (cached->module_count < first->module_count || !same_string(a->command_line, b->command_line) ||
	    !same_string(a->hostname, b->hostname) || !same_string(a->kernel_release, b->kernel_release) ||
	    !same_string(a->event, b->event))
		return false;
	for (size_t i = 0; i < first->module_count; i++) {
		const struct profile_module *x = &first->modules[i], *y = &cached->modules[i];

		if (!same_string(x->path, y->path) || !same_string(x->build_id, y->build_id) || x->start != y->start ||
		    x->end != y->end || x->file_offset != y->file_offset || x->is_kernel != y->is_kernel)
			return false;
	}
	return true;
}

static void swap_strings(char **a, char **b)
{
	char *t = *a;

	*a = *b;
	*b = t;
}

void profile_cache_take(struct profile *first, struct profile *cached)
{
	for (size_t i = 0; i < first->module_count; i++) {
		swap_strings(&cached->modules[i].path, &first->modules[i].path);
		swap_strings(&cached->modules[i].build_id, &first->modules[i].build_id);
	}
	swap_strings(&cached->info.command_line, &first->info.command_line);
	swap_strings(&cached->info.hostname, &first->info.hostname);
	swap_strings(&cached->info.kernel_release, &first->info.kernel_release);
	swap_strings(&cached->info.event, &first->info.event);
	cached->keep_timeline = first->keep_timeline;
	profile_release(first);
	*first = *cached;
	memset(cached, 0, sizeof(*cached));
	profile_index_modules(first); /* the symbolizer adds the kernel's modules */
}
