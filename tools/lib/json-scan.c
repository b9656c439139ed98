/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "json-scan.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ONES 0x0101010101010101ull
#define HIGH 0x8080808080808080ull

/* Nonzero when one of the eight bytes of x is >= 0x80, < 0x20, '"' or '\\':
 * the bytes a string's text cannot copy as they are. Exact as an "any" test
 * (a borrow only runs on from a byte that was itself flagged). */
static inline uint64_t special8(uint64_t x)
{
	uint64_t q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');

	return (x | ((x - ONES * 0x20) & ~x) | ((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGH;
}

static inline int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int hex4(const unsigned char *p, const unsigned char *end, uint32_t *ret)
{
	uint32_t v = 0;

	if (end - p < 4)
		return -EINVAL;
	for (int i = 0; i < 4; i++) {
		int h = hexval(p[i]);

		if (h < 0)
			return -EINVAL;
		v = v << 4 | (uint32_t)h;
	}
	*ret = v;
	return 0;
}

/* Length of the valid UTF-8 sequence at p (p[0] >= 0x80), or 0. */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0];
	size_t n;
	uint32_t cp;

	if (c >= 0xC2 && c <= 0xDF)
		n = 2, cp = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, cp = c & 0x0F;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, cp = c & 0x07;
	else
		return 0; /* continuation byte, overlong lead C0/C1, or above F4 */
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

static unsigned char *put_utf8(unsigned char *o, uint32_t cp)
{
	if (cp < 0x80) {
		*o++ = (unsigned char)cp;
	} else if (cp < 0x800) {
		*o++ = (unsigned char)(0xC0 | cp >> 6);
		*o++ = (unsigned char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		*o++ = (unsigned char)(0xE0 | cp >> 12);
		*o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		*o++ = (unsigned char)(0x80 | (cp & 0x3F));
	} else {
		*o++ = (unsigned char)(0xF0 | cp >> 18);
		*o++ = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
		*o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		*o++ = (unsigned char)(0x80 | (cp & 0x3F));
	}
	return o;
}

/* Decodes one escape (p just past the backslash); writes its UTF-8 to *o when
 * o is not NULL. Returns the byte after it, or NULL when it is invalid. Every
 * escape is at least two bytes and decodes to at most four, and a surrogate
 * pair is twelve bytes for four, so output never overtakes input. */
static const unsigned char *escape(const unsigned char *p, const unsigned char *end, unsigned char **o)
{
	uint32_t cp, lo;
	unsigned char c;

	if (p == end)
		return NULL;
	switch (*p) {
	case '"':
	case '\\':
	case '/':
		c = *p;
		break;
	case 'b':
		c = '\b';
		break;
	case 'f':
		c = '\f';
		break;
	case 'n':
		c = '\n';
		break;
	case 'r':
		c = '\r';
		break;
	case 't':
		c = '\t';
		break;
	case 'u':
		if (hex4(p + 1, end, &cp) < 0 || cp == 0)
			return NULL; /* \u0000: jansson refuses it without JSON_ALLOW_NUL */
		p += 5;
		if (cp >= 0xDC00 && cp <= 0xDFFF)
			return NULL; /* a low surrogate first */
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			if (end - p < 2 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, end, &lo) < 0 || lo < 0xDC00 ||
			    lo > 0xDFFF)
				return NULL;
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			p += 6;
		}
		if (*o)
			*o = put_utf8(*o, cp);
		return p;
	default:
		return NULL;
	}
	if (*o)
		*(*o)++ = c;
	return p + 1;
}

/* Checks (and, with out, decodes) string text from p up to the first
 * unescaped '"' or end. Returns where it stopped (at the '"' or at end) and
 * the output end in *ret_o, or NULL when the text is invalid. */
static const unsigned char *string_text(const unsigned char *p, const unsigned char *end, unsigned char *out,
					unsigned char **ret_o)
{
	unsigned char *o = out;

	for (;;) {
		while (end - p >= 8) {
			uint64_t x;

			memcpy(&x, p, 8);
			if (special8(x))
				break;
			if (o) {
				memcpy(o, &x, 8);
				o += 8;
			}
			p += 8;
		}
		while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') {
			if (o)
				*o++ = *p;
			p++;
		}
		if (p == end || *p == '"')
			break;
		if (*p == '\\') {
			p = escape(p + 1, end, &o);
			if (!p)
				return NULL;
		} else if (*p < 0x20) {
			return NULL;
		} else {
			size_t k = utf8_seq(p, end);

			if (!k)
				return NULL;
			if (o) {
				memmove(o, p, k);
				o += k;
			}
			p += k;
		}
	}
	*ret_o = o;
	return p;
}

