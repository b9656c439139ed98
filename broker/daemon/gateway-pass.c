/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Resources, prompts and completions pass through only for connectors whose
 * profile says `resources: read` / `prompts: read`, and only once the
 * connector is installed. Each pass-through is audited like a read tool (a
 * decision record naming the method).
 *
 * Names toward the client. A session bound to one connector (gateway.c)
 * sees that connector alone, under its own prompt names and resource URIs:
 * every URI it sends goes to that connector. The multiplexed view prefixes
 * prompt names `<connector>__<prompt>` (like tools) and resource URIs
 * `cordon+<connector>:` (the connector's URI follows unchanged, so
 * "fake://a" of connector docs is "cordon+docs:fake://a"). Connector ids
 * are [a-z0-9-], so the prefix is itself a valid URI scheme, the first ':'
 * after it ends the id, and stripping it gives back the connector's URI
 * exactly: reversible, and two connectors serving the same URI never
 * collide. A prefix and nothing inside the URI: a URI template
 * "cordon+docs:fake://t/{name}" expands like the connector's own, and the
 * expansion routes like any URI. Applied to resources/list, the
 * uriTemplate of resources/templates/list, the `uri` of resources/read
 * contents and of prompts/get resource items, resources/subscribe and
 * unsubscribe, notifications/resources/updated and completion/complete's
 * ref/resource; a URI coming back is checked strictly (at most
 * GATEWAY_URI_MAX bytes, a valid id of a connector the session sees). The
 * `uri` of resource_link and embedded resource items in tools/call results
 * gets the same prefix (gateway-call.c, through gateway-names.c), so a link
 * a tool returned reads back from the connector that returned it. A URI
 * without the prefix (typed by hand, or from a result that named it in
 * text) routes to the only connector passing resources through when there
 * is exactly one, and is refused otherwise. No read needs a listing first:
 * routing uses the URI alone.
 *
 * Lists toward the client come in pages of PASS_PAGE_SIZE items with an
 * opaque nextCursor (tools/list too, gateway.c). A listing without a cursor
 * gathers the whole list, following each connector's own nextCursor for at
 * most PASS_UPSTREAM_PAGES_MAX pages, PASS_UPSTREAM_ITEMS_MAX items and
 * PASS_UPSTREAM_BYTES_MAX bytes per connector (beyond: the rest is left
 * out, logged), merged in the order of
 * the connectors' ids, and keeps it as the session's snapshot of that list;
 * the cursor is "<snapshot generation>.<offset>". A new listing of the same
 * kind replaces the snapshot (its old cursors become unknown); a cursor that
 * is not exactly one this session was given for a live snapshot gets -32602
 * "Invalid params: unknown cursor".
 *
 * Subscriptions. resources/subscribe goes to the owning connector only when
 * its latest instance announced resources.subscribe; the session records
 * (connector, URI), at most PASS_SUBS_MAX. notifications/resources/updated
 * from an instance reaches only the sessions it serves that subscribed to
 * that URI. unsubscribe (and the end of a session) tells a shared instance
 * only when no other session it serves is still subscribed to the URI; a
 * per-session instance ends with its session anyway. An instance that
 * restarts is not subscribed again: the client subscribes again.
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
#include "log.h"
#include "parse-util.h"
#include "rpc-error.h"
#include "worker.h"

enum { PL_TOOLS, PL_PROMPTS, PL_RESOURCES, PL_TEMPLATES, PL_N };
static const char *const list_keys[PL_N] = { "tools", "prompts", "resources", "resourceTemplates" };

/* What a session keeps here (s->pass, made on first use). */
struct dpass {
	json_t *subs; /* "<connector>:<uri>" -> true */
	struct {
		json_t *items; /* the whole list, NULL: none */
		uint64_t gen;
	} lists[PL_N];
	uint64_t gen;
};

struct dmulti {
	struct dsession *s;
	json_t *rpc_id;
	const char *method;
	int kind;	 /* PL_* */
	json_t *per;	 /* per connector (by index in d->conns): the items gathered */
	unsigned *pages; /* per connector: pages asked for after the first */
	uint64_t *bytes; /* per connector: bytes of its answers */
	bool cut;	 /* some connector's list was cut at a bound */
	unsigned pending;
	int refs;
};

