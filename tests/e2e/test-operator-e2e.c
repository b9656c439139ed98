/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The operator surfaces against the real daemon: cordond as root (it drops
 * to nobody and sandboxes itself) with the real launcher helper; an agent
 * speaking MCP through `cordonctl mcp` (the stdio bridge); every operator
 * step with the cordonctl binary; /health, /health/detail and /metrics with
 * `curl --unix-socket`, the capability report compared with
 * `cordon-launch --probe`. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cordond-runner.h"
#include "daemon-harness.h"
#include "test-support.h"

static struct rcd C;

struct creds {
	uid_t uid;
	gid_t gid, supp; /* supp (gid_t)-1: no supplementary group */
};

/* Runs argv (absolute path first), as creds when non-NULL, and returns its
 * exit status; stdout in *out (malloc'd, may be NULL to discard). */
static int run_as(const struct creds *c, char **out, char *const argv[])
{
	int p[2], st;
	pid_t pid;
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);

	assert_non_null(buf);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		if (c) {
			if (c->supp == (gid_t)-1)
				CHILD_CHECK(setgroups(0, NULL) == 0);
			else
				CHILD_CHECK(setgroups(1, &c->supp) == 0);
			CHILD_CHECK(setresgid(c->gid, c->gid, c->gid) == 0);
			CHILD_CHECK(setresuid(c->uid, c->uid, c->uid) == 0);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	for (ssize_t r; (r = read(p[0], buf + len, cap - len - 1)) > 0;) {
		len += (size_t)r;
		if (cap - len < 2) {
			buf = realloc(buf, cap *= 2);
			assert_non_null(buf);
		}
	}
	buf[len] = 0;
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int run(char **out, char *const argv[])
{
	return run_as(NULL, out, argv);
}

/* curl --unix-socket HTTPSOCK http://localhost/PATH; returns the HTTP code. */
static int curl(const char *path, char **body)
{
	char url[256], *out = NULL, *last;
	char *argv[] = {
		(char *)"/usr/bin/curl",  (char *)"-sS",	   (char *)"--max-time", (char *)"10", (char *)"-w",
		(char *)"\n%{http_code}", (char *)"--unix-socket", C.httpsock,		 url,	       NULL
	};
	int code;

	snprintf(url, sizeof(url), "http://localhost%s", path);
	assert_int_equal(run(&out, argv), 0);
	last = strrchr(out, '\n');
	assert_non_null(last);
	*last = 0;
	code = atoi(last + 1);
	*body = out;
	return code;
}

/* Removes every member named "duration_us" (timings differ between runs). */
static void strip_timings(json_t *v)
{
	const char *k;
	json_t *x;
	void *tmp;
	size_t i;

	if (json_is_object(v)) {
		json_object_foreach_safe(v, tmp, k, x)
		{
			if (!strcmp(k, "duration_us"))
				json_object_del(v, k);
			else
				strip_timings(x);
		}
	} else if (json_is_array(v))
		json_array_foreach(v, i, x) strip_timings(x);
}

/* Sends a tools/call without waiting for its answer. */
static void send_call(struct mcp_peer *p, long id, const char *tool, const char *args)
{
	char line[1024];
	int n = snprintf(line, sizeof(line),
			 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
			 "\"arguments\":%s}}\n",
			 id, tool, args);

	assert_int_equal(mcp_peer_send_raw(p, line, (size_t)n), 0);
}

/* The response with id (other messages skipped). */
static json_t *wait_response(struct mcp_peer *p, long id)
{
	for (int i = 0; i < 100; i++) {
		json_t *m = mcp_peer_read(p, 15000);

		assert_non_null(m);
		if (json_integer_value(json_object_get(m, "id")) == id && !json_object_get(m, "method"))
			return m;
		json_decref(m);
	}
	fail_msg("no response %ld", id);
	return NULL;
}

/* Polls `cordonctl approvals list` until n approvals are outstanding. */
static json_t *wait_approvals(size_t n)
{
	for (int i = 0; i < 100; i++) {
		json_t *v = rcd_ctl_json(&C, "approvals", "list", NULL);

		if (json_array_size(v) == n)
			return v;
		json_decref(v);
		usleep(50 * 1000);
	}
	fail_msg("never %zu outstanding approvals", n);
	return NULL;
}

static void test_http_surface(void **state_)
{
	char *body = NULL, *probe = NULL;
	json_t *detail, *caps, *ctl_caps, *health;
	char *argv[] = { C.launch, (char *)"--probe", NULL };

	(void)state_;
	/* ok, or degraded; a kernel that is not ok is named with the probe's
	 * verdict (root_guard where neither BPF LSM nor its seccomp supervisor can run),
	 * checked against the detail below. */
	assert_int_equal(curl("/health", &body), 200);
	health = json_loads(body, 0, NULL);
	free(body);
	assert_non_null(health);
	assert_non_null(json_string_value(json_object_get(health, "status")));
	assert_true(!strcmp(json_string_value(json_object_get(health, "status")), "ok") ||
		    !strcmp(json_string_value(json_object_get(health, "status")), "degraded"));

	/* The detail's capability report is the launcher's probe: same JSON as
	 * `cordon-launch --probe` on this machine, timings aside. */
	assert_int_equal(curl("/health/detail", &body), 200);
	detail = json_loads(body, 0, NULL);
	free(body);
	assert_non_null(detail);
	assert_non_null(json_object_get(detail, "status"));
	assert_non_null(json_object_get(json_object_get(detail, "audit"), "last_seq"));
	caps = json_object_get(detail, "capabilities");
	assert_true(json_is_object(caps));
	if (strcmp(json_string_value(json_object_get(json_object_get(caps, "verdict"), "status")), "ok") == 0) {
		assert_null(json_object_get(health, "kernel"));
	} else {
		assert_string_equal(json_string_value(json_object_get(health, "status")), "degraded");
		assert_true(json_equal(json_object_get(health, "kernel"), json_object_get(caps, "verdict")));
	}
	json_decref(health);
	assert_int_equal(run(&probe, argv), 0);
	{
		json_t *p = json_loads(probe, 0, NULL);

		assert_non_null(p);
		strip_timings(p);
		strip_timings(caps);
		if (!json_equal(p, caps)) {
			char *a = json_dumps(p, JSON_SORT_KEYS | JSON_INDENT(1)),
			     *b = json_dumps(caps, JSON_SORT_KEYS | JSON_INDENT(1));

			fprintf(stderr, "cordon-launch --probe:\n%s\n/health/detail capabilities:\n%s\n", a, b);
			free(a);
			free(b);
			fail_msg("capability report differs from cordon-launch --probe");
		}
		json_decref(p);
	}
	free(probe);
	/* cordonctl capabilities serves the same report */
	ctl_caps = rcd_ctl_json(&C, "capabilities", NULL, NULL);
	strip_timings(ctl_caps);
	assert_true(json_equal(ctl_caps, caps));
	json_decref(ctl_caps);
	json_decref(detail);

	assert_int_equal(curl("/metrics", &body), 200);
	assert_non_null(strstr(body, "# TYPE cordon_http_requests_total counter"));
	assert_non_null(strstr(body, "cordon_http_requests_total{endpoint=\"health_detail\"} 1"));
	free(body);
	assert_int_equal(curl("/nope", &body), 404);
	free(body);
}

static void test_operator_flow(void **state_)
{
	struct mcp_peer p;
	char *out = NULL, code[16], crit[64], confirm[16];
	char *bridge[] = { C.cordonctl, (char *)"mcp", (char *)"--socket", C.gateway, NULL };
	json_t *v, *tools, *t, *r;
	size_t i;

	(void)state_;
	/* install, review the inventory the way an operator would */
	assert_int_equal(rcd_ctl(&C, &out, NULL, "connectors", "add", "fake", (char *)NULL), 0);
	free(out);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "connectors", "list", (char *)NULL), 0);
	assert_non_null(strstr(out, "fake"));
	free(out);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "status", (char *)NULL), 0);
	assert_non_null(strstr(out, "tools to review:      5"));
	free(out);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "inventory", "show", "fake", (char *)NULL), 0);
	assert_non_null(strstr(out, "fake/roots  [pending_review]"));
	assert_non_null(strstr(out, "cordon tier:   critical (granted)"));
	assert_non_null(strstr(out, "review with:   cordonctl inventory review fake append --fingerprint "));
	free(out);
	v = rcd_ctl_json(&C, "inventory", "show", "fake");
	tools = json_object_get(v, "tools");
	assert_int_equal(json_array_size(tools), 5);
	json_array_foreach(tools, i, t) assert_int_equal(
		rcd_ctl(&C, NULL, NULL, "inventory", "review", "fake", json_string_value(json_object_get(t, "tool")),
			"--fingerprint", json_string_value(json_object_get(t, "fingerprint")), (char *)NULL),
		0);
	json_decref(v);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "inventory", "show", "fake", (char *)NULL), 0);
	assert_non_null(strstr(out, "nothing to review"));
	free(out);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "grants", "show", "fake", (char *)NULL), 0);
	assert_non_null(strstr(out, "fake: 3 granted"));
	free(out);

	/* The agent, through the stdio bridge. */
	assert_int_equal(mcp_peer_start(&p, bridge), 0);
	r = mcp_peer_initialize(&p, "2025-11-25");
	assert_non_null(r);
	json_decref(r);
	r = mcp_peer_call(&p, "fake__echo", json_pack("{s:s}", "text", "via bridge"), 15000);
	assert_non_null(r);
	assert_string_equal(result_text(r), "echo: via bridge");
	json_decref(r);

	/* A write waits for an operator: approved from cordonctl while the
	 * call is waiting, it completes, exactly once. */
	send_call(&p, 100, "fake__append", "{\"text\":\"ghp_abcdefghijklmnopqrstuvwxyz0123456789\"}");
	v = wait_approvals(1);
	snprintf(code, sizeof(code), "%s", json_string_value(json_object_get(json_array_get(v, 0), "display_code")));
	assert_string_equal(json_string_value(json_object_get(json_array_get(v, 0), "tier")), "write");
	json_decref(v);
	assert_int_equal(rcd_out_lines(&C), 0);
	/* the operator sees the call with the token masked */
	assert_int_equal(rcd_ctl(&C, &out, NULL, "approvals", "show", code, (char *)NULL), 0);
	assert_non_null(strstr(out, "call:       fake/append"));
	assert_non_null(strstr(out, "\"text\": <masked: 40 bytes>"));
	assert_null(strstr(out, "ghp_"));
	free(out);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "approvals", "approve", code, (char *)NULL), 0);
	/* approved, or already consumed by the waiting call it woke */
	assert_true(strstr(out, ": approved") || strstr(out, ": consumed"));
	free(out);
	r = wait_response(&p, 100);
	assert_string_equal(result_text(json_object_get(r, "result")), "appended");
	json_decref(r);
	assert_int_equal(rcd_out_lines(&C), 1);

	/* The identical call again needs a new approval; denied, it never runs. */
	send_call(&p, 101, "fake__append", "{\"text\":\"ghp_abcdefghijklmnopqrstuvwxyz0123456789\"}");
	v = wait_approvals(1);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "approvals", "deny",
				 json_string_value(json_object_get(json_array_get(v, 0), "id")), (char *)NULL),
			 0);
	json_decref(v);
	r = wait_response(&p, 101);
	assert_true(json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
	json_decref(r);
	assert_int_equal(rcd_out_lines(&C), 1);

	/* Critical: the confirmation code exists only on the operator surface. */
	send_call(&p, 102, "fake__roots", "{}");
	v = wait_approvals(1);
	snprintf(crit, sizeof(crit), "%s", json_string_value(json_object_get(json_array_get(v, 0), "id")));
	assert_string_equal(json_string_value(json_object_get(json_array_get(v, 0), "tier")), "critical");
	json_decref(v);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "approvals", "approve", crit, (char *)NULL), 1);
	free(out);
	v = rcd_ctl_json(&C, "approvals", "show", crit);
	snprintf(confirm, sizeof(confirm), "%s", json_string_value(json_object_get(v, "confirmation_code")));
	json_decref(v);
	assert_int_equal(strlen(confirm), 8);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "approvals", "approve", crit, "--code", "AAAAAAAA", (char *)NULL), 1);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "approvals", "approve", crit, "--code", confirm, (char *)NULL), 0);
	r = wait_response(&p, 102);
	assert_non_null(json_object_get(r, "result"));
	assert_false(json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
	json_decref(r);
	assert_int_equal(mcp_peer_stop(&p, 5000), 0);

	/* Ledger, audit, and the big red button. */
	assert_int_equal(rcd_ctl(&C, &out, NULL, "actions", "list", (char *)NULL), 0);
	assert_non_null(strstr(out, "no unresolved actions"));
	free(out);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "--json", "audit", "tail", "--count", "3", (char *)NULL), 0);
	v = json_loads(out, 0, NULL);
	assert_int_equal(json_array_size(v), 3);
	json_decref(v);
	free(out);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "audit", "verify", (char *)NULL), 0);
	assert_non_null(strstr(out, "PASS"));
	free(out);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "revoke-all", "--yes", (char *)NULL), 0);
	assert_non_null(strstr(out, "revoked: 3 grants"));
	free(out);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "grants", "show", "fake", (char *)NULL), 0);
	assert_non_null(strstr(out, "fake: 0 granted"));
	free(out);
}

