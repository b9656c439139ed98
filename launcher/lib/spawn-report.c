/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Enforcement report helpers and the SHA-256 used for the policy hash
 * (libsodium's, as seccomp.c's program cache key). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "spawn-internal.h"

const char *cordon_control_state_to_string(enum cordon_control_state s)
{
	switch (s) {
	case CORDON_STATE_ENFORCED:
		return "enforced";
	case CORDON_STATE_DEGRADED:
		return "degraded";
	case CORDON_STATE_UNAVAILABLE:
		return "unavailable";
	case CORDON_STATE_DISABLED_BY_POLICY:
		return "disabled_by_policy";
	}
	return "unknown";
}

int spawn_plan_add_missing(struct spawn_plan *plan, const char *control, const char *what, const char *impact)
{
	json_t *o;

	if (!plan->missing) {
		plan->missing = json_array();
		if (!plan->missing)
			return -ENOMEM;
	}
	o = json_pack("{s:s, s:s, s:s}", "control", control, "what", what, "impact", impact);
	if (!o || json_array_append_new(plan->missing, o) < 0)
		return -ENOMEM;
	return 0;
}

void cordon_sha256_hex(const void *buf, size_t len, char out[65])
{
	unsigned char digest[crypto_hash_sha256_BYTES];

	/* crypto_hash_sha256 needs no sodium_init(). */
	crypto_hash_sha256(digest, buf, len);
	sodium_bin2hex(out, 65, digest, sizeof(digest));
}
