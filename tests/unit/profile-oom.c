/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every allocation the loader makes is failed in turn: each run must either
 * load the whole profile or fail with -ENOMEM, return nothing, and (under
 * ASan) leak nothing. Registered by profile-oom.cmake with the allocator
 * wrapped at link time (alloc-fail.h); libyaml's own allocations (a shared
 * library) are not wrapped. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc-fail.h"
#include "cleanup.h"
#include "profile.h"
#include "test-support.h"

/* Every section, so every allocation site is reached. */
static const char profile[] =
	"version: 1\n"
	"connector:\n"
	"  description: d\n"
	"  command: [/usr/bin/node, /x.js, a]\n"
	"  workdir: /work\n"
	"  env: {pass: [LANG, TZ], set: {A: b, C: d}}\n"
	"  credentials: [{env: T, file: /etc/t}]\n"
	"sandbox:\n"
	"  user: nobody\n"
	"  filesystem:\n"
	"    system: [{path: /usr, access: read-exec}, {path: /etc, access: read}]\n"
	"    roots: [{path: /srv/p, access: read-write, at: /work}, {path: /srv/q, access: read}]\n"
	"    ceiling: [/srv, /opt]\n"
	"    tmp: 8M\n"
	"  network:\n"
	"    mode: allowlist\n"
	"    allow: [{cidr: 10.0.0.0/8, ports: [443, 80]}, {cidr: \"::/0\", ports: [53], protocol: any}]\n"
	"  limits: {memory: 64M, pids: 8, cpu: 0.5, nofile: 64}\n"
	"  seccomp: {allow: [ptrace, mount], deny: [kexec_load]}\n"
	"  require: [landlock, seccomp]\n"
	"tools:\n"
	"  risk: {a: read, b: write, c: critical}\n"
	"  replay: {a: safe, b: unsafe}\n"
	"  grant: [a]\n"
	"client_requests: [sampling]\n"
	"approval: {ttl: 1m}\n";

static void run_until_success(const char *yaml, size_t len, bool with_diags)
{
	unsigned long n;

	for (n = 0;; n++) {
		struct cordon_diag d[4];
		struct cordon_profile *p = NULL;
		size_t n_diags = 99;
		int r;

		alloc_fail_countdown = (long)n;
		alloc_fail_count = 0;
		if (with_diags)
			r = cordon_profile_parse_diags("t", "t.yaml", yaml, len, &p, d, ELEMENTSOF(d), &n_diags);
		else
			r = cordon_profile_parse("t", "t.yaml", yaml, len, &p, NULL);
		alloc_fail_countdown = -1;
		if (alloc_fail_count == 0) {
			/* No allocation was failed: the run must have succeeded. */
			assert_int_equal(r, 0);
			assert_non_null(p);
			cordon_profile_free(p);
			break;
		}
		if (r != -ENOMEM)
			print_message("allocation %lu failed: r=%d %s\n", n, r, with_diags ? d[0].message : "");
		assert_int_equal(r, -ENOMEM);
		assert_null(p);
		if (with_diags)
			assert_true(n_diags == 0 || d[0].error == ENOMEM);
	}
	/* The loop really went through the allocation sites. */
	assert_true(n > 50);
}

static void test_every_allocation_fails_cleanly(void **state)
{
	run_until_success(profile, strlen(profile), false);
	run_until_success(profile, strlen(profile), true);
}

/* A bad profile under allocation failure: -ENOMEM or its own error, never a
 * profile. */
static void test_bad_profile_under_oom(void **state)
{
	static const char bad[] =
		"version: 1\nconnector: {command: [x]}\nsandbox: {filesystem: {system: [{path: a}]}}\n"
		"tools: {risk: {a: maybe}, grant: [b]}\n";

	for (long n = 0; n < 400; n++) {
		struct cordon_profile *p = NULL;
		struct cordon_diag d = {};
		int r;

		alloc_fail_countdown = n;
		r = cordon_profile_parse("t", "t.yaml", bad, strlen(bad), &p, &d);
		alloc_fail_countdown = -1;
		assert_true(r == -ENOMEM || r == -EINVAL);
		assert_null(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_allocation_fails_cleanly),
		cmocka_unit_test(test_bad_profile_under_oom),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
