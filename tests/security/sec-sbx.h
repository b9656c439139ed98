/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The spawn fixture (tests/kernel/spawn-test.h) maps a directory of the
 * test's own at /opt/cordon-test inside the sandbox and copies
 * sandbox-probe there; this copies another helper (evil-connector,
 * sec-probe) next to it. Returns the path the sandbox sees (static buffer
 * per call site is not needed: the caller copies it). */

#include "../kernel/spawn-test.h"

static inline void sec_sbx_install(struct sbx *s, const char *name, char *ret_inside, size_t size)
{
	char src[PATH_MAX], dst[PATH_MAX], *data = NULL;
	size_t len = 0;
	int fd;

	snprintf(src, sizeof(src), "%s/%s", s->helpers, name);
	assert_int_equal(read_file_bounded(AT_FDCWD, src, 64 << 20, &data, &len), 0);
	snprintf(dst, sizeof(dst), "%s/%s", s->bin, name);
	fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	free(data);
	snprintf(ret_inside, size, "/opt/cordon-test/%s", name);
}
