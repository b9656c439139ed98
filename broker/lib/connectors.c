/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The connectors table: install, launch generation, removal. Installing also
 * seeds the connector's risk policy (policy.c) and grant (grants.c) through
 * their modules' functions. */
#include "connectors.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>

#include "action-state.h"
#include "audit.h"
#include "authz.h"
#include "broker-private.h"
#include "parse-util.h"

int connector_exists_tx(struct cordon_db *db, const char *connector)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "SELECT 1 FROM connectors WHERE id = ?1", &st);
	if (r < 0)
		return r;
	r = db_bind_text(db, st, 1, connector);
	if (r < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	return r ? 0 : db_failf(db, ENOENT, "unknown connector");
}

static bool actor_may_install(const struct cordon_actor *a)
{
	return a && (a->kind == CORDON_ACTOR_OPERATOR || a->kind == CORDON_ACTOR_SYSTEM);
}

int cordon_connector_install(struct cordon_db *db, const struct cordon_actor *actor, const struct cordon_profile *p)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	_cleanup_free_ char *ceilings = NULL;
	json_t *arr;
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

	arr = json_array();
	if (!arr)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_ceiling; i++)
		if (!p->ceiling[i] || !path_is_absolute_canonical(p->ceiling[i]) ||
		    json_array_append_new(arr, json_string(p->ceiling[i])) < 0) {
			json_decref(arr);
			return db_failf(db, EINVAL, "invalid ceiling %zu in profile '%s'", i, p->id);
		}
	ceilings = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	if (!ceilings)
		return -ENOMEM;

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = db_prepare(db,
		       "INSERT INTO connectors(id, generation, default_risk, approval_ttl_sec, ceilings, installed_at) "
		       "VALUES (?1, 0, ?2, ?3, ?4, ?5)",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, p->id)) < 0 || (r = db_bind_int64(db, st, 2, p->default_risk)) < 0 ||
	    (r = db_bind_int64(db, st, 3, p->approval_ttl_sec ? (int64_t)p->approval_ttl_sec : 120)) < 0 ||
	    (r = db_bind_text(db, st, 4, ceilings)) < 0 ||
	    (r = db_bind_int64(db, st, 5, (int64_t)cordon_db_now(db))) < 0)
		return r;
	r = db_step_done(db, st);
	if (r == -EEXIST)
		return db_failf(db, EEXIST, "connector '%s' is already installed", p->id);
	if (r < 0)
		return r;

	for (size_t i = 0; i < p->n_risk; i++) {
		r = policy_upsert_tx(db, p->id, p->risk[i].tool, (int)p->risk[i].risk, -1);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < p->n_replay; i++) {
		r = policy_upsert_tx(db, p->id, p->replay[i].tool, -1, p->replay[i].replay == CORDON_REPLAY_SAFE);
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

int cordon_connector_generation(struct cordon_db *db, const char *connector, uint64_t *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "SELECT generation FROM connectors WHERE id = ?1", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, ENOENT, "unknown connector");
	*ret = (uint64_t)sqlite3_column_int64(st, 0);
	return 0;
}

int cordon_connector_relaunch(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
			      uint64_t *ret_generation)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int64_t gen;
	int r;

	if (!actor_may_install(actor))
		return db_failf(db, EPERM, "only an operator or the broker may relaunch a connector");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = db_prepare(db, "UPDATE connectors SET generation = generation + 1 WHERE id = ?1 RETURNING generation", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, ENOENT, "unknown connector");
	gen = sqlite3_column_int64(st, 0);
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	r = approvals_revoke_tx(db, actor, APPROVALS_CONNECTOR, connector, NULL, "relaunch", NULL);
	if (r < 0)
		return r;
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_CONNECTOR,
					 .actor = actor,	  .connector = connector,
					 .state = "launched",	  .generation = gen };
	r = audit_append_tx(db, &ev);
	if (r < 0)
		return r;
	r = db_tx_commit(&tx);
	if (r < 0)
		return r;
	if (ret_generation)
		*ret_generation = (uint64_t)gen;
	return 0;
}

int cordon_connector_remove(struct cordon_db *db, const struct cordon_actor *actor, const char *connector)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL, *del = NULL;
	int r;

	if (!actor_may_install(actor))
		return db_failf(db, EPERM, "only an operator or the broker may remove a connector");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	/* The ledger of unresolved effects must outlive nothing: an action that
	 * is dispatched or has an unknown outcome needs an operator first. */
	r = db_prepare(db, "SELECT count(*) FROM actions WHERE connector = ?1 AND state IN (?2, ?3, ?4)", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0 ||
	    (r = db_bind_int64(db, st, 2, CORDON_ACTION_PREPARED)) < 0 ||
	    (r = db_bind_int64(db, st, 3, CORDON_ACTION_DISPATCHED)) < 0 ||
	    (r = db_bind_int64(db, st, 4, CORDON_ACTION_OUTCOME_UNKNOWN)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, EIO, "cannot count actions");
	if (sqlite3_column_int64(st, 0) > 0)
		return db_failf(db, EBUSY,
				"connector has unresolved actions; resolve them first (cordonctl actions list)");
	r = db_prepare(db, "DELETE FROM connectors WHERE id = ?1", &del);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, del, 1, connector)) < 0)
		return r;
	r = db_step_done(db, del);
	if (r < 0)
		return r;
	if (sqlite3_changes(db->sql) != 1)
		return db_failf(db, ENOENT, "connector is not installed");
	/* Grants, inventory, approvals, delegations and finished actions go
	 * with it (ON DELETE CASCADE); the audit log keeps their history. */
	r = db_meta_add_tx(db, "policy_epoch", 1, NULL);
	if (r < 0)
		return r;
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_CONNECTOR, .actor = actor,
					 .connector = connector, .state = "removed" };
	r = audit_append_tx(db, &ev);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}
