/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Display helpers of the operator surface: masking, escaping, rendering and
 * diffs. Display only: nothing here feeds a decision. */

#include "operator-display.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "cleanup.h"

bool cordon_display_codepoint_is_hidden(uint32_t cp)
{
	/* clang-format off */
	static const struct { uint32_t lo, hi; } ranges[] = {
		{ 0x0000, 0x0008 }, { 0x000b, 0x001f },	/* C0 controls but \t and \n */
		{ 0x007f, 0x00a0 },			/* DEL, C1 controls, NBSP */
		{ 0x00ad, 0x00ad },			/* soft hyphen */
		{ 0x034f, 0x034f },			/* combining grapheme joiner */
		{ 0x061c, 0x061c },			/* Arabic letter mark (bidi) */
		{ 0x115f, 0x1160 },			/* Hangul choseong/jungseong fillers */
		{ 0x1680, 0x1680 },			/* Ogham space mark */
		{ 0x17b4, 0x17b5 },			/* Khmer inherent vowels (invisible) */
		{ 0x180b, 0x180f },			/* Mongolian variation selectors, vowel separator */
		{ 0x2000, 0x200f },			/* en/em/thin spaces, ZWSP, ZWNJ, ZWJ, LRM, RLM */
		{ 0x2028, 0x202f },			/* line/para separators, LRE RLE PDF LRO RLO, NNBSP */
		{ 0x205f, 0x206f },			/* MMSP, word joiner, invisible operators, LRI RLI FSI PDI */
		{ 0x3000, 0x3000 },			/* ideographic space */
		{ 0x3164, 0x3164 },			/* Hangul filler */
		{ 0xe000, 0xf8ff },			/* private use */
		{ 0xfe00, 0xfe0f },			/* variation selectors */
		{ 0xfeff, 0xfeff },			/* BOM / ZWNBSP */
		{ 0xffa0, 0xffa0 },			/* halfwidth Hangul filler */
		{ 0xfff0, 0xfffb },			/* specials, interlinear annotation */
		{ 0x1bca0, 0x1bca3 },			/* shorthand format controls */
		{ 0x1d173, 0x1d17a },			/* musical format controls */
		{ 0xe0000, 0xe007f },			/* Unicode tags (hidden ASCII) */
		{ 0xe0100, 0xe01ef },			/* variation selectors supplement */
		{ 0xf0000, 0x10ffff },			/* supplementary private use */
	};
	/* clang-format on */

	for (size_t i = 0; i < ELEMENTSOF(ranges); i++)
		if (cp >= ranges[i].lo && cp <= ranges[i].hi)
			return true;
	return false;
}

/* Decodes one UTF-8 sequence at s[0..n). Returns its length and writes the
 * code point, or 0 for an invalid sequence. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *ret)
{
	uint32_t cp;
	size_t len;

	if (n == 0)
		return 0;
	if (s[0] < 0x80) {
		*ret = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		cp = s[0] & 0x1f;
		len = 2;
	} else if ((s[0] & 0xf0) == 0xe0) {
		cp = s[0] & 0x0f;
		len = 3;
	} else if ((s[0] & 0xf8) == 0xf0) {
		cp = s[0] & 0x07;
		len = 4;
	} else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*ret = cp;
	return len;
}

static void fold(const char *s, char *out, size_t size)
{
	size_t o = 0;

	for (; *s && o + 1 < size; s++) {
		if (*s == '-' || *s == '_' || *s == '.')
			continue;
		out[o++] = (char)tolower((unsigned char)*s);
	}
	out[o] = 0;
}

bool cordon_display_key_is_secret(const char *key)
{
	static const char *const contains[] = {
		"token",      "secret",	   "passw",      "passphrase", "authorization", "apikey",	"accesskey",
		"privatekey", "credential", "cookie",    "bearer",     "sessionkey",    "signature",
	};
	static const char *const exact[] = { "auth", "pwd", "pin", "otp" };
	char f[256];

	if (!key)
		return false;
	fold(key, f, sizeof(f));
	for (size_t i = 0; i < ELEMENTSOF(contains); i++)
		if (strstr(f, contains[i]))
			return true;
	for (size_t i = 0; i < ELEMENTSOF(exact); i++)
		if (strcmp(f, exact[i]) == 0)
			return true;
	return false;
}

static bool starts_with(const char *s, size_t n, const char *p)
{
	size_t l = strlen(p);

	return n >= l && memcmp(s, p, l) == 0;
}

static bool token_char(char c)
{
	return isalnum((unsigned char)c) || c == '+' || c == '/' || c == '=' || c == '_' || c == '-' || c == '.' ||
	       c == '~';
}

/* Without libm: a random token over a 62-64 character alphabet uses many
 * distinct characters (a random 24-character one about 20), a hex digest at
 * most 16, words and identifiers far fewer than half their length. */
