/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "actions.h"

#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "authz.h"
#include "broker-private.h"
#include "decide.h"
#include "grants.h"
#include "policy.h"
#include "parse-util.h"
#include "hex-util.h"

const char *cordon_action_state_to_string(enum cordon_action_state s)
{
	switch (s) {
	case CORDON_ACTION_PREPARED:
		return "prepared";
	case CORDON_ACTION_DISPATCHED:
		return "dispatched";
	case CORDON_ACTION_SUCCEEDED:
		return "succeeded";
	case CORDON_ACTION_FAILED:
		return "failed";
	case CORDON_ACTION_ABANDONED:
		return "abandoned";
	case CORDON_ACTION_OUTCOME_UNKNOWN:
		return "outcome_unknown";
	}
	return "invalid";
}

static void lp(crypto_hash_sha256_state *h, const void *p, size_t n)
{
	uint8_t len[8];

	cordon_u64be(n, len);
	crypto_hash_sha256_update(h, len, sizeof(len));
	crypto_hash_sha256_update(h, p, n);
}

int cordon_request_hash(const char *tool, const char *arguments_jcs, size_t len, uint8_t ret[static 32])
{
	static const char label[] = "cordon.request.v1";
	crypto_hash_sha256_state h;

	if (!tool || (!arguments_jcs && len))
		return -EINVAL;
	if (!arguments_jcs) {
		arguments_jcs = "{}";
		len = 2;
	}
	crypto_hash_sha256_init(&h);
	lp(&h, label, sizeof(label) - 1);
	lp(&h, tool, strlen(tool));
	lp(&h, arguments_jcs, len);
	crypto_hash_sha256_final(&h, ret);
	return 0;
}

