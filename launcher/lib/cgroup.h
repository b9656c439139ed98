/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One cgroup per connector instance, on pure cgroup v2 and on hybrid hosts
 * (v1 memory/pids/cpu hierarchies plus a controller-less cgroup2 hierarchy
 * used for BPF programs and cgroup.kill).
 *
 * Lifecycle (parent = launcher, child = the post-clone process):
 *   parent: cordon_cgroup_create()   limits written before anything runs
 *   parent: cordon_cgroup_v2_fd()    for clone3(CLONE_INTO_CGROUP) and BPF attach
 *   child:  cordon_cgroup_enter()    v1 only: joins the v1 hierarchies
 *                                    (async-signal-safe, no malloc)
 *   parent: cordon_cgroup_stats()    peak memory, OOM kills, pids peak, CPU time
 *   parent: cordon_cgroup_destroy()  kills every process, removes every directory
 *
 * Instance directories are named so that a later launcher can recognise
 * ones whose owner died (cordon_cgroup_cleanup_stale()). */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../basic/diag.h"
#include "probe.h"

struct cordon_cgroup;

struct cordon_cgroup_limits {
	uint64_t mem_bytes; /* memory.max (v2) / memory.limit_in_bytes (v1); 0 = none */
	uint64_t pids_max;  /* 0 = none */
	uint64_t cpu_micro; /* CPUs in millionths (500000 = half a CPU); 0 = none */
};

struct cordon_cgroup_stats {
	uint64_t mem_peak_bytes;
	uint64_t oom_kills;
	uint64_t pids_peak; /* 0 when the kernel does not report it */
	uint64_t cpu_usage_usec;
};

/* What cordon_cgroup_create() makes. */
struct cordon_cgroup_options {
	/* Connector id plus an instance number, [a-z0-9-], 1-64 characters. */
	const char *name;
	const struct cordon_cgroup_limits *limits;
	/* CORDON_CTRL_* bits of controllers that must be usable (else the
	 * create fails with a diag naming the controller); the others are best
	 * effort and reported in *ret_missing. */
	unsigned required;
	/* CORDON_CGROUP_DEFER_V1 (see below) or 0. */
	unsigned flags;
	/* NULL: the cgroup2 directory goes directly below "cordon"; else it
	 * is made inside this launcher's group (cordon_cgroup_group_new()),
	 * with mkdirat on the group's fd: never below a directory other than
	 * the one the caller holds. v1 directories go to the same place
	 * either way. */
	const struct cordon_cgroup_group *group;
	/* 0: the calling process. The directory's name carries the owner's pid
	 * and start time, which is what cordon_cgroup_cleanup_stale() checks;
	 * tests name another process to simulate an instance whose launcher
	 * died. */
	pid_t owner;
};

/* Creates the instance's cgroup(s) as opts says and writes the limits
 * before anything runs. Returns 0 and writes *ret and *ret_missing (bits of
 * controllers whose limits could not be applied), or -errno with the diag
 * naming the step. */
int cordon_cgroup_create(const struct cordon_caps *caps, const struct cordon_cgroup_options *opts,
			 struct cordon_cgroup **ret, unsigned *ret_missing, struct cordon_diag *reterr_diag);

/* O_DIRECTORY fd of the instance's cgroup2 directory (pure v2, or the
 * unified hierarchy on hybrid hosts); -EBADF when there is none. Owned by the
 * cgroup object. */
int cordon_cgroup_v2_fd(const struct cordon_cgroup *cg);

/* Path of the cgroup2 directory, or NULL. */
const char *cordon_cgroup_v2_path(const struct cordon_cgroup *cg);

/* In the child after clone: joins every v1 hierarchy of the instance (writes
 * "0" to the cgroup.procs fds opened by create). On pure v2 with
 * CLONE_INTO_CGROUP this is a no-op; when clone3 could not place the child
 * it joins the v2 directory too. Async-signal-safe. Returns 0 or -errno. */
int cordon_cgroup_enter(const struct cordon_cgroup *cg);

/* Moves an existing process into the instance (parent side; used by tests
 * and by cordon-exec jobs). */
int cordon_cgroup_attach_pid(const struct cordon_cgroup *cg, pid_t pid);

int cordon_cgroup_stats(const struct cordon_cgroup *cg, struct cordon_cgroup_stats *ret);

/* True when the instance's cgroups hold no process. */
bool cordon_cgroup_is_empty(const struct cordon_cgroup *cg);

/* Kills every process in the instance (cgroup.kill where available, else
 * freeze + SIGKILL each pid), waits until it is empty (bounded), removes the
 * directories and frees cg. Returns 0 or the first -errno; cg is freed
 * either way. */
