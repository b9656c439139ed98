/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon.h contract: what the operator surfaces (operator.c,
 * operator-ops.c, http.c) read of cordond's core and the commands they give
 * it after a committed change. Below the surfaces and daemon-core.c (which
 * starts them), above the gateway and the workers, whose I/O these commands
 * cause (a waiting call goes on, instances end or launch, sessions hear
 * list_changed). The daemon core is the edge of the program: it logs once
 * per event. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "approval-args.h"
#include "audit.h"
#include "approvals.h"
#include "broker.h"
#include "cleanup.h"
#include "connectors.h"
#include "cordon-version.h"
#include "daemon-state.h"
#include "daemon-log.h"
#include "daemon.h"
#include "gateway-call.h"
#include "gateway-session.h"
#include "grants.h"
#include "log.h"
#include "parse-util.h"
#include "worker.h"

/* ---- daemon.h ------------------------------------------------------------ */

struct cordon_loop *cordon_daemon_loop(struct cordon_daemon *d)
{
	return d->loop;
}

struct cordon_db *cordon_daemon_db(struct cordon_daemon *d)
{
	return d->db;
}

long long cordon_daemon_session_uid(struct cordon_daemon *d, const char *session)
{
	for (struct dsession *s = session ? d->sessions : NULL; s; s = s->next)
		if (!strcmp(s->id, session))
			return (long long)s->cred.uid;
	return -1;
}

struct cordon_key *cordon_daemon_key(struct cordon_daemon *d)
{
	return d->key;
}

const struct cordon_profile *cordon_daemon_profile(struct cordon_daemon *d, const char *connector)
{
	struct dconn *c = daemon_conn(d, connector);

	return c ? c->profile : NULL;
}

const char *cordon_daemon_health(struct cordon_daemon *d)
{
	struct cordon_db_counters cnt = {};
	/* The kernel's verdict from the launcher's probe (the control-verdict
	 * table, docs/kernel-matrix.md): unusable means every launch is
	 * refused. A spawner whose report has no verdict (the tests' direct
	 * spawner) adds nothing. */
	const char *kernel = json_string_value(json_object_get(json_object_get(d->capabilities, "verdict"), "status"));
	bool degraded = false;

	if (d->helper_lost || (d->have_spawner && d->spawner.alive && !d->spawner.alive(d->spawner.userdata)))
		return "failing";
	if (kernel && strcmp(kernel, "unusable") == 0)
		return "failing";
	cordon_db_get_counters(d->db, &cnt);
	if (cnt.audit_append_failures)
		return "failing";
	for (size_t i = 0; i < d->n_conns; i++)
		if (d->conns[i].failing)
			return "failing";
	if (kernel && strcmp(kernel, "ok") != 0)
		degraded = true;
	if (d->n_bad_profiles_total > 0)
		degraded = true;
	for (struct dworker *w = d->workers; w; w = w->next)
		if (json_is_true(json_object_get(w->report, "degraded")))
			degraded = true;
	if (!json_is_string(json_object_get(d->self_sandbox, "landlock")) ||
	    strcmp(json_string_value(json_object_get(d->self_sandbox, "landlock")), "enforced") != 0)
		degraded = true;
	return degraded ? "degraded" : "ok";
}

static const char *conn_state(struct cordon_daemon *d, struct dconn *c)
{
	if (!daemon_conn_installed(d, c->id))
		return "available";
	if (c->failing)
		return "failing";
	for (struct dworker *w = d->workers; w; w = w->next)
		if (w->conn == c)
			return "running";
	return "installed";
}

json_t *cordon_daemon_connectors(struct cordon_daemon *d)
{
	json_t *out = json_array();

	for (size_t i = 0; i < d->n_conns; i++) {
		struct dconn *c = &d->conns[i];
		unsigned n = 0;

		for (struct dworker *w = d->workers; w; w = w->next)
			n += w->conn == c;
		json_array_append_new(
			out,
			json_pack("{s:s, s:s, s:b, s:I, s:s, s:I, s:I, s:s}", "id", c->id, "state", conn_state(d, c),
				  "installed", daemon_conn_installed(d, c->id), "instances", (json_int_t)n, "mode",
				  c->profile->instances == CORDON_INSTANCES_SHARED ? "shared" : "per-session",
				  "restarts", (json_int_t)c->restarts, "crashes", (json_int_t)c->crashes, "last_error",
				  c->last_error));
	}
	return out;
}