static struct dpass *pass_state(struct dsession *s)
{
	if (!s->pass) {
		s->pass = calloc(1, sizeof(*s->pass));
		if (s->pass)
			s->pass->subs = json_object();
	}
	return s->pass;
}

static int list_kind(const char *key)
{
	for (int i = 0; i < PL_N; i++)
		if (!strcmp(key, list_keys[i]))
			return i;
	return -1;
}

/* ---- pages toward the client --------------------------------------------- */

static void page_send(struct dsession *s, const json_t *id, int kind, size_t off)
{
	struct dpass *p = s->pass;
	json_t *items = p->lists[kind].items, *page = json_array(), *res;
	size_t n = json_array_size(items);

	for (size_t i = off; i < n && i < off + PASS_PAGE_SIZE; i++)
		json_array_append(page, json_array_get(items, i));
	res = json_pack("{s:o}", list_keys[kind], page);
	if (off + PASS_PAGE_SIZE < n) {
		char cur[48];

		snprintf(cur, sizeof(cur), "%llu.%zu", (unsigned long long)p->lists[kind].gen, off + PASS_PAGE_SIZE);
		json_object_set_new(res, "nextCursor", json_string(cur));
	}
	session_send_result(s, id, res);
}

void pass_page_first(struct dsession *s, const json_t *id, const char *key, json_t *items)
{
	struct dpass *p = pass_state(s);
	int kind = list_kind(key);

	if (!p || kind < 0 || !items) {
		json_decref(items);
		session_send_error(s, id, -32603, "Internal error: out of memory");
		return;
	}
	json_decref(p->lists[kind].items);
	p->lists[kind].items = items;
	p->lists[kind].gen = ++p->gen;
	page_send(s, id, kind, 0);
}

/* Parses "<gen>.<offset>": decimal digits only, each at most 19 of them. */
static bool cursor_parse(const char *cur, uint64_t *ret_gen, uint64_t *ret_off)
{
	const char *dot = strchr(cur, '.');
	char a[24], b[24];
	size_t la, lb;

	if (!dot || strlen(cur) > 40)
		return false;
	la = (size_t)(dot - cur);
	lb = strlen(dot + 1);
	if (la == 0 || lb == 0 || la > 19 || lb > 19 || strspn(cur, "0123456789") != la ||
	    strspn(dot + 1, "0123456789") != lb)
		return false;
	memcpy(a, cur, la);
	a[la] = 0;
	memcpy(b, dot + 1, lb);
	b[lb] = 0;
	return parse_u64(a, ret_gen) >= 0 && parse_u64(b, ret_off) >= 0;
}

bool pass_page_next(struct dsession *s, const json_t *id, const json_t *params, const char *key)
{
	json_t *cursor = json_object_get(params, "cursor");
	int kind = list_kind(key);
	uint64_t gen, off;
	struct dpass *p = s->pass;

	if (!cursor || json_is_null(cursor))
		return false;
	if (kind < 0 || !json_is_string(cursor) || !cursor_parse(json_string_value(cursor), &gen, &off) || !p ||
	    !p->lists[kind].items || gen != p->lists[kind].gen || off == 0 || off % PASS_PAGE_SIZE != 0 ||
	    off >= json_array_size(p->lists[kind].items)) {
		session_send_error(s, id, -32602, "Invalid params: unknown cursor");
		return true;
	}
	page_send(s, id, kind, (size_t)off);
	return true;
}

/* ---- resource URIs ---------------------------------------------------- */

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

/* A connector's URI as session s sees it (a new string; NULL: none). */
/* The connector a client's URI routes to, and that connector's own URI
 * (*ret_uri points into uri); NULL with an error message in why. */
static struct dconn *uri_route(struct dsession *s, const char *uri, const char **ret_uri, char *why, size_t why_size)
{
	struct dconn *c = NULL;

