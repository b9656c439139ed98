/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* End-to-end harness for cordond's core: runs the daemon core in a forked
 * child (a real process with its own privilege drop and Landlock domain),
 * with a spawner that starts connector processes directly (the launcher
 * helper is tested on its own; this exercises the proxy and authorization
 * flow with real processes), plus an MCP client over the gateway socket and
 * operator actions through the broker core library on the same database. */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "db.h"
#include "mcp-client.h"

struct cordon_caps;

struct harness {
	char *dir;
	char state[512], profiles[512], runtime[512], data[512], out_file[600], gateway[600];
	pid_t daemon_pid;
	unsigned approval_wait_s;
	unsigned max_sessions;
	/* Issue 11 findings 3 and 6 (0: the daemon's default). */
	uint64_t held_max, held_per_uid;
	unsigned sessions_per_uid;
	unsigned initialize_timeout_ms;
	/* The capability report the spawner gives the daemon: NULL for the
	 * direct spawner's note (no kernel verdict), else the probe report of
	 * this struct (cordon_probe_to_json), as the launcher helper would
	 * send it: a test takes a control away from a real probe's result. */
	const struct cordon_caps *caps;
};

/* Where the tests/helpers programs are built: $CORDON_HELPERS_DIR, else
 * $CORDON_BUILD_DIR/tests/helpers (or $CORDON_BUILD_DIR/tests). */
const char *harness_helpers_dir(void);

/* Creates a temp tree with profiles/fake.yaml (shared instance) and
 * profiles/fakeps.yaml (per-session). */
void harness_setup(struct harness *h, const char *tag);
/* Removes everything (stops the daemon first). */
void harness_teardown(struct harness *h);

/* Starts the daemon core in a child; installs connectors `fake` and
 * `fakeps` on first start (inventory taken by launching once). Returns once
 * the gateway accepts connections. */
void harness_start(struct harness *h);
/* Sends sig (SIGTERM or SIGKILL) and reaps; returns the wait status. */
int harness_stop(struct harness *h, int sig);

/* Operator actions through the core library (operator actor, uid 0). */
struct cordon_db *harness_db(struct harness *h);
void harness_review_all(struct harness *h, const char *connector);
/* Approves every requested approval; returns how many. */
int harness_approve_all(struct harness *h);
int harness_deny_all(struct harness *h);
/* Counts actions in a state (enum cordon_action_state). */
int harness_count_actions(struct harness *h, int state);
/* Counts approvals in a state. */
/* Audit records (committed, as another connection reads the file) whose
 * canonical bytes contain needle. */
int harness_count_audit(struct harness *h, const char *needle);
int harness_count_approvals(struct harness *h, int state);
/* Number of lines in the fake connector's output file. */
int harness_out_lines(struct harness *h);
/* Verifies the audit chain; returns true on PASS. */
bool harness_audit_ok(struct harness *h, char *msg, size_t size);

/* GET path on the daemon's http.sock: the HTTP status in *ret_status and
 * the body parsed as JSON (NULL when it is not). */
json_t *harness_http_json(struct harness *h, const char *path, int *ret_status);

/* Runs cordonctl against the daemon's operator socket with args (a shell
 * word list); returns its exit status. */
int harness_ctl(struct harness *h, const char *args);

/* MCP over the gateway socket. */
int mcp_peer_connect(struct mcp_peer *p, const char *path);
void mcp_peer_disconnect(struct mcp_peer *p);
/* Sends a request without waiting; returns its id. */
long mcp_peer_send_request(struct mcp_peer *p, const char *method, json_t *params /* stolen */);
/* Waits for the response with id (skipping other messages). */
json_t *mcp_peer_wait(struct mcp_peer *p, long id, int timeout_ms);
/* Text of the first content item of a tools/call result ("" when none). */
const char *result_text(const json_t *result);
