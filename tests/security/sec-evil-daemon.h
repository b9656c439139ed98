/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* cordond's core (tests/e2e/daemon-harness.c, its own process with its own
 * privilege drop and Landlock domain) with the connector `fake` replaced by
 * tests/helpers/evil-connector in one mode; its tool `append` is granted at
 * tier read and reviewed through the operator socket. Helpers to read the
 * daemon's log, its RSS and its database size. Include once per test
 * program, after cmocka.h. */

#include <sys/stat.h>

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

static struct harness H;

/* credential_file: NULL, or a file the profile injects as EVIL_TOKEN. */
static inline void evil_profile(const char *mode, const char *arg, const char *credential_file)
{
	char path[700], text[4096], cred[800] = "";
	FILE *f;

	if (credential_file)
		snprintf(cred, sizeof(cred), "  credentials:\n    - {env: EVIL_TOKEN, file: %s}\n", credential_file);
	snprintf(path, sizeof(path), "%s/fake.yaml", H.profiles);
	snprintf(text, sizeof(text),
		 "version: 1\n"
		 "connector:\n"
		 "  description: evil connector for the security suite\n"
		 "  command: [%s/evil-connector, %s, '%s']\n"
		 "  instances: shared\n"
		 "%s"
		 "sandbox:\n"
		 "  user: dynamic\n"
		 "  filesystem:\n"
		 "    system:\n"
		 "      - {path: /usr, access: read-exec}\n"
		 "    roots:\n"
		 "      - {path: %s, access: read-write, at: /data, allow_uid0_owner: true}\n"
		 "    ceiling: [%s]\n"
		 "    tmp: 1M\n"
		 "  network: {mode: none}\n"
		 "tools:\n"
		 "  default_risk: high\n"
		 "  risk: {append: read}\n"
		 "  grant: [append]\n"
		 "approval:\n"
		 "  ttl: 120s\n",
		 harness_helpers_dir(), mode, arg ? arg : "", cred, H.data, H.data);
	f = fopen(path, "we");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static inline json_t *evil_operator(const char *name, json_t *args)
{
	static long id;
	char path[700], *line;
	struct mcp_peer op;
	json_t *req, *r;

	snprintf(path, sizeof(path), "%s/operator.sock", H.runtime);
	assert_int_equal(mcp_peer_connect(&op, path), 0);
	req = json_pack("{s:i, s:I, s:s, s:o}", "v", 1, "id", (json_int_t)++id, "op", name, "args", args);
	line = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	assert_non_null(line);
	assert_int_equal(mcp_peer_send_raw(&op, line, strlen(line)), 0);
	assert_int_equal(mcp_peer_send_raw(&op, "\n", 1), 0);
	free(line);
	r = mcp_peer_read(&op, 10000);
	mcp_peer_disconnect(&op);
	assert_non_null(r);
	return r;
}

/* Reviews every advertised tool of `fake`; each review must succeed. */
static inline void evil_review_all(void)
{
	json_t *inv = evil_operator("inventory.show", json_pack("{s:s, s:b}", "connector", "fake", "all", 1)), *t, *r;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(inv, "result"), "tools"), i, t)
	{
		r = evil_operator("inventory.review",
				  json_pack("{s:s, s:s, s:s}", "connector", "fake", "tool",
					    json_string_value(json_object_get(t, "tool")), "fingerprint",
					    json_string_value(json_object_get(t, "fingerprint"))));
		assert_true(json_is_true(json_object_get(r, "ok")));
		json_decref(r);
	}
	json_decref(inv);
}

/* tag: the temp dir's tag; credential_file as for evil_profile(). */
static inline void evil_start(const char *tag, const char *mode, const char *arg, const char *credential_file)
{
	harness_setup(&H, tag);
	evil_profile(mode, arg, credential_file);
	harness_start(&H);
	evil_review_all();
}

static inline int evil_teardown(void **state)
{
	(void)state;
	harness_teardown(&H);
	return 0;
}

static inline void evil_session(struct mcp_peer *p)
{
	json_t *r;

	assert_int_equal(mcp_peer_connect(p, H.gateway), 0);
	r = mcp_peer_initialize(p, "2025-11-25");
	assert_non_null(r);
	json_decref(r);
}

/* The response to id; counts notifications/tools/list_changed seen before. */
static inline json_t *evil_response(struct mcp_peer *p, long id, int timeout_ms, unsigned *list_changed)
{
	for (;;) {
		json_t *m = mcp_peer_read(p, timeout_ms);
		const char *method;

		if (!m)
			return NULL;
		method = json_string_value(json_object_get(m, "method"));
		if (!method && json_integer_value(json_object_get(m, "id")) == id)
			return m;
		if (method && list_changed && !strcmp(method, "notifications/tools/list_changed"))
			(*list_changed)++;
		json_decref(m);
	}
}

/* The database's size on disk (main file and WAL), in bytes. */
static inline long long evil_db_bytes(void)
{
	long long total = 0;

	for (const char *const *suffix = (const char *const[]){ "", "-wal", NULL }; *suffix; suffix++) {
		char path[700];
		struct stat st;

		snprintf(path, sizeof(path), "%s/cordon.db%s", H.state, *suffix);
		if (stat(path, &st) == 0)
			total += (long long)st.st_size;
	}
	return total;
}

/* The daemon's log (heap, NUL-terminated; "" when absent). */
static inline char *evil_log(void)
{
	char path[700], *buf = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/daemon.log", H.dir);
	if (read_file_bounded(AT_FDCWD, path, 256u << 20, &buf, &len) < 0)
		return strdup("");
	return buf;
}

static inline unsigned evil_log_count(const char *needle)
{
	char *log = evil_log();
	unsigned n = 0;

	for (const char *p = log; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	free(log);
	return n;
}

/* Polls the log until needle appears (true) or timeout_ms passes. */
static inline bool evil_log_wait(const char *needle, int timeout_ms)
{
	for (int waited = 0; waited <= timeout_ms; waited += 50) {
		if (evil_log_count(needle) > 0)
			return true;
		usleep(50 * 1000);
	}
	return false;
}

/* A number a connector mode keeps in a file (0 when absent). */
static inline long evil_read_number(const char *path)
{
	char buf[64];
	ssize_t n = read_small_file(path, buf, sizeof(buf));

	return n > 0 ? strtol(buf, NULL, 10) : 0;
}
