/*
 * enrich.c — probe context for the frames of samples (see enrich.h for the rule and why it is right).
 */
#include "enrich.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

#define NOT_LOOKED_UP 0 /* location_probe[]: not yet looked up */
#define NO_PROBE 1	/* location_probe[]: no probe covers the location; else 2 + probe index */
#define MAX_PROBES 250	/* so that a probe index fits location_probe[]; record takes probes from its command line */
/* location_probe[]: the probed function's first byte, where a thread stops in the uprobe's trap before the BPF
 * program stamps its call's hit: the latest hit at that CFA is then the previous call's, so no values are shown */
#define AT_PROBE_ENTRY 255

/* One hit as pass 1 keeps it: enough to find it; its values are read later if a frame shows it. */
struct hit_key {
	uint64_t time_ns;
	uint64_t cfa;
	uint32_t pid, tid;
	uint32_t probe;	   /* index into profile.probes */
	uint32_t shown;	   /* index into profile.hits once a frame shows it, else PROFILE_NO_HIT */
	uint64_t ordinal;  /* the PROBE_HIT block's number in the file */
};

struct enricher {
	struct profile *p;
	struct hit_key *hits;
	size_t hit_count, hit_cap, hit_limit;
	bool usable;	      /* context can be trusted (enrich_finish_hits) */
	bool too_many;	      /* more hits than the file's size allows were met */
	uint64_t bad_hits;    /* hits that name no probe or do not fit it */
	uint8_t *location_probe; /* per profile location, see NOT_LOOKED_UP; grown as locations come */
	size_t location_cap;
	uint64_t frames_without_cfa;
	bool empty_strings; /* format 1.6 on: a string of length 0 was read, and is "" */
	/* Pass 3: the shown hits in file order, and how far the pass has come. */
	struct hit_key **wanted;
	size_t wanted_count, wanted_next;
};

struct enricher *enricher_new(struct profile *p, uint64_t file_size, unsigned int version_minor)
{
	struct enricher *e = xcalloc(1, sizeof(*e));

	e->p = p;
	e->empty_strings = version_minor >= 6;
	/* Hits are kept (40 bytes each) until the end: a hostile file of a few highly compressed frames must not
	 * make that unbounded. One hit per byte of file: a real one takes more than two (2.4 bytes a hit of a
	 * probe with no arguments on a function called a million times, and 3.9 with two; a quarter of a hit a
	 * byte took the context of both away as "hostile"). */
	e->hit_limit = file_size + 1024;
	return e;
}

void enricher_free(struct enricher *e)
{
	if (!e)
		return;
	free(e->hits);
	free(e->location_probe);
	free(e->wanted);
	free(e);
}

static int probe_index(const struct profile *p, uint32_t probe_id)
{
	for (size_t i = 0; i < p->probe_count; i++)
		if (p->probes[i].probe_id == probe_id)
			return (int)i;
	return -1;
}

int enrich_add_probe(struct enricher *e, const struct recording_probe *probe)
{
	struct profile *p = e->p;
	struct profile_probe *out;

	/* At most one per id, and few: record takes them from its command line. */
	if (probe_index(p, probe->header.probe_id) >= 0 || p->probe_count >= MAX_PROBES)
		return -1;
	GROW(p->probes, p->probe_cap, p->probe_count + 1);
	out = &p->probes[p->probe_count++];
	memset(out, 0, sizeof(*out));
	out->probe_id = probe->header.probe_id;
	out->binary = xstrdup(probe->binary);
	out->function = xstrdup(probe->function);
	if (probe->header.build_id_size) {
		out->build_id = xmalloc(2 * SREC_BUILD_ID_MAX + 1);
		hex_encode(out->build_id, probe->header.build_id, probe->header.build_id_size);
	}
	out->address = probe->header.address;
	out->arg_count = probe->header.arg_count;
	for (uint32_t a = 0; a < out->arg_count; a++) {
		out->args[a].name = xstrndup(probe->args[a].name, probe->args[a].name_len);
		out->args[a].type = (enum profile_arg_type)probe->args[a].type;
	}
	return 0;
}