static bool looks_random(const char *s, size_t n)
{
	bool seen[256] = {}, alpha = false, digit = false;
	size_t distinct = 0, need;

	if (n < 24)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!token_char(s[i]))
			return false;
		alpha |= isalpha((unsigned char)s[i]) != 0;
		digit |= isdigit((unsigned char)s[i]) != 0;
		if (!seen[(unsigned char)s[i]]) {
			seen[(unsigned char)s[i]] = true;
			distinct++;
		}
	}
	need = n / 2 < 22 ? n / 2 : 22;
	return alpha && digit && distinct > 16 && distinct >= need;
}

static bool url_with_password(const char *s, size_t n)
{
	const char *p = memmem(s, n, "://", 3), *end, *at, *colon;

	if (!p)
		return false;
	p += 3;
	end = s + n;
	/* userinfo ends at the first '@' before any '/', '?' or '#'. */
	at = NULL;
	for (const char *q = p; q < end && *q != '/' && *q != '?' && *q != '#'; q++)
		if (*q == '@')
			at = q;
	if (!at)
		return false;
	colon = memchr(p, ':', (size_t)(at - p));
	return colon && colon + 1 < at;
}

bool cordon_display_value_is_secret(const char *s, size_t n)
{
	static const char *const prefixes[] = {
		"ghp_",	 "gho_",  "ghu_",    "ghs_",    "ghr_",	      "github_pat_", "xoxb-", "xoxp-", "xoxa-",
		"xoxr-", "xoxs-", "sk-",     "sk_live_", "sk_test_",   "rk_live_",    "pk_live_", "AKIA", "ASIA",
		"AIza",	 "glpat-", "npm_",   "pypi-",   "hf_",	      "shpat_",	     "SG.",
	};
	size_t dots = 0;

	if (!s || n == 0)
		return false;
	if (memmem(s, n, "PRIVATE KEY-----", 16))
		return true;
	if (starts_with(s, n, "Bearer ") || starts_with(s, n, "Basic ") || starts_with(s, n, "bearer ") ||
	    starts_with(s, n, "basic "))
		return n > 10;
	if (url_with_password(s, n))
		return true;
	for (size_t i = 0; i < n; i++)
		if (!token_char(s[i]))
			return false;
	/* Known prefixes need a body: "sk-" alone or "AKIA" in prose is not a key. */
	for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
		if (starts_with(s, n, prefixes[i]) && n >= strlen(prefixes[i]) + 12)
			return true;
	for (size_t i = 0; i < n; i++)
		dots += s[i] == '.';
	if (starts_with(s, n, "eyJ") && dots == 2 && n >= 30)
		return true; /* JWT: base64url("{\"...") . payload . signature */
	return looks_random(s, n);
}

int cordon_display_escape(const char *s, size_t n, char **ret, size_t *ret_count)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, count = 0, i = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return -ENOMEM;
	while (i < n) {
		uint32_t cp;
		size_t l = utf8_next((const unsigned char *)s + i, n - i, &cp);

		if (l == 0) {
			fprintf(f, "\\x{%02X}", (unsigned char)s[i]);
			count++;
			i++;
			continue;
		}
		if (cp == '\\')
			fputs("\\\\", f);
		else if (cp != '\n' && cp != '\t' && cordon_display_codepoint_is_hidden(cp)) {
			fprintf(f, "\\u{%04X}", cp);
			count++;
		} else
			fwrite(s + i, 1, l, f);
		i += l;
	}
	if (fclose(f) != 0)
		return -ENOMEM;
	*ret = TAKE_PTR(buf);
	if (ret_count)
		*ret_count = count;
	return 0;
}

struct render {
	FILE *f;
	bool mask;
	json_t *paths;
	size_t escaped;
	char path[1024];
};

