/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The real cordond binary for the security suite: started as root with the
 * real launcher helper (cordon-launch --serve), so connectors run in real
 * sandboxes with real cgroups; cordonctl on the operator socket; HTTP on
 * http.sock; MCP sessions on the gateway socket. (tests/e2e/daemon-harness.c
 * runs the daemon core with an in-process spawner that starts connectors
 * without sandboxes: use it when no sandbox or cgroup is asserted.)
 *
 * Include after <cmocka.h> and "../e2e/daemon-harness.c" (for the MCP
 * client over a Unix socket and helpers_dir()). */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
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

#include <jansson.h>

#include "test-support.h"

struct rcd {
	char *dir;
	char state[600], profiles[600], data[600], runtime[700], logfile[700];
	char gateway[800], opsock[800], httpsock[800];
	char cordond[600], cordonctl[600], launch[600], helpers[600];
	pid_t pid;
};

static inline uint64_t rcd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A temp tree (0755, root-owned: the launcher helper refuses a profiles
 * directory others can write) with profiles/ and data/. Needs root. */
static inline void rcd_setup(struct rcd *c, const char *tag)
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
	snprintf(c->helpers, sizeof(c->helpers), "%s", helpers_dir());
	assert_int_equal(mkdir(c->profiles, 0755), 0);
	assert_int_equal(mkdir(c->data, 0755), 0);
}

static inline void rcd_write(const char *path, const char *text)
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
static inline void rcd_evil_profile(struct rcd *c, const char *id, const char *mode, const char *instances)
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

static inline bool rcd_connectable(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* Starts cordond (no --user: its private id) and waits until the gateway
 * accepts connections. */
static inline void rcd_start(struct rcd *c)
{
	uint64_t deadline;

	fflush(NULL);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		int fd = open(c->logfile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		/* cordond is not dumpable after its drop: LeakSanitizer cannot
		 * stop the world in it (sanitizer builds only). */
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
		execl(c->cordond, c->cordond, "--state", c->state, "--profiles", c->profiles, "--launcher", c->launch,
		      (char *)NULL);
		_exit(127);
	}
	/* The gateway socket is bound before the HTTP one: wait for both, so
	 * a test's first /health request cannot race cordond's start-up. */
	deadline = rcd_now_ms() + 20000;
	while (!(rcd_connectable(c->gateway) && rcd_connectable(c->httpsock)) && rcd_now_ms() < deadline) {
		int st;

		assert_int_equal(waitpid(c->pid, &st, WNOHANG), 0);
		usleep(20 * 1000);
	}
	assert_true(rcd_connectable(c->gateway));
	assert_true(rcd_connectable(c->httpsock));
}

/* SIGTERM and reap (the helper then kills every instance and removes their
 * cgroups); SIGKILL if it does not exit within 10 s. Returns the status. */
static inline int rcd_stop(struct rcd *c)
{
	uint64_t deadline = rcd_now_ms() + 10000;
	int st = -1;

	if (c->pid <= 0)
		return -1;
	kill(c->pid, SIGTERM);
	while (waitpid(c->pid, &st, WNOHANG) == 0) {
		if (rcd_now_ms() > deadline) {
			kill(c->pid, SIGKILL);
			(void)waitpid(c->pid, &st, 0);
			break;
		}
		usleep(10 * 1000);
	}
	c->pid = 0;
	return st;
}

/* Stops cordond and asserts a clean exit (0 after SIGTERM: no crash, and
 * under a sanitizer no report). */
static inline void rcd_stop_clean(struct rcd *c)
{
	int st = rcd_stop(c);

	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char cmd[900];

		snprintf(cmd, sizeof(cmd), "tail -n 40 %s >&2", c->logfile);
		(void)!system(cmd);
		fail_msg("cordond did not exit cleanly: status 0x%x", (unsigned)st);
	}
}

static inline void rcd_teardown(struct rcd *c, bool show_log)
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
static inline char *rcd_slurp(int fd)
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

/* Runs `cordonctl --socket OPSOCK ARGS... NULL`; returns its exit status,
 * stdout and stderr (malloc'd, may be NULL to discard). */
static inline int rcd_ctl(struct rcd *c, char **ret_out, char **ret_err, ...)
{
	char *argv[32], *out, *err;
	int n = 0, po[2], pe[2], st;
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
	assert_int_equal(pipe2(pe, O_CLOEXEC), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execv(c->cordonctl, argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	/* Outputs are small (below the pipe buffer): read one, then the other. */
	out = rcd_slurp(po[0]);
	err = rcd_slurp(pe[0]);
	close(po[0]);
	close(pe[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (ret_out)
		*ret_out = out;
	else
		free(out);
	if (ret_err)
		*ret_err = err;
	else
		free(err);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* `cordonctl --json ARGS...` that must succeed; its parsed stdout. */
#define rcd_ctl_json(c, ...) rcd_ctl_json_((c), __VA_ARGS__, (char *)NULL)
static inline json_t *rcd_ctl_json_(struct rcd *c, const char *a1, const char *a2, const char *a3, ...)
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
static inline void rcd_install(struct rcd *c, const char *id)
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

/* GET path on http.sock: the HTTP status, and the body parsed as JSON
 * (NULL when it is not JSON). */
static inline json_t *rcd_http_json(struct rcd *c, const char *path, int *ret_status)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char req[300], *buf, *body;
	json_t *v;

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", c->httpsock);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", path);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	buf = rcd_slurp(fd);
	close(fd);
	assert_int_equal(sscanf(buf, "HTTP/1.1 %d", ret_status), 1);
	body = strstr(buf, "\r\n\r\n");
	v = body ? json_loads(body + 4, 0, NULL) : NULL;
	free(buf);
	return v;
}

/* One MCP session on the gateway. */
static inline void rcd_session(struct rcd *c, struct mcp_peer *p)
{
	json_t *r;

	assert_int_equal(mcp_peer_connect(p, c->gateway), 0);
	r = mcp_peer_initialize(p, "2025-11-25");
	assert_non_null(r);
	json_decref(r);
}
