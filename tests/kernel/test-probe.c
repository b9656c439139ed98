/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordon_probe() against independent evidence from the running kernel. Each
 * test asks the kernel itself, by code that shares nothing with the probe
 * (getmntent instead of the mountinfo parser, libbpf instead of raw bpf(),
 * real seccomp filters and a real openat2 escape, procfs and sysfs files),
 * and compares. Nothing here is a hard-coded value of this machine. Restricted
 * code runs in forked children with CHILD_CHECK; the parent asserts exit
 * statuses and signals. Needs root. */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <dirent.h>
#include <grp.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <mntent.h>
#include <pthread.h>
#include <netinet/in.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fd-util.h"
#include "landlock-uapi.h"
#include "probe-util.h"
#include "probe.h"
#include "syscall-compat.h"
#include "test-support.h"

static struct cordon_caps caps;

#define N_ELEM(x) (sizeof(x) / sizeof((x)[0]))

static int group_setup(void **state)
{
	(void)state;
	cordon_test_require_root();
	if (cordon_probe(&caps) < 0)
		return -1;
	return 0;
}

/* Runs fn in a forked child and returns its wait status. */
static int run_child(void (*fn)(const void *), const void *arg)
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fn(arg);
		_exit(0);
	}
	status = cordon_test_wait(pid);
	assert_true(status >= 0);
	return status;
}

static void assert_exited_0(int status)
{
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("child: wait status 0x%x (exit %d, signal %d)", status,
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static bool read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return true;
}

/* Value of "Key:\t..." in /proc/self/status, or "" when absent. */
static void proc_status(const char *key, char *out, size_t size)
{
	char line[256];
	size_t kl = strlen(key);
	FILE *f = fopen("/proc/self/status", "re");

	out[0] = '\0';
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			char *v = line + kl + 1;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			snprintf(out, size, "%s", v);
			break;
		}
	fclose(f);
}

static bool comma_list_has(const char *list, const char *word)
{
	char buf[512], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (strcmp(t, word) == 0)
			return true;
	return false;
}

/* ---- kernel, Landlock ---------------------------------------------------- */

static void test_kernel_release(void **state)
{
	char rel[128];

	(void)state;
	assert_true(read_text("/proc/sys/kernel/osrelease", rel, sizeof(rel)));
	assert_string_equal(caps.kernel_release, rel);
}

static void test_landlock_abi(void **state)
{
	long abi;

	(void)state;
	errno = 0;
	abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		assert_int_equal(caps.landlock_abi, 0);
		assert_int_equal(caps.landlock_errno, errno);
		assert_true(errno == ENOSYS || errno == EOPNOTSUPP);
	} else
		assert_int_equal(caps.landlock_abi, abi);

	/* The LSM list is the kernel's other statement about Landlock. */
	if (caps.lsm[0])
		assert_int_equal(comma_list_has(caps.lsm, "landlock"), caps.landlock_abi > 0);
	if (!caps.landlock_abi)
		cordon_test_skip("Landlock is not available (errno %d)", caps.landlock_errno);
}

static int ruleset(uint64_t fs, uint64_t net, uint64_t scoped, size_t size)
{
	struct cordon_landlock_ruleset_attr attr = { .handled_access_fs = fs,
						     .handled_access_net = net,
						     .scoped = scoped };

	return sys_landlock_create_ruleset(&attr, size, 0);
}

static void expect_ruleset(uint64_t fs, uint64_t net, uint64_t scoped, size_t size, int want_errno)
{
	int fd = ruleset(fs, net, scoped, size);

	if (want_errno == 0) {
		if (fd < 0)
			fail_msg("ruleset fs=%#" PRIx64 " net=%#" PRIx64 " scoped=%#" PRIx64 ": %s", fs, net, scoped,
				 strerror(errno));
		close(fd);
	} else {
		assert_int_equal(fd, -1);
		assert_int_equal(errno, want_errno);
	}
}

/* The kernel accepts exactly the masks the probe reports: each one works,
 * and one right more is refused with EINVAL. */
static void test_landlock_masks(void **state)
{
	const size_t full = sizeof(struct cordon_landlock_ruleset_attr);
	uint64_t fs = caps.landlock_fs_handled;

	(void)state;
	assert_true(fs != 0);
	assert_int_equal(fs & (fs + 1), 0); /* contiguous from bit 0 */
	expect_ruleset(fs, 0, 0, offsetof(struct cordon_landlock_ruleset_attr, handled_access_net), 0);
	expect_ruleset(fs | (fs + 1), 0, 0, offsetof(struct cordon_landlock_ruleset_attr, handled_access_net), EINVAL);

	if (caps.landlock_net_handled) {
		uint64_t net = caps.landlock_net_handled;

		expect_ruleset(fs, net, 0, offsetof(struct cordon_landlock_ruleset_attr, scoped), 0);
		expect_ruleset(fs, net | (net + 1), 0, offsetof(struct cordon_landlock_ruleset_attr, scoped), EINVAL);
	} else
		assert_true(caps.landlock_abi < 4);

	if (caps.landlock_scoped) {
		uint64_t sc = caps.landlock_scoped;

		expect_ruleset(fs, caps.landlock_net_handled, sc, full, 0);
		expect_ruleset(fs, caps.landlock_net_handled, sc | (sc + 1), full, EINVAL);
	} else
		assert_true(caps.landlock_abi < 6);
}

