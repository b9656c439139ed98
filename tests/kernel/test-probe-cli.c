/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `cordon-launch --probe` ($CORDON_LAUNCH): the JSON it prints parses and
 * equals what cordon_probe() reports in this process (same credentials, same
 * kernel), apart from the probe's own duration; `--probe --human` prints the
 * table for every control; a bad argument is refused. Needs root. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "probe-util.h"
#include "probe.h"
#include "test-support.h"

static const char *launch;

/* Runs $CORDON_LAUNCH with args, returns the wait status and its stdout. */
static int run_launch(const char *const *args, char **ret_out)
{
	char *argv[8] = { (char *)launch };
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int p[2], status;
	pid_t pid;

	for (size_t i = 0; args[i] && i < 6; i++)
		argv[i + 1] = (char *)args[i];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (dup2(p[1], STDOUT_FILENO) < 0)
			_exit(126);
		execv(launch, argv);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		ssize_t n;

		if (len + 4096 > cap) {
			cap = cap ? cap * 2 : 16384;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		n = read(p[0], buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		assert_true(n >= 0);
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(p[0]);
	buf[len] = '\0';
	status = cordon_test_wait(pid);
	*ret_out = buf;
	return status;
}

static int setup(void **state)
{
	(void)state;
	cordon_test_require_root();
	launch = cordon_test_env("CORDON_LAUNCH", NULL);
	if (!launch || access(launch, X_OK) != 0)
		cordon_test_skip("CORDON_LAUNCH is not set to an executable");
	return 0;
}

static void test_json_matches_library(void **state)
{
	const char *args[] = { "--probe", NULL };
	struct cordon_caps caps;
	json_t *cli, *lib;
	json_error_t err;
	char *out, *mine;
	int st;

	(void)state;
	st = run_launch(args, &out);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	cli = json_loads(out, JSON_REJECT_DUPLICATES, &err);
	if (!cli)
		fail_msg("--probe output is not JSON: %s at %d:%d", err.text, err.line, err.column);

	assert_int_equal(cordon_probe(&caps), 0);
	mine = cordon_probe_to_json(&caps);
	assert_non_null(mine);
	lib = json_loads(mine, JSON_REJECT_DUPLICATES, &err);
	assert_non_null(lib);

	/* The duration is the only thing allowed to differ; it must be there. */
	assert_true(json_is_integer(json_object_get(json_object_get(cli, "probe"), "duration_us")));
	assert_int_equal(json_object_del(cli, "probe"), 0);
	assert_int_equal(json_object_del(lib, "probe"), 0);
	if (!json_equal(cli, lib)) {
		char *a = json_dumps(cli, JSON_SORT_KEYS), *b = json_dumps(lib, JSON_SORT_KEYS);

		fail_msg("--probe differs from cordon_probe():\n%s\n%s", a, b);
	}
	json_decref(cli);
	json_decref(lib);
	free(mine);
	free(out);
}

static void test_human_table(void **state)
{
	const char *args[] = { "--probe", "--human", NULL };
	struct cordon_probe_row rows[CORDON_PROBE_MAX_ROWS];
	struct cordon_caps caps;
	char *out;
	size_t n;
	int st;

	(void)state;
	st = run_launch(args, &out);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_non_null(strstr(out, "\nCONTROL "));

	/* Every control appears at the start of a line with its verdict. */
	assert_int_equal(cordon_probe(&caps), 0);
	n = cordon_probe_rows(&caps, rows, CORDON_PROBE_MAX_ROWS);
	assert_true(n > 20);
	for (size_t i = 0; i < n; i++) {
		char needle[64];
		const char *line;

		snprintf(needle, sizeof(needle), "\n%s ", rows[i].control);
		line = strstr(out, needle);
		if (!line)
			fail_msg("control %s missing from --human output", rows[i].control);
		line += strlen(needle);
		line += strspn(line, " ");
		assert_int_equal(strncmp(line, cordon_probe_status_to_string(rows[i].status),
					 strlen(cordon_probe_status_to_string(rows[i].status))),
				 0);
	}
	free(out);
}

static void test_bad_argument(void **state)
{
	const char *args[] = { "--probe", "--bogus", NULL };
	char *out;
	int st;

	(void)state;
	st = run_launch(args, &out);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 2);
	assert_string_equal(out, "");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_matches_library),
		cmocka_unit_test(test_human_table),
		cmocka_unit_test(test_bad_argument),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
