/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroup module against the real kernel (root). Every test creates its own
 * instances (names start with "t-cg-") and destroys them; the children it
 * forks are reaped. On this machine the layout is hybrid (v1 memory, pids,
 * cpu plus a controller-less cgroup2 at /sys/fs/cgroup/unified); the
 * capability struct comes from cordon_probe(), and tests that simulate a
 * kernel without something pass a modified copy. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroup.h"
#include "fd-util.h"
#include "probe.h"
#include "syscall-compat.h"
#include "test-support.h"

static struct cordon_caps caps;

static const char *const ctrl_names[_CORDON_CTRL_MAX] = { "memory", "pids", "cpu", "cpuset", "io" };

/* ---- Helpers ------------------------------------------------------------ */

#define MEM_CTRLS ((1u << CORDON_CTRL_MEMORY) | (1u << CORDON_CTRL_PIDS) | (1u << CORDON_CTRL_CPU))

static uint64_t read_u64_file(const char *dir, const char *file)
{
	char path[PATH_MAX + 64], buf[128];
	uint64_t v = UINT64_MAX;
	char *end;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	assert_true(read_small_file(path, buf, sizeof(buf)) > 0);
	errno = 0;
	v = strtoull(buf, &end, 10);
	assert_int_equal(errno, 0);
	return v;
}

static void read_str_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	assert_true(read_small_file(path, buf, size) >= 0);
}

static bool dir_exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Search every hierarchy for an instance directory "i-*-<name>". */
static char search_suffix[128];
static int search_hits;

static int search_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *base = path + ftw->base;
	size_t bl = strlen(base), sl = strlen(search_suffix);

	(void)st;
	if (type == FTW_D && strncmp(base, "i-", 2) == 0 && bl > sl && strcmp(base + bl - sl, search_suffix) == 0)
		search_hits++;
	return 0;
}

static int count_instances(const struct cordon_caps *c, const char *name)
{
	snprintf(search_suffix, sizeof(search_suffix), "-%s", name);
	search_hits = 0;
	if (c->cgroup2_mount[0])
		(void)nftw(c->cgroup2_mount, search_one, 16, FTW_PHYS | FTW_MOUNT);
	for (int k = 0; k < _CORDON_CTRL_MAX; k++)
		if (c->ctrl[k].available && !c->ctrl[k].v2)
			(void)nftw(c->ctrl[k].path, search_one, 16, FTW_PHYS | FTW_MOUNT);
	return search_hits;
}

/* Paths of an instance, copied before destroy frees them. */
struct paths {
	char p[_CORDON_CTRL_MAX + 1][PATH_MAX];
	int n;
};

static void save_paths(const struct cordon_cgroup *cg, struct paths *ps)
{
	memset(ps, 0, sizeof(*ps));
	if (cordon_cgroup_v2_path(cg))
		snprintf(ps->p[ps->n++], PATH_MAX, "%s", cordon_cgroup_v2_path(cg));
	for (int k = 0; k < 3; k++) {
		const char *p = cordon_cgroup_ctrl_path(cg, (enum cordon_cgroup_ctrl)k);

		if (p)
			snprintf(ps->p[ps->n++], PATH_MAX, "%s", p);
	}
}

static void assert_paths_gone(const struct paths *ps)
{
	for (int i = 0; i < ps->n; i++) {
		if (dir_exists(ps->p[i]))
			fail_msg("%s still exists", ps->p[i]);
	}
}

static struct cordon_cgroup *create_ok(const char *name, uint64_t mem, uint64_t pids, uint64_t cpu)
{
	struct cordon_cgroup_limits lim = { .mem_bytes = mem, .pids_max = pids, .cpu_micro = cpu };
	struct cordon_diag d = { 0 };
	struct cordon_cgroup *cg = NULL;
	unsigned missing = 0xff;
	int r;

	r = cordon_cgroup_create(&caps,
				 &(struct cordon_cgroup_options){ .name = name, .limits = &lim, .required = MEM_CTRLS },
				 &cg, &missing, &d);
	if (r < 0)
		fail_msg("create %s: %d %s: %s", name, r, d.step, d.message);
	assert_non_null(cg);
	assert_int_equal(missing, 0);
	return cg;
}

/* In a child: /proc/self/cgroup must show the instance in the hierarchy
 * whose line matches `key` ("0::" or ":memory:"). */
static bool child_in(const char *key, const char *mount, const char *path)
{
	char buf[4096], want[PATH_MAX + 64];
	const char *rel = path + strlen(mount);

	if (read_small_file("/proc/self/cgroup", buf, sizeof(buf)) < 0)
		return false;
	snprintf(want, sizeof(want), "%s%s\n", key, rel);
	strcat(buf, "\n");
	return strstr(buf, want) != NULL;
}

static bool child_in_all(const struct cordon_cgroup *cg)
{
	if (cordon_cgroup_v2_path(cg) && !child_in("0::", caps.cgroup2_mount, cordon_cgroup_v2_path(cg)))
		return false;
	for (int k = 0; k < 3; k++) {
		const char *p = cordon_cgroup_ctrl_path(cg, (enum cordon_cgroup_ctrl)k);
		char key[32];

		if (!p || caps.ctrl[k].v2)
			continue;
		/* v1 lines: "<id>:<controllers>:<path>"; match ":<ctrl>:" for
		 * the single-controller mounts of this machine, or the
		 * comounted "cpu,cpuacct". */
		snprintf(key, sizeof(key), "%s:", ctrl_names[k]);
		if (!child_in(key, caps.ctrl[k].path, p)) {
			snprintf(key, sizeof(key), "%s,cpuacct:", ctrl_names[k]);
			if (!child_in(key, caps.ctrl[k].path, p))
				return false;
		}
	}
	return true;
}

