/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The operator protocol's codec: strict request admission, the op table and
 * response encoding. See operator-proto.h for the wire format. */

#include "operator-proto.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "canon.h"
#include "cleanup.h"

#define S(n, req)                                                                                                      \
	{                                                                                                              \
		.name = (n), .type = CORDON_OP_ARG_STRING, .required = (req)                                           \
	}
#define B(n)                                                                                                           \
	{                                                                                                              \
		.name = (n), .type = CORDON_OP_ARG_BOOL                                                                \
	}
#define U(n, m)                                                                                                        \
	{                                                                                                              \
		.name = (n), .type = CORDON_OP_ARG_UINT, .max = (m)                                                    \
	}
#define L(n, req)                                                                                                      \
	{                                                                                                              \
		.name = (n), .type = CORDON_OP_ARG_STRING_LIST, .required = (req)                                      \
	}

/* clang-format off */
const struct cordon_op_spec cordon_op_table[] = {
	{ "status",              false, {} },
	{ "capabilities",        false, {} },
	{ "connectors.list",     false, {} },
	{ "connectors.add",      true,  { S("connector", true) } },
	{ "connectors.remove",   true,  { S("connector", true) } },
	{ "connectors.restart",  true,  { S("connector", true) } },
	{ "inventory.show",      false, { S("connector", true), S("tool", false), B("all") } },
	{ "inventory.review",    true,  { S("connector", true), S("tool", true), S("fingerprint", true) } },
	{ "inventory.review-all", true, { S("connector", true), S("fingerprint_set", true) } },
	{ "grants.show",         false, { S("connector", true) } },
	{ "grants.set",          true,  { S("connector", true), L("tools", true), B("allow_unknown") } },
	{ "grants.add",          true,  { S("connector", true), S("tool", true), B("allow_unknown") } },
	{ "grants.remove",       true,  { S("connector", true), S("tool", true) } },
	{ "approvals.list",      false, { B("all"), S("connector", false) } },
	{ "approvals.show",      false, { S("id", true), B("reveal") } },
	{ "approvals.watch",     false, { U("after_seq", (1ull << 53) - 1) } },
	{ "approvals.approve",   true,  { S("id", true), S("code", false) } },
	{ "approvals.deny",      true,  { S("id", true) } },
	{ "delegations.list",    false, { B("all") } },
	{ "delegations.approve", true,  { S("id", true) } },
	{ "delegations.deny",    true,  { S("id", true) } },
	{ "delegations.revoke",  true,  { S("id", true) } },
	{ "actions.list",        false, { B("all") } },
	{ "actions.resolve",     true,  { S("id", true), S("outcome", true) } },
	{ "audit.tail",          false, { U("count", 1000) } },
	{ "audit.verify",        false, { S("key", false) } },
	{ "audit.export",        false, { U("after_seq", (1ull << 53) - 1), S("since", false), S("until", false),
					  U("limit", 1000) } },
	{ "audit.key",           false, {} },
	{ "agents.list",         false, { B("all") } },
	{ "agents.add",          true,  { S("name", true) } },
	{ "agents.revoke",       true,  { S("name", true) } },
	{ "revoke-all",          true,  {} },
	{ "reload",              true,  {} },
	{ "backup",              false, {} },
	{ NULL, false, {} },
};
/* clang-format on */

const struct cordon_op_spec *cordon_op_lookup(const char *name)
{
	if (!name)
		return NULL;
	for (const struct cordon_op_spec *s = cordon_op_table; s->name; s++)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

int cordon_op_error_set(struct cordon_op_error *e, int error, const char *code, const char *fmt, ...)
{
	if (e) {
		va_list ap;

		e->code = code;
		va_start(ap, fmt);
		vsnprintf(e->message, sizeof(e->message), fmt, ap);
		va_end(ap);
	}
	return -error;
}

void cordon_op_request_done(struct cordon_op_request *r)
{
	if (!r)
		return;
	json_decref(r->id);
	json_decref(r->args);
	*r = (struct cordon_op_request){};
}

static const char *type_name(enum cordon_op_arg_type t)
{
	switch (t) {
	case CORDON_OP_ARG_STRING:
		return "a string";
	case CORDON_OP_ARG_BOOL:
		return "a boolean";
	case CORDON_OP_ARG_UINT:
		return "a non-negative integer";
	case CORDON_OP_ARG_STRING_LIST:
		return "an array of strings";
	}
	return "?";
}

static void allowed_list(const struct cordon_op_spec *op, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < CORDON_OP_MAX_ARGS && op->args[i].name; i++) {
		int n = snprintf(buf + off, size - off, "%s%s", off ? ", " : "", op->args[i].name);

		if (n < 0 || (size_t)n >= size - off)
			break;
		off += (size_t)n;
	}
	if (!buf[0])
		snprintf(buf, size, "none");
}

