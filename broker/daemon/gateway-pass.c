/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Resources, prompts and completions pass through only for connectors whose
 * profile says `resources: read` / `prompts: read`, and only once the
 * connector is installed. Each pass-through is audited like a read tool (a
 * decision record naming the method). Namespacing toward the client:
 * prompt names are `<connector>__<prompt>` (like tools); resource URIs are
 * kept as the connector gave them and the session remembers which connector
 * listed each URI (and each URI template), so resources/read and
 * completion/complete route to that connector and nowhere else. A URI no
 * listing in this session produced is refused. List calls fan out to every
 * eligible connector and return the first page of each, merged. A session
 * bound to one connector (gateway.c) sees that connector only: its lists
 * ask it alone, and its prompt names are the connector's own.
 *
 * A pass-through request is a call of kind DCK_PASS on gateway-call.c's call
 * object, with its own struct dcall_ops (pass_call_ops): the worker that
 * serves it reports through them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "gateway-call.h"
#include "gateway-names.h"
#include "gateway-pass.h"
#include "gateway-session.h"
#include "parse-util.h"
#include "rpc-error.h"
#include "worker.h"

struct dmulti {
	struct dsession *s;
	json_t *rpc_id;
	char key[32]; /* "resources", "resourceTemplates", "prompts" */
	json_t *acc;
	unsigned pending;
	int refs;
};

static void multi_unref(struct dmulti *m)
{
	if (--m->refs > 0)
		return;
	json_decref(m->rpc_id);
	json_decref(m->acc);
	free(m);
}

static void multi_part_done(struct dmulti *m)
{
	if (--m->pending == 0 && m->s)
		session_send_result(m->s, m->rpc_id, json_pack("{s:O}", m->key, m->acc));
}

/* Whether connector c passes prompts (or resources) through to session s:
 * its profile lets them, it is installed, and s sees it. */
static bool eligible(struct dsession *s, struct dconn *c, bool prompts)
{
	return (prompts ? c->profile->prompts_read : c->profile->resources_read) &&
	       daemon_conn_installed(s->d, c->id) && (!s->bound[0] || !strcmp(s->bound, c->id));
}

bool pass_offered(struct dsession *s, bool prompts)
{
	for (size_t i = 0; i < s->d->n_conns; i++)
		if (eligible(s, &s->d->conns[i], prompts))
			return true;
	return false;
}

static void audit_pass(struct dsession *s, const char *connector, const char *method)
{
	struct cordon_actor actor = cordon_actor_session(s->id);
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,  .event = CORDON_AUDIT_DECISION,
					 .actor = &actor,	   .session = s->id,
					 .connector = connector,   .tool = method,
					 .tier = CORDON_RISK_READ, .decision = "allow",
					 .reason = "passthrough" };

	(void)cordon_audit_append(s->d->db, &ev);
}

/* The worker answered a pass-through (or failed: msg NULL, why says how). */
static void pass_result(struct dcall *c, json_t *msg, const char *why)
{
	json_t *res = msg ? json_object_get(msg, "result") : NULL;

	if (c->multi) {
		struct dmulti *m = c->multi;
		json_t *arr = json_object_get(res, m->key);
		size_t i;
		json_t *x;

		json_array_foreach(arr, i, x)
		{
			json_t *cp = json_deep_copy(x);

			if (!strcmp(m->key, "prompts")) {
				char name[300];
				const char *n = json_string_value(json_object_get(x, "name"));

				if (!n || !m->s ||
				    gateway_name_show(m->s->bound, c->connector, n, name, sizeof(name)) < 0) {
					json_decref(cp);
					continue;
				}
				json_object_set_new(cp, "name", json_string(name));
			} else if (m->s) {
				const char *uri = json_string_value(json_object_get(x, "uri"));
				const char *tpl = json_string_value(json_object_get(x, "uriTemplate"));

				if (uri)
					json_object_set_new(m->s->res_routes, uri, json_string(c->connector));
				if (tpl)
					json_object_set_new(m->s->res_routes, tpl, json_string(c->connector));
			}
			json_array_append_new(m->acc, cp);
		}
		multi_part_done(m);
		return;
	}
	if (!c->s)
		return;
	if (res) {
		cordon_rpc_strip_markers(json_object_get(res, "_meta"));
		session_send_result(c->s, c->rpc_id, json_incref(res));
	} else if (msg)
		/* The connector's own error, bounded; or cordon's -32603 when
		 * it is malformed. */
		(void)session_send_connector_error(c->s, c->rpc_id, c->connector, msg);
	else if (c->state == DC_IN_FLIGHT)
		session_send_error(c->s, c->rpc_id, -32603, "cordon: connector %s %s while this request was in flight",
				   c->connector, why ? why : "failed");
	else
		session_send_error(c->s, c->rpc_id, -32603,
				   "cordon: connector %s is unavailable (%s); nothing was sent", c->connector,
				   why ? why : "no instance");
}

