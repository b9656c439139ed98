/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: audit tampering is detected (edit, delete, reorder,
 * truncate, forged checkpoint).
 *
 * A broker process produces a real log (decisions, approvals, an action,
 * grant changes), signs a checkpoint at shutdown (cordon_broker_stop) and
 * closes the database. For each attack a copy of that file is edited with a
 * separate SQLite connection (an attacker with write access to the file but
 * not the signing key), then a fresh broker handle verifies it:
 *   edit one record        -> BREAK at that seq
 *   delete one record      -> GAP at that seq
 *   swap two records       -> BREAK at the first
 *   truncate the tail      -> TRUNCATION (fewer records than signed)
 *   forged checkpoint      -> BAD-SIG (same key name, attacker's key)
 *   checkpoint deleted + tail truncated -> TRUNCATION (the high-water mark)
 * and the untouched copy is PASS with every record signed.
 * Layer: libcordon-broker on a real database file. */
#include <sqlite3.h>

#include "sec-broker.h"

static char *golden;	   /* path of the untampered copy */
static struct bt *T;	   /* the producing broker (closed db) */
static uint64_t n_records; /* records in the golden log */

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t n;

	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

static int group_setup(void **state)
{
	struct bt *t = bt_new();
	struct bt_call c;
	struct mcp_peer peer;
	char effect[4096], id[CORDON_ID_STRING_MAX];
	int64_t last;

	(void)state;
	snprintf(effect, sizeof(effect), "%s/effect", t->dir);
	sec_connector_start(&peer, "append", effect);
	for (int i = 0; i < 3; i++) {
		char args[64];

		snprintf(args, sizeof(args), "{\"i\":%d}", i);
		bt_call_init(t, &c, "s1", "delete_file", args);
		bt_approve(t, &c.call, id);
		assert_int_equal(sec_dispatch(t, &peer, &c.call, id, NULL, NULL), SEC_EXECUTED);
		bt_call_done(&c);
	}
	assert_int_equal(cordon_grant_remove(t->db, &t->op, "fs", "mystery"), 0);
	sec_connector_stop(&peer);
	assert_int_equal(cordon_broker_stop(t->db), 0);
	assert_int_equal(cordon_db_meta_get(t->db, "audit_last_seq", &last), 0);
	n_records = (uint64_t)last;
	assert_true(n_records > 20);
	cordon_db_close(t->db);
	t->db = NULL;
	assert_true(asprintf(&golden, "%s/golden.db", t->dir) > 0);
	copy_file(t->path, golden);
	T = t;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	bt_free(T);
	free(golden);
	return 0;
}

/* Copies the golden log, runs the attacker's SQL on it, verifies. */
static struct cordon_audit_report attack(const char *sql)
{
	struct cordon_db_options o = { .clock = &T->clock.clock };
	struct cordon_audit_report rep;
	struct cordon_diag d = {};
	struct cordon_db *db = NULL;
	sqlite3 *s = NULL;
	char *err = NULL, buf[512];

	copy_file(golden, T->path);
	if (sql) {
		assert_int_equal(sqlite3_open_v2(T->path, &s, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
		if (sqlite3_exec(s, sql, NULL, NULL, &err) != SQLITE_OK)
			fail_msg("%s: %s", sql, err);
		assert_int_equal(sqlite3_close(s), SQLITE_OK);
	}
	assert_int_equal(cordon_db_open(T->path, &o, &db, &d), 0);
	assert_int_equal(cordon_audit_verify(db, &T->verifier, &rep), 0);
	cordon_audit_report_format(&rep, buf, sizeof(buf));
	printf("  %s\n    -> %s\n", sql ? sql : "(untouched)", buf);
	cordon_db_close(db);
	return rep;
}

static void test_untouched_log_passes(void **state)
{
	struct cordon_audit_report rep = attack(NULL);

	(void)state;
	assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
	assert_int_equal(rep.last, n_records);
	assert_true(rep.signed_through >= n_records - 1);
}

static void test_edit_detected(void **state)
{
	struct cordon_audit_report rep =
		attack("UPDATE audit SET record = CAST(upper(CAST(record AS TEXT)) AS BLOB) WHERE seq = 5");

	(void)state;
	assert_int_equal(rep.verdict, CORDON_AUDIT_BREAK);
	assert_int_equal(rep.seq, 5);
}

/* A well-formed edit: the connector named in the first record that names
 * one is changed; the JSON stays valid, only the chain can tell. */
static void test_wellformed_edit_detected(void **state)
{
	struct cordon_audit_report rep =
		attack("UPDATE audit SET record = CAST(replace(CAST(record AS TEXT), '\"fs\"', '\"gh\"') AS BLOB) "
		       "WHERE seq = (SELECT min(seq) FROM audit WHERE instr(CAST(record AS TEXT), '\"fs\"') > 0)");

	(void)state;
	assert_int_equal(rep.verdict, CORDON_AUDIT_BREAK);
	assert_null(strstr(rep.message, "malformed"));
}

static void test_delete_detected(void **state)
{
	struct cordon_audit_report rep = attack("DELETE FROM audit WHERE seq = 12");

	(void)state;
	assert_int_equal(rep.verdict, CORDON_AUDIT_GAP);
	assert_int_equal(rep.seq, 12);
}

static void test_reorder_detected(void **state)
{
	struct cordon_audit_report rep = attack(
		"CREATE TEMP TABLE sw AS SELECT id, seq, record, leaf FROM audit WHERE seq IN (7, 8);"
		"UPDATE audit SET (seq, record, leaf) = (SELECT seq, record, leaf FROM sw WHERE sw.id != audit.id) "
		"WHERE id IN (SELECT id FROM sw);");

	(void)state;
	assert_int_equal(rep.verdict, CORDON_AUDIT_BREAK);
	assert_int_equal(rep.seq, 7);
}

static void test_truncate_detected(void **state)
{
	struct cordon_audit_report rep = attack("DELETE FROM audit WHERE seq > 10");

	(void)state;
	assert_int_equal(rep.verdict, CORDON_AUDIT_TRUNCATION);
	assert_int_equal(rep.seq, 11);
}

static void test_truncate_with_checkpoints_removed_detected(void **state)
{
	struct cordon_audit_report rep = attack("DELETE FROM audit WHERE seq > 10; DELETE FROM checkpoints");

	(void)state;
	assert_int_equal(rep.verdict, CORDON_AUDIT_TRUNCATION);
}

static void test_forged_checkpoint_detected(void **state)
{
	static const uint8_t forger_seed[32] = { 0x66, 0x6f, 0x72, 0x67, 0x65 };
	struct cordon_note_signer *forger = NULL;
	struct cordon_checkpoint cp = { .origin = "cordon.test/audit" };
	char *note = NULL, *sql = NULL, *hex;
	struct cordon_audit_report rep;
	size_t len;

	(void)state;
	/* The attacker deletes the last records and signs a checkpoint of the
	 * shorter log with a key of the same name. */
	assert_int_equal(cordon_note_signer_new_from_seed("cordon-test", forger_seed, &forger), 0);
	cp.size = 10;
	assert_int_equal(cordon_checkpoint_sign(forger, &cp, &note, NULL), 0);
	len = strlen(note);
	hex = calloc(1, len * 2 + 1);
	for (size_t i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", (unsigned char)note[i]);
	assert_true(asprintf(&sql,
			     "DELETE FROM audit WHERE seq > 10; DELETE FROM checkpoints; "
			     "INSERT INTO checkpoints(size, root, note, created_at) VALUES (10, x'00', x'%s', 0)",
			     hex) > 0);
	rep = attack(sql);
	assert_int_equal(rep.verdict, CORDON_AUDIT_BAD_SIG);
	free(sql);
	free(hex);
	free(note);
	cordon_note_signer_free(forger);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_untouched_log_passes),
		cmocka_unit_test(test_edit_detected),
		cmocka_unit_test(test_wellformed_edit_detected),
		cmocka_unit_test(test_delete_detected),
		cmocka_unit_test(test_reorder_detected),
		cmocka_unit_test(test_truncate_detected),
		cmocka_unit_test(test_truncate_with_checkpoints_removed_detected),
		cmocka_unit_test(test_forged_checkpoint_detected),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
