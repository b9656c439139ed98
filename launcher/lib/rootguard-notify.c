/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The root guard as a seccomp user-notification supervisor: see
 * rootguard-notify.h for what and why. The supervisor runs in a child of
 * the launcher forked while the launcher may have other threads, so
 * everything after the clone is plain syscalls: no allocation, no stdio. */
#include "rootguard-notify.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-util.h"
#include "syscall-compat.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define X32_BIT	    0x40000000U
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "rootguard-notify: unsupported architecture"
#endif

/* ---- the filter -------------------------------------------------------- */

/* clang-format off */
static const int notified[] = {
#ifdef __NR_chmod
	__NR_chmod,
#endif
	__NR_fchmod, __NR_fchmodat, __NR_fchmodat2,
#ifdef __NR_chown
	__NR_chown,
#endif
#ifdef __NR_lchown
	__NR_lchown,
#endif
	__NR_fchown, __NR_fchownat,
};
/* clang-format on */

#define N_NOTIFIED (sizeof(notified) / sizeof(notified[0]))

static struct sock_filter filter_insns[N_NOTIFIED + 8];
static struct sock_fprog filter_prog;

/* Layout: [0] load arch, [1] arch != native -> kill, [2] load nr,
 * ([3] x32 -> kill,) then one JEQ per syscall jumping to the NOTIFY return,
 * ALLOW, NOTIFY, KILL. */
