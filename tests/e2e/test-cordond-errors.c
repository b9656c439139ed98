/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A connector's JSON-RPC errors through the real cordond (issue 13,
 * "Errors"): the real binary, the real launcher helper, the fake connector
 * (--errors) in a real sandbox. For tools/call, prompts/get, resources/read
 * and completion/complete the client gets the connector's code, message and
 * data exactly; a message beyond 4 KiB is cut with a marker, data beyond
 * 16 KiB is replaced; a malformed error is cordon's -32603 naming the
 * connector; a connector cannot claim to be cordon; cordon's own refusals
 * carry {"io.cordon/refused_by": "cordon"}. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cordond-runner.h"
#include "daemon-harness.h"
#include "test-support.h"

static struct rcd C;

/* The fake connector answering errors (--errors), resources and prompts
 * passed through. */
static void write_profile(void)
{
	rcd_fake_profile(&C, "fake",
			 &(struct rcd_fake_options){ .arg = "--errors",
						     .tools = "  risk: {echo: read, fail: read, append: write}\n"
							      "  grant: [echo, fail, append]\n"
							      "  replay: {fail: safe}\n",
						     .tail = "resources: read\nprompts: read\n" });
}

static int setup(void **state)
{
	(void)state;
	write_profile();
	C.approval_wait = "1s";
	rcd_start(&C);
	rcd_install(&C, "fake");
	return 0;
}

/* The error member of r, which must be an error response (no result). */
static json_t *error_of(json_t *r)
{
	assert_non_null(r);
	assert_null(json_object_get(r, "result"));
	assert_true(json_is_object(json_object_get(r, "error")));
	return json_object_get(r, "error");
}

/* r's error equals the JSON text want (compared as values). */
static void assert_error_is(json_t *r, const char *want)
{
	json_t *w = json_loads(want, 0, NULL);
	json_t *e = error_of(r);

	assert_non_null(w);
	if (!json_equal(e, w)) {
		char *got = json_dumps(e, JSON_COMPACT | JSON_SORT_KEYS);

		fail_msg("error %s, want %s", got, want);
	}
	json_decref(w);
}

static json_t *fail_call(struct mcp_peer *p, const char *kind)
{
	return mcp_peer_request(p, "tools/call",
				json_pack("{s:s, s:{s:s}}", "name", "fake__fail", "arguments", "text", kind), 20000);
}

#define QUOTA_ERROR(where)                                                                                             \
	"{\"code\":-32042,\"message\":\"quota "                                                                        \
	"\\u001b[31mexceeded\\u009b\",\"data\":{\"retry_after\":5,\"where\":[\"" where "\",null,true]}}"

static void test_tools_call_error_relayed(void **state)
{
	struct mcp_peer p;
	json_t *r;

	(void)state;
	rcd_session(&C, &p);
	r = fail_call(&p, "data");
	assert_error_is(r, QUOTA_ERROR("data"));
	json_decref(r);
	r = fail_call(&p, "nodata");
	assert_error_is(r, "{\"code\":404,\"message\":\"not found\"}");
	json_decref(r);
	mcp_peer_disconnect(&p);
}

/* With an idempotency key the call is on the ledger: its action fails with
 * reason connector-error, and the audit log holds none of the connector's
 * text. */
static void test_ledger_records_connector_error(void **state)
{
	struct mcp_peer p;
	json_t *r, *v, *rec, *found = NULL;
	char *out = NULL;
	size_t i;

	(void)state;
	rcd_session(&C, &p);
	r = mcp_peer_request(&p, "tools/call",
			     json_pack("{s:s, s:{s:s}, s:{s:s}}", "name", "fake__fail", "arguments", "text", "data",
				       "_meta", "io.cordon/idempotency-key", "errors-e2e-1"),
			     20000);
	assert_error_is(r, QUOTA_ERROR("data"));
	json_decref(r);
	/* The same identity again: the call ran, and its error was not stored
	 * (it is the connector's text): cordon says so, marked, and does not
	 * run it again. */
	r = mcp_peer_request(&p, "tools/call",
			     json_pack("{s:s, s:{s:s}, s:{s:s}}", "name", "fake__fail", "arguments", "text", "data",
				       "_meta", "io.cordon/idempotency-key", "errors-e2e-1"),
			     20000);
	assert_non_null(r);
	rec = json_object_get(r, "result");
	assert_true(json_is_true(json_object_get(rec, "isError")));
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(json_object_get(rec, "content"), 0), "text")),
		"cordon: not sent: this call already ran; its result is not available (none was stored, or an earlier "
		"broker process stored it) and it is not repeated.");
	assert_string_equal(json_string_value(json_object_get(json_object_get(rec, "_meta"), "io.cordon/refused_by")),
			    "cordon");
	json_decref(r);
	mcp_peer_disconnect(&p);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "--json", "audit", "tail", "--count", "50", (char *)NULL), 0);
	assert_null(strstr(out, "quota"));
	assert_null(strstr(out, "retry_after"));
	v = json_loads(out, 0, NULL);
	assert_non_null(v);
	json_array_foreach(rcd_first_array(v), i, rec)
	{
		if (!strcmp(json_string_value(json_object_get(rec, "event")) ?: "", "action") &&
		    !strcmp(json_string_value(json_object_get(rec, "tool")) ?: "", "fail"))
			found = rec;
	}
	assert_non_null(found);
	assert_string_equal(json_string_value(json_object_get(found, "state")), "failed");
	assert_string_equal(json_string_value(json_object_get(found, "reason")), "connector-error");
	json_decref(v);
	free(out);
}

