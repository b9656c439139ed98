/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Tasks (MCP 2025-11-25, issue 13).
 *
 * A client that announced `tasks` in initialize may send a tools/call with
 * params.task. That call is authorized exactly like any other (surface,
 * decision, approval, audit, action ledger: gateway-call.c); then:
 *
 *  - It needs an operator's approval: the client gets a CreateTaskResult at
 *    once (status `working`, statusMessage naming the approval code) and
 *    the call is held in memory (the held-argument budgets apply) until the
 *    approval is decided or expires, however long that takes: no client
 *    request stays open, so no client timeout ends it. Approved: the call
 *    runs; denied or expired: the task is `failed` and tasks/result gives
 *    the isError result a plain call would have got. Not input_required:
 *    that status asks the requestor itself for input through tasks/result
 *    (the SDK then blocks in tasks/result, into its request timeout); here
 *    the input is the operator's.
 *  - Its tool supports tasks at the connector (the connector announced
 *    tasks.requests.tools.call and the tool execution.taskSupport optional
 *    or required): params.task goes to the connector, whose CreateTaskResult
 *    becomes a cordon task bound to (instance, upstream taskId); tasks/get,
 *    tasks/result and tasks/cancel go to that instance and their answers
 *    come back with the cordon id. The action ledger records the call as
 *    done when the connector accepted the task.
 *  - Otherwise cordon runs the call as its own task: CreateTaskResult now,
 *    the connector gets a plain tools/call, its answer is the task's result.
 *
 * Task ids are cordon's ("ct-" and 96 random bits), kept per session: one
 * session can neither see nor address another's tasks, also on a shared
 * instance (tasks/list answers from the session's own table, never from a
 * connector's list). notifications/tasks/status from an instance goes to
 * the session that owns the task, id rewritten. At most SESSION_TASKS_MAX
 * tasks per session; finished ones are forgotten after their ttl. Closing
 * the session ends its tasks (held approvals are revoked as before);
 * tasks/cancel of a held task withdraws its approval (audited as a client
 * cancellation).
 *
 * A client that did not announce `tasks` gets plain calls (params.task
 * ignored) with the progress-and-retry wait, and does not see tools whose
 * connector requires tasks; a tool that requires them called without a
 * task is refused (-32601) before any decision or approval. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "approvals.h"
#include "cleanup.h"
#include "gateway-call.h"
#include "gateway-session.h"
#include "gateway-task.h"
#include "hex-util.h"
#include "log.h"
#include "rpc-error.h"
#include "worker.h"

#define RELATED_TASK_KEY "io.modelcontextprotocol/related-task"
#define IMMEDIATE_KEY	 "io.modelcontextprotocol/model-immediate-response"
#define TASK_MESSAGE_MAX 1024

struct dtask {
	struct dsession *s;
	char id[32];
	struct dcall *call; /* cordon's own: the call (NULL once it answered) */
	struct dworker *w;  /* passed through: the instance (NULL: not, or gone) */
	char connector[CORDON_CONNECTOR_ID_MAX + 1];
	char *up_id;			 /* the connector's taskId */
	json_t *view;			 /* the Task object the client sees (cordon's id) */
	json_t *final;			 /* own task, terminal: {"result": R} or {"error": E} */
	json_t *waiting;		 /* ids of tasks/result requests waiting for the end */
	uint64_t created_us, expires_ms; /* expires_ms 0: never (ttl null) */
	int64_t ttl_ms;			 /* -1: null */
	struct dtask *next;
};

static const char *const statuses[] = { "working", "input_required", "completed", "failed", "cancelled" };

static bool status_valid(const char *st)
{
	for (size_t i = 0; st && i < ELEMENTSOF(statuses); i++)
		if (!strcmp(st, statuses[i]))
			return true;
	return false;
}

static bool status_terminal(const char *st)
{
	return st && (!strcmp(st, "completed") || !strcmp(st, "failed") || !strcmp(st, "cancelled"));
}

static const char *task_status(const struct dtask *t)
{
	return json_string_value(json_object_get(t->view, "status"));
}

static void iso_time(uint64_t us, char buf[static 32])
{
	time_t sec = (time_t)(us / 1000000);
	struct tm tm;

	if (!gmtime_r(&sec, &tm) || !strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm)) {
		snprintf(buf, 32, "1970-01-01T00:00:00Z");
		return;
	}
	snprintf(buf + 19, 13, ".%03uZ", (unsigned)((us / 1000) % 1000));
}

