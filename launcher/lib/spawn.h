/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* cordon_spawn(): run one connector instance in its sandbox.
 *
 * The caller (cordon-launch, later the --serve helper for cordond) compiles a
 * launch policy: the profile, extra roots (delegations or --root, already
 * checked beneath the profile's ceiling by cordon_spawn_resolve_root()), an
 * optional argv override and the environment env.pass copies from. The
 * capability struct comes from cordon_probe(); it is a parameter so tests
 * can present a kernel without a feature. Nothing else can switch a control
 * off. See docs/launcher.md for phases, report schema and exit codes. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "../basic/diag.h"
#include "probe.h"
#include "netpolicy.h"
#include "profile.h"

/* Dynamic users: uid = gid = CORDON_DYNAMIC_UID_BASE + n, n < CORDON_DYNAMIC_UID_COUNT.
 * 0x70000000: far above distribution (< 65536) and systemd-nspawn
 * (524288..1879048191) ranges, below 2^31 so it survives signed-int APIs. A
 * number n is held by an OFD write lock on byte n of CORDON_DYNAMIC_UID_LOCK
 * for the life of the instance (released when the instance is freed or the
 * launcher dies), so concurrent launchers never share one, and nothing
 * accumulates on disk. */
#define CORDON_DYNAMIC_UID_BASE	 1879048192u
#define CORDON_DYNAMIC_UID_COUNT 65536u
/* The launcher's own run directory (root's, 0700): never cordond's runtime
 * directory /run/cordon, which cordond hands to its user. */
#define CORDON_LAUNCH_RUN_DIR	     "/run/cordon-launch"
#define CORDON_DYNAMIC_UID_LOCK_NAME "dynamic-uids.lock"
#define CORDON_DYNAMIC_UID_LOCK	     CORDON_LAUNCH_RUN_DIR "/" CORDON_DYNAMIC_UID_LOCK_NAME

enum cordon_stdio_mode {
	CORDON_STDIO_INHERIT, /* the connector gets the caller's fds 0, 1, 2 */
	CORDON_STDIO_PIPES,   /* cordon_spawn() creates pipes; the parent ends are in the instance */
	CORDON_STDIO_FDS,     /* the connector gets stdio_fds[0..2] */
};

struct cordon_launch_policy {
	const struct cordon_profile *profile;
	const struct cordon_fs_entry *extra_roots; /* beneath the ceiling (checked by the caller) */
	size_t n_extra_roots;
	char *const *argv;	   /* NULL: the profile's command; argv[0] absolute */
	char *const *env_source;   /* where env.pass reads from (e.g. environ); NULL: nothing */
	const char *instance_name; /* cgroup name, [a-z0-9-]; NULL: "<id>-<pid>-<n>" */
	enum cordon_stdio_mode stdio;
	int stdio_fds[3];
	const int *keep_fds; /* further fds the connector keeps (same numbers) */
	size_t n_keep_fds;
	/* The loaded eBPF egress policy (cordon_netpolicy_open(), once per
	 * process; the caller polls its events). NULL: cordon_spawn() opens a
	 * process-wide one itself when the kernel has cgroup socket hooks. */
	struct cordon_netpolicy_state *netpolicy;
	/* The caller launches this one sandbox and exits (cordon-launch
	 * --profile): nothing is prepared for a next spawn (no spare network
	 * namespace, whose creation and teardown would only compete with this
	 * sandbox's own work). Changes no control. */
	bool one_shot;
};

struct cordon_instance;

/* Builds the sandbox and starts the connector. Returns 0 and writes *ret once
 * the connector has exec'd (everything verified), or -errno with a diag whose
 * step names the phase that failed (a required control the kernel lacks is
 * step "require" and names the control). Nothing is left behind on failure. */
int cordon_spawn(const struct cordon_launch_policy *pol, const struct cordon_caps *caps, struct cordon_instance **ret,
		 struct cordon_diag *reterr_diag);

/* pidfd and host pid of the sandbox's init (pid 1 inside; it forwards
 * SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 to the connector and
 * exits when the connector does). */
int cordon_instance_pidfd(const struct cordon_instance *inst);
pid_t cordon_instance_pid(const struct cordon_instance *inst);

/* With CORDON_STDIO_PIPES: the parent's end for the connector's fd i (0: write
 * to its stdin; 1, 2: read its output), handed over to the caller; -EBADF
 * otherwise or when already taken. */
int cordon_instance_take_stdio(struct cordon_instance *inst, int i);

/* Uid/gid the connector runs as. */
uid_t cordon_instance_uid(const struct cordon_instance *inst);
gid_t cordon_instance_gid(const struct cordon_instance *inst);

/* Sends sig to the init, which forwards it. Returns 0 or -errno. */
int cordon_instance_signal(struct cordon_instance *inst, int sig);

/* Waits for the instance to end (blocking), collects cgroup statistics into
 * the report, and writes the connector's wait status (as waitpid() encodes
 * it) to *ret_status. Returns 0 or -errno. Calling it again returns the same
 * status. */
int cordon_instance_wait(struct cordon_instance *inst, int *ret_status);

/* The enforcement report (docs/launcher.md). Borrowed; valid until free. */
const json_t *cordon_instance_report(const struct cordon_instance *inst);

/* The id of the instance's cgroup2 directory (what eBPF denial events carry
 * as cgroup_id), or 0 when it has none. */
uint64_t cordon_instance_cgroup_id(const struct cordon_instance *inst);

/* The pid of the root guard's seccomp supervisor (rootguard-notify.h), a
 * child of the caller, or 0 when the instance has none. It exits once the
 * instance is reaped (cordon_instance_wait, cordon_instance_free reap it). */
pid_t cordon_instance_guard_pid(const struct cordon_instance *inst);

/* The process-wide egress policy cordon_spawn() opened when the caller gave
 * none (NULL if none was needed or it could not be loaded): its events fd is
 * for the caller's poll loop. */
struct cordon_netpolicy_state *cordon_spawn_netpolicy(void);

/* Kills whatever still runs, removes the cgroup, detaches the egress policy,
 * releases the uid, frees. */
void cordon_instance_free(struct cordon_instance *inst);

static inline void cordon_instance_freep(struct cordon_instance **p)
{
	if (*p)
		cordon_instance_free(*p);
}

/* Shell-style exit code for a wait status: the exit status, or 128+signal. */
int cordon_exit_code(int wait_status);

/* Resolves a requested root `host` against the profile's ceiling: opens every
 * ceiling directory and `host` and accepts `host` only when walking up from
 * it (by dev/ino, never by string) reaches a ceiling directory. Returns 0 or
 * -EPERM (not beneath any ceiling) / -errno, with a diag. */
int cordon_spawn_check_beneath_ceiling(const struct cordon_profile *p, const char *host,
				       struct cordon_diag *reterr_diag);

/* Opens (creating it and CORDON_LAUNCH_RUN_DIR when missing) the dynamic-uid
 * lock, a new open file description each call. Refuses (-EPERM) a directory
 * that is not root's or that group or others may write, and a lock that is
 * not root's regular file. A long-running launcher calls it at start so the
 * directory exists before anyone else can make it. */
int cordon_dynamic_uid_lock_open(int *ret_fd, struct cordon_diag *reterr_diag);

/* Releases the kernel objects cordon_spawn() keeps between spawns to save
 * time: the spare network namespace, the base mount namespace and the cached
 * id-mapping user namespaces (at most a handful of fds). The next spawn recreates what it
 * needs. For long-running launchers that go idle, and for tests that count
 * their fds. */
void cordon_spawn_drop_caches(void);
