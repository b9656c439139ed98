/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Grants: the explicit set of tools each connector may call.
 *
 * A connector's grant is an explicit set of tool names; no row means no tool.
 * The profile's tools.grant seeds it at install; afterwards only operators
 * change it. Every grant change bumps the policy epoch (policy.h), which
 * revokes every pending or approved approval (they are bound to the epoch). */

#include <stddef.h>
#include <stdint.h>

#include "actor.h"
#include "db.h"
#include "strv.h"

/* Grant changes: operator only (-EPERM otherwise). add: -EEXIST when already
 * granted; remove: -ENOENT when not granted; -ENOENT for an unknown
 * connector. Both bump the policy epoch and revoke approvals. */
int cordon_grant_add(struct cordon_db *db, const struct cordon_actor *actor, const char *connector, const char *tool);
int cordon_grant_remove(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
			const char *tool);

/* The grant set, sorted by name: a malloc'd NULL-terminated array of malloc'd
 * strings (free with strv_free, strv.h) and its length. */
int cordon_grants_list(struct cordon_db *db, const char *connector, char ***ret, size_t *ret_n);

/* revoke-all (lifecycle.c): in ONE transaction, empties every grant of every connector,
 * revokes every requested or approved approval and ends every pending or
 * active delegation; bumps the policy epoch. Operator only. */
struct cordon_revoke_all_result {
	uint64_t grants, approvals, delegations;
};
int cordon_revoke_all(struct cordon_db *db, const struct cordon_actor *actor, struct cordon_revoke_all_result *ret);
