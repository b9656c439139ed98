/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Connectors, grants and the first-party risk policy.
 *
 * A connector's grant is an explicit set of tool names; no row means no tool.
 * The profile's tools.grant seeds it at install; afterwards only operators
 * change it. Every grant or risk-policy change bumps the policy epoch, which
 * revokes every pending or approved approval (they are bound to the epoch). */

#include <stddef.h>
#include <stdint.h>

#include "actor.h"
#include "authz.h"
#include "db.h"
#include "profile.h"
#include "strv.h"

/* Installs a connector from its (validated) profile: connector row with
 * default_risk, approval TTL and ceilings; risk and replay tables; the grant
 * seeded from tools.grant. Operator or system actor. Returns 0, -EEXIST when
 * already installed, -EPERM for a session actor, -EINVAL, -errno. */
int cordon_connector_install(struct cordon_db *db, const struct cordon_actor *actor, const struct cordon_profile *p);

/* Records a (re)launch of the connector: bumps its launch generation and
 * revokes every approval bound to an older generation. Writes the new
 * generation to *ret_generation (may be NULL). System or operator actor. */
int cordon_connector_relaunch(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
			      uint64_t *ret_generation);

int cordon_connector_generation(struct cordon_db *db, const char *connector, uint64_t *ret);

/* Grant changes: operator only (-EPERM otherwise). add: -EEXIST when already
 * granted; remove: -ENOENT when not granted; -ENOENT for an unknown
 * connector. Both bump the policy epoch and revoke approvals. */
int cordon_grant_add(struct cordon_db *db, const struct cordon_actor *actor, const char *connector, const char *tool);
int cordon_grant_remove(struct cordon_db *db, const struct cordon_actor *actor, const char *connector,
			const char *tool);

/* The grant set, sorted by name: a malloc'd NULL-terminated array of malloc'd
 * strings (free with strv_free, strv.h) and its length. */
int cordon_grants_list(struct cordon_db *db, const char *connector, char ***ret, size_t *ret_n);

/* Changes a tool's tier in the risk policy (operator only; bumps the epoch). */
int cordon_risk_set(struct cordon_db *db, const struct cordon_actor *actor, const char *connector, const char *tool,
		    enum cordon_risk tier);

/* revoke-all: in ONE transaction, empties every grant of every connector,
 * revokes every requested or approved approval and ends every pending or
 * active delegation; bumps the policy epoch. Operator only. */
struct cordon_revoke_all_result {
	uint64_t grants, approvals, delegations;
};
int cordon_revoke_all(struct cordon_db *db, const struct cordon_actor *actor, struct cordon_revoke_all_result *ret);

/* A loaded risk policy (owns its strings). */
struct cordon_risk_policy_owned {
	struct cordon_risk_policy policy;
	struct cordon_tool_risk *entries;
	size_t n;
};
int cordon_risk_policy_load(struct cordon_db *db, const char *connector, struct cordon_risk_policy_owned *ret);
void cordon_risk_policy_owned_done(struct cordon_risk_policy_owned *p);

/* The replay class of a tool (risk_policy.replay; unsafe when not named). */
int cordon_tool_replay_class(struct cordon_db *db, const char *connector, const char *tool, enum cordon_replay *ret);
