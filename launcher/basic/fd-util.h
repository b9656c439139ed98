/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Writes all of buf, retrying on EINTR and short writes. Returns 0 or -errno. */
int write_all(int fd, const void *buf, size_t len);

/* Reads until len bytes or EOF, retrying on EINTR. Returns the byte count
 * (short only at EOF) or -errno. */
ssize_t read_full(int fd, void *buf, size_t len);

/* Reads a whole file of at most max bytes into a NUL-terminated malloc'd
 * buffer. Returns 0 and writes *ret_buf and *ret_len, -EFBIG when the file is
 * larger than max, or -errno. */
int read_file_bounded(int dirfd, const char *path, size_t max, char **ret_buf, size_t *ret_len);

/* Reads one small text file (procfs, sysfs, cgroupfs) into buf, NUL-terminated,
 * with the trailing newline removed. Returns the length or -errno. */
ssize_t read_small_file(const char *path, char *buf, size_t size);

/* Writes a string to an existing file (procfs, sysfs, cgroupfs) with one
 * write(2). Returns 0 or -errno. */
int write_small_file(const char *path, const char *s);
int write_small_file_at(int dirfd, const char *path, const char *s);

/* Closes every fd >= 3 except those in keep (any order; at most 64 of
 * them >= 3, else -E2BIG): close_range(), or on kernels before 5.9 a
 * close() per possible fd (bounded by RLIMIT_NOFILE, at most 1 << 20).
 * Async-signal-safe (no allocation, no stdio): spawn-child.c's init and the
 * root guard's supervisor call it after clone. Returns 0 or -errno. */
int fd_close_all_but(const int *keep, size_t n_keep);

int fd_set_cloexec(int fd, int on);
int fd_set_nonblock(int fd, int on);
