/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "grants.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "broker-private.h"
#include "parse-util.h"

void actor_describe(const struct cordon_actor *a, char *buf, size_t size)
{
	if (!a) {
		snprintf(buf, size, "system");
		return;
	}
	switch (a->kind) {
	case CORDON_ACTOR_OPERATOR:
		snprintf(buf, size, "operator:%u:%s", (unsigned)a->uid, a->channel);
		break;
	case CORDON_ACTOR_SESSION:
		snprintf(buf, size, "session:%s", a->session_id);
		break;
	default:
		snprintf(buf, size, "system");
	}
}

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

int policy_epoch_bump_tx(struct cordon_db *db, const struct cordon_actor *actor, const char *reason,
			 uint64_t *ret_epoch)
{
	int64_t epoch;
	int r;

	r = db_meta_add_tx(db, "policy_epoch", 1, &epoch);
	if (r < 0)
		return r;
	/* Bindings include the epoch, so old approvals could never verify
	 * again; marking them revoked makes that visible and audited. */
	r = approvals_revoke_tx(db, actor, APPROVALS_ALL, NULL, NULL, reason, NULL);
	if (r < 0)
		return r;
	if (ret_epoch)
		*ret_epoch = (uint64_t)epoch;
	return 0;
}

static bool actor_may_install(const struct cordon_actor *a)
{
	return a && (a->kind == CORDON_ACTOR_OPERATOR || a->kind == CORDON_ACTOR_SYSTEM);
}

static int upsert_policy(struct cordon_db *db, const char *connector, const char *tool, int tier, int replay)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	/* tier -1: keep (NULL = default); replay -1: keep. */
	r = db_prepare(db,
		       "INSERT INTO risk_policy(connector, tool, tier, replay) VALUES (?1, ?2, ?3, coalesce(?4, 0)) "
		       "ON CONFLICT(connector, tool) DO UPDATE SET "
		       "tier = coalesce(excluded.tier, risk_policy.tier), "
		       "replay = coalesce(?4, risk_policy.replay)",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0 || (r = db_bind_text(db, st, 2, tool)) < 0)
		return r;
	r = tier >= 0 ? db_bind_int64(db, st, 3, tier) : (sqlite3_bind_null(st, 3), 0);
	if (r < 0)
		return r;
	r = replay >= 0 ? db_bind_int64(db, st, 4, replay) : (sqlite3_bind_null(st, 4), 0);
	if (r < 0)
		return r;
	return db_step_done(db, st);
}

static int grant_insert_tx(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
			   const char *tool)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "INSERT INTO grants(connector, tool, granted_at) VALUES (?1, ?2, ?3)", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0 || (r = db_bind_text(db, st, 2, tool)) < 0 ||
	    (r = db_bind_int64(db, st, 3, (int64_t)cordon_db_now(db))) < 0)
		return r;
	r = db_step_done(db, st);
	if (r == -EEXIST)
		return db_failf(db, EEXIST, "tool '%s' is already granted on connector '%s'", tool, connector);
	if (r < 0)
		return r;
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
					 .event = CORDON_AUDIT_GRANT,
					 .actor = actor,
					 .connector = connector,
					 .tool = tool,
					 .state = "granted" };
	return audit_append_tx(db, &ev);
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
	    (r = db_bind_text(db, st, 4, ceilings)) < 0 || (r = db_bind_int64(db, st, 5, (int64_t)cordon_db_now(db))) < 0)
		return r;
	r = db_step_done(db, st);
	if (r == -EEXIST)
		return db_failf(db, EEXIST, "connector '%s' is already installed", p->id);
	if (r < 0)
		return r;

	for (size_t i = 0; i < p->n_risk; i++) {
		r = upsert_policy(db, p->id, p->risk[i].tool, (int)p->risk[i].risk, -1);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < p->n_replay; i++) {
		r = upsert_policy(db, p->id, p->replay[i].tool, -1, p->replay[i].replay == CORDON_REPLAY_SAFE);
		if (r < 0)
			return r;
	}
	{
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
						 .event = CORDON_AUDIT_CONNECTOR,
						 .actor = actor,
						 .connector = p->id,
						 .state = "installed",
						 .tier = (int)p->default_risk,
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
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
					 .event = CORDON_AUDIT_CONNECTOR,
					 .actor = actor,
					 .connector = connector,
					 .state = "launched",
					 .generation = gen };
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

int cordon_grant_add(struct cordon_db *db, const struct cordon_actor *actor, const char *connector, const char *tool)
{
	_cleanup_tx_ struct db_tx tx = {};
	int r;

	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "only an operator may change grants");
	if (!cordon_tool_name_is_valid(tool))
		return db_failf(db, EINVAL, "invalid tool name");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = connector_exists_tx(db, connector);
	if (r < 0)
		return r;
	r = grant_insert_tx(db, actor, connector, tool);
	if (r < 0)
		return r;
	r = policy_epoch_bump_tx(db, actor, "grant-change", NULL);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

