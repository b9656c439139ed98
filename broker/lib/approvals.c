/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "approvals.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "audit.h"
#include "authz.h"
#include "broker-private.h"

const char *cordon_approval_state_to_string(enum cordon_approval_state s)
{
	switch (s) {
	case CORDON_APPROVAL_REQUESTED:
		return "requested";
	case CORDON_APPROVAL_APPROVED:
		return "approved";
	case CORDON_APPROVAL_DENIED:
		return "denied";
	case CORDON_APPROVAL_EXPIRED:
		return "expired";
	case CORDON_APPROVAL_REVOKED:
		return "revoked";
	case CORDON_APPROVAL_CONSUMED:
		return "consumed";
	}
	return "invalid";
}

int cordon_call_binding(struct cordon_key *key, const struct cordon_call *call, uint8_t ret[static CORDON_HASH_LEN])
{
	uint8_t fp[CORDON_HASH_LEN];
	size_t fp_len = 0;

	if (!call || !call->fingerprint || strlen(call->fingerprint) != 64 ||
	    sodium_hex2bin(fp, sizeof(fp), call->fingerprint, 64, NULL, &fp_len, NULL) != 0 || fp_len != 32 ||
	    (unsigned)call->tier > CORDON_RISK_CRITICAL)
		return -EINVAL;
	struct cordon_approval_fields f = {
		.version = CORDON_APPROVAL_BINDING_VERSION,
		.session_id = call->session,
		.connector_id = call->connector,
		.launch_generation = call->generation,
		.tool_name = call->tool,
		.tool_fingerprint = fp,
		/* Not the policy epoch (issue 14): an unrelated grant or tier
		 * change must not void an approval. What a change can alter
		 * about this call is bound here (tier, fingerprint,
		 * generation) or re-decided before it runs (grant,
		 * delegations: cordon_action_begin), and the change revokes
		 * the approvals of the tool it touched (policy.c). */
		.policy_epoch = 0,
		.risk_tier = cordon_risk_name(call->tier),
		.arguments_jcs = call->arguments_jcs ? call->arguments_jcs : "{}",
		.arguments_jcs_len = call->arguments_jcs ? call->arguments_jcs_len : 2,
	};
	return cordon_approval_binding(key, &f, ret);
}

static int audit_approval(struct cordon_db *db, const struct cordon_actor *actor, const char *event, const char *id,
			  const char *session, const char *connector, const char *tool, int tier,
			  const uint8_t *binding, const char *reason, const char *action_id)
{
	struct cordon_audit_event ev = {
		CORDON_AUDIT_EVENT_INIT, .event = event,	 .actor = actor,	.approval_id = id,
		.session = session,	 .connector = connector, .tool = tool,		.tier = tier,
		.binding = binding,	 .reason = reason,	 .action_id = action_id
	};
	return audit_append_tx(db, &ev);
}

/* "state IN (?i, ?i+1)": an outstanding approval (one that may still be
 * used). */
static int bind_outstanding(struct cordon_db *db, sqlite3_stmt *st, int i)
{
	int r = db_bind_int64(db, st, i, CORDON_APPROVAL_REQUESTED);

	return r < 0 ? r : db_bind_int64(db, st, i + 1, CORDON_APPROVAL_APPROVED);
}

/* Loaded row. */
struct arow {
	char id[CORDON_ID_STRING_MAX];
	char session[64], connector[33], tool[129];
	enum cordon_approval_state state;
	enum cordon_risk tier;
	uint8_t binding[32];
	uint64_t created_at, expires_at;
};

#define AROW_COLUMNS "id, session, connector, tool, state, tier, binding, created_at, expires_at"

