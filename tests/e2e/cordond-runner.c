/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The real cordond binary for e2e and security tests (cordond-runner.h). */
#include "cordond-runner.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

#include <cmocka.h>

#include "daemon-harness.h"
#include "test-support.h"

/* A temp tree (0755, root-owned: the launcher helper refuses a profiles
 * directory others can write) with profiles/ and data/. Needs root. */
void rcd_setup(struct rcd *c, const char *tag)
{
	const char *b = cordon_test_env("CORDON_BUILD_DIR", "build");

	memset(c, 0, sizeof(*c));
	cordon_test_require_root();
	c->dir = cordon_test_mkdtemp(tag);
	assert_int_equal(chmod(c->dir, 0755), 0);
	snprintf(c->state, sizeof(c->state), "%s/state", c->dir);
	snprintf(c->profiles, sizeof(c->profiles), "%s/profiles", c->dir);
	snprintf(c->data, sizeof(c->data), "%s/data", c->dir);
	snprintf(c->logfile, sizeof(c->logfile), "%s/cordond.log", c->dir);
	snprintf(c->runtime, sizeof(c->runtime), "%s/run", c->state);
	snprintf(c->gateway, sizeof(c->gateway), "%s/gateway.sock", c->runtime);
	snprintf(c->opsock, sizeof(c->opsock), "%s/operator.sock", c->runtime);
	snprintf(c->httpsock, sizeof(c->httpsock), "%s/http.sock", c->runtime);
	snprintf(c->cordond, sizeof(c->cordond), "%s/broker/cordond", b);
	snprintf(c->cordonctl, sizeof(c->cordonctl), "%s/tools/cordonctl", b);
	snprintf(c->launch, sizeof(c->launch), "%s/launcher/cordon-launch", b);
	snprintf(c->helpers, sizeof(c->helpers), "%s", harness_helpers_dir());
	assert_int_equal(mkdir(c->profiles, 0755), 0);
	assert_int_equal(mkdir(c->data, 0755), 0);
}

void rcd_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* profiles/<id>.yaml: evil-connector in `mode` (a YAML flow-sequence
 * tail: "fork-stay", or "append, /data/out.txt"), its one tool `append`
 * granted at tier read (no approval), instances shared or per-session,
 * with memory and pids limits (so the instance has a directory in those v1
 * hierarchies too on a hybrid host). */
void rcd_evil_profile(struct rcd *c, const char *id, const char *mode, const char *instances)
{
	char path[700], text[4096];

	snprintf(path, sizeof(path), "%s/%s.yaml", c->profiles, id);
	snprintf(text, sizeof(text),
		 "version: 1\n"
		 "connector:\n"
		 "  description: evil connector for the security suite\n"
		 "  command: [/opt/cordon-test/evil-connector, %s]\n"
		 "  instances: %s\n"
		 "sandbox:\n"
		 "  user: dynamic\n"
		 "  filesystem:\n"
		 "    system:\n"
		 "      - {path: /usr, access: read-exec}\n"
		 "      - {path: /lib, access: read-exec}\n"
		 "      - {path: /lib64, access: read-exec}\n"
		 "    roots:\n"
		 "      - {path: %s, access: read-exec, at: /opt/cordon-test}\n"
		 "      - {path: %s, access: read-write, at: /data, allow_uid0_owner: true}\n"
		 "    tmp: 1M\n"
		 "  network: {mode: none}\n"
		 "  limits: {memory: 64M, pids: 16}\n"
		 "tools:\n"
		 "  default_risk: high\n"
		 "  risk: {append: read}\n"
		 "  grant: [append]\n"
		 "approval:\n"
		 "  ttl: 120s\n",
		 mode, instances, c->helpers, c->data);
	rcd_write(path, text);
}

/* The fake connector as the real-binary tests install it: its directory
 * mounted read-exec at /opt/cordon-test, data/ read-write at /data. */
