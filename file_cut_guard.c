/*
 * file_cut_guard.c — one clear line, not a bus error, when a file stackrec reads through a mapping is cut short
 * by another program while it is read.
 *
 * The recording, the binaries and debug files libdw reads, and the cache entries are mapped, not read: that is
 * what makes conversion fast. But a mapping does not keep the file's bytes: when another program truncates the
 * file (`cp new old` over a binary, `: >` on a recording, a rebuild writing in place), the kernel removes the
 * pages past the new end from every mapping, and the next read of one raises SIGBUS (BUS_ADRERR), which kills
 * the process without a word. A long `stackrec symbolize` serving a pipe while the binary is rebuilt met this.
 * Nothing read so far can be trusted whole then (a frame, a symbol table half gone), and libdw cannot be
 * resumed from a fault: so the handler names the file (the mapping of the faulting address, from
 * /proc/self/maps), removes the outputs not yet in place (outputs_discard_pending), and exits 1, as for a file
 * that cannot be read. Any other SIGBUS keeps its default action.
 *
 * A fault at an offset the file still has is not a cut: an I/O error of the disk, or a file cut and written
 * again (`cp` truncates, then writes), which the handler cannot tell apart; its line says so.
 *
 * Everything here runs in a signal handler: only async-signal-safe calls (open, read, stat, write, unlink,
 * _exit), no stdio, no malloc.
 */
#include "file_cut_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* Room for a line of /proc/self/maps: its fields, then a path of up to PATH_MAX bytes (escaped as the kernel
 * prints it: a newline in a name is \012). */
#define MAPS_LINE_MAX (4096 + 256)

/* The hexadecimal number at *p (advanced past it). */
static uintptr_t parse_hex(const char **p, const char *end)
{
	uintptr_t v = 0;

	for (; *p < end; (*p)++) {
		char c = **p;
		unsigned digit;

		if (c >= '0' && c <= '9')
			digit = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			digit = (unsigned)(c - 'a' + 10);
		else
			break;
		v = v << 4 | digit;
	}
	return v;
}

/* A file mapping of /proc/self/maps: its path (as the kernel prints it: " (deleted)" after a removed file's, \012
 * for a newline in it), and the offset in the file of the address looked for. */
struct mapped_file {
	const char *path;
	size_t path_len;
	uint64_t offset;
};

/* The next field of a /proc/self/maps line at *p, spaces before it skipped; *p is left after it. */
static const char *next_field(const char **p, const char *end)
{
	const char *field;

	while (*p < end && **p == ' ')
		(*p)++;
	field = *p;
	while (*p < end && **p != ' ')
		(*p)++;
	return field;
}

/*
 * Whether the line of /proc/self/maps at [line, end) ("START-END PERMS OFFSET DEV INODE   PATH") maps address
 * from a file; then *m says which and where.
 */
static bool line_maps(const char *line, const char *end, uintptr_t address, struct mapped_file *m)
{
	const char *p = line;
	uintptr_t start, stop;

	start = parse_hex(&p, end);
	if (p >= end || *p != '-')
		return false;
	p++;
	stop = parse_hex(&p, end);
	if (address < start || address >= stop)
		return false;
	next_field(&p, end); /* PERMS */
	p = next_field(&p, end);
	m->offset = parse_hex(&p, end) + (address - start);
	next_field(&p, end); /* DEV */
	next_field(&p, end); /* INODE */
	while (p < end && *p == ' ')
		p++;
	if (p >= end || *p != '/')
		return false;
	m->path = p;
	m->path_len = (size_t)(end - p);
	return true;
}

/*
 * The file mapped at address: its path copied into out (NUL-terminated, cut to out_size) and the offset in it;
 * false if none. A line longer than the buffer is judged by its start, where the addresses are.
 */
static bool mapped_file_at(uintptr_t address, char *out, size_t out_size, uint64_t *offset)
{
	char buf[MAPS_LINE_MAX * 2];
	size_t have = 0;
	bool found = false, eof = false, skipping = false; /* skipping: the rest of a line longer than buf */
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	for (;;) {
		char *nl = memchr(buf, '\n', have);
		size_t len = nl ? (size_t)(nl - buf) : have, used;
		struct mapped_file m;

		if (!nl && !eof && have < sizeof(buf)) {
			ssize_t n = read(fd, buf + have, sizeof(buf) - have);

			if (n < 0)
				break;
			eof = n == 0;
			have += (size_t)n;
			continue;
		}
		if (!nl && !have)
			break;
		/* a line, the last one without its newline, or the start of one longer than buf */
		if (!skipping && line_maps(buf, buf + len, address, &m)) {
			if (m.path_len >= out_size)
				m.path_len = out_size - 1;
			memcpy(out, m.path, m.path_len);
			out[m.path_len] = '\0';
			*offset = m.offset;
			found = true;
			break;
		}
		skipping = !nl && !eof;
		used = nl ? len + 1 : len;
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	close(fd);
	return found;
}

/* n in decimal into out (room for 21 bytes) */
static const char *decimal(uint64_t n, char out[21])
{
	char *p = out + 20;

	*p = '\0';
	do
		*--p = (char)('0' + n % 10);
	while (n /= 10);
	return p;
}

/* s to stderr: fd_write_all is write() and errno alone, async-signal-safe */
static void write_str(const char *s)
{
	fd_write_all(STDERR_FILENO, s, strlen(s));
}

static void on_bus_error(int sig, siginfo_t *info, void *context)
{
	static int reported;
	char path[MAPS_LINE_MAX], shown[4 * MAPS_LINE_MAX + 1], number[21]; /* shown: path escaped, as every message */
	uint64_t offset = 0;
	struct stat st;
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	(void)context;
	if (info->si_code == BUS_ADRERR) {
		/* Threads reading the same file fault together: one line, and the others wait for its _exit. */
		if (__atomic_exchange_n(&reported, 1, __ATOMIC_SEQ_CST))
			for (;;)
				pause();
		outputs_discard_pending(); /* first: a write to a closed or full stderr must not keep them */
		write_str("stackrec: error: ");
		if (!mapped_file_at((uintptr_t)info->si_addr, path, sizeof(path), &offset)) {
			write_str("a file was cut short by another program while it was read\n");
			_exit(1);
		}
		terminal_text_into(shown, path);
		write_str("'");
		write_str(shown);
		if (stat(path, &st) == 0 && (uint64_t)st.st_size > offset) {
			/* There now, so not (only) cut short: an I/O error of the disk, or cut and written again (cp). */
			write_str("' could not be read at offset ");
			write_str(decimal(offset, number));
			write_str(": an I/O error, or another program cut it short and wrote it again meanwhile\n");
		} else {
			write_str("' was cut short by another program while it was read\n");
		}
		_exit(1);
	}
	/* Not a file cut short: the default action, as without this handler. A fault happens again on return;
	 * a SIGBUS another process sent is raised again. */
	sigaction(sig, &dfl, NULL);
	if (info->si_code <= 0 || info->si_code == BUS_MCEERR_AO) /* not a fault that happens again */
		raise(sig);
}

void file_cut_guard_install(void)
{
	struct sigaction sa = { .sa_sigaction = on_bus_error, .sa_flags = SA_SIGINFO };

	sigset_t bus;

	sigfillset(&sa.sa_mask); /* no SIGPIPE, EINTR or other handler while it runs */
	sigaction(SIGBUS, &sa, NULL);
	sigemptyset(&bus);
	sigaddset(&bus, SIGBUS);
	sigprocmask(SIG_UNBLOCK, &bus, NULL); /* blocked by the parent, a fault would kill us without the line */
}
