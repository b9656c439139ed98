/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Admission: every rejection with its exact errno, message and position. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "canon.h"

static void check_reject_n(const char *in, size_t len, const struct cordon_canon_limits *lim, int want_errno,
			   const char *want_substr, unsigned want_line, unsigned want_col)
{
	struct cordon_diag d = {};
	json_t *v = (json_t *)0x1; /* must stay untouched */
	int r;

	r = cordon_canon_decode(in, len, lim, &v, &d);
	if (r != -want_errno || !strstr(d.message, want_substr))
		fail_msg("input %.60s: got %d (%s) '%s', want %d and '%s'", in, r, strerror(-r), d.message, -want_errno,
			 want_substr);
	assert_ptr_equal(v, (json_t *)0x1);
	assert_int_equal(d.error, want_errno);
	assert_string_equal(d.step, "canon");
	if (want_line) {
		assert_int_equal(d.line, want_line);
		assert_int_equal(d.column, want_col);
	}

	/* cordon_canon_bytes() reports exactly the same. */
	struct cordon_diag d2 = {};
	char *out = NULL;
	assert_int_equal(cordon_canon_bytes(in, len, lim, &out, NULL, &d2), -want_errno);
	assert_null(out);
	assert_string_equal(d2.message, d.message);
}

static void check_reject(const char *in, int want_errno, const char *want_substr, unsigned line, unsigned col)
{
	check_reject_n(in, strlen(in), NULL, want_errno, want_substr, line, col);
}

static void check_canon(const char *in, const char *want)
{
	struct cordon_diag d = {};
	char *out = NULL;
	size_t n = 0;
	int r;

	r = cordon_canon_bytes(in, strlen(in), NULL, &out, &n, &d);
	if (r < 0)
		fail_msg("input %s: %s", in, d.message);
	assert_string_equal(out, want);
	assert_int_equal(n, strlen(want));
	free(out);
}

static void test_invalid_utf8(void **state)
{
	check_reject("\"\xff\"", EILSEQ, "invalid UTF-8 byte 0xff", 1, 2);
	check_reject("\"ab\xc0\x80\"", EILSEQ, "invalid UTF-8 byte 0xc0", 1, 4);       /* overlong NUL */
	check_reject("\"\xe0\x80\xaf\"", EILSEQ, "invalid UTF-8", 1, 2);	       /* overlong '/' */
	check_reject("\"\xed\xa0\x80\"", EILSEQ, "invalid UTF-8 byte 0xed", 1, 2);     /* encoded surrogate */
	check_reject("\"\xf4\x90\x80\x80\"", EILSEQ, "invalid UTF-8 byte 0xf4", 1, 2); /* > U+10FFFF */
	check_reject("\"\xe2\x82\"", EILSEQ, "invalid UTF-8 byte 0xe2", 1, 2);	       /* truncated */
	check_reject("\"\x80\"", EILSEQ, "invalid UTF-8 byte 0x80", 1, 2);	       /* lone continuation */
	check_reject("{\"k\xfe\":1}", EILSEQ, "invalid UTF-8 byte 0xfe", 1, 4);	       /* in a member name */
	check_reject("[1,\n \xff]", EILSEQ, "invalid UTF-8", 2, 2);		       /* outside strings */
	/* Columns count characters, like jansson: "é" is one column. */
	check_reject("[\"\xc3\xa9\",\"\xff\"]", EILSEQ, "(byte 7)", 1, 7);
}

static void test_lone_surrogates(void **state)
{
	check_reject("\"\\ud800\"", EILSEQ, "lone high surrogate \\ud800", 1, 2);
	check_reject("\"\\uDBFF\"", EILSEQ, "lone high surrogate \\udbff", 1, 2);
	check_reject("\"\\udc00\"", EILSEQ, "lone low surrogate \\udc00", 1, 2);
	check_reject("\"x\\ud800\\u0041\"", EILSEQ, "lone high surrogate", 1, 3);
	check_reject("\"\\ud800\\ud800\"", EILSEQ, "lone high surrogate", 1, 2);
	check_reject("\"\\ud800x\"", EILSEQ, "lone high surrogate", 1, 2);
	check_reject("\"\\udc00\\ud800\"", EILSEQ, "lone low surrogate", 1, 2); /* reversed pair */
	check_reject("{\"\\ud800\":1}", EILSEQ, "lone high surrogate", 1, 3);
	/* A proper pair is fine. */
	check_canon("\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\"");
	check_canon("\"\\uD83D\\uDE00\"", "\"\xf0\x9f\x98\x80\"");
}

