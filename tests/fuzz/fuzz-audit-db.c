/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target (complements fuzz-audit-verify, which writes attacker rows
 * into an empty log): the audit verifier (broker/lib/audit.c,
 * cordon_audit_verify) on corrupted databases.
 *
 * Once, at start: a small valid audit log is built with the real broker API
 * (records of several event types, a signed checkpoint, more records after
 * it) and its database file is kept in memory. Per input, the first byte
 * picks how to corrupt a fresh copy:
 *   even: byte-level — the rest is (offset hi, offset lo, xor) triples
 *         applied to the file image (SQLite may refuse the file: fine);
 *   odd:  row-level  — the rest is a program of edits made with a separate
 *         SQLite connection, as an attacker with the file would: replace a
 *         record's or a leaf's bytes, change a seq, delete, duplicate, swap
 *         two rows, replace or delete a checkpoint note.
 * Then the database is opened with cordon_db_open() and verified. Property:
 * no crash, no leak, no UB; verify returns 0 with a report whose verdict is
 * one of the defined values, or -errno; an untouched copy is PASS. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "actor.h"
#include "audit.h"
#include "checkpoint.h"
#include "db.h"

static char dir[] = "/tmp/cordon-fuzz-auditdb-XXXXXX";
static char path[256];
static uint8_t *image;
static size_t image_len;
static struct cordon_note_verifier verifier;

static void cleanup(void)
{
	char p[300];

	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
	rmdir(dir);
}

static void build_golden(void)
{
	static const uint8_t seed[32] = { 7, 7, 7 };
	struct cordon_actor sys = cordon_actor_system(), s1 = cordon_actor_session("s1"),
			    op = cordon_actor_operator(0, "fuzz");
	struct cordon_audit_options ao = { .origin = "cordon.fuzz/audit",
					   .checkpoint_every = 1000,
					   .checkpoint_interval_usec = 3600ULL * 1000000 };
	struct cordon_note_signer *signer = NULL;
	struct cordon_db *db = NULL;
	struct cordon_diag d = { 0 };
	struct stat st;
	int fd;

	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
	snprintf(path, sizeof(path), "%s/audit.db", dir);
	if (cordon_db_open(path, NULL, &db, &d) < 0 || cordon_note_signer_new_from_seed("fuzz", seed, &signer) < 0)
		abort();
	cordon_note_signer_verifier(signer, &verifier);
	if (cordon_audit_setup(db, &ao, signer, &d) < 0)
		abort();
	for (int i = 0; i < 12; i++) {
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
						 .event = i % 3 ? CORDON_AUDIT_DECISION : CORDON_AUDIT_GRANT,
						 .actor = i % 2 ? &s1 : &op,
						 .connector = "fs",
						 .tool = "read_file",
						 .tier = i % 5,
						 .decision = i % 2 ? "allow" : "deny",
						 .reason = "fuzz" };

		if (cordon_audit_append(db, &ev) < 0)
			abort();
		if (i == 7 && cordon_audit_checkpoint(db) < 0)
			abort();
	}
	{
		struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_BROKER_STOP,
						 .actor = &sys };

		if (cordon_audit_append(db, &ev) < 0)
			abort();
	}
	cordon_db_close(db);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		abort();
	image_len = (size_t)st.st_size;
	image = malloc(image_len);
	if (!image || read(fd, image, image_len) != (ssize_t)image_len)
		abort();
	close(fd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	build_golden();
	return 0;
}

static void write_image(const uint8_t *img)
{
	char p[300];
	int fd;

	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, img, image_len) != (ssize_t)image_len)
		abort();
	close(fd);
}

/* Row-level edits. Each op: 1 byte opcode, 1 byte row selector, then for
 * byte-carrying ops 1 length byte and that many bytes. A duplication copies
 * ONE row: copying every row of a seq let 20 ops double the table 2^20
 * times (a harness timeout, kept as corpus/audit-db/regress-dup-doubling). */
static void edit_rows(const uint8_t *p, size_t n)
{
	sqlite3 *s = NULL;
	sqlite3_stmt *st = NULL;

	if (sqlite3_open_v2(path, &s, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		sqlite3_close(s);
		return;
	}
	while (n >= 2) {
		uint8_t op = p[0] % 9, row = p[1] % 16;
		const uint8_t *blob = NULL;
		size_t blen = 0;
		const char *sql = NULL;

		p += 2;
		n -= 2;
		if (op <= 2 || op == 7) {
			if (n < 1)
				break;
			blen = p[0] < n - 1 ? p[0] : n - 1;
			blob = p + 1;
			p += 1 + blen;
			n -= 1 + blen;
		}
		switch (op) {
		case 0:
			sql = "UPDATE audit SET record = ?2 WHERE seq = ?1";
			break;
		case 1:
			sql = "UPDATE audit SET leaf = ?2 WHERE seq = ?1";
			break;
		case 2:
			sql = "UPDATE audit SET record = CAST(replace(CAST(record AS TEXT), 'allow', CAST(?2 AS TEXT)) "
			      "AS BLOB) WHERE seq = ?1";
			break;
		case 3:
			sql = "DELETE FROM audit WHERE seq = ?1";
			break;
		case 4:
			sql = "INSERT INTO audit(seq, record, leaf) SELECT seq, record, leaf FROM audit WHERE seq = ?1 "
			      "LIMIT 1";
			break;
		case 5:
			sql = "UPDATE audit SET seq = seq + 1 WHERE seq = ?1";
			break;
		case 6:
			sql = "UPDATE audit SET (record, leaf) = (SELECT record, leaf FROM audit a2 WHERE a2.seq = ?1 "
			      "+ 1) WHERE seq = ?1";
			break;
		case 7:
			sql = "UPDATE checkpoints SET note = ?2 WHERE id = (SELECT min(id) FROM checkpoints)";
			break;
		default:
			sql = "DELETE FROM checkpoints WHERE size <= ?1";
			break;
		}
		if (sqlite3_prepare_v2(s, sql, -1, &st, NULL) == SQLITE_OK) {
			sqlite3_bind_int64(st, 1, row);
			if (blob)
				sqlite3_bind_blob(st, 2, blob, (int)blen, SQLITE_TRANSIENT);
			(void)sqlite3_step(st);
		}
		sqlite3_finalize(st);
		st = NULL;
	}
	sqlite3_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cordon_db *db = NULL;
	struct cordon_diag d = { 0 };
	struct cordon_audit_report rep;
	char buf[512];
	int r;

	if (size == 0)
		return 0;
	if ((data[0] & 1) == 0) {
		uint8_t *img = malloc(image_len);

		if (!img)
			return 0;
		memcpy(img, image, image_len);
		for (size_t i = 1; i + 2 < size; i += 3) {
			size_t off = ((size_t)data[i] << 8 | data[i + 1]) % image_len;

			img[off] ^= data[i + 2];
		}
		write_image(img);
		free(img);
	} else {
		write_image(image);
		edit_rows(data + 1, size - 1);
	}
	if (cordon_db_open(path, NULL, &db, &d) < 0)
		return 0;
	r = cordon_audit_verify(db, &verifier, &rep);
	if (r == 0) {
		if (rep.verdict > CORDON_AUDIT_MISSING_CHECKPOINT)
			abort();
		cordon_audit_report_format(&rep, buf, sizeof(buf));
		if (size == 1 && (data[0] & 1) && rep.verdict != CORDON_AUDIT_PASS)
			abort(); /* nothing edited must verify */
	}
	cordon_db_close(db);
	return 0;
}
