/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fault injection through the real daemon: kill -9 of cordond (its core in
 * its own process, tests/e2e/daemon-harness.c) at each step of a mutating
 * tools/call, then a restart on the same state directory:
 *  - before dispatch (the call is held waiting for its approval): after the
 *    restart the approval is revoked, no action exists, nothing ran;
 *  - after dispatch, before the result (the connector appended its line and
 *    is still busy): the action is outcome_unknown, never retried — the
 *    identical call after the restart is a new call that needs a new
 *    approval, and the line count stays 1;
 *  - after the result: the action is succeeded, one line;
 * and every time the audit chain verifies after a clean stop. (Killing
 * inside the commit of the transaction that consumes the approval and
 * appends the audit record is covered on the broker core by
 * test-fault-kill9-each-step: SQLite rolls it back.)
 * The connector dies with the daemon (PDEATHSIG), as under the launcher. */
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

static int setup(void **state)
{
	(void)state;
	harness_setup(&H, "sec-kill9d");
	harness_start(&H);
	harness_review_all(&H, "fake");
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

static long send_append(struct mcp_peer *p, const char *text)
{
	return mcp_peer_send_request(p, "tools/call",
				     json_pack("{s:s, s:{s:s}}", "name", "fake__append", "arguments", "text", text));
}

static void kill_and_restart(void)
{
	int st = harness_stop(&H, SIGKILL);

	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
	harness_start(&H);
}

static void clean_stop_and_verify(void)
{
	char msg[256];
	int st = harness_stop(&H, SIGTERM);

	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_true(harness_audit_ok(&H, msg, sizeof(msg)));
	printf("  audit: %s\n", msg);
}

/* After the restart the identical call is a new call: held for a new
 * approval (isError after the wait), not executed. */
static void retry_is_not_executed(const char *text, int lines)
{
	struct mcp_peer p;
	json_t *r;

	session(&p);
	r = mcp_peer_call(&p, "fake__append", json_pack("{s:s}", "text", text), 15000);
	assert_non_null(r);
	assert_true(json_is_true(json_object_get(r, "isError")));
	printf("  retry after restart: %.120s\n", result_text(r));
	json_decref(r);
	mcp_peer_disconnect(&p);
	assert_int_equal(harness_out_lines(&H), lines);
}

static void test_kill9_before_dispatch(void **state)
{
	struct mcp_peer p;

	(void)state;
	session(&p);
	(void)send_append(&p, "before-dispatch");
	for (int i = 0; i < 100 && harness_count_approvals(&H, CORDON_APPROVAL_REQUESTED) == 0; i++)
		usleep(20 * 1000);
	assert_int_equal(harness_count_approvals(&H, CORDON_APPROVAL_REQUESTED), 1);
	kill_and_restart();
	mcp_peer_disconnect(&p);
	assert_int_equal(harness_count_approvals(&H, CORDON_APPROVAL_REQUESTED), 0);
	assert_int_equal(harness_count_approvals(&H, CORDON_APPROVAL_REVOKED), 1);
	assert_int_equal(harness_count_actions(&H, CORDON_ACTION_PREPARED), 0);
	assert_int_equal(harness_count_actions(&H, CORDON_ACTION_DISPATCHED), 0);
	assert_int_equal(harness_out_lines(&H), 0);
	retry_is_not_executed("before-dispatch", 0);
	clean_stop_and_verify();
}

static void test_kill9_after_dispatch_before_result(void **state)
{
	struct mcp_peer p;
	json_t *r;

	(void)state;
	session(&p);
	r = mcp_peer_call(&p, "fake__append", json_pack("{s:s}", "text", "slow-k9"), 15000);
	json_decref(r);
	assert_int_equal(harness_approve_all(&H), 1);
	(void)send_append(&p, "slow-k9");
	/* The connector appends, then waits 3 s before answering. */
	for (int i = 0; i < 100 && harness_out_lines(&H) == 0; i++)
		usleep(20 * 1000);
	assert_int_equal(harness_out_lines(&H), 1);
	kill_and_restart();
	mcp_peer_disconnect(&p);
	assert_int_equal(harness_count_actions(&H, CORDON_ACTION_DISPATCHED), 0);
	assert_int_equal(harness_count_actions(&H, CORDON_ACTION_OUTCOME_UNKNOWN), 1);
	sleep(1);
	assert_int_equal(harness_out_lines(&H), 1);
	retry_is_not_executed("slow-k9", 1);
	clean_stop_and_verify();
}

static void test_kill9_after_result(void **state)
{
	struct mcp_peer p;
	json_t *r;

	(void)state;
	session(&p);
	r = mcp_peer_call(&p, "fake__append", json_pack("{s:s}", "text", "after-result"), 15000);
	json_decref(r);
	assert_int_equal(harness_approve_all(&H), 1);
	r = mcp_peer_call(&p, "fake__append", json_pack("{s:s}", "text", "after-result"), 15000);
	assert_non_null(r);
	assert_false(json_is_true(json_object_get(r, "isError")));
	json_decref(r);
	kill_and_restart();
	mcp_peer_disconnect(&p);
	assert_int_equal(harness_count_actions(&H, CORDON_ACTION_SUCCEEDED), 1);
	assert_int_equal(harness_count_actions(&H, CORDON_ACTION_OUTCOME_UNKNOWN), 0);
	assert_int_equal(harness_out_lines(&H), 1);
	retry_is_not_executed("after-result", 1);
	clean_stop_and_verify();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kill9_before_dispatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill9_after_dispatch_before_result, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill9_after_result, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
