/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for canonical JSON. Properties checked on every input:
 *   - decoding never crashes and fails only with a documented errno;
 *   - an admitted value always encodes;
 *   - the canonical output is admitted again and is a fixed point:
 *     jcs(decode(jcs(x))) == jcs(x);
 *   - an admitted object always fingerprints;
 *   - the single-pass path (cordon_canon_bytes, canon-fast.c) agrees with
 *     the reference (decode + encode) on every input: the same bytes, or the
 *     same errno, message, line and column;
 *   - the input wrapped as a tools/call's params.arguments, decoded with the
 *     member lifted out (cordon_canon_decode_lifted), gives the same tree and
 *     the same canonical arguments as the reference decode.
 * A violated property aborts, so libFuzzer reports it as a crash. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "crypto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void violated(const char *what, int r)
{
	fprintf(stderr, "fuzz-jcs: property violated: %s (%d)\n", what, r);
	abort();
}

/* cordon_canon_bytes() against cordon_canon_bytes_reference(). */
static void differential(const uint8_t *data, size_t size)
{
	struct cordon_diag d1 = {}, d2 = {};
	char *a = NULL, *b = NULL;
	size_t al = 0, bl = 0;
	int r1, r2;

	r1 = cordon_canon_bytes((const char *)data, size, NULL, &a, &al, &d1);
	r2 = cordon_canon_bytes_reference((const char *)data, size, NULL, &b, &bl, &d2);
	if (r1 != r2)
		violated("fast and reference paths disagree on admission", r1);
	if (r1 == 0 && (al != bl || memcmp(a, b, al) != 0))
		violated("fast and reference paths disagree on the bytes", 0);
	if (r1 < 0 && (d1.error != d2.error || strcmp(d1.message, d2.message) != 0 || d1.line != d2.line ||
		       d1.column != d2.column))
		violated("fast and reference paths report different errors", r1);
	free(a);
	free(b);
}

/* {"method":"tools/call","params":{"name":"t","arguments":<input>}}: the
 * lifted decode against the reference decode. */
static void lifted(const uint8_t *data, size_t size)
{
	static const char head[] = "{\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":";
	struct cordon_canon_lifted l;
	struct cordon_diag d1 = {}, d2 = {};
	json_t *t1 = NULL, *t2 = NULL, *args;
	size_t n = sizeof(head) - 1 + size + 2;
	char *msg = malloc(n);
	int r1, r2;

	if (!msg)
		return;
	memcpy(msg, head, sizeof(head) - 1);
	memcpy(msg + sizeof(head) - 1, data, size);
	memcpy(msg + n - 2, "}}", 2);
	r1 = cordon_canon_decode_lifted(msg, n, NULL, "params", "arguments", &t1, &l, &d1);
	r2 = cordon_canon_decode(msg, n, NULL, &t2, &d2);
	if (r1 != r2)
		violated("lifted and reference decode disagree on admission", r1);
	if (r1 < 0) {
		if (l.jcs || d1.error != d2.error || strcmp(d1.message, d2.message) != 0)
			violated("lifted and reference decode report different errors", r1);
		free(msg);
		return;
	}
	args = json_object_get(json_object_get(t2, "params"), "arguments");
	if (json_is_object(args)) {
		char *want = NULL;
		size_t want_len = 0;

		if (!l.jcs)
			violated("an object member was not lifted", 0);
		if (cordon_jcs_encode(args, &want, &want_len) < 0 || want_len != l.jcs_len ||
		    memcmp(want, l.jcs, want_len) != 0)
			violated("lifted bytes differ from the reference encoding", 0);
		free(want);
		if (cordon_canon_lifted_restore(t1, msg, n, NULL, "params", "arguments", &l, NULL) < 0)
			violated("a lifted member cannot be restored", 0);
	} else if (l.jcs)
		violated("a non-object member was lifted", 0);
	if (!json_equal(t1, t2))
		violated("lifted tree differs from the reference tree", 0);
	json_decref(t1);
	json_decref(t2);
	free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cordon_diag d = {};
	json_t *x = NULL, *y = NULL;
	char *a = NULL, *b = NULL;
	size_t al = 0, bl = 0;
	int r;

	differential(data, size);
	lifted(data, size);

	r = cordon_canon_decode((const char *)data, size, NULL, &x, &d);
	if (r < 0) {
		switch (-r) {
		case EMSGSIZE:
		case EBADMSG:
		case EILSEQ:
		case ENOTUNIQ:
		case ELOOP:
		case ERANGE:
		case ENOMEM:
			if (d.error != -r || d.message[0] == 0)
				violated("error without a diag", r);
			return 0;
		default:
			violated("undocumented decode error", r);
		}
	}

	r = cordon_jcs_encode(x, &a, &al);
	if (r < 0)
		violated("admitted value does not encode", r);
	if (!cordon_utf8_valid(a, al, NULL))
		violated("canonical output is not valid UTF-8", 0);

	r = cordon_canon_decode(a, al, NULL, &y, &d);
	if (r < 0)
		violated("canonical output not admitted", r);
	r = cordon_jcs_encode(y, &b, &bl);
	if (r < 0)
		violated("re-decoded value does not encode", r);
	if (al != bl || memcmp(a, b, al) != 0)
		violated("jcs(decode(jcs(x))) != jcs(x)", 0);
	/* Canonical output is never longer than needed to restate the input
	 * value; it is at most a small factor larger (\u00XX for controls). */
	if (al > 6 * size + 16)
		violated("canonical output implausibly long", (int)al);

	if (json_is_object(x)) {
		uint8_t fp[CORDON_HASH_LEN];

		r = cordon_tool_fingerprint(x, NULL, fp);
		if (r < 0)
			violated("admitted object does not fingerprint", r);
	}

	free(a);
	free(b);
	json_decref(x);
	json_decref(y);
	return 0;
}
