/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Canonical JSON without a tree: admission and RFC 8785 output straight from
 * the text (cordon_canon_bytes, cordon_canon_decode_lifted).
 *
 * The reference path (canon.c) pre-scans the text, has jansson build a tree
 * and encodes the tree: about 20 MiB/s on 1 MiB of tools/call arguments,
 * mostly jansson's allocations. Here:
 *
 *   1. scan: one pass over the text checks everything admission checks
 *      (grammar, UTF-8, escapes and surrogates, NUL, depth, number ranges,
 *      duplicate member names) and records each value as a 16-byte node on a
 *      tape: scalars whose canonical text is a span (literals, integers,
 *      strings without escapes, reals already written canonically) as that
 *      span, other reals as the text printed for them, containers as counts.
 *      When an object closes, its member names are sorted by UTF-16 code
 *      units (insertion/merge sort on an 8-byte prefix; above 64 members an
 *      in-place radix sort), duplicates show up as equal neighbours, and the
 *      order is recorded. The scan also sums the exact length of the output.
 *   2. emit: writes the canonical text into one buffer of that length,
 *      copying spans; escaped strings are rewritten run by run.
 *
 * Strings are skipped 16 bytes at a time (SSE2; 8 with the portable SWAR
 * fallback) up to the next quote, backslash, control or non-ASCII byte.
 * Reals: a lexeme with at most 15 significant digits and a decimal exponent
 * in ±300 prints from its own digits (no two decimals of 15 digits or fewer
 * read as the same double, so they are the shortest round-trip digits
 * ECMAScript asks for); 16 to 19 digits run cordon_jcs_format_double()'s
 * search on exact 128-bit integers (real_mid); anything else goes through
 * strtod and cordon_jcs_format_double(), as the reference does.
 *
 * Refusals are not reported here: when the scan refuses an input, the caller
 * runs the reference on it, which reports the error, so errno, message and
 * position are those of the reference by construction. This path only has to
 * be right about what it accepts and what it writes; test-canon-fast and
 * fuzz-jcs compare the two on random, adversarial and fuzzed inputs. Being
 * stricter than the reference only costs time: depth limits above 256 (the
 * reference encoder's own guard) and inputs of 2 GiB or more go straight to
 * the reference.
 *
 * Why this file is ~1700 lines: the scan, the name sort, the number printing
 * and the emitter share the tape's node format and the exact output length
 * the scan computes for the emitter; split apart, that contract (a wrong
 * length is a buffer overrun) would sit behind a cross-file interface. The
 * exact-integer real search (~300 lines) is the piece that could move out
 * next, behind canon-private.h. */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "canon-private.h"
#include "canon.h"
#include "cleanup.h"

#if defined(__SSE2__) && !defined(CORDON_CANON_FAST_SWAR)
#include <emmintrin.h>
#define FAST_SSE2 1
#else
#define FAST_SSE2 0
#endif

#define STEP "canon"

/* Above this depth limit the reference encoder refuses (-ELOOP); keep its
 * behaviour by not taking the fast path at all. */
#define FAST_MAX_DEPTH 256u
/* Offsets on the tape are 32-bit. */
#define FAST_MAX_LEN ((size_t)INT32_MAX)
/* A lexeme of at most this many significant digits prints from its digits. */
#define FAST_DIGITS 15u
/* Up to this many, the shortest digits are found with exact 128-bit integer
 * arithmetic (real_mid); beyond, through strtod and printf (real_slow). */
#define MID_DIGITS 19u

/* N_TEXT: a scalar whose canonical text is at (a, b) in the input, or in
 * num with F_NUM: literals, integers, unescaped strings (with their quotes),
 * reals already written canonically, other reals as printed into num.
 * N_ESCAPED: a string with escapes, its body at (a, b) in the input.
 * N_ZERO: a number equal to zero that is not written "0" ("-0", "0.0e5"). */
enum node_type { N_TEXT, N_ESCAPED, N_ZERO, N_ARRAY, N_OBJECT };

enum {
	F_NUM = 1u << 0, /* N_TEXT: the text is in num, not in the input */
};

struct node {
	uint32_t a; /* N_TEXT: offset of the text; N_ESCAPED: of the body (after
		     * the quote); N_OBJECT: of its member order in order */
	uint32_t b; /* N_TEXT, N_ESCAPED: length; N_ARRAY, N_OBJECT: number of values */
	uint32_t c; /* array, object: index of the first node after it */
	uint8_t type, flags;
};

struct member {
	uint64_t prefix; /* the name's first 8 bytes, big-endian, zero-padded */
	const unsigned char *name;
	uint32_t len;
	uint32_t node; /* the name's node; the value's node follows it */
};

enum frame_role {
	ROLE_NONE,
	ROLE_OUTER,  /* the root's member `outer` */
	ROLE_LIFTED, /* outer's member `inner`: the value to lift */
};

struct frame {
	uint32_t node, count;
	uint32_t mbase; /* object: its first member in mem */
	bool object;
	uint8_t role;
};

struct fast {
	const unsigned char *in;
	size_t len;

	struct node *tape;
	size_t ntape, ctape;
	struct member *mem; /* members of the open objects, a stack */
	size_t nmem, cmem;
	struct member *tmp; /* merge sort scratch */
	size_t ctmp;
	uint32_t *order; /* each object's name nodes in canonical order */
	size_t norder, corder;
	char *num; /* the reals' canonical text */
	size_t nnum, cnum;
	unsigned char *names; /* unescaped copies of escaped member names (capacity len) */
	size_t nnames;
	size_t out_len; /* exact length of the canonical text */

	/* Lifting (cordon_canon_decode_lifted): the member outer.inner. */
	const char *outer, *inner;
	size_t outer_len, inner_len;
	uint8_t want; /* role of the value about to be scanned */
	bool lifted;
	uint32_t lift_node;
	size_t lift_raw_start, lift_raw_end, lift_out_start, lift_out_len;
};

static void fast_done(struct fast *f)
{
	free(f->tape);
	free(f->mem);
	free(f->tmp);
	free(f->order);
	free(f->num);
	free(f->names);
}

/* Makes room for `need` elements in a growable array. */
#define RESERVE(ptr, cap, need)                                                                                        \
	({                                                                                                             \
		int _r = 0;                                                                                            \
		if ((need) > (cap)) {                                                                                  \
			size_t _n = (cap) ? (cap) : 64;                                                                \
			void *_q;                                                                                      \
			while (_n < (need))                                                                            \
				_n *= 2;                                                                               \
			_q = reallocarray((ptr), _n, sizeof(*(ptr)));                                                  \
			if (_q) {                                                                                      \
				(ptr) = _q;                                                                            \
				(cap) = _n;                                                                            \
			} else                                                                                         \
				_r = -ENOMEM;                                                                          \
		}                                                                                                      \
		_r;                                                                                                    \
	})

static struct node *push_node(struct fast *f, uint8_t type)
{
	struct node *n;

	if (f->ntape == f->ctape && RESERVE(f->tape, f->ctape, f->ntape + 1) < 0)
		return NULL; /* cannot happen: the tape is allocated at its bound */
	n = &f->tape[f->ntape++];
	/* a, b and c are written by the caller where they are read. */
	n->type = type;
	n->flags = 0;
	return n;
}

/* ---- Strings ------------------------------------------------------------------ */

static inline bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* The first byte at or after p that is a quote, a backslash, a control
 * character or non-ASCII; end if none. */
static inline const unsigned char *skip_plain(const unsigned char *p, const unsigned char *end)
{
#if FAST_SSE2
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);

	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		/* Signed compare: bytes >= 0x80 are negative, so "< 0x20" also
		 * catches non-ASCII. */
		__m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
					   _mm_cmplt_epi8(v, space));
		unsigned mask = (unsigned)_mm_movemask_epi8(hit);

		if (mask)
			return p + __builtin_ctz(mask);
		p += 16;
	}
