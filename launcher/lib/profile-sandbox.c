/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pass 3 of the profile loader (profile.c): the connector and sandbox
 * sections — connector (command, env, credentials), sandbox (filesystem,
 * limits, seccomp, require, user). The network section is in
 * profile-network.c, tools in profile-tools.c. */
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

/* ---- sections ---- */

static int get_env_name(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, char **ret)
{
	int r = cordon_yaml_expect(c, n, CORDON_YAML_SCALAR);

	if (r >= 0)
		r = profile_check_env_name(c, n);
	if (r >= 0)
		r = cordon_yaml_get_string(c, n, MAX_ENV_NAME, ret);
	return r;
}

static int parse_env(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, struct cordon_profile *p)
{
	static const char *const keys[] = { "pass", "set" };
	const struct cordon_yaml_node *v[ELEMENTSOF(keys)];
	int r, acc = 0;

	r = cordon_yaml_expect(c, n, CORDON_YAML_MAP);
	if (r < 0)
		return r;
	acc = cordon_yaml_map_fields(c, n, keys, ELEMENTSOF(keys), v);
	if (v[0])
		CORDON_YAML_WITH_KEY(c, "pass", &acc,
				     cordon_yaml_get_string_list(c, v[0], 0, MAX_LIST, profile_check_env_name, true,
								 &p->env_pass, &p->n_env_pass));
	if (v[1]) {
		size_t m = cordon_yaml_push_key(c, "set");

		r = cordon_yaml_expect(c, v[1], CORDON_YAML_MAP);
		if (r >= 0 && cordon_yaml_map_size(v[1]) > MAX_LIST)
			r = cordon_yaml_err(c, v[1], "must list at most %d entries", MAX_LIST);
		if (r >= 0) {
			p->env_set = calloc(cordon_yaml_map_size(v[1]), sizeof(*p->env_set));
			if (!p->env_set && cordon_yaml_map_size(v[1]) > 0)
				r = cordon_yaml_err_at(c, ENOMEM, 0, 0, "out of memory");
		}
		if (r >= 0) {
			p->n_env_set = cordon_yaml_map_size(v[1]);
			for (size_t i = 0; i < cordon_yaml_map_size(v[1]); i++) {
				const struct cordon_yaml_node *key = v[1]->items[2 * i], *val = v[1]->items[2 * i + 1];
				size_t mk;

				if (key->type != CORDON_YAML_SCALAR || cordon_yaml_is_null(key)) {
					acc = cordon_yaml_err(c, key, "mapping keys must be strings, got %s",
							      cordon_yaml_describe(key).s);
					continue;
				}
				mk = cordon_yaml_push_key(c, key->value);
				if (get_env_name(c, key, &p->env_set[i].name) < 0 ||
				    cordon_yaml_get_string(c, val, MAX_STRING, &p->env_set[i].value) < 0)
					acc = -EINVAL;
				cordon_yaml_pop(c, mk);
			}
			r = cordon_yaml_check_unique(c, v[1], 2);
		}
		if (r < 0)
			acc = r;
		cordon_yaml_pop(c, m);
	}
	return acc;
}

static int parse_credentials(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, struct cordon_profile *p)
{
	static const char *const keys[] = { "env", "file" };
	int r, acc = 0;

	r = cordon_yaml_expect(c, n, CORDON_YAML_SEQ);
	if (r < 0)
		return r;
	if (n->n_items > MAX_LIST)
		return cordon_yaml_err(c, n, "must list at most %d entries", MAX_LIST);
	p->credentials = calloc(n->n_items, sizeof(*p->credentials));
	if (!p->credentials && n->n_items > 0)
		return cordon_yaml_err_at(c, ENOMEM, 0, 0, "out of memory");
	p->n_credentials = n->n_items;
	for (size_t i = 0; i < n->n_items; i++) {
		const struct cordon_yaml_node *e = n->items[i], *v[ELEMENTSOF(keys)];
		size_t m = cordon_yaml_push_index(c, i);

		if (cordon_yaml_expect(c, e, CORDON_YAML_MAP) < 0) {
			acc = -EINVAL;
			cordon_yaml_pop(c, m);
			continue;
		}
		if (cordon_yaml_map_fields(c, e, keys, ELEMENTSOF(keys), v) < 0)
			acc = -EINVAL;
		if (!v[0])
			acc = cordon_yaml_missing(c, e, "env");
		else {
			CORDON_YAML_WITH_KEY(c, "env", &acc, get_env_name(c, v[0], &p->credentials[i].env));
		}
		if (!v[1])
			acc = cordon_yaml_missing(c, e, "file");
		else
			CORDON_YAML_WITH_KEY(c, "file", &acc, cordon_yaml_get_path(c, v[1], &p->credentials[i].file));
		cordon_yaml_pop(c, m);
	}
	return acc;
}