ssize_t json_string_decode(const char *s, size_t n, char *out)
{
	const unsigned char *end = (const unsigned char *)s + n, *p;
	unsigned char *o = NULL;

	p = string_text((const unsigned char *)s, end, (unsigned char *)out, &o);
	if (!p || p != end)
		return -EINVAL;
	return (ssize_t)(o - (unsigned char *)out);
}

bool json_text_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		/* ASCII without NUL, 32 and then 8 bytes at a time. */
		while (end - p >= 32) {
			uint64_t x[4];

			memcpy(x, p, 32);
			if ((x[0] | ((x[0] - ONES) & ~x[0]) | x[1] | ((x[1] - ONES) & ~x[1]) | x[2] |
			     ((x[2] - ONES) & ~x[2]) | x[3] | ((x[3] - ONES) & ~x[3])) &
			    HIGH)
				break;
			p += 32;
		}
		while (end - p >= 8) {
			uint64_t x;

			memcpy(&x, p, 8);
			if ((x | ((x - ONES) & ~x)) & HIGH)
				break;
			p += 8;
		}
		if (p == end)
			break;
		if (*p == 0)
			return false;
		if (*p < 0x80) {
			p++;
		} else {
			size_t k = utf8_seq(p, end);

			if (!k)
				return false;
			p += k;
		}
	}
	return true;
}

struct scanner {
	const unsigned char *start, *p, *end;
	const char *const *const *paths;
	size_t n_paths;
	unsigned max_depth;
	struct json_span *spans; /* .first == 0: not found yet */
};

