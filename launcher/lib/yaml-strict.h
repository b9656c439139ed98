/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Strict YAML for cordon's own files: connector profiles (profile.c) and
 * cordond's configuration (broker/daemon/daemon-config.c).
 *
 * cordon_yaml_parse() turns a bounded buffer into a small tree of its own,
 * refusing on the way everything a hand-written configuration does not need
 * and an attacker could use: NUL bytes, invalid UTF-8, control characters,
 * tabs in indentation, anchors, aliases, tags and %TAG directives, more than
 * one document, duplicate mapping keys, nesting deeper than
 * CORDON_YAML_MAX_DEPTH and more than CORDON_YAML_MAX_NODES nodes. Anchors
 * and aliases are refused the moment libyaml reports them, so nothing is
 * ever shared or expanded (no billion laughs).
 *
 * A schema is then checked on the tree with the typed getters below
 * (yaml-schema.c). Errors are collected in a struct cordon_yaml_ctx (up to
 * CORDON_YAML_MAX_ERRORS, sorted by position) as struct cordon_diag with the
 * line, the column and a message that starts with the key path of the value
 * ("sandbox.filesystem.roots[0].path: ..."). Every function that can fail
 * returns >= 0 or -errno (-ENOMEM after an allocation failure, which is
 * recorded too, at line 0). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../basic/diag.h"

#define CORDON_YAML_MAX_NODES  65536
#define CORDON_YAML_MAX_DEPTH  32
#define CORDON_YAML_MAX_ERRORS 64
#define CORDON_YAML_MAX_STRING 4096 /* bytes in a string list item */

enum cordon_yaml_type {
	CORDON_YAML_SCALAR,
	CORDON_YAML_SEQ,
	CORDON_YAML_MAP,
};

struct cordon_yaml_node {
	enum cordon_yaml_type type;
	unsigned line, column; /* 1-based */
	bool plain;	       /* scalar written without quotes or block style */
	char *value;	       /* scalar, NUL-terminated (embedded NULs are refused) */
	size_t len;
	struct cordon_yaml_node **items; /* seq: the items; map: key, value, key, value, ... */
	size_t n_items, cap_items;
};

/* One parse and its schema check: the errors found and the key path of the
 * value being checked. Large (the errors are inline): allocate it. */
struct cordon_yaml_ctx {
	const char *step; /* the diags' step: "profile", "config", ... */
	struct cordon_diag errs[CORDON_YAML_MAX_ERRORS];
	size_t n_errs;
	char path[512];
	size_t path_len;
};

/* A value quoted for a message: at most 48 characters, non-printable bytes
 * escaped, "..." when cut. */
struct cordon_yaml_quoted {
	char s[80];
};

/* Runs `call` with `key` pushed on the path; a negative result is stored in
 * *acc (so checking goes on and every error is collected). */
#define CORDON_YAML_WITH_KEY(c, key, acc, call)                                                                        \
	do {                                                                                                           \
		size_t _m = cordon_yaml_push_key((c), (key));                                                          \
		int _r = (call);                                                                                       \
		if (_r < 0)                                                                                            \
			*(acc) = _r;                                                                                   \
		cordon_yaml_pop((c), _m);                                                                              \
	} while (0)

/* ---- the parse (yaml-strict.c) ---- */

/* Reads the regular file at path, at most max bytes (refused on the size it
 * claims, before reading, and again if it grew meanwhile; a FIFO cannot
 * hang the read). Writes a malloc'd, NUL-terminated buffer and its length.
 * Returns 0 or -errno with d (step `step`, no line) saying why. */
int cordon_yaml_read_file(const char *path, size_t max, const char *step, char **ret_buf, size_t *ret_len,
			  struct cordon_diag *d);

/* Checks buf (len bytes, at most max) and builds its tree. Returns 0 and
 * writes the root (free with cordon_yaml_node_free()), or -errno with the
 * errors in c. An empty buffer, or one with only comments, is an error. */
int cordon_yaml_parse(struct cordon_yaml_ctx *c, const char *buf, size_t len, size_t max,
		      struct cordon_yaml_node **ret);

