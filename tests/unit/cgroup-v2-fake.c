/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pure cgroup v2 path of the cgroup module, on a fake cgroupfs.
 *
 * The development machines are hybrid: memory, pids and cpu are bound to v1
 * hierarchies, so they can never appear in the cgroup2 hierarchy and the
 * pure-v2 limit files cannot be written there. This test runs the module
 * against a directory tree in $TMPDIR that looks like cgroup2: mkdir and
 * rmdir are wrapped (-Wl,--wrap) so that a new directory gets the control
 * files the kernel would create, and rmdir removes them first. It checks
 * which files cordon writes and with what values, the subtree_control
 * enabling, the stats parsing, enter() and the teardown — not the kernel's
 * behaviour, which the kernel tests cover on the hybrid layout. Runs as any
 * user. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroup.h"
#include "fd-util.h"
#include "probe.h"
#include "test-support.h"

#include "cgroup-fakefs.h"

static struct cordon_caps caps;

static int setup(void **state)
{
	(void)state;
	fakefs_setup(&caps);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(fakefs_teardown(), 0);
	return 0;
}

static void read_file(const char *dir, const char *file, char *buf, size_t size)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	assert_true(read_small_file(p, buf, size) >= 0);
}

static bool exists(const char *dir, const char *file)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	return access(p, F_OK) == 0;
}

/* The tree below the fake root: nothing of cordon's left. */
static void assert_fake_clean(void)
{
	assert_false(exists(fake_root, "cordon"));
}

static void test_v2_limits_written(void **state)
{
	struct cordon_cgroup_limits lim = { .mem_bytes = 32ull << 20, .pids_max = 16, .cpu_micro = 500000 };
	struct cordon_cgroup *cg = NULL;
	struct cordon_diag d = { 0 };
	unsigned missing = 0xff, all = (1u << CORDON_CTRL_MEMORY) | (1u << CORDON_CTRL_PIDS) | (1u << CORDON_CTRL_CPU);
	char buf[256], parent[PATH_MAX];
	const char *path;

	(void)state;
	assert_int_equal(cordon_cgroup_create(
				 &caps,
				 &(struct cordon_cgroup_options){ .name = "fake-1", .limits = &lim, .required = all },
				 &cg, &missing, &d),
			 0);
	assert_int_equal(missing, 0);
	path = cordon_cgroup_v2_path(cg);
	assert_non_null(path);
	assert_true(cordon_cgroup_v2_fd(cg) >= 0);
	/* Every controller's limit lives in the one cgroup2 directory. */
	assert_string_equal(cordon_cgroup_ctrl_path(cg, CORDON_CTRL_MEMORY), path);
	assert_string_equal(cordon_cgroup_ctrl_path(cg, CORDON_CTRL_PIDS), path);
	assert_string_equal(cordon_cgroup_ctrl_path(cg, CORDON_CTRL_CPU), path);

	read_file(path, "memory.max", buf, sizeof(buf));
	assert_string_equal(buf, "33554432");
	read_file(path, "memory.swap.max", buf, sizeof(buf));
	assert_string_equal(buf, "0");
	read_file(path, "pids.max", buf, sizeof(buf));
	assert_string_equal(buf, "16");
	read_file(path, "cpu.max", buf, sizeof(buf));
	assert_string_equal(buf, "50000 100000");

	/* Controllers enabled (one write each) in the root — our own cgroup
	 * here is "/" — and in the shared "cordon" parent. */
	read_file(fake_root, "cgroup.subtree_control", buf, sizeof(buf));
	assert_string_equal(buf, "+memory +pids +cpu");
	snprintf(parent, sizeof(parent), "%s/cordon", fake_root);
	read_file(parent, "cgroup.subtree_control", buf, sizeof(buf));
	assert_string_equal(buf, "+memory +pids +cpu");

	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	assert_fake_clean();
	fakefs_put(fake_root, "cgroup.subtree_control", "");
}

