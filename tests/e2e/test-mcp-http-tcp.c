/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Issue 18: MCP over loopback TCP (mcp_http_listen) with the bearer tokens
 * of `cordonctl agents add`. The real cordond (bound to 127.0.0.1 port 0,
 * the port read back from its log), the real launcher helper, the fake
 * connector installed as `alpha`. A token's agent is the subject: its
 * sessions (another agent's, or a Unix-socket user's, are 404), its audit
 * identity (the session id names it). Refused: no token (401 with
 * WWW-Authenticate: Bearer), a wrong one, a revoked one (and its session
 * ended at once), a foreign Origin, an oversized body; a non-loopback
 * listen address is refused at start with the reason. The official SDK
 * over TCP with an Authorization header, and resuming a dropped stream. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
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

#include "cleanup.h"
#include "cordond-runner.h"
#include "http-test-util.h"
#include "test-support.h"

static struct rcd C;
static int port;
static char unix_sock[800];

/* Connects to cordond's TCP listener, or (unix) to mcp-http.sock. */
static int http_connect(bool unix_socket)
{
	int fd;

	if (unix_socket) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		assert_true(fd >= 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", unix_sock);
		assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	} else {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		assert_true(fd >= 0);
		assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	}
	return fd;
}

/* One request (headers: extra lines, each ending in \r\n) and its answer. */
static void req_on(bool unix_socket, const char *method, const char *headers, const char *body, struct hresp *r)
{
	int fd = http_connect(unix_socket);
	char *rq, *all, *sep;
	int n;

	if (body)
		n = asprintf(&rq,
			     "%s /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\nContent-Type: "
			     "application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: "
			     "%zu\r\n%s\r\n%s",
			     method, port, strlen(body), headers, body);
	else
		n = asprintf(&rq, "%s /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n%s\r\n", method, port,
			     headers);
	assert_true(n > 0);
	(void)!write(fd, rq, (size_t)n);
	free(rq);
	all = read_all(fd);
	close(fd);
	sep = strstr(all, "\r\n\r\n");
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

static void req(const char *method, const char *headers, const char *body, struct hresp *r)
{
	req_on(false, method, headers, body, r);
}

static const char init_body[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
				"\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":"
				"\"t\",\"version\":\"1\"}}}";

/* `cordonctl agents add name`: its token (malloc'd). */
static char *agent_add(const char *name)
{
	json_t *v = rcd_ctl_json(&C, "agents", "add", name);
	const char *t = json_string_value(json_object_get(v, "token"));
	char *tok;

	assert_non_null(t);
	assert_int_equal(strncmp(t, "cordon_at_", 10), 0);
	assert_int_equal(strlen(t), 53);
	tok = strdup(t);
	json_decref(v);
	return tok;
}

/* initialize with token: the session id (static); *ret_hdr gets the
 * header lines of that session with that token. */
static const char *initialize(const char *token, char *hdr, size_t hdr_size)
{
	static char sid[64];
	struct hresp r = {};
	char auth[200];

	snprintf(auth, sizeof(auth), "Authorization: Bearer %s\r\n", token);
	req("POST", auth, init_body, &r);
	printf("initialize: %d %s\n", r.status, r.body);
	assert_int_equal(r.status, 200);
	assert_non_null(header(&r, "Mcp-Session-Id"));
	snprintf(sid, sizeof(sid), "%s", header(&r, "Mcp-Session-Id"));
	hresp_done(&r);
	snprintf(hdr, hdr_size, "%sMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-06-18\r\n", auth, sid);
	req("POST", hdr, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &r);
	assert_int_equal(r.status, 202);
	hresp_done(&r);
	return sid;
}

static void refused(const struct hresp *r, int status, const char *needle)
{
	printf("%d %s\n", r->status, r->body);
	assert_int_equal(r->status, status);
	assert_non_null(strstr(r->body, needle));
}

/* A token from `agents add` works: tools/list, tools/call; the audit names
 * the agent (its session id does); agents list shows it, never a token. */
static void test_token_session(void **state_)
{
	_cleanup_free_ char *tok = agent_add("bot1");
	char hdr[400];
	struct hresp r = {};
	json_t *m, *v;
	char *dump;

	(void)state_;
	initialize(tok, hdr, sizeof(hdr));
	req("POST", hdr, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "alpha__echo"));
	hresp_done(&r);
	req("POST", hdr,
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"alpha__echo\","
	    "\"arguments\":{\"text\":\"over tcp\"}}}",
	    &r);
	assert_int_equal(r.status, 200);
	if (!strcmp(header(&r, "Content-Type"), "application/json")) {
		m = json_loads(r.body, 0, NULL);
	} else {
		/* The last event of the stream is the answer. */
		const char *last = NULL;

		for (const char *p = r.body; (p = strstr(p, "data: {")); p += 6)
			last = p + 6;
		assert_non_null(last);
		m = json_loadb(last, strcspn(last, "\n"), 0, NULL);
	}
	assert_non_null(m);
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(json_object_get(m, "result"), "content"), 0), "text")),
		"echo: over tcp");
	json_decref(m);
	hresp_done(&r);
	v = rcd_ctl_json(&C, "audit", "tail");
	dump = json_dumps(v, JSON_COMPACT);
	assert_non_null(strstr(dump, "-abot1-"));	  /* the call's decision: the agent's session */
	assert_non_null(strstr(dump, "\"agent.added\"")); /* agent.added, by the operator */
	assert_non_null(strstr(dump, "\"agent\":\"bot1\""));
	assert_null(strstr(dump, "cordon_at_")); /* never a token */
	free(dump);
	json_decref(v);
	v = rcd_ctl_json(&C, "agents", "list");
	dump = json_dumps(v, JSON_COMPACT);
	assert_non_null(strstr(dump, "\"bot1\""));
	assert_null(strstr(dump, "cordon_at_"));
	free(dump);
	json_decref(v);
	req("DELETE", hdr, NULL, &r);
	assert_int_equal(r.status, 200);
	hresp_done(&r);
}

