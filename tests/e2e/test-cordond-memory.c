/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* @modelcontextprotocol/server-memory from npm, run by the real cordond
 * (dropping to nobody) through the real launcher helper, sandboxed under a
 * test-local copy of profiles/memory.yaml; every operator step goes through
 * cordonctl and the agent is a raw MCP client on the gateway socket.
 *
 * Two variants of the catalog profile:
 *  - as shipped (`resources: none`, `prompts: none`): only the granted and
 *    reviewed read tools are listed, a write tool appears once granted and
 *    runs exactly once per approval, progress is sent while it waits and a
 *    client cancel leaves the approval pending; resources and prompts are
 *    neither advertised nor answered.
 *  - `resources: read`, `prompts: read`: the server's one resource
 *    (memory://knowledge-graph) passes through and reads the graph the
 *    tools wrote; the server has no prompts, so prompts/list is empty.
 *
 * cordond, cordonctl and the HTTP socket through tests/e2e/cordond-runner.h. */
#include <dirent.h>
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
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "cordond-runner.h"
#include "daemon-harness.h"
#include "test-support.h"

#define MEMORY_JS "@modelcontextprotocol/server-memory/dist/index.js"

static struct rcd C;
static const char *node_dir;
static char memfile[700];

/* profiles/memory.yaml with the paths of this test: the npm prefix (the
 * test-local install) becomes a read-exec root seen at /opt/cordon/mcp,
 * where the profile's command expects it (a system entry would mount it at
 * its host path, which collides with the sandbox's private /tmp when the
 * build tree lives under /tmp), and the data folder is a read-write root
 * under the temp dir, still seen at /data (MEMORY_FILE_PATH is unchanged).
 * resources/prompts take the variant's value. */
static void write_memory_profile(const char *resources, const char *prompts)
{
	char src[700], dst[700], line[1024];
	const char *srcdir = cordon_test_env("CORDON_SOURCE_DIR", NULL);
	int replaced = 0;
	FILE *in, *out;

	assert_non_null(srcdir);
	snprintf(src, sizeof(src), "%s/profiles/memory.yaml", srcdir);
	snprintf(dst, sizeof(dst), "%s/memory.yaml", C.profiles);
	in = fopen(src, "re");
	out = fopen(dst, "we");
	assert_non_null(in);
	assert_non_null(out);
	while (fgets(line, sizeof(line), in)) {
		if (strstr(line, "{path: /opt/cordon/mcp,")) {
			replaced++;
			continue;
		}
		if (strstr(line, "{path: /var/lib/cordon/memory,")) {
			fprintf(out, "      - {path: %s, access: read-write, at: /data, allow_uid0_owner: true}\n",
				C.data);
			fprintf(out, "      - {path: %s, access: read-exec, at: /opt/cordon/mcp}\n", node_dir);
			replaced++;
		} else if (!strcmp(line, "resources: none\n")) {
			fprintf(out, "resources: %s\n", resources);
			replaced++;
		} else if (!strcmp(line, "prompts: none\n")) {
			fprintf(out, "prompts: %s\n", prompts);
			replaced++;
		} else
			fputs(line, out);
	}
	fclose(in);
	assert_int_equal(fclose(out), 0);
	/* The catalog profile changed shape: this copy would test something else. */
	assert_int_equal(replaced, 4);
}

/* A fresh state directory every time: each variant installs `memory` anew.
 * 3 s of waiting (main sets --approval-wait): long enough for progress
 * ticks (one a second), short enough to keep the test quick. */
static void start_daemon(void)
{
	if (C.pid > 0)
		rcd_kill(&C, SIGKILL);
	cordon_test_rm_rf(C.state);
	cordon_test_rm_rf(C.data);
	assert_int_equal(mkdir(C.data, 0755), 0);
	rcd_start(&C);
}

/* Install the connector (cordond takes the inventory by launching it once,
 * sandboxed) and review every tool it advertised. */
static void add_and_review(void)
{
	static const char *const expected[] = { "add_observations", "create_entities",	   "create_relations",
						"delete_entities",  "delete_observations", "delete_relations",
						"open_nodes",	    "read_graph",	   "search_nodes" };
	bool seen[ELEMENTSOF(expected)] = {};
	json_t *v, *t;
	size_t i;

	assert_int_equal(rcd_ctl(&C, NULL, NULL, "connectors", "add", "memory", (char *)NULL), 0);
	v = rcd_ctl_json(&C, "inventory", "show", "memory");
	assert_int_equal(json_array_size(rcd_first_array(v)), ELEMENTSOF(expected));
	json_array_foreach(rcd_first_array(v), i, t)
	{
		const char *name = json_string_value(json_object_get(t, "tool"));
		size_t k;

		for (k = 0; k < ELEMENTSOF(expected) && strcmp(expected[k], name); k++)
			;
		assert_true(k < ELEMENTSOF(expected));
		seen[k] = true;
		assert_string_equal(json_string_value(json_object_get(t, "state")), "pending_review");
		assert_int_equal(rcd_ctl(&C, NULL, NULL, "inventory", "review", "memory", name, "--fingerprint",
					 json_string_value(json_object_get(t, "fingerprint")), (char *)NULL),
				 0);
	}
	for (i = 0; i < ELEMENTSOF(expected); i++)
		assert_true(seen[i]);
	json_decref(v);
}

/* tools/list must hold exactly `want` (connector tools, with cordon's
 * readOnlyHint) plus the three broker tools. */
static void assert_tools(struct mcp_peer *p, const char *const *want, const bool *read_only, size_t n)
{
	static const char *const broker[] = { "cordon__request_root", "cordon__approval_status",
					      "cordon__release_root" };
	json_t *r = mcp_peer_request(p, "tools/list", NULL, 20000);
	json_t *tools = json_object_get(json_object_get(r, "result"), "tools"), *t;
	size_t i, found = 0;

	assert_int_equal(json_array_size(tools), n + ELEMENTSOF(broker));
	json_array_foreach(tools, i, t)
	{
		const char *name = json_string_value(json_object_get(t, "name"));
		json_t *ann = json_object_get(t, "annotations");

		assert_non_null(name);
		for (size_t k = 0; k < n; k++)
			if (!strcmp(name, want[k])) {
				found++;
				assert_true(json_is_boolean(json_object_get(ann, "readOnlyHint")));
				assert_int_equal(json_is_true(json_object_get(ann, "readOnlyHint")), read_only[k]);
				assert_false(json_is_true(json_object_get(ann, "destructiveHint")));
			}
		for (size_t k = 0; k < ELEMENTSOF(broker); k++)
			found += !strcmp(name, broker[k]);
	}
	assert_int_equal(found, n + ELEMENTSOF(broker));
	json_decref(r);
}

static long error_code(json_t *r)
{
	long code = json_integer_value(json_object_get(json_object_get(r, "error"), "code"));

	assert_null(json_object_get(r, "result"));
	json_decref(r);
	return code;
}

/* Entities and relations in the graph file, counted on the host side. */
static void graph_counts(int *ret_entities, int *ret_relations)
{
	char line[4096];
	FILE *f = fopen(memfile, "re");
	int e = 0, rel = 0;

	while (f && fgets(line, sizeof(line), f)) {
		e += !!strstr(line, "\"type\":\"entity\"");
		rel += !!strstr(line, "\"type\":\"relation\"");
	}
	if (f)
		fclose(f);
	*ret_entities = e;
	*ret_relations = rel;
}

static json_t *read_graph(struct mcp_peer *p)
{
	json_t *r = mcp_peer_call(p, "memory__read_graph", json_object(), 20000);

	assert_non_null(r);
	assert_false(json_is_true(json_object_get(r, "isError")));
	return r;
}

/* The one pending approval (asserts there is exactly one); its display code. */
static void pending_code(char *code, size_t size, const char *tool)
{
	json_t *v = rcd_ctl_json(&C, "approvals", "list", NULL), *a;

	assert_int_equal(json_array_size(rcd_first_array(v)), 1);
	a = json_array_get(rcd_first_array(v), 0);
	assert_string_equal(json_string_value(json_object_get(a, "tool")), tool);
	assert_string_equal(json_string_value(json_object_get(a, "state")), "requested");
	snprintf(code, size, "%s", json_string_value(json_object_get(a, "display_code")));
	json_decref(v);
}

static int approvals_listed(void)
{
	json_t *v = rcd_ctl_json(&C, "approvals", "list", NULL);
	int n = (int)json_array_size(rcd_first_array(v));

	json_decref(v);
	return n;
}

static json_t *ada_args(void)
{
	return json_pack("{s:[{s:s, s:s, s:[s]}]}", "entities", "name", "Ada", "entityType", "person", "observations",
			 "wrote the first program");
}

/* Whether pid descends from ancestor (by the parent chain in /proc). */
static bool descends_from(pid_t pid, pid_t ancestor)
{
	for (int depth = 0; depth < 32 && pid > 1; depth++) {
		char path[64], buf[512], *rp;
		ssize_t len;
		int fd, ppid;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return false;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			return false;
		buf[len] = 0;
		/* "pid (comm) state ppid ...": comm may hold anything but ends
		 * at the last ')'. */
		rp = strrchr(buf, ')');
		if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1)
			return false;
		if (ppid == ancestor)
			return true;
		pid = ppid;
	}
	return false;
}

