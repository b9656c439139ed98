/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: an unauthorized connector or tool is denied.
 *
 * Deny by default, checked with the decision the daemon runs for every
 * tools/call (cordon_broker_decide) and again inside the dispatch
 * transaction (cordon_action_begin): a tool that is advertised and reviewed
 * but not granted, a tool the connector never advertised, a connector that
 * is not installed, a tool pending review, and a read-tier tool whose grant
 * was removed — each is a deny with its exact reason, begin refuses with
 * -EACCES, the real connector process is never contacted (its effect file
 * stays empty), and each refusal is audited. Layer: libcordon-broker + a
 * real connector process. */
#include "sec-broker.h"

static struct cordon_broker_decision decide(struct bt *t, const char *connector, const char *tool, const char *fp)
{
	struct cordon_decide_request rq = { .session = "s1", .connector = connector, .tool = tool, .fingerprint = fp };
	struct cordon_broker_decision d;

	(void)cordon_broker_decide(t->db, &rq, &d);
	printf("  decide %s/%s: %s (%s)\n", connector, tool, cordon_verdict_to_string(d.decision.verdict),
	       cordon_deny_reason_to_string(d.decision.reason));
	return d;
}

static void test_unauthorized_connector_or_tool_denied(void **state)
{
	struct bt *t = bt_new();
	struct mcp_peer peer;
	struct bt_call c;
	char effect[4096];
	struct cordon_broker_decision d;
	static const char zero_fp[] = "0000000000000000000000000000000000000000000000000000000000000000";

	(void)state;
	snprintf(effect, sizeof(effect), "%s/effect", t->dir);
	sec_connector_start(&peer, "append", effect);

	/* Allowed baseline: read_file is granted, reviewed, read tier. */
	d = decide(t, "fs", "read_file", bt_fp(t, "read_file"));
	assert_int_equal(d.decision.verdict, CORDON_VERDICT_ALLOW);

	/* Advertised and reviewed, but not granted. */
	bt_tool_json(t, "admin_reset", "Resets everything");
	bt_sync(t);
	assert_int_equal(cordon_inventory_review(t->db, &t->op, "fs", "admin_reset", bt_fp(t, "admin_reset")), 0);
	d = decide(t, "fs", "admin_reset", bt_fp(t, "admin_reset"));
	assert_int_equal(d.decision.verdict, CORDON_VERDICT_DENY);
	assert_int_equal(d.decision.reason, CORDON_DENY_NOT_GRANTED);
	bt_call_init(t, &c, "s1", "admin_reset", "{}");
	assert_int_equal(sec_dispatch(t, &peer, &c.call, NULL, NULL, NULL), -EACCES);
	bt_call_done(&c);

	/* Granted by an operator but still pending review: denied. */
	bt_tool_json(t, "new_tool", "Appeared later");
	bt_sync(t);
	assert_int_equal(cordon_grant_add(t->db, &t->op, "fs", "new_tool"), 0);
	d = decide(t, "fs", "new_tool", bt_fp(t, "new_tool"));
	assert_int_equal(d.decision.verdict, CORDON_VERDICT_DENY);
	assert_int_equal(d.decision.reason, CORDON_DENY_PENDING_REVIEW);

	/* Never advertised. */
	d = decide(t, "fs", "shell", zero_fp);
	assert_int_equal(d.decision.verdict, CORDON_VERDICT_DENY);
	assert_int_equal(d.decision.reason, CORDON_DENY_NOT_GRANTED);

	/* A connector that is not installed: nothing at all. The decision
	 * fails with -ENOENT and leaves the fail-closed default (deny, reason
	 * invalid-input) in place. */
	{
		struct cordon_decide_request rq = {
			.session = "s1", .connector = "docker", .tool = "run", .fingerprint = zero_fp
		};

		assert_int_equal(cordon_broker_decide(t->db, &rq, &d), -ENOENT);
	}
	assert_int_equal(d.decision.verdict, CORDON_VERDICT_DENY);
	assert_int_equal(d.decision.reason, CORDON_DENY_INVALID_INPUT);

	/* A read tool whose grant is removed. */
	assert_int_equal(cordon_grant_remove(t->db, &t->op, "fs", "read_file"), 0);
	d = decide(t, "fs", "read_file", bt_fp(t, "read_file"));
	assert_int_equal(d.decision.verdict, CORDON_VERDICT_DENY);
	assert_int_equal(d.decision.reason, CORDON_DENY_NOT_GRANTED);
	bt_call_init(t, &c, "s1", "read_file", "{\"path\":\"/etc/passwd\"}");
	assert_int_equal(sec_dispatch(t, &peer, &c.call, NULL, NULL, NULL), -EACCES);
	bt_call_done(&c);

	/* A tool name the connector could not even have (invalid charset). */
	d = decide(t, "fs", "../read_file", zero_fp);
	assert_int_equal(d.decision.verdict, CORDON_VERDICT_DENY);

	assert_int_equal(sec_count_lines(effect), 0); /* the connector never ran */
	sec_connector_stop(&peer);
	assert_int_equal(sec_verify(t), CORDON_AUDIT_PASS);
	bt_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unauthorized_connector_or_tool_denied),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
