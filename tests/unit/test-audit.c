/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The audit log: chain, checkpoints, verify reports for every kind of
 * tampering, fail-closed behaviour when appends fail, and that no argument
 * value, result or credential ever reaches the database file. */

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker-test.h"
#include "hex-util.h"

static int setup(void **state)
{
	*state = bt_new();
	return 0;
}

static int teardown(void **state)
{
	bt_free(*state);
	return 0;
}

/* A raw second connection, as an attacker with file access would use. */
static sqlite3 *raw_open(struct bt *t)
{
	sqlite3 *s = NULL;

	assert_int_equal(sqlite3_open_v2(t->path, &s, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	sqlite3_busy_timeout(s, 2000);
	return s;
}

static void raw_exec(sqlite3 *s, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(s, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
}

static void add_events(struct bt *t, int n)
{
	for (int i = 0; i < n; i++) {
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_DECISION,
						 .actor = &t->s1,	  .connector = "fs",
						 .tool = "read_file",	  .tier = CORDON_RISK_READ,
						 .decision = "allow" };
		assert_int_equal(cordon_audit_append(t->db, &ev), 0);
	}
}

static uint64_t last_seq(struct bt *t)
{
	int64_t v;

	assert_int_equal(cordon_db_meta_get(t->db, "audit_last_seq", &v), 0);
	return (uint64_t)v;
}

static struct cordon_audit_report verify(struct bt *t)
{
	struct cordon_audit_report rep;
	char buf[300];

	assert_int_equal(cordon_audit_verify(t->db, &t->verifier, &rep), 0);
	cordon_audit_report_format(&rep, buf, sizeof(buf));
	print_message("verify: %s\n", buf);
	return rep;
}

static void test_pass_with_range_and_no_tail_after_checkpoint(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_report rep;

	add_events(t, 10);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
	assert_int_equal(rep.first, 1);
	assert_int_equal(rep.last, last_seq(t));
	assert_int_equal(rep.signed_through, rep.last);
	assert_non_null(strstr(rep.message, "no unsigned tail"));
	/* Nothing new: no second checkpoint. */
	assert_int_equal(cordon_audit_checkpoint(t->db), 0);
}

static void test_pass_reports_unsigned_tail(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_report rep;
	uint64_t signed_size;

	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	signed_size = last_seq(t);
	add_events(t, 3);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
	assert_int_equal(rep.signed_through, signed_size);
	assert_int_equal(rep.last, signed_size + 3);
	assert_non_null(strstr(rep.message, "unsigned tail"));
}

static void test_tampered_record_is_break(void **state)
{
	struct bt *t = *state;
	sqlite3 *s;
	struct cordon_audit_report rep;

	add_events(t, 10);
	s = raw_open(t);
	/* Rewrite record 5's decision in place (same length). */
	raw_exec(s, "UPDATE audit SET record = CAST(replace(CAST(record AS TEXT), '\"allow\"', '\"alloW\"') AS BLOB) "
		    "WHERE seq = (SELECT max(seq) - 3 FROM audit)");
	sqlite3_close(s);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_BREAK);
	assert_int_equal(rep.seq, last_seq(t) - 3);
}

static void test_tampered_record_and_leaf_is_break_at_successor(void **state)
{
	struct bt *t = *state;
	sqlite3 *s;
	struct cordon_audit_report rep;
	uint64_t target;

	add_events(t, 10);
	target = last_seq(t) - 3;
	s = raw_open(t);
	/* The attacker also recomputes the stored leaf: only the chain
	 * notices, at the next record. */
	raw_exec(s, "UPDATE audit SET record = CAST(replace(CAST(record AS TEXT), '\"allow\"', '\"alloW\"') AS BLOB) "
		    "WHERE seq = (SELECT max(seq) - 3 FROM audit)");
	{
		sqlite3_stmt *st;
		uint8_t leaf[32];
		assert_int_equal(sqlite3_prepare_v2(s, "SELECT record FROM audit WHERE seq = ?1", -1, &st, NULL),
				 SQLITE_OK);
		sqlite3_bind_int64(st, 1, (sqlite3_int64)target);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		cordon_merkle_leaf_hash(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), leaf);
		sqlite3_finalize(st);
		assert_int_equal(sqlite3_prepare_v2(s, "UPDATE audit SET leaf = ?1 WHERE seq = ?2", -1, &st, NULL),
				 SQLITE_OK);
		sqlite3_bind_blob(st, 1, leaf, 32, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)target);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_finalize(st);
	}
	sqlite3_close(s);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_BREAK);
	assert_int_equal(rep.seq, target + 1);
}

static void test_deleted_record_is_gap(void **state)
{
	struct bt *t = *state;
	sqlite3 *s;
	struct cordon_audit_report rep;

	add_events(t, 10);
	s = raw_open(t);
	raw_exec(s, "DELETE FROM audit WHERE seq = 7");
	sqlite3_close(s);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_GAP);
	assert_int_equal(rep.seq, 7);
}

static void test_reordered_records_are_break(void **state)
{
	struct bt *t = *state;
	sqlite3 *s;
	struct cordon_audit_report rep;

	add_events(t, 10);
	s = raw_open(t);
	/* Swap the stored positions of records 5 and 6. */
	raw_exec(s, "CREATE TEMP TABLE sw AS SELECT id, seq, record, leaf FROM audit WHERE seq IN (5, 6);"
		    "UPDATE audit SET (seq, record, leaf) = (SELECT seq, record, leaf FROM sw WHERE sw.id != audit.id) "
		    "WHERE id IN (SELECT id FROM sw);");
	sqlite3_close(s);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_BREAK);
	assert_int_equal(rep.seq, 5);
	assert_non_null(strstr(rep.message, "out of order"));
}

static void test_duplicated_record_is_duplicate(void **state)
{
	struct bt *t = *state;
	sqlite3 *s;
	struct cordon_audit_report rep;

	add_events(t, 10);
	s = raw_open(t);
	raw_exec(s, "INSERT INTO audit(seq, record, leaf) SELECT seq, record, leaf FROM audit WHERE seq = 4");
	sqlite3_close(s);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_DUPLICATE);
	assert_int_equal(rep.seq, 4);
}

static void test_truncated_signed_tail_is_truncation(void **state)
{
	struct bt *t = *state;
	sqlite3 *s;
	struct cordon_audit_report rep;
	uint64_t n;

	add_events(t, 10);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	n = last_seq(t);
	s = raw_open(t);
	raw_exec(s, "DELETE FROM audit WHERE seq > (SELECT max(seq) - 3 FROM audit)");
	sqlite3_close(s);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_TRUNCATION);
	assert_int_equal(rep.seq, n - 2);
}

static void test_truncated_unsigned_tail_is_truncation(void **state)
{
	struct bt *t = *state;
	sqlite3 *s;
	struct cordon_audit_report rep;
	uint64_t n;

	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	add_events(t, 5);
	n = last_seq(t);
	s = raw_open(t);
	raw_exec(s, "DELETE FROM audit WHERE seq > (SELECT max(seq) - 2 FROM audit)");
	sqlite3_close(s);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_TRUNCATION);
	assert_int_equal(rep.seq, n - 1);
	/* And the broker refuses to append to a truncated log. */
	add_events(t, 0);
	{
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_DECISION,
						 .actor = &t->s1 };
		assert_int_equal(cordon_audit_append(t->db, &ev), -EBADMSG);
	}
}

