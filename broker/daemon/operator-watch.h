/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The approvals.watch operator op (operator-watch.c). */

#include <jansson.h>

#include "operator-proto.h"

struct cordon_daemon;

/* Without after_seq: {"pending": [events], "next_seq", "last_seq"}; with
 * it: {"events": [...], "next_seq", "last_seq"} (approval_event_json()
 * objects; next_seq is the next call's after_seq). Returns 0 and writes
 * *ret, or -errno with err. */
int op_approvals_watch(struct cordon_daemon *d, const struct cordon_op_request *req, json_t **ret,
		       struct cordon_op_error *err);
