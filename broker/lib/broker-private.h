/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Cross-module internals of the broker library, grouped by the module that
 * implements each (the one that owns the table it touches). All *_tx
 * functions run inside the caller's open transaction; the others read with
 * or without one.
 *
 * Who calls whom (docs/architecture.md): connectors.c calls no other table
 * module; approvals.c, delegations.c, grants.c and inventory.c read
 * connectors; policy.c's epoch bump revokes approvals; lifecycle.c and
 * broker.c compose operations over several tables and nothing in the
 * table modules calls them. */

#include <jansson.h>

#include "actor.h"
#include "db-private.h"
#include "profile.h"

/* ---- connectors.c -------------------------------------------------------- */

/* Validates the profile's ceilings (absolute, canonical) and encodes them
 * for the connectors row: a malloc'd JSON array. -EINVAL, -ENOMEM. */
int connector_ceilings_encode(struct cordon_db *db, const struct cordon_profile *p, char **ret);

/* Inserts the connector row of p (generation 0); -EEXIST when installed. */
int connector_insert_tx(struct cordon_db *db, const struct cordon_profile *p, const char *ceilings);

/* Bumps the launch generation and writes the new one; -ENOENT. */
int connector_generation_bump_tx(struct cordon_db *db, const char *connector, uint64_t *ret);

/* Deletes the row (its other tables' rows go by ON DELETE CASCADE); -ENOENT. */
int connector_delete_tx(struct cordon_db *db, const char *connector);

/* Columns of a connector's row; -ENOENT for an unknown connector. */
int connector_approval_ttl(struct cordon_db *db, const char *connector, uint64_t *ret_usec);
int connector_default_risk(struct cordon_db *db, const char *connector, enum cordon_risk *ret);
int connector_ceilings(struct cordon_db *db, const char *connector, json_t **ret); /* a JSON array */

int connectors_count(struct cordon_db *db, uint64_t *ret);

/* ---- policy.c (risk_policy and the policy epoch) ------------------------- */

/* Inserts or updates a tool's risk_policy row. tier -1 keeps the stored
 * tier (NULL: the connector's default); replay -1 keeps the stored class
 * (a new row: unsafe). */
int policy_upsert_tx(struct cordon_db *db, const char *connector, const char *tool, int tier, int replay);

/* Adds one to the policy epoch; writes the new epoch (ret may be NULL). */
int policy_epoch_add_tx(struct cordon_db *db, uint64_t *ret_epoch);

/* Bumps the policy epoch (every decision taken before is stale: decide
 * again) and revokes the outstanding approvals of connector's tool, the
 * ones the change affects; approvals of other tools stay (issue 14). */
int policy_epoch_bump_tx(struct cordon_db *db, const struct cordon_actor *actor, const char *reason,
			 const char *connector, const char *tool, uint64_t *ret_epoch);

/* ---- grants.c ------------------------------------------------------------ */

/* Inserts one grant row and audits it; -EEXIST when granted. */
int grant_insert_tx(struct cordon_db *db, const struct cordon_actor *actor, const char *connector, const char *tool);

/* Deletes every grant of every connector; writes the count. */
int grants_delete_all_tx(struct cordon_db *db, uint64_t *ret_n);

/* ---- approvals.c --------------------------------------------------------- */

enum approvals_scope {
	APPROVALS_ALL,
	APPROVALS_SESSION,   /* arg1 = session */
	APPROVALS_CONNECTOR, /* arg1 = connector */
	APPROVALS_TOOL,	     /* arg1 = connector, arg2 = tool */
};

/* Marks every requested/approved approval in scope revoked and audits each.
 * reason is a vocabulary word ("relaunch", "policy-epoch", ...). Writes the
 * count to *ret_n (may be NULL). */
int approvals_revoke_tx(struct cordon_db *db, const struct cordon_actor *actor, enum approvals_scope scope,
			const char *arg1, const char *arg2, const char *reason, uint64_t *ret_n);

/* Deletes decided approvals (denied, expired, revoked, consumed) decided
 * before cutoff that no remaining action refers to; writes the count. */
int approvals_prune_tx(struct cordon_db *db, uint64_t cutoff, uint64_t *ret_n);

/* Approvals in one of `states` (CORDON_STATE_BIT()s). */
int approvals_count(struct cordon_db *db, uint32_t states, uint64_t *ret);

/* ---- delegations.c ------------------------------------------------------- */

/* Ends every pending/active delegation of session (NULL: of every session). */
int delegations_end_all_tx(struct cordon_db *db, const struct cordon_actor *actor, const char *session,
			   const char *reason, uint64_t *ret_n);

/* Deletes ended delegations (revoked, expired, refused) ended before cutoff. */
int delegations_prune_tx(struct cordon_db *db, uint64_t cutoff, uint64_t *ret_n);

int delegations_count(struct cordon_db *db, uint32_t states, uint64_t *ret);

/* ---- inventory.c --------------------------------------------------------- */

/* Inventory entries (of every connector) in one of `states`. */
int inventory_count(struct cordon_db *db, uint32_t states, uint64_t *ret);

/* ---- actions.c (actions, idempotency, locks) ----------------------------- */

/* Actions of the connector that are prepared, dispatched or of unknown
 * outcome (those an operator must see resolved before it goes). */
int actions_unresolved_tx(struct cordon_db *db, const char *connector, uint64_t *ret_n);

/* Deletes finished actions (succeeded, failed, abandoned; never
 * outcome_unknown) last updated before cutoff, and idempotency identities
 * created before cutoff whose action is one of them; an action an identity
 * still names is kept. Writes both counts. */
int actions_prune_tx(struct cordon_db *db, uint64_t cutoff, uint64_t *ret_idempotency, uint64_t *ret_actions);

int actions_count(struct cordon_db *db, uint32_t states, uint64_t *ret);