static bool idempotency_key_valid(const char *k)
{
	size_t n;

	if (!k)
		return false;
	n = strlen(k);
	if (n == 0 || n > CORDON_IDEMPOTENCY_KEY_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (k[i] < 0x21 || k[i] > 0x7e)
			return false;
	return true;
}

/* Stored results are sealed (XChaCha20-Poly1305, key derived from the
 * process key, the action id as associated data): connector output never
 * lands on disk in the clear, and a result cannot be moved to another
 * action. A later process cannot open them and answers -ENODATA instead of
 * running the call again. */
static int seal_key(struct cordon_key *key, uint8_t out[static 32])
{
	static const char label[] = "cordon.result.seal.v1";

	return cordon_key_mac(key, CORDON_KEY_PURPOSE_TOKEN, label, sizeof(label) - 1, out);
}

static int seal(struct cordon_key *key, const char *action_id, const void *p, size_t n, uint8_t **ret, size_t *ret_len)
{
	uint8_t k[32], *out;
	unsigned long long clen;
	int r;

	r = seal_key(key, k);
	if (r < 0)
		return r;
	out = malloc(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES + n + crypto_aead_xchacha20poly1305_ietf_ABYTES);
	if (!out) {
		sodium_memzero(k, sizeof(k));
		return -ENOMEM;
	}
	randombytes_buf(out, crypto_aead_xchacha20poly1305_ietf_NPUBBYTES);
	crypto_aead_xchacha20poly1305_ietf_encrypt(out + crypto_aead_xchacha20poly1305_ietf_NPUBBYTES, &clen, p, n,
						   (const uint8_t *)action_id, strlen(action_id), NULL, out, k);
	sodium_memzero(k, sizeof(k));
	*ret = out;
	*ret_len = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES + (size_t)clen;
	return 0;
}

static int unseal(struct cordon_key *key, const char *action_id, const uint8_t *p, size_t n, char **ret,
		  size_t *ret_len)
{
	uint8_t k[32];
	char *out;
	unsigned long long mlen;
	int r;

	if (n < crypto_aead_xchacha20poly1305_ietf_NPUBBYTES + crypto_aead_xchacha20poly1305_ietf_ABYTES)
		return -ENODATA;
	r = seal_key(key, k);
	if (r < 0)
		return r;
	out = malloc(n + 1);
	if (!out) {
		sodium_memzero(k, sizeof(k));
		return -ENOMEM;
	}
	r = crypto_aead_xchacha20poly1305_ietf_decrypt(
		(uint8_t *)out, &mlen, NULL, p + crypto_aead_xchacha20poly1305_ietf_NPUBBYTES,
		n - crypto_aead_xchacha20poly1305_ietf_NPUBBYTES, (const uint8_t *)action_id, strlen(action_id), p, k);
	sodium_memzero(k, sizeof(k));
	if (r != 0) {
		free(out);
		return -ENODATA;
	}
	out[mlen] = 0;
	*ret = out;
	*ret_len = (size_t)mlen;
	return 0;
}

static int audit_action(struct cordon_db *db, const struct cordon_actor *actor, const char *action_id,
			const char *session, const char *connector, const char *tool, int tier, const char *state,
			const char *approval_id, const char *reason)
{
	struct cordon_audit_event ev = {
		CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_ACTION, .actor = actor,	.action_id = action_id,
		.session = session,	 .connector = connector,       .tool = tool,	.tier = tier,
		.state = state,		 .approval_id = approval_id,   .reason = reason
	};
	int r = audit_append_tx(db, &ev);

	/* Fail closed above read tier; a read may go on without its record
	 * (the failure is counted and the append left no partial state). */
	if (r < 0 && tier == CORDON_RISK_READ && !sqlite3_get_autocommit(db->sql))
		return 0;
	return r;
}

void cordon_action_begin_result_done(struct cordon_action_begin_result *r)
{
	if (!r)
		return;
	if (r->result) {
		sodium_memzero(r->result, r->result_len);
		free(r->result);
	}
	r->result = NULL;
}

struct idem_row {
	bool found;
	uint8_t hash[32];
	char action_id[CORDON_ID_STRING_MAX];
	enum cordon_action_state state;
	uint8_t *sealed;
	size_t sealed_len;
};

/* The scope an identity lives in: the proven subject, or the session alone
 * when the caller gave none. "session:" + a session id fits. */
#define IDEM_SCOPE_MAX (sizeof("session:") + CORDON_SESSION_ID_MAX)

static int idem_scope(const struct cordon_action_begin *req, char ret[static IDEM_SCOPE_MAX])
{
	if (req->subject) {
		/* "session:" is the fallback's namespace: a subject may not claim it. */
		if (!cordon_session_id_is_valid(req->subject) || !strncmp(req->subject, "session:", 8))
			return -EINVAL;
		snprintf(ret, IDEM_SCOPE_MAX, "%s", req->subject);
	} else
		snprintf(ret, IDEM_SCOPE_MAX, "session:%s", req->call.session);
	return 0;
}

static int idem_load(struct cordon_db *db, const char *connector, const char *scope, const char *k,
		     struct idem_row *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = db_prepare(db,
		       "SELECT i.request_hash, i.action_id, a.state, i.result FROM idempotency i "
		       "JOIN actions a ON a.id = i.action_id WHERE i.connector = ?1 AND i.subject = ?2 AND i.key = ?3",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, connector)) < 0 || (r = db_bind_text(db, st, 2, scope)) < 0 ||
	    (r = db_bind_text(db, st, 3, k)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r <= 0)
		return r;
	if (sqlite3_column_bytes(st, 0) != 32)
		return db_failf(db, EBADMSG, "idempotency row has a bad hash");
	ret->found = true;
	memcpy(ret->hash, sqlite3_column_blob(st, 0), 32);
	snprintf(ret->action_id, sizeof(ret->action_id), "%s", (const char *)sqlite3_column_text(st, 1));
	ret->state = (enum cordon_action_state)sqlite3_column_int(st, 2);
	if (sqlite3_column_type(st, 3) == SQLITE_BLOB) {
		ret->sealed_len = (size_t)sqlite3_column_bytes(st, 3);
		ret->sealed = malloc(ret->sealed_len ? ret->sealed_len : 1);
		if (!ret->sealed)
			return -ENOMEM;
		memcpy(ret->sealed, sqlite3_column_blob(st, 3), ret->sealed_len);
	}
	return 0;
}

