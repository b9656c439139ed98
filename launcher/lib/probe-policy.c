/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The control-verdict table: for each control a profile can require
 * (sandbox.require), its state on this kernel for this profile (available,
 * degraded, missing) and why. The one place that decides "missing and
 * required: refuse"; consumed by cordon_probe_check_profile() (the probe's
 * verdict for a profile) and by spawn_decide_plan() (spawn-report.c), which
 * refuses through cordon_control_refuse() before it plans anything. This is
 * the code behind the "when missing, cordon ..." column of
 * docs/kernel-matrix.md. */
#include <cap-ng.h>
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "diag.h"
#include "probe-util.h"
#include "probe.h"
#include "profile.h"

/* clang-format off */
static const struct {
	unsigned long flag;
	const char *name;
} ns_names[] = {
	{ CLONE_NEWNS, "mount" }, { CLONE_NEWPID, "pid" }, { CLONE_NEWIPC, "ipc" },
	{ CLONE_NEWUTS, "uts" }, { CLONE_NEWNET, "net" }, { CLONE_NEWUSER, "user" },
	{ CLONE_NEWCGROUP, "cgroup" },
};
/* clang-format on */

static enum cordon_probe_status landlock_verdict(const struct cordon_caps *c, char *why, size_t size)
{
	if (c->landlock_abi <= 0) {
		snprintf(why, size, "Landlock is unavailable (%s)",
			 c->landlock_errno == ENOSYS	   ? "not built into this kernel"
			 : c->landlock_errno == EOPNOTSUPP ? "disabled at boot"
							   : "not usable");
		return CORDON_PROBE_MISSING;
	}
	if (c->landlock_abi < 6) {
		snprintf(why, size, "Landlock ABI %d lacks rights or scopes of ABI 6", c->landlock_abi);
		return CORDON_PROBE_DEGRADED;
	}
	return CORDON_PROBE_AVAILABLE;
}

static enum cordon_probe_status seccomp_verdict(const struct cordon_caps *c, const struct cordon_profile *p, char *why,
						size_t size)
{
	if (!c->seccomp_filter) {
		snprintf(why, size, "seccomp filter mode is unavailable");
		return CORDON_PROBE_MISSING;
	}
	if (p->seccomp_action == CORDON_SECCOMP_KILL && !c->seccomp_kill_process) {
		snprintf(why, size, "no SECCOMP_RET_KILL_PROCESS: action kill ends only the offending thread");
		return CORDON_PROBE_DEGRADED;
	}
	if (p->seccomp_action == CORDON_SECCOMP_LOG && !c->seccomp_log) {
		snprintf(why, size, "no SECCOMP_RET_LOG: action log is enforced as errno");
		return CORDON_PROBE_DEGRADED;
	}
	return CORDON_PROBE_AVAILABLE;
}

static void ns_list(unsigned long bits, char *why, size_t size)
{
	size_t n = 0;

	why[0] = '\0';
	for (size_t i = 0; i < ELEMENTSOF(ns_names); i++)
		if (bits & ns_names[i].flag) {
			snprintf(why + strlen(why), size - strlen(why), "%s%s", n++ ? ", " : "the ", ns_names[i].name);
		}
	snprintf(why + strlen(why), size - strlen(why), " namespace%s cannot be created", n > 1 ? "s" : "");
}

/* Namespaces every sandbox is cloned into: mount, pid, ipc, uts and cgroup,
 * and net unless the profile allows egress (spawn.c's clone3 flags). The
 * user namespace is used when present (id-mapped read-write roots). */
static enum cordon_probe_status ns_verdict(const struct cordon_caps *c, const struct cordon_profile *p, char *why,
					   size_t size)
{
	unsigned long need = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
	unsigned long want = CLONE_NEWUSER;

	if (p->net_mode == CORDON_NET_NONE)
		need |= CLONE_NEWNET;
	if (need & ~c->namespaces) {
		ns_list(need & ~c->namespaces, why, size);
		return CORDON_PROBE_MISSING;
	}
	if (want & ~c->namespaces) {
		ns_list(want & ~c->namespaces, why, size);
		return CORDON_PROBE_DEGRADED;
	}
	return CORDON_PROBE_AVAILABLE;
}

