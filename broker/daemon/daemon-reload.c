/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Profiles and configuration, at start-up and at a reload (SIGHUP or
 * `cordonctl reload`). A reload is all or nothing:
 *   1. the configuration (the --config file, then the flags cordond started
 *      with, as at start-up) is parsed and validated;
 *   2. every file of the profiles directory is loaded and validated;
 *   3. a profile that disappeared while its connector is installed refuses
 *      the reload (it names the connector: remove it first);
 * and only when all of that succeeded is anything applied: the reloadable
 * settings, the profiles (changed ones replace the old in place, new ones
 * become connectors that an operator can `connectors add`, removed ones
 * that were never installed are forgotten). A refused reload changes
 * nothing but the list of profiles that failed to load, so /health stays
 * degraded and names them until a reload succeeds. Each reload, applied or
 * refused, is one audit record (broker.reload) naming who asked: the
 * operator, or the system actor with reason "signal" for SIGHUP.
 *
 * The launcher helper builds every instance from the profiles in force
 * at the helper, which are the ones cordond validated: after cordond's own
 * checks pass, the new set (by id and the SHA-256 of the bytes cordond
 * parsed) is handed over, the helper loads and checks each file itself and
 * accepts the set all or nothing. Only when the helper accepted is the
 * reload applied; a refusal by the helper (a file it will not trust, or one
 * changed on disk in between) refuses the reload like a loader error. A
 * refused reload leaves the helper's set as it was, so new instances are
 * still built from the old profile even though the file on disk is broken.
 *
 * Running instances keep the sandbox they were started with until they
 * end (a sandbox cannot be widened or narrowed from outside); a
 * connector whose `instances:` mode changed has its instances ended, since
 * calls can no longer reach them under the new mode. The tools block (risk,
 * grant, replay, approval ttl) of an installed connector was seeded into
 * the database by `connectors add` and is operator state from then on: a
 * reload does not re-seed it (cordonctl grants/inventory change it). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "cleanup.h"
#include "daemon-config.h"
#include "daemon-log.h"
#include "daemon-reload.h"
#include "daemon.h"
#include "fd-util.h"
#include "log.h"
#include "worker.h"

#define CREDENTIAL_MAX 65536

/* What one pass over the profiles directory found. */
struct pscan {
	struct cordon_profile *p[DAEMON_CONNECTORS_MAX];
	size_t n;
	struct dbadprofile bad[DAEMON_BAD_PROFILES_MAX];
	size_t n_bad, n_bad_total;
};

static inline void closedir_p(DIR **d)
{
	if (*d)
		closedir(*d);
}

static void pscan_free(struct pscan *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		cordon_profile_free(s->p[i]);
	free(s);
}

static void pscan_bad(struct pscan *s, const char *name, const struct cordon_diag *pd)
{
	if (s->n_bad < DAEMON_BAD_PROFILES_MAX) {
		struct dbadprofile *b = &s->bad[s->n_bad++];

		snprintf(b->file, sizeof(b->file), "%s", name);
		b->diag = *pd;
	}
	s->n_bad_total++;
}

/* Loads every <id>.yaml of dir (hidden files and other names skipped). */
static int pscan_run(const char *dir_path, struct pscan **ret, struct cordon_diag *diag)
{
	_cleanup_(closedir_p) DIR *dir = NULL;
	struct pscan *s;
	struct dirent *de;

	s = calloc(1, sizeof(*s));
	if (!s)
		return cordon_diag_set(diag, ENOMEM, "profiles", "out of memory");
	dir = opendir(dir_path);
	if (!dir) {
		pscan_free(s);
		return cordon_diag_set(diag, errno, "profiles", "cannot open '%s': %m", dir_path);
	}
	while ((de = readdir(dir))) {
		size_t n = strlen(de->d_name);
		char path[PATH_MAX];
		struct cordon_profile *p = NULL;
		struct cordon_diag pd = {};

		if (n < 6 || strcmp(de->d_name + n - 5, ".yaml") != 0 || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir_path, de->d_name);
		if (s->n >= DAEMON_CONNECTORS_MAX) {
			cordon_diag_set(&pd, E2BIG, "profile", "too many profiles (at most %u are loaded)",
					DAEMON_CONNECTORS_MAX);
			log_warning("profile %s: %s", path, pd.message);
			pscan_bad(s, de->d_name, &pd);
			continue;
		}
		if (cordon_profile_load(path, &p, &pd) < 0) {
			/* One bad profile does not take the others down, but it
			 * is not hidden either: health is degraded and names it,
			 * and connectors.add of its id prints this error. */
			log_warning("profile %s:%u:%u: %s", path, pd.line, pd.column, pd.message);
			pscan_bad(s, de->d_name, &pd);
			continue;
		}
		s->p[s->n++] = p;
	}
	*ret = s;
	return 0;
}

