/*
 * module_prefetch.c — prepares modules for the symbolizer on a thread of their own (see module_prefetch.h).
 *
 * The caller's thread only appends to the queue (under the lock) and reads its own bitmap of what it asked;
 * the worker takes entries from the queue and prepares each outside the lock. An entry is allocated on its
 * own, so that growing the arrays never moves one the worker is writing.
 */
#include "module_prefetch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

struct prefetched {
	struct profile_module module; /* a copy: the profile's array may move (its strings do not) */
	struct symbolizer_module st;
	bool taken;  /* by the worker, which prepared it (set under the lock) */
	bool wanted; /* by module_prefetch_want, not only guessed (under the lock) */
	bool early;  /* taken as a guess, before any module was wanted */
	bool ready;  /* prepared: st is the taker's from then on (set under the lock) */
};

/* At most this many guessed modules are prepared: a recording's first few are its program's, but one of many
 * processes maps more than pass 1 leaves time for, each a debug file inflated and kept for nothing. */
#define GUESSES_MAX 4

struct module_prefetch {
	const struct symbolizer_options *options;
	struct module_file_callbacks callbacks;
	/* Caller's side only. */
	bool *asked;
	size_t asked_cap;
	bool started, failed;
	pthread_t thread;
	/* Shared, under lock. */
	pthread_mutex_t lock;
	pthread_cond_t wake;	 /* the worker's: something to prepare, or done */
	pthread_cond_t prepared; /* module_prefetch_take's: a module is ready */
	struct prefetched **by_index; /* by module index; NULL: not asked */
	size_t index_cap;
	uint32_t *queue; /* wanted, in the order asked */
	size_t queue_count, queue_cap, queue_next;
	uint32_t *guesses; /* guessed, in the order guessed */
	size_t guess_count, guess_cap, guesses_taken;
	bool wanting; /* a module was wanted: the samples are being read, guesses are no longer started */
	bool done;
	/* STACKREC_TEST_PREFETCH_GUESSES set, for tests: the first module wanted waits until the guesses are
	 * prepared, so that a test sees them prepared early however loaded the machine is. */
	bool test_wait_guesses;
};

/*
 * The next module for the worker (under the lock), or NULL: the next wanted one not prepared yet; while none
 * was ever wanted, the guess with the largest mapping (in a program, its libc or its own large text), whose
 * debug file takes the longest to open and read.
 */
static struct prefetched *next_entry(struct module_prefetch *mp)
{
	struct prefetched *best = NULL;

	while (mp->queue_next < mp->queue_count) {
		struct prefetched *e = mp->by_index[mp->queue[mp->queue_next++]];

		if (!e->taken)
			return e;
	}
	if (mp->wanting || mp->guesses_taken >= GUESSES_MAX)
		return NULL;
	for (size_t i = 0; i < mp->guess_count; i++) {
		struct prefetched *e = mp->by_index[mp->guesses[i]];

		if (!e->taken && (!best || e->module.end - e->module.start > best->module.end - best->module.start))
			best = e;
	}
	if (best)
		mp->guesses_taken++;
	return best;
}

static void *worker(void *arg)
{
	struct module_prefetch *mp = arg;

	pthread_mutex_lock(&mp->lock);
	for (;;) {
		struct prefetched *e = NULL;

		while (!mp->done && !(e = next_entry(mp)))
			pthread_cond_wait(&mp->wake, &mp->lock);
		/* Once the samples are done, what is left is symbolize_profile's, whose threads then open the
		 * rest while this one finishes the module it has (only the thread that takes it waits for it). */
		if (mp->done)
			break;
		e->taken = true;
		e->early = !mp->wanting;
		pthread_mutex_unlock(&mp->lock);
		symbolizer_module_prepare(&e->st, &e->module, mp->options, &mp->callbacks);
		debug("'%s': opened for symbolizing while %s%s", e->module.path,
		      e->early ? "reading the recording" : "unwinding", e->st.loaded ? ", its symbols and DWARF read" : "");
		pthread_mutex_lock(&mp->lock);
		e->ready = true;
		pthread_cond_broadcast(&mp->prepared);
	}
	pthread_mutex_unlock(&mp->lock);
	return NULL;
}

struct module_prefetch *module_prefetch_new(const struct symbolizer_options *options)
{
	struct module_prefetch *mp = xcalloc(1, sizeof(*mp));

	mp->options = options;
	mp->test_wait_guesses = getenv("STACKREC_TEST_PREFETCH_GUESSES") != NULL;
	module_file_callbacks_init(&mp->callbacks, &options->search);
	pthread_mutex_init(&mp->lock, NULL);
	pthread_cond_init(&mp->wake, NULL);
	pthread_cond_init(&mp->prepared, NULL);
	return mp;
}

/* Starts the worker at the first module asked for; false when it cannot be (then nothing is prefetched). */
static bool start(struct module_prefetch *mp)
{
	if (!mp->started && !mp->failed) {
		if (thread_start_without_signals(&mp->thread, worker, mp) != 0)
			mp->failed = true; /* symbolize_profile opens every module itself, as without prefetching */
		else
			mp->started = true;
	}
	return mp->started;
}

