/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The contract between cordond's core (sessions, workers, the MCP proxy and
 * authorization flow) and its operator surfaces (operator.c: the operator
 * socket used by cordonctl; http.c: /health, /health/detail, /metrics),
 * implemented by daemon.c. The core owns `struct cordon_daemon` and the
 * event loop; the surfaces register their fds with the loop and call only
 * these functions. They sit above this contract: daemon-core.c starts them
 * (operator.h, http.h), and the core never calls into them.
 *
 * Rule: an operator handler performs its state change through the broker
 * core library (db, grants, inventory, approvals, delegations, actions,
 * audit) in its own short transaction, COMMITS, and only then notifies the
 * daemon core, which does the I/O (wakes a waiting call, sends list_changed,
 * relaunches a worker). Nothing here is reachable from the gateway socket. */

#include <jansson.h>
#include <stdio.h>
#include <sys/types.h>

#include "diag.h"
#include "loop.h"

struct cordon_actor;
struct cordon_daemon;
struct cordon_db;
struct cordon_key;
struct cordon_profile;

struct cordon_loop *cordon_daemon_loop(struct cordon_daemon *d);
struct cordon_db *cordon_daemon_db(struct cordon_daemon *d);
/* The uid of the open gateway session `session`, or -1 (none open). */
long long cordon_daemon_session_uid(struct cordon_daemon *d, const char *session);
struct cordon_key *cordon_daemon_key(struct cordon_daemon *d);
/* The loaded profile of a connector, or NULL. */
const struct cordon_profile *cordon_daemon_profile(struct cordon_daemon *d, const char *connector);

/* "ok" | "degraded" | "failing". */
const char *cordon_daemon_health(struct cordon_daemon *d);

/* New reference: the profiles that failed to load at start-up or at the
 * last reload (health is degraded while there is one): [{"file": path, "line", "column", "error":
 * the loader's message, "message": "path:line:col: error"}], plus
 * {"more": N} when more failed than are kept. [] when none. */
json_t *cordon_daemon_profile_errors(struct cordon_daemon *d);

/* New reference: {"status", "profiles_failed": <cordon_daemon_profile_errors()>,
 * "capabilities": <the launcher's probe report>,
 * "connectors": [{"id", "state", "instances": [{"instance", "session",
 * "report": <enforcement report>}]}], "database": {...}, "audit": {"last_seq",
 * "last_checkpoint_age_seconds", "unsigned_tail", "append_failures"}}. */
json_t *cordon_daemon_health_detail(struct cordon_daemon *d);

/* New reference: the launcher's capability report (same JSON as
 * `cordon-launch --probe`). */
json_t *cordon_daemon_capabilities(struct cordon_daemon *d);

/* New reference: [{"id", "state", "installed", "instances", ...}]. */
json_t *cordon_daemon_connectors(struct cordon_daemon *d);

/* Prometheus text exposition of the daemon's counters and histograms. */
int cordon_daemon_write_metrics(struct cordon_daemon *d, FILE *out);

/* After an operator decided an approval (committed): wake the call waiting
 * on it, if any. */
void cordon_daemon_approval_decided(struct cordon_daemon *d, const char *approval_id);

/* After grants, inventory reviews or risk policy changed (committed):
 * recompute surfaces, end the instances of a connector that can no longer
 * serve anything (no tool granted, no resources or prompts passed through)
 * and send notifications/tools/list_changed to sessions. connector NULL
 * means all. */
void cordon_daemon_policy_changed(struct cordon_daemon *d, const char *connector);

/* After delegations of a connector changed (committed): relaunch affected
 * workers with the new roots and end jobs that depended on a removed root. */
void cordon_daemon_delegations_changed(struct cordon_daemon *d, const char *connector);

/* After revoke-all (committed): ends every instance of every connector
 * (shared and per-session, with their whole cgroups), which fails their
 * calls; waiting calls see their approvals revoked. Returns how many
 * instances were ended. */
unsigned cordon_daemon_revoked_all(struct cordon_daemon *d);

/* After agents.revoke (committed): ends every session of that agent (its
 * token is refused from the next request on). Returns how many ended. */
unsigned cordon_daemon_agent_revoked(struct cordon_daemon *d, int64_t agent_id);

/* The origin line of the daemon's signed audit checkpoints. */
#define CORDON_DAEMON_AUDIT_ORIGIN "cordon/cordond/audit"

/* Connector lifecycle (operator API). add installs the connector (seeds its
 * grant from the profile, takes its inventory by launching it once);
 * remove uninstalls; restart relaunches its instances. add either installs
 * completely or leaves nothing but an audit record "refused" (the program,
 * roots and credentials are checked first; a launch or listing that fails
 * undoes the install); actor is the operator the audit names. Return 0 or -errno
 * with a diag. */
int cordon_daemon_connector_add(struct cordon_daemon *d, const struct cordon_actor *actor, const char *connector,
				struct cordon_diag *diag);
int cordon_daemon_connector_remove(struct cordon_daemon *d, const struct cordon_actor *actor, const char *connector,
				   struct cordon_diag *diag);
int cordon_daemon_connector_restart(struct cordon_daemon *d, const struct cordon_actor *actor, const char *connector,
				    struct cordon_diag *diag);

/* New reference: the canonical arguments of the call that requested
 * approval_id, which the core holds in memory while the approval is
 * outstanding (arguments are never stored in the database), or NULL when no
 * call of this process holds them. `cordonctl approvals show` renders them
 * masked and escaped; display only. */
json_t *cordon_daemon_approval_arguments(struct cordon_daemon *d, const char *approval_id);

/* Reloads the configuration and the profiles directory, all or nothing
 * (daemon-reload.c says what changes and what does not). actor: the
 * operator who asked; NULL for SIGHUP. 0 and *ret = {"result": "reloaded",
 * "profiles": N, "added": [ids], "removed": [ids], "ignored": [settings that
 * need a restart], "instances_ended": [ids], "config": re-read?}; or -errno
 * with diag (step "profile": the first loader error, "config", ...) and
 * nothing changed. Logged and audited (broker.reload) either way. */
struct cordon_actor;
int cordon_daemon_reload(struct cordon_daemon *d, const struct cordon_actor *actor, json_t **ret,
			 struct cordon_diag *diag);

/* The public key this daemon signs audit checkpoints with (for
 * `cordonctl audit verify` without --key). 0, or -ENOENT when checkpoints
 * are not set up. */
struct cordon_note_verifier;
int cordon_daemon_audit_verifier(struct cordon_daemon *d, struct cordon_note_verifier *ret);