/* Credential values the profile injects, to scrub them from connector
 * stderr. Readable at start-up (still privileged); after the privilege drop
 * usually not, and then the values the launcher helper reports for each
 * instance it starts (its scrub list) are what is scrubbed. */
static void load_secrets(struct dconn *c)
{
	const struct cordon_profile *p = c->profile;

	if (!p->n_credentials)
		return;
	c->secrets = calloc(p->n_credentials, sizeof(char *));
	if (!c->secrets)
		return;
	for (size_t i = 0; i < p->n_credentials; i++) {
		char *buf = NULL;
		size_t len = 0;

		if (read_file_bounded(AT_FDCWD, p->credentials[i].file, CREDENTIAL_MAX, &buf, &len) < 0)
			continue;
		while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			buf[--len] = 0;
		if (len)
			c->secrets[c->n_secrets++] = buf;
		else
			free(buf);
	}
}

static void conn_done(struct dconn *c)
{
	for (size_t j = 0; j < c->n_secrets; j++) {
		explicit_bzero(c->secrets[j], strlen(c->secrets[j]));
		free(c->secrets[j]);
	}
	free(c->secrets);
	json_decref(c->surface_cache);
	free(c->instructions);
	cordon_profile_free(c->profile);
	memset(c, 0, sizeof(*c));
}

/* A new connector in the next free slot (d->conns never moves: instances
 * point into it). Takes p. */
static void conn_add(struct cordon_daemon *d, struct cordon_profile *p)
{
	struct dconn *c = &d->conns[d->n_conns++];

	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "%s", p->id);
	c->profile = p;
	load_secrets(c);
}

int daemon_profiles_load(struct cordon_daemon *d, struct cordon_diag *diag)
{
	struct pscan *s = NULL;
	int r;

	d->conns = calloc(DAEMON_CONNECTORS_MAX, sizeof(*d->conns));
	if (!d->conns)
		return cordon_diag_set(diag, ENOMEM, "profiles", "out of memory");
	r = pscan_run(d->cfg.profiles_dir, &s, diag);
	if (r < 0)
		return r;
	for (size_t i = 0; i < s->n; i++) {
		conn_add(d, s->p[i]);
		s->p[i] = NULL;
	}
	s->n = 0;
	memcpy(d->bad_profiles, s->bad, sizeof(s->bad));
	d->n_bad_profiles = s->n_bad;
	d->n_bad_profiles_total = s->n_bad_total;
	pscan_free(s);
	return 0;
}

/* Keeps id's refusal by the launcher helper in the list of bad profiles
 * (health degraded, naming it), after those already there. */
static void bad_add(struct cordon_daemon *d, const char *id, const struct cordon_diag *why)
{
	if (d->n_bad_profiles < DAEMON_BAD_PROFILES_MAX) {
		struct dbadprofile *b = &d->bad_profiles[d->n_bad_profiles++];

		snprintf(b->file, sizeof(b->file), "%s.yaml", id);
		b->diag = *why;
		b->diag.line = b->diag.column = 0;
	}
	d->n_bad_profiles_total++;
}

/* Hands ps[0..n) over to the spawner (the launcher helper) as the set in
 * force. 0 (also when the spawner takes profiles with each spawn, or its
 * helper is gone: no instance can start then anyway), or -errno with diag
 * saying which profile the helper refused (in ret_failed too) and why. */
static int hand_over(struct cordon_daemon *d, struct cordon_profile *const *ps, size_t n, char ret_failed[static 64],
		     struct cordon_diag *diag)
{
	struct cordon_diag hd = {};
	int r;

