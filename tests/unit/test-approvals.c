/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Argument-bound, one-use approvals: every way an approval must fail to
 * authorise a call, and the one way it succeeds (exactly once). Time is a
 * virtual clock. */

#include "broker-test.h"

static int setup(void **state)
{
	*state = bt_new();
	return 0;
}

static int teardown(void **state)
{
	bt_free(*state);
	return 0;
}

/* Approves `approved_args` for write_file in s1, then tries `call_args`. */
static int approve_then_call(struct bt *t, const char *approved_args, const char *call_args)
{
	struct bt_call a, b;
	char id[CORDON_ID_STRING_MAX];
	int r;

	bt_call_init(t, &a, "s1", "write_file", approved_args);
	bt_approve(t, &a.call, id);
	bt_call_init(t, &b, "s1", "write_file", call_args);
	r = bt_begin(t, &b.call, id, NULL, NULL);
	bt_call_done(&a);
	bt_call_done(&b);
	return r;
}

static void test_identical_call_succeeds_exactly_once(void **state)
{
	struct bt *t = *state;
	struct bt_call c;
	char id[CORDON_ID_STRING_MAX];
	struct cordon_approval_info info;

	bt_call_init(t, &c, "s1", "write_file", "{\"path\":\"/work/a\",\"content\":\"x\"}");
	bt_approve(t, &c.call, id);
	assert_int_equal(bt_begin(t, &c.call, id, NULL, NULL), 0);
	assert_int_equal(cordon_approval_get(t->db, id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_CONSUMED);
	/* Reuse of a consumed approval. */
	assert_int_equal(bt_begin(t, &c.call, id, NULL, NULL), -EALREADY);
	bt_call_done(&c);
}

static void test_key_order_does_not_matter(void **state)
{
	assert_int_equal(approve_then_call(*state, "{\"path\":\"/a\",\"content\":\"x\",\"mode\":{\"x\":1,\"y\":2}}",
					   "{\"mode\":{\"y\":2,\"x\":1},\"content\":\"x\",\"path\":\"/a\"}"),
			 0);
}

static void test_insertion_order_does_not_matter(void **state)
{
	struct bt *t = *state;
	json_t *a = json_object(), *b = json_object();
	char *ja = NULL, *jb = NULL;
	size_t la, lb;

	json_object_set_new(a, "path", json_string("/a"));
	json_object_set_new(a, "content", json_string("x"));
	json_object_set_new(b, "content", json_string("x"));
	json_object_set_new(b, "path", json_string("/a"));
	assert_int_equal(cordon_jcs_encode(a, &ja, &la), 0);
	assert_int_equal(cordon_jcs_encode(b, &jb, &lb), 0);
	assert_int_equal(approve_then_call(t, ja, jb), 0);
	free(ja);
	free(jb);
	json_decref(a);
	json_decref(b);
}

static void test_changed_top_level_argument_fails(void **state)
{
	assert_int_equal(
		approve_then_call(*state, "{\"path\":\"/a\",\"content\":\"x\"}", "{\"path\":\"/b\",\"content\":\"x\"}"),
		-EBADMSG);
}

static void test_changed_nested_argument_fails(void **state)
{
	assert_int_equal(approve_then_call(*state, "{\"path\":\"/a\",\"opts\":{\"mode\":{\"perm\":420}}}",
					   "{\"path\":\"/a\",\"opts\":{\"mode\":{\"perm\":511}}}"),
			 -EBADMSG);
}

static void test_array_order_matters(void **state)
{
	assert_int_equal(approve_then_call(*state, "{\"paths\":[\"/a\",\"/b\"]}", "{\"paths\":[\"/b\",\"/a\"]}"),
			 -EBADMSG);
}

static void test_null_differs_from_absent(void **state)
{
	assert_int_equal(approve_then_call(*state, "{\"path\":\"/a\"}", "{\"path\":\"/a\",\"backup\":null}"), -EBADMSG);
}

static void test_number_differs_from_string(void **state)
{
	assert_int_equal(approve_then_call(*state, "{\"count\":1}", "{\"count\":\"1\"}"), -EBADMSG);
}

/* A UI would show "token": "••••" for both; the binding sees the bytes. */
static void test_changed_redacted_token_fails(void **state)
{
	assert_int_equal(approve_then_call(*state, "{\"url\":\"https://x\",\"token\":\"ghp_aaaaaaaaaaaaaaaa\"}",
					   "{\"url\":\"https://x\",\"token\":\"ghp_bbbbbbbbbbbbbbbb\"}"),
			 -EBADMSG);
}

static void test_extra_argument_fails(void **state)
{
	assert_int_equal(approve_then_call(*state, "{\"path\":\"/a\"}", "{\"path\":\"/a\",\"recursive\":true}"),
			 -EBADMSG);
}

static void test_missing_approval_fails(void **state)
{
	struct bt *t = *state;
	struct bt_call c;

	bt_call_init(t, &c, "s1", "write_file", "{}");
	assert_int_equal(bt_begin(t, &c.call, NULL, NULL, NULL), -ENOENT);
	assert_int_equal(bt_begin(t, &c.call, "ap_00000000000000000000000000000000", NULL, NULL), -ENOENT);
	bt_call_done(&c);
}

static void test_wrong_session_fails(void **state)
{
	struct bt *t = *state;
	struct bt_call a, b;
	char id[CORDON_ID_STRING_MAX];

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	bt_approve(t, &a.call, id);
	bt_call_init(t, &b, "s2", "write_file", "{\"path\":\"/a\"}");
	assert_int_equal(bt_begin(t, &b.call, id, NULL, NULL), -EBADMSG);
	/* Still usable by its own session afterwards: the failed attempt
	 * rolled back and consumed nothing. */
	assert_int_equal(bt_begin(t, &a.call, id, NULL, NULL), 0);
	bt_call_done(&a);
	bt_call_done(&b);
}

static void test_wrong_connector_fails(void **state)
{
	struct bt *t = *state;
	struct cordon_profile p;
	struct bt_call a, b;
	char id[CORDON_ID_STRING_MAX];

	bt_profile(&p, NULL, 0);
	p.id = (char *)"gh";
	assert_int_equal(cordon_connector_install(t->db, &t->op, &p), 0);
	/* gh advertises the very same, reviewed tools: only the binding differs. */
	{
		struct cordon_tool_advert adv[8];
		for (size_t i = 0; i < t->n_adv; i++)
			adv[i] = t->adv[i].advert;
		assert_int_equal(cordon_inventory_sync(t->db, &t->sys, "gh", adv, t->n_adv, NULL), 0);
		for (size_t i = 0; i < t->n_adv; i++)
			assert_int_equal(cordon_inventory_review(t->db, &t->op, "gh", adv[i].name, adv[i].fingerprint),
					 0);
	}
	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	bt_approve(t, &a.call, id);
	b = a;
	b.jcs = NULL;
	b.call.connector = "gh";
	assert_int_equal(bt_begin(t, &b.call, id, NULL, NULL), -EBADMSG);
	bt_call_done(&a);
}

static void test_wrong_tool_fails(void **state)
{
	struct bt *t = *state;
	struct bt_call a, b;
	char id[CORDON_ID_STRING_MAX];

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	bt_approve(t, &a.call, id);
	bt_call_init(t, &b, "s1", "delete_file", "{\"path\":\"/a\"}");
	assert_int_equal(bt_begin(t, &b.call, id, NULL, NULL), -EBADMSG);
	bt_call_done(&a);
	bt_call_done(&b);
}

static void test_wrong_tier_fails(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	char id[CORDON_ID_STRING_MAX];

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	bt_approve(t, &a.call, id);
	/* A call claiming another tier than the policy's is stale before the
	 * binding is even compared (the binding covers the tier too). */
	a.call.tier = CORDON_RISK_DESTRUCTIVE;
	assert_int_equal(bt_begin(t, &a.call, id, NULL, NULL), -ESTALE);
	bt_call_done(&a);
}

static void test_expired_approval_fails(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	char id[CORDON_ID_STRING_MAX];

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	bt_approve(t, &a.call, id);
	cordon_virtual_clock_advance(&t->clock, 120 * SEC);
	assert_int_equal(bt_begin(t, &a.call, id, NULL, NULL), -ETIME);
	bt_call_done(&a);
}

static void test_approval_valid_just_before_expiry(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	char id[CORDON_ID_STRING_MAX];

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	bt_approve(t, &a.call, id);
	cordon_virtual_clock_advance(&t->clock, 120 * SEC - 1);
	assert_int_equal(bt_begin(t, &a.call, id, NULL, NULL), 0);
	bt_call_done(&a);
}

static void test_expired_request_cannot_be_approved(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	struct cordon_approval_info info;
	uint64_t n = 0;

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &a.call, &info), 0);
	cordon_virtual_clock_advance(&t->clock, 121 * SEC);
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, info.id, true, NULL), -ETIME);
	assert_int_equal(cordon_approval_get(t->db, info.id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_EXPIRED);
	assert_int_equal(cordon_approvals_expire(t->db, &n), 0);
	assert_int_equal(n, 0);
	bt_call_done(&a);
}