static void insert_checkpoint(struct bt *t, const char *note)
{
	sqlite3 *s = raw_open(t);
	sqlite3_stmt *st;

	assert_int_equal(
		sqlite3_prepare_v2(s, "INSERT INTO checkpoints(size, root, note, created_at) VALUES (1, x'00', ?1, 0)",
				   -1, &st, NULL),
		SQLITE_OK);
	sqlite3_bind_blob(st, 1, note, (int)strlen(note), SQLITE_TRANSIENT);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(s);
}

static void test_forged_checkpoint_is_bad_sig(void **state)
{
	struct bt *t = *state;
	static const uint8_t other_seed[32] = { 9, 9, 9 };
	struct cordon_note_signer *forger = NULL;
	struct cordon_checkpoint cp = { .origin = "cordon.test/audit" };
	char *note = NULL;
	struct cordon_audit_report rep;

	add_events(t, 3);
	/* Same key name, different key. */
	assert_int_equal(cordon_note_signer_new_from_seed("cordon-test", other_seed, &forger), 0);
	cp.size = last_seq(t);
	assert_int_equal(cordon_checkpoint_sign(forger, &cp, &note, NULL), 0);
	insert_checkpoint(t, note);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_BAD_SIG);
	free(note);
	cordon_note_signer_free(forger);
}

static void test_altered_checkpoint_is_bad_sig(void **state)
{
	struct bt *t = *state;
	sqlite3 *s;
	struct cordon_audit_report rep;

	add_events(t, 3);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	s = raw_open(t);
	/* Claim a larger tree under the old signature. */
	raw_exec(s, "UPDATE checkpoints SET note = CAST(replace(CAST(note AS TEXT), char(10) || size || char(10), "
		    "char(10) || (size + 1) || char(10)) AS BLOB)");
	sqlite3_close(s);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_BAD_SIG);
}

/* With the real key (a compromised signer), a checkpoint over a different
 * root: the records do not match what was signed. */
static void test_checkpoint_root_mismatch_is_break(void **state)
{
	struct bt *t = *state;
	static const uint8_t seed[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct cordon_note_signer *signer = NULL;
	struct cordon_checkpoint cp = { .origin = "cordon.test/audit" };
	char *note = NULL;
	struct cordon_audit_report rep;

	add_events(t, 3);
	assert_int_equal(cordon_note_signer_new_from_seed("cordon-test", seed, &signer), 0);
	cp.size = last_seq(t);
	memset(cp.root, 0xab, sizeof(cp.root));
	assert_int_equal(cordon_checkpoint_sign(signer, &cp, &note, NULL), 0);
	insert_checkpoint(t, note);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_BREAK);
	assert_int_equal(rep.seq, cp.size);
	free(note);
	cordon_note_signer_free(signer);
}

