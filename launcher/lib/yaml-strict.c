/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Strict YAML, passes 1 and 2 (yaml-strict.h): the raw bytes are checked by
 * hand, then libyaml's event API builds a small tree of our own. Also the
 * error collection and key path every schema check reports through, and
 * the bounded file read.
 *
 *   1. raw bytes: size bound (checked before anything is read into memory
 *      beyond the bound), NUL bytes, UTF-8 validity, control characters and
 *      tabs in indentation. These are checked by hand so that each gets a
 *      precise message instead of a generic scanner error.
 *   2. libyaml's event API builds the tree. Anchors, aliases and tags are
 *      refused the moment the parser reports them, before any node is
 *      shared or expanded (no billion laughs); nesting depth and node count
 *      are bounded while the tree grows, and each mapping's keys are checked
 *      for duplicates when it ends.
 *
 * The schema (pass 3) belongs to each file format: yaml-schema.c has the
 * typed getters it is written with. */
#include "yaml-strict.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "cleanup.h"
#include "fd-util.h"

/* ---- the tree ------------------------------------------------------------ */
void cordon_yaml_node_free(struct cordon_yaml_node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n_items; i++)
		cordon_yaml_node_free(n->items[i]);
	free(n->items);
	free(n->value);
	free(n);
}

size_t cordon_yaml_map_size(const struct cordon_yaml_node *n)
{
	return n->n_items / 2;
}

bool cordon_yaml_is_null(const struct cordon_yaml_node *n)
{
	/* YAML 1.1/1.2 core schema nulls, but only when written plain: a quoted
	 * "null" is a string. */
	return n->type == CORDON_YAML_SCALAR && n->plain &&
	       (n->len == 0 || strcmp(n->value, "~") == 0 || strcmp(n->value, "null") == 0 ||
		strcmp(n->value, "Null") == 0 || strcmp(n->value, "NULL") == 0);
}

/* ---- error collection ------------------------------------------------------ */