static int begin_impl(struct cordon_db *db, struct cordon_key *key, const struct cordon_action_begin *req,
		      struct cordon_action_begin_result *ret)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct cordon_action_begin_result res = {};
	const struct cordon_call *call;
	struct cordon_actor actor;
	struct idem_row idem = {};
	char scope[IDEM_SCOPE_MAX];
	uint8_t hash[32];
	bool use_idem;
	int r;

	if (!req || !cordon_session_id_is_valid(req->call.session) || !connector_id_is_valid(req->call.connector) ||
	    !cordon_tool_name_is_valid(req->call.tool) || (unsigned)req->call.tier > CORDON_RISK_CRITICAL)
		return db_failf(db, EINVAL, "invalid call");
	call = &req->call;
	if (req->idempotency_key && !idempotency_key_valid(req->idempotency_key))
		return db_failf(db, EINVAL, "invalid idempotency key (1..%d printable ASCII characters)",
				CORDON_IDEMPOTENCY_KEY_MAX);
	if (idem_scope(req, scope) < 0)
		return db_failf(db, EINVAL, "invalid subject");
	r = cordon_request_hash(call->tool, call->arguments_jcs, call->arguments_jcs_len, hash);
	if (r < 0)
		return db_failf(db, -r, "invalid arguments");
	actor = cordon_actor_session(call->session);

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	{
		struct cordon_decide_request dr = { .session = call->session,
						    .connector = call->connector,
						    .tool = call->tool,
						    .fingerprint = call->fingerprint,
						    .delegation = req->delegation };
		struct cordon_broker_decision dec;

		r = snapshot_decide_tx(db, &dr, call->policy_epoch, &dec);
		if (r < 0)
			return r;
		if (dec.decision.verdict == CORDON_VERDICT_DENY)
			return db_failf(db, dec.decision.reason == CORDON_DENY_STALE_POLICY ? ESTALE : EACCES,
					"denied: %s", cordon_deny_reason_to_string(dec.decision.reason));
		if (dec.decision.tier != call->tier)
			return db_failf(db, ESTALE, "the tool's tier is now %s, not %s",
					cordon_risk_name(dec.decision.tier), cordon_risk_name(call->tier));
		if (dec.generation != call->generation)
			return db_failf(db, ESTALE, "the connector was relaunched (generation %llu, not %llu)",
					(unsigned long long)dec.generation, (unsigned long long)call->generation);
	}
	r = cordon_tool_replay_class(db, call->connector, call->tool, &res.replay);
	if (r < 0)
		return r;
	use_idem = res.replay == CORDON_REPLAY_SAFE && req->idempotency_key;

	if (use_idem) {
		r = idem_load(db, call->connector, scope, req->idempotency_key, &idem);
		if (r < 0)
			goto out;
		if (idem.found) {
			if (sodium_memcmp(idem.hash, hash, 32) != 0) {
				r = db_failf(db, EEXIST, "idempotency key was used for a different request");
				goto out;
			}
			switch (idem.state) {
			case CORDON_ACTION_PREPARED:
			case CORDON_ACTION_DISPATCHED:
				r = db_failf(db, EINPROGRESS, "the call with this idempotency key is in progress");
				goto out;
			case CORDON_ACTION_OUTCOME_UNKNOWN:
				r = db_failf(db, ENOTRECOVERABLE,
					     "the call with this idempotency key has an unknown outcome; an operator "
					     "must resolve action %s",
					     idem.action_id);
				goto out;
			case CORDON_ACTION_SUCCEEDED:
			case CORDON_ACTION_FAILED:
				if (!idem.sealed) {
					r = db_failf(db, ENODATA, "the call ran (action %s); no result was stored",
						     idem.action_id);
					goto out;
				}
				r = unseal(key, idem.action_id, idem.sealed, idem.sealed_len, &res.result,
					   &res.result_len);
				if (r < 0) {
					r = db_failf(db, -r,
						     "the call ran (action %s) but its result was sealed by an earlier "
						     "broker process",
						     idem.action_id);
					goto out;
				}
				res.outcome = CORDON_BEGIN_STORED_RESULT;
				res.stored_state = idem.state;
				snprintf(res.action_id, sizeof(res.action_id), "%s", idem.action_id);
				r = audit_action(db, &actor, idem.action_id, call->session, call->connector, call->tool,
						 (int)call->tier, "replayed", NULL, "idempotent-replay");
				if (r >= 0)
					r = db_tx_commit(&tx);
				if (r < 0)
					goto out;
				*ret = res;
				res.result = NULL;
				r = 0;
				goto out;
			case CORDON_ACTION_ABANDONED:
				/* Provably never sent: running it now is the first run. */
				break;
			default:
				r = db_failf(db, EBADMSG, "invalid action state");
				goto out;
			}
		}
	}

	db_new_id("ac", res.action_id, sizeof(res.action_id));
	if (call->tier > CORDON_RISK_READ) {
		r = approval_consume_tx(db, key, req->approval_id, call, res.action_id);
		if (r < 0)
			goto out;
	}
	r = db_prepare(
		db,
		"INSERT INTO actions(id, session, connector, tool, tier, replay, approval_id, request_hash, state, "
		"created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?10, ?9, ?9)",
		&st);
	if (r < 0)
		goto out;
	if ((r = db_bind_text(db, st, 1, res.action_id)) < 0 || (r = db_bind_text(db, st, 2, call->session)) < 0 ||
	    (r = db_bind_text(db, st, 3, call->connector)) < 0 || (r = db_bind_text(db, st, 4, call->tool)) < 0 ||
	    (r = db_bind_int64(db, st, 5, call->tier)) < 0 || (r = db_bind_int64(db, st, 6, res.replay)) < 0 ||
	    (r = db_bind_text(db, st, 7, call->tier > CORDON_RISK_READ ? req->approval_id : NULL)) < 0 ||
	    (r = db_bind_blob(db, st, 8, hash, 32)) < 0 ||
	    (r = db_bind_int64(db, st, 9, (int64_t)cordon_db_now(db))) < 0 ||
	    (r = db_bind_int64(db, st, 10, req->dispatch_now ? CORDON_ACTION_DISPATCHED : CORDON_ACTION_PREPARED)) < 0)
		goto out;
	r = db_step_done(db, st);
	if (r < 0)
		goto out;
	db_stmt_release(TAKE_PTR(st));

	if (use_idem) {
		r = db_prepare(db,
			       "INSERT INTO idempotency(connector, key, request_hash, action_id, created_at, subject) "
			       "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(connector, subject, key) DO UPDATE SET "
			       "action_id = excluded.action_id, result = NULL, created_at = excluded.created_at",
			       &st);
		if (r < 0)
			goto out;
		if ((r = db_bind_text(db, st, 1, call->connector)) < 0 || (r = db_bind_text(db, st, 6, scope)) < 0 ||
		    (r = db_bind_text(db, st, 2, req->idempotency_key)) < 0 ||
		    (r = db_bind_blob(db, st, 3, hash, 32)) < 0 || (r = db_bind_text(db, st, 4, res.action_id)) < 0 ||
		    (r = db_bind_int64(db, st, 5, (int64_t)cordon_db_now(db))) < 0)
			goto out;
		r = db_step_done(db, st);
		if (r < 0)
			goto out;
	}
	r = audit_action(db, &actor, res.action_id, call->session, call->connector, call->tool, (int)call->tier,
			 req->dispatch_now ? "dispatched" : "prepared",
			 call->tier > CORDON_RISK_READ ? req->approval_id : NULL, NULL);
	if (r < 0)
		goto out;
	r = db_tx_commit(&tx);
	if (r < 0)
		goto out;
	res.outcome = CORDON_BEGIN_DISPATCH;
	*ret = res;
	r = 0;