static void render_string(struct render *r, const char *s, size_t n)
{
	size_t i = 0;

	fputc('"', r->f);
	while (i < n) {
		uint32_t cp;
		size_t l = utf8_next((const unsigned char *)s + i, n - i, &cp);

		if (l == 0) { /* cannot happen for admitted JSON; show the byte */
			fprintf(r->f, "\\x%02X", (unsigned char)s[i]);
			r->escaped++;
			i++;
			continue;
		}
		switch (cp) {
		case '"':
			fputs("\\\"", r->f);
			break;
		case '\\':
			fputs("\\\\", r->f);
			break;
		case '\n':
			fputs("\\n", r->f);
			break;
		case '\t':
			fputs("\\t", r->f);
			break;
		case '\r':
			fputs("\\r", r->f);
			break;
		default:
			if (cordon_display_codepoint_is_hidden(cp)) {
				if (cp >= 0x10000) {
					uint32_t v = cp - 0x10000;
					fprintf(r->f, "\\u%04X\\u%04X", 0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
				} else
					fprintf(r->f, "\\u%04X", cp);
				r->escaped++;
			} else
				fwrite(s + i, 1, l, r->f);
		}
		i += l;
	}
	fputc('"', r->f);
}

static void indent(struct render *r, unsigned depth)
{
	for (unsigned i = 0; i < depth; i++)
		fputs("  ", r->f);
}

static void masked(struct render *r, size_t bytes)
{
	fprintf(r->f, "<masked: %zu bytes>", bytes);
	if (r->paths)
		(void)json_array_append_new(r->paths, json_string(r->path));
}

static size_t value_bytes(const json_t *v)
{
	if (json_is_string(v))
		return json_string_length(v);
	{
		_cleanup_free_ char *s = NULL;
		size_t n = 0;

		if (cordon_jcs_encode(v, &s, &n) < 0)
			return 0;
		return n;
	}
}

struct member {
	const char *key;
	size_t len;
	const json_t *value;
};

static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	return cordon_jcs_compare_keys(x->key, x->len, y->key, y->len);
}

static int render_value(struct render *r, const json_t *v, unsigned depth);

static int render_object(struct render *r, const json_t *v, unsigned depth)
{
	size_t n = json_object_size(v), i = 0, plen = strlen(r->path);
	_cleanup_free_ struct member *m = NULL;
	const char *k;
	json_t *e;

	if (n == 0) {
		fputs("{}", r->f);
		return 0;
	}
	m = calloc(n, sizeof(*m));
	if (!m)
		return -ENOMEM;
	json_object_foreach((json_t *)v, k, e) {
		m[i++] = (struct member){ .key = k, .len = strlen(k), .value = e };
	}
	qsort(m, n, sizeof(*m), member_cmp);
	fputs("{\n", r->f);
	for (i = 0; i < n; i++) {
		int rr;

		snprintf(r->path + plen, sizeof(r->path) - plen, ".%s", m[i].key);
		indent(r, depth + 1);
		render_string(r, m[i].key, m[i].len);
		fputs(": ", r->f);
		if (r->mask && cordon_display_key_is_secret(m[i].key) && !json_is_null(m[i].value))
			masked(r, value_bytes(m[i].value));
		else {
			rr = render_value(r, m[i].value, depth + 1);
			if (rr < 0)
				return rr;
		}
		fputs(i + 1 < n ? ",\n" : "\n", r->f);
	}
	r->path[plen] = 0;
	indent(r, depth);
	fputc('}', r->f);
	return 0;
}

static int render_value(struct render *r, const json_t *v, unsigned depth)
{
	size_t plen = strlen(r->path);

	if (depth > 200)
		return -EINVAL;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return render_object(r, v, depth);
	case JSON_ARRAY: {
		size_t n = json_array_size(v);

		if (n == 0) {
			fputs("[]", r->f);
			return 0;
		}
		fputs("[\n", r->f);
		for (size_t i = 0; i < n; i++) {
			int rr;

			snprintf(r->path + plen, sizeof(r->path) - plen, "[%zu]", i);
			indent(r, depth + 1);
			rr = render_value(r, json_array_get(v, i), depth + 1);
			if (rr < 0)
				return rr;
			fputs(i + 1 < n ? ",\n" : "\n", r->f);
		}
		r->path[plen] = 0;
		indent(r, depth);
		fputc(']', r->f);
		return 0;
	}
	case JSON_STRING:
		if (r->mask && cordon_display_value_is_secret(json_string_value(v), json_string_length(v)))
			masked(r, json_string_length(v));
		else
			render_string(r, json_string_value(v), json_string_length(v));
		return 0;
	default: {
		_cleanup_free_ char *s = NULL;
		int rr = cordon_jcs_encode(v, &s, NULL);

		if (rr < 0)
			return rr;
		fputs(s, r->f);
		return 0;
	}
	}
}

