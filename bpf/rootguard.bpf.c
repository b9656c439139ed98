/* SPDX-License-Identifier: LGPL-2.1-or-later OR GPL-2.0-only */

/* cordon's root guard (issue 11, finding 1): a connector never changes the
 * mode or the owner of a mount root, above all of its read-write roots.
 *
 * A read-write root is a bind mount of the host directory, id-mapped so
 * that the connector is the mapped owner of the directory: without this
 * program `chmod 0777 /work` (or 1777) from inside the sandbox changes the
 * host directory. Seccomp sees only the mode, never which inode a chmod
 * names, and Landlock has no right for attributes. The VFS does: every
 * chmod (chmod, fchmod, fchmodat, fchmodat2) reaches chmod_common() and
 * every chown (chown, fchown, lchown, fchownat) chown_common(), which call
 * security_path_chmod() / security_path_chown() with the struct path the
 * call resolved (or the open file's f_path), before notify_change().
 *
 * Every root of a connector is a mount of its own in the sandbox's mount
 * namespace (spawn-child.c moves each cloned tree into place), so the
 * root itself is exactly the path whose dentry is its mount's mnt_root.
 * No other path reaches that inode inside the sandbox: a directory has one
 * dentry, ".." stops at the mount root, /proc/self/fd links resolve to the
 * file's own f_path, and open_by_handle_at needs a capability the
 * connector lacks. Everything else below the root keeps its ordinary
 * rules. The sandbox's own mounts (/tmp, /dev, /proc, the read-only
 * roots) are mount roots too: they are refused alike, which costs nothing.
 *
 * Attached as BPF_LSM_CGROUP to cordon's group cgroup2 directory (or to an
 * instance's own directory when there is no group), so it judges only
 * processes of the sandboxes: for a non-socket hook the kernel runs the
 * programs of the current task's cgroup2 cgroup and of its ancestors.
 * Returning 0 refuses the call with EPERM; 1 lets the other LSMs and the
 * ordinary permission checks decide. */

#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* "GPL": LSM programs must be GPL-compatible; the file is dual licensed. */
char LICENSE[] SEC("license") = "GPL";

/* The path names its mount's root directory (or root file). */
static __always_inline bool is_mount_root(const struct path *path)
{
	return path->dentry == path->mnt->mnt_root;
}

/* (const struct path *path, umode_t mode): only the path matters. */
SEC("lsm_cgroup/path_chmod")
int BPF_PROG(cordon_rootguard_chmod, const struct path *path)
{
	return is_mount_root(path) ? 0 : 1;
}

/* (const struct path *path, kuid_t uid, kgid_t gid): any new owner, the
 * connector's own ids included, is refused for a mount root. */
SEC("lsm_cgroup/path_chown")
int BPF_PROG(cordon_rootguard_chown, const struct path *path)
{
	return is_mount_root(path) ? 0 : 1;
}