/* An operator who is not root: a member of the operator group by a
 * supplementary group, against the real, sandboxed daemon (which cannot
 * read the group database: the kernel's record of the peer decides). */
static void test_operator_group_member(void **state_)
{
	struct group *gr = getgrgid(65534);
	const struct creds member = { .uid = 65534, .gid = 43210, .supp = 65534 },
			   outsider = { .uid = 65534, .gid = 43210, .supp = (gid_t)-1 };
	char *argv[] = { C.cordonctl, (char *)"--socket", C.opsock, (char *)"status", NULL };
	char *out = NULL;

	(void)state_;
	if (!gr)
		cordon_test_skip("needs a group with gid 65534");
	rcd_stop_clean(&C);
	C.operator_group = gr->gr_name;
	rcd_start(&C);
	assert_int_equal(run_as(&member, &out, argv), 0);
	assert_non_null(strstr(out, "health:"));
	free(out);
	/* not in the group: the socket file's mode already refuses the connect */
	assert_int_equal(run_as(&outsider, NULL, argv), 4);
}

/* Whether connectors.list says id is installed. */
static bool installed(const char *id)
{
	json_t *v = rcd_ctl_json(&C, "connectors", "list"), *e;
	bool yes = false;
	size_t i;

	assert_non_null(v);
	json_array_foreach(v, i, e) if (strcmp(json_string_value(json_object_get(e, "id")), id) == 0) yes =
		json_is_true(json_object_get(e, "installed"));
	json_decref(v);
	return yes;
}

