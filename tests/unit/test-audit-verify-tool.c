/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cordon-audit-verify program: report line and exit status. */

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "broker-test.h"

static int run_tool(const char *db, const char *vkey, const char *origin, char *out, size_t size)
{
	char tool[4096];
	int p[2], status;
	pid_t pid;
	ssize_t n, off = 0;

	snprintf(tool, sizeof(tool), "%s/cordon-audit-verify", cordon_test_env("CORDON_TOOLS_DIR", "tools"));
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		execl(tool, tool, db, vkey, origin, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out + off, size - 1 - (size_t)off)) > 0)
		off += n;
	out[off] = 0;
	close(p[0]);
	status = cordon_test_wait(pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

struct fx {
	struct bt *t;
	char *vkey;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->t = bt_new();
	assert_int_equal(cordon_broker_stop(f->t->db), 0);
	assert_int_equal(cordon_note_verifier_format(&f->t->verifier, &f->vkey), 0);
	cordon_db_close(f->t->db);
	f->t->db = NULL;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	bt_open_db(f->t); /* bt_free closes it */
	bt_free(f->t);
	free(f->vkey);
	free(f);
	return 0;
}

static void test_pass_exits_zero(void **state)
{
	struct fx *f = *state;
	char out[512];

	assert_int_equal(run_tool(f->t->path, f->vkey, "cordon.test/audit", out, sizeof(out)), 0);
	assert_true(strncmp(out, "PASS: records 1..", 17) == 0);
	assert_non_null(strstr(out, "no unsigned tail"));
}

static void test_gap_exits_one(void **state)
{
	struct fx *f = *state;
	sqlite3 *s;
	char out[512];

	assert_int_equal(sqlite3_open(f->t->path, &s), SQLITE_OK);
	assert_int_equal(sqlite3_exec(s, "DELETE FROM audit WHERE seq = 3", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(s);
	assert_int_equal(run_tool(f->t->path, f->vkey, NULL, out, sizeof(out)), 1);
	assert_true(strncmp(out, "GAP at seq 3:", 13) == 0);
}

/* Issue 11 finding 9: signed checkpoints deleted, checkpoint records kept. */
static void test_deleted_checkpoints_exit_one(void **state)
{
	struct fx *f = *state;
	sqlite3 *s;
	sqlite3_stmt *st;
	long long seq;
	char out[512], want[300];

	assert_int_equal(sqlite3_open(f->t->path, &s), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(s,
					    "SELECT min(seq) FROM audit WHERE CAST(record AS TEXT) LIKE "
					    "'%\"event\":\"checkpoint\"%'",
					    -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	seq = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	assert_true(seq > 0);
	assert_int_equal(sqlite3_exec(s, "DELETE FROM checkpoints", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(s);
	assert_int_equal(run_tool(f->t->path, f->vkey, NULL, out, sizeof(out)), 1);
	snprintf(want, sizeof(want),
		 "MISSING-CHECKPOINT at seq %lld: record %lld is a checkpoint record but its signed checkpoint (size "
		 "%lld) is missing\n",
		 seq, seq, seq);
	assert_string_equal(out, want);
}

static void test_other_key_is_bad_sig(void **state)
{
	struct fx *f = *state;
	static const uint8_t other_seed[32] = { 5 };
	struct cordon_note_signer *s = NULL;
	struct cordon_note_verifier v;
	char *vkey = NULL, out[512];

	assert_int_equal(cordon_note_signer_new_from_seed("cordon-test", other_seed, &s), 0);
	cordon_note_signer_verifier(s, &v);
	assert_int_equal(cordon_note_verifier_format(&v, &vkey), 0);
	assert_int_equal(run_tool(f->t->path, vkey, NULL, out, sizeof(out)), 1);
	assert_true(strncmp(out, "BAD-SIG:", 8) == 0);
	free(vkey);
	cordon_note_signer_free(s);
}

static void test_wrong_origin_is_bad_sig(void **state)
{
	struct fx *f = *state;
	char out[512];

	assert_int_equal(run_tool(f->t->path, f->vkey, "someone.else/audit", out, sizeof(out)), 1);
	assert_true(strncmp(out, "BAD-SIG:", 8) == 0);
}

static void test_missing_database_exits_two(void **state)
{
	struct fx *f = *state;
	char out[512], p[4200];
	struct stat st;

	snprintf(p, sizeof(p), "%s/none.db", f->t->dir);
	assert_int_equal(run_tool(p, f->vkey, NULL, out, sizeof(out)), 2);
	assert_int_equal(stat(p, &st), -1); /* and it did not create one */
	assert_int_equal(run_tool(f->t->path, "not-a-key", NULL, out, sizeof(out)), 2);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_pass_exits_zero),      T(test_gap_exits_one),	       T(test_deleted_checkpoints_exit_one),
		T(test_other_key_is_bad_sig), T(test_wrong_origin_is_bad_sig), T(test_missing_database_exits_two),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
