/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "db.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db-private.h"
#include "db-schema.h"

int cordon_db_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EPERM;
	case SQLITE_INTERRUPT:
		return -EINTR;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return -EBADMSG;
	case SQLITE_TOOBIG:
		return -E2BIG;
	case SQLITE_CONSTRAINT:
		return -EEXIST;
	case SQLITE_MISMATCH:
	case SQLITE_RANGE:
	case SQLITE_FORMAT:
		return -EINVAL;
	case SQLITE_NOLFS:
		return -EFBIG;
	case SQLITE_MISUSE:
		return -EFAULT;
	case SQLITE_PROTOCOL:
	case SQLITE_IOERR:
	default:
		return -EIO;
	}
}

int db_failf(struct cordon_db *db, int error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(db->last_error, sizeof(db->last_error), fmt, ap);
	va_end(ap);
	return error > 0 ? -error : error;
}

int db_fail(struct cordon_db *db, int rc)
{
	int r = cordon_db_errno(rc);

	snprintf(db->last_error, sizeof(db->last_error), "sqlite: %s (%d)",
		 db->sql ? sqlite3_errmsg(db->sql) : sqlite3_errstr(rc), rc);
	return r < 0 ? r : -EIO;
}

const char *cordon_db_last_error(const struct cordon_db *db)
{
	return db ? db->last_error : "";
}

const struct cordon_clock *cordon_db_clock(const struct cordon_db *db)
{
	return db->clock;
}

uint64_t cordon_db_now(const struct cordon_db *db)
{
	return cordon_clock_now(db->clock);
}

/* The statement cache. Keyed by connection and SQL text; one process holds
 * few connections and a few hundred distinct statements, so a small table
 * with a hash per entry is enough. A mutex keeps it safe for tests that use
 * connections from several threads; cordond itself is single-threaded. */
#define STMT_CACHE_MAX 512

struct stmt_cache_entry {
	sqlite3 *handle;
	uint64_t hash;
	char *sql;
	sqlite3_stmt *st;
	bool in_use;
};

static struct stmt_cache_entry stmt_cache[STMT_CACHE_MAX];
static size_t stmt_cache_n;
static pthread_mutex_t stmt_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t sql_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

int db_prepare(struct cordon_db *db, const char *sql, sqlite3_stmt **ret)
{
	uint64_t h = sql_hash(sql);
	sqlite3_stmt *st = NULL;
	int rc;

	pthread_mutex_lock(&stmt_cache_lock);
	for (size_t i = 0; i < stmt_cache_n; i++) {
		struct stmt_cache_entry *e = &stmt_cache[i];

		if (!e->in_use && e->handle == db->sql && e->hash == h && strcmp(e->sql, sql) == 0) {
			e->in_use = true;
			pthread_mutex_unlock(&stmt_cache_lock);
			*ret = e->st;
			return 0;
		}
	}
	pthread_mutex_unlock(&stmt_cache_lock);

	rc = sqlite3_prepare_v3(db->sql, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(db, rc);

	pthread_mutex_lock(&stmt_cache_lock);
	if (stmt_cache_n < STMT_CACHE_MAX) {
		char *copy = strdup(sql);

		if (copy)
			stmt_cache[stmt_cache_n++] = (struct stmt_cache_entry){
				.handle = db->sql, .hash = h, .sql = copy, .st = st, .in_use = true
			};
	}
	pthread_mutex_unlock(&stmt_cache_lock);
	*ret = st;
	return 0;
}

void db_stmt_release(sqlite3_stmt *st)
{
	if (!st)
		return;
	pthread_mutex_lock(&stmt_cache_lock);
	for (size_t i = 0; i < stmt_cache_n; i++)
		if (stmt_cache[i].st == st) {
			/* Reset ends any read the statement holds open; cleared
			 * bindings keep one call's values out of the next. */
			(void)sqlite3_reset(st);
			(void)sqlite3_clear_bindings(st);
			stmt_cache[i].in_use = false;
			pthread_mutex_unlock(&stmt_cache_lock);
			return;
		}
	pthread_mutex_unlock(&stmt_cache_lock);
	(void)sqlite3_finalize(st);
}

/* Finalises every cached statement of a connection (before it closes). */
static void stmt_cache_drop(sqlite3 *handle)
{
	pthread_mutex_lock(&stmt_cache_lock);
	for (size_t i = 0; i < stmt_cache_n;) {
		if (stmt_cache[i].handle == handle) {
			(void)sqlite3_finalize(stmt_cache[i].st);
			free(stmt_cache[i].sql);
			stmt_cache[i] = stmt_cache[--stmt_cache_n];
		} else
			i++;
	}
	pthread_mutex_unlock(&stmt_cache_lock);
}

int db_step_done(struct cordon_db *db, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_DONE)
		return 0;
	if (rc == SQLITE_ROW)
		return db_failf(db, EINVAL, "statement returned a row where none was expected");
	return db_fail(db, rc);
}

