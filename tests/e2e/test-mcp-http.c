/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Issue 18: MCP Streamable HTTP on cordond's mcp-http.sock. The real
 * cordond, the real launcher helper, the fake connector installed as
 * `alpha`. A session is created by initialize (Mcp-Session-Id), answered
 * as application/json when the answer is immediate and alone, as
 * text/event-stream when a call is held for approval (progress, then its
 * answer); DELETE ends it. Refused before anything reaches a session: a
 * foreign Host or Origin (DNS rebinding), an oversized body, an unknown
 * session, another uid's session, a protocol version cordon does not
 * speak. Everything is decided and audited as on gateway.sock. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cordond-runner.h"
#include "http-test-util.h"
#include "test-support.h"

static struct rcd C;
static char sock[800];

static int http_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Writes one request: method, path, extra header lines (each ending in
 * \r\n; "" none) and a JSON body (NULL: none). */
static int send_req(const char *method, const char *path, const char *headers, const char *body)
{
	int fd = http_connect();
	char *req;
	int n;

	if (body)
		n = asprintf(
			&req,
			"%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\n"
			"Accept: application/json, text/event-stream\r\nContent-Length: %zu\r\n%s\r\n%s",
			method, path, strlen(body), headers, body);
	else
		n = asprintf(&req, "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n%s\r\n", method, path,
			     headers);
	assert_true(n > 0);
	/* A refusal may come (and the connection close) before all of a
	 * large body is written: what the server answers is what counts. */
	(void)!write(fd, req, (size_t)n);
	free(req);
	return fd;
}

static void recv_resp(int fd, struct hresp *r)
{
	char *all = read_all(fd), *sep = strstr(all, "\r\n\r\n");

	close(fd);
	assert_non_null(sep);
	*sep = 0;
	assert_int_equal(sscanf(all, "HTTP/1.1 %d", &r->status), 1);
	r->head = all;
	r->body = strdup(sep + 4);
	if (header(r, "Transfer-Encoding") && !strcasecmp(header(r, "Transfer-Encoding"), "chunked")) {
		char *b = dechunk(r->body);

		free(r->body);
		r->body = b;
	}
}

static void req(const char *method, const char *path, const char *headers, const char *body, struct hresp *r)
{
	recv_resp(send_req(method, path, headers, body), r);
}

/* The JSON-RPC messages of an SSE body, in order (events with no data,
 * the priming event, are skipped). */
static json_t *sse_messages(const char *body)
{
	json_t *a = json_array();

	for (const char *p = body; (p = strstr(p, "data: ")); p += 6) {
		const char *e = strchr(p, '\n');
		json_t *m;

		if (!e || e == p + 6)
			continue;
		m = json_loadb(p + 6, (size_t)(e - p - 6), 0, NULL);
		assert_non_null(m);
		json_array_append_new(a, m);
	}
	return a;
}

static char session_hdr[128];

/* initialize on path: the session's id (also in session_hdr, as a header
 * line). */
static const char *initialize(const char *path, const char *version)
{
	static char sid[64];
	struct hresp r = {};
	char body[300];
	json_t *m;

	snprintf(body, sizeof(body),
		 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"%s\","
		 "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
		 version);
	req("POST", path, "", body, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(header(&r, "Content-Type"), "application/json");
	assert_non_null(header(&r, "Mcp-Session-Id"));
	snprintf(sid, sizeof(sid), "%s", header(&r, "Mcp-Session-Id"));
	assert_int_equal(strlen(sid), 32);
	m = json_loads(r.body, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(json_object_get(m, "result"), "protocolVersion")),
			    version);
	json_decref(m);
	hresp_done(&r);
	snprintf(session_hdr, sizeof(session_hdr), "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: %s\r\n", sid, version);
	req("POST", path, session_hdr, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &r);
	assert_int_equal(r.status, 202);
	hresp_done(&r);
	return sid;
}

