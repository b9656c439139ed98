/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* TEST STAND-IN for the daemon core (daemon.h's cordon_daemon_* functions),
 * for the operator-surface tests ONLY. The real core lands separately
 * (branch `daemon`); these definitions exist so operator.c, operator-ops.c
 * and http.c can be tested against a real database through the real broker
 * library. The stand-in does no I/O: it serves a fixed health/capability
 * report, records every notification the surfaces send, and, at each
 * notification, checks that the state change it announces is already
 * COMMITTED (read back through a second database connection) — the rule in
 * daemon.h. Include it in exactly one file of a test program. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "approvals.h"
#include "broker-test.h"
#include "daemon.h"
#include "db.h"
#include "delegations.h"
#include "loop.h"

struct cordon_daemon {
	struct bt *bt;
	struct cordon_loop *loop;
	const char *health;
	json_t *caps;
	json_t *args;	      /* approval id -> arguments held by "waiting calls" */
	json_t *events;	      /* notifications received, as strings */
	unsigned uncommitted; /* notifications that arrived before their change was visible */
	bool have_verifier;
};

static inline struct cordon_db *test_daemon_second_db(struct cordon_daemon *d)
{
	struct cordon_db_options o = { .clock = &d->bt->clock.clock, .busy_timeout_ms = 200 };
	struct cordon_db *db2 = NULL;
	struct cordon_diag diag = {};

	if (cordon_db_open(d->bt->path, &o, &db2, &diag) < 0)
		return NULL;
	return db2;
}

static inline void test_daemon_event(struct cordon_daemon *d, const char *what, const char *arg)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%s%s", what, arg ? arg : "*");
	(void)json_array_append_new(d->events, json_string(buf));
}

static inline struct cordon_daemon *test_daemon_new(struct bt *bt)
{
	struct cordon_daemon *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	d->bt = bt;
	assert_int_equal(cordon_loop_new(&d->loop), 0);
	d->health = "ok";
	d->caps = json_pack("{s:i, s:{s:b, s:i}}", "version", 1, "landlock", "available", 1, "abi", 7);
	d->args = json_object();
	d->events = json_array();
	d->have_verifier = true;
	return d;
}

static inline void test_daemon_free(struct cordon_daemon *d)
{
	if (!d)
		return;
	cordon_loop_free(d->loop);
	json_decref(d->caps);
	json_decref(d->args);
	json_decref(d->events);
	free(d);
}

static inline bool test_daemon_saw(struct cordon_daemon *d, const char *event)
{
	size_t i;
	json_t *e;

	json_array_foreach(d->events, i, e) if (strcmp(json_string_value(e), event) == 0) return true;
	return false;
}

struct cordon_loop *cordon_daemon_loop(struct cordon_daemon *d)
{
	return d->loop;
}

struct cordon_db *cordon_daemon_db(struct cordon_daemon *d)
{
	return d->bt->db;
}

/* No gateway sessions here. */
long long cordon_daemon_session_uid(struct cordon_daemon *d, const char *session)
{
	(void)d;
	(void)session;
	return -1;
}

struct cordon_key *cordon_daemon_key(struct cordon_daemon *d)
{
	return d->bt->key;
}

const struct cordon_profile *cordon_daemon_profile(struct cordon_daemon *d, const char *connector)
{
	(void)d;
	(void)connector;
	return NULL;
}

const char *cordon_daemon_health(struct cordon_daemon *d)
{
	return d->health;
}

json_t *cordon_daemon_profile_errors(struct cordon_daemon *d)
{
	(void)d;
	return json_array();
}

json_t *cordon_daemon_health_detail(struct cordon_daemon *d)
{
	return json_pack("{s:s, s:O, s:[{s:s, s:s, s:[]}], s:{s:s}, s:{s:i, s:n, s:i, s:i}}", "status", d->health,
			 "capabilities", d->caps, "connectors", "id", "fs", "state", "running", "instances", "database",
			 "state", "ok", "audit", "last_seq", 1, "last_checkpoint_age_seconds", "unsigned_tail", 0,
			 "append_failures", 0);
}

json_t *cordon_daemon_capabilities(struct cordon_daemon *d)
{
	return json_incref(d->caps);
}

json_t *cordon_daemon_connectors(struct cordon_daemon *d)
{
	(void)d;
	return json_pack("[{s:s, s:s, s:b, s:i}]", "id", "fs", "state", "running", "installed", 1, "instances", 1);
}

