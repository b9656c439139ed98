/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cordon_spawn(): one connector instance in its sandbox.
 *
 * PARENT (the launcher, privileged, may allocate and log nothing):
 *  1. [validate_policy, plan_controls; spawn_decide_plan in spawn-report.c]
 *     Validate the policy and decide the plan against the capability struct.
 *     A control in `require` that the kernel lacks refuses the launch here,
 *     before anything is created, so a refusal leaves nothing behind.
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
 *  8. [place_in_cgroups, attach_egress, start_and_wait] While the child
 *     builds its sandbox: on hybrid/v1 hosts make the v1
 *     directories with their limits and move the child into them (each
 *     move waits for an RCU grace period; all of it overlaps the child's
 *     work), attach the eBPF egress policy to the instance's cgroup2
 *     directory when there is no group (the fallback), then MSG_GO. Init
 *     starts the connector only after MSG_GO, so limits and policy are in
 *     place before the connector's first instruction. While waiting for
 *     the connector's execve, make a spare network namespace (lo up) for
 *     the next spawn (the launcher is idle then; see c.).
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
 *     empty read-only tmpfs, made once: see mntns_base_get) instead of the
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
 *  k. Wait for MSG_GO, load seccomp (last: it blocks mount, setns,
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
#include "seccomp.h"
#include "spawn-child.h"
#include "spawn-internal.h"
#include "syscall-compat.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define CREDENTIAL_MAX_BYTES (64 * 1024)
#define SPAWN_TIMEOUT_MSEC   30000
#define MAX_ENV		     1024

struct cordon_instance {
	struct cordon_netpolicy_state *np;
	struct cordon_netpolicy_attachment *np_att;
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
	if (c->cg)
		(void)cordon_cgroup_destroy(c->cg);
	/* Detached only once nothing is left in the cgroup. */
	if (c->np_att)
		(void)cordon_netpolicy_detach(c->np, c->np_att);
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

static int uid_allocate(int *ret_lock_fd, uid_t *ret_uid, struct cordon_diag *d)
{
	static unsigned counter;
	_cleanup_close_ int fd = -EBADF;
	unsigned start;
	int r;

	r = spawn_mkdir_p(CORDON_RUN_DIR, 0755);
	if (r < 0)
		return cordon_diag_set(d, -r, "user", "cannot create %s: %s", CORDON_RUN_DIR, strerror(-r));
	/* A fresh open file description per instance: OFD locks of one
	 * description never conflict with each other. */
	fd = open(CORDON_DYNAMIC_UID_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return cordon_diag_set(d, errno, "user", "cannot open %s: %m", CORDON_DYNAMIC_UID_LOCK);

	/* Spread start points so concurrent launchers rarely probe the same
	 * numbers; the byte-range lock is what guarantees uniqueness. */
	start = ((unsigned)getpid() * 2654435761u + counter++ * 40503u) % CORDON_DYNAMIC_UID_COUNT;
	for (unsigned i = 0; i < CORDON_DYNAMIC_UID_COUNT; i++) {
		unsigned n = (start + i) % CORDON_DYNAMIC_UID_COUNT;
		struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t)n, .l_len = 1};

		if (fcntl(fd, F_OFD_SETLK, &fl) == 0) {
			*ret_lock_fd = TAKE_FD(fd);
			*ret_uid = CORDON_DYNAMIC_UID_BASE + n;
			return 0;
		}
		if (errno != EAGAIN && errno != EACCES)
			return cordon_diag_set(d, errno, "user", "locking byte %u of %s: %m", n,
					       CORDON_DYNAMIC_UID_LOCK);
	}
	return cordon_diag_set(d, EUSERS, "user", "all %u dynamic uids are in use", CORDON_DYNAMIC_UID_COUNT);
}

static int resolve_user(const struct cordon_profile *p, struct spawn_ctx *c, struct cordon_diag *d)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	int r;

	if (!p->user) {
		uid_t uid = 0;

		r = uid_allocate(&c->uid_lock_fd, &uid, d);
		if (r < 0)
			return r;
		c->uid = uid;
		c->gid = (gid_t)uid;
		return 0;
	}
	r = getpwnam_r(p->user, &pw, buf, sizeof(buf), &res);
	if (r != 0 || !res)
		return cordon_diag_set(d, r ? r : ENOENT, "user", "sandbox.user '%s' does not exist", p->user);
	if (pw.pw_uid == 0 || pw.pw_gid == 0)
		return cordon_diag_set(d, EPERM, "user", "sandbox.user '%s' is root; refusing", p->user);
	c->uid = pw.pw_uid;
	c->gid = pw.pw_gid;
	return 0;
}