int cordon_display_render(const json_t *v, bool mask, json_t *masked_paths, char **ret, size_t *ret_escaped)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	struct render r = { .mask = mask, .paths = masked_paths, .path = "$" };
	int rr;

	if (!v)
		return -EINVAL;
	r.f = open_memstream(&buf, &len);
	if (!r.f)
		return -ENOMEM;
	rr = render_value(&r, v, 0);
	if (fclose(r.f) != 0)
		return -ENOMEM;
	if (rr < 0)
		return rr;
	*ret = TAKE_PTR(buf);
	if (ret_escaped)
		*ret_escaped = r.escaped;
	return 0;
}

/* Splits text into lines (views into text, without the newline). */
static int split_lines(const char *text, const char ***ret_lines, size_t **ret_lens, size_t *ret_n)
{
	size_t n = 0, cap = 0;
	const char **lines = NULL;
	size_t *lens = NULL;
	const char *p = text ? text : "";

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			const char **nl2 = realloc(lines, nc * sizeof(*lines));
			size_t *ns;

			if (!nl2)
				goto oom;
			lines = nl2;
			ns = realloc(lens, nc * sizeof(*lens));
			if (!ns)
				goto oom;
			lens = ns;
			cap = nc;
		}
		lines[n] = p;
		lens[n] = l;
		n++;
		p += l + (nl ? 1 : 0);
	}
	*ret_lines = lines;
	*ret_lens = lens;
	*ret_n = n;
	return 0;
oom:
	free(lines);
	free(lens);
	return -ENOMEM;
}

static bool line_eq(const char *a, size_t al, const char *b, size_t bl)
{
	return al == bl && memcmp(a, b, al) == 0;
}

int cordon_display_diff(const char *a, const char *b, char **ret)
{
	_cleanup_free_ const char **al = NULL, **bl = NULL;
	_cleanup_free_ size_t *alen = NULL, *blen = NULL;
	_cleanup_free_ uint32_t *lcs = NULL;
	_cleanup_free_ char *buf = NULL;
	size_t na, nb, len = 0, i, j;
	FILE *f;
	int r;

	r = split_lines(a, &al, &alen, &na);
	if (r < 0)
		return r;
	r = split_lines(b, &bl, &blen, &nb);
	if (r < 0)
		return r;
	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	if ((na + 1) * (nb + 1) > 4u * 1024 * 1024) {
		for (i = 0; i < na; i++)
			fprintf(f, "- %.*s\n", (int)alen[i], al[i]);
		for (j = 0; j < nb; j++)
			fprintf(f, "+ %.*s\n", (int)blen[j], bl[j]);
		goto done;
	}
	lcs = calloc((na + 1) * (nb + 1), sizeof(*lcs));
	if (!lcs) {
		fclose(f);
		return -ENOMEM;
	}
#define LCS(x, y) lcs[(x) * (nb + 1) + (y)]
	for (i = na; i-- > 0;)
		for (j = nb; j-- > 0;)
			LCS(i, j) = line_eq(al[i], alen[i], bl[j], blen[j])
					    ? LCS(i + 1, j + 1) + 1
					    : (LCS(i + 1, j) >= LCS(i, j + 1) ? LCS(i + 1, j) : LCS(i, j + 1));
	i = j = 0;
	while (i < na || j < nb) {
		if (i < na && j < nb && line_eq(al[i], alen[i], bl[j], blen[j])) {
			fprintf(f, "  %.*s\n", (int)alen[i], al[i]);
			i++;
			j++;
		} else if (i < na && (j == nb || LCS(i + 1, j) >= LCS(i, j + 1))) {
			fprintf(f, "- %.*s\n", (int)alen[i], al[i]);
			i++;
		} else {
			fprintf(f, "+ %.*s\n", (int)blen[j], bl[j]);
			j++;
		}
	}
#undef LCS
done:
	if (fclose(f) != 0)
		return -ENOMEM;
	*ret = TAKE_PTR(buf);
	return 0;
}
