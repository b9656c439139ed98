/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The real thing: the cordond binary as root (it drops to nobody and
 * sandboxes itself), the real launcher helper (cordon-launch --serve) that
 * runs the fake connector in a real sandbox, cordonctl on the operator
 * socket for every operator step, an MCP client on the gateway socket. */
#include <dirent.h>
#include <grp.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cordond-runner.h"
#include "daemon-harness.h"
#include "probe-util.h"
#include "probe.h"
#include "test-support.h"

static struct rcd C;
static char notify_path[700];

/* A credential the profiles inject (issue 11 finding 10a): the helper hands
 * its value to cordond with every spawn, for scrubbing only; it must never
 * reach the report cordond shows, nor its log. */
#define CRED_VALUE "cordond-real-T0KEN-7777"
static char credfile[700];

/* cordond with this test's options (--approval-wait 2s from main, and
 * NOTIFY_SOCKET once test_sd_notify set one). */
static void start_daemon(void)
{
	unlink(C.gateway);
	C.notify_socket = notify_path[0] ? notify_path : NULL;
	rcd_start(&C);
}

/* Processes whose command line names our fake connector (by path). */
static int fake_processes(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d))) {
		char path[300], cmd[1024];
		ssize_t len;
		int fd;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, cmd, sizeof(cmd) - 1);
		close(fd);
		if (len > 0) {
			cmd[len] = 0;
			/* The connector's argv[0] is its path inside the sandbox. */
			if (!strcmp(cmd, "/opt/cordon-test/fake-connector"))
				n++;
		}
	}
	if (d)
		closedir(d);
	return n;
}

/* The whole HTTP response to GET path, in buf. */
static const char *http_get(const char *path, char *buf, size_t size)
{
	int status;
	char *r = rcd_http_get(&C, path, &status);

	snprintf(buf, size, "%s", r);
	free(r);
	return buf;
}

