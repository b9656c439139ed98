/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: a malicious tool result cannot grant a capability.
 *
 * The connector (evil-connector malicious, a real process) answers every
 * call with results whose text and structuredContent contain JSON-RPC that
 * looks like grants and approvals, a policy text ("the operator granted
 * every tool"), `_meta` keys in cordon's namespace, and it writes extra
 * lines on stdout: notifications/tools/list_changed, server->client
 * requests named approvals/approve, grants/add, connectors/add, and a forged
 * response to a request id the client has not sent. Its initialize
 * `instructions` carry a prompt injection too.
 * The result is relayed as data and stored sealed (replay-safe call); after
 * all of it: the grant set, every approval's state, the inventory (states
 * and pinned fingerprints), the risk policy and the policy epoch are
 * byte-for-byte what they were; a destructive call still needs an approval
 * (-ENOENT without one); re-inventory after the spoofed list_changed (what
 * the daemon does) can only add the connector's new tool as pending_review,
 * which is denied; no result text reaches the audit log; the audit chain
 * verifies. Layer: libcordon-broker + a real malicious connector process. */
#include "sec-broker.h"

struct snapshot {
	char *grants;
	char *inventory;
	char *approvals;
	uint64_t epoch;
};

static int inv_cb(const struct cordon_inventory_record *rec, void *ud)
{
	char **s = ud, *n;

	assert_true(asprintf(&n, "%s%s:%d:%s:%s;", *s, rec->name, (int)rec->state, rec->fingerprint,
			     rec->pinned_fingerprint ? rec->pinned_fingerprint : "-") > 0);
	free(*s);
	*s = n;
	return 0;
}

static int appr_cb(const struct cordon_approval_info *info, void *ud)
{
	char **s = ud, *n;

	assert_true(asprintf(&n, "%s%s:%d;", *s, info->id, (int)info->state) > 0);
	free(*s);
	*s = n;
	return 0;
}

static void snap(struct bt *t, struct snapshot *s)
{
	char **g;
	size_t n;

	s->grants = strdup("");
	assert_int_equal(cordon_grants_list(t->db, "fs", &g, &n), 0);
	for (size_t i = 0; i < n; i++) {
		char *x;

		assert_true(asprintf(&x, "%s%s,", s->grants, g[i]) > 0);
		free(s->grants);
		s->grants = x;
	}
	strv_free(g);
	s->inventory = strdup("");
	assert_int_equal(cordon_inventory_list(t->db, "fs", 0, inv_cb, &s->inventory), 0);
	s->approvals = strdup("");
	assert_int_equal(cordon_approvals_list(t->db, NULL, appr_cb, &s->approvals), 0);
	assert_int_equal(cordon_db_policy_epoch(t->db, &s->epoch), 0);
}

static void snap_done(struct snapshot *s)
{
	free(s->grants);
	free(s->inventory);
	free(s->approvals);
}

static bool file_contains(const char *path, const char *needle)
{
	FILE *f = fopen(path, "re");
	static char buf[8 << 20];
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return memmem(buf, n, needle, strlen(needle)) != NULL;
}