int cordon_cgroup_destroy(struct cordon_cgroup *cg);

/* Removes instance cgroups left behind by a launcher that died (its pid no
 * longer exists or belongs to another process start time): kills what is
 * inside and removes the directories. Returns the number cleaned or -errno. */
int cordon_cgroup_cleanup_stale(const struct cordon_caps *caps);

/* ---- Additions beyond the first contract ---------------------------- */

/* Tells enter() whether clone3(CLONE_INTO_CGROUP) placed the child in the
 * cgroup2 directory. create() presets it from caps->clone_into_cgroup; the
 * spawner calls this with false (before cloning) when it falls back to a
 * clone without CLONE_INTO_CGROUP, so that enter() joins cgroup2 too
 * directly. (When it says "placed", enter() still checks cgroup.procs and
 * joins if the child is not there.) */
void cordon_cgroup_set_clone_placed(struct cordon_cgroup *cg, bool placed);

/* Directory through which controller c's limits were applied (the cgroup2
 * directory or the v1 one), or NULL when it was not applied. */
const char *cordon_cgroup_ctrl_path(const struct cordon_cgroup *cg, enum cordon_cgroup_ctrl c);

/* The instance directory's name, "i-<owner pid>-<owner start time>-<name>". */
const char *cordon_cgroup_dir_name(const struct cordon_cgroup *cg);

/* Delegates the cgroup2 directory to uid/gid (chown of the directory and of
 * cgroup.procs, cgroup.threads, cgroup.subtree_control), so an unprivileged
 * worker (cordon-exec) can create job cgroups below it and move its children
 * there. First bounds the subtree (cgroup.max.depth 4,
 * cgroup.max.descendants 256; those files stay root's). Returns 0, -EBADF
 * without a cgroup2 directory, or -errno. */
int cordon_cgroup_delegate(const struct cordon_cgroup *cg, uid_t uid, gid_t gid);

/* ---- A launcher's group (one cgroup2 directory for all its instances) -- */

/* The eBPF egress policy can be attached once, to a directory above every
 * instance of one launcher, instead of to each instance: programs attached
 * to a cgroup2 directory run for every descendant, and the policy maps are
 * keyed by the caller's own cgroup id. That directory must hold only this
 * launcher's instances (another launcher's programs would deny them), so
 * it is the launcher's own: <base>/cordon/g-<pid>-<start time> in the
 * cgroup2 hierarchy (v1 directories keep their place). It lives as long as
 * the group object; cordon_cgroup_cleanup_stale() removes a dead
 * launcher's group with everything below it.
 *
 * Returns 0 and writes *ret, -EOPNOTSUPP without a cgroup2 hierarchy, or
 * -errno with the diag naming the directory. Controllers that could not be
 * enabled for the group's children are reported by each
 * cordon_cgroup_create() with that group, like without one. */
struct cordon_cgroup_group;

int cordon_cgroup_group_new(const struct cordon_caps *caps, struct cordon_cgroup_group **ret,
			    struct cordon_diag *reterr_diag);

/* O_DIRECTORY fd of the group's directory (owned by the group). */
int cordon_cgroup_group_fd(const struct cordon_cgroup_group *g);
const char *cordon_cgroup_group_path(const struct cordon_cgroup_group *g);

/* Closes the fd and removes the directory (and the shared "cordon" parent)
 * when empty. Free the group's instances first. NULL is a no-op. */
void cordon_cgroup_group_free(struct cordon_cgroup_group *g);

static inline void cordon_cgroup_group_freep(struct cordon_cgroup_group **g)
{
	cordon_cgroup_group_free(*g);
}

/* ---- Creation in two steps --------------------------------------------- */

/* With CORDON_CGROUP_DEFER_V1, create only makes the cgroup2 directory
 * (what clone3(CLONE_INTO_CGROUP) and the eBPF policy need) and leaves the
 * v1 hierarchies to cordon_cgroup_complete(), which a spawner calls after
 * the clone, while the child builds its sandbox and before the child runs
 * anything untrusted: on hybrid hosts the v1 directories and their limits
 * are then made in parallel with the child's namespace and mount work
 * instead of before it. *ret_missing of create covers cgroup2 only;
 * complete() reports the rest. cordon_cgroup_attach_pid() refuses
 * (-EBUSY) until complete() succeeded; destroy() works at any point. */
#define CORDON_CGROUP_DEFER_V1 0x1u

/* Makes the deferred v1 directories and writes their limits; a no-op when
 * nothing is pending. On failure (a required controller) the caller
 * destroys cg. */
int cordon_cgroup_complete(const struct cordon_caps *caps, struct cordon_cgroup *cg, unsigned *ret_missing,
			   struct cordon_diag *reterr_diag);
