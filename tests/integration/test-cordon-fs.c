/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordon-fs as a real MCP server over stdio: every tool's success and error
 * cases, atomic replacement under SIGKILL, and the read cap on a 1 GiB file. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "mcp-client.h"
#include "test-support.h"

static char *base, root[4096], root2[4096], binary[4096];
static struct mcp_peer peer;

static void put(const char *rel, const char *content)
{
	char p[4096];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	f = fopen(p, "we");
	assert_non_null(f);
	fputs(content, f);
	assert_int_equal(fclose(f), 0);
}

static char *get(const char *rel)
{
	static char buf[65536];
	char p[4096];
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	f = fopen(p, "re");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void mk(const char *rel)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static int setup(void **state)
{
	char p[4096], *argv[5];

	(void)state;
	base = cordon_test_mkdtemp("cordon-fs");
	snprintf(root, sizeof(root), "%s/work", base);
	snprintf(root2, sizeof(root2), "%s/other", base);
	snprintf(binary, sizeof(binary), "%s/cordon-fs", cordon_test_env("CORDON_TOOLS_DIR", "."));
	mk("work");
	mk("work/sub");
	mk("work-evil");
	mk("other");
	put("work/a.txt", "alpha\nbeta\ngamma\n");
	put("work/sub/b.txt", "bee");
	put("work-evil/secret", "evil");
	put("other/o.txt", "other");
	snprintf(p, sizeof(p), "%s/work/escape", base);
	assert_int_equal(symlink("../work-evil/secret", p), 0);
	argv[0] = binary;
	argv[1] = root;
	snprintf(p, sizeof(p), "%s", root2);
	argv[2] = p;
	argv[3] = NULL;
	assert_int_equal(mcp_peer_start(&peer, argv), 0);
	json_t *init = mcp_peer_initialize(&peer, "2025-06-18");
	assert_non_null(init);
	assert_string_equal(json_string_value(json_object_get(init, "protocolVersion")), "2025-06-18");
	json_decref(init);
	return 0;
}

static int teardown(void **state)
{
	int status;

	(void)state;
	status = mcp_peer_stop(&peer, 5000);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(cordon_test_rm_rf(base), 0);
	free(base);
	return 0;
}

/* Calls a tool; returns structuredContent (borrowed from *ret_res) or NULL
 * with the error text in *err. */
static json_t *call(const char *tool, json_t *args, json_t **ret_res, const char **err)
{
	json_t *res = mcp_peer_call(&peer, tool, args, 20000);

	assert_non_null(res);
	*ret_res = res;
	*err = NULL;
	if (json_is_true(json_object_get(res, "isError"))) {
		*err = json_string_value(json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
		return NULL;
	}
	return json_object_get(res, "structuredContent");
}

static void expect_ok(const char *tool, json_t *args, json_t **ret_res, json_t **ret_sc)
{
	const char *err;

	*ret_sc = call(tool, args, ret_res, &err);
	if (!*ret_sc)
		fail_msg("%s failed: %s", tool, err);
}

static void expect_err(const char *tool, json_t *args, const char *want_substring)
{
	json_t *res;
	const char *err;
	json_t *sc = call(tool, args, &res, &err);

	if (sc)
		fail_msg("%s unexpectedly succeeded", tool);
	if (!strstr(err, want_substring))
		fail_msg("%s: error '%s' lacks '%s'", tool, err, want_substring);
	json_decref(res);
}

static char *abs_path(const char *rel)
{
	static char p[4096];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	return p;
}

static void test_tools_list(void **state)
{
	json_t *r = mcp_peer_request(&peer, "tools/list", NULL, 5000), *tools;
	static const char *const names[] = { "read_file",  "read_many", "list_directory",   "stat", "find",
					     "write_file", "edit_file", "create_directory", "move", "delete" };

	(void)state;
	assert_non_null(r);
	tools = json_object_get(json_object_get(r, "result"), "tools");
	assert_int_equal(json_array_size(tools), ELEMENTSOF(names));
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		json_t *t = json_array_get(tools, i);

		assert_string_equal(json_string_value(json_object_get(t, "name")), names[i]);
		assert_true(json_is_object(json_object_get(t, "inputSchema")));
	}
	json_decref(r);
}

static void test_read_file(void **state)
{
	json_t *res, *sc;

	(void)state;
	expect_ok("read_file", json_pack("{s:s}", "path", abs_path("a.txt")), &res, &sc);
	assert_string_equal(json_string_value(json_object_get(sc, "content")), "alpha\nbeta\ngamma\n");
	assert_false(json_is_true(json_object_get(sc, "truncated")));
	json_decref(res);
	expect_ok("read_file", json_pack("{s:s, s:i, s:i}", "path", "a.txt", "offset", 6, "length", 4), &res, &sc);
	assert_string_equal(json_string_value(json_object_get(sc, "content")), "beta");
	/* Truncated means the server's cap cut the read, not the caller's length. */
	assert_false(json_is_true(json_object_get(sc, "truncated")));
	json_decref(res);
	/* The second root, by absolute path. */
	{
		char p[4096];

		snprintf(p, sizeof(p), "%s/o.txt", root2);
		expect_ok("read_file", json_pack("{s:s}", "path", p), &res, &sc);
		assert_string_equal(json_string_value(json_object_get(sc, "content")), "other");
		json_decref(res);
	}
	expect_err("read_file", json_pack("{s:s}", "path", "../work-evil/secret"), "leaves its root");
	expect_err("read_file", json_pack("{s:s}", "path", abs_path("../work-evil/secret")), "leaves its root");
	{
		char p[4096];

		/* A sibling sharing the root's name as prefix is not beneath it. */
		snprintf(p, sizeof(p), "%s-evil/secret", root);
		expect_err("read_file", json_pack("{s:s}", "path", p), "is not beneath any root");
	}
	expect_err("read_file", json_pack("{s:s}", "path", "escape"), "symbolic link");
	expect_err("read_file", json_pack("{s:s}", "path", "missing"), "No such file");
	expect_err("read_file", json_pack("{s:s}", "path", "sub"), "not a regular file");
	expect_err("read_file", json_pack("{s:i}", "path", 3), "argument 'path': must be a string");
	expect_err("read_file", json_pack("{}"), "argument 'path': required");
	expect_err("read_file", json_pack("{s:s, s:b}", "path", "a.txt", "bogus", 1), "argument 'bogus': unknown");
	expect_err("read_file", json_pack("{s:s, s:i}", "path", "a.txt", "offset", -1), "argument 'offset'");
}

static void test_read_many_list_stat_find(void **state)
{
	json_t *res, *sc;

	(void)state;
	expect_ok("read_many", json_pack("{s:[s, s]}", "paths", "a.txt", "escape"), &res, &sc);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(json_object_get(sc, "files"), 0), "content")),
		"alpha\nbeta\ngamma\n");
	assert_non_null(
		strstr(json_string_value(json_object_get(json_array_get(json_object_get(sc, "files"), 1), "error")),
		       "symbolic link"));
	json_decref(res);
	expect_err("read_many", json_pack("{s:[]}", "paths"), "non-empty array");

	expect_ok("list_directory", json_pack("{s:s}", "path", "sub"), &res, &sc);
	assert_int_equal(json_array_size(json_object_get(sc, "entries")), 1);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(json_object_get(sc, "entries"), 0), "name")), "b.txt");
	json_decref(res);
	expect_err("list_directory", json_pack("{s:s}", "path", "a.txt"), "Not a directory");

	expect_ok("stat", json_pack("{s:s}", "path", "a.txt"), &res, &sc);
	assert_string_equal(json_string_value(json_object_get(sc, "type")), "file");
	assert_int_equal(json_integer_value(json_object_get(sc, "size")), 17);
	json_decref(res);
	expect_err("stat", json_pack("{s:s}", "path", "/etc/passwd"), "is not beneath any root");

	expect_ok("find", json_pack("{s:s, s:s}", "path", root, "pattern", "*.txt"), &res, &sc);
	assert_int_equal(json_array_size(json_object_get(sc, "matches")), 2);
	json_decref(res);
	expect_ok("find", json_pack("{s:s, s:s, s:i}", "path", root, "pattern", "*", "max_results", 1), &res, &sc);
	assert_int_equal(json_array_size(json_object_get(sc, "matches")), 1);
	assert_true(json_is_true(json_object_get(sc, "truncated")));
	json_decref(res);
	expect_err("find", json_pack("{s:s}", "path", root), "argument 'pattern': required");
}

