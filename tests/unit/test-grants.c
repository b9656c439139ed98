/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Grants (deny by default, operator-only changes, seeded from the profile),
 * the risk policy, revoke-all, and the decision over a DB snapshot. */

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

static struct cordon_decision decide(struct bt *t, const char *session, const char *tool)
{
	struct cordon_decide_request r = {
		.session = session, .connector = "fs", .tool = tool, .fingerprint = bt_fp(t, tool)
	};
	struct cordon_broker_decision d;

	assert_int_equal(cordon_broker_decide(t->db, &r, &d), 0);
	return d.decision;
}

static void test_install_seeds_grant_from_profile(void **state)
{
	struct bt *t = *state;
	char **g = NULL;
	size_t n;

	assert_int_equal(cordon_grants_list(t->db, "fs", &g, &n), 0);
	assert_int_equal(n, 5);
	assert_string_equal(g[0], "delete_file");
	assert_string_equal(g[4], "write_file");
	assert_null(g[5]);
	strv_free(g);
}

static void test_install_twice_is_eexist(void **state)
{
	struct bt *t = *state;
	struct cordon_profile p;

	bt_profile(&p, NULL, 0);
	assert_int_equal(cordon_connector_install(t->db, &t->op, &p), -EEXIST);
}

static void test_session_cannot_install(void **state)
{
	struct bt *t = *state;
	struct cordon_profile p;

	bt_profile(&p, NULL, 0);
	p.id = (char *)"other";
	assert_int_equal(cordon_connector_install(t->db, &t->s1, &p), -EPERM);
}

static void test_no_grant_row_means_no_tool(void **state)
{
	struct bt *t = *state;
	struct cordon_profile p;
	struct cordon_decide_request r = {
		.session = "s1", .connector = "bare", .tool = "read_file", .fingerprint = bt_fp(t, "read_file")
	};
	struct cordon_broker_decision d;
	char **g = NULL;
	size_t n = 99;

	bt_profile(&p, NULL, 0);
	p.id = (char *)"bare";
	p.grant = NULL;
	p.n_grant = 0;
	assert_int_equal(cordon_connector_install(t->db, &t->op, &p), 0);
	assert_int_equal(cordon_grants_list(t->db, "bare", &g, &n), 0);
	assert_int_equal(n, 0);
	strv_free(g);
	assert_int_equal(cordon_broker_decide(t->db, &r, &d), 0);
	assert_int_equal(d.decision.verdict, CORDON_VERDICT_DENY);
	assert_int_equal(d.decision.reason, CORDON_DENY_NOT_GRANTED);
}

static void test_decisions_by_tier(void **state)
{
	struct bt *t = *state;
	struct cordon_decision d;

	d = decide(t, "s1", "read_file");
	assert_int_equal(d.verdict, CORDON_VERDICT_ALLOW);
	d = decide(t, "s1", "write_file");
	assert_int_equal(d.verdict, CORDON_VERDICT_APPROVE);
	assert_int_equal(d.tier, CORDON_RISK_WRITE);
	d = decide(t, "s1", "run_command");
	assert_int_equal(d.tier, CORDON_RISK_CRITICAL);
	/* Not named by the policy: high, despite readOnlyHint in its annotations. */
	d = decide(t, "s1", "mystery");
	assert_int_equal(d.verdict, CORDON_VERDICT_APPROVE);
	assert_int_equal(d.tier, CORDON_RISK_HIGH);
}

static void test_annotations_kept_as_claims_only(void **state)
{
	struct bt *t = *state;
	struct cordon_inventory_record rec;

	assert_int_equal(cordon_inventory_get(t->db, "fs", "mystery", &rec), 0);
	assert_string_equal(rec.claims, "{\"readOnlyHint\":true}");
	cordon_inventory_record_done(&rec);
	assert_int_equal(decide(t, "s1", "mystery").tier, CORDON_RISK_HIGH);
}

