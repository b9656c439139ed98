/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: a profile that sets no limits is still contained, and the
 * report never calls a limit that is not set "enforced" (issue 11,
 * finding 10).
 *
 * Before: a profile without `limits` got no memory, pids or CPU limit (a
 * fork bomb ran 2000 processes) while the report said cgroup "enforced".
 * Now the parser gives every limit the profile leaves out its documented
 * default (CORDON_LIMIT_DEFAULT_*: memory 1G, pids 256, cpu 1, nofile 1024)
 * and the report lists, per limit, its value, its state and whether it is a
 * default. Here, with a real sandbox from a profile without a `limits`
 * section:
 *  - a fork bomb (sandbox-probe forkbomb) is stopped with EAGAIN below 256
 *    processes; pids_peak of the instance's cgroup is <= 256; the report's
 *    cgroup entry says enforced, limits {memory 1G, pids 256, cpu 1 CPU,
 *    nofile 1024}, every limit_states entry "enforced", defaults = all four;
 *    the instance's cgroup is gone afterwards;
 *  - a memory bomb is OOM-killed (SIGKILL) inside its cgroup at <= 1 GiB;
 *  - RLIMIT_NOFILE is 1024/1024 inside;
 *  - a profile struct with its pids limit taken away (by hand: the parser
 *    never leaves one unset) reports cgroup "degraded", pids "unset", and a
 *    missing entry "pids limit" — not "enforced".
 * Layer: libcordon spawn, a real sandbox (root). */
#include "sec-sbx.h"

static struct sbx *S;

static int group_setup(void **state)
{
	(void)state;
	S = sbx_new("sec-default-limits");
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	sbx_free(S);
	return 0;
}

/* The fixture's profile, without any `limits` section. */
static struct cordon_profile *profile_without_limits(void)
{
	struct cordon_profile *p = NULL;
	struct cordon_diag d = { 0 };
	char *text;
	int r;

	r = asprintf(&text,
		     "version: 1\n"
		     "connector:\n"
		     "  command: [/opt/cordon-test/sandbox-probe]\n"
		     "  workdir: /data\n"
		     "sandbox:\n"
		     "  user: dynamic\n"
		     "  filesystem:\n"
		     "    system:\n"
		     "      - {path: /usr, access: read-exec}\n"
		     "      - {path: /bin, access: read-exec}\n"
		     "      - {path: /lib, access: read-exec}\n"
		     "      - {path: /lib64, access: read-exec}\n"
		     "      - {path: /etc/ld.so.cache, access: read}\n"
		     "    roots:\n"
		     "      - {path: %s, access: read-exec, at: /opt/cordon-test}\n"
		     "      - {path: %s, access: read-write, at: /data, allow_uid0_owner: true}\n"
		     "    ceiling: [%s]\n"
		     "    tmp: 16M\n"
		     "  network:\n"
		     "    mode: none\n"
		     "  require: [landlock, seccomp, cgroup, namespaces]\n"
		     "tools:\n"
		     "  default_risk: high\n"
		     "  risk: {}\n"
		     "  grant: []\n",
		     S->bin, S->root, S->dir);
	assert_true(r > 0);
	r = cordon_profile_parse("nolimits", "nolimits.yaml", text, strlen(text), &p, &d);
	if (r < 0)
		fprintf(stderr, "profile: %u:%u %s\n", d.line, d.column, d.message);
	free(text);
	assert_int_equal(r, 0);
	return p;
}

static json_t *cgroup_entry(const json_t *rep)
{
	json_t *cg = json_object_get(json_object_get(rep, "controls"), "cgroup");

	assert_non_null(cg);
	return cg;
}