void rcd_fake_profile(struct rcd *c, const char *id, const struct rcd_fake_options *o)
{
	char path[700], cred[800] = "", tools[512], text[8192];

	if (o && o->credential_file)
		snprintf(cred, sizeof(cred), "  credentials:\n    - {env: FAKE_TOKEN, file: %s}\n", o->credential_file);
	if (o && o->tools)
		snprintf(tools, sizeof(tools), "%s", o->tools);
	else
		snprintf(tools, sizeof(tools),
			 "  risk: {echo: read, append: write, crash: read, garbage: read, roots: %s}\n"
			 "  grant: [echo, append, roots]\n",
			 o && o->roots_risk ? o->roots_risk : "read");
	snprintf(path, sizeof(path), "%s/%s.yaml", c->profiles, id);
	snprintf(text, sizeof(text),
		 "version: 1\n"
		 "connector:\n"
		 "  description: fake connector\n"
		 "  command: [/opt/cordon-test/fake-connector, /data/out.txt%s%s]\n"
		 "  instances: %s\n"
		 "%s"
		 "sandbox:\n"
		 "  user: dynamic\n"
		 "  filesystem:\n"
		 "    system:\n"
		 "      - {path: /usr, access: read-exec}\n"
		 "      - {path: /lib, access: read-exec}\n"
		 "      - {path: /lib64, access: read-exec}\n"
		 "    roots:\n"
		 "      - {path: %s, access: read-exec, at: /opt/cordon-test}\n"
		 "      - {path: %s, access: read-write, at: /data, allow_uid0_owner: true}\n"
		 "    tmp: 1M\n"
		 "  network: {mode: none}\n"
		 "  limits: %s\n"
		 "tools:\n"
		 "  default_risk: high\n"
		 "%s"
		 "approval:\n"
		 "  ttl: %s\n"
		 "%s",
		 o && o->arg ? ", " : "", o && o->arg ? o->arg : "", o && o->instances ? o->instances : "shared", cred,
		 c->helpers, c->data, o && o->limits ? o->limits : "{memory: 64M, pids: 16}", tools,
		 o && o->ttl ? o->ttl : "120s", o && o->tail ? o->tail : "");
	rcd_write(path, text);
}

bool rcd_connectable(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

void rcd_start(struct rcd *c)
{
	const char *argv[16];
	uint64_t deadline;
	int n = 0;

	argv[n++] = c->cordond;
	argv[n++] = "--state";
	argv[n++] = c->state;
	argv[n++] = "--profiles";
	argv[n++] = c->profiles;
	argv[n++] = "--launcher";
	argv[n++] = c->launch;
	if (c->config) {
		argv[n++] = "--config";
		argv[n++] = c->config;
	}
	if (c->approval_wait) {
		argv[n++] = "--approval-wait";
		argv[n++] = c->approval_wait;
	}
	if (c->operator_group) {
		argv[n++] = "--operator-group";
		argv[n++] = c->operator_group;
	}
	argv[n] = NULL;
	/* A failed test may have left its daemon running: never orphan it. */
	if (c->pid > 0)
		(void)rcd_kill(c, SIGKILL);
	fflush(NULL);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		int fd = open(c->logfile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (c->own_group)
			(void)setpgid(0, 0);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		/* cordond is not dumpable after its drop: LeakSanitizer cannot
		 * stop the world in it (sanitizer builds only). */
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
		if (c->notify_socket)
			setenv("NOTIFY_SOCKET", c->notify_socket, 1);
		unsetenv("JOURNAL_STREAM");
		if (c->journal_stream) {
			struct stat st;
			char env[64];

			if (fstat(2, &st) == 0) {
				snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
					 (unsigned long long)st.st_ino);
				setenv("JOURNAL_STREAM", env, 1);
			}
		}
		execv(c->cordond, (char *const *)argv);
		_exit(127);
	}
	deadline = cordon_test_now_ms() + 20000;
	while (!(rcd_connectable(c->gateway) && rcd_connectable(c->opsock) && rcd_connectable(c->httpsock)) &&
	       cordon_test_now_ms() < deadline) {
		int st;

		assert_int_equal(waitpid(c->pid, &st, WNOHANG), 0);
		usleep(20 * 1000);
	}
	assert_true(rcd_connectable(c->gateway));
	assert_true(rcd_connectable(c->opsock));
	assert_true(rcd_connectable(c->httpsock));
}

