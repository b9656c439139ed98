/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared between spawn.c (building and running the sandbox) and
 * spawn-report.c (the plan and the enforcement report). Not a public API. */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "landlock.h"
#include "probe.h"
#include "profile.h"
#include "rootguard.h"
#include "spawn-child.h"
#include "spawn.h"
#include "strv.h"

enum cordon_control_state {
	CORDON_STATE_ENFORCED,
	CORDON_STATE_DEGRADED,
	CORDON_STATE_UNAVAILABLE,
	CORDON_STATE_DISABLED_BY_POLICY,
};

const char *cordon_control_state_to_string(enum cordon_control_state s);

/* The plan: which controls are applied and how, decided in the parent from
 * the profile and the capability struct before anything is created. */
struct spawn_plan {
	enum cordon_control_state landlock, seccomp, cgroup, namespaces, network, capabilities, no_new_privs;
	char landlock_reason[128], seccomp_reason[128], cgroup_reason[128], namespaces_reason[128], network_reason[200];
	struct cordon_landlock_masks ll_requested, ll_effective;
	int landlock_abi;
	unsigned long ns_requested, ns_effective; /* CLONE_NEW* */
	bool landlock_tcp;			  /* Landlock TCP rules are part of the network control */
	bool ebpf;				  /* the eBPF egress policy will be attached */
	char ebpf_reason[160];			  /* why not, when it is not */
	unsigned cgroup_missing;		  /* CORDON_CTRL_* bits the cgroup module could not apply */
	enum cordon_control_state root_guard;	  /* the root guard (rootguard.h, rootguard-notify.h) */
	char root_guard_reason[200];
	json_t *missing; /* array of {control, what, impact} */
};

/* Appends one entry to plan->missing. Returns 0 or -ENOMEM. */
int spawn_plan_add_missing(struct spawn_plan *plan, const char *control, const char *what, const char *impact);

/* Hex SHA-256 (65 bytes with NUL) of buf. */
void cordon_sha256_hex(const void *buf, size_t len, char out[65]);

/* The parent's state for one cordon_spawn() call. */
struct spawn_ctx {
	struct spawn_plan plan;
	struct mount_item *mounts;
	size_t n_mounts;
	char **envp;
	size_t n_env;
	int ruleset_fd;
	const struct cordon_seccomp_program *seccomp;
	unsigned seccomp_opts; /* CORDON_SECCOMP_OPENAT2_ENOSYS | CORDON_SECCOMP_NO_FASTOPEN */
	struct cordon_cgroup *cg;
	int uid_lock_fd;
	uid_t uid;
	gid_t gid;
	int pipes[3][2];
	int sync[2];
	int pidfd;
	pid_t pid;
	char policy_hash[65];
	char instance_name[64];
	struct cordon_netpolicy_state *np;
	struct cordon_netpolicy_attachment *np_att;
	uint64_t t[6];				    /* phase timestamps (µs) for the report */
	uint64_t v1_usec;			    /* place_in_cgroups(): v1 directories, limits, moves */
	uint64_t ct[_CT_MAX];			    /* the child's, from MSG_EXECED */
	int netns_fd;				    /* the spare network namespace handed to this child */
	const struct cordon_cgroup_group *group;    /* the policed group the instance lives in, or NULL */
	struct cordon_rootguard_state *rg;	    /* the root guard, when the plan applies it */
	struct cordon_rootguard_attachment *rg_att; /* its attachment to the instance (no group) */
	bool placed_by_clone;
	bool rg_notify;	 /* the root guard runs as a seccomp supervisor (rootguard-notify.h) */
	int guard_pidfd; /* that supervisor, once started (step 8) */
	pid_t guard_pid;
	bool one_shot; /* cordon_launch_policy.one_shot */
};

/* Step 1 of cordon_spawn(): which controls are applied and how, from the
 * profile and the capability struct. Fills *plan; returns 0, -ENOMEM, or
 * -EOPNOTSUPP with *d set when a control the profile requires is missing. */
int spawn_decide_plan(const struct cordon_profile *p, const struct cordon_caps *caps, struct spawn_plan *plan,
		      struct cordon_diag *d);

/* The enforcement report of a started instance (docs/launcher.md); also
 * writes c->policy_hash. Returns a new reference, or NULL on -ENOMEM. */
json_t *spawn_build_report(const struct cordon_launch_policy *pol, const struct cordon_caps *caps, struct spawn_ctx *c,
			   char *const *argv);

/* spawn-rootguard.c: the root guard. spawn_plan_root_guard() (end of step
 * 1) decides controls.root_guard and, when the sandbox has a read-write
 * root, loads the programs once per process and sets c->rg; returns 0,
 * -EOPNOTSUPP with *d set when root_guard is required and cannot run, or
 * -ENOMEM. spawn_attach_root_guard() (step 8, before MSG_GO) attaches them
 * to c->group, or to the instance's cgroup2 directory cgfd (c->rg_att);
 * 0 or -errno with *d set. spawn_rootguard_release() closes the process's
 * object at exit when nothing depends on it. */
int spawn_plan_root_guard(const struct cordon_launch_policy *pol, const struct cordon_caps *caps, struct spawn_ctx *c,
			  struct cordon_diag *d);
int spawn_attach_root_guard(struct spawn_ctx *c, int cgfd, struct cordon_diag *d);
/* The supervisor variant (c->rg_notify): starts the supervisor for the
 * listener init sent (step 8, while waiting for the execve); 0 or -errno
 * with *d set. The caller closes listener. */
int spawn_start_root_guard_supervisor(struct spawn_ctx *c, int listener, int root, struct cordon_diag *d);
void spawn_rootguard_release(void);

/* spawn-prepare.c: steps 2 and 3 and the pinned namespaces. Each returns 0
 * or -errno with *d set, unless it says otherwise. */
int spawn_resolve_user(const struct cordon_profile *p, struct spawn_ctx *c, struct cordon_diag *d);
int spawn_build_env(const struct cordon_launch_policy *pol, struct spawn_ctx *c, struct cordon_diag *d);
/* Makes the next spawn's network namespace, best effort (see spawn-prepare.c). */
void spawn_spare_netns_make(void);
/* The base mount namespace (borrowed fd), or -EBADF: copy the host's. */
int spawn_mntns_base_get(void);
/* Takes the spare network namespace (the caller closes it), or -EBADF. */
int spawn_spare_netns_take(void);
/* Whether v (n entries) holds s. */
int spawn_add_mount(struct spawn_ctx *c, const struct cordon_fs_entry *e, bool is_root, bool extra,
		    const struct cordon_profile *p, bool fs_view, struct cordon_diag *d);
/* qsort order of struct mount_item: parents before what is mounted on them. */
int spawn_cmp_mount(const void *a, const void *b);