static void test_write_edit_create(void **state)
{
	json_t *res, *sc;

	(void)state;
	expect_ok("write_file", json_pack("{s:s, s:s}", "path", "new.txt", "content", "fresh"), &res, &sc);
	json_decref(res);
	assert_string_equal(get("work/new.txt"), "fresh");
	expect_ok("write_file", json_pack("{s:s, s:s, s:s}", "path", "bin", "content", "AAEC", "encoding", "base64"),
		  &res, &sc);
	assert_int_equal(json_integer_value(json_object_get(sc, "bytes")), 3);
	json_decref(res);
	expect_err("write_file", json_pack("{s:s, s:s, s:s}", "path", "bin", "content", "!!", "encoding", "base64"),
		   "not valid base64");
	expect_err("write_file", json_pack("{s:s, s:s}", "path", "escape/x", "content", "x"), "symbolic link");
	expect_err("write_file", json_pack("{s:s, s:s}", "path", "../work-evil/x", "content", "x"), "leaves its root");
	expect_err("write_file", json_pack("{s:s, s:s}", "path", root, "content", "x"), "does not name an entry");
	expect_err("write_file", json_pack("{s:s, s:s}", "path", "/", "content", "x"), "is not beneath any root");

	expect_ok("edit_file",
		  json_pack("{s:s, s:[{s:s, s:s}], s:b}", "path", "a.txt", "edits", "oldText", "beta", "newText",
			    "BETA", "dryRun", 1),
		  &res, &sc);
	assert_string_equal(json_string_value(json_object_get(sc, "diff")), "@@ line 2 @@\n-beta\n+BETA\n");
	json_decref(res);
	assert_string_equal(get("work/a.txt"), "alpha\nbeta\ngamma\n"); /* dry run changed nothing */
	expect_ok("edit_file",
		  json_pack("{s:s, s:[{s:s, s:s}]}", "path", "a.txt", "edits", "oldText", "beta", "newText", "BETA"),
		  &res, &sc);
	json_decref(res);
	assert_string_equal(get("work/a.txt"), "alpha\nBETA\ngamma\n");
	expect_err("edit_file",
		   json_pack("{s:s, s:[{s:s, s:s}]}", "path", "a.txt", "edits", "oldText", "a", "newText", "b"),
		   "argument 'edits[0].oldText': matches 4 times");
	expect_err("edit_file",
		   json_pack("{s:s, s:[{s:s, s:s}]}", "path", "a.txt", "edits", "oldText", "zzz", "newText", "b"),
		   "matches 0 times");

	expect_ok("create_directory", json_pack("{s:s}", "path", "newdir"), &res, &sc);
	json_decref(res);
	expect_ok("create_directory", json_pack("{s:s}", "path", "newdir"), &res, &sc); /* idempotent */
	json_decref(res);
	expect_err("create_directory", json_pack("{s:s}", "path", "nope/deeper"), "No such file");
}

