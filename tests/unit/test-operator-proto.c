/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The operator protocol codec: every malformed request gets its exact error
 * code and a message naming what is wrong; the id is echoed when readable. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cleanup.h"
#include "operator-proto.h"

/* Decodes s; asserts failure with code and (if non-NULL) a message
 * fragment; returns the echoed id or -1. */
static long long refuse(const char *s, size_t len, int err, const char *code, const char *fragment)
{
	struct cordon_op_request req;
	struct cordon_op_error e = {};
	long long id;
	int r = cordon_op_request_decode(s, len, &req, &e);

	if (r != -err)
		fail_msg("%s: returned %d, want %d (%s: %s)", s, r, -err, e.code, e.message);
	assert_non_null(e.code);
	if (strcmp(e.code, code) != 0)
		fail_msg("%.200s: code %s, want %s (%s)", s, e.code, code, e.message);
	if (fragment && !strstr(e.message, fragment))
		fail_msg("%.200s: message \"%s\" lacks \"%s\"", s, e.message, fragment);
	assert_null(req.op);
	assert_null(req.args);
	id = req.id ? (long long)json_integer_value(req.id) : -1;
	cordon_op_request_done(&req);
	return id;
}

#define REFUSE(s, err, code, frag) refuse((s), strlen(s), (err), (code), (frag))

static void test_not_json(void **state)
{
	(void)state;
	REFUSE("", EINVAL, CORDON_OP_E_PARSE, "not admissible JSON");
	REFUSE("hello", EINVAL, CORDON_OP_E_PARSE, "line 1");
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"status\"} {}", EINVAL, CORDON_OP_E_PARSE, NULL);
	REFUSE("{\"v\":1,\"v\":1,\"id\":1,\"op\":\"status\"}", EINVAL, CORDON_OP_E_PARSE, "duplicate");
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"stat\xffus\"}", EINVAL, CORDON_OP_E_PARSE, NULL);
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"status\\u0000\"}", EINVAL, CORDON_OP_E_PARSE, NULL);
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"\\ud800\"}", EINVAL, CORDON_OP_E_PARSE, NULL);
	REFUSE("{\"v\":1,\"id\":9007199254740992,\"op\":\"status\"}", EINVAL, CORDON_OP_E_PARSE, NULL);
	/* depth 9 > 8 */
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"status\",\"args\":{\"a\":[[[[[[[1]]]]]]]}}", EINVAL, CORDON_OP_E_PARSE,
	       "deep");
	/* a NUL byte inside the line */
	assert_int_equal(refuse("{\"v\":1,\0\"id\":1}", 15, EINVAL, CORDON_OP_E_PARSE, NULL), -1);
}

static void test_too_large(void **state)
{
	size_t n = CORDON_OP_MAX_REQUEST + 1;
	_cleanup_free_ char *big = malloc(n);
	char *p;

	(void)state;
	assert_non_null(big);
	p = big + sprintf(big, "{\"v\":1,\"id\":1,\"op\":\"status\",\"args\":{\"x\":\"");
	memset(p, 'a', n - (size_t)(p - big) - 3);
	memcpy(big + n - 3, "\"}}", 3);
	refuse(big, n, EMSGSIZE, CORDON_OP_E_TOO_LARGE, "1048576");
}

