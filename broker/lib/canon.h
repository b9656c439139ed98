/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Canonical JSON for the broker: strict admission decoding and RFC 8785
 * (JCS) encoding. The broker forwards, hashes, approves and stores only the
 * bytes cordon_jcs_encode() produces, never a client's raw text, so no parser
 * differential (duplicate keys, escapes, big numbers) can make an approved
 * call differ from the executed one. Byte-exact rules: docs/formats.md.
 *
 * Pure functions: no global state, no logging, thread-safe. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"

/* Defaults of struct cordon_canon_limits. */
#define CORDON_CANON_MAX_BYTES_DEFAULT ((size_t)1024 * 1024)
#define CORDON_CANON_MAX_DEPTH_DEFAULT 64u
/* ±(2^53 − 1): the integers every JSON implementation (IEEE 754 double)
 * represents exactly. Larger integers must be sent as strings. */
#define CORDON_CANON_MAX_SAFE_INTEGER 9007199254740991LL

struct cordon_canon_limits {
	size_t max_bytes;   /* input size limit in bytes; 0 means the default (1 MiB) */
	unsigned max_depth; /* nesting depth limit; 0 means the default (64). A scalar
			     * document has depth 0, `[]` and `{}` have depth 1. */
};

/* Admission errors. The return value is one of these negative errnos (stable,
 * tests and callers may switch on them); the diag (step "canon") carries a
 * message naming what and where: "line L, column C (byte P)" with 1-based
 * line/column (column counted in characters, as jansson does) and 0-based
 * byte offset; d->line and d->column are set too.
 *
 *   -EMSGSIZE  input larger than limits->max_bytes
 *   -EBADMSG   not JSON (syntax error, malformed number, trailing data,
 *              empty input)
 *   -EILSEQ    invalid UTF-8, a lone or misordered UTF-16 surrogate escape,
 *              or a NUL character (raw or \u0000: not admitted anywhere)
 *   -ENOTUNIQ  duplicate member name in an object
 *   -ELOOP     nesting deeper than limits->max_depth
 *   -ERANGE    integer lexeme outside ±(2^53 − 1); a number with fraction or
 *              exponent whose value is an integer in 2^53 − 1 < |x| < 1e21
 *              (its canonical form would be such an integer lexeme, e.g.
 *              1e20); or a number that overflows a double (1e400)
 *   -EDOM      a non-finite number (cannot come from JSON text; guards values
 *              built in memory)
 *   -ENOMEM    out of memory
 *   -EINVAL    buf == NULL with len > 0
 */

/* Fills *ret with the defaults. */
void cordon_canon_limits_default(struct cordon_canon_limits *ret);

/* Decodes exactly one JSON document from buf[0..len) (no NUL terminator
 * needed; trailing whitespace allowed, anything else after the value is an
 * error) and admits it. lim may be NULL (defaults). On success writes a new
 * reference to *ret and returns 0; on failure returns a negative errno from
 * the list above, fills d (if non-NULL) and leaves *ret untouched. Any JSON
 * value is admitted at the top level (not only objects). */
int cordon_canon_decode(const char *buf, size_t len, const struct cordon_canon_limits *lim, json_t **ret,
			struct cordon_diag *d);

/* Admission checks for a value already in memory (built by code, or decoded
 * by jansson as part of a larger message): depth, integer range, finite reals,
 * valid UTF-8 and no NUL in every string and member name. Returns 0 or a
 * negative errno from the list above (no positions: the message names the
 * JSON path, e.g. "$.a[3].b"). lim may be NULL. */
int cordon_canon_admit(const json_t *v, const struct cordon_canon_limits *lim, struct cordon_diag *d);

/* Encodes v as RFC 8785 canonical JSON. On success writes a malloc'd,
 * NUL-terminated buffer to *ret (free()) and its length (without the NUL) to
 * *ret_len (may be NULL) and returns 0. Returns -EDOM for a non-finite real,
 * -ERANGE for an integer outside ±(2^53 − 1), -EILSEQ for a string that is not
 * valid UTF-8 or contains NUL, -ELOOP beyond CORDON_CANON_MAX_DEPTH_DEFAULT * 4
 * (a guard for in-memory values; decoded values are far shallower), -EINVAL
 * for v == NULL, -ENOMEM. */
int cordon_jcs_encode(const json_t *v, char **ret, size_t *ret_len);

/* The `arguments` of a tools/call: absent (NULL) is `{}` everywhere. Writes a
 * new reference to *ret: a new empty object when arguments is NULL, otherwise
 * a new reference to arguments itself. Returns -EINVAL (and fills d) when
 * arguments is present but not an object (JSON null included), -ENOMEM. */