static int arow_read(struct cordon_db *db, sqlite3_stmt *st, struct arow *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->id, sizeof(a->id), "%s", (const char *)sqlite3_column_text(st, 0));
	snprintf(a->session, sizeof(a->session), "%s", (const char *)sqlite3_column_text(st, 1));
	snprintf(a->connector, sizeof(a->connector), "%s", (const char *)sqlite3_column_text(st, 2));
	snprintf(a->tool, sizeof(a->tool), "%s", (const char *)sqlite3_column_text(st, 3));
	a->state = (enum cordon_approval_state)sqlite3_column_int(st, 4);
	a->tier = (enum cordon_risk)sqlite3_column_int(st, 5);
	if (sqlite3_column_bytes(st, 6) != 32)
		return db_failf(db, EBADMSG, "approval binding has the wrong length");
	memcpy(a->binding, sqlite3_column_blob(st, 6), 32);
	a->created_at = (uint64_t)sqlite3_column_int64(st, 7);
	a->expires_at = (uint64_t)sqlite3_column_int64(st, 8);
	return 0;
}

static int arow_load(struct cordon_db *db, const char *id, struct arow *a)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "SELECT " AROW_COLUMNS " FROM approvals WHERE id = ?1", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, id)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, ENOENT, "no such approval");
	return arow_read(db, st, a);
}

static void arow_info(const struct arow *a, struct cordon_approval_info *ret)
{
	memset(ret, 0, sizeof(*ret));
	snprintf(ret->id, sizeof(ret->id), "%s", a->id);
	cordon_approval_display_code(a->binding, ret->display_code);
	ret->state = a->state;
	ret->tier = a->tier;
	snprintf(ret->session, sizeof(ret->session), "%s", a->session);
	snprintf(ret->connector, sizeof(ret->connector), "%s", a->connector);
	snprintf(ret->tool, sizeof(ret->tool), "%s", a->tool);
	ret->created_at = a->created_at;
	ret->expires_at = a->expires_at;
}

/* CAS on the state column: only moves from `from`. Returns 1 when it moved. */
static int set_state_cas(struct cordon_db *db, const char *id, enum cordon_approval_state from,
			 enum cordon_approval_state to, const struct cordon_actor *actor, const char *reason,
			 uint64_t new_expiry)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	char who[128];
	int r;

	/* actor NULL (consumption): keep who decided and when. */
	if (actor)
		cordon_actor_describe(actor, who, sizeof(who));
	r = db_prepare(
		db,
		"UPDATE approvals SET state = ?3, decided_at = CASE WHEN ?5 IS NULL THEN decided_at ELSE ?4 END, "
		"decided_by = coalesce(?5, decided_by), reason = ?6, "
		"expires_at = coalesce(?7, expires_at) WHERE id = ?1 AND state = ?2",
		&st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, id)) < 0 || (r = db_bind_int64(db, st, 2, from)) < 0 ||
	    (r = db_bind_int64(db, st, 3, to)) < 0 || (r = db_bind_int64(db, st, 4, (int64_t)cordon_db_now(db))) < 0 ||
	    (r = db_bind_text(db, st, 5, actor ? who : NULL)) < 0 || (r = db_bind_text(db, st, 6, reason)) < 0)
		return r;
	r = new_expiry ? db_bind_int64(db, st, 7, (int64_t)new_expiry) : (sqlite3_bind_null(st, 7), 0);
	if (r < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	return sqlite3_changes(db->sql) == 1;
}

static int expire_tx(struct cordon_db *db, uint64_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct cordon_actor sys = cordon_actor_system();
	uint64_t n = 0;
	int r;

	/* Collect first, then update: never modify a table under a live cursor. */
	for (;;) {
		struct arow a;

		r = db_prepare(db,
			       "SELECT " AROW_COLUMNS " FROM approvals WHERE state IN (?2, ?3) AND expires_at <= ?1 "
			       "LIMIT 1",
			       &st);
		if (r < 0)
			return r;
		if ((r = db_bind_int64(db, st, 1, (int64_t)cordon_db_now(db))) < 0 ||
		    (r = bind_outstanding(db, st, 2)) < 0)
			return r;
		r = db_step_row(db, st);
		if (r <= 0) {
			if (r == 0 && ret_n)
				*ret_n = n;
			return r;
		}
		r = arow_read(db, st, &a);
		db_stmt_release(TAKE_PTR(st));
		if (r < 0)
			return r;
		r = set_state_cas(db, a.id, a.state, CORDON_APPROVAL_EXPIRED, &sys, "ttl", 0);
		if (r < 0)
			return r;
		r = audit_approval(db, &sys, CORDON_AUDIT_APPROVAL_EXPIRED, a.id, a.session, a.connector, a.tool,
				   (int)a.tier, a.binding, "ttl", NULL);
		if (r < 0)
			return r;
		n++;
	}
}

