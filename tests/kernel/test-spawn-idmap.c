/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Read-write roots owned by another user. cordon's choice: an id-mapped
 * mount maps the root owner's uid/gid to the instance's dynamic uid/gid, so
 * the connector can write and what it writes belongs to the owner on disk,
 * never to a dynamic uid that a later instance will reuse. A named
 * `sandbox.user` that owns the root gets a plain bind mount. */
#include "spawn-test.h"

static struct sbx *S;

static int group_setup(void **state)
{
	(void)state;
	S = sbx_new("spawn-idmap");
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	sbx_free(S);
	return 0;
}

static void file_owner(const char *name, uid_t *uid, gid_t *gid)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", S->root, name);
	assert_int_equal(stat(path, &st), 0);
	*uid = st.st_uid;
	*gid = st.st_gid;
}

static void test_write_into_root_owned_by_other_user(void **state)
{
	struct cordon_profile *p;
	char path[PATH_MAX];
	uid_t u;
	gid_t g;

	(void)state;
	assert_int_equal(chown(S->root, 4242, 4343), 0);
	snprintf(path, sizeof(path), "%s/theirs", S->root);
	sbx_write_file(path, "theirs\n");
	assert_int_equal(chown(path, 4242, 4343), 0);
	snprintf(path, sizeof(path), "%s/roots-file", S->root);
	sbx_write_file(path, "root's\n");

	p = sbx_profile(S, NULL);
	assert_exited(sbx_probe_with(p, &S->caps, "write", "/data/created", NULL), 0);
	file_owner("created", &u, &g);
	assert_int_equal(u, 4242);
	assert_int_equal(g, 4343);
	/* An existing file of the owner is writable... */
	assert_exited(sbx_probe_with(p, &S->caps, "write", "/data/theirs", NULL), 0);
	file_owner("theirs", &u, &g);
	assert_int_equal(u, 4242);
	/* ...a file of another user in the same root is not. */
	assert_exited(sbx_probe_with(p, &S->caps, "write", "/data/roots-file", NULL), EACCES);
	/* Directories too. */
	assert_exited(sbx_probe_with(p, &S->caps, "symlink", "created", "/data/link"), 0);
	cordon_profile_free(p);
	assert_int_equal(chown(S->root, 0, 0), 0);
}

static void test_dynamic_uid_in_documented_range(void **state)
{
	struct cordon_profile *p;
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	unsigned uid = 0, gid = 0;
	int ngroups = -1;
	char *argv[3];

	(void)state;
	p = sbx_profile(S, NULL);
	argv[0] = p->command[0];
	argv[1] = (char *)"ids";
	argv[2] = NULL;
	assert_int_equal(sbx_spawn(p, &S->caps, argv, &res, &d), 0);
	assert_exited(res.status, 0);
	assert_int_equal(sscanf(res.out, "%u %u %d", &uid, &gid, &ngroups), 3);
	assert_true(uid >= CORDON_DYNAMIC_UID_BASE && uid < CORDON_DYNAMIC_UID_BASE + CORDON_DYNAMIC_UID_COUNT);
	assert_int_equal(gid, uid);
	assert_int_equal(ngroups, 0);
	assert_int_equal(json_integer_value(json_object_get(res.report, "uid")), uid);
	sbx_result_done(&res);
	cordon_profile_free(p);
}

static void test_concurrent_instances_get_distinct_uids(void **state)
{
	struct cordon_profile *p;
	struct cordon_instance *inst[4] = { 0 };
	struct cordon_diag d = { 0 };
	char *argv[4];
	int st;

	(void)state;
	p = sbx_profile(S, NULL);
	argv[0] = p->command[0];
	argv[1] = (char *)"sleep";
	argv[2] = (char *)"2";
	argv[3] = NULL;
	for (int i = 0; i < 4; i++) {
		struct cordon_launch_policy pol = { .profile = p, .argv = argv, .stdio = CORDON_STDIO_INHERIT };

		assert_int_equal(cordon_spawn(&pol, &S->caps, &inst[i], &d), 0);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(cordon_instance_uid(inst[i]), cordon_instance_uid(inst[j]));
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(cordon_instance_signal(inst[i], SIGTERM), 0);
		assert_int_equal(cordon_instance_wait(inst[i], &st), 0);
		assert_signaled(st, SIGTERM);
		cordon_instance_free(inst[i]);
	}
	cordon_profile_free(p);
}

static void test_named_user_owning_root(void **state)
{
	struct sbx_opts o = { .user = "nobody" };
	struct cordon_profile *p;
	uid_t u;
	gid_t g;

	(void)state;
	assert_int_equal(chown(S->root, 65534, 65534), 0);
	p = sbx_profile(S, &o);
	assert_exited(sbx_probe_with(p, &S->caps, "write", "/data/by-nobody", NULL), 0);
	file_owner("by-nobody", &u, &g);
	assert_int_equal(u, 65534);
	assert_int_equal(g, 65534);
	cordon_profile_free(p);
	assert_int_equal(chown(S->root, 0, 0), 0);
}

static void test_named_root_user_refused(void **state)
{
	struct sbx_opts o = { .user = "nobody" };
	struct cordon_profile *p;
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	char *argv[3];

	(void)state;
	/* The profile loader already refuses `user: root`; cordon_spawn()
	 * checks again, for policies built some other way. */
	p = sbx_profile(S, &o);
	free(p->user);
	p->user = strdup("root");
	argv[0] = p->command[0];
	argv[1] = (char *)"ids";
	argv[2] = NULL;
	assert_int_equal(sbx_spawn(p, &S->caps, argv, &res, &d), -EPERM);
	assert_string_equal(d.step, "user");
	cordon_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_into_root_owned_by_other_user),
		cmocka_unit_test(test_dynamic_uid_in_documented_range),
		cmocka_unit_test(test_concurrent_instances_get_distinct_uids),
		cmocka_unit_test(test_named_user_owning_root),
		cmocka_unit_test(test_named_root_user_refused),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
