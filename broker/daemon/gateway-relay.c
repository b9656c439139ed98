/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sampling and elicitation: a connector's request to "the client" is relayed
 * only when its profile lists it in client_requests (checked by the worker),
 * only to a client that declared the capability, and labelled with the
 * connector (params._meta["io.cordon/connector"], and an elicitation's
 * message is prefixed "[connector] ") so the human sees who asks. The
 * target session: a per-session instance's own session; a shared instance
 * only when exactly one session has a call in flight on it (otherwise it is
 * ambiguous whose user would be asked, and the request is refused). An
 * elicitation answer is data for the connector and nothing else: it never
 * counts as an approval, and nothing in the authorization path reads it.
 * The worker hands requests up through worker_events.client_request
 * (registered by gateway.c); answers go down through worker_answer(). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway-relay.h"
#include "gateway-session.h"
#include "worker-io.h"

#define RELAYS_PER_SESSION_MAX 8

static struct dsession *target_session(struct dworker *w)
{
	struct dsession *found = NULL;

	if (w->session)
		return w->session;
	for (struct dsession *s = w->d->sessions; s; s = s->next)
		for (struct dcall *c = s->calls; c; c = c->next)
			if (c->w == w && c->state == DC_IN_FLIGHT) {
				if (found && found != s)
					return NULL;
				found = s;
			}
	return found;
}

void relay_server_request(struct dworker *w, json_t *msg, unsigned bit)
{
	struct cordon_daemon *d = w->d;
	json_t *id = json_object_get(msg, "id");
	struct dsession *s = target_session(w);
	struct drelay *r;
	json_t *params, *meta, *out;
	unsigned n = 0;

	if (!s || !s->initialized || (bit == CORDON_CLIENT_SAMPLING ? !s->client_sampling : !s->client_elicitation)) {
		json_t *err = json_pack("{s:i, s:s}", "code", -32601, "message",
					"cordon: no client session that supports this request can be asked");

		worker_answer(w, id, NULL, err);
		json_decref(err);
		return;
	}
	for (struct drelay *x = d->relays; x; x = x->next)
		n += x->s == s;
	r = n < RELAYS_PER_SESSION_MAX ? calloc(1, sizeof(*r)) : NULL;
	if (!r) {
		json_t *err = json_pack("{s:i, s:s}", "code", -32000, "message", "cordon: too many relayed requests");

		worker_answer(w, id, NULL, err);
		json_decref(err);
		return;
	}
	r->s = s;
	r->w = w;
	r->worker_id = json_deep_copy(id);
	snprintf(r->client_id, sizeof(r->client_id), "cordon-relay-%lld", (long long)++s->next_server_id);
	r->next = d->relays;
	d->relays = r;

	params = json_deep_copy(json_object_get(msg, "params"));
	if (!json_is_object(params)) {
		json_decref(params);
		params = json_object();
	}
	meta = json_object_get(params, "_meta");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(params, "_meta", meta);
	}
	json_object_set_new(meta, "io.cordon/connector", json_string(w->conn->id));
	if (bit == CORDON_CLIENT_ELICITATION) {
		const char *m = json_string_value(json_object_get(params, "message"));
		char *lab = NULL;

		if (asprintf(&lab, "[%s] %s", w->conn->id, m ? m : "") >= 0) {
			json_object_set_new(params, "message", json_string(lab));
			free(lab);
		}
	}
	out = json_pack("{s:s, s:s, s:s, s:o}", "jsonrpc", "2.0", "id", r->client_id, "method",
			json_string_value(json_object_get(msg, "method")), "params", params);
	session_send_json(s, out);
}

bool relay_client_response(struct dsession *s, const json_t *msg)
{
	const char *id = json_string_value(json_object_get(msg, "id"));

	if (!id)
		return false;
	for (struct drelay **p = &s->d->relays; *p; p = &(*p)->next) {
		struct drelay *r = *p;

		if (r->s != s || strcmp(r->client_id, id) != 0)
			continue;
		*p = r->next;
		if (r->w) {
			json_t *res = json_object_get(msg, "result");
			json_t *err = json_object_get(msg, "error");
			json_t *generic = NULL;

			if (!res && !json_is_object(err))
				err = generic =
					json_pack("{s:i, s:s}", "code", -32603, "message", "invalid client response");
			worker_answer(r->w, r->worker_id, res, err);
			json_decref(generic);
		}
		json_decref(r->worker_id);
		free(r);
		return true;
	}
	return false;
}

void relay_session_closed(struct dsession *s)
{
	for (struct drelay **p = &s->d->relays; *p;) {
		struct drelay *r = *p;

		if (r->s != s) {
			p = &r->next;
			continue;
		}
		*p = r->next;
		if (r->w) {
			json_t *err =
				json_pack("{s:i, s:s}", "code", -32000, "message", "cordon: the client session ended");

			worker_answer(r->w, r->worker_id, NULL, err);
			json_decref(err);
		}
		json_decref(r->worker_id);
		free(r);
	}
}

void relay_worker_gone(struct dworker *w)
{
	for (struct drelay *r = w->d->relays; r; r = r->next)
		if (r->w == w)
			r->w = NULL;
}
