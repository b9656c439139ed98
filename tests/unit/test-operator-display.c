/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Display helpers: secret masking (by key and by value), escaping of
 * invisible, bidi and look-alike characters, rendering and diffs. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "canon.h"
#include "cleanup.h"
#include "operator-display.h"

static void test_secret_keys(void **state)
{
	static const char *const yes[] = {
		"token",
		"access_token",
		"refreshToken",
		"GITHUB_TOKEN",
		"secret",
		"client_secret",
		"password",
		"Passwd",
		"passphrase",
		"Authorization",
		"proxy-authorization",
		"api_key",
		"apiKey",
		"X-API-Key",
		"aws_access_key_id",
		"private_key",
		"privateKey",
		"credentials",
		"Cookie",
		"set-cookie",
		"auth",
		"pwd",
		"PIN",
		"otp",
		"bearer",
		"session_key",
		"signature",
	};
	static const char *const no[] = { "path",    "content",	    "key",    "name",	 "author",
					  "keyword", "description", "pinned", "options", "authority_host" };

	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(yes); i++)
		if (!cordon_display_key_is_secret(yes[i]))
			fail_msg("key %s should be secret", yes[i]);
	for (size_t i = 0; i < ELEMENTSOF(no); i++)
		if (cordon_display_key_is_secret(no[i]))
			fail_msg("key %s should not be secret", no[i]);
	assert_false(cordon_display_key_is_secret(NULL));
}

static void test_secret_values(void **state)
{
	static const char *const yes[] = {
		"ghp_abcdefghijklmnopqrstuvwxyz0123456789",
		"github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
		"xoxb-123456789012-abcdefghijkl",
		"sk-proj-abcdefghijklmnopqrstuvwxyz",
		"AKIAIOSFODNN7EXAMPLE",
		"AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
		"glpat-abcdefghij1234567890",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmno",
		"Bearer abcdef123456",
		"Basic dXNlcjpwYXNzd29yZA==",
		"https://user:hunter2@example.com/path",
		"postgres://app:s3cr3t@db:5432/app",
		"-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
		"q7Zt2Lm9Xv4Rk8Bn1Wc5Yh3Jd6Fp0Sg", /* random base62 */
		"dGhpcyBpcyBhIHNlY3JldCBrZXkgdmFsdWUgMTIzNDU2Nzg5MA==",
	};
	static const char *const no[] = {
		"",
		"hello world",
		"/home/user/projects/cordon/README.md",
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", /* sha256 hex */
		"da39a3ee5e6b4b0d3255bfef95601890afd80709",			    /* sha1 hex */
		"123e4567-e89b-12d3-a456-426614174000",				    /* uuid */
		"sk-",
		"AKIA",
		"https://example.com/a:b@c",
		"https://user@example.com/",
		"this_is_a_rather_long_identifier_name",
		"Bearer",
		"2026-11-29T20:50:40.123456Z",
	};

	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(yes); i++)
		if (!cordon_display_value_is_secret(yes[i], strlen(yes[i])))
			fail_msg("value %s should be masked", yes[i]);
	for (size_t i = 0; i < ELEMENTSOF(no); i++)
		if (cordon_display_value_is_secret(no[i], strlen(no[i])))
			fail_msg("value %s should not be masked", no[i]);
}

static void test_hidden_codepoints(void **state)
{
	static const uint32_t hidden[] = { 0x00,     0x1b,   0x7f,   0x85,   0xa0,    0xad,    0x061c,	0x200b,
					   0x200d,   0x200e, 0x200f, 0x202a, 0x202e,  0x2066,  0x2069,	0x2060,
					   0x2062,   0xfeff, 0xfe0f, 0x3164, 0xe0041, 0xe007f, 0xe0100, 0xe000,
					   0x10fffd, 0x2028, 0x2029, 0x3000, 0x115f,  0x180e };
	static const uint32_t visible[] = { 'a', ' ', '\n', '\t', 0xe9, 0x4e2d, 0x1f600, 0x2014, 0x0627, 0x05d0 };

	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(hidden); i++)
		if (!cordon_display_codepoint_is_hidden(hidden[i]) && hidden[i] != '\n' && hidden[i] != '\t')
			fail_msg("U+%04X should be hidden", hidden[i]);
	for (size_t i = 0; i < ELEMENTSOF(visible); i++)
		if (cordon_display_codepoint_is_hidden(visible[i]) && visible[i] != '\n' && visible[i] != '\t')
			fail_msg("U+%04X should be visible", visible[i]);
}