int cordon_daemon_write_metrics(struct cordon_daemon *d, FILE *out)
{
	(void)d;
	fputs("# HELP cordon_tool_calls_total Tool calls by decision.\n"
	      "# TYPE cordon_tool_calls_total counter\n"
	      "cordon_tool_calls_total{decision=\"allow\"} 3\n",
	      out);
	return 0;
}

void cordon_daemon_approval_decided(struct cordon_daemon *d, const char *approval_id)
{
	struct cordon_db *db2 = test_daemon_second_db(d);
	struct cordon_approval_info info;

	/* The decision must be visible to another connection: committed. */
	if (!db2 || cordon_approval_get(db2, approval_id, &info) < 0 || info.state == CORDON_APPROVAL_REQUESTED)
		d->uncommitted++;
	cordon_db_close(db2);
	test_daemon_event(d, "approval_decided:", approval_id);
}

void cordon_daemon_policy_changed(struct cordon_daemon *d, const char *connector)
{
	struct cordon_db *db2 = test_daemon_second_db(d);
	uint64_t e1 = 0, e2 = 0;

	/* Every policy change bumps the epoch or reviews a tool; both are in the
	 * database before the core hears about it. Compare epochs across
	 * connections: they must agree. */
	if (!db2 || cordon_db_policy_epoch(db2, &e2) < 0 || cordon_db_policy_epoch(d->bt->db, &e1) < 0 || e1 != e2)
		d->uncommitted++;
	cordon_db_close(db2);
	test_daemon_event(d, "policy_changed:", connector);
}

void cordon_daemon_delegations_changed(struct cordon_daemon *d, const char *connector)
{
	test_daemon_event(d, "delegations_changed:", connector);
}

unsigned cordon_daemon_agent_revoked(struct cordon_daemon *d, int64_t agent_id)
{
	(void)agent_id;
	test_daemon_event(d, "agent_revoked", "");
	return 0;
}

unsigned cordon_daemon_revoked_all(struct cordon_daemon *d)
{
	test_daemon_event(d, "revoked_all", "");
	return 3; /* instances ended: what the operator surfaces report */
}

int cordon_daemon_reload(struct cordon_daemon *d, const struct cordon_actor *actor, json_t **ret,
			 struct cordon_diag *diag)
{
	(void)diag;
	test_daemon_event(d, "reload:", actor && cordon_actor_is_operator(actor) ? "operator" : "signal");
	*ret = json_pack("{s:s, s:i, s:[], s:[], s:[], s:[], s:b}", "result", "reloaded", "profiles", 1, "added",
			 "removed", "ignored", "instances_ended", "config", false);
	return *ret ? 0 : -ENOMEM;
}

int cordon_daemon_connector_add(struct cordon_daemon *d, const struct cordon_actor *actor, const char *connector,
				struct cordon_diag *diag)
{
	(void)actor;
	test_daemon_event(d, "connector_add:", connector);
	if (strcmp(connector, "fs") == 0)
		return cordon_diag_set(diag, EEXIST, "daemon", "connector fs is already installed");
	if (strcmp(connector, "memory") != 0)
		return cordon_diag_set(diag, ENOENT, "daemon", "no profile for connector %s", connector);
	return 0;
}

int cordon_daemon_connector_remove(struct cordon_daemon *d, const struct cordon_actor *actor, const char *connector,
				   struct cordon_diag *diag)
{
	(void)actor;
	test_daemon_event(d, "connector_remove:", connector);
	if (strcmp(connector, "fs") != 0)
		return cordon_diag_set(diag, ENOENT, "daemon", "connector %s is not installed", connector);
	return 0;
}

int cordon_daemon_connector_restart(struct cordon_daemon *d, const struct cordon_actor *actor, const char *connector,
				    struct cordon_diag *diag)
{
	test_daemon_event(d, "connector_restart:", connector);
	if (strcmp(connector, "fs") != 0)
		return cordon_diag_set(diag, ENOENT, "daemon", "connector %s is not installed", connector);
	return cordon_connector_relaunch(d->bt->db, actor, connector, NULL);
}

json_t *cordon_daemon_approval_arguments(struct cordon_daemon *d, const char *approval_id)
{
	return json_incref(json_object_get(d->args, approval_id));
}

int cordon_daemon_audit_verifier(struct cordon_daemon *d, struct cordon_note_verifier *ret)
{
	if (!d->have_verifier)
		return -ENOENT;
	*ret = d->bt->verifier;
	return 0;
}