/* The answer of one request in session_hdr's session: plain JSON when it
 * was ready at once, else the last message of its event stream. */
static json_t *rpc(const char *path, const char *body)
{
	struct hresp r = {};
	json_t *m;

	req("POST", path, session_hdr, body, &r);
	assert_int_equal(r.status, 200);
	if (!strcmp(header(&r, "Content-Type"), "application/json")) {
		m = json_loads(r.body, 0, NULL);
	} else {
		json_t *all = sse_messages(r.body);

		assert_string_equal(header(&r, "Content-Type"), "text/event-stream");
		m = json_incref(json_array_get(all, json_array_size(all) - 1));
		json_decref(all);
	}
	assert_non_null(m);
	hresp_done(&r);
	return m;
}

static const char *text_of(const json_t *m)
{
	return json_string_value(
		json_object_get(json_array_get(json_object_get(json_object_get(m, "result"), "content"), 0), "text"));
}

/* The multiplexed endpoint: tools, a call, an approval held with progress
 * on an event stream, DELETE. */
static void test_session(void **state_)
{
	struct hresp r = {};
	json_t *m, *msgs;
	int base = rcd_out_lines(&C);

	(void)state_;
	initialize("/mcp", "2025-06-18");
	m = rpc("/mcp", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	{
		size_t i;
		json_t *t;
		int echo = 0;

		json_array_foreach(json_object_get(json_object_get(m, "result"), "tools"), i, t) echo +=
			!strcmp(json_string_value(json_object_get(t, "name")), "alpha__echo");
		assert_int_equal(echo, 1);
	}
	json_decref(m);
	m = rpc("/mcp", "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"tools/call\",\"params\":{\"name\":"
			"\"alpha__echo\",\"arguments\":{\"text\":\"over http\"}}}");
	assert_string_equal(json_string_value(json_object_get(m, "id")), "c1");
	assert_string_equal(text_of(m), "echo: over http");
	json_decref(m);

	/* append needs an approval: held (approval_wait 2 s) with progress,
	 * so the answer is a stream: progress events, then the response
	 * naming the approval. Nothing was appended. */
	req("POST", "/mcp", session_hdr,
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"alpha__append\","
	    "\"arguments\":{\"text\":\"held\"},\"_meta\":{\"progressToken\":\"p3\"}}}",
	    &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(header(&r, "Content-Type"), "text/event-stream");
	printf("held call's stream:\n%s", r.body);
	assert_non_null(strstr(r.body, "id: "));
	msgs = sse_messages(r.body);
	assert_true(json_array_size(msgs) >= 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(msgs, 0), "method")),
			    "notifications/progress");
	m = json_array_get(msgs, json_array_size(msgs) - 1);
	assert_int_equal(json_integer_value(json_object_get(m, "id")), 3);
	assert_true(json_is_true(json_object_get(json_object_get(m, "result"), "isError")));
	json_decref(msgs);
	hresp_done(&r);
	assert_int_equal(rcd_out_lines(&C), base);

	/* Approved by the operator, the identical call runs. */
	{
		json_t *v = rcd_ctl_json(&C, "approvals", "list", NULL);
		json_t *ap = json_array_get(rcd_first_array(v), 0);

		assert_non_null(ap);
		assert_int_equal(rcd_ctl(&C, NULL, NULL, "approvals", "approve",
					 json_string_value(json_object_get(ap, "id")), (char *)NULL),
				 0);
		json_decref(v);
	}
	m = rpc("/mcp", "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
			"\"alpha__append\",\"arguments\":{\"text\":\"held\"}}}");
	assert_int_equal(json_integer_value(json_object_get(m, "id")), 4);
	assert_false(json_is_true(json_object_get(json_object_get(m, "result"), "isError")));
	json_decref(m);
	assert_int_equal(rcd_out_lines(&C), base + 1);

	/* DELETE ends the session; its id is unknown from then on. */
	req("DELETE", "/mcp", session_hdr, NULL, &r);
	assert_int_equal(r.status, 200);
	hresp_done(&r);
	req("POST", "/mcp", session_hdr, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}", &r);
	assert_int_equal(r.status, 404);
	hresp_done(&r);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "audit", "verify", (char *)NULL), 0);
}

