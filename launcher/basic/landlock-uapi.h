/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Landlock UAPI beyond what Debian 12's linux-libc-dev (Linux 6.1, Landlock
 * ABI 2) declares. Every constant is guarded so a newer header wins; the
 * structures that grew after 6.1 get cordon-named copies with the kernel's
 * layout (the kernel accepts a smaller size for older ABIs). */

#include <linux/landlock.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/* clang-format off */
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION		(1U << 0)
#endif
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER		(1ULL << 13)	/* ABI 2 */
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE		(1ULL << 14)	/* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV		(1ULL << 15)	/* ABI 5 */
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP		(1ULL << 0)	/* ABI 4 */
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP		(1ULL << 1)	/* ABI 4 */
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET	(1ULL << 0)	/* ABI 6 */
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL			(1ULL << 1)	/* ABI 6 */
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)	/* ABI 7 */
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
#define LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON	(1U << 1)	/* ABI 7 */
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)	/* ABI 7 */
#endif

/* Rule types are an enum upstream, so they cannot be #ifndef-guarded. */
#define CORDON_LANDLOCK_RULE_PATH_BENEATH	1
#define CORDON_LANDLOCK_RULE_NET_PORT		2

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset		444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule			445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self		446
#endif
/* clang-format on */

/* struct landlock_ruleset_attr as of ABI 6 (scoped added). Pass
 * offsetof(..., handled_access_net) as size for ABI < 4 and
 * offsetof(..., scoped) for ABI 4-5. */
struct cordon_landlock_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct cordon_landlock_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct cordon_landlock_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

static inline int sys_landlock_create_ruleset(const struct cordon_landlock_ruleset_attr *attr, size_t size,
					      uint32_t flags)
{
	return (int)syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

static inline int sys_landlock_add_rule(int ruleset_fd, int rule_type, const void *rule_attr, uint32_t flags)
{
	return (int)syscall(__NR_landlock_add_rule, ruleset_fd, rule_type, rule_attr, flags);
}

static inline int sys_landlock_restrict_self(int ruleset_fd, uint32_t flags)
{
	return (int)syscall(__NR_landlock_restrict_self, ruleset_fd, flags);
}
