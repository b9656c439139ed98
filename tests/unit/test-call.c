/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tools/call params: name, canonical arguments, the gateway's idempotency key. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>

#include "call.h"
#include "canon.h"

static int parse(const char *json, struct cordon_tool_call *c, struct cordon_diag *d)
{
	json_t *p = NULL;
	int r;

	memset(d, 0, sizeof(*d));
	assert_int_equal(cordon_canon_decode(json, strlen(json), NULL, &p, d), 0);
	r = cordon_tool_call_parse(p, c, d);
	json_decref(p);
	return r;
}

static void test_arguments_canonicalised(void **state)
{
	struct cordon_tool_call c;
	struct cordon_diag d;

	(void)state;
	assert_int_equal(parse("{\"name\":\"write_file\",\"arguments\":{\"b\":[1,2.50],\"a\":\"x\"}}", &c, &d), 0);
	assert_string_equal(c.name, "write_file");
	assert_string_equal(c.arguments_jcs, "{\"a\":\"x\",\"b\":[1,2.5]}");
	assert_int_equal(c.arguments_jcs_len, strlen(c.arguments_jcs));
	assert_null(c.idempotency_key);
	cordon_tool_call_done(&c);
}

static void test_absent_arguments_are_empty_object(void **state)
{
	struct cordon_tool_call c;
	struct cordon_diag d;

	(void)state;
	assert_int_equal(parse("{\"name\":\"list\"}", &c, &d), 0);
	assert_string_equal(c.arguments_jcs, "{}");
	cordon_tool_call_done(&c);
}

static void test_null_or_array_arguments_refused(void **state)
{
	struct cordon_tool_call c;
	struct cordon_diag d;

	(void)state;
	assert_int_equal(parse("{\"name\":\"list\",\"arguments\":null}", &c, &d), -EINVAL);
	assert_int_equal(parse("{\"name\":\"list\",\"arguments\":[1]}", &c, &d), -EINVAL);
}

static void test_invalid_name_refused(void **state)
{
	struct cordon_tool_call c;
	struct cordon_diag d;

	(void)state;
	assert_int_equal(parse("{\"arguments\":{}}", &c, &d), -EINVAL);
	assert_int_equal(parse("{\"name\":\"a b\"}", &c, &d), -EINVAL);
	assert_int_equal(parse("{\"name\":7}", &c, &d), -EINVAL);
	assert_non_null(strstr(d.message, "params.name"));
}

static void test_idempotency_key_from_meta(void **state)
{
	struct cordon_tool_call c;
	struct cordon_diag d;

	(void)state;
	assert_int_equal(
		parse("{\"name\":\"w\",\"_meta\":{\"io.cordon/idempotency-key\":\"gw-42\",\"other\":1}}", &c, &d), 0);
	assert_string_equal(c.idempotency_key, "gw-42");
	cordon_tool_call_done(&c);
	/* The key inside the arguments is just an argument: the model cannot set it. */
	assert_int_equal(
		parse("{\"name\":\"w\",\"arguments\":{\"_meta\":{\"io.cordon/idempotency-key\":\"x\"}}}", &c, &d), 0);
	assert_null(c.idempotency_key);
	cordon_tool_call_done(&c);
}

static void test_invalid_idempotency_key_refused(void **state)
{
	struct cordon_tool_call c;
	struct cordon_diag d;

	(void)state;
	assert_int_equal(parse("{\"name\":\"w\",\"_meta\":{\"io.cordon/idempotency-key\":7}}", &c, &d), -EINVAL);
	assert_int_equal(parse("{\"name\":\"w\",\"_meta\":{\"io.cordon/idempotency-key\":\"a b\"}}", &c, &d), -EINVAL);
	assert_int_equal(parse("{\"name\":\"w\",\"_meta\":{\"io.cordon/idempotency-key\":\"\"}}", &c, &d), -EINVAL);
	assert_int_equal(parse("{\"name\":\"w\",\"_meta\":[]}", &c, &d), -EINVAL);
}