static int count_checkpoints(struct bt *t)
{
	sqlite3 *s = raw_open(t);
	sqlite3_stmt *st;
	int n;

	assert_int_equal(sqlite3_prepare_v2(s, "SELECT count(*) FROM checkpoints", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(s);
	return n;
}

static void test_checkpoint_every_n_records(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_report rep;
	int before;

	bt_setup_audit(t, 5, 3600 * SEC);
	before = count_checkpoints(t);
	add_events(t, 12);
	assert_true(count_checkpoints(t) >= before + 2);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
	assert_true(rep.last - rep.signed_through < 5);
}

static void test_checkpoint_every_t_seconds(void **state)
{
	struct bt *t = *state;
	int before;

	bt_setup_audit(t, 1000, 10 * SEC);
	add_events(t, 1);
	before = count_checkpoints(t);
	cordon_virtual_clock_advance(&t->clock, 9 * SEC);
	assert_int_equal(cordon_audit_maybe_checkpoint(t->db), 0);
	add_events(t, 1);
	assert_int_equal(count_checkpoints(t), before);
	cordon_virtual_clock_advance(&t->clock, 2 * SEC);
	add_events(t, 1);
	assert_int_equal(count_checkpoints(t), before + 1);
	/* The timer path: due after another interval. */
	add_events(t, 1);
	cordon_virtual_clock_advance(&t->clock, 11 * SEC);
	assert_int_equal(cordon_audit_maybe_checkpoint(t->db), 1);
}

static void test_shutdown_signs_everything(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_report rep;

	add_events(t, 4);
	assert_int_equal(cordon_broker_stop(t->db), 0);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
	assert_int_equal(rep.signed_through, rep.last);
}

static void test_merkle_state_survives_reopen(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_report rep;

	add_events(t, 4);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	cordon_db_close(t->db);
	bt_open_db(t);
	bt_setup_audit(t, 1000, 3600 * SEC);
	add_events(t, 3);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
	assert_int_equal(rep.signed_through, rep.last);
	assert_int_equal(rep.n_checkpoints, 2);
}

static void test_refused_begin_rolls_back_and_is_audited(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	char id[CORDON_ID_STRING_MAX];
	struct cordon_approval_info info;
	uint64_t before;
	struct cordon_audit_report rep;
	sqlite3 *s;
	sqlite3_stmt *st;

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	bt_approve(t, &a.call, id);
	before = last_seq(t);
	/* Wrong arguments: the consumption and its records roll back; one
	 * refusal record follows. */
	free(a.jcs);
	a.jcs = strdup("{\"path\":\"/b\"}");
	a.call.arguments_jcs = a.jcs;
	a.call.arguments_jcs_len = strlen(a.jcs);
	assert_int_equal(bt_begin(t, &a.call, id, NULL, NULL), -EBADMSG);
	assert_int_equal(last_seq(t), before + 1);
	assert_int_equal(cordon_approval_get(t->db, id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_APPROVED);
	s = raw_open(t);
	assert_int_equal(sqlite3_prepare_v2(s, "SELECT record FROM audit ORDER BY id DESC LIMIT 1", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_non_null(strstr((const char *)sqlite3_column_text(st, 0), "\"reason\":\"approval-mismatch\""));
	assert_non_null(strstr((const char *)sqlite3_column_text(st, 0), "\"decision\":\"deny\""));
	sqlite3_finalize(st);
	sqlite3_close(s);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
	bt_call_done(&a);
}

static void test_record_holds_binding_prefix_only(void **state)
{
	struct bt *t = *state;
	struct bt_call a;
	struct cordon_approval_info info;
	uint8_t binding[32];
	char full[65], prefix[17], *needle;
	sqlite3 *s;
	sqlite3_stmt *st;
	bool found_prefix = false;

	bt_call_init(t, &a, "s1", "write_file", "{\"path\":\"/a\"}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &a.call, &info), 0);
	assert_int_equal(cordon_call_binding(t->key, &a.call, binding), 0);
	hex_encode(binding, 32, full);
	hex_encode(binding, 8, prefix);
	s = raw_open(t);
	assert_int_equal(sqlite3_prepare_v2(s, "SELECT record FROM audit", -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *rec = (const char *)sqlite3_column_text(st, 0);
		assert_null(strstr(rec, full));
		assert_null(strstr(rec, full + 16));
		if ((needle = strstr(rec, "\"binding\":\""))) {
			assert_memory_equal(needle + 11, prefix, 16);
			assert_int_equal(needle[27], '"');
			found_prefix = true;
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(s);
	assert_true(found_prefix);
	bt_call_done(&a);
}

static bool file_contains(const char *path, const char *needle)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, n = strlen(needle);
	FILE *f = fopen(path, "rb");

	if (!f)
		return false;
	buf = malloc(64u * 1024 * 1024);
	assert_non_null(buf);
	len = fread(buf, 1, 64u * 1024 * 1024, f);
	fclose(f);
	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(buf + i, needle, n) == 0)
			return true;
	return false;
}

static void assert_no_secret_on_disk(struct bt *t, const char *const *secrets, size_t n)
{
	static const char *const suffixes[] = { "", "-wal", "-shm" };
	char p[4096];

	for (size_t s = 0; s < ELEMENTSOF(suffixes); s++) {
		snprintf(p, sizeof(p), "%s%s", t->path, suffixes[s]);
		for (size_t i = 0; i < n; i++)
			if (file_contains(p, secrets[i]))
				fail_msg("secret '%s' found in %s", secrets[i], p);
	}
}

/* Synthetic secrets go through every path that sees arguments or results:
 * allowed read, approved write (with its approval request and decision),
 * denied call, critical call, idempotent replay with a stored result, failed
 * call, decision records. None may reach the database file or its WAL. */
static void test_no_argument_or_result_reaches_the_database_file(void **state)
{
	struct bt *t = *state;
	static const char *const secrets[] = {
		"SECRET-ARG-READ-7f3a", "SECRET-ARG-WRITE-91bc", "SECRET-TOKEN-ghp_4bd2",   "SECRET-ARG-DENY-c0de",
		"SECRET-ARG-CRIT-5e5e", "SECRET-RESULT-d00d",	 "SECRET-RESULT-FAIL-beef",
	};
	struct cordon_action_begin_result res;
	struct bt_call r, w, d, c, w2;
	char id[CORDON_ID_STRING_MAX];

	/* Read tier, allowed, completed with a result echoing the secret. */
	bt_call_init(t, &r, "s1", "read_file", "{\"path\":\"SECRET-ARG-READ-7f3a\"}");
	{
		struct cordon_decide_request dr = {
			.session = "s1", .connector = "fs", .tool = "read_file", .fingerprint = bt_fp(t, "read_file")
		};
		struct cordon_broker_decision dec;
		assert_int_equal(cordon_broker_decide(t->db, &dr, &dec), 0);
		assert_int_equal(dec.decision.verdict, CORDON_VERDICT_ALLOW);
	}
	assert_int_equal(bt_begin(t, &r.call, NULL, NULL, &res), 0);
	assert_int_equal(cordon_action_dispatched(t->db, res.action_id), 0);
	assert_int_equal(cordon_action_complete(t->db, t->key, res.action_id, true, "SECRET-RESULT-d00d", 18), 0);
	cordon_action_begin_result_done(&res);

	/* Write tier (replay-safe), approved, with an idempotency key, result stored. */
	bt_call_init(t, &w, "s1", "write_file",
		     "{\"path\":\"/a\",\"content\":\"SECRET-ARG-WRITE-91bc\",\"token\":\"SECRET-TOKEN-ghp_4bd2\"}");
	bt_approve(t, &w.call, id);
	assert_int_equal(bt_begin(t, &w.call, id, "idem-1", &res), 0);
	assert_int_equal(cordon_action_dispatched(t->db, res.action_id), 0);
	assert_int_equal(
		cordon_action_complete(t->db, t->key, res.action_id, true, "{\"echo\":\"SECRET-RESULT-d00d\"}", 29), 0);
	cordon_action_begin_result_done(&res);
	/* Replay: stored result comes back (sealed on disk). */
	assert_int_equal(bt_begin(t, &w.call, NULL, "idem-1", &res), 0);
	assert_int_equal(res.outcome, CORDON_BEGIN_STORED_RESULT);
	assert_non_null(strstr(res.result, "SECRET-RESULT-d00d"));
	cordon_action_begin_result_done(&res);

	/* Denied approval. */
	bt_call_init(t, &d, "s1", "delete_file", "{\"path\":\"SECRET-ARG-DENY-c0de\"}");
	{
		struct cordon_approval_info info;
		assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &d.call, &info), 0);
		assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, info.id, false, NULL), 0);
		assert_int_equal(bt_begin(t, &d.call, info.id, NULL, NULL), -EACCES);
	}

	/* Critical, approved with its code, failed with a secret error text. */
	bt_call_init(t, &c, "s1", "run_command", "{\"cmd\":\"SECRET-ARG-CRIT-5e5e\"}");
	bt_approve(t, &c.call, id);
	assert_int_equal(bt_begin(t, &c.call, id, NULL, &res), 0);
	assert_int_equal(cordon_action_dispatched(t->db, res.action_id), 0);
	assert_int_equal(cordon_action_complete(t->db, t->key, res.action_id, false, "SECRET-RESULT-FAIL-beef", 23), 0);
	cordon_action_begin_result_done(&res);

	/* A changed-argument attempt (fails) carrying a secret. */
	bt_call_init(t, &w2, "s1", "write_file", "{\"path\":\"/a\",\"content\":\"SECRET-ARG-WRITE-91bc\"}");
	assert_int_equal(bt_begin(t, &w2.call, id, NULL, NULL), -EALREADY);

	assert_int_equal(cordon_broker_stop(t->db), 0);
	/* While open (WAL holds recent pages) and after close (checkpointed). */
	assert_no_secret_on_disk(t, secrets, ELEMENTSOF(secrets));
	cordon_db_close(t->db);
	t->db = NULL;
	assert_no_secret_on_disk(t, secrets, ELEMENTSOF(secrets));
	bt_open_db(t);
	bt_call_done(&r);
	bt_call_done(&w);
	bt_call_done(&d);
	bt_call_done(&c);
	bt_call_done(&w2);
}

static void test_audit_failure_fails_closed_above_read(void **state)
{
	struct bt *t = *state;
	struct cordon_db_counters c0, c1;
	struct cordon_broker_decision dec;
	struct cordon_approval_info info;
	struct bt_call w, r;
	char id[CORDON_ID_STRING_MAX];
	struct cordon_decide_request wr = {
		.session = "s1", .connector = "fs", .tool = "write_file", .fingerprint = bt_fp(t, "write_file")
	};
	struct cordon_decide_request rr = {
		.session = "s1", .connector = "fs", .tool = "read_file", .fingerprint = bt_fp(t, "read_file")
	};

	bt_call_init(t, &w, "s1", "write_file", "{\"path\":\"/a\"}");
	bt_call_init(t, &r, "s1", "read_file", "{\"path\":\"/a\"}");
	bt_approve(t, &w.call, id);
	cordon_db_get_counters(t->db, &c0);

	cordon_db_inject_faults(t->db, CORDON_DB_FAULT_AUDIT_APPEND);
	/* Decision above read: denied. */
	assert_int_equal(cordon_broker_decide(t->db, &wr, &dec), -EIO);
	assert_int_equal(dec.decision.verdict, CORDON_VERDICT_DENY);
	/* Read: still allowed, without its record. */
	assert_int_equal(cordon_broker_decide(t->db, &rr, &dec), 0);
	assert_int_equal(dec.decision.verdict, CORDON_VERDICT_ALLOW);
	/* The approved write is not consumed and no action is prepared. */
	assert_int_equal(bt_begin(t, &w.call, id, NULL, NULL), -EIO);
	assert_int_equal(cordon_approval_get(t->db, id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_APPROVED);
	/* A read call still goes ahead. */
	assert_int_equal(bt_begin(t, &r.call, NULL, NULL, NULL), 0);
	cordon_db_get_counters(t->db, &c1);
	assert_true(c1.audit_append_failures >= c0.audit_append_failures + 4);

	/* Recovered: the approval works, and the log is still intact. */
	cordon_db_inject_faults(t->db, 0);
	assert_int_equal(bt_begin(t, &w.call, id, NULL, NULL), 0);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	assert_int_equal(verify(t).verdict, CORDON_AUDIT_PASS);
	bt_call_done(&w);
	bt_call_done(&r);
}

/* A read decision commits relaxed (synchronous=NORMAL, db.c), so it never
 * signs a checkpoint inside its own transaction: the checkpoint that falls
 * due is written right after, in a durable transaction whose fsync covers
 * the records it signs. Every due checkpoint is still written, and the log
 * verifies signed through its last checkpoint. */
static void test_read_decisions_sign_due_checkpoints_after_commit(void **state)
{
	struct bt *t = *state;
	struct cordon_broker_decision dec;
	struct cordon_audit_report rep;
	struct cordon_decide_request rr = {
		.session = "s1", .connector = "fs", .tool = "read_file", .fingerprint = bt_fp(t, "read_file")
	};
	int before;

	bt_setup_audit(t, 3, 3600 * SEC);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	before = count_checkpoints(t);
	for (int i = 1; i <= 6; i++) {
		assert_int_equal(cordon_broker_decide(t->db, &rr, &dec), 0);
		assert_int_equal(dec.decision.verdict, CORDON_VERDICT_ALLOW);
		/* Three records since the last checkpoint: signed on return. */
		assert_int_equal(count_checkpoints(t), before + i / 3);
	}
	/* Nothing was left pending. */
	assert_int_equal(audit_deferred_checkpoint(t->db), 0);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
	assert_int_equal(rep.signed_through, rep.last);
}

/* With checkpoint_when_idle (cordond), a decision that makes a checkpoint
 * due does not sign it on the call's path: the caller's idle-time
 * cordon_audit_checkpoint_pending() does, in a durable transaction, and
 * that checkpoint signs every record up to then. */
static void test_when_idle_due_checkpoint_waits_for_the_caller(void **state)
{
	static const uint8_t seed[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct bt *t = *state;
	struct cordon_note_signer *s = NULL;
	struct cordon_audit_options ao = { .origin = "cordon.test/audit",
					   .checkpoint_every = 3,
					   .checkpoint_interval_usec = 3600 * SEC,
					   .checkpoint_when_idle = true };
	struct cordon_broker_decision dec;
	struct cordon_audit_report rep;
	struct cordon_decide_request rr = {
		.session = "s1", .connector = "fs", .tool = "read_file", .fingerprint = bt_fp(t, "read_file")
	};
	int before;

	assert_int_equal(cordon_note_signer_new_from_seed("cordon-test", seed, &s), 0);
	cordon_note_signer_verifier(s, &t->verifier);
	assert_int_equal(cordon_audit_setup(t->db, &ao, s, NULL), 0);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	before = count_checkpoints(t);
	/* Nothing pending yet. */
	assert_int_equal(cordon_audit_checkpoint_pending(t->db), 0);
	for (int i = 1; i <= 7; i++) {
		assert_int_equal(cordon_broker_decide(t->db, &rr, &dec), 0);
		assert_int_equal(dec.decision.verdict, CORDON_VERDICT_ALLOW);
	}
	assert_int_equal(count_checkpoints(t), before);
	assert_int_equal(cordon_audit_checkpoint_pending(t->db), 1);
	assert_int_equal(count_checkpoints(t), before + 1);
	assert_int_equal(cordon_audit_checkpoint_pending(t->db), 0);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
	assert_int_equal(rep.signed_through, rep.last);
}

static void test_commit_failure_fails_closed(void **state)
{
	struct bt *t = *state;
	struct bt_call w;
	char id[CORDON_ID_STRING_MAX];
	struct cordon_approval_info info;
	uint64_t before;

	bt_call_init(t, &w, "s1", "write_file", "{\"path\":\"/a\"}");
	bt_approve(t, &w.call, id);
	before = last_seq(t);
	cordon_db_inject_faults(t->db, CORDON_DB_FAULT_COMMIT);
	assert_int_equal(bt_begin(t, &w.call, id, NULL, NULL), -EIO);
	cordon_db_inject_faults(t->db, 0);
	assert_int_equal(last_seq(t), before);
	assert_int_equal(cordon_approval_get(t->db, id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_APPROVED);
	/* The in-memory Merkle state did not run ahead: checkpoints verify. */
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	assert_int_equal(verify(t).verdict, CORDON_AUDIT_PASS);
	bt_call_done(&w);
}

static void test_signing_key_file_created_0600(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_options ao = { .origin = "cordon.test/audit" };
	struct cordon_note_verifier v;
	struct cordon_diag d = {};
	char kp[4096];
	struct stat st;

	snprintf(kp, sizeof(kp), "%s/audit.key", t->dir);
	if (cordon_audit_setup_key_file(t->db, &ao, kp, "cordon-test-file", &v, &d) < 0)
		fail_msg("%s", d.message);
	assert_int_equal(stat(kp, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	add_events(t, 2);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	t->verifier = v;
	assert_int_equal(verify(t).verdict, CORDON_AUDIT_PASS);
}

static void test_verify_without_key_is_bad_sig(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_report rep;

	add_events(t, 2);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	assert_int_equal(cordon_audit_verify(t->db, NULL, &rep), 0);
	assert_int_equal(rep.verdict, CORDON_AUDIT_BAD_SIG);
}

/* A second handle on the same file, set up as bt_setup_audit() does (same
 * key, same origin), checkpointing every `every` records. */
static struct cordon_db *open_second_handle(struct bt *t, uint64_t every)
{
	static const uint8_t seed[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct cordon_db_options o = { .clock = &t->clock.clock, .busy_timeout_ms = 200 };
	struct cordon_audit_options ao = { .origin = "cordon.test/audit",
					   .checkpoint_every = every,
					   .checkpoint_interval_usec = 3600 * SEC };
	struct cordon_note_signer *s = NULL;
	struct cordon_db *db = NULL;
	struct cordon_diag d = {};

	if (cordon_db_open(t->path, &o, &db, &d) < 0)
		fail_msg("second handle: %s", d.message);
	assert_int_equal(cordon_note_signer_new_from_seed("cordon-test", seed, &s), 0);
	if (cordon_audit_setup(db, &ao, s, &d) < 0)
		fail_msg("audit setup on the second handle: %s", d.message);
	return db;
}

static void append_via(struct cordon_db *db, struct bt *t, int n)
{
	for (int i = 0; i < n; i++) {
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_DECISION,
						 .actor = &t->s1,	  .connector = "fs",
						 .tool = "read_file",	  .tier = CORDON_RISK_READ,
						 .decision = "allow" };
		assert_int_equal(cordon_audit_append(db, &ev), 0);
	}
}

/* Each handle caches the Merkle state; appends through A, then B, then A
 * must all chain, and checkpoints either handle signs must match the
 * records on disk (each handle folds in what the other appended). */
static void test_two_handles_interleaved_keep_chain(void **state)
{
	struct bt *t = *state;
	struct cordon_db *b;
	struct cordon_db_counters ca, cb;
	struct cordon_audit_report rep;

	bt_setup_audit(t, 3, 3600 * SEC);
	b = open_second_handle(t, 3);
	append_via(t->db, t, 2);
	append_via(b, t, 4);	 /* B folds in A's records; a checkpoint falls due in B */
	append_via(t->db, t, 5); /* A folds in B's records and checkpoints */
	append_via(b, t, 1);
	assert_int_equal(cordon_audit_checkpoint(b), 1);
	append_via(t->db, t, 1);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	cordon_db_get_counters(t->db, &ca);
	cordon_db_get_counters(b, &cb);
	assert_int_equal(ca.audit_append_failures, 0);
	assert_int_equal(cb.audit_append_failures, 0);
	cordon_db_close(b);

	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
	assert_int_equal(rep.last, last_seq(t));
	assert_int_equal(rep.signed_through, rep.last);
	assert_true(rep.n_checkpoints >= 4);
}

/* Rows of the audit table as another connection sees them: only what has
 * committed. */
static int64_t committed_records(struct bt *t)
{
	sqlite3 *s = NULL;
	sqlite3_stmt *st = NULL;
	int64_t n;

	assert_int_equal(sqlite3_open_v2(t->path, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(s, "SELECT count(*) FROM audit", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(s);
	return n;
}

/* Group commit (cordond): decisions in one batch share a transaction, and
 * the batch's outcome is what the caller waits for before sending anything.
 * A decision's record is on disk (visible to another connection) exactly
 * when its batch reports committed; a durable transaction that begins
 * while a batch is open commits the batch first; a failed commit is
 * reported for the batch (the caller then fails closed above read) and
 * leaves the log and the Merkle state as they were; a second writer's
 * records are folded in as with single decisions. */
static void test_batched_decisions_count_only_once_committed(void **state)
{
	struct bt *t = *state;
	struct cordon_decide_request wr = {
		.session = "s1", .connector = "fs", .tool = "write_file", .fingerprint = bt_fp(t, "write_file")
	};
	struct cordon_decide_request rr = {
		.session = "s1", .connector = "fs", .tool = "read_file", .fingerprint = bt_fp(t, "read_file")
	};
	struct cordon_broker_decision dec;
	struct cordon_db_counters ca, cb;
	uint64_t b1, b2, b3, b;
	struct cordon_db *other;
	int64_t before;

	bt_setup_audit(t, 1000, 3600 * SEC);
	other = open_second_handle(t, 1000);
	before = committed_records(t);

	/* Three decisions, one batch, nothing visible before the commit. */
	assert_int_equal(cordon_broker_decide_batched(t->db, &rr, &dec, &b1), 0);
	assert_int_equal(dec.decision.verdict, CORDON_VERDICT_ALLOW);
	assert_int_equal(cordon_broker_decide_batched(t->db, &wr, &dec, &b), 0);
	assert_int_equal(dec.decision.verdict, CORDON_VERDICT_APPROVE);
	assert_int_equal(b, b1);
	assert_int_equal(cordon_broker_decide_batched(t->db, &rr, &dec, &b), 0);
	assert_int_equal(b, b1);
	assert_int_equal(cordon_decide_batch_result(t->db, b1), -EINPROGRESS);
	assert_int_equal(committed_records(t), before);
	assert_int_equal(cordon_decide_batch_commit(t->db), 0);
	assert_int_equal(cordon_decide_batch_result(t->db, b1), 0);
	assert_int_equal(committed_records(t), before + 3);

	/* A durable transaction on the handle commits the open batch first. */
	assert_int_equal(cordon_broker_decide_batched(t->db, &wr, &dec, &b2), 0);
	assert_true(b2 > b1);
	append_via(t->db, t, 1);
	assert_int_equal(cordon_decide_batch_result(t->db, b2), 0);
	assert_int_equal(committed_records(t), before + 5);
	assert_int_equal(cordon_decide_batch_commit(t->db), 0); /* nothing open */

	/* Another writer between batches: folded in, the chain holds. */
	append_via(other, t, 2);
	assert_int_equal(cordon_broker_decide_batched(t->db, &rr, &dec, &b), 0);
	assert_int_equal(cordon_broker_decide_batched(t->db, &rr, &dec, &b), 0);
	assert_int_equal(cordon_decide_batch_commit(t->db), 0);
	assert_int_equal(cordon_decide_batch_result(t->db, b), 0);
	append_via(other, t, 1);
	assert_int_equal(committed_records(t), before + 10);

	/* A grant removed between two decisions of read_file (its FULL
	 * transaction commits the batch first): the second sees it, though
	 * the first's snapshot was kept for the batch. */
	assert_int_equal(cordon_broker_decide_batched(t->db, &rr, &dec, &b), 0);
	assert_int_equal(dec.decision.verdict, CORDON_VERDICT_ALLOW);
	assert_int_equal(cordon_grant_remove(t->db, &t->op, "fs", "read_file"), 0);
	assert_int_equal(cordon_decide_batch_result(t->db, b), 0);
	assert_int_equal(cordon_broker_decide_batched(t->db, &rr, &dec, &b), 0);
	assert_int_equal(dec.decision.verdict, CORDON_VERDICT_DENY);
	assert_int_equal(cordon_decide_batch_commit(t->db), 0);
	assert_int_equal(cordon_grant_add(t->db, &t->op, "fs", "read_file"), 0);
	assert_int_equal(cordon_broker_decide_batched(t->db, &rr, &dec, &b), 0);
	assert_int_equal(dec.decision.verdict, CORDON_VERDICT_ALLOW);
	assert_int_equal(cordon_decide_batch_commit(t->db), 0);
	before = committed_records(t) - 10; /* the count the failed batch below must leave */

	/* A batch whose commit fails: reported, nothing written, the
	 * in-memory state did not run ahead. */
	assert_int_equal(cordon_broker_decide_batched(t->db, &wr, &dec, &b3), 0);
	cordon_db_inject_faults(t->db, CORDON_DB_FAULT_COMMIT);
	assert_int_equal(cordon_decide_batch_commit(t->db), -EIO);
	cordon_db_inject_faults(t->db, 0);
	assert_int_equal(cordon_decide_batch_result(t->db, b3), -EIO);
	assert_int_equal(cordon_decide_batch_result(t->db, b2), 0);
	assert_int_equal(committed_records(t), before + 10);

	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	cordon_db_get_counters(t->db, &ca);
	cordon_db_get_counters(other, &cb);
	assert_int_equal(ca.audit_append_failures, 0);
	assert_int_equal(cb.audit_append_failures, 0);
	cordon_db_close(other);
	assert_int_equal(verify(t).verdict, CORDON_AUDIT_PASS);
	assert_int_equal((int64_t)last_seq(t), committed_records(t));
}

/* A record another writer added that does not chain is corruption, not a
 * second writer: the append fails closed, and verify names the record. */
static void test_foreign_record_that_does_not_chain_fails_closed(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_DECISION,
					 .actor = &t->s1,	  .connector = "fs",
					 .tool = "read_file",	  .tier = CORDON_RISK_READ,
					 .decision = "allow" };
	struct cordon_db_counters c0, c1;
	char sql[300];
	uint64_t n;
	sqlite3 *s;

	add_events(t, 2);
	n = last_seq(t) + 1;
	s = raw_open(t);
	snprintf(sql, sizeof(sql),
		 "BEGIN IMMEDIATE; INSERT INTO audit(seq, record, leaf) VALUES (%llu, x'7b7d', zeroblob(32));"
		 "UPDATE meta SET value = %llu WHERE key = 'audit_last_seq'; COMMIT;",
		 (unsigned long long)n, (unsigned long long)n);
	raw_exec(s, sql);
	sqlite3_close(s);
	cordon_db_get_counters(t->db, &c0);
	assert_int_equal(cordon_audit_append(t->db, &ev), -EBADMSG);
	assert_non_null(strstr(cordon_db_last_error(t->db), "does not chain"));
	assert_int_equal(cordon_audit_checkpoint(t->db), -EBADMSG);
	cordon_db_get_counters(t->db, &c1);
	assert_true(c1.audit_append_failures >= c0.audit_append_failures + 2);
	assert_int_equal(last_seq(t), n);
	assert_int_equal(verify(t).verdict, CORDON_AUDIT_BREAK);
}

/* The record this handle last appended, rewritten behind its back (stored
 * hash included): the handle refuses to chain to it. */
static void test_own_tail_rewritten_fails_closed(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_DECISION,
					 .actor = &t->s1,	  .connector = "fs",
					 .tool = "read_file",	  .tier = CORDON_RISK_READ,
					 .decision = "allow" };
	sqlite3 *s;

	add_events(t, 3);
	s = raw_open(t);
	raw_exec(s, "UPDATE audit SET leaf = zeroblob(32) WHERE id = (SELECT max(id) FROM audit)");
	sqlite3_close(s);
	assert_int_equal(cordon_audit_append(t->db, &ev), -EBADMSG);
	assert_non_null(strstr(cordon_db_last_error(t->db), "changed after this handle read it"));
}

/* Two processes appending at the same time, both checkpointing: the write
 * lock serialises them and each folds in the other's records, so every
 * append succeeds and the log verifies. */
static void test_two_processes_append_concurrently(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_report rep;
	uint64_t before;
	pid_t pid;
	int st;

	bt_setup_audit(t, 7, 3600 * SEC);
	before = last_seq(t);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* No cmocka asserts in the child: its exit status says it all. */
		static const uint8_t seed[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
		struct cordon_db_options o = { .busy_timeout_ms = 10000 };
		struct cordon_audit_options ao = { .origin = "cordon.test/audit", .checkpoint_every = 7 };
		struct cordon_note_signer *s = NULL;
		struct cordon_db *db = NULL;
		struct cordon_diag d = {};

		if (cordon_db_open(t->path, &o, &db, &d) < 0 ||
		    cordon_note_signer_new_from_seed("cordon-test", seed, &s) < 0 ||
		    cordon_audit_setup(db, &ao, s, &d) < 0)
			_exit(2);
		for (int i = 0; i < 60; i++) {
			struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,  .event = CORDON_AUDIT_DECISION,
							 .connector = "fs",	   .tool = "read_file",
							 .tier = CORDON_RISK_READ, .decision = "allow" };
			if (cordon_audit_append(db, &ev) < 0)
				_exit(3);
		}
		cordon_db_close(db);
		_exit(0);
	}
	for (int i = 0; i < 60; i++) {
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_DECISION,
						 .actor = &t->s1,	  .connector = "fs",
						 .tool = "read_file",	  .tier = CORDON_RISK_READ,
						 .decision = "allow" };
		int r = cordon_audit_append(t->db, &ev);

		if (r < 0) {
			(void)waitpid(pid, &st, 0);
			fail_msg("append %d: %s (%s)", i, strerror(-r), cordon_db_last_error(t->db));
		}
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_true(cordon_audit_checkpoint(t->db) >= 0); /* 0: the last append was a checkpoint */
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
	/* 120 decisions plus the checkpoint records. */
	assert_true(last_seq(t) >= before + 120 + 120 / 7);
	assert_int_equal(rep.signed_through, rep.last);
}

/* Issue 11 finding 9: someone without the key deletes the signed
 * checkpoints (so that records they cover can be rewritten and re-chained);
 * the "checkpoint" records left in the chain name what is missing. */
static void test_checkpoint_record_without_its_note_is_missing_checkpoint(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_report rep;
	uint64_t first;
	char line[300], want[300];
	sqlite3 *s;

	add_events(t, 3);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	first = last_seq(t);
	add_events(t, 2);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	assert_int_equal(verify(t).verdict, CORDON_AUDIT_PASS);
	s = raw_open(t);
	raw_exec(s, "DELETE FROM checkpoints");
	sqlite3_close(s);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_MISSING_CHECKPOINT);
	assert_int_equal(rep.n_checkpoints, 0);
	cordon_audit_report_format(&rep, line, sizeof(line));
	snprintf(want, sizeof(want),
		 "MISSING-CHECKPOINT at seq %llu: record %llu is a checkpoint record but its signed checkpoint (size "
		 "%llu) is missing",
		 (unsigned long long)first, (unsigned long long)first, (unsigned long long)first);
	assert_string_equal(line, want);
	/* Without a key to check signatures with, the same. */
	assert_int_equal(cordon_audit_verify(t->db, NULL, &rep), 0);
	assert_int_equal(rep.verdict, CORDON_AUDIT_MISSING_CHECKPOINT);
}

/* Deleting only the newest signed checkpoint is found too. */
static void test_newest_checkpoint_deleted_is_missing_checkpoint(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_report rep;
	uint64_t second;
	sqlite3 *s;

	add_events(t, 3);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	add_events(t, 2);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	second = last_seq(t);
	s = raw_open(t);
	raw_exec(s, "DELETE FROM checkpoints WHERE id = (SELECT max(id) FROM checkpoints)");
	sqlite3_close(s);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_MISSING_CHECKPOINT);
	assert_int_equal(rep.seq, second);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* /health's view of the log: last sequence and the newest checkpoint. */
static void test_audit_position(void **state)
{
	struct bt *t = *state;
	int64_t seq = -1, size = -1, time = -1, meta = 0;

	assert_int_equal(cordon_audit_position(t->db, &seq, &size, &time), 0);
	assert_int_equal(cordon_db_meta_get(t->db, "audit_last_seq", &meta), 0);
	assert_int_equal(seq, meta);
	assert_true(seq > 0);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	assert_int_equal(cordon_audit_position(t->db, &seq, &size, &time), 0);
	assert_int_equal(cordon_db_meta_get(t->db, "audit_last_seq", &meta), 0);
	assert_int_equal(seq, meta);
	assert_int_equal(size, seq);
	assert_int_equal(time, (int64_t)cordon_db_now(t->db));
}

/* audit.tail's records from the core: the newest, oldest first, decoded;
 * a record that is not JCS any more is shown as its text. */
static void test_audit_tail(void **state)
{
	struct bt *t = *state;
	json_t *arr = NULL;
	uint64_t last;
	sqlite3 *s;

	add_events(t, 3);
	last = last_seq(t);
	assert_int_equal(cordon_audit_tail(t->db, 2, &arr), 0);
	assert_int_equal(json_array_size(arr), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(arr, 0), "seq")), last - 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(arr, 1), "seq")), last);
	assert_string_equal(json_string_value(json_object_get(json_array_get(arr, 1), "decision")), "allow");
	json_decref(arr);
	assert_int_equal(cordon_audit_tail(t->db, 1000, &arr), 0);
	assert_int_equal(json_array_size(arr), last);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(arr, 0), "seq")), 1);
	json_decref(arr);
	assert_int_equal(cordon_audit_tail(t->db, 0, &arr), 0);
	assert_int_equal(json_array_size(arr), 0);
	json_decref(arr);

	s = raw_open(t);
	raw_exec(s, "UPDATE audit SET record = CAST('{not json' AS BLOB) WHERE id = (SELECT max(id) FROM audit)");
	sqlite3_close(s);
	assert_int_equal(cordon_audit_tail(t->db, 1, &arr), 0);
	assert_int_equal(json_array_size(arr), 1);
	assert_string_equal(json_string_value(json_array_get(arr, 0)), "{not json");
	json_decref(arr);
}

