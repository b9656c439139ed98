/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Internals of cordond's core shared by daemon*.c, gateway*.c and worker*.c.
 * Single-threaded: everything runs on the event loop. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "actions.h"
#include "approvals.h"
#include "broker.h"
#include "canon.h"
#include "checkpoint.h"
#include "daemon-core.h"
#include "db.h"
#include "loop.h"
#include "profile.h"

struct dsession;
struct dworker;
struct dcall;

/* A byte buffer with a hard bound. */
struct dbuf {
	char *p;
	size_t len, cap;
};
int dbuf_append(struct dbuf *b, const void *p, size_t n, size_t limit);
void dbuf_consume(struct dbuf *b, size_t n);
void dbuf_free(struct dbuf *b);

/* A connector known from the profiles directory. */
struct dconn {
	char id[CORDON_CONNECTOR_ID_MAX + 1];
	struct cordon_profile *profile;
	struct dworker *shared; /* instances: shared */
	unsigned crashes;	/* consecutive crashes (reset after a healthy minute) */
	uint64_t last_crash_ms, next_start_ms;
	uint64_t restarts;
	bool failing; /* repeated crashes: health says failing */
	char last_error[200];
	json_t *surface_cache; /* tool -> expiry (ms) of a positive surface check */
	char **secrets;	       /* credential values, for scrubbing stderr */
	size_t n_secrets;
	/* issue 11 finding 9a: sessions hear list_changed only for a real
	 * change of this connector's tools, at most once a second. */
	uint64_t notify_last_ms;
	bool notify_pending;
};

enum dworker_state {
	DW_STARTING = 0, /* spawned, initialize sent */
	DW_LISTING,	 /* initialized, paginating tools/list */
	DW_READY,
	DW_DEAD,
};

enum dwreq_kind {
	DWREQ_INITIALIZE,
	DWREQ_TOOLS_LIST,
	DWREQ_CALL,	   /* a tools/call on behalf of a dcall */
	DWREQ_PASSTHROUGH, /* resources/prompts/completion on behalf of a session */
	DWREQ_PING,
};

struct dwreq {
	int64_t id;
	enum dwreq_kind kind;
	struct dcall *call;	  /* DWREQ_CALL */
	struct dsession *session; /* DWREQ_PASSTHROUGH */
	json_t *client_id;	  /* DWREQ_PASSTHROUGH: the client's request id */
	struct dwreq *next;
};

struct dworker {
	struct cordon_daemon *d;
	struct dconn *conn;
	struct dsession *session; /* NULL: shared */
	enum dworker_state state;
	uint32_t instance;
	pid_t pid;
	int in_fd, out_fd, err_fd;
	struct cordon_watch *w_in, *w_out, *w_err;
	struct dbuf rbuf, ebuf, wbuf;
	bool discarding;
	int64_t next_id;
	struct dwreq *reqs;
	json_t *tools;	      /* array of advertised tool objects, in list order */
	json_t *fingerprints; /* {name: hex} */
	json_t *list_accum;   /* during pagination */
	char *instructions;
	json_t *report;
	json_t *server_caps;
	uint64_t generation;
	uint64_t started_ms;
	uint64_t stderr_window_ms, stderr_window_bytes, stderr_dropped;
	bool inventory_synced;
	unsigned list_pages;
	uint64_t denial_audit_ms; /* last network.denied record for this instance */
	uint64_t denials_pending; /* denials not yet in an audit record (rate limit) */
	size_t n_roots;		  /* delegated roots it was started with */
	json_t *delegated;	  /* their sandbox paths */
	bool for_install;	  /* launched by connector_add only to take the inventory */
	char tag[64];
	/* issue 11 finding 4: tools/list budgets per instance over a window
	 * (not per listing), one listing at a time, re-listings rate-limited. */
	uint64_t list_window_ms, list_window_pages, list_window_tools, list_window_bytes;
	uint64_t listing_started_ms, relist_last_ms;
	bool listing, relist_pending;
	/* issue 11 finding 9d: protocol warnings rate-limited per instance. */
	uint64_t warn_window_ms, warn_window_n, warn_suppressed;
	/* issue 11 finding 10a: the credential values this instance was
	 * started with (from the spawner), for scrubbing its stderr. */
	char **secrets;
	size_t n_secrets;
	struct dcall *waiting; /* calls queued until ready */
	struct dworker *next;  /* in the daemon's list */
	int refs;
};

enum dcall_kind {
	DCK_TOOL = 0, /* tools/call */
	DCK_PASS,     /* resources/prompts/completion pass-through */
};

struct dmulti;

enum dcall_state {
	DC_WAIT_WORKER = 0,
	DC_WAIT_APPROVAL,
	DC_IN_FLIGHT,
	DC_DONE,
};

