/*
 * process_maps.c — per-process executable mappings over time (see process_maps.h).
 *
 * Each process keeps its mappings sorted by start address with a running maximum of their end
 * addresses, so the mappings covering an address are found by one binary search and a short walk back
 * (interval stabbing), however many libraries a process has. Among the covering mappings the time rule
 * of process_maps_resolve() picks one. Exec times are kept sorted per process.
 */
#include "process_maps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

struct map_entry {
	uint64_t start, end, file_offset, time_ns;
	uint64_t seq; /* file order, to break time ties deterministically */
	uint32_t module;
};

struct process_maps_process {
	uint32_t pid;
	bool used;
	struct map_entry *maps;
	size_t map_count, map_cap;
	uint64_t *max_end; /* max_end[i] = the largest end among maps[0..i] */
	uint64_t *execs;   /* sorted exec times */
	size_t exec_count, exec_cap;
};

void process_maps_init(struct process_maps *maps)
{
	memset(maps, 0, sizeof(*maps));
}

static size_t pid_slot(uint32_t pid, size_t cap)
{
	return (size_t)((pid * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static struct process_maps_process *find_process(const struct process_maps *maps, uint32_t pid)
{
	if (!maps->cap)
		return NULL;
	for (size_t i = pid_slot(pid, maps->cap);; i = (i + 1) & (maps->cap - 1)) {
		if (!maps->processes[i].used)
			return NULL;
		if (maps->processes[i].pid == pid)
			return &maps->processes[i];
	}
}

static struct process_maps_process *get_process(struct process_maps *maps, uint32_t pid)
{
	struct process_maps_process *proc = find_process(maps, pid);
	size_t i;

	if (proc)
		return proc;
	if ((maps->count + 1) * 2 > maps->cap) {
		size_t cap = maps->cap ? maps->cap * 2 : 64;
		struct process_maps_process *table = xcalloc(cap, sizeof(*table));

		for (size_t j = 0; j < maps->cap; j++) {
			if (!maps->processes[j].used)
				continue;
			for (i = pid_slot(maps->processes[j].pid, cap); table[i].used; i = (i + 1) & (cap - 1))
				;
			table[i] = maps->processes[j];
		}
		free(maps->processes);
		maps->processes = table;
		maps->cap = cap;
	}
	for (i = pid_slot(pid, maps->cap); maps->processes[i].used; i = (i + 1) & (maps->cap - 1))
		;
	maps->processes[i].used = true;
	maps->processes[i].pid = pid;
	maps->count++;
	return &maps->processes[i];
}

void process_maps_add_mapping(struct process_maps *maps, struct profile *profile, const struct srec_mapping *m,
			      const char *path)
{
	struct process_maps_process *proc = get_process(maps, m->pid);
	char build_id[2 * SREC_BUILD_ID_MAX + 1];
	struct map_entry *e;

	hex_encode(build_id, m->build_id, m->build_id_size);
	GROW(proc->maps, proc->map_cap, proc->map_count + 1);
	e = &proc->maps[proc->map_count++];
	e->start = m->start;
	e->end = m->end;
	e->file_offset = m->file_offset;
	e->time_ns = m->time_ns;
	e->seq = maps->mappings++;
	e->module = profile_intern_module(profile, path, build_id, m->start, m->end, m->file_offset, false);
}

void process_maps_add_exec(struct process_maps *maps, uint32_t pid, uint64_t time_ns)
{
	struct process_maps_process *proc = get_process(maps, pid);

	GROW(proc->execs, proc->exec_cap, proc->exec_count + 1);
	proc->execs[proc->exec_count++] = time_ns;
	maps->execs++;
}

static int compare_maps(const void *a, const void *b)
{
	const struct map_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void process_maps_finish(struct process_maps *maps)
{
	for (size_t i = 0; i < maps->cap; i++) {
		struct process_maps_process *proc = &maps->processes[i];
		uint64_t max = 0;

		if (!proc->used)
			continue;
		if (proc->map_count)
			qsort(proc->maps, proc->map_count, sizeof(*proc->maps), compare_maps);
		proc->max_end = xmalloc((proc->map_count ? proc->map_count : 1) * sizeof(*proc->max_end));
		for (size_t j = 0; j < proc->map_count; j++) {
			if (proc->maps[j].end > max)
				max = proc->maps[j].end;
			proc->max_end[j] = max;
		}
		if (proc->exec_count)
			qsort(proc->execs, proc->exec_count, sizeof(*proc->execs), compare_u64);
	}
	maps->finished = true;
}

/* The image epoch of time t: [last exec at or before t, first exec after t). */
static void epoch(const struct process_maps_process *proc, uint64_t t, uint64_t *from, uint64_t *until)
{
	size_t lo = 0, hi = proc->exec_count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (proc->execs[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	*from = lo ? proc->execs[lo - 1] : 0;
	*until = lo < proc->exec_count ? proc->execs[lo] : UINT64_MAX;
}

/* Is x a better choice than y for a sample at t? Both lie in its epoch. */
static bool better(const struct map_entry *x, const struct map_entry *y, uint64_t t)
{
	bool x_before = x->time_ns <= t, y_before = y->time_ns <= t;

	if (x_before != y_before)
		return x_before;
	if (x->time_ns != y->time_ns)
		return x_before ? x->time_ns > y->time_ns : x->time_ns < y->time_ns;
	return x->seq > y->seq; /* same time: the later record wins */
}

bool process_maps_resolve(const struct process_maps *maps, uint32_t pid, uint64_t time_ns, uint64_t ip,
			  uint32_t *module, uint64_t *file_offset)
{
	const struct process_maps_process *proc = find_process(maps, pid);
	const struct map_entry *best = NULL;
	uint64_t from, until;
	size_t lo = 0, hi;

	if (!proc || !proc->map_count)
		return false;
	epoch(proc, time_ns, &from, &until);
	/* The last mapping starting at or before ip, then back while an earlier one may still cover ip. */
	hi = proc->map_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (proc->maps[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && proc->max_end[i] > ip;) {
		const struct map_entry *e = &proc->maps[i];

		if (ip >= e->end || e->time_ns < from || e->time_ns >= until)
			continue;
		if (!best || better(e, best, time_ns))
			best = e;
	}
	if (!best)
		return false;
	*module = best->module;
	*file_offset = ip - best->start + best->file_offset;
	return true;
}

void process_maps_release(struct process_maps *maps)
{
	for (size_t i = 0; i < maps->cap; i++) {
		free(maps->processes[i].maps);
		free(maps->processes[i].max_end);
		free(maps->processes[i].execs);
	}
	free(maps->processes);
	memset(maps, 0, sizeof(*maps));
}
