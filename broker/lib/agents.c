/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Agents and their bearer tokens (agents.h). */
#include "agents.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "db-private.h"

#define TOKEN_BYTES 32
#define PREFIX_LEN  (sizeof(CORDON_AGENT_TOKEN_PREFIX) - 1)
#define ENCODED_LEN 43 /* base64url of 32 bytes, no padding */

bool cordon_agent_name_is_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > CORDON_AGENT_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '-' && c != '_')))
			return false;
	}
	return true;
}

/* The token's 32 bytes, from its text; -EACCES when it is not a token. */
static int token_decode(const char *token, uint8_t ret[static TOKEN_BYTES])
{
	size_t bin_len = 0;
	const char *end = NULL;

	if (!token || strlen(token) != CORDON_AGENT_TOKEN_LEN || strncmp(token, CORDON_AGENT_TOKEN_PREFIX, PREFIX_LEN))
		return -EACCES;
	if (sodium_base642bin(ret, TOKEN_BYTES, token + PREFIX_LEN, ENCODED_LEN, NULL, &bin_len, &end,
			      sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
	    bin_len != TOKEN_BYTES || end != token + CORDON_AGENT_TOKEN_LEN)
		return -EACCES;
	return 0;
}

static void token_hash(const uint8_t bytes[static TOKEN_BYTES], uint8_t ret[static crypto_hash_sha256_BYTES])
{
	crypto_hash_sha256(ret, bytes, TOKEN_BYTES);
}

static int audit_agent(struct cordon_db *db, const struct cordon_actor *actor, const char *event, const char *name)
{
	struct cordon_audit_event ev = {
		CORDON_AUDIT_EVENT_INIT,
		.event = event,
		.actor = actor,
		.agent = name,
	};

	return audit_append_tx(db, &ev);
}

int cordon_agent_add(struct cordon_db *db, const struct cordon_actor *actor, const char *name,
		     char ret_token[static CORDON_AGENT_TOKEN_LEN + 1], struct cordon_agent_info *ret_info)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	uint8_t bytes[TOKEN_BYTES], hash[crypto_hash_sha256_BYTES];
	char by[96], token[CORDON_AGENT_TOKEN_LEN + 1];
	int r;

	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "only an operator may add an agent");
	if (!cordon_agent_name_is_valid(name))
		return db_failf(db, EINVAL, "agent name must be 1-%u of a-z 0-9 - _, starting with a letter or digit",
				CORDON_AGENT_NAME_MAX);
	randombytes_buf(bytes, sizeof(bytes));
	token_hash(bytes, hash);
	memcpy(token, CORDON_AGENT_TOKEN_PREFIX, PREFIX_LEN);
	sodium_bin2base64(token + PREFIX_LEN, sizeof(token) - PREFIX_LEN, bytes, sizeof(bytes),
			  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(bytes, sizeof(bytes));
	cordon_actor_describe(actor, by, sizeof(by));
	r = db_tx_begin(db, &tx);
	if (r >= 0)
		r = db_prepare(db,
			       "INSERT INTO agents(name, token_hash, created_at, created_by) "
			       "SELECT ?1, ?2, ?3, ?4 WHERE NOT EXISTS "
			       "(SELECT 1 FROM agents WHERE name = ?1 AND revoked_at IS NULL) RETURNING id",
			       &st);
	if (r >= 0 && (r = db_bind_text(db, st, 1, name)) >= 0 &&
	    (r = db_bind_blob(db, st, 2, hash, sizeof(hash))) >= 0 &&
	    (r = db_bind_int64(db, st, 3, (int64_t)cordon_db_now(db))) >= 0 && (r = db_bind_text(db, st, 4, by)) >= 0)
		r = db_step_row(db, st);
	if (r == 0)
		r = db_failf(db, EEXIST, "agent %s exists (revoke it first)", name);
	if (r > 0) {
		ret_info->id = sqlite3_column_int64(st, 0);
		snprintf(ret_info->name, sizeof(ret_info->name), "%s", name);
		db_stmt_release(TAKE_PTR(st));
		r = audit_agent(db, actor, CORDON_AUDIT_AGENT_ADDED, name);
		if (r >= 0)
			r = db_tx_commit(&tx);
	}
	if (r >= 0)
		memcpy(ret_token, token, sizeof(token));
	sodium_memzero(token, sizeof(token));
	return r < 0 ? r : 0;
}

