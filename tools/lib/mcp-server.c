/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "mcp-server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-util.h"
#include "json-scan.h"

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

/* A streaming JSON writer that produces exactly what json_dumps(v,
 * JSON_COMPACT) would (members in insertion order, the same escapes), but
 * writes into a fixed buffer flushed to the fd instead of building the whole
 * text in memory: a 16 MiB file's content is escaped once per level on its
 * way out, with no growing buffer and no second copy. A "level" encodes the
 * text as the contents of that many nested JSON strings (level 1 is the
 * content[0].text copy of structuredContent). */
struct out {
	int fd;
	int err;		 /* first write error, -errno */
	const json_t *blob_slot; /* written as the string blob[0..blob_len) */
	const char *blob;
	size_t blob_len;
	size_t len;
	char buf[256 * 1024];
};

static void out_flush(struct out *o)
{
	if (o->len && !o->err) {
		int r = write_all(o->fd, o->buf, o->len);

		if (r < 0)
			o->err = r;
	}
	o->len = 0;
}

static void out_raw(struct out *o, const char *s, size_t n)
{
	if (n > sizeof(o->buf) - o->len) {
		out_flush(o);
		if (n >= sizeof(o->buf)) {
			if (!o->err) {
				int r = write_all(o->fd, s, n);

				if (r < 0)
					o->err = r;
			}
			return;
		}
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

/* True for the bytes jansson escapes in a string: '"', '\\' and controls. */
static inline bool needs_escape(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\';
}

/* Length of the leading run of s that needs no escape; eight bytes at a time
 * (a byte is < 0x20, or equal to '"' or '\\', when its lane's test sets the
 * high bit). */
static size_t safe_run(const unsigned char *s, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t x, q, b;

		memcpy(&x, s + i, 8);
		q = x ^ (ones * '"');
		b = x ^ (ones * '\\');
		if ((((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b)) & high)
			break;
	}
	while (i < n && !needs_escape(s[i]))
		i++;
	return i;
}

static void out_put(struct out *o, const char *s, size_t n, unsigned level);

/* Writes the JSON string escape of s (without quotes) at the given level. */
static void out_escaped(struct out *o, const char *s, size_t n, unsigned level)
{
	while (n > 0) {
		size_t run = safe_run((const unsigned char *)s, n);
		unsigned char c;
		char seq[8];
		size_t k = 2;

		/* Unescaped bytes are unescaped at every level. */
		out_raw(o, s, run);
		s += run;
		n -= run;
		if (!n)
			break;
		c = (unsigned char)*s;
		seq[0] = '\\';
		switch (c) {
		case '"':
			seq[1] = '"';
			break;
		case '\\':
			seq[1] = '\\';
			break;
		case '\b':
			seq[1] = 'b';
			break;
		case '\f':
			seq[1] = 'f';
			break;
		case '\n':
			seq[1] = 'n';
			break;
		case '\r':
			seq[1] = 'r';
			break;
		case '\t':
			seq[1] = 't';
			break;
		default:
			k = (size_t)snprintf(seq, sizeof(seq), "\\u%04X", c);
		}
		out_put(o, seq, k, level);
		s++;
		n--;
	}
}

/* Writes s as it appears inside `level` nested JSON strings. */
static void out_put(struct out *o, const char *s, size_t n, unsigned level)
{
	if (level == 0)
		out_raw(o, s, n);
	else
		out_escaped(o, s, n, level - 1);
}

#define OUT_LIT(o, lit, level) out_put(o, lit, sizeof(lit) - 1, level)

static void out_string(struct out *o, const char *s, size_t n, unsigned level)
{
	OUT_LIT(o, "\"", level);
	out_escaped(o, s, n, level);
	OUT_LIT(o, "\"", level);
}

static void out_value(struct out *o, json_t *v, unsigned level)
{
	char num[32];

	if (v == o->blob_slot) {
		out_string(o, o->blob, o->blob_len, level);
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *m;
		bool first = true;

		OUT_LIT(o, "{", level);
		json_object_foreach(v, key, m)
		{
			if (!first)
				OUT_LIT(o, ",", level);
			first = false;
			out_string(o, key, strlen(key), level);
			OUT_LIT(o, ":", level);
			out_value(o, m, level);
		}
		OUT_LIT(o, "}", level);
		return;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *m;

		OUT_LIT(o, "[", level);
		json_array_foreach(v, i, m)
		{
			if (i)
				OUT_LIT(o, ",", level);
			out_value(o, m, level);
		}
		OUT_LIT(o, "]", level);
		return;
	}
	case JSON_STRING:
		out_string(o, json_string_value(v), json_string_length(v), level);
		return;
	case JSON_INTEGER:
		out_put(o, num, (size_t)snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v)),
			level);
		return;
	case JSON_TRUE:
		OUT_LIT(o, "true", level);
		return;
	case JSON_FALSE:
		OUT_LIT(o, "false", level);
		return;
	case JSON_NULL:
		OUT_LIT(o, "null", level);
		return;
	default: {
		/* Reals: jansson's own formatting, so the bytes stay identical. */
		_cleanup_free_ char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

		if (!s) {
			if (!o->err)
				o->err = -ENOMEM;
			return;
		}
		out_put(o, s, strlen(s), level);
	}
	}
}

