/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Action ledger, start-up recovery, idempotency of replay-safe tools, and
 * resource locks with fencing tokens. */

#include "broker-test.h"

static int setup(void **state)
{
	*state = bt_new();
	return 0;
}

static int teardown(void **state)
{
	bt_free(*state);
	return 0;
}

static enum cordon_action_state state_of(struct bt *t, const char *id)
{
	enum cordon_action_state s;

	assert_int_equal(cordon_action_state(t->db, id, &s), 0);
	return s;
}

/* Begins an approved write_file (replay-safe) call with an idempotency key. */
static int begin_write(struct bt *t, const char *args, const char *idem, struct cordon_action_begin_result *res)
{
	struct bt_call c;
	char id[CORDON_ID_STRING_MAX];
	int r;

	bt_call_init(t, &c, "s1", "write_file", args);
	bt_approve(t, &c.call, id);
	r = bt_begin(t, &c.call, id, idem, res);
	bt_call_done(&c);
	return r;
}

static void test_ledger_happy_path(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result res;

	assert_int_equal(begin_write(t, "{\"p\":1}", NULL, &res), 0);
	assert_int_equal(res.outcome, CORDON_BEGIN_DISPATCH);
	assert_int_equal(state_of(t, res.action_id), CORDON_ACTION_PREPARED);
	assert_int_equal(cordon_action_dispatched(t->db, res.action_id), 0);
	assert_int_equal(state_of(t, res.action_id), CORDON_ACTION_DISPATCHED);
	assert_int_equal(cordon_action_complete(t->db, t->key, res.action_id, true, "ok", 2), 0);
	assert_int_equal(state_of(t, res.action_id), CORDON_ACTION_SUCCEEDED);
	cordon_action_begin_result_done(&res);
}

static void test_dispatch_now_skips_prepared(void **state)
{
	struct bt *t = *state;
	struct bt_call c;
	struct cordon_action_begin b = {};
	struct cordon_action_begin_result res;

	bt_call_init(t, &c, "s1", "read_file", "{}");
	b.call = c.call;
	b.dispatch_now = true;
	assert_int_equal(cordon_action_begin(t->db, t->key, &b, &res), 0);
	assert_int_equal(state_of(t, res.action_id), CORDON_ACTION_DISPATCHED);
	assert_int_equal(cordon_action_dispatched(t->db, res.action_id), -ESTALE);
	/* A crash now: the conservative answer. */
	assert_int_equal(cordon_actions_recover(t->db, NULL, NULL), 0);
	assert_int_equal(state_of(t, res.action_id), CORDON_ACTION_OUTCOME_UNKNOWN);
	cordon_action_begin_result_done(&res);
	bt_call_done(&c);
}

static void test_ledger_transitions_are_strict(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result res;

	assert_int_equal(begin_write(t, "{\"p\":1}", NULL, &res), 0);
	/* Cannot complete what was never dispatched. */
	assert_int_equal(cordon_action_complete(t->db, t->key, res.action_id, true, NULL, 0), -ESTALE);
	assert_int_equal(cordon_action_dispatched(t->db, res.action_id), 0);
	assert_int_equal(cordon_action_dispatched(t->db, res.action_id), -ESTALE);
	assert_int_equal(cordon_action_complete(t->db, t->key, res.action_id, false, NULL, 0), 0);
	assert_int_equal(state_of(t, res.action_id), CORDON_ACTION_FAILED);
	assert_int_equal(cordon_action_complete(t->db, t->key, res.action_id, true, NULL, 0), -ESTALE);
	assert_int_equal(cordon_action_dispatched(t->db, "ac_nope"), -ENOENT);
	cordon_action_begin_result_done(&res);
}

/* A connector's JSON-RPC error: failed, and the audit record says why in
 * a fixed word (never the connector's text). */
