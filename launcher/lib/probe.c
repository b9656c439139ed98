/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kernel capability probe: asks the running kernel what it offers, by trying
 * each thing rather than trusting version numbers or config files.
 *
 * What the probe touches, and how it cleans up (before it returns, on every
 * path):
 *   - a private directory $TMPDIR/cordon-probe-XXXXXX (mode 0700, /tmp when
 *     TMPDIR is unset or the process is setuid) holding one symlink, for the
 *     openat2 escape test; the symlink and the directory are removed;
 *   - a cgroup directory cordon-probe-<pid>-<seq> at the top of every v1
 *     controller hierarchy cordon knows (with CORDON_PROBE_FOR_SPAWN only
 *     those an instance is put in: memory, pids, cpu) and of the cgroup2
 *     hierarchy, removed with rmdir; the cgroup2 one briefly holds one clone3 child (which only
 *     waits for EOF on a pipe and exits) and two BPF programs (attached,
 *     detached, closed) that would only see processes in that empty
 *     directory: a connect4 program and a BPF LSM path_chmod program that
 *     allows everything (probe-lsm.c);
 *   - two forked children, both reaped: one unshares each namespace type in
 *     turn (and, when the host has no securityfs mounted, mounts one in its
 *     own private mount namespace to read the LSM list), one drops to
 *     uid/gid 65534 and tries to create a user namespace (not with
 *     CORDON_PROBE_FOR_SPAWN).
 * Every file descriptor the probe opens is O_CLOEXEC and closed again.
 *
 * Nothing here logs: the struct records what is missing, and only probing
 * that cannot proceed at all (no memory, no fork) is an error. */
#include "probe.h"

#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-util.h"
#include "landlock-uapi.h"
#include "probe-util.h"
#include "syscall-compat.h"

/* A unique suffix per probe within one process, so that two threads probing
 * at once never pick the same cgroup directory name. */
static atomic_uint probe_seq;

/* Kill-and-reap cleanup for the probe's own children: no error path may
 * leave a process behind. The pid is our unreaped child, so it cannot have
 * been recycled. */
