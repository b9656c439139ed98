/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Agents and their bearer tokens (broker/lib/agents.c, issue 18): a token
 * is shown once and only its hash is stored; it authenticates its agent
 * until revoked; names are validated; only an operator adds or revokes;
 * both are audited with the name and never the token. */
#include <sodium.h>

#include "agents.h"
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

static void test_names(void **state)
{
	(void)state;
	assert_true(cordon_agent_name_is_valid("ci-bot"));
	assert_true(cordon_agent_name_is_valid("a"));
	assert_true(cordon_agent_name_is_valid("0_x-y"));
	assert_true(cordon_agent_name_is_valid("abcdefghijklmnopqrst")); /* 20 */
	assert_false(cordon_agent_name_is_valid(NULL));
	assert_false(cordon_agent_name_is_valid(""));
	assert_false(cordon_agent_name_is_valid("abcdefghijklmnopqrstu")); /* 21 */
	assert_false(cordon_agent_name_is_valid("-x"));
	assert_false(cordon_agent_name_is_valid("_x"));
	assert_false(cordon_agent_name_is_valid("Bot"));
	assert_false(cordon_agent_name_is_valid("a b"));
	assert_false(cordon_agent_name_is_valid("a.b"));
	assert_false(cordon_agent_name_is_valid("a/b"));
}

static void test_add_authenticate_revoke(void **state)
{
	struct bt *t = *state;
	char tok[CORDON_AGENT_TOKEN_LEN + 1], tok2[CORDON_AGENT_TOKEN_LEN + 1], bad[CORDON_AGENT_TOKEN_LEN + 1];
	struct cordon_agent_info a = {}, b = {}, who = {};
	json_t *list = NULL;
	int64_t id = 0;
	char *dump;

	assert_int_equal(cordon_agent_add(t->db, &t->op, "bot", tok, &a), 0);
	assert_int_equal(strlen(tok), CORDON_AGENT_TOKEN_LEN);
	assert_int_equal(strncmp(tok, "cordon_at_", 10), 0);
	assert_string_equal(a.name, "bot");
	assert_int_equal(cordon_agent_authenticate(t->db, tok, &who), 0);
	assert_int_equal(who.id, a.id);
	assert_string_equal(who.name, "bot");
	/* A live duplicate name: refused; another name: another token. */
	assert_int_equal(cordon_agent_add(t->db, &t->op, "bot", tok2, &b), -EEXIST);
	assert_int_equal(cordon_agent_add(t->db, &t->op, "other", tok2, &b), 0);
	assert_string_not_equal(tok, tok2);
	assert_int_equal(cordon_agent_authenticate(t->db, tok2, &who), 0);
	assert_int_equal(who.id, b.id);
	/* Not a token: one answer for every way of being wrong. */
	memcpy(bad, tok, sizeof(bad));
	bad[20] = bad[20] == 'A' ? 'B' : 'A';
	assert_int_equal(cordon_agent_authenticate(t->db, bad, &who), -EACCES);
	assert_int_equal(cordon_agent_authenticate(t->db, "", &who), -EACCES);
	assert_int_equal(cordon_agent_authenticate(t->db, NULL, &who), -EACCES);
	assert_int_equal(cordon_agent_authenticate(t->db, tok + 1, &who), -EACCES);
	memcpy(bad, tok, sizeof(bad));
	bad[CORDON_AGENT_TOKEN_LEN - 1] = '!';
	assert_int_equal(cordon_agent_authenticate(t->db, bad, &who), -EACCES);
	/* The database holds no token. */
	assert_int_equal(cordon_agents_list(t->db, true, &list), 0);
	assert_int_equal(json_array_size(list), 2);
	dump = json_dumps(list, JSON_COMPACT);
	assert_null(strstr(dump, "cordon_at_"));
	assert_null(strstr(dump, tok + 10));
	free(dump);
	json_decref(list);
	/* Revoked: refused from now on; a second revoke finds nothing. */
	assert_int_equal(cordon_agent_revoke(t->db, &t->op, "bot", &id), 0);
	assert_int_equal(id, a.id);
	assert_int_equal(cordon_agent_authenticate(t->db, tok, &who), -EACCES);
	assert_int_equal(cordon_agent_revoke(t->db, &t->op, "bot", &id), -ENOENT);
	assert_int_equal(cordon_agents_list(t->db, false, &list), 0);
	assert_int_equal(json_array_size(list), 1);
	json_decref(list);
	/* The name again: a new agent (new id), a new token. */
	assert_int_equal(cordon_agent_add(t->db, &t->op, "bot", tok2, &b), 0);
	assert_true(b.id > a.id);
	assert_int_equal(cordon_agent_authenticate(t->db, tok, &who), -EACCES);
	sodium_memzero(tok, sizeof(tok));
	sodium_memzero(tok2, sizeof(tok2));
}

static void test_operator_only_and_audited(void **state)
{
	struct bt *t = *state;
	char tok[CORDON_AGENT_TOKEN_LEN + 1];
	struct cordon_agent_info a = {};
	json_t *arr = NULL, *rec;
	char *dump;

	assert_int_equal(cordon_agent_add(t->db, &t->s1, "bot", tok, &a), -EPERM);
	assert_int_equal(cordon_agent_add(t->db, &t->sys, "bot", tok, &a), -EPERM);
	assert_int_equal(cordon_agent_add(t->db, &t->op, "Bad", tok, &a), -EINVAL);
	assert_int_equal(cordon_agent_add(t->db, &t->op, "bot", tok, &a), 0);
	assert_int_equal(cordon_agent_revoke(t->db, &t->s1, "bot", NULL), -EPERM);
	assert_int_equal(cordon_agent_revoke(t->db, &t->op, "bot", NULL), 0);
	assert_int_equal(cordon_audit_tail(t->db, 2, &arr), 0);
	rec = json_array_get(arr, 0);
	assert_string_equal(json_string_value(json_object_get(rec, "event")), "agent.added");
	assert_string_equal(json_string_value(json_object_get(rec, "agent")), "bot");
	assert_string_equal(json_string_value(json_object_get(json_object_get(rec, "actor"), "kind")), "operator");
	rec = json_array_get(arr, 1);
	assert_string_equal(json_string_value(json_object_get(rec, "event")), "agent.revoked");
	assert_string_equal(json_string_value(json_object_get(rec, "agent")), "bot");
	dump = json_dumps(arr, JSON_COMPACT);
	assert_null(strstr(dump, "cordon_at_"));
	assert_null(strstr(dump, tok + 10));
	free(dump);
	json_decref(arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test_setup_teardown(test_add_authenticate_revoke, setup, teardown),
		cmocka_unit_test_setup_teardown(test_operator_only_and_audited, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