int cordon_grant_remove(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
			const char *tool)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "only an operator may change grants");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = connector_exists_tx(db, connector);
	if (r < 0)
		return r;
	r = db_prepare(db, "DELETE FROM grants WHERE connector = ?1 AND tool = ?2", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0 || (r = db_bind_text(db, st, 2, tool)) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	if (sqlite3_changes(db->sql) == 0)
		return db_failf(db, ENOENT, "tool is not granted");
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
					 .event = CORDON_AUDIT_GRANT,
					 .actor = actor,
					 .connector = connector,
					 .tool = tool,
					 .state = "revoked" };
	r = audit_append_tx(db, &ev);
	if (r < 0)
		return r;
	r = policy_epoch_bump_tx(db, actor, "grant-change", NULL);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

int cordon_grants_list(struct cordon_db *db, const char *connector, char ***ret, size_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	char **v = NULL;
	size_t n = 0;
	int r;

	r = db_prepare(db, "SELECT tool FROM grants WHERE connector = ?1 ORDER BY tool", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0)
		return r;
	v = calloc(1, sizeof(char *));
	if (!v)
		return -ENOMEM;
	for (;;) {
		char **nv;

		r = db_step_row(db, st);
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		nv = reallocarray(v, n + 2, sizeof(char *));
		if (!nv) {
			r = -ENOMEM;
			goto fail;
		}
		v = nv;
		v[n + 1] = NULL;
		r = db_column_strdup(st, 0, &v[n]);
		if (r < 0)
			goto fail;
		n++;
	}
	*ret = v;
	if (ret_n)
		*ret_n = n;
	return 0;
fail:
	strv_free(v);
	return r;
}

int cordon_risk_set(struct cordon_db *db, const struct cordon_actor *actor, const char *connector, const char *tool,
		    enum cordon_risk tier)
{
	_cleanup_tx_ struct db_tx tx = {};
	int r;

	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "only an operator may change the risk policy");
	if (!cordon_tool_name_is_valid(tool) || (unsigned)tier > CORDON_RISK_CRITICAL)
		return db_failf(db, EINVAL, "invalid tool or tier");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = connector_exists_tx(db, connector);
	if (r < 0)
		return r;
	r = upsert_policy(db, connector, tool, (int)tier, -1);
	if (r < 0)
		return r;
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
					 .event = CORDON_AUDIT_GRANT,
					 .actor = actor,
					 .connector = connector,
					 .tool = tool,
					 .tier = (int)tier,
					 .state = "risk-changed" };
	r = audit_append_tx(db, &ev);
	if (r < 0)
		return r;
	r = policy_epoch_bump_tx(db, actor, "risk-change", NULL);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

int cordon_revoke_all(struct cordon_db *db, const struct cordon_actor *actor, struct cordon_revoke_all_result *ret)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct cordon_revoke_all_result res = {};
	int r;

	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "only an operator may revoke all");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = db_prepare(db, "DELETE FROM grants", &st);
	if (r < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	res.grants = (uint64_t)sqlite3_changes(db->sql);
	r = approvals_revoke_tx(db, actor, APPROVALS_ALL, NULL, NULL, "revoke-all", &res.approvals);
	if (r < 0)
		return r;
	r = delegations_end_all_tx(db, actor, NULL, "revoke-all", &res.delegations);
	if (r < 0)
		return r;
	r = db_meta_add_tx(db, "policy_epoch", 1, NULL);
	if (r < 0)
		return r;
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
					 .event = CORDON_AUDIT_GRANT,
					 .actor = actor,
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

void cordon_risk_policy_owned_done(struct cordon_risk_policy_owned *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->entries[i].tool);
	free(p->entries);
	memset(p, 0, sizeof(*p));
}

int cordon_risk_policy_load(struct cordon_db *db, const char *connector, struct cordon_risk_policy_owned *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct cordon_risk_policy_owned p = {};
	int r;

	r = db_prepare(db, "SELECT default_risk FROM connectors WHERE id = ?1", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, ENOENT, "unknown connector");
	p.policy.default_risk = (enum cordon_risk)sqlite3_column_int(st, 0);
	db_stmt_release(TAKE_PTR(st));

	r = db_prepare(db, "SELECT tool, tier FROM risk_policy WHERE connector = ?1 AND tier IS NOT NULL", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0)
		return r;
	for (;;) {
		struct cordon_tool_risk *ne;

		r = db_step_row(db, st);
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		ne = reallocarray(p.entries, p.n + 1, sizeof(*p.entries));
		if (!ne) {
			r = -ENOMEM;
			goto fail;
		}
		p.entries = ne;
		p.entries[p.n].risk = (enum cordon_risk)sqlite3_column_int(st, 1);
		r = db_column_strdup(st, 0, &p.entries[p.n].tool);
		if (r < 0)
			goto fail;
		p.n++;
	}
	p.policy.risk = p.entries;
	p.policy.n_risk = p.n;
	*ret = p;
	return 0;
fail:
	cordon_risk_policy_owned_done(&p);
	return r;
}

int cordon_tool_replay_class(struct cordon_db *db, const char *connector, const char *tool, enum cordon_replay *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "SELECT replay FROM risk_policy WHERE connector = ?1 AND tool = ?2", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0 || (r = db_bind_text(db, st, 2, tool)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	/* Unsafe unless the profile says safe: idempotentHint is never consulted. */
	*ret = (r && sqlite3_column_int(st, 0) == 1) ? CORDON_REPLAY_SAFE : CORDON_REPLAY_UNSAFE;
	return 0;
}
