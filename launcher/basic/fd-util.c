/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fd-util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "syscall-compat.h"

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, p + done, len - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int read_file_bounded(int dirfd, const char *path, size_t max, char **ret_buf, size_t *ret_len)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	size_t cap = 4096, len = 0;

	if (max >= SIZE_MAX - 1)
		return -EINVAL;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;

	/* Read incrementally rather than trusting st_size: procfs and pipes
	 * report 0, and a file may grow while we read it. One byte past max
	 * proves the file is too large. */
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == cap) {
			size_t ncap = cap * 2;
			char *nb;

			if (ncap > max + 2)
				ncap = max + 2;
			if (ncap <= cap)
				return -EFBIG;
			nb = realloc(buf, ncap);
			if (!nb)
				return -ENOMEM;
			buf = nb;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max)
			return -EFBIG;
	}
	if (len == cap) {
		char *nb = realloc(buf, cap + 1);

		if (!nb)
			return -ENOMEM;
		buf = nb;
	}
	buf[len] = '\0';
	*ret_buf = TAKE_PTR(buf);
	if (ret_len)
		*ret_len = len;
	return 0;
}

ssize_t read_small_file(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = -EBADF;
	ssize_t n;

	if (size == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	n = read_full(fd, buf, size - 1);
	if (n < 0)
		return n;
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return n;
}

int write_small_file_at(int dirfd, const char *path, const char *s)
{
	_cleanup_close_ int fd = -EBADF;
	size_t len = strlen(s);
	ssize_t n;

	fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	/* cgroupfs and procfs take a value in a single write; a short write is
	 * an error, not something to continue. */
	do
		n = write(fd, s, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EIO;
	return 0;
}

int write_small_file(const char *path, const char *s)
{
	return write_small_file_at(AT_FDCWD, path, s);
}

int fd_set_cloexec(int fd, int on)
{
	int flags = fcntl(fd, F_GETFD);

	if (flags < 0)
		return -errno;
	flags = on ? (flags | FD_CLOEXEC) : (flags & ~FD_CLOEXEC);
	if (fcntl(fd, F_SETFD, flags) < 0)
		return -errno;
	return 0;
}

int fd_set_nonblock(int fd, int on)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0)
		return -errno;
	flags = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
	if (fcntl(fd, F_SETFL, flags) < 0)
		return -errno;
	return 0;
}

static void sort_ints(int *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			int t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

/* close_range(), or on kernels before 5.9 a close() per possible fd (bounded
 * by RLIMIT_NOFILE, at most 1 << 20). */
static int close_span(unsigned first, unsigned last)
{
	struct rlimit rl;
	unsigned max;

	if (sys_close_range(first, last, 0) == 0)
		return 0;
	if (errno != ENOSYS)
		return -errno;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	max = rl.rlim_cur > (1u << 20) ? (1u << 20) : (unsigned)rl.rlim_cur;
	for (unsigned fd = first; fd <= last && fd < max; fd++)
		(void)close((int)fd);
	return 0;
}

int fd_close_all_but(const int *keep_in, size_t n_keep)
{
	int keep[64];
	size_t n = 0;
	unsigned next = 3;
	int r;

	for (size_t i = 0; i < n_keep && n < ELEMENTSOF(keep); i++)
		if (keep_in[i] >= 3)
			keep[n++] = keep_in[i];
	if (n < n_keep && n == ELEMENTSOF(keep))
		return -E2BIG;
	sort_ints(keep, n);
	for (size_t i = 0; i < n; i++) {
		if ((unsigned)keep[i] > next && (r = close_span(next, (unsigned)keep[i] - 1)) < 0)
			return r;
		if ((unsigned)keep[i] + 1 > next)
			next = (unsigned)keep[i] + 1;
	}
	return close_span(next, ~0U);
}
