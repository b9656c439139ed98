/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The strict connector-profile loader (docs/profiles.md).
 *
 * Loading runs in three passes, each of which can only refuse:
 *   1. raw bytes: size bound (checked before anything is read into memory
 *      beyond the bound), NUL bytes, UTF-8 validity, control characters and
 *      tabs in indentation. These are checked by hand so that each gets a
 *      precise message instead of a generic scanner error.
 *   2. libyaml's event API builds a small tree of our own. Anchors, aliases
 *      and tags are refused the moment the parser reports them, before any
 *      node is shared or expanded (no billion laughs); nesting depth and node
 *      count are bounded while the tree grows.
 *   3. the tree is validated against the schema and converted into a struct
 *      cordon_profile. Errors are collected (up to CORDON_PROFILE_MAX_ERRORS)
 *      rather than stopping at the first, sorted by position, and the
 *      half-built profile is freed: nothing of a bad profile is returned. */
#include "profile.h"
#include "profile-internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "cleanup.h"
#include "fd-util.h"
#include "parse-util.h"

/* Syscall names are checked with the seccomp module's own resolver, so the
 * loader accepts exactly what the compiler accepts (libseccomp's names plus
 * cordon's table of syscalls newer than libseccomp). */
#include "seccomp.h"

/* ---- the tree ------------------------------------------------------------ */
static void node_free(struct node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n_items; i++)
		node_free(n->items[i]);
	free(n->items);
	free(n->value);
	free(n);
}

size_t profile_map_size(const struct node *n)
{
	return n->n_items / 2;
}

bool profile_node_is_null(const struct node *n)
{
	/* YAML 1.1/1.2 core schema nulls, but only when written plain: a quoted
	 * "null" is a string. */
	return n->type == NODE_SCALAR && n->plain &&
	       (n->len == 0 || strcmp(n->value, "~") == 0 || strcmp(n->value, "null") == 0 ||
		strcmp(n->value, "Null") == 0 || strcmp(n->value, "NULL") == 0);
}

/* ---- error collection ------------------------------------------------------ */