static void child_killp(pid_t *pid)
{
	if (*pid > 0) {
		int saved = errno;

		/* Signal only a child that is still ours and unreaped: if the
		 * caller ignores SIGCHLD, an exited child is reaped by the
		 * kernel and its pid may already belong to someone else. */
		if (waitpid(*pid, NULL, WNOHANG) == 0) {
			(void)kill(*pid, SIGKILL);
			while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
		*pid = 0;
		errno = saved;
	}
}

/* Waits for our child and returns its wait status, or -errno. */
static int child_reap(pid_t *pid)
{
	int status;

	for (;;) {
		if (waitpid(*pid, &status, 0) >= 0)
			break;
		if (errno != EINTR) {
			/* ECHILD: reaped by the kernel (SIGCHLD ignored); either
			 * way the pid is no longer ours to signal. */
			*pid = 0;
			return -errno;
		}
	}
	*pid = 0;
	return status;
}

/* ---- Landlock ---------------------------------------------------------- */

uint64_t cordon_landlock_fs_rights_for_abi(int abi)
{
	uint64_t m;

	if (abi < 1)
		return 0;
	/* ABI 1: EXECUTE .. MAKE_SYM, bits 0-12. */
	m = (1ULL << 13) - 1;
	if (abi >= 2)
		m |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		m |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		m |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return m;
}

uint64_t cordon_landlock_net_rights_for_abi(int abi)
{
	return abi >= 4 ? LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP : 0;
}

uint64_t cordon_landlock_scopes_for_abi(int abi)
{
	return abi >= 6 ? LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL : 0;
}

static void probe_landlock(struct cordon_caps *c)
{
	/* The version call creates nothing: it only returns the ABI. ENOSYS
	 * means Landlock is not built in, EOPNOTSUPP that it is built but not
	 * in the boot-time LSM list. */
	int abi = sys_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	if (abi < 0) {
		c->landlock_abi = 0;
		c->landlock_errno = errno;
		return;
	}
	c->landlock_abi = abi;
	c->landlock_fs_handled = cordon_landlock_fs_rights_for_abi(abi);
	c->landlock_net_handled = cordon_landlock_net_rights_for_abi(abi);
	c->landlock_scoped = cordon_landlock_scopes_for_abi(abi);
	c->landlock_log_flags = abi >= 7;
}

/* ---- seccomp ----------------------------------------------------------- */

static int sys_seccomp(unsigned op, unsigned flags, void *args)
{
	return (int)syscall(__NR_seccomp, op, flags, args);
}

static bool seccomp_action_avail(uint32_t action)
{
	return sys_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

/* Installing a filter from a NULL program fails with EFAULT when filter
 * mode (and every flag passed) is supported, and with EINVAL when not. The
 * kernel validates the flags before it copies the program, so nothing is
 * installed either way. */
static bool seccomp_filter_flags_supported(unsigned flags)
{
	return sys_seccomp(SECCOMP_SET_MODE_FILTER, flags, NULL) < 0 && errno == EFAULT;
}

/* The audit arch a seccomp filter sees for this process's own syscalls. It is
 * fixed at build time (libseccomp's seccomp_arch_native() does the same; its
 * header name is shadowed by cordon's own seccomp.h on the include path). */
static uint32_t native_audit_arch(void)
{
#if defined(__x86_64__) && defined(__ILP32__)
	return AUDIT_ARCH_X86_64; /* x32 shares the x86_64 audit arch */
#elif defined(__x86_64__)
	return AUDIT_ARCH_X86_64;
#elif defined(__i386__)
	return AUDIT_ARCH_I386;
#elif defined(__aarch64__)
	return AUDIT_ARCH_AARCH64;
#elif defined(__arm__)
	return AUDIT_ARCH_ARM;
#elif defined(__riscv) && __riscv_xlen == 64
	return AUDIT_ARCH_RISCV64;
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return AUDIT_ARCH_PPC64LE;
#elif defined(__s390x__)
	return AUDIT_ARCH_S390X;
#else
	return 0;
#endif
}

static void probe_seccomp(struct cordon_caps *c)
{
	c->seccomp_filter = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 && seccomp_filter_flags_supported(0) &&
			    seccomp_action_avail(SECCOMP_RET_ALLOW);
	if (c->seccomp_filter) {
		c->seccomp_user_notif = seccomp_action_avail(SECCOMP_RET_USER_NOTIF);
		c->seccomp_kill_process = seccomp_action_avail(SECCOMP_RET_KILL_PROCESS);
		c->seccomp_log = seccomp_action_avail(SECCOMP_RET_LOG);
		c->seccomp_tsync = seccomp_filter_flags_supported(SECCOMP_FILTER_FLAG_TSYNC);
	}
	c->seccomp_native_arch = native_audit_arch();
}

/* ---- openat2 ----------------------------------------------------------- */

static const char *probe_tmpdir(void)
{
	/* secure_getenv: a setuid launcher must not let its caller choose
	 * where it creates directories. */
	const char *t = secure_getenv("TMPDIR");

	return t && t[0] == '/' ? t : "/tmp";
}

/* Tries to open `path` beneath dfd with the full resolve set; true when the
 * kernel refused it with exactly `want`. */
static bool openat2_refuses(int dfd, const char *path, int want)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = sys_openat2(dfd, path, &how, sizeof(how));

	if (fd >= 0) {
		(void)close(fd);
		return false;
	}
	return errno == want;
}

/* Checks dfd with the full resolve set: "." must open (the allowed case
 * first, else a kernel that refuses everything would look safe), `escape`
 * must fail with ELOOP and ".." and "/" with EXDEV. */
static void openat2_check(struct cordon_caps *c, int dfd, const char *escape, const char *escape_deeper)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | O_DIRECTORY,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = sys_openat2(dfd, ".", &how, sizeof(how));

	if (fd < 0) {
		c->openat2 = errno != ENOSYS;
		return;
	}
	(void)close(fd);
	c->openat2 = true;
	c->openat2_beneath = openat2_refuses(dfd, "..", EXDEV) && openat2_refuses(dfd, "/", EXDEV) &&
			     openat2_refuses(dfd, escape, ELOOP) && openat2_refuses(dfd, escape_deeper, ELOOP);
}

