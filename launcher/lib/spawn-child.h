/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared between spawn.c (the parent: plan, resources, clone3) and
 * spawn-child.c (the sandbox's init and the connector until execve: async-
 * signal-safe code only). Not a public API. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "cleanup.h"
#include "diag.h"
#include "landlock.h"
#include "profile.h"
#include "seccomp.h"

struct sock_fprog;

/* The new root is assembled on a tmpfs mounted here, in the child's own mount
 * namespace (the host's /tmp is untouched; host paths were cloned before). */
#define NEWROOT "/tmp"

enum {
	MSG_DIAG = 1,	  /* setup failed; diag says where */
	MSG_EXECED = 2,	  /* the connector's execve succeeded */
	MSG_EXIT = 3,	  /* the connector ended; status is its wait status */
	MSG_GO = 4,	  /* parent -> init: everything outside is in place, start the connector */
	MSG_LISTENER = 5, /* init -> parent: the root guard's seccomp listener, by SCM_RIGHTS */
};

/* Child phases timed for the report's spawn_usec.child (CLOCK_MONOTONIC µs,
 * taken with the vDSO: async-signal-safe, no syscall). */
enum {
	CT_START,    /* init entered child_main */
	CT_NET,	     /* network namespace, lo up, hostname */
	CT_MOUNTS,   /* filesystem view, pivot_root */
	CT_HYGIENE,  /* close_range, rlimits, setsid */
	CT_PRIVS,    /* bounding set, securebits, uid/gid, capabilities, no_new_privs */
	CT_LANDLOCK, /* rules for the child's mounts, restrict_self */
	CT_GO,	     /* MSG_GO received */
	CT_SECCOMP,  /* connector: filter loaded */
	CT_VERIFY,   /* connector: read back, about to execve */
	CT_EXECED,   /* init: the connector has exec'd */
	_CT_MAX,
};

struct sync_msg {
	uint32_t kind;
	int32_t status;
	struct cordon_diag diag;
	uint64_t t[_CT_MAX]; /* MSG_EXECED: child phase timestamps */
};

struct mount_item {
	char *at;   /* path inside the sandbox */
	char *host; /* host path (report only) */
	enum cordon_fs_access access;
	int path_fd;   /* O_PATH fd of the host path (Landlock rule); -EBADF for symlinks */
	int tree_fd;   /* detached clone to move into place; -EBADF for symlinks */
	char *symlink; /* create a symlink at `at` with this target instead */
	bool is_dir;
	bool idmapped;
	uid_t owner_uid;
	gid_t owner_gid;
};

struct child_args {
	int sync_fd;
	int stdio[3];
	int ruleset_fd;
	struct cordon_landlock_masks ll_handled;
	bool landlock;
	const struct cordon_seccomp_program *seccomp;
	bool seccomp_in_init;			/* init loads it before starting the connector, which inherits it */
	const struct sock_fprog *notify_filter; /* the root guard's notification filter, or NULL */
	const struct cordon_cgroup *cg;
	struct mount_item *mounts;
	size_t n_mounts;
	bool cg_enter; /* the child joins (verifies) its cgroup itself */
	bool fs_view;
	int mntns_fd; /* the base mount namespace to copy (see mntns_base_make), or -1: clone3 copied the host's */
	bool net_ns;
	int netns_fd; /* a fresh, never used network namespace to enter, or -1: unshare one */
	bool uts_ns;
	char tmp_opts[64];
	char shm_opts[64];
	const char *workdir;
	char *const *argv;
	char *const *envp;
	uid_t uid;
	gid_t gid;
	uint64_t nofile;
	uint64_t nproc; /* RLIMIT_NPROC, 0 = leave */
	int cap_last;
	const int *keep_fds;
	size_t n_keep_fds;
};

/* CLOCK_MONOTONIC in µs (vDSO: async-signal-safe, no syscall). */
uint64_t spawn_mono_usec(void);

/* Bounded copy that always terminates dst (async-signal-safe). */
void spawn_strcpy(char *dst, size_t size, const char *src);

/* mkdir -p; returns 0 or -errno (async-signal-safe). */
int spawn_mkdir_p(const char *path, mode_t mode);

/* The sandbox's init: steps a.–l. of spawn.c's header comment. Never
 * returns: it execs the connector or reports a diag and _exit(127)s. */
_noreturn_ void spawn_child_main(const struct child_args *a);

/* Namespace pins (spawn.c's ns_pin): the helper cloned into the new
 * namespace runs setup (may be NULL), says 1 on pipe_w and pauses until it
 * is killed; it dies with `parent`. */
struct spawn_pin_args {
	int (*setup)(void);
	int pipe_w;
	pid_t parent;
};

int spawn_pin_helper(void *arg);

/* Setups for spawn_pin_args: lo up in a new network namespace; the base
 * mount namespace (an empty read-only tmpfs as root). 0 or -EIO. */
int spawn_pin_setup_netns(void);
int spawn_pin_setup_mntns(void);