int cordon_approvals_expire(struct cordon_db *db, uint64_t *ret_n)
{
	_cleanup_tx_ struct db_tx tx = {};
	uint64_t n = 0;
	int r;

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = expire_tx(db, &n);
	if (r < 0)
		return r;
	r = db_tx_commit(&tx);
	if (r < 0)
		return r;
	if (ret_n)
		*ret_n = n;
	return 0;
}

static int count_pending(struct cordon_db *db, const char *session, uint64_t *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db,
		       session ? "SELECT count(*) FROM approvals WHERE state = ?2 AND session = ?1"
			       : "SELECT count(*) FROM approvals WHERE state = ?2",
		       &st);
	if (r < 0)
		return r;
	if ((session && (r = db_bind_text(db, st, 1, session)) < 0) ||
	    (r = db_bind_int64(db, st, 2, CORDON_APPROVAL_REQUESTED)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r <= 0)
		return r < 0 ? r : -EIO;
	*ret = (uint64_t)sqlite3_column_int64(st, 0);
	return 0;
}

int cordon_approval_request(struct cordon_db *db, struct cordon_key *key, const struct cordon_approval_limits *lim,
			    const struct cordon_call *call, struct cordon_approval_info *ret)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct cordon_actor actor;
	uint8_t binding[CORDON_HASH_LEN];
	uint64_t ttl, n, cap_session, cap_total;
	struct arow a = {};
	int r;

	if (!call || !cordon_session_id_is_valid(call->session) || !call->connector ||
	    !cordon_tool_name_is_valid(call->tool) || call->tier == CORDON_RISK_READ ||
	    (unsigned)call->tier > CORDON_RISK_CRITICAL)
		return db_failf(db, EINVAL, "invalid approval request");
	r = cordon_call_binding(key, call, binding);
	if (r < 0)
		return db_failf(db, -r, "computing the approval binding failed");
	cap_session = lim && lim->per_session ? lim->per_session : 16;
	cap_total = lim && lim->total ? lim->total : 256;
	actor = cordon_actor_session(call->session);

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = expire_tx(db, NULL);
	if (r < 0)
		return r;

	/* Coalescing: the same call again gets the same approval. */
	r = db_prepare(db, "SELECT " AROW_COLUMNS " FROM approvals WHERE binding = ?1 AND state IN (?2, ?3) LIMIT 1",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_blob(db, st, 1, binding, sizeof(binding))) < 0 || (r = bind_outstanding(db, st, 2)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 1) {
		r = arow_read(db, st, &a);
		if (r < 0)
			return r;
		db_stmt_release(TAKE_PTR(st));
		r = db_tx_commit(&tx); /* keeps the expiry sweep */
		if (r < 0)
			return r;
		arow_info(&a, ret);
		ret->coalesced = true;
		return 0;
	}
	db_stmt_release(TAKE_PTR(st));

	r = count_pending(db, call->session, &n);
	if (r < 0)
		return r;
	if (n >= cap_session)
		return db_failf(db, EDQUOT,
				"session has %llu pending approvals (the cap is %llu); decide or let some expire first",
				(unsigned long long)n, (unsigned long long)cap_session);
	r = count_pending(db, NULL, &n);
	if (r < 0)
		return r;
	if (n >= cap_total)
		return db_failf(db, EDQUOT, "%llu approvals are pending in total (the cap is %llu)",
				(unsigned long long)n, (unsigned long long)cap_total);

	r = connector_approval_ttl(db, call->connector, &ttl);
	if (r < 0)
		return r;
	db_new_id("ap", a.id, sizeof(a.id));
	snprintf(a.session, sizeof(a.session), "%s", call->session);
	snprintf(a.connector, sizeof(a.connector), "%s", call->connector);
	snprintf(a.tool, sizeof(a.tool), "%s", call->tool);
	a.state = CORDON_APPROVAL_REQUESTED;
	a.tier = call->tier;
	memcpy(a.binding, binding, sizeof(binding));
	a.created_at = cordon_db_now(db);
	a.expires_at = a.created_at + ttl;

	r = db_prepare(db,
		       "INSERT INTO approvals(id, session, connector, generation, tool, fingerprint, policy_epoch, "
		       "tier, binding, state, created_at, expires_at) "
		       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?12, ?10, ?11)",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, a.id)) < 0 || (r = db_bind_text(db, st, 2, a.session)) < 0 ||
	    (r = db_bind_text(db, st, 3, a.connector)) < 0 ||
	    (r = db_bind_int64(db, st, 4, (int64_t)call->generation)) < 0 ||
	    (r = db_bind_text(db, st, 5, a.tool)) < 0 || (r = db_bind_text(db, st, 6, call->fingerprint)) < 0 ||
	    (r = db_bind_int64(db, st, 7, (int64_t)call->policy_epoch)) < 0 ||
	    (r = db_bind_int64(db, st, 8, a.tier)) < 0 || (r = db_bind_blob(db, st, 9, binding, sizeof(binding))) < 0 ||
	    (r = db_bind_int64(db, st, 10, (int64_t)a.created_at)) < 0 ||
	    (r = db_bind_int64(db, st, 11, (int64_t)a.expires_at)) < 0 || (r = db_bind_int64(db, st, 12, a.state)) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	r = audit_approval(db, &actor, CORDON_AUDIT_APPROVAL_REQUESTED, a.id, a.session, a.connector, a.tool,
			   (int)a.tier, binding, NULL, NULL);
	if (r < 0)
		return r;
	r = db_tx_commit(&tx);
	if (r < 0)
		return r;
	arow_info(&a, ret);
	return 0;
}

