/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Issue 13: the one-connector view. The real cordond, the real launcher
 * helper and two installed fixture connectors (alpha and beta, both the
 * fake connector with resources and prompts passed through). A session
 * bound to one connector (cordon/bind, as `cordonctl mcp --connector ID`
 * sends it) sees that connector's granted tools, prompts and resources
 * under their own names, routes bare names to it alone, hears only its
 * notifications, and is decided, approved and audited exactly like the
 * multiplexed view, which keeps its `<connector>__` prefixes. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cordond-runner.h"
#include "daemon-harness.h"
#include "test-support.h"

static struct rcd C;

static void bound_session(struct mcp_peer *p, const char *connector)
{
	json_t *r;

	assert_int_equal(mcp_peer_connect(p, C.gateway), 0);
	r = rcd_req(p, "cordon/bind", json_pack("{s:s}", "connector", connector));
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "result"), "connector")), connector);
	json_decref(r);
	r = mcp_peer_initialize(p, "2025-11-25");
	assert_non_null(r);
	assert_string_not_equal(json_string_value(json_object_get(json_object_get(r, "serverInfo"), "name")), "");
	json_decref(r);
}

/* The names a list method answers with (key: "tools", "prompts"), sorted
 * and joined with spaces, into buf. */
static const char *names(struct mcp_peer *p, const char *method, const char *key, char *buf, size_t size)
{
	json_t *r = rcd_req(p, method, NULL), *x;
	const char *v[64];
	size_t i, n = 0, off = 0;

	json_array_foreach(json_object_get(json_object_get(r, "result"), key), i, x) if (n < 64) v[n++] =
		json_string_value(json_object_get(x, "name"));
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++)
			if (strcmp(v[a], v[b]) > 0) {
				const char *t = v[a];

				v[a] = v[b];
				v[b] = t;
			}
	buf[0] = 0;
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? " " : "", v[i]);
	json_decref(r);
	return buf;
}

/* A tools/call's whole response. */
static json_t *call(struct mcp_peer *p, const char *tool, const char *text)
{
	return rcd_req(p, "tools/call", json_pack("{s:s, s:{s:s}}", "name", tool, "arguments", "text", text));
}

/* Reads what the session is sent for ms: whether a tools list_changed was
 * among it. */
static bool heard_list_changed(struct mcp_peer *p, int ms)
{
	bool seen = false;
	json_t *v;

	while ((v = mcp_peer_read(p, ms))) {
		const char *m = json_string_value(json_object_get(v, "method"));

		seen |= m && !strcmp(m, "notifications/tools/list_changed");
		json_decref(v);
		if (seen)
			break;
	}
	return seen;
}

/* The fake connector's profile, resources and prompts passed through; args
 * appended to its command line ("" for none), instances NULL: shared. */
static void profile(const char *id, const char *args, const char *instances)
{
	rcd_fake_profile(&C, id,
			 &(struct rcd_fake_options){ .arg = args[0] ? args : NULL,
						     .instances = instances,
						     .tail = "resources: read\nprompts: read\n" });
}

