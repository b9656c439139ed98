/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Issue 18: MCP over TLS on a routable address (mcp_http_listen 0.0.0.0:0
 * with mcp_http_tls_cert and mcp_http_tls_key, Host names from
 * mcp_http_hosts). The whole test runs in a network namespace of its own
 * with only loopback up, so 0.0.0.0 reaches nothing but this test. The
 * real cordond (and its sandbox), the real launcher helper, the fake
 * connector as `alpha`; a self-signed certificate made by openssl; curl
 * and the official SDK as TLS clients. Checked: initialize and tools/list
 * with a token over https; a listed Host and an https Origin of it pass, a
 * foreign Host is 403; no token is 401; plain HTTP on the TLS port gets no
 * HTTP answer; at start, a routable address without the keys, a
 * world-readable key and a lone certificate are refused with the reason.
 * The SDK over https, and the sampling relay with an SDK client that
 * answers sampling/createMessage. */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "cordond-runner.h"
#include "http-test-util.h"
#include "test-support.h"

static struct rcd C;
static int port;
static char cert[900], key[900];

static const char init_body[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
				"\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":"
				"\"t\",\"version\":\"1\"}}}";

/* Runs cmd through the shell; its exit status, its output (stdout and
 * stderr) in *ret_out (malloc'd). */
static int run(const char *cmd, char **ret_out)
{
	FILE *f = popen(cmd, "r");
	int st;

	assert_non_null(f);
	*ret_out = rcd_slurp(fileno(f));
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* curl over TLS to https://cordon-test:PORT/mcp (resolved to 127.0.0.1,
 * the certificate checked against cert); extra: more curl arguments. A
 * POST of body when body is not NULL. Returns curl's exit status; r has
 * the answer when it is 0. */
static int curl(const char *url_host, const char *extra, const char *body, struct hresp *r)
{
	char cmd[4000], bodyfile[1000], *out, *sep;
	int rc;

	snprintf(bodyfile, sizeof(bodyfile), "%s/body.json", C.dir);
	if (body)
		rcd_write(bodyfile, body);
	snprintf(cmd, sizeof(cmd),
		 "curl -sS -i --cacert %s --resolve cordon-test:%d:127.0.0.1 %s%s%s -H 'Accept: application/json, "
		 "text/event-stream' -H 'Content-Type: application/json' %s https://%s:%d/mcp 2>&1",
		 cert, port, body ? "--data-binary @" : "", body ? bodyfile : "", body ? "" : "", extra, url_host,
		 port);
	rc = run(cmd, &out);
	printf("curl %s: rc %d\n%s\n", extra, rc, out);
	if (rc != 0) {
		free(out);
		return rc;
	}
	sep = strstr(out, "\r\n\r\n");
	assert_non_null(sep);
	*sep = 0;
	assert_int_equal(sscanf(out, "HTTP/%*s %d", &r->status), 1);
	r->head = out;
	r->body = strdup(sep + 4);
	return 0;
}

/* `cordonctl agents add name`: its token (malloc'd). */
static char *agent_add(const char *name)
{
	json_t *v = rcd_ctl_json(&C, "agents", "add", name);
	const char *t = json_string_value(json_object_get(v, "token"));
	char *tok;

	assert_non_null(t);
	tok = strdup(t);
	json_decref(v);
	return tok;
}

/* initialize and tools/list with a token over TLS, by the certificate's
 * name (a Host of mcp_http_hosts, with an https Origin of it) and by
 * 127.0.0.1 (a loopback Host). */
static void test_tls_session(void **state_)
{
	_cleanup_free_ char *tok = agent_add("remote1");
	char extra[600];
	struct hresp r = {};

	(void)state_;
	for (int i = 0; i < 2; i++) {
		const char *host = i == 0 ? "cordon-test" : "127.0.0.1";
		char sid[80];

		snprintf(extra, sizeof(extra), "-H 'Authorization: Bearer %s'%s", tok,
			 i == 0 ? " -H 'Origin: https://cordon-test'" : "");
		assert_int_equal(curl(host, extra, init_body, &r), 0);
		assert_int_equal(r.status, 200);
		assert_non_null(strstr(r.body, "\"protocolVersion\""));
		assert_non_null(header(&r, "Mcp-Session-Id"));
		snprintf(sid, sizeof(sid), "%s", header(&r, "Mcp-Session-Id"));
		hresp_done(&r);
		snprintf(extra, sizeof(extra),
			 "-H 'Authorization: Bearer %s' -H 'Mcp-Session-Id: %s' -H 'MCP-Protocol-Version: 2025-06-18'",
			 tok, sid);
		assert_int_equal(
			curl(host, extra, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &r), 0);
		assert_int_equal(r.status, 202);
		hresp_done(&r);
		assert_int_equal(curl(host, extra, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", &r), 0);
		assert_int_equal(r.status, 200);
		assert_non_null(strstr(r.body, "alpha__echo"));
		hresp_done(&r);
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), " -X DELETE");
		assert_int_equal(curl(host, extra, NULL, &r), 0);
		assert_int_equal(r.status, 200);
		hresp_done(&r);
	}
}

/* Over TLS the Host and Origin checks still hold (DNS rebinding), and the
 * token is still required. */
static void test_tls_refusals(void **state_)
{
	_cleanup_free_ char *tok = agent_add("remote2");
	char extra[600], cmd[1200], *out;
	struct hresp r = {};

	(void)state_;
	snprintf(extra, sizeof(extra), "-H 'Authorization: Bearer %s' -H 'Host: evil.example.com'", tok);
	assert_int_equal(curl("cordon-test", extra, init_body, &r), 0);
	assert_int_equal(r.status, 403);
	assert_non_null(strstr(r.body, "nor one of mcp_http_hosts"));
	hresp_done(&r);
	/* A listed name, but as an http:// origin, or another site's. */
	snprintf(extra, sizeof(extra), "-H 'Authorization: Bearer %s' -H 'Origin: http://cordon-test'", tok);
	assert_int_equal(curl("cordon-test", extra, init_body, &r), 0);
	assert_int_equal(r.status, 403);
	assert_non_null(strstr(r.body, "Origin"));
	hresp_done(&r);
	snprintf(extra, sizeof(extra), "-H 'Authorization: Bearer %s' -H 'Origin: https://evil.example.com'", tok);
	assert_int_equal(curl("cordon-test", extra, init_body, &r), 0);
	assert_int_equal(r.status, 403);
	hresp_done(&r);
	/* The other listed name is admitted (any port). */
	snprintf(extra, sizeof(extra), "-H 'Authorization: Bearer %s' -H 'Host: MCP.example.org:443'", tok);
	assert_int_equal(curl("cordon-test", extra, init_body, &r), 0);
	assert_int_equal(r.status, 200);
	hresp_done(&r);
	/* No token. */
	assert_int_equal(curl("cordon-test", "", init_body, &r), 0);
	assert_int_equal(r.status, 401);
	hresp_done(&r);
	/* Plain HTTP on the TLS port: no HTTP answer at all. */
	snprintf(cmd, sizeof(cmd),
		 "curl -sS -i -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' --data-binary '{}' "
		 "http://127.0.0.1:%d/mcp 2>&1",
		 tok, port);
	assert_int_not_equal(run(cmd, &out), 0);
	printf("plain http: %s\n", out);
	assert_null(strstr(out, "HTTP/1."));
	free(out);
	/* A client that does not trust the certificate stops at the
	 * handshake. */
	snprintf(cmd, sizeof(cmd), "curl -sS -i --data-binary '{}' https://127.0.0.1:%d/mcp 2>&1", port);
	assert_int_not_equal(run(cmd, &out), 0);
	assert_null(strstr(out, "HTTP/1."));
	free(out);
}

/* cordond with cfg (a config file's text) and a state of its own: exits
 * non-zero at start; its output contains needle. */
static void refused_at_start(const char *cfg, const char *flags, const char *needle)
{
	char path[900], cmd[3000], *out;
	int rc;

	snprintf(path, sizeof(path), "%s/refused.yaml", C.dir);
	rcd_write(path, cfg);
	snprintf(cmd, sizeof(cmd),
		 "%s --config %s --profiles %s --state %s/x-state --runtime %s/x-run --launcher %s %s 2>&1", C.cordond,
		 path, C.profiles, C.dir, C.dir, C.launch, flags);
	rc = run(cmd, &out);
	printf("refused (%d): %s", rc, out);
	assert_int_not_equal(rc, 0);
	assert_non_null(strstr(out, needle));
	free(out);
}

static void test_start_refusals(void **state_)
{
	char cfg[3000], loose[900], *out;

	(void)state_;
	/* A routable address without TLS: refused, naming the two keys. */
	refused_at_start("sessions_per_uid: 3\n", "--mcp-http-listen 0.0.0.0:8765",
			 "not a loopback address; serving MCP on a routable address needs TLS: set "
			 "mcp_http_tls_cert and mcp_http_tls_key");
	/* A certificate without its key. */
	snprintf(cfg, sizeof(cfg), "mcp_http_listen: 0.0.0.0:0\nmcp_http_tls_cert: %s\n", cert);
	refused_at_start(cfg, "", "mcp_http_tls_cert and mcp_http_tls_key go together");
	/* A key others may read. */
	snprintf(loose, sizeof(loose), "%s/loose.key", C.dir);
	snprintf(cfg, sizeof(cfg), "cp %s %s && chmod 0644 %s", key, loose, loose);
	assert_int_equal(run(cfg, &out), 0);
	free(out);
	snprintf(cfg, sizeof(cfg), "mcp_http_listen: 0.0.0.0:0\nmcp_http_tls_cert: %s\nmcp_http_tls_key: %s\n", cert,
		 loose);
	refused_at_start(cfg, "", "must be owned by root (or cordond's user) and not readable or writable by group");
	/* A bad mcp_http_hosts. */
	snprintf(cfg, sizeof(cfg),
		 "mcp_http_listen: 0.0.0.0:0\nmcp_http_tls_cert: %s\nmcp_http_tls_key: %s\nmcp_http_hosts: "
		 "\"a.example,b example\"\n",
		 cert, key);
	refused_at_start(cfg, "", "comma-separated list");
	/* The key of another certificate. */
	snprintf(loose, sizeof(loose), "%s/other.key", C.dir);
	snprintf(cfg, sizeof(cfg),
		 "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out %s 2>&1 && chmod 0600 %s", loose,
		 loose);
	assert_int_equal(run(cfg, &out), 0);
	free(out);
	snprintf(cfg, sizeof(cfg), "mcp_http_listen: 0.0.0.0:0\nmcp_http_tls_cert: %s\nmcp_http_tls_key: %s\n", cert,
		 loose);
	refused_at_start(cfg, "", "refused to start TLS");
}

/* The official SDK over https, the certificate trusted through
 * NODE_EXTRA_CA_CERTS. */
static void test_sdk(void **state_)
{
	const char *node_dir = getenv("CORDON_E2E_NODE_DIR");
	_cleanup_free_ char *tok = NULL;
	char cmd[2400], *out;
	json_t *v;

	(void)state_;
	if (!node_dir)
		cordon_test_skip("CORDON_E2E_NODE_DIR not set (npm fixture)");
	tok = agent_add("sdk");
	snprintf(cmd, sizeof(cmd), "NODE_EXTRA_CA_CERTS=%s node %s/sdk-http.mjs https://127.0.0.1:%d /mcp %s", cert,
		 node_dir, port, tok);
	assert_int_equal(run(cmd, &out), 0);
	printf("sdk over tls: %s", out);
	v = json_loads(out, 0, NULL);
	free(out);
	assert_non_null(v);
	assert_string_equal(json_string_value(json_object_get(v, "echo")), "echo: sdk over http");
	json_decref(v);
}

/* The sampling relay over TLS with the official SDK: the `sampler`
 * connector (fake-connector --sampling, client_requests: [sampling]) asks
 * the client's model in the middle of a call; the SDK client, which
 * declared sampling, answers; the call returns what it answered. */
static void test_sdk_sampling(void **state_)
{
	const char *node_dir = getenv("CORDON_E2E_NODE_DIR");
	_cleanup_free_ char *tok = NULL;
	char cmd[2400], *out;
	json_t *v;

	(void)state_;
	if (!node_dir)
		cordon_test_skip("CORDON_E2E_NODE_DIR not set (npm fixture)");
	tok = agent_add("sampling");
	snprintf(cmd, sizeof(cmd),
		 "NODE_EXTRA_CA_CERTS=%s node %s/sdk-http-sampling.mjs https://127.0.0.1:%d/mcp %s sampler__sample",
		 cert, node_dir, port, tok);
	assert_int_equal(run(cmd, &out), 0);
	printf("sdk sampling over tls: %s", out);
	v = json_loads(out, 0, NULL);
	free(out);
	assert_non_null(v);
	assert_string_equal(json_string_value(json_array_get(json_object_get(v, "asked"), 0)), "Say hi.");
	assert_non_null(strstr(json_string_value(json_object_get(v, "result")), "hi from the client model"));
	assert_false(json_is_true(json_object_get(v, "isError")));
	json_decref(v);
}

/* The port cordond bound (0.0.0.0:0), from its log. */
static int read_port(void)
{
	for (int i = 0; i < 100; i++) {
		FILE *f = fopen(C.logfile, "r");
		char line[1024];
		int p = 0;

		while (f && fgets(line, sizeof(line), f)) {
			const char *s = strstr(line, "MCP over HTTPS (TLS) on TCP port ");

			if (s)
				p = atoi(s + 33);
		}
		if (f)
			fclose(f);
		if (p > 0)
			return p;
		usleep(50000);
	}
	return -1;
}

static int setup(void **state_)
{
	char cfg[3000], path[900], *out;

	(void)state_;
	snprintf(cert, sizeof(cert), "%s/cert.pem", C.dir);
	snprintf(key, sizeof(key), "%s/key.pem", C.dir);
	snprintf(cfg, sizeof(cfg),
		 "umask 077 && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "
		 "/CN=cordon-test -addext subjectAltName=DNS:cordon-test,IP:127.0.0.1 -days 1 -keyout %s -out %s 2>&1 "
		 "&& chmod 0644 %s",
		 key, cert, cert);
	if (run(cfg, &out) != 0)
		fail_msg("openssl: %s", out);
	free(out);
	snprintf(cfg, sizeof(cfg),
		 "mcp_http_listen: 0.0.0.0:0\nmcp_http_tls_cert: %s\nmcp_http_tls_key: %s\nmcp_http_hosts: "
		 "cordon-test,mcp.example.org,[fd00::5]\nsessions_per_uid: 3\n",
		 cert, key);
	snprintf(path, sizeof(path), "%s/cordond.yaml", C.dir);
	rcd_write(path, cfg);
	C.config = strdup(path);
	rcd_start(&C);
	rcd_install(&C, "alpha");
	rcd_install(&C, "sampler");
	port = read_port();
	assert_true(port > 0);
	return 0;
}

/* A network namespace with only loopback up: 0.0.0.0 is loopback here. */
static void own_netns(void)
{
	struct ifreq ifr = {};
	int fd;

	if (unshare(CLONE_NEWNET) < 0)
		cordon_test_skip("unshare(CLONE_NEWNET): %s (no network namespaces)", strerror(errno));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		fprintf(stderr, "FAIL: loopback of the test's network namespace: %s\n", strerror(errno));
		exit(1);
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) {
		fprintf(stderr, "FAIL: bringing up loopback: %s\n", strerror(errno));
		exit(1);
	}
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tls_session),    cmocka_unit_test(test_tls_refusals),
		cmocka_unit_test(test_start_refusals), cmocka_unit_test(test_sdk),
		cmocka_unit_test(test_sdk_sampling),
	};
	const char *b = cordon_test_env("CORDON_BUILD_DIR", NULL);
	int r;

	if (geteuid() != 0)
		cordon_test_skip("needs root (cordond drops to nobody; the launcher builds sandboxes)");
	if (!b)
		cordon_test_skip("CORDON_BUILD_DIR not set");
	own_netns();
	rcd_setup(&C, "mcp-tls");
	C.approval_wait = "2s";
	rcd_fake_profile(&C, "alpha", NULL);
	rcd_fake_profile(&C, "sampler",
			 &(struct rcd_fake_options){ .arg = "--sampling",
						     .tools = "  risk: {sample: read}\n  grant: [sample]\n",
						     .tail = "client_requests: [sampling]\n" });
	r = cmocka_run_group_tests(tests, setup, NULL);
	if (C.pid > 0)
		rcd_stop_clean(&C);
	rcd_teardown(&C, r != 0);
	return r;
}
