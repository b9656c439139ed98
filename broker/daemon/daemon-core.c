/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordond's core: the daemon object's start-up phases, its main loop and
 * its teardown. The top of the daemon layer: it composes every other
 * module (the privilege phases, the launcher spawner, the operator and HTTP
 * surfaces, the gateway, the workers) and nothing calls back into it: the
 * spawner's events come through the struct cordon_spawner_events given at
 * attach, the surfaces call the daemon.h contract (daemon.c), and the
 * workers reach the gateway through its worker_events.
 *
 * Start-up, in this order (see daemon-privs.c for the why of each privilege
 * phase):
 *   1. load the profiles (and credential values, only to scrub them from
 *      connector stderr) while the files are still readable; a file that
 *      fails is kept with its error (health degraded, named);
 *   2. start the launcher helper — it keeps the privileges connectors need
 *      — and put the profiles of step 1 in force there;
 *   3. create the state/runtime directories and bind the sockets;
 *   4. drop to the run user, clear every capability, no_new_privs;
 *   5. sandbox ourselves (Landlock: state, runtime, profiles only);
 *   6. open the database (0600), set up the audit signing key, draw the
 *      approval key (locked memory);
 *   7. recover (prepared -> abandoned, dispatched -> outcome_unknown,
 *      outstanding approvals revoked: the old process key is gone);
 *   8. serve; READY=1 to systemd.
 * The daemon core is the edge of the program: it logs once per event. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "daemon-core.h"
#include "daemon-log.h"
#include "daemon-private.h"
#include "daemon-reload.h"
#include "delegations.h"
#include "fd-util.h"
#include "gateway-decide.h"
#include "gateway-http.h"
#include "gateway.h"
#include "http.h"
#include "log.h"
#include "operator.h"
#include "webhook.h"
#include "worker-denials.h"
#include "worker.h"

#define TICK_MS 100
/* SQLite's WAL is copied back into the database from the tick, not inside
 * a call (docs/performance.md, bench-proxy): at the first tick with no
 * commit since the one before, or once it holds WAL_TICK_PAGES. A commit
 * does it itself only at WAL_LIMIT_PAGES, the WAL's bound (4 KiB pages:
 * 64 MiB). */
#define WAL_TICK_PAGES	4000
#define WAL_LIMIT_PAGES 16000

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
	/* mcp-http.sock: the same surface as gateway.sock (MCP over HTTP,
	 * gateway-http.c), so the same mode and group. */
	snprintf(path, sizeof(path), "%s/mcp-http.sock", d->cfg.runtime_dir);
	r = unix_listen(path, d->gateway_gid != (gid_t)-1 ? 0660 : 0666, d->run_uid,
			d->gateway_gid != (gid_t)-1 ? d->gateway_gid : d->run_gid, &d->mcp_http_fd, diag);
	if (r < 0)
		return r;
	/* MCP over loopback TCP (mcp_http_listen, issue 18): bound here, as
	 * root if we started as root, before Landlock denies TCP bind; the
	 * config admits a routable address only with TLS. */
	if (d->cfg.mcp_http_listen) {
		r = gateway_http_tcp_listen(d->cfg.mcp_http_listen, d->mcp_tls_cert != NULL, &d->mcp_tcp_fd,
					    &d->mcp_tcp_port, diag);
		if (r < 0)
			return r;
	}
	/* operator.sock and http.sock: 0660, owner root (or us), group the
	 * operator group; the operator surface re-checks SO_PEERCRED. */
	snprintf(path, sizeof(path), "%s/operator.sock", d->cfg.runtime_dir);
	r = unix_listen(path, 0660, geteuid() == 0 ? 0 : d->run_uid, d->operator_gid, &d->operator_fd, diag);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/http.sock", d->cfg.runtime_dir);
	return unix_listen(path, 0660, geteuid() == 0 ? 0 : d->run_uid, d->operator_gid, &d->http_fd, diag);
}

/* Signals, read from the signalfd on the loop (docs/cordond.md, "Signals
 * and reload"): SIGTERM, SIGINT and SIGQUIT stop cordond cleanly (the
 * broker.stop audit record names the signal); SIGHUP reloads the
 * configuration and the profiles; every other signal whose default would
 * end the process is logged and ignored. */
static const int stop_signals[] = { SIGTERM, SIGINT, SIGQUIT };
static const int ignored_signals[] = { SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF,
				       SIGIO,	SIGXCPU, SIGXFSZ, SIGSTKFLT, SIGPWR };