static void test_views(void **state_)
{
	struct mcp_peer m, a, b, x;
	char buf[1024];
	json_t *r, *v;
	int base;

	(void)state_;
	rcd_install(&C, "alpha");
	rcd_install(&C, "beta");

	/* Names: the multiplexed view prefixes and adds the broker's tools;
	 * a bound view is one connector's own names and nothing else. */
	rcd_session(&C, &m);
	bound_session(&a, "alpha");
	bound_session(&b, "beta");
	assert_string_equal(names(&m, "tools/list", "tools", buf, sizeof(buf)),
			    "alpha__append alpha__echo alpha__roots beta__append beta__echo beta__roots "
			    "cordon__approval_status cordon__release_root cordon__request_root");
	assert_string_equal(names(&a, "tools/list", "tools", buf, sizeof(buf)), "append echo roots");
	assert_string_equal(names(&b, "tools/list", "tools", buf, sizeof(buf)), "append echo roots");
	assert_string_equal(names(&m, "prompts/list", "prompts", buf, sizeof(buf)), "alpha__greet beta__greet");
	assert_string_equal(names(&a, "prompts/list", "prompts", buf, sizeof(buf)), "greet");
	/* cordon's tiers in the annotations, as in the multiplexed view. */
	r = rcd_req(&a, "tools/list", NULL);
	{
		json_t *t;
		size_t i;

		json_array_foreach(json_object_get(json_object_get(r, "result"), "tools"), i, t)
		{
			const char *n = json_string_value(json_object_get(t, "name"));
			json_t *ro = json_object_get(json_object_get(t, "annotations"), "readOnlyHint");

			assert_true(json_is_boolean(ro));
			assert_int_equal(json_is_true(ro), !strcmp(n, "echo") || !strcmp(n, "roots"));
		}
	}
	json_decref(r);

	/* Routing: a bare name reaches the bound connector; a prefixed name,
	 * its own or another's, and a broker tool are unknown tools, with the
	 * error an unknown tool gets in the multiplexed view. */
	r = call(&a, "echo", "bound");
	assert_string_equal(result_text(json_object_get(r, "result")), "echo: bound");
	json_decref(r);
	r = call(&m, "alpha__echo", "multiplexed");
	assert_string_equal(result_text(json_object_get(r, "result")), "echo: multiplexed");
	json_decref(r);
	r = call(&m, "nosuch__echo", "x");
	assert_int_equal(rcd_err_code(r), -32602);
	assert_string_equal(rcd_err_message(r), "Unknown tool: nosuch__echo");
	json_decref(r);
	for (const char *const *t =
		     (const char *const[]){ "beta__echo", "alpha__echo", "cordon__approval_status", "nosuch", NULL };
	     *t; t++) {
		char want[200];

		r = call(&a, *t, "x");
		snprintf(want, sizeof(want), "Unknown tool: %s", *t);
		assert_int_equal(rcd_err_code(r), -32602);
		assert_string_equal(rcd_err_message(r), want);
		json_decref(r);
	}
	r = call(&m, "echo", "x");
	assert_int_equal(rcd_err_code(r), -32602);
	json_decref(r);

	/* Prompts and resources route to the bound connector only. */
	r = rcd_req(&a, "prompts/get", json_pack("{s:s}", "name", "greet"));
	{
		char *t = json_dumps(json_object_get(r, "result"), JSON_COMPACT);

		assert_non_null(t);
		assert_non_null(strstr(t, "prompt greet"));
		free(t);
	}
	json_decref(r);
	/* A prefixed prompt name goes whole to the bound connector (which
	 * decides whether it has such a prompt; the fixture answers any). */
	r = rcd_req(&a, "prompts/get", json_pack("{s:s}", "name", "beta__greet"));
	{
		char *t = json_dumps(json_object_get(r, "result"), JSON_COMPACT);

		assert_non_null(t);
		assert_non_null(strstr(t, "prompt beta__greet"));
		free(t);
	}
	json_decref(r);
	r = rcd_req(&m, "prompts/get", json_pack("{s:s}", "name", "greet"));
	assert_int_equal(rcd_err_code(r), -32602);
	json_decref(r);
	r = rcd_req(&a, "resources/list", NULL);
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "resources")), 1);
	json_decref(r);
	r = rcd_req(&m, "resources/list", NULL);
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "resources")), 2);
	json_decref(r);
	r = rcd_req(&a, "resources/read", json_pack("{s:s}", "uri", "fake://note"));
	assert_non_null(json_object_get(json_object_get(r, "result"), "contents"));
	json_decref(r);

	/* Denial: an ungranted tool is unknown in both views. */
	r = call(&a, "crash", "x");
	assert_int_equal(rcd_err_code(r), -32602);
	json_decref(r);
	r = call(&m, "alpha__crash", "x");
	assert_int_equal(rcd_err_code(r), -32602);
	json_decref(r);

	/* list_changed isolation: a grant change of alpha reaches alpha's
	 * bound session and the multiplexed one, never beta's; and the
	 * removed grant is gone from the bound view at once. */
	while (heard_list_changed(&a, 300) || heard_list_changed(&b, 300) || heard_list_changed(&m, 300))
		;
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "grants", "set", "alpha", "echo,roots", (char *)NULL), 0);
	assert_true(heard_list_changed(&a, 5000));
	assert_true(heard_list_changed(&m, 5000));
	assert_false(heard_list_changed(&b, 1500));
	assert_string_equal(names(&a, "tools/list", "tools", buf, sizeof(buf)), "echo roots");
	r = call(&a, "append", "x");
	assert_int_equal(rcd_err_code(r), -32602);
	json_decref(r);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "grants", "set", "alpha", "echo,append,roots", (char *)NULL), 0);
	assert_true(heard_list_changed(&a, 5000));
	assert_string_equal(names(&a, "tools/list", "tools", buf, sizeof(buf)), "append echo roots");

	/* Approval: a write waits in the bound view as in the multiplexed one;
	 * the approval names the connector and the tool; once approved the
	 * identical call runs exactly once. */
	base = rcd_out_lines(&C);
	r = call(&a, "append", "bound write");
	assert_true(json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
	json_decref(r);
	assert_int_equal(rcd_out_lines(&C), base);
	v = rcd_ctl_json(&C, "approvals", "list", NULL);
	assert_int_equal(json_array_size(rcd_first_array(v)), 1);
	{
		json_t *ap = json_array_get(rcd_first_array(v), 0);

		assert_string_equal(json_string_value(json_object_get(ap, "connector")), "alpha");
		assert_string_equal(json_string_value(json_object_get(ap, "tool")), "append");
		assert_int_equal(rcd_ctl(&C, NULL, NULL, "approvals", "approve",
					 json_string_value(json_object_get(ap, "display_code")), (char *)NULL),
				 0);
	}
	json_decref(v);
	r = call(&a, "append", "bound write");
	assert_string_equal(result_text(json_object_get(r, "result")), "appended");
	json_decref(r);
	assert_int_equal(rcd_out_lines(&C), base + 1);
	r = call(&m, "alpha__append", "multiplexed write");
	assert_true(json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
	json_decref(r);
	assert_int_equal(rcd_out_lines(&C), base + 1);

	/* The binding is set once, before initialize, and never changes. */
	r = rcd_req(&a, "cordon/bind", json_pack("{s:s}", "connector", "beta"));
	assert_int_equal(rcd_err_code(r), -32600);
	json_decref(r);
	r = rcd_req(&m, "cordon/bind", json_pack("{s:s}", "connector", "alpha"));
	assert_int_equal(rcd_err_code(r), -32600);
	json_decref(r);
	assert_int_equal(mcp_peer_connect(&x, C.gateway), 0);
	r = rcd_req(&x, "cordon/bind", json_pack("{s:s}", "connector", "nosuch"));
	assert_int_equal(rcd_err_code(r), -32602);
	assert_non_null(strstr(rcd_err_message(r), "'nosuch'"));
	json_decref(r);
	r = rcd_req(&x, "cordon/bind", json_pack("{s:s}", "connector", "alpha"));
	assert_null(json_object_get(r, "error"));
	json_decref(r);
	r = rcd_req(&x, "cordon/bind", json_pack("{s:s}", "connector", "beta"));
	assert_int_equal(rcd_err_code(r), -32600);
	json_decref(r);
	mcp_peer_disconnect(&x);

	mcp_peer_disconnect(&m);
	mcp_peer_disconnect(&a);
	mcp_peer_disconnect(&b);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "audit", "verify", (char *)NULL), 0);
	/* Decided and audited alike, by connector and tool: alpha's echo from
	 * both views; nothing the bound session sent reached beta (beta's
	 * decisions are the multiplexed session's list fan-outs), and no
	 * decision names a prefixed tool. */
	{
		char *out = NULL;
		int echo = 0;
		json_t *rec;
		size_t i;

		assert_int_equal(rcd_ctl(&C, &out, NULL, "--json", "audit", "tail", "--count", "1000", (char *)NULL),
				 0);
		v = json_loads(out, 0, NULL);
		free(out);
		assert_non_null(v);
		json_array_foreach(rcd_first_array(v), i, rec)
		{
			const char *conn = json_string_value(json_object_get(rec, "connector"));
			const char *tool = json_string_value(json_object_get(rec, "tool"));

			const char *ev = json_string_value(json_object_get(rec, "event"));

			/* Decisions (and the ledger): what sessions asked for. */
			if (!conn || !tool || !ev || strcmp(ev, "decision") != 0)
				continue;
			assert_null(strstr(tool, "__"));
			echo += !strcmp(conn, "alpha") && !strcmp(tool, "echo");
			if (!strcmp(conn, "beta") && strcmp(tool, "prompts/list") && strcmp(tool, "resources/list"))
				fail_msg("beta: a decision on %s", tool);
		}
		assert_true(echo >= 2);
	}
	json_decref(v);
}

