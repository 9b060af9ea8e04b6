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
 * Everything here runs in a signal handler: only async-signal-safe calls (open, read, write, unlink, _exit),
 * no stdio, no malloc.
 */
#include "file_cut_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
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

/*
 * Whether the line of /proc/self/maps at [line, end) ("START-END PERMS OFFSET DEV INODE   PATH") maps address
 * from a file; then *path and *path_len are its path.
 */
static bool line_maps(const char *line, const char *end, uintptr_t address, const char **path, size_t *path_len)
{
	const char *p = line;
	uintptr_t start, stop;
	int field;

	start = parse_hex(&p, end);
	if (p >= end || *p != '-')
		return false;
	p++;
	stop = parse_hex(&p, end);
	if (address < start || address >= stop)
		return false;
	/* past PERMS, OFFSET, DEV and INODE: the path is what follows the spaces after the fifth field */
	for (field = 1; field < 5 && p < end; field++) {
		while (p < end && *p == ' ')
			p++;
		while (p < end && *p != ' ')
			p++;
	}
	while (p < end && *p == ' ')
		p++;
	if (p >= end || *p != '/')
		return false;
	*path = p;
	*path_len = (size_t)(end - p);
	return true;
}

/* Copies the path of the file mapped at address into out (NUL-terminated, cut to out_size); false if none. */
static bool mapped_file_at(uintptr_t address, char *out, size_t out_size)
{
	char buf[MAPS_LINE_MAX * 2];
	size_t have = 0;
	bool found = false;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);
		size_t start = 0;

		if (n < 0)
			break;
		have += (size_t)n;
		for (;;) {
			const char *nl = memchr(buf + start, '\n', have - start), *path;
			size_t path_len;

			if (!nl && (n > 0 || start == have))
				break;
			if (!nl) /* the last line, without a newline */
				nl = buf + have;
			if (line_maps(buf + start, nl, address, &path, &path_len)) {
				if (path_len >= out_size)
					path_len = out_size - 1;
				memcpy(out, path, path_len);
				out[path_len] = '\0';
				found = true;
				break;
			}
			start = (size_t)(nl - buf) + (nl < buf + have);
		}
		if (found || n == 0)
			break;
		/* the unfinished line to the front; a line longer than the buffer is dropped */
		if (start == 0 && have == sizeof(buf))
			start = have;
		memmove(buf, buf + start, have - start);
		have -= start;
	}
	close(fd);
	return found;
}

static void write_str(const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(STDERR_FILENO, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static pid_t installed_by; /* the process whose outputs are pending: not a child forked before its exec */

static void on_bus_error(int sig, siginfo_t *info, void *context)
{
	static int reported;
	char path[MAPS_LINE_MAX];
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	(void)context;
	if (info->si_code == BUS_ADRERR) {
		/* Threads reading the same file fault together: one line, and the others wait for its _exit. */
		if (__atomic_exchange_n(&reported, 1, __ATOMIC_SEQ_CST))
			for (;;)
				pause();
		write_str("stackrec: error: ");
		if (mapped_file_at((uintptr_t)info->si_addr, path, sizeof(path))) {
			write_str("'");
			write_str(path);
			write_str("' was cut short by another program while it was read\n");
		} else {
			write_str("a file was cut short by another program while it was read\n");
		}
		if (getpid() == installed_by)
			outputs_discard_pending();
		_exit(1);
	}
	/* Not a file cut short: the default action, as without this handler. A fault happens again on return;
	 * a SIGBUS another process sent is raised again. */
	sigaction(sig, &dfl, NULL);
	if (info->si_code <= 0)
		raise(sig);
}

void file_cut_guard_install(void)
{
	struct sigaction sa = { .sa_sigaction = on_bus_error, .sa_flags = SA_SIGINFO };

	installed_by = getpid();
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}
