/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tools/lib/json-scan.c: exact vectors for string decoding (every escape,
 * surrogate pairs, \u0000, invalid UTF-8 of each kind, in-place decoding),
 * json_text_valid(), paths (members, array indexes, escaped names, the first
 * of duplicates, several paths in one pass), and a differential test against
 * jansson, whose rules the scanner promises to keep (mcp-server.c relies on
 * it to lift write_file's content): random strings and randomly mutated
 * documents must be accepted or refused alike, strings decoded to the same
 * bytes. Deterministic seed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "json-scan.h"

static uint64_t rng = 0x243F6A8885A308D3ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* Decodes s (C string, the text between the quotes); returns the length or
 * -errno, output in out. */
static ssize_t decode(const char *s, char *out)
{
	return json_string_decode(s, strlen(s), out);
}

static void expect_decode(const char *in, const char *want, size_t want_len)
{
	char out[256];
	ssize_t n = decode(in, out);

	if (n != (ssize_t)want_len || memcmp(out, want, want_len) != 0)
		fail_msg("decode '%s': got %zd bytes", in, n);
}

static void test_decode_escapes(void **state)
{
	(void)state;
	expect_decode("", "", 0);
	expect_decode("plain text, longer than eight bytes", "plain text, longer than eight bytes", 35);
	expect_decode("\\\"\\\\\\/\\b\\f\\n\\r\\t", "\"\\/\b\f\n\r\t", 8);
	expect_decode("\\u0041\\u00e9\\u00E9\\u20ac", "A\xc3\xa9\xc3\xa9\xe2\x82\xac", 8);
	expect_decode("\\ud83d\\ude00", "\xf0\x9f\x98\x80", 4);
	expect_decode("\\uDBFF\\uDFFF", "\xf4\x8f\xbf\xbf", 4);
	expect_decode("\\u0001\\u001f\\u007f", "\x01\x1f\x7f", 3);
	expect_decode("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbf",
		      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbf", 18);
}

static void test_decode_refusals(void **state)
{
	static const char *const bad[] = {
		"\\u0000", /* jansson refuses it without JSON_ALLOW_NUL */
		"\\ud800", /* lone high surrogate */
		"\\ud800x",
		"\\ud800\\u0041", /* high surrogate, then no low one */
		"\\ud800\\ud800",
		"\\udc00", /* lone low surrogate */
		"\\u12g4",
		"\\u12",
		"\\u",
		"\\",
		"\\x",
		"\\'",
		"\\U0041",
		"a\x01",
		"\x1f",
		"\n",
		"\t",		    /* raw control characters */
		"a\"b",		    /* an unescaped quote */
		"\xc0\x80",	    /* overlong NUL */
		"\xc1\xbf",	    /* overlong */
		"\xe0\x80\xaf",	    /* overlong '/' */
		"\xf0\x80\x80\xaf", /* overlong */
		"\xed\xa0\x80",	    /* UTF-8 encoded surrogate */
		"\xf4\x90\x80\x80", /* above U+10FFFF */
		"\xf5\x80\x80\x80",
		"\xff",
		"\x80",
		"\xbf",	    /* no such lead byte */
		"\xe2\x82", /* truncated */
		"\xe2\x28\xa1",
		"\xc3\x28", /* bad continuation */
	};
	char out[64];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (decode(bad[i], out) != -EINVAL)
			fail_msg("decode of case %zu was not refused", i);
}

/* Decoding in place (out == s), over a long text whose escapes sit on every
 * offset modulo eight, as cordon-fs decodes write_file's content. */
static void test_decode_in_place(void **state)
{
	size_t n = 0, w = 0;
	char *in = malloc(70000), *want = malloc(70000);

	(void)state;
	assert_non_null(in);
	assert_non_null(want);
	for (size_t i = 0; n < 60000; i++) {
		switch (i % 11) {
		case 3:
			memcpy(in + n, "\\n", 2), n += 2, want[w++] = '\n';
			break;
		case 7:
			memcpy(in + n, "\\u00e9", 6), n += 6, memcpy(want + w, "\xc3\xa9", 2), w += 2;
			break;
		case 9:
			memcpy(in + n, "\\ud83d\\ude00", 12), n += 12, memcpy(want + w, "\xf0\x9f\x98\x80", 4), w += 4;
			break;
		default:
			in[n++] = (char)('a' + i % 26), want[w++] = (char)('a' + i % 26);
		}
	}
	assert_int_equal(json_string_decode(in, n, in), (ssize_t)w);
	assert_memory_equal(in, want, w);
	free(in);
	free(want);
}

#define TEXT(s) s, sizeof(s) - 1

static void test_text_valid(void **state)
{
	(void)state;
	assert_true(json_text_valid(TEXT("")));
	assert_true(json_text_valid(TEXT("hello, world; a longer ASCII run")));
	assert_true(json_text_valid(TEXT("\"\\\n\x01 controls and quotes are text")));
	assert_true(json_text_valid(TEXT("caf\xc3\xa9 \xf0\x9f\x98\x80")));
	assert_false(json_text_valid(TEXT("abc\0def")));
	assert_false(json_text_valid(TEXT("0123456789abcdef0123456789abcdef0123\0")));
	assert_false(json_text_valid(TEXT("\xed\xa0\x80")));
	assert_false(json_text_valid(TEXT("\xc0\x80")));
	assert_false(json_text_valid(TEXT("abcdefgh\xe2\x82")));
	assert_false(json_text_valid(TEXT("\xf4\x90\x80\x80")));
}

static int find(const char *doc, const char *const *path, struct json_span *sp)
{
	return json_scan_find(doc, strlen(doc), path, 64, sp);
}

static void test_paths(void **state)
{
	const char *doc = " {\"a\":1,\"params\":{\"x\":[true,false,null],\"arguments\":{\"path\":\"p\","
			  "\"content\":\"hello\\nworld\"},\"n\":-1.5e+3}} ";
	const char *const content[] = { "params", "arguments", "content", NULL };
	const char *const second[] = { "params", "x", "1", NULL };
	const char *const num[] = { "params", "n", NULL };
	const char *const obj[] = { "params", "arguments", NULL };
	const char *const missing[] = { "params", "nothing", NULL };
	const char *const past[] = { "a", "b", NULL };
	const char *const badindex[] = { "params", "x", "01", NULL };
	struct json_span sp;

	(void)state;
	assert_int_equal(find(doc, content, &sp), 1);
	assert_int_equal(sp.first, '"');
	assert_int_equal(sp.len, 12);
	assert_memory_equal(doc + sp.offset, "hello\\nworld", 12);
	assert_int_equal(find(doc, second, &sp), 1);
	assert_int_equal(sp.first, 'f');
	assert_memory_equal(doc + sp.offset, "false", sp.len);
	assert_int_equal(find(doc, num, &sp), 1);
	assert_memory_equal(doc + sp.offset, "-1.5e+3", sp.len);
	assert_int_equal(find(doc, obj, &sp), 1);
	assert_int_equal(sp.first, '{');
	assert_int_equal(doc[sp.offset + sp.len - 1], '}');
	assert_int_equal(find(doc, missing, &sp), 0);
	assert_int_equal(find(doc, past, &sp), 0);
	assert_int_equal(find(doc, badindex, &sp), 0);
	assert_int_equal(find(doc, NULL, &sp), 0);
	/* Escaped names match; the first of two equal names wins. */
	assert_int_equal(
		find("{\"par\\u0061ms\":{\"arguments\":{\"cont\\u0065nt\":\"a\",\"content\":\"b\"}}}", content, &sp),
		1);
	assert_int_equal(sp.len, 1);
	assert_int_equal(find("{\"params\":{\"arguments\":{\"content\":\"a\"}}}", content, &sp), 1);
	/* The path's string is only delimited: its escapes are the caller's
	 * to check, with json_string_decode(). */
	assert_int_equal(find("{\"params\":{\"arguments\":{\"content\":\"\\u0000\"}}}", content, &sp), 1);
	assert_int_equal(json_string_decode("\\u0000", 6, (char[8]){ 0 }), -EINVAL);
	/* ... but every other string is checked. */
	assert_int_equal(find("{\"params\":{\"arguments\":{\"other\":\"\\u0000\"}}}", content, &sp), -EINVAL);
	assert_int_equal(find("{\"params\":{\"arguments\":{\"content\":\"a\x01\"}}}", content, &sp), -EINVAL);
}

static void test_several_paths(void **state)
{
	const char *doc = "{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"T\"}],\"structuredContent\":"
			  "{\"content\":\"S\"},\"isError\":false},\"jsonrpc\":\"2.0\",\"id\":7}";
	const char *const id[] = { "id", NULL }, *const text[] = { "result", "content", "0", "text", NULL },
			  *const sc[] = { "result", "structuredContent", "content", NULL },
			  *const err[] = { "result", "isError", NULL }, *const none[] = { "method", NULL };
	const char *const *paths[] = { id, text, sc, err, none };
	struct json_span sp[5];

	(void)state;
	assert_int_equal(json_scan_paths(doc, strlen(doc), paths, 5, 64, sp), 0);
	assert_memory_equal(doc + sp[0].offset, "7", 1);
	assert_memory_equal(doc + sp[1].offset, "T", 1);
	assert_memory_equal(doc + sp[2].offset, "S", 1);
	assert_int_equal(sp[3].first, 'f');
	assert_int_equal(sp[4].first, 0);
	assert_int_equal(json_scan_paths(doc, strlen(doc) - 1, paths, 5, 64, sp), -EINVAL);
	assert_int_equal(sp[0].first, 0);
}

static void test_grammar_and_depth(void **state)
{
	static const char *const good[] = { "0",	   "-0",   "1.5",  "-1e5", "1E+2", "2e-0",
					    "true",	   "null", "\"\"", "[]",   "{}",   " [ 1 , { \"a\" : [ ] } ] ",
					    "\"\\u00e9\"", "1\r\n" };
	static const char *const bad[] = { "",	     " ",	   "01",    "-",    "1.",    ".5",	"1e",
					   "+1",     "tru",	   "nul",   "[1,]", "[,1]",  "{\"a\"}", "{\"a\":}",
					   "{a:1}",  "{\"a\":1,}", "[1 2]", "1 2",  "\"abc", "[",	"{",
					   "\"\\\"", "'a'",	   "NaN",   "[1]]" };
	struct json_span sp;
	char deep[300];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (find(good[i], NULL, &sp) != 0)
			fail_msg("'%s' refused", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (find(bad[i], NULL, &sp) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	deep[200] = '\0';
	assert_int_equal(json_scan_find(deep, 200, NULL, 100, &sp), 0);
	assert_int_equal(json_scan_find(deep, 200, NULL, 99, &sp), -ELOOP);
}

/* A random string text: ASCII, escapes right and wrong, UTF-8 right and
 * wrong, raw controls. */
static size_t random_text(char *o, size_t max)
{
	static const char *const pieces[] = {
		"a",
		"Z",
		" ",
		"\\n",
		"\\\"",
		"\\\\",
		"\\/",
		"\\t",
		"\\u00e9",
		"\\u0000",
		"\\ud83d",
		"\\ude00",
		"\\u12",
		"\\q",
		"\\",
		"\xc3\xa9",
		"\xe2\x82\xac",
		"\xf0\x9f\x98\x80",
		"\xc3",
		"\xa9",
		"\xed\xa0\x80",
		"\xc0\xaf",
		"\xf4\x90\x80\x80",
		"\x01",
		"\x7f",
		"\"",
		"\\uD800\\uDC00",
		"\\uDBFF",
		"\\uDFFF",
		"0123456789",
		"\xef\xbf\xbf",
	};
	size_t n = 0;

	while (n + 16 < max && rnd(12) != 0) {
		const char *p = pieces[rnd(sizeof(pieces) / sizeof(pieces[0]))];

		memcpy(o + n, p, strlen(p));
		n += strlen(p);
	}
	return n;
}

static void test_strings_against_jansson(void **state)
{
	char text[512], doc[520], out[512];

	(void)state;
	for (int i = 0; i < 100000; i++) {
		size_t n = random_text(text, sizeof(text));
		ssize_t got = json_string_decode(text, n, out);
		json_error_t err;
		json_t *v;

		doc[0] = '"';
		memcpy(doc + 1, text, n);
		doc[n + 1] = '"';
		v = json_loadb(doc, n + 2, JSON_DECODE_ANY, &err);
		if (!v != (got < 0))
			fail_msg("'%.*s': jansson %s, json-scan %zd", (int)n, text, v ? "accepts" : err.text, got);
		if (v && ((size_t)got != json_string_length(v) || memcmp(out, json_string_value(v), (size_t)got) != 0))
			fail_msg("'%.*s': decoded differently", (int)n, text);
		/* Raw text (not JSON text) against jansson's own UTF-8 check. */
		{
			json_t *raw = json_stringn(text, n);

			assert_int_equal(json_text_valid(text, n), raw && !memchr(text, '\0', n));
			json_decref(raw);
		}
		json_decref(v);
	}
}

/* Mutated documents: where jansson accepts, the scanner must; where the
 * scanner accepts, jansson must too, except for numbers it cannot hold
 * (jansson refuses integers beyond int64 and reals that overflow). */
static void test_documents_against_jansson(void **state)
{
	static const char *const seeds[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/"
		"call\",\"params\":{\"name\":\"write_file\",\"arguments\":"
		"{\"path\":\"a/b\",\"content\":\"x\\ny\\u00e9\\ud83d\\ude00\"}}}",
		"[1,-2.5e3,true,false,null,\"s\",{\"k\":[{},[]]}, 0.0, -0]",
		"{\"a\" : { \"b\" : [ 1 , 2 , \"\\\"q\\\"\" ] } , \"c\" : \"\xc3\xa9\" }",
	};
	static const char alphabet[] = "{}[],:\"\\0123456789.eE+-truefalsn \t\r\nuD8\xc3\xa9\x01";
	char doc[512];

	(void)state;
	for (int i = 0; i < 100000; i++) {
		const char *seed = seeds[rnd(sizeof(seeds) / sizeof(seeds[0]))];
		size_t n = strlen(seed);
		struct json_span sp;
		json_error_t err;
		json_t *v;
		int r;

		memcpy(doc, seed, n);
		for (int m = (int)rnd(3) + 1; m > 0; m--) {
			size_t at = rnd((uint32_t)n + 1);
			char c = alphabet[rnd(sizeof(alphabet) - 1)];

			switch (rnd(3)) {
			case 0: /* replace */
				if (at < n)
					doc[at] = c;
				break;
			case 1: /* insert */
				if (n + 1 < sizeof(doc)) {
					memmove(doc + at + 1, doc + at, n - at);
					doc[at] = c;
					n++;
				}
				break;
			default: /* delete */
				if (at < n) {
					memmove(doc + at, doc + at + 1, n - at - 1);
					n--;
				}
			}
		}
		v = json_loadb(doc, n, JSON_DECODE_ANY, &err);
		r = json_scan_find(doc, n, NULL, 64, &sp);
		if (v && r != 0)
			fail_msg("'%.*s': jansson accepts, json-scan %d", (int)n, doc, r);
		if (!v && r == 0 && !strstr(err.text, "too big") && !strstr(err.text, "overflow"))
			fail_msg("'%.*s': json-scan accepts, jansson: %s", (int)n, doc, err.text);
		json_decref(v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_escapes),
		cmocka_unit_test(test_decode_refusals),
		cmocka_unit_test(test_decode_in_place),
		cmocka_unit_test(test_text_valid),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_several_paths),
		cmocka_unit_test(test_grammar_and_depth),
		cmocka_unit_test(test_strings_against_jansson),
		cmocka_unit_test(test_documents_against_jansson),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