out:
	free(idem.sealed);
	if (r < 0)
		cordon_action_begin_result_done(&res);
	return r;
}

/* Only values of our own shape reach a refused call's record. */
static bool id_is_ours(const char *s)
{
	return s && strncmp(s, "ap_", 3) == 0 && hex_is_lower_n(s + 3, 32);
}

static bool id_is_fingerprint(const char *s)
{
	return hex_is_lower_n(s, 64);
}

static const char *refusal_reason(int r)
{
	switch (r) {
	case -ENOENT:
		return "approval-missing";
	case -EAGAIN:
		return "approval-pending";
	case -EACCES:
		return "denied";
	case -ETIME:
		return "approval-expired";
	case -ECANCELED:
		return "approval-revoked";
	case -EALREADY:
		return "approval-reused";
	case -EBADMSG:
		return "approval-mismatch";
	case -ESTALE:
		return "stale-call";
	case -EEXIST:
		return "idempotency-conflict";
	case -EINPROGRESS:
		return "idempotency-in-progress";
	case -ENOTRECOVERABLE:
		return "idempotency-outcome-unknown";
	case -ENODATA:
		return "idempotency-result-unavailable";
	default:
		return "error";
	}
}

int cordon_action_begin(struct cordon_db *db, struct cordon_key *key, const struct cordon_action_begin *req,
			struct cordon_action_begin_result *ret)
{
	char saved[sizeof(db->last_error)];
	int r;

	r = begin_impl(db, key, req, ret);
	if (r >= 0 || r == -EINVAL || !req)
		return r;
	/* The refusal is worth a record (a mismatching or reused approval is
	 * an attack signal), written after the rollback in its own
	 * transaction, best effort: the call is refused either way. */
	memcpy(saved, db->last_error, sizeof(saved));
	{
		struct cordon_actor actor = cordon_actor_session(req->call.session);
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
						 .event = CORDON_AUDIT_DECISION,
						 .actor = &actor,
						 .connector = req->call.connector,
						 .tool = req->call.tool,
						 .tier = (int)req->call.tier,
						 .decision = "deny",
						 .reason = refusal_reason(r),
						 .approval_id = id_is_ours(req->approval_id) ? req->approval_id : NULL,
						 .fingerprint = id_is_fingerprint(req->call.fingerprint)
									? req->call.fingerprint
									: NULL };
		(void)cordon_audit_append(db, &ev);
	}
	memcpy(db->last_error, saved, sizeof(saved));
	return r;
}