static void test_nul(void **state)
{
	check_reject("\"\\u0000\"", EILSEQ, "\\u0000 (NUL)", 1, 2);
	check_reject("{\"a\\u0000b\":1}", EILSEQ, "\\u0000 (NUL)", 1, 4);
	check_reject_n("\"a\0\"", 4, NULL, EILSEQ, "NUL byte", 1, 3);
	check_reject_n("[1]\0", 4, NULL, EILSEQ, "NUL byte", 1, 4);
}

static void test_duplicates(void **state)
{
	check_reject("{\"a\":1,\"a\":2}", ENOTUNIQ, "duplicate member name", 1, 10);
	check_reject("{\"a\":1,\n \"b\":{\"x\":1,\"x\":1}}", ENOTUNIQ, "duplicate member name", 2, 15);
	/* Different escapes of the same name are the same name. */
	check_reject("{\"a\":1,\"\\u0061\":2}", ENOTUNIQ, "duplicate member name", 0, 0);
	check_reject("{\"\xc3\xa9\":1,\"\\u00e9\":2}", ENOTUNIQ, "duplicate member name", 0, 0);
	/* Equal names in different objects are fine. */
	check_canon("{\"a\":{\"a\":1},\"b\":[{\"a\":1},{\"a\":2}]}", "{\"a\":{\"a\":1},\"b\":[{\"a\":1},{\"a\":2}]}");
}

static char *nest(unsigned depth, const char *open, const char *close, const char *inner)
{
	size_t ol = strlen(open), cl = strlen(close), il = strlen(inner);
	char *s = malloc(depth * (ol + cl) + il + 1), *p = s;

	assert_non_null(s);
	for (unsigned i = 0; i < depth; i++, p += ol)
		memcpy(p, open, ol);
	memcpy(p, inner, il);
	p += il;
	for (unsigned i = 0; i < depth; i++, p += cl)
		memcpy(p, close, cl);
	*p = 0;
	return s;
}

static void test_depth(void **state)
{
	char *ok = nest(64, "[", "]", "1"), *bad = nest(65, "[", "]", "1");
	char *ok_obj = nest(64, "{\"a\":", "}", "1"), *bad_obj = nest(65, "{\"a\":", "}", "1");
	char *huge = nest(100000, "[", "]", "");
	struct cordon_canon_limits lim = { .max_depth = 3 };
	json_t *v = NULL;

	assert_int_equal(cordon_canon_decode(ok, strlen(ok), NULL, &v, NULL), 0);
	json_decref(v);
	assert_int_equal(cordon_canon_decode(ok_obj, strlen(ok_obj), NULL, &v, NULL), 0);
	json_decref(v);
	check_reject(bad, ELOOP, "nesting deeper than 64 levels", 1, 65);
	check_reject(bad_obj, ELOOP, "nesting deeper than 64 levels", 0, 0);
	/* Far beyond jansson's own limit (2048): refused by the pre-scan,
	 * before any recursive parser runs, with our error. */
	check_reject(huge, ELOOP, "nesting deeper than 64 levels", 1, 65);
	/* Configured limit; brackets inside strings do not count. */
	check_reject_n("[[[[1]]]]", 9, &lim, ELOOP, "deeper than 3", 1, 4);
	assert_int_equal(cordon_canon_decode("[[[\"[[[[{{{\"]]]", 15, &lim, &v, NULL), 0);
	json_decref(v);
	free(ok), free(bad), free(ok_obj), free(bad_obj), free(huge);
}

static void test_size(void **state)
{
	struct cordon_canon_limits lim = { .max_bytes = 8 };
	size_t big = CORDON_CANON_MAX_BYTES_DEFAULT + 1;
	char *s = malloc(big);
	json_t *v = NULL;

	check_reject_n("[1,2,3,4]", 9, &lim, EMSGSIZE, "document of 9 bytes exceeds the limit of 8 bytes", 0, 0);
	assert_int_equal(cordon_canon_decode("[1,2,3,4", 8, &lim, &v, NULL), -EBADMSG); /* at the limit: parsed */
	assert_int_equal(cordon_canon_decode("[1,2,34]", 8, &lim, &v, NULL), 0);
	json_decref(v);

	/* Default: 1 MiB. */
	assert_non_null(s);
	memset(s, ' ', big);
	s[0] = '1';
	check_reject_n(s, big, NULL, EMSGSIZE, "exceeds the limit of 1048576 bytes", 0, 0);
	assert_int_equal(cordon_canon_decode(s, big - 1, NULL, &v, NULL), 0);
	assert_int_equal(json_integer_value(v), 1);
	json_decref(v);
	free(s);
}

