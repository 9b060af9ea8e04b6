/*
 * profile.c — builds the aggregated profile of convert/profile.h while the recording streams by.
 *
 * Three tables intern what samples repeat: modules (by build ID, else path), locations (module, file
 * offset, return-address flag) and stacks (pid, tid, comm, kind, location indexes). Each is an open-addressing
 * hash table of indexes into the profile's own arrays, so a sample costs a few hash probes and memory
 * grows with what is distinct, never with the number of samples (but for the timeline, which an output
 * that shows samples in time asks for). profile_finish() drops the tables and sorts the stacks into an
 * order that depends only on the recording.
 */
#include "profile.h"

#include <stdlib.h>
#include <string.h>

#include "../util.h"

#define EMPTY UINT32_MAX

/* An open-addressing set of uint32 indexes; hashes and equality come from the caller. */
struct index_set {
	uint32_t *slots;
	uint64_t *hashes; /* the hash of the entry in each slot, so growing never recomputes */
	size_t cap, used;
};

struct profile_tables {
	struct index_set modules, locations, stacks;
};

static void set_release(struct index_set *s)
{
	free(s->slots);
	free(s->hashes);
	memset(s, 0, sizeof(*s));
}

static void set_grow(struct index_set *s)
{
	size_t cap = s->cap ? s->cap * 2 : 256;
	uint32_t *slots = xmalloc(cap * sizeof(*slots));
	uint64_t *hashes = xmalloc(cap * sizeof(*hashes));

	memset(slots, 0xff, cap * sizeof(*slots));
	for (size_t i = 0; i < s->cap; i++) {
		size_t j;

		if (s->slots[i] == EMPTY)
			continue;
		for (j = s->hashes[i] & (cap - 1); slots[j] != EMPTY; j = (j + 1) & (cap - 1))
			;
		slots[j] = s->slots[i];
		hashes[j] = s->hashes[i];
	}
	free(s->slots);
	free(s->hashes);
	s->slots = slots;
	s->hashes = hashes;
	s->cap = cap;
}

/*
 * Finds the entry equal to the key (eq(ctx, index) true) with this hash. Returns its index, or EMPTY with
 * *slot set to where a new entry goes (call set_insert with it).
 */
static uint32_t set_find(struct index_set *s, uint64_t hash, bool (*eq)(const void *ctx, uint32_t index),
			 const void *ctx, size_t *slot)
{
	size_t i;

	if ((s->used + 1) * 4 > s->cap * 3)
		set_grow(s);
	for (i = hash & (s->cap - 1); s->slots[i] != EMPTY; i = (i + 1) & (s->cap - 1))
		if (s->hashes[i] == hash && eq(ctx, s->slots[i]))
			return s->slots[i];
	*slot = i;
	return EMPTY;
}

static void set_insert(struct index_set *s, size_t slot, uint64_t hash, uint32_t index)
{
	s->slots[slot] = index;
	s->hashes[slot] = hash;
	s->used++;
}

/* Keys are hashed with util.h's hash_words; only the tables' slots depend on it, never the output. */
#define HASH_SEED 0xcbf29ce484222325ull

void profile_init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	p->tables = xcalloc(1, sizeof(*p->tables));
}

/* Modules. */

struct module_key {
	const struct profile *p;
	const char *path, *build_id;
	bool is_kernel;
};

static bool module_eq(const void *ctx, uint32_t index)
{
	const struct module_key *k = ctx;
	const struct profile_module *m = &k->p->modules[index];

	if (m->is_kernel != k->is_kernel)
		return false;
	if (k->build_id || m->build_id)
		return k->build_id && m->build_id && !strcmp(k->build_id, m->build_id);
	return !strcmp(k->path, m->path);
}

static uint64_t module_hash(const struct module_key *key)
{
	return key->build_id ? hash_words(HASH_SEED ^ key->is_kernel, key->build_id, strlen(key->build_id))
			     : hash_words(HASH_SEED ^ 1 ^ key->is_kernel << 1, key->path, strlen(key->path));
}

