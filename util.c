/* util.c — messages, allocation and the small helpers shared by every part of stackrec; see util.h. */
#include "util.h"

#include <dirent.h>
#include <linux/magic.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

bool verbose;
unsigned long problems_reported;

/* Escaped as info prints names (terminal_text): messages name paths and names from recordings and binaries,
 * and one with an escape sequence would retitle or rewrite the terminal the message goes to. */
static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char line[4096], *shown;

	vsnprintf(line, sizeof(line), fmt, ap);
	shown = terminal_text(line);
	fprintf(stderr, "stackrec: %s%s\n", prefix, shown);
	free(shown);
}

int error(const char *fmt, ...)
{
	va_list ap;

	problems_reported++;
	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	problems_reported++;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void debug(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

static void *check_alloc(void *p, size_t size)
{
	if (!p && size) {
		fprintf(stderr, "stackrec: error: out of memory allocating %zu bytes\n", size);
		exit(1);
	}
	return p;
}

void *xmalloc(size_t size)
{
	return check_alloc(malloc(size ? size : 1), size);
}

void *xcalloc(size_t count, size_t size)
{
	return check_alloc(calloc(count ? count : 1, size ? size : 1), count * size);
}

void *xrealloc(void *ptr, size_t size)
{
	return check_alloc(realloc(ptr, size ? size : 1), size);
}

char *xstrdup(const char *s)
{
	return check_alloc(strdup(s), strlen(s) + 1);
}

char *xstrndup(const char *s, size_t n)
{
	return check_alloc(strndup(s, n), n + 1);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return check_alloc(NULL, 1);
	return s;
}

/* A chunk's first 8 bytes link to the chunk before; blocks follow. */
struct arena_chunk {
	struct arena_chunk *previous;
};

#define ARENA_CHUNK_SIZE (64u << 10)

/*
 * Maps in the whole pages of a new chunk, all in one call, where the kernel can (Linux 5.14): its blocks are cut
 * one after another until it is full, so every page of it is written soon, and a page fault each (16 a chunk)
 * cost more than the writing. A warm conversion of 50,000 node samples took 3,000 faults, 1,000 of them in
 * chunks, and a fifth of its time in the kernel; the call takes them at once. Nothing is lost if it cannot.
 */
static void map_in(void *block, size_t size)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), from = ((uintptr_t)block + page - 1) & ~(page - 1),
		  to = ((uintptr_t)block + size) & ~(page - 1);

#ifdef MADV_POPULATE_WRITE
	if (to > from)
		madvise((void *)from, to - from, MADV_POPULATE_WRITE);
#else
	(void)from;
	(void)to;
#endif
}

void *arena_alloc_slow(struct arena *a, size_t size)
{
	size_t header = (sizeof(struct arena_chunk) + 7) & ~(size_t)7;
	size_t chunk_size = header + size > ARENA_CHUNK_SIZE ? header + size : ARENA_CHUNK_SIZE;
	struct arena_chunk *chunk;

	if (a->chunk && size > ARENA_CHUNK_SIZE / 4) {
		/* A large block gets a chunk of its own behind the current one, whose room stays for the next blocks:
		 * a dwarf sample of 8 KiB now and then would otherwise leave most of a chunk unused each time. Its
		 * chunk is exactly its size: the memos' budgets count a block's bytes, and a 17 KiB stack copy in a
		 * 64 KiB chunk would hold almost four times what they count. */
		chunk = xmalloc(header + size);
		map_in(chunk, header + size);
		chunk->previous = a->chunk->previous;
		a->chunk->previous = chunk;
		return (char *)chunk + header;
	}
	chunk = xmalloc(chunk_size);
	map_in(chunk, chunk_size);
	chunk->previous = a->chunk;
	a->chunk = chunk;
	a->size = chunk_size;
	a->used = header + size;
	return (char *)chunk + header;
}

void arena_release(struct arena *a)
{
	for (struct arena_chunk *chunk = a->chunk, *previous; chunk; chunk = previous) {
		previous = chunk->previous;
		free(chunk);
	}
	memset(a, 0, sizeof(*a));
}

