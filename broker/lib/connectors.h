/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Connectors: the installed connector rows (default risk, approval TTL,
 * ceilings) and their launch generation. Removing a connector takes its
 * grants, inventory, risk policy, approvals, delegations and finished actions
 * with it (ON DELETE CASCADE); the audit log keeps their history.
 *
 * connectors.c owns the table; install, relaunch and removal change other
 * tables in the same transaction and are implemented in lifecycle.c. */

#include <stdint.h>

#include "actor.h"
#include "db.h"
#include "profile.h"

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

/* Uninstalls a connector: refused with -EBUSY while it has an action that is
 * prepared, dispatched or of unknown outcome (an operator resolves those
 * first); -ENOENT when not installed. Bumps the policy epoch and audits.
 * Operator or system actor (-EPERM otherwise). */
int cordon_connector_remove(struct cordon_db *db, const struct cordon_actor *actor, const char *connector);

int cordon_connector_generation(struct cordon_db *db, const char *connector, uint64_t *ret);

/* 0 when the connector is installed; -ENOENT (the db's last error says
 * "unknown connector") or -errno otherwise. */
int cordon_connector_exists(struct cordon_db *db, const char *connector);
