/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Connector instances (worker.c): cordond as an MCP client over each
 * instance's stdio. Below the gateway: it reports a call's progress and end
 * through the call's struct dcall_ops and everything else the gateway must
 * hear through the struct worker_events registered in the daemon
 * (daemon-state.h); it calls nothing of the gateway. */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "daemon-state.h"
#include "diag.h"

/* The instance of connector c that serves session s (c's shared instance,
 * or s's own), or NULL; with start, launches one when there is none (NULL
 * with diag when that fails or the connector is in its restart backoff). */
struct dworker *worker_get(struct cordon_daemon *d, struct dconn *c, struct dsession *s, bool start,
			   struct cordon_diag *diag);
/* Launches an instance of c (for session s, or shared when s is NULL;
 * for_install: only to take the inventory). It initializes with version
 * (the protocol version the starting session negotiated; NULL: cordon's
 * default, WORKER_PROTOCOL_DEFAULT) and, for a per-session instance, s's
 * initialize _meta. Returns 0 and writes *ret, or -errno with diag. */
int worker_launch(struct cordon_daemon *d, struct dconn *c, struct dsession *s, const char *version, bool for_install,
		  struct dworker **ret, struct cordon_diag *diag);

/* The protocol version an instance initializes with when no session
 * started it (the inventory run of connectors add). */
#define WORKER_PROTOCOL_DEFAULT "2025-06-18"
/* Ends an instance: its calls fail through their dcall_ops, then the
 * gateway hears worker_events.gone. w may be freed. */
void worker_kill(struct dworker *w, const char *why);
/* Queues call c until w is ready (dcall_ops.ready), or takes it off w. */
void worker_enqueue(struct dworker *w, struct dcall *c);
void worker_dequeue(struct dworker *w, struct dcall *c);
/* Sends call c to the connector: 0, or -errno when nothing was sent. */
int worker_send_call(struct dworker *w, struct dcall *c);
/* Sends a request whose answer nobody waits for (params stolen), when w is
 * ready: 0, or -errno when nothing was sent. */
int worker_send_quiet(struct dworker *w, const char *method, json_t *params);
/* Forgets request id and tells the connector notifications/cancelled. */
void worker_cancel_request(struct dworker *w, int64_t id, const char *reason);
/* The fingerprint of a tool w advertised, or NULL. */
const char *worker_fingerprint(struct dworker *w, const char *tool);
const json_t *worker_tool(struct dworker *w, const char *tool);

/* The WORKER_LOG_* value of an MCP log level name, or 0; and back. */
unsigned worker_log_level_parse(const char *name);
const char *worker_log_level_name(unsigned level);
/* Sends logging/setLevel when w is initialized, its connector announced
 * `logging`, and the level worker_events.log_level gives differs from the
 * one last sent. */
void worker_log_level_update(struct dworker *w);

void workers_kill_all(struct cordon_daemon *d);
void workers_tick(struct cordon_daemon *d, uint64_t now);
/* Delegations of connector changed (NULL: expired or released, any
 * connector): ends the per-session instances they affect, which start again
 * with the current roots at the next call. */
void workers_delegations_changed(struct cordon_daemon *d, const char *connector);
/* Spawner events (daemon-core.c forwards them). */
void worker_instance_exited(struct cordon_daemon *d, uint32_t instance, int status, const json_t *report);
