/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Sampling and elicitation requests of connectors relayed to clients, and
 * the clients' answers relayed back (gateway-relay.c). Used by gateway.c,
 * which hands it the worker's requests (worker_events.client_request). */

#include <jansson.h>
#include <stdbool.h>

#include "daemon-state.h"

/* A connector's request (bit: CORDON_CLIENT_SAMPLING or _ELICITATION). */
void relay_server_request(struct dworker *w, json_t *msg, unsigned bit);
/* A response from the client; false when it answers no relayed request. */
bool relay_client_response(struct dsession *s, const json_t *msg);
/* The session ends: its relayed requests are answered with an error. */
void relay_session_closed(struct dsession *s);
/* The instance is gone: answers to its requests go nowhere. */
void relay_worker_gone(struct dworker *w);