static void test_real_broker(void **state_)
{
	struct mcp_peer p;
	json_t *v, *tools, *t, *r;
	char *out = NULL, *body;
	size_t i;
	long id;
	int st;
	static char http[65536];

	(void)state_;
	start_daemon();

	/* Operator: install (takes the inventory by launching once, sandboxed),
	 * review every tool, check the default grant. */
	assert_int_equal(rcd_ctl(&C, &out, NULL, "connectors", "add", "fake", (char *)NULL), 0);
	free(out);
	v = rcd_ctl_json(&C, "inventory", "show", "fake");
	tools = rcd_first_array(v);
	assert_int_equal(json_array_size(tools), 5);
	json_array_foreach(tools, i, t)
	{
		const char *name = json_string_value(json_object_get(t, "tool"));
		const char *fp = json_string_value(json_object_get(t, "fingerprint"));

		assert_string_equal(json_string_value(json_object_get(t, "state")), "pending_review");
		assert_int_equal(
			rcd_ctl(&C, NULL, NULL, "inventory", "review", "fake", name, "--fingerprint", fp, (char *)NULL),
			0);
	}
	json_decref(v);

	/* Agent: only the granted, reviewed tools; a read call runs sandboxed. */
	assert_int_equal(mcp_peer_connect(&p, C.gateway), 0);
	r = mcp_peer_initialize(&p, "2025-11-25");
	assert_non_null(r);
	json_decref(r);
	r = mcp_peer_request(&p, "tools/list", NULL, 10000);
	tools = json_object_get(json_object_get(r, "result"), "tools");
	assert_int_equal(json_array_size(tools), 3 + 3); /* echo, append, roots + 3 broker tools */
	json_decref(r);
	r = mcp_peer_call(&p, "fake__echo", json_pack("{s:s}", "text", "sandboxed"), 15000);
	assert_non_null(r);
	assert_string_equal(result_text(r), "echo: sandboxed");
	json_decref(r);
	r = mcp_peer_call(&p, "fake__crash", json_object(), 5000);
	assert_null(r); /* not granted: a JSON-RPC error, no result */

	/* cordond itself: its private id (no --user given), no capabilities,
	 * no_new_privs, seccomp, and Landlock (reported in the detail). */
	{
		char path[64], line[256];
		FILE *f;
		int seen = 0;

		snprintf(path, sizeof(path), "/proc/%d/status", (int)C.pid);
		f = fopen(path, "re");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "Uid:", 4))
				seen += !!strstr(line, "1879048191\t1879048191\t1879048191\t1879048191");
			if (!strncmp(line, "CapEff:", 7) || !strncmp(line, "CapPrm:", 7) ||
			    !strncmp(line, "CapBnd:", 7))
				seen += !!strstr(line, "0000000000000000");
			if (!strncmp(line, "NoNewPrivs:", 11))
				seen += !!strstr(line, "1");
			if (!strncmp(line, "Seccomp:", 8))
				seen += !!strstr(line, "2");
		}
		fclose(f);
		assert_int_equal(seen, 6);
	}
	/* Nothing on the gateway reaches an operator operation: the method
	 * table has no such entry under any spelling an agent might try. */
	for (const char *const *m = (const char *const[]){ "approvals/approve", "approvals.approve", "approve",
							   "grants/add", "inventory/review", "revoke-all",
							   "cordon/approve", "operator/execute", NULL };
	     *m; m++) {
		r = mcp_peer_request(&p, *m, json_pack("{s:s}", "id", "x"), 5000);
		assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32601);
		json_decref(r);
	}
	/* A gateway process (any other uid) cannot open the database, nor
	 * connect to the operator socket. */
	{
		pid_t c = fork();
		int cst;

		if (c == 0) {
			char dbp[800];
			struct sockaddr_un sa = { .sun_family = AF_UNIX };
			int fd;

			snprintf(dbp, sizeof(dbp), "%s/cordon.db", C.state);
			if (setgroups(0, NULL) < 0 || setresgid(23456, 23456, 23456) < 0 ||
			    setresuid(23456, 23456, 23456) < 0)
				_exit(90);
			CHILD_CHECK_ERRNO(open(dbp, O_RDONLY | O_CLOEXEC), EACCES);
			fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", C.opsock);
			CHILD_CHECK_ERRNO(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), EACCES);
			_exit(0);
		}
		assert_int_equal(waitpid(c, &cst, 0), c);
		assert_true(WIFEXITED(cst) && WEXITSTATUS(cst) == 0);
	}
	/* Health: the instance's enforcement report is in the detail. */
	body = strstr(http_get("/health", http, sizeof(http)), "\r\n\r\n");
	assert_non_null(body);
	assert_true(strstr(body, "\"ok\"") || strstr(body, "\"degraded\""));
	/* The kernel part of health is the launcher helper's probe verdict
	 * (the control-verdict table): equal to this process's own probe of
	 * the same kernel, every control of the table listed in the detail,
	 * and on a kernel that lacks none /health is ok. */
	{
		struct cordon_probe_row rows[CORDON_PROBE_MAX_ROWS];
		enum cordon_kernel_verdict kv;
		struct cordon_caps caps;
		json_t *h, *d, *ctl;
		size_t n;
		int hs;

		assert_int_equal(cordon_probe(&caps), 0);
		n = cordon_probe_rows(&caps, rows, CORDON_PROBE_MAX_ROWS);
		kv = cordon_probe_verdict(rows, n);
		d = rcd_http_json(&C, "/health/detail", &hs);
		assert_int_equal(hs, 200);
		assert_string_equal(json_string_value(json_object_get(
					    json_object_get(json_object_get(d, "capabilities"), "verdict"), "status")),
				    cordon_kernel_verdict_to_string(kv));
		ctl = json_object_get(json_object_get(d, "capabilities"), "controls");
		assert_int_equal(json_array_size(ctl), n);
		for (size_t k = 0; k < n; k++)
			assert_string_equal(json_string_value(json_object_get(json_array_get(ctl, k), "control")),
					    rows[k].control);
		h = rcd_http_json(&C, "/health", &hs);
		printf("/health: %s (kernel verdict %s, %zu controls)\n",
		       json_string_value(json_object_get(h, "status")), cordon_kernel_verdict_to_string(kv), n);
		if (kv == CORDON_KERNEL_OK) {
			assert_null(json_object_get(h, "kernel"));
			assert_string_equal(json_string_value(json_object_get(h, "status")), "ok");
		} else
			assert_true(json_equal(json_object_get(h, "kernel"),
					       json_object_get(json_object_get(d, "capabilities"), "verdict")));
		json_decref(h);
		json_decref(d);
	}
	body = strstr(http_get("/health/detail", http, sizeof(http)), "\r\n\r\n");
	assert_non_null(body);
	assert_non_null(strstr(body, "\"report\""));
	assert_non_null(strstr(body, "\"landlock\": \"enforced\"") ?: strstr(body, "\"landlock\":\"enforced\""));
	assert_non_null(strstr(body, "\"seccomp\": \"enforced\"") ?: strstr(body, "\"seccomp\":\"enforced\""));
	/* The credential values the helper sent with the spawn were taken out
	 * of the report before it was stored. */
	assert_null(strstr(body, "scrub_values"));
	assert_null(strstr(body, CRED_VALUE));
	assert_non_null(strstr(http_get("/metrics", http, sizeof(http)), "cordon_calls_total{decision=\"allow\"} 1"));

	/* A write waits, then approval from cordonctl, then exactly once. */
	r = mcp_peer_call(&p, "fake__append", json_pack("{s:s}", "text", "first"), 15000);
	assert_true(json_is_true(json_object_get(r, "isError")));
	json_decref(r);
	assert_int_equal(rcd_out_lines(&C), 0);
	v = rcd_ctl_json(&C, "approvals", "list", NULL);
	assert_int_equal(json_array_size(rcd_first_array(v)), 1);
	{
		char code[16];

		snprintf(code, sizeof(code), "%s",
			 json_string_value(json_object_get(json_array_get(rcd_first_array(v), 0), "display_code")));
		assert_int_equal(rcd_ctl(&C, NULL, NULL, "approvals", "approve", code, (char *)NULL), 0);
	}
	json_decref(v);
	r = mcp_peer_call(&p, "fake__append", json_pack("{s:s}", "text", "first"), 15000);
	assert_string_equal(result_text(r), "appended");
	json_decref(r);
	assert_int_equal(rcd_out_lines(&C), 1);

	/* In flight when the broker is killed: outcome_unknown after restart. */
	r = mcp_peer_call(&p, "fake__append", json_pack("{s:s}", "text", "slow"), 15000);
	json_decref(r);
	v = rcd_ctl_json(&C, "approvals", "list", NULL);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "approvals", "approve",
				 json_string_value(json_object_get(json_array_get(rcd_first_array(v), 0), "id")),
				 (char *)NULL),
			 0);
	json_decref(v);
	id = mcp_peer_send_request(&p, "tools/call",
				   json_pack("{s:s, s:{s:s}}", "name", "fake__append", "arguments", "text", "slow"));
	assert_true(id > 0);
	for (int k = 0; k < 100 && rcd_out_lines(&C) < 2; k++)
		usleep(50 * 1000);
	assert_int_equal(rcd_out_lines(&C), 2);
	assert_true(fake_processes() >= 1);
	st = rcd_kill(&C, SIGKILL);
	assert_true(WIFSIGNALED(st));
	mcp_peer_disconnect(&p);
	/* The helper saw the broker go and killed every connector. */
	for (int k = 0; k < 100 && fake_processes() > 0; k++)
		usleep(50 * 1000);
	assert_int_equal(fake_processes(), 0);

	start_daemon();
	v = rcd_ctl_json(&C, "actions", "list", NULL);
	{
		int unknown = 0;

		json_array_foreach(rcd_first_array(v), i, t) unknown +=
			!strcmp(json_string_value(json_object_get(t, "state")), "outcome_unknown");
		assert_int_equal(unknown, 1);
	}
	json_decref(v);
	sleep(1);
	assert_int_equal(rcd_out_lines(&C), 2);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "audit", "verify", (char *)NULL), 0);
	printf("audit verify: %s", out);
	free(out);
	st = rcd_kill(&C, SIGTERM);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The official TypeScript SDK through `cordonctl mcp`, with a parallel
 * operator (tests/e2e/sdk-broker.mjs). */
