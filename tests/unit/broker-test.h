/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared fixture for the broker unit tests: a fresh database in a private
 * temp directory, a virtual clock, an audit signer from a fixed seed, a
 * process key from fixed bytes, and a connector "fs" installed from an
 * in-memory profile with a reviewed inventory. Header-only so each test
 * program stays one file. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "actions.h"
#include "actor.h"
#include "approvals.h"
#include "audit.h"
#include "authz.h"
#include "broker.h"
#include "canon.h"
#include "checkpoint.h"
#include "cleanup.h"
#include "clock.h"
#include "crypto.h"
#include "db.h"
#include "delegations.h"
#include "grants.h"
#include "policy.h"
#include "connectors.h"
#include "merkle.h"
#include "inventory.h"
#include "test-support.h"

#define T0  (UINT64_C(1767225600) * CORDON_USEC_PER_SEC) /* 2026-01-01T00:00:00Z */
#define SEC CORDON_USEC_PER_SEC

struct bt {
	char *dir;
	char *path;
	struct cordon_virtual_clock clock;
	struct cordon_db *db;
	struct cordon_key *key;
	struct cordon_note_verifier verifier;
	struct cordon_actor op, sys, s1, s2;
	/* tool definitions as advertised, with fingerprints */
	struct cordon_tool_advert_owned adv[8];
	size_t n_adv;
};

static inline void bt_open_db(struct bt *t)
{
	/* 10 s, as the concurrent-writer tests' other process uses: a writer
	 * that fsyncs on a loaded 2-core machine can hold the lock for longer
	 * than a fraction of a second. */
	struct cordon_db_options o = { .clock = &t->clock.clock, .busy_timeout_ms = 10000 };
	struct cordon_diag d = {};
	int r = cordon_db_open(t->path, &o, &t->db, &d);

	if (r < 0)
		fail_msg("cordon_db_open: %s", d.message);
}

