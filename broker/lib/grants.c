/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The grants table: the explicit set of tools each connector may call.
 * Reads connectors (does the connector exist) and bumps the policy epoch
 * (policy.c) on every change, which revokes the approvals of that tool
 * only; revoke-all is composed in lifecycle.c. */
#include "grants.h"

#include <errno.h>
#include <stdlib.h>

#include "audit.h"
#include "authz.h"
#include "broker-private.h"
#include "connectors.h"

int grant_insert_tx(struct cordon_db *db, const struct cordon_actor *actor, const char *connector, const char *tool)
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
	r = cordon_connector_exists(db, connector);
	if (r < 0)
		return r;
	r = grant_insert_tx(db, actor, connector, tool);
	if (r < 0)
		return r;
	r = policy_epoch_bump_tx(db, actor, "grant-change", connector, tool, NULL);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

int cordon_grant_remove(struct cordon_db *db, const struct cordon_actor *actor, const char *connector, const char *tool)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "only an operator may change grants");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = cordon_connector_exists(db, connector);
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
	r = policy_epoch_bump_tx(db, actor, "grant-change", connector, tool, NULL);
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

int grants_delete_all_tx(struct cordon_db *db, uint64_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "DELETE FROM grants", &st);
	if (r < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	*ret_n = (uint64_t)sqlite3_changes(db->sql);
	return 0;
}