static void child_landlock_log(const void *arg)
{
	bool expect = *(const bool *)arg;

	/* ABI 7 accepts LOG_SUBDOMAINS_OFF with no ruleset (-1); older ABIs
	 * refuse the flag. In a child: it changes this process's domain. */
	if (expect)
		CHILD_CHECK(sys_landlock_restrict_self(-1, LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF) == 0);
	else
		CHILD_CHECK_ERRNO(sys_landlock_restrict_self(-1, LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF), EINVAL);
}

static void test_landlock_log_flags(void **state)
{
	(void)state;
	assert_exited_0(run_child(child_landlock_log, &caps.landlock_log_flags));
}

/* ---- seccomp ------------------------------------------------------------- */

struct filter_case {
	uint32_t action; /* for getppid */
	unsigned flags;
	int expect; /* see child_seccomp */
};

enum { EXPECT_ERRNO, EXPECT_RETURNS, EXPECT_INSTALLED, EXPECT_REFUSED };

/* Installs "native arch and getppid → action, else allow" and calls
 * getppid. A filter with the wrong arch would let getppid through. */
static void child_seccomp(const void *arg)
{
	const struct filter_case *fc = arg;
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, caps.seccomp_native_arch, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, fc->action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { .len = N_ELEM(prog), .filter = prog };
	long r;

	CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	r = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, fc->flags, &fp);
	switch (fc->expect) {
	case EXPECT_REFUSED:
		CHILD_CHECK(r == -1 && errno == EINVAL);
		return;
	case EXPECT_INSTALLED:
		CHILD_CHECK(r >= 0);
		return;
	default:
		break;
	}
	CHILD_CHECK(r >= 0);
	if (fc->expect == EXPECT_ERRNO)
		CHILD_CHECK_ERRNO(syscall(__NR_getppid), EXDEV);
	else
		CHILD_CHECK(syscall(__NR_getppid) > 0);
	/* Other syscalls still pass. */
	CHILD_CHECK(syscall(__NR_getpid) > 0);
}

static void test_seccomp(void **state)
{
	char filters[64];
	int st;

	(void)state;
	/* procfs shows Seccomp_filters exactly when filter mode is built in. */
	proc_status("Seccomp_filters", filters, sizeof(filters));
	assert_int_equal(filters[0] != '\0', caps.seccomp_filter);
	if (!caps.seccomp_filter)
		cordon_test_skip("seccomp filter mode is not available");

	/* A real filter with the reported native arch takes effect. */
	assert_exited_0(run_child(child_seccomp, &(struct filter_case){ SECCOMP_RET_ERRNO | EXDEV, 0, EXPECT_ERRNO }));

	/* KILL_PROCESS: the whole process dies of SIGSYS. */
	st = run_child(child_seccomp, &(struct filter_case){ SECCOMP_RET_KILL_PROCESS, 0, EXPECT_ERRNO });
	if (caps.seccomp_kill_process) {
		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), SIGSYS);
	}

	/* LOG: the call is allowed (and logged). */
	if (caps.seccomp_log)
		assert_exited_0(run_child(child_seccomp, &(struct filter_case){ SECCOMP_RET_LOG, 0, EXPECT_RETURNS }));

	/* USER_NOTIF: a listener fd comes back. */
	assert_exited_0(run_child(
		child_seccomp, &(struct filter_case){ SECCOMP_RET_ALLOW, SECCOMP_FILTER_FLAG_NEW_LISTENER,
						      caps.seccomp_user_notif ? EXPECT_INSTALLED : EXPECT_REFUSED }));
	/* TSYNC. */
	assert_exited_0(run_child(child_seccomp,
				  &(struct filter_case){ SECCOMP_RET_ALLOW, SECCOMP_FILTER_FLAG_TSYNC,
							 caps.seccomp_tsync ? EXPECT_INSTALLED : EXPECT_REFUSED }));
	/* An unknown flag is refused: the negative case the probe relies on. */
	assert_exited_0(run_child(child_seccomp, &(struct filter_case){ SECCOMP_RET_ALLOW, 1U << 30, EXPECT_REFUSED }));
}

/* ---- openat2 ------------------------------------------------------------- */

