/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* RFC 8785 vectors (§3.2.2 sample, §3.2.3 sort example, Appendix B numbers),
 * escaping, UTF-16 ordering, and the round-trip property
 * jcs(decode(jcs(x))) == jcs(x) over generated values. */
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

static char *canon(const char *in)
{
	struct cordon_diag d = {};
	char *out = NULL;

	if (cordon_canon_bytes(in, strlen(in), NULL, &out, NULL, &d) < 0)
		fail_msg("input %.80s: %s", in, d.message);
	return out;
}

static void check_canon(const char *in, const char *want)
{
	char *out = canon(in);

	assert_string_equal(out, want);
	free(out);
}

/* RFC 8785 §3.2.2: the sample object and its canonical form. */
static void test_rfc8785_sample(void **state)
{
	check_canon("{\n"
		    "  \"numbers\": [333333333.33333329, 1E30, 4.50,\n"
		    "              2e-3, 0.000000000000000000000000001],\n"
		    "  \"string\": \"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\",\n"
		    "  \"literals\": [null, true, false]\n"
		    "}",
		    "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
		    "\"string\":\"\xe2\x82\xac$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}");
}

/* RFC 8785 §3.2.3: sorting by UTF-16 code units. */
static void test_rfc8785_sort(void **state)
{
	check_canon(
		"{\n"
		"  \"\\u20ac\": \"Euro Sign\",\n"
		"  \"\\r\": \"Carriage Return\",\n"
		"  \"\\ufb33\": \"Hebrew Letter Dalet With Dagesh\",\n"
		"  \"1\": \"One\",\n"
		"  \"\\ud83d\\ude00\": \"Emoji: Grinning Face\",\n"
		"  \"\\u0080\": \"Control\",\n"
		"  \"\\u00f6\": \"Latin Small Letter O With Diaeresis\"\n"
		"}",
		"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\xc2\x80\":\"Control\","
		"\"\xc3\xb6\":\"Latin Small Letter O With Diaeresis\",\"\xe2\x82\xac\":\"Euro Sign\","
		"\"\xf0\x9f\x98\x80\":\"Emoji: Grinning Face\",\"\xef\xac\xb3\":\"Hebrew Letter Dalet With Dagesh\"}");
}

static void test_compare_keys(void **state)
{
	/* U+1F600 (UTF-16 D83D DE00) sorts before U+FB33, although its code
	 * point and its UTF-8 bytes are larger. */
	const char *emoji = "\xf0\x9f\x98\x80", *dalet = "\xef\xac\xb3", *e000 = "\xee\x80\x80";

	assert_true(cordon_jcs_compare_keys(emoji, 4, dalet, 3) < 0);
	assert_true(cordon_jcs_compare_keys(dalet, 3, emoji, 4) > 0);
	assert_true(strcmp(emoji, dalet) > 0); /* bytewise would get it wrong */
	/* U+E000 is above every surrogate too. */
	assert_true(cordon_jcs_compare_keys(emoji, 4, e000, 3) < 0);
	/* Below the surrogate range, code point order holds. */
	assert_true(cordon_jcs_compare_keys("\xed\x9f\xbf", 3, emoji, 4) < 0); /* U+D7FF */
	assert_true(cordon_jcs_compare_keys("", 0, "a", 1) < 0);
	assert_true(cordon_jcs_compare_keys("a", 1, "ab", 2) < 0);
	assert_true(cordon_jcs_compare_keys("ab", 2, "b", 1) < 0);
	assert_true(cordon_jcs_compare_keys("B", 1, "a", 1) < 0);
	assert_int_equal(cordon_jcs_compare_keys("ab", 2, "ab", 2), 0);
	/* Two supplementary characters: high surrogates, then low ones. */
	assert_true(cordon_jcs_compare_keys("\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x81", 4) < 0);
	assert_true(cordon_jcs_compare_keys("\xf0\x90\x80\x80", 4, "\xf4\x8f\xbf\xbf", 4) < 0);
	check_canon("{\"\xef\xac\xb3\":1,\"\xf0\x9f\x98\x80\":2,\"\xee\x80\x80\":3,\"\xed\x9f\xbf\":4}",
		    "{\"\xed\x9f\xbf\":4,\"\xf0\x9f\x98\x80\":2,\"\xee\x80\x80\":3,\"\xef\xac\xb3\":1}");
	check_canon("{\"b\":1,\"a\":2,\"\":3,\"ab\":4,\"A\":5}", "{\"\":3,\"A\":5,\"a\":2,\"ab\":4,\"b\":1}");
}