static void test_move_delete(void **state)
{
	json_t *res, *sc;
	char dst[4096];

	(void)state;
	put("work/m.txt", "move me");
	expect_ok("move", json_pack("{s:s, s:s}", "source", "m.txt", "destination", "sub/m2.txt"), &res, &sc);
	json_decref(res);
	assert_string_equal(get("work/sub/m2.txt"), "move me");
	expect_err("move", json_pack("{s:s, s:s}", "source", "sub/m2.txt", "destination", "a.txt"), "already exists");
	snprintf(dst, sizeof(dst), "%s/m3.txt", root2);
	expect_ok("move", json_pack("{s:s, s:s}", "source", "sub/m2.txt", "destination", dst), &res, &sc);
	json_decref(res);
	assert_string_equal(get("other/m3.txt"), "move me");
	expect_err("move", json_pack("{s:s, s:s}", "source", "a.txt", "destination", "../work-evil/a"),
		   "leaves its root");

	mk("work/tree");
	mk("work/tree/deep");
	put("work/tree/deep/f", "x");
	{
		char p[4096];

		/* A symlink inside a tree being deleted is removed, not followed. */
		snprintf(p, sizeof(p), "%s/work/tree/link", base);
		assert_int_equal(symlink("../../work-evil", p), 0);
	}
	expect_err("delete", json_pack("{s:s}", "path", "tree"), "non-empty directory; set recursive");
	expect_ok("delete", json_pack("{s:s, s:b}", "path", "tree", "recursive", 1), &res, &sc);
	assert_int_equal(json_integer_value(json_object_get(sc, "removed")), 4);
	json_decref(res);
	assert_null(get("work/tree/deep/f"));
	assert_string_equal(get("work-evil/secret"), "evil");
	expect_ok("delete", json_pack("{s:s}", "path", "new.txt"), &res, &sc);
	json_decref(res);
	expect_err("delete", json_pack("{s:s}", "path", "new.txt"), "No such file");
	expect_err("delete", json_pack("{s:s}", "path", ".."), "does not name an entry");
}

