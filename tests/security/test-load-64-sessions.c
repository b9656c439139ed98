/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Load: 64 concurrent gateway sessions doing mixed read and write calls for
 * 60 s (CORDON_LOAD_SECONDS overrides, for a quick local run), with every
 * write auto-approved by an operator loop (a thread that lists and approves
 * through cordond's operator socket every 20 ms, as cordonctl would). Asserted: zero errors (no JSON-RPC error, no
 * isError), zero duplicate executions (the fake connector's file holds
 * exactly one line per successful write, each line unique), the audit chain
 * verifies afterwards, and cordond's RSS is flat (after vs before, both
 * after a warm-up; growth under 32 MiB). Printed: calls, calls/s, p50/p99
 * latency for reads and writes, RSS before/after.
 * Layer: cordond's core in its own process (tests/e2e/daemon-harness.c),
 * real connector processes, 64 real gateway connections. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>

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

#define SESSIONS    64
#define MAX_SAMPLES 200000

static struct harness H;
static volatile int stop_flag;
static uint64_t deadline_ns;

struct worker {
	int idx;
	pthread_t th;
	long reads, writes, errors;
	uint32_t *rlat, *wlat; /* microseconds */
	size_t nr, nw;
	char first_error[256];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *session_main(void *arg)
{
	struct worker *w = arg;
	struct mcp_peer p;
	json_t *init;
	long n = 0;

	if (mcp_peer_connect(&p, H.gateway) < 0) {
		w->errors++;
		snprintf(w->first_error, sizeof(w->first_error), "connect: %s", strerror(errno));
		return NULL;
	}
	init = mcp_peer_initialize(&p, "2025-11-25");
	if (!init) {
		w->errors++;
		snprintf(w->first_error, sizeof(w->first_error), "initialize failed");
		mcp_peer_disconnect(&p);
		return NULL;
	}
	json_decref(init);
	while (now_ns() < deadline_ns) {
		bool write = (n % 4) == 3; /* 3 reads : 1 write */
		char text[64];
		uint64_t t0 = now_ns();
		json_t *r;

		snprintf(text, sizeof(text), "s%d-%ld", w->idx, n++);
		r = mcp_peer_call(&p, write ? "fake__append" : "fake__echo", json_pack("{s:s}", "text", text), 30000);
		if (!r || json_is_true(json_object_get(r, "isError"))) {
			if (!w->errors)
				snprintf(w->first_error, sizeof(w->first_error), "%s: %s", write ? "append" : "echo",
					 r ? result_text(r) : "no result");
			w->errors++;
		} else if (write) {
			w->writes++;
			if (w->nw < MAX_SAMPLES)
				w->wlat[w->nw++] = (uint32_t)((now_ns() - t0) / 1000);
		} else {
			w->reads++;
			if (w->nr < MAX_SAMPLES)
				w->rlat[w->nr++] = (uint32_t)((now_ns() - t0) / 1000);
		}
		json_decref(r);
	}
	mcp_peer_disconnect(&p);
	return NULL;
}

/* One operator request on the operator socket; returns the response. */
static json_t *op_request(struct mcp_peer *op, long id, const char *name, json_t *args)
{
	json_t *req = json_pack("{s:i, s:I, s:s, s:o}", "v", 1, "id", (json_int_t)id, "op", name, "args", args);
	char *line = json_dumps(req, JSON_COMPACT);
	json_t *resp;

	json_decref(req);
	if (!line || mcp_peer_send_raw(op, line, strlen(line)) < 0 || mcp_peer_send_raw(op, "\n", 1) < 0) {
		free(line);
		return NULL;
	}
	free(line);
	resp = mcp_peer_read(op, 10000);
	return resp;
}

/* The operator loop: approves every requested approval through cordond's
 * operator socket (the way cordonctl does), every 20 ms. */
static void *approver_main(void *arg)
{
	long *approved = arg, id = 0;
	char path[700];
	struct mcp_peer op;

	snprintf(path, sizeof(path), "%s/operator.sock", H.runtime);
	if (mcp_peer_connect(&op, path) < 0)
		return NULL;
	while (!stop_flag) {
		json_t *list = op_request(&op, ++id, "approvals.list", json_object()), *a;
		size_t i;
		long before = *approved;

		json_array_foreach(json_object_get(list, "result"), i, a)
		{
			json_t *r;

			if (strcmp(json_string_value(json_object_get(a, "state")), "requested") != 0)
				continue;
			r = op_request(&op, ++id, "approvals.approve",
				       json_pack("{s:s}", "id", json_string_value(json_object_get(a, "id"))));
			if (json_is_true(json_object_get(r, "ok")))
				(*approved)++;
			json_decref(r);
		}
		json_decref(list);
		if (*approved == before)
			usleep(20 * 1000);
	}
	mcp_peer_disconnect(&op);
	return NULL;
}

/* Reviews every tool of a connector through the operator socket: cordond
 * stays the only writer of its database (as in production; see
 * docs/security-tests.md, findings, for what a second writer does). */
static void review_via_operator(const char *connector)
{
	char path[700];
	struct mcp_peer op;
	json_t *inv, *t;
	size_t i;
	long id = 100000;

	snprintf(path, sizeof(path), "%s/operator.sock", H.runtime);
	assert_int_equal(mcp_peer_connect(&op, path), 0);
	inv = op_request(&op, ++id, "inventory.show", json_pack("{s:s, s:b}", "connector", connector, "all", 1));
	assert_non_null(inv);
	json_array_foreach(json_object_get(json_object_get(inv, "result"), "tools"), i, t)
	{
		json_t *r;

		if (strcmp(json_string_value(json_object_get(t, "state")), "reviewed") == 0)
			continue;
		r = op_request(&op, ++id, "inventory.review",
			       json_pack("{s:s, s:s, s:s}", "connector", connector, "tool",
					 json_string_value(json_object_get(t, "tool")), "fingerprint",
					 json_string_value(json_object_get(t, "fingerprint"))));
		assert_true(json_is_true(json_object_get(r, "ok")));
		json_decref(r);
	}
	json_decref(inv);
	mcp_peer_disconnect(&op);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void percentiles(const char *what, uint32_t *v, size_t n)
{
	if (n == 0) {
		printf("  %s: no samples\n", what);
		return;
	}
	qsort(v, n, sizeof(*v), cmp_u32);
	printf("  %s: n=%zu p50=%.2f ms p99=%.2f ms max=%.2f ms\n", what, n, v[n / 2] / 1000.0,
	       v[(n * 99) / 100] / 1000.0, v[n - 1] / 1000.0);
}

/* Every line of the fake connector's file, checked for duplicates. */
static void check_out_file(long expected)
{
	FILE *f = fopen(H.out_file, "re");
	char **lines = NULL, buf[256];
	size_t n = 0, cap = 0;

	assert_non_null(f);
	while (fgets(buf, sizeof(buf), f)) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			lines = realloc(lines, cap * sizeof(*lines));
			assert_non_null(lines);
		}
		lines[n++] = strdup(buf);
	}
	fclose(f);
	printf("  connector executions: %zu (successful writes %ld)\n", n, expected);
	assert_int_equal((long)n, expected);
	qsort(lines, n, sizeof(*lines), (int (*)(const void *, const void *))strcmp);
	for (size_t i = 1; i < n; i++)
		if (strcmp(*(char **)&lines[i - 1], *(char **)&lines[i]) == 0)
			fail_msg("duplicate execution: %s", lines[i]);
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

static int sort_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_load_64_sessions(void **state)
{
	static struct worker w[SESSIONS];
	pthread_t approver;
	long approved = 0, reads = 0, writes = 0, errors = 0, warm = 0;
	const char *env = getenv("CORDON_LOAD_SECONDS");
	int seconds = env ? atoi(env) : 60;
	long rss0, rss1;
	uint64_t t0;
	uint32_t *all_r, *all_w;
	size_t nr = 0, nw = 0;
	char msg[300];

	(void)state;
	(void)sort_str;
	if (seconds <= 0 || seconds > 600)
		seconds = 60;
	harness_setup(&H, "sec-load");
	/* A held write waits for the operator loop; give it room under load
	 * (the default 30 s in production, 2 s in the harness). */
	H.approval_wait_s = 20;
	harness_start(&H);
	review_via_operator("fake");
	stop_flag = 0;
	assert_int_equal(pthread_create(&approver, NULL, approver_main, &approved), 0);

	/* Warm-up: 5 s, so the RSS baseline includes the steady state. */
	deadline_ns = now_ns() + 5ull * 1000000000u;
	for (int i = 0; i < SESSIONS; i++) {
		w[i] = (struct worker){ .idx = 1000 + i };
		w[i].rlat = calloc(MAX_SAMPLES, sizeof(uint32_t));
		w[i].wlat = calloc(MAX_SAMPLES, sizeof(uint32_t));
		assert_int_equal(pthread_create(&w[i].th, NULL, session_main, &w[i]), 0);
	}
	for (int i = 0; i < SESSIONS; i++) {
		pthread_join(w[i].th, NULL);
		warm += w[i].writes;
		errors += w[i].errors;
		if (w[i].errors)
			printf("  warm-up session %d: %ld errors, first: %s\n", i, w[i].errors, w[i].first_error);
	}
	assert_int_equal(errors, 0);
	rss0 = cordon_test_rss_kib(H.daemon_pid);

	deadline_ns = now_ns() + (uint64_t)seconds * 1000000000u;
	t0 = now_ns();
	for (int i = 0; i < SESSIONS; i++) {
		uint32_t *r = w[i].rlat, *wl = w[i].wlat;

		w[i] = (struct worker){ .idx = i, .rlat = r, .wlat = wl };
		assert_int_equal(pthread_create(&w[i].th, NULL, session_main, &w[i]), 0);
	}
	for (int i = 0; i < SESSIONS; i++)
		pthread_join(w[i].th, NULL);
	stop_flag = 1;
	pthread_join(approver, NULL);
	rss1 = cordon_test_rss_kib(H.daemon_pid);

	all_r = calloc((size_t)SESSIONS * MAX_SAMPLES, sizeof(uint32_t));
	all_w = calloc((size_t)SESSIONS * MAX_SAMPLES, sizeof(uint32_t));
	for (int i = 0; i < SESSIONS; i++) {
		reads += w[i].reads;
		writes += w[i].writes;
		errors += w[i].errors;
		if (w[i].errors)
			printf("  session %d: %ld errors, first: %s\n", i, w[i].errors, w[i].first_error);
		memcpy(all_r + nr, w[i].rlat, w[i].nr * sizeof(uint32_t));
		nr += w[i].nr;
		memcpy(all_w + nw, w[i].wlat, w[i].nw * sizeof(uint32_t));
		nw += w[i].nw;
		free(w[i].rlat);
		free(w[i].wlat);
	}
	printf("  %d sessions, %d s: %ld reads, %ld writes (%ld approvals), %ld errors, %.0f calls/s\n", SESSIONS,
	       seconds, reads, writes, approved, errors, (reads + writes) / ((now_ns() - t0) / 1e9));
	percentiles("read  (fake__echo)", all_r, nr);
	percentiles("write (fake__append, held until the operator loop approves)", all_w, nw);
	printf("  cordond RSS: %ld KiB before, %ld KiB after (%+ld KiB)\n", rss0, rss1, rss1 - rss0);
	free(all_r);
	free(all_w);
	assert_int_equal(errors, 0);
	assert_true(writes > 0 && reads > 0);
	check_out_file(writes + warm);
	assert_true(rss0 > 0 && rss1 > 0);
	assert_true(rss1 - rss0 < 32 * 1024);
	assert_true(harness_audit_ok(&H, msg, sizeof(msg)));
	printf("  audit: %s\n", msg);
	assert_int_equal(harness_count_actions(&H, CORDON_ACTION_OUTCOME_UNKNOWN), 0);
	harness_teardown(&H);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_64_sessions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
