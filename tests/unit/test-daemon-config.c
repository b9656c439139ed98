/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordond's configuration: the strict YAML file and the flags. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon-config.h"
#include "test-support.h"

static char *dir;

static const char *write_cfg(const char *text)
{
	static char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cordond.yaml", dir);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static int load(const char *text, struct cordon_daemon_config *c, struct cordon_diag *d)
{
	cordon_daemon_config_init(c);
	return cordon_daemon_config_load(c, write_cfg(text), d);
}

static void test_full_file(void **state)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};

	(void)state;
	assert_int_equal(load("profiles: /etc/cordon/profiles\n"
			      "state: /var/lib/cordon\n"
			      "runtime: /run/cordon\n"
			      "user: cordon\n"
			      "operator_group: adm\n"
			      "http: 127.0.0.1:9464\n"
			      "approval_wait: 45s\n"
			      "result_cap: 2M\n"
			      "max_sessions: 100\n",
			      &c, &d),
			 0);
	assert_string_equal(c.profiles_dir, "/etc/cordon/profiles");
	assert_string_equal(c.state_dir, "/var/lib/cordon");
	assert_string_equal(c.runtime_dir, "/run/cordon");
	assert_string_equal(c.user, "cordon");
	assert_string_equal(c.http_listen, "127.0.0.1:9464");
	assert_int_equal(c.approval_wait_ms, 45000);
	assert_int_equal(c.result_cap, 2 * 1024 * 1024);
	assert_int_equal(c.max_sessions, 100);
	cordon_daemon_config_done(&c);
}

static void expect_bad(const char *text, unsigned line, const char *needle)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};

	assert_true(load(text, &c, &d) < 0);
	if (line)
		assert_int_equal(d.line, line);
	if (!strstr(d.message, needle))
		fail_msg("message '%s' lacks '%s'", d.message, needle);
	/* Nothing of a bad file is applied. */
	assert_null(c.state_dir);
	cordon_daemon_config_done(&c);
}

static void test_rejects(void **state)
{
	(void)state;
	expect_bad("state: /a\nstat: /b\n", 2, "unknown key 'stat'");
	expect_bad("state: /a\nstate: /b\n", 2, "duplicate key 'state'");
	expect_bad("state: relative/dir\n", 1, "absolute");
	expect_bad("state: /a/../b\n", 1, "absolute");
	expect_bad("http: 0.0.0.0:80\n", 1, "127.0.0.1:PORT");
	expect_bad("http: 127.0.0.1:70000\n", 1, "127.0.0.1:PORT");
	expect_bad("approval_wait: 30\n", 1, "duration");
	expect_bad("approval_wait: 2h\n", 1, "duration");
	expect_bad("result_cap: 1\n", 1, "size");
	expect_bad("user: 'a b'\n", 1, "user");
	expect_bad("state: [/a]\n", 1, "scalar");
	expect_bad("- a\n", 1, "mapping");
	expect_bad("state: /a\n  bad: indent\n", 0, "");
	expect_bad("", 0, "empty");
}

/* Issue 11 findings 3 and 6: the held-argument budgets and session shares,
 * their documented defaults, bounds and the per-uid <= global check. */
