/*
 * interrupt_cleanup.c — stackrec stopped by SIGINT (Ctrl-C), SIGTERM or SIGHUP removes what it had not
 * finished: the temporary -o output (.OUT.XXXXXX beside OUT), the cache entries being written (.tmp.XXXXXX,
 * a decompressed debug file of hundreds of MB among them) and convert --archive's extracted files
 * (/tmp/stackrec-archive.XXXXXX), all of which outputs_discard_pending knows (util.c). Then it dies of the same
 * signal with its default action, as GNU sort and gcc do, so that a shell or a make sees an interrupted
 * command (exit status 128 + the signal: 130 for Ctrl-C) and stops too, rather than a failure of its own.
 *
 * The handler runs on the thread the kernel picks among those that do not block these signals: the main
 * thread, since every other thread starts with them blocked (thread_start_without_signals), and not while
 * the main thread is between making a temporary and listing it (pending_create_begin blocks them there); a
 * worker thread in that step is waited for (outputs_discard_pending). Only async-signal-safe calls here.
 */
#include "interrupt_cleanup.h"

#include <signal.h>
#include <unistd.h>

#include "util.h"

static const int stop_signals[] = { STOP_SIGNALS };

static void on_stop_signal(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	outputs_discard_pending();
	/* Delivered again once the handler returns and unblocks it, now with the default action: the process ends
	 * killed by sig. */
	sigaction(sig, &dfl, NULL);
	raise(sig);
}

void interrupt_cleanup_install(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigfillset(&sa.sa_mask); /* one handler at a time, and none of another signal while files are removed */
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++) {
		struct sigaction old;

		/* A signal ignored by whoever started us (nohup, a shell's background job for SIGINT) stays so. */
		if (sigaction(stop_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(stop_signals[i], &sa, NULL);
	}
}
