/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A connector's log messages through the real cordond (issue 13,
 * "Logging"): the real binary, the real launcher helper, the fake connector
 * (--logging) in a real sandbox, one shared instance. cordond announces
 * `logging`; logging/setLevel with a level that is not one of MCP's eight is
 * -32602; a valid one reaches the connector (the least severe any session
 * asked for); the connector logs at every level regardless, and each session
 * gets exactly the messages its own level admits, with the connector's
 * logger and data and {"io.cordon/connector": "fake"} in _meta, in the
 * multiplexed and in the one-connector view alike; a per-session
 * instance's messages reach its own session only; data beyond 16 KiB is
 * replaced by a marker and more than 100 messages a second are not relayed. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cordond-runner.h"
#include "daemon-harness.h"
#include "test-support.h"

static struct rcd C;

static const char *const levels[] = { "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency" };

/* profiles/<id>.yaml: the fake connector with --logging, instances
 * `instances` (shared or per-session). */
static void write_profile(const char *id, const char *instances)
{
	rcd_fake_profile(
		&C, id,
		&(struct rcd_fake_options){ .arg = "--logging",
					    .instances = instances,
					    .tools = "  risk: {echo: read, log: read}\n  grant: [echo, log]\n" });
}

static int setup(void **state)
{
	(void)state;
	write_profile("fake", "shared");
	write_profile("fakeps", "per-session");
	rcd_start(&C);
	rcd_install(&C, "fake");
	rcd_install(&C, "fakeps");
	return 0;
}

static void set_level(struct mcp_peer *p, const char *level)
{
	json_t *r = mcp_peer_request(p, "logging/setLevel", json_pack("{s:s}", "level", level), 20000);

	assert_non_null(r);
	assert_null(json_object_get(r, "error"));
	assert_true(json_is_object(json_object_get(r, "result")));
	assert_int_equal(json_object_size(json_object_get(r, "result")), 0);
	json_decref(r);
}

/* logs holds exactly the messages of levels from..emergency of one `log`
 * call with text, in order, as cordond relays them. */
static void assert_logs_of(json_t *logs, int from, const char *text, const char *connector)
{
	assert_int_equal(json_array_size(logs), 8 - from);
	for (int i = from; i < 8; i++) {
		json_t *want = json_pack("{s:s, s:s, s:{s:i, s:s}, s:{s:s}}", "level", levels[i], "logger", "fake",
					 "data", "n", i, "text", text, "_meta", "io.cordon/connector", connector);
		json_t *got = json_array_get(logs, (size_t)(i - from));

		if (!json_equal(got, want)) {
			char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
			char *w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);

			fail_msg("log message %d: %s, want %s", i, g, w);
		}
		json_decref(want);
	}
}

static void assert_logs(json_t *logs, int from, const char *text)
{
	assert_logs_of(logs, from, text, "fake");
}

/* The text of a tools/call response's first content item. */
static const char *call_text(json_t *r)
{
	json_t *res = json_object_get(r, "result");

	assert_non_null(res);
	assert_false(json_is_true(json_object_get(res, "isError")));
	return json_string_value(json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
}

static json_t *log_call(struct mcp_peer *p, const char *text, json_t **logs)
{
	return rcd_request_collecting(p, "tools/call",
				      json_pack("{s:s, s:{s:s}}", "name", "fake__log", "arguments", "text", text),
				      "notifications/message", logs);
}

static void test_capability_and_invalid_levels(void **state)
{
	const char *bad[] = { "verbose", "WARNING", "", "warn" };
	struct mcp_peer p;
	json_t *r;

	(void)state;
	assert_int_equal(mcp_peer_connect(&p, C.gateway), 0);
	r = mcp_peer_initialize(&p, "2025-11-25");
	assert_non_null(r);
	assert_true(json_is_object(json_object_get(json_object_get(r, "capabilities"), "logging")));
	assert_int_equal(json_object_size(json_object_get(json_object_get(r, "capabilities"), "logging")), 0);
	json_decref(r);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = mcp_peer_request(&p, "logging/setLevel", json_pack("{s:s}", "level", bad[i]), 20000);
		assert_non_null(r);
		assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32602);
		json_decref(r);
	}
	r = mcp_peer_request(&p, "logging/setLevel", json_pack("{s:i}", "level", 3), 20000);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32602);
	json_decref(r);
	r = mcp_peer_request(&p, "logging/setLevel", json_object(), 20000);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32602);
	json_decref(r);
	mcp_peer_disconnect(&p);
}

