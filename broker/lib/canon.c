/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Canonical JSON: strict admission and RFC 8785 (JCS) encoding.
 *
 * Why this file is ~1100 lines: admission (the pre-scan), the JCS number
 * formatter and the encoder are one contract, canonical bytes that every
 * approval binding and fingerprint is computed over, and they share the
 * scanner's error vocabulary and UTF-8 checks; splitting them would put the
 * bytes a binding depends on behind a cross-file interface. (Issue 12 asks
 * for a split or this note; a split along admission / number formatting /
 * encoder is the natural next step if the file grows.)
 *
 * Admission runs in two passes over the raw bytes:
 *   1. a bounded, non-recursive pre-scan that tracks string state, nesting
 *      depth, UTF-8 validity, \u escapes (surrogate pairing, NUL) and number
 *      lexemes, so depth and range errors are reported with their position
 *      before any recursive parser sees the input;
 *   2. jansson (JSON_REJECT_DUPLICATES, NUL refused) for the grammar and the
 *      duplicate-member check.
 * jansson refuses invalid UTF-8 and lone surrogates on its own too; the
 * pre-scan exists so that every rejection maps to one precise error and so
 * that depth is bounded by our limit (64), not jansson's (2048).
 *
 * canon-fast.c writes the same canonical bytes straight from the text, with
 * no tree (tools/call arguments); this file is its reference and reports
 * every error it refuses. */
#include "canon.h"

#include <errno.h>
#include <float.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon-private.h"
#include "cleanup.h"

#define STEP "canon"

/* Integral doubles with 2^53 − 1 < |x| < 1e21 print as plain integers under
 * ECMAScript rules; such output would be an integer lexeme beyond the safe
 * range, which admission refuses. Refusing them on the way in keeps
 * decode(jcs(x)) admissible for every admitted x. */
#define JCS_INTEGER_FORM_LIMIT 1e21

/* Every double of magnitude >= 2^52 is an integer, so no floor() is needed
 * (and the library stays free of libm). */
bool cordon_canon_in_integer_band(double x)
{
	double a = __builtin_fabs(x);

	return a > (double)CORDON_CANON_MAX_SAFE_INTEGER && a < JCS_INTEGER_FORM_LIMIT;
}

void cordon_canon_limits_default(struct cordon_canon_limits *ret)
{
	*ret = (struct cordon_canon_limits){
		.max_bytes = CORDON_CANON_MAX_BYTES_DEFAULT,
		.max_depth = CORDON_CANON_MAX_DEPTH_DEFAULT,
	};
}

struct cordon_canon_limits cordon_canon_limits_resolve(const struct cordon_canon_limits *lim)
{
	struct cordon_canon_limits l;

	cordon_canon_limits_default(&l);
	if (lim) {
		if (lim->max_bytes)
			l.max_bytes = lim->max_bytes;
		if (lim->max_depth)
			l.max_depth = lim->max_depth;
	}
	return l;
}

/* ---- UTF-8 ------------------------------------------------------------------ */

/* Decodes one strictly valid UTF-8 sequence at p[0..n) (n >= 1): shortest
 * form only, no surrogates, at most U+10FFFF. Returns its length and writes
 * the code point, or 0 if invalid. */
static size_t utf8_decode(const unsigned char *p, size_t n, uint32_t *ret_cp)
{
	uint32_t cp;
	size_t len;

	if (p[0] < 0x80) {
		*ret_cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		cp = p[0] & 0x07;
	} else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*ret_cp = cp;
	return len;
}

/* Returns 0 if s[0..n) is valid UTF-8 without NUL, else -EILSEQ and the
 * offending offset in *ret_off. */
static int utf8_check(const char *s, size_t n, size_t *ret_off)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t l;

		if (p[i] == 0) {
			*ret_off = i;
			return -EILSEQ;
		}
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		l = utf8_decode(p + i, n - i, &cp);
		if (l == 0) {
			*ret_off = i;
			return -EILSEQ;
		}
		i += l;
	}
	return 0;
}

