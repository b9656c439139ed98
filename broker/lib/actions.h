/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The action ledger, idempotency and resource locks.
 *
 * Ledger: prepared -> dispatched -> succeeded | failed. At start-up every
 * prepared action becomes abandoned (provably never sent: the daemon marks
 * an action dispatched, and commits that, before the first byte goes to the
 * connector) and every dispatched one outcome_unknown; neither is ever
 * retried automatically, an operator resolves them.
 *
 * Replay classes come from the profile (risk_policy.replay), never from the
 * connector's idempotentHint. Replay-safe tools with an idempotency identity
 * (the `_meta` key io.cordon/idempotency-key, set by the infrastructure):
 *   same identity, same canonical request, finished -> the stored result,
 *                                                     no re-execution
 *   same identity, different request               -> -EEXIST (conflict)
 *   same identity, still prepared/dispatched       -> -EINPROGRESS
 * Unsafe tools are never retried; a repeat is a new call that needs a new
 * approval (the old one is consumed).
 *
 * An identity is scoped to (connector, subject, key): the subject is the
 * caller's identity as the infrastructure proves it ("uid:<n>", the gateway
 * session's SO_PEERCRED uid), never anything the client says. Another
 * subject sending the same key neither sees the stored result nor takes,
 * blocks or probes the key: it is a different identity, decided on its own
 * (an approval of its own above read tier). Sessions of one subject share
 * the scope, so the infrastructure's retry after a lost connection (a new
 * session) still gets the stored result instead of a second execution. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actor.h"
#include "approvals.h"
#include "crypto.h"
#include "db.h"

#include "action-state.h"

#define CORDON_IDEMPOTENCY_META_KEY "io.cordon/idempotency-key"
#define CORDON_IDEMPOTENCY_KEY_MAX  128
#define CORDON_RESULT_MAX_BYTES	    (4u * 1024 * 1024)

struct cordon_action_begin {
	struct cordon_call call;     /* what will be forwarded (tier from the decision) */
	const char *approval_id;     /* required above read tier */
	const char *idempotency_key; /* from _meta; NULL when absent */
	/* Scope of idempotency_key: the subject the infrastructure proved,
	 * "uid:<n>" for a gateway session (1..63 characters of a session id's
	 * alphabet). NULL scopes the key to call.session alone (a caller that
	 * knows no subject gets the narrowest scope). */
	const char *subject;
	const char *delegation; /* delegated root the call relies on, or NULL */
	/* Create the action already `dispatched` (one commit fewer per call).
	 * A crash between this commit and the send then shows the action as
	 * outcome_unknown rather than abandoned: conservative, never a replay. */
	bool dispatch_now;
};

enum cordon_begin_outcome {
	CORDON_BEGIN_DISPATCH = 0,	/* a new action is prepared: mark it dispatched, then send */
	CORDON_BEGIN_STORED_RESULT = 1, /* same identity, same request, finished: return the stored result */
};

struct cordon_action_begin_result {
	enum cordon_begin_outcome outcome;
	char action_id[CORDON_ID_STRING_MAX];
	enum cordon_replay replay;
	/* CORDON_BEGIN_STORED_RESULT: */
	enum cordon_action_state stored_state; /* succeeded or failed */
	char *result;			       /* malloc'd; free() */
	size_t result_len;
};

/* In ONE transaction: the decision again over the current state (grant,
 * inventory, tier, epoch, generation, delegation: so nothing that changed
 * since cordon_broker_decide() slips through, read tier included), the
 * idempotency check, approval consumption (CAS) above read tier, the action
 * record `prepared`, audit records. Nothing is sent by this function and
 * nothing may be sent unless it returns 0 with outcome DISPATCH. A refused
 * begin is audited (a "decision" deny record with a reason word) after the
 * rollback.
 * Returns 0; -EACCES (the decision now denies), -ESTALE (the call's tier,
 * policy epoch or launch generation is no longer current: decide again),
 * -EINVAL (invalid call, key or subject),
 * -EEXIST (identity reused for a different request),
 * -EINPROGRESS (identity in flight), -ENOTRECOVERABLE (identity's action has
 * an unknown outcome: an operator must resolve it), -ENODATA (stored result
 * was sealed by an earlier broker process and cannot be opened; the call ran
 * and is not repeated), the approval_consume_tx() errors, -EIO when the audit
 * append failed (fail closed), -errno. */
