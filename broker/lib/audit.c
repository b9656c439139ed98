/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "audit.h"

#include <errno.h>
#include <jansson.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "authz.h"
#include "canon.h"
#include "crypto.h"
#include "db-private.h"
#include "merkle.h"
#include "hex-util.h"

#define AUDIT_RECORD_VERSION 1
#define BINDING_PREFIX_LEN   8

/* What this handle knows of the log: the Merkle state of records 1..size
 * and the row that ends it (its rowid and stored leaf hash), which is what
 * lets an append tell in O(1) whether the table still ends where this
 * handle last saw it. */
struct audit_head {
	struct cordon_merkle_stream ms;
	int64_t id;	  /* rowid of record ms.size; 0 when the log is empty */
	uint8_t leaf[32]; /* its leaf column; zeros when the log is empty */
};

struct cordon_audit_state {
	struct cordon_note_signer *signer;
	char origin[CORDON_CHECKPOINT_ORIGIN_MAX + 1];
	uint64_t every;
	uint64_t interval_usec;
	/* The Merkle state of committed records, and the one a transaction is
	 * building; the latter is promoted on commit and dropped on rollback so
	 * that memory never runs ahead of the database. It is a cache of the
	 * table, never the authority: another handle on the same file may have
	 * appended since, so every append first checks it against the table's
	 * tail inside its own transaction (sync_tx()), unless the data version
	 * shows nobody else committed (head_fresh()). */
	struct audit_head committed;
	struct audit_head pending;
	bool pending_valid;
	/* committed is the table's tail as of SQLite data version `version`
	 * (SQLITE_FCNTL_DATA_VERSION, read right after this handle's commit).
	 * A commit by another connection moves that version when this handle
	 * next begins a transaction, so an append whose write transaction still
	 * sees it skips re-reading the tail (head_fresh()). */
	bool fresh;
	unsigned version;
	bool in_checkpoint;
	/* The newest signed checkpoint (size, created_at) as of `committed`:
	 * valid only while the head is fresh (no other handle wrote since, so
	 * nobody signed one behind this handle's back), and dropped with any
	 * transaction that does not commit. Saves a query per append. */
	bool cp_valid;
	uint64_t cp_size, cp_time;
	/* A relaxed transaction's append found a checkpoint due and left it to
	 * audit_deferred_checkpoint() (append_and_maybe_checkpoint()). */
	bool checkpoint_deferred;
	bool when_idle; /* cordon_audit_options.checkpoint_when_idle */
	uint64_t since; /* setup time: the interval counts from here before the first checkpoint */
};

static void audit_state_free(struct cordon_audit_state *a)
{
	if (!a)
		return;
	cordon_note_signer_free(a->signer);
	sodium_memzero(a, sizeof(*a));
	free(a);
}

/* Called by db_commit()/db_rollback() through db_audit_ops: promotes or
 * drops the Merkle state the transaction built. */
static void audit_tx_end(struct cordon_db *db, bool committed)
{
	struct cordon_audit_state *a = db->audit;

	if (!a)
		return;
	/* Only a commit that went through sync_tx()/head_fresh() vouches for
	 * the tail; after any other commit the next append reads it again. */
	a->fresh = committed && a->pending_valid &&
		   sqlite3_file_control(db->sql, "main", SQLITE_FCNTL_DATA_VERSION, &a->version) == SQLITE_OK;
	if (!committed || !a->fresh)
		a->cp_valid = false;
	if (!a->pending_valid)
		return;
	if (committed)
		a->committed = a->pending;
	a->pending_valid = false;
}

static const struct db_audit_ops audit_ops = {
	.tx_end = audit_tx_end,
	.free = audit_state_free,
};

/* Whether this handle's Merkle state is known to end at the table's tail
 * without reading it: nobody committed since this handle's last commit
 * that synced it, and this is a write transaction (its snapshot is the
 * newest and nobody can append until it ends). A false "no" only costs
 * the full check. */
static bool head_fresh(struct cordon_db *db)
{
	struct cordon_audit_state *a = db->audit;
	unsigned v;

	return a && a->fresh && sqlite3_txn_state(db->sql, "main") == SQLITE_TXN_WRITE &&
	       sqlite3_file_control(db->sql, "main", SQLITE_FCNTL_DATA_VERSION, &v) == SQLITE_OK && v == a->version;
}

static struct audit_head *pending_head(struct cordon_audit_state *a)
{
	if (!a->pending_valid) {
		a->pending = a->committed;
		a->pending_valid = true;
	}
	return &a->pending;
}

struct vrec {
	uint64_t seq;	  /* claimed by the record; 0 when unparseable */
	uint64_t col_seq; /* the seq column */
	uint8_t leaf[32]; /* computed from the bytes */
	uint8_t prev[32];
	bool leaf_col_ok; /* stored leaf column equals the computed leaf */
	bool ok;	  /* parsed, canonical, has seq and prev */
	bool checkpoint;  /* a "checkpoint" record: a signed note of size seq must exist */
};

static bool parse_record(const void *buf, size_t len, struct vrec *v);

static int set_str(json_t *o, const char *k, const char *v)
{
	if (!v)
		return 0;
	return json_object_set_new(o, k, json_string(v)) < 0 ? -ENOMEM : 0;
}

static int set_int(json_t *o, const char *k, int64_t v)
{
	return json_object_set_new(o, k, json_integer(v)) < 0 ? -ENOMEM : 0;
}

static json_t *actor_json(const struct cordon_actor *a)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (!a) {
		json_object_set_new(o, "kind", json_string("system"));
		return o;
	}
	json_object_set_new(o, "kind", json_string(cordon_actor_kind_to_string(a->kind)));
	switch (a->kind) {
	case CORDON_ACTOR_OPERATOR:
		json_object_set_new(o, "uid", json_integer((json_int_t)a->uid));
		json_object_set_new(o, "channel", json_string(a->channel));
		break;
	case CORDON_ACTOR_SESSION:
		json_object_set_new(o, "session", json_string(a->session_id));
		break;
	case CORDON_ACTOR_SYSTEM:
		break;
	}
	return o;
}

/* Builds the canonical bytes of one record. Only the fields of the event
 * struct are representable, which is what keeps arguments out. */
