/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: a connector never changes the mode or the owner of its
 * read-write root directory itself (issue 11, finding 1, the part seccomp
 * cannot see: which inode a chmod names).
 *
 * The read-write root is an id-mapped bind mount, so inside the sandbox
 * the connector is the owner of the root directory and, before the root
 * guard, `chmod 0777 /data` or `chmod 1777 /data` changed the host
 * directory. The guard refuses chmod and chown of a mount root: a pair of
 * BPF LSM programs attached per cgroup (bpf/rootguard.bpf.c) where the
 * kernel runs them, else a seccomp user-notification supervisor outside
 * the sandbox (launcher/lib/rootguard-notify.c). From inside a real
 * sandbox (cordon_spawn, plant-probe copied in):
 *  - always: every way the connector can name its root (the path, /data/.,
 *    /data/sub/.., an O_DIRECTORY fd, an O_PATH fd, /proc/self/fd/N) is
 *    the root of its mount for the kernel (statx STATX_ATTR_MOUNT_ROOT:
 *    the same path->dentry == path->mnt->mnt_root both guards test), and a
 *    directory or file inside is not;
 *  - always: the report states the guard, enforced (BPF: attached to the
 *    launcher's group; else attached "seccomp-notify", its supervisor
 *    ended by itself) or, where neither can run, unavailable, degraded,
 *    with the consequence named;
 *  - with the guard: chmod 0777 / 1777 / its own 0755, fchmod of an
 *    O_DIRECTORY fd, fchmodat (path, fd + "."), fchmodat2 AT_EMPTY_PATH
 *    (ENOSYS before Linux 6.6),
 *    chmod of /data/., /data/sub/.. and /proc/self/fd/N -> EPERM; chown
 *    and fchown to the connector's own uid/gid, lchown(-1, -1), fchownat
 *    to 0:0, chown to 65534, fchownat AT_EMPTY_PATH -> EPERM; the host
 *    directory keeps its mode (0755) and owner; and inside the root the
 *    ordinary rules hold: a file goes 0600 -> 0640 (seen on the host), is
 *    chowned to the connector's own ids (the root's owner on the host), a
 *    directory goes 0755 -> 0700. For a root owned by uid 0 (the opt-in
 *    layout) and by an ordinary uid;
 *  - with the guard: the root named relatively (dirfd or cwd inside plus
 *    "..", absolute and relative symlinks, a second thread) -> EPERM, the
 *    kernel's own errnos kept (ENOENT, EINVAL, EBADF for O_PATH fds,
 *    EFAULT); three races (a symlink, the path buffer, the fd number
 *    swapped while chmod runs) never reach the root; the supervisor is
 *    gone once its instance is, and the caller has no child left.
 * Where BPF LSM works the guarded part runs twice: with BPF, then with the
 * supervisor (caps without bpf_lsm_cgroup). Where neither guard can run it
 * is skipped, saying why; CORDON_TEST_MUST_RUN=1 makes that a failure
 * unless bpf-lsm-cgroup is listed in CORDON_TEST_MAY_LACK
 * (cordon_test_skip_feature).
 * Layer: libcordon spawn + BPF LSM or seccomp user notification, real
 * kernel. */
#include <sys/syscall.h>
#include <sys/wait.h>

#include "probe-util.h"
#include "sec-sbx.h"

struct want {
	const char *name;
	int err;
};

/* clang-format off */
static const struct want names_want[] = {
	{ "mountroot-path", 1 },	{ "mountroot-dot", 1 },
	{ "mountroot-dotdot", 1 },	{ "mountroot-fd", 1 },
	{ "mountroot-opath", 1 },	{ "mountroot-procfd", 1 },
	{ "mountroot-sub", 0 },		{ "mountroot-file", 0 },
};

static const struct want mode_want[] = {
	{ "root-open", 0 },
	{ "root-chmod-0777", EPERM },		{ "root-chmod-1777", EPERM },
	{ "root-chmod-0755-same", EPERM },	{ "root-fchmod-0777", EPERM },
	{ "root-fchmod-1777", EPERM },		{ "root-fchmodat-0777", EPERM },
	{ "root-fchmodat-fd-dot-1777", EPERM },	{ "root-fchmodat2-empty-1777", EPERM },
	{ "root-chmod-dot-0777", EPERM },	{ "root-chmod-dotdot-0777", EPERM },
	{ "root-chmod-procfd-0777", EPERM },
	{ "root-chown-own", EPERM },		{ "root-fchown-own", EPERM },
	{ "root-lchown-none", EPERM },		{ "root-fchownat-0", EPERM },
	{ "root-chown-65534", EPERM },		{ "root-fchownat-empty-own", EPERM },
	{ "file-chmod-0640", 0 },		{ "file-chown-own", 0 },
	{ "sub-chmod-0700", 0 },
};