static void test_hardlink_not_written_through(void **state)
{
	char src[4096], dst[4096];
	json_t *res, *sc;

	(void)state;
	snprintf(src, sizeof(src), "%s/work-evil/secret", base);
	snprintf(dst, sizeof(dst), "%s/work/hl", base);
	assert_int_equal(link(src, dst), 0);
	/* edit_file and write_file replace the name (a new inode renamed over
	 * it), never the other link's content. */
	expect_ok("edit_file",
		  json_pack("{s:s, s:[{s:s, s:s}]}", "path", "hl", "edits", "oldText", "evil", "newText", "x"), &res,
		  &sc);
	json_decref(res);
	assert_string_equal(get("work-evil/secret"), "evil");
	assert_string_equal(get("work/hl"), "x");
	expect_ok("write_file", json_pack("{s:s, s:s}", "path", "hl", "content", "replaced"), &res, &sc);
	json_decref(res);
	assert_string_equal(get("work-evil/secret"), "evil");
	assert_string_equal(get("work/hl"), "replaced");
}

static void test_read_cap_on_1gib_file(void **state)
{
	char p[4096];
	json_t *res, *sc;
	int fd;

	(void)state;
	snprintf(p, sizeof(p), "%s/work/huge", base);
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1LL << 30), 0); /* sparse 1 GiB */
	close(fd);
	expect_ok("read_file", json_pack("{s:s}", "path", "huge"), &res, &sc);
	assert_int_equal(json_integer_value(json_object_get(sc, "length")), 1024 * 1024);
	assert_int_equal(json_integer_value(json_object_get(sc, "size")), 1LL << 30);
	assert_true(json_is_true(json_object_get(sc, "truncated")));
	json_decref(res);
	unlink(p);
}

/* SIGKILL in the middle of large writes: the file holds the old or the new
 * content, never a mix. */
static void test_atomic_write_survives_kill(void **state)
{
	size_t big = 8 * 1024 * 1024;
	char *content = malloc(big + 1), *argv[3], path[4096];
	struct stat st;

	(void)state;
	assert_non_null(content);
	memset(content, 'N', big);
	content[big] = '\0';
	snprintf(path, sizeof(path), "%s/work/atomic", base);
	put("work/atomic", "old");
	for (int i = 0; i < 12; i++) {
		struct mcp_peer p;
		json_t *msg = json_pack("{s:s, s:i, s:s, s:{s:s, s:{s:s, s:s}}}", "jsonrpc", "2.0", "id", 1, "method",
					"tools/call", "params", "name", "write_file", "arguments", "path", "atomic",
					"content", content);
		char *s = json_dumps(msg, JSON_COMPACT);

		argv[0] = binary;
		argv[1] = root;
		argv[2] = NULL;
		assert_int_equal(mcp_peer_start(&p, argv), 0);
		assert_int_equal(mcp_peer_send_raw(&p, s, strlen(s)), 0);
		assert_int_equal(mcp_peer_send_raw(&p, "\n", 1), 0);
		usleep((useconds_t)(i * 3000));
		kill(p.pid, SIGKILL);
		mcp_peer_stop(&p, 5000);
		free(s);
		json_decref(msg);
		assert_int_equal(stat(path, &st), 0);
		if (st.st_size == 3)
			assert_string_equal(get("work/atomic"), "old");
		else
			assert_int_equal(st.st_size, (off_t)big);
	}
	free(content);
}

static void test_protocol_errors(void **state)
{
	json_t *r;

	(void)state;
	assert_int_equal(mcp_peer_send_raw(&peer, "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2}\n", 32), 0);
	r = mcp_peer_read(&peer, 5000);
	assert_non_null(r);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32700);
	json_decref(r);
	assert_int_equal(mcp_peer_send_raw(&peer, "[1,2]\n", 6), 0);
	r = mcp_peer_read(&peer, 5000);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32600);
	json_decref(r);
	r = mcp_peer_request(&peer, "resources/list", NULL, 5000);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32601);
	json_decref(r);
	r = mcp_peer_request(&peer, "tools/call", json_pack("{s:s}", "name", "no_such_tool"), 5000);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32602);
	json_decref(r);
	r = mcp_peer_request(&peer, "ping", NULL, 5000);
	assert_true(json_is_object(json_object_get(r, "result")));
	json_decref(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tools_list),
		cmocka_unit_test(test_read_file),
		cmocka_unit_test(test_read_many_list_stat_find),
		cmocka_unit_test(test_write_edit_create),
		cmocka_unit_test(test_move_delete),
		cmocka_unit_test(test_hardlink_not_written_through),
		cmocka_unit_test(test_read_cap_on_1gib_file),
		cmocka_unit_test(test_atomic_write_survives_kill),
		cmocka_unit_test(test_protocol_errors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
