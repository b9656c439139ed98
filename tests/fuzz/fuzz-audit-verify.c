/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: cordon_audit_verify() over an audit table and a
 * checkpoints table an attacker controls. The input is split on '\n' into
 * records (a line starting with '#' is a checkpoint note whose "\\n" escapes
 * become newlines instead). verify must never crash, leak or misreport: a PASS
 * means every record chains and every checkpoint verified. */

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "checkpoint.h"
#include "db.h"
#include "merkle.h"

static struct cordon_db *db;
static sqlite3 *raw;
static struct cordon_note_verifier verifier;
static char dir[] = "/tmp/cordon-fuzz-audit-XXXXXX", path[64];

/* At exit: the database, its WAL and shared-memory files, the directory. */
static void cleanup(void)
{
	static const char *const suffix[] = { "", "-wal", "-shm" };
	char p[80];

	sqlite3_close(raw);
	cordon_db_close(db);
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", path, suffix[i]);
		(void)unlink(p);
	}
	(void)rmdir(dir);
}

static void init(void)
{
	static const uint8_t seed[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct cordon_note_signer *s = NULL;

	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/state.db", dir);
	atexit(cleanup);
	if (cordon_db_open(path, NULL, &db, NULL) < 0)
		abort();
	if (cordon_note_signer_new_from_seed("cordon-test", seed, &s) < 0)
		abort();
	cordon_note_signer_verifier(s, &verifier);
	cordon_note_signer_free(s);
	if (sqlite3_open(path, &raw) != SQLITE_OK ||
	    sqlite3_exec(raw, "PRAGMA synchronous = OFF", NULL, NULL, NULL) != SQLITE_OK)
		abort();
}

static void insert_record(const uint8_t *p, size_t n, int64_t seq)
{
	sqlite3_stmt *st = NULL;
	uint8_t leaf[32];

	cordon_merkle_leaf_hash(p, n, leaf);
	if (sqlite3_prepare_v2(raw, "INSERT INTO audit(seq, record, leaf) VALUES (?1, ?2, ?3)", -1, &st, NULL) !=
	    SQLITE_OK)
		abort();
	sqlite3_bind_int64(st, 1, seq);
	sqlite3_bind_blob(st, 2, p, (int)n, SQLITE_STATIC);
	sqlite3_bind_blob(st, 3, leaf, 32, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		abort();
	sqlite3_finalize(st);
}

static void insert_note(const uint8_t *p, size_t n)
{
	sqlite3_stmt *st = NULL;
	char *buf = malloc(n + 1);
	size_t o = 0;

	if (!buf)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\\' && i + 1 < n && p[i + 1] == 'n') {
			buf[o++] = '\n';
			i++;
		} else
			buf[o++] = (char)p[i];
	}
	if (sqlite3_prepare_v2(raw, "INSERT INTO checkpoints(size, root, note, created_at) VALUES (0, x'', ?1, 0)", -1,
			       &st, NULL) != SQLITE_OK)
		abort();
	sqlite3_bind_blob(st, 1, buf, (int)o, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_DONE)
		abort();
	sqlite3_finalize(st);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cordon_audit_report rep;
	int64_t n_records = 0;
	size_t start = 0;

	if (!db)
		init();
	if (sqlite3_exec(raw, "BEGIN; DELETE FROM audit; DELETE FROM checkpoints;", NULL, NULL, NULL) != SQLITE_OK)
		abort();
	for (size_t i = 0; i <= size && n_records < 256; i++) {
		if (i < size && data[i] != '\n')
			continue;
		if (i > start) {
			if (data[start] == '#')
				insert_note(data + start + 1, i - start - 1);
			else
				insert_record(data + start, i - start, ++n_records);
		}
		start = i + 1;
	}
	{
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(raw, "UPDATE meta SET value = ?1 WHERE key = 'audit_last_seq'", -1, &st, NULL) !=
		    SQLITE_OK)
			abort();
		sqlite3_bind_int64(st, 1, n_records);
		sqlite3_step(st);
		sqlite3_finalize(st);
	}
	if (sqlite3_exec(raw, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		abort();
	if (cordon_audit_verify(db, &verifier, &rep) < 0)
		abort();
	/* A PASS covers exactly the records present. */
	if (rep.verdict == CORDON_AUDIT_PASS && rep.last != (uint64_t)n_records)
		abort();
	return 0;
}
