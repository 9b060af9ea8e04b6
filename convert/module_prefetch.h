/*
 * module_prefetch.h — opens the modules convert will symbolize, on a thread of their own, while convert is
 * still reading and unwinding the samples.
 *
 * Symbolizing a module first opens its file and, unless the symbol cache has its answers, reads its symbol
 * table and DWARF: for Debian's libc that is tens of milliseconds of zlib alone (a compressed debug file),
 * as long as unwinding all the samples of a large recording. Which modules need it is known during the
 * pass over the samples, as soon as the first frame lands in each; convert hands each such module to this
 * thread then, which prepares it (symbolizer_module_prepare), and symbolize_profile_prepared uses the
 * prepared modules instead of opening them again. On two cores the two costs overlap. The names found do not
 * depend on it: the same module is opened the same way, only earlier and elsewhere.
 *
 * Earlier still, while pass 1 reads the recording (decompressing it on one core), the modules of the first
 * process that a sample is seen to land in are guesses (module_prefetch_guess, from convert.c's
 * guess_from_sample): the samples mostly land in the recorded program's
 * few modules, and libc's debug file (one 5.8 MB zlib stream in .debug_info: 13 ms on one core at best) was
 * the last thing a cold conversion of 50,000 fp samples waited for. Only a few guesses, the largest mapping
 * first, and none started once pass 2 asks for a module: a wrong guess costs the idle core's time (and the
 * wait for it, if it is still being prepared when the samples are done) and is closed at the end of pass 2.
 */
#ifndef STACKREC_CONVERT_MODULE_PREFETCH_H
#define STACKREC_CONVERT_MODULE_PREFETCH_H

#include <stdbool.h>
#include <stdint.h>

#include "profile.h"
#include "symbolizer.h"

struct module_prefetch;

/* A prefetcher for modules opened with options (which must not change until module_prefetch_free). */
struct module_prefetch *module_prefetch_new(const struct symbolizer_options *options);
/*
 * Asks for module index (m is the profile's module of that index): prepared once, however often asked.
 * Only files (a path that starts with '/') are prepared: [vdso] gets its build ID only after the samples.
 * The profile may grow its modules array afterwards: m is copied.
 */
void module_prefetch_want(struct module_prefetch *mp, uint32_t index, const struct profile_module *m);
/*
 * Guesses that module index (m, as above) will be asked for: while pass 1 reads the recording, before any is
 * asked, the worker prepares the guessed modules, the largest mapping first and at most a few, on the core
 * pass 1 leaves idle. Once one is asked for, guesses not started are dropped. A guessed module nothing is
 * asked of is closed by module_prefetch_finish (or, still being prepared then, by module_prefetch_free).
 */
void module_prefetch_guess(struct module_prefetch *mp, uint32_t index, const struct profile_module *m);
/* Ends the prefetching: the thread takes no other module, but finishes the one it is preparing, if any. */
void module_prefetch_finish(struct module_prefetch *mp);
/* A symbolizer_prepared_fn (ctx is mp), for symbolize_profile_prepared after module_prefetch_finish: the
 * module of index index as prepared (waiting for it while it is being prepared), or NULL. */
struct symbolizer_module *module_prefetch_take(void *ctx, uint32_t index);
/* Closes what symbolize_profile_prepared did not use, and frees mp (NULL is fine). */
void module_prefetch_free(struct module_prefetch *mp);

#endif