static int confirmation_code(struct cordon_key *key, const struct arow *a, char ret[static CORDON_CONFIRM_CODE_LEN + 1])
{
	uint8_t msg[8 + 14 + 8 + CORDON_ID_STRING_MAX + 8 + 32], mac[CORDON_HASH_LEN];
	size_t idlen = strlen(a->id), off = 0;
	static const char label[] = "cordon.confirm";
	int r;

	cordon_u64be(sizeof(label) - 1, msg + off);
	off += 8;
	memcpy(msg + off, label, sizeof(label) - 1);
	off += sizeof(label) - 1;
	cordon_u64be(idlen, msg + off);
	off += 8;
	memcpy(msg + off, a->id, idlen);
	off += idlen;
	cordon_u64be(32, msg + off);
	off += 8;
	memcpy(msg + off, a->binding, 32);
	off += 32;
	r = cordon_key_mac(key, CORDON_KEY_PURPOSE_TOKEN, msg, off, mac);
	if (r < 0)
		return r;
	cordon_base32(mac, 5, ret);
	sodium_memzero(mac, sizeof(mac));
	return 0;
}

int cordon_approval_confirmation_code(struct cordon_db *db, struct cordon_key *key, const struct cordon_actor *actor,
				      const char *id, char ret[static CORDON_CONFIRM_CODE_LEN + 1])
{
	struct arow a;
	int r;

	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "confirmation codes are shown on the operator surface only");
	r = arow_load(db, id, &a);
	if (r < 0)
		return r;
	if (a.tier != CORDON_RISK_CRITICAL)
		return db_failf(db, EINVAL, "only critical approvals have a confirmation code");
	return confirmation_code(key, &a, ret);
}

