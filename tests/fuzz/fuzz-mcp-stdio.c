/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the MCP/JSON-RPC stdio framing and dispatch of cordon's
 * first-party server library (tools/lib/mcp-server.c, used by cordon-fs and
 * cordon-exec). Each input is a byte stream fed through a file descriptor
 * into mcp_server_run() with a small tool table (a tool that echoes its
 * arguments through the argument helpers, one that fails, one that answers
 * deferred, a notification hook); responses go to /dev/null. Properties:
 * no crash, no leak, no UB, and the run ends at EOF (the stream is finite).
 * Memory is bounded by the library's 4 MiB line cap; libFuzzer's
 * -rss_limit_mb enforces it.
 *
 * Each input runs twice: as it is, and with the echo tool's "text" lifted
 * (lift_argument, on every line). The two response streams must be byte for
 * byte the same, except where the lifted run refused an invalid lifted
 * string with its own message (the other run has jansson's): the lift may
 * change nothing but speed.
 *
 * The library is linked (cordon-tools, instrumented for coverage in fuzz
 * builds like the other libraries: tests/fuzz/CMakeLists.txt). */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mcp-server.h"

static struct mcp_server *srv_for_defer;

static int tool_echo(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res)
{
	static const char *const allowed[] = { "text", "n", "flag", NULL };
	const char *text = NULL;
	unsigned long long n = 0;
	bool flag = false;

	(void)ctx;
	(void)id;
	if (mcp_args_only(args, allowed, res) < 0 || mcp_arg_string(args, "text", true, &text, res) < 0 ||
	    mcp_arg_uint(args, "n", false, 1000, &n, res) < 0 || mcp_arg_bool(args, "flag", &flag, res) < 0)
		return -1;
	res->structured = json_pack("{s:s, s:I, s:b}", "text", text, "n", (json_int_t)n, "flag", flag);
	return res->structured ? 0 : mcp_error(res, "out of memory");
}

static int tool_fail(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res)
{
	(void)ctx;
	(void)id;
	(void)args;
	return mcp_error(res, "argument '%s': always fails", "x");
}

static int tool_defer(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res)
{
	struct mcp_call_result later = { 0 };

	(void)ctx;
	(void)args;
	(void)res;
	/* Answer "later" right away: exercises the deferred path. */
	later.structured = json_pack("{s:b}", "deferred", 1);
	(void)mcp_server_send_tool_result(srv_for_defer, id, &later);
	json_decref(later.structured);
	return MCP_DEFERRED;
}

static void on_note(void *ctx, const char *method, json_t *params)
{
	(void)ctx;
	(void)method;
	(void)params;
}

/* clang-format off */
static const struct mcp_tool tools[] = {
	{ "echo", "Echo", "Echoes", "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}", NULL, true, false, tool_echo },
	{ "fail", "Fail", "Fails", "{\"type\":\"object\"}", NULL, false, true, tool_fail },
	{ "defer", "Defer", "Answers later", "{\"type\":\"object\"}", "{\"type\":\"object\"}", true, false, tool_defer },
};
/* clang-format on */

/* Runs the input through a server; returns its output (malloc'd) or NULL. */
static char *run(int in, bool lift, size_t *ret_len)
{
	struct mcp_server srv = {
		.name = "fuzz",
		.version = "0",
		.instructions = "fuzzing",
		.tools = tools,
		.n_tools = sizeof(tools) / sizeof(tools[0]),
		.on_notification = on_note,
		.lift_argument = lift ? "text" : NULL,
		.lift_min_line = 1,
	};
	int out = memfd_create("mcp-fuzz-out", MFD_CLOEXEC);
	off_t len;
	char *buf;

	if (out < 0)
		return NULL;
	(void)lseek(in, 0, SEEK_SET);
	srv_for_defer = &srv;
	(void)mcp_server_run(&srv, in, out);
	len = lseek(out, 0, SEEK_END);
	buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
	if (buf && pread(out, buf, (size_t)len, 0) != len) {
		free(buf);
		buf = NULL;
	}
	close(out);
	if (buf) {
		buf[len] = '\0';
		*ret_len = (size_t)len;
	}
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *plain, *lifted;
	size_t plain_len = 0, lifted_len = 0;
	int fd;

	fd = memfd_create("mcp-fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (size > 0 && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	plain = run(fd, false, &plain_len);
	lifted = run(fd, true, &lifted_len);
	if (plain && lifted && !strstr(lifted, "parse error in params.arguments.text") &&
	    (plain_len != lifted_len || memcmp(plain, lifted, plain_len) != 0))
		abort(); /* the lift changed an answer */
	free(plain);
	free(lifted);
	close(fd);
	return 0;
}
