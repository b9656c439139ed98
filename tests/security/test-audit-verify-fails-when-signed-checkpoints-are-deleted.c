/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: audit verify fails when signed checkpoints were deleted
 * (issue 11, finding 9).
 *
 * An attacker with write access to the database but not the signing key
 * rewrites a record (here: an approval that was approved now reads as
 * denied), re-chains every later record (new prev, new leaf hash, canonical
 * JCS bytes, so chain and sequence are perfect) and deletes the signed
 * checkpoints that would no longer match. The record count and the
 * high-water mark stay the same. Before the fix verify said PASS; now the
 * "checkpoint" records left in the chain name the missing signed note:
 *   MISSING-CHECKPOINT at seq N: record N is a checkpoint record but its
 *   signed checkpoint (size N) is missing
 * and cordon-audit-verify exits 1 with that line. The untouched log passes.
 * Layer: libcordon-broker on a real database file. */
#include <sodium.h>
#include <sqlite3.h>

#include "canon.h"
#include "merkle.h"
#include "sec-broker.h"

static struct bt *T;

/* Rewrites record `target` with the edit and re-chains the rest. */
static void rewrite_and_rechain(const char *path, uint64_t target)
{
	sqlite3 *s = NULL;
	sqlite3_stmt *sel = NULL, *upd = NULL;
	uint8_t prev[32] = {};
	bool started = false;

	assert_int_equal(sqlite3_open_v2(path, &s, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(s, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(s, "SELECT id, seq, record, leaf FROM audit ORDER BY id", -1, &sel, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(s, "UPDATE audit SET record = ?1, leaf = ?2 WHERE id = ?3", -1, &upd, NULL),
			 SQLITE_OK);
	while (sqlite3_step(sel) == SQLITE_ROW) {
		uint64_t seq = (uint64_t)sqlite3_column_int64(sel, 1);
		json_t *o;
		char hex[65], *text = NULL;
		size_t len;
		uint8_t leaf[32];

		if (seq < target) {
			memcpy(prev, sqlite3_column_blob(sel, 3), 32);
			continue;
		}
		o = json_loadb(sqlite3_column_blob(sel, 2), (size_t)sqlite3_column_bytes(sel, 2), 0, NULL);
		assert_non_null(o);
		if (seq == target) {
			assert_string_equal(json_string_value(json_object_get(o, "event")), "approval.approved");
			assert_int_equal(json_object_set_new(o, "event", json_string("approval.denied")), 0);
			started = true;
		}
		sodium_bin2hex(hex, sizeof(hex), prev, 32);
		assert_int_equal(json_object_set_new(o, "prev", json_string(hex)), 0);
		assert_int_equal(cordon_jcs_encode(o, &text, &len), 0);
		json_decref(o);
		cordon_merkle_leaf_hash(text, len, leaf);
		sqlite3_reset(upd);
		sqlite3_bind_blob(upd, 1, text, (int)len, SQLITE_TRANSIENT);
		sqlite3_bind_blob(upd, 2, leaf, 32, SQLITE_TRANSIENT);
		sqlite3_bind_int64(upd, 3, sqlite3_column_int64(sel, 0));
		assert_int_equal(sqlite3_step(upd), SQLITE_DONE);
		memcpy(prev, leaf, 32);
		free(text);
	}
	assert_true(started);
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	assert_int_equal(sqlite3_exec(s, "DELETE FROM checkpoints; COMMIT", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_close(s), SQLITE_OK);
}

static int64_t query_int(const char *path, const char *sql)
{
	sqlite3 *s = NULL;
	sqlite3_stmt *st = NULL;
	int64_t v;

	assert_int_equal(sqlite3_open_v2(path, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(s, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(s);
	return v;
}

static struct cordon_audit_report verify_file(const char *path)
{
	struct cordon_db_options o = { .clock = &T->clock.clock };
	struct cordon_audit_report rep;
	struct cordon_diag d = {};
	struct cordon_db *db = NULL;

	assert_int_equal(cordon_db_open(path, &o, &db, &d), 0);
	assert_int_equal(cordon_audit_verify(db, &T->verifier, &rep), 0);
	cordon_db_close(db);
	return rep;
}

static int run_verify_tool(const char *db, char *out, size_t size)
{
	_cleanup_free_ char *vkey = NULL;
	char tool[4096];
	int p[2], status;
	ssize_t n, off = 0;
	pid_t pid;

	assert_int_equal(cordon_note_verifier_format(&T->verifier, &vkey), 0);
	snprintf(tool, sizeof(tool), "%s/cordon-audit-verify", cordon_test_env("CORDON_TOOLS_DIR", "tools"));
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		execl(tool, tool, db, vkey, (char *)NULL);
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

static void test_rechained_log_without_signed_checkpoints_fails(void **state)
{
	struct bt *t = bt_new();
	struct bt_call c;
	char id[CORDON_ID_STRING_MAX], line[400], want[400], out[512];
	struct cordon_audit_report rep;
	int64_t approved, first_cp, records;

	(void)state;
	T = t;
	/* A real log: approved calls, more checkpoints than one. */
	for (int i = 0; i < 3; i++) {
		char args[64];

		snprintf(args, sizeof(args), "{\"i\":%d}", i);
		bt_call_init(t, &c, "s1", "delete_file", args);
		bt_approve(t, &c.call, id);
		bt_call_done(&c);
		assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	}
	assert_int_equal(cordon_broker_stop(t->db), 0);
	cordon_db_close(t->db);
	t->db = NULL;
	rep = verify_file(t->path);
	assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
	assert_true(rep.n_checkpoints >= 3);
	records = (int64_t)rep.last;

	approved = query_int(t->path, "SELECT min(seq) FROM audit WHERE instr(CAST(record AS TEXT), "
				      "'\"event\":\"approval.approved\"') > 0");
	first_cp = query_int(t->path, "SELECT min(seq) FROM audit WHERE instr(CAST(record AS TEXT), "
				      "'\"event\":\"checkpoint\"') > 0");
	assert_true(approved > 0 && first_cp > approved);
	rewrite_and_rechain(t->path, (uint64_t)approved);
	assert_int_equal(query_int(t->path, "SELECT count(*) FROM checkpoints"), 0);
	assert_int_equal(query_int(t->path, "SELECT count(*) FROM audit"), records);

	rep = verify_file(t->path);
	cordon_audit_report_format(&rep, line, sizeof(line));
	printf("  rewritten, re-chained, checkpoints deleted -> %s\n", line);
	assert_int_equal(rep.verdict, CORDON_AUDIT_MISSING_CHECKPOINT);
	snprintf(want, sizeof(want),
		 "MISSING-CHECKPOINT at seq %lld: record %lld is a checkpoint record but its signed checkpoint (size "
		 "%lld) is missing",
		 (long long)first_cp, (long long)first_cp, (long long)first_cp);
	assert_string_equal(line, want);

	assert_int_equal(run_verify_tool(t->path, out, sizeof(out)), 1);
	strcat(want, "\n");
	assert_string_equal(out, want);

	bt_open_db(t); /* bt_free closes it */
	bt_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rechained_log_without_signed_checkpoints_fails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
