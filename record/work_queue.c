/*
 * work_queue.c — one worker thread per queue, jobs done in the order queued (see work_queue.h).
 */
#include "work_queue.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util.h"

static void *work(void *arg)
{
	struct work_queue *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct work_item *item;

		while (!q->head && !q->closing)
			pthread_cond_wait(&q->more, &q->lock);
		item = q->head;
		if (!item)
			break;
		q->head = item->next;
		if (!q->head)
			q->tail = &q->head;
		pthread_mutex_unlock(&q->lock);
		if (q->delay_ms)
			usleep(q->delay_ms * 1000);
		q->run(item, q->ctx);
		pthread_mutex_lock(&q->lock);
		q->queued--;
		pthread_cond_broadcast(&q->room);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static bool start(struct work_queue *q)
{
	const char *delay = q->delay_env ? getenv(q->delay_env) : NULL;
	int err;

	q->delay_ms = delay ? (unsigned int)strtoul(delay, NULL, 10) : 0;
	q->tail = &q->head;
	err = thread_start_without_signals(&q->thread, work, q);
	if (err) {
		warning("cannot start a worker thread: %s; working on the recording thread", strerror(err));
		q->failed = true;
		return false;
	}
	q->running = true;
	return true;
}

void work_queue_push(struct work_queue *q, struct work_item *item)
{
	if (!q->running && (q->failed || !start(q))) {
		q->run(item, q->ctx);
		return;
	}
	item->next = NULL;
	pthread_mutex_lock(&q->lock);
	while (q->queued >= q->max)
		pthread_cond_wait(&q->room, &q->lock);
	*q->tail = item;
	q->tail = &item->next;
	q->queued++;
	pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->lock);
}

void work_queue_finish(struct work_queue *q)
{
	if (!q->running)
		return;
	pthread_mutex_lock(&q->lock);
	q->closing = true;
	pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	q->running = false;
	q->closing = false;
}
