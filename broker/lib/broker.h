/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Glue over the broker modules for the daemon: start-up recovery, shutdown,
 * and a decision over a consistent snapshot with its audit record.
 *
 * The call path the daemon runs for one tools/call (no transaction is open
 * while it waits or does I/O):
 *   1. canon-decode arguments, JCS them (cordon_canon_arguments + jcs_encode)
 *   2. cordon_broker_decide()            -> deny | allow | approve(tier)
 *   3. approve: cordon_approval_request() (coalesces), wait for the operator
 *   4. cordon_action_begin()             -> consumes the approval (CAS), creates
 *                                           the action and the audit records, or
 *                                           returns a stored idempotent result
 *   5. cordon_action_dispatched()        -> committed BEFORE the first byte is sent
 *                                           (or .dispatch_now in step 4: one commit less)
 *   6. send the JCS bytes, read the result
 *   7. cordon_action_complete()
 * Any error at 2–5 means the call is not sent. */

#include <stdint.h>

#include "actor.h"
#include "authz.h"
#include "db.h"
#include "decide.h"

struct cordon_broker_start_result {
	uint64_t abandoned;	    /* prepared actions: never sent */
	uint64_t outcome_unknown;   /* dispatched actions: the operator must resolve them */
	uint64_t approvals_revoked; /* outstanding approvals of the previous process */
	uint64_t delegations_expired;
};

/* Start-up: recovery and a broker.start record. Run before serving. */
int cordon_broker_start(struct cordon_db *db, struct cordon_broker_start_result *ret);

/* Shutdown: a broker.stop record and a final checkpoint. */
int cordon_broker_stop(struct cordon_db *db);
/* The same, the record's reason a fixed word ("sigterm", "sigint",
 * "sigquit": the signal that stopped the daemon); NULL: none. */
int cordon_broker_stop_because(struct cordon_db *db, const char *reason);

/* Periodic work for the daemon's timer (say every second): expires
 * approvals and delegations past their time and writes a checkpoint when one
 * is due. Returns 0 or the first -errno (the others still run). */
int cordon_broker_tick(struct cordon_db *db);

/* Retention: deletes finished rows whose last change is older than
 * max_age_usec — idempotency identities of finished actions, finished
 * actions no identity refers to, decided approvals no action refers to, and
 * ended delegations. Actions with an unknown outcome, anything outstanding,
 * and the audit log are never pruned. A retry whose identity was pruned runs
 * again, so max_age must exceed any gateway's retry horizon (days, not
 * minutes). Operator or system actor; one transaction; audited. */
struct cordon_prune_result {
	uint64_t idempotency, actions, approvals, delegations;
};
int cordon_broker_prune(struct cordon_db *db, const struct cordon_actor *actor, uint64_t max_age_usec,
			struct cordon_prune_result *ret);

/* What needs an operator, and where the policy and the log stand: the
 * counts of `cordonctl status`, each from the module that owns the table. */
struct cordon_broker_status {
	uint64_t connectors;	      /* installed */
	uint64_t approvals_pending;   /* requested */
	uint64_t delegations_pending; /* requested, not yet decided */
	uint64_t actions_unresolved;  /* abandoned or outcome_unknown */
	uint64_t inventory_to_review; /* pending_review or changed */
	uint64_t policy_epoch;
	int64_t audit_last_seq;
};
/* Returns 0 and fills *ret, or -errno (the db's last error says why). */
int cordon_broker_status(struct cordon_db *db, struct cordon_broker_status *ret);