#else
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;

	while (end - p >= 8) {
		uint64_t w, q, b;

		memcpy(&w, p, 8);
		q = w ^ (ones * '"');
		b = w ^ (ones * '\\');
		/* Exact as "is there such a byte"; the loop below finds it. */
		if ((((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w) | w) & highs)
			break;
		p += 8;
	}
#endif
	while (p < end && *p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x80)
		p++;
	return p;
}

/* Length of the strictly valid UTF-8 sequence at p (p[0] >= 0x80): shortest
 * form, no surrogates, at most U+10FFFF, as canon.c's utf8_decode(); 0 if
 * invalid. */
static inline size_t utf8_valid_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0], c1;

	if (c < 0xc2)
		return 0;
	if (end - p < 2 || (p[1] & 0xc0) != 0x80)
		return 0;
	if (c < 0xe0)
		return 2;
	c1 = p[1];
	if (end - p < 3 || (p[2] & 0xc0) != 0x80)
		return 0;
	if (c < 0xf0) {
		if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0))
			return 0;
		return 3;
	}
	if (c > 0xf4 || end - p < 4 || (p[3] & 0xc0) != 0x80)
		return 0;
	if ((c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90))
		return 0;
	return 4;
}

static int hex4(const unsigned char *p, uint32_t *ret)
{
	uint32_t v = 0;

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
			return -1;
		v = v << 4 | h;
	}
	*ret = v;
	return 0;
}

/* The escape at p (p[0] == '\\'): its code point and its length in the text.
 * Refuses what admission refuses: unknown escapes, bad hex, \u0000, lone or
 * reversed surrogates. */
static int escape_decode(const unsigned char *p, const unsigned char *end, uint32_t *ret_cp, size_t *ret_len)
{
	uint32_t u, lo;

	if (end - p < 2)
		return -1;
	*ret_len = 2;
	switch (p[1]) {
	case '"':
	case '\\':
	case '/':
		*ret_cp = p[1];
		return 0;
	case 'b':
		*ret_cp = '\b';
		return 0;
	case 'f':
		*ret_cp = '\f';
		return 0;
	case 'n':
		*ret_cp = '\n';
		return 0;
	case 'r':
		*ret_cp = '\r';
		return 0;
	case 't':
		*ret_cp = '\t';
		return 0;
	case 'u':
		break;
	default:
		return -1;
	}
	if (end - p < 6 || hex4(p + 2, &u) < 0 || u == 0 || (u >= 0xdc00 && u <= 0xdfff))
		return -1;
	if (u >= 0xd800 && u <= 0xdbff) {
		if (end - p < 12 || p[6] != '\\' || p[7] != 'u' || hex4(p + 8, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
			return -1;
		*ret_cp = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		*ret_len = 12;
		return 0;
	}
	*ret_cp = u;
	*ret_len = 6;
	return 0;
}

static inline bool short_escape(uint32_t cp)
{
	return cp == '\b' || cp == '\t' || cp == '\n' || cp == '\f' || cp == '\r';
}

/* Length of a code point in a canonical string body. */
static size_t canonical_len(uint32_t cp)
{
	if (cp == '"' || cp == '\\')
		return 2;
	if (cp < 0x20)
		return short_escape(cp) ? 2 : 6;
	if (cp < 0x80)
		return 1;
	if (cp < 0x800)
		return 2;
	if (cp < 0x10000)
		return 3;
	return 4;
}

static char *put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80)
		*o++ = (char)cp;
	else if (cp < 0x800) {
		*o++ = (char)(0xc0 | cp >> 6);
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xe0 | cp >> 12);
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xf0 | cp >> 18);
		*o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	return o;
}

/* A code point as a canonical string body writes it (docs/formats.md 1.2). */
static char *put_canonical(char *o, uint32_t cp)
{
	static const char hex[] = "0123456789abcdef";

	if (cp >= 0x20 && cp != '"' && cp != '\\')
		return put_utf8(o, cp);
	*o++ = '\\';
	switch (cp) {
	case '"':
	case '\\':
		*o++ = (char)cp;
		break;
	case '\b':
		*o++ = 'b';
		break;
	case '\f':
		*o++ = 'f';
		break;
	case '\n':
		*o++ = 'n';
		break;
	case '\r':
		*o++ = 'r';
		break;
	case '\t':
		*o++ = 't';
		break;
	default:
		*o++ = 'u';
		*o++ = '0';
		*o++ = '0';
		*o++ = hex[cp >> 4];
		*o++ = hex[cp & 0xf];
	}
	return o;
}

/* Scans a string body from p (just after the opening quote). Returns the
 * closing quote, or NULL if the string is not admitted; *ret_len gets the
 * length of its canonical body. */
static const unsigned char *scan_string(const unsigned char *p, const unsigned char *end, size_t *ret_len,
					bool *ret_escaped)
{
	const unsigned char *start = p;
	size_t shrink = 0;
	bool escaped = false;

	for (;;) {
		unsigned char c;

		p = skip_plain(p, end);
		if (p >= end)
			return NULL;
		c = *p;
		if (c == '"')
			break;
		if (c == '\\') {
			uint32_t cp;
			size_t raw;

			if (escape_decode(p, end, &cp, &raw) < 0)
				return NULL;
			/* Canonical is never longer than the escape. */
			shrink += raw - canonical_len(cp);
			escaped = true;
			p += raw;
			continue;
		}
		if (c < 0x80)
			return NULL; /* a raw control character, NUL included */
		do {
			size_t l = utf8_valid_len(p, end);

			if (l == 0)
				return NULL;
			p += l;
		} while (p < end && *p >= 0x80);
	}
	*ret_len = (size_t)(p - start) - shrink;
	*ret_escaped = escaped;
	return p;
}

