/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The audit log: one JCS record per event, a `prev` hash chain, RFC 6962
 * leaf hashes, and signed C2SP checkpoints (Ed25519).
 *
 * A record holds identifiers and fixed vocabularies only: event type, actor,
 * connector, tool, tier, decision, reason, state, ids, the first 8 bytes of an
 * approval binding, a tool fingerprint. NEVER argument values, results,
 * credentials or free-form error text: struct cordon_audit_event has no field
 * that could carry them. Byte layout: docs/authorization.md. */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "actor.h"
#include "checkpoint.h"
#include "db.h"
#include "profile.h"

/* Event types (the record's "event" member). */
#define CORDON_AUDIT_DECISION		"decision"
#define CORDON_AUDIT_APPROVAL_REQUESTED "approval.requested"
#define CORDON_AUDIT_APPROVAL_APPROVED	"approval.approved"
#define CORDON_AUDIT_APPROVAL_DENIED	"approval.denied"
#define CORDON_AUDIT_APPROVAL_EXPIRED	"approval.expired"
#define CORDON_AUDIT_APPROVAL_REVOKED	"approval.revoked"
#define CORDON_AUDIT_APPROVAL_CONSUMED	"approval.consumed"
#define CORDON_AUDIT_APPROVAL_REVEALED	"approval.revealed" /* an operator saw its masked values */
#define CORDON_AUDIT_ACTION		"action"
#define CORDON_AUDIT_INVENTORY		"inventory"
#define CORDON_AUDIT_GRANT		"grant"
#define CORDON_AUDIT_CONNECTOR		"connector"
#define CORDON_AUDIT_DELEGATION		"delegation"
#define CORDON_AUDIT_BROKER_START	"broker.start"
#define CORDON_AUDIT_BROKER_STOP	"broker.stop"
#define CORDON_AUDIT_BROKER_RECOVERY	"broker.recovery"
#define CORDON_AUDIT_BROKER_RELOAD	"broker.reload" /* profiles and config re-read (state: applied|refused) */
#define CORDON_AUDIT_OPERATOR_BACKUP	"broker.backup" /* an operator took a copy of the database */
#define CORDON_AUDIT_CHECKPOINT		"checkpoint"
#define CORDON_AUDIT_RETENTION		"retention"
#define CORDON_AUDIT_NETWORK_DENIED	"network.denied"
#define CORDON_AUDIT_AGENT_ADDED	"agent.added" /* a bearer token issued (agents.h) */
#define CORDON_AUDIT_AGENT_REVOKED	"agent.revoked"

struct cordon_audit_event {
	const char *event; /* one of the CORDON_AUDIT_* types */
	const struct cordon_actor *actor;
	const char *session; /* the session the event concerns (when not the actor) */
	const char *connector;
	const char *tool;
	int tier; /* enum cordon_risk, or -1 */
	const char *decision;
	const char *reason; /* a fixed vocabulary word, never an error message */
	const char *state;  /* new state of the object the event concerns */
	const char *approval_id;
	const char *action_id;
	const char *delegation_id;
	const uint8_t *binding;	 /* 32 bytes; the record keeps the first 8 */
	const char *fingerprint; /* tool fingerprint, hex */
	const char *path;	 /* delegation path (operator-visible authority) */
	const char *access;	 /* delegation access: "read" | "read-write" */
	const char *agent;	 /* agent name (agent.added/revoked), never its token */
	int64_t generation;	 /* connector launch generation, or -1 */
	int64_t count;		 /* an object count (revoke-all, recovery), or -1 */
};

/* A designated initialiser base: every optional integer unset. Later
 * designators override it on purpose (as systemd does, -Woverride-init is
 * off for files that use this). */
#define CORDON_AUDIT_EVENT_INIT .tier = -1, .generation = -1, .count = -1
#pragma GCC diagnostic ignored "-Woverride-init"