/* /mcp/<connector>: the one-connector view, under the tools' own names. */
static void test_bound_endpoint(void **state_)
{
	struct hresp r = {};
	json_t *m;

	(void)state_;
	initialize("/mcp/alpha", "2025-11-25");
	m = rpc("/mcp/alpha", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
			      "\"echo\",\"arguments\":{\"text\":\"bound\"}}}");
	assert_string_equal(text_of(m), "echo: bound");
	json_decref(m);
	/* The session belongs to its endpoint. */
	req("POST", "/mcp", session_hdr, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}", &r);
	assert_int_equal(r.status, 404);
	hresp_done(&r);
	/* A connector that is not installed. */
	req("POST", "/mcp/nosuch", "",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
	    &r);
	assert_int_equal(r.status, 404);
	assert_non_null(strstr(r.body, "nosuch"));
	hresp_done(&r);
	req("DELETE", "/mcp/alpha", session_hdr, NULL, &r);
	assert_int_equal(r.status, 200);
	hresp_done(&r);
}

/* A status and a part of the refusal's message. */
static void refused(const struct hresp *r, int status, const char *needle)
{
	printf("%d %s\n", r->status, r->body);
	assert_int_equal(r->status, status);
	assert_non_null(strstr(r->body, needle));
}

static void test_refusals(void **state_)
{
	static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
				   "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":"
				   "\"t\",\"version\":\"1\"}}}";
	struct hresp r = {};
	char *big;
	int fd;

	(void)state_;
	/* DNS rebinding: a page of another site resolved to this machine. */
	req("POST", "/mcp", "Origin: http://evil.example.com\r\n", init, &r);
	refused(&r, 403, "Origin");
	hresp_done(&r);
	fd = http_connect();
	{
		static const char q[] = "POST /mcp HTTP/1.1\r\nHost: evil.example.com\r\nConnection: close\r\n"
					"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

		assert_int_equal(write(fd, q, sizeof(q) - 1), (ssize_t)sizeof(q) - 1);
	}
	recv_resp(fd, &r);
	refused(&r, 403, "Host");
	hresp_done(&r);
	/* A loopback origin is fine. */
	req("POST", "/mcp", "Origin: http://localhost:8080\r\n", init, &r);
	assert_int_equal(r.status, 200);
	snprintf(session_hdr, sizeof(session_hdr), "Mcp-Session-Id: %s\r\n", header(&r, "Mcp-Session-Id"));
	hresp_done(&r);

	/* Bodies beyond the gateway's line bound (4 MiB by default): 413, whether
	 * announced by Content-Length or not. */
	big = malloc((5u << 20) + 1);
	assert_non_null(big);
	memset(big, ' ', 5u << 20);
	big[5u << 20] = 0;
	big[0] = '{';
	big[(5u << 20) - 1] = '}';
	req("POST", "/mcp", session_hdr, big, &r);
	refused(&r, 413, "at most");
	hresp_done(&r);
	fd = http_connect();
	{
		static const char q[] = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
					"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
		char chunk[64];
		size_t left = 5u << 20;

		assert_int_equal(write(fd, q, sizeof(q) - 1), (ssize_t)sizeof(q) - 1);
		while (left) {
			size_t n = left < 65536 ? left : 65536;

			snprintf(chunk, sizeof(chunk), "%zx\r\n", n);
			if (write(fd, chunk, strlen(chunk)) < 0 || write(fd, big, n) < 0 || write(fd, "\r\n", 2) < 0)
				break;
			left -= n;
		}
		(void)!write(fd, "0\r\n\r\n", 5);
	}
	recv_resp(fd, &r);
	refused(&r, 413, "at most");
	hresp_done(&r);
	free(big);

	/* Sessions: none named, an unknown one, a wrong version. */
	req("POST", "/mcp", "", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", &r);
	refused(&r, 400, "Mcp-Session-Id");
	hresp_done(&r);
	req("POST", "/mcp", "Mcp-Session-Id: 0123456789abcdef0123456789abcdef\r\n",
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", &r);
	refused(&r, 404, "Session not found");
	hresp_done(&r);
	req("POST", "/mcp", "MCP-Protocol-Version: 1999-01-01\r\n", init, &r);
	refused(&r, 400, "MCP-Protocol-Version");
	hresp_done(&r);
	req("PUT", "/mcp", "", NULL, &r);
	refused(&r, 405, "Method Not Allowed");
	hresp_done(&r);
	req("POST", "/other", "", init, &r);
	refused(&r, 404, "/mcp");
	hresp_done(&r);
	req("POST", "/mcp", session_hdr, "[{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]", &r);
	refused(&r, 400, "batches");
	hresp_done(&r);

	/* Another uid (nobody) cannot use this session: to it, the session
	 * does not exist. */
	{
		pid_t pid = fork();
		int st;

		assert_true(pid >= 0);
		if (pid == 0) {
			struct hresp c = {};

			if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
				_exit(2);
			recv_resp(send_req("POST", "/mcp", session_hdr,
					   "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"),
				  &c);
			printf("as nobody: %d %s\n", c.status, c.body);
			_exit(c.status == 404 ? 0 : 1);
		}
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
	/* ... and it is still the owner's. */
	req("POST", "/mcp", session_hdr, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}", &r);
	assert_int_equal(r.status, 200);
	hresp_done(&r);
	req("DELETE", "/mcp", session_hdr, NULL, &r);
	assert_int_equal(r.status, 200);
	hresp_done(&r);
}

/* GET: the session's stream; a second GET is a conflict. */
static void test_get_stream(void **state_)
{
	struct hresp r = {};
	char buf[4096];
	ssize_t n;
	int fd;

	(void)state_;
	char hdrs[300];

	initialize("/mcp", "2025-11-25");
	snprintf(hdrs, sizeof(hdrs), "%sAccept: text/event-stream\r\n", session_hdr);
	fd = send_req("GET", "/mcp", hdrs, NULL);
	/* The headers come at once, before any event. */
	{
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		size_t len = 0;

		while (!memmem(buf, len, "\r\n\r\n", 4)) {
			assert_int_equal(poll(&pfd, 1, 20000), 1);
			n = read(fd, buf + len, sizeof(buf) - 1 - len);
			assert_true(n > 0);
			len += (size_t)n;
		}
		buf[len] = 0;
		assert_non_null(strstr(buf, "HTTP/1.1 200"));
		assert_non_null(strcasestr(buf, "Content-Type: text/event-stream"));
	}
	req("GET", "/mcp", hdrs, NULL, &r);
	refused(&r, 409, "already open");
	hresp_done(&r);
	/* DELETE ends the stream too. */
	req("DELETE", "/mcp", session_hdr, NULL, &r);
	assert_int_equal(r.status, 200);
	hresp_done(&r);
	{
		char *rest = read_all(fd);

		free(rest);
	}
	close(fd);
}

/* A POST stream cut after its first event is resumed by GET with
 * Last-Event-ID: the events after it, the response last. */
static void test_resume(void **state_)
{
	struct hresp r = {};
	char buf[8192], hdrs[400], last[64] = "";
	size_t len = 0;
	json_t *msgs;
	int fd;

	(void)state_;
	initialize("/mcp", "2025-06-18");
	fd = send_req("POST", "/mcp", session_hdr,
		      "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
		      "\"alpha__append\",\"arguments\":{\"text\":\"resumed\"},\"_meta\":{\"progressToken\":1}}}");
	while (!last[0]) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;
		const char *id;

		assert_int_equal(poll(&pfd, 1, 20000), 1);
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		assert_true(n > 0);
		len += (size_t)n;
		buf[len] = 0;
		id = strstr(buf, "\nid: ");
		if (id && strchr(id + 5, '\n'))
			snprintf(last, sizeof(last), "%.*s", (int)(strchr(id + 5, '\n') - id - 5), id + 5);
	}
	close(fd); /* the client's connection is cut */
	printf("cut after event %s\n", last);
	snprintf(hdrs, sizeof(hdrs), "%sAccept: text/event-stream\r\nLast-Event-ID: %s\r\n", session_hdr, last);
	req("GET", "/mcp", hdrs, NULL, &r);
	assert_int_equal(r.status, 200);
	printf("resumed:\n%s", r.body);
	assert_null(strstr(r.body, last)); /* not the event it already had */
	msgs = sse_messages(r.body);
	assert_true(json_array_size(msgs) >= 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(msgs, json_array_size(msgs) - 1), "id")), 7);
	json_decref(msgs);
	hresp_done(&r);
	req("DELETE", "/mcp", session_hdr, NULL, &r);
	assert_int_equal(r.status, 200);
	hresp_done(&r);
}

