/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every allocation cordond's configuration loader makes (the file read, the
 * strict YAML layer, the copy the file is applied to, each value) is failed
 * in turn: each run must either load the whole file or fail with -ENOMEM
 * and a message saying so, with the configuration it was given unchanged,
 * and (under ASan) leak nothing. Registered by daemon-config-oom.cmake with
 * the allocator wrapped at link time (alloc-fail.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc-fail.h"
#include "cleanup.h"
#include "daemon-config.h"
#include "test-support.h"

static char *dir;

/* Every key, so every allocation site is reached. */
static const char full[] = "profiles: /etc/cordon/profiles\n"
			   "state: /var/lib/cordon\n"
			   "runtime: /run/cordon\n"
			   "user: cordon\n"
			   "operator_group: adm\n"
			   "gateway_group: agents\n"
			   "http: 127.0.0.1:9464\n"
			   "approval_wait: 45s\n"
			   "result_cap: 2M\n"
			   "launcher: /usr/libexec/cordon/cordon-launch\n"
			   "max_sessions: 100\n"
			   "held_arguments_max: 1G\n"
			   "held_arguments_per_uid: 128M\n"
			   "sessions_per_uid: 32\n"
			   "initialize_timeout: 2m\n";

static char *write_file(const char *name, const char *text)
{
	char *path;
	FILE *f;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* The configuration each run starts from, loaded without failures. */
static void start(struct cordon_daemon_config *c, const char *base)
{
	struct cordon_diag d = {};

	cordon_daemon_config_init(c);
	assert_int_equal(cordon_daemon_config_load(c, base, &d), 0);
}

static void assert_unchanged(const struct cordon_daemon_config *c)
{
	assert_string_equal(c->state_dir, "/old");
	assert_string_equal(c->user, "old-user");
	assert_null(c->runtime_dir);
	assert_int_equal(c->max_sessions, 4096);
	assert_int_equal(c->approval_wait_ms, 30000);
}

static void test_every_allocation_fails_cleanly(void **state)
{
	_cleanup_free_ char *base = write_file("base.yaml", "state: /old\nuser: old-user\n");
	_cleanup_free_ char *path = write_file("full.yaml", full);
	unsigned long n;

	(void)state;
	for (n = 0;; n++) {
		struct cordon_daemon_config c;
		struct cordon_diag d = {};
		int r;

		start(&c, base);
		alloc_fail_countdown = (long)n;
		alloc_fail_count = 0;
		r = cordon_daemon_config_load(&c, path, &d);
		alloc_fail_countdown = -1;
		if (alloc_fail_count == 0) {
			/* No allocation was failed: the run must have succeeded. */
			assert_int_equal(r, 0);
			assert_string_equal(c.state_dir, "/var/lib/cordon");
			assert_string_equal(c.user, "cordon");
			assert_string_equal(c.launcher, "/usr/libexec/cordon/cordon-launch");
			assert_int_equal(c.initialize_timeout_ms, 120000);
			cordon_daemon_config_done(&c);
			break;
		}
		if (r != -ENOMEM)
			print_message("allocation %lu failed: r=%d %s\n", n, r, d.message);
		assert_int_equal(r, -ENOMEM);
		assert_int_equal(d.error, ENOMEM);
		assert_non_null(strstr(d.message, "out of memory"));
		assert_unchanged(&c);
		cordon_daemon_config_done(&c);
	}
	/* The loop went through the allocation sites: the read, the context,
	 * one node and one value per scalar, the copy's strings, the values. */
	assert_true(n > 40);
}

/* A bad file under allocation failure: -ENOMEM or its own error, never a
 * half-applied configuration. */
static void test_bad_file_under_oom(void **state)
{
	_cleanup_free_ char *base = write_file("base.yaml", "state: /old\nuser: old-user\n");
	_cleanup_free_ char *path = write_file("bad.yaml", "state: /new\nuser: new\nresult_cap: 1\nstate: /x\n");

	(void)state;
	for (long n = 0; n < 100; n++) {
		struct cordon_daemon_config c;
		struct cordon_diag d = {};
		int r;

		start(&c, base);
		alloc_fail_countdown = n;
		r = cordon_daemon_config_load(&c, path, &d);
		alloc_fail_countdown = -1;
		assert_true(r == -ENOMEM || r == -EINVAL);
		assert_int_equal(d.error, -r);
		assert_unchanged(&c);
		cordon_daemon_config_done(&c);
	}
}

/* The flags and finish(): -ENOMEM or success, nothing leaked. */
static void test_flags_under_oom(void **state)
{
	_cleanup_free_ char *path = write_file("flags.yaml", full);
	char *argv[] = { "cordond", "--config",	  path, "--state", "/s",	  "--runtime",
			 "rel/run", "--user",	  "u",	"--http",  "127.0.0.1:1", "--max-sessions",
			 "5",	    "--launcher", "/l", NULL };
	unsigned long n;

	(void)state;
	for (n = 0;; n++) {
		struct cordon_daemon_config c;
		struct cordon_diag d = {};
		int r;

		cordon_daemon_config_init(&c);
		alloc_fail_countdown = (long)n;
		alloc_fail_count = 0;
		r = cordon_daemon_config_parse_args(&c, (int)ELEMENTSOF(argv) - 1, argv, &d);
		if (r >= 0)
			r = cordon_daemon_config_finish(&c, &d);
		alloc_fail_countdown = -1;
		if (alloc_fail_count == 0) {
			assert_int_equal(r, 0);
			assert_string_equal(c.state_dir, "/s");
			assert_int_equal(c.max_sessions, 5);
			assert_string_equal(c.profiles_dir, "/etc/cordon/profiles");
			cordon_daemon_config_done(&c);
			break;
		}
		if (r != -ENOMEM)
			print_message("allocation %lu failed: r=%d %s\n", n, r, d.message);
		assert_int_equal(r, -ENOMEM);
		assert_int_equal(d.error, ENOMEM);
		cordon_daemon_config_done(&c);
	}
	assert_true(n > 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_allocation_fails_cleanly),
		cmocka_unit_test(test_bad_file_under_oom),
		cmocka_unit_test(test_flags_under_oom),
	};
	int r;

	dir = cordon_test_mkdtemp("daemon-config-oom");
	r = cmocka_run_group_tests(tests, NULL, NULL);
	cordon_test_rm_rf(dir);
	free(dir);
	return r;
}
