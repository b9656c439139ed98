/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Operations (issue 17) on the real cordond, the real launcher helper and the
 * fake connector in a real sandbox: /metrics passes Prometheus's own
 * `promtool check metrics` (Debian's prometheus package, installed by
 * tools/install-deps) with the new families present and sane values
 * (cordon_approvals_pending goes 0 -> 1 while a call waits for an approval
 * and back to 0 when it ends); reload with `cordonctl reload` and SIGHUP
 * (a good reload changes a profile that new instances see and adds a new
 * one; a bad profile is refused with the loader's error, the old one stays
 * in force and /health is degraded naming it until a good reload; a reload
 * that would drop an installed connector's profile is refused naming it;
 * SIGHUP keeps open sessions); SIGTERM leaves a broker.stop audit record
 * naming the signal, and each reload one naming who asked. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cordon-version.h"
#include "cordond-runner.h"
#include "daemon-harness.h"
#include "loop.h"
#include "test-support.h"

static struct rcd C;
static char config[700];

static int setup(void **state)
{
	(void)state;
	/* fake: echo (read) and append (write: waits for an approval). */
	rcd_fake_profile(&C, "fake", NULL);
	/* A call waits 20 s for an approval (test_reload_applies_config
	 * changes it). */
	snprintf(config, sizeof(config), "%s/cordond.yaml", C.dir);
	rcd_write(config, "approval_wait: 20s\n");
	C.config = config;
	/* Its own process group, as under systemd: SIGHUP goes to the group. */
	C.own_group = true;
	rcd_start(&C);
	rcd_install(&C, "fake");
	return 0;
}

/* GET /metrics: the body (malloc'd). */
static char *metrics_body(void)
{
	int status = 0;
	char *buf = rcd_http_get(&C, "/metrics", &status), *body, *out;

	assert_int_equal(status, 200);
	body = strstr(buf, "\r\n\r\n");
	assert_non_null(body);
	out = strdup(body + 4);
	assert_non_null(out);
	free(buf);
	return out;
}

/* The value of the sample whose name and labels are exactly `series`
 * (e.g. `cordon_sessions` or `cordon_approvals_pending{connector="fake"}`);
 * fails when there is none. */
static double sample(const char *text, const char *series)
{
	size_t n = strlen(series);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, series, n) == 0 && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	fail_msg("no sample %s in:\n%s", series, text);
	return 0;
}

/* `promtool check metrics` on text: its exit status; its output (stdout and
 * stderr) in *ret_out. */
