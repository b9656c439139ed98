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
#include "strv.h"

#define MAX_NODES	 65536
#define MAX_LIST	 4096 /* entries in any list or free-form map */
#define MAX_COMMAND_ARGS 256
#define MAX_STRING	 4096 /* bytes in any single string value */
#define MAX_DESCRIPTION	 1024
#define MAX_TOOL_NAME	 128
#define MAX_ENV_NAME	 128
#define MAX_SYSCALL_NAME 64

/* Bounds of record (docs/profiles.md documents them). */
#define TMPFS_MIN     (1ULL << 20)  /* 1M */
#define TMPFS_MAX     (16ULL << 30) /* 16G */
#define TMPFS_DEFAULT (64ULL << 20) /* 64M */
#define MEM_MIN	      (4ULL << 20)  /* 4M */
#define MEM_MAX	      (1ULL << 40)  /* 1T */
#define PIDS_MIN      1
#define PIDS_MAX      1048576
#define CPU_MIN_MICRO 10000ULL		  /* 0.01 CPU */
#define CPU_MAX_MICRO (1024ULL * 1000000) /* 1024 CPUs */
#define NOFILE_MIN    16
#define NOFILE_MAX    1048576
#define TTL_MIN	      1
#define TTL_MAX	      (24 * 3600)
#define TTL_DEFAULT   120
#define REQUIRE_DEFAULT                                                                                                \
	(CORDON_CONTROL_LANDLOCK | CORDON_CONTROL_SECCOMP | CORDON_CONTROL_CGROUP | CORDON_CONTROL_NAMESPACES)

/* ---- the tree ------------------------------------------------------------ */

enum node_type {
	NODE_SCALAR,
	NODE_SEQ,
	NODE_MAP,
};

struct node {
	enum node_type type;
	unsigned line, column; /* 1-based */
	bool plain;	       /* scalar written without quotes or block style */
	char *value;	       /* scalar, NUL-terminated (embedded NULs are refused) */
	size_t len;
	struct node **items; /* seq: the items; map: key, value, key, value, ... */
	size_t n_items, cap_items;
};

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

static size_t map_size(const struct node *n)
{
	return n->n_items / 2;
}

static bool node_is_null(const struct node *n)
{
	/* YAML 1.1/1.2 core schema nulls, but only when written plain: a quoted
	 * "null" is a string. */
	return n->type == NODE_SCALAR && n->plain &&
	       (n->len == 0 || strcmp(n->value, "~") == 0 || strcmp(n->value, "null") == 0 ||
		strcmp(n->value, "Null") == 0 || strcmp(n->value, "NULL") == 0);
}

/* ---- error collection ------------------------------------------------------ */

struct ctx {
	struct cordon_diag errs[CORDON_PROFILE_MAX_ERRORS];
	size_t n_errs;
	char path[512]; /* the key path of the value being validated */
	size_t path_len;
	const struct node *root;
};

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