static inline void bt_setup_audit(struct bt *t, uint64_t every, uint64_t interval)
{
	static const uint8_t seed[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct cordon_note_signer *s = NULL;
	struct cordon_audit_options ao = { .origin = "cordon.test/audit",
					   .checkpoint_every = every,
					   .checkpoint_interval_usec = interval };
	struct cordon_diag d = {};

	assert_int_equal(cordon_note_signer_new_from_seed("cordon-test", seed, &s), 0);
	cordon_note_signer_verifier(s, &t->verifier);
	if (cordon_audit_setup(t->db, &ao, s, &d) < 0)
		fail_msg("audit setup: %s", d.message);
}

/* A profile as the profile loader would produce it. */
static struct cordon_tool_risk bt_risks[] = {
	{ .tool = (char *)"read_file", .risk = CORDON_RISK_READ },
	{ .tool = (char *)"write_file", .risk = CORDON_RISK_WRITE },
	{ .tool = (char *)"delete_file", .risk = CORDON_RISK_DESTRUCTIVE },
	{ .tool = (char *)"run_command", .risk = CORDON_RISK_CRITICAL },
};
static struct cordon_tool_replay bt_replay[] = {
	{ .tool = (char *)"write_file", .replay = CORDON_REPLAY_SAFE },
};
static char *bt_grant[] = { (char *)"read_file", (char *)"write_file", (char *)"delete_file", (char *)"run_command",
			    (char *)"mystery" };

static inline void bt_profile(struct cordon_profile *p, char **ceilings, size_t n_ceilings)
{
	memset(p, 0, sizeof(*p));
	p->id = (char *)"fs";
	p->default_risk = CORDON_RISK_HIGH;
	p->risk = bt_risks;
	p->n_risk = ELEMENTSOF(bt_risks);
	p->replay = bt_replay;
	p->n_replay = ELEMENTSOF(bt_replay);
	p->grant = bt_grant;
	p->n_grant = ELEMENTSOF(bt_grant);
	p->ceiling = ceilings;
	p->n_ceiling = n_ceilings;
	p->approval_ttl_sec = 120;
}

static inline void bt_tool_json(struct bt *t, const char *name, const char *description)
{
	json_t *tool = json_pack("{s:s, s:s, s:{s:s, s:{s:{s:s}}}, s:{s:b}}", "name", name, "description", description,
				 "inputSchema", "type", "object", "properties", "path", "type", "string", "annotations",
				 "readOnlyHint", 1);

	assert_non_null(tool);
	assert_true(t->n_adv < ELEMENTSOF(t->adv));
	assert_int_equal(cordon_tool_advert_from_json(tool, "server instructions", &t->adv[t->n_adv++]), 0);
	json_decref(tool);
}

static inline void bt_sync(struct bt *t)
{
	struct cordon_tool_advert a[8];

	for (size_t i = 0; i < t->n_adv; i++)
		a[i] = t->adv[i].advert;
	assert_int_equal(cordon_inventory_sync(t->db, &t->sys, "fs", a, t->n_adv, NULL), 0);
}

static inline const char *bt_fp(struct bt *t, const char *name)
{
	for (size_t i = 0; i < t->n_adv; i++)
		if (strcmp(t->adv[i].name, name) == 0)
			return t->adv[i].fingerprint;
	fail_msg("no tool %s", name);
	return NULL;
}

/* Full fixture: db, audit (checkpoint every 1000 records / 1 h), key,
 * connector "fs" installed with all five tools advertised and reviewed. */
static inline struct bt *bt_new_full(bool install, char **ceilings, size_t n_ceilings)
{
	static const uint8_t keybytes[32] = { 0x42, 0x43, 0x44 };
	struct bt *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	t->dir = cordon_test_mkdtemp("broker");
	assert_true(asprintf(&t->path, "%s/state.db", t->dir) > 0);
	cordon_virtual_clock_init(&t->clock, T0);
	bt_open_db(t);
	bt_setup_audit(t, 1000, 3600 * SEC);
	assert_int_equal(cordon_key_new_from_bytes(keybytes, &t->key), 0);
	t->op = cordon_actor_operator(1000, "cordonctl");
	t->sys = cordon_actor_system();
	t->s1 = cordon_actor_session("s1");
	t->s2 = cordon_actor_session("s2");
	if (install) {
		struct cordon_profile p;

		bt_profile(&p, ceilings, n_ceilings);
		assert_int_equal(cordon_connector_install(t->db, &t->sys, &p), 0);
		bt_tool_json(t, "read_file", "Read a file");
		bt_tool_json(t, "write_file", "Write a file");
		bt_tool_json(t, "delete_file", "Delete a file");
		bt_tool_json(t, "run_command", "Run a command");
		bt_tool_json(t, "mystery", "Not named by the policy");
		bt_sync(t);
		for (size_t i = 0; i < t->n_adv; i++)
			assert_int_equal(
				cordon_inventory_review(t->db, &t->op, "fs", t->adv[i].name, t->adv[i].fingerprint), 0);
	}
	return t;
}

static inline struct bt *bt_new(void)
{
	return bt_new_full(true, NULL, 0);
}

static inline void bt_free(struct bt *t)
{
	if (!t)
		return;
	cordon_db_close(t->db);
	cordon_key_free(t->key);
	for (size_t i = 0; i < t->n_adv; i++)
		cordon_tool_advert_owned_done(&t->adv[i]);
	assert_int_equal(cordon_test_rm_rf(t->dir), 0);
	free(t->dir);
	free(t->path);
	free(t);
}

/* A call of `tool` on connector fs with the current generation and epoch. */
struct bt_call {
	struct cordon_call call;
	char *jcs;
};

static inline void bt_call_init(struct bt *t, struct bt_call *c, const char *session, const char *tool,
				const char *args_json)
{
	struct cordon_diag d = {};
	size_t len;

	memset(c, 0, sizeof(*c));
	if (cordon_canon_bytes(args_json, strlen(args_json), NULL, &c->jcs, &len, &d) < 0)
		fail_msg("canon: %s", d.message);
	c->call.session = session;
	c->call.connector = "fs";
	c->call.tool = tool;
	c->call.fingerprint = bt_fp(t, tool);
	assert_int_equal(cordon_connector_generation(t->db, "fs", &c->call.generation), 0);
	assert_int_equal(cordon_db_policy_epoch(t->db, &c->call.policy_epoch), 0);
	{
		struct cordon_risk_policy_owned pol;
		assert_int_equal(cordon_risk_policy_load(t->db, "fs", &pol), 0);
		assert_true(cordon_risk_policy_tier(&pol.policy, tool, &c->call.tier));
		cordon_risk_policy_owned_done(&pol);
	}
	c->call.arguments_jcs = c->jcs;
	c->call.arguments_jcs_len = len;
}

static inline void bt_call_done(struct bt_call *c)
{
	free(c->jcs);
	c->jcs = NULL;
}

/* Requests and (as operator) approves; returns the approval id in id. */
static inline void bt_approve(struct bt *t, const struct cordon_call *call, char id[static CORDON_ID_STRING_MAX])
{
	struct cordon_approval_info info;
	char code[CORDON_CONFIRM_CODE_LEN + 1] = "";

	assert_int_equal(cordon_approval_request(t->db, t->key, NULL, call, &info), 0);
	if (call->tier == CORDON_RISK_CRITICAL)
		assert_int_equal(cordon_approval_confirmation_code(t->db, t->key, &t->op, info.id, code), 0);
	assert_int_equal(cordon_approval_decide(t->db, t->key, &t->op, info.id, true, code), 0);
	memcpy(id, info.id, CORDON_ID_STRING_MAX);
}

/* Runs begin for a call with an approval id; returns begin's result code. */
static inline int bt_begin(struct bt *t, const struct cordon_call *call, const char *approval_id, const char *idem,
			   struct cordon_action_begin_result *res)
{
	struct cordon_action_begin b = { .call = *call, .approval_id = approval_id, .idempotency_key = idem };
	struct cordon_action_begin_result tmp = {};
	int r = cordon_action_begin(t->db, t->key, &b, res ? res : &tmp);

	if (!res)
		cordon_action_begin_result_done(&tmp);
	return r;
}