static json_int_t stat_of(const json_t *rep, const char *key)
{
	json_t *v = json_object_get(json_object_get(rep, "cgroup_stats"), key);

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

static void assert_cgroup_gone(const json_t *rep)
{
	const char *path = json_string_value(json_object_get(cgroup_entry(rep), "path"));
	struct stat st;

	if (path) /* the instance's cgroup2 directory was removed on teardown */
		assert_int_equal(stat(path, &st) < 0 ? errno : 0, ENOENT);
}

static void test_fork_bomb_contained_by_default_pids_limit(void **state)
{
	struct cordon_profile *p = profile_without_limits();
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	char *argv[] = { p->command[0], (char *)"forkbomb", NULL };
	const char *s;
	json_t *cg, *lim, *ls, *defs;
	int n = -1;

	(void)state;
	assert_int_equal(p->limits_defaulted,
			 CORDON_LIMIT_MEMORY | CORDON_LIMIT_PIDS | CORDON_LIMIT_CPU | CORDON_LIMIT_NOFILE);
	assert_int_equal(sbx_spawn(p, &S->caps, argv, &res, &d), 0);
	/* fork() answered EAGAIN at the limit. */
	assert_exited(res.status, EAGAIN);
	s = strstr(res.out, "fork stopped after ");
	assert_non_null(s);
	assert_int_equal(sscanf(s, "fork stopped after %d children", &n), 1);
	printf("  fork bomb without profile limits: stopped after %d children, pids_peak %lld\n", n,
	       (long long)stat_of(res.report, "pids_peak"));
	assert_true(n < CORDON_LIMIT_DEFAULT_PIDS);
	assert_true(n >= CORDON_LIMIT_DEFAULT_PIDS - 16); /* the limit stopped it, nothing smaller */
	assert_true(stat_of(res.report, "pids_peak") <= CORDON_LIMIT_DEFAULT_PIDS);
	assert_true(stat_of(res.report, "pids_peak") >= CORDON_LIMIT_DEFAULT_PIDS - 16);

	/* The report states the applied defaults, per limit. */
	cg = cgroup_entry(res.report);
	assert_string_equal(json_string_value(json_object_get(cg, "state")), "enforced");
	lim = json_object_get(cg, "limits");
	assert_true(json_integer_value(json_object_get(lim, "memory_bytes")) ==
		    (json_int_t)CORDON_LIMIT_DEFAULT_MEMORY);
	assert_int_equal(json_integer_value(json_object_get(lim, "pids")), CORDON_LIMIT_DEFAULT_PIDS);
	assert_int_equal(json_integer_value(json_object_get(lim, "cpu_micro")), CORDON_LIMIT_DEFAULT_CPU_MICRO);
	assert_int_equal(json_integer_value(json_object_get(lim, "nofile")), CORDON_LIMIT_DEFAULT_NOFILE);
	ls = json_object_get(cg, "limit_states");
	assert_string_equal(json_string_value(json_object_get(ls, "memory")), "enforced");
	assert_string_equal(json_string_value(json_object_get(ls, "pids")), "enforced");
	assert_string_equal(json_string_value(json_object_get(ls, "cpu")), "enforced");
	assert_string_equal(json_string_value(json_object_get(ls, "nofile")), "enforced");
	defs = json_object_get(cg, "defaults");
	assert_int_equal(json_array_size(defs), 4);
	assert_string_equal(json_string_value(json_array_get(defs, 0)), "memory");
	assert_string_equal(json_string_value(json_array_get(defs, 1)), "pids");
	assert_string_equal(json_string_value(json_array_get(defs, 2)), "cpu");
	assert_string_equal(json_string_value(json_array_get(defs, 3)), "nofile");
	assert_cgroup_gone(res.report);
	sbx_result_done(&res);
	cordon_profile_free(p);
}

static void test_memory_bomb_contained_by_default_memory_limit(void **state)
{
	struct cordon_profile *p = profile_without_limits();
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	char *argv[] = { p->command[0], (char *)"membomb", NULL };

	(void)state;
	assert_int_equal(sbx_spawn(p, &S->caps, argv, &res, &d), 0);
	printf("  memory bomb without profile limits: memory_peak_bytes %lld, oom_kills %lld\n",
	       (long long)stat_of(res.report, "memory_peak_bytes"), (long long)stat_of(res.report, "oom_kills"));
	assert_signaled(res.status, SIGKILL);
	assert_true(stat_of(res.report, "oom_kills") >= 1);
	assert_true(stat_of(res.report, "memory_peak_bytes") <= (json_int_t)CORDON_LIMIT_DEFAULT_MEMORY);
	assert_true(stat_of(res.report, "memory_peak_bytes") >= (json_int_t)(CORDON_LIMIT_DEFAULT_MEMORY / 2));
	assert_cgroup_gone(res.report);
	sbx_result_done(&res);
	cordon_profile_free(p);
}

static void test_default_nofile_applied(void **state)
{
	struct cordon_profile *p = profile_without_limits();
	char nofile[16];

	(void)state;
	snprintf(nofile, sizeof(nofile), "%d", CORDON_LIMIT_DEFAULT_NOFILE);
	/* Exit 0: core 0/0 and nofile 1024/1024 inside the sandbox. */
	assert_exited(sbx_probe_with(p, &S->caps, "rlimits", nofile, NULL), 0);
	cordon_profile_free(p);
}

/* A limit that is not set never reads "enforced". */
static void test_unset_limit_reported_degraded(void **state)
{
	struct cordon_profile *p = profile_without_limits();
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	char nofile[16];
	char *argv[] = { p->command[0], (char *)"rlimits", nofile, NULL };
	json_t *cg, *miss, *m;
	size_t i;
	bool named = false;

	(void)state;
	snprintf(nofile, sizeof(nofile), "%d", CORDON_LIMIT_DEFAULT_NOFILE);
	p->pids_max = 0;
	p->limits_defaulted &= ~(unsigned)CORDON_LIMIT_PIDS;
	assert_int_equal(sbx_spawn(p, &S->caps, argv, &res, &d), 0);
	assert_exited(res.status, 0);
	cg = cgroup_entry(res.report);
	assert_string_equal(json_string_value(json_object_get(cg, "state")), "degraded");
	assert_string_equal(json_string_value(json_object_get(json_object_get(cg, "limit_states"), "pids")), "unset");
	assert_string_equal(json_string_value(json_object_get(json_object_get(cg, "limit_states"), "memory")),
			    "enforced");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(cg, "limits"), "pids")), 0);
	miss = json_object_get(res.report, "missing");
	json_array_foreach(miss, i, m) if (!strcmp(json_string_value(json_object_get(m, "control")), "cgroup") &&
					   !strcmp(json_string_value(json_object_get(m, "what")), "pids limit")) named =
		true;
	assert_true(named);
	assert_cgroup_gone(res.report);
	sbx_result_done(&res);
	cordon_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_bomb_contained_by_default_pids_limit),
		cmocka_unit_test(test_memory_bomb_contained_by_default_memory_limit),
		cmocka_unit_test(test_default_nofile_applied),
		cmocka_unit_test(test_unset_limit_reported_degraded),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