static void burn_cpu_ms(long ms)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < ms * 1000000L);
}

static void reap_all_children_expect_sigkill(int *ret_count)
{
	int n = 0, status;
	pid_t p;

	while ((p = waitpid(-1, &status, 0)) > 0) {
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
			fail_msg("child %d ended with status 0x%x, want SIGKILL", (int)p, status);
		n++;
	}
	assert_int_equal(errno, ECHILD);
	*ret_count = n;
}

/* The runner itself must never end up in an instance (destroy would kill
 * it): /proc/self/cgroup is the same before and after every test. */
static char runner_cgroups[4096];

static int check_runner(void **state)
{
	char now[4096];

	(void)state;
	assert_true(read_small_file("/proc/self/cgroup", now, sizeof(now)) > 0);
	assert_string_equal(now, runner_cgroups);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	assert_true(read_small_file("/proc/self/cgroup", runner_cgroups, sizeof(runner_cgroups)) > 0);
	/* The real probe: these tests also check that what it reports is
	 * what the cgroup module needs. */
	assert_int_equal(cordon_probe(&caps), 0);
	if (caps.cgroup_layout == CORDON_CGROUP_NONE)
		cordon_test_skip("no cgroup hierarchy mounted");
	for (int c = 0; c < 3; c++)
		if (!caps.ctrl[c].available)
			cordon_test_skip("cgroup controller %s is not available", ctrl_names[c]);
	return 0;
}

/* ---- Tests -------------------------------------------------------------- */

static void test_create_limits_readback(void **state)
{
	struct cordon_cgroup *cg = create_ok("t-cg-limits", 64ull << 20, 32, 500000);
	const char *mem = cordon_cgroup_ctrl_path(cg, CORDON_CTRL_MEMORY);
	const char *pids = cordon_cgroup_ctrl_path(cg, CORDON_CTRL_PIDS);
	const char *cpu = cordon_cgroup_ctrl_path(cg, CORDON_CTRL_CPU);
	char buf[256], want[64];
	struct paths ps;

	(void)state;
	assert_non_null(mem);
	assert_non_null(pids);
	assert_non_null(cpu);
	/* Named i-<pid>-<start>-<name> under a "cordon" parent. */
	snprintf(want, sizeof(want), "i-%d-", (int)getpid());
	assert_int_equal(strncmp(cordon_cgroup_dir_name(cg), want, strlen(want)), 0);
	assert_non_null(strstr(mem, "/cordon/i-"));

	if (caps.ctrl[CORDON_CTRL_MEMORY].v2) {
		assert_int_equal(read_u64_file(mem, "memory.max"), 64ull << 20);
		read_str_file(mem, "memory.swap.max", buf, sizeof(buf));
		assert_string_equal(buf, "0");
	} else {
		assert_int_equal(read_u64_file(mem, "memory.limit_in_bytes"), 64ull << 20);
		assert_int_equal(read_u64_file(mem, "memory.memsw.limit_in_bytes"), 64ull << 20);
		read_str_file(mem, "memory.oom_control", buf, sizeof(buf));
		assert_non_null(strstr(buf, "oom_kill_disable 0"));
	}
	assert_int_equal(read_u64_file(pids, "pids.max"), 32);
	if (caps.ctrl[CORDON_CTRL_CPU].v2) {
		read_str_file(cpu, "cpu.max", buf, sizeof(buf));
		assert_string_equal(buf, "50000 100000");
	} else {
		assert_int_equal(read_u64_file(cpu, "cpu.cfs_quota_us"), 50000);
		assert_int_equal(read_u64_file(cpu, "cpu.cfs_period_us"), 100000);
	}
	/* The cgroup2 directory exists (hybrid: in the unified hierarchy). */
	assert_non_null(cordon_cgroup_v2_path(cg));
	assert_true(cordon_cgroup_v2_fd(cg) >= 0);
	assert_true(dir_exists(cordon_cgroup_v2_path(cg)));
	assert_true(cordon_cgroup_is_empty(cg));

	save_paths(cg, &ps);
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	assert_paths_gone(&ps);
	assert_int_equal(count_instances(&caps, "t-cg-limits"), 0);
}

static void test_cpu_quota_rounding(void **state)
{
	/* 0.25 CPU -> 25 ms per 100 ms; 0.001 CPU is below the kernel's
	 * 1 ms minimum and is raised to it. */
	struct cordon_cgroup *a = create_ok("t-cg-cpu-a", 0, 0, 250000);
	struct cordon_cgroup *b = create_ok("t-cg-cpu-b", 0, 0, 1000);
	const char *file = caps.ctrl[CORDON_CTRL_CPU].v2 ? NULL : "cpu.cfs_quota_us";
	char buf[64];

	(void)state;
	if (file) {
		assert_int_equal(read_u64_file(cordon_cgroup_ctrl_path(a, CORDON_CTRL_CPU), file), 25000);
		assert_int_equal(read_u64_file(cordon_cgroup_ctrl_path(b, CORDON_CTRL_CPU), file), 1000);
	} else {
		read_str_file(cordon_cgroup_ctrl_path(a, CORDON_CTRL_CPU), "cpu.max", buf, sizeof(buf));
		assert_string_equal(buf, "25000 100000");
		read_str_file(cordon_cgroup_ctrl_path(b, CORDON_CTRL_CPU), "cpu.max", buf, sizeof(buf));
		assert_string_equal(buf, "1000 100000");
	}
	/* No memory limit asked: none written (v1 default is "unlimited"). */
	if (!caps.ctrl[CORDON_CTRL_MEMORY].v2)
		assert_true(read_u64_file(cordon_cgroup_ctrl_path(a, CORDON_CTRL_MEMORY), "memory.limit_in_bytes") >
			    (1ull << 60));
	assert_int_equal(cordon_cgroup_destroy(a), 0);
	assert_int_equal(cordon_cgroup_destroy(b), 0);
}

