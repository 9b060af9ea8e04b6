/*
 * process_maps.c — per-process executable mappings over time (see process_maps.h).
 *
 * Each process keeps its mappings sorted by start address with a running maximum of their end
 * addresses, so the mappings covering an address are found by one binary search and a short walk back
 * (interval stabbing), however many libraries a process has. Among the covering mappings the time rule
 * of process_maps_resolve() picks one. Exec times are kept sorted per process.
 *
 * A process forked without exec inherits its parent's address space, but the kernel reports no mappings for
 * it: only the fork. So each process also keeps its forks (time, parent), and an address none of its own
 * mappings covers is looked up in the parent as it was at the fork, as perf's thread__clone_maps copies
 * them; the parent may itself be such a child. Recordings are untrusted: a fork chain is followed at most
 * FORK_DEPTH_MAX steps, so a loop (A forked from B forked from A) ends.
 */
#include "process_maps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

/* Fork chains longer than this are not followed (shells spawning pipelines go a few deep, loops forever). */
#define FORK_DEPTH_MAX 16

struct map_entry {
	uint64_t start, end, file_offset, time_ns;
	uint64_t seq; /* file order, to break time ties deterministically */
	uint32_t module;
};

struct fork_entry {
	uint64_t time_ns;
	uint32_t parent_pid;
};

