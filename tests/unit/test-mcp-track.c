/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tools/lib/mcp-track.c, the outstanding-request count `cordonctl mcp`
 * waits on when stdin ends: requests counted, answered by id (numbers and
 * strings, escapes decoded), withdrawn by notifications/cancelled; server
 * requests, notifications, non-JSON, arrays and unknown answers change
 * nothing; lines split across reads; a line beyond the bound loses count. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mcp-track.h"

#define C MCP_TRACK_FROM_CLIENT
#define S MCP_TRACK_FROM_SERVER

static void feed(struct mcp_track *t, enum mcp_track_dir dir, const char *s)
{
	assert_int_equal(mcp_track_feed(t, dir, s, strlen(s)), 0);
}

static void test_requests_and_answers(void **state)
{
	struct mcp_track t = {};

	(void)state;
	feed(&t, C, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n");
	feed(&t, C, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
	feed(&t, C, "{\"method\":\"tools/call\",\"id\":\"a\\u0062\"}\r\n");
	feed(&t, C, "not json\n[{\"id\":9,\"method\":\"x\"}]\n{\"id\":10}\n");
	assert_int_equal(mcp_track_pending(&t), 2);
	/* A server request and notification, an answer to an unknown id. */
	feed(&t, S, "{\"id\":\"e1\",\"method\":\"elicitation/create\"}\n{\"method\":\"notifications/progress\"}\n");
	feed(&t, S, "{\"id\":99,\"result\":{}}\n{\"id\":\"1\",\"result\":{}}\n");
	assert_int_equal(mcp_track_pending(&t), 2);
	feed(&t, S, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
	assert_int_equal(mcp_track_pending(&t), 1);
	/* Split across reads, the id written differently. */
	feed(&t, S, "{\"result\":{},\"id\":\"a");
	assert_int_equal(mcp_track_pending(&t), 1);
	feed(&t, S, "b\"}\n");
	assert_int_equal(mcp_track_pending(&t), 0);
	assert_false(mcp_track_lost(&t));
	mcp_track_done(&t);
}

static void test_cancelled(void **state)
{
	struct mcp_track t = {};

	(void)state;
	feed(&t, C, "{\"id\":5,\"method\":\"tools/call\"}\n{\"id\":6,\"method\":\"tools/call\"}\n");
	feed(&t, C, "{\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":5,\"reason\":\"x\"}}\n");
	assert_int_equal(mcp_track_pending(&t), 1);
	feed(&t, S, "{\"id\":6,\"error\":{\"code\":-1,\"message\":\"m\"}}\n");
	assert_int_equal(mcp_track_pending(&t), 0);
	mcp_track_done(&t);
}

static void test_oversize_line_loses_count(void **state)
{
	struct mcp_track t = {};
	size_t n = MCP_TRACK_LINE_MAX + 10;
	char *big = malloc(n);

	(void)state;
	assert_non_null(big);
	memset(big, ' ', n);
	feed(&t, C, "{\"id\":5,\"method\":\"tools/call\"}\n");
	assert_int_equal(mcp_track_feed(&t, S, big, n), 0);
	assert_true(mcp_track_lost(&t));
	/* The next line is read again. */
	feed(&t, S, "\n{\"id\":5,\"result\":{}}\n");
	assert_int_equal(mcp_track_pending(&t), 0);
	free(big);
	mcp_track_done(&t);
	assert_false(mcp_track_lost(&t));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests_and_answers),
		cmocka_unit_test(test_cancelled),
		cmocka_unit_test(test_oversize_line_loses_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