struct act_row {
	char session[64], connector[33], tool[129];
	enum cordon_action_state state;
	int tier;
	enum cordon_replay replay;
};

static int act_load(struct cordon_db *db, const char *id, struct act_row *a)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "SELECT session, connector, tool, state, tier, replay FROM actions WHERE id = ?1", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, id)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, ENOENT, "no such action");
	snprintf(a->session, sizeof(a->session), "%s", (const char *)sqlite3_column_text(st, 0));
	snprintf(a->connector, sizeof(a->connector), "%s", (const char *)sqlite3_column_text(st, 1));
	snprintf(a->tool, sizeof(a->tool), "%s", (const char *)sqlite3_column_text(st, 2));
	a->state = (enum cordon_action_state)sqlite3_column_int(st, 3);
	a->tier = sqlite3_column_int(st, 4);
	a->replay = sqlite3_column_int(st, 5) ? CORDON_REPLAY_SAFE : CORDON_REPLAY_UNSAFE;
	return 0;
}

static int act_cas(struct cordon_db *db, const char *id, enum cordon_action_state from, enum cordon_action_state to,
		   const char *resolved_by)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db,
		       "UPDATE actions SET state = ?3, updated_at = ?4, resolved_by = coalesce(?5, resolved_by) "
		       "WHERE id = ?1 AND state = ?2",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, id)) < 0 || (r = db_bind_int64(db, st, 2, from)) < 0 ||
	    (r = db_bind_int64(db, st, 3, to)) < 0 || (r = db_bind_int64(db, st, 4, (int64_t)cordon_db_now(db))) < 0 ||
	    (r = db_bind_text(db, st, 5, resolved_by)) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	return sqlite3_changes(db->sql) == 1
		       ? 0
		       : db_failf(db, ESTALE, "action is not %s", cordon_action_state_to_string(from));
}