json_t *task_capability(void)
{
	return json_pack("{s:{}, s:{}, s:{s:{s:{}}}}", "list", "cancel", "requests", "tools", "call");
}

/* The connector's own word on tool def: "required", "optional",
 * "forbidden", or NULL (not said). */
static const char *tool_task_support(const json_t *def)
{
	return json_string_value(json_object_get(json_object_get(def, "execution"), "taskSupport"));
}

bool task_tool_listed(const struct dsession *s, json_t *def)
{
	const char *ts = tool_task_support(def);
	json_t *ex;

	if (!s->client_tasks)
		return !ts || strcmp(ts, "required") != 0;
	if (ts && (!strcmp(ts, "required") || !strcmp(ts, "optional")))
		return true;
	/* cordon can run any call as its own task. */
	ex = json_object_get(def, "execution");
	if (!json_is_object(ex)) {
		ex = json_object();
		json_object_set_new(def, "execution", ex);
	}
	json_object_set_new(ex, "taskSupport", json_string("optional"));
	return true;
}

static unsigned tasks_pending(const struct dsession *s)
{
	unsigned n = 0;

	for (const struct dcall *c = s->calls; c; c = c->next)
		n += c->task_params && !c->task;
	return n;
}

int task_call_admit(struct dsession *s, const json_t *id, const json_t *params, json_t **ret_task)
{
	json_t *task = json_object_get(params, "task"), *ttl;

	*ret_task = NULL;
	if (!task || !s->client_tasks)
		return 0;
	ttl = json_object_get(task, "ttl");
	if (!json_is_object(task) ||
	    (ttl && !json_is_null(ttl) && (!json_is_integer(ttl) || json_integer_value(ttl) < 0))) {
		session_send_error(s, id, -32602,
				   "Invalid params: task must be an object with an optional integer ttl >= 0");
		return -EINVAL;
	}
	if (s->n_tasks + tasks_pending(s) >= SESSION_TASKS_MAX) {
		session_send_error(s, id, -32000,
				   "cordon: too many tasks in this session (at most %u); fetch or cancel some first",
				   SESSION_TASKS_MAX);
		return -EDQUOT;
	}
	*ret_task = json_is_integer(ttl) ? json_pack("{s:I}", "ttl", json_integer_value(ttl)) : json_object();
	return 0;
}

static bool upstream_supports(struct dworker *w, const json_t *def)
{
	const char *ts = tool_task_support(def);
	const json_t *caps = w ? w->server_caps : NULL;

	caps = json_object_get(json_object_get(json_object_get(json_object_get(caps, "tasks"), "requests"), "tools"),
			       "call");
	return caps && ts && (!strcmp(ts, "optional") || !strcmp(ts, "required"));
}

bool task_call_ready(struct dcall *c)
{
	const json_t *def = c->w ? worker_tool(c->w, c->tool) : NULL;
	const char *ts = tool_task_support(def);

	if (ts && !strcmp(ts, "required") && !c->task_params) {
		/* Refused before any decision or approval: the connector would
		 * refuse it after one (MCP: -32601). */
		session_send_error(c->s, c->rpc_id, -32601,
				   "cordon: tool %s of connector %s requires task-augmented execution: call it with "
				   "params.task (announce the `tasks` capability in initialize)",
				   c->tool, c->connector);
		call_free(c);
		return false;
	}
	c->task_upstream = c->task_params && upstream_supports(c->w, def);
	return true;
}

/* ---- the task table ------------------------------------------------------ */

static struct dtask *task_find(struct dsession *s, const char *id)
{
	for (struct dtask *t = s->tasks; t; t = t->next)
		if (id && !strcmp(t->id, id))
			return t;
	return NULL;
}

static void task_free(struct dtask *t)
{
	if (t->call)
		t->call->task = NULL;
	json_decref(t->view);
	json_decref(t->final);
	json_decref(t->waiting);
	free(t->up_id);
	free(t);
}

static void task_unlink(struct dtask *t)
{
	for (struct dtask **p = &t->s->tasks; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			t->s->n_tasks--;
			break;
		}
}

/* ttl for a new own task: what the client asked (or the default), at
 * least until keep_ms from now, at most TASK_TTL_MAX_MS. */
