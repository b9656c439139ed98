/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordond's core: start-up phases, the main loop, and the daemon.h API the
 * operator surfaces use.
 *
 * Start-up, in this order (see daemon-privs.c for the why of each privilege
 * phase):
 *   1. load the profiles (and credential values, only to scrub them from
 *      connector stderr) while the files are still readable; a file that
 *      fails is kept with its error (health degraded, named);
 *   2. start the launcher helper — it keeps the privileges connectors need;
 *   3. create the state/runtime directories and bind the sockets;
 *   4. drop to the run user, clear every capability, no_new_privs;
 *   5. sandbox ourselves (Landlock: state, runtime, profiles only);
 *   6. open the database (0600), set up the audit signing key, draw the
 *      approval key (locked memory);
 *   7. recover (prepared -> abandoned, dispatched -> outcome_unknown,
 *      outstanding approvals revoked: the old process key is gone);
 *   8. serve; READY=1 to systemd.
 * The daemon core is the edge of the program: it logs once per event. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "broker.h"
#include "cleanup.h"
#include "crypto.h"
#include "daemon-private.h"
#include "delegations.h"
#include "fd-util.h"
#include "grants.h"
#include "connectors.h"
#include "inventory.h"
#include "log.h"
#include "parse-util.h"

#define TICK_MS 100

static inline void closedir_p(DIR **d)
{
	if (*d)
		closedir(*d);
}
#define CREDENTIAL_MAX 65536

struct dconn *daemon_conn(struct cordon_daemon *d, const char *id)
{
	for (size_t i = 0; i < d->n_conns; i++)
		if (!strcmp(d->conns[i].id, id))
			return &d->conns[i];
	return NULL;
}

bool daemon_conn_installed(struct cordon_daemon *d, const char *id)
{
	uint64_t g;

	return cordon_connector_generation(d->db, id, &g) == 0;
}

void daemon_surface_changed(struct cordon_daemon *d, const char *connector)
{
	for (size_t i = 0; i < d->n_conns; i++)
		if (!connector || !strcmp(d->conns[i].id, connector))
			json_object_clear(d->conns[i].surface_cache);
}

void daemon_spawn_observed(struct cordon_daemon *d, uint64_t ms)
{
	static const uint64_t le[] = { 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000 };
	size_t i;

	for (i = 0; i < ELEMENTSOF(le); i++)
		if (ms <= le[i])
			break;
	d->m.spawn_buckets[i]++;
	d->m.spawn_sum_ms += (double)ms;
	d->m.spawn_count++;
}

/* Credential values the profile injects (read while still privileged). The
 * broker keeps them only to scrub them from connector stderr. */
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

