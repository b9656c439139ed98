/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: approval spam is rate-limited and coalesced.
 *
 * A session that repeats the same call 1000 times produces ONE pending
 * approval (every repeat returns the same id, marked coalesced, and the
 * operator's queue holds one entry). Distinct requests are capped per
 * session and in total: beyond the cap the request is refused with -EDQUOT
 * and nothing already pending is evicted (an attacker cannot push the
 * operator's legitimate approvals out of the queue); another session still
 * gets its own share until the total cap; a decision by the operator frees
 * a slot. The limits are counts of pending approvals, not a time rate: a
 * session cannot have more than `per_session` outstanding however fast it
 * asks. Layer: libcordon-broker. */
#include "sec-broker.h"

static int count_cb(const struct cordon_approval_info *info, void *ud)
{
	(void)info;
	(*(int *)ud)++;
	return 0;
}

static int pending(struct bt *t)
{
	int n = 0;

	assert_int_equal(cordon_approvals_list(
				 t->db,
				 &(struct cordon_list_filter){ .states = CORDON_STATE_BIT(CORDON_APPROVAL_REQUESTED) },
				 count_cb, &n),
			 0);
	return n;
}

static int request(struct bt *t, const struct cordon_approval_limits *lim, const char *session, int n,
		   struct cordon_approval_info *info)
{
	struct bt_call c;
	char args[64];
	int r;

	snprintf(args, sizeof(args), "{\"n\":%d}", n);
	bt_call_init(t, &c, session, "delete_file", args);
	r = cordon_approval_request(t->db, t->key, lim, &c.call, info);
	bt_call_done(&c);
	return r;
}

static void test_approval_spam_rate_limited_and_coalesced(void **state)
{
	struct bt *t = bt_new();
	struct cordon_approval_limits lim = { .per_session = 4, .total = 6 };
	struct cordon_approval_info first, info, keep[4];

	(void)state;
	/* Coalescing: 1000 identical requests, one approval. */
	assert_int_equal(request(t, &lim, "s1", 0, &first), 0);
	assert_false(first.coalesced);
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(request(t, &lim, "s1", 0, &info), 0);
		assert_true(info.coalesced);
		assert_string_equal(info.id, first.id);
		assert_string_equal(info.display_code, first.display_code);
	}
	assert_int_equal(pending(t), 1);

	/* Per-session cap (4): three more distinct ones, then -EDQUOT. */
	keep[0] = first;
	for (int i = 1; i < 4; i++)
		assert_int_equal(request(t, &lim, "s1", i, &keep[i]), 0);
	for (int i = 4; i < 50; i++)
		assert_int_equal(request(t, &lim, "s1", i, &info), -EDQUOT);
	/* A coalesced repeat at the cap is still answered (no new entry). */
	assert_int_equal(request(t, &lim, "s1", 2, &info), 0);
	assert_true(info.coalesced);
	assert_int_equal(pending(t), 4);
	/* Nothing was evicted. */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(cordon_approval_get(t->db, keep[i].id, &info), 0);
		assert_int_equal(info.state, CORDON_APPROVAL_REQUESTED);
	}

	/* Total cap (6): s2 gets two, then -EDQUOT; s1 still at its cap. */
	assert_int_equal(request(t, &lim, "s2", 100, &info), 0);
	assert_int_equal(request(t, &lim, "s2", 101, &info), 0);
	assert_int_equal(request(t, &lim, "s2", 102, &info), -EDQUOT);
	assert_int_equal(request(t, &lim, "s3", 200, &info), -EDQUOT);
	assert_int_equal(pending(t), 6);

	/* The operator denies one of s1's: one slot frees up for s1. */
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, keep[3].id, false, NULL), 0);
	assert_int_equal(request(t, &lim, "s1", 7, &info), 0);
	assert_int_equal(request(t, &lim, "s1", 8, &info), -EDQUOT);

	/* The defaults are caps too (16 per session). */
	{
		int ok = 0, r;

		for (int i = 0; i < 40; i++) {
			r = request(t, NULL, "s9", 1000 + i, &info);
			if (r == 0)
				ok++;
			else
				assert_int_equal(r, -EDQUOT);
		}
		assert_int_equal(ok, 16);
	}
	assert_int_equal(sec_verify(t), CORDON_AUDIT_PASS);
	bt_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_approval_spam_rate_limited_and_coalesced),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
