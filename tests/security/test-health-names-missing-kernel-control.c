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
 *    on a kernel where BPF LSM programs cannot be attached per cgroup (the
 *    development and CI machines: every BPF LSM load is refused with EPERM)
 *    the profile control root_guard is missing, so every expectation below
 *    also names root_guard, and "as probed" is 200 {"status":"degraded",
 *    "kernel":{"status":"degraded","controls":["root_guard"]}};
 *  - no seccomp filter: 200 {"status":"degraded","kernel":{"status":
 *    "degraded","controls":["seccomp"]}};
 *  - no Landlock: the same naming landlock and network (Landlock TCP rules
 *    are the allowlist's second layer);
 *  - no cgroup sock_addr BPF: naming network;
 *  - only informational controls gone (pidfd, close_range, BTF,
 *    unprivileged user namespaces): as probed;
 *  - no BPF LSM: naming root_guard (degraded, never unusable);
 *  - no no_new_privs (every launch refused): 503 {"status":"failing",
 *    "kernel":{"status":"unusable","controls":["no-new-privs"]}}.
 * Layer: cordond core + probe report, real processes. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
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
/* This kernel cannot run the root guard (only that is allowed missing). */
static bool no_root_guard;

/* The exact /health body for a kernel verdict naming `controls` (a JSON
 * list body in table order, before root_guard) and, where this kernel
 * lacks it, root_guard (which comes after network and before
 * no-new-privs in the table). */
static const char *want_body(const char *status, const char *kernel, const char *before, const char *after)
{
	static char buf[256];
	char list[160];

	(void)snprintf(list, sizeof(list), "%s%s%s%s%s", before, before[0] && no_root_guard ? ", " : "",
		       no_root_guard ? "\"root_guard\"" : "", (before[0] || no_root_guard) && after[0] ? ", " : "",
		       after);
	if (!list[0])
		(void)snprintf(buf, sizeof(buf), "{\"status\": \"ok\"}");
	else
		(void)snprintf(buf, sizeof(buf),
			       "{\"status\": \"%s\", \"kernel\": {\"status\": \"%s\", \"controls\": [%s]}}", status,
			       kernel, list);
	return buf;
}

/* clang-format off */
static void as_probed(struct cordon_caps *c)     { (void)c; }
static void no_seccomp(struct cordon_caps *c)    { c->seccomp_filter = false; }
static void no_landlock(struct cordon_caps *c)   { c->landlock_abi = 0; c->landlock_errno = EOPNOTSUPP;
						   c->landlock_fs_handled = c->landlock_net_handled = 0;
						   c->landlock_scoped = 0; c->landlock_log_flags = false; }
static void no_sock_addr(struct cordon_caps *c)  { c->bpf_cgroup_sock_addr = false; }
static void informational(struct cordon_caps *c) { c->pidfd_open = c->close_range = false;
						   c->btf_vmlinux = c->userns_unprivileged = false; }
static void no_bpf_lsm(struct cordon_caps *c)    { c->bpf_lsm = c->bpf_lsm_cgroup = false;
						   c->bpf_lsm_cgroup_errno = EOPNOTSUPP; }
static void no_nnp(struct cordon_caps *c)        { c->no_new_privs = false; }
/* Neither guard: no BPF LSM, and no pidfd_getfd for the seccomp supervisor. */
static void no_guard(struct cordon_caps *c)      { no_bpf_lsm(c); c->pidfd_getfd = false; }
/* clang-format on */

static char *dumps(const json_t *v)
{
	char *s = v ? json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT) : NULL;

	return s ?: strdup("(null)");
}

/* Starts the daemon with the probed kernel minus take_away, checks /health
 * is exactly `want` with HTTP status `http`, and returns /health/detail. */
static json_t *health_of(void (*take_away)(struct cordon_caps *c), int http, const char *status, const char *kernel,
			 const char *before, const char *after)
{
	struct cordon_caps caps = probed;
	json_t *body, *expected, *detail;
	json_error_t err;
	const char *want;
	char *got;
	int st = 0;

	take_away(&caps);
	/* The root guard is missing where neither BPF LSM nor its seccomp
	 * supervisor can run (taking seccomp or pidfds away takes the
	 * supervisor too). */
	no_root_guard = !caps.bpf_lsm_cgroup && !cordon_probe_root_guard_notify(&caps);
	want = want_body(status, kernel, before, after);
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
	for (size_t i = 0; i < n; i++) {
		if (rows[i].kind == CORDON_CONTROL_NEVER || rows[i].status == CORDON_PROBE_AVAILABLE)
			continue;
		printf("  this kernel: %s %s: %s\n", rows[i].control, cordon_probe_status_to_string(rows[i].status),
		       rows[i].detail);
		if (strcmp(rows[i].control, "root_guard") == 0 && !probed.bpf_lsm_cgroup &&
		    !cordon_probe_root_guard_notify(&probed))
			no_root_guard = true;
		else
			cordon_test_skip(
				"this kernel already lacks a control; the test takes them away from a full one");
	}
	harness_setup(&H, "sec-health-kernel");

	/* This kernel: ok (or degraded naming root_guard only), and the
	 * detail carries the whole report. */
	detail = health_of(as_probed, 200, "degraded", "degraded", "", "");
	verdict = json_object_get(json_object_get(detail, "capabilities"), "verdict");
	assert_string_equal(json_string_value(json_object_get(verdict, "status")), no_root_guard ? "degraded" : "ok");
	assert_int_equal(json_array_size(json_object_get(verdict, "controls")), no_root_guard ? 1 : 0);
	controls = json_object_get(json_object_get(detail, "capabilities"), "controls");
	assert_int_equal(json_array_size(controls), n);
	for (size_t i = 0; i < n; i++) {
		json_t *row = json_array_get(controls, i);

		assert_string_equal(json_string_value(json_object_get(row, "control")), rows[i].control);
		assert_string_equal(json_string_value(json_object_get(row, "status")),
				    cordon_probe_status_to_string(rows[i].status));
	}
	printf("  /health/detail: verdict %s, %zu controls listed\n", no_root_guard ? "degraded" : "ok", n);
	json_decref(detail);

	json_decref(health_of(no_seccomp, 200, "degraded", "degraded", "\"seccomp\"", ""));
	json_decref(health_of(no_landlock, 200, "degraded", "degraded", "\"landlock\", \"network\"", ""));
	json_decref(health_of(no_sock_addr, 200, "degraded", "degraded", "\"network\"", ""));
	json_decref(health_of(informational, 200, "degraded", "degraded", "", ""));
	/* Without BPF LSM the seccomp supervisor guards the root: not
	 * degraded; without both, degraded naming root_guard. */
	json_decref(health_of(no_bpf_lsm, 200, "degraded", "degraded", "", ""));
	json_decref(health_of(no_guard, 200, "degraded", "degraded", "", ""));
	detail = health_of(no_nnp, 503, "failing", "unusable", "", "\"no-new-privs\"");
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
