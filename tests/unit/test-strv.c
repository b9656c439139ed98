/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* launcher/basic/strv.c: NULL-terminated string arrays. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strv.h"

static void test_strv_length(void **state)
{
	char *v[] = { "a", "bb", "ccc", NULL };
	char *empty[] = { NULL };

	assert_int_equal(strv_length(v), 3);
	assert_int_equal(strv_length(empty), 0);
	assert_int_equal(strv_length(NULL), 0);
}

static void test_strv_dup_is_deep(void **state)
{
	char *v[] = { "x", "yz", NULL };
	_cleanup_strv_free_ char **c = strv_dup(v);

	assert_non_null(c);
	assert_int_equal(strv_length(c), 2);
	assert_string_equal(c[0], "x");
	assert_string_equal(c[1], "yz");
	assert_null(c[2]);
	assert_ptr_not_equal(c[0], v[0]);
	assert_ptr_not_equal(c[1], v[1]);
}

static void test_strv_dup_null_is_empty(void **state)
{
	char **c = strv_dup(NULL);

	assert_non_null(c);
	assert_null(c[0]);
	assert_int_equal(strv_length(c), 0);
	strv_free(c);
}

static void test_strv_contains(void **state)
{
	char *v[] = { "read_file", "write_file", NULL };

	assert_true(strv_contains(v, "read_file"));
	assert_true(strv_contains(v, "write_file"));
	assert_false(strv_contains(v, "read"));
	assert_false(strv_contains(v, ""));
	assert_false(strv_contains(NULL, "read_file"));
}

static void test_strv_contains_n_skips_null_slots(void **state)
{
	char *v[] = { "a", NULL, "c" };

	assert_true(strv_contains_n(v, 3, "a"));
	assert_true(strv_contains_n(v, 3, "c"));
	assert_false(strv_contains_n(v, 2, "c"));
	assert_false(strv_contains_n(v, 0, "a"));
	assert_false(strv_contains_n(NULL, 3, "a"));
}

static void test_strv_free_n_and_null(void **state)
{
	char **v = calloc(3, sizeof(char *));

	assert_non_null(v);
	v[0] = strdup("one");
	v[2] = strdup("three"); /* slot 1 stays NULL */
	strv_free_n(v, 3);
	strv_free_n(NULL, 3);
	strv_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strv_length),
		cmocka_unit_test(test_strv_dup_is_deep),
		cmocka_unit_test(test_strv_dup_null_is_empty),
		cmocka_unit_test(test_strv_contains),
		cmocka_unit_test(test_strv_contains_n_skips_null_slots),
		cmocka_unit_test(test_strv_free_n_and_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