int db_step_row(struct cordon_db *db, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return db_fail(db, rc);
}

int db_bind_text(struct cordon_db *db, sqlite3_stmt *st, int idx, const char *s)
{
	int rc = s ? sqlite3_bind_text(st, idx, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, idx);

	return rc == SQLITE_OK ? 0 : db_fail(db, rc);
}

int db_bind_int64(struct cordon_db *db, sqlite3_stmt *st, int idx, int64_t v)
{
	int rc = sqlite3_bind_int64(st, idx, v);

	return rc == SQLITE_OK ? 0 : db_fail(db, rc);
}

int db_bind_blob(struct cordon_db *db, sqlite3_stmt *st, int idx, const void *p, size_t n)
{
	int rc = p ? sqlite3_bind_blob64(st, idx, p, n, SQLITE_TRANSIENT) : sqlite3_bind_null(st, idx);

	return rc == SQLITE_OK ? 0 : db_fail(db, rc);
}

int db_bind_states(struct cordon_db *db, sqlite3_stmt *st, int first, unsigned n, uint32_t states)
{
	int idx = first, r;

	if (n == 0 || n > 32)
		return db_failf(db, EINVAL, "invalid state set");
	for (unsigned s = 0; s < n; s++)
		if (states == 0 || (states & CORDON_STATE_BIT(s))) {
			r = db_bind_int64(db, st, idx++, s);
			if (r < 0)
				return r;
		}
	/* No row is in state -1: fills the list without matching. */
	while (idx < first + (int)n) {
		r = db_bind_int64(db, st, idx++, -1);
		if (r < 0)
			return r;
	}
	return 0;
}

int db_count_in_states(struct cordon_db *db, const char *sql, unsigned n, uint32_t states, uint64_t *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, sql, &st);
	if (r < 0)
		return r;
	if ((r = db_bind_states(db, st, 1, n, states)) < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	*ret = r ? (uint64_t)sqlite3_column_int64(st, 0) : 0;
	return 0;
}

static int exec_simple(struct cordon_db *db, const char *sql)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, sql, &st);
	if (r < 0)
		return r;
	for (;;) {
		r = db_step_row(db, st);
		if (r <= 0)
			return r;
	}
}

/* PRAGMA synchronous takes effect when the statement is compiled, so it
 * goes through sqlite3_exec() (a fresh prepare), never the statement cache,
 * whose re-run of a cached copy would change nothing. Switched only when the
 * level differs from the last one set: a run of transactions at one level
 * pays nothing. */
static int set_sync_normal(struct cordon_db *db, bool normal)
{
	int rc;

	if (db->sync_normal == normal)
		return 0;
	rc = sqlite3_exec(db->sql, normal ? "PRAGMA synchronous = NORMAL" : "PRAGMA synchronous = FULL", NULL, NULL,
			  NULL);
	if (rc != SQLITE_OK)
		return db_fail(db, rc);
	db->sync_normal = normal;
	return 0;
}

int db_batch_flush(struct cordon_db *db)
{
	int r;

	if (!db->batch_open)
		return 0;
	db->batch_open = false;
	r = db_commit(db);
	db->batch_done[db->batch_id % DB_BATCH_RING] = (struct db_batch_done){ .id = db->batch_id, .r = r };
	return r;
}

static int begin(struct cordon_db *db, bool relaxed)
{
	int r;

	/* An open batch of decisions commits first (group commit, decide.c);
	 * its outcome is kept for the caller that waits on it. */
	(void)db_batch_flush(db);
	if (db->in_tx)
		return db_failf(db, EBUSY, "transaction already open (nested transactions are a bug)");
	/* A durable transaction never starts at NORMAL: if FULL cannot be set
	 * back, it does not start at all. A relaxed one that cannot go to
	 * NORMAL runs at FULL, which is only slower. */
	r = set_sync_normal(db, relaxed);
	if (r < 0 && !relaxed)
		return r;
	r = exec_simple(db, "BEGIN IMMEDIATE");
	if (r < 0)
		return r;
	db->in_tx = true;
	db->tx_relaxed = relaxed;
	return 0;
}

