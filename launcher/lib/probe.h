/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the running kernel offers to cordon. cordon_probe() fills the struct
 * and leaves nothing behind (temporary directories, cgroups and BPF programs
 * it creates are removed before it returns). The struct is plain data with no
 * pointers: the launcher hands it to cordon_spawn(), and tests pass a
 * modified copy to simulate a kernel without a feature. */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum cordon_cgroup_layout {
	CORDON_CGROUP_NONE,
	CORDON_CGROUP_V1,
	CORDON_CGROUP_HYBRID, /* v1 controllers + a cgroup2 hierarchy */
	CORDON_CGROUP_V2,
};

enum cordon_cgroup_ctrl {
	CORDON_CTRL_MEMORY,
	CORDON_CTRL_PIDS,
	CORDON_CTRL_CPU,
	CORDON_CTRL_CPUSET,
	CORDON_CTRL_IO,
	_CORDON_CTRL_MAX,
};

struct cordon_cgroup_ctrl_info {
	bool available;	     /* the kernel has the controller and it is mounted */
	bool v2;	     /* lives in the cgroup2 hierarchy (else its v1 hierarchy) */
	bool can_create;     /* cordon created and removed a child there */
	char path[PATH_MAX]; /* mount point of its hierarchy */
};

/* Namespace bits (CLONE_NEW* values) in cordon_caps.namespaces. */

struct cordon_caps {
	char kernel_release[65];

	/* Landlock: abi 0 = absent or disabled; landlock_errno says which
	 * (ENOSYS: not built, EOPNOTSUPP: disabled at boot). */
	int landlock_abi;
	int landlock_errno;
	uint64_t landlock_fs_handled;  /* access rights this ABI handles */
	uint64_t landlock_net_handled; /* ABI >= 4 */
	uint64_t landlock_scoped;      /* ABI >= 6 */
	bool landlock_log_flags;       /* ABI >= 7 */

	bool seccomp_filter;
	bool seccomp_user_notif;
	bool seccomp_kill_process;
	bool seccomp_log;
	bool seccomp_tsync;
	uint32_t seccomp_native_arch; /* AUDIT_ARCH_* */

	bool openat2;	      /* the syscall exists */
	bool openat2_beneath; /* it refused a real escape with the full flag set */

	unsigned long namespaces; /* CLONE_NEW* bits that can be created */
	bool userns_unprivileged; /* an unprivileged user may create a user ns */

	enum cordon_cgroup_layout cgroup_layout;
	char cgroup2_mount[PATH_MAX]; /* "" when there is none */
	struct cordon_cgroup_ctrl_info ctrl[_CORDON_CTRL_MAX];
	bool cgroup_kill;
	bool clone_into_cgroup;

	bool bpf_syscall;
	bool btf_vmlinux;
	bool bpf_cgroup_sock_addr;
	bool bpf_lsm;

	bool pidfd_open;
	bool pidfd_getfd; /* Linux 5.6: the root guard's supervisor fetches a connector's fds */
	bool close_range;
	bool no_new_privs;
	uint64_t caller_caps_effective; /* bit n = capability n */
	uint64_t caller_caps_bounding;

	/* Appended by the probe module; see docs/kernel-matrix.md. */
	bool no_new_privs_set; /* the caller itself already runs with no_new_privs */
	char lsm[256];	       /* active LSMs, /sys/kernel/security/lsm; "" when unreadable */
	uint64_t probe_usec;   /* how long cordon_probe() took */

	/* BPF LSM programs per cgroup (BPF_LSM_CGROUP, Linux 6.0), what the
	 * root guard needs: a path_chmod program was loaded and attached to a
	 * cgroup2 directory, and "bpf" is an active LSM (otherwise the hooks
	 * never run). bpf_lsm_cgroup_errno says why not: EOPNOTSUPP "bpf" is
	 * not in the LSM list, ENOENT no kernel BTF or no such hook, ENODEV no
	 * cgroup2 directory to attach to, else the kernel's answer to the load
	 * or the attach (EPERM: the kernel refuses BPF LSM programs). */
	bool bpf_lsm_cgroup;
	int bpf_lsm_cgroup_errno;

	/* CORDON_PROBE_FOR_SPAWN: controllers (1 << CORDON_CTRL_*) whose
	 * can_create was not tried (left false); 0 after a full probe. */
	unsigned ctrl_untested;
	/* CORDON_PROBE_FOR_SPAWN: userns_unprivileged was not tried (false). */
	bool userns_untested;
};

/* Controllers an instance gets a cgroup directory with limits in (the
 * others are reported by the probe only). */
#define CORDON_CTRLS_INSTANCE ((1u << CORDON_CTRL_MEMORY) | (1u << CORDON_CTRL_PIDS) | (1u << CORDON_CTRL_CPU))

/* cordon_probe_opts() flags.
 *  - FOR_SPAWN: the caps are for launching, not for a report: skip what no
 *    launch decision reads, i.e. the mkdir/rmdir test of v1 hierarchies
 *    that never hold an instance (cpuset, io; recorded in ctrl_untested)
 *    and the unprivileged user namespace child (userns_untested; cordon
 *    launches as root). A cpuset mkdir is not free: the first cpuset below
 *    the root flips kernel static keys, patching kernel text on every CPU;
 *    the child is one more fork of the launcher. */
enum {
	CORDON_PROBE_FOR_SPAWN = 1u << 0,
};

/* Probes the kernel and fills *ret. Never fails for a missing feature (that
 * is recorded in the struct); returns -errno only when probing itself cannot
 * proceed (out of memory). */
int cordon_probe(struct cordon_caps *ret);

/* The same with flags (CORDON_PROBE_*; unknown bits are -EINVAL). */
int cordon_probe_opts(struct cordon_caps *ret, unsigned flags);

/* Writes the report as JSON (keys documented in docs/kernel-matrix.md).
 * Returns 0 or -errno. */
int cordon_probe_write_json(const struct cordon_caps *c, FILE *out);

/* Returns a malloc'd JSON string of the report, or NULL on ENOMEM. */
char *cordon_probe_to_json(const struct cordon_caps *c);

/* Writes the aligned human table. */
int cordon_probe_write_human(const struct cordon_caps *c, FILE *out);

const char *cordon_cgroup_ctrl_name(enum cordon_cgroup_ctrl c);
