/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* tools/call and tools/list through the authorization core, the broker's
 * own tools, and the call object every kind of call shares
 * (gateway-call.c). Above the worker and gateway-session; used by
 * gateway.c, gateway-pass.c and daemon.c. */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "canon.h"
#include "daemon-state.h"

/* Calls (tools/call and pass-through) a session may have outstanding. */
#define SESSION_CALLS_MAX 64u
unsigned session_calls(const struct dsession *s);

/* A tools/call (params already admitted as an object with a name). args:
 * the call's arguments as canonical bytes when the gateway lifted them out
 * of params (cordon_canon_decode_lifted); taken when used. */
void call_start(struct dsession *s, const json_t *id, const json_t *params, struct cordon_canon_lifted *args);
/* Frees a call of any kind: off its session and worker, its held bytes
 * returned, its kind's data released (dcall_ops.release). */
void call_free(struct dcall *c);
/* notifications/cancelled from the client: a request in flight is
 * cancelled as by call_cancel_one(); a held one stops waiting and its
 * approval stays pending (issue 14). */
void call_cancel(struct dsession *s, const json_t *request_id);
/* Cancels call c (a pending approval withdrawn, audited; a request in
 * flight cancelled at the connector, its action's outcome unknown) and
 * frees it, answering nobody. */
void call_cancel_one(struct dcall *c);
/* A call waiting for an approval: decided, timed out, or still waiting. */
void call_tick(struct dcall *c, uint64_t now_ms);
/* Progress notifications to calls waiting for an approval. */
void calls_tick(struct cordon_daemon *d);
/* After an operator decided approval_id: the call waiting on it goes on. */
void call_approval_decided(struct cordon_daemon *d, const char *approval_id);
/* New reference: the canonical arguments of approval_id, kept for the
 * pending approval (approval-args.h) or, failing that, held by a call
 * waiting on it; NULL (cordon_daemon_approval_arguments). */
json_t *call_approval_arguments(struct cordon_daemon *d, const char *approval_id);

/* tools/list: the broker's tools and every connector's advertised ∩
 * reviewed ∩ granted tools (new reference). */
json_t *broker_tools_list(struct cordon_daemon *d, struct dsession *s);
/* A cordon__<tool> call; false when there is no such broker tool. */
bool broker_tool_call(struct dsession *s, const json_t *id, const char *tool, const json_t *args);