static int check_string(const json_t *v, const struct cordon_op_arg_spec *a, const char *what,
			struct cordon_op_error *err)
{
	size_t max = a->max ? a->max : CORDON_OP_MAX_STRING;

	if (!json_is_string(v))
		return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG, "%s must be a string", what);
	if (json_string_length(v) == 0)
		return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG, "%s must not be empty", what);
	if (json_string_length(v) > max)
		return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG, "%s is longer than %zu bytes", what, max);
	return 0;
}

static int check_arg(const struct cordon_op_spec *op, const struct cordon_op_arg_spec *a, const json_t *v,
		     struct cordon_op_error *err)
{
	char what[96];

	snprintf(what, sizeof(what), "argument \"%s\" of %s", a->name, op->name);
	switch (a->type) {
	case CORDON_OP_ARG_STRING:
		return check_string(v, a, what, err);
	case CORDON_OP_ARG_BOOL:
		if (!json_is_boolean(v))
			return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG, "%s must be %s", what,
						   type_name(a->type));
		return 0;
	case CORDON_OP_ARG_UINT:
		if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > a->max)
			return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG,
						   "%s must be an integer from 0 to %llu", what,
						   (unsigned long long)a->max);
		return 0;
	case CORDON_OP_ARG_STRING_LIST: {
		size_t i;
		const json_t *e;

		if (!json_is_array(v))
			return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG, "%s must be %s", what,
						   type_name(a->type));
		if (json_array_size(v) > CORDON_OP_MAX_LIST)
			return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG, "%s has more than %d elements",
						   what, CORDON_OP_MAX_LIST);
		json_array_foreach(v, i, e)
		{
			char ewhat[160];
			int r;

			snprintf(ewhat, sizeof(ewhat), "element %zu of %s", i, what);
			r = check_string(e, a, ewhat, err);
			if (r < 0)
				return r;
		}
		return 0;
	}
	}
	return cordon_op_error_set(err, EINVAL, CORDON_OP_E_BAD_ARG, "%s has an unknown type", what);
}

