/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the profile loader's files: profile.c (passes 1 and 2, the
 * document, the public API), profile-schema.c (pass 3's primitives) and the
 * sections (profile-sandbox.c, profile-network.c, profile-tools.c). Not a
 * public API. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "profile.h"
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

struct ctx {
	struct cordon_diag errs[CORDON_PROFILE_MAX_ERRORS];
	size_t n_errs;
	char path[512]; /* the key path of the value being validated */
	size_t path_len;
	const struct node *root;
};

/* A value quoted for a message: at most 48 characters, non-printable bytes
 * escaped, "..." when cut. */
struct quoted {
	char s[80];
};

/* Runs f on the value of key `key` (when present) with the key pushed on the
 * path; collects the result in *acc. */
#define WITH_KEY(c, key, acc, call)                                                                                    \
	do {                                                                                                           \
		size_t _m = profile_path_push_key((c), (key));                                                         \
		int _r = (call);                                                                                       \
		if (_r < 0)                                                                                            \
			*(acc) = _r;                                                                                   \
		profile_path_pop((c), _m);                                                                             \
	} while (0)

typedef int (*item_check_fn)(struct ctx *c, const struct node *n);

size_t profile_map_size(const struct node *n);
bool profile_node_is_null(const struct node *n);
int profile_err_at(struct ctx *c, int error, unsigned line, unsigned column, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
int profile_err(struct ctx *c, const struct node *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
size_t profile_path_push_key(struct ctx *c, const char *key);
size_t profile_path_push_index(struct ctx *c, size_t idx);
void profile_path_pop(struct ctx *c, size_t old);
struct quoted profile_quote(const struct node *n);
struct quoted profile_describe(const struct node *n);
int profile_expect(struct ctx *c, const struct node *n, enum node_type t);
int profile_missing(struct ctx *c, const struct node *parent, const char *key);
int profile_map_fields(struct ctx *c, const struct node *map, const char *const keys[], size_t n_keys,
		       const struct node *vals[]);
const struct node *profile_map_get(const struct node *map, const char *key);
int profile_check_unique(struct ctx *c, const struct node *container, size_t stride);
int profile_get_string(struct ctx *c, const struct node *n, size_t max, char **ret);
int profile_get_path(struct ctx *c, const struct node *n, char **ret);
int profile_get_enum(struct ctx *c, const struct node *n, const char *const names[], size_t count, unsigned *ret);
bool profile_leading_zero(const char *s);
int profile_get_uint(struct ctx *c, const struct node *n, uint64_t min, uint64_t max, uint64_t *ret);
int profile_get_size(struct ctx *c, const struct node *n, uint64_t min, uint64_t max, const char *range, uint64_t *ret);
int profile_get_duration(struct ctx *c, const struct node *n, uint64_t min, uint64_t max, const char *range,
			 uint64_t *ret);
int profile_get_string_list(struct ctx *c, const struct node *n, size_t min, size_t max, item_check_fn check,
			    bool unique, char ***ret, size_t *ret_n);
int profile_check_env_name(struct ctx *c, const struct node *n);
int profile_check_tool_name(struct ctx *c, const struct node *n);
int profile_check_ceiling_item(struct ctx *c, const struct node *n);
int profile_check_syscall(struct ctx *c, const struct node *n);
int profile_check_allowed_syscall(struct ctx *c, const struct node *n);
int profile_parse_connector(struct ctx *c, const struct node *n, struct cordon_profile *p,
			    const struct node **ret_workdir);
int profile_parse_sandbox(struct ctx *c, const struct node *n, struct cordon_profile *p);
int profile_parse_network(struct ctx *c, const struct node *n, struct cordon_profile *p);
int profile_parse_tools(struct ctx *c, const struct node *n, struct cordon_profile *p);