/* Whether sig is logged and ignored: the list above and every real-time
 * signal (their default ends the process too). */
static bool signal_ignored(int sig)
{
	for (size_t i = 0; i < ELEMENTSOF(ignored_signals); i++)
		if (sig == ignored_signals[i])
			return true;
	return sig >= SIGRTMIN && sig <= SIGRTMAX;
}

/* "USR1", "RTMIN+3": the signal's name without "SIG". */
static const char *signal_name(int sig, char *buf, size_t size)
{
	if (sigabbrev_np(sig))
		return sigabbrev_np(sig);
	if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, size, "RTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, size, "%d", sig);
	return buf;
}

static void on_signal(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata)
{
	struct cordon_daemon *d = userdata;
	struct signalfd_siginfo si;

	(void)revents;
	while (read(fd, &si, sizeof(si)) == sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGHUP) {
			json_t *res = NULL;
			struct cordon_diag diag = {};

			log_info("signal SIGHUP from pid %u: reloading the configuration and the profiles", si.ssi_pid);
			if (cordon_daemon_reload(d, NULL, &res, &diag) >= 0)
				json_decref(res);
			continue;
		}
		for (size_t i = 0; i < ELEMENTSOF(stop_signals); i++)
			if (sig == stop_signals[i]) {
				log_notice("signal SIG%s from pid %u: shutting down", sigabbrev_np(sig), si.ssi_pid);
				if (!d->stop_signal)
					d->stop_signal = sig;
				cordon_loop_quit(loop, 0);
			}
		if (signal_ignored(sig)) {
			char name[16];

			log_warning("signal SIG%s from pid %u: ignored (SIGTERM stops cordond, SIGHUP reloads)",
				    signal_name(sig, name, sizeof(name)), si.ssi_pid);
		}
	}
}

/* The head of the fatal-signal line, built before any handler can run
 * (with the journal's "<2>" prefix or the plain level, as log.c would). */
static char fatal_head[160];
static size_t fatal_head_len;

/* A crash signal (the process faulted, aborted, or someone sent one): one
 * line on stderr (cordon.daemon.fatal at level crit), written with write(2)
 * alone (async-signal-safe), then the default action (the handler is reset
 * on entry, SA_RESETHAND) ends the process with a core as before. */
static void on_fatal(int sig)
{
	static const char tail[] = " clean_shutdown=no\n";
	char msg[sizeof(fatal_head) + 16 + sizeof(tail)];
	const char *name = sigabbrev_np(sig);
	size_t n = fatal_head_len;

	memcpy(msg, fatal_head, n);
	for (size_t i = 0; name && name[i] && i < 16; i++)
		msg[n++] = name[i];
	memcpy(msg + n, tail, sizeof(tail) - 1);
	n += sizeof(tail) - 1;
	(void)!write(STDERR_FILENO, msg, n);
	(void)raise(sig);
}

static void fatal_signals_log(void)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS };
	struct sigaction sa = { .sa_handler = on_fatal, .sa_flags = SA_RESETHAND | SA_NODEFER };
	char head[80];
	int n;

	snprintf(head, sizeof(head), "[%s %s] signal=SIG", dlog_event_name(DLOG_DAEMON_FATAL),
		 dlog_event_id(DLOG_DAEMON_FATAL));
	if (log_get_journal())
		n = snprintf(fatal_head, sizeof(fatal_head), "<%d>cordond: %s", LOG_LEVEL_CRIT, head);
	else
		n = snprintf(fatal_head, sizeof(fatal_head), "cordond: %s: %s", log_level_name(LOG_LEVEL_CRIT), head);
	fatal_head_len = n < 0 ? 0 : (size_t)n < sizeof(fatal_head) ? (size_t)n : sizeof(fatal_head) - 1;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ELEMENTSOF(fatal); i++)
		(void)sigaction(fatal[i], &sa, NULL);
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

/* Durable work the calls left for idle time: the signed audit checkpoint a
 * decision found due (a FULL transaction: its fsync makes the decisions
 * before it durable), then the WAL's copy back into the database. */
static void db_tick(struct cordon_daemon *d)
{
	struct cordon_db_counters cnt;

	(void)cordon_audit_checkpoint_pending(d->db);
	cordon_db_get_counters(d->db, &cnt);
	(void)cordon_db_wal_checkpoint(d->db, cnt.transactions_committed == d->wal_tick_commits ? 1 : WAL_TICK_PAGES);
	d->wal_tick_commits = cnt.transactions_committed;
}