static void test_integers(void **state)
{
	check_canon("9007199254740991", "9007199254740991");
	check_canon("-9007199254740991", "-9007199254740991");
	check_canon("[0,-0,1,-1]", "[0,0,1,-1]");
	check_reject("9007199254740992", ERANGE, "integer 9007199254740992 is outside ±(2^53−1)", 1, 1);
	check_reject("[1,-9007199254740992]", ERANGE, "integer -9007199254740992 is outside", 1, 4);
	/* Beyond long long: jansson would say "too big integer"; we say what. */
	check_reject("{\"n\":\n123456789012345678901234567890}", ERANGE, "send big integers as strings", 2, 1);
	check_reject("-99999999999999999999", ERANGE, "outside ±(2^53−1)", 1, 1);
	/* Integral reals whose canonical form would be such an integer. */
	check_reject("1e20", ERANGE, "number 1e20 is an integer outside", 1, 1);
	check_reject("9007199254740992.0", ERANGE, "integer outside", 1, 1);
	check_reject("-9.5e15", ERANGE, "integer outside", 1, 1);
	/* Reals stay reals: big ones print in exponent form. */
	check_canon("1e21", "1e+21");
	check_canon("1E30", "1e+30");
	check_canon("9007199254740991.0", "9007199254740991");
	check_canon("4.5e15", "4500000000000000");
	check_canon("0.5e1", "5");
}

static void test_real_overflow(void **state)
{
	check_reject("1e400", ERANGE, "number 1e400 overflows a double", 1, 1);
	check_reject("[-1.5e309]", ERANGE, "overflows a double", 1, 2);
	/* Underflow is rounding, not an error. */
	check_canon("1e-400", "0");
	check_canon("-1e-400", "0");
}

static void test_syntax(void **state)
{
	check_reject("", EBADMSG, "not JSON: empty input", 1, 1);
	check_reject("   ", EBADMSG, "not JSON", 0, 0);
	check_reject("[1,]", EBADMSG, "not JSON", 1, 4);
	check_reject("1 2", EBADMSG, "end of file expected", 1, 3);
	check_reject("{\"a\" 1}", EBADMSG, "not JSON", 0, 0);
	check_reject("NaN", EBADMSG, "not JSON", 0, 0);
	check_reject("Infinity", EBADMSG, "not JSON", 0, 0);
	check_reject("[01]", EBADMSG, "not JSON", 0, 0);
	check_reject("'a'", EBADMSG, "not JSON", 0, 0);
	check_reject("\"a\tb\"", EBADMSG, "not JSON", 0, 0); /* raw control in string */
	check_reject("\"\\x41\"", EBADMSG, "not JSON", 0, 0);
	check_reject("\"\\u12g4\"", EBADMSG, "invalid \\u escape", 1, 2);
	check_reject("\xef\xbb\xbf[1]", EBADMSG, "not JSON", 0, 0); /* BOM */
	check_reject("[1]]", EBADMSG, "not JSON", 0, 0);
	/* Malformed number lexemes are grammar errors, even when their value
	 * would also be out of range. */
	check_reject("1.e400", EBADMSG, "not JSON", 0, 0);
	check_reject("[.5]", EBADMSG, "not JSON", 0, 0);
	check_reject("-e5", EBADMSG, "not JSON", 0, 0);
	check_reject("00000000000000000000009007199254740993", EBADMSG, "not JSON", 0, 0);
	check_reject("[1e]", EBADMSG, "not JSON", 0, 0);
	check_reject("[1e+]", EBADMSG, "not JSON", 0, 0);
	check_reject("[+1]", EBADMSG, "not JSON", 0, 0);
	check_reject("[1-2]", EBADMSG, "not JSON", 0, 0);
	check_reject("[-]", EBADMSG, "not JSON", 0, 0);
	check_reject("[\"abc", EBADMSG, "not JSON", 0, 0);
	/* Trailing whitespace is fine; any scalar is a document. */
	check_canon(" [1] \n\t", "[1]");
	check_canon("\"x\"", "\"x\"");
	check_canon("null", "null");
}