static void test_expiry_sweep_marks_expired(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	struct cordon_approval_info info;
	uint64_t n = 0;

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &a.call, &info), 0);
	cordon_virtual_clock_advance(&t->clock, 119 * SEC);
	assert_int_equal(cordon_approvals_expire(t->db, &n), 0);
	assert_int_equal(n, 0);
	cordon_virtual_clock_advance(&t->clock, 1 * SEC);
	assert_int_equal(cordon_approvals_expire(t->db, &n), 0);
	assert_int_equal(n, 1);
	bt_call_done(&a);
}

static void test_denied_approval_fails(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	struct cordon_approval_info info;

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &a.call, &info), 0);
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, info.id, false, NULL), 0);
	assert_int_equal(bt_begin(t, &a.call, info.id, NULL, NULL), -EACCES);
	/* A decided approval cannot be re-decided. */
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, info.id, true, NULL), -EALREADY);
	bt_call_done(&a);
}

static void test_pending_approval_does_not_authorise(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	struct cordon_approval_info info;

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &a.call, &info), 0);
	assert_int_equal(bt_begin(t, &a.call, info.id, NULL, NULL), -EAGAIN);
	bt_call_done(&a);
}

static void test_relaunch_revokes(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	char id[CORDON_ID_STRING_MAX];
	struct cordon_approval_info info;
	uint64_t gen;

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	bt_approve(t, &a.call, id);
	assert_int_equal(cordon_connector_relaunch(t->db, &t->sys, "fs", &gen), 0);
	assert_int_equal(gen, a.call.generation + 1);
	assert_int_equal(cordon_approval_get(t->db, id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_REVOKED);
	/* The old generation is stale; with the new one the approval is revoked. */
	assert_int_equal(bt_begin(t, &a.call, id, NULL, NULL), -ESTALE);
	a.call.generation = gen;
	assert_int_equal(bt_begin(t, &a.call, id, NULL, NULL), -ECANCELED);
	bt_call_done(&a);
}

/* Even without the revocation bookkeeping, the binding covers the
 * generation, the fingerprint and the tier; not the policy epoch (issue 14:
 * a change to another tool must not void an approval; the change revokes
 * its own tool's approvals explicitly). */
static void test_binding_covers_generation_not_epoch(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	uint8_t b0[32], b1[32], b2[32], b3[32], b4[32];

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	assert_int_equal(cordon_call_binding(t->key, &a.call, b0), 0);
	a.call.generation++;
	assert_int_equal(cordon_call_binding(t->key, &a.call, b1), 0);
	a.call.generation--;
	a.call.policy_epoch++;
	assert_int_equal(cordon_call_binding(t->key, &a.call, b2), 0);
	a.call.policy_epoch--;
	a.call.fingerprint = bt_fp(t, "read_file");
	assert_int_equal(cordon_call_binding(t->key, &a.call, b3), 0);
	a.call.fingerprint = bt_fp(t, "write_file");
	a.call.tier = CORDON_RISK_HIGH;
	assert_int_equal(cordon_call_binding(t->key, &a.call, b4), 0);
	assert_memory_not_equal(b0, b4, 32);
	assert_memory_not_equal(b0, b1, 32);
	assert_memory_equal(b0, b2, 32);
	assert_memory_not_equal(b0, b3, 32);
	bt_call_done(&a);
}

static void test_session_end_revokes(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	char id[CORDON_ID_STRING_MAX];

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	bt_approve(t, &a.call, id);
	assert_int_equal(cordon_session_end(t->db, "s1"), 0);
	assert_int_equal(bt_begin(t, &a.call, id, NULL, NULL), -ECANCELED);
	bt_call_done(&a);
}

/* Issue 14: a grant or policy change revokes only the approvals it affects.
 * Granting another tool, or changing another tool's tier, leaves an
 * approval as it was: the call repeated with the new epoch coalesces onto
 * it and consumes it. A begin still carrying the old epoch is refused as
 * stale (decide again), never run on an outdated decision. Removing the
 * tool's grant or changing its tier revokes its approvals. */
static void test_grant_change_revokes_only_affected_approvals(void **state)
{
	struct bt *t = *state;
	struct bt_call a, d, again;
	struct cordon_approval_info info, dinfo;
	char id[CORDON_ID_STRING_MAX];

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	bt_call_init(t, &d, "s1", "delete_file", "{\"path\":\"/b\"}");
	bt_approve(t, &a.call, id);
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &d.call, &dinfo), 0);

	assert_int_equal(cordon_grant_add(t->db, &t->op, "fs", "other_tool"), 0);
	assert_int_equal(cordon_risk_set(t->db, &t->op, "fs", "read_file", CORDON_RISK_WRITE), 0);
	assert_int_equal(cordon_approval_get(t->db, id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_APPROVED);
	assert_int_equal(cordon_approval_get(t->db, dinfo.id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_REQUESTED);

	/* The old decision is stale; the repeated call is decided afresh. */
	assert_int_equal(bt_begin(t, &a.call, id, NULL, NULL), -ESTALE);
	bt_call_init(t, &again, "s1", "write_file", "{\"path\":\"/a\"}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &again.call, &info), 0);
	assert_true(info.coalesced);
	assert_string_equal(info.id, id);
	assert_int_equal(info.state, CORDON_APPROVAL_APPROVED);
	assert_int_equal(bt_begin(t, &again.call, id, NULL, NULL), 0);

	/* delete_file's own tier changes: its pending approval is revoked. */
	assert_int_equal(cordon_risk_set(t->db, &t->op, "fs", "delete_file", CORDON_RISK_CRITICAL), 0);
	assert_int_equal(cordon_approval_get(t->db, dinfo.id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_REVOKED);

	/* write_file's grant goes: its approval is revoked. */
	bt_call_done(&again);
	bt_call_init(t, &again, "s1", "write_file", "{\"path\":\"/c\"}");
	bt_approve(t, &again.call, id);
	assert_int_equal(cordon_grant_remove(t->db, &t->op, "fs", "write_file"), 0);
	assert_int_equal(cordon_approval_get(t->db, id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_REVOKED);
	bt_call_done(&a);
	bt_call_done(&d);
	bt_call_done(&again);
}

/* Issue 14: a display code still finds its approval once it is no longer
 * outstanding, so the operator learns it expired, was used, was denied or
 * was revoked, instead of "not found"; an outstanding approval with the same
 * code wins over a finished one; a code nobody had is unknown. */
static void test_approval_lookup_distinguishes_expired_consumed_denied_unknown(void **state)
{
	struct bt *t = *state;
	struct bt_call a, b, c;
	struct cordon_approval_info info, ex;
	char id[CORDON_ID_STRING_MAX], found[48];

	/* Expired. */
	bt_call_init(t, &a, "s1", "write_file", "{\"n\":1}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &a.call, &ex), 0);
	cordon_virtual_clock_advance(&t->clock, 121 * SEC);
	assert_int_equal(cordon_approvals_expire(t->db, NULL), 0);
	assert_int_equal(cordon_approval_resolve(t->db, ex.display_code, found), 0);
	assert_string_equal(found, ex.id);
	assert_int_equal(cordon_approval_get(t->db, found, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_EXPIRED);
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, found, true, NULL), -ETIME);

	/* Consumed. */
	bt_call_init(t, &b, "s1", "write_file", "{\"n\":2}");
	bt_approve(t, &b.call, id);
	assert_int_equal(bt_begin(t, &b.call, id, NULL, NULL), 0);
	assert_int_equal(cordon_approval_get(t->db, id, &info), 0);
	assert_int_equal(cordon_approval_resolve(t->db, info.display_code, found), 0);
	assert_string_equal(found, id);
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, found, true, NULL), -EALREADY);

	/* Denied. */
	bt_call_init(t, &c, "s1", "write_file", "{\"n\":3}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &c.call, &info), 0);
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, info.id, false, NULL), 0);
	assert_int_equal(cordon_approval_resolve(t->db, info.display_code, found), 0);
	assert_string_equal(found, info.id);
	assert_int_equal(cordon_approval_get(t->db, found, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_DENIED);

	/* The identical call again: the new, outstanding approval wins. */
	{
		struct cordon_approval_info again;

		assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &c.call, &again), 0);
		assert_false(again.coalesced);
		assert_string_equal(again.display_code, info.display_code);
		assert_int_equal(cordon_approval_resolve(t->db, info.display_code, found), 0);
		assert_string_equal(found, again.id);
	}

	/* Unknown. */
	assert_int_equal(cordon_approval_resolve(t->db, "ZZZZZZZZ", found), -ENOENT);
	assert_int_equal(cordon_approval_resolve(t->db, "ap_nope", found), -ENOENT);
	bt_call_done(&a);
	bt_call_done(&b);
	bt_call_done(&c);
}