static void test_escape(void **state)
{
	_cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;
	size_t n;
	/* "report" + RLO + "fdp.exe": reads "reportexe.pdf" on screen */
	const char rlo[] = "report\xe2\x80\xae"
			   "fdp.exe";
	/* Unicode tags carrying hidden ASCII "hi", and a zero-width space */
	const char tags[] = "ok\xf3\xa0\x81\xa8\xf3\xa0\x81\xa9 a\xe2\x80\x8b"
			    "b";
	const char forge[] = "\\u{202E}\xff\tx\ny \xc3\xa9";

	(void)state;
	assert_int_equal(cordon_display_escape(rlo, strlen(rlo), &a, &n), 0);
	assert_string_equal(a, "report\\u{202E}fdp.exe");
	assert_int_equal(n, 1);
	assert_int_equal(cordon_display_escape(tags, strlen(tags), &b, &n), 0);
	assert_string_equal(b, "ok\\u{E0068}\\u{E0069} a\\u{200B}b");
	assert_int_equal(n, 3);
	/* a literal backslash cannot forge an escape; invalid bytes are shown;
	 * newlines, tabs and ordinary non-ASCII stay */
	assert_int_equal(cordon_display_escape(forge, sizeof(forge) - 1, &c, &n), 0);
	assert_string_equal(c, "\\\\u{202E}\\x{FF}\tx\ny \xc3\xa9");
	assert_int_equal(n, 1);
}

static json_t *parse(const char *s)
{
	json_t *v = NULL;

	assert_int_equal(cordon_canon_decode(s, strlen(s), NULL, &v, NULL), 0);
	return v;
}

static void test_render_masks_and_escapes(void **state)
{
	json_t *v = parse("{\"path\":\"/tmp/a\\u202eb\",\"headers\":{\"Authorization\":\"Bearer xyz-123\","
			  "\"Accept\":\"*/*\"},\"list\":[1,\"ghp_abcdefghijklmnopqrstuvwxyz0123456789\",true,null],"
			  "\"password\":null,\"n\":1e21,\"token\":{\"a\":1},\"z\":\"\\\"quoted\\\"\",\"\\u00e9\":\"x\","
			  "\"\\ud83d\\ude00\":0,\"\\ufb33\":0}");
	json_t *paths = json_array();
	_cleanup_free_ char *text = NULL;
	size_t escaped;

	(void)state;
	assert_int_equal(cordon_display_render(v, true, paths, &text, &escaped), 0);
	assert_string_equal(text, "{\n"
				  "  \"headers\": {\n"
				  "    \"Accept\": \"*/*\",\n"
				  "    \"Authorization\": <masked: 14 bytes>\n"
				  "  },\n"
				  "  \"list\": [\n"
				  "    1,\n"
				  "    <masked: 40 bytes>,\n"
				  "    true,\n"
				  "    null\n"
				  "  ],\n"
				  "  \"n\": 1e+21,\n"
				  "  \"password\": null,\n"
				  "  \"path\": \"/tmp/a\\u202Eb\",\n"
				  "  \"token\": <masked: 7 bytes>,\n"
				  "  \"z\": \"\\\"quoted\\\"\",\n"
				  "  \"\xc3\xa9\": \"x\",\n"
				  "  \"\xf0\x9f\x98\x80\": 0,\n"
				  "  \"\xef\xac\xb3\": 0\n"
				  "}");
	assert_int_equal(escaped, 1);
	assert_int_equal(json_array_size(paths), 3);
	assert_string_equal(json_string_value(json_array_get(paths, 0)), "$.headers.Authorization");
	assert_string_equal(json_string_value(json_array_get(paths, 1)), "$.list[1]");
	assert_string_equal(json_string_value(json_array_get(paths, 2)), "$.token");
	free(text);
	text = NULL;
	/* unmasked rendering (tool definitions) still escapes */
	assert_int_equal(cordon_display_render(v, false, NULL, &text, &escaped), 0);
	assert_non_null(strstr(text, "Bearer xyz-123"));
	assert_non_null(strstr(text, "\\u202E"));
	free(text);
	text = NULL;
	{
		/* astral hidden code points render as a surrogate pair escape */
		json_t *s = json_string("a\xf3\xa0\x81\xa8");

		assert_int_equal(cordon_display_render(s, true, NULL, &text, &escaped), 0);
		assert_string_equal(text, "\"a\\uDB40\\uDC68\"");
		json_decref(s);
	}
	json_decref(v);
	json_decref(paths);
	assert_int_equal(cordon_display_render(NULL, true, NULL, &text, NULL), -EINVAL);
}

