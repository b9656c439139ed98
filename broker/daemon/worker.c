/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Connector workers: cordond is an MCP client over each instance's stdio.
 *
 * A worker's stdout is untrusted input: newline-delimited JSON-RPC lines,
 * each strictly admitted (canon). A line beyond the line bound stops the
 * instance; a line that is not a JSON-RPC message is skipped with a warning,
 * and too many of them stop the instance (WORKER_SKIPPED_MAX). Its
 * stderr goes to the broker log, rate-limited, size-capped and scrubbed of
 * credential values. Requests are numbered from 1 (the TypeScript SDK
 * ignores a cancellation for id 0). Server->client requests: roots/list is
 * answered by the broker from the instance's own roots and never forwarded
 * (server-filesystem replaces its allowed directories with whatever roots a
 * client returns); sampling and elicitation are refused unless the profile
 * lists them in client_requests: then the gateway relays them to the
 * session's client, labelled with the connector (gateway-relay.c).
 *
 * The worker sits below the gateway and calls nothing of it: how a call
 * ends (ready, failed, lost, its result, its progress) goes to the call's
 * own struct dcall_ops, and what the sessions must hear (tools changed, a
 * connector's notifications and client requests, an instance gone) to the
 * struct worker_events the gateway registered (daemon-state.h). */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "canon.h"
#include "cleanup.h"
#include "crypto.h"
#include "connectors.h"
#include "dbuf.h"
#include "delegations.h"
#include "fd-util.h"
#include "grants.h"
#include "inventory.h"
#include "daemon-log.h"
#include "log.h"
#include "worker-denials.h"
#include "worker-io.h"
#include "worker-log.h"
#include "worker.h"

/* tools/list budgets (issue 11 finding 4). They hold per instance over a
 * window, across re-listings: a connector that sends list_changed every few
 * pages (or abandons a cursor chain) cannot reset them. Only one listing
 * runs at a time (a list_changed during one is remembered and served after
 * it), a new listing starts at most once per WORKER_RELIST_INTERVAL_MS, and a
 * listing must finish within WORKER_LIST_TIMEOUT_MS. Beyond a budget the
 * instance is stopped, named as such in the log and the connector's
 * last_error, and counts as a crash (restart backoff, `failing`). */
#define WORKER_LIST_PAGES_MAX	  100		      /* pages per instance per window */
#define WORKER_TOOLS_MAX	  4096		      /* tools per listing and per window */
#define WORKER_LIST_BYTES_MAX	  (16u * 1024 * 1024) /* response bytes per window */
#define WORKER_LIST_WINDOW_MS	  60000
#define WORKER_RELIST_INTERVAL_MS 1000
#define WORKER_LIST_TIMEOUT_MS	  30000
/* Sessions hear notifications/tools/list_changed only for a real change,
 * at most once per interval per connector (issue 11 finding 9a). */
#define WORKER_NOTIFY_INTERVAL_MS 1000
/* Lines on a connector's stdout that are not JSON-RPC messages (a stray
 * print, a partial line, a batch array) are skipped with a rate-limited,
 * scrubbed warning, as the official SDK skips them (issue 13); more than
 * WORKER_SKIPPED_MAX (daemon-state.h: 100) within any WORKER_SKIPPED_WINDOW_MS
 * stop the instance as a crash, with the reason in the log and last_error.
 * Skipping cannot desynchronise calls: responses are matched by id. An
 * oversize line still stops the instance at once: the bytes up to its end
 * would have to be read and dropped, and if it was a response its call would
 * wait for an answer that never comes. */
#define WORKER_SKIPPED_WINDOW_MS 60000
static void worker_died(struct dworker *w, const char *why, bool crashed);

/* The gateway's handlers (NULL before gateway_start and after
 * gateway_stop, when there is no session to tell anything). */
static const struct worker_events *events(const struct dworker *w)
{
	return w->d->worker_events;
}

const json_t *worker_tool(struct dworker *w, const char *tool)
{
	size_t i;
	json_t *t;

	json_array_foreach(w->tools, i, t) if (json_is_string(json_object_get(t, "name")) &&
					       !strcmp(json_string_value(json_object_get(t, "name")), tool)) return t;
	return NULL;
}

const char *worker_fingerprint(struct dworker *w, const char *tool)
{
	return json_string_value(json_object_get(w->fingerprints, tool));
}

/* Stops an instance that went over a tools/list budget, naming it. */
static void list_budget_exceeded(struct dworker *w, const char *what, unsigned long long limit)
{
	char why[160];

	snprintf(why, sizeof(why), "stopped: tools/list budget exceeded (more than %llu %s within %u s)", limit, what,
		 WORKER_LIST_WINDOW_MS / 1000);
	w->d->m.worker_protocol_kills++;
	worker_died(w, why, true);
}

/* Opens a new budget window when the last one is over. */
static void list_window_roll(struct dworker *w, uint64_t now)
{
	if (!w->list_window_ms || now - w->list_window_ms >= WORKER_LIST_WINDOW_MS) {
		w->list_window_ms = now;
		w->list_window_pages = w->list_window_tools = w->list_window_bytes = 0;
	}
}

static void list_tools(struct dworker *w, const char *cursor)
{
	uint64_t now = cordon_loop_now_ms();
	struct dwreq *q;

	list_window_roll(w, now);
	if (w->list_window_pages >= WORKER_LIST_PAGES_MAX) {
		list_budget_exceeded(w, "pages", WORKER_LIST_PAGES_MAX);
		return;
	}
	if (!cursor) {
		w->list_pages = 0;
		w->listing = true;
		w->relist_pending = false;
		w->listing_started_ms = w->relist_last_ms = now;
		json_decref(w->list_accum);
		w->list_accum = json_array();
	}
	w->list_pages++;
	q = worker_req_new(w, DWREQ_TOOLS_LIST);
	if (!q) {
		worker_died(w, "out of memory", false);
		return;
	}
	if (worker_send_request(w, q, "tools/list", cursor ? json_pack("{s:s}", "cursor", cursor) : json_object()) < 0)
		worker_died(w, "cannot send tools/list", true);
}

/* Serves a remembered list_changed: one listing at a time, at most one
 * started per interval. May stop the instance (budget). */
static void relist_maybe(struct dworker *w, uint64_t now)
{
	if (w->state != DW_READY || w->listing || !w->relist_pending)
		return;
	if (w->relist_last_ms && now - w->relist_last_ms < WORKER_RELIST_INTERVAL_MS)
		return;
	list_tools(w, NULL);
}

/* Tells every session that a connector's tools changed, at most once per
 * interval; a change within the interval is sent when it ends
 * (workers_tick). */
static void notify_list_changed(struct cordon_daemon *d, struct dconn *c, uint64_t now)
{
	c->notify_pending = true;
	if (c->notify_last_ms && now - c->notify_last_ms < WORKER_NOTIFY_INTERVAL_MS)
		return;
	c->notify_pending = false;
	c->notify_last_ms = now;
	if (d->worker_events)
		d->worker_events->tools_changed(d, c->id);
}

/* The complete list arrived: fingerprint every tool, sync the inventory,
 * and tell sessions when the effective surface may have changed. */
static void tools_listed(struct dworker *w, json_t *tools)
{
	struct cordon_daemon *d = w->d;
	_cleanup_free_ struct cordon_tool_advert_owned *own = NULL;
	_cleanup_free_ struct cordon_tool_advert *adv = NULL;
	struct cordon_inventory_sync_result res = {};
	json_t *fps = json_object();
	size_t n = json_array_size(tools), i, ok = 0;
	bool changed = false;
	int r = 0;

	own = calloc(n ? n : 1, sizeof(*own));
	adv = calloc(n ? n : 1, sizeof(*adv));
	if (!own || !adv || !fps) {
		json_decref(fps);
		json_decref(tools);
		worker_died(w, "out of memory", false);
		return;
	}
	for (i = 0; i < n; i++) {
		r = cordon_tool_advert_from_json(json_array_get(tools, i), w->instructions, &own[ok]);
		if (r < 0)
			break;
		adv[ok] = own[ok].advert;
		json_object_set_new(fps, own[ok].name, json_string(own[ok].fingerprint));
		ok++;
	}
	if (r >= 0 && daemon_conn_installed(d, w->conn->id)) {
		struct cordon_actor sys = cordon_actor_system();

		r = cordon_inventory_sync(d->db, &sys, w->conn->id, adv, ok, &res);
		if (r >= 0)
			changed = res.added || res.changed || res.reverted || res.gone;
	}
	for (i = 0; i < ok; i++)
		cordon_tool_advert_owned_done(&own[i]);
	if (r < 0) {
		json_decref(fps);
		json_decref(tools);
		worker_log(w, LOG_LEVEL_WARNING, "tools/list rejected: %s", strerror(-r));
		worker_died(w, "invalid tools/list", false);
		return;
	}
	json_decref(w->tools);
	json_decref(w->fingerprints);
	w->tools = tools;
	w->fingerprints = fps;
	w->inventory_synced = true;
	w->listing = false;
	/* Only a real change of the inventory (a tool added, changed,
	 * reverted or gone) changes what sessions can see; an identical
	 * re-listing tells nobody anything. */
	if (changed) {
		daemon_surface_changed(d, w->conn->id);
		notify_list_changed(d, w->conn, cordon_loop_now_ms());
	}
	if (w->state != DW_READY) {
		w->state = DW_READY;
		/* Serve the calls that waited for the instance. */
		while (w->waiting) {
			struct dcall *c = w->waiting;

			w->waiting = c->next_waiting;
			c->next_waiting = NULL;
			c->ops->ready(c);
		}
	}
	relist_maybe(w, cordon_loop_now_ms());
}

/* roots/list: from the instance's own roots, as the sandbox shows them. */
static json_t *instance_roots(struct dworker *w)
{
	const struct cordon_profile *p = w->conn->profile;
	json_t *roots = json_array();

	for (size_t i = 0; i < p->n_fs_roots; i++) {
		char uri[4200];

		snprintf(uri, sizeof(uri), "file://%s", p->fs_roots[i].at ? p->fs_roots[i].at : p->fs_roots[i].path);
		json_array_append_new(roots, json_pack("{s:s}", "uri", uri));
	}
	/* Delegated roots it was started with (already inside the sandbox). */
	size_t i;
	json_t *x;
	json_array_foreach(w->delegated, i, x)
	{
		char uri[4200];

		snprintf(uri, sizeof(uri), "file://%s", json_string_value(x));
		json_array_append_new(roots, json_pack("{s:s}", "uri", uri));
	}
	return json_pack("{s:o}", "roots", roots);
}

static void handle_server_request(struct dworker *w, json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *id = json_object_get(msg, "id");

	if (!strcmp(method, "roots/list"))
		worker_answer_result(w, id, instance_roots(w));
	else if (!strcmp(method, "ping"))
		worker_answer_result(w, id, json_object());
	else if (!strcmp(method, "sampling/createMessage") || !strcmp(method, "elicitation/create")) {
		unsigned bit = method[0] == 's' ? CORDON_CLIENT_SAMPLING : CORDON_CLIENT_ELICITATION;

		if (!(w->conn->profile->client_requests & bit))
			worker_answer_error(w, id, -32601,
					    "cordon: the connector's profile does not permit this client request");
		else if (!events(w))
			worker_answer_error(w, id, -32601,
					    "cordon: no client session that supports this request can be asked");
		else
			events(w)->client_request(w, msg, bit);
	} else
		worker_answer_error(w, id, -32601, "method not available from the broker");
}

/* A connector's notifications/message per instance: at most
 * WORKER_LOGMSG_BURST per window; what is over is counted and the count
 * logged when the window ends. */
#define WORKER_LOGMSG_BURST	100
#define WORKER_LOGMSG_WINDOW_MS 1000

static const char *const log_levels[] = { "debug", "info",     "notice", "warning",
					  "error", "critical", "alert",	 "emergency" };

unsigned worker_log_level_parse(const char *name)
{
	if (name)
		for (size_t i = 0; i < ELEMENTSOF(log_levels); i++)
			if (!strcmp(name, log_levels[i]))
				return (unsigned)i + 1;
	return 0;
}

const char *worker_log_level_name(unsigned level)
{
	return level >= 1 && level <= ELEMENTSOF(log_levels) ? log_levels[level - 1] : NULL;
}

void worker_log_level_update(struct dworker *w)
{
	unsigned want;
	struct dwreq *q;

	if ((w->state != DW_LISTING && w->state != DW_READY) || !json_object_get(w->server_caps, "logging") ||
	    !events(w))
		return;
	want = events(w)->log_level(w);
	if (!want || want == w->log_level_sent)
		return;
	q = worker_req_new(w, DWREQ_SETLEVEL);
	if (!q)
		return;
	if (worker_send_request(w, q, "logging/setLevel", json_pack("{s:s}", "level", worker_log_level_name(want))) < 0)
		return;
	w->log_level_sent = want;
}

/* The notification kinds relayed to sessions, each at most
 * WORKER_LOGMSG_BURST per WORKER_LOGMSG_WINDOW_MS per instance; what was
 * dropped is logged once its window ends (here or at the tick). */
enum { NL_LOG, NL_UPDATED, NL_TASK_STATUS };
static const struct {
	size_t off;
	const char *what;
} notify_limits[] = {
	[NL_LOG] = { offsetof(struct dworker, logmsg_limit), "log messages" },
	[NL_UPDATED] = { offsetof(struct dworker, updated_limit), "resource updates" },
	[NL_TASK_STATUS] = { offsetof(struct dworker, taskstatus_limit), "task status notifications" },
};

static struct dnotify_limit *notify_limit(struct dworker *w, size_t i)
{
	return (struct dnotify_limit *)((char *)w + notify_limits[i].off);
}

static void notify_flush(struct dworker *w, size_t i)
{
	struct dnotify_limit *l = notify_limit(w, i);

	if (l->dropped)
		worker_log(w, LOG_LEVEL_NOTICE, "%llu %s not relayed (rate limit: %u per %u ms)",
			   (unsigned long long)l->dropped, notify_limits[i].what, WORKER_LOGMSG_BURST,
			   WORKER_LOGMSG_WINDOW_MS);
	l->dropped = 0;
	l->n = 0;
}

/* Whether one more notification of kind i may be relayed now. */
static bool notify_admit(struct dworker *w, size_t i)
{
	struct dnotify_limit *l = notify_limit(w, i);
	uint64_t now = cordon_loop_now_ms();

	if (!l->window_ms || now - l->window_ms >= WORKER_LOGMSG_WINDOW_MS) {
		notify_flush(w, i);
		l->window_ms = now;
	}
	if (l->n >= WORKER_LOGMSG_BURST) {
		l->dropped++;
		return false;
	}
	l->n++;
	return true;
}

static void handle_notification(struct dworker *w, json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *params = json_object_get(msg, "params");

	if (!strcmp(method, "notifications/tools/list_changed")) {
		/* Re-inventory: a changed tool becomes `changed` (denied until
		 * reviewed) and sessions get list_changed. A storm of them
		 * costs one flag: they coalesce into one pending listing. */
		w->relist_pending = true;
		relist_maybe(w, cordon_loop_now_ms());
	} else if (!strcmp(method, "notifications/progress")) {
		json_t *tok = json_object_get(params, "progressToken");

		if (!json_is_integer(tok))
			return;
		/* The call it names hears it (the request id is the token the
		 * broker sent). */
		for (struct dwreq *q = w->reqs; q; q = q->next)
			if (q->kind == DWREQ_CALL && q->id == json_integer_value(tok) && q->call &&
			    q->call->ops->progress)
				q->call->ops->progress(q->call, params);
	} else if (!strcmp(method, "notifications/message")) {
		/* Connector log messages go to the sessions the instance
		 * serves (the gateway filters by each one's level), at most
		 * WORKER_LOGMSG_BURST per window per instance. */
		if (!json_is_object(params) ||
		    !worker_log_level_parse(json_string_value(json_object_get(params, "level")))) {
			worker_warn(w, "notifications/message without a valid level; dropped");
			return;
		}
		if (notify_admit(w, NL_LOG) && events(w))
			events(w)->notify(w, method, params);
	} else if (!strcmp(method, "notifications/tasks/status")) {
		/* A task's new state: to the one session that owns it (the
		 * gateway maps the connector's task id to cordon's), rate-limited
		 * like log messages. */
		if (json_is_object(params) && notify_admit(w, NL_TASK_STATUS) && events(w))
			events(w)->notify(w, method, params);
	} else if (!strcmp(method, "notifications/resources/updated") && w->conn->profile->resources_read) {
		/* To the sessions subscribed to that URI (gateway-pass.c), so
		 * only with a URI a session could have subscribed to. */
		const char *uri = json_string_value(json_object_get(params, "uri"));
		if (!uri || !*uri || strlen(uri) > GATEWAY_URI_MAX) {
			worker_warn(w, "notifications/resources/updated without a valid uri; dropped");
			return;
		}
		/* At most WORKER_LOGMSG_BURST per window, as log messages. */
		if (notify_admit(w, NL_UPDATED) && events(w))
			events(w)->notify(w, method, params);
	} else if ((!strcmp(method, "notifications/resources/list_changed") && w->conn->profile->resources_read) ||
		   (!strcmp(method, "notifications/prompts/list_changed") && w->conn->profile->prompts_read)) {
		/* Passed on to the sessions this instance serves; the lists are
		 * fetched (and routed) again when the client asks. */
		if (events(w))
			events(w)->notify(w, method, NULL);
	}
	/* Other notifications are dropped. */
}

/* Keeps what the latest instance of c said in `instructions` (NULL: it
 * said nothing) for the clients' initialize (gateway.c), at most
 * DCONN_INSTRUCTIONS_MAX bytes: cut before a UTF-8 continuation byte, so
 * the text stays valid UTF-8. Out of memory keeps none. */
static void conn_instructions_keep(struct dconn *c, const char *text)
{
	size_t n = text ? strlen(text) : 0;

	free(c->instructions);
	c->instructions = NULL;
	if (!text)
		return;
	if (n > DCONN_INSTRUCTIONS_MAX) {
		n = DCONN_INSTRUCTIONS_MAX;
		while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80)
			n--;
	}
	c->instructions = strndup(text, n);
}

