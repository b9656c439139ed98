/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The single-pass path (canon-fast.c) against the reference (pre-scan +
 * jansson + tree encoder, canon.c): on every input both must return the same
 * value, the same canonical bytes, or the same error (errno, message, line,
 * column). Inputs: random documents written messily (whitespace, every kind
 * of escape, surrogate pairs, non-shortest and out-of-range number lexemes,
 * names that sort differently by UTF-16 than by code point, duplicates),
 * the same documents mutated byte by byte, JSON-RPC messages for the lifted
 * decode, number lexemes on their own, depth and size limits, and 1 MiB
 * documents of the bench's shapes. Deterministic seed.
 *
 * Built twice: test-canon-fast with the library's build (SSE2 on x86-64) and
 * test-canon-fast-swar with canon-fast.c compiled in with the portable
 * string scanner (tests/unit/canon-fast.cmake). */
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

/* ---- Text builder and random numbers ---------------------------------------- */

struct text {
	char *p;
	size_t len, cap;
};

static void put(struct text *t, const void *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 256;

		while (cap < t->len + n + 1)
			cap *= 2;
		t->p = realloc(t->p, cap);
		assert_non_null(t->p);
		t->cap = cap;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = 0;
}

static void puts_(struct text *t, const char *s)
{
	put(t, s, strlen(s));
}

static void putch(struct text *t, char c)
{
	put(t, &c, 1);
}

