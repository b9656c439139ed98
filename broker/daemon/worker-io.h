/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The broker's side of an instance's stdin (worker-io.c): what worker.c
 * writes to a connector, and worker_answer() for gateway-relay.c. Calls
 * nothing of the daemon above daemon-state. */

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon-state.h"

/* Queues one line (a newline is added) and writes what the pipe takes:
 * 0, or -EPIPE (the instance is dead), -ENOBUFS or -ENOMEM. */
int worker_send_line(struct dworker *w, const char *s, size_t n);
int worker_send_json(struct dworker *w, json_t *msg /* stolen */);
/* A new request (id: the next number) on w's list, or NULL. */
struct dwreq *worker_req_new(struct dworker *w, enum dwreq_kind kind);
/* Takes request id off w's list (the caller frees it), or NULL. */
struct dwreq *worker_req_take(struct dworker *w, int64_t id);
/* Sends request q as method with params (stolen, may be NULL). */
int worker_send_request(struct dworker *w, struct dwreq *q, const char *method, json_t *params);
/* Answers a request the connector sent (id borrowed): with result, or with
 * error when result is NULL (both borrowed). */
void worker_answer(struct dworker *w, json_t *id, json_t *result, json_t *error);
/* The same with a result (stolen), or an error code and message. */
void worker_answer_result(struct dworker *w, json_t *id, json_t *result);
void worker_answer_error(struct dworker *w, json_t *id, int code, const char *msg);
/* Writes what is queued, as far as the pipe takes it. */
void worker_flush(struct dworker *w);
/* The loop handler of the stdin pipe (EPOLLOUT while bytes are queued). */
void worker_on_stdin(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata);
