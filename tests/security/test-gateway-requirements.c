/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The security requirements again, this time through cordond's gateway
 * socket: the daemon core in its own process (privilege drop, Landlock),
 * real connector processes (tests/helpers/fake-connector: `append` writes a
 * line per execution), an MCP client per session, operator decisions through
 * the broker core on the same database (tests/e2e/daemon-harness.c).
 * One test function per requirement, named after it:
 *  - unauthorized tool denied: an ungranted, unknown, other-connector or
 *    operator-looking tool name -> JSON-RPC -32602; a grant removed by the
 *    operator disappears from tools/list and its call is -32602;
 *  - wrong subject: an approval obtained by session A does not let session
 *    B's identical call run (B's call is held and answered isError, nothing
 *    executed); a client with another uid (65534) is a different subject
 *    (its session id carries its SO_PEERCRED uid) and cannot use A's
 *    approval either;
 *  - self-approval impossible / registration refused: every operator or
 *    registration method name on the gateway -> -32601, broker tools cannot
 *    approve, and the pending approval is still requested afterwards;
 *  - approval spam: 40 identical held calls -> one approval; distinct calls
 *    beyond the per-session cap -> isError naming the limit, nothing evicted.
 * revoke-all through the operator socket: test-bug-cordond-revoke-all-
 * crashes-or-drops-sessions.c (it fails intermittently today).
 * The daemon runs from the harness; the test includes its source so the
 * suite's auto-registration needs no CMake change. */
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
#include "grants.h"
#include "connectors.h"

static struct harness H;