/* The number of "str" arguments of probe, whose strings follow a hit's values. */
static uint32_t string_args(const struct profile_probe *probe)
{
	uint32_t n = 0;

	for (uint32_t a = 0; a < probe->arg_count; a++)
		n += probe->args[a].type == PROFILE_ARG_STR;
	return n;
}

/* The hit's block checked against its probe; *probe its profile index. */
static int parse_hit(const struct profile *p, const void *body, uint32_t size, struct srec_probe_hit *hit,
		     const uint64_t **values, const char **strings, uint32_t *lens, bool *cut, int *probe)
{
	const uint8_t *packed;
	uint32_t n;

	if (recording_parse_probe_hit(body, size, hit, values, &packed) < 0 ||
	    (*probe = probe_index(p, hit->probe_id)) < 0 || hit->value_count != p->probes[*probe].arg_count)
		return -1;
	n = string_args(&p->probes[*probe]);
	return recording_split_hit_strings(packed, hit->strings_size, n, strings, lens, cut);
}

int enrich_add_hit(struct enricher *e, uint64_t ordinal, const void *body, uint32_t size)
{
	const char *strings[SREC_PROBE_ARGS_MAX];
	uint32_t lens[SREC_PROBE_ARGS_MAX];
	bool cut[SREC_PROBE_ARGS_MAX];
	struct srec_probe_hit hit;
	const uint64_t *values;
	int probe;

	e->p->probe_hits++;
	if (parse_hit(e->p, body, size, &hit, &values, strings, lens, cut, &probe) < 0) {
		e->bad_hits++;
		return -1;
	}
	e->p->probes[probe].hits++;
	if (e->hit_count >= e->hit_limit) {
		e->too_many = true;
		return 0;
	}
	GROW(e->hits, e->hit_cap, e->hit_count + 1);
	e->hits[e->hit_count++] = (struct hit_key){
		.time_ns = hit.time_ns,
		.cfa = hit.cfa,
		.pid = hit.pid,
		.tid = hit.tid,
		.probe = (uint32_t)probe,
		.shown = PROFILE_NO_HIT,
		.ordinal = ordinal,
	};
	return 0;
}

/* Hits by thread, probe, CFA, then time and file order: a frame's candidates are one run, latest last. */
static int compare_hits(const void *a, const void *b)
{
	const struct hit_key *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->probe != y->probe)
		return x->probe < y->probe ? -1 : 1;
	if (x->cfa != y->cfa)
		return x->cfa < y->cfa ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

void enrich_finish_hits(struct enricher *e, bool damaged, bool have_stats)
{
	struct profile *p = e->p;

	if (!p->probe_hits)
		return;
	if (p->lost_probe_hits)
		p->context_omitted = "the recorder lost probe hits, so the call active in a frame cannot be known";
	else if (!have_stats)
		p->context_omitted = "the recording has no statistics (cut short?): lost probe hits cannot be ruled out";
	else if (damaged)
		p->context_omitted = "the recording is damaged: probe hits may be missing";
	else if (e->bad_hits)
		p->context_omitted = "some probe hits could not be read";
	else if (e->too_many)
		p->context_omitted = "more probe hits than the file's size can hold (a hostile file?)";
	e->usable = !p->context_omitted;
	if (e->usable) {
		sort_array(e->hits, e->hit_count, sizeof(*e->hits), compare_hits);
		return;
	}
	free(e->hits);
	e->hits = NULL;
	e->hit_count = e->hit_cap = 0;
}

static bool has_probe(const struct profile *p, const char *build_id)
{
	for (size_t i = 0; i < p->probe_count; i++)
		if (p->probes[i].build_id && !strcmp(p->probes[i].build_id, build_id))
			return true;
	return false;
}

