/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pass 3 of the profile loader (profile.c): the schema primitives every
 * section uses — typed getters with bounds, mapping fields, uniqueness — and
 * the validators of single items (names, paths, syscalls). */
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

#include "cleanup.h"
#include "fd-util.h"
#include "parse-util.h"

/* Syscall names are checked with the seccomp module's own resolver, so the
 * loader accepts exactly what the compiler accepts (libseccomp's names plus
 * cordon's table of syscalls newer than libseccomp). */
#include "seccomp.h"

/* ---- pass 3: schema ----------------------------------------------------------- */

static const char *type_name(enum node_type t)
{
	return t == NODE_MAP ? "a mapping" : t == NODE_SEQ ? "a list" : "a string";
}

/* A present value of the wanted shape; scalars must not be null. */
int profile_expect(struct ctx *c, const struct node *n, enum node_type t)
{
	if (n->type != t || (t == NODE_SCALAR && profile_node_is_null(n)))
		return profile_err(c, n, "expected %s, got %s", type_name(t), profile_describe(n).s);
	return 0;
}

int profile_missing(struct ctx *c, const struct node *parent, const char *key)
{
	size_t m = profile_path_push_key(c, key);
	int r = profile_err(c, parent, "missing required key");

	profile_path_pop(c, m);
	return r;
}

/* Splits a mapping with a fixed set of keys into vals[] (NULL when absent).
 * Reports non-string keys, unknown keys and duplicates; returns -EINVAL when
 * any was found (the known values are still filled, so checking goes on). */
int profile_map_fields(struct ctx *c, const struct node *map, const char *const keys[], size_t n_keys,
		       const struct node *vals[])
{
	int r = 0;

	for (size_t k = 0; k < n_keys; k++)
		vals[k] = NULL;
	for (size_t i = 0; i < profile_map_size(map); i++) {
		const struct node *key = map->items[2 * i], *val = map->items[2 * i + 1];
		size_t k, m;

		if (key->type != NODE_SCALAR || profile_node_is_null(key)) {
			r = profile_err(c, key, "mapping keys must be strings, got %s", profile_describe(key).s);
			continue;
		}
		for (k = 0; k < n_keys; k++)
			if (strcmp(key->value, keys[k]) == 0)
				break;
		m = profile_path_push_key(c, key->value);
		if (k == n_keys) {
			char list[160];
			size_t o = 0;

			for (size_t j = 0; j < n_keys && o < sizeof(list); j++)
				o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", j ? ", " : "", keys[j]);
			r = profile_err(c, key, "unknown key (expected one of: %s)", list);
		} else if (vals[k])
			r = profile_err(c, key, "duplicate key (first at line %u)", vals[k]->line);
		else
			vals[k] = val;
		profile_path_pop(c, m);
	}
	return r;
}

/* The value of a string key in a mapping that has been validated, else the
 * mapping itself (for positions in messages). */
const struct node *profile_map_get(const struct node *map, const char *key)
{
	for (size_t i = 0; map->type == NODE_MAP && i < profile_map_size(map); i++)
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
int profile_check_unique(struct ctx *c, const struct node *container, size_t stride)
{
	_cleanup_free_ struct dup_entry *e = NULL;
	size_t n = 0, count = container->n_items / stride;
	int r = 0;

	if (count < 2)
		return 0;
	e = calloc(count, sizeof(*e));
	if (!e)
		return profile_err_at(c, ENOMEM, 0, 0, "out of memory");
	for (size_t i = 0; i < count; i++) {
		const struct node *k = container->items[i * stride];

		if (k->type == NODE_SCALAR)
			e[n++] = (struct dup_entry){ .s = k->value, .idx = i };
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
			m = profile_path_push_key(c, dup->value);
			r = profile_err(c, dup, "duplicate key (first at line %u)", first->line);
		} else {
			m = profile_path_push_index(c, e[i].idx);
			r = profile_err(c, dup, "%s is listed twice (first at line %u)", profile_quote(dup).s,
					first->line);
		}
		profile_path_pop(c, m);
	}
	return r;
}

int profile_get_string(struct ctx *c, const struct node *n, size_t max, char **ret)
{
	char *s;
	int r;

	r = profile_expect(c, n, NODE_SCALAR);
	if (r < 0)
		return r;
	if (n->len > max)
		return profile_err(c, n, "longer than %zu bytes", max);
	s = strdup(n->value);
	if (!s)
		return profile_err_at(c, ENOMEM, 0, 0, "out of memory");
	*ret = s;
	return 0;
}

int profile_get_path(struct ctx *c, const struct node *n, char **ret)
{
	int r;

	r = profile_expect(c, n, NODE_SCALAR);
	if (r < 0)
		return r;
	if (!path_is_absolute_canonical(n->value))
		return profile_err(c, n, "must be an absolute canonical path (got %s)", profile_quote(n).s);
	return profile_get_string(c, n, PATH_MAX, ret);
}

