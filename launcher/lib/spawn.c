/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cordon_spawn(): one connector instance in its sandbox.
 *
 * PARENT (the launcher, privileged, may allocate and log nothing):
 *  1. [validate_policy, plan_controls; spawn_decide_plan in spawn-report.c,
 *     spawn_plan_root_guard in spawn-rootguard.c] Validate the policy and
 *     decide the plan against the capability struct (loading the BPF
 *     programs it needs, once per process). A control in `require` that the
 *     kernel lacks refuses here, before anything exists. The root guard is
 *     the BPF LSM programs where they load, else the seccomp supervisor
 *     (rootguard-notify.h: steps k. and 8 below).
 *  2. [prepare_user_env] Allocate the sandbox uid (a locked number in a documented range) and
 *     build the environment (env.pass, env.set, credentials read here: the
 *     child never opens a credential file).
 *  3. [prepare_filesystem] Open every host path and clone it as a detached mount (open_tree) with
 *     its final flags (read-only/nosuid/nodev/noexec, id-mapped for
 *     read-write roots owned by someone else). Doing this in the parent, in
 *     the host mount namespace, means the child binds exactly the inode that
 *     was checked (no path lookup by a later, less privileged step, no
 *     symlink race) and the child never has to see host paths.
 *  4. [prepare_landlock] Landlock ruleset from the same O_PATH fds (rules are per inode, so the
 *     bind mounts inside the sandbox are covered) and the TCP port rules.
 *  5. [prepare_seccomp] Seccomp program compiled once per policy (cached) and only loaded later.
 *  6. [create_cgroup] Cgroup: the cgroup2 directory with its limits, BEFORE the child
 *     exists, so the connector never runs a single instruction unlimited.
 *     With the eBPF egress policy it is made inside this launcher's group,
 *     whose programs were attached once (attaching eight programs per
 *     instance, and detaching them, was the costliest part of a spawn);
 *     the instance's allowlist entries are written here. Until it has
 *     entries a cgroup below the group is denied everything.
 *  7. [clone_sandbox] CLOEXEC sync socket, then clone3(CLONE_INTO_CGROUP | CLONE_PIDFD |
 *     CLONE_NEW{PID,IPC,UTS,CGROUP}, and NS unless the base mount namespace
 *     is used: then the child copies that one, step d): the child starts inside its cgroup2
 *     directory and namespaces atomically. No user namespace: the launcher
 *     is real root, so it can give the connector a real unprivileged host
 *     uid, which is what the rest of the host's permission checks understand.
 *  8. [place_in_cgroups, attach_egress, spawn_attach_root_guard,
 *     start_and_wait] While the child builds its sandbox: on hybrid/v1
 *     hosts make the v1 directories with their limits and move the child
 *     into them (each move waits for an RCU grace period; all of it
 *     overlaps the child's work), attach the eBPF egress policy to the
 *     instance's cgroup2 directory when there is no group (the fallback),
 *     the BPF root guard (once to the group, else to the instance), then
 *     MSG_GO. Init starts the connector only after MSG_GO, so limits and
 *     policies are in place before the connector's first instruction. While waiting for
 *     the connector's execve, make a spare network namespace (lo up) for
 *     the next spawn (the launcher is idle then; see c.), unless the
 *     caller said this is its only spawn (one_shot: cordon-launch). With the
 *     supervisor root guard, init's MSG_LISTENER carries the seccomp
 *     listener and an O_PATH fd of the sandbox's root (SCM_RIGHTS) before
 *     MSG_EXECED: the supervisor is forked
 *     then (a child of this process, outside the sandbox: chrooted to
 *     its root, the connector's fsuid/fsgid, only CAP_SYS_PTRACE), a
 *     chmod the connector makes meanwhile waits for it; its pidfd goes
 *     to the instance, which reaps it after init (it exits by itself on
 *     POLLHUP once init is reaped; killed if not within 1 s).
 *
 * CHILD (spawn-child.c; steps a.-k. are spawn_child_main, l. connector_main)
 * = the sandbox's init, pid 1 of the new pid namespace (async-signal-
 * safe code only: the parent may have had other threads):
 *  a. PDEATHSIG=SIGKILL, then check the parent still exists (the sync socket
 *     peer is still open): if the launcher died in between, stop now.
 *  b. Pure cgroup2: verify the clone3 placement (cordon_cgroup_enter(), a
 *     read). Hybrid/v1: the parent moves us (step 8).
 *  c. New network namespace (here rather than in clone3: creating it is the
 *     costliest namespace, and here it overlaps the parent's cgroup work):
 *     entered with setns when the parent made a fresh one while waiting for
 *     the previous sandbox (used once, by this child only; its lo was
 *     brought up then), else unshared and lo brought up; hostname.
 *  d. Mounts: a private copy of the launcher's base mount namespace (one
 *     empty read-only tmpfs, made once: see spawn_mntns_base_get) instead of the
 *     host's, a tmpfs as the new root, the cloned trees moved into place,
 *     fresh /proc (hidepid=invisible,subset=pid: only this pid namespace,
 *     no /proc/sys and friends), a minimal /dev, a private /tmp, the new
 *     root moved over the base root (no old root to unmount: an unmount
 *     waits for an RCU grace period), the root remounted read-only.
 *     Without the base namespace: clone3 copies the host's, everything
 *     private, pivot_root, the old root detached. Mounting needs
 *     CAP_SYS_ADMIN, so this precedes every drop.
 *  e. close_range() of everything but stdio, the sync socket, the Landlock
 *     ruleset and the fds the caller keeps: nothing the launcher held leaks.
 *  f. rlimits (core 0: no core dump carries secrets out; nofile; nproc =
 *     pids for a dynamic uid, a per-instance second layer under pids.max).
 *  g. setsid(): no controlling terminal, so TIOCSTI has nothing to inject to.
 *  h. Privileges: bounding set cleared and securebits locked while we still
 *     hold CAP_SETPCAP, then setgroups(0)/setresgid/setresuid to the sandbox
 *     user, then every remaining set (effective, permitted, inheritable,
 *     ambient) cleared with libcap-ng. PDEATHSIG again: a uid change resets it.
 *  i. no_new_privs: required by Landlock and seccomp for unprivileged
 *     callers, and it makes setuid binaries inert.
 *  j. Landlock: add rules for the mounts the child created (/tmp, /dev,
 *     /proc), restrict. Last but one because it may need to open paths.
 *  k. Wait for MSG_GO; with the supervisor root guard, load its
 *     notification filter (SECCOMP_FILTER_FLAG_NEW_LISTENER; a filter of
 *     its own, so the main filter's ERRNO rules outrank its USER_NOTIF)
 *     and send the listener with the root ("/", O_PATH) to the parent
 *     (MSG_LISTENER), keeping no copy;
 *     load seccomp (last: it blocks mount, setns,
 *     ptrace... which the steps above need, and it needs no_new_privs),
 *     then start the connector (clone with CLONE_VM | CLONE_VFORK on its
 *     own stack: no page-table copy, init resumes when the connector has
 *     exec'd or failed); the connector inherits the filter, so the kernel
 *     converts and JITs it once. (A profile that denies clone: the
 *     connector loads it itself, and init after the connector's execve.)
 *     Init keeps the same confinement (same Landlock domain, pid 1), tells
 *     the parent, then only reaps, forwards SIGTERM/SIGINT/SIGHUP/SIGQUIT/
 *     SIGUSR1/SIGUSR2 and reports the connector's wait status to the
 *     parent before exiting.
 *  l. Connector: VERIFY what the process really has (/proc/self/status:
 *     NoNewPrivs 1, Seccomp 2, all five capability sets zero; Landlock
 *     denies reading "/"), then execve.
 *
 * Each bracketed name is the function that does the step; cordon_spawn()
 * calls them in this order and make_instance() hands the result over.
 *
 * Any failure before execve sends a fixed-size struct cordon_diag (step,
 * errno, message) over the sync socket and exits 127 (the connector leaves
 * its diag in memory it shares with init, which forwards it). The parent
 * returns from cordon_spawn() only after init reported that execve
 * succeeded.
 */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cap-ng.h>
#include <linux/securebits.h>

#include "cgroup.h"
#include "cleanup.h"
#include "fd-util.h"
#include "landlock-uapi.h"
#include "landlock.h"
#include "netpolicy.h"
#include "parse-util.h"
#include "privdrop.h"
#include "rootguard-notify.h"
#include "rootguard.h"
#include "seccomp.h"
#include "spawn-child.h"
#include "spawn-internal.h"
#include "syscall-compat.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define SPAWN_TIMEOUT_MSEC 30000

struct cordon_instance {
	struct cordon_netpolicy_state *np;
	struct cordon_netpolicy_attachment *np_att;
	struct cordon_rootguard_state *rg;
	struct cordon_rootguard_attachment *rg_att;
	int guard_pidfd; /* the root guard's seccomp supervisor, or -EBADF */
	pid_t guard_pid;
	int pidfd;
	pid_t pid;
	int sync_fd;
	int stdio[3];
	struct cordon_cgroup *cg;
	uint64_t cgroup_id;
	int uid_lock_fd;
	uid_t uid;
	gid_t gid;
	json_t *report;
	bool reaped;
	int status;
};

/* ------------------------------------------------------------------------ */
/* Parent side.                                                             */

/* Closes and forgets: an fd number closed twice may by then belong to
 * something else (a BPF link, whose close detaches a program). */
static void close_reset(int *fd)
{
	closep(fd);
	*fd = -EBADF;
}

static void spawn_ctx_done(struct spawn_ctx *c)
{
	for (size_t i = 0; i < c->n_mounts; i++) {
		free(c->mounts[i].at);
		free(c->mounts[i].host);
		free(c->mounts[i].symlink);
		close_reset(&c->mounts[i].path_fd);
		close_reset(&c->mounts[i].tree_fd);
	}
	free(c->mounts);
	for (size_t i = 0; i < c->n_env; i++) {
		explicit_bzero(c->envp[i], strlen(c->envp[i]));
		free(c->envp[i]);
	}
	free(c->envp);
	close_reset(&c->ruleset_fd);
	close_reset(&c->netns_fd);
	if (c->pidfd >= 0) {
		siginfo_t si;

		(void)sys_pidfd_send_signal(c->pidfd, SIGKILL, NULL, 0);
		(void)waitid((idtype_t)P_PIDFD, (id_t)c->pidfd, &si, WEXITED);
		close_reset(&c->pidfd);
	}
	/* With init reaped no task uses the filter: the supervisor ends. */
	(void)cordon_rootguard_notify_reap(&c->guard_pidfd, 1000);
	if (c->cg)
		(void)cordon_cgroup_destroy(c->cg);
	/* Detached only once nothing is left in the cgroup. */
	if (c->np_att)
		(void)cordon_netpolicy_detach(c->np, c->np_att);
	if (c->rg_att)
		(void)cordon_rootguard_detach(c->rg, c->rg_att);
	close_reset(&c->uid_lock_fd);
	for (int i = 0; i < 3; i++) {
		close_reset(&c->pipes[i][0]);
		close_reset(&c->pipes[i][1]);
	}
	close_reset(&c->sync[0]);
	close_reset(&c->sync[1]);
	json_decref(c->plan.missing);
}

/* Loaded once per process when the caller passes no policy object. */
static struct cordon_netpolicy_state *process_netpolicy;
static bool process_netpolicy_failed;
static pid_t process_netpolicy_pid;

/* At exit, the process-wide policy goes when nothing depends on it any
 * more (its group directory is removed with it). Only in the process that
 * loaded it: a forked child that calls exit() must not detach its
 * parent's programs. With instances still alive it stays: their policy
 * must not end before they do (the kernel drops it when the process is
 * gone, and they die with the launcher). */
__attribute__((destructor)) static void process_netpolicy_release(void)
{
	spawn_rootguard_release(); /* the root guard the same way (spawn-rootguard.c) */
	if (process_netpolicy && process_netpolicy_pid == getpid() && cordon_netpolicy_is_idle(process_netpolicy)) {
		cordon_netpolicy_close(process_netpolicy);
		process_netpolicy = NULL;
	}
}
static char process_netpolicy_reason[128];

struct cordon_netpolicy_state *cordon_spawn_netpolicy(void)
{
	return process_netpolicy;
}

static bool instance_name_is_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= 64)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

static int do_clone(struct spawn_ctx *c, unsigned long ns, int cgfd, bool into_cgroup)
{
	bool placed = into_cgroup && cgfd >= 0;
	struct clone_args args = {
		.flags = CLONE_PIDFD | ns,
		.pidfd = (uint64_t)(uintptr_t)&c->pidfd,
		.exit_signal = SIGCHLD,
	};
	long pid;

	if (into_cgroup && cgfd >= 0) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)cgfd;
	}
	pid = sys_clone3(&args, sizeof(args));
	if (pid < 0 && (errno == ENOSYS || errno == E2BIG)) {
		/* Older kernels: clone() without cgroup placement (the cgroup
		 * is joined separately) but still with a pidfd. Said before the
		 * clone, so the child's copy of the cgroup object knows too. */
		placed = false;
		if (c->cg)
			cordon_cgroup_set_clone_placed(c->cg, false);
		pid = syscall(SYS_clone, (unsigned long)(CLONE_PIDFD | ns | SIGCHLD), 0, &c->pidfd, 0, 0);
	}
	if (pid < 0)
		return -errno;
	if (pid > 0)
		c->placed_by_clone = placed;
	return (int)pid;
}

/* Before step 1: the caller's policy itself (command, instance name, the
 * fds it hands over). Fills c->instance_name and *ret_argv. */
static int validate_policy(const struct cordon_launch_policy *pol, const struct cordon_caps *caps,
			   struct cordon_instance **ret, struct spawn_ctx *c, char *const **ret_argv,
			   struct cordon_diag *d)
{
	static unsigned instance_counter;
	const struct cordon_profile *p;
	char *const *argv;

	if (!pol || !pol->profile || !caps || !ret)
		return cordon_diag_set(d, EINVAL, "policy", "missing profile or capability report");
	p = pol->profile;
	argv = pol->argv && pol->argv[0] ? pol->argv : p->command;
	if (!argv || !argv[0] || argv[0][0] != '/')
		return cordon_diag_set(d, EINVAL, "policy", "the command must be an absolute path");
	if (pol->instance_name) {
		if (!instance_name_is_valid(pol->instance_name))
			return cordon_diag_set(d, EINVAL, "policy",
					       "invalid instance name (want [a-z0-9-], < 64 chars)");
		snprintf(c->instance_name, sizeof(c->instance_name), "%s", pol->instance_name);
	} else
		snprintf(c->instance_name, sizeof(c->instance_name), "%s-%d-%u", p->id, (int)getpid(),
			 instance_counter++);
	if (pol->stdio == CORDON_STDIO_FDS)
		for (int i = 0; i < 3; i++)
			if (fcntl(pol->stdio_fds[i], F_GETFD) < 0)
				return cordon_diag_set(d, EBADF, "stdio", "stdio fd %d is not open", pol->stdio_fds[i]);
	for (size_t i = 0; i < pol->n_keep_fds; i++)
		if (pol->keep_fds[i] < 3 || fcntl(pol->keep_fds[i], F_GETFD) < 0)
			return cordon_diag_set(d, EBADF, "policy", "fd %d to keep is not open (or is stdio)",
					       pol->keep_fds[i]);
	if (pol->n_keep_fds > 60)
		return cordon_diag_set(d, E2BIG, "policy", "too many fds to keep");
	*ret_argv = argv;
	return 0;
}

/* Step 1: the plan. */
static int plan_controls(const struct cordon_launch_policy *pol, const struct cordon_caps *caps, struct spawn_ctx *c,
			 struct cordon_diag *d)
{
	int r;

	/* Fail closed before creating anything. The egress policy
	 * needs cgroup socket hooks, a cgroup2 directory for the instance and
	 * the programs loaded (once per process). */
	c->np = pol->netpolicy;
	if (!caps->bpf_cgroup_sock_addr)
		snprintf(c->plan.ebpf_reason, sizeof(c->plan.ebpf_reason), "the kernel has no cgroup socket BPF hooks");
	else if (caps->cgroup_layout == CORDON_CGROUP_NONE || caps->cgroup_layout == CORDON_CGROUP_V1)
		snprintf(c->plan.ebpf_reason, sizeof(c->plan.ebpf_reason),
			 "no cgroup2 hierarchy to attach the policy to");
	else if (!c->np) {
		struct cordon_diag nd = { 0 };

		if (!process_netpolicy && !process_netpolicy_failed) {
			process_netpolicy_pid = getpid();
			if (cordon_netpolicy_open(&process_netpolicy, &nd) < 0) {
				process_netpolicy_failed = true;
				snprintf(process_netpolicy_reason, sizeof(process_netpolicy_reason),
					 "eBPF egress policy could not be loaded: %.80s", nd.message);
			}
		}
		c->np = process_netpolicy;
		if (!c->np)
			snprintf(c->plan.ebpf_reason, sizeof(c->plan.ebpf_reason), "%s", process_netpolicy_reason);
	}
	c->plan.ebpf = c->np != NULL && !*c->plan.ebpf_reason;
	r = spawn_decide_plan(pol->profile, caps, &c->plan, d);
	if (r < 0)
		return r;
	return spawn_plan_root_guard(pol, caps, c, d);
}

/* Step 2: user and environment. */
static int prepare_user_env(const struct cordon_launch_policy *pol, struct spawn_ctx *c, struct cordon_diag *d)
{
	int r;

	/* 2. User and environment. */
	r = spawn_resolve_user(pol->profile, c, d);
	if (r < 0)
		return r;
	r = spawn_build_env(pol, c, d);
	if (r < 0)
		return r;
	return 0;
}

/* Step 3: every host path opened and cloned as a detached mount. */
static int prepare_filesystem(const struct cordon_launch_policy *pol, struct spawn_ctx *c, struct cordon_diag *d)
{
	const struct cordon_profile *p = pol->profile;
	bool fs_view = c->plan.ns_effective & CLONE_NEWNS;
	int r;

	/* 3. Filesystem view. */
	for (size_t i = 0; i < p->n_fs_system; i++) {
		if (p->fs_system[i].access == CORDON_ACCESS_READ_WRITE)
			return cordon_diag_set(d, EINVAL, "policy", "system path '%s' cannot be read-write",
					       p->fs_system[i].path);
		if ((r = spawn_add_mount(c, &p->fs_system[i], false, false, p, fs_view, d)) < 0)
			return r;
	}
	for (size_t i = 0; i < p->n_fs_roots; i++)
		if ((r = spawn_add_mount(c, &p->fs_roots[i], true, false, p, fs_view, d)) < 0)
			return r;
	for (size_t i = 0; i < pol->n_extra_roots; i++)
		if ((r = spawn_add_mount(c, &pol->extra_roots[i], true, true, p, fs_view, d)) < 0)
			return r;
	qsort(c->mounts, c->n_mounts, sizeof(*c->mounts), spawn_cmp_mount);
	/* A mount point beneath a read-write root would be created on the
	 * host, inside the user's data: refuse. */
	for (size_t i = 0; i < c->n_mounts; i++)
		for (size_t j = i + 1; j < c->n_mounts; j++)
			if (c->mounts[i].access == CORDON_ACCESS_READ_WRITE && !c->mounts[i].symlink &&
			    path_is_beneath(c->mounts[j].at, c->mounts[i].at))
				return cordon_diag_set(d, EINVAL, "policy",
						       "'%s' cannot be mounted inside the read-write root at '%s'",
						       c->mounts[j].at, c->mounts[i].at);
	return 0;
}

/* Step 4: the Landlock ruleset from the same O_PATH fds, and the TCP port
 * rules. */
static int prepare_landlock(const struct cordon_profile *p, const struct cordon_caps *caps, struct spawn_ctx *c,
			    struct cordon_diag *d)
{
	int r;

	/* 4. Landlock ruleset from the host fds. */
	if (c->plan.landlock != CORDON_STATE_UNAVAILABLE) {
		struct cordon_landlock_masks handled;

		r = cordon_landlock_ruleset_new(caps->landlock_abi, &c->plan.ll_requested, &handled, &c->ruleset_fd);
		if (r < 0) {
			cordon_diag_set(d, -r, "landlock", "landlock_create_ruleset: %s", strerror(-r));
			return r;
		}
		c->plan.ll_effective = handled;
		for (size_t i = 0; i < c->n_mounts; i++) {
			if (c->mounts[i].path_fd < 0)
				continue;
			r = cordon_landlock_allow_fd(c->ruleset_fd, &handled, c->mounts[i].path_fd,
						     cordon_landlock_fs_access(c->mounts[i].access));
			if (r < 0) {
				cordon_diag_set(d, -r, "landlock", "rule for '%s': %s", c->mounts[i].host,
						strerror(-r));
				return r;
			}
		}
		if (p->net_mode == CORDON_NET_ALLOWLIST)
			for (size_t i = 0; i < p->n_net_allow; i++) {
				/* protocols 0 means the default, TCP. */
				if (p->net_allow[i].protocols && !(p->net_allow[i].protocols & CORDON_PROTO_TCP))
					continue;
				for (size_t j = 0; j < p->net_allow[i].n_ports; j++) {
					r = cordon_landlock_allow_port(c->ruleset_fd, &handled,
								       p->net_allow[i].ports[j],
								       LANDLOCK_ACCESS_NET_CONNECT_TCP);
					if (r < 0) {
						cordon_diag_set(d, -r, "landlock", "port rule %u: %s",
								p->net_allow[i].ports[j], strerror(-r));
						return r;
					}
				}
			}
	}
	return 0;
}

/* Step 5: the seccomp program (compiled once per policy, loaded later). */
static int prepare_seccomp(const struct cordon_profile *p, const struct cordon_caps *caps, struct spawn_ctx *c,
			   struct cordon_diag *d)
{
	bool fs_view = c->plan.ns_effective & CLONE_NEWNS;
	int r;

	/* 5. Seccomp, compiled once per policy (and per plan additions: a
	 * read-write root, or no mount namespace, refuses openat2, whose
	 * mode seccomp cannot see;
	 * Landlock as the only TCP layer refuses TCP Fast Open, which does
	 * not pass its connect hook — mode none without a network namespace
	 * included). */
	if (c->plan.seccomp != CORDON_STATE_UNAVAILABLE) {
		unsigned opts = 0;

		/* Without a mount namespace the host's own writable places
		 * (its /tmp) are the connector's too: the same rule. */
		if (!fs_view)
			opts |= CORDON_SECCOMP_OPENAT2_ENOSYS;
		for (size_t i = 0; i < c->n_mounts; i++)
			if (c->mounts[i].access == CORDON_ACCESS_READ_WRITE && !c->mounts[i].symlink)
				opts |= CORDON_SECCOMP_OPENAT2_ENOSYS;
		if (!c->plan.ebpf && !(p->net_mode == CORDON_NET_NONE && (c->plan.ns_effective & CLONE_NEWNET)))
			opts |= CORDON_SECCOMP_NO_FASTOPEN;
		c->seccomp_opts = opts;
		r = cordon_seccomp_compile_cached_opts(p, caps, opts, &c->seccomp, d);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Step 6: the cgroup with its limits before the child exists (and, in
 * group mode, the instance's allowlist entries). Writes *ret_cgfd (borrowed
 * from c->cg, -EBADF without a cgroup2 directory). */
static int create_cgroup(const struct cordon_profile *p, const struct cordon_caps *caps, struct spawn_ctx *c,
			 int *ret_cgfd, struct cordon_diag *d)
{
	int r, cgfd = -EBADF;

	/* 6. Cgroup, limits written before the child exists. */
	if (c->plan.cgroup != CORDON_STATE_UNAVAILABLE) {
		struct cordon_cgroup_limits lim = { p->mem_bytes, p->pids_max, p->cpu_micro };
		unsigned required = 0;

		/* A limit the profile chose is required with the cgroup
		 * control; a default one is applied where its controller works
		 * and reported degraded where it does not (the profile did not
		 * ask for it, so its absence does not stop the launch). */
		if (p->require & CORDON_CONTROL_CGROUP) {
			if (p->mem_bytes && !(p->limits_defaulted & CORDON_LIMIT_MEMORY))
				required |= 1u << CORDON_CTRL_MEMORY;
			if (p->pids_max && !(p->limits_defaulted & CORDON_LIMIT_PIDS))
				required |= 1u << CORDON_CTRL_PIDS;
			if (p->cpu_micro && !(p->limits_defaulted & CORDON_LIMIT_CPU))
				required |= 1u << CORDON_CTRL_CPU;
		}
		/* The egress programs are attached once, to this launcher's
		 * group directory, when that works; the instance then lives
		 * inside it and only gets map entries. Otherwise (no group
		 * possible) the programs go on the instance itself, step 8. */
		if (c->plan.ebpf && cordon_netpolicy_group_setup(c->np, caps, NULL) >= 0)
			c->group = cordon_netpolicy_group(c->np);
		/* Only the cgroup2 directory now (clone3 places the child
		 * there); the v1 hierarchies of hybrid hosts are made after the
		 * clone, while the child builds its sandbox, and before MSG_GO:
		 * still before the connector's first instruction. */
		r = cordon_cgroup_create(caps,
					 &(struct cordon_cgroup_options){ .name = c->instance_name,
									  .limits = &lim,
									  .required = required,
									  .flags = CORDON_CGROUP_DEFER_V1,
									  .group = c->group },
					 &c->cg, &c->plan.cgroup_missing, d);
		if (r < 0)
			return r;
		cgfd = cordon_cgroup_v2_fd(c->cg);
		/* Group mode: the allowlist entries, before the child exists.
		 * From its first instruction the group's programs judge it;
		 * without entries (mode none) it is denied everything. */
		if (c->group) {
			if (cgfd < 0)
				return cordon_diag_set(d, ENOENT, "netpolicy", "the instance has no cgroup2 directory");
			r = cordon_netpolicy_attach_entries(c->np, cgfd, p->net_allow,
							    p->net_mode == CORDON_NET_ALLOWLIST ? p->n_net_allow : 0,
							    &c->np_att, d);
			if (r < 0)
				return r;
		}
	}
	*ret_cgfd = cgfd;
	return 0;
}

/* Step 7: the child's arguments, stdio, the sync socket, clone3. In the
 * child this never returns (spawn_child_main). */
static int clone_sandbox(const struct cordon_launch_policy *pol, const struct cordon_caps *caps, struct spawn_ctx *c,
			 char *const *argv, int cgfd, struct child_args *a, struct cordon_diag *d)
{
	const struct cordon_profile *p = pol->profile;
	bool fs_view = c->plan.ns_effective & CLONE_NEWNS;
	int r;

	/* 7. stdio, sync socket, clone. */
	c->netns_fd = (c->plan.ns_effective & CLONE_NEWNET) ? spawn_spare_netns_take() : -EBADF;
	*a = (struct child_args){
		.ruleset_fd = c->ruleset_fd,
		.ll_handled = c->plan.ll_effective,
		.landlock = c->ruleset_fd >= 0,
		.seccomp = c->seccomp,
		/* A profile that denies clone would stop init from starting the
		 * connector under the filter: then the connector loads it itself. */
		.seccomp_in_init = c->seccomp && !strv_contains_n(p->seccomp_deny, p->n_seccomp_deny, "clone"),
		.notify_filter = c->rg_notify ? cordon_rootguard_notify_filter() : NULL,
		.cg = c->cg,
		/* Pure cgroup2 with clone3 placement: nothing to move, the child
		 * only verifies (a read). Otherwise the parent migrates it. */
		.cg_enter = caps->cgroup_layout == CORDON_CGROUP_V2 && caps->clone_into_cgroup && cgfd >= 0,
		.mounts = c->mounts,
		.n_mounts = c->n_mounts,
		.fs_view = fs_view,
		.mntns_fd = fs_view ? spawn_mntns_base_get() : -EBADF,
		.net_ns = c->plan.ns_effective & CLONE_NEWNET,
		.netns_fd = c->netns_fd,
		.uts_ns = c->plan.ns_effective & CLONE_NEWUTS,
		.workdir = p->workdir,
		.argv = argv,
		.envp = c->envp,
		.uid = c->uid,
		.gid = c->gid,
		.nofile = p->nofile,
		.cap_last = cordon_cap_last(),
		/* A dynamic uid belongs to this instance alone, so RLIMIT_NPROC
		 * (counted per uid) is a per-instance second layer under pids.max,
		 * and the only one where the pids controller is missing. A named
		 * user may run several instances: no per-uid cap for it. */
		.nproc = !p->user ? p->pids_max : 0,
		.keep_fds = pol->keep_fds,
		.n_keep_fds = pol->n_keep_fds,
	};
	snprintf(a->tmp_opts, sizeof(a->tmp_opts), "mode=1777,size=%llu",
		 (unsigned long long)(p->tmp_bytes ? p->tmp_bytes : 64ULL << 20));
	snprintf(a->shm_opts, sizeof(a->shm_opts), "mode=1777,size=%llu",
		 (unsigned long long)(p->tmp_bytes ? p->tmp_bytes : 64ULL << 20));
	for (int i = 0; i < 3; i++) {
		switch (pol->stdio) {
		case CORDON_STDIO_INHERIT:
			a->stdio[i] = i;
			break;
		case CORDON_STDIO_FDS:
			a->stdio[i] = pol->stdio_fds[i];
			break;
		case CORDON_STDIO_PIPES:
			if (pipe2(c->pipes[i], O_CLOEXEC) < 0)
				return cordon_diag_set(d, errno, "stdio", "pipe: %m");
			a->stdio[i] = i == 0 ? c->pipes[i][0] : c->pipes[i][1];
			break;
		}
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, c->sync) < 0)
		return cordon_diag_set(d, errno, "sync", "socketpair: %m");
	a->sync_fd = c->sync[1];

	/* libcap-ng keeps per-thread state that it initialises lazily (reading
	 * /proc through stdio): initialise it here, so the child only
	 * computes and calls capset. */
	capng_clear(CAPNG_SELECT_BOTH);
	/* The network namespace is the expensive one (~0.5 ms): the child
	 * unshares it itself, in parallel with the parent's eBPF attach. */
	/* With the base mount namespace the child makes its own copy of it. */
	r = do_clone(c, c->plan.ns_effective & ~(unsigned long)(CLONE_NEWNET | (a->mntns_fd >= 0 ? CLONE_NEWNS : 0)),
		     cgfd, caps->clone_into_cgroup);
	if (r == 0)
		spawn_child_main(a);
	if (r < 0) {
		cordon_diag_set(d, -r, "clone", "clone3 of the sandbox: %s", strerror(-r));
		return r;
	}
	c->pid = r;
	close_reset(&c->sync[1]);
	for (int i = 0; i < 3; i++)
		close_reset(&c->pipes[i][i == 0 ? 0 : 1]);
	/* The mount trees now live in the child (or die with it). */
	for (size_t i = 0; i < c->n_mounts; i++)
		close_reset(&c->mounts[i].tree_fd);
	close_reset(&c->ruleset_fd);
	close_reset(&c->netns_fd); /* the child has it (or died): used once */
	return 0;
}

/* Step 8, first part: on hybrid/v1 hosts the v1 directories, and the
 * child moved into its cgroups unless clone3 placed it. */
static int place_in_cgroups(const struct cordon_caps *caps, struct spawn_ctx *c, const struct child_args *a,
			    struct cordon_diag *d)
{
	int r;

	/* Hybrid/v1 hosts: moving a process into a v1 cgroup waits for an RCU
	 * grace period (the threadgroup rwsem); doing it here lets that wait
	 * overlap the child's namespace and mount work. The child starts the
	 * connector only after MSG_GO below, so the limits apply before the
	 * connector's first instruction. */
	if (c->cg) {
		unsigned more = 0;

		r = cordon_cgroup_complete(caps, c->cg, &more, d);
		if (r < 0)
			return r;
		c->plan.cgroup_missing |= more;
		if (c->plan.cgroup_missing) {
			c->plan.cgroup = CORDON_STATE_DEGRADED;
			snprintf(c->plan.cgroup_reason, sizeof(c->plan.cgroup_reason),
				 "some controllers are not usable");
			for (int i = 0; i < _CORDON_CTRL_MAX; i++)
				if (c->plan.cgroup_missing & (1u << i))
					(void)spawn_plan_add_missing(
						&c->plan, "cgroup", cordon_cgroup_ctrl_name((enum cordon_cgroup_ctrl)i),
						"that limit is not enforced");
		}
	}
	if (c->cg && !a->cg_enter) {
		r = cordon_cgroup_attach_pid(c->cg, c->pid);
		if (r < 0) {
			cordon_diag_set(d, -r, "cgroup", "moving the sandbox into its cgroup: %s", strerror(-r));
			return r;
		}
	}
	return 0;
}

/* Step 8: the eBPF egress policy on the instance's own cgroup2 directory
 * (only when there is no group). */
static int attach_egress(const struct cordon_profile *p, struct spawn_ctx *c, int cgfd, struct cordon_diag *d)
{
	int r;

	/* 8. Egress policy on the instance's cgroup2 directory (mode none: no
	 * rule, deny everything), attached while the child builds its
	 * namespaces and mounts; the child starts the connector only after
	 * MSG_GO, so the policy is in place before the connector's first
	 * instruction. */
	if (c->plan.ebpf && !c->group) {
		if (cgfd < 0)
			return cordon_diag_set(d, ENOENT, "netpolicy",
					       "the instance has no cgroup2 directory to attach to");
		r = cordon_netpolicy_attach(c->np, cgfd, p->net_allow,
					    p->net_mode == CORDON_NET_ALLOWLIST ? p->n_net_allow : 0, &c->np_att, d);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Step 8, last: MSG_GO, then wait (bounded) for the connector's execve or
 * the child's diag. */
static int start_and_wait(struct spawn_ctx *c, struct cordon_diag *d)
{
	int r;

	{
		struct sync_msg go = { .kind = MSG_GO };

		if (send(c->sync[0], &go, sizeof(go), MSG_NOSIGNAL) != (ssize_t)sizeof(go))
			return cordon_diag_set(d, errno ? errno : EPIPE, "sync",
					       "the sandbox's init went away before start");
	}
	/* The launcher now only waits for the connector's execve: make the
	 * next spawn's network namespace meanwhile. */
	if ((c->plan.ns_effective & CLONE_NEWNET) && !c->one_shot)
		spawn_spare_netns_make();

	for (;;) {
		struct sync_msg m;
		ssize_t n;
		union {
			char buf[CMSG_SPACE(2 * sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
		struct msghdr mh = {
			.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)
		};
		_cleanup_close_ int passed = -EBADF, passed_root = -EBADF;

		/* Bounded: a sandbox that neither starts nor fails (a child
		 * stuck in the kernel, an exec that never returns) is killed
		 * rather than hanging the launcher. */
		struct pollfd pf = { .fd = c->sync[0], .events = POLLIN };
		int pr;

		do
			pr = poll(&pf, 1, SPAWN_TIMEOUT_MSEC);
		while (pr < 0 && errno == EINTR);
		if (pr == 0)
			return cordon_diag_set(d, ETIMEDOUT, "init", "the sandbox did not start within %d s",
					       SPAWN_TIMEOUT_MSEC / 1000);
		do
			n = recvmsg(c->sync[0], &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		while (n < 0 && errno == EINTR);
		if (n > 0)
			for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
				if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
					/* Every fd received is closed at the end of the
					 * iteration unless it is the expected pair. */
					size_t nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
					int fds[2];

					for (size_t i = 0; i < nfd; i++) {
						int one;

						memcpy(&one, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
						if (i < 2 && passed < 0 && nfd == 2)
							fds[i] = one;
						else
							(void)close(one);
					}
					if (nfd == 2 && passed < 0) {
						passed = fds[0];
						passed_root = fds[1];
					}
				}
		if (n == (ssize_t)sizeof(m) && m.kind == MSG_LISTENER) {
			/* The root guard's listener and the sandbox's root: its
			 * supervisor starts now; a chmod the connector makes
			 * meanwhile waits for it. */
			if (passed < 0 || passed_root < 0)
				return cordon_diag_set(d, EPROTO, "rootguard",
						       "the listener message did not carry the listener and the root");
			r = spawn_start_root_guard_supervisor(c, passed, passed_root, d);
			if (r < 0)
				return r;
			continue;
		}
		if (n == (ssize_t)sizeof(m) && m.kind == MSG_DIAG) {
			m.diag.step[sizeof(m.diag.step) - 1] = '\0';
			m.diag.message[sizeof(m.diag.message) - 1] = '\0';
			*d = m.diag;
			r = -(m.diag.error > 0 ? m.diag.error : EIO);
			return r;
		}
		if (n != (ssize_t)sizeof(m) || m.kind != MSG_EXECED)
			return cordon_diag_set(d, n < 0 ? errno : EPIPE, "init",
					       "the sandbox's init ended before the connector started");
		if (c->rg_notify && c->guard_pidfd < 0)
			return cordon_diag_set(d, EPROTO, "rootguard",
					       "the sandbox started without the guard's listener");
		memcpy(c->ct, m.t, sizeof(c->ct));
		return 0;
	}
}

/* The instance handed to the caller: takes the ctx's resources. */
static int make_instance(const struct cordon_launch_policy *pol, const struct cordon_caps *caps, struct spawn_ctx *c,
			 char *const *argv, struct cordon_instance **ret, struct cordon_diag *d)
{
	struct cordon_instance *inst;
	int r;

	inst = calloc(1, sizeof(*inst));
	if (!inst)
		return -ENOMEM;
	inst->report = spawn_build_report(pol, caps, c, argv);
	if (!inst->report) {
		free(inst);
		r = cordon_diag_set(d, ENOMEM, "report", "out of memory");
		return r;
	}
	inst->pidfd = TAKE_FD(c->pidfd);
	inst->pid = c->pid;
	inst->sync_fd = TAKE_FD(c->sync[0]);
	for (int i = 0; i < 3; i++)
		inst->stdio[i] = pol->stdio == CORDON_STDIO_PIPES ? TAKE_FD(c->pipes[i][i == 0 ? 1 : 0]) : -EBADF;
	inst->cg = TAKE_PTR(c->cg);
	if (inst->cg) {
		struct stat cst;

		/* On cgroup2 the directory's inode number is the cgroup id. */
		if (cordon_cgroup_v2_fd(inst->cg) >= 0 && fstat(cordon_cgroup_v2_fd(inst->cg), &cst) >= 0)
			inst->cgroup_id = (uint64_t)cst.st_ino;
	}
	inst->np = c->np;
	inst->np_att = TAKE_PTR(c->np_att);
	inst->rg = c->rg;
	inst->rg_att = TAKE_PTR(c->rg_att);
	inst->guard_pidfd = TAKE_FD(c->guard_pidfd);
	inst->guard_pid = c->guard_pid;
	inst->uid_lock_fd = TAKE_FD(c->uid_lock_fd);
	inst->uid = c->uid;
	inst->gid = c->gid;
	*ret = inst;
	return 0;
}

int cordon_spawn(const struct cordon_launch_policy *pol, const struct cordon_caps *caps, struct cordon_instance **ret,
		 struct cordon_diag *reterr_diag)
{
	struct spawn_ctx c = {
		.ruleset_fd = -EBADF,
		.uid_lock_fd = -EBADF,
		.pipes = { { -EBADF, -EBADF }, { -EBADF, -EBADF }, { -EBADF, -EBADF } },
		.sync = { -EBADF, -EBADF },
		.pidfd = -EBADF,
		.netns_fd = -EBADF,
		.guard_pidfd = -EBADF,
	};
	struct cordon_diag dummy;
	struct cordon_diag *d = reterr_diag ? reterr_diag : &dummy;
	struct child_args a;
	char *const *argv = NULL;
	int r, cgfd = -EBADF;

	r = validate_policy(pol, caps, ret, &c, &argv, d);
	if (r < 0)
		return r;
	c.one_shot = pol->one_shot;

	/* Steps 1-6: nothing of the sandbox exists before the plan passed. */
	c.t[0] = spawn_mono_usec();
	if ((r = plan_controls(pol, caps, &c, d)) < 0 || (r = prepare_user_env(pol, &c, d)) < 0 ||
	    (r = prepare_filesystem(pol, &c, d)) < 0 || (r = prepare_landlock(pol->profile, caps, &c, d)) < 0 ||
	    (r = prepare_seccomp(pol->profile, caps, &c, d)) < 0)
		goto fail;
	c.t[1] = spawn_mono_usec();
	r = create_cgroup(pol->profile, caps, &c, &cgfd, d);
	if (r < 0)
		goto fail;
	c.t[2] = spawn_mono_usec();

	/* Step 7, then 8 while the child builds its sandbox. */
	r = clone_sandbox(pol, caps, &c, argv, cgfd, &a, d);
	if (r < 0)
		goto fail;
	c.v1_usec = spawn_mono_usec();
	r = place_in_cgroups(caps, &c, &a, d);
	if (r < 0)
		goto fail;
	c.t[3] = spawn_mono_usec();
	c.v1_usec = c.t[3] - c.v1_usec;
	r = attach_egress(pol->profile, &c, cgfd, d);
	if (r < 0)
		goto fail;
	r = spawn_attach_root_guard(&c, cgfd, d);
	if (r < 0)
		goto fail;
	c.t[4] = spawn_mono_usec();
	r = start_and_wait(&c, d);
	if (r < 0)
		goto fail;
	c.t[5] = spawn_mono_usec();

	r = make_instance(pol, caps, &c, argv, ret, d);
	if (r < 0)
		goto fail;
	spawn_ctx_done(&c);
	return 0;

fail:
	spawn_ctx_done(&c);
	return r < 0 ? r : -EIO;
}

int cordon_instance_pidfd(const struct cordon_instance *inst)
{
	return inst->pidfd;
}

pid_t cordon_instance_pid(const struct cordon_instance *inst)
{
	return inst->pid;
}

int cordon_instance_take_stdio(struct cordon_instance *inst, int i)
{
	if (i < 0 || i > 2 || inst->stdio[i] < 0)
		return -EBADF;
	return TAKE_FD(inst->stdio[i]);
}

uid_t cordon_instance_uid(const struct cordon_instance *inst)
{
	return inst->uid;
}

gid_t cordon_instance_gid(const struct cordon_instance *inst)
{
	return inst->gid;
}

int cordon_instance_signal(struct cordon_instance *inst, int sig)
{
	if (inst->reaped)
		return -ESRCH;
	if (sys_pidfd_send_signal(inst->pidfd, sig, NULL, 0) < 0)
		return -errno;
	return 0;
}

int cordon_exit_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 255;
}

int cordon_instance_wait(struct cordon_instance *inst, int *ret_status)
{
	siginfo_t si = { 0 };
	struct sync_msg m;
	json_t *ex, *stats;
	ssize_t n;
	int st;

	if (inst->reaped) {
		*ret_status = inst->status;
		return 0;
	}
	while (waitid((idtype_t)P_PIDFD, (id_t)inst->pidfd, &si, WEXITED) < 0)
		if (errno != EINTR)
			return -errno;
	inst->reaped = true;

	n = recv(inst->sync_fd, &m, sizeof(m), MSG_DONTWAIT);
	if (n == (ssize_t)sizeof(m) && m.kind == MSG_EXIT)
		st = m.status;
	else if (si.si_code == CLD_EXITED)
		st = W_EXITCODE(si.si_status, 0);
	else
		st = W_EXITCODE(0, si.si_status);
	inst->status = st;
	/* Init is reaped: no task uses the root guard's filter any more, so
	 * its supervisor ends by itself (killed if it has not within 1 s). */
	if (inst->guard_pidfd >= 0) {
		int g = cordon_rootguard_notify_reap(&inst->guard_pidfd, 1000);

		json_object_set_new(json_object_get(json_object_get(inst->report, "controls"), "root_guard"),
				    "supervisor",
				    json_string(g > 0	 ? "exited"
						: g == 0 ? "killed"
							 : "unreaped"));
	}

	ex = json_pack("{s:s, s:i, s:i}", "how", WIFEXITED(st) ? "exited" : "signaled",
		       WIFEXITED(st) ? "code" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), "shell_code",
		       cordon_exit_code(st));
	json_object_set_new(inst->report, "exit", ex);
	if (inst->cg) {
		struct cordon_cgroup_stats cs = { 0 };

		if (cordon_cgroup_stats(inst->cg, &cs) >= 0) {
			stats = json_pack("{s:I, s:I, s:I, s:I}", "memory_peak_bytes", (json_int_t)cs.mem_peak_bytes,
					  "oom_kills", (json_int_t)cs.oom_kills, "pids_peak", (json_int_t)cs.pids_peak,
					  "cpu_usage_usec", (json_int_t)cs.cpu_usage_usec);
			json_object_set_new(inst->report, "cgroup_stats", stats);
		}
	}
	*ret_status = st;
	return 0;
}

const json_t *cordon_instance_report(const struct cordon_instance *inst)
{
	return inst->report;
}

uint64_t cordon_instance_cgroup_id(const struct cordon_instance *inst)
{
	return inst->cgroup_id;
}

pid_t cordon_instance_guard_pid(const struct cordon_instance *inst)
{
	return inst->guard_pidfd >= 0 || inst->guard_pid > 0 ? inst->guard_pid : 0;
}

void cordon_instance_free(struct cordon_instance *inst)
{
	if (!inst)
		return;
	if (!inst->reaped) {
		siginfo_t si;

		(void)sys_pidfd_send_signal(inst->pidfd, SIGKILL, NULL, 0);
		while (waitid((idtype_t)P_PIDFD, (id_t)inst->pidfd, &si, WEXITED) < 0 && errno == EINTR)
			;
	}
	(void)cordon_rootguard_notify_reap(&inst->guard_pidfd, 1000);
	if (inst->cg)
		(void)cordon_cgroup_destroy(inst->cg);
	if (inst->np_att)
		(void)cordon_netpolicy_detach(inst->np, inst->np_att);
	if (inst->rg_att)
		(void)cordon_rootguard_detach(inst->rg, inst->rg_att);
	close_reset(&inst->pidfd);
	close_reset(&inst->sync_fd);
	for (int i = 0; i < 3; i++)
		close_reset(&inst->stdio[i]);
	close_reset(&inst->uid_lock_fd);
	json_decref(inst->report);
	free(inst);
}