static void test_prompt_resource_completion_errors_relayed(void **state)
{
	struct mcp_peer p;
	json_t *r;

	(void)state;
	rcd_session(&C, &p);
	r = mcp_peer_request(&p, "prompts/get", json_pack("{s:s}", "name", "fake__fail"), 20000);
	assert_error_is(r, QUOTA_ERROR("prompt"));
	json_decref(r);
	/* A resource routes by its URI (cordon+<connector>:<uri>). */
	r = mcp_peer_request(&p, "resources/list", NULL, 20000);
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "resources")), 2);
	json_decref(r);
	r = mcp_peer_request(&p, "resources/read", json_pack("{s:s}", "uri", "cordon+fake:fake://fail"), 20000);
	assert_error_is(r, QUOTA_ERROR("read"));
	json_decref(r);
	r = mcp_peer_request(&p, "completion/complete",
			     json_pack("{s:{s:s, s:s}, s:{s:s, s:s}}", "ref", "type", "ref/prompt", "name",
				       "fake__greet", "argument", "name", "who", "value", "a"),
			     20000);
	assert_error_is(r, QUOTA_ERROR("complete"));
	json_decref(r);
	mcp_peer_disconnect(&p);
}

static void test_bounds(void **state)
{
	struct mcp_peer p;
	json_t *r, *e;
	const char *m;
	char want[5000];

	(void)state;
	rcd_session(&C, &p);
	/* A 5000-byte message: 4096 bytes with the marker. */
	r = fail_call(&p, "long");
	e = error_of(r);
	assert_int_equal(json_integer_value(json_object_get(e, "code")), 1);
	m = json_string_value(json_object_get(e, "message"));
	memset(want, 'm', 4096 - 40);
	snprintf(want + 4096 - 40, sizeof(want) - (4096 - 40), " [cordon: message truncated, 5000 bytes]");
	assert_int_equal(strlen(" [cordon: message truncated, 5000 bytes]"), 40);
	assert_string_equal(m, want);
	assert_null(json_object_get(e, "data"));
	json_decref(r);
	/* 20002 bytes of data: replaced by the marker object. */
	r = fail_call(&p, "bigdata");
	assert_error_is(r, "{\"code\":-32001,\"message\":\"big\",\"data\":{\"io.cordon/data_dropped\":{\"bytes\":20002,"
			   "\"limit\":16384}}}");
	json_decref(r);
	/* The prompt's arguments pick the error: the same bound there. */
	r = mcp_peer_request(&p, "prompts/get",
			     json_pack("{s:s, s:{s:s}}", "name", "fake__fail", "arguments", "kind", "bigdata"), 20000);
	assert_error_is(r, "{\"code\":-32001,\"message\":\"big\",\"data\":{\"io.cordon/data_dropped\":{\"bytes\":20002,"
			   "\"limit\":16384}}}");
	json_decref(r);
	mcp_peer_disconnect(&p);
}

static void test_malformed_and_forged(void **state)
{
	static const struct {
		const char *kind, *problem;
	} cases[] = {
		{ "badcode", "error.code is not an integer" },
		{ "nomessage", "error.message is not a string" },
		{ "notobject", "error is not an object" },
	};
	struct mcp_peer p;
	json_t *r;

	(void)state;
	rcd_session(&C, &p);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[512];

		snprintf(want, sizeof(want),
			 "{\"code\":-32603,\"message\":\"cordon: connector fake sent a malformed error: %s\","
			 "\"data\":{\"io.cordon/refused_by\":\"cordon\"}}",
			 cases[i].problem);
		r = fail_call(&p, cases[i].kind);
		assert_error_is(r, want);
		json_decref(r);
	}
	r = mcp_peer_request(&p, "prompts/get",
			     json_pack("{s:s, s:{s:s}}", "name", "fake__fail", "arguments", "kind", "badcode"), 20000);
	assert_error_is(r, "{\"code\":-32603,\"message\":\"cordon: connector fake sent a malformed error: error.code "
			   "is not an integer\",\"data\":{\"io.cordon/refused_by\":\"cordon\"}}");
	json_decref(r);
	/* The connector cannot say it is cordon: the marker is removed, the
	 * rest of its data kept. */
	r = fail_call(&p, "forge");
	assert_error_is(r, "{\"code\":-32001,\"message\":\"cordon: refused\",\"data\":{\"mine\":1}}");
	json_decref(r);
	mcp_peer_disconnect(&p);
}

