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
		"token",      "secret",	    "passw",  "passphrase", "authorization", "apikey",	  "accesskey",
		"privatekey", "credential", "cookie", "bearer",	    "sessionkey",    "signature",
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
		"ghp_",	 "gho_",   "ghu_", "ghs_",     "ghr_",	   "github_pat_", "xoxb-",    "xoxp-", "xoxa-",
		"xoxr-", "xoxs-",  "sk-",  "sk_live_", "sk_test_", "rk_live_",	  "pk_live_", "AKIA",  "ASIA",
		"AIza",	 "glpat-", "npm_", "pypi-",    "hf_",	   "shpat_",	  "SG.",
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

static bool at_word_start(const char *s, size_t i)
{
	return i == 0 || !isalnum((unsigned char)s[i - 1]);
}

static size_t add_span(struct cordon_display_span *spans, size_t n_spans, size_t max, size_t off, size_t len)
{
	if (len == 0)
		return n_spans;
	/* Overlapping or touching spans merge. */
	for (size_t i = 0; i < n_spans; i++)
		if (off <= spans[i].off + spans[i].len && spans[i].off <= off + len) {
			size_t end = off + len > spans[i].off + spans[i].len ? off + len : spans[i].off + spans[i].len;

			spans[i].off = off < spans[i].off ? off : spans[i].off;
			spans[i].len = end - spans[i].off;
			return n_spans;
		}
	if (n_spans < max) {
		spans[n_spans++] = (struct cordon_display_span){ .off = off, .len = len };
		return n_spans;
	}
	/* Full: the last span grows to cover this one and everything between
	 * (more is masked, never less). */
	{
		struct cordon_display_span *l = &spans[max - 1];
		size_t end = off + len > l->off + l->len ? off + len : l->off + l->len;

		l->off = off < l->off ? off : l->off;
		l->len = end - l->off;
	}
	return n_spans;
}

