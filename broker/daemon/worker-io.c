/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The broker's side of an instance's stdin: a bounded write buffer flushed
 * as the pipe takes it, and requests numbered from 1 (the TypeScript SDK
 * ignores a cancellation for id 0) and remembered until answered. Writing
 * never tears the worker down (callers are mid-operation): a failed write
 * kills the instance, and its stdout EOF runs the crash path from the
 * loop. Used by worker.c and gateway-relay.c (worker_answer). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "cleanup.h"
#include "dbuf.h"
#include "worker-io.h"

#define WORKER_WBUF_MAX (64u * 1024 * 1024)

void worker_flush(struct dworker *w)
{
	while (w->wbuf.len > 0) {
		ssize_t n = write(w->in_fd, w->wbuf.p, w->wbuf.len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			/* Never tear the worker down from inside a send (callers
			 * are mid-operation): kill the instance; its stdout EOF
			 * then runs the crash path from the loop. */
			dbuf_consume(&w->wbuf, w->wbuf.len);
			if (w->d->have_spawner)
				w->d->spawner.kill(w->d->spawner.userdata, w->instance);
			break;
		}
		dbuf_consume(&w->wbuf, (size_t)n);
	}
	if (w->w_in)
		(void)cordon_loop_watch_modify(w->w_in, w->wbuf.len ? EPOLLOUT : 0);
}

int worker_send_line(struct dworker *w, const char *s, size_t n)
{
	int r;

	if (w->state == DW_DEAD)
		return -EPIPE;
	if ((r = dbuf_append(&w->wbuf, s, n, WORKER_WBUF_MAX)) < 0 ||
	    (r = dbuf_append(&w->wbuf, "\n", 1, WORKER_WBUF_MAX)) < 0)
		return r;
	worker_flush(w);
	return 0;
}

int worker_send_json(struct dworker *w, json_t *msg)
{
	_cleanup_free_ char *s = json_dumps(msg, JSON_COMPACT);

	json_decref(msg);
	if (!s)
		return -ENOMEM;
	return worker_send_line(w, s, strlen(s));
}

struct dwreq *worker_req_new(struct dworker *w, enum dwreq_kind kind)
{
	struct dwreq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->id = w->next_id++;
	q->kind = kind;
	q->next = w->reqs;
	w->reqs = q;
	return q;
}

struct dwreq *worker_req_take(struct dworker *w, int64_t id)
{
	for (struct dwreq **p = &w->reqs; *p; p = &(*p)->next)
		if ((*p)->id == id) {
			struct dwreq *q = *p;

			*p = q->next;
			return q;
		}
	return NULL;
}

int worker_send_request(struct dworker *w, struct dwreq *q, const char *method, json_t *params)
{
	json_t *m = json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id", (json_int_t)q->id, "method", method);

	if (!m) {
		json_decref(params);
		return -ENOMEM;
	}
	if (params)
		json_object_set_new(m, "params", params);
	return worker_send_json(w, m);
}

void worker_answer(struct dworker *w, json_t *id, json_t *result, json_t *error)
{
	json_t *m = json_pack("{s:s, s:O}", "jsonrpc", "2.0", "id", id);

	if (result)
		json_object_set(m, "result", result);
	else
		json_object_set(m, "error", error);
	worker_send_json(w, m);
}

void worker_answer_result(struct dworker *w, json_t *id, json_t *result)
{
	worker_send_json(w, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

void worker_answer_error(struct dworker *w, json_t *id, int code, const char *msg)
{
	worker_send_json(w, json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id, "error", "code", code,
				      "message", msg));
}

void worker_on_stdin(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata)
{
	struct dworker *w = userdata;

	(void)loop;
	(void)fd;
	(void)revents;
	worker_flush(w);
}
