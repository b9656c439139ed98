/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Issue 11 finding 9 (fourth item): a connector's protocol warnings were not
 * rate-limited: 20 000 bad lines made 20 000 broker log lines.
 *
 * Requirement: the protocol warnings cordond logs about a connector's output
 * (lines it ignores, such as responses to request ids it never sent) are
 * rate-limited per instance, at most 10 per 10 s, and what was suppressed is
 * summarised with its exact count.
 *
 * Real cordond core with the real evil-connector in mode bad-responses
 * 20000: one call makes the connector write 20 000 responses to unknown ids
 * before its answer. Asserts: the call is answered (the instance is not
 * killed for them), the log holds exactly 10 warning lines and one summary
 * "19990 protocol warnings suppressed (rate limit: 10 per 10 s)", and the
 * daemon still serves. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "sec-evil-daemon.h"

#define WARNING "response to an unknown request id; ignored"
#define SUMMARY "19990 protocol warnings suppressed (rate limit: 10 per 10 s)"

static void test_protocol_warnings_rate_limited(void **state)
{
	struct mcp_peer p;
	json_t *r;
	long id;
	unsigned warnings, summaries;

	(void)state;
	evil_start("sec-warnrate", "bad-responses", "20000", NULL);
	evil_session(&p);
	id = mcp_peer_send_request(&p, "tools/call", json_pack("{s:s, s:{}}", "name", "fake__append", "arguments"));
	r = evil_response(&p, id, 60000, NULL);
	assert_non_null(r);
	assert_string_equal(result_text(json_object_get(r, "result")), "done");
	json_decref(r);

	/* The summary comes when the 10 s window ends. */
	assert_true(evil_log_wait("protocol warnings suppressed", 20000));
	warnings = evil_log_count(WARNING);
	summaries = evil_log_count("protocol warnings suppressed");
	printf("  20000 bad lines: %u warning lines, %u summary line(s), \"%s\" present: %s\n", warnings, summaries,
	       SUMMARY, evil_log_count(SUMMARY) ? "yes" : "no");
	assert_int_equal(warnings, 10);
	assert_int_equal(summaries, 1);
	assert_int_equal(evil_log_count(SUMMARY), 1);

	r = mcp_peer_request(&p, "ping", NULL, 5000);
	assert_non_null(r);
	assert_non_null(json_object_get(r, "result"));
	json_decref(r);
	mcp_peer_disconnect(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_protocol_warnings_rate_limited, evil_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