int cordon_action_dispatched(struct cordon_db *db, const char *action_id)
{
	_cleanup_tx_ struct db_tx tx = {};
	struct act_row a;
	int r;

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = act_load(db, action_id, &a);
	if (r < 0)
		return r;
	r = act_cas(db, action_id, CORDON_ACTION_PREPARED, CORDON_ACTION_DISPATCHED, NULL);
	if (r < 0)
		return r;
	struct cordon_actor actor = cordon_actor_session(a.session);
	r = audit_action(db, &actor, action_id, a.session, a.connector, a.tool, a.tier, "dispatched", NULL, NULL);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

static int action_complete(struct cordon_db *db, struct cordon_key *key, const char *action_id, bool succeeded,
			   const void *result, size_t result_len, const char *reason)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	_cleanup_free_ uint8_t *sealed = NULL;
	size_t sealed_len = 0;
	struct act_row a;
	int r;

	if (result_len > CORDON_RESULT_MAX_BYTES || (!result && result_len))
		return db_failf(db, EMSGSIZE, "result too large to store");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = act_load(db, action_id, &a);
	if (r < 0)
		return r;
	r = act_cas(db, action_id, CORDON_ACTION_DISPATCHED, succeeded ? CORDON_ACTION_SUCCEEDED : CORDON_ACTION_FAILED,
		    NULL);
	if (r < 0)
		return r;
	if (a.replay == CORDON_REPLAY_SAFE && result) {
		r = seal(key, action_id, result, result_len, &sealed, &sealed_len);
		if (r < 0)
			return db_failf(db, -r, "sealing the result failed");
		r = db_prepare(db, "UPDATE idempotency SET result = ?2 WHERE action_id = ?1", &st);
		if (r < 0)
			return r;
		if ((r = db_bind_text(db, st, 1, action_id)) < 0 ||
		    (r = db_bind_blob(db, st, 2, sealed, sealed_len)) < 0)
			return r;
		r = db_step_done(db, st);
		if (r < 0)
			return r;
	}
	struct cordon_actor actor = cordon_actor_session(a.session);
	r = audit_action(db, &actor, action_id, a.session, a.connector, a.tool, a.tier,
			 succeeded ? "succeeded" : "failed", NULL, reason);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

int cordon_action_complete(struct cordon_db *db, struct cordon_key *key, const char *action_id, bool succeeded,
			   const void *result, size_t result_len)
{
	return action_complete(db, key, action_id, succeeded, result, result_len, NULL);
}

int cordon_action_fail(struct cordon_db *db, const char *action_id, const char *reason)
{
	return action_complete(db, NULL, action_id, false, NULL, 0, reason);
}

static int recover_state(struct cordon_db *db, enum cordon_action_state from, enum cordon_action_state to,
			 uint64_t *ret_n)
{
	struct cordon_actor sys = cordon_actor_system();
	uint64_t n = 0;
	int r;

	for (;;) {
		_cleanup_stmt_ sqlite3_stmt *st = NULL;
		char id[CORDON_ID_STRING_MAX];
		struct act_row a;

		r = db_prepare(db, "SELECT id FROM actions WHERE state = ?1 LIMIT 1", &st);
		if (r < 0)
			return r;
		if ((r = db_bind_int64(db, st, 1, from)) < 0)
			return r;
		r = db_step_row(db, st);
		if (r < 0)
			return r;
		if (r == 0)
			break;
		snprintf(id, sizeof(id), "%s", (const char *)sqlite3_column_text(st, 0));
		db_stmt_release(TAKE_PTR(st));
		r = act_load(db, id, &a);
		if (r < 0)
			return r;
		r = act_cas(db, id, from, to, "recovery");
		if (r < 0)
			return r;
		r = audit_action(db, &sys, id, a.session, a.connector, a.tool, -1, cordon_action_state_to_string(to),
				 NULL, "recovery");
		if (r < 0)
			return r;
		n++;
	}
	*ret_n = n;
	return 0;
}

int cordon_actions_recover(struct cordon_db *db, uint64_t *ret_abandoned, uint64_t *ret_unknown)
{
	_cleanup_tx_ struct db_tx tx = {};
	uint64_t ab = 0, un = 0;
	int r;

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = recover_state(db, CORDON_ACTION_PREPARED, CORDON_ACTION_ABANDONED, &ab);
	if (r < 0)
		return r;
	r = recover_state(db, CORDON_ACTION_DISPATCHED, CORDON_ACTION_OUTCOME_UNKNOWN, &un);
	if (r < 0)
		return r;
	r = db_tx_commit(&tx);
	if (r < 0)
		return r;
	if (ret_abandoned)
		*ret_abandoned = ab;
	if (ret_unknown)
		*ret_unknown = un;
	return 0;
}

int cordon_action_resolve(struct cordon_db *db, const struct cordon_actor *actor, const char *action_id, bool succeeded)
{
	_cleanup_tx_ struct db_tx tx = {};
	struct act_row a;
	char who[128];
	int r;

	if (!cordon_actor_is_operator(actor))
		return db_failf(db, EPERM, "only an operator may resolve actions");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = act_load(db, action_id, &a);
	if (r < 0)
		return r;
	if (a.state != CORDON_ACTION_OUTCOME_UNKNOWN && a.state != CORDON_ACTION_ABANDONED)
		return db_failf(db, ESTALE, "action is %s, not outcome_unknown or abandoned",
				cordon_action_state_to_string(a.state));
	cordon_actor_describe(actor, who, sizeof(who));
	r = act_cas(db, action_id, a.state, succeeded ? CORDON_ACTION_SUCCEEDED : CORDON_ACTION_FAILED, who);
	if (r < 0)
		return r;
	r = audit_action(db, actor, action_id, a.session, a.connector, a.tool, -1, succeeded ? "succeeded" : "failed",
			 NULL, "operator-resolved");
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

int cordon_action_state(struct cordon_db *db, const char *action_id, enum cordon_action_state *ret)
{
	struct act_row a;
	int r = act_load(db, action_id, &a);

	if (r < 0)
		return r;
	*ret = a.state;
	return 0;
}

#define N_STATES (CORDON_ACTION_OUTCOME_UNKNOWN + 1)

int cordon_actions_list(struct cordon_db *db, const struct cordon_list_filter *f, cordon_action_cb cb, void *userdata)
{
	static const struct cordon_list_filter every = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	if (!f)
		f = &every;
#define COLUMNS "id, session, connector, tool, state, tier, replay, created_at, updated_at, approval_id, resolved_by"
	r = db_prepare(db,
		       f->newest_first ? "SELECT " COLUMNS " FROM actions WHERE state IN (?1, ?2, ?3, ?4, ?5, ?6) "
					 "AND (?7 IS NULL OR connector = ?7) ORDER BY created_at DESC, id LIMIT ?8"
				       : "SELECT " COLUMNS " FROM actions WHERE state IN (?1, ?2, ?3, ?4, ?5, ?6) "
					 "AND (?7 IS NULL OR connector = ?7) ORDER BY created_at, id LIMIT ?8",
		       &st);
#undef COLUMNS
	if (r < 0)
		return r;
	if ((r = db_bind_states(db, st, 1, N_STATES, f->states)) < 0 ||
	    (r = db_bind_text(db, st, 7, f->connector)) < 0 ||
	    (r = db_bind_int64(db, st, 8, f->limit ? (int64_t)f->limit : -1)) < 0)
		return r;
	for (;;) {
		struct cordon_action_info a = {};

		r = db_step_row(db, st);
		if (r <= 0)
			return r;
		snprintf(a.id, sizeof(a.id), "%s", (const char *)sqlite3_column_text(st, 0));
		snprintf(a.session, sizeof(a.session), "%s", (const char *)sqlite3_column_text(st, 1));
		snprintf(a.connector, sizeof(a.connector), "%s", (const char *)sqlite3_column_text(st, 2));
		snprintf(a.tool, sizeof(a.tool), "%s", (const char *)sqlite3_column_text(st, 3));
		a.state = (enum cordon_action_state)sqlite3_column_int(st, 4);
		a.tier = (enum cordon_risk)sqlite3_column_int(st, 5);
		a.replay = sqlite3_column_int(st, 6) == CORDON_REPLAY_SAFE ? CORDON_REPLAY_SAFE : CORDON_REPLAY_UNSAFE;
		a.created_at = (uint64_t)sqlite3_column_int64(st, 7);
		a.updated_at = (uint64_t)sqlite3_column_int64(st, 8);
		if (sqlite3_column_type(st, 9) != SQLITE_NULL)
			snprintf(a.approval_id, sizeof(a.approval_id), "%s", (const char *)sqlite3_column_text(st, 9));
		if (sqlite3_column_type(st, 10) != SQLITE_NULL)
			snprintf(a.resolved_by, sizeof(a.resolved_by), "%s", (const char *)sqlite3_column_text(st, 10));
		r = cb(&a, userdata);
		if (r < 0)
			return r;
	}
}

int actions_count(struct cordon_db *db, uint32_t states, uint64_t *ret)
{
	return db_count_in_states(db, "SELECT count(*) FROM actions WHERE state IN (?1, ?2, ?3, ?4, ?5, ?6)", N_STATES,
				  states, ret);
}

int actions_unresolved_tx(struct cordon_db *db, const char *connector, uint64_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

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
	*ret_n = (uint64_t)sqlite3_column_int64(st, 0);
	return 0;
}

/* One prune statement: ?1 the cutoff, ?2..?4 the finished states. */
static int prune_finished(struct cordon_db *db, const char *sql, uint64_t cutoff, uint64_t *ret_n)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, sql, &st);
	if (r < 0)
		return r;
	if ((r = db_bind_int64(db, st, 1, (int64_t)cutoff)) < 0 ||
	    (r = db_bind_int64(db, st, 2, CORDON_ACTION_SUCCEEDED)) < 0 ||
	    (r = db_bind_int64(db, st, 3, CORDON_ACTION_FAILED)) < 0 ||
	    (r = db_bind_int64(db, st, 4, CORDON_ACTION_ABANDONED)) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	*ret_n = (uint64_t)sqlite3_changes(db->sql);
	return 0;
}

int actions_prune_tx(struct cordon_db *db, uint64_t cutoff, uint64_t *ret_idempotency, uint64_t *ret_actions)
{
	int r;

	/* Identities first: an action an identity still names is kept. Never
	 * an outcome_unknown action: that needs an operator. */
	r = prune_finished(db,
			   "DELETE FROM idempotency WHERE created_at < ?1 AND action_id IN "
			   "(SELECT id FROM actions WHERE state IN (?2, ?3, ?4) AND updated_at < ?1)",
			   cutoff, ret_idempotency);
	if (r < 0)
		return r;
	return prune_finished(db,
			      "DELETE FROM actions WHERE state IN (?2, ?3, ?4) AND updated_at < ?1 AND id NOT IN "
			      "(SELECT action_id FROM idempotency)",
			      cutoff, ret_actions);
}

/* ---- locks --------------------------------------------------------------- */

int cordon_lock_acquire(struct cordon_db *db, const char *resource, const char *holder, uint64_t lease_usec,
			uint64_t *ret_token)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	uint64_t now = cordon_db_now(db), token = 1;
	int r;

	if (!resource || !*resource || !holder || !*holder || lease_usec == 0)
		return db_failf(db, EINVAL, "invalid lock request");
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = db_prepare(db, "SELECT token, holder, coalesce(expires_at, 0) FROM locks WHERE resource = ?1", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, resource)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 1) {
		if (sqlite3_column_type(st, 1) != SQLITE_NULL && (uint64_t)sqlite3_column_int64(st, 2) > now)
			return db_failf(db, EBUSY, "resource is locked by another holder");
		token = (uint64_t)sqlite3_column_int64(st, 0) + 1;
	}
	db_stmt_release(TAKE_PTR(st));
	r = db_prepare(db,
		       "INSERT INTO locks(resource, token, holder, expires_at) VALUES (?1, ?2, ?3, ?4) "
		       "ON CONFLICT(resource) DO UPDATE SET token = excluded.token, holder = excluded.holder, "
		       "expires_at = excluded.expires_at",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, resource)) < 0 || (r = db_bind_int64(db, st, 2, (int64_t)token)) < 0 ||
	    (r = db_bind_text(db, st, 3, holder)) < 0 ||
	    (r = db_bind_int64(db, st, 4, (int64_t)(now + lease_usec))) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	r = db_tx_commit(&tx);
	if (r < 0)
		return r;
	*ret_token = token;
	return 0;
}

