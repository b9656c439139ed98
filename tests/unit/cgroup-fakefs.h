/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A fake cgroup2 filesystem in $TMPDIR for tests of the pure-v2 path of the
 * cgroup module (which this hybrid machine cannot run for real). Link with
 * -Wl,--wrap=mkdir,--wrap=rmdir: a directory made under the fake root gets
 * the control files the kernel would create, and rmdir removes them first
 * (refusing with EBUSY while child directories exist, like cgroupfs). */

#include <stdbool.h>
#include <sys/types.h>

#include "probe.h"

extern char *fake_root;
extern const char *fake_controllers;

int __real_mkdir(const char *path, mode_t mode);
int __real_rmdir(const char *path);
int __wrap_mkdir(const char *path, mode_t mode);
int __wrap_rmdir(const char *path);

/* Writes `content` to dir/file (created, truncated). Aborts on failure. */
void fakefs_put(const char *dir, const char *file, const char *content);

/* True when path lies strictly below the fake root. */
bool fakefs_under_root(const char *path);

/* Makes the fake root (with cgroup.controllers and an empty
 * cgroup.subtree_control) and fills *caps as a pure-v2 kernel whose
 * cgroup2 is mounted there. */
void fakefs_setup(struct cordon_caps *caps);

/* Removes the fake root. Returns 0 or -errno. */
int fakefs_teardown(void);
