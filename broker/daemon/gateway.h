/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The gateway socket (gateway.c): one MCP session per connection. The top
 * of the gateway: it dispatches to gateway-call.c, gateway-pass.c and
 * gateway-relay.c, and registers the worker_events through which instances
 * reach the sessions. Used by daemon-core.c. */

#include "daemon-state.h"

/* Serves d->gateway_fd and registers the gateway's worker_events. */
int gateway_start(struct cordon_daemon *d);
/* Closes every session and unregisters the worker_events. */
void gateway_stop(struct cordon_daemon *d);
/* Approval waits and their progress, idle and closing sessions, memory
 * trim. */
void gateway_tick(struct cordon_daemon *d);

/* ---- sessions of other transports (gateway-http.c) ----------------------
 * The transport only frames: a session created here is the same struct
 * dsession, admitted against the same caps, fed the same messages and
 * closed the same way as a gateway-socket connection's. */
struct ucred;
/* A new session of the subject cred (or, when agent is not NULL, of that
 * agent: issue 18) whose output goes to t (data: the transport's own, in
 * s->transport_data). Returns it, or NULL with *ret_why: -EUSERS
 * (max_sessions reached), -EDQUOT (the subject's sessions_per_uid
 * reached) or -ENOMEM. */
struct dsession *gateway_session_new(struct cordon_daemon *d, const struct ucred *cred,
				     const struct cordon_agent_info *agent, const struct dtransport *t, void *data,
				     int *ret_why);
/* Ends every session of subject (a struct duid key) at once, as
 * gateway_session_end() does. Returns how many. */
unsigned gateway_end_subject(struct cordon_daemon *d, uint64_t subject);
/* The per-uid session cap in force (for a refusal's message). */
unsigned gateway_sessions_per_uid(const struct cordon_daemon *d);
/* cordon/bind without its answer: 0, -EALREADY (initialized or bound) or
 * -ENOENT (no installed connector of that id). */
int gateway_session_bind(struct dsession *s, const char *connector);
/* One JSON-RPC message from the client (bytes without a newline), handled
 * exactly as a line of the gateway socket; what it answers goes to the
 * transport's send, some of it before this returns. */
void gateway_session_input(struct dsession *s, const char *msg, size_t len);
/* Ends the session now (its transport's closed is called first). */
void gateway_session_end(struct dsession *s);
