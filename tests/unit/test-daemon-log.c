/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* broker/daemon/daemon-log.c: the event catalogue (names, 128-bit ids,
 * levels; every id distinct and the same as docs/cordond.md's table), the
 * "[NAME ID] key=value" format with its quoting (a connector or tool name
 * cannot forge a field or a line), and the denial summaries (the first
 * logged at once, the rest once per window, all at shutdown). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon-log.h"
#include "test-support.h"

static void test_catalogue(void **state)
{
	(void)state;
	for (int i = 0; i < _DLOG_EVENT_MAX; i++) {
		const char *id = dlog_event_id((enum dlog_event)i), *name = dlog_event_name((enum dlog_event)i);

		assert_int_equal(strlen(id), 32);
		assert_int_equal(strspn(id, "0123456789abcdef"), 32);
		assert_int_equal(strncmp(name, "cordon.", 7), 0);
		for (int j = 0; j < i; j++) {
			assert_string_not_equal(id, dlog_event_id((enum dlog_event)j));
			assert_string_not_equal(name, dlog_event_name((enum dlog_event)j));
		}
	}
	/* The ids never change: a few pinned here (docs/cordond.md has all). */
	assert_string_equal(dlog_event_id(DLOG_APPROVAL_REQUESTED), "ac21264b17ed7b5f7c054c08cf2aa966");
	assert_string_equal(dlog_event_id(DLOG_APPROVAL_DECIDED), "2a28e7ad72f89aebbedb6c2cd7154b93");
	assert_string_equal(dlog_event_id(DLOG_DENIAL_SUMMARY), "37bf101cce17ca0c55d2d2bffaf023e4");
	assert_int_equal(dlog_event_level(DLOG_RELOAD_REFUSED), LOG_LEVEL_ERROR);
	assert_int_equal(dlog_event_level(DLOG_DENIAL_SUMMARY), LOG_LEVEL_WARNING);
	assert_int_equal(dlog_event_level(DLOG_INSTANCE_STARTED), LOG_LEVEL_INFO);
	assert_int_equal(dlog_event_level(DLOG_DAEMON_FATAL), LOG_LEVEL_CRIT);
}

/* docs/cordond.md lists every event with its id and level, as a table row
 * "| `NAME` | `ID` | LEVEL |". */
static void test_documented(void **state)
{
	const char *src = cordon_test_env("CORDON_SOURCE_DIR", NULL);
	char path[4200], row[256];
	FILE *f;
	char *doc;
	size_t n;

	(void)state;
	assert_non_null(src);
	snprintf(path, sizeof(path), "%s/docs/cordond.md", src);
	f = fopen(path, "re");
	assert_non_null(f);
	doc = calloc(1, 1 << 20);
	assert_non_null(doc);
	n = fread(doc, 1, (1 << 20) - 1, f);
	fclose(f);
	doc[n] = '\0';
	for (int i = 0; i < _DLOG_EVENT_MAX; i++) {
		snprintf(row, sizeof(row), "| `%s` | `%s` | %s |", dlog_event_name((enum dlog_event)i),
			 dlog_event_id((enum dlog_event)i), log_level_name(dlog_event_level((enum dlog_event)i)));
		if (!strstr(doc, row))
			fail_msg("docs/cordond.md has no row %s", row);
	}
	free(doc);
}

static void test_format_plain_and_quoted(void **state)
{
	const char *kv[] = { "connector", "fake", "tool", "ap\"p\\e d",	  "session", NULL,
			     "reason",	  "",	  "path", "/a/b@c:1,2+3", "newline", "x\n<0>cordond: y" };
	char buf[512];
	size_t n;

	(void)state;
	n = dlog_format(buf, sizeof(buf), DLOG_GRANT_CHANGED, kv, 6);
	assert_int_equal(n, strlen(buf));
	assert_string_equal(buf, "[cordon.grant.changed dee4a92b0285906727f4469cd5cc895e] connector=fake "
				 "tool=\"ap\\\"p\\\\e d\" reason=\"\" path=/a/b@c:1,2+3 "
				 "newline=\"x\\x0a<0>cordond: y\"");
	/* A value cannot pose as a field: '=' and spaces force quotes. */
	kv[3] = "x by=operator:0";
	dlog_format(buf, sizeof(buf), DLOG_GRANT_CHANGED, kv, 2);
	assert_string_equal(buf, "[cordon.grant.changed dee4a92b0285906727f4469cd5cc895e] connector=fake "
				 "tool=\"x by=operator:0\"");
	/* Non-ASCII bytes are escaped too. */
	kv[3] = "caf\xc3\xa9";
	dlog_format(buf, sizeof(buf), DLOG_GRANT_CHANGED, kv, 2);
	assert_non_null(strstr(buf, "tool=\"caf\\xc3\\xa9\""));
}

static void test_format_bounds(void **state)
{
	char value[DLOG_VALUE_MAX + 50], buf[1000], small[40];
	const char *kv[] = { "tool", value };

	(void)state;
	memset(value, 't', sizeof(value) - 1);
	value[sizeof(value) - 1] = '\0';
	dlog_format(buf, sizeof(buf), DLOG_GRANT_CHANGED, kv, 1);
	/* Cut at DLOG_VALUE_MAX, quoted, marked. */
	assert_non_null(strstr(buf, "tool=\"ttt"));
	assert_int_equal(strlen(strstr(buf, "tool=\"")), 6 + DLOG_VALUE_MAX + 4);
	assert_string_equal(buf + strlen(buf) - 4, "...\"");
	/* A small buffer: cut, NUL-terminated. */
	assert_int_equal(dlog_format(small, sizeof(small), DLOG_GRANT_CHANGED, kv, 1), sizeof(small) - 1);
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

/* Runs fn with stderr on a temp file; returns what was written. */
static char *captured(void (*fn)(void *), void *arg)
{
	char path[] = "/tmp/cordon-test-dlog-XXXXXX", *out = calloc(1, 65536);
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0 && out);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	fn(arg);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	n = pread(fd, out, 65535, 0);
	assert_true(n >= 0);
	close(fd);
	unlink(path);
	return out;
}

static unsigned count(const char *s, const char *needle)
{
	unsigned n = 0;

	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void denials_run(void *arg)
{
	struct dlog_denials *t = arg;

	/* t0 = 1000: the first of "a" is logged at once. */
	dlog_denial(t, "a", "not-granted", 1000);
	/* Within the window: counted only. */
	for (int i = 0; i < 5; i++)
		dlog_denial(t, "a", "not-in-surface", 2000 + (uint64_t)i);
	dlog_denial(t, "b", "changed", 3000);
	dlog_denials_flush(t, 1000 + DLOG_DENIAL_WINDOW_MS - 1, false);
	/* The window is over: the 5 pending of "a" in one line. */
	dlog_denials_flush(t, 1000 + DLOG_DENIAL_WINDOW_MS, false);
	dlog_denials_flush(t, 1000 + 2 * DLOG_DENIAL_WINDOW_MS, false);
	dlog_denial(t, "b", "changed", 3000 + DLOG_DENIAL_WINDOW_MS - 1);
	/* Shutdown: everything pending. */
	dlog_denials_flush(t, 3000 + DLOG_DENIAL_WINDOW_MS, true);
}

static void test_denial_summaries(void **state)
{
	struct dlog_denials *t = calloc(1, sizeof(*t));
	char *out;

	(void)state;
	assert_non_null(t);
	log_set_program("cordond");
	(void)log_open_stderr();
	out = captured(denials_run, t);
	assert_string_equal(out, "cordond: warning: [cordon.denial.summary 37bf101cce17ca0c55d2d2bffaf023e4] "
				 "connector=a denied=1 last_reason=not-granted window_s=60\n"
				 "cordond: warning: [cordon.denial.summary 37bf101cce17ca0c55d2d2bffaf023e4] "
				 "connector=b denied=1 last_reason=changed window_s=60\n"
				 "cordond: warning: [cordon.denial.summary 37bf101cce17ca0c55d2d2bffaf023e4] "
				 "connector=a denied=5 last_reason=not-in-surface window_s=60\n"
				 "cordond: warning: [cordon.denial.summary 37bf101cce17ca0c55d2d2bffaf023e4] "
				 "connector=b denied=1 last_reason=changed window_s=60\n");
	assert_int_equal(count(out, "\n"), 4);
	free(out);
	free(t);
}

static void level_run(void *arg)
{
	(void)arg;
	dlog_event(DLOG_INSTANCE_STARTED, "connector", "fake", "session", NULL, "pid", "12");
	dlog_event_at(DLOG_INSTANCE_EXITED, LOG_LEVEL_WARNING, "connector", "fake", (const char *)NULL);
	dlog_event(DLOG_RELOAD_REFUSED, "error", "bad\nline");
}

static void test_event_levels(void **state)
{
	char *out;

	(void)state;
	log_set_program("cordond");
	(void)log_open_stderr();
	out = captured(level_run, NULL);
	assert_string_equal(out, "cordond: info: [cordon.instance.started e6e67e2f48b77d380a252782232a9b2c] "
				 "connector=fake pid=12\n"
				 "cordond: warning: [cordon.instance.exited 14b3f1b3eca61f84e4d097394ea51a15] "
				 "connector=fake\n"
				 "cordond: error: [cordon.reload.refused 48a727b38b64109ffbf8db8a85a5009a] "
				 "error=\"bad\\x0aline\"\n");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalogue),
		cmocka_unit_test(test_documented),
		cmocka_unit_test(test_format_plain_and_quoted),
		cmocka_unit_test(test_format_bounds),
		cmocka_unit_test(test_denial_summaries),
		cmocka_unit_test(test_event_levels),
	};

	unsetenv("JOURNAL_STREAM");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