static void test_envelope(void **state)
{
	(void)state;
	REFUSE("[]", EINVAL, CORDON_OP_E_INVALID, "must be a JSON object");
	REFUSE("1", EINVAL, CORDON_OP_E_INVALID, "must be a JSON object");
	REFUSE("{\"id\":1,\"op\":\"status\"}", EINVAL, CORDON_OP_E_INVALID, "no member \"v\"");
	assert_int_equal(REFUSE("{\"v\":2,\"id\":5,\"op\":\"status\"}", EPROTO, CORDON_OP_E_VERSION, "version"), 5);
	REFUSE("{\"v\":\"1\",\"id\":5,\"op\":\"status\"}", EPROTO, CORDON_OP_E_VERSION, NULL);
	REFUSE("{\"v\":1.0,\"id\":5,\"op\":\"status\"}", EPROTO, CORDON_OP_E_VERSION, NULL);
	REFUSE("{\"v\":1,\"op\":\"status\"}", EINVAL, CORDON_OP_E_INVALID, "no member \"id\"");
	assert_int_equal(REFUSE("{\"v\":1,\"id\":-1,\"op\":\"status\"}", EINVAL, CORDON_OP_E_INVALID, "non-negative"),
			 -1);
	REFUSE("{\"v\":1,\"id\":\"1\",\"op\":\"status\"}", EINVAL, CORDON_OP_E_INVALID, "non-negative");
	REFUSE("{\"v\":1,\"id\":1.5,\"op\":\"status\"}", EINVAL, CORDON_OP_E_INVALID, "non-negative");
	REFUSE("{\"v\":1,\"id\":null,\"op\":\"status\"}", EINVAL, CORDON_OP_E_INVALID, "non-negative");
	assert_int_equal(REFUSE("{\"v\":1,\"id\":3}", EINVAL, CORDON_OP_E_INVALID, "no member \"op\""), 3);
	REFUSE("{\"v\":1,\"id\":3,\"op\":5}", EINVAL, CORDON_OP_E_INVALID, "\"op\" must be a string");
	assert_int_equal(REFUSE("{\"v\":1,\"id\":3,\"op\":\"status\",\"extra\":1}", EINVAL, CORDON_OP_E_INVALID,
				"unknown member \"extra\""),
			 3);
	REFUSE("{\"v\":1,\"id\":3,\"op\":\"status\",\"args\":[]}", EINVAL, CORDON_OP_E_INVALID,
	       "\"args\" must be an object");
	REFUSE("{\"v\":1,\"id\":3,\"op\":\"status\",\"args\":null}", EINVAL, CORDON_OP_E_INVALID, NULL);
}

static void test_unknown_op(void **state)
{
	(void)state;
	assert_int_equal(REFUSE("{\"v\":1,\"id\":42,\"op\":\"approvals.yolo\"}", ENOSYS, CORDON_OP_E_UNKNOWN_OP,
				"unknown op \"approvals.yolo\""),
			 42);
	REFUSE("{\"v\":1,\"id\":42,\"op\":\"\"}", ENOSYS, CORDON_OP_E_UNKNOWN_OP, NULL);
	REFUSE("{\"v\":1,\"id\":42,\"op\":\"STATUS\"}", ENOSYS, CORDON_OP_E_UNKNOWN_OP, NULL);
	/* the gateway's methods are not operator ops */
	REFUSE("{\"v\":1,\"id\":42,\"op\":\"tools/call\"}", ENOSYS, CORDON_OP_E_UNKNOWN_OP, NULL);
}