static void add_diag(struct cordon_yaml_ctx *c, int error, unsigned line, unsigned column, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

static void add_diag(struct cordon_yaml_ctx *c, int error, unsigned line, unsigned column, const char *fmt, va_list ap)
{
	struct cordon_diag d;
	size_t i;

	cordon_diag_setv(&d, error, c->step ? c->step : "yaml", line, column, fmt, ap);

	/* Keep the list sorted by position (stable), so the first error is the
	 * first in the file whatever order the checks ran in. When the list is
	 * full, a later-positioned error is dropped, an earlier one evicts the
	 * last. */
	for (i = c->n_errs; i > 0; i--) {
		const struct cordon_diag *p = &c->errs[i - 1];

		if (p->line < line || (p->line == line && p->column <= column))
			break;
	}
	if (i >= CORDON_YAML_MAX_ERRORS)
		return;
	if (c->n_errs == CORDON_YAML_MAX_ERRORS)
		c->n_errs--;
	memmove(&c->errs[i + 1], &c->errs[i], (c->n_errs - i) * sizeof(c->errs[0]));
	c->errs[i] = d;
	c->n_errs++;
}

int cordon_yaml_err_at(struct cordon_yaml_ctx *c, int error, unsigned line, unsigned column, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_diag(c, error, line, column, fmt, ap);
	va_end(ap);
	return -error;
}

/* An error about node n (or the whole file when n is NULL), prefixed with the
 * current key path. Always returns -EINVAL so a check can `return cordon_yaml_err(...)`. */
int cordon_yaml_err(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, const char *fmt, ...)
{
	char msg[sizeof(((struct cordon_diag *)0)->message)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->path_len > 0)
		return cordon_yaml_err_at(c, EINVAL, n ? n->line : 0, n ? n->column : 0, "%s: %s", c->path, msg);
	return cordon_yaml_err_at(c, EINVAL, n ? n->line : 0, n ? n->column : 0, "%s", msg);
}

/* Key path: "sandbox.filesystem.roots[0].path". push returns the old length
 * for pop. Characters that would garble a message are shown as '?'. */
size_t cordon_yaml_push_key(struct cordon_yaml_ctx *c, const char *key)
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

size_t cordon_yaml_push_index(struct cordon_yaml_ctx *c, size_t idx)
{
	size_t old = c->path_len;
	int n = snprintf(c->path + c->path_len, sizeof(c->path) - c->path_len, "[%zu]", idx);

	if (n > 0)
		c->path_len = (size_t)n + old >= sizeof(c->path) ? sizeof(c->path) - 1 : c->path_len + (size_t)n;
	return old;
}

void cordon_yaml_pop(struct cordon_yaml_ctx *c, size_t old)
{
	c->path_len = old;
	c->path[old] = '\0';
}

struct cordon_yaml_quoted cordon_yaml_quote(const struct cordon_yaml_node *n)
{
	struct cordon_yaml_quoted q;
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
struct cordon_yaml_quoted cordon_yaml_describe(const struct cordon_yaml_node *n)
{
	struct cordon_yaml_quoted q;

	if (n->type == CORDON_YAML_MAP)
		snprintf(q.s, sizeof(q.s), "a mapping");
	else if (n->type == CORDON_YAML_SEQ)
		snprintf(q.s, sizeof(q.s), "a list");
	else if (cordon_yaml_is_null(n))
		snprintf(q.s, sizeof(q.s), "an empty value");
	else
		return cordon_yaml_quote(n);
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

static int check_bytes(struct cordon_yaml_ctx *c, const char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)buf;
	unsigned line = 1, column = 1;
	bool indent = true; /* still in the line's leading whitespace */

	for (size_t i = 0; i < len;) {
		size_t n;

		if (s[i] == '\0')
			return cordon_yaml_err_at(c, EINVAL, line, column,
						  "file contains a NUL byte (not a text file?)");
		n = utf8_len(s + i, len - i);
		if (n == 0)
			return cordon_yaml_err_at(c, EINVAL, line, column,
						  "invalid UTF-8 (byte 0x%02x; not a text file?)", s[i]);
		if (s[i] == '\n') {
			line++, column = 1, indent = true;
			i++;
			continue;
		}
		if (s[i] == '\t' && indent)
			return cordon_yaml_err_at(c, EINVAL, line, column,
						  "tab character in indentation (YAML indents with spaces only)");
		if ((s[i] < 0x20 && s[i] != '\t' && s[i] != '\r') || s[i] == 0x7f)
			return cordon_yaml_err_at(c, EINVAL, line, column, "control character 0x%02x is not allowed",
						  s[i]);
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			indent = false;
		i += n;
		column++;
	}
	return 0;
}

/* ---- pass 2: libyaml events -> tree ----------------------------------------- */

DEFINE_CLEANUP(node_freep, struct cordon_yaml_node *, cordon_yaml_node_free)

static int node_append(struct cordon_yaml_node *parent, struct cordon_yaml_node *child)
{
	if (parent->n_items == parent->cap_items) {
		size_t ncap = parent->cap_items ? parent->cap_items * 2 : 8;
		struct cordon_yaml_node **ni = reallocarray(parent->items, ncap, sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		parent->items = ni;
		parent->cap_items = ncap;
	}
	parent->items[parent->n_items++] = child;
	return 0;
}

static int yaml_error(struct cordon_yaml_ctx *c, const yaml_parser_t *parser, const char *buf, size_t len)
{
	unsigned line, column;
	size_t off;

	if (parser->error == YAML_MEMORY_ERROR)
		return cordon_yaml_err_at(c, ENOMEM, 0, 0, "out of memory while parsing");
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
		return cordon_yaml_err_at(c, EINVAL, line, column, "%s",
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
		return cordon_yaml_err_at(c, EINVAL, line, column,
					  "tab character is not allowed here (YAML indents with spaces only)");
	if (parser->context)
		return cordon_yaml_err_at(c, EINVAL, line, column, "YAML syntax error: %s %s (line %u)",
					  parser->problem ? parser->problem : "invalid YAML", parser->context,
					  (unsigned)parser->context_mark.line + 1);
	return cordon_yaml_err_at(c, EINVAL, line, column, "YAML syntax error: %s",
				  parser->problem ? parser->problem : "invalid YAML");
}

/* When a mapping ends, its keys must be unique: a second value that
 * silently wins is a trap in any configuration. The key path is rebuilt
 * from the stack of open nodes (an open node is the last item of its
 * parent). Returns 0, -EINVAL (duplicates, reported) or -ENOMEM. */
static int check_map_keys(struct cordon_yaml_ctx *c, struct cordon_yaml_node *const stack[], unsigned depth)
{
	const struct cordon_yaml_node *map = stack[depth - 1];
	size_t m = c->path_len;
	int r;

	if (cordon_yaml_map_size(map) < 2)
		return 0;
	for (unsigned i = 0; i + 1 < depth; i++) {
		const struct cordon_yaml_node *parent = stack[i];

		if (parent->type == CORDON_YAML_SEQ)
			cordon_yaml_push_index(c, parent->n_items - 1);
		else if (parent->n_items % 2 == 0 && parent->items[parent->n_items - 2]->type == CORDON_YAML_SCALAR)
			cordon_yaml_push_key(c, parent->items[parent->n_items - 2]->value);
		else
			cordon_yaml_push_key(c, "?"); /* inside a complex key */
	}
	r = cordon_yaml_check_unique(c, map, 2);
	cordon_yaml_pop(c, m);
	return r;
}

static int build_tree(struct cordon_yaml_ctx *c, const char *buf, size_t len, struct cordon_yaml_node **ret)
{
	_cleanup_(node_freep) struct cordon_yaml_node *root = NULL;
	struct cordon_yaml_node *stack[CORDON_YAML_MAX_DEPTH];
	unsigned depth = 0, n_nodes = 0, n_docs = 0;
	yaml_parser_t parser;
	yaml_event_t ev;
	bool done = false;
	int r = 0, dup_r = 0;

	if (!yaml_parser_initialize(&parser))
		return cordon_yaml_err_at(c, ENOMEM, 0, 0, "out of memory while parsing");
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	/* No yaml_parser_set_encoding(): pass 1 proved the input is UTF-8, and
	 * detection is what makes libyaml skip a byte-order mark. */

	while (!done && r >= 0) {
		unsigned line, column;
		const yaml_char_t *anchor = NULL, *tag = NULL;
		struct cordon_yaml_node *n;

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
				r = cordon_yaml_err_at(c, EINVAL, line, column, "only one YAML document is allowed");
			else if (ev.data.document_start.tag_directives.start !=
				 ev.data.document_start.tag_directives.end)
				r = cordon_yaml_err_at(c, EINVAL, line, column,
						       "YAML %%TAG directives are not allowed");
			break;
		case YAML_ALIAS_EVENT:
			r = cordon_yaml_err_at(c, EINVAL, line, column,
					       "YAML aliases (*%s) are not allowed: cordon refuses anchors and aliases",
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
				r = cordon_yaml_err_at(
					c, EINVAL, line, column,
					"YAML anchors (&%s) are not allowed: cordon refuses anchors and aliases",
					(const char *)anchor);
				break;
			}
			if (tag) {
				r = cordon_yaml_err_at(c, EINVAL, line, column, "YAML tags (%s) are not allowed",
						       (const char *)tag);
				break;
			}
			if (++n_nodes > CORDON_YAML_MAX_NODES) {
				r = cordon_yaml_err_at(c, EINVAL, line, column, "more than %d YAML nodes",
						       CORDON_YAML_MAX_NODES);
				break;
			}
			if (ev.type != YAML_SCALAR_EVENT && depth >= CORDON_YAML_MAX_DEPTH) {
				r = cordon_yaml_err_at(c, EINVAL, line, column, "nesting deeper than %d levels",
						       CORDON_YAML_MAX_DEPTH);
				break;
			}
			if (ev.type == YAML_SCALAR_EVENT && memchr(ev.data.scalar.value, 0, ev.data.scalar.length)) {
				r = cordon_yaml_err_at(c, EINVAL, line, column,
						       "strings must not contain NUL characters");
				break;
			}
			n = calloc(1, sizeof(*n));
			if (!n) {
				r = cordon_yaml_err_at(c, ENOMEM, 0, 0, "out of memory while parsing");
				break;
			}
			n->line = line;
			n->column = column;
			if (ev.type == YAML_SCALAR_EVENT) {
				n->type = CORDON_YAML_SCALAR;
				n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
				n->len = ev.data.scalar.length;
				n->value = strndup((const char *)ev.data.scalar.value, n->len);
			} else
				n->type = ev.type == YAML_SEQUENCE_START_EVENT ? CORDON_YAML_SEQ : CORDON_YAML_MAP;
			/* Attach first, so every node is owned by the tree. */
			if (depth > 0)
				r = node_append(stack[depth - 1], n);
			else if (!root)
				root = n;
			else
				r = -ENOMEM; /* unreachable: one document, one root */
			if (r < 0) {
				cordon_yaml_node_free(n);
				r = cordon_yaml_err_at(c, ENOMEM, 0, 0, "out of memory while parsing");
				break;
			}
			if (n->type == CORDON_YAML_SCALAR && !n->value) {
				r = cordon_yaml_err_at(c, ENOMEM, 0, 0, "out of memory while parsing");
				break;
			}
			if (n->type != CORDON_YAML_SCALAR)
				stack[depth++] = n;
			break;
		case YAML_MAPPING_END_EVENT:
			/* Duplicates are collected, not fatal: parsing goes on to
			 * report them all. */
			if (depth > 0) {
				int k = check_map_keys(c, stack, depth);

				if (k == -ENOMEM)
					r = k;
				else if (k < 0)
					dup_r = k;
			}
			if (depth > 0)
				depth--;
			break;
		case YAML_SEQUENCE_END_EVENT:
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
	if (dup_r < 0)
		return dup_r;
	if (!root)
		return cordon_yaml_err_at(c, EINVAL, 0, 0,
					  "file contains no YAML document (only comments or blank lines)");
	*ret = TAKE_PTR(root);
	return 0;
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
int cordon_yaml_check_unique(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *container, size_t stride)
{
	_cleanup_free_ struct dup_entry *e = NULL;
	size_t n = 0, count = container->n_items / stride;
	int r = 0;

	if (count < 2)
		return 0;
	e = calloc(count, sizeof(*e));
	if (!e)
		return cordon_yaml_err_at(c, ENOMEM, 0, 0, "out of memory");
	for (size_t i = 0; i < count; i++) {
		const struct cordon_yaml_node *k = container->items[i * stride];

		if (k->type == CORDON_YAML_SCALAR)
			e[n++] = (struct dup_entry){ .s = k->value, .idx = i };
	}
	qsort(e, n, sizeof(*e), dup_cmp);
	for (size_t i = 1; i < n; i++) {
		const struct cordon_yaml_node *first, *dup;
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
			m = cordon_yaml_push_key(c, dup->value);
			r = cordon_yaml_err(c, dup, "duplicate key (first at line %u)", first->line);
		} else {
			m = cordon_yaml_push_index(c, e[i].idx);
			r = cordon_yaml_err(c, dup, "%s is listed twice (first at line %u)", cordon_yaml_quote(dup).s,
					    first->line);
		}
		cordon_yaml_pop(c, m);
	}
	return r;
}

/* "1 MiB", "64 KiB": how messages say a bound. */
static void format_bound(size_t max, char buf[static 32])
{
	if (max >= 1024 * 1024 && max % (1024 * 1024) == 0)
		snprintf(buf, 32, "%zu MiB", max / (1024 * 1024));
	else if (max >= 1024 && max % 1024 == 0)
		snprintf(buf, 32, "%zu KiB", max / 1024);
	else
		snprintf(buf, 32, "%zu bytes", max);
}

int cordon_yaml_parse(struct cordon_yaml_ctx *c, const char *buf, size_t len, size_t max, struct cordon_yaml_node **ret)
{
	char bound[32];
	int r;

	if (len > max) {
		format_bound(max, bound);
		return cordon_yaml_err_at(c, EFBIG, 0, 0, "file is larger than %s (%zu bytes)", bound, len);
	}
	if (len == 0 || !buf)
		return cordon_yaml_err_at(c, EINVAL, 0, 0, "file is empty");
	r = check_bytes(c, buf, len);
	if (r < 0)
		return r;
	return build_tree(c, buf, len, ret);
}

int cordon_yaml_read_file(const char *path, size_t max, const char *step, char **ret_buf, size_t *ret_len,
			  struct cordon_diag *d)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -EBADF;
	char bound[32];
	struct stat st;
	ssize_t n;

	if (max >= SSIZE_MAX)
		return cordon_diag_set(d, EINVAL, step, "bound too large");
	format_bound(max, bound);
	/* O_NONBLOCK so a FIFO planted at the path cannot hang the reader; it
	 * is refused below as not a regular file. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;

		return cordon_diag_set(d, e, step, "cannot open: %s", strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		int e = errno;

		return cordon_diag_set(d, e, step, "cannot stat: %s", strerror(e));
	}
	if (!S_ISREG(st.st_mode))
		return cordon_diag_set(d, EINVAL, step, "not a regular file");
	/* Refused on the size the file claims, before reading it. */
	if (st.st_size > (off_t)max)
		return cordon_diag_set(d, EFBIG, step, "file is larger than %s (%lld bytes)", bound,
				       (long long)st.st_size);
	buf = malloc(max + 1);
	if (!buf)
		return cordon_diag_set(d, ENOMEM, step, "out of memory");
	/* One byte past the bound proves a file that grew meanwhile is too big. */
	n = read_full(fd, buf, max + 1);
	if (n < 0)
		return cordon_diag_set(d, (int)-n, step, "cannot read: %s", strerror((int)-n));
	if ((size_t)n > max)
		return cordon_diag_set(d, EFBIG, step, "file is larger than %s (it grew while being read)", bound);
	buf[n] = '\0';
	*ret_buf = TAKE_PTR(buf);
	*ret_len = (size_t)n;
	return 0;
}
