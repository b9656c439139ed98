/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A capability struct for a kernel that offers every control (Landlock ABI
 * 7, seccomp with every action, all namespaces, every cgroup controller,
 * cgroup BPF, BPF LSM per cgroup), as the unit tests of the control verdicts start from before
 * taking one control away. hybrid: v1 controllers under /sys/fs/cgroup/x and
 * cgroup2 at /sys/fs/cgroup/unified; otherwise pure v2 at /sys/fs/cgroup. */

#include <sched.h>
#include <stdbool.h>
#include <string.h>

#include "probe-util.h"
#include "probe.h"

static inline void caps_test_full(struct cordon_caps *c, bool hybrid)
{
	memset(c, 0, sizeof(*c));
	c->landlock_abi = 7;
	c->landlock_fs_handled = cordon_landlock_fs_rights_for_abi(7);
	c->landlock_net_handled = cordon_landlock_net_rights_for_abi(7);
	c->landlock_scoped = cordon_landlock_scopes_for_abi(7);
	c->landlock_log_flags = true;
	c->seccomp_filter = c->seccomp_kill_process = c->seccomp_log = true;
	c->seccomp_user_notif = c->seccomp_tsync = true;
	c->namespaces = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
			CLONE_NEWCGROUP | CLONE_NEWTIME;
	c->cgroup_layout = hybrid ? CORDON_CGROUP_HYBRID : CORDON_CGROUP_V2;
	strcpy(c->cgroup2_mount, hybrid ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup");
	for (int i = 0; i < _CORDON_CTRL_MAX; i++) {
		c->ctrl[i].available = c->ctrl[i].can_create = true;
		c->ctrl[i].v2 = !hybrid;
		strcpy(c->ctrl[i].path, hybrid ? "/sys/fs/cgroup/x" : "/sys/fs/cgroup");
	}
	c->cgroup_kill = c->clone_into_cgroup = true;
	c->bpf_syscall = c->bpf_cgroup_sock_addr = c->btf_vmlinux = true;
	c->bpf_lsm = c->bpf_lsm_cgroup = true;
	strcpy(c->lsm, "lockdown,capability,landlock,bpf");
	c->no_new_privs = c->pidfd_open = c->pidfd_getfd = c->close_range = true;
	c->caller_caps_effective = c->caller_caps_bounding = 0x000001fffeffffffULL;
}
