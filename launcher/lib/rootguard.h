/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The root guard (bpf/rootguard.bpf.c), seen from the launcher: two BPF
 * LSM programs (path_chmod, path_chown) attached per cgroup
 * (BPF_LSM_CGROUP, Linux 6.0, "bpf" in the active LSM list) that refuse,
 * with EPERM, every chmod and chown of a mount root by a process of a
 * sandbox. A read-write root is a mount root inside its sandbox and, being
 * id-mapped, owned by the connector there: without the guard the connector
 * could change the mode of the host directory (issue 11, finding 1).
 *
 *   cordon_rootguard_open()          load and verify the programs, once
 *   cordon_rootguard_attach_group()  attach them to the launcher's group
 *                                    directory, once per group: they then
 *                                    judge every instance below it
 *   cordon_rootguard_attach()        or to one instance's cgroup2 directory
 *                                    (when there is no group)
 *   cordon_rootguard_detach()        detach an instance's attachment
 *   cordon_rootguard_close()         detach everything, unload
 *
 * Like the egress policy (netpolicy.h) the programs are attached with BPF
 * links held by this process's O_CLOEXEC file descriptors, never pinned: if
 * the launcher dies the kernel detaches them, and its connectors die with
 * it. A group attachment whose directory was removed is detached by the
 * kernel; it is released at the next attach_group() or at close.
 *
 * Not thread-safe. libbpf's process-wide print callback is swapped while
 * loading and attaching, so its messages end up in the diag.
 *
 * Built with CORDON_BPF=OFF every call returns -EOPNOTSUPP. */

#include <stdbool.h>
#include <stdint.h>

#include "../basic/diag.h"

struct cordon_rootguard_state;
struct cordon_rootguard_attachment;

/* Loads and verifies both programs. Returns 0 and writes *ret, or -errno
 * with reterr_diag naming the step (-EOPNOTSUPP without BPF support, the
 * kernel's answer to BPF_PROG_LOAD otherwise: -EPERM where the kernel
 * refuses BPF LSM programs, -EINVAL where it has no such hook). */
int cordon_rootguard_open(struct cordon_rootguard_state **ret, struct cordon_diag *reterr_diag);

/* Detaches every attachment still held and unloads. NULL is a no-op. */
void cordon_rootguard_close(struct cordon_rootguard_state *rg);

static inline void cordon_rootguard_closep(struct cordon_rootguard_state **rg)
{
	if (*rg)
		cordon_rootguard_close(*rg);
}

/* Attaches both programs to the cgroup2 directory cgroup_fd. Returns 0
 * and writes *ret, or -errno (-ENOTDIR/-EMEDIUMTYPE when cgroup_fd is not a
 * cgroup2 directory, -EEXIST when this object already guards it); on
 * failure nothing stays attached. */
int cordon_rootguard_attach(struct cordon_rootguard_state *rg, int cgroup_fd, struct cordon_rootguard_attachment **ret,
			    struct cordon_diag *reterr_diag);

/* Ensures both programs are attached to the group directory group_fd:
 * 0 when they already are (one attachment per group, kept until close),
 * else attaches them as cordon_rootguard_attach() and keeps the
 * attachment. First releases the attachments of other groups whose
 * directory is gone. Returns 0 or -errno. */
int cordon_rootguard_attach_group(struct cordon_rootguard_state *rg, int group_fd, struct cordon_diag *reterr_diag);

/* True when group_fd's directory is guarded by a group attachment of rg. */
bool cordon_rootguard_guards_group(const struct cordon_rootguard_state *rg, int group_fd);

/* Detaches (the programs are off the cgroup when this returns) and frees
 * a. Returns 0 or the first -errno; a is freed either way. NULL is a
 * no-op. */
int cordon_rootguard_detach(struct cordon_rootguard_state *rg, struct cordon_rootguard_attachment *a);

/* True when rg holds no attachment besides group ones. */
bool cordon_rootguard_is_idle(const struct cordon_rootguard_state *rg);

/* The cgroup id the attachment guards. */
uint64_t cordon_rootguard_attachment_cgroup_id(const struct cordon_rootguard_attachment *a);