static void test_openat2_escape(void **state)
{
	const struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char *dir = cordon_test_mkdtemp("openat2");
	int dfd, fd;

	(void)state;
	dfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	assert_true(dfd >= 0);
	assert_int_equal(symlinkat("/etc", dfd, "out"), 0);
	fd = openat(dfd, "inside", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);

	/* The allowed case, then the escapes. */
	fd = sys_openat2(dfd, "inside", &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS) {
		assert_false(caps.openat2);
		assert_false(caps.openat2_beneath);
	} else {
		assert_true(fd >= 0);
		close(fd);
		assert_true(caps.openat2);

		errno = 0;
		assert_int_equal(sys_openat2(dfd, "out/passwd", &how, sizeof(how)), -1);
		assert_int_equal(errno, ELOOP);
		assert_int_equal(sys_openat2(dfd, "../../etc/passwd", &how, sizeof(how)), -1);
		assert_int_equal(errno, EXDEV);
		assert_int_equal(sys_openat2(dfd, "/etc/passwd", &how, sizeof(how)), -1);
		assert_int_equal(errno, EXDEV);
		/* Without the resolve flags the same paths do escape: the
		 * refusal above comes from the flags. */
		fd = openat(dfd, "out/passwd", O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		close(fd);
		assert_true(caps.openat2_beneath);
	}
	close(dfd);
	assert_int_equal(cordon_test_rm_rf(dir), 0);
	free(dir);
}

static void child_probe_no_tmpdir(const void *arg)
{
	struct cordon_caps c;

	(void)arg;
	/* A temp dir that cannot be created: the probe falls back to
	 * /proc/self's magic links and still proves the refusal. */
	CHILD_CHECK(setenv("TMPDIR", "/proc/cordon-no-such-dir", 1) == 0);
	CHILD_CHECK(cordon_probe(&c) == 0);
	CHILD_CHECK(c.openat2 == caps.openat2);
	CHILD_CHECK(c.openat2_beneath == caps.openat2_beneath);
}

static void test_openat2_without_tmpdir(void **state)
{
	(void)state;
	assert_exited_0(run_child(child_probe_no_tmpdir, NULL));
}

/* ---- namespaces ---------------------------------------------------------- */

static const struct {
	unsigned long flag;
	const char *proc; /* /proc/self/ns/<proc> */
} ns_types[] = {
	{ CLONE_NEWUSER, "user" }, { CLONE_NEWNS, "mnt" },  { CLONE_NEWPID, "pid" },	   { CLONE_NEWNET, "net" },
	{ CLONE_NEWIPC, "ipc" },   { CLONE_NEWUTS, "uts" }, { CLONE_NEWCGROUP, "cgroup" }, { CLONE_NEWTIME, "time" },
};

static void child_unshare(const void *arg)
{
	CHILD_CHECK(unshare((int)*(const unsigned long *)arg) == 0);
}

static void test_namespaces(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEM(ns_types); i++) {
		char path[64];
		bool exists, created;
		int st;

		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_types[i].proc);
		exists = access(path, F_OK) == 0;
		st = run_child(child_unshare, &ns_types[i].flag);
		created = WIFEXITED(st) && WEXITSTATUS(st) == 0;
		if (created != !!(caps.namespaces & ns_types[i].flag))
			fail_msg("namespace %s: created by the test %d, probe says %d", ns_types[i].proc, created,
				 !!(caps.namespaces & ns_types[i].flag));
		/* A type the kernel lacks has no /proc/self/ns entry. */
		if (created)
			assert_true(exists);
	}
}

static void child_userns_nobody(const void *arg)
{
	(void)arg;
	CHILD_CHECK(setgroups(0, NULL) == 0);
	CHILD_CHECK(setresgid(65534, 65534, 65534) == 0);
	CHILD_CHECK(setresuid(65534, 65534, 65534) == 0);
	CHILD_CHECK(geteuid() == 65534);
	if (unshare(CLONE_NEWUSER) != 0)
		_exit(10);
}

static void test_userns_unprivileged(void **state)
{
	char buf[32];
	int st;

	(void)state;
	st = run_child(child_userns_nobody, NULL);
	assert_true(WIFEXITED(st));
	assert_true(WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 10);
	assert_int_equal(WEXITSTATUS(st) == 0, caps.userns_unprivileged);
	/* The sysctls that forbid it, where present, agree. */
	if (read_text("/proc/sys/user/max_user_namespaces", buf, sizeof(buf)) && strcmp(buf, "0") == 0)
		assert_false(caps.userns_unprivileged);
	if (read_text("/proc/sys/kernel/unprivileged_userns_clone", buf, sizeof(buf)) && strcmp(buf, "0") == 0)
		assert_false(caps.userns_unprivileged);
}

/* ---- cgroups ------------------------------------------------------------- */

static const char *const v1_opt[_CORDON_CTRL_MAX] = { "memory", "pids", "cpu", "cpuset", "blkio" };

struct mounts {
	char cgroup2[PATH_MAX];
	char v1[_CORDON_CTRL_MAX][PATH_MAX];
	bool any_v1;
};

/* An independent reading of the mount table: getmntent on /proc/self/mounts. */
static void read_mounts(struct mounts *m)
{
	static const char *const all_v1[] = { "cpuset",	 "cpu",	    "cpuacct", "blkio",	     "memory",
					      "devices", "freezer", "net_cls", "perf_event", "net_prio",
					      "hugetlb", "pids",    "rdma",    "misc" };
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *e;

	memset(m, 0, sizeof(*m));
	assert_non_null(f);
	while ((e = getmntent(f))) {
		if (strcmp(e->mnt_type, "cgroup2") == 0 && !m->cgroup2[0])
			snprintf(m->cgroup2, sizeof(m->cgroup2), "%s", e->mnt_dir);
		if (strcmp(e->mnt_type, "cgroup") != 0)
			continue;
		for (size_t i = 0; i < N_ELEM(all_v1); i++)
			if (hasmntopt(e, all_v1[i]) && comma_list_has(e->mnt_opts, all_v1[i]))
				m->any_v1 = true;
		for (int i = 0; i < _CORDON_CTRL_MAX; i++)
			if (!m->v1[i][0] && comma_list_has(e->mnt_opts, v1_opt[i]))
				snprintf(m->v1[i], sizeof(m->v1[i]), "%s", e->mnt_dir);
	}
	endmntent(f);
}