/* Audit retention (config audit_retain_days / audit_retain_records): at
 * the first tick, then hourly. cordon_audit_prune() deletes only up to a
 * signed checkpoint and keeps every checkpoint, so verify still passes and
 * names the pruned range. A log that does not verify up to the cut is not
 * pruned (logged; `cordonctl audit verify` says where). */
#define AUDIT_RETENTION_EVERY_MS (3600u * 1000)

static void audit_retention_tick(struct cordon_daemon *d, uint64_t now)
{
	static uint64_t last;
	static bool ran;
	struct cordon_audit_retention p = {
		.retain_usec = (uint64_t)d->cfg.audit_retain_days * 86400 * CORDON_USEC_PER_SEC,
		.retain_records = d->cfg.audit_retain_records,
	};
	struct cordon_audit_prune_result res;

	if (!p.retain_usec && !p.retain_records)
		return;
	if (ran && now - last < AUDIT_RETENTION_EVERY_MS)
		return;
	ran = true;
	last = now;
	if (cordon_audit_prune(d->db, &p, &res) < 0)
		log_error("audit retention: %s", cordon_db_last_error(d->db));
	else if (res.deleted > 0)
		log_info("audit retention: deleted %llu records; records 1..%llu are pruned",
			 (unsigned long long)res.deleted, (unsigned long long)res.pruned_through);
}

/* Pending approvals past their expiry, noted before the sweep marks them
 * expired, so each gets its cordon.approval.decided line. At most
 * EXPIRE_LOGGED are named per sweep; the rest are counted in one more. */
#define EXPIRE_LOGGED 32
struct expiring {
	uint64_t now;
	size_t n;
	char id[EXPIRE_LOGGED][CORDON_ID_STRING_MAX];
};

static int expiring_one(const struct cordon_approval_info *info, void *userdata)
{
	struct expiring *e = userdata;

	if (info->expires_at <= e->now && e->n < EXPIRE_LOGGED)
		snprintf(e->id[e->n++], sizeof(e->id[0]), "%s", info->id);
	return 0;
}

static void approvals_expire_logged(struct cordon_daemon *d)
{
	struct cordon_list_filter f = {
		.states = CORDON_STATE_BIT(CORDON_APPROVAL_REQUESTED) | CORDON_STATE_BIT(CORDON_APPROVAL_APPROVED),
	};
	struct expiring e = { .now = cordon_db_now(d->db) };
	uint64_t n = 0, logged = 0;

	(void)cordon_approvals_list(d->db, &f, expiring_one, &e);
	if (cordon_approvals_expire(d->db, &n) < 0 || n == 0)
		return;
	for (size_t i = 0; i < e.n; i++) {
		struct cordon_approval_info info;

		if (cordon_approval_get(d->db, e.id[i], &info) >= 0 && info.state == CORDON_APPROVAL_EXPIRED) {
			dlog_approval_decided(&info, NULL);
			logged++;
		}
	}
	if (n > logged) {
		char count[24];

		snprintf(count, sizeof(count), "%llu", (unsigned long long)(n - logged));
		dlog_event(DLOG_APPROVAL_DECIDED, "decision", "expired", "count", count, "by", "system");
	}
}