int cordon_canon_arguments(const json_t *arguments, json_t **ret, struct cordon_diag *d);

/* Compares two strings by UTF-16 code units, as RFC 8785 §3.2.3 sorts member
 * names. Both must be valid UTF-8 (admitted). Returns <0, 0, >0. */
int cordon_jcs_compare_keys(const char *a, size_t a_len, const char *b, size_t b_len);

/* True if s[0..n) is strictly valid UTF-8 (shortest form, no surrogates, at
 * most U+10FFFF) without NUL; otherwise false and, if ret_bad_offset is
 * non-NULL, the offset of the first bad byte. */
bool cordon_utf8_valid(const char *s, size_t n, size_t *ret_bad_offset);

/* Formats a finite double as ECMAScript Number::toString (RFC 8785 §3.2.2.3)
 * into buf (at least CORDON_JCS_NUMBER_MAX bytes, NUL-terminated). Returns
 * the length, or -EDOM for NaN/Infinity. -0 formats as "0". */
#define CORDON_JCS_NUMBER_MAX 32
int cordon_jcs_format_double(double x, char buf[static CORDON_JCS_NUMBER_MAX]);

/* ---- Single pass, no tree (canon-fast.c) -------------------------------------
 * For callers that need the canonical bytes of a document (to forward, hash,
 * MAC, store) and not its value: one pass over the text admits it and records
 * an index, a second writes the RFC 8785 form, without building a jansson
 * tree. Output bytes and admission errors (errno, message, position) are
 * exactly those of decode + encode: any refusal is reported by running the
 * reference path (cordon_canon_decode()) on the same input, and a property
 * test and the libFuzzer target compare the two paths on every input. */

/* The canonical bytes of one admitted document: same errors as
 * cordon_canon_decode(), same output as cordon_jcs_encode() of its value.
 * Writes a malloc'd, NUL-terminated buffer to *ret and its length to *ret_len
 * (may be NULL). */
int cordon_canon_bytes(const char *buf, size_t len, const struct cordon_canon_limits *lim, char **ret, size_t *ret_len,
		       struct cordon_diag *d);

/* The same through the tree (cordon_canon_decode() + cordon_jcs_encode()):
 * the reference cordon_canon_bytes() is tested against, and what it runs when
 * it refuses an input. */
int cordon_canon_bytes_reference(const char *buf, size_t len, const struct cordon_canon_limits *lim, char **ret,
				 size_t *ret_len, struct cordon_diag *d);

/* A member value taken out of a decoded document as canonical bytes. */
struct cordon_canon_lifted {
	char *jcs;	   /* canonical bytes (malloc'd, NUL-terminated); NULL: nothing lifted */
	size_t jcs_len;	   /* without the NUL */
	size_t raw_offset; /* where the value's text is in the input */
	size_t raw_len;
};

void cordon_canon_lifted_done(struct cordon_canon_lifted *l);

/* cordon_canon_decode() for a document one of whose members is wanted only as
 * canonical bytes (a tools/call's params.arguments, up to the size limit):
 * same admission, same errors, same tree, except that when the document is an
 * object whose member `outer` is an object holding a member `inner` whose
 * value is an object, that member is left out of the tree (*ret) and *ret_lifted
 * receives its value's canonical bytes (what cordon_jcs_encode() would give)
 * and where its text is in buf; the lifted value is never decoded into a tree.
 * Otherwise (including when the document is refused) *ret_lifted is zeroed
 * (jcs NULL) and the tree is complete. The lift is an optimisation the caller
 * must not depend on: it may also not happen on paths this function takes
 * through the reference (max_depth above 256, out of memory on the way). */
int cordon_canon_decode_lifted(const char *buf, size_t len, const struct cordon_canon_limits *lim, const char *outer,
			       const char *inner, json_t **ret, struct cordon_canon_lifted *ret_lifted,
			       struct cordon_diag *d);

/* Puts a lifted member back: decodes its text (buf must be the input given to
 * cordon_canon_decode_lifted(), lim the same limits) and sets doc.outer.inner to
 * it, then releases l. A no-op when nothing was lifted. Returns 0, -ENOMEM, or
 * -EINVAL when doc has no object member `outer` (not what the lift produced). */
int cordon_canon_lifted_restore(json_t *doc, const char *buf, size_t len, const struct cordon_canon_limits *lim,
				const char *outer, const char *inner, struct cordon_canon_lifted *l,
				struct cordon_diag *d);
