/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The canonical arguments of pending approvals, kept in cordond's memory
 * (approval-args.c, issue 14) so the operator never decides blind: the
 * held call that asked for an approval may end long before the operator
 * looks (its approval_wait passed, the client cancelled or timed out), but
 * `cordonctl approvals show` still prints what the approval would run.
 *
 * While the asking call waits, its own copy is the one shown; when the call
 * ends with the approval still pending, its copy moves here with its charge
 * on the held-argument budgets of the asking subject and of all
 * (held_arguments_per_uid, held_arguments_max; gateway-session.c), so the
 * same bytes are never held or charged twice. One copy per approval
 * (identical calls coalesce into one), bounded in number by the
 * pending-approval caps. A copy is freed as soon
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

/* Takes over a held call's canonical arguments (*jcs, len bytes, already
 * charged to subject's and the global held budget) for approval_id, when
 * the call ends while that approval is still requested and unexpired and
 * no copy is kept yet: returns 1, *jcs is NULL and the charge is the
 * approval's from now on. Otherwise returns 0 and changes nothing (the
 * caller frees and releases as usual). */
int approval_args_take(struct cordon_daemon *d, const char *approval_id, const char *session, uint64_t subject,
		       char **jcs, size_t len);

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