static bool filesystems_has(const char *fs)
{
	char line[128];
	bool found = false;
	FILE *f = fopen("/proc/filesystems", "re");

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		char *t = strrchr(line, '\t');

		t = t ? t + 1 : line;
		t[strcspn(t, "\n")] = '\0';
		found = strcmp(t, fs) == 0;
	}
	fclose(f);
	return found;
}

/* Hierarchy id of a controller in /proc/cgroups (0 = cgroup2 or unbound),
 * -1 when the kernel does not list it. */
static int proc_cgroups_hierarchy(const char *name)
{
	char line[256], n[64];
	int h = -1, hier, num, en;
	FILE *f = fopen("/proc/cgroups", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %d %d %d", n, &hier, &num, &en) == 4 && strcmp(n, name) == 0)
			h = hier;
	fclose(f);
	return h;
}

static bool word_in(const char *text, const char *word)
{
	char buf[1024], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", text);
	for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
		if (strcmp(t, word) == 0)
			return true;
	return false;
}

static void test_cgroup_layout(void **state)
{
	struct mounts m;
	enum cordon_cgroup_layout want;

	(void)state;
	read_mounts(&m);
	if (m.cgroup2[0])
		want = m.any_v1 ? CORDON_CGROUP_HYBRID : CORDON_CGROUP_V2;
	else
		want = m.any_v1 ? CORDON_CGROUP_V1 : CORDON_CGROUP_NONE;
	assert_int_equal(caps.cgroup_layout, want);
	assert_string_equal(caps.cgroup2_mount, m.cgroup2);
	/* A mounted cgroup2 means the kernel registered the filesystem. */
	if (m.cgroup2[0])
		assert_true(filesystems_has("cgroup2"));
	if (m.any_v1)
		assert_true(filesystems_has("cgroup"));
}

static void test_cgroup_controllers(void **state)
{
	struct mounts m;
	char v2ctrls[1024] = "";

	(void)state;
	read_mounts(&m);
	if (m.cgroup2[0]) {
		char p[PATH_MAX + 32];

		snprintf(p, sizeof(p), "%s/cgroup.controllers", m.cgroup2);
		assert_true(read_text(p, v2ctrls, sizeof(v2ctrls)));
	}
	for (int i = 0; i < _CORDON_CTRL_MAX; i++) {
		const struct cordon_cgroup_ctrl_info *ci = &caps.ctrl[i];
		const char *name = cordon_cgroup_ctrl_name(i);
		int h = proc_cgroups_hierarchy(v1_opt[i]);

		if (m.v1[i][0]) {
			assert_true(ci->available);
			assert_false(ci->v2);
			assert_string_equal(ci->path, m.v1[i]);
			/* /proc/cgroups binds it to a v1 hierarchy. */
			assert_true(h > 0);
		} else if (m.cgroup2[0] && word_in(v2ctrls, name)) {
			assert_true(ci->available);
			assert_true(ci->v2);
			assert_string_equal(ci->path, m.cgroup2);
			assert_true(h <= 0);
		} else {
			if (ci->available)
				fail_msg("controller %s: probe says available at %s, the mount table disagrees", name,
					 ci->path);
		}
	}
}

/* The test's own mkdir/rmdir in every hierarchy the probe reports. */
static void test_cgroup_can_create(void **state)
{
	char name[64];

	(void)state;
	snprintf(name, sizeof(name), "cordon-test-probe-%d", (int)getpid());
	for (int i = 0; i < _CORDON_CTRL_MAX; i++) {
		const struct cordon_cgroup_ctrl_info *ci = &caps.ctrl[i];
		char dir[PATH_MAX + 64], ctrls[1024] = "", p[PATH_MAX + 96];
		bool ok;

		if (!ci->available) {
			assert_false(ci->can_create);
			continue;
		}
		snprintf(dir, sizeof(dir), "%s/%s", ci->path, name);
		ok = mkdir(dir, 0755) == 0;
		if (ok && ci->v2) {
			/* In v2 the controller must also be enabled for the child. */
			snprintf(p, sizeof(p), "%s/cgroup.controllers", dir);
			ok = read_text(p, ctrls, sizeof(ctrls)) && word_in(ctrls, cordon_cgroup_ctrl_name(i));
		}
		if (access(dir, F_OK) == 0)
			assert_int_equal(rmdir(dir), 0);
		if (ok != ci->can_create)
			fail_msg("controller %s at %s: test created a child %d, probe says %d",
				 cordon_cgroup_ctrl_name(i), ci->path, ok, ci->can_create);
	}
}

struct cg2 {
	char dir[PATH_MAX + 64];
	int fd;
};

static void cg2_make(struct cg2 *g, const char *tag)
{
	if (!caps.cgroup2_mount[0])
		cordon_test_skip("no cgroup2 hierarchy");
	snprintf(g->dir, sizeof(g->dir), "%s/cordon-test-probe-%s-%d", caps.cgroup2_mount, tag, (int)getpid());
	assert_int_equal(mkdir(g->dir, 0755), 0);
	g->fd = open(g->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(g->fd >= 0);
}

static void cg2_remove(struct cg2 *g)
{
	close(g->fd);
	for (int i = 0; i < 1000; i++) {
		if (rmdir(g->dir) == 0)
			return;
		assert_int_equal(errno, EBUSY);
		usleep(1000);
	}
	fail_msg("rmdir %s: still busy", g->dir);
}

static void join_cgroup(const char *dir)
{
	char p[PATH_MAX + 96];
	int fd;

	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(write(fd, "0", 1) == 1);
	close(fd);
}

/* cgroup.kill really kills what is inside. */
static void test_cgroup_kill(void **state)
{
	struct cg2 g;
	char p[PATH_MAX + 96];
	int pipefd[2], st;
	char b;
	pid_t pid;

	(void)state;
	cg2_make(&g, "kill");
	snprintf(p, sizeof(p), "%s/cgroup.kill", g.dir);
	assert_int_equal(access(p, W_OK) == 0, caps.cgroup_kill);
	if (caps.cgroup_kill) {
		assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			join_cgroup(g.dir);
			CHILD_CHECK(write(pipefd[1], "x", 1) == 1);
			for (;;)
				pause();
		}
		close(pipefd[1]);
		assert_int_equal(read(pipefd[0], &b, 1), 1);
		close(pipefd[0]);
		assert_int_equal(write_small_file(p, "1"), 0);
		st = cordon_test_wait(pid);
		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), SIGKILL);
	}
	cg2_remove(&g);
}