/* The official SDK's StreamableHTTPClientTransport (tests/e2e/sdk-http.mjs,
 * in a network namespace of its own: it reaches mcp-http.sock through a
 * loopback forwarder of its own process). */
static void test_sdk(void **state_)
{
	const char *node_dir = getenv("CORDON_E2E_NODE_DIR");
	char cmd[2400], *out;
	json_t *v;
	FILE *f;

	(void)state_;
	if (!node_dir)
		cordon_test_skip("CORDON_E2E_NODE_DIR not set (npm fixture)");
	snprintf(cmd, sizeof(cmd), "unshare --net sh -c 'ip link set lo up && exec node %s/sdk-http.mjs %s /mcp'",
		 node_dir, sock);
	f = popen(cmd, "r");
	assert_non_null(f);
	out = rcd_slurp(fileno(f));
	assert_int_equal(pclose(f), 0);
	printf("sdk over http: %s", out);
	v = json_loads(out, 0, NULL);
	free(out);
	assert_non_null(v);
	assert_int_equal(strlen(json_string_value(json_object_get(v, "session"))), 32);
	assert_string_equal(json_string_value(json_object_get(v, "echo")), "echo: sdk over http");
	/* Held for approval (2 s here): progress on the call's stream, then
	 * the approval's text. */
	assert_true(json_integer_value(json_object_get(json_object_get(v, "held"), "progress")) >= 1);
	assert_non_null(strstr(json_string_value(json_object_get(json_object_get(v, "held"), "text")), "approval"));
	assert_non_null(strstr(json_string_value(json_object_get(v, "cancelled")), "the test cancels"));
	json_decref(v);
}

static int setup(void **state_)
{
	(void)state_;
	rcd_start(&C);
	rcd_install(&C, "alpha");
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session),	 cmocka_unit_test(test_bound_endpoint),
		cmocka_unit_test(test_refusals), cmocka_unit_test(test_get_stream),
		cmocka_unit_test(test_resume),	 cmocka_unit_test(test_sdk),
	};
	const char *b = cordon_test_env("CORDON_BUILD_DIR", NULL);
	int r;

	if (geteuid() != 0)
		cordon_test_skip("needs root (cordond drops to nobody; the launcher builds sandboxes)");
	if (!b)
		cordon_test_skip("CORDON_BUILD_DIR not set");
	rcd_setup(&C, "mcp-http");
	C.approval_wait = "2s";
	rcd_fake_profile(&C, "alpha", NULL);
	snprintf(sock, sizeof(sock), "%s/mcp-http.sock", C.runtime);
	r = cmocka_run_group_tests(tests, setup, NULL);
	if (C.pid > 0)
		rcd_stop_clean(&C);
	rcd_teardown(&C, r != 0);
	return r;
}
