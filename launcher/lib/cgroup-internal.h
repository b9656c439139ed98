/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Types and helpers shared by the cgroup-*.c files (see cgroup.c for the
 * split). Not part of libcordon's API. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"

#define CORDON_PARENT	"cordon"
#define CPU_PERIOD_USEC 100000ULL
/* The kernel refuses a CFS quota below 1 ms. */
#define CPU_QUOTA_MIN_USEC 1000ULL
#define NAME_MAX_LEN	   64
#define KILL_TIMEOUT_MSEC  5000
#define PROCS_MAX_BYTES	   (1024 * 1024)
#define TREE_MAX_DEPTH	   16
/* Limits on job cgroups a delegated worker may create below its instance. */
#define DELEGATE_MAX_DEPTH	 4
#define DELEGATE_MAX_DESCENDANTS 256

/* Controllers this module applies limits with. */
#define HANDLED_CTRLS CORDON_CTRLS_INSTANCE

/* One directory of the instance in one hierarchy. */
struct hdir {
	unsigned ctrls; /* 1 << CORDON_CTRL_* applied through this directory */
	char *mount;	/* mount point of the hierarchy */
	char *parent;	/* <base>/cordon */
	char *path;	/* <base>/cordon/<dirname> */
	int fd;		/* O_DIRECTORY of path */
	int procs_fd;	/* O_WRONLY cgroup.procs, for enter() in the child */
	bool created;	/* we made `path` (so we remove it) */
	bool cpuacct;	/* has cpuacct.usage (v1 CPU time) */
};

struct cordon_cgroup {
	struct hdir v2; /* v2.fd < 0 when there is no cgroup2 directory */
	struct hdir v1[_CORDON_CTRL_MAX];
	size_t n_v1;
	bool placed_by_clone; /* clone3(CLONE_INTO_CGROUP) put the child in v2 */
	bool use_kill;	      /* the v2 directory has cgroup.kill */
	char dirname[NAME_MAX_LEN + 64];
	/* CORDON_CGROUP_DEFER_V1: what cordon_cgroup_complete() needs. */
	struct proc_view *pending_pv; /* non-NULL while the v1 part is pending */
	struct cordon_cgroup_limits pending_lim;
	unsigned pending_required;
};

/* A launcher's own directory in the cgroup2 hierarchy,
 * <base>/cordon/g-<pid>-<start>, holding its instances' cgroup2 directories
 * (see cordon_cgroup_group_new()). */
struct cordon_cgroup_group {
	char *parent; /* <base>/cordon */
	char *path;   /* <base>/cordon/g-<pid>-<start> */
	char *mount;
	int fd;
	unsigned want;			   /* v2 controllers meant to reach the instances */
	int errs[_CORDON_CTRL_MAX];	   /* why one of them could not be enabled */
	char *err_where[_CORDON_CTRL_MAX]; /* ... in which directory's subtree_control */
};

/* /proc/self/cgroup and /proc/self/mountinfo, read once per create() or
 * cleanup_stale() rather than once per hierarchy. */
struct proc_view {
	char *cgroup;
	char *mountinfo;
};

/* cgroup-discover.c */
int cg_proc_starttime(pid_t pid, uint64_t *ret, bool *ret_dead);
void cg_proc_view_free(struct proc_view *pv);
void cg_proc_view_done(struct proc_view *pv);
int cg_proc_view_load(struct proc_view *pv);
int cg_hierarchy_base(const struct proc_view *pv, const char *mount, const char *ctrl, char **ret);
bool cg_path_is_strictly_below(const char *path, const char *top);
int cg_parent_path(const char *path, char **ret);
int cg_v2_enable_set(const char *dir, unsigned ctrls, int errs[static _CORDON_CTRL_MAX]);
int cg_find_v1_mount(const struct proc_view *pv, const char *ctrl, char **ret);
unsigned cg_v2_wanted(const struct cordon_caps *caps);
int cg_v2_find_base(const struct proc_view *pv, const struct cordon_caps *caps, unsigned want, char **ret,
		    int errs[static _CORDON_CTRL_MAX]);

/* cgroup.c */
void cg_hdir_init(struct hdir *h);
void cg_hdir_free(struct hdir *h);
struct cordon_cgroup *cg_new(void);
void cg_free(struct cordon_cgroup *cg);
bool cg_name_is_valid(const char *s);
int cg_read_keyed_u64(int dirfd, const char *file, const char *key, uint64_t *ret);
int cg_write_u64_at(int dirfd, const char *file, uint64_t v);
const char *cg_ctrl_name(unsigned c);

/* cgroup-kill.c: kills every process, removes every directory the instance
 * made and frees cg. Returns 0 or the first -errno. */
int cg_teardown(struct cordon_cgroup *cg);