static int64_t own_ttl(const struct dcall *c, uint64_t keep_ms)
{
	json_t *ttl = json_object_get(c->task_params, "ttl");
	uint64_t v = json_is_integer(ttl) ? (uint64_t)json_integer_value(ttl) : TASK_TTL_DEFAULT_MS;

	if (v < keep_ms)
		v = keep_ms;
	return (int64_t)(v > TASK_TTL_MAX_MS ? TASK_TTL_MAX_MS : v);
}

static struct dtask *task_new(struct dsession *s, const char *connector)
{
	struct dtask *t = calloc(1, sizeof(*t));
	uint8_t rnd[12];

	if (!t)
		return NULL;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		free(t);
		return NULL;
	}
	memcpy(t->id, "ct-", 3);
	hex_encode(rnd, sizeof(rnd), t->id + 3);
	t->s = s;
	snprintf(t->connector, sizeof(t->connector), "%s", connector);
	t->created_us = cordon_db_now(s->d->db);
	t->waiting = json_array();
	t->next = s->tasks;
	s->tasks = t;
	s->n_tasks++;
	return t;
}

static void task_set_ttl(struct dtask *t, int64_t ttl_ms)
{
	t->ttl_ms = ttl_ms;
	t->expires_ms = ttl_ms < 0 ? 0 : cordon_loop_now_ms() + (uint64_t)ttl_ms;
}

/* The view of an own task, from its status and message. */
static void own_view(struct dtask *t, const char *status, const char *message)
{
	char created[32], updated[32];
	json_t *v;

	iso_time(t->created_us, created);
	iso_time(cordon_db_now(t->s->d->db), updated);
	v = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I}", "taskId", t->id, "status", status, "createdAt", created,
		      "lastUpdatedAt", updated, "ttl", (json_int_t)t->ttl_ms, "pollInterval", (json_int_t)TASK_POLL_MS);
	if (!v)
		return;
	if (message && message[0])
		json_object_set_new(v, "statusMessage", json_stringn(message, strnlen(message, TASK_MESSAGE_MAX)));
	json_decref(t->view);
	t->view = v;
}

static void notify_status(struct dtask *t)
{
	if (t->s && t->view)
		session_send_json(t->s, json_pack("{s:s, s:s, s:O}", "jsonrpc", "2.0", "method",
						  "notifications/tasks/status", "params", t->view));
}

/* A copy of result R with the related-task _meta naming t. */
static json_t *with_related(const json_t *r, const char *task_id)
{
	json_t *o = json_deep_copy(r), *meta;

	if (!json_is_object(o))
		return o;
	meta = json_object_get(o, "_meta");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(o, "_meta", meta);
	}
	json_object_set_new(meta, RELATED_TASK_KEY, json_pack("{s:s}", "taskId", task_id));
	return o;
}

/* An own task's final answer to tasks/result request id. */
static void send_final(struct dtask *t, const json_t *id)
{
	json_t *r = json_object_get(t->final, "result"), *e = json_object_get(t->final, "error");

	if (r)
		session_send_result(t->s, id, with_related(r, t->id));
	else if (e)
		session_send_json(t->s, json_pack("{s:s, s:O, s:O}", "jsonrpc", "2.0", "id", id, "error", e));
	else
		session_send_error(t->s, id, -32603, "cordon: task %s ended without a result", t->id);
}

static void create_answer(struct dsession *s, const json_t *id, struct dtask *t, const char *immediate)
{
	json_t *r = json_pack("{s:O}", "task", t->view);

	if (r && immediate)
		json_object_set_new(r, "_meta", json_pack("{s:s}", IMMEDIATE_KEY, immediate));
	session_send_result(s, id, r);
}