static int probe_openat2(struct cordon_caps *c)
{
	_cleanup_close_ int dfd = -EBADF;
	char dir[PATH_MAX];

	if (snprintf(dir, sizeof(dir), "%s/" CORDON_PROBE_DIR_PREFIX "XXXXXX", probe_tmpdir()) < (int)sizeof(dir) &&
	    mkdtemp(dir)) {
		dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		/* An absolute symlink out of the directory: the escape that
		 * RESOLVE_NO_SYMLINKS must refuse. */
		if (dfd >= 0 && symlinkat("/", dfd, "escape") == 0) {
			openat2_check(c, dfd, "escape", "escape/etc");
			(void)unlinkat(dfd, "escape", 0);
		}
		(void)rmdir(dir);
		if (c->openat2)
			return 0;
	} else if (errno == ENOMEM)
		return -ENOMEM;

	/* No writable temp dir (read-only /tmp, full disk): /proc/self has
	 * magic links of its own ("cwd" points outside it) and creating
	 * nothing is needed. */
	closep(&dfd);
	dfd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		openat2_check(c, dfd, "cwd", "cwd/.");
	return 0;
}

/* ---- namespaces and LSMs (forked children) ------------------------------ */

/* Sent by the namespace child over a pipe in one write (below PIPE_BUF, so
 * atomic). */
struct ns_report {
	uint64_t namespaces;
	int lsm_len; /* -errno when the LSM list could not be read */
	char lsm[256];
};

/* clang-format off */
static const unsigned long ns_order[] = {
	/* The user namespace goes last so that every other type is tried with
	 * the caller's own privileges; a second pass inside the new user
	 * namespace catches the types an unprivileged caller can only create
	 * there. */
	CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWNET,
	CLONE_NEWPID, CLONE_NEWCGROUP, CLONE_NEWTIME, CLONE_NEWUSER,
};
/* clang-format on */

/* Runs in a forked child of a possibly multi-threaded process: raw
 * syscalls and async-signal-safe calls only, no malloc, no stdio. */