/* Printable copy of untrusted text (a file name from the directory). */
static void printable_copy(char *dst, size_t size, const char *src)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < size; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[i] = 0;
}

json_t *cordon_daemon_profile_errors(struct cordon_daemon *d)
{
	json_t *out = json_array();

	for (size_t i = 0; out && i < d->n_bad_profiles; i++) {
		const struct dbadprofile *b = &d->bad_profiles[i];
		char file[sizeof(b->file)], path[PATH_MAX], line[PATH_MAX + 256];

		printable_copy(file, sizeof(file), b->file);
		snprintf(path, sizeof(path), "%s/%s", d->cfg.profiles_dir, file);
		snprintf(line, sizeof(line), "%s:%u:%u: %s", path, b->diag.line, b->diag.column, b->diag.message);
		json_array_append_new(out, json_pack("{s:s, s:I, s:I, s:s, s:s}", "file", path, "line",
						     (json_int_t)b->diag.line, "column", (json_int_t)b->diag.column,
						     "error", b->diag.message, "message", line));
	}
	/* More than were kept: say how many, not which. */
	if (out && d->n_bad_profiles_total > d->n_bad_profiles)
		json_array_append_new(
			out, json_pack("{s:I}", "more", (json_int_t)(d->n_bad_profiles_total - d->n_bad_profiles)));
	return out;
}

json_t *cordon_daemon_capabilities(struct cordon_daemon *d)
{
	return d->capabilities ? json_incref(d->capabilities) : json_object();
}

json_t *cordon_daemon_health_detail(struct cordon_daemon *d)
{
	json_t *conns = json_array();
	struct cordon_db_counters cnt = {};
	int64_t last_seq = 0, last_cp = 0, cp_time = 0;

	for (size_t i = 0; i < d->n_conns; i++) {
		struct dconn *c = &d->conns[i];
		json_t *inst = json_array();

		for (struct dworker *w = d->workers; w; w = w->next)
			if (w->conn == c)
				json_array_append_new(inst, json_pack("{s:I, s:s, s:s?, s:O?}", "instance",
								      (json_int_t)w->instance, "tag", w->tag, "session",
								      w->session ? w->session->id : NULL, "report",
								      w->report));
		/* Why its last instance stopped as a crash (a budget, too many
		 * lines that are not JSON-RPC, an exit), when one did. */
		json_array_append_new(conns,
				      json_pack("{s:s, s:s, s:o, s:I, s:s?}", "id", c->id, "state", conn_state(d, c),
						"instances", inst, "restarts", (json_int_t)c->restarts, "last_error",
						c->last_error[0] ? c->last_error : NULL));
	}
	cordon_db_get_counters(d->db, &cnt);
	(void)cordon_audit_position(d->db, &last_seq, &last_cp, &cp_time);
	return json_pack("{s:s, s:o, s:o, s:O?, s:o, s:{s:s, s:I, s:I}, s:{s:I, s:I, s:I, s:I}, s:I}", "status",
			 cordon_daemon_health(d), "profiles_failed", cordon_daemon_profile_errors(d), "capabilities",
			 cordon_daemon_capabilities(d), "broker_sandbox", d->self_sandbox, "connectors", conns,
			 "database", "path", d->db_path, "transactions_committed",
			 (json_int_t)cnt.transactions_committed, "transactions_rolled_back",
			 (json_int_t)cnt.transactions_rolled_back, "audit", "last_seq", (json_int_t)last_seq,
			 "last_checkpoint_age_seconds",
			 (json_int_t)(cp_time ? (int64_t)(cordon_db_now(d->db) / 1000000) - cp_time / 1000000 : -1),
			 "unsigned_tail", (json_int_t)(last_seq - last_cp), "append_failures",
			 (json_int_t)cnt.audit_append_failures, "sessions", (json_int_t)d->n_sessions);
}

