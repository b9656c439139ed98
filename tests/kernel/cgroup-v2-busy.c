/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The no-internal-processes fallback of the pure-v2 path: when the
 * launcher's own cgroup2 cgroup holds processes, the kernel refuses to enable
 * controllers for its children (EBUSY) and the module must use the parent
 * (the layout of a delegated service with the launcher in a leaf).
 *
 * Runs on the fake cgroupfs of tests/unit/cgroup-fakefs.c, which also
 * wraps write(2) here to refuse cgroup.subtree_control with EBUSY while the
 * sibling cgroup.procs is non-empty, as the kernel does. Root is needed
 * because the child moves itself into a real cgroup2 cgroup below the
 * unified mount, so that /proc/self/cgroup names a non-root path. */
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

#include "../unit/cgroup-fakefs.h"
#include "cgroup.h"
#include "fd-util.h"
#include "probe.h"
#include "test-support.h"

ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n);

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	char link[64], path[PATH_MAX], procs[PATH_MAX + 16], content[64];
	const char *base;
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, path, sizeof(path) - 1);
	if (len > 0) {
		path[len] = '\0';
		base = strrchr(path, '/');
		if (fakefs_under_root(path) && base && strcmp(base, "/cgroup.subtree_control") == 0) {
			snprintf(procs, sizeof(procs), "%.*s/cgroup.procs", (int)(base - path), path);
			if (read_small_file(procs, content, sizeof(content)) > 0) {
				errno = EBUSY;
				return -1;
			}
		}
	}
	return __real_write(fd, buf, n);
}

/* The real cgroup2 mount (from the probe). */
static char real_cgroup2[PATH_MAX];

static void test_busy_own_cgroup_uses_parent(void **state)
{
	struct cordon_caps caps;
	char real[PATH_MAX], runner[PATH_MAX], buf[256], pidstr[32];
	pid_t pid;
	int status;

	(void)state;
	fakefs_setup(&caps);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct cordon_cgroup_limits lim = { .mem_bytes = 32ull << 20, .pids_max = 16 };
		unsigned req = (1u << CORDON_CTRL_MEMORY) | (1u << CORDON_CTRL_PIDS);
		struct cordon_cgroup *cg = NULL;
		struct cordon_diag d = { 0 };
		char want[PATH_MAX + 32];

		/* A real cgroup2 cgroup of our own, so /proc/self/cgroup reads
		 * "0::/t-cg-runner-<pid>". */
		snprintf(real, sizeof(real), "%s/t-cg-runner-%d", real_cgroup2, (int)getpid());
		CHILD_CHECK(mkdir(real, 0755) == 0);
		{
			char p[PATH_MAX + 32];

			snprintf(p, sizeof(p), "%s/cgroup.procs", real);
			CHILD_CHECK(write_small_file(p, "0") == 0);
		}
		/* Its fake twin holds the launcher (us). */
		snprintf(runner, sizeof(runner), "%s/t-cg-runner-%d", fake_root, (int)getpid());
		CHILD_CHECK(mkdir(runner, 0755) == 0);
		snprintf(pidstr, sizeof(pidstr), "%d\n", (int)getpid());
		fakefs_put(runner, "cgroup.procs", pidstr);

		CHILD_CHECK(cordon_cgroup_create(
				    &caps,
				    &(struct cordon_cgroup_options){ .name = "busy", .limits = &lim, .required = req },
				    &cg, NULL, &d) == 0);
		/* The instance went below the parent (the fake mount root)... */
		snprintf(want, sizeof(want), "%s/cordon/", fake_root);
		CHILD_CHECK(strncmp(cordon_cgroup_v2_path(cg), want, strlen(want)) == 0);
		/* ...where the controllers were enabled; our busy cgroup was
		 * left alone. */
		snprintf(want, sizeof(want), "%s/cgroup.subtree_control", fake_root);
		CHILD_CHECK(read_small_file(want, buf, sizeof(buf)) >= 0 && strcmp(buf, "+memory +pids +cpu") == 0);
		snprintf(want, sizeof(want), "%s/cgroup.subtree_control", runner);
		CHILD_CHECK(read_small_file(want, buf, sizeof(buf)) >= 0 && strcmp(buf, "") == 0);
		snprintf(want, sizeof(want), "%s/memory.max", cordon_cgroup_v2_path(cg));
		CHILD_CHECK(read_small_file(want, buf, sizeof(buf)) >= 0 && strcmp(buf, "33554432") == 0);

		/* Stale cleanup scans both bases: an instance of a dead owner
		 * below the parent is found. */
		CHILD_CHECK(cordon_cgroup_cleanup_stale(&caps) >= 0);
		CHILD_CHECK(access(cordon_cgroup_v2_path(cg), F_OK) == 0);
		CHILD_CHECK(cordon_cgroup_destroy(cg) == 0);
		snprintf(want, sizeof(want), "%s/cordon", fake_root);
		CHILD_CHECK(access(want, F_OK) < 0 && errno == ENOENT);

		/* Leave the real cgroup before the parent removes it. */
		snprintf(want, sizeof(want), "%s/cgroup.procs", real_cgroup2);
		CHILD_CHECK(write_small_file(want, "0") == 0);
		_exit(0);
	}
	status = cordon_test_wait(pid);
	snprintf(real, sizeof(real), "%s/t-cg-runner-%d", real_cgroup2, (int)pid);
	(void)rmdir(real);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(access(real, F_OK), -1);
	assert_int_equal(fakefs_teardown(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busy_own_cgroup_uses_parent),
	};

	struct cordon_caps real;

	cordon_test_require_root();
	if (cordon_probe(&real) < 0 || !real.cgroup2_mount[0])
		cordon_test_skip("no cgroup2 mount");
	snprintf(real_cgroup2, sizeof(real_cgroup2), "%s", real.cgroup2_mount);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