/* Retention: records deleted up to a signed checkpoint, verify passes and
 * names the pruned range; later checkpoints still check; a reopened handle
 * keeps appending and signing; deleting more by hand is still a gap. */
static void test_retention_prunes_to_checkpoint_and_verifies(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_retention pol = { .retain_records = 3 };
	struct cordon_audit_prune_result res;
	struct cordon_audit_report rep;
	uint64_t cp1, cp2, n;
	char line[300], want[300];
	json_t *arr = NULL;
	sqlite3 *s;

	add_events(t, 10);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	cp1 = last_seq(t);
	add_events(t, 10);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	cp2 = last_seq(t);
	add_events(t, 3);
	n = last_seq(t);
	assert_true(cp1 < cp2 && cp2 < n);

	/* keep the newest 3: records 1..n-3 = 1..cp2 may go; the cut rounds
	 * down to cp2 (record cp2, the checkpoint record, stays) */
	assert_int_equal(cordon_audit_prune(t->db, &pol, &res), 0);
	assert_int_equal(res.deleted, cp2 - 1);
	assert_int_equal(res.pruned_through, cp2 - 1);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
	assert_int_equal(rep.pruned_through, cp2 - 1);
	assert_int_equal(rep.first, cp2);
	assert_int_equal(rep.last, n + 1); /* the retention record */
	assert_int_equal(rep.signed_through, cp2);
	cordon_audit_report_format(&rep, line, sizeof(line));
	snprintf(want, sizeof(want),
		 "PASS: records %llu..%llu (1..%llu pruned by retention), signed through %llu, "
		 "unsigned tail %llu..%llu",
		 (unsigned long long)cp2, (unsigned long long)n + 1, (unsigned long long)cp2 - 1,
		 (unsigned long long)cp2, (unsigned long long)cp2 + 1, (unsigned long long)n + 1);
	assert_string_equal(line, want);
	/* the retention record says how many went, attributed to the system */
	assert_int_equal(cordon_audit_tail(t->db, 1, &arr), 0);
	assert_string_equal(json_string_value(json_object_get(json_array_get(arr, 0), "event")), "retention");
	assert_string_equal(json_string_value(json_object_get(json_array_get(arr, 0), "reason")), "audit-log");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(arr, 0), "count")), cp2 - 1);
	json_decref(arr);
	/* nothing more is due until a newer checkpoint exists */
	assert_int_equal(cordon_audit_prune(t->db, &pol, &res), 0);
	assert_int_equal(res.deleted, 0);

	/* a new handle rebuilds its Merkle state from the stored one: it
	 * appends and signs, and every checkpoint still verifies */
	cordon_db_close(t->db);
	t->db = NULL;
	bt_open_db(t);
	bt_setup_audit(t, 1000, 3600 * SEC);
	add_events(t, 4);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_PASS);
	assert_int_equal(rep.signed_through, rep.last);
	assert_int_equal(rep.n_checkpoints, 3);

	/* records deleted by hand beyond the pruned range: a gap, as before */
	s = raw_open(t);
	raw_exec(s, "DELETE FROM audit WHERE seq = (SELECT min(seq) FROM audit)");
	sqlite3_close(s);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_GAP);
	assert_int_equal(rep.seq, cp2);
}