/* A refused add leaves nothing behind: not installed, no inventory, no
 * grant (both answer "unknown connector"), an audit record "refused" by
 * the operator; the fixed add then succeeds. */
static void assert_left_nothing(const char *id, const char *reason)
{
	char *out = NULL, *err = NULL, want[128];

	assert_false(installed(id));
	assert_int_equal(rcd_ctl(&C, NULL, &err, "inventory", "show", id, (char *)NULL), 1);
	assert_non_null(strstr(err, "unknown connector"));
	free(err);
	assert_int_equal(rcd_ctl(&C, NULL, &err, "grants", "show", id, (char *)NULL), 1);
	assert_non_null(strstr(err, "unknown connector"));
	free(err);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "--json", "audit", "tail", "--count", "1", (char *)NULL), 0);
	snprintf(want, sizeof(want), "\"connector\": \"%s\"", id);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "\"state\": \"refused\""));
	snprintf(want, sizeof(want), "\"reason\": \"%s\"", reason);
	assert_non_null(strstr(out, want));
	assert_null(strstr(out, "\"system\""));
	free(out);
}

static void test_add_atomic(void **state_)
{
	char *err = NULL, path[800];

	(void)state_;
	/* a root that does not exist yet */
	assert_int_equal(rcd_ctl(&C, NULL, &err, "connectors", "add", "lateroot", (char *)NULL), 1);
	snprintf(path, sizeof(path), "%s/later", C.dir);
	assert_non_null(strstr(err, "does not exist: create "));
	assert_non_null(strstr(err, path));
	free(err);
	assert_left_nothing("lateroot", "missing-root");
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "connectors", "add", "lateroot", (char *)NULL), 0);
	assert_true(installed("lateroot"));
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "connectors", "remove", "lateroot", (char *)NULL), 0);

	/* a credential file that is not there */
	assert_int_equal(rcd_ctl(&C, NULL, &err, "connectors", "add", "nocred", (char *)NULL), 1);
	assert_non_null(strstr(err, "set credential FAKE_TOKEN in "));
	free(err);
	assert_left_nothing("nocred", "missing-credential");
	snprintf(path, sizeof(path), "%s/token", C.dir);
	rcd_write(path, "s3cret\n");
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "connectors", "add", "nocred", (char *)NULL), 0);
	assert_true(installed("nocred"));
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "connectors", "remove", "nocred", (char *)NULL), 0);

	/* a program that is not installed */
	assert_int_equal(rcd_ctl(&C, NULL, &err, "connectors", "add", "noprog", (char *)NULL), 1);
	assert_non_null(strstr(err, "its command /opt/cordon-test/not-installed1 does not exist"));
	assert_non_null(strstr(err, "install it"));
	free(err);
	assert_left_nothing("noprog", "missing-command");

	/* a program that exits before listing its tools: the install is undone,
	 * and the same add is refused the same way again (not "already
	 * installed") */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rcd_ctl(&C, NULL, &err, "connectors", "add", "crashy", (char *)NULL), 1);
		assert_non_null(strstr(err, "exited before listing its tools"));
		free(err);
		assert_left_nothing("crashy", "launch-failed");
	}
}

