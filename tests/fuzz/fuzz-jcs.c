/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for canonical JSON. Properties checked on every input:
 *   - decoding never crashes and fails only with a documented errno;
 *   - an admitted value always encodes;
 *   - the canonical output is admitted again and is a fixed point:
 *     jcs(decode(jcs(x))) == jcs(x);
 *   - an admitted object always fingerprints.
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cordon_diag d = {};
	json_t *x = NULL, *y = NULL;
	char *a = NULL, *b = NULL;
	size_t al = 0, bl = 0;
	int r;

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