static void test_fail_records_reason(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result res;
	json_t *arr = NULL, *rec;

	assert_int_equal(begin_write(t, "{\"p\":1}", NULL, &res), 0);
	assert_int_equal(cordon_action_fail(t->db, res.action_id, "connector-error"), -ESTALE);
	assert_int_equal(cordon_action_dispatched(t->db, res.action_id), 0);
	assert_int_equal(cordon_action_fail(t->db, res.action_id, "connector-error"), 0);
	assert_int_equal(state_of(t, res.action_id), CORDON_ACTION_FAILED);
	assert_int_equal(cordon_audit_tail(t->db, 1, &arr), 0);
	rec = json_array_get(arr, 0);
	assert_string_equal(json_string_value(json_object_get(rec, "event")), "action");
	assert_string_equal(json_string_value(json_object_get(rec, "state")), "failed");
	assert_string_equal(json_string_value(json_object_get(rec, "reason")), "connector-error");
	assert_string_equal(json_string_value(json_object_get(rec, "action")), res.action_id);
	json_decref(arr);
	assert_int_equal(cordon_action_fail(t->db, res.action_id, "connector-error"), -ESTALE);
	cordon_action_begin_result_done(&res);
}

static void test_recovery_abandons_prepared_and_flags_dispatched(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result a, b, c;
	struct cordon_broker_start_result sr;

	assert_int_equal(begin_write(t, "{\"p\":1}", NULL, &a), 0);
	assert_int_equal(begin_write(t, "{\"p\":2}", NULL, &b), 0);
	assert_int_equal(cordon_action_dispatched(t->db, b.action_id), 0);
	assert_int_equal(begin_write(t, "{\"p\":3}", NULL, &c), 0);
	assert_int_equal(cordon_action_dispatched(t->db, c.action_id), 0);
	assert_int_equal(cordon_action_complete(t->db, t->key, c.action_id, true, NULL, 0), 0);

	/* A crash here; the next process starts. */
	cordon_db_close(t->db);
	bt_open_db(t);
	bt_setup_audit(t, 1000, 3600 * SEC);
	assert_int_equal(cordon_broker_start(t->db, &sr), 0);
	assert_int_equal(sr.abandoned, 1);
	assert_int_equal(sr.outcome_unknown, 1);
	assert_int_equal(state_of(t, a.action_id), CORDON_ACTION_ABANDONED);
	assert_int_equal(state_of(t, b.action_id), CORDON_ACTION_OUTCOME_UNKNOWN);
	assert_int_equal(state_of(t, c.action_id), CORDON_ACTION_SUCCEEDED);
	/* Never retried automatically: nothing moves them but an operator. */
	assert_int_equal(cordon_action_dispatched(t->db, a.action_id), -ESTALE);
	assert_int_equal(cordon_action_dispatched(t->db, b.action_id), -ESTALE);
	assert_int_equal(cordon_action_resolve(t->db, &t->s1, b.action_id, true), -EPERM);
	assert_int_equal(cordon_action_resolve(t->db, &t->op, b.action_id, true), 0);
	assert_int_equal(state_of(t, b.action_id), CORDON_ACTION_SUCCEEDED);
	assert_int_equal(cordon_action_resolve(t->db, &t->op, c.action_id, false), -ESTALE);
	cordon_action_begin_result_done(&a);
	cordon_action_begin_result_done(&b);
	cordon_action_begin_result_done(&c);
}

static void test_idempotent_replay_returns_stored_result(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result res;
	struct bt_call c;

	assert_int_equal(begin_write(t, "{\"p\":1}", "gw-key-1", &res), 0);
	assert_int_equal(cordon_action_dispatched(t->db, res.action_id), 0);
	assert_int_equal(cordon_action_complete(t->db, t->key, res.action_id, true, "{\"written\":true}", 16), 0);
	cordon_action_begin_result_done(&res);

	/* Same identity, same request (key order differs): stored result, no
	 * new action, and no approval needed because nothing executes. */
	bt_call_init(t, &c, "s1", "write_file", "{\"p\":1}");
	assert_int_equal(bt_begin(t, &c.call, NULL, "gw-key-1", &res), 0);
	assert_int_equal(res.outcome, CORDON_BEGIN_STORED_RESULT);
	assert_int_equal(res.stored_state, CORDON_ACTION_SUCCEEDED);
	assert_int_equal(res.result_len, 16);
	assert_memory_equal(res.result, "{\"written\":true}", 16);
	cordon_action_begin_result_done(&res);
	bt_call_done(&c);
}