static int promtool(const char *text, char **ret_out)
{
	char path[700], cmd[900];
	FILE *f, *p;
	int st;

	snprintf(path, sizeof(path), "%s/metrics.txt", C.dir);
	f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s' 2>&1", path);
	p = popen(cmd, "re");
	assert_non_null(p);
	*ret_out = rcd_slurp(fileno(p));
	st = pclose(p);
	unlink(path);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void assert_promtool_clean(const char *text)
{
	char *out = NULL;
	int r = promtool(text, &out);

	if (r != 0 || out[0])
		fail_msg("promtool check metrics: exit %d:\n%s\non:\n%s", r, out, text);
	free(out);
}

/* Every family has HELP and TYPE, base units, _total counters (promtool),
 * plus the families issue 17 added, with their values. */
static void test_metrics_pass_promtool(void **state)
{
	char *m = metrics_body(), want[200];

	(void)state;
	assert_promtool_clean(m);
	snprintf(want, sizeof(want), "cordon_build_info{version=\"%s\"}", CORDON_VERSION);
	assert_true(sample(m, want) == 1);
	assert_true(sample(m, "cordon_approvals_pending{connector=\"fake\"}") == 0);
	assert_true(sample(m, "cordon_connector_failing{connector=\"fake\"}") == 0);
	assert_true(sample(m, "cordon_connector_restarts_total{connector=\"fake\"}") >= 0);
	/* The install took the inventory: one spawn observed, in seconds. */
	assert_true(sample(m, "cordon_spawn_latency_seconds_count") >= 1);
	assert_true(sample(m, "cordon_spawn_latency_seconds_sum") < 30);
	assert_true(sample(m, "cordon_spawn_latency_seconds_bucket{le=\"+Inf\"}") >= 1);
	/* The old names are gone. */
	assert_null(strstr(m, "_ms"));
	free(m);
}

/* A call waiting for an approval shows as pending (and the connector's
 * instance as running); when its session ends the approval is revoked and
 * pending is 0 again. */
static void test_approvals_pending_gauge(void **state)
{
	static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":901,\"method\":\"tools/call\",\"params\":{\"name\":"
				   "\"fake__append\",\"arguments\":{\"text\":\"x\"}}}\n";
	struct mcp_peer p;
	double v = 0;
	char *m;

	(void)state;
	rcd_session(&C, &p);
	assert_int_equal(mcp_peer_send_raw(&p, call, strlen(call)), 0);
	for (int i = 0; i < 100 && v != 1; i++) {
		m = metrics_body();
		v = sample(m, "cordon_approvals_pending{connector=\"fake\"}");
		if (v == 1) {
			assert_true(sample(m, "cordon_sessions") >= 1);
			assert_true(sample(m, "cordon_calls_total{decision=\"approve\"}") >= 1);
			assert_promtool_clean(m);
		}
		free(m);
		if (v != 1)
			usleep(100 * 1000);
	}
	assert_true(v == 1);
	mcp_peer_disconnect(&p);
	for (int i = 0; i < 100 && v != 0; i++) {
		m = metrics_body();
		v = sample(m, "cordon_approvals_pending{connector=\"fake\"}");
		free(m);
		if (v != 0)
			usleep(100 * 1000);
	}
	assert_true(v == 0);
}

/* `cordonctl reload`: its exit status, stdout and stderr. */
static int reload(char **ret_out, char **ret_err)
{
	return rcd_ctl(&C, ret_out, ret_err, "reload", (char *)NULL);
}

/* The connector `id` in `cordonctl --json connectors list` (borrowed from
 * *ret_list, which the caller frees), or NULL. */
static json_t *connector(const char *id, json_t **ret_list)
{
	json_t *v = rcd_ctl_json(&C, "connectors", "list", NULL), *c;
	size_t i;

	*ret_list = v;
	json_array_foreach(rcd_first_array(v), i,
			   c) if (strcmp(json_string_value(json_object_get(c, "id")), id) == 0) return c;
	return NULL;
}

static const char *connector_mode(const char *id, json_t **ret_list)
{
	json_t *c = connector(id, ret_list);

	assert_non_null(c);
	return json_string_value(json_object_get(c, "mode"));
}

/* One echo call in session p: its text. */
static void assert_echo(struct mcp_peer *p, const char *text)
{
	json_t *r = mcp_peer_call(p, "fake__echo", json_pack("{s:s}", "text", text), 20000);
	char *content;

	assert_non_null(r);
	assert_false(json_is_true(json_object_get(r, "isError")));
	content = json_dumps(json_object_get(r, "content"), 0);
	assert_non_null(strstr(content, text));
	free(content);
	json_decref(r);
}

/* A changed profile (instances: shared -> per-session) is what a new
 * session's instance gets; a new profile becomes an installable connector;
 * a removed profile that was never installed is forgotten. */
static void test_reload_applies_changed_and_new_profiles(void **state)
{
	char *out = NULL, *err = NULL, path[700];
	json_t *list = NULL;
	struct mcp_peer p;

	(void)state;
	assert_string_equal(connector_mode("fake", &list), "shared");
	json_decref(list);
	rcd_fake_profile(&C, "fake", &(struct rcd_fake_options){ .instances = "per-session" });
	rcd_fake_profile(&C, "extra", NULL);
	assert_int_equal(reload(&out, &err), 0);
	assert_non_null(strstr(out, "reloaded: 2 profiles in force"));
	assert_non_null(strstr(out, "new connectors (install with `connectors add`): extra"));
	assert_string_equal(err, "");
	free(out);
	free(err);
	assert_string_equal(connector_mode("fake", &list), "per-session");
	json_decref(list);
	{
		/* (json_is_true() evaluates its argument twice.) */
		json_t *extra = connector("extra", &list);

		assert_non_null(extra);
		assert_false(json_is_true(json_object_get(extra, "installed")));
		json_decref(list);
	}
	/* A new session's call runs in its own instance, started from the
	 * new profile. */
	rcd_session(&C, &p);
	assert_echo(&p, "after-reload");
	{
		char *m = metrics_body();

		assert_true(sample(m, "cordon_connector_instances{connector=\"fake\"}") >= 1);
		assert_true(sample(m, "cordon_connector_instances{connector=\"extra\"}") == 0);
		assert_true(sample(m, "cordon_reloads_total{result=\"applied\"}") >= 1);
		free(m);
	}
	mcp_peer_disconnect(&p);
	/* extra was never installed: removing its file forgets it. */
	snprintf(path, sizeof(path), "%s/extra.yaml", C.profiles);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(reload(&out, NULL), 0);
	assert_non_null(strstr(out, "forgotten (never installed): extra"));
	free(out);
	assert_null(connector("extra", &list));
	json_decref(list);
}

/* A profile that does not load refuses the whole reload with its error:
 * cordond keeps the profile in force (its mode; the running instance and
 * its session go on), /health is degraded and names the file until a
 * reload with the file fixed. (The launcher helper reads a profile when it
 * starts an instance, so a new instance of a connector whose file is
 * broken does not start: docs/cordond.md, "Signals and reload".) */
static void test_reload_bad_profile_refused(void **state)
{
	char *out = NULL, *err = NULL, path[700], *text;
	int status = 0;
	json_t *h, *list = NULL;
	struct mcp_peer p;
	FILE *f;

	(void)state;
	h = rcd_http_json(&C, "/health", &status);
	assert_null(json_object_get(h, "profiles_failed"));
	json_decref(h);
	rcd_session(&C, &p);
	assert_echo(&p, "before-bad");
	snprintf(path, sizeof(path), "%s/fake.yaml", C.profiles);
	f = fopen(path, "ae");
	assert_non_null(f);
	fputs("bogus_key: 1\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(reload(&out, &err), 1);
	assert_string_equal(out, "");
	assert_non_null(strstr(err, "reload refused, nothing changed: "));
	assert_non_null(strstr(err, "/fake.yaml:"));
	assert_non_null(strstr(err, "bogus_key"));
	free(out);
	free(err);
	/* Still in force: per-session, and the open session's calls go on. */
	assert_string_equal(connector_mode("fake", &list), "per-session");
	json_decref(list);
	assert_echo(&p, "old-profile");
	h = rcd_http_json(&C, "/health", &status);
	assert_int_equal(status, 200);
	assert_string_equal(json_string_value(json_object_get(h, "status")), "degraded");
	text = json_dumps(json_object_get(h, "profiles_failed"), 0);
	assert_non_null(strstr(text, "fake.yaml"));
	assert_non_null(strstr(text, "bogus_key"));
	free(text);
	json_decref(h);
	/* Fixed: the next reload succeeds and /health no longer names it. */
	rcd_fake_profile(&C, "fake", &(struct rcd_fake_options){ .instances = "per-session" });
	assert_int_equal(reload(NULL, NULL), 0);
	h = rcd_http_json(&C, "/health", &status);
	assert_null(json_object_get(h, "profiles_failed"));
	json_decref(h);
	assert_echo(&p, "fixed");
	mcp_peer_disconnect(&p);
	{
		char *m = metrics_body();

		assert_true(sample(m, "cordon_reloads_total{result=\"refused\"}") >= 1);
		assert_true(sample(m, "cordon_profiles_failed") == 0);
		free(m);
	}
}

/* The report of fake's newest instance in /health/detail (a new
 * reference), or NULL when it has none. */
static json_t *newest_instance_report(void)
{
	int status = 0;
	json_t *h = rcd_http_json(&C, "/health/detail", &status), *c, *inst, *best = NULL;
	json_int_t best_id = -1;
	size_t i, j;

	assert_int_equal(status, 200);
	json_array_foreach(json_object_get(h, "connectors"), i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "id")), "fake") != 0)
			continue;
		json_array_foreach(json_object_get(c, "instances"), j, inst)
		{
			json_int_t id = json_integer_value(json_object_get(inst, "instance"));

			if (id > best_id) {
				best_id = id;
				best = json_object_get(inst, "report");
			}
		}
	}
	best = best ? json_incref(best) : NULL;
	json_decref(h);
	return best;
}