int db_begin(struct cordon_db *db)
{
	return begin(db, false);
}

int db_begin_relaxed(struct cordon_db *db)
{
	return begin(db, true);
}

void db_set_audit(struct cordon_db *db, struct cordon_audit_state *a, const struct db_audit_ops *ops)
{
	if (db->audit && db->audit_ops)
		db->audit_ops->free(db->audit);
	db->audit = a;
	db->audit_ops = a ? ops : NULL;
}

static void audit_tx_end(struct cordon_db *db, bool committed)
{
	if (db->audit && db->audit_ops)
		db->audit_ops->tx_end(db, committed);
}

void db_rollback(struct cordon_db *db)
{
	if (!db->in_tx)
		return;
	/* ROLLBACK can only fail when no transaction is active (SQLite already
	 * rolled back after an I/O error); either way none is open afterwards.
	 * Keep the message of the error that caused the rollback (say "database
	 * or disk is full"), not "cannot rollback - no transaction is active". */
	if (!sqlite3_get_autocommit(db->sql)) {
		char cause[sizeof(db->last_error)];

		memcpy(cause, db->last_error, sizeof(cause));
		(void)exec_simple(db, "ROLLBACK");
		memcpy(db->last_error, cause, sizeof(cause));
	}
	db->in_tx = false;
	db->tx_relaxed = false;
	audit_tx_end(db, false);
	db->counters.transactions_rolled_back++;
}

int db_commit(struct cordon_db *db)
{
	int r;

	if (!db->in_tx)
		return db_failf(db, EINVAL, "commit without a transaction");
	if (db->faults & CORDON_DB_FAULT_COMMIT) {
		db_rollback(db);
		return db_failf(db, EIO, "injected commit failure");
	}
	/* After some I/O errors SQLite rolls the transaction back by itself;
	 * committing "nothing" then would report success for lost work. */
	if (sqlite3_get_autocommit(db->sql)) {
		db->in_tx = false;
		db->tx_relaxed = false;
		audit_tx_end(db, false);
		db->counters.transactions_rolled_back++;
		return db_failf(db, EIO, "the transaction was rolled back by SQLite after an error");
	}
	r = exec_simple(db, "COMMIT");
	if (r < 0) {
		db_rollback(db);
		return r;
	}
	db->in_tx = false;
	db->tx_relaxed = false;
	audit_tx_end(db, true);
	db->counters.transactions_committed++;
	return 0;
}

int db_tx_begin(struct cordon_db *db, struct db_tx *t)
{
	int r = db_begin(db);

	t->db = db;
	t->open = r >= 0;
	return r;
}

int db_tx_begin_relaxed(struct cordon_db *db, struct db_tx *t)
{
	int r = db_begin_relaxed(db);

	t->db = db;
	t->open = r >= 0;
	return r;
}

int db_tx_commit(struct db_tx *t)
{
	t->open = false;
	return db_commit(t->db);
}

int db_meta_get_tx(struct cordon_db *db, const char *key, int64_t *ret)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, "SELECT value FROM meta WHERE key = ?1", &st);
	if (r < 0)
		return r;
	r = db_bind_text(db, st, 1, key);
	if (r < 0)
		return r;
	r = db_step_row(db, st);
	if (r < 0)
		return r;
	if (r == 0) {
		*ret = 0;
		return 0;
	}
	*ret = sqlite3_column_int64(st, 0);
	return 0;
}

int db_meta_set_tx(struct cordon_db *db, const char *key, int64_t v)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db,
		       "INSERT INTO meta(key, value) VALUES (?1, ?2) "
		       "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
		       &st);
	if (r < 0)
		return r;
	r = db_bind_text(db, st, 1, key);
	if (r >= 0)
		r = db_bind_int64(db, st, 2, v);
	if (r < 0)
		return r;
	return db_step_done(db, st);
}

