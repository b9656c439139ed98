/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the checkpoint note and verifier-key parsers.
 * The first input byte selects the parser; the rest is its input.
 *   even: cordon_checkpoint_verify() against a fixed test key. Property: if
 *         a note verifies, re-signing the parsed checkpoint reproduces the
 *         note's signed text byte for byte, and our signature line is one of
 *         its signature lines (the accepted form is canonical: nothing the
 *         parser ignores can be smuggled into the signed part; signatures
 *         by other keys may come in any order, before or after ours).
 *   odd:  cordon_note_verifier_parse(). Property: an accepted key string
 *         formats back to itself.
 * A violated property aborts. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct cordon_note_signer *signer;
static struct cordon_note_verifier verifier;

static void violated(const char *what)
{
	fprintf(stderr, "fuzz-checkpoint: property violated: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cordon_diag d = {};
	int r;

	if (!signer) {
		uint8_t seed[32];

		memset(seed, 0x42, sizeof(seed));
		if (cordon_note_signer_new_from_seed("cordon.test/audit", seed, &signer) < 0)
			abort();
		cordon_note_signer_verifier(signer, &verifier);
	}
	if (size < 1)
		return 0;

	if ((data[0] & 1) == 0) {
		struct cordon_checkpoint c;
		char *note = NULL;
		size_t len = 0;

		r = cordon_checkpoint_verify((const char *)data + 1, size - 1, &verifier, NULL, &c, &d);
		if (r < 0) {
			if (r != -EBADMSG && r != -EKEYREJECTED && r != -ENOKEY)
				violated("undocumented error");
			if (d.message[0] == 0)
				violated("error without a diag");
			return 0;
		}
		if (cordon_checkpoint_sign(signer, &c, &note, &len) < 0)
			violated("accepted checkpoint does not re-sign");
		{
			const char *sep = memmem(note, len, "\n\n", 2), *in = (const char *)data + 1;
			size_t body = sep ? (size_t)(sep - note) + 2 : 0, in_len = size - 1;
			const char *ours = note + body;
			size_t ours_len = len - body;
			bool found = false;

			if (!sep || body > in_len || memcmp(note, in, body) != 0)
				violated("accepted note's signed text is not the canonical form of its checkpoint");
			/* Our signature line, whole, at the start of a line of the
			 * signature block. */
			for (const char *q = in + body; q + ours_len <= in + in_len && !found;) {
				const char *nl;

				found = memcmp(q, ours, ours_len) == 0;
				nl = memchr(q, '\n', (size_t)(in + in_len - q));
				if (!nl)
					break;
				q = nl + 1;
			}
			if (!found)
				violated("accepted note does not carry our canonical signature line");
		}
		free(note);
	} else {
		struct cordon_note_verifier v;
		char *s = malloc(size), *out = NULL;

		if (!s)
			return 0;
		memcpy(s, data + 1, size - 1);
		s[size - 1] = 0;
		if (cordon_note_verifier_parse(s, &v, &d) == 0) {
			if (cordon_note_verifier_format(&v, &out) < 0 || strcmp(out, s) != 0)
				violated("accepted verifier key does not format back to itself");
			free(out);
		}
		free(s);
	}
	return 0;
}