static void test_idempotency_conflict_on_different_request(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result res;

	assert_int_equal(begin_write(t, "{\"p\":1}", "gw-key-1", &res), 0);
	cordon_action_begin_result_done(&res);
	assert_int_equal(begin_write(t, "{\"p\":2}", "gw-key-1", &res), -EEXIST);
}

static void test_idempotency_in_progress(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result res;
	struct bt_call c;

	assert_int_equal(begin_write(t, "{\"p\":1}", "gw-key-1", &res), 0);
	bt_call_init(t, &c, "s1", "write_file", "{\"p\":1}");
	assert_int_equal(bt_begin(t, &c.call, NULL, "gw-key-1", NULL), -EINPROGRESS);
	assert_int_equal(cordon_action_dispatched(t->db, res.action_id), 0);
	assert_int_equal(bt_begin(t, &c.call, NULL, "gw-key-1", NULL), -EINPROGRESS);
	cordon_action_begin_result_done(&res);
	bt_call_done(&c);
}

static void test_idempotency_outcome_unknown_needs_operator(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result res;
	struct bt_call c;

	assert_int_equal(begin_write(t, "{\"p\":1}", "gw-key-1", &res), 0);
	assert_int_equal(cordon_action_dispatched(t->db, res.action_id), 0);
	assert_int_equal(cordon_actions_recover(t->db, NULL, NULL), 0);
	bt_call_init(t, &c, "s1", "write_file", "{\"p\":1}");
	assert_int_equal(bt_begin(t, &c.call, NULL, "gw-key-1", NULL), -ENOTRECOVERABLE);
	cordon_action_begin_result_done(&res);
	bt_call_done(&c);
}

static void test_idempotency_abandoned_runs_once_more(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result res, again;

	assert_int_equal(begin_write(t, "{\"p\":1}", "gw-key-1", &res), 0);
	assert_int_equal(cordon_actions_recover(t->db, NULL, NULL), 0);
	assert_int_equal(state_of(t, res.action_id), CORDON_ACTION_ABANDONED);
	/* Provably never sent: the same identity may run (with a fresh approval). */
	assert_int_equal(begin_write(t, "{\"p\":1}", "gw-key-1", &again), 0);
	assert_int_equal(again.outcome, CORDON_BEGIN_DISPATCH);
	assert_string_not_equal(again.action_id, res.action_id);
	cordon_action_begin_result_done(&res);
	cordon_action_begin_result_done(&again);
}

static void test_stored_result_unreadable_after_restart(void **state)
{
	struct bt *t = *state;
	static const uint8_t other[32] = { 7 };
	struct cordon_action_begin_result res;
	struct bt_call c;

	assert_int_equal(begin_write(t, "{\"p\":1}", "gw-key-1", &res), 0);
	assert_int_equal(cordon_action_dispatched(t->db, res.action_id), 0);
	assert_int_equal(cordon_action_complete(t->db, t->key, res.action_id, true, "done", 4), 0);
	cordon_action_begin_result_done(&res);
	/* A new process has a new key: the sealed result cannot be opened,
	 * and the call is NOT run again. */
	cordon_key_free(t->key);
	assert_int_equal(cordon_key_new_from_bytes(other, &t->key), 0);
	bt_call_init(t, &c, "s1", "write_file", "{\"p\":1}");
	assert_int_equal(bt_begin(t, &c.call, NULL, "gw-key-1", NULL), -ENODATA);
	bt_call_done(&c);
}

static void test_unsafe_tool_ignores_idempotency_and_needs_new_approval(void **state)
{
	struct bt *t = *state;
	struct bt_call c;
	char id[CORDON_ID_STRING_MAX];
	struct cordon_action_begin_result res;

	/* delete_file is unsafe (the default). */
	bt_call_init(t, &c, "s1", "delete_file", "{\"p\":1}");
	bt_approve(t, &c.call, id);
	assert_int_equal(bt_begin(t, &c.call, id, "gw-key-9", &res), 0);
	assert_int_equal(res.replay, CORDON_REPLAY_UNSAFE);
	cordon_action_begin_result_done(&res);
	/* The repeat with the same key is not answered from a store: it is a
	 * new call and its old approval is spent. */
	assert_int_equal(bt_begin(t, &c.call, id, "gw-key-9", NULL), -EALREADY);
	assert_int_equal(bt_begin(t, &c.call, NULL, "gw-key-9", NULL), -ENOENT);
	bt_call_done(&c);
}

