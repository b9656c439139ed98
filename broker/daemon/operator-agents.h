/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The operator's agents.* ops (issue 18): bearer tokens for MCP clients
 * over TCP (agents.h). Called by cordon_operator_execute(). */

#include <jansson.h>

#include "actor.h"
#include "daemon.h"
#include "operator-proto.h"

/* agents.list {all}, agents.add {name} (the answer holds the token, shown
 * this once), agents.revoke {name} (the agent's sessions end at once). */
int operator_agents_execute(struct cordon_daemon *d, const struct cordon_actor *actor,
			    const struct cordon_op_request *req, json_t **ret, struct cordon_op_error *err);