static const char *env_lookup(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (; env && *env; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

static int env_push(struct spawn_ctx *c, const char *name, const char *value)
{
	char *s, **nv;

	/* Later sources win: set overrides pass, credentials override both. */
	for (size_t i = 0; i < c->n_env; i++)
		if (strncmp(c->envp[i], name, strlen(name)) == 0 && c->envp[i][strlen(name)] == '=') {
			if (asprintf(&s, "%s=%s", name, value) < 0)
				return -ENOMEM;
			explicit_bzero(c->envp[i], strlen(c->envp[i]));
			free(c->envp[i]);
			c->envp[i] = s;
			return 0;
		}
	if (c->n_env >= MAX_ENV)
		return -E2BIG;
	nv = realloc(c->envp, (c->n_env + 2) * sizeof(char *));
	if (!nv)
		return -ENOMEM;
	c->envp = nv;
	if (asprintf(&s, "%s=%s", name, value) < 0)
		return -ENOMEM;
	c->envp[c->n_env++] = s;
	c->envp[c->n_env] = NULL;
	return 0;
}

static int build_env(const struct cordon_launch_policy *pol, struct spawn_ctx *c, struct cordon_diag *d)
{
	const struct cordon_profile *p = pol->profile;
	int r;

	c->envp = calloc(1, sizeof(char *));
	if (!c->envp)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_env_pass; i++) {
		const char *v = env_lookup(pol->env_source, p->env_pass[i]);

		if (v && (r = env_push(c, p->env_pass[i], v)) < 0)
			return cordon_diag_set(d, -r, "environment", "env.pass %s", p->env_pass[i]);
	}
	for (size_t i = 0; i < p->n_env_set; i++)
		if ((r = env_push(c, p->env_set[i].name, p->env_set[i].value)) < 0)
			return cordon_diag_set(d, -r, "environment", "env.set %s", p->env_set[i].name);
	for (size_t i = 0; i < p->n_credentials; i++) {
		char *buf = NULL;
		size_t len = 0;

		r = read_file_bounded(AT_FDCWD, p->credentials[i].file, CREDENTIAL_MAX_BYTES, &buf, &len);
		if (r < 0)
			/* Name the file and the variable, never the content. */
			return cordon_diag_set(d, -r, "credentials", "cannot read credential file %s for %s: %s",
					       p->credentials[i].file, p->credentials[i].env, strerror(-r));
		while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			buf[--len] = '\0';
		if (memchr(buf, '\0', len)) {
			explicit_bzero(buf, len);
			free(buf);
			return cordon_diag_set(d, EINVAL, "credentials", "credential file %s contains a NUL byte",
					       p->credentials[i].file);
		}
		r = env_push(c, p->credentials[i].env, buf);
		explicit_bzero(buf, len);
		free(buf);
		if (r < 0)
			return cordon_diag_set(d, -r, "credentials", "env %s", p->credentials[i].env);
	}
	return 0;
}

/* A user namespace whose only mapping is owner -> uid (and ownergid -> gid),
 * for MOUNT_ATTR_IDMAP: on the id-mapped mount files owned by `owner` appear
 * as owned by the sandbox user, and files the sandbox user creates are
 * written to disk as owned by `owner`. A helper is cloned directly into a new
 * user namespace, sharing our memory (no page-table copy) and doing nothing
 * but pause(); we write its maps, keep only the namespace fd, and SIGKILL it
 * (which it never sees in user space, so it touches no shared state). */
/* A namespace held by an nsfd: a helper is cloned into a new namespace of
 * type `flag` (sharing our memory: no page-table copy), runs `setup` there
 * (spawn-child.c: async-signal-safe), and pauses; `configure` (the user
 * namespace's id maps) runs here while it exists; then /proc/<pid>/ns/<name>
 * is opened and the helper killed and reaped. One helper at a time: they
 * share one stack. The three namespaces the launcher pins (the spare
 * network namespace, the base mount namespace, the id-mapping user
 * namespaces) are made by this one function. Returns 0 and writes *ret_fd,
 * or -errno. */
static int ns_pin(unsigned long flag, const char *name, int (*setup)(void),
		  int (*configure)(pid_t pid, uid_t owner, gid_t owner_gid, uid_t uid, gid_t gid), uid_t owner,
		  gid_t owner_gid, uid_t uid, gid_t gid, int *ret_fd)
{
	static char stack[16384] __attribute__((aligned(64)));
	struct spawn_pin_args a = {.setup = setup, .pipe_w = -EBADF};
	int pfd[2] = {-EBADF, -EBADF}, fd = -EBADF, r = 0;
	char path[64], ok = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	a.pipe_w = pfd[1];
	a.parent = getpid();
	pid = clone(spawn_pin_helper, stack + sizeof(stack), (int)flag | CLONE_VM | SIGCHLD, &a);
	if (pid < 0) {
		r = -errno;
		goto out;
	}
	do
		n = read(pfd[0], &ok, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || ok != 1)
		r = -EIO;
	if (r >= 0 && configure)
		r = configure(pid, owner, owner_gid, uid, gid);
	if (r >= 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			r = -errno;
	}
	(void)kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
out:
	(void)close(pfd[0]);
	(void)close(pfd[1]);
	if (r < 0)
		return r;
	*ret_fd = fd;
	return 0;
}

/* A spare network namespace, made while the launcher waits for the
 * previous sandbox to start (it is idle then) and used by the next spawn
 * that needs one: creating a network namespace is the costliest single
 * step of a spawn. It is fresh (nothing has ever run in it; the helper
 * only brought lo up, which every sandbox does first) and used exactly once: the fd is handed
 * to one child and closed in the launcher right after the clone. Only the
 * process that made it uses it (a forked copy of the launcher holds the
 * same namespace through its copy of the fd and must not hand it out a
 * second time). */
static int spare_netns_fd = -EBADF;
static pid_t spare_netns_pid;

static void spare_netns_make(void)
{
	int fd = -EBADF;

	if (spare_netns_fd >= 0 && spare_netns_pid == getpid())
		return;
	if (spare_netns_fd >= 0)
		(void)close(spare_netns_fd); /* a forked copy's: the parent's spare, not ours */
	spare_netns_fd = -EBADF;
	if (ns_pin(CLONE_NEWNET, "net", spawn_pin_setup_netns, NULL, 0, 0, 0, 0, &fd) < 0)
		return; /* the next child unshares its own */
	spare_netns_fd = fd;
	spare_netns_pid = getpid();
}

/* The base mount namespace, made once per launcher process: its only mount
 * is an empty read-only tmpfs holding the directory NEWROOT. A sandbox
 * enters it and unshares a private copy instead of copying the host's
 * namespace, so it never has to unmount the host tree (an unmount waits
 * for an RCU grace period). Held by an nsfs fd; a forked copy of the
 * launcher makes its own, like the spare network namespace. */
static int mntns_base_fd = -EBADF;
static pid_t mntns_base_pid;

static int mntns_base_get(void)
{
	int fd = -EBADF;

	if (mntns_base_fd >= 0 && mntns_base_pid == getpid())
		return mntns_base_fd;
	if (mntns_base_fd >= 0)
		(void)close(mntns_base_fd); /* a forked copy's */
	mntns_base_fd = -EBADF;
	if (ns_pin(CLONE_NEWNS, "mnt", spawn_pin_setup_mntns, NULL, 0, 0, 0, 0, &fd) < 0)
		return -EBADF; /* this child copies the host's namespace */
	mntns_base_fd = fd;
	mntns_base_pid = getpid();
	return fd;
}

/* Takes the spare (the caller closes it after the clone), or -EBADF. */
static int spare_netns_take(void)
{
	if (spare_netns_fd < 0 || spare_netns_pid != getpid())
		return -EBADF;
	return TAKE_FD(spare_netns_fd);
}

static bool strv_has(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] && strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* The id maps of a pinned user namespace: owner <-> the sandbox user. */
static int idmap_write(pid_t pid, uid_t owner, gid_t owner_gid, uid_t uid, gid_t gid)
{
	char path[64], map[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)owner, (unsigned)uid);
	r = write_small_file(path, map);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)owner_gid, (unsigned)gid);
	return write_small_file(path, map);
}

