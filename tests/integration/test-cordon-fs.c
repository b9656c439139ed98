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

/* ---- Large transfers: write_file's content lifted out of the request line
 * (json-scan, decoded in place) and read_file's content written straight
 * from the file buffer. The same bytes must come back, whatever escapes the
 * client chose, and the response must be what json_dumps() would give. */

struct text {
	char *p;
	size_t len, cap;
};

static void text_put(struct text *t, const void *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		t->cap = (t->len + n + 1) * 2;
		t->p = realloc(t->p, t->cap);
		assert_non_null(t->p);
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

#define PUT(t, lit) text_put(t, lit, sizeof(lit) - 1)

/* Content of about `size` bytes holding every kind of character a JSON
 * string escapes or may escape, and, in *json, one JSON string text (no
 * quotes) of it that uses every way of writing them: raw UTF-8 and \u
 * escapes, surrogate pairs, "\/", \u001f. */
static void mixed_content(size_t size, struct text *raw, struct text *json)
{
	for (unsigned i = 0; raw->len < size; i++) {
		switch (i % 13) {
		case 0:
			PUT(raw, "\n"), PUT(json, "\\n");
			break;
		case 1:
			PUT(raw, "\""), PUT(json, "\\\"");
			break;
		case 2:
			PUT(raw, "\\"), PUT(json, "\\\\");
			break;
		case 3:
			PUT(raw, "/"), (i & 16) ? PUT(json, "\\/") : PUT(json, "/");
			break;
		case 4:
			PUT(raw, "\x1f\x01\t\r\b\f"), PUT(json, "\\u001f\\u0001\\t\\r\\b\\f");
			break;
		case 5:
			PUT(raw, "\xc3\xa9"), (i & 16) ? PUT(json, "\\u00e9") : PUT(json, "\xc3\xa9");
			break;
		case 6:
			PUT(raw, "\xe2\x82\xac"), (i & 16) ? PUT(json, "\\u20AC") : PUT(json, "\xe2\x82\xac");
			break;
		case 7:
			PUT(raw, "\xf0\x9f\x98\x80"),
				(i & 16) ? PUT(json, "\\ud83d\\ude00") : PUT(json, "\xf0\x9f\x98\x80");
			break;
		default:
			PUT(raw, "plain ascii text "), PUT(json, "plain ascii text ");
		}
	}
}

/* Sends one write_file request line: head + text + tail. */
static json_t *send_write(const char *head, const char *body, size_t len, const char *tail)
{
	assert_int_equal(mcp_peer_send_raw(&peer, head, strlen(head)), 0);
	assert_int_equal(mcp_peer_send_raw(&peer, body, len), 0);
	assert_int_equal(mcp_peer_send_raw(&peer, tail, strlen(tail)), 0);
	return mcp_peer_read(&peer, 20000);
}

static void read_back(const char *rel, const char *want, size_t len, const char *want_encoding)
{
	json_t *res, *sc, *text;
	char *dump;

	expect_ok("read_file", json_pack("{s:s}", "path", rel), &res, &sc);
	assert_string_equal(json_string_value(json_object_get(sc, "encoding")), want_encoding);
	assert_int_equal(json_integer_value(json_object_get(sc, "length")), (json_int_t)len);
	if (strcmp(want_encoding, "utf-8") == 0) {
		assert_int_equal(json_string_length(json_object_get(sc, "content")), len);
		assert_memory_equal(json_string_value(json_object_get(sc, "content")), want, len);
	}
	/* The text copy is exactly json_dumps() of structuredContent. */
	text = json_object_get(json_array_get(json_object_get(res, "content"), 0), "text");
	dump = json_dumps(sc, JSON_COMPACT);
	assert_non_null(dump);
	assert_string_equal(json_string_value(text), dump);
	free(dump);
	json_decref(res);
}

static void test_large_write_read_round_trip(void **state)
{
	struct text raw = { 0 }, js = { 0 };
	char bin[200000];
	char *b64;
	size_t b64len;
	json_t *r, *sc;

	(void)state;
	mixed_content(300000, &raw, &js);
	r = send_write("{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\","
		       "\"arguments\":{\"path\":\"mixed\",\"content\":\"",
		       js.p, js.len, "\"}}}\n");
	assert_non_null(r);
	sc = json_object_get(json_object_get(r, "result"), "structuredContent");
	assert_int_equal(json_integer_value(json_object_get(sc, "bytes")), (json_int_t)raw.len);
	json_decref(r);
	read_back("mixed", raw.p, raw.len, "utf-8");

	/* Binary-ish content (NUL, invalid UTF-8) as base64, in a large line:
	 * comes back as base64 of the same bytes. */
	for (size_t i = 0; i < sizeof(bin); i++)
		bin[i] = (char)(i * 131 + (i >> 7));
	b64len = ((sizeof(bin) + 2) / 3) * 4;
	b64 = malloc(b64len + 1);
	assert_non_null(b64);
	{
		static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		const unsigned char *u = (const unsigned char *)bin;
		size_t o = 0, i;

		for (i = 0; i + 2 < sizeof(bin); i += 3, o += 4) {
			b64[o] = alpha[u[i] >> 2];
			b64[o + 1] = alpha[(u[i] & 3) << 4 | u[i + 1] >> 4];
			b64[o + 2] = alpha[(u[i + 1] & 15) << 2 | u[i + 2] >> 6];
			b64[o + 3] = alpha[u[i + 2] & 63];
		}
		if (sizeof(bin) - i == 2) {
			b64[o] = alpha[u[i] >> 2];
			b64[o + 1] = alpha[(u[i] & 3) << 4 | u[i + 1] >> 4];
			b64[o + 2] = alpha[(u[i + 1] & 15) << 2];
			b64[o + 3] = '=';
		} else if (sizeof(bin) - i == 1) {
			b64[o] = alpha[u[i] >> 2];
			b64[o + 1] = alpha[(u[i] & 3) << 4];
			b64[o + 2] = b64[o + 3] = '=';
		}
	}
	r = send_write("{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\","
		       "\"arguments\":{\"path\":\"binary\",\"encoding\":\"base64\",\"content\":\"",
		       b64, b64len, "\"}}}\n");
	sc = json_object_get(json_object_get(r, "result"), "structuredContent");
	assert_int_equal(json_integer_value(json_object_get(sc, "bytes")), (json_int_t)sizeof(bin));
	json_decref(r);
	{
		json_t *res, *rsc;

		expect_ok("read_file", json_pack("{s:s}", "path", "binary"), &res, &rsc);
		assert_string_equal(json_string_value(json_object_get(rsc, "encoding")), "base64");
		assert_int_equal(json_string_length(json_object_get(rsc, "content")), b64len);
		assert_memory_equal(json_string_value(json_object_get(rsc, "content")), b64, b64len);
		json_decref(res);
	}
	free(b64);
	free(raw.p);
	free(js.p);
}

/* A large line is judged as jansson judges the whole line: an invalid
 * content string, a second "content", a malformed rest are parse errors; an
 * oversized content is the tool's error; the server keeps serving. */
static void test_large_write_refusals(void **state)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":51,\"method\":\"tools/call\",\"params\":{\"name\":"
				   "\"write_file\",\"arguments\":{\"path\":\"refused\",\"content\":\"";
	static const char *const bad_strings[] = { "\\ud800", "\\u0000", "\x01", "\xed\xa0\x80", "\\x", "\xc0\xaf" };
	size_t n = 200000;
	char *body = malloc(n + 16);
	const char *msg;
	json_t *r;
	char p[4096];
	struct stat st;

	(void)state;
	assert_non_null(body);
	memset(body, 'x', n);
	for (size_t i = 0; i < sizeof(bad_strings) / sizeof(bad_strings[0]); i++) {
		size_t k = strlen(bad_strings[i]);

		memcpy(body + n / 2, bad_strings[i], k);
		r = send_write(head, body, n, "\"}}}\n");
		assert_non_null(r);
		assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32700);
		msg = json_string_value(json_object_get(json_object_get(r, "error"), "message"));
		/* A raw control character stops the scan itself, and the line
		 * then goes to jansson whole, for its own message. */
		if (!strstr(msg, "params.arguments.content") && !strstr(msg, "control character"))
			fail_msg("case %zu: '%s'", i, msg);
		json_decref(r);
		memset(body + n / 2, 'x', k);
	}
	/* A second "content": jansson's duplicate-key refusal. */
	r = send_write(head, body, n, "\",\"content\":\"y\"}}}\n");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32700);
	msg = json_string_value(json_object_get(json_object_get(r, "error"), "message"));
	if (!strstr(msg, "duplicate"))
		fail_msg("duplicate content: '%s'", msg);
	json_decref(r);
	/* The rest malformed: jansson's error for the whole line. */
	r = send_write(head, body, n, "\"}}\n");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32700);
	msg = json_string_value(json_object_get(json_object_get(r, "error"), "message"));
	if (!strstr(msg, "column"))
		fail_msg("malformed rest: '%s'", msg);
	json_decref(r);
	/* One byte over the 16 MiB write limit. */
	free(body);
	n = 16u * 1024 * 1024 + 1;
	body = malloc(n);
	assert_non_null(body);
	memset(body, 'z', n);
	r = send_write(head, body, n, "\"}}}\n");
	assert_true(json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
	json_decref(r);
	free(body);
	snprintf(p, sizeof(p), "%s/refused", root);
	assert_int_equal(stat(p, &st), -1);
	assert_int_equal(errno, ENOENT);
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
		cmocka_unit_test(test_large_write_read_round_trip),
		cmocka_unit_test(test_large_write_refusals),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