static void test_fingerprint_change_revokes(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	char id[CORDON_ID_STRING_MAX];
	struct cordon_approval_info info;

	char old_fp[65];

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	bt_approve(t, &a.call, id);
	snprintf(old_fp, sizeof(old_fp), "%s", a.call.fingerprint);
	a.call.fingerprint = old_fp;
	/* The connector now describes write_file differently. */
	cordon_tool_advert_owned_done(&t->adv[1]);
	{
		json_t *tool = json_pack("{s:s, s:s}", "name", "write_file", "description", "Write a file, and more");
		assert_int_equal(cordon_tool_advert_from_json(tool, "server instructions", &t->adv[1]), 0);
		json_decref(tool);
	}
	bt_sync(t);
	assert_int_equal(cordon_approval_get(t->db, id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_REVOKED);
	/* Denied before the approval is looked at: the definition changed. */
	assert_int_equal(bt_begin(t, &a.call, id, NULL, NULL), -EACCES);
	bt_call_done(&a);
}

static void test_operator_revoke(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	char id[CORDON_ID_STRING_MAX];

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	bt_approve(t, &a.call, id);
	assert_int_equal(cordon_approval_revoke(t->db, &t->s1, id), -EPERM);
	assert_int_equal(cordon_approval_revoke(t->db, &t->op, id), 0);
	assert_int_equal(bt_begin(t, &a.call, id, NULL, NULL), -ECANCELED);
	assert_int_equal(cordon_approval_revoke(t->db, &t->op, id), -EALREADY);
	bt_call_done(&a);
}

static void test_identical_pending_request_coalesces(void **state)
{
	struct bt *t = *state;
	struct bt_call a, b, c;
	struct cordon_approval_info i1, i2, i3;

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\",\"content\":\"x\"}");
	bt_call_init(t, &b, "s1", "write_file", "{\"content\":\"x\",\"path\":\"/a\"}");
	bt_call_init(t, &c, "s1", "write_file", "{\"content\":\"y\",\"path\":\"/a\"}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &a.call, &i1), 0);
	assert_false(i1.coalesced);
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &b.call, &i2), 0);
	assert_true(i2.coalesced);
	assert_string_equal(i1.id, i2.id);
	assert_string_equal(i1.display_code, i2.display_code);
	assert_int_equal(strlen(i1.display_code), CORDON_DISPLAY_CODE_LEN);
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &c.call, &i3), 0);
	assert_false(i3.coalesced);
	assert_string_not_equal(i1.id, i3.id);
	bt_call_done(&a);
	bt_call_done(&b);
	bt_call_done(&c);
}

