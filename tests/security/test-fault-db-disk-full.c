/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fault injection: the database on a tiny tmpfs that fills up.
 *
 * The test process enters a private mount namespace (so nothing it mounts
 * can outlive it or be seen elsewhere), mounts a 4 MiB tmpfs, and runs the
 * broker fixture with its state directory there. After a working call, a
 * filler file takes every free byte. Then: a grant change, an approval
 * request and a dispatch of an approved mutating call all fail with an
 * error (-ENOSPC / -EIO, never success), nothing is sent to the connector,
 * no state changed (grants, approval states, action ledger), and a write-
 * tier decision is a deny (fail closed; a read-tier allow may stand, which
 * the broker counts as an audit append failure). When space returns
 * (filler removed) the same calls succeed, the mutating call executes
 * exactly once, and the audit chain verifies. The tmpfs is unmounted and
 * its directory removed at the end. Layer: libcordon-broker on a real
 * filesystem that runs out of space + a real connector process. */
#include <sched.h>
#include <sys/mount.h>

#include "sec-broker.h"

static int fill(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t n;

	assert_true(fd >= 0);
	memset(buf, 'F', sizeof(buf));
	/* Whole blocks first, then single bytes for the last partial page. */
	while ((n = write(fd, buf, sizeof(buf))) > 0)
		;
	while ((n = write(fd, buf, 1)) > 0)
		;
	assert_int_equal(errno, ENOSPC);
	close(fd);
	return 0;
}

static void test_db_disk_full_fails_closed_and_resumes(void **state)
{
	char *base, filler[4200], effect[4200], id[CORDON_ID_STRING_MAX], id2[CORDON_ID_STRING_MAX];
	struct bt *t;
	struct mcp_peer peer;
	struct bt_call c, c2;
	struct cordon_approval_info info;
	struct cordon_db_counters cnt;
	char **g;
	size_t ng;
	int r;

	(void)state;
	cordon_test_require_root();
	assert_int_equal(unshare(CLONE_NEWNS), 0);
	assert_int_equal(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	base = cordon_test_mkdtemp("sec-tmpfs");
	assert_int_equal(mount("cordon-sec-tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0755"), 0);
	assert_int_equal(setenv("TMPDIR", base, 1), 0);
	t = bt_new();
	unsetenv("TMPDIR");
	snprintf(filler, sizeof(filler), "%s/filler", base);
	/* The connector's effect file lives off the tmpfs: only the db is starved. */
	snprintf(effect, sizeof(effect), "%s.effect", base);
	sec_connector_start(&peer, "append", effect);

	bt_call_init(t, &c, "s1", "write_file", "{\"path\":\"/before\"}");
	bt_approve(t, &c.call, id);
	assert_int_equal(sec_dispatch(t, &peer, &c.call, id, "gw-full-0", NULL), SEC_EXECUTED);
	bt_call_done(&c);
	assert_int_equal(sec_count_lines(effect), 1);

	/* A call approved while there was space, dispatched when there is none. */
	bt_call_init(t, &c, "s1", "delete_file", "{\"path\":\"/during\"}");
	bt_approve(t, &c.call, id);
	fill(filler);

	r = cordon_grant_remove(t->db, &t->op, "fs", "mystery");
	printf("  grant_remove on a full disk: %s (%s)\n", strerror(-r), cordon_db_last_error(t->db));
	assert_true(r == -ENOSPC || r == -EIO);
	/* The message names the cause, not the rollback that followed it. */
	assert_null(strstr(cordon_db_last_error(t->db), "cannot rollback"));
	if (r == -ENOSPC)
		assert_non_null(strstr(cordon_db_last_error(t->db), "full"));
	bt_call_init(t, &c2, "s1", "delete_file", "{\"path\":\"/other\"}");
	r = cordon_approval_request(t->db, t->key, NULL, &c2.call, &info);
	printf("  approval_request on a full disk: %s\n", strerror(-r));
	assert_true(r == -ENOSPC || r == -EIO);
	r = sec_dispatch(t, &peer, &c.call, id, NULL, NULL);
	printf("  dispatch on a full disk: %s\n", strerror(-r));
	assert_true(r == -ENOSPC || r == -EIO);
	{
		struct cordon_decide_request rq = { .session = "s1",
						    .connector = "fs",
						    .tool = "delete_file",
						    .fingerprint = bt_fp(t, "delete_file") };
		struct cordon_broker_decision d;

		(void)cordon_broker_decide(t->db, &rq, &d);
		assert_int_equal(d.decision.verdict, CORDON_VERDICT_DENY);
	}
	cordon_db_get_counters(t->db, &cnt);
	printf("  audit append failures: %llu, rollbacks: %llu\n", (unsigned long long)cnt.audit_append_failures,
	       (unsigned long long)cnt.transactions_rolled_back);
	assert_true(cnt.audit_append_failures > 0 || cnt.transactions_rolled_back > 0);
	/* Nothing half-applied: the grant is still there, the approval unspent. */
	assert_int_equal(sec_count_lines(effect), 1);
	assert_int_equal(cordon_grants_list(t->db, "fs", &g, &ng), 0);
	assert_int_equal(ng, 5);
	strv_free(g);
	assert_int_equal(cordon_approval_get(t->db, id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_APPROVED);

	/* Space returns: service resumes, the call runs once. */
	assert_int_equal(unlink(filler), 0);
	assert_int_equal(sec_dispatch(t, &peer, &c.call, id, NULL, NULL), SEC_EXECUTED);
	assert_int_equal(sec_dispatch(t, &peer, &c.call, id, NULL, NULL), -EALREADY);
	assert_int_equal(sec_count_lines(effect), 2);
	assert_int_equal(cordon_grant_remove(t->db, &t->op, "fs", "mystery"), 0);
	bt_call_done(&c2);
	bt_call_init(t, &c2, "s1", "delete_file", "{\"path\":\"/other\"}");
	bt_approve(t, &c2.call, id2);
	bt_call_done(&c);
	bt_call_done(&c2);
	sec_connector_stop(&peer);
	assert_int_equal(sec_verify(t), CORDON_AUDIT_PASS);
	bt_free(t);
	unlink(effect);
	assert_int_equal(umount2(base, 0), 0);
	assert_int_equal(rmdir(base), 0);
	free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_db_disk_full_fails_closed_and_resumes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