/* pids.max of the cgroup the process pid is in (the pids controller's
 * v1 hierarchy on a hybrid host, else the unified one): what the kernel
 * enforces; -1 when no pids controller holds it. */
static long pids_max_of(long pid)
{
	char path[700], line[600], *rel = NULL;
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/cgroup", pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		line[strcspn(line, "\n")] = 0;
		if ((size_t)(c2 - c1 - 1) == 4 && strncmp(c1 + 1, "pids", 4) == 0) {
			snprintf(path, sizeof(path), "/sys/fs/cgroup/pids%s/pids.max", c2 + 1);
			rel = path;
			break;
		}
		if (c2 == c1 + 1 && strncmp(line, "0:", 2) == 0)
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/pids.max", c2 + 1), rel = path;
	}
	fclose(f);
	if (rel && (f = fopen(rel, "re"))) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The profile a new instance of fake is built from is the one in force,
 * not the file: a new session after a refused reload (the file broken)
 * gets an instance with the old profile's pids limit, reported and set in
 * its cgroup; once the file is fixed and reloaded, new instances get the
 * new limit and the running ones keep theirs. */
static void test_reload_refused_new_instances_keep_old_profile(void **state)
{
	char path[700];
	struct mcp_peer a, b, c;
	json_t *ra, *rb, *rc;
	long pa, pb, pc;
	FILE *f;

	(void)state;
	rcd_fake_profile(&C, "fake",
			 &(struct rcd_fake_options){ .instances = "per-session", .limits = "{memory: 64M, pids: 16}" });
	assert_int_equal(reload(NULL, NULL), 0);
	rcd_session(&C, &a);
	assert_echo(&a, "a");
	ra = newest_instance_report();
	assert_non_null(ra);
	pa = (long)json_integer_value(json_object_get(ra, "pid"));
	/* Broken on disk: the reload is refused... */
	snprintf(path, sizeof(path), "%s/fake.yaml", C.profiles);
	f = fopen(path, "ae");
	assert_non_null(f);
	fputs("bogus_key: 1\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(reload(NULL, NULL), 1);
	/* ...and a new instance still starts, from the old profile. */
	rcd_session(&C, &b);
	assert_echo(&b, "b");
	rb = newest_instance_report();
	assert_non_null(rb);
	assert_true(json_integer_value(json_object_get(rb, "instance")) !=
		    json_integer_value(json_object_get(ra, "instance")));
	assert_string_equal(json_string_value(json_object_get(rb, "profile_sha256")),
			    json_string_value(json_object_get(ra, "profile_sha256")));
	assert_int_equal(
		json_integer_value(json_object_get(
			json_object_get(json_object_get(json_object_get(rb, "controls"), "cgroup"), "limits"), "pids")),
		16);
	pb = (long)json_integer_value(json_object_get(rb, "pid"));
	if (pids_max_of(pb) >= 0)
		assert_int_equal(pids_max_of(pb), 16);
	else
		printf("  (no pids controller holds the instance: its pids.max is not read)\n");
	/* Fixed, with another limit: new instances get it, a running one
	 * keeps the sandbox it was built with. */
	rcd_fake_profile(&C, "fake",
			 &(struct rcd_fake_options){ .instances = "per-session", .limits = "{memory: 64M, pids: 24}" });
	assert_int_equal(reload(NULL, NULL), 0);
	rcd_session(&C, &c);
	assert_echo(&c, "c");
	rc = newest_instance_report();
	assert_non_null(rc);
	assert_string_not_equal(json_string_value(json_object_get(rc, "profile_sha256")),
				json_string_value(json_object_get(ra, "profile_sha256")));
	pc = (long)json_integer_value(json_object_get(rc, "pid"));
	if (pids_max_of(pc) >= 0) {
		assert_int_equal(pids_max_of(pc), 24);
		assert_int_equal(pids_max_of(pa), 16);
	}
	assert_echo(&a, "a-still");
	mcp_peer_disconnect(&a);
	mcp_peer_disconnect(&b);
	mcp_peer_disconnect(&c);
	json_decref(ra);
	json_decref(rb);
	json_decref(rc);
	rcd_fake_profile(&C, "fake", &(struct rcd_fake_options){ .instances = "per-session" });
	assert_int_equal(reload(NULL, NULL), 0);
}

/* The profile of an installed connector cannot go away at a reload. */
static void test_reload_refuses_dropping_an_installed_connector(void **state)
{
	char *err = NULL, path[700], moved[700];
	json_t *list = NULL;

	(void)state;
	snprintf(path, sizeof(path), "%s/fake.yaml", C.profiles);
	snprintf(moved, sizeof(moved), "%s/fake.yaml.off", C.profiles);
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(reload(NULL, &err), 1);
	assert_non_null(strstr(err, "connector fake is installed but "));
	assert_non_null(strstr(err, "`cordonctl connectors remove fake` first"));
	free(err);
	assert_non_null(connector("fake", &list));
	json_decref(list);
	assert_int_equal(rename(moved, path), 0);
}

/* The metrics-family value of series, polled until it is at least want
 * (10 s). */
static double wait_sample(const char *series, double want)
{
	double v = -1;

	for (int i = 0; i < 100; i++) {
		char *m = metrics_body();

		v = sample(m, series);
		free(m);
		if (v >= want)
			break;
		usleep(100 * 1000);
	}
	return v;
}

/* SIGHUP reloads (counted as applied) and an open session goes on. */
static void test_sighup_keeps_sessions(void **state)
{
	struct mcp_peer p, q;
	char *m = metrics_body();
	double before = sample(m, "cordon_reloads_total{result=\"applied\"}");

	(void)state;
	free(m);
	rcd_session(&C, &p);
	rcd_session(&C, &q);
	assert_echo(&p, "before-hup");
	rcd_fake_profile(&C, "fake", &(struct rcd_fake_options){ .instances = "shared" });
	assert_int_equal(kill(C.pid, SIGHUP), 0);
	assert_true(wait_sample("cordon_reloads_total{result=\"applied\"}", before + 1) == before + 1);
	assert_int_equal(waitpid(C.pid, NULL, WNOHANG), 0);
	/* Both sessions are still open and served (the mode change ended the
	 * per-session instances; the next call starts a shared one). */
	assert_echo(&p, "after-hup-p");
	assert_echo(&q, "after-hup-q");
	m = metrics_body();
	assert_true(sample(m, "cordon_sessions") >= 2);
	free(m);
	mcp_peer_disconnect(&p);
	mcp_peer_disconnect(&q);
	{
		json_t *list = NULL;

		assert_string_equal(connector_mode("fake", &list), "shared");
		json_decref(list);
	}
}

/* SIGHUP to cordond's whole process group (a terminal hang-up, `kill -HUP
 * -PGID`) while calls are in flight in several sessions: cordond reloads,
 * the launcher helper ignores it, every call completes, and the instance
 * that served them is the same one afterwards. */
static void test_sighup_to_group_under_load(void **state)
{
	enum { N = 3 };
	struct mcp_peer p[N];
	long ids[N];
	char *m = metrics_body();
	double before = sample(m, "cordon_reloads_total{result=\"applied\"}");
	json_t *r0, *r1;

	(void)state;
	free(m);
	assert_int_equal(getpgid(C.pid), C.pid);
	for (int i = 0; i < N; i++) {
		rcd_session(&C, &p[i]);
		assert_echo(&p[i], "warm");
	}
	r0 = newest_instance_report();
	assert_non_null(r0);
	/* Each call takes a second in the connector (calls queue in the
	 * shared instance): all are in flight when the signal comes. */
	for (int i = 0; i < N; i++) {
		ids[i] = mcp_peer_send_request(
			&p[i], "tools/call",
			json_pack("{s:s, s:{s:s}}", "name", "fake__echo", "arguments", "text", "after1s-load"));
		assert_true(ids[i] > 0);
	}
	assert_int_equal(kill(-C.pid, SIGHUP), 0);
	for (int i = 0; i < N; i++) {
		json_t *msg = NULL;
		char *text;

		for (int k = 0; k < 20; k++) {
			msg = mcp_peer_read(&p[i], 20000);
			assert_non_null(msg);
			if (json_integer_value(json_object_get(msg, "id")) == ids[i])
				break;
			json_decref(msg);
			msg = NULL;
		}
		assert_non_null(msg);
		text = json_dumps(json_object_get(msg, "result"), 0);
		assert_non_null(text);
		assert_non_null(strstr(text, "echo: after1s-load"));
		free(text);
		json_decref(msg);
	}
	assert_true(wait_sample("cordon_reloads_total{result=\"applied\"}", before + 1) == before + 1);
	assert_int_equal(waitpid(C.pid, NULL, WNOHANG), 0);
	/* The same instance serves on: the helper did not stop. */
	for (int i = 0; i < N; i++)
		assert_echo(&p[i], "after-group-hup");
	r1 = newest_instance_report();
	assert_non_null(r1);
	assert_int_equal(json_integer_value(json_object_get(r1, "instance")),
			 json_integer_value(json_object_get(r0, "instance")));
	json_decref(r0);
	json_decref(r1);
	for (int i = 0; i < N; i++)
		mcp_peer_disconnect(&p[i]);
}

/* The config file is read again (written in place): approval_wait applies
 * to the next call; a changed setting that needs a restart is named and
 * ignored. */
static void test_reload_applies_config(void **state)
{
	char *out = NULL;
	struct mcp_peer p;
	uint64_t t0;
	json_t *r;

	(void)state;
	rcd_write(config, "approval_wait: 1s\nruntime: /run/cordon-elsewhere\n");
	assert_int_equal(reload(&out, NULL), 0);
	assert_non_null(strstr(out, "changed but need a restart of cordond (ignored): runtime"));
	free(out);
	rcd_session(&C, &p);
	t0 = cordon_loop_now_ms();
	r = mcp_peer_call(&p, "fake__append", json_pack("{s:s}", "text", "x"), 20000);
	assert_non_null(r);
	assert_true(json_is_true(json_object_get(r, "isError")));
	json_decref(r);
	/* 1 s, not 20 s. */
	assert_true(cordon_loop_now_ms() - t0 < 8000);
	mcp_peer_disconnect(&p);
	/* Still served where it was. */
	assert_true(rcd_connectable(C.gateway));
	/* The next start (test_sigterm_audited) serves where the test looks. */
	rcd_write(config, "approval_wait: 1s\n");
}

/* Puts len bytes at the config path through a file renamed over it (a new
 * inode, as editors, Ansible and dpkg conffile updates do), with mode. */
static void replace_config(const char *text, size_t len, mode_t mode)
{
	char tmp[800];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.new", config);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(close(fd), 0);
	assert_int_equal(rename(tmp, config), 0);
}

/* The approval wait in force, as a held call's refusal states it: a write
 * call in a new session is not approved and fails "within N s". */
static void assert_approval_wait(unsigned seconds, const char *text)
{
	char want[64];
	struct mcp_peer p;
	json_t *r;

	rcd_session(&C, &p);
	r = mcp_peer_call(&p, "fake__append", json_pack("{s:s}", "text", text), 30000);
	assert_non_null(r);
	assert_true(json_is_true(json_object_get(r, "isError")));
	snprintf(want, sizeof(want), "was not approved within %u s", seconds);
	if (!strstr(result_text(r), want))
		fail_msg("expected '%s' in: %s", want, result_text(r));
	json_decref(r);
	mcp_peer_disconnect(&p);
}

/* A reload that must refuse the replaced file: exit 1, the message names
 * the file and the rule. */
static void assert_reload_refused(const char *rule)
{
	char *err = NULL;

	assert_int_equal(reload(NULL, &err), 1);
	if (!strstr(err, "cordond.yaml") || !strstr(err, rule))
		fail_msg("expected the file and '%s' in: %s", rule, err);
	printf("  %s", err);
	free(err);
}

/* A config replaced by rename (a new inode, which cordond's own sandbox
 * does not cover) is read by the launcher helper at the path cordond
 * started with: the reload applies it. */
static void test_reload_config_replaced(void **state)
{
	static const char text[] = "approval_wait: 2s\n";
	char *out = NULL;
	int status = 0;
	json_t *h = rcd_http_json(&C, "/health/detail", &status);

	(void)state;
	/* Where Landlock is enforced, cordond itself could not open the new
	 * inode: the helper is what makes this work. */
	printf("  cordond's own sandbox: landlock %s\n",
	       json_string_value(json_object_get(json_object_get(h, "broker_sandbox"), "landlock")));
	json_decref(h);
	replace_config(text, strlen(text), 0644);
	assert_int_equal(reload(&out, NULL), 0);
	assert_non_null(strstr(out, "reloaded"));
	free(out);
	assert_approval_wait(2, "replaced");
}

/* What the helper will not trust is refused, naming the file and the rule,
 * and the configuration in force stays (2 s from the test before): a
 * symlink in place of the file, a group-writable file, one over 64 KiB. */
static void test_reload_config_replacement_refused(void **state)
{
	char other[800], *big;

	(void)state;
	snprintf(other, sizeof(other), "%s/other.yaml", C.dir);
	rcd_write(other, "approval_wait: 3s\n");
	assert_int_equal(unlink(config), 0);
	assert_int_equal(symlink(other, config), 0);
	assert_reload_refused("is a symlink; refusing it");
	assert_int_equal(unlink(config), 0);
	assert_int_equal(unlink(other), 0);

	replace_config("approval_wait: 3s\n", 18, 0664);
	assert_reload_refused("is group- or world-writable (mode 0664)");

	big = malloc(64 * 1024 + 1);
	assert_non_null(big);
	memset(big, '#', 64 * 1024 + 1);
	replace_config(big, 64 * 1024 + 1, 0644);
	free(big);
	assert_reload_refused("is larger than 65536 bytes");

	assert_approval_wait(2, "refused");
	/* The next start (test_sigterm_audited) reads a good file. */
	replace_config("approval_wait: 1s\n", 18, 0644);
	assert_int_equal(reload(NULL, NULL), 0);
}

/* The audit record `event` with `key` = `value` is in the last 200
 * records. */
static bool audited(const char *event, const char *key, const char *value)
{
	char *out = NULL;
	json_t *v, *rec;
	bool found = false;
	size_t i;

	assert_int_equal(rcd_ctl(&C, &out, NULL, "--json", "audit", "tail", "--count", "200", (char *)NULL), 0);
	v = json_loads(out, 0, NULL);
	free(out);
	assert_non_null(v);
	json_array_foreach(rcd_first_array(v), i, rec)
	{
		json_t *o = json_is_object(json_object_get(rec, "record")) ? json_object_get(rec, "record") : rec;
		const char *e = json_string_value(json_object_get(o, "event"));
		json_t *k = json_object_get(o, key);

		if (!k && json_is_object(json_object_get(o, "actor")))
			k = json_object_get(json_object_get(o, "actor"), key);
		if (e && strcmp(e, event) == 0 && json_is_string(k) && strcmp(json_string_value(k), value) == 0)
			found = true;
	}
	json_decref(v);
	return found;
}

/* SIGTERM stops cordond cleanly (exit 0) with a broker.stop record that
 * names the signal; the reloads were audited with who asked. */
static void test_sigterm_audited(void **state)
{
	(void)state;
	assert_true(audited("broker.reload", "reason", "signal"));
	assert_true(audited("broker.reload", "kind", "operator"));
	assert_true(audited("broker.reload", "state", "refused"));
	rcd_stop_clean(&C);
	rcd_start(&C);
	assert_true(audited("broker.stop", "reason", "sigterm"));
}

/* Whether cordond's log holds text. */
static bool logged(const char *text)
{
	FILE *f = fopen(C.logfile, "re");
	char *all;
	bool found;

	assert_non_null(f);
	all = rcd_slurp(fileno(f));
	fclose(f);
	found = strstr(all, text) != NULL;
	free(all);
	return found;
}

/* A signal whose default would end cordond is logged: SIGUSR1, SIGPWR and
 * SIGRTMIN+2 are ignored with a warning; a crash signal (SIGABRT here) is one line on stderr, then
 * its default action (no clean shutdown). Last: it leaves no cordond. */
static void test_other_signals_logged(void **state)
{
	int st = 0;

	(void)state;
	assert_int_equal(kill(C.pid, SIGUSR1), 0);
	for (int i = 0; i < 50 && !logged("signal SIGUSR1 from pid"); i++)
		usleep(100 * 1000);
	assert_true(logged("ignored (SIGTERM stops cordond, SIGHUP reloads)"));
	/* SIGPWR and the real-time signals end a process by default too. */
	assert_int_equal(kill(C.pid, SIGPWR), 0);
	assert_int_equal(kill(C.pid, SIGRTMIN + 2), 0);
	for (int i = 0; i < 50 && !logged("signal SIGRTMIN+2 from pid"); i++)
		usleep(100 * 1000);
	assert_true(logged("cordond: warning: signal SIGPWR from pid"));
	assert_true(logged("cordond: warning: signal SIGRTMIN+2 from pid"));
	assert_int_equal(waitpid(C.pid, NULL, WNOHANG), 0);
	assert_true(rcd_connectable(C.gateway));
	assert_int_equal(kill(C.pid, SIGABRT), 0);
	assert_int_equal(waitpid(C.pid, &st, 0), C.pid);
	C.pid = 0;
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGABRT);
	assert_true(logged("cordond: crit: [cordon.daemon.fatal de904575e0f7d46dc0f7713aa66e264d] signal=SIGABRT "
			   "clean_shutdown=no\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_pass_promtool),
		cmocka_unit_test(test_approvals_pending_gauge),
		cmocka_unit_test(test_reload_applies_changed_and_new_profiles),
		cmocka_unit_test(test_reload_bad_profile_refused),
		cmocka_unit_test(test_reload_refused_new_instances_keep_old_profile),
		cmocka_unit_test(test_reload_refuses_dropping_an_installed_connector),
		cmocka_unit_test(test_sighup_keeps_sessions),
		cmocka_unit_test(test_sighup_to_group_under_load),
		cmocka_unit_test(test_reload_applies_config),
		cmocka_unit_test(test_reload_config_replaced),
		cmocka_unit_test(test_reload_config_replacement_refused),
		cmocka_unit_test(test_sigterm_audited),
		cmocka_unit_test(test_other_signals_logged),
	};
	int r;

	if (geteuid() != 0)
		cordon_test_skip("needs root (cordond drops to its private id; the launcher builds sandboxes)");
	if (!cordon_test_env("CORDON_BUILD_DIR", NULL))
		cordon_test_skip("CORDON_BUILD_DIR not set");
	if (system("command -v promtool >/dev/null 2>&1") != 0)
		cordon_test_skip("promtool not installed (Debian's prometheus package; "
				 "tools/install-deps installs it)");
	/* test_other_signals_logged aborts cordond: no core file. */
	(void)setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
	rcd_setup(&C, "cordond-ops");
	r = cmocka_run_group_tests(tests, setup, NULL);
	if (C.pid > 0)
		rcd_kill(&C, SIGKILL);
	rcd_teardown(&C, r != 0);
	return r;
}