static _noreturn_ void ns_child(int wfd, bool need_securityfs)
{
	struct ns_report r = { .lsm_len = -ENOENT };
	uint64_t eperm = 0;

	for (size_t i = 0; i < ELEMENTSOF(ns_order); i++) {
		if (unshare((int)ns_order[i]) == 0)
			r.namespaces |= ns_order[i];
		else if (errno == EPERM)
			eperm |= ns_order[i];

		/* The host has no securityfs mounted: mount one, but only in
		 * this child's fresh mount namespace, made private first so the
		 * mount cannot propagate back to the host. It dies with the
		 * child. */
		if (ns_order[i] == CLONE_NEWNS && (r.namespaces & CLONE_NEWNS) && need_securityfs &&
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
		    mount("securityfs", "/sys/kernel/security", "securityfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) ==
			    0) {
			int fd = open("/sys/kernel/security/lsm", O_RDONLY | O_CLOEXEC);

			if (fd >= 0) {
				ssize_t n = read(fd, r.lsm, sizeof(r.lsm) - 1);

				r.lsm_len = n < 0 ? -errno : (int)n;
				(void)close(fd);
			} else
				r.lsm_len = -errno;
		}
	}
	if ((r.namespaces & CLONE_NEWUSER) && eperm)
		for (size_t i = 0; i < ELEMENTSOF(ns_order); i++)
			if ((eperm & ns_order[i]) && unshare((int)ns_order[i]) == 0)
				r.namespaces |= ns_order[i];

	_exit(write(wfd, &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
}

/* Exit codes of the unprivileged user namespace child. */
enum { USERNS_OK = 0, USERNS_REFUSED = 1, USERNS_UNKNOWN = 2 };

static _noreturn_ void userns_child(void)
{
	const unsigned nobody = 65534;

	/* Raw syscalls: glibc's setresuid() would try to signal the other
	 * threads of the parent, which do not exist in this child. */
	if (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setresgid, nobody, nobody, nobody) < 0 ||
	    syscall(SYS_setresuid, nobody, nobody, nobody) < 0) {
		/* Not allowed to switch: only an already unprivileged caller
		 * can answer the question as itself. */
		if (geteuid() == 0)
			_exit(USERNS_UNKNOWN);
	}
	_exit(unshare(CLONE_NEWUSER) == 0 ? USERNS_OK : USERNS_REFUSED);
}

static bool lsm_list_has(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");

		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

static void lsm_set(struct cordon_caps *c, const char *buf, size_t len)
{
	if (len >= sizeof(c->lsm))
		len = sizeof(c->lsm) - 1;
	memcpy(c->lsm, buf, len);
	c->lsm[len] = '\0';
	c->lsm[strcspn(c->lsm, "\n")] = '\0';
	c->bpf_lsm = lsm_list_has(c->lsm, "bpf");
}

/* ---- cgroups ----------------------------------------------------------- */

/* v1 mount option naming each controller (io is "blkio" in v1). */
static const char *const v1_names[_CORDON_CTRL_MAX] = {
	[CORDON_CTRL_MEMORY] = "memory", [CORDON_CTRL_PIDS] = "pids", [CORDON_CTRL_CPU] = "cpu",
	[CORDON_CTRL_CPUSET] = "cpuset", [CORDON_CTRL_IO] = "blkio",
};

/* Every v1 controller the kernel has ever had: a "cgroup" mount naming one
 * of these is a controller hierarchy (a name=systemd-only mount is not). */
static const char *const v1_all[] = {
	"cpuset",  "cpu",	 "cpuacct",  "blkio",	"memory", "devices", "freezer",
	"net_cls", "perf_event", "net_prio", "hugetlb", "pids",	  "rdma",    "misc",
};

static bool opts_have(const char *opts, const char *name)
{
	return lsm_list_has(opts, name); /* same comma-separated token match */
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *w = s;

	for (char *r = s; *r;) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
		    r[3] <= '7') {
			*w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
			r += 4;
		} else
			*w++ = *r++;
	}
	*w = '\0';
}

static void copy_path(char *dst, const char *src)
{
	size_t n = strlen(src);

	if (n >= PATH_MAX)
		n = PATH_MAX - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

int cordon_probe_parse_mountinfo(char *text, struct cordon_caps *c)
{
	bool any_v1 = false, v2_root = false;

	c->cgroup2_mount[0] = '\0';
	for (size_t i = 0; i < _CORDON_CTRL_MAX; i++)
		c->ctrl[i] = (struct cordon_cgroup_ctrl_info){ 0 };

	for (char *line = text, *next; line && *line; line = next) {
		char *f[6], *sep, *fstype, *superopts, *save = NULL;
		size_t n = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		/* "<id> <parent> <maj:min> <root> <mountpoint> <opts> [optional...] - <fstype> <source> <superopts>" */
		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		for (char *t = strtok_r(line, " ", &save); t && n < ELEMENTSOF(f); t = strtok_r(NULL, " ", &save))
			f[n++] = t;
		if (n < 5)
			continue;
		save = NULL;
		fstype = strtok_r(sep + 3, " ", &save);
		(void)strtok_r(NULL, " ", &save); /* source */
		superopts = strtok_r(NULL, " ", &save);
		if (!fstype || !superopts)
			continue;
		unescape_octal(f[4]);
		if (f[4][0] != '/' || strlen(f[4]) >= PATH_MAX)
			continue;

		if (strcmp(fstype, "cgroup2") == 0) {
			/* Prefer a mount of the hierarchy's root over a bind mount
			 * of a subdirectory. */
			bool is_root = strcmp(f[3], "/") == 0;

			if (!c->cgroup2_mount[0] || (is_root && !v2_root)) {
				copy_path(c->cgroup2_mount, f[4]);
				v2_root = is_root;
			}
		} else if (strcmp(fstype, "cgroup") == 0) {
			for (size_t k = 0; k < ELEMENTSOF(v1_all); k++)
				if (opts_have(superopts, v1_all[k]))
					any_v1 = true;
			for (size_t k = 0; k < _CORDON_CTRL_MAX; k++)
				if (!c->ctrl[k].available && opts_have(superopts, v1_names[k])) {
					c->ctrl[k].available = true;
					c->ctrl[k].v2 = false;
					copy_path(c->ctrl[k].path, f[4]);
				}
		}
	}

	if (c->cgroup2_mount[0])
		c->cgroup_layout = any_v1 ? CORDON_CGROUP_HYBRID : CORDON_CGROUP_V2;
	else
		c->cgroup_layout = any_v1 ? CORDON_CGROUP_V1 : CORDON_CGROUP_NONE;
	return 0;
}

static bool word_list_has(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; *p;) {
		size_t len;

		p += strspn(p, " \n");
		len = strcspn(p, " \n");
		if (len == n && strncmp(p, word, n) == 0)
			return true;
		p += len;
	}
	return false;
}

/* mkdir of a probe cgroup. A directory of the same name can only be left by
 * an earlier process with our pid that died mid-probe: rmdir it (that fails
 * harmlessly if anything still lives in it) and try once more. */
static int cgroup_mkdir_fresh(const char *path)
{
	if (mkdir(path, 0755) == 0)
		return 0;
	if (errno != EEXIST || rmdir(path) < 0 || mkdir(path, 0755) < 0)
		return -errno;
	return 0;
}

/* mkdir + rmdir of `name` under `parent`. */
static bool cgroup_try_child(const char *parent, const char *name)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", parent, name) >= (int)sizeof(path))
		return false;
	if (cgroup_mkdir_fresh(path) < 0)
		return false;
	return rmdir(path) == 0;
}