static void test_caps_refuse_never_evict(void **state)
{
	struct bt *t = *state;
	struct cordon_approval_limits lim = { .per_session = 2, .total = 3 };
	struct cordon_approval_info first, info;
	struct bt_call c;
	char args[64];

	for (int i = 0; i < 2; i++) {
		snprintf(args, sizeof(args), "{\"n\":%d}", i);
		bt_call_init(t, &c, "s1", "write_file", args);
		assert_int_equal(cordon_approval_request(t->db, t->key, &lim, &c.call, i == 0 ? &first : &info), 0);
		bt_call_done(&c);
	}
	bt_call_init(t, &c, "s1", "write_file", "{\"n\":99}");
	assert_int_equal(cordon_approval_request(t->db, t->key, &lim, &c.call, &info), -EDQUOT);
	assert_non_null(strstr(cordon_db_last_error(t->db), "cap"));
	bt_call_done(&c);
	/* Another session still has room until the total cap. */
	bt_call_init(t, &c, "s2", "write_file", "{\"n\":1}");
	assert_int_equal(cordon_approval_request(t->db, t->key, &lim, &c.call, &info), 0);
	bt_call_done(&c);
	bt_call_init(t, &c, "s2", "write_file", "{\"n\":2}");
	assert_int_equal(cordon_approval_request(t->db, t->key, &lim, &c.call, &info), -EDQUOT);
	bt_call_done(&c);
	/* Nothing was evicted. */
	assert_int_equal(cordon_approval_get(t->db, first.id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_REQUESTED);
	/* Deciding one frees a slot. */
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, first.id, false, NULL), 0);
	bt_call_init(t, &c, "s1", "write_file", "{\"n\":99}");
	assert_int_equal(cordon_approval_request(t->db, t->key, &lim, &c.call, &info), 0);
	bt_call_done(&c);
}

