/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The state cordond's core shares: the daemon object with its tables
 * (connectors, sessions, instances, relays, per-uid shares, metrics) and the
 * records in them. Every module of the core reads and writes these fields;
 * the functions here (daemon-state.c) are the few lookups they share. It is
 * the lowest module of the daemon: it calls nothing above it. Single-
 * threaded: everything runs on the event loop.
 *
 * Who calls whom (docs/architecture.md draws it): daemon-core.c (start-up,
 * loop) -> operator, http -> daemon.c (the daemon.h contract) -> gateway.c ->
 * gateway-task.c, gateway-pass.c -> gateway-call.c -> gateway-session.c,
 * worker.c -> worker-log.c -> daemon-state.c. Upward news travels through
 * three interfaces declared here: a call's struct dcall_ops (how the
 * instance serving it reports), struct dtask_hooks (what gateway-call asks
 * of gateway-task) and struct worker_events (what instances tell the
 * gateway). */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "actions.h"
#include "agents.h"
#include "approvals.h"
#include "broker.h"
#include "checkpoint.h"
#include "daemon-config.h"
#include "daemon-launcher.h"
#include "daemon-log.h"
#include "db.h"
#include "dbuf.h"
#include "loop.h"
#include "profile.h"

struct dsession;
struct dworker;
struct dcall;

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
	/* issue 13: the `instructions` of the latest instance that initialized
	 * (the inventory run or any later one), at most DCONN_INSTRUCTIONS_MAX
	 * bytes cut on a UTF-8 boundary; NULL: none known. Memory only (the
	 * database never holds connector text); clients get it in initialize. */
	char *instructions;
	/* issue 13 (Resources): DCONN_CAP_* of the latest instance that
	 * initialized (0 until one has: memory only, like instructions), for
	 * the capabilities clients get in initialize and for routing
	 * resources/subscribe. */
	unsigned caps;
};

#define DCONN_CAP_RES_SUBSCRIBE	       0x1u /* resources.subscribe */
#define DCONN_CAP_RES_LIST_CHANGED     0x2u /* resources.listChanged */
#define DCONN_CAP_PROMPTS_LIST_CHANGED 0x4u /* prompts.listChanged */

#define DCONN_INSTRUCTIONS_MAX 8192
/* The largest client initialize _meta relayed upstream (dsession). */
#define GATEWAY_META_MAX 4096
/* The longest resource URI (or upstream list cursor) cordond takes from a
 * client or a connector (gateway-pass.c, worker.c). */
#define GATEWAY_URI_MAX 4096

enum dworker_state {
	DW_STARTING = 0, /* spawned, initialize sent */
	DW_LISTING,	 /* initialized, paginating tools/list */
	DW_READY,
	DW_DEAD,
};

enum dwreq_kind {
	DWREQ_INITIALIZE,
	DWREQ_TOOLS_LIST,
	DWREQ_CALL,	/* a tools/call or a pass-through request on behalf of a dcall */
	DWREQ_SETLEVEL, /* logging/setLevel; its answer is not waited for */
	DWREQ_QUIET,	/* a request whose answer nobody waits for (worker_send_quiet) */
};

struct dwreq {
	int64_t id;
	enum dwreq_kind kind;
	struct dcall *call; /* DWREQ_CALL; NULL once the call went away */
	struct dwreq *next;
};

/* Egress denials of one instance, audited at most once a second
 * (worker-denials.c). */
struct ddenials {
	uint64_t audit_ms; /* last network.denied record */
	uint64_t pending;  /* denials not yet in an audit record */
	char hook[16];	   /* the egress hook of the latest of them */
};

/* A connector instance may write at most this many stdout lines that are
 * not JSON-RPC messages within WORKER_SKIPPED_WINDOW_MS (worker.c): each is
 * skipped with a warning, the next one stops the instance. */
#define WORKER_SKIPPED_MAX 100