static void test_masking_is_display_only(void **state)
{
	/* Two calls differing only in a masked value render identically: the
	 * binding (over the JCS bytes) is what tells them apart. */
	json_t *a = parse("{\"token\":\"one-secret-value\"}"), *b = parse("{\"token\":\"another-secret\"}");
	_cleanup_free_ char *ta = NULL, *tb = NULL, *ja = NULL, *jb = NULL;

	(void)state;
	assert_int_equal(cordon_display_render(a, true, NULL, &ta, NULL), 0);
	assert_int_equal(cordon_display_render(b, true, NULL, &tb, NULL), 0);
	assert_null(strstr(ta, "one-secret"));
	assert_int_equal(cordon_jcs_encode(a, &ja, NULL), 0);
	assert_int_equal(cordon_jcs_encode(b, &jb, NULL), 0);
	assert_string_not_equal(ja, jb);
	assert_string_not_equal(ta, tb); /* lengths differ: 16 vs 14 bytes */
	json_decref(a);
	json_decref(b);
}

static void test_diff(void **state)
{
	_cleanup_free_ char *d1 = NULL, *d2 = NULL, *d3 = NULL;

	(void)state;
	assert_int_equal(cordon_display_diff("a\nb\nc\n", "a\nB\nc\nd\n", &d1), 0);
	assert_string_equal(d1, "  a\n- b\n+ B\n  c\n+ d\n");
	assert_int_equal(cordon_display_diff(NULL, "x", &d2), 0);
	assert_string_equal(d2, "+ x\n");
	assert_int_equal(cordon_display_diff("same\n", "same\n", &d3), 0);
	assert_string_equal(d3, "  same\n");
}

/* Renders a JSON string value with masking and returns the text. */
static char *render_one(const char *value, json_t *paths)
{
	json_t *v = json_string(value);
	char *text = NULL;

	assert_non_null(v);
	assert_int_equal(cordon_display_render(v, true, paths, &text, NULL), 0);
	json_decref(v);
	return text;
}

#define GHP "ghp_abcdefghijklmnopqrstuvwxyz0123456789"

/* Issue 11 finding 8: one masking rule. A credential is masked the same way
 * whether it is the whole value or a word inside a longer one: the marker
 * replaces exactly its bytes, the rest stays visible and quoted. */
static void test_token_in_longer_string_masked_like_whole_value(void **state)
{
	/* clang-format off */
	static const struct { const char *in, *out; } cases[] = {
		{ GHP, "<masked: 40 bytes>" },
		{ "curl -H 'Authorization: token " GHP "' https://api.github.com/user",
		  "\"curl -H 'Authorization: token \" <masked: 40 bytes> \"' https://api.github.com/user\"" },
		{ "export GH=" GHP, "\"export GH=\" <masked: 40 bytes>" },
		{ GHP " " GHP, "<masked: 40 bytes> \" \" <masked: 40 bytes>" },
		{ "Bearer xyz-123", "\"Bearer \" <masked: 7 bytes>" },
		{ "Authorization: Bearer abcdefgh", "\"Authorization: Bearer \" <masked: 8 bytes>" },
		{ "Bearer of bad news", "\"Bearer of bad news\"" },	/* "of": too short for a credential */
		{ "https://user:hunter2@example.com/x", "\"https://user:\" <masked: 7 bytes> \"@example.com/x\"" },
		{ "echo '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----' > k",
		  "\"echo '\" <masked: 58 bytes> \"' > k\"" },
		{ "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n", "<masked: 41 bytes>" },	/* no END: to the end */
		{ "ls -l /tmp; echo done", "\"ls -l /tmp; echo done\"" },
		{ "sha256 0123456789abcdef0123456789abcdef", "\"sha256 0123456789abcdef0123456789abcdef\"" },
		/* A value cannot imitate the marker: its quotes stay escaped. */
		{ "a\" <masked: 4 bytes> \"b", "\"a\\\" <masked: 4 bytes> \\\"b\"" },
	};
	/* clang-format on */

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *text = render_one(cases[i].in, NULL);

		print_message("%s\n", text);
		assert_string_equal(text, cases[i].out);
	}
	{
		/* Every marker has its path, in-string ones too. */
		json_t *paths = json_array();
		json_t *v = json_pack("{s:s, s:s}", "cmd", "git push https://x:" GHP "@github.com/o/r", "token", "abc");
		_cleanup_free_ char *text = NULL;

		assert_int_equal(cordon_display_render(v, true, paths, &text, NULL), 0);
		assert_string_equal(text, "{\n"
					  "  \"cmd\": \"git push https://x:\" <masked: 40 bytes> \"@github.com/o/r\",\n"
					  "  \"token\": <masked: 3 bytes>\n"
					  "}");
		assert_int_equal(json_array_size(paths), 2);
		assert_string_equal(json_string_value(json_array_get(paths, 0)), "$.cmd");
		assert_string_equal(json_string_value(json_array_get(paths, 1)), "$.token");
		json_decref(paths);
		json_decref(v);
	}
}

