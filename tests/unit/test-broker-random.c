/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Randomised operation sequences (fixed seeds, reproducible) against the
 * whole broker state machine, checking invariants after every run:
 *   - every approval is consumed at most once and by exactly one action;
 *   - no action above read tier exists without a consumed approval;
 *   - the audit log verifies (PASS) and is fully signed after shutdown;
 *   - a call runs only when the decision for it allows or was approved. */

#include <sqlite3.h>

#include "broker-test.h"

static const char *const tools[] = { "read_file", "write_file", "delete_file", "run_command", "mystery" };
static const char *const sessions[] = { "s1", "s2", "s3" };

struct pending {
	char id[CORDON_ID_STRING_MAX];
	char session[8];
	const char *tool;
	char args[32];
};

static int64_t count(struct bt *t, const char *sql)
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

static void run(unsigned seed)
{
	struct bt *t = bt_new();
	struct pending pend[64];
	size_t n_pend = 0;
	uint64_t dispatched = 0;

	srand(seed);
	bt_setup_audit(t, 17, 30 * SEC);
	for (int step = 0; step < 600; step++) {
		int op = rand() % 10;
		const char *session = sessions[rand() % 3];
		const char *tool = tools[rand() % 5];
		char args[32];
		struct bt_call c;

		snprintf(args, sizeof(args), "{\"n\":%d}", rand() % 4);
		switch (op) {
		case 0:
		case 1:
		case 2: { /* a call: decide, then request or begin */
			struct cordon_decide_request dr = {
				.session = session, .connector = "fs", .tool = tool, .fingerprint = bt_fp(t, tool)
			};
			struct cordon_broker_decision dec;
			struct cordon_action_begin_result res;

			assert_int_equal(cordon_broker_decide(t->db, &dr, &dec), 0);
			if (dec.decision.verdict == CORDON_VERDICT_DENY)
				break;
			bt_call_init(t, &c, session, tool, args);
			if (dec.decision.verdict == CORDON_VERDICT_ALLOW) {
				assert_int_equal(bt_begin(t, &c.call, NULL, NULL, &res), 0);
				dispatched++;
				cordon_action_begin_result_done(&res);
			} else if (n_pend < ELEMENTSOF(pend)) {
				struct cordon_approval_info info;
				int r = cordon_approval_request(t->db, t->key, NULL, &c.call, &info);
				assert_true(r == 0 || r == -EDQUOT);
				if (r == 0 && !info.coalesced) {
					struct pending *p = &pend[n_pend++];
					memcpy(p->id, info.id, sizeof(p->id));
					snprintf(p->session, sizeof(p->session), "%s", session);
					p->tool = tool;
					snprintf(p->args, sizeof(p->args), "%s", args);
				}
			}
			bt_call_done(&c);
			break;
		}
		case 3: /* operator decides a pending one */
			if (n_pend) {
				struct pending *p = &pend[rand() % n_pend];
				char code[CORDON_CONFIRM_CODE_LEN + 1] = "";
				(void)cordon_approval_confirmation_code(t->db, t->key, &t->op, p->id, code);
				(void)cordon_approval_decide(t->db, t->key, &t->op, p->id, rand() % 4 != 0, code);
			}
			break;
		case 4:
		case 5: /* the waiting call tries to run, sometimes with other args or session */
			if (n_pend) {
				struct pending *p = &pend[rand() % n_pend];
				const char *s2 = rand() % 5 ? p->session : sessions[rand() % 3];
				const char *a2 = rand() % 5 ? p->args : args;
				struct cordon_action_begin_result res;
				bool exact = strcmp(s2, p->session) == 0 && strcmp(a2, p->args) == 0;
				int r;

				bt_call_init(t, &c, s2, p->tool, a2);
				r = bt_begin(t, &c.call, p->id, NULL, &res);
				if (r == 0) {
					assert_true(exact);
					assert_int_equal(cordon_action_dispatched(t->db, res.action_id), 0);
					assert_int_equal(
						cordon_action_complete(t->db, t->key, res.action_id, true, NULL, 0), 0);
					dispatched++;
					cordon_action_begin_result_done(&res);
				}
				bt_call_done(&c);
			}
			break;
		case 6:
			cordon_virtual_clock_advance(&t->clock, (uint64_t)(rand() % 90) * SEC);
			assert_int_equal(cordon_broker_tick(t->db), 0);
			break;
		case 7:
			if (rand() % 4 == 0)
				assert_int_equal(cordon_connector_relaunch(t->db, &t->sys, "fs", NULL), 0);
			else if (rand() % 2)
				assert_int_equal(cordon_session_end(t->db, session), 0);
			break;
		case 8: {
			int r = rand() % 3 ? cordon_grant_add(t->db, &t->op, "fs", tool)
					   : cordon_grant_remove(t->db, &t->op, "fs", tool);
			assert_true(r == 0 || r == -EEXIST || r == -ENOENT);
			break;
		}
		case 9:
			if (rand() % 60 == 0) {
				struct cordon_revoke_all_result ra;
				assert_int_equal(cordon_revoke_all(t->db, &t->op, &ra), 0);
			}
			break;
		}
	}
	assert_int_equal(cordon_broker_stop(t->db), 0);

	/* Invariants. */
	assert_int_equal(count(t, "SELECT count(*) FROM actions"), (int64_t)dispatched);
	assert_int_equal(count(t, "SELECT count(*) FROM actions WHERE tier > 0 AND approval_id IS NULL"), 0);
	assert_int_equal(count(t, "SELECT count(*) FROM (SELECT approval_id FROM actions WHERE approval_id IS NOT NULL "
				  "GROUP BY approval_id HAVING count(*) > 1)"),
			 0);
	assert_int_equal(count(t, "SELECT count(*) FROM actions a JOIN approvals p ON p.id = a.approval_id "
				  "WHERE p.state != 5"),
			 0);
	assert_int_equal(count(t, "SELECT count(*) FROM approvals WHERE state = 5"),
			 count(t, "SELECT count(*) FROM actions WHERE approval_id IS NOT NULL"));
	{
		struct cordon_audit_report rep;
		assert_int_equal(cordon_audit_verify(t->db, &t->verifier, &rep), 0);
		if (rep.verdict != CORDON_AUDIT_PASS || rep.signed_through != rep.last)
			fail_msg("seed %u: %s", seed, rep.message);
	}
	print_message("seed %u: %llu calls ran\n", seed, (unsigned long long)dispatched);
	bt_free(t);
}

static void test_random_sequences_keep_invariants(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 6; seed++)
		run(seed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_sequences_keep_invariants),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