	ret_failed[0] = '\0';
	if (!d->spawner.profiles || d->helper_lost)
		return 0;
	r = d->spawner.profiles(d->spawner.userdata, ps, n, ret_failed, &hd);
	if (r >= 0)
		return 0;
	if (ret_failed[0])
		return cordon_diag_set(diag, -r, "profile", "%s/%s.yaml refused by the launcher helper: %s",
				       d->cfg.profiles_dir, ret_failed, hd.message);
	return cordon_diag_set(diag, -r, "launcher", "the launcher helper refused the profiles: %s", hd.message);
}

int daemon_profiles_hand_over(struct cordon_daemon *d, struct cordon_diag *diag)
{
	/* Each round drops the profile the helper refused (at most one per
	 * profile, plus the last that succeeds). */
	for (size_t round = 0; round <= DAEMON_CONNECTORS_MAX; round++) {
		struct cordon_profile *ps[DAEMON_CONNECTORS_MAX];
		char failed[64];
		struct cordon_diag hd = {};
		size_t i;
		int r;

		for (i = 0; i < d->n_conns; i++)
			ps[i] = d->conns[i].profile;
		r = hand_over(d, ps, d->n_conns, failed, &hd);
		if (r >= 0)
			return 0;
		for (i = 0; failed[0] && i < d->n_conns; i++)
			if (strcmp(d->conns[i].id, failed) == 0)
				break;
		if (!failed[0] || i == d->n_conns) {
			*diag = hd;
			return r;
		}
		/* Like a profile that does not load: not served, named by
		 * health; the others go on. No instance runs yet. */
		log_warning("%s", hd.message);
		bad_add(d, failed, &hd);
		conn_done(&d->conns[i]);
		memmove(&d->conns[i], &d->conns[i + 1], (d->n_conns - i - 1) * sizeof(*d->conns));
		d->n_conns--;
	}
	return cordon_diag_set(diag, ELOOP, "launcher", "the launcher helper kept refusing the profiles");
}

void daemon_profiles_free(struct cordon_daemon *d)
{
	for (size_t i = 0; d->conns && i < d->n_conns; i++)
		conn_done(&d->conns[i]);
	free(d->conns);
	d->conns = NULL;
	d->n_conns = 0;
	for (int i = 0; i < d->reload_argc; i++)
		free(d->reload_argv[i]);
	free(d->reload_argv);
	free(d->config_path);
}

/* Whether arg is --config (or an abbreviation getopt_long accepts: no
 * other long option starts with "c"), with its value in *ret_value when it
 * is the --config=VALUE form. */
static bool is_config_flag(const char *arg, const char **ret_value)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);

	*ret_value = eq ? eq + 1 : NULL;
	return n >= 3 && strncmp(arg, "--config", n) == 0 && n <= strlen("--config");
}

int daemon_reload_args(struct cordon_daemon *d, int argc, char *const *argv)
{
	const char *config = NULL;

	d->reload_argv = calloc((size_t)argc + 1, sizeof(char *));
	if (!d->reload_argv)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		const char *v;

		d->reload_argv[i] = strdup(argv[i]);
		if (!d->reload_argv[i])
			return -ENOMEM;
		d->reload_argc = i + 1;
		if (i > 0 && is_config_flag(argv[i], &v))
			config = v ? v : (i + 1 < argc ? argv[i + 1] : NULL);
	}
	/* Absolute, so the reload finds the same file whatever the working
	 * directory (the sandbox lets cordond read this file and no other
	 * outside its directories). */
	if (config) {
		d->config_path = realpath(config, NULL);
		if (!d->config_path)
			d->config_path = strdup(config);
	}
	return 0;
}

/* ---- the reload -------------------------------------------------------------- */

static bool str_differs(const char *a, const char *b)
{
	return (a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0);
}

/* Parses the configuration as at start-up into *nc; fills `ignored` with
 * the names of the settings that changed but need a restart. The --config
 * file's bytes come from the launcher helper when it was given the file
 * (daemon-launcher.h, config_read): cordond's sandbox allows only the
 * inode it started with, so a file replaced by rename could not be opened
 * here. Without that (a test's in-process spawner), cordond reads the file
 * itself. */