static int check_args(const struct cordon_op_spec *op, const json_t *args, struct cordon_op_error *err)
{
	const char *k;
	const json_t *v;
	char allowed[128];

	/* Unknown names first, so a typo is reported as such rather than as a
	 * missing required argument. */
	json_object_foreach((json_t *)args, k, v)
	{
		const struct cordon_op_arg_spec *a = NULL;
		int r;

		for (size_t i = 0; i < CORDON_OP_MAX_ARGS && op->args[i].name; i++)
			if (strcmp(op->args[i].name, k) == 0)
				a = &op->args[i];
		if (!a) {
			allowed_list(op, allowed, sizeof(allowed));
			return cordon_op_error_set(err, EINVAL, CORDON_OP_E_UNKNOWN_ARG,
						   "unknown argument \"%.64s\" for %s (allowed: %s)", k, op->name,
						   allowed);
		}
		r = check_arg(op, a, v, err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < CORDON_OP_MAX_ARGS && op->args[i].name; i++)
		if (op->args[i].required && !json_object_get(args, op->args[i].name))
			return cordon_op_error_set(err, EINVAL, CORDON_OP_E_MISSING_ARG,
						   "missing argument \"%s\" for %s", op->args[i].name, op->name);
	return 0;
}

int cordon_op_request_decode(const char *buf, size_t len, struct cordon_op_request *ret, struct cordon_op_error *err)
{
	struct cordon_canon_limits lim = { .max_bytes = CORDON_OP_MAX_REQUEST, .max_depth = CORDON_OP_MAX_DEPTH };
	struct cordon_diag d = {};
	json_t *doc = NULL, *v, *id, *op, *args;
	const struct cordon_op_spec *spec;
	const char *k;
	int r;

	*ret = (struct cordon_op_request){ .fd = -1 };
	r = cordon_canon_decode(buf, len, &lim, &doc, &d);
	if (r == -EMSGSIZE)
		return cordon_op_error_set(err, EMSGSIZE, CORDON_OP_E_TOO_LARGE,
					   "request of %zu bytes is larger than the limit of %zu bytes", len,
					   CORDON_OP_MAX_REQUEST);
	if (r < 0)
		return cordon_op_error_set(err, EINVAL, CORDON_OP_E_PARSE, "request is not admissible JSON: %s",
					   d.message);

	if (!json_is_object(doc)) {
		r = cordon_op_error_set(err, EINVAL, CORDON_OP_E_INVALID, "request must be a JSON object");
		goto out;
	}
	/* The id first, so every later error can echo it. */
	id = json_object_get(doc, "id");
	if (id && json_is_integer(id) && json_integer_value(id) >= 0)
		ret->id = json_incref(id);

	json_object_foreach(doc, k, v)
	{
		if (!strcmp(k, "v") || !strcmp(k, "id") || !strcmp(k, "op") || !strcmp(k, "args"))
			continue;
		r = cordon_op_error_set(err, EINVAL, CORDON_OP_E_INVALID,
					"unknown member \"%.64s\" in request (allowed: v, id, op, args)", k);
		goto out;
	}
	v = json_object_get(doc, "v");
	if (!v) {
		r = cordon_op_error_set(err, EINVAL, CORDON_OP_E_INVALID, "request has no member \"v\"");
		goto out;
	}
	if (!json_is_integer(v) || json_integer_value(v) != CORDON_OP_VERSION) {
		r = cordon_op_error_set(err, EPROTO, CORDON_OP_E_VERSION,
					"unsupported protocol version (\"v\" must be the integer %d)",
					CORDON_OP_VERSION);
		goto out;
	}
	if (!id) {
		r = cordon_op_error_set(err, EINVAL, CORDON_OP_E_INVALID, "request has no member \"id\"");
		goto out;
	}
	if (!ret->id) {
		r = cordon_op_error_set(err, EINVAL, CORDON_OP_E_INVALID, "\"id\" must be a non-negative integer");
		goto out;
	}
	op = json_object_get(doc, "op");
	if (!op) {
		r = cordon_op_error_set(err, EINVAL, CORDON_OP_E_INVALID, "request has no member \"op\"");
		goto out;
	}
	if (!json_is_string(op)) {
		r = cordon_op_error_set(err, EINVAL, CORDON_OP_E_INVALID, "\"op\" must be a string");
		goto out;
	}
	spec = cordon_op_lookup(json_string_value(op));
	if (!spec) {
		r = cordon_op_error_set(err, ENOSYS, CORDON_OP_E_UNKNOWN_OP, "unknown op \"%.64s\"",
					json_string_value(op));
		goto out;
	}
	args = json_object_get(doc, "args");
	if (args && !json_is_object(args)) {
		r = cordon_op_error_set(err, EINVAL, CORDON_OP_E_INVALID, "\"args\" must be an object");
		goto out;
	}
	if (args) {
		r = check_args(spec, args, err);
		if (r < 0)
			goto out;
		ret->args = json_incref(args);
	} else {
		ret->args = json_object();
		if (ret->args) {
			r = check_args(spec, ret->args, err); /* reports missing required arguments */
			if (r < 0)
				goto out;
		}
		if (!ret->args) {
			r = cordon_op_error_set(err, ENOMEM, CORDON_OP_E_FAILED, "out of memory");
			goto out;
		}
	}
	ret->op = spec;
	r = 0;
out:
	json_decref(doc);
	if (r < 0) {
		json_decref(ret->args);
		ret->args = NULL;
		ret->op = NULL;
	}
	return r;
}

const char *cordon_op_arg_string(const struct cordon_op_request *r, const char *name)
{
	return json_string_value(json_object_get(r->args, name));
}

bool cordon_op_arg_bool(const struct cordon_op_request *r, const char *name, bool fallback)
{
	const json_t *v = json_object_get(r->args, name);

	return json_is_boolean(v) ? json_is_true(v) : fallback;
}

uint64_t cordon_op_arg_uint(const struct cordon_op_request *r, const char *name, uint64_t fallback)
{
	const json_t *v = json_object_get(r->args, name);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : fallback;
}

const json_t *cordon_op_arg_list(const struct cordon_op_request *r, const char *name)
{
	const json_t *v = json_object_get(r->args, name);

	return json_is_array(v) ? v : NULL;
}

static int encode_line(json_t *doc, char **ret, size_t *ret_len)
{
	char *s;
	size_t n;

	if (!doc)
		return -ENOMEM;
	/* Compact jansson output never contains a raw newline (strings escape
	 * it), so the line framing cannot be broken by any value. */
	s = json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(doc);
	if (!s)
		return -ENOMEM;
	n = strlen(s);
	{
		char *t = realloc(s, n + 2);

		if (!t) {
			free(s);
			return -ENOMEM;
		}
		s = t;
	}
	s[n++] = '\n';
	s[n] = 0;
	*ret = s;
	if (ret_len)
		*ret_len = n;
	return 0;
}

int cordon_op_response_ok(const json_t *id, const json_t *result, char **ret, size_t *ret_len)
{
	return encode_line(json_pack("{s:i, s:O, s:b, s:O}", "v", CORDON_OP_VERSION, "id", id ? id : json_null(), "ok",
				     1, "result", result ? result : json_null()),
			   ret, ret_len);
}

int cordon_op_response_error(const json_t *id, const struct cordon_op_error *e, char **ret, size_t *ret_len)
{
	return encode_line(json_pack("{s:i, s:O, s:b, s:{s:s, s:s}}", "v", CORDON_OP_VERSION, "id",
				     id ? id : json_null(), "ok", 0, "error", "code",
				     e->code ? e->code : CORDON_OP_E_FAILED, "message", e->message),
			   ret, ret_len);
}

int cordon_op_request_encode(uint64_t id, const char *op, const json_t *args, char **ret, size_t *ret_len)
{
	if (!cordon_op_lookup(op) || id > (uint64_t)CORDON_CANON_MAX_SAFE_INTEGER)
		return -EINVAL;
	if (args)
		return encode_line(json_pack("{s:i, s:I, s:s, s:O}", "v", CORDON_OP_VERSION, "id", (json_int_t)id, "op",
					     op, "args", args),
				   ret, ret_len);
	return encode_line(json_pack("{s:i, s:I, s:s}", "v", CORDON_OP_VERSION, "id", (json_int_t)id, "op", op), ret,
			   ret_len);
}

int cordon_op_response_decode(const char *buf, size_t len, uint64_t expected_id, bool *ret_ok, json_t **ret,
			      struct cordon_op_error *err)
{
	/* Results nest deeper than requests (health detail, audit records). */
	struct cordon_canon_limits lim = { .max_bytes = CORDON_OP_MAX_RESPONSE, .max_depth = 64 };
	struct cordon_diag d = {};
	json_t *doc = NULL, *ok, *id, *v;
	int r;

	r = cordon_canon_decode(buf, len, &lim, &doc, &d);
	if (r < 0)
		return cordon_op_error_set(err, EBADMSG, CORDON_OP_E_PARSE, "response is not admissible JSON: %s",
					   d.message);
	v = json_object_get(doc, "v");
	id = json_object_get(doc, "id");
	ok = json_object_get(doc, "ok");
	if (!json_is_object(doc) || !json_is_integer(v) || json_integer_value(v) != CORDON_OP_VERSION ||
	    !json_is_boolean(ok)) {
		r = cordon_op_error_set(err, EBADMSG, CORDON_OP_E_INVALID, "malformed response envelope");
		goto out;
	}
	if (json_is_true(ok)) {
		if (!json_is_integer(id) || (uint64_t)json_integer_value(id) != expected_id) {
			r = cordon_op_error_set(err, EBADMSG, CORDON_OP_E_INVALID, "response id does not match");
			goto out;
		}
		*ret = json_incref(json_object_get(doc, "result"));
		if (!*ret)
			*ret = json_null();
	} else {
		json_t *e = json_object_get(doc, "error");

		/* An error may carry id null (the server could not read ours). */
		if (!(json_is_null(id) || (json_is_integer(id) && (uint64_t)json_integer_value(id) == expected_id)) ||
		    !json_is_object(e) || !json_is_string(json_object_get(e, "code")) ||
		    !json_is_string(json_object_get(e, "message"))) {
			r = cordon_op_error_set(err, EBADMSG, CORDON_OP_E_INVALID, "malformed error response");
			goto out;
		}
		*ret = json_incref(e);
	}
	*ret_ok = json_is_true(ok);
	r = 0;
out:
	json_decref(doc);
	return r;
}

const char *cordon_op_errno_code(int error)
{
	if (error < 0)
		error = -error;
	switch (error) {
	case EPERM:
		return CORDON_OP_E_DENIED;
	case ENOENT:
		return CORDON_OP_E_NOT_FOUND;
	case EEXIST:
		return CORDON_OP_E_EXISTS;
	case EALREADY:
		return CORDON_OP_E_ALREADY;
	case ETIME:
		return CORDON_OP_E_EXPIRED;
	case EACCES:
		return CORDON_OP_E_CODE;
	case ESTALE:
		return CORDON_OP_E_STALE;
	case ENODEV:
		return CORDON_OP_E_GONE;
	case EXDEV:
		return CORDON_OP_E_OUTSIDE;
	case EINVAL:
		return CORDON_OP_E_BAD_ARG;
	case ENOTUNIQ:
		return CORDON_OP_E_AMBIGUOUS;
	case EOPNOTSUPP:
	case ENOSYS:
		return CORDON_OP_E_UNAVAILABLE;
	default:
		return CORDON_OP_E_FAILED;
	}
}
