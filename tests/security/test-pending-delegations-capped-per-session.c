/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: pending delegation requests are capped per session and in
 * total, like approvals (issue 11, finding 9: 2000 requests in one second,
 * 20 MB of rows, all waiting for the operator).
 *
 * One session asks for CORDON_DELEGATION_PENDING_PER_SESSION + 1 roots: the
 * last is refused with -EDQUOT and the exact reason (what the agent sees as
 * "The request was refused: <reason>."), nothing is stored or audited for
 * it, nothing already pending is evicted. Another session still gets its
 * own share; an operator's decision frees a place. Sessions together stop
 * at CORDON_DELEGATION_PENDING_TOTAL with the total's reason.
 * Layer: libcordon-broker on a real database file. */
#include <sqlite3.h>

#include "sec-broker.h"

static int64_t rows(struct bt *t, const char *sql)
{
	sqlite3 *s = NULL;
	sqlite3_stmt *st = NULL;
	int64_t v;

	assert_int_equal(sqlite3_open_v2(t->path, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(s, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(s);
	return v;
}

static int ask(struct bt *t, const char *session, unsigned i, struct cordon_delegation_info *ret)
{
	struct cordon_actor a = cordon_actor_session(session);
	char path[64];

	snprintf(path, sizeof(path), "/srv/data/%u", i);
	return cordon_delegation_request(t->db, &a, "fs", path, CORDON_ACCESS_READ, 0, ret);
}

static void test_pending_delegations_capped_per_session(void **state)
{
	struct bt *t = bt_new();
	struct cordon_delegation_info d, first = {};
	unsigned cap = CORDON_DELEGATION_PENDING_PER_SESSION, sessions;
	int64_t audit_before, audit_after;
	char session[32];

	(void)state;
	for (unsigned i = 0; i < cap; i++) {
		assert_int_equal(ask(t, "s1", i, &d), 0);
		if (i == 0)
			first = d;
	}
	assert_int_equal(cordon_db_meta_get(t->db, "audit_last_seq", &audit_before), 0);
	assert_int_equal(ask(t, "s1", cap, &d), -EDQUOT);
	printf("  request %u of one session: %s\n", cap + 1, cordon_db_last_error(t->db));
	assert_string_equal(cordon_db_last_error(t->db),
			    "session has 16 pending delegation requests (the cap is 16); wait for the operator to "
			    "approve or deny them");
	assert_int_equal(cordon_db_meta_get(t->db, "audit_last_seq", &audit_after), 0);
	assert_int_equal(audit_after, audit_before);
	assert_int_equal(rows(t, "SELECT count(*) FROM delegations WHERE session = 's1' AND state = 0"), cap);
	assert_int_equal(rows(t, "SELECT count(*) FROM delegations WHERE path = '/srv/data/16'"), 0);

	/* Another session has its own share; a decision frees a place. */
	assert_int_equal(ask(t, "s2", 0, &d), 0);
	assert_int_equal(cordon_delegation_refuse(t->db, &t->op, first.id), 0);
	assert_int_equal(ask(t, "s1", cap, &d), 0);

	/* All sessions together: the total cap. */
	sessions = 2;
	while (rows(t, "SELECT count(*) FROM delegations WHERE state = 0") < CORDON_DELEGATION_PENDING_TOTAL) {
		int64_t n = rows(t, "SELECT count(*) FROM delegations WHERE state = 0");

		snprintf(session, sizeof(session), "s%u", ++sessions);
		for (unsigned i = 0; i < cap && n + i < CORDON_DELEGATION_PENDING_TOTAL; i++)
			assert_int_equal(ask(t, session, i, &d), 0);
	}
	snprintf(session, sizeof(session), "s%u", ++sessions);
	assert_int_equal(ask(t, session, 0, &d), -EDQUOT);
	printf("  request beyond the total: %s\n", cordon_db_last_error(t->db));
	assert_string_equal(cordon_db_last_error(t->db),
			    "256 delegation requests are pending in total (the cap is 256)");
	bt_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pending_delegations_capped_per_session),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
