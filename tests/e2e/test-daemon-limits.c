/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordond's resource bounds with real processes: the session limit (the
 * next connection gets an error line and is closed; others unaffected) and
 * the cap on pending approvals per session. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon-harness.h"
#include "test-support.h"

static struct harness H;

static void test_session_limit(void **state)
{
	struct mcp_peer p[4], extra;
	json_t *v;

	(void)state;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(mcp_peer_connect(&p[i], H.gateway), 0);
		v = mcp_peer_initialize(&p[i], "2025-11-25");
		assert_non_null(v);
		json_decref(v);
	}
	/* The fifth: one error line, then EOF. */
	assert_int_equal(mcp_peer_connect(&extra, H.gateway), 0);
	v = mcp_peer_read(&extra, 5000);
	assert_non_null(v);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(v, "error"), "code")), -32000);
	assert_non_null(strstr(json_string_value(json_object_get(json_object_get(v, "error"), "message")),
			       "too many sessions"));
	json_decref(v);
	assert_null(mcp_peer_read(&extra, 1000));
	mcp_peer_disconnect(&extra);
	/* The others still work; closing one makes room. */
	v = mcp_peer_request(&p[0], "ping", NULL, 5000);
	assert_non_null(json_object_get(v, "result"));
	json_decref(v);
	mcp_peer_disconnect(&p[3]);
	usleep(200 * 1000);
	assert_int_equal(mcp_peer_connect(&extra, H.gateway), 0);
	v = mcp_peer_initialize(&extra, "2025-11-25");
	assert_non_null(v);
	json_decref(v);
	mcp_peer_disconnect(&extra);
	for (int i = 0; i < 3; i++)
		mcp_peer_disconnect(&p[i]);
}

static void test_pending_approval_cap_per_session(void **state)
{
	struct mcp_peer p;
	json_t *v;
	int refused = 0;

	(void)state;
	usleep(200 * 1000);
	assert_int_equal(mcp_peer_connect(&p, H.gateway), 0);
	v = mcp_peer_initialize(&p, "2025-11-25");
	json_decref(v);
	/* 70 calls held for approval... but the approval cap (16 per session)
	 * answers most at once; what remains held never exceeds 64 and the
	 * session keeps answering. */
	for (int i = 0; i < 70; i++) {
		char text[32];

		snprintf(text, sizeof(text), "held-%d", i);
		(void)mcp_peer_send_request(
			&p, "tools/call",
			json_pack("{s:s, s:{s:s}}", "name", "fake__append", "arguments", "text", text));
	}
	for (int i = 0; i < 70; i++) {
		v = mcp_peer_read(&p, 10000);
		if (!v)
			break;
		if (json_is_true(json_object_get(json_object_get(v, "result"), "isError")) ||
		    json_object_get(v, "error"))
			refused++;
		json_decref(v);
		if (refused >= 54)
			break;
	}
	/* 16 held (the per-session approval cap), the rest refused. */
	assert_int_equal(refused, 54);
	v = mcp_peer_request(&p, "ping", NULL, 5000);
	assert_non_null(json_object_get(v, "result"));
	json_decref(v);
	mcp_peer_disconnect(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_limit),
		cmocka_unit_test(test_pending_approval_cap_per_session),
	};
	int r;

	if (geteuid() != 0)
		cordon_test_skip("needs root (the daemon drops privileges and sandboxes itself)");
	harness_setup(&H, "cordond-limits");
	H.max_sessions = 4;
	/* This test is about the global limit: one uid may take all four
	 * (the default share would be max_sessions / 4 = 1). */
	H.sessions_per_uid = 4;
	H.approval_wait_s = 30;
	harness_start(&H);
	harness_review_all(&H, "fake");
	r = cmocka_run_group_tests(tests, NULL, NULL);
	harness_teardown(&H);
	return r;
}
