/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tools/list and tools/call through the authorization core.
 *
 * tools/call: strict decode (done for the whole message by the gateway) →
 * surface check (unknown or ungranted: JSON-RPC -32602) → worker ready →
 * decision (cordon_broker_decide_batched, committed with the loop pass's
 * batch before anything goes out: deny | allow | approve) → approval
 * (cordon_approval_request coalesces; the call is held while it is pending,
 * with progress notifications, up to cfg.approval_wait; then an isError
 * result naming the display code; the approval stays valid until its TTL and
 * the identical call consumes it) → action ledger (cordon_action_begin
 * consumes the approval by CAS and records the action; dispatched is
 * committed BEFORE the first byte goes out) → the canonical argument bytes
 * go to the connector → the result is relayed size-capped and never parsed
 * for policy (only isError is read, to record the action's outcome).
 *
 * A task-augmented call (params.task, MCP 2025-11-25) takes the same way;
 * at a few points it asks gateway-task.c, which sits above this file,
 * through d->task_hooks: admitted (call_start), ready (before the decision),
 * held (waiting for an approval), dispatching, and every answer (call_
 * error_result, call_send_result_bytes, call_task_connector_error) goes
 * into the call's task when it has one.
 *
 * Also the call object every kind of call shares (call_free): a call is
 * queued on and sent by a worker, which reports back through the call's
 * struct dcall_ops (tool_call_ops here; gateway-pass.c has its own). Calls
 * down to gateway-session.c, gateway-decide.c and worker.c only. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actions.h"
#include "approval-args.h"
#include "approvals.h"
#include "call.h"
#include "canon.h"
#include "cleanup.h"
#include "delegations.h"
#include "daemon-log.h"
#include "gateway-call.h"
#include "gateway-decide.h"
#include "gateway-names.h"
#include "gateway-session.h"
#include "grants.h"
#include "inventory.h"
#include "log.h"
#include "parse-util.h"
#include "policy.h"
#include "rpc-error.h"
#include "worker.h"

#define PROGRESS_INTERVAL_MS 1000

static void tool_error_result(struct dsession *s, const json_t *id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void tool_error_result(struct dsession *s, const json_t *id, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!s)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* cordon's own answer: the marker says who refused (rpc-error.h). */
	session_send_result(s, id,
			    json_pack("{s:[{s:s, s:s}], s:b, s:{s:s}}", "content", "type", "text", "text", msg,
				      "isError", 1, "_meta", CORDON_REFUSED_BY_KEY, "cordon"));
}

static void tool_text_result(struct dsession *s, const json_t *id, bool is_error, json_t *structured, const char *fmt,
			     ...) __attribute__((format(printf, 5, 6)));
static void tool_text_result(struct dsession *s, const json_t *id, bool is_error, json_t *structured, const char *fmt,
			     ...)
{
	char msg[1024];
	va_list ap;
	json_t *r;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", msg, "isError", is_error);
	if (is_error && r)
		json_object_set_new(r, "_meta", json_pack("{s:s}", CORDON_REFUSED_BY_KEY, "cordon"));
	if (structured)
		json_object_set_new(r, "structuredContent", structured);
	session_send_result(s, id, r);
}

unsigned session_calls(const struct dsession *s)
{
	unsigned n = 0;

	for (const struct dcall *c = s->calls; c; c = c->next)
		n++;
	return n;
}

void call_free(struct dcall *c)
{
	/* A call that ends while its approval still waits (its wait passed,
	 * the client cancelled) hands its arguments and their charge to the
	 * approval (approval-args.h, issue 14). */
	if (c->state == DC_WAIT_APPROVAL && c->approval_id[0] && c->args_jcs && c->held_bytes == c->args_len && c->d &&
	    c->s && approval_args_take(c->d, c->approval_id, c->s->id, c->held_subject, &c->args_jcs, c->args_len) > 0)
		c->held_bytes = 0;
	/* The held-argument budget (issue 11 finding 3) gets its bytes back. */
	if (c->held_bytes && c->d)
		held_release(c->d, c->held_subject, c->held_bytes);
	if (c->s)
		for (struct dcall **p = &c->s->calls; *p; p = &(*p)->next)
			if (*p == c) {
				*p = c->next;
				break;
			}
	if (c->w)
		worker_dequeue(c->w, c);
	decide_batch_forget(c);
	if (c->task && c->d && c->d->task_hooks)
		c->d->task_hooks->released(c);
	if (c->ops && c->ops->release)
		c->ops->release(c);
	json_decref(c->task_params);
	json_decref(c->rpc_id);
	json_decref(c->progress_token);
	free(c->args_jcs);
	free(c->idem_key);
	free(c);
}

/* The answers to a tools/call: to the client, or into the call's task
 * when it has one (gateway-task.c, through d->task_hooks). An isError
 * result of cordon's own, marked; a result given as JSON bytes; an error
 * object (borrowed). */
static void call_error_result(struct dcall *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void call_error_result(struct dcall *c, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->task_params && !c->task && c->d && c->d->task_hooks)
		c->d->task_hooks->own(c, "answered by cordon");
	if (c->task)
		c->d->task_hooks->finish(c, json_pack("{s:{s:[{s:s, s:s}], s:b, s:{s:s}}}", "result", "content", "type",
						      "text", "text", msg, "isError", 1, "_meta", CORDON_REFUSED_BY_KEY,
						      "cordon"));
	else
		tool_error_result(c->s, c->rpc_id, "%s", msg);
}

static void call_send_result_bytes(struct dcall *c, const char *bytes, size_t len)
{
	_cleanup_free_ char *id = NULL;
	char *line = NULL;
	int n;

	/* Also a connector that answered a task call with a plain result. */
	if (c->task_params && !c->task && c->d && c->d->task_hooks)
		c->d->task_hooks->own(c, "answered");
	if (c->task) {
		json_t *r = json_loadb(bytes, len, 0, NULL);

		c->d->task_hooks->finish(c, r ? json_pack("{s:o}", "result", r) : NULL);
		return;
	}
	if (!c->s)
		return;
	id = json_dumps(c->rpc_id, JSON_ENCODE_ANY | JSON_COMPACT);
	n = id ? asprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%.*s}", id, (int)len, bytes) : -1;
	if (n > 0) {
		session_send(c->s, line, (size_t)n);
		free(line);
	}
}

