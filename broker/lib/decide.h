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

/* Group commit, for a caller that decides many calls at once (cordond: the
 * calls of one event-loop pass). Like cordon_broker_decide(), but the
 * decision and its audit record join one open relaxed transaction, the
 * batch, instead of committing on their own: one BEGIN/COMMIT, one set of
 * WAL locks and pages for all of them. *ret_batch names the batch (0 when
 * none was opened: the call is denied, nothing to wait for).
 *
 * The decision only counts once its batch has committed: the caller sends
 * nothing (no dispatch, no answer) before cordon_decide_batch_result()
 * says so, which keeps cordon_broker_decide()'s rule that a crash of the
 * process never loses the record of anything that went out. The batch
 * commits at cordon_decide_batch_commit(), or earlier when any other
 * transaction begins on the handle (the batch commits first, then that
 * transaction starts: a durable one's fsync then covers the batch too).
 * Returns as cordon_broker_decide() does: 0 with *ret filled (deny
 * included), or -errno with *ret a deny, except that an audit append that
 * failed leaves a read-tier allow standing. */
int cordon_broker_decide_batched(struct cordon_db *db, const struct cordon_decide_request *req,
				 struct cordon_broker_decision *ret, uint64_t *ret_batch);

/* Commits the open batch, if any. Returns 0 (also with no batch open) or
 * the commit's -errno. */
int cordon_decide_batch_commit(struct cordon_db *db);

/* The outcome of batch `batch`: 0 committed, -errno its commit failed (the
 * decisions in it count as decisions whose record could not be written),
 * -EINPROGRESS still open, -ESTALE too old to be known (treat as failed). */
int cordon_decide_batch_result(const struct cordon_db *db, uint64_t batch);

/* Loads the decision snapshot inside the caller's transaction and decides.
 * request_epoch: the epoch the caller's call was bound to (0: the current
 * one). Returns 0 with out filled, or -errno. */
int snapshot_decide_tx(struct cordon_db *db, const struct cordon_decide_request *req, uint64_t request_epoch,
		       struct cordon_broker_decision *out);
