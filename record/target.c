/*
 * target.c — what is recorded. A spawned command (`-- CMD ARGS`) is forked first and held on a pipe until
 * the BPF programs are attached and its pid is a target, so that nothing it does from exec on is missed;
 * its children are followed in the kernel (profile.bpf.c). `-p` takes running processes; `-a` takes all.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util.h"
#include "recorder.h"

static int go_pipe[2] = { -1, -1 };  /* parent → child: start */
static int err_pipe[2] = { -1, -1 }; /* child → parent: errno of a failed exec; closed by a good exec */

/* The process (thread group) of thread tid, from /proc/TID/status; tid itself when that cannot be read. */
static pid_t thread_group_of(pid_t tid)
{
	char path[64], line[256];
	FILE *f;
	long tgid = tid;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	fclose(f);
	return tgid > 0 ? (pid_t)tgid : tid;
}

/* Adds id to the list unless it is there already (given twice, or two threads of one process). */
static void add_unique(pid_t **ids, size_t *count, pid_t id)
{
	for (size_t i = 0; i < *count; i++)
		if ((*ids)[i] == id)
			return;
	*ids = xrealloc(*ids, (*count + 1) * sizeof(**ids));
	(*ids)[(*count)++] = id;
}

/*
 * Parses a -p (threads false) or -t (threads true) list of ids of live tasks. -p: targets are processes
 * (tgids): a thread's id would match no sample, so its process is taken, and said so. -t: the threads are
 * the targets (rec->tids), and their processes are kept in rec->pids for their mappings and side-band records.
 */
static int parse_ids(struct recorder *rec, const char *list, bool threads)
{
	const char *what = threads ? "thread" : "process";
	char *copy = xstrdup(list), *save = NULL;

	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long id = strtol(tok, &end, 10);
		pid_t tgid;

		if (*end || id <= 0 || id > 0x7fffffff) {
			error("'%s' is not a %s id", tok, what);
			free(copy);
			return -1;
		}
		if (kill((pid_t)id, 0) < 0 && errno == ESRCH) {
			free(copy);
			return error("no %s with id %ld", what, id);
		}
		tgid = thread_group_of((pid_t)id);
		if (threads) {
			add_unique(&rec->tids, &rec->tid_count, (pid_t)id);
		} else if (tgid != id) {
			fprintf(stderr, "stackrec: %ld is a thread of process %d: recording the process\n", id, tgid);
		}
		add_unique(&rec->pids, &rec->pid_count, tgid);
	}
	free(copy);
	if (!rec->pid_count)
		return error("-%c needs at least one %s id", threads ? 't' : 'p', what);
	return 0;
}

int target_parse_pids(struct recorder *rec, const char *list)
{
	return parse_ids(rec, list, false);
}

int target_parse_tids(struct recorder *rec, const char *list)
{
	return parse_ids(rec, list, true);
}

/* The signals the recorder ignores (SIGPIPE) or handles (stopping on SIGINT, SIGTERM, SIGHUP) for itself. */
static const int recorder_signals[] = { STOP_SIGNALS, SIGPIPE };

