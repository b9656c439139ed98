/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement (issue 11, finding 10): a profile in the profiles directory
 * that fails to load is reported, not hidden. cordond still serves the good
 * profiles, and:
 *  - /health says "degraded" and names the file with the loader's error
 *    ("profiles_failed": file, line, column, error, and the one-line
 *    "path:line:col: error"); /health/detail carries the same list;
 *  - `cordonctl status` prints the health and that line;
 *  - `cordonctl connectors add NAME` of the broken profile exits 1 and
 *    prints the loader's error (file:line:col and message), not "no
 *    profile" (which stays the answer for a file that does not exist), and
 *    installs nothing;
 *  - a profile that loads but whose connector cannot start: `connectors
 *    add` fails and leaves nothing installed, so a retry fails the same way
 *    (not "already installed").
 * History: the file was skipped at start-up with one log line while
 * /health said ok and `connectors add` said the file did not exist.
 * The real cordond binary as root with the real launcher helper. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

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
#include "profile.h"
#include "daemon-harness.h"
#include "test-support.h"
#include "cordond-runner.h"

static struct rcd C;

static const char *const loader_error =
	"connector.bogus_key: unknown key (expected one of: description, command, workdir, env, credentials, "
	"instances)";

static int teardown(void **state)
{
	(void)state;
	rcd_teardown(&C, false);
	return 0;
}

/* A good profile with one unknown key at line 6, column 3. */
static void write_broken(void)
{
	char path[700], text[4096];

	snprintf(path, sizeof(path), "%s/broken.yaml", C.profiles);
	snprintf(text, sizeof(text),
		 "version: 1\n"
		 "connector:\n"
		 "  description: a profile with a typo\n"
		 "  command: [/opt/cordon-test/evil-connector, hang]\n"
		 "  instances: shared\n"
		 "  bogus_key: 1\n"
		 "sandbox:\n"
		 "  user: dynamic\n"
		 "  filesystem:\n"
		 "    system:\n"
		 "      - {path: /usr, access: read-exec}\n"
		 "    roots:\n"
		 "      - {path: %s, access: read-exec, at: /opt/cordon-test}\n"
		 "  network: {mode: none}\n"
		 "tools:\n"
		 "  default_risk: high\n",
		 C.helpers);
	rcd_write(path, text);
}

static void test_bad_profile_reported_not_hidden(void **state)
{
	char path[700], line[1200], want[1600], *out = NULL, *err = NULL;
	json_t *h, *detail, *bad, *e, *r, *st;
	struct mcp_peer p;
	int status = 0;

	(void)state;
	rcd_setup(&C, "sec-badprofile");
	rcd_evil_profile(&C, "good", "append, /data/out.txt", "shared");
	write_broken();
	rcd_start(&C);
	snprintf(path, sizeof(path), "%s/broken.yaml", C.profiles);
	snprintf(line, sizeof(line), "%s:6:3: %s", path, loader_error);

	/* /health: degraded, naming the file and the loader's error. */
	h = rcd_http_json(&C, "/health", &status);
	assert_int_equal(status, 200);
	assert_non_null(h);
	{
		char *s = json_dumps(h, JSON_COMPACT);

		printf("  /health: %s\n", s);
		free(s);
	}
	assert_string_equal(json_string_value(json_object_get(h, "status")), "degraded");
	bad = json_object_get(h, "profiles_failed");
	assert_int_equal(json_array_size(bad), 1);
	e = json_array_get(bad, 0);
	assert_int_equal(json_object_size(e), 5);
	assert_string_equal(json_string_value(json_object_get(e, "file")), path);
	assert_int_equal(json_integer_value(json_object_get(e, "line")), 6);
	assert_int_equal(json_integer_value(json_object_get(e, "column")), 3);
	assert_string_equal(json_string_value(json_object_get(e, "error")), loader_error);
	assert_string_equal(json_string_value(json_object_get(e, "message")), line);
	/* /health/detail: the same list. */
	detail = rcd_http_json(&C, "/health/detail", &status);
	assert_int_equal(status, 200);
	assert_non_null(detail);
	assert_string_equal(json_string_value(json_object_get(detail, "status")), "degraded");
	assert_true(json_equal(json_object_get(detail, "profiles_failed"), bad));
	json_decref(detail);
	json_decref(h);

	/* /metrics counts it. */
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		const char *req = "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
		char *m;

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", C.httpsock);
		assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
		m = rcd_slurp(fd);
		close(fd);
		assert_non_null(strstr(m, "\n# TYPE cordon_profiles_failed gauge\ncordon_profiles_failed 1\n"));
		free(m);
	}

	/* cordonctl status. */
	assert_int_equal(rcd_ctl(&C, &out, &err, "status", (char *)NULL), 0);
	snprintf(want, sizeof(want), "health:               degraded\nprofile not loaded:   %s\n", line);
	assert_int_equal(strncmp(out, want, strlen(want)), 0);
	free(out);
	free(err);

	/* connectors add of the broken profile: the loader's error, exit 1. */
	assert_int_equal(rcd_ctl(&C, &out, &err, "connectors", "add", "broken", (char *)NULL), 1);
	printf("  connectors add broken: %s", err);
	snprintf(want, sizeof(want),
		 "cordonctl: failed: connector \"broken\": profile broken.yaml:6:3: %s (not loaded: fix the file, "
		 "then `cordonctl reload`)\n",
		 loader_error);
	assert_string_equal(out, "");
	assert_string_equal(err, want);
	free(out);
	free(err);
	/* A file that does not exist is still "no profile". */
	assert_int_equal(rcd_ctl(&C, &out, &err, "connectors", "add", "nosuch", (char *)NULL), 1);
	snprintf(want, sizeof(want), "cordonctl: not-found: connector \"nosuch\": no profile 'nosuch.yaml' in %s\n",
		 C.profiles);
	assert_string_equal(err, want);
	free(out);
	free(err);

	/* The good profile is served; nothing of the broken one was installed. */
	rcd_install(&C, "good");
	rcd_session(&C, &p);
	r = mcp_peer_call(&p, "good__append", json_object(), 20000);
	assert_non_null(r);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "structuredContent"), "appended")), 1);
	json_decref(r);
	mcp_peer_disconnect(&p);
	st = rcd_ctl_json(&C, "status", NULL, NULL);
	assert_int_equal(json_integer_value(json_object_get(st, "connectors")), 1);
	json_decref(st);
	{
		json_t *list = rcd_ctl_json(&C, "connectors", "list", NULL);
		size_t i;

		assert_int_equal(json_array_size(list), 1);
		json_array_foreach(list, i, e) assert_string_equal(json_string_value(json_object_get(e, "id")), "good");
		json_decref(list);
	}
	rcd_stop_clean(&C);
}

