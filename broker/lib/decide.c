/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One decision over a consistent snapshot (grant, inventory entry, risk
 * policy, delegations, epoch, generation) with its audit record. Used by the
 * daemon's tools/call path and, inside its own transaction, by actions.c to
 * re-decide before an action begins. */
#include "decide.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "broker-private.h"
#include "delegations.h"
#include "connectors.h"
#include "grants.h"
#include "inventory.h"
#include "parse-util.h"
#include "policy.h"
#include "strv.h"

/* The inputs of a decision, as loaded from one snapshot. */
struct decide_snapshot {
	char *connector, *tool; /* what it was loaded for */
	uint64_t generation, policy_epoch;
	char **grant;
	size_t n_grant;
	struct cordon_inventory_record rec;
	struct cordon_inventory_entry entry;
	bool have_inv;
	struct cordon_risk_policy_owned pol;
	struct cordon_delegation_info *dels;
	struct cordon_delegation_view *views;
	size_t n_dels;
	/* For the batch cache: the batch it was loaded in, and the handle's
	 * total row changes right after the decision that used it last. */
	uint64_t batch;
	int64_t changes;
};

static void snapshot_done(struct decide_snapshot *sn)
{
	free(sn->connector);
	free(sn->tool);
	cordon_inventory_record_done(&sn->rec);
	cordon_risk_policy_owned_done(&sn->pol);
	strv_free(sn->grant);
	free(sn->views);
	cordon_delegations_free(sn->dels);
	*sn = (struct decide_snapshot){};
}

static void snapshot_free(struct decide_snapshot *sn)
{
	if (!sn)
		return;
	snapshot_done(sn);
	free(sn);
}

static int snapshot_load(struct cordon_db *db, const struct cordon_decide_request *req, struct decide_snapshot *sn)
{
	int r;

	r = cordon_connector_generation(db, req->connector, &sn->generation);
	if (r < 0)
		return r;
	r = cordon_db_policy_epoch(db, &sn->policy_epoch);
	if (r < 0)
		return r;
	r = cordon_grants_list(db, req->connector, &sn->grant, &sn->n_grant);
	if (r < 0)
		return r;
	r = cordon_inventory_get(db, req->connector, req->tool, &sn->rec);
	if (r < 0 && r != -ENOENT)
		return r;
	sn->have_inv = r >= 0;
	if (sn->have_inv)
		cordon_inventory_record_view(&sn->rec, &sn->entry);
	r = cordon_risk_policy_load(db, req->connector, &sn->pol);
	if (r < 0)
		return r;
	r = cordon_delegations_active(db, req->connector, &sn->dels, &sn->n_dels);
	if (r < 0)
		return r;
	return cordon_delegations_views(sn->dels, sn->n_dels, &sn->views);
}

static void snapshot_decide(struct cordon_db *db, const struct decide_snapshot *sn,
			    const struct cordon_decide_request *req, uint64_t request_epoch,
			    struct cordon_broker_decision *out)
{
	struct cordon_authz_request areq = { .session = req->session,
					     .connector = req->connector,
					     .tool = req->tool,
					     .fingerprint = req->fingerprint,
					     .policy_epoch = request_epoch ? request_epoch : sn->policy_epoch,
					     .delegation = req->delegation,
					     .now = cordon_db_now(db) };
	struct cordon_authz_input in = { .connector = req->connector,
					 .tool = req->tool,
					 .inventory = sn->have_inv ? &sn->entry : NULL,
					 .grant = (const char *const *)sn->grant,
					 .n_grant = sn->n_grant,
					 .have_grant_row = true,
					 .policy = &sn->pol.policy,
					 .delegations = sn->views,
					 .n_delegations = sn->n_dels,
					 .policy_epoch = sn->policy_epoch,
					 .request = &areq };

	out->generation = sn->generation;
	out->policy_epoch = sn->policy_epoch;
	out->decision = cordon_authz_decide(&in);
}

int snapshot_decide_tx(struct cordon_db *db, const struct cordon_decide_request *req, uint64_t request_epoch,
		       struct cordon_broker_decision *out)
{
	struct decide_snapshot sn = {};
	int r;

	r = snapshot_load(db, req, &sn);
	if (r >= 0)
		snapshot_decide(db, &sn, req, request_epoch, out);
	snapshot_done(&sn);
	return r < 0 ? r : 0;
}

static void decide_cache_free(void *p)
{
	snapshot_free(p);
}

