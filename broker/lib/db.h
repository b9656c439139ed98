/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The broker's state: one SQLite database that only the broker opens.
 *
 * - The file is created with mode 0600 (O_CREAT|O_EXCL before SQLite sees it);
 *   opening a database, -wal or -shm file that another user owns, that is
 *   group/world accessible, that is not a regular file, or that lives in a
 *   directory others can write fails closed with a message naming the file.
 * - WAL, foreign_keys=ON, synchronous=FULL, secure_delete=ON,
 *   trusted_schema=OFF, a busy timeout; the schema is migrated forward by
 *   PRAGMA user_version and a newer schema than this build knows is refused.
 * - Every statement is prepared and bound; no value is ever spliced into SQL.
 * - State changes run in short BEGIN IMMEDIATE transactions. No connector I/O,
 *   no external command and no wait for a human ever happens while one is
 *   open: callers commit, then dispatch.
 *
 * A handle is used by one thread at a time (the daemon's event loop); the
 * transaction state lives in the handle.
 *
 * Functions return >= 0 or -errno; SQLite result codes are converted by
 * cordon_db_errno() and the SQLite message is kept in cordon_db_last_error(). */

#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "diag.h"

struct cordon_db;

#define CORDON_DB_SCHEMA_VERSION 4

struct cordon_db_options {
	const struct cordon_clock *clock; /* NULL: the real clock */
	int busy_timeout_ms;		  /* 0: 5000 */
	/* 0: SQLite copies the WAL back into the database itself, inside the
	 * commit that takes the WAL past 1000 pages (its auto-checkpoint).
	 * Otherwise the caller does it from its idle time with
	 * cordon_db_wal_checkpoint(), and a commit runs a checkpoint itself
	 * only once the WAL holds this many pages: the bound on the WAL. */
	unsigned wal_limit_pages;
};

/* Opens (creating when absent) the database at path. Returns 0 and writes
 * *ret, or -errno and fills diag (step "db"). */
int cordon_db_open(const char *path, const struct cordon_db_options *opts, struct cordon_db **ret,
		   struct cordon_diag *diag);

/* Closes the handle (a no-op for NULL). Does not checkpoint the audit log:
 * call cordon_broker_shutdown()/cordon_audit_checkpoint() first. */
void cordon_db_close(struct cordon_db *db);

static inline void cordon_db_closep(struct cordon_db **db)
{
	if (*db)
		cordon_db_close(*db);
}

/* Converts an SQLite primary or extended result code to -errno (never 0 for
 * an error code; 0 for SQLITE_OK/ROW/DONE). */
int cordon_db_errno(int sqlite_rc);

/* The last SQLite or validation message for this handle ("" when none). */
const char *cordon_db_last_error(const struct cordon_db *db);

const struct cordon_clock *cordon_db_clock(const struct cordon_db *db);
uint64_t cordon_db_now(const struct cordon_db *db);

/* Checks that path (when it exists) is a regular file owned by the effective
 * uid with no group/other permission bits. Returns 0, -ENOENT when absent,
 * or -EPERM/-errno with diag filled. Exposed for tests and for the key file. */
int cordon_db_check_file(const char *path, struct cordon_diag *diag);

/* Keeps SQLite's temporary storage (statement journals, sorter spills) in
 * memory, for a process whose sandbox has no temp directory. Returns 0 or
 * -errno (cordon_db_last_error() says why). */
int cordon_db_temp_store_memory(struct cordon_db *db);

/* Integer counters and settings in the meta table. */
int cordon_db_meta_get(struct cordon_db *db, const char *key, int64_t *ret);

/* The current policy epoch: bumped by every grant or risk-policy change and by
 * revoke-all; approvals bound to an older epoch no longer verify. */
int cordon_db_policy_epoch(struct cordon_db *db, uint64_t *ret);

/* Which rows a listing returns (the operator surface's lists of approvals,
 * delegations and actions). A zeroed filter lists every row, oldest first. */
struct cordon_list_filter {
	uint32_t states;       /* CORDON_STATE_BIT(s) of each state wanted; 0: every state */
	const char *connector; /* NULL: every connector */
	bool newest_first;     /* by creation time, then id; false: oldest first */
	uint32_t limit;	       /* at most this many rows; 0: no limit */
};
#define CORDON_STATE_BIT(s) (UINT32_C(1) << (s))

/* In-memory counters for /metrics. */
struct cordon_db_counters {
	uint64_t audit_append_failures; /* appends that failed; each made its operation fail closed */
	uint64_t transactions_committed;
	uint64_t transactions_rolled_back;
	uint64_t wal_checkpoints;	    /* by cordon_db_wal_checkpoint() */
	uint64_t wal_checkpoints_in_commit; /* by a commit, the WAL at its bound */
};
void cordon_db_get_counters(const struct cordon_db *db, struct cordon_db_counters *ret);

/* For a handle opened with wal_limit_pages: copies the WAL back into the
 * database when at least min_pages of it (1: any) are not yet copied.
 * PASSIVE: it never waits for a reader or a writer, so it copies what it
 * can; it fsyncs the WAL first, so every commit before it, relaxed ones
 * too, is then durable. Returns 1 when it ran, 0 when none was due (or a
 * transaction is open), -errno. */
int cordon_db_wal_checkpoint(struct cordon_db *db, unsigned min_pages);

/* Online backup (db-backup.c): SQLite's backup API copies the database as
 * of one commit (after committing an open group-commit batch) into a
 * scratch file beside it ("<path>-backup", 0600, removed after), whose
 * bytes then go to out_fd: a new, empty regular file open for writing,
 * which is fsync'd. Writes *ret_bytes. Returns 0 or -errno with diag. */
int cordon_db_backup_to_fd(struct cordon_db *db, int out_fd, uint64_t *ret_bytes, struct cordon_diag *diag);

/* Test seam: faults to inject. Production code never sets these. */
enum cordon_db_fault {
	CORDON_DB_FAULT_AUDIT_APPEND = 1 << 0, /* every audit append fails with -EIO */
	CORDON_DB_FAULT_COMMIT = 1 << 1,       /* every commit fails with -EIO (and rolls back) */
};
void cordon_db_inject_faults(struct cordon_db *db, unsigned faults);
