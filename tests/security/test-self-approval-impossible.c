/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: self-approval is impossible.
 *
 * Every operator operation of the authorization core refuses a session actor
 * (the only actor a gateway session can construct) with -EPERM and changes
 * nothing: approve/deny, the critical tier's confirmation code, grant
 * add/remove, tier changes, inventory review, delegation activate/refuse,
 * action resolution, revoke-all, connector install/relaunch. The
 * approval the session asked for is still `requested` afterwards, the
 * policy epoch did not move and the session's call still cannot run.
 * A system actor (the broker's own sweeps) cannot approve either.
 * Layer: libcordon-broker (the daemon maps the gateway socket to session
 * actors only; its gateway-level test is listed in docs/security-tests.md). */
#include "sec-broker.h"

static void test_self_approval_impossible(void **state)
{
	struct bt *t = bt_new();
	struct bt_call c;
	struct cordon_approval_info info, after;
	char code[CORDON_CONFIRM_CODE_LEN + 1] = "";
	uint64_t epoch0, epoch1;
	struct cordon_revoke_all_result ra;
	struct cordon_profile p;
	struct cordon_delegation_info di;
	const struct cordon_actor *who[] = { &t->s1, &t->sys };

	(void)state;
	assert_int_equal(cordon_db_policy_epoch(t->db, &epoch0), 0);
	bt_call_init(t, &c, "s1", "run_command", "{\"argv\":[\"rm\",\"-rf\",\"/\"]}");
	assert_int_equal(c.call.tier, CORDON_RISK_CRITICAL);
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &c.call, &info), 0);
	assert_int_equal(cordon_delegation_request(t->db, &t->s1, "fs", "/tmp", CORDON_ACCESS_READ_WRITE, 0, &di), 0);

	for (size_t i = 0; i < ELEMENTSOF(who); i++) {
		const struct cordon_actor *a = who[i];

		assert_int_equal(cordon_approval_decide(t->db, t->key, a, info.id, true, NULL), -EPERM);
		assert_int_equal(cordon_approval_decide(t->db, t->key, a, info.id, true, "AAAAAAAA"), -EPERM);
		assert_int_equal(cordon_approval_confirmation_code(t->db, t->key, a, info.id, code), -EPERM);
		assert_int_equal(cordon_approval_revoke(t->db, a, info.id), -EPERM);
		assert_int_equal(cordon_grant_add(t->db, a, "fs", "anything"), -EPERM);
		assert_int_equal(cordon_grant_remove(t->db, a, "fs", "read_file"), -EPERM);
		assert_int_equal(cordon_risk_set(t->db, a, "fs", "run_command", CORDON_RISK_READ), -EPERM);
		assert_int_equal(cordon_inventory_review(t->db, a, "fs", "run_command", bt_fp(t, "run_command")),
				 -EPERM);
		assert_int_equal(cordon_delegation_activate(t->db, a, di.id, NULL), -EPERM);
		assert_int_equal(cordon_delegation_refuse(t->db, a, di.id), -EPERM);
		assert_int_equal(cordon_action_resolve(t->db, a, "ac_x", true), -EPERM);
		assert_int_equal(cordon_revoke_all(t->db, a, &ra), -EPERM);
	}
	/* A session cannot install a connector or relaunch one either. */
	bt_profile(&p, NULL, 0);
	p.id = (char *)"evil";
	assert_int_equal(cordon_connector_install(t->db, &t->s1, &p), -EPERM);
	assert_int_equal(cordon_connector_relaunch(t->db, &t->s1, "fs", NULL), -EPERM);

	/* Nothing changed. */
	assert_int_equal(cordon_approval_get(t->db, info.id, &after), 0);
	assert_int_equal(after.state, CORDON_APPROVAL_REQUESTED);
	assert_int_equal(cordon_db_policy_epoch(t->db, &epoch1), 0);
	assert_int_equal(epoch1, epoch0);
	assert_int_equal(cordon_delegation_get(t->db, di.id, &di), 0);
	assert_int_equal(di.state, CORDON_DELEGATION_PENDING);
	/* And the call still cannot run: -EAGAIN (still requested). */
	assert_int_equal(bt_begin(t, &c.call, info.id, NULL, NULL), -EAGAIN);
	/* Even the operator needs the confirmation code for critical. */
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, info.id, true, NULL), -EACCES);
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, info.id, true, "AAAAAAAA"), -EACCES);
	bt_call_done(&c);
	assert_int_equal(sec_verify(t), CORDON_AUDIT_PASS);
	bt_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_approval_impossible),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
