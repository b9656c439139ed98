/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fd-util.c: fd_close_all_but(), which the sandbox's init and the root
 * guard's supervisor use after clone. Each case runs in a forked child (it
 * closes fds) and reports which of its fds are still open. Any user. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fd-util.h"

#define N_FDS 12

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* In a child: opens N_FDS fds, keeps those whose index is in keep_idx (plus
 * the extra values in extra, any fd numbers), calls fd_close_all_but and
 * exits 0 when exactly the kept ones (and 0-2) are open, else a code naming
 * the first wrong fd. */
static int run_child(const int *keep_idx, size_t n_idx, const int *extra, size_t n_extra)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		int fds[N_FDS], keep[N_FDS + 8];
		bool kept[N_FDS] = { false };
		size_t n = 0;

		for (int i = 0; i < N_FDS; i++)
			if ((fds[i] = open("/dev/null", O_RDONLY)) < 3)
				_exit(100);
		for (size_t i = 0; i < n_idx; i++) {
			keep[n++] = fds[keep_idx[i]];
			kept[keep_idx[i]] = true;
		}
		for (size_t i = 0; i < n_extra; i++)
			keep[n++] = extra[i];
		if (fd_close_all_but(keep, n) < 0)
			_exit(101);
		for (int i = 0; i < 3; i++)
			if (!is_open(i))
				_exit(102);
		for (int i = 0; i < N_FDS; i++)
			if (is_open(fds[i]) != kept[i])
				_exit(110 + i);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void test_keeps_exactly_the_listed(void **state)
{
	static const int unsorted[] = { 9, 2, 11, 5 };
	static const int adjacent[] = { 3, 4, 5 };
	static const int first_last[] = { 0, N_FDS - 1 };

	(void)state;
	assert_int_equal(run_child(NULL, 0, NULL, 0), 0);
	assert_int_equal(run_child(unsorted, 4, NULL, 0), 0);
	assert_int_equal(run_child(adjacent, 3, NULL, 0), 0);
	assert_int_equal(run_child(first_last, 2, NULL, 0), 0);
}

static void test_ignores_stdio_duplicates_and_unopened(void **state)
{
	static const int idx[] = { 1, 7 };
	static const int extra_stdio[] = { 0, 1, 2, -1 };
	static const int extra_unopened[] = { 900, 901 };

	(void)state;
	/* Numbers below 3 (and negative ones) are not closed nor counted. */
	assert_int_equal(run_child(idx, 2, extra_stdio, 4), 0);
	/* The same fd twice, and numbers with nothing open behind them. */
	assert_int_equal(run_child((const int[]){ 4, 4, 4 }, 3, NULL, 0), 0);
	assert_int_equal(run_child(idx, 2, extra_unopened, 2), 0);
}

static void test_too_many_kept_is_e2big(void **state)
{
	int keep[65];

	(void)state;
	for (int i = 0; i < 65; i++)
		keep[i] = 3 + i;
	/* Refused before anything is closed. */
	assert_int_equal(fd_close_all_but(keep, 65), -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keeps_exactly_the_listed),
		cmocka_unit_test(test_ignores_stdio_duplicates_and_unopened),
		cmocka_unit_test(test_too_many_kept_is_e2big),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
