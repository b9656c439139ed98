/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: a record appended through ANOTHER database handle — a second
 * process such as the e2e harness approving or reviewing through the core
 * library, an offline tool, or a second handle in the same process — never
 * breaks the chain and never wedges the first handle.
 *
 * Formerly finding 4 of docs/security-tests.md: each handle cached the
 * log's Merkle state (broker/lib/audit.c) and, at the next due checkpoint,
 * failed with -EBADMSG "audit Merkle state covers N records but the log has
 * M" inside every audited append, so every decision above read tier failed
 * closed until the daemon restarted. Now every append compares the cached
 * state with the table's tail inside its BEGIN IMMEDIATE transaction and
 * folds in (verifying that they chain) the records other handles added.
 * Layer: libcordon-broker, two handles on one database file; checkpoints
 * every 4 records so several fall due after the foreign record. */
#include "sec-broker.h"

static struct bt *t;

static int teardown(void **state)
{
	(void)state;
	bt_free(t); /* also when the test failed */
	t = NULL;
	return 0;
}

static void test_concurrent_writer_keeps_chain(void **state)
{
	struct cordon_db_options o = { .busy_timeout_ms = 200 };
	struct cordon_db *other = NULL;
	struct cordon_diag d = {};
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_DECISION,
					 .actor = NULL,		  .connector = "fs",
					 .tool = "read_file",	  .tier = CORDON_RISK_READ,
					 .decision = "allow" };
	int r, failures = 0;

	(void)state;
	t = bt_new();
	o.clock = &t->clock.clock;
	ev.actor = &t->s1;
	/* Checkpoints every 4 records, so the problem shows quickly. */
	cordon_db_close(t->db);
	t->db = NULL;
	bt_open_db(t);
	bt_setup_audit(t, 4, 3600 * SEC);
	r = cordon_db_open(t->path, &o, &other, &d);
	if (r < 0)
		fail_msg("second handle: %s", d.message);
	assert_int_equal(cordon_audit_append(other, &ev), 0);
	cordon_db_close(other);
	for (int i = 0; i < 12; i++) {
		r = cordon_audit_append(t->db, &ev);
		if (r < 0) {
			if (!failures)
				printf("  append %d after the foreign record: %s (%s)\n", i, strerror(-r),
				       cordon_db_last_error(t->db));
			failures++;
		}
	}
	assert_int_equal(failures, 0);
	assert_int_equal(sec_verify(t), CORDON_AUDIT_PASS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_concurrent_writer_keeps_chain, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
