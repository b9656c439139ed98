/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "broker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "approvals.h"
#include "audit.h"
#include "broker-private.h"
#include "delegations.h"
#include "grants.h"
#include "policy.h"
#include "connectors.h"
#include "inventory.h"
#include "parse-util.h"

int cordon_broker_start(struct cordon_db *db, struct cordon_broker_start_result *ret)
{
	struct cordon_broker_start_result res = {};
	struct cordon_actor sys = cordon_actor_system();
	int r;

	{
		_cleanup_tx_ struct db_tx tx = {};
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_BROKER_START,
						 .actor = &sys };

		r = db_tx_begin(db, &tx);
		if (r < 0)
			return r;
		r = audit_append_tx(db, &ev);
		if (r < 0)
			return r;
		/* The previous process's key is gone: its approvals can never
		 * verify again. Say so in the log rather than let them linger. */
		r = approvals_revoke_all_at_start_tx(db, &res.approvals_revoked);
		if (r < 0)
			return r;
		r = db_tx_commit(&tx);
		if (r < 0)
			return r;
	}
	r = cordon_actions_recover(db, &res.abandoned, &res.outcome_unknown);
	if (r < 0)
		return r;
	r = cordon_delegations_expire(db, &res.delegations_expired);
	if (r < 0)
		return r;
	{
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_BROKER_RECOVERY,
						 .actor = &sys,
						 .count = (int64_t)(res.abandoned + res.outcome_unknown) };
		r = cordon_audit_append(db, &ev);
		if (r < 0)
			return r;
	}
	if (ret)
		*ret = res;
	return 0;
}

int cordon_broker_stop(struct cordon_db *db)
{
	struct cordon_actor sys = cordon_actor_system();
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_BROKER_STOP, .actor = &sys };
	int r;

	r = cordon_audit_append(db, &ev);
	if (r < 0)
		return r;
	r = cordon_audit_checkpoint(db);
	return r < 0 ? r : 0;
}

static int prune_one(struct cordon_db *db, const char *sql, uint64_t cutoff, uint64_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, sql, &st);
	if (r < 0)
		return r;
	if ((r = db_bind_int64(db, st, 1, (int64_t)cutoff)) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	*ret_n = (uint64_t)sqlite3_changes(db->sql);
	return 0;
}

int cordon_broker_prune(struct cordon_db *db, const struct cordon_actor *actor, uint64_t max_age_usec,
			struct cordon_prune_result *ret)
{
	_cleanup_tx_ struct db_tx tx = {};
	struct cordon_prune_result res = {};
	uint64_t now = cordon_db_now(db), cutoff;
	int r;

	if (!actor || actor->kind == CORDON_ACTOR_SESSION)
		return db_failf(db, EPERM, "a session cannot prune state");
	if (max_age_usec == 0)
		return db_failf(db, EINVAL, "retention age must be positive");
	cutoff = now > max_age_usec ? now - max_age_usec : 0;
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	/* Children before parents, so foreign keys hold throughout. States:
	 * actions 2 succeeded, 3 failed, 4 abandoned (never 5 outcome_unknown);
	 * approvals 2..5 (decided); delegations 2..4 (ended). */
	r = prune_one(db,
		      "DELETE FROM idempotency WHERE created_at < ?1 AND action_id IN "
		      "(SELECT id FROM actions WHERE state IN (2, 3, 4) AND updated_at < ?1)",
		      cutoff, &res.idempotency);
	if (r >= 0)
		r = prune_one(db,
			      "DELETE FROM actions WHERE state IN (2, 3, 4) AND updated_at < ?1 AND id NOT IN "
			      "(SELECT action_id FROM idempotency)",
			      cutoff, &res.actions);
	if (r >= 0)
		r = prune_one(
			db,
			"DELETE FROM approvals WHERE state IN (2, 3, 4, 5) AND coalesce(decided_at, created_at) < ?1 "
			"AND id NOT IN (SELECT approval_id FROM actions WHERE approval_id IS NOT NULL)",
			cutoff, &res.approvals);
	if (r >= 0)
		r = prune_one(
			db, "DELETE FROM delegations WHERE state IN (2, 3, 4) AND coalesce(ended_at, created_at) < ?1",
			cutoff, &res.delegations);
	if (r < 0)
		return r;
	{
		struct cordon_audit_event ev = {
			CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_RETENTION, .actor = actor,
			.count = (int64_t)(res.idempotency + res.actions + res.approvals + res.delegations)
		};
		r = audit_append_tx(db, &ev);
		if (r < 0)
			return r;
	}
	r = db_tx_commit(&tx);
	if (r < 0)
		return r;
	if (ret)
		*ret = res;
	return 0;
}

int cordon_broker_tick(struct cordon_db *db)
{
	int r, ret = 0;

	r = cordon_approvals_expire(db, NULL);
	if (r < 0 && ret == 0)
		ret = r;
	r = cordon_delegations_expire(db, NULL);
	if (r < 0 && ret == 0)
		ret = r;
	r = cordon_audit_maybe_checkpoint(db);
	if (r < 0 && ret == 0)
		ret = r;
	return ret;
}