static void test_resource_shares(void **state)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};

	(void)state;
	cordon_daemon_config_init(&c);
	assert_int_equal(c.held_max, 256ull * 1024 * 1024);
	assert_int_equal(c.held_per_uid, 64ull * 1024 * 1024);
	assert_int_equal(c.sessions_per_uid, 0); /* max_sessions / 4 */
	assert_int_equal(c.initialize_timeout_ms, 10000);
	cordon_daemon_config_done(&c);

	assert_int_equal(load("held_arguments_max: 1G\nheld_arguments_per_uid: 128M\nsessions_per_uid: 32\n"
			      "initialize_timeout: 3s\n",
			      &c, &d),
			 0);
	assert_int_equal(c.held_max, 1024ull * 1024 * 1024);
	assert_int_equal(c.held_per_uid, 128ull * 1024 * 1024);
	assert_int_equal(c.sessions_per_uid, 32);
	assert_int_equal(c.initialize_timeout_ms, 3000);
	cordon_daemon_config_done(&c);

	expect_bad("held_arguments_max: 512K\n", 1, "held_arguments_max: must be a size between 1M and 64G");
	expect_bad("held_arguments_per_uid: 65G\n", 1, "held_arguments_per_uid: must be a size between 1M and 64G");
	expect_bad("sessions_per_uid: 0\n", 1, "sessions_per_uid: must be between 1 and 65536");
	expect_bad("initialize_timeout: 0s\n", 1, "initialize_timeout: must be a duration between 1s and 1h");
	expect_bad("initialize_timeout: 2h\n", 1, "initialize_timeout");

	/* A per-uid budget above the global one is a contradiction. */
	assert_int_equal(load("state: /var/lib/cordon\nprofiles: /etc/p\nheld_arguments_max: 16M\n"
			      "held_arguments_per_uid: 32M\n",
			      &c, &d),
			 0);
	assert_int_equal(cordon_daemon_config_finish(&c, &d), -EINVAL);
	assert_string_equal(d.message,
			    "held_arguments_per_uid (33554432 bytes) exceeds held_arguments_max (16777216 bytes)");
	cordon_daemon_config_done(&c);
}

static void test_flags_override_file(void **state)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};
	const char *path = write_cfg("state: /var/lib/cordon\nprofiles: /etc/p\napproval_wait: 10s\n");
	char *argv[] = { "cordond", "--config", (char *)path, "--state", "./st", "--approval-wait", "5s", NULL };

	(void)state;
	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_parse_args(&c, 7, argv, &d), 0);
	assert_int_equal(cordon_daemon_config_finish(&c, &d), 0);
	assert_int_equal(c.approval_wait_ms, 5000);
	assert_string_equal(c.profiles_dir, "/etc/p");
	/* Relative flag paths are taken from the working directory. */
	assert_true(c.state_dir[0] == '/');
	assert_non_null(strstr(c.state_dir, "/st"));
	assert_null(strstr(c.state_dir, "/./"));
	/* Runtime defaults to STATE/run. */
	assert_non_null(strstr(c.runtime_dir, "/st/run"));
	/* As root without --user, cordond drops to its private id (resolved
	 * at start-up), never to a shared account. */
	assert_null(c.user);
	cordon_daemon_config_done(&c);
}

static void test_flag_errors(void **state)
{
	struct cordon_daemon_config c;
	struct cordon_diag d = {};
	char *a1[] = { "cordond", "--bogus", NULL };
	char *a2[] = { "cordond", "--state", "/s", NULL };
	char *a3[] = { "cordond", "--http", "10.0.0.1:80", NULL };
	char *a4[] = { "cordond", "--help", NULL };

	(void)state;
	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_parse_args(&c, 2, a1, &d), -EINVAL);
	assert_non_null(strstr(d.message, "--bogus"));
	cordon_daemon_config_done(&c);

	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_parse_args(&c, 3, a2, &d), 0);
	assert_int_equal(cordon_daemon_config_finish(&c, &d), -EINVAL);
	assert_non_null(strstr(d.message, "profiles"));
	cordon_daemon_config_done(&c);

	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_parse_args(&c, 3, a3, &d), -EINVAL);
	cordon_daemon_config_done(&c);

	cordon_daemon_config_init(&c);
	assert_int_equal(cordon_daemon_config_parse_args(&c, 2, a4, &d), 1);
	cordon_daemon_config_done(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_file),	cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_resource_shares), cmocka_unit_test(test_flags_override_file),
		cmocka_unit_test(test_flag_errors),
	};
	int r;

	dir = cordon_test_mkdtemp("daemon-config");
	r = cmocka_run_group_tests(tests, NULL, NULL);
	cordon_test_rm_rf(dir);
	free(dir);
	return r;
}