int cordon_approval_decide(struct cordon_db *db, struct cordon_key *key, const struct cordon_actor *actor,
			   const char *id, bool approve, const char *code)
{
	_cleanup_tx_ struct db_tx tx = {};
	uint64_t ttl;
	struct arow a;
	int r;

	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "only an operator may decide approvals");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = expire_tx(db, NULL);
	if (r < 0)
		return r;
	r = arow_load(db, id, &a);
	if (r < 0)
		return r;
	if (a.state == CORDON_APPROVAL_EXPIRED) {
		/* Keep the sweep that just expired it. */
		r = db_tx_commit(&tx);
		return r < 0 ? r : db_failf(db, ETIME, "approval expired");
	}
	if (a.state != CORDON_APPROVAL_REQUESTED)
		return db_failf(db, EALREADY, "approval is already %s", cordon_approval_state_to_string(a.state));
	if (approve && a.tier == CORDON_RISK_CRITICAL) {
		char expected[CORDON_CONFIRM_CODE_LEN + 1];

		r = confirmation_code(key, &a, expected);
		if (r < 0)
			return r;
		if (!code || !cordon_confirmation_code_equal(expected, code)) {
			sodium_memzero(expected, sizeof(expected));
			return db_failf(db, EACCES, "critical approval needs its confirmation code");
		}
		sodium_memzero(expected, sizeof(expected));
	}
	r = connector_approval_ttl(db, a.connector, &ttl);
	if (r < 0)
		return r;
	/* An approval is usable for one TTL after the decision, so the
	 * waiting call has time to pick it up; it never lives longer. */
	r = set_state_cas(db, a.id, CORDON_APPROVAL_REQUESTED,
			  approve ? CORDON_APPROVAL_APPROVED : CORDON_APPROVAL_DENIED, actor,
			  approve ? "operator-approved" : "operator-denied", approve ? cordon_db_now(db) + ttl : 0);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, EALREADY, "approval changed concurrently");
	r = audit_approval(db, actor, approve ? CORDON_AUDIT_APPROVAL_APPROVED : CORDON_AUDIT_APPROVAL_DENIED, a.id,
			   a.session, a.connector, a.tool, (int)a.tier, a.binding, NULL, NULL);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

int cordon_approval_get(struct cordon_db *db, const char *id, struct cordon_approval_info *ret)
{
	struct arow a;
	int r = arow_load(db, id, &a);

	if (r < 0)
		return r;
	arow_info(&a, ret);
	return 0;
}

int cordon_approvals_list(struct cordon_db *db, const struct cordon_list_filter *f, cordon_approval_cb cb,
			  void *userdata)
{
	static const struct cordon_list_filter every = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	if (!f)
		f = &every;
	r = db_prepare(db,
		       f->newest_first
			       ? "SELECT " AROW_COLUMNS " FROM approvals WHERE state IN (?1, ?2, ?3, ?4, ?5, ?6) "
				 "AND (?7 IS NULL OR connector = ?7) ORDER BY created_at DESC, id LIMIT ?8"
			       : "SELECT " AROW_COLUMNS " FROM approvals WHERE state IN (?1, ?2, ?3, ?4, ?5, ?6) "
				 "AND (?7 IS NULL OR connector = ?7) ORDER BY created_at, id LIMIT ?8",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_states(db, st, 1, CORDON_APPROVAL_CONSUMED + 1, f->states)) < 0 ||
	    (r = db_bind_text(db, st, 7, f->connector)) < 0 ||
	    (r = db_bind_int64(db, st, 8, f->limit ? (int64_t)f->limit : -1)) < 0)
		return r;
	for (;;) {
		struct cordon_approval_info info;
		struct arow a;

		r = db_step_row(db, st);
		if (r <= 0)
			return r;
		r = arow_read(db, st, &a);
		if (r < 0)
			return r;
		arow_info(&a, &info);
		r = cb(&info, userdata);
		if (r < 0)
			return r;
	}
}