	if (!uri || !*uri) {
		snprintf(why, why_size, "Invalid params: uri must be a non-empty string");
		return NULL;
	}
	if (strlen(uri) > GATEWAY_URI_MAX) {
		snprintf(why, why_size, "Invalid params: uri longer than %d bytes", GATEWAY_URI_MAX);
		return NULL;
	}
	*ret_uri = uri;
	if (s->bound[0]) {
		c = daemon_conn(s->d, s->bound);
	} else if (!strncmp(uri, GATEWAY_URI_PREFIX, strlen(GATEWAY_URI_PREFIX))) {
		const char *id = uri + strlen(GATEWAY_URI_PREFIX), *colon = strchr(id, ':');
		char conn[CORDON_CONNECTOR_ID_MAX + 1];

		if (!colon || colon == id || (size_t)(colon - id) > CORDON_CONNECTOR_ID_MAX || !colon[1]) {
			snprintf(why, why_size,
				 "Invalid params: a resource URI here is " GATEWAY_URI_PREFIX
				 "<connector>:<uri> (%.200s)",
				 uri);
			return NULL;
		}
		memcpy(conn, id, (size_t)(colon - id));
		conn[colon - id] = 0;
		c = connector_id_is_valid(conn) ? daemon_conn(s->d, conn) : NULL;
		if (!c || !eligible(s, c, false)) {
			snprintf(why, why_size, "Unknown resource: no connector '%.40s' serves resources here", conn);
			return NULL;
		}
		*ret_uri = colon + 1;
		return c;
	} else {
		/* Unprefixed: the only connector passing resources through. */
		for (size_t i = 0; i < s->d->n_conns; i++)
			if (eligible(s, &s->d->conns[i], false)) {
				if (c) {
					snprintf(why, why_size,
						 "Invalid params: several connectors serve resources here; name one "
						 "as " GATEWAY_URI_PREFIX "<connector>:<uri> (%.200s)",
						 uri);
					return NULL;
				}
				c = &s->d->conns[i];
			}
	}
	if (!c || !eligible(s, c, false)) {
		snprintf(why, why_size, "Unknown resource: no connector serves resources here (%.200s)", uri);
		return NULL;
	}
	return c;
}

/* The `uri` of resource contents (and of resource and resource_link items
 * in prompt messages) in a result from connector to session s. */
static void result_show_uris(struct dsession *s, const char *connector, const char *method, json_t *res)
{
	size_t i;
	json_t *x;

	if (s->bound[0])
		return;
	if (!strcmp(method, "resources/read")) {
		json_array_foreach(json_object_get(res, "contents"), i, x)
			gateway_uri_show_in(s->bound, connector, x, "uri");
	} else if (!strcmp(method, "prompts/get")) {
		json_array_foreach(json_object_get(res, "messages"), i, x)
			gateway_content_show_uri(s->bound, connector, json_object_get(x, "content"));
	}
}

/* ---- subscriptions -------------------------------------------------------- */

static char *sub_key(const char *connector, const char *uri)
{
	char *k;

	return asprintf(&k, "%s:%s", connector, uri) < 0 ? NULL : k;
}

static bool subscribed(struct dsession *s, const char *key)
{
	return s->pass && json_object_get(s->pass->subs, key);
}

/* Whether a session other than s that shared instance w serves is
 * subscribed to key. */
static bool others_subscribed(struct dsession *s, struct dworker *w, const char *key)
{
	for (struct dsession *o = s->d->sessions; o; o = o->next)
		if (o != s && o->initialized && !o->closing && (!o->bound[0] || !strcmp(o->bound, w->conn->id)) &&
		    subscribed(o, key))
			return true;
	return false;
}

/* Whether an unsubscribe of key by s must reach the connector: its
 * instance for s lives and no other session it serves still wants it. */
static bool unsubscribe_upstream(struct dsession *s, struct dconn *c, const char *key, struct dworker **ret_w)
{
	struct dworker *w = worker_get(s->d, c, s, false, NULL);

	*ret_w = w;
	return w && w->state == DW_READY && (w->session || !others_subscribed(s, w, key));
}

void pass_resource_updated(struct dsession *s, const char *connector, const json_t *params)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	char *key = uri ? sub_key(connector, uri) : NULL;
	char *shown;

	if (key && subscribed(s, key) && (shown = gateway_uri_show(s->bound, connector, uri))) {
		session_send_json(s, json_pack("{s:s, s:s, s:{s:s}}", "jsonrpc", "2.0", "method",
					       "notifications/resources/updated", "params", "uri", shown));
		free(shown);
	}
	free(key);
}

