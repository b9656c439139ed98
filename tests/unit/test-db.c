/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The broker database: private creation, fail-closed permission checks,
 * forward migrations, pragmas, the SQLite-to-errno adapter, busy handling. */

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "broker-test.h"
#include "db-private.h"
#include "db-schema.h"

struct fx {
	char *dir, *path;
	struct cordon_virtual_clock clock;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->dir = cordon_test_mkdtemp("db");
	assert_true(asprintf(&f->path, "%s/state.db", f->dir) > 0);
	cordon_virtual_clock_init(&f->clock, T0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	assert_int_equal(cordon_test_rm_rf(f->dir), 0);
	free(f->dir);
	free(f->path);
	free(f);
	return 0;
}

static int open_db(struct fx *f, struct cordon_db **ret, struct cordon_diag *d)
{
	struct cordon_db_options o = { .clock = &f->clock.clock, .busy_timeout_ms = 100 };

	return cordon_db_open(f->path, &o, ret, d);
}

static void test_created_with_mode_0600_whatever_the_umask(void **state)
{
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	struct stat st;
	mode_t old = umask(0);

	assert_int_equal(open_db(f, &db, NULL), 0);
	umask(old);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	{
		char wal[4200];
		snprintf(wal, sizeof(wal), "%s-wal", f->path);
		assert_int_equal(stat(wal, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0600);
	}
	cordon_db_close(db);
}

static void test_group_readable_database_refused(void **state)
{
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	struct cordon_diag d = {};

	assert_int_equal(open_db(f, &db, NULL), 0);
	cordon_db_close(db);
	assert_int_equal(chmod(f->path, 0640), 0);
	db = NULL;
	assert_int_equal(open_db(f, &db, &d), -EPERM);
	assert_null(db);
	assert_non_null(strstr(d.message, f->path));
	assert_non_null(strstr(d.message, "0640"));
}

static void test_world_readable_wal_refused(void **state)
{
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	struct cordon_diag d = {};
	char wal[4200];
	int fd;

	assert_int_equal(open_db(f, &db, NULL), 0);
	cordon_db_close(db);
	snprintf(wal, sizeof(wal), "%s-wal", f->path);
	fd = open(wal, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(wal, 0604), 0);
	assert_int_equal(open_db(f, &db, &d), -EPERM);
	assert_non_null(strstr(d.message, "-wal"));
}

static void test_foreign_owner_refused(void **state)
{
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	struct cordon_diag d = {};

	if (geteuid() != 0) {
		/* chown to another uid needs root; the mode checks above run anywhere. */
		print_message("not root: covered by the mode tests only\n");
		skip();
	}
	assert_int_equal(open_db(f, &db, NULL), 0);
	cordon_db_close(db);
	assert_int_equal(chown(f->path, 65534, 65534), 0);
	assert_int_equal(open_db(f, &db, &d), -EPERM);
	assert_non_null(strstr(d.message, "owned by uid 65534"));
}

static void test_symlink_refused(void **state)
{
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	struct cordon_diag d = {};
	char target[4200];

	snprintf(target, sizeof(target), "%s/real.db", f->dir);
	assert_int_equal(close(open(target, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
	assert_int_equal(symlink(target, f->path), 0);
	/* Opened with O_PATH|O_NOFOLLOW: the link itself, not a regular file. */
	assert_int_equal(open_db(f, &db, &d), -EPERM);
	assert_null(db);
}

static void test_world_writable_directory_refused(void **state)
{
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	struct cordon_diag d = {};

	assert_int_equal(chmod(f->dir, 0777), 0);
	assert_int_equal(open_db(f, &db, &d), -EPERM);
	assert_non_null(strstr(d.message, "writable by group/other"));
	assert_int_equal(chmod(f->dir, 0700), 0);
}

static int64_t raw_int(const char *path, const char *sql)
{
	sqlite3 *s = NULL;
	sqlite3_stmt *st = NULL;
	int64_t v;

	assert_int_equal(sqlite3_open_v2(path, &s, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(s, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(s);
	return v;
}

static void test_schema_migrated_and_wal(void **state)
{
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	uint64_t epoch;

	assert_int_equal(open_db(f, &db, NULL), 0);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), CORDON_DB_SCHEMA_VERSION);
	assert_int_equal(raw_int(f->path,
				 "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
				 "('connectors','tool_inventory','grants','risk_policy','approvals',"
				 "'delegations','idempotency','actions','locks','audit','checkpoints','meta')"),
			 12);
	assert_int_equal(cordon_db_policy_epoch(db, &epoch), 0);
	assert_int_equal(epoch, 1);
	cordon_db_close(db);
	/* journal_mode=WAL is persistent in the file. */
	{
		sqlite3 *s = NULL;
		sqlite3_stmt *st = NULL;
		assert_int_equal(sqlite3_open_v2(f->path, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(s, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
		sqlite3_finalize(st);
		sqlite3_close(s);
	}
}

static void test_reopen_keeps_state(void **state)
{
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	struct cordon_actor sys = cordon_actor_system();
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_BROKER_START, .actor = &sys };
	int64_t seq;

	assert_int_equal(open_db(f, &db, NULL), 0);
	assert_int_equal(cordon_audit_append(db, &ev), 0);
	cordon_db_close(db);
	assert_int_equal(open_db(f, &db, NULL), 0);
	assert_int_equal(cordon_db_meta_get(db, "audit_last_seq", &seq), 0);
	assert_int_equal(seq, 1);
	cordon_db_close(db);
}

static void test_newer_schema_refused(void **state)
{
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	struct cordon_diag d = {};
	sqlite3 *s = NULL;

	assert_int_equal(open_db(f, &db, NULL), 0);
	cordon_db_close(db);
	assert_int_equal(sqlite3_open_v2(f->path, &s, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(s, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(s);
	db = NULL;
	assert_int_equal(open_db(f, &db, &d), -EPROTO);
	assert_non_null(strstr(d.message, "newer"));
}

/* Migration 2 (issue 11, finding 5) scopes idempotency identities to a
 * subject and keeps existing databases working: a row made by a gateway
 * session ("gw-<n>-u<uid>-<random>") moves to that uid's scope, any other
 * row to its session's scope; nothing is lost and the result stays. */
static void test_migration_2_scopes_idempotency_rows(void **state)
{
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	struct cordon_diag d = {};
	sqlite3 *s = NULL;
	int fd = open(f->path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sqlite3_open_v2(f->path, &s, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(s, "PRAGMA journal_mode = WAL", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(s, cordon_db_migrations[0], NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(s,
			     "PRAGMA user_version = 1;"
			     "INSERT INTO connectors(id, default_risk, approval_ttl_sec, installed_at) "
			     "VALUES ('fs', 2, 60, 1);"
			     "INSERT INTO actions(id, session, connector, tool, tier, replay, request_hash, state, "
			     "created_at, updated_at) VALUES "
			     "('ac_1', 'gw-7-u1000-0123456789abcdef', 'fs', 'w', 2, 1, zeroblob(32), 2, 1, 1),"
			     "('ac_2', 's9', 'fs', 'w', 2, 1, zeroblob(32), 2, 1, 1),"
			     "('ac_3', 'gw-8-uxx-0123', 'fs', 'w', 2, 1, zeroblob(32), 2, 1, 1);"
			     "INSERT INTO idempotency(connector, key, request_hash, action_id, result, created_at) "
			     "VALUES ('fs', 'k1', zeroblob(32), 'ac_1', x'0102', 1),"
			     "('fs', 'k2', zeroblob(32), 'ac_2', NULL, 1),"
			     "('fs', 'k3', zeroblob(32), 'ac_3', NULL, 1);",
			     NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(s);

	assert_int_equal(open_db(f, &db, &d), 0);
	cordon_db_close(db);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), CORDON_DB_SCHEMA_VERSION);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM idempotency"), 3);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM idempotency WHERE key = 'k1' AND subject = 'uid:1000' "
					  "AND action_id = 'ac_1' AND result = x'0102'"),
			 1);
	assert_int_equal(
		raw_int(f->path, "SELECT count(*) FROM idempotency WHERE key = 'k2' AND subject = 'session:s9'"), 1);
	/* Not a well-formed gateway id: the session's own scope, never a uid. */
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM idempotency WHERE key = 'k3' AND "
					  "subject = 'session:gw-8-uxx-0123'"),
			 1);
	/* The key is now (connector, subject, key): one key, two subjects. */
	assert_int_equal(sqlite3_open_v2(f->path, &s, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(s,
			     "INSERT INTO idempotency(connector, subject, key, request_hash, action_id, created_at) "
			     "VALUES ('fs', 'uid:0', 'k1', zeroblob(32), 'ac_2', 2)",
			     NULL, NULL, NULL),
		SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(s,
			     "INSERT INTO idempotency(connector, subject, key, request_hash, action_id, created_at) "
			     "VALUES ('fs', 'uid:0', 'k1', zeroblob(32), 'ac_3', 3)",
			     NULL, NULL, NULL),
		SQLITE_CONSTRAINT);
	sqlite3_close(s);
}

static void test_not_a_database_refused(void **state)
{
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	struct cordon_diag d = {};
	int fd = open(f->path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "this is not sqlite, just text long enough to be a header......", 62), 62);
	close(fd);
	assert_int_equal(open_db(f, &db, &d), -EBADMSG);
	assert_null(db);
}

static void test_sqlite_codes_map_to_errno(void **state)
{
	(void)state;
	assert_int_equal(cordon_db_errno(SQLITE_OK), 0);
	assert_int_equal(cordon_db_errno(SQLITE_DONE), 0);
	assert_int_equal(cordon_db_errno(SQLITE_BUSY), -EBUSY);
	assert_int_equal(cordon_db_errno(SQLITE_BUSY_SNAPSHOT), -EBUSY);
	assert_int_equal(cordon_db_errno(SQLITE_LOCKED), -EBUSY);
	assert_int_equal(cordon_db_errno(SQLITE_NOMEM), -ENOMEM);
	assert_int_equal(cordon_db_errno(SQLITE_READONLY), -EROFS);
	assert_int_equal(cordon_db_errno(SQLITE_FULL), -ENOSPC);
	assert_int_equal(cordon_db_errno(SQLITE_CORRUPT), -EBADMSG);
	assert_int_equal(cordon_db_errno(SQLITE_NOTADB), -EBADMSG);
	assert_int_equal(cordon_db_errno(SQLITE_CONSTRAINT_PRIMARYKEY), -EEXIST);
	assert_int_equal(cordon_db_errno(SQLITE_IOERR_FSYNC), -EIO);
	assert_int_equal(cordon_db_errno(SQLITE_TOOBIG), -E2BIG);
	assert_int_equal(cordon_db_errno(SQLITE_PERM), -EPERM);
	assert_int_equal(cordon_db_errno(SQLITE_CANTOPEN), -ENOENT);
	assert_int_equal(cordon_db_errno(SQLITE_MISUSE), -EFAULT);
}

/* Another writer holds the lock: a state change waits the busy timeout and
 * then fails with -EBUSY (no partial write), and works once the lock is gone. */
static void test_busy_writer_gives_ebusy(void **state)
{
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	struct cordon_actor sys = cordon_actor_system();
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_BROKER_START, .actor = &sys };
	sqlite3 *s = NULL;

	assert_int_equal(open_db(f, &db, NULL), 0);
	assert_int_equal(sqlite3_open_v2(f->path, &s, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(s, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(cordon_audit_append(db, &ev), -EBUSY);
	assert_non_null(strstr(cordon_db_last_error(db), "locked"));
	assert_int_equal(sqlite3_exec(s, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(s);
	assert_int_equal(cordon_audit_append(db, &ev), 0);
	cordon_db_close(db);
}

static void test_check_file_missing_is_enoent(void **state)
{
	struct fx *f = *state;

	assert_int_equal(cordon_db_check_file(f->path, NULL), -ENOENT);
}

/* cordond keeps SQLite's temporary storage in memory (its sandbox has no
 * temp directory); the database stays usable afterwards. */
static void test_temp_store_memory(void **state)
{
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	uint64_t before = 0, after = 0;

	assert_int_equal(open_db(f, &db, NULL), 0);
	assert_int_equal(cordon_db_policy_epoch(db, &before), 0);
	assert_int_equal(cordon_db_temp_store_memory(db), 0);
	assert_int_equal(cordon_db_policy_epoch(db, &after), 0);
	assert_int_equal(after, before);
	cordon_db_close(db);
}

/* The connection's synchronous level, read with a fresh prepare: the
 * pragma's value is fixed when the statement is compiled. */
static int sync_level(struct cordon_db *db)
{
	sqlite3_stmt *st = NULL;
	int v;

	assert_int_equal(sqlite3_prepare_v2(db->sql, "PRAGMA synchronous", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* A relaxed transaction runs at synchronous=NORMAL (1); every other one at
 * FULL (2), also right after a relaxed one, and a nested begin of either
 * kind is refused before it changes the level. */
static void test_only_relaxed_transactions_run_at_normal(void **state)
{
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	int64_t v = 0;

	assert_int_equal(open_db(f, &db, NULL), 0);
	assert_int_equal(sync_level(db), 2);
	assert_int_equal(db_begin_relaxed(db), 0);
	assert_int_equal(sync_level(db), 1);
	assert_int_equal(db_begin(db), -EBUSY);
	assert_int_equal(db_meta_set_tx(db, "relaxed_test", 7), 0);
	assert_int_equal(db_commit(db), 0);
	assert_int_equal(sync_level(db), 1);
	assert_int_equal(db_begin(db), 0);
	assert_int_equal(sync_level(db), 2);
	assert_int_equal(db_begin_relaxed(db), -EBUSY);
	assert_int_equal(sync_level(db), 2);
	assert_int_equal(db_meta_get_tx(db, "relaxed_test", &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(db_commit(db), 0);
	assert_int_equal(sync_level(db), 2);
	/* Two relaxed transactions in a row, then a durable one. */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(db_begin_relaxed(db), 0);
		assert_int_equal(sync_level(db), 1);
		db_rollback(db);
	}
	assert_int_equal(db_begin(db), 0);
	assert_int_equal(sync_level(db), 2);
	db_rollback(db);
	cordon_db_close(db);
}

/* WAL size in pages, as the wal file's length says (32-byte header, then
 * frames of a 24-byte header and a page). */
static long wal_frames(struct fx *f)
{
	_cleanup_free_ char *wal = NULL;
	struct stat st;

	assert_true(asprintf(&wal, "%s-wal", f->path) > 0);
	assert_int_equal(stat(wal, &st), 0);
	return st.st_size <= 32 ? 0 : (long)((st.st_size - 32) / (24 + 4096));
}

static void commit_meta(struct cordon_db *db, int64_t v, bool relaxed)
{
	assert_int_equal(relaxed ? db_begin_relaxed(db) : db_begin(db), 0);
	assert_int_equal(db_meta_set_tx(db, "wal_test", v), 0);
	assert_int_equal(db_commit(db), 0);
}

/* With wal_limit_pages, a commit does not copy the WAL back (SQLite's
 * auto-checkpoint is off) until the WAL reaches the bound; the caller's
 * cordon_db_wal_checkpoint() does, when at least min_pages are due, and
 * after a full copy the next commit starts the WAL over from its start, so
 * the file never grows past the bound plus one transaction. */
static void test_wal_checkpointed_by_caller_and_bounded(void **state)
{
	struct fx *f = *state;
	struct cordon_db_options o = { .clock = &f->clock.clock, .busy_timeout_ms = 100, .wal_limit_pages = 40 };
	struct cordon_db_counters c;
	struct cordon_db *db = NULL;
	long max = 0;

	assert_int_equal(cordon_db_open(f->path, &o, &db, NULL), 0);
	/* Opening committed the schema: copy that back; then nothing is due. */
	assert_int_equal(cordon_db_wal_checkpoint(db, 1), 1);
	assert_int_equal(cordon_db_wal_checkpoint(db, 1), 0);
	for (int i = 0; i < 10; i++)
		commit_meta(db, i, i % 2);
	/* Ten commits of a page or more each, none copied back. */
	assert_true(wal_frames(f) >= 10);
	cordon_db_get_counters(db, &c);
	assert_int_equal(c.wal_checkpoints_in_commit, 0);
	/* Not due below min_pages; due at 1, then nothing left. */
	assert_int_equal(cordon_db_wal_checkpoint(db, 1000), 0);
	assert_int_equal(db_begin(db), 0);
	assert_int_equal(cordon_db_wal_checkpoint(db, 1), 0); /* never inside a transaction */
	db_rollback(db);
	assert_int_equal(cordon_db_wal_checkpoint(db, 1), 1);
	assert_int_equal(cordon_db_wal_checkpoint(db, 1), 0);
	cordon_db_get_counters(db, &c);
	assert_int_equal(c.wal_checkpoints, 2);
	/* The next commit restarts the WAL: it holds that commit only. */
	commit_meta(db, 100, false);
	assert_true(wal_frames(f) >= 10); /* the file keeps its length */
	/* Left alone, the commits themselves keep the WAL at its bound. */
	for (int i = 0; i < 200; i++) {
		long n;

		commit_meta(db, 200 + i, true);
		n = wal_frames(f);
		if (n > max)
			max = n;
	}
	cordon_db_get_counters(db, &c);
	assert_true(c.wal_checkpoints_in_commit >= 1);
	assert_true(max <= 40 + 4);
	cordon_db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_only_relaxed_transactions_run_at_normal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_temp_store_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wal_checkpointed_by_caller_and_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_created_with_mode_0600_whatever_the_umask, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_readable_database_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_world_readable_wal_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_owner_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_world_writable_directory_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema_migrated_and_wal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reopen_keeps_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migration_2_scopes_idempotency_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_a_database_refused, setup, teardown),
		cmocka_unit_test(test_sqlite_codes_map_to_errno),
		cmocka_unit_test_setup_teardown(test_busy_writer_gives_ebusy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_file_missing_is_enoent, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