static int load_profiles(struct cordon_daemon *d, struct cordon_diag *diag)
{
	_cleanup_(closedir_p) DIR *dir = NULL;
	struct dirent *de;

	dir = opendir(d->cfg.profiles_dir);
	if (!dir)
		return cordon_diag_set(diag, errno, "profiles", "cannot open '%s': %m", d->cfg.profiles_dir);
	while ((de = readdir(dir))) {
		size_t n = strlen(de->d_name);
		char path[PATH_MAX];
		struct cordon_profile *p = NULL;
		struct cordon_diag pd = {};
		struct dconn *nc;

		if (n < 6 || strcmp(de->d_name + n - 5, ".yaml") != 0 || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", d->cfg.profiles_dir, de->d_name);
		if (cordon_profile_load(path, &p, &pd) < 0) {
			/* One bad profile does not take the others down, but it
			 * is not hidden either: health is degraded and names it,
			 * and connectors.add of its id prints this error. */
			log_warning("profile %s:%u:%u: %s", path, pd.line, pd.column, pd.message);
			if (d->n_bad_profiles < DAEMON_BAD_PROFILES_MAX) {
				struct dbadprofile *b = &d->bad_profiles[d->n_bad_profiles++];

				snprintf(b->file, sizeof(b->file), "%s", de->d_name);
				b->diag = pd;
			}
			d->n_bad_profiles_total++;
			continue;
		}
		nc = realloc(d->conns, (d->n_conns + 1) * sizeof(*d->conns));
		if (!nc) {
			cordon_profile_free(p);
			return cordon_diag_set(diag, ENOMEM, "profiles", "out of memory");
		}
		d->conns = nc;
		memset(&d->conns[d->n_conns], 0, sizeof(*d->conns));
		snprintf(d->conns[d->n_conns].id, sizeof(d->conns[d->n_conns].id), "%s", p->id);
		d->conns[d->n_conns].profile = p;
		load_secrets(&d->conns[d->n_conns]);
		d->n_conns++;
	}
	return 0;
}

static int bind_sockets(struct cordon_daemon *d, struct cordon_diag *diag)
{
	char path[PATH_MAX];
	int r;

	/* gateway.sock: 0666 unless a gateway group is configured (then 0660
	 * root:group). Any local process may speak MCP; what it may do is
	 * decided per call, and its SO_PEERCRED is the subject. */
	snprintf(path, sizeof(path), "%s/gateway.sock", d->cfg.runtime_dir);
	r = unix_listen(path, d->gateway_gid != (gid_t)-1 ? 0660 : 0666, d->run_uid,
			d->gateway_gid != (gid_t)-1 ? d->gateway_gid : d->run_gid, &d->gateway_fd, diag);
	if (r < 0)
		return r;
	/* operator.sock and http.sock: 0660, owner root (or us), group the
	 * operator group; the operator surface re-checks SO_PEERCRED. */
	snprintf(path, sizeof(path), "%s/operator.sock", d->cfg.runtime_dir);
	r = unix_listen(path, 0660, geteuid() == 0 ? 0 : d->run_uid, d->operator_gid, &d->operator_fd, diag);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/http.sock", d->cfg.runtime_dir);
	return unix_listen(path, 0660, geteuid() == 0 ? 0 : d->run_uid, d->operator_gid, &d->http_fd, diag);
}

static void on_signal(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata)
{
	struct signalfd_siginfo si;

	(void)revents;
	(void)userdata;
	while (read(fd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			log_info("signal %u: shutting down", si.ssi_signo);
			cordon_loop_quit(loop, 0);
		}
}

static void on_spawner(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata)
{
	struct cordon_daemon *d = userdata;

	(void)loop;
	(void)fd;
	(void)revents;
	if (d->spawner.dispatch)
		d->spawner.dispatch(d->spawner.userdata);
}

static void on_tick(struct cordon_loop *loop, void *userdata)
{
	struct cordon_daemon *d = userdata;
	static uint64_t last_sweep;
	uint64_t now = cordon_loop_now_ms();

	gateway_tick(d);
	calls_tick(d);
	workers_tick(d, now);
	if (now - last_sweep >= 5000) {
		last_sweep = now;
		(void)cordon_approvals_expire(d->db, NULL);
		uint64_t expired = 0;

		/* An expired delegation must leave the sandbox too: instances that
		 * were started with it end and start again without it. */
		if (cordon_delegations_expire(d->db, &expired) >= 0 && expired > 0)
			cordon_daemon_delegations_changed(d, NULL);
		(void)cordon_audit_maybe_checkpoint(d->db);
		for (size_t i = 0; i < d->n_conns; i++)
			if (d->conns[i].failing && now - d->conns[i].last_crash_ms > 300000)
				d->conns[i].failing = false, d->conns[i].crashes = 0;
	}
	(void)cordon_loop_timer(loop, TICK_MS, on_tick, d, &d->tick);
}

int cordon_daemon_new(const struct cordon_daemon_config *cfg, const struct cordon_spawner *spawner,
		      struct cordon_daemon **ret, struct cordon_diag *diag)
{
	struct cordon_daemon *d;
	struct cordon_broker_start_result rec = {};
	struct cordon_audit_options ao = { .origin = "cordon/cordond/audit" };
	struct cordon_db_options dbo = {};
	sigset_t mask;
	int r;

	d = calloc(1, sizeof(*d));
	if (!d)
		return cordon_diag_set(diag, ENOMEM, "daemon", "out of memory");
	d->gateway_fd = d->operator_fd = d->http_fd = d->signal_fd = d->notify_fd = -EBADF;
	d->started_ms = cordon_loop_now_ms();
	/* Own copies of the config strings. */
	d->cfg = *cfg;
#define DUP(f) d->cfg.f = cfg->f ? strdup(cfg->f) : NULL
	DUP(profiles_dir);
	DUP(state_dir);
	DUP(runtime_dir);
	DUP(user);
	DUP(operator_group);
	DUP(gateway_group);
	DUP(http_listen);
	DUP(launcher);
#undef DUP
	if (!d->cfg.profiles_dir || !d->cfg.state_dir || !d->cfg.runtime_dir) {
		r = cordon_diag_set(diag, EINVAL, "config", "profiles, state and runtime directories are required");
		goto fail;
	}
	r = cordon_loop_new(&d->loop);
	if (r < 0) {
		cordon_diag_set(diag, -r, "daemon", "event loop: %s", strerror(-r));
		goto fail;
	}
	signal(SIGPIPE, SIG_IGN);
	/* Every session and worker holds fds: use the hard limit. */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	d->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->signal_fd < 0) {
		r = cordon_diag_set(diag, errno, "daemon", "signalfd: %m");
		goto fail;
	}

	/* 1. Profiles and credential values, while readable. */
	r = privs_resolve(d, diag);
	if (r < 0)
		goto fail;
	r = load_profiles(d, diag);
	if (r < 0)
		goto fail;

	/* 2. The launcher helper keeps the privileges connectors need; fork it
	 * before we drop ours. */
	if (spawner)
		d->spawner = *spawner;
	else {
		r = cordon_daemon_launcher_spawner(d->cfg.launcher, d->cfg.profiles_dir, &d->spawner, diag);
		if (r < 0)
			goto fail;
	}
	d->have_spawner = true;
	if (d->spawner.attach)
		d->spawner.attach(d->spawner.userdata, d);
	if (d->spawner.capabilities)
		d->capabilities = d->spawner.capabilities(d->spawner.userdata);

	/* 3. Directories and sockets (root-owned runtime dirs, chown). */
	r = privs_prepare_dirs(d, diag);
	if (r < 0)
		goto fail;
	r = bind_sockets(d, diag);
	if (r < 0)
		goto fail;
	d->notify_fd = sd_notify_open();
	/* The operator and HTTP surfaces: the optional TCP listener is bound
	 * here, before the Landlock domain denies TCP bind. Their handlers
	 * only run once the loop serves, after the database is open. */
	r = cordon_operator_start(d, d->operator_fd, d->operator_gid, &d->op);
	if (r < 0) {
		cordon_diag_set(diag, -r, "operator", "cannot serve the operator socket");
		goto fail;
	}
	r = cordon_http_start(d, d->http_fd, d->cfg.http_listen, &d->http, diag);
	if (r < 0)
		goto fail;

	/* 4. Drop. 5. Sandbox ourselves: Landlock, then our seccomp allowlist. */
	r = privs_drop(d, diag);
	if (r < 0)
		goto fail;
	r = privs_sandbox_self(d, &d->self_sandbox, diag);
	if (r < 0)
		goto fail;
	{
		json_t *sc = NULL;

		r = privs_seccomp_self(d, &sc, diag);
		if (r < 0)
			goto fail;
		json_object_update(d->self_sandbox, sc);
		json_decref(sc);
	}

	/* 6. Database (0600, owned by us), audit key, approval key. */
	snprintf(d->db_path, sizeof(d->db_path), "%s/cordon.db", d->cfg.state_dir);
	snprintf(d->key_path, sizeof(d->key_path), "%s/audit-signing.key", d->cfg.state_dir);
	r = cordon_db_open(d->db_path, &dbo, &d->db, diag);
	if (r < 0)
		goto fail;
	r = cordon_db_temp_store_memory(d->db);
	if (r < 0) {
		cordon_diag_set(diag, -r, "db", "cannot keep temp storage in memory: %s", cordon_db_last_error(d->db));
		goto fail;
	}
	r = cordon_audit_setup_key_file(d->db, &ao, d->key_path, "cordond", &d->verifier, diag);
	if (r < 0)
		goto fail;
	d->have_verifier = true;
	r = cordon_key_new(&d->key);
	if (r < 0) {
		cordon_diag_set(diag, -r, "key",
				"cannot create the approval key in locked memory: %s (raise RLIMIT_MEMLOCK)",
				strerror(-r));
		goto fail;
	}

	/* 7. Recovery. */
	r = cordon_broker_start(d->db, &rec);
	if (r < 0) {
		cordon_diag_set(diag, -r, "recovery", "start-up recovery failed: %s", cordon_db_last_error(d->db));
		goto fail;
	}
	if (rec.abandoned || rec.outcome_unknown || rec.approvals_revoked)
		log_notice("recovery: %llu action(s) abandoned (never sent), %llu with unknown outcome (an operator "
			   "must resolve them), %llu approval(s) revoked",
			   (unsigned long long)rec.abandoned, (unsigned long long)rec.outcome_unknown,
			   (unsigned long long)rec.approvals_revoked);

	/* 8. Serve. */
	r = cordon_loop_watch(d->loop, d->signal_fd, EPOLLIN, on_signal, d, &d->w_signal);
	if (r >= 0 && d->spawner.event_fd && d->spawner.event_fd(d->spawner.userdata) >= 0)
		r = cordon_loop_watch(d->loop, d->spawner.event_fd(d->spawner.userdata), EPOLLIN, on_spawner, d,
				      &d->w_spawner);
	if (r >= 0)
		r = gateway_start(d);
	if (r >= 0)
		r = cordon_loop_timer(d->loop, TICK_MS, on_tick, d, &d->tick);
	if (r < 0) {
		cordon_diag_set(diag, -r, "daemon", "cannot watch the sockets: %s", strerror(-r));
		goto fail;
	}
	*ret = d;
	return 0;
fail:
	cordon_daemon_free(d);
	return r < 0 ? r : -EINVAL;
}

int cordon_daemon_run(struct cordon_daemon *d)
{
	sd_notify_send(d->notify_fd, "READY=1\nSTATUS=serving");
	log_info("serving: gateway %s/gateway.sock, %zu connector profile(s)", d->cfg.runtime_dir, d->n_conns);
	return cordon_loop_run(d->loop);
}

void cordon_daemon_free(struct cordon_daemon *d)
{
	if (!d)
		return;
	sd_notify_send(d->notify_fd, "STOPPING=1");
	if (d->http)
		cordon_http_free(d->http);
	if (d->op)
		cordon_operator_free(d->op);
	d->http = NULL;
	d->op = NULL;
	if (d->loop)
		gateway_stop(d);
	workers_kill_all(d);
	if (d->tick)
		cordon_loop_timer_cancel(d->tick);
	if (d->w_signal)
		cordon_loop_unwatch(d->w_signal);
	if (d->w_spawner)
		cordon_loop_unwatch(d->w_spawner);
	if (d->db) {
		/* broker.stop record and the final signed checkpoint. */
		(void)cordon_broker_stop(d->db);
		cordon_db_close(d->db);
	}
	if (d->have_spawner && d->spawner.free)
		d->spawner.free(d->spawner.userdata);
	cordon_key_free(d->key);
	if (d->gateway_fd >= 0)
		close(d->gateway_fd);
	if (d->operator_fd >= 0)
		close(d->operator_fd);
	if (d->http_fd >= 0)
		close(d->http_fd);
	if (d->signal_fd >= 0)
		close(d->signal_fd);
	if (d->notify_fd >= 0)
		close(d->notify_fd);
	if (d->cfg.runtime_dir) {
		char path[PATH_MAX];

		for (const char *const *n = (const char *const[]){ "gateway.sock", "operator.sock", "http.sock", NULL };
		     *n; n++) {
			snprintf(path, sizeof(path), "%s/%s", d->cfg.runtime_dir, *n);
			(void)unlink(path);
		}
	}
	for (size_t i = 0; i < d->n_conns; i++) {
		for (size_t j = 0; j < d->conns[i].n_secrets; j++) {
			explicit_bzero(d->conns[i].secrets[j], strlen(d->conns[i].secrets[j]));
			free(d->conns[i].secrets[j]);
		}
		free(d->conns[i].secrets);
		json_decref(d->conns[i].surface_cache);
		cordon_profile_free(d->conns[i].profile);
	}
	free(d->conns);
	json_decref(d->capabilities);
	json_decref(d->self_sandbox);
	if (d->loop)
		cordon_loop_free(d->loop);
	cordon_daemon_config_done(&d->cfg);
	free(d);
}

/* ---- daemon.h ------------------------------------------------------------ */

struct cordon_loop *cordon_daemon_loop(struct cordon_daemon *d)
{
	return d->loop;
}

struct cordon_db *cordon_daemon_db(struct cordon_daemon *d)
{
	return d->db;
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
		json_array_append_new(conns, json_pack("{s:s, s:s, s:o, s:I}", "id", c->id, "state", conn_state(d, c),
						       "instances", inst, "restarts", (json_int_t)c->restarts));
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

int cordon_daemon_write_metrics(struct cordon_daemon *d, FILE *f)
{
	static const char *const le[] = {
		"1", "2", "5", "10", "20", "50", "100", "200", "500", "1000", "2000", "+Inf"
	};
	struct cordon_db_counters cnt = {};
	uint64_t cum = 0;
	unsigned sessions = d->n_sessions;

	cordon_db_get_counters(d->db, &cnt);
	fprintf(f, "# HELP cordon_calls_total tools/call decisions.\n# TYPE cordon_calls_total counter\n");
	fprintf(f, "cordon_calls_total{decision=\"allow\"} %llu\n", (unsigned long long)d->m.calls_allow);
	fprintf(f, "cordon_calls_total{decision=\"approve\"} %llu\n", (unsigned long long)d->m.calls_approve);
	fprintf(f, "cordon_calls_total{decision=\"deny\"} %llu\n", (unsigned long long)d->m.calls_deny);
	fprintf(f, "# HELP cordon_approvals_total Approvals by outcome as seen by waiting calls.\n"
		   "# TYPE cordon_approvals_total counter\n");
	fprintf(f, "cordon_approvals_total{state=\"requested\"} %llu\n", (unsigned long long)d->m.approvals_requested);
	fprintf(f, "cordon_approvals_total{state=\"approved\"} %llu\n", (unsigned long long)d->m.approvals_approved);
	fprintf(f, "cordon_approvals_total{state=\"denied\"} %llu\n", (unsigned long long)d->m.approvals_denied);
	fprintf(f, "cordon_approvals_total{state=\"expired\"} %llu\n", (unsigned long long)d->m.approvals_expired);
	fprintf(f, "cordon_approvals_total{state=\"wait_timeout\"} %llu\n", (unsigned long long)d->m.approvals_timeout);
	fprintf(f, "cordon_approvals_total{state=\"cancelled\"} %llu\n", (unsigned long long)d->m.approvals_cancelled);
	fprintf(f, "# HELP cordon_spawn_latency_ms Connector instance spawn latency.\n"
		   "# TYPE cordon_spawn_latency_ms histogram\n");
	for (size_t i = 0; i < ELEMENTSOF(le); i++) {
		cum += d->m.spawn_buckets[i];
		fprintf(f, "cordon_spawn_latency_ms_bucket{le=\"%s\"} %llu\n", le[i], (unsigned long long)cum);
	}
	fprintf(f, "cordon_spawn_latency_ms_sum %.3f\ncordon_spawn_latency_ms_count %llu\n", d->m.spawn_sum_ms,
		(unsigned long long)d->m.spawn_count);
	fprintf(f, "# TYPE cordon_instance_restarts_total counter\ncordon_instance_restarts_total %llu\n",
		(unsigned long long)d->m.instance_restarts);
	fprintf(f, "# TYPE cordon_instance_crashes_total counter\ncordon_instance_crashes_total %llu\n",
		(unsigned long long)d->m.instance_crashes);
	fprintf(f, "# TYPE cordon_oom_kills_total counter\ncordon_oom_kills_total %llu\n",
		(unsigned long long)d->m.oom_kills);
	fprintf(f, "# TYPE cordon_network_denials_total counter\ncordon_network_denials_total %llu\n",
		(unsigned long long)d->m.network_denials);
	fprintf(f, "# TYPE cordon_worker_protocol_kills_total counter\ncordon_worker_protocol_kills_total %llu\n",
		(unsigned long long)d->m.worker_protocol_kills);
	fprintf(f, "# TYPE cordon_audit_append_failures_total counter\ncordon_audit_append_failures_total %llu\n",
		(unsigned long long)cnt.audit_append_failures);
	fprintf(f, "# TYPE cordon_sessions gauge\ncordon_sessions %u\n", sessions);
	fprintf(f, "# TYPE cordon_sessions_refused_total counter\ncordon_sessions_refused_total %llu\n",
		(unsigned long long)d->m.sessions_refused);
	fprintf(f, "# TYPE cordon_profiles_failed gauge\ncordon_profiles_failed %zu\n", d->n_bad_profiles_total);
	return ferror(f) ? -EIO : 0;
}

void cordon_daemon_approval_decided(struct cordon_daemon *d, const char *approval_id)
{
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
	session_notify_all_list_changed(d);
}

void cordon_daemon_delegations_changed(struct cordon_daemon *d, const char *connector)
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
	session_notify_all_list_changed(d);
	return n;
}

void cordon_daemon_instance_exited(struct cordon_daemon *d, uint32_t instance, int wait_status, const json_t *report)
{
	worker_instance_exited(d, instance, wait_status, report);
}

void cordon_daemon_helper_lost(struct cordon_daemon *d, const struct cordon_diag *why)
{
	d->helper_lost = true;
	log_error("launcher helper lost (%s): every connector is gone; health is failing", why ? why->message : "");
	workers_kill_all(d);
}

/* A connectors.add that failed after the install committed: uninstall
 * again (grant, partial inventory), so nothing is left half-installed and
 * the same add can simply be retried. Returns r. */
static int add_undo(struct cordon_daemon *d, const char *connector, int r)
{
	struct cordon_actor sys = cordon_actor_system();

	if (cordon_connector_remove(d->db, &sys, connector) < 0)
		log_warning("connector %s: undoing the failed install: %s", connector, cordon_db_last_error(d->db));
	daemon_surface_changed(d, connector);
	return r;
}

int cordon_daemon_connector_add(struct cordon_daemon *d, const char *connector, struct cordon_diag *diag)
{
	struct dconn *c = daemon_conn(d, connector);
	struct cordon_actor sys = cordon_actor_system();
	struct dworker *w = NULL;
	uint64_t deadline;
	int r;

	if (!c) {
		/* A file that is there but did not load: its error, not "no
		 * such profile" (cordond loads profiles once, at start-up). */
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
	r = cordon_connector_install(d->db, &sys, c->profile);
	if (r < 0)
		return cordon_diag_set(diag, -r, "connector", "cannot install %s: %s", connector,
				       r == -EEXIST ? "already installed" : cordon_db_last_error(d->db));
	/* Take the inventory: launch once and wait (bounded) for tools/list;
	 * every advertised tool is recorded pending_review. */
	r = worker_launch(d, c, NULL, true, &w, diag);
	if (r < 0)
		return add_undo(d, connector, r);
	deadline = cordon_loop_now_ms() + 20000;
	while (cordon_loop_now_ms() < deadline) {
		bool alive = false;

		for (struct dworker *x = d->workers; x; x = x->next)
			if (x == w)
				alive = true;
		if (!alive)
			return add_undo(d, connector,
					cordon_diag_set(diag, EIO, "connector",
							"%s exited before listing its tools: %s", connector,
							c->last_error));
		if (w->inventory_synced) {
			worker_kill(w, "inventory taken");
			return 0;
		}
		(void)cordon_loop_run_once(d->loop, 100);
	}
	worker_kill(w, "inventory timed out");
	return add_undo(
		d, connector,
		cordon_diag_set(diag, ETIMEDOUT, "connector", "%s did not list its tools within 20 s", connector));
}

json_t *cordon_daemon_approval_arguments(struct cordon_daemon *d, const char *approval_id)
{
	for (struct dsession *s = d->sessions; s; s = s->next)
		for (struct dcall *c = s->calls; c; c = c->next)
			if (c->approval_id[0] && !strcmp(c->approval_id, approval_id) && c->args_jcs)
				return json_loadb(c->args_jcs, c->args_len, JSON_REJECT_DUPLICATES, NULL);
	return NULL;
}

int cordon_daemon_audit_verifier(struct cordon_daemon *d, struct cordon_note_verifier *ret)
{
	if (!d->have_verifier)
		return -ENOENT;
	*ret = d->verifier;
	return 0;
}

int cordon_daemon_connector_remove(struct cordon_daemon *d, const char *connector, struct cordon_diag *diag)
{
	struct dconn *c = daemon_conn(d, connector);
	struct cordon_actor sys = cordon_actor_system();
	int r;

	if (!c)
		return cordon_diag_set(diag, ENOENT, "connector", "unknown connector '%s'", connector);
	r = cordon_connector_remove(d->db, &sys, connector);
	if (r < 0)
		return cordon_diag_set(diag, -r, "connector", "cannot remove %s: %s", connector,
				       cordon_db_last_error(d->db));
	/* Committed: now the I/O. Its instances end (in-flight calls fail),
	 * waiting calls see their approvals gone, clients get list_changed. */
	(void)end_instances(d, c, "connector removed");
	daemon_surface_changed(d, connector);
	session_notify_all_list_changed(d);
	return 0;
}

int cordon_daemon_connector_restart(struct cordon_daemon *d, const char *connector, struct cordon_diag *diag)
{
	struct dconn *c = daemon_conn(d, connector);

	if (!c)
		return cordon_diag_set(diag, ENOENT, "connector", "unknown connector '%s'", connector);
	(void)end_instances(d, c, "restarted by an operator");
	c->restarts++;
	c->failing = false;
	c->crashes = 0;
	c->next_start_ms = 0;
	return 0;
}