int profile_parse_connector(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, struct cordon_profile *p,
			    const struct cordon_yaml_node **ret_workdir)
{
	static const char *const keys[] = { "description", "command", "workdir", "env", "credentials", "instances" };
	static const char *const instances[] = { "per-session", "shared" };
	const struct cordon_yaml_node *v[ELEMENTSOF(keys)];
	unsigned u;
	int r, acc;

	r = cordon_yaml_expect(c, n, CORDON_YAML_MAP);
	if (r < 0)
		return r;
	acc = cordon_yaml_map_fields(c, n, keys, ELEMENTSOF(keys), v);
	if (v[0])
		CORDON_YAML_WITH_KEY(c, "description", &acc,
				     cordon_yaml_get_string(c, v[0], MAX_DESCRIPTION, &p->description));
	if (!v[1])
		acc = cordon_yaml_missing(c, n, "command");
	else {
		size_t m = cordon_yaml_push_key(c, "command");

		r = cordon_yaml_get_string_list(c, v[1], 1, MAX_COMMAND_ARGS, NULL, false, &p->command, &p->n_command);
		if (r < 0)
			acc = r;
		else if (!path_is_absolute_canonical(p->command[0])) {
			size_t m0 = cordon_yaml_push_index(c, 0);

			acc = cordon_yaml_err(c, v[1]->items[0], "must be an absolute canonical path (got %s)",
					      cordon_yaml_quote(v[1]->items[0]).s);
			cordon_yaml_pop(c, m0);
		}
		cordon_yaml_pop(c, m);
	}
	if (v[2]) {
		CORDON_YAML_WITH_KEY(c, "workdir", &acc, cordon_yaml_get_path(c, v[2], &p->workdir));
		*ret_workdir = v[2];
	}
	if (v[3])
		CORDON_YAML_WITH_KEY(c, "env", &acc, parse_env(c, v[3], p));
	if (v[4])
		CORDON_YAML_WITH_KEY(c, "credentials", &acc, parse_credentials(c, v[4], p));
	p->instances = CORDON_INSTANCES_PER_SESSION;
	if (v[5]) {
		r = 0;
		CORDON_YAML_WITH_KEY(c, "instances", &r,
				     cordon_yaml_get_enum(c, v[5], instances, ELEMENTSOF(instances), &u));
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
		m = cordon_yaml_push_key(c, "credentials");
		cordon_yaml_push_index(c, i);
		cordon_yaml_push_key(c, "env");
		acc = cordon_yaml_err(c, cordon_yaml_map_get(v[4]->items[i], "env"),
				      "%s is already set by connector.env or another credential", e);
		cordon_yaml_pop(c, m);
	}
	for (size_t j = 0; j < p->n_env_set; j++) {
		size_t m;

		if (!p->env_set[j].name || !strv_contains_n(p->env_pass, p->n_env_pass, p->env_set[j].name))
			continue;
		m = cordon_yaml_push_key(c, "env.set");
		cordon_yaml_push_key(c, p->env_set[j].name);
		acc = cordon_yaml_err(c, cordon_yaml_map_get(v[3], "set"),
				      "%s is both passed (env.pass) and set (env.set)", p->env_set[j].name);
		cordon_yaml_pop(c, m);
	}
	return acc;
}

static const char *const access_names[] = {
	[CORDON_ACCESS_READ] = "read",
	[CORDON_ACCESS_READ_EXEC] = "read-exec",
	[CORDON_ACCESS_READ_WRITE] = "read-write",
};

/* sandbox.filesystem.system (is_roots false) or .roots (true). */
static int parse_fs_entries(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, bool is_roots,
			    struct cordon_fs_entry **ret, size_t *ret_n)
{
	static const char *const root_keys[] = { "path", "access", "at", "allow_uid0_owner" };
	static const char *const bools[] = { "false", "true" };
	struct cordon_fs_entry *e;
	int r, acc = 0;