/* One metric family's HELP and TYPE lines. */
static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void counter(FILE *f, const char *name, const char *help, uint64_t v)
{
	family(f, name, "counter", help);
	fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

/* The approval webhook's deliveries (webhook.c counts them), all zero
 * without one. */
static void webhook_metrics(FILE *f, struct cordon_daemon *d)
{
	family(f, "cordon_webhook_deliveries_total", "counter",
	       "Approval webhook bodies by result: delivered (2xx), failed (every attempt failed), dropped (queue "
	       "full).");
	fprintf(f, "cordon_webhook_deliveries_total{result=\"delivered\"} %llu\n",
		(unsigned long long)d->m.webhook_delivered);
	fprintf(f, "cordon_webhook_deliveries_total{result=\"failed\"} %llu\n",
		(unsigned long long)d->m.webhook_failed);
	fprintf(f, "cordon_webhook_deliveries_total{result=\"dropped\"} %llu\n",
		(unsigned long long)d->m.webhook_dropped);
	counter(f, "cordon_webhook_retries_total", "Approval webhook attempts after a body's first.",
		d->m.webhook_retries);
}

/* A label value in the exposition format: backslash, double quote and line
 * feed escaped (connector ids are [a-z0-9-] already; this is belt and
 * braces for whatever else ends up in a label). */
static void label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f), fputc(*v, f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

struct pending_count {
	struct cordon_daemon *d;
	uint64_t now, *per_conn;
};

static int count_pending_approval(const struct cordon_approval_info *info, void *userdata)
{
	struct pending_count *pc = userdata;

	if (info->expires_at <= pc->now)
		return 0; /* expired; the next sweep marks it */
	for (size_t i = 0; i < pc->d->n_conns; i++)
		if (strcmp(pc->d->conns[i].id, info->connector) == 0) {
			pc->per_conn[i]++;
			break;
		}
	return 0;
}

int cordon_daemon_write_metrics(struct cordon_daemon *d, FILE *f)
{
	/* cordon_spawn_latency_seconds: the spawn histogram's bounds (kept in
	 * milliseconds in struct daemon_metrics), in seconds. */
	static const char *const le[] = { "0.001", "0.002", "0.005", "0.01", "0.02", "0.05",
					  "0.1",   "0.2",   "0.5",   "1",    "2",    "+Inf" };
	static const char *const approval_states[] = { "requested", "approved",	    "denied",
						       "expired",   "wait_timeout", "cancelled" };
	const uint64_t approvals[] = { d->m.approvals_requested, d->m.approvals_approved, d->m.approvals_denied,
				       d->m.approvals_expired,	 d->m.approvals_timeout,  d->m.approvals_cancelled };
	struct cordon_db_counters cnt = {};
	_cleanup_free_ uint64_t *pending = NULL, *instances = NULL;
	uint64_t cum = 0;
	int r;

	cordon_db_get_counters(d->db, &cnt);
	family(f, "cordon_build_info", "gauge", "The version of this cordond (always 1).");
	fprintf(f, "cordon_build_info{version=\"");
	label_value(f, CORDON_VERSION);
	fprintf(f, "\"} 1\n");
	family(f, "cordon_calls_total", "counter", "tools/call decisions.");
	fprintf(f, "cordon_calls_total{decision=\"allow\"} %llu\n", (unsigned long long)d->m.calls_allow);
	fprintf(f, "cordon_calls_total{decision=\"approve\"} %llu\n", (unsigned long long)d->m.calls_approve);
	fprintf(f, "cordon_calls_total{decision=\"deny\"} %llu\n", (unsigned long long)d->m.calls_deny);
	family(f, "cordon_approvals_total", "counter", "Approvals by outcome as seen by waiting calls.");
	for (size_t i = 0; i < ELEMENTSOF(approval_states); i++)
		fprintf(f, "cordon_approvals_total{state=\"%s\"} %llu\n", approval_states[i],
			(unsigned long long)approvals[i]);

	/* Per connector: one series per profile loaded from the profiles
	 * directory, so the label's cardinality is bounded by
	 * DAEMON_CONNECTORS_MAX. */
	pending = calloc(d->n_conns + 1, sizeof(*pending));
	instances = calloc(d->n_conns + 1, sizeof(*instances));
	if (!pending || !instances)
		return -ENOMEM;
	r = cordon_approvals_list(d->db,
				  &(struct cordon_list_filter){ .states = CORDON_STATE_BIT(CORDON_APPROVAL_REQUESTED) },
				  count_pending_approval,
				  &(struct pending_count){ .d = d, .now = cordon_db_now(d->db), .per_conn = pending });
	if (r < 0)
		return r;
	for (struct dworker *w = d->workers; w; w = w->next)
		instances[w->conn - d->conns]++;
	family(f, "cordon_approvals_pending", "gauge",
	       "Approvals requested and not yet decided or expired, per connector.");
	for (size_t i = 0; i < d->n_conns; i++) {
		fprintf(f, "cordon_approvals_pending{connector=\"");
		label_value(f, d->conns[i].id);
		fprintf(f, "\"} %llu\n", (unsigned long long)pending[i]);
	}
	family(f, "cordon_connector_instances", "gauge", "Running instances, per connector.");
	for (size_t i = 0; i < d->n_conns; i++) {
		fprintf(f, "cordon_connector_instances{connector=\"");
		label_value(f, d->conns[i].id);
		fprintf(f, "\"} %llu\n", (unsigned long long)instances[i]);
	}
	family(f, "cordon_connector_restarts_total", "counter",
	       "Instance restarts after a crash or by an operator, per connector.");
	for (size_t i = 0; i < d->n_conns; i++) {
		fprintf(f, "cordon_connector_restarts_total{connector=\"");
		label_value(f, d->conns[i].id);
		fprintf(f, "\"} %llu\n", (unsigned long long)d->conns[i].restarts);
	}
	family(f, "cordon_connector_failing", "gauge",
	       "1 while a connector crashes repeatedly (health is failing), else 0, per connector.");
	for (size_t i = 0; i < d->n_conns; i++) {
		fprintf(f, "cordon_connector_failing{connector=\"");
		label_value(f, d->conns[i].id);
		fprintf(f, "\"} %d\n", d->conns[i].failing ? 1 : 0);
	}

	family(f, "cordon_spawn_latency_seconds", "histogram", "Connector instance spawn latency.");
	for (size_t i = 0; i < ELEMENTSOF(le); i++) {
		cum += d->m.spawn_buckets[i];
		fprintf(f, "cordon_spawn_latency_seconds_bucket{le=\"%s\"} %llu\n", le[i], (unsigned long long)cum);
	}
	fprintf(f, "cordon_spawn_latency_seconds_sum %.6f\ncordon_spawn_latency_seconds_count %llu\n",
		d->m.spawn_sum_ms / 1000.0, (unsigned long long)d->m.spawn_count);
	counter(f, "cordon_instance_restarts_total", "Instances started again after a crash.", d->m.instance_restarts);
	counter(f, "cordon_instance_crashes_total", "Instances that stopped as a crash.", d->m.instance_crashes);
	counter(f, "cordon_oom_kills_total", "Connector processes killed by the out-of-memory killer.", d->m.oom_kills);
	counter(f, "cordon_network_denials_total", "Egress attempts the sandbox denied.", d->m.network_denials);
	counter(f, "cordon_worker_protocol_kills_total", "Instances stopped for breaking the protocol or a budget.",
		d->m.worker_protocol_kills);
	counter(f, "cordon_worker_lines_skipped_total", "Connector stdout lines skipped as not JSON-RPC.",
		d->m.worker_lines_skipped);
	counter(f, "cordon_audit_append_failures_total", "Audit appends that failed (each failed its operation).",
		cnt.audit_append_failures);
	family(f, "cordon_sessions", "gauge", "Open MCP sessions on the gateway.");
	fprintf(f, "cordon_sessions %u\n", d->n_sessions);
	counter(f, "cordon_sessions_refused_total", "Gateway connections refused by a limit.", d->m.sessions_refused);
	family(f, "cordon_reloads_total", "counter", "Reloads of the configuration and profiles, by result.");
	fprintf(f, "cordon_reloads_total{result=\"applied\"} %llu\ncordon_reloads_total{result=\"refused\"} %llu\n",
		(unsigned long long)d->m.reloads_applied, (unsigned long long)d->m.reloads_refused);
	family(f, "cordon_profiles_failed", "gauge", "Profiles in the profiles directory that did not load.");
	fprintf(f, "cordon_profiles_failed %zu\n", d->n_bad_profiles_total);
	webhook_metrics(f, d);
	return ferror(f) ? -EIO : 0;
}

void cordon_daemon_approval_decided(struct cordon_daemon *d, const char *approval_id)
{
	approval_args_forget(d, approval_id);
	call_approval_decided(d, approval_id);
}

/* Ends every instance of connector c (NULL: of every connector), shared and
 * per-session; returns how many. The launcher helper kills each instance's
 * whole cgroup (cgroup.kill, or freeze and SIGKILL every pid) and removes
 * it in every hierarchy, so processes a connector detached from itself
 * (setsid, double fork, SIGTERM ignored) end with it. */
static unsigned end_instances(struct cordon_daemon *d, const struct dconn *c, const char *why)
{
	unsigned n = 0;

	for (struct dworker *w = d->workers; w;) {
		if (c && w->conn != c) {
			w = w->next;
			continue;
		}
		worker_kill(w, why);
		n++;
		/* The kill fails that instance's calls, and their callbacks may
		 * end other instances too, so a `next` saved before it can dangle:
		 * rescan from the head (the dead one is already unlinked). */
		w = d->workers;
	}
	return n;
}

/* Whether an installed connector can still serve a session: a tool in its
 * grant, or resources or prompts its profile passes through. An unreadable
 * grant counts as empty (the instance ends; the next call starts it again
 * if it may). */
static bool conn_can_serve(struct cordon_daemon *d, const struct dconn *c)
{
	char **grant = NULL;
	size_t n = 0;

	if (c->profile->resources_read || c->profile->prompts_read)
		return true;
	if (cordon_grants_list(d->db, c->id, &grant, &n) < 0)
		return false;
	strv_free(grant);
	return n > 0;
}

void cordon_daemon_policy_changed(struct cordon_daemon *d, const char *connector)
{
	daemon_surface_changed(d, connector);
	/* A connector whose last granted tool was removed keeps nothing to do
	 * for anyone: its instances (and whatever they left running, holding
	 * their roots, credentials and network) end now rather than idle. */
	for (size_t i = 0; i < d->n_conns; i++) {
		struct dconn *c = &d->conns[i];

		if ((!connector || !strcmp(c->id, connector)) && !conn_can_serve(d, c))
			(void)end_instances(d, c, "no tool of it is granted any more");
	}
	session_notify_all_list_changed(d, connector);
}

void cordon_daemon_delegations_changed(struct cordon_daemon *d, const char *connector)
{
	workers_delegations_changed(d, connector);
}

unsigned cordon_daemon_revoked_all(struct cordon_daemon *d)
{
	unsigned n;

	daemon_surface_changed(d, NULL);
	/* Every instance of every connector ends, shared and per-session, with
	 * or without a delegated root: whatever a connector started under the
	 * authority now revoked (a detached grandchild, say) must not outlive
	 * it. Their in-flight and queued calls fail; calls waiting for an
	 * approval see it revoked at the next tick. The next granted call
	 * starts a fresh instance. */
	n = end_instances(d, NULL, "revoke-all");
	/* The surface is now empty. */
	session_notify_all_list_changed(d, NULL);
	return n;
}

/* Records that an add was refused (nothing else is written): the operator
 * sees it in the audit log with a fixed reason word; the diag says what to
 * fix. Returns r. */
static int add_refused(struct cordon_daemon *d, const struct cordon_actor *actor, const char *connector,
		       const char *reason, int r)
{
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT, .event = CORDON_AUDIT_CONNECTOR,
					 .actor = actor,	  .connector = connector,
					 .state = "refused",	  .reason = reason };

	if (cordon_audit_append(d->db, &ev) < 0)
		log_warning("connector %s: cannot audit the refused add: %s", connector, cordon_db_last_error(d->db));
	return r;
}

