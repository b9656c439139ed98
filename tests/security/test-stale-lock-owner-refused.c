/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: a stale resource-lock owner cannot release or commit after a
 * newer fencing token was issued.
 *
 * Two real broker processes share the database. Holder A (a child process)
 * acquires the resource and is then frozen with SIGSTOP (a GC pause, a
 * stuck thread). Its lease runs out; holder B acquires and gets a greater
 * token. A is resumed — its own clock still says its lease is live — and
 * tries to commit (validate its token before writing) and to release: both
 * are refused with -ESTALE, A cannot re-acquire while B's lease is live
 * (-EBUSY), B's lock is untouched, and the guarded resource holds only B's
 * write. Tokens survive a reopen of the database (monotonic across broker
 * restarts). Layer: libcordon-broker, two processes, real SQLite locking. */
#include <signal.h>

#include "sec-broker.h"

#define LEASE (5 * SEC)

/* Holder A: acquire, tell the parent the token, wait, then try to commit
 * and release. Exit code: 0 when every refusal was exact. */
static void holder_a(struct bt *t, int tx, int rx, const char *guarded)
{
	struct cordon_virtual_clock clk;
	struct cordon_db_options o = { .clock = &clk.clock, .busy_timeout_ms = 2000 };
	struct cordon_db *db = NULL;
	struct cordon_diag d = {};
	uint64_t token = 0, t2;
	char go;

	cordon_virtual_clock_init(&clk, T0);
	CHILD_CHECK(cordon_db_open(t->path, &o, &db, &d) == 0);
	CHILD_CHECK(cordon_lock_acquire(db, "repo:main", "holder-a", LEASE, &token) == 0);
	CHILD_CHECK(write(tx, &token, sizeof(token)) == sizeof(token));
	CHILD_CHECK(read(rx, &go, 1) == 1); /* the parent SIGSTOPs us around here */
	/* A's clock has not moved: from where it stands the lease is live. */
	CHILD_CHECK(cordon_lock_validate(db, "repo:main", token) == -ESTALE);
	/* So it must not write the guarded resource; commit is refused. */
	CHILD_CHECK(cordon_lock_release(db, "repo:main", token) == -ESTALE);
	CHILD_CHECK(cordon_lock_acquire(db, "repo:main", "holder-a", LEASE, &t2) == -EBUSY);
	(void)guarded;
	cordon_db_close(db);
	_exit(0);
}

static void test_stale_lock_owner_refused(void **state)
{
	struct bt *t = bt_new();
	int to_parent[2], to_child[2];
	uint64_t ta = 0, tb = 0, tc = 0;
	char guarded[4096];
	pid_t pid;

	(void)state;
	snprintf(guarded, sizeof(guarded), "%s/guarded", t->dir);
	assert_int_equal(pipe2(to_parent, O_CLOEXEC), 0);
	assert_int_equal(pipe2(to_child, O_CLOEXEC), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		holder_a(t, to_parent[1], to_child[0], guarded);
	assert_int_equal(read(to_parent[0], &ta, sizeof(ta)), sizeof(ta));
	assert_int_equal(kill(pid, SIGSTOP), 0);

	/* While A's lease is live, B waits. */
	assert_int_equal(cordon_lock_acquire(t->db, "repo:main", "holder-b", LEASE, &tb), -EBUSY);
	cordon_virtual_clock_advance(&t->clock, LEASE + SEC);
	assert_int_equal(cordon_lock_acquire(t->db, "repo:main", "holder-b", LEASE, &tb), 0);
	assert_true(tb > ta);
	assert_int_equal(cordon_lock_validate(t->db, "repo:main", tb), 0);
	{
		FILE *fp = fopen(guarded, "we");

		assert_non_null(fp);
		fprintf(fp, "written under token %llu\n", (unsigned long long)tb);
		fclose(fp);
	}

	assert_int_equal(kill(pid, SIGCONT), 0);
	assert_int_equal(write(to_child[1], "g", 1), 1);
	assert_int_equal(cordon_test_wait(pid), 0);

	/* B's lock is intact; A's attempts changed nothing. */
	assert_int_equal(cordon_lock_validate(t->db, "repo:main", tb), 0);
	assert_int_equal(cordon_lock_validate(t->db, "repo:main", ta), -ESTALE);
	assert_int_equal(sec_count_lines(guarded), 1);
	assert_int_equal(cordon_lock_release(t->db, "repo:main", tb), 0);

	/* Tokens are monotonic across a broker restart. */
	cordon_db_close(t->db);
	t->db = NULL;
	bt_open_db(t);
	bt_setup_audit(t, 1000, 3600 * SEC);
	assert_int_equal(cordon_lock_acquire(t->db, "repo:main", "holder-c", LEASE, &tc), 0);
	assert_true(tc > tb);
	assert_int_equal(cordon_lock_release(t->db, "repo:main", tb), -ESTALE);
	assert_int_equal(cordon_lock_release(t->db, "repo:main", tc), 0);
	printf("  tokens: A %llu, B %llu, C %llu\n", (unsigned long long)ta, (unsigned long long)tb,
	       (unsigned long long)tc);
	for (int i = 0; i < 2; i++) {
		close(to_parent[i]);
		close(to_child[i]);
	}
	assert_int_equal(sec_verify(t), CORDON_AUDIT_PASS);
	bt_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stale_lock_owner_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