struct cordon_audit_options {
	const char *origin;		   /* checkpoint origin line, e.g. "cordon/host.example/audit" */
	uint64_t checkpoint_every;	   /* records; 0: 256 */
	uint64_t checkpoint_interval_usec; /* 0: 300 s */
	/* false: a checkpoint that falls due in a relaxed transaction (a
	 * decision) is signed right after its commit, on the call's path.
	 * true: it is left for the caller's next cordon_audit_checkpoint_pending()
	 * (cordond: its 100 ms tick), and signs every record up to then. */
	bool checkpoint_when_idle;
};

/* Enables checkpoints: takes ownership of signer (freed with the db, or now
 * on error). Rebuilds the Merkle state from the stored records. Without this,
 * records are still chained but nothing is signed. Returns 0 or -errno. */
int cordon_audit_setup(struct cordon_db *db, const struct cordon_audit_options *o, struct cordon_note_signer *signer,
		       struct cordon_diag *diag);

/* Loads (creating on first start, mode 0600) the Ed25519 signing key at
 * key_path with canon's cordon_note_signer_load_or_create() and calls
 * cordon_audit_setup(). Writes the public verifier to *ret_verifier (may be
 * NULL) for `verify`. */
int cordon_audit_setup_key_file(struct cordon_db *db, const struct cordon_audit_options *o, const char *key_path,
				const char *key_name, struct cordon_note_verifier *ret_verifier,
				struct cordon_diag *diag);

/* Appends one record in its own transaction. Returns 0 or -errno; on failure
 * the db's audit_append_failures counter is incremented. */
int cordon_audit_append(struct cordon_db *db, const struct cordon_audit_event *ev);

/* Appends inside the caller's open transaction (the caller's commit makes it
 * durable together with the state change it records). In a relaxed
 * transaction (db_begin_relaxed()) a checkpoint that falls due is not
 * written; the caller runs audit_deferred_checkpoint() after its commit. */
int audit_append_tx(struct cordon_db *db, const struct cordon_audit_event *ev);

/* Outside a transaction: writes the checkpoint a relaxed transaction's
 * append left due, in a durable transaction of its own. Returns 1 when one
 * was written, 0 when none was pending, -errno (the counter of failed
 * appends counts it; the next append that finds it due tries again). */
int audit_deferred_checkpoint(struct cordon_db *db);

/* After a relaxed commit: audit_deferred_checkpoint(), unless the caller
 * asked for checkpoint_when_idle (then 0). */
int audit_after_relaxed_commit(struct cordon_db *db);

/* audit_deferred_checkpoint() for a caller that set checkpoint_when_idle:
 * call it from idle time (a timer), outside a transaction. */
int cordon_audit_checkpoint_pending(struct cordon_db *db);

/* Signs a checkpoint now if there are records no checkpoint covers (the
 * checkpoint record itself is covered). Call at shutdown and from a timer.
 * Returns 1 when one was written, 0 when none was needed, -errno. */
int cordon_audit_checkpoint(struct cordon_db *db);

/* Where the log stands, for /health: the last sequence number and the size
 * and time (usec) of the newest checkpoint (0 and 0 when none). Returns 0 or
 * -errno; writes the out-parameters only on success. */
int cordon_audit_position(struct cordon_db *db, int64_t *ret_last_seq, int64_t *ret_cp_size, int64_t *ret_cp_time);

/* The newest `count` records, oldest first, for display: a JSON array of
 * the decoded records (a record that is not valid JCS appears as a string
 * of its bytes; cordon_audit_verify() is what judges the log). Returns 0 and
 * writes *ret (the caller's reference), or -errno. */
int cordon_audit_tail(struct cordon_db *db, uint64_t count, json_t **ret);

/* Export (`cordonctl audit export`): records with seq > after_seq, oldest
 * first, at most limit (0 or above CORDON_AUDIT_EXPORT_PAGE: that page
 * size) per call. since_usec/until_usec (0: unbounded) filter on the
 * record's time: records before since are skipped, and the first record
 * after until ends the export ("end": true; times grow along the log).
 * Writes a new object {"records": [...], "next_seq": N, "last_seq": M,
 * "end": bool}: each record as {"seq", "time", "event", "actor", "fields":
 * {every other member}, "prev", "hash": hex leaf hash}; a malformed record
 * as {"seq", "malformed": true, "raw", "hash"}. next_seq is the last seq
 * read (skipped ones included): the next call's after_seq. Returns 0 or
 * -errno. */