static void test_enter_forked_child(void **state)
{
	struct cordon_cgroup *cg = create_ok("t-cg-enter", 64ull << 20, 16, 0);
	struct cordon_cgroup_stats st;
	struct paths ps;
	pid_t pid;
	int status;

	(void)state;
	/* A plain fork is not placed by clone3: enter() must join cgroup2 as
	 * well as the v1 hierarchies. */
	cordon_cgroup_set_clone_placed(cg, false);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		CHILD_CHECK(!child_in_all(cg));
		CHILD_CHECK(cordon_cgroup_enter(cg) == 0);
		CHILD_CHECK(child_in_all(cg));
		/* Burn 50 ms of CPU so the parent can read CPU time. */
		burn_cpu_ms(50);
		_exit(0);
	}
	status = cordon_test_wait(pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(cordon_cgroup_is_empty(cg));
	assert_int_equal(cordon_cgroup_stats(cg, &st), 0);
	assert_true(st.cpu_usage_usec >= 40000);
	assert_int_equal(st.oom_kills, 0);
	assert_int_equal(st.pids_peak, 1);
	assert_true(st.mem_peak_bytes > 0);
	save_paths(cg, &ps);
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	assert_paths_gone(&ps);
}

static void test_clone3_into_cgroup(void **state)
{
	struct cordon_cgroup *cg = create_ok("t-cg-clone3", 64ull << 20, 16, 0);
	struct clone_args args = { 0 };
	long pid;
	int status;

	(void)state;
	args.flags = CLONE_INTO_CGROUP;
	args.exit_signal = SIGCHLD;
	args.cgroup = (uint64_t)cordon_cgroup_v2_fd(cg);
	assert_true(cordon_cgroup_v2_fd(cg) >= 0);
	pid = sys_clone3(&args, sizeof(args));
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Placed in cgroup2 from the first instruction... */
		CHILD_CHECK(child_in("0::", caps.cgroup2_mount, cordon_cgroup_v2_path(cg)));
		/* ...but not yet in the v1 hierarchies, which enter() joins
		 * (it does not write cgroup2 again). */
		CHILD_CHECK(!child_in_all(cg));
		CHILD_CHECK(cordon_cgroup_enter(cg) == 0);
		CHILD_CHECK(child_in_all(cg));
		_exit(0);
	}
	status = cordon_test_wait((pid_t)pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
}

static void test_enter_after_userns_and_uid_drop(void **state)
{
	/* The spawner may enter namespaces or drop privileges before enter():
	 * the fds were opened by root in the parent and the kernel checks the
	 * opener's credentials, so the writes still work. */
	struct cordon_cgroup *cg = create_ok("t-cg-userns", 0, 16, 0);
	pid_t pid;
	int status;

	(void)state;
	cordon_cgroup_set_clone_placed(cg, false);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0);
		CHILD_CHECK(cordon_cgroup_enter(cg) == 0);
		CHILD_CHECK(child_in_all(cg));
		_exit(0);
	}
	status = cordon_test_wait(pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		CHILD_CHECK(setresgid(65534, 65534, 65534) == 0);
		CHILD_CHECK(setresuid(65534, 65534, 65534) == 0);
		CHILD_CHECK(cordon_cgroup_enter(cg) == 0);
		CHILD_CHECK(child_in_all(cg));
		/* Opening cgroup.procs anew as nobody is refused. */
		{
			char p[PATH_MAX + 32];

			snprintf(p, sizeof(p), "%s/cgroup.procs", cordon_cgroup_v2_path(cg));
			CHILD_CHECK_ERRNO(open(p, O_WRONLY | O_CLOEXEC), EACCES);
		}
		_exit(0);
	}
	status = cordon_test_wait(pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
}

/* In a child: the /proc/self/cgroup line that starts with `key` ends with
 * `suffix`. */
static bool child_line_ends(const char *key, const char *suffix)
{
	char buf[4096], *line, *save = NULL;

	if (read_small_file("/proc/self/cgroup", buf, sizeof(buf)) < 0)
		return false;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c = strchr(line, ':');
		size_t l = strlen(line), sl = strlen(suffix);

		if (c && strncmp(c + 1, key, strlen(key)) == 0)
			return l >= sl && strcmp(line + l - sl, suffix) == 0;
	}
	return false;
}

