/*
 * dump-blocks.c — a test helper, not a unit test: prints the probe, event and metrics blocks of a recording
 * (format 1.2) one per line, for tests/t5300-probes.sh to check what record wrote, field by field, before
 * `stackrec info` and convert know these blocks. Reads through formats/recording_reader.c; every size is
 * checked against the block.
 *
 *   probe ID ADDRESS PATH FUNCTION ARG:TYPE...
 *   hit PROBE_ID PID TID CFA VALUE... | STRING...
 *   event TYPE SIGNO CODE ADDRESS NAME user=N kernel=N regs=0|1
 *   metrics REASON PID TID THREADS USER_NS SYSTEM_NS RSS VM
 *   stats SAMPLES PROBE_HITS LOST_PROBE_HITS EVENTS LOST_EVENT_SAMPLES
 *
 * With --order, instead, the samples, tasks and embedded files in the order they are in the file, for
 * tests/t2100-record-symbols.sh to see what the recorder wrote while something else was under way:
 *
 *   sample PID TID TIME_NS
 *   task EVENT PID TID TIME_NS
 *   file KIND PID TIME_NS DATA_OFFSET DATA_SIZE
 *
 * Usage: dump-blocks [--order] FILE
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../formats/recording_reader.h"

/* The event info at the end of a SAMPLE block, after its IPs and (with USER_REGS) registers and stack. */
static void dump_event(const void *body, uint32_t size)
{
	struct srec_sample s;
	const uint64_t *ips;
	struct srec_user_regs ur;
	const uint64_t *regs;
	const uint8_t *stack;
	size_t at;
	struct srec_sample_event ev;
	int has_regs;

	if (recording_parse_sample(body, size, &s, &ips) < 0 || s.kind != SREC_SAMPLE_EVENT)
		return;
	at = sizeof(s) + 8u * (s.user_depth + s.kernel_depth);
	has_regs = recording_parse_user_regs(body, size, &s, &ur, &regs, &stack) == 0;
	if (has_regs)
		at += sizeof(ur) + 8u * ur.reg_count + ur.stack_size;
	if (!(s.flags & SREC_SAMPLE_EVENT_INFO) || at + sizeof(ev) > size) {
		printf("event BAD\n");
		return;
	}
	memcpy(&ev, (const char *)body + at, sizeof(ev));
	if (ev.name_size > size - at - sizeof(ev) ||
	    (ev.name_size && ((const char *)body)[at + sizeof(ev) + ev.name_size - 1] != 0)) {
		printf("event BAD-NAME\n");
		return;
	}
	printf("event %u %d %d 0x%" PRIx64 " %s user=%u kernel=%u regs=%d pid=%u tid=%u\n", ev.type, ev.signo, ev.code,
	       ev.address, ev.name_size ? (const char *)body + at + sizeof(ev) : "-", s.user_depth, s.kernel_depth,
	       has_regs, s.pid, s.tid);
}

static void dump_probe(const char *body, uint32_t size)
{
	struct srec_probe p;
	const char *s, *end;

	if (size < sizeof(p))
		return;
	memcpy(&p, body, sizeof(p));
	if (p.strings_size > size - sizeof(p) || !p.strings_size || body[sizeof(p) + p.strings_size - 1]) {
		printf("probe BAD\n");
		return;
	}
	printf("probe %u 0x%" PRIx64, p.probe_id, p.address);
	end = body + sizeof(p) + p.strings_size;
	for (s = body + sizeof(p); s < end; s += strlen(s) + 1)
		printf(" %s", s);
	printf("\n");
}

static unsigned int version_minor; /* the file's: what a string's length 0 means */