void grow_array(void **array, size_t *capacity, size_t needed, size_t elem_size)
{
	size_t cap = *capacity;

	if (needed <= cap)
		return;
	cap = cap ? cap : 16;
	while (cap < needed)
		cap *= 2;
	*array = xrealloc(*array, cap * elem_size);
	*capacity = cap;
}

static size_t pointer_slot(const struct pointer_table *t, const void *key)
{
	size_t mask = t->capacity - 1, i;

	for (i = address_hash((uintptr_t)key) & mask; t->keys[i] && t->keys[i] != key; i = (i + 1) & mask)
		;
	return i;
}

size_t pointer_table_insert(struct pointer_table *t, const void *key, bool *added)
{
	size_t i;

	*added = false;
	if (2 * (t->count + 1) > t->capacity) {
		struct pointer_table old = *t;

		t->capacity = old.capacity ? 2 * old.capacity : 256;
		t->keys = xcalloc(t->capacity, sizeof(*t->keys));
		t->numbers = xcalloc(t->capacity, sizeof(*t->numbers));
		for (size_t j = 0; j < old.capacity; j++) {
			if (!old.keys[j])
				continue;
			i = pointer_slot(t, old.keys[j]);
			t->keys[i] = old.keys[j];
			t->numbers[i] = old.numbers[j];
		}
		free(old.keys);
		free(old.numbers);
	}
	i = pointer_slot(t, key);
	if (!t->keys[i]) {
		t->keys[i] = key;
		t->numbers[i] = (uint32_t)t->count++;
		*added = true;
	}
	return t->numbers[i];
}

void pointer_table_release(struct pointer_table *t)
{
	free(t->keys);
	free(t->numbers);
	memset(t, 0, sizeof(*t));
}

size_t utf8_sequence_length(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0; /* overlong */
	else if (c == 0xed)
		hi = 0x9f; /* UTF-16 surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

char *utf8_replace_invalid(const char *s, const char *replacement)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t n = strlen(s), at = 0, len, r = strlen(replacement);
	char *out, *o;

	while (at < n && (len = utf8_sequence_length(c + at, n - at)))
		at += len;
	if (at == n)
		return NULL;
	o = out = xmalloc(n * (r > 1 ? r : 1) + 1);
	for (at = 0; at < n; at += len ? len : 1) {
		len = utf8_sequence_length(c + at, n - at);
		memcpy(o, len ? s + at : replacement, len ? len : r);
		o += len ? len : r;
	}
	*o = '\0';
	return out;
}

void terminal_text_into(char *out, const char *s)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *c = (const unsigned char *)s;
	size_t n = strlen(s), len;
	char *o = out;

	while (*c) {
		len = utf8_sequence_length(c, n - (size_t)(c - (const unsigned char *)s));
		/* C0 controls and DEL are one byte; C1 controls (U+0080-U+009F) are 0xc2 0x80-0x9f */
		if (len == 1 && *c >= 0x20 && *c != 0x7f && *c != '\\') {
			*o++ = (char)*c++;
		} else if (len > 1 && !(c[0] == 0xc2 && c[1] < 0xa0)) {
			memcpy(o, c, len);
			o += len;
			c += len;
		} else if (*c == '\\') {
			memcpy(o, "\\\\", 2);
			o += 2;
			c++;
		} else { /* \xNN by hand: a signal handler calls this (file_cut_guard.c) */
			*o++ = '\\';
			*o++ = 'x';
			*o++ = digits[*c >> 4];
			*o++ = digits[*c++ & 15];
		}
	}
	*o = '\0';
}

char *terminal_text(const char *s)
{
	char *out = xmalloc(4 * strlen(s) + 1); /* each byte at most \xNN */

	terminal_text_into(out, s);
	return out;
}

void hex_encode(char *out, const unsigned char *bytes, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * n] = '\0';
}

