/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: idempotency results and keys are scoped to the subject
 * (issue 11, finding 5).
 *
 * Through cordond's gateway socket (tests/e2e/daemon-harness.c: the daemon
 * core in its own process, real connector processes, real MCP sessions):
 * fakeps__append is a replay-safe write (the fake connector appends a line
 * to a file per execution). Session A (uid 0) runs it with the
 * infrastructure key "k1" after an approval. Then a client process running
 * as uid 65534 (a forked child with setresuid, so its SO_PEERCRED differs)
 * sends the same tool, arguments and key:
 *  - it does NOT get A's stored result: its call is held for an approval of
 *    its own (an approval requested by a session named -u65534-) and, once
 *    approved, runs as its own action: the connector's effect count goes
 *    from 1 to 2;
 *  - its retry gets its own stored result (effect count stays 2);
 *  - it uses key "k2" first for a request of its own; A's later, different
 *    request under "k2" is no conflict for A (B did not take or poison the
 *    key): A's call is held for A's own approval and runs;
 *  - A's retry of "k1" still gets A's stored result, with no approval and
 *    no execution, and so does a second session of uid 0: the scope is the
 *    uid (the subject the kernel proves), not the session, so the
 *    infrastructure's retry after a lost connection is answered, not run
 *    twice.
 * The database then holds exactly one identity per (subject, key).
 * The test includes the harness source so the suite's auto-registration
 * needs no CMake change. */
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/wait.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "actions.h"
#include "approvals.h"
#include "audit.h"
#include "checkpoint.h"
#include "daemon-core.h"
#include "fd-util.h"
#include "inventory.h"
#include "profile.h"
#include "daemon-harness.h"
#include "test-support.h"
#include "cleanup.h"

#define OTHER_UID 65534

static struct harness H;

static int setup(void **state)
{
	(void)state;
	harness_setup(&H, "sec-idem-subject");
	/* Held calls wait long enough for the operator (this test) to decide:
	 * an approved held call then runs without a second request. */
	H.approval_wait_s = 30;
	harness_start(&H);
	harness_review_all(&H, "fake");
	harness_review_all(&H, "fakeps");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	harness_teardown(&H);
	return 0;
}

static long send_append(struct mcp_peer *p, const char *text, const char *key)
{
	return mcp_peer_send_request(p, "tools/call",
				     json_pack("{s:s, s:{s:s}, s:{s:s}}", "name", "fakeps__append", "arguments", "text",
					       text, "_meta", "io.cordon/idempotency-key", key));
}

/* The tools/call result of request id (NULL on a timeout or an error reply). */
static json_t *wait_result(struct mcp_peer *p, long id)
{
	json_t *r = mcp_peer_wait(p, id, 40000);
	json_t *res = json_incref(json_object_get(r, "result"));

	json_decref(r);
	return res;
}