/* MCP's log levels (RFC 5424's names), least severe first; 0 is "none". */
enum {
	WORKER_LOG_DEBUG = 1,
	WORKER_LOG_INFO,
	WORKER_LOG_NOTICE,
	WORKER_LOG_WARNING,
	WORKER_LOG_ERROR,
	WORKER_LOG_CRITICAL,
	WORKER_LOG_ALERT,
	WORKER_LOG_EMERGENCY,
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
	struct ddenials denials; /* egress denials (worker-denials.c) */
	bool exit_reported;	 /* the spawner reported its exit */
	int wait_status;	 /* its wait status, when have_wait_status */
	bool have_wait_status;
	size_t n_roots;	   /* delegated roots it was started with */
	json_t *delegated; /* their sandbox paths */
	bool for_install;  /* launched by connector_add only to take the inventory */
	char tag[64];
	/* issue 11 finding 4: tools/list budgets per instance over a window
	 * (not per listing), one listing at a time, re-listings rate-limited. */
	uint64_t list_window_ms, list_window_pages, list_window_tools, list_window_bytes;
	uint64_t listing_started_ms, relist_last_ms;
	bool listing, relist_pending;
	/* issue 11 finding 9d: protocol warnings rate-limited per instance. */
	uint64_t warn_window_ms, warn_window_n, warn_suppressed;
	/* issue 13 (Logging): the level last sent with logging/setLevel (0:
	 * none; else a WORKER_LOG_* value), and the connector's
	 * notifications/message rate-limited per instance. */
	unsigned log_level_sent;
	/* issue 13: the notifications relayed to sessions, each kind
	 * rate-limited per instance (worker.c): log messages, resource
	 * updates, task status. */
	struct dnotify_limit {
		uint64_t window_ms, n, dropped;
	} logmsg_limit, updated_limit, taskstatus_limit;
	/* issue 11 finding 10a: the credential values this instance was
	 * started with (from the spawner), for scrubbing its stderr. */
	char **secrets;
	size_t n_secrets;
	/* issue 13: stdout lines skipped as not JSON-RPC messages, and the
	 * times of the last WORKER_SKIPPED_MAX of them (a ring; worker.c). */
	uint64_t skipped_n;
	uint64_t skipped_at[WORKER_SKIPPED_MAX];
	struct dcall *waiting; /* calls queued until ready */
	struct dworker *next;  /* in the daemon's list */
	int refs;
};

/* An instance the broker stopped whose exit the launcher helper has not
 * reported yet: its egress denials may still arrive (worker-denials.c). */
struct dgone {
	uint32_t instance;
	char *connector, *session;
	char tag[64];
	uint64_t generation;
	struct ddenials denials;
	char reason[64]; /* why it ended, for its cordon.instance.exited line */
	bool crashed;
	struct dgone *next;
};

enum dcall_kind {
	DCK_TOOL = 0, /* tools/call */
	DCK_PASS,     /* resources/prompts/completion pass-through */
};

struct dmulti;
struct dpass;
struct dheld_args;
struct dcall;
struct dtask;

/* How the instance serving a call reports on it: set by the kind of call
 * (gateway-call.c: tools/call; gateway-pass.c: resources, prompts,
 * completion) when it is made, called by worker.c. Each of ready, failed,
 * lost and result ends with the call answered or freed. */