uint32_t profile_intern_module(struct profile *p, const char *path, const char *build_id, uint64_t start,
			       uint64_t end, uint64_t file_offset, bool is_kernel)
{
	struct module_key key = { p, path, build_id && *build_id ? build_id : NULL, is_kernel };
	uint64_t hash = module_hash(&key);
	uint32_t found;
	size_t slot;

	found = set_find(&p->tables->modules, hash, module_eq, &key, &slot);
	if (found != EMPTY)
		return found;
	GROW(p->modules, p->module_cap, p->module_count + 1);
	p->modules[p->module_count] = (struct profile_module){
		.path = xstrdup(path),
		.build_id = key.build_id ? xstrdup(key.build_id) : NULL,
		.start = start,
		.end = end,
		.file_offset = file_offset,
		.is_kernel = is_kernel,
	};
	set_insert(&p->tables->modules, slot, hash, (uint32_t)p->module_count);
	return (uint32_t)p->module_count++;
}

void profile_index_modules(struct profile *p)
{
	if (!p->tables)
		p->tables = xcalloc(1, sizeof(*p->tables));
	for (size_t i = 0; i < p->module_count; i++) {
		const struct profile_module *m = &p->modules[i];
		struct module_key key = { p, m->path, m->build_id && *m->build_id ? m->build_id : NULL, m->is_kernel };
		uint64_t hash = module_hash(&key);
		size_t slot;

		if (set_find(&p->tables->modules, hash, module_eq, &key, &slot) == EMPTY)
			set_insert(&p->tables->modules, slot, hash, (uint32_t)i);
	}
}

/* Locations. A marker's key is its name; an address location's key is (kind, module, offset, return). */

struct location_key {
	const struct profile *p;
	enum profile_location_kind kind;
	uint32_t module;
	uint64_t file_offset;
	bool is_return_address;
	enum profile_unwind unwind;
	const char *marker;
};

static bool location_eq(const void *ctx, uint32_t index)
{
	const struct location_key *k = ctx;
	const struct profile_location *l = &k->p->locations[index];

	if (k->marker)
		return l->synthetic && l->kind == k->kind && !strcmp(l->frames[0].function, k->marker);
	return !l->synthetic && l->kind == k->kind && l->module == k->module && l->file_offset == k->file_offset &&
	       l->is_return_address == k->is_return_address && l->unwind == k->unwind;
}

static struct profile_location *new_location(struct profile *p, size_t slot, uint64_t hash, uint32_t *index)
{
	GROW(p->locations, p->location_cap, p->location_count + 1);
	set_insert(&p->tables->locations, slot, hash, (uint32_t)p->location_count);
	*index = (uint32_t)p->location_count;
	memset(&p->locations[p->location_count], 0, sizeof(p->locations[0]));
	return &p->locations[p->location_count++];
}

uint32_t profile_intern_location(struct profile *p, enum profile_location_kind kind, uint32_t module,
				 uint64_t address, uint64_t file_offset, bool is_return_address, enum profile_unwind unwind)
{
	struct location_key key = { p, kind, module, file_offset, is_return_address, unwind, NULL };
	uint64_t fields[3] = { kind | (uint64_t)is_return_address << 8 | (uint64_t)unwind << 16, module, file_offset };
	uint64_t hash = hash_words(HASH_SEED, fields, sizeof(fields));
	struct profile_location *l;
	uint32_t index;
	size_t slot;

	index = set_find(&p->tables->locations, hash, location_eq, &key, &slot);
	if (index != EMPTY)
		return index;
	l = new_location(p, slot, hash, &index);
	l->kind = kind;
	l->unwind = unwind;
	l->module = module;
	l->address = address;
	l->file_offset = file_offset;
	l->is_return_address = is_return_address;
	return index;
}

uint32_t profile_intern_marker(struct profile *p, enum profile_location_kind kind, const char *name)
{
	struct location_key key = { p, kind, PROFILE_NO_MODULE, 0, false, PROFILE_UNWIND_NONE, name };
	uint64_t hash = hash_words(HASH_SEED ^ kind ^ 2, name, strlen(name));
	struct profile_location *l;
	uint32_t index;
	size_t slot;

	index = set_find(&p->tables->locations, hash, location_eq, &key, &slot);
	if (index != EMPTY)
		return index;
	l = new_location(p, slot, hash, &index);
	l->kind = kind;
	l->unwind = PROFILE_UNWIND_NONE;
	l->module = PROFILE_NO_MODULE;
	l->synthetic = true;
	l->frames = xcalloc(1, sizeof(*l->frames));
	l->frames[0].function = xstrdup(name);
	l->frames[0].system_name = xstrdup(name);
	l->frame_count = 1;
	return index;
}