static void test_cordon_refusals_say_so(void **state)
{
	struct mcp_peer p;
	json_t *r;

	(void)state;
	rcd_session(&C, &p);
	/* A tool outside the surface: cordon's -32602. */
	r = mcp_peer_request(&p, "tools/call", json_pack("{s:s, s:{}}", "name", "fake__nope", "arguments"), 20000);
	assert_error_is(r, "{\"code\":-32602,\"message\":\"Unknown tool: fake__nope\",\"data\":{\"io.cordon/"
			   "refused_by\":\"cordon\"}}");
	json_decref(r);
	/* A URI naming a connector that serves no resources here. */
	r = mcp_peer_request(&p, "resources/read", json_pack("{s:s}", "uri", "cordon+nope:fake://fail"), 20000);
	assert_error_is(r, "{\"code\":-32602,\"message\":\"Unknown resource: no connector 'nope' serves resources "
			   "here\",\"data\":{\"io.cordon/refused_by\":\"cordon\"}}");
	json_decref(r);
	/* A write waits for an approval nobody gives: cordon's isError
	 * result, marked. */
	r = mcp_peer_call(&p, "fake__append", json_pack("{s:s}", "text", "x"), 20000);
	assert_non_null(r);
	assert_true(json_is_true(json_object_get(r, "isError")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "_meta"), "io.cordon/refused_by")),
			    "cordon");
	assert_non_null(
		strstr(json_string_value(json_object_get(json_array_get(json_object_get(r, "content"), 0), "text")),
		       "cordon: this call needs an operator's approval"));
	json_decref(r);
	/* Nothing was appended. */
	assert_int_equal(rcd_out_lines(&C), 0);
	mcp_peer_disconnect(&p);
}

/* Reads p until EOF (up to timeout_ms): the ids of the responses seen, in
 * order, into ids (at most n); returns how many, or -1 when no EOF came. */
static int responses_until_eof(struct mcp_peer *p, long *ids, int n, int timeout_ms)
{
	int k = 0;

	for (;;) {
		json_t *v = mcp_peer_read(p, timeout_ms);
		struct pollfd pfd = { .fd = p->from, .events = POLLIN };
		char c;

		if (!v) {
			/* Timeout or EOF: EOF reads 0 at once. */
			if (poll(&pfd, 1, 0) == 1 && recv(p->from, &c, 1, MSG_DONTWAIT) == 0)
				return k;
			return -1;
		}
		if (json_object_get(v, "id") && !json_object_get(v, "method") && k < n)
			ids[k++] = (long)json_integer_value(json_object_get(v, "id"));
		json_decref(v);
	}
}

/* A client that shuts down its sending side (a raw client's half-close:
 * `socat`, `nc -N`, a script's EOF) still gets the answers it is owed:
 * a call in flight, a call held for approval (its isError naming the
 * code after --approval-wait), and a last line without its newline; then
 * cordond closes the session. With nothing owed it closes at once. */
static void test_half_close_keeps_owed_answers(void **state)
{
	static const char calls[] =
		"{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/call\",\"params\":{\"name\":\"fake__append\","
		"\"arguments\":{\"text\":\"held\"}}}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\",\"params\":{\"name\":\"fake__echo\","
		"\"arguments\":{\"text\":\"hi\"}}}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":43,\"method\":\"ping\"}";
	struct mcp_peer p;
	long ids[8];
	int n;

	(void)state;
	rcd_session(&C, &p);
	assert_int_equal(mcp_peer_send_raw(&p, calls, sizeof(calls) - 1), 0);
	assert_int_equal(shutdown(p.to, SHUT_WR), 0);
	n = responses_until_eof(&p, ids, 8, 20000);
	if (n != 3)
		fail_msg("after a half-close: %d responses before EOF, want 3", n);
	/* ping and echo first; the held append last, after approval_wait. */
	assert_int_equal(ids[2], 41);
	assert_true((ids[0] == 42 && ids[1] == 43) || (ids[0] == 43 && ids[1] == 42));
	mcp_peer_disconnect(&p);
	assert_int_equal(rcd_out_lines(&C), 0);
	/* Nothing owed: EOF at once. */
	rcd_session(&C, &p);
	assert_int_equal(shutdown(p.to, SHUT_WR), 0);
	assert_int_equal(responses_until_eof(&p, ids, 8, 5000), 0);
	mcp_peer_disconnect(&p);
}