static void test_critical_needs_confirmation_code(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	struct cordon_approval_info info;
	char code[CORDON_CONFIRM_CODE_LEN + 1], wrong[CORDON_CONFIRM_CODE_LEN + 1];

	bt_call_init(t, &a, "s1", "run_command", "{\"cmd\":\"make\"}");
	assert_int_equal(a.call.tier, CORDON_RISK_CRITICAL);
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &a.call, &info), 0);
	assert_int_equal(cordon_approval_confirmation_code(t->db, t->key, &t->s1, info.id, code), -EPERM);
	assert_int_equal(cordon_approval_confirmation_code(t->db, t->key, &t->op, info.id, code), 0);
	assert_int_equal(strlen(code), CORDON_CONFIRM_CODE_LEN);
	memcpy(wrong, code, sizeof(wrong));
	wrong[0] = wrong[0] == 'A' ? 'B' : 'A';
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, info.id, true, NULL), -EACCES);
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, info.id, true, wrong), -EACCES);
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, info.id, true, code), 0);
	assert_int_equal(bt_begin(t, &a.call, info.id, NULL, NULL), 0);
	bt_call_done(&a);
}

static void test_confirmation_codes_differ_per_approval(void **state)
{
	struct bt *t = *state;
	struct bt_call a, b;
	struct cordon_approval_info ia, ib;
	char ca[CORDON_CONFIRM_CODE_LEN + 1], cb[CORDON_CONFIRM_CODE_LEN + 1];

	bt_call_init(t, &a, "s1", "run_command", "{\"cmd\":\"make\"}");
	bt_call_init(t, &b, "s1", "run_command", "{\"cmd\":\"make test\"}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &a.call, &ia), 0);
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &b.call, &ib), 0);
	assert_int_equal(cordon_approval_confirmation_code(t->db, t->key, &t->op, ia.id, ca), 0);
	assert_int_equal(cordon_approval_confirmation_code(t->db, t->key, &t->op, ib.id, cb), 0);
	assert_string_not_equal(ca, cb);
	/* A's code does not approve B. */
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, ib.id, true, ca), -EACCES);
	bt_call_done(&a);
	bt_call_done(&b);
}