int cordon_action_begin(struct cordon_db *db, struct cordon_key *key, const struct cordon_action_begin *req,
			struct cordon_action_begin_result *ret);
void cordon_action_begin_result_done(struct cordon_action_begin_result *r);

/* prepared -> dispatched. Commit before writing to the connector; on error do
 * not send. Returns 0, -ESTALE (not prepared), -ENOENT, -errno. */
int cordon_action_dispatched(struct cordon_db *db, const char *action_id);

/* dispatched -> succeeded | failed; stores the (sealed) result for a
 * replay-safe call with an identity. result may be NULL. */
int cordon_action_complete(struct cordon_db *db, struct cordon_key *key, const char *action_id, bool succeeded,
			   const void *result, size_t result_len);

/* dispatched -> failed without a result, the audit record carrying reason
 * (a fixed vocabulary word: "connector-error" when the connector answered
 * with a JSON-RPC error, "connector-malformed" when its answer was neither a
 * result nor a well-formed error). Returns as cordon_action_complete(). */
int cordon_action_fail(struct cordon_db *db, const char *action_id, const char *reason);

/* Start-up recovery: prepared -> abandoned, dispatched -> outcome_unknown.
 * Writes the counts (may be NULL). */
int cordon_actions_recover(struct cordon_db *db, uint64_t *ret_abandoned, uint64_t *ret_unknown);

/* Operator resolution of an outcome_unknown (or abandoned) action to
 * succeeded or failed. -EPERM for non-operators, -ESTALE in another state. */
int cordon_action_resolve(struct cordon_db *db, const struct cordon_actor *actor, const char *action_id,
			  bool succeeded);

/* The worker that was running a dispatched action died: the action becomes
 * outcome_unknown now (not at the next start), audited with reason
 * "worker-lost" and the system actor. Only ever reduces authority. Returns 0;
 * -ESTALE when the action is not dispatched; -errno. */
int cordon_action_worker_lost(struct cordon_db *db, const char *action_id);

int cordon_action_state(struct cordon_db *db, const char *action_id, enum cordon_action_state *ret);

struct cordon_action_info {
	char id[CORDON_ID_STRING_MAX];
	char session[64], connector[33], tool[129];
	enum cordon_action_state state;
	enum cordon_risk tier;
	enum cordon_replay replay;
	uint64_t created_at, updated_at;
	char approval_id[CORDON_ID_STRING_MAX]; /* "" when none (read tier) */
	char resolved_by[128];			/* the operator who resolved it; "" when none */
};

/* Calls cb for each action the filter selects (NULL: every action, oldest
 * first): the operator's queue is states abandoned and outcome_unknown. cb
 * must not change the database (the walk holds a read cursor); returning
 * < 0 stops the walk and is returned. */
typedef int (*cordon_action_cb)(const struct cordon_action_info *info, void *userdata);
int cordon_actions_list(struct cordon_db *db, const struct cordon_list_filter *f, cordon_action_cb cb, void *userdata);
const char *cordon_action_state_to_string(enum cordon_action_state s);

/* Request identity for idempotency: SHA-256(LP("cordon.request.v1") ‖
 * LP(tool) ‖ LP(JCS(arguments))). */
int cordon_request_hash(const char *tool, const char *arguments_jcs, size_t len, uint8_t ret[static 32]);

/* ---- Resource locks with fencing tokens ---------------------------------
 * Every acquisition of a resource gets a token greater than any token ever
 * issued for it (stored, so it survives restarts). A holder whose lease
 * expired may still try to commit with its old token: release/validate with
 * a token older than the newest is refused (-ESTALE), so a paused holder can
 * never overwrite the work of the one that came after it. */

/* Acquires: 0 and *ret_token; -EBUSY while another holder's lease is live. */
int cordon_lock_acquire(struct cordon_db *db, const char *resource, const char *holder, uint64_t lease_usec,
			uint64_t *ret_token);
/* 0 when token is the newest and its lease is live; -ESTALE otherwise. */
int cordon_lock_validate(struct cordon_db *db, const char *resource, uint64_t token);
/* Releases: 0; -ESTALE for an older token; -ENOENT for an unknown resource. */
int cordon_lock_release(struct cordon_db *db, const char *resource, uint64_t token);
