/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: a crash after the external effect but before completion does
 * not cause a blind duplicate.
 *
 * A real broker process (forked child, its own db handle) dispatches a
 * mutating call to a real connector, the connector performs its effect (a
 * line in a file) and answers, and the broker is SIGKILLed before
 * cordon_action_complete(). After the restart:
 *  - recovery marks the action outcome_unknown (never retried by the broker;
 *    it is in the operator's queue);
 *  - replay-safe tool, same idempotency identity: the retry is refused with
 *    -ENOTRECOVERABLE until an operator resolves the action — and after the
 *    operator resolves it `succeeded`, the retry is -ENODATA and still does
 *    not run (no stored result: the broker never saw one, so it cannot fake
 *    it);
 *  - non-replay-safe tool: the consumed approval cannot be used again
 *    (-EALREADY / revoked), and the identical call without a new approval
 *    is refused (-ENOENT); only a fresh operator approval runs it again;
 *  - the connector ran exactly once; the audit chain verifies.
 * Layer: libcordon-broker in a SIGKILLed child + a real connector process. */
#include "sec-kill9.h"

struct fx {
	struct bt *t;
	char effect[4096];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->t = bt_new();
	snprintf(f->effect, sizeof(f->effect), "%s/effect", f->t->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	bt_free(f->t);
	free(f);
	return 0;
}

struct find {
	char id[CORDON_ID_STRING_MAX];
};

static int find_cb(const struct cordon_action_info *info, void *ud)
{
	memcpy(((struct find *)ud)->id, info->id, CORDON_ID_STRING_MAX);
	return 0;
}

static int retry(struct fx *f, const char *tool, const char *approval_id)
{
	struct mcp_peer peer;
	struct bt_call c;
	int r;

	sec_connector_start(&peer, "append", f->effect);
	bt_call_init(f->t, &c, "s1", tool, "{\"n\":1,\"path\":\"/crash\"}");
	r = sec_dispatch(f->t, &peer, &c.call, approval_id, "gw-crash", NULL);
	bt_call_done(&c);
	sec_connector_stop(&peer);
	return r;
}

static void test_crash_after_effect_replay_safe(void **state)
{
	struct fx *f = *state;
	struct cordon_broker_start_result sr;
	struct find fd = {};

	kill9_run(f->t, f->effect, "write_file", "gw-crash", KILL_AFTER_EFFECT, &sr);
	assert_int_equal(sec_count_lines(f->effect), 1);
	assert_int_equal(sr.outcome_unknown, 1);
	assert_int_equal(cordon_actions_list(f->t->db,
					     &(struct cordon_list_filter){
						     .states = CORDON_STATE_BIT(CORDON_ACTION_OUTCOME_UNKNOWN) },
					     find_cb, &fd),
			 0);
	assert_true(fd.id[0]);
	assert_int_equal(retry(f, "write_file", NULL), -ENOTRECOVERABLE);
	/* Resolution is operator-only. */
	assert_int_equal(cordon_action_resolve(f->t->db, &f->t->s1, fd.id, true), -EPERM);
	assert_int_equal(cordon_action_resolve(f->t->db, &f->t->op, fd.id, true), 0);
	/* Resolved, but no stored result exists: -ENODATA, never a re-run. */
	assert_int_equal(retry(f, "write_file", NULL), -ENODATA);
	assert_int_equal(sec_count_lines(f->effect), 1);
	assert_int_equal(sec_verify(f->t), CORDON_AUDIT_PASS);
}

static void test_crash_after_effect_not_replay_safe(void **state)
{
	struct fx *f = *state;
	struct cordon_broker_start_result sr;
	struct bt_call c;
	char id[CORDON_ID_STRING_MAX];

	/* delete_file: replay unsafe (the default), tier destructive. */
	kill9_run(f->t, f->effect, "delete_file", "gw-crash", KILL_AFTER_EFFECT, &sr);
	assert_int_equal(sec_count_lines(f->effect), 1);
	assert_int_equal(sr.outcome_unknown, 1);
	assert_int_equal(retry(f, "delete_file", NULL), -ENOENT);
	assert_int_equal(sec_count_lines(f->effect), 1);
	/* Only a new, explicit operator approval runs it again. */
	bt_call_init(f->t, &c, "s1", "delete_file", "{\"n\":1,\"path\":\"/crash\"}");
	bt_approve(f->t, &c.call, id);
	bt_call_done(&c);
	assert_int_equal(retry(f, "delete_file", id), SEC_EXECUTED);
	assert_int_equal(retry(f, "delete_file", id), -EALREADY);
	assert_int_equal(sec_count_lines(f->effect), 2);
	assert_int_equal(sec_verify(f->t), CORDON_AUDIT_PASS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_crash_after_effect_replay_safe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_after_effect_not_replay_safe, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