/* The CLI against the real cordond: grants name advertised tools, a wrong
 * fingerprint says what is wrong, --json errors are one object on stderr,
 * connector changes are audited as the operator. */
static void test_cli_correctness(void **state_)
{
	char *out = NULL, *err = NULL, want[400];
	json_t *v, *st;
	json_int_t epoch;
	json_error_t e;
	const char *fp = NULL;
	size_t i;

	(void)state_;
	st = rcd_ctl_json(&C, "status", NULL, NULL);
	epoch = json_integer_value(json_object_get(st, "policy_epoch"));
	assert_int_equal(json_integer_value(json_object_get(st, "schema_version")), 1);
	json_decref(st);
	assert_int_equal(rcd_ctl(&C, NULL, &err, "grants", "add", "fake", "nosuch", (char *)NULL), 1);
	assert_non_null(strstr(err, "fake does not advertise a tool \"nosuch\"; see `cordonctl inventory show fake "
				    "--all` (or grant it anyway with --allow-unknown)"));
	free(err);
	st = rcd_ctl_json(&C, "status", NULL, NULL);
	assert_int_equal(json_integer_value(json_object_get(st, "policy_epoch")), epoch);
	json_decref(st);
	/* --json: the refusal alone, as JSON, on stderr */
	assert_int_equal(rcd_ctl(&C, &out, &err, "--json", "grants", "add", "fake", "nosuch", (char *)NULL), 1);
	assert_string_equal(out, "");
	v = json_loads(err, 0, &e);
	assert_non_null(v);
	assert_string_equal(json_string_value(json_object_get(json_object_get(v, "error"), "code")), "not-found");
	json_decref(v);
	free(out);
	free(err);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "grants", "add", "fake", "nosuch", "--allow-unknown", (char *)NULL),
			 0);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "grants", "remove", "fake", "nosuch", (char *)NULL), 0);

	/* a fingerprint that is not the tool's */
	assert_int_equal(rcd_ctl(&C, &out, NULL, "--json", "inventory", "show", "fake", "echo", "--all", (char *)NULL),
			 0);
	v = json_loads(out, 0, &e);
	free(out);
	assert_non_null(v);
	json_array_foreach(json_object_get(v, "tools"), i, st) fp =
		json_string_value(json_object_get(st, "fingerprint"));
	assert_non_null(fp);
	snprintf(want, sizeof(want),
		 "fingerprint deadbeef does not match the tool's current fingerprint %s; run `cordonctl inventory "
		 "show fake echo`",
		 fp);
	json_decref(v);
	assert_int_equal(rcd_ctl(&C, NULL, &err, "inventory", "review", "fake", "echo", "--fingerprint", "deadbeef",
				 (char *)NULL),
			 1);
	assert_non_null(strstr(err, want));
	assert_null(strstr(err, "Invalid argument"));
	free(err);

	/* connectors remove/add: audited with the operator's uid, not "system" */
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "connectors", "add", "lateroot", (char *)NULL), 0);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "--json", "audit", "tail", "--count", "50", (char *)NULL), 0);
	v = json_loads(out, 0, &e);
	assert_non_null(v);
	{
		json_t *rec, *found = NULL;

		json_array_foreach(v, i,
				   rec) if (json_is_string(json_object_get(rec, "state")) &&
					    !strcmp(json_string_value(json_object_get(rec, "state")), "installed") &&
					    !strcmp(json_string_value(json_object_get(rec, "connector")), "lateroot"))
			found = rec;
		assert_non_null(found);
		assert_string_equal(json_string_value(json_object_get(json_object_get(found, "actor"), "kind")),
				    "operator");
	}
	json_decref(v);
	free(out);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "connectors", "remove", "lateroot", (char *)NULL), 0);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "--json", "audit", "tail", "--count", "1", (char *)NULL), 0);
	assert_non_null(strstr(out, "\"removed\""));
	assert_non_null(strstr(out, "\"operator\""));
	free(out);
}