static int reload_config(struct cordon_daemon *d, struct cordon_daemon_config *nc, json_t *ignored,
			 struct cordon_diag *diag)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int r;

	cordon_daemon_config_init(nc);
	if (!d->reload_argv)
		return 1; /* started without flags (the tests' in-process daemon): nothing to re-read */
	if (d->config_path && d->spawner.config_read) {
		struct cordon_diag hd = {};

		if (d->helper_lost)
			return cordon_diag_set(diag, ECONNRESET, "config",
					       "cannot re-read %s: the launcher helper is gone (restart cordond)",
					       d->config_path);

		/* The helper's diag names the file and the rule it broke. */
		r = d->spawner.config_read(d->spawner.userdata, &buf, &len, &hd);
		if (r < 0)
			return cordon_diag_set(diag, -r, "config", "%s", hd.message);
	}
	r = buf ? cordon_daemon_config_parse_args_buffer(nc, d->reload_argc, d->reload_argv, buf, len, diag)
		: cordon_daemon_config_parse_args(nc, d->reload_argc, d->reload_argv, diag);
	if (r >= 0)
		r = cordon_daemon_config_finish(nc, diag);
	if (r < 0) {
		/* Read by cordond itself: the sandbox allows the config file
		 * cordond started with, by its inode, so one that was replaced
		 * since is out of reach until a restart; and cordond reads it
		 * as its own user now, so the file's mode must let it. */
		if (r == -EACCES && d->config_path && !buf)
			cordon_diag_set(diag, EACCES, "config",
					"cannot read %s: permission denied (cordond may read only the file it "
					"started with, as its own user: edit it in place, or restart cordond)",
					d->config_path);
		return r;
	}
#define RESTART_ONLY(field, name)                                                                                      \
	if (str_differs(d->cfg.field, nc->field))                                                                      \
	json_array_append_new(ignored, json_string(name))
	RESTART_ONLY(profiles_dir, "profiles");
	RESTART_ONLY(state_dir, "state");
	RESTART_ONLY(runtime_dir, "runtime");
	RESTART_ONLY(user, "user");
	RESTART_ONLY(operator_group, "operator_group");
	RESTART_ONLY(gateway_group, "gateway_group");
	RESTART_ONLY(http_listen, "http");
	RESTART_ONLY(mcp_http_listen, "mcp_http_listen");
	RESTART_ONLY(mcp_http_tls_cert, "mcp_http_tls_cert");
	RESTART_ONLY(mcp_http_tls_key, "mcp_http_tls_key");
	RESTART_ONLY(mcp_http_hosts, "mcp_http_hosts");
	RESTART_ONLY(launcher, "launcher");
	/* The secret is read while privileged, the port is in the Landlock
	 * domain: both are fixed at start. */
	RESTART_ONLY(approval_webhook_url, "approval_webhook_url");
	RESTART_ONLY(approval_webhook_secret_file, "approval_webhook_secret_file");
#undef RESTART_ONLY
	if (d->cfg.line_max != nc->line_max)
		json_array_append_new(ignored, json_string("line_max"));
	return 0;
}

/* The settings a reload applies: what each call, session or connection
 * reads when it needs it. */
static void apply_config(struct cordon_daemon *d, const struct cordon_daemon_config *nc)
{
	d->cfg.approval_wait_ms = nc->approval_wait_ms;
	d->cfg.result_cap = nc->result_cap;
	d->cfg.max_sessions = nc->max_sessions;
	d->cfg.held_max = nc->held_max;
	d->cfg.held_per_uid = nc->held_per_uid;
	d->cfg.sessions_per_uid = nc->sessions_per_uid;
	d->cfg.initialize_timeout_ms = nc->initialize_timeout_ms;
	d->cfg.audit_retain_days = nc->audit_retain_days;
	d->cfg.audit_retain_records = nc->audit_retain_records;
	d->cfg.http_session_idle_ms = nc->http_session_idle_ms;
	d->cfg.foreground_log_debug = nc->foreground_log_debug;
	d->cfg.log_level = nc->log_level;
	log_set_max_level((enum log_level)cordon_daemon_config_log_level(nc));
}

static struct cordon_profile *scan_find(struct pscan *s, const char *id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i] && strcmp(s->p[i]->id, id) == 0)
			return s->p[i];
	return NULL;
}