/* clone3(CLONE_INTO_CGROUP): the child sees itself in the target cgroup. */
static void test_clone_into_cgroup(void **state)
{
	struct cg2 g;
	struct clone_args args = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD };
	char want[PATH_MAX + 64];
	bool placed = false;
	long pid;

	(void)state;
	cg2_make(&g, "clone");
	args.cgroup = (uint64_t)g.fd;
	snprintf(want, sizeof(want), "0::/cordon-test-probe-clone-%d", (int)getpid());
	fflush(NULL);
	pid = sys_clone3(&args, sizeof(args));
	if (pid == 0) {
		char buf[4096];
		int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
		ssize_t n;

		CHILD_CHECK(fd >= 0);
		n = read(fd, buf, sizeof(buf) - 1);
		CHILD_CHECK(n > 0);
		buf[n] = '\0';
		CHILD_CHECK(strstr(buf, want) != NULL);
		_exit(0);
	}
	if (pid > 0) {
		int st = cordon_test_wait((pid_t)pid);

		placed = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	assert_int_equal(placed, caps.clone_into_cgroup);
	cg2_remove(&g);
}

/* ---- BPF ----------------------------------------------------------------- */

static void test_btf(void **state)
{
	struct stat st;

	(void)state;
	assert_int_equal(stat("/sys/kernel/btf/vmlinux", &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0,
			 caps.btf_vmlinux);
}

static void child_connect(const void *arg)
{
	const struct {
		const char *dir;
		uint16_t port;
		int want_errno;
	} *a = arg;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(a->port) };
	int s;

	join_cgroup(a->dir);
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHILD_CHECK(s >= 0);
	if (a->want_errno)
		CHILD_CHECK_ERRNO(connect(s, (struct sockaddr *)&sin, sizeof(sin)), a->want_errno);
	else
		CHILD_CHECK(connect(s, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	close(s);
}

/* A connect4 program loaded with libbpf and attached to a cgroup2 directory
 * really decides a connect() from inside it: the sock_addr evidence. */
static void test_bpf_cgroup_sock_addr(void **state)
{
	const struct bpf_insn deny[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_CGROUP_INET4_CONNECT);
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sin);
	struct {
		const char *dir;
		uint16_t port;
		int want_errno;
	} arg;
	struct cg2 g;
	int prog, lsock;

	(void)state;
	cg2_make(&g, "bpf");
	prog = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "cordon_test", "GPL", deny, N_ELEM(deny), &opts);
	if (prog < 0) {
		assert_false(caps.bpf_cgroup_sock_addr);
		cg2_remove(&g);
		return;
	}
	assert_true(caps.bpf_syscall);

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	lsock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(lsock >= 0);
	assert_int_equal(bind(lsock, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(lsock, 8), 0);
	assert_int_equal(getsockname(lsock, (struct sockaddr *)&sin, &sl), 0);
	arg.dir = g.dir;
	arg.port = ntohs(sin.sin_port);

	if (bpf_prog_attach(prog, g.fd, BPF_CGROUP_INET4_CONNECT, 0) == 0) {
		assert_true(caps.bpf_cgroup_sock_addr);
		arg.want_errno = EPERM;
		assert_exited_0(run_child(child_connect, &arg));
		assert_int_equal(bpf_prog_detach2(prog, g.fd, BPF_CGROUP_INET4_CONNECT), 0);
	} else
		assert_false(caps.bpf_cgroup_sock_addr);
	/* Detached: the same connect goes through. */
	arg.want_errno = 0;
	assert_exited_0(run_child(child_connect, &arg));

	close(lsock);
	close(prog);
	cg2_remove(&g);
}

/* In the cgroup dir (arg), chmod of a file of our own: errno wanted. */
struct chmod_arg {
	const char *dir;
	const char *file;
	int want_errno;
};

static void child_chmod(const void *p)
{
	const struct chmod_arg *a = p;
	int r;

	join_cgroup(a->dir);
	r = chmod(a->file, 0640);
	CHILD_CHECK(a->want_errno ? r == -1 && errno == a->want_errno : r == 0);
}

/* BPF LSM per cgroup (the root guard's mechanism), asked through libbpf:
 * the hook's BTF id from libbpf's own BTF parse, a path_chmod program that
 * denies everything, a link to a fresh cgroup2 directory, and a chmod from
 * inside that directory refused with EPERM (from outside: allowed). The
 * probe must agree, down to the errno of a refused load. */
static void test_bpf_lsm_cgroup(void **state)
{
	const struct bpf_insn deny[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_LSM_CGROUP);
	char file[] = "/tmp/cordon-test-probe-lsm-XXXXXX";
	struct chmod_arg arg;
	struct btf *btf;
	struct cg2 g;
	int prog, link, id, fd, err;

	(void)state;
	printf("probe: bpf_lsm_cgroup %d errno %d (%s)\n", caps.bpf_lsm_cgroup, caps.bpf_lsm_cgroup_errno,
	       cordon_probe_lsm_cgroup_reason(&caps));
	if (!caps.bpf_lsm) {
		/* The hooks would never run: the probe does not count it. */
		assert_false(caps.bpf_lsm_cgroup);
		assert_int_equal(caps.bpf_lsm_cgroup_errno, EOPNOTSUPP);
		return;
	}
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		assert_false(caps.bpf_lsm_cgroup);
		assert_int_equal(caps.bpf_lsm_cgroup_errno, ENOENT);
		return;
	}
	id = btf__find_by_name_kind(btf, "bpf_lsm_path_chmod", BTF_KIND_FUNC);
	btf__free(btf);
	if (id < 0) {
		assert_false(caps.bpf_lsm_cgroup);
		assert_int_equal(caps.bpf_lsm_cgroup_errno, ENOENT);
		return;
	}
	opts.attach_btf_id = (__u32)id;
	prog = bpf_prog_load(BPF_PROG_TYPE_LSM, "cordon_test", "GPL", deny, N_ELEM(deny), &opts);
	if (prog < 0) {
		err = errno;
		printf("libbpf: loading a BPF_LSM_CGROUP program: %s\n", strerror(err));
		assert_false(caps.bpf_lsm_cgroup);
		assert_int_equal(caps.bpf_lsm_cgroup_errno, err);
		return;
	}
	cg2_make(&g, "lsm");
	link = bpf_link_create(prog, g.fd, BPF_LSM_CGROUP, NULL);
	if (link < 0) {
		err = errno;
		assert_false(caps.bpf_lsm_cgroup);
		assert_int_equal(caps.bpf_lsm_cgroup_errno, err);
		close(prog);
		cg2_remove(&g);
		return;
	}
	assert_true(caps.bpf_lsm_cgroup);
	assert_int_equal(caps.bpf_lsm_cgroup_errno, 0);
	fd = mkstemp(file);
	assert_true(fd >= 0);
	close(fd);
	arg = (struct chmod_arg){ .dir = g.dir, .file = file, .want_errno = EPERM };
	assert_exited_0(run_child(child_chmod, &arg));
	assert_int_equal(chmod(file, 0640), 0); /* this process is outside the cgroup */
	close(link);
	close(prog);
	cg2_remove(&g);
	assert_int_equal(unlink(file), 0);
}

