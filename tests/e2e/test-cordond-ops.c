/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Operations (issue 17) on the real cordond, the real launcher helper and the
 * fake connector in a real sandbox: /metrics passes Prometheus's own
 * `promtool check metrics` (Debian's prometheus package, installed by
 * tools/install-deps) with the new families present and sane values
 * (cordon_approvals_pending goes 0 -> 1 while a call waits for an approval
 * and back to 0 when it ends). */
#include <errno.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cordon-version.h"
#include "cordond-runner.h"
#include "daemon-harness.h"
#include "test-support.h"

static struct rcd C;

static int setup(void **state)
{
	(void)state;
	/* fake: echo (read) and append (write: waits for an approval). */
	rcd_fake_profile(&C, "fake", NULL);
	C.approval_wait = "20s";
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_pass_promtool),
		cmocka_unit_test(test_approvals_pending_gauge),
	};
	int r;

	if (geteuid() != 0)
		cordon_test_skip("needs root (cordond drops to its private id; the launcher builds sandboxes)");
	if (!cordon_test_env("CORDON_BUILD_DIR", NULL))
		cordon_test_skip("CORDON_BUILD_DIR not set");
	if (system("command -v promtool >/dev/null 2>&1") != 0)
		cordon_test_skip("promtool not installed (Debian's prometheus package; "
				 "tools/install-deps installs it)");
	rcd_setup(&C, "cordond-ops");
	r = cmocka_run_group_tests(tests, setup, NULL);
	if (C.pid > 0)
		rcd_kill(&C, SIGKILL);
	rcd_teardown(&C, r != 0);
	return r;
}