static void test_arguments(void **state)
{
	(void)state;
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"approvals.list\",\"args\":{\"bogus\":1}}", EINVAL, CORDON_OP_E_UNKNOWN_ARG,
	       "unknown argument \"bogus\" for approvals.list (allowed: all, connector)");
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"status\",\"args\":{\"x\":1}}", EINVAL, CORDON_OP_E_UNKNOWN_ARG,
	       "(allowed: none)");
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"approvals.approve\"}", EINVAL, CORDON_OP_E_MISSING_ARG,
	       "missing argument \"id\" for approvals.approve");
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"grants.add\",\"args\":{\"connector\":\"fs\"}}", EINVAL,
	       CORDON_OP_E_MISSING_ARG, "missing argument \"tool\"");
	/* an unknown name is reported before a missing one */
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"grants.add\",\"args\":{\"connectr\":\"fs\"}}", EINVAL,
	       CORDON_OP_E_UNKNOWN_ARG, "connectr");
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"grants.show\",\"args\":{\"connector\":5}}", EINVAL, CORDON_OP_E_BAD_ARG,
	       "argument \"connector\" of grants.show must be a string");
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"grants.show\",\"args\":{\"connector\":\"\"}}", EINVAL, CORDON_OP_E_BAD_ARG,
	       "must not be empty");
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"approvals.list\",\"args\":{\"all\":1}}", EINVAL, CORDON_OP_E_BAD_ARG,
	       "must be a boolean");
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"audit.tail\",\"args\":{\"count\":-1}}", EINVAL, CORDON_OP_E_BAD_ARG,
	       "integer from 0 to 1000");
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"audit.tail\",\"args\":{\"count\":1001}}", EINVAL, CORDON_OP_E_BAD_ARG, NULL);
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"audit.tail\",\"args\":{\"count\":2.0}}", EINVAL, CORDON_OP_E_BAD_ARG, NULL);
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"grants.set\",\"args\":{\"connector\":\"fs\",\"tools\":\"a\"}}", EINVAL,
	       CORDON_OP_E_BAD_ARG, "must be an array of strings");
	REFUSE("{\"v\":1,\"id\":1,\"op\":\"grants.set\",\"args\":{\"connector\":\"fs\",\"tools\":[\"a\",1]}}", EINVAL,
	       CORDON_OP_E_BAD_ARG, "element 1 of argument \"tools\"");
	{
		char big[8192];
		int n = snprintf(big, sizeof(big),
				 "{\"v\":1,\"id\":1,\"op\":\"grants.show\",\"args\":{\"connector\":\"");

		memset(big + n, 'a', 4097);
		strcpy(big + n + 4097, "\"}}");
		REFUSE(big, EINVAL, CORDON_OP_E_BAD_ARG, "longer than 4096 bytes");
	}
	{
		/* 1025 list elements */
		size_t cap = 16384, off;
		_cleanup_free_ char *big = malloc(cap);

		assert_non_null(big);
		off = (size_t)sprintf(
			big, "{\"v\":1,\"id\":1,\"op\":\"grants.set\",\"args\":{\"connector\":\"fs\",\"tools\":[");
		for (int i = 0; i < 1025; i++)
			off += (size_t)sprintf(big + off, "%s\"t\"", i ? "," : "");
		strcpy(big + off, "]}}");
		REFUSE(big, EINVAL, CORDON_OP_E_BAD_ARG, "more than 1024 elements");
	}
}

static void test_valid(void **state)
{
	struct cordon_op_request req;
	struct cordon_op_error e = {};
	const char *s;

	(void)state;
	s = "{\"v\":1,\"id\":0,\"op\":\"status\"}";
	assert_int_equal(cordon_op_request_decode(s, strlen(s), &req, &e), 0);
	assert_string_equal(req.op->name, "status");
	assert_true(json_is_object(req.args));
	assert_int_equal(json_object_size(req.args), 0);
	assert_int_equal(json_integer_value(req.id), 0);
	cordon_op_request_done(&req);

	s = "  "
	    "{\"op\":\"approvals.approve\",\"args\":{\"code\":\"ABCD2345\",\"id\":\"ap_1\"},\"id\":9007199254740991,"
	    "\"v\":1}\r\n ";
	assert_int_equal(cordon_op_request_decode(s, strlen(s), &req, &e), 0);
	assert_string_equal(cordon_op_arg_string(&req, "id"), "ap_1");
	assert_string_equal(cordon_op_arg_string(&req, "code"), "ABCD2345");
	assert_null(cordon_op_arg_string(&req, "nope"));
	assert_true(req.op->mutates);
	cordon_op_request_done(&req);

	s = "{\"v\":1,\"id\":1,\"op\":\"audit.tail\",\"args\":{\"count\":1000}}";
	assert_int_equal(cordon_op_request_decode(s, strlen(s), &req, &e), 0);
	assert_int_equal(cordon_op_arg_uint(&req, "count", 20), 1000);
	assert_false(cordon_op_arg_bool(&req, "all", false));
	cordon_op_request_done(&req);

	/* every op of the table decodes with its required arguments */
	for (const struct cordon_op_spec *op = cordon_op_table; op->name; op++) {
		json_t *args = json_object();
		_cleanup_free_ char *line = NULL;
		size_t len;

		for (size_t i = 0; i < CORDON_OP_MAX_ARGS && op->args[i].name; i++) {
			if (!op->args[i].required)
				continue;
			json_object_set_new(args, op->args[i].name,
					    op->args[i].type == CORDON_OP_ARG_STRING_LIST ? json_pack("[s]", "x")
											  : json_string("x"));
		}
		assert_int_equal(cordon_op_request_encode(5, op->name, args, &line, &len), 0);
		assert_int_equal(line[len - 1], '\n');
		assert_int_equal(cordon_op_request_decode(line, len - 1, &req, &e), 0);
		assert_ptr_equal(req.op, op);
		cordon_op_request_done(&req);
		json_decref(args);
	}
	assert_null(cordon_op_lookup("nope"));
	{
		char *line = NULL;
		size_t len;

		assert_int_equal(cordon_op_request_encode(1, "nope", NULL, &line, &len), -EINVAL);
		assert_null(line);
	}
}