	r = cordon_yaml_expect(c, n, CORDON_YAML_SEQ);
	if (r < 0)
		return r;
	if (n->n_items > MAX_LIST)
		return cordon_yaml_err(c, n, "must list at most %d entries", MAX_LIST);
	e = calloc(n->n_items, sizeof(*e));
	if (!e && n->n_items > 0)
		return cordon_yaml_err_at(c, ENOMEM, 0, 0, "out of memory");
	*ret = e;
	*ret_n = n->n_items;
	for (size_t i = 0; i < n->n_items; i++) {
		const struct cordon_yaml_node *item = n->items[i], *v[4];
		size_t m = cordon_yaml_push_index(c, i);
		unsigned a;

		if (cordon_yaml_expect(c, item, CORDON_YAML_MAP) < 0) {
			acc = -EINVAL;
			cordon_yaml_pop(c, m);
			continue;
		}
		/* `at` exists for roots only: the runtime's own files are seen
		 * where they are. */
		if (cordon_yaml_map_fields(c, item, root_keys, is_roots ? 4 : 2, v) < 0)
			acc = -EINVAL;
		if (!v[0])
			acc = cordon_yaml_missing(c, item, "path");
		else
			CORDON_YAML_WITH_KEY(c, "path", &acc, cordon_yaml_get_path(c, v[0], &e[i].path));
		if (!v[1])
			acc = cordon_yaml_missing(c, item, "access");
		else {
			r = 0;
			CORDON_YAML_WITH_KEY(c, "access", &r,
					     cordon_yaml_get_enum(c, v[1], access_names, ELEMENTSOF(access_names), &a));
			if (r >= 0 && !is_roots && a == CORDON_ACCESS_READ_WRITE)
				CORDON_YAML_WITH_KEY(
					c, "access", &r,
					cordon_yaml_err(
						c, v[1],
						"system entries are read or read-exec (the runtime's files are never "
						"writable)"));
			if (r < 0)
				acc = r;
			else
				e[i].access = (enum cordon_fs_access)a;
		}
		if (is_roots && v[2]) {
			r = 0;
			CORDON_YAML_WITH_KEY(c, "at", &r, cordon_yaml_get_path(c, v[2], &e[i].at));
			if (r >= 0 && strcmp(e[i].at, "/") == 0)
				CORDON_YAML_WITH_KEY(
					c, "at", &r,
					cordon_yaml_err(c, v[2], "a root cannot replace the sandbox's \"/\""));
			if (r < 0)
				acc = r;
		} else if (e[i].path) {
			e[i].at = strdup(e[i].path);
			if (!e[i].at)
				acc = cordon_yaml_err_at(c, ENOMEM, 0, 0, "out of memory");
		}
		/* The opt-in for a read-write root owned by uid 0 (issue 11):
		 * meaningless, so refused, on any other access. */
		if (is_roots && v[3]) {
			unsigned yes = 0;

			r = 0;
			CORDON_YAML_WITH_KEY(c, "allow_uid0_owner", &r,
					     cordon_yaml_get_enum(c, v[3], bools, ELEMENTSOF(bools), &yes));
			if (r >= 0 && yes && v[1] && e[i].access != CORDON_ACCESS_READ_WRITE)
				CORDON_YAML_WITH_KEY(
					c, "allow_uid0_owner", &r,
					cordon_yaml_err(c, v[3],
							"only a read-write root can be owned by uid 0 by permission"));
			if (r < 0)
				acc = r;
			else
				e[i].allow_uid0_owner = yes;
		}
		cordon_yaml_pop(c, m);
	}
	return acc;
}

/* Two entries that would appear at the same place inside the sandbox. The
 * error points at the later entry. */
static int check_fs_clashes(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *system,
			    const struct cordon_yaml_node *roots, const struct cordon_profile *p)
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
		m = cordon_yaml_push_key(c, "roots");
		cordon_yaml_push_index(c, i);
		acc = cordon_yaml_err(c, roots->items[i], "sandbox path %s is already used by %s", at, other);
		cordon_yaml_pop(c, m);
	}
	for (size_t i = 0; system && i < p->n_fs_system; i++)
		for (size_t j = 0; j < i; j++) {
			size_t m;

			if (!p->fs_system[i].path || !p->fs_system[j].path ||
			    strcmp(p->fs_system[i].path, p->fs_system[j].path) != 0)
				continue;
			m = cordon_yaml_push_key(c, "system");
			cordon_yaml_push_index(c, i);
			acc = cordon_yaml_err(c, system->items[i], "%s is listed twice (first at line %u)",
					      p->fs_system[i].path, system->items[j]->line);
			cordon_yaml_pop(c, m);
			break;
		}
	return acc;
}