int db_meta_add_tx(struct cordon_db *db, const char *key, int64_t delta, int64_t *ret_new)
{
	int64_t v;
	int r;

	r = db_meta_get_tx(db, key, &v);
	if (r < 0)
		return r;
	if ((delta > 0 && v > INT64_MAX - delta) || (delta < 0 && v < INT64_MIN - delta))
		return db_failf(db, EOVERFLOW, "meta counter '%s' would overflow", key);
	v += delta;
	r = db_meta_set_tx(db, key, v);
	if (r < 0)
		return r;
	if (ret_new)
		*ret_new = v;
	return 0;
}

int cordon_db_meta_get(struct cordon_db *db, const char *key, int64_t *ret)
{
	/* A single SELECT is its own (read) transaction in SQLite. */
	return db_meta_get_tx(db, key, ret);
}

int cordon_db_policy_epoch(struct cordon_db *db, uint64_t *ret)
{
	int64_t v;
	int r = db_meta_get_tx(db, "policy_epoch", &v);

	if (r < 0)
		return r;
	*ret = (uint64_t)v;
	return 0;
}

void db_new_id(const char *prefix, char *out, size_t size)
{
	uint8_t raw[16];
	char hex[sizeof(raw) * 2 + 1];

	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(hex, sizeof(hex), raw, sizeof(raw));
	snprintf(out, size, "%s_%s", prefix, hex);
}

int db_column_strdup(sqlite3_stmt *st, int col, char **ret)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	char *s;

	if (!t) {
		*ret = NULL;
		return 0;
	}
	s = strdup((const char *)t);
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

void cordon_db_get_counters(const struct cordon_db *db, struct cordon_db_counters *ret)
{
	*ret = db->counters;
}

/* Runs after every commit of this connection (SQLite's WAL hook, which
 * replaces its auto-checkpoint): nothing but bookkeeping, unless the WAL has
 * reached its bound, when this commit copies it back as SQLite's own hook
 * would have at 1000 pages. A failed checkpoint leaves the WAL as it was
 * and is retried after the next commit; the commit itself has happened, so
 * the hook always returns SQLITE_OK (as SQLite's own does). */
static int wal_hook(void *userdata, sqlite3 *sql, const char *name, int pages)
{
	struct cordon_db *db = userdata;
	int log = 0, copied = 0;

	db->wal_pages = pages > 0 ? (unsigned)pages : 0;
	db->wal_dirty = true;
	if (db->wal_pages < db->wal_limit)
		return SQLITE_OK;
	if (sqlite3_wal_checkpoint_v2(sql, name, SQLITE_CHECKPOINT_PASSIVE, &log, &copied) == SQLITE_OK &&
	    copied >= log)
		db->wal_dirty = false;
	db->counters.wal_checkpoints_in_commit++;
	return SQLITE_OK;
}

int cordon_db_wal_checkpoint(struct cordon_db *db, unsigned min_pages)
{
	int log = 0, copied = 0, rc;

	(void)db_batch_flush(db);
	if (!db->wal_limit || !db->wal_dirty || db->wal_pages < min_pages || db->in_tx)
		return 0;
	rc = sqlite3_wal_checkpoint_v2(db->sql, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &copied);
	if (rc != SQLITE_OK)
		return db_fail(db, rc);
	if (copied >= log)
		db->wal_dirty = false;
	db->counters.wal_checkpoints++;
	return 1;
}

void cordon_db_inject_faults(struct cordon_db *db, unsigned faults)
{
	db->faults = faults;
}

/* The database holds the broker's authority (grants, approvals, the audit
 * chain), so anything another user could have written or read is refused
 * rather than repaired: fail closed and tell the operator. */
int cordon_db_check_file(const char *path, struct cordon_diag *diag)
{
	_cleanup_close_ int fd = -EBADF;
	struct stat st;

	fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		return cordon_diag_set(diag, errno, "db", "cannot open '%s': %s", path, strerror(errno));
	}
	if (fstat(fd, &st) < 0)
		return cordon_diag_set(diag, errno, "db", "cannot stat '%s': %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return cordon_diag_set(diag, EPERM, "db", "'%s' is not a regular file (a symlink or device is refused)",
				       path);
	if (st.st_uid != geteuid())
		return cordon_diag_set(diag, EPERM, "db",
				       "'%s' is owned by uid %u, not by the broker (uid %u); refusing to use it", path,
				       (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 0077)
		return cordon_diag_set(diag, EPERM, "db",
				       "'%s' has mode %04o: group/other may access it; refusing to use it "
				       "(expected 0600)",
				       path, (unsigned)(st.st_mode & 07777));
	return 0;
}