/* `cordonctl audit export` lines (all records by default), parsed. */
static json_t *export_lines(const char *after)
{
	char *out = NULL, *save = NULL;
	json_t *arr = json_array();

	if (after)
		assert_int_equal(rcd_ctl(&C, &out, NULL, "audit", "export", "--after-seq", after, (char *)NULL), 0);
	else
		assert_int_equal(rcd_ctl(&C, &out, NULL, "audit", "export", (char *)NULL), 0);
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		json_t *v = json_loads(l, JSON_REJECT_DUPLICATES, NULL);

		assert_non_null(v);
		assert_int_equal(json_array_append_new(arr, v), 0);
	}
	free(out);
	return arr;
}

static const char *actor_kind(const json_t *rec)
{
	return json_string_value(json_object_get(json_object_get(rec, "actor"), "kind"));
}

static const char *field(const json_t *rec, const char *k)
{
	const char *v = json_string_value(json_object_get(json_object_get(rec, "fields"), k));

	return v ? v : "";
}

/* Every operator verb is audited as the operator (uid and channel), never
 * as "system": grants add/set/remove, connectors restart, reload, and over
 * the whole log (after the flow above: inventory reviews, approvals
 * approved and denied, connectors added and removed, revoke-all). */
static void test_audit_operator_attribution(void **state_)
{
	json_t *all, *rec;
	char after[32];
	size_t i, checked = 0;
	struct {
		const char *argv[6];
		const char *event, *state;
	} verbs[] = {
		{ { "grants", "add", "fake", "echo" }, "grant", "granted" },
		{ { "grants", "set", "fake", "echo,append" }, "grant", "granted" },
		{ { "grants", "remove", "fake", "append" }, "grant", "revoked" },
		{ { "connectors", "restart", "fake" }, "connector", "launched" },
		{ { "reload" }, "broker.reload", "applied" },
	};

	(void)state_;
	for (size_t v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++) {
		json_t *st = rcd_ctl_json(&C, "status", NULL, NULL), *recs;
		bool found = false;

		snprintf(after, sizeof(after), "%lld",
			 (long long)json_integer_value(json_object_get(json_object_get(st, "audit"), "last_seq")));
		json_decref(st);
		assert_int_equal(rcd_ctl(&C, NULL, NULL, verbs[v].argv[0], verbs[v].argv[1] ? verbs[v].argv[1] : NULL,
					 verbs[v].argv[1] ? verbs[v].argv[2] : NULL,
					 verbs[v].argv[1] && verbs[v].argv[2] ? verbs[v].argv[3] : NULL, (char *)NULL),
				 0);
		recs = export_lines(after);
		json_array_foreach(recs, i, rec)
		{
			if (strcmp(json_string_value(json_object_get(rec, "event")), verbs[v].event) != 0 ||
			    strcmp(field(rec, "state"), verbs[v].state) != 0)
				continue;
			found = true;
			if (strcmp(actor_kind(rec), "operator") != 0)
				fail_msg("%s %s: audited as %s", verbs[v].argv[0], verbs[v].argv[1] ?: "",
					 actor_kind(rec));
			/* the broker's own relaunch of the instance may follow */
			break;
		}
		if (!found)
			fail_msg("%s %s: no %s/%s record", verbs[v].argv[0], verbs[v].argv[1] ?: "", verbs[v].event,
				 verbs[v].state);
		json_decref(recs);
	}

	all = export_lines(NULL);
	json_array_foreach(all, i, rec)
	{
		const char *ev = json_string_value(json_object_get(rec, "event")), *st = field(rec, "state");
		bool by_operator = !strcmp(ev, "approval.approved") || !strcmp(ev, "approval.denied") ||
				   !strcmp(ev, "approval.revealed") || !strcmp(ev, "grant") ||
				   !strcmp(ev, "broker.reload") ||
				   (!strcmp(ev, "inventory") && !strcmp(st, "reviewed")) ||
				   (!strcmp(ev, "connector") &&
				    (!strcmp(st, "installed") || !strcmp(st, "removed") || !strcmp(st, "refused")));

		if (!by_operator)
			continue;
		checked++;
		if (strcmp(actor_kind(rec), "operator") != 0)
			fail_msg("record %lld (%s %s) is audited as %s",
				 (long long)json_integer_value(json_object_get(rec, "seq")), ev, st, actor_kind(rec));
		assert_int_equal(json_integer_value(json_object_get(json_object_get(rec, "actor"), "uid")), 0);
	}
	assert_true(checked >= 20);
	json_decref(all);
}