static void test_sdk_through_cordonctl(void **state_)
{
	const char *node_dir = getenv("CORDON_E2E_NODE_DIR");
	char script[700], *out = NULL;
	json_t *v, *tools, *t;
	size_t i;
	int base, st, p[2];
	pid_t pid;

	(void)state_;
	if (!node_dir)
		cordon_test_skip("CORDON_E2E_NODE_DIR not set (npm fixture)");
	snprintf(script, sizeof(script), "%s/sdk-broker.mjs", node_dir);
	start_daemon();
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "connectors", "add", "sdk", (char *)NULL), 0);
	v = rcd_ctl_json(&C, "inventory", "show", "sdk");
	json_array_foreach(rcd_first_array(v), i, t) assert_int_equal(
		rcd_ctl(&C, NULL, NULL, "inventory", "review", "sdk", json_string_value(json_object_get(t, "tool")),
			"--fingerprint", json_string_value(json_object_get(t, "fingerprint")), (char *)NULL),
		0);
	json_decref(v);
	base = rcd_out_lines(&C);

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		execlp("node", "node", script, C.cordonctl, C.gateway, C.opsock, "sdk", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	{
		size_t len = 0, cap = 65536;

		out = malloc(cap);
		for (ssize_t r; (r = read(p[0], out + len, cap - len - 1)) > 0;)
			len += (size_t)r;
		out[len] = 0;
	}
	close(p[0]);
	waitpid(pid, &st, 0);
	printf("sdk: %s", out);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	v = json_loads(out, 0, NULL);
	free(out);
	assert_non_null(v);
	/* Only granted, reviewed tools (+ the broker's own): echo, append and
	 * roots of fake (installed by the previous test) and of sdk; never the
	 * ungranted crash/garbage. */
	tools = json_object_get(v, "tools");
	assert_int_equal(json_array_size(tools), 9);
	json_array_foreach(tools, i, t)
	{
		assert_null(strstr(json_string_value(t), "crash"));
		assert_null(strstr(json_string_value(t), "garbage"));
	}
	assert_true(json_is_true(json_object_get(json_object_get(v, "readOnly"), "sdk__echo")));
	assert_true(json_is_false(json_object_get(json_object_get(v, "readOnly"), "sdk__append")));
	assert_string_equal(json_string_value(json_object_get(v, "echo")), "echo: from the sdk");
	/* Waited, approved in parallel, ran once. */
	assert_string_equal(json_string_value(json_object_get(json_object_get(v, "write1"), "text")), "appended");
	assert_non_null(json_string_value(json_object_get(json_object_get(v, "write1"), "code")));
	/* A changed nested argument needs a new approval; it expired unused. */
	assert_true(json_is_true(json_object_get(json_object_get(v, "changed"), "isError")));
	assert_non_null(json_string_value(json_object_get(v, "changedCode")));
	assert_string_not_equal(json_string_value(json_object_get(v, "changedCode")),
				json_string_value(json_object_get(json_object_get(v, "write1"), "code")));
	assert_string_equal(json_string_value(json_object_get(v, "approveExpired")), "refused");
	/* Cancelled: aborted on the client; the approval stays pending for the
	 * identical call (issue 14: a client's request timeout is no
	 * decision). */
	assert_int_equal(json_integer_value(json_object_get(v, "beforeCancel")), 1);
	assert_string_equal(json_string_value(json_object_get(v, "cancel")), "aborted");
	assert_int_equal(json_integer_value(json_object_get(v, "afterCancel")), 1);
	json_decref(v);
	assert_int_equal(rcd_out_lines(&C), base + 1);
	st = rcd_kill(&C, SIGTERM);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* profiles/filesystem.yaml with three host paths a test must own: the
 * project root, its ceiling, and the npm prefix (the test-local install,
 * mounted as a read-exec root at /opt/cordon/mcp where the profile's
 * command expects it: a system entry would mount it at its host path, which
 * collides with the sandbox's private /tmp when the build tree lives under
 * /tmp). The root is seen at /project instead of /work (the source tree may
 * live under /work). */
static void write_filesystem_profile(const char *node_dir, const char *work)
{
	char src[700], dst[700], line[1024];
	const char *srcdir = cordon_test_env("CORDON_SOURCE_DIR", NULL);
	FILE *in, *out;

	assert_non_null(srcdir);
	snprintf(src, sizeof(src), "%s/profiles/filesystem.yaml", srcdir);
	snprintf(dst, sizeof(dst), "%s/filesystem.yaml", C.profiles);
	in = fopen(src, "re");
	out = fopen(dst, "we");
	assert_non_null(in);
	assert_non_null(out);
	while (fgets(line, sizeof(line), in)) {
		char *opt = strstr(line, "/opt/cordon/mcp");

		/* The system entry for the npm prefix becomes a root with `at`
		 * (below); the command keeps its /opt/cordon/mcp path. */
		if (opt && strstr(line, "{path: /opt/cordon/mcp,"))
			continue;
		if (strstr(line, "{path: /srv/cordon/projects/demo")) {
			fprintf(out, "      - {path: %s, access: read-write, at: /project, allow_uid0_owner: true}\n",
				work);
			fprintf(out, "      - {path: %s, access: read-exec, at: /opt/cordon/mcp}\n", node_dir);
		} else if (!strcmp(line, "    - /work\n"))
			fputs("    - /project\n", out);
		else if (!strcmp(line, "  workdir: /work\n"))
			fputs("  workdir: /project\n", out);
		else if (strstr(line, "ceiling: [/srv/cordon/projects]"))
			fprintf(out, "    ceiling: [%s]\n", C.dir);
		else
			fputs(line, out);
	}
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

static json_t *fs_call(struct mcp_peer *p, const char *tool, const char *path)
{
	json_t *m = mcp_peer_request(p, "tools/call",
				     json_pack("{s:s, s:{s:s}}", "name", tool, "arguments", "path", path), 20000);
	json_t *r = json_incref(json_object_get(m, "result"));

	if (!r) {
		char *t = m ? json_dumps(m, 0) : NULL;

		fail_msg("%s(%s): %s", tool, path, t ? t : "no response");
	}
	json_decref(m);
	return r;
}

static bool result_contains(const json_t *r, const char *needle)
{
	char *s = json_dumps(r, 0);
	bool yes = s && strstr(s, needle);

	free(s);
	return yes;
}

/* @modelcontextprotocol/server-filesystem from npm, sandboxed, through the
 * broker: listing inside the root works; a symlink inside the root pointing
 * outside, a sibling directory sharing the root's prefix and a client that
 * declares /etc as a root all fail to read outside. */
static void test_filesystem_server(void **state_)
{
	const char *node_dir = getenv("CORDON_E2E_NODE_DIR");
	char work[700], evil[700], path[800];
	struct mcp_peer p;
	json_t *v, *r;
	size_t i;
	json_t *t;
	FILE *f;
	int st;

	(void)state_;
	if (!node_dir)
		cordon_test_skip("CORDON_E2E_NODE_DIR not set (npm fixture)");
	snprintf(work, sizeof(work), "%s/work", C.dir);
	snprintf(evil, sizeof(evil), "%s/work-evil", C.dir);
	assert_int_equal(mkdir(work, 0755), 0);
	assert_int_equal(mkdir(evil, 0755), 0);
	snprintf(path, sizeof(path), "%s/hello.txt", work);
	f = fopen(path, "we");
	fputs("hello from the root\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/secret.txt", evil);
	f = fopen(path, "we");
	fputs("SIBLING-SECRET-7731\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/escape", work);
	assert_int_equal(symlink(evil, path), 0);
	snprintf(path, sizeof(path), "%s/escape-file", work);
	{
		char target[800];

		snprintf(target, sizeof(target), "%s/secret.txt", evil);
		assert_int_equal(symlink(target, path), 0);
	}
	write_filesystem_profile(node_dir, work);

	start_daemon();
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "connectors", "add", "filesystem", (char *)NULL), 0);
	v = rcd_ctl_json(&C, "inventory", "show", "filesystem");
	json_array_foreach(rcd_first_array(v), i, t)
		assert_int_equal(rcd_ctl(&C, NULL, NULL, "inventory", "review", "filesystem",
					 json_string_value(json_object_get(t, "tool")), "--fingerprint",
					 json_string_value(json_object_get(t, "fingerprint")), (char *)NULL),
				 0);
	json_decref(v);

	/* A client that declares roots (and would answer /etc if asked): the
	 * broker answers the server's roots/list itself. */
	assert_int_equal(mcp_peer_connect(&p, C.gateway), 0);
	r = mcp_peer_request(&p, "initialize",
			     json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s}}", "protocolVersion", "2025-06-18",
				       "capabilities", "roots", "listChanged", 1, "clientInfo", "name", "evil",
				       "version", "1"),
			     10000);
	assert_non_null(r);
	json_decref(r);
	{
		static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

		assert_int_equal(mcp_peer_send_raw(&p, note, strlen(note)), 0);
	}

	r = fs_call(&p, "filesystem__list_directory", "/project");
	assert_true(result_contains(r, "hello.txt"));
	json_decref(r);
	r = fs_call(&p, "filesystem__read_text_file", "/project/hello.txt");
	assert_true(result_contains(r, "hello from the root"));
	json_decref(r);
	/* Symlinks planted inside the root that point outside it. */
	r = fs_call(&p, "filesystem__read_text_file", "/project/escape-file");
	assert_false(result_contains(r, "SIBLING-SECRET-7731"));
	json_decref(r);
	r = fs_call(&p, "filesystem__list_directory", "/project/escape");
	assert_false(result_contains(r, "secret.txt"));
	json_decref(r);
	/* The sibling with the root's prefix, by its host path and by a
	 * sandbox path that only a prefix check would accept. */
	snprintf(path, sizeof(path), "%s/secret.txt", evil);
	r = fs_call(&p, "filesystem__read_text_file", path);
	assert_false(result_contains(r, "SIBLING-SECRET-7731"));
	json_decref(r);
	r = fs_call(&p, "filesystem__read_text_file", "/project-evil/secret.txt");
	assert_false(result_contains(r, "SIBLING-SECRET-7731"));
	json_decref(r);
	/* /etc, which the client would have offered as a root. */
	r = fs_call(&p, "filesystem__read_text_file", "/etc/passwd");
	assert_false(result_contains(r, "root:x:0:0"));
	json_decref(r);
	r = fs_call(&p, "filesystem__list_allowed_directories", "/");
	assert_false(result_contains(r, "/etc"));
	json_decref(r);
	/* Writes are not granted by default: not even listed/callable. */
	r = mcp_peer_call(&p, "filesystem__write_file", json_pack("{s:s, s:s}", "path", "/project/x", "content", "x"),
			  5000);
	assert_null(r);
	mcp_peer_disconnect(&p);
	st = rcd_kill(&C, SIGTERM);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* profiles/everything.yaml with the npm prefix replaced by the test-local
 * install, mounted as a read-exec root at /opt/cordon/mcp where the
 * profile's command expects it (a system entry at its host path would
 * collide with the sandbox's private /tmp when the build tree lives there). */
