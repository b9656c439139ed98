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

static void write_evil_profile(const char *mode, const char *arg)
{
	char path[700], text[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/fake.yaml", H.profiles);
	snprintf(text, sizeof(text),
		 "version: 1\n"
		 "connector:\n"
		 "  description: evil connector for the security suite\n"
		 "  command: [%s/evil-connector, %s, '%s']\n"
		 "  instances: shared\n"
		 "sandbox:\n"
		 "  user: dynamic\n"
		 "  filesystem:\n"
		 "    system:\n"
		 "      - {path: /usr, access: read-exec}\n"
		 "    roots:\n"
		 "      - {path: %s, access: read-write, at: /data, allow_uid0_owner: true}\n"
		 "    ceiling: [%s]\n"
		 "    tmp: 1M\n"
		 "  network: {mode: none}\n"
		 "tools:\n"
		 "  default_risk: high\n"
		 "  risk: {append: read}\n"
		 "  grant: [append]\n"
		 "approval:\n"
		 "  ttl: 120s\n",
		 harness_helpers_dir(), mode, arg ? arg : "", H.data, H.data);
	f = fopen(path, "we");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static json_t *op_request(struct mcp_peer *op, long id, const char *name, json_t *args)
{
	json_t *req = json_pack("{s:i, s:I, s:s, s:o}", "v", 1, "id", (json_int_t)id, "op", name, "args", args);
	char *line = json_dumps(req, JSON_COMPACT);

	json_decref(req);
	assert_non_null(line);
	assert_int_equal(mcp_peer_send_raw(op, line, strlen(line)), 0);
	assert_int_equal(mcp_peer_send_raw(op, "\n", 1), 0);
	free(line);
	return mcp_peer_read(op, 10000);
}

static json_t *operator(const char *name, json_t *args)
{
	static long id;
	char path[700];
	struct mcp_peer op;
	json_t *r;

	snprintf(path, sizeof(path), "%s/operator.sock", H.runtime);
	assert_int_equal(mcp_peer_connect(&op, path), 0);
	r = op_request(&op, ++id, name, args);
	mcp_peer_disconnect(&op);
	assert_non_null(r);
	return r;
}

static void start_with(const char *mode, const char *arg)
{
	json_t *inv, *t, *r;
	size_t i;

	harness_setup(&H, "sec-gwevil");
	write_evil_profile(mode, arg);
	harness_start(&H);
	inv = operator("inventory.show", json_pack("{s:s, s:b}", "connector", "fake", "all", 1));
	json_array_foreach(json_object_get(json_object_get(inv, "result"), "tools"), i, t)
	{
		r = operator("inventory.review", json_pack("{s:s, s:s, s:s}", "connector", "fake", "tool",
							   json_string_value(json_object_get(t, "tool")), "fingerprint",
							   json_string_value(json_object_get(t, "fingerprint"))));
		assert_true(json_is_true(json_object_get(r, "ok")));
		json_decref(r);
	}
	json_decref(inv);
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

static long rss_kib(pid_t pid)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void still_serving(void)
{
	struct mcp_peer q;
	json_t *r;

	session(&q);
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
	start_with("flood", "1073741824");
	rss0 = rss_kib(H.daemon_pid);
	session(&p);
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
	rss1 = rss_kib(H.daemon_pid);
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
	start_with("exit-mid", NULL);
	session(&p);
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
	start_with("hang", NULL);
	session(&p);
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
	start_with("malicious", NULL);
	session(&p);
	list0 = mcp_peer_request(&p, "tools/list", json_object(), 10000);
	g0 = operator("grants.show", json_pack("{s:s}", "connector", "fake"));
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
	g1 = operator("grants.show", json_pack("{s:s}", "connector", "fake"));
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
		cmocka_unit_test_teardown(test_flood_through_cordond, teardown),
		cmocka_unit_test_teardown(test_exit_mid_response_through_cordond, teardown),
		cmocka_unit_test_teardown(test_never_answers_through_cordond, teardown),
		cmocka_unit_test_teardown(test_malicious_connector_through_cordond, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
