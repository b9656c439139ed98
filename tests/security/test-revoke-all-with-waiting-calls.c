/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: revoke-all on cordond's operator socket while gateway
 * sessions have calls waiting for approval answers every waiting call and
 * keeps every session and the daemon alive.
 * Scenario (cordond's core in its own process, tests/e2e/daemon-harness.c),
 * 8 rounds since the failure it guards against was intermittent: session
 * Q's write call is approved but not yet used; session P holds a root
 * delegation (so its per-session fakeps instance runs with a root, which
 * revoke-all must end) and has two write calls waiting for approval, one
 * on the shared fake instance and one on that rooted instance; then
 * `revoke-all` (grants, approvals, delegations). Expected: both waiting
 * calls end with isError, both sessions stay connected, tools/list holds
 * only cordon__* tools, the connector tools are -32602, the daemon is
 * alive and nothing ran.
 * History (docs/security-tests.md, fixed finding 6): revoke-all killed
 * every instance, and a call held for approval kept pointing at its freed
 * instance; the next tick failed the call and unlinked it from the freed
 * instance's queues (heap-use-after-free writes), which closed another
 * session or crashed the daemon. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>

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

static struct harness H;

static json_t *operator(const char *name, json_t *args)
{
	static long id;
	char path[700];
	struct mcp_peer op;
	json_t *req = json_pack("{s:i, s:I, s:s, s:o}", "v", 1, "id", (json_int_t)++id, "op", name, "args", args), *r;
	char *line = json_dumps(req, JSON_COMPACT);

	json_decref(req);
	snprintf(path, sizeof(path), "%s/operator.sock", H.runtime);
	assert_int_equal(mcp_peer_connect(&op, path), 0);
	assert_int_equal(mcp_peer_send_raw(&op, line, strlen(line)), 0);
	assert_int_equal(mcp_peer_send_raw(&op, "\n", 1), 0);
	free(line);
	r = mcp_peer_read(&op, 10000);
	mcp_peer_disconnect(&op);
	assert_non_null(r);
	return r;
}

static void session(struct mcp_peer *p)
{
	json_t *r;

	assert_int_equal(mcp_peer_connect(p, H.gateway), 0);
	r = mcp_peer_initialize(p, "2025-11-25");
	assert_non_null(r);
	json_decref(r);
}

static int teardown(void **state)
{
	(void)state;
	harness_teardown(&H);
	return 0;
}

/* One round; returns NULL when everything held, else what went wrong. */
static const char *one_round(void)
{
	static char why[256];
	struct mcp_peer p, q;
	json_t *r, *t;
	size_t i;
	long held, held_ps;
	char sub[700];
	int st = 0;
	const char *bad = NULL;

	harness_setup(&H, "sec-revokeall");
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGILL, SIG_DFL);
	signal(SIGFPE, SIG_DFL);
	signal(SIGSYS, SIG_DFL);
	signal(SIGABRT, SIG_DFL);
	harness_start(&H);
	harness_review_all(&H, "fake");
	harness_review_all(&H, "fakeps");
	session(&p);
	session(&q);
	r = mcp_peer_call(&q, "fake__append", json_pack("{s:s}", "text", "approved-then-revoked"), 15000);
	json_decref(r);
	r = operator("approvals.list", json_object());
	json_array_foreach(json_object_get(r, "result"), i, t)
	{
		json_t *a = operator("approvals.approve",
				     json_pack("{s:s}", "id", json_string_value(json_object_get(t, "id"))));

		json_decref(a);
	}
	json_decref(r);
	/* P's per-session instance runs with a delegated root. */
	snprintf(sub, sizeof(sub), "%s/sub", H.data);
	assert_int_equal(mkdir(sub, 0755), 0);
	r = mcp_peer_call(&p, "cordon__request_root",
			  json_pack("{s:s, s:s, s:s}", "connector", "fakeps", "path", sub, "access", "read"), 10000);
	assert_non_null(r);
	t = json_object_get(json_object_get(r, "structuredContent"), "delegation");
	assert_true(json_is_string(t));
	json_decref(operator("delegations.approve", json_pack("{s:O}", "id", t)));
	json_decref(r);
	r = mcp_peer_call(&p, "fakeps__roots", json_object(), 10000);
	assert_non_null(r);
	assert_non_null(strstr(result_text(r), sub));
	json_decref(r);
	held = mcp_peer_send_request(&p, "tools/call",
				     json_pack("{s:s, s:{s:s}}", "name", "fake__append", "arguments", "text", "held"));
	held_ps = mcp_peer_send_request(
		&p, "tools/call",
		json_pack("{s:s, s:{s:s}}", "name", "fakeps__append", "arguments", "text", "held-ps"));
	/* Revoke while both calls wait: once both approval requests exist (Q's
	 * earlier one is approved, not requested). */
	if (!wait_until(harness_count_approvals(&H, CORDON_APPROVAL_REQUESTED) == 2, 10000))
		bad = "the two calls never waited for approval";
	r = operator("revoke-all", json_object());
	{
		char *x = json_dumps(json_object_get(r, "result"), JSON_COMPACT);

		printf("  revoke-all: %s\n", x);
		free(x);
	}
	if (json_integer_value(json_object_get(json_object_get(r, "result"), "delegations")) != 1)
		bad = "revoke-all did not revoke the delegation";
	json_decref(r);

	/* The two answers come in either order (mcp_peer_wait drops what it
	 * is not waiting for): read until both are in. */
	{
		json_t *ans[2] = { NULL, NULL };

		for (int k = 0; k < 8 && (!ans[0] || !ans[1]); k++) {
			json_t *v = mcp_peer_read(&p, 15000), *vid = json_object_get(v, "id");

			if (!v)
				break;
			if (json_is_integer(vid) && !json_object_get(v, "method") &&
			    (json_integer_value(vid) == held || json_integer_value(vid) == held_ps))
				ans[json_integer_value(vid) == held ? 0 : 1] = json_incref(v);
			json_decref(v);
		}
		if (!ans[0])
			bad = "the waiting call on the shared instance got no answer";
		else if (!json_is_true(json_object_get(json_object_get(ans[0], "result"), "isError")))
			bad = "the waiting call on the shared instance did not end with isError";
		else if (!ans[1])
			bad = "the waiting call on the rooted per-session instance got no answer";
		else if (!json_is_true(json_object_get(json_object_get(ans[1], "result"), "isError")))
			bad = "the waiting call on the rooted per-session instance did not end with isError";
		json_decref(ans[0]);
		json_decref(ans[1]);
	}
	r = mcp_peer_request(&q, "tools/list", json_object(), 10000);
	if (!bad && !r)
		bad = "session Q was closed after revoke-all";
	json_array_foreach(json_object_get(json_object_get(r, "result"), "tools"), i,
			   t) if (!bad && strncmp(json_string_value(json_object_get(t, "name")), "cordon__", 8) != 0)
		bad = "a connector tool is still listed";
	json_decref(r);
	r = mcp_peer_request(&q, "tools/call", json_pack("{s:s, s:{}}", "name", "fake__echo", "arguments"), 10000);
	if (!bad && (!r || json_integer_value(json_object_get(json_object_get(r, "error"), "code")) != -32602))
		bad = r ? "fake__echo was not -32602" : "session Q was closed after revoke-all";
	json_decref(r);
	if (waitpid(H.daemon_pid, &st, WNOHANG) == H.daemon_pid) {
		snprintf(why, sizeof(why), "cordond's core died (%s %d)", WIFSIGNALED(st) ? "signal" : "exit",
			 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		H.daemon_pid = 0;
		bad = why;
	}
	if (!bad && harness_out_lines(&H) != 0)
		bad = "a call ran after revoke-all";
	mcp_peer_disconnect(&p);
	mcp_peer_disconnect(&q);
	harness_teardown(&H);
	return bad;
}

static void test_revoke_all_answers_waiting_calls_keeps_sessions(void **state)
{
	int failures = 0;

	(void)state;
	for (int round = 0; round < 8; round++) {
		const char *bad = one_round();

		if (bad) {
			printf("  round %d: %s\n", round, bad);
			failures++;
		}
	}
	assert_int_equal(failures, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_revoke_all_answers_waiting_calls_keeps_sessions, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
