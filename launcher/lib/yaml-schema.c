/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The typed getters a schema (pass 3) is written with (yaml-strict.h):
 * shapes, mapping fields, strings, paths, enums, integers, sizes,
 * durations and string lists, each with its bounds and an error naming the
 * key path and the value it got. */
#include "yaml-strict.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"

static const char *type_name(enum cordon_yaml_type t)
{
	return t == CORDON_YAML_MAP ? "a mapping" : t == CORDON_YAML_SEQ ? "a list" : "a string";
}

/* A present value of the wanted shape; scalars must not be null. */
int cordon_yaml_expect(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, enum cordon_yaml_type t)
{
	if (n->type != t || (t == CORDON_YAML_SCALAR && cordon_yaml_is_null(n)))
		return cordon_yaml_err(c, n, "expected %s, got %s", type_name(t), cordon_yaml_describe(n).s);
	return 0;
}

int cordon_yaml_missing(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *parent, const char *key)
{
	size_t m = cordon_yaml_push_key(c, key);
	int r = cordon_yaml_err(c, parent, "missing required key");

	cordon_yaml_pop(c, m);
	return r;
}

/* Splits a mapping with a fixed set of keys into vals[] (NULL when absent).
 * Reports non-string keys, unknown keys and duplicates; returns -EINVAL when
 * any was found (the known values are still filled, so checking goes on). */
int cordon_yaml_map_fields(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *map, const char *const keys[],
			   size_t n_keys, const struct cordon_yaml_node *vals[])
{
	int r = 0;

	for (size_t k = 0; k < n_keys; k++)
		vals[k] = NULL;
	for (size_t i = 0; i < cordon_yaml_map_size(map); i++) {
		const struct cordon_yaml_node *key = map->items[2 * i], *val = map->items[2 * i + 1];
		size_t k, m;

		if (key->type != CORDON_YAML_SCALAR || cordon_yaml_is_null(key)) {
			r = cordon_yaml_err(c, key, "mapping keys must be strings, got %s",
					    cordon_yaml_describe(key).s);
			continue;
		}
		for (k = 0; k < n_keys; k++)
			if (strcmp(key->value, keys[k]) == 0)
				break;
		m = cordon_yaml_push_key(c, key->value);
		if (k == n_keys) {
			char list[160];
			size_t o = 0;

			for (size_t j = 0; j < n_keys && o < sizeof(list); j++)
				o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", j ? ", " : "", keys[j]);
			/* A list too long for a message is not cut mid-word. */
			if (o >= sizeof(list))
				r = cordon_yaml_err(c, key, "unknown key (not one of the %zu keys accepted here)",
						    n_keys);
			else
				r = cordon_yaml_err(c, key, "unknown key (expected one of: %s)", list);
		} else if (vals[k])
			r = cordon_yaml_err(c, key, "duplicate key (first at line %u)", vals[k]->line);
		else
			vals[k] = val;
		cordon_yaml_pop(c, m);
	}
	return r;
}

/* The value of a string key in a mapping that has been validated, else the
 * mapping itself (for positions in messages). */
const struct cordon_yaml_node *cordon_yaml_map_get(const struct cordon_yaml_node *map, const char *key)
{
	for (size_t i = 0; map->type == CORDON_YAML_MAP && i < cordon_yaml_map_size(map); i++)
		if (map->items[2 * i]->type == CORDON_YAML_SCALAR && strcmp(map->items[2 * i]->value, key) == 0)
			return map->items[2 * i + 1];
	return map;
}

int cordon_yaml_get_string(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, size_t max, char **ret)
{
	char *s;
	int r;

	r = cordon_yaml_expect(c, n, CORDON_YAML_SCALAR);
	if (r < 0)
		return r;
	if (n->len > max)
		return cordon_yaml_err(c, n, "longer than %zu bytes", max);
	s = strdup(n->value);
	if (!s)
		return cordon_yaml_err_at(c, ENOMEM, 0, 0, "out of memory");
	*ret = s;
	return 0;
}

int cordon_yaml_get_path(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, char **ret)
{
	int r;

	r = cordon_yaml_expect(c, n, CORDON_YAML_SCALAR);
	if (r < 0)
		return r;
	if (!path_is_absolute_canonical(n->value))
		return cordon_yaml_err(c, n, "must be an absolute canonical path (got %s)", cordon_yaml_quote(n).s);
	return cordon_yaml_get_string(c, n, PATH_MAX, ret);
}

