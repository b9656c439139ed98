/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* json-scan: a strict JSON scanner that builds no tree, for the places where
 * megabytes of one string travel inside a JSON-RPC line (cordon-fs
 * write_file's content on the way in; a bench client reading read_file's
 * answer on the way out). jansson parses such a string a byte at a time into a
 * growing buffer and then copies it again; this scanner finds the value at a
 * path in one pass and decodes a string's escapes in place.
 *
 * The rules are jansson's (what mcp-server.c's json_loadb accepts), so a
 * caller can use the scanner as an optimisation and fall back to jansson on
 * any refusal: RFC 8259 grammar; strings are UTF-8 without overlong forms,
 * surrogates or code points above U+10FFFF, with no raw control characters;
 * escapes are the eight short ones and \uXXXX, surrogate escapes must pair,
 * and \u0000 is refused (jansson without JSON_ALLOW_NUL). Duplicate member
 * names are not detected: a caller that needs that parses the rest of the
 * document with jansson (JSON_REJECT_DUPLICATES). */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Where a value sits in the scanned text. For a string, offset/len delimit
 * the bytes between its quotes; for any other value, its whole text. `first`
 * is the value's first byte ('"', '{', '[', 't', 'f', 'n', '-' or a digit). */
struct json_span {
	size_t offset;
	size_t len;
	char first;
};

/* Scans buf[0..len) as exactly one JSON value (whitespace around it allowed)
 * nested at most max_depth deep, and looks for the value at path: a
 * NULL-terminated list of member names, where a component applied to an array
 * is a decimal index ("0"). Every string is checked strictly, except the
 * string found at path, whose text is only delimited (the caller decodes it
 * with json_string_decode(), which checks it). The first value at the path
 * wins. Returns 1 with *ret set when the text is well formed and the path
 * exists, 0 when the text is well formed and the path does not exist,
 * -EINVAL when the text is malformed, -ELOOP when it nests too deep. */
int json_scan_find(const char *buf, size_t len, const char *const *path, unsigned max_depth, struct json_span *ret);

/* json_scan_find() for several paths in one pass (at most
 * JSON_SCAN_MAX_PATHS). Returns 0 with ret_spans[k] set for each path that
 * exists (.first == 0 for one that does not), or -EINVAL or -ELOOP as above
 * (all spans zeroed). */
#define JSON_SCAN_MAX_PATHS 8
int json_scan_paths(const char *buf, size_t len, const char *const *const *paths, size_t n_paths, unsigned max_depth,
		    struct json_span *ret_spans);

/* Decodes the text of a JSON string (the n bytes between its quotes) into
 * out, which may equal s (decoding never lengthens the text) and must hold n
 * bytes. Returns the decoded length, or -EINVAL when the text breaks a rule
 * above (an unescaped '"' included). */
ssize_t json_string_decode(const char *s, size_t n, char *out);

/* True when s[0..n) is text a JSON string can carry as it is: valid UTF-8 by
 * the rules above, with no NUL byte. */
bool json_text_valid(const char *s, size_t n);
