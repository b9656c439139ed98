/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Internals shared by the broker library's modules (not installed, not for
 * the daemon). */

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "cleanup.h"
#include "db.h"

struct cordon_audit_state;

/* The calls the database makes into the audit module, which sits above it
 * (audit.c appends through db_prepare() and friends): registered with the
 * audit state by cordon_audit_setup() through db_set_audit(), so this module
 * never calls up by name. */
struct db_audit_ops {
	/* db_commit()/db_rollback() ended a transaction: promote or drop the
	 * audit module's in-memory state of it. */
	void (*tx_end)(struct cordon_db *db, bool committed);
	/* Frees the state (cordon_db_close(), or a later db_set_audit()). */
	void (*free)(struct cordon_audit_state *a);
};

#define DB_BATCH_RING 128

struct cordon_db {
	sqlite3 *sql;
	const struct cordon_clock *clock;
	char last_error[200];
	bool in_tx;
	/* The open transaction came from db_begin_relaxed(). */
	bool tx_relaxed;
	/* The connection is at synchronous=NORMAL (the last transaction was
	 * relaxed); db_begin() puts it back to FULL before its BEGIN. */
	bool sync_normal;
	unsigned faults;
	/* wal_limit_pages (0: SQLite's auto-checkpoint); the WAL's size in
	 * pages after the last commit, and whether it holds pages not yet
	 * copied back (the WAL hook sets it, cordon_db_wal_checkpoint() clears
	 * it when it copied everything). */
	unsigned wal_limit;
	unsigned wal_pages;
	bool wal_dirty;
	struct cordon_db_counters counters;
	/* Group commit (decide.c): the open transaction is a batch of relaxed
	 * decisions, numbered batch_id, that cordon_decide_batch_commit() or
	 * the next transaction's begin commits (db_batch_flush()). batch_done
	 * keeps the outcome of the last DB_BATCH_RING batches by id. */
	bool batch_open;
	uint64_t batch_id;
	struct db_batch_done {
		uint64_t id;
		int r;
	} batch_done[DB_BATCH_RING];
	/* decide.c's snapshot cache for the open batch (owned; freed with
	 * decide_cache_free on close). */
	void *decide_cache;
	void (*decide_cache_free)(void *p);
	struct cordon_audit_state *audit;     /* owned; NULL until cordon_audit_setup() */
	const struct db_audit_ops *audit_ops; /* non-NULL whenever audit is */
};

/* Installs the audit module's state and calls, freeing the state installed
 * before (if any). */
void db_set_audit(struct cordon_db *db, struct cordon_audit_state *a, const struct db_audit_ops *ops);

/* Prepares sql (one statement). Statements come from a per-connection cache
 * (parsing SQL dominated a read call's cost): a cached statement is handed
 * out reset and with its bindings cleared, and is returned to the cache by
 * db_stmt_release() — never finalise a statement from db_prepare() yourself.
 * Returns 0 or -errno with last_error set. */
int db_prepare(struct cordon_db *db, const char *sql, sqlite3_stmt **ret);

/* Gives a statement from db_prepare() back: reset and returned to the cache,
 * or finalised when it was not cached. NULL is a no-op. */
void db_stmt_release(sqlite3_stmt *st);

DEFINE_CLEANUP(db_stmt_releasep, sqlite3_stmt *, db_stmt_release)
#define _cleanup_stmt_ _cleanup_(db_stmt_releasep)

/* Records rc's message in db->last_error and returns cordon_db_errno(rc). */
int db_fail(struct cordon_db *db, int rc);

/* Sets last_error from a format and returns -error. */
int db_failf(struct cordon_db *db, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Steps a statement that returns no rows. Returns 0 or -errno. */
int db_step_done(struct cordon_db *db, sqlite3_stmt *st);

/* Steps once: 1 for a row, 0 for done, -errno. */
int db_step_row(struct cordon_db *db, sqlite3_stmt *st);

/* Bind helpers: text may be NULL (binds NULL). Return 0 or -errno. */
int db_bind_text(struct cordon_db *db, sqlite3_stmt *st, int idx, const char *s);
int db_bind_int64(struct cordon_db *db, sqlite3_stmt *st, int idx, int64_t v);
int db_bind_blob(struct cordon_db *db, sqlite3_stmt *st, int idx, const void *p, size_t n);

/* For "state IN (?first, ..., ?first+n-1)" over a table whose states are
 * 0..n-1: binds each state whose CORDON_STATE_BIT() is in states (every
 * state when states is 0), then -1 (which no row holds) for the rest. A
 * bound IN list keeps the state index usable and no number in the SQL. */
int db_bind_states(struct cordon_db *db, sqlite3_stmt *st, int first, unsigned n, uint32_t states);
/* Runs `sql`, a "SELECT count(*) ... WHERE state IN (?1 .. ?n)", with the
 * state set bound as db_bind_states() does. */
int db_count_in_states(struct cordon_db *db, const char *sql, unsigned n, uint32_t states, uint64_t *ret);

/* Transactions. db_begin() issues BEGIN IMMEDIATE (takes the write lock up
 * front so two writers never deadlock on upgrade); nesting is a programming
 * error (-EBUSY). db_commit() fails closed: on error it rolls back. */
int db_begin(struct cordon_db *db);
/* Like db_begin(), for a transaction whose commit may be lost to a power
 * failure or kernel crash, though never to a crash of this process: it runs
 * at synchronous=NORMAL, so COMMIT writes its WAL frames but does not
 * fdatasync them. WAL keeps the file consistent either way, and the WAL is
 * append-only, so the next db_begin() transaction's fsync (or SQLite's own
 * WAL checkpoint) makes this one durable too: a power failure loses at most
 * a tail of relaxed commits, never one that a later durable commit follows.
 * Only for transactions after which nothing irrevocable happens before the
 * next durable commit (docs/authorization.md, "Durability"). */
int db_begin_relaxed(struct cordon_db *db);
int db_commit(struct cordon_db *db);
void db_rollback(struct cordon_db *db);
/* Commits the open batch of decisions, if any, and records its outcome in
 * batch_done. Every begin, close and checkpoint calls it first, so a
 * durable transaction never starts while a batch is open: the batch
 * commits first, then the durable transaction (whose fsync covers it).
 * Returns 0 (also when no batch was open) or the commit's -errno. */
int db_batch_flush(struct cordon_db *db);

/* A scope guard: rolls back on scope exit unless committed. */
struct db_tx {
	struct cordon_db *db;
	bool open;
};
static inline void db_tx_cleanup(struct db_tx *t)
{
	if (t->open)
		db_rollback(t->db);
}
#define _cleanup_tx_ _cleanup_(db_tx_cleanup)
int db_tx_begin(struct cordon_db *db, struct db_tx *t);
int db_tx_begin_relaxed(struct cordon_db *db, struct db_tx *t);
int db_tx_commit(struct db_tx *t);

/* Meta table inside a transaction. */
int db_meta_get_tx(struct cordon_db *db, const char *key, int64_t *ret);
int db_meta_set_tx(struct cordon_db *db, const char *key, int64_t v);
int db_meta_add_tx(struct cordon_db *db, const char *key, int64_t delta, int64_t *ret_new);

/* A fresh random id "<prefix>_<32 hex>" in out (at least CORDON_ID_MAX bytes). */
#define CORDON_ID_MAX 48
void db_new_id(const char *prefix, char *out, size_t size);

/* Column text copied into a malloc'd string (NULL for SQL NULL); -ENOMEM. */
int db_column_strdup(sqlite3_stmt *st, int col, char **ret);