/* The probe whose function the physical frame of location l is in: 2 + its index, or NO_PROBE. */
/* Whether the function DWARF has at Dwfl address addr of mf (its physical, outermost one) also holds entry:
 * a part of a function gcc moved out lies in the function's ranges. */
static bool same_function(const struct module_file *mf, Dwarf_Addr addr, Dwarf_Addr entry)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mf->mod, addr, &bias), *scopes = NULL;
	bool same = false;
	int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : -1;

	for (int i = n - 1; i >= 0; i--)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			same = dwarf_haspc(&scopes[i], entry - bias) == 1;
			break;
		}
	free(scopes);
	return same;
}

/* Whether symbol name is function's cold part: FUNCTION.cold, or FUNCTION.cold.N (older gcc). */
static bool cold_part_of(const char *name, const char *function)
{
	size_t n = function ? strlen(function) : 0;
	const char *rest = n && !strncmp(name, function, n) ? name + n : NULL;

	if (!rest || strncmp(rest, ".cold", 5))
		return false;
	rest += 5;
	if (*rest == '.')
		rest++;
	return strspn(rest, "0123456789") == strlen(rest) && (rest == name + n + 5 || *rest);
}

static uint8_t probe_of(struct enricher *e, struct unwinder *u, uint32_t l)
{
	const struct profile_location *loc = &e->p->locations[l];
	const struct profile_module *m;
	const struct module_file *mf;
	Dwarf_Addr addr;
	GElf_Off offset;
	GElf_Sym sym;
	const char *name;

	if (loc->kind != PROFILE_LOCATION_USER || loc->synthetic || loc->module >= e->p->module_count)
		return NO_PROBE;
	m = &e->p->modules[loc->module];
	if (!m->build_id || !has_probe(e->p, m->build_id))
		return NO_PROBE;
	if (!(mf = unwind_module_file(u, loc->module)) || !module_file_address(mf, loc->file_offset, &addr))
		return NO_PROBE;
	if (loc->is_return_address && addr)
		addr--; /* the call, which lies in the caller's function */
	if (!(name = dwfl_module_addrinfo(mf->mod, addr, &offset, &sym, NULL, NULL, NULL)))
		return NO_PROBE;
	/* The symbol's start as an ELF address of the binary, which is what the probe names; or the symbol of the
	 * part gcc moved out of the function (FUNCTION.cold: its throw and error paths), which runs in the
	 * function's frame, at its CFA. */
	for (size_t i = 0; i < e->p->probe_count; i++) {
		const struct profile_probe *probe = &e->p->probes[i];

		if (!probe->build_id || strcmp(probe->build_id, m->build_id))
			continue;
		if (!loc->is_return_address && addr - mf->bias == probe->address)
			return AT_PROBE_ENTRY;
		/* a cold part by its name, and by DWARF: two static functions of one name each have theirs */
		if (addr - offset - mf->bias == probe->address ||
		    (cold_part_of(name, probe->function) && same_function(mf, addr, probe->address + mf->bias)))
			return (uint8_t)(2 + i);
	}
	return NO_PROBE;
}