static void test_only_operators_decide(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	struct cordon_approval_info info;

	bt_call_init(t, &a, "s1", "write_file", "{}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &a.call, &info), 0);
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->s1, info.id, true, NULL), -EPERM);
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->sys, info.id, true, NULL), -EPERM);
	assert_int_equal(bt_begin(t, &a.call, info.id, NULL, NULL), -EAGAIN);
	bt_call_done(&a);
}

static void test_read_tier_needs_no_approval(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	struct cordon_approval_info info;

	bt_call_init(t, &a, "s1", "read_file", "{\"path\":\"/a\"}");
	assert_int_equal(bt_begin(t, &a.call, NULL, NULL, NULL), 0);
	/* and cannot request one */
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &a.call, &info), -EINVAL);
	bt_call_done(&a);
}

static void test_restart_revokes_outstanding(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	char id[CORDON_ID_STRING_MAX];
	struct cordon_broker_start_result res;
	struct cordon_approval_info info;

	bt_call_init(t, &a, "s1", "write_file", "{}");
	bt_approve(t, &a.call, id);
	assert_int_equal(cordon_broker_start(t->db, &res), 0);
	assert_int_equal(res.approvals_revoked, 1);
	assert_int_equal(cordon_approval_get(t->db, id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_REVOKED);
	bt_call_done(&a);
}

static int count_cb(const struct cordon_approval_info *info, void *userdata)
{
	(*(int *)userdata)++;
	assert_int_equal(strlen(info->display_code), CORDON_DISPLAY_CODE_LEN);
	return 0;
}

static void test_list_pending_for_operator(void **state)
{
	struct bt *t = *state;
	struct bt_call a, b;
	struct cordon_approval_info info;
	char id[CORDON_ID_STRING_MAX];
	int pending = 0, all = 0;

	bt_call_init(t, &a, "s1", "write_file", "{\"n\":1}");
	bt_call_init(t, &b, "s1", "write_file", "{\"n\":2}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &a.call, &info), 0);
	bt_approve(t, &b.call, id);
	assert_int_equal(cordon_approvals_list(
				 t->db,
				 &(struct cordon_list_filter){ .states = CORDON_STATE_BIT(CORDON_APPROVAL_REQUESTED) },
				 count_cb, &pending),
			 0);
	assert_int_equal(cordon_approvals_list(t->db, NULL, count_cb, &all), 0);
	assert_int_equal(pending, 1);
	assert_int_equal(all, 2);
	bt_call_done(&a);
	bt_call_done(&b);
}

struct ids {
	char id[4][CORDON_ID_STRING_MAX];
	size_t n;
	int stop_after; /* cb fails with -EINTR after this many; 0: never */
};

static int ids_cb(const struct cordon_approval_info *info, void *userdata)
{
	struct ids *v = userdata;

	assert_true(v->n < 4);
	memcpy(v->id[v->n++], info->id, CORDON_ID_STRING_MAX);
	return v->stop_after && (int)v->n == v->stop_after ? -EINTR : 0;
}

/* The operator's listings from the core: states by name, newest first with a
 * limit, one connector, and a callback that stops the walk. */
static void test_list_filter_for_operator(void **state)
{
	struct bt *t = *state;
	struct bt_call c[3];
	struct cordon_approval_info info[3];
	struct ids v;

	for (int i = 0; i < 3; i++) {
		char args[16];

		snprintf(args, sizeof(args), "{\"n\":%d}", i);
		bt_call_init(t, &c[i], "s1", "write_file", args);
		assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &c[i].call, &info[i]), 0);
		cordon_virtual_clock_advance(&t->clock, SEC);
	}
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, info[1].id, true, NULL), 0);
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, info[2].id, false, NULL), 0);

	v = (struct ids){};
	assert_int_equal(cordon_approvals_list(t->db, NULL, ids_cb, &v), 0);
	assert_int_equal(v.n, 3);
	for (int i = 0; i < 3; i++)
		assert_string_equal(v.id[i], info[i].id);

	v = (struct ids){};
	assert_int_equal(cordon_approvals_list(t->db, &(struct cordon_list_filter){ .newest_first = true, .limit = 2 },
					       ids_cb, &v),
			 0);
	assert_int_equal(v.n, 2);
	assert_string_equal(v.id[0], info[2].id);
	assert_string_equal(v.id[1], info[1].id);

	v = (struct ids){};
	assert_int_equal(cordon_approvals_list(
				 t->db,
				 &(struct cordon_list_filter){ .states = CORDON_STATE_BIT(CORDON_APPROVAL_REQUESTED) |
									 CORDON_STATE_BIT(CORDON_APPROVAL_APPROVED),
							       .connector = "fs" },
				 ids_cb, &v),
			 0);
	assert_int_equal(v.n, 2);
	assert_string_equal(v.id[0], info[0].id);
	assert_string_equal(v.id[1], info[1].id);

	v = (struct ids){};
	assert_int_equal(cordon_approvals_list(t->db, &(struct cordon_list_filter){ .connector = "other" }, ids_cb, &v),
			 0);
	assert_int_equal(v.n, 0);

	v = (struct ids){ .stop_after = 1 };
	assert_int_equal(cordon_approvals_list(t->db, NULL, ids_cb, &v), -EINTR);
	assert_int_equal(v.n, 1);
	for (int i = 0; i < 3; i++)
		bt_call_done(&c[i]);
}

