/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A connector's JSON-RPC error as the client gets it (rpc-error.h): code and
 * message unchanged within bounds, data unchanged within bounds, cordon's
 * markers out of the connector's reach, malformed errors refused. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>

#include "canon.h"
#include "rpc-error.h"

/* Decodes text with canon (as the worker does) and relays it. */
static int relay(const char *text, json_t **ret, struct cordon_diag *d)
{
	json_t *e = NULL;
	int r;

	memset(d, 0, sizeof(*d));
	assert_int_equal(cordon_canon_decode(text, strlen(text), NULL, &e, d), 0);
	r = cordon_rpc_error_relay(e, ret, d);
	json_decref(e);
	return r;
}

static char *dump(const json_t *v)
{
	char *t = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	assert_non_null(t);
	return t;
}

static void test_error_passes_unchanged(void **state)
{
	static const char text[] = "{\"code\":-32042,\"message\":\"quota \\u001b[31mexceeded\\u007f\\u009b!\","
				   "\"data\":{\"retry_after\":5,\"detail\":[1,\"x\",null,{\"k\":true}]}}";
	struct cordon_diag d;
	json_t *out = NULL, *want = json_loads(text, 0, NULL);

	(void)state;
	assert_non_null(want);
	assert_int_equal(relay(text, &out, &d), 0);
	assert_true(json_equal(out, want));
	assert_string_equal(json_string_value(json_object_get(out, "message")), "quota \x1b[31mexceeded\x7f\xc2\x9b!");
	json_decref(want);
	json_decref(out);
}

static void test_any_integer_code_and_no_data(void **state)
{
	static const char *const codes[] = { "0", "42", "-32603", "-32768", "9007199254740991", "-9007199254740991" };
	struct cordon_diag d;

	(void)state;
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		char text[128], *t, want[128];
		json_t *out = NULL;

		snprintf(text, sizeof(text), "{\"code\":%s,\"message\":\"m\"}", codes[i]);
		assert_int_equal(relay(text, &out, &d), 0);
		t = dump(out);
		snprintf(want, sizeof(want), "{\"code\":%s,\"message\":\"m\"}", codes[i]);
		assert_string_equal(t, want);
		free(t);
		json_decref(out);
	}
}

static void test_other_members_not_relayed(void **state)
{
	struct cordon_diag d;
	json_t *out = NULL;
	char *t;

	(void)state;
	assert_int_equal(relay("{\"code\":1,\"message\":\"m\",\"stack\":\"secret/path\",\"data\":null}", &out, &d), 0);
	t = dump(out);
	assert_string_equal(t, "{\"code\":1,\"data\":null,\"message\":\"m\"}");
	free(t);
	json_decref(out);
}

/* A message of n bytes built from the UTF-8 character ch (repeated). */
static json_t *error_with_message(const char *ch, size_t n)
{
	size_t cl = strlen(ch);
	char *m = malloc(n + 1);
	json_t *e;

	assert_non_null(m);
	for (size_t i = 0; i < n; i += cl)
		memcpy(m + i, ch, cl);
	m[n] = 0;
	e = json_pack("{s:i, s:s%}", "code", -32000, "message", m, n);
	assert_non_null(e);
	free(m);
	return e;
}

static void test_message_at_bound_kept(void **state)
{
	struct cordon_diag d = {};
	json_t *e = error_with_message("a", CORDON_RPC_ERROR_MESSAGE_MAX), *out = NULL;

	(void)state;
	assert_int_equal(cordon_rpc_error_relay(e, &out, &d), 0);
	assert_true(json_equal(json_object_get(out, "message"), json_object_get(e, "message")));
	json_decref(out);
	json_decref(e);
}