static void add_diag(struct ctx *c, int error, unsigned line, unsigned column, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

static void add_diag(struct ctx *c, int error, unsigned line, unsigned column, const char *fmt, va_list ap)
{
	struct cordon_diag d;
	size_t i;

	cordon_diag_setv(&d, error, "profile", line, column, fmt, ap);

	/* Keep the list sorted by position (stable), so the first error is the
	 * first in the file whatever order the checks ran in. When the list is
	 * full, a later-positioned error is dropped, an earlier one evicts the
	 * last. */
	for (i = c->n_errs; i > 0; i--) {
		const struct cordon_diag *p = &c->errs[i - 1];

		if (p->line < line || (p->line == line && p->column <= column))
			break;
	}
	if (i >= CORDON_PROFILE_MAX_ERRORS)
		return;
	if (c->n_errs == CORDON_PROFILE_MAX_ERRORS)
		c->n_errs--;
	memmove(&c->errs[i + 1], &c->errs[i], (c->n_errs - i) * sizeof(c->errs[0]));
	c->errs[i] = d;
	c->n_errs++;
}

int profile_err_at(struct ctx *c, int error, unsigned line, unsigned column, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_diag(c, error, line, column, fmt, ap);
	va_end(ap);
	return -error;
}

/* An error about node n (or the whole file when n is NULL), prefixed with the
 * current key path. Always returns -EINVAL so a check can `return profile_err(...)`. */
int profile_err(struct ctx *c, const struct node *n, const char *fmt, ...)
{
	char msg[sizeof(((struct cordon_diag *)0)->message)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->path_len > 0)
		return profile_err_at(c, EINVAL, n ? n->line : 0, n ? n->column : 0, "%s: %s", c->path, msg);
	return profile_err_at(c, EINVAL, n ? n->line : 0, n ? n->column : 0, "%s", msg);
}

/* Key path: "sandbox.filesystem.roots[0].path". push returns the old length
 * for pop. Characters that would garble a message are shown as '?'. */
size_t profile_path_push_key(struct ctx *c, const char *key)
{
	size_t old = c->path_len;
	int n = snprintf(c->path + c->path_len, sizeof(c->path) - c->path_len, "%s%s", old ? "." : "", key);

	if (n > 0)
		c->path_len = (size_t)n + old >= sizeof(c->path) ? sizeof(c->path) - 1 : c->path_len + (size_t)n;
	for (size_t i = old; i < c->path_len; i++)
		if ((unsigned char)c->path[i] < 0x20 || c->path[i] == 0x7f)
			c->path[i] = '?';
	return old;
}

size_t profile_path_push_index(struct ctx *c, size_t idx)
{
	size_t old = c->path_len;
	int n = snprintf(c->path + c->path_len, sizeof(c->path) - c->path_len, "[%zu]", idx);

	if (n > 0)
		c->path_len = (size_t)n + old >= sizeof(c->path) ? sizeof(c->path) - 1 : c->path_len + (size_t)n;
	return old;
}

void profile_path_pop(struct ctx *c, size_t old)
{
	c->path_len = old;
	c->path[old] = '\0';
}

struct quoted profile_quote(const struct node *n)
{
	struct quoted q;
	size_t o = 0, chars = 0;

	q.s[o++] = '"';
	for (size_t i = 0; i < n->len; i++) {
		unsigned char ch = (unsigned char)n->value[i];
		size_t need = ch < 0x20 || ch == 0x7f ? 4 : ch == '"' || ch == '\\' ? 2 : 1;
		bool continuation = (ch & 0xc0) == 0x80;

		if (!continuation)
			chars++;
		/* Room must stay for `..."` and the NUL. */
		if ((!continuation && chars > 48) || o + need > sizeof(q.s) - 5) {
			/* Never leave half a UTF-8 sequence before the "...". */
			if (continuation) {
				while (o > 1 && ((unsigned char)q.s[o - 1] & 0xc0) == 0x80)
					o--;
				if (o > 1)
					o--;
			}
			memcpy(q.s + o, "...", 3);
			o += 3;
			break;
		}
		if (need == 4)
			o += (size_t)snprintf(q.s + o, sizeof(q.s) - o, "\\x%02x", ch);
		else {
			if (need == 2)
				q.s[o++] = '\\';
			q.s[o++] = (char)ch;
		}
	}
	q.s[o++] = '"';
	q.s[o] = '\0';
	return q;
}

/* What a node is, for "expected X, got Y". */
struct quoted profile_describe(const struct node *n)
{
	struct quoted q;

	if (n->type == NODE_MAP)
		snprintf(q.s, sizeof(q.s), "a mapping");
	else if (n->type == NODE_SEQ)
		snprintf(q.s, sizeof(q.s), "a list");
	else if (profile_node_is_null(n))
		snprintf(q.s, sizeof(q.s), "an empty value");
	else
		return profile_quote(n);
	return q;
}

/* ---- pass 1: raw bytes ------------------------------------------------------ */

/* Length of the UTF-8 sequence at s (at most n bytes), 0 when invalid
 * (overlong forms, surrogates and code points above U+10FFFF included). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static int check_bytes(struct ctx *c, const char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)buf;
	unsigned line = 1, column = 1;
	bool indent = true; /* still in the line's leading whitespace */

	for (size_t i = 0; i < len;) {
		size_t n;

		if (s[i] == '\0')
			return profile_err_at(c, EINVAL, line, column, "file contains a NUL byte (not a text file?)");
		n = utf8_len(s + i, len - i);
		if (n == 0)
			return profile_err_at(c, EINVAL, line, column, "invalid UTF-8 (byte 0x%02x; not a text file?)",
					      s[i]);
		if (s[i] == '\n') {
			line++, column = 1, indent = true;
			i++;
			continue;
		}
		if (s[i] == '\t' && indent)
			return profile_err_at(c, EINVAL, line, column,
					      "tab character in indentation (YAML indents with spaces only)");
		if ((s[i] < 0x20 && s[i] != '\t' && s[i] != '\r') || s[i] == 0x7f)
			return profile_err_at(c, EINVAL, line, column, "control character 0x%02x is not allowed", s[i]);
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			indent = false;
		i += n;
		column++;
	}
	return 0;
}