static double from_bits(uint64_t u)
{
	double x;

	memcpy(&x, &u, sizeof(x));
	return x;
}

/* RFC 8785 Appendix B: IEEE 754 bit patterns and their serialisation. */
static void test_rfc8785_numbers(void **state)
{
	static const struct {
		uint64_t bits;
		const char *want;
	} v[] = {
		{ 0x0000000000000000, "0" },
		{ 0x8000000000000000, "0" },
		{ 0x0000000000000001, "5e-324" },
		{ 0x8000000000000001, "-5e-324" },
		{ 0x7fefffffffffffff, "1.7976931348623157e+308" },
		{ 0xffefffffffffffff, "-1.7976931348623157e+308" },
		{ 0x4340000000000000, "9007199254740992" },
		{ 0xc340000000000000, "-9007199254740992" },
		{ 0x4430000000000000, "295147905179352830000" },
		{ 0x44b52d02c7e14af5, "9.999999999999997e+22" },
		{ 0x44b52d02c7e14af6, "1e+23" },
		{ 0x44b52d02c7e14af7, "1.0000000000000001e+23" },
		{ 0x444b1ae4d6e2ef4e, "999999999999999700000" },
		{ 0x444b1ae4d6e2ef4f, "999999999999999900000" },
		{ 0x444b1ae4d6e2ef50, "1e+21" },
		{ 0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7" },
		{ 0x3eb0c6f7a0b5ed8d, "0.000001" },
		{ 0x41b3de4355555553, "333333333.3333332" },
		{ 0x41b3de4355555554, "333333333.33333325" },
		{ 0x41b3de4355555555, "333333333.3333333" },
		{ 0x41b3de4355555556, "333333333.3333334" },
		{ 0x41b3de4355555557, "333333333.33333343" },
		{ 0xbecbf647612f3696, "-0.0000033333333333333333" },
		{ 0x43143ff3c1cb0959, "1424953923781206.2" }, /* round to even */
	};
	char buf[CORDON_JCS_NUMBER_MAX];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int n = cordon_jcs_format_double(from_bits(v[i].bits), buf);

		if (n < 0 || strcmp(buf, v[i].want) != 0)
			fail_msg("%016llx: got '%s', want '%s'", (unsigned long long)v[i].bits, buf, v[i].want);
		assert_int_equal(n, strlen(v[i].want));
	}
	/* NaN and Infinity are errors. */
	assert_int_equal(cordon_jcs_format_double(from_bits(0x7fffffffffffffff), buf), -EDOM);
	assert_int_equal(cordon_jcs_format_double(from_bits(0x7ff0000000000000), buf), -EDOM);
	assert_int_equal(cordon_jcs_format_double(-INFINITY, buf), -EDOM);
}

static void check_fmt(double x, const char *want)
{
	char buf[CORDON_JCS_NUMBER_MAX];

	assert_true(cordon_jcs_format_double(x, buf) > 0);
	if (strcmp(buf, want) != 0)
		fail_msg("%.17g: got '%s', want '%s'", x, buf, want);
}

/* The ECMAScript thresholds: integer form below 1e21, fixed notation down
 * to 1e-6, exponent form outside. */