int approvals_count(struct cordon_db *db, uint32_t states, uint64_t *ret)
{
	return db_count_in_states(db, "SELECT count(*) FROM approvals WHERE state IN (?1, ?2, ?3, ?4, ?5, ?6)",
				  CORDON_APPROVAL_CONSUMED + 1, states, ret);
}

int approvals_prune_tx(struct cordon_db *db, uint64_t cutoff, uint64_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	/* The one read of another module's table in the core: actions.approval_id
	 * is the foreign key that references approvals(id), and a referenced
	 * approval cannot be deleted; the actions it names are pruned first
	 * (actions_prune_tx()). */
	r = db_prepare(
		db,
		"DELETE FROM approvals WHERE state IN (?2, ?3, ?4, ?5) AND coalesce(decided_at, created_at) < ?1 "
		"AND id NOT IN (SELECT approval_id FROM actions WHERE approval_id IS NOT NULL)",
		&st);
	if (r < 0)
		return r;
	if ((r = db_bind_int64(db, st, 1, (int64_t)cutoff)) < 0 ||
	    (r = db_bind_int64(db, st, 2, CORDON_APPROVAL_DENIED)) < 0 ||
	    (r = db_bind_int64(db, st, 3, CORDON_APPROVAL_EXPIRED)) < 0 ||
	    (r = db_bind_int64(db, st, 4, CORDON_APPROVAL_REVOKED)) < 0 ||
	    (r = db_bind_int64(db, st, 5, CORDON_APPROVAL_CONSUMED)) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	*ret_n = (uint64_t)sqlite3_changes(db->sql);
	return 0;
}

int approvals_revoke_tx(struct cordon_db *db, const struct cordon_actor *actor, enum approvals_scope scope,
			const char *arg1, const char *arg2, const char *reason, uint64_t *ret_n)
{
	static const char *const queries[] = {
		[APPROVALS_ALL] = "SELECT " AROW_COLUMNS " FROM approvals WHERE state IN (?3, ?4) LIMIT 1",
		[APPROVALS_SESSION] =
			"SELECT " AROW_COLUMNS " FROM approvals WHERE state IN (?3, ?4) AND session = ?1 LIMIT 1",
		[APPROVALS_CONNECTOR] =
			"SELECT " AROW_COLUMNS " FROM approvals WHERE state IN (?3, ?4) AND connector = ?1 LIMIT 1",
		[APPROVALS_TOOL] = "SELECT " AROW_COLUMNS
				   " FROM approvals WHERE state IN (?3, ?4) AND connector = ?1 AND tool = ?2 LIMIT 1",
	};
	uint64_t n = 0;
	int r;

	for (;;) {
		_cleanup_stmt_ sqlite3_stmt *st = NULL;
		struct arow a;

		r = db_prepare(db, queries[scope], &st);
		if (r < 0)
			return r;
		if (arg1 && (r = db_bind_text(db, st, 1, arg1)) < 0)
			return r;
		if (arg2 && (r = db_bind_text(db, st, 2, arg2)) < 0)
			return r;
		if ((r = bind_outstanding(db, st, 3)) < 0)
			return r;
		r = db_step_row(db, st);
		if (r < 0)
			return r;
		if (r == 0)
			break;
		r = arow_read(db, st, &a);
		if (r < 0)
			return r;
		db_stmt_release(TAKE_PTR(st));
		r = set_state_cas(db, a.id, a.state, CORDON_APPROVAL_REVOKED, actor, reason, 0);
		if (r < 0)
			return r;
		r = audit_approval(db, actor, CORDON_AUDIT_APPROVAL_REVOKED, a.id, a.session, a.connector, a.tool,
				   (int)a.tier, a.binding, reason, NULL);
		if (r < 0)
			return r;
		n++;
	}
	if (ret_n)
		*ret_n = n;
	return 0;
}

int approvals_revoke_all_at_start_tx(struct cordon_db *db, uint64_t *ret_n)
{
	struct cordon_actor sys = cordon_actor_system();

	return approvals_revoke_tx(db, &sys, APPROVALS_ALL, NULL, NULL, "broker-restart", ret_n);
}

int cordon_approval_revoke(struct cordon_db *db, const struct cordon_actor *actor, const char *id)
{
	_cleanup_tx_ struct db_tx tx = {};
	struct arow a;
	int r;

	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "only an operator may revoke approvals");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = arow_load(db, id, &a);
	if (r < 0)
		return r;
	if (a.state != CORDON_APPROVAL_REQUESTED && a.state != CORDON_APPROVAL_APPROVED)
		return db_failf(db, EALREADY, "approval is already %s", cordon_approval_state_to_string(a.state));
	r = set_state_cas(db, a.id, a.state, CORDON_APPROVAL_REVOKED, actor, "operator-revoked", 0);
	if (r <= 0)
		return r < 0 ? r : db_failf(db, EALREADY, "approval changed concurrently");
	r = audit_approval(db, actor, CORDON_AUDIT_APPROVAL_REVOKED, a.id, a.session, a.connector, a.tool, (int)a.tier,
			   a.binding, "operator-revoked", NULL);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

int approval_consume_tx(struct cordon_db *db, struct cordon_key *key, const char *id, const struct cordon_call *call,
			const char *action_id)
{
	uint8_t binding[CORDON_HASH_LEN];
	struct arow a;
	int r;

	if (!id)
		return db_failf(db, ENOENT, "no approval for this call");
	r = arow_load(db, id, &a);
	if (r < 0)
		return r;
	switch (a.state) {
	case CORDON_APPROVAL_APPROVED:
		break;
	case CORDON_APPROVAL_REQUESTED:
		return db_failf(db, EAGAIN, "approval is still waiting for the operator");
	case CORDON_APPROVAL_DENIED:
		return db_failf(db, EACCES, "approval was denied");
	case CORDON_APPROVAL_EXPIRED:
		return db_failf(db, ETIME, "approval expired");
	case CORDON_APPROVAL_REVOKED:
		return db_failf(db, ECANCELED, "approval was revoked");
	case CORDON_APPROVAL_CONSUMED:
		return db_failf(db, EALREADY, "approval was already used");
	default:
		return db_failf(db, EBADMSG, "approval has an invalid state");
	}
	if (cordon_db_now(db) >= a.expires_at)
		return db_failf(db, ETIME, "approval expired");
	/* The binding of the call about to be forwarded, with all 32 bytes
	 * compared in constant time. */
	r = cordon_call_binding(key, call, binding);
	if (r < 0)
		return db_failf(db, -r, "computing the call's binding failed");
	if (!cordon_digest_equal(binding, a.binding))
		return db_failf(db, EBADMSG, "approval does not match this call");
	r = set_state_cas(db, a.id, CORDON_APPROVAL_APPROVED, CORDON_APPROVAL_CONSUMED, NULL, "consumed", 0);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, EALREADY, "approval was already used");
	{
		struct cordon_actor actor = cordon_actor_session(call->session);
		return audit_approval(db, &actor, CORDON_AUDIT_APPROVAL_CONSUMED, a.id, a.session, a.connector, a.tool,
				      (int)a.tier, a.binding, NULL, action_id);
	}
}