static void putf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct text *t, const char *fmt, ...)
{
	char b[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof(b));
	put(t, b, (size_t)n);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static unsigned ri(unsigned n)
{
	return (unsigned)(rnd() % n);
}

/* ---- Comparison ------------------------------------------------------------------ */

static unsigned n_accepted, n_refused;

static void compare(const char *in, size_t len, const struct cordon_canon_limits *lim)
{
	struct cordon_diag d1 = {}, d2 = {};
	char *o1 = NULL, *o2 = NULL;
	size_t l1 = 0, l2 = 0;
	int r1, r2;

	r1 = cordon_canon_bytes(in, len, lim, &o1, &l1, &d1);
	r2 = cordon_canon_bytes_reference(in, len, lim, &o2, &l2, &d2);
	if (r1 != r2)
		fail_msg("input (%zu bytes) %.300s: fast %d (%s), reference %d (%s)", len, in, r1, d1.message, r2,
			 d2.message);
	if (r1 == 0) {
		if (l1 != l2 || memcmp(o1, o2, l1) != 0)
			fail_msg("input %.300s:\n fast      %.300s\n reference %.300s", in, o1, o2);
		assert_int_equal(o1[l1], 0);
		n_accepted++;
	} else {
		assert_null(o1);
		assert_int_equal(d1.error, d2.error);
		assert_string_equal(d1.message, d2.message);
		assert_string_equal(d1.step, d2.step);
		assert_int_equal(d1.line, d2.line);
		assert_int_equal(d1.column, d2.column);
		n_refused++;
	}
	free(o1);
	free(o2);
}

/* ---- Random documents ------------------------------------------------------------ */

/* Code points chosen to hit every branch: ASCII a–d (collisions and shared
 * prefixes), characters that must be escaped, controls, DEL, 2-, 3- and
 * 4-byte UTF-8, U+E000–U+FFFF against supplementary characters (where UTF-16
 * order is not code point order), U+2028, BOM, the edges. */
static uint32_t random_cp(void)
{
	static const uint32_t specials[] = {
		'"',	'\\',	'/',	0x08,	0x0c,	0x0a,	 0x0d,	  0x09,	    0x01,
		0x1f,	0x7f,	0x80,	0xe9,	0x7ff,	0x800,	 0x2028,  0xfeff,   0xd7ff,
		0xe000, 0xefff, 0xf000, 0xffff, 0xfffd, 0x10000, 0x1f600, 0x10ffff, 0xfb33
	};
	uint32_t cp;

	switch (ri(8)) {
	case 0:
		return specials[ri(sizeof(specials) / sizeof(specials[0]))];
	case 1:
		return 1 + ri(0x7f);
	case 2:
		cp = 0x80 + ri(0x10000 - 0x80);
		break;
	case 3:
		return 0x10000 + ri(0x100000);
	case 4:
		return 0xe000 + ri(0x2000);
	default:
		return 'a' + ri(4);
	}
	if (cp >= 0xd800 && cp <= 0xdfff)
		cp = 'x';
	return cp;
}

static void put_utf8(struct text *t, uint32_t cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80)
		b[0] = (char)cp, n = 1;
	else if (cp < 0x800)
		b[0] = (char)(0xc0 | cp >> 6), b[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
	else if (cp < 0x10000)
		b[0] = (char)(0xe0 | cp >> 12), b[1] = (char)(0x80 | ((cp >> 6) & 0x3f)),
		b[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
	else
		b[0] = (char)(0xf0 | cp >> 18), b[1] = (char)(0x80 | ((cp >> 12) & 0x3f)),
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), b[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
	put(t, b, n);
}

static void put_u_escape(struct text *t, uint32_t u)
{
	putf(t, ri(2) ? "\\u%04x" : "\\u%04X", u);
}

/* A string of code points, each written raw or escaped at random (raw only
 * where JSON allows it). */
static void put_string(struct text *t, const uint32_t *cps, size_t n)
{
	putch(t, '"');
	for (size_t i = 0; i < n; i++) {
		uint32_t cp = cps[i];
		bool must = cp < 0x20 || cp == '"' || cp == '\\';

		if (!must && ri(5) != 0) {
			put_utf8(t, cp);
			continue;
		}
		switch (cp) {
		case '"':
		case '\\':
			if (ri(3)) {
				putch(t, '\\');
				putch(t, (char)cp);
				continue;
			}
			break;
		case '/':
			if (ri(2)) {
				puts_(t, "\\/");
				continue;
			}
			break;
		case 0x08:
		case 0x0c:
		case 0x0a:
		case 0x0d:
		case 0x09:
			if (ri(2)) {
				putch(t, '\\');
				putch(t, "btnfr"[cp == 0x08   ? 0
						 : cp == 0x09 ? 1
						 : cp == 0x0a ? 2
						 : cp == 0x0c ? 3
							      : 4]);
				continue;
			}
			break;
		}
		if (cp >= 0x10000) {
			put_u_escape(t, 0xd800 + ((cp - 0x10000) >> 10));
			put_u_escape(t, 0xdc00 + ((cp - 0x10000) & 0x3ff));
		} else
			put_u_escape(t, cp);
	}
	putch(t, '"');
}

static void ws(struct text *t)
{
	static const char *const w[] = { " ", "\n", "\t", "\r\n", "  \t" };

	if (ri(5) == 0)
		puts_(t, w[ri(5)]);
}

static void put_digits(struct text *t, unsigned n, bool first_nonzero)
{
	for (unsigned i = 0; i < n; i++)
		putch(t, (char)('0' + (i == 0 && first_nonzero ? 1 + ri(9) : ri(10))));
}

static double random_double_bits(void)
{
	for (;;) {
		uint64_t b = rnd();
		double x;

		memcpy(&x, &b, sizeof(x));
		if (__builtin_isfinite(x))
			return x;
	}
}

/* Number lexemes, valid or not by admission (range), always well-formed. */
static void put_number(struct text *t)
{
	static const char *const edges[] = {
		"9007199254740991",
		"-9007199254740991",
		"9007199254740992",
		"-9007199254740992",
		"9007199254740991.0",
		"9007199254740992.0",
		"9007199254740991.5",
		"9.007199254740991e15",
		"9.007199254740993e15",
		"4.5e15",
		"1e15",
		"1e16",
		"1e20",
		"1e21",
		"1E21",
		"999999999999999999999",
		"999999999999999999999.0",
		"99999999999999999999.5",
		"1e-6",
		"1e-7",
		"0.000001",
		"0.0000001",
		"123456789012345.6",
		"12345678901234.56",
		"0.1",
		"0.30000000000000004",
		"5e-324",
		"2.2250738585072014e-308",
		"1.7976931348623157e308",
		"1.7976931348623159e308",
		"1e308",
		"1e309",
		"1e400",
		"-1e400",
		"1e-400",
		"-1e-400",
		"0e999999999999999999",
		"1e-99999999999999999999",
		"1e99999999999999999999",
		"-0",
		"-0.0",
		"0.0e0",
		"-0e5",
		"100",
		"1.5000000000000000000000000000000",
		"0.000000000000000000000000000000000000000001",
		"1234567890123456789012345678901234567890",
		"1.0000000000000002",
		"1.00000000000000005",
		"1e300",
		"1e-300",
		"9.99999999999999e300",
		"1e301",
		"1.5e-301",
		"123e-2",
		"123E+2",
	};
	char b[64];

	switch (ri(10)) {
	case 0:
		puts_(t, edges[ri(sizeof(edges) / sizeof(edges[0]))]);
		return;
	case 1:
		putf(t, "%d", (int)ri(2001) - 1000);
		return;
	case 2: {
		int64_t v = 9007199254740991ll - ri(3) + ri(2);

		putf(t, "%s%lld", ri(2) ? "-" : "", (long long)v);
		return;
	}
	case 3: {
		double x = (double)((int)ri(2000001) - 1000000) / (1 + ri(1000));

		snprintf(b, sizeof(b), "%.*g", 1 + (int)ri(17), x);
		break;
	}
	case 4:
		snprintf(b, sizeof(b), "%.*e", (int)ri(17), random_double_bits());
		break;
	case 5:
		snprintf(b, sizeof(b), "%.17g", random_double_bits());
		break;
	case 6:
		snprintf(b, sizeof(b), "%.*g", 1 + (int)ri(17), (1 + ri(9)) * __builtin_powi(10.0, (int)ri(60) - 30));
		break;
	default: {
		/* Random digits: integer part, fraction, exponent. */
		unsigned ni = ri(3) ? 1 + ri(8) : 1 + ri(25);

		if (ri(3) == 0)
			putch(t, '-');
		if (ri(4) == 0)
			putch(t, '0');
		else
			put_digits(t, ni, true);
		if (ri(3)) {
			putch(t, '.');
			put_digits(t, ri(3) ? 1 + ri(6) : 1 + ri(25), false);
		}
		if (ri(3) == 0) {
			putch(t, ri(2) ? 'e' : 'E');
			if (ri(2))
				putch(t, ri(2) ? '+' : '-');
			putf(t, "%u", ri(4) ? ri(30) : ri(400));
		}
		return;
	}
	}
	/* printf's "inf"/"nan" cannot happen: finite inputs. */
	puts_(t, b);
}

struct gen {
	unsigned max_depth;
	bool big_objects;
};

static void put_value(struct text *t, const struct gen *g, unsigned depth);

static void put_name(struct text *t, uint32_t *cps, size_t *ret_n)
{
	size_t n = ri(7);

	/* Long shared prefixes: the comparison past the 8-byte prefix. */
	if (ri(4) == 0) {
		static const char pre[] = "prefix-longer-than-8-";
		size_t k = ri(sizeof(pre));

		for (size_t i = 0; i < k; i++)
			cps[i] = (uint32_t)pre[i];
		for (size_t i = 0; i < n; i++)
			cps[k + i] = random_cp();
		n += k;
	} else
		for (size_t i = 0; i < n; i++)
			cps[i] = random_cp();
	*ret_n = n;
	put_string(t, cps, n);
}

static void put_object(struct text *t, const struct gen *g, unsigned depth)
{
	uint32_t names[48][32];
	size_t lens[48];
	unsigned n = g->big_objects && ri(4) == 0 ? 13 + ri(35) : ri(6);

	putch(t, '{');
	ws(t);
	for (unsigned i = 0; i < n; i++) {
		if (i) {
			putch(t, ',');
			ws(t);
		}
		/* Now and then a duplicate, written with other escapes. */
		if (i > 0 && ri(40) == 0) {
			unsigned j = ri(i);

			memcpy(names[i], names[j], sizeof(names[j]));
			lens[i] = lens[j];
			put_string(t, names[i], lens[i]);
		} else
			put_name(t, names[i], &lens[i]);
		ws(t);
		putch(t, ':');
		put_value(t, g, depth + 1);
	}
	ws(t);
	putch(t, '}');
}

static void put_value(struct text *t, const struct gen *g, unsigned depth)
{
	unsigned n;

	ws(t);
	switch (ri(depth >= g->max_depth ? 5 : 8)) {
	case 0:
		puts_(t, ri(3) == 0 ? "null" : ri(2) ? "true" : "false");
		break;
	case 1:
	case 2:
		put_number(t);
		break;
	case 3:
	case 4: {
		uint32_t cps[24];

		n = ri(ri(4) == 0 ? 24 : 8);
		for (unsigned i = 0; i < n; i++)
			cps[i] = random_cp();
		put_string(t, cps, n);
		break;
	}
	case 5:
	case 6:
		putch(t, '[');
		n = ri(6);
		for (unsigned i = 0; i < n; i++) {
			if (i)
				putch(t, ',');
			put_value(t, g, depth + 1);
		}
		ws(t);
		putch(t, ']');
		break;
	default:
		put_object(t, g, depth);
	}
	ws(t);
}

/* ---- Tests -------------------------------------------------------------------------- */

static void test_random_documents(void **state)
{
	const struct gen g = { .max_depth = 6, .big_objects = true };

	n_accepted = n_refused = 0;
	for (unsigned i = 0; i < 6000; i++) {
		struct text t = {};

		put_value(&t, &g, 0);
		compare(t.p, t.len, NULL);
		free(t.p);
	}
	/* Not vacuous: most documents are admitted, some are refused (numbers
	 * out of range, duplicates). */
	print_message("random documents: %u admitted, %u refused\n", n_accepted, n_refused);
	assert_true(n_accepted > 3000);
	assert_true(n_refused > 300);
}

static void mutate(struct text *t)
{
	static const unsigned char bytes[] = { 0x00, 0x01, 0x1f, 0x7f, 0x80, 0xbf, 0xc0, 0xc2, 0xe0, 0xed,
					       0xef, 0xf0, 0xf4, 0xf5, 0xff, '"',  '\\', '{',  '}',  '[',
					       ']',  ',',  ':',	 ' ',  'u',  'e',  '.',	 '-',  '0',  '9' };
	size_t pos = t->len ? ri((unsigned)t->len) : 0;
	unsigned char c = bytes[ri(sizeof(bytes))];

	switch (ri(5)) {
	case 0: /* replace */
		if (t->len)
			t->p[pos] = (char)c;
		break;
	case 1: /* insert */
		put(t, "", 1);
		memmove(t->p + pos + 1, t->p + pos, t->len - 1 - pos);
		t->p[pos] = (char)c;
		break;
	case 2: { /* delete a range */
		size_t n = 1 + ri(4);

		if (pos + n > t->len)
			n = t->len - pos;
		memmove(t->p + pos, t->p + pos + n, t->len - pos - n);
		t->len -= n;
		break;
	}
	case 3: /* truncate */
		t->len = pos;
		break;
	default: { /* a lone or reversed surrogate, an escaped NUL */
		static const char *const esc[] = { "\\ud800", "\\udc00", "\\udc00\\ud800", "\\u0000",
						   "\\ud83d\\u0041" };
		const char *e = esc[ri(5)];
		size_t n = strlen(e);

		for (size_t i = 0; i < n; i++)
			put(t, "", 1);
		memmove(t->p + pos + n, t->p + pos, t->len - n - pos);
		memcpy(t->p + pos, e, n);
	}
	}
}

static void test_mutated_documents(void **state)
{
	const struct gen g = { .max_depth = 5, .big_objects = false };

	n_accepted = n_refused = 0;
	for (unsigned i = 0; i < 8000; i++) {
		struct text t = {};
		unsigned k = 1 + ri(3);

		put_value(&t, &g, 0);
		for (unsigned j = 0; j < k; j++)
			mutate(&t);
		compare(t.p, t.len, NULL);
		free(t.p);
	}
	print_message("mutated documents: %u admitted, %u refused\n", n_accepted, n_refused);
	assert_true(n_accepted > 300);
	assert_true(n_refused > 5000);
}

static void test_numbers(void **state)
{
	n_accepted = n_refused = 0;
	for (unsigned i = 0; i < 30000; i++) {
		struct text t = {};

		if (ri(2))
			put_number(&t);
		else {
			putch(&t, '[');
			put_number(&t);
			putch(&t, ',');
			put_number(&t);
			putch(&t, ']');
		}
		compare(t.p, t.len, NULL);
		free(t.p);
	}
	print_message("numbers: %u admitted, %u refused\n", n_accepted, n_refused);
	assert_true(n_accepted > 20000);
	assert_true(n_refused > 1000);
}

/* Where the shortest-digits search can go wrong: decimals exactly halfway
 * between two doubles (strtod rounds them to even), powers of two (the
 * double below is nearer than the one above) and powers of ten with their
 * neighbours, each printed with 15 to 19 significant digits. */
static void test_number_edges(void **state)
{
	n_accepted = n_refused = 0;
	for (int e = -90; e <= 75; e++)
		for (int base = 0; base < 2; base++) {
			double x = base ? __builtin_powi(10.0, e / 3) : __builtin_powi(2.0, e);
			uint64_t bits;

			memcpy(&bits, &x, sizeof(bits));
			for (int d = -2; d <= 2; d++) {
				uint64_t b = bits + (uint64_t)(int64_t)d;
				double y;
				char buf[64];

				memcpy(&y, &b, sizeof(y));
				for (int p = 15; p <= 19; p++) {
					snprintf(buf, sizeof(buf), "%.*g", p, y);
					compare(buf, strlen(buf), NULL);
					snprintf(buf, sizeof(buf), "-%.*e", p - 1, y);
					compare(buf, strlen(buf), NULL);
				}
			}
		}
	/* Ties: doubles in [2^50, 2^53) are multiples of 1/8, 1/4, 1/2, so
	 * these decimals lie exactly between two of them. */
	for (unsigned i = 0; i < 3000; i++) {
		static const char *const frac[] = { ".125", ".375", ".625", ".875", ".25", ".75", ".5" };
		unsigned f = ri(7), shift = f < 4 ? 50 : f < 6 ? 51 : 52;
		uint64_t n = (1ull << shift) + (rnd() & ((1ull << shift) - 1));
		char buf[64];

		snprintf(buf, sizeof(buf), "%s%llu%s", ri(2) ? "-" : "", (unsigned long long)n, frac[f]);
		compare(buf, strlen(buf), NULL);
		/* The same value with an exponent and a trailing zero. */
		snprintf(buf, sizeof(buf), "%llu%s0e0", (unsigned long long)n, frac[f]);
		compare(buf, strlen(buf), NULL);
	}
	/* Halfway below a power of two, where the lower neighbour is nearer. */
	{
		static const char *const below[] = { "4503599627370495.75",
						     "2251799813685247.875",
						     "1125899906842623.9375",
						     "9007199254740991.5",
						     "4503599627370495.7500000000000001",
						     "4.50359962737049575e15" };

		for (size_t i = 0; i < sizeof(below) / sizeof(below[0]); i++)
			compare(below[i], strlen(below[i]), NULL);
	}
	print_message("number edges: %u admitted, %u refused\n", n_accepted, n_refused);
}

static void test_limits(void **state)
{
	const struct gen g = { .max_depth = 8, .big_objects = false };

	for (unsigned i = 0; i < 3000; i++) {
		struct cordon_canon_limits lim = { .max_depth = 1 + ri(6), .max_bytes = ri(3) ? 0 : 1 + ri(200) };
		struct text t = {};

		put_value(&t, &g, 0);
		compare(t.p, t.len, &lim);
		free(t.p);
	}
	/* Depth limits above the fast path's 256 go to the reference, which
	 * admits up to jansson's 2048 but cannot encode beyond 256. */
	{
		struct cordon_canon_limits lim = { .max_depth = 300 };
		struct text t = {};

		for (unsigned d = 0; d < 280; d++)
			putch(&t, '[');
		for (unsigned d = 0; d < 280; d++)
			putch(&t, ']');
		compare(t.p, t.len, &lim);
		compare(t.p, 2 * 250, &lim);
		t.len = 0;
		for (unsigned d = 0; d < 256; d++)
			puts_(&t, "{\"a\":");
		puts_(&t, "1");
		for (unsigned d = 0; d < 256; d++)
			putch(&t, '}');
		compare(t.p, t.len, &lim);
		lim.max_depth = 256;
		compare(t.p, t.len, &lim);
		lim.max_depth = 255;
		compare(t.p, t.len, &lim);
		free(t.p);
	}
	/* Edge inputs. */
	compare("", 0, NULL);
	compare(NULL, 0, NULL);
	compare(NULL, 3, NULL);
	compare(" ", 1, NULL);
	compare("{}", 2, NULL);
	compare("[]", 2, NULL);
	compare("\"\"", 2, NULL);
	compare("{\"\":{\"\":[]}}", 12, NULL);
	compare("1", 1, NULL);
	compare("-", 1, NULL);
	compare("tru", 3, NULL);
	compare("nul", 3, NULL);
	compare("[1,2", 4, NULL);
	compare("{\"a\"", 4, NULL);
	compare("{\"a\":", 5, NULL);
	compare("\"\\", 2, NULL);
	compare("\"\\u12", 5, NULL);
	compare("\"\\ud83d\\ude0", 12, NULL);
}

/* Names that sort differently by UTF-16 code units than by code points or
 * bytes, in objects large enough for the merge sort. */
static void test_name_order(void **state)
{
	static const uint32_t tricky[] = { 0x7f,   0x80,   0xd7ff,  0xe000,  0xefff,
					   0xf000, 0xffff, 0x10000, 0x1f600, 0x10ffff };

	for (unsigned i = 0; i < 2000; i++) {
		struct text t = {};
		unsigned n = 1 + ri(ri(4) ? 40 : 400); /* above 64: the radix sort */

		putch(&t, '{');
		for (unsigned j = 0; j < n; j++) {
			uint32_t cps[16];
			size_t k = 0;

			/* Shared prefixes of 0–11 bytes, then tricky characters;
			 * some duplicates. */
			for (unsigned p = ri(12); p > 0; p--)
				cps[k++] = 'a';
			for (unsigned m = 1 + ri(2); m > 0; m--)
				cps[k++] = tricky[ri(sizeof(tricky) / sizeof(tricky[0]))];
			if (j)
				putch(&t, ',');
			put_string(&t, cps, k);
			putf(&t, ":%u", j);
		}
		putch(&t, '}');
		compare(t.p, t.len, NULL);
		free(t.p);
	}
}

/* Names that are prefixes of each other ("b", "bb", "bbb", … and some
 * siblings): each radix level splits off one name, so the sort reaches its
 * recursion bound and finishes by merge sort. */
static void test_name_chains(void **state)
{
	for (unsigned round = 0; round < 20; round++) {
		unsigned n = 70 + ri(300), *perm = malloc(n * sizeof(*perm));
		struct text t = {};

		assert_non_null(perm);
		for (unsigned i = 0; i < n; i++)
			perm[i] = i;
		for (unsigned i = n - 1; i > 0; i--) {
			unsigned j = ri(i + 1), x = perm[i];

			perm[i] = perm[j];
			perm[j] = x;
		}
		putch(&t, '{');
		for (unsigned i = 0; i < n; i++) {
			if (i)
				putch(&t, ',');
			putch(&t, '"');
			for (unsigned k = 0; k <= perm[i] / 2; k++)
				putch(&t, 'b');
			if (perm[i] % 2)
				puts_(&t, round % 2 ? "\\ue000" : "\\ud83d\\ude00");
			putf(&t, "\":%u", i);
		}
		/* A duplicate now and then. */
		if (round % 5 == 4)
			puts_(&t, ",\"bbb\":0");
		putch(&t, '}');
		compare(t.p, t.len, NULL);
		free(t.p);
		free(perm);
	}
}

/* ---- Lifted decode -------------------------------------------------------------------- */

static void compare_lifted(const char *in, size_t len, const struct cordon_canon_limits *lim, bool *ret_lifted)
{
	struct cordon_diag d1 = {}, d2 = {};
	struct cordon_canon_lifted lf = { .jcs = (char *)0x1 };
	json_t *t1 = NULL, *t2 = NULL, *args;
	int r1, r2;

	r1 = cordon_canon_decode_lifted(in, len, lim, "params", "arguments", &t1, &lf, &d1);
	r2 = cordon_canon_decode(in, len, lim, &t2, &d2);
	if (r1 != r2)
		fail_msg("input %.300s: lifted %d (%s), reference %d (%s)", in, r1, d1.message, r2, d2.message);
	*ret_lifted = false;
	if (r1 < 0) {
		assert_null(lf.jcs);
		assert_int_equal(d1.error, d2.error);
		assert_string_equal(d1.message, d2.message);
		assert_int_equal(d1.line, d2.line);
		assert_int_equal(d1.column, d2.column);
		return;
	}
	args = json_object_get(json_object_get(t2, "params"), "arguments");
	if (json_is_object(t2) && json_is_object(json_object_get(t2, "params")) && json_is_object(args)) {
		char *want = NULL;
		size_t want_len = 0;

		/* Eligible limits: the lift must happen. */
		assert_non_null(lf.jcs);
		assert_int_equal(cordon_jcs_encode(args, &want, &want_len), 0);
		if (lf.jcs_len != want_len || memcmp(lf.jcs, want, want_len) != 0)
			fail_msg("input %.300s:\n lifted    %.300s\n reference %.300s", in, lf.jcs, want);
		assert_int_equal(lf.jcs[lf.jcs_len], 0);
		free(want);
		/* Left out of the tree, and only that. */
		assert_null(json_object_get(json_object_get(t1, "params"), "arguments"));
		assert_false(json_equal(t1, t2));
		assert_int_equal(cordon_canon_lifted_restore(t1, in, len, lim, "params", "arguments", &lf, &d1), 0);
		assert_null(lf.jcs);
		*ret_lifted = true;
	} else
		assert_null(lf.jcs);
	if (!json_equal(t1, t2)) {
		char *a = json_dumps(t1, JSON_COMPACT), *b = json_dumps(t2, JSON_COMPACT);

		fail_msg("input %.300s:\n lifted tree    %.300s\n reference tree %.300s", in, a, b);
	}
	json_decref(t1);
	json_decref(t2);
}

static void put_message(struct text *t, const struct gen *g)
{
	static const char *const members[] = { "\"jsonrpc\":\"2.0\"",
					       "\"id\":7",
					       "\"id\":7.0",
					       "\"method\":\"tools/call\"",
					       "\"x\":{\"arguments\":{\"a\":1}}",
					       "\"arguments\":{\"b\":2}" };
	unsigned n = 1 + ri(4);
	bool params = false;

	putch(t, '{');
	for (unsigned i = 0; i < n; i++) {
		if (i)
			putch(t, ',');
		ws(t);
		if (!params && ri(2)) {
			unsigned m = ri(4);

			params = true;
			puts_(t, ri(8) ? "\"params\"" : "\"p\\u0061rams\"");
			putch(t, ':');
			ws(t);
			if (ri(10) == 0) {
				put_value(t, g, 1); /* params not an object, mostly */
				continue;
			}
			putch(t, '{');
			for (unsigned j = 0; j <= m; j++) {
				if (j)
					putch(t, ',');
				ws(t);
				if (j == m / 2 || ri(20) == 0) {
					/* arguments, sometimes escaped, sometimes twice, sometimes not an object */
					puts_(t, ri(8) ? "\"arguments\"" : "\"\\u0061rguments\"");
					ws(t);
					putch(t, ':');
					ws(t);
					if (ri(6) == 0)
						put_value(t, g, 2);
					else
						put_object(t, g, 2);
				} else if (ri(2))
					puts_(t, "\"name\":\"github__create_issue\"");
				else
					puts_(t, "\"_meta\":{\"progressToken\":1.0,\"arguments\":{\"z\":0}}");
			}
			ws(t);
			putch(t, '}');
		} else
			puts_(t, members[ri(sizeof(members) / sizeof(members[0]))]);
		ws(t);
	}
	putch(t, '}');
}

static void test_lifted(void **state)
{
	const struct gen g = { .max_depth = 5, .big_objects = true };
	unsigned lifted = 0;

	for (unsigned i = 0; i < 4000; i++) {
		struct text t = {};
		bool l;

		put_message(&t, &g);
		if (ri(4) == 0)
			mutate(&t);
		compare_lifted(t.p, t.len, NULL, &l);
		lifted += l;
		free(t.p);
	}
	/* A scalar or array document, and limits. */
	for (unsigned i = 0; i < 500; i++) {
		struct cordon_canon_limits lim = { .max_depth = 1 + ri(5) };
		struct text t = {};
		bool l;

		if (ri(2))
			put_message(&t, &g);
		else
			put_value(&t, &g, 0);
		compare_lifted(t.p, t.len, &lim, &l);
		free(t.p);
	}
	print_message("lifted: %u of 4000 messages\n", lifted);
	assert_true(lifted > 300);

	/* Over the fast path's depth: decoded by the reference, not lifted. */
	{
		struct cordon_canon_limits lim = { .max_depth = 1000 };
		struct cordon_canon_lifted lf;
		json_t *v = NULL;

		const char *msg = "{\"params\":{\"arguments\":{\"a\":1}}}";

		assert_int_equal(
			cordon_canon_decode_lifted(msg, strlen(msg), &lim, "params", "arguments", &v, &lf, NULL), 0);
		assert_null(lf.jcs);
		assert_non_null(json_object_get(json_object_get(v, "params"), "arguments"));
		json_decref(v);
		/* Restoring nothing is a no-op; NULL member names are refused. */
		assert_int_equal(cordon_canon_lifted_restore(NULL, NULL, 0, NULL, "params", "arguments", &lf, NULL), 0);
		assert_int_equal(cordon_canon_decode_lifted("{}", 2, NULL, NULL, "arguments", &v, &lf, NULL), -EINVAL);
	}
}

/* ---- The bench's shapes at 1 MiB ------------------------------------------------------- */

static void test_big_documents(void **state)
{
	const struct gen g = { .max_depth = 6, .big_objects = true };
	struct cordon_canon_limits lim = { .max_bytes = 4u << 20 };
	struct text t = {};

	/* Random values. */
	putch(&t, '[');
	for (bool first = true; t.len < (1u << 20);) {
		struct text v = {};
		struct cordon_diag d = {};
		char *o = NULL;

		put_value(&v, &g, 1);
		/* Only admitted items, so the whole array is admitted. */
		if (cordon_canon_bytes_reference(v.p, v.len, NULL, &o, NULL, &d) == 0) {
			if (!first)
				putch(&t, ',');
			put(&t, v.p, v.len);
			first = false;
		}
		free(o);
		free(v.p);
	}
	putch(&t, ']');
	n_accepted = 0;
	compare(t.p, t.len, &lim);
	if (n_accepted != 1) {
		struct cordon_diag d = {};
		char *o = NULL;

		fail_msg("big document refused: %d %s", cordon_canon_bytes_reference(t.p, t.len, &lim, &o, NULL, &d),
			 d.message);
	}

	/* One large string with escapes and non-ASCII. */
	t.len = 0;
	puts_(&t, "{\"content\":\"");
	while (t.len < (1u << 20))
		puts_(&t,
		      "line with \\\"quotes\\\", a tab\\t, caf\xc3\xa9, \\u00e9 and \xf0\x9f\x98\x80; path C:\\\\x\\n");
	puts_(&t, "\",\"path\":\"/tmp/x\"}");
	compare(t.p, t.len, &lim);

	/* Many small keys in one object, not in order. */
	t.len = 0;
	putch(&t, '{');
	for (unsigned i = 0; t.len < (1u << 20); i++)
		putf(&t, "%s\"k%08x\":%u", i ? "," : "", (unsigned)(rnd() & 0xffffffffu) ^ i, i);
	putch(&t, '}');
	compare(t.p, t.len, &lim);

	/* Deep nesting at the limit, repeated. */
	t.len = 0;
	putch(&t, '[');
	for (unsigned i = 0; t.len < (1u << 20); i++) {
		if (i)
			putch(&t, ',');
		for (unsigned d = 0; d < 62; d++)
			puts_(&t, d % 2 ? "[" : "{\"b\":1,\"a\":");
		puts_(&t, "1.5");
		for (unsigned d = 62; d-- > 0;)
			puts_(&t, d % 2 ? "]" : "}");
	}
	putch(&t, ']');
	compare(t.p, t.len, &lim);
	free(t.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_documents), cmocka_unit_test(test_mutated_documents),
		cmocka_unit_test(test_numbers),		 cmocka_unit_test(test_number_edges),
		cmocka_unit_test(test_limits),		 cmocka_unit_test(test_name_order),
		cmocka_unit_test(test_name_chains),	 cmocka_unit_test(test_lifted),
		cmocka_unit_test(test_big_documents),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