/* One session at warning: the connector hears warning, the session gets
 * warning..emergency only. */
static void test_level_forwarded_and_applied(void **state)
{
	struct mcp_peer p;
	json_t *r, *logs;

	(void)state;
	rcd_session(&C, &p);
	set_level(&p, "warning");
	r = log_call(&p, "one", &logs);
	assert_string_equal(call_text(r), "warning");
	assert_logs(logs, 3, "one");
	json_decref(r);
	json_decref(logs);
	/* A new level takes effect at once, both ways. */
	set_level(&p, "critical");
	r = log_call(&p, "two", &logs);
	assert_string_equal(call_text(r), "critical");
	assert_logs(logs, 5, "two");
	json_decref(r);
	json_decref(logs);
	mcp_peer_disconnect(&p);
}

/* Two sessions on the shared instance, one multiplexed at error, one bound
 * to the connector at info: the connector hears info (the least severe),
 * and each session gets what its own level admits, whoever called. */
static void test_shared_instance_each_session_its_level(void **state)
{
	struct mcp_peer a, b, quiet;
	json_t *r, *logs;

	(void)state;
	rcd_session(&C, &a);
	/* A session that never asks for logs gets none of a shared instance's:
	 * they may come from other sessions' calls. */
	rcd_session(&C, &quiet);
	assert_int_equal(mcp_peer_connect(&b, C.gateway), 0);
	r = mcp_peer_request(&b, "cordon/bind", json_pack("{s:s}", "connector", "fake"), 20000);
	assert_non_null(json_object_get(r, "result"));
	json_decref(r);
	r = mcp_peer_initialize(&b, "2025-11-25");
	assert_true(json_is_object(json_object_get(json_object_get(r, "capabilities"), "logging")));
	json_decref(r);
	set_level(&a, "error");
	set_level(&b, "info");
	r = log_call(&a, "shared", &logs);
	assert_string_equal(call_text(r), "info");
	assert_logs(logs, 4, "shared");
	json_decref(r);
	json_decref(logs);
	/* b's messages came before the answer to its ping. */
	r = rcd_request_collecting(&b, "ping", NULL, "notifications/message", &logs);
	assert_non_null(json_object_get(r, "result"));
	assert_logs(logs, 1, "shared");
	json_decref(r);
	json_decref(logs);
	/* The bound session calls under the tool's own name. */
	r = rcd_request_collecting(&b, "tools/call",
				   json_pack("{s:s, s:{s:s}}", "name", "log", "arguments", "text", "b"),
				   "notifications/message", &logs);
	assert_string_equal(call_text(r), "info");
	assert_logs(logs, 1, "b");
	json_decref(r);
	json_decref(logs);
	r = rcd_request_collecting(&a, "ping", NULL, "notifications/message", &logs);
	assert_logs(logs, 4, "b");
	json_decref(r);
	json_decref(logs);
	r = rcd_request_collecting(&quiet, "ping", NULL, "notifications/message", &logs);
	assert_non_null(json_object_get(r, "result"));
	assert_int_equal(json_array_size(logs), 0);
	json_decref(r);
	json_decref(logs);
	mcp_peer_disconnect(&quiet);
	/* b gone: the connector is told the least severe level left (once
	 * cordond has seen b's end, which a's next calls cannot order). */
	mcp_peer_disconnect(&b);
	for (int i = 0;; i++) {
		r = log_call(&a, "alone", &logs);
		if (!strcmp(call_text(r), "error") || i == 100)
			break;
		json_decref(r);
		json_decref(logs);
		usleep(100 * 1000);
	}
	assert_string_equal(call_text(r), "error");
	assert_logs(logs, 4, "alone");
	json_decref(r);
	json_decref(logs);
	mcp_peer_disconnect(&a);
}