static const struct want rel_want[] = {
	{ "rel-fchmodat-sub-dotdot", EPERM },	{ "rel-fchownat-sub-dotdot", EPERM },
	{ "rel-fchmodat2-sub-dotdot", EPERM },	{ "rel-fchmodat-sub-dotdot-file", 0 },
	{ "rel-fchmodat-sub-dot", 0 },		{ "rel-cwd-chmod-dotdot", EPERM },
	{ "rel-cwd-lchown-dotdot", EPERM },	{ "rel-cwd-chmod-up", EPERM },
	{ "rel-cwd-chmod-dot", 0 },		{ "rel-chmod-link-root", EPERM },
	{ "rel-chown-link-root", EPERM },	{ "rel-lchown-link-root", 0 },
	{ "rel-chmod-sub-up", EPERM },		{ "rel-chmod-sub-up-slash", EPERM },
	{ "rel-chmod-link-file", 0 },		{ "rel-chmod-messy", EPERM },
	{ "rel-chmod-empty", ENOENT },		{ "rel-fchmodat2-empty-noflag", ENOENT },
	{ "rel-fchmodat2-badflag", EINVAL },	{ "rel-fchmodat-badfd", EBADF },
	{ "rel-fchmodat-badfd-abs", 0 },	{ "rel-chmod-efault", EFAULT },
	{ "rel-fchmod-opath", EBADF },		{ "rel-fchown-opath", EBADF },
	{ "rel-fchmod-opath-root", EBADF },	{ "rel-fchmodat2-opath-root-empty", EPERM },
	{ "thread-chmod-root", EPERM },
};

static const struct want race_want[] = {
	{ "race-symlink-other", 0 },	{ "race-buffer-other", 0 },
	{ "race-fd-other", 0 },		{ "race-root-mode", 0755 },
};
/* clang-format on */

/* Set for the second pass on kernels where BPF LSM works: the same
 * assertions with the seccomp supervisor as the guard. */
static bool force_supervisor;

/* The caps a sandbox of this test gets: the probed ones, or without BPF
 * LSM for the supervisor pass. */
static struct cordon_caps test_caps(const struct sbx *s)
{
	struct cordon_caps caps = s->caps;

	if (force_supervisor)
		caps.bpf_lsm_cgroup = false;
	return caps;
}

/* The number plant-probe printed for `name`, or -2 when the line is
 * missing. */
static int printed(const char *out, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, name, n) == 0 && l[n] == ' ')
			return atoi(l + n + 1);
	return -2;
}

static void expect_lines(const char *out, const struct want *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int got = printed(out, w[i].name);

		if (got != w[i].err)
			fprintf(stderr, "%s: got %d, want %d\n", w[i].name, got, w[i].err);
		assert_int_equal(got, w[i].err);
	}
}

/* Runs `plant-probe <mode> /data` in a sandbox whose /data root is owned
 * by `owner` (0: the fixture's opt-in layout). */
static void run_probe(struct sbx *s, const char *mode, uid_t owner, struct sbx_result *res)
{
	struct cordon_profile *p;
	struct cordon_diag d = { 0 };
	char inside[PATH_MAX];
	int r;

	sec_sbx_install(s, "plant-probe", inside, sizeof(inside));
	p = sbx_profile(s, NULL);
	if (owner != 0) {
		assert_int_equal(chown(s->root, owner, owner), 0);
		for (size_t i = 0; i < p->n_fs_roots; i++)
			if (p->fs_roots[i].access == CORDON_ACCESS_READ_WRITE)
				p->fs_roots[i].allow_uid0_owner = false;
	}
	{
		char *argv[] = { inside, (char *)mode, (char *)"/data", NULL };
		struct cordon_caps caps = test_caps(s);

		r = sbx_spawn(p, &caps, argv, res, &d);
	}
	if (r < 0)
		fprintf(stderr, "cordon_spawn: %s: %s\n", d.step, d.message);
	assert_int_equal(r, 0);
	assert_exited(res->status, 0);
	cordon_profile_free(p);
}

/* The guard's premise, on the running kernel: the root, however named,
 * is its mount's root; nothing inside is. */
static void test_root_is_a_mount_root_however_named(void **state)
{
	struct sbx *s = sbx_new("rootnames");
	struct sbx_result res;

	(void)state;
	run_probe(s, "rootnames", 0, &res);
	expect_lines(res.out, names_want, ELEMENTSOF(names_want));
	sbx_result_done(&res);
	sbx_free(s);
}