/* Unescapes an admitted string body into o; returns the end. */
static unsigned char *unescape(const unsigned char *s, size_t n, unsigned char *o)
{
	const unsigned char *end = s + n;

	while (s < end) {
		const unsigned char *b = memchr(s, '\\', (size_t)(end - s));
		size_t run = (size_t)((b ? b : end) - s);
		uint32_t cp;
		size_t raw;

		memcpy(o, s, run);
		o += run;
		s += run;
		if (!b)
			break;
		if (escape_decode(s, end, &cp, &raw) < 0)
			break; /* cannot happen: scanned */
		o = (unsigned char *)put_utf8((char *)o, cp);
		s += raw;
	}
	return o;
}

/* ---- Member names ------------------------------------------------------------------ */

/* Names sort by UTF-16 code units (RFC 8785 §3.2.3). Byte order of UTF-8 is
 * code point order, and UTF-16 order differs from it only between a
 * supplementary character (lead byte F0–F4, surrogates D800–DFFF) and one in
 * U+E000–U+FFFF (lead byte EE or EF). Where two valid UTF-8 strings first
 * differ, both bytes are lead bytes, or both continuation bytes of
 * characters of the same length; so moving the lead bytes F0–F4 below EE and
 * EF (and nothing else) makes plain byte order UTF-16 order. Never 0 for a
 * byte of a name (names hold no NUL). */
static inline unsigned unit_byte(unsigned char c)
{
	if (c < 0xee)
		return c;
	return c >= 0xf0 ? c - 2u : c + 5u; /* F0..F4 -> EE..F2, EE EF -> F3 F4 */
}

/* The first 8 bytes as unit_byte()s, big-endian, 0-padded: comparing two
 * prefixes as integers orders the names by their first 8 bytes. */
static uint64_t load_prefix(const unsigned char *s, size_t n, const unsigned char *limit)
{
	uint64_t v = 0;

	/* ASCII names with 8 readable bytes: one load. */
	if (limit - s >= 8) {
		memcpy(&v, s, 8);
		v = be64toh(v);
		if (n < 8)
			v &= ~(~0ull >> (8 * n)); /* keep the first n bytes */
		if (!(v & 0x8080808080808080ull))
			return v;
		v = 0;
	}
	for (size_t i = 0; i < 8; i++)
		v = v << 8 | (i < n ? unit_byte(s[i]) : 0);
	return v;
}

static int rest_cmp(const unsigned char *a, size_t la, const unsigned char *b, size_t lb)
{
	size_t n = la < lb ? la : lb;

	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return unit_byte(a[i]) < unit_byte(b[i]) ? -1 : 1;
	return (la > lb) - (la < lb);
}

/* cordon_jcs_compare_keys() for names on the member stack. */
static inline int name_cmp(const struct member *a, const struct member *b)
{
	if (a->prefix != b->prefix)
		return a->prefix < b->prefix ? -1 : 1;
	/* Names hold no NUL, so equal prefixes with a name of at most 8 bytes
	 * means equal names or one a prefix of the other. */
	if (a->len <= 8 || b->len <= 8)
		return (a->len > b->len) - (a->len < b->len);
	return rest_cmp(a->name + 8, a->len - 8, b->name + 8, b->len - 8);
}

static void insertion_sort(struct member *m, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct member x = m[i];
		size_t j = i;

		while (j > 0 && name_cmp(&m[j - 1], &x) > 0) {
			m[j] = m[j - 1];
			j--;
		}
		m[j] = x;
	}
}

static void merge_sort(struct member *m, size_t n, struct member *tmp)
{
	size_t h = n / 2, i = 0, j = h, k = 0;

	if (n <= 12) {
		insertion_sort(m, n);
		return;
	}
	merge_sort(m, h, tmp);
	merge_sort(m + h, n - h, tmp);
	if (name_cmp(&m[h - 1], &m[h]) <= 0)
		return;
	memcpy(tmp, m, h * sizeof(*m));
	/* k <= j always: writing m[k] never overwrites an unread m[j]. */
	while (i < h && j < n)
		m[k++] = name_cmp(&m[j], &tmp[i]) < 0 ? m[j++] : tmp[i++];
	while (i < h)
		m[k++] = tmp[i++];
}

/* Byte d of a name as a radix bucket: its unit_byte(), 0 past the end. */
static inline unsigned name_byte(const struct member *m, size_t d)
{
	if (d < 8)
		return (unsigned)(m->prefix >> (56 - 8 * d)) & 0xff;
	return d < m->len ? unit_byte(m->name[d]) : 0;
}

/* Large objects: most significant byte first radix sort from byte d on, in
 * place (each member is swapped straight into its bucket), so a large object
 * needs no second array; buckets of at most 64 by merge sort (stack
 * scratch), and, to bound the recursion, what is left after 24 levels by
 * merge sort with the caller's scratch. Equal names end up together (bucket
 * 0 once they end), for the duplicate check. */
#define RADIX_MIN 64