/* A connectors.add that failed after the install committed: uninstall
 * again (grant, partial inventory), so nothing is left half-installed and
 * the same add can simply be retried. Returns r. */
static int add_undo(struct cordon_daemon *d, const struct cordon_actor *actor, const char *connector,
		    const char *reason, int r)
{
	if (cordon_connector_remove(d->db, actor, connector) < 0)
		log_warning("connector %s: undoing the failed install: %s", connector, cordon_db_last_error(d->db));
	daemon_surface_changed(d, connector);
	return add_refused(d, actor, connector, reason, r);
}

/* The host path of a path inside the sandbox, through the profile's
 * filesystem entries (the longest `at` that contains it); false when no
 * entry maps it (then nothing can be checked from here). */
static bool host_path_of(const struct cordon_profile *p, const char *path, char *buf, size_t size)
{
	const struct cordon_fs_entry *best = NULL;
	size_t best_len = 0;

	for (size_t k = 0; k < 2; k++) {
		const struct cordon_fs_entry *e = k ? p->fs_roots : p->fs_system;
		size_t n_e = k ? p->n_fs_roots : p->n_fs_system;

		for (size_t i = 0; i < n_e; i++) {
			const char *at = e[i].at ? e[i].at : e[i].path;
			size_t n = strlen(at);

			if (n > best_len && strncmp(path, at, n) == 0 && (path[n] == '/' || path[n] == 0)) {
				best = &e[i];
				best_len = n;
			}
		}
	}
	if (!best)
		return false;
	return (size_t)snprintf(buf, size, "%s%s", best->path, path + best_len) < size;
}