static int parse_filesystem(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, struct cordon_profile *p)
{
	static const char *const keys[] = { "system", "roots", "ceiling", "tmp" };
	const struct cordon_yaml_node *v[ELEMENTSOF(keys)];
	int r, acc;

	r = cordon_yaml_expect(c, n, CORDON_YAML_MAP);
	if (r < 0)
		return r;
	acc = cordon_yaml_map_fields(c, n, keys, ELEMENTSOF(keys), v);
	if (!v[0])
		acc = cordon_yaml_missing(c, n, "system");
	else
		CORDON_YAML_WITH_KEY(c, "system", &acc,
				     parse_fs_entries(c, v[0], false, &p->fs_system, &p->n_fs_system));
	if (v[1])
		CORDON_YAML_WITH_KEY(c, "roots", &acc, parse_fs_entries(c, v[1], true, &p->fs_roots, &p->n_fs_roots));
	if (v[2])
		CORDON_YAML_WITH_KEY(c, "ceiling", &acc,
				     cordon_yaml_get_string_list(c, v[2], 0, MAX_LIST, profile_check_ceiling_item, true,
								 &p->ceiling, &p->n_ceiling));
	p->tmp_bytes = TMPFS_DEFAULT;
	if (v[3])
		CORDON_YAML_WITH_KEY(c, "tmp", &acc,
				     cordon_yaml_get_size(c, v[3], TMPFS_MIN, TMPFS_MAX, "1M to 16G", &p->tmp_bytes));
	r = check_fs_clashes(c, v[0] && v[0]->type == CORDON_YAML_SEQ ? v[0] : NULL,
			     v[1] && v[1]->type == CORDON_YAML_SEQ ? v[1] : NULL, p);
	if (r < 0)
		acc = r;
	return acc;
}