struct dcall_ops {
	/* The instance is ready (the call was queued until it was). */
	void (*ready)(struct dcall *c);
	/* The instance could not serve it: nothing was sent. */
	void (*failed)(struct dcall *c, const char *why);
	/* The instance died while the call was in flight. */
	void (*lost)(struct dcall *c, const char *why);
	/* The connector's response (msg borrowed; line_len: its size on the wire). */
	void (*result)(struct dcall *c, json_t *msg, size_t line_len);
	/* A notifications/progress the connector sent for it (params
	 * borrowed); NULL: dropped. */
	void (*progress)(struct dcall *c, const json_t *params);
	/* call_free(): releases what the kind keeps in the call; may be NULL. */
	void (*release)(struct dcall *c);
	/* Its decision committed with the loop pass's batch (gateway-decide.c):
	 * r is what cordon_broker_decide_batched() returned, batch_r the
	 * batch's outcome (0 committed); may be NULL for kinds that are not
	 * decided that way. */
	void (*decided)(struct dcall *c, int r, int batch_r);
};

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
	const struct dcall_ops *ops;
	char *pass_method;
	json_t *pass_params;
	struct dmulti *multi;
	struct dcall *next;	    /* session list */
	struct dcall *next_waiting; /* worker wait queue */
	/* Decided in the open batch, waiting for its commit (gateway-decide.c):
	 * the batch, what the decision returned, the daemon's queue. */
	bool decided_pending;
	int decide_r;
	uint64_t decide_batch;
	struct dcall *next_decided;
	/* Argument bytes charged to held_subject's budget (held_charge) from
	 * admission until call_free; 0 when nothing was charged. */
	uint64_t held_bytes;
	uint64_t held_subject;
	/* issue 13 (Tasks, gateway-task.c): params.task of a task-augmented
	 * tools/call ({"ttl": N} or {}; NULL: a plain call); whether it goes
	 * to the connector as a task (its tool and capabilities allow it);
	 * the cordon task the call's answer goes to (NULL: to the client). */
	json_t *task_params;
	bool task_upstream;
	struct dtask *task;
	/* The instance a call passed as a task was sent to (worker.c clears
	 * c->w before the answer; the answer comes from a live instance). */
	struct dworker *task_w;
};

/* The transport of a session that is not a gateway-socket connection
 * (gateway-http.c): every message cordon writes to the session goes to
 * send (one JSON-RPC message, no newline) instead of the socket, and
 * closed is told once, when the session is about to be freed. */
struct dtransport {
	void (*send)(struct dsession *s, const char *bytes, size_t len);
	void (*closed)(struct dsession *s);
};

struct dsession {
	struct cordon_daemon *d;
	char id[CORDON_SESSION_ID_MAX];
	/* The gateway socket's connection, or -EBADF with a transport. */
	int fd;
	const struct dtransport *transport; /* NULL: the gateway socket */
	void *transport_data;
	struct ucred cred;
	/* Who the session acts for (issue 18): the key of its share (struct
	 * duid), the peer's uid, or DSUBJECT_AGENT | the agent's id for a
	 * bearer token over TCP; agent is the agent's name ("" for a uid). */
	uint64_t subject;
	char agent[CORDON_AGENT_NAME_MAX + 1];
	struct cordon_watch *watch;
	struct dbuf rbuf, wbuf;
	bool discarding; /* inside an oversize line: drop until newline */
	bool initialized, closing;
	char version[16]; /* negotiated; the instances it starts initialize with it */
	/* initialize params._meta (an object of at most GATEWAY_META_MAX bytes
	 * as compact JSON; NULL: none): relayed to its per-session instances. */
	json_t *client_meta;
	bool client_sampling, client_elicitation, client_roots;
	unsigned log_level; /* logging/setLevel: 0 none asked; else a WORKER_LOG_* value */
	struct dcall *calls;
	struct dpass *pass; /* gateway-pass.c: subscriptions, list pages (NULL: none yet) */
	/* The one connector this session sees, under its own names (cordon/bind,
	 * only before initialize, never changed); "" for the multiplexed view. */
	char bound[CORDON_CONNECTOR_ID_MAX + 1];
	int64_t next_server_id;
	/* issue 13 (Tasks): the client announced `tasks` in initialize; the
	 * session's tasks (gateway-task.c), at most SESSION_TASKS_MAX. */
	bool client_tasks;
	struct dtask *tasks;
	unsigned n_tasks;
	uint64_t accepted_ms; /* before initialize: closed after cfg.initialize_timeout_ms */
	/* The client shut down its sending side (recv 0) at this time (0: not):
	 * nothing more is read, and the session closes once its calls are
	 * answered and written, or after eof_grace_ms() (gateway.c). */
	uint64_t eof_ms;
	struct dsession *next, *prev;
};