/* export: every record once, in order, chained by hash; --after-seq
 * resumes; --since/--until filter; bad values are named; --follow prints
 * what is appended. audit key round-trips through verify and
 * cordon-audit-verify. */
static void test_audit_export_key(void **state_)
{
	json_t *all, *rec, *prev = NULL;
	char *out = NULL, *err = NULL, key[512], dbpath[700], tool[700], after[32];
	size_t i;

	(void)state_;
	all = export_lines(NULL);
	assert_true(json_array_size(all) > 50);
	json_array_foreach(all, i, rec)
	{
		const char *t = json_string_value(json_object_get(rec, "time"));

		assert_int_equal(json_integer_value(json_object_get(rec, "seq")), (json_int_t)i + 1);
		assert_non_null(t);
		assert_int_equal(t[strlen(t) - 1], 'Z');
		assert_true(json_is_object(json_object_get(rec, "fields")));
		if (prev)
			assert_string_equal(json_string_value(json_object_get(rec, "prev")),
					    json_string_value(json_object_get(prev, "hash")));
		prev = rec;
	}
	{
		json_t *tail = export_lines("10");

		assert_int_equal(json_array_size(tail), json_array_size(all) - 10);
		assert_int_equal(json_integer_value(json_object_get(json_array_get(tail, 0), "seq")), 11);
		json_decref(tail);
	}
	assert_int_equal(rcd_ctl(&C, &out, NULL, "audit", "export", "--since", "2999-01-01", (char *)NULL), 0);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "audit", "export", "--until", "2000-01-01T00:00:00Z", (char *)NULL),
			 0);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(rcd_ctl(&C, NULL, &err, "audit", "export", "--since", "yesterday", (char *)NULL), 2);
	assert_non_null(strstr(err, "\"yesterday\" is not an ISO 8601 UTC time"));
	free(err);
	assert_int_equal(rcd_ctl(&C, NULL, &err, "audit", "export", "--after-seq", "-1", (char *)NULL), 2);
	assert_non_null(strstr(err, "--after-seq \"-1\" is not a record number"));
	free(err);
	assert_int_equal(rcd_ctl(&C, NULL, &err, "audit", "export", "--follow", "--until", "2030-01-01", (char *)NULL),
			 2);
	free(err);

	/* --follow: a record appended later arrives on the open connection */
	snprintf(after, sizeof(after), "%zu", json_array_size(all));
	{
		char *argv[] = { C.cordonctl,
				 (char *)"--socket",
				 C.opsock,
				 (char *)"audit",
				 (char *)"export",
				 (char *)"--follow",
				 (char *)"--after-seq",
				 after,
				 NULL };
		char buf[65536] = "";
		size_t n = 0;
		int p[2], st;
		pid_t pid;

		assert_int_equal(pipe2(p, O_CLOEXEC), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			dup2(p[1], 1);
			execv(argv[0], argv);
			_exit(127);
		}
		close(p[1]);
		assert_int_equal(rcd_ctl(&C, NULL, NULL, "grants", "add", "fake", "roots", (char *)NULL), 0);
		while (!strstr(buf, "\"roots\"")) {
			struct pollfd pf = { .fd = p[0], .events = POLLIN };
			ssize_t k;

			assert_int_equal(poll(&pf, 1, 20000), 1);
			k = read(p[0], buf + n, sizeof(buf) - 1 - n);
			assert_true(k > 0);
			n += (size_t)k;
			buf[n] = 0;
		}
		assert_non_null(strstr(buf, "\"granted\""));
		kill(pid, SIGTERM);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		close(p[0]);
	}
	json_decref(all);

	/* audit key: the form both verifiers take */
	assert_int_equal(rcd_ctl(&C, &out, NULL, "audit", "key", (char *)NULL), 0);
	assert_true(strlen(out) > 10 && strlen(out) < sizeof(key));
	snprintf(key, sizeof(key), "%.*s", (int)strcspn(out, "\n"), out);
	free(out);
	assert_true(strncmp(key, "cordond+", 8) == 0);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "--json", "audit", "verify", "--key", key, (char *)NULL), 0);
	assert_non_null(strstr(out, "\"key\": \"given\""));
	assert_non_null(strstr(out, "PASS"));
	free(out);
	key[strlen(key) - 2] ^= 1; /* another key */
	assert_int_equal(rcd_ctl(&C, NULL, &err, "audit", "verify", "--key", key, (char *)NULL), 2);
	free(err);
	key[strlen(key) - 2] ^= 1;
	{
		char *argv[] = { tool, dbpath, key, (char *)"cordon/cordond/audit", NULL };
		struct stat sb;
		struct creds owner;

		snprintf(dbpath, sizeof(dbpath), "%s/cordon.db", C.state);
		snprintf(tool, sizeof(tool), "%s/tools/cordon-audit-verify", cordon_test_env("CORDON_BUILD_DIR", "."));
		assert_int_equal(stat(dbpath, &sb), 0);
		owner = (struct creds){ .uid = sb.st_uid, .gid = sb.st_gid, .supp = (gid_t)-1 };
		assert_int_equal(run_as(&owner, &out, argv), 0);
		assert_true(strncmp(out, "PASS: records 1..", 17) == 0);
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_surface),	      cmocka_unit_test(test_operator_flow),
		cmocka_unit_test(test_operator_group_member), cmocka_unit_test(test_add_atomic),
		cmocka_unit_test(test_cli_correctness),	      cmocka_unit_test(test_audit_operator_attribution),
		cmocka_unit_test(test_audit_export_key),
	};
	const char *b = cordon_test_env("CORDON_BUILD_DIR", NULL);
	int r, st = 0;

	if (geteuid() != 0)
		cordon_test_skip("needs root (cordond drops to nobody; the launcher builds sandboxes)");
	if (!b)
		cordon_test_skip("CORDON_BUILD_DIR not set");
	if (access("/usr/bin/curl", X_OK) != 0)
		cordon_test_skip("curl is not installed (tools/install-deps installs it)");
	rcd_setup(&C, "operator-e2e");
	rcd_fake_profile(&C, "fake", &(struct rcd_fake_options){ .roots_risk = "critical" });
	{
		char data[sizeof(C.data)], cred[800], prog[900], *text;
		int fd;

		rcd_fake_profile(&C, "crashy", &(struct rcd_fake_options){ .arg = "--no-such-mode" });
		snprintf(cred, sizeof(cred), "%s/token", C.dir);
		rcd_fake_profile(&C, "nocred", &(struct rcd_fake_options){ .credential_file = cred });
		memcpy(data, C.data, sizeof(data));
		snprintf(C.data, sizeof(C.data), "%s/later", C.dir);
		rcd_fake_profile(&C, "lateroot", NULL);
		memcpy(C.data, data, sizeof(data));
		/* noprog: the fake profile naming a program that is not there */
		rcd_fake_profile(&C, "noprog", NULL);
		snprintf(prog, sizeof(prog), "%s/noprog.yaml", C.profiles);
		fd = open(prog, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		text = rcd_slurp(fd);
		close(fd);
		assert_non_null(strstr(text, "/opt/cordon-test/fake-connector"));
		memcpy(strstr(text, "/opt/cordon-test/fake-connector"), "/opt/cordon-test/not-installed1", 31);
		rcd_write(prog, text);
		free(text);
	}
	C.approval_wait = "20s";
	rcd_start(&C);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	if (C.pid > 0)
		st = rcd_stop(&C);
	if (r == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		fprintf(stderr, "cordond did not exit cleanly on SIGTERM (status %d)\n", st);
		r = 1;
	}
	rcd_teardown(&C, r != 0);
	return r;
}
