/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The MCP reference filesystem server from npm, run as
 *   node /opt/cordon/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js /work
 * under profiles/filesystem.yaml, inside a real sandbox built by
 * cordon_spawn(). The profile is loaded from the repository unchanged except
 * for two host paths a test must own: the project root (a temp dir, seen at
 * /work as the profile says) and the npm prefix (the test-local install, seen
 * at /opt/cordon/mcp as the profile says). A small driver speaks
 * newline-delimited JSON-RPC on the connector's stdio: initialize,
 * tools/list, a listing inside the root, and a read through a symlink that
 * points outside it (the sandbox holds even if the server's own check did
 * not). */
#include <poll.h>

#include "spawn-test.h"

struct conn {
	int in, out;
	char buf[1 << 20];
	size_t len;
};

static void send_line(struct conn *c, const char *json)
{
	size_t n = strlen(json);

	printf("-> %s\n", json);
	assert_int_equal(write(c->in, json, n), (ssize_t)n);
	assert_int_equal(write(c->in, "\n", 1), 1);
}

/* Reads lines until the response with this id; returns it (caller frees). */
static json_t *recv_response(struct conn *c, int id)
{
	for (;;) {
		char *nl = memchr(c->buf, '\n', c->len);

		if (nl) {
			json_error_t e;
			json_t *j;
			size_t l = (size_t)(nl - c->buf);

			*nl = '\0';
			printf("<- %.300s%s\n", c->buf, l > 300 ? "..." : "");
			j = json_loads(c->buf, 0, &e);
			memmove(c->buf, nl + 1, c->len - l - 1);
			c->len -= l + 1;
			assert_non_null(j);
			if (json_integer_value(json_object_get(j, "id")) == id && json_object_get(j, "id"))
				return j;
			json_decref(j);
			continue;
		}
		{
			struct pollfd p = { .fd = c->out, .events = POLLIN };
			ssize_t n;

			assert_int_equal(poll(&p, 1, 30000), 1);
			assert_true(c->len < sizeof(c->buf) - 1);
			n = read(c->out, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
			assert_true(n > 0);
			c->len += (size_t)n;
		}
	}
}

static const char *first_text(json_t *resp)
{
	json_t *content = json_object_get(json_object_get(resp, "result"), "content");

	return json_string_value(json_object_get(json_array_get(content, 0), "text"));
}

static void test_server_filesystem_in_sandbox(void **state)
{
	const char *src = cordon_test_env("CORDON_SOURCE_DIR", ".");
	const char *prefix = cordon_test_env("CORDON_E2E_NODE_PREFIX", "build/tests/e2e/node");
	struct cordon_profile *p = NULL;
	struct cordon_instance *inst = NULL;
	struct cordon_diag d = { 0 };
	struct cordon_caps caps;
	struct conn *c;
	char path[PATH_MAX], *dir, *root;
	json_t *r, *tools, *t;
	bool has_read = false, has_list = false;
	const char *text;
	size_t i;
	int st;

	(void)state;
	cordon_test_require_root();
	snprintf(path, sizeof(path), "%s/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", prefix);
	if (access(path, R_OK) < 0)
		cordon_test_skip("server-filesystem not installed at %s (npm-setup fixture)", prefix);
	assert_int_equal(cordon_probe(&caps), 0);

	snprintf(path, sizeof(path), "%s/profiles/filesystem.yaml", src);
	assert_int_equal(cordon_profile_load(path, &p, &d), 0);

	dir = cordon_test_mkdtemp("e2e-fs");
	assert_int_equal(chmod(dir, 0755), 0);
	root = sbx_path(dir, "project");
	assert_int_equal(mkdir(root, 0755), 0);
	snprintf(path, sizeof(path), "%s/hello.txt", root);
	sbx_write_file(path, "hello from the project\n");
	snprintf(path, sizeof(path), "%s/outside.txt", dir);
	sbx_write_file(path, "outside secret\n");
	{
		char link[PATH_MAX];

		snprintf(link, sizeof(link), "%s/escape", root);
		assert_int_equal(symlink(path, link), 0);
	}

	/* A project folder has an ordinary owner: a read-write root owned by
	 * uid 0 is refused unless the profile opts in (issue 11). */
	assert_int_equal(chown(root, 65534, 65534), 0);
	snprintf(path, sizeof(path), "%s/hello.txt", root);
	assert_int_equal(chown(path, 65534, 65534), 0);

	/* The two host paths this test owns. */
	assert_int_equal(p->n_fs_roots, 1);
	assert_string_equal(p->fs_roots[0].at, "/work");
	free(p->fs_roots[0].path);
	p->fs_roots[0].path = strdup(root);
	for (i = 0; i < p->n_fs_system; i++)
		if (strcmp(p->fs_system[i].path, "/opt/cordon/mcp") == 0) {
			free(p->fs_system[i].path);
			free(p->fs_system[i].at);
			p->fs_system[i].path = strdup(prefix);
			p->fs_system[i].at = strdup("/opt/cordon/mcp");
		}

	{
		struct cordon_launch_policy pol = { .profile = p, .env_source = environ, .stdio = CORDON_STDIO_PIPES };
		int r2 = cordon_spawn(&pol, &caps, &inst, &d);

		if (r2 < 0)
			fprintf(stderr, "spawn: %s: %s (%s)\n", d.step, d.message, strerror(d.error));
		assert_int_equal(r2, 0);
	}
	c = calloc(1, sizeof(*c));
	c->in = cordon_instance_take_stdio(inst, 0);
	c->out = cordon_instance_take_stdio(inst, 1);

	send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-"
		     "06-18\","
		     "\"capabilities\":{},\"clientInfo\":{\"name\":\"cordon-e2e\",\"version\":\"0\"}}}");
	r = recv_response(c, 1);
	assert_non_null(json_object_get(json_object_get(r, "result"), "serverInfo"));
	assert_non_null(json_object_get(json_object_get(json_object_get(r, "result"), "capabilities"), "tools"));
	json_decref(r);
	send_line(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");

	send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
	r = recv_response(c, 2);
	tools = json_object_get(json_object_get(r, "result"), "tools");
	assert_true(json_array_size(tools) > 5);
	json_array_foreach(tools, i, t)
	{
		const char *n = json_string_value(json_object_get(t, "name"));

		has_read |= strcmp(n, "read_text_file") == 0;
		has_list |= strcmp(n, "list_directory") == 0;
	}
	assert_true(has_read && has_list);
	json_decref(r);

	send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"list_directory\","
		     "\"arguments\":{\"path\":\"/work\"}}}");
	r = recv_response(c, 3);
	text = first_text(r);
	assert_non_null(text);
	assert_non_null(strstr(text, "hello.txt"));
	json_decref(r);

	send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"read_text_file\","
		     "\"arguments\":{\"path\":\"/work/hello.txt\"}}}");
	r = recv_response(c, 4);
	assert_non_null(strstr(first_text(r), "hello from the project"));
	json_decref(r);

	/* Through the planted symlink: never the outside content. */
	send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"read_text_file\","
		     "\"arguments\":{\"path\":\"/work/escape\"}}}");
	r = recv_response(c, 5);
	text = json_dumps(r, 0);
	assert_null(strstr(text, "outside secret"));
	free((char *)text);
	json_decref(r);

	close(c->in);
	assert_int_equal(cordon_instance_wait(inst, &st), 0);
	printf("server exit status %d\n", cordon_exit_code(st));
	{
		const json_t *rep = cordon_instance_report(inst);

		sbx_assert_degraded_only_by_root_guard(rep, &caps);
		assert_string_equal(sbx_state(rep, "landlock"), "enforced");
		assert_string_equal(sbx_state(rep, "seccomp"), "enforced");
	}
	close(c->out);
	free(c);
	cordon_instance_free(inst);
	cordon_profile_free(p);
	(void)cordon_test_rm_rf(dir);
	free(root);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_server_filesystem_in_sandbox),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
