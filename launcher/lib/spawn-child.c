/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The child side of cordon_spawn(): the sandbox's init (steps a.-k. of the
 * comment at the top of spawn.c) and the connector until its execve (l.).
 * Runs after clone3 in a process whose parent may have had other threads,
 * so everything here is async-signal-safe: no allocator, no stdio, no locks.
 * The unit test check-spawn-child-async-signal-safe runs `nm -u` on this
 * object and fails on any allocator or stdio symbol. */
#include "spawn-child.h"

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
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "cgroup.h"
#include "cleanup.h"
#include "fd-util.h"
#include "landlock-uapi.h"
#include "landlock.h"
#include "netpolicy.h"
#include "parse-util.h"
#include "privdrop.h"
#include "seccomp.h"
#include "syscall-compat.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

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

void spawn_strcpy(char *dst, size_t size, const char *src)
{
	dst[0] = '\0';
	s_cat(dst, size, src);
}

/* dst = a + b; false when it does not fit. */
static bool s_join(char *dst, size_t size, const char *a, const char *b)
{
	if (s_len(a) + s_len(b) + 1 > size)
		return false;
	spawn_strcpy(dst, size, a);
	s_cat(dst, size, b);
	return true;
}

static void fill_diag(struct cordon_diag *d, const char *step, int err, const char *msg, const char *arg)
{
	memset(d, 0, sizeof(*d));
	d->error = err > 0 ? err : EIO;
	spawn_strcpy(d->step, sizeof(d->step), step);
	spawn_strcpy(d->message, sizeof(d->message), msg);
	if (arg) {
		s_cat(d->message, sizeof(d->message), " ");
		s_cat(d->message, sizeof(d->message), arg);
	}
}

static _noreturn_ void child_fail(int fd, const char *step, int err, const char *msg, const char *arg)
{
	struct sync_msg m = { .kind = MSG_DIAG };

	fill_diag(&m.diag, step, err, msg, arg);
	(void)send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	_exit(127);
}

static const struct child_args *connector_args;
static uint64_t child_t[_CT_MAX]; /* shared with the connector until its execve (CLONE_VM) */

uint64_t spawn_mono_usec(void)
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