bool cordon_utf8_valid(const char *s, size_t n, size_t *ret_bad_offset)
{
	size_t off;

	if (utf8_check(s, n, &off) == 0)
		return true;
	if (ret_bad_offset)
		*ret_bad_offset = off;
	return false;
}

/* ---- Pre-scan ----------------------------------------------------------------- */

struct scan {
	const unsigned char *p;
	size_t len, pos;
	unsigned line, col; /* of p[pos]: 1-based, column in characters like jansson */
	struct cordon_diag *d;
};

static int scan_fail(struct scan *s, int error, const char *fmt, ...) _printf_(3, 4);
static int scan_fail(struct scan *s, int error, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return cordon_diag_set_at(s->d, error, STEP, s->line, s->col, "%s at line %u, column %u (byte %zu)", what,
				  s->line, s->col, s->pos);
}

/* Advances over one character (ASCII byte or validated UTF-8 sequence). */
static int scan_char(struct scan *s)
{
	uint32_t cp;
	size_t l;

	if (s->p[s->pos] == 0)
		return scan_fail(s, EILSEQ, "NUL byte");
	if (s->p[s->pos] < 0x80) {
		if (s->p[s->pos] == '\n') {
			s->line++;
			s->col = 1;
		} else
			s->col++;
		s->pos++;
		return 0;
	}
	l = utf8_decode(s->p + s->pos, s->len - s->pos, &cp);
	if (l == 0)
		return scan_fail(s, EILSEQ, "invalid UTF-8 byte 0x%02x", s->p[s->pos]);
	s->pos += l;
	s->col++;
	return 0;
}

static int hex4(const unsigned char *p, size_t n, uint32_t *ret)
{
	uint32_t v = 0;

	if (n < 4)
		return -EBADMSG;
	for (int i = 0; i < 4; i++) {
		unsigned char c = p[i];
		unsigned h;

		if (c >= '0' && c <= '9')
			h = c - '0';
		else if (c >= 'a' && c <= 'f')
			h = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			h = c - 'A' + 10;
		else
			return -EBADMSG;
		v = v << 4 | h;
	}
	*ret = v;
	return 0;
}

/* At the opening quote; leaves pos after the closing quote (or at the end of
 * input, which jansson then reports as premature end). */
