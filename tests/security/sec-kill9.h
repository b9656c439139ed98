/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* kill -9 of a broker process in the middle of a mutating call.
 *
 * A forked child plays the broker process: it opens the SAME database with
 * its own handle (as a restarted cordond would), runs one tools/call through
 * the broker core to the real connector (started by the parent, so the
 * parent can reap it), and SIGKILLs itself at a chosen step. The parent then
 * "restarts" the broker: reopens the database, cordon_broker_start()
 * (recovery), checks the action states, how often the connector really ran,
 * that an identical retry is not executed blindly, and that the audit chain
 * still verifies. Inside the child only CHILD_CHECK is used. */

#include "sec-broker.h"

enum kill_step {
	KILL_AFTER_APPROVAL,   /* approved, before cordon_action_begin */
	KILL_AFTER_BEGIN,      /* action prepared (approval consumed), before dispatched */
	KILL_AFTER_DISPATCHED, /* dispatched committed, before a byte is sent */
	KILL_AFTER_EFFECT,     /* the connector ran and answered, before complete */
	KILL_AFTER_COMPLETE,   /* completed; killed before anything else */
};

static const char *const kill_step_name[] = { "after-approval", "after-begin", "after-dispatched", "after-effect",
					      "after-complete" };

static inline void kill9_child(struct bt *t, struct mcp_peer *peer, const char *tool, const char *idem,
			       enum kill_step step)
{
	static const uint8_t seed[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	static const uint8_t keybytes[32] = { 0x42, 0x43, 0x44 };
	struct cordon_db_options o = { .clock = &t->clock.clock, .busy_timeout_ms = 2000 };
	struct cordon_audit_options ao = { .origin = "cordon.test/audit",
					   .checkpoint_every = 1000,
					   .checkpoint_interval_usec = 3600 * SEC };
	struct cordon_note_signer *signer = NULL;
	struct cordon_diag d = {};
	struct cordon_db *db = NULL;
	struct cordon_key *key = NULL;
	struct cordon_approval_info info;
	struct cordon_risk_policy_owned pol;
	struct cordon_call call = {};
	struct cordon_action_begin b;
	struct cordon_action_begin_result res = {};
	struct cordon_actor op = cordon_actor_operator(1000, "cordonctl");
	char code[CORDON_CONFIRM_CODE_LEN + 1] = "", *jcs = NULL;
	const char *args = "{\"path\":\"/crash\",\"n\":1}";
	size_t len;
	json_t *jargs, *result;

	CHILD_CHECK(cordon_db_open(t->path, &o, &db, &d) == 0);
	CHILD_CHECK(cordon_note_signer_new_from_seed("cordon-test", seed, &signer) == 0);
	CHILD_CHECK(cordon_audit_setup(db, &ao, signer, &d) == 0);
	CHILD_CHECK(cordon_key_new_from_bytes(keybytes, &key) == 0);
	CHILD_CHECK(cordon_canon_bytes(args, strlen(args), NULL, &jcs, &len, &d) == 0);
	call.session = "s1";
	call.connector = "fs";
	call.tool = tool;
	for (size_t i = 0; i < t->n_adv; i++)
		if (strcmp(t->adv[i].name, tool) == 0)
			call.fingerprint = t->adv[i].fingerprint;
	CHILD_CHECK(call.fingerprint);
	CHILD_CHECK(cordon_connector_generation(db, "fs", &call.generation) == 0);
	CHILD_CHECK(cordon_db_policy_epoch(db, &call.policy_epoch) == 0);
	CHILD_CHECK(cordon_risk_policy_load(db, "fs", &pol) == 0);
	CHILD_CHECK(cordon_risk_policy_tier(&pol.policy, tool, &call.tier));
	call.arguments_jcs = jcs;
	call.arguments_jcs_len = len;

	CHILD_CHECK(cordon_approval_request(db, key, NULL, &call, &info) == 0);
	if (call.tier == CORDON_RISK_CRITICAL)
		CHILD_CHECK(cordon_approval_confirmation_code(db, key, &op, info.id, code) == 0);
	CHILD_CHECK(cordon_approval_decide(db, key, &op, info.id, true, code) == 0);
	if (step == KILL_AFTER_APPROVAL)
		raise(SIGKILL);
	b = (struct cordon_action_begin){ .call = call, .approval_id = info.id, .idempotency_key = idem };
	CHILD_CHECK(cordon_action_begin(db, key, &b, &res) == 0);
	CHILD_CHECK(res.outcome == CORDON_BEGIN_DISPATCH);
	if (step == KILL_AFTER_BEGIN)
		raise(SIGKILL);
	CHILD_CHECK(cordon_action_dispatched(db, res.action_id) == 0);
	if (step == KILL_AFTER_DISPATCHED)
		raise(SIGKILL);
	jargs = json_loadb(jcs, len, 0, NULL);
	result = mcp_peer_call(peer, tool, jargs, 10000);
	CHILD_CHECK(result != NULL);
	if (step == KILL_AFTER_EFFECT)
		raise(SIGKILL);
	CHILD_CHECK(cordon_action_complete(db, key, res.action_id, true, "{\"ok\":1}", 8) == 0);
	raise(SIGKILL);
	_exit(90);
}

/* Runs the child to `step`, asserts it died of SIGKILL, reopens and
 * recovers the database in the parent. */
static inline void kill9_run(struct bt *t, const char *effect, const char *tool, const char *idem, enum kill_step step,
			     struct cordon_broker_start_result *ret_sr)
{
	struct mcp_peer peer;
	pid_t pid;
	int st;

	printf("kill -9 %s (%s)\n", kill_step_name[step], tool);
	sec_connector_start(&peer, "append", effect);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		kill9_child(t, &peer, tool, idem, step);
	st = cordon_test_wait(pid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
	sec_connector_stop(&peer);

	/* Restart: a new handle, recovery, then everything is checked. */
	cordon_db_close(t->db);
	t->db = NULL;
	bt_open_db(t);
	bt_setup_audit(t, 1000, 3600 * SEC);
	assert_int_equal(cordon_broker_start(t->db, ret_sr), 0);
	printf("  recovery: abandoned %llu, outcome_unknown %llu, approvals revoked %llu\n",
	       (unsigned long long)ret_sr->abandoned, (unsigned long long)ret_sr->outcome_unknown,
	       (unsigned long long)ret_sr->approvals_revoked);
}

static inline int kill9_count_cb(const struct cordon_action_info *info, void *userdata)
{
	(void)info;
	(*(int *)userdata)++;
	return 0;
}

/* Number of actions in state s (the operator's queue for outcome_unknown). */
static inline int kill9_count_state(struct bt *t, enum cordon_action_state s)
{
	int n = 0;

	assert_int_equal(cordon_actions_list(t->db, &(struct cordon_list_filter){ .states = CORDON_STATE_BIT(s) },
					     kill9_count_cb, &n),
			 0);
	return n;
}