static int lock_check_tx(struct cordon_db *db, const char *resource, uint64_t token, bool need_live)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "SELECT token, holder, coalesce(expires_at, 0) FROM locks WHERE resource = ?1", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, resource)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0)
		return db_failf(db, ENOENT, "unknown resource");
	if (token != (uint64_t)sqlite3_column_int64(st, 0))
		return db_failf(db, ESTALE, "fencing token %llu is not the newest (%lld)", (unsigned long long)token,
				(long long)sqlite3_column_int64(st, 0));
	if (need_live &&
	    (sqlite3_column_type(st, 1) == SQLITE_NULL || (uint64_t)sqlite3_column_int64(st, 2) <= cordon_db_now(db)))
		return db_failf(db, ESTALE, "lease of token %llu has ended", (unsigned long long)token);
	return 0;
}

int cordon_lock_validate(struct cordon_db *db, const char *resource, uint64_t token)
{
	return lock_check_tx(db, resource, token, true);
}

int cordon_lock_release(struct cordon_db *db, const char *resource, uint64_t token)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = lock_check_tx(db, resource, token, false);
	if (r < 0)
		return r;
	/* The token row stays: the next acquisition must still count up. */
	r = db_prepare(db, "UPDATE locks SET holder = NULL, expires_at = NULL WHERE resource = ?1 AND token = ?2", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, resource)) < 0 || (r = db_bind_int64(db, st, 2, (int64_t)token)) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}