static void test_operator_grant_and_remove(void **state)
{
	struct bt *t = *state;

	assert_int_equal(cordon_grant_remove(t->db, &t->op, "fs", "read_file"), 0);
	assert_int_equal(decide(t, "s1", "read_file").reason, CORDON_DENY_NOT_GRANTED);
	assert_int_equal(cordon_grant_remove(t->db, &t->op, "fs", "read_file"), -ENOENT);
	assert_int_equal(cordon_grant_add(t->db, &t->op, "fs", "read_file"), 0);
	assert_int_equal(decide(t, "s1", "read_file").verdict, CORDON_VERDICT_ALLOW);
	assert_int_equal(cordon_grant_add(t->db, &t->op, "fs", "read_file"), -EEXIST);
}

static void test_non_operators_cannot_change_grants(void **state)
{
	struct bt *t = *state;

	assert_int_equal(cordon_grant_add(t->db, &t->s1, "fs", "new_tool"), -EPERM);
	assert_int_equal(cordon_grant_add(t->db, &t->sys, "fs", "new_tool"), -EPERM);
	assert_int_equal(cordon_grant_remove(t->db, &t->s1, "fs", "read_file"), -EPERM);
	assert_int_equal(cordon_risk_set(t->db, &t->s1, "fs", "write_file", CORDON_RISK_READ), -EPERM);
}

static void test_grant_on_unknown_connector_is_enoent(void **state)
{
	struct bt *t = *state;

	assert_int_equal(cordon_grant_add(t->db, &t->op, "nope", "read_file"), -ENOENT);
}

static void test_grant_change_bumps_epoch(void **state)
{
	struct bt *t = *state;
	uint64_t e0, e1;

	assert_int_equal(cordon_db_policy_epoch(t->db, &e0), 0);
	assert_int_equal(cordon_grant_add(t->db, &t->op, "fs", "x_tool"), 0);
	assert_int_equal(cordon_db_policy_epoch(t->db, &e1), 0);
	assert_int_equal(e1, e0 + 1);
}

static void test_risk_change_applies(void **state)
{
	struct bt *t = *state;

	assert_int_equal(cordon_risk_set(t->db, &t->op, "fs", "read_file", CORDON_RISK_DESTRUCTIVE), 0);
	assert_int_equal(decide(t, "s1", "read_file").tier, CORDON_RISK_DESTRUCTIVE);
}

static void test_stale_epoch_snapshot_denied(void **state)
{
	struct bt *t = *state;
	struct cordon_inventory_record rec;
	struct cordon_inventory_entry e;
	struct cordon_risk_policy_owned pol;
	const char *grant[] = { "read_file" };
	uint64_t epoch;
	struct cordon_decision d;

	/* A snapshot loaded before an operator change must not be used after it. */
	assert_int_equal(cordon_db_policy_epoch(t->db, &epoch), 0);
	assert_int_equal(cordon_inventory_get(t->db, "fs", "read_file", &rec), 0);
	cordon_inventory_record_view(&rec, &e);
	assert_int_equal(cordon_risk_policy_load(t->db, "fs", &pol), 0);
	assert_int_equal(cordon_grant_remove(t->db, &t->op, "fs", "read_file"), 0);
	{
		uint64_t now_epoch;
		assert_int_equal(cordon_db_policy_epoch(t->db, &now_epoch), 0);
		struct cordon_authz_request req = { .session = "s1",
						    .connector = "fs",
						    .tool = "read_file",
						    .fingerprint = rec.fingerprint,
						    .policy_epoch = epoch };
		struct cordon_authz_input in = { .connector = "fs",
						 .tool = "read_file",
						 .inventory = &e,
						 .grant = grant,
						 .n_grant = 1,
						 .have_grant_row = true,
						 .policy = &pol.policy,
						 .policy_epoch = now_epoch,
						 .request = &req };
		d = cordon_authz_decide(&in);
	}
	assert_int_equal(d.reason, CORDON_DENY_STALE_POLICY);
	cordon_inventory_record_done(&rec);
	cordon_risk_policy_owned_done(&pol);
}