/* rmdir of a cgroup that just held a process: the kernel may still be
 * unlinking the exited task, so EBUSY is retried briefly. */
static int cgroup_rmdir(const char *path)
{
	for (int i = 0; i < 200; i++) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		(void)nanosleep(&(struct timespec){ .tv_nsec = 500 * 1000 }, NULL);
	}
	return -EBUSY;
}

static bool cgroup_procs_has(int dfd, pid_t pid)
{
	_cleanup_free_ char *buf = NULL;
	char want[16];

	if (read_file_bounded(dfd, "cgroup.procs", 4096, &buf, NULL) < 0)
		return false;
	(void)snprintf(want, sizeof(want), "%d", (int)pid);
	return word_list_has(buf, want);
}

/* clone3(CLONE_INTO_CGROUP) of a child that waits for EOF on a pipe, so the
 * parent can see it listed in the target's cgroup.procs before it exits. */
static bool probe_clone_into_cgroup(int cg_fd)
{
	_cleanup_close_ int rfd = -EBADF, wfd = -EBADF;
	_cleanup_(child_killp) pid_t pid = 0;
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP,
		.exit_signal = SIGCHLD,
		.cgroup = (uint64_t)cg_fd,
	};
	int p[2], status;
	bool placed;
	long r;

	if (pipe2(p, O_CLOEXEC) < 0)
		return false;
	rfd = p[0];
	wfd = p[1];

	r = sys_clone3(&args, sizeof(args));
	if (r < 0)
		return false;
	if (r == 0) {
		char b;

		(void)close(wfd);
		_exit(read(rfd, &b, 1) >= 0 ? 0 : 1);
	}
	pid = (pid_t)r;
	placed = cgroup_procs_has(cg_fd, pid);
	closep(&wfd); /* EOF: the child exits */
	wfd = -EBADF;
	status = child_reap(&pid);
	return placed && status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* ---- BPF --------------------------------------------------------------- */

static void probe_bpf(struct cordon_caps *c, int cg_fd)
{
	_cleanup_close_ int prog = -EBADF;
	union bpf_attr attr;

	prog = cordon_probe_bpf_load_allow(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT, 0);
	if (prog < 0) {
		/* ENOSYS: no bpf(); EPERM: not allowed for this caller. Any
		 * other refusal means the syscall answered but the program type
		 * is unknown. */
		c->bpf_syscall = errno != ENOSYS && errno != EPERM;
		return;
	}
	c->bpf_syscall = true;
	if (cg_fd < 0)
		return;

	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (uint32_t)cg_fd;
	attr.attach_bpf_fd = (uint32_t)prog;
	attr.attach_type = BPF_CGROUP_INET4_CONNECT;
	if (cordon_probe_sys_bpf(BPF_PROG_ATTACH, &attr) < 0)
		return;
	c->bpf_cgroup_sock_addr = cordon_probe_sys_bpf(BPF_PROG_DETACH, &attr) == 0;
}

