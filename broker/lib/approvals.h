/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One-use approvals bound to the exact call they approve.
 *
 *   requested -> approved | denied | expired | revoked
 *   approved  -> consumed | expired | revoked
 *
 * binding = HMAC-SHA-256(process key, approval subkey, LP fields: session,
 * connector, launch generation, tool, tool fingerprint, policy epoch (bound
 * as 0: see below), tier, JCS(arguments)) — canon's cordon_approval_binding(). The key never leaves
 * memory; the table stores metadata and the binding (useless without the
 * key). Consumption recomputes the binding from the call about to be
 * forwarded, compares in constant time and flips approved -> consumed with a
 * compare-and-swap in the transaction that creates the action record and
 * appends the audit record (cordon_action_begin). Session end, relaunch,
 * fingerprint change, a grant or tier change of the approval's own tool,
 * revoke-all and operator revoke revoke. A change to another tool's grant or
 * tier does not (issue 14): the policy epoch is not bound, it only makes a
 * decision taken before the change stale, so the call is decided again
 * before it consumes the approval. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actor.h"
#include "crypto.h"
#include "db.h"
#include "profile.h"

#include "approval-state.h"

/* A call as the broker is about to forward it: everything the binding covers. */
struct cordon_call {
	const char *session;
	const char *connector;
	const char *tool;
	const char *fingerprint; /* 64 hex: the reviewed fingerprint */
	uint64_t generation;	 /* connector launch generation */
	uint64_t policy_epoch;
	enum cordon_risk tier;
	const char *arguments_jcs; /* canonical bytes of the arguments ("{}" when absent) */
	size_t arguments_jcs_len;
};

struct cordon_approval_limits {
	uint32_t per_session; /* pending (requested) approvals per session; 0: 16 */
	uint32_t total;	      /* pending approvals in total; 0: 256 */
};

#define CORDON_ID_STRING_MAX 48

struct cordon_approval_info {
	char id[CORDON_ID_STRING_MAX];
	char display_code[CORDON_DISPLAY_CODE_LEN + 1];
	enum cordon_approval_state state;
	enum cordon_risk tier;
	char session[64];
	char connector[33];
	char tool[129];
	uint64_t created_at, expires_at;
	bool coalesced; /* request: an identical pending/approved approval was returned */
};

/* Requests an approval for call (tier must be above read). An identical
 * outstanding approval (same binding, requested or approved, unexpired) is
 * returned instead of a new one. Returns 0 and fills *ret; -EDQUOT when the
 * per-session or total cap of pending approvals is reached (nothing is
 * evicted); -EINVAL; -errno. */
int cordon_approval_request(struct cordon_db *db, struct cordon_key *key, const struct cordon_approval_limits *lim,
			    const struct cordon_call *call, struct cordon_approval_info *ret);

/* Operator decision. For the critical tier, approve needs the approval's
 * confirmation code (cordon_approval_confirmation_code). Returns 0; -EPERM
 * (not an operator), -ENOENT, -EALREADY (already decided), -ETIME (expired;
 * it is marked expired), -EACCES (critical without the right code). */
int cordon_approval_decide(struct cordon_db *db, struct cordon_key *key, const struct cordon_actor *actor,
			   const char *id, bool approve, const char *confirmation_code);

/* The per-approval confirmation code of a critical approval, for the operator
 * surface only (-EPERM for anyone else). Derived from the process key and the
 * approval (never stored): HMAC(token subkey, "cordon.confirm" ‖ LP(id) ‖
 * LP(binding)) -> base32 of the first 5 bytes. */
int cordon_approval_confirmation_code(struct cordon_db *db, struct cordon_key *key, const struct cordon_actor *actor,
				      const char *id, char ret[static CORDON_CONFIRM_CODE_LEN + 1]);

/* Operator revoke of one approval (requested or approved). */
int cordon_approval_revoke(struct cordon_db *db, const struct cordon_actor *actor, const char *id);

/* A client cancelled the call that waits on approval_id: withdraws it
 * (requested -> revoked, reason "client-cancelled", decided by
 * "session:<session>", audited with the session actor). Only a still
 * requested approval of this very session: never another session's, never
 * one an operator already approved. Returns 0; -EALREADY when the approval
 * is not pending for this session; -errno. */
int cordon_approval_cancel(struct cordon_db *db, const char *session, const char *approval_id);

int cordon_approval_get(struct cordon_db *db, const char *id, struct cordon_approval_info *ret);

/* Calls cb for each approval the filter selects (NULL: every approval,
 * oldest first), for the operator surface. cb must not change the database
 * (the walk holds a read cursor); returning < 0 stops the walk and is
 * returned. Returns 0 or -errno. */
typedef int (*cordon_approval_cb)(const struct cordon_approval_info *info, void *userdata);
int cordon_approvals_list(struct cordon_db *db, const struct cordon_list_filter *f, cordon_approval_cb cb,
			  void *userdata);

/* Marks every requested/approved approval past its expiry expired (audited).
 * Writes the count to *ret_n (may be NULL). */
int cordon_approvals_expire(struct cordon_db *db, uint64_t *ret_n);

/* Session end (lifecycle.c): revokes its approvals and ends its delegations. */
int cordon_session_end(struct cordon_db *db, const char *session);

/* Start-up: approvals die with the process key; revoke every outstanding one. */
int approvals_revoke_all_at_start_tx(struct cordon_db *db, uint64_t *ret_n);

/* Inside the caller's transaction: checks approval `id` against call and
 * consumes it (CAS approved -> consumed), auditing the consumption.
 * Returns 0; -ENOENT (missing), -EAGAIN (still requested), -EACCES (denied),
 * -ETIME (expired), -ECANCELED (revoked), -EALREADY (already consumed),
 * -EBADMSG (binding does not match the call: other session, connector,
 * generation, tool, fingerprint, epoch, tier or arguments). */
int approval_consume_tx(struct cordon_db *db, struct cordon_key *key, const char *id, const struct cordon_call *call,
			const char *action_id);

/* Binding of a call (exposed for tests and for the daemon's lookups). */
int cordon_call_binding(struct cordon_key *key, const struct cordon_call *call, uint8_t ret[static CORDON_HASH_LEN]);

const char *cordon_approval_state_to_string(enum cordon_approval_state s);

/* Resolves an approval reference — a full id ("ap_...") or a display code,
 * case-insensitive — to an id written to ret. A display code resolves to
 * the outstanding (requested/approved) approval that has it, else to the
 * newest finished one (expired, consumed, denied, revoked), so the caller
 * can say which (cordon_approval_get); -ENOENT only when no approval in the
 * table has it. 0, -ENOENT, -ENOTUNIQ (a display code shared by several
 * outstanding ones) or another -errno. */
int cordon_approval_resolve(struct cordon_db *db, const char *ref, char ret[static 48]);