static enum cordon_probe_status cgroup_verdict(const struct cordon_caps *c, const struct cordon_profile *p, char *why,
					       size_t size)
{
	/* A limit the profile chose needs its controller; a default limit
	 * (CORDON_LIMIT_DEFAULT_*) the profile did not choose is applied where
	 * its controller works and only degrades the verdict where not. */
	const struct {
		bool limited, defaulted;
		enum cordon_cgroup_ctrl ctrl;
	} limits[] = {
		{ p->mem_bytes > 0, p->limits_defaulted & CORDON_LIMIT_MEMORY, CORDON_CTRL_MEMORY },
		{ p->pids_max > 0, p->limits_defaulted & CORDON_LIMIT_PIDS, CORDON_CTRL_PIDS },
		{ p->cpu_micro > 0, p->limits_defaulted & CORDON_LIMIT_CPU, CORDON_CTRL_CPU },
	};
	enum cordon_probe_status verdict = CORDON_PROBE_AVAILABLE;

	if (c->cgroup_layout == CORDON_CGROUP_NONE) {
		snprintf(why, size, "no cgroup hierarchy is mounted");
		return CORDON_PROBE_MISSING;
	}
	for (size_t i = 0; i < ELEMENTSOF(limits); i++)
		if (limits[i].limited && !limits[i].defaulted && !c->ctrl[limits[i].ctrl].can_create) {
			snprintf(why, size, "the %s controller is %s", cordon_cgroup_ctrl_name(limits[i].ctrl),
				 c->ctrl[limits[i].ctrl].available ? "present but cordon cannot create a cgroup there"
								   : "not available");
			return CORDON_PROBE_MISSING;
		}
	for (size_t i = 0; i < ELEMENTSOF(limits); i++)
		if (limits[i].limited && limits[i].defaulted && !c->ctrl[limits[i].ctrl].can_create) {
			snprintf(why, size, "the default %s limit cannot be applied: the %s controller is %s",
				 cordon_cgroup_ctrl_name(limits[i].ctrl), cordon_cgroup_ctrl_name(limits[i].ctrl),
				 c->ctrl[limits[i].ctrl].available ? "not usable by cordon" : "not available");
			verdict = CORDON_PROBE_DEGRADED;
			break;
		}
	if (verdict == CORDON_PROBE_AVAILABLE && c->cgroup_layout == CORDON_CGROUP_V1) {
		snprintf(why, size, "no cgroup2 hierarchy (no cgroup.kill, no CLONE_INTO_CGROUP)");
		return CORDON_PROBE_DEGRADED;
	}
	return verdict;
}

static enum cordon_probe_status network_verdict(const struct cordon_caps *c, const struct cordon_profile *p, char *why,
						size_t size)
{
	if (p->net_mode == CORDON_NET_NONE) {
		/* The empty network namespace, or without it the eBPF deny-all
		 * on the instance's cgroup2 directory: the plan enforces mode
		 * none with either (Landlock TCP rules alone leave UDP open:
		 * missing, so a required network is refused). */
		bool ebpf = c->bpf_cgroup_sock_addr && c->cgroup2_mount[0] &&
			    (c->cgroup_layout == CORDON_CGROUP_V2 || c->cgroup_layout == CORDON_CGROUP_HYBRID);

		if (!(c->namespaces & CLONE_NEWNET) && !ebpf) {
			snprintf(why, size, "network mode none needs a network namespace, which cannot be created");
			return CORDON_PROBE_MISSING;
		}
		return CORDON_PROBE_AVAILABLE;
	}
	if (!c->cgroup2_mount[0] || !c->bpf_cgroup_sock_addr) {
		snprintf(why, size, "the allowlist needs cgroup sock_addr BPF programs on a cgroup2 hierarchy%s",
			 c->cgroup2_mount[0] ? "" : " (there is none)");
		return CORDON_PROBE_MISSING;
	}
	if (!c->landlock_net_handled) {
		snprintf(why, size, "no Landlock TCP rules as a second layer (needs ABI 4)");
		return CORDON_PROBE_DEGRADED;
	}
	return CORDON_PROBE_AVAILABLE;
}

/* Whether the profile has a read-write root (a delegated one is added at
 * spawn time and judged there the same way). */
static bool has_read_write_root(const struct cordon_profile *p)
{
	for (size_t i = 0; i < p->n_fs_roots; i++)
		if (p->fs_roots[i].access == CORDON_ACCESS_READ_WRITE)
			return true;
	return false;
}

/* The root guard (bpf/rootguard.bpf.c): without it the connector can
 * change the mode of its read-write root directory on the host. It
 * recognises a root as the root of a mount in the sandbox, so it needs the
 * mount namespace too. Without a read-write root there is nothing to
 * guard. */