static void test_clone3_into_cgroup_with_cgroupns(void **state)
{
	/* The spawner clones with CLONE_INTO_CGROUP | CLONE_NEWCGROUP: the
	 * namespace is rooted at the instance's cgroup2 directory, and
	 * enter() still joins the v1 hierarchies from inside it. */
	struct cordon_cgroup *cg = create_ok("t-cg-cgns", 64ull << 20, 16, 0);
	struct clone_args args = { 0 };
	long pid;
	int status;

	(void)state;
	args.flags = CLONE_INTO_CGROUP | CLONE_NEWCGROUP;
	args.exit_signal = SIGCHLD;
	args.cgroup = (uint64_t)cordon_cgroup_v2_fd(cg);
	pid = sys_clone3(&args, sizeof(args));
	assert_true(pid >= 0);
	if (pid == 0) {
		char suffix[PATH_MAX];

		CHILD_CHECK(child_line_ends(":", "::/"));
		CHILD_CHECK(cordon_cgroup_enter(cg) == 0);
		snprintf(suffix, sizeof(suffix), "/cordon/%s", cordon_cgroup_dir_name(cg));
		CHILD_CHECK(child_line_ends("memory:", suffix));
		CHILD_CHECK(child_line_ends("pids:", suffix));
		CHILD_CHECK(child_line_ends("cpu:", suffix));
		CHILD_CHECK(child_line_ends(":", "::/"));
		_exit(0);
	}
	status = cordon_test_wait((pid_t)pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
}

static void test_enter_checks_clone_placement(void **state)
{
	/* The instance says "placed by clone3" (caps.clone_into_cgroup) but
	 * the child came from a plain fork: enter() notices and joins cgroup2
	 * as well, so BPF policy and cgroup.kill still cover it. */
	struct cordon_cgroup *cg = create_ok("t-cg-verify", 0, 16, 0);
	pid_t pid;
	int status;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		CHILD_CHECK(cordon_cgroup_enter(cg) == 0);
		CHILD_CHECK(child_in_all(cg));
		_exit(0);
	}
	status = cordon_test_wait(pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
}

static void test_attach_pid(void **state)
{
	struct cordon_cgroup *cg = create_ok("t-cg-attach", 0, 8, 0);
	int pfd[2];
	pid_t pid;
	char c;
	int status, n;

	(void)state;
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[1]);
		CHILD_CHECK(read(pfd[0], &c, 1) == 1);
		CHILD_CHECK(child_in_all(cg));
		_exit(0);
	}
	close(pfd[0]);
	assert_true(cordon_cgroup_is_empty(cg));
	assert_int_equal(cordon_cgroup_attach_pid(cg, pid), 0);
	assert_false(cordon_cgroup_is_empty(cg));
	assert_int_equal(write(pfd[1], "x", 1), 1);
	close(pfd[1]);
	status = cordon_test_wait(pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(cordon_cgroup_attach_pid(cg, 0), -EINVAL);
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	reap_all_children_expect_sigkill(&n);
	assert_int_equal(n, 0);
}

static void test_fork_bomb_stops_at_pids_max(void **state)
{
	struct cordon_cgroup *cg = create_ok("t-cg-forkbomb", 0, 8, 0);
	struct cordon_cgroup_stats st;
	struct paths ps;
	pid_t pid;
	int status, n;

	(void)state;
	/* Orphaned grandchildren come back to us, so we can assert that
	 * destroy killed every one of them. */
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	cordon_cgroup_set_clone_placed(cg, false);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int forked = 0;

		CHILD_CHECK(cordon_cgroup_enter(cg) == 0);
		for (;;) {
			pid_t p = fork();

			if (p == 0) {
				for (;;)
					pause();
			}
			if (p < 0)
				break;
			forked++;
			CHILD_CHECK(forked < 100);
		}
		/* The limit refuses fork with EAGAIN. */
		CHILD_CHECK(errno == EAGAIN);
		_exit(forked);
	}
	status = cordon_test_wait(pid);
	assert_true(WIFEXITED(status));
	/* pids.max 8 counts the child itself: 7 more. */
	assert_int_equal(WEXITSTATUS(status), 7);
	assert_false(cordon_cgroup_is_empty(cg));
	assert_int_equal(cordon_cgroup_stats(cg, &st), 0);
	assert_int_equal(st.pids_peak, 8);
	save_paths(cg, &ps);
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	assert_paths_gone(&ps);
	reap_all_children_expect_sigkill(&n);
	assert_int_equal(n, 7);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

static void test_memory_bomb_oom_killed(void **state)
{
	const uint64_t limit = 32ull << 20;
	struct cordon_cgroup *cg = create_ok("t-cg-membomb", limit, 16, 0);
	struct cordon_cgroup_stats st;
	pid_t pid;
	int status;

	(void)state;
	cordon_cgroup_set_clone_placed(cg, false);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		size_t len = 256u << 20;
		char *p;

		CHILD_CHECK(cordon_cgroup_enter(cg) == 0);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHILD_CHECK(p != MAP_FAILED);
		for (size_t i = 0; i < len; i += 4096)
			p[i] = 1;
		_exit(0); /* survived: the limit did not hold */
	}
	status = cordon_test_wait(pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_int_equal(cordon_cgroup_stats(cg, &st), 0);
	assert_true(st.oom_kills >= 1);
	/* Peak memory near the limit, never above it. */
	assert_true(st.mem_peak_bytes >= limit * 3 / 4);
	assert_true(st.mem_peak_bytes <= limit);
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
}

/* A child that ignores SIGTERM and has children of its own that do too. */
static pid_t spawn_stubborn(const struct cordon_cgroup *cg, int nkids)
{
	int pfd[2];
	pid_t pid;
	char buf[16];

	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		signal(SIGTERM, SIG_IGN);
		CHILD_CHECK(cordon_cgroup_enter(cg) == 0);
		for (int i = 0; i < nkids; i++) {
			pid_t k = fork();

			CHILD_CHECK(k >= 0);
			if (k == 0) {
				for (;;)
					pause();
			}
		}
		CHILD_CHECK(write(pfd[1], "r", 1) == 1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], buf, 1), 1);
	close(pfd[0]);
	return pid;
}