static void test_number_thresholds(void **state)
{
	check_fmt(1e21, "1e+21");
	check_fmt(1e20, "100000000000000000000");
	check_fmt(123456789e12, "123456789000000000000");
	check_fmt(1.5e21, "1.5e+21");
	check_fmt(1e-7, "1e-7");
	check_fmt(1.5e-7, "1.5e-7");
	check_fmt(1e-6, "0.000001");
	check_fmt(1.25e-6, "0.00000125");
	check_fmt(0.1, "0.1");
	check_fmt(-0.0, "0");
	check_fmt(1.0, "1");
	check_fmt(-1.5, "-1.5");
	check_fmt(100, "100");
	check_fmt(123.456, "123.456");
	check_fmt(9007199254740991.0, "9007199254740991");
	check_fmt(333333333.3333333, "333333333.3333333");
	check_fmt(5e-324, "5e-324");
	check_fmt(1.7976931348623157e308, "1.7976931348623157e+308");
	check_fmt(2.2250738585072014e-308, "2.2250738585072014e-308");
	check_fmt(0.30000000000000004, "0.30000000000000004");
	check_fmt(1e100, "1e+100");
	check_fmt(1.2e-100, "1.2e-100");
	check_fmt(4.35, "4.35");
	check_fmt(0.002, "0.002");
	check_fmt(1e23, "1e+23");
	check_fmt(5e-7, "5e-7");
	check_fmt(9.5367431640625e-7, "9.5367431640625e-7");
	check_fmt(2e-6, "0.000002");
}

static void test_number_lexemes(void **state)
{
	check_canon("[-0, -0.0, 0e10, 0.0e-5, 1.0, 1e0, 10E-1, 1E+2]", "[0,0,0,0,1,1,1,100]");
	check_canon("[9007199254740991, -9007199254740991, 123, -7]", "[9007199254740991,-9007199254740991,123,-7]");
	check_canon("[1e21, 1e-7, 0.0000001, 0.000001, 5e-324, 1.7976931348623157e308]",
		    "[1e+21,1e-7,1e-7,0.000001,5e-324,1.7976931348623157e+308]");
	check_canon("[333333333.33333329, 333333333.3333333]", "[333333333.3333333,333333333.3333333]");
	check_canon("[0.1e1, 12.50, 1.2345678901234567890123]", "[1,12.5,1.2345678901234567]");
}

static void test_escaping(void **state)
{
	json_t *v = json_array();
	char s[0x21], *out = NULL;

	/* Every control character U+0001..U+001F, then '"' and '\'. */
	for (int c = 1; c < 0x20; c++)
		s[c - 1] = (char)c;
	s[0x1f] = '"';
	s[0x20] = 0;
	json_array_append_new(v, json_stringn(s, 0x20));
	json_array_append_new(v, json_string("\\/\x7f\xe2\x80\xa8\xc2\x80\xf0\x9f\x98\x80"));
	assert_int_equal(cordon_jcs_encode(v, &out, NULL), 0);
	assert_string_equal(out, "[\"\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r"
				 "\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018"
				 "\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\\\"\","
				 "\"\\\\/\x7f\xe2\x80\xa8\xc2\x80\xf0\x9f\x98\x80\"]");
	free(out);
	json_decref(v);

	/* Escapes in the input are decoded and re-emitted minimally: no
	 * \u escapes for printable characters, no escaped slash, lowercase hex. */
	check_canon("\"\\u0041\\u00e9\\u20AC\\/\\u001F\\u007f\"", "\"A\xc3\xa9\xe2\x82\xac/\\u001f\x7f\"");
	/* No Unicode normalization: precomposed and decomposed stay distinct. */
	check_canon("[\"\\u00e9\",\"e\\u0301\"]", "[\"\xc3\xa9\",\"e\xcc\x81\"]");
	check_canon("{\"e\\u0301\":1,\"\\u00e9\":2}", "{\"e\xcc\x81\":1,\"\xc3\xa9\":2}");
}

static void test_encode_errors(void **state)
{
	char *out = NULL;
	json_t *v;

	assert_int_equal(cordon_jcs_encode(NULL, &out, NULL), -EINVAL);

	v = json_integer(9007199254740992LL);
	assert_int_equal(cordon_jcs_encode(v, &out, NULL), -ERANGE);
	json_decref(v);
	v = json_real(1e20); /* would print as an out-of-range integer */
	assert_int_equal(cordon_jcs_encode(v, &out, NULL), -ERANGE);
	json_decref(v);
	v = json_stringn_nocheck("a\xff", 2);
	assert_int_equal(cordon_jcs_encode(v, &out, NULL), -EILSEQ);
	json_decref(v);
	v = json_stringn("a\0b", 3);
	assert_int_equal(cordon_jcs_encode(v, &out, NULL), -EILSEQ);
	json_decref(v);
	assert_null(out);

	/* In-memory nesting beyond the encoder's guard. */
	v = json_array();
	{
		json_t *cur = v;

		for (int i = 0; i < 300; i++) {
			json_t *n = json_array();

			json_array_append_new(cur, n);
			cur = n;
		}
	}
	assert_int_equal(cordon_jcs_encode(v, &out, NULL), -ELOOP);
	json_decref(v);
}