/* Whether path is known to be absent (cordond runs unprivileged: a path it
 * may not look at is the launcher's to judge, at launch). */
static bool path_missing(const char *path)
{
	struct stat st;

	return stat(path, &st) < 0 && (errno == ENOENT || errno == ENOTDIR);
}

/* What an add can check before it writes anything: the roots, the program
 * and the credential files the profile names. The diag names the fix;
 * *reason gets the audit word. */
static int add_preflight(const struct cordon_profile *p, const char **reason, struct cordon_diag *diag)
{
	char host[PATH_MAX];
	struct stat st;
	size_t n;

	for (size_t i = 0; i < p->n_fs_roots; i++) {
		const char *path = p->fs_roots[i].path;

		if (path_missing(path)) {
			*reason = "missing-root";
			return cordon_diag_set(diag, ENOENT, "connector", "root %s does not exist: create %s", path,
					       path);
		}
		if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
			*reason = "missing-root";
			return cordon_diag_set(diag, ENOTDIR, "connector",
					       "root %s is not a directory: make %s a directory", path, path);
		}
	}
	if (p->n_command > 0 && host_path_of(p, p->command[0], host, sizeof(host)) && path_missing(host)) {
		*reason = "missing-command";
		return cordon_diag_set(diag, ENOENT, "connector",
				       "its command %s does not exist (%s on the host): install it", p->command[0],
				       host);
	}
	/* `node /path/to/server.js`: the script comes from an npm package. */
	if (p->n_command > 1 && (n = strlen(p->command[1])) > 3 && strcmp(p->command[1] + n - 3, ".js") == 0 &&
	    host_path_of(p, p->command[1], host, sizeof(host)) && path_missing(host)) {
		*reason = "missing-command";
		return cordon_diag_set(diag, ENOENT, "connector",
				       "its script %s does not exist: install the npm package that provides it", host);
	}
	for (size_t i = 0; i < p->n_credentials; i++) {
		const struct cordon_credential *cr = &p->credentials[i];

		if (path_missing(cr->file)) {
			*reason = "missing-credential";
			return cordon_diag_set(diag, ENOENT, "connector",
					       "credential file %s does not exist: set credential %s in %s (mode 0600)",
					       cr->file, cr->env, cr->file);
		}
	}
	return 0;
}

