/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the operator surface shows a human: call arguments with likely
 * secrets masked, tool definitions and their diffs, every string with
 * invisible, bidirectional and look-alike characters escaped.
 *
 * All of it is DISPLAY ONLY and computed after the approval binding: the
 * binding covers the exact canonical bytes, so masking can never make two
 * different calls look approvable as one (a changed token still changes the
 * binding and needs a new approval), and escaping can never change what is
 * executed. What escaping prevents is the operator being shown text that
 * reads differently from its bytes (a right-to-left override turning
 * "txt.exe" into "exe.txt", zero-width characters hiding words in a tool
 * description, a Unicode tag block carrying hidden instructions). Pure code. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True for code points a terminal shows as nothing, as a space, or that
 * reorder text: C0/C1 controls, soft hyphen, zero-width and joiner
 * characters, bidi embeddings/overrides/isolates/marks, invisible math
 * operators, Hangul and Mongolian fillers, variation selectors, BOM,
 * interlinear annotation, Unicode tags, private use, and the non-ASCII space
 * look-alikes (NBSP, en/em/thin spaces, ...). */
bool cordon_display_codepoint_is_hidden(uint32_t cp);

/* True when a member name suggests a secret: after folding case and dropping
 * '-', '_' and '.', it contains token, secret, passw, passphrase,
 * authorization, apikey, accesskey, privatekey, clientsecret, credential,
 * cookie, bearer, sessionkey or signature, or is exactly auth, pwd, pin or
 * otp. */
bool cordon_display_key_is_secret(const char *key);

/* True when a string value looks like a credential whatever its key: known
 * token prefixes (ghp_, github_pat_, xoxb-, sk-, AKIA, AIza, glpat-, ...), a
 * JWT, a PEM private key, "Bearer x"/"Basic x", a URL with a password in its
 * userinfo, or a long random-looking word (>= 24 chars from a token alphabet,
 * letters and digits, more than 16 distinct characters and at least half
 * (up to 22) of its length: hex digests, UUIDs and identifiers are not
 * masked, base64/base62 keys are). */
bool cordon_display_value_is_secret(const char *s, size_t n);

struct cordon_display_span {
	size_t off, len;
};

/* Finds the credentials inside the text s[0..n), wherever they are in it: a
 * PEM private key block, the credential after "Bearer "/"Basic ", the
 * password of a URL's userinfo, and every word (a run of token characters)
 * that cordon_display_value_is_secret() calls a credential on its own.
 * Writes at most max spans, sorted and merged, and returns how many (when
 * there are more, the last span grows to cover the rest: never less is
 * masked). A value that is one credential gives one span covering all of it. */
size_t cordon_display_secret_spans(const char *s, size_t n, struct cordon_display_span *spans, size_t max);

/* True when s[0..n) mixes letters of look-alike scripts (Latin, Greek,
 * Cyrillic, Armenian, Cherokee, mathematical alphanumerics): "раypal" with a
 * Cyrillic "р" and "а". whole: the text as one unit (member names);
 * otherwise word by word (values: "Привет, world" is two words of one script
 * each and is not flagged). When true and buf is given, writes the scripts
 * found ("Latin, Cyrillic", in that fixed order) to buf. Digits, punctuation
 * and other scripts (CJK, Arabic, ...) never count. */
bool cordon_display_mixed_scripts(const char *s, size_t n, bool whole, char *buf, size_t size);

/* Escapes hidden code points of the UTF-8 text s[0..n) as \u{XXXX} (and a
 * literal backslash as \\ so escapes cannot be forged). Newlines and tabs are
 * kept. Invalid UTF-8 bytes become \x{XX}. Writes a malloc'd string to *ret
 * and the number of escaped characters to *ret_count (may be NULL).
 * Returns 0 or -ENOMEM. */
int cordon_display_escape(const char *s, size_t n, char **ret, size_t *ret_count);

/* Renders v as indented JSON text, members in RFC 8785 order, strings
 * JSON-escaped with every hidden code point as \uXXXX (surrogate pairs for
 * astral ones). When mask is true, the value of a secret-looking member and
 * every credential in any string (see cordon_display_render_opts) become an
 * unquoted marker "<masked: N bytes>" (unquoted, so no string value can
 * imitate it) and the JSON path of each ("$.headers.Authorization") is
 * appended to masked_paths (may be NULL). Writes a malloc'd text to *ret and the number
 * of escaped code points to *ret_escaped (may be NULL). 0 or -ENOMEM/-EINVAL. */
int cordon_display_render(const json_t *v, bool mask, json_t *masked_paths, char **ret, size_t *ret_escaped);

struct cordon_display_options {
	bool mask;	      /* replace credentials by markers */
	json_t *masked_paths; /* may be NULL: the JSON path of each marker */
	json_t *warnings;     /* may be NULL: one string per member name or
			       * value mixing look-alike scripts,
			       * "$.pаth: key contains characters from several
			       * scripts: Latin, Cyrillic" */
};

/* cordon_display_render() with options. Masking, the same rule everywhere:
 * the value of a secret-looking member name is masked whole; in any other
 * string each span of cordon_display_secret_spans() becomes the unquoted
 * marker "<masked: N bytes>" and the text around it stays quoted, so a
 * string that is one credential renders as just the marker and a credential
 * inside a longer string as "curl -H " <masked: 40 bytes> " https://x". */
int cordon_display_render_opts(const json_t *v, const struct cordon_display_options *o, char **ret,
			       size_t *ret_escaped);

/* A line diff of two texts (LCS): lines prefixed "  ", "- " or "+ ". Above
 * 4 million line pairs it falls back to all of a removed, all of b added.
 * a or b may be NULL (empty). Writes a malloc'd text. 0 or -ENOMEM. */
int cordon_display_diff(const char *a, const char *b, char **ret);