void task_call_held(struct dcall *c, const struct cordon_approval_info *info)
{
	struct cordon_daemon *d = c->d;
	uint64_t now_us = cordon_db_now(d->db);
	uint64_t left_ms = info->expires_at > now_us ? (info->expires_at - now_us) / 1000 : 0;
	char msg[400];
	struct dtask *t;

	if (!c->task_params || !c->s)
		return;
	if (!c->task) {
		t = task_new(c->s, c->connector);
		if (!t)
			return; /* out of memory: the plain wait goes on */
		t->call = c;
		c->task = t;
		task_set_ttl(t, own_ttl(c, left_ms + TASK_KEEP_MS));
	} else
		t = c->task;
	snprintf(msg, sizeof(msg),
		 "waiting for an operator's approval, code %s (tier %s): ask the operator to run `cordonctl approvals "
		 "approve %s`; the result comes through tasks/result once approved",
		 c->display_code, cordon_risk_name(c->dec.decision.tier), c->display_code);
	own_view(t, "working", msg);
	create_answer(c->s, c->rpc_id, t, msg);
	/* Held until the approval is decided or expires, not
	 * cfg.approval_wait: nobody waits on a socket. The deadline is only a
	 * backstop: the daemon's sweep (every 5 s) marks the approval expired
	 * and call_tick then fails the call "expired". */
	c->deadline_ms = cordon_loop_now_ms() + left_ms + 6000;
	log_info("session %s: %s__%s held as task %s for approval %s", c->s->id, c->connector, c->tool, t->id,
		 c->display_code);
}

void task_call_own(struct dcall *c, const char *message)
{
	struct dtask *t;

	if (!c->task_params || c->task || !c->s)
		return;
	t = task_new(c->s, c->connector);
	if (!t)
		return; /* out of memory: answered as a plain call */
	t->call = c;
	c->task = t;
	task_set_ttl(t, own_ttl(c, TASK_KEEP_MS));
	own_view(t, "working", message);
	create_answer(c->s, c->rpc_id, t, NULL);
}

void task_call_dispatching(struct dcall *c)
{
	struct dtask *t = c->task;

	if (!c->task_params || !c->s)
		return;
	if (c->task_upstream) {
		/* The connector makes the task (task_upstream_created). */
		c->task_w = c->w;
		if (t) {
			own_view(t, "working", "approved by an operator; passed to the connector");
			notify_status(t);
		}
		return;
	}
	if (!t) {
		task_call_own(c, "running");
		return;
	}
	own_view(t, "working", c->approval_id[0] ? "approved by an operator; running" : "running");
	notify_status(t);
}

/* statusMessage for a finished call: the error's message, or the text of
 * an isError result's first content item. */
static void final_message(const json_t *answer, bool failed, char *buf, size_t size)
{
	const json_t *e = json_object_get(answer, "error");
	const char *m =
		e ? json_string_value(json_object_get(e, "message"))
		  : json_string_value(json_object_get(
			    json_array_get(json_object_get(json_object_get(answer, "result"), "content"), 0), "text"));

	snprintf(buf, size, "%s", failed && m ? m : failed ? "failed" : "completed");
}

static void task_finish(struct dtask *t, json_t *answer, const char *status, const char *message)
{
	size_t i;
	json_t *id;

	json_decref(t->final);
	t->final = answer;
	own_view(t, status, message);
	notify_status(t);
	json_array_foreach(t->waiting, i, id) send_final(t, id);
	json_array_clear(t->waiting);
}

void task_call_finish(struct dcall *c, json_t *answer)
{
	struct dtask *t = c->task;
	const json_t *r = json_object_get(answer, "result");
	bool failed = !r || json_is_true(json_object_get(r, "isError"));
	char msg[TASK_MESSAGE_MAX];

	if (!t) {
		json_decref(answer);
		return;
	}
	c->task = NULL;
	t->call = NULL;
	final_message(answer, failed, msg, sizeof(msg));
	task_finish(t, answer, failed ? "failed" : "completed", msg);
}

void task_call_released(struct dcall *c)
{
	struct dtask *t = c->task;

	if (!t)
		return;
	c->task = NULL;
	t->call = NULL;
	/* Freed without an answer (cancelled, or its session went). */
	if (!status_terminal(task_status(t)))
		task_finish(t,
			    json_pack("{s:{s:i, s:s}}", "error", "code", -32603, "message", "cordon: the call ended"),
			    "failed", "the call ended without a result");
}

/* ---- passed through to a connector -------------------------------------- */

/* The client's view of a connector's Task object up (new reference, or
 * NULL when it is malformed): its known members, type-checked, the id
 * cordon's. */