static int check_parent_dir(const char *path, struct cordon_diag *diag)
{
	_cleanup_free_ char *copy = strdup(path);
	struct stat st;
	const char *dir;

	if (!copy)
		return -ENOMEM;
	dir = dirname(copy);
	if (stat(dir, &st) < 0)
		return cordon_diag_set(diag, errno, "db", "cannot stat directory '%s': %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return cordon_diag_set(diag, ENOTDIR, "db", "'%s' is not a directory", dir);
	/* Others who can write the directory can swap the -wal/-shm files. */
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return cordon_diag_set(diag, EPERM, "db",
				       "directory '%s' is owned by uid %u, neither the broker nor root", dir,
				       (unsigned)st.st_uid);
	if ((st.st_mode & 0022) && !(st.st_mode & S_ISVTX))
		return cordon_diag_set(diag, EPERM, "db", "directory '%s' is writable by group/other (mode %04o)", dir,
				       (unsigned)(st.st_mode & 07777));
	return 0;
}

static int check_all_files(const char *path, struct cordon_diag *diag)
{
	static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
	char buf[4096];
	int r;

	for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
		if ((size_t)snprintf(buf, sizeof(buf), "%s%s", path, suffixes[i]) >= sizeof(buf))
			return cordon_diag_set(diag, ENAMETOOLONG, "db", "database path too long");
		r = cordon_db_check_file(buf, diag);
		if (r == -ENOENT && i > 0)
			continue;
		if (r < 0)
			return r;
	}
	return 0;
}

static int create_private_file(const char *path, struct cordon_diag *diag)
{
	_cleanup_close_ int fd = -EBADF;

	/* O_EXCL: never adopt a file someone else raced into place; the mode
	 * is 0600 from the first instant, whatever the umask says. */
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			return 0;
		return cordon_diag_set(diag, errno, "db", "cannot create '%s': %s", path, strerror(errno));
	}
	if (fchmod(fd, 0600) < 0)
		return cordon_diag_set(diag, errno, "db", "cannot chmod '%s': %s", path, strerror(errno));
	return 0;
}

static int migrate(struct cordon_db *db, struct cordon_diag *diag)
{
	_cleanup_stmt_ sqlite3_stmt *vst = NULL;
	int64_t version;
	int r;

	r = db_begin(db);
	if (r < 0)
		return cordon_diag_set(diag, -r, "db", "migration: %s", db->last_error);
	r = db_prepare(db, "PRAGMA user_version", &vst);
	if (r >= 0)
		r = db_step_row(db, vst);
	if (r <= 0) {
		db_rollback(db);
		return cordon_diag_set(diag, r < 0 ? -r : EIO, "db", "reading user_version: %s", db->last_error);
	}
	version = sqlite3_column_int64(vst, 0);
	db_stmt_release(TAKE_PTR(vst));

	if (version < 0 || version > (int64_t)cordon_db_n_migrations) {
		db_rollback(db);
		return cordon_diag_set(diag, EPROTO, "db",
				       "database schema version %lld is newer than this broker knows (%u); refusing "
				       "to downgrade it",
				       (long long)version, cordon_db_n_migrations);
	}

	for (unsigned v = (unsigned)version; v < cordon_db_n_migrations; v++) {
		const char *sql = cordon_db_migrations[v];
		char pragma[64];

		/* A migration is a fixed script of several statements: prepare
		 * and run them one at a time from the tail pointer. */
		while (sql && *sql) {
			sqlite3_stmt *st = NULL;
			const char *tail = NULL;
			int rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, &tail);

			if (rc != SQLITE_OK) {
				r = db_fail(db, rc);
				db_rollback(db);
				return cordon_diag_set(diag, -r, "db", "migration %u: %s", v + 1, db->last_error);
			}
			if (st) {
				r = db_step_done(db, st);
				sqlite3_finalize(st);
				if (r < 0) {
					db_rollback(db);
					return cordon_diag_set(diag, -r, "db", "migration %u: %s", v + 1,
							       db->last_error);
				}
			}
			sql = tail;
		}
		/* PRAGMA takes no bound parameters; v is our own integer. */
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %u", v + 1);
		r = exec_simple(db, pragma);
		if (r < 0) {
			db_rollback(db);
			return cordon_diag_set(diag, -r, "db", "migration %u: %s", v + 1, db->last_error);
		}
	}
	r = db_commit(db);
	if (r < 0)
		return cordon_diag_set(diag, -r, "db", "migration commit: %s", db->last_error);
	return 0;
}

