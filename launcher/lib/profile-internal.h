/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the profile loader's files: profile.c (the public API and the
 * top level), profile-schema.c (the item validators) and the sections
 * (profile-sandbox.c, profile-network.c, profile-tools.c), all written on
 * the strict YAML layer (yaml-strict.h). Not a public API. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "profile.h"
#include "strv.h"
#include "yaml-strict.h"

#define MAX_LIST	 4096 /* entries in any list or free-form map */
#define MAX_COMMAND_ARGS 256
#define MAX_STRING	 CORDON_YAML_MAX_STRING /* bytes in any single string value */
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

/* Item validators (profile-schema.c), for cordon_yaml_get_string_list(). */
int profile_check_env_name(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n);
int profile_check_tool_name(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n);
int profile_check_ceiling_item(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n);
int profile_check_syscall(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n);
int profile_check_allowed_syscall(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n);
/* The sections (profile-sandbox.c, profile-network.c, profile-tools.c). */
int profile_parse_connector(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, struct cordon_profile *p,
			    const struct cordon_yaml_node **ret_workdir);
int profile_parse_sandbox(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, struct cordon_profile *p);
int profile_parse_network(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, struct cordon_profile *p);
int profile_parse_tools(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, struct cordon_profile *p);
