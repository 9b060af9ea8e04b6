/*
 * probes.c — the recorder as probe manager: a uprobe at the entry of each --probe function, one for
 * libstdc++'s __cxa_throw (--exceptions), and the signal_deliver tracepoint (--signals); a PROBE block per
 * probe, and a PROBE_HIT block per hit as it comes out of the ring buffer.
 *
 * Every uprobe is attached by symbol to the binary's inode for all processes (pid -1): it fires in
 * processes that exist and in those that start later, and the BPF side keeps only the recorded ones (the
 * `targets` map). One BPF program serves every probe; the attach cookie says which probe fired, how many
 * registers it keeps and which of them point to strings (PROBE_COOKIE in bpf/profile.h), so a hit costs no
 * map lookup. Uprobes, not a library preloaded into the target: docs/recording.md says why.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../formats/recording.h"
#include "../util.h"
#include "profile.skel.h"
#include "recorder.h"

#include "../bpf/profile.h"

_Static_assert(PROBE_ARGS_MAX == SREC_PROBE_ARGS_MAX && PROBE_ARGS_MAX_SPEC <= SREC_PROBE_ARGS_MAX &&
		       PROBE_STRING_MAX == SREC_PROBE_STRING_MAX && PROBE_ARG_REGS == PROBE_ARGS_MAX,
	       "probe limits");
_Static_assert(PROBES_MAX <= 0xffff, "probe ids fit the cookie");

#define SYSTEM_LIBSTDCXX "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

/* Which argument registers point to strings: the cookie's mask, one bit per register. */
static uint32_t string_mask(const struct probe *p)
{
	uint32_t mask = 0;

	for (unsigned int i = 0; i < p->arg_count; i++)
		if (p->args[i].string)
			mask |= 1u << p->args[i].reg;
	return mask;
}

static int attach_uprobe(struct recorder *rec, struct bpf_program *prog, const char *path, const char *function,
			 uint64_t cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = function, .bpf_cookie = cookie);
	struct bpf_link *link = bpf_program__attach_uprobe_opts(prog, -1, path, 0, &opts);

	if (!link)
		return error("cannot attach a uprobe to %s in '%s': %s", function, path, strerror(errno));
	sampler_add_link(rec, link);
	return 0;
}

/*
 * The libstdc++ whose __cxa_throw is probed: the one a -p process has mapped, else the system's. A spawned
 * command has not mapped anything yet: the system's is the one its loader will find.
 */
static char *find_libstdcxx(struct recorder *rec)
{
	for (size_t i = 0; i < rec->pid_count; i++) {
		char maps[64], line[4096];
		FILE *f;

		pid_t view = process_live_task(rec->pids[i]); /* its main thread may have exited */

		snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)(view ? view : rec->pids[i]));
		f = fopen(maps, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char *path = strchr(line, '/');
			struct stat st;

			if (!path || !strstr(path, "/libstdc++.so"))
				continue;
			path[strcspn(path, "\n")] = 0;
			/* a path the kernel gave; used only when it is a regular file, not a link someone placed */
			if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) {
				fclose(f);
				return xstrdup(path);
			}
		}
		fclose(f);
	}
	return realpath(SYSTEM_LIBSTDCXX, NULL);
}

int probes_attach(struct recorder *rec)
{
	struct bpf_link *link;

	for (size_t i = 0; i < rec->probe_count; i++) {
		struct probe *p = &rec->probes[i];

		if (attach_uprobe(rec, rec->skel->progs.probe_hit, p->path, p->function,
				  PROBE_COOKIE(p->id, PROBE_ARGS_MAX, string_mask(p))) < 0)
			return -1;
	}
	if (rec->exceptions) {
		rec->libstdcxx = find_libstdcxx(rec);
		if (!rec->libstdcxx)
			return error("--exceptions: no libstdc++ found (%s: %s)", SYSTEM_LIBSTDCXX, strerror(errno));
		if (attach_uprobe(rec, rec->skel->progs.on_throw, rec->libstdcxx, "__cxa_throw", 0) < 0)
			return -1;
		debug("--exceptions: __cxa_throw in %s", rec->libstdcxx);
	}
	if (rec->signals) {
		link = bpf_program__attach(rec->skel->progs.on_signal);
		if (!link)
			return error("cannot follow signals (tp_btf/signal_deliver): %s", strerror(errno));
		sampler_add_link(rec, link);
	}
	return 0;
}

int probes_write_blocks(struct recorder *rec)
{
	for (size_t i = 0; i < rec->probe_count; i++) {
		const struct probe *p = &rec->probes[i];
		struct srec_probe head = {
			.probe_id = p->id,
			.arg_count = p->arg_count,
			.address = p->address,
			.build_id_size = p->build_id_size,
		};
		size_t len = strlen(p->path) + 1 + strlen(p->function) + 1, at;
		char *strings;

		for (unsigned int j = 0; j < p->arg_count; j++)
			len += strlen(p->args[j].name) + 1 + strlen(p->args[j].type) + 1;
		strings = xmalloc(len);
		at = (size_t)sprintf(strings, "%s", p->path) + 1;
		at += (size_t)sprintf(strings + at, "%s", p->function) + 1;
		for (unsigned int j = 0; j < p->arg_count; j++)
			at += (size_t)sprintf(strings + at, "%s:%s", p->args[j].name, p->args[j].type) + 1;
		memcpy(head.build_id, p->build_id, p->build_id_size);
		head.strings_size = (uint32_t)len;
		if (recording_writer_add(&rec->writer, SREC_BLOCK_PROBE, &head, sizeof(head), strings, len) < 0) {
			free(strings);
			return -1;
		}
		free(strings);
	}
	return 0;
}