static void test_responses(void **state)
{
	_cleanup_free_ char *ok = NULL, *err = NULL;
	struct cordon_op_error e = {},
			       nf = { .code = CORDON_OP_E_NOT_FOUND, .message = "no approval \"x\"\nsecond line" };
	json_t *id = json_integer(7), *res = json_pack("{s:s}", "text", "a\nb"), *got = NULL;
	size_t len;
	bool is_ok;

	(void)state;
	assert_int_equal(cordon_op_response_ok(id, res, &ok, &len), 0);
	assert_int_equal(strlen(ok), len);
	assert_int_equal(ok[len - 1], '\n');
	assert_null(memchr(ok, '\n', len - 1)); /* exactly one line whatever the values */
	assert_string_equal(ok, "{\"v\":1,\"id\":7,\"ok\":true,\"result\":{\"text\":\"a\\nb\"}}\n");
	assert_int_equal(cordon_op_response_decode(ok, len - 1, 7, &is_ok, &got, &e), 0);
	assert_true(is_ok);
	assert_true(json_equal(got, res));
	json_decref(got);
	assert_int_equal(cordon_op_response_decode(ok, len - 1, 8, &is_ok, &got, &e), -EBADMSG);

	assert_int_equal(cordon_op_response_error(NULL, &nf, &err, &len), 0);
	assert_null(memchr(err, '\n', len - 1));
	assert_int_equal(cordon_op_response_decode(err, len - 1, 99, &is_ok, &got, &e), 0);
	assert_false(is_ok);
	assert_string_equal(json_string_value(json_object_get(got, "code")), "not-found");
	json_decref(got);
	assert_int_equal(cordon_op_response_decode("{\"v\":1}", 7, 1, &is_ok, &got, &e), -EBADMSG);
	assert_int_equal(
		cordon_op_response_decode("{\"v\":1,\"id\":1,\"ok\":false,\"error\":5}", 35, 1, &is_ok, &got, &e),
		-EBADMSG);
	assert_int_equal(cordon_op_response_decode("nope", 4, 1, &is_ok, &got, &e), -EBADMSG);
	json_decref(id);
	json_decref(res);
}

static void test_errno_codes(void **state)
{
	(void)state;
	assert_string_equal(cordon_op_errno_code(-EPERM), CORDON_OP_E_DENIED);
	assert_string_equal(cordon_op_errno_code(-ENOENT), CORDON_OP_E_NOT_FOUND);
	assert_string_equal(cordon_op_errno_code(-EALREADY), CORDON_OP_E_ALREADY);
	assert_string_equal(cordon_op_errno_code(-ETIME), CORDON_OP_E_EXPIRED);
	assert_string_equal(cordon_op_errno_code(-EACCES), CORDON_OP_E_CODE);
	assert_string_equal(cordon_op_errno_code(-ESTALE), CORDON_OP_E_STALE);
	assert_string_equal(cordon_op_errno_code(-EXDEV), CORDON_OP_E_OUTSIDE);
	assert_string_equal(cordon_op_errno_code(EEXIST), CORDON_OP_E_EXISTS);
	assert_string_equal(cordon_op_errno_code(-EIO), CORDON_OP_E_FAILED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_json),   cmocka_unit_test(test_too_large),   cmocka_unit_test(test_envelope),
		cmocka_unit_test(test_unknown_op), cmocka_unit_test(test_arguments),   cmocka_unit_test(test_valid),
		cmocka_unit_test(test_responses),  cmocka_unit_test(test_errno_codes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
