/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Two state changes the daemon needs at run time that the broker library
 * only performs at start-up or for operators: a dispatched action whose
 * worker died becomes outcome_unknown now (not at the next start), and a
 * client's cancellation withdraws its own pending approval. Both only ever
 * REDUCE authority, run in one short transaction with their audit record,
 * and use the library's transaction and audit primitives. */
#include <errno.h>
#include <string.h>

#include "audit.h"
#include "daemon-private.h"
#include "db-private.h"

int ledger_action_outcome_unknown(struct cordon_db *db, const char *action_id)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL, *up = NULL;
	_cleanup_free_ char *session = NULL, *connector = NULL, *tool = NULL;
	int tier, r;

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = db_prepare(db, "SELECT session, connector, tool, tier FROM actions WHERE id = ?1 AND state = 1", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, action_id)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, ESTALE, "action is not dispatched");
	if ((r = db_column_strdup(st, 0, &session)) < 0 || (r = db_column_strdup(st, 1, &connector)) < 0 ||
	    (r = db_column_strdup(st, 2, &tool)) < 0)
		return r;
	tier = sqlite3_column_int(st, 3);
	r = db_prepare(db, "UPDATE actions SET state = 5, updated_at = ?2 WHERE id = ?1 AND state = 1", &up);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, up, 1, action_id)) < 0 ||
	    (r = db_bind_int64(db, up, 2, (int64_t)cordon_db_now(db))) < 0)
		return r;
	r = db_step_done(db, up);
	if (r < 0)
		return r;
	struct cordon_actor sys = cordon_actor_system();
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
					 .event = CORDON_AUDIT_ACTION,
					 .actor = &sys,
					 .action_id = action_id,
					 .session = session,
					 .connector = connector,
					 .tool = tool,
					 .tier = tier,
					 .state = "outcome_unknown",
					 .reason = "worker-lost" };
	r = audit_append_tx(db, &ev);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

int ledger_approval_cancel(struct cordon_db *db, const char *session, const char *approval_id)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL, *up = NULL;
	_cleanup_free_ char *connector = NULL, *tool = NULL;
	uint8_t binding[32];
	int tier, r;

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	/* Only a still-requested approval of this very session: cancelling
	 * never touches another session's approval or an approved one that an
	 * operator already decided (that one dies by TTL or consumption). */
	r = db_prepare(db,
		       "SELECT connector, tool, tier, binding FROM approvals WHERE id = ?1 AND session = ?2 AND state = 0",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, approval_id)) < 0 || (r = db_bind_text(db, st, 2, session)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, EALREADY, "approval is not pending for this session");
	if ((r = db_column_strdup(st, 0, &connector)) < 0 || (r = db_column_strdup(st, 1, &tool)) < 0)
		return r;
	tier = sqlite3_column_int(st, 2);
	if (sqlite3_column_bytes(st, 3) != 32)
		return db_failf(db, EBADMSG, "bad binding");
	memcpy(binding, sqlite3_column_blob(st, 3), 32);
	r = db_prepare(db,
		       "UPDATE approvals SET state = 4, decided_at = ?2, decided_by = ?3, reason = 'client-cancelled' "
		       "WHERE id = ?1 AND state = 0",
		       &up);
	if (r < 0)
		return r;
	char who[96];
	snprintf(who, sizeof(who), "session:%s", session);
	if ((r = db_bind_text(db, up, 1, approval_id)) < 0 ||
	    (r = db_bind_int64(db, up, 2, (int64_t)cordon_db_now(db))) < 0 || (r = db_bind_text(db, up, 3, who)) < 0)
		return r;
	r = db_step_done(db, up);
	if (r < 0)
		return r;
	struct cordon_actor actor = cordon_actor_session(session);
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
					 .event = CORDON_AUDIT_APPROVAL_REVOKED,
					 .actor = &actor,
					 .session = session,
					 .approval_id = approval_id,
					 .connector = connector,
					 .tool = tool,
					 .tier = tier,
					 .binding = binding,
					 .state = "revoked",
					 .reason = "client-cancelled" };
	r = audit_append_tx(db, &ev);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

int ledger_audit_state(struct cordon_db *db, int64_t *ret_last_seq, int64_t *ret_cp_size, int64_t *ret_cp_time)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int64_t seq = 0;
	int r;

	r = cordon_db_meta_get(db, "audit_last_seq", &seq);
	if (r < 0 && r != -ENOENT)
		return r;
	r = db_prepare(db, "SELECT size, created_at FROM checkpoints ORDER BY id DESC LIMIT 1", &st);
	if (r < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	*ret_last_seq = seq;
	*ret_cp_size = r ? sqlite3_column_int64(st, 0) : 0;
	*ret_cp_time = r ? sqlite3_column_int64(st, 1) : 0;
	return 0;
}

int ledger_connector_remove(struct cordon_db *db, const char *connector)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL, *del = NULL;
	int r;

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	/* The ledger of unresolved effects must outlive nothing: an action that
	 * is dispatched or has an unknown outcome needs an operator first. */
	r = db_prepare(db, "SELECT count(*) FROM actions WHERE connector = ?1 AND state IN (0, 1, 5)", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, EIO, "cannot count actions");
	if (sqlite3_column_int64(st, 0) > 0)
		return db_failf(db, EBUSY, "connector has unresolved actions; resolve them first (cordonctl actions list)");
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
	struct cordon_actor sys = cordon_actor_system();
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
					 .event = CORDON_AUDIT_CONNECTOR,
					 .actor = &sys,
					 .connector = connector,
					 .state = "removed" };
	r = audit_append_tx(db, &ev);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

int ledger_db_confine(struct cordon_db *db)
{
	/* cordond's Landlock domain has no temp directory: SQLite's statement
	 * journals and sorter spills must stay in memory. */
	int rc = sqlite3_exec(db->sql, "PRAGMA temp_store = MEMORY", NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : db_fail(db, rc);
}