int cordon_daemon_connector_add(struct cordon_daemon *d, const struct cordon_actor *actor, const char *connector,
				struct cordon_diag *diag)
{
	struct dconn *c = daemon_conn(d, connector);
	struct dworker *w = NULL;
	const char *reason = NULL;
	uint64_t deadline;
	int r;

	if (!c) {
		/* A file that is there but did not load: its error, not "no
		 * such profile" (at start-up or at the last reload). */
		for (size_t i = 0; i < d->n_bad_profiles; i++) {
			const struct dbadprofile *b = &d->bad_profiles[i];
			size_t n = strlen(connector);

			if (strncmp(b->file, connector, n) == 0 && strcmp(b->file + n, ".yaml") == 0)
				return cordon_diag_set(diag, b->diag.error ? b->diag.error : EINVAL, "profile",
						       "%s:%u:%u: %s", b->file, b->diag.line, b->diag.column,
						       b->diag.message);
		}
		return cordon_diag_set(diag, ENOENT, "connector", "no profile '%s.yaml' in %s", connector,
				       d->cfg.profiles_dir);
	}
	if (daemon_conn_installed(d, connector))
		return cordon_diag_set(diag, EEXIST, "connector", "%s is already installed", connector);
	r = add_preflight(c->profile, &reason, diag);
	if (r < 0)
		return add_refused(d, actor, connector, reason, r);
	r = cordon_connector_install(d->db, actor, c->profile);
	if (r < 0)
		return cordon_diag_set(diag, -r, "connector", "cannot install %s: %s", connector,
				       r == -EEXIST ? "already installed" : cordon_db_last_error(d->db));
	/* Take the inventory: launch once and wait (bounded) for tools/list;
	 * every advertised tool is recorded pending_review. */
	r = worker_launch(d, c, NULL, NULL, true, &w, diag);
	if (r < 0)
		return add_undo(d, actor, connector, "launch-failed", r);
	deadline = cordon_loop_now_ms() + 20000;
	while (cordon_loop_now_ms() < deadline) {
		bool alive = false;

		for (struct dworker *x = d->workers; x; x = x->next)
			if (x == w)
				alive = true;
		if (!alive)
			return add_undo(d, actor, connector, "launch-failed",
					cordon_diag_set(diag, EIO, "connector",
							"%s exited before listing its tools: %s (fix that, then add "
							"it again)",
							connector, c->last_error));
		if (w->inventory_synced) {
			char by[64];

			worker_kill(w, "inventory taken");
			dlog_event(DLOG_CONNECTOR_INSTALLED, "connector", connector, "by",
				   dlog_actor(actor, by, sizeof(by)));
			return 0;
		}
		(void)cordon_loop_run_once(d->loop, 100);
	}
	worker_kill(w, "inventory timed out");
	return add_undo(
		d, actor, connector, "launch-failed",
		cordon_diag_set(diag, ETIMEDOUT, "connector", "%s did not list its tools within 20 s", connector));
}