/* ---- pass-through calls ---------------------------------------------- */

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

static void multi_unref(struct dmulti *m)
{
	if (--m->refs > 0)
		return;
	json_decref(m->rpc_id);
	json_decref(m->per);
	free(m->pages);
	free(m->bytes);
	free(m);
}

/* One part of a fan-out is answered: when it was the last, the merged
 * list (in the order of d->conns) becomes the session's snapshot. */
static void multi_part_done(struct dmulti *m)
{
	json_t *all, *part;
	size_t i;

	if (--m->pending > 0 || !m->s)
		return;
	all = json_array();
	json_array_foreach(m->per, i, part) json_array_extend(all, part);
	if (m->cut)
		log_info("session %s: %s cut at %u pages, %u items or %u bytes per connector", m->s->id, m->method,
			 PASS_UPSTREAM_PAGES_MAX, PASS_UPSTREAM_ITEMS_MAX, PASS_UPSTREAM_BYTES_MAX);
	pass_page_first(m->s, m->rpc_id, list_keys[m->kind], all);
}

static int pass_one(struct dsession *s, struct dconn *c, const json_t *id, const char *method, json_t *params,
		    struct dmulti *m);

/* A page of a fan-out part from connector c: its items (named as the
 * session sees them) join the connector's part; a nextCursor asks for the
 * next page, within the bounds. */
static void multi_page(struct dmulti *m, struct dcall *c, json_t *res, size_t line_len)
{
	struct dsession *s = m->s;
	struct dconn *conn = s ? daemon_conn(s->d, c->connector) : NULL;
	size_t idx, i;
	json_t *part, *x;
	const char *next;

	if (!conn)
		return;
	idx = (size_t)(conn - s->d->conns);
	part = json_array_get(m->per, idx);
	if (m->bytes[idx] + line_len > PASS_UPSTREAM_BYTES_MAX) {
		m->cut = true;
		return;
	}
	m->bytes[idx] += line_len;
	json_array_foreach(json_object_get(res, list_keys[m->kind]), i, x)
	{
		json_t *cp;

		if (!json_is_object(x))
			continue;
		if (json_array_size(part) >= PASS_UPSTREAM_ITEMS_MAX) {
			m->cut = true;
			return;
		}
		cp = json_deep_copy(x);
		if (m->kind == PL_PROMPTS) {
			char name[300];
			const char *n = json_string_value(json_object_get(x, "name"));

			if (!n || gateway_name_show(s->bound, c->connector, n, name, sizeof(name)) < 0) {
				json_decref(cp);
				continue;
			}
			json_object_set_new(cp, "name", json_string(name));
		} else if (m->kind == PL_RESOURCES)
			gateway_uri_show_in(s->bound, c->connector, cp, "uri");
		else
			gateway_uri_show_in(s->bound, c->connector, cp, "uriTemplate");
		json_array_append_new(part, cp);
	}
	next = json_string_value(json_object_get(res, "nextCursor"));
	if (!next || !*next)
		return;
	if (++m->pages[idx] >= PASS_UPSTREAM_PAGES_MAX || strlen(next) > GATEWAY_URI_MAX) {
		m->cut = true;
		return;
	}
	m->pending++;
	(void)pass_one(s, conn, m->rpc_id, m->method, json_pack("{s:s}", "cursor", next), m);
}