static void destroy_stubborn(bool with_cgroup_kill)
{
	struct cordon_caps c = caps;
	struct cordon_cgroup_limits lim = { .pids_max = 16 };
	struct cordon_cgroup *cg = NULL;
	struct paths ps;
	pid_t pid;
	int n;

	c.cgroup_kill = with_cgroup_kill;
	assert_int_equal(cordon_cgroup_create(&c,
					      &(struct cordon_cgroup_options){
						      .name = "t-cg-stubborn", .limits = &lim, .required = MEM_CTRLS },
					      &cg, NULL, NULL),
			 0);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	cordon_cgroup_set_clone_placed(cg, false);
	pid = spawn_stubborn(cg, 3);
	/* SIGTERM alone changes nothing. */
	assert_int_equal(kill(pid, SIGTERM), 0);
	usleep(20000);
	assert_false(cordon_cgroup_is_empty(cg));
	save_paths(cg, &ps);
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	assert_paths_gone(&ps);
	reap_all_children_expect_sigkill(&n);
	assert_int_equal(n, 4);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

static void test_destroy_kills_sigterm_ignorers(void **state)
{
	(void)state;
	destroy_stubborn(true);
}

static void test_destroy_without_cgroup_kill(void **state)
{
	/* The kernel "without cgroup.kill": freeze + SIGKILL per pid. */
	(void)state;
	destroy_stubborn(false);
}

static void test_destroy_job_subcgroups(void **state)
{
	/* cordon-exec makes job cgroups below the instance; destroy kills
	 * them and removes the directories too. */
	struct cordon_cgroup *cg = create_ok("t-cg-jobs", 0, 16, 0);
	char job[PATH_MAX + 16], procs[PATH_MAX + 32], s[32];
	pid_t pid;
	int n;

	(void)state;
	snprintf(job, sizeof(job), "%s/job-1", cordon_cgroup_v2_path(cg));
	assert_int_equal(mkdir(job, 0755), 0);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	cordon_cgroup_set_clone_placed(cg, false);
	pid = spawn_stubborn(cg, 0);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", job);
	snprintf(s, sizeof(s), "%d", (int)pid);
	assert_int_equal(write_small_file(procs, s), 0);
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	assert_false(dir_exists(job));
	reap_all_children_expect_sigkill(&n);
	assert_int_equal(n, 1);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

/* As nobody: make <v2>/job-N and move itself there. */
static void child_make_job(const struct cordon_cgroup *cg, bool delegated)
{
	char job[PATH_MAX + 16], procs[PATH_MAX + 32];

	CHILD_CHECK(cordon_cgroup_enter(cg) == 0);
	CHILD_CHECK(setresgid(65534, 65534, 65534) == 0);
	CHILD_CHECK(setresuid(65534, 65534, 65534) == 0);
	snprintf(job, sizeof(job), "%s/job-%d", cordon_cgroup_v2_path(cg), delegated);
	if (!delegated) {
		CHILD_CHECK_ERRNO(mkdir(job, 0755), EACCES);
		_exit(0);
	}
	CHILD_CHECK(mkdir(job, 0755) == 0);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", job);
	CHILD_CHECK(write_small_file(procs, "0") == 0);
	CHILD_CHECK(child_in("0::", caps.cgroup2_mount, job));
	/* The delegate cannot lift the bounds on its subtree... */
	snprintf(procs, sizeof(procs), "%s/cgroup.max.depth", cordon_cgroup_v2_path(cg));
	CHILD_CHECK_ERRNO(open(procs, O_WRONLY | O_CLOEXEC), EACCES);
	/* ...and nesting stops at depth 4. */
	for (int i = 0; i < 3; i++) {
		strcat(job, "/j");
		CHILD_CHECK(mkdir(job, 0755) == 0);
	}
	strcat(job, "/j");
	CHILD_CHECK_ERRNO(mkdir(job, 0755), EAGAIN);
	_exit(0);
}

static void test_delegate_for_jobs(void **state)
{
	struct cordon_cgroup *cg = create_ok("t-cg-deleg", 0, 16, 0);
	struct paths ps;
	pid_t pid;
	int status;

	(void)state;
	cordon_cgroup_set_clone_placed(cg, false);
	/* Not delegated: the unprivileged worker cannot make job cgroups. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		child_make_job(cg, false);
	status = cordon_test_wait(pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	assert_int_equal(cordon_cgroup_delegate(cg, 65534, 65534), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		child_make_job(cg, true);
	status = cordon_test_wait(pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	save_paths(cg, &ps);
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	assert_paths_gone(&ps);
}

static void test_cleanup_stale(void **state)
{
	struct cordon_cgroup_limits lim = { .pids_max = 16 };
	struct cordon_cgroup *stale = NULL, *live;
	struct paths stale_ps, live_ps;
	char fake[PATH_MAX + 64];
	struct cordon_cgroup *other = NULL, *zombie = NULL;
	struct paths other_ps, zombie_ps;
	pid_t owner, alive_owner, zombie_owner, victim;
	int status, r, n;

	(void)state;
	/* An owner that will die, and one that stays alive. */
	owner = fork();
	assert_true(owner >= 0);
	if (owner == 0) {
		for (;;)
			pause();
	}
	alive_owner = fork();
	assert_true(alive_owner >= 0);
	if (alive_owner == 0) {
		for (;;)
			pause();
	}
	assert_int_equal(cordon_cgroup_create(&caps,
					      &(struct cordon_cgroup_options){ .name = "t-cg-other",
									       .limits = &lim,
									       .required = MEM_CTRLS,
									       .owner = alive_owner },
					      &other, NULL, NULL),
			 0);
	save_paths(other, &other_ps);
	/* An owner that has exited but is not reaped yet (a zombie whose
	 * parent is slow): gone too. */
	zombie_owner = fork();
	assert_true(zombie_owner >= 0);
	if (zombie_owner == 0) {
		for (;;)
			pause();
	}
	assert_int_equal(cordon_cgroup_create(&caps,
					      &(struct cordon_cgroup_options){ .name = "t-cg-zombie",
									       .limits = &lim,
									       .required = MEM_CTRLS,
									       .owner = zombie_owner },
					      &zombie, NULL, NULL),
			 0);
	save_paths(zombie, &zombie_ps);
	assert_int_equal(kill(zombie_owner, SIGKILL), 0);
	{
		siginfo_t si;

		/* Wait for the exit without reaping. */
		assert_int_equal(waitid(P_PID, (id_t)zombie_owner, &si, WEXITED | WNOWAIT), 0);
	}
	assert_int_equal(cordon_cgroup_create(
				 &caps,
				 &(struct cordon_cgroup_options){
					 .name = "t-cg-stale", .limits = &lim, .required = MEM_CTRLS, .owner = owner },
				 &stale, NULL, NULL),
			 0);
	assert_non_null(strstr(cordon_cgroup_dir_name(stale), "i-"));
	live = create_ok("t-cg-live", 0, 16, 0);
	save_paths(stale, &stale_ps);
	save_paths(live, &live_ps);

	/* A process inside the stale instance that outlived its launcher. */
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	cordon_cgroup_set_clone_placed(stale, false);
	victim = spawn_stubborn(stale, 1);

	/* A directory whose pid is alive (ours) but with another start time:
	 * the pid was reused, so its owner is gone. Made next to our live
	 * pids instance. */
	{
		const char *p = cordon_cgroup_ctrl_path(live, CORDON_CTRL_PIDS);

		snprintf(fake, sizeof(fake), "%.*s/i-%d-1-t-cg-reused", (int)(strrchr(p, '/') - p), p, (int)getpid());
	}
	assert_int_equal(mkdir(fake, 0755), 0);

	/* The owner dies without destroying its instance, as a SIGKILLed
	 * launcher would. */
	assert_int_equal(kill(owner, SIGKILL), 0);
	status = cordon_test_wait(owner);
	assert_true(WIFSIGNALED(status));

	r = cordon_cgroup_cleanup_stale(&caps);
	assert_true(r >= 3);
	assert_paths_gone(&stale_ps);
	assert_paths_gone(&zombie_ps);
	status = cordon_test_wait(zombie_owner);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(cordon_cgroup_destroy(zombie), 0);
	assert_false(dir_exists(fake));
	/* Live instances stay: ours and another live launcher's. */
	for (int i = 0; i < live_ps.n; i++)
		assert_true(dir_exists(live_ps.p[i]));
	for (int i = 0; i < other_ps.n; i++)
		assert_true(dir_exists(other_ps.p[i]));
	/* A second run finds nothing more of ours and keeps the live ones. */
	assert_true(cordon_cgroup_cleanup_stale(&caps) >= 0);
	assert_int_equal(count_instances(&caps, "t-cg-stale"), 0);
	assert_int_equal(count_instances(&caps, "t-cg-live"), live_ps.n);
	assert_int_equal(count_instances(&caps, "t-cg-other"), other_ps.n);
	assert_int_equal(cordon_cgroup_destroy(other), 0);
	assert_paths_gone(&other_ps);
	assert_int_equal(kill(alive_owner, SIGKILL), 0);
	status = cordon_test_wait(alive_owner);
	assert_true(WIFSIGNALED(status));

	/* What ran inside the stale instance was killed. */
	status = cordon_test_wait(victim);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	reap_all_children_expect_sigkill(&n);
	assert_int_equal(n, 1);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
	assert_int_equal(cordon_cgroup_destroy(live), 0);
	assert_paths_gone(&live_ps);
	/* The stale object's directories are gone; destroying it now only
	 * frees memory (rmdir of missing directories is not an error). */
	assert_int_equal(cordon_cgroup_destroy(stale), 0);
}

static void test_required_controller_missing(void **state)
{
	struct cordon_caps c = caps;
	struct cordon_cgroup_limits lim = { .mem_bytes = 32ull << 20, .pids_max = 16 };
	struct cordon_diag d = { 0 };
	struct cordon_cgroup *cg = NULL;
	unsigned missing = 0;
	int r;

	(void)state;
	c.ctrl[CORDON_CTRL_MEMORY].available = false;
	r = cordon_cgroup_create(
		&c, &(struct cordon_cgroup_options){ .name = "t-cg-nomem", .limits = &lim, .required = MEM_CTRLS }, &cg,
		&missing, &d);
	assert_int_equal(r, -EOPNOTSUPP);
	assert_null(cg);
	assert_int_equal(d.error, EOPNOTSUPP);
	assert_string_equal(d.step, "cgroup");
	assert_non_null(strstr(d.message, "memory"));
	assert_non_null(strstr(d.message, "not available"));
	assert_int_equal(count_instances(&caps, "t-cg-nomem"), 0);

	/* Best effort: created, memory reported missing, others applied. */
	r = cordon_cgroup_create(&c,
				 &(struct cordon_cgroup_options){
					 .name = "t-cg-nomem", .limits = &lim, .required = 1u << CORDON_CTRL_PIDS },
				 &cg, &missing, &d);
	assert_int_equal(r, 0);
	assert_int_equal(missing, 1u << CORDON_CTRL_MEMORY);
	assert_null(cordon_cgroup_ctrl_path(cg, CORDON_CTRL_MEMORY));
	assert_int_equal(read_u64_file(cordon_cgroup_ctrl_path(cg, CORDON_CTRL_PIDS), "pids.max"), 16);
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	assert_int_equal(count_instances(&caps, "t-cg-nomem"), 0);

	/* Controllers cordon sets no limits with cannot be required. */
	r = cordon_cgroup_create(&caps,
				 &(struct cordon_cgroup_options){
					 .name = "t-cg-nomem", .limits = &lim, .required = 1u << CORDON_CTRL_IO },
				 &cg, &missing, &d);
	assert_int_equal(r, -EOPNOTSUPP);
	assert_non_null(strstr(d.message, "io"));
	assert_int_equal(count_instances(&caps, "t-cg-nomem"), 0);
}

static void test_failure_midway_leaves_nothing(void **state)
{
	/* The pids "hierarchy" is a plain directory: mkdir works there but it
	 * has no cgroup.procs or pids.max, so applying pids fails after the
	 * cgroup2 and memory directories were already made. */
	char *tmp = cordon_test_mkdtemp("cgroup-fake");
	struct cordon_caps c = caps;
	struct cordon_cgroup_limits lim = { .mem_bytes = 32ull << 20, .pids_max = 16 };
	struct cordon_diag d = { 0 };
	struct cordon_cgroup *cg = NULL;
	unsigned missing = 0;
	char sub[PATH_MAX];
	int r;

	(void)state;
	snprintf(c.ctrl[CORDON_CTRL_PIDS].path, sizeof(c.ctrl[CORDON_CTRL_PIDS].path), "%s", tmp);
	c.ctrl[CORDON_CTRL_PIDS].v2 = false;
	r = cordon_cgroup_create(
		&c, &(struct cordon_cgroup_options){ .name = "t-cg-midway", .limits = &lim, .required = MEM_CTRLS },
		&cg, &missing, &d);
	assert_int_equal(r, -ENOENT);
	assert_null(cg);
	assert_int_equal(d.error, ENOENT);
	assert_non_null(strstr(d.message, "pids"));
	assert_int_equal(count_instances(&caps, "t-cg-midway"), 0);
	snprintf(sub, sizeof(sub), "%s/cordon", tmp);
	assert_false(dir_exists(sub));

	/* Not required: created, pids reported missing. */
	r = cordon_cgroup_create(&c,
				 &(struct cordon_cgroup_options){
					 .name = "t-cg-midway", .limits = &lim, .required = 1u << CORDON_CTRL_MEMORY },
				 &cg, &missing, &d);
	assert_int_equal(r, 0);
	assert_int_equal(missing, 1u << CORDON_CTRL_PIDS);
	cordon_cgroup_set_clone_placed(cg, false);
	{
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0) {
			CHILD_CHECK(cordon_cgroup_enter(cg) == 0);
			_exit(0);
		}
		r = cordon_test_wait(pid);
		assert_true(WIFEXITED(r));
		assert_int_equal(WEXITSTATUS(r), 0);
	}
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	assert_int_equal(count_instances(&caps, "t-cg-midway"), 0);
	assert_false(dir_exists(sub));
	assert_int_equal(rmdir(tmp), 0);
	free(tmp);
}

static void test_v1_only_layout(void **state)
{
	/* A kernel with v1 hierarchies and no cgroup2 at all: no directory
	 * for BPF, no cgroup.kill, enter() joins the v1 hierarchies and
	 * destroy falls back to SIGKILL per pid. */
	struct cordon_caps c = caps;
	struct cordon_cgroup_limits lim = { .mem_bytes = 64ull << 20, .pids_max = 16 };
	struct cordon_cgroup *cg = NULL;
	struct cordon_cgroup_stats st;
	struct paths ps;
	unsigned missing = 0xff;
	pid_t pid;
	int n;

	(void)state;
	c.cgroup_layout = CORDON_CGROUP_V1;
	c.cgroup2_mount[0] = '\0';
	c.cgroup_kill = false;
	c.clone_into_cgroup = false;
	assert_int_equal(cordon_cgroup_create(&c,
					      &(struct cordon_cgroup_options){
						      .name = "t-cg-v1only", .limits = &lim, .required = MEM_CTRLS },
					      &cg, &missing, NULL),
			 0);
	assert_int_equal(missing, 0);
	assert_int_equal(cordon_cgroup_v2_fd(cg), -EBADF);
	assert_null(cordon_cgroup_v2_path(cg));
	assert_int_equal(read_u64_file(cordon_cgroup_ctrl_path(cg, CORDON_CTRL_PIDS), "pids.max"), 16);
	/* CPU time comes from v1 cpuacct (its own hierarchy here). */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		CHILD_CHECK(cordon_cgroup_enter(cg) == 0);
		burn_cpu_ms(50);
		_exit(0);
	}
	n = cordon_test_wait(pid);
	assert_true(WIFEXITED(n) && WEXITSTATUS(n) == 0);
	assert_int_equal(cordon_cgroup_stats(cg, &st), 0);
	assert_true(st.cpu_usage_usec >= 40000);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	pid = spawn_stubborn(cg, 2);
	assert_false(cordon_cgroup_is_empty(cg));
	assert_int_equal(cordon_cgroup_stats(cg, &st), 0);
	assert_int_equal(st.pids_peak, 3);
	assert_true(st.mem_peak_bytes > 0);
	save_paths(cg, &ps);
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	assert_paths_gone(&ps);
	reap_all_children_expect_sigkill(&n);
	assert_int_equal(n, 3);
	(void)pid;
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

static void test_no_cgroups_at_all(void **state)
{
	/* Layout NONE: nothing can be required; best effort yields an empty
	 * instance whose enter/destroy are no-ops and every requested limit
	 * reported missing. */
	struct cordon_caps c = caps;
	struct cordon_cgroup_limits lim = { .mem_bytes = 64ull << 20, .pids_max = 16, .cpu_micro = 100000 };
	struct cordon_cgroup *cg = NULL;
	struct cordon_diag d = { 0 };
	unsigned missing = 0;

	(void)state;
	c.cgroup_layout = CORDON_CGROUP_NONE;
	c.cgroup2_mount[0] = '\0';
	for (int k = 0; k < _CORDON_CTRL_MAX; k++)
		c.ctrl[k].available = false;
	assert_int_equal(cordon_cgroup_create(&c,
					      &(struct cordon_cgroup_options){ .name = "t-cg-none",
									       .limits = &lim,
									       .required = 1u << CORDON_CTRL_PIDS },
					      &cg, &missing, &d),
			 -EOPNOTSUPP);
	assert_non_null(strstr(d.message, "pids"));
	assert_int_equal(cordon_cgroup_create(
				 &c,
				 &(struct cordon_cgroup_options){ .name = "t-cg-none", .limits = &lim, .required = 0 },
				 &cg, &missing, &d),
			 0);
	assert_int_equal(missing, MEM_CTRLS);
	assert_int_equal(cordon_cgroup_v2_fd(cg), -EBADF);
	assert_true(cordon_cgroup_is_empty(cg));
	assert_int_equal(count_instances(&caps, "t-cg-none"), 0);
	{
		/* enter() in a child: a no-op that must not fail. */
		pid_t pid = fork();
		int status;

		assert_true(pid >= 0);
		if (pid == 0) {
			CHILD_CHECK(cordon_cgroup_enter(cg) == 0);
			_exit(0);
		}
		status = cordon_test_wait(pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
}

static void test_invalid_arguments(void **state)
{
	struct cordon_cgroup_limits lim = { 0 };
	struct cordon_diag d = { 0 };
	struct cordon_cgroup *cg = NULL;
	char longname[80];

	(void)state;
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(cordon_cgroup_create(
				 &caps,
				 &(struct cordon_cgroup_options){ .name = "Bad_Name", .limits = &lim, .required = 0 },
				 &cg, NULL, &d),
			 -EINVAL);
	assert_non_null(strstr(d.message, "Bad_Name"));
	assert_int_equal(cordon_cgroup_create(
				 &caps, &(struct cordon_cgroup_options){ .name = "", .limits = &lim, .required = 0 },
				 &cg, NULL, &d),
			 -EINVAL);
	assert_int_equal(
		cordon_cgroup_create(&caps,
				     &(struct cordon_cgroup_options){ .name = "../x", .limits = &lim, .required = 0 },
				     &cg, NULL, &d),
		-EINVAL);
	assert_int_equal(
		cordon_cgroup_create(&caps,
				     &(struct cordon_cgroup_options){ .name = longname, .limits = &lim, .required = 0 },
				     &cg, NULL, &d),
		-EINVAL);
	assert_int_equal(cordon_cgroup_create(
				 &caps, &(struct cordon_cgroup_options){ .name = "ok", .limits = NULL, .required = 0 },
				 &cg, NULL, &d),
			 -EINVAL);
	assert_int_equal(cordon_cgroup_create(
				 &caps,
				 &(struct cordon_cgroup_options){ .name = "ok", .limits = &lim, .required = 1u << 20 },
				 &cg, NULL, &d),
			 -EINVAL);
	assert_null(cg);
	/* An owner that does not exist has no start time. */
	assert_int_equal(cordon_cgroup_create(&caps,
					      &(struct cordon_cgroup_options){
						      .name = "ok", .limits = &lim, .required = 0, .owner = INT32_MAX },
					      &cg, NULL, &d),
			 -ENOENT);
	assert_null(cg);
	assert_int_equal(cordon_cgroup_v2_fd(NULL), -EBADF);
	assert_null(cordon_cgroup_v2_path(NULL));
	assert_int_equal(cordon_cgroup_destroy(NULL), 0);
}

static void test_duplicate_name_refused(void **state)
{
	struct cordon_cgroup *cg = create_ok("t-cg-dup", 0, 8, 0);
	struct cordon_cgroup_limits lim = { .pids_max = 8 };
	struct cordon_cgroup *cg2 = NULL;
	struct cordon_diag d = { 0 };

	(void)state;
	assert_int_equal(cordon_cgroup_create(&caps,
					      &(struct cordon_cgroup_options){
						      .name = "t-cg-dup", .limits = &lim, .required = MEM_CTRLS },
					      &cg2, NULL, &d),
			 -EEXIST);
	assert_null(cg2);
	/* The failed attempt did not remove the first instance. */
	assert_true(dir_exists(cordon_cgroup_v2_path(cg)));
	assert_true(dir_exists(cordon_cgroup_ctrl_path(cg, CORDON_CTRL_PIDS)));
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	assert_int_equal(count_instances(&caps, "t-cg-dup"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_create_limits_readback, check_runner),
		cmocka_unit_test_teardown(test_cpu_quota_rounding, check_runner),
		cmocka_unit_test_teardown(test_enter_forked_child, check_runner),
		cmocka_unit_test_teardown(test_clone3_into_cgroup, check_runner),
		cmocka_unit_test_teardown(test_enter_after_userns_and_uid_drop, check_runner),
		cmocka_unit_test_teardown(test_clone3_into_cgroup_with_cgroupns, check_runner),
		cmocka_unit_test_teardown(test_enter_checks_clone_placement, check_runner),
		cmocka_unit_test_teardown(test_attach_pid, check_runner),
		cmocka_unit_test_teardown(test_fork_bomb_stops_at_pids_max, check_runner),
		cmocka_unit_test_teardown(test_memory_bomb_oom_killed, check_runner),
		cmocka_unit_test_teardown(test_destroy_kills_sigterm_ignorers, check_runner),
		cmocka_unit_test_teardown(test_destroy_without_cgroup_kill, check_runner),
		cmocka_unit_test_teardown(test_destroy_job_subcgroups, check_runner),
		cmocka_unit_test_teardown(test_delegate_for_jobs, check_runner),
		cmocka_unit_test_teardown(test_cleanup_stale, check_runner),
		cmocka_unit_test_teardown(test_required_controller_missing, check_runner),
		cmocka_unit_test_teardown(test_failure_midway_leaves_nothing, check_runner),
		cmocka_unit_test_teardown(test_v1_only_layout, check_runner),
		cmocka_unit_test_teardown(test_no_cgroups_at_all, check_runner),
		cmocka_unit_test_teardown(test_invalid_arguments, check_runner),
		cmocka_unit_test_teardown(test_duplicate_name_refused, check_runner),
	};

	cordon_test_require_root();
	if (access("/sys/fs/cgroup", F_OK) < 0)
		cordon_test_skip("no /sys/fs/cgroup");
	return cmocka_run_group_tests(tests, setup, NULL);
}