static json_t *upstream_view(const json_t *up, const char *id)
{
	const char *st = json_string_value(json_object_get(up, "status"));
	json_t *v, *x;

	if (!json_is_object(up) || !status_valid(st) || !json_is_string(json_object_get(up, "taskId")))
		return NULL;
	v = json_pack("{s:s, s:s}", "taskId", id, "status", st);
	if (!v)
		return NULL;
	x = json_object_get(up, "statusMessage");
	if (json_is_string(x))
		json_object_set_new(
			v, "statusMessage",
			json_stringn(json_string_value(x), strnlen(json_string_value(x), TASK_MESSAGE_MAX)));
	for (const char *const *k = (const char *const[]){ "createdAt", "lastUpdatedAt", NULL }; *k; k++) {
		x = json_object_get(up, *k);
		json_object_set_new(v, *k,
				    json_is_string(x) && strlen(json_string_value(x)) < 64
					    ? json_copy(x)
					    : json_string("1970-01-01T00:00:00Z"));
	}
	x = json_object_get(up, "ttl");
	json_object_set_new(v, "ttl", json_is_integer(x) && json_integer_value(x) >= 0 ? json_copy(x) : json_null());
	x = json_object_get(up, "pollInterval");
	if (json_is_integer(x) && json_integer_value(x) > 0)
		json_object_set(v, "pollInterval", x);
	return v;
}

static void upstream_update(struct dtask *t, const json_t *up)
{
	json_t *v = upstream_view(up, t->id);

	if (!v)
		return;
	/* A terminal status stays (MCP: it never changes again). */
	if (status_terminal(task_status(t))) {
		json_decref(v);
		return;
	}
	json_decref(t->view);
	t->view = v;
}

static void fwd_release(struct dcall *c)
{
	json_decref(c->pass_params);
	free(c->pass_method);
	c->pass_params = NULL;
	c->pass_method = NULL;
}

static void fwd_failed(struct dcall *c, const char *why)
{
	if (c->s)
		session_send_error(c->s, c->rpc_id, -32603, "cordon: connector %s %s; task %s is not reachable",
				   c->connector, why ? why : "failed", c->tool);
	call_free(c);
}

static void fwd_ready(struct dcall *c)
{
	fwd_failed(c, "was not ready");
}

/* The instance answered a forwarded tasks/get, tasks/result or
 * tasks/cancel (c->tool holds the cordon task id). */
static void fwd_answered(struct dcall *c, json_t *msg, size_t line_len)
{
	struct dsession *s = c->s;
	json_t *res = json_object_get(msg, "result");
	struct dtask *t = s ? task_find(s, c->tool) : NULL;

	(void)line_len;
	if (!s) {
		call_free(c);
		return;
	}
	if (!json_is_object(res)) {
		(void)session_send_connector_error(s, c->rpc_id, c->connector, msg);
		call_free(c);
		return;
	}
	if (!strcmp(c->pass_method, "tasks/result")) {
		json_t *out = with_related(res, c->tool);
		size_t n = json_dumpb(out, NULL, 0, JSON_COMPACT);

		cordon_rpc_strip_markers(json_object_get(out, "_meta"));
		if (n > s->d->cfg.result_cap) {
			json_decref(out);
			session_send_error(s, c->rpc_id, -32603,
					   "cordon: the connector's task result (%zu bytes) exceeds the %llu-byte cap",
					   n, (unsigned long long)s->d->cfg.result_cap);
		} else
			session_send_result(s, c->rpc_id, out);
	} else {
		json_t *v = upstream_view(res, c->tool);

		if (!v)
			session_send_error(s, c->rpc_id, -32603,
					   "cordon: connector %s answered %s with a malformed task", c->connector,
					   c->pass_method);
		else {
			if (t)
				upstream_update(t, res);
			session_send_result(s, c->rpc_id, t ? json_deep_copy(t->view) : v);
			if (t)
				json_decref(v);
		}
	}
	call_free(c);
}

static const struct dcall_ops fwd_ops = {
	.ready = fwd_ready,
	.failed = fwd_failed,
	.lost = fwd_failed,
	.result = fwd_answered,
	.release = fwd_release,
};

