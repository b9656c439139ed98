/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* KNOWN BUG (found by the security suite; intermittent: one round in ~8 to
 * ~25 fails on the development machine, so the scenario runs 8 rounds and
 * the test fails in roughly half of its runs): revoke-all on
 * cordond's operator socket while gateway sessions have calls waiting.
 * Scenario (cordond's core in its own process, tests/e2e/daemon-harness.c):
 * session Q's write call is approved but not yet used, session P's write
 * call is held waiting for its approval, then `revoke-all` (grants,
 * approvals, delegations; cordon_daemon_revoked_all() also kills every
 * worker). Expected: the waiting call ends with isError, both sessions
 * stay connected, tools/list holds only cordon__* tools and the connector
 * tools are -32602. Seen instead, intermittently: the daemon closes session
 * Q right after revoke-all (the next request on Q reads EOF while the
 * daemon is alive), and in some runs cordond's core dies of SIGSEGV
 * (wait status: signal 11). In the ASan build it is worse: most rounds end
 * with the daemon core exiting with status 1 (no sanitizer report is
 * printed; the default handlers for SEGV/BUS/ILL/FPE/SYS/ABRT are restored
 * before the daemon is forked so cmocka's inherited handlers are not the
 * cause). Both symptoms fit one cause: a worker fd closed twice (or a
 * watch left on a closed fd) when cordon_daemon_revoked_all() ->
 * cordon_daemon_delegations_changed() kills every worker while calls are
 * attached — a session socket accepted later reuses the number and is
 * closed by mistake, and a stale epoll watch dereferences freed state; or
 * the `next` pointer of that loop going stale when worker_died() frees or
 * unlinks another worker. Not isolated further. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "../e2e/daemon-harness.c"

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
	long held;
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
	held = mcp_peer_send_request(&p, "tools/call",
				     json_pack("{s:s, s:{s:s}}", "name", "fake__append", "arguments", "text", "held"));
	usleep(300 * 1000);
	r = operator("revoke-all", json_object());
	{
		char *x = json_dumps(json_object_get(r, "result"), JSON_COMPACT);

		printf("  revoke-all: %s\n", x);
		free(x);
	}
	json_decref(r);

	r = mcp_peer_wait(&p, held, 15000);
	if (!r)
		bad = "the waiting call got no answer";
	json_decref(r);
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

static void test_revoke_all_keeps_sessions_and_daemon(void **state)
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
	    cmocka_unit_test_teardown(test_revoke_all_keeps_sessions_and_daemon, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