int cordon_approval_cancel(struct cordon_db *db, const char *session, const char *approval_id)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL, *up = NULL;
	_cleanup_free_ char *connector = NULL, *tool = NULL;
	struct cordon_actor actor = cordon_actor_session(session);
	uint8_t binding[CORDON_HASH_LEN];
	char who[96];
	int tier, r;

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = db_prepare(
		db,
		"SELECT connector, tool, tier, binding FROM approvals WHERE id = ?1 AND session = ?2 AND state = ?3",
		&st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, approval_id)) < 0 || (r = db_bind_text(db, st, 2, session)) < 0 ||
	    (r = db_bind_int64(db, st, 3, CORDON_APPROVAL_REQUESTED)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, EALREADY, "approval is not pending for this session");
	if ((r = db_column_strdup(st, 0, &connector)) < 0 || (r = db_column_strdup(st, 1, &tool)) < 0)
		return r;
	tier = sqlite3_column_int(st, 2);
	if (sqlite3_column_bytes(st, 3) != CORDON_HASH_LEN)
		return db_failf(db, EBADMSG, "bad binding");
	memcpy(binding, sqlite3_column_blob(st, 3), CORDON_HASH_LEN);
	r = db_prepare(db,
		       "UPDATE approvals SET state = ?4, decided_at = ?2, decided_by = ?3, reason = 'client-cancelled' "
		       "WHERE id = ?1 AND state = ?5",
		       &up);
	if (r < 0)
		return r;
	cordon_actor_describe(&actor, who, sizeof(who));
	if ((r = db_bind_text(db, up, 1, approval_id)) < 0 ||
	    (r = db_bind_int64(db, up, 2, (int64_t)cordon_db_now(db))) < 0 || (r = db_bind_text(db, up, 3, who)) < 0 ||
	    (r = db_bind_int64(db, up, 4, CORDON_APPROVAL_REVOKED)) < 0 ||
	    (r = db_bind_int64(db, up, 5, CORDON_APPROVAL_REQUESTED)) < 0)
		return r;
	r = db_step_done(db, up);
	if (r < 0)
		return r;
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