/* By age: only records older than the limit go, rounded to a checkpoint. */
static void test_retention_by_age(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_retention pol = { .retain_usec = 24 * 3600 * CORDON_USEC_PER_SEC };
	struct cordon_audit_prune_result res;
	uint64_t cp1;

	add_events(t, 5);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	cp1 = last_seq(t);
	add_events(t, 5);
	/* nothing is a day old yet */
	assert_int_equal(cordon_audit_prune(t->db, &pol, &res), 0);
	assert_int_equal(res.deleted, 0);
	cordon_virtual_clock_advance(&t->clock, 2 * 24 * 3600 * CORDON_USEC_PER_SEC);
	add_events(t, 1);
	/* everything before the newest record is old, but the newest
	 * checkpoint covering only old records is cp1 */
	assert_int_equal(cordon_audit_prune(t->db, &pol, &res), 0);
	assert_int_equal(res.deleted, cp1 - 1);
	assert_int_equal(verify(t).verdict, CORDON_AUDIT_PASS);
}

/* A tampered record inside the range to prune: nothing is deleted. */
static void test_retention_refuses_a_log_that_does_not_verify(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_retention pol = { .retain_records = 1 };
	struct cordon_audit_prune_result res;
	int64_t before, after;
	sqlite3 *s;

	add_events(t, 6);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	add_events(t, 2);
	s = raw_open(t);
	raw_exec(s, "UPDATE audit SET record = CAST(replace(CAST(record AS TEXT), 'allow', 'deny!') AS BLOB) "
		    "WHERE seq = (SELECT min(seq) FROM audit WHERE instr(CAST(record AS TEXT), 'allow') > 0)");
	sqlite3_close(s);
	assert_int_equal(cordon_db_meta_get(t->db, "audit_last_seq", &before), 0);
	assert_int_equal(cordon_audit_prune(t->db, &pol, &res), -EBADMSG);
	assert_int_equal(cordon_db_meta_get(t->db, "audit_last_seq", &after), 0);
	assert_int_equal(before, after);
	assert_int_equal(verify(t).verdict, CORDON_AUDIT_BREAK);
	/* no policy: refused */
	assert_int_equal(cordon_audit_prune(t->db, &(struct cordon_audit_retention){}, &res), -EINVAL);
}