struct process_maps_process {
	uint32_t pid;
	bool used;
	struct map_entry *maps;
	size_t map_count, map_cap;
	uint64_t *max_end; /* max_end[i] = the largest end among maps[0..i] */
	uint64_t *execs;   /* sorted exec times */
	size_t exec_count, exec_cap;
	struct fork_entry *forks; /* sorted by time: when this process was created, and by whom */
	size_t fork_count, fork_cap;
	bool existed_at_start; /* running when recording started: its mappings then come from a /proc scan */
	uint64_t *changes; /* sorted times of its mappings, execs and forks (process_maps_period) */
	size_t change_count;
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

uint32_t process_maps_add_mapping(struct process_maps *maps, struct profile *profile, const struct srec_mapping *m,
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
	return e->module;
}

void process_maps_add_exec(struct process_maps *maps, uint32_t pid, uint64_t time_ns)
{
	struct process_maps_process *proc = get_process(maps, pid);

	GROW(proc->execs, proc->exec_cap, proc->exec_count + 1);
	proc->execs[proc->exec_count++] = time_ns;
	maps->execs++;
}

void process_maps_add_fork(struct process_maps *maps, uint32_t child_pid, uint32_t parent_pid, uint64_t time_ns)
{
	struct process_maps_process *proc;

	if (child_pid == parent_pid || !parent_pid) /* a new thread, or a kernel thread: nothing inherited */
		return;
	proc = get_process(maps, child_pid);
	GROW(proc->forks, proc->fork_cap, proc->fork_count + 1);
	proc->forks[proc->fork_count++] = (struct fork_entry){ .time_ns = time_ns, .parent_pid = parent_pid };
	maps->forks++;
}

void process_maps_add_existing(struct process_maps *maps, uint32_t pid)
{
	get_process(maps, pid)->existed_at_start = true;
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

static int compare_forks(const void *a, const void *b)
{
	const struct fork_entry *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->parent_pid < y->parent_pid ? -1 : x->parent_pid > y->parent_pid;
}

void process_maps_finish(struct process_maps *maps)
{
	for (size_t i = 0; i < maps->cap; i++) {
		struct process_maps_process *proc = &maps->processes[i];
		uint64_t max = 0;

		if (!proc->used)
			continue;
		if (proc->map_count)
			sort_array(proc->maps, proc->map_count, sizeof(*proc->maps), compare_maps);
		proc->max_end = xmalloc((proc->map_count ? proc->map_count : 1) * sizeof(*proc->max_end));
		for (size_t j = 0; j < proc->map_count; j++) {
			if (proc->maps[j].end > max)
				max = proc->maps[j].end;
			proc->max_end[j] = max;
		}
		if (proc->exec_count)
			sort_array(proc->execs, proc->exec_count, sizeof(*proc->execs), compare_u64);
		if (proc->fork_count)
			sort_array(proc->forks, proc->fork_count, sizeof(*proc->forks), compare_forks);
		proc->change_count = proc->map_count + proc->exec_count + proc->fork_count;
		proc->changes = xmalloc((proc->change_count ? proc->change_count : 1) * sizeof(*proc->changes));
		for (size_t j = 0; j < proc->map_count; j++)
			proc->changes[j] = proc->maps[j].time_ns;
		for (size_t j = 0; j < proc->exec_count; j++)
			proc->changes[proc->map_count + j] = proc->execs[j];
		for (size_t j = 0; j < proc->fork_count; j++)
			proc->changes[proc->map_count + proc->exec_count + j] = proc->forks[j].time_ns;
		if (proc->change_count)
			sort_array(proc->changes, proc->change_count, sizeof(*proc->changes), compare_u64);
	}
	maps->finished = true;
}

/*
 * How many of the count elements at base, each size bytes and sorted by the uint64_t at offset in them, have
 * that key at or below key: the index of the first one above it (execs, mapping starts and forks alike).
 */
static size_t count_at_or_below(const void *base, size_t count, size_t size, size_t offset, uint64_t key)
{
	size_t lo = 0, hi = count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)base + mid * size + offset, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The image epoch of time t: from the last exec or fork at or before t to the first one after it. A fork
 * starts another process under a pid used before (pids wrap: 32768 of them at 200 processes a second go round
 * in under 3 minutes), whose mappings must not name the new one's frames, as perf starts a new thread at a
 * FORK record.
 */
static void epoch(const struct process_maps_process *proc, uint64_t t, uint64_t *from, uint64_t *until)
{
	size_t lo = count_at_or_below(proc->execs, proc->exec_count, sizeof(*proc->execs), 0, t);
	size_t forks = count_at_or_below(proc->forks, proc->fork_count, sizeof(*proc->forks),
					 offsetof(struct fork_entry, time_ns), t);

	*from = lo ? proc->execs[lo - 1] : 0;
	*until = lo < proc->exec_count ? proc->execs[lo] : UINT64_MAX;
	if (forks && proc->forks[forks - 1].time_ns > *from)
		*from = proc->forks[forks - 1].time_ns;
	if (forks < proc->fork_count && proc->forks[forks].time_ns < *until)
		*until = proc->forks[forks].time_ns;
}

/* Is x a better choice than y for a sample at t? Both lie in its epoch and on the same side of t. */
static bool better(const struct map_entry *x, const struct map_entry *y, uint64_t t)
{
	if (x->time_ns != y->time_ns)
		return x->time_ns <= t ? x->time_ns > y->time_ns : x->time_ns < y->time_ns;
	return x->seq > y->seq; /* same time: the later record wins */
}

/*
 * Of proc's own mappings covering ip in the epoch of t: the newest one mapped at or before t in *before,
 * the oldest one mapped after t in *after (either NULL).
 */
static void own_mappings(const struct process_maps_process *proc, uint64_t t, uint64_t ip,
			 const struct map_entry **before, const struct map_entry **after)
{
	uint64_t from, until;
	/* The last mapping starting at or before ip, then back while an earlier one may still cover ip. */
	size_t lo = count_at_or_below(proc->maps, proc->map_count, sizeof(*proc->maps),
				      offsetof(struct map_entry, start), ip);

	*before = *after = NULL;
	epoch(proc, t, &from, &until);
	for (size_t i = lo; i-- > 0 && proc->max_end[i] > ip;) {
		const struct map_entry *e = &proc->maps[i];
		const struct map_entry **best = e->time_ns <= t ? before : after;

		if (ip >= e->end || e->time_ns < from || e->time_ns >= until)
			continue;
		if (!*best || better(e, *best, t))
			*best = e;
	}
}

/*
 * The fork that made the image proc runs at t, or NULL when that image came from an exec: the last fork at
 * or before t (else the first one, as fork records may be stamped after the child's first samples), if
 * no exec lies between it and t.
 */
static const struct fork_entry *image_fork(const struct process_maps_process *proc, uint64_t t)
{
	size_t later = count_at_or_below(proc->forks, proc->fork_count, sizeof(*proc->forks),
					 offsetof(struct fork_entry, time_ns), t);
	const struct fork_entry *f;
	uint64_t from, until;

	if (!proc->fork_count)
		return NULL;
	f = &proc->forks[later ? later - 1 : 0];
	epoch(proc, t, &from, &until);
	return from && from > f->time_ns ? NULL : f;
}

static const struct map_entry *resolve(const struct process_maps *maps, uint32_t pid, uint64_t t, uint64_t ip,
				       unsigned int depth)
{
	const struct process_maps_process *proc = find_process(maps, pid);
	const struct map_entry *before, *after, *inherited;
	const struct fork_entry *fork;

	if (!proc)
		return NULL;
	own_mappings(proc, t, ip, &before, &after);
	if (before)
		return before;
	/* Before a mapping of its own covered ip, a forked child ran what its parent had mapped at the fork. */
	fork = image_fork(proc, t);
	if (fork && depth < FORK_DEPTH_MAX) {
		inherited = resolve(maps, fork->parent_pid, fork->time_ns, ip, depth + 1);
		if (inherited)
			return inherited;
	}
	return after;
}

bool process_maps_resolve(const struct process_maps *maps, uint32_t pid, uint64_t time_ns, uint64_t ip,
			  uint32_t *module, uint64_t *file_offset)
{
	const struct map_entry *best = resolve(maps, pid, time_ns, ip, 0);

	if (!best)
		return false;
	*module = best->module;
	*file_offset = ip - best->start + best->file_offset;
	return true;
}

uint64_t process_maps_exec_pc_time(const struct process_maps *maps, uint32_t pid, uint64_t time_ns, uint64_t pc)
{
	const struct process_maps_process *proc = find_process(maps, pid);
	size_t execs;
	uint64_t exec_ns;

	if (!proc || resolve(maps, pid, time_ns, pc, 0))
		return time_ns;
	execs = count_at_or_below(proc->execs, proc->exec_count, sizeof(*proc->execs), 0, time_ns);
	if (!execs)
		return time_ns;
	exec_ns = proc->execs[execs - 1];
	if (!exec_ns || time_ns - exec_ns > PROCESS_MAPS_EXEC_NS || !resolve(maps, pid, exec_ns - 1, pc, 0))
		return time_ns;
	return exec_ns - 1;
}

/*
 * Every comparison resolve() makes with the time of a sample is "time of a mapping, exec or fork <= t" (in
 * own_mappings, better, epoch and image_fork; a parent is looked at as it was at the fork's own time): so the
 * count of those times at or below t determines them all.
 */
uint64_t process_maps_period_span(const struct process_maps *maps, uint32_t pid, uint64_t time_ns, uint64_t *from,
				  uint64_t *until)
{
	const struct process_maps_process *proc = find_process(maps, pid);
	size_t period;

	*from = 0;
	*until = UINT64_MAX;
	if (!proc)
		return 0;
	period = count_at_or_below(proc->changes, proc->change_count, sizeof(*proc->changes), 0, time_ns);
	if (period)
		*from = proc->changes[period - 1];
	if (period < proc->change_count)
		*until = proc->changes[period];
	return period;
}

uint64_t process_maps_period(const struct process_maps *maps, uint32_t pid, uint64_t time_ns)
{
	uint64_t from, until;

	return process_maps_period_span(maps, pid, time_ns, &from, &until);
}

/* *visits bounds the whole search: a hostile recording may give each pid many forks, from each other. */
static bool has_mappings(const struct process_maps *maps, uint32_t pid, unsigned int depth, unsigned int *visits)
{
	const struct process_maps_process *proc = find_process(maps, pid);

	if (!proc || !*visits)
		return false;
	--*visits;
	if (proc->map_count)
		return true;
	for (size_t i = 0; i < proc->fork_count && depth < FORK_DEPTH_MAX && *visits; i++)
		if (has_mappings(maps, proc->forks[i].parent_pid, depth + 1, visits))
			return true;
	return false;
}

bool process_maps_has_mappings(const struct process_maps *maps, uint32_t pid)
{
	unsigned int visits = 4 * FORK_DEPTH_MAX;

	return has_mappings(maps, pid, 0, &visits);
}

bool process_maps_existed_at_start(const struct process_maps *maps, uint32_t pid)
{
	const struct process_maps_process *proc = find_process(maps, pid);

	return proc && proc->existed_at_start;
}

void process_maps_release(struct process_maps *maps)
{
	for (size_t i = 0; i < maps->cap; i++) {
		free(maps->processes[i].maps);
		free(maps->processes[i].max_end);
		free(maps->processes[i].execs);
		free(maps->processes[i].forks);
		free(maps->processes[i].changes);
	}
	free(maps->processes);
	memset(maps, 0, sizeof(*maps));
}
