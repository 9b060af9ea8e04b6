/*
 * frame_names.h — how the speedscope, d3 and trace formats name things that the profile leaves implicit:
 * an unnamed frame and the process a stack belongs to. One place, so that the
 * formats agree with each other and with folded output ([module] for unnamed frames, _[k] on
 * kernel frames, _[j] _[i] with --annotate, "[module <0xOFFSET>]" with --addrs).
 */
#ifndef STACKREC_FORMATS_FRAME_NAMES_H
#define STACKREC_FORMATS_FRAME_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output.h"

/*
 * The display name of frame `frame` of loc (0 = innermost), newly allocated, by folded's rules
 * (formats/folded.c): the function name; an unnamed frame is "[module]" ("[unknown]" without a
 * module), or "[module <0xOFFSET>]" with options->addrs. Kernel frames end in _[k]; with
 * options->annotate, JIT frames end in _[j] and inlined frames in _[i].
 */
char *frame_display_name(const struct profile *profile, const struct profile_location *loc, uint32_t frame,
			 const struct output_options *options);

/*
 * The process name of stack_index: the name of its main thread as the recording's TASK blocks tell it at the
 * stack's first sample (profile_process_name), else the name of a stack of its main thread (tid == pid),
 * else the stack's own thread name. Stacks are sorted by pid, so the search covers only that pid's run of
 * stacks.
 */
const char *process_comm(const struct profile *profile, size_t stack_index);
/*
 * A thread or process name as every format shows it: the comm (at most 16 bytes, NUL-terminated in out), or
 * "[unknown]" when it is empty (prctl(PR_SET_NAME, "") makes one), as folded, perf and stackcollapse show it.
 */
const char *shown_comm(const char *comm, char out[17]);

/* A set of byte-string keys numbered 0, 1, 2... in first-insertion order (frame deduplication). */
struct key_index {
	char **keys;
	size_t *lengths;
	size_t count, capacity;
	uint32_t *slots; /* key number + 1, 0 = empty */
	size_t slot_count;
};

void key_index_init(struct key_index *index);
void key_index_release(struct key_index *index);
/* The number of key (len bytes, may contain NULs); *added tells whether it is new. */
size_t key_index_get(struct key_index *index, const void *key, size_t len, bool *added);

#endif
