/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cordon_spawn(): one connector instance in its sandbox.
 *
 * PARENT (the launcher, privileged, may allocate and log nothing):
 *  1. Validate the policy and decide the plan against the capability struct.
 *     A control in `require` that the kernel lacks refuses the launch here,
 *     before anything is created, so a refusal leaves nothing behind.
 *  2. Allocate the sandbox uid (a locked number in a documented range) and
 *     build the environment (env.pass, env.set, credentials read here: the
 *     child never opens a credential file).
 *  3. Open every host path and clone it as a detached mount (open_tree) with
 *     its final flags (read-only/nosuid/nodev/noexec, id-mapped for
 *     read-write roots owned by someone else). Doing this in the parent, in
 *     the host mount namespace, means the child binds exactly the inode that
 *     was checked (no path lookup by a later, less privileged step, no
 *     symlink race) and the child never has to see host paths.
 *  4. Landlock ruleset from the same O_PATH fds (rules are per inode, so the
 *     bind mounts inside the sandbox are covered) and the TCP port rules.
 *  5. Seccomp program compiled once per policy (cached) and only loaded later.
 *  6. Cgroup: the cgroup2 directory with its limits, BEFORE the child
 *     exists, so the connector never runs a single instruction unlimited.
 *     With the eBPF egress policy it is made inside this launcher's group,
 *     whose programs were attached once (attaching eight programs per
 *     instance, and detaching them, was the costliest part of a spawn);
 *     the instance's allowlist entries are written here. Until it has
 *     entries a cgroup below the group is denied everything.
 *  7. CLOEXEC sync socket, then clone3(CLONE_INTO_CGROUP | CLONE_PIDFD |
 *     CLONE_NEW{PID,IPC,UTS,CGROUP}, and NS unless the base mount namespace
 *     is used: then the child copies that one, step d): the child starts inside its cgroup2
 *     directory and namespaces atomically. No user namespace: the launcher
 *     is real root, so it can give the connector a real unprivileged host
 *     uid, which is what the rest of the host's permission checks understand.
 *  8. While the child builds its sandbox: on hybrid/v1 hosts make the v1
 *     directories with their limits and move the child into them (each
 *     move waits for an RCU grace period; all of it overlaps the child's
 *     work), attach the eBPF egress policy to the instance's cgroup2
 *     directory when there is no group (the fallback), then MSG_GO. Init
 *     starts the connector only after MSG_GO, so limits and policy are in
 *     place before the connector's first instruction. While waiting for
 *     the connector's execve, make a spare network namespace (lo up) for
 *     the next spawn (the launcher is idle then; see c.).
 *
 * CHILD = the sandbox's init, pid 1 of the new pid namespace (async-signal-
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
#include "spawn-internal.h"
#include "strv.h"
#include "syscall-compat.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* The new root is assembled on a tmpfs mounted here, in the child's own mount
 * namespace (the host's /tmp is untouched; host paths were cloned before). */
#define NEWROOT "/tmp"

#define CREDENTIAL_MAX_BYTES (64 * 1024)
#define SPAWN_TIMEOUT_MSEC   30000
#define MAX_ENV		     1024

enum {
	MSG_DIAG = 1,	/* setup failed; diag says where */
	MSG_EXECED = 2, /* the connector's execve succeeded */
	MSG_EXIT = 3,	/* the connector ended; status is its wait status */
	MSG_GO = 4,	/* parent -> init: everything outside is in place, start the connector */
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
	bool seccomp_in_init; /* init loads it before starting the connector, which inherits it */
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
/* Child side: async-signal-safe helpers only.                               */

static size_t s_len(const char *s)
{
	size_t n = 0;

	while (s && s[n])
		n++;
	return n;
}

static void s_cat(char *dst, size_t size, const char *src)
{
	size_t n = s_len(dst);

	while (src && *src && n + 1 < size)
		dst[n++] = *src++;
	dst[n] = '\0';
}

static void s_cpy(char *dst, size_t size, const char *src)
{
	dst[0] = '\0';
	s_cat(dst, size, src);
}

/* dst = a + b; false when it does not fit. */
static bool s_join(char *dst, size_t size, const char *a, const char *b)
{
	if (s_len(a) + s_len(b) + 1 > size)
		return false;
	s_cpy(dst, size, a);
	s_cat(dst, size, b);
	return true;
}

static void fill_diag(struct cordon_diag *d, const char *step, int err, const char *msg, const char *arg)
{
	memset(d, 0, sizeof(*d));
	d->error = err > 0 ? err : EIO;
	s_cpy(d->step, sizeof(d->step), step);
	s_cpy(d->message, sizeof(d->message), msg);
	if (arg) {
		s_cat(d->message, sizeof(d->message), " ");
		s_cat(d->message, sizeof(d->message), arg);
	}
}

static _noreturn_ void child_fail(int fd, const char *step, int err, const char *msg, const char *arg)
{
	struct sync_msg m = {.kind = MSG_DIAG};

	fill_diag(&m.diag, step, err, msg, arg);
	(void)send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	_exit(127);
}

static const struct child_args *connector_args;
static uint64_t child_t[_CT_MAX]; /* shared with the connector until its execve (CLONE_VM) */

static uint64_t mono_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static struct sync_msg connector_diag;
static char connector_stack[65536] __attribute__((aligned(64)));

/* The connector runs on connector_stack until execve: ASan's no-return
 * bookkeeping would see a foreign stack and warn on stderr (the connector's
 * stderr), so these functions are not instrumented. */
#define _connector_ __attribute__((no_sanitize_address))

static _connector_ _noreturn_ void connector_fail(const char *step, int err, const char *msg, const char *arg)
{
	fill_diag(&connector_diag.diag, step, err, msg, arg);
	connector_diag.kind = MSG_DIAG;
	_exit(127);
}

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = s_len(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	s_cpy(buf, sizeof(buf), path);
	/* The whole path first: its parent usually exists (one call instead
	 * of one per component). On ENOENT, back up one component at a time,
	 * then come forward again restoring each '/'. */
	for (;;) {
		size_t len;

		if (mkdir(buf, mode) < 0) {
			if (errno == ENOENT) {
				char *slash = strrchr(buf, '/');

				if (!slash || slash == buf)
					return -ENOENT;
				*slash = '\0';
				continue;
			}
			if (errno != EEXIST)
				return -errno;
		}
		len = s_len(buf);
		if (len >= n)
			return 0;
		buf[len] = '/';
	}
}

/* Creates the mount point for `at` beneath NEWROOT: a directory, or an empty
 * file for a file bind. */
static int make_mount_point(const char *target, bool is_dir)
{
	char parent[PATH_MAX];
	size_t n;
	int fd;

	if (is_dir)
		return mkdir_p(target, 0755);
	s_cpy(parent, sizeof(parent), target);
	n = s_len(parent);
	while (n > 0 && parent[n - 1] != '/')
		n--;
	if (n > 1)
		parent[n - 1] = '\0';
	if (n > 1) {
		int r = mkdir_p(parent, 0755);

		if (r < 0)
			return r;
	}
	fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return errno == EEXIST ? 0 : -errno;
	(void)close(fd);
	return 0;
}

static void child_net_lo_up(int sync_fd)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		child_fail(sync_fd, "network", errno, "socket for lo:", strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	s_cpy(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		child_fail(sync_fd, "network", errno, "SIOCGIFFLAGS lo", NULL);
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		child_fail(sync_fd, "network", errno, "bringing lo up", NULL);
	(void)close(fd);
}

static void child_mounts(const struct child_args *a)
{
	static const struct {
		const char *name;
		unsigned minor;
	} devs[] = {{"null", 3}, {"zero", 5}, {"full", 7}, {"random", 8}, {"urandom", 9}};
	static const char *const links[][2] = {
	    {"fd", "/proc/self/fd"},
	    {"stdin", "/proc/self/fd/0"},
	    {"stdout", "/proc/self/fd/1"},
	    {"stderr", "/proc/self/fd/2"},
	};
	char p[PATH_MAX], q[PATH_MAX];
	int fd = a->sync_fd, r;
	mode_t old_umask;

	if (a->mntns_fd >= 0) {
		/* A private copy of the base namespace: one empty read-only
		 * mount instead of the host's whole tree, so there is no old
		 * root to unmount at the end (that unmount waits for an RCU
		 * grace period, ~0.35 ms). Private already: nothing
		 * propagates to the host or to another sandbox. */
		if (setns(a->mntns_fd, CLONE_NEWNS) < 0)
			child_fail(fd, "mount", errno, "entering the base mount namespace", NULL);
		(void)close(a->mntns_fd);
		if (unshare(CLONE_NEWNS) < 0)
			child_fail(fd, "mount", errno, "unshare of the mount namespace", NULL);
	} else if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		/* Nothing we mount may propagate back to the host. */
		child_fail(fd, "mount", errno, "making / private", NULL);
	}
	if (mount("cordon-root", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") < 0)
		child_fail(fd, "mount", errno, "tmpfs for the new root", NULL);

	/* Sorted by `at` in the parent: a parent directory is mounted before
	 * anything beneath it. */
	for (size_t i = 0; i < a->n_mounts; i++) {
		const struct mount_item *m = &a->mounts[i];

		if (!s_join(p, sizeof(p), NEWROOT, m->at))
			child_fail(fd, "mount", ENAMETOOLONG, "path too long:", m->at);
		if (m->symlink) {
			r = make_mount_point(p, true);
			/* the symlink itself replaces the last directory made */
			if (r >= 0 && rmdir(p) < 0)
				r = -errno;
			if (r >= 0 && symlink(m->symlink, p) < 0)
				r = -errno;
			if (r < 0)
				child_fail(fd, "mount", -r, "symlink", m->at);
			continue;
		}
		r = make_mount_point(p, m->is_dir);
		if (r < 0)
			child_fail(fd, "mount", -r, "creating mount point", m->at);
		if (move_mount(m->tree_fd, "", AT_FDCWD, p, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			child_fail(fd, "mount", errno, "bind mount of", m->at);
	}

	/* /proc of this pid namespace only. */
	if (!s_join(p, sizeof(p), NEWROOT, "/proc") || mkdir_p(p, 0555) < 0)
		child_fail(fd, "mount", errno, "mkdir", "/proc");
	if (mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible,subset=pid") < 0)
		child_fail(fd, "mount", errno, "proc", NULL);

	/* Minimal /dev: five harmless character devices and a private shm. */
	if (!s_join(p, sizeof(p), NEWROOT, "/dev") || mkdir_p(p, 0755) < 0)
		child_fail(fd, "mount", errno, "mkdir", "/dev");
	if (mount("cordon-dev", p, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") < 0)
		child_fail(fd, "mount", errno, "tmpfs for", "/dev");
	/* Device nodes are made, not bind-mounted: we are real root in the
	 * host user namespace, and five mknod() cost a fraction of ten mount
	 * calls. Only these five exist; the tmpfs becomes read-only below. */
	/* mknod honours the umask and the modes must be exact: no umask
	 * while making them (restored at once: the connector inherits it). */
	old_umask = umask(0);
	for (size_t i = 0; i < ELEMENTSOF(devs); i++) {
		s_join(q, sizeof(q), p, "/");
		s_cat(q, sizeof(q), devs[i].name);
		if (mknod(q, S_IFCHR | 0666, makedev(1, devs[i].minor)) < 0)
			child_fail(fd, "mount", errno, "mknod /dev/", devs[i].name);
	}
	(void)umask(old_umask);
	for (size_t i = 0; i < ELEMENTSOF(links); i++) {
		s_join(q, sizeof(q), p, "/");
		s_cat(q, sizeof(q), links[i][0]);
		if (symlink(links[i][1], q) < 0)
			child_fail(fd, "mount", errno, "symlink /dev/", links[i][0]);
	}
	s_join(q, sizeof(q), p, "/shm");
	if (mkdir(q, 01777) < 0)
		child_fail(fd, "mount", errno, "mkdir", "/dev/shm");
	if (mount("cordon-shm", q, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, a->shm_opts) < 0)
		child_fail(fd, "mount", errno, "tmpfs for", "/dev/shm");
	if (mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC, NULL) < 0)
		child_fail(fd, "mount", errno, "remount read-only of", "/dev");

	/* Private /tmp of the profile's size. */
	if (!s_join(p, sizeof(p), NEWROOT, "/tmp") || mkdir_p(p, 01777) < 0)
		child_fail(fd, "mount", errno, "mkdir", "/tmp");
	if (mount("cordon-tmp", p, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, a->tmp_opts) < 0)
		child_fail(fd, "mount", errno, "tmpfs for", "/tmp");

	if (chdir(NEWROOT) < 0)
		child_fail(fd, "pivot_root", errno, "chdir to the new root", NULL);
	if (a->mntns_fd >= 0) {
		/* The new root is moved over the base root (as switch_root
		 * does) and becomes ours. The base mount stays beneath it:
		 * empty, read-only, unreachable from the new root and absent
		 * from mountinfo; the kernel counts the new root as the
		 * namespace root (not a chroot: it follows the mounts down). */
		if (mount(".", "/", NULL, MS_MOVE, NULL) < 0)
			child_fail(fd, "pivot_root", errno, "moving the new root over the base", NULL);
		if (chroot(".") < 0)
			child_fail(fd, "pivot_root", errno, "chroot to the new root", NULL);
	} else {
		/* pivot_root(".", ".") stacks the old root on top of the new
		 * one; the lazy unmount then detaches it without needing a
		 * directory for it. */
		if (syscall(SYS_pivot_root, ".", ".") < 0)
			child_fail(fd, "pivot_root", errno, "pivot_root", NULL);
		if (umount2(".", MNT_DETACH) < 0)
			child_fail(fd, "pivot_root", errno, "detaching the old root", NULL);
	}
	if (chdir("/") < 0)
		child_fail(fd, "pivot_root", errno, "chdir /", NULL);
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
		child_fail(fd, "mount", errno, "remounting / read-only", NULL);
}

static void sort_ints(int *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			int t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

/* close_range(), or on kernels before 5.9 a close() per possible fd (bounded
 * by RLIMIT_NOFILE, at most 1 << 20). */
static int close_span(unsigned first, unsigned last)
{
	struct rlimit rl;
	unsigned max;

	if (sys_close_range(first, last, 0) == 0)
		return 0;
	if (errno != ENOSYS)
		return -errno;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	max = rl.rlim_cur > (1u << 20) ? (1u << 20) : (unsigned)rl.rlim_cur;
	for (unsigned fd = first; fd <= last && fd < max; fd++)
		(void)close((int)fd);
	return 0;
}

/* Closes every fd >= 3 except those in keep. */
static int close_all_but(const int *keep_in, size_t n_keep)
{
	int keep[64];
	size_t n = 0;
	unsigned next = 3;
	int r;

	for (size_t i = 0; i < n_keep && n < ELEMENTSOF(keep); i++)
		if (keep_in[i] >= 3)
			keep[n++] = keep_in[i];
	if (n < n_keep && n == ELEMENTSOF(keep))
		return -E2BIG;
	sort_ints(keep, n);
	for (size_t i = 0; i < n; i++) {
		if ((unsigned)keep[i] > next && (r = close_span(next, (unsigned)keep[i] - 1)) < 0)
			return r;
		if ((unsigned)keep[i] + 1 > next)
			next = (unsigned)keep[i] + 1;
	}
	return close_span(next, ~0U);
}

static void child_drop_privileges(const struct child_args *a)
{
	int fd = a->sync_fd;

	/* Bounding set first: dropping from it needs CAP_SETPCAP, which the uid
	 * change below takes away. Done with prctl() directly: libcap-ng's
	 * bounding-set path rereads /proc through stdio, which is not
	 * async-signal-safe. */
	for (int cap = 0; cap <= a->cap_last; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			child_fail(fd, "capabilities", errno, "clearing the bounding set", NULL);
	/* Locked securebits: no way back to root semantics for this process
	 * tree (no root-gets-all-caps on exec, no keep-caps, no ambient). The
	 * setuid fixup stays on (and locked) so the uid change below really
	 * clears the permitted set. */
	if (prctl(PR_SET_SECUREBITS,
		  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
		      SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
		  0, 0, 0) < 0)
		child_fail(fd, "capabilities", errno, "locking securebits", NULL);
	if (setgroups(0, NULL) < 0)
		child_fail(fd, "user", errno, "clearing supplementary groups", NULL);
	if (setresgid(a->gid, a->gid, a->gid) < 0)
		child_fail(fd, "user", errno, "setresgid", NULL);
	if (setresuid(a->uid, a->uid, a->uid) < 0)
		child_fail(fd, "user", errno, "setresuid", NULL);
	/* libcap-ng's state was inherited from the parent: aim it at this
	 * process, clear it, apply (capset with empty E, P, I). */
	capng_setpid((int)getpid());
	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_apply(CAPNG_SELECT_CAPS) < 0)
		child_fail(fd, "capabilities", errno, "clearing capability sets (libcap-ng)", NULL);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		child_fail(fd, "capabilities", errno, "clearing the ambient set", NULL);
}

/* Checks the parent (launcher) still holds its end of the sync socket. */
static void child_check_parent(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)))
		_exit(127);
}

static void child_landlock(const struct child_args *a)
{
	static const char *const devs[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};
	const struct cordon_landlock_masks *h = &a->ll_handled;
	int fd = a->sync_fd, r = 0;

	if (a->fs_view) {
		uint64_t rw = cordon_landlock_fs_access(CORDON_ACCESS_READ_WRITE);
		uint64_t ro = cordon_landlock_fs_access(CORDON_ACCESS_READ);

		if ((r = cordon_landlock_allow_path(a->ruleset_fd, h, "/tmp", rw)) < 0 ||
		    (r = cordon_landlock_allow_path(a->ruleset_fd, h, "/dev/shm", rw)) < 0 ||
		    (r = cordon_landlock_allow_path(a->ruleset_fd, h, "/dev", ro)) < 0 ||
		    (r = cordon_landlock_allow_path(a->ruleset_fd, h, "/proc", ro)) < 0)
			child_fail(fd, "landlock", -r, "rule for a sandbox mount", NULL);
	} else {
		/* Host view (no mount namespace): the connector still needs its
		 * own /proc entries and the device nodes. */
		if ((r = cordon_landlock_allow_path(a->ruleset_fd, h, "/proc",
						    cordon_landlock_fs_access(CORDON_ACCESS_READ))) < 0)
			child_fail(fd, "landlock", -r, "rule for /proc", NULL);
	}
	for (size_t i = 0; i < ELEMENTSOF(devs); i++)
		if ((r = cordon_landlock_allow_path(a->ruleset_fd, h, devs[i], cordon_landlock_fs_dev_node())) < 0)
			child_fail(fd, "landlock", -r, "rule for", devs[i]);
	r = cordon_landlock_restrict(a->ruleset_fd);
	if (r < 0)
		child_fail(fd, "landlock", -r, "landlock_restrict_self", NULL);
	(void)close(a->ruleset_fd);
}

/* Finds "\n<key>:\t<value>\n" in a /proc status buffer. */
static bool status_has(const char *buf, const char *key, const char *value)
{
	char needle[64];

	s_cpy(needle, sizeof(needle), "\n");
	s_cat(needle, sizeof(needle), key);
	s_cat(needle, sizeof(needle), ":\t");
	s_cat(needle, sizeof(needle), value);
	s_cat(needle, sizeof(needle), "\n");
	return strstr(buf, needle) != NULL;
}

/* Reads back what this process really has; any mismatch is a setup failure. */
static _connector_ void connector_verify(const struct child_args *a)
{
	static const char *const capsets[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};
	char buf[8192];
	ssize_t n;
	int sfd;

	sfd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (sfd < 0)
		connector_fail("verify", errno, "cannot open /proc/self/status", NULL);
	buf[0] = '\n';
	n = read(sfd, buf + 1, sizeof(buf) - 2);
	(void)close(sfd);
	if (n <= 0)
		connector_fail("verify", n < 0 ? errno : EIO, "cannot read /proc/self/status", NULL);
	buf[n + 1] = '\0';

	if (!status_has(buf, "NoNewPrivs", "1"))
		connector_fail("verify", EPERM, "NoNewPrivs is not 1", NULL);
	for (size_t i = 0; i < ELEMENTSOF(capsets); i++)
		if (!status_has(buf, capsets[i], "0000000000000000"))
			connector_fail("verify", EPERM, "capability set not empty:", capsets[i]);
	if (a->seccomp && !status_has(buf, "Seccomp", "2"))
		connector_fail("verify", EPERM, "Seccomp is not 2 (filter)", NULL);
	if (a->landlock) {
		/* Nothing grants READ_DIR on "/" itself: with the domain in
		 * place, listing it must fail with EACCES. */
		int rfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (rfd >= 0 || errno != EACCES)
			connector_fail("verify", EPERM, "Landlock domain not in effect", NULL);
	}
	if (getuid() != a->uid || geteuid() != a->uid || getgid() != a->gid || getegid() != a->gid)
		connector_fail("verify", EPERM, "uid/gid not the sandbox user", NULL);
}

static volatile pid_t init_connector_pid;

static void init_forward(int sig)
{
	pid_t pid = init_connector_pid;

	if (pid > 0)
		(void)kill(pid, sig);
}

static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

/* l. The connector: runs on its own stack in init's memory until execve. */
static _connector_ int connector_main(void *unused)
{
	const struct child_args *a = connector_args;
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigset_t none;
	int r;

	(void)unused;
	sigemptyset(&none);
	(void)close(a->sync_fd);
	for (size_t i = 0; i < ELEMENTSOF(forwarded); i++)
		(void)sigaction(forwarded[i], &dfl, NULL);
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (a->seccomp && !a->seccomp_in_init) {
		r = cordon_seccomp_load(a->seccomp);
		if (r < 0)
			connector_fail("seccomp", -r, "loading the filter", NULL);
	}
	child_t[CT_SECCOMP] = mono_usec();
	connector_verify(a);
	child_t[CT_VERIFY] = mono_usec();
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	execve(a->argv[0], a->argv, a->envp);
	connector_fail("exec", errno, "execve", a->argv[0]);
}

static _noreturn_ void child_main(const struct child_args *a)
{
	struct sigaction sa = {.sa_handler = SIG_DFL};
	int fd = a->sync_fd, r;
	sigset_t all, none;
	int keep[70];
	size_t n_keep = 0;
	pid_t pid;

	child_t[CT_START] = mono_usec();
	/* Nothing of the launcher's signal dispositions or mask survives. */
	sigfillset(&all);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &all, NULL);
	for (int s = 1; s < NSIG; s++)
		(void)sigaction(s, &sa, NULL);

	/* a. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(fd, "pdeathsig", errno, "PR_SET_PDEATHSIG", NULL);
	child_check_parent(fd);

	/* stdio first, so everything below sees the connector's fds 0-2. */
	{
		int hi[3];

		for (int i = 0; i < 3; i++) {
			hi[i] = fcntl(a->stdio[i], F_DUPFD_CLOEXEC, 3);
			if (hi[i] < 0)
				child_fail(fd, "stdio", errno, "dup", NULL);
		}
		for (int i = 0; i < 3; i++)
			if (dup2(hi[i], i) < 0)
				child_fail(fd, "stdio", errno, "dup2", NULL);
		for (int i = 0; i < 3; i++)
			(void)close(hi[i]);
	}

	/* b. (On hybrid/v1 hosts the parent moves us, overlapping the v1
	 * migration's RCU wait with the work below; see the parent.) */
	if (a->cg && a->cg_enter) {
		r = cordon_cgroup_enter(a->cg);
		if (r < 0)
			child_fail(fd, "cgroup", -r, "joining the instance cgroup", NULL);
	}

	/* c. */
	if (a->net_ns) {
		if (a->netns_fd >= 0) {
			/* lo is already up (spare_netns_make). */
			if (setns(a->netns_fd, CLONE_NEWNET) < 0)
				child_fail(fd, "network", errno, "entering the new network namespace", NULL);
			(void)close(a->netns_fd);
		} else {
			if (unshare(CLONE_NEWNET) < 0)
				child_fail(fd, "network", errno, "unshare of the network namespace", NULL);
			child_net_lo_up(fd);
		}
	}
	if (a->uts_ns && sethostname("cordon", 6) < 0)
		child_fail(fd, "uts", errno, "sethostname", NULL);
	child_t[CT_NET] = mono_usec();

	/* d. */
	if (a->fs_view)
		child_mounts(a);
	if (a->workdir && chdir(a->workdir) < 0)
		child_fail(fd, "workdir", errno, "chdir", a->workdir);
	child_t[CT_MOUNTS] = mono_usec();

	/* e. */
	keep[n_keep++] = fd;
	if (a->landlock)
		keep[n_keep++] = a->ruleset_fd;
	for (size_t i = 0; i < a->n_keep_fds && n_keep < ELEMENTSOF(keep); i++)
		keep[n_keep++] = a->keep_fds[i];
	r = close_all_but(keep, n_keep);
	if (r < 0)
		child_fail(fd, "close_range", -r, "closing inherited fds", NULL);
	for (size_t i = 0; i < a->n_keep_fds; i++)
		if (fcntl(a->keep_fds[i], F_SETFD, 0) < 0)
			child_fail(fd, "close_range", errno, "keeping a passed fd", NULL);

	/* f. */
	{
		struct rlimit core = {0, 0};

		if (setrlimit(RLIMIT_CORE, &core) < 0)
			child_fail(fd, "rlimits", errno, "RLIMIT_CORE", NULL);
		if (a->nofile) {
			struct rlimit nf = {a->nofile, a->nofile};

			if (setrlimit(RLIMIT_NOFILE, &nf) < 0)
				child_fail(fd, "rlimits", errno, "RLIMIT_NOFILE", NULL);
		}
		if (a->nproc) {
			struct rlimit np = {a->nproc, a->nproc};

			if (setrlimit(RLIMIT_NPROC, &np) < 0)
				child_fail(fd, "rlimits", errno, "RLIMIT_NPROC", NULL);
		}
	}

	/* g. */
	if (setsid() < 0)
		child_fail(fd, "setsid", errno, "setsid", NULL);

	child_t[CT_HYGIENE] = mono_usec();
	/* h. */
	child_drop_privileges(a);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(fd, "pdeathsig", errno, "PR_SET_PDEATHSIG after setuid", NULL);
	child_check_parent(fd);

	/* i. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(fd, "no_new_privs", errno, "PR_SET_NO_NEW_PRIVS", NULL);

	child_t[CT_PRIVS] = mono_usec();
	/* j. */
	if (a->landlock)
		child_landlock(a);
	child_t[CT_LANDLOCK] = mono_usec();

	/* k. */
	sa.sa_handler = init_forward;
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < ELEMENTSOF(forwarded); i++)
		(void)sigaction(forwarded[i], &sa, NULL);

	/* Wait for the parent: the eBPF egress policy is attached while we
	 * built the namespaces and mounts. */
	{
		struct sync_msg go;
		ssize_t n;

		do
			n = recv(fd, &go, sizeof(go), 0);
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(go) || go.kind != MSG_GO)
			_exit(127);
	}
	child_t[CT_GO] = mono_usec();

	/* The connector shares init's memory until its execve (CLONE_VM |
	 * CLONE_VFORK, own stack): no page-table copy, and init resumes exactly
	 * when the connector has exec'd or died. A failure leaves its diag in
	 * connector_diag (shared memory) before _exit. */
	/* Seccomp, last: loaded once, here, when the filter lets init start
	 * the connector (a clone without namespace flags) -- the connector
	 * inherits it through clone, so the kernel converts and JITs the
	 * program once per instance instead of twice, off the connector's
	 * path. Init then runs the rest (clone without namespace flags,
	 * wait4, sendto, kill, dup2) under the filter; it used to load the
	 * same filter right after the connector's execve anyway. */
	if (a->seccomp_in_init) {
		r = cordon_seccomp_load(a->seccomp);
		if (r < 0)
			child_fail(fd, "seccomp", -r, "loading the filter", NULL);
	}
	connector_args = a;
	connector_diag.kind = 0;
	pid = clone(connector_main, connector_stack + sizeof(connector_stack), CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
	if (pid < 0)
		child_fail(fd, "init", errno, "clone of the connector", NULL);
	init_connector_pid = pid;
	if (connector_diag.kind == MSG_DIAG) {
		(void)send(fd, &connector_diag, sizeof(connector_diag), MSG_NOSIGNAL);
		_exit(127);
	}
	{
		struct sync_msg m = {.kind = MSG_EXECED};

		child_t[CT_EXECED] = mono_usec();
		memcpy(m.t, child_t, sizeof(m.t));
		(void)send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	}

	/* Init. Its stdio and passed fds belong to the connector alone: when
	 * the connector closes stdout the parent must see EOF. Its own seccomp
	 * filter comes after the parent was told (it is off the critical
	 * path; init runs no untrusted code). */
	for (size_t i = 0; i < a->n_keep_fds; i++)
		(void)close(a->keep_fds[i]);
	{
		int nfd = open("/dev/null", O_RDWR | O_CLOEXEC);

		for (int i = 0; i < 3 && nfd >= 0; i++)
			(void)dup2(nfd, i);
		if (nfd > 2)
			(void)close(nfd);
	}
	if (a->seccomp && !a->seccomp_in_init) {
		r = cordon_seccomp_load(a->seccomp);
		if (r < 0) {
			(void)kill(pid, SIGKILL);
			_exit(127);
		}
	}
	(void)sigprocmask(SIG_SETMASK, &none, NULL);

	for (;;) {
		int st;
		pid_t w = waitpid(-1, &st, __WALL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			_exit(127);
		}
		if (w == pid) {
			struct sync_msg m = {.kind = MSG_EXIT, .status = st};

			(void)send(fd, &m, sizeof(m), MSG_NOSIGNAL);
			/* pid 1 cannot die of a signal it sends itself; the
			 * parent takes the real status from MSG_EXIT. */
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Parent side.                                                             */

/* Closes and forgets: an fd number closed twice may by then belong to
 * something else (a BPF link, whose close detaches a program). */
static void close_reset(int *fd)
{
	closep(fd);
	*fd = -EBADF;
}

struct spawn_ctx {
	struct spawn_plan plan;
	struct mount_item *mounts;
	size_t n_mounts;
	char **envp;
	size_t n_env;
	int ruleset_fd;
	const struct cordon_seccomp_program *seccomp;
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
	uint64_t t[6];				 /* phase timestamps (µs) for the report */
	uint64_t ct[_CT_MAX];			 /* the child's, from MSG_EXECED */
	int netns_fd;				 /* the spare network namespace handed to this child */
	const struct cordon_cgroup_group *group; /* the policed group the instance lives in, or NULL */
	bool placed_by_clone;
};

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

	r = mkdir_p(CORDON_RUN_DIR, 0755);
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
static int idmap_helper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
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

/* Brings lo up (what every sandbox does first in its network namespace),
 * so the child only enters the namespace; says 1 on the pipe when done. */
static int netns_helper(void *arg)
{
	int *pipe_w = arg;
	struct ifreq ifr = {0};
	char ok = 1;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	s_cpy(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		_exit(1);
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		_exit(1);
	(void)close(fd);
	if (write(*pipe_w, &ok, 1) != 1)
		_exit(1);
	for (;;)
		pause();
	return 0;
}

static void spare_netns_make(void)
{
	static char stack[16384] __attribute__((aligned(64)));
	int pfd[2] = {-EBADF, -EBADF};
	char path[64], ok = 0;
	pid_t pid;
	int fd = -EBADF;

	if (spare_netns_fd >= 0 && spare_netns_pid == getpid())
		return;
	if (spare_netns_fd >= 0)
		(void)close(spare_netns_fd); /* a forked copy's: the parent's spare, not ours */
	spare_netns_fd = -EBADF;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return; /* the next child unshares its own */
	pid = clone(netns_helper, stack + sizeof(stack), CLONE_NEWNET | CLONE_VM | SIGCHLD, &pfd[1]);
	if (pid >= 0) {
		ssize_t n;

		do
			n = read(pfd[0], &ok, 1);
		while (n < 0 && errno == EINTR);
		if (n == 1 && ok == 1) {
			snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
		(void)kill(pid, SIGKILL);
		while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	}
	(void)close(pfd[0]);
	(void)close(pfd[1]);
	if (fd < 0)
		return;
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

static int mntns_helper(void *arg)
{
	int *pipe_w = arg;
	char ok = 1;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("cordon-base", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=4k,nr_inodes=4") < 0 ||
	    mkdir(NEWROOT NEWROOT, 0755) < 0 ||
	    mount(NULL, NEWROOT, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0 ||
	    chdir(NEWROOT) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		_exit(1);
	if (write(*pipe_w, &ok, 1) != 1)
		_exit(1);
	for (;;)
		pause();
	return 0;
}

static int mntns_base_get(void)
{
	static char stack[16384] __attribute__((aligned(64)));
	int pfd[2] = {-EBADF, -EBADF};
	char path[64], ok = 0;
	pid_t pid;
	int fd = -EBADF;

	if (mntns_base_fd >= 0 && mntns_base_pid == getpid())
		return mntns_base_fd;
	if (mntns_base_fd >= 0)
		(void)close(mntns_base_fd); /* a forked copy's */
	mntns_base_fd = -EBADF;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -EBADF; /* this child copies the host's namespace */
	pid = clone(mntns_helper, stack + sizeof(stack), CLONE_NEWNS | CLONE_VM | SIGCHLD, &pfd[1]);
	if (pid >= 0) {
		ssize_t n;

		do
			n = read(pfd[0], &ok, 1);
		while (n < 0 && errno == EINTR);
		if (n == 1 && ok == 1) {
			snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
		(void)kill(pid, SIGKILL);
		while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	}
	(void)close(pfd[0]);
	(void)close(pfd[1]);
	if (fd < 0)
		return -EBADF;
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

static int make_idmap_userns(uid_t owner, gid_t owner_gid, uid_t uid, gid_t gid, int *ret_fd)
{
	static char stack[16384] __attribute__((aligned(64)));
	char path[64], map[64];
	int r = 0, nsfd = -EBADF;
	pid_t pid;

	pid = clone(idmap_helper, stack + sizeof(stack), CLONE_NEWUSER | CLONE_VM | SIGCHLD, NULL);
	if (pid < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)owner, (unsigned)uid);
	r = write_small_file(path, map);
	if (r >= 0) {
		snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
		snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)owner_gid, (unsigned)gid);
		r = write_small_file(path, map);
	}
	if (r >= 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		nsfd = open(path, O_RDONLY | O_CLOEXEC);
		if (nsfd < 0)
			r = -errno;
	}
	(void)kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	if (r < 0)
		return r;
	*ret_fd = nsfd;
	return 0;
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
static int decide_plan(const struct cordon_profile *p, const struct cordon_caps *caps, struct spawn_plan *plan,
		       struct cordon_diag *d)
{
	struct cordon_landlock_masks all = cordon_landlock_abi_masks(7);
	bool req_ll = p->require & CORDON_CONTROL_LANDLOCK, req_sc = p->require & CORDON_CONTROL_SECCOMP,
	     req_cg = p->require & CORDON_CONTROL_CGROUP, req_ns = p->require & CORDON_CONTROL_NAMESPACES,
	     req_net = p->require & CORDON_CONTROL_NETWORK;
	int r = 0;

	/* Landlock: handle every right a current kernel knows, so anything not
	 * granted is denied; keep what this ABI can express. */
	plan->landlock_abi = caps->landlock_abi;
	plan->ll_requested = all;
	plan->ll_effective = cordon_landlock_abi_masks(caps->landlock_abi);
	if (caps->landlock_abi <= 0) {
		plan->landlock = CORDON_STATE_UNAVAILABLE;
		snprintf(plan->landlock_reason, sizeof(plan->landlock_reason), "%s (errno %d)",
			 caps->landlock_errno == EOPNOTSUPP ? "Landlock is disabled at boot (not in lsm=)"
							    : "the kernel has no Landlock",
			 caps->landlock_errno);
		if (req_ll)
			return cordon_diag_set(d, EOPNOTSUPP, "require",
					       "required control 'landlock' is not available: %s",
					       plan->landlock_reason);
		r |= spawn_plan_add_missing(plan, "landlock", "Landlock (all of it)",
					    "filesystem access is limited only by the mount namespace view and file "
					    "permissions; no TCP port rules; no scoping");
	} else if (plan->ll_effective.fs != all.fs || plan->ll_effective.net != all.net ||
		   plan->ll_effective.scoped != all.scoped) {
		plan->landlock = CORDON_STATE_DEGRADED;
		snprintf(plan->landlock_reason, sizeof(plan->landlock_reason), "Landlock ABI %d < 6",
			 caps->landlock_abi);
		if ((plan->ll_effective.fs & all.fs) != all.fs)
			r |= spawn_plan_add_missing(
			    plan, "landlock", "filesystem rights of newer ABIs (refer, truncate, ioctl_dev)",
			    "those operations are governed only by mount flags and file permissions");
		if (!plan->ll_effective.net)
			r |= spawn_plan_add_missing(plan, "landlock", "TCP bind/connect rules (ABI 4)",
						    p->net_mode == CORDON_NET_NONE
							? "the empty network namespace still isolates the network"
							: "TCP ports are not checked by Landlock");
		if (!plan->ll_effective.scoped)
			r |= spawn_plan_add_missing(plan, "landlock", "abstract unix socket and signal scoping (ABI 6)",
						    "signals are still confined by the pid namespace; abstract unix "
						    "sockets by the network namespace (none in allowlist mode)");
	} else
		plan->landlock = CORDON_STATE_ENFORCED;

	/* Namespaces. */
	plan->ns_requested = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
	if (p->net_mode == CORDON_NET_NONE)
		plan->ns_requested |= CLONE_NEWNET;
	plan->ns_effective = plan->ns_requested & caps->namespaces;
	if (plan->ns_effective != plan->ns_requested) {
		unsigned long miss = plan->ns_requested & ~plan->ns_effective;

		snprintf(plan->namespaces_reason, sizeof(plan->namespaces_reason), "kernel cannot create:%s%s%s%s%s%s",
			 miss & CLONE_NEWNS ? " mnt" : "", miss & CLONE_NEWPID ? " pid" : "",
			 miss & CLONE_NEWIPC ? " ipc" : "", miss & CLONE_NEWUTS ? " uts" : "",
			 miss & CLONE_NEWCGROUP ? " cgroup" : "", miss & CLONE_NEWNET ? " net" : "");
		if (req_ns)
			return cordon_diag_set(d, EOPNOTSUPP, "require",
					       "required control 'namespaces' is not available: %s",
					       plan->namespaces_reason);
		plan->namespaces = CORDON_STATE_DEGRADED;
		if (miss & CLONE_NEWNS)
			r |= spawn_plan_add_missing(
			    plan, "namespaces", "mount namespace",
			    "the connector sees the host filesystem (Landlock still limits it); no "
			    "private /tmp, /proc or /dev");
		if (miss & CLONE_NEWPID)
			r |= spawn_plan_add_missing(plan, "namespaces", "pid namespace",
						    "host processes are visible to the connector's uid checks");
		if (miss & (CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP))
			r |= spawn_plan_add_missing(plan, "namespaces", "ipc/uts/cgroup namespace",
						    "host SysV IPC, hostname or cgroup paths are visible");
	} else
		plan->namespaces = CORDON_STATE_ENFORCED;

	/* Network: never an open network. Layers: the empty network namespace
	 * (mode none), the eBPF egress policy on the instance's cgroup (every
	 * mode), Landlock TCP rules (ABI >= 4). */
	plan->landlock_tcp = plan->landlock != CORDON_STATE_UNAVAILABLE && plan->ll_effective.net;
	if (!plan->ebpf && !*plan->ebpf_reason)
		snprintf(plan->ebpf_reason, sizeof(plan->ebpf_reason), "eBPF egress policy not available");
	if (p->net_mode == CORDON_NET_NONE) {
		if (plan->ns_effective & CLONE_NEWNET) {
			plan->network = CORDON_STATE_ENFORCED;
			snprintf(plan->network_reason, sizeof(plan->network_reason), "empty network namespace%s%s",
				 plan->ebpf ? " + eBPF deny-all" : "",
				 plan->landlock_tcp ? " + Landlock TCP deny" : "");
		} else if (plan->ebpf || plan->landlock_tcp) {
			plan->network = plan->ebpf ? CORDON_STATE_ENFORCED : CORDON_STATE_DEGRADED;
			snprintf(plan->network_reason, sizeof(plan->network_reason), "no network namespace: %s%s%s",
				 plan->ebpf ? "eBPF deny-all" : "", plan->ebpf && plan->landlock_tcp ? " + " : "",
				 plan->landlock_tcp ? "Landlock TCP deny" : "");
			if (!plan->ebpf)
				r |= spawn_plan_add_missing(
				    plan, "network", "network namespace and eBPF egress policy",
				    "TCP is denied by Landlock, but UDP and other sockets reach the host network");
		} else
			return cordon_diag_set(d, EOPNOTSUPP,
					       p->require & CORDON_CONTROL_NETWORK ? "require" : "network",
					       "network mode none needs a network namespace, the eBPF egress policy or "
					       "Landlock TCP rules; the kernel has neither");
	} else {
		if (plan->ebpf) {
			plan->network = CORDON_STATE_ENFORCED;
			snprintf(plan->network_reason, sizeof(plan->network_reason), "eBPF egress allowlist%s",
				 plan->landlock_tcp ? " + Landlock TCP port rules" : "");
		} else if (plan->landlock_tcp) {
			plan->network = CORDON_STATE_DEGRADED;
			snprintf(plan->network_reason, sizeof(plan->network_reason),
				 "%.120s: Landlock TCP port rules only", plan->ebpf_reason);
			r |= spawn_plan_add_missing(
			    plan, "network", "eBPF egress address policy",
			    "any address on the allowed TCP ports is reachable; UDP is not restricted");
		} else
			return cordon_diag_set(
			    d, EOPNOTSUPP, req_net ? "require" : "network",
			    "network mode allowlist needs the eBPF egress policy or Landlock TCP rules "
			    "(ABI 4); neither is available (%s)",
			    plan->ebpf_reason);
	}
	if (req_net && plan->network != CORDON_STATE_ENFORCED)
		return cordon_diag_set(d, EOPNOTSUPP, "require",
				       "required control 'network' is not fully available: %s", plan->network_reason);

	/* Seccomp. */
	if (!caps->seccomp_filter) {
		plan->seccomp = CORDON_STATE_UNAVAILABLE;
		snprintf(plan->seccomp_reason, sizeof(plan->seccomp_reason), "the kernel has no seccomp filter mode");
		if (req_sc)
			return cordon_diag_set(d, EOPNOTSUPP, "require",
					       "required control 'seccomp' is not available: %s", plan->seccomp_reason);
		r |= spawn_plan_add_missing(plan, "seccomp", "seccomp filter",
					    "every system call is reachable (namespace, ptrace, bpf, io_uring, ...)");
	} else if (p->seccomp_action == CORDON_SECCOMP_LOG) {
		plan->seccomp = CORDON_STATE_DISABLED_BY_POLICY;
		snprintf(plan->seccomp_reason, sizeof(plan->seccomp_reason),
			 "action: log (violations are logged, not refused; foreign arches still killed)");
	} else
		plan->seccomp = CORDON_STATE_ENFORCED;

	/* Cgroup (controllers are checked by the cgroup module). */
	if (caps->cgroup_layout == CORDON_CGROUP_NONE) {
		plan->cgroup = CORDON_STATE_UNAVAILABLE;
		snprintf(plan->cgroup_reason, sizeof(plan->cgroup_reason), "no cgroup hierarchy is mounted");
		if (req_cg)
			return cordon_diag_set(d, EOPNOTSUPP, "require",
					       "required control 'cgroup' is not available: %s", plan->cgroup_reason);
		r |= spawn_plan_add_missing(
		    plan, "cgroup", "cgroups",
		    p->user ? "no memory, pids or CPU limit; no kill-all on teardown; no statistics"
			    : "no memory or CPU limit (processes still capped by RLIMIT_NPROC on the "
			      "instance's dynamic uid); no kill-all on teardown; no statistics");
	} else {
		/* A limit the profile struct does not carry (0: only a struct
		 * built by hand; the parser fills defaults) is no limit: the
		 * control must not read "enforced" then. */
		static const char *const unset_names[] = {"memory limit", "pids limit", "CPU limit"};
		const bool unset[] = {!p->mem_bytes, !p->pids_max, !p->cpu_micro};

		plan->cgroup = CORDON_STATE_ENFORCED;
		for (size_t i = 0; i < ELEMENTSOF(unset); i++) {
			if (!unset[i])
				continue;
			plan->cgroup = CORDON_STATE_DEGRADED;
			snprintf(plan->cgroup_reason, sizeof(plan->cgroup_reason), "some limits are not set");
			r |= spawn_plan_add_missing(plan, "cgroup", unset_names[i], "not set: unlimited");
		}
	}

	plan->capabilities = CORDON_STATE_ENFORCED;
	plan->no_new_privs = caps->no_new_privs ? CORDON_STATE_ENFORCED : CORDON_STATE_UNAVAILABLE;
	if (!caps->no_new_privs)
		r |= spawn_plan_add_missing(plan, "no_new_privs", "no_new_privs", "setuid binaries keep their power");
	return r < 0 ? -ENOMEM : 0;
}

static json_t *masks_json(const struct cordon_landlock_masks *m)
{
	char fs[24], net[24], sc[24];

	snprintf(fs, sizeof(fs), "0x%llx", (unsigned long long)m->fs);
	snprintf(net, sizeof(net), "0x%llx", (unsigned long long)m->net);
	snprintf(sc, sizeof(sc), "0x%llx", (unsigned long long)m->scoped);
	return json_pack("{s:s, s:s, s:s}", "fs", fs, "net", net, "scoped", sc);
}

static json_t *ns_json(unsigned long ns)
{
	static const struct {
		unsigned long flag;
		const char *name;
	} t[] = {{CLONE_NEWNS, "mnt"},	{CLONE_NEWPID, "pid"},	     {CLONE_NEWIPC, "ipc"},
		 {CLONE_NEWUTS, "uts"}, {CLONE_NEWCGROUP, "cgroup"}, {CLONE_NEWNET, "net"}};
	json_t *a = json_array();

	for (size_t i = 0; a && i < ELEMENTSOF(t); i++)
		if (ns & t[i].flag)
			json_array_append_new(a, json_string(t[i].name));
	return a;
}

static json_t *control_json(enum cordon_control_state s, const char *reason)
{
	return json_pack("{s:s, s:s?}", "state", cordon_control_state_to_string(s), "reason",
			 reason && *reason ? reason : NULL);
}

/* Per limit, what the instance really got: "enforced" (set, its
 * controller works), "degraded" (set, but its controller is missing here),
 * "unavailable" (no cgroup hierarchy at all) or "unset" (no such limit).
 * nofile is an rlimit, applied in the child whatever the cgroups. */
static json_t *limit_states_json(const struct cordon_profile *p, const struct spawn_plan *pl)
{
	const struct {
		const char *name;
		bool set;
		int ctrl;
	} lims[] = {
		{"memory", p->mem_bytes > 0, CORDON_CTRL_MEMORY},
		{"pids", p->pids_max > 0, CORDON_CTRL_PIDS},
		{"cpu", p->cpu_micro > 0, CORDON_CTRL_CPU},
	};
	json_t *o = json_object();

	for (size_t i = 0; o && i < ELEMENTSOF(lims); i++) {
		const char *st = !lims[i].set				   ? "unset"
				 : pl->cgroup == CORDON_STATE_UNAVAILABLE  ? "unavailable"
				 : pl->cgroup_missing & (1u << lims[i].ctrl) ? "degraded"
									   : "enforced";

		json_object_set_new(o, lims[i].name, json_string(st));
	}
	if (o)
		json_object_set_new(o, "nofile", json_string(p->nofile ? "enforced" : "unset"));
	return o;
}

/* The limits the profile did not set, which got their documented default. */
static json_t *limit_defaults_json(const struct cordon_profile *p)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {
		{CORDON_LIMIT_MEMORY, "memory"},
		{CORDON_LIMIT_PIDS, "pids"},
		{CORDON_LIMIT_CPU, "cpu"},
		{CORDON_LIMIT_NOFILE, "nofile"},
	};
	json_t *a = json_array();

	for (size_t i = 0; a && i < ELEMENTSOF(names); i++)
		if (p->limits_defaulted & names[i].bit)
			json_array_append_new(a, json_string(names[i].name));
	return a;
}

static json_t *build_report(const struct cordon_launch_policy *pol, const struct cordon_caps *caps, struct spawn_ctx *c,
			    char *const *argv)
{
	const struct cordon_profile *p = pol->profile;
	const struct spawn_plan *pl = &c->plan;
	json_t *rep, *controls, *fs, *policy, *jargv, *envnames, *nets;
	char *dump;
	bool degraded;

	controls = json_object();
	fs = json_array();
	jargv = json_array();
	envnames = json_array();
	nets = json_array();
	if (!controls || !fs || !jargv || !envnames || !nets)
		goto oom;

	json_object_set_new(
	    controls, "landlock",
	    json_pack("{s:s, s:i, s:o, s:o, s:s?}", "state", cordon_control_state_to_string(pl->landlock), "abi",
		      pl->landlock_abi, "requested", masks_json(&pl->ll_requested), "effective",
		      masks_json(&pl->ll_effective), "reason", *pl->landlock_reason ? pl->landlock_reason : NULL));
	json_object_set_new(controls, "seccomp",
			    json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s?}", "state",
				      cordon_control_state_to_string(pl->seccomp), "base",
				      p->seccomp_base == CORDON_SECCOMP_STRICT ? "strict" : "default", "action",
				      p->seccomp_action == CORDON_SECCOMP_KILL	? "kill"
				      : p->seccomp_action == CORDON_SECCOMP_LOG ? "log"
										: "errno",
				      "policy_hash", c->seccomp ? c->seccomp->policy_hash : NULL, "program_hash",
				      c->seccomp ? c->seccomp->program_hash : NULL, "reason",
				      *pl->seccomp_reason ? pl->seccomp_reason : NULL));
	{
		json_t *cg = control_json(pl->cgroup, pl->cgroup_reason), *miss = json_array();

		for (int i = 0; miss && i < _CORDON_CTRL_MAX; i++)
			if (pl->cgroup_missing & (1u << i))
				json_array_append_new(miss,
						      json_string(cordon_cgroup_ctrl_name((enum cordon_cgroup_ctrl)i)));
		json_object_set_new(cg, "path",
				    c->cg && cordon_cgroup_v2_path(c->cg) ? json_string(cordon_cgroup_v2_path(c->cg))
									  : json_null());
		json_object_set_new(cg, "missing_controllers", miss);
		json_object_set_new(cg, "limits",
				    json_pack("{s:I, s:I, s:I, s:I}", "memory_bytes", (json_int_t)p->mem_bytes, "pids",
					      (json_int_t)p->pids_max, "cpu_micro", (json_int_t)p->cpu_micro, "nofile",
					      (json_int_t)p->nofile));
		json_object_set_new(cg, "limit_states", limit_states_json(p, pl));
		json_object_set_new(cg, "defaults", limit_defaults_json(p));
		json_object_set_new(controls, "cgroup", cg);
	}
	json_object_set_new(controls, "namespaces",
			    json_pack("{s:s, s:o, s:o, s:s?}", "state", cordon_control_state_to_string(pl->namespaces),
				      "requested", ns_json(pl->ns_requested), "effective", ns_json(pl->ns_effective),
				      "reason", *pl->namespaces_reason ? pl->namespaces_reason : NULL));
	json_object_set_new(controls, "network",
			    json_pack("{s:s, s:s, s:b, s:b, s:b, s:s?}", "state",
				      cordon_control_state_to_string(pl->network), "mode",
				      p->net_mode == CORDON_NET_NONE ? "none" : "allowlist", "netns",
				      (pl->ns_effective & CLONE_NEWNET) != 0, "landlock_tcp", pl->landlock_tcp, "ebpf",
				      pl->ebpf, "reason", *pl->network_reason ? pl->network_reason : NULL));
	/* Where the eBPF programs are attached: the launcher's group (once for
	 * all its instances) or the instance's own cgroup2 directory. */
	if (pl->ebpf)
		json_object_set_new(json_object_get(controls, "network"), "ebpf_attached",
				    json_string(c->group ? "group" : "instance"));
	json_object_set_new(controls, "capabilities",
			    control_json(pl->capabilities, "all sets cleared, securebits locked"));
	json_object_set_new(controls, "no_new_privs", control_json(pl->no_new_privs, NULL));

	for (size_t i = 0; i < c->n_mounts; i++) {
		const struct mount_item *m = &c->mounts[i];
		json_t *e = json_pack("{s:s, s:s, s:s}", "host", m->host, "at", m->at, "access",
				      m->symlink ? "symlink" : cordon_access_to_string(m->access));

		if (e && m->idmapped)
			json_object_set_new(e, "idmap_owner_uid", json_integer(m->owner_uid));
		if (e && m->symlink)
			json_object_set_new(e, "target", json_string(m->symlink));
		json_array_append_new(fs, e);
	}
	for (char *const *a = argv; *a; a++)
		json_array_append_new(jargv, json_string(*a));
	for (size_t i = 0; i < c->n_env; i++) {
		const char *eq = strchr(c->envp[i], '=');

		json_array_append_new(envnames, json_stringn(c->envp[i], eq ? (size_t)(eq - c->envp[i]) : 0));
	}
	for (size_t i = 0; i < p->n_net_allow; i++) {
		json_t *ports = json_array();

		for (size_t j = 0; ports && j < p->net_allow[i].n_ports; j++)
			json_array_append_new(ports, json_integer(p->net_allow[i].ports[j]));
		json_array_append_new(nets, json_pack("{s:i, s:i, s:o}", "family", p->net_allow[i].family, "prefix_len",
						      p->net_allow[i].prefix_len, "ports", ports));
	}

	/* The effective policy, hashed: what this instance runs under. Env
	 * values are left out (credentials); names are in. */
	policy =
	    json_pack("{s:s, s:O, s:O, s:s, s:O, s:I, s:O, s:I, s:I, s:I, s:I, s:s?, s:O, s:I}", "connector", p->id,
		      "argv", jargv, "env", envnames, "user", p->user ? p->user : "dynamic", "filesystem", fs,
		      "tmp_bytes", (json_int_t)p->tmp_bytes, "network", nets, "memory", (json_int_t)p->mem_bytes,
		      "pids", (json_int_t)p->pids_max, "cpu_micro", (json_int_t)p->cpu_micro, "nofile",
		      (json_int_t)p->nofile, "seccomp_policy", c->seccomp ? c->seccomp->policy_hash : NULL, "controls",
		      controls, "require", (json_int_t)p->require);
	if (!policy)
		goto oom;
	dump = json_dumps(policy, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(policy);
	if (!dump)
		goto oom;
	cordon_sha256_hex(dump, strlen(dump), c->policy_hash);
	free(dump);

	degraded = c->plan.missing && json_array_size(c->plan.missing) > 0;
	rep = json_pack("{s:i, s:s, s:s, s:s, s:i, s:i, s:i, s:b, s:o, s:s, s:s?, s:o, s:o, s:o, s:o, s:s}", "version",
			1, "connector", p->id, "profile", p->path ? p->path : "", "instance", c->instance_name, "pid",
			(int)c->pid, "uid", (int)c->uid, "gid", (int)c->gid, "degraded", degraded, "missing",
			c->plan.missing ? json_incref(c->plan.missing) : json_array(), "policy_hash", c->policy_hash,
			"seccomp_program_hash", c->seccomp ? c->seccomp->program_hash : NULL, "controls", controls,
			"filesystem", fs, "argv", jargv, "env_names", envnames, "kernel", caps->kernel_release);
	/* Where the time went (spawn latency for the broker's metrics). The
	 * child's phases are consecutive differences of its own timestamps;
	 * "start" is from the parent's clone to the child's first instruction,
	 * "go_wait" the time the finished child waited for the parent. */
	if (rep) {
		static const char *const names[_CT_MAX] = {"start",    "net",	  "mounts",  "hygiene", "privileges",
							   "landlock", "go_wait", "seccomp", "verify",	"exec"};
		json_t *child = json_object();

		for (int i = 0; child && i < _CT_MAX; i++) {
			uint64_t prev = i == 0 ? c->t[2] : c->ct[i - 1];

			json_object_set_new(child, names[i],
					    json_integer(c->ct[i] >= prev ? (json_int_t)(c->ct[i] - prev) : 0));
		}
		json_object_set_new(rep, "spawn_usec",
				    json_pack("{s:I, s:I, s:I, s:I, s:I, s:o*}", "prepare",
					      (json_int_t)(c->t[1] - c->t[0]), "cgroup",
					      (json_int_t)(c->t[2] - c->t[1]), "clone_to_ebpf",
					      (json_int_t)(c->t[3] - c->t[2]), "ebpf", (json_int_t)(c->t[4] - c->t[3]),
					      "total", (json_int_t)(c->t[5] - c->t[0]), "child", child));
	}
	json_decref(nets);
	return rep;
oom:
	json_decref(controls);
	json_decref(fs);
	json_decref(jargv);
	json_decref(envnames);
	json_decref(nets);
	return NULL;
}

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

int cordon_spawn(const struct cordon_launch_policy *pol, const struct cordon_caps *caps, struct cordon_instance **ret,
		 struct cordon_diag *reterr_diag)
{
	static unsigned instance_counter;
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
	const struct cordon_profile *p;
	struct child_args a;
	struct cordon_instance *inst;
	char *const *argv;
	bool fs_view;
	int r, cgfd = -EBADF;

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
		snprintf(c.instance_name, sizeof(c.instance_name), "%s", pol->instance_name);
	} else
		snprintf(c.instance_name, sizeof(c.instance_name), "%s-%d-%u", p->id, (int)getpid(),
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

	c.t[0] = mono_usec();
	/* 1. Plan; fail closed before creating anything. The egress policy
	 * needs cgroup socket hooks, a cgroup2 directory for the instance and
	 * the programs loaded (once per process). */
	c.np = pol->netpolicy;
	if (!caps->bpf_cgroup_sock_addr)
		snprintf(c.plan.ebpf_reason, sizeof(c.plan.ebpf_reason), "the kernel has no cgroup socket BPF hooks");
	else if (caps->cgroup_layout == CORDON_CGROUP_NONE || caps->cgroup_layout == CORDON_CGROUP_V1)
		snprintf(c.plan.ebpf_reason, sizeof(c.plan.ebpf_reason),
			 "no cgroup2 hierarchy to attach the policy to");
	else if (!c.np) {
		struct cordon_diag nd = {0};

		if (!process_netpolicy && !process_netpolicy_failed) {
			process_netpolicy_pid = getpid();
			if (cordon_netpolicy_open(&process_netpolicy, &nd) < 0) {
				process_netpolicy_failed = true;
				snprintf(process_netpolicy_reason, sizeof(process_netpolicy_reason),
					 "eBPF egress policy could not be loaded: %.80s", nd.message);
			}
		}
		c.np = process_netpolicy;
		if (!c.np)
			snprintf(c.plan.ebpf_reason, sizeof(c.plan.ebpf_reason), "%s", process_netpolicy_reason);
	}
	c.plan.ebpf = c.np != NULL && !*c.plan.ebpf_reason;
	r = decide_plan(p, caps, &c.plan, d);
	if (r < 0)
		goto fail;
	fs_view = c.plan.ns_effective & CLONE_NEWNS;

	/* 2. User and environment. */
	r = resolve_user(p, &c, d);
	if (r < 0)
		goto fail;
	r = build_env(pol, &c, d);
	if (r < 0)
		goto fail;

	/* 3. Filesystem view. */
	for (size_t i = 0; i < p->n_fs_system; i++) {
		if (p->fs_system[i].access == CORDON_ACCESS_READ_WRITE) {
			r = cordon_diag_set(d, EINVAL, "policy", "system path '%s' cannot be read-write",
					    p->fs_system[i].path);
			goto fail;
		}
		if ((r = add_mount(&c, &p->fs_system[i], false, false, p, fs_view, d)) < 0)
			goto fail;
	}
	for (size_t i = 0; i < p->n_fs_roots; i++)
		if ((r = add_mount(&c, &p->fs_roots[i], true, false, p, fs_view, d)) < 0)
			goto fail;
	for (size_t i = 0; i < pol->n_extra_roots; i++)
		if ((r = add_mount(&c, &pol->extra_roots[i], true, true, p, fs_view, d)) < 0)
			goto fail;
	qsort(c.mounts, c.n_mounts, sizeof(*c.mounts), cmp_mount);
	/* A mount point beneath a read-write root would be created on the
	 * host, inside the user's data: refuse. */
	for (size_t i = 0; i < c.n_mounts; i++)
		for (size_t j = i + 1; j < c.n_mounts; j++)
			if (c.mounts[i].access == CORDON_ACCESS_READ_WRITE && !c.mounts[i].symlink &&
			    path_is_beneath(c.mounts[j].at, c.mounts[i].at)) {
				r = cordon_diag_set(d, EINVAL, "policy",
						    "'%s' cannot be mounted inside the read-write root at '%s'",
						    c.mounts[j].at, c.mounts[i].at);
				goto fail;
			}

	/* 4. Landlock ruleset from the host fds. */
	if (c.plan.landlock != CORDON_STATE_UNAVAILABLE) {
		struct cordon_landlock_masks handled;

		r = cordon_landlock_ruleset_new(caps->landlock_abi, &c.plan.ll_requested, &handled, &c.ruleset_fd);
		if (r < 0) {
			cordon_diag_set(d, -r, "landlock", "landlock_create_ruleset: %s", strerror(-r));
			goto fail;
		}
		c.plan.ll_effective = handled;
		for (size_t i = 0; i < c.n_mounts; i++) {
			if (c.mounts[i].path_fd < 0)
				continue;
			r = cordon_landlock_allow_fd(c.ruleset_fd, &handled, c.mounts[i].path_fd,
						     cordon_landlock_fs_access(c.mounts[i].access));
			if (r < 0) {
				cordon_diag_set(d, -r, "landlock", "rule for '%s': %s", c.mounts[i].host, strerror(-r));
				goto fail;
			}
		}
		if (p->net_mode == CORDON_NET_ALLOWLIST)
			for (size_t i = 0; i < p->n_net_allow; i++) {
				/* protocols 0 means the default, TCP. */
				if (p->net_allow[i].protocols && !(p->net_allow[i].protocols & CORDON_PROTO_TCP))
					continue;
				for (size_t j = 0; j < p->net_allow[i].n_ports; j++) {
					r = cordon_landlock_allow_port(c.ruleset_fd, &handled, p->net_allow[i].ports[j],
								       LANDLOCK_ACCESS_NET_CONNECT_TCP);
					if (r < 0) {
						cordon_diag_set(d, -r, "landlock", "port rule %u: %s",
								p->net_allow[i].ports[j], strerror(-r));
						goto fail;
					}
				}
			}
	}

	/* 5. Seccomp, compiled once per policy. */
	if (c.plan.seccomp != CORDON_STATE_UNAVAILABLE) {
		r = cordon_seccomp_compile_cached(p, caps, &c.seccomp, d);
		if (r < 0)
			goto fail;
	}

	c.t[1] = mono_usec();
	/* 6. Cgroup, limits written before the child exists. */
	if (c.plan.cgroup != CORDON_STATE_UNAVAILABLE) {
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
		if (c.plan.ebpf && cordon_netpolicy_group_setup(c.np, caps, NULL) >= 0)
			c.group = cordon_netpolicy_group(c.np);
		/* Only the cgroup2 directory now (clone3 places the child
		 * there); the v1 hierarchies of hybrid hosts are made after the
		 * clone, while the child builds its sandbox, and before MSG_GO:
		 * still before the connector's first instruction. */
		r = cordon_cgroup_create_ex(caps, c.group, c.instance_name, &lim, required, CORDON_CGROUP_DEFER_V1,
					    &c.cg, &c.plan.cgroup_missing, d);
		if (r < 0)
			goto fail;
		cgfd = cordon_cgroup_v2_fd(c.cg);
		/* Group mode: the allowlist entries, before the child exists.
		 * From its first instruction the group's programs judge it;
		 * without entries (mode none) it is denied everything. */
		if (c.group) {
			if (cgfd < 0) {
				r = cordon_diag_set(d, ENOENT, "netpolicy", "the instance has no cgroup2 directory");
				goto fail;
			}
			r = cordon_netpolicy_attach_entries(c.np, cgfd, p->net_allow,
							    p->net_mode == CORDON_NET_ALLOWLIST ? p->n_net_allow : 0,
							    &c.np_att, d);
			if (r < 0)
				goto fail;
		}
	}
	c.t[2] = mono_usec();
	/* 7. stdio, sync socket, clone. */
	c.netns_fd = (c.plan.ns_effective & CLONE_NEWNET) ? spare_netns_take() : -EBADF;
	a = (struct child_args){
	    .ruleset_fd = c.ruleset_fd,
	    .ll_handled = c.plan.ll_effective,
	    .landlock = c.ruleset_fd >= 0,
	    .seccomp = c.seccomp,
	    /* A profile that denies clone would stop init from starting the
	     * connector under the filter: then the connector loads it itself. */
	    .seccomp_in_init = c.seccomp && !strv_contains_n(p->seccomp_deny, p->n_seccomp_deny, "clone"),
	    .cg = c.cg,
	    /* Pure cgroup2 with clone3 placement: nothing to move, the child
	     * only verifies (a read). Otherwise the parent migrates it. */
	    .cg_enter = caps->cgroup_layout == CORDON_CGROUP_V2 && caps->clone_into_cgroup && cgfd >= 0,
	    .mounts = c.mounts,
	    .n_mounts = c.n_mounts,
	    .fs_view = fs_view,
	    .mntns_fd = fs_view ? mntns_base_get() : -EBADF,
	    .net_ns = c.plan.ns_effective & CLONE_NEWNET,
	    .netns_fd = c.netns_fd,
	    .uts_ns = c.plan.ns_effective & CLONE_NEWUTS,
	    .workdir = p->workdir,
	    .argv = argv,
	    .envp = c.envp,
	    .uid = c.uid,
	    .gid = c.gid,
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
	snprintf(a.tmp_opts, sizeof(a.tmp_opts), "mode=1777,size=%llu",
		 (unsigned long long)(p->tmp_bytes ? p->tmp_bytes : 64ULL << 20));
	snprintf(a.shm_opts, sizeof(a.shm_opts), "mode=1777,size=%llu",
		 (unsigned long long)(p->tmp_bytes ? p->tmp_bytes : 64ULL << 20));
	for (int i = 0; i < 3; i++) {
		switch (pol->stdio) {
		case CORDON_STDIO_INHERIT:
			a.stdio[i] = i;
			break;
		case CORDON_STDIO_FDS:
			a.stdio[i] = pol->stdio_fds[i];
			break;
		case CORDON_STDIO_PIPES:
			if (pipe2(c.pipes[i], O_CLOEXEC) < 0) {
				r = cordon_diag_set(d, errno, "stdio", "pipe: %m");
				goto fail;
			}
			a.stdio[i] = i == 0 ? c.pipes[i][0] : c.pipes[i][1];
			break;
		}
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, c.sync) < 0) {
		r = cordon_diag_set(d, errno, "sync", "socketpair: %m");
		goto fail;
	}
	a.sync_fd = c.sync[1];

	/* libcap-ng keeps per-thread state that it initialises lazily (reading
	 * /proc through stdio): initialise it here, so the child only
	 * computes and calls capset. */
	capng_clear(CAPNG_SELECT_BOTH);
	/* The network namespace is the expensive one (~0.5 ms): the child
	 * unshares it itself, in parallel with the parent's eBPF attach. */
	/* With the base mount namespace the child makes its own copy of it. */
	r = do_clone(&c, c.plan.ns_effective & ~(unsigned long)(CLONE_NEWNET | (a.mntns_fd >= 0 ? CLONE_NEWNS : 0)),
		     cgfd, caps->clone_into_cgroup);
	if (r == 0)
		child_main(&a);
	if (r < 0) {
		cordon_diag_set(d, -r, "clone", "clone3 of the sandbox: %s", strerror(-r));
		goto fail;
	}
	c.pid = r;
	close_reset(&c.sync[1]);
	for (int i = 0; i < 3; i++)
		close_reset(&c.pipes[i][i == 0 ? 0 : 1]);
	/* The mount trees now live in the child (or die with it). */
	for (size_t i = 0; i < c.n_mounts; i++)
		close_reset(&c.mounts[i].tree_fd);
	close_reset(&c.ruleset_fd);
	close_reset(&c.netns_fd); /* the child has it (or died): used once */

	/* Hybrid/v1 hosts: moving a process into a v1 cgroup waits for an RCU
	 * grace period (the threadgroup rwsem); doing it here lets that wait
	 * overlap the child's namespace and mount work. The child starts the
	 * connector only after MSG_GO below, so the limits apply before the
	 * connector's first instruction. */
	if (c.cg) {
		unsigned more = 0;

		r = cordon_cgroup_complete(caps, c.cg, &more, d);
		if (r < 0)
			goto fail;
		c.plan.cgroup_missing |= more;
		if (c.plan.cgroup_missing) {
			c.plan.cgroup = CORDON_STATE_DEGRADED;
			snprintf(c.plan.cgroup_reason, sizeof(c.plan.cgroup_reason), "some controllers are not usable");
			for (int i = 0; i < _CORDON_CTRL_MAX; i++)
				if (c.plan.cgroup_missing & (1u << i))
					(void)spawn_plan_add_missing(
					    &c.plan, "cgroup", cordon_cgroup_ctrl_name((enum cordon_cgroup_ctrl)i),
					    "that limit is not enforced");
		}
	}
	if (c.cg && !a.cg_enter) {
		r = cordon_cgroup_attach_pid(c.cg, c.pid);
		if (r < 0) {
			cordon_diag_set(d, -r, "cgroup", "moving the sandbox into its cgroup: %s", strerror(-r));
			goto fail;
		}
	}
	c.t[3] = mono_usec();
	/* 8. Egress policy on the instance's cgroup2 directory (mode none: no
	 * rule, deny everything), attached while the child builds its
	 * namespaces and mounts; the child starts the connector only after
	 * MSG_GO, so the policy is in place before the connector's first
	 * instruction. */
	if (c.plan.ebpf && !c.group) {
		if (cgfd < 0) {
			r = cordon_diag_set(d, ENOENT, "netpolicy",
					    "the instance has no cgroup2 directory to attach to");
			goto fail;
		}
		r = cordon_netpolicy_attach(c.np, cgfd, p->net_allow,
					    p->net_mode == CORDON_NET_ALLOWLIST ? p->n_net_allow : 0, &c.np_att, d);
		if (r < 0)
			goto fail;
	}
	c.t[4] = mono_usec();
	{
		struct sync_msg go = {.kind = MSG_GO};

		if (send(c.sync[0], &go, sizeof(go), MSG_NOSIGNAL) != (ssize_t)sizeof(go)) {
			r = cordon_diag_set(d, errno ? errno : EPIPE, "sync",
					    "the sandbox's init went away before start");
			goto fail;
		}
	}
	/* The launcher now only waits for the connector's execve: make the
	 * next spawn's network namespace meanwhile. */
	if (c.plan.ns_effective & CLONE_NEWNET)
		spare_netns_make();

	{
		struct sync_msg m;
		ssize_t n;

		/* Bounded: a sandbox that neither starts nor fails (a child
		 * stuck in the kernel, an exec that never returns) is killed
		 * rather than hanging the launcher. */
		struct pollfd pf = {.fd = c.sync[0], .events = POLLIN};
		int pr;

		do
			pr = poll(&pf, 1, SPAWN_TIMEOUT_MSEC);
		while (pr < 0 && errno == EINTR);
		if (pr == 0) {
			r = cordon_diag_set(d, ETIMEDOUT, "init", "the sandbox did not start within %d s",
					    SPAWN_TIMEOUT_MSEC / 1000);
			goto fail;
		}
		do
			n = recv(c.sync[0], &m, sizeof(m), MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		if (n == (ssize_t)sizeof(m) && m.kind == MSG_DIAG) {
			m.diag.step[sizeof(m.diag.step) - 1] = '\0';
			m.diag.message[sizeof(m.diag.message) - 1] = '\0';
			*d = m.diag;
			r = -(m.diag.error > 0 ? m.diag.error : EIO);
			goto fail;
		}
		if (n != (ssize_t)sizeof(m) || m.kind != MSG_EXECED) {
			r = cordon_diag_set(d, n < 0 ? errno : EPIPE, "init",
					    "the sandbox's init ended before the connector started");
			goto fail;
		}
		memcpy(c.ct, m.t, sizeof(c.ct));
	}

	c.t[5] = mono_usec();
	inst = calloc(1, sizeof(*inst));
	if (!inst) {
		r = -ENOMEM;
		goto fail;
	}
	inst->report = build_report(pol, caps, &c, argv);
	if (!inst->report) {
		free(inst);
		r = cordon_diag_set(d, ENOMEM, "report", "out of memory");
		goto fail;
	}
	inst->pidfd = TAKE_FD(c.pidfd);
	inst->pid = c.pid;
	inst->sync_fd = TAKE_FD(c.sync[0]);
	for (int i = 0; i < 3; i++)
		inst->stdio[i] = pol->stdio == CORDON_STDIO_PIPES ? TAKE_FD(c.pipes[i][i == 0 ? 1 : 0]) : -EBADF;
	inst->cg = TAKE_PTR(c.cg);
	if (inst->cg) {
		struct stat cst;

		/* On cgroup2 the directory's inode number is the cgroup id. */
		if (cordon_cgroup_v2_fd(inst->cg) >= 0 && fstat(cordon_cgroup_v2_fd(inst->cg), &cst) >= 0)
			inst->cgroup_id = (uint64_t)cst.st_ino;
	}
	inst->np = c.np;
	inst->np_att = TAKE_PTR(c.np_att);
	inst->uid_lock_fd = TAKE_FD(c.uid_lock_fd);
	inst->uid = c.uid;
	inst->gid = c.gid;
	spawn_ctx_done(&c);
	*ret = inst;
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