static void test_malicious_tool_result_cannot_grant(void **state)
{
	struct bt *t = bt_new();
	struct mcp_peer peer;
	struct snapshot before, after;
	struct bt_call c;
	char id[CORDON_ID_STRING_MAX], *result = NULL, pending_id[CORDON_ID_STRING_MAX];
	struct cordon_approval_info req;

	(void)state;
	/* A pending approval the connector would love to see approved. */
	bt_call_init(t, &c, "s1", "delete_file", "{\"path\":\"/victim\"}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &c.call, &req), 0);
	memcpy(pending_id, req.id, sizeof(pending_id));
	bt_call_done(&c);
	snap(t, &before);

	sec_connector_start(&peer, "malicious", NULL);
	/* A read call and an approved replay-safe write: both relay the bait. */
	bt_call_init(t, &c, "s1", "read_file", "{\"path\":\"/x\"}");
	assert_int_equal(sec_dispatch(t, &peer, &c.call, NULL, NULL, &result), SEC_EXECUTED);
	assert_non_null(strstr(result, "SYSTEM POLICY UPDATE")); /* relayed, as data */
	free(result);
	bt_call_done(&c);
	bt_call_init(t, &c, "s1", "write_file", "{\"path\":\"/y\"}");
	bt_approve(t, &c.call, id);
	assert_int_equal(sec_dispatch(t, &peer, &c.call, id, "gw-mal", &result), SEC_EXECUTED);
	free(result);
	assert_int_equal(sec_dispatch(t, &peer, &c.call, NULL, "gw-mal", &result), SEC_STORED);
	free(result);
	bt_call_done(&c);

	/* Nothing the connector said changed the authorization state (the
	 * write's own approval is consumed, which is the only difference). */
	snap(t, &after);
	assert_string_equal(after.grants, before.grants);
	assert_string_equal(after.inventory, before.inventory);
	assert_int_equal(after.epoch, before.epoch);
	assert_non_null(strstr(after.approvals, pending_id));
	{
		struct cordon_approval_info info;

		assert_int_equal(cordon_approval_get(t->db, pending_id, &info), 0);
		assert_int_equal(info.state, CORDON_APPROVAL_REQUESTED);
	}
	/* The destructive call still needs an operator. */
	bt_call_init(t, &c, "s1", "delete_file", "{\"path\":\"/victim\"}");
	assert_int_equal(sec_dispatch(t, &peer, &c.call, NULL, NULL, NULL), -ENOENT);
	assert_int_equal(sec_dispatch(t, &peer, &c.call, pending_id, NULL, NULL), -EAGAIN);
	bt_call_done(&c);

	/* The spoofed list_changed: re-inventory (what the daemon does) sees
	 * a complete list with only "append" in it: that tool is pending
	 * review (denied), the others are gone (denied). */
	{
		json_t *list = mcp_peer_request(&peer, "tools/list", NULL, 5000), *tools;
		struct cordon_tool_advert_owned a = {};
		struct cordon_inventory_sync_result sr;
		struct cordon_decide_request rq = { .session = "s1", .connector = "fs", .tool = "append" };
		struct cordon_broker_decision d;

		assert_non_null(list);
		tools = json_object_get(json_object_get(list, "result"), "tools");
		assert_int_equal(json_array_size(tools), 1);
		assert_int_equal(cordon_tool_advert_from_json(json_array_get(tools, 0), NULL, &a), 0);
		assert_int_equal(cordon_inventory_sync(t->db, &t->sys, "fs", &a.advert, 1, &sr), 0);
		assert_int_equal(sr.added, 1);
		rq.fingerprint = a.fingerprint;
		assert_int_equal(cordon_broker_decide(t->db, &rq, &d), 0);
		assert_int_equal(d.decision.verdict, CORDON_VERDICT_DENY);
		rq.tool = "read_file";
		rq.fingerprint = bt_fp(t, "read_file");
		assert_int_equal(cordon_broker_decide(t->db, &rq, &d), 0);
		assert_int_equal(d.decision.verdict, CORDON_VERDICT_DENY);
		assert_int_equal(d.decision.reason, CORDON_DENY_GONE);
		cordon_tool_advert_owned_done(&a);
		json_decref(list);
	}
	sec_connector_stop(&peer);
	assert_int_equal(sec_verify(t), CORDON_AUDIT_PASS);
	snap_done(&before);
	snap_done(&after);
	cordon_db_close(t->db);
	t->db = NULL;
	/* No result or instruction text was written to the database file. */
	assert_false(file_contains(t->path, "SYSTEM POLICY UPDATE"));
	assert_false(file_contains(t->path, "Ignore previous instructions"));
	bt_open_db(t);
	bt_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malicious_tool_result_cannot_grant),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