/* A forged pruned state (someone deletes records and claims retention):
 * the checkpoint of the first kept record does not match it. */
static void test_forged_pruned_state_is_break(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_report rep;
	uint64_t cp1;
	char sql[256];
	sqlite3 *s;

	add_events(t, 6);
	assert_int_equal(cordon_audit_checkpoint(t->db), 1);
	cp1 = last_seq(t);
	add_events(t, 2);
	s = raw_open(t);
	snprintf(sql, sizeof(sql),
		 "DELETE FROM audit WHERE seq < %llu; INSERT INTO audit_pruned VALUES (1, %llu, zeroblob(%d), 0)",
		 (unsigned long long)cp1, (unsigned long long)cp1 - 1, __builtin_popcountll(cp1 - 1) * 32);
	raw_exec(s, sql);
	sqlite3_close(s);
	rep = verify(t);
	assert_int_equal(rep.verdict, CORDON_AUDIT_BREAK);
	assert_int_equal(rep.seq, cp1);
	/* deleting to a point no checkpoint vouches for is refused too */
	s = raw_open(t);
	snprintf(sql, sizeof(sql), "DELETE FROM audit WHERE seq < %llu; UPDATE audit_pruned SET through = %llu",
		 (unsigned long long)cp1 + 1, (unsigned long long)cp1);
	raw_exec(s, sql);
	sqlite3_close(s);
	assert_int_not_equal(verify(t).verdict, CORDON_AUDIT_PASS);
}