/* Sends method {taskId: upstream id} to t's instance for request id. */
static void task_forward(struct dsession *s, struct dtask *t, const char *method, const json_t *id)
{
	struct dcall *c;

	if (!t->w || t->w->state != DW_READY) {
		session_send_error(s, id, -32603, "cordon: the instance of connector %s that ran task %s is gone",
				   t->connector, t->id);
		return;
	}
	if (session_calls(s) >= SESSION_CALLS_MAX) {
		session_send_error(s, id, -32000, "cordon: too many calls in flight on this session (at most %u)",
				   SESSION_CALLS_MAX);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		session_send_error(s, id, -32603, "Internal error: out of memory");
		return;
	}
	c->s = s;
	c->d = s->d;
	c->kind = DCK_PASS;
	c->ops = &fwd_ops;
	c->rpc_id = json_deep_copy(id);
	snprintf(c->connector, sizeof(c->connector), "%s", t->connector);
	snprintf(c->tool, sizeof(c->tool), "%s", t->id);
	c->pass_method = strdup(method);
	c->pass_params = json_pack("{s:s}", "taskId", t->up_id);
	c->next = s->calls;
	s->calls = c;
	if (!c->rpc_id || !c->pass_method || !c->pass_params) {
		session_send_error(s, id, -32603, "Internal error: out of memory");
		call_free(c);
		return;
	}
	if (worker_send_call(t->w, c) < 0) {
		session_send_error(s, id, -32603, "cordon: the request could not be sent to connector %s",
				   t->connector);
		call_free(c);
		return;
	}
	c->state = DC_IN_FLIGHT;
}

bool task_upstream_created(struct dcall *c, const json_t *result)
{
	const json_t *up = json_object_get(result, "task");
	const char *up_id = json_string_value(json_object_get(up, "taskId"));
	struct dtask *t = c->task;
	json_t *v;
	size_t i;
	json_t *id;

	if (!c->task_upstream || !up_id || strlen(up_id) > 256 || !c->task_w)
		return false;
	if (!c->s)
		return true; /* nobody to tell; the ledger still completes */
	if (!t) {
		t = task_new(c->s, c->connector);
		if (!t) {
			session_send_error(c->s, c->rpc_id, -32603, "Internal error: out of memory");
			return true;
		}
	}
	v = upstream_view(up, t->id);
	t->up_id = strdup(up_id);
	if (!v || !t->up_id) {
		json_t *err = json_pack("{s:{s:i, s:s, s:{s:s}}}", "error", "code", -32603, "message",
					"cordon: the connector answered a task-augmented call with a malformed task",
					"data", CORDON_REFUSED_BY_KEY, "cordon");

		json_decref(v);
		free(t->up_id);
		t->up_id = NULL;
		if (c->task) {
			/* The held task fails: the connector's answer is unusable. */
			task_call_finish(c, err);
			return true;
		}
		task_unlink(t);
		task_free(t);
		session_send_json(c->s, json_pack("{s:s, s:O, s:O}", "jsonrpc", "2.0", "id", c->rpc_id, "error",
						  json_object_get(err, "error")));
		json_decref(err);
		return true;
	}
	t->w = c->task_w;
	json_decref(t->view);
	t->view = v;
	{
		json_t *ttl = json_object_get(v, "ttl");

		task_set_ttl(t, json_is_integer(ttl) ? json_integer_value(ttl) : -1);
	}
	if (c->task) {
		/* Held for an approval, now running at the connector: the
		 * client already has the task; tasks/result requests that
		 * waited go on to the connector. */
		c->task = NULL;
		t->call = NULL;
		notify_status(t);
		json_array_foreach(t->waiting, i, id) task_forward(c->s, t, "tasks/result", id);
		json_array_clear(t->waiting);
	} else
		create_answer(c->s, c->rpc_id, t, NULL);
	return true;
}

void task_worker_gone(struct dworker *w)
{
	for (struct dsession *s = w->d->sessions; s; s = s->next)
		for (struct dtask *t = s->tasks; t; t = t->next)
			if (t->w == w) {
				t->w = NULL;
				if (!status_terminal(task_status(t))) {
					json_t *v = json_deep_copy(t->view);

					json_object_set_new(v, "status", json_string("failed"));
					json_object_set_new(v, "statusMessage",
							    json_string("the connector instance running it ended"));
					json_decref(t->view);
					t->view = v;
					notify_status(t);
				}
			}
}

void task_upstream_status(struct dworker *w, const json_t *params)
{
	const char *up_id = json_string_value(json_object_get(params, "taskId"));

	if (!up_id)
		return;
	for (struct dsession *s = w->d->sessions; s; s = s->next)
		for (struct dtask *t = s->tasks; t; t = t->next)
			if (t->w == w && t->up_id && !strcmp(t->up_id, up_id)) {
				upstream_update(t, params);
				notify_status(t);
				return;
			}
}

/* ---- requests from the client: tasks/get, /result, /list, /cancel ------- */