/* The line the client reads holds no raw control byte: DEL and C1 go out
 * as \u escapes (JSON itself escapes C0). A plain socket, to see bytes. */
static void test_no_raw_controls_on_the_wire(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static const char hello[] =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-"
		"18\","
		"\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}\n"
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"tools/call\",\"params\":{\"name\":\"fake__fail\","
		"\"arguments\":{\"text\":\"data\"}}}\n";
	char buf[65536];
	size_t len = 0;
	const char *line = NULL;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	(void)state;
	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", C.gateway);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(write(fd, hello, strlen(hello)), (ssize_t)strlen(hello));
	while (!line) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		assert_int_equal(poll(&pfd, 1, 20000), 1);
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		assert_true(n > 0);
		len += (size_t)n;
		buf[len] = 0;
		line = strstr(buf, "{\"jsonrpc\":\"2.0\",\"id\":77,");
		if (line && !strchr(line, '\n'))
			line = NULL;
	}
	close(fd);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		assert_false(c == 0x7f || c == 0x1b ||
			     (c == 0xc2 && (unsigned char)buf[i + 1] >= 0x80 && (unsigned char)buf[i + 1] <= 0x9f));
	}
	assert_non_null(strstr(line, "\"message\":\"quota \\u001B[31mexceeded\\u009b\""));
}

/* The official TypeScript SDK through `cordonctl mcp`: its McpError has the
 * connector's code and data, and cordon's marker on cordon's refusal. */
static void test_official_sdk_sees_the_connector_error(void **state)
{
	const char *node_dir = getenv("CORDON_E2E_NODE_DIR");
	char script[700], plan[700], *out = NULL;
	json_t *v, *res, *want;
	FILE *f;
	int st, p[2];
	pid_t pid;

	(void)state;
	if (!node_dir)
		cordon_test_skip("CORDON_E2E_NODE_DIR not set (npm fixture)");
	snprintf(script, sizeof(script), "%s/sdk-client.mjs", node_dir);
	snprintf(plan, sizeof(plan), "%s/sdk-plan.json", C.dir);
	v = json_pack("{s:s, s:[s, s, s], s:[{s:s, s:{s:s}}, {s:s, s:{}}, {s:s, s:{}}]}", "command", C.cordonctl,
		      "args", "mcp", "--socket", C.gateway, "calls", "tool", "fake__fail", "arguments", "text", "data",
		      "tool", "fake__nope", "arguments", "prompt", "fake__fail", "arguments");
	assert_non_null(v);
	f = fopen(plan, "we");
	assert_non_null(f);
	assert_int_equal(json_dumpf(v, f, JSON_COMPACT), 0);
	assert_int_equal(fclose(f), 0);
	json_decref(v);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		execlp("node", "node", script, plan, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	out = rcd_slurp(p[0]);
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	v = json_loads(out, 0, NULL);
	free(out);
	assert_non_null(v);
	res = json_object_get(v, "results");
	assert_int_equal(json_array_size(res), 3);
	want = json_loads("{\"retry_after\":5,\"where\":[\"data\",null,true]}", 0, NULL);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(res, 0), "code")), -32042);
	assert_true(json_equal(json_object_get(json_array_get(res, 0), "data"), want));
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(res, 0), "error")),
			       "quota \x1b[31mexceeded\xc2\x9b"));
	json_decref(want);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(res, 1), "code")), -32602);
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_array_get(res, 1), "data"),
							      "io.cordon/refused_by")),
			    "cordon");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(res, 2), "code")), -32042);
	assert_null(json_object_get(json_object_get(json_array_get(res, 2), "data"), "io.cordon/refused_by"));
	json_decref(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tools_call_error_relayed),
		cmocka_unit_test(test_ledger_records_connector_error),
		cmocka_unit_test(test_prompt_resource_completion_errors_relayed),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_malformed_and_forged),
		cmocka_unit_test(test_cordon_refusals_say_so),
		cmocka_unit_test(test_half_close_keeps_owed_answers),
		cmocka_unit_test(test_no_raw_controls_on_the_wire),
		cmocka_unit_test(test_official_sdk_sees_the_connector_error),
	};
	int r;

	if (geteuid() != 0)
		cordon_test_skip("needs root (cordond drops to nobody; the launcher builds sandboxes)");
	if (!cordon_test_env("CORDON_BUILD_DIR", NULL))
		cordon_test_skip("CORDON_BUILD_DIR not set");
	/* Root-owned, not group/world writable (the helper refuses others). */
	rcd_setup(&C, "cordond-errors");
	r = cmocka_run_group_tests(tests, setup, NULL);
	if (C.pid > 0)
		rcd_kill(&C, SIGKILL);
	rcd_teardown(&C, r != 0);
	return r;
}