int rcd_kill(struct rcd *c, int sig)
{
	uint64_t deadline = cordon_test_now_ms() + 10000;
	int st = -1;

	if (c->pid <= 0)
		return -1;
	kill(c->pid, sig);
	while (waitpid(c->pid, &st, WNOHANG) == 0) {
		if (cordon_test_now_ms() > deadline) {
			kill(c->pid, SIGKILL);
			(void)waitpid(c->pid, &st, 0);
			break;
		}
		usleep(10 * 1000);
	}
	c->pid = 0;
	return st;
}

int rcd_stop(struct rcd *c)
{
	return rcd_kill(c, SIGTERM);
}

/* Stops cordond and asserts a clean exit (0 after SIGTERM: no crash, and
 * under a sanitizer no report). */
void rcd_stop_clean(struct rcd *c)
{
	int st = rcd_stop(c);

	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char cmd[900];

		snprintf(cmd, sizeof(cmd), "tail -n 40 %s >&2", c->logfile);
		(void)!system(cmd);
		fail_msg("cordond did not exit cleanly: status 0x%x", (unsigned)st);
	}
}

void rcd_teardown(struct rcd *c, bool show_log)
{
	(void)rcd_stop(c);
	if (show_log && c->dir) {
		char cmd[900];

		snprintf(cmd, sizeof(cmd), "tail -n 40 %s >&2", c->logfile);
		(void)!system(cmd);
	}
	if (c->dir)
		(void)cordon_test_rm_rf(c->dir);
	free(c->dir);
	c->dir = NULL;
}

/* Reads all of fd into a malloc'd string. */
char *rcd_slurp(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);

	assert_non_null(buf);
	for (ssize_t r; (r = read(fd, buf + len, cap - len - 1)) > 0;) {
		len += (size_t)r;
		if (cap - len < 2) {
			buf = realloc(buf, cap *= 2);
			assert_non_null(buf);
		}
	}
	buf[len] = 0;
	return buf;
}