static int setup(void **state)
{
	(void)state;
	harness_setup(&H, "sec-gateway");
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

static void session(struct mcp_peer *p)
{
	json_t *r;

	assert_int_equal(mcp_peer_connect(p, H.gateway), 0);
	r = mcp_peer_initialize(p, "2025-11-25");
	assert_non_null(r);
	json_decref(r);
}

static int call_error_code(struct mcp_peer *p, const char *name)
{
	json_t *r = mcp_peer_request(p, "tools/call", json_pack("{s:s, s:{}}", "name", name, "arguments"), 10000);
	int code;

	assert_non_null(r);
	code = (int)json_integer_value(json_object_get(json_object_get(r, "error"), "code"));
	json_decref(r);
	return code;
}

static json_t *append(struct mcp_peer *p, const char *text)
{
	return mcp_peer_call(p, "fake__append", json_pack("{s:s}", "text", text), 15000);
}

static void test_unauthorized_tool_denied_at_gateway(void **state)
{
	struct mcp_peer p;
	json_t *r;

	(void)state;
	session(&p);
	assert_int_equal(call_error_code(&p, "fake__nope"), -32602);
	assert_int_equal(call_error_code(&p, "docker__run"), -32602);
	assert_int_equal(call_error_code(&p, "fake__../echo"), -32602);
	assert_int_equal(call_error_code(&p, "cordon__approve"), -32602);
	assert_int_equal(call_error_code(&p, "cordon__grant"), -32602);
	assert_int_equal(call_error_code(&p, "echo"), -32602);

	/* The operator removes the echo grant: gone from the list, refused. */
	{
		struct cordon_db *db = harness_db(&H);
		struct cordon_actor op = cordon_actor_operator(0, "test");

		assert_int_equal(cordon_grant_remove(db, &op, "fake", "echo"), 0);
		cordon_db_close(db);
	}
	r = mcp_peer_request(&p, "tools/list", json_object(), 10000);
	assert_non_null(r);
	{
		size_t i;
		json_t *t;

		json_array_foreach(json_object_get(json_object_get(r, "result"), "tools"), i, t)
			assert_string_not_equal(json_string_value(json_object_get(t, "name")), "fake__echo");
	}
	json_decref(r);
	assert_int_equal(call_error_code(&p, "fake__echo"), -32602);
	mcp_peer_disconnect(&p);
	assert_int_equal(harness_out_lines(&H), 0);
}

static void test_wrong_session_cannot_use_approval(void **state)
{
	struct mcp_peer a, b;
	json_t *r;

	(void)state;
	session(&a);
	session(&b);
	r = append(&a, "only-a");
	assert_true(json_is_true(json_object_get(r, "isError"))); /* held, then "repeat after approval" */
	json_decref(r);
	assert_int_equal(harness_approve_all(&H), 1);
	/* B sends the byte-identical call: not A's approval. */
	r = append(&b, "only-a");
	assert_non_null(r);
	assert_true(json_is_true(json_object_get(r, "isError")));
	json_decref(r);
	assert_int_equal(harness_out_lines(&H), 0);
	/* A's own identical call consumes it, once. */
	r = append(&a, "only-a");
	assert_non_null(r);
	assert_false(json_is_true(json_object_get(r, "isError")));
	json_decref(r);
	assert_int_equal(harness_out_lines(&H), 1);
	mcp_peer_disconnect(&a);
	mcp_peer_disconnect(&b);
}

/* A client process with another uid: approve A's call, then the other uid
 * sends the identical call; exit code 0 when it was NOT executed. */
static void test_wrong_uid_cannot_use_approval(void **state)
{
	struct mcp_peer a;
	json_t *r;
	pid_t pid;
	int st;

	(void)state;
	session(&a);
	r = append(&a, "uid-bound");
	json_decref(r);
	assert_int_equal(harness_approve_all(&H), 1);
	/* The gateway socket is 0666 (no gateway group configured): make the
	 * test's private tree traversable so the other uid reaches it. */
	assert_int_equal(chmod(H.dir, 0755), 0);
	assert_int_equal(chmod(H.runtime, 0755), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct mcp_peer o;
		json_t *init, *res;

		CHILD_CHECK(setgroups(0, NULL) == 0);
		CHILD_CHECK(setresgid(65534, 65534, 65534) == 0);
		CHILD_CHECK(setresuid(65534, 65534, 65534) == 0);
		if (mcp_peer_connect(&o, H.gateway) < 0) {
			printf("  uid 65534: cannot connect to the gateway: %s\n", strerror(errno));
			fflush(stdout);
			_exit(2);
		}
		init = mcp_peer_initialize(&o, "2025-11-25");
		CHILD_CHECK(init != NULL);
		json_decref(init);
		res = mcp_peer_call(&o, "fake__append", json_pack("{s:s}", "text", "uid-bound"), 15000);
		CHILD_CHECK(res != NULL);
		printf("  uid 65534 identical call: %s\n", result_text(res));
		fflush(stdout);
		CHILD_CHECK(json_is_true(json_object_get(res, "isError")));
		_exit(0);
	}
	st = cordon_test_wait(pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0); /* connected, and its identical call was refused */
	{
		/* Its approval request is its own, under a session named by its
		 * SO_PEERCRED uid. */
		char path[700];
		sqlite3 *sql;
		sqlite3_stmt *q;

		snprintf(path, sizeof(path), "%s/cordon.db", H.state);
		assert_int_equal(sqlite3_open_v2(path, &sql, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(sql,
						    "SELECT count(*) FROM approvals WHERE session LIKE '%-u65534-%'",
						    -1, &q, NULL),
				 SQLITE_OK);
		assert_int_equal(sqlite3_step(q), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int(q, 0), 1);
		sqlite3_finalize(q);
		sqlite3_close(sql);
	}
	assert_int_equal(harness_out_lines(&H), 0);
	r = append(&a, "uid-bound");
	assert_false(json_is_true(json_object_get(r, "isError")));
	json_decref(r);
	assert_int_equal(harness_out_lines(&H), 1);
	mcp_peer_disconnect(&a);
}

static void test_self_approval_and_registration_impossible_at_gateway(void **state)
{
	static const char *const methods[] = {
		"approvals/approve",   "approvals/list",   "approval/approve",
		"grants/add",	       "grants/set",	   "revoke-all",
		"revoke_all",	       "inventory/review", "connectors/add",
		"connectors/remove",   "servers/register", "mcp/addServer",
		"delegations/approve", "actions/resolve",  "audit/verify",
		"operator/approve",    "cordon/approve",   "sampling/createMessage",
		"elicitation/create",
	};
	struct mcp_peer p;
	json_t *r;
	long id;

	(void)state;
	session(&p);
	/* A write call waiting for its approval. */
	id = mcp_peer_send_request(&p, "tools/call",
				   json_pack("{s:s, s:{s:s}}", "name", "fake__append", "arguments", "text", "self"));
	assert_true(wait_until(harness_count_approvals(&H, CORDON_APPROVAL_REQUESTED) == 1, 10000));
	assert_int_equal(harness_count_approvals(&H, CORDON_APPROVAL_REQUESTED), 1);
	{
		struct mcp_peer q;

		session(&q);
		for (size_t i = 0; i < ELEMENTSOF(methods); i++) {
			json_t *m = mcp_peer_request(&q, methods[i], json_pack("{s:s}", "id", "*"), 10000);

			assert_non_null(m);
			assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "error"), "code")),
					 -32601);
			json_decref(m);
		}
		/* The read-only broker tool cannot change a state. */
		{
			json_t *m = mcp_peer_request(&q, "tools/call",
						     json_pack("{s:s, s:{s:s}}", "name", "cordon__approval_status",
							       "arguments", "approve", "true"),
						     10000);
			char *txt;

			assert_non_null(m);
			txt = json_dumps(m, JSON_COMPACT);
			printf("  cordon__approval_status {approve: true}: %.200s\n", txt);
			free(txt);
			json_decref(m);
		}
		mcp_peer_disconnect(&q);
	}
	assert_int_equal(harness_count_approvals(&H, CORDON_APPROVAL_REQUESTED), 1);
	assert_int_equal(harness_count_approvals(&H, CORDON_APPROVAL_APPROVED), 0);
	r = mcp_peer_wait(&p, id, 15000);
	assert_non_null(r);
	assert_true(json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
	json_decref(r);
	assert_int_equal(harness_out_lines(&H), 0);
	{
		struct cordon_db *db = harness_db(&H);
		uint64_t gen;

		assert_int_equal(cordon_connector_generation(db, "evil", &gen), -ENOENT);
		cordon_db_close(db);
	}
	mcp_peer_disconnect(&p);
}