/* Begins a write_file call of `session` for `subject` (NULL: none given). */
static int begin_as(struct bt *t, const char *session, const char *subject, const char *args, const char *idem,
		    bool approve, struct cordon_action_begin_result *res)
{
	struct bt_call c;
	char id[CORDON_ID_STRING_MAX];
	struct cordon_action_begin b = {};
	struct cordon_action_begin_result tmp = {};
	int r;

	bt_call_init(t, &c, session, "write_file", args);
	if (approve)
		bt_approve(t, &c.call, id);
	b = (struct cordon_action_begin){
		.call = c.call, .approval_id = approve ? id : NULL, .idempotency_key = idem, .subject = subject
	};
	r = cordon_action_begin(t->db, t->key, &b, res ? res : &tmp);
	if (!res)
		cordon_action_begin_result_done(&tmp);
	bt_call_done(&c);
	return r;
}

static void run_to_success(struct bt *t, const char *action_id, const char *result)
{
	assert_int_equal(cordon_action_dispatched(t->db, action_id), 0);
	assert_int_equal(cordon_action_complete(t->db, t->key, action_id, true, result, strlen(result)), 0);
}

/* Finding 5 (issue 11): another subject with the same key is another
 * identity. It gets no stored result (its write needs its own approval and
 * runs as its own action), cannot take or block the key, and learns nothing
 * (a different request under "the same" key is no conflict for it). */
static void test_idempotency_scoped_to_subject(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result a, b;

	assert_int_equal(begin_as(t, "s1", "uid:0", "{\"p\":1}", "k", true, &a), 0);
	run_to_success(t, a.action_id, "{\"by\":\"A\"}");
	/* B: no approval, no stored result: the approval it lacks is missing. */
	assert_int_equal(begin_as(t, "s2", "uid:1000", "{\"p\":1}", "k", false, NULL), -ENOENT);
	/* A different request under the same key is no conflict for B... */
	assert_int_equal(begin_as(t, "s2", "uid:1000", "{\"p\":2}", "k", true, &b), 0);
	assert_int_equal(b.outcome, CORDON_BEGIN_DISPATCH);
	assert_string_not_equal(b.action_id, a.action_id);
	run_to_success(t, b.action_id, "{\"by\":\"B\"}");
	cordon_action_begin_result_done(&b);
	/* ...and B's use did not touch A's identity: A's retry (another session
	 * of the same subject) still gets A's result, without an approval. */
	assert_int_equal(begin_as(t, "s3", "uid:0", "{\"p\":1}", "k", false, &b), 0);
	assert_int_equal(b.outcome, CORDON_BEGIN_STORED_RESULT);
	assert_string_equal(b.action_id, a.action_id);
	assert_memory_equal(b.result, "{\"by\":\"A\"}", b.result_len);
	cordon_action_begin_result_done(&b);
	/* B's own retry gets B's result; A's request under B's scope conflicts. */
	assert_int_equal(begin_as(t, "s2", "uid:1000", "{\"p\":2}", "k", false, &b), 0);
	assert_int_equal(b.outcome, CORDON_BEGIN_STORED_RESULT);
	assert_memory_equal(b.result, "{\"by\":\"B\"}", b.result_len);
	cordon_action_begin_result_done(&b);
	assert_int_equal(begin_as(t, "s2", "uid:1000", "{\"p\":1}", "k", true, NULL), -EEXIST);
	cordon_action_begin_result_done(&a);
}

/* In flight for A is no -EINPROGRESS for B (B's key is its own). */
static void test_idempotency_in_flight_not_visible_to_other_subject(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result a, b;

	assert_int_equal(begin_as(t, "s1", "uid:0", "{\"p\":1}", "k", true, &a), 0);
	assert_int_equal(begin_as(t, "s1", "uid:0", "{\"p\":1}", "k", false, NULL), -EINPROGRESS);
	assert_int_equal(begin_as(t, "s2", "uid:1000", "{\"p\":1}", "k", true, &b), 0);
	assert_int_equal(b.outcome, CORDON_BEGIN_DISPATCH);
	cordon_action_begin_result_done(&a);
	cordon_action_begin_result_done(&b);
}

