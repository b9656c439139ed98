/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Suite-level check: every fd, cgroup, BPF link, mount, process and temp
 * directory the security suite creates is gone at the end.
 *
 * Registered last (the name sorts after every other tests/security test and
 * the label runs serially). Other engineers' suites may run concurrently on
 * a shared machine, so the scan is scoped to what THIS suite names:
 *  - cgroups: no directory named cordon-sec-* in any hierarchy under
 *    /sys/fs/cgroup (instance and egress-test cgroups use that prefix);
 *  - mounts: nothing in this process's mount namespace (the host's) whose
 *    source is cordon-sec-tmpfs or whose mount point is under
 *    /tmp/cordon-test-sec-*;
 *  - BPF: no loaded cordon_* program is held by a process of this suite
 *    (test-* or helper names), and no cgroup BPF attachment sits on a
 *    cordon-sec-* cgroup (bpftool cgroup tree);
 *  - processes: no evil-connector or sec-probe process is alive;
 *  - temp dirs: no /tmp/cordon-test-sec-* directory is left;
 *  - fds: this runner holds nothing but stdio and what it inherited, and no
 *    inherited fd refers to a cordon test path, a BPF object or a pidfd. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test-support.h"

static int count_output(const char *cmd)
{
	char line[4096];
	FILE *f = popen(cmd, "re");
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		printf("  leftover: %s", line);
		n++;
	}
	pclose(f);
	return n;
}

static void test_no_cgroups_left(void **state)
{
	(void)state;
	assert_int_equal(count_output("find /sys/fs/cgroup -maxdepth 6 -type d -name 'cordon-sec-*' 2>/dev/null"), 0);
}

static void test_no_mounts_left(void **state)
{
	(void)state;
	assert_int_equal(count_output("grep -E 'cordon-sec-tmpfs|/cordon-test-sec-' /proc/self/mountinfo"), 0);
}

static void test_no_bpf_left(void **state)
{
	(void)state;
	if (access("/usr/sbin/bpftool", X_OK) < 0)
		cordon_test_skip("bpftool not installed");
	/* A cordon_* program held by a process of this suite (comm test-* or a
	 * helper) would be a leak: its links keep the policy attached. */
	assert_int_equal(count_output("/usr/sbin/bpftool -j prog show 2>/dev/null | python3 -c '"
				      "import json,sys\n"
				      "for p in json.load(sys.stdin):\n"
				      " n=p.get(\"name\") or \"\"\n"
				      " for h in p.get(\"pids\") or []:\n"
				      "  c=h.get(\"comm\",\"\")\n"
				      "  if n.startswith(\"cordon\") and (c.startswith(\"test-\") or c in "
				      "(\"evil-connector\",\"sec-probe\")):\n"
				      "   print(n, c, h.get(\"pid\"))'"),
			 0);
	assert_int_equal(count_output("/usr/sbin/bpftool cgroup tree 2>/dev/null | grep 'cordon-sec-'"), 0);
}

static void test_no_processes_left(void **state)
{
	(void)state;
	assert_int_equal(count_output("ps -eo pid,comm | grep -E ' (evil-connector|sec-probe)$'"), 0);
}

static void test_no_temp_dirs_left(void **state)
{
	const char *marker = getenv("CORDON_SEC_MARKER");
	char cmd[1200];

	(void)state;
	/* Only directories made since the suite began count: one an earlier,
	 * interrupted run left behind is not this run's leak. */
	if (marker && access(marker, F_OK) == 0)
		snprintf(cmd, sizeof(cmd),
			 "find /tmp -maxdepth 1 -name 'cordon-test-sec-*' -newer '%s' -print 2>/dev/null", marker);
	else
		snprintf(cmd, sizeof(cmd), "ls -d /tmp/cordon-test-sec-* 2>/dev/null");
	assert_int_equal(count_output(cmd), 0);
}

static void test_runner_fds(void **state)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int bad = 0, n = 0;

	(void)state;
	assert_non_null(d);
	while ((de = readdir(d))) {
		char p[300], target[4096];
		ssize_t len;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		if (fd == dirfd(d))
			continue;
		n++;
		snprintf(p, sizeof(p), "/proc/self/fd/%s", de->d_name);
		len = readlink(p, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		printf("  fd %d -> %s\n", fd, target);
		if (strstr(target, "cordon-test-") || strstr(target, "anon_inode:bpf") || strstr(target, "[pidfd]") ||
		    strstr(target, "anon_inode:[pidfd]"))
			bad++;
	}
	closedir(d);
	assert_int_equal(bad, 0);
	assert_true(n >= 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_cgroups_left),	  cmocka_unit_test(test_no_mounts_left),
		cmocka_unit_test(test_no_bpf_left),	  cmocka_unit_test(test_no_processes_left),
		cmocka_unit_test(test_no_temp_dirs_left), cmocka_unit_test(test_runner_fds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