static void test_secret_spans(void **state)
{
	struct cordon_display_span sp[4];
	const char *s = "a " GHP " b";

	(void)state;
	assert_int_equal(cordon_display_secret_spans(s, strlen(s), sp, 4), 1);
	assert_int_equal(sp[0].off, 2);
	assert_int_equal(sp[0].len, 40);
	assert_int_equal(cordon_display_secret_spans(GHP, 40, sp, 4), 1);
	assert_int_equal(sp[0].off, 0);
	assert_int_equal(sp[0].len, 40);
	assert_int_equal(cordon_display_secret_spans("hello world", 11, sp, 4), 0);
	assert_int_equal(cordon_display_secret_spans(NULL, 0, sp, 4), 0);
	/* Bounded: never more than max, and the last span covers the rest. */
	s = GHP " " GHP " " GHP;
	assert_int_equal(cordon_display_secret_spans(s, strlen(s), sp, 2), 2);
	assert_int_equal(sp[0].off, 0);
	assert_int_equal(sp[0].len, 40);
	assert_int_equal(sp[1].off, 41);
	assert_int_equal(sp[1].len, 81);
}

/* Issue 11 finding 9: text mixing look-alike scripts is flagged, with the
 * scripts named in a fixed order. */
static void test_mixed_scripts(void **state)
{
	char buf[128];
	/* "p\u0430th": Cyrillic a; "\u0391pi": Greek capital alpha. */
	static const char cyr_key[] = "p\xd0\xb0th", greek[] = "\xce\x91pi";

	(void)state;
	assert_true(cordon_display_mixed_scripts(cyr_key, strlen(cyr_key), true, buf, sizeof(buf)));
	assert_string_equal(buf, "Latin, Cyrillic");
	assert_true(cordon_display_mixed_scripts(greek, strlen(greek), true, buf, sizeof(buf)));
	assert_string_equal(buf, "Latin, Greek");
	/* Whole-script words are not mixed; digits and CJK do not count. */
	assert_false(cordon_display_mixed_scripts("path", 4, true, NULL, 0));
	assert_false(cordon_display_mixed_scripts("\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82, world", 19, false,
						  NULL, 0));
	assert_true(cordon_display_mixed_scripts("\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82, world", 19, true,
						 buf, sizeof(buf)));
	assert_false(cordon_display_mixed_scripts("file2\xe6\x96\x87\xe4\xbb\xb6", 11, false, NULL, 0));
	assert_false(cordon_display_mixed_scripts("abc123", 6, false, NULL, 0));
	{
		json_t *v =
			json_pack("{s:s, s:s, s:s}", cyr_key, "/etc/passwd", "url", "https://p\xd0\xb0ypal.com/login",
				  "note", "\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82, world");
		json_t *warnings = json_array();
		struct cordon_display_options o = { .mask = true, .warnings = warnings };
		_cleanup_free_ char *text = NULL;

		assert_int_equal(cordon_display_render_opts(v, &o, &text, NULL), 0);
		assert_int_equal(json_array_size(warnings), 2);
		assert_string_equal(json_string_value(json_array_get(warnings, 0)),
				    "$.p\xd0\xb0th: key contains characters from several scripts: Latin, Cyrillic");
		assert_string_equal(json_string_value(json_array_get(warnings, 1)),
				    "$.url: value contains characters from several scripts: Latin, Cyrillic");
		json_decref(warnings);
		json_decref(v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_secret_keys),
		cmocka_unit_test(test_secret_values),
		cmocka_unit_test(test_hidden_codepoints),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_render_masks_and_escapes),
		cmocka_unit_test(test_masking_is_display_only),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_token_in_longer_string_masked_like_whole_value),
		cmocka_unit_test(test_secret_spans),
		cmocka_unit_test(test_mixed_scripts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