static int record_encode(const struct cordon_audit_event *ev, uint64_t seq, uint64_t now, const uint8_t prev[static 32],
			 char **ret, size_t *ret_len)
{
	json_t *o = json_object();
	char tbuf[CORDON_TIME_STRING_MAX], hex[65];
	int r = 0;

	if (!o)
		return -ENOMEM;
	r |= set_int(o, "v", AUDIT_RECORD_VERSION);
	r |= set_int(o, "seq", (int64_t)seq);
	r |= set_str(o, "time", cordon_time_format(now, tbuf, sizeof(tbuf)));
	r |= set_str(o, "event", ev->event);
	if (json_object_set_new(o, "actor", actor_json(ev->actor)) < 0)
		r = -ENOMEM;
	r |= set_str(o, "session", ev->session);
	r |= set_str(o, "connector", ev->connector);
	r |= set_str(o, "tool", ev->tool);
	if (ev->tier >= 0)
		r |= set_str(o, "tier", cordon_risk_name((enum cordon_risk)ev->tier));
	r |= set_str(o, "decision", ev->decision);
	r |= set_str(o, "reason", ev->reason);
	r |= set_str(o, "state", ev->state);
	r |= set_str(o, "approval", ev->approval_id);
	r |= set_str(o, "action", ev->action_id);
	r |= set_str(o, "delegation", ev->delegation_id);
	if (ev->binding) {
		hex_encode(ev->binding, BINDING_PREFIX_LEN, hex);
		r |= set_str(o, "binding", hex);
	}
	r |= set_str(o, "fingerprint", ev->fingerprint);
	r |= set_str(o, "path", ev->path);
	r |= set_str(o, "access", ev->access);
	r |= set_str(o, "agent", ev->agent);
	if (ev->generation >= 0)
		r |= set_int(o, "generation", ev->generation);
	if (ev->count >= 0)
		r |= set_int(o, "count", ev->count);
	hex_encode(prev, 32, hex);
	r |= set_str(o, "prev", hex);
	if (r != 0) {
		json_decref(o);
		return -ENOMEM;
	}
	r = cordon_jcs_encode(o, ret, ret_len);
	json_decref(o);
	return r;
}

static int last_record(struct cordon_db *db, uint64_t *ret_seq, uint8_t ret_leaf[static 32], int64_t *ret_id)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int64_t meta_seq;
	int r;

	r = db_meta_get_tx(db, "audit_last_seq", &meta_seq);
	if (r < 0)
		return r;
	r = db_prepare(db, "SELECT seq, leaf, id FROM audit ORDER BY id DESC LIMIT 1", &st);
	if (r < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0) {
		if (meta_seq != 0)
			return db_failf(db, EBADMSG, "audit log is empty but %lld records were written: truncated",
					(long long)meta_seq);
		memset(ret_leaf, 0, 32);
		*ret_seq = 0;
		if (ret_id)
			*ret_id = 0;
		return 0;
	}
	/* The next seq follows the high-water mark in meta; a log whose last
	 * row disagrees has been truncated or tampered with, and appending to
	 * it would hide that. Fail closed: verify tells the operator where. */
	if (sqlite3_column_int64(st, 0) != meta_seq || sqlite3_column_bytes(st, 1) != 32)
		return db_failf(db, EBADMSG, "audit log tail (seq %lld) does not match its high-water mark %lld",
				(long long)sqlite3_column_int64(st, 0), (long long)meta_seq);
	memcpy(ret_leaf, sqlite3_column_blob(st, 1), 32);
	*ret_seq = (uint64_t)meta_seq;
	if (ret_id)
		*ret_id = sqlite3_column_int64(st, 2);
	return 0;
}

/* Brings this handle's Merkle state up to the table's tail (seq, leaf, id),
 * read inside the caller's write transaction, so nobody can append between
 * this check and the caller's INSERT. Records another handle appended since
 * this one last looked are folded in one by one, and each must chain: its
 * seq follows, its prev is the previous leaf, its stored leaf is the hash of
 * its bytes. Anything else (the row this state ends with changed or went
 * away, a record that does not chain) is tampering or corruption: -EBADMSG,
 * fail closed, and verify tells the operator where. */
static int sync_tx(struct cordon_db *db, uint64_t seq, const uint8_t leaf[static 32], int64_t id)
{
	struct audit_head *h = pending_head(db->audit), n;
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	if (h->ms.size == seq && h->id == id && memcmp(h->leaf, leaf, 32) == 0)
		return 0; /* the common case: nobody else wrote */
	if (h->ms.size > seq)
		return db_failf(db, EBADMSG, "audit log has %llu records but this handle has seen %llu: truncated",
				(unsigned long long)seq, (unsigned long long)h->ms.size);
	n = *h;
	if (n.ms.size > 0) {
		/* The row this state ends with must still be there, unchanged. */
		r = db_prepare(db, "SELECT seq, leaf FROM audit WHERE id = ?1", &st);
		if (r < 0)
			return r;
		if ((r = db_bind_int64(db, st, 1, n.id)) < 0)
			return r;
		r = db_step_row(db, st);
		if (r < 0)
			return r;
		if (r == 0 || (uint64_t)sqlite3_column_int64(st, 0) != n.ms.size || sqlite3_column_bytes(st, 1) != 32 ||
		    memcmp(sqlite3_column_blob(st, 1), n.leaf, 32) != 0)
			return db_failf(db, EBADMSG, "audit record %llu changed after this handle read it",
					(unsigned long long)n.ms.size);
		db_stmt_release(TAKE_PTR(st));
	}
	r = db_prepare(db, "SELECT id, seq, record, leaf FROM audit WHERE id > ?1 ORDER BY id", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_int64(db, st, 1, n.id)) < 0)
		return r;
	for (;;) {
		struct vrec v = {};
		const void *rec;
		size_t len;
		uint64_t want = n.ms.size + 1;

		r = db_step_row(db, st);
		if (r < 0)
			return r;
		if (r == 0)
			break;
		rec = sqlite3_column_blob(st, 2);
		len = (size_t)sqlite3_column_bytes(st, 2);
		if (!rec || !parse_record(rec, len, &v) || v.seq != want ||
		    (uint64_t)sqlite3_column_int64(st, 1) != want || memcmp(v.prev, n.leaf, 32) != 0)
			return db_failf(db, EBADMSG, "audit record %llu written by another handle does not chain",
					(unsigned long long)want);
		cordon_merkle_leaf_hash(rec, len, v.leaf);
		if (sqlite3_column_bytes(st, 3) != 32 || memcmp(sqlite3_column_blob(st, 3), v.leaf, 32) != 0)
			return db_failf(db, EBADMSG, "audit record %llu: stored hash does not match its bytes",
					(unsigned long long)want);
		cordon_merkle_stream_append(&n.ms, v.leaf);
		memcpy(n.leaf, v.leaf, 32);
		n.id = sqlite3_column_int64(st, 0);
	}
	if (n.ms.size != seq || n.id != id || memcmp(n.leaf, leaf, 32) != 0)
		return db_failf(db, EBADMSG, "audit log tail is seq %llu but its records chain only through %llu",
				(unsigned long long)seq, (unsigned long long)n.ms.size);
	*h = n;
	return 0;
}

static int checkpoint_tx(struct cordon_db *db);

/* A clock that steps backwards must not make every append a checkpoint. */
static bool interval_elapsed(struct cordon_db *db, uint64_t since)
{
	uint64_t now = cordon_db_now(db);

	return now >= since && now - since >= db->audit->interval_usec;
}