/* The worker answered a pass-through (or failed: msg NULL, why says how). */
static void pass_result(struct dcall *c, json_t *msg, size_t line_len, const char *why)
{
	json_t *res = msg ? json_object_get(msg, "result") : NULL;

	if (c->multi) {
		/* A connector that fails counts as one with nothing to list. */
		if (json_is_object(res))
			multi_page(c->multi, c, res, line_len);
		multi_part_done(c->multi);
		return;
	}
	if (!c->s)
		return;
	if (!res && !strcmp(c->pass_method, "resources/subscribe") && c->s->pass) {
		/* Not subscribed after all. */
		char *key = sub_key(c->connector, json_string_value(json_object_get(c->pass_params, "uri")));

		if (key)
			json_object_del(c->s->pass->subs, key);
		free(key);
	}
	if (res) {
		json_t *cp = json_deep_copy(res);

		cordon_rpc_strip_markers(json_object_get(cp, "_meta"));
		result_show_uris(c->s, c->connector, c->pass_method, cp);
		session_send_result(c->s, c->rpc_id, cp);
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
	pass_result(c, NULL, 0, why);
	call_free(c);
}

static void pass_answered(struct dcall *c, json_t *msg, size_t line_len)
{
	pass_result(c, msg, line_len, NULL);
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
	struct dpass *p = s->pass;

	for (struct dcall *c = s->calls; c; c = c->next)
		if (c->multi)
			c->multi->s = NULL;
	if (!p)
		return;
	/* Its subscriptions: a shared instance hears unsubscribe for those no
	 * other session keeps. */
	const char *key;
	json_t *v;

	json_object_foreach(p->subs, key, v)
	{
		char conn[CORDON_CONNECTOR_ID_MAX + 1];
		const char *colon = strchr(key, ':');
		struct dconn *c;
		struct dworker *w;

		if (!colon || (size_t)(colon - key) > CORDON_CONNECTOR_ID_MAX)
			continue;
		memcpy(conn, key, (size_t)(colon - key));
		conn[colon - key] = 0;
		c = daemon_conn(s->d, conn);
		if (c && unsubscribe_upstream(s, c, key, &w) && !w->session)
			(void)worker_send_quiet(w, "resources/unsubscribe", json_pack("{s:s}", "uri", colon + 1));
	}
	json_decref(p->subs);
	for (int i = 0; i < PL_N; i++)
		json_decref(p->lists[i].items);
	free(p);
	s->pass = NULL;
}

static void fan_out(struct dsession *s, const json_t *id, const char *method, int kind)
{
	struct cordon_daemon *d = s->d;
	struct dmulti *m = calloc(1, sizeof(*m));

	if (m) {
		m->pages = calloc(d->n_conns ? d->n_conns : 1, sizeof(*m->pages));
		m->bytes = calloc(d->n_conns ? d->n_conns : 1, sizeof(*m->bytes));
	}
	if (!m || !m->pages || !m->bytes) {
		if (m) {
			free(m->pages);
			free(m->bytes);
			free(m);
		}
		session_send_error(s, id, -32603, "Internal error: out of memory");
		return;
	}
	m->s = s;
	m->rpc_id = json_deep_copy(id);
	m->method = method; /* a literal of pass_request() */
	m->kind = kind;
	m->per = json_array();
	m->refs = 1;
	m->pending = 1; /* held until every part is started */
	for (size_t i = 0; i < d->n_conns; i++)
		json_array_append_new(m->per, json_array());
	for (size_t i = 0; i < d->n_conns; i++)
		if (eligible(s, &d->conns[i], kind == PL_PROMPTS)) {
			m->pending++;
			/* A part that fails at once is already answered with
			 * nothing (pass_fail). */
			(void)pass_one(s, &d->conns[i], id, method, json_object(), m);
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

/* resources/subscribe and unsubscribe. */
static void do_subscribe(struct dsession *s, const json_t *id, const json_t *params, bool sub)
{
	const char *method = sub ? "resources/subscribe" : "resources/unsubscribe";
	const char *uri = NULL;
	char why[400];
	struct dconn *c = uri_route(s, json_string_value(json_object_get(params, "uri")), &uri, why, sizeof(why));
	struct dpass *p = pass_state(s);
	struct dworker *w;
	char *key;

	if (!c) {
		session_send_error(s, id, -32602, "%s", why);
		return;
	}
	if (!(c->caps & DCONN_CAP_RES_SUBSCRIBE)) {
		session_send_error(s, id, -32601, "Method not found: connector %s does not offer %s", c->id, method);
		return;
	}
	key = sub_key(c->id, uri);
	if (!p || !key) {
		free(key);
		session_send_error(s, id, -32603, "Internal error: out of memory");
		return;
	}
	if (sub) {
		if (!json_object_get(p->subs, key) && json_object_size(p->subs) >= PASS_SUBS_MAX) {
			free(key);
			session_send_error(s, id, -32000, "cordon: at most %d resource subscriptions per session",
					   PASS_SUBS_MAX);
			return;
		}
		json_object_set_new(p->subs, key, json_true());
	} else {
		if (!json_object_get(p->subs, key)) {
			free(key);
			session_send_result(s, id, json_object()); /* nothing to undo */
			return;
		}
		json_object_del(p->subs, key);
		if (!unsubscribe_upstream(s, c, key, &w)) {
			/* Others still want it (or no instance holds it). */
			free(key);
			session_send_result(s, id, json_object());
			return;
		}
	}
	free(key);
	(void)pass_one(s, c, id, method, json_pack("{s:s}", "uri", uri), NULL);
}

void pass_capabilities(struct dsession *s, json_t *caps)
{
	bool res = false, prompts = false;
	unsigned have = 0;

	for (size_t i = 0; i < s->d->n_conns; i++) {
		struct dconn *c = &s->d->conns[i];

		if (eligible(s, c, false)) {
			res = true;
			have |= c->caps & (DCONN_CAP_RES_SUBSCRIBE | DCONN_CAP_RES_LIST_CHANGED);
		}
		if (eligible(s, c, true)) {
			prompts = true;
			have |= c->caps & DCONN_CAP_PROMPTS_LIST_CHANGED;
		}
	}
	if (res) {
		json_t *r = json_object();

		if (have & DCONN_CAP_RES_SUBSCRIBE)
			json_object_set_new(r, "subscribe", json_true());
		if (have & DCONN_CAP_RES_LIST_CHANGED)
			json_object_set_new(r, "listChanged", json_true());
		json_object_set_new(caps, "resources", r);
	}
	if (prompts)
		json_object_set_new(caps, "prompts",
				    (have & DCONN_CAP_PROMPTS_LIST_CHANGED) ? json_pack("{s:b}", "listChanged", 1)
									    : json_object());
	if (res || prompts)
		json_object_set_new(caps, "completions", json_object());
}

/* Returns false when method is not a pass-through method. */
bool pass_request(struct dsession *s, const char *method, const json_t *id, const json_t *params)
{
	char why[400];

	if (!strcmp(method, "resources/list") || !strcmp(method, "resources/templates/list") ||
	    !strcmp(method, "prompts/list")) {
		int kind = method[0] == 'p'		       ? PL_PROMPTS
			   : !strcmp(method, "resources/list") ? PL_RESOURCES
							       : PL_TEMPLATES;

		if (!pass_offered(s, kind == PL_PROMPTS))
			return false;
		if (!pass_page_next(s, id, params, list_keys[kind]))
			fan_out(s, id,
				kind == PL_PROMPTS     ? "prompts/list"
				: kind == PL_RESOURCES ? "resources/list"
						       : "resources/templates/list",
				kind);
		return true;
	}
	if (!strcmp(method, "resources/read")) {
		const char *uri = NULL;
		struct dconn *c;

		if (!pass_offered(s, false))
			return false;
		c = uri_route(s, json_string_value(json_object_get(params, "uri")), &uri, why, sizeof(why));
		if (!c) {
			session_send_error(s, id, -32602, "%s", why);
			return true;
		}
		(void)pass_one(s, c, id, method, json_pack("{s:s}", "uri", uri), NULL);
		return true;
	}
	if (!strcmp(method, "resources/subscribe") || !strcmp(method, "resources/unsubscribe")) {
		if (!pass_offered(s, false))
			return false;
		do_subscribe(s, id, params, method[10] == 's');
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
		else if (type && !strcmp(type, "ref/resource") && pass_offered(s, false))
			c = uri_route(s, json_string_value(json_object_get(ref, "uri")), &rest, why, sizeof(why));
		if (!c) {
			session_send_error(s, id, -32602, "Unknown completion reference");
			return true;
		}
		p = json_deep_copy(params);
		json_object_set_new(json_object_get(p, "ref"), type[4] == 'p' ? "name" : "uri", json_string(rest));
		(void)pass_one(s, c, id, method, p, NULL);
		return true;
	}
	return false;
}