static void test_admit_in_memory(void **state)
{
	struct cordon_diag d = {};
	json_t *v;

	v = json_pack("{s:[i,{s:I}]}", "a", 1, "b", (json_int_t)9007199254740992LL);
	assert_int_equal(cordon_canon_admit(v, NULL, &d), -ERANGE);
	assert_string_equal(d.message, "integer outside ±(2^53−1) at $.a[1].b");
	json_decref(v);

	/* jansson itself refuses to build non-finite reals, so the -EDOM guard
	 * cannot be reached through its API; make sure that stays true. */
	assert_null(json_real(NAN));
	assert_null(json_real(INFINITY));
	assert_null(json_real(-INFINITY));
	v = json_real(1.5);
	assert_int_equal(json_real_set(v, NAN), -1);
	assert_int_equal(cordon_canon_admit(v, NULL, &d), 0);
	json_decref(v);

	v = json_pack("{s:f}", "x", 1e20);
	assert_int_equal(cordon_canon_admit(v, NULL, &d), -ERANGE);
	json_decref(v);

	/* Strings built with embedded NUL or invalid UTF-8. */
	v = json_array();
	json_array_append_new(v, json_stringn_nocheck("a\0b", 3));
	assert_int_equal(cordon_canon_admit(v, NULL, &d), -EILSEQ);
	assert_string_equal(d.message, "string has a NUL character at byte 1 at $[0]");
	json_decref(v);

	v = json_object();
	json_object_setn_new_nocheck(v, "k\xff", 2, json_true());
	assert_int_equal(cordon_canon_admit(v, NULL, &d), -EILSEQ);
	json_decref(v);

	v = json_object();
	json_object_setn_new_nocheck(v, "k\0z", 3, json_true());
	assert_int_equal(cordon_canon_admit(v, NULL, &d), -EILSEQ);
	json_decref(v);

	/* Depth. */
	{
		struct cordon_canon_limits lim = { .max_depth = 2 };
		json_t *a = json_pack("[[[i]]]", 1);

		assert_int_equal(cordon_canon_admit(a, &lim, &d), -ELOOP);
		assert_string_equal(d.message, "nesting too deep at $[0][0]");
		lim.max_depth = 3;
		assert_int_equal(cordon_canon_admit(a, &lim, &d), 0);
		json_decref(a);
	}
	assert_int_equal(cordon_canon_admit(NULL, NULL, &d), -EINVAL);
}

static void test_arguments_helper(void **state)
{
	struct cordon_diag d = {};
	json_t *v = NULL, *obj = json_pack("{s:i}", "a", 1), *arr = json_array(), *null = json_null();
	char *out = NULL;

	assert_int_equal(cordon_canon_arguments(NULL, &v, &d), 0);
	assert_true(json_is_object(v));
	assert_int_equal(json_object_size(v), 0);
	assert_int_equal(cordon_jcs_encode(v, &out, NULL), 0);
	assert_string_equal(out, "{}");
	free(out);
	json_decref(v);

	assert_int_equal(cordon_canon_arguments(obj, &v, &d), 0);
	assert_ptr_equal(v, obj);
	json_decref(v);

	v = NULL;
	assert_int_equal(cordon_canon_arguments(arr, &v, &d), -EINVAL);
	assert_null(v);
	assert_string_equal(d.message, "arguments must be an object, not a non-object value");
	assert_int_equal(cordon_canon_arguments(null, &v, &d), -EINVAL);
	assert_string_equal(d.message, "arguments must be an object, not null");
	json_decref(obj), json_decref(arr), json_decref(null);
}

static void test_limits_default(void **state)
{
	struct cordon_canon_limits l;

	cordon_canon_limits_default(&l);
	assert_int_equal(l.max_bytes, 1048576);
	assert_int_equal(l.max_depth, 64);
}

static void test_utf8_valid(void **state)
{
	size_t off = 99;

	assert_true(cordon_utf8_valid("a\xc3\xa9\xf0\x9f\x98\x80", 7, &off));
	assert_int_equal(off, 99);
	assert_false(cordon_utf8_valid("ab\xed\xbf\xbf", 5, &off));
	assert_int_equal(off, 2);
	assert_false(cordon_utf8_valid("a\0", 2, &off));
	assert_int_equal(off, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_lone_surrogates),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_real_overflow),
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_admit_in_memory),
		cmocka_unit_test(test_arguments_helper),
		cmocka_unit_test(test_limits_default),
		cmocka_unit_test(test_utf8_valid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