static void test_message_beyond_bound_truncated_with_marker(void **state)
{
	static const char marker[] = " [cordon: message truncated, 4097 bytes]";
	struct cordon_diag d = {};
	json_t *e = error_with_message("a", CORDON_RPC_ERROR_MESSAGE_MAX + 1), *out = NULL;
	const char *m;
	size_t n;

	(void)state;
	assert_int_equal(cordon_rpc_error_relay(e, &out, &d), 0);
	m = json_string_value(json_object_get(out, "message"));
	n = json_string_length(json_object_get(out, "message"));
	assert_int_equal(n, CORDON_RPC_ERROR_MESSAGE_MAX);
	assert_string_equal(m + n - strlen(marker), marker);
	assert_memory_equal(m, json_string_value(json_object_get(e, "message")), n - strlen(marker));
	json_decref(out);
	json_decref(e);
}

static void test_message_truncated_on_utf8_boundary(void **state)
{
	/* 3-byte characters: 4096 - 41 (marker for 10002 bytes) = 4055 is not
	 * a multiple of 3, so the cut must back up to 4053. */
	static const char marker[] = " [cordon: message truncated, 10002 bytes]";
	struct cordon_diag d = {};
	json_t *e = error_with_message("\xe2\x82\xac", 10002), *out = NULL;
	size_t n, keep;

	(void)state;
	assert_int_equal(cordon_rpc_error_relay(e, &out, &d), 0);
	n = json_string_length(json_object_get(out, "message"));
	keep = n - strlen(marker);
	assert_int_equal(keep, 4053);
	assert_int_equal(keep % 3, 0);
	assert_string_equal(json_string_value(json_object_get(out, "message")) + keep, marker);
	json_decref(out);
	json_decref(e);
}

/* data = a string of n - 2 'x' (n bytes of JSON). */
static json_t *error_with_data_bytes(size_t n)
{
	char *s = malloc(n - 1);
	json_t *e;

	assert_non_null(s);
	memset(s, 'x', n - 2);
	s[n - 2] = 0;
	e = json_pack("{s:i, s:s, s:s}", "code", 7, "message", "m", "data", s);
	free(s);
	assert_non_null(e);
	return e;
}

static void test_data_at_bound_kept(void **state)
{
	struct cordon_diag d = {};
	json_t *e = error_with_data_bytes(CORDON_RPC_ERROR_DATA_MAX), *out = NULL;

	(void)state;
	assert_int_equal(cordon_rpc_error_relay(e, &out, &d), 0);
	assert_true(json_equal(json_object_get(out, "data"), json_object_get(e, "data")));
	json_decref(out);
	json_decref(e);
}

static void test_data_beyond_bound_replaced(void **state)
{
	struct cordon_diag d = {};
	json_t *e = error_with_data_bytes(CORDON_RPC_ERROR_DATA_MAX + 1), *out = NULL;
	char *t;

	(void)state;
	assert_int_equal(cordon_rpc_error_relay(e, &out, &d), 0);
	t = dump(out);
	assert_string_equal(t, "{\"code\":7,\"data\":{\"io.cordon/data_dropped\":{\"bytes\":16385,\"limit\":16384}},"
			       "\"message\":\"m\"}");
	free(t);
	json_decref(out);
	json_decref(e);
}

static void test_connector_cannot_forge_markers(void **state)
{
	struct cordon_diag d;
	json_t *out = NULL;
	char *t;

	(void)state;
	assert_int_equal(relay("{\"code\":-32001,\"message\":\"refused\",\"data\":{\"io.cordon/refused_by\":\"cordon\","
			       "\"io.cordon/data_dropped\":{\"bytes\":1},\"io.cordon/other\":1,\"x\":{\"io.cordon/"
			       "refused_by\":\"cordon\"}}}",
			       &out, &d),
			 0);
	t = dump(out);
	/* Only cordon's two markers at the top level go. */
	assert_string_equal(t, "{\"code\":-32001,\"data\":{\"io.cordon/other\":1,\"x\":{\"io.cordon/refused_by\":"
			       "\"cordon\"}},\"message\":\"refused\"}");
	free(t);
	json_decref(out);
	/* Any JSON value is data; non-objects are left alone. */
	assert_int_equal(relay("{\"code\":1,\"message\":\"m\",\"data\":[\"io.cordon/refused_by\"]}", &out, &d), 0);
	t = dump(out);
	assert_string_equal(t, "{\"code\":1,\"data\":[\"io.cordon/refused_by\"],\"message\":\"m\"}");
	free(t);
	json_decref(out);
}