static void pass_detach(struct dcall *c)
{
	if (c->multi) {
		struct dmulti *m = c->multi;

		c->multi = NULL;
		multi_unref(m);
	}
	json_decref(c->pass_params);
	free(c->pass_method);
	c->pass_params = NULL;
	c->pass_method = NULL;
}

/* The instance could not serve it, or died with it in flight: the
 * request fails (a fan-out part counts as answered with nothing). */
static void pass_fail(struct dcall *c, const char *why)
{
	pass_result(c, NULL, why);
	call_free(c);
}

static void pass_answered(struct dcall *c, json_t *msg, size_t line_len)
{
	(void)line_len;
	pass_result(c, msg, NULL);
	call_free(c);
}

/* The instance is ready: send the request as it is. */
static void pass_ready(struct dcall *c)
{
	if (!c->s) {
		call_free(c);
		return;
	}
	if (!c->w || worker_send_call(c->w, c) < 0) {
		pass_fail(c, "cannot send");
		return;
	}
	c->state = DC_IN_FLIGHT;
}

static const struct dcall_ops pass_call_ops = {
	.ready = pass_ready,
	.failed = pass_fail,
	.lost = pass_fail,
	.result = pass_answered,
	.release = pass_detach,
};

/* Starts one pass-through request to connector c; the answer goes to the
 * client directly (m NULL) or into the fan-out m. */
static int pass_one(struct dsession *s, struct dconn *c, const json_t *id, const char *method, json_t *params,
		    struct dmulti *m)
{
	struct cordon_daemon *d = s->d;
	struct cordon_diag diag = {};
	struct dworker *w;
	struct dcall *call = calloc(1, sizeof(*call));

	if (!call || session_calls(s) >= SESSION_CALLS_MAX * 2) {
		/* Fan-outs count once per connector; the bound keeps a client
		 * from queueing without limit. */
		free(call);
		json_decref(params);
		if (m) {
			m->pending--;
			return -ENOBUFS;
		}
		session_send_error(s, id, -32000, "cordon: too many requests in flight on this session");
		return -ENOBUFS;
	}
	call->d = d;
	call->s = s;
	call->kind = DCK_PASS;
	call->ops = &pass_call_ops;
	call->rpc_id = json_deep_copy(id);
	call->pass_method = strdup(method);
	call->pass_params = params;
	call->multi = m;
	if (m)
		m->refs++;
	snprintf(call->connector, sizeof(call->connector), "%s", c->id);
	call->next = s->calls;
	s->calls = call;
	audit_pass(s, c->id, method);
	w = worker_get(d, c, s, true, &diag);
	if (!w) {
		pass_fail(call, diag.message);
		return -EIO;
	}
	if (w->state == DW_READY) {
		call->w = w;
		pass_ready(call);
	} else
		worker_enqueue(w, call);
	return 0;
}

void pass_session_closed(struct dsession *s)
{
	for (struct dcall *c = s->calls; c; c = c->next)
		if (c->multi)
			c->multi->s = NULL;
}