/* Processes running server-memory's entry point (by its sandbox path)
 * that this test's cordond started: other tests running at the same time
 * may run the same server. */
static int memory_processes(void)
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
		if (len <= 0)
			continue;
		cmd[len] = 0;
		/* argv is NUL-separated: argv[1] follows the first NUL. */
		if (!strcmp(cmd, "/usr/bin/node") && (size_t)len > strlen(cmd) + 1 &&
		    !strcmp(cmd + strlen(cmd) + 1, "/opt/cordon/mcp/node_modules/" MEMORY_JS) &&
		    descends_from((pid_t)atoi(de->d_name), C.pid))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* Waits up to 5 s for the count to become want; returns the last count
 * (connector processes end asynchronously, after their pipes close). */
static int settle_memory_processes(int want)
{
	int n = memory_processes();

	for (int i = 0; i < 100 && n != want; i++) {
		usleep(50 * 1000);
		n = memory_processes();
	}
	return n;
}

static void stop_and_check(struct mcp_peer *p)
{
	int st;

	mcp_peer_disconnect(p);
	st = rcd_kill(&C, SIGTERM);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* The helper killed the connector with the broker. */
	assert_int_equal(settle_memory_processes(0), 0);
}

/* The catalog profile as shipped: grants, review, approvals, progress and
 * cancellation; resources and prompts refused. */
