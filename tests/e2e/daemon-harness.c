/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "daemon-harness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "actions.h"
#include "approvals.h"
#include "audit.h"
#include "checkpoint.h"
#include "daemon-core.h"
#include "fd-util.h"
#include "inventory.h"
#include "probe.h"
#include "profile.h"
#include "test-support.h"

#define DIE(...)                                                                                                       \
	do {                                                                                                           \
		fprintf(stderr, "harness: " __VA_ARGS__);                                                              \
		fputc('\n', stderr);                                                                                   \
		abort();                                                                                               \
	} while (0)

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		DIE("cannot write %s", path);
}

const char *harness_helpers_dir(void)
{
	static char buf[600];
	const char *h = cordon_test_env("CORDON_HELPERS_DIR", NULL);
	const char *b = cordon_test_env("CORDON_BUILD_DIR", NULL);

	if (h) {
		snprintf(buf, sizeof(buf), "%s/fake-connector", h);
		if (access(buf, X_OK) == 0)
			return h;
	}
	if (!b)
		DIE("CORDON_BUILD_DIR is not set");
	snprintf(buf, sizeof(buf), "%s/tests/helpers/fake-connector", b);
	if (access(buf, X_OK) == 0) {
		snprintf(buf, sizeof(buf), "%s/tests/helpers", b);
		return buf;
	}
	snprintf(buf, sizeof(buf), "%s/tests", b);
	return buf;
}

static void write_profile(struct harness *h, const char *id, const char *instances, const char *pass)
{
	const char *helpers = harness_helpers_dir();
	char path[700], text[4096];

	snprintf(path, sizeof(path), "%s/%s.yaml", h->profiles, id);
	snprintf(text, sizeof(text),
		 "version: 1\n"
		 "connector:\n"
		 "  description: fake connector for cordond tests\n"
		 "  command: [%s/fake-connector, %s, --extra]\n"
		 "  instances: %s\n"
		 "  credentials:\n"
		 "    - {env: FAKE_TOKEN, file: %s/token}\n"
		 "sandbox:\n"
		 "  user: dynamic\n"
		 "  filesystem:\n"
		 "    system:\n"
		 "      - {path: /usr, access: read-exec}\n"
		 "    roots:\n"
		 "      - {path: %s, access: read-write, at: /data, allow_uid0_owner: true}\n"
		 "    ceiling: [%s]\n"
		 "    tmp: 1M\n"
		 "  network: {mode: none}\n"
		 "tools:\n"
		 "  default_risk: high\n"
		 "  risk: {echo: read, append: write, crash: read, garbage: read, roots: read, mutate: read, ask: read,"
		 " flood: read, leak: read}\n"
		 "  grant: [echo, append, crash, garbage, roots, mutate, ask, flood, leak]\n"
		 "  replay: {append: %s}\n"
		 "resources: %s\n"
		 "prompts: %s\n"
		 "client_requests: [%s]\n"
		 "approval:\n"
		 "  ttl: 120s\n",
		 helpers, h->out_file, instances, h->dir, h->data, h->data, !strcmp(pass, "read") ? "safe" : "unsafe",
		 pass, pass, !strcmp(pass, "read") ? "elicitation" : "");
	write_text(path, text);
}

void harness_setup(struct harness *h, const char *tag)
{
	memset(h, 0, sizeof(*h));
	h->dir = cordon_test_mkdtemp(tag);
	snprintf(h->state, sizeof(h->state), "%s/state", h->dir);
	snprintf(h->profiles, sizeof(h->profiles), "%s/profiles", h->dir);
	snprintf(h->runtime, sizeof(h->runtime), "%s/run", h->dir);
	snprintf(h->data, sizeof(h->data), "%s/data", h->dir);
	snprintf(h->out_file, sizeof(h->out_file), "%s/out.txt", h->data);
	snprintf(h->gateway, sizeof(h->gateway), "%s/gateway.sock", h->runtime);
	if (mkdir(h->profiles, 0755) < 0 || mkdir(h->data, 0755) < 0)
		DIE("mkdir: %m");
	/* A credential the profile injects: the broker must never log it. */
	{
		char tok[700];

		snprintf(tok, sizeof(tok), "%s/token", h->dir);
		write_text(tok, "s3cr3t-T0KEN-value-4711\n");
	}
	write_profile(h, "fake", "shared", "none");
	write_profile(h, "fakeps", "per-session", "read");
	h->approval_wait_s = 2;
}

