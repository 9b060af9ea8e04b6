/*
 * d3.c — `-f d3`: the hierarchy d3-flame-graph draws, {"name", "value", "children"} nested from the root,
 * with inclusive values: a node's value sums the values of every stack through it, so the root's value is
 * the profile's total. Values are what --kind asks for, as in folded output (on-CPU sample counts, or
 * microseconds off-CPU or wall); the root says which in a "unit" member ("samples" or "microseconds"),
 * which d3-flame-graph ignores and people and scripts can read.
 *
 * Below "root" comes one node per thread name as in folded output ("comm", "comm-PID" with --pid,
 * "comm-PID/TID" with --tid), then the frames root first; every frame of an inline chain is a node.
 * Frames carry d3-flame-graph's "libtype", which picks their colour hue: "kernel" (orange), "jit" (green),
 * "inlined" (aqua); plain user frames have none (d3-flame-graph's default "warm" hue).
 *
 * The tree is built in memory (one node per distinct path prefix), children kept sorted by name and
 * libtype so that the output does not depend on stack order, then written depth first, one node a line.
 */
#include "output.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "frame_names.h"
#include "json_writer.h"
#include "../util.h"

struct d3_node {
	char *name;
	const char *libtype; /* static string, or NULL */
	uint64_t value;
	struct d3_node **children;
	size_t child_count, child_capacity;
};

static int compare_node(const char *name, const char *libtype, const struct d3_node *node)
{
	int c = strcmp(name, node->name);

	if (c)
		return c;
	return strcmp(libtype ? libtype : "", node->libtype ? node->libtype : "");
}

/* The child of parent with this name and libtype, added if missing; takes ownership of name. */
static struct d3_node *child(struct d3_node *parent, char *name, const char *libtype)
{
	size_t lo = 0, hi = parent->child_count;
	struct d3_node *node;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = compare_node(name, libtype, parent->children[mid]);

		if (!c) {
			free(name);
			return parent->children[mid];
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	node = xcalloc(1, sizeof(*node));
	node->name = name;
	node->libtype = libtype;
	GROW(parent->children, parent->child_capacity, parent->child_count + 1);
	memmove(&parent->children[lo + 1], &parent->children[lo],
		(parent->child_count - lo) * sizeof(*parent->children));
	parent->children[lo] = node;
	parent->child_count++;
	return node;
}

static const char *libtype(const struct profile_location *loc, uint32_t f)
{
	if (loc->kind == PROFILE_LOCATION_KERNEL)
		return "kernel";
	if (loc->kind == PROFILE_LOCATION_JIT)
		return "jit";
	if (loc->frames[f].inlined)
		return "inlined";
	return NULL;
}

static char *thread_node_name(const struct profile_stack *s, const struct output_options *options)
{
	char buf[17];
	const char *comm = shown_comm(s->comm, buf);

	if (options && options->per_tid)
		return xasprintf("%s-%" PRIu32 "/%" PRIu32, comm, s->pid, s->tid);
	if (options && options->per_pid)
		return xasprintf("%s-%" PRIu32, comm, s->pid);
	return xasprintf("%s", comm);
}

static void write_node(struct json_writer *w, const struct d3_node *node, const char *unit)
{
	json_newline(w);
	json_begin_object(w);
	json_kv_string(w, "name", node->name);
	json_kv_uint(w, "value", node->value);
	if (unit)
		json_kv_string(w, "unit", unit);
	if (node->libtype)
		json_kv_string(w, "libtype", node->libtype);
	json_key(w, "children");
	json_begin_array(w);
	for (size_t i = 0; i < node->child_count; i++)
		write_node(w, node->children[i], NULL);
	json_end_array(w);
	json_end_object(w);
}

static void free_node(struct d3_node *node)
{
	for (size_t i = 0; i < node->child_count; i++)
		free_node(node->children[i]);
	free(node->children);
	free(node->name);
	free(node);
}

static int d3_write(const struct profile *profile, const struct output_options *options, FILE *out)
{
	struct d3_node *root = xcalloc(1, sizeof(*root));
	enum output_kind kind = output_kind_of(profile, options);
	struct json_writer w;
	int ret;

	root->name = xstrdup("root");
	for (size_t i = 0; i < profile->stack_count; i++) {
		const struct profile_stack *s = &profile->stacks[i];
		uint64_t value = output_stack_value(s, kind);
		struct d3_node *node;

		if (!value)
			continue;
		node = child(root, thread_node_name(s, options), NULL);
		root->value += value;
		node->value += value;
		for (uint32_t d = s->depth; d-- > 0;) {
			const struct profile_location *loc = &profile->locations[s->locations[d]];

			for (uint32_t f = loc->frame_count; f-- > 0;) {
				node = child(node, frame_display_name(profile, loc, f, options), libtype(loc, f));
				node->value += value;
			}
		}
	}
	json_writer_init(&w, out);
	write_node(&w, root, output_kind_unit(kind));
	json_end_line(&w);
	ret = json_writer_release(&w);
	free_node(root);
	return ret ? error("cannot write the d3 output") : 0;
}

const struct output_format output_d3 = {
	.name = "d3",
	.description = "d3-flame-graph JSON tree {name, value, children} with libtype kernel/jit/inlined",
	.binary = false,
	.one_kind = true,
	.write = d3_write,
};
