/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "mcp-server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-util.h"


/* Versions this server speaks, newest first. */
static const char *const protocol_versions[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05" };

int mcp_error(struct mcp_call_result *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
	if (!res->error[0])
		snprintf(res->error, sizeof(res->error), "tool error");
	return -1;
}

static int send_json(int fd, json_t *msg)
{
	_cleanup_free_ char *s = json_dumps(msg, JSON_COMPACT);
	size_t len;
	int r;

	if (!s)
		return -ENOMEM;
	len = strlen(s);
	r = write_all(fd, s, len);
	if (r < 0)
		return r;
	return write_all(fd, "\n", 1);
}

static int send_result(int fd, json_t *id, json_t *result)
{
	_cleanup_(json_decrefp) json_t *msg = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);

	if (!msg)
		return -ENOMEM;
	return send_json(fd, msg);
}

static int send_error(int fd, json_t *id, int code, const char *message)
{
	_cleanup_(json_decrefp) json_t *msg = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
							 id ? id : json_null(), "error", "code", code, "message",
							 message);

	if (!msg)
		return -ENOMEM;
	return send_json(fd, msg);
}

static json_t *tool_json(const struct mcp_tool *t)
{
	json_error_t err;
	json_t *in = json_loads(t->input_schema, JSON_REJECT_DUPLICATES, &err), *o;

	if (!in)
		return NULL;
	o = json_pack("{s:s, s:s, s:s, s:o, s:{s:b, s:b}}", "name", t->name, "title", t->title ? t->title : t->name,
		      "description", t->description, "inputSchema", in, "annotations", "readOnlyHint", t->read_only,
		      "destructiveHint", t->destructive);
	if (o && t->output_schema) {
		json_t *out = json_loads(t->output_schema, JSON_REJECT_DUPLICATES, &err);

		if (!out || json_object_set_new(o, "outputSchema", out) < 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static int handle_initialize(const struct mcp_server *srv, int fd, json_t *id, json_t *params)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	const char *version = protocol_versions[0];
	json_t *result;

	if (!want)
		return send_error(fd, id, -32602, "initialize: params.protocolVersion must be a string");
	/* Answer with the client's version when we speak it, else our newest. */
	for (size_t i = 0; i < ELEMENTSOF(protocol_versions); i++)
		if (strcmp(want, protocol_versions[i]) == 0)
			version = protocol_versions[i];
	result = json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s}}", "protocolVersion", version, "capabilities", "tools",
			   "listChanged", 0, "serverInfo", "name", srv->name, "version", srv->version);
	if (!result)
		return -ENOMEM;
	if (srv->instructions)
		json_object_set_new(result, "instructions", json_string(srv->instructions));
	return send_result(fd, id, result);
}

static int handle_tools_list(const struct mcp_server *srv, int fd, json_t *id)
{
	json_t *tools = json_array(), *result;

	if (!tools)
		return -ENOMEM;
	for (size_t i = 0; i < srv->n_tools; i++) {
		json_t *t = tool_json(&srv->tools[i]);

		if (!t || json_array_append_new(tools, t) < 0) {
			json_decref(tools);
			return send_error(fd, id, -32603, "internal error building the tool list");
		}
	}
	result = json_pack("{s:o}", "tools", tools);
	if (!result)
		return -ENOMEM;
	return send_result(fd, id, result);
}

static int send_tool_result(int fd, json_t *id, struct mcp_call_result *res, bool ok);

int mcp_server_send_tool_result(struct mcp_server *srv, json_t *id, struct mcp_call_result *res)
{
	return send_tool_result(srv->out_fd, id, res, !res->error[0] && res->structured);
}

static int send_tool_result(int fd, json_t *id, struct mcp_call_result *res, bool ok)
{
	json_t *result;

	if (!ok) {
		json_decref(res->structured);
		res->structured = NULL;
		if (!res->error[0])
			snprintf(res->error, sizeof(res->error), "tool failed");
		result = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", res->error, "isError",
				   1);
	} else {
		_cleanup_free_ char *text = json_dumps(res->structured, JSON_COMPACT);

		result = json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text", "text", text ? text : "{}",
				   "structuredContent", res->structured, "isError", 0);
		res->structured = NULL;
	}
	if (!result)
		return -ENOMEM;
	return send_result(fd, id, result);
}

static int handle_tools_call(const struct mcp_server *srv, int fd, json_t *id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	struct mcp_call_result res = { 0 };
	const struct mcp_tool *tool = NULL;
	int r;

	if (!name)
		return send_error(fd, id, -32602, "tools/call: params.name must be a string");
	for (size_t i = 0; i < srv->n_tools; i++)
		if (strcmp(srv->tools[i].name, name) == 0)
			tool = &srv->tools[i];
	if (!tool)
		return send_error(fd, id, -32602, "tools/call: unknown tool");
	if (args && !json_is_object(args))
		return send_error(fd, id, -32602, "tools/call: params.arguments must be an object");

	_cleanup_(json_decrefp) json_t *empty = json_object();
	r = tool->call(srv->ctx, id, args ? args : empty, &res);
	if (r == MCP_DEFERRED)
		return 0;
	return send_tool_result(fd, id, &res, r == 0 && res.structured);
}