/* The snapshot for req inside the open batch: the one the batch's last
 * decision loaded when it was for the same connector and tool and nothing
 * changed a row on this handle since (the batch holds the write lock, so
 * no other handle can; this handle's only writes in a batch are audit
 * records, and any other transaction commits the batch first, which ends
 * the cache with it). Otherwise loaded afresh. */
static int batch_snapshot(struct cordon_db *db, const struct cordon_decide_request *req, struct decide_snapshot **ret)
{
	struct decide_snapshot *sn = db->decide_cache;
	int r;

	if (sn && sn->batch == db->batch_id && sn->changes == sqlite3_total_changes64(db->sql) &&
	    !strcmp(sn->connector, req->connector) && !strcmp(sn->tool, req->tool)) {
		*ret = sn;
		return 0;
	}
	if (!sn) {
		sn = calloc(1, sizeof(*sn));
		if (!sn)
			return -ENOMEM;
		db->decide_cache = sn;
		db->decide_cache_free = decide_cache_free;
	} else
		snapshot_done(sn);
	r = snapshot_load(db, req, sn);
	if (r >= 0) {
		sn->connector = strdup(req->connector);
		sn->tool = strdup(req->tool);
		if (!sn->connector || !sn->tool)
			r = -ENOMEM;
	}
	if (r < 0) {
		snapshot_done(sn); /* batch 0: never matches */
		return r;
	}
	sn->batch = db->batch_id;
	*ret = sn;
	return 0;
}

static const struct cordon_broker_decision deny_invalid = {
	.decision = { .verdict = CORDON_VERDICT_DENY, .tier = CORDON_RISK_HIGH, .reason = CORDON_DENY_INVALID_INPUT }
};

static bool request_valid(const struct cordon_decide_request *req)
{
	return req && connector_id_is_valid(req->connector) && cordon_tool_name_is_valid(req->tool) &&
	       cordon_session_id_is_valid(req->session);
}

/* The record of a decision the snapshot could not be loaded for (an unknown
 * connector, say): denied for an error, and still on record. */
static struct cordon_audit_event error_event(const struct cordon_decide_request *req, const struct cordon_actor *actor,
					     int r)
{
	return (struct cordon_audit_event){ CORDON_AUDIT_EVENT_INIT,
					    .event = CORDON_AUDIT_DECISION,
					    .actor = actor,
					    .connector = req->connector,
					    .tool = req->tool,
					    .decision = "deny",
					    .reason = r == -ENOENT ? "unknown-connector" : "error" };
}

static struct cordon_audit_event decision_event(const struct cordon_decide_request *req,
						const struct cordon_actor *actor,
						const struct cordon_broker_decision *out)
{
	return (struct cordon_audit_event){ CORDON_AUDIT_EVENT_INIT,
					    .event = CORDON_AUDIT_DECISION,
					    .actor = actor,
					    .connector = req->connector,
					    .tool = req->tool,
					    .tier = (int)out->decision.tier,
					    .decision = cordon_verdict_to_string(out->decision.verdict),
					    .reason = out->decision.verdict == CORDON_VERDICT_DENY
							      ? cordon_deny_reason_to_string(out->decision.reason)
							      : NULL,
					    .fingerprint = req->fingerprint,
					    .delegation_id = req->delegation,
					    .generation = (int64_t)out->generation };
}

static bool read_allow(const struct cordon_broker_decision *d)
{
	return d->decision.verdict == CORDON_VERDICT_ALLOW && d->decision.tier == CORDON_RISK_READ;
}

/* What every decision starts with: the answer a deny until decided (also
 * when req is refused), req checked, the actor its session. */
static int decide_start(struct cordon_db *db, const struct cordon_decide_request *req,
			struct cordon_broker_decision *ret, struct cordon_actor *ret_actor)
{
	*ret = deny_invalid;
	if (!request_valid(req))
		return db_failf(db, EINVAL, "invalid decision request");
	*ret_actor = cordon_actor_session(req->session);
	return 0;
}

/* Records that deciding req failed with r, keeping db's message of that
 * failure for the caller. tx: the decision's own transaction, rolled back
 * first and the record appended in a transaction of its own; NULL: inside
 * the open batch, when SQLite has not ended it. */
static void audit_decide_error(struct cordon_db *db, const struct cordon_decide_request *req,
			       const struct cordon_actor *actor, int r, struct db_tx *tx)
{
	struct cordon_audit_event ev = error_event(req, actor, r);
	char saved[sizeof(db->last_error)];

	memcpy(saved, db->last_error, sizeof(saved));
	if (tx) {
		db_tx_cleanup(tx);
		tx->open = false;
		(void)cordon_audit_append(db, &ev);
	} else if (!sqlite3_get_autocommit(db->sql))
		(void)audit_append_tx(db, &ev);
	memcpy(db->last_error, saved, sizeof(saved));
}

