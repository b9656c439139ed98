/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Broker authorization throughput. Prints figures; asserts nothing about
 * time. JCS + HMAC throughput on 1 KiB / 64 KiB / 1 MiB arguments is
 * canon's bench-jcs.
 *
 *   1. cordon_authz_decide(): pure decisions per second
 *   2. cordon_broker_decide(): snapshot load + decision + audit record per
 *      second (one BEGIN IMMEDIATE transaction each, synchronous=FULL)
 *   3. audit appends per second (own transaction each, synchronous=FULL),
 *      against a baseline of plain INSERTs into a table of the same database
 *   4. full approved write: request, approve, begin (CAS), dispatched, complete
 *
 * Usage: bench-authz [rounds]   (default 5; medians are printed) */

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actions.h"
#include "approvals.h"
#include "audit.h"
#include "authz.h"
#include "broker.h"
#include "canon.h"
#include "checkpoint.h"
#include "cleanup.h"
#include "crypto.h"
#include "db.h"
#include "grants.h"
#include "connectors.h"
#include "inventory.h"
#include "test-support.h"

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define CHECK(x)                                                                                                       \
	do {                                                                                                           \
		int _r = (x);                                                                                          \
		if (_r < 0) {                                                                                          \
			fprintf(stderr, "%s:%d: %s = %d (%s)\n", __FILE__, __LINE__, #x, _r, strerror(-_r));           \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)

#define FP "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static double bench_pure(void)
{
	static const struct cordon_tool_risk risks[] = {
		{ (char *)"read_file", CORDON_RISK_READ },
		{ (char *)"write_file", CORDON_RISK_WRITE },
		{ (char *)"delete_file", CORDON_RISK_DESTRUCTIVE },
		{ (char *)"a", CORDON_RISK_READ },
		{ (char *)"b", CORDON_RISK_READ },
		{ (char *)"c", CORDON_RISK_READ },
	};
	static const char *grant[] = { "a", "b", "c", "delete_file", "read_file", "write_file" };
	struct cordon_risk_policy pol = { CORDON_RISK_HIGH, risks, ELEMENTSOF(risks) };
	struct cordon_inventory_entry inv = { "fs", "write_file", CORDON_INVENTORY_REVIEWED, FP, FP };
	struct cordon_authz_request req = {
		.session = "s1", .connector = "fs", .tool = "write_file", .fingerprint = FP, .policy_epoch = 3
	};
	struct cordon_authz_input in = { .connector = "fs",
					 .tool = "write_file",
					 .inventory = &inv,
					 .grant = grant,
					 .n_grant = ELEMENTSOF(grant),
					 .have_grant_row = true,
					 .policy = &pol,
					 .policy_epoch = 3,
					 .request = &req };
	const long n = 2000000;
	volatile unsigned sink = 0;
	double t0 = now_sec();

	for (long i = 0; i < n; i++)
		sink += cordon_authz_decide(&in).verdict;
	(void)sink;
	return (double)n / (now_sec() - t0);
}

struct env {
	char *dir, *path;
	struct cordon_db *db;
	struct cordon_key *key;
	char fp_write[65], fp_read[65];
};

static void env_open(struct env *e)
{
	static const uint8_t seed[32] = { 1 };
	static const uint8_t kb[32] = { 2 };
	static struct cordon_tool_risk risks[] = { { (char *)"read_file", CORDON_RISK_READ },
						   { (char *)"write_file", CORDON_RISK_WRITE } };
	static char *grant[] = { (char *)"read_file", (char *)"write_file" };
	struct cordon_profile p = { .id = (char *)"fs",
				    .default_risk = CORDON_RISK_HIGH,
				    .risk = risks,
				    .n_risk = 2,
				    .grant = grant,
				    .n_grant = 2,
				    .approval_ttl_sec = 120 };
	struct cordon_audit_options ao = { .origin = "cordon.bench/audit", .checkpoint_every = 1000 };
	struct cordon_note_signer *s = NULL;
	struct cordon_diag d = {};
	struct cordon_actor sys = cordon_actor_system(), op = cordon_actor_operator(0, "bench");
	struct cordon_tool_advert_owned a[2];
	struct cordon_tool_advert adv[2];

	e->dir = cordon_test_mkdtemp("bench-authz");
	if (asprintf(&e->path, "%s/state.db", e->dir) < 0)
		exit(1);
	if (cordon_db_open(e->path, NULL, &e->db, &d) < 0) {
		fprintf(stderr, "%s\n", d.message);
		exit(1);
	}
	CHECK(cordon_note_signer_new_from_seed("bench", seed, &s));
	CHECK(cordon_audit_setup(e->db, &ao, s, &d));
	CHECK(cordon_key_new_from_bytes(kb, &e->key));
	CHECK(cordon_connector_install(e->db, &sys, &p));
	for (int i = 0; i < 2; i++) {
		json_t *t = json_pack("{s:s, s:s}", "name", grant[i], "description", "bench tool");
		CHECK(cordon_tool_advert_from_json(t, NULL, &a[i]));
		json_decref(t);
		adv[i] = a[i].advert;
	}
	CHECK(cordon_inventory_sync(e->db, &sys, "fs", adv, 2, NULL));
	for (int i = 0; i < 2; i++)
		CHECK(cordon_inventory_review(e->db, &op, "fs", adv[i].name, adv[i].fingerprint));
	snprintf(e->fp_read, sizeof(e->fp_read), "%s", a[0].fingerprint);
	snprintf(e->fp_write, sizeof(e->fp_write), "%s", a[1].fingerprint);
	for (int i = 0; i < 2; i++)
		cordon_tool_advert_owned_done(&a[i]);
}

static void env_close(struct env *e)
{
	cordon_db_close(e->db);
	cordon_key_free(e->key);
	cordon_test_rm_rf(e->dir);
	free(e->dir);
	free(e->path);
}

static double bench_broker_decide(struct env *e)
{
	struct cordon_decide_request r = {
		.session = "s1", .connector = "fs", .tool = "write_file", .fingerprint = e->fp_write
	};
	struct cordon_broker_decision d;
	const int n = 300;
	double t0 = now_sec();

	for (int i = 0; i < n; i++)
		CHECK(cordon_broker_decide(e->db, &r, &d));
	return n / (now_sec() - t0);
}

/* Group commit as cordond does it: `per` decisions share one transaction
 * (cordon_broker_decide_batched() + cordon_decide_batch_commit()). */
static double bench_broker_decide_batched(struct env *e, int per)
{
	struct cordon_decide_request r = {
		.session = "s1", .connector = "fs", .tool = "write_file", .fingerprint = e->fp_write
	};
	struct cordon_broker_decision d;
	uint64_t batch;
	const int n = 480;
	double t0 = now_sec();

	for (int i = 0; i < n; i++) {
		CHECK(cordon_broker_decide_batched(e->db, &r, &d, &batch));
		if ((i + 1) % per == 0) {
			CHECK(cordon_decide_batch_commit(e->db));
			CHECK(cordon_decide_batch_result(e->db, batch));
		}
	}
	CHECK(cordon_decide_batch_commit(e->db));
	return n / (now_sec() - t0);
}

static double bench_audit_append(struct env *e)
{
	struct cordon_actor s1 = cordon_actor_session("s1");
	struct cordon_audit_event ev = {
		CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_DECISION, .actor = &s1,	       .connector = "fs",
		.tool = "write_file",	 .tier = CORDON_RISK_WRITE,	 .decision = "approve"
	};
	const int n = 300;
	double t0 = now_sec();

	for (int i = 0; i < n; i++)
		CHECK(cordon_audit_append(e->db, &ev));
	return n / (now_sec() - t0);
}

/* Baseline: the same durability (WAL, synchronous=FULL, one transaction per
 * row) for a plain INSERT of a similar-sized row, on a second connection. */
static double bench_plain_insert(struct env *e)
{
	sqlite3 *s = NULL;
	sqlite3_stmt *st = NULL;
	const int n = 300;
	double t0;

	if (sqlite3_open_v2(e->path, &s, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
	    sqlite3_exec(s, "PRAGMA synchronous=FULL; CREATE TABLE IF NOT EXISTS bench_plain(v BLOB)", NULL, NULL,
			 NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s, "INSERT INTO bench_plain(v) VALUES (randomblob(330))", -1, &st, NULL) != SQLITE_OK)
		exit(1);
	t0 = now_sec();
	for (int i = 0; i < n; i++) {
		sqlite3_exec(s, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		if (sqlite3_step(st) != SQLITE_DONE)
			exit(1);
		sqlite3_reset(st);
		sqlite3_exec(s, "COMMIT", NULL, NULL, NULL);
	}
	t0 = n / (now_sec() - t0);
	sqlite3_finalize(st);
	sqlite3_exec(s, "DROP TABLE bench_plain", NULL, NULL, NULL);
	sqlite3_close(s);
	return t0;
}

static double bench_full_call(struct env *e)
{
	struct cordon_actor op = cordon_actor_operator(0, "bench");
	const int n = 60;
	double t0 = now_sec();

	for (int i = 0; i < n; i++) {
		char args[64];
		uint64_t epoch, gen;
		struct cordon_approval_info info;
		struct cordon_action_begin_result res;

		snprintf(args, sizeof(args), "{\"content\":\"x\",\"path\":\"/w/%d\"}", i);
		CHECK(cordon_db_policy_epoch(e->db, &epoch));
		CHECK(cordon_connector_generation(e->db, "fs", &gen));
		struct cordon_action_begin b = {
			.call = { .session = "s1",
				  .connector = "fs",
				  .tool = "write_file",
				  .fingerprint = e->fp_write,
				  .generation = gen,
				  .policy_epoch = epoch,
				  .tier = CORDON_RISK_WRITE,
				  .arguments_jcs = args,
				  .arguments_jcs_len = strlen(args) },
		};
		CHECK(cordon_approval_request(e->db, e->key, NULL, &b.call, &info));
		CHECK(cordon_approval_decide(e->db, e->key, &op, info.id, true, NULL));
		b.approval_id = info.id;
		CHECK(cordon_action_begin(e->db, e->key, &b, &res));
		CHECK(cordon_action_dispatched(e->db, res.action_id));
		CHECK(cordon_action_complete(e->db, e->key, res.action_id, true, "ok", 2));
		cordon_action_begin_result_done(&res);
	}
	return n / (now_sec() - t0);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	double pure[32], dec[32], dec1[32], dec8[32], app[32], base[32], full[32];
	struct env e = {};

	if (rounds < 1 || rounds > 32)
		rounds = 5;
	env_open(&e);
	for (int i = 0; i < rounds; i++) {
		pure[i] = bench_pure();
		dec[i] = bench_broker_decide(&e);
		dec1[i] = bench_broker_decide_batched(&e, 1);
		dec8[i] = bench_broker_decide_batched(&e, 8);
		app[i] = bench_audit_append(&e);
		base[i] = bench_plain_insert(&e);
		full[i] = bench_full_call(&e);
	}
	{
		double m_pure = median(pure, rounds), m_dec = median(dec, rounds), m_app = median(app, rounds),
		       m_base = median(base, rounds), m_full = median(full, rounds);

		printf("bench-authz: medians of %d rounds (temp db in %s, WAL, synchronous=FULL)\n", rounds,
		       getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		printf("  authz_decide (pure)                 %12.0f decisions/s\n", m_pure);
		printf("  broker_decide (snapshot+audit, tx)  %12.0f decisions/s\n", m_dec);
		printf("  broker_decide_batched, 1 per batch  %12.0f decisions/s\n", median(dec1, rounds));
		printf("  broker_decide_batched, 8 per batch  %12.0f decisions/s  (%.2fx of one transaction each)\n",
		       median(dec8, rounds), median(dec8, rounds) / m_dec);
		printf("  audit append (own tx)               %12.0f appends/s  (%.2fx of plain INSERT+COMMIT: "
		       "%.0f/s)\n",
		       m_app, m_app / m_base, m_base);
		printf("  approved write, 5 transactions      %12.0f calls/s\n", m_full);
		printf("  JCS+HMAC throughput: see bench-jcs (canon)\n");
	}
	env_close(&e);
	return 0;
}