/* Stacks. */

struct stack_key {
	const struct profile *p;
	uint32_t pid, tid;
	const char *comm; /* NUL-padded to 16 bytes */
	enum profile_sample_kind kind;
	const uint32_t *locations;
	uint32_t depth;
	const uint32_t *hits; /* NULL when no frame has context */
};

static bool stack_eq(const void *ctx, uint32_t index)
{
	const struct stack_key *k = ctx;
	const struct profile_stack *s = &k->p->stacks[index];

	return s->pid == k->pid && s->tid == k->tid && s->kind == k->kind && s->depth == k->depth &&
	       !memcmp(s->comm, k->comm, sizeof(s->comm)) &&
	       !memcmp(s->locations, k->locations, k->depth * sizeof(*k->locations)) && !s->hits == !k->hits &&
	       (!s->hits || !memcmp(s->hits, k->hits, k->depth * sizeof(*k->hits)));
}

/* hits, or NULL when no location has context: a stack without context carries no array. */
static const uint32_t *context_of(const uint32_t *hits, uint32_t depth)
{
	for (uint32_t d = 0; hits && d < depth; d++)
		if (hits[d] != PROFILE_NO_HIT)
			return hits;
	return NULL;
}

uint32_t profile_add_sample(struct profile *p, const struct profile_sample_info *sample, const uint32_t *locations,
			uint32_t depth)
{
	char name[16] = { 0 };
	const uint32_t *hits = context_of(sample->hits, depth);
	struct stack_key key = { p, sample->pid, sample->tid, name, sample->kind, locations, depth, hits };
	uint32_t ids[3] = { sample->pid, sample->tid, sample->kind };
	struct profile_stack *s;
	uint64_t hash;
	uint32_t index;
	size_t slot;

	strncpy(name, sample->comm, sizeof(name) - 1);
	hash = hash_words(HASH_SEED, ids, sizeof(ids));
	hash = hash_words(hash, name, sizeof(name));
	hash = hash_words(hash, locations, depth * sizeof(*locations));
	if (hits)
		hash = hash_words(hash, hits, depth * sizeof(*hits));
	index = set_find(&p->tables->stacks, hash, stack_eq, &key, &slot);
	if (index == EMPTY) {
		GROW(p->stacks, p->stack_cap, p->stack_count + 1);
		index = (uint32_t)p->stack_count++;
		s = &p->stacks[index];
		memset(s, 0, sizeof(*s));
		s->pid = sample->pid;
		s->tid = sample->tid;
		s->kind = sample->kind;
		memcpy(s->comm, name, sizeof(s->comm));
		s->locations = arena_alloc(&p->stack_arrays, (depth ? depth : 1) * sizeof(*locations));
		memcpy(s->locations, locations, depth * sizeof(*locations));
		s->depth = depth;
		if (hits) {
			s->hits = arena_alloc(&p->stack_arrays, depth * sizeof(*hits));
			memcpy(s->hits, hits, depth * sizeof(*hits));
		}
		set_insert(&p->tables->stacks, slot, hash, index);
	}
	profile_count_sample(p, index, sample);
	return index;
}

/*
 * n samples (not events) of stack s, their weights summed in sample->weight_ns, into the stack and the totals: for
 * profile_count_sample (n 1, folded in) and profile_count_samples, inlined in each (a call more cost every sample
 * counted the long way 29 instructions).
 */
static inline __attribute__((always_inline)) void count_samples(struct profile *p, struct profile_stack *s,
								const struct profile_sample_info *sample, uint64_t n)
{
	bool off_cpu = sample->kind == PROFILE_SAMPLE_OFF_CPU;

	s->count += n;
	/* Times saturate: a forged weight near 2^64 wrapped the sums around to small numbers (a real one adds up
	 * to 584 years first) */
	if (off_cpu)
		s->off_cpu_ns = add_saturating(s->off_cpu_ns, sample->weight_ns);
	else
		s->on_cpu_ns = add_saturating(s->on_cpu_ns, sample->weight_ns);
	if (!s->user_error)
		s->user_error = sample->user_error;
	if (!s->kernel_error)
		s->kernel_error = sample->kernel_error;
	p->total_samples += n;
	if (off_cpu) {
		p->off_cpu_samples += n;
		p->total_off_cpu_ns = add_saturating(p->total_off_cpu_ns, sample->weight_ns);
	} else {
		p->on_cpu_samples += n;
		p->total_on_cpu_ns = add_saturating(p->total_on_cpu_ns, sample->weight_ns);
	}
	if (sample->user_error)
		p->user_stack_errors += n;
	if (sample->kernel_error)
		p->kernel_stack_errors += n;
}