/* ---- pass 2: libyaml events -> tree ----------------------------------------- */

DEFINE_CLEANUP(node_freep, struct node *, node_free)

static int node_append(struct node *parent, struct node *child)
{
	if (parent->n_items == parent->cap_items) {
		size_t ncap = parent->cap_items ? parent->cap_items * 2 : 8;
		struct node **ni = reallocarray(parent->items, ncap, sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		parent->items = ni;
		parent->cap_items = ncap;
	}
	parent->items[parent->n_items++] = child;
	return 0;
}

static int yaml_error(struct ctx *c, const yaml_parser_t *parser, const char *buf, size_t len)
{
	unsigned line, column;
	size_t off;

	if (parser->error == YAML_MEMORY_ERROR)
		return profile_err_at(c, ENOMEM, 0, 0, "out of memory while parsing");
	if (parser->error == YAML_READER_ERROR) {
		/* The reader reports an offset, not a mark. Pass 1 catches what
		 * it checks, so this is for the rest (e.g. U+FFFE). */
		off = parser->problem_offset;
		line = 1, column = 1;
		for (size_t i = 0; i < off && i < len; i++) {
			if (buf[i] == '\n')
				line++, column = 1;
			else if (((unsigned char)buf[i] & 0xc0) != 0x80)
				column++;
		}
		return profile_err_at(c, EINVAL, line, column, "%s",
				      parser->problem ? parser->problem : "unreadable input");
	}
	line = (unsigned)parser->problem_mark.line + 1;
	column = (unsigned)parser->problem_mark.column + 1;
	/* Marks count characters, not bytes: walk to the byte the mark names. */
	off = 0;
	for (size_t l = 1; l < line && off < len; off++)
		if (buf[off] == '\n')
			l++;
	for (unsigned col = 1; off < len && col < column; col++) {
		off++;
		while (off < len && ((unsigned char)buf[off] & 0xc0) == 0x80)
			off++;
	}
	if (off < len && buf[off] == '\t')
		return profile_err_at(c, EINVAL, line, column,
				      "tab character is not allowed here (YAML indents with spaces only)");
	if (parser->context)
		return profile_err_at(c, EINVAL, line, column, "YAML syntax error: %s %s (line %u)",
				      parser->problem ? parser->problem : "invalid YAML", parser->context,
				      (unsigned)parser->context_mark.line + 1);
	return profile_err_at(c, EINVAL, line, column, "YAML syntax error: %s",
			      parser->problem ? parser->problem : "invalid YAML");
}

static int build_tree(struct ctx *c, const char *buf, size_t len, struct node **ret)
{
	_cleanup_(node_freep) struct node *root = NULL;
	struct node *stack[CORDON_PROFILE_MAX_DEPTH];
	unsigned depth = 0, n_nodes = 0, n_docs = 0;
	yaml_parser_t parser;
	yaml_event_t ev;
	bool done = false;
	int r = 0;

	if (!yaml_parser_initialize(&parser))
		return profile_err_at(c, ENOMEM, 0, 0, "out of memory while parsing");
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	/* No yaml_parser_set_encoding(): pass 1 proved the input is UTF-8, and
	 * detection is what makes libyaml skip a byte-order mark. */

	while (!done && r >= 0) {
		unsigned line, column;
		const yaml_char_t *anchor = NULL, *tag = NULL;
		struct node *n;

		if (!yaml_parser_parse(&parser, &ev)) {
			r = yaml_error(c, &parser, buf, len);
			break;
		}
		line = (unsigned)ev.start_mark.line + 1;
		column = (unsigned)ev.start_mark.column + 1;

		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++n_docs > 1)
				r = profile_err_at(c, EINVAL, line, column, "only one YAML document is allowed");
			else if (ev.data.document_start.tag_directives.start !=
				 ev.data.document_start.tag_directives.end)
				r = profile_err_at(c, EINVAL, line, column, "YAML %%TAG directives are not allowed");
			break;
		case YAML_ALIAS_EVENT:
			r = profile_err_at(c, EINVAL, line, column,
					   "YAML aliases (*%s) are not allowed: profiles refuse anchors and aliases",
					   (const char *)ev.data.alias.anchor);
			break;
		case YAML_SCALAR_EVENT:
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (ev.type == YAML_SCALAR_EVENT)
				anchor = ev.data.scalar.anchor, tag = ev.data.scalar.tag;
			else if (ev.type == YAML_SEQUENCE_START_EVENT)
				anchor = ev.data.sequence_start.anchor, tag = ev.data.sequence_start.tag;
			else
				anchor = ev.data.mapping_start.anchor, tag = ev.data.mapping_start.tag;
			/* Refused when first seen, before anything can refer to it. */
			if (anchor) {
				r = profile_err_at(
					c, EINVAL, line, column,
					"YAML anchors (&%s) are not allowed: profiles refuse anchors and aliases",
					(const char *)anchor);
				break;
			}
			if (tag) {
				r = profile_err_at(c, EINVAL, line, column, "YAML tags (%s) are not allowed",
						   (const char *)tag);
				break;
			}
			if (++n_nodes > MAX_NODES) {
				r = profile_err_at(c, EINVAL, line, column, "more than %d YAML nodes", MAX_NODES);
				break;
			}
			if (ev.type != YAML_SCALAR_EVENT && depth >= CORDON_PROFILE_MAX_DEPTH) {
				r = profile_err_at(c, EINVAL, line, column, "nesting deeper than %d levels",
						   CORDON_PROFILE_MAX_DEPTH);
				break;
			}
			if (ev.type == YAML_SCALAR_EVENT && memchr(ev.data.scalar.value, 0, ev.data.scalar.length)) {
				r = profile_err_at(c, EINVAL, line, column, "strings must not contain NUL characters");
				break;
			}
			n = calloc(1, sizeof(*n));
			if (!n) {
				r = profile_err_at(c, ENOMEM, 0, 0, "out of memory while parsing");
				break;
			}
			n->line = line;
			n->column = column;
			if (ev.type == YAML_SCALAR_EVENT) {
				n->type = NODE_SCALAR;
				n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
				n->len = ev.data.scalar.length;
				n->value = strndup((const char *)ev.data.scalar.value, n->len);
			} else
				n->type = ev.type == YAML_SEQUENCE_START_EVENT ? NODE_SEQ : NODE_MAP;
			/* Attach first, so every node is owned by the tree. */
			if (depth > 0)
				r = node_append(stack[depth - 1], n);
			else if (!root)
				root = n;
			else
				r = -ENOMEM; /* unreachable: one document, one root */
			if (r < 0) {
				node_free(n);
				r = profile_err_at(c, ENOMEM, 0, 0, "out of memory while parsing");
				break;
			}
			if (n->type == NODE_SCALAR && !n->value) {
				r = profile_err_at(c, ENOMEM, 0, 0, "out of memory while parsing");
				break;
			}
			if (n->type != NODE_SCALAR)
				stack[depth++] = n;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (depth > 0)
				depth--;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	if (r < 0)
		return r;
	if (!root)
		return profile_err_at(c, EINVAL, 0, 0, "file contains no YAML document (only comments or blank lines)");
	*ret = TAKE_PTR(root);
	return 0;
}

static int parse_root(struct ctx *c, const struct node *root, struct cordon_profile *p)
{
	static const char *const keys[] = { "version",	 "connector", "sandbox",	 "tools",
					    "resources", "prompts",   "client_requests", "approval" };
	static const char *const none_read[] = { "none", "read" };
	static const char *const requests[] = { "sampling", "elicitation" };
	const struct node *v[ELEMENTSOF(keys)], *workdir = NULL;
	unsigned u;
	int r, acc;

	if (root->type != NODE_MAP)
		return profile_err(c, root, "the top level must be a mapping (got %s)", profile_describe(root).s);
	acc = profile_map_fields(c, root, keys, ELEMENTSOF(keys), v);

	if (!v[0])
		acc = profile_missing(c, root, "version");
	else {
		size_t m = profile_path_push_key(c, "version");
		uint64_t ver;

		if (profile_expect(c, v[0], NODE_SCALAR) < 0)
			acc = -EINVAL;
		else if (!v[0]->plain || profile_leading_zero(v[0]->value) || parse_u64(v[0]->value, &ver) < 0)
			acc = profile_err(c, v[0], "must be the integer 1 (got %s)", profile_quote(v[0]).s);
		else if (ver != 1)
			acc = profile_err(c, v[0], "unsupported version %llu (this cordon reads version 1)",
					  (unsigned long long)ver);
		profile_path_pop(c, m);
	}
	if (!v[1])
		acc = profile_missing(c, root, "connector");
	else
		WITH_KEY(c, "connector", &acc, profile_parse_connector(c, v[1], p, &workdir));
	if (!v[2])
		acc = profile_missing(c, root, "sandbox");
	else
		WITH_KEY(c, "sandbox", &acc, profile_parse_sandbox(c, v[2], p));
	if (!v[3])
		acc = profile_missing(c, root, "tools");
	else
		WITH_KEY(c, "tools", &acc, profile_parse_tools(c, v[3], p));
	if (v[4]) {
		r = 0;
		WITH_KEY(c, "resources", &r, profile_get_enum(c, v[4], none_read, 2, &u));
		if (r < 0)
			acc = r;
		else
			p->resources_read = u == 1;
	}
	if (v[5]) {
		r = 0;
		WITH_KEY(c, "prompts", &r, profile_get_enum(c, v[5], none_read, 2, &u));
		if (r < 0)
			acc = r;
		else
			p->prompts_read = u == 1;
	}
	if (v[6]) {
		size_t m = profile_path_push_key(c, "client_requests");

		if (profile_expect(c, v[6], NODE_SEQ) < 0)
			acc = -EINVAL;
		else {
			for (size_t i = 0; i < v[6]->n_items; i++) {
				const struct node *e = v[6]->items[i];
				size_t mi = profile_path_push_index(c, i);

				if (e->type == NODE_SCALAR &&
				    (strcmp(e->value, "roots") == 0 || strcmp(e->value, "roots/list") == 0))
					acc = profile_err(
						c, e,
						"roots/list is always answered by the broker from the instance's "
						"roots; do not list it");
				else if (profile_get_enum(c, e, requests, ELEMENTSOF(requests), &u) < 0)
					acc = -EINVAL;
				else
					p->client_requests |= 1u << u;
				profile_path_pop(c, mi);
			}
			r = profile_check_unique(c, v[6], 1);
			if (r < 0)
				acc = r;
		}
		profile_path_pop(c, m);
	}
	p->approval_ttl_sec = TTL_DEFAULT;
	if (v[7]) {
		static const char *const akeys[] = { "ttl" };
		const struct node *av[1];
		size_t m = profile_path_push_key(c, "approval");

		if (profile_expect(c, v[7], NODE_MAP) < 0)
			acc = -EINVAL;
		else {
			if (profile_map_fields(c, v[7], akeys, 1, av) < 0)
				acc = -EINVAL;
			if (av[0])
				WITH_KEY(c, "ttl", &acc,
					 profile_get_duration(c, av[0], TTL_MIN, TTL_MAX, "1s to 24h",
							      &p->approval_ttl_sec));
		}
		profile_path_pop(c, m);
	}

	/* The working directory must exist inside the sandbox: beneath the
	 * private /tmp or beneath a place a root is mounted. */
	if (workdir && p->workdir) {
		bool ok = path_is_beneath(p->workdir, "/tmp");

		for (size_t i = 0; !ok && i < p->n_fs_roots; i++)
			ok = p->fs_roots[i].at && path_is_beneath(p->workdir, p->fs_roots[i].at);
		if (!ok) {
			size_t m = profile_path_push_key(c, "connector.workdir");

			acc = profile_err(c, workdir,
					  "must lie beneath /tmp or a sandbox.filesystem.roots[].at path (got %s)",
					  profile_quote(workdir).s);
			profile_path_pop(c, m);
		}
	}
	return acc;
}

/* ---- public API ---------------------------------------------------------------- */

void cordon_profile_free(struct cordon_profile *p)
{
	if (!p)
		return;
	free(p->id);
	free(p->path);
	free(p->description);
	strv_free_n(p->command, p->n_command);
	free(p->workdir);
	strv_free_n(p->env_pass, p->n_env_pass);
	for (size_t i = 0; p->env_set && i < p->n_env_set; i++) {
		free(p->env_set[i].name);
		free(p->env_set[i].value);
	}
	free(p->env_set);
	for (size_t i = 0; p->credentials && i < p->n_credentials; i++) {
		free(p->credentials[i].env);
		free(p->credentials[i].file);
	}
	free(p->credentials);
	free(p->user);
	for (size_t i = 0; p->fs_system && i < p->n_fs_system; i++) {
		free(p->fs_system[i].path);
		free(p->fs_system[i].at);
	}
	free(p->fs_system);
	for (size_t i = 0; p->fs_roots && i < p->n_fs_roots; i++) {
		free(p->fs_roots[i].path);
		free(p->fs_roots[i].at);
	}
	free(p->fs_roots);
	strv_free_n(p->ceiling, p->n_ceiling);
	for (size_t i = 0; p->net_allow && i < p->n_net_allow; i++)
		free(p->net_allow[i].ports);
	free(p->net_allow);
	strv_free_n(p->seccomp_allow, p->n_seccomp_allow);
	strv_free_n(p->seccomp_deny, p->n_seccomp_deny);
	for (size_t i = 0; p->risk && i < p->n_risk; i++)
		free(p->risk[i].tool);
	free(p->risk);
	for (size_t i = 0; p->replay && i < p->n_replay; i++)
		free(p->replay[i].tool);
	free(p->replay);
	strv_free_n(p->grant, p->n_grant);
	free(p);
}

static int finish(struct ctx *c, int r, struct cordon_diag *diags, size_t max_diags, size_t *ret_n_diags)
{
	size_t n = c->n_errs < max_diags ? c->n_errs : max_diags;

	if (diags && n > 0)
		memcpy(diags, c->errs, n * sizeof(*diags));
	if (ret_n_diags)
		*ret_n_diags = diags ? n : 0;
	if (r >= 0)
		r = -EINVAL;
	return c->n_errs > 0 ? -c->errs[0].error : r;
}

int cordon_profile_parse_diags(const char *id, const char *name, const char *buf, size_t len,
			       struct cordon_profile **ret, struct cordon_diag *diags, size_t max_diags,
			       size_t *ret_n_diags)
{
	_cleanup_(cordon_profile_freep) struct cordon_profile *p = NULL;
	_cleanup_(node_freep) struct node *root = NULL;
	_cleanup_free_ struct ctx *c = NULL;
	int r;

	if (ret_n_diags)
		*ret_n_diags = 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;

	if (!id || !connector_id_is_valid(id)) {
		profile_err_at(c, EINVAL, 0, 0,
			       "file name must be <id>.yaml where <id> matches [a-z0-9][a-z0-9-]{0,31} (got \"%.64s\")",
			       id ? id : "");
		return finish(c, -EINVAL, diags, max_diags, ret_n_diags);
	}
	if (len > CORDON_PROFILE_MAX_BYTES) {
		profile_err_at(c, EFBIG, 0, 0, "file is larger than 1 MiB (%zu bytes)", len);
		return finish(c, -EFBIG, diags, max_diags, ret_n_diags);
	}
	if (len == 0 || !buf) {
		profile_err_at(c, EINVAL, 0, 0, "file is empty");
		return finish(c, -EINVAL, diags, max_diags, ret_n_diags);
	}
	r = check_bytes(c, buf, len);
	if (r < 0)
		return finish(c, r, diags, max_diags, ret_n_diags);
	r = build_tree(c, buf, len, &root);
	if (r < 0)
		return finish(c, r, diags, max_diags, ret_n_diags);

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	c->root = root;
	r = parse_root(c, root, p);
	if (r < 0 || c->n_errs > 0)
		return finish(c, r, diags, max_diags, ret_n_diags);

	p->id = strdup(id);
	p->path = strdup(name ? name : id);
	if (!p->id || !p->path)
		return -ENOMEM;
	if (ret_n_diags)
		*ret_n_diags = 0;
	*ret = TAKE_PTR(p);
	return 0;
}

int cordon_profile_parse(const char *id, const char *name, const char *buf, size_t len, struct cordon_profile **ret,
			 struct cordon_diag *reterr_diag)
{
	return cordon_profile_parse_diags(id, name, buf, len, ret, reterr_diag, reterr_diag ? 1 : 0, NULL);
}

/* The connector id is the file name without ".yaml"; anything else (another
 * suffix, an invalid id) is refused before the file is opened. */
static int id_from_path(const char *path, char ret[static CORDON_CONNECTOR_ID_MAX + 1])
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n <= 5 || strcmp(base + n - 5, ".yaml") != 0 || n - 5 > CORDON_CONNECTOR_ID_MAX)
		return -EINVAL;
	memcpy(ret, base, n - 5);
	ret[n - 5] = '\0';
	return connector_id_is_valid(ret) ? 0 : -EINVAL;
}