/* Reads the LSM list the way the kernel documents it, mounting securityfs in
 * a private mount namespace of a child when the host has none. */
static void child_read_lsm(const void *arg)
{
	int wfd = *(const int *)arg;
	char buf[512];
	ssize_t n;
	int fd;

	if (access("/sys/kernel/security/lsm", F_OK) != 0) {
		CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
		CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == 0);
		CHILD_CHECK(mount("none", "/sys/kernel/security", "securityfs", 0, NULL) == 0);
	}
	fd = open("/sys/kernel/security/lsm", O_RDONLY | O_CLOEXEC);
	CHILD_CHECK(fd >= 0);
	n = read(fd, buf, sizeof(buf));
	CHILD_CHECK(n > 0);
	CHILD_CHECK(write(wfd, buf, (size_t)n) == n);
}

static void read_lsm_independently(char *out, size_t size)
{
	int p[2];
	ssize_t n;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_exited_0(run_child(child_read_lsm, &p[1]));
	close(p[1]);
	n = read(p[0], out, size - 1);
	close(p[0]);
	assert_true(n > 0);
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

static void test_bpf_lsm(void **state)
{
	char lsm[512];

	(void)state;
	read_lsm_independently(lsm, sizeof(lsm));
	assert_string_equal(caps.lsm, lsm);
	assert_int_equal(caps.bpf_lsm, comma_list_has(lsm, "bpf"));
}

/* With securityfs already mounted (in a child's private mount namespace),
 * the probe reads the list directly and finds the same. */
static void child_probe_with_securityfs(const void *arg)
{
	const char *want = arg;
	struct cordon_caps c;

	CHILD_CHECK(unshare(CLONE_NEWNS) == 0);
	CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == 0);
	if (access("/sys/kernel/security/lsm", F_OK) != 0)
		CHILD_CHECK(mount("none", "/sys/kernel/security", "securityfs", 0, NULL) == 0);
	CHILD_CHECK(cordon_probe(&c) == 0);
	CHILD_CHECK(strcmp(c.lsm, want) == 0);
	CHILD_CHECK(c.bpf_lsm == caps.bpf_lsm);
}