static void audit_reload(struct cordon_daemon *d, const struct cordon_actor *actor, bool applied, size_t n)
{
	struct cordon_actor sys = cordon_actor_system();
	struct cordon_audit_event ev = { CORDON_AUDIT_EVENT_INIT,
					 .event = CORDON_AUDIT_BROKER_RELOAD,
					 .actor = actor ? actor : &sys,
					 .reason = actor ? "operator" : "signal",
					 .state = applied ? "applied" : "refused",
					 .count = (int64_t)n };

	if (cordon_audit_append(d->db, &ev) < 0)
		log_error("reload: cannot append its audit record: %s", cordon_db_last_error(d->db));
}

/* The refusal: logged, audited, counted; diag already says why. */
static int refuse(struct cordon_daemon *d, const struct cordon_actor *actor, int r, const struct cordon_diag *diag)
{
	char by[64];

	/* The previous configuration and profiles stay in force. */
	dlog_event(DLOG_RELOAD_REFUSED, "by", actor ? dlog_actor(actor, by, sizeof(by)) : "signal", "error",
		   diag->message);
	audit_reload(d, actor, false, d->n_conns);
	d->m.reloads_refused++;
	return r;
}

int cordon_daemon_reload(struct cordon_daemon *d, const struct cordon_actor *actor, json_t **ret,
			 struct cordon_diag *diag)
{
	struct cordon_daemon_config nc;
	struct pscan *s = NULL;
	json_t *ignored = json_array(), *added = json_array(), *removed = json_array(), *ended = json_array();
	bool have_config;
	int r;

	if (!ignored || !added || !removed || !ended) {
		r = cordon_diag_set(diag, ENOMEM, "reload", "out of memory");
		goto out;
	}
	/* 1. The configuration. */
	r = reload_config(d, &nc, ignored, diag);
	if (r < 0) {
		r = refuse(d, actor, r, diag);
		goto out_cfg;
	}
	have_config = r == 0;
	/* 2. Every profile. */
	r = pscan_run(d->cfg.profiles_dir, &s, diag);
	if (r < 0) {
		r = refuse(d, actor, r, diag);
		goto out_cfg;
	}
	if (s->n_bad_total > 0) {
		const struct dbadprofile *b = &s->bad[0];

		/* Health is degraded and names them until a good reload. */
		memcpy(d->bad_profiles, s->bad, sizeof(s->bad));
		d->n_bad_profiles = s->n_bad;
		d->n_bad_profiles_total = s->n_bad_total;
		r = cordon_diag_set(diag, b->diag.error ? b->diag.error : EINVAL, "profile", "%s/%s:%u:%u: %s%s",
				    d->cfg.profiles_dir, b->file, b->diag.line, b->diag.column, b->diag.message,
				    s->n_bad_total > 1 ? " (and more: cordonctl status lists them)" : "");
		r = refuse(d, actor, r, diag);
		goto out_cfg;
	}
	/* 3. No installed connector may lose its profile; nor may an instance
	 * still point at a connector that would be forgotten. While a
	 * `connectors add` takes an inventory (it runs the loop, and with it
	 * this reload), nothing is forgotten: forgetting closes up d->conns,
	 * and the add holds a pointer into it. */
	for (size_t i = 0; i < d->n_conns; i++) {
		struct dconn *c = &d->conns[i];

		if (scan_find(s, c->id))
			continue;
		for (struct dworker *w = d->workers; w; w = w->next)
			if (w->for_install) {
				r = cordon_diag_set(diag, EBUSY, "profile",
						    "%s.yaml is gone while connector %s is being installed; retry "
						    "when `connectors add` has finished",
						    c->id, w->conn->id);
				r = refuse(d, actor, r, diag);
				goto out_cfg;
			}
		if (daemon_conn_installed(d, c->id)) {
			r = cordon_diag_set(diag, EBUSY, "profile",
					    "connector %s is installed but %s/%s.yaml is gone: put the file back, or "
					    "`cordonctl connectors remove %s` first",
					    c->id, d->cfg.profiles_dir, c->id, c->id);
			r = refuse(d, actor, r, diag);
			goto out_cfg;
		}
		for (struct dworker *w = d->workers; w; w = w->next)
			if (w->conn == c) {
				r = cordon_diag_set(diag, EBUSY, "profile",
						    "connector %s has a running instance (being installed?); retry",
						    c->id);
				r = refuse(d, actor, r, diag);
				goto out_cfg;
			}
	}