int cordon_broker_decide(struct cordon_db *db, const struct cordon_decide_request *req,
			 struct cordon_broker_decision *ret)
{
	_cleanup_tx_ struct db_tx tx = {};
	struct cordon_broker_decision out = {};
	struct cordon_actor actor;
	struct cordon_audit_event ev;
	int r;

	r = decide_start(db, req, ret, &actor);
	if (r < 0)
		return r;

	/* Relaxed (synchronous=NORMAL): the decision record is committed to
	 * the WAL before the call goes on, so a crash of this process never
	 * loses it, but it is not fsynced. Nothing irrevocable follows a
	 * decision before a durable commit: a call above read begins its
	 * action (and an approval is requested) in a durable transaction
	 * before anything is sent, and that fsync covers this record too.
	 * What a power failure can take is a tail of read and deny records,
	 * the calls the design already lets go on when their record cannot be
	 * written at all (below). One fdatasync per read call was most of a
	 * read call's cost (docs/performance.md). */
	r = db_tx_begin_relaxed(db, &tx);
	if (r < 0)
		return r;
	r = snapshot_decide_tx(db, req, 0, &out);
	if (r < 0) {
		audit_decide_error(db, req, &actor, r, &tx);
		return r;
	}
	ev = decision_event(req, &actor, &out);
	r = audit_append_tx(db, &ev);
	if (r >= 0)
		r = db_tx_commit(&tx);
	if (r >= 0)
		r = audit_after_relaxed_commit(db);
	if (r < 0) {
		/* Fail closed above read: without its record, nothing that
		 * changes anything goes ahead. */
		if (read_allow(&out)) {
			*ret = out;
			return 0;
		}
		return r;
	}
	*ret = out;
	return 0;
}

int cordon_broker_decide_batched(struct cordon_db *db, const struct cordon_decide_request *req,
				 struct cordon_broker_decision *ret, uint64_t *ret_batch)
{
	struct cordon_broker_decision out = {};
	struct decide_snapshot *sn = NULL;
	struct cordon_actor actor;
	struct cordon_audit_event ev;
	int r;

	*ret_batch = 0;
	r = decide_start(db, req, ret, &actor);
	if (r < 0)
		return r;

	/* SQLite rolled the batch back by itself (an I/O error, a full
	 * disk): close it as failed and start a new one. */
	if (db->batch_open && sqlite3_get_autocommit(db->sql))
		(void)db_batch_flush(db);
	if (!db->batch_open) {
		/* Relaxed, as cordon_broker_decide()'s own transaction; the
		 * caller sends nothing before the batch has committed. */
		r = db_begin_relaxed(db);
		if (r < 0)
			return r;
		db->batch_open = true;
		db->batch_id++;
	}
	*ret_batch = db->batch_id;
	r = batch_snapshot(db, req, &sn);
	if (r >= 0)
		snapshot_decide(db, sn, req, 0, &out);
	if (r < 0) {
		/* The snapshot only reads: nothing to undo, unless SQLite
		 * ended the batch (then the commit reports the failure). */
		audit_decide_error(db, req, &actor, r, NULL);
		return r;
	}
	ev = decision_event(req, &actor, &out);
	r = audit_append_tx(db, &ev);
	sn->changes = sqlite3_total_changes64(db->sql);
	if (r < 0 && !read_allow(&out))
		return r; /* fail closed above read, as cordon_broker_decide() */
	*ret = out;
	return 0;
}

int cordon_decide_batch_commit(struct cordon_db *db)
{
	int r;

	if (!db->batch_open)
		return 0;
	r = db_batch_flush(db);
	if (r >= 0) {
		r = audit_after_relaxed_commit(db);
		if (r < 0)
			db->batch_done[db->batch_id % DB_BATCH_RING].r = r;
	}
	return r;
}

int cordon_decide_batch_result(const struct cordon_db *db, uint64_t batch)
{
	const struct db_batch_done *e = &db->batch_done[batch % DB_BATCH_RING];

	if (batch == 0 || batch > db->batch_id)
		return -EINVAL;
	if (db->batch_open && batch == db->batch_id)
		return -EINPROGRESS;
	return e->id == batch ? e->r : -ESTALE;
}