static void build_filter(void)
{
	size_t n = 0, first, allow, notify, kill;

	first = 3;
#ifdef X32_BIT
	first = 4;
#endif
	allow = first + N_NOTIFIED;
	notify = allow + 1;
	kill = notify + 1;
	filter_insns[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	filter_insns[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0, kill - n - 1);
	n++;
	filter_insns[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
#ifdef X32_BIT
	filter_insns[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, kill - n - 1, 0);
	n++;
#endif
	for (size_t i = 0; i < N_NOTIFIED; i++, n++)
		filter_insns[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)notified[i],
							       notify - n - 1, 0);
	filter_insns[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	filter_insns[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
	filter_insns[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	filter_prog.filter = filter_insns;
	filter_prog.len = (unsigned short)n;
}

const struct sock_fprog *cordon_rootguard_notify_filter(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	(void)pthread_once(&once, build_filter);
	return &filter_prog;
}

/* ---- small async-signal-safe helpers ----------------------------------- */

/* Appends the decimal v at p (room for 20 digits); returns the end. */
static char *put_uint(char *p, unsigned long v)
{
	char tmp[24];
	size_t n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*p++ = tmp[--n];
	*p = '\0';
	return p;
}

/* "<pid>/<rest>" into buf (64 bytes). */
static void pid_path(char *buf, pid_t pid, const char *rest)
{
	char *p = put_uint(buf, (unsigned long)pid);

	*p++ = '/';
	while (*rest)
		*p++ = *rest++;
	*p = '\0';
}

int cordon_rootguard_notify_read_path(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t off = 0;

	if (page <= 0)
		page = 4096;
	if (addr == 0)
		return -EFAULT;
	while (off < size) {
		uint64_t at = addr + off;
		size_t chunk = (size_t)page - (size_t)(at % (uint64_t)page);
		struct iovec local, remote;
		ssize_t n;

		if (chunk > size - off)
			chunk = size - off;
		local = (struct iovec){ buf + off, chunk };
		remote = (struct iovec){ (void *)(uintptr_t)at, chunk };
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n < 0)
			return errno == ESRCH ? -ESRCH : -EFAULT;
		if (n == 0)
			return -EFAULT;
		{
			const char *z = memchr(buf + off, '\0', (size_t)n);

			if (z)
				return (int)(z - buf);
		}
		off += (size_t)n;
		if ((size_t)n < chunk)
			return -EFAULT;
	}
	return -ENAMETOOLONG;
}

/* Whether path starts with the component `comp` (then '/' or the end);
 * returns the length matched or 0. */
static size_t starts_with_component(const char *path, const char *comp)
{
	size_t n = strlen(comp);

	if (strncmp(path, comp, n) != 0 || (path[n] != '/' && path[n] != '\0'))
		return 0;
	return n;
}

int cordon_rootguard_notify_rewrite_self(char *path, size_t size, pid_t ns_tgid, pid_t ns_tid)
{
	char head[64], *p;
	size_t skip, hl, rest;

	if ((skip = starts_with_component(path, "/proc/self")) != 0) {
		p = put_uint(head, (unsigned long)ns_tgid);
	} else if ((skip = starts_with_component(path, "/proc/thread-self")) != 0) {
		p = put_uint(head, (unsigned long)ns_tgid);
		memcpy(p, "/task/", 6);
		p = put_uint(p + 6, (unsigned long)ns_tid);
	} else
		return 0;
	hl = 6 + (size_t)(p - head); /* "/proc/" + head */
	rest = strlen(path + skip);
	if (hl + rest + 1 > size)
		return -ENAMETOOLONG;
	memmove(path + hl, path + skip, rest + 1);
	memcpy(path, "/proc/", 6);
	memcpy(path + 6, head, (size_t)(p - head));
	return 1;
}

/* ---- the supervisor ---------------------------------------------------- */

struct sup {
	int listener, proc, self_fd;
	uint64_t root_ino, root_mnt;
	uint32_t root_dev_major, root_dev_minor;
};

/* The last number of the "NSpid:" line of /proc/<pid>/status (the pid as
 * the innermost pid namespace numbers it) and the "Tgid:" value. */
static int read_status(const struct sup *s, pid_t pid, pid_t *ret_nspid, pid_t *ret_tgid)
{
	char path[64], buf[2048];
	_cleanup_close_ int fd = -EBADF;
	ssize_t n;
	long nspid = -1, tgid = -1;

	pid_path(path, pid, "status");
	fd = openat(s->proc, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	for (char *l = buf; l && *l;) {
		char *nl = strchr(l, '\n');

		if (nl)
			*nl = '\0';
		if (strncmp(l, "Tgid:", 5) == 0)
			tgid = strtol(l + 5, NULL, 10);
		else if (strncmp(l, "NSpid:", 6) == 0) {
			char *q = l + 6, *end;

			for (;;) {
				long v = strtol(q, &end, 10);

				if (end == q)
					break;
				nspid = v;
				q = end;
			}
		}
		l = nl ? nl + 1 : NULL;
	}
	if (nspid <= 0 || tgid <= 0)
		return -EIO;
	*ret_nspid = (pid_t)nspid;
	*ret_tgid = (pid_t)tgid;
	return 0;
}

static int pidfd_for(pid_t pid)
{
	int fd = sys_pidfd_open(pid, 0);

	/* A thread other than the leader: a thread pidfd (Linux 6.9). */
	if (fd < 0 && errno == EINVAL)
		fd = sys_pidfd_open(pid, PIDFD_THREAD);
	return fd < 0 ? -errno : fd;
}

/* The target's fd `tfd` as our own, or -errno (-EBADF when it has none). */
static int fetch_fd(int *pidfd, pid_t pid, int tfd)
{
	int fd;

	if (*pidfd < 0) {
		*pidfd = pidfd_for(pid);
		if (*pidfd < 0)
			return *pidfd;
	}
	fd = (int)syscall(__NR_pidfd_getfd, *pidfd, tfd, 0);
	return fd < 0 ? -errno : fd;
}

static bool is_mount_root(int fd, int *ret_err)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE, &stx) < 0) {
		*ret_err = -errno;
		return true;
	}
	*ret_err = 0;
	/* A kernel that cannot say (before Linux 5.8) is refused: fail closed. */
	if (!(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return true;
	return (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

enum op { OP_CHMOD, OP_CHOWN };

struct call {
	enum op op;
	bool fd_op;	 /* fchmod, fchown: on the target's fd itself */
	bool nofollow;	 /* lchown, AT_SYMLINK_NOFOLLOW */
	bool empty_path; /* AT_EMPTY_PATH */
	int dfd;
	uint64_t path_addr;
	mode_t mode;
	uid_t uid;
	gid_t gid;
};

/* The call's arguments as the kernel reads them (mode is a umode_t, ids
 * are 32 bits); -EINVAL for flags the kernel refuses, -ENOSYS for a
 * syscall the filter does not send. */
static int decode(const struct seccomp_notif *n, struct call *c)
{
	const __u64 *a = n->data.args;
	unsigned flags = 0;

	*c = (struct call){ .dfd = AT_FDCWD };
	switch (n->data.nr) {
#ifdef __NR_chmod
	case __NR_chmod:
		c->path_addr = a[0];
		c->mode = (uint16_t)a[1];
		break;
#endif
	case __NR_fchmod:
		c->fd_op = true;
		c->dfd = (int)a[0];
		c->mode = (uint16_t)a[1];
		break;
	case __NR_fchmodat:
		c->dfd = (int)a[0];
		c->path_addr = a[1];
		c->mode = (uint16_t)a[2];
		break;
	case __NR_fchmodat2:
		c->dfd = (int)a[0];
		c->path_addr = a[1];
		c->mode = (uint16_t)a[2];
		flags = (unsigned)a[3];
		break;
#ifdef __NR_chown
	case __NR_chown:
		c->op = OP_CHOWN;
		c->path_addr = a[0];
		c->uid = (uid_t)a[1];
		c->gid = (gid_t)a[2];
		break;
#endif
#ifdef __NR_lchown
	case __NR_lchown:
		c->op = OP_CHOWN;
		c->nofollow = true;
		c->path_addr = a[0];
		c->uid = (uid_t)a[1];
		c->gid = (gid_t)a[2];
		break;
#endif
	case __NR_fchown:
		c->op = OP_CHOWN;
		c->fd_op = true;
		c->dfd = (int)a[0];
		c->uid = (uid_t)a[1];
		c->gid = (gid_t)a[2];
		break;
	case __NR_fchownat:
		c->op = OP_CHOWN;
		c->dfd = (int)a[0];
		c->path_addr = a[1];
		c->uid = (uid_t)a[2];
		c->gid = (gid_t)a[3];
		flags = (unsigned)a[4];
		break;
	default:
		return -ENOSYS;
	}
	if (n->data.nr == __NR_fchmodat2 || n->data.nr == __NR_fchownat) {
		if (flags & ~(unsigned)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return -EINVAL;
		c->nofollow = flags & AT_SYMLINK_NOFOLLOW;
		c->empty_path = flags & AT_EMPTY_PATH;
	}
	/* Defence in depth: the main filter refuses these bits first. */
	if (c->op == OP_CHMOD && (c->mode & (S_ISUID | S_ISGID)))
		return -EPERM;
	return 0;
}

static bool notif_valid(const struct sup *s, uint64_t id)
{
	return ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* Whether pid's root is still the sandbox root we are chrooted to (a
 * connector cannot chroot, but if it ever could, its paths would resolve
 * elsewhere: refuse rather than resolve them differently). */
static int same_root(const struct sup *s, pid_t pid)
{
	char path[64];
	struct statx stx;

	pid_path(path, pid, "root");
	if (statx(s->proc, path, 0, STATX_INO | STATX_MNT_ID, &stx) < 0)
		return -errno;
	if (stx.stx_ino != s->root_ino || stx.stx_dev_major != s->root_dev_major ||
	    stx.stx_dev_minor != s->root_dev_minor || stx.stx_mnt_id != s->root_mnt)
		return -EPERM;
	return 0;
}

/* One notification: 0 or -errno, the connector's syscall result. */
static int handle(const struct sup *s, const struct seccomp_notif *n)
{
	char path[PATH_MAX + 64];
	_cleanup_close_ int pidfd = -EBADF, base = -EBADF, target = -EBADF;
	struct call c;
	pid_t pid = (pid_t)n->pid;
	int r, err;

	r = decode(n, &c);
	if (r < 0)
		return r;
	if (!c.fd_op) {
		if (c.path_addr == 0 && c.empty_path)
			path[0] = '\0';
		else {
			r = cordon_rootguard_notify_read_path(pid, c.path_addr, path, PATH_MAX);
			if (r < 0)
				return r;
		}
		if (path[0] == '\0' && !c.empty_path)
			return -ENOENT;
		if (path[0] == '/') {
			pid_t nspid, tgid, nstgid, tmp;

			if (starts_with_component(path, "/proc/self") ||
			    starts_with_component(path, "/proc/thread-self")) {
				if ((r = read_status(s, pid, &nspid, &tgid)) < 0 ||
				    (r = read_status(s, tgid, &nstgid, &tmp)) < 0)
					return r;
				r = cordon_rootguard_notify_rewrite_self(path, sizeof(path), nstgid, nspid);
				if (r < 0)
					return r;
			}
		} else if (c.dfd == AT_FDCWD) {
			char cwd[64];

			pid_path(cwd, pid, "cwd");
			base = openat(s->proc, cwd, O_PATH | O_CLOEXEC);
			if (base < 0)
				return -errno;
		} else {
			base = fetch_fd(&pidfd, pid, c.dfd);
			if (base < 0)
				return base;
		}
		r = same_root(s, pid);
		if (r < 0)
			return r;
	} else {
		target = fetch_fd(&pidfd, pid, c.dfd);
		if (target < 0)
			return target;
	}
	/* Everything read from the target is the waiting task's: its memory,
	 * cwd, root and fds (the pid could have been reused otherwise). */
	if (!notif_valid(s, n->id))
		return -ENOENT;

	if (c.fd_op) {
		int fl = fcntl(target, F_GETFL);

		if (fl < 0)
			return -errno;
		if (fl & O_PATH)
			return -EBADF; /* as the kernel answers fchmod/fchown of an O_PATH fd */
		if (is_mount_root(target, &err))
			return err < 0 ? err : -EPERM;
		if (c.op == OP_CHMOD)
			r = fchmod(target, c.mode);
		else
			r = fchown(target, c.uid, c.gid);
		return r < 0 ? -errno : 0;
	}
	if (path[0] == '\0')
		target = TAKE_FD(base); /* AT_EMPTY_PATH: the dirfd (or cwd) itself */
	else {
		target = openat(path[0] == '/' ? AT_FDCWD : base, path,
				O_PATH | O_CLOEXEC | (c.nofollow ? O_NOFOLLOW : 0));
		if (target < 0)
			return -errno;
	}
	if (is_mount_root(target, &err))
		return err < 0 ? err : -EPERM;
	if (c.op == OP_CHMOD) {
		r = (int)syscall(__NR_fchmodat2, target, "", c.mode,
				 AT_EMPTY_PATH | (c.nofollow ? AT_SYMLINK_NOFOLLOW : 0));
		if (r < 0 && errno == ENOSYS && !c.nofollow) {
			char fdname[24];

			(void)put_uint(fdname, (unsigned long)target);
			r = fchmodat(s->self_fd, fdname, c.mode, 0);
		}
	} else
		r = fchownat(target, "", c.uid, c.gid, AT_EMPTY_PATH | (c.nofollow ? AT_SYMLINK_NOFOLLOW : 0));
	return r < 0 ? -errno : 0;
}

/* Sets up the supervisor's confinement, then serves. Exit codes: 0 after
 * POLLHUP, 1..9 a setup step failed, 10 the listener failed. */
static _noreturn_ void supervise(int listener, int root, uid_t uid, gid_t gid, pid_t parent)
{
	struct sup s = { .listener = listener };
	int null, keep[4];
	sigset_t all;
	struct statx stx;

	/* Nothing of the launcher's signal handling: only SIGKILL ends us
	 * early (its own, or PDEATHSIG when the launcher dies). */
	sigfillset(&all);
	(void)sigprocmask(SIG_SETMASK, &all, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(1);
	s.proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (s.proc < 0 || null < 0)
		_exit(2);
	s.self_fd = openat(s.proc, "self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* Below 3 (the launcher ran with stdio closed) they would be replaced
	 * by /dev/null next. */
	if (s.self_fd < 3 || s.proc < 3)
		_exit(3);
	/* Hold nothing of the launcher's: another instance's stdio pipe kept
	 * open here would never see EOF. */
	for (int i = 0; i < 3; i++)
		if (dup2(null, i) < 0)
			_exit(4);
	keep[0] = s.listener;
	keep[1] = s.proc;
	keep[2] = s.self_fd;
	keep[3] = root;
	if (fd_close_all_but(keep, 4) < 0)
		_exit(4);
	/* The sandbox's root becomes ours: absolute paths, absolute symlinks
	 * and ".." at the top resolve as they do for the connector. */
	if (statx(root, "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID, &stx) < 0 || fchdir(root) < 0 || chroot(".") < 0)
		_exit(5);
	s.root_ino = stx.stx_ino;
	s.root_mnt = stx.stx_mnt_id;
	s.root_dev_major = stx.stx_dev_major;
	s.root_dev_minor = stx.stx_dev_minor;
	(void)close(root);
	/* The connector's credentials for every permission check: its
	 * fsuid/fsgid, no supplementary groups (it has none), and no
	 * capability but CAP_SYS_PTRACE (to read its memory and fetch its
	 * fds): no CAP_FOWNER, CAP_FSETID, CAP_CHOWN, CAP_DAC_*. */
	if (syscall(SYS_setgroups, 0, NULL) < 0)
		_exit(6);
	(void)setfsgid(gid);
	(void)setfsuid(uid);
	if ((gid_t)setfsgid((gid_t)-1) != gid || (uid_t)setfsuid((uid_t)-1) != uid)
		_exit(7);
	{
		struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct d[2] = { { 0 } };

		d[CAP_SYS_PTRACE / 32].effective = d[CAP_SYS_PTRACE / 32].permitted = 1U << (CAP_SYS_PTRACE % 32);
		if (syscall(SYS_capset, &h, d) < 0)
			_exit(8);
	}
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		_exit(9);

	for (;;) {
		struct pollfd pf = { .fd = s.listener, .events = POLLIN };
		struct seccomp_notif req;
		struct seccomp_notif_resp resp;

		if (poll(&pf, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(10);
		}
		if (pf.revents & POLLIN) {
			memset(&req, 0, sizeof(req));
			if (ioctl(s.listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
				if (errno == EINTR || errno == ENOENT)
					continue; /* the task went away meanwhile */
				_exit(10);
			}
			resp = (struct seccomp_notif_resp){ .id = req.id, .error = handle(&s, &req) };
			/* ENOENT: the task was killed meanwhile. */
			(void)ioctl(s.listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
			continue;
		}
		if (pf.revents & (POLLHUP | POLLERR))
			_exit(0); /* no task uses the filter any more */
	}
}

int cordon_rootguard_notify_start(int listener, int root, uid_t uid, gid_t gid, int *ret_pidfd, pid_t *ret_pid)
{
	pid_t parent = getpid();
	int pidfd = -EBADF;
	long pid;

	if (listener < 3 || root < 3 || listener == root)
		return -EBADF;
	pid = syscall(SYS_clone, (unsigned long)(CLONE_PIDFD | SIGCHLD), 0, &pidfd, 0, 0);
	if (pid < 0)
		return -errno;
	if (pid == 0)
		supervise(listener, root, uid, gid, parent);
	*ret_pidfd = pidfd;
	*ret_pid = (pid_t)pid;
	return 0;
}

int cordon_rootguard_notify_reap(int *pidfd, int timeout_ms)
{
	struct pollfd pf = { .fd = *pidfd, .events = POLLIN };
	bool by_itself;
	siginfo_t si = { 0 };
	int r;

	if (*pidfd < 0)
		return 0;
	do
		r = poll(&pf, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	by_itself = r > 0;
	if (!by_itself)
		(void)sys_pidfd_send_signal(*pidfd, SIGKILL, NULL, 0);
	while ((r = waitid((idtype_t)P_PIDFD, (id_t)*pidfd, &si, WEXITED)) < 0 && errno == EINTR)
		;
	if (r < 0 && errno != ECHILD) {
		r = -errno;
		closep(pidfd);
		*pidfd = -EBADF;
		return r;
	}
	closep(pidfd);
	*pidfd = -EBADF;
	return by_itself && r == 0 && si.si_code == CLD_EXITED && si.si_status == 0;
}