/* Ends a call with an isError result (before anything was dispatched). */
static void call_fail(struct dcall *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void call_fail(struct dcall *c, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	call_error_result(c, "%s", msg);
	call_free(c);
}

/* Surface check for the -32602 answer (and to start no instance for a tool
 * that is not there). Only positive answers are cached, for at most a
 * second and until the next policy or inventory change: the decision that
 * follows re-reads grant and inventory in its own snapshot, so a stale entry
 * can only turn a "-32602 unknown tool" into a "denied" result, never let
 * anything through. */
#define SURFACE_CACHE_MS 1000

static bool tool_in_surface(struct cordon_daemon *d, const char *connector, const char *tool)
{
	struct dconn *conn = daemon_conn(d, connector);
	struct cordon_inventory_record rec = {};
	char **grants = NULL;
	size_t n = 0;
	bool granted = false, ok = false;
	uint64_t now = cordon_loop_now_ms();
	json_t *hit = conn ? json_object_get(conn->surface_cache, tool) : NULL;

	if (hit && (uint64_t)json_integer_value(hit) > now)
		return true;

	if (cordon_grants_list(d->db, connector, &grants, &n) < 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(grants[i], tool))
			granted = true;
	strv_free(grants);
	if (!granted)
		return false;
	if (cordon_inventory_get(d->db, connector, tool, &rec) < 0)
		return false;
	ok = rec.state == CORDON_INVENTORY_REVIEWED && rec.pinned_fingerprint && rec.fingerprint &&
	     !strcmp(rec.pinned_fingerprint, rec.fingerprint);
	cordon_inventory_record_done(&rec);
	if (ok && conn) {
		if (!conn->surface_cache)
			conn->surface_cache = json_object();
		if (json_object_size(conn->surface_cache) < 4096)
			json_object_set_new(conn->surface_cache, tool,
					    json_integer((json_int_t)(now + SURFACE_CACHE_MS)));
	}
	return ok;
}

static struct cordon_call call_view(struct dcall *c)
{
	return (struct cordon_call){
		.session = c->s ? c->s->id : "",
		.connector = c->connector,
		.tool = c->tool,
		.fingerprint = c->fingerprint,
		.generation = c->dec.generation,
		.policy_epoch = c->dec.policy_epoch,
		.tier = c->dec.decision.tier,
		.arguments_jcs = c->args_jcs,
		.arguments_jcs_len = c->args_len,
	};
}

/* The subject that scopes idempotency keys: the uid the kernel reported
 * for the session's socket (SO_PEERCRED), never anything the client sent.
 * NULL once the session is gone (the ledger then scopes to the session). */
static const char *call_subject(const struct dcall *c, char buf[static 24])
{
	if (!c->s)
		return NULL;
	if (c->s->subject & DSUBJECT_AGENT)
		snprintf(buf, 24, "agent:%u", (unsigned)(c->s->subject & 0xffffffffu));
	else
		snprintf(buf, 24, "uid:%u", (unsigned)c->s->subject);
	return buf;
}

static const char *begin_error(int r)
{
	switch (r) {
	case -EEXIST:
		return "the idempotency key was already used for a different request";
	case -EINPROGRESS:
		return "a call with this idempotency key is still in progress";
	case -ENOTRECOVERABLE:
		return "an earlier call with this idempotency key has an unknown outcome; an operator must resolve it";
	case -ENODATA:
		/* Nothing stored (an error, or a result beyond the store's
		 * bound), or sealed by an earlier broker process. */
		return "this call already ran; its result is not available (none was stored, or an earlier broker "
		       "process stored it) and it is not repeated";
	case -ENOENT:
		return "the approval no longer exists";
	case -EAGAIN:
		return "the approval is still pending";
	case -EACCES:
		return "the approval was denied";
	case -ETIME:
		return "the approval expired";
	case -ECANCELED:
		return "the approval was revoked";
	case -EALREADY:
		return "the approval was already used; a repeat needs a new approval";
	case -EBADMSG:
		return "the approval does not match this call";
	case -ESTALE:
		return "the tool's policy changed since this call was decided; repeat the call to have it decided "
		       "again";
	case -EIO:
		return "the audit log cannot be written; nothing above read is dispatched";
	default:
		return "the call could not be recorded";
	}
}

/* A call held for an approval was decided before a policy change that
 * did not touch its tool (an unrelated grant or tier change keeps the
 * approval: issue 14), so cordon_action_begin() finds its decision stale.
 * Decides it again, committed and audited: when it still needs an approval
 * at the same tier on the same launch, the approval it waited for is still
 * the one to consume (begin re-checks everything). 0, or -ESTALE when the
 * new decision is not that. */
static int call_redecide_held(struct dcall *c)
{
	struct cordon_decide_request req = {
		.session = c->s->id, .connector = c->connector, .tool = c->tool, .fingerprint = c->fingerprint
	};
	struct cordon_broker_decision dec = {};
	int r = cordon_broker_decide(c->d->db, &req, &dec);

	if (r < 0 || dec.decision.verdict != CORDON_VERDICT_APPROVE || dec.decision.tier != c->dec.decision.tier ||
	    dec.generation != c->dec.generation)
		return -ESTALE;
	c->dec = dec;
	return 0;
}

static void call_dispatch(struct dcall *c)
{
	struct cordon_daemon *d = c->d;
	struct cordon_action_begin b = {};
	struct cordon_action_begin_result res = {};
	char subject[24];
	int r;

	if (d && d->task_hooks)
		d->task_hooks->dispatching(c);
	if (!d || !c->w || c->w->state != DW_READY) {
		call_fail(c, "cordon: the connector instance is not available; nothing was sent");
		return;
	}
	if (c->dec.decision.tier == CORDON_RISK_READ && !c->idem_key) {
		/* Read tier: no effect to make replay-safe, so no action record
		 * (the decision itself is audited by cordon_broker_decide). This
		 * keeps a read call at one durable transaction instead of four.
		 * With an idempotency key the ledger still serves stored results. */
		c->state = DC_IN_FLIGHT;
		c->action_id[0] = 0;
		if (worker_send_call(c->w, c) < 0)
			call_fail(c, "cordon: the call could not be sent to the connector.");
		return;
	}
	b.call = call_view(c);
	b.approval_id = c->approval_id[0] ? c->approval_id : NULL;
	b.idempotency_key = c->idem_key;
	b.subject = call_subject(c, subject);
	r = cordon_action_begin(d->db, d->key, &b, &res);
	if (r == -ESTALE && c->approval_id[0] && c->s && call_redecide_held(c) == 0) {
		b.call = call_view(c);
		r = cordon_action_begin(d->db, d->key, &b, &res);
	}
	if (r < 0) {
		call_fail(c, "cordon: not sent: %s.", begin_error(r));
		return;
	}
	if (res.outcome == CORDON_BEGIN_STORED_RESULT) {
		/* Same identity, same request, finished: the stored result, no
		 * re-execution. */
		if (res.result)
			call_send_result_bytes(c, res.result, res.result_len);
		else
			call_error_result(c, "cordon: this call already ran; no result was stored.");
		cordon_action_begin_result_done(&res);
		call_free(c);
		return;
	}
	snprintf(c->action_id, sizeof(c->action_id), "%s", res.action_id);
	cordon_action_begin_result_done(&res);
	/* Committed before the first byte goes out: a crash from here on
	 * leaves the action dispatched -> outcome_unknown, never retried. */
	r = cordon_action_dispatched(d->db, c->action_id);
	if (r < 0) {
		call_fail(c, "cordon: not sent: the action could not be recorded as dispatched.");
		return;
	}
	c->state = DC_IN_FLIGHT;
	r = worker_send_call(c->w, c);
	if (r < 0) {
		/* Nothing was written: the call failed, provably unexecuted. */
		(void)cordon_action_complete(d->db, d->key, c->action_id, false, NULL, 0);
		call_fail(c, "cordon: the call could not be sent to the connector.");
	}
}

/* A replay-safe call carrying an idempotency identity that already ran:
 * the ledger checks the identity before it asks for an approval, so a
 * finished identical request returns its stored result without a new
 * approval, and a reused or in-flight identity is refused at once. Returns
 * true when the call was answered. */
static bool call_replay_stored(struct dcall *c)
{
	struct cordon_daemon *d = c->d;
	char subject[24];
	struct cordon_action_begin b = { .call = call_view(c),
					 .approval_id = NULL,
					 .idempotency_key = c->idem_key,
					 .subject = call_subject(c, subject) };
	struct cordon_action_begin_result res = {};
	int r;

	r = cordon_action_begin(d->db, d->key, &b, &res);
	if (r == -EEXIST || r == -EINPROGRESS || r == -ENOTRECOVERABLE || r == -ENODATA) {
		call_fail(c, "cordon: not sent: %s.", begin_error(r));
		return true;
	}
	if (r < 0 || res.outcome != CORDON_BEGIN_STORED_RESULT) {
		/* Not a replay (the approval it lacks is what stopped it). */
		cordon_action_begin_result_done(&res);
		return false;
	}
	if (res.result)
		call_send_result_bytes(c, res.result, res.result_len);
	else
		call_error_result(c, "cordon: this call already ran; no result was stored.");
	cordon_action_begin_result_done(&res);
	call_free(c);
	return true;
}

static void call_check_approval(struct dcall *c)
{
	struct cordon_daemon *d = c->s->d;
	struct cordon_approval_info info = {};

	if (cordon_approval_get(d->db, c->approval_id, &info) < 0) {
		call_fail(c, "cordon: approval %s is no longer known.", c->display_code);
		return;
	}
	switch (info.state) {
	case CORDON_APPROVAL_REQUESTED:
		return;
	case CORDON_APPROVAL_APPROVED:
		d->m.approvals_approved++;
		call_dispatch(c);
		return;
	case CORDON_APPROVAL_DENIED:
		d->m.approvals_denied++;
		call_fail(c, "cordon: an operator denied this call (approval %s).", c->display_code);
		return;
	case CORDON_APPROVAL_EXPIRED:
		d->m.approvals_expired++;
		call_fail(c, "cordon: approval %s expired before an operator decided.", c->display_code);
		return;
	default:
		call_fail(c, "cordon: approval %s was %s.", c->display_code,
			  cordon_approval_state_to_string(info.state));
		return;
	}
}

void call_tick(struct dcall *c, uint64_t now)
{
	if (c->state != DC_WAIT_APPROVAL || !c->s)
		return;
	if (now >= c->deadline_ms) {
		struct cordon_approval_info info = {};

		/* A decision may have landed in the last interval. */
		if (cordon_approval_get(c->s->d->db, c->approval_id, &info) == 0 &&
		    info.state != CORDON_APPROVAL_REQUESTED) {
			call_check_approval(c);
			return;
		}
		c->s->d->m.approvals_timeout++;
		{
			struct cordon_approval_info cur = {};
			char until[CORDON_TIME_STRING_MAX] = "its expiry";

			if (cordon_approval_get(c->s->d->db, c->approval_id, &cur) == 0)
				cordon_time_format(cur.expires_at, until, sizeof(until));
			/* Exactly what happens (issue 14): the approval stays
			 * requested, with its arguments kept for the operator
			 * (approval-args.h), until an operator decides, it
			 * expires or this session ends; the identical call
			 * from this session coalesces onto it, waits again, and
			 * runs once it is approved. */
			call_fail(c,
				  "cordon: this call needs an operator's approval (code %s, tier %s) and was not "
				  "approved within %llu s; nothing was sent. The request stays pending until %s "
				  "(or until this session ends). Ask the operator to approve code %s (cordonctl "
				  "approvals approve %s), then repeat the identical call in this session: it runs "
				  "once approved.",
				  c->display_code, cordon_risk_name(c->dec.decision.tier),
				  (unsigned long long)(c->s->d->cfg.approval_wait_ms / 1000), until, c->display_code,
				  c->display_code);
		}
		return;
	}
	call_check_approval(c);
	/* call_check_approval may have freed c: only touch it while waiting. */
}

static void progress_tick(struct cordon_daemon *d, uint64_t now)
{
	for (struct dsession *s = d->sessions; s; s = s->next)
		for (struct dcall *c = s->calls; c; c = c->next)
			if (c->state == DC_WAIT_APPROVAL && c->progress_token && now >= c->next_progress_ms) {
				char msg[200];

				c->next_progress_ms = now + PROGRESS_INTERVAL_MS;
				snprintf(msg, sizeof(msg),
					 "waiting for operator approval %s; if this request ends first, the approval "
					 "stays pending: repeat the identical call once it is approved",
					 c->display_code);
				session_send_json(s, json_pack("{s:s, s:s, s:{s:O, s:I, s:s}}", "jsonrpc", "2.0",
							       "method", "notifications/progress", "params",
							       "progressToken", c->progress_token, "progress",
							       (json_int_t)++c->progress_n, "message", msg));
			}
}

void call_approval_decided(struct cordon_daemon *d, const char *approval_id)
{
	for (struct dsession *s = d->sessions; s; s = s->next)
		for (struct dcall *c = s->calls; c; c = c->next)
			if (c->state == DC_WAIT_APPROVAL && !strcmp(c->approval_id, approval_id)) {
				call_check_approval(c);
				return;
			}
}

json_t *call_approval_arguments(struct cordon_daemon *d, const char *approval_id)
{
	json_t *kept = approval_args_get(d, approval_id);

	if (kept)
		return kept;
	for (struct dsession *s = d->sessions; s; s = s->next)
		for (struct dcall *c = s->calls; c; c = c->next)
			if (c->approval_id[0] && !strcmp(c->approval_id, approval_id) && c->args_jcs)
				return json_loadb(c->args_jcs, c->args_len, JSON_REJECT_DUPLICATES, NULL);
	return NULL;
}

/* The worker is ready: decide, in the loop pass's batch of decisions
 * (gateway-decide.c), which calls call_decided() once it has committed. */
static void call_worker_ready(struct dcall *c)
{
	struct cordon_daemon *d;
	struct cordon_decide_request req;
	const char *fp;
	int r;

	if (!c->s) {
		call_free(c);
		return;
	}
	d = c->s->d;
	fp = c->w ? worker_fingerprint(c->w, c->tool) : NULL;
	if (!fp) {
		char shown[200];

		(void)gateway_name_show(c->s->bound, c->connector, c->tool, shown, sizeof(shown));
		session_send_error(c->s, c->rpc_id, -32602, "Unknown tool: %s", shown);
		call_free(c);
		return;
	}
	snprintf(c->fingerprint, sizeof(c->fingerprint), "%s", fp);
	if (d->task_hooks && !d->task_hooks->ready(c))
		return;
	req = (struct cordon_decide_request){
		.session = c->s->id, .connector = c->connector, .tool = c->tool, .fingerprint = c->fingerprint
	};
	r = cordon_broker_decide_batched(d->db, &req, &c->dec, &c->decide_batch);
	decide_batch_add(c, r);
}

/* The call's decision is committed (batch_r 0) or its batch failed: deny,
 * approve or dispatch (dcall_ops.decided). */
static void call_decided(struct dcall *c, int r, int batch_r)
{
	struct cordon_daemon *d = c->d;

	if (r >= 0 && batch_r < 0) {
		/* The record could not be written: as cordon_broker_decide()
		 * when its commit fails, a read-tier allow stands and nothing
		 * above read goes ahead. */
		if (c->dec.decision.verdict != CORDON_VERDICT_ALLOW || c->dec.decision.tier != CORDON_RISK_READ)
			r = batch_r;
	}
	if (r < 0 && c->dec.decision.verdict != CORDON_VERDICT_DENY)
		c->dec.decision.verdict = CORDON_VERDICT_DENY;
	switch (c->dec.decision.verdict) {
	case CORDON_VERDICT_DENY:
		d->m.calls_deny++;
		dlog_denial(&d->denials_log, c->connector,
			    r < 0 ? "internal-error" : cordon_deny_reason_to_string(c->dec.decision.reason),
			    cordon_loop_now_ms());
		call_fail(c, "cordon denied this call: %s.",
			  r < 0 ? "internal error (fail closed)"
				: cordon_deny_reason_to_string(c->dec.decision.reason));
		return;
	case CORDON_VERDICT_ALLOW:
		d->m.calls_allow++;
		call_dispatch(c);
		return;
	case CORDON_VERDICT_APPROVE: {
		struct cordon_approval_limits lim = {};
		struct cordon_approval_info info = {};
		struct cordon_call cv = call_view(c);

		d->m.calls_approve++;
		if (c->idem_key && call_replay_stored(c))
			return;
		/* While this call waits it holds the arguments (charged at
		 * admission); if it ends with the approval still pending, its
		 * copy and charge pass to the approval (call_free,
		 * approval-args.h), so the operator never decides blind and
		 * nothing is held twice. */
		r = cordon_approval_request(d->db, d->key, &lim, &cv, &info);
		if (r == -EDQUOT) {
			call_fail(c, "cordon: too many approvals are pending; this call was refused.");
			return;
		}
		if (r < 0) {
			call_fail(c, "cordon: the approval could not be requested; nothing was sent.");
			return;
		}
		if (!info.coalesced)
			d->m.approvals_requested++;
		snprintf(c->approval_id, sizeof(c->approval_id), "%s", info.id);
		snprintf(c->display_code, sizeof(c->display_code), "%s", info.display_code);
		if (info.state == CORDON_APPROVAL_APPROVED) {
			/* The identical call repeated after an approval. */
			call_dispatch(c);
			return;
		}
		c->state = DC_WAIT_APPROVAL;
		c->deadline_ms = cordon_loop_now_ms() + d->cfg.approval_wait_ms;
		c->next_progress_ms = 0;
		/* The approval's id only: its display code is what a caller
		 * quotes to the operator, and the log stays free of codes. */
		if (!info.coalesced)
			dlog_event(DLOG_APPROVAL_REQUESTED, "approval", c->approval_id, "connector", c->connector,
				   "tool", c->tool, "tier", cordon_risk_name(c->dec.decision.tier), "session",
				   c->s->id);
		if (d->task_hooks)
			d->task_hooks->held(c, &info);
		progress_tick(d, cordon_loop_now_ms());
		return;
	}
	}
}

static void call_worker_failed(struct dcall *c, const char *why)
{
	call_fail(c, "cordon: connector %s is unavailable (%s); nothing was sent.", c->connector, why);
}

static void call_worker_lost(struct dcall *c, const char *why)
{
	struct cordon_daemon *d = c->d;

	if (c->state == DC_IN_FLIGHT && c->action_id[0] && d)
		(void)cordon_action_worker_lost(d->db, c->action_id);
	if (c->state == DC_IN_FLIGHT && c->action_id[0])
		call_fail(
			c,
			"cordon: connector %s %s while this call was in flight; its outcome is unknown (action %s). It "
			"is not retried: an operator must resolve it.",
			c->connector, why, c->action_id);
	else if (c->state == DC_IN_FLIGHT)
		call_fail(c, "cordon: connector %s %s while this read call was in flight; no result.", c->connector,
			  why);
	else
		call_worker_failed(c, why);
}

/* A connector's JSON-RPC error to a call with a task: the task's error,
 * bounded as the client would get it (0), or cordon's -32603 (-EBADMSG). */
static int call_task_connector_error(struct dcall *c, const json_t *msg)
{
	struct cordon_diag diag = {};
	json_t *relayed = NULL;

	if (json_object_get(msg, "error") &&
	    cordon_rpc_error_relay(json_object_get(msg, "error"), &relayed, &diag) == 0) {
		c->d->task_hooks->finish(c, json_pack("{s:o}", "error", relayed));
		return 0;
	}
	c->d->task_hooks->finish(c, json_pack("{s:{s:i, s:s, s:{s:s}}}", "error", "code", -32603, "message",
					      "cordon: the connector's answer was malformed", "data",
					      CORDON_REFUSED_BY_KEY, "cordon"));
	return -EBADMSG;
}

/* The resource_link and embedded resource URIs of a tools/call result from
 * connector c->connector, as the session sees them (gateway-names.h), when
 * that connector passes resources through (else they stay as they are:
 * nothing could read them anyway). */
static void result_show_uris(struct dcall *c, json_t *result)
{
	struct dconn *conn = daemon_conn(c->d, c->connector);
	json_t *x;
	size_t i;

	if (!conn || !conn->profile->resources_read)
		return;
	json_array_foreach(json_object_get(result, "content"), i, x)
		gateway_content_show_uri(c->s->bound, c->connector, x);
}

static void call_worker_result(struct dcall *c, json_t *msg, size_t line_len)
{
	struct cordon_daemon *d = c->d;
	json_t *result = json_object_get(msg, "result");
	_cleanup_free_ char *bytes = NULL;
	size_t n = 0;
	bool ok;

	(void)line_len;
	/* A call passed to the connector as a task: its CreateTaskResult is
	 * the call's whole outcome here (the task's own goes through
	 * tasks/result, gateway-task.c). */
	if (c->task_upstream && json_is_object(result) && d->task_hooks && d->task_hooks->upstream_created(c, result)) {
		if (c->action_id[0])
			(void)cordon_action_complete(d->db, d->key, c->action_id, true, NULL, 0);
		call_free(c);
		return;
	}
	/* When the session went away meanwhile (c->s NULL) the ledger still
	 * learns the outcome; only the answer has nobody to go to. */
	if (!json_is_object(result)) {
		/* The connector's JSON-RPC error reaches the client as its own
		 * (bounded); a malformed answer gets cordon's -32603. The
		 * ledger records which, never the connector's text. */
		int r = c->task ? call_task_connector_error(c, msg)
				: session_send_connector_error(c->s, c->rpc_id, c->connector, msg);

		if (c->action_id[0])
			(void)cordon_action_fail(d->db, c->action_id,
						 r == 0 ? "connector-error" : "connector-malformed");
		call_free(c);
		return;
	}
	/* The connector cannot speak for cordon (rpc-error.h). */
	cordon_rpc_strip_markers(json_object_get(result, "_meta"));
	/* Its resource links read back through cordon: in the multiplexed
	 * view their URIs get the connector's prefix, as its listed
	 * resources do (gateway-pass.c), when its resources pass through. */
	if (c->s && !c->s->bound[0])
		result_show_uris(c, result);
	ok = !json_is_true(json_object_get(result, "isError"));
	bytes = json_dumps(result, JSON_COMPACT);
	n = bytes ? strlen(bytes) : 0;
	if (!bytes || n > d->cfg.result_cap) {
		if (c->action_id[0])
			(void)cordon_action_complete(d->db, d->key, c->action_id, ok, NULL, 0);
		call_error_result(
			c,
			"cordon: the connector's result (%zu bytes) exceeds the %llu-byte cap and was dropped; "
			"the call ran (action %s).",
			n, (unsigned long long)d->cfg.result_cap, c->action_id);
		call_free(c);
		return;
	}
	if (c->action_id[0])
		(void)cordon_action_complete(d->db, d->key, c->action_id, ok, bytes,
					     n <= CORDON_RESULT_MAX_BYTES ? n : 0);
	call_send_result_bytes(c, bytes, n);
	call_free(c);
}

/* The connector's progress for a call in flight, relayed with the
 * client's own progress token. */
static void call_progress(struct dcall *c, const json_t *params)
{
	json_t *p;

	if (!c->s || !c->progress_token)
		return;
	p = json_deep_copy(params);
	json_object_set(p, "progressToken", c->progress_token);
	session_send_json(
		c->s, json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", "notifications/progress", "params", p));
}

static const struct dcall_ops tool_call_ops = {
	.ready = call_worker_ready,
	.failed = call_worker_failed,
	.lost = call_worker_lost,
	.result = call_worker_result,
	.progress = call_progress,
	.decided = call_decided,
};

/* Ends call c, answering nobody; withdraw: a pending approval it waits on
 * is withdrawn too (tasks/cancel), else it stays pending. */
static void call_end(struct dcall *c, bool withdraw)
{
	struct dsession *s = c->s;

	switch (c->state) {
	case DC_WAIT_APPROVAL:
		if (withdraw && s && cordon_approval_cancel(s->d->db, s->id, c->approval_id) == 0) {
			s->d->m.approvals_cancelled++;
			approval_args_forget(s->d, c->approval_id);
		}
		break;
	case DC_IN_FLIGHT:
		if (c->w)
			worker_cancel_request(c->w, c->worker_req_id, "cancelled by the client");
		c->w = NULL;
		/* The connector may or may not have acted. */
		if (c->action_id[0] && c->d)
			(void)cordon_action_worker_lost(c->d->db, c->action_id);
		break;
	default:
		break;
	}
	call_free(c);
}

void call_cancel_one(struct dcall *c)
{
	call_end(c, true);
}

void call_cancel(struct dsession *s, const json_t *request_id)
{
	for (struct dcall *c = s->calls; c; c = c->next) {
		/* A call that became a task is not its request any more: it is
		 * cancelled with tasks/cancel. */
		if (!json_equal(c->rpc_id, (json_t *)request_id) || c->task)
			continue;
		/* A cancelled request gets no response (MCP). A held one only
		 * stops waiting: the SDK cancels a request when its own timeout
		 * (60 s) passes, which says nothing about the call, so its
		 * approval stays pending for the identical call to pick up
		 * (issue 14); the progress messages and the docs say so. A
		 * task is withdrawn with tasks/cancel. */
		call_end(c, false);
		return;
	}
}

void call_start(struct dsession *s, const json_t *id, const json_t *params, struct cordon_canon_lifted *args)
{
	struct cordon_daemon *d = s->d;
	const char *name = json_string_value(json_object_get(params, "name"));
	const char *tool = NULL;
	json_t *meta = json_object_get(params, "_meta");
	struct cordon_tool_call tc = {};
	struct cordon_diag diag = {};
	struct dcall *c;
	struct dconn *conn;
	struct dworker *w;
	char connector[CORDON_CONNECTOR_ID_MAX + 1];
	int r;

	if (session_calls(s) >= SESSION_CALLS_MAX) {
		session_send_error(s, id, -32000, "cordon: too many calls in flight on this session (at most %u)",
				   SESSION_CALLS_MAX);
		return;
	}
	/* The session's view names the connector (prefix, or its binding); a
	 * name of any other connector is as unknown as a tool that does not
	 * exist. */
	if (gateway_name_route(s->bound, name, connector, &tool) < 0 || !cordon_tool_name_is_valid(tool)) {
		session_send_error(s, id, -32602, "Unknown tool: %.160s", name);
		return;
	}
	conn = connector_id_is_valid(connector) ? daemon_conn(d, connector) : NULL;
	if (!conn || !daemon_conn_installed(d, connector) || !tool_in_surface(d, connector, tool)) {
		/* A tool of an installed connector that is not granted (or not
		 * reviewed) is a refusal the operator may want to know of. */
		if (conn && daemon_conn_installed(d, connector))
			dlog_denial(&d->denials_log, connector, "not-in-surface", cordon_loop_now_ms());
		session_send_error(s, id, -32602, "Unknown tool: %.160s", name);
		return;
	}
	/* The broker library's parser admits and canonicalises the params:
	 * arguments (absent is {}; an object the gateway already took out as
	 * canonical bytes), the gateway's idempotency key. */
	r = cordon_tool_call_parse_lifted(params, &args->jcs, args->jcs_len, &tc, &diag);
	if (r < 0) {
		session_send_error(s, id, -32602, "Invalid params: %s", diag.message);
		return;
	}
	if (meta && !json_is_object(meta)) {
		cordon_tool_call_done(&tc);
		session_send_error(s, id, -32602, "Invalid params: _meta must be an object");
		return;
	}
	json_t *tok = json_object_get(meta, "progressToken");
	if (tok && !json_is_string(tok) && !json_is_integer(tok)) {
		cordon_tool_call_done(&tc);
		session_send_error(s, id, -32602, "Invalid params: progressToken must be a string or an integer");
		return;
	}
	json_t *task = NULL;
	if (d->task_hooks && d->task_hooks->admit(s, id, params, &task) < 0) {
		cordon_tool_call_done(&tc);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		json_decref(task);
		cordon_tool_call_done(&tc);
		session_send_error(s, id, -32603, "Internal error: out of memory");
		return;
	}
	c->s = s;
	c->d = d;
	c->ops = &tool_call_ops;
	c->rpc_id = json_deep_copy(id);
	snprintf(c->connector, sizeof(c->connector), "%s", connector);
	snprintf(c->tool, sizeof(c->tool), "%s", tool);
	c->progress_token = tok ? json_deep_copy(tok) : NULL;
	c->task_params = task;
	c->idem_key = TAKE_PTR(tc.idempotency_key);
	c->args_jcs = TAKE_PTR(tc.arguments_jcs);
	c->args_len = tc.arguments_jcs_len;
	cordon_tool_call_done(&tc);
	/* Issue 11 finding 3: the canonical argument bytes this call keeps
	 * until it ends count against its uid's and the global budget, checked
	 * before it is held (identical calls coalesce into one approval, so the
	 * approval caps do not bound them). */
	{
		char why[400];

		if (held_charge(d, s->subject, c->args_len, why, sizeof(why)) < 0) {
			session_send_error(s, id, GATEWAY_ERR_HELD_BUDGET, "%s", why);
			call_free(c);
			return;
		}
		c->held_bytes = c->args_len;
		c->held_subject = s->subject;
	}
	c->next = s->calls;
	s->calls = c;
	if (!c->rpc_id) {
		session_send_error(s, id, -32603, "Internal error: out of memory");
		call_free(c);
		return;
	}
	w = worker_get(d, conn, s, true, &diag);
	if (!w) {
		call_fail(c, "cordon: connector %s could not be started (%s: %s); nothing was sent.", connector,
			  diag.step, diag.message);
		return;
	}
	if (w->state == DW_READY) {
		c->w = w;
		call_worker_ready(c);
	} else
		worker_enqueue(w, c);
}

/* ---- tools/list -------------------------------------------------------- */

static json_t *broker_tool_defs(void)
{
	return json_pack(
		"[{s:s, s:s, s:{s:s, s:{s:{s:s}, s:{s:s}, s:{s:s, s:[ss]}, s:{s:s, s:i}}, s:[ss]}, s:{s:b}},"
		" {s:s, s:s, s:{s:s, s:{s:{s:s}}, s:[s]}, s:{s:b}},"
		" {s:s, s:s, s:{s:s, s:{s:{s:s}}, s:[s]}, s:{s:b}}]",
		"name", "cordon__request_root", "description",
		"Ask the operator for an extra filesystem root for a connector. This grants nothing by itself: the "
		"request stays pending until an operator approves it.",
		"inputSchema", "type", "object", "properties", "connector", "type", "string", "path", "type", "string",
		"access", "type", "string", "enum", "read", "read-write", "lifetime_seconds", "type", "integer",
		"minimum", 0, "required", "connector", "path", "annotations", "readOnlyHint", 0,

		"name", "cordon__approval_status", "description",
		"The state of one of this session's approval requests, by its display code or id.", "inputSchema",
		"type", "object", "properties", "approval", "type", "string", "required", "approval", "annotations",
		"readOnlyHint", 1,

		"name", "cordon__release_root", "description",
		"Give up a delegated root this session requested (only reduces authority).", "inputSchema", "type",
		"object", "properties", "delegation", "type", "string", "required", "delegation", "annotations",
		"readOnlyHint", 0);
}

json_t *broker_tools_list(struct cordon_daemon *d, struct dsession *s)
{
	/* A bound session sees its connector's tools and nothing else. */
	json_t *out = s->bound[0] ? json_array() : broker_tool_defs();

	if (!out)
		out = json_array();
	for (size_t i = 0; i < d->n_conns; i++) {
		struct dconn *c = &d->conns[i];
		struct cordon_risk_policy_owned pol = {};
		char **grants = NULL;
		size_t n = 0;

		if ((s->bound[0] && strcmp(s->bound, c->id) != 0) || !daemon_conn_installed(d, c->id) ||
		    cordon_grants_list(d->db, c->id, &grants, &n) < 0)
			continue;
		if (cordon_risk_policy_load(d->db, c->id, &pol) < 0) {
			strv_free(grants);
			continue;
		}
		for (size_t g = 0; g < n; g++) {
			struct cordon_inventory_record rec = {};
			enum cordon_risk tier;
			json_t *def, *ann;
			char full[200];

			if (cordon_inventory_get(d->db, c->id, grants[g], &rec) < 0)
				continue;
			/* advertised ∩ reviewed (fingerprint unchanged) ∩ granted */
			if (rec.state != CORDON_INVENTORY_REVIEWED || !rec.pinned_fingerprint || !rec.fingerprint ||
			    strcmp(rec.pinned_fingerprint, rec.fingerprint) != 0 ||
			    !cordon_risk_policy_tier(&pol.policy, grants[g], &tier) ||
			    !(def = json_loads(rec.definition, JSON_REJECT_DUPLICATES, NULL))) {
				cordon_inventory_record_done(&rec);
				continue;
			}
			cordon_inventory_record_done(&rec);
			if (gateway_name_show(s->bound, c->id, grants[g], full, sizeof(full)) < 0) {
				json_decref(def);
				continue;
			}
			json_object_set_new(def, "name", json_string(full));
			/* Task support as this session can use it (gateway-task.c). */
			if (d->task_hooks && !d->task_hooks->tool_listed(s, def)) {
				json_decref(def);
				continue;
			}
			ann = json_object_get(def, "annotations");
			if (!json_is_object(ann)) {
				ann = json_object();
				json_object_set_new(def, "annotations", ann);
			}
			/* cordon's own tier, not the connector's claim. */
			json_object_set_new(ann, "readOnlyHint", json_boolean(tier == CORDON_RISK_READ));
			json_object_set_new(ann, "destructiveHint", json_boolean(tier >= CORDON_RISK_DESTRUCTIVE));
			json_array_append_new(out, def);
		}
		strv_free(grants);
		cordon_risk_policy_owned_done(&pol);
	}
	return out;
}

/* ---- broker tools ------------------------------------------------------ */

bool broker_tool_call(struct dsession *s, const json_t *id, const char *tool, const json_t *args)
{
	struct cordon_daemon *d = s->d;
	struct cordon_actor actor = cordon_actor_session(s->id);
	int r;

	if (args && !json_is_object(args)) {
		session_send_error(s, id, -32602, "Invalid params: arguments must be an object");
		return true;
	}
	if (!strcmp(tool, "approval_status")) {
		const char *which = json_string_value(json_object_get(args, "approval"));
		struct cordon_approval_info info = {};
		const char *aid = which;

		if (!which) {
			session_send_error(s, id, -32602, "Invalid params: approval is required");
			return true;
		}
		char resolved[48];

		/* A display code of an outstanding approval, or a full id; either
		 * way only this session's own approvals are shown. */
		if (cordon_approval_resolve(d->db, which, resolved) == 0)
			aid = resolved;
		if (strlen(aid) >= CORDON_ID_STRING_MAX || cordon_approval_get(d->db, aid, &info) < 0 ||
		    strcmp(info.session, s->id) != 0) {
			tool_text_result(s, id, true, NULL, "No approval %s in this session.", which);
			return true;
		}
		tool_text_result(s, id, false,
				 json_pack("{s:s, s:s, s:s, s:s}", "approval", info.display_code, "state",
					   cordon_approval_state_to_string(info.state), "connector", info.connector,
					   "tool", info.tool),
				 "Approval %s for %s__%s is %s.", info.display_code, info.connector, info.tool,
				 cordon_approval_state_to_string(info.state));
		return true;
	}
	if (!strcmp(tool, "request_root")) {
		const char *connector = json_string_value(json_object_get(args, "connector"));
		const char *path = json_string_value(json_object_get(args, "path"));
		const char *access = json_string_value(json_object_get(args, "access"));
		json_t *life = json_object_get(args, "lifetime_seconds");
		struct cordon_delegation_info info = {};
		enum cordon_fs_access acc = CORDON_ACCESS_READ;

		if (!connector || !path || (access && strcmp(access, "read") && strcmp(access, "read-write")) ||
		    (life && (!json_is_integer(life) || json_integer_value(life) < 0))) {
			session_send_error(
				s, id, -32602,
				"Invalid params: connector and path are required; access is read or read-write");
			return true;
		}
		if (access && !strcmp(access, "read-write"))
			acc = CORDON_ACCESS_READ_WRITE;
		if (!connector_id_is_valid(connector) || !daemon_conn_installed(d, connector)) {
			tool_text_result(s, id, true, NULL, "Unknown connector %s.", connector);
			return true;
		}
		r = cordon_delegation_request(d->db, &actor, connector, path, acc,
					      life ? (uint64_t)json_integer_value(life) : 0, &info);
		if (r < 0) {
			tool_text_result(s, id, true, NULL, "The request was refused: %s.",
					 cordon_db_last_error(d->db));
			return true;
		}
		tool_text_result(s, id, false, json_pack("{s:s, s:s}", "delegation", info.id, "state", "pending"),
				 "Delegation request %s is pending. It grants nothing until an operator approves it.",
				 info.id);
		return true;
	}
	if (!strcmp(tool, "release_root")) {
		const char *did = json_string_value(json_object_get(args, "delegation"));

		if (!did) {
			session_send_error(s, id, -32602, "Invalid params: delegation is required");
			return true;
		}
		r = cordon_delegation_revoke(d->db, &actor, did);
		if (r < 0)
			tool_text_result(s, id, true, NULL, "Cannot release %s: %s.", did, cordon_db_last_error(d->db));
		else {
			tool_text_result(s, id, false, NULL, "Delegation %s released.", did);
			/* Instances started with a root it no longer has end. */
			workers_delegations_changed(d, NULL);
		}
		return true;
	}
	return false;
}

void calls_tick(struct cordon_daemon *d)
{
	progress_tick(d, cordon_loop_now_ms());
	approval_args_sweep(d);
}