static int parse_limits(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, struct cordon_profile *p)
{
	static const char *const keys[] = { "memory", "pids", "cpu", "nofile" };
	const struct cordon_yaml_node *v[ELEMENTSOF(keys)];
	int r, acc;

	r = cordon_yaml_expect(c, n, CORDON_YAML_MAP);
	if (r < 0)
		return r;
	acc = cordon_yaml_map_fields(c, n, keys, ELEMENTSOF(keys), v);
	if (v[0])
		CORDON_YAML_WITH_KEY(c, "memory", &acc,
				     cordon_yaml_get_size(c, v[0], MEM_MIN, MEM_MAX, "4M to 1024G", &p->mem_bytes));
	if (v[1])
		CORDON_YAML_WITH_KEY(c, "pids", &acc, cordon_yaml_get_uint(c, v[1], PIDS_MIN, PIDS_MAX, &p->pids_max));
	if (v[2]) {
		size_t m = cordon_yaml_push_key(c, "cpu");
		uint64_t micro;

		if (cordon_yaml_expect(c, v[2], CORDON_YAML_SCALAR) < 0)
			acc = -EINVAL;
		else if (!v[2]->plain || cordon_yaml_leading_zero(v[2]->value) ||
			 parse_decimal_micro(v[2]->value, &micro) < 0 || micro < CPU_MIN_MICRO || micro > CPU_MAX_MICRO)
			acc = cordon_yaml_err(c, v[2],
					      "must be a number of CPUs from 0.01 to 1024, at most 6 decimals (got %s)",
					      cordon_yaml_quote(v[2]).s);
		else
			p->cpu_micro = micro;
		cordon_yaml_pop(c, m);
	}
	if (v[3])
		CORDON_YAML_WITH_KEY(c, "nofile", &acc,
				     cordon_yaml_get_uint(c, v[3], NOFILE_MIN, NOFILE_MAX, &p->nofile));
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

static int parse_seccomp(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, struct cordon_profile *p)
{
	static const char *const keys[] = { "base", "allow", "deny", "action" };
	static const char *const bases[] = { [CORDON_SECCOMP_DEFAULT] = "default", [CORDON_SECCOMP_STRICT] = "strict" };
	static const char *const actions[] = {
		[CORDON_SECCOMP_ERRNO] = "errno",
		[CORDON_SECCOMP_KILL] = "kill",
		[CORDON_SECCOMP_LOG] = "log",
	};
	const struct cordon_yaml_node *v[ELEMENTSOF(keys)];
	unsigned u;
	int r, acc;

	r = cordon_yaml_expect(c, n, CORDON_YAML_MAP);
	if (r < 0)
		return r;
	acc = cordon_yaml_map_fields(c, n, keys, ELEMENTSOF(keys), v);
	if (v[0]) {
		r = 0;
		CORDON_YAML_WITH_KEY(c, "base", &r, cordon_yaml_get_enum(c, v[0], bases, ELEMENTSOF(bases), &u));
		if (r < 0)
			acc = r;
		else
			p->seccomp_base = (enum cordon_seccomp_base)u;
	}
	if (v[1])
		CORDON_YAML_WITH_KEY(c, "allow", &acc,
				     cordon_yaml_get_string_list(c, v[1], 0, MAX_LIST, profile_check_allowed_syscall,
								 true, &p->seccomp_allow, &p->n_seccomp_allow));
	if (v[2])
		CORDON_YAML_WITH_KEY(c, "deny", &acc,
				     cordon_yaml_get_string_list(c, v[2], 0, MAX_LIST, profile_check_syscall, true,
								 &p->seccomp_deny, &p->n_seccomp_deny));
	if (v[3]) {
		r = 0;
		CORDON_YAML_WITH_KEY(c, "action", &r, cordon_yaml_get_enum(c, v[3], actions, ELEMENTSOF(actions), &u));
		if (r < 0)
			acc = r;
		else
			p->seccomp_action = (enum cordon_seccomp_action)u;
	}
	for (size_t i = 0; i < p->n_seccomp_deny; i++) {
		size_t m;

		if (!p->seccomp_deny[i] || !strv_contains_n(p->seccomp_allow, p->n_seccomp_allow, p->seccomp_deny[i]))
			continue;
		m = cordon_yaml_push_key(c, "deny");
		cordon_yaml_push_index(c, i);
		acc = cordon_yaml_err(c, v[2]->items[i], "%s is in both allow and deny", p->seccomp_deny[i]);
		cordon_yaml_pop(c, m);
	}
	return acc;
}

static int parse_require(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, struct cordon_profile *p)
{
	static const char *const names[] = { "landlock", "seccomp", "cgroup", "namespaces", "network", "root_guard" };
	int r, acc = 0;

	r = cordon_yaml_expect(c, n, CORDON_YAML_SEQ);
	if (r < 0)
		return r;
	p->require = 0;
	for (size_t i = 0; i < n->n_items; i++) {
		size_t m = cordon_yaml_push_index(c, i);
		unsigned u;

		if (cordon_yaml_get_enum(c, n->items[i], names, ELEMENTSOF(names), &u) < 0)
			acc = -EINVAL;
		else
			p->require |= 1u << u;
		cordon_yaml_pop(c, m);
	}
	if (acc == 0)
		acc = cordon_yaml_check_unique(c, n, 1);
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

int profile_parse_sandbox(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, struct cordon_profile *p)
{
	static const char *const keys[] = { "user", "filesystem", "network", "limits", "seccomp", "require" };
	const struct cordon_yaml_node *v[ELEMENTSOF(keys)];
	int r, acc;

	r = cordon_yaml_expect(c, n, CORDON_YAML_MAP);
	if (r < 0)
		return r;
	acc = cordon_yaml_map_fields(c, n, keys, ELEMENTSOF(keys), v);
	if (v[0]) {
		size_t m = cordon_yaml_push_key(c, "user");

		if (cordon_yaml_expect(c, v[0], CORDON_YAML_SCALAR) < 0)
			acc = -EINVAL;
		else if (strcmp(v[0]->value, "dynamic") == 0)
			p->user = NULL;
		else if (strcmp(v[0]->value, "root") == 0)
			acc = cordon_yaml_err(c, v[0], "a connector never runs as root");
		else if (!user_name_is_valid(v[0]->value))
			acc = cordon_yaml_err(
				c, v[0], "must be dynamic or a user name ([a-z_][a-z0-9_-]*, at most 32 bytes; got %s)",
				cordon_yaml_quote(v[0]).s);
		else if (cordon_yaml_get_string(c, v[0], 32, &p->user) < 0)
			acc = -EINVAL;
		cordon_yaml_pop(c, m);
	}
	if (!v[1])
		acc = cordon_yaml_missing(c, n, "filesystem");
	else
		CORDON_YAML_WITH_KEY(c, "filesystem", &acc, parse_filesystem(c, v[1], p));
	p->net_mode = CORDON_NET_NONE;
	if (v[2])
		CORDON_YAML_WITH_KEY(c, "network", &acc, profile_parse_network(c, v[2], p));
	if (v[3])
		CORDON_YAML_WITH_KEY(c, "limits", &acc, parse_limits(c, v[3], p));
	apply_limit_defaults(p);
	if (v[4])
		CORDON_YAML_WITH_KEY(c, "seccomp", &acc, parse_seccomp(c, v[4], p));
	p->require = REQUIRE_DEFAULT;
	if (v[5])
		CORDON_YAML_WITH_KEY(c, "require", &acc, parse_require(c, v[5], p));
	return acc;
}