/* No subject: the key is scoped to the session alone; a subject may not
 * name the session namespace, and must be a valid identifier. */
static void test_idempotency_without_subject_is_session_scoped(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result a, b;

	assert_int_equal(begin_as(t, "s1", NULL, "{\"p\":1}", "k", true, &a), 0);
	run_to_success(t, a.action_id, "{}");
	assert_int_equal(begin_as(t, "s2", NULL, "{\"p\":1}", "k", false, NULL), -ENOENT);
	assert_int_equal(begin_as(t, "s2", "session:s1", "{\"p\":1}", "k", false, NULL), -EINVAL);
	assert_int_equal(begin_as(t, "s2", "uid 0", "{\"p\":1}", "k", false, NULL), -EINVAL);
	assert_int_equal(begin_as(t, "s2", "", "{\"p\":1}", "k", false, NULL), -EINVAL);
	assert_int_equal(begin_as(t, "s1", NULL, "{\"p\":1}", "k", false, &b), 0);
	assert_int_equal(b.outcome, CORDON_BEGIN_STORED_RESULT);
	cordon_action_begin_result_done(&a);
	cordon_action_begin_result_done(&b);
}

static void test_invalid_idempotency_key_refused(void **state)
{
	struct bt *t = *state;
	struct bt_call c;
	char longkey[200];

	memset(longkey, 'k', sizeof(longkey) - 1);
	longkey[sizeof(longkey) - 1] = 0;
	bt_call_init(t, &c, "s1", "read_file", "{}");
	assert_int_equal(bt_begin(t, &c.call, NULL, "has space", NULL), -EINVAL);
	assert_int_equal(bt_begin(t, &c.call, NULL, "", NULL), -EINVAL);
	assert_int_equal(bt_begin(t, &c.call, NULL, longkey, NULL), -EINVAL);
	bt_call_done(&c);
}

static void test_request_hash_separates_tool_and_args(void **state)
{
	uint8_t a[32], b[32], c[32];

	(void)state;
	assert_int_equal(cordon_request_hash("t", "{\"a\":1}", 7, a), 0);
	assert_int_equal(cordon_request_hash("t", "{\"a\":2}", 7, b), 0);
	assert_int_equal(cordon_request_hash("u", "{\"a\":1}", 7, c), 0);
	assert_memory_not_equal(a, b, 32);
	assert_memory_not_equal(a, c, 32);
	assert_int_equal(cordon_request_hash("t", NULL, 0, a), 0);
	assert_int_equal(cordon_request_hash("t", "{}", 2, b), 0);
	assert_memory_equal(a, b, 32);
}

static void test_prune_keeps_unknown_and_recent(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result done, unknown, recent;
	struct cordon_prune_result pr;
	enum cordon_action_state st;
	struct bt_call c;

	assert_int_equal(begin_write(t, "{\"p\":1}", "k1", &done), 0);
	assert_int_equal(cordon_action_dispatched(t->db, done.action_id), 0);
	assert_int_equal(cordon_action_complete(t->db, t->key, done.action_id, true, "r", 1), 0);
	assert_int_equal(begin_write(t, "{\"p\":2}", NULL, &unknown), 0);
	assert_int_equal(cordon_action_dispatched(t->db, unknown.action_id), 0);
	assert_int_equal(cordon_actions_recover(t->db, NULL, NULL), 0);
	cordon_virtual_clock_advance(&t->clock, 8 * 24 * 3600 * SEC);
	assert_int_equal(begin_write(t, "{\"p\":3}", NULL, &recent), 0);

	assert_int_equal(cordon_broker_prune(t->db, &t->s1, 7 * 24 * 3600 * SEC, &pr), -EPERM);
	assert_int_equal(cordon_broker_prune(t->db, &t->sys, 7 * 24 * 3600 * SEC, &pr), 0);
	assert_int_equal(pr.idempotency, 1);
	assert_int_equal(pr.actions, 1);
	assert_int_equal(pr.approvals, 1);
	assert_int_equal(cordon_action_state(t->db, done.action_id, &st), -ENOENT);
	assert_int_equal(state_of(t, unknown.action_id), CORDON_ACTION_OUTCOME_UNKNOWN);
	assert_int_equal(state_of(t, recent.action_id), CORDON_ACTION_PREPARED);
	/* The pruned identity is gone: documented, a retry would run again. */
	bt_call_init(t, &c, "s1", "write_file", "{\"p\":1}");
	assert_int_equal(bt_begin(t, &c.call, NULL, "k1", NULL), -ENOENT);
	bt_call_done(&c);
	cordon_action_begin_result_done(&done);
	cordon_action_begin_result_done(&unknown);
	cordon_action_begin_result_done(&recent);
	{
		struct cordon_audit_report rep;
		assert_int_equal(cordon_audit_checkpoint(t->db), 1);
		assert_int_equal(cordon_audit_verify(t->db, &t->verifier, &rep), 0);
		assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
	}
}