	/* 4. The launcher helper takes the new set (it loads and checks
	 * each file itself); only then is anything applied. */
	{
		char failed[64];

		r = hand_over(d, s->p, s->n, failed, diag);
		if (r < 0) {
			d->n_bad_profiles = d->n_bad_profiles_total = 0;
			if (failed[0])
				bad_add(d, failed, diag);
			r = refuse(d, actor, r, diag);
			goto out_cfg;
		}
	}

	/* Everything validated: apply. */
	if (have_config)
		apply_config(d, &nc);
	for (size_t i = 0; i < json_array_size(ignored); i++)
		log_warning("reload: '%s' changed but needs a restart of cordond; ignored",
			    json_string_value(json_array_get(ignored, i)));
	/* Removed (never installed): forgotten; the array closes up and the
	 * instances of the connectors after it follow their slot. */
	for (size_t i = 0; i < d->n_conns;) {
		struct dconn *c = &d->conns[i];

		if (scan_find(s, c->id)) {
			i++;
			continue;
		}
		json_array_append_new(removed, json_string(c->id));
		conn_done(c);
		memmove(c, c + 1, (d->n_conns - i - 1) * sizeof(*c));
		d->n_conns--;
		for (struct dworker *w = d->workers; w; w = w->next)
			if (w->conn > c)
				w->conn--;
	}
	/* Changed: the new profile replaces the old one in place. */
	for (size_t i = 0; i < d->n_conns; i++) {
		struct dconn *c = &d->conns[i];
		struct cordon_profile *p = scan_find(s, c->id);

		for (size_t j = 0; j < s->n; j++)
			if (s->p[j] == p)
				s->p[j] = NULL;
		if (p->instances != c->profile->instances) {
			unsigned n = 0;

			/* A kill can end others through their calls' callbacks:
			 * rescan from the head after each (as end_instances()). */
			for (struct dworker *w = d->workers; w;) {
				if (w->conn != c) {
					w = w->next;
					continue;
				}
				worker_kill(w, "its profile's instances mode changed at a reload");
				n++;
				w = d->workers;
			}
			if (n)
				json_array_append_new(ended, json_string(c->id));
		}
		cordon_profile_free(c->profile);
		c->profile = p;
		daemon_surface_changed(d, c->id);
	}
	/* New: connectors an operator can now `connectors add`. */
	for (size_t j = 0; j < s->n; j++) {
		if (!s->p[j])
			continue;
		json_array_append_new(added, json_string(s->p[j]->id));
		conn_add(d, s->p[j]);
		s->p[j] = NULL;
	}
	d->n_bad_profiles = d->n_bad_profiles_total = 0;
	d->m.reloads_applied++;
	audit_reload(d, actor, true, d->n_conns);
	{
		char by[64], profiles[24], n_added[24], n_removed[24];

		snprintf(profiles, sizeof(profiles), "%zu", d->n_conns);
		snprintf(n_added, sizeof(n_added), "%zu", json_array_size(added));
		snprintf(n_removed, sizeof(n_removed), "%zu", json_array_size(removed));
		dlog_event(DLOG_RELOAD_APPLIED, "by", actor ? dlog_actor(actor, by, sizeof(by)) : "signal", "profiles",
			   profiles, "added", n_added, "removed", n_removed);
	}
	*ret = json_pack("{s:s, s:I, s:O, s:O, s:O, s:O, s:b}", "result", "reloaded", "profiles",
			 (json_int_t)d->n_conns, "added", added, "removed", removed, "ignored", ignored,
			 "instances_ended", ended, "config", have_config);
	r = *ret ? 0 : cordon_diag_set(diag, ENOMEM, "reload", "out of memory");
out_cfg:
	cordon_daemon_config_done(&nc);
out:
	pscan_free(s);
	json_decref(ignored);
	json_decref(added);
	json_decref(removed);
	json_decref(ended);
	return r;
}
