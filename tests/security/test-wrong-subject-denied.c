/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: the wrong subject (another session, another uid) is denied.
 *
 * Another session: an approval made for session s1 cannot be consumed by s2
 * (-EBADMSG: the HMAC binding covers the session) and s2's attempt does not
 * spend it (s1 can still use it, once); s2 cannot revoke s1's delegation
 * (-EPERM) nor end s1's approvals.
 * Another uid: the broker's database is 0600 and owned by the broker; a
 * process running as another uid (a child that drops to uid/gid 65534 with
 * no capabilities, as any local user) cannot open it (open(2) -> EACCES),
 * cannot open its directory's WAL/SHM files, and cordon_db_open() as that
 * uid fails closed. Conversely a database file that another uid owns is
 * refused by the broker (-EPERM, "owned by another user" in the diag).
 * Layer: libcordon-broker, real processes with real credentials. */
#include <grp.h>
#include <sys/prctl.h>

#include "sec-broker.h"

#define NOBODY 65534

static void test_another_session_denied(void **state)
{
	struct bt *t = bt_new();
	struct mcp_peer peer;
	struct bt_call c;
	char effect[4096], id[CORDON_ID_STRING_MAX];
	struct cordon_delegation_info di;
	struct cordon_approval_info info;
	char *ceil = cordon_test_mkdtemp("sec-ceiling");

	(void)state;
	snprintf(effect, sizeof(effect), "%s/effect", t->dir);
	sec_connector_start(&peer, "append", effect);
	bt_call_init(t, &c, "s1", "delete_file", "{\"path\":\"/p\"}");
	bt_approve(t, &c.call, id);
	c.call.session = "s2";
	assert_int_equal(sec_dispatch(t, &peer, &c.call, id, NULL, NULL), -EBADMSG);
	assert_int_equal(cordon_approval_get(t->db, id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_APPROVED); /* not spent by the wrong subject */
	assert_int_equal(sec_count_lines(effect), 0);
	c.call.session = "s1";
	assert_int_equal(sec_dispatch(t, &peer, &c.call, id, NULL, NULL), SEC_EXECUTED);
	assert_int_equal(sec_count_lines(effect), 1);
	bt_call_done(&c);

	/* Delegations belong to the session that asked. */
	assert_int_equal(cordon_delegation_request(t->db, &t->s1, "fs", "/tmp", CORDON_ACCESS_READ, 0, &di), 0);
	assert_int_equal(cordon_delegation_revoke(t->db, &t->s2, di.id), -EPERM);
	assert_int_equal(cordon_delegation_get(t->db, di.id, &di), 0);
	assert_int_equal(di.state, CORDON_DELEGATION_PENDING);
	/* Nor can a session activate it (operator only). */
	assert_int_equal(cordon_delegation_activate(t->db, &t->s1, di.id, NULL), -EPERM);

	sec_connector_stop(&peer);
	assert_int_equal(sec_verify(t), CORDON_AUDIT_PASS);
	bt_free(t);
	assert_int_equal(cordon_test_rm_rf(ceil), 0);
	free(ceil);
}

/* In a child: become uid/gid 65534 with no supplementary groups (setresuid
 * from root clears every capability), then try the broker's files. */
static void child_other_uid(const char *dir, const char *db_path)
{
	char wal[4200];
	struct cordon_db *db = NULL;
	struct cordon_diag d = {};
	int r;

	CHILD_CHECK(setgroups(0, NULL) == 0);
	CHILD_CHECK(setresgid(NOBODY, NOBODY, NOBODY) == 0);
	CHILD_CHECK(setresuid(NOBODY, NOBODY, NOBODY) == 0);
	CHILD_CHECK_ERRNO(open(db_path, O_RDONLY | O_CLOEXEC), EACCES);
	CHILD_CHECK_ERRNO(open(db_path, O_RDWR | O_CLOEXEC), EACCES);
	snprintf(wal, sizeof(wal), "%s-wal", db_path);
	CHILD_CHECK(open(wal, O_RDONLY | O_CLOEXEC) < 0 && (errno == EACCES || errno == ENOENT));
	/* The state directory itself is 0700. */
	CHILD_CHECK_ERRNO(opendir(dir) ? 0 : -1, EACCES);
	r = cordon_db_open(db_path, NULL, &db, &d);
	CHILD_CHECK(r < 0);
	printf("  cordon_db_open as uid %d: %s (%s)\n", NOBODY, strerror(-r), d.message);
	fflush(stdout);
	_exit(0);
}

static void test_another_uid_denied(void **state)
{
	struct bt *t;
	struct stat st;
	pid_t pid;
	struct cordon_db *db = NULL;
	struct cordon_diag d = {};
	char *other;
	int fd;

	(void)state;
	cordon_test_require_root();
	t = bt_new();
	assert_int_equal(stat(t->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(chmod(t->dir, 0700), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		child_other_uid(t->dir, t->path);
	assert_int_equal(cordon_test_wait(pid), 0);

	/* A database file that someone else owns is not the broker's. */
	assert_true(asprintf(&other, "%s/other.db", t->dir) > 0);
	fd = open(other, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, NOBODY, NOBODY), 0);
	close(fd);
	assert_int_equal(cordon_db_open(other, NULL, &db, &d), -EPERM);
	printf("  foreign-owned db: %s\n", d.message);
	assert_null(db);
	free(other);
	bt_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_another_session_denied),
		cmocka_unit_test(test_another_uid_denied),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