static void do_list(struct dsession *s, const json_t *id, const json_t *params)
{
	json_t *cursor = json_object_get(params, "cursor"), *arr = json_array();

	if (cursor && !json_is_null(cursor)) {
		/* One page holds every task of the session (at most
		 * SESSION_TASKS_MAX); no cursor is ever issued. */
		json_decref(arr);
		session_send_error(s, id, -32602, "Invalid params: unknown cursor");
		return;
	}
	/* The session's own table: a connector's tasks/list would show
	 * other sessions' tasks on a shared instance. A task passed through
	 * shows the state last heard (tasks/get asks the connector). */
	for (struct dtask *t = s->tasks; t; t = t->next)
		if (t->view)
			json_array_append(arr, t->view);
	session_send_result(s, id, json_pack("{s:o}", "tasks", arr));
}

static void do_cancel(struct dsession *s, const json_t *id, struct dtask *t)
{
	struct dcall *c = t->call;

	if (status_terminal(task_status(t))) {
		session_send_error(s, id, -32602, "Invalid params: task %s is already %s", t->id, task_status(t));
		return;
	}
	if (t->up_id) {
		task_forward(s, t, "tasks/cancel", id);
		return;
	}
	if (c) {
		t->call = NULL;
		c->task = NULL;
		call_cancel_one(c); /* withdraws a pending approval (audited); frees c */
	}
	task_finish(t,
		    json_pack("{s:{s:i, s:s}}", "error", "code", -32800, "message", "cordon: the task was cancelled"),
		    "cancelled", "cancelled by the client");
	session_send_result(s, id, json_deep_copy(t->view));
}

bool task_request(struct dsession *s, const char *method, const json_t *id, const json_t *params)
{
	const char *tid;
	struct dtask *t;

	if (strncmp(method, "tasks/", 6) != 0)
		return false;
	if (!strcmp(method, "tasks/list")) {
		do_list(s, id, params);
		return true;
	}
	if (strcmp(method, "tasks/get") && strcmp(method, "tasks/result") && strcmp(method, "tasks/cancel"))
		return false;
	tid = json_string_value(json_object_get(params, "taskId"));
	if (!tid) {
		session_send_error(s, id, -32602, "Invalid params: %s needs taskId", method);
		return true;
	}
	t = task_find(s, tid);
	if (!t) {
		session_send_error(s, id, -32602, "Invalid params: no task %.64s in this session", tid);
		return true;
	}
	if (!strcmp(method, "tasks/cancel")) {
		do_cancel(s, id, t);
		return true;
	}
	if (t->up_id) {
		/* A failed view of a dead instance answers itself. */
		if (!t->w && !strcmp(method, "tasks/get"))
			session_send_result(s, id, json_deep_copy(t->view));
		else
			task_forward(s, t, method, id);
		return true;
	}
	if (!strcmp(method, "tasks/get")) {
		session_send_result(s, id, json_deep_copy(t->view));
		return true;
	}
	/* tasks/result: the final answer, or wait for it (MCP: it blocks
	 * until the task is terminal). */
	if (t->final) {
		send_final(t, id);
		return true;
	}
	if (json_array_size(t->waiting) >= TASK_WAITERS_MAX) {
		session_send_error(s, id, -32000, "cordon: too many tasks/result requests wait on task %s (at most %u)",
				   t->id, TASK_WAITERS_MAX);
		return true;
	}
	json_array_append_new(t->waiting, json_deep_copy(id));
	return true;
}

void task_session_closed(struct dsession *s)
{
	while (s->tasks) {
		struct dtask *t = s->tasks;

		s->tasks = t->next;
		task_free(t);
	}
	s->n_tasks = 0;
}

const struct dtask_hooks gateway_task_hooks = {
	.admit = task_call_admit,
	.ready = task_call_ready,
	.held = task_call_held,
	.dispatching = task_call_dispatching,
	.own = task_call_own,
	.finish = task_call_finish,
	.upstream_created = task_upstream_created,
	.released = task_call_released,
	.tool_listed = task_tool_listed,
};

void tasks_tick(struct cordon_daemon *d, uint64_t now_ms)
{
	for (struct dsession *s = d->sessions; s; s = s->next)
		for (struct dtask *t = s->tasks, *tn; t; t = tn) {
			tn = t->next;
			/* A task still running for cordon is never forgotten. */
			if (t->call || !t->expires_ms || now_ms < t->expires_ms || json_array_size(t->waiting))
				continue;
			task_unlink(t);
			task_free(t);
		}
}