/* Never a silent fallback: the report says what the guard is. */
static void test_report_states_the_guard(void **state)
{
	struct sbx *s = sbx_new("rootguard-report");
	struct sbx_result res;
	const json_t *rg;

	(void)state;
	run_probe(s, "rootnames", 0, &res);
	rg = json_object_get(json_object_get(res.report, "controls"), "root_guard");
	assert_non_null(rg);
	sbx_assert_root_guard_reported(res.report, &s->caps);
	if (s->caps.bpf_lsm_cgroup) {
		/* This launcher's instances live in its group: the programs
		 * are attached there once. */
		assert_string_equal(json_string_value(json_object_get(rg, "attached")), "group");
	} else if (cordon_probe_root_guard_notify(&s->caps)) {
		/* Without BPF LSM: the seccomp supervisor, which ended by itself
		 * when the instance was reaped. */
		assert_string_equal(json_string_value(json_object_get(rg, "attached")), "seccomp-notify");
		assert_string_equal(json_string_value(json_object_get(rg, "reason")),
				    "a seccomp supervisor refuses chmod and chown of every mount root");
		assert_string_equal(json_string_value(json_object_get(rg, "supervisor")), "exited");
	} else {
		char want[200];

		snprintf(want, sizeof(want), "BPF LSM programs cannot be attached to a cgroup here (%s)",
			 cordon_probe_lsm_cgroup_reason(&s->caps));
		assert_string_equal(json_string_value(json_object_get(rg, "reason")), want);
		assert_null(json_object_get(rg, "attached"));
	}
	sbx_result_done(&res);
	sbx_free(s);
}

/* fchmodat2 is Linux 6.6: before it, ENOSYS (seccomp lets 01777 through). */
static int fchmodat2_errno(void)
{
	return syscall(452, AT_FDCWD, "/nonexistent-cordon-test", 0, 0) < 0 && errno == ENOSYS ? ENOSYS : EPERM;
}

static void run_rootmode(uid_t owner)
{
	struct sbx *s = sbx_new("rootmode");
	struct sbx_result res;
	struct stat before, after;
	char path[PATH_MAX];

	assert_int_equal(stat(s->root, &before), 0);
	assert_int_equal(before.st_mode & 07777, 0755);
	run_probe(s, "rootmode", owner, &res);
	assert_string_equal(sbx_state(res.report, "root_guard"), "enforced");
	{
		struct want w[ELEMENTSOF(mode_want)];

		memcpy(w, mode_want, sizeof(w));
		for (size_t i = 0; i < ELEMENTSOF(w); i++)
			if (strcmp(w[i].name, "root-fchmodat2-empty-1777") == 0)
				w[i].err = fchmodat2_errno();
		expect_lines(res.out, w, ELEMENTSOF(w));
	}

	/* Host side: the root directory as it was; inside, the changes made. */
	assert_int_equal(stat(s->root, &after), 0);
	assert_int_equal(after.st_mode, before.st_mode);
	assert_int_equal(after.st_uid, owner);
	assert_int_equal(after.st_gid, owner);
	snprintf(path, sizeof(path), "%s/file", s->root);
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(after.st_mode & 07777, 0640);
	assert_int_equal(after.st_uid, owner); /* the connector's ids, mapped back */
	assert_int_equal(after.st_gid, owner);
	snprintf(path, sizeof(path), "%s/sub", s->root);
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(after.st_mode & 07777, 0700);
	sbx_result_done(&res);
	sbx_free(s);
}

/* The root named relatively: from a dirfd or the cwd inside it, through
 * an absolute or a relative symlink, from a second thread; and the
 * kernel's own answers (ENOENT, EINVAL, EBADF, EFAULT) kept. */