int spawn_mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = s_len(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	spawn_strcpy(buf, sizeof(buf), path);
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
		return spawn_mkdir_p(target, 0755);
	spawn_strcpy(parent, sizeof(parent), target);
	n = s_len(parent);
	while (n > 0 && parent[n - 1] != '/')
		n--;
	if (n > 1)
		parent[n - 1] = '\0';
	if (n > 1) {
		int r = spawn_mkdir_p(parent, 0755);

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
		child_fail(sync_fd, "network", errno, "socket for lo", NULL);
	memset(&ifr, 0, sizeof(ifr));
	spawn_strcpy(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
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
	} devs[] = { { "null", 3 }, { "zero", 5 }, { "full", 7 }, { "random", 8 }, { "urandom", 9 } };
	static const char *const links[][2] = {
		{ "fd", "/proc/self/fd" },
		{ "stdin", "/proc/self/fd/0" },
		{ "stdout", "/proc/self/fd/1" },
		{ "stderr", "/proc/self/fd/2" },
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
	if (!s_join(p, sizeof(p), NEWROOT, "/proc") || spawn_mkdir_p(p, 0555) < 0)
		child_fail(fd, "mount", errno, "mkdir", "/proc");
	if (mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible,subset=pid") < 0)
		child_fail(fd, "mount", errno, "proc", NULL);

	/* Minimal /dev: five harmless character devices and a private shm. */
	if (!s_join(p, sizeof(p), NEWROOT, "/dev") || spawn_mkdir_p(p, 0755) < 0)
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
	if (!s_join(p, sizeof(p), NEWROOT, "/tmp") || spawn_mkdir_p(p, 01777) < 0)
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

/* Bounding set, locked securebits, groups, gid and uid, capability sets
 * (libcap-ng) and the ambient set: privdrop.c, which cordond uses too. */
static void child_drop_privileges(const struct child_args *a)
{
	const struct cordon_privdrop pd = { .uid = a->uid, .gid = a->gid, .cap_last = a->cap_last, .ids = true };
	const char *step = NULL, *what = NULL;
	int r = cordon_privdrop(&pd, &step, &what);

	if (r < 0)
		child_fail(a->sync_fd, step, -r, what, NULL);
}

/* Checks the parent (launcher) still holds its end of the sync socket. */
static void child_check_parent(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)))
		_exit(127);
}

static void child_landlock(const struct child_args *a)
{
	static const char *const devs[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom" };
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

	spawn_strcpy(needle, sizeof(needle), "\n");
	s_cat(needle, sizeof(needle), key);
	s_cat(needle, sizeof(needle), ":\t");
	s_cat(needle, sizeof(needle), value);
	s_cat(needle, sizeof(needle), "\n");
	return strstr(buf, needle) != NULL;
}

/* Reads back what this process really has; any mismatch is a setup failure. */
static _connector_ void connector_verify(const struct child_args *a)
{
	static const char *const capsets[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
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

static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

/* l. The connector: runs on its own stack in init's memory until execve. */
static _connector_ int connector_main(void *unused)
{
	const struct child_args *a = connector_args;
	struct sigaction dfl = { .sa_handler = SIG_DFL };
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
	child_t[CT_SECCOMP] = spawn_mono_usec();
	connector_verify(a);
	child_t[CT_VERIFY] = spawn_mono_usec();
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	execve(a->argv[0], a->argv, a->envp);
	connector_fail("exec", errno, "execve", a->argv[0]);
}

/* k. The root guard's notification filter (rootguard-notify.h): loaded
 * with a new listener, which goes to the parent by SCM_RIGHTS. */
static void child_send_listener(const struct child_args *a)
{
	struct sync_msg m = { .kind = MSG_LISTENER };
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	int fds[2];

	/* The sandbox's root goes with the listener: the supervisor resolves
	 * names from it, and this init may have ended (a short-lived
	 * connector) before the supervisor could open /proc/PID/root. */
	fds[1] = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fds[1] < 0)
		child_fail(a->sync_fd, "rootguard", errno, "opening the sandbox's root for the supervisor", NULL);
	fds[0] =
		(int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, a->notify_filter);
	if (fds[0] < 0)
		child_fail(a->sync_fd, "rootguard", errno, "loading the notification filter", NULL);
	memset(u.buf, 0, sizeof(u.buf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	if (sendmsg(a->sync_fd, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(m))
		child_fail(a->sync_fd, "rootguard", errno ? errno : EPIPE, "handing over the listener", NULL);
	(void)close(fds[0]);
	(void)close(fds[1]);
}

_noreturn_ void spawn_child_main(const struct child_args *a)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };
	int fd = a->sync_fd, r;
	sigset_t all, none;
	int keep[70];
	size_t n_keep = 0;
	pid_t pid;

	child_t[CT_START] = spawn_mono_usec();
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
	child_t[CT_NET] = spawn_mono_usec();

	/* d. */
	if (a->fs_view)
		child_mounts(a);
	if (a->workdir && chdir(a->workdir) < 0)
		child_fail(fd, "workdir", errno, "chdir", a->workdir);
	child_t[CT_MOUNTS] = spawn_mono_usec();

	/* e. */
	keep[n_keep++] = fd;
	if (a->landlock)
		keep[n_keep++] = a->ruleset_fd;
	for (size_t i = 0; i < a->n_keep_fds && n_keep < ELEMENTSOF(keep); i++)
		keep[n_keep++] = a->keep_fds[i];
	r = fd_close_all_but(keep, n_keep);
	if (r < 0)
		child_fail(fd, "close_range", -r, "closing inherited fds", NULL);
	for (size_t i = 0; i < a->n_keep_fds; i++)
		if (fcntl(a->keep_fds[i], F_SETFD, 0) < 0)
			child_fail(fd, "close_range", errno, "keeping a passed fd", NULL);

	/* f. */
	{
		struct rlimit core = { 0, 0 };

		if (setrlimit(RLIMIT_CORE, &core) < 0)
			child_fail(fd, "rlimits", errno, "RLIMIT_CORE", NULL);
		if (a->nofile) {
			struct rlimit nf = { a->nofile, a->nofile };

			if (setrlimit(RLIMIT_NOFILE, &nf) < 0)
				child_fail(fd, "rlimits", errno, "RLIMIT_NOFILE", NULL);
		}
		if (a->nproc) {
			struct rlimit np = { a->nproc, a->nproc };

			if (setrlimit(RLIMIT_NPROC, &np) < 0)
				child_fail(fd, "rlimits", errno, "RLIMIT_NPROC", NULL);
		}
	}

	/* g. */
	if (setsid() < 0)
		child_fail(fd, "setsid", errno, "setsid", NULL);

	child_t[CT_HYGIENE] = spawn_mono_usec();
	/* h. */
	child_drop_privileges(a);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(fd, "pdeathsig", errno, "PR_SET_PDEATHSIG after setuid", NULL);
	child_check_parent(fd);

	/* i. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(fd, "no_new_privs", errno, "PR_SET_NO_NEW_PRIVS", NULL);

	child_t[CT_PRIVS] = spawn_mono_usec();
	/* j. */
	if (a->landlock)
		child_landlock(a);
	child_t[CT_LANDLOCK] = spawn_mono_usec();

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
	child_t[CT_GO] = spawn_mono_usec();

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
	/* The root guard's notification filter first (its own filter: the
	 * main one's ERRNO rules keep precedence over USER_NOTIF), its
	 * listener to the parent, which hands it to the supervisor. Init never
	 * keeps it. */
	if (a->notify_filter)
		child_send_listener(a);
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
		struct sync_msg m = { .kind = MSG_EXECED };

		child_t[CT_EXECED] = spawn_mono_usec();
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
			struct sync_msg m = { .kind = MSG_EXIT, .status = st };

			(void)send(fd, &m, sizeof(m), MSG_NOSIGNAL);
			/* pid 1 cannot die of a signal it sends itself; the
			 * parent takes the real status from MSG_EXIT. */
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Namespace pins (spawn.c's ns_pin): a helper cloned with CLONE_VM into a   */
/* new namespace, which it prepares and then holds until it is killed.       */

/* The helper dies with the launcher: a launcher killed while one existed
 * (SIGKILL, between the clone and its own kill) used to leave it paused
 * forever, holding the launcher's stdio (a test runner waiting for EOF on
 * it hung). It shares our memory, so the parent's pid is read from `a`. */
int spawn_pin_helper(void *arg)
{
	const struct spawn_pin_args *a = arg;
	char ok = 1;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != a->parent)
		_exit(1);
	if (a->setup && a->setup() < 0)
		_exit(1);
	if (write(a->pipe_w, &ok, 1) != 1)
		_exit(1);
	for (;;)
		pause();
	return 0;
}

/* Brings lo up (what every sandbox does first in its network namespace),
 * so the child only enters the namespace. */
int spawn_pin_setup_netns(void)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	spawn_strcpy(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return -EIO;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		return -EIO;
	(void)close(fd);
	return 0;
}

/* The base mount namespace's only mount: an empty read-only tmpfs holding
 * the directory NEWROOT, pivoted to as the root. */
int spawn_pin_setup_mntns(void)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("cordon-base", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=4k,nr_inodes=4") <
		    0 ||
	    mkdir(NEWROOT NEWROOT, 0755) < 0 ||
	    mount(NULL, NEWROOT, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0 ||
	    chdir(NEWROOT) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 ||
	    chdir("/") < 0)
		return -EIO;
	return 0;
}