static int append_tx_impl(struct cordon_db *db, const struct cordon_audit_event *ev, uint64_t *ret_seq)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	_cleanup_free_ char *rec = NULL;
	uint8_t prev[32], leaf[32];
	size_t len;
	uint64_t seq;
	int64_t id;
	int r;

	if (!db->in_tx)
		return db_failf(db, EINVAL, "audit append outside a transaction");
	if (!ev || !ev->event)
		return db_failf(db, EINVAL, "audit event without a type");
	if (db->faults & CORDON_DB_FAULT_AUDIT_APPEND)
		return db_failf(db, EIO, "injected audit append failure");

	if (head_fresh(db)) {
		struct audit_head *h = pending_head(db->audit);

		seq = h->ms.size;
		memcpy(prev, h->leaf, 32);
	} else {
		if (db->audit)
			db->audit->cp_valid = false;
		r = last_record(db, &seq, prev, &id);
		if (r < 0)
			return r;
		if (db->audit) {
			r = sync_tx(db, seq, prev, id);
			if (r < 0)
				return r;
		}
	}
	seq++;
	r = record_encode(ev, seq, cordon_db_now(db), prev, &rec, &len);
	if (r < 0)
		return db_failf(db, -r, "audit record encoding failed");
	cordon_merkle_leaf_hash(rec, len, leaf);

	r = db_prepare(db, "INSERT INTO audit(seq, record, leaf) VALUES (?1, ?2, ?3)", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_int64(db, st, 1, (int64_t)seq)) < 0 || (r = db_bind_blob(db, st, 2, rec, len)) < 0 ||
	    (r = db_bind_blob(db, st, 3, leaf, sizeof(leaf))) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	r = db_meta_set_tx(db, "audit_last_seq", (int64_t)seq);
	if (r < 0)
		return r;
	if (db->audit) {
		struct audit_head *h = pending_head(db->audit);

		cordon_merkle_stream_append(&h->ms, leaf);
		memcpy(h->leaf, leaf, 32);
		h->id = sqlite3_last_insert_rowid(db->sql);
	}
	if (ret_seq)
		*ret_seq = seq;
	return 0;
}

static int last_checkpoint(struct cordon_db *db, uint64_t *ret_size, uint64_t *ret_time)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "SELECT size, created_at FROM checkpoints ORDER BY id DESC LIMIT 1", &st);
	if (r < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	*ret_size = r ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	*ret_time = r ? (uint64_t)sqlite3_column_int64(st, 1) : 0;
	return 0;
}

static int savepoint(struct cordon_db *db, const char *sql)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r = db_prepare(db, sql, &st);

	return r < 0 ? r : db_step_done(db, st);
}

static int append_and_maybe_checkpoint(struct cordon_db *db, const struct cordon_audit_event *ev)
{
	struct cordon_audit_state *a = db->audit;
	uint64_t seq, cp_size, cp_time;
	int r;

	r = append_tx_impl(db, ev, &seq);
	if (r < 0)
		return r;
	if (!a || !a->signer || a->in_checkpoint)
		return 0;
	if (a->cp_valid) {
		cp_size = a->cp_size;
		cp_time = a->cp_time;
	} else {
		r = last_checkpoint(db, &cp_size, &cp_time);
		if (r < 0)
			return r;
		a->cp_size = cp_size;
		a->cp_time = cp_time;
		a->cp_valid = true;
	}
	if (cp_time < a->since)
		cp_time = a->since;
	if (seq - cp_size >= a->every || interval_elapsed(db, cp_time)) {
		/* A signed checkpoint is a promise about records 1..seq that
		 * copies of it keep after they leave this host; it must never
		 * cover records a power failure could still take back. A relaxed
		 * transaction's records are not yet on disk, so the checkpoint
		 * waits for a durable transaction of its own, whose fsync
		 * covers them (the WAL is append-only). */
		if (db->tx_relaxed) {
			a->checkpoint_deferred = true;
			return 0;
		}
		return checkpoint_tx(db);
	}
	return 0;
}

/* An append is atomic inside the caller's transaction (a savepoint): a
 * failed append leaves neither a half-written record nor a moved Merkle
 * state behind, so a caller that may go on without it (read tier) keeps a
 * consistent log. */
int audit_append_tx(struct cordon_db *db, const struct cordon_audit_event *ev)
{
	struct audit_head saved;
	bool saved_valid = false;
	int r;

	if (!db->in_tx) {
		/* A SAVEPOINT outside a transaction would open one of its own. */
		db->counters.audit_append_failures++;
		return db_failf(db, EINVAL, "audit append outside a transaction");
	}
	if (db->audit) {
		saved = db->audit->pending;
		saved_valid = db->audit->pending_valid;
	}
	r = savepoint(db, "SAVEPOINT audit_append");
	if (r >= 0) {
		r = append_and_maybe_checkpoint(db, ev);
		if (r < 0)
			(void)savepoint(db, "ROLLBACK TO audit_append");
		if (savepoint(db, "RELEASE audit_append") < 0 && r >= 0)
			r = -EIO;
	}
	if (r < 0) {
		db->counters.audit_append_failures++;
		if (db->audit) {
			db->audit->pending = saved;
			db->audit->pending_valid = saved_valid;
			db->audit->cp_valid = false;
		}
	}
	return r;
}

int cordon_audit_append(struct cordon_db *db, const struct cordon_audit_event *ev)
{
	_cleanup_tx_ struct db_tx tx = {};
	int r;

	r = db_tx_begin(db, &tx);
	if (r < 0) {
		db->counters.audit_append_failures++;
		return r;
	}
	r = audit_append_tx(db, ev);
	if (r < 0)
		return r;
	r = db_tx_commit(&tx);
	if (r < 0)
		db->counters.audit_append_failures++;
	return r;
}

/* Appends a "checkpoint" record and signs the tree that includes it, so a
 * checkpoint taken at shutdown leaves no unsigned tail. */
