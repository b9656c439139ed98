/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One decision over a consistent snapshot (grant, inventory entry, risk
 * policy, delegations, epoch, generation) with its audit record. Used by the
 * daemon's tools/call path and, inside its own transaction, by actions.c to
 * re-decide before an action begins. */
#include "decide.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "broker-private.h"
#include "delegations.h"
#include "connectors.h"
#include "grants.h"
#include "inventory.h"
#include "parse-util.h"
#include "policy.h"
#include "strv.h"

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
	*ret = (struct cordon_broker_decision){ .decision = { .verdict = CORDON_VERDICT_DENY,
							      .tier = CORDON_RISK_HIGH,
							      .reason = CORDON_DENY_INVALID_INPUT } };
	if (!req || !connector_id_is_valid(req->connector) || !cordon_tool_name_is_valid(req->tool) ||
	    !cordon_session_id_is_valid(req->session))
		return db_failf(db, EINVAL, "invalid decision request");

	/* Relaxed (synchronous=NORMAL): the decision record is committed to
	 * the WAL before the call goes on, so a crash of this process never
	 * loses it, but it is not fsynced. Nothing irrevocable follows a
	 * decision before a durable commit: a call above read begins its
	 * action (and an approval is requested) in a durable transaction
	 * before anything is sent, and that fsync covers this record too.
	 * What a power failure can take is a tail of read and deny records,
	 * the calls the design already lets go on when their record cannot be
	 * written at all (below). One fdatasync per read call was most of a
	 * read call's cost (docs/performance.md). */
	r = db_tx_begin_relaxed(db, &tx);
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
	if (r >= 0)
		r = audit_after_relaxed_commit(db);
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