int profile_get_enum(struct ctx *c, const struct node *n, const char *const names[], size_t count, unsigned *ret)
{
	char list[120];
	size_t o = 0;
	int r;

	r = profile_expect(c, n, NODE_SCALAR);
	if (r < 0)
		return r;
	for (size_t i = 0; i < count; i++)
		if (strcmp(n->value, names[i]) == 0) {
			*ret = (unsigned)i;
			return 0;
		}
	for (size_t i = 0; i < count && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", names[i]);
	return profile_err(c, n, "must be one of %s (got %s)", list, profile_quote(n).s);
}

/* "0443" is 443 to us but octal 291 to a YAML 1.1 reader: refuse the
 * ambiguity in every number. */
bool profile_leading_zero(const char *s)
{
	return s[0] == '0' && s[1] >= '0' && s[1] <= '9';
}

/* Integers must be written plain: a quoted "64" is a string in YAML. */
int profile_get_uint(struct ctx *c, const struct node *n, uint64_t min, uint64_t max, uint64_t *ret)
{
	uint64_t v;
	int r;

	r = profile_expect(c, n, NODE_SCALAR);
	if (r < 0)
		return r;
	if (!n->plain || profile_leading_zero(n->value) || parse_u64(n->value, &v) < 0 || v < min || v > max)
		return profile_err(c, n, "must be an integer from %llu to %llu (got %s)", (unsigned long long)min,
				   (unsigned long long)max, profile_quote(n).s);
	*ret = v;
	return 0;
}

int profile_get_size(struct ctx *c, const struct node *n, uint64_t min, uint64_t max, const char *range, uint64_t *ret)
{
	uint64_t v;
	int r;

	r = profile_expect(c, n, NODE_SCALAR);
	if (r < 0)
		return r;
	if (profile_leading_zero(n->value) || parse_size(n->value, &v) < 0 || v < min || v > max)
		return profile_err(c, n, "must be a size from %s (K, M, G are powers of 1024; got %s)", range,
				   profile_quote(n).s);
	*ret = v;
	return 0;
}

int profile_get_duration(struct ctx *c, const struct node *n, uint64_t min, uint64_t max, const char *range,
			 uint64_t *ret)
{
	uint64_t v;
	int r;

	r = profile_expect(c, n, NODE_SCALAR);
	if (r < 0)
		return r;
	if (profile_leading_zero(n->value) || parse_duration_sec(n->value, &v) < 0 || v < min || v > max)
		return profile_err(c, n, "must be a duration from %s with an s, m or h suffix (got %s)", range,
				   profile_quote(n).s);
	*ret = v;
	return 0;
}

/* A string list: each item checked by `check` (NULL: any string up to
 * MAX_STRING bytes), duplicates refused when `unique`. Writes a
 * NULL-terminated array. */
int profile_get_string_list(struct ctx *c, const struct node *n, size_t min, size_t max, item_check_fn check,
			    bool unique, char ***ret, size_t *ret_n)
{
	char **v;
	int r, ret_r = 0;

	r = profile_expect(c, n, NODE_SEQ);
	if (r < 0)
		return r;
	if (n->n_items < min)
		return profile_err(c, n, "must list at least %zu %s", min, min == 1 ? "entry" : "entries");
	if (n->n_items > max)
		return profile_err(c, n, "must list at most %zu entries", max);
	v = calloc(n->n_items + 1, sizeof(*v));
	if (!v)
		return profile_err_at(c, ENOMEM, 0, 0, "out of memory");
	/* Owned by the caller's profile from here on, even when an item fails. */
	*ret = v;
	*ret_n = n->n_items;
	for (size_t i = 0; i < n->n_items; i++) {
		const struct node *item = n->items[i];
		size_t m = profile_path_push_index(c, i);

		r = profile_get_string(c, item, MAX_STRING, &v[i]);
		if (r >= 0 && check)
			r = check(c, item);
		if (r < 0)
			ret_r = r;
		profile_path_pop(c, m);
	}
	if (unique) {
		r = profile_check_unique(c, n, 1);
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

int profile_check_env_name(struct ctx *c, const struct node *n)
{
	if (!env_name_is_valid(n->value))
		return profile_err(c, n,
				   "environment variable names are [A-Za-z_][A-Za-z0-9_]*, at most %d bytes (got %s)",
				   MAX_ENV_NAME, profile_quote(n).s);
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

int profile_check_tool_name(struct ctx *c, const struct node *n)
{
	if (!tool_name_is_valid(n->value))
		return profile_err(c, n, "tool names are 1 to %d characters of A-Z a-z 0-9 _ - . (got %s)",
				   MAX_TOOL_NAME, profile_quote(n).s);
	return 0;
}

static int check_path_item(struct ctx *c, const struct node *n)
{
	if (!path_is_absolute_canonical(n->value))
		return profile_err(c, n, "must be an absolute canonical path (got %s)", profile_quote(n).s);
	return 0;
}

int profile_check_ceiling_item(struct ctx *c, const struct node *n)
{
	int r = check_path_item(c, n);

	if (r < 0)
		return r;
	/* A ceiling of / would let delegations add any path at all. */
	if (strcmp(n->value, "/") == 0)
		return profile_err(c, n, "\"/\" cannot be a ceiling (it would allow delegating every path)");
	return 0;
}

int profile_check_syscall(struct ctx *c, const struct node *n)
{
	size_t len = strlen(n->value);

	for (size_t i = 0; i < len; i++)
		if (!((n->value[i] >= 'a' && n->value[i] <= 'z') || (n->value[i] >= '0' && n->value[i] <= '9') ||
		      n->value[i] == '_'))
			len = 0;
	if (len == 0 || len > MAX_SYSCALL_NAME || !cordon_seccomp_syscall_name_known(n->value))
		return profile_err(c, n, "unknown system call %s", profile_quote(n).s);
	return 0;
}

/* seccomp.allow: io_uring can never be allowed (docs/seccomp.md): its
 * operations run where seccomp sees none of their arguments. */
int profile_check_allowed_syscall(struct ctx *c, const struct node *n)
{
	int r = profile_check_syscall(c, n);

	if (r >= 0 && strncmp(n->value, "io_uring_", 9) == 0)
		return profile_err(c, n,
				   "%s cannot be allowed: io_uring operations (open, mkdir, setxattr) would bypass the "
				   "setuid/setgid and xattr rules",
				   n->value);
	return r;
}