static int checkpoint_tx(struct cordon_db *db)
{
	struct cordon_audit_state *a = db->audit;
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	_cleanup_free_ char *note = NULL;
	struct cordon_checkpoint cp = {};
	struct cordon_actor sys = cordon_actor_system();
	const struct cordon_merkle_stream *ms;
	uint64_t seq;
	size_t note_len;
	uint64_t now = cordon_db_now(db);
	int r;

	a->in_checkpoint = true;
	{
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_CHECKPOINT,
						 .actor = &sys };
		r = append_tx_impl(db, &ev, &seq);
	}
	a->in_checkpoint = false;
	if (r < 0)
		return r;
	/* append_tx_impl() synchronised the state with the table; a mismatch
	 * here is a bug, and signing would put the key's name to it. */
	ms = &pending_head(a)->ms;
	if (ms->size != seq)
		return db_failf(db, EBADMSG, "audit Merkle state covers %llu records but the log has %llu",
				(unsigned long long)ms->size, (unsigned long long)seq);
	snprintf(cp.origin, sizeof(cp.origin), "%s", a->origin);
	cp.size = seq;
	cordon_merkle_stream_root(ms, cp.root);
	r = cordon_checkpoint_sign(a->signer, &cp, &note, &note_len);
	if (r < 0)
		return db_failf(db, -r, "signing checkpoint failed");
	r = db_prepare(db, "INSERT INTO checkpoints(size, root, note, created_at) VALUES (?1, ?2, ?3, ?4)", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_int64(db, st, 1, (int64_t)cp.size)) < 0 ||
	    (r = db_bind_blob(db, st, 2, cp.root, sizeof(cp.root))) < 0 ||
	    (r = db_bind_blob(db, st, 3, note, note_len)) < 0 || (r = db_bind_int64(db, st, 4, (int64_t)now)) < 0)
		return r;
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	/* Kept only if this transaction commits (audit_tx_end()). */
	a->cp_size = cp.size;
	a->cp_time = now;
	a->cp_valid = true;
	return 0;
}

static int checkpoint(struct cordon_db *db, bool only_if_due)
{
	_cleanup_tx_ struct db_tx tx = {};
	struct cordon_audit_state *a = db->audit;
	uint64_t seq, cp_size, cp_time;
	uint8_t leaf[32];
	int r;

	if (!a || !a->signer)
		return 0;
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = last_record(db, &seq, leaf, NULL);
	if (r < 0)
		return r;
	r = last_checkpoint(db, &cp_size, &cp_time);
	if (r < 0)
		return r;
	if (seq == cp_size)
		return 0;
	if (cp_time < a->since)
		cp_time = a->since;
	if (only_if_due && seq - cp_size < a->every && !interval_elapsed(db, cp_time))
		return 0;
	r = checkpoint_tx(db);
	if (r < 0) {
		db->counters.audit_append_failures++;
		return r;
	}
	r = db_tx_commit(&tx);
	return r < 0 ? r : 1;
}

int cordon_audit_checkpoint(struct cordon_db *db)
{
	return checkpoint(db, false);
}

int cordon_audit_maybe_checkpoint(struct cordon_db *db)
{
	return checkpoint(db, true);
}

int audit_deferred_checkpoint(struct cordon_db *db)
{
	int r;

	(void)db_batch_flush(db);
	if (db->in_tx)
		return db_failf(db, EBUSY, "deferred checkpoint inside a transaction");
	if (!db->audit || !db->audit->checkpoint_deferred)
		return 0;
	r = checkpoint(db, true);
	if (r >= 0)
		db->audit->checkpoint_deferred = false;
	return r;
}

int audit_after_relaxed_commit(struct cordon_db *db)
{
	if (db->audit && db->audit->when_idle)
		return 0;
	return audit_deferred_checkpoint(db);
}

int cordon_audit_checkpoint_pending(struct cordon_db *db)
{
	return audit_deferred_checkpoint(db);
}

/* ---- retention ---------------------------------------------------------- */

/* The Merkle state of the pruned prefix (records 1..through), from the
 * audit_pruned row; an empty stream when nothing was pruned. Returns 0 or
 * -errno (-EBADMSG for a row whose stack does not fit its size). */
static int pruned_state(struct cordon_db *db, struct cordon_merkle_stream *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct cordon_merkle_stream ms;
	uint64_t through;
	int r;

	cordon_merkle_stream_init(&ms);
	r = db_prepare(db, "SELECT through, stack FROM audit_pruned WHERE id = 1", &st);
	if (r < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r > 0) {
		through = (uint64_t)sqlite3_column_int64(st, 0);
		if (through == 0 || (size_t)sqlite3_column_bytes(st, 1) != (size_t)__builtin_popcountll(through) * 32)
			return db_failf(db, EBADMSG, "audit_pruned: the stored Merkle state does not fit %llu records",
					(unsigned long long)through);
		ms.size = through;
		ms.depth = (unsigned)__builtin_popcountll(through);
		memcpy(ms.stack, sqlite3_column_blob(st, 1), (size_t)ms.depth * 32);
	}
	*ret = ms;
	return 0;
}

int cordon_audit_setup(struct cordon_db *db, const struct cordon_audit_options *o, struct cordon_note_signer *signer,
		       struct cordon_diag *diag)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct cordon_audit_state *a;
	int r;

	if (!o || !o->origin || !cordon_note_name_valid(o->origin) ||
	    strlen(o->origin) > CORDON_CHECKPOINT_ORIGIN_MAX) {
		cordon_note_signer_free(signer);
		return cordon_diag_set(diag, EINVAL, "audit", "invalid checkpoint origin");
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		cordon_note_signer_free(signer);
		return cordon_diag_set(diag, ENOMEM, "audit", "out of memory");
	}
	a->signer = signer;
	snprintf(a->origin, sizeof(a->origin), "%s", o->origin);
	a->every = o->checkpoint_every ? o->checkpoint_every : 256;
	a->when_idle = o->checkpoint_when_idle;
	a->interval_usec = o->checkpoint_interval_usec ? o->checkpoint_interval_usec : 300 * CORDON_USEC_PER_SEC;
	a->since = cordon_db_now(db);
	/* Records pruned by retention are represented by their Merkle state. */
	r = pruned_state(db, &a->committed.ms);
	if (r < 0)
		goto fail;

	/* Rebuild from the record bytes, not the leaf column: what is signed
	 * next must be the hash of what is stored. The head is the last row's
	 * leaf column, which is what the next append chains to. */
	r = db_prepare(db, "SELECT record, id, leaf FROM audit ORDER BY id", &st);
	if (r < 0)
		goto fail;
	for (;;) {
		r = db_step_row(db, st);
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		cordon_merkle_stream_append_record(&a->committed.ms, sqlite3_column_blob(st, 0),
						   (size_t)sqlite3_column_bytes(st, 0));
		a->committed.id = sqlite3_column_int64(st, 1);
		memset(a->committed.leaf, 0, 32);
		if (sqlite3_column_bytes(st, 2) == 32)
			memcpy(a->committed.leaf, sqlite3_column_blob(st, 2), 32);
	}
	db_set_audit(db, a, &audit_ops);
	return 0;
fail:
	audit_state_free(a);
	return cordon_diag_set(diag, -r, "audit", "loading the audit log: %s", db->last_error);
}

int cordon_audit_setup_key_file(struct cordon_db *db, const struct cordon_audit_options *o, const char *key_path,
				const char *key_name, struct cordon_note_verifier *ret_verifier,
				struct cordon_diag *diag)
{
	struct cordon_note_signer *s = NULL;
	struct cordon_note_verifier v;
	int r;