int cordon_agent_revoke(struct cordon_db *db, const struct cordon_actor *actor, const char *name, int64_t *ret_id)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int64_t id;
	int r;

	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "only an operator may revoke an agent");
	if (!cordon_agent_name_is_valid(name))
		return db_failf(db, ENOENT, "no agent of that name");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = db_prepare(db, "UPDATE agents SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL RETURNING id",
		       &st);
	if (r < 0 || (r = db_bind_text(db, st, 1, name)) < 0 ||
	    (r = db_bind_int64(db, st, 2, (int64_t)cordon_db_now(db))) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, ENOENT, "no agent %s (or it is revoked)", name);
	id = sqlite3_column_int64(st, 0);
	db_stmt_release(TAKE_PTR(st));
	r = audit_agent(db, actor, CORDON_AUDIT_AGENT_REVOKED, name);
	if (r < 0)
		return r;
	r = db_tx_commit(&tx);
	if (r < 0)
		return r;
	if (ret_id)
		*ret_id = id;
	return 0;
}

int cordon_agents_list(struct cordon_db *db, bool all, json_t **ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	json_t *arr = json_array();
	int r;

	if (!arr)
		return -ENOMEM;
	r = db_prepare(db,
		       "SELECT id, name, created_at, created_by, revoked_at FROM agents "
		       "WHERE ?1 OR revoked_at IS NULL ORDER BY id",
		       &st);
	if (r >= 0)
		r = db_bind_int64(db, st, 1, all);
	while (r >= 0 && (r = db_step_row(db, st)) > 0) {
		json_t *o = json_pack(
			"{s:I, s:s, s:I, s:s, s:o}", "id", (json_int_t)sqlite3_column_int64(st, 0), "name",
			(const char *)sqlite3_column_text(st, 1), "created_at", (json_int_t)sqlite3_column_int64(st, 2),
			"created_by", (const char *)sqlite3_column_text(st, 3), "revoked_at",
			sqlite3_column_type(st, 4) == SQLITE_NULL ? json_null()
								  : json_integer(sqlite3_column_int64(st, 4)));

		if (json_array_append_new(arr, o) < 0)
			r = -ENOMEM;
	}
	if (r < 0) {
		json_decref(arr);
		return r;
	}
	*ret = arr;
	return 0;
}

int cordon_agent_authenticate(struct cordon_db *db, const char *token, struct cordon_agent_info *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	uint8_t bytes[TOKEN_BYTES], hash[crypto_hash_sha256_BYTES];
	const void *stored;
	int r;

	r = token_decode(token, bytes);
	if (r < 0)
		return r;
	token_hash(bytes, hash);
	sodium_memzero(bytes, sizeof(bytes));
	/* The lookup is by the hash of a 256-bit secret: how long it takes
	 * tells nothing about a token; the match itself is then checked in
	 * constant time. */
	r = db_prepare(db, "SELECT id, name, token_hash FROM agents WHERE token_hash = ?1 AND revoked_at IS NULL", &st);
	if (r < 0 || (r = db_bind_blob(db, st, 1, hash, sizeof(hash))) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return -EACCES;
	stored = sqlite3_column_blob(st, 2);
	if (!stored || sqlite3_column_bytes(st, 2) != (int)sizeof(hash) || sodium_memcmp(stored, hash, sizeof(hash)))
		return -EACCES;
	ret->id = sqlite3_column_int64(st, 0);
	snprintf(ret->name, sizeof(ret->name), "%s", (const char *)sqlite3_column_text(st, 1));
	return 0;
}