#define CORDON_AUDIT_EXPORT_PAGE 1000
struct cordon_audit_export_query {
	uint64_t after_seq;
	uint64_t since_usec, until_usec;
	uint64_t limit;
};
int cordon_audit_export(struct cordon_db *db, const struct cordon_audit_export_query *q, json_t **ret);

/* Retention of the audit log: deletes the oldest records, whole ranges
 * only, keeping every signed checkpoint. A record may go when it is older
 * than retain_usec or when more than retain_records newer ones exist (0:
 * that limit is off; a record goes when any limit says so). The cut is
 * rounded down to a signed checkpoint of size k: records 1..k-1 are
 * deleted, record k (the "checkpoint" record) stays, and the RFC 6962
 * Merkle state of the deleted records is stored in the audit_pruned table,
 * after it was checked, with the records' chain, against the signed root
 * of size k. cordon_audit_verify() then reports 1..k-1 as pruned (not as a
 * gap) and still checks every later checkpoint. Appends a "retention"
 * record (reason "audit-log", count: records deleted). Needs
 * cordon_audit_setup() with a signer. Returns 0 (res.deleted 0 when nothing
 * was due), -EINVAL, -EBADMSG (the log does not verify up to the cut:
 * nothing deleted), -errno. */
struct cordon_audit_retention {
	uint64_t retain_usec;
	uint64_t retain_records;
};
struct cordon_audit_prune_result {
	uint64_t deleted;	 /* records deleted by this call */
	uint64_t pruned_through; /* records 1..this are gone (before and by this call) */
};
int cordon_audit_prune(struct cordon_db *db, const struct cordon_audit_retention *p,
		       struct cordon_audit_prune_result *ret);

/* Writes a checkpoint when N records or T seconds have passed since the last.
 * Returns like cordon_audit_checkpoint(). */
int cordon_audit_maybe_checkpoint(struct cordon_db *db);

enum cordon_audit_verdict {
	CORDON_AUDIT_PASS,
	CORDON_AUDIT_GAP,		 /* a sequence number is missing (seq = first missing) */
	CORDON_AUDIT_DUPLICATE,		 /* a sequence number appears twice (seq = it) */
	CORDON_AUDIT_BREAK,		 /* record seq does not chain to its predecessor, is out of order,
					  * is malformed, or a checkpoint's root does not match the records */
	CORDON_AUDIT_BAD_SIG,		 /* a checkpoint's signature does not verify with the key */
	CORDON_AUDIT_TRUNCATION,	 /* fewer records than a checkpoint (or the high-water mark) covered */
	CORDON_AUDIT_MISSING_CHECKPOINT, /* a "checkpoint" record (seq) has no signed checkpoint of
					  * that size: signed checkpoints were deleted */
};

struct cordon_audit_report {
	enum cordon_audit_verdict verdict;
	uint64_t seq;		 /* where the problem is (GAP/DUPLICATE/BREAK/TRUNCATION) */
	uint64_t first, last;	 /* records checked (PASS: the covered range) */
	uint64_t signed_through; /* records covered by the newest valid checkpoint */
	uint64_t pruned_through; /* records 1..this were deleted by retention (0: none) */
	uint64_t n_checkpoints;
	char message[200];
};

/* Verifies the whole log: chain, sequence, leaf hashes, every checkpoint's
 * signature (against v) and root. Returns 0 with *ret filled whatever the
 * verdict; -errno only when the database cannot be read. */
int cordon_audit_verify(struct cordon_db *db, const struct cordon_note_verifier *v, struct cordon_audit_report *ret);

/* "PASS: records 1..120, signed through 118, unsigned tail 119..120" etc. */
const char *cordon_audit_verdict_to_string(enum cordon_audit_verdict v);
void cordon_audit_report_format(const struct cordon_audit_report *r, char *buf, size_t size);
