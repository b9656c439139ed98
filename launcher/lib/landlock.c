/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "landlock-uapi.h"

/* clang-format off */
#define FS_ABI1 (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
		 LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
		 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |    \
		 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK | \
		 LANDLOCK_ACCESS_FS_MAKE_SYM)

/* Rights that make sense on a non-directory; the kernel refuses others. */
#define FS_FILE (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
		 LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

#define FS_READ  (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)

/* read-write: everything a program needs to manage files, but never
 * EXECUTE (read-write roots are also mounted noexec), device creation or
 * device ioctls. REFER lets files move inside the root (and between roots
 * that both allow it); Landlock still refuses moves that would widen access. */
#define FS_RW    (FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |              \
		  LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | \
		  LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_SYM |  \
		  LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE)
/* clang-format on */

int cordon_landlock_abi(void)
{
	int abi = sys_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return abi < 0 ? negative_errno() : abi;
}

struct cordon_landlock_masks cordon_landlock_abi_masks(int abi)
{
	struct cordon_landlock_masks m = { 0, 0, 0 };

	/* Fallthrough downgrade: each ABI adds to the previous one. */
	switch (abi > 7 ? 7 : abi) {
	case 7: /* logging flags only */
	case 6:
		m.scoped |= LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
		/* fallthrough */
	case 5:
		m.fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
		/* fallthrough */
	case 4:
		m.net |= LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
		/* fallthrough */
	case 3:
		m.fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
		/* fallthrough */
	case 2:
		m.fs |= LANDLOCK_ACCESS_FS_REFER;
		/* fallthrough */
	case 1:
		m.fs |= FS_ABI1;
		break;
	default:
		break;
	}
	return m;
}

uint64_t cordon_landlock_fs_access(enum cordon_fs_access a)
{
	switch (a) {
	case CORDON_ACCESS_READ:
		return FS_READ;
	case CORDON_ACCESS_READ_EXEC:
		return FS_READ | LANDLOCK_ACCESS_FS_EXECUTE;
	case CORDON_ACCESS_READ_WRITE:
		return FS_RW;
	}
	return 0;
}

uint64_t cordon_landlock_fs_dev_node(void)
{
	return LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;
}

int cordon_landlock_ruleset_new(int abi, const struct cordon_landlock_masks *want,
				struct cordon_landlock_masks *ret_effective, int *ret_fd)
{
	struct cordon_landlock_masks can = cordon_landlock_abi_masks(abi);
	struct cordon_landlock_ruleset_attr attr = {
		.handled_access_fs = want->fs & can.fs,
		.handled_access_net = want->net & can.net,
		.scoped = want->scoped & can.scoped,
	};
	size_t size;
	int fd;

	if (abi <= 0)
		return -EOPNOTSUPP;
	/* Older ABIs reject a struct with fields they do not know. */
	if (abi < 4)
		size = offsetof(struct cordon_landlock_ruleset_attr, handled_access_net);
	else if (abi < 6)
		size = offsetof(struct cordon_landlock_ruleset_attr, scoped);
	else
		size = sizeof(attr);

	fd = sys_landlock_create_ruleset(&attr, size, 0);
	if (fd < 0)
		return negative_errno();
	/* landlock_create_ruleset() returns an O_CLOEXEC fd already. */
	*ret_effective = (struct cordon_landlock_masks){ attr.handled_access_fs, attr.handled_access_net, attr.scoped };
	*ret_fd = fd;
	return 0;
}

int cordon_landlock_allow_fd(int ruleset_fd, const struct cordon_landlock_masks *handled, int path_fd, uint64_t access)
{
	struct cordon_landlock_path_beneath_attr pb;
	struct stat st;

	if (fstat(path_fd, &st) < 0)
		return negative_errno();
	access &= handled->fs;
	if (!S_ISDIR(st.st_mode))
		access &= FS_FILE;
	if (access == 0)
		return 0; /* nothing this ABI can express: the path stays denied */
	pb.allowed_access = access;
	pb.parent_fd = path_fd;
	if (sys_landlock_add_rule(ruleset_fd, CORDON_LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		return negative_errno();
	return 0;
}

int cordon_landlock_allow_path(int ruleset_fd, const struct cordon_landlock_masks *handled, const char *path,
			       uint64_t access)
{
	int fd, r;

	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	r = cordon_landlock_allow_fd(ruleset_fd, handled, fd, access);
	(void)close(fd);
	return r;
}

int cordon_landlock_allow_port(int ruleset_fd, const struct cordon_landlock_masks *handled, uint16_t port,
			       uint64_t access)
{
	struct cordon_landlock_net_port_attr np;

	access &= handled->net;
	if (access == 0)
		return 0;
	np.allowed_access = access;
	np.port = port;
	if (sys_landlock_add_rule(ruleset_fd, CORDON_LANDLOCK_RULE_NET_PORT, &np, 0) < 0)
		return negative_errno();
	return 0;
}

int cordon_landlock_restrict(int ruleset_fd)
{
	if (sys_landlock_restrict_self(ruleset_fd, 0) < 0)
		return negative_errno();
	return 0;
}
