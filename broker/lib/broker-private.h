/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Cross-module internals of the broker library. All *_tx functions run
 * inside the caller's open transaction. */

#include "actor.h"
#include "db-private.h"

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

/* Bumps the policy epoch and revokes every outstanding approval. */
int policy_epoch_bump_tx(struct cordon_db *db, const struct cordon_actor *actor, const char *reason,
			 uint64_t *ret_epoch);

/* Ends every pending/active delegation in scope (NULL connector: all). */
int delegations_end_all_tx(struct cordon_db *db, const struct cordon_actor *actor, const char *session,
			   const char *reason, uint64_t *ret_n);

/* 0 when the connector is installed, -ENOENT otherwise (connectors.c). */
int connector_exists_tx(struct cordon_db *db, const char *connector);

/* Inserts or updates a tool's risk_policy row (policy.c). tier -1 keeps the
 * stored tier (NULL: the connector's default); replay -1 keeps the stored
 * class. */
int policy_upsert_tx(struct cordon_db *db, const char *connector, const char *tool, int tier, int replay);

/* Inserts one grant row and audits it (grants.c); -EEXIST when granted. */
int grant_insert_tx(struct cordon_db *db, const struct cordon_actor *actor, const char *connector, const char *tool);