static int out_finish(struct out *o)
{
	out_raw(o, "\n", 1);
	out_flush(o);
	return o->err;
}

static struct out *out_new(int fd)
{
	struct out *o = malloc(sizeof(*o));

	if (o) {
		o->fd = fd;
		o->err = 0;
		o->blob_slot = NULL;
		o->blob = NULL;
		o->blob_len = 0;
		o->len = 0;
	}
	return o;
}

static int send_json(int fd, json_t *msg)
{
	_cleanup_free_ struct out *o = out_new(fd);

	if (!o)
		return -ENOMEM;
	out_value(o, msg, 0);
	return out_finish(o);
}

static int send_result(int fd, json_t *id, json_t *result)
{
	_cleanup_(json_decrefp) json_t *msg =
		json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);

	if (!msg)
		return -ENOMEM;
	return send_json(fd, msg);
}

static int send_error(int fd, json_t *id, int code, const char *message)
{
	_cleanup_(json_decrefp) json_t *msg =
		json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", "code",
			  code, "message", message);

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
	_cleanup_free_ char *blob = res->blob;
	json_t *result;

	res->blob = NULL;
	if (!ok) {
		json_decref(res->structured);
		res->structured = NULL;
		if (!res->error[0])
			snprintf(res->error, sizeof(res->error), "tool failed");
		result =
			json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", res->error, "isError", 1);
	} else {
		/* Streamed: the same bytes as json_pack("{s:[{s:s, s:s}], s:o,
		 * s:b}", ..., json_dumps(structured), structured, false) inside
		 * the JSON-RPC envelope, with the text copy escaped on the fly
		 * instead of dumped, re-parsed and dumped again. */
		_cleanup_free_ struct out *o = out_new(fd);
		_cleanup_(json_decrefp) json_t *sc = res->structured;

		res->structured = NULL;
		if (!o)
			return -ENOMEM;
		if (blob) {
			o->blob_slot = res->blob_slot;
			o->blob = blob;
			o->blob_len = res->blob_len;
		}
		OUT_LIT(o, "{\"jsonrpc\":\"2.0\",\"id\":", 0);
		out_value(o, id, 0);
		OUT_LIT(o, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"", 0);
		out_value(o, sc, 1);
		OUT_LIT(o, "\"}],\"structuredContent\":", 0);
		out_value(o, sc, 0);
		OUT_LIT(o, ",\"isError\":false}}", 0);
		return out_finish(o);
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

/* Lines at least this long try the lifted parse by default (see
 * lift_argument): below it, jansson's parse costs little. */
#define LIFT_MIN_LINE (64u * 1024)

/* Parses a request line. With srv->lift_argument, a long line whose
 * params.arguments.<lift_argument> is a string is parsed in two parts:
 * jansson (JSON_REJECT_DUPLICATES) parses the line with that string's text
 * cut out (leaving ""), so every rule but the string's own is jansson's, a
 * second member of that name included; json-scan then checks and decodes the
 * string in place, in one pass, and the decoded text replaces the "". The
 * tree is what json_loadb() gives for the whole line. When the rest of the
 * line does not parse, the whole line goes to jansson for its exact error;
 * when only the string is invalid, the error names the argument (the line
 * is decoded in place, so jansson cannot see it any more) and
 * *ret_bad_lifted is set. */
static json_t *parse_line(const struct mcp_server *srv, char *line, size_t len, json_error_t *err, bool *ret_bad_lifted)
{
	const char *const path[] = { "params", "arguments", srv->lift_argument, NULL };
	_cleanup_free_ char *rest = NULL;
	_cleanup_(json_decrefp) json_t *msg = NULL;
	struct json_span sp;
	json_t *args, *v, *s;
	ssize_t n;

	*ret_bad_lifted = false;
	if (!srv->lift_argument || len < (srv->lift_min_line ? srv->lift_min_line : LIFT_MIN_LINE) ||
	    json_scan_find(line, len, path, 64, &sp) != 1 || sp.first != '"')
		return json_loadb(line, len, JSON_REJECT_DUPLICATES, err);
	rest = malloc(len - sp.len);
	if (!rest)
		return json_loadb(line, len, JSON_REJECT_DUPLICATES, err);
	memcpy(rest, line, sp.offset);
	memcpy(rest + sp.offset, line + sp.offset + sp.len, len - sp.offset - sp.len);
	msg = json_loadb(rest, len - sp.len, JSON_REJECT_DUPLICATES, err);
	args = json_object_get(json_object_get(msg, "params"), "arguments");
	v = json_object_get(args, srv->lift_argument);
	/* The scan and jansson agree on where the string is unless the line is
	 * refused; anything else is the reference path's to judge. */
	if (!json_is_string(v) || json_string_length(v) != 0)
		return json_loadb(line, len, JSON_REJECT_DUPLICATES, err);
	n = json_string_decode(line + sp.offset, sp.len, line + sp.offset);
	if (n < 0) {
		*ret_bad_lifted = true;
		return NULL;
	}
	s = json_stringn_nocheck(line + sp.offset, (size_t)n);
	if (!s || json_object_set_new(args, srv->lift_argument, s) < 0) {
		snprintf(err->text, sizeof(err->text), "out of memory");
		err->column = 0;
		return NULL;
	}
	return TAKE_PTR(msg);
}

static int handle_line(const struct mcp_server *srv, int out, char *line, size_t len)
{
	_cleanup_(json_decrefp) json_t *msg = NULL;
	json_error_t err;
	json_t *id, *params;
	const char *method;
	bool bad_lifted;

	msg = parse_line(srv, line, len, &err, &bad_lifted);
	if (!msg && bad_lifted) {
		char m[256];

		snprintf(m, sizeof(m),
			 "parse error in params.arguments.%s: invalid string (UTF-8, control character or escape)",
			 srv->lift_argument);
		return send_error(out, NULL, -32700, m);
	}
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

/* A pipe of 1 MiB instead of 64 KiB: a 32 MiB response (a 16 MiB file read)
 * then crosses in 32 wake-ups of the reader instead of 512. Best effort: the
 * kernel refuses it beyond fs.pipe-max-size or the user's pipe page quota,
 * and then the pipe stays as it is. */
static void grow_pipe(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
		(void)fcntl(fd, F_SETPIPE_SZ, 1024 * 1024);
}

int mcp_server_run(struct mcp_server *srv, int in_fd, int out_fd)
{
	_cleanup_free_ char *buf = NULL;
	size_t cap = 65536, len = 0, scanned = 0;
	size_t max_line = srv->max_line ? srv->max_line : MCP_MAX_LINE;
	bool discarding = false;

	srv->out_fd = out_fd;
	grow_pipe(in_fd);
	grow_pipe(out_fd);
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
			if (cap >= max_line) {
				/* Oversized line: answer once, drop it to its end. */
				if (!discarding) {
					char m[80];
					int r;

					snprintf(m, sizeof(m), "message exceeds the %zu MiB line limit",
						 max_line / (1024 * 1024));
					r = send_error(out_fd, NULL, -32600, m);
					if (r < 0)
						return r;
				}
				discarding = true;
				len = 0;
				scanned = 0;
			} else {
				size_t ncap = cap * 2 > max_line ? max_line : cap * 2;
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
		/* Only the bytes that arrived since the last look can hold the
		 * newline: a long line comes in many pipe-sized reads, and
		 * rescanning it from the start each time would be quadratic. */
		while ((nl = memchr(buf + scanned, '\n', len - scanned))) {
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
			scanned = 0;
		}
		scanned = len;
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

	json_object_foreach(args, key, v)
	{
		bool ok = false;

		for (const char *const *a = allowed; *a; a++)
			if (strcmp(*a, key) == 0)
				ok = true;
		if (!ok)
			return mcp_error(res, "argument '%s': unknown argument", key);
	}
	return 0;
}
