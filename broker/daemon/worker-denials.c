/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Egress denials in the audit log. A denial by the egress policy is
 * audited (connector, session, hook, generation; the destination goes to
 * the broker log, not the audit record) and logged. A connector that
 * hammers a denied destination must not turn the audit log into a denial
 * of service on the broker: one record per instance per second at most,
 * carrying the count of denials it stands for.
 *
 * No denial is lost to the rate limit or to timing: what is held back is
 * written when the instance ends, and an instance the broker stopped stays
 * known (struct dgone) until the launcher helper reports its exit, because
 * the helper forwards an instance's denials before its exit, possibly after
 * the broker has freed the worker. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "cleanup.h"
#include "daemon-log.h"
#include "log.h"
#include "loop.h"
#include "worker-denials.h"

#define DENIAL_AUDIT_INTERVAL_MS 1000
/* Instances waiting for their exit report; beyond this the oldest is
 * audited and forgotten (its later denials are logged, not audited). */
#define DENIALS_GONE_MAX 256

struct denial_subject {
	const char *connector, *session, *tag;
	uint64_t generation;
	struct ddenials *acc;
};

static void subject_flush(struct cordon_daemon *d, const struct denial_subject *s, const json_t *event, uint64_t now)
{
	struct cordon_actor sys = cordon_actor_system();
	_cleanup_free_ char *line = event ? json_dumps(event, JSON_COMPACT) : NULL;
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
					 .event = CORDON_AUDIT_NETWORK_DENIED,
					 .actor = &sys,
					 .session = s->session,
					 .connector = s->connector,
					 .reason = "egress-denied",
					 .state = s->acc->hook[0] ? s->acc->hook : NULL,
					 .generation = (int64_t)s->generation,
					 .count = (int64_t)s->acc->pending };

	if (s->acc->pending == 0)
		return;
	if (cordon_audit_append(d->db, &ev) < 0)
		log_error("connector %s instance %s: cannot audit %llu egress denials", s->connector, s->tag,
			  (unsigned long long)s->acc->pending);
	log_warning("connector %s instance %s: egress denied (%llu since the last report)%s%s", s->connector, s->tag,
		    (unsigned long long)s->acc->pending, line ? ": " : "", line ? line : "");
	s->acc->pending = 0;
	s->acc->audit_ms = now;
}

static void subject_note(struct cordon_daemon *d, const struct denial_subject *s, const json_t *event)
{
	const char *hook = json_string_value(json_object_get(event, "hook"));
	uint64_t now = cordon_loop_now_ms();

	s->acc->pending++;
	snprintf(s->acc->hook, sizeof(s->acc->hook), "%s", hook ? hook : "");
	if (s->acc->audit_ms && now - s->acc->audit_ms < DENIAL_AUDIT_INTERVAL_MS)
		return;
	subject_flush(d, s, event, now);
}

static struct denial_subject worker_subject(struct dworker *w)
{
	return (struct denial_subject){ .connector = w->conn->id,
					.session = w->session ? w->session->id : NULL,
					.tag = w->tag,
					.generation = w->generation,
					.acc = &w->denials };
}

static struct denial_subject gone_subject(struct dgone *g)
{
	return (struct denial_subject){ .connector = g->connector,
					.session = g->session,
					.tag = g->tag,
					.generation = g->generation,
					.acc = &g->denials };
}

static void gone_free(struct dgone *g)
{
	free(g->connector);
	free(g->session);
	free(g);
}

/* Unlinks *pg (audits what it held back first). */
/* have_status: the helper reported the exit with its wait status. */
static void gone_drop(struct cordon_daemon *d, struct dgone **pg, bool have_status, int status)
{
	struct dgone *g = *pg;
	struct denial_subject s = gone_subject(g);

	dlog_instance_exited(g->connector, g->tag, 0, have_status, status, g->reason, g->crashed);

	subject_flush(d, &s, NULL, cordon_loop_now_ms());
	*pg = g->next;
	d->n_gone--;
	gone_free(g);
}

void worker_network_denied(struct cordon_daemon *d, uint32_t instance, const json_t *event)
{
	for (struct dworker *w = d->workers; w; w = w->next)
		if (w->instance == instance) {
			struct denial_subject s = worker_subject(w);

			subject_note(d, &s, event);
			return;
		}
	for (struct dgone *g = d->gone; g; g = g->next)
		if (g->instance == instance) {
			struct denial_subject s = gone_subject(g);

			subject_note(d, &s, event);
			return;
		}
	log_warning("egress denial of instance %u, which the broker no longer knows", (unsigned)instance);
}

void denials_worker_ended(struct dworker *w, bool exit_reported, const char *why, bool crashed)
{
	struct cordon_daemon *d = w->d;
	struct denial_subject s = worker_subject(w);
	struct dgone *g;

	if (exit_reported || !d->have_spawner)
		goto flush;
	g = calloc(1, sizeof(*g));
	if (!g)
		goto flush;
	g->connector = strdup(w->conn->id);
	g->session = w->session ? strdup(w->session->id) : NULL;
	if (!g->connector || (w->session && !g->session)) {
		gone_free(g);
		goto flush;
	}
	g->instance = w->instance;
	g->generation = w->generation;
	g->denials = w->denials;
	memcpy(g->tag, w->tag, sizeof(g->tag));
	snprintf(g->reason, sizeof(g->reason), "%s", why);
	g->crashed = crashed;
	g->next = d->gone;
	d->gone = g;
	if (++d->n_gone > DENIALS_GONE_MAX) {
		struct dgone **pg = &d->gone;

		while ((*pg)->next)
			pg = &(*pg)->next;
		gone_drop(d, pg, false, 0);
	}
	return;
flush:
	dlog_instance_exited(w->conn->id, w->tag, (int)w->pid, w->have_wait_status, w->wait_status, why, crashed);
	subject_flush(d, &s, NULL, cordon_loop_now_ms());
}

void denials_instance_exited(struct cordon_daemon *d, uint32_t instance, int status)
{
	for (struct dgone **pg = &d->gone; *pg; pg = &(*pg)->next)
		if ((*pg)->instance == instance) {
			gone_drop(d, pg, true, status);
			return;
		}
}

void denials_forget_all(struct cordon_daemon *d)
{
	while (d->gone)
		gone_drop(d, &d->gone, false, 0);
}