static void test_inadmissible_value_built_in_memory_refused(void **state)
{
	struct cordon_tool_call c;
	struct cordon_diag d = {};
	json_t *p = json_pack("{s:s, s:{s:I}}", "name", "w", "arguments", "big", (json_int_t)9007199254740993LL);

	(void)state;
	assert_int_equal(cordon_tool_call_parse(p, &c, &d), -ERANGE);
	json_decref(p);
}

/* A whole tools/call message decoded with the arguments lifted out as
 * canonical bytes (the gateway's path): the same call as through the tree. */
static void test_lifted_arguments(void **state)
{
	static const char *const msgs[] = {
		("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\","
		 "\"arguments\":{\"b\":[1,2.50],\"a\":\"\\u0078\"},\"_meta\":{\"io.cordon/"
		 "idempotency-key\":\"k-1\"}}}"),
		"{\"params\":{\"arguments\":{},\"name\":\"list\"}}",
		"{\"params\":{\"name\":\"list\"}}",
		"{\"params\":{\"name\":\"list\",\"arguments\":null}}",
		"{\"params\":{\"name\":\"bad name\",\"arguments\":{\"a\":1}}}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		struct cordon_canon_lifted l;
		struct cordon_tool_call a = {}, b = {};
		struct cordon_diag da = {}, db = {};
		json_t *tree = NULL, *msg = NULL;
		int ra, rb;

		assert_int_equal(cordon_canon_decode(msgs[i], strlen(msgs[i]), NULL, &tree, NULL), 0);
		ra = cordon_tool_call_parse(json_object_get(tree, "params"), &a, &da);
		assert_int_equal(cordon_canon_decode_lifted(msgs[i], strlen(msgs[i]), NULL, "params", "arguments", &msg,
							    &l, NULL),
				 0);
		/* Lifted exactly when arguments is an object. */
		assert_int_equal(l.jcs != NULL, i < 2 || i == 4);
		rb = cordon_tool_call_parse_lifted(json_object_get(msg, "params"), &l.jcs, l.jcs_len, &b, &db);
		assert_null(l.jcs); /* consumed, whatever the outcome */
		assert_int_equal(ra, rb);
		assert_string_equal(da.message, db.message);
		if (ra == 0) {
			assert_string_equal(a.name, b.name);
			assert_int_equal(a.arguments_jcs_len, b.arguments_jcs_len);
			assert_memory_equal(a.arguments_jcs, b.arguments_jcs, a.arguments_jcs_len);
			assert_int_equal(b.arguments_jcs[b.arguments_jcs_len], 0);
			if (a.idempotency_key)
				assert_string_equal(a.idempotency_key, b.idempotency_key);
			else
				assert_null(b.idempotency_key);
		}
		cordon_tool_call_done(&a);
		cordon_tool_call_done(&b);
		cordon_canon_lifted_done(&l);
		json_decref(tree);
		json_decref(msg);
	}

	/* Lifted bytes and an "arguments" still in params: refused. */
	{
		struct cordon_tool_call c = {};
		struct cordon_diag d = {};
		json_t *p = json_pack("{s:s, s:{}}", "name", "w", "arguments");
		char *jcs = strdup("{}");

		assert_int_equal(cordon_tool_call_parse_lifted(p, &jcs, 2, &c, &d), -EINVAL);
		assert_null(jcs);
		assert_string_equal(d.message, "params.arguments given twice");
		json_decref(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arguments_canonicalised),
		cmocka_unit_test(test_absent_arguments_are_empty_object),
		cmocka_unit_test(test_null_or_array_arguments_refused),
		cmocka_unit_test(test_invalid_name_refused),
		cmocka_unit_test(test_idempotency_key_from_meta),
		cmocka_unit_test(test_invalid_idempotency_key_refused),
		cmocka_unit_test(test_inadmissible_value_built_in_memory_refused),
		cmocka_unit_test(test_lifted_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