void target_note_signals(struct recorder *rec)
{
	struct sigaction old;

	sigemptyset(&rec->ignored_at_start);
	for (size_t i = 0; i < ARRAY_SIZE(recorder_signals); i++)
		if (sigaction(recorder_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			sigaddset(&rec->ignored_at_start, recorder_signals[i]);
}

static void restore_signals(const sigset_t *ignored)
{
	for (size_t i = 0; i < ARRAY_SIZE(recorder_signals); i++)
		signal(recorder_signals[i], sigismember(ignored, recorder_signals[i]) ? SIG_IGN : SIG_DFL);
}

int target_spawn(struct recorder *rec)
{
	pid_t parent = getpid(), pid;

	if (pipe2(go_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0)
		return error("cannot create a pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		return error("cannot fork: %s", strerror(errno));
	if (pid == 0) {
		char go;
		int err;

		close(go_pipe[1]);
		close(err_pipe[0]);
		/* Until exec this is a copy of stackrec: name it so its few samples explain themselves. */
		prctl(PR_SET_NAME, "stackrec-exec");
		/* A recorder killed with SIGKILL cannot stop the command: the kernel does, as for perf's workload.
		 * The recorder may have died before prctl: then the parent is no longer it. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(127);
		if (read(go_pipe[0], &go, 1) != 1)
			_exit(127); /* the recorder gave up before starting us */
		/* The signals the recorder ignores or handles for itself (SIGPIPE ignored, SIGINT handled) as they
		 * were given to stackrec: under `record`, `yes | head -1` must not see EPIPE (a "Broken pipe" error)
		 * where it would have died of SIGPIPE, nor a command of a script that ignores SIGINT be stopped by it. */
		restore_signals(&rec->ignored_at_start);
		execvp(rec->command[0], rec->command);
		err = errno;
		if (write(err_pipe[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go_pipe[0]);
	close(err_pipe[1]);
	rec->child = pid;
	return 0;
}

int target_start(struct recorder *rec)
{
	char go = 1;
	int err = 0;
	ssize_t n;

	if (write(go_pipe[1], &go, 1) != 1)
		return error("cannot start '%s': %s", rec->command[0], strerror(errno));
	close(go_pipe[1]);
	go_pipe[1] = -1;
	do
		n = read(err_pipe[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(err_pipe[0]);
	if (n == (ssize_t)sizeof(err)) {
		waitpid(rec->child, NULL, 0);
		rec->child = 0;
		return error("cannot run '%s': %s", rec->command[0], strerror(err));
	}
	return 0;
}

/*
 * A process that exited but was not reaped yet (a zombie) still answers kill(pid, 0): it counts as gone. A process
 * whose main thread alone has exited (pthread_exit) is a zombie too by its own /proc/PID/stat, but runs on in its
 * other threads: it is alive (process_live_task). A thread (-t) is alive while its own task is.
 */
static bool process_alive(pid_t pid, bool thread)
{
	char state;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return false;
	if (!thread)
		return process_live_task(pid) != 0;
	state = proc_task_state(pid);
	return state ? state != 'Z' && state != 'X' : errno != ENOENT && errno != ESRCH; /* unreadable: there, as
												     kill() says */
}

void target_warn_gone_at_start(const struct recorder *rec)
{
	bool threads = rec->target == TARGET_THREADS;
	const pid_t *ids = threads ? rec->tids : rec->pids;
	size_t count = threads ? rec->tid_count : rec->pid_count;

	if (rec->target != TARGET_PIDS && !threads)
		return;
	for (size_t i = 0; i < count; i++)
		if (!process_alive(ids[i], threads))
			warning("%s %d exited before recording started: nothing of it is recorded",
				threads ? "thread" : "process", (int)ids[i]);
}

/* The spawned command (`-- CMD`, also after -a) has exited: it is reaped. */
static bool command_exited(struct recorder *rec)
{
	if (rec->child && waitpid(rec->child, &rec->child_status, WNOHANG) == rec->child)
		rec->child = 0;
	return rec->child == 0;
}

bool target_gone(struct recorder *rec)
{
	switch (rec->target) {
	case TARGET_COMMAND:
		return command_exited(rec);
	case TARGET_PIDS:
		for (size_t i = 0; i < rec->pid_count; i++)
			if (process_alive(rec->pids[i], false))
				return false;
		return true;
	case TARGET_THREADS: /* /proc/TID/stat is there for a thread too */
		for (size_t i = 0; i < rec->tid_count; i++)
			if (process_alive(rec->tids[i], true))
				return false;
		return true;
	case TARGET_ALL: /* until stopped, unless a command runs meanwhile */
		return rec->command && command_exited(rec);
	}
	return false;
}

void target_stop(struct recorder *rec)
{
	if (!rec->command)
		return;
	if (go_pipe[1] >= 0) { /* never started: let it exit */
		close(go_pipe[1]);
		go_pipe[1] = -1;
	}
	if (rec->child && waitpid(rec->child, &rec->child_status, WNOHANG) == rec->child) {
		rec->child = 0; /* it ended by itself, just now: its status is its own */
	} else if (rec->child) {
		kill(rec->child, SIGTERM);
		rec->child_stopped = true;
	}
}

/*
 * A command may take its time over SIGTERM (a server shutting down), or ignore it: the recording is whole by
 * now, so the wait is said after REAP_QUIET_NS, with the way out. The recorder does not kill it by itself (a
 * command that saves its work on SIGTERM would lose it); a Ctrl-C, SIGTERM or hang-up to the recorder during
 * the wait does, with SIGKILL, as would the kernel once the recorder is gone (PR_SET_PDEATHSIG).
 */
#define REAP_QUIET_NS 1000000000ull
#define REAP_POLL_US 10000

void target_reap(struct recorder *rec, const volatile sig_atomic_t *signals)
{
	sig_atomic_t seen = *signals;
	uint64_t start = monotonic_ns();
	bool said = false;

	while (rec->child) {
		pid_t got = waitpid(rec->child, &rec->child_status, WNOHANG);

		if (got == rec->child || (got < 0 && errno == ECHILD)) {
			rec->child = 0;
			break;
		}
		if (*signals != seen) {
			kill(rec->child, SIGKILL);
			rec->child_stopped = true;
			while (waitpid(rec->child, &rec->child_status, 0) < 0 && errno == EINTR)
				;
			rec->child = 0;
			break;
		}
		if (!said && monotonic_ns() - start >= REAP_QUIET_NS) {
			warning("'%s' (pid %d) has not exited 1 s after SIGTERM; waiting for it (Ctrl-C kills it)",
				rec->command[0], (int)rec->child);
			said = true;
		}
		usleep(REAP_POLL_US);
	}
}

int target_exit_status(const struct recorder *rec)
{
	if (!rec->command || rec->child_stopped) /* -p, -t, -a without a command; or ended by us */
		return 0;
	if (WIFEXITED(rec->child_status))
		return WEXITSTATUS(rec->child_status);
	if (WIFSIGNALED(rec->child_status))
		return 128 + WTERMSIG(rec->child_status);
	return 0;
}
