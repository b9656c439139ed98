/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The canonical arguments of pending approvals, kept in cordond's memory
 * (approval-args.c, issue 14) so the operator never decides blind: the
 * held call that asked for an approval may end long before the operator
 * looks (its approval_wait passed, the client cancelled or timed out), but
 * `cordonctl approvals show` still prints what the approval would run.
 *
 * One copy per approval (identical calls coalesce into one), charged to the
 * held-argument budgets of the asking session's uid and of all
 * (held_arguments_per_uid, held_arguments_max; gateway-session.c) and
 * bounded in number by the pending-approval caps. A copy is freed as soon
 * as its approval stops being requested: decided by an operator, expired,
 * revoked (a grant or tier change of its tool, relaunch, revoke-all,
 * session end). The table never holds the arguments (approvals.h), so they
 * die with the process like the approval key. Uses gateway-session.c. */

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "approvals.h"
#include "daemon-state.h"

struct dheld_args {
	char approval_id[CORDON_ID_STRING_MAX];
	char session[CORDON_SESSION_ID_MAX];
	uint64_t subject;    /* whose budget it is charged to (struct duid) */
	uint64_t expires_at; /* µs, the approval's expiry when it was kept */
	char *jcs;	     /* the canonical bytes the binding covers */
	size_t len;
	struct dheld_args *next;
};

/* Charges len bytes to uid's and the global budget before an approval is
 * requested: 0, or -EDQUOT / -ENOMEM with the refusal written to ret_msg
 * (nothing charged). The charge goes to approval_args_adopt() or back with
 * approval_args_uncharge(). */
int approval_args_charge(struct cordon_daemon *d, uint64_t subject, size_t len, char *ret_msg, size_t msg_size);
void approval_args_uncharge(struct cordon_daemon *d, uint64_t subject, size_t len);

/* Keeps a copy of jcs for the requested approval info (asked by session,
 * charged to uid beforehand). When a copy of that approval is already kept
 * (a coalesced call) the charge goes back and nothing changes. Returns 0, or
 * -ENOMEM (the charge goes back; the operator then sees no arguments). */
int approval_args_adopt(struct cordon_daemon *d, const struct cordon_approval_info *info, const char *session,
			uint64_t subject, const char *jcs, size_t len);

/* New reference: the kept arguments of approval_id, or NULL. */
json_t *approval_args_get(struct cordon_daemon *d, const char *approval_id);

/* Frees the copy of approval_id (its approval was decided). */
void approval_args_forget(struct cordon_daemon *d, const char *approval_id);

/* Frees the copies of session's approvals (the session ended: they are
 * revoked). */
void approval_args_session_ended(struct cordon_daemon *d, const char *session);

/* From the tick: frees every copy whose approval is no longer requested
 * (expired, revoked, decided elsewhere) or gone from the table. */
void approval_args_sweep(struct cordon_daemon *d);

/* Frees every copy (daemon shutdown). */
void approval_args_free_all(struct cordon_daemon *d);