static void test_lsm_securityfs_mounted(void **state)
{
	char lsm[512];

	(void)state;
	read_lsm_independently(lsm, sizeof(lsm));
	assert_exited_0(run_child(child_probe_with_securityfs, lsm));
}

/* ---- process ------------------------------------------------------------- */

static void test_process_features(void **state)
{
	char v[64], hex[17];
	int fd, hi;

	(void)state;
	fd = sys_pidfd_open(getpid(), 0);
	assert_int_equal(fd >= 0, caps.pidfd_open);
	if (fd >= 0)
		close(fd);

	/* close_range really closes a range. */
	hi = fcntl(0, F_DUPFD_CLOEXEC, 900);
	assert_true(hi >= 900);
	if (caps.close_range) {
		assert_int_equal(sys_close_range((unsigned)hi, (unsigned)hi, 0), 0);
		assert_int_equal(fcntl(hi, F_GETFD), -1);
		assert_int_equal(errno, EBADF);
	} else
		close(hi);

	proc_status("NoNewPrivs", v, sizeof(v));
	assert_true(caps.no_new_privs);
	assert_string_equal(v, caps.no_new_privs_set ? "1" : "0");

	proc_status("CapEff", v, sizeof(v));
	snprintf(hex, sizeof(hex), "%016" PRIx64, caps.caller_caps_effective);
	assert_string_equal(v, hex);
	proc_status("CapBnd", v, sizeof(v));
	snprintf(hex, sizeof(hex), "%016" PRIx64, caps.caller_caps_bounding);
	assert_string_equal(v, hex);
}

static void child_probe_nnp(const void *arg)
{
	struct cordon_caps c;

	(void)arg;
	CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	CHILD_CHECK(cordon_probe(&c) == 0);
	CHILD_CHECK(c.no_new_privs && c.no_new_privs_set);
}

/* A caller that already runs with no_new_privs is reported as such. */
static void test_no_new_privs_set(void **state)
{
	(void)state;
	assert_exited_0(run_child(child_probe_nnp, NULL));
}

/* ---- leftovers ----------------------------------------------------------- */

static void list_fds(char *out, size_t size)
{
	DIR *d = opendir("/proc/self/fd");
	int self = dirfd(d);
	struct dirent *e;

	out[0] = '\0';
	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != self) {
			size_t l = strlen(out);

			snprintf(out + l, size - l, "%s ", e->d_name);
		}
	closedir(d);
}

/* Entries named prefix* directly under dir. */
static int count_prefixed(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			n++;
	closedir(d);
	return n;
}

static int count_probe_cgroups(void)
{
	char prefix[64];
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *e;
	int n = 0;

	/* Only directories of this process: other probes may run at once. */
	snprintf(prefix, sizeof(prefix), CORDON_PROBE_DIR_PREFIX "%d-", (int)getpid());
	assert_non_null(f);
	while ((e = getmntent(f)))
		if (strcmp(e->mnt_type, "cgroup") == 0 || strcmp(e->mnt_type, "cgroup2") == 0)
			n += count_prefixed(e->mnt_dir, prefix);
	endmntent(f);
	return n;
}

static int count_named_bpf_progs(void)
{
	uint32_t id = 0;
	int n = 0;

	while (bpf_prog_get_next_id(id, &id) == 0) {
		struct bpf_prog_info info = { 0 };
		uint32_t len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && strcmp(info.name, CORDON_PROBE_BPF_NAME) == 0)
			n++;
		close(fd);
	}
	return n;
}

static int count_mounts_of(const char *type)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *e;
	int n = 0;

	assert_non_null(f);
	while ((e = getmntent(f)))
		n += strcmp(e->mnt_type, type) == 0;
	endmntent(f);
	return n;
}

static void test_leaves_nothing_behind(void **state)
{
	char before[1024], after[1024];
	char *tmp = cordon_test_mkdtemp("probe-tmpdir");
	char *old_tmpdir = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
	int securityfs = count_mounts_of("securityfs");
	struct cordon_caps c;

	(void)state;
	/* A private TMPDIR so that the check cannot see another process's
	 * probe directory, and cannot miss ours. */
	assert_int_equal(setenv("TMPDIR", tmp, 1), 0);
	list_fds(before, sizeof(before));
	for (int i = 0; i < 3; i++) {
		assert_int_equal(cordon_probe(&c), 0);
		assert_true(c.openat2_beneath); /* the temp dir was really used */
	}
	list_fds(after, sizeof(after));
	assert_string_equal(before, after);

	assert_int_equal(count_prefixed(tmp, ""), 2); /* "." and ".." */
	assert_int_equal(count_probe_cgroups(), 0);
	assert_int_equal(count_mounts_of("securityfs"), securityfs);
	/* No child left, not even a zombie. */
	errno = 0;
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	/* The BPF program is gone (freeing may lag the close briefly). */
	for (int i = 0; i < 200 && count_named_bpf_progs() > 0; i++)
		usleep(5000);
	assert_int_equal(count_named_bpf_progs(), 0);

	if (old_tmpdir)
		setenv("TMPDIR", old_tmpdir, 1);
	else
		unsetenv("TMPDIR");
	free(old_tmpdir);
	assert_int_equal(rmdir(tmp), 0);
	free(tmp);
}