int cordon_profile_load_diags(const char *path, struct cordon_profile **ret, struct cordon_diag *diags,
			      size_t max_diags, size_t *ret_n_diags)
{
	char id[CORDON_CONNECTOR_ID_MAX + 1];
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -EBADF;
	struct cordon_diag d;
	struct stat st;
	ssize_t n;

	if (ret_n_diags)
		*ret_n_diags = 0;
#define FAIL(e, ...)                                                                                                   \
	do {                                                                                                           \
		int _e = cordon_diag_set(&d, (e), "profile", __VA_ARGS__);                                             \
		if (diags && max_diags > 0) {                                                                          \
			diags[0] = d;                                                                                  \
			if (ret_n_diags)                                                                               \
				*ret_n_diags = 1;                                                                      \
		}                                                                                                      \
		return _e;                                                                                             \
	} while (0)

	if (!path)
		FAIL(EINVAL, "no profile path given");
	if (id_from_path(path, id) < 0) {
		const char *base = strrchr(path, '/');

		FAIL(EINVAL, "file name must be <id>.yaml where <id> matches [a-z0-9][a-z0-9-]{0,31} (got \"%.64s\")",
		     base ? base + 1 : path);
	}
	/* O_NONBLOCK so a FIFO planted at the path cannot hang the loader;
	 * it is refused below as not a regular file. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;

		FAIL(e, "cannot open: %s", strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		int e = errno;

		FAIL(e, "cannot stat: %s", strerror(e));
	}
	if (!S_ISREG(st.st_mode))
		FAIL(EINVAL, "not a regular file");
	/* Refused on the size the file claims, before reading it. */
	if (st.st_size > CORDON_PROFILE_MAX_BYTES)
		FAIL(EFBIG, "file is larger than 1 MiB (%lld bytes)", (long long)st.st_size);
	buf = malloc(CORDON_PROFILE_MAX_BYTES + 1);
	if (!buf)
		return -ENOMEM;
	/* One byte past the bound proves a file that grew meanwhile is too big. */
	n = read_full(fd, buf, CORDON_PROFILE_MAX_BYTES + 1);
	if (n < 0)
		FAIL((int)-n, "cannot read: %s", strerror((int)-n));
	if (n > CORDON_PROFILE_MAX_BYTES)
		FAIL(EFBIG, "file is larger than 1 MiB (it grew while being read)");
#undef FAIL
	return cordon_profile_parse_diags(id, path, buf, (size_t)n, ret, diags, max_diags, ret_n_diags);
}

int cordon_profile_load(const char *path, struct cordon_profile **ret, struct cordon_diag *reterr_diag)
{
	return cordon_profile_load_diags(path, ret, reterr_diag, reterr_diag ? 1 : 0, NULL);
}