static void test_refusals(void **state_)
{
	_cleanup_free_ char *tok = agent_add("bot2"), *other = agent_add("bot2b");
	char hdr[400], auth[200], bad[200], hdr_other[400], hdr_unix[400];
	struct hresp r = {};
	const char *sid;
	char *big;

	(void)state_;
	/* No token: 401 and the challenge. */
	req("POST", "", init_body, &r);
	refused(&r, 401, "Bearer token");
	assert_string_equal(header(&r, "WWW-Authenticate"), "Bearer realm=\"cordon\"");
	hresp_done(&r);
	/* A wrong token (well-formed, unknown), a malformed one, another
	 * scheme. */
	snprintf(bad, sizeof(bad), "Authorization: Bearer %.10sAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\n", tok);
	req("POST", bad, init_body, &r);
	refused(&r, 401, "not valid or was revoked");
	assert_non_null(strstr(header(&r, "WWW-Authenticate"), "invalid_token"));
	hresp_done(&r);
	req("POST", "Authorization: Bearer nope\r\n", init_body, &r);
	refused(&r, 401, "not valid");
	hresp_done(&r);
	snprintf(bad, sizeof(bad), "Authorization: Basic %s\r\n", tok);
	req("POST", bad, init_body, &r);
	refused(&r, 401, "must be Bearer");
	hresp_done(&r);
	/* A foreign Origin, token or not (DNS rebinding). */
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s\r\nOrigin: http://evil.example.com\r\n", tok);
	req("POST", auth, init_body, &r);
	refused(&r, 403, "Origin");
	hresp_done(&r);
	/* An oversized body (beyond line_max, 4 MiB by default). */
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s\r\n", tok);
	big = malloc((5u << 20) + 1);
	assert_non_null(big);
	memset(big, ' ', 5u << 20);
	big[5u << 20] = 0;
	big[0] = '{';
	big[(5u << 20) - 1] = '}';
	req("POST", auth, big, &r);
	free(big);
	refused(&r, 413, "Content Too Large");
	hresp_done(&r);
	/* Another agent's session, and the same session id from a user of
	 * the Unix socket: 404, as for a session that does not exist. */
	sid = initialize(tok, hdr, sizeof(hdr));
	snprintf(hdr_other, sizeof(hdr_other),
		 "Authorization: Bearer %s\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-06-18\r\n", other, sid);
	req("POST", hdr_other, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", &r);
	refused(&r, 404, "Session not found");
	hresp_done(&r);
	snprintf(hdr_unix, sizeof(hdr_unix), "Mcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-06-18\r\n", sid);
	req_on(true, "POST", hdr_unix, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", &r);
	refused(&r, 404, "Session not found");
	hresp_done(&r);
	/* Its own agent still reaches it. */
	req("POST", hdr, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}", &r);
	assert_int_equal(r.status, 200);
	hresp_done(&r);
	req("DELETE", hdr, NULL, &r);
	assert_int_equal(r.status, 200);
	hresp_done(&r);
}

/* Revoking ends the agent's sessions at once and refuses its token. */
static void test_revoke(void **state_)
{
	_cleanup_free_ char *tok = agent_add("bot3");
	char hdr[400], out_hdr[400];
	struct hresp r = {};
	json_t *v;
	char *dump;

	(void)state_;
	initialize(tok, hdr, sizeof(hdr));
	v = rcd_ctl_json(&C, "agents", "revoke", "bot3");
	assert_int_equal(json_integer_value(json_object_get(v, "sessions_ended")), 1);
	json_decref(v);
	req("POST", hdr, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", &r);
	refused(&r, 401, "not valid or was revoked");
	hresp_done(&r);
	snprintf(out_hdr, sizeof(out_hdr), "Authorization: Bearer %s\r\n", tok);
	req("POST", out_hdr, init_body, &r);
	refused(&r, 401, "not valid or was revoked");
	hresp_done(&r);
	/* Revoked twice: not found; the name may be issued again (a new
	 * agent, a new token). */
	assert_int_not_equal(rcd_ctl(&C, NULL, NULL, "agents", "revoke", "bot3", NULL), 0);
	v = rcd_ctl_json(&C, "agents", "list", "--all");
	dump = json_dumps(v, JSON_COMPACT);
	assert_non_null(strstr(dump, "\"bot3\""));
	free(dump);
	json_decref(v);
	v = rcd_ctl_json(&C, "audit", "tail");
	dump = json_dumps(v, JSON_COMPACT);
	assert_non_null(strstr(dump, "\"agent.revoked\""));
	free(dump);
	json_decref(v);
	/* Bad names and a live duplicate are refused. */
	assert_int_not_equal(rcd_ctl(&C, NULL, NULL, "agents", "add", "Bad Name", NULL), 0);
	assert_int_not_equal(rcd_ctl(&C, NULL, NULL, "agents", "add", "bot1", NULL), 0);
}

/* sessions_per_uid is per subject: an agent at its cap gets 429 naming
 * it; another agent is not affected. */
static void test_session_cap_per_agent(void **state_)
{
	_cleanup_free_ char *tok = agent_add("capped"), *other = agent_add("free");
	char hdr[3][400], auth[200], hdr_other[400];
	struct hresp r = {};

	(void)state_;
	for (int i = 0; i < 3; i++)
		initialize(tok, hdr[i], sizeof(hdr[i]));
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s\r\n", tok);
	req("POST", auth, init_body, &r);
	refused(&r, 429, "too many sessions for agent capped (at most 3 per subject)");
	hresp_done(&r);
	initialize(other, hdr_other, sizeof(hdr_other));
	req("DELETE", hdr_other, NULL, &r);
	assert_int_equal(r.status, 200);
	hresp_done(&r);
	for (int i = 0; i < 3; i++) {
		req("DELETE", hdr[i], NULL, &r);
		assert_int_equal(r.status, 200);
		hresp_done(&r);
	}
	/* A slot again. */
	initialize(tok, hdr[0], sizeof(hdr[0]));
	req("DELETE", hdr[0], NULL, &r);
	assert_int_equal(r.status, 200);
	hresp_done(&r);
}

/* A routable listen address is refused at start, with the reason; nothing
 * is bound (the address is refused when the config is read). */
static void test_non_loopback_refused(void **state_)
{
	char cmd[2000], *out;
	FILE *f;
	int st;

	(void)state_;
	snprintf(cmd, sizeof(cmd),
		 "%s --profiles %s --state %s/x-state --runtime %s/x-run --mcp-http-listen 0.0.0.0:8765 2>&1",
		 C.cordond, C.profiles, C.dir, C.dir);
	f = popen(cmd, "r");
	assert_non_null(f);
	out = rcd_slurp(fileno(f));
	st = pclose(f);
	printf("%s", out);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 0);
	assert_non_null(strstr(out, "not a loopback address; serving MCP on a routable address needs TLS"));
	free(out);
	/* A reload that names one is refused too, and changes nothing. */
	rcd_write(C.config, "mcp_http_listen: 0.0.0.0:8765\nsessions_per_uid: 3\n");
	assert_int_not_equal(rcd_ctl(&C, NULL, &out, "reload", NULL), 0);
	printf("reload: %s", out);
	assert_non_null(strstr(out, "not a loopback address"));
	free(out);
	rcd_write(C.config, "mcp_http_listen: 127.0.0.1:0\nsessions_per_uid: 3\n");
}

/* The official SDK, by URL with an Authorization header (no forwarder). */
static void test_sdk(void **state_)
{
	const char *node_dir = getenv("CORDON_E2E_NODE_DIR");
	_cleanup_free_ char *tok = NULL;
	char cmd[2400], *out;
	json_t *v;
	FILE *f;

	(void)state_;
	if (!node_dir)
		cordon_test_skip("CORDON_E2E_NODE_DIR not set (npm fixture)");
	tok = agent_add("sdk");
	snprintf(cmd, sizeof(cmd), "node %s/sdk-http.mjs http://127.0.0.1:%d /mcp %s", node_dir, port, tok);
	f = popen(cmd, "r");
	assert_non_null(f);
	out = rcd_slurp(fileno(f));
	assert_int_equal(pclose(f), 0);
	printf("sdk over tcp: %s", out);
	v = json_loads(out, 0, NULL);
	free(out);
	assert_non_null(v);
	assert_string_equal(json_string_value(json_object_get(v, "echo")), "echo: sdk over http");
	assert_true(json_integer_value(json_object_get(json_object_get(v, "held"), "progress")) >= 1);
	assert_non_null(strstr(json_string_value(json_object_get(json_object_get(v, "held"), "text")), "approval"));
	assert_non_null(strstr(json_string_value(json_object_get(v, "cancelled")), "the test cancels"));
	json_decref(v);
}

/* The port cordond bound (127.0.0.1:0), from its log. */
static int read_port(void)
{
	for (int i = 0; i < 100; i++) {
		FILE *f = fopen(C.logfile, "r");
		char line[1024];
		int p = 0;

		while (f && fgets(line, sizeof(line), f)) {
			const char *s = strstr(line, "MCP over HTTP on TCP port ");

			if (s)
				p = atoi(s + 26);
		}
		if (f)
			fclose(f);
		if (p > 0)
			return p;
		usleep(50000);
	}
	return -1;
}

/* A dropped stream resumed with the SDK (tests/e2e/sdk-http-resume.mjs):
 * cordond restarted with a long approval wait (no race with the approval's
 * deadline); the held call's connection is cut after its first progress, a
 * new transport for the same session resumes with the last event id, gets
 * progress (never the event it had), the script approves, the result
 * arrives on the resumed stream; append ran exactly once. */
static void test_sdk_resume(void **state_)
{
	const char *node_dir = getenv("CORDON_E2E_NODE_DIR");
	_cleanup_free_ char *tok = NULL;
	char cmd[3000], *out;
	const char *last, *id;
	json_t *v, *ids;
	size_t i;
	FILE *f;
	int base;

	(void)state_;
	if (!node_dir)
		cordon_test_skip("CORDON_E2E_NODE_DIR not set (npm fixture)");
	rcd_stop_clean(&C);
	assert_int_equal(truncate(C.logfile, 0), 0); /* read_port: the new port only */
	C.approval_wait = "300s";
	rcd_start(&C);
	port = read_port();
	assert_true(port > 0);
	tok = agent_add("resume");
	base = rcd_out_lines(&C);
	snprintf(cmd, sizeof(cmd), "node %s/sdk-http-resume.mjs http://127.0.0.1:%d /mcp %s %s %s", node_dir, port, tok,
		 C.cordonctl, C.opsock);
	f = popen(cmd, "r");
	assert_non_null(f);
	out = rcd_slurp(fileno(f));
	assert_int_equal(pclose(f), 0);
	printf("sdk resume: %s", out);
	v = json_loads(out, 0, NULL);
	free(out);
	assert_non_null(v);
	assert_null(json_object_get(v, "first")); /* nothing came on the cut stream */
	assert_true(json_integer_value(json_object_get(v, "before")) >= 1);
	assert_true(json_integer_value(json_object_get(v, "after")) >= 1);
	assert_false(json_is_true(json_object_get(v, "isError")));
	assert_non_null(json_string_value(json_object_get(v, "text")));
	assert_null(strstr(json_string_value(json_object_get(v, "text")), "approval"));
	/* Event ids <stream>-<seq>: the resumed ones on the same stream, after
	 * the last one the first client had. */
	last = json_string_value(json_object_get(v, "token"));
	assert_non_null(last);
	assert_non_null(strchr(last, '-'));
	ids = json_object_get(v, "ids");
	assert_true(json_array_size(ids) >= 2); /* a progress and the result */
	for (i = 0; i < json_array_size(ids); i++) {
		id = json_string_value(json_array_get(ids, i));
		assert_non_null(id);
		assert_int_equal(strncmp(id, last, (size_t)(strchr(last, '-') - last + 1)), 0);
		assert_true(atol(strchr(id, '-') + 1) > atol(strchr(last, '-') + 1));
	}
	json_decref(v);
	assert_int_equal(rcd_out_lines(&C), base + 1); /* append ran once */
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "audit", "verify", (char *)NULL), 0);
}