/*
 * An argument register's value as a's type has it: an argument narrower than the register (an int, a char, a
 * bool) in its low bytes, sign-extended for "s64", zero-extended otherwise. The rest of the register is whatever
 * the caller left there: an int -2 was shown as 4294967294, a (int)0x500000007 as 21474836487.
 */
static uint64_t extended(uint64_t reg, const struct probe_arg *a)
{
	unsigned int bits = a->bytes * 8;
	uint64_t low;

	if (!a->bytes || a->bytes >= sizeof(reg))
		return reg;
	low = reg & ((1ull << bits) - 1);
	if (!strcmp(a->type, "s64") && (low >> (bits - 1)) & 1)
		low |= ~0ull << bits;
	return low;
}

/*
 * A hit as the BPF side sent it — all six registers in register order, the strings of the registers in the
 * cookie's mask in register order — becomes a PROBE_HIT in the probe's argument order.
 */
void probes_handle_hit(struct recorder *rec, const void *data, size_t size)
{
	const struct probe_hit_event *e = data;
	struct srec_probe_hit head = { 0 };
	/* values[], then each string as uint16_t length and bytes: the tail of the block */
	unsigned char tail[PROBE_ARGS_MAX * sizeof(uint64_t) + PROBE_ARGS_MAX * (2 + PROBE_STRING_MAX)];
	const struct probe *p;
	size_t at, need;
	int slot_of[PROBE_ARG_REGS];
	int slots = 0;
	uint32_t mask;

	if (size < offsetof(struct probe_hit_event, strings) || e->probe_id == 0 || e->probe_id > rec->probe_count ||
	    e->string_count > PROBE_ARGS_MAX)
		return;
	need = offsetof(struct probe_hit_event, strings) + (size_t)e->string_count * PROBE_STRING_MAX;
	if (size < need)
		return;
	p = &rec->probes[e->probe_id - 1];
	mask = string_mask(p);
	/* the string slots the BPF side filled: one per register of the mask, in register order */
	for (int r = 0; r < PROBE_ARG_REGS; r++)
		slot_of[r] = mask & (1u << r) ? slots++ : -1;
	if (slots != e->string_count)
		return;
	head.time_ns = e->time_ns;
	head.pid = e->pid;
	head.tid = e->tid;
	head.probe_id = e->probe_id;
	head.value_count = (uint16_t)p->arg_count;
	head.cfa = e->cfa;
	at = p->arg_count * sizeof(uint64_t);
	for (unsigned int i = 0; i < p->arg_count; i++) {
		const struct probe_arg *a = &p->args[i];
		int slot = slot_of[a->reg];
		uint16_t len = 0, field;
		uint64_t value;

		value = extended(e->values[a->reg], a);
		memcpy(tail + i * sizeof(uint64_t), &value, sizeof(value));
		if (!a->string)
			continue;
		/* bpf_probe_read_user_str's count includes the NUL (1: ""); 0 when the pointer could not be read */
		len = SREC_PROBE_STRING_UNREAD;
		if (e->string_len[slot] > 0 && e->string_len[slot] <= PROBE_STRING_MAX)
			len = (uint16_t)(e->string_len[slot] - 1);
		else if (e->string_len[slot] == PROBE_STRING_CUT)
			len = PROBE_STRING_MAX - 1;
		field = e->string_len[slot] == PROBE_STRING_CUT ? len | SREC_PROBE_STRING_CUT : len;
		memcpy(tail + at, &field, sizeof(field));
		if (len == SREC_PROBE_STRING_UNREAD)
			len = 0; /* no bytes follow */
		memcpy(tail + at + sizeof(len), e->strings[slot], len);
		at += sizeof(len) + len;
	}
	head.strings_size = (uint16_t)(at - p->arg_count * sizeof(uint64_t));
	rec->probe_hits++;
	u64_set_add(&rec->hit_pids, e->pid);
	recording_writer_add(&rec->writer, SREC_BLOCK_PROBE_HIT, &head, sizeof(head), tail, at);
}

uint64_t probes_lost_hits(struct recorder *rec)
{
	return rec->skel ? sampler_percpu_sum(rec, rec->skel->maps.lost_probe, 0) : 0;
}

uint64_t probes_lost_events(struct recorder *rec)
{
	return rec->skel ? sampler_percpu_sum(rec, rec->skel->maps.lost_probe, 1) : 0;
}

void probes_release(struct recorder *rec)
{
	for (size_t i = 0; i < rec->probe_count; i++)
		probe_release(&rec->probes[i]);
	rec->probe_count = 0;
	free(rec->libstdcxx);
	rec->libstdcxx = NULL;
}