static int err_at(struct ctx *c, int error, unsigned line, unsigned column, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int err_at(struct ctx *c, int error, unsigned line, unsigned column, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_diag(c, error, line, column, fmt, ap);
	va_end(ap);
	return -error;
}

/* An error about node n (or the whole file when n is NULL), prefixed with the
 * current key path. Always returns -EINVAL so a check can `return err(...)`. */
static int err(struct ctx *c, const struct node *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int err(struct ctx *c, const struct node *n, const char *fmt, ...)
{
	char msg[sizeof(((struct cordon_diag *)0)->message)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->path_len > 0)
		return err_at(c, EINVAL, n ? n->line : 0, n ? n->column : 0, "%s: %s", c->path, msg);
	return err_at(c, EINVAL, n ? n->line : 0, n ? n->column : 0, "%s", msg);
}

/* Key path: "sandbox.filesystem.roots[0].path". push returns the old length
 * for pop. Characters that would garble a message are shown as '?'. */
static size_t path_push_key(struct ctx *c, const char *key)
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

static size_t path_push_index(struct ctx *c, size_t idx)
{
	size_t old = c->path_len;
	int n = snprintf(c->path + c->path_len, sizeof(c->path) - c->path_len, "[%zu]", idx);

	if (n > 0)
		c->path_len = (size_t)n + old >= sizeof(c->path) ? sizeof(c->path) - 1 : c->path_len + (size_t)n;
	return old;
}

static void path_pop(struct ctx *c, size_t old)
{
	c->path_len = old;
	c->path[old] = '\0';
}

/* A value quoted for a message: at most 48 characters, non-printable bytes
 * escaped, "..." when cut. */
struct quoted {
	char s[80];
};

static struct quoted quote(const struct node *n)
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
static struct quoted describe(const struct node *n)
{
	struct quoted q;

	if (n->type == NODE_MAP)
		snprintf(q.s, sizeof(q.s), "a mapping");
	else if (n->type == NODE_SEQ)
		snprintf(q.s, sizeof(q.s), "a list");
	else if (node_is_null(n))
		snprintf(q.s, sizeof(q.s), "an empty value");
	else
		return quote(n);
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
			return err_at(c, EINVAL, line, column, "file contains a NUL byte (not a text file?)");
		n = utf8_len(s + i, len - i);
		if (n == 0)
			return err_at(c, EINVAL, line, column, "invalid UTF-8 (byte 0x%02x; not a text file?)", s[i]);
		if (s[i] == '\n') {
			line++, column = 1, indent = true;
			i++;
			continue;
		}
		if (s[i] == '\t' && indent)
			return err_at(c, EINVAL, line, column,
				      "tab character in indentation (YAML indents with spaces only)");
		if ((s[i] < 0x20 && s[i] != '\t' && s[i] != '\r') || s[i] == 0x7f)
			return err_at(c, EINVAL, line, column, "control character 0x%02x is not allowed", s[i]);
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
		return err_at(c, ENOMEM, 0, 0, "out of memory while parsing");
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
		return err_at(c, EINVAL, line, column, "%s", parser->problem ? parser->problem : "unreadable input");
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
		return err_at(c, EINVAL, line, column,
			      "tab character is not allowed here (YAML indents with spaces only)");
	if (parser->context)
		return err_at(c, EINVAL, line, column, "YAML syntax error: %s %s (line %u)",
			      parser->problem ? parser->problem : "invalid YAML", parser->context,
			      (unsigned)parser->context_mark.line + 1);
	return err_at(c, EINVAL, line, column, "YAML syntax error: %s",
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
		return err_at(c, ENOMEM, 0, 0, "out of memory while parsing");
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
				r = err_at(c, EINVAL, line, column, "only one YAML document is allowed");
			else if (ev.data.document_start.tag_directives.start !=
				 ev.data.document_start.tag_directives.end)
				r = err_at(c, EINVAL, line, column, "YAML %%TAG directives are not allowed");
			break;
		case YAML_ALIAS_EVENT:
			r = err_at(c, EINVAL, line, column,
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
				r = err_at(c, EINVAL, line, column,
					   "YAML anchors (&%s) are not allowed: profiles refuse anchors and aliases",
					   (const char *)anchor);
				break;
			}
			if (tag) {
				r = err_at(c, EINVAL, line, column, "YAML tags (%s) are not allowed",
					   (const char *)tag);
				break;
			}
			if (++n_nodes > MAX_NODES) {
				r = err_at(c, EINVAL, line, column, "more than %d YAML nodes", MAX_NODES);
				break;
			}
			if (ev.type != YAML_SCALAR_EVENT && depth >= CORDON_PROFILE_MAX_DEPTH) {
				r = err_at(c, EINVAL, line, column, "nesting deeper than %d levels",
					   CORDON_PROFILE_MAX_DEPTH);
				break;
			}
			if (ev.type == YAML_SCALAR_EVENT && memchr(ev.data.scalar.value, 0, ev.data.scalar.length)) {
				r = err_at(c, EINVAL, line, column, "strings must not contain NUL characters");
				break;
			}
			n = calloc(1, sizeof(*n));
			if (!n) {
				r = err_at(c, ENOMEM, 0, 0, "out of memory while parsing");
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
				r = err_at(c, ENOMEM, 0, 0, "out of memory while parsing");
				break;
			}
			if (n->type == NODE_SCALAR && !n->value) {
				r = err_at(c, ENOMEM, 0, 0, "out of memory while parsing");
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
		return err_at(c, EINVAL, 0, 0, "file contains no YAML document (only comments or blank lines)");
	*ret = TAKE_PTR(root);
	return 0;
}

/* ---- pass 3: schema ----------------------------------------------------------- */

static const char *type_name(enum node_type t)
{
	return t == NODE_MAP ? "a mapping" : t == NODE_SEQ ? "a list" : "a string";
}

/* A present value of the wanted shape; scalars must not be null. */
static int expect(struct ctx *c, const struct node *n, enum node_type t)
{
	if (n->type != t || (t == NODE_SCALAR && node_is_null(n)))
		return err(c, n, "expected %s, got %s", type_name(t), describe(n).s);
	return 0;
}

static int missing(struct ctx *c, const struct node *parent, const char *key)
{
	size_t m = path_push_key(c, key);
	int r = err(c, parent, "missing required key");

	path_pop(c, m);
	return r;
}

/* Splits a mapping with a fixed set of keys into vals[] (NULL when absent).
 * Reports non-string keys, unknown keys and duplicates; returns -EINVAL when
 * any was found (the known values are still filled, so checking goes on). */
static int map_fields(struct ctx *c, const struct node *map, const char *const keys[], size_t n_keys,
		      const struct node *vals[])
{
	int r = 0;

	for (size_t k = 0; k < n_keys; k++)
		vals[k] = NULL;
	for (size_t i = 0; i < map_size(map); i++) {
		const struct node *key = map->items[2 * i], *val = map->items[2 * i + 1];
		size_t k, m;

		if (key->type != NODE_SCALAR || node_is_null(key)) {
			r = err(c, key, "mapping keys must be strings, got %s", describe(key).s);
			continue;
		}
		for (k = 0; k < n_keys; k++)
			if (strcmp(key->value, keys[k]) == 0)
				break;
		m = path_push_key(c, key->value);
		if (k == n_keys) {
			char list[160];
			size_t o = 0;

			for (size_t j = 0; j < n_keys && o < sizeof(list); j++)
				o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", j ? ", " : "", keys[j]);
			r = err(c, key, "unknown key (expected one of: %s)", list);
		} else if (vals[k])
			r = err(c, key, "duplicate key (first at line %u)", vals[k]->line);
		else
			vals[k] = val;
		path_pop(c, m);
	}
	return r;
}

/* The value of a string key in a mapping that has been validated, else the
 * mapping itself (for positions in messages). */
static const struct node *map_get(const struct node *map, const char *key)
{
	for (size_t i = 0; map->type == NODE_MAP && i < map_size(map); i++)
		if (map->items[2 * i]->type == NODE_SCALAR && strcmp(map->items[2 * i]->value, key) == 0)
			return map->items[2 * i + 1];
	return map;
}

struct dup_entry {
	const char *s;
	size_t idx;
};

static int dup_cmp(const void *a, const void *b)
{
	const struct dup_entry *x = a, *y = b;
	int d = strcmp(x->s, y->s);

	if (d)
		return d;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Reports repeated strings among items[0], items[stride], ... (map keys with
 * stride 2, list items with stride 1). Only scalars are compared; other
 * shapes have been reported elsewhere. O(n log n), so a hostile list cannot
 * make this quadratic. */
static int check_unique(struct ctx *c, const struct node *container, size_t stride)
{
	_cleanup_free_ struct dup_entry *e = NULL;
	size_t n = 0, count = container->n_items / stride;
	int r = 0;

	if (count < 2)
		return 0;
	e = calloc(count, sizeof(*e));
	if (!e)
		return err_at(c, ENOMEM, 0, 0, "out of memory");
	for (size_t i = 0; i < count; i++) {
		const struct node *k = container->items[i * stride];

		if (k->type == NODE_SCALAR)
			e[n++] = (struct dup_entry){.s = k->value, .idx = i};
	}
	qsort(e, n, sizeof(*e), dup_cmp);
	for (size_t i = 1; i < n; i++) {
		const struct node *first, *dup;
		size_t m;

		if (strcmp(e[i].s, e[i - 1].s) != 0)
			continue;
		/* Equal runs are ordered by index: the run's head is the first. */
		size_t head = i - 1;
		while (head > 0 && strcmp(e[head - 1].s, e[i].s) == 0)
			head--;
		first = container->items[e[head].idx * stride];
		dup = container->items[e[i].idx * stride];
		if (stride == 2) {
			m = path_push_key(c, dup->value);
			r = err(c, dup, "duplicate key (first at line %u)", first->line);
		} else {
			m = path_push_index(c, e[i].idx);
			r = err(c, dup, "%s is listed twice (first at line %u)", quote(dup).s, first->line);
		}
		path_pop(c, m);
	}
	return r;
}

static int get_string(struct ctx *c, const struct node *n, size_t max, char **ret)
{
	char *s;
	int r;

	r = expect(c, n, NODE_SCALAR);
	if (r < 0)
		return r;
	if (n->len > max)
		return err(c, n, "longer than %zu bytes", max);
	s = strdup(n->value);
	if (!s)
		return err_at(c, ENOMEM, 0, 0, "out of memory");
	*ret = s;
	return 0;
}

static int get_path(struct ctx *c, const struct node *n, char **ret)
{
	int r;

	r = expect(c, n, NODE_SCALAR);
	if (r < 0)
		return r;
	if (!path_is_absolute_canonical(n->value))
		return err(c, n, "must be an absolute canonical path (got %s)", quote(n).s);
	return get_string(c, n, PATH_MAX, ret);
}

static int get_enum(struct ctx *c, const struct node *n, const char *const names[], size_t count, unsigned *ret)
{
	char list[120];
	size_t o = 0;
	int r;

	r = expect(c, n, NODE_SCALAR);
	if (r < 0)
		return r;
	for (size_t i = 0; i < count; i++)
		if (strcmp(n->value, names[i]) == 0) {
			*ret = (unsigned)i;
			return 0;
		}
	for (size_t i = 0; i < count && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", names[i]);
	return err(c, n, "must be one of %s (got %s)", list, quote(n).s);
}

/* "0443" is 443 to us but octal 291 to a YAML 1.1 reader: refuse the
 * ambiguity in every number. */
static bool leading_zero(const char *s)
{
	return s[0] == '0' && s[1] >= '0' && s[1] <= '9';
}

/* Integers must be written plain: a quoted "64" is a string in YAML. */
static int get_uint(struct ctx *c, const struct node *n, uint64_t min, uint64_t max, uint64_t *ret)
{
	uint64_t v;
	int r;

	r = expect(c, n, NODE_SCALAR);
	if (r < 0)
		return r;
	if (!n->plain || leading_zero(n->value) || parse_u64(n->value, &v) < 0 || v < min || v > max)
		return err(c, n, "must be an integer from %llu to %llu (got %s)", (unsigned long long)min,
			   (unsigned long long)max, quote(n).s);
	*ret = v;
	return 0;
}

static int get_size(struct ctx *c, const struct node *n, uint64_t min, uint64_t max, const char *range, uint64_t *ret)
{
	uint64_t v;
	int r;

	r = expect(c, n, NODE_SCALAR);
	if (r < 0)
		return r;
	if (leading_zero(n->value) || parse_size(n->value, &v) < 0 || v < min || v > max)
		return err(c, n, "must be a size from %s (K, M, G are powers of 1024; got %s)", range, quote(n).s);
	*ret = v;
	return 0;
}

static int get_duration(struct ctx *c, const struct node *n, uint64_t min, uint64_t max, const char *range,
			uint64_t *ret)
{
	uint64_t v;
	int r;

	r = expect(c, n, NODE_SCALAR);
	if (r < 0)
		return r;
	if (leading_zero(n->value) || parse_duration_sec(n->value, &v) < 0 || v < min || v > max)
		return err(c, n, "must be a duration from %s with an s, m or h suffix (got %s)", range, quote(n).s);
	*ret = v;
	return 0;
}

/* A string list: each item checked by `check` (NULL: any string up to
 * MAX_STRING bytes), duplicates refused when `unique`. Writes a
 * NULL-terminated array. */
typedef int (*item_check_fn)(struct ctx *c, const struct node *n);

static int get_string_list(struct ctx *c, const struct node *n, size_t min, size_t max, item_check_fn check,
			   bool unique, char ***ret, size_t *ret_n)
{
	char **v;
	int r, ret_r = 0;

	r = expect(c, n, NODE_SEQ);
	if (r < 0)
		return r;
	if (n->n_items < min)
		return err(c, n, "must list at least %zu %s", min, min == 1 ? "entry" : "entries");
	if (n->n_items > max)
		return err(c, n, "must list at most %zu entries", max);
	v = calloc(n->n_items + 1, sizeof(*v));
	if (!v)
		return err_at(c, ENOMEM, 0, 0, "out of memory");
	/* Owned by the caller's profile from here on, even when an item fails. */
	*ret = v;
	*ret_n = n->n_items;
	for (size_t i = 0; i < n->n_items; i++) {
		const struct node *item = n->items[i];
		size_t m = path_push_index(c, i);

		r = get_string(c, item, MAX_STRING, &v[i]);
		if (r >= 0 && check)
			r = check(c, item);
		if (r < 0)
			ret_r = r;
		path_pop(c, m);
	}
	if (unique) {
		r = check_unique(c, n, 1);
		if (r < 0)
			ret_r = r;
	}
	return ret_r;
}

/* ---- item validators ---- */

static bool env_name_is_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > MAX_ENV_NAME ||
	    !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

static int check_env_name(struct ctx *c, const struct node *n)
{
	if (!env_name_is_valid(n->value))
		return err(c, n, "environment variable names are [A-Za-z_][A-Za-z0-9_]*, at most %d bytes (got %s)",
			   MAX_ENV_NAME, quote(n).s);
	return 0;
}

/* MCP tool names: 1 to 128 of A-Z a-z 0-9 _ - . (the MCP specification's
 * recommended alphabet). */
static bool tool_name_is_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > MAX_TOOL_NAME)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

static int check_tool_name(struct ctx *c, const struct node *n)
{
	if (!tool_name_is_valid(n->value))
		return err(c, n, "tool names are 1 to %d characters of A-Z a-z 0-9 _ - . (got %s)", MAX_TOOL_NAME,
			   quote(n).s);
	return 0;
}

static int check_path_item(struct ctx *c, const struct node *n)
{
	if (!path_is_absolute_canonical(n->value))
		return err(c, n, "must be an absolute canonical path (got %s)", quote(n).s);
	return 0;
}

static int check_ceiling_item(struct ctx *c, const struct node *n)
{
	int r = check_path_item(c, n);

	if (r < 0)
		return r;
	/* A ceiling of / would let delegations add any path at all. */
	if (strcmp(n->value, "/") == 0)
		return err(c, n, "\"/\" cannot be a ceiling (it would allow delegating every path)");
	return 0;
}

static int check_syscall(struct ctx *c, const struct node *n)
{
	size_t len = strlen(n->value);

	for (size_t i = 0; i < len; i++)
		if (!((n->value[i] >= 'a' && n->value[i] <= 'z') || (n->value[i] >= '0' && n->value[i] <= '9') ||
		      n->value[i] == '_'))
			len = 0;
	if (len == 0 || len > MAX_SYSCALL_NAME || !cordon_seccomp_syscall_name_known(n->value))
		return err(c, n, "unknown system call %s", quote(n).s);
	return 0;
}

/* ---- sections ---- */

/* Runs f on the value of key `key` (when present) with the key pushed on the
 * path; collects the result in *acc. */
#define WITH_KEY(c, key, acc, call)                                                                                    \
	do {                                                                                                           \
		size_t _m = path_push_key((c), (key));                                                                 \
		int _r = (call);                                                                                       \
		if (_r < 0)                                                                                            \
			*(acc) = _r;                                                                                   \
		path_pop((c), _m);                                                                                     \
	} while (0)

static int get_env_name(struct ctx *c, const struct node *n, char **ret)
{
	int r = expect(c, n, NODE_SCALAR);

	if (r >= 0)
		r = check_env_name(c, n);
	if (r >= 0)
		r = get_string(c, n, MAX_ENV_NAME, ret);
	return r;
}

static int parse_env(struct ctx *c, const struct node *n, struct cordon_profile *p)
{
	static const char *const keys[] = {"pass", "set"};
	const struct node *v[ELEMENTSOF(keys)];
	int r, acc = 0;

	r = expect(c, n, NODE_MAP);
	if (r < 0)
		return r;
	acc = map_fields(c, n, keys, ELEMENTSOF(keys), v);
	if (v[0])
		WITH_KEY(c, "pass", &acc,
			 get_string_list(c, v[0], 0, MAX_LIST, check_env_name, true, &p->env_pass, &p->n_env_pass));
	if (v[1]) {
		size_t m = path_push_key(c, "set");

		r = expect(c, v[1], NODE_MAP);
		if (r >= 0 && map_size(v[1]) > MAX_LIST)
			r = err(c, v[1], "must list at most %d entries", MAX_LIST);
		if (r >= 0) {
			p->env_set = calloc(map_size(v[1]), sizeof(*p->env_set));
			if (!p->env_set && map_size(v[1]) > 0)
				r = err_at(c, ENOMEM, 0, 0, "out of memory");
		}
		if (r >= 0) {
			p->n_env_set = map_size(v[1]);
			for (size_t i = 0; i < map_size(v[1]); i++) {
				const struct node *key = v[1]->items[2 * i], *val = v[1]->items[2 * i + 1];
				size_t mk;

				if (key->type != NODE_SCALAR || node_is_null(key)) {
					acc = err(c, key, "mapping keys must be strings, got %s", describe(key).s);
					continue;
				}
				mk = path_push_key(c, key->value);
				if (get_env_name(c, key, &p->env_set[i].name) < 0 ||
				    get_string(c, val, MAX_STRING, &p->env_set[i].value) < 0)
					acc = -EINVAL;
				path_pop(c, mk);
			}
			r = check_unique(c, v[1], 2);
		}
		if (r < 0)
			acc = r;
		path_pop(c, m);
	}
	return acc;
}

static int parse_credentials(struct ctx *c, const struct node *n, struct cordon_profile *p)
{
	static const char *const keys[] = {"env", "file"};
	int r, acc = 0;

	r = expect(c, n, NODE_SEQ);
	if (r < 0)
		return r;
	if (n->n_items > MAX_LIST)
		return err(c, n, "must list at most %d entries", MAX_LIST);
	p->credentials = calloc(n->n_items, sizeof(*p->credentials));
	if (!p->credentials && n->n_items > 0)
		return err_at(c, ENOMEM, 0, 0, "out of memory");
	p->n_credentials = n->n_items;
	for (size_t i = 0; i < n->n_items; i++) {
		const struct node *e = n->items[i], *v[ELEMENTSOF(keys)];
		size_t m = path_push_index(c, i);

		if (expect(c, e, NODE_MAP) < 0) {
			acc = -EINVAL;
			path_pop(c, m);
			continue;
		}
		if (map_fields(c, e, keys, ELEMENTSOF(keys), v) < 0)
			acc = -EINVAL;
		if (!v[0])
			acc = missing(c, e, "env");
		else {
			WITH_KEY(c, "env", &acc, get_env_name(c, v[0], &p->credentials[i].env));
		}
		if (!v[1])
			acc = missing(c, e, "file");
		else
			WITH_KEY(c, "file", &acc, get_path(c, v[1], &p->credentials[i].file));
		path_pop(c, m);
	}
	return acc;
}

static int parse_connector(struct ctx *c, const struct node *n, struct cordon_profile *p,
			   const struct node **ret_workdir)
{
	static const char *const keys[] = {"description", "command", "workdir", "env", "credentials", "instances"};
	static const char *const instances[] = {"per-session", "shared"};
	const struct node *v[ELEMENTSOF(keys)];
	unsigned u;
	int r, acc;

	r = expect(c, n, NODE_MAP);
	if (r < 0)
		return r;
	acc = map_fields(c, n, keys, ELEMENTSOF(keys), v);
	if (v[0])
		WITH_KEY(c, "description", &acc, get_string(c, v[0], MAX_DESCRIPTION, &p->description));
	if (!v[1])
		acc = missing(c, n, "command");
	else {
		size_t m = path_push_key(c, "command");

		r = get_string_list(c, v[1], 1, MAX_COMMAND_ARGS, NULL, false, &p->command, &p->n_command);
		if (r < 0)
			acc = r;
		else if (!path_is_absolute_canonical(p->command[0])) {
			size_t m0 = path_push_index(c, 0);

			acc = err(c, v[1]->items[0], "must be an absolute canonical path (got %s)",
				  quote(v[1]->items[0]).s);
			path_pop(c, m0);
		}
		path_pop(c, m);
	}
	if (v[2]) {
		WITH_KEY(c, "workdir", &acc, get_path(c, v[2], &p->workdir));
		*ret_workdir = v[2];
	}
	if (v[3])
		WITH_KEY(c, "env", &acc, parse_env(c, v[3], p));
	if (v[4])
		WITH_KEY(c, "credentials", &acc, parse_credentials(c, v[4], p));
	p->instances = CORDON_INSTANCES_PER_SESSION;
	if (v[5]) {
		r = 0;
		WITH_KEY(c, "instances", &r, get_enum(c, v[5], instances, ELEMENTSOF(instances), &u));
		if (r < 0)
			acc = r;
		else
			p->instances = (enum cordon_instances)u;
	}

	/* Each variable has one source: a credential that env.set or env.pass
	 * also names would be ambiguous about which value the connector sees. */
	for (size_t i = 0; i < p->n_credentials; i++) {
		const char *e = p->credentials[i].env;
		size_t m;
		bool clash = false;

		if (!e)
			continue;
		for (size_t j = 0; j < p->n_env_set; j++)
			clash = clash || (p->env_set[j].name && strcmp(p->env_set[j].name, e) == 0);
		clash = clash || strv_contains_n(p->env_pass, p->n_env_pass, e);
		for (size_t j = 0; j < i; j++)
			clash = clash || (p->credentials[j].env && strcmp(p->credentials[j].env, e) == 0);
		if (!clash)
			continue;
		m = path_push_key(c, "credentials");
		path_push_index(c, i);
		path_push_key(c, "env");
		acc = err(c, map_get(v[4]->items[i], "env"), "%s is already set by connector.env or another credential",
			  e);
		path_pop(c, m);
	}
	for (size_t j = 0; j < p->n_env_set; j++) {
		size_t m;

		if (!p->env_set[j].name || !strv_contains_n(p->env_pass, p->n_env_pass, p->env_set[j].name))
			continue;
		m = path_push_key(c, "env.set");
		path_push_key(c, p->env_set[j].name);
		acc =
		    err(c, map_get(v[3], "set"), "%s is both passed (env.pass) and set (env.set)", p->env_set[j].name);
		path_pop(c, m);
	}
	return acc;
}

static const char *const access_names[] = {
    [CORDON_ACCESS_READ] = "read",
    [CORDON_ACCESS_READ_EXEC] = "read-exec",
    [CORDON_ACCESS_READ_WRITE] = "read-write",
};

/* sandbox.filesystem.system (is_roots false) or .roots (true). */
static int parse_fs_entries(struct ctx *c, const struct node *n, bool is_roots, struct cordon_fs_entry **ret,
			    size_t *ret_n)
{
	static const char *const root_keys[] = {"path", "access", "at"};
	struct cordon_fs_entry *e;
	int r, acc = 0;

	r = expect(c, n, NODE_SEQ);
	if (r < 0)
		return r;
	if (n->n_items > MAX_LIST)
		return err(c, n, "must list at most %d entries", MAX_LIST);
	e = calloc(n->n_items, sizeof(*e));
	if (!e && n->n_items > 0)
		return err_at(c, ENOMEM, 0, 0, "out of memory");
	*ret = e;
	*ret_n = n->n_items;
	for (size_t i = 0; i < n->n_items; i++) {
		const struct node *item = n->items[i], *v[3];
		size_t m = path_push_index(c, i);
		unsigned a;

		if (expect(c, item, NODE_MAP) < 0) {
			acc = -EINVAL;
			path_pop(c, m);
			continue;
		}
		/* `at` exists for roots only: the runtime's own files are seen
		 * where they are. */
		if (map_fields(c, item, root_keys, is_roots ? 3 : 2, v) < 0)
			acc = -EINVAL;
		if (!v[0])
			acc = missing(c, item, "path");
		else
			WITH_KEY(c, "path", &acc, get_path(c, v[0], &e[i].path));
		if (!v[1])
			acc = missing(c, item, "access");
		else {
			r = 0;
			WITH_KEY(c, "access", &r, get_enum(c, v[1], access_names, ELEMENTSOF(access_names), &a));
			if (r >= 0 && !is_roots && a == CORDON_ACCESS_READ_WRITE)
				WITH_KEY(c, "access", &r,
					 err(c, v[1],
					     "system entries are read or read-exec (the runtime's files are never "
					     "writable)"));
			if (r < 0)
				acc = r;
			else
				e[i].access = (enum cordon_fs_access)a;
		}
		if (is_roots && v[2]) {
			r = 0;
			WITH_KEY(c, "at", &r, get_path(c, v[2], &e[i].at));
			if (r >= 0 && strcmp(e[i].at, "/") == 0)
				WITH_KEY(c, "at", &r, err(c, v[2], "a root cannot replace the sandbox's \"/\""));
			if (r < 0)
				acc = r;
		} else if (e[i].path) {
			e[i].at = strdup(e[i].path);
			if (!e[i].at)
				acc = err_at(c, ENOMEM, 0, 0, "out of memory");
		}
		path_pop(c, m);
	}
	return acc;
}

/* Two entries that would appear at the same place inside the sandbox. The
 * error points at the later entry. */
static int check_fs_clashes(struct ctx *c, const struct node *system, const struct node *roots,
			    const struct cordon_profile *p)
{
	int acc = 0;

	for (size_t i = 0; roots && i < p->n_fs_roots; i++) {
		const char *at = p->fs_roots[i].at;
		const char *other = NULL;
		size_t m;

		if (!at)
			continue;
		for (size_t j = 0; j < i && !other; j++)
			if (p->fs_roots[j].at && strcmp(p->fs_roots[j].at, at) == 0)
				other = "another roots entry";
		for (size_t j = 0; j < p->n_fs_system && !other; j++)
			if (p->fs_system[j].at && strcmp(p->fs_system[j].at, at) == 0)
				other = "a system entry";
		if (!other)
			continue;
		m = path_push_key(c, "roots");
		path_push_index(c, i);
		acc = err(c, roots->items[i], "sandbox path %s is already used by %s", at, other);
		path_pop(c, m);
	}
	for (size_t i = 0; system && i < p->n_fs_system; i++)
		for (size_t j = 0; j < i; j++) {
			size_t m;

			if (!p->fs_system[i].path || !p->fs_system[j].path ||
			    strcmp(p->fs_system[i].path, p->fs_system[j].path) != 0)
				continue;
			m = path_push_key(c, "system");
			path_push_index(c, i);
			acc = err(c, system->items[i], "%s is listed twice (first at line %u)", p->fs_system[i].path,
				  system->items[j]->line);
			path_pop(c, m);
			break;
		}
	return acc;
}

static int parse_filesystem(struct ctx *c, const struct node *n, struct cordon_profile *p)
{
	static const char *const keys[] = {"system", "roots", "ceiling", "tmp"};
	const struct node *v[ELEMENTSOF(keys)];
	int r, acc;

	r = expect(c, n, NODE_MAP);
	if (r < 0)
		return r;
	acc = map_fields(c, n, keys, ELEMENTSOF(keys), v);
	if (!v[0])
		acc = missing(c, n, "system");
	else
		WITH_KEY(c, "system", &acc, parse_fs_entries(c, v[0], false, &p->fs_system, &p->n_fs_system));
	if (v[1])
		WITH_KEY(c, "roots", &acc, parse_fs_entries(c, v[1], true, &p->fs_roots, &p->n_fs_roots));
	if (v[2])
		WITH_KEY(c, "ceiling", &acc,
			 get_string_list(c, v[2], 0, MAX_LIST, check_ceiling_item, true, &p->ceiling, &p->n_ceiling));
	p->tmp_bytes = TMPFS_DEFAULT;
	if (v[3])
		WITH_KEY(c, "tmp", &acc, get_size(c, v[3], TMPFS_MIN, TMPFS_MAX, "1M to 16G", &p->tmp_bytes));
	r = check_fs_clashes(c, v[0] && v[0]->type == NODE_SEQ ? v[0] : NULL,
			     v[1] && v[1]->type == NODE_SEQ ? v[1] : NULL, p);
	if (r < 0)
		acc = r;
	return acc;
}

/* "a.b.c.d/n" or "x:y::/n"; the prefix length is required and the host bits
 * must be zero. Returns 0, -EINVAL when malformed, or -EDOM when host bits
 * are set (then `fixed` holds the network the operator probably meant). */
static int parse_cidr(const char *s, struct cordon_net_rule *rule, char *fixed, size_t fixed_size)
{
	char addr[INET6_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	uint8_t bytes[16] = {};
	size_t alen;
	unsigned prefix = 0, max, bits;
	int family;

	if (!slash)
		return -EINVAL;
	alen = (size_t)(slash - s);
	if (alen == 0 || alen >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(family, addr, bytes) != 1)
		return -EINVAL;
	max = family == AF_INET ? 32 : 128;
	/* Decimal, no sign, no leading zeros: "/020" is not "/20". */
	slash++;
	if (slash[0] < '0' || slash[0] > '9' || (slash[0] == '0' && slash[1]))
		return -EINVAL;
	for (const char *q = slash; *q; q++) {
		if (*q < '0' || *q > '9' || q - slash >= 3)
			return -EINVAL;
		prefix = prefix * 10 + (unsigned)(*q - '0');
	}
	if (prefix > max)
		return -EINVAL;

	bits = 0;
	for (unsigned i = prefix; i < max; i++)
		bits |= bytes[i / 8] & (0x80u >> (i % 8));
	if (bits) {
		uint8_t net[16];

		memcpy(net, bytes, sizeof(net));
		for (unsigned i = prefix; i < max; i++)
			net[i / 8] &= (uint8_t) ~(0x80u >> (i % 8));
		if (!inet_ntop(family, net, addr, sizeof(addr)))
			return -EINVAL;
		snprintf(fixed, fixed_size, "%s/%u", addr, prefix);
		return -EDOM;
	}
	rule->family = family;
	memcpy(rule->addr, bytes, sizeof(rule->addr));
	rule->prefix_len = (uint8_t)prefix;
	return 0;
}

static int parse_ports(struct ctx *c, const struct node *n, struct cordon_net_rule *rule)
{
	int r, acc = 0;

	r = expect(c, n, NODE_SEQ);
	if (r < 0)
		return r;
	if (n->n_items == 0)
		return err(c, n, "must list at least 1 port");
	if (n->n_items > 65535)
		return err(c, n, "must list at most 65535 ports");
	rule->ports = calloc(n->n_items, sizeof(*rule->ports));
	if (!rule->ports)
		return err_at(c, ENOMEM, 0, 0, "out of memory");
	rule->n_ports = n->n_items;
	for (size_t i = 0; i < n->n_items; i++) {
		size_t m = path_push_index(c, i);
		uint64_t port;

		if (get_uint(c, n->items[i], 1, 65535, &port) < 0)
			acc = -EINVAL;
		else
			rule->ports[i] = (uint16_t)port;
		path_pop(c, m);
	}
	if (acc == 0) {
		r = check_unique(c, n, 1);
		if (r < 0)
			acc = r;
	}
	return acc;
}

static int parse_network(struct ctx *c, const struct node *n, struct cordon_profile *p)
{
	static const char *const keys[] = {"mode", "allow"};
	static const char *const modes[] = {[CORDON_NET_NONE] = "none", [CORDON_NET_ALLOWLIST] = "allowlist"};
	static const char *const rule_keys[] = {"cidr", "ports", "protocol"};
	static const char *const protos[] = {"tcp", "udp", "any"};
	static const unsigned proto_bits[] = {CORDON_PROTO_TCP, CORDON_PROTO_UDP, CORDON_PROTO_ANY};
	const struct node *v[ELEMENTSOF(keys)];
	unsigned u;
	int r, acc;

	r = expect(c, n, NODE_MAP);
	if (r < 0)
		return r;
	acc = map_fields(c, n, keys, ELEMENTSOF(keys), v);
	p->net_mode = CORDON_NET_NONE;
	if (v[0]) {
		size_t m = path_push_key(c, "mode");

		if (v[0]->type == NODE_SCALAR && strcmp(v[0]->value, "unrestricted") == 0)
			/* There is deliberately no way to say "any destination". */
			acc = err(c, v[0],
				  "\"unrestricted\" does not exist: use none, or allowlist with the destinations the "
				  "connector needs");
		else if (get_enum(c, v[0], modes, ELEMENTSOF(modes), &u) < 0)
			acc = -EINVAL;
		else
			p->net_mode = (enum cordon_net_mode)u;
		path_pop(c, m);
	}
	if (v[1]) {
		size_t m = path_push_key(c, "allow");

		r = expect(c, v[1], NODE_SEQ);
		if (r >= 0 && v[1]->n_items > MAX_LIST)
			r = err(c, v[1], "must list at most %d entries", MAX_LIST);
		if (r >= 0 && v[1]->n_items > 0) {
			p->net_allow = calloc(v[1]->n_items, sizeof(*p->net_allow));
			if (!p->net_allow)
				r = err_at(c, ENOMEM, 0, 0, "out of memory");
		}
		if (r < 0) {
			acc = r;
			path_pop(c, m);
			goto mode_check;
		}
		p->n_net_allow = v[1]->n_items;
		for (size_t i = 0; i < v[1]->n_items; i++) {
			const struct node *e = v[1]->items[i], *rv[ELEMENTSOF(rule_keys)];
			struct cordon_net_rule *rule = &p->net_allow[i];
			size_t mi = path_push_index(c, i);

			rule->protocols = CORDON_PROTO_TCP;
			if (expect(c, e, NODE_MAP) < 0) {
				acc = -EINVAL;
				path_pop(c, mi);
				continue;
			}
			if (map_fields(c, e, rule_keys, ELEMENTSOF(rule_keys), rv) < 0)
				acc = -EINVAL;
			if (!rv[0])
				acc = missing(c, e, "cidr");
			else {
				size_t mc = path_push_key(c, "cidr");
				char fixed[INET6_ADDRSTRLEN + 8];

				if (expect(c, rv[0], NODE_SCALAR) < 0)
					acc = -EINVAL;
				else {
					r = parse_cidr(rv[0]->value, rule, fixed, sizeof(fixed));
					if (r == -EDOM)
						acc = err(c, rv[0], "host bits are set in %s (the network is %s)",
							  quote(rv[0]).s, fixed);
					else if (r < 0)
						acc = err(c, rv[0],
							  "must be an IPv4 or IPv6 network with a prefix length, like "
							  "192.0.2.0/24 or 2001:db8::/32 (got %s)",
							  quote(rv[0]).s);
				}
				path_pop(c, mc);
			}
			if (!rv[1])
				acc = missing(c, e, "ports");
			else
				WITH_KEY(c, "ports", &acc, parse_ports(c, rv[1], rule));
			if (rv[2]) {
				r = 0;
				WITH_KEY(c, "protocol", &r, get_enum(c, rv[2], protos, ELEMENTSOF(protos), &u));
				if (r < 0)
					acc = r;
				else
					rule->protocols = proto_bits[u];
			}
			path_pop(c, mi);
		}
		path_pop(c, m);
	}
mode_check:
	if (p->net_mode == CORDON_NET_NONE && v[1] && v[1]->type == NODE_SEQ && v[1]->n_items > 0) {
		size_t m = path_push_key(c, "allow");

		acc = err(c, v[1], "mode none allows no destinations (set mode: allowlist or remove allow)");
		path_pop(c, m);
	}
	if (p->net_mode == CORDON_NET_ALLOWLIST && (!v[1] || (v[1]->type == NODE_SEQ && v[1]->n_items == 0))) {
		size_t m = path_push_key(c, "mode");

		acc = err(c, v[0], "an allowlist needs at least one allow entry (use mode: none for no network)");
		path_pop(c, m);
	}
	return acc;
}

static int parse_limits(struct ctx *c, const struct node *n, struct cordon_profile *p)
{
	static const char *const keys[] = {"memory", "pids", "cpu", "nofile"};
	const struct node *v[ELEMENTSOF(keys)];
	int r, acc;

	r = expect(c, n, NODE_MAP);
	if (r < 0)
		return r;
	acc = map_fields(c, n, keys, ELEMENTSOF(keys), v);
	if (v[0])
		WITH_KEY(c, "memory", &acc, get_size(c, v[0], MEM_MIN, MEM_MAX, "4M to 1024G", &p->mem_bytes));
	if (v[1])
		WITH_KEY(c, "pids", &acc, get_uint(c, v[1], PIDS_MIN, PIDS_MAX, &p->pids_max));
	if (v[2]) {
		size_t m = path_push_key(c, "cpu");
		uint64_t micro;

		if (expect(c, v[2], NODE_SCALAR) < 0)
			acc = -EINVAL;
		else if (!v[2]->plain || leading_zero(v[2]->value) || parse_decimal_micro(v[2]->value, &micro) < 0 ||
			 micro < CPU_MIN_MICRO || micro > CPU_MAX_MICRO)
			acc = err(c, v[2], "must be a number of CPUs from 0.01 to 1024, at most 6 decimals (got %s)",
				  quote(v[2]).s);
		else
			p->cpu_micro = micro;
		path_pop(c, m);
	}
	if (v[3])
		WITH_KEY(c, "nofile", &acc, get_uint(c, v[3], NOFILE_MIN, NOFILE_MAX, &p->nofile));
	return acc;
}

/* A profile that sets no limit still gets one (issue 11, finding 10): a
 * connector without `limits` used to run unlimited while its report said
 * cgroup "enforced". The defaults are recorded so that the report and
 * --check can say which limits the profile did not choose. */
static void apply_limit_defaults(struct cordon_profile *p)
{
	p->limits_defaulted = 0;
	if (!p->mem_bytes) {
		p->mem_bytes = CORDON_LIMIT_DEFAULT_MEMORY;
		p->limits_defaulted |= CORDON_LIMIT_MEMORY;
	}
	if (!p->pids_max) {
		p->pids_max = CORDON_LIMIT_DEFAULT_PIDS;
		p->limits_defaulted |= CORDON_LIMIT_PIDS;
	}
	if (!p->cpu_micro) {
		p->cpu_micro = CORDON_LIMIT_DEFAULT_CPU_MICRO;
		p->limits_defaulted |= CORDON_LIMIT_CPU;
	}
	if (!p->nofile) {
		p->nofile = CORDON_LIMIT_DEFAULT_NOFILE;
		p->limits_defaulted |= CORDON_LIMIT_NOFILE;
	}
}

static int parse_seccomp(struct ctx *c, const struct node *n, struct cordon_profile *p)
{
	static const char *const keys[] = {"base", "allow", "deny", "action"};
	static const char *const bases[] = {[CORDON_SECCOMP_DEFAULT] = "default", [CORDON_SECCOMP_STRICT] = "strict"};
	static const char *const actions[] = {
	    [CORDON_SECCOMP_ERRNO] = "errno",
	    [CORDON_SECCOMP_KILL] = "kill",
	    [CORDON_SECCOMP_LOG] = "log",
	};
	const struct node *v[ELEMENTSOF(keys)];
	unsigned u;
	int r, acc;

	r = expect(c, n, NODE_MAP);
	if (r < 0)
		return r;
	acc = map_fields(c, n, keys, ELEMENTSOF(keys), v);
	if (v[0]) {
		r = 0;
		WITH_KEY(c, "base", &r, get_enum(c, v[0], bases, ELEMENTSOF(bases), &u));
		if (r < 0)
			acc = r;
		else
			p->seccomp_base = (enum cordon_seccomp_base)u;
	}
	if (v[1])
		WITH_KEY(
		    c, "allow", &acc,
		    get_string_list(c, v[1], 0, MAX_LIST, check_syscall, true, &p->seccomp_allow, &p->n_seccomp_allow));
	if (v[2])
		WITH_KEY(
		    c, "deny", &acc,
		    get_string_list(c, v[2], 0, MAX_LIST, check_syscall, true, &p->seccomp_deny, &p->n_seccomp_deny));
	if (v[3]) {
		r = 0;
		WITH_KEY(c, "action", &r, get_enum(c, v[3], actions, ELEMENTSOF(actions), &u));
		if (r < 0)
			acc = r;
		else
			p->seccomp_action = (enum cordon_seccomp_action)u;
	}
	for (size_t i = 0; i < p->n_seccomp_deny; i++) {
		size_t m;

		if (!p->seccomp_deny[i] || !strv_contains_n(p->seccomp_allow, p->n_seccomp_allow, p->seccomp_deny[i]))
			continue;
		m = path_push_key(c, "deny");
		path_push_index(c, i);
		acc = err(c, v[2]->items[i], "%s is in both allow and deny", p->seccomp_deny[i]);
		path_pop(c, m);
	}
	return acc;
}

static int parse_require(struct ctx *c, const struct node *n, struct cordon_profile *p)
{
	static const char *const names[] = {"landlock", "seccomp", "cgroup", "namespaces", "network"};
	int r, acc = 0;

	r = expect(c, n, NODE_SEQ);
	if (r < 0)
		return r;
	p->require = 0;
	for (size_t i = 0; i < n->n_items; i++) {
		size_t m = path_push_index(c, i);
		unsigned u;

		if (get_enum(c, n->items[i], names, ELEMENTSOF(names), &u) < 0)
			acc = -EINVAL;
		else
			p->require |= 1u << u;
		path_pop(c, m);
	}
	if (acc == 0)
		acc = check_unique(c, n, 1);
	return acc;
}

/* POSIX-portable user names, as useradd accepts them by default. */
static bool user_name_is_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 32 || !((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

static int parse_sandbox(struct ctx *c, const struct node *n, struct cordon_profile *p)
{
	static const char *const keys[] = {"user", "filesystem", "network", "limits", "seccomp", "require"};
	const struct node *v[ELEMENTSOF(keys)];
	int r, acc;

	r = expect(c, n, NODE_MAP);
	if (r < 0)
		return r;
	acc = map_fields(c, n, keys, ELEMENTSOF(keys), v);
	if (v[0]) {
		size_t m = path_push_key(c, "user");

		if (expect(c, v[0], NODE_SCALAR) < 0)
			acc = -EINVAL;
		else if (strcmp(v[0]->value, "dynamic") == 0)
			p->user = NULL;
		else if (strcmp(v[0]->value, "root") == 0)
			acc = err(c, v[0], "a connector never runs as root");
		else if (!user_name_is_valid(v[0]->value))
			acc =
			    err(c, v[0], "must be dynamic or a user name ([a-z_][a-z0-9_-]*, at most 32 bytes; got %s)",
				quote(v[0]).s);
		else if (get_string(c, v[0], 32, &p->user) < 0)
			acc = -EINVAL;
		path_pop(c, m);
	}
	if (!v[1])
		acc = missing(c, n, "filesystem");
	else
		WITH_KEY(c, "filesystem", &acc, parse_filesystem(c, v[1], p));
	p->net_mode = CORDON_NET_NONE;
	if (v[2])
		WITH_KEY(c, "network", &acc, parse_network(c, v[2], p));
	if (v[3])
		WITH_KEY(c, "limits", &acc, parse_limits(c, v[3], p));
	apply_limit_defaults(p);
	if (v[4])
		WITH_KEY(c, "seccomp", &acc, parse_seccomp(c, v[4], p));
	p->require = REQUIRE_DEFAULT;
	if (v[5])
		WITH_KEY(c, "require", &acc, parse_require(c, v[5], p));
	return acc;
}

static const char *const risk_names[] = {
    [CORDON_RISK_READ] = "read", [CORDON_RISK_WRITE] = "write",	      [CORDON_RISK_DESTRUCTIVE] = "destructive",
    [CORDON_RISK_HIGH] = "high", [CORDON_RISK_CRITICAL] = "critical",
};

static int parse_tools(struct ctx *c, const struct node *n, struct cordon_profile *p)
{
	static const char *const keys[] = {"default_risk", "risk", "replay", "grant"};
	static const char *const replays[] = {[CORDON_REPLAY_UNSAFE] = "unsafe", [CORDON_REPLAY_SAFE] = "safe"};
	const struct node *v[ELEMENTSOF(keys)];
	unsigned u;
	int r, acc;

	r = expect(c, n, NODE_MAP);
	if (r < 0)
		return r;
	acc = map_fields(c, n, keys, ELEMENTSOF(keys), v);
	p->default_risk = CORDON_RISK_HIGH;
	if (v[0]) {
		r = 0;
		WITH_KEY(c, "default_risk", &r, get_enum(c, v[0], risk_names, ELEMENTSOF(risk_names), &u));
		if (r < 0)
			acc = r;
		else
			p->default_risk = (enum cordon_risk)u;
	}
	/* No table is a valid policy: every tool then gets default_risk. */
	if (v[1]) {
		size_t m = path_push_key(c, "risk");
		const struct node *t = v[1];

		r = expect(c, t, NODE_MAP);
		if (r >= 0 && map_size(t) > MAX_LIST)
			r = err(c, t, "must list at most %d entries", MAX_LIST);
		if (r >= 0 && map_size(t) > 0) {
			p->risk = calloc(map_size(t), sizeof(*p->risk));
			if (!p->risk)
				r = err_at(c, ENOMEM, 0, 0, "out of memory");
		}
		if (r >= 0) {
			p->n_risk = map_size(t);
			for (size_t i = 0; i < map_size(t); i++) {
				const struct node *key = t->items[2 * i], *val = t->items[2 * i + 1];
				size_t mk;

				if (expect(c, key, NODE_SCALAR) < 0) {
					acc = -EINVAL;
					continue;
				}
				mk = path_push_key(c, key->value);
				if (check_tool_name(c, key) < 0 ||
				    get_string(c, key, MAX_TOOL_NAME, &p->risk[i].tool) < 0 ||
				    get_enum(c, val, risk_names, ELEMENTSOF(risk_names), &u) < 0)
					acc = -EINVAL;
				else
					p->risk[i].risk = (enum cordon_risk)u;
				path_pop(c, mk);
			}
			r = check_unique(c, t, 2);
		}
		if (r < 0)
			acc = r;
		path_pop(c, m);
	}
	if (v[2]) {
		size_t m = path_push_key(c, "replay");
		const struct node *t = v[2];

		r = expect(c, t, NODE_MAP);
		if (r >= 0 && map_size(t) > MAX_LIST)
			r = err(c, t, "must list at most %d entries", MAX_LIST);
		if (r >= 0 && map_size(t) > 0) {
			p->replay = calloc(map_size(t), sizeof(*p->replay));
			if (!p->replay)
				r = err_at(c, ENOMEM, 0, 0, "out of memory");
		}
		if (r >= 0) {
			p->n_replay = map_size(t);
			for (size_t i = 0; i < map_size(t); i++) {
				const struct node *key = t->items[2 * i], *val = t->items[2 * i + 1];
				size_t mk;

				if (expect(c, key, NODE_SCALAR) < 0) {
					acc = -EINVAL;
					continue;
				}
				mk = path_push_key(c, key->value);
				if (check_tool_name(c, key) < 0 ||
				    get_string(c, key, MAX_TOOL_NAME, &p->replay[i].tool) < 0 ||
				    get_enum(c, val, replays, ELEMENTSOF(replays), &u) < 0)
					acc = -EINVAL;
				else {
					p->replay[i].replay = (enum cordon_replay)u;
					/* A typo here would silently mean "unsafe". */
					if (!cordon_profile_tool_risk_named(p, key->value))
						acc = err(c, key, "tool %s is not named in tools.risk", quote(key).s);
				}
				path_pop(c, mk);
			}
			r = check_unique(c, t, 2);
		}
		if (r < 0)
			acc = r;
		path_pop(c, m);
	}
	if (v[3]) {
		size_t m = path_push_key(c, "grant");

		r = get_string_list(c, v[3], 0, MAX_LIST, check_tool_name, true, &p->grant, &p->n_grant);
		if (r < 0)
			acc = r;
		/* Granting a tool the risk table does not name is almost always a
		 * typo, and would grant it at default_risk. */
		for (size_t i = 0; r >= 0 && i < p->n_grant; i++) {
			size_t mi;

			if (cordon_profile_tool_risk_named(p, p->grant[i]))
				continue;
			mi = path_push_index(c, i);
			acc = err(c, v[3]->items[i], "tool %s is not named in tools.risk", quote(v[3]->items[i]).s);
			path_pop(c, mi);
		}
		path_pop(c, m);
	}
	return acc;
}

static int parse_root(struct ctx *c, const struct node *root, struct cordon_profile *p)
{
	static const char *const keys[] = {"version",	"connector", "sandbox",		"tools",
					   "resources", "prompts",   "client_requests", "approval"};
	static const char *const none_read[] = {"none", "read"};
	static const char *const requests[] = {"sampling", "elicitation"};
	const struct node *v[ELEMENTSOF(keys)], *workdir = NULL;
	unsigned u;
	int r, acc;

	if (root->type != NODE_MAP)
		return err(c, root, "the top level must be a mapping (got %s)", describe(root).s);
	acc = map_fields(c, root, keys, ELEMENTSOF(keys), v);

	if (!v[0])
		acc = missing(c, root, "version");
	else {
		size_t m = path_push_key(c, "version");
		uint64_t ver;

		if (expect(c, v[0], NODE_SCALAR) < 0)
			acc = -EINVAL;
		else if (!v[0]->plain || leading_zero(v[0]->value) || parse_u64(v[0]->value, &ver) < 0)
			acc = err(c, v[0], "must be the integer 1 (got %s)", quote(v[0]).s);
		else if (ver != 1)
			acc = err(c, v[0], "unsupported version %llu (this cordon reads version 1)",
				  (unsigned long long)ver);
		path_pop(c, m);
	}
	if (!v[1])
		acc = missing(c, root, "connector");
	else
		WITH_KEY(c, "connector", &acc, parse_connector(c, v[1], p, &workdir));
	if (!v[2])
		acc = missing(c, root, "sandbox");
	else
		WITH_KEY(c, "sandbox", &acc, parse_sandbox(c, v[2], p));
	if (!v[3])
		acc = missing(c, root, "tools");
	else
		WITH_KEY(c, "tools", &acc, parse_tools(c, v[3], p));
	if (v[4]) {
		r = 0;
		WITH_KEY(c, "resources", &r, get_enum(c, v[4], none_read, 2, &u));
		if (r < 0)
			acc = r;
		else
			p->resources_read = u == 1;
	}
	if (v[5]) {
		r = 0;
		WITH_KEY(c, "prompts", &r, get_enum(c, v[5], none_read, 2, &u));
		if (r < 0)
			acc = r;
		else
			p->prompts_read = u == 1;
	}
	if (v[6]) {
		size_t m = path_push_key(c, "client_requests");

		if (expect(c, v[6], NODE_SEQ) < 0)
			acc = -EINVAL;
		else {
			for (size_t i = 0; i < v[6]->n_items; i++) {
				const struct node *e = v[6]->items[i];
				size_t mi = path_push_index(c, i);

				if (e->type == NODE_SCALAR &&
				    (strcmp(e->value, "roots") == 0 || strcmp(e->value, "roots/list") == 0))
					acc = err(c, e,
						  "roots/list is always answered by the broker from the instance's "
						  "roots; do not list it");
				else if (get_enum(c, e, requests, ELEMENTSOF(requests), &u) < 0)
					acc = -EINVAL;
				else
					p->client_requests |= 1u << u;
				path_pop(c, mi);
			}
			r = check_unique(c, v[6], 1);
			if (r < 0)
				acc = r;
		}
		path_pop(c, m);
	}
	p->approval_ttl_sec = TTL_DEFAULT;
	if (v[7]) {
		static const char *const akeys[] = {"ttl"};
		const struct node *av[1];
		size_t m = path_push_key(c, "approval");

		if (expect(c, v[7], NODE_MAP) < 0)
			acc = -EINVAL;
		else {
			if (map_fields(c, v[7], akeys, 1, av) < 0)
				acc = -EINVAL;
			if (av[0])
				WITH_KEY(c, "ttl", &acc,
					 get_duration(c, av[0], TTL_MIN, TTL_MAX, "1s to 24h", &p->approval_ttl_sec));
		}
		path_pop(c, m);
	}

	/* The working directory must exist inside the sandbox: beneath the
	 * private /tmp or beneath a place a root is mounted. */
	if (workdir && p->workdir) {
		bool ok = path_is_beneath(p->workdir, "/tmp");

		for (size_t i = 0; !ok && i < p->n_fs_roots; i++)
			ok = p->fs_roots[i].at && path_is_beneath(p->workdir, p->fs_roots[i].at);
		if (!ok) {
			size_t m = path_push_key(c, "connector.workdir");

			acc = err(c, workdir, "must lie beneath /tmp or a sandbox.filesystem.roots[].at path (got %s)",
				  quote(workdir).s);
			path_pop(c, m);
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

static const struct cordon_tool_risk *find_risk(const struct cordon_profile *p, const char *tool)
{
	for (size_t i = 0; p->risk && i < p->n_risk; i++)
		if (p->risk[i].tool && strcmp(p->risk[i].tool, tool) == 0)
			return &p->risk[i];
	return NULL;
}

bool cordon_profile_tool_risk_named(const struct cordon_profile *p, const char *tool)
{
	return p && tool && find_risk(p, tool);
}

enum cordon_risk cordon_profile_tool_risk(const struct cordon_profile *p, const char *tool)
{
	const struct cordon_tool_risk *t = tool ? find_risk(p, tool) : NULL;

	return t ? t->risk : p->default_risk;
}

enum cordon_replay cordon_profile_tool_replay(const struct cordon_profile *p, const char *tool)
{
	for (size_t i = 0; tool && p->replay && i < p->n_replay; i++)
		if (p->replay[i].tool && strcmp(p->replay[i].tool, tool) == 0)
			return p->replay[i].replay;
	return CORDON_REPLAY_UNSAFE;
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
		err_at(c, EINVAL, 0, 0,
		       "file name must be <id>.yaml where <id> matches [a-z0-9][a-z0-9-]{0,31} (got \"%.64s\")",
		       id ? id : "");
		return finish(c, -EINVAL, diags, max_diags, ret_n_diags);
	}
	if (len > CORDON_PROFILE_MAX_BYTES) {
		err_at(c, EFBIG, 0, 0, "file is larger than 1 MiB (%zu bytes)", len);
		return finish(c, -EFBIG, diags, max_diags, ret_n_diags);
	}
	if (len == 0 || !buf) {
		err_at(c, EINVAL, 0, 0, "file is empty");
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