static int probe_cgroups(struct cordon_caps *c, const char *name, unsigned flags)
{
	_cleanup_free_ char *mi = NULL;
	_cleanup_close_ int cg_fd = -EBADF;
	char dir[PATH_MAX], ctrls[512] = "";
	bool made = false;
	int r;

	r = read_file_bounded(AT_FDCWD, "/proc/self/mountinfo", 4 * 1024 * 1024, &mi, NULL);
	if (r == -ENOMEM)
		return r;
	if (r >= 0)
		(void)cordon_probe_parse_mountinfo(mi, c);

	/* v1 hierarchies: one mkdir/rmdir per distinct mount point (cpu may
	 * share one with cpuacct, others could be co-mounted). */
	for (size_t i = 0; i < _CORDON_CTRL_MAX; i++) {
		struct cordon_cgroup_ctrl_info *ci = &c->ctrl[i];

		if (!ci->available)
			continue;
		if ((flags & CORDON_PROBE_FOR_SPAWN) && !(CORDON_CTRLS_INSTANCE & (1u << i))) {
			c->ctrl_untested |= 1u << i;
			continue;
		}
		for (size_t j = 0; j < i; j++)
			if (c->ctrl[j].available && strcmp(c->ctrl[j].path, ci->path) == 0) {
				ci->can_create = c->ctrl[j].can_create;
				goto next;
			}
		ci->can_create = cgroup_try_child(ci->path, name);
	next:;
	}

	if (!c->cgroup2_mount[0]) {
		probe_bpf(c, -EBADF);
		cordon_probe_lsm_cgroup(c, -EBADF);
		return 0;
	}

	/* Controllers of the cgroup2 hierarchy: those its root offers that
	 * no v1 hierarchy has claimed. */
	{
		char path[PATH_MAX], buf[512];

		if (snprintf(path, sizeof(path), "%s/cgroup.controllers", c->cgroup2_mount) < (int)sizeof(path) &&
		    read_small_file(path, buf, sizeof(buf)) >= 0)
			for (size_t i = 0; i < _CORDON_CTRL_MAX; i++)
				if (!c->ctrl[i].available && word_list_has(buf, cordon_cgroup_ctrl_name(i))) {
					c->ctrl[i].available = true;
					c->ctrl[i].v2 = true;
					copy_path(c->ctrl[i].path, c->cgroup2_mount);
				}
	}

	if (snprintf(dir, sizeof(dir), "%s/%s", c->cgroup2_mount, name) < (int)sizeof(dir) &&
	    cgroup_mkdir_fresh(dir) == 0) {
		made = true;
		cg_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (cg_fd >= 0) {
		/* A v2 controller is usable in a child only when the parent
		 * enables it for its children; the child's cgroup.controllers
		 * says exactly that. */
		_cleanup_free_ char *buf = NULL;

		if (read_file_bounded(cg_fd, "cgroup.controllers", sizeof(ctrls) - 1, &buf, NULL) >= 0)
			(void)snprintf(ctrls, sizeof(ctrls), "%s", buf);
		for (size_t i = 0; i < _CORDON_CTRL_MAX; i++)
			if (c->ctrl[i].available && c->ctrl[i].v2)
				c->ctrl[i].can_create = word_list_has(ctrls, cordon_cgroup_ctrl_name(i));

		/* cgroup.kill never exists in the root cgroup, so look for it
		 * in the child. */
		c->cgroup_kill = faccessat(cg_fd, "cgroup.kill", F_OK, 0) == 0;
		c->clone_into_cgroup = probe_clone_into_cgroup(cg_fd);
	}
	probe_bpf(c, cg_fd);
	cordon_probe_lsm_cgroup(c, cg_fd);

	closep(&cg_fd);
	cg_fd = -EBADF;
	if (made)
		(void)cgroup_rmdir(dir);
	return 0;
}

/* ---- process-level features -------------------------------------------- */

static void probe_process(struct cordon_caps *c)
{
	struct utsname u;
	unsigned last_cap = CAP_LAST_CAP;
	char buf[32];
	int fd, r;

	if (uname(&u) == 0)
		(void)snprintf(c->kernel_release, sizeof(c->kernel_release), "%s", u.release);

	fd = sys_pidfd_open(getpid(), 0);
	c->pidfd_open = fd >= 0;
	if (fd >= 0)
		(void)close(fd);
	/* pidfd_getfd on no pidfd: EBADF where the syscall exists. */
	c->pidfd_getfd = syscall(__NR_pidfd_getfd, -1, 0, 0) < 0 && errno == EBADF;

	/* Closing the range [~0U, ~0U] touches nothing (no fd can be that
	 * large) but needs the syscall. */
	c->close_range = sys_close_range(~0U, ~0U, 0) == 0;

	r = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	c->no_new_privs = r >= 0;
	c->no_new_privs_set = r == 1;

	/* The running kernel may know more capabilities than our headers. */
	if (read_small_file("/proc/sys/kernel/cap_last_cap", buf, sizeof(buf)) > 0) {
		unsigned long v = strtoul(buf, NULL, 10);

		if (v < 64)
			last_cap = (unsigned)v;
	}
	if (capng_get_caps_process() == 0)
		for (unsigned i = 0; i <= last_cap; i++) {
			if (capng_have_capability(CAPNG_EFFECTIVE, i))
				c->caller_caps_effective |= 1ULL << i;
			if (capng_have_capability(CAPNG_BOUNDING_SET, i))
				c->caller_caps_bounding |= 1ULL << i;
		}
}

/* ---- the probe --------------------------------------------------------- */

static uint64_t now_usec(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

int cordon_probe(struct cordon_caps *ret)
{
	return cordon_probe_opts(ret, 0);
}

int cordon_probe_opts(struct cordon_caps *ret, unsigned flags)
{
	_cleanup_(child_killp) pid_t ns_pid = 0, userns_pid = 0;
	_cleanup_close_ int rfd = -EBADF;
	struct cordon_caps c = { 0 };
	struct ns_report rep;
	uint64_t t0 = now_usec();
	char name[64], lsm[256];
	bool need_securityfs;
	ssize_t n;
	int p[2], r, status;

	if (!ret || (flags & ~(unsigned)CORDON_PROBE_FOR_SPAWN))
		return -EINVAL;

	(void)snprintf(name, sizeof(name), "cordon-probe-%d-%u", (int)getpid(), atomic_fetch_add(&probe_seq, 1));

	n = read_small_file("/sys/kernel/security/lsm", lsm, sizeof(lsm));
	need_securityfs = n == -ENOENT;
	if (n >= 0)
		lsm_set(&c, lsm, (size_t)n);

	/* The two children run while the parent probes the rest: namespace
	 * creation (the network namespace above all) is the slowest part. */
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	rfd = p[0];
	ns_pid = fork();
	if (ns_pid < 0) {
		r = -errno;
		(void)close(p[1]);
		return r;
	}
	if (ns_pid == 0) {
		(void)close(rfd);
		ns_child(p[1], need_securityfs);
	}
	(void)close(p[1]);

	if (flags & CORDON_PROBE_FOR_SPAWN)
		c.userns_untested = true;
	else {
		userns_pid = fork();
		if (userns_pid < 0)
			return -errno;
		if (userns_pid == 0)
			userns_child();
	}

	probe_landlock(&c);
	probe_seccomp(&c);
	probe_process(&c);
	r = probe_openat2(&c);
	if (r < 0)
		return r;
	r = probe_cgroups(&c, name, flags);
	if (r < 0)
		return r;
	c.btf_vmlinux = access("/sys/kernel/btf/vmlinux", R_OK) == 0;

	n = read_full(rfd, &rep, sizeof(rep));
	status = child_reap(&ns_pid);
	if (n == (ssize_t)sizeof(rep) && status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		c.namespaces = (unsigned long)rep.namespaces;
		if (need_securityfs && rep.lsm_len >= 0)
			lsm_set(&c, rep.lsm, (size_t)rep.lsm_len);
	}
	/* Attached is not enough: the hooks run only when "bpf" is an active
	 * LSM (known only now when securityfs was not mounted here). */
	if (c.bpf_lsm_cgroup && !c.bpf_lsm) {
		c.bpf_lsm_cgroup = false;
		c.bpf_lsm_cgroup_errno = EOPNOTSUPP;
	}
	if (userns_pid > 0) {
		status = child_reap(&userns_pid);
		c.userns_unprivileged = status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == USERNS_OK;
	}

	c.probe_usec = now_usec() - t0;
	*ret = c;
	return 0;
}