static void test_relative_names(void **state)
{
	struct sbx *s = sbx_new("rootrel");
	struct sbx_result res;
	struct stat st;
	char path[PATH_MAX];

	(void)state;
	run_probe(s, "rootrel", 0, &res);
	expect_lines(res.out, rel_want, ELEMENTSOF(rel_want));
	assert_int_equal(stat(s->root, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	snprintf(path, sizeof(path), "%s/file", s->root);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	snprintf(path, sizeof(path), "%s/sub", s->root);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	sbx_result_done(&res);
	sbx_free(s);
}

/* No time-of-check/time-of-use window: whatever a second thread swaps
 * (a symlink, the path buffer, the fd number) while chmod runs, each call
 * ends on the file (0) or on the root (EPERM), and the root keeps 0755. */
static void test_no_toctou(void **state)
{
	struct sbx *s = sbx_new("rootrace");
	struct sbx_result res;
	struct stat st;

	(void)state;
	run_probe(s, "rootrace", 0, &res);
	expect_lines(res.out, race_want, ELEMENTSOF(race_want));
	assert_int_equal(stat(s->root, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(st.st_uid, 0);
	sbx_result_done(&res);
	sbx_free(s);
}

/* The supervisor (where it is the guard) ends with its instance: it exited
 * by itself, was reaped, and the caller has no child left; the same when
 * the instance is freed while its connector still runs. */
static void test_supervisor_gone_after_instance(void **state)
{
	struct sbx *s = sbx_new("rootguard-gone");
	struct cordon_caps caps = test_caps(s);
	struct sbx_result res;
	siginfo_t si = { 0 };

	(void)state;
	if (caps.bpf_lsm_cgroup) {
		printf("the BPF guard runs here: no supervisor\n");
		sbx_free(s);
		return;
	}
	run_probe(s, "rootnames", 0, &res);
	assert_true(res.guard_pid > 0);
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(json_object_get(res.report, "controls"), "root_guard"), "supervisor")),
		"exited");
	assert_int_equal(kill(res.guard_pid, 0), -1);
	assert_int_equal(errno, ESRCH);
	assert_int_equal(waitid(P_ALL, 0, &si, WEXITED | WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	sbx_result_done(&res);

	/* A connector that ends at once: its init may be gone before the
	 * supervisor runs, which then still serves (it has the root init sent
	 * with the listener) and ends by itself. This failed about one run in
	 * eight when the supervisor opened /proc/<init>/root itself. */
	for (int i = 0; i < 40; i++) {
		struct cordon_profile *p = sbx_profile(s, NULL);
		char *argv[] = { (char *)"/opt/cordon-test/plant-probe", (char *)"rootnames", (char *)"/data", NULL };
		struct cordon_diag d = { 0 };

		assert_int_equal(sbx_spawn(p, &caps, argv, &res, &d), 0);
		assert_exited(res.status, 0);
		cordon_profile_free(p);
		assert_string_equal(
			json_string_value(json_object_get(
				json_object_get(json_object_get(res.report, "controls"), "root_guard"), "supervisor")),
			"exited");
		sbx_result_done(&res);
	}

	{
		struct cordon_profile *p = sbx_profile(s, NULL);
		char *argv[] = { (char *)"/bin/sleep", (char *)"30", NULL };
		struct cordon_launch_policy pol = {
			.profile = p, .argv = argv, .env_source = environ, .stdio = CORDON_STDIO_PIPES
		};
		struct cordon_instance *inst = NULL;
		struct cordon_diag d = { 0 };
		pid_t g;

		if (cordon_spawn(&pol, &caps, &inst, &d) < 0)
			fprintf(stderr, "cordon_spawn: %s: %s\n", d.step, d.message);
		assert_non_null(inst);
		g = cordon_instance_guard_pid(inst);
		assert_true(g > 0);
		assert_int_equal(kill(g, 0), 0);
		cordon_instance_free(inst); /* kills the sleeping connector */
		assert_int_equal(kill(g, 0), -1);
		assert_int_equal(errno, ESRCH);
		assert_int_equal(waitid(P_ALL, 0, &si, WEXITED | WNOHANG), -1);
		assert_int_equal(errno, ECHILD);
		cordon_profile_free(p);
	}
	sbx_free(s);
}

static void test_uid0_owned_root(void **state)
{
	(void)state;
	run_rootmode(0);
}

static void test_user_owned_root(void **state)
{
	(void)state;
	run_rootmode(65533);
}

int main(void)
{
	const struct CMUnitTest always[] = {
		cmocka_unit_test(test_root_is_a_mount_root_however_named),
		cmocka_unit_test(test_report_states_the_guard),
	};
	const struct CMUnitTest guarded[] = {
		cmocka_unit_test(test_uid0_owned_root),
		cmocka_unit_test(test_user_owned_root),
		cmocka_unit_test(test_relative_names),
		cmocka_unit_test(test_no_toctou),
		cmocka_unit_test(test_supervisor_gone_after_instance),
	};
	struct cordon_caps caps;
	int r;

	cordon_test_require_root();
	r = cmocka_run_group_tests_name("premise-and-report", always, NULL, NULL);
	if (r != 0)
		return r;
	if (cordon_probe(&caps) < 0)
		return 1;
	if (!sbx_root_guard_runs(&caps))
		cordon_test_skip_feature(
			"bpf-lsm-cgroup",
			"the root guard cannot run on this kernel (BPF LSM: %s; no seccomp "
			"supervisor either): the chmod/chown attempts on the root directory were not made",
			cordon_probe_lsm_cgroup_reason(&caps));
	r = cmocka_run_group_tests_name("guarded", guarded, NULL, NULL);
	/* Where BPF LSM guards, the supervisor (its fallback) is checked by
	 * the same assertions. */
	if (r == 0 && caps.bpf_lsm_cgroup && cordon_probe_root_guard_notify(&caps)) {
		force_supervisor = true;
		r = cmocka_run_group_tests_name("guarded-by-the-supervisor", guarded, NULL, NULL);
	}
	return r;
}