	r = cordon_note_signer_load_or_create(key_path, key_name, &s, NULL, diag);
	if (r < 0)
		return r;
	cordon_note_signer_verifier(s, &v);
	r = cordon_audit_setup(db, o, s, diag);
	if (r < 0)
		return r;
	if (ret_verifier)
		*ret_verifier = v;
	return 0;
}

/* ---- verify ---------------------------------------------------------------- */

static bool parse_record(const void *buf, size_t len, struct vrec *v)
{
	json_t *o, *s, *p;
	_cleanup_free_ char *again = NULL;
	size_t again_len;
	bool ok = false;

	o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	if (!o)
		return false;
	s = json_object_get(o, "seq");
	p = json_object_get(o, "prev");
	if (json_is_integer(s) && json_integer_value(s) > 0 && json_is_string(p) && json_string_length(p) == 64 &&
	    sodium_hex2bin(v->prev, 32, json_string_value(p), 64, NULL, NULL, NULL) == 0 &&
	    cordon_jcs_encode(o, &again, &again_len) == 0 && again_len == len && memcmp(again, buf, len) == 0) {
		v->seq = (uint64_t)json_integer_value(s);
		v->checkpoint = json_is_string(json_object_get(o, "event")) &&
				strcmp(json_string_value(json_object_get(o, "event")), CORDON_AUDIT_CHECKPOINT) == 0;
		ok = true;
	}
	json_decref(o);
	return ok;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(struct cordon_audit_report *r, enum cordon_audit_verdict v, uint64_t seq, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void report(struct cordon_audit_report *r, enum cordon_audit_verdict v, uint64_t seq, const char *fmt, ...)
{
	va_list ap;

	r->verdict = v;
	r->seq = seq;
	va_start(ap, fmt);
	vsnprintf(r->message, sizeof(r->message), fmt, ap);
	va_end(ap);
}

struct vcp {
	uint64_t size;
	uint8_t root[32];
};

static int cmp_vcp(const void *a, const void *b)
{
	return cmp_u64(&((const struct vcp *)a)->size, &((const struct vcp *)b)->size);
}

int cordon_audit_verify(struct cordon_db *db, const struct cordon_note_verifier *v, struct cordon_audit_report *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	_cleanup_free_ struct vrec *recs = NULL;
	_cleanup_free_ uint64_t *sorted = NULL;
	_cleanup_free_ struct vcp *cps = NULL;
	struct cordon_audit_report rep = {};
	struct cordon_merkle_stream base;
	size_t n = 0, cap = 0, n_cps = 0, cps_cap = 0;
	uint64_t expected, n_ok, pruned;
	uint8_t prev[32] = {};
	int64_t high;
	int r;

	/* Records 1..pruned were deleted by retention (cordon_audit_prune()):
	 * the log starts at pruned + 1, and the stored Merkle state of the
	 * deleted records stands in for them. That state is vouched for by the
	 * signed checkpoint of size pruned + 1, which must exist (below). */
	r = pruned_state(db, &base);
	if (r == -EBADMSG) {
		report(&rep, CORDON_AUDIT_BREAK, 1, "%s", db->last_error);
		goto done;
	}
	if (r < 0)
		return r;
	pruned = base.size;
	expected = pruned + 1;
	rep.pruned_through = pruned;

	r = db_prepare(db, "SELECT seq, record, leaf FROM audit ORDER BY id", &st);
	if (r < 0)
		return r;
	for (;;) {
		r = db_step_row(db, st);
		if (r < 0)
			return r;
		if (r == 0)
			break;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct vrec *nr = reallocarray(recs, ncap, sizeof(*recs));
			if (!nr)
				return -ENOMEM;
			recs = nr;
			cap = ncap;
		}
		struct vrec *x = &recs[n++];
		const void *blob = sqlite3_column_blob(st, 1);
		size_t len = (size_t)sqlite3_column_bytes(st, 1);

		memset(x, 0, sizeof(*x));
		x->col_seq = (uint64_t)sqlite3_column_int64(st, 0);
		cordon_merkle_leaf_hash(blob ? blob : "", len, x->leaf);
		x->leaf_col_ok =
			sqlite3_column_bytes(st, 2) == 32 && memcmp(sqlite3_column_blob(st, 2), x->leaf, 32) == 0;
		x->ok = blob && parse_record(blob, len, x);
	}
	db_stmt_release(TAKE_PTR(st));

	sorted = calloc(n ? n : 1, sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		sorted[i] = recs[i].ok ? recs[i].seq : 0;
	qsort(sorted, n, sizeof(*sorted), cmp_u64);

	rep.verdict = CORDON_AUDIT_PASS;
	for (size_t i = 0; i < n; i++) {
		struct vrec *x = &recs[i];

		if (!x->ok) {
			report(&rep, CORDON_AUDIT_BREAK, expected,
			       "record at position %zu (expected seq %llu) is malformed", i + 1,
			       (unsigned long long)expected);
			goto done;
		}
		if (x->seq == expected) {
			/* The first kept record after a prune chains to a deleted
			 * one: its prev is vouched for by the checkpoint root. */
			bool chained = pruned > 0 && x->seq == pruned + 1;

			if (!chained && sodium_memcmp(x->prev, prev, 32) != 0) {
				report(&rep, CORDON_AUDIT_BREAK, x->seq,
				       "record %llu: prev does not match the hash of record %llu",
				       (unsigned long long)x->seq, (unsigned long long)x->seq - 1);
				goto done;
			}
			if (!x->leaf_col_ok || x->col_seq != x->seq) {
				report(&rep, CORDON_AUDIT_BREAK, x->seq,
				       "record %llu: stored hash or seq does not match the record bytes",
				       (unsigned long long)x->seq);
				goto done;
			}
			memcpy(prev, x->leaf, 32);
			expected++;
			continue;
		}
		if (x->seq < expected) {
			report(&rep, CORDON_AUDIT_DUPLICATE, x->seq, "record %llu appears again after record %llu",
			       (unsigned long long)x->seq, (unsigned long long)expected - 1);
			goto done;
		}
		/* x->seq > expected: missing, or stored out of order. */
		if (bsearch(&expected, sorted, n, sizeof(*sorted), cmp_u64))
			report(&rep, CORDON_AUDIT_BREAK, expected,
			       "record %llu is out of order (record %llu precedes it)", (unsigned long long)expected,
			       (unsigned long long)x->seq);
		else
			report(&rep, CORDON_AUDIT_GAP, expected, "records %llu..%llu are missing",
			       (unsigned long long)expected, (unsigned long long)x->seq - 1);
		goto done;
	}
	n_ok = expected - 1;
	rep.first = n_ok > pruned ? pruned + 1 : 0;
	rep.last = n_ok;

	/* Checkpoints: every signature must verify; then coverage and roots. */
	r = db_prepare(db, "SELECT note FROM checkpoints ORDER BY id", &st);
	if (r < 0)
		return r;
	for (;;) {
		struct cordon_checkpoint cp;
		struct cordon_diag d = {};

		r = db_step_row(db, st);
		if (r < 0)
			return r;
		if (r == 0)
			break;
		rep.n_checkpoints++;
		if (!v) {
			report(&rep, CORDON_AUDIT_BAD_SIG, 0, "no verifier key given for %llu checkpoint(s)",
			       (unsigned long long)rep.n_checkpoints);
			goto done;
		}
		r = cordon_checkpoint_verify((const char *)sqlite3_column_blob(st, 0),
					     (size_t)sqlite3_column_bytes(st, 0), v,
					     db->audit ? db->audit->origin : NULL, &cp, &d);
		if (r < 0) {
			report(&rep, CORDON_AUDIT_BAD_SIG, 0, "checkpoint %llu does not verify: %s",
			       (unsigned long long)rep.n_checkpoints, d.message[0] ? d.message : strerror(-r));
			goto done;
		}
		if (n_cps == cps_cap) {
			size_t ncap = cps_cap ? cps_cap * 2 : 16;
			struct vcp *nc = reallocarray(cps, ncap, sizeof(*cps));
			if (!nc)
				return -ENOMEM;
			cps = nc;
			cps_cap = ncap;
		}
		cps[n_cps].size = cp.size;
		memcpy(cps[n_cps].root, cp.root, 32);
		n_cps++;
	}
	db_stmt_release(TAKE_PTR(st));

	r = cordon_db_meta_get(db, "audit_last_seq", &high);
	if (r < 0)
		return r;
	if (n_cps > 1)
		qsort(cps, n_cps, sizeof(*cps), cmp_vcp);
	if (n_cps > 0 && cps[n_cps - 1].size > n_ok) {
		report(&rep, CORDON_AUDIT_TRUNCATION, n_ok + 1,
		       "a checkpoint covers %llu records but only %llu are present",
		       (unsigned long long)cps[n_cps - 1].size, (unsigned long long)n_ok);
		goto done;
	}
	if (high > 0 && (uint64_t)high > n_ok) {
		report(&rep, CORDON_AUDIT_TRUNCATION, n_ok + 1, "%lld records were written but only %llu are present",
		       (long long)high, (unsigned long long)n_ok);
		goto done;
	}
	/* Every "checkpoint" record is written in the transaction that stores
	 * the signed note of the tree ending with it (checkpoint_tx), and
	 * neither is ever deleted. A checkpoint record without its note means
	 * signed checkpoints were removed, which is what someone without the
	 * key does before rewriting and re-chaining the records they covered. */
	for (size_t i = 0; i < n; i++) {
		struct vcp key = { .size = recs[i].seq };

		if (!recs[i].checkpoint)
			continue;
		if (n_cps == 0 || !bsearch(&key, cps, n_cps, sizeof(*cps), cmp_vcp)) {
			report(&rep, CORDON_AUDIT_MISSING_CHECKPOINT, recs[i].seq,
			       "record %llu is a checkpoint record but its signed checkpoint (size %llu) is missing",
			       (unsigned long long)recs[i].seq, (unsigned long long)recs[i].seq);
			goto done;
		}
	}
	{
		struct cordon_merkle_stream ms = base;
		size_t c = 0;
		bool vouched = pruned == 0;

		/* Checkpoints of pruned records: their signatures verified above,
		 * their roots cannot be recomputed any more. */
		while (c < n_cps && cps[c].size < ms.size)
			c++;
		for (size_t i = 0; i <= n && c < n_cps; i++) {
			while (c < n_cps && cps[c].size == ms.size) {
				uint8_t root[32];

				cordon_merkle_stream_root(&ms, root);
				if (sodium_memcmp(root, cps[c].root, 32) != 0) {
					report(&rep, CORDON_AUDIT_BREAK, cps[c].size,
					       "records 1..%llu do not match the signed checkpoint of that size",
					       (unsigned long long)cps[c].size);
					goto done;
				}
				rep.signed_through = cps[c].size;
				vouched |= cps[c].size == pruned + 1;
				c++;
			}
			if (i < n)
				cordon_merkle_stream_append(&ms, recs[i].leaf);
		}
		if (!vouched) {
			report(&rep, CORDON_AUDIT_BREAK, pruned + 1,
			       "records 1..%llu were pruned but no signed checkpoint of size %llu vouches for the "
			       "records kept",
			       (unsigned long long)pruned, (unsigned long long)pruned + 1);
			goto done;
		}
	}
	{
		char p[64] = "";

		if (pruned > 0)
			snprintf(p, sizeof(p), " (1..%llu pruned by retention)", (unsigned long long)pruned);
		if (rep.signed_through < n_ok)
			snprintf(rep.message, sizeof(rep.message),
				 "records %llu..%llu%s, signed through %llu, unsigned tail %llu..%llu",
				 (unsigned long long)rep.first, (unsigned long long)rep.last, p,
				 (unsigned long long)rep.signed_through, (unsigned long long)rep.signed_through + 1,
				 (unsigned long long)n_ok);
		else
			snprintf(rep.message, sizeof(rep.message),
				 "records %llu..%llu%s, signed through %llu, no unsigned tail",
				 (unsigned long long)rep.first, (unsigned long long)rep.last, p,
				 (unsigned long long)rep.signed_through);
	}
done:
	*ret = rep;
	return 0;
}

const char *cordon_audit_verdict_to_string(enum cordon_audit_verdict v)
{
	switch (v) {
	case CORDON_AUDIT_PASS:
		return "PASS";
	case CORDON_AUDIT_GAP:
		return "GAP";
	case CORDON_AUDIT_DUPLICATE:
		return "DUPLICATE";
	case CORDON_AUDIT_BREAK:
		return "BREAK";
	case CORDON_AUDIT_BAD_SIG:
		return "BAD-SIG";
	case CORDON_AUDIT_TRUNCATION:
		return "TRUNCATION";
	case CORDON_AUDIT_MISSING_CHECKPOINT:
		return "MISSING-CHECKPOINT";
	}
	return "INVALID";
}

void cordon_audit_report_format(const struct cordon_audit_report *r, char *buf, size_t size)
{
	switch (r->verdict) {
	case CORDON_AUDIT_PASS:
	case CORDON_AUDIT_BAD_SIG:
		snprintf(buf, size, "%s: %s", cordon_audit_verdict_to_string(r->verdict), r->message);
		break;
	default:
		snprintf(buf, size, "%s at seq %llu: %s", cordon_audit_verdict_to_string(r->verdict),
			 (unsigned long long)r->seq, r->message);
	}
}

int cordon_audit_position(struct cordon_db *db, int64_t *ret_last_seq, int64_t *ret_cp_size, int64_t *ret_cp_time)
{
	uint64_t size, time;
	int64_t seq = 0;
	int r;

	r = cordon_db_meta_get(db, "audit_last_seq", &seq);
	if (r < 0 && r != -ENOENT)
		return r;
	r = last_checkpoint(db, &size, &time);
	if (r < 0)
		return r;
	*ret_last_seq = seq;
	*ret_cp_size = (int64_t)size;
	*ret_cp_time = (int64_t)time;
	return 0;
}

int cordon_audit_tail(struct cordon_db *db, uint64_t count, json_t **ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	json_t *arr = json_array();
	int r;

	if (!arr)
		return -ENOMEM;
	r = db_prepare(db, "SELECT record FROM audit ORDER BY id DESC LIMIT ?1", &st);
	if (r >= 0)
		r = db_bind_int64(db, st, 1, count > INT64_MAX ? INT64_MAX : (int64_t)count);
	while (r >= 0 && (r = db_step_row(db, st)) > 0) {
		const void *b = sqlite3_column_blob(st, 0);
		size_t n = (size_t)sqlite3_column_bytes(st, 0);
		json_t *rec = NULL;

		/* Records are JCS; one that does not parse is shown as text
		 * (cordon_audit_verify() is what judges it). */
		if (cordon_canon_decode(b, n, NULL, &rec, NULL) < 0)
			rec = json_stringn_nocheck(b, n);
		if (!rec || json_array_insert_new(arr, 0, rec) < 0)
			r = -ENOMEM;
	}
	if (r < 0) {
		json_decref(arr);
		return r;
	}
	*ret = arr;
	return 0;
}

/* ---- export ---------------------------------------------------------------- */

/* One record as an export line's object: seq, time, event, actor, the
 * remaining members under "fields", prev and hash (hex leaf hash). A record
 * that is not valid JCS is exported as {"seq", "malformed": true, "raw",
 * "hash"} with seq from the table (verify is what judges it). */
static json_t *export_object(uint64_t col_seq, const void *rec, size_t len)
{
	static const char *const top[] = { "seq", "time", "event", "actor", "prev" };
	json_t *in = NULL, *out = NULL, *fields = NULL, *v;
	uint8_t leaf[32];
	char hex[65];
	const char *k;

	cordon_merkle_leaf_hash(rec ? rec : "", len, leaf);
	hex_encode(leaf, 32, hex);
	if (!rec || cordon_canon_decode(rec, len, NULL, &in, NULL) < 0 || !json_is_object(in)) {
		json_decref(in);
		return json_pack("{s:I, s:b, s:s%, s:s}", "seq", (json_int_t)col_seq, "malformed", 1, "raw",
				 rec ? (const char *)rec : "", rec ? len : 0, "hash", hex);
	}
	out = json_object();
	fields = json_object();
	if (!out || !fields)
		goto fail;
	for (size_t i = 0; i < ELEMENTSOF(top); i++)
		if ((v = json_object_get(in, top[i])) && json_object_set(out, top[i], v) < 0)
			goto fail;
	json_object_foreach(in, k, v)
	{
		bool is_top = strcmp(k, "v") == 0;

		for (size_t i = 0; i < ELEMENTSOF(top) && !is_top; i++)
			is_top = strcmp(k, top[i]) == 0;
		if (!is_top && json_object_set(fields, k, v) < 0)
			goto fail;
	}
	if (json_object_set_new(out, "fields", TAKE_PTR(fields)) < 0 ||
	    json_object_set_new(out, "hash", json_string(hex)) < 0)
		goto fail;
	json_decref(in);
	return out;
fail:
	json_decref(in);
	json_decref(out);
	json_decref(fields);
	return NULL;
}

int cordon_audit_export(struct cordon_db *db, const struct cordon_audit_export_query *q, json_t **ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	_cleanup_(json_decrefp) json_t *records = json_array();
	char since[CORDON_TIME_STRING_MAX], until[CORDON_TIME_STRING_MAX];
	uint64_t next = q->after_seq, scanned = 0, limit, scan_max;
	int64_t last = 0;
	bool end = false;
	int r;

	if (!records)
		return -ENOMEM;
	limit = q->limit ? q->limit : CORDON_AUDIT_EXPORT_PAGE;
	if (limit > CORDON_AUDIT_EXPORT_PAGE)
		limit = CORDON_AUDIT_EXPORT_PAGE;
	/* Records skipped by --since still cost a read: bound the scan so one
	 * request never holds the database for long; the caller resumes at
	 * next_seq. */
	scan_max = limit * 16;
	/* Record times are cordon_time_format() strings, which sort as the
	 * times they name: filtering compares strings. */
	if (q->since_usec)
		cordon_time_format(q->since_usec, since, sizeof(since));
	if (q->until_usec)
		cordon_time_format(q->until_usec, until, sizeof(until));
	r = cordon_db_meta_get(db, "audit_last_seq", &last);
	if (r < 0 && r != -ENOENT)
		return r;
	r = db_prepare(db, "SELECT seq, record FROM audit WHERE seq > ?1 ORDER BY seq LIMIT ?2", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_int64(db, st, 1, q->after_seq > INT64_MAX ? INT64_MAX : (int64_t)q->after_seq)) < 0 ||
	    (r = db_bind_int64(db, st, 2, (int64_t)scan_max)) < 0)
		return r;
	while (json_array_size(records) < limit && (r = db_step_row(db, st)) > 0) {
		uint64_t seq = (uint64_t)sqlite3_column_int64(st, 0);
		const void *rec = sqlite3_column_blob(st, 1);
		size_t len = (size_t)sqlite3_column_bytes(st, 1);
		json_t *o = export_object(seq, rec, len);
		const char *t;

		scanned++;
		if (!o)
			return -ENOMEM;
		t = json_string_value(json_object_get(o, "time"));
		/* Times only grow along the log (but for a clock stepped back):
		 * the first record past --until ends the export. */
		if (q->until_usec && t && strcmp(t, until) > 0) {
			json_decref(o);
			end = true;
			break;
		}
		next = seq;
		if (q->since_usec && (!t || strcmp(t, since) < 0)) {
			json_decref(o);
			continue;
		}
		if (json_array_append_new(records, o) < 0)
			return -ENOMEM;
	}
	if (r < 0)
		return r;
	*ret = json_pack("{s:O, s:I, s:I, s:b}", "records", records, "next_seq", (json_int_t)next, "last_seq",
			 (json_int_t)last, "end", end);
	(void)scanned;
	return *ret ? 0 : -ENOMEM;
}

/* ---- retention (pruning) ------------------------------------------------- */

/* The highest seq s such that every kept record 1..s (after the pruned
 * prefix) is older than cutoff; the walk stops at the first newer one. */
static int older_than(struct cordon_db *db, uint64_t from, uint64_t cutoff, uint64_t *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	char c[CORDON_TIME_STRING_MAX];
	uint64_t s = from;
	int r;

	cordon_time_format(cutoff, c, sizeof(c));
	r = db_prepare(db, "SELECT seq, record FROM audit WHERE seq > ?1 ORDER BY seq", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_int64(db, st, 1, (int64_t)from)) < 0)
		return r;
	while ((r = db_step_row(db, st)) > 0) {
		json_t *o = NULL;
		const char *t;
		bool old;

		if (cordon_canon_decode(sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1), NULL, &o,
					NULL) < 0)
			break; /* a malformed record is verify's business: never pruned past */
		t = json_string_value(json_object_get(o, "time"));
		old = t && strcmp(t, c) < 0;
		json_decref(o);
		if (!old)
			break;
		s = (uint64_t)sqlite3_column_int64(st, 0);
	}
	if (r < 0)
		return r;
	*ret = s;
	return 0;
}