/* The DCONN_CAP_* flags of a connector's initialize capabilities. */
static unsigned conn_caps(const json_t *caps)
{
	json_t *res = json_object_get(caps, "resources"), *pr = json_object_get(caps, "prompts");

	return (json_is_true(json_object_get(res, "subscribe")) ? DCONN_CAP_RES_SUBSCRIBE : 0) |
	       (json_is_true(json_object_get(res, "listChanged")) ? DCONN_CAP_RES_LIST_CHANGED : 0) |
	       (json_is_true(json_object_get(pr, "listChanged")) ? DCONN_CAP_PROMPTS_LIST_CHANGED : 0);
}

int worker_send_quiet(struct dworker *w, const char *method, json_t *params)
{
	struct dwreq *q;

	if (w->state != DW_READY) {
		json_decref(params);
		return -EAGAIN;
	}
	q = worker_req_new(w, DWREQ_QUIET);
	if (!q) {
		json_decref(params);
		return -ENOMEM;
	}
	return worker_send_request(w, q, method, params);
}

static void handle_response(struct dworker *w, json_t *msg, size_t len)
{
	json_t *id = json_object_get(msg, "id");
	struct dwreq *q;

	if (!json_is_integer(id) || !(q = worker_req_take(w, json_integer_value(id)))) {
		worker_warn(w, "response to an unknown request id; ignored");
		return;
	}
	switch (q->kind) {
	case DWREQ_INITIALIZE: {
		json_t *res = json_object_get(msg, "result");

		if (!json_is_object(res)) {
			free(q);
			worker_died(w, "initialize failed", false);
			return;
		}
		w->server_caps = json_incref(json_object_get(res, "capabilities"));
		if (json_is_string(json_object_get(res, "instructions")))
			w->instructions = strdup(json_string_value(json_object_get(res, "instructions")));
		conn_instructions_keep(w->conn, w->instructions);
		w->conn->caps = conn_caps(w->server_caps);
		worker_send_json(w, json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", "notifications/initialized"));
		w->state = DW_LISTING;
		worker_log_level_update(w);
		w->list_accum = json_array();
		if (json_object_get(w->server_caps, "tools"))
			list_tools(w, NULL);
		else {
			json_t *t = w->list_accum;

			w->list_accum = NULL;
			tools_listed(w, t);
		}
		break;
	}
	case DWREQ_TOOLS_LIST: {
		json_t *res = json_object_get(msg, "result"), *tools = json_object_get(res, "tools");
		const char *next = json_string_value(json_object_get(res, "nextCursor"));
		static const unsigned pages_max = WORKER_LIST_PAGES_MAX;

		if (!w->list_accum)
			w->list_accum = json_array();
		if (!json_is_array(tools) ||
		    json_array_size(w->list_accum) + json_array_size(tools) > WORKER_TOOLS_MAX ||
		    w->list_pages > pages_max) {
			free(q);
			worker_died(w, "invalid or oversize tools/list", false);
			return;
		}
		/* The budgets of the window, across listings. */
		list_window_roll(w, cordon_loop_now_ms());
		free(q);
		if (w->list_window_pages + 1 > WORKER_LIST_PAGES_MAX) {
			list_budget_exceeded(w, "pages", WORKER_LIST_PAGES_MAX);
			return;
		}
		if (w->list_window_tools + json_array_size(tools) > WORKER_TOOLS_MAX) {
			list_budget_exceeded(w, "tools", WORKER_TOOLS_MAX);
			return;
		}
		if (w->list_window_bytes + len > WORKER_LIST_BYTES_MAX) {
			list_budget_exceeded(w, "bytes", WORKER_LIST_BYTES_MAX);
			return;
		}
		w->list_window_pages++;
		w->list_window_tools += json_array_size(tools);
		w->list_window_bytes += len;
		json_array_extend(w->list_accum, tools);
		if (next && *next)
			list_tools(w, next);
		else {
			json_t *t = w->list_accum;

			w->list_accum = NULL;
			tools_listed(w, t);
		}
		return;
	}
	case DWREQ_SETLEVEL:
		/* Nothing waits for it; an error is the connector's to log. */
		if (json_object_get(msg, "error"))
			worker_warn(w, "logging/setLevel failed");
		break;
	case DWREQ_QUIET:
		if (json_object_get(msg, "error"))
			worker_warn(w, "a request cordon sent on its own failed");
		break;
	case DWREQ_CALL:
		if (q->call) {
			struct dcall *c = q->call;

			c->w = NULL;
			c->ops->result(c, msg, len);
		}
		break;
	}
	free(q);
}

/* Counts a skipped stdout line; true when it is the one too many: more
 * than WORKER_SKIPPED_MAX within WORKER_SKIPPED_WINDOW_MS (a sliding
 * window: skipped_at holds the times of the last WORKER_SKIPPED_MAX). */
static bool skipped_over_bound(struct dworker *w, uint64_t now)
{
	size_t slot = (size_t)(w->skipped_n % WORKER_SKIPPED_MAX);
	bool over = w->skipped_n >= WORKER_SKIPPED_MAX && now - w->skipped_at[slot] < WORKER_SKIPPED_WINDOW_MS;

	w->skipped_at[slot] = now;
	w->skipped_n++;
	return over;
}

/* A stdout line that is not a JSON-RPC message: skipped with a protocol
 * warning (rate-limited, an escaped and scrubbed excerpt, never the whole
 * line), or the instance stopped when there were too many of them. */
static void skip_line(struct dworker *w, const char *line, size_t len, const char *what)
{
	char excerpt[WORKER_EXCERPT_MAX], why[200];

	w->d->m.worker_lines_skipped++;
	worker_excerpt(w, line, len, excerpt, sizeof(excerpt));
	worker_warn(w, "stdout line skipped, not a JSON-RPC message (%s; %zu bytes): \"%s\"%s", what, len, excerpt,
		    len > WORKER_EXCERPT_BYTES ? "..." : "");
	if (!skipped_over_bound(w, cordon_loop_now_ms()))
		return;
	snprintf(why, sizeof(why), "stopped: more than %u stdout lines that are not JSON-RPC messages within %u s",
		 WORKER_SKIPPED_MAX, WORKER_SKIPPED_WINDOW_MS / 1000);
	w->d->m.worker_protocol_kills++;
	worker_died(w, why, true);
}

/* What cordon_canon_decode() refused, by its error (canon.c). */
static const char *decode_error_name(int r)
{
	switch (-r) {
	case EBADMSG:
		return "not JSON";
	case ENOTUNIQ:
		return "duplicate member name";
	case ERANGE:
		return "number out of range";
	case EILSEQ:
		return "invalid character";
	case ELOOP:
		return "nesting too deep";
	case EMSGSIZE:
		return "too large";
	default:
		return "not admissible JSON";
	}
}

static void handle_line(struct dworker *w, const char *line, size_t len)
{
	struct cordon_canon_limits lim = { .max_bytes = w->d->cfg.line_max };
	struct cordon_diag diag = {};
	json_t *msg = NULL;
	int r;

	while (len && line[len - 1] == '\r')
		len--;
	if (len == 0)
		return;
	r = cordon_canon_decode(line, len, &lim, &msg, &diag);
	if (r == -ENOMEM) {
		/* Not the connector's fault, but the line (perhaps an answer) is
		 * lost: its calls fail now rather than wait. */
		worker_died(w, "out of memory", false);
		return;
	}
	if (r < 0) {
		/* Named by its class and column only: the diag's text may quote
		 * bytes of the line, which the excerpt shows scrubbed. */
		char what[96];

		snprintf(what, sizeof(what), "%s at column %u", decode_error_name(r), diag.column);
		skip_line(w, line, len, what);
		return;
	}
	/* A JSON-RPC message is an object with a string "method" (a request
	 * or notification) or with an "id" (a response). Anything else (an
	 * array, a batch, a bare value, another object) is not one. */
	if (!json_is_object(msg) || !(json_is_string(json_object_get(msg, "method")) ||
				      (!json_object_get(msg, "method") && json_object_get(msg, "id")))) {
		json_decref(msg);
		skip_line(w, line, len, "JSON, but not a JSON-RPC message object");
		return;
	}
	if (json_is_string(json_object_get(msg, "method"))) {
		if (json_object_get(msg, "id"))
			handle_server_request(w, msg);
		else
			handle_notification(w, msg);
	} else
		handle_response(w, msg, len);
	json_decref(msg);
}

static void on_stdout(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata)
{
	struct dworker *w = userdata;
	char buf[65536];

	(void)loop;
	(void)revents;
	w->refs++;
	for (int rounds = 0; rounds < 16 && w->state != DW_DEAD; rounds++) {
		ssize_t n = read(fd, buf, sizeof(buf));
		size_t off = 0;

		if (n < 0 && (errno == EINTR))
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			worker_died(w, "exited", true);
			break;
		}
		while (off < (size_t)n && w->state != DW_DEAD) {
			char *nl = memchr(buf + off, '\n', (size_t)n - off);
			size_t chunk = nl ? (size_t)(nl - (buf + off)) : (size_t)n - off;

			if (dbuf_append(&w->rbuf, buf + off, chunk, w->d->cfg.line_max) < 0) {
				w->d->m.worker_protocol_kills++;
				worker_log(w, LOG_LEVEL_WARNING, "stdout line exceeds %llu bytes; killing the instance",
					   (unsigned long long)w->d->cfg.line_max);
				worker_died(w, "oversize line on stdout", false);
				break;
			}
			off += chunk;
			if (nl) {
				off++;
				handle_line(w, w->rbuf.p, w->rbuf.len);
				if (w->state != DW_DEAD)
					dbuf_consume(&w->rbuf, w->rbuf.len);
			}
		}
		/* A short read drained the pipe (level-triggered watch: later
		 * bytes wake the loop again); no read just to see EAGAIN. */
		if ((size_t)n < sizeof(buf))
			break;
	}
	if (--w->refs == 0 && w->state == DW_DEAD)
		free(w);
}