/* Without the broken file, /health names no profile. */
static void test_good_profiles_only_name_nothing(void **state)
{
	int status = 0;
	json_t *h;

	(void)state;
	rcd_setup(&C, "sec-goodprofile");
	rcd_evil_profile(&C, "good", "append, /data/out.txt", "shared");
	rcd_start(&C);
	h = rcd_http_json(&C, "/health", &status);
	assert_int_equal(status, 200);
	assert_non_null(h);
	/* ok, or degraded for a control this kernel lacks (named in the
	 * detail's capabilities): either way no profile is named. */
	printf("  /health without a broken profile: %s\n", json_string_value(json_object_get(h, "status")));
	assert_null(json_object_get(h, "profiles_failed"));
	json_decref(h);
	h = rcd_http_json(&C, "/health/detail", &status);
	assert_int_equal(json_array_size(json_object_get(h, "profiles_failed")), 0);
	assert_true(json_is_array(json_object_get(h, "profiles_failed")));
	json_decref(h);
	rcd_stop_clean(&C);
}

/* A profile that loads but whose connector cannot start: connectors add
 * fails and leaves nothing installed (no grant, no inventory), so the same
 * add fails the same way again instead of "already installed". */
static void test_failed_add_installs_nothing(void **state)
{
	char *out1 = NULL, *err1 = NULL, *out2 = NULL, *err2 = NULL, want[1600];
	json_t *st, *list, *e;
	size_t i;

	(void)state;
	rcd_setup(&C, "sec-failedadd");
	/* The helpers directory has no such program. */
	rcd_evil_profile(&C, "nostart", "hang", "shared");
	{
		char path[700], cmd[1600];

		snprintf(path, sizeof(path), "%s/nostart.yaml", C.profiles);
		snprintf(cmd, sizeof(cmd),
			 "sed -i 's|/opt/cordon-test/evil-connector|/opt/cordon-test/no-such-program|' %s", path);
		assert_int_equal(system(cmd), 0);
	}
	rcd_start(&C);
	assert_int_equal(rcd_ctl(&C, &out1, &err1, "connectors", "add", "nostart", (char *)NULL), 1);
	printf("  connectors add nostart: %s", err1);
	assert_string_equal(out1, "");
	/* Refused before anything is written, naming the fix. */
	snprintf(want, sizeof(want),
		 "cordonctl: not-found: connector \"nostart\": its command /opt/cordon-test/no-such-program does "
		 "not exist (%s/no-such-program on the host): install it\n",
		 C.helpers);
	assert_string_equal(err1, want);
	st = rcd_ctl_json(&C, "status", NULL, NULL);
	assert_int_equal(json_integer_value(json_object_get(st, "connectors")), 0);
	json_decref(st);
	list = rcd_ctl_json(&C, "connectors", "list", NULL);
	json_array_foreach(list, i, e) if (!strcmp(json_string_value(json_object_get(e, "id")), "nostart"))
		assert_false(json_is_true(json_object_get(e, "installed")));
	json_decref(list);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "grants", "show", "nostart", (char *)NULL), 1); /* EXIT_FAILED */
	/* Retried: the same failure, not "already installed". */
	assert_int_equal(rcd_ctl(&C, &out2, &err2, "connectors", "add", "nostart", (char *)NULL), 1);
	assert_string_equal(out2, "");
	assert_string_equal(err2, err1);
	free(out1);
	free(err1);
	free(out2);
	free(err2);
	rcd_stop_clean(&C);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_bad_profile_reported_not_hidden, teardown),
		cmocka_unit_test_teardown(test_good_profiles_only_name_nothing, teardown),
		cmocka_unit_test_teardown(test_failed_add_installs_nothing, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
