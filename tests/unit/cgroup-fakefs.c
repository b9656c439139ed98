/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cgroup-fakefs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "test-support.h"

char *fake_root;
const char *fake_controllers = "cpuset cpu io memory pids\n";

void fakefs_put(const char *dir, const char *file, const char *content)
{
	char p[PATH_MAX + 64];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		abort();
	if (write_all(fd, content, strlen(content)) < 0)
		abort();
	close(fd);
}

static void populate(const char *dir)
{
	fakefs_put(dir, "cgroup.controllers", fake_controllers);
	fakefs_put(dir, "cgroup.subtree_control", "");
	fakefs_put(dir, "cgroup.procs", "");
	fakefs_put(dir, "cgroup.events", "populated 0\nfrozen 0\n");
	fakefs_put(dir, "cgroup.kill", "");
	fakefs_put(dir, "cgroup.freeze", "");
	/* Writable limit files start empty: cordon's writes land at offset
	 * 0 of a regular file, so the content is exactly what it wrote. */
	fakefs_put(dir, "memory.max", "");
	fakefs_put(dir, "memory.swap.max", "");
	fakefs_put(dir, "memory.peak", "33550336\n");
	fakefs_put(dir, "memory.events", "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n");
	fakefs_put(dir, "pids.max", "");
	fakefs_put(dir, "pids.peak", "16\n");
	fakefs_put(dir, "cpu.max", "");
	fakefs_put(dir, "cpu.stat", "usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\n");
}

bool fakefs_under_root(const char *path)
{
	size_t n = fake_root ? strlen(fake_root) : 0;

	return n && strncmp(path, fake_root, n) == 0 && path[n] == '/';
}

int __wrap_mkdir(const char *path, mode_t mode)
{
	int r = __real_mkdir(path, mode);

	if (r == 0 && fakefs_under_root(path))
		populate(path);
	return r;
}

int __wrap_rmdir(const char *path)
{
	if (fakefs_under_root(path)) {
		DIR *d = opendir(path);
		struct dirent *de;

		if (d) {
			bool subdir = false;

			/* Like cgroupfs: a directory with child cgroups is
			 * busy; control files go with the directory. */
			while ((de = readdir(d)))
				if (de->d_type == DT_DIR && strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
					subdir = true;
			if (subdir) {
				closedir(d);
				errno = EBUSY;
				return -1;
			}
			rewinddir(d);
			while ((de = readdir(d)))
				if (de->d_type == DT_REG)
					(void)unlinkat(dirfd(d), de->d_name, 0);
			closedir(d);
		}
	}
	return __real_rmdir(path);
}

void fakefs_setup(struct cordon_caps *caps)
{
	fake_root = cordon_test_mkdtemp("cgroup2-fake");
	fakefs_put(fake_root, "cgroup.controllers", fake_controllers);
	fakefs_put(fake_root, "cgroup.subtree_control", "");
	memset(caps, 0, sizeof(*caps));
	caps->cgroup_layout = CORDON_CGROUP_V2;
	snprintf(caps->cgroup2_mount, sizeof(caps->cgroup2_mount), "%s", fake_root);
	for (int c = 0; c < _CORDON_CTRL_MAX; c++) {
		caps->ctrl[c].available = true;
		caps->ctrl[c].v2 = true;
		caps->ctrl[c].can_create = true;
		snprintf(caps->ctrl[c].path, sizeof(caps->ctrl[c].path), "%s", fake_root);
	}
	caps->cgroup_kill = true;
	caps->clone_into_cgroup = true;
}

int fakefs_teardown(void)
{
	int r = cordon_test_rm_rf(fake_root);

	free(fake_root);
	fake_root = NULL;
	return r;
}