static void test_memory_profile(void **state_)
{
	static const char *const reads[] = { "memory__read_graph", "memory__search_nodes", "memory__open_nodes" };
	static const bool reads_ro[] = { true, true, true };
	static const char *const with_write[] = { "memory__read_graph", "memory__search_nodes", "memory__open_nodes",
						  "memory__create_entities" };
	static const bool with_write_ro[] = { true, true, true, false };
	struct mcp_peer p;
	json_t *r, *e;
	char code[16];
	int progress = 0, ents, rels;
	long id;

	(void)state_;
	write_memory_profile("none", "none");
	start_daemon();
	add_and_review();
	assert_int_equal(settle_memory_processes(0), 0); /* the inventory run has ended */

	assert_int_equal(mcp_peer_connect(&p, C.gateway), 0);
	r = mcp_peer_initialize(&p, "2025-11-25");
	assert_non_null(r);
	/* Only tools: nothing to pass resources or prompts through. */
	assert_non_null(json_object_get(json_object_get(r, "capabilities"), "tools"));
	assert_null(json_object_get(json_object_get(r, "capabilities"), "resources"));
	assert_null(json_object_get(json_object_get(r, "capabilities"), "prompts"));
	assert_null(json_object_get(json_object_get(r, "capabilities"), "completions"));
	json_decref(r);

	/* Exactly the granted, reviewed read tools, read-only by cordon's tier. */
	assert_tools(&p, reads, reads_ro, ELEMENTSOF(reads));

	/* A read call runs in the sandbox: the graph starts empty. */
	r = read_graph(&p);
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "structuredContent"), "entities")), 0);
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "structuredContent"), "relations")), 0);
	json_decref(r);
	assert_int_equal(settle_memory_processes(1), 1); /* instances: shared */

	/* Not granted: not listed, and a call is JSON-RPC -32602 (unknown tool). */
	assert_int_equal(
		error_code(mcp_peer_request(
			&p, "tools/call",
			json_pack("{s:s, s:o}", "name", "memory__create_entities", "arguments", ada_args()), 10000)),
		-32602);
	assert_int_equal(error_code(mcp_peer_request(&p, "tools/call",
						     json_pack("{s:s, s:{s:[s]}}", "name", "memory__delete_entities",
							       "arguments", "entityNames", "Ada"),
						     10000)),
			 -32602);
	assert_int_equal(approvals_listed(), 0);

	/* Resources and prompts: not offered, so the methods do not exist. */
	assert_int_equal(error_code(mcp_peer_request(&p, "resources/list", NULL, 10000)), -32601);
	assert_int_equal(error_code(mcp_peer_request(&p, "resources/templates/list", NULL, 10000)), -32601);
	assert_int_equal(error_code(mcp_peer_request(&p, "resources/read",
						     json_pack("{s:s}", "uri", "memory://knowledge-graph"), 10000)),
			 -32601);
	assert_int_equal(error_code(mcp_peer_request(&p, "prompts/list", NULL, 10000)), -32601);
	assert_int_equal(
		error_code(mcp_peer_request(&p, "prompts/get", json_pack("{s:s}", "name", "memory__x"), 10000)),
		-32601);

	/* Grant the write tool: listed now, not read-only. */
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "grants", "add", "memory", "create_entities", (char *)NULL), 0);
	assert_tools(&p, with_write, with_write_ro, ELEMENTSOF(with_write));

	/* It waits for an approval (progress on the client's token every
	 * second), then returns isError naming the code; nothing was written. */
	id = mcp_peer_send_request(&p, "tools/call",
				   json_pack("{s:s, s:o, s:{s:s}}", "name", "memory__create_entities", "arguments",
					     ada_args(), "_meta", "progressToken", "mem-1"));
	for (;;) {
		json_t *m = mcp_peer_read(&p, 20000);

		assert_non_null(m);
		if (json_is_integer(json_object_get(m, "id")) && json_integer_value(json_object_get(m, "id")) == id) {
			json_t *res = json_object_get(m, "result");

			assert_true(json_is_true(json_object_get(res, "isError")));
			pending_code(code, sizeof(code), "create_entities");
			assert_non_null(strstr(result_text(res), code));
			json_decref(m);
			break;
		}
		assert_string_equal(json_string_value(json_object_get(m, "method")), "notifications/progress");
		assert_string_equal(json_string_value(json_object_get(json_object_get(m, "params"), "progressToken")),
				    "mem-1");
		assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "params"), "progress")),
				 ++progress);
		json_decref(m);
	}
	/* A 3 s wait ticks at 0, 1 and 2 s (and 3 s may race the deadline); a
	 * loaded machine may run a tick late, which pushes the next one back. */
	assert_true(progress >= 2 && progress <= 4);
	graph_counts(&ents, &rels);
	assert_int_equal(ents, 0);

	/* Approved out of band, the identical call runs exactly once. */
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "approvals", "approve", code, (char *)NULL), 0);
	r = mcp_peer_call(&p, "memory__create_entities", ada_args(), 20000);
	assert_non_null(r);
	assert_false(json_is_true(json_object_get(r, "isError")));
	e = json_object_get(json_object_get(r, "structuredContent"), "entities");
	assert_int_equal(json_array_size(e), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 0), "name")), "Ada");
	json_decref(r);
	graph_counts(&ents, &rels);
	assert_int_equal(ents, 1);
	assert_int_equal(rels, 0);
	assert_int_equal(approvals_listed(), 0); /* consumed */

	/* Repeating it needs a new approval (the old one is spent). */
	r = mcp_peer_call(&p, "memory__create_entities", ada_args(), 20000);
	assert_true(json_is_true(json_object_get(r, "isError")));
	json_decref(r);
	assert_int_equal(approvals_listed(), 1);
	pending_code(code, sizeof(code), "create_entities");
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "approvals", "deny", code, (char *)NULL), 0);
	assert_int_equal(approvals_listed(), 0);

	/* The read tools see the write. */
	r = mcp_peer_call(&p, "memory__search_nodes", json_pack("{s:s}", "query", "first program"), 20000);
	assert_non_null(r);
	e = json_object_get(json_object_get(r, "structuredContent"), "entities");
	assert_int_equal(json_array_size(e), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(e, 0), "entityType")), "person");
	json_decref(r);

	/* Cancellation while the approval is pending: no response for the
	 * request, nothing runs, and the approval stays pending for the
	 * identical call (issue 14: a client's request timeout is no
	 * decision). */
	id = mcp_peer_send_request(&p, "tools/call",
				   json_pack("{s:s, s:{s:[{s:s, s:s, s:[]}]}, s:{s:s}}", "name",
					     "memory__create_entities", "arguments", "entities", "name", "Grace",
					     "entityType", "person", "observations", "_meta", "progressToken",
					     "mem-2"));
	r = mcp_peer_read(&p, 10000);
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "method")), "notifications/progress");
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "params"), "progressToken")), "mem-2");
	json_decref(r);
	assert_int_equal(approvals_listed(), 1);
	{
		char note[200];

		snprintf(
			note, sizeof(note),
			"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":%ld}}\n",
			id);
		assert_int_equal(mcp_peer_send_raw(&p, note, strlen(note)), 0);
	}
	/* Past the 3 s approval wait: still no response. */
	assert_null(mcp_peer_wait(&p, id, 4500));
	assert_int_equal(approvals_listed(), 1);
	graph_counts(&ents, &rels);
	assert_int_equal(ents, 1);
	/* The session goes on. */
	r = read_graph(&p);
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "structuredContent"), "entities")), 1);
	json_decref(r);
	stop_and_check(&p);
}

