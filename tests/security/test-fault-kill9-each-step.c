/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fault injection: kill -9 of the broker process at each step of a mutating
 * call (replay-safe write_file with an infrastructure idempotency key), then
 * a restart. After restart: no duplicate execution (the connector's effect
 * file is the witness), the action states are right (abandoned /
 * outcome_unknown / succeeded), an identical retry is executed only when the
 * call provably never ran, and the audit chain verifies. "Before the audit
 * commit" is the commit of the transaction that consumes the approval,
 * creates the action and appends its audit records: a failing commit (the
 * db's fault seam, as a crash inside it would leave) and a failing audit
 * append leave nothing half-applied and send nothing.
 * Layer: libcordon-broker in a real child process killed by SIGKILL, a real
 * connector process. */
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

/* The identical call again, as a client retry after the restart, with a
 * fresh operator approval. Returns sec_dispatch()'s result. */
static int retry(struct fx *f)
{
	struct mcp_peer peer;
	struct bt_call c;
	char id[CORDON_ID_STRING_MAX];
	int r;

	sec_connector_start(&peer, "append", f->effect);
	bt_call_init(f->t, &c, "s1", "write_file", "{\"n\":1,\"path\":\"/crash\"}");
	r = sec_dispatch(f->t, &peer, &c.call, NULL, "gw-k9", NULL);
	if (r == -ENOENT) {
		/* Not answered from the store: needs a (new) approval. */
		bt_approve(f->t, &c.call, id);
		r = sec_dispatch(f->t, &peer, &c.call, id, "gw-k9", NULL);
	}
	bt_call_done(&c);
	sec_connector_stop(&peer);
	return r;
}

static void test_kill9_after_approval(void **state)
{
	struct fx *f = *state;
	struct cordon_broker_start_result sr;

	kill9_run(f->t, f->effect, "write_file", "gw-k9", KILL_AFTER_APPROVAL, &sr);
	assert_int_equal(sr.approvals_revoked, 1); /* the approval died with its process key */
	assert_int_equal(sr.abandoned, 0);
	assert_int_equal(sr.outcome_unknown, 0);
	assert_int_equal(sec_count_lines(f->effect), 0);
	/* Never ran: the retry runs it, once. */
	assert_int_equal(retry(f), SEC_EXECUTED);
	assert_int_equal(retry(f), SEC_STORED);
	assert_int_equal(sec_count_lines(f->effect), 1);
	assert_int_equal(sec_verify(f->t), CORDON_AUDIT_PASS);
}

static void test_kill9_after_begin(void **state)
{
	struct fx *f = *state;
	struct cordon_broker_start_result sr;

	kill9_run(f->t, f->effect, "write_file", "gw-k9", KILL_AFTER_BEGIN, &sr);
	assert_int_equal(sr.abandoned, 1); /* provably never sent */
	assert_int_equal(sr.outcome_unknown, 0);
	assert_int_equal(kill9_count_state(f->t, CORDON_ACTION_ABANDONED), 1);
	assert_int_equal(sec_count_lines(f->effect), 0);
	assert_int_equal(retry(f), SEC_EXECUTED);
	assert_int_equal(retry(f), SEC_STORED);
	assert_int_equal(sec_count_lines(f->effect), 1);
	assert_int_equal(sec_verify(f->t), CORDON_AUDIT_PASS);
}

static void test_kill9_after_dispatched(void **state)
{
	struct fx *f = *state;
	struct cordon_broker_start_result sr;

	kill9_run(f->t, f->effect, "write_file", "gw-k9", KILL_AFTER_DISPATCHED, &sr);
	assert_int_equal(sr.abandoned, 0);
	assert_int_equal(sr.outcome_unknown, 1); /* may have been sent: an operator decides */
	assert_int_equal(kill9_count_state(f->t, CORDON_ACTION_OUTCOME_UNKNOWN), 1);
	assert_int_equal(retry(f), -ENOTRECOVERABLE);
	assert_int_equal(sec_count_lines(f->effect), 0);
	assert_int_equal(sec_verify(f->t), CORDON_AUDIT_PASS);
}

static void test_kill9_after_effect(void **state)
{
	struct fx *f = *state;
	struct cordon_broker_start_result sr;

	kill9_run(f->t, f->effect, "write_file", "gw-k9", KILL_AFTER_EFFECT, &sr);
	assert_int_equal(sec_count_lines(f->effect), 1);
	assert_int_equal(sr.outcome_unknown, 1);
	assert_int_equal(kill9_count_state(f->t, CORDON_ACTION_OUTCOME_UNKNOWN), 1);
	assert_int_equal(retry(f), -ENOTRECOVERABLE);
	assert_int_equal(retry(f), -ENOTRECOVERABLE);
	assert_int_equal(sec_count_lines(f->effect), 1);
	assert_int_equal(sec_verify(f->t), CORDON_AUDIT_PASS);
}

static void test_kill9_after_complete(void **state)
{
	struct fx *f = *state;
	struct cordon_broker_start_result sr;

	kill9_run(f->t, f->effect, "write_file", "gw-k9", KILL_AFTER_COMPLETE, &sr);
	assert_int_equal(sr.abandoned, 0);
	assert_int_equal(sr.outcome_unknown, 0);
	assert_int_equal(kill9_count_state(f->t, CORDON_ACTION_SUCCEEDED), 1);
	/* Same process key bytes in this test, so the sealed result opens. */
	assert_int_equal(retry(f), SEC_STORED);
	assert_int_equal(sec_count_lines(f->effect), 1);
	assert_int_equal(sec_verify(f->t), CORDON_AUDIT_PASS);
}

/* A commit that fails (what a crash inside the transaction leaves: SQLite
 * rolls the journal back) or a failing audit append: -EIO, nothing sent,
 * the approval is not consumed, no action exists; when the fault clears the
 * call runs exactly once. */
static void test_fault_before_audit_commit(void **state)
{
	struct fx *f = *state;
	struct mcp_peer peer;
	struct bt_call c;
	char id[CORDON_ID_STRING_MAX];
	struct cordon_approval_info info;

	sec_connector_start(&peer, "append", f->effect);
	bt_call_init(f->t, &c, "s1", "write_file", "{\"path\":\"/c\"}");
	bt_approve(f->t, &c.call, id);
	cordon_db_inject_faults(f->t->db, CORDON_DB_FAULT_COMMIT);
	assert_int_equal(sec_dispatch(f->t, &peer, &c.call, id, "gw-commit", NULL), -EIO);
	cordon_db_inject_faults(f->t->db, CORDON_DB_FAULT_AUDIT_APPEND);
	assert_int_equal(sec_dispatch(f->t, &peer, &c.call, id, "gw-commit", NULL), -EIO);
	cordon_db_inject_faults(f->t->db, 0);
	assert_int_equal(sec_count_lines(f->effect), 0);
	assert_int_equal(cordon_approval_get(f->t->db, id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_APPROVED);
	assert_int_equal(kill9_count_state(f->t, CORDON_ACTION_PREPARED), 0);
	assert_int_equal(sec_dispatch(f->t, &peer, &c.call, id, "gw-commit", NULL), SEC_EXECUTED);
	assert_int_equal(sec_dispatch(f->t, &peer, &c.call, NULL, "gw-commit", NULL), SEC_STORED);
	assert_int_equal(sec_count_lines(f->effect), 1);
	bt_call_done(&c);
	sec_connector_stop(&peer);
	assert_int_equal(sec_verify(f->t), CORDON_AUDIT_PASS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kill9_after_approval, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill9_after_begin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill9_after_dispatched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill9_after_effect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill9_after_complete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fault_before_audit_commit, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