struct dcall {
	struct cordon_daemon *d;
	struct dsession *s; /* NULL once the session ended (in-flight call on a shared instance) */
	json_t *rpc_id;
	char connector[CORDON_CONNECTOR_ID_MAX + 1];
	char tool[130];
	char *args_jcs;
	size_t args_len;
	json_t *progress_token;
	char *idem_key;
	enum dcall_state state;
	struct cordon_broker_decision dec;
	char fingerprint[CORDON_FINGERPRINT_HEX_MAX];
	char approval_id[CORDON_ID_STRING_MAX];
	char display_code[CORDON_DISPLAY_CODE_LEN + 1];
	char action_id[CORDON_ID_STRING_MAX];
	uint64_t deadline_ms, next_progress_ms, progress_n;
	struct dworker *w;
	int64_t worker_req_id;
	uint64_t started_us;
	enum dcall_kind kind;
	char *pass_method;
	json_t *pass_params;
	struct dmulti *multi;
	struct dcall *next;	    /* session list */
	struct dcall *next_waiting; /* worker wait queue */
	/* Argument bytes charged to held_uid's budget (held_charge) from
	 * admission until call_free; 0 when nothing was charged. */
	uint64_t held_bytes;
	uid_t held_uid;
};

struct dsession {
	struct cordon_daemon *d;
	char id[CORDON_SESSION_ID_MAX];
	int fd;
	struct ucred cred;
	struct cordon_watch *watch;
	struct dbuf rbuf, wbuf;
	bool discarding; /* inside an oversize line: drop until newline */
	bool initialized, closing;
	char version[16];
	bool client_sampling, client_elicitation, client_roots;
	struct dcall *calls;
	json_t *res_routes; /* resource URI (or template) -> connector that listed it */
	int64_t next_server_id;
	uint64_t accepted_ms; /* before initialize: closed after cfg.initialize_timeout_ms */
	struct dsession *next, *prev;
};

/* One local uid's share of the gateway (issue 11 findings 3 and 6): its
 * sessions and the call-argument bytes its calls hold. An entry lives while
 * either is non-zero (an in-flight call outlives its session). */
struct duid {
	uid_t uid;
	unsigned sessions;
	uint64_t held_bytes;
};

struct daemon_metrics {
	uint64_t calls_allow, calls_approve, calls_deny;
	uint64_t approvals_requested, approvals_approved, approvals_denied, approvals_expired, approvals_timeout,
		approvals_cancelled;
	uint64_t spawn_buckets[12]; /* le 1,2,5,10,20,50,100,200,500,1000,2000,+Inf ms */
	double spawn_sum_ms;
	uint64_t spawn_count;
	uint64_t instance_restarts, instance_crashes, oom_kills, network_denials, worker_protocol_kills;
	uint64_t sessions_total, sessions_refused, gateway_errors;
};

/* A file in the profiles directory that failed to load at start-up: it is
 * not served, health is degraded while it is listed, and connectors.add of
 * its id prints the loader's error. At most DAEMON_BAD_PROFILES_MAX are
 * kept; n_bad_profiles_total counts them all. */
#define DAEMON_BAD_PROFILES_MAX 32u
struct dbadprofile {
	char file[256]; /* the name in the profiles directory */
	struct cordon_diag diag;
};

struct cordon_daemon {
	struct cordon_daemon_config cfg;
	struct cordon_loop *loop;
	struct cordon_db *db;
	struct cordon_key *key;
	struct cordon_spawner spawner;
	bool have_spawner;
	json_t *capabilities;
	struct dconn *conns;
	size_t n_conns;
	struct dbadprofile bad_profiles[DAEMON_BAD_PROFILES_MAX];
	size_t n_bad_profiles, n_bad_profiles_total;
	struct dsession *sessions;
	unsigned n_sessions;
	struct dworker *workers; /* every live worker */
	int gateway_fd, operator_fd, http_fd;
	int signal_fd;
	int notify_fd;
	json_t *self_sandbox;
	struct cordon_watch *w_gateway, *w_signal, *w_spawner;
	struct cordon_timer *tick;
	uint64_t session_counter;
	struct daemon_metrics m;
	uid_t run_uid;
	gid_t run_gid, operator_gid, gateway_gid;
	bool helper_lost;
	char db_path[4200], key_path[4200];
	struct drelay *relays;
	struct cordon_operator *op;
	struct cordon_http *http;
	uint64_t started_ms;
	struct cordon_note_verifier verifier;
	bool have_verifier;
	/* Per-uid shares (gateway.c). */
	struct duid *uids;
	size_t n_uids, cap_uids;
	uint64_t held_bytes;	/* all calls' held argument bytes */
	uint64_t held_released; /* freed since the last malloc_trim */
	uint64_t last_trim_ms;
};

/* daemon.c */
struct dconn *daemon_conn(struct cordon_daemon *d, const char *id);
bool daemon_conn_installed(struct cordon_daemon *d, const char *id);
void daemon_spawn_observed(struct cordon_daemon *d, uint64_t ms);
/* Forgets cached surface checks (connector NULL: all). */
void daemon_surface_changed(struct cordon_daemon *d, const char *connector);