static enum cordon_probe_status root_guard_verdict(const struct cordon_caps *c, const struct cordon_profile *p,
						   char *why, size_t size)
{
	if (!has_read_write_root(p))
		return CORDON_PROBE_AVAILABLE;
	if (!(c->namespaces & CLONE_NEWNS)) {
		snprintf(why, size, "without a mount namespace a read-write root is not a mount of its own");
		return CORDON_PROBE_MISSING;
	}
	if (!c->bpf_lsm_cgroup) {
		snprintf(why, size, "BPF LSM programs cannot be attached to a cgroup here (%s)",
			 cordon_probe_lsm_cgroup_reason(c));
		return CORDON_PROBE_MISSING;
	}
	return CORDON_PROBE_AVAILABLE;
}

typedef enum cordon_probe_status (*verdict_fn)(const struct cordon_caps *c, const struct cordon_profile *p, char *why,
					       size_t size);

static enum cordon_probe_status landlock_row(const struct cordon_caps *c, const struct cordon_profile *p, char *why,
					     size_t size)
{
	(void)p;
	return landlock_verdict(c, why, size);
}

/* clang-format off */
static const struct {
	enum cordon_control control;
	verdict_fn verdict;
} control_table[] = {
	{ CORDON_CONTROL_LANDLOCK,   landlock_row },
	{ CORDON_CONTROL_SECCOMP,    seccomp_verdict },
	{ CORDON_CONTROL_NAMESPACES, ns_verdict },
	{ CORDON_CONTROL_CGROUP,     cgroup_verdict },
	{ CORDON_CONTROL_NETWORK,    network_verdict },
	{ CORDON_CONTROL_ROOT_GUARD, root_guard_verdict },
};
/* clang-format on */

int cordon_control_verdict(const struct cordon_caps *c, const struct cordon_profile *p, enum cordon_control control,
			   enum cordon_probe_status *ret_status, char *why, size_t size)
{
	if (!c || !p || !ret_status || !why || size == 0)
		return -EINVAL;
	for (size_t i = 0; i < ELEMENTSOF(control_table); i++)
		if (control_table[i].control == control) {
			why[0] = '\0';
			*ret_status = control_table[i].verdict(c, p, why, size);
			return 0;
		}
	return -EINVAL;
}

int cordon_control_refuse(const struct cordon_caps *c, const struct cordon_profile *p, const char *step,
			  unsigned *ret_degraded, struct cordon_diag *reterr_diag)
{
	unsigned degraded = 0;

	if (!c || !p)
		return -EINVAL;
	for (size_t i = 0; i < ELEMENTSOF(control_table); i++) {
		enum cordon_control ctl = control_table[i].control;
		enum cordon_probe_status st;
		char why[160] = "";

		st = control_table[i].verdict(c, p, why, sizeof(why));
		if (st == CORDON_PROBE_MISSING && (p->require & ctl))
			return cordon_diag_set(reterr_diag, EOPNOTSUPP, step, "required control '%s' is missing: %s",
					       cordon_control_to_string(ctl), why);
		if (st != CORDON_PROBE_AVAILABLE)
			degraded |= ctl;
	}
	if (ret_degraded)
		*ret_degraded = degraded;
	return 0;
}

int cordon_probe_check_profile(const struct cordon_caps *c, const struct cordon_profile *p, unsigned *ret_degraded,
			       struct cordon_diag *reterr_diag)
{
	static const unsigned sandbox_caps[] = { CAP_SYS_ADMIN, CAP_SETUID, CAP_SETGID };

	if (!c || !p)
		return -EINVAL;

	/* Not profile choices: without these no sandbox is a sandbox. */
	if (!c->no_new_privs)
		return cordon_diag_set(reterr_diag, EOPNOTSUPP, "kernel",
				       "no_new_privs is not supported by this kernel; every launch is refused");
	for (size_t i = 0; i < ELEMENTSOF(sandbox_caps); i++)
		if (!(c->caller_caps_effective & (1ULL << sandbox_caps[i])))
			return cordon_diag_set(reterr_diag, EPERM, "kernel",
					       "cordon-launch lacks cap_%s (cap_sys_admin, cap_setuid and cap_setgid "
					       "build the sandbox)",
					       capng_capability_to_name(sandbox_caps[i]) ?: "unknown");

	return cordon_control_refuse(c, p, "kernel", ret_degraded, reterr_diag);
}