static int scan_string(struct scan *s)
{
	int r;

	s->pos++, s->col++;
	while (s->pos < s->len) {
		unsigned char c = s->p[s->pos];

		if (c == '"') {
			s->pos++, s->col++;
			return 0;
		}
		if (c != '\\') {
			/* Raw control characters are a grammar error jansson
			 * reports; NUL and bad UTF-8 are ours. */
			r = scan_char(s);
			if (r < 0)
				return r;
			continue;
		}
		if (s->pos + 1 >= s->len)
			return 0;
		if (s->p[s->pos + 1] != 'u') {
			s->pos += 2, s->col += 2;
			continue;
		}

		uint32_t u;
		if (hex4(s->p + s->pos + 2, s->len - s->pos - 2, &u) < 0)
			return scan_fail(s, EBADMSG, "invalid \\u escape");
		if (u == 0)
			return scan_fail(s, EILSEQ, "\\u0000 (NUL) in string");
		if (u >= 0xdc00 && u <= 0xdfff)
			return scan_fail(s, EILSEQ, "lone low surrogate \\u%04x", u);
		if (u >= 0xd800 && u <= 0xdbff) {
			uint32_t lo;

			if (s->pos + 12 > s->len || s->p[s->pos + 6] != '\\' || s->p[s->pos + 7] != 'u' ||
			    hex4(s->p + s->pos + 8, 4, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
				return scan_fail(s, EILSEQ,
						 "lone high surrogate \\u%04x (not followed by a low surrogate)", u);
			s->pos += 12, s->col += 12;
			continue;
		}
		s->pos += 6, s->col += 6;
	}
	return 0;
}

static bool is_number_char(unsigned char c)
{
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* RFC 8259 number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
 * Sets *ret_integer when there is neither fraction nor exponent. */
static bool number_lexeme_valid(const unsigned char *p, size_t n, bool *ret_integer)
{
	size_t i = 0;

	*ret_integer = true;
	if (i < n && p[i] == '-')
		i++;
	if (i >= n || !is_digit(p[i]))
		return false;
	if (p[i] == '0')
		i++;
	else
		while (i < n && is_digit(p[i]))
			i++;
	if (i < n && p[i] == '.') {
		*ret_integer = false;
		if (++i >= n || !is_digit(p[i]))
			return false;
		while (i < n && is_digit(p[i]))
			i++;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		*ret_integer = false;
		if (++i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		if (i >= n || !is_digit(p[i]))
			return false;
		while (i < n && is_digit(p[i]))
			i++;
	}
	return i == n;
}

/* strtod in the "C" locale whatever the process's LC_NUMERIC, so the range
 * check sees the value jansson (which is locale-proof) will produce. */
static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void c_locale_init(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

double cordon_canon_strtod_c(const char *s, char **end)
{
	pthread_once(&c_locale_once, c_locale_init);
	if (c_locale == (locale_t)0)
		return strtod(s, end); /* the C locale always exists; defensive */
	return strtod_l(s, end, c_locale);
}

/* At '-' or a digit. Only the range of well-formed lexemes is checked here;
 * a malformed one is left for jansson to report as a grammar error. */
static int scan_number(struct scan *s)
{
	size_t start = s->pos, end = s->pos;
	bool integer;

	while (end < s->len && is_number_char(s->p[end]))
		end++;

	if (!number_lexeme_valid(s->p + start, end - start, &integer))
		; /* jansson reports it */
	else if (integer) {
		size_t i = start;
		uint64_t v = 0;

		if (s->p[i] == '-')
			i++;
		for (; i < end; i++) {
			v = v * 10 + (uint64_t)(s->p[i] - '0');
			if (v > (uint64_t)CORDON_CANON_MAX_SAFE_INTEGER)
				return scan_fail(s, ERANGE,
						 "integer %.*s%s is outside ±(2^53−1); send big integers as strings",
						 (int)(end - start > 40 ? 40 : end - start), (const char *)s->p + start,
						 end - start > 40 ? "…" : "");
		}
	} else {
		/* strtod needs a terminated copy; lexemes are usually short. */
		char small[64];
		_cleanup_free_ char *big = NULL;
		char *buf = small, *e;
		size_t n = end - start;
		double x;

		if (n >= sizeof(small)) {
			big = malloc(n + 1);
			if (!big)
				return cordon_diag_set(s->d, ENOMEM, STEP, "out of memory");
			buf = big;
		}
		memcpy(buf, s->p + start, n);
		buf[n] = 0;
		x = cordon_canon_strtod_c(buf, &e);
		if (e != buf + n)
			return scan_fail(s, EBADMSG, "not JSON: unreadable number %.40s", buf);
		if (!__builtin_isfinite(x))
			return scan_fail(s, ERANGE, "number %.40s%s overflows a double", buf, n > 40 ? "…" : "");
		if (cordon_canon_in_integer_band(x))
			return scan_fail(s, ERANGE,
					 "number %.40s%s is an integer outside ±(2^53−1); send big integers as strings",
					 buf, n > 40 ? "…" : "");
	}
	s->col += (unsigned)(end - start);
	s->pos = end;
	return 0;
}

static int prescan(struct scan *s, unsigned max_depth)
{
	unsigned depth = 0;
	int r;

	while (s->pos < s->len) {
		unsigned char c = s->p[s->pos];

		switch (c) {
		case '"':
			r = scan_string(s);
			break;
		case '[':
		case '{':
			if (++depth > max_depth)
				return scan_fail(s, ELOOP, "nesting deeper than %u levels", max_depth);
			s->pos++, s->col++;
			r = 0;
			break;
		case ']':
		case '}':
			/* Mismatched brackets are jansson's to report. */
			if (depth > 0)
				depth--;
			s->pos++, s->col++;
			r = 0;
			break;
		case '-':
		case '0' ... '9':
			r = scan_number(s);
			break;
		default:
			r = scan_char(s);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- Decode ------------------------------------------------------------------ */

static int map_jansson_error(const json_error_t *e, struct cordon_diag *d)
{
	int error;
	const char *kind;

	switch (json_error_code(e)) {
	case json_error_out_of_memory:
		return cordon_diag_set(d, ENOMEM, STEP, "out of memory");
	case json_error_duplicate_key:
		error = ENOTUNIQ, kind = "duplicate member name";
		break;
	case json_error_numeric_overflow:
		error = ERANGE, kind = "number out of range";
		break;
	case json_error_invalid_utf8:
	case json_error_null_character:
	case json_error_null_byte_in_key:
		error = EILSEQ, kind = "invalid character";
		break;
	case json_error_stack_overflow:
		error = ELOOP, kind = "nesting too deep";
		break;
	default:
		error = EBADMSG, kind = "not JSON";
	}
	return cordon_diag_set_at(d, error, STEP, e->line > 0 ? (unsigned)e->line : 0,
				  e->column > 0 ? (unsigned)e->column : 0, "%s: %s at line %d, column %d (byte %d)",
				  kind, e->text, e->line, e->column, e->position);
}

int cordon_canon_decode(const char *buf, size_t len, const struct cordon_canon_limits *lim, json_t **ret,
			struct cordon_diag *d)
{
	struct cordon_canon_limits l = cordon_canon_limits_resolve(lim);
	struct scan s = { .p = (const unsigned char *)buf, .len = len, .line = 1, .col = 1, .d = d };
	json_error_t e;
	json_t *v;
	int r;

	if (!buf && len > 0)
		return cordon_diag_set(d, EINVAL, STEP, "no input buffer");
	if (len > l.max_bytes)
		return cordon_diag_set(d, EMSGSIZE, STEP, "document of %zu bytes exceeds the limit of %zu bytes", len,
				       l.max_bytes);
	if (len == 0)
		return cordon_diag_set_at(d, EBADMSG, STEP, 1, 1, "not JSON: empty input");

	r = prescan(&s, l.max_depth);
	if (r < 0)
		return r;

	/* No JSON_ALLOW_NUL: \u0000 is refused (the pre-scan already did). */
	v = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e);
	if (!v)
		return map_jansson_error(&e, d);

	*ret = v;
	return 0;
}

/* ---- Admission of in-memory values --------------------------------------------- */

struct path {
	const struct path *up;
	const char *key; /* member name, or NULL for an array index */
	size_t index;
};

static void path_format(const struct path *p, char *buf, size_t size)
{
	const struct path *chain[CORDON_CANON_MAX_DEPTH_DEFAULT * 4 + 2];
	size_t n = 0, off;

	for (; p && n < ELEMENTSOF(chain); p = p->up)
		chain[n++] = p;
	off = (size_t)snprintf(buf, size, "$");
	while (n > 0 && off < size) {
		const struct path *q = chain[--n];
		int w;

		if (q->key)
			w = snprintf(buf + off, size - off, ".%.40s", q->key);
		else
			w = snprintf(buf + off, size - off, "[%zu]", q->index);
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

static int admit_fail(const struct path *p, struct cordon_diag *d, int error, const char *what)
{
	char where[128];

	path_format(p, where, sizeof(where));
	return cordon_diag_set(d, error, STEP, "%s at %s", what, where);
}

static int admit_string(const char *s, size_t n, const struct path *p, struct cordon_diag *d, const char *what)
{
	size_t off;

	if (utf8_check(s, n, &off) < 0) {
		char msg[96];

		snprintf(msg, sizeof(msg), "%s has %s at byte %zu", what,
			 s[off] == 0 ? "a NUL character" : "invalid UTF-8", off);
		return admit_fail(p, d, EILSEQ, msg);
	}
	return 0;
}

static int admit_number(double x, const struct path *p, struct cordon_diag *d)
{
	if (!__builtin_isfinite(x))
		return admit_fail(p, d, EDOM, "non-finite number");
	if (cordon_canon_in_integer_band(x))
		return admit_fail(p, d, ERANGE, "integer-valued number outside ±(2^53−1)");
	return 0;
}

static int admit(const json_t *v, unsigned depth, unsigned max_depth, const struct path *p, struct cordon_diag *d)
{
	int r;

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *key;
		size_t key_len;
		json_t *m;

		if (depth + 1 > max_depth)
			return admit_fail(p, d, ELOOP, "nesting too deep");
		json_object_keylen_foreach((json_t *)v, key, key_len, m)
		{
			struct path q = { .up = p, .key = key };

			r = admit_string(key, key_len, &q, d, "member name");
			if (r < 0)
				return r;
			r = admit(m, depth + 1, max_depth, &q, d);
			if (r < 0)
				return r;
		}
		return 0;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *m;

		if (depth + 1 > max_depth)
			return admit_fail(p, d, ELOOP, "nesting too deep");
		json_array_foreach(v, i, m)
		{
			struct path q = { .up = p, .index = i };

			r = admit(m, depth + 1, max_depth, &q, d);
			if (r < 0)
				return r;
		}
		return 0;
	}
	case JSON_STRING:
		return admit_string(json_string_value(v), json_string_length(v), p, d, "string");
	case JSON_INTEGER: {
		json_int_t i = json_integer_value(v);

		if (i > CORDON_CANON_MAX_SAFE_INTEGER || i < -CORDON_CANON_MAX_SAFE_INTEGER)
			return admit_fail(p, d, ERANGE, "integer outside ±(2^53−1)");
		return 0;
	}
	case JSON_REAL:
		return admit_number(json_real_value(v), p, d);
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
		return 0;
	}
	return admit_fail(p, d, EINVAL, "unknown JSON type");
}

int cordon_canon_admit(const json_t *v, const struct cordon_canon_limits *lim, struct cordon_diag *d)
{
	struct cordon_canon_limits l = cordon_canon_limits_resolve(lim);

	if (!v)
		return cordon_diag_set(d, EINVAL, STEP, "no value");
	/* The path chain lives on the stack; keep the walk bounded even for a
	 * caller-supplied limit. */
	if (l.max_depth > CORDON_CANON_MAX_DEPTH_DEFAULT * 4)
		l.max_depth = CORDON_CANON_MAX_DEPTH_DEFAULT * 4;
	return admit(v, 0, l.max_depth, NULL, d);
}

int cordon_canon_arguments(const json_t *arguments, json_t **ret, struct cordon_diag *d)
{
	json_t *v;

	if (!arguments) {
		v = json_object();
		if (!v)
			return cordon_diag_set(d, ENOMEM, STEP, "out of memory");
	} else if (!json_is_object(arguments))
		return cordon_diag_set(d, EINVAL, STEP, "arguments must be an object, not %s",
				       json_is_null(arguments) ? "null" : "a non-object value");
	else
		v = json_incref((json_t *)arguments);
	*ret = v;
	return 0;
}

/* ---- Number formatting (ECMAScript Number::toString) --------------------------- */

/* Parses "d.ddde±x" as printed by %.*e into digits (no point) and the
 * decimal exponent. Locale-independent: whatever the radix character is,
 * only digits are kept. */
static void split_e(const char *s, char *digits, size_t *ret_k, int *ret_exp)
{
	size_t k = 0;
	const char *p = s;

	for (; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[k++] = *p;
	digits[k] = 0;
	*ret_k = k;
	*ret_exp = *p == 'e' ? atoi(p + 1) : 0;
}

/* Does the decimal digits × 10^(exp − k + 1) read back as x? Built as
 * "<digits>e<exp>", which strtod parses without a radix character. */
static bool round_trips(const char *digits, size_t k, int exp, double x)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%se%d", digits, exp - (int)k + 1);
	return strtod(buf, NULL) == x;
}

/* Adds delta (+1 or −1) to the last digit of a k-digit string, propagating
 * the carry. 99…9 + 1 becomes 10…0 with the exponent raised by one. Returns
 * false when the result would have fewer digits (10…0 − 1): such a decimal
 * has a shorter form that an earlier, shorter probe already tried. */
static bool digits_step(char *digits, size_t k, int delta, int *exp)
{
	for (size_t i = k; i-- > 0;) {
		int c = digits[i] - '0' + delta;

		if (c >= 0 && c <= 9) {
			digits[i] = (char)('0' + c);
			return !(i == 0 && c == 0);
		}
		digits[i] = delta > 0 ? '0' : '9';
	}
	if (delta < 0)
		return false;
	digits[0] = '1'; /* carried out of the top digit */
	(*exp)++;
	return true;
}

/* Is there a p-significant-digit decimal that reads back as x? If so, writes
 * the one closest to x. printf gives the nearest p-digit decimal; if that
 * does not round-trip but another does, it is the neighbour on the other
 * side of x (the round-trip interval is asymmetric at powers of two), so the
 * neighbours are tried too. */
static bool probe(double x, int p, char digits[static 24], size_t *ret_k, int *ret_exp)
{
	char tmp[40], alt[24];
	size_t k;
	int exp;

	snprintf(tmp, sizeof(tmp), "%.*e", p - 1, x);
	split_e(tmp, digits, &k, &exp);
	*ret_k = k;
	*ret_exp = exp;
	if (round_trips(digits, k, exp, x))
		return true;
	for (int delta = -1; delta <= 1; delta += 2) {
		int e2 = exp;

		memcpy(alt, digits, k + 1);
		if (!digits_step(alt, k, delta, &e2))
			continue;
		if (round_trips(alt, k, e2, x)) {
			memcpy(digits, alt, k + 1);
			*ret_exp = e2;
			return true;
		}
	}
	return false;
}

int cordon_jcs_format_double(double x, char buf[static CORDON_JCS_NUMBER_MAX])
{
	char digits[24];
	size_t k = 0, o = 0;
	int exp = 0, n;

	if (!__builtin_isfinite(x))
		return -EDOM;
	if (x == 0) {
		/* Both +0 and −0. */
		buf[0] = '0', buf[1] = 0;
		return 1;
	}
	if (x < 0) {
		buf[o++] = '-';
		x = -x;
	}

	/* The shortest p such that some p-digit decimal reads back as x. The
	 * predicate is monotonic in p (append a zero), so binary search over
	 * 1..17; 17 significant digits always round-trip. */
	{
		int lo = 1, hi = 17;

		while (lo < hi) {
			int mid = (lo + hi) / 2;

			if (probe(x, mid, digits, &k, &exp))
				hi = mid;
			else
				lo = mid + 1;
		}
		if (!probe(x, lo, digits, &k, &exp))
			return -EDOM; /* cannot happen */
	}

	/* Strip trailing zeros: k is the number of significant digits. */
	while (k > 1 && digits[k - 1] == '0')
		digits[--k] = 0;

	/* ECMAScript: x = s × 10^(n−k) with s the k digits. */
	n = exp + 1;
	if ((int)k <= n && n <= 21) {
		memcpy(buf + o, digits, k);
		o += k;
		for (int i = 0; i < n - (int)k; i++)
			buf[o++] = '0';
	} else if (0 < n && n <= 21) {
		memcpy(buf + o, digits, (size_t)n);
		o += (size_t)n;
		buf[o++] = '.';
		memcpy(buf + o, digits + n, k - (size_t)n);
		o += k - (size_t)n;
	} else if (-6 < n && n <= 0) {
		buf[o++] = '0';
		buf[o++] = '.';
		for (int i = 0; i < -n; i++)
			buf[o++] = '0';
		memcpy(buf + o, digits, k);
		o += k;
	} else {
		buf[o++] = digits[0];
		if (k > 1) {
			buf[o++] = '.';
			memcpy(buf + o, digits + 1, k - 1);
			o += k - 1;
		}
		o += (size_t)snprintf(buf + o, CORDON_JCS_NUMBER_MAX - o, "e%c%d", n - 1 >= 0 ? '+' : '-', abs(n - 1));
	}
	buf[o] = 0;
	return (int)o;
}

/* ---- Key order ----------------------------------------------------------------- */

/* Next UTF-16 code unit of a valid UTF-8 string; *pending holds the low
 * surrogate of a supplementary character between calls. Returns -1 at the end. */
static int32_t next_unit(const unsigned char *s, size_t n, size_t *i, uint32_t *pending)
{
	uint32_t cp;
	size_t l;

	if (*pending) {
		uint32_t u = *pending;
		*pending = 0;
		return (int32_t)u;
	}
	if (*i >= n)
		return -1;
	l = utf8_decode(s + *i, n - *i, &cp);
	if (l == 0) {
		/* Not admitted input; order by the raw byte so the sort stays total. */
		cp = s[*i];
		l = 1;
	}
	*i += l;
	if (cp >= 0x10000) {
		cp -= 0x10000;
		*pending = 0xdc00 | (cp & 0x3ff);
		return (int32_t)(0xd800 | (cp >> 10));
	}
	return (int32_t)cp;
}

int cordon_jcs_compare_keys(const char *a, size_t a_len, const char *b, size_t b_len)
{
	size_t i = 0, j = 0;
	uint32_t pa = 0, pb = 0;

	for (;;) {
		int32_t ua = next_unit((const unsigned char *)a, a_len, &i, &pa);
		int32_t ub = next_unit((const unsigned char *)b, b_len, &j, &pb);

		if (ua != ub)
			return ua < ub ? -1 : 1; /* -1 (end) sorts first: a prefix precedes */
		if (ua < 0)
			return 0;
	}
}

/* ---- Encoder ------------------------------------------------------------------- */

struct out {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void out_reserve(struct out *o, size_t extra)
{
	size_t want;
	char *n;

	if (o->oom)
		return;
	if (o->len + extra + 1 <= o->cap)
		return;
	want = o->cap ? o->cap : 256;
	while (want < o->len + extra + 1) {
		if (want > SIZE_MAX / 2) {
			o->oom = true;
			return;
		}
		want *= 2;
	}
	n = realloc(o->buf, want);
	if (!n) {
		o->oom = true;
		return;
	}
	o->buf = n;
	o->cap = want;
}

static void out_put(struct out *o, const char *s, size_t n)
{
	out_reserve(o, n);
	if (o->oom)
		return;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static void out_putc(struct out *o, char c)
{
	out_put(o, &c, 1);
}

static int encode_string(struct out *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0, off;

	if (utf8_check(s, n, &off) < 0)
		return -EILSEQ;
	out_putc(o, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[6];
		size_t el = 2;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		out_put(o, s + run, i - run);
		run = i + 1;
		esc[0] = '\\';
		switch (c) {
		case '"':
			esc[1] = '"';
			break;
		case '\\':
			esc[1] = '\\';
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		case '\t':
			esc[1] = 't';
			break;
		default:
			esc[1] = 'u', esc[2] = '0', esc[3] = '0';
			esc[4] = hex[c >> 4], esc[5] = hex[c & 0xf];
			el = 6;
		}
		out_put(o, esc, el);
	}
	out_put(o, s + run, n - run);
	out_putc(o, '"');
	return 0;
}

struct member {
	const char *key;
	size_t len;
	const json_t *value;
};

static int member_cmp(const void *x, const void *y)
{
	const struct member *a = x, *b = y;

	return cordon_jcs_compare_keys(a->key, a->len, b->key, b->len);
}

#define ENCODE_MAX_DEPTH (CORDON_CANON_MAX_DEPTH_DEFAULT * 4)

static int encode(struct out *o, const json_t *v, unsigned depth)
{
	int r;

	if (depth > ENCODE_MAX_DEPTH)
		return -ELOOP;

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		size_t n = json_object_size(v), i = 0;
		_cleanup_free_ struct member *m = NULL;
		const char *key;
		size_t key_len;
		json_t *val;

		if (n > 0) {
			m = calloc(n, sizeof(*m));
			if (!m)
				return -ENOMEM;
		}
		json_object_keylen_foreach((json_t *)v, key, key_len, val)
		{
			if (i >= n)
				return -EINVAL;
			m[i++] = (struct member){ .key = key, .len = key_len, .value = val };
		}
		if (i > 1)
			qsort(m, i, sizeof(*m), member_cmp);
		out_putc(o, '{');
		for (size_t j = 0; j < i; j++) {
			if (j > 0)
				out_putc(o, ',');
			r = encode_string(o, m[j].key, m[j].len);
			if (r < 0)
				return r;
			out_putc(o, ':');
			r = encode(o, m[j].value, depth + 1);
			if (r < 0)
				return r;
		}
		out_putc(o, '}');
		return 0;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *m;

		out_putc(o, '[');
		json_array_foreach(v, i, m)
		{
			if (i > 0)
				out_putc(o, ',');
			r = encode(o, m, depth + 1);
			if (r < 0)
				return r;
		}
		out_putc(o, ']');
		return 0;
	}
	case JSON_STRING:
		return encode_string(o, json_string_value(v), json_string_length(v));
	case JSON_INTEGER: {
		json_int_t x = json_integer_value(v);
		char b[24];
		int w;

		if (x > CORDON_CANON_MAX_SAFE_INTEGER || x < -CORDON_CANON_MAX_SAFE_INTEGER)
			return -ERANGE;
		w = snprintf(b, sizeof(b), "%lld", (long long)x);
		out_put(o, b, (size_t)w);
		return 0;
	}
	case JSON_REAL: {
		double x = json_real_value(v);
		char b[CORDON_JCS_NUMBER_MAX];
		int w;

		if (!__builtin_isfinite(x))
			return -EDOM;
		if (cordon_canon_in_integer_band(x))
			return -ERANGE;
		w = cordon_jcs_format_double(x, b);
		if (w < 0)
			return w;
		out_put(o, b, (size_t)w);
		return 0;
	}
	case JSON_TRUE:
		out_put(o, "true", 4);
		return 0;
	case JSON_FALSE:
		out_put(o, "false", 5);
		return 0;
	case JSON_NULL:
		out_put(o, "null", 4);
		return 0;
	}
	return -EINVAL;
}

int cordon_jcs_encode(const json_t *v, char **ret, size_t *ret_len)
{
	struct out o = {};
	int r;

	if (!v)
		return -EINVAL;
	r = encode(&o, v, 0);
	if (r == 0 && o.oom)
		r = -ENOMEM;
	if (r == 0) {
		out_reserve(&o, 0);
		if (o.oom)
			r = -ENOMEM;
	}
	if (r < 0) {
		free(o.buf);
		return r;
	}
	o.buf[o.len] = 0;
	*ret = o.buf;
	if (ret_len)
		*ret_len = o.len;
	return 0;
}

int cordon_canon_bytes_reference(const char *buf, size_t len, const struct cordon_canon_limits *lim, char **ret,
				 size_t *ret_len, struct cordon_diag *d)
{
	json_auto_t *v = NULL;
	int r;

	r = cordon_canon_decode(buf, len, lim, &v, d);
	if (r < 0)
		return r;
	r = cordon_jcs_encode(v, ret, ret_len);
	if (r < 0)
		return cordon_diag_set(d, -r, STEP, "cannot encode the admitted value: %s", strerror(-r));
	return 0;
}
