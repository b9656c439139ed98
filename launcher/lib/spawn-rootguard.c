/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The root guard's part of cordon_spawn() (spawn.c, steps 1 and 8): the
 * process-wide BPF object (rootguard.h), loaded at the first spawn with a
 * read-write root, the plan's decision, and the attachment before MSG_GO. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "probe-util.h"
#include "rootguard-notify.h"
#include "rootguard.h"
#include "spawn-internal.h"

/* Loaded once per process like the egress policy (spawn.c), and released
 * the same way: at exit, when no instance still depends on it, and only by
 * the process that loaded it (a forked child's exit must not detach its
 * parent's programs). */
static struct cordon_rootguard_state *process_rootguard;
static bool process_rootguard_failed;
static pid_t process_rootguard_pid;
static char process_rootguard_reason[160];

void spawn_rootguard_release(void)
{
	if (process_rootguard && process_rootguard_pid == getpid() && cordon_rootguard_is_idle(process_rootguard)) {
		cordon_rootguard_close(process_rootguard);
		process_rootguard = NULL;
	}
}

/* A read-write root, the profile's own or a delegated one. */
static bool has_read_write_root(const struct cordon_launch_policy *pol)
{
	const struct cordon_profile *p = pol->profile;

	for (size_t i = 0; i < p->n_fs_roots; i++)
		if (p->fs_roots[i].access == CORDON_ACCESS_READ_WRITE)
			return true;
	for (size_t i = 0; i < pol->n_extra_roots; i++)
		if (pol->extra_roots[i].access == CORDON_ACCESS_READ_WRITE)
			return true;
	return false;
}

/* Step 1, last: the root guard (issue 11, finding 1). A read-write root
 * is id-mapped, so the connector owns it inside the sandbox and could
 * chmod the host directory; the guard refuses chmod and chown of every
 * mount root of the sandbox. Wanted whenever there is a read-write root
 * (delegated roots included, which the verdict table cannot see); loaded
 * here, once per process, so that a required guard that cannot load
 * refuses before anything exists. The reasons are worded as the
 * control-verdict table's root_guard row (probe-policy.c), which has
 * already refused a required guard the kernel cannot run for the
 * profile's own roots; this refuses again only for runtime facts (a
 * delegated read-write root, a load that fails). Missing and not required: the report
 * names the consequence. */
int spawn_plan_root_guard(const struct cordon_launch_policy *pol, const struct cordon_caps *caps, struct spawn_ctx *c,
			  struct cordon_diag *d)
{
	struct spawn_plan *pl = &c->plan;

	if (!has_read_write_root(pol)) {
		pl->root_guard = CORDON_STATE_DISABLED_BY_POLICY;
		snprintf(pl->root_guard_reason, sizeof(pl->root_guard_reason), "no read-write root");
		return 0;
	}
	if (!(pl->ns_effective & CLONE_NEWNS))
		snprintf(pl->root_guard_reason, sizeof(pl->root_guard_reason),
			 "without a mount namespace a read-write root is not a mount of its own");
	else if (!caps->bpf_lsm_cgroup)
		snprintf(pl->root_guard_reason, sizeof(pl->root_guard_reason),
			 "BPF LSM programs cannot be attached to a cgroup here (%s)",
			 cordon_probe_lsm_cgroup_reason(caps));
	else if (caps->cgroup_layout == CORDON_CGROUP_NONE || caps->cgroup_layout == CORDON_CGROUP_V1)
		snprintf(pl->root_guard_reason, sizeof(pl->root_guard_reason),
			 "no cgroup2 hierarchy to attach the guard to");
	else {
		struct cordon_diag nd = { 0 };

		if (!process_rootguard && !process_rootguard_failed) {
			process_rootguard_pid = getpid();
			if (cordon_rootguard_open(&process_rootguard, &nd) < 0) {
				process_rootguard_failed = true;
				snprintf(process_rootguard_reason, sizeof(process_rootguard_reason),
					 "the root guard could not be loaded: %.100s", nd.message);
			}
		}
		c->rg = process_rootguard;
		if (!c->rg)
			snprintf(pl->root_guard_reason, sizeof(pl->root_guard_reason), "%s", process_rootguard_reason);
	}
	if (c->rg) {
		pl->root_guard = CORDON_STATE_ENFORCED;
		snprintf(pl->root_guard_reason, sizeof(pl->root_guard_reason),
			 "BPF LSM refuses chmod and chown of every mount root");
		return 0;
	}
	/* No BPF guard: the seccomp supervisor (rootguard-notify.h), where
	 * the kernel has user notification and pidfd_getfd, the sandbox has
	 * its own mount and pid namespaces (the supervisor resolves paths in
	 * the sandbox's root and its /proc) and a seccomp filter is loaded at
	 * all. Only for these instances: it costs a process per instance and
	 * a round trip per chmod/chown. */
	if (cordon_probe_root_guard_notify(caps) && (pl->ns_effective & CLONE_NEWNS) &&
	    (pl->ns_effective & CLONE_NEWPID) && pl->seccomp != CORDON_STATE_UNAVAILABLE) {
		c->rg_notify = true;
		pl->root_guard = CORDON_STATE_ENFORCED;
		snprintf(pl->root_guard_reason, sizeof(pl->root_guard_reason),
			 "a seccomp supervisor refuses chmod and chown of every mount root");
		return 0;
	}
	pl->root_guard = CORDON_STATE_UNAVAILABLE;
	if (pol->profile->require & CORDON_CONTROL_ROOT_GUARD)
		return cordon_diag_set(d, EOPNOTSUPP, "require", "required control 'root_guard' is missing: %s",
				       pl->root_guard_reason);
	return spawn_plan_add_missing(pl, "root_guard", "BPF LSM root guard",
				      "the connector can change the permission bits of its read-write root directory");
}

/* Step 8: the root guard, before MSG_GO. Attached once to the group
 * directory when the instance lives in one (later instances find it
 * there), else to the instance's own cgroup2 directory. */
int spawn_attach_root_guard(struct spawn_ctx *c, int cgfd, struct cordon_diag *d)
{
	if (!c->rg)
		return 0;
	if (c->group)
		return cordon_rootguard_attach_group(c->rg, cordon_cgroup_group_fd(c->group), d);
	if (cgfd < 0)
		return cordon_diag_set(d, ENOENT, "rootguard", "the instance has no cgroup2 directory to attach to");
	return cordon_rootguard_attach(c->rg, cgfd, &c->rg_att, d);
}

/* Step 8, while waiting for the execve: the supervisor for the listener
 * and root init sent. Started once per instance; the parent's copies of
 * the listener and the root are the caller's to close. */
int spawn_start_root_guard_supervisor(struct spawn_ctx *c, int listener, int root, struct cordon_diag *d)
{
	int r;

	if (!c->rg_notify || c->guard_pidfd >= 0)
		return cordon_diag_set(d, EPROTO, "rootguard", "unexpected seccomp listener from the sandbox");
	r = cordon_rootguard_notify_start(listener, root, c->uid, c->gid, &c->guard_pidfd, &c->guard_pid);
	if (r < 0)
		return cordon_diag_set(d, -r, "rootguard", "starting the root guard's supervisor: %s", strerror(-r));
	return 0;
}