/* Runs `cordonctl mcp --connector ID --socket GATEWAY` with input on its
 * stdin, which stays open until its stdout holds `until` (NULL: closed at
 * once; the gateway ends a session whose client is gone, calls in flight
 * included); returns its exit status, stdout and stderr. */
static int ctl_mcp(const char *connector, const char *input, const char *until, char **ret_out, char **ret_err)
{
	int in[2], out[2], err[2], st;
	char *buf = calloc(1, 65536), *rest;
	size_t len = 0;
	pid_t pid;

	assert_non_null(buf);
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(err, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
			_exit(126);
		execl(C.cordonctl, "cordonctl", "mcp", "--connector", connector, "--socket", C.gateway, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	/* Small: the pipe holds it all. */
	assert_int_equal(write(in[1], input, strlen(input)), (ssize_t)strlen(input));
	for (int k = 0; until && k < 150 && !strstr(buf, until); k++) {
		struct pollfd pf = { .fd = out[0], .events = POLLIN };
		ssize_t n;

		if (poll(&pf, 1, 100) <= 0)
			continue;
		n = read(out[0], buf + len, 65535 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(in[1]);
	rest = rcd_slurp(out[0]);
	snprintf(buf + len, 65536 - len, "%s", rest);
	free(rest);
	*ret_out = buf;
	*ret_err = rcd_slurp(err[0]);
	close(out[0]);
	close(err[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

static void test_cordonctl(void **state_)
{
	static const char input[] =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-"
		"25\","
		"\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n"
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"cordon/bind\",\"params\":{\"connector\":\"beta\"}}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
		"\"arguments\":{\"text\":\"via cordonctl\"}}}\n";
	char *out = NULL, *err = NULL;
	int st, seen = 0;

	(void)state_;
	/* An unknown connector: a clear error naming it, exit 1. */
	st = ctl_mcp("nosuch", "", NULL, &out, &err);
	printf("cordonctl mcp --connector nosuch: %s", err);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
	assert_non_null(strstr(err, "nosuch"));
	assert_string_equal(out, "");
	free(out);
	free(err);

	/* Bound: the client's own bytes, answered in the one-connector view;
	 * the client cannot rebind. */
	st = ctl_mcp("alpha", input, "\"id\":4", &out, &err);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		json_t *v = json_loads(line, 0, NULL);
		long id = (long)json_integer_value(json_object_get(v, "id"));
		json_t *res = json_object_get(v, "result");

		assert_non_null(v);
		if (id == 2) {
			json_t *t;
			size_t i;
			int echo = 0;

			assert_int_equal(json_array_size(json_object_get(res, "tools")), 3);
			json_array_foreach(json_object_get(res, "tools"), i, t)
			{
				const char *n = json_string_value(json_object_get(t, "name"));

				assert_null(strstr(n, "__"));
				echo += !strcmp(n, "echo");
			}
			assert_int_equal(echo, 1);
			seen++;
		} else if (id == 3) {
			assert_int_equal(rcd_err_code(v), -32600);
			seen++;
		} else if (id == 4) {
			assert_string_equal(result_text(res), "echo: via cordonctl");
			seen++;
		}
		json_decref(v);
	}
	assert_int_equal(seen, 3);
	free(out);
	free(err);
}

/* The official SDK client through `cordonctl mcp --connector alpha`. */
static void test_sdk_bound(void **state_)
{
	const char *node_dir = getenv("CORDON_E2E_NODE_DIR");
	char plan[800], script[700], cmd[2400], *out;
	json_t *v, *p;
	FILE *f;

	(void)state_;
	if (!node_dir)
		cordon_test_skip("CORDON_E2E_NODE_DIR not set (npm fixture)");
	snprintf(script, sizeof(script), "%s/sdk-client.mjs", node_dir);
	snprintf(plan, sizeof(plan), "%s/plan.json", C.dir);
	p = json_pack("{s:s, s:[s,s,s,s,s], s:[{s:s, s:{s:s}}, {s:s, s:{s:s}}]}", "command", C.cordonctl, "args", "mcp",
		      "--connector", "alpha", "--socket", C.gateway, "calls", "tool", "echo", "arguments", "text",
		      "from the sdk", "tool", "beta__echo", "arguments", "text", "x");
	assert_int_equal(json_dump_file(p, plan, 0), 0);
	json_decref(p);
	snprintf(cmd, sizeof(cmd), "node '%s' '%s'", script, plan);
	f = popen(cmd, "r");
	assert_non_null(f);
	out = rcd_slurp(fileno(f));
	assert_int_equal(pclose(f), 0);
	printf("sdk (bound): %s", out);
	v = json_loads(out, 0, NULL);
	free(out);
	assert_non_null(v);
	assert_int_equal(json_array_size(json_object_get(v, "tools")), 3);
	for (size_t i = 0; i < 3; i++)
		assert_null(strstr(json_string_value(json_array_get(json_object_get(v, "tools"), i)), "__"));
	assert_string_equal(result_text(json_array_get(json_object_get(v, "results"), 0)), "echo: from the sdk");
	p = json_array_get(json_object_get(v, "results"), 1);
	assert_true(json_object_get(p, "error") || json_is_true(json_object_get(p, "isError")));
	json_decref(v);
}

/* The fixture's instructions (fake-connector --instructions), decoded. */
#define FAKE_TEXT "Fake connector: echo repeats.\nSecond line, caf\u00e9."

/* A session's initialize result (bound to connector, or multiplexed when
 * NULL) with protocol version and _meta (NULL: none). */
static json_t *initialized(struct mcp_peer *p, const char *connector, const char *version, json_t *meta)
{
	static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
	json_t *r, *params = json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion", version, "capabilities",
				       "clientInfo", "name", "cordon-test", "version", "1");

	assert_int_equal(mcp_peer_connect(p, C.gateway), 0);
	if (connector) {
		r = rcd_req(p, "cordon/bind", json_pack("{s:s}", "connector", connector));
		assert_null(json_object_get(r, "error"));
		json_decref(r);
	}
	if (meta)
		json_object_set_new(params, "_meta", meta);
	r = rcd_req(p, "initialize", params);
	assert_non_null(json_object_get(r, "result"));
	assert_int_equal(mcp_peer_send_raw(p, note, strlen(note)), 0);
	return r;
}

static const char *instructions_of(const json_t *r)
{
	return json_string_value(json_object_get(json_object_get(r, "result"), "instructions"));
}

/* Issue 13: a connector's `instructions` reach the client: the bound view
 * verbatim, the multiplexed view as one labelled section per connector
 * (here alpha and gamma; beta has none). cordon's note where a bound
 * connector has none. An instance initializes with the protocol version the
 * session that started it negotiated, and a per-session instance with its
 * client's _meta. */
static void test_initialize_instructions(void **state_)
{
	struct mcp_peer m, a, b, g;
	char big[5000];
	json_t *r;

	(void)state_;
	rcd_install(&C, "gamma");
	r = initialized(&a, "alpha", "2025-11-25", json_pack("{s:s}", "probe", "a1"));
	assert_string_equal(instructions_of(r), FAKE_TEXT);
	json_decref(r);
	r = initialized(&g, "gamma", "2025-03-26", json_pack("{s:s, s:i}", "probe", "g1", "n", 7));
	assert_string_equal(instructions_of(r), FAKE_TEXT);
	json_decref(r);
	r = initialized(&b, "beta", "2025-11-25", NULL);
	assert_string_equal(instructions_of(r),
			    "The tools of one connector, under their own names. Calls that change something wait for "
			    "an operator's approval; if a call returns an approval code, repeat the identical call "
			    "after approval.");
	json_decref(r);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	r = initialized(&m, NULL, "1999-01-01", json_pack("{s:s}", "big", big));
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "result"), "protocolVersion")),
			    "2025-11-25");
	assert_string_equal(instructions_of(r),
			    "Tools are named <connector>__<tool>. Calls that change something wait for an operator's "
			    "approval; if a call returns an approval code, repeat the identical call after approval."
			    "\n\n## alpha\n" FAKE_TEXT "\n\n## gamma\n" FAKE_TEXT);
	json_decref(r);

	/* What the instances saw: gamma (per-session) started by g got g's
	 * negotiated version and _meta; started by m, the version m got (it
	 * asked for one cordon does not speak) and no _meta (m's is over 4 KiB).
	 * alpha's shared instance never gets a client's _meta. */
	r = call(&g, "echo", "initialize?");
	assert_string_equal(result_text(json_object_get(r, "result")),
			    "echo: initialize protocolVersion=2025-03-26 _meta={probe:g1,n:7}");
	json_decref(r);
	r = call(&m, "gamma__echo", "initialize?");
	assert_string_equal(result_text(json_object_get(r, "result")),
			    "echo: initialize protocolVersion=2025-11-25 _meta=(none)");
	json_decref(r);
	r = call(&a, "echo", "initialize?");
	assert_non_null(strstr(result_text(json_object_get(r, "result")), " _meta=(none)"));
	json_decref(r);
	mcp_peer_disconnect(&m);
	mcp_peer_disconnect(&a);
	mcp_peer_disconnect(&b);
	mcp_peer_disconnect(&g);

	/* Instructions over 8 KiB are cut on a UTF-8 boundary: 8191 "a" and
	 * a two-byte letter keep the 8191 "a". */
	rcd_install(&C, "delta");
	r = initialized(&g, "delta", "2025-11-25", NULL);
	assert_int_equal(strlen(instructions_of(r)), 8191);
	assert_int_equal(strspn(instructions_of(r), "a"), 8191);
	json_decref(r);
	mcp_peer_disconnect(&g);
}

static int setup(void **state_)
{
	(void)state_;
	unlink(C.gateway);
	rcd_start(&C);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_cordonctl),
		cmocka_unit_test(test_sdk_bound),
		cmocka_unit_test(test_initialize_instructions),
	};
	const char *b = cordon_test_env("CORDON_BUILD_DIR", NULL);
	int r;

	if (geteuid() != 0)
		cordon_test_skip("needs root (cordond drops to nobody; the launcher builds sandboxes)");
	if (!b)
		cordon_test_skip("CORDON_BUILD_DIR not set");
	rcd_setup(&C, "bound-view");
	C.approval_wait = "2s";
	profile("alpha", "--instructions", NULL);
	profile("beta", "", NULL);
	profile("gamma", "--instructions", "per-session");
	profile("delta", "--long-instructions", NULL);
	r = cmocka_run_group_tests(tests, setup, NULL);
	if (C.pid > 0)
		rcd_stop(&C);
	rcd_teardown(&C, r != 0);
	return r;
}
