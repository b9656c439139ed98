/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The lowest part of the gateway (gateway-session.c): what is written to a
 * session, and each local uid's share of the gateway (sessions and held
 * call arguments). Used by every gateway module above it and by daemon.c;
 * calls nothing of the daemon but its buffers and the loop. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon-state.h"

/* Queues one line to the client (a newline is added) and writes what the
 * socket takes. A client that does not read is closed (s->closing).
 * Every line goes out with DEL and C1 controls as \u escapes
 * (cordon_json_escape_controls): bytes must be JSON. Every error cordon sends itself
 * (session_send_error) carries data {"io.cordon/refused_by": "cordon"}. */
void session_send(struct dsession *s, const char *bytes, size_t len);
void session_send_json(struct dsession *s, json_t *msg /* stolen */);
void session_send_error(struct dsession *s, const json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void session_send_result(struct dsession *s, const json_t *id, json_t *result /* stolen */);
/* A connector's answer msg to a request that had no usable result: its
 * error is relayed to the client bounded (rpc-error.h), returning 0; or,
 * when msg has no error or a malformed one, cordon answers -32603 naming
 * the connector and the problem, returning -EBADMSG. s NULL (the session
 * went away): nothing is sent, the return value is the same. */
int session_send_connector_error(struct dsession *s, const json_t *id, const char *connector, const json_t *msg);
/* Writes what is queued, as far as the socket takes it (EPOLLOUT). */
void session_flush(struct dsession *s);
/* notifications/tools/list_changed to every initialized session that sees
 * connector's tools (NULL: a change of every connector, or of the broker's
 * own tools, told to every session; a session bound to another connector
 * hears nothing of connector). */
void session_notify_all_list_changed(struct cordon_daemon *d, const char *connector);

/* One subject's share (issue 11 findings 3 and 6; a subject is a uid or,
 * over TCP, an agent: struct duid): the entry of subject, created
 * when create (NULL: none, or out of memory); put drops an entry that holds
 * nothing any more. */
struct duid *uid_share_get(struct cordon_daemon *d, uint64_t subject, bool create);
void uid_share_put(struct cordon_daemon *d, struct duid *u);

/* The JSON-RPC error a call beyond a held-argument budget gets. */
#define GATEWAY_ERR_HELD_BUDGET (-32001)
/* Charges `bytes` of held call arguments to uid: 0, or -EDQUOT (nothing
 * charged) with a message naming the budget that would be exceeded. */
int held_charge(struct cordon_daemon *d, uint64_t subject, uint64_t bytes, char *ret_msg, size_t msg_size);
/* Returns bytes charged by held_charge (memory goes back to the OS on the
 * next tick when a large amount was released, see held_trim). */
void held_release(struct cordon_daemon *d, uint64_t subject, uint64_t bytes);
/* A subject as a refusal names it: "uid 1000" or "agent ci-bot". */
const char *subject_text(const struct cordon_daemon *d, uint64_t subject, char *buf, size_t size);
/* From the tick: malloc_trim once enough held memory was released. */
void held_trim(struct cordon_daemon *d, uint64_t now);
