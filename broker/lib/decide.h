/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The decision of one tools/call (step 2 of broker.h's call path). */

#include <stdint.h>

#include "authz.h"
#include "db.h"

struct cordon_decide_request {
	const char *session;
	const char *connector;
	const char *tool;
	const char *fingerprint; /* of the definition the connector advertises now */
	const char *delegation;	 /* or NULL */
};

struct cordon_broker_decision {
	struct cordon_decision decision;
	uint64_t generation;   /* connector launch generation at decision time */
	uint64_t policy_epoch; /* epoch of the snapshot */
};

/* Loads grant, inventory entry, risk policy, delegations, epoch and
 * generation in one transaction, decides with cordon_authz_decide() and
 * appends a "decision" audit record. Returns 0 with *ret filled (deny
 * included). On any error returns -errno and *ret is a deny; when only the
 * audit append failed, a read-tier allow stands (counted in
 * audit_append_failures) and anything above read is denied. */
int cordon_broker_decide(struct cordon_db *db, const struct cordon_decide_request *req,
			 struct cordon_broker_decision *ret);

/* Loads the decision snapshot inside the caller's transaction and decides.
 * request_epoch: the epoch the caller's call was bound to (0: the current
 * one). Returns 0 with out filled, or -errno. */
int snapshot_decide_tx(struct cordon_db *db, const struct cordon_decide_request *req, uint64_t request_epoch,
		       struct cordon_broker_decision *out);