static void test_insertion_order(void **state)
{
	json_t *a = json_object(), *b = json_object();
	char *x, *y;

	json_object_set_new(a, "z", json_integer(1));
	json_object_set_new(a, "a", json_pack("{s:i,s:i}", "y", 1, "b", 2));
	json_object_set_new(b, "a", json_pack("{s:i,s:i}", "b", 2, "y", 1));
	json_object_set_new(b, "z", json_integer(1));
	assert_int_equal(cordon_jcs_encode(a, &x, NULL), 0);
	assert_int_equal(cordon_jcs_encode(b, &y, NULL), 0);
	assert_string_equal(x, y);
	assert_string_equal(x, "{\"a\":{\"b\":2,\"y\":1},\"z\":1}");
	free(x), free(y);
	json_decref(a), json_decref(b);
}

/* ---- Property test ------------------------------------------------------------ */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic across platforms, seeded per test. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static size_t put_utf8(char *p, uint32_t cp)
{
	if (cp < 0x80) {
		p[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		p[0] = (char)(0xc0 | cp >> 6);
		p[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		p[0] = (char)(0xe0 | cp >> 12);
		p[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		p[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	p[0] = (char)(0xf0 | cp >> 18);
	p[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	p[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	p[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static uint32_t random_cp(void)
{
	static const uint32_t special[] = { '"',  '\\', '/',	'\b',	'\f',	'\n',	'\r',	 '\t',	   0x1f,  0x7f,
					    0x80, 0xe9, 0x2028, 0xfeff, 0xfb33, 0xffff, 0x1f600, 0x10ffff, 0xe000 };
	uint32_t cp;

	switch (rnd() % 5) {
	case 0:
		return special[rnd() % (sizeof(special) / sizeof(special[0]))];
	case 1:
		return 1 + (uint32_t)(rnd() % 0x7f);
	case 2:
		cp = (uint32_t)(rnd() % 0x10000);
		break;
	case 3:
		cp = 0x10000 + (uint32_t)(rnd() % 0x100000);
		break;
	default:
		return 'a' + (uint32_t)(rnd() % 4); /* short alphabet: key collisions and prefixes */
	}
	if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff))
		cp = 'x';
	return cp;
}

static json_t *random_string_value(char *buf, size_t *ret_len)
{
	size_t n = rnd() % 8, len = 0;

	for (size_t i = 0; i < n; i++)
		len += put_utf8(buf + len, random_cp());
	buf[len] = 0;
	*ret_len = len;
	return json_stringn(buf, len);
}

static double random_double(void)
{
	double x;

	switch (rnd() % 4) {
	case 0: /* any bit pattern */
		do
			x = from_bits(rnd());
		while (!isfinite(x));
		break;
	case 1: /* short decimals */
		x = (double)((int64_t)(rnd() % 2000001) - 1000000) / (double)(1 + rnd() % 1000);
		break;
	case 2: /* around the thresholds */
		x = (double)(1 + rnd() % 9);
		for (int e = (int)(rnd() % 50) - 25; e != 0; e += e > 0 ? -1 : 1)
			x = e > 0 ? x * 10 : x / 10;
		break;
	default:
		x = (double)(rnd() % 1000) * 0.1;
	}
	/* Integral values beyond 2^53 − 1 below 1e21 are refused by admission
	 * (they would print as out-of-range integers): fold them away. */
	if (fabs(x) > 9007199254740991.0 && fabs(x) < 1e21)
		x = x / 1e10 + 0.5;
	return x;
}

static json_t *random_value(unsigned depth)
{
	unsigned kind = (unsigned)(rnd() % (depth >= 5 ? 6 : 8));
	char buf[64];
	size_t len;

	switch (kind) {
	case 0:
		return json_null();
	case 1:
		return json_boolean(rnd() & 1);
	case 2: {
		int64_t v;

		switch (rnd() % 3) {
		case 0:
			v = (int64_t)(rnd() % 201) - 100;
			break;
		case 1:
			v = (int64_t)(rnd() % 9007199254740991ULL);
			break;
		default:
			v = rnd() & 1 ? 9007199254740991LL : -9007199254740991LL;
		}
		return json_integer(rnd() & 1 ? v : -v);
	}
	case 3:
		return json_real(random_double());
	case 4:
	case 5:
		return random_string_value(buf, &len);
	case 6: {
		json_t *a = json_array();
		size_t n = rnd() % 6;

		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, random_value(depth + 1));
		return a;
	}
	default: {
		json_t *o = json_object();
		size_t n = rnd() % 6;

		for (size_t i = 0; i < n; i++) {
			json_t *k = random_string_value(buf, &len);

			json_decref(k);
			json_object_setn_new(o, buf, len, random_value(depth + 1));
		}
		return o;
	}
	}
}

static void test_roundtrip_property(void **state)
{
	static const size_t flags[] = {
		JSON_COMPACT,	  JSON_INDENT(2), JSON_ENSURE_ASCII, JSON_SORT_KEYS, JSON_ENSURE_ASCII | JSON_INDENT(1),
		JSON_ESCAPE_SLASH
	};

	rng_state = 0x5eed1234abcd9876ULL;
	for (int i = 0; i < 5000; i++) {
		json_t *x = random_value(0), *y = NULL;
		struct cordon_diag d = {};
		char *a = NULL, *b = NULL, *c = NULL, *dump;
		size_t al, bl, cl;

		assert_int_equal(cordon_canon_admit(x, NULL, &d), 0);
		assert_int_equal(cordon_jcs_encode(x, &a, &al), 0);
		assert_int_equal(strlen(a), al);

		/* jcs(decode(jcs(x))) == jcs(x) */
		if (cordon_canon_decode(a, al, NULL, &y, &d) < 0)
			fail_msg("case %d: canonical output not admitted: %s\n%s", i, d.message, a);
		assert_int_equal(cordon_jcs_encode(y, &b, &bl), 0);
		if (al != bl || memcmp(a, b, al) != 0)
			fail_msg("case %d: not idempotent:\n%s\n%s", i, a, b);
		json_decref(y);

		/* Any other serialisation of x (indentation, \u escapes,
		 * escaped slashes, key order) canonicalises to the same bytes. */
		dump = json_dumps(x, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17) | flags[i % 6]);
		assert_non_null(dump);
		if (cordon_canon_bytes(dump, strlen(dump), NULL, &c, &cl, &d) < 0)
			fail_msg("case %d: jansson's own dump not admitted: %s\n%s", i, d.message, dump);
		if (al != cl || memcmp(a, c, al) != 0)
			fail_msg("case %d: canonical form depends on the input form:\n%s\n%s\n%s", i, dump, a, c);
		free(dump);
		free(a), free(b), free(c);
		json_decref(x);
	}
}

/* Every finite double's canonical text reads back as the same double, and
 * no shorter correctly-rounded text would (spot-checked over random bits). */
static void test_number_roundtrip_random(void **state)
{
	char buf[CORDON_JCS_NUMBER_MAX];

	rng_state = 0x0123456789abcdefULL;
	for (int i = 0; i < 200000; i++) {
		double x = from_bits(rnd());
		int n;

		if (!isfinite(x))
			continue;
		n = cordon_jcs_format_double(x, buf);
		assert_true(n > 0 && n < CORDON_JCS_NUMBER_MAX);
		if (strtod(buf, NULL) != x)
			fail_msg("%a formats as %s which does not round-trip", x, buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc8785_sample),
		cmocka_unit_test(test_rfc8785_sort),
		cmocka_unit_test(test_compare_keys),
		cmocka_unit_test(test_rfc8785_numbers),
		cmocka_unit_test(test_number_thresholds),
		cmocka_unit_test(test_number_lexemes),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_insertion_order),
		cmocka_unit_test(test_roundtrip_property),
		cmocka_unit_test(test_number_roundtrip_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