/* ---- the test spawner ---------------------------------------------------- */

struct tspawn {
	pid_t pids[4096];
	uint32_t n;
	size_t last_roots;
	const struct cordon_caps *caps;
};

/* Like the launcher helper: the credential files are read at each spawn,
 * injected into the instance's environment and their values handed to the
 * daemon for scrubbing. Best effort here: a file the daemon's Landlock
 * domain cannot read is skipped (the harness's default token lives outside
 * it; tests that rotate a credential keep theirs beneath the profiles
 * directory). */
static void t_credentials(const struct cordon_profile *p, char ***ret_env, char ***ret_vals, size_t *ret_n)
{
	extern char **environ;
	size_t ne = 0, n = 0;
	char **env, **vals;

	while (environ[ne])
		ne++;
	env = calloc(ne + p->n_credentials + 1, sizeof(char *));
	vals = calloc(p->n_credentials + 1, sizeof(char *));
	if (!env || !vals)
		DIE("out of memory");
	memcpy(env, environ, ne * sizeof(char *));
	for (size_t i = 0; i < p->n_credentials; i++) {
		char *buf = NULL, *kv = NULL;
		size_t len = 0;

		if (read_file_bounded(AT_FDCWD, p->credentials[i].file, 4096, &buf, &len) < 0)
			continue;
		while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			buf[--len] = 0;
		if (asprintf(&kv, "%s=%s", p->credentials[i].env, buf) < 0)
			DIE("out of memory");
		env[ne++] = kv;
		vals[n++] = buf;
	}
	*ret_env = env;
	*ret_vals = vals;
	*ret_n = n;
}

/* Frees what t_credentials added to environ's copy. */
static void t_env_free(char **env)
{
	extern char **environ;
	size_t ne = 0;

	while (environ[ne])
		ne++;
	for (size_t i = ne; env[i]; i++) {
		explicit_bzero(env[i], strlen(env[i]));
		free(env[i]);
	}
	free(env);
}

static int t_spawn(void *userdata, const struct cordon_profile *p, const char *tag,
		   const struct cordon_serve_root *roots, size_t n_roots, struct cordon_worker_io *ret,
		   struct cordon_diag *diag)
{
	struct tspawn *ts = userdata;
	int in[2], out[2], err[2];
	char **env = NULL, **vals = NULL;
	size_t n_vals = 0;
	pid_t pid;

	(void)tag;
	(void)roots;
	ts->last_roots = n_roots;
	if (ts->n + 1 >= 4096)
		return cordon_diag_set(diag, EAGAIN, "spawn", "too many instances");
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		return cordon_diag_set(diag, errno, "spawn", "pipe: %m");
	t_credentials(p, &env, &vals, &n_vals);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		t_env_free(env);
		for (size_t i = 0; i < n_vals; i++)
			free(vals[i]);
		free(vals);
		return cordon_diag_set(diag, e, "spawn", "fork: %s", strerror(e));
	}
	if (pid == 0) {
		/* Like the launcher's instances: die with the broker. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		execve(p->command[0], p->command, env);
		_exit(127);
	}
	t_env_free(env);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	ts->pids[++ts->n] = pid;
	*ret = (struct cordon_worker_io){ .instance = ts->n,
					  .pid = pid,
					  .stdin_fd = in[1],
					  .stdout_fd = out[0],
					  .stderr_fd = err[0],
					  .secrets = n_vals ? vals : NULL,
					  .n_secrets = n_vals };
	if (!n_vals)
		free(vals);
	return 0;
}

static void t_kill(void *userdata, uint32_t instance)
{
	struct tspawn *ts = userdata;

	if (instance <= ts->n && ts->pids[instance] > 0)
		kill(ts->pids[instance], SIGKILL);
}

static int t_reap(void *userdata, uint32_t instance)
{
	struct tspawn *ts = userdata;
	int st = -1;

	if (instance <= ts->n && ts->pids[instance] > 0) {
		if (waitpid(ts->pids[instance], &st, 0) < 0)
			st = -1;
		ts->pids[instance] = 0;
	}
	return st;
}

static json_t *t_caps(void *userdata)
{
	struct tspawn *ts = userdata;
	char *s;
	json_t *v;

	if (!ts->caps)
		return json_pack("{s:s}", "spawner", "test (direct fork+exec)");
	/* What the launcher helper sends: the probe's JSON report. */
	s = cordon_probe_to_json(ts->caps);
	if (!s)
		DIE("cordon_probe_to_json: out of memory");
	v = json_loads(s, 0, NULL);
	free(s);
	if (!v)
		DIE("the probe report is not JSON");
	return v;
}