void cordon_yaml_node_free(struct cordon_yaml_node *n);

/* ---- errors and the key path (yaml-strict.c) ---- */

/* Records an error at a position without the key path. Returns -error. */
int cordon_yaml_err_at(struct cordon_yaml_ctx *c, int error, unsigned line, unsigned column, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Records an error about node n (the whole file when NULL), its message
 * prefixed with the key path. Returns -EINVAL. */
int cordon_yaml_err(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Key path: "sandbox.filesystem.roots[0].path". A push returns the old
 * length for the matching pop. */
size_t cordon_yaml_push_key(struct cordon_yaml_ctx *c, const char *key);
size_t cordon_yaml_push_index(struct cordon_yaml_ctx *c, size_t idx);
void cordon_yaml_pop(struct cordon_yaml_ctx *c, size_t old);

size_t cordon_yaml_map_size(const struct cordon_yaml_node *n);
/* A plain ~, null, Null, NULL or nothing; a quoted "null" is a string. */
bool cordon_yaml_is_null(const struct cordon_yaml_node *n);
struct cordon_yaml_quoted cordon_yaml_quote(const struct cordon_yaml_node *n);
/* What a node is, for "expected X, got Y": a mapping, a list, an empty
 * value or the quoted scalar. */
struct cordon_yaml_quoted cordon_yaml_describe(const struct cordon_yaml_node *n);
/* Reports repeated strings among items[0], items[stride], ... (map keys
 * with stride 2, list items with stride 1). Returns 0, -EINVAL or -ENOMEM. */
int cordon_yaml_check_unique(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *container, size_t stride);

/* ---- the schema's typed getters (yaml-schema.c) ---- */

typedef int (*cordon_yaml_check_fn)(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n);

/* A present value of the wanted shape; scalars must not be null. */
int cordon_yaml_expect(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, enum cordon_yaml_type t);
/* Reports key (pushed on the path) as missing from parent. */
int cordon_yaml_missing(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *parent, const char *key);
/* Splits a mapping with a fixed set of keys into vals[] (NULL when absent).
 * Reports non-string keys, unknown keys and duplicates; returns -EINVAL
 * when any was found (the known values are still filled). */
int cordon_yaml_map_fields(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *map, const char *const keys[],
			   size_t n_keys, const struct cordon_yaml_node *vals[]);
/* The value of key in a checked mapping, else the mapping (for positions). */
const struct cordon_yaml_node *cordon_yaml_map_get(const struct cordon_yaml_node *map, const char *key);
/* The getters write *ret only on success; strings are malloc'd. */
int cordon_yaml_get_string(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, size_t max, char **ret);
/* An absolute, canonical path (no "." or ".." components, no "//"). */
int cordon_yaml_get_path(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, char **ret);
int cordon_yaml_get_enum(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, const char *const names[],
			 size_t count, unsigned *ret);
/* "0443": a leading zero, refused in every number (octal to YAML 1.1). */
bool cordon_yaml_leading_zero(const char *s);
/* A plain decimal integer from min to max. */
int cordon_yaml_get_uint(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, uint64_t min, uint64_t max,
			 uint64_t *ret);
/* A size with an optional K, M or G suffix (powers of 1024); range is how
 * messages say min to max ("1M to 16G"). */
int cordon_yaml_get_size(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, uint64_t min, uint64_t max,
			 const char *range, uint64_t *ret);
/* A duration in seconds with an s, m or h suffix. */
int cordon_yaml_get_duration(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, uint64_t min, uint64_t max,
			     const char *range, uint64_t *ret);
/* A list of min to max strings of at most CORDON_YAML_MAX_STRING bytes,
 * each checked by check (NULL: any), duplicates refused when unique.
 * Writes a NULL-terminated array and its count even when an item fails
 * (the caller owns and frees it either way). */
int cordon_yaml_get_string_list(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, size_t min, size_t max,
				cordon_yaml_check_fn check, bool unique, char ***ret, size_t *ret_n);
