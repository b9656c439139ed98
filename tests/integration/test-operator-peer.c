/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Who may use the operator socket, decided from the kernel's record of the
 * peer (SO_PEERCRED, SO_PEERGROUPS) on every request: a forked child that
 * drops to an unprivileged uid/gid is refused on EVERY op of the protocol
 * (and its requests change nothing); a child holding the operator group as
 * its primary or a supplementary group is served, unless the group database
 * (readable here) no longer lists its user in the group; a uid without a
 * passwd entry is judged by its kernel groups alone. Root only (setresuid). */

#include <grp.h>
#include <pwd.h>

#include "../unit/operator-socket-test.h"

#define NOBODY	      65534
#define NOGROUP	      65534
#define OTHER_GID     43210 /* no group of that id needs to exist */
#define OTHER_GID2    43211
#define NO_PASSWD_UID 43210 /* a uid without a passwd entry */

struct fx {
	struct bt *t;
	struct cordon_daemon *d;
	char *dir, *path;
	int lfd;
	struct cordon_operator *op;
};

static struct fx *start(gid_t operator_gid)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->t = bt_new();
	f->d = test_daemon_new(f->t);
	f->dir = cordon_test_mkdtemp("oppeer");
	assert_int_equal(chmod(f->dir, 0755), 0);
	assert_true(asprintf(&f->path, "%s/operator.sock", f->dir) > 0);
	f->lfd = sock_listen(f->path);
	/* World-connectable on purpose: the test is about the per-request
	 * check, not the file mode (production uses 0660 root:operators). */
	assert_int_equal(chmod(f->path, 0666), 0);
	assert_int_equal(cordon_operator_start_opts(f->d, f->lfd, operator_gid, NULL, &f->op), 0);
	return f;
}

static void stop(struct fx *f)
{
	cordon_operator_free(f->op);
	close(f->lfd);
	test_daemon_free(f->d);
	bt_free(f->t);
	assert_int_equal(cordon_test_rm_rf(f->dir), 0);
	free(f->dir);
	free(f->path);
	free(f);
}

/* A request for op with its required arguments filled with plausible values. */
static char *request_for(const struct cordon_op_spec *op, unsigned id)
{
	json_t *args = json_object();
	char *line = NULL;
	size_t len;

	for (size_t i = 0; i < CORDON_OP_MAX_ARGS && op->args[i].name; i++) {
		const char *n = op->args[i].name;

		if (!op->args[i].required)
			continue;
		if (op->args[i].type == CORDON_OP_ARG_STRING_LIST)
			json_object_set_new(args, n, json_pack("[s]", "read_file"));
		else if (!strcmp(n, "connector"))
			json_object_set_new(args, n, json_string("fs"));
		else if (!strcmp(n, "tool"))
			json_object_set_new(args, n, json_string("write_file"));
		else if (!strcmp(n, "outcome"))
			json_object_set_new(args, n, json_string("failed"));
		else
			json_object_set_new(args, n, json_string("x"));
	}
	if (cordon_op_request_encode(id, op->name, args, &line, &len) < 0)
		line = NULL;
	json_decref(args);
	return line;
}

/* The child: drop to uid/gid with supplementary group supp (none when
 * (gid_t)-1), send every op, check each answer's code. want NULL: anything
 * but permission-denied. */
static void child(const char *path, uid_t uid, gid_t gid, gid_t supp, const char *want)
{
	unsigned id = 1;
	int fd;

	if (supp == (gid_t)-1)
		CHILD_CHECK(setgroups(0, NULL) == 0);
	else
		CHILD_CHECK(setgroups(1, &supp) == 0);
	CHILD_CHECK(setresgid(gid, gid, gid) == 0);
	CHILD_CHECK(setresuid(uid, uid, uid) == 0);
	CHILD_CHECK(geteuid() == uid);
	fd = sock_connect(path);
	CHILD_CHECK(fd >= 0);
	for (const struct cordon_op_spec *op = cordon_op_table; op->name; op++, id++) {
		char *line = request_for(op, id), buf[1 << 16], code[64];
		ssize_t n;

		CHILD_CHECK(line != NULL);
		CHILD_CHECK(write(fd, line, strlen(line)) == (ssize_t)strlen(line));
		free(line);
		n = read_line(fd, buf, sizeof(buf));
		CHILD_CHECK(n > 0);
		response_code(buf, code, sizeof(code));
		if (want && strcmp(code, want) != 0) {
			fprintf(stderr, "op %s: got %s, want %s: %s\n", op->name, code, want, buf);
			_exit(97);
		}
		if (!want && strcmp(code, CORDON_OP_E_DENIED) == 0) {
			fprintf(stderr, "op %s: refused: %s\n", op->name, buf);
			_exit(96);
		}
		/* a refused request reveals nothing, not even whether it parsed */
		if (want && strstr(buf, "\"result\""))
			_exit(95);
	}
	/* garbage is refused for the same reason before it is parsed */
	{
		char buf[4096], code[64];

		CHILD_CHECK(write(fd, "nonsense\n", 9) == 9);
		CHILD_CHECK(read_line(fd, buf, sizeof(buf)) > 0);
		if (want)
			CHILD_CHECK(strcmp(response_code(buf, code, sizeof(code)), want) == 0);
	}
	close(fd);
	_exit(0);
}

