/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pass 3 of the profile loader (profile.c): the validators of single items
 * (environment variable names, tool names, ceiling paths, syscalls) the
 * sections pass to the typed getters of yaml-schema.c. */
#include "profile.h"
#include "profile-internal.h"

#include <string.h>

#include "parse-util.h"

/* Syscall names are checked with the seccomp module's own resolver, so the
 * loader accepts exactly what the compiler accepts (libseccomp's names plus
 * cordon's table of syscalls newer than libseccomp). */
#include "seccomp.h"

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

int profile_check_env_name(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n)
{
	if (!env_name_is_valid(n->value))
		return cordon_yaml_err(
			c, n, "environment variable names are [A-Za-z_][A-Za-z0-9_]*, at most %d bytes (got %s)",
			MAX_ENV_NAME, cordon_yaml_quote(n).s);
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

int profile_check_tool_name(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n)
{
	if (!tool_name_is_valid(n->value))
		return cordon_yaml_err(c, n, "tool names are 1 to %d characters of A-Z a-z 0-9 _ - . (got %s)",
				       MAX_TOOL_NAME, cordon_yaml_quote(n).s);
	return 0;
}

static int check_path_item(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n)
{
	if (!path_is_absolute_canonical(n->value))
		return cordon_yaml_err(c, n, "must be an absolute canonical path (got %s)", cordon_yaml_quote(n).s);
	return 0;
}

int profile_check_ceiling_item(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n)
{
	int r = check_path_item(c, n);

	if (r < 0)
		return r;
	/* A ceiling of / would let delegations add any path at all. */
	if (strcmp(n->value, "/") == 0)
		return cordon_yaml_err(c, n, "\"/\" cannot be a ceiling (it would allow delegating every path)");
	return 0;
}

int profile_check_syscall(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n)
{
	size_t len = strlen(n->value);

	for (size_t i = 0; i < len; i++)
		if (!((n->value[i] >= 'a' && n->value[i] <= 'z') || (n->value[i] >= '0' && n->value[i] <= '9') ||
		      n->value[i] == '_'))
			len = 0;
	if (len == 0 || len > MAX_SYSCALL_NAME || !cordon_seccomp_syscall_name_known(n->value))
		return cordon_yaml_err(c, n, "unknown system call %s", cordon_yaml_quote(n).s);
	return 0;
}

/* seccomp.allow: io_uring can never be allowed (docs/seccomp.md): its
 * operations run where seccomp sees none of their arguments. */
int profile_check_allowed_syscall(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n)
{
	int r = profile_check_syscall(c, n);

	if (r >= 0 && strncmp(n->value, "io_uring_", 9) == 0)
		return cordon_yaml_err(
			c, n,
			"%s cannot be allowed: io_uring operations (open, mkdir, setxattr) would bypass the "
			"setuid/setgid and xattr rules",
			n->value);
	return r;
}