static void test_lock_tokens_are_monotonic(void **state)
{
	struct bt *t = *state;
	uint64_t t1, t2, t3;

	assert_int_equal(cordon_lock_acquire(t->db, "repo:/work", "ac_1", 10 * SEC, &t1), 0);
	assert_int_equal(t1, 1);
	assert_int_equal(cordon_lock_acquire(t->db, "repo:/work", "ac_2", 10 * SEC, &t2), -EBUSY);
	assert_int_equal(cordon_lock_release(t->db, "repo:/work", t1), 0);
	assert_int_equal(cordon_lock_acquire(t->db, "repo:/work", "ac_2", 10 * SEC, &t2), 0);
	assert_true(t2 > t1);
	/* Restart keeps the counter. */
	cordon_db_close(t->db);
	bt_open_db(t);
	assert_int_equal(cordon_lock_release(t->db, "repo:/work", t2), 0);
	assert_int_equal(cordon_lock_acquire(t->db, "repo:/work", "ac_3", 10 * SEC, &t3), 0);
	assert_true(t3 > t2);
}

static void test_stale_token_refused_after_lease_expiry(void **state)
{
	struct bt *t = *state;
	uint64_t old, fresh;

	assert_int_equal(cordon_lock_acquire(t->db, "res", "slow", 5 * SEC, &old), 0);
	assert_int_equal(cordon_lock_validate(t->db, "res", old), 0);
	cordon_virtual_clock_advance(&t->clock, 6 * SEC);
	/* The slow holder's lease ended; its token no longer validates. */
	assert_int_equal(cordon_lock_validate(t->db, "res", old), -ESTALE);
	assert_int_equal(cordon_lock_acquire(t->db, "res", "fast", 5 * SEC, &fresh), 0);
	assert_true(fresh > old);
	/* The slow holder wakes up: commit and release with the old token fail. */
	assert_int_equal(cordon_lock_validate(t->db, "res", old), -ESTALE);
	assert_int_equal(cordon_lock_release(t->db, "res", old), -ESTALE);
	assert_int_equal(cordon_lock_validate(t->db, "res", fresh), 0);
	assert_int_equal(cordon_lock_release(t->db, "res", fresh), 0);
	assert_int_equal(cordon_lock_release(t->db, "nope", 1), -ENOENT);
}

static int collect_cb(const struct cordon_action_info *info, void *userdata)
{
	char *out = userdata;

	assert_int_equal(info->state, CORDON_ACTION_OUTCOME_UNKNOWN);
	assert_string_equal(info->tool, "write_file");
	memcpy(out, info->id, CORDON_ID_STRING_MAX);
	return 0;
}

