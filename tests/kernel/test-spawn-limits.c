/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Cgroup limits of a real sandbox: a fork bomb stops at pids.max, a memory
 * bomb is OOM-killed inside its cgroup (and nothing outside it), and the
 * report carries the statistics that say so. */
#include "spawn-test.h"

static struct sbx *S;

static int group_setup(void **state)
{
	(void)state;
	S = sbx_new("spawn-limits");
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	sbx_free(S);
	return 0;
}

static json_int_t stat_of(const json_t *rep, const char *key)
{
	json_t *v = json_object_get(json_object_get(rep, "cgroup_stats"), key);

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

static void test_fork_bomb_stops_at_pids(void **state)
{
	struct sbx_opts o = { .limits = "{memory: 256M, pids: 16, cpu: 1, nofile: 256}" };
	struct cordon_profile *p;
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	char *argv[3];

	(void)state;
	p = sbx_profile(S, &o);
	argv[0] = p->command[0];
	argv[1] = (char *)"forkbomb";
	argv[2] = NULL;
	assert_int_equal(sbx_spawn(p, &S->caps, argv, &res, &d), 0);
	/* fork() answers EAGAIN at the limit; the bomb's children die with
	 * the sandbox when the connector exits. */
	assert_exited(res.status, EAGAIN);
	assert_non_null(strstr(res.out, "fork stopped after"));
	assert_true(stat_of(res.report, "pids_peak") <= 16);
	assert_true(stat_of(res.report, "pids_peak") >= 10);
	sbx_result_done(&res);
	cordon_profile_free(p);
}

static void test_fork_bomb_stops_without_cgroups(void **state)
{
	struct sbx_opts o = { .limits = "{memory: 256M, pids: 16, cpu: 1, nofile: 256}",
			      .require = "[landlock, seccomp, namespaces]" };
	struct cordon_caps caps = S->caps;
	struct cordon_profile *p;
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	char *argv[3];

	(void)state;
	/* No cgroups at all: RLIMIT_NPROC on the instance's own dynamic uid
	 * still stops the bomb. */
	caps.cgroup_layout = CORDON_CGROUP_NONE;
	p = sbx_profile(S, &o);
	argv[0] = p->command[0];
	argv[1] = (char *)"forkbomb";
	argv[2] = NULL;
	assert_int_equal(sbx_spawn(p, &caps, argv, &res, &d), 0);
	assert_exited(res.status, EAGAIN);
	assert_non_null(strstr(res.out, "fork stopped after"));
	assert_string_equal(sbx_state(res.report, "cgroup"), "unavailable");
	sbx_result_done(&res);
	cordon_profile_free(p);
}

static void test_memory_bomb_oom_killed_and_reported(void **state)
{
	struct sbx_opts o = { .limits = "{memory: 48M, pids: 16, cpu: 1, nofile: 256}" };
	struct cordon_profile *p;
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	char *argv[3];
	json_t *ex;

	(void)state;
	p = sbx_profile(S, &o);
	argv[0] = p->command[0];
	argv[1] = (char *)"membomb";
	argv[2] = NULL;
	assert_int_equal(sbx_spawn(p, &S->caps, argv, &res, &d), 0);
	assert_signaled(res.status, SIGKILL);
	assert_true(stat_of(res.report, "oom_kills") >= 1);
	assert_true(stat_of(res.report, "memory_peak_bytes") >= 40 << 20);
	assert_true(stat_of(res.report, "memory_peak_bytes") <= 48 << 20);
	ex = json_object_get(res.report, "exit");
	assert_string_equal(json_string_value(json_object_get(ex, "how")), "signaled");
	assert_int_equal(json_integer_value(json_object_get(ex, "signal")), SIGKILL);
	assert_int_equal(json_integer_value(json_object_get(ex, "shell_code")), 128 + SIGKILL);
	sbx_result_done(&res);
	cordon_profile_free(p);
}

static void test_cpu_time_reported(void **state)
{
	struct cordon_profile *p;
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	char *argv[4];

	(void)state;
	p = sbx_profile(S, NULL);
	argv[0] = p->command[0];
	argv[1] = (char *)"threads";
	argv[2] = NULL;
	assert_int_equal(sbx_spawn(p, &S->caps, argv, &res, &d), 0);
	assert_exited(res.status, 0);
	assert_true(stat_of(res.report, "cpu_usage_usec") > 0);
	assert_true(stat_of(res.report, "oom_kills") == 0);
	sbx_result_done(&res);
	cordon_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_bomb_stops_at_pids),
		cmocka_unit_test(test_fork_bomb_stops_without_cgroups),
		cmocka_unit_test(test_memory_bomb_oom_killed_and_reported),
		cmocka_unit_test(test_cpu_time_reported),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
