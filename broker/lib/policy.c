/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The first-party risk policy (risk_policy table) and the policy epoch.
 * Reads connectors (existence, default risk); an epoch bump revokes the
 * outstanding approvals of the one tool whose policy changed
 * (approvals.c). */
#include "policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "approvals.h"
#include "audit.h"
#include "broker-private.h"
#include "connectors.h"

int policy_epoch_add_tx(struct cordon_db *db, uint64_t *ret_epoch)
{
	int64_t epoch;
	int r;

	r = db_meta_add_tx(db, "policy_epoch", 1, &epoch);
	if (r < 0)
		return r;
	if (ret_epoch)
		*ret_epoch = (uint64_t)epoch;
	return 0;
}

int policy_epoch_bump_tx(struct cordon_db *db, const struct cordon_actor *actor, const char *reason,
			 const char *connector, const char *tool, uint64_t *ret_epoch)
{
	uint64_t epoch;
	int r;

	r = policy_epoch_add_tx(db, &epoch);
	if (r < 0)
		return r;
	/* The epoch makes every earlier decision stale, so a call decided
	 * before is decided again before it runs (actions.c). Approvals are
	 * not bound to the epoch (cordon_call_binding): only those of the
	 * tool whose grant or tier changed are revoked, in this very
	 * transaction, audited; an operator's grant of one tool no longer
	 * throws away every other pending decision (issue 14). The tier is
	 * bound too, so a tier change could never be consumed anyway. */
	r = approvals_revoke_tx(db, actor, APPROVALS_TOOL, connector, tool, reason, NULL);
	if (r < 0)
		return r;
	if (ret_epoch)
		*ret_epoch = epoch;
	return 0;
}

int policy_upsert_tx(struct cordon_db *db, const char *connector, const char *tool, int tier, int replay)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	/* tier -1: keep (NULL = default); replay -1: keep (a new row: ?5,
	 * unsafe). */
	r = db_prepare(db,
		       "INSERT INTO risk_policy(connector, tool, tier, replay) VALUES (?1, ?2, ?3, coalesce(?4, ?5)) "
		       "ON CONFLICT(connector, tool) DO UPDATE SET "
		       "tier = coalesce(excluded.tier, risk_policy.tier), "
		       "replay = coalesce(?4, risk_policy.replay)",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0 || (r = db_bind_text(db, st, 2, tool)) < 0 ||
	    (r = db_bind_int64(db, st, 5, CORDON_REPLAY_UNSAFE)) < 0)
		return r;
	r = tier >= 0 ? db_bind_int64(db, st, 3, tier) : (sqlite3_bind_null(st, 3), 0);
	if (r < 0)
		return r;
	r = replay >= 0 ? db_bind_int64(db, st, 4, replay) : (sqlite3_bind_null(st, 4), 0);
	if (r < 0)
		return r;
	return db_step_done(db, st);
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
	r = cordon_connector_exists(db, connector);
	if (r < 0)
		return r;
	r = policy_upsert_tx(db, connector, tool, (int)tier, -1);
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
	r = policy_epoch_bump_tx(db, actor, "risk-change", connector, tool, NULL);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
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

	r = connector_default_risk(db, connector, &p.policy.default_risk);
	if (r < 0)
		return r;
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
	*ret = (r && sqlite3_column_int(st, 0) == CORDON_REPLAY_SAFE) ? CORDON_REPLAY_SAFE : CORDON_REPLAY_UNSAFE;
	return 0;
}
