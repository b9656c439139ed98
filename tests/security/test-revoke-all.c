/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: revoke-all works (grants, approvals, delegations, running
 * jobs).
 *
 * State before: every tool of connector fs granted, an approved and a
 * requested approval, an active and a pending delegated root, and a job
 * running in the delegated root inside a real cordon-exec worker. One
 * cordon_revoke_all() by the operator, in one transaction: every grant row
 * is gone (decide -> deny not-granted, read tools too), both approvals are
 * revoked (the approved call is refused at dispatch), both delegations are
 * revoked, the policy epoch moved. The running job: the broker tells the
 * worker each revoked root (notifications/cordon/root_revoked, what cordond
 * sends on delegation end), and the job's process is dead when the worker
 * answers the call. A session cannot revoke-all (-EPERM). Layer:
 * libcordon-broker + the real cordon-exec connector; the notification the
 * daemon sends is sent by the test. */
#include <poll.h>
#include <signal.h>

#include "sec-broker.h"

static char *read_small(const char *path)
{
	static char buf[64];
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n > 0 && buf[n - 1] == '\n' ? buf : NULL;
}

static void test_revoke_all(void **state)
{
	char *ceil = cordon_test_mkdtemp("sec-ceiling");
	char *ceilings[] = { ceil };
	struct bt *t = bt_new_full(true, ceilings, 1);
	char deleg[4096], pidfile[4096], exec_bin[4096], msg[2048], id_ok[CORDON_ID_STRING_MAX];
	struct cordon_delegation_info d_active, d_pending;
	struct cordon_approval_info req, info;
	struct cordon_revoke_all_result ra;
	struct bt_call c, c2;
	struct mcp_peer peer;
	uint64_t epoch0, epoch1;
	char **grants;
	size_t n_grants;
	pid_t job = 0;
	json_t *resp;
	char *p;

	(void)state;
	snprintf(deleg, sizeof(deleg), "%s/project", ceil);
	assert_int_equal(mkdir(deleg, 0755), 0);
	snprintf(pidfile, sizeof(pidfile), "%s/job.pid", deleg);

	/* Grants, approvals, delegations. */
	bt_call_init(t, &c, "s1", "delete_file", "{\"path\":\"/a\"}");
	bt_approve(t, &c.call, id_ok);
	bt_call_init(t, &c2, "s1", "write_file", "{\"path\":\"/b\"}");
	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, &c2.call, &req), 0);
	assert_int_equal(cordon_delegation_request(t->db, &t->s1, "fs", deleg, CORDON_ACCESS_READ_WRITE, 0, &d_active),
			 0);
	assert_int_equal(cordon_delegation_activate(t->db, &t->op, d_active.id, &d_active), 0);
	assert_int_equal(d_active.state, CORDON_DELEGATION_ACTIVE);
	assert_int_equal(cordon_delegation_request(t->db, &t->s2, "fs", ceil, CORDON_ACCESS_READ, 0, &d_pending), 0);
	assert_int_equal(cordon_db_policy_epoch(t->db, &epoch0), 0);

	/* A job running in the delegated root, in a real cordon-exec. */
	snprintf(exec_bin, sizeof(exec_bin), "%s/cordon-exec", cordon_test_env("CORDON_TOOLS_DIR", "build/tools"));
	{
		char *argv[] = { exec_bin, deleg, NULL };
		json_t *init;

		assert_int_equal(mcp_peer_start(&peer, argv), 0);
		init = mcp_peer_initialize(&peer, "2025-06-18");
		assert_non_null(init);
		json_decref(init);
	}
	snprintf(msg, sizeof(msg),
		 "{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\","
		 "\"arguments\":{\"argv\":[\"/bin/sh\",\"-c\",\"echo $$ > job.pid; exec sleep 300\"],"
		 "\"cwd\":\"%s\",\"timeout_ms\":600000}}}\n",
		 deleg);
	assert_int_equal(mcp_peer_send_raw(&peer, msg, strlen(msg)), 0);
	for (int i = 0; i < 500 && !(p = read_small(pidfile)); i++)
		usleep(10000);
	assert_non_null(p);
	job = (pid_t)atoi(p);
	assert_true(job > 1);
	assert_int_equal(kill(job, 0), 0);

	/* A session cannot do it. */
	assert_int_equal(cordon_revoke_all(t->db, &t->s1, &ra), -EPERM);

	assert_int_equal(cordon_revoke_all(t->db, &t->op, &ra), 0);
	printf("  revoke-all: grants %llu, approvals %llu, delegations %llu\n", (unsigned long long)ra.grants,
	       (unsigned long long)ra.approvals, (unsigned long long)ra.delegations);
	assert_int_equal(ra.grants, 5);
	assert_int_equal(ra.approvals, 2);
	assert_int_equal(ra.delegations, 2);

	/* Grants. */
	assert_int_equal(cordon_grants_list(t->db, "fs", &grants, &n_grants), 0);
	assert_int_equal(n_grants, 0);
	strv_free(grants);
	{
		struct cordon_decide_request rq = {
			.session = "s1", .connector = "fs", .tool = "read_file", .fingerprint = bt_fp(t, "read_file")
		};
		struct cordon_broker_decision d;

		assert_int_equal(cordon_broker_decide(t->db, &rq, &d), 0);
		assert_int_equal(d.decision.verdict, CORDON_VERDICT_DENY);
		assert_int_equal(d.decision.reason, CORDON_DENY_NOT_GRANTED);
	}
	/* Approvals. */
	assert_int_equal(cordon_approval_get(t->db, id_ok, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_REVOKED);
	assert_int_equal(cordon_approval_get(t->db, req.id, &info), 0);
	assert_int_equal(info.state, CORDON_APPROVAL_REVOKED);
	assert_int_equal(bt_begin(t, &c.call, id_ok, NULL, NULL), -EACCES);
	/* Delegations. */
	assert_int_equal(cordon_delegation_get(t->db, d_active.id, &d_active), 0);
	assert_int_equal(d_active.state, CORDON_DELEGATION_REVOKED);
	assert_int_equal(cordon_delegation_get(t->db, d_pending.id, &d_pending), 0);
	/* A pending request is ended like an active one: revoked. */
	assert_int_equal(d_pending.state, CORDON_DELEGATION_REVOKED);
	assert_int_equal(cordon_db_policy_epoch(t->db, &epoch1), 0);
	assert_true(epoch1 > epoch0);

	/* Running jobs: the worker hears about the revoked root. */
	snprintf(
		msg, sizeof(msg),
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cordon/root_revoked\",\"params\":{\"path\":\"%s\"}}\n",
		d_active.path);
	assert_int_equal(mcp_peer_send_raw(&peer, msg, strlen(msg)), 0);
	for (resp = NULL; !resp;) {
		json_t *m = mcp_peer_read(&peer, 10000);

		assert_non_null(m);
		if (json_integer_value(json_object_get(m, "id")) == 77)
			resp = m;
		else
			json_decref(m);
	}
	p = json_dumps(resp, JSON_COMPACT);
	printf("  job answer: %.300s\n", p);
	free(p);
	json_decref(resp);
	assert_int_equal(kill(job, 0), -1);
	assert_int_equal(errno, ESRCH);
	/* And the root is unusable for new jobs. */
	resp = mcp_peer_call(&peer, "run_command", json_pack("{s:[s], s:s}", "argv", "/bin/true", "cwd", deleg), 10000);
	assert_non_null(resp);
	assert_true(json_is_true(json_object_get(resp, "isError")));
	json_decref(resp);

	assert_int_equal(mcp_peer_stop(&peer, 5000), 0);
	free(peer.buf);
	bt_call_done(&c);
	bt_call_done(&c2);
	assert_int_equal(sec_verify(t), CORDON_AUDIT_PASS);
	bt_free(t);
	assert_int_equal(cordon_test_rm_rf(ceil), 0);
	free(ceil);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_revoke_all),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