static int span_cmp(const void *a, const void *b)
{
	const struct cordon_display_span *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

size_t cordon_display_secret_spans(const char *s, size_t n, struct cordon_display_span *spans, size_t max)
{
	static const char *const schemes[] = { "Bearer ", "bearer ", "Basic ", "basic ", "BEARER ", "BASIC " };
	size_t k = 0, i;
	const char *p;

	if (!s || n == 0 || max == 0)
		return 0;

	/* A PEM private key: from its BEGIN line (or the start of the line
	 * naming it) to the end of its END line (or the end of the text). */
	for (p = s; (p = memmem(p, (size_t)(s + n - p), "PRIVATE KEY-----", 16));) {
		const char *begin = p, *end, *e;

		while (begin > s && begin[-1] != '\n' &&
		       !(begin - s >= 10 && memcmp(begin - 10, "-----BEGIN", 10) == 0))
			begin--;
		if (begin - s >= 10 && memcmp(begin - 10, "-----BEGIN", 10) == 0)
			begin -= 10;
		p += 16;
		e = memmem(p, (size_t)(s + n - p), "-----END", 8);
		end = s + n;
		if (e) {
			const char *close = memmem(e + 8, (size_t)(s + n - e - 8), "-----", 5);

			if (close)
				end = close + 5;
		}
		k = add_span(spans, k, max, (size_t)(begin - s), (size_t)(end - begin));
		p = end;
	}

	/* "Bearer x" / "Basic x": the credential after the scheme. */
	for (size_t j = 0; j < ELEMENTSOF(schemes); j++)
		for (p = s; (p = memmem(p, (size_t)(s + n - p), schemes[j], strlen(schemes[j])));) {
			size_t start = (size_t)(p - s), w;

			p += strlen(schemes[j]);
			if (!at_word_start(s, start))
				continue;
			while (p < s + n && *p == ' ')
				p++;
			for (w = 0; p + w < s + n && token_char(p[w]); w++)
				;
			if (w >= 4)
				k = add_span(spans, k, max, (size_t)(p - s), w);
			p += w;
		}

	/* A URL with a password: the password. */
	for (p = s; (p = memmem(p, (size_t)(s + n - p), "://", 3));) {
		const char *u = p + 3, *at = NULL, *colon;

		p = u;
		for (const char *q = u; q < s + n && *q != '/' && *q != '?' && *q != '#' && !isspace((unsigned char)*q);
		     q++)
			if (*q == '@')
				at = q;
		if (!at)
			continue;
		colon = memchr(u, ':', (size_t)(at - u));
		if (colon && colon + 1 < at)
			k = add_span(spans, k, max, (size_t)(colon + 1 - s), (size_t)(at - colon - 1));
	}

	/* Every word (a run of token characters) that is a credential on its
	 * own: the same rule as for a whole value. An '=' followed by more
	 * than padding is an assignment ("GH=ghp_..."), so it ends a word. */
	for (i = 0; i < n;) {
		size_t w = 0;

		if (!token_char(s[i]) || s[i] == '=') {
			i++;
			continue;
		}
		while (i + w < n && token_char(s[i + w]) &&
		       !(s[i + w] == '=' && i + w + 1 < n && token_char(s[i + w + 1]) && s[i + w + 1] != '='))
			w++;
		if (cordon_display_value_is_secret(s + i, w))
			k = add_span(spans, k, max, i, w);
		i += w;
	}
	if (k > 1) {
		/* Merge again after sorting (a later span may join two). */
		size_t m = 0;

		qsort(spans, k, sizeof(*spans), span_cmp);
		for (i = 1; i < k; i++) {
			if (spans[i].off <= spans[m].off + spans[m].len) {
				size_t end = spans[i].off + spans[i].len;

				if (end > spans[m].off + spans[m].len)
					spans[m].len = end - spans[m].off;
			} else
				spans[++m] = spans[i];
		}
		k = m + 1;
	}
	return k;
}

/* clang-format off */
static const struct {
	uint32_t lo, hi;
	unsigned script;
} script_ranges[] = {
	{ 'A', 'Z', 0 }, { 'a', 'z', 0 },
	{ 0x00c0, 0x024f, 0 },		/* Latin-1 letters, Latin Extended-A/B */
	{ 0x1e00, 0x1eff, 0 },		/* Latin Extended Additional */
	{ 0xff21, 0xff3a, 0 }, { 0xff41, 0xff5a, 0 },	/* fullwidth Latin */
	{ 0x0370, 0x03ff, 1 }, { 0x1f00, 0x1fff, 1 },	/* Greek */
	{ 0x0400, 0x052f, 2 }, { 0x1c80, 0x1c8f, 2 },	/* Cyrillic */
	{ 0x2de0, 0x2dff, 2 }, { 0xa640, 0xa69f, 2 },
	{ 0x0531, 0x058f, 3 },				/* Armenian */
	{ 0x13a0, 0x13ff, 4 }, { 0xab70, 0xabbf, 4 },	/* Cherokee */
	{ 0x1d400, 0x1d7ff, 5 },			/* mathematical alphanumerics */
};
/* clang-format on */
static const char *const script_names[] = { "Latin", "Greek", "Cyrillic", "Armenian", "Cherokee", "Mathematical" };

/* The look-alike script of a code point (an index into script_names), or -1
 * for anything else (digits, punctuation, other scripts). */
static int confusable_script(uint32_t cp)
{
	for (size_t i = 0; i < ELEMENTSOF(script_ranges); i++)
		if (cp >= script_ranges[i].lo && cp <= script_ranges[i].hi)
			return (int)script_ranges[i].script;
	return -1;
}

static unsigned scripts_of(const char *s, size_t n)
{
	unsigned mask = 0;

	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t l = utf8_next((const unsigned char *)s + i, n - i, &cp);
		int sc;

		if (l == 0) {
			i++;
			continue;
		}
		sc = confusable_script(cp);
		if (sc >= 0)
			mask |= 1u << sc;
		i += l;
	}
	return mask;
}