static int sql_int(const char *query)
{
	char path[700];
	sqlite3 *sql;
	sqlite3_stmt *q;
	int n = -1;

	snprintf(path, sizeof(path), "%s/cordon.db", H.state);
	if (sqlite3_open_v2(path, &sql, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return -1;
	sqlite3_busy_timeout(sql, 5000);
	if (sqlite3_prepare_v2(sql, query, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
		n = sqlite3_column_int(q, 0);
	sqlite3_finalize(q);
	sqlite3_close(sql);
	return n;
}

/* Polls until one approval is requested by a session whose id carries
 * `uid_tag` ("-u0-", "-u65534-"), then approves it. Returns 0, or -ETIME
 * when none appeared within 20 s. */
static int approve_one_of(const char *uid_tag)
{
	char q[200];

	snprintf(q, sizeof(q), "SELECT count(*) FROM approvals WHERE state = %d AND session LIKE '%%%s%%'",
		 CORDON_APPROVAL_REQUESTED, uid_tag);
	for (int i = 0; i < 2000; i++) {
		if (sql_int(q) == 1)
			return harness_approve_all(&H) == 1 ? 0 : -EIO;
		usleep(10 * 1000);
	}
	return -ETIME;
}

static bool appended(const json_t *res)
{
	return res && !json_is_true(json_object_get(res, "isError")) && !strcmp(result_text(res), "appended");
}

/* The other subject's client. Exit status: 0 all as required; 10+n: step n
 * failed (printed). Pipe protocol: it writes one byte after each call that
 * the parent must approve has been sent, and waits for nothing else (the
 * held call runs once approved). */
static int other_uid_client(int notify_fd)
{
	struct mcp_peer o;
	json_t *init, *res;
	long id;

	if (setgroups(0, NULL) < 0 || setresgid(OTHER_UID, OTHER_UID, OTHER_UID) < 0 ||
	    setresuid(OTHER_UID, OTHER_UID, OTHER_UID) < 0)
		return 9;
	if (mcp_peer_connect(&o, H.gateway) < 0) {
		printf("  uid %d: cannot connect to the gateway: %s\n", OTHER_UID, strerror(errno));
		return 10;
	}
	init = mcp_peer_initialize(&o, "2025-11-25");
	if (!init)
		return 11;
	json_decref(init);

	/* 1. A's tool, arguments and key: held for ITS approval, then run. */
	id = send_append(&o, "same", "k1");
	if (write(notify_fd, "1", 1) != 1)
		return 12;
	res = wait_result(&o, id);
	printf("  uid %d, same call and key as A: %s\n", OTHER_UID, res ? result_text(res) : "(no result)");
	if (!appended(res))
		return 13;
	json_decref(res);
	/* 2. Its retry: its own stored result (the parent checks nothing ran). */
	res = wait_result(&o, send_append(&o, "same", "k1"));
	printf("  uid %d retry: %s\n", OTHER_UID, res ? result_text(res) : "(no result)");
	if (!appended(res))
		return 14;
	json_decref(res);
	/* 3. Key k2 for a request of its own, before A uses it. */
	id = send_append(&o, "b-first", "k2");
	if (write(notify_fd, "2", 1) != 1)
		return 15;
	res = wait_result(&o, id);
	printf("  uid %d, k2: %s\n", OTHER_UID, res ? result_text(res) : "(no result)");
	if (!appended(res))
		return 16;
	json_decref(res);
	mcp_peer_disconnect(&o);
	return 0;
}

static void test_idempotency_scoped_to_subject(void **state)
{
	struct mcp_peer a, a2;
	json_t *r;
	long id;
	int pfd[2], st;
	char byte;
	pid_t pid;

	(void)state;
	assert_int_equal(mcp_peer_connect(&a, H.gateway), 0);
	r = mcp_peer_initialize(&a, "2025-11-25");
	assert_non_null(r);
	json_decref(r);

	/* A (uid 0): an approved replay-safe write with key k1, run once. */
	id = send_append(&a, "same", "k1");
	assert_int_equal(approve_one_of("-u0-"), 0);
	r = wait_result(&a, id);
	assert_true(appended(r));
	json_decref(r);
	assert_int_equal(harness_out_lines(&H), 1);

	/* B (uid 65534): same tool, arguments and key. */
	assert_int_equal(chmod(H.dir, 0755), 0);
	assert_int_equal(chmod(H.runtime, 0755), 0);
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		st = other_uid_client(pfd[1]);
		fflush(stdout);
		_exit(st);
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &byte, 1), 1);
	/* B's identical call is held for an approval of B's own session: it
	 * did not get A's stored result. */
	assert_int_equal(approve_one_of("-u65534-"), 0);
	assert_int_equal(read(pfd[0], &byte, 1), 1);
	assert_int_equal(approve_one_of("-u65534-"), 0);
	close(pfd[0]);
	st = cordon_test_wait(pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* A once, B's k1 once (its retry answered from its store), B's k2 once. */
	assert_int_equal(harness_out_lines(&H), 3);

	/* A's retry of k1: A's stored result, no approval, nothing runs. */
	r = wait_result(&a, send_append(&a, "same", "k1"));
	assert_true(appended(r));
	json_decref(r);
	assert_int_equal(harness_out_lines(&H), 3);
	assert_int_equal(harness_count_approvals(&H, CORDON_APPROVAL_REQUESTED), 0);

	/* A's own request under k2 (which B used first): no conflict, A's own
	 * approval, and it runs. */
	id = send_append(&a, "a-own", "k2");
	assert_int_equal(approve_one_of("-u0-"), 0);
	r = wait_result(&a, id);
	assert_true(appended(r));
	json_decref(r);
	assert_int_equal(harness_out_lines(&H), 4);

	/* Another session of uid 0 (the infrastructure's retry after a lost
	 * connection): the stored result, no approval, nothing runs. */
	assert_int_equal(mcp_peer_connect(&a2, H.gateway), 0);
	r = mcp_peer_initialize(&a2, "2025-11-25");
	assert_non_null(r);
	json_decref(r);
	r = wait_result(&a2, send_append(&a2, "same", "k1"));
	assert_true(appended(r));
	json_decref(r);
	assert_int_equal(harness_out_lines(&H), 4);
	assert_int_equal(harness_count_approvals(&H, CORDON_APPROVAL_REQUESTED), 0);
	mcp_peer_disconnect(&a2);
	mcp_peer_disconnect(&a);

	/* One identity per (subject, key); four executions, four actions. */
	assert_int_equal(sql_int("SELECT count(*) FROM idempotency WHERE key = 'k1' AND subject = 'uid:0'"), 1);
	assert_int_equal(sql_int("SELECT count(*) FROM idempotency WHERE key = 'k1' AND subject = 'uid:65534'"), 1);
	assert_int_equal(sql_int("SELECT count(*) FROM idempotency WHERE key = 'k2' AND subject = 'uid:0'"), 1);
	assert_int_equal(sql_int("SELECT count(*) FROM idempotency WHERE key = 'k2' AND subject = 'uid:65534'"), 1);
	assert_int_equal(sql_int("SELECT count(*) FROM idempotency"), 4);
	assert_int_equal(harness_count_actions(&H, CORDON_ACTION_SUCCEEDED), 4);
	assert_int_equal(harness_count_approvals(&H, CORDON_APPROVAL_CONSUMED), 4);
	{
		char msg[256] = "";

		assert_true(harness_audit_ok(&H, msg, sizeof(msg)));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_idempotency_scoped_to_subject, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