int cordon_yaml_get_enum(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, const char *const names[],
			 size_t count, unsigned *ret)
{
	char list[120];
	size_t o = 0;
	int r;

	r = cordon_yaml_expect(c, n, CORDON_YAML_SCALAR);
	if (r < 0)
		return r;
	for (size_t i = 0; i < count; i++)
		if (strcmp(n->value, names[i]) == 0) {
			*ret = (unsigned)i;
			return 0;
		}
	for (size_t i = 0; i < count && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", names[i]);
	return cordon_yaml_err(c, n, "must be one of %s (got %s)", list, cordon_yaml_quote(n).s);
}

/* "0443" is 443 to us but octal 291 to a YAML 1.1 reader: refuse the
 * ambiguity in every number. */
bool cordon_yaml_leading_zero(const char *s)
{
	return s[0] == '0' && s[1] >= '0' && s[1] <= '9';
}

/* Integers must be written plain: a quoted "64" is a string in YAML. */
int cordon_yaml_get_uint(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, uint64_t min, uint64_t max,
			 uint64_t *ret)
{
	uint64_t v;
	int r;

	r = cordon_yaml_expect(c, n, CORDON_YAML_SCALAR);
	if (r < 0)
		return r;
	if (!n->plain || cordon_yaml_leading_zero(n->value) || parse_u64(n->value, &v) < 0 || v < min || v > max)
		return cordon_yaml_err(c, n, "must be an integer from %llu to %llu (got %s)", (unsigned long long)min,
				       (unsigned long long)max, cordon_yaml_quote(n).s);
	*ret = v;
	return 0;
}

int cordon_yaml_get_size(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, uint64_t min, uint64_t max,
			 const char *range, uint64_t *ret)
{
	uint64_t v;
	int r;

	r = cordon_yaml_expect(c, n, CORDON_YAML_SCALAR);
	if (r < 0)
		return r;
	if (cordon_yaml_leading_zero(n->value) || parse_size(n->value, &v) < 0 || v < min || v > max)
		return cordon_yaml_err(c, n, "must be a size from %s (K, M, G are powers of 1024; got %s)", range,
				       cordon_yaml_quote(n).s);
	*ret = v;
	return 0;
}

int cordon_yaml_get_duration(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, uint64_t min, uint64_t max,
			     const char *range, uint64_t *ret)
{
	uint64_t v;
	int r;

	r = cordon_yaml_expect(c, n, CORDON_YAML_SCALAR);
	if (r < 0)
		return r;
	if (cordon_yaml_leading_zero(n->value) || parse_duration_sec(n->value, &v) < 0 || v < min || v > max)
		return cordon_yaml_err(c, n, "must be a duration from %s with an s, m or h suffix (got %s)", range,
				       cordon_yaml_quote(n).s);
	*ret = v;
	return 0;
}

/* A string list: each item checked by `check` (NULL: any string up to
 * CORDON_YAML_MAX_STRING bytes), duplicates refused when `unique`. Writes a
 * NULL-terminated array. */
int cordon_yaml_get_string_list(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, size_t min, size_t max,
				cordon_yaml_check_fn check, bool unique, char ***ret, size_t *ret_n)
{
	char **v;
	int r, ret_r = 0;

	r = cordon_yaml_expect(c, n, CORDON_YAML_SEQ);
	if (r < 0)
		return r;
	if (n->n_items < min)
		return cordon_yaml_err(c, n, "must list at least %zu %s", min, min == 1 ? "entry" : "entries");
	if (n->n_items > max)
		return cordon_yaml_err(c, n, "must list at most %zu entries", max);
	v = calloc(n->n_items + 1, sizeof(*v));
	if (!v)
		return cordon_yaml_err_at(c, ENOMEM, 0, 0, "out of memory");
	/* Owned by the caller's profile from here on, even when an item fails. */
	*ret = v;
	*ret_n = n->n_items;
	for (size_t i = 0; i < n->n_items; i++) {
		const struct cordon_yaml_node *item = n->items[i];
		size_t m = cordon_yaml_push_index(c, i);

		r = cordon_yaml_get_string(c, item, CORDON_YAML_MAX_STRING, &v[i]);
		if (r >= 0 && check)
			r = check(c, item);
		if (r < 0)
			ret_r = r;
		cordon_yaml_pop(c, m);
	}
	if (unique) {
		r = cordon_yaml_check_unique(c, n, 1);
		if (r < 0)
			ret_r = r;
	}
	return ret_r;
}