/* One local uid's share of the gateway (issue 11 findings 3 and 6): its
 * sessions and the call-argument bytes its calls hold. An entry lives while
 * either is non-zero (an in-flight call outlives its session). */
#define DSUBJECT_AGENT (1ull << 32)
struct duid {
	uint64_t subject; /* a uid, or DSUBJECT_AGENT | an agent's id */
	unsigned sessions;
	uint64_t held_bytes;
};

/* What connector instances tell the gateway (gateway.c registers it at
 * gateway_start; worker.c calls it; every member is set). */
struct worker_events {
	/* A listing changed a connector's inventory: sessions hear
	 * notifications/tools/list_changed (rate-limited by the worker). */
	void (*tools_changed)(struct cordon_daemon *d, const char *connector);
	/* A notification for the clients of instance w that the worker
	 * admitted: notifications/message (params: an object, borrowed) or
	 * notifications/resources/updated (params: an object with a uri,
	 * borrowed) or notifications/resources|prompts/list_changed (params
	 * NULL). */
	void (*notify)(struct dworker *w, const char *method, const json_t *params);
	/* The level instance w should log at: the least severe any session
	 * it serves asked for with logging/setLevel (0: none asked). */
	unsigned (*log_level)(struct dworker *w);
	/* A sampling or elicitation request the profile permits (bit: its
	 * CORDON_CLIENT_* flag): relayed to a client, or answered with an error
	 * through worker_answer(). */
	void (*client_request)(struct dworker *w, json_t *msg, unsigned bit);
	/* w died (its calls have been failed): forget every reference to it. */
	void (*gone)(struct dworker *w);
};

/* What a tools/call asks of the task layer (gateway-task.c) on its way
 * through gateway-call.c, which sits below it: gateway_start registers
 * gateway-task's table (every member set); NULL before, and then no call
 * is a task. */
struct dtask_hooks {
	/* call_start: params.task admitted (*ret_task: NULL for a plain
	 * call); < 0: refused, the error sent. */
	int (*admit)(struct dsession *s, const json_t *id, const json_t *params, json_t **ret_task);
	/* The instance is ready, before the decision; false: answered, freed. */
	bool (*ready)(struct dcall *c);
	/* The call waits for an approval. */
	void (*held)(struct dcall *c, const struct cordon_approval_info *info);
	/* The call is about to be dispatched. */
	void (*dispatching)(struct dcall *c);
	/* cordon answers the call itself: a task call becomes its task now. */
	void (*own)(struct dcall *c, const char *message);
	/* The answer of a call with c->task ({"result"|"error": ...}, stolen). */
	void (*finish)(struct dcall *c, json_t *answer);
	/* A connector's result to a call passed as a task; true: taken. */
	bool (*upstream_created)(struct dcall *c, const json_t *result);
	/* call_free. */
	void (*released)(struct dcall *c);
	/* tools/list: one tool's definition as s sees it; false: left out. */
	bool (*tool_listed)(const struct dsession *s, json_t *def);
};

/* A connector's sampling/elicitation request relayed to a client. */
struct drelay {
	struct dsession *s;
	struct dworker *w;  /* NULL once the instance is gone */
	char client_id[40]; /* the id the broker used toward the client */
	json_t *worker_id;  /* the connector's request id */
	struct drelay *next;
};

