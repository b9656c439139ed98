/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Helpers for tests that drive the real operator socket server: a listening
 * AF_UNIX socket in a temp dir, and a pump that runs the daemon loop while a
 * forked client (or a cordonctl process) does its part. */

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "operator-test-daemon.h"
#include "operator.h"

static inline int sock_listen(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_true(strlen(path) < sizeof(sa.sun_path));
	strcpy(sa.sun_path, path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 128), 0);
	return fd;
}

/* Connects; -errno on failure. Usable in a forked child. */
static inline int sock_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	strcpy(sa.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* Runs the loop until pid exits; returns its wait status. */
static inline int pump_until_exit(struct cordon_loop *loop, pid_t pid)
{
	for (;;) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		assert_true(r == 0);
		assert_true(cordon_loop_run_once(loop, 10) >= 0);
	}
}

/* Runs the loop for ms milliseconds. */
static inline void pump_for(struct cordon_loop *loop, unsigned ms)
{
	uint64_t end = cordon_loop_now_ms() + ms;

	while (cordon_loop_now_ms() < end)
		assert_true(cordon_loop_run_once(loop, 10) >= 0);
}

/* Reads one line from fd (blocking with a 5 s guard) into buf. Returns its
 * length, 0 on EOF before any byte, -errno. Usable in a child. */
static inline ssize_t read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;

	while (n + 1 < size) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t k;

		if (poll(&p, 1, 5000) <= 0)
			return -ETIMEDOUT;
		k = read(fd, buf + n, 1);
		if (k < 0)
			return -errno;
		if (k == 0)
			return n ? -EPIPE : 0;
		if (buf[n] == '\n') {
			buf[n] = 0;
			return (ssize_t)n;
		}
		n++;
	}
	return -ENOBUFS;
}

/* In the parent (same process as the server): sends line and pumps the loop
 * until one response line is read. */
static inline ssize_t roundtrip(struct cordon_loop *loop, int fd, const char *line, char *buf, size_t size)
{
	size_t n = 0;
	uint64_t end = cordon_loop_now_ms() + 5000;

	if (line)
		assert_int_equal(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	while (cordon_loop_now_ms() < end) {
		ssize_t k;

		assert_true(cordon_loop_run_once(loop, 10) >= 0);
		for (;;) {
			k = recv(fd, buf + n, 1, MSG_DONTWAIT);
			if (k <= 0)
				break;
			if (buf[n] == '\n') {
				buf[n] = 0;
				return (ssize_t)n;
			}
			if (++n + 1 >= size)
				return -ENOBUFS;
		}
		if (k == 0)
			return n ? -EPIPE : 0;
	}
	return -ETIMEDOUT;
}

/* The error code of a response line, or "ok". */
static inline const char *response_code(const char *line, char *out, size_t size)
{
	json_error_t e;
	json_t *v = json_loads(line, 0, &e);

	snprintf(out, size, "%s",
		 !v ? "unparsable"
		 : json_is_true(json_object_get(v, "ok"))
			 ? "ok"
			 : (json_string_value(json_object_get(json_object_get(v, "error"), "code")) ?: "no-code"));
	json_decref(v);
	return out;
}
