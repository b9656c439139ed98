/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A connector profile, as defined by docs/profiles.md (the format of record
 * is ../shared/design/profiles.md). The loader is strict and all-or-nothing:
 * cordon_profile_load() either returns a complete, validated profile or
 * nothing at all. All strings are owned by the profile. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../basic/diag.h"

#define CORDON_PROFILE_MAX_BYTES  (1024 * 1024) /* files above 1 MiB are refused */
#define CORDON_PROFILE_MAX_DEPTH  32		/* YAML nesting limit */
#define CORDON_CONNECTOR_ID_MAX	  32
#define CORDON_PROFILE_MAX_ERRORS 64 /* errors collected per file */

enum cordon_fs_access {
	CORDON_ACCESS_READ,
	CORDON_ACCESS_READ_EXEC,
	CORDON_ACCESS_READ_WRITE,
};

struct cordon_fs_entry {
	char *path; /* host path, absolute and canonical */
	char *at;   /* path inside the sandbox; equal to path when not given */
	enum cordon_fs_access access;
	/* roots only, read-write only: the profile says explicitly that the
	 * host directory may be owned by uid 0 (the connector then acts as
	 * uid 0 for the files in it). Without it such a root is refused at
	 * launch. */
	bool allow_uid0_owner;
};

enum cordon_net_mode {
	CORDON_NET_NONE,
	CORDON_NET_ALLOWLIST,
};

enum cordon_net_proto {
	CORDON_PROTO_TCP = 1 << 0,
	CORDON_PROTO_UDP = 1 << 1,
	CORDON_PROTO_ANY = CORDON_PROTO_TCP | CORDON_PROTO_UDP,
};

struct cordon_net_rule {
	int family;	    /* AF_INET or AF_INET6 */
	uint8_t addr[16];   /* network address, host bits zero; IPv4 in the first 4 bytes */
	uint8_t prefix_len; /* 0..32 or 0..128 */
	unsigned protocols; /* enum cordon_net_proto bits; default TCP */
	uint16_t *ports;    /* allowed destination ports, at least one */
	size_t n_ports;
};

enum cordon_seccomp_base {
	CORDON_SECCOMP_DEFAULT,
	CORDON_SECCOMP_STRICT,
};

enum cordon_seccomp_action {
	CORDON_SECCOMP_ERRNO,
	CORDON_SECCOMP_KILL,
	CORDON_SECCOMP_LOG,
};

/* Controls a profile can name in `sandbox.require`. */
enum cordon_control {
	CORDON_CONTROL_LANDLOCK = 1 << 0,
	CORDON_CONTROL_SECCOMP = 1 << 1,
	CORDON_CONTROL_CGROUP = 1 << 2,
	CORDON_CONTROL_NAMESPACES = 1 << 3,
	CORDON_CONTROL_NETWORK = 1 << 4,
	CORDON_CONTROL_ROOT_GUARD = 1 << 5, /* the BPF LSM root guard (rootguard.h) */
};

/* Risk tiers, lowest first; the order is meaningful (comparisons). */
enum cordon_risk {
	CORDON_RISK_READ,
	CORDON_RISK_WRITE,
	CORDON_RISK_DESTRUCTIVE,
	CORDON_RISK_HIGH,
	CORDON_RISK_CRITICAL,
};
#define CORDON_RISK_COUNT (CORDON_RISK_CRITICAL + 1)

enum cordon_replay {
	CORDON_REPLAY_UNSAFE, /* the default */
	CORDON_REPLAY_SAFE,
};
#define CORDON_REPLAY_COUNT (CORDON_REPLAY_SAFE + 1)

enum cordon_instances {
	CORDON_INSTANCES_PER_SESSION,
	CORDON_INSTANCES_SHARED,
};

enum cordon_client_request {
	CORDON_CLIENT_SAMPLING = 1 << 0,
	CORDON_CLIENT_ELICITATION = 1 << 1,
};

struct cordon_env_var {
	char *name;
	char *value;
};

struct cordon_credential {
	char *env;  /* environment variable name */
	char *file; /* absolute path the broker reads */
};

struct cordon_tool_risk {
	char *tool;
	enum cordon_risk risk;
};

struct cordon_tool_replay {
	char *tool;
	enum cordon_replay replay;
};

struct cordon_profile {
	char *id; /* from the file name */
	char *path;
	/* SHA-256 (lower-case hex) of the exact bytes this profile was parsed
	 * from: what names one version of a profile between cordond and its
	 * launcher helper (docs/privsep.md, "The profiles in force"). Empty in
	 * a struct built by hand. */
	char sha256[65];

	/* connector: */
	char *description;
	char **command; /* NULL-terminated argv; command[0] absolute */
	size_t n_command;
	char *workdir; /* NULL when not given */
	char **env_pass;
	size_t n_env_pass;
	struct cordon_env_var *env_set;
	size_t n_env_set;
	struct cordon_credential *credentials;
	size_t n_credentials;
	enum cordon_instances instances;

