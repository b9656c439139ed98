/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A small MCP server over stdio for cordon's first-party connectors
 * (cordon-fs, cordon-exec): newline-delimited JSON-RPC 2.0, strict parsing
 * (duplicate keys refused, one message per line, a line cap), initialize with
 * protocol-version negotiation, ping, tools/list and tools/call. Everything
 * else gets -32601. Batches are refused (-32600), as MCP 2025-06-18 removed
 * them. */

#include <jansson.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define MCP_MAX_LINE (4u * 1024 * 1024)

/* A tool's outcome: either a result object (structuredContent) or a tool
 * error message naming the argument. */
struct mcp_call_result {
	json_t *structured; /* owned; may be NULL when error is set */
	char error[512];    /* non-empty: isError result with this text */
	/* Optional, for a string too large to copy into structured: the value
	 * in structured that is blob_slot (the same json_t, compared by
	 * address; make it a fresh json_string("")) is sent as the JSON string
	 * of blob[0..blob_len), which must be valid UTF-8 without NUL
	 * (json_text_valid()). blob is owned and freed once the result is sent
	 * or dropped. */
	json_t *blob_slot;
	char *blob;
	size_t blob_len;
};

/* Sets the tool error text; returns -1 so handlers can `return mcp_error(...)`. */
int mcp_error(struct mcp_call_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct mcp_tool {
	const char *name;
	const char *title;
	const char *description;
	const char *input_schema;  /* JSON text */
	const char *output_schema; /* JSON text or NULL */
	bool read_only;		   /* annotations.readOnlyHint (a hint only: cordon never trusts it) */
	bool destructive;
	/* Returns 0 with res->structured set, -1 with res->error set, or
	 * MCP_DEFERRED when the answer comes later through
	 * mcp_server_send_tool_result() with `id` (the handler takes its own
	 * reference with json_incref). */
	int (*call)(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res);
};

#define MCP_DEFERRED 1

struct mcp_server {
	const char *name;
	const char *version;
	const char *instructions;
	const struct mcp_tool *tools;
	size_t n_tools;
	void *ctx;
	int out_fd; /* set by mcp_server_run() */
	/* The longest request line accepted; 0 means MCP_MAX_LINE. A longer
	 * line gets one -32600 error and is dropped. */
	size_t max_line;
	/* Optional: the name of a tools/call argument that may be a string of
	 * megabytes (cordon-fs write_file's "content"). A long request line
	 * holding it as params.arguments.<lift_argument> is scanned with
	 * json-scan, the string decoded in place, and only the rest of the line
	 * parsed with jansson; the handler sees the same tree either way. */
	const char *lift_argument;
	/* Lines shorter than this take jansson's path alone; 0 means 64 KiB
	 * (the fuzz target sets 1, to lift every line). */
	size_t lift_min_line;

	/* Optional hooks for servers with asynchronous work. fill_pollfds adds
	 * up to max fds and may lower *timeout_ms; handle_pollfds gets them
	 * back after poll(); on_notification sees every client notification
	 * (e.g. notifications/cancelled). */
	size_t (*fill_pollfds)(void *ctx, struct pollfd *fds, size_t max, int *timeout_ms);
	void (*handle_pollfds)(void *ctx, const struct pollfd *fds, size_t n);
	void (*on_notification)(void *ctx, const char *method, json_t *params);
};

/* Sends the answer of a deferred tool call. Returns 0 or -errno. */
int mcp_server_send_tool_result(struct mcp_server *srv, json_t *id, struct mcp_call_result *res);

/* Serves requests from in_fd and writes responses to out_fd until EOF.
 * Returns 0 at EOF, or -errno on an I/O error. */
int mcp_server_run(struct mcp_server *srv, int in_fd, int out_fd);

/* Argument helpers for tool handlers. Each returns 0 or -1 with res->error
 * naming the argument ("argument 'path': must be a string"). Optional
 * arguments leave *ret untouched when absent. */
int mcp_arg_string(json_t *args, const char *name, bool required, const char **ret, struct mcp_call_result *res);
int mcp_arg_uint(json_t *args, const char *name, bool required, unsigned long long max, unsigned long long *ret,
		 struct mcp_call_result *res);
int mcp_arg_bool(json_t *args, const char *name, bool *ret, struct mcp_call_result *res);
/* Refuses members not in the NULL-terminated list. */
int mcp_args_only(json_t *args, const char *const *allowed, struct mcp_call_result *res);
