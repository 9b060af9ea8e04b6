/*
 * kallsyms.c — the kernel symbols a recording needs to name its kernel frames offline.
 *
 * /proc/kallsyms is read at start (that is the snapshot), and its module and BPF program symbols ("[bpf]")
 * again at stop: a program or module loaded during the recording (another tool's uprobe program, say) sits
 * past the snapshot's last symbol of its kind, whose name it took. At stop only the symbols that contain a
 * sampled kernel address are written, every name of that address (kallsyms gives a syscall three:
 * __do_sys_getpid, __x64_sys_getpid, __ia32_sys_getpid; convert picks one by its rules, as perf names it),
 * each followed by the next symbol so that a reader knows where the function ends: a full
 * snapshot is over 5 MB of text (about 1 MB compressed), the symbols a recording uses are a few KB.
 * A next symbol that contains no sampled address is written without its name (1.4: "ADDRESS TYPE"): only its
 * address says anything, and its name was half of what the block compressed to.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../formats/recording.h"
#include "../util.h"
#include "recorder.h"

struct ksym {
	uint64_t addr;
	char *line; /* the /proc/kallsyms line, without its newline */
	bool used; /* contains a sampled address */
	bool end;  /* follows one that does: where it ends */
};

static struct ksym *syms;
static size_t sym_count, sym_cap;

static int compare_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->line, y->line);
}

/* Whether the first count of syms (sorted) have that line at addr. */
static bool have(uint64_t addr, const char *line, size_t count)
{
	struct ksym key = { .addr = addr, .line = (char *)line };

	return count && bsearch(&key, syms, count, sizeof(*syms), compare_ksym);
}

/*
 * Adds /proc/kallsyms' code symbols to syms, with only_modules those of modules and BPF programs that syms
 * (sorted) does not have yet; sorts syms. Returns -1 when it cannot be read, else whether any address is not 0.
 */
static int read_kallsyms(bool only_modules)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	size_t had = sym_count, cap = 0;
	char *line = NULL;
	ssize_t len;
	bool any_address = false;

	if (!f)
		return -1;
	while ((len = getline(&line, &cap, f)) > 0) {
		uint64_t addr;
		char type;

		if (sscanf(line, "%" SCNx64 " %c ", &addr, &type) != 2)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (only_modules && (!strchr(line, '[') || have(addr, line, had)))
			continue;
		any_address |= addr != 0;
		GROW(syms, sym_cap, sym_count + 1);
		syms[sym_count++] = (struct ksym){ .addr = addr, .line = xstrdup(line) };
	}
	free(line);
	fclose(f);
	sort_array(syms, sym_count, sizeof(*syms), compare_ksym);
	return any_address;
}

int kallsyms_snapshot(void)
{
	int any_address = read_kallsyms(false);

	if (any_address < 0) {
		warning("cannot read '/proc/kallsyms': %m; kernel frames will stay unnamed");
		return 0;
	}
	if (sym_count && !any_address) {
		warning("kernel symbol addresses are hidden (kernel.kptr_restrict): kernel frames will stay unnamed; "
			"run as root with kernel.kptr_restrict=0 or 1");
		return 1;
	}
	return 0;
}

/* Marks the symbols containing ip (every name of its address) as used, and the one after them as their end. */
static void mark(uint64_t ip)
{
	size_t lo = 0, hi = sym_count;

	while (lo < hi) { /* first symbol above ip */
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return;
	for (size_t i = lo; i > 0 && syms[i - 1].addr == syms[lo - 1].addr; i--)
		syms[i - 1].used = true;
	if (lo < sym_count)
		syms[lo].end = true; /* where the function ends */
}

/*
 * The symbols of a sampled kernel address: of ip, and of ip - 1, where convert looks a return address up (a
 * call that ends a function returns to the first byte of the next): that one must keep its name.
 */
static void mark_used(void *ctx, uint64_t ip)
{
	(void)ctx;
	mark(ip);
	if (ip)
		mark(ip - 1);
}

int kallsyms_write_used(struct recorder *rec)
{
	char *text = NULL;
	size_t len = 0, cap = 0;
	int ret;

	if (sym_count)
		read_kallsyms(true); /* modules and BPF programs loaded since the snapshot */
	u64_set_for_each(&rec->kernel_ips, mark_used, NULL);
	for (size_t i = 0; i < sym_count; i++) {
		size_t n;

		if (!syms[i].used && !syms[i].end)
			continue;
		n = strlen(syms[i].line);
		/* "ffffffff81000e10 T": the address and type of a kernel image symbol that only ends another (a
		 * module's keeps its name, since "[module]" follows the name and the reader tells modules apart) */
		if (!syms[i].used && !strchr(syms[i].line, '[')) {
			const char *type = strchr(syms[i].line, ' ');

			if (type && type[1] && type[2] == ' ')
				n = (size_t)(type + 2 - syms[i].line);
		}
		GROW(text, cap, len + n + 2);
		memcpy(text + len, syms[i].line, n);
		len += n;
		text[len++] = '\n';
	}
	if (!len)
		return 0;
	ret = recording_writer_add(&rec->writer, SREC_BLOCK_KALLSYMS, text, len, NULL, 0);
	free(text);
	return ret;
}

void kallsyms_release(void)
{
	for (size_t i = 0; i < sym_count; i++)
		free(syms[i].line);
	free(syms);
	syms = NULL;
	sym_count = sym_cap = 0;
}