int rcd_ctl(struct rcd *c, char **ret_out, char **ret_err, ...)
{
	char *argv[32], *out, *err = NULL;
	int n = 0, po[2], pe[2] = { -1, -1 }, st;
	va_list ap;
	pid_t pid;

	argv[n++] = c->cordonctl;
	argv[n++] = "--socket";
	argv[n++] = c->opsock;
	va_start(ap, ret_err);
	for (char *a; (a = va_arg(ap, char *)) && n < 31;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	assert_int_equal(pipe2(po, O_CLOEXEC), 0);
	if (ret_err)
		assert_int_equal(pipe2(pe, O_CLOEXEC), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(po[1], 1);
		if (pe[1] >= 0)
			dup2(pe[1], 2);
		execv(c->cordonctl, argv);
		_exit(127);
	}
	close(po[1]);
	if (pe[1] >= 0)
		close(pe[1]);
	/* Outputs are small (below the pipe buffer): read one, then the other. */
	out = rcd_slurp(po[0]);
	close(po[0]);
	if (pe[0] >= 0) {
		err = rcd_slurp(pe[0]);
		close(pe[0]);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (ret_out)
		*ret_out = out;
	else
		free(out);
	if (ret_err)
		*ret_err = err;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

json_t *rcd_ctl_json_(struct rcd *c, const char *a1, const char *a2, const char *a3, ...)
{
	char *out = NULL, *err = NULL;
	json_t *v;
	int r = rcd_ctl(c, &out, &err, "--json", a1, a2, a3, (char *)NULL);

	if (r != 0)
		fail_msg("cordonctl %s %s %s -> %d: %s%s", a1, a2 ? a2 : "", a3 ? a3 : "", r, out, err);
	v = json_loads(out, 0, NULL);
	free(out);
	free(err);
	assert_non_null(v);
	return v;
}

/* `connectors add ID`, then reviews every tool of its inventory with the
 * fingerprint shown. */
void rcd_install(struct rcd *c, const char *id)
{
	char *out = NULL, *err = NULL;
	json_t *v, *t, *tools;
	size_t i;
	int r = rcd_ctl(c, &out, &err, "connectors", "add", id, (char *)NULL);

	if (r != 0)
		fail_msg("connectors add %s -> %d: %s%s", id, r, out, err);
	free(out);
	free(err);
	v = rcd_ctl_json(c, "inventory", "show", id);
	tools = json_object_get(v, "tools");
	assert_true(json_array_size(tools) > 0);
	json_array_foreach(tools, i, t)
	{
		r = rcd_ctl(c, NULL, NULL, "inventory", "review", id, json_string_value(json_object_get(t, "tool")),
			    "--fingerprint", json_string_value(json_object_get(t, "fingerprint")), (char *)NULL);
		assert_int_equal(r, 0);
	}
	json_decref(v);
}

json_t *rcd_first_array(json_t *v)
{
	const char *k;
	json_t *x;

	if (json_is_array(v))
		return v;
	json_object_foreach(v, k, x) if (json_is_array(x)) return x;
	return NULL;
}

char *rcd_http_get(struct rcd *c, const char *path, int *ret_status)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char req[300], *buf;

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", c->httpsock);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", path);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	buf = rcd_slurp(fd);
	close(fd);
	assert_int_equal(sscanf(buf, "HTTP/1.1 %d", ret_status), 1);
	return buf;
}

json_t *rcd_http_json(struct rcd *c, const char *path, int *ret_status)
{
	char *buf = rcd_http_get(c, path, ret_status), *body;
	json_t *v;

	body = strstr(buf, "\r\n\r\n");
	v = body ? json_loads(body + 4, 0, NULL) : NULL;
	free(buf);
	return v;
}

/* One MCP session on the gateway. */
void rcd_session(struct rcd *c, struct mcp_peer *p)
{
	json_t *r;

	assert_int_equal(mcp_peer_connect(p, c->gateway), 0);
	r = mcp_peer_initialize(p, "2025-11-25");
	assert_non_null(r);
	json_decref(r);
}

int rcd_out_lines(struct rcd *c)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/out.txt", c->data);
	return cordon_test_file_lines(path);
}

json_t *rcd_req(struct mcp_peer *p, const char *method, json_t *params)
{
	json_t *r = mcp_peer_request(p, method, params, 20000);

	assert_non_null(r);
	return r;
}

long rcd_err_code(const json_t *r)
{
	return (long)json_integer_value(json_object_get(json_object_get(r, "error"), "code"));
}

const char *rcd_err_message(const json_t *r)
{
	return json_string_value(json_object_get(json_object_get(r, "error"), "message")) ?: "";
}

#define COLLECTING_ID 9999

json_t *rcd_request_collecting(struct mcp_peer *p, const char *method, json_t *params, const char *note,
			       json_t **collected)
{
	json_t *m = json_pack("{s:s, s:i, s:s}", "jsonrpc", "2.0", "id", COLLECTING_ID, "method", method);
	char *line;

	assert_non_null(m);
	if (params)
		json_object_set_new(m, "params", params);
	line = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	assert_non_null(line);
	assert_int_equal(mcp_peer_send_raw(p, line, strlen(line)), 0);
	assert_int_equal(mcp_peer_send_raw(p, "\n", 1), 0);
	free(line);
	*collected = json_array();
	for (;;) {
		json_t *v = mcp_peer_read(p, 20000);
		const char *meth;

		assert_non_null(v);
		meth = json_string_value(json_object_get(v, "method"));
		if (!meth && json_integer_value(json_object_get(v, "id")) == COLLECTING_ID)
			return v;
		if (meth && !strcmp(meth, note))
			json_array_append(*collected, json_object_get(v, "params"));
		json_decref(v);
	}
}