json_t *cordon_daemon_approval_arguments(struct cordon_daemon *d, const char *approval_id)
{
	return call_approval_arguments(d, approval_id);
}

int cordon_daemon_audit_verifier(struct cordon_daemon *d, struct cordon_note_verifier *ret)
{
	if (!d->have_verifier)
		return -ENOENT;
	*ret = d->verifier;
	return 0;
}

int cordon_daemon_connector_remove(struct cordon_daemon *d, const struct cordon_actor *actor, const char *connector,
				   struct cordon_diag *diag)
{
	struct dconn *c = daemon_conn(d, connector);
	char by[64];
	int r;

	if (!c)
		return cordon_diag_set(diag, ENOENT, "connector", "unknown connector '%s'", connector);
	r = cordon_connector_remove(d->db, actor, connector);
	if (r < 0)
		return cordon_diag_set(diag, -r, "connector", "cannot remove %s: %s", connector,
				       cordon_db_last_error(d->db));
	dlog_event(DLOG_CONNECTOR_REMOVED, "connector", connector, "by", dlog_actor(actor, by, sizeof(by)));
	/* Committed: now the I/O. Its instances end (in-flight calls fail),
	 * waiting calls see their approvals gone, clients get list_changed. */
	(void)end_instances(d, c, "connector removed");
	free(c->instructions);
	c->instructions = NULL;
	daemon_surface_changed(d, connector);
	session_notify_all_list_changed(d, connector);
	return 0;
}

int cordon_daemon_connector_restart(struct cordon_daemon *d, const struct cordon_actor *actor, const char *connector,
				    struct cordon_diag *diag)
{
	struct dconn *c = daemon_conn(d, connector);
	int r;

	if (!c)
		return cordon_diag_set(diag, ENOENT, "connector", "unknown connector '%s'", connector);
	/* The operator's restart is a relaunch in the operator's name: the
	 * approvals bound to the old launch are revoked now, audited as the
	 * operator (the instance started next is then recorded as the
	 * broker's own launch). */
	if (daemon_conn_installed(d, connector)) {
		r = cordon_connector_relaunch(d->db, actor, connector, NULL);
		if (r < 0)
			return cordon_diag_set(diag, -r, "connector", "cannot restart %s: %s", connector,
					       cordon_db_last_error(d->db));
	}
	(void)end_instances(d, c, "restarted by an operator");
	c->restarts++;
	c->failing = false;
	c->crashes = 0;
	c->next_start_ms = 0;
	return 0;
}
