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
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
						 .event = CORDON_AUDIT_BROKER_RECOVERY,
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
		r = prune_one(db,
			      "DELETE FROM approvals WHERE state IN (2, 3, 4, 5) AND coalesce(decided_at, created_at) < ?1 "
			      "AND id NOT IN (SELECT approval_id FROM actions WHERE approval_id IS NOT NULL)",
			      cutoff, &res.approvals);
	if (r >= 0)
		r = prune_one(db,
			      "DELETE FROM delegations WHERE state IN (2, 3, 4) AND coalesce(ended_at, created_at) < ?1",
			      cutoff, &res.delegations);
	if (r < 0)
		return r;
	{
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
						 .event = CORDON_AUDIT_RETENTION,
						 .actor = actor,
						 .count = (int64_t)(res.idempotency + res.actions + res.approvals +
								    res.delegations) };
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

int snapshot_decide_tx(struct cordon_db *db, const struct cordon_decide_request *req, uint64_t request_epoch,
		       struct cordon_broker_decision *out)
{
	struct cordon_inventory_record rec = {};
	struct cordon_inventory_entry entry;
	struct cordon_risk_policy_owned pol = {};
	struct cordon_delegation_info *dels = NULL;
	struct cordon_delegation_view *views = NULL;
	char **grant = NULL;
	size_t n_grant = 0, n_dels = 0;
	bool have_inv = false;
	int r;

	r = cordon_connector_generation(db, req->connector, &out->generation);
	if (r < 0)
		goto out;
	r = cordon_db_policy_epoch(db, &out->policy_epoch);
	if (r < 0)
		goto out;
	r = cordon_grants_list(db, req->connector, &grant, &n_grant);
	if (r < 0)
		goto out;
	r = cordon_inventory_get(db, req->connector, req->tool, &rec);
	if (r < 0 && r != -ENOENT)
		goto out;
	have_inv = r >= 0;
	if (have_inv)
		cordon_inventory_record_view(&rec, &entry);
	r = cordon_risk_policy_load(db, req->connector, &pol);
	if (r < 0)
		goto out;
	r = cordon_delegations_active(db, req->connector, &dels, &n_dels);
	if (r < 0)
		goto out;
	r = cordon_delegations_views(dels, n_dels, &views);
	if (r < 0)
		goto out;

	{
		struct cordon_authz_request areq = { .session = req->session,
						     .connector = req->connector,
						     .tool = req->tool,
						     .fingerprint = req->fingerprint,
						     .policy_epoch = request_epoch ? request_epoch : out->policy_epoch,
						     .delegation = req->delegation,
						     .now = cordon_db_now(db) };
		struct cordon_authz_input in = { .connector = req->connector,
						 .tool = req->tool,
						 .inventory = have_inv ? &entry : NULL,
						 .grant = (const char *const *)grant,
						 .n_grant = n_grant,
						 .have_grant_row = true,
						 .policy = &pol.policy,
						 .delegations = views,
						 .n_delegations = n_dels,
						 .policy_epoch = out->policy_epoch,
						 .request = &areq };
		out->decision = cordon_authz_decide(&in);
	}
	r = 0;
out:
	cordon_inventory_record_done(&rec);
	cordon_risk_policy_owned_done(&pol);
	strv_free(grant);
	free(views);
	cordon_delegations_free(dels);
	return r;
}

int cordon_broker_decide(struct cordon_db *db, const struct cordon_decide_request *req,
			 struct cordon_broker_decision *ret)
{
	_cleanup_tx_ struct db_tx tx = {};
	struct cordon_broker_decision out = {};
	int r;

	/* Whatever happens below, the answer starts as a deny. */
	*ret = (struct cordon_broker_decision){
		.decision = { .verdict = CORDON_VERDICT_DENY, .tier = CORDON_RISK_HIGH, .reason = CORDON_DENY_INVALID_INPUT }
	};
	if (!req || !connector_id_is_valid(req->connector) || !cordon_tool_name_is_valid(req->tool) ||
	    !cordon_session_id_is_valid(req->session))
		return db_failf(db, EINVAL, "invalid decision request");

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = snapshot_decide_tx(db, req, 0, &out);
	if (r < 0) {
		/* Denied for an error (an unknown connector, say): still on record. */
		char saved[sizeof(db->last_error)];
		struct cordon_actor actor = cordon_actor_session(req->session);
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
						 .event = CORDON_AUDIT_DECISION,
						 .actor = &actor,
						 .connector = req->connector,
						 .tool = req->tool,
						 .decision = "deny",
						 .reason = r == -ENOENT ? "unknown-connector" : "error" };

		memcpy(saved, db->last_error, sizeof(saved));
		db_tx_cleanup(&tx);
		tx.open = false;
		(void)cordon_audit_append(db, &ev);
		memcpy(db->last_error, saved, sizeof(saved));
		return r;
	}
	{
		struct cordon_actor actor = cordon_actor_session(req->session);
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
						 .event = CORDON_AUDIT_DECISION,
						 .actor = &actor,
						 .connector = req->connector,
						 .tool = req->tool,
						 .tier = (int)out.decision.tier,
						 .decision = cordon_verdict_to_string(out.decision.verdict),
						 .reason = out.decision.verdict == CORDON_VERDICT_DENY
								   ? cordon_deny_reason_to_string(out.decision.reason)
								   : NULL,
						 .fingerprint = req->fingerprint,
						 .delegation_id = req->delegation,
						 .generation = (int64_t)out.generation };
		r = audit_append_tx(db, &ev);
	}
	if (r >= 0)
		r = db_tx_commit(&tx);
	if (r < 0) {
		/* Fail closed above read: without its record, nothing that
		 * changes anything goes ahead. */
		if (out.decision.verdict == CORDON_VERDICT_ALLOW && out.decision.tier == CORDON_RISK_READ) {
			*ret = out;
			return 0;
		}
		return r;
	}
	*ret = out;
	return 0;
}