static void test_tick_expires_and_checkpoints(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	struct cordon_approval_info info;

	bt_call_init(t, &a, "s1", "write_file", "{}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &a.call, &info), 0);
	cordon_virtual_clock_advance(&t->clock, 3601 * SEC);
	assert_int_equal(cordon_broker_tick(t->db), 0);
	assert_int_equal(cordon_approval_get(t->db, info.id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_EXPIRED);
	{
		struct cordon_audit_report rep;
		assert_int_equal(cordon_audit_verify(t->db, &t->verifier, &rep), 0);
		assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
		assert_int_equal(rep.signed_through, rep.last);
	}
	bt_call_done(&a);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* A client's cancellation withdraws only its own still-requested approval. */
static void test_client_cancel_withdraws_own_pending(void **state)
{
	struct bt *t = *state;
	struct bt_call a, b;
	struct cordon_approval_info info;
	char id[CORDON_ID_STRING_MAX];

	bt_call_init(t, &a, "s1", "write_file", "{\"n\":1}");
	bt_call_init(t, &b, "s1", "write_file", "{\"n\":2}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &a.call, &info), 0);
	assert_int_equal(cordon_approval_cancel(t->db, "s2", info.id), -EALREADY);
	assert_int_equal(cordon_approval_get(t->db, info.id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_REQUESTED);
	assert_int_equal(cordon_approval_cancel(t->db, "s1", info.id), 0);
	assert_int_equal(cordon_approval_get(t->db, info.id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_REVOKED);
	assert_int_equal(cordon_approval_cancel(t->db, "s1", info.id), -EALREADY);
	/* One an operator already approved is not the client's to withdraw. */
	bt_approve(t, &b.call, id);
	assert_int_equal(cordon_approval_cancel(t->db, "s1", id), -EALREADY);
	assert_int_equal(cordon_approval_get(t->db, id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_APPROVED);
	bt_call_done(&a);
	bt_call_done(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_client_cancel_withdraws_own_pending),
		T(test_identical_call_succeeds_exactly_once),
		T(test_key_order_does_not_matter),
		T(test_insertion_order_does_not_matter),
		T(test_changed_top_level_argument_fails),
		T(test_changed_nested_argument_fails),
		T(test_array_order_matters),
		T(test_null_differs_from_absent),
		T(test_number_differs_from_string),
		T(test_changed_redacted_token_fails),
		T(test_extra_argument_fails),
		T(test_missing_approval_fails),
		T(test_wrong_session_fails),
		T(test_wrong_connector_fails),
		T(test_wrong_tool_fails),
		T(test_wrong_tier_fails),
		T(test_expired_approval_fails),
		T(test_approval_valid_just_before_expiry),
		T(test_expired_request_cannot_be_approved),
		T(test_expiry_sweep_marks_expired),
		T(test_denied_approval_fails),
		T(test_pending_approval_does_not_authorise),
		T(test_relaunch_revokes),
		T(test_binding_covers_generation_not_epoch),
		T(test_session_end_revokes),
		T(test_grant_change_revokes_only_affected_approvals),
		T(test_approval_lookup_distinguishes_expired_consumed_denied_unknown),
		T(test_fingerprint_change_revokes),
		T(test_operator_revoke),
		T(test_identical_pending_request_coalesces),
		T(test_caps_refuse_never_evict),
		T(test_critical_needs_confirmation_code),
		T(test_confirmation_codes_differ_per_approval),
		T(test_only_operators_decide),
		T(test_read_tier_needs_no_approval),
		T(test_restart_revokes_outstanding),
		T(test_list_pending_for_operator),
		T(test_list_filter_for_operator),
		T(test_tick_expires_and_checkpoints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