/* gateway.c */
int gateway_start(struct cordon_daemon *d);
void gateway_stop(struct cordon_daemon *d);
void session_send(struct dsession *s, const char *bytes, size_t len);
void session_send_json(struct dsession *s, json_t *msg /* stolen */);
void session_send_error(struct dsession *s, const json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void session_send_result(struct dsession *s, const json_t *id, json_t *result /* stolen */);
void session_notify_all_list_changed(struct cordon_daemon *d);
void gateway_tick(struct cordon_daemon *d);
/* The JSON-RPC error a call beyond a held-argument budget gets. */
#define GATEWAY_ERR_HELD_BUDGET (-32001)
/* Charges `bytes` of held call arguments to uid: 0, or -EDQUOT (nothing
 * charged) with a message naming the budget that would be exceeded. */
int held_charge(struct cordon_daemon *d, uid_t uid, uint64_t bytes, char *ret_msg, size_t msg_size);
/* Returns bytes charged by held_charge (memory goes back to the OS on the
 * next tick when a large amount was released). */
void held_release(struct cordon_daemon *d, uid_t uid, uint64_t bytes);

/* gateway-call.c */
/* Calls (tools/call and pass-through) a session may have outstanding. */
#define SESSION_CALLS_MAX 64u
unsigned session_calls(const struct dsession *s);
/* args: the call's arguments as canonical bytes when the gateway lifted them
 * out of params (cordon_canon_decode_lifted); taken when used. */
void call_start(struct dsession *s, const json_t *id, const json_t *params, struct cordon_canon_lifted *args);
void call_worker_ready(struct dcall *c);
void call_worker_failed(struct dcall *c, const char *why);
void call_worker_result(struct dcall *c, const char *line, size_t len, json_t *msg);
void call_worker_lost(struct dcall *c, const char *why);
void call_cancel(struct dsession *s, const json_t *request_id);
void call_free(struct dcall *c);
void call_tick(struct dcall *c, uint64_t now_ms);
void call_approval_decided(struct cordon_daemon *d, const char *approval_id);
json_t *broker_tools_list(struct cordon_daemon *d, struct dsession *s);
bool broker_tool_call(struct dsession *s, const json_t *id, const char *tool, const json_t *args);

/* A connector's sampling/elicitation request relayed to a client. */
struct drelay {
	struct dsession *s;
	struct dworker *w;  /* NULL once the instance is gone */
	char client_id[40]; /* the id the broker used toward the client */
	json_t *worker_id;  /* the connector's request id */
	struct drelay *next;
};

/* gateway-relay.c */
void relay_server_request(struct dworker *w, json_t *msg, unsigned bit);
bool relay_client_response(struct dsession *s, const json_t *msg);
void relay_session_closed(struct dsession *s);
void relay_worker_gone(struct dworker *w);
void relay_answer_worker(struct dworker *w, json_t *id, json_t *result, json_t *error);

/* gateway-pass.c */
bool pass_offered(struct cordon_daemon *d, bool prompts);
bool pass_request(struct dsession *s, const char *method, const json_t *id, const json_t *params);
void pass_result(struct dcall *c, json_t *msg);
void pass_detach(struct dcall *c);
void pass_session_closed(struct dsession *s);

/* worker.c */
struct dworker *worker_get(struct cordon_daemon *d, struct dconn *c, struct dsession *s, bool start,
			   struct cordon_diag *diag);
int worker_launch(struct cordon_daemon *d, struct dconn *c, struct dsession *s, bool for_install, struct dworker **ret,
		  struct cordon_diag *diag);
void worker_kill(struct dworker *w, const char *why);
void worker_enqueue(struct dworker *w, struct dcall *c);
void worker_dequeue(struct dworker *w, struct dcall *c);
int worker_send_call(struct dworker *w, struct dcall *c);
void worker_cancel_request(struct dworker *w, int64_t id, const char *reason);
const char *worker_fingerprint(struct dworker *w, const char *tool);
const json_t *worker_tool(struct dworker *w, const char *tool);
void worker_detach_session(struct dworker *w);
void workers_kill_all(struct cordon_daemon *d);
void workers_tick(struct cordon_daemon *d, uint64_t now);
void worker_instance_exited(struct cordon_daemon *d, uint32_t instance, int status, const json_t *report);
/* The launcher's egress policy refused a connection of this instance. */
void worker_network_denied(struct cordon_daemon *d, uint32_t instance, const json_t *event);
/* Logs at level lvl (a log.h LOG_LEVEL_*), prefixed with the connector and instance. */
void worker_log(struct dworker *w, int lvl, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* worker-stderr.c: the loop handler of an instance's stderr pipe. */
void worker_on_stderr(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata);

void calls_tick(struct cordon_daemon *d);

/* daemon-privs.c */
int privs_resolve(struct cordon_daemon *d, struct cordon_diag *diag);
int privs_prepare_dirs(struct cordon_daemon *d, struct cordon_diag *diag);
int privs_drop(struct cordon_daemon *d, struct cordon_diag *diag);
int privs_sandbox_self(struct cordon_daemon *d, json_t **ret_report, struct cordon_diag *diag);
int privs_seccomp_self(struct cordon_daemon *d, json_t **ret_report, struct cordon_diag *diag);
int sd_notify_open(void);
void sd_notify_send(int fd, const char *state);
int unix_listen(const char *path, mode_t mode, uid_t uid, gid_t gid, int *ret_fd, struct cordon_diag *diag);