static void write_everything_profile(const char *node_dir)
{
	char src[700], dst[700], line[1024];
	const char *srcdir = cordon_test_env("CORDON_SOURCE_DIR", NULL);
	FILE *in, *out;

	assert_non_null(srcdir);
	snprintf(src, sizeof(src), "%s/profiles/everything.yaml", srcdir);
	snprintf(dst, sizeof(dst), "%s/everything.yaml", C.profiles);
	in = fopen(src, "re");
	out = fopen(dst, "we");
	assert_non_null(in);
	assert_non_null(out);
	while (fgets(line, sizeof(line), in)) {
		if (strstr(line, "{path: /opt/cordon/mcp,"))
			continue;
		if (!strcmp(line, "    tmp: 32M\n")) {
			fputs("    roots:\n", out);
			fprintf(out, "      - {path: %s, access: read-exec, at: /opt/cordon/mcp}\n", node_dir);
		}
		fputs(line, out);
	}
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/* @modelcontextprotocol/server-everything under profiles/everything.yaml:
 * resources, prompts, progress and cancellation pass through (granted by
 * the profile); ungranted tools are neither listed nor callable. */
static void test_everything_server(void **state_)
{
	const char *node_dir = getenv("CORDON_E2E_NODE_DIR");
	struct mcp_peer p;
	json_t *v, *r, *t, *list;
	size_t i;
	long id;
	int progress = 0, st;

	(void)state_;
	if (!node_dir)
		cordon_test_skip("CORDON_E2E_NODE_DIR not set (npm fixture)");
	write_everything_profile(node_dir);
	start_daemon();
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "connectors", "add", "everything", (char *)NULL), 0);
	v = rcd_ctl_json(&C, "inventory", "show", "everything");
	json_array_foreach(rcd_first_array(v), i, t)
		assert_int_equal(rcd_ctl(&C, NULL, NULL, "inventory", "review", "everything",
					 json_string_value(json_object_get(t, "tool")), "--fingerprint",
					 json_string_value(json_object_get(t, "fingerprint")), (char *)NULL),
				 0);
	json_decref(v);

	assert_int_equal(mcp_peer_connect(&p, C.gateway), 0);
	r = mcp_peer_initialize(&p, "2025-11-25");
	assert_non_null(json_object_get(json_object_get(r, "capabilities"), "resources"));
	assert_non_null(json_object_get(json_object_get(r, "capabilities"), "prompts"));
	json_decref(r);

	/* Tools: granted ones only (get-env is tier high, never granted). */
	r = mcp_peer_request(&p, "tools/list", NULL, 20000);
	list = json_object_get(json_object_get(r, "result"), "tools");
	{
		bool has_echo = false, has_env = false;

		json_array_foreach(list, i, t)
		{
			has_echo |= !strcmp(json_string_value(json_object_get(t, "name")), "everything__echo");
			has_env |= !strcmp(json_string_value(json_object_get(t, "name")), "everything__get-env");
		}
		assert_true(has_echo);
		assert_false(has_env);
	}
	json_decref(r);
	r = mcp_peer_request(&p, "tools/call", json_pack("{s:s, s:{}}", "name", "everything__get-env", "arguments"),
			     10000);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32602);
	json_decref(r);

	/* Resources: list, then read one that listing produced. */
	r = mcp_peer_request(&p, "resources/list", NULL, 20000);
	list = json_object_get(json_object_get(r, "result"), "resources");
	assert_true(json_array_size(list) > 0);
	{
		const char *uri = json_string_value(json_object_get(json_array_get(list, 0), "uri"));
		json_t *rr = mcp_peer_request(&p, "resources/read", json_pack("{s:s}", "uri", uri), 20000);

		assert_true(json_array_size(json_object_get(json_object_get(rr, "result"), "contents")) > 0);
		json_decref(rr);
	}
	json_decref(r);

	/* Prompts: namespaced names, get passes through. */
	r = mcp_peer_request(&p, "prompts/list", NULL, 20000);
	{
		bool found = false;

		json_array_foreach(json_object_get(json_object_get(r, "result"), "prompts"), i, t) found |=
			!strcmp(json_string_value(json_object_get(t, "name")), "everything__simple-prompt");
		assert_true(found);
	}
	json_decref(r);
	r = mcp_peer_request(&p, "prompts/get", json_pack("{s:s}", "name", "everything__simple-prompt"), 20000);
	assert_true(json_array_size(json_object_get(json_object_get(r, "result"), "messages")) > 0);
	json_decref(r);

	/* Progress: relayed with the client's own token. */
	id = mcp_peer_send_request(&p, "tools/call",
				   json_pack("{s:s, s:{s:i, s:i}, s:{s:s}}", "name",
					     "everything__trigger-long-running-operation", "arguments", "duration", 1,
					     "steps", 4, "_meta", "progressToken", "tok-1"));
	for (;;) {
		json_t *m = mcp_peer_read(&p, 20000);

		assert_non_null(m);
		if (json_is_integer(json_object_get(m, "id")) && json_integer_value(json_object_get(m, "id")) == id) {
			assert_non_null(json_object_get(m, "result"));
			json_decref(m);
			break;
		}
		if (!strcmp(json_string_value(json_object_get(m, "method")) ?: "", "notifications/progress")) {
			assert_string_equal(
				json_string_value(json_object_get(json_object_get(m, "params"), "progressToken")),
				"tok-1");
			progress++;
		}
		json_decref(m);
	}
	assert_int_equal(progress, 4);

	/* Cancellation: no response for the cancelled call; the session goes on. */
	id = mcp_peer_send_request(&p, "tools/call",
				   json_pack("{s:s, s:{s:i, s:i}}", "name",
					     "everything__trigger-long-running-operation", "arguments", "duration", 5,
					     "steps", 5));
	usleep(500 * 1000);
	{
		char note[200];

		snprintf(
			note, sizeof(note),
			"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":%ld}}\n",
			id);
		assert_int_equal(mcp_peer_send_raw(&p, note, strlen(note)), 0);
	}
	r = mcp_peer_wait(&p, id, 7000);
	assert_null(r);
	r = mcp_peer_call(&p, "everything__echo", json_pack("{s:s}", "message", "after cancel"), 20000);
	assert_non_null(r);
	assert_non_null(strstr(result_text(r), "after cancel"));
	json_decref(r);
	mcp_peer_disconnect(&p);
	st = rcd_kill(&C, SIGTERM);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Type=notify: READY=1 once serving, STOPPING=1 on SIGTERM, on a datagram
 * socket named by $NOTIFY_SOCKET (sd_notify by hand). */
