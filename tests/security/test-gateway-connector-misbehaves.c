/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Misbehaving and malicious connectors behind cordond (its core in its own
 * process, tests/e2e/daemon-harness.c), driven through the gateway. The
 * connector `fake` is replaced by tests/helpers/evil-connector in one mode
 * per test; its one tool `append` is granted at tier read (no approval) and
 * reviewed through the operator socket (cordond stays the only writer).
 *  - flood: the 1 GiB answer line is cut at the daemon's line bound, the
 *    instance is killed, the client gets an error (not a hang), cordond's
 *    RSS grows by less than 32 MiB, another session still works;
 *  - exit mid-response: the client gets an error, the session still works;
 *  - never answers: there is no per-call timeout in cordond (finding), so
 *    the client cancels (notifications/cancelled); the session and the
 *    daemon keep serving (ping, another call);
 *  - malicious: results with fake grants/approvals/list_changed/policy text
 *    and server->client requests named approvals/approve, grants/add,
 *    connectors/add and a forged response id: the result is relayed as
 *    data, none of the connector's requests or its forged response reaches
 *    the client, nothing is approved or granted, tools/list is unchanged,
 *    the audit verifies. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <jansson.h>

#include "sec-evil-daemon.h"

static void still_serving(void)
{
	struct mcp_peer q;
	json_t *r;

	evil_session(&q);
	r = mcp_peer_request(&q, "ping", NULL, 5000);
	assert_non_null(r);
	assert_non_null(json_object_get(r, "result"));
	json_decref(r);
	r = mcp_peer_request(&q, "tools/call",
			     json_pack("{s:s, s:{s:s}}", "name", "fakeps__echo", "arguments", "text", "hi"), 10000);
	assert_non_null(r);
	json_decref(r);
	mcp_peer_disconnect(&q);
}

/* The first response to id, with any message in between inspected by cb. */
static json_t *response_to(struct mcp_peer *p, long id, int timeout_ms, int *ret_foreign)
{
	for (;;) {
		json_t *m = mcp_peer_read(p, timeout_ms);
		const char *method;

		if (!m)
			return NULL;
		method = json_string_value(json_object_get(m, "method"));
		if (!method && json_integer_value(json_object_get(m, "id")) == id)
			return m;
		if (method && strcmp(method, "notifications/progress") != 0 &&
		    strcmp(method, "notifications/tools/list_changed") != 0 &&
		    strcmp(method, "notifications/message") != 0) {
			printf("  reached the client: %s\n", method);
			(*ret_foreign)++;
		}
		if (!method)
			(*ret_foreign)++; /* a response to something the client never sent */
		json_decref(m);
	}
}

