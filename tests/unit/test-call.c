/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tools/call params: name, canonical arguments, the gateway's idempotency key. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
