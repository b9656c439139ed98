/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Group commit of tools/call decisions (gateway-decide.c): the calls decided
 * in one pass of the event loop share one transaction, and each goes on
 * (call_decided()) only after it committed. Used by gateway-call.c and
 * daemon-core.c. */

#include "daemon-state.h"
#include "loop.h"

/* c was decided by cordon_broker_decide_batched() (which returned r): it
 * waits for its batch to commit. */
void decide_batch_add(struct dcall *c, int r);
/* c is freed: it waits no more (no-op when it was not waiting). */
void decide_batch_forget(struct dcall *c);
/* The loop's end-of-pass hook (userdata: the daemon): commits the batch and
 * lets every waiting call go on, in the order they were decided. */
void decide_batch_pass_end(struct cordon_loop *loop, void *userdata);