static int setup(void **state_)
{
	char cfg[900];

	(void)state_;
	snprintf(cfg, sizeof(cfg), "%s/cordond.yaml", C.dir);
	rcd_write(cfg, "mcp_http_listen: 127.0.0.1:0\nsessions_per_uid: 3\n");
	C.config = strdup(cfg);
	rcd_start(&C);
	rcd_install(&C, "alpha");
	port = read_port();
	assert_true(port > 0);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_session),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_revoke),
		cmocka_unit_test(test_session_cap_per_agent),
		cmocka_unit_test(test_non_loopback_refused),
		cmocka_unit_test(test_sdk),
		cmocka_unit_test(test_sdk_resume), /* restarts cordond: last */
	};
	const char *b = cordon_test_env("CORDON_BUILD_DIR", NULL);
	int r;

	if (geteuid() != 0)
		cordon_test_skip("needs root (cordond drops to nobody; the launcher builds sandboxes)");
	if (!b)
		cordon_test_skip("CORDON_BUILD_DIR not set");
	rcd_setup(&C, "mcp-tcp");
	C.approval_wait = "2s";
	rcd_fake_profile(&C, "alpha", NULL);
	snprintf(unix_sock, sizeof(unix_sock), "%s/mcp-http.sock", C.runtime);
	r = cmocka_run_group_tests(tests, setup, NULL);
	if (C.pid > 0)
		rcd_stop_clean(&C);
	rcd_teardown(&C, r != 0);
	return r;
}