static int pragma_expect(struct cordon_db *db, const char *sql, const char *expect, struct cordon_diag *diag)
{
	_cleanup_stmt_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, sql, &st);
	if (r >= 0)
		r = db_step_row(db, st);
	if (r < 0)
		return cordon_diag_set(diag, -r, "db", "%s: %s", sql, db->last_error);
	if (expect) {
		const unsigned char *t = r > 0 ? sqlite3_column_text(st, 0) : NULL;
		if (!t || strcasecmp((const char *)t, expect) != 0)
			return cordon_diag_set(diag, EIO, "db", "%s: got '%s', need '%s'", sql,
					       t ? (const char *)t : "(none)", expect);
	}
	return 0;
}

int cordon_db_open(const char *path, const struct cordon_db_options *opts, struct cordon_db **ret,
		   struct cordon_diag *diag)
{
	struct cordon_db *db;
	int rc, r;

	if (!path || !*path)
		return cordon_diag_set(diag, EINVAL, "db", "no database path");
	if (sodium_init() < 0)
		return cordon_diag_set(diag, EIO, "db", "libsodium initialisation failed");

	r = check_parent_dir(path, diag);
	if (r < 0)
		return r;
	r = create_private_file(path, diag);
	if (r < 0)
		return r;
	r = check_all_files(path, diag);
	if (r < 0)
		return r;

	db = calloc(1, sizeof(*db));
	if (!db)
		return cordon_diag_set(diag, ENOMEM, "db", "out of memory");
	db->clock = opts && opts->clock ? opts->clock : &cordon_clock_real;

	rc = sqlite3_open_v2(
		path, &db->sql,
		SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_EXRESCODE, NULL);
	if (rc != SQLITE_OK) {
		r = db_fail(db, rc);
		cordon_diag_set(diag, -r, "db", "opening '%s': %s", path, db->last_error);
		cordon_db_close(db);
		return r;
	}
	(void)sqlite3_busy_timeout(db->sql, opts && opts->busy_timeout_ms > 0 ? opts->busy_timeout_ms : 5000);

	/* trusted_schema=OFF: a tampered schema cannot smuggle functions into
	 * triggers or views. secure_delete: freed pages are zeroed. */
	static const struct {
		const char *sql, *expect;
	} pragmas[] = {
		{ "PRAGMA journal_mode = WAL", "wal" },	 { "PRAGMA synchronous = FULL", NULL },
		{ "PRAGMA foreign_keys = ON", NULL },	 { "PRAGMA secure_delete = ON", "1" },
		{ "PRAGMA trusted_schema = OFF", NULL }, { "PRAGMA synchronous", "2" },
		{ "PRAGMA foreign_keys", "1" },
	};
	for (size_t i = 0; i < ELEMENTSOF(pragmas); i++) {
		r = pragma_expect(db, pragmas[i].sql, pragmas[i].expect, diag);
		if (r < 0) {
			cordon_db_close(db);
			return r;
		}
	}

	if (opts && opts->wal_limit_pages) {
		db->wal_limit = opts->wal_limit_pages;
		(void)sqlite3_wal_hook(db->sql, wal_hook, db);
	}

	/* SQLite creates -wal/-shm with the database file's mode; check them
	 * again now that they exist. */
	r = check_all_files(path, diag);
	if (r < 0) {
		cordon_db_close(db);
		return r;
	}

	r = migrate(db, diag);
	if (r < 0) {
		cordon_db_close(db);
		return r;
	}
	*ret = db;
	return 0;
}

void cordon_db_close(struct cordon_db *db)
{
	if (!db)
		return;
	(void)db_batch_flush(db);
	if (db->in_tx)
		db_rollback(db);
	db_set_audit(db, NULL, NULL);
	if (db->decide_cache && db->decide_cache_free)
		db->decide_cache_free(db->decide_cache);
	/* sqlite3_close_v2 defers the close until every statement is finalised;
	 * the cached ones go now, the rest are scope-bound, so this closes now. */
	stmt_cache_drop(db->sql);
	(void)sqlite3_close_v2(db->sql);
	free(db);
}

int cordon_db_temp_store_memory(struct cordon_db *db)
{
	int rc = sqlite3_exec(db->sql, "PRAGMA temp_store = MEMORY", NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : db_fail(db, rc);
}