static int make_idmap_userns(uid_t owner, gid_t owner_gid, uid_t uid, gid_t gid, int *ret_fd)
{
	return ns_pin(CLONE_NEWUSER, "user", NULL, idmap_write, owner, owner_gid, uid, gid, ret_fd);
}

/* Opens an extra root (delegation, --root) from a ceiling directory with
 * RESOLVE_BENEATH, so neither ".." nor a symlink can leave the ceiling, and
 * checks by dev/ino that it is the very object the host path names. */
/* A user namespace that only carries a mapping is immutable once its maps
 * are written, so one per (owner, sandbox user) serves every instance with
 * that pair: a dynamic uid number is reused once its instance is gone, and
 * building the namespace costs a clone and two /proc writes. A few slots,
 * the oldest replaced. Returns a borrowed fd. */
static struct {
	uid_t owner, uid;
	gid_t owner_gid, gid;
	int fd;
} idmap_cache[4] = {{.fd = -EBADF}, {.fd = -EBADF}, {.fd = -EBADF}, {.fd = -EBADF}};
static unsigned idmap_cache_next;

static int idmap_userns_cached(uid_t owner, gid_t owner_gid, uid_t uid, gid_t gid, int *ret_fd)
{
	unsigned slot;
	int fd = -EBADF, r;

	for (size_t i = 0; i < ELEMENTSOF(idmap_cache); i++)
		if (idmap_cache[i].fd >= 0 && idmap_cache[i].owner == owner && idmap_cache[i].owner_gid == owner_gid &&
		    idmap_cache[i].uid == uid && idmap_cache[i].gid == gid) {
			*ret_fd = idmap_cache[i].fd;
			return 0;
		}
	r = make_idmap_userns(owner, owner_gid, uid, gid, &fd);
	if (r < 0)
		return r;
	slot = idmap_cache_next++ % ELEMENTSOF(idmap_cache);
	if (idmap_cache[slot].fd >= 0)
		(void)close(idmap_cache[slot].fd);
	idmap_cache[slot].owner = owner;
	idmap_cache[slot].owner_gid = owner_gid;
	idmap_cache[slot].uid = uid;
	idmap_cache[slot].gid = gid;
	idmap_cache[slot].fd = fd;
	*ret_fd = fd;
	return 0;
}