static inline void skip_ws(struct scanner *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* Only delimits a string (s->p just past its opening quote): the bytes that
 * end it or start an escape, and raw control characters, which no string
 * holds. The caller decodes the text, which checks the rest. */
static int delimit_string(struct scanner *s)
{
	const unsigned char *p = s->p, *end = s->end;

	for (;;) {
		while (end - p >= 8) {
			uint64_t x, q, b;

			memcpy(&x, p, 8);
			q = x ^ (ONES * '"');
			b = x ^ (ONES * '\\');
			if ((((x - ONES * 0x20) & ~x) | ((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGH)
				break;
			p += 8;
		}
		if (p == end || *p < 0x20)
			return -EINVAL;
		if (*p == '"')
			break;
		if (*p == '\\' && ++p == end)
			return -EINVAL;
		p++;
	}
	s->p = p;
	return 0;
}

/* A string (s->p at its opening quote). Leaves s->p past the closing quote
 * and the text's bounds in *ret_text and *ret_len. */
static int scan_string(struct scanner *s, bool delimit_only, const unsigned char **ret_text, size_t *ret_len)
{
	const unsigned char *text = ++s->p;
	unsigned char *unused;

	if (delimit_only) {
		if (delimit_string(s) < 0)
			return -EINVAL;
	} else {
		s->p = string_text(text, s->end, NULL, &unused);
		if (!s->p || s->p == s->end)
			return -EINVAL;
	}
	*ret_text = text;
	*ret_len = (size_t)(s->p - text);
	s->p++;
	return 0;
}

/* Does a member name (its raw text) equal the path component? */
static bool key_is(const unsigned char *text, size_t len, const char *want)
{
	size_t wl = strlen(want);
	unsigned char buf[256];
	ssize_t n;

	if (!memchr(text, '\\', len))
		return len == wl && memcmp(text, want, wl) == 0;
	/* Escaped: an escape is at most six bytes for one, so a name whose text
	 * is longer than 6 * wl cannot decode to wl bytes. */
	if (len > sizeof(buf) || len > 6 * wl)
		return false;
	n = json_string_decode((const char *)text, len, (char *)buf);
	return n == (ssize_t)wl && memcmp(buf, want, wl) == 0;
}

static bool index_is(size_t i, const char *want)
{
	size_t v = 0;

	if (!*want || (want[0] == '0' && want[1]))
		return false;
	for (const char *c = want; *c; c++) {
		if (*c < '0' || *c > '9' || v > (SIZE_MAX - 9) / 10)
			return false;
		v = v * 10 + (size_t)(*c - '0');
	}
	return v == i;
}

static int scan_number(struct scanner *s)
{
	const unsigned char *p = s->p, *end = s->end;

	if (p < end && *p == '-')
		p++;
	if (p == end || *p < '0' || *p > '9')
		return -EINVAL;
	if (*p == '0')
		p++;
	else
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	if (p < end && *p == '.') {
		if (++p == end || *p < '0' || *p > '9')
			return -EINVAL;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p == end || *p < '0' || *p > '9')
			return -EINVAL;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	s->p = p;
	return 0;
}

static int scan_literal(struct scanner *s, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, lit, n) != 0)
		return -EINVAL;
	s->p += n;
	return 0;
}

/* The paths (bits of on) still matching a member named by key (or, with
 * key NULL, an element at index i), one level further down. */
static unsigned descend(const struct scanner *s, unsigned on, unsigned depth, const unsigned char *key, size_t klen,
			size_t i)
{
	unsigned next = 0;

	for (size_t k = 0; k < s->n_paths; k++) {
		const char *want = (on >> k & 1) ? s->paths[k][depth] : NULL;

		if (want && (key ? key_is(key, klen, want) : index_is(i, want)))
			next |= 1u << k;
	}
	return next;
}

/* One value at s->p (whitespace skipped). Bit k of `on`: every enclosing
 * member or element so far matched path k, so this value is at
 * paths[k][0..depth). */
static int scan_value(struct scanner *s, unsigned depth, unsigned on)
{
	unsigned target = 0;
	const unsigned char *at = s->p;
	int r = 0;

	for (size_t k = 0; k < s->n_paths; k++)
		if ((on >> k & 1) && !s->paths[k][depth] && !s->spans[k].first)
			target |= 1u << k;
	if (s->p == s->end)
		return -EINVAL;
	switch (*s->p) {
	case '"': {
		const unsigned char *text;
		size_t len;

		r = scan_string(s, target != 0, &text, &len);
		if (r < 0)
			return r;
		for (size_t k = 0; k < s->n_paths; k++)
			if (target >> k & 1)
				s->spans[k] = (struct json_span){ .offset = (size_t)(text - s->start),
								  .len = len,
								  .first = '"' };
		return 0;
	}
	case '{':
	case '[': {
		bool object = *s->p == '{';
		size_t i = 0;

		if (depth >= s->max_depth)
			return -ELOOP;
		s->p++;
		skip_ws(s);
		if (s->p < s->end && *s->p == (object ? '}' : ']')) {
			s->p++;
			break;
		}
		for (;; i++) {
			unsigned child;

			if (object) {
				const unsigned char *key;
				size_t klen;

				if (s->p == s->end || *s->p != '"')
					return -EINVAL;
				r = scan_string(s, false, &key, &klen);
				if (r < 0)
					return r;
				child = on ? descend(s, on, depth, key, klen, 0) : 0;
				skip_ws(s);
				if (s->p == s->end || *s->p != ':')
					return -EINVAL;
				s->p++;
				skip_ws(s);
			} else {
				child = on ? descend(s, on, depth, NULL, 0, i) : 0;
			}
			r = scan_value(s, depth + 1, child);
			if (r < 0)
				return r;
			skip_ws(s);
			if (s->p == s->end)
				return -EINVAL;
			if (*s->p == ',') {
				s->p++;
				skip_ws(s);
				continue;
			}
			if (*s->p != (object ? '}' : ']'))
				return -EINVAL;
			s->p++;
			break;
		}
		break;
	}
	case 't':
		r = scan_literal(s, "true");
		break;
	case 'f':
		r = scan_literal(s, "false");
		break;
	case 'n':
		r = scan_literal(s, "null");
		break;
	default:
		r = scan_number(s);
	}
	if (r < 0)
		return r;
	for (size_t k = 0; k < s->n_paths; k++)
		if (target >> k & 1)
			s->spans[k] = (struct json_span){ .offset = (size_t)(at - s->start),
							  .len = (size_t)(s->p - at),
							  .first = (char)*at };
	return 0;
}

int json_scan_paths(const char *buf, size_t len, const char *const *const *paths, size_t n_paths, unsigned max_depth,
		    struct json_span *ret_spans)
{
	struct scanner s = {
		.start = (const unsigned char *)buf,
		.p = (const unsigned char *)buf,
		.end = (const unsigned char *)buf + len,
		.paths = paths,
		.n_paths = n_paths,
		.max_depth = max_depth,
		.spans = ret_spans,
	};
	int r;

	if (n_paths > JSON_SCAN_MAX_PATHS)
		return -E2BIG;
	for (size_t k = 0; k < n_paths; k++)
		ret_spans[k] = (struct json_span){ 0 };
	skip_ws(&s);
	r = scan_value(&s, 0, n_paths ? (1u << n_paths) - 1 : 0);
	if (r >= 0) {
		skip_ws(&s);
		if (s.p != s.end)
			r = -EINVAL;
	}
	if (r < 0) {
		for (size_t k = 0; k < n_paths; k++)
			ret_spans[k] = (struct json_span){ 0 };
		return r;
	}
	return 0;
}

int json_scan_find(const char *buf, size_t len, const char *const *path, unsigned max_depth, struct json_span *ret)
{
	struct json_span sp;
	int r = json_scan_paths(buf, len, path ? &path : NULL, path ? 1 : 0, max_depth, &sp);

	if (r < 0)
		return r;
	if (!path || !sp.first)
		return 0;
	*ret = sp;
	return 1;
}
