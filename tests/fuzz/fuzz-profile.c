/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the profile loader: any bytes must either give a
 * complete profile or an error with a message, never a crash, a leak or a
 * half-built profile. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* Not CHECK(): release builds define NDEBUG, and the fuzzer must check. */
#define CHECK(cond)                                                                                                    \
	do {                                                                                                           \
		if (!(cond))                                                                                           \
			abort();                                                                                       \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cordon_diag diags[CORDON_PROFILE_MAX_ERRORS];
	struct cordon_profile *p = NULL;
	size_t n = 0;
	int r;

	r = cordon_profile_parse_diags("fuzz", "fuzz.yaml", (const char *)data, size, &p, diags,
				       CORDON_PROFILE_MAX_ERRORS, &n);
	if (r < 0) {
		/* All-or-nothing, and every failure says why. */
		CHECK(!p);
		CHECK(n >= 1 || r == -ENOMEM);
		for (size_t i = 0; i < n; i++)
			CHECK(diags[i].message[0] != '\0' && memchr(diags[i].message, 0, sizeof(diags[i].message)));
		return 0;
	}
	CHECK(p && n == 0);
	/* Exercise the lookups on whatever tool names were accepted. */
	/* Duplicate tool names are refused, so each entry is its own answer. */
	for (size_t i = 0; i < p->n_risk; i++)
		CHECK(cordon_profile_tool_risk(p, p->risk[i].tool) == p->risk[i].risk);
	for (size_t i = 0; i < p->n_grant; i++)
		CHECK(cordon_profile_tool_risk_named(p, p->grant[i]));
	(void)cordon_profile_tool_replay(p, "x");
	cordon_profile_free(p);
	return 0;
}