struct daemon_metrics {
	uint64_t calls_allow, calls_approve, calls_deny;
	uint64_t approvals_requested, approvals_approved, approvals_denied, approvals_expired, approvals_timeout,
		approvals_cancelled;
	uint64_t spawn_buckets[12]; /* le 1,2,5,10,20,50,100,200,500,1000,2000,+Inf ms */
	double spawn_sum_ms;
	uint64_t spawn_count;
	uint64_t instance_restarts, instance_crashes, oom_kills, network_denials, worker_protocol_kills,
		worker_lines_skipped;
	uint64_t sessions_total, sessions_refused, gateway_errors;
	uint64_t reloads_applied, reloads_refused;
	/* The approval webhook (webhook.c). */
	uint64_t webhook_delivered, webhook_failed, webhook_dropped, webhook_retries;
};

/* A file in the profiles directory that failed to load (at start-up, or at
 * the last reload, which it refused): it is not served, health is degraded
 * while it is listed, and connectors.add of its id prints the loader's
 * error. At most DAEMON_BAD_PROFILES_MAX are
 * kept; n_bad_profiles_total counts them all. */
#define DAEMON_BAD_PROFILES_MAX 32u
/* At most this many profiles are loaded (served as connectors); a file past
 * it counts as a bad profile ("too many profiles"). It bounds the
 * cardinality of the per-connector metrics. */
#define DAEMON_CONNECTORS_MAX 256u
struct dbadprofile {
	char file[256]; /* the name in the profiles directory */
	struct cordon_diag diag;
};

struct cordon_daemon {
	struct cordon_daemon_config cfg;
	struct cordon_loop *loop;
	struct cordon_db *db;
	/* Commits counted at the last tick: none since means idle (db_tick()). */
	uint64_t wal_tick_commits;
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
	/* Calls decided in the open batch of decisions, in order (gateway-decide.c). */
	struct dcall *decided;
	struct dworker *workers; /* every live worker */
	struct dgone *gone;	 /* stopped, exit not yet reported */
	unsigned n_gone;
	const struct worker_events *worker_events; /* NULL until gateway_start */
	const struct dtask_hooks *task_hooks;	   /* NULL until gateway_start */
	int gateway_fd, operator_fd, http_fd;
	int mcp_http_fd;		  /* mcp-http.sock (gateway-http.c) */
	struct gw_http *mcp_http;	  /* NULL until serving */
	int mcp_tcp_fd, mcp_tcp_port;	  /* mcp_http_listen (-EBADF: none) */
	struct gw_http *mcp_http_tcp;	  /* its gateway-http.c instance */
	char *mcp_tls_cert, *mcp_tls_key; /* PEM, sodium_malloc'd (mcp_http_tls_*); NULL: no TLS */
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
	/* Refused calls per connector, logged as summaries (daemon-log.h). */
	struct dlog_denials denials_log;
	struct cordon_note_verifier verifier;
	bool have_verifier;
	/* Per-uid shares (gateway-session.c). */
	struct duid *uids;
	size_t n_uids, cap_uids;
	uint64_t held_bytes; /* all calls' held argument bytes */
	/* Arguments of pending approvals (approval-args.c), charged to the
	 * same budgets. */
	struct dheld_args *held_args;
	size_t n_held_args;
	uint64_t held_released; /* freed since the last malloc_trim */
	uint64_t last_trim_ms;
	/* Reloads (daemon-reload.c): the flags cordond started with and its
	 * --config file (absolute; NULL: none). */
	char **reload_argv;
	int reload_argc;
	char *config_path;
	int stop_signal;		/* the signal that stopped the loop (0: none) */
	struct cordon_webhook *webhook; /* NULL: no approval webhook configured */
};

/* daemon-state.c */
/* The connector loaded from profile `id`, or NULL. */
struct dconn *daemon_conn(struct cordon_daemon *d, const char *id);
/* Whether connector `id` is installed (has a launch generation). */
bool daemon_conn_installed(struct cordon_daemon *d, const char *id);
/* Records a spawn latency in the metrics histogram. */
void daemon_spawn_observed(struct cordon_daemon *d, uint64_t ms);
/* Forgets cached surface checks (connector NULL: all). */
void daemon_surface_changed(struct cordon_daemon *d, const char *connector);