/* The same connector with `resources: read` and `prompts: read`. */
static void test_memory_passthrough(void **state_)
{
	static const char *const reads[] = { "memory__read_graph", "memory__search_nodes", "memory__open_nodes" };
	static const bool reads_ro[] = { true, true, true };
	struct mcp_peer p;
	json_t *r, *list, *c, *g;
	char code[16];
	int ents, rels;

	(void)state_;
	write_memory_profile("read", "read");
	start_daemon();
	add_and_review();

	assert_int_equal(mcp_peer_connect(&p, C.gateway), 0);
	r = mcp_peer_initialize(&p, "2025-11-25");
	assert_non_null(r);
	assert_non_null(json_object_get(json_object_get(r, "capabilities"), "resources"));
	assert_non_null(json_object_get(json_object_get(r, "capabilities"), "prompts"));
	assert_non_null(json_object_get(json_object_get(r, "capabilities"), "completions"));
	json_decref(r);
	assert_tools(&p, reads, reads_ro, ELEMENTSOF(reads));

	/* A URI naming no connector is refused before reaching the server. */
	assert_int_equal(
		error_code(mcp_peer_request(&p, "resources/read",
					    json_pack("{s:s}", "uri", "cordon+nope:memory://knowledge-graph"), 20000)),
		-32602);

	/* Write something to read back: grant, approve, run once. */
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "grants", "add", "memory", "create_entities", (char *)NULL), 0);
	r = mcp_peer_call(&p, "memory__create_entities", ada_args(), 20000);
	assert_true(json_is_true(json_object_get(r, "isError")));
	json_decref(r);
	pending_code(code, sizeof(code), "create_entities");
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "approvals", "approve", code, (char *)NULL), 0);
	r = mcp_peer_call(&p, "memory__create_entities", ada_args(), 20000);
	assert_false(json_is_true(json_object_get(r, "isError")));
	json_decref(r);
	graph_counts(&ents, &rels);
	assert_int_equal(ents, 1);

	/* The server's one resource, its URI as the server gave it behind
	 * the multiplexed view's cordon+<connector>: prefix. */
	r = mcp_peer_request(&p, "resources/list", NULL, 20000);
	list = json_object_get(json_object_get(r, "result"), "resources");
	assert_int_equal(json_array_size(list), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "uri")),
			    "cordon+memory:memory://knowledge-graph");
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "mimeType")),
			    "application/json");
	json_decref(r);
	r = mcp_peer_request(&p, "resources/templates/list", NULL, 20000);
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "resourceTemplates")), 0);
	json_decref(r);

	/* Reading it returns the graph the tool wrote. */
	r = mcp_peer_request(&p, "resources/read", json_pack("{s:s}", "uri", "cordon+memory:memory://knowledge-graph"),
			     20000);
	list = json_object_get(json_object_get(r, "result"), "contents");
	assert_int_equal(json_array_size(list), 1);
	c = json_array_get(list, 0);
	assert_string_equal(json_string_value(json_object_get(c, "uri")), "cordon+memory:memory://knowledge-graph");
	g = json_loads(json_string_value(json_object_get(c, "text")), 0, NULL);
	assert_non_null(g);
	assert_int_equal(json_array_size(json_object_get(g, "entities")), 1);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(json_object_get(g, "entities"), 0), "name")), "Ada");
	assert_int_equal(json_array_size(json_object_get(g, "relations")), 0);
	json_decref(g);
	json_decref(r);

	/* Other URIs: the server has none (an unprefixed URI goes to the
	 * only connector serving resources, which answers with its error). */
	assert_int_not_equal(
		error_code(mcp_peer_request(&p, "resources/read",
					    json_pack("{s:s}", "uri", "cordon+memory:file:///etc/passwd"), 20000)),
		0);
	assert_int_not_equal(error_code(mcp_peer_request(&p, "resources/read",
							 json_pack("{s:s}", "uri", "file:///etc/passwd"), 20000)),
			     0);

	/* server-memory offers no prompts: the merged list is empty, and a
	 * prompt it does not have is the server's error, relayed as it is
	 * (its "Method not found": no prompts capability), without cordon's
	 * marker. */
	r = mcp_peer_request(&p, "prompts/list", NULL, 20000);
	list = json_object_get(json_object_get(r, "result"), "prompts");
	assert_true(json_is_array(list));
	assert_int_equal(json_array_size(list), 0);
	json_decref(r);
	r = mcp_peer_request(&p, "prompts/get", json_pack("{s:s}", "name", "memory__none"), 20000);
	assert_non_null(r);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32601);
	assert_null(json_object_get(json_object_get(json_object_get(r, "error"), "data"), "io.cordon/refused_by"));
	assert_null(strstr(json_string_value(json_object_get(json_object_get(r, "error"), "message")), "cordon"));
	json_decref(r);
	assert_int_equal(
		error_code(mcp_peer_request(&p, "prompts/get", json_pack("{s:s}", "name", "other__none"), 20000)),
		-32602);
	stop_and_check(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_memory_profile),
					    cmocka_unit_test(test_memory_passthrough) };
	const char *b = cordon_test_env("CORDON_BUILD_DIR", NULL);
	char js[900];
	int r;

	if (geteuid() != 0)
		cordon_test_skip("needs root (cordond drops to nobody; the launcher builds sandboxes)");
	if (!b)
		cordon_test_skip("CORDON_BUILD_DIR not set");
	node_dir = getenv("CORDON_E2E_NODE_DIR");
	if (!node_dir)
		cordon_test_skip("CORDON_E2E_NODE_DIR not set (npm fixture)");
	snprintf(js, sizeof(js), "%s/node_modules/%s", node_dir, MEMORY_JS);
	if (access(js, R_OK) < 0)
		cordon_test_skip("server-memory not installed (npm fixture)");
	/* The profiles directory must be root-owned and not group/world
	 * writable (the helper refuses anything else). */
	rcd_setup(&C, "cordond-memory");
	snprintf(memfile, sizeof(memfile), "%s/memory.jsonl", C.data);
	C.approval_wait = "3s";
	r = cmocka_run_group_tests(tests, NULL, NULL);
	if (C.pid > 0)
		rcd_kill(&C, SIGKILL);
	rcd_teardown(&C, r != 0);
	return r;
}