	/* sandbox: */
	char *user; /* NULL means "dynamic" */
	struct cordon_fs_entry *fs_system;
	size_t n_fs_system;
	struct cordon_fs_entry *fs_roots;
	size_t n_fs_roots;
	char **ceiling;
	size_t n_ceiling;
	uint64_t tmp_bytes; /* private tmpfs size at /tmp */
	enum cordon_net_mode net_mode;
	struct cordon_net_rule *net_allow;
	size_t n_net_allow;
	/* The parser fills every limit the profile does not set with its
	 * CORDON_LIMIT_DEFAULT_* value and records which in limits_defaulted
	 * (CORDON_LIMIT_* bits), so a profile without `limits` is contained
	 * too. 0 only in a struct built by hand: no such limit. */
	uint64_t mem_bytes;
	uint64_t pids_max;
	uint64_t cpu_micro; /* CPUs in millionths */
	uint64_t nofile;    /* RLIMIT_NOFILE */
	unsigned limits_defaulted;
	enum cordon_seccomp_base seccomp_base;
	char **seccomp_allow;
	size_t n_seccomp_allow;
	char **seccomp_deny;
	size_t n_seccomp_deny;
	enum cordon_seccomp_action seccomp_action;
	unsigned require; /* enum cordon_control bits */

	/* tools: */
	enum cordon_risk default_risk;
	struct cordon_tool_risk *risk;
	size_t n_risk;
	struct cordon_tool_replay *replay;
	size_t n_replay;
	char **grant;
	size_t n_grant;

	bool resources_read;
	bool prompts_read;
	unsigned client_requests; /* enum cordon_client_request bits */
	uint64_t approval_ttl_sec;
};

/* Limits a profile gets when it does not set them (docs/profiles.md):
 * enough for an ordinary MCP server (node, python, a shell tool), small
 * enough that a fork or memory bomb stays contained. */
#define CORDON_LIMIT_DEFAULT_MEMORY    (1ULL << 30) /* 1G */
#define CORDON_LIMIT_DEFAULT_PIDS      256
#define CORDON_LIMIT_DEFAULT_CPU_MICRO 1000000ULL /* 1 CPU */
#define CORDON_LIMIT_DEFAULT_NOFILE    1024

enum {
	CORDON_LIMIT_MEMORY = 1u << 0,
	CORDON_LIMIT_PIDS = 1u << 1,
	CORDON_LIMIT_CPU = 1u << 2,
	CORDON_LIMIT_NOFILE = 1u << 3,
};

/* Loads and validates the profile at path; the connector id is the file name
 * without ".yaml". Returns 0 and writes *ret on success. On failure returns
 * -errno, writes nothing to *ret and, when reterr_diag is non-NULL, fills it
 * with the line, column and a message naming the key. */
int cordon_profile_load(const char *path, struct cordon_profile **ret, struct cordon_diag *reterr_diag);

/* Parses a profile from memory; `id` is the connector id, `name` is used in
 * messages. Same contract as cordon_profile_load(). */
int cordon_profile_parse(const char *id, const char *name, const char *buf, size_t len, struct cordon_profile **ret,
			 struct cordon_diag *reterr_diag);

/* Like cordon_profile_load()/_parse(), but on failure writes up to max_diags
 * errors (in file order; at most CORDON_PROFILE_MAX_ERRORS are collected) to
 * diags[] and their count to *ret_n_diags (0 on success). A syntax error
 * stops parsing, so it comes alone; schema errors are all reported. Each
 * diag's message is "<key path>: <what is wrong>" (or just what is wrong for
 * errors about the whole file); the file name is not in it: print
 * "<file>:<line>:<column>: <message>", or "<file>: <message>" when line is 0. */
int cordon_profile_load_diags(const char *path, struct cordon_profile **ret, struct cordon_diag *diags,
			      size_t max_diags, size_t *ret_n_diags);
int cordon_profile_parse_diags(const char *id, const char *name, const char *buf, size_t len,
			       struct cordon_profile **ret, struct cordon_diag *diags, size_t max_diags,
			       size_t *ret_n_diags);

void cordon_profile_free(struct cordon_profile *p);

/* True when the profile's risk table names the tool. */
bool cordon_profile_tool_risk_named(const struct cordon_profile *p, const char *tool);

/* Risk tier for a tool: the profile's table, else default_risk. */
enum cordon_risk cordon_profile_tool_risk(const struct cordon_profile *p, const char *tool);
enum cordon_replay cordon_profile_tool_replay(const struct cordon_profile *p, const char *tool);

/* The tier names ("read", "write", "destructive", "high", "critical"),
 * indexed by enum cordon_risk: one table (names.c) for the profile's
 * vocabulary, the approval binding and the audit records. to_string returns
 * NULL out of range; from_string returns 0 or -EINVAL. */
extern const char *const cordon_risk_names[CORDON_RISK_COUNT];
const char *cordon_risk_to_string(enum cordon_risk r);
int cordon_risk_from_string(const char *s, enum cordon_risk *ret);
/* The replay class names ("unsafe", "safe"), indexed by enum cordon_replay
 * (names.c); to_string returns NULL out of range. */
extern const char *const cordon_replay_names[CORDON_REPLAY_COUNT];
const char *cordon_replay_to_string(enum cordon_replay r);
const char *cordon_access_to_string(enum cordon_fs_access a);
const char *cordon_control_to_string(enum cordon_control c);

static inline void cordon_profile_freep(struct cordon_profile **p)
{
	if (*p)
		cordon_profile_free(*p);
}
