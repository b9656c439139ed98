/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* broker/daemon/gateway-names.c: tool and prompt names in the multiplexed
 * view (`<connector>__<item>`) and in a session bound to one connector (the
 * connector's own names). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gateway-names.h"

static void test_route_multiplexed(void **state)
{
	char conn[CORDON_CONNECTOR_ID_MAX + 1];
	const char *item = NULL;

	(void)state;
	assert_int_equal(gateway_name_route(NULL, "fake__echo", conn, &item), 0);
	assert_string_equal(conn, "fake");
	assert_string_equal(item, "echo");
	/* "" is the multiplexed view too. */
	assert_int_equal(gateway_name_route("", "fake__echo", conn, &item), 0);
	assert_string_equal(conn, "fake");
	/* The first "__" splits: a tool name may hold "__" itself. */
	assert_int_equal(gateway_name_route(NULL, "fs__read__all", conn, &item), 0);
	assert_string_equal(conn, "fs");
	assert_string_equal(item, "read__all");
	/* No prefix, an empty connector or item, nothing: not found. */
	assert_int_equal(gateway_name_route(NULL, "echo", conn, &item), -ENOENT);
	assert_int_equal(gateway_name_route(NULL, "__echo", conn, &item), -ENOENT);
	assert_int_equal(gateway_name_route(NULL, "fake__", conn, &item), -ENOENT);
	assert_int_equal(gateway_name_route(NULL, "", conn, &item), -ENOENT);
	assert_int_equal(gateway_name_route(NULL, NULL, conn, &item), -ENOENT);
}

static void test_route_multiplexed_connector_length(void **state)
{
	char conn[CORDON_CONNECTOR_ID_MAX + 1], name[128];
	const char *item = NULL;

	(void)state;
	memset(name, 'c', CORDON_CONNECTOR_ID_MAX);
	strcpy(name + CORDON_CONNECTOR_ID_MAX, "__t");
	assert_int_equal(gateway_name_route(NULL, name, conn, &item), 0);
	assert_int_equal(strlen(conn), CORDON_CONNECTOR_ID_MAX);
	assert_string_equal(item, "t");
	memset(name, 'c', CORDON_CONNECTOR_ID_MAX + 1);
	strcpy(name + CORDON_CONNECTOR_ID_MAX + 1, "__t");
	assert_int_equal(gateway_name_route(NULL, name, conn, &item), -ENOENT);
}

static void test_route_bound(void **state)
{
	char conn[CORDON_CONNECTOR_ID_MAX + 1];
	const char *item = NULL;

	(void)state;
	assert_int_equal(gateway_name_route("fake", "echo", conn, &item), 0);
	assert_string_equal(conn, "fake");
	assert_string_equal(item, "echo");
	/* A prefixed name is the bound connector's tool of that whole name
	 * (which the caller then does not find): never another connector. */
	assert_int_equal(gateway_name_route("fake", "other__echo", conn, &item), 0);
	assert_string_equal(conn, "fake");
	assert_string_equal(item, "other__echo");
	assert_int_equal(gateway_name_route("fake", "fake__echo", conn, &item), 0);
	assert_string_equal(conn, "fake");
	assert_string_equal(item, "fake__echo");
	/* The broker's tool names are not special in a bound view. */
	assert_int_equal(gateway_name_route("fake", "cordon__approval_status", conn, &item), 0);
	assert_string_equal(conn, "fake");
	assert_int_equal(gateway_name_route("fake", "", conn, &item), -ENOENT);
	assert_int_equal(gateway_name_route("fake", NULL, conn, &item), -ENOENT);
}

static void test_show(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(gateway_name_show(NULL, "fake", "echo", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "fake__echo");
	assert_int_equal(gateway_name_show("", "fake", "echo", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "fake__echo");
	assert_int_equal(gateway_name_show("fake", "fake", "echo", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "echo");
	/* Too long: refused, never truncated into another name. */
	assert_int_equal(gateway_name_show(NULL, "fake", "echo", buf, 10), -ENAMETOOLONG);
	assert_string_equal(buf, "");
	assert_int_equal(gateway_name_show("fake", "fake", "echo", buf, 4), -ENAMETOOLONG);
	assert_string_equal(buf, "");
}

static void test_round_trip(void **state)
{
	static const char *const items[] = { "echo", "read__all", "a.b-c_d" };
	char conn[CORDON_CONNECTOR_ID_MAX + 1], buf[256];
	const char *item = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
		for (int bound = 0; bound < 2; bound++) {
			const char *b = bound ? "fs" : NULL;

			assert_int_equal(gateway_name_show(b, "fs", items[i], buf, sizeof(buf)), 0);
			assert_int_equal(gateway_name_route(b, buf, conn, &item), 0);
			assert_string_equal(conn, "fs");
			assert_string_equal(item, items[i]);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_multiplexed), cmocka_unit_test(test_route_multiplexed_connector_length),
		cmocka_unit_test(test_route_bound),	  cmocka_unit_test(test_show),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