static int handle_line(const struct mcp_server *srv, int out, const char *line, size_t len)
{
	_cleanup_(json_decrefp) json_t *msg = NULL;
	json_error_t err;
	json_t *id, *params;
	const char *method;

	msg = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);
	if (!msg) {
		char m[256];

		snprintf(m, sizeof(m), "parse error at line 1, column %d: %s", err.column, err.text);
		return send_error(out, NULL, -32700, m);
	}
	if (json_is_array(msg))
		return send_error(out, NULL, -32600, "batches are not supported");
	if (!json_is_object(msg) || !json_is_string(json_object_get(msg, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") != 0)
		return send_error(out, NULL, -32600, "not a JSON-RPC 2.0 message");

	id = json_object_get(msg, "id");
	method = json_string_value(json_object_get(msg, "method"));
	params = json_object_get(msg, "params");
	if (!method) {
		/* A response to a request we never send: ignore. */
		return 0;
	}
	if (!id) { /* notification: nothing to answer */
		if (srv->on_notification)
			srv->on_notification(srv->ctx, method, params);
		return 0;
	}
	if (!json_is_string(id) && !json_is_integer(id))
		return send_error(out, NULL, -32600, "id must be a string or an integer");
	if (params && !json_is_object(params))
		return send_error(out, id, -32602, "params must be an object");

	if (strcmp(method, "initialize") == 0)
		return handle_initialize(srv, out, id, params);
	if (strcmp(method, "ping") == 0)
		return send_result(out, id, json_object());
	if (strcmp(method, "tools/list") == 0)
		return handle_tools_list(srv, out, id);
	if (strcmp(method, "tools/call") == 0)
		return handle_tools_call(srv, out, id, params);
	return send_error(out, id, -32601, "method not found");
}

int mcp_server_run(struct mcp_server *srv, int in_fd, int out_fd)
{
	_cleanup_free_ char *buf = NULL;
	size_t cap = 65536, len = 0;
	bool discarding = false;

	srv->out_fd = out_fd;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		struct pollfd fds[64];
		size_t nfds = 1;
		int timeout = -1;
		ssize_t n;
		char *nl;

		fds[0] = (struct pollfd){ .fd = in_fd, .events = POLLIN };
		if (srv->fill_pollfds)
			nfds += srv->fill_pollfds(srv->ctx, fds + 1, ELEMENTSOF(fds) - 1, &timeout);
		if (poll(fds, nfds, timeout) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (srv->handle_pollfds)
			srv->handle_pollfds(srv->ctx, fds + 1, nfds - 1);
		if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;

		if (len == cap) {
			if (cap >= MCP_MAX_LINE) {
				/* Oversized line: answer once, drop it to its end. */
				if (!discarding) {
					int r = send_error(out_fd, NULL, -32600, "message exceeds the 4 MiB line limit");

					if (r < 0)
						return r;
				}
				discarding = true;
				len = 0;
			} else {
				size_t ncap = cap * 2 > MCP_MAX_LINE ? MCP_MAX_LINE : cap * 2;
				char *nb = realloc(buf, ncap);

				if (!nb)
					return -ENOMEM;
				buf = nb;
				cap = ncap;
			}
		}
		n = read(in_fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			return 0;
		len += (size_t)n;
		while ((nl = memchr(buf, '\n', len))) {
			size_t ll = (size_t)(nl - buf);
			int r = 0;

			if (discarding)
				discarding = false;
			else if (ll > 0 && !(ll == 1 && buf[0] == '\r'))
				r = handle_line(srv, out_fd, buf, ll);
			if (r < 0)
				return r;
			memmove(buf, nl + 1, len - ll - 1);
			len -= ll + 1;
		}
	}
}

int mcp_arg_string(json_t *args, const char *name, bool required, const char **ret, struct mcp_call_result *res)
{
	json_t *v = json_object_get(args, name);

	if (!v) {
		if (required)
			return mcp_error(res, "argument '%s': required", name);
		return 0;
	}
	if (!json_is_string(v))
		return mcp_error(res, "argument '%s': must be a string", name);
	if (strlen(json_string_value(v)) != json_string_length(v))
		return mcp_error(res, "argument '%s': must not contain NUL", name);
	*ret = json_string_value(v);
	return 0;
}

int mcp_arg_uint(json_t *args, const char *name, bool required, unsigned long long max, unsigned long long *ret,
		 struct mcp_call_result *res)
{
	json_t *v = json_object_get(args, name);

	if (!v) {
		if (required)
			return mcp_error(res, "argument '%s': required", name);
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return mcp_error(res, "argument '%s': must be a non-negative integer", name);
	if ((unsigned long long)json_integer_value(v) > max)
		return mcp_error(res, "argument '%s': must be at most %llu", name, max);
	*ret = (unsigned long long)json_integer_value(v);
	return 0;
}

int mcp_arg_bool(json_t *args, const char *name, bool *ret, struct mcp_call_result *res)
{
	json_t *v = json_object_get(args, name);

	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return mcp_error(res, "argument '%s': must be true or false", name);
	*ret = json_is_true(v);
	return 0;
}

int mcp_args_only(json_t *args, const char *const *allowed, struct mcp_call_result *res)
{
	const char *key;
	json_t *v;

	json_object_foreach(args, key, v) {
		bool ok = false;

		for (const char *const *a = allowed; *a; a++)
			if (strcmp(*a, key) == 0)
				ok = true;
		if (!ok)
			return mcp_error(res, "argument '%s': unknown argument", key);
	}
	return 0;
}
