/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The real cordond binary for e2e and security tests: started as root with
 * the real launcher helper (cordon-launch --serve), so connectors run in real
 * sandboxes with real cgroups; cordonctl on the operator socket; HTTP on
 * http.sock; MCP sessions on the gateway socket. (daemon-harness.h runs the
 * daemon core with an in-process spawner that starts connectors without
 * sandboxes: use it when no sandbox or cgroup is asserted.)
 *
 * For cmocka tests: failures are cmocka assertions. */

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "mcp-client.h"

struct rcd {
	char *dir;
	char state[600], profiles[600], data[600], runtime[700], logfile[700];
	char gateway[800], opsock[800], httpsock[800];
	char cordond[600], cordonctl[600], launch[600], helpers[600];
	pid_t pid;
	/* Options of the next rcd_start() (NULL: cordond's default). */
	const char *approval_wait;  /* --approval-wait */
	const char *operator_group; /* --operator-group */
	const char *notify_socket;  /* NOTIFY_SOCKET in cordond's environment */
	const char *config;	    /* --config */
	bool own_group;		    /* cordond leads its own process group (as under systemd) */
	bool journal_stream;	    /* JOURNAL_STREAM names cordond's stderr (as systemd sets it);
				     * false: JOURNAL_STREAM unset */
};

/* A temp tree (0755, root-owned: the launcher helper refuses a profiles
 * directory others can write) with profiles/ and data/. Skips unless root. */
void rcd_setup(struct rcd *c, const char *tag);
/* Stops cordond (rcd_stop), tails its log to stderr when show_log, removes
 * the tree. */
void rcd_teardown(struct rcd *c, bool show_log);

/* Writes text to path (asserts). */
void rcd_write(const char *path, const char *text);

/* profiles/<id>.yaml: evil-connector in `mode` (a YAML flow-sequence
 * tail: "fork-stay", or "append, /data/out.txt"), its one tool `append`
 * granted at tier read (no approval), instances shared or per-session,
 * with memory and pids limits (so the instance has a directory in those v1
 * hierarchies too on a hybrid host). */
void rcd_evil_profile(struct rcd *c, const char *id, const char *mode, const char *instances);

/* profiles/<id>.yaml: fake-connector (shared, sandboxed, writing
 * /data/out.txt) with tools echo, append, crash, garbage, roots; echo,
 * append and roots granted. */
struct rcd_fake_options {
	const char *ttl;	     /* approval ttl; NULL: "120s" */
	const char *roots_risk;	     /* tier of `roots`; NULL: "read" */
	const char *credential_file; /* injected as FAKE_TOKEN; NULL: none */
	const char *arg;	     /* a mode after /data/out.txt ("--errors"); NULL: none */
	const char *instances;	     /* NULL: "shared" */
	const char *tools;	     /* the lines under `tools:` after default_risk; NULL: as above */
	const char *tail;	     /* top-level lines at the end ("resources: read\n"); NULL: none */
	const char *limits;	     /* sandbox.limits; NULL: "{memory: 64M, pids: 16}" */
};
void rcd_fake_profile(struct rcd *c, const char *id, const struct rcd_fake_options *o);

bool rcd_connectable(const char *path);

/* Starts cordond (no --user: its private id; options from c) with stdout and
 * stderr appended to c->logfile, and waits until the gateway, operator and
 * HTTP sockets accept connections. */
void rcd_start(struct rcd *c);
/* Sends sig and reaps cordond (SIGKILL if it does not exit within 10 s).
 * Returns the wait status (-1 when none was running). */
int rcd_kill(struct rcd *c, int sig);
/* rcd_kill(c, SIGTERM): the helper then kills every instance and removes
 * their cgroups. */
int rcd_stop(struct rcd *c);
/* Stops cordond and asserts a clean exit (0 after SIGTERM: no crash, and
 * under a sanitizer no report). */
void rcd_stop_clean(struct rcd *c);

/* Reads all of fd into a malloc'd string. */
char *rcd_slurp(int fd);

/* Runs `cordonctl --socket OPSOCK ARGS... NULL`; returns its exit status,
 * stdout and stderr (malloc'd; ret_out NULL discards stdout, ret_err NULL
 * leaves stderr on the test's own). */
int rcd_ctl(struct rcd *c, char **ret_out, char **ret_err, ...) __attribute__((sentinel));

/* `cordonctl --json ARGS...` (up to three) that must succeed; its parsed
 * stdout. */
#define rcd_ctl_json(c, ...) rcd_ctl_json_((c), __VA_ARGS__, (char *)NULL)
json_t *rcd_ctl_json_(struct rcd *c, const char *a1, const char *a2, const char *a3, ...);

/* The first array in v: v itself, or the first array member of an object. */
json_t *rcd_first_array(json_t *v);

/* `connectors add ID`, then reviews every tool of its inventory with the
 * fingerprint shown. */
void rcd_install(struct rcd *c, const char *id);

/* GET path on http.sock: the whole response (malloc'd), its status in
 * *ret_status. */
char *rcd_http_get(struct rcd *c, const char *path, int *ret_status);
/* GET path on http.sock: the HTTP status, and the body parsed as JSON
 * (NULL when it is not JSON). */
json_t *rcd_http_json(struct rcd *c, const char *path, int *ret_status);

/* One MCP session on the gateway. */
void rcd_session(struct rcd *c, struct mcp_peer *p);

/* Lines in data/out.txt (what the fake connector's append wrote). */
int rcd_out_lines(struct rcd *c);

/* A request on p answered within 20 s (the test fails otherwise): the
 * whole response, a new reference. */
json_t *rcd_req(struct mcp_peer *p, const char *method, json_t *params /* stolen */);

/* The JSON-RPC error code of response r (0: none), and its message ("":
 * none). */
long rcd_err_code(const json_t *r);
const char *rcd_err_message(const json_t *r);

/* Sends a request with a fixed id and reads up to its response (within
 * 20 s each message), which it returns; the params of every notification
 * named note on the way go to *collected (a new array). */
json_t *rcd_request_collecting(struct mcp_peer *p, const char *method, json_t *params /* stolen */, const char *note,
			       json_t **collected);
