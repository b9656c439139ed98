/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The connectors table: one row per installed connector (default risk,
 * approval TTL, ceilings, launch generation). The only module that reads or
 * writes it; it calls no other table's module. Installing, relaunching and
 * removing a connector change other tables too and are composed in
 * lifecycle.c from the functions here. */
#include "connectors.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>

#include "broker-private.h"
#include "parse-util.h"

int cordon_connector_exists(struct cordon_db *db, const char *connector)
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

int connector_ceilings_encode(struct cordon_db *db, const struct cordon_profile *p, char **ret)
{
	json_t *arr = json_array();
	char *s;

	if (!arr)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_ceiling; i++)
		if (!p->ceiling[i] || !path_is_absolute_canonical(p->ceiling[i]) ||
		    json_array_append_new(arr, json_string(p->ceiling[i])) < 0) {
			json_decref(arr);
			return db_failf(db, EINVAL, "invalid ceiling %zu in profile '%s'", i, p->id);
		}
	s = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

int connector_insert_tx(struct cordon_db *db, const struct cordon_profile *p, const char *ceilings)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

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
	return r;
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

int connector_generation_bump_tx(struct cordon_db *db, const char *connector, uint64_t *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int64_t gen;
	int r;

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
	*ret = (uint64_t)gen;
	return 0;
}

int connector_delete_tx(struct cordon_db *db, const char *connector)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "DELETE FROM connectors WHERE id = ?1", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	if (sqlite3_changes(db->sql) != 1)
		return db_failf(db, ENOENT, "connector is not installed");
	return 0;
}

/* One column of a connector's row: the statement stepped onto it. */
static int connector_column(struct cordon_db *db, const char *sql, const char *connector, sqlite3_stmt **ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, sql, &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, ENOENT, "unknown connector");
	*ret = TAKE_PTR(st);
	return 0;
}

int connector_approval_ttl(struct cordon_db *db, const char *connector, uint64_t *ret_usec)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = connector_column(db, "SELECT approval_ttl_sec FROM connectors WHERE id = ?1", connector, &st);

	if (r < 0)
		return r;
	*ret_usec = (uint64_t)sqlite3_column_int64(st, 0) * CORDON_USEC_PER_SEC;
	return 0;
}

int connector_default_risk(struct cordon_db *db, const char *connector, enum cordon_risk *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = connector_column(db, "SELECT default_risk FROM connectors WHERE id = ?1", connector, &st);

	if (r < 0)
		return r;
	*ret = (enum cordon_risk)sqlite3_column_int(st, 0);
	return 0;
}

int connector_ceilings(struct cordon_db *db, const char *connector, json_t **ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	json_t *arr;
	int r = connector_column(db, "SELECT ceilings FROM connectors WHERE id = ?1", connector, &st);

	if (r < 0)
		return r;
	arr = json_loads((const char *)sqlite3_column_text(st, 0), JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_array(arr)) {
		json_decref(arr);
		return db_failf(db, EBADMSG, "connector ceilings are corrupt");
	}
	*ret = arr;
	return 0;
}

int connectors_count(struct cordon_db *db, uint64_t *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "SELECT count(*) FROM connectors", &st);
	if (r < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	*ret = r ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	return 0;
}