int cordon_approval_resolve(struct cordon_db *db, const char *ref, char ret[static 48])
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	char found[48] = "";
	unsigned matches = 0;
	int r;

	if (strncmp(ref, "ap_", 3) == 0) {
		struct cordon_approval_info info;

		r = cordon_approval_get(db, ref, &info);
		if (r < 0)
			return r;
		snprintf(ret, 48, "%s", info.id);
		return 0;
	}
	if (strlen(ref) != CORDON_DISPLAY_CODE_LEN)
		return -ENOENT;
	/* Outstanding approvals first (two with one code: ambiguous); then
	 * finished ones, newest first, so a code that expired, was used, was
	 * denied or was revoked resolves to the approval that says so instead
	 * of reading as unknown (issue 14). The identical call repeated gets
	 * the same code, so a finished approval can share it; the newest is the
	 * one the operator was last asked about. Finished rows live until the
	 * retention prune. */
	r = db_prepare(db,
		       "SELECT id, binding, state IN (?1, ?2) FROM approvals "
		       "ORDER BY state IN (?1, ?2) DESC, created_at DESC, id DESC",
		       &st);
	if (r < 0)
		return r;
	if ((r = bind_outstanding(db, st, 1)) < 0)
		return r;
	while ((r = db_step_row(db, st)) > 0) {
		char code[CORDON_DISPLAY_CODE_LEN + 1];
		bool outstanding = sqlite3_column_int(st, 2) != 0;

		if (!outstanding && matches > 0)
			break; /* an outstanding match wins */
		if (sqlite3_column_bytes(st, 1) != CORDON_HASH_LEN)
			continue;
		cordon_approval_display_code(sqlite3_column_blob(st, 1), code);
		if (strcasecmp(code, ref) != 0)
			continue;
		matches++;
		snprintf(found, sizeof(found), "%s", (const char *)sqlite3_column_text(st, 0));
		if (!outstanding)
			break; /* the newest finished one */
	}
	if (r < 0)
		return r;
	if (matches == 0)
		return -ENOENT;
	if (matches > 1)
		return -ENOTUNIQ;
	snprintf(ret, 48, "%s", found);
	return 0;
}