int cordon_audit_prune(struct cordon_db *db, const struct cordon_audit_retention *p,
		       struct cordon_audit_prune_result *ret)
{
	_cleanup_tx_ struct db_tx tx = {};
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	struct cordon_audit_state *a = db->audit;
	struct cordon_audit_prune_result res = {};
	struct cordon_merkle_stream ms;
	struct cordon_note_verifier v;
	struct cordon_checkpoint cp;
	struct cordon_diag d = {};
	struct cordon_actor sys = cordon_actor_system();
	uint64_t limit = 0, k, expect;
	int64_t last;
	uint8_t prev[32] = {}, root[32] = {};
	int r;

	if (!p || (!p->retain_usec && !p->retain_records))
		return db_failf(db, EINVAL, "no retention policy");
	if (!a || !a->signer)
		return db_failf(db, EINVAL, "audit retention needs the signing key (cordon_audit_setup)");
	cordon_note_signer_verifier(a->signer, &v);
	r = db_tx_begin(db, &tx);
	if (r < 0)
		return r;
	r = pruned_state(db, &ms);
	if (r < 0)
		return r;
	r = db_meta_get_tx(db, "audit_last_seq", &last);
	if (r < 0)
		return r;
	res.pruned_through = ms.size;
	/* What each limit lets go; a record goes when any limit says so. */
	if (p->retain_records && (uint64_t)last > p->retain_records)
		limit = (uint64_t)last - p->retain_records;
	if (p->retain_usec) {
		uint64_t now = cordon_db_now(db), s;

		r = older_than(db, ms.size, now > p->retain_usec ? now - p->retain_usec : 0, &s);
		if (r < 0)
			return r;
		if (s > limit)
			limit = s;
	}
	/* Only ever up to a signed checkpoint: records 1..k-1 go, record k (a
	 * "checkpoint" record) stays, and the note of size k, which is kept,
	 * vouches for the Merkle state stored in their place. */
	r = db_prepare(db, "SELECT note FROM checkpoints WHERE size > ?1 AND size <= ?2 ORDER BY size DESC LIMIT 1",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_int64(db, st, 1, (int64_t)ms.size + 1)) < 0 ||
	    (r = db_bind_int64(db, st, 2, (int64_t)limit + 1)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r <= 0) {
		if (r == 0 && ret)
			*ret = res;
		return r; /* nothing to prune (the transaction rolls back) */
	}
	r = cordon_checkpoint_verify((const char *)sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), &v,
				     a->origin, &cp, &d);
	if (r < 0)
		return db_failf(db, EBADMSG, "audit retention: a signed checkpoint does not verify (%s); not pruning",
				d.message);
	db_stmt_release(TAKE_PTR(st));
	k = cp.size;

	/* The Merkle state of records 1..k-1 from the stored state and the
	 * records, each chained to the one before, and checked against the
	 * signed root of 1..k before anything is deleted. */
	r = db_prepare(db, "SELECT seq, record, leaf FROM audit WHERE seq > ?1 AND seq <= ?2 ORDER BY id", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_int64(db, st, 1, (int64_t)ms.size)) < 0 || (r = db_bind_int64(db, st, 2, (int64_t)k)) < 0)
		return r;
	expect = ms.size + 1;
	while ((r = db_step_row(db, st)) > 0) {
		struct vrec x = {};
		const void *rec = sqlite3_column_blob(st, 1);
		size_t len = (size_t)sqlite3_column_bytes(st, 1);

		if (!rec || !parse_record(rec, len, &x) || x.seq != expect ||
		    (uint64_t)sqlite3_column_int64(st, 0) != expect ||
		    (expect > res.pruned_through + 1 && memcmp(x.prev, prev, 32) != 0))
			return db_failf(db, EBADMSG,
					"audit retention: record %llu does not chain; not pruning (run "
					"`cordonctl audit verify`)",
					(unsigned long long)expect);
		cordon_merkle_leaf_hash(rec, len, x.leaf);
		memcpy(prev, x.leaf, 32);
		if (expect == k) {
			struct cordon_merkle_stream full = ms;

			cordon_merkle_stream_append(&full, x.leaf);
			cordon_merkle_stream_root(&full, root);
		} else
			cordon_merkle_stream_append(&ms, x.leaf);
		expect++;
	}
	if (r < 0)
		return r;
	db_stmt_release(TAKE_PTR(st));
	if (expect != k + 1 || sodium_memcmp(root, cp.root, 32) != 0)
		return db_failf(db, EBADMSG,
				"audit retention: records 1..%llu do not match their signed checkpoint; "
				"not pruning (run `cordonctl audit verify`)",
				(unsigned long long)k);

	r = db_prepare(db, "DELETE FROM audit WHERE seq < ?1", &st);
	if (r < 0)
		return r;
	if ((r = db_bind_int64(db, st, 1, (int64_t)k)) < 0 || (r = db_step_done(db, st)) < 0)
		return r;
	res.deleted = (uint64_t)sqlite3_changes(db->sql);
	db_stmt_release(TAKE_PTR(st));
	r = db_prepare(db,
		       "INSERT INTO audit_pruned(id, through, stack, pruned_at) VALUES (1, ?1, ?2, ?3) "
		       "ON CONFLICT(id) DO UPDATE SET through = ?1, stack = ?2, pruned_at = ?3",
		       &st);
	if (r < 0)
		return r;
	if ((r = db_bind_int64(db, st, 1, (int64_t)ms.size)) < 0 ||
	    (r = db_bind_blob(db, st, 2, ms.stack, (size_t)ms.depth * 32)) < 0 ||
	    (r = db_bind_int64(db, st, 3, (int64_t)cordon_db_now(db))) < 0 || (r = db_step_done(db, st)) < 0)
		return r;
	res.pruned_through = ms.size;
	{
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_RETENTION,
						 .actor = &sys, .reason = "audit-log", .count = (int64_t)res.deleted };

		r = audit_append_tx(db, &ev);
		if (r < 0)
			return r;
	}
	r = db_tx_commit(&tx);
	if (r < 0)
		return r;
	if (ret)
		*ret = res;
	return 0;
}