/* Reads responses until n have arrived (mcp_peer_wait would drop the
 * others); returns how many were errors (JSON-RPC error or isError). */
static int collect(struct mcp_peer *p, int n, char *last, size_t last_size)
{
	int seen = 0, errors = 0;

	while (seen < n) {
		json_t *m = mcp_peer_read(p, 20000);

		assert_non_null(m);
		if (json_object_get(m, "id") && !json_object_get(m, "method")) {
			json_t *err = json_object_get(m, "error");
			json_t *res = json_object_get(m, "result");

			seen++;
			if (err || json_is_true(json_object_get(res, "isError"))) {
				errors++;
				snprintf(last, last_size, "%s",
					 err ? json_string_value(json_object_get(err, "message")) : result_text(res));
			}
		}
		json_decref(m);
	}
	return errors;
}

static void test_approval_spam_at_gateway(void **state)
{
	struct mcp_peer p;

	char text[32], last[512] = "";

	(void)state;
	session(&p);
	/* 40 identical calls in flight: one approval. */
	for (int i = 0; i < 40; i++)
		(void)mcp_peer_send_request(
			&p, "tools/call",
			json_pack("{s:s, s:{s:s}}", "name", "fake__append", "arguments", "text", "same"));
	/* The first call's approval exists; a ping sent after the 40 is
	 * answered once the gateway has read (and decided) all of them. */
	assert_true(wait_until(harness_count_approvals(&H, CORDON_APPROVAL_REQUESTED) >= 1, 10000));
	{
		json_t *pong = mcp_peer_wait(&p, mcp_peer_send_request(&p, "ping", NULL), 10000);

		assert_non_null(pong);
		json_decref(pong);
	}
	assert_int_equal(harness_count_approvals(&H, CORDON_APPROVAL_REQUESTED), 1);
	/* Deny it: every held identical call is answered (denied). */
	assert_int_equal(harness_deny_all(&H), 1);
	assert_int_equal(collect(&p, 40, last, sizeof(last)), 40);
	printf("  identical call after the deny: %s\n", last);
	/* Distinct calls: the per-session cap (16) holds; no eviction. */
	for (int i = 0; i < 24; i++) {
		snprintf(text, sizeof(text), "distinct-%d", i);
		(void)mcp_peer_send_request(
			&p, "tools/call",
			json_pack("{s:s, s:{s:s}}", "name", "fake__append", "arguments", "text", text));
	}
	/* The cap bounds the count: wait until it is reached. */
	assert_true(wait_until(harness_count_approvals(&H, CORDON_APPROVAL_REQUESTED) == 16, 10000));
	assert_int_equal(harness_count_approvals(&H, CORDON_APPROVAL_REQUESTED), 16);
	/* The 8 beyond the cap were refused at once; the 16 are still held. */
	assert_int_equal(collect(&p, 8, last, sizeof(last)), 8);
	printf("  call beyond the cap: %s\n", last);
	assert_non_null(strstr(last, "too many approvals are pending"));
	assert_int_equal(harness_deny_all(&H), 16);
	assert_int_equal(collect(&p, 16, last, sizeof(last)), 16);
	assert_int_equal(harness_out_lines(&H), 0);
	mcp_peer_disconnect(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unauthorized_tool_denied_at_gateway, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_session_cannot_use_approval, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_uid_cannot_use_approval, setup, teardown),
		cmocka_unit_test_setup_teardown(test_self_approval_and_registration_impossible_at_gateway, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_approval_spam_at_gateway, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
