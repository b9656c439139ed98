/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Issue 13 (MCP fidelity, robust framing): one line on a connector's stdout
 * that was not JSON stopped the instance, where the official SDK skips it.
 *
 * Requirement: a stdout line that is not a JSON-RPC message (plain text, a
 * partial JSON line, a JSON array, an object that is no message) is skipped
 * with a protocol warning through the per-instance rate limiter, showing an
 * escaped excerpt of at most 64 bytes with credential values masked, never
 * the whole line; the responses around such lines reach the client intact.
 * More than 100 such lines within 60 s stop the instance as a crash with
 * the reason "stopped: more than 100 stdout lines that are not JSON-RPC
 * messages within 60 s" in the log and the connector's last_error
 * (connectors.list and /health/detail).
 *
 * Real cordond core with the real evil-connector in mode chatty (a
 * credential file injected as EVIL_TOKEN). Four pipelined calls, each
 * answered between six garbage lines (24 in all): every call gets its
 * answer from the same instance. Then a call that makes the connector write
 * 150 garbage lines: the instance is stopped at the 101st, the reason is in
 * the log, connectors.list and /health/detail. The log never holds the credential value
 * (not even the part inside a straddling excerpt) nor a long line's tail,
 * and warning lines plus suppressed counts add up to the 101 skipped lines. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "sec-evil-daemon.h"

#define TOKEN	"chatty-T0KEN-cccc3333"
#define WARNING "stdout line skipped, not a JSON-RPC message"
#define REASON	"stopped: more than 100 stdout lines that are not JSON-RPC messages within 60 s"

/* Sums N over every "N protocol warnings suppressed" line of the log. */
static unsigned long suppressed_total(const char *log)
{
	unsigned long total = 0;

	for (const char *p = log; (p = strstr(p, " protocol warnings suppressed"));) {
		const char *q = p;

		while (q > log && q[-1] >= '0' && q[-1] <= '9')
			q--;
		total += strtoul(q, NULL, 10);
		p += 10;
	}
	return total;
}

static void test_garbage_lines_skipped_then_bounded(void **state)
{
	char token[700], *log;
	struct mcp_peer p;
	long ids[4];
	char first[64] = "";
	json_t *r, *list, *c;
	size_t i;
	bool named = false;

	(void)state;
	harness_setup(&H, "sec-garbage");
	snprintf(token, sizeof(token), "%s/evil.token", H.profiles);
	{
		FILE *f = fopen(token, "we");

		assert_non_null(f);
		assert_true(fprintf(f, "%s\n", TOKEN) > 0);
		assert_int_equal(fclose(f), 0);
	}
	evil_profile("chatty", NULL, token);
	harness_start(&H);
	evil_review_all();
	evil_session(&p);

	/* Four calls in flight at once: answers interleaved with garbage. */
	for (int k = 0; k < 4; k++)
		ids[k] = mcp_peer_send_request(&p, "tools/call",
					       json_pack("{s:s, s:{}}", "name", "fake__append", "arguments"));
	for (int k = 0; k < 4; k++) {
		const char *text;

		r = evil_response(&p, ids[k], 30000, NULL);
		assert_non_null(r);
		text = result_text(json_object_get(r, "result"));
		printf("  call %d: %s\n", k + 1, text);
		assert_non_null(strstr(text, "chatty "));
		if (!first[0])
			snprintf(first, sizeof(first), "%s", text);
		assert_string_equal(text, first); /* the same instance: it survived */
		json_decref(r);
	}
	r = mcp_peer_request(&p, "ping", NULL, 5000);
	assert_non_null(r);
	json_decref(r);

	/* 24 skipped so far; 150 more: the 101st stops the instance. */
	ids[0] = mcp_peer_send_request(&p, "tools/call",
				       json_pack("{s:s, s:{s:b}}", "name", "fake__append", "arguments", "burst", 1));
	r = evil_response(&p, ids[0], 30000, NULL);
	assert_non_null(r);
	printf("  burst call: %s\n", result_text(json_object_get(r, "result")));
	assert_null(strstr(result_text(json_object_get(r, "result")), "chatty "));
	json_decref(r);
	assert_true(evil_log_wait(REASON, 10000));

	list = evil_operator("connectors.list", json_object());
	json_array_foreach(json_object_get(list, "result"), i, c)
	{
		const char *e = json_string_value(json_object_get(c, "last_error"));

		if (e && strstr(e, REASON)) {
			printf("  last_error: %s\n", e);
			named = true;
		}
	}
	json_decref(list);
	assert_true(named);
	{
		int status = 0;
		json_t *detail = harness_http_json(&H, "/health/detail", &status);
		const char *e = NULL;

		assert_int_equal(status, 200);
		json_array_foreach(json_object_get(detail, "connectors"), i,
				   c) if (!strcmp(json_string_value(json_object_get(c, "id")), "fake")) e =
			json_string_value(json_object_get(c, "last_error"));
		printf("  /health/detail last_error: %s\n", e ? e : "(none)");
		assert_non_null(e);
		assert_non_null(strstr(e, REASON));
		json_decref(detail);
	}

	log = evil_log();
	printf("  warning lines %u, suppressed %lu, stop reason logged %u time(s)\n", evil_log_count(WARNING),
	       suppressed_total(log), evil_log_count(REASON));
	/* Every skipped line is either logged or counted as suppressed. */
	assert_int_equal(evil_log_count(WARNING) + suppressed_total(log), 24 + 77);
	assert_true(evil_log_count(WARNING) >= 10);
	/* The first ten warnings: call 1's six lines and call 2's first
	 * three plus its answer's neighbour; excerpts escaped. */
	assert_non_null(strstr(log, "\"plain text \\x1b[1mbold\""));
	assert_non_null(strstr(log, "\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":\""));
	assert_non_null(strstr(log, "\"[1,2,3]\""));
	assert_non_null(strstr(log, "\"{\\\"hello\\\":\\\"world\\\"}\""));
	assert_non_null(strstr(log, "debug: upstream token ********************* accepted"));
	/* A long line: 64 bytes and "...", the value masked although the
	 * excerpt ends inside it, the tail never logged. */
	assert_non_null(strstr(log, "ppppppppp*********\"..."));
	assert_null(strstr(log, TOKEN));
	assert_null(strstr(log, "chatty-T0"));
	assert_null(strstr(log, "TAIL-NOT-LOGGED"));
	free(log);

	/* The daemon still serves. */
	r = mcp_peer_request(&p, "ping", NULL, 5000);
	assert_non_null(r);
	assert_non_null(json_object_get(r, "result"));
	json_decref(r);
	mcp_peer_disconnect(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_garbage_lines_skipped_then_bounded, evil_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
