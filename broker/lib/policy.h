/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The first-party risk policy (risk_policy: each tool's tier and replay
 * class) and the policy epoch. Every risk-policy change bumps the epoch,
 * which revokes every pending or approved approval. */

#include <stddef.h>

#include "actor.h"
#include "authz.h"
#include "db.h"

/* Changes a tool's tier in the risk policy (operator only; bumps the epoch). */
int cordon_risk_set(struct cordon_db *db, const struct cordon_actor *actor, const char *connector, const char *tool,
		    enum cordon_risk tier);

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
