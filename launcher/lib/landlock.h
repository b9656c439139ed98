/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Landlock for connector sandboxes.
 *
 * The ruleset is created in the parent from O_PATH fds of host paths. Rules
 * are inode based, so a bind mount of the same directory inside the sandbox
 * is covered by the rule made for the host path. The child adds rules for
 * the mounts it creates itself (/tmp, /dev, /proc) and restricts itself.
 *
 * Best effort by ABI: the requested access masks are intersected with what
 * the running ABI handles (the fallthrough downgrade of the kernel's
 * sandboxer sample); the effective masks go into the enforcement report. */

#include <stdbool.h>
#include <stdint.h>

#include "probe.h"
#include "profile.h"

struct cordon_landlock_masks {
	uint64_t fs;
	uint64_t net;
	uint64_t scoped;
};

/* The running kernel's Landlock ABI version (>= 1), or -errno: -ENOSYS
 * (not built in), -EOPNOTSUPP (disabled at boot). */
int cordon_landlock_abi(void);

/* Access rights every ABI up to `abi` handles (0 for abi <= 0). */
struct cordon_landlock_masks cordon_landlock_abi_masks(int abi);

/* Filesystem rights cordon grants for a profile access level. */
uint64_t cordon_landlock_fs_access(enum cordon_fs_access a);

/* Rights for the device nodes the sandbox gets (/dev/null, ...). */
uint64_t cordon_landlock_fs_dev_node(void);

/* Creates a ruleset handling want ∩ abi_masks(abi). Writes the effective
 * masks to *ret_effective and the CLOEXEC ruleset fd to *ret_fd. Returns 0 or
 * -errno (-EOPNOTSUPP when abi <= 0). */
int cordon_landlock_ruleset_new(int abi, const struct cordon_landlock_masks *want,
				struct cordon_landlock_masks *ret_effective, int *ret_fd);

/* Allows `access` beneath the file or directory open at path_fd (O_PATH is
 * fine). The mask is reduced to what the ruleset handles and, for
 * non-directories, to the rights that apply to files. Async-signal-safe.
 * Returns 0 or -errno. */
int cordon_landlock_allow_fd(int ruleset_fd, const struct cordon_landlock_masks *handled, int path_fd, uint64_t access);

/* Same, opening path with O_PATH|O_CLOEXEC first. Async-signal-safe. */
int cordon_landlock_allow_path(int ruleset_fd, const struct cordon_landlock_masks *handled, const char *path,
			       uint64_t access);

/* Allows TCP `access` (LANDLOCK_ACCESS_NET_*) to `port`. Async-signal-safe. */
int cordon_landlock_allow_port(int ruleset_fd, const struct cordon_landlock_masks *handled, uint16_t port,
			       uint64_t access);

/* Enforces the ruleset on the calling thread (no_new_privs must already be
 * set). Async-signal-safe. Returns 0 or -errno. */
int cordon_landlock_restrict(int ruleset_fd);
