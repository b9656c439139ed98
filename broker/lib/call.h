/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The parts of a tools/call the broker authorises: the tool name, the
 * canonical bytes of its arguments (what is bound, hashed and forwarded) and
 * the infrastructure's idempotency key from params._meta. The daemon decodes
 * the JSON-RPC message with canon's strict decoder first; this function
 * admits and canonicalises the params it got. */

#include <jansson.h>
#include <stddef.h>

#include "diag.h"

struct cordon_tool_call {
	char *name;
	char *arguments_jcs; /* "{}" when arguments were absent */
	size_t arguments_jcs_len;
	char *idempotency_key; /* params._meta["io.cordon/idempotency-key"], or NULL */
};

/* Parses tools/call params. Returns 0 and fills *ret; -EINVAL (params not an
 * object, name missing or invalid, arguments present but not an object,
 * idempotency key not a valid string), a canon.h admission errno (depth,
 * integer range, UTF-8) or -ENOMEM; diag (step "call") names the member.
 * Other _meta members are ignored: only the gateway's key is meaningful. */
int cordon_tool_call_parse(const json_t *params, struct cordon_tool_call *ret, struct cordon_diag *diag);

/* The same for params whose "arguments" object cordon_canon_decode_lifted()
 * took out as canonical bytes (a large call's arguments never become a tree):
 * *arguments_jcs (arguments_jcs_len bytes) becomes ret->arguments_jcs. It is
 * consumed whatever the outcome (*arguments_jcs is NULL on return); NULL
 * there means nothing was lifted, as cordon_tool_call_parse(). -EINVAL if
 * params still holds "arguments". */
int cordon_tool_call_parse_lifted(const json_t *params, char **arguments_jcs, size_t arguments_jcs_len,
				  struct cordon_tool_call *ret, struct cordon_diag *diag);
void cordon_tool_call_done(struct cordon_tool_call *c);