bool hex_lowercase(const char *s)
{
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

bool sudo_invoker(uid_t *uid, gid_t *gid)
{
	const char *uid_s = getenv("SUDO_UID"), *gid_s = getenv("SUDO_GID");
	char *end;
	unsigned long v;

	if (geteuid() != 0 || !uid_s || !*uid_s)
		return false;
	errno = 0;
	v = strtoul(uid_s, &end, 10);
	if (errno || *end || v >= (uid_t)-1) {
		warning("ignoring SUDO_UID '%s': not a user id", uid_s);
		return false;
	}
	*uid = (uid_t)v;
	*gid = (gid_t)-1;
	if (gid_s && *gid_s && (errno = 0, v = strtoul(gid_s, &end, 10), !errno && !*end) && v < (gid_t)-1)
		*gid = (gid_t)v;
	return true;
}

/* Under sudo, a file root creates goes to the user who ran sudo; otherwise it stays ours. */
static void give_to_sudo_user(int fd, const char *path)
{
	uid_t uid;
	gid_t gid;

	if (sudo_invoker(&uid, &gid) && fchown(fd, uid, gid) < 0)
		warning("cannot give '%s' to uid %lu: %s", path, (unsigned long)uid, strerror(errno));
}

/*
 * Whether st belongs to root, to us, or under sudo to the invoking user, who gets our outputs anyway and could
 * name any path with -o: the owners whose links an output is written through (~/work -> /data/work) and whose
 * files it is written into in place.
 */
static bool owner_trusted(const struct stat *st)
{
	uid_t uid;
	gid_t gid;

	return st->st_uid == 0 || st->st_uid == geteuid() || (sudo_invoker(&uid, &gid) && st->st_uid == uid);
}

/*
 * Whether what is written in place (a FIFO, socket or device; what a link of ours leads to) may be: when its
 * owner is trusted. Another user's FIFO at OUT (in /tmp, say) would hand that user everything written: a
 * recording's stack bytes, another user's binaries.
 */
static bool written_in_place_ok(const char *path, const struct stat *st)
{
	if (owner_trusted(st))
		return true;
	error("refusing to write to '%s': %s owned by uid %u", path,
	      S_ISFIFO(st->st_mode) ? "a FIFO"
	      : S_ISREG(st->st_mode) ? "a file" : "not a regular file",
	      (unsigned)st->st_uid);
	return false;
}

#define LINK_CHAIN_MAX 40 /* the kernel's own limit on links followed in one lookup */

/* Where an output's path leads: the directory that holds its last name, and how that name was reached. */
struct output_place {
	int dir;		   /* O_PATH */
	char name[NAME_MAX + 1];   /* the last name, to be opened in dir without following */
	bool through_link;	   /* the path's own last name was a link: what it leads to is written in place */
	bool proc_link;		   /* the name is a link in /proc (/dev/stdout's /proc/self/fd/1), which names an
				    * open file, not a path: only the kernel's lookup can open it */
};

/*
 * Walks path name by name from the current directory, following the links it meets, in a directory on the way
 * or at the end, only when their owner is trusted (owner_trusted): another user's link is theirs to aim
 * anywhere (shared/dir/out, where nobody made shared/dir a link to /etc; a link of ours to their link).
 * Nothing is looked up by path again afterwards: the directory found is held. Returns 0 with *place filled,
 * or -1 after saying why.
 */
static int resolve_output_place(const char *path, struct output_place *place)
{
	char rest[2 * PATH_MAX], link[PATH_MAX]; /* rest: a link's text before what follows it, each up to PATH_MAX */
	char *name = place->name;
	/* "." only for a relative path: an absolute one needs no search permission in the current directory */
	int dir = open(*path == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC), hops = 0;

	place->through_link = place->proc_link = false;
	if (dir < 0)
		goto fail;
	if (!*path || strlen(path) >= sizeof(rest)) {
		errno = *path ? ENAMETOOLONG : ENOENT; /* as open("") */
		goto fail;
	}
	strcpy(rest, path);
	for (;;) {
		const char *p = rest;
		size_t len, left;
		struct statfs fs;
		struct stat st;
		bool last, trailing_slash;
		ssize_t n;
		int next;

		if (*p == '/') {
			close(dir);
			if ((dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
				goto fail;
			while (*p == '/')
				p++;
		}
		len = strcspn(p, "/");
		if (len > NAME_MAX) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		memcpy(name, p, len);
		strcpy(name + len, len ? "" : "."); /* "" is the directory itself: path "/" or "dir/" */
		p += len;
		trailing_slash = *p == '/';
		while (*p == '/')
			p++;
		last = !*p;
		if (last && len && trailing_slash) {
			/* name/: a directory, as the kernel's lookup would have it: not a file to write */
			errno = fstatat(dir, name, &st, 0) == 0 && !S_ISDIR(st.st_mode) ? ENOTDIR : EISDIR;
			goto fail;
		}
		memmove(rest, p, strlen(p) + 1); /* rest: what follows name */
		/* A directory on the way is opened as one, which mounts an automount point there as the kernel's
		 * lookup would (an O_PATH open of it alone does not); a link is ENOTDIR then, and opened itself. */
		next = last ? -1 : openat(dir, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
		if (next < 0)
			next = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			if (last && errno == ENOENT)
				break; /* to be created */
			goto fail;
		}
		if (fstat(next, &st) < 0) {
			close(next);
			goto fail;
		}
		if (!S_ISLNK(st.st_mode)) {
			if (last) {
				close(next);
				break;
			}
			close(dir);
			dir = next; /* not a directory: the next openat says so */
			continue;
		}
		if (!owner_trusted(&st)) {
			if (last && !hops)
				error("refusing to write through '%s': a symbolic link owned by uid %u (give its target "
				      "instead)", path, (unsigned)st.st_uid);
			else
				error("refusing to write through '%s': it leads through '%s', a symbolic link owned by "
				      "uid %u", path, name, (unsigned)st.st_uid);
			close(next);
			close(dir);
			return -1;
		}
		if (last)
			place->through_link = true;
		if (fstatfs(next, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC) {
			close(next);
			if (last) {
				place->proc_link = true;
				break;
			}
			/* /proc/PID/root, cwd, fd/N lead to what the process sees, not to what their text names here
			 * (another mount namespace): the kernel follows them. */
			next = openat(dir, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (next < 0)
				goto fail;
			close(dir);
			dir = next;
			continue;
		}
		n = ++hops > LINK_CHAIN_MAX ? (errno = ELOOP, -1) : readlinkat(next, "", link, sizeof(link) - 1);
		close(next);
		if (n < 0)
			goto fail;
		/* The link's text in its place, relative to the directory it is in (dir still). */
		left = strlen(rest);
		if ((size_t)n + 1 + left >= sizeof(rest)) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		if (left) {
			memmove(rest + n + 1, rest, left + 1);
			rest[n] = '/';
		} else {
			rest[n] = '\0';
		}
		memcpy(rest, link, (size_t)n);
	}
	place->dir = dir;
	return 0;
fail:
	error("cannot create '%s': %s", path, strerror(errno));
	if (dir >= 0)
		close(dir);
	return -1;
}

/*
 * Opens the last name of place for writing where it is: what a link of ours leads to (created if missing,
 * as the kernel's open would), a device or FIFO (/dev/null: a rename would replace it). Another user's file or
 * FIFO is refused (written_in_place_ok), checked before opening too: opening a FIFO waits for a reader.
 */
static int open_in_place(const char *path, const struct output_place *place)
{
	int nofollow = place->proc_link ? 0 : O_NOFOLLOW, fd;
	struct stat st, opened;
	bool exists = fstatat(place->dir, place->name, &st, nofollow ? AT_SYMLINK_NOFOLLOW : 0) == 0;

	if (exists && !written_in_place_ok(path, &st))
		return -1;
	/* Without a link on the way, only what was checked is opened: no O_CREAT or O_TRUNC (a device or FIFO
	 * has nothing to truncate), and a file swapped in since is refused below, untouched. */
	fd = openat(place->dir, place->name,
		    O_WRONLY | O_CLOEXEC | nofollow | (place->through_link ? O_CREAT | O_TRUNC : 0), 0600);
	if (fd < 0)
		return error("cannot create '%s': %s", path, strerror(errno));
	if (fstat(fd, &opened) < 0 || !written_in_place_ok(path, &opened) ||
	    (!place->through_link && (opened.st_dev != st.st_dev || opened.st_ino != st.st_ino))) {
		close(fd);
		return place->through_link ? -1 : error("cannot create '%s': it changed while being opened", path);
	}
	if (!exists)
		give_to_sudo_user(fd, path);
	return fd;
}

bool fd_write_all(int fd, const void *p, size_t n)
{
	const char *bytes = p;

	while (n) {
		ssize_t done = write(fd, bytes, n);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0)
			return false;
		bytes += done;
		n -= (size_t)done;
	}
	return true;
}

bool fd_pwrite_all(int fd, const void *p, size_t n, uint64_t offset)
{
	const char *bytes = p;

	while (n) {
		ssize_t done = pwrite(fd, bytes, n, (off_t)offset);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0) {
			if (!done)
				errno = ENOSPC; /* no error, nothing written: the device is full */
			return false;
		}
		bytes += done;
		n -= (size_t)done;
		offset += (uint64_t)done;
	}
	return true;
}

/*
 * What is not in place yet, for outputs_discard_pending: the temporary files output_create and the caches
 * made (a few at a time: convert writes one output, and each thread of a parallel convert a cache entry, each
 * keeper of a decompressed debug copy one), and one temporary directory (convert --archive's).
 *
 * Threads add and remove names under pending_lock, so that none frees a name another is comparing. The
 * signal handler takes no lock: each slot is set and cleared atomically, so that it sees a whole pointer or
 * NULL, and a name is freed only if the handler had not started (discarding) when its slot was cleared.
 */
#define PENDING_OUTPUTS 64
static char *pending_outputs[PENDING_OUTPUTS];
static char *pending_dir;
/* remove_tree's levels: convert --archive's directory has three (DIR/.build-id/xx/FILE); a bound, since the
 * handler's stack holds a buffer per level */
#define REMOVE_TREE_DEPTH 8
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static int discarding; /* outputs_discard_pending started: names taken out of a slot are no longer freed */
static int creating;   /* threads between pending_create_begin and pending_create_end */
static pid_t pending_owner; /* the process that listed them: not a child forked since, before its exec */

void pending_create_begin(sigset_t *saved)
{
	static const int signals[] = { STOP_SIGNALS };
	sigset_t stop;

	sigemptyset(&stop);
	for (size_t i = 0; i < ARRAY_SIZE(signals); i++)
		sigaddset(&stop, signals[i]);
	pthread_sigmask(SIG_BLOCK, &stop, saved);
	__atomic_add_fetch(&creating, 1, __ATOMIC_SEQ_CST);
}

void pending_create_end(const sigset_t *saved)
{
	__atomic_sub_fetch(&creating, 1, __ATOMIC_SEQ_CST);
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

static void slot_set(char **slot, const char *name, size_t slots)
{
	char *copy = xstrdup(name);

	__atomic_store_n(&pending_owner, getpid(), __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&pending_lock);
	for (size_t i = 0; i < slots; i++)
		if (!__atomic_load_n(&slot[i], __ATOMIC_SEQ_CST)) {
			__atomic_store_n(&slot[i], copy, __ATOMIC_SEQ_CST);
			copy = NULL;
			break;
		}
	pthread_mutex_unlock(&pending_lock);
	free(copy); /* more at once than there are slots: that one is not removed by outputs_discard_pending */
}

static void slot_clear(char **slot, const char *name, size_t slots)
{
	pthread_mutex_lock(&pending_lock);
	for (size_t i = 0; i < slots; i++) {
		char *held = __atomic_load_n(&slot[i], __ATOMIC_SEQ_CST);

		if (held && !strcmp(held, name)) {
			__atomic_store_n(&slot[i], NULL, __ATOMIC_SEQ_CST);
			/* the handler may have loaded it just before: freed only if it did not start (else a leak,
			 * at exit) */
			if (!__atomic_load_n(&discarding, __ATOMIC_SEQ_CST))
				free(held);
			break;
		}
	}
	pthread_mutex_unlock(&pending_lock);
}

void pending_output_add(const char *tmp)
{
	slot_set(pending_outputs, tmp, PENDING_OUTPUTS);
}

void pending_output_remove(const char *tmp)
{
	slot_clear(pending_outputs, tmp, PENDING_OUTPUTS);
}

/*
 * Removes name (under parent) and, when it is a directory, what is in it, depth levels down at most; symbolic
 * links are removed, never followed. Async-signal-safe: getdents64 into a buffer on the stack, no opendir.
 */
static void remove_tree_at(int parent, const char *name, int depth)
{
	char entries[2048];
	ssize_t n;
	int fd;

	if (unlinkat(parent, name, 0) == 0 || errno != EISDIR || depth <= 0)
		return;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	/* a second pass from the start, should removals have moved entries behind the directory's position */
	for (int pass = 0; pass < 2; pass++) {
		lseek(fd, 0, SEEK_SET);
		while ((n = getdents64(fd, entries, sizeof(entries))) > 0)
			for (ssize_t at = 0; at < n;) {
				const struct dirent64 *e = (const struct dirent64 *)(entries + at);

				at += e->d_reclen;
				if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
					remove_tree_at(fd, e->d_name, depth - 1);
			}
		if (unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno != ENOTEMPTY)
			break;
	}
	close(fd);
}

void remove_tree(const char *path)
{
	remove_tree_at(AT_FDCWD, path, REMOVE_TREE_DEPTH);
}

void pending_dir_set(const char *dir)
{
	slot_set(&pending_dir, dir, 1);
}

void pending_dir_clear(const char *dir)
{
	slot_clear(&pending_dir, dir, 1);
}

void outputs_discard_pending(void)
{
	struct timespec ms = { .tv_nsec = 1000000 };
	const char *dir;

	if (getpid() != __atomic_load_n(&pending_owner, __ATOMIC_SEQ_CST))
		return; /* a child's copy of the list names its parent's files: nothing of its own (or nothing listed) */
	/* Another thread making a temporary has it registered in microseconds: wait for that, 100 ms at most
	 * (a thread stopped inside, or this very one interrupted there by a fault, must not keep us forever). */
	for (int i = 0; i < 100 && __atomic_load_n(&creating, __ATOMIC_SEQ_CST) > 0; i++)
		nanosleep(&ms, NULL);
	__atomic_store_n(&discarding, 1, __ATOMIC_SEQ_CST);
	for (size_t i = 0; i < PENDING_OUTPUTS; i++) {
		const char *name = __atomic_load_n(&pending_outputs[i], __ATOMIC_SEQ_CST);

		if (name)
			unlink(name);
	}
	dir = __atomic_load_n(&pending_dir, __ATOMIC_SEQ_CST);
	if (dir)
		remove_tree(dir);
}

/* The temporary file's name in its directory. */
static const char *temporary_name(const struct output_file *o)
{
	const char *slash = strrchr(o->tmp, '/');

	return slash ? slash + 1 : o->tmp;
}

/*
 * Creates .NAME.XXXXXX in dir, X random, as mkostemp does (O_CREAT | O_EXCL, 0600), but in a directory held
 * open rather than at a path; its name into tmp_name. The name is cut so that it fits in NAME_MAX whatever
 * NAME's length. -1 with errno when that failed.
 */
static int create_temporary_at(int dir, const char *name, char tmp_name[static NAME_MAX + 1])
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	int prefix = snprintf(tmp_name, NAME_MAX + 1, ".%.200s.", name);

	for (int attempt = 0; attempt < 100; attempt++) {
		unsigned char random[6];
		int fd;

		if (getrandom(random, sizeof(random), 0) != (ssize_t)sizeof(random))
			return -1;
		for (size_t i = 0; i < sizeof(random); i++)
			tmp_name[prefix + i] = letters[random[i] % (sizeof(letters) - 1)];
		tmp_name[prefix + sizeof(random)] = '\0';
		fd = openat(dir, tmp_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1; /* EEXIST */
}

static void output_release(struct output_file *o)
{
	free(o->tmp);
	free(o->name);
	if (o->dir >= 0)
		close(o->dir);
	o->tmp = o->name = NULL;
	o->dir = -1;
}

void output_discard(struct output_file *o)
{
	if (!o->tmp)
		return;
	unlinkat(o->dir, temporary_name(o), 0);
	pending_output_remove(o->tmp); /* then forgotten: a stop signal meanwhile finds it listed, and removes it */
	output_release(o);
}

int output_create(const char *path, struct output_file *o)
{
	const char *slash = strrchr(path, '/');
	char tmp_name[NAME_MAX + 1];
	struct output_place place;
	struct stat st;
	sigset_t saved;
	int fd, err;

	*o = (struct output_file){ .dir = -1 };
	if (resolve_output_place(path, &place) < 0)
		return -1;
	if (place.through_link || place.proc_link ||
	    (fstatat(place.dir, place.name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))) {
		fd = open_in_place(path, &place);
		close(place.dir);
		return fd;
	}
	/* A temporary file in the directory the walk holds. Its path, as OUT's directory was given, is only for
	 * removing it on a stop signal (outputs_discard_pending), which needs no descriptor. */
	o->name = xstrdup(place.name);
	o->dir = place.dir;
	pending_create_begin(&saved);
	fd = create_temporary_at(o->dir, o->name, tmp_name);
	err = errno;
	if (fd >= 0) {
		o->tmp = xasprintf("%.*s%s", slash ? (int)(slash + 1 - path) : 0, path, tmp_name);
		pending_output_add(o->tmp);
	}
	pending_create_end(&saved);
	if (fd < 0) {
		error("cannot create '%s': %s", path, strerror(err));
		output_release(o);
		return -1;
	}
	give_to_sudo_user(fd, path);
	return fd;
}

/*
 * OUT could not become OUT.old (err: a directory there, or another user's file in a sticky directory): it is
 * kept as .OUT.old.XXXXXX instead, with a warning. Failing there made record end the command it had started and
 * throw its recording away.
 */
static int keep_old_elsewhere(struct output_file *o, const char *path, const char *shown, int err)
{
	const char *slash = strrchr(path, '/');
	char *old_name = xasprintf("%s.old", o->name), tmp_name[NAME_MAX + 1];
	int fd = create_temporary_at(o->dir, old_name, tmp_name);

	free(old_name);
	if (fd >= 0)
		close(fd);
	if (fd < 0 || renameat(o->dir, o->name, o->dir, tmp_name) < 0) {
		if (fd >= 0)
			unlinkat(o->dir, tmp_name, 0);
		return error("cannot keep '%s' as '%s': %s", path, shown, strerror(err));
	}
	warning("cannot keep '%s' as '%s' (%s): kept it as '%.*s%s'", path, shown, strerror(err),
		slash ? (int)(slash + 1 - path) : 0, path, tmp_name);
	return 0;
}

int output_replace(struct output_file *o, const char *path, bool keep_old)
{
	struct stat st;

	if (!o->tmp)
		return 0;
	if (keep_old && fstatat(o->dir, o->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
		char *old = xasprintf("%s.old", o->name);
		char *shown = xasprintf("%s.old", path);
		int ret = 0;

		/* rename, not copy: a symbolic link planted at PATH.old is replaced, never followed. */
		if (renameat(o->dir, o->name, o->dir, old) < 0)
			ret = keep_old_elsewhere(o, path, shown, errno);
		free(old);
		free(shown);
		if (ret < 0)
			return ret;
	}
	if (renameat(o->dir, temporary_name(o), o->dir, o->name) < 0)
		return error("cannot replace '%s': %s", path, strerror(errno));
	pending_output_remove(o->tmp);
	output_release(o);
	return 0;
}

const char *errno_name(int err)
{
	if (err == INT_MIN)
		return NULL;
	return strerrorname_np(err < 0 ? -err : err);
}

void sort_array(void *base, size_t count, size_t size, int (*compare)(const void *, const void *))
{
	if (count > 1)
		qsort(base, count, size, compare);
}

int thread_start_without_signals(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	sigdelset(&all, SIGBUS);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}
