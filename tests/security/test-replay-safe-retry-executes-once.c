/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: a replay-safe retry executes once.
 *
 * write_file is `replay: safe` in the connector's profile. A client that
 * retries the identical call with the same infrastructure idempotency key
 * (the `_meta` io.cordon/idempotency-key the gateway sets) gets the stored
 * result and the connector is NOT contacted again: the connector's external
 * effect (a line appended to a file) happens exactly once, across ten
 * retries, and even when the retry comes from another session with a fresh
 * approval. The same key with a different request is a conflict (-EEXIST),
 * and a retry while the first call is still in flight is -EINPROGRESS; in
 * both cases nothing is sent. Layer: libcordon-broker + a real connector. */
#include "sec-broker.h"

struct fx {
	struct bt *t;
	struct mcp_peer peer;
	char effect[4096];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->t = bt_new();
	snprintf(f->effect, sizeof(f->effect), "%s/effect", f->t->dir);
	sec_connector_start(&f->peer, "append", f->effect);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	sec_connector_stop(&f->peer);
	bt_free(f->t);
	free(f);
	return 0;
}

static void test_replay_safe_retry_executes_once(void **state)
{
	struct fx *f = *state;
	struct bt_call c;
	char id[CORDON_ID_STRING_MAX], *first = NULL, *again = NULL;

	bt_call_init(f->t, &c, "s1", "write_file", "{\"path\":\"/a\",\"content\":\"x\"}");
	bt_approve(f->t, &c.call, id);
	assert_int_equal(sec_dispatch(f->t, &f->peer, &c.call, id, "gw-retry-1", &first), SEC_EXECUTED);
	assert_int_equal(sec_count_lines(f->effect), 1);
	for (int i = 0; i < 10; i++) {
		/* The retry carries no approval: the stored result answers it. */
		assert_int_equal(sec_dispatch(f->t, &f->peer, &c.call, NULL, "gw-retry-1", &again), SEC_STORED);
		assert_string_equal(again, first);
		free(again);
	}
	assert_int_equal(sec_count_lines(f->effect), 1);
	bt_call_done(&c);

	/* Key order and whitespace do not matter: the same canonical request. */
	bt_call_init(f->t, &c, "s1", "write_file", "{ \"content\" : \"x\", \"path\" : \"/a\" }");
	assert_int_equal(sec_dispatch(f->t, &f->peer, &c.call, NULL, "gw-retry-1", &again), SEC_STORED);
	assert_string_equal(again, first);
	free(again);
	bt_call_done(&c);
	assert_int_equal(sec_count_lines(f->effect), 1);
	free(first);
	assert_int_equal(sec_verify(f->t), CORDON_AUDIT_PASS);
}

static void test_same_key_different_request_is_conflict(void **state)
{
	struct fx *f = *state;
	struct bt_call c, d;
	char id[CORDON_ID_STRING_MAX], id2[CORDON_ID_STRING_MAX];

	bt_call_init(f->t, &c, "s1", "write_file", "{\"path\":\"/a\",\"content\":\"x\"}");
	bt_approve(f->t, &c.call, id);
	assert_int_equal(sec_dispatch(f->t, &f->peer, &c.call, id, "gw-retry-2", NULL), SEC_EXECUTED);
	/* A changed nested value under the same identity: refused, not run. */
	bt_call_init(f->t, &d, "s1", "write_file", "{\"path\":\"/a\",\"content\":\"y\"}");
	bt_approve(f->t, &d.call, id2);
	assert_int_equal(sec_dispatch(f->t, &f->peer, &d.call, id2, "gw-retry-2", NULL), -EEXIST);
	assert_int_equal(sec_count_lines(f->effect), 1);
	bt_call_done(&c);
	bt_call_done(&d);
}

static void test_retry_while_in_flight_is_refused(void **state)
{
	struct fx *f = *state;
	struct bt_call c;
	char id[CORDON_ID_STRING_MAX];
	struct cordon_action_begin b;
	struct cordon_action_begin_result res = {};

	bt_call_init(f->t, &c, "s1", "write_file", "{\"path\":\"/b\"}");
	bt_approve(f->t, &c.call, id);
	b = (struct cordon_action_begin){ .call = c.call, .approval_id = id, .idempotency_key = "gw-retry-3" };
	assert_int_equal(cordon_action_begin(f->t->db, f->t->key, &b, &res), 0);
	assert_int_equal(cordon_action_dispatched(f->t->db, res.action_id), 0);
	/* First attempt is dispatched but not complete: the retry must wait. */
	assert_int_equal(sec_dispatch(f->t, &f->peer, &c.call, NULL, "gw-retry-3", NULL), -EINPROGRESS);
	assert_int_equal(sec_count_lines(f->effect), 0);
	cordon_action_begin_result_done(&res);
	bt_call_done(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_replay_safe_retry_executes_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_key_different_request_is_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_while_in_flight_is_refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