static void on_tick(struct cordon_loop *loop, void *userdata)
{
	struct cordon_daemon *d = userdata;
	static uint64_t last_sweep;
	uint64_t now = cordon_loop_now_ms();

	gateway_tick(d);
	gateway_http_tick(d->mcp_http);
	gateway_http_tick(d->mcp_http_tcp);
	workers_tick(d, now);
	dlog_denials_flush(&d->denials_log, now, false);
	db_tick(d);
	audit_retention_tick(d, now);
	cordon_webhook_tick(d->webhook, d);
	if (now - last_sweep >= 5000) {
		last_sweep = now;
		approvals_expire_logged(d);
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

/* ---- the spawner's events (struct cordon_spawner_events) ---------------- */

static void on_instance_exited(void *userdata, uint32_t instance, int wait_status, const json_t *report)
{
	worker_instance_exited(userdata, instance, wait_status, report);
}

static void on_network_denied(void *userdata, uint32_t instance, const json_t *event)
{
	struct cordon_daemon *d = userdata;

	d->m.network_denials++;
	worker_network_denied(d, instance, event);
}

static void on_helper_lost(void *userdata, const struct cordon_diag *why)
{
	struct cordon_daemon *d = userdata;

	d->helper_lost = true;
	log_error("launcher helper lost (%s): every connector is gone; health is failing", why ? why->message : "");
	workers_kill_all(d);
}

int cordon_daemon_new(const struct cordon_daemon_config *cfg, const struct cordon_spawner *spawner,
		      struct cordon_daemon **ret, struct cordon_diag *diag)
{
	return cordon_daemon_new_args(cfg, spawner, 0, NULL, ret, diag);
}

int cordon_daemon_new_args(const struct cordon_daemon_config *cfg, const struct cordon_spawner *spawner, int argc,
			   char *const *argv, struct cordon_daemon **ret, struct cordon_diag *diag)
{
	struct cordon_daemon *d;
	struct cordon_broker_start_result rec = {};
	struct cordon_audit_options ao = { .origin = CORDON_DAEMON_AUDIT_ORIGIN, .checkpoint_when_idle = true };
	struct cordon_db_options dbo = { .wal_limit_pages = WAL_LIMIT_PAGES };
	sigset_t mask;
	int r;

	d = calloc(1, sizeof(*d));
	if (!d)
		return cordon_diag_set(diag, ENOMEM, "daemon", "out of memory");
	d->gateway_fd = d->operator_fd = d->http_fd = d->mcp_http_fd = d->signal_fd = d->notify_fd = -EBADF;
	d->mcp_tcp_fd = -EBADF;
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
	DUP(mcp_http_listen);
	DUP(mcp_http_tls_cert);
	DUP(mcp_http_tls_key);
	DUP(mcp_http_hosts);
	DUP(launcher);
	DUP(approval_webhook_url);
	DUP(approval_webhook_secret_file);
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
	/* Each pass's tools/call decisions commit together at its end. */
	cordon_loop_on_pass_end(d->loop, decide_batch_pass_end, d);
	signal(SIGPIPE, SIG_IGN);
	/* Every session and worker holds fds: use the hard limit. */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	fatal_signals_log();
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	for (size_t i = 0; i < ELEMENTSOF(stop_signals); i++)
		sigaddset(&mask, stop_signals[i]);
	for (int sig = 1; sig <= SIGRTMAX; sig++)
		if (signal_ignored(sig))
			sigaddset(&mask, sig);
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
	if (argv && daemon_reload_args(d, argc, argv) < 0) {
		r = cordon_diag_set(diag, ENOMEM, "daemon", "out of memory");
		goto fail;
	}
	r = daemon_profiles_load(d, diag);
	if (r < 0)
		goto fail;
	/* The webhook's secret is root's file: read it now. */
	if (d->cfg.approval_webhook_url) {
		r = cordon_webhook_new(d->cfg.approval_webhook_url, d->cfg.approval_webhook_secret_file, &d->webhook,
				       diag);
		if (r < 0)
			goto fail;
	}
	/* So are the TLS certificate and key of mcp_http_listen. */
	if (d->cfg.mcp_http_tls_cert) {
		r = gateway_http_tls_read(d->cfg.mcp_http_tls_cert, "mcp_http_tls_cert", false, &d->mcp_tls_cert, diag);
		if (r >= 0)
			r = gateway_http_tls_read(d->cfg.mcp_http_tls_key, "mcp_http_tls_key", true, &d->mcp_tls_key,
						  diag);
		if (r < 0)
			goto fail;
	}

	/* 2. The launcher helper keeps the privileges connectors need; fork it
	 * before we drop ours. */
	if (spawner)
		d->spawner = *spawner;
	else {
		/* The helper re-reads the --config file for a reload (cordond's
		 * own sandbox would not see a file replaced by rename). */
		const char *config = d->config_path && d->config_path[0] == '/' ? d->config_path : NULL;

		r = cordon_daemon_launcher_spawner(d->cfg.launcher, d->cfg.profiles_dir, config, &d->spawner, diag);
		if (r < 0)
			goto fail;
	}
	d->have_spawner = true;
	if (d->spawner.attach)
		d->spawner.attach(d->spawner.userdata, &(struct cordon_spawner_events){ .exited = on_instance_exited,
											.net_denied = on_network_denied,
											.helper_lost = on_helper_lost,
											.userdata = d });
	if (d->spawner.capabilities)
		d->capabilities = d->spawner.capabilities(d->spawner.userdata);
	/* The helper builds instances only from the profiles cordond loaded
	 * and validated: hand them over. */
	r = daemon_profiles_hand_over(d, diag);
	if (r < 0)
		goto fail;

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
	if (r >= 0) {
		/* MCP over HTTP (gateway-http.c): the same sessions. */
		r = gateway_http_start(d, d->mcp_http_fd, NULL, &d->mcp_http, diag);
		if (r < 0)
			goto fail;
		if (d->mcp_tcp_fd >= 0) {
			const struct gw_http_options to = {
				.tcp = true,
				.tls_cert = d->mcp_tls_cert,
				.tls_key = d->mcp_tls_key,
				.hosts = d->cfg.mcp_http_hosts,
			};

			r = gateway_http_start(d, d->mcp_tcp_fd, &to, &d->mcp_http_tcp, diag);
			if (r < 0)
				goto fail;
			log_info("MCP over HTTP%s on TCP port %d (%s): bearer tokens of cordonctl agents",
				 d->mcp_tls_cert ? "S (TLS)" : "", d->mcp_tcp_port, d->cfg.mcp_http_listen);
		}
	}
	if (r >= 0)
		r = cordon_loop_timer(d->loop, TICK_MS, on_tick, d, &d->tick);
	if (r >= 0 && d->webhook)
		r = cordon_webhook_start(d->webhook, d);
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
	char pid[24], profiles[24], gateway[PATH_MAX];
	int r;

	sd_notify_send(d->notify_fd, "READY=1\nSTATUS=serving");
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(profiles, sizeof(profiles), "%zu", d->n_conns);
	snprintf(gateway, sizeof(gateway), "%s/gateway.sock", d->cfg.runtime_dir);
	dlog_event(DLOG_DAEMON_STARTED, "pid", pid, "gateway", gateway, "profiles", profiles);
	r = cordon_loop_run(d->loop);
	dlog_denials_flush(&d->denials_log, cordon_loop_now_ms(), true);
	dlog_event(DLOG_DAEMON_STOPPING, "reason",
		   d->stop_signal == SIGTERM   ? "sigterm"
		   : d->stop_signal == SIGINT  ? "sigint"
		   : d->stop_signal == SIGQUIT ? "sigquit"
					       : "loop-ended");
	return r;
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
	gateway_http_free(d->mcp_http);
	d->mcp_http = NULL;
	gateway_http_free(d->mcp_http_tcp);
	d->mcp_http_tcp = NULL;
	/* libmicrohttpd kept pointers to them until it stopped. */
	gateway_http_tls_free(d->mcp_tls_cert);
	gateway_http_tls_free(d->mcp_tls_key);
	d->mcp_tls_cert = d->mcp_tls_key = NULL;
	if (d->loop)
		gateway_stop(d);
	workers_kill_all(d);
	if (d->tick)
		cordon_loop_timer_cancel(d->tick);
	cordon_webhook_free(d->webhook);
	d->webhook = NULL;
	if (d->w_signal)
		cordon_loop_unwatch(d->w_signal);
	if (d->w_spawner)
		cordon_loop_unwatch(d->w_spawner);
	if (d->db) {
		/* broker.stop record and the final signed checkpoint. */
		(void)cordon_broker_stop_because(d->db, d->stop_signal == SIGTERM   ? "sigterm"
							: d->stop_signal == SIGINT  ? "sigint"
							: d->stop_signal == SIGQUIT ? "sigquit"
										    : NULL);
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
	if (d->mcp_http_fd >= 0)
		close(d->mcp_http_fd);
	if (d->mcp_tcp_fd >= 0)
		close(d->mcp_tcp_fd);
	if (d->signal_fd >= 0)
		close(d->signal_fd);
	if (d->notify_fd >= 0)
		close(d->notify_fd);
	if (d->cfg.runtime_dir) {
		char path[PATH_MAX];

		for (const char *const *n = (const char *const[]){ "gateway.sock", "mcp-http.sock", "operator.sock",
								   "http.sock", NULL };
		     *n; n++) {
			snprintf(path, sizeof(path), "%s/%s", d->cfg.runtime_dir, *n);
			(void)unlink(path);
		}
	}
	daemon_profiles_free(d);
	json_decref(d->capabilities);
	json_decref(d->self_sandbox);
	if (d->loop)
		cordon_loop_free(d->loop);
	cordon_daemon_config_done(&d->cfg);
	free(d);
}