static void test_sd_notify(void **state_)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 15 };
	char buf[256];
	ssize_t n;
	int fd, st;

	(void)state_;
	snprintf(notify_path, sizeof(notify_path), "%s/notify.sock", C.dir);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", notify_path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	/* cordond runs as nobody by the time it notifies. */
	assert_int_equal(chmod(notify_path, 0666), 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	start_daemon();
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = 0;
	assert_non_null(strstr(buf, "READY=1"));
	st = rcd_kill(&C, SIGTERM);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = 0;
	assert_non_null(strstr(buf, "STOPPING=1"));
	close(fd);
	unlink(notify_path);
	notify_path[0] = 0;
}

/* The launcher helper is the child of cordond named cordon-launch. */
static pid_t helper_pid(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	while (d && (de = readdir(d))) {
		char path[300], buf[512];
		FILE *f;
		int ppid = 0;
		char comm[64] = "";

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%*d (%63[^)]) %*c %d", comm, &ppid) == 2 &&
		    ppid == C.pid && !strcmp(comm, "cordon-launch"))
			found = (pid_t)atoi(de->d_name);
		fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

/* kill -9 of the helper: no connector survives, health says failing. */
static void test_helper_killed(void **state_)
{
	struct mcp_peer p;
	json_t *r;
	pid_t hp;
	static char http[65536];
	int st;

	(void)state_;
	start_daemon();
	assert_int_equal(mcp_peer_connect(&p, C.gateway), 0);
	json_decref(mcp_peer_initialize(&p, "2025-11-25"));
	r = mcp_peer_call(&p, "fake__echo", json_pack("{s:s}", "text", "x"), 15000);
	assert_string_equal(result_text(r), "echo: x");
	json_decref(r);
	assert_true(fake_processes() >= 1);
	assert_non_null(strstr(http_get("/health", http, sizeof(http)), "HTTP/1.1 200"));
	hp = helper_pid();
	assert_true(hp > 0);
	assert_int_equal(kill(hp, SIGKILL), 0);
	for (int k = 0; k < 100 && fake_processes() > 0; k++)
		usleep(50 * 1000);
	assert_int_equal(fake_processes(), 0);
	/* cordond notices the helper's socket closing on its next loop turn. */
	assert_true(wait_until(strstr(http_get("/health", http, sizeof(http)), "failing") != NULL, 10000));
	/* Calls now fail cleanly instead of hanging. */
	r = mcp_peer_call(&p, "fake__echo", json_pack("{s:s}", "text", "y"), 15000);
	assert_non_null(r);
	assert_true(json_is_true(json_object_get(r, "isError")));
	json_decref(r);
	mcp_peer_disconnect(&p);
	st = rcd_kill(&C, SIGTERM);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* An egress denial inside a connector's sandbox reaches cordond through the
 * launcher helper: it is audited ("network.denied", no destination in the
 * record), logged, and counted in /metrics. The connector's profile allows
 * only 127.0.0.2:1; it tries 127.0.0.3:1 at start (loopback only): the port passes
 * Landlock's TCP rule, so the eBPF policy is what refuses the address. */
/* The sum of the counts of the network.denied records of a connector in
 * `audit tail` output (one JCS record per line). */
static long denials_audited(const char *out, const char *connector)
{
	char want[128];
	long sum = 0;

	snprintf(want, sizeof(want), "\"connector\":\"%s\"", connector);
	for (const char *l = out; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		char *line = strndup(l, len);
		const char *c;

		assert_non_null(line);
		if (strstr(line, "\"event\":\"network.denied\"") && strstr(line, want)) {
			c = strstr(line, "\"count\":");
			assert_non_null(c);
			sum += strtol(c + 8, NULL, 10);
		}
		free(line);
		l = nl ? nl + 1 : l + len;
	}
	return sum;
}

static void test_network_denial_audited(void **state_)
{
	char path[700], buf[65536], *out = NULL;
	bool audited = false;
	FILE *f;
	int st;

	(void)state_;
	snprintf(path, sizeof(path), "%s/netdeny.yaml", C.profiles);
	f = fopen(path, "we");
	assert_non_null(f);
	fprintf(f,
		"version: 1\n"
		"connector:\n"
		"  description: fake connector that tries a denied destination\n"
		"  command: [/opt/cordon-test/fake-connector, /data/out.txt, --connect, '127.0.0.3:1', '5']\n"
		"  instances: shared\n"
		"sandbox:\n"
		"  user: dynamic\n"
		"  filesystem:\n"
		"    system:\n"
		"      - {path: /usr, access: read-exec}\n"
		"      - {path: /lib, access: read-exec}\n"
		"      - {path: /lib64, access: read-exec}\n"
		"    roots:\n"
		"      - {path: %s, access: read-exec, at: /opt/cordon-test}\n"
		"      - {path: %s, access: read-write, at: /data, allow_uid0_owner: true}\n"
		"    tmp: 1M\n"
		"  network:\n"
		"    mode: allowlist\n"
		"    allow:\n"
		"      - {cidr: 127.0.0.2/32, ports: [1]}\n"
		"  limits: {memory: 64M, pids: 16}\n"
		"tools:\n"
		"  default_risk: high\n"
		"  risk: {echo: read}\n"
		"  grant: [echo]\n",
		C.helpers, C.data);
	assert_int_equal(fclose(f), 0);
	start_daemon();
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "connectors", "add", "netdeny", (char *)NULL), 0);
	/* Five denials in a burst, then the install-only instance is stopped
	 * once its inventory is taken: the rate limit holds four of them back
	 * and some may reach the broker after it stopped the instance. Every
	 * one is in the audit log once the helper reports the exit. */
	for (int i = 0; i < 200 && !audited; i++) {
		free(out);
		out = NULL;
		assert_int_equal(rcd_ctl(&C, &out, NULL, "audit", "tail", "--count", "50", (char *)NULL), 0);
		audited = denials_audited(out, "netdeny") >= 5;
		if (!audited)
			usleep(50000);
	}
	if (!audited)
		fail_msg("not every denial is audited; tail: %s", out ? out : "(none)");
	assert_int_equal(denials_audited(out, "netdeny"), 5);
	/* The record names the hook, never the destination. */
	assert_non_null(strstr(out, "\"state\":\"connect4\""));
	assert_null(strstr(out, "127.0.0.3"));
	free(out);
	assert_non_null(http_get("/metrics", buf, sizeof(buf)));
	assert_non_null(strstr(buf, "cordon_network_denials_total 5\n"));
	st = rcd_kill(&C, SIGTERM);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_broker),	      cmocka_unit_test(test_sdk_through_cordonctl),
		cmocka_unit_test(test_filesystem_server),     cmocka_unit_test(test_everything_server),
		cmocka_unit_test(test_helper_killed),	      cmocka_unit_test(test_sd_notify),
		cmocka_unit_test(test_network_denial_audited)
	};
	const char *b = cordon_test_env("CORDON_BUILD_DIR", NULL);
	int r;

	if (geteuid() != 0)
		cordon_test_skip("needs root (cordond drops to nobody; the launcher builds sandboxes)");
	if (!b)
		cordon_test_skip("CORDON_BUILD_DIR not set");
	/* The profiles directory must be root-owned and not group/world
	 * writable (the helper refuses anything else); data is the root. */
	rcd_setup(&C, "cordond-real");
	C.approval_wait = "2s";
	snprintf(credfile, sizeof(credfile), "%s/token", C.dir);
	{
		FILE *f = fopen(credfile, "we");

		if (!f || fputs(CRED_VALUE "\n", f) < 0 || fclose(f) != 0)
			return 1;
		chmod(credfile, 0600);
	}
	rcd_fake_profile(&C, "fake", &(struct rcd_fake_options){ .ttl = "120s", .credential_file = credfile });
	rcd_fake_profile(&C, "sdk", &(struct rcd_fake_options){ .ttl = "3s", .credential_file = credfile });
	r = cmocka_run_group_tests(tests, NULL, NULL);
	if (C.pid > 0)
		rcd_kill(&C, SIGKILL);
	rcd_teardown(&C, r != 0);
	return r;
}