void profile_count_sample(struct profile *p, uint32_t index, const struct profile_sample_info *sample)
{
	struct profile_stack *s = &p->stacks[index];

	/* profile_count_samples' repeats come after a first sample counted here, in file order */
	if (!s->count || sample->time_ns < s->first_ns)
		s->first_ns = sample->time_ns;
	if (sample->kind == PROFILE_SAMPLE_EVENT) {
		/* An event measures no time, and is no sample of the profile's totals (profile_add_event). */
		s->count++;
		if (!s->user_error)
			s->user_error = sample->user_error;
		if (!s->kernel_error)
			s->kernel_error = sample->kernel_error;
		return;
	}
	count_samples(p, s, sample, 1);
	if (p->keep_timeline)
		profile_keep_sample(p, sample->time_ns, sample->weight_ns, index);
}

void profile_count_samples(struct profile *p, uint32_t index, const struct profile_sample_info *sample, uint64_t n)
{
	count_samples(p, &p->stacks[index], sample, n);
}

void profile_keep_sample(struct profile *p, uint64_t time_ns, uint64_t weight_ns, uint32_t index)
{
	GROW(p->timeline, p->timeline_cap, p->timeline_count + 1);
	p->timeline[p->timeline_count++] = (struct profile_sample){ time_ns, weight_ns, index };
}

void profile_add_event(struct profile *p, const struct profile_event *event)
{
	GROW(p->events, p->event_cap, p->event_count + 1);
	p->events[p->event_count++] = *event;
}

/* Finishing. */

/* Stacks by pid, tid, comm, kind (on-CPU first), then locations root first. */
static int compare_stacks(const void *a, const void *b)
{
	const struct profile_stack *x = a, *y = b;
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	c = memcmp(x->comm, y->comm, sizeof(x->comm));
	if (c)
		return c;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	/* Root first: a stack and its callees' stacks sort together. */
	for (uint32_t i = 0; i < x->depth && i < y->depth; i++) {
		uint32_t lx = x->locations[x->depth - 1 - i], ly = y->locations[y->depth - 1 - i];

		if (lx != ly)
			return lx < ly ? -1 : 1;
	}
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	/* The same frames with other context: by the hits, numbered in file order. */
	if (!x->hits != !y->hits)
		return x->hits ? 1 : -1;
	for (uint32_t i = 0; x->hits && i < x->depth; i++)
		if (x->hits[i] != y->hits[i])
			return x->hits[i] < y->hits[i] ? -1 : 1;
	return 0;
}

/* Orders the names by pid, then time (stable: names of one time stay in file order). */
static void sort_process_names(struct profile *p)
{
	for (size_t i = 1; i < p->process_count; i++) { /* insertion sort: stable, and nearly sorted input */
		struct profile_process x = p->processes[i];
		size_t j = i;

		for (; j > 0 && (p->processes[j - 1].pid > x.pid ||
				 (p->processes[j - 1].pid == x.pid && p->processes[j - 1].time_ns > x.time_ns));
		     j--)
			p->processes[j] = p->processes[j - 1];
		p->processes[j] = x;
	}
}

