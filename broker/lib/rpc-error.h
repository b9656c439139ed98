/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A connector's JSON-RPC error, relayed to the client (issue 13, "Errors").
 *
 * What the connector said reaches the client unchanged within bounds: the
 * code as it is (any integer canon admitted), the message up to
 * CORDON_RPC_ERROR_MESSAGE_MAX bytes (cut on a UTF-8 boundary, with a
 * marker), data (any JSON value) up to CORDON_RPC_ERROR_DATA_MAX bytes of
 * compact JSON (beyond: replaced by a small object saying so). Other members
 * of the error object are not relayed.
 *
 * cordon's own answers (refusals, protocol errors) carry the marker
 * CORDON_REFUSED_BY_KEY: "cordon" (in error.data for a JSON-RPC error, in
 * result._meta for an isError tool result). A connector cannot forge it:
 * the marker keys are removed from the top level of a connector's error data
 * object and of a connector's result._meta. */

#include <jansson.h>
#include <stddef.h>

#include "diag.h"

#define CORDON_RPC_ERROR_MESSAGE_MAX 4096  /* bytes of UTF-8, the marker included */
#define CORDON_RPC_ERROR_DATA_MAX    16384 /* bytes of compact JSON */

/* Set by cordon on its own answers; never by a connector. */
#define CORDON_REFUSED_BY_KEY "io.cordon/refused_by"
/* Replaces a connector's data beyond CORDON_RPC_ERROR_DATA_MAX:
 * {"io.cordon/data_dropped": {"bytes": N, "limit": 16384}}. */
#define CORDON_DATA_DROPPED_KEY "io.cordon/data_dropped"

/* Checks the `error` member of a connector's response and builds the error
 * object for the client ({code, message[, data]}, bounded as above).
 * Returns 0 and writes *ret (a new reference); -EBADMSG when error is not an
 * object, its code not an integer or its message not a string (diag, step
 * "rpc-error", names the problem); -ENOMEM. */
int cordon_rpc_error_relay(const json_t *error, json_t **ret, struct cordon_diag *diag);

/* The object that stands for data of `bytes` bytes of compact JSON beyond
 * CORDON_RPC_ERROR_DATA_MAX (a connector's error data, or its log
 * message's data): {"io.cordon/data_dropped": {"bytes": N, "limit": ...}}.
 * NULL on ENOMEM. */
json_t *cordon_rpc_data_dropped(size_t bytes);

/* Removes cordon's marker keys (CORDON_REFUSED_BY_KEY,
 * CORDON_DATA_DROPPED_KEY) from the top level of obj when it is an object;
 * anything else is left alone. */
void cordon_rpc_strip_markers(json_t *obj);

/* A copy of the JSON text (len bytes) in which DEL (0x7f) and the C1
 * controls U+0080..U+009F, which JSON encoders leave raw, are written as
 * \u escapes: the same JSON value, and no byte a terminal would act on
 * (JSON already escapes U+0000..U+001F). The text must be JSON produced by
 * an encoder: such bytes can only occur inside strings there. Returns the
 * malloc'd NUL-terminated copy and its length in *ret_len, or NULL (ENOMEM). */
char *cordon_json_escape_controls(const char *text, size_t len, size_t *ret_len);
