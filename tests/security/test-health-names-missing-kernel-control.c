/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement (issue 12 item 3): a kernel without a control is never
 * reported healthy. cordond's /health reads the probe's overall verdict
 * (the control-verdict table, docs/kernel-matrix.md) and names the controls
 * behind it; it used to read a "degraded" key the probe never wrote, so a
 * kernel without seccomp or Landlock left /health at "ok".
 *
 * cordond's core (daemon-harness: its own process, privilege drop, Landlock,
 * seccomp, the real HTTP server on http.sock) gets the capability report the
 * launcher helper would send: cordon_probe_to_json() of this kernel's real
 * probe, with one feature taken away (a modified struct cordon_caps: nothing
 * else can switch a kernel feature off). Asserted, exact bodies:
 *  - this kernel as probed: /health 200 {"status":"ok"}; /health/detail
 *    carries the report: verdict ok, every control of the table, available;
 *  - no seccomp filter: 200 {"status":"degraded","kernel":{"status":
 *    "degraded","controls":["seccomp"]}};
 *  - no Landlock: the same naming landlock and network (Landlock TCP rules
 *    are the allowlist's second layer);
 *  - no cgroup sock_addr BPF: naming network;
 *  - only informational controls gone (BPF LSM, pidfd, close_range, BTF,
 *    unprivileged user namespaces): 200 {"status":"ok"};
 *  - no no_new_privs (every launch refused): 503 {"status":"failing",
 *    "kernel":{"status":"unusable","controls":["no-new-privs"]}}.
 * Layer: cordond core + probe report, real processes. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon-harness.h"
#include "probe-util.h"
#include "probe.h"
#include "test-support.h"

static struct harness H;
static struct cordon_caps probed;

/* clang-format off */
static void as_probed(struct cordon_caps *c)     { (void)c; }
static void no_seccomp(struct cordon_caps *c)    { c->seccomp_filter = false; }
static void no_landlock(struct cordon_caps *c)   { c->landlock_abi = 0; c->landlock_errno = EOPNOTSUPP;
						   c->landlock_fs_handled = c->landlock_net_handled = 0;
						   c->landlock_scoped = 0; c->landlock_log_flags = false; }
static void no_sock_addr(struct cordon_caps *c)  { c->bpf_cgroup_sock_addr = false; }
static void informational(struct cordon_caps *c) { c->bpf_lsm = c->pidfd_open = c->close_range = false;
						   c->btf_vmlinux = c->userns_unprivileged = false; }
static void no_nnp(struct cordon_caps *c)        { c->no_new_privs = false; }
/* clang-format on */

static char *dumps(const json_t *v)
{
	char *s = v ? json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT) : NULL;

	return s ?: strdup("(null)");
}

/* Starts the daemon with the probed kernel minus take_away, checks /health
 * is exactly `want` with HTTP status `http`, and returns /health/detail. */
static json_t *health_of(void (*take_away)(struct cordon_caps *c), int http, const char *want)
{
	struct cordon_caps caps = probed;
	json_t *body, *expected, *detail;
	json_error_t err;
	char *got;
	int st = 0;

	take_away(&caps);
	H.caps = &caps;
	harness_start(&H);
	body = harness_http_json(&H, "/health", &st);
	got = dumps(body);
	printf("  /health: %d %s\n", st, got);
	expected = json_loads(want, 0, &err);
	assert_non_null(expected);
	assert_int_equal(st, http);
	if (!json_equal(body, expected))
		fail_msg("/health is %s, not %s", got, want);
	free(got);
	json_decref(body);
	json_decref(expected);
	detail = harness_http_json(&H, "/health/detail", &st);
	assert_int_equal(st, 200);
	assert_non_null(detail);
	assert_int_equal(harness_stop(&H, SIGTERM), 0);
	H.caps = NULL;
	return detail;
}

static void test_health_names_missing_kernel_control(void **state)
{
	struct cordon_probe_row rows[CORDON_PROBE_MAX_ROWS];
	json_t *detail, *controls, *verdict;
	size_t n;

	(void)state;
	cordon_test_require_root();
	assert_int_equal(cordon_probe(&probed), 0);
	n = cordon_probe_rows(&probed, rows, CORDON_PROBE_MAX_ROWS);
	if (cordon_probe_verdict(rows, n) != CORDON_KERNEL_OK) {
		for (size_t i = 0; i < n; i++)
			if (rows[i].kind != CORDON_CONTROL_NEVER && rows[i].status != CORDON_PROBE_AVAILABLE)
				printf("  this kernel: %s %s: %s\n", rows[i].control,
				       cordon_probe_status_to_string(rows[i].status), rows[i].detail);
		cordon_test_skip("this kernel already lacks a control; the test takes them away from a full one");
	}
	harness_setup(&H, "sec-health-kernel");

	/* This kernel: ok, and the detail carries the whole report. */
	detail = health_of(as_probed, 200, "{\"status\": \"ok\"}");
	verdict = json_object_get(json_object_get(detail, "capabilities"), "verdict");
	assert_string_equal(json_string_value(json_object_get(verdict, "status")), "ok");
	assert_int_equal(json_array_size(json_object_get(verdict, "controls")), 0);
	controls = json_object_get(json_object_get(detail, "capabilities"), "controls");
	assert_int_equal(json_array_size(controls), n);
	for (size_t i = 0; i < n; i++) {
		json_t *row = json_array_get(controls, i);

		assert_string_equal(json_string_value(json_object_get(row, "control")), rows[i].control);
		assert_string_equal(json_string_value(json_object_get(row, "status")),
				    cordon_probe_status_to_string(rows[i].status));
	}
	printf("  /health/detail: verdict ok, %zu controls listed\n", n);
	json_decref(detail);

	json_decref(health_of(no_seccomp, 200,
			      "{\"status\": \"degraded\", \"kernel\": {\"status\": \"degraded\", \"controls\": "
			      "[\"seccomp\"]}}"));
	json_decref(health_of(no_landlock, 200,
			      "{\"status\": \"degraded\", \"kernel\": {\"status\": \"degraded\", \"controls\": "
			      "[\"landlock\", \"network\"]}}"));
	json_decref(health_of(no_sock_addr, 200,
			      "{\"status\": \"degraded\", \"kernel\": {\"status\": \"degraded\", \"controls\": "
			      "[\"network\"]}}"));
	json_decref(health_of(informational, 200, "{\"status\": \"ok\"}"));
	detail = health_of(no_nnp, 503,
			   "{\"status\": \"failing\", \"kernel\": {\"status\": \"unusable\", \"controls\": "
			   "[\"no-new-privs\"]}}");
	assert_string_equal(json_string_value(json_object_get(detail, "status")), "failing");
	json_decref(detail);

	harness_teardown(&H);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_health_names_missing_kernel_control),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