static void unlink_worker(struct dworker *w)
{
	struct cordon_daemon *d = w->d;

	for (struct dworker **p = &d->workers; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	if (w->conn->shared == w)
		w->conn->shared = NULL;
}

static void worker_free_resources(struct dworker *w)
{
	if (w->w_in)
		cordon_loop_unwatch(w->w_in);
	if (w->w_out)
		cordon_loop_unwatch(w->w_out);
	if (w->w_err)
		cordon_loop_unwatch(w->w_err);
	w->w_in = w->w_out = w->w_err = NULL;
	if (w->in_fd >= 0)
		close(w->in_fd);
	if (w->out_fd >= 0)
		close(w->out_fd);
	if (w->err_fd >= 0)
		close(w->err_fd);
	w->in_fd = w->out_fd = w->err_fd = -EBADF;
	dbuf_free(&w->rbuf);
	dbuf_free(&w->wbuf);
	dbuf_free(&w->ebuf);
	json_decref(w->tools);
	json_decref(w->fingerprints);
	json_decref(w->list_accum);
	json_decref(w->report);
	json_decref(w->server_caps);
	json_decref(w->delegated);
	w->delegated = NULL;
	for (size_t i = 0; i < w->n_secrets; i++) {
		explicit_bzero(w->secrets[i], strlen(w->secrets[i]));
		free(w->secrets[i]);
	}
	free(w->secrets);
	w->secrets = NULL;
	w->n_secrets = 0;
	free(w->instructions);
	w->tools = w->fingerprints = w->list_accum = w->report = w->server_caps = NULL;
	w->instructions = NULL;
}

/* The instance is gone (or must go). In-flight calls fail and their actions
 * become outcome_unknown; queued calls fail; the connector's crash counter
 * drives the restart backoff and the `failing` health state. */
static void worker_died(struct dworker *w, const char *why, bool crashed)
{
	struct cordon_daemon *d = w->d;
	struct dconn *c = w->conn;
	uint64_t now = cordon_loop_now_ms();

	if (w->state == DW_DEAD)
		return;
	worker_warn_flush(w);
	w->state = DW_DEAD;
	if (d->have_spawner) {
		d->spawner.kill(d->spawner.userdata, w->instance);
		if (d->spawner.reap && d->spawner.reap(d->spawner.userdata, w->instance) >= 0)
			w->exit_reported = true;
	}
	denials_worker_ended(w, w->exit_reported, why, crashed);
	unlink_worker(w);
	/* Per-session: the instance no longer belongs to its session. */
	w->session = NULL;
	if (crashed) {
		if (now - c->last_crash_ms > 60000)
			c->crashes = 0;
		c->crashes++;
		c->last_crash_ms = now;
		c->next_start_ms = now + (c->crashes >= 7 ? 30000 : 250u << c->crashes);
		if (c->crashes >= 3)
			c->failing = true;
		d->m.instance_crashes++;
		snprintf(c->last_error, sizeof(c->last_error), "instance %s %s", w->tag, why);
		/* The reason itself is in the cordon.instance.exited event
		 * (worker-denials.c): one line per stop names it. */
		worker_log(w, LOG_LEVEL_WARNING, "crash %u of this connector in a row; next start in %llu ms",
			   c->crashes, (unsigned long long)(c->next_start_ms - now));
	}
	while (w->reqs) {
		struct dwreq *q = w->reqs;

		w->reqs = q->next;
		if (q->kind == DWREQ_CALL && q->call) {
			q->call->w = NULL;
			q->call->ops->lost(q->call, why);
		}
		free(q);
	}
	while (w->waiting) {
		struct dcall *call = w->waiting;

		w->waiting = call->next_waiting;
		call->next_waiting = NULL;
		call->w = NULL;
		call->ops->failed(call, why);
	}
	/* The gateway forgets it: calls held for an approval that still name
	 * it, relayed client requests that would answer it. */
	if (events(w))
		events(w)->gone(w);
	worker_free_resources(w);
	if (w->refs == 0)
		free(w);
}

void worker_kill(struct dworker *w, const char *why)
{
	worker_died(w, why, false);
}

int worker_launch(struct cordon_daemon *d, struct dconn *c, struct dsession *s, const char *version, bool for_install,
		  struct dworker **ret, struct cordon_diag *diag)
{
	struct cordon_worker_io io = { .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1 };
	struct dworker *w;
	uint64_t t0 = cordon_loop_now_ms();
	static uint64_t counter;
	int r;

	if (!d->have_spawner || (d->spawner.alive && !d->spawner.alive(d->spawner.userdata)))
		return cordon_diag_set(diag, EHOSTDOWN, "launcher", "the launcher helper is not running");
	w = calloc(1, sizeof(*w));
	if (!w)
		return cordon_diag_set(diag, ENOMEM, "worker", "out of memory");
	snprintf(w->tag, sizeof(w->tag), "%s-%llu", c->id, (unsigned long long)++counter);
	/* Active delegations of this session become extra roots (a shared
	 * instance serves every session, so it gets none: one session's
	 * delegation must not widen what another session's calls reach). */
	_cleanup_free_ struct cordon_serve_root *roots = NULL;
	size_t n_roots = 0;

	if (s && daemon_conn_installed(d, c->id)) {
		struct cordon_delegation_info *dv = NULL;
		size_t n = 0;
		uint64_t now = cordon_db_now(d->db);

		if (cordon_delegations_active(d->db, c->id, &dv, &n) >= 0 && n) {
			roots = calloc(n < CORDON_SERVE_MAX_ROOTS ? n : CORDON_SERVE_MAX_ROOTS, sizeof(*roots));
			for (size_t i = 0; roots && i < n && n_roots < CORDON_SERVE_MAX_ROOTS; i++) {
				if (strcmp(dv[i].session, s->id) != 0 || (dv[i].expires_at && dv[i].expires_at <= now))
					continue;
				snprintf(roots[n_roots].host, sizeof(roots[n_roots].host), "%s", dv[i].path);
				snprintf(roots[n_roots].sandbox, sizeof(roots[n_roots].sandbox), "%s", dv[i].path);
				roots[n_roots].access = dv[i].access;
				n_roots++;
			}
		}
		cordon_delegations_free(dv);
	}
	r = d->spawner.spawn(d->spawner.userdata, c->profile, w->tag, roots, n_roots, &io, diag);
	if (r < 0) {
		free(w);
		return r;
	}
	w->n_roots = n_roots;
	w->delegated = json_array();
	for (size_t i = 0; i < n_roots; i++)
		json_array_append_new(w->delegated, json_string(roots[i].sandbox));
	daemon_spawn_observed(d, cordon_loop_now_ms() - t0);
	w->d = d;
	w->conn = c;
	w->session = s;
	w->instance = io.instance;
	w->pid = io.pid;
	w->in_fd = io.stdin_fd;
	w->out_fd = io.stdout_fd;
	w->err_fd = io.stderr_fd;
	w->report = io.report;
	w->secrets = io.secrets;
	w->n_secrets = io.n_secrets;
	w->next_id = 1;
	w->for_install = for_install;
	w->started_ms = cordon_loop_now_ms();
	{
		char pid[24];

		snprintf(pid, sizeof(pid), "%d", (int)w->pid);
		dlog_event(DLOG_INSTANCE_STARTED, "connector", c->id, "instance", w->tag, "pid",
			   w->pid > 0 ? pid : NULL, "session", s ? s->id : NULL, "purpose",
			   for_install ? "inventory"
			   : s	       ? "per-session"
				       : "shared");
	}
	(void)fd_set_nonblock(w->in_fd, 1);
	(void)fd_set_nonblock(w->out_fd, 1);
	if (w->err_fd >= 0)
		(void)fd_set_nonblock(w->err_fd, 1);
	w->next = d->workers;
	d->workers = w;
	if ((r = cordon_loop_watch(d->loop, w->out_fd, EPOLLIN, on_stdout, w, &w->w_out)) < 0 ||
	    (r = cordon_loop_watch(d->loop, w->in_fd, 0, worker_on_stdin, w, &w->w_in)) < 0 ||
	    (w->err_fd >= 0 &&
	     (r = cordon_loop_watch(d->loop, w->err_fd, EPOLLIN, worker_on_stderr, w, &w->w_err)) < 0)) {
		worker_died(w, "cannot watch its fds", false);
		return cordon_diag_set(diag, -r, "worker", "cannot watch the instance's fds");
	}
	/* A shared instance, or any restart, is a new launch generation:
	 * approvals bound to the previous instance are revoked. A fresh
	 * per-session instance keeps the generation (the session id in the
	 * binding already separates it). */
	if (daemon_conn_installed(d, c->id)) {
		struct cordon_actor sys = cordon_actor_system();

		if (!s || c->restarts || c->crashes)
			r = cordon_connector_relaunch(d->db, &sys, c->id, &w->generation);
		else
			r = cordon_connector_generation(d->db, c->id, &w->generation);
		if (r < 0) {
			worker_died(w, "cannot record the launch", false);
			return cordon_diag_set(diag, -r, "worker", "cannot record the launch generation: %s",
					       cordon_db_last_error(d->db));
		}
	}
	if (!s && !for_install)
		c->shared = w;
	struct dwreq *q = worker_req_new(w, DWREQ_INITIALIZE);
	json_t *caps = json_pack("{s:{s:b}}", "roots", "listChanged", 0);

	/* Offer what the profile lets through to the client. */
	if (c->profile->client_requests & CORDON_CLIENT_SAMPLING)
		json_object_set_new(caps, "sampling", json_object());
	if (c->profile->client_requests & CORDON_CLIENT_ELICITATION)
		json_object_set_new(caps, "elicitation", json_object());

	if (!q || !caps) {
		json_decref(caps);
		worker_died(w, "out of memory", false);
		return cordon_diag_set(diag, ENOMEM, "worker", "out of memory");
	}
	/* The session's negotiated version (always one the gateway
	 * supports), and its _meta only to an instance that serves it alone:
	 * a shared instance serves every session, so no one client's _meta. */
	r = worker_send_request(w, q, "initialize",
				json_pack("{s:s, s:o, s:{s:s, s:s}, s:O*}", "protocolVersion",
					  version ? version : WORKER_PROTOCOL_DEFAULT, "capabilities", caps,
					  "clientInfo", "name", "cordond", "version", "0.1", "_meta",
					  s ? s->client_meta : NULL));
	if (r < 0) {
		worker_died(w, "cannot send initialize", true);
		return cordon_diag_set(diag, -r, "worker", "cannot send initialize");
	}
	*ret = w;
	return 0;
}

struct dworker *worker_get(struct cordon_daemon *d, struct dconn *c, struct dsession *s, bool start,
			   struct cordon_diag *diag)
{
	struct dworker *w = NULL;
	uint64_t now = cordon_loop_now_ms();

	if (c->profile->instances == CORDON_INSTANCES_SHARED)
		w = c->shared;
	else
		for (struct dworker *x = d->workers; x; x = x->next)
			if (x->conn == c && x->session == s && !x->for_install && x->state != DW_DEAD) {
				w = x;
				break;
			}
	if (w || !start)
		return w;
	if (now < c->next_start_ms) {
		cordon_diag_set(diag, EAGAIN, "worker", "connector %s is restarting after a crash; retry in %llu ms",
				c->id, (unsigned long long)(c->next_start_ms - now));
		return NULL;
	}
	if (c->crashes)
		c->restarts++, d->m.instance_restarts++;
	if (worker_launch(d, c, c->profile->instances == CORDON_INSTANCES_SHARED ? NULL : s,
			  s && s->version[0] ? s->version : NULL, false, &w, diag) < 0)
		return NULL;
	return w;
}

void worker_enqueue(struct dworker *w, struct dcall *c)
{
	struct dcall **p = &w->waiting;

	while (*p)
		p = &(*p)->next_waiting;
	c->next_waiting = NULL;
	*p = c;
	c->w = w;
}

void worker_dequeue(struct dworker *w, struct dcall *c)
{
	for (struct dcall **p = &w->waiting; *p; p = &(*p)->next_waiting)
		if (*p == c) {
			*p = c->next_waiting;
			c->next_waiting = NULL;
			break;
		}
	for (struct dwreq *q = w->reqs; q; q = q->next)
		if (q->call == c)
			q->call = NULL;
	c->w = NULL;
}

/* Forwards the CANONICAL argument bytes: the message is assembled around
 * the exact JCS bytes the approval binding covered, never re-serialised
 * from the client's text. */
int worker_send_call(struct dworker *w, struct dcall *c)
{
	_cleanup_free_ char *name = NULL, *line = NULL, *tok = NULL, *task = NULL;
	struct dwreq *q;
	int n;

	if (c->kind == DCK_PASS) {
		q = worker_req_new(w, DWREQ_CALL);
		if (!q)
			return -ENOMEM;
		q->call = c;
		c->worker_req_id = q->id;
		c->w = w;
		return worker_send_request(w, q, c->pass_method, json_incref(c->pass_params));
	}
	{
		json_t *js = json_string(c->tool);

		name = json_dumps(js, JSON_ENCODE_ANY | JSON_COMPACT);
		json_decref(js);
	}
	if (!name)
		return -ENOMEM;
	q = worker_req_new(w, DWREQ_CALL);
	if (!q)
		return -ENOMEM;
	q->call = c;
	c->worker_req_id = q->id;
	c->w = w;
	/* A call passed to the connector as a task (gateway-task.c) carries
	 * the client's params.task, which cordon rebuilt as {"ttl": N} or {}. */
	if (c->task_upstream && c->task_params)
		task = json_dumps(c->task_params, JSON_COMPACT);
	n = asprintf(&line,
		     "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"tools/"
		     "call\",\"params\":{\"name\":%s,\"arguments\":%.*s%s%s%s}}",
		     (long long)q->id, name, (int)c->args_len, c->args_jcs,
		     c->progress_token
			     ? (asprintf(&tok, ",\"_meta\":{\"progressToken\":%lld}", (long long)q->id) < 0 ? "" : tok)
			     : "",
		     task ? ",\"task\":" : "", task ? task : "");
	if (n < 0) {
		line = NULL;
		free(worker_req_take(w, q->id));
		return -ENOMEM;
	}
	return worker_send_line(w, line, (size_t)n);
}

void worker_cancel_request(struct dworker *w, int64_t id, const char *reason)
{
	struct dwreq *q = worker_req_take(w, id);

	free(q);
	worker_send_json(w, json_pack("{s:s, s:s, s:{s:I, s:s}}", "jsonrpc", "2.0", "method", "notifications/cancelled",
				      "params", "requestId", (json_int_t)id, "reason", reason));
}

void workers_kill_all(struct cordon_daemon *d)
{
	while (d->workers)
		worker_died(d->workers, "broker shutting down", false);
	denials_forget_all(d); /* no exit is waited for any more */
}

void worker_instance_exited(struct cordon_daemon *d, uint32_t instance, int status, const json_t *report)
{
	/* The final enforcement report carries the cgroup's statistics. */
	json_int_t oom = json_integer_value(json_object_get(json_object_get(report, "cgroup_stats"), "oom_kills"));

	if (oom > 0)
		d->m.oom_kills += (uint64_t)oom;
	for (struct dworker *w = d->workers; w; w = w->next)
		if (w->instance == instance) {
			w->exit_reported = true;
			w->wait_status = status;
			w->have_wait_status = true;
			worker_died(w, "exited", true);
			return;
		}
	denials_instance_exited(d, instance, status);
}

/* An instance that does not finish initialize + tools/list in time is
 * treated as crashed: the calls queued on it fail instead of waiting
 * forever. */
#define WORKER_START_TIMEOUT_MS 30000

void workers_tick(struct cordon_daemon *d, uint64_t now)
{
	for (struct dworker *w = d->workers, *next; w; w = next) {
		next = w->next;
		if (w->state != DW_READY && w->state != DW_DEAD && now - w->started_ms > WORKER_START_TIMEOUT_MS) {
			worker_died(w, "did not complete initialize and tools/list within 30 s", true);
			continue;
		}
		if (w->state == DW_READY && w->listing && now - w->listing_started_ms > WORKER_LIST_TIMEOUT_MS) {
			worker_died(w, "stopped: a tools/list re-listing did not complete within 30 s", true);
			continue;
		}
		worker_warn_tick(w, now);
		for (size_t i = 0; i < ELEMENTSOF(notify_limits); i++) {
			struct dnotify_limit *l = notify_limit(w, i);

			if (l->dropped && now - l->window_ms >= WORKER_LOGMSG_WINDOW_MS) {
				notify_flush(w, i);
				l->window_ms = 0;
			}
		}
		relist_maybe(w, now); /* may free w */
	}
	for (size_t i = 0; i < d->n_conns; i++)
		if (d->conns[i].notify_pending)
			notify_list_changed(d, &d->conns[i], now);
}

void workers_delegations_changed(struct cordon_daemon *d, const char *connector)
{
	/* Landlock cannot widen a running process, and a removed root must
	 * leave the sandbox: affected instances end and the next call starts
	 * them again with the current roots. Shared instances never carry
	 * delegations. With a connector: every per-session instance of it (one
	 * of them may gain a root); without: those started with a root. */
	for (struct dworker *w = d->workers; w;) {
		if (!w->session || (connector ? strcmp(w->conn->id, connector) != 0 : w->n_roots == 0)) {
			w = w->next;
			continue;
		}
		worker_kill(w, "delegations changed; relaunching");
		/* The kill fails that instance's calls, and their callbacks may
		 * end other instances too, so a `next` saved before it can dangle:
		 * rescan from the head (the dead one is already unlinked). */
		w = d->workers;
	}
}