static void test_revoke_all_in_one_transaction(void **state)
{
	struct bt *t = *state;
	struct bt_call a, b;
	struct cordon_approval_info pending;
	char approved[CORDON_ID_STRING_MAX];
	struct cordon_delegation_info del;
	struct cordon_revoke_all_result res;
	char **g = NULL;
	size_t n = 99;

	bt_call_init(t, &a, "s1", "write_file", "{\"a\":1}");
	bt_call_init(t, &b, "s2", "delete_file", "{\"a\":1}");
	bt_approve(t, &a.call, approved);
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &b.call, &pending), 0);
	assert_int_equal(cordon_delegation_request(t->db, &t->s1, "fs", "/srv/x", CORDON_ACCESS_READ, 0, &del), 0);

	assert_int_equal(cordon_revoke_all(t->db, &t->s1, &res), -EPERM);
	assert_int_equal(cordon_revoke_all(t->db, &t->op, &res), 0);
	assert_int_equal(res.grants, 5);
	assert_int_equal(res.approvals, 2);
	assert_int_equal(res.delegations, 1);

	assert_int_equal(cordon_grants_list(t->db, "fs", &g, &n), 0);
	assert_int_equal(n, 0);
	strv_free(g);
	assert_int_equal(cordon_approval_get(t->db, pending.id, &pending), 0);
	assert_int_equal(pending.state, CORDON_APPROVAL_REVOKED);
	assert_int_equal(bt_begin(t, &a.call, approved, NULL, NULL), -EACCES);
	assert_int_equal(cordon_delegation_get(t->db, del.id, &del), 0);
	assert_int_equal(del.state, CORDON_DELEGATION_REVOKED);
	assert_int_equal(decide(t, "s1", "read_file").reason, CORDON_DENY_NOT_GRANTED);
	bt_call_done(&a);
	bt_call_done(&b);
}

static void test_revoke_all_is_atomic_on_failure(void **state)
{
	struct bt *t = *state;
	struct cordon_revoke_all_result res;
	char **g = NULL;
	size_t n;

	cordon_db_inject_faults(t->db, CORDON_DB_FAULT_COMMIT);
	assert_int_equal(cordon_revoke_all(t->db, &t->op, &res), -EIO);
	cordon_db_inject_faults(t->db, 0);
	assert_int_equal(cordon_grants_list(t->db, "fs", &g, &n), 0);
	assert_int_equal(n, 5);
	strv_free(g);
}

/* A grant removed between the decision and the dispatch: begin decides
 * again inside its transaction, so even a read-tier call is refused. */
static void test_begin_rechecks_grant(void **state)
{
	struct bt *t = *state;
	struct bt_call c;

	bt_call_init(t, &c, "s1", "read_file", "{}");
	assert_int_equal(decide(t, "s1", "read_file").verdict, CORDON_VERDICT_ALLOW);
	assert_int_equal(cordon_grant_remove(t->db, &t->op, "fs", "read_file"), 0);
	c.call.policy_epoch++; /* even a caller that refreshed its epoch */
	assert_int_equal(bt_begin(t, &c.call, NULL, NULL, NULL), -EACCES);
	bt_call_done(&c);
}

static void test_unknown_connector_denied_and_audited(void **state)
{
	struct bt *t = *state;
	struct cordon_decide_request r = {
		.session = "s1", .connector = "nope", .tool = "read_file", .fingerprint = bt_fp(t, "read_file")
	};
	struct cordon_broker_decision d;
	int64_t before, after;

	assert_int_equal(cordon_db_meta_get(t->db, "audit_last_seq", &before), 0);
	assert_int_equal(cordon_broker_decide(t->db, &r, &d), -ENOENT);
	assert_int_equal(d.decision.verdict, CORDON_VERDICT_DENY);
	assert_int_equal(cordon_db_meta_get(t->db, "audit_last_seq", &after), 0);
	assert_int_equal(after, before + 1);
	/* Malformed names are refused before anything is read or written. */
	r.connector = "Bad Connector";
	assert_int_equal(cordon_broker_decide(t->db, &r, &d), -EINVAL);
	assert_int_equal(d.decision.verdict, CORDON_VERDICT_DENY);
}

