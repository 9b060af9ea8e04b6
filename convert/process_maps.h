/*
 * process_maps.h — which file an address of a process belonged to at a given time.
 *
 * A recording carries every executable mapping of every process (MAPPING blocks, from /proc at start and
 * from the kernel while recording) and every exec (TASK blocks). Addresses are reused: a process that
 * execs gets a new image, and a library unmapped and mapped again may land elsewhere. So resolving an
 * address takes the process, the sample time and the address, and answers with the mapping that was in
 * place then, its module in the profile and the file offset of the address. A child forked without exec
 * has no mappings of its own in the recording (the kernel reports only the fork): it is resolved through
 * its parent's, as they were at the fork.
 */
#ifndef STACKREC_CONVERT_PROCESS_MAPS_H
#define STACKREC_CONVERT_PROCESS_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../formats/recording.h"
#include "profile.h"

struct process_maps_process;

struct process_maps {
	struct process_maps_process *processes; /* open-addressing table by pid */
	size_t cap, count;
	uint64_t mappings, execs, forks;
	bool finished;
};

void process_maps_init(struct process_maps *maps);
/* Adds one MAPPING block; its module is interned into profile now (deduplicated by build ID, else path), and
 * its index returned. */
uint32_t process_maps_add_mapping(struct process_maps *maps, struct profile *profile, const struct srec_mapping *m,
				  const char *path);
/* Notes an exec of pid at time_ns: mappings from before it no longer apply to later samples. */
void process_maps_add_exec(struct process_maps *maps, uint32_t pid, uint64_t time_ns);
/*
 * Notes that process child_pid was forked from parent_pid at time_ns (a SREC_TASK_FORK whose pid is not its
 * parent's; new threads are ignored): until its next exec, addresses no mapping of the child covers are
 * looked up in the parent as it was at time_ns.
 */
void process_maps_add_fork(struct process_maps *maps, uint32_t child_pid, uint32_t parent_pid, uint64_t time_ns);
/* Notes that pid was running when recording started (SREC_TASK_EXISTING): its mappings from before then are
 * known only from the /proc scan at start. */
void process_maps_add_existing(struct process_maps *maps, uint32_t pid);
/* Sorts what was added; call once after the last add and before the first resolve. */
void process_maps_finish(struct process_maps *maps);

/*
 * The mapping of ip in process pid at time_ns: the newest one mapped at or before time_ns and after the
 * last exec before time_ns; failing that, when the process was forked and has not exec'd since, its
 * parent's mapping of ip at the fork (recursively, a bounded number of forks up); failing that
 * (timestamps of /proc scans and side-band records race with samples), the oldest one mapped after
 * time_ns but before the next exec. Returns true with *module (the
 * profile module index) and *file_offset set, or false when no mapping covers ip.
 */
bool process_maps_resolve(const struct process_maps *maps, uint32_t pid, uint64_t time_ns, uint64_t ip,
			  uint32_t *module, uint64_t *file_offset);
/*
 * The time at which to resolve the user pc of a sample of pid at time_ns whose user stack could not be read:
 * time_ns, or, when no mapping covers pc then but the process exec'd at most PROCESS_MAPS_EXEC_NS before and
 * its old image's mappings cover pc, the moment before that exec. Such a sample was taken inside execve after
 * the new image replaced the old one (the exec record is written at begin_new_exec), before the thread
 * returned to user space: its pc is still the old image's (__execve in the old libc), its stack gone.
 */
#define PROCESS_MAPS_EXEC_NS 100000000ull
uint64_t process_maps_exec_pc_time(const struct process_maps *maps, uint32_t pid, uint64_t time_ns, uint64_t pc);
/*
 * A number for the span of time t lies in, among the times at which what pid's addresses resolve to may
 * change (its mappings', execs' and forks' times): process_maps_resolve(pid, t, ip) and (pid, t2, ip) give
 * the same answer for every ip when the two numbers are equal. So answers can be remembered per (pid, period).
 */
uint64_t process_maps_period(const struct process_maps *maps, uint32_t pid, uint64_t time_ns);
/* process_maps_period, and the times [*from, *until) around time_ns that the process's period spans. */
uint64_t process_maps_period_span(const struct process_maps *maps, uint32_t pid, uint64_t time_ns, uint64_t *from,
				  uint64_t *until);

/* Whether the recording has any mapping of pid, its own or inherited at a fork (for --explain). */
bool process_maps_has_mappings(const struct process_maps *maps, uint32_t pid);
/* Whether pid was running when recording started (process_maps_add_existing). */
bool process_maps_existed_at_start(const struct process_maps *maps, uint32_t pid);

void process_maps_release(struct process_maps *maps);

#endif