static void dump_hit(const char *body, uint32_t size)
{
	struct srec_probe_hit h;
	const char *s, *end;

	if (size < sizeof(h))
		return;
	memcpy(&h, body, sizeof(h));
	if ((size - sizeof(h)) / 8 < h.value_count || size - sizeof(h) - 8u * h.value_count < h.strings_size) {
		printf("hit BAD\n");
		return;
	}
	printf("hit %u %u %u 0x%" PRIx64, h.probe_id, h.pid, h.tid, h.cfa);
	for (unsigned int i = 0; i < h.value_count; i++) {
		uint64_t v;

		memcpy(&v, body + sizeof(h) + 8 * i, sizeof(v));
		printf(" %" PRId64, (int64_t)v);
	}
	printf(" |");
	s = body + sizeof(h) + 8u * h.value_count;
	end = s + h.strings_size;
	while (end - s >= 2) {
		uint16_t len;
		bool cut;

		memcpy(&len, s, sizeof(len));
		if (len == SREC_PROBE_STRING_UNREAD) { /* format 1.6 */
			printf(" <unreadable>");
			s += 2;
			continue;
		}
		cut = len & SREC_PROBE_STRING_CUT; /* format 1.7 */
		len &= (uint16_t)~SREC_PROBE_STRING_CUT;
		if (len > end - s - 2)
			break;
		printf(" %.*s%s", (int)len, s + 2, cut ? "<cut>" : "");
		if (!len)
			printf(version_minor >= 6 ? "\"\"" : "<unreadable>"); /* before 1.6, 0 was "not read" */
		s += 2 + len;
	}
	printf("\n");
}

static int dump(void *ctx, uint32_t type, const void *body, uint32_t size)
{
	(void)ctx;
	switch (type) {
	case SREC_BLOCK_PROBE:
		dump_probe(body, size);
		break;
	case SREC_BLOCK_PROBE_HIT:
		dump_hit(body, size);
		break;
	case SREC_BLOCK_SAMPLE:
		dump_event(body, size);
		break;
	case SREC_BLOCK_PROCESS_METRICS: {
		struct srec_process_metrics m;

		if (size < sizeof(m))
			return 0;
		memcpy(&m, body, sizeof(m));
		printf("metrics %u %u %u %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", m.reason, m.pid, m.tid,
		       m.threads, m.user_time_ns, m.system_time_ns, m.rss_bytes, m.vm_bytes);
		break;
	}
	case SREC_BLOCK_STATS: {
		struct srec_stats st = { 0 };

		memcpy(&st, body, size < sizeof(st) ? size : sizeof(st));
		printf("stats %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", st.samples, st.probe_hits,
		       st.lost_probe_hits, st.events, st.lost_event_samples);
		break;
	}
	}
	return 0;
}

static int dump_order(void *ctx, uint32_t type, const void *body, uint32_t size)
{
	(void)ctx;
	if (type == SREC_BLOCK_SAMPLE && size >= sizeof(struct srec_sample)) {
		struct srec_sample s;

		memcpy(&s, body, sizeof(s));
		printf("sample %u %u %" PRIu64 "\n", s.pid, s.tid, s.time_ns);
	} else if (type == SREC_BLOCK_TASK && size >= sizeof(struct srec_task)) {
		struct srec_task t;

		memcpy(&t, body, sizeof(t));
		printf("task %u %u %u %" PRIu64 "\n", t.event, t.pid, t.tid, t.time_ns);
	} else if (type == SREC_BLOCK_FILE && size >= sizeof(struct srec_file)) {
		struct srec_file f;

		memcpy(&f, body, sizeof(f));
		printf("file %u %u %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", f.kind, f.pid, f.time_ns, f.data_offset,
		       f.data_size);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct recording_reader r;
	bool order = argc == 3 && !strcmp(argv[1], "--order");
	int ret;

	if (argc != 2 && !order) {
		fprintf(stderr, "usage: dump-blocks [--order] FILE\n");
		return 2;
	}
	if (recording_reader_open(&r, argv[argc - 1]) < 0)
		return 1;
	version_minor = r.header.version_minor;
	ret = recording_reader_for_each(&r, order ? dump_order : dump, NULL, RECORDING_WARN_SUMMARY);
	ret = ret || recording_reader_report_damage(&r);
	recording_reader_close(&r);
	return ret ? 1 : 0;
}
