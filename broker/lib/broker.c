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
	return cordon_broker_stop_because(db, NULL);
}

int cordon_broker_stop_because(struct cordon_db *db, const char *reason)
{
	struct cordon_actor sys = cordon_actor_system();
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_BROKER_STOP, .actor = &sys,
					 .reason = reason };
	int r;

	r = cordon_audit_append(db, &ev);
	if (r < 0)
		return r;
	r = cordon_audit_checkpoint(db);
	return r < 0 ? r : 0;
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
	/* Children before parents, so foreign keys hold throughout: finished
	 * actions and their identities (never an outcome_unknown action), then
	 * decided approvals no action refers to, then ended delegations. */
	r = actions_prune_tx(db, cutoff, &res.idempotency, &res.actions);
	if (r >= 0)
		r = approvals_prune_tx(db, cutoff, &res.approvals);
	if (r >= 0)
		r = delegations_prune_tx(db, cutoff, &res.delegations);
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

int cordon_broker_status(struct cordon_db *db, struct cordon_broker_status *ret)
{
	struct cordon_broker_status s = {};
	int r;

	if ((r = connectors_count(db, &s.connectors)) < 0 ||
	    (r = approvals_count(db, CORDON_STATE_BIT(CORDON_APPROVAL_REQUESTED), &s.approvals_pending)) < 0 ||
	    (r = delegations_count(db, CORDON_STATE_BIT(CORDON_DELEGATION_PENDING), &s.delegations_pending)) < 0 ||
	    (r = actions_count(
		     db, CORDON_STATE_BIT(CORDON_ACTION_ABANDONED) | CORDON_STATE_BIT(CORDON_ACTION_OUTCOME_UNKNOWN),
		     &s.actions_unresolved)) < 0 ||
	    (r = inventory_count(
		     db, CORDON_STATE_BIT(CORDON_INVENTORY_PENDING_REVIEW) | CORDON_STATE_BIT(CORDON_INVENTORY_CHANGED),
		     &s.inventory_to_review)) < 0 ||
	    (r = cordon_db_meta_get(db, "audit_last_seq", &s.audit_last_seq)) < 0 ||
	    (r = cordon_db_policy_epoch(db, &s.policy_epoch)) < 0)
		return r;
	*ret = s;
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
