/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The strict scalar parsers the profile loader is built on. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "parse-util.h"

static void test_parse_u64(void **state)
{
	uint64_t v = 7;

	assert_int_equal(parse_u64("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_u64("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	v = 7;
	assert_int_equal(parse_u64("18446744073709551616", &v), -ERANGE);
	assert_int_equal(parse_u64("", &v), -EINVAL);
	assert_int_equal(parse_u64(NULL, &v), -EINVAL);
	assert_int_equal(parse_u64(" 1", &v), -EINVAL);
	assert_int_equal(parse_u64("+1", &v), -EINVAL);
	assert_int_equal(parse_u64("-1", &v), -EINVAL);
	assert_int_equal(parse_u64("1 ", &v), -EINVAL);
	assert_int_equal(parse_u64("0x10", &v), -EINVAL);
	/* ret is written only on success */
	assert_int_equal(v, 7);
}

static void test_parse_size(void **state)
{
	uint64_t v = 3;

	assert_int_equal(parse_size("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_size("512", &v), 0);
	assert_int_equal(v, 512);
	assert_int_equal(parse_size("1K", &v), 0);
	assert_int_equal(v, 1024);
	assert_int_equal(parse_size("64M", &v), 0);
	assert_int_equal(v, 64ULL << 20);
	assert_int_equal(parse_size("16G", &v), 0);
	assert_true(v == 16ULL << 30);
	/* (2^34 - 1) G is the largest G value that fits; 2^34 G is 2^64. */
	assert_int_equal(parse_size("17179869183G", &v), 0);
	assert_true(v == ((1ULL << 34) - 1) << 30);
	v = 3;
	assert_int_equal(parse_size("17179869184G", &v), -ERANGE);
	assert_int_equal(parse_size("99999999999999999999", &v), -ERANGE);
	assert_int_equal(parse_size("64m", &v), -EINVAL); /* suffixes are upper case */
	assert_int_equal(parse_size("64MB", &v), -EINVAL);
	assert_int_equal(parse_size("64 M", &v), -EINVAL);
	assert_int_equal(parse_size("M", &v), -EINVAL);
	assert_int_equal(parse_size("1.5G", &v), -EINVAL);
	assert_int_equal(parse_size("64T", &v), -EINVAL);
	assert_int_equal(parse_size("", &v), -EINVAL);
	assert_int_equal(v, 3);
}

static void test_parse_duration_sec(void **state)
{
	uint64_t v = 9;

	assert_int_equal(parse_duration_sec("1s", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(parse_duration_sec("120s", &v), 0);
	assert_int_equal(v, 120);
	assert_int_equal(parse_duration_sec("5m", &v), 0);
	assert_int_equal(v, 300);
	assert_int_equal(parse_duration_sec("24h", &v), 0);
	assert_int_equal(v, 86400);
	assert_int_equal(parse_duration_sec("0s", &v), 0);
	assert_int_equal(v, 0);
	v = 9;
	/* the unit is mandatory: "120" could mean anything */
	assert_int_equal(parse_duration_sec("120", &v), -EINVAL);
	assert_int_equal(parse_duration_sec("2d", &v), -EINVAL);
	assert_int_equal(parse_duration_sec("1h30m", &v), -EINVAL);
	assert_int_equal(parse_duration_sec("1.5h", &v), -EINVAL);
	assert_int_equal(parse_duration_sec("s", &v), -EINVAL);
	assert_int_equal(parse_duration_sec("-1s", &v), -EINVAL);
	assert_int_equal(parse_duration_sec("5124095576030432h", &v), -ERANGE);
	assert_int_equal(v, 9);
}

static void test_parse_decimal_micro(void **state)
{
	uint64_t v = 5;

	assert_int_equal(parse_decimal_micro("0.5", &v), 0);
	assert_int_equal(v, 500000);
	assert_int_equal(parse_decimal_micro("2", &v), 0);
	assert_int_equal(v, 2000000);
	assert_int_equal(parse_decimal_micro("0.01", &v), 0);
	assert_int_equal(v, 10000);
	assert_int_equal(parse_decimal_micro("1024.000001", &v), 0);
	assert_int_equal(v, 1024000001);
	assert_int_equal(parse_decimal_micro("0.000001", &v), 0);
	assert_int_equal(v, 1);
	v = 5;
	assert_int_equal(parse_decimal_micro("0.0000001", &v), -EINVAL); /* 7 decimals */
	assert_int_equal(parse_decimal_micro(".5", &v), -EINVAL);
	assert_int_equal(parse_decimal_micro("5.", &v), -EINVAL);
	assert_int_equal(parse_decimal_micro("1e3", &v), -EINVAL);
	assert_int_equal(parse_decimal_micro("-0.5", &v), -EINVAL);
	assert_int_equal(parse_decimal_micro("0,5", &v), -EINVAL);
	assert_int_equal(parse_decimal_micro("", &v), -EINVAL);
	assert_int_equal(parse_decimal_micro("18446744073709.551616", &v), -ERANGE);
	assert_int_equal(v, 5);
}

static void test_connector_id_is_valid(void **state)
{
	assert_true(connector_id_is_valid("github"));
	assert_true(connector_id_is_valid("x-posting"));
	assert_true(connector_id_is_valid("0"));
	assert_true(connector_id_is_valid("a-"));
	assert_true(connector_id_is_valid("abcdefghijklmnopqrstuvwxyz012345"));	  /* 32 */
	assert_false(connector_id_is_valid("abcdefghijklmnopqrstuvwxyz0123456")); /* 33 */
	assert_false(connector_id_is_valid(""));
	assert_false(connector_id_is_valid(NULL));
	assert_false(connector_id_is_valid("-a"));
	assert_false(connector_id_is_valid("GitHub"));
	assert_false(connector_id_is_valid("x_posting"));
	assert_false(connector_id_is_valid("a.yaml"));
	assert_false(connector_id_is_valid("a/b"));
	assert_false(connector_id_is_valid("a b"));
	assert_false(connector_id_is_valid("caf\xc3\xa9"));
}

static void test_path_is_absolute_canonical(void **state)
{
	char long_path[PATH_MAX + 2];

	assert_true(path_is_absolute_canonical("/"));
	assert_true(path_is_absolute_canonical("/usr"));
	assert_true(path_is_absolute_canonical("/srv/projects/demo"));
	assert_true(path_is_absolute_canonical("/a/.hidden/..x/x.."));
	assert_false(path_is_absolute_canonical(NULL));
	assert_false(path_is_absolute_canonical(""));
	assert_false(path_is_absolute_canonical("usr"));
	assert_false(path_is_absolute_canonical("../x"));
	assert_false(path_is_absolute_canonical("./x"));
	assert_false(path_is_absolute_canonical("/usr/"));
	assert_false(path_is_absolute_canonical("//usr"));
	assert_false(path_is_absolute_canonical("/usr//lib"));
	assert_false(path_is_absolute_canonical("/usr/./lib"));
	assert_false(path_is_absolute_canonical("/usr/../etc"));
	assert_false(path_is_absolute_canonical("/.."));
	assert_false(path_is_absolute_canonical("/."));
	assert_false(path_is_absolute_canonical("/a\nb"));
	assert_false(path_is_absolute_canonical("/a\x7f"
						"b"));

	/* PATH_MAX - 1 bytes is the longest accepted. */
	memset(long_path, 'a', sizeof(long_path));
	long_path[0] = '/';
	long_path[PATH_MAX - 1] = '\0';
	assert_true(path_is_absolute_canonical(long_path));
	long_path[PATH_MAX - 1] = 'a';
	long_path[PATH_MAX] = '\0';
	assert_false(path_is_absolute_canonical(long_path));
}

static void test_path_is_beneath(void **state)
{
	assert_true(path_is_beneath("/work", "/work"));
	assert_true(path_is_beneath("/work/a/b", "/work"));
	assert_true(path_is_beneath("/anything", "/"));
	assert_true(path_is_beneath("/", "/"));
	/* whole components: a shared prefix is not enough */
	assert_false(path_is_beneath("/work-evil", "/work"));
	assert_false(path_is_beneath("/workx/a", "/work"));
	assert_false(path_is_beneath("/wor", "/work"));
	assert_false(path_is_beneath("/srv", "/srv/projects"));
	assert_false(path_is_beneath("/etc", "/work"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_parse_duration_sec),
		cmocka_unit_test(test_parse_decimal_micro),
		cmocka_unit_test(test_connector_id_is_valid),
		cmocka_unit_test(test_path_is_absolute_canonical),
		cmocka_unit_test(test_path_is_beneath),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