static void test_replay_class_from_profile_only(void **state)
{
	struct bt *t = *state;
	enum cordon_replay r;

	assert_int_equal(cordon_tool_replay_class(t->db, "fs", "write_file", &r), 0);
	assert_int_equal(r, CORDON_REPLAY_SAFE);
	/* read_file has readOnlyHint-like annotations in its definition; it is
	 * still unsafe: the profile did not say safe. */
	assert_int_equal(cordon_tool_replay_class(t->db, "fs", "mystery", &r), 0);
	assert_int_equal(r, CORDON_REPLAY_UNSAFE);
	assert_int_equal(cordon_tool_replay_class(t->db, "fs", "read_file", &r), 0);
	assert_int_equal(r, CORDON_REPLAY_UNSAFE);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* Removal: operator or system only, refused while an action is unresolved,
 * and the connector is gone afterwards. */
static void test_connector_remove(void **state)
{
	struct bt *t = *state;
	struct bt_call c;
	struct cordon_action_begin b = {};
	struct cordon_action_begin_result res;
	uint64_t gen, epoch0, epoch1;

	assert_int_equal(cordon_connector_exists(t->db, "fs"), 0);
	assert_int_equal(cordon_connector_remove(t->db, &t->s1, "fs"), -EPERM);
	assert_int_equal(cordon_connector_remove(t->db, &t->sys, "nope"), -ENOENT);
	bt_call_init(t, &c, "s1", "read_file", "{}");
	b.call = c.call;
	b.dispatch_now = true;
	assert_int_equal(cordon_action_begin(t->db, t->key, &b, &res), 0);
	assert_int_equal(cordon_connector_remove(t->db, &t->op, "fs"), -EBUSY);
	assert_int_equal(cordon_connector_generation(t->db, "fs", &gen), 0);
	assert_int_equal(cordon_action_complete(t->db, t->key, res.action_id, true, "ok", 2), 0);
	assert_int_equal(cordon_db_policy_epoch(t->db, &epoch0), 0);
	assert_int_equal(cordon_connector_remove(t->db, &t->op, "fs"), 0);
	assert_int_equal(cordon_db_policy_epoch(t->db, &epoch1), 0);
	assert_int_equal(epoch1, epoch0 + 1);
	assert_int_equal(cordon_connector_generation(t->db, "fs", &gen), -ENOENT);
	assert_int_equal(cordon_connector_exists(t->db, "fs"), -ENOENT);
	assert_string_equal(cordon_db_last_error(t->db), "unknown connector");
	assert_int_equal(cordon_connector_remove(t->db, &t->op, "fs"), -ENOENT);
	cordon_action_begin_result_done(&res);
	bt_call_done(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_connector_remove),
		T(test_install_seeds_grant_from_profile),
		T(test_install_twice_is_eexist),
		T(test_session_cannot_install),
		T(test_no_grant_row_means_no_tool),
		T(test_decisions_by_tier),
		T(test_annotations_kept_as_claims_only),
		T(test_operator_grant_and_remove),
		T(test_non_operators_cannot_change_grants),
		T(test_grant_on_unknown_connector_is_enoent),
		T(test_grant_change_bumps_epoch),
		T(test_risk_change_applies),
		T(test_stale_epoch_snapshot_denied),
		T(test_revoke_all_in_one_transaction),
		T(test_revoke_all_is_atomic_on_failure),
		T(test_begin_rechecks_grant),
		T(test_unknown_connector_denied_and_audited),
		T(test_replay_class_from_profile_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