static int radix_sort(struct fast *f, struct member *m, size_t n, size_t d, unsigned level)
{
	uint32_t count[256], next[256], end[256];
	size_t i;
	int r;

	for (;;) {
		if (n <= RADIX_MIN) {
			struct member tmp[RADIX_MIN / 2 + 1];

			merge_sort(m, n, tmp);
			return 0;
		}
		if (level > 24) {
			if (RESERVE(f->tmp, f->ctmp, n / 2 + 1) < 0)
				return -ENOMEM;
			merge_sort(m, n, f->tmp);
			return 0;
		}
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[name_byte(&m[i], d)]++;
		if (count[0] == n)
			return 0; /* all ended here: equal names */
		for (i = 0; i < 256 && count[i] != n; i++)
			;
		if (i == 256)
			break;
		d++; /* one bucket: all share this byte */
	}
	next[0] = 0;
	for (i = 0; i < 256; i++) {
		if (i)
			next[i] = end[i - 1];
		end[i] = next[i] + count[i];
	}
	for (i = 0; i < 256; i++)
		while (next[i] < end[i]) {
			unsigned b = name_byte(&m[next[i]], d);

			if (b == i)
				next[i]++;
			else {
				struct member x = m[next[i]];

				m[next[i]] = m[next[b]];
				m[next[b]++] = x;
			}
		}
	for (i = 1; i < 256; i++) {
		size_t c = count[i];

		if (c > 1) {
			r = radix_sort(f, m + end[i] - c, c, d + 1, level + 1);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* Sorts the members of the object closing at frame fr, refuses duplicates
 * and records the order. */
#define SMALL_OBJECT 16

static int close_object(struct fast *f, const struct frame *fr)
{
	struct member *m = f->mem + fr->mbase;
	size_t n = f->nmem - fr->mbase, i;
	struct node *obj = &f->tape[fr->node];

	for (i = 1; i < n; i++)
		if (name_cmp(&m[i - 1], &m[i]) >= 0)
			break;
	if (i < n && n <= SMALL_OBJECT) {
		/* Small objects (most of them): insertion sort of indices, so
		 * only 1-byte entries move, straight into order. */
		uint8_t idx[SMALL_OBJECT];

		if (RESERVE(f->order, f->corder, f->norder + n) < 0)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			size_t j = i;

			while (j > 0 && name_cmp(&m[idx[j - 1]], &m[i]) > 0) {
				idx[j] = idx[j - 1];
				j--;
			}
			idx[j] = (uint8_t)i;
		}
		for (i = 1; i < n; i++)
			if (name_cmp(&m[idx[i - 1]], &m[idx[i]]) == 0)
				return -1; /* duplicate member name */
		for (i = 0; i < n; i++)
			f->order[f->norder + i] = m[idx[i]].node;
		obj->a = (uint32_t)f->norder;
		f->norder += n;
		f->nmem = fr->mbase;
		return 0;
	}
	if (i < n) {
		int r = radix_sort(f, m, n, 0, 0);

		if (r < 0)
			return r;
		for (i = 1; i < n; i++)
			if (name_cmp(&m[i - 1], &m[i]) == 0)
				return -1; /* duplicate member name */
	}
	if (RESERVE(f->order, f->corder, f->norder + n) < 0)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		f->order[f->norder + i] = m[i].node;
	obj->a = (uint32_t)f->norder;
	f->norder += n;
	f->nmem = fr->mbase;
	return 0;
}

/* ---- Numbers --------------------------------------------------------------------- */

static const uint64_t pow10_u64[] = {
	1ull,
	10ull,
	100ull,
	1000ull,
	10000ull,
	100000ull,
	1000000ull,
	10000000ull,
	100000000ull,
	1000000000ull,
	10000000000ull,
	100000000000ull,
	1000000000000ull,
	10000000000000ull,
	100000000000000ull,
	1000000000000000ull,
	10000000000000000ull,
	100000000000000000ull,
	1000000000000000000ull,
	10000000000000000000ull,
};

/* 5^0 … 5^27 (5^27 < 2^63). */
static const uint64_t pow5_u64[] = {
	1ull,
	5ull,
	25ull,
	125ull,
	625ull,
	3125ull,
	15625ull,
	78125ull,
	390625ull,
	1953125ull,
	9765625ull,
	48828125ull,
	244140625ull,
	1220703125ull,
	6103515625ull,
	30517578125ull,
	152587890625ull,
	762939453125ull,
	3814697265625ull,
	19073486328125ull,
	95367431640625ull,
	476837158203125ull,
	2384185791015625ull,
	11920928955078125ull,
	59604644775390625ull,
	298023223876953125ull,
	1490116119384765625ull,
	7450580596923828125ull,
};
#define MAX_POW5 27

/* Exactly representable: 10^22 = 2^22 × 5^22 and 5^22 < 2^53. */
static const double pow10_double[] = {
	1e0,  1e1,  1e2,  1e3,	1e4,  1e5,  1e6,  1e7,	1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* ECMAScript Number::toString of ±0.d1…dk × 10^n, the digits being m (k <=
 * 17 digits, first and last nonzero); as the tail of
 * cordon_jcs_format_double(). */
static size_t format_digits(char *o, bool neg, uint64_t m, unsigned k, int n)
{
	char d[MID_DIGITS];
	size_t w = 0;

	for (unsigned i = k; i-- > 0;) {
		d[i] = (char)('0' + m % 10);
		m /= 10;
	}
	if (neg)
		o[w++] = '-';
	if ((int)k <= n && n <= 21) {
		memcpy(o + w, d, k);
		w += k;
		memset(o + w, '0', (size_t)n - k);
		w += (size_t)n - k;
	} else if (0 < n && n <= 21) {
		memcpy(o + w, d, (size_t)n);
		w += (size_t)n;
		o[w++] = '.';
		memcpy(o + w, d + n, k - (size_t)n);
		w += k - (size_t)n;
	} else if (-6 < n && n <= 0) {
		o[w++] = '0';
		o[w++] = '.';
		memset(o + w, '0', (size_t)-n);
		w += (size_t)-n;
		memcpy(o + w, d, k);
		w += k;
	} else {
		unsigned e = (unsigned)(n - 1 >= 0 ? n - 1 : 1 - n);
		char eb[4];
		size_t el = 0;

		o[w++] = d[0];
		if (k > 1) {
			o[w++] = '.';
			memcpy(o + w, d + 1, k - 1);
			w += k - 1;
		}
		o[w++] = 'e';
		o[w++] = n - 1 >= 0 ? '+' : '-';
		do {
			eb[el++] = (char)('0' + e % 10);
			e /= 10;
		} while (e);
		while (el)
			o[w++] = eb[--el];
	}
	return w;
}

/* ---- Reals of 16 to 19 significant digits ----------------------------------------------
 * What JSON.stringify writes for most doubles. The reference reads them with
 * strtod and searches the shortest digits with printf and strtod
 * (cordon_jcs_format_double); here the same search runs on exact integers:
 * every comparison is between d × 10^e and M × 2^q with d < 2^64, M < 2^56
 * and |e| <= 27, which fits in 128 bits once powers of 5 are multiplied in. */

typedef unsigned __int128 u128;

static int bitlen128(u128 x)
{
	uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;

	if (hi)
		return 128 - __builtin_clzll(hi);
	return lo ? 64 - __builtin_clzll(lo) : 0;
}

/* Compares a × 2^ea with b × 2^eb. */
static int cmp_bin(u128 a, int ea, u128 b, int eb)
{
	int la, lb;

	if (a == 0 || b == 0)
		return (a != 0) - (b != 0);
	la = bitlen128(a) + ea;
	lb = bitlen128(b) + eb;
	if (la != lb)
		return la < lb ? -1 : 1;
	/* Same top bit: shifting the one with the smaller exponent up to the
	 * other's leaves it no longer than the other. */
	if (ea > eb)
		a <<= ea - eb;
	else
		b <<= eb - ea;
	return (a > b) - (a < b);
}

/* Compares d × 10^e with m × 2^q (|e| <= MAX_POW5, m < 2^64). */
static int cmp_dec_bin(uint64_t d, int e, uint64_t m, int q)
{
	if (e >= 0)
		return cmp_bin((u128)d * pow5_u64[e], e, m, q);
	return cmp_bin(d, 0, (u128)m * pow5_u64[-e], q - e);
}

/* A positive finite double as mant × 2^q, and the bounds of the decimals
 * that read back as it: (2·mant ± 1) × 2^(q−1), except below a power of two,
 * where the neighbour is nearer: (4·mant − 1) × 2^(q−2). Both bounds belong
 * to it when mant is even (strtod rounds half to even). */
struct binary {
	double x;
	uint64_t mant, lo_m, hi_m;
	int q, lo_q, hi_q;
	bool even;
};

static bool binary_of(double x, struct binary *b)
{
	uint64_t bits;
	int be;

	memcpy(&bits, &x, sizeof(bits));
	be = (int)((bits >> 52) & 0x7ff);
	if (be == 0 || be == 0x7ff)
		return false; /* subnormal, zero, not finite: not handled here */
	b->x = x;
	b->mant = (bits & ((1ull << 52) - 1)) | (1ull << 52);
	b->q = be - 1075;
	b->even = (b->mant & 1) == 0;
	b->hi_m = 2 * b->mant + 1;
	b->hi_q = b->q - 1;
	if (b->mant == 1ull << 52 && be > 1) {
		b->lo_m = 4 * b->mant - 1;
		b->lo_q = b->q - 2;
	} else {
		b->lo_m = 2 * b->mant - 1;
		b->lo_q = b->q - 1;
	}
	return true;
}

static double step_double(double x, int delta)
{
	uint64_t bits;

	memcpy(&bits, &x, sizeof(bits));
	bits += (uint64_t)(int64_t)delta;
	memcpy(&x, &bits, sizeof(x));
	return x;
}

/* Does d × 10^e read back as b's double? */
static bool reads_back(const struct binary *b, uint64_t d, int e)
{
	int c;

	/* d < 2^53 and |e| <= 22: one correctly rounded operation is strtod. */
	if (d < (1ull << 53) && e >= -22 && e <= 22)
		return (e >= 0 ? (double)d * pow10_double[e] : (double)d / pow10_double[-e]) == b->x;
	c = cmp_dec_bin(d, e, b->lo_m, b->lo_q);
	if (c < 0 || (c == 0 && !b->even))
		return false;
	c = cmp_dec_bin(d, e, b->hi_m, b->hi_q);
	return c < 0 || (c == 0 && b->even);
}

/* The double nearest to m × 10^e (m > 0, |e| <= MAX_POW5), as strtod rounds
 * it: a close estimate, corrected against the exact bounds. */
static bool decimal_to_double(uint64_t m, int e, double *ret, struct binary *ret_b)
{
	double x;

	if (e >= 0)
		x = (double)m * pow10_double[e]; /* e <= 22 */
	else if (e >= -22)
		x = (double)m / pow10_double[-e];
	else
		x = (double)m / pow10_double[22] / pow10_double[-e - 22];
#ifdef CORDON_CANON_FAST_TEST_ESTIMATE
	/* test-canon-fast-swar: a worse estimate, so the correction below
	 * (and its ties) runs on every number. */
	x = step_double(x, (int)(m % 5) - 2);
#endif
	for (int i = 0; i < 8; i++) {
		struct binary b;
		int c;

		if (!binary_of(x, &b))
			return false;
		c = cmp_dec_bin(m, e, b.hi_m, b.hi_q);
		if (c > 0 || (c == 0 && !b.even)) {
			x = step_double(x, +1);
			continue;
		}
		c = cmp_dec_bin(m, e, b.lo_m, b.lo_q);
		if (c < 0 || (c == 0 && !b.even)) {
			x = step_double(x, -1);
			continue;
		}
		*ret = x;
		*ret_b = b;
		return true;
	}
	return false;
}

/* The p-digit decimal nearest to b's double, N × 10^e with 10^(p−1) <= N <
 * 10^p, ties to even (as printf's %.*e); n is the decimal exponent guess
 * (10^(n−1) <= x < 10^n, possibly off by one). */
static bool nearest_digits(const struct binary *b, unsigned p, int n, uint64_t *ret_n, int *ret_e)
{
	int e = n - (int)p;

	for (int tries = 0; tries < 3; tries++) {
		uint64_t N;

		if (e <= 0) {
			/* x / 10^e = mant × 5^−e × 2^(q−e) */
			int d = -e, t = b->q + d;
			u128 P, R, half;

			if (d > MAX_POW5)
				return false;
			P = (u128)b->mant * pow5_u64[d];
			if (t >= 0) {
				if (t > 10 || bitlen128(P) + t > 64)
					return false;
				N = (uint64_t)(P << t);
			} else {
				if (-t >= 127)
					return false;
				R = P & (((u128)1 << -t) - 1);
				half = (u128)1 << (-t - 1);
				P >>= -t;
				if (P >> 64)
					return false;
				N = (uint64_t)P;
				if (R > half || (R == half && (N & 1)))
					N++;
			}
		} else {
			/* x / 10^e = mant × 2^(q−e) / 5^e: num / den */
			int t = b->q - e;
			u128 num, den, R;

			if (e > MAX_POW5 || t > 64 || t < -64)
				return false;
			num = (u128)b->mant << (t > 0 ? t : 0);
			den = (u128)pow5_u64[e] << (t < 0 ? -t : 0);
			R = num % den;
			num /= den;
			if (num >> 64)
				return false;
			N = (uint64_t)num;
			/* R < den < 2^127: 2R cannot overflow. */
			if (2 * R > den || (2 * R == den && (N & 1)))
				N++;
		}
		if (N >= pow10_u64[p]) {
			e++;
			continue;
		}
		if (N < pow10_u64[p - 1]) {
			e--;
			continue;
		}
		*ret_n = N;
		*ret_e = e;
		return true;
	}
	return false;
}

/* cordon_jcs_format_double()'s probe(): a p-digit decimal that reads back as
 * the double — the nearest, else its lower, else its upper neighbour. The
 * lower one never does when the nearest does not (it is at least as far on
 * the side whose bound is not farther), so only the upper is tried. 0: none;
 * 1: found; -1: outside what this path computes. */
static int probe_digits(const struct binary *b, unsigned p, int n, uint64_t *ret_n, int *ret_e)
{
	uint64_t N;
	int e;

	if (!nearest_digits(b, p, n, &N, &e))
		return -1;
	if (e < -MAX_POW5 || e + 1 > MAX_POW5)
		return -1;
	if (reads_back(b, N, e)) {
		*ret_n = N, *ret_e = e;
		return 1;
	}
	if (N + 1 == pow10_u64[p]) {
		if (reads_back(b, pow10_u64[p - 1], e + 1)) {
			*ret_n = pow10_u64[p - 1], *ret_e = e + 1;
			return 1;
		}
	} else if (reads_back(b, N + 1, e)) {
		*ret_n = N + 1, *ret_e = e;
		return 1;
	}
	return 0;
}

/* The shortest digits of the double m × 10^e (k = 16..19 digits in m)
 * reads as, as the reference finds them: N (kd digits, last nonzero) ×
 * 10^de. False when this path does not handle it (the caller falls back to
 * real_slow, which also refuses what admission refuses). */
static bool real_mid(uint64_t m, unsigned k, int e, uint64_t *ret_n, unsigned *ret_k, int *ret_e)
{
	struct binary b;
	uint64_t N = 0;
	unsigned kd;
	double x;
	int r = 0, de = 0;

	if (!decimal_to_double(m, e, &x, &b) || cordon_canon_in_integer_band(x))
		return false;
	/* Fifteen digits cover every shorter decimal (a unique one, if any:
	 * no two decimals of at most 15 digits read as the same double), then
	 * 16, then 17, which always reads back. */
	for (unsigned p = 15; p <= 17 && r == 0; p++)
		r = probe_digits(&b, p, (int)k + e, &N, &de);
	if (r != 1)
		return false;
	while (N % 10 == 0) {
		N /= 10;
		de++;
	}
	for (kd = 1; kd < 20 && N >= pow10_u64[kd]; kd++)
		;
	*ret_n = N;
	*ret_k = kd;
	*ret_e = de;
	return true;
}

/* The value of a real lexeme through strtod, as jansson reads it, printed by
 * cordon_jcs_format_double(); -1 where admission refuses it. */
static int real_slow(const unsigned char *s, size_t n, char o[static CORDON_JCS_NUMBER_MAX])
{
	char small[64], *buf = small, *e;
	_cleanup_free_ char *big = NULL;
	double x;

	if (n >= sizeof(small)) {
		big = malloc(n + 1);
		if (!big)
			return -ENOMEM;
		buf = big;
	}
	memcpy(buf, s, n);
	buf[n] = 0;
	x = cordon_canon_strtod_c(buf, &e);
	if (e != buf + n || !__builtin_isfinite(x) || cordon_canon_in_integer_band(x))
		return -1;
	return cordon_jcs_format_double(x, o);
}

/* Scans the number at p; returns its end or NULL if not admitted (or, with
 * *ret_oom set, out of memory). */
static const unsigned char *scan_number(struct fast *f, const unsigned char *p, const unsigned char *end, bool *ret_oom)
{
	const unsigned char *s = p, *ip, *fp = NULL;
	bool neg = false, real = false, many = false, has_exp = false;
	uint64_t m = 0, iv = 0;
	unsigned k = 0, z = 0;
	size_t ni, frac = 0;
	int64_t e = 0;
	struct node *n;
	int w;

	if (*p == '-') {
		neg = true;
		if (++p >= end)
			return NULL;
	}
	ip = p;
	if (*p == '0')
		p++; /* a digit after it is the caller's grammar error */
	else if (*p >= '1' && *p <= '9')
		while (++p < end && is_digit(*p))
			;
	else
		return NULL;
	ni = (size_t)(p - ip);
	if (p < end && *p == '.') {
		real = true;
		fp = ++p;
		while (p < end && is_digit(*p))
			p++;
		frac = (size_t)(p - fp);
		if (frac == 0)
			return NULL;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		bool eneg = false;

		real = has_exp = true;
		if (++p < end && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		if (p >= end || !is_digit(*p))
			return NULL;
		do {
			if (e < 100000000)
				e = e * 10 + (*p - '0');
		} while (++p < end && is_digit(*p));
		if (eneg)
			e = -e;
	}

	if (!real) {
		/* At most 15 digits is always in range. */
		if (ni > 16)
			return NULL;
		if (ni == 16) {
			for (size_t i = 0; i < ni; i++)
				iv = iv * 10 + (unsigned)(ip[i] - '0');
			if (iv > (uint64_t)CORDON_CANON_MAX_SAFE_INTEGER)
				return NULL;
		}
	} else {
		/* The digit stream (integer part, then fraction) as m × 10^z:
		 * leading zeros dropped, trailing zeros counted in z, k digits
		 * in m, first and last nonzero. `many`: more than MID_DIGITS. */
		size_t lead = 0, total = ni + frac, i;

		if (ni == 1 && *ip == '0') {
			lead = 1;
			while (lead - 1 < frac && fp[lead - 1] == '0')
				lead++;
		}
		while (z < total - lead) {
			size_t pos = total - 1 - z;
			unsigned char c = pos < ni ? ip[pos] : fp[pos - ni];

			if (c != '0')
				break;
			z++;
		}
		k = (unsigned)(total - lead - z);
		if (total - lead - z > MID_DIGITS)
			many = true;
		else
			for (i = lead; i < lead + k; i++) {
				unsigned char c = i < ni ? ip[i] : fp[i - ni];

				m = m * 10 + (unsigned)(c - '0');
			}
	}

	n = push_node(f, N_TEXT);
	if (!n) {
		*ret_oom = true;
		return NULL;
	}
	if (!real) {
		/* Integer lexemes: the text as it is (no leading zeros by the
		 * grammar) but "-0". */
		n->a = (uint32_t)(s - f->in);
		n->b = (uint32_t)(p - s);
		if (neg && ni == 1 && *ip == '0') {
			n->type = N_ZERO;
			f->out_len += 1;
		} else
			f->out_len += n->b;
		return p;
	}

	/* Reals: the shortest digits dm (dk of them, last nonzero) × 10^de. */
	{
		int64_t e10 = (int64_t)z - (int64_t)frac + e, dp = (int64_t)k + e10;
		uint64_t dm = m;
		unsigned dk = k;
		int de = (int)e10;
		bool have = false;

		if (!many && k == 0) {
			/* ±0, whatever the exponent */
			n->type = N_ZERO;
			f->out_len += 1;
			return p;
		}
		if (!many && k <= FAST_DIGITS) {
			if (dp >= -300 && dp <= 300) {
				/* Only 10^15 <= |x| < 10^22 can be in the band. */
				if (dp >= 16 && dp <= 22 && cordon_canon_in_integer_band((double)m * pow10_double[e10]))
					return NULL;
				have = true;
			}
		} else if (!many && e10 >= -MAX_POW5 && e10 <= 22)
			have = real_mid(m, k, (int)e10, &dm, &dk, &de);

		/* Already canonical (what JSON.stringify writes): no exponent,
		 * no trailing zero, the shortest digits, written positionally.
		 * Then the text is copied as it is, like an integer's. */
		if (have && !has_exp && frac > 0 && z == 0 && dm == m && de == e10 && (int)dk + de > -6) {
			n->a = (uint32_t)(s - f->in);
			n->b = (uint32_t)(p - s);
			f->out_len += n->b;
			return p;
		}
		if (RESERVE(f->num, f->cnum, f->nnum + CORDON_JCS_NUMBER_MAX) < 0) {
			*ret_oom = true;
			return NULL;
		}
		if (have)
			w = (int)format_digits(f->num + f->nnum, neg, dm, dk, (int)dk + de);
		else {
			w = real_slow(s, (size_t)(p - s), f->num + f->nnum);
			if (w == -ENOMEM)
				*ret_oom = true;
			if (w < 0)
				return NULL;
		}
	}
	/* n stays valid: nothing was pushed since. */
	n->flags = F_NUM;
	n->a = (uint32_t)f->nnum;
	n->b = (uint32_t)w;
	f->nnum += (size_t)w;
	f->out_len += (size_t)w;
	return p;
}

/* ---- Scan ---------------------------------------------------------------------- */

static inline const unsigned char *skip_ws(const unsigned char *p, const unsigned char *end)
{
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	return p;
}

/* Returns 0 when the document is admitted, -1 when not, -ENOMEM. */
static int scan(struct fast *f, unsigned max_depth)
{
	struct frame stack[FAST_MAX_DEPTH];
	struct frame *top = NULL;
	const unsigned char *p = f->in, *end = f->in + f->len, *q;
	unsigned depth = 0;
	bool oom = false;
	struct node *n;
	size_t body;
	bool escaped;
	int r;

	/* Every value starts at its own byte and all but the last are followed
	 * by one that starts none (a separator or a closing bracket), so there
	 * are at most (len + 1) / 2 of them: one allocation, never grown (only
	 * the pages used are touched). */
	if (RESERVE(f->tape, f->ctape, f->len / 2 + 2) < 0)
		return -ENOMEM;

value:
	p = skip_ws(p, end);
	if (p >= end)
		return -1;
	switch (*p) {
	case '{':
	case '[': {
		bool object = *p == '{';
		uint8_t role = f->want;

		f->want = ROLE_NONE;
		if (depth >= max_depth)
			return -1;
		n = push_node(f, object ? N_OBJECT : N_ARRAY);
		if (!n)
			return -ENOMEM;
		if (!object)
			role = ROLE_NONE;
		if (role == ROLE_LIFTED) {
			f->lift_node = (uint32_t)(f->ntape - 1);
			f->lift_raw_start = (size_t)(p - f->in);
			f->lift_out_start = f->out_len;
		}
		top = &stack[depth++];
		*top = (struct frame){
			.node = (uint32_t)(f->ntape - 1), .mbase = (uint32_t)f->nmem, .object = object, .role = role
		};
		f->out_len += 2;
		p = skip_ws(p + 1, end);
		if (p < end && *p == (object ? '}' : ']')) {
			p++;
			goto close;
		}
		if (object)
			goto name;
		goto value;
	}
	case '"':
		q = scan_string(p + 1, end, &body, &escaped);
		if (!q)
			return -1;
		n = push_node(f, escaped ? N_ESCAPED : N_TEXT);
		if (!n)
			return -ENOMEM;
		if (escaped) {
			n->a = (uint32_t)(p + 1 - f->in);
			n->b = (uint32_t)(q - (p + 1));
		} else {
			n->a = (uint32_t)(p - f->in); /* with its quotes */
			n->b = (uint32_t)(q + 1 - p);
		}
		f->out_len += body + 2;
		p = q + 1;
		break;
	case '-':
	case '0' ... '9':
		p = scan_number(f, p, end, &oom);
		if (!p)
			return oom ? -ENOMEM : -1;
		break;
	case 't':
	case 'f':
	case 'n': {
		size_t l = *p == 'f' ? 5 : 4;

		if ((size_t)(end - p) < l || memcmp(p, *p == 't' ? "true" : *p == 'f' ? "false" : "null", l) != 0)
			return -1;
		n = push_node(f, N_TEXT);
		if (!n)
			return -ENOMEM;
		n->a = (uint32_t)(p - f->in);
		n->b = (uint32_t)l;
		f->out_len += l;
		p += l;
		break;
	}
	default:
		return -1;
	}
	f->want = ROLE_NONE;

after:
	if (depth == 0) {
		p = skip_ws(p, end);
		return p == end ? 0 : -1;
	}
	top->count++;
	p = skip_ws(p, end);
	if (p >= end)
		return -1;
	if (*p == ',') {
		f->out_len++;
		p = skip_ws(p + 1, end);
		if (top->object)
			goto name;
		goto value;
	}
	if (*p != (top->object ? '}' : ']'))
		return -1;
	p++;

close:
	n = &f->tape[top->node];
	n->b = top->count;
	n->c = (uint32_t)f->ntape;
	if (top->object) {
		r = close_object(f, top);
		if (r < 0)
			return r;
	}
	if (top->role == ROLE_LIFTED) {
		f->lifted = true;
		f->lift_raw_end = (size_t)(p - f->in);
		f->lift_out_len = f->out_len - f->lift_out_start;
	}
	depth--;
	top = depth ? &stack[depth - 1] : NULL;
	goto after;

name:
	/* At a member name (p past any whitespace). */
	if (p >= end || *p != '"')
		return -1;
	q = scan_string(p + 1, end, &body, &escaped);
	if (!q)
		return -1;
	n = push_node(f, escaped ? N_ESCAPED : N_TEXT);
	if (!n || RESERVE(f->mem, f->cmem, f->nmem + 1) < 0)
		return -ENOMEM;
	{
		struct member *m = &f->mem[f->nmem++];
		const unsigned char *s = p + 1;
		size_t len = (size_t)(q - s);

		n->a = (uint32_t)(escaped ? s - f->in : p - f->in);
		n->b = (uint32_t)(escaped ? len : len + 2);
		f->out_len += body + 2;
		if (escaped) {
			/* Sorting and duplicates go by the unescaped name. */
			if (!f->names) {
				f->names = malloc(f->len);
				if (!f->names)
					return -ENOMEM;
			}
			s = f->names + f->nnames;
			len = (size_t)(unescape(p + 1, len, f->names + f->nnames) - s);
			f->nnames += len;
		}
		m->name = s;
		m->len = (uint32_t)len;
		m->node = (uint32_t)(f->ntape - 1);
		m->prefix = load_prefix(s, len, escaped ? f->names + f->len : f->in + f->len);

		if (f->outer) {
			if (depth == 1 && len == f->outer_len && memcmp(s, f->outer, len) == 0)
				f->want = ROLE_OUTER;
			else if (depth == 2 && stack[1].role == ROLE_OUTER && len == f->inner_len &&
				 memcmp(s, f->inner, len) == 0)
				f->want = ROLE_LIFTED;
		}
	}
	p = skip_ws(q + 1, end);
	if (p >= end || *p != ':')
		return -1;
	f->out_len++;
	p++;
	goto value;
}

/* ---- Emit ---------------------------------------------------------------------- */

/* A short copy without a call: two overlapping moves within [s, s + n). */
static inline char *copy_text(char *o, const char *s, size_t n)
{
	if (n >= 16)
		memcpy(o, s, n);
	else if (n >= 8) {
		uint64_t x, y;

		memcpy(&x, s, 8);
		memcpy(&y, s + n - 8, 8);
		memcpy(o, &x, 8);
		memcpy(o + n - 8, &y, 8);
	} else if (n >= 4) {
		uint32_t x, y;

		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		memcpy(o, &x, 4);
		memcpy(o + n - 4, &y, 4);
	} else
		for (size_t i = 0; i < n; i++)
			o[i] = s[i];
	return o + n;
}

/* An escaped string's canonical text, rewritten run by run. */
static char *emit_escaped(const struct fast *f, const struct node *n, char *o)
{
	const unsigned char *s = f->in + n->a, *end = s + n->b;

	*o++ = '"';
	while (s < end) {
		const unsigned char *b = memchr(s, '\\', (size_t)(end - s));
		size_t run = (size_t)((b ? b : end) - s), raw;
		uint32_t cp;

		o = copy_text(o, (const char *)s, run);
		s += run;
		if (!b || escape_decode(s, end, &cp, &raw) < 0)
			break;
		o = put_canonical(o, cp);
		s += raw;
	}
	*o++ = '"';
	return o;
}

static inline uint32_t next_node(const struct fast *f, uint32_t i)
{
	return f->tape[i].type >= N_ARRAY ? f->tape[i].c : i + 1;
}

static char *emit(const struct fast *f, uint32_t i, char *o);

/* A scalar's text; containers through emit(). */
static inline char *emit_value(const struct fast *f, uint32_t i, char *o)
{
	const struct node *n = &f->tape[i];

	if (n->type == N_TEXT)
		return copy_text(o, (n->flags & F_NUM ? f->num : (const char *)f->in) + n->a, n->b);
	return emit(f, i, o);
}

/* Writes node i's canonical text at o; returns its end. Recursion is bounded
 * by the depth limit (at most FAST_MAX_DEPTH). */
static char *emit(const struct fast *f, uint32_t i, char *o)
{
	const struct node *n = &f->tape[i];

	switch (n->type) {
	case N_TEXT:
		return copy_text(o, (n->flags & F_NUM ? f->num : (const char *)f->in) + n->a, n->b);
	case N_ESCAPED:
		return emit_escaped(f, n, o);
	case N_ZERO:
		*o = '0';
		return o + 1;
	case N_ARRAY: {
		uint32_t j = i + 1;

		*o++ = '[';
		for (uint32_t k = 0; k < n->b; k++) {
			if (k)
				*o++ = ',';
			o = emit_value(f, j, o);
			j = next_node(f, j);
		}
		*o++ = ']';
		return o;
	}
	case N_OBJECT:
		*o++ = '{';
		for (uint32_t k = 0; k < n->b; k++) {
			uint32_t name = f->order[n->a + k];

			if (k)
				*o++ = ',';
			o = emit_value(f, name, o);
			*o++ = ':';
			o = emit_value(f, name + 1, o);
		}
		*o++ = '}';
		return o;
	}
	return o;
}

/* Node i's canonical text (len bytes, as the scan computed) in a new
 * NUL-terminated buffer. */
static int emit_alloc(const struct fast *f, uint32_t i, size_t len, char **ret)
{
	char *out = malloc(len + 1), *e;

	if (!out)
		return -ENOMEM;
	e = emit(f, i, out);
	if (e != out + len) {
		/* The scan's length and the text disagree: a bug, never output. */
		free(out);
		return -EPROTO;
	}
	out[len] = 0;
	*ret = out;
	return 0;
}

static bool fast_eligible(const char *buf, size_t len, const struct cordon_canon_limits *l)
{
	return buf && len > 0 && len <= l->max_bytes && len <= FAST_MAX_LEN && l->max_depth <= FAST_MAX_DEPTH;
}

/* ---- API --------------------------------------------------------------------------- */

int cordon_canon_bytes(const char *buf, size_t len, const struct cordon_canon_limits *lim, char **ret, size_t *ret_len,
		       struct cordon_diag *d)
{
	struct cordon_canon_limits l = cordon_canon_limits_resolve(lim);
	_cleanup_(fast_done) struct fast f = { .in = (const unsigned char *)buf, .len = len };
	char *out;

	/* Everything the scan refuses, the reference reports. */
	if (!fast_eligible(buf, len, &l) || scan(&f, l.max_depth) < 0 || emit_alloc(&f, 0, f.out_len, &out) < 0)
		return cordon_canon_bytes_reference(buf, len, lim, ret, ret_len, d);
	*ret = out;
	if (ret_len)
		*ret_len = f.out_len;
	return 0;
}

void cordon_canon_lifted_done(struct cordon_canon_lifted *l)
{
	if (!l)
		return;
	free(l->jcs);
	*l = (struct cordon_canon_lifted){};
}

int cordon_canon_decode_lifted(const char *buf, size_t len, const struct cordon_canon_limits *lim, const char *outer,
			       const char *inner, json_t **ret, struct cordon_canon_lifted *ret_lifted,
			       struct cordon_diag *d)
{
	struct cordon_canon_limits l = cordon_canon_limits_resolve(lim);
	_cleanup_(fast_done) struct fast f = {
		.in = (const unsigned char *)buf,
		.len = len,
		.outer = outer,
		.inner = inner,
		.outer_len = outer ? strlen(outer) : 0,
		.inner_len = inner ? strlen(inner) : 0,
	};
	_cleanup_free_ char *jcs = NULL, *envelope = NULL;
	size_t raw_len, env_len;
	json_t *v, *o;

	*ret_lifted = (struct cordon_canon_lifted){};
	if (!outer || !inner)
		return cordon_diag_set(d, EINVAL, STEP, "no member to lift");
	/* Not admitted, not eligible or nothing to lift: the reference decodes
	 * (or reports) the whole document. */
	if (!fast_eligible(buf, len, &l) || scan(&f, l.max_depth) < 0 || !f.lifted ||
	    emit_alloc(&f, f.lift_node, f.lift_out_len, &jcs) < 0)
		return cordon_canon_decode(buf, len, lim, ret, d);

	/* The rest of the document, with the lifted value's text replaced by
	 * {}, decoded by jansson from the client's own text (so every other
	 * value is exactly what cordon_canon_decode() gives), then the
	 * placeholder member removed. */
	raw_len = f.lift_raw_end - f.lift_raw_start;
	env_len = len - raw_len + 2;
	envelope = malloc(env_len);
	if (!envelope)
		return cordon_canon_decode(buf, len, lim, ret, d);
	memcpy(envelope, buf, f.lift_raw_start);
	memcpy(envelope + f.lift_raw_start, "{}", 2);
	memcpy(envelope + f.lift_raw_start + 2, buf + f.lift_raw_end, len - f.lift_raw_end);
	v = json_loadb(envelope, env_len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
	o = json_object_get(v, outer);
	if (!json_is_object(o) || json_object_del(o, inner) < 0) {
		json_decref(v); /* out of memory in jansson: let the reference say */
		return cordon_canon_decode(buf, len, lim, ret, d);
	}
	*ret = v;
	*ret_lifted = (struct cordon_canon_lifted){
		.jcs = TAKE_PTR(jcs),
		.jcs_len = f.lift_out_len,
		.raw_offset = f.lift_raw_start,
		.raw_len = raw_len,
	};
	return 0;
}

int cordon_canon_lifted_restore(json_t *doc, const char *buf, size_t len, const struct cordon_canon_limits *lim,
				const char *outer, const char *inner, struct cordon_canon_lifted *l,
				struct cordon_diag *d)
{
	json_t *o, *v = NULL;
	int r;

	if (!l || !l->jcs)
		return 0;
	o = json_object_get(doc, outer);
	if (!json_is_object(o) || !buf || l->raw_offset > len || l->raw_len > len - l->raw_offset) {
		cordon_canon_lifted_done(l);
		return cordon_diag_set(d, EINVAL, STEP, "not the document the member was lifted from");
	}
	r = cordon_canon_decode(buf + l->raw_offset, l->raw_len, lim, &v, d);
	cordon_canon_lifted_done(l);
	if (r < 0)
		return r;
	if (json_object_set_new(o, inner, v) < 0)
		return cordon_diag_set(d, ENOMEM, STEP, "out of memory");
	return 0;
}
