/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Operations that span tables, each in ONE transaction composed from the
 * owning modules' *_tx functions (this file runs no SQL of its own): the
 * life of a connector (install, relaunch, removal), the end of a session,
 * and revoke-all. The table modules never call up into this file, which is
 * what keeps the core's call graph acyclic (docs/architecture.md). */
#include <errno.h>
#include <stdlib.h>

#include "actions.h"
#include "approvals.h"
#include "audit.h"
#include "authz.h"
#include "broker-private.h"
#include "connectors.h"
#include "grants.h"
#include "parse-util.h"

static bool actor_may_install(const struct cordon_actor *a)
{
	return a && (a->kind == CORDON_ACTOR_OPERATOR || a->kind == CORDON_ACTOR_SYSTEM);
}

int cordon_connector_install(struct cordon_db *db, const struct cordon_actor *actor, const struct cordon_profile *p)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_free_ char *ceilings = NULL;
	int r;

	if (!actor_may_install(actor))
		return db_failf(db, EPERM, "only an operator or the broker may install a connector");
	if (!p || !p->id || !connector_id_is_valid(p->id) || (unsigned)p->default_risk > CORDON_RISK_CRITICAL)
		return db_failf(db, EINVAL, "invalid profile for install");
	for (size_t i = 0; i < p->n_risk; i++)
		if (!cordon_tool_name_is_valid(p->risk[i].tool) || (unsigned)p->risk[i].risk > CORDON_RISK_CRITICAL)
			return db_failf(db, EINVAL, "invalid risk entry %zu in profile '%s'", i, p->id);
	for (size_t i = 0; i < p->n_replay; i++)
		if (!cordon_tool_name_is_valid(p->replay[i].tool))
			return db_failf(db, EINVAL, "invalid replay entry %zu in profile '%s'", i, p->id);
	for (size_t i = 0; i < p->n_grant; i++)
		if (!cordon_tool_name_is_valid(p->grant[i]))
			return db_failf(db, EINVAL, "invalid grant entry %zu in profile '%s'", i, p->id);
	r = connector_ceilings_encode(db, p, &ceilings);
	if (r < 0)
		return r;

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = connector_insert_tx(db, p, ceilings);
	if (r < 0)
		return r;
	for (size_t i = 0; i < p->n_risk; i++) {
		r = policy_upsert_tx(db, p->id, p->risk[i].tool, (int)p->risk[i].risk, -1);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < p->n_replay; i++) {
		r = policy_upsert_tx(db, p->id, p->replay[i].tool, -1,
				     p->replay[i].replay == CORDON_REPLAY_SAFE ? CORDON_REPLAY_SAFE
									       : CORDON_REPLAY_UNSAFE);
		if (r < 0)
			return r;
	}
	{
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_CONNECTOR,
						 .actor = actor,	  .connector = p->id,
						 .state = "installed",	  .tier = (int)p->default_risk,
						 .generation = 0 };
		r = audit_append_tx(db, &ev);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < p->n_grant; i++) {
		r = grant_insert_tx(db, actor, p->id, p->grant[i]);
		if (r == -EEXIST)
			continue; /* a profile listing a tool twice grants it once */
		if (r < 0)
			return r;
	}
	/* No epoch bump: installing adds a connector and changes nothing any
	 * outstanding approval (of another connector) was bound to. */
	return db_tx_commit(&tx);
}

int cordon_connector_relaunch(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
			      uint64_t *ret_generation)
{
	_cleanup_tx_ struct db_tx tx = {};
	uint64_t gen;
	int r;

	if (!actor_may_install(actor))
		return db_failf(db, EPERM, "only an operator or the broker may relaunch a connector");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = connector_generation_bump_tx(db, connector, &gen);
	if (r < 0)
		return r;
	r = approvals_revoke_tx(db, actor, APPROVALS_CONNECTOR, connector, NULL, "relaunch", NULL);
	if (r < 0)
		return r;
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_CONNECTOR,
					 .actor = actor,	  .connector = connector,
					 .state = "launched",	  .generation = (int64_t)gen };
	r = audit_append_tx(db, &ev);
	if (r < 0)
		return r;
	r = db_tx_commit(&tx);
	if (r < 0)
		return r;
	if (ret_generation)
		*ret_generation = gen;
	return 0;
}

int cordon_connector_remove(struct cordon_db *db, const struct cordon_actor *actor, const char *connector)
{
	_cleanup_tx_ struct db_tx tx = {};
	uint64_t unresolved;
	int r;

	if (!actor_may_install(actor))
		return db_failf(db, EPERM, "only an operator or the broker may remove a connector");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	/* The ledger of unresolved effects must outlive nothing: an action that
	 * is prepared, dispatched or has an unknown outcome needs an operator
	 * first. */
	r = actions_unresolved_tx(db, connector, &unresolved);
	if (r < 0)
		return r;
	if (unresolved > 0)
		return db_failf(db, EBUSY,
				"connector has unresolved actions; resolve them first (cordonctl actions list)");
	r = connector_delete_tx(db, connector);
	if (r < 0)
		return r;
	/* Grants, inventory, approvals, delegations and finished actions go
	 * with it (ON DELETE CASCADE); the audit log keeps their history. */
	r = policy_epoch_add_tx(db, NULL);
	if (r < 0)
		return r;
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_CONNECTOR, .actor = actor,
					 .connector = connector, .state = "removed" };
	r = audit_append_tx(db, &ev);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

int cordon_session_end(struct cordon_db *db, const char *session)
{
	_cleanup_tx_ struct db_tx tx = {};
	struct cordon_actor sys = cordon_actor_system();
	int r;

	if (!cordon_session_id_is_valid(session))
		return db_failf(db, EINVAL, "invalid session id");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = approvals_revoke_tx(db, &sys, APPROVALS_SESSION, session, NULL, "session-end", NULL);
	if (r < 0)
		return r;
	r = delegations_end_all_tx(db, &sys, session, "session-end", NULL);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

int cordon_revoke_all(struct cordon_db *db, const struct cordon_actor *actor, struct cordon_revoke_all_result *ret)
{
	_cleanup_tx_ struct db_tx tx = {};
	struct cordon_revoke_all_result res = {};
	int r;

	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "only an operator may revoke all");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = grants_delete_all_tx(db, &res.grants);
	if (r < 0)
		return r;
	r = approvals_revoke_tx(db, actor, APPROVALS_ALL, NULL, NULL, "revoke-all", &res.approvals);
	if (r < 0)
		return r;
	r = delegations_end_all_tx(db, actor, NULL, "revoke-all", &res.delegations);
	if (r < 0)
		return r;
	r = policy_epoch_add_tx(db, NULL);
	if (r < 0)
		return r;
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_GRANT, .actor = actor,
					 .state = "revoke-all",
					 .count = (int64_t)(res.grants + res.approvals + res.delegations) };
	r = audit_append_tx(db, &ev);
	if (r < 0)
		return r;
	r = db_tx_commit(&tx);
	if (r < 0)
		return r;
	if (ret)
		*ret = res;
	return 0;
}
