/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Agents (issue 18): the identities of MCP clients that reach cordond over
 * TCP, where no SO_PEERCRED names a uid. An operator adds an agent by name
 * and is shown its bearer token once:
 *
 *   cordon_at_<43 characters: base64url of 32 random bytes, no padding>
 *
 * The database keeps SHA-256 of the token only. Each agent is a subject of
 * its own (sessions, caps, budgets, audit identity), keyed by its id, which
 * never repeats; revoking it refuses its token from then on. */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "actor.h"
#include "db.h"

#define CORDON_AGENT_NAME_MAX	  20
#define CORDON_AGENT_TOKEN_PREFIX "cordon_at_"
#define CORDON_AGENT_TOKEN_LEN	  (sizeof(CORDON_AGENT_TOKEN_PREFIX) - 1 + 43)

struct cordon_agent_info {
	int64_t id;
	char name[CORDON_AGENT_NAME_MAX + 1];
};

/* A name is 1..20 bytes of [a-z0-9_-], starting with a letter or digit. */
bool cordon_agent_name_is_valid(const char *name);

/* Adds agent name (operator only: -EPERM) and writes its token, NUL-ended,
 * to ret_token (shown once; the caller wipes it). -EEXIST: an agent of that
 * name is not revoked. Audited (agent.added), never the token. */
int cordon_agent_add(struct cordon_db *db, const struct cordon_actor *actor, const char *name,
		     char ret_token[static CORDON_AGENT_TOKEN_LEN + 1], struct cordon_agent_info *ret_info);

/* Revokes the live agent name (operator only). -ENOENT: none. Writes the
 * revoked agent's id to *ret_id. Audited (agent.revoked). */
int cordon_agent_revoke(struct cordon_db *db, const struct cordon_actor *actor, const char *name, int64_t *ret_id);

/* Every agent, revoked ones too when all: an array of {id, name,
 * created_at, created_by, revoked_at|null} (times in microseconds). */
int cordon_agents_list(struct cordon_db *db, bool all, json_t **ret);

/* The live agent whose token is token. -EACCES: malformed, unknown or
 * revoked (one answer for all three). The stored hash is compared in
 * constant time. */
int cordon_agent_authenticate(struct cordon_db *db, const char *token, struct cordon_agent_info *ret);