static void test_strip_markers_from_result_meta(void **state)
{
	json_t *meta = json_pack("{s:s, s:i, s:s}", "io.cordon/refused_by", "cordon", "progress", 3,
				 "io.cordon/connector", "x");
	char *t;

	(void)state;
	cordon_rpc_strip_markers(meta);
	t = dump(meta);
	assert_string_equal(t, "{\"io.cordon/connector\":\"x\",\"progress\":3}");
	free(t);
	json_decref(meta);
	cordon_rpc_strip_markers(NULL);
}

static void test_malformed_errors_refused(void **state)
{
	static const struct {
		const char *text, *message;
	} cases[] = {
		{ "\"boom\"", "error is not an object" },
		{ "[1]", "error is not an object" },
		{ "null", "error is not an object" },
		{ "{\"message\":\"m\"}", "error.code is not an integer" },
		{ "{\"code\":\"-32000\",\"message\":\"m\"}", "error.code is not an integer" },
		{ "{\"code\":-32000.5,\"message\":\"m\"}", "error.code is not an integer" },
		{ "{\"code\":1}", "error.message is not a string" },
		{ "{\"code\":1,\"message\":{\"text\":\"m\"}}", "error.message is not a string" },
		{ "{\"code\":1,\"message\":null}", "error.message is not a string" },
	};
	struct cordon_diag d;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *out = (json_t *)&d; /* must stay untouched */

		assert_int_equal(relay(cases[i].text, &out, &d), -EBADMSG);
		assert_int_equal(d.error, EBADMSG);
		assert_string_equal(d.step, "rpc-error");
		assert_string_equal(d.message, cases[i].message);
		assert_ptr_equal(out, (json_t *)&d);
	}
}

static void escaped(const char *in, const char *want)
{
	size_t n = 0;
	char *out = cordon_json_escape_controls(in, strlen(in), &n);
	json_t *a, *b;

	assert_non_null(out);
	assert_string_equal(out, want);
	assert_int_equal(n, strlen(want));
	/* The same JSON value. */
	a = json_loads(in, JSON_DECODE_ANY, NULL);
	b = json_loads(out, JSON_DECODE_ANY, NULL);
	assert_non_null(a);
	assert_non_null(b);
	assert_true(json_equal(a, b));
	json_decref(a);
	json_decref(b);
	free(out);
}

static void test_escape_controls(void **state)
{
	(void)state;
	escaped("\"a\x7f"
		"b\"",
		"\"a\\u007fb\"");
	escaped("{\"m\":\"\xc2\x9b"
		"31m\xc2\x80\xc2\x9f\"}",
		"{\"m\":\"\\u009b31m\\u0080\\u009f\"}");
	/* Printable non-ASCII stays as it is (U+00A0, U+00E9, U+20AC). */
	escaped("\"\xc2\xa0\xc3\xa9\xe2\x82\xac\"", "\"\xc2\xa0\xc3\xa9\xe2\x82\xac\"");
	escaped("\"plain\"", "\"plain\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_passes_unchanged),
		cmocka_unit_test(test_any_integer_code_and_no_data),
		cmocka_unit_test(test_other_members_not_relayed),
		cmocka_unit_test(test_message_at_bound_kept),
		cmocka_unit_test(test_message_beyond_bound_truncated_with_marker),
		cmocka_unit_test(test_message_truncated_on_utf8_boundary),
		cmocka_unit_test(test_data_at_bound_kept),
		cmocka_unit_test(test_data_beyond_bound_replaced),
		cmocka_unit_test(test_connector_cannot_forge_markers),
		cmocka_unit_test(test_strip_markers_from_result_meta),
		cmocka_unit_test(test_malformed_errors_refused),
		cmocka_unit_test(test_escape_controls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