static void fan_out(struct dsession *s, const json_t *id, const char *method, const char *key, bool prompts)
{
	struct cordon_daemon *d = s->d;
	struct dmulti *m = calloc(1, sizeof(*m));

	if (!m) {
		session_send_error(s, id, -32603, "Internal error: out of memory");
		return;
	}
	m->s = s;
	m->rpc_id = json_deep_copy(id);
	m->acc = json_array();
	m->refs = 1;
	m->pending = 1; /* held until every part is started */
	snprintf(m->key, sizeof(m->key), "%s", key);
	for (size_t i = 0; i < d->n_conns; i++)
		if (eligible(s, &d->conns[i], prompts)) {
			m->pending++;
			if (pass_one(s, &d->conns[i], id, method, json_object(), m) < 0 && m->pending > 1) {
				/* pass_one already failed that part through
				 * pass_fail -> pass_result(NULL). */
			}
		}
	multi_part_done(m);
	multi_unref(m);
}

static struct dconn *prompt_conn(struct dsession *s, const char *name, const char **ret_rest)
{
	char id[CORDON_CONNECTOR_ID_MAX + 1];
	const char *rest;
	struct dconn *c;

	if (gateway_name_route(s->bound, name, id, &rest) < 0 || !connector_id_is_valid(id) ||
	    !(c = daemon_conn(s->d, id)) || !eligible(s, c, true))
		return NULL;
	*ret_rest = rest;
	return c;
}

static struct dconn *resource_conn(struct dsession *s, const char *uri)
{
	const char *id = uri ? json_string_value(json_object_get(s->res_routes, uri)) : NULL;
	struct dconn *c = id ? daemon_conn(s->d, id) : NULL;

	return c && eligible(s, c, false) ? c : NULL;
}

/* Returns false when method is not a pass-through method. */
bool pass_request(struct dsession *s, const char *method, const json_t *id, const json_t *params)
{
	if (!strcmp(method, "resources/list") || !strcmp(method, "resources/templates/list") ||
	    !strcmp(method, "prompts/list")) {
		bool prompts = method[0] == 'p';

		if (!pass_offered(s, prompts))
			return false;
		fan_out(s, id, method,
			prompts				    ? "prompts"
			: !strcmp(method, "resources/list") ? "resources"
							    : "resourceTemplates",
			prompts);
		return true;
	}
	if (!strcmp(method, "resources/read")) {
		const char *uri = json_string_value(json_object_get(params, "uri"));
		struct dconn *c;

		if (!pass_offered(s, false))
			return false;
		c = resource_conn(s, uri);
		if (!c) {
			session_send_error(s, id, -32602, "Unknown resource: list resources first (%.200s)",
					   uri ? uri : "no uri");
			return true;
		}
		(void)pass_one(s, c, id, method, json_pack("{s:s}", "uri", uri), NULL);
		return true;
	}
	if (!strcmp(method, "prompts/get")) {
		const char *rest = NULL;
		struct dconn *c;
		json_t *p;

		if (!pass_offered(s, true))
			return false;
		c = prompt_conn(s, json_string_value(json_object_get(params, "name")), &rest);
		if (!c) {
			session_send_error(s, id, -32602, "Unknown prompt");
			return true;
		}
		p = json_deep_copy(params);
		json_object_set_new(p, "name", json_string(rest));
		(void)pass_one(s, c, id, method, p, NULL);
		return true;
	}
	if (!strcmp(method, "completion/complete")) {
		json_t *ref = json_object_get(params, "ref");
		const char *type = json_string_value(json_object_get(ref, "type"));
		struct dconn *c = NULL;
		const char *rest = NULL;
		json_t *p;

		if (!pass_offered(s, true) && !pass_offered(s, false))
			return false;
		if (type && !strcmp(type, "ref/prompt"))
			c = prompt_conn(s, json_string_value(json_object_get(ref, "name")), &rest);
		else if (type && !strcmp(type, "ref/resource"))
			c = resource_conn(s, json_string_value(json_object_get(ref, "uri")));
		if (!c) {
			session_send_error(s, id, -32602, "Unknown completion reference");
			return true;
		}
		p = json_deep_copy(params);
		if (rest)
			json_object_set_new(json_object_get(p, "ref"), "name", json_string(rest));
		(void)pass_one(s, c, id, method, p, NULL);
		return true;
	}
	return false;
}