static bool several(unsigned mask)
{
	return mask & (mask - 1);
}

static void format_scripts(unsigned mask, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < ELEMENTSOF(script_names); i++)
		if (mask & (1u << i)) {
			int w = snprintf(buf + off, size - off, "%s%s", off ? ", " : "", script_names[i]);

			if (w < 0 || (size_t)w >= size - off)
				return;
			off += (size_t)w;
		}
}

bool cordon_display_mixed_scripts(const char *s, size_t n, bool whole, char *buf, size_t size)
{
	unsigned found = 0;

	if (!s)
		return false;
	if (whole)
		found = scripts_of(s, n);
	else
		/* Per word: a word is a run of anything but ASCII spaces and
		 * punctuation, so "pаypal" mixes, "Привет, world" does not. */
		for (size_t i = 0; i < n;) {
			size_t w = 0;
			unsigned m;

			while (i + w < n && ((unsigned char)s[i + w] >= 0x80 || isalnum((unsigned char)s[i + w])))
				w++;
			if (w == 0) {
				i++;
				continue;
			}
			m = scripts_of(s + i, w);
			if (several(m))
				found |= m;
			i += w;
		}
	if (!several(found))
		return false;
	if (buf && size)
		format_scripts(found, buf, size);
	return true;
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
	json_t *warnings;
	size_t escaped;
	char path[1024];
};

static void render_string_raw(struct render *r, const char *s, size_t n)
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

static void warn_scripts(struct render *r, const char *what, const char *s, size_t n, bool whole)
{
	char scripts[128];

	if (!r->warnings || !cordon_display_mixed_scripts(s, n, whole, scripts, sizeof(scripts)))
		return;
	(void)json_array_append_new(r->warnings, json_sprintf("%s: %s contains characters from several scripts: %s",
							      r->path, what, scripts));
}

/* A string value. With masking, every credential in it is replaced by the
 * same unquoted marker whether it is the whole value or a word inside a
 * longer one; the rest stays quoted around it:
 *	"curl -H \"Authorization: Bearer " <masked: 40 bytes> "\" https://x"
 * A value cannot imitate the marker: its quotes are always escaped. */
static void render_string(struct render *r, const char *s, size_t n)
{
	struct cordon_display_span spans[32];
	size_t k = 0, at = 0;

	warn_scripts(r, "value", s, n, false);
	if (r->mask)
		k = cordon_display_secret_spans(s, n, spans, ELEMENTSOF(spans));
	if (k == 0) {
		render_string_raw(r, s, n);
		return;
	}
	for (size_t i = 0; i < k; i++) {
		if (spans[i].off > at) {
			render_string_raw(r, s + at, spans[i].off - at);
			fputc(' ', r->f);
		}
		masked(r, spans[i].len);
		at = spans[i].off + spans[i].len;
		if (at < n)
			fputc(' ', r->f);
	}
	if (at < n)
		render_string_raw(r, s + at, n - at);
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
	json_object_foreach((json_t *)v, k, e)
	{
		m[i++] = (struct member){ .key = k, .len = strlen(k), .value = e };
	}
	qsort(m, n, sizeof(*m), member_cmp);
	fputs("{\n", r->f);
	for (i = 0; i < n; i++) {
		int rr;

		snprintf(r->path + plen, sizeof(r->path) - plen, ".%s", m[i].key);
		indent(r, depth + 1);
		warn_scripts(r, "key", m[i].key, m[i].len, true);
		render_string_raw(r, m[i].key, m[i].len);
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
	struct cordon_display_options o = { .mask = mask, .masked_paths = masked_paths };

	return cordon_display_render_opts(v, &o, ret, ret_escaped);
}

int cordon_display_render_opts(const json_t *v, const struct cordon_display_options *o, char **ret, size_t *ret_escaped)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	struct render r = { .mask = o && o->mask,
			    .paths = o ? o->masked_paths : NULL,
			    .warnings = o ? o->warnings : NULL,
			    .path = "$" };
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