/* Export: pages, resumes by seq, filters by time; the line's hash is the
 * record's leaf hash. */
static void test_export_pages_and_filters(void **state)
{
	struct bt *t = *state;
	struct cordon_audit_export_query q = { .limit = 4 };
	json_t *page = NULL, *recs, *r0;
	uint64_t mid, n, base = last_seq(t);
	char tbuf[CORDON_TIME_STRING_MAX];

	add_events(t, 5);
	cordon_virtual_clock_advance(&t->clock, 3600 * CORDON_USEC_PER_SEC);
	mid = cordon_clock_now(&t->clock.clock);
	add_events(t, 5);
	n = last_seq(t);

	/* from the start, by pages of 4 */
	assert_int_equal(cordon_audit_export(t->db, &q, &page), 0);
	assert_int_equal(json_array_size(json_object_get(page, "records")), 4);
	assert_int_equal(
		json_integer_value(json_object_get(json_array_get(json_object_get(page, "records"), 0), "seq")), 1);
	json_decref(page);
	q.after_seq = base;
	assert_int_equal(cordon_audit_export(t->db, &q, &page), 0);
	recs = json_object_get(page, "records");
	assert_int_equal(json_array_size(recs), 4);
	r0 = json_array_get(recs, 0);
	assert_int_equal(json_integer_value(json_object_get(r0, "seq")), base + 1);
	assert_non_null(json_object_get(r0, "time"));
	assert_non_null(json_object_get(r0, "actor"));
	assert_null(json_object_get(r0, "v"));
	assert_int_equal(strlen(json_string_value(json_object_get(r0, "hash"))), 64);
	assert_int_equal(json_integer_value(json_object_get(page, "next_seq")), base + 4);
	assert_int_equal(json_integer_value(json_object_get(page, "last_seq")), n);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(json_array_get(recs, 3), "fields"), "decision")),
		"allow");
	/* the hash of record 1 is what record 2 chains to */
	assert_string_equal(json_string_value(json_object_get(r0, "hash")),
			    json_string_value(json_object_get(json_array_get(recs, 1), "prev")));
	json_decref(page);

	/* resume after base + 4, since the middle: the second batch only */
	q = (struct cordon_audit_export_query){ .after_seq = base + 4, .since_usec = mid };
	assert_int_equal(cordon_audit_export(t->db, &q, &page), 0);
	recs = json_object_get(page, "records");
	/* the five (and a checkpoint record that may have fallen due) */
	assert_true(json_array_size(recs) >= 5 && json_array_size(recs) <= 6);
	assert_true(json_integer_value(json_object_get(json_array_get(recs, 0), "seq")) >= (json_int_t)base + 6);
	cordon_time_format(mid, tbuf, sizeof(tbuf));
	assert_true(strcmp(json_string_value(json_object_get(json_array_get(recs, 0), "time")), tbuf) >= 0);
	assert_int_equal(json_integer_value(json_object_get(page, "next_seq")), n);
	assert_false(json_is_true(json_object_get(page, "end")));
	json_decref(page);

	/* until just before the middle: the first batch, then the end */
	q = (struct cordon_audit_export_query){ .after_seq = base, .until_usec = mid - 1 };
	assert_int_equal(cordon_audit_export(t->db, &q, &page), 0);
	recs = json_object_get(page, "records");
	/* the five, and a checkpoint record that may have fallen due */
	assert_true(json_array_size(recs) >= 5 && json_array_size(recs) <= 6);
	cordon_time_format(mid, tbuf, sizeof(tbuf));
	assert_true(strcmp(json_string_value(json_object_get(json_array_get(recs, json_array_size(recs) - 1), "time")),
			   tbuf) < 0);
	assert_true(json_is_true(json_object_get(page, "end")));
	json_decref(page);

	/* time parsing: what the records carry, and strictly nothing else */
	assert_int_equal(cordon_time_parse(cordon_time_format(mid, tbuf, sizeof(tbuf)), &n), 0);
	assert_int_equal(n, mid);
	assert_int_equal(cordon_time_parse("2026-01-02", &n), 0);
	assert_int_equal(n, UINT64_C(1767312000) * CORDON_USEC_PER_SEC);
	assert_int_equal(cordon_time_parse("2026-01-02T03:04:05Z", &n), 0);
	assert_int_equal(n, (UINT64_C(1767312000) + 3 * 3600 + 4 * 60 + 5) * CORDON_USEC_PER_SEC);
	assert_int_equal(cordon_time_parse("2024-02-29T00:00:00.5Z", &n), 0);
	assert_int_equal(n % CORDON_USEC_PER_SEC, 500000);
	assert_int_equal(cordon_time_parse("2026-01-02T03:04:05", &n), -EINVAL);
	assert_int_equal(cordon_time_parse("2026-01-02T03:04:05+01:00", &n), -EINVAL);
	assert_int_equal(cordon_time_parse("2025-02-29", &n), -EINVAL);
	assert_int_equal(cordon_time_parse("2026-13-01", &n), -EINVAL);
	assert_int_equal(cordon_time_parse("2026-01-02T24:00:00Z", &n), -EINVAL);
	assert_int_equal(cordon_time_parse("2026-01-02T03:04:05.1234567Z", &n), -EINVAL);
	assert_int_equal(cordon_time_parse("yesterday", &n), -EINVAL);
	assert_int_equal(cordon_time_parse("", &n), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_audit_tail),
		T(test_retention_prunes_to_checkpoint_and_verifies),
		T(test_retention_by_age),
		T(test_retention_refuses_a_log_that_does_not_verify),
		T(test_forged_pruned_state_is_break),
		T(test_export_pages_and_filters),
		T(test_batched_decisions_count_only_once_committed),
		T(test_audit_position),
		T(test_pass_with_range_and_no_tail_after_checkpoint),
		T(test_pass_reports_unsigned_tail),
		T(test_tampered_record_is_break),
		T(test_tampered_record_and_leaf_is_break_at_successor),
		T(test_deleted_record_is_gap),
		T(test_reordered_records_are_break),
		T(test_duplicated_record_is_duplicate),
		T(test_truncated_signed_tail_is_truncation),
		T(test_truncated_unsigned_tail_is_truncation),
		T(test_forged_checkpoint_is_bad_sig),
		T(test_altered_checkpoint_is_bad_sig),
		T(test_checkpoint_root_mismatch_is_break),
		T(test_checkpoint_every_n_records),
		T(test_read_decisions_sign_due_checkpoints_after_commit),
		T(test_when_idle_due_checkpoint_waits_for_the_caller),
		T(test_checkpoint_every_t_seconds),
		T(test_shutdown_signs_everything),
		T(test_merkle_state_survives_reopen),
		T(test_refused_begin_rolls_back_and_is_audited),
		T(test_record_holds_binding_prefix_only),
		T(test_no_argument_or_result_reaches_the_database_file),
		T(test_audit_failure_fails_closed_above_read),
		T(test_commit_failure_fails_closed),
		T(test_signing_key_file_created_0600),
		T(test_verify_without_key_is_bad_sig),
		T(test_two_handles_interleaved_keep_chain),
		T(test_foreign_record_that_does_not_chain_fails_closed),
		T(test_own_tail_rewritten_fails_closed),
		T(test_two_processes_append_concurrently),
		T(test_checkpoint_record_without_its_note_is_missing_checkpoint),
		T(test_newest_checkpoint_deleted_is_missing_checkpoint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