int cordon_action_worker_lost(struct cordon_db *db, const char *action_id)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL, *up = NULL;
	_cleanup_free_ char *session = NULL, *connector = NULL, *tool = NULL;
	int tier, r;

	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = db_prepare(db, "SELECT session, connector, tool, tier FROM actions WHERE id = ?1 AND state = ?2", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, st, 1, action_id)) < 0 ||
	    (r = db_bind_int64(db, st, 2, CORDON_ACTION_DISPATCHED)) < 0)
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
	r = db_prepare(db, "UPDATE actions SET state = ?3, updated_at = ?2 WHERE id = ?1 AND state = ?4", &up);
	if (r < 0)
		return r;
	if ((r = db_bind_text(db, up, 1, action_id)) < 0 ||
	    (r = db_bind_int64(db, up, 2, (int64_t)cordon_db_now(db))) < 0 ||
	    (r = db_bind_int64(db, up, 3, CORDON_ACTION_OUTCOME_UNKNOWN)) < 0 ||
	    (r = db_bind_int64(db, up, 4, CORDON_ACTION_DISPATCHED)) < 0)
		return r;
	r = db_step_done(db, up);
	if (r < 0)
		return r;
	struct cordon_actor sys = cordon_actor_system();
	struct cordon_audit_event ev = {
		CORDON_AUDIT_EVENT_INIT,    .event = CORDON_AUDIT_ACTION, .actor = &sys, .action_id = action_id,
		.session = session,	    .connector = connector,	  .tool = tool,	 .tier = tier,
		.state = "outcome_unknown", .reason = "worker-lost"
	};
	r = audit_append_tx(db, &ev);
	if (r < 0)
		return r;
	return db_tx_commit(&tx);
}