/* The first of pid's names in the sorted array, or process_count when it has none. */
static size_t first_name(const struct profile *p, uint32_t pid)
{
	size_t lo = 0, hi = p->process_count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->processes[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->process_count && p->processes[lo].pid == pid ? lo : p->process_count;
}

/* The index of the first of pid's names given after t (with or_at: at or after t), searching from first. */
static size_t name_after(const struct profile *p, uint32_t pid, uint64_t t, bool or_at, size_t first)
{
	size_t lo = first, hi = p->process_count;

	while (lo < hi) { /* a binary search: a recording may rename one process a million times */
		size_t mid = lo + (hi - lo) / 2;
		const struct profile_process *x = &p->processes[mid];

		if (x->pid == pid && (or_at ? x->time_ns < t : x->time_ns <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* pid's name at time t (sorted array): its last name given at or before t, else its first. NULL: none. */
static const char *name_at(const struct profile *p, uint32_t pid, uint64_t t)
{
	size_t i = first_name(p, pid), after;

	if (i == p->process_count)
		return NULL;
	after = name_after(p, pid, t, false, i);
	return p->processes[after > i ? after - 1 : i].name;
}

static int compare_forks(const void *a, const void *b)
{
	const struct profile_fork *x = a, *y = b;

	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

/* Whether pid was given a name at time t (sorted array). */
static bool named_at(const struct profile *p, uint32_t pid, uint64_t t)
{
	size_t i = first_name(p, pid);

	if (i == p->process_count)
		return false;
	i = name_after(p, pid, t, true, i);
	return i < p->process_count && p->processes[i].pid == pid && p->processes[i].time_ns == t;
}

/*
 * Names each forked child, from its fork on, as its parent was named when it forked (not the parent's last
 * name: `sh -c '(spin) & exec python app.py'` forks the subshell as sh), a child of a child as well; a name
 * the child takes later (exec, rename) follows by time. A pid used again is named so too, not as the process
 * that had it before. A pass per generation, each looking names up in the array the pass before sorted,
 * FORK_GENERATIONS passes at most (a recording is untrusted: forks may loop).
 */
#define FORK_GENERATIONS 16
static void name_forked_children(struct profile *p)
{
	struct profile_process *found = NULL;
	size_t found_cap = 0;

	if (p->fork_count)
		sort_array(p->forks, p->fork_count, sizeof(*p->forks), compare_forks);
	for (int pass = 0; pass < FORK_GENERATIONS && p->fork_count; pass++) {
		size_t found_count = 0;

		for (size_t i = 0; i < p->fork_count; i++) {
			const struct profile_fork *f = &p->forks[i];
			const char *parent;

			if (named_at(p, f->child, f->time_ns) || !(parent = name_at(p, f->parent, f->time_ns)))
				continue;
			GROW(found, found_cap, found_count + 1);
			found[found_count] = (struct profile_process){ .pid = f->child, .time_ns = f->time_ns };
			memcpy(found[found_count++].name, parent, sizeof(found[0].name));
		}
		if (!found_count)
			break;
		for (size_t i = 0; i < found_count; i++)
			profile_set_process_name(p, found[i].pid, found[i].name, found[i].time_ns);
		sort_process_names(p);
	}
	free(found);
	free(p->forks);
	p->forks = NULL;
	p->fork_count = p->fork_cap = 0;
}

void profile_name_processes(struct profile *p)
{
	sort_process_names(p);
	name_forked_children(p);
}

/* Stack indexes, ordered as compare_stacks orders their stacks. */
static int compare_stack_indexes(const void *a, const void *b, void *stacks)
{
	const struct profile_stack *s = stacks;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return compare_stacks(&s[x], &s[y]);
}

/* The timeline by time, then stack, then weight: an order that depends only on the recording. */
static int compare_samples(const void *a, const void *b)
{
	const struct profile_sample *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->weight_ns < y->weight_ns ? -1 : x->weight_ns > y->weight_ns;
}

/* Events by time, then stack. */
static int compare_events(const void *a, const void *b)
{
	const struct profile_event *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Metrics by pid, then time, then tid. */
static int compare_metrics(const void *a, const void *b)
{
	const struct profile_metrics *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Sorts the stacks, and renumbers the timeline's stack indexes to follow them. */
static void sort_stacks(struct profile *p)
{
	uint32_t *order, *new_index;
	struct profile_stack *sorted;

	if (!p->timeline_count && !p->event_count) {
		if (p->stack_count && !p->stacks_in_any_order)
			sort_array(p->stacks, p->stack_count, sizeof(*p->stacks), compare_stacks);
		return;
	}
	order = xmalloc(p->stack_count * sizeof(*order));
	new_index = xmalloc(p->stack_count * sizeof(*new_index));
	sorted = xmalloc(p->stack_count * sizeof(*sorted));
	for (size_t i = 0; i < p->stack_count; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, p->stack_count, sizeof(*order), compare_stack_indexes, p->stacks);
	for (size_t i = 0; i < p->stack_count; i++) {
		sorted[i] = p->stacks[order[i]];
		new_index[order[i]] = (uint32_t)i;
	}
	for (size_t i = 0; i < p->timeline_count; i++)
		p->timeline[i].stack = new_index[p->timeline[i].stack];
	for (size_t i = 0; i < p->event_count; i++)
		p->events[i].stack = new_index[p->events[i].stack];
	free(p->stacks);
	p->stacks = sorted;
	p->stack_cap = p->stack_count;
	sort_array(p->timeline, p->timeline_count, sizeof(*p->timeline), compare_samples);
	sort_array(p->events, p->event_count, sizeof(*p->events), compare_events);
	free(new_index);
	free(order);
}

void profile_finish(struct profile *p)
{
	if (p->tables) {
		set_release(&p->tables->modules);
		set_release(&p->tables->locations);
		set_release(&p->tables->stacks);
		free(p->tables);
		p->tables = NULL;
	}
	for (size_t i = 0; i < p->location_count; i++) {
		struct profile_location *l = &p->locations[i];

		if (l->frame_count)
			continue;
		l->frames = PROFILE_UNNAMED_FRAMES;
		l->frame_count = 1;
		if (!l->unnamed_reason)
			l->unnamed_reason = "not symbolized";
	}
	sort_stacks(p);
	profile_name_processes(p);
	sort_array(p->metrics, p->metrics_count, sizeof(*p->metrics), compare_metrics);
}

const struct profile_metrics *profile_metrics_near(const struct profile *p, uint32_t pid, uint32_t tid,
						   uint64_t time_ns)
{
	const struct profile_metrics *before = NULL;
	size_t lo = 0, hi = p->metrics_count;

	/* The first reading of pid at or after time_ns; the event's own is there, an interval one just before. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct profile_metrics *m = &p->metrics[mid];

		if (m->pid < pid || (m->pid == pid && m->time_ns < time_ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < p->metrics_count && p->metrics[i].pid == pid && p->metrics[i].time_ns == time_ns; i++)
		if (p->metrics[i].at_event && p->metrics[i].tid == tid)
			return &p->metrics[i];
	for (size_t i = lo; i-- > 0 && p->metrics[i].pid == pid;)
		if (!p->metrics[i].at_event) {
			before = &p->metrics[i];
			break;
		}
	return before;
}

void profile_set_process_name(struct profile *p, uint32_t pid, const char *name, uint64_t time_ns)
{
	struct profile_process *proc;

	GROW(p->processes, p->process_cap, p->process_count + 1);
	proc = &p->processes[p->process_count++];
	proc->pid = pid;
	proc->time_ns = time_ns;
	memset(proc->name, 0, sizeof(proc->name));
	memcpy(proc->name, name, strnlen(name, sizeof(proc->name) - 1));
}

void profile_add_fork(struct profile *p, uint32_t child, uint32_t parent, uint64_t time_ns)
{
	if (child == parent || !parent)
		return;
	GROW(p->forks, p->fork_cap, p->fork_count + 1);
	p->forks[p->fork_count++] = (struct profile_fork){ child, parent, time_ns };
}

const char *profile_process_name(const struct profile *p, uint32_t pid, uint64_t time_ns)
{
	return name_at(p, pid, time_ns);
}

const struct profile_frame profile_unnamed_frame;

void profile_frames_free(struct profile_frame *frames, uint32_t count)
{
	if (frames == PROFILE_UNNAMED_FRAMES)
		return;
	for (uint32_t j = 0; j < count; j++) {
		free(frames[j].function);
		free(frames[j].system_name);
		free(frames[j].file);
	}
	free(frames);
}

void profile_release(struct profile *p)
{
	for (size_t i = 0; i < p->module_count; i++) {
		free(p->modules[i].path);
		free(p->modules[i].build_id);
	}
	for (size_t i = 0; i < p->location_count; i++)
		profile_frames_free(p->locations[i].frames, p->locations[i].frame_count);
	arena_release(&p->stack_arrays);
	for (size_t i = 0; i < p->event_count; i++)
		free(p->events[i].name);
	free(p->events);
	for (size_t i = 0; i < p->probe_count; i++) {
		free(p->probes[i].binary);
		free(p->probes[i].function);
		free(p->probes[i].build_id);
		for (uint32_t a = 0; a < p->probes[i].arg_count; a++)
			free(p->probes[i].args[a].name);
	}
	free(p->probes);
	for (size_t i = 0; i < p->hit_count; i++)
		for (int a = 0; a < PROFILE_PROBE_ARGS; a++)
			free(p->hits[i].strings[a]);
	free(p->hits);
	free(p->metrics);
	free(p->modules);
	free(p->locations);
	free(p->stacks);
	free(p->timeline);
	free(p->processes);
	free(p->forks);
	free(p->info.command_line);
	free(p->info.hostname);
	free(p->info.kernel_release);
	free(p->info.event);
	if (p->tables) {
		set_release(&p->tables->modules);
		set_release(&p->tables->locations);
		set_release(&p->tables->stacks);
		free(p->tables);
	}
	memset(p, 0, sizeof(*p));
}

void profile_count_unwind_stop(struct profile *p, bool truncated, const char *reason)
{
	profile_count_unwind_stops(p, truncated, reason, 1);
}

void profile_count_unwind_stops(struct profile *p, bool truncated, const char *reason, uint64_t n)
{
	size_t i;

	if (truncated)
		p->truncated_stacks += n;
	else
		p->incomplete_stacks += n;
	if (!reason)
		return;
	for (i = 0; i < p->unwind_stop_count && strcmp(p->unwind_stops[i].reason, reason); i++)
		;
	if (i == ARRAY_SIZE(p->unwind_stops))
		return;
	if (i == p->unwind_stop_count) {
		p->unwind_stops[i].reason = reason;
		p->unwind_stops[i].truncated = truncated;
		p->unwind_stop_count++;
	}
	p->unwind_stops[i].samples += n;
}

const char *profile_unwind_name(enum profile_unwind unwind)
{
	switch (unwind) {
	case PROFILE_UNWIND_FRAME_POINTER: return "frame_pointer";
	case PROFILE_UNWIND_CFI: return "cfi";
	case PROFILE_UNWIND_FP_LEAF_FIX: return "frame_pointer_leaf_fix";
	case PROFILE_UNWIND_KERNEL: return "kernel";
	case PROFILE_UNWIND_PC: return "pc";
	case PROFILE_UNWIND_NONE: return "none";
	}
	return "unknown";
}

const char *profile_sample_kind_name(enum profile_sample_kind kind)
{
	return kind == PROFILE_SAMPLE_OFF_CPU ? "off_cpu" : kind == PROFILE_SAMPLE_EVENT ? "event" : "on_cpu";
}

const char *profile_arg_type_name(enum profile_arg_type type)
{
	switch (type) {
	case PROFILE_ARG_S64: return "s64";
	case PROFILE_ARG_U64: return "u64";
	case PROFILE_ARG_PTR: return "ptr";
	case PROFILE_ARG_STR: return "str";
	}
	return "?";
}

bool profile_stack_context(const struct profile_stack *s, uint32_t d, uint32_t *hit)
{
	if (!s->hits || d >= s->depth || s->hits[d] == PROFILE_NO_HIT)
		return false;
	*hit = s->hits[d];
	return true;
}

char *profile_module_short_name(const struct profile_module *m)
{
	const char *path = m->path, *base = strrchr(path, '/');
	size_t len;

	base = base && base[1] ? base + 1 : path;
	len = strlen(base);
	if (len > 10 && !strcmp(base + len - 10, " (deleted)"))
		len -= 10;
	if (len >= 2 && base[0] == '[' && base[len - 1] == ']') {
		base++;
		len -= 2;
	}
	return xstrndup(base, len);
}

char *profile_location_fallback_name(const struct profile *p, const struct profile_location *loc)
{
	char *module, *name;

	if (loc->module == PROFILE_NO_MODULE || loc->module >= p->module_count)
		return xstrdup("[unknown]");
	module = profile_module_short_name(&p->modules[loc->module]);
	name = xasprintf("[%s]", module);
	free(module);
	return name;
}