/* A second probe agrees with the first on everything but the timing. */
static void test_probe_is_stable(void **state)
{
	struct cordon_caps c;
	char *a, *b;

	(void)state;
	assert_int_equal(cordon_probe(&c), 0);
	c.probe_usec = caps.probe_usec;
	a = cordon_probe_to_json(&caps);
	b = cordon_probe_to_json(&c);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

/* The launch's probe (CORDON_PROBE_FOR_SPAWN) skips only the mkdir test of
 * v1 hierarchies no instance is put in and the unprivileged user namespace
 * child, says so, and agrees with the full probe on everything else. */
static void test_probe_for_spawn(void **state)
{
	struct cordon_caps c;
	unsigned want = 0;
	char *a, *b;

	(void)state;
	assert_int_equal(cordon_probe_opts(&c, 1u << 7), -EINVAL);
	assert_int_equal(cordon_probe_opts(NULL, CORDON_PROBE_FOR_SPAWN), -EINVAL);
	assert_int_equal(cordon_probe_opts(&c, CORDON_PROBE_FOR_SPAWN), 0);
	assert_int_equal(caps.ctrl_untested, 0);
	for (int i = 0; i < _CORDON_CTRL_MAX; i++)
		if (caps.ctrl[i].available && !caps.ctrl[i].v2 && !(CORDON_CTRLS_INSTANCE & (1u << i)))
			want |= 1u << i;
	assert_int_equal(c.ctrl_untested, want);
	assert_false(caps.userns_untested);
	assert_true(c.userns_untested);
	assert_false(c.userns_unprivileged);
	for (int i = 0; i < _CORDON_CTRL_MAX; i++) {
		if (want & (1u << i)) {
			assert_false(c.ctrl[i].can_create);
			assert_true(c.ctrl[i].available);
		} else
			assert_int_equal(c.ctrl[i].can_create, caps.ctrl[i].can_create);
	}

	/* A report of these caps shows the untested ones as null. */
	a = cordon_probe_to_json(&c);
	assert_non_null(a);
	for (int i = 0; i < _CORDON_CTRL_MAX; i++) {
		char key[64];

		snprintf(key, sizeof(key), "\"%s\": {", cordon_cgroup_ctrl_name(i));
		if (want & (1u << i)) {
			const char *o = strstr(a, key), *e = o ? strchr(o, '}') : NULL;
			const char *n = o ? strstr(o, "\"can_create\": null") : NULL;

			assert_non_null(o);
			assert_true(n && n < e);
		}
	}
	assert_non_null(strstr(a, "\"userns_unprivileged\": null"));
	free(a);

	/* Everything else is the full probe's. */
	for (int i = 0; i < _CORDON_CTRL_MAX; i++)
		c.ctrl[i].can_create = caps.ctrl[i].can_create;
	c.ctrl_untested = 0;
	c.userns_unprivileged = caps.userns_unprivileged;
	c.userns_untested = false;
	c.probe_usec = caps.probe_usec;
	a = cordon_probe_to_json(&caps);
	b = cordon_probe_to_json(&c);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

static void *blocked_thread(void *arg)
{
	char b;

	return (void *)(intptr_t)read(*(int *)arg, &b, 1);
}

/* From a multi-threaded caller (the forked children must still work, and
 * unshare(CLONE_NEWUSER) refuses multi-threaded processes, so it must run in
 * the child) the probe finds the same. */
static void test_probe_multithreaded(void **state)
{
	struct cordon_caps c;
	pthread_t t;
	char *a, *b;
	int p[2];

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(pthread_create(&t, NULL, blocked_thread, &p[0]), 0);
	assert_int_equal(cordon_probe(&c), 0);
	close(p[1]);
	assert_int_equal(pthread_join(t, NULL), 0);
	close(p[0]);

	c.probe_usec = caps.probe_usec;
	a = cordon_probe_to_json(&caps);
	b = cordon_probe_to_json(&c);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_release),
		cmocka_unit_test(test_landlock_abi),
		cmocka_unit_test(test_landlock_masks),
		cmocka_unit_test(test_landlock_log_flags),
		cmocka_unit_test(test_seccomp),
		cmocka_unit_test(test_openat2_escape),
		cmocka_unit_test(test_openat2_without_tmpdir),
		cmocka_unit_test(test_namespaces),
		cmocka_unit_test(test_userns_unprivileged),
		cmocka_unit_test(test_cgroup_layout),
		cmocka_unit_test(test_cgroup_controllers),
		cmocka_unit_test(test_cgroup_can_create),
		cmocka_unit_test(test_cgroup_kill),
		cmocka_unit_test(test_clone_into_cgroup),
		cmocka_unit_test(test_btf),
		cmocka_unit_test(test_bpf_cgroup_sock_addr),
		cmocka_unit_test(test_bpf_lsm),
		cmocka_unit_test(test_bpf_lsm_cgroup),
		cmocka_unit_test(test_lsm_securityfs_mounted),
		cmocka_unit_test(test_process_features),
		cmocka_unit_test(test_no_new_privs_set),
		cmocka_unit_test(test_leaves_nothing_behind),
		cmocka_unit_test(test_probe_is_stable),
		cmocka_unit_test(test_probe_multithreaded),
		cmocka_unit_test(test_probe_for_spawn),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
