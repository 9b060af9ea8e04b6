/*
 * work_queue.h — a worker thread fed by the thread that drains the buffers: the drain thread queues a job
 * and goes back to the buffers at once; the worker does the slow part (copying a binary into the build-ID
 * cache, reading a JIT's perf map) in the order the jobs came. The queue is bounded: past max jobs the drain
 * thread waits rather than drop one (each job may hold an open descriptor, or memory).
 */
#ifndef STACKREC_RECORD_WORK_QUEUE_H
#define STACKREC_RECORD_WORK_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* A job: embed this first in the caller's job structure. */
struct work_item {
	struct work_item *next;
};

struct work_queue {
	/* Set by the caller before the first push. */
	void (*run)(struct work_item *item, void *ctx); /* does the job and frees it */
	void *ctx;
	size_t max;		  /* jobs queued or being worked on, at most */
	const char *delay_env;	  /* tests: an environment variable of milliseconds to wait before each job */

	/* The queue's own. */
	pthread_mutex_t lock;
	pthread_cond_t more, room;
	struct work_item *head, **tail;
	size_t queued; /* queued or being worked on */
	bool closing, running, failed;
	pthread_t thread;
	unsigned int delay_ms;
};

#define WORK_QUEUE_INIT(run_fn, max_jobs, env)                                                                    \
	{ .run = (run_fn), .max = (max_jobs), .delay_env = (env), .lock = PTHREAD_MUTEX_INITIALIZER,            \
	  .more = PTHREAD_COND_INITIALIZER, .room = PTHREAD_COND_INITIALIZER }

/* Queues item for the worker, started on first use (with every signal blocked: SIGINT and SIGTERM are for
 * the drain thread). Waits while the queue is full. When no thread can be started, runs the job here. */
void work_queue_push(struct work_queue *q, struct work_item *item);
/* Waits until every job queued is done, and ends the worker (the next push starts it again). */
void work_queue_finish(struct work_queue *q);

#endif