/* The latest hit of (pid, tid, probe, cfa) at or before time_ns, or NULL. */
static struct hit_key *latest_hit(struct enricher *e, uint32_t pid, uint32_t tid, uint32_t probe, uint64_t cfa,
				  uint64_t time_ns)
{
	struct hit_key key = { .time_ns = time_ns, .cfa = cfa, .pid = pid, .tid = tid, .probe = probe,
			       .ordinal = UINT64_MAX };
	size_t lo = 0, hi = e->hit_count;
	struct hit_key *h;

	while (lo < hi) { /* the first hit after key */
		size_t mid = lo + (hi - lo) / 2;

		if (compare_hits(&e->hits[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	h = &e->hits[lo - 1];
	return h->pid == pid && h->tid == tid && h->probe == probe && h->cfa == cfa ? h : NULL;
}

bool enrich_stack(struct enricher *e, struct unwinder *u, uint32_t pid, uint32_t tid, uint64_t time_ns,
		  const uint32_t *locations, const uint64_t *cfas, uint32_t depth, uint32_t *hits)
{
	struct profile *p = e->p;
	bool any = false;

	for (uint32_t d = 0; d < depth; d++)
		hits[d] = PROFILE_NO_HIT;
	if (!p->probe_count || !e->usable)
		return false;
	if (p->location_count > e->location_cap) {
		size_t old = e->location_cap;

		GROW(e->location_probe, e->location_cap, p->location_count);
		memset(e->location_probe + old, NOT_LOOKED_UP, e->location_cap - old);
	}
	for (uint32_t d = 0; d < depth; d++) {
		uint32_t l = locations[d];
		struct hit_key *h;

		if (e->location_probe[l] == NOT_LOOKED_UP)
			e->location_probe[l] = probe_of(e, u, l);
		if (e->location_probe[l] == NO_PROBE || e->location_probe[l] == AT_PROBE_ENTRY)
			continue;
		if (!cfas[d]) {
			e->frames_without_cfa++;
			continue;
		}
		h = latest_hit(e, pid, tid, e->location_probe[l] - 2u, cfas[d], time_ns);
		if (!h)
			continue;
		if (h->shown == PROFILE_NO_HIT) {
			GROW(p->hits, p->hit_cap, p->hit_count + 1);
			memset(&p->hits[p->hit_count], 0, sizeof(p->hits[0]));
			p->hits[p->hit_count].probe = h->probe;
			p->hits[p->hit_count].time_ns = h->time_ns;
			h->shown = (uint32_t)p->hit_count++;
		}
		hits[d] = h->shown;
		any = true;
	}
	return any;
}

static int compare_wanted(const void *a, const void *b)
{
	const struct hit_key *x = *(const struct hit_key *const *)a, *y = *(const struct hit_key *const *)b;

	return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

bool enrich_wants_values(const struct enricher *e)
{
	return e->p->hit_count > 0;
}

void enrich_add_hit_values(struct enricher *e, uint64_t ordinal, const void *body, uint32_t size)
{
	const char *strings[SREC_PROBE_ARGS_MAX];
	uint32_t lens[SREC_PROBE_ARGS_MAX], s = 0;
	bool cut[SREC_PROBE_ARGS_MAX];
	struct srec_probe_hit hit;
	const uint64_t *values;
	struct profile_hit *out;
	const struct profile_probe *probe;
	int index;

	if (!e->wanted) {
		e->wanted = xmalloc((e->p->hit_count + 1) * sizeof(*e->wanted));
		for (size_t i = 0; i < e->hit_count; i++)
			if (e->hits[i].shown != PROFILE_NO_HIT)
				e->wanted[e->wanted_count++] = &e->hits[i];
		sort_array(e->wanted, e->wanted_count, sizeof(*e->wanted), compare_wanted);
	}
	while (e->wanted_next < e->wanted_count && e->wanted[e->wanted_next]->ordinal < ordinal)
		e->wanted_next++;
	if (e->wanted_next == e->wanted_count || e->wanted[e->wanted_next]->ordinal != ordinal)
		return;
	/* The same bytes as in pass 1, which read them without fault. */
	if (parse_hit(e->p, body, size, &hit, &values, strings, lens, cut, &index) < 0)
		return;
	out = &e->p->hits[e->wanted[e->wanted_next]->shown];
	probe = &e->p->probes[index];
	for (uint32_t a = 0; a < probe->arg_count; a++) {
		out->values[a] = values[a];
		if (probe->args[a].type == PROFILE_ARG_STR) {
			/* NULL: a string that could not be read; before format 1.6 an empty one looked the same */
			out->strings[a] = strings[s] && (lens[s] || e->empty_strings) ? xstrndup(strings[s], lens[s]) : NULL;
			if (cut[s])
				out->strings_cut |= (uint8_t)(1u << a);
			s++;
		}
	}
}

uint64_t enrich_frames_without_cfa(const struct enricher *e)
{
	return e->frames_without_cfa;
}