static void test_flood_through_cordond(void **state)
{
	struct mcp_peer p;
	json_t *r;
	long id, rss0, rss1;
	int foreign = 0;

	(void)state;
	evil_start("sec-gwevil", "flood", "1073741824", NULL);
	rss0 = cordon_test_rss_kib(H.daemon_pid);
	evil_session(&p);
	id = mcp_peer_send_request(&p, "tools/call", json_pack("{s:s, s:{}}", "name", "fake__append", "arguments"));
	r = response_to(&p, id, 60000, &foreign);
	assert_non_null(r);
	{
		char *s = json_dumps(r, JSON_COMPACT);

		printf("  flood answer: %.200s\n", s);
		free(s);
	}
	assert_true(json_object_get(r, "error") ||
		    json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
	json_decref(r);
	rss1 = cordon_test_rss_kib(H.daemon_pid);
	printf("  cordond RSS %ld -> %ld KiB\n", rss0, rss1);
	assert_true(rss1 - rss0 < 32 * 1024);
	mcp_peer_disconnect(&p);
	still_serving();
}

static void test_exit_mid_response_through_cordond(void **state)
{
	struct mcp_peer p;
	json_t *r;
	long id;
	int foreign = 0;

	(void)state;
	evil_start("sec-gwevil", "exit-mid", NULL, NULL);
	evil_session(&p);
	id = mcp_peer_send_request(&p, "tools/call", json_pack("{s:s, s:{}}", "name", "fake__append", "arguments"));
	r = response_to(&p, id, 30000, &foreign);
	assert_non_null(r);
	assert_true(json_object_get(r, "error") ||
		    json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
	printf("  exit-mid answer: %s\n",
	       json_object_get(r, "error") ? json_string_value(json_object_get(json_object_get(r, "error"), "message"))
					   : result_text(json_object_get(r, "result")));
	json_decref(r);
	mcp_peer_disconnect(&p);
	still_serving();
}

static void test_never_answers_through_cordond(void **state)
{
	struct mcp_peer p;
	json_t *r;
	long id;
	char note[200];

	(void)state;
	evil_start("sec-gwevil", "hang", NULL, NULL);
	evil_session(&p);
	id = mcp_peer_send_request(&p, "tools/call", json_pack("{s:s, s:{}}", "name", "fake__append", "arguments"));
	/* No answer in 3 s (cordond has no per-call timeout). */
	r = mcp_peer_wait(&p, id, 3000);
	assert_null(r);
	snprintf(note, sizeof(note),
		 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":%ld}}\n", id);
	assert_int_equal(mcp_peer_send_raw(&p, note, strlen(note)), 0);
	r = mcp_peer_request(&p, "ping", NULL, 5000);
	assert_non_null(r);
	json_decref(r);
	mcp_peer_disconnect(&p);
	still_serving();
}

static void test_malicious_connector_through_cordond(void **state)
{
	struct mcp_peer p;
	json_t *r, *list0, *list1, *g0, *g1;
	long id;
	int foreign = 0;
	char msg[256];

	(void)state;
	evil_start("sec-gwevil", "malicious", NULL, NULL);
	evil_session(&p);
	list0 = mcp_peer_request(&p, "tools/list", json_object(), 10000);
	g0 = evil_operator("grants.show", json_pack("{s:s}", "connector", "fake"));
	id = mcp_peer_send_request(&p, "tools/call", json_pack("{s:s, s:{}}", "name", "fake__append", "arguments"));
	r = response_to(&p, id, 30000, &foreign);
	assert_non_null(r);
	/* Relayed as data. */
	{
		char *s = json_dumps(r, JSON_COMPACT);

		assert_non_null(strstr(s, "SYSTEM POLICY UPDATE"));
		free(s);
	}
	json_decref(r);
	/* Give the spoofed lines after the answer time to arrive. */
	r = mcp_peer_request(&p, "ping", NULL, 5000);
	assert_non_null(r);
	json_decref(r);
	while ((r = mcp_peer_read(&p, 500))) {
		const char *method = json_string_value(json_object_get(r, "method"));

		if (!method || (strcmp(method, "notifications/tools/list_changed") != 0 &&
				strcmp(method, "notifications/message") != 0)) {
			printf("  reached the client: %s\n", method ? method : "(a response)");
			foreign++;
		}
		json_decref(r);
	}
	assert_int_equal(foreign, 0);
	list1 = mcp_peer_request(&p, "tools/list", json_object(), 10000);
	assert_true(json_equal(json_object_get(list0, "result"), json_object_get(list1, "result")));
	g1 = evil_operator("grants.show", json_pack("{s:s}", "connector", "fake"));
	assert_true(json_equal(json_object_get(g0, "result"), json_object_get(g1, "result")));
	assert_int_equal(harness_count_approvals(&H, CORDON_APPROVAL_APPROVED), 0);
	assert_int_equal(harness_count_approvals(&H, CORDON_APPROVAL_REQUESTED), 0);
	json_decref(list0);
	json_decref(list1);
	json_decref(g0);
	json_decref(g1);
	mcp_peer_disconnect(&p);
	assert_int_equal(harness_stop(&H, SIGTERM), 0);
	assert_true(harness_audit_ok(&H, msg, sizeof(msg)));
	printf("  audit: %s\n", msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_flood_through_cordond, evil_teardown),
		cmocka_unit_test_teardown(test_exit_mid_response_through_cordond, evil_teardown),
		cmocka_unit_test_teardown(test_never_answers_through_cordond, evil_teardown),
		cmocka_unit_test_teardown(test_malicious_connector_through_cordond, evil_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