/* A per-session instance logs to its own session only, at its level. */
static void test_per_session_instance(void **state)
{
	struct mcp_peer a, b;
	json_t *r, *logs;

	(void)state;
	rcd_session(&C, &a);
	rcd_session(&C, &b);
	set_level(&a, "notice");
	set_level(&b, "debug");
	r = rcd_request_collecting(&a, "tools/call",
				   json_pack("{s:s, s:{s:s}}", "name", "fakeps__log", "arguments", "text", "own"),
				   "notifications/message", &logs);
	assert_string_equal(call_text(r), "notice");
	assert_logs_of(logs, 2, "own", "fakeps");
	json_decref(r);
	json_decref(logs);
	r = rcd_request_collecting(&b, "ping", NULL, "notifications/message", &logs);
	assert_int_equal(json_array_size(logs), 0);
	json_decref(r);
	json_decref(logs);
	mcp_peer_disconnect(&a);
	mcp_peer_disconnect(&b);
}

/* Data beyond 16 KiB is replaced by cordon's marker; more than 100
 * messages a second from one instance are not relayed. */
static void test_bounds(void **state)
{
	struct mcp_peer p;
	json_t *r, *logs, *want;

	(void)state;
	rcd_session(&C, &p);
	set_level(&p, "error");
	r = log_call(&p, "big", &logs);
	assert_int_equal(json_array_size(logs), 1);
	want = json_pack("{s:s, s:s, s:{s:{s:i, s:i}}, s:{s:s}}", "level", "error", "logger", "fake", "data",
			 "io.cordon/data_dropped", "bytes", 20000 + (int)strlen("{\"n\":0,\"text\":\"\"}"), "limit",
			 16384, "_meta", "io.cordon/connector", "fake");
	if (!json_equal(json_array_get(logs, 0), want)) {
		char *g = json_dumps(json_array_get(logs, 0), JSON_COMPACT | JSON_SORT_KEYS);

		fail_msg("got %.300s", g);
	}
	json_decref(want);
	json_decref(r);
	json_decref(logs);
	/* A fresh one-second window, then 250 at once: the first 100 pass. */
	sleep(2);
	r = log_call(&p, "burst", &logs);
	assert_int_equal(json_array_size(logs), 100);
	for (size_t i = 0; i < 100; i++) {
		json_t *m = json_array_get(logs, i);

		assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "data"), "n")), (json_int_t)i);
		assert_null(json_object_get(m, "logger"));
	}
	json_decref(r);
	json_decref(logs);
	/* The other 150 are counted in cordond's log once the second ends. */
	for (int i = 0;; i++) {
		int fd = open(C.logfile, O_RDONLY | O_CLOEXEC);
		char *text;
		bool found;

		assert_true(fd >= 0);
		text = rcd_slurp(fd);
		close(fd);
		found = text && strstr(text, "150 log messages not relayed (rate limit: 100 per 1000 ms)");
		free(text);
		if (found)
			break;
		assert_true(i < 50);
		usleep(100 * 1000);
	}
	mcp_peer_disconnect(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capability_and_invalid_levels),
		cmocka_unit_test(test_level_forwarded_and_applied),
		cmocka_unit_test(test_shared_instance_each_session_its_level),
		cmocka_unit_test(test_per_session_instance),
		cmocka_unit_test(test_bounds),
	};
	int r;

	if (geteuid() != 0)
		cordon_test_skip("needs root (cordond drops to nobody; the launcher builds sandboxes)");
	if (!cordon_test_env("CORDON_BUILD_DIR", NULL))
		cordon_test_skip("CORDON_BUILD_DIR not set");
	rcd_setup(&C, "cordond-logging");
	r = cmocka_run_group_tests(tests, setup, NULL);
	if (C.pid > 0)
		rcd_kill(&C, SIGKILL);
	rcd_teardown(&C, r != 0);
	return r;
}
