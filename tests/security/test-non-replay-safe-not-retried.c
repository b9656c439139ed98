/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: a non-replay-safe action is not blindly retried.
 *
 * delete_file is `replay: unsafe` (the default; the connector's
 * idempotentHint is never consulted). An identical repeat — same session,
 * same canonical arguments, even the same idempotency key — is a new call:
 * it is never answered from a store, the consumed approval is refused
 * (-EALREADY), and without a new operator approval it does not run
 * (-ENOENT). The connector claims idempotentHint: true and it changes
 * nothing. Every refused attempt sends nothing (effect file unchanged).
 * Layer: libcordon-broker + a real connector process. */
#include "sec-broker.h"

static void test_non_replay_safe_not_retried(void **state)
{
	struct bt *t = bt_new();
	struct mcp_peer peer;
	struct bt_call c;
	char effect[4096], id[CORDON_ID_STRING_MAX], id2[CORDON_ID_STRING_MAX];
	enum cordon_replay replay;

	(void)state;
	snprintf(effect, sizeof(effect), "%s/effect", t->dir);
	sec_connector_start(&peer, "append", effect);
	assert_int_equal(cordon_tool_replay_class(t->db, "fs", "delete_file", &replay), 0);
	assert_int_equal(replay, CORDON_REPLAY_UNSAFE);

	bt_call_init(t, &c, "s1", "delete_file", "{\"path\":\"/x\"}");
	bt_approve(t, &c.call, id);
	assert_int_equal(sec_dispatch(t, &peer, &c.call, id, "gw-unsafe", NULL), SEC_EXECUTED);
	assert_int_equal(sec_count_lines(effect), 1);
	/* Blind retries: with the spent approval, without one, with the same key. */
	assert_int_equal(sec_dispatch(t, &peer, &c.call, id, "gw-unsafe", NULL), -EALREADY);
	assert_int_equal(sec_dispatch(t, &peer, &c.call, NULL, "gw-unsafe", NULL), -ENOENT);
	assert_int_equal(sec_dispatch(t, &peer, &c.call, NULL, NULL, NULL), -ENOENT);
	/* Another session cannot ride on it either. */
	c.call.session = "s2";
	assert_int_equal(sec_dispatch(t, &peer, &c.call, id, "gw-unsafe", NULL), -EALREADY);
	c.call.session = "s1";
	assert_int_equal(sec_count_lines(effect), 1);
	/* A new operator approval is a new, deliberate execution. */
	bt_approve(t, &c.call, id2);
	assert_string_not_equal(id, id2);
	assert_int_equal(sec_dispatch(t, &peer, &c.call, id2, "gw-unsafe", NULL), SEC_EXECUTED);
	assert_int_equal(sec_count_lines(effect), 2);
	bt_call_done(&c);
	sec_connector_stop(&peer);
	assert_int_equal(sec_verify(t), CORDON_AUDIT_PASS);
	bt_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_non_replay_safe_not_retried),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