static void test_v2_stats(void **state)
{
	struct cordon_cgroup_limits lim = { .mem_bytes = 32ull << 20 };
	struct cordon_cgroup *cg = NULL;
	struct cordon_cgroup_stats st;

	(void)state;
	assert_int_equal(cordon_cgroup_create(
				 &caps,
				 &(struct cordon_cgroup_options){ .name = "fake-stats", .limits = &lim, .required = 0 },
				 &cg, NULL, NULL),
			 0);
	assert_int_equal(cordon_cgroup_stats(cg, &st), 0);
	assert_int_equal(st.mem_peak_bytes, 33550336);
	assert_int_equal(st.oom_kills, 2);
	assert_int_equal(st.pids_peak, 16);
	assert_int_equal(st.cpu_usage_usec, 123456);
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	assert_fake_clean();
	fakefs_put(fake_root, "cgroup.subtree_control", "");
}

static void test_v2_enter(void **state)
{
	struct cordon_cgroup_limits lim = { .pids_max = 4 };
	struct cordon_cgroup *cg = NULL;
	char buf[64];
	pid_t pid;
	int status;

	(void)state;
	assert_int_equal(cordon_cgroup_create(
				 &caps,
				 &(struct cordon_cgroup_options){ .name = "fake-enter", .limits = &lim, .required = 0 },
				 &cg, NULL, NULL),
			 0);
	/* Placed by clone3 (cgroup.procs lists the child, here among other
	 * pids): enter() writes nothing. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char list[64];

		snprintf(list, sizeof(list), "1\n%d\n99999999\n", (int)getpid());
		fakefs_put(cordon_cgroup_v2_path(cg), "cgroup.procs", list);
		_exit(cordon_cgroup_enter(cg) == 0 ? 0 : 1);
	}
	status = cordon_test_wait(pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	read_file(cordon_cgroup_v2_path(cg), "cgroup.procs", buf, sizeof(buf));
	assert_non_null(strstr(buf, "99999999"));
	assert_int_equal(buf[0], '1');

	/* Said to be placed, but not listed (a spawner fell back to clone
	 * without saying so): enter() checks and joins. */
	fakefs_put(cordon_cgroup_v2_path(cg), "cgroup.procs", "");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(cordon_cgroup_enter(cg) == 0 ? 0 : 1);
	status = cordon_test_wait(pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	read_file(cordon_cgroup_v2_path(cg), "cgroup.procs", buf, sizeof(buf));
	assert_string_equal(buf, "0");
	fakefs_put(cordon_cgroup_v2_path(cg), "cgroup.procs", "");

	/* Not placed: enter() joins cgroup2 by writing "0". */
	cordon_cgroup_set_clone_placed(cg, false);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(cordon_cgroup_enter(cg) == 0 ? 0 : 1);
	status = cordon_test_wait(pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	read_file(cordon_cgroup_v2_path(cg), "cgroup.procs", buf, sizeof(buf));
	assert_string_equal(buf, "0");
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	assert_fake_clean();
	fakefs_put(fake_root, "cgroup.subtree_control", "");
}

static void test_v2_controller_not_offered(void **state)
{
	/* The parent does not offer cpu (cgroup.controllers lacks it). */
	struct cordon_cgroup_limits lim = { .pids_max = 4, .cpu_micro = 100000 };
	unsigned req = (1u << CORDON_CTRL_PIDS) | (1u << CORDON_CTRL_CPU);
	struct cordon_cgroup *cg = NULL;
	struct cordon_diag d = { 0 };
	unsigned missing = 0;
	char buf[64];

	(void)state;
	fakefs_put(fake_root, "cgroup.controllers", "memory pids\n");
	assert_int_equal(
		cordon_cgroup_create(
			&caps, &(struct cordon_cgroup_options){ .name = "fake-nocpu", .limits = &lim, .required = req },
			&cg, &missing, &d),
		-EOPNOTSUPP);
	assert_null(cg);
	assert_string_equal(d.step, "cgroup");
	assert_non_null(strstr(d.message, "cpu"));
	assert_non_null(strstr(d.message, "subtree_control"));
	assert_fake_clean();

	/* Best effort: pids applied, cpu reported missing, no cpu.max. */
	assert_int_equal(cordon_cgroup_create(&caps,
					      &(struct cordon_cgroup_options){ .name = "fake-nocpu",
									       .limits = &lim,
									       .required = 1u << CORDON_CTRL_PIDS },
					      &cg, &missing, &d),
			 0);
	assert_int_equal(missing, 1u << CORDON_CTRL_CPU);
	assert_null(cordon_cgroup_ctrl_path(cg, CORDON_CTRL_CPU));
	read_file(cordon_cgroup_v2_path(cg), "pids.max", buf, sizeof(buf));
	assert_string_equal(buf, "4");
	read_file(cordon_cgroup_v2_path(cg), "cpu.max", buf, sizeof(buf));
	assert_string_equal(buf, "");
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	assert_fake_clean();
	fakefs_put(fake_root, "cgroup.controllers", fake_controllers);
	fakefs_put(fake_root, "cgroup.subtree_control", "");
}

static void test_v2_subtree_control_unwritable(void **state)
{
	/* A base whose cgroup.subtree_control cannot be written (here: it is
	 * a directory, EISDIR): every controller fails with that errno. */
	struct cordon_cgroup_limits lim = { .mem_bytes = 1 << 20, .pids_max = 4, .cpu_micro = 100000 };
	struct cordon_cgroup *cg = NULL;
	struct cordon_diag d = { 0 };
	unsigned missing = 0;
	char p[PATH_MAX];

	(void)state;
	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", fake_root);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(__real_mkdir(p, 0755), 0);
	assert_int_equal(cordon_cgroup_create(&caps,
					      &(struct cordon_cgroup_options){ .name = "fake-busy",
									       .limits = &lim,
									       .required = 1u << CORDON_CTRL_PIDS },
					      &cg, &missing, &d),
			 -EISDIR);
	assert_null(cg);
	assert_non_null(strstr(d.message, "pids"));
	assert_non_null(strstr(d.message, "Is a directory"));
	assert_fake_clean();
	assert_int_equal(cordon_cgroup_create(
				 &caps,
				 &(struct cordon_cgroup_options){ .name = "fake-busy", .limits = &lim, .required = 0 },
				 &cg, &missing, &d),
			 0);
	assert_int_equal(missing, (1u << CORDON_CTRL_MEMORY) | (1u << CORDON_CTRL_PIDS) | (1u << CORDON_CTRL_CPU));
	assert_null(cordon_cgroup_ctrl_path(cg, CORDON_CTRL_PIDS));
	assert_non_null(cordon_cgroup_v2_path(cg));
	assert_int_equal(cordon_cgroup_destroy(cg), 0);
	assert_fake_clean();
	assert_int_equal(__real_rmdir(p), 0);
	fakefs_put(fake_root, "cgroup.subtree_control", "");
}

static void test_v2_stale_cleanup(void **state)
{
	struct cordon_cgroup_limits lim = { .pids_max = 4 };
	struct cordon_cgroup *dead = NULL, *live = NULL;
	char dead_path[PATH_MAX];
	pid_t owner;
	int status;

	(void)state;
	owner = fork();
	assert_true(owner >= 0);
	if (owner == 0) {
		pause();
		_exit(0);
	}
	assert_int_equal(
		cordon_cgroup_create(&caps,
				     &(struct cordon_cgroup_options){
					     .name = "fake-dead", .limits = &lim, .required = 0, .owner = owner },
				     &dead, NULL, NULL),
		0);
	assert_int_equal(cordon_cgroup_create(
				 &caps,
				 &(struct cordon_cgroup_options){ .name = "fake-live", .limits = &lim, .required = 0 },
				 &live, NULL, NULL),
			 0);
	snprintf(dead_path, sizeof(dead_path), "%s", cordon_cgroup_v2_path(dead));
	assert_int_equal(kill(owner, SIGKILL), 0);
	status = cordon_test_wait(owner);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(cordon_cgroup_cleanup_stale(&caps), 1);
	assert_int_equal(access(dead_path, F_OK), -1);
	assert_int_equal(access(cordon_cgroup_v2_path(live), F_OK), 0);
	assert_int_equal(cordon_cgroup_cleanup_stale(&caps), 0);
	assert_int_equal(cordon_cgroup_destroy(dead), 0);
	assert_int_equal(cordon_cgroup_destroy(live), 0);
	assert_fake_clean();
	fakefs_put(fake_root, "cgroup.subtree_control", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v2_limits_written),
		cmocka_unit_test(test_v2_stats),
		cmocka_unit_test(test_v2_enter),
		cmocka_unit_test(test_v2_controller_not_offered),
		cmocka_unit_test(test_v2_subtree_control_unwritable),
		cmocka_unit_test(test_v2_stale_cleanup),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