static _Noreturn void daemon_child(struct harness *h, int ready_fd)
{
	static struct tspawn ts;
	static const char *exec_dirs[4];
	static const char *rw_dirs[2];
	struct cordon_daemon_config cfg;
	struct cordon_daemon *d = NULL;
	struct cordon_diag diag = {};
	struct cordon_spawner sp = {
		.spawn = t_spawn, .kill = t_kill, .reap = t_reap, .capabilities = t_caps, .userdata = &ts
	};
	int r;

	ts.caps = h->caps;
	exec_dirs[0] = harness_helpers_dir();
	exec_dirs[1] = "/usr";
	exec_dirs[2] = "/lib64";
	rw_dirs[0] = h->data;
	sp.sandbox_exec = exec_dirs;
	sp.sandbox_rw = rw_dirs;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The daemon's log, for tests that read it. */
	{
		char lp[700];
		int fd;

		snprintf(lp, sizeof(lp), "%s/daemon.log", h->dir);
		fd = open(lp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (fd >= 0) {
			dup2(fd, 2);
			close(fd);
		}
	}
	cordon_daemon_config_init(&cfg);
	cfg.state_dir = strdup(h->state);
	cfg.profiles_dir = strdup(h->profiles);
	cfg.runtime_dir = strdup(h->runtime);
	cfg.user = strdup("root"); /* caps cleared; keeps the db readable by the test */
	cfg.approval_wait_ms = (uint64_t)h->approval_wait_s * 1000;
	if (h->max_sessions)
		cfg.max_sessions = h->max_sessions;
	/* Issue 11 findings 3 and 6: held-argument budgets, session shares. */
	if (h->held_max)
		cfg.held_max = h->held_max;
	if (h->held_per_uid)
		cfg.held_per_uid = h->held_per_uid;
	if (h->sessions_per_uid)
		cfg.sessions_per_uid = h->sessions_per_uid;
	if (h->initialize_timeout_ms)
		cfg.initialize_timeout_ms = h->initialize_timeout_ms;
	r = cordon_daemon_new(&cfg, &sp, &d, &diag);
	cordon_daemon_config_done(&cfg);
	if (r < 0) {
		fprintf(stderr, "daemon child: %s: %s\n", diag.step, diag.message);
		_exit(10);
	}
	struct cordon_actor sys = cordon_actor_system();

	for (const char *const *c = (const char *const[]){ "fake", "fakeps", NULL }; *c; c++) {
		r = cordon_daemon_connector_add(d, &sys, *c, &diag);
		if (r < 0 && r != -EEXIST) {
			fprintf(stderr, "daemon child: add %s: %s\n", *c, diag.message);
			_exit(11);
		}
	}
	(void)!write(ready_fd, "R", 1);
	close(ready_fd);
	r = cordon_daemon_run(d);
	cordon_daemon_free(d);
	_exit(r == 0 ? 0 : 12);
}

void harness_start(struct harness *h)
{
	int p[2];
	char c;
	struct pollfd pfd;

	if (pipe2(p, O_CLOEXEC) < 0)
		DIE("pipe: %m");
	fflush(NULL);
	h->daemon_pid = fork();
	if (h->daemon_pid < 0)
		DIE("fork: %m");
	if (h->daemon_pid == 0) {
		close(p[0]);
		daemon_child(h, p[1]);
	}
	close(p[1]);
	pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
	if (poll(&pfd, 1, 30000) != 1 || read(p[0], &c, 1) != 1)
		DIE("the daemon did not start");
	close(p[0]);
}

int harness_stop(struct harness *h, int sig)
{
	int st = -1;

	if (h->daemon_pid <= 0)
		return -1;
	kill(h->daemon_pid, sig);
	if (waitpid(h->daemon_pid, &st, 0) < 0)
		st = -1;
	h->daemon_pid = 0;
	return st;
}

void harness_teardown(struct harness *h)
{
	if (h->daemon_pid > 0)
		harness_stop(h, SIGKILL);
	if (h->dir) {
		cordon_test_rm_rf(h->dir);
		free(h->dir);
		h->dir = NULL;
	}
}

json_t *harness_http_json(struct harness *h, const char *path, int *ret_status)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char req[300], buf[65536];
	size_t len = 0;
	ssize_t k;
	int fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		DIE("socket: %m");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/http.sock", h->runtime);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		DIE("connect %s: %m", sa.sun_path);
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", path);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		DIE("write the request: %m");
	while (len + 1 < sizeof(buf) && (k = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)k;
	close(fd);
	buf[len] = '\0';
	if (sscanf(buf, "HTTP/1.1 %d", ret_status) != 1)
		DIE("not an HTTP response: %.80s", buf);
	return strstr(buf, "\r\n\r\n") ? json_loads(strstr(buf, "\r\n\r\n") + 4, 0, NULL) : NULL;
}

/* ---- operator side --------------------------------------------------------- */

struct cordon_db *harness_db(struct harness *h)
{
	char path[700];
	struct cordon_db *db = NULL;
	struct cordon_diag diag = {};

	snprintf(path, sizeof(path), "%s/cordon.db", h->state);
	if (cordon_db_open(path, NULL, &db, &diag) < 0)
		DIE("open db: %s", diag.message);
	return db;
}

void harness_review_all(struct harness *h, const char *connector)
{
	struct cordon_db *db = harness_db(h);
	struct cordon_actor op = cordon_actor_operator(0, "test");

	for (const char *const *t = (const char *const[]){ "echo", "append", "crash", "garbage", "roots", "mutate",
							   "ask", "flood", "leak", NULL };
	     *t; t++) {
		struct cordon_inventory_record rec = {};

		if (cordon_inventory_get(db, connector, *t, &rec) < 0)
			DIE("inventory of %s/%s missing", connector, *t);
		if (rec.state != CORDON_INVENTORY_REVIEWED &&
		    cordon_inventory_review(db, &op, connector, *t, rec.fingerprint) < 0)
			DIE("review %s/%s: %s", connector, *t, cordon_db_last_error(db));
		cordon_inventory_record_done(&rec);
	}
	cordon_db_close(db);
}

static int decide_all(struct harness *h, bool approve)
{
	struct cordon_db *db = harness_db(h);
	struct cordon_actor op = cordon_actor_operator(0, "test");
	char path[700];
	sqlite3 *sql;
	sqlite3_stmt *st;
	char ids[64][CORDON_ID_STRING_MAX];
	int n = 0;

	snprintf(path, sizeof(path), "%s/cordon.db", h->state);
	if (sqlite3_open_v2(path, &sql, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		DIE("sqlite open");
	if (sqlite3_prepare_v2(sql, "SELECT id FROM approvals WHERE state = 0", -1, &st, NULL) != SQLITE_OK)
		DIE("prepare");
	while (sqlite3_step(st) == SQLITE_ROW && n < 64)
		snprintf(ids[n++], CORDON_ID_STRING_MAX, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(sql);
	for (int i = 0; i < n; i++)
		if (cordon_approval_decide(db, NULL, &op, ids[i], approve, NULL) < 0)
			DIE("decide %s: %s", ids[i], cordon_db_last_error(db));
	cordon_db_close(db);
	return n;
}

int harness_approve_all(struct harness *h)
{
	return decide_all(h, true);
}

int harness_deny_all(struct harness *h)
{
	return decide_all(h, false);
}

static int count(struct harness *h, const char *table, int state)
{
	char path[700], q[128];
	sqlite3 *sql;
	sqlite3_stmt *st;
	int n = -1;

	snprintf(path, sizeof(path), "%s/cordon.db", h->state);
	snprintf(q, sizeof(q), "SELECT count(*) FROM %s WHERE state = %d", table, state);
	if (sqlite3_open_v2(path, &sql, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		DIE("sqlite open");
	sqlite3_busy_timeout(sql, 5000);
	if (sqlite3_prepare_v2(sql, q, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(sql);
	return n;
}

int harness_count_actions(struct harness *h, int state)
{
	return count(h, "actions", state);
}

int harness_count_audit(struct harness *h, const char *needle)
{
	char path[700];
	sqlite3 *sql;
	sqlite3_stmt *st;
	int n = -1;

	snprintf(path, sizeof(path), "%s/cordon.db", h->state);
	if (sqlite3_open_v2(path, &sql, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		DIE("sqlite open");
	sqlite3_busy_timeout(sql, 5000);
	if (sqlite3_prepare_v2(sql, "SELECT count(*) FROM audit WHERE instr(CAST(record AS TEXT), ?1) > 0", -1, &st,
			       NULL) == SQLITE_OK &&
	    sqlite3_bind_text(st, 1, needle, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(sql);
	return n;
}

int harness_count_approvals(struct harness *h, int state)
{
	return count(h, "approvals", state);
}

int harness_out_lines(struct harness *h)
{
	return cordon_test_file_lines(h->out_file);
}

bool harness_audit_ok(struct harness *h, char *msg, size_t size)
{
	struct cordon_db *db = harness_db(h);
	struct cordon_note_verifier v = {};
	struct cordon_audit_report rep = {};
	char key[700];
	bool ok;

	snprintf(key, sizeof(key), "%s/audit-signing.key", h->state);
	if (cordon_audit_setup_key_file(db, &(struct cordon_audit_options){ .origin = "cordon/cordond/audit" }, key,
					"cordond", &v, NULL) < 0)
		DIE("audit key");
	if (cordon_audit_verify(db, &v, &rep) < 0)
		DIE("verify");
	cordon_audit_report_format(&rep, msg, size);
	ok = rep.verdict == CORDON_AUDIT_PASS;
	cordon_db_close(db);
	return ok;
}

/* ---- MCP over the gateway socket -------------------------------------------- */

int mcp_peer_connect(struct mcp_peer *p, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	memset(p, 0, sizeof(*p));
	p->next_id = 1;
	p->pid = -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	p->to = p->from = fd;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

void mcp_peer_disconnect(struct mcp_peer *p)
{
	if (p->to >= 0)
		close(p->to);
	p->to = p->from = -1;
	free(p->buf);
	p->buf = NULL;
	p->len = p->cap = 0;
}

long mcp_peer_send_request(struct mcp_peer *p, const char *method, json_t *params)
{
	long id = p->next_id++;
	json_t *msg = json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id", (json_int_t)id, "method", method);
	char *s;

	if (params)
		json_object_set_new(msg, "params", params);
	s = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (!s || write_all(p->to, s, strlen(s)) < 0 || write_all(p->to, "\n", 1) < 0)
		id = -1;
	free(s);
	return id;
}

json_t *mcp_peer_wait(struct mcp_peer *p, long id, int timeout_ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long el, left;
		json_t *v;

		clock_gettime(CLOCK_MONOTONIC, &t);
		el = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		left = timeout_ms - el;
		if (left <= 0)
			return NULL;
		v = mcp_peer_read(p, (int)left);
		if (!v)
			return NULL;
		if (json_is_integer(json_object_get(v, "id")) && json_integer_value(json_object_get(v, "id")) == id &&
		    !json_object_get(v, "method"))
			return v;
		json_decref(v);
	}
}

const char *result_text(const json_t *result)
{
	const char *s =
		json_string_value(json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));

	return s ? s : "";
}

int harness_ctl(struct harness *h, const char *args)
{
	const char *b = cordon_test_env("CORDON_BUILD_DIR", NULL);
	char cmd[2048];
	int st;

	if (!b)
		DIE("CORDON_BUILD_DIR is not set");
	snprintf(cmd, sizeof(cmd), "%s/tools/cordonctl --socket %s/operator.sock %s >&2", b, h->runtime, args);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}