/* The entry of module index, made when there is none (under the lock). */
static struct prefetched *entry(struct module_prefetch *mp, uint32_t index, const struct profile_module *m)
{
	if (index >= mp->index_cap) {
		size_t old = mp->index_cap;

		GROW(mp->by_index, mp->index_cap, (size_t)index + 1);
		memset(mp->by_index + old, 0, (mp->index_cap - old) * sizeof(*mp->by_index));
	}
	if (!mp->by_index[index]) {
		mp->by_index[index] = xcalloc(1, sizeof(*mp->by_index[index]));
		mp->by_index[index]->module = *m;
	}
	return mp->by_index[index];
}

/* Only files are prepared: [vdso] gets its build ID only after the samples, the kernel is not a file. */
static bool preparable(const struct profile_module *m)
{
	return !m->is_kernel && m->path[0] == '/';
}

/* Whether as many guesses as are ever started are prepared (under the lock). */
static bool guesses_prepared(const struct module_prefetch *mp)
{
	size_t ready = 0;

	for (size_t i = 0; i < mp->guess_count; i++)
		ready += mp->by_index[mp->guesses[i]]->ready;
	return ready >= (mp->guess_count < GUESSES_MAX ? mp->guess_count : GUESSES_MAX);
}

void module_prefetch_want(struct module_prefetch *mp, uint32_t index, const struct profile_module *m)
{
	struct prefetched *e;

	if (index < mp->asked_cap && mp->asked[index])
		return;
	if (index >= mp->asked_cap) {
		size_t old = mp->asked_cap;

		GROW(mp->asked, mp->asked_cap, (size_t)index + 1);
		memset(mp->asked + old, 0, (mp->asked_cap - old) * sizeof(*mp->asked));
	}
	mp->asked[index] = true;
	if (!preparable(m) || !start(mp))
		return;
	pthread_mutex_lock(&mp->lock);
	while (mp->test_wait_guesses && !mp->wanting && !guesses_prepared(mp))
		pthread_cond_wait(&mp->prepared, &mp->lock);
	mp->wanting = true;
	e = entry(mp, index, m);
	e->wanted = true;
	if (!e->taken) { /* else prepared as a guess, or being prepared */
		GROW(mp->queue, mp->queue_cap, mp->queue_count + 1);
		mp->queue[mp->queue_count++] = index;
	}
	pthread_cond_signal(&mp->wake);
	pthread_mutex_unlock(&mp->lock);
}

void module_prefetch_guess(struct module_prefetch *mp, uint32_t index, const struct profile_module *m)
{
	if (!preparable(m) || !start(mp))
		return;
	pthread_mutex_lock(&mp->lock);
	if (!mp->wanting && (index >= mp->index_cap || !mp->by_index[index])) {
		entry(mp, index, m);
		GROW(mp->guesses, mp->guess_cap, mp->guess_count + 1);
		mp->guesses[mp->guess_count++] = index;
		pthread_cond_signal(&mp->wake);
	}
	pthread_mutex_unlock(&mp->lock);
}

static void stop(struct module_prefetch *mp)
{
	if (!mp->started)
		return;
	pthread_mutex_lock(&mp->lock);
	mp->done = true;
	pthread_cond_signal(&mp->wake);
	pthread_mutex_unlock(&mp->lock);
	pthread_join(mp->thread, NULL);
	mp->started = false;
}

void module_prefetch_finish(struct module_prefetch *mp)
{
	if (!mp->started)
		return;
	pthread_mutex_lock(&mp->lock);
	mp->done = true;
	pthread_cond_signal(&mp->wake);
	/* Guesses no sample landed in: their memory back now (one still being prepared, at module_prefetch_free). */
	for (size_t i = 0; i < mp->index_cap; i++) {
		struct prefetched *e = mp->by_index[i];

		if (e && e->ready && !e->wanted)
			symbolizer_module_close(&e->st);
	}
	pthread_mutex_unlock(&mp->lock);
}

struct symbolizer_module *module_prefetch_take(void *ctx, uint32_t index)
{
	struct module_prefetch *mp = ctx;
	struct prefetched *e;

	pthread_mutex_lock(&mp->lock);
	e = index < mp->index_cap ? mp->by_index[index] : NULL;
	if (e && !(e->taken && e->wanted))
		e = NULL; /* not prepared, nor will it be: the worker takes nothing once done */
	while (e && !e->ready)
		pthread_cond_wait(&mp->prepared, &mp->lock);
	pthread_mutex_unlock(&mp->lock);
	return e ? &e->st : NULL;
}

void module_prefetch_free(struct module_prefetch *mp)
{
	if (!mp)
		return;
	stop(mp);
	for (size_t i = 0; i < mp->index_cap; i++) {
		if (!mp->by_index[i])
			continue;
		symbolizer_module_close(&mp->by_index[i]->st); /* closing twice is harmless: close zeroes it */
		free(mp->by_index[i]);
	}
	free(mp->by_index);
	free(mp->queue);
	free(mp->guesses);
	free(mp->asked);
	module_file_callbacks_release(&mp->callbacks);
	pthread_cond_destroy(&mp->wake);
	pthread_cond_destroy(&mp->prepared);
	pthread_mutex_destroy(&mp->lock);
	free(mp);
}
