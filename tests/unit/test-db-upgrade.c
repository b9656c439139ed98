/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Upgrade: a database written by the first release (schema version 1,
 * tests/fixtures/db-schema-v1.sql, made by gen-db-schema-v1.c from that
 * release's library) opens with the current code, migrates to the current
 * version and keeps its data: grants, inventory reviews, the idempotency
 * identity (moved to its uid's scope by migration 2) and an audit chain
 * that still verifies with its signed checkpoint. A database from a newer
 * schema version is refused, naming both versions. */

#include <sqlite3.h>
#include <sys/stat.h>

#include "broker-test.h"
#include "db-schema.h"

struct fx {
	char *dir, *path;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->dir = cordon_test_mkdtemp("upgrade");
	assert_true(asprintf(&f->path, "%s/cordon.db", f->dir) > 0);
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

/* Builds f->path from the SQL dump, then sets user_version when >= 0. */
static void load_fixture(struct fx *f, int user_version)
{
	char src[4096], *sql = NULL, *errmsg = NULL;
	sqlite3 *db = NULL;
	FILE *in;
	long n;

	snprintf(src, sizeof(src), "%s/tests/fixtures/db-schema-v1.sql", cordon_test_env("CORDON_SOURCE_DIR", "."));
	in = fopen(src, "re");
	if (!in)
		fail_msg("cannot open %s", src);
	assert_int_equal(fseek(in, 0, SEEK_END), 0);
	n = ftell(in);
	assert_true(n > 0);
	rewind(in);
	sql = calloc(1, (size_t)n + 1);
	assert_non_null(sql);
	assert_int_equal(fread(sql, 1, (size_t)n, in), (size_t)n);
	fclose(in);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &errmsg) != SQLITE_OK)
		fail_msg("loading the fixture: %s", errmsg);
	if (user_version >= 0) {
		char pragma[64];

		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", user_version);
		assert_int_equal(sqlite3_exec(db, pragma, NULL, NULL, NULL), SQLITE_OK);
	}
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	assert_int_equal(chmod(f->path, 0600), 0);
	free(sql);
}

static int64_t query_int(struct fx *f, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int64_t v;

	assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static enum cordon_inventory_state inv_state(struct cordon_db *db, const char *tool)
{
	struct cordon_inventory_record rec;
	enum cordon_inventory_state s;

	assert_int_equal(cordon_inventory_get(db, "fs", tool, &rec), 0);
	s = rec.state;
	cordon_inventory_record_done(&rec);
	return s;
}

static void test_v1_database_migrates_and_keeps_data(void **state)
{
	static const uint8_t seed[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	struct cordon_diag d = {};
	struct cordon_note_signer *s = NULL;
	struct cordon_note_verifier v;
	struct cordon_audit_report rep;
	char **grant = NULL;
	size_t n_grant = 0;

	load_fixture(f, -1);
	assert_int_equal(query_int(f, "PRAGMA user_version"), 1);
	if (cordon_db_open(f->path, NULL, &db, &d) < 0)
		fail_msg("opening the v1 database: %s", d.message);
	/* grants: the profile's five minus run_command */
	assert_int_equal(cordon_grants_list(db, "fs", &grant, &n_grant), 0);
	assert_int_equal(n_grant, 4);
	assert_true(strv_contains(grant, "write_file"));
	assert_false(strv_contains(grant, "run_command"));
	strv_free(grant);
	/* inventory: reviews kept, the changed and the pending tool too */
	assert_int_equal(inv_state(db, "read_file"), CORDON_INVENTORY_REVIEWED);
	assert_int_equal(inv_state(db, "write_file"), CORDON_INVENTORY_CHANGED);
	assert_int_equal(inv_state(db, "stat_file"), CORDON_INVENTORY_PENDING_REVIEW);
	/* the audit chain verifies, its signed checkpoint included */
	assert_int_equal(cordon_note_signer_new_from_seed("cordon-test", seed, &s), 0);
	cordon_note_signer_verifier(s, &v);
	cordon_note_signer_free(s);
	assert_int_equal(cordon_audit_verify(db, &v, &rep), 0);
	if (rep.verdict != CORDON_AUDIT_PASS)
		fail_msg("audit verify after the upgrade: %s", rep.message);
	assert_int_equal(rep.first, 1);
	assert_int_equal(rep.last, 26);
	assert_int_equal(rep.n_checkpoints, 1);
	cordon_db_close(db);
	/* migrated to the current version; the identity moved to uid:1000 */
	assert_int_equal(query_int(f, "PRAGMA user_version"), (int64_t)cordon_db_n_migrations);
	assert_int_equal(query_int(f, "SELECT count(*) FROM idempotency WHERE subject = 'uid:1000' AND key = 'k1'"), 1);
	assert_int_equal(query_int(f, "SELECT count(*) FROM actions WHERE state = 2"), 1);
	/* opening again changes nothing */
	assert_int_equal(cordon_db_open(f->path, NULL, &db, &d), 0);
	cordon_db_close(db);
	assert_int_equal(query_int(f, "PRAGMA user_version"), (int64_t)cordon_db_n_migrations);
}

static void test_newer_schema_refused(void **state)
{
	struct fx *f = *state;
	struct cordon_db *db = NULL;
	struct cordon_diag d = {};
	char want[160];

	load_fixture(f, (int)cordon_db_n_migrations + 1);
	assert_int_equal(cordon_db_open(f->path, NULL, &db, &d), -EPROTO);
	assert_null(db);
	snprintf(want, sizeof(want),
		 "database schema version %u is newer than this broker knows (%u); refusing to downgrade it",
		 cordon_db_n_migrations + 1, cordon_db_n_migrations);
	assert_string_equal(d.message, want);
	/* untouched */
	assert_int_equal(query_int(f, "PRAGMA user_version"), (int64_t)cordon_db_n_migrations + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_v1_database_migrates_and_keeps_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