static void test_operator_queue_lists_outcome_unknown(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result res;
	char found[CORDON_ID_STRING_MAX] = "";

	assert_int_equal(begin_write(t, "{\"p\":1}", NULL, &res), 0);
	assert_int_equal(cordon_action_dispatched(t->db, res.action_id), 0);
	assert_int_equal(cordon_actions_recover(t->db, NULL, NULL), 0);
	assert_int_equal(cordon_actions_list(t->db,
					     &(struct cordon_list_filter){
						     .states = CORDON_STATE_BIT(CORDON_ACTION_OUTCOME_UNKNOWN) },
					     collect_cb, found),
			 0);
	assert_string_equal(found, res.action_id);
	cordon_action_begin_result_done(&res);
}

struct action_rows {
	struct cordon_action_info row[4];
	size_t n;
};

static int rows_cb(const struct cordon_action_info *info, void *userdata)
{
	struct action_rows *v = userdata;

	assert_true(v->n < 4);
	v->row[v->n++] = *info;
	return 0;
}

/* What the operator's actions list renders comes from the core: the
 * approval an action consumed, who resolved it, its replay class; newest
 * first with a limit, one connector. */
static void test_list_shows_approval_and_resolver(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result w = {}, r = {};
	struct action_rows v = {};
	struct bt_call c;
	char who[128];

	assert_int_equal(begin_write(t, "{\"p\":1}", NULL, &w), 0);
	assert_int_equal(cordon_action_dispatched(t->db, w.action_id), 0);
	assert_int_equal(cordon_actions_recover(t->db, NULL, NULL), 0);
	assert_int_equal(cordon_action_resolve(t->db, &t->op, w.action_id, false), 0);
	cordon_virtual_clock_advance(&t->clock, SEC);
	bt_call_init(t, &c, "s2", "read_file", "{\"p\":2}");
	assert_int_equal(bt_begin(t, &c.call, NULL, NULL, &r), 0);
	bt_call_done(&c);

	assert_int_equal(cordon_actions_list(t->db, NULL, rows_cb, &v), 0);
	assert_int_equal(v.n, 2);
	assert_string_equal(v.row[0].id, w.action_id);
	assert_int_equal(v.row[0].state, CORDON_ACTION_FAILED);
	assert_int_equal(v.row[0].tier, CORDON_RISK_WRITE);
	assert_int_equal(v.row[0].replay, CORDON_REPLAY_SAFE);
	assert_int_equal(strncmp(v.row[0].approval_id, "ap_", 3), 0);
	cordon_actor_describe(&t->op, who, sizeof(who));
	assert_string_equal(v.row[0].resolved_by, who);
	assert_string_equal(v.row[1].id, r.action_id);
	assert_string_equal(v.row[1].session, "s2");
	assert_int_equal(v.row[1].state, CORDON_ACTION_PREPARED);
	assert_int_equal(v.row[1].replay, CORDON_REPLAY_UNSAFE);
	assert_string_equal(v.row[1].approval_id, "");
	assert_string_equal(v.row[1].resolved_by, "");

	v = (struct action_rows){};
	assert_int_equal(cordon_actions_list(t->db, &(struct cordon_list_filter){ .newest_first = true, .limit = 1 },
					     rows_cb, &v),
			 0);
	assert_int_equal(v.n, 1);
	assert_string_equal(v.row[0].id, r.action_id);
	v = (struct action_rows){};
	assert_int_equal(cordon_actions_list(t->db, &(struct cordon_list_filter){ .connector = "other" }, rows_cb, &v),
			 0);
	assert_int_equal(v.n, 0);
	cordon_action_begin_result_done(&w);
	cordon_action_begin_result_done(&r);
}