static int open_beneath_ceiling(const struct cordon_profile *p, const char *host, int *ret_fd, struct cordon_diag *d)
{
	struct stat want;

	if (!path_is_absolute_canonical(host))
		return cordon_diag_set(d, EINVAL, "root", "root '%s' is not an absolute canonical path", host);
	if (stat(host, &want) < 0)
		return cordon_diag_set(d, errno, "root", "root '%s': %m", host);
	for (size_t i = 0; i < p->n_ceiling; i++) {
		_cleanup_close_ int cfd = -EBADF, fd = -EBADF;
		struct open_how how = {
		    .flags = O_PATH | O_CLOEXEC,
		    .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS,
		};
		const char *rel;
		struct stat st;
		size_t n = strlen(p->ceiling[i]);

		/* The component-wise prefix only picks the relative part to
		 * resolve; the decision is openat2's and the dev/ino check. */
		if (!path_is_beneath(host, p->ceiling[i]))
			continue;
		rel = host + (strcmp(p->ceiling[i], "/") == 0 ? 1 : n);
		while (*rel == '/')
			rel++;
		if (*rel == '\0')
			rel = ".";
		cfd = open(p->ceiling[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (cfd < 0)
			continue;
		fd = sys_openat2(cfd, rel, &how, sizeof(how));
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 || st.st_dev != want.st_dev || st.st_ino != want.st_ino)
			continue;
		*ret_fd = TAKE_FD(fd);
		return 0;
	}
	return cordon_diag_set(d, EPERM, "root", "root '%s' is not beneath the profile's ceiling", host);
}

int cordon_spawn_check_beneath_ceiling(const struct cordon_profile *p, const char *host,
				       struct cordon_diag *reterr_diag)
{
	_cleanup_close_ int fd = -EBADF;

	return open_beneath_ceiling(p, host, &fd, reterr_diag);
}

static bool at_is_reserved(const char *at)
{
	static const char *const reserved[] = {"/proc", "/dev", "/tmp"};

	if (strcmp(at, "/") == 0)
		return true;
	for (size_t i = 0; i < ELEMENTSOF(reserved); i++)
		if (path_is_beneath(at, reserved[i]))
			return true;
	return false;
}

static int add_mount(struct spawn_ctx *c, const struct cordon_fs_entry *e, bool is_root, bool extra,
		     const struct cordon_profile *p, bool fs_view, struct cordon_diag *d)
{
	struct mount_item *m, *nm;
	const char *at = e->at ? e->at : e->path;
	struct stat st;
	int r;

	if (!path_is_absolute_canonical(e->path) || !path_is_absolute_canonical(at))
		return cordon_diag_set(d, EINVAL, "policy", "path '%s' (at '%s') is not absolute and canonical",
				       e->path, at);
	if (at_is_reserved(at))
		return cordon_diag_set(d, EINVAL, "policy", "'%s' cannot be mounted at '%s' (reserved by cordon)",
				       e->path, at);
	if (!fs_view && strcmp(at, e->path) != 0)
		return cordon_diag_set(d, EOPNOTSUPP, "namespaces",
				       "'%s' should appear at '%s' but there is no mount namespace", e->path, at);
	for (size_t i = 0; i < c->n_mounts; i++)
		if (strcmp(c->mounts[i].at, at) == 0)
			return cordon_diag_set(d, EEXIST, "policy", "two entries are mounted at '%s'", at);

	nm = realloc(c->mounts, (c->n_mounts + 1) * sizeof(*c->mounts));
	if (!nm)
		return -ENOMEM;
	c->mounts = nm;
	m = &c->mounts[c->n_mounts];
	*m = (struct mount_item){.access = e->access, .path_fd = -EBADF, .tree_fd = -EBADF};
	m->at = strdup(at);
	m->host = strdup(e->path);
	c->n_mounts++;
	if (!m->at || !m->host)
		return -ENOMEM;

	if (!is_root && lstat(e->path, &st) == 0 && S_ISLNK(st.st_mode)) {
		/* A system path that is a symlink (merged /usr: /bin, /lib, /lib64)
		 * becomes the same symlink inside the sandbox; its target must
		 * be mounted by another entry. */
		char target[PATH_MAX];
		ssize_t n = readlink(e->path, target, sizeof(target) - 1);

		if (n < 0)
			return cordon_diag_set(d, errno, "mount", "readlink %s: %m", e->path);
		target[n] = '\0';
		if (!fs_view)
			return 0;
		m->symlink = strdup(target);
		return m->symlink ? 0 : -ENOMEM;
	}

	if (extra) {
		r = open_beneath_ceiling(p, e->path, &m->path_fd, d);
		if (r < 0)
			return r;
	} else {
		struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS};

		/* Roots name data a user may control: no symlink anywhere on
		 * the way. System paths are the operator's (/usr, certs). */
		if (is_root)
			how.resolve |= RESOLVE_NO_SYMLINKS;
		m->path_fd = sys_openat2(AT_FDCWD, e->path, &how, sizeof(how));
		if (m->path_fd < 0 && errno == ENOSYS)
			m->path_fd = open(e->path, O_PATH | O_CLOEXEC | (is_root ? O_NOFOLLOW : 0));
		if (m->path_fd < 0)
			return cordon_diag_set(d, errno, "mount", "cannot open %s '%s': %m",
					       is_root ? "root" : "system path", e->path);
	}
	if (fstat(m->path_fd, &st) < 0)
		return cordon_diag_set(d, errno, "mount", "fstat %s: %m", e->path);
	m->is_dir = S_ISDIR(st.st_mode);
	m->owner_uid = st.st_uid;
	m->owner_gid = st.st_gid;
	if (!m->is_dir && !S_ISREG(st.st_mode))
		return cordon_diag_set(d, EINVAL, "mount", "'%s' is neither a directory nor a regular file", e->path);
	/* A read-write root is id-mapped to its owner: owned by uid 0, the
	 * connector would act as uid 0 for every file in it (issue 11,
	 * finding 1). Refused unless the profile's entry says so explicitly
	 * (allow_uid0_owner); delegated roots are approved one by one by the
	 * operator and are not checked here. The seccomp rules keep setuid
	 * and setgid bits, devices and security xattrs out either way. */
	if (e->access == CORDON_ACCESS_READ_WRITE && is_root && !extra && st.st_uid == 0 && !e->allow_uid0_owner)
		return cordon_diag_set(d, EPERM, "policy",
				       "read-write root '%s' is owned by uid 0: the connector would act as uid 0 "
				       "there; give it an unprivileged owner or set allow_uid0_owner: true",
				       e->path);
	if (e->access == CORDON_ACCESS_READ_WRITE && (st.st_uid != c->uid || st.st_gid != c->gid))
		m->idmapped = true;
	if (!fs_view) {
		if (m->idmapped)
			return cordon_diag_set(
			    d, EOPNOTSUPP, "namespaces",
			    "read-write root '%s' needs an id-mapped mount, which needs a mount namespace", e->path);
		return 0;
	}

	{
		struct mount_attr attr = {0};
		int userns = -EBADF; /* borrowed from the cache */
		unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH;

		/* Read-only trees keep their submounts (all made read-only);
		 * a read-write root is exactly the one mount, which also keeps
		 * id-mapping to a single filesystem. */
		if (e->access != CORDON_ACCESS_READ_WRITE)
			flags |= AT_RECURSIVE;
		m->tree_fd = open_tree(m->path_fd, "", flags);
		if (m->tree_fd < 0)
			return cordon_diag_set(d, errno, "mount", "open_tree(%s): %m", e->path);
		switch (e->access) {
		case CORDON_ACCESS_READ:
			attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
			break;
		case CORDON_ACCESS_READ_EXEC:
			attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
			break;
		case CORDON_ACCESS_READ_WRITE:
			attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
			break;
		}
		if (mount_setattr(m->tree_fd, "", AT_EMPTY_PATH | (flags & AT_RECURSIVE), &attr, sizeof(attr)) < 0)
			return cordon_diag_set(d, errno, "mount", "mount_setattr(%s): %m", e->path);
		if (m->idmapped) {
			r = idmap_userns_cached(st.st_uid, st.st_gid, c->uid, c->gid, &userns);
			if (r < 0)
				return cordon_diag_set(d, -r, "idmap", "user namespace for the id-mapped root '%s': %s",
						       e->path, strerror(-r));
			attr = (struct mount_attr){.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
			if (mount_setattr(m->tree_fd, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
				return cordon_diag_set(d, errno, "idmap",
						       "id-mapped mount of '%s' (owner %u) for uid %u: %m", e->path,
						       (unsigned)st.st_uid, (unsigned)c->uid);
		}
	}
	return 0;
}

static int cmp_mount(const void *a, const void *b)
{
	return strcmp(((const struct mount_item *)a)->at, ((const struct mount_item *)b)->at);
}

/* Decides every control's state; refuses when a required one is missing. */
/* Fixed for the life of the kernel: read once per process. */
static int cap_last_cap(void)
{
	static int cached = -1;
	char buf[16];
	uint64_t v;
	int last = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (last >= 0)
		return last;
	if (read_small_file("/proc/sys/kernel/cap_last_cap", buf, sizeof(buf)) > 0 && parse_u64(buf, &v) >= 0 && v < 64)
		last = (int)v;
	else
		return 63; /* PR_CAPBSET_DROP answers EINVAL above the last one */
	__atomic_store_n(&cached, last, __ATOMIC_RELAXED);
	return last;
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
		struct cordon_diag nd = {0};

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
	return spawn_decide_plan(pol->profile, caps, &c->plan, d);
}

/* Step 2: user and environment. */
static int prepare_user_env(const struct cordon_launch_policy *pol, struct spawn_ctx *c, struct cordon_diag *d)
{
	int r;

	/* 2. User and environment. */
	r = resolve_user(pol->profile, c, d);
	if (r < 0)
		return r;
	r = build_env(pol, c, d);
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
		if ((r = add_mount(c, &p->fs_system[i], false, false, p, fs_view, d)) < 0)
			return r;
	}
	for (size_t i = 0; i < p->n_fs_roots; i++)
		if ((r = add_mount(c, &p->fs_roots[i], true, false, p, fs_view, d)) < 0)
			return r;
	for (size_t i = 0; i < pol->n_extra_roots; i++)
		if ((r = add_mount(c, &pol->extra_roots[i], true, true, p, fs_view, d)) < 0)
			return r;
	qsort(c->mounts, c->n_mounts, sizeof(*c->mounts), cmp_mount);
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
		struct cordon_cgroup_limits lim = {p->mem_bytes, p->pids_max, p->cpu_micro};
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
		r = cordon_cgroup_create_ex(caps, c->group, c->instance_name, &lim, required, CORDON_CGROUP_DEFER_V1,
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
	c->netns_fd = (c->plan.ns_effective & CLONE_NEWNET) ? spare_netns_take() : -EBADF;
	*a = (struct child_args){
	    .ruleset_fd = c->ruleset_fd,
	    .ll_handled = c->plan.ll_effective,
	    .landlock = c->ruleset_fd >= 0,
	    .seccomp = c->seccomp,
	    /* A profile that denies clone would stop init from starting the
	     * connector under the filter: then the connector loads it itself. */
	    .seccomp_in_init = c->seccomp && !strv_has(p->seccomp_deny, p->n_seccomp_deny, "clone"),
	    .cg = c->cg,
	    /* Pure cgroup2 with clone3 placement: nothing to move, the child
	     * only verifies (a read). Otherwise the parent migrates it. */
	    .cg_enter = caps->cgroup_layout == CORDON_CGROUP_V2 && caps->clone_into_cgroup && cgfd >= 0,
	    .mounts = c->mounts,
	    .n_mounts = c->n_mounts,
	    .fs_view = fs_view,
	    .mntns_fd = fs_view ? mntns_base_get() : -EBADF,
	    .net_ns = c->plan.ns_effective & CLONE_NEWNET,
	    .netns_fd = c->netns_fd,
	    .uts_ns = c->plan.ns_effective & CLONE_NEWUTS,
	    .workdir = p->workdir,
	    .argv = argv,
	    .envp = c->envp,
	    .uid = c->uid,
	    .gid = c->gid,
	    .nofile = p->nofile,
	    .cap_last = cap_last_cap(),
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
		struct sync_msg go = {.kind = MSG_GO};

		if (send(c->sync[0], &go, sizeof(go), MSG_NOSIGNAL) != (ssize_t)sizeof(go))
			return cordon_diag_set(d, errno ? errno : EPIPE, "sync",
					       "the sandbox's init went away before start");
	}
	/* The launcher now only waits for the connector's execve: make the
	 * next spawn's network namespace meanwhile. */
	if (c->plan.ns_effective & CLONE_NEWNET)
		spare_netns_make();

	{
		struct sync_msg m;
		ssize_t n;

		/* Bounded: a sandbox that neither starts nor fails (a child
		 * stuck in the kernel, an exec that never returns) is killed
		 * rather than hanging the launcher. */
		struct pollfd pf = {.fd = c->sync[0], .events = POLLIN};
		int pr;

		do
			pr = poll(&pf, 1, SPAWN_TIMEOUT_MSEC);
		while (pr < 0 && errno == EINTR);
		if (pr == 0)
			return cordon_diag_set(d, ETIMEDOUT, "init", "the sandbox did not start within %d s",
					       SPAWN_TIMEOUT_MSEC / 1000);
		do
			n = recv(c->sync[0], &m, sizeof(m), MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
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
		memcpy(c->ct, m.t, sizeof(c->ct));
	}
	return 0;
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
	    .pipes = {{-EBADF, -EBADF}, {-EBADF, -EBADF}, {-EBADF, -EBADF}},
	    .sync = {-EBADF, -EBADF},
	    .pidfd = -EBADF,
	    .netns_fd = -EBADF,
	};
	struct cordon_diag dummy;
	struct cordon_diag *d = reterr_diag ? reterr_diag : &dummy;
	struct child_args a;
	char *const *argv = NULL;
	int r, cgfd = -EBADF;

	r = validate_policy(pol, caps, ret, &c, &argv, d);
	if (r < 0)
		return r;

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
	r = place_in_cgroups(caps, &c, &a, d);
	if (r < 0)
		goto fail;
	c.t[3] = spawn_mono_usec();
	r = attach_egress(pol->profile, &c, cgfd, d);
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
	siginfo_t si = {0};
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

	ex = json_pack("{s:s, s:i, s:i}", "how", WIFEXITED(st) ? "exited" : "signaled",
		       WIFEXITED(st) ? "code" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), "shell_code",
		       cordon_exit_code(st));
	json_object_set_new(inst->report, "exit", ex);
	if (inst->cg) {
		struct cordon_cgroup_stats cs = {0};

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
	if (inst->cg)
		(void)cordon_cgroup_destroy(inst->cg);
	if (inst->np_att)
		(void)cordon_netpolicy_detach(inst->np, inst->np_att);
	close_reset(&inst->pidfd);
	close_reset(&inst->sync_fd);
	for (int i = 0; i < 3; i++)
		close_reset(&inst->stdio[i]);
	close_reset(&inst->uid_lock_fd);
	json_decref(inst->report);
	free(inst);
}

void cordon_spawn_drop_caches(void)
{
	if (spare_netns_fd >= 0 && spare_netns_pid == getpid())
		(void)close(TAKE_FD(spare_netns_fd));
	if (mntns_base_fd >= 0 && mntns_base_pid == getpid())
		(void)close(TAKE_FD(mntns_base_fd));
	for (size_t i = 0; i < ELEMENTSOF(idmap_cache); i++)
		if (idmap_cache[i].fd >= 0)
			(void)close(TAKE_FD(idmap_cache[i].fd));
}