static int run_child(struct fx *f, uid_t uid, gid_t gid, gid_t supp, const char *want)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		child(f->path, uid, gid, supp, want);
	return pump_until_exit(f->d->loop, pid);
}

static void test_unprivileged_refused_everywhere(void **state)
{
	struct fx *f = start(OTHER_GID);
	uint64_t epoch0, epoch1;
	char **g = NULL;
	size_t n = 0;
	int st;

	(void)state;
	assert_int_equal(cordon_db_policy_epoch(f->t->db, &epoch0), 0);
	st = run_child(f, NOBODY, NOGROUP, (gid_t)-1, CORDON_OP_E_DENIED);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* nothing happened: no notification, grants intact, same epoch */
	assert_int_equal(json_array_size(f->d->events), 0);
	assert_int_equal(cordon_db_policy_epoch(f->t->db, &epoch1), 0);
	assert_int_equal(epoch0, epoch1);
	assert_int_equal(cordon_grants_list(f->t->db, "fs", &g, &n), 0);
	assert_int_equal(n, 5);
	strv_free(g);
	stop(f);
}

static void require_nobody(void)
{
	struct passwd *pw = getpwuid(NOBODY);

	if (!pw || pw->pw_gid != NOGROUP)
		cordon_test_skip("needs user nobody (65534) with primary group 65534 in the passwd database");
	if (getpwuid(NO_PASSWD_UID))
		cordon_test_skip("uid %d must not have a passwd entry", NO_PASSWD_UID);
}

static void expect(gid_t operator_gid, uid_t uid, gid_t gid, gid_t supp, const char *want)
{
	struct fx *f = start(operator_gid);
	int st = run_child(f, uid, gid, supp, want);

	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* served children really acted: revoke-all went through as operator */
	assert_int_equal(test_daemon_saw(f->d, "revoked_all"), want == NULL);
	stop(f);
}

static void test_primary_gid_is_operator(void **state)
{
	(void)state;
	require_nobody();
	expect(NOGROUP, NOBODY, NOGROUP, (gid_t)-1, NULL);
}

static void test_supplementary_group_is_operator(void **state)
{
	(void)state;
	require_nobody();
	/* SO_PEERCRED says gid OTHER_GID; SO_PEERGROUPS carries 65534 */
	expect(NOGROUP, NOBODY, OTHER_GID, NOGROUP, NULL);
}

static void test_group_database_revokes(void **state)
{
	(void)state;
	require_nobody();
	/* The process holds OTHER_GID2 (as after a login session that began
	 * before its user was removed from the group), the database does not
	 * list nobody in it: refused. Same for the primary gid. */
	expect(OTHER_GID2, NOBODY, OTHER_GID, OTHER_GID2, CORDON_OP_E_DENIED);
	expect(OTHER_GID, NOBODY, OTHER_GID, (gid_t)-1, CORDON_OP_E_DENIED);
}

static void test_uid_without_passwd_entry(void **state)
{
	(void)state;
	require_nobody();
	/* no database entry: the kernel's groups decide */
	expect(NOGROUP, NO_PASSWD_UID, OTHER_GID, NOGROUP, NULL);
	expect(NOGROUP, NO_PASSWD_UID, OTHER_GID, (gid_t)-1, CORDON_OP_E_DENIED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unprivileged_refused_everywhere), cmocka_unit_test(test_primary_gid_is_operator),
		cmocka_unit_test(test_supplementary_group_is_operator), cmocka_unit_test(test_group_database_revokes),
		cmocka_unit_test(test_uid_without_passwd_entry),
	};

	cordon_test_require_root();
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