/* cordonctl status: each count from the module that owns the table. */
static void test_broker_status_counts(void **state)
{
	struct bt *t = *state;
	struct cordon_broker_status st;
	struct cordon_action_begin_result a = {}, b = {};
	struct cordon_approval_info info;
	struct cordon_delegation_info d;
	struct bt_call c;
	uint64_t epoch;
	int64_t seq;

	assert_int_equal(cordon_broker_status(t->db, &st), 0);
	assert_int_equal(st.connectors, 1);
	assert_int_equal(st.approvals_pending, 0);
	assert_int_equal(st.delegations_pending, 0);
	assert_int_equal(st.actions_unresolved, 0);
	assert_int_equal(st.inventory_to_review, 0);
	assert_int_equal(cordon_db_policy_epoch(t->db, &epoch), 0);
	assert_int_equal(st.policy_epoch, epoch);
	assert_int_equal(cordon_db_meta_get(t->db, "audit_last_seq", &seq), 0);
	assert_int_equal(st.audit_last_seq, seq);

	/* One requested and one approved approval (the latter consumed by
	 * action a), one pending delegation, a new tool, one action dispatched
	 * and one prepared when the broker "restarts". */
	bt_call_init(t, &c, "s1", "delete_file", "{}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &c.call, &info), 0);
	bt_call_done(&c);
	assert_int_equal(begin_write(t, "{\"p\":1}", NULL, &a), 0);
	assert_int_equal(cordon_action_dispatched(t->db, a.action_id), 0);
	bt_call_init(t, &c, "s1", "read_file", "{}");
	assert_int_equal(bt_begin(t, &c.call, NULL, NULL, &b), 0);
	bt_call_done(&c);
	assert_int_equal(cordon_actions_recover(t->db, NULL, NULL), 0);
	assert_int_equal(cordon_delegation_request(t->db, &t->s1, "fs", "/srv", CORDON_ACCESS_READ, 0, &d), 0);
	bt_tool_json(t, "new_tool", "New");
	bt_sync(t);

	assert_int_equal(cordon_broker_status(t->db, &st), 0);
	assert_int_equal(st.connectors, 1);
	assert_int_equal(st.approvals_pending, 1);
	assert_int_equal(st.delegations_pending, 1);
	assert_int_equal(st.actions_unresolved, 2);
	assert_int_equal(st.inventory_to_review, 1);
	assert_int_equal(cordon_db_meta_get(t->db, "audit_last_seq", &seq), 0);
	assert_int_equal(st.audit_last_seq, seq);
	cordon_action_begin_result_done(&a);
	cordon_action_begin_result_done(&b);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* The worker died while the action was dispatched: outcome_unknown at once,
 * only from dispatched, and only once. */
static void test_worker_lost_marks_outcome_unknown(void **state)
{
	struct bt *t = *state;
	struct cordon_action_begin_result res;

	assert_int_equal(begin_write(t, "{\"p\":1}", NULL, &res), 0);
	assert_int_equal(cordon_action_worker_lost(t->db, res.action_id), -ESTALE);
	assert_int_equal(state_of(t, res.action_id), CORDON_ACTION_PREPARED);
	assert_int_equal(cordon_action_dispatched(t->db, res.action_id), 0);
	assert_int_equal(cordon_action_worker_lost(t->db, res.action_id), 0);
	assert_int_equal(state_of(t, res.action_id), CORDON_ACTION_OUTCOME_UNKNOWN);
	assert_int_equal(cordon_action_worker_lost(t->db, res.action_id), -ESTALE);
	assert_int_equal(cordon_action_worker_lost(t->db, "act_nonexistent"), -ESTALE);
	cordon_action_begin_result_done(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_worker_lost_marks_outcome_unknown),
		T(test_ledger_happy_path),
		T(test_dispatch_now_skips_prepared),
		T(test_ledger_transitions_are_strict),
		T(test_fail_records_reason),
		T(test_recovery_abandons_prepared_and_flags_dispatched),
		T(test_idempotent_replay_returns_stored_result),
		T(test_idempotency_conflict_on_different_request),
		T(test_idempotency_in_progress),
		T(test_idempotency_outcome_unknown_needs_operator),
		T(test_idempotency_abandoned_runs_once_more),
		T(test_stored_result_unreadable_after_restart),
		T(test_unsafe_tool_ignores_idempotency_and_needs_new_approval),
		T(test_invalid_idempotency_key_refused),
		T(test_idempotency_scoped_to_subject),
		T(test_idempotency_in_flight_not_visible_to_other_subject),
		T(test_idempotency_without_subject_is_session_scoped),
		T(test_request_hash_separates_tool_and_args),
		T(test_prune_keeps_unknown_and_recent),
		T(test_lock_tokens_are_monotonic),
		T(test_stale_token_refused_after_lease_expiry),
		T(test_operator_queue_lists_outcome_unknown),
		T(test_list_shows_approval_and_resolver),
		T(test_broker_status_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
