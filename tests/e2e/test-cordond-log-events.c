/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordond's own log through the real daemon (issue 17, Logs): the real
 * binary, the real launcher helper, the fake connector in a real sandbox
 * with a credential injected. One scenario — install two connectors, a
 * read call with a secret-looking argument, a write call held for approval
 * and approved, one denied, one left to expire, a call to a tool that is
 * not granted, a grant added and revoked with a crashing tool called in
 * between, a reload, a removal, a SIGTERM — runs twice: once with
 * JOURNAL_STREAM naming cordond's stderr (each line "<N>cordond: ...") and
 * once without ("cordond: LEVEL: ..."). Each time the log holds every
 * operator event with its fixed id at its level, and none of the argument
 * values, the credential value or the approval's display code. */
#include <errno.h>
#include <regex.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cordond-runner.h"
#include "daemon-harness.h"
#include "test-support.h"

#define SECRET_ARG   "sk_live_ARGVALUE_7f3a9c0e5d1b"
#define SECRET_WRITE "ghp_WRITEVALUE_0123456789abcdef"
#define CREDENTIAL   "cred-T0KEN-VALUE-9d8c7b6a5f4e"

static struct rcd C;

static char *read_log(void)
{
	FILE *f = fopen(C.logfile, "re");
	char *all;

	assert_non_null(f);
	all = rcd_slurp(fileno(f));
	fclose(f);
	return all;
}

/* The first log line holding every one of the (NULL-ended) needles, or
 * NULL; a new string. */
static char *find_line(const char *all, ...)
{
	for (const char *p = all; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *line = strndup(p, n);
		bool ok = true;
		va_list ap;

		va_start(ap, all);
		for (const char *s; ok && (s = va_arg(ap, const char *));)
			ok = strstr(line, s) != NULL;
		va_end(ap);
		if (ok)
			return line;
		free(line);
		p += n + (nl ? 1 : 0);
	}
	return NULL;
}

/* The prefix of a cordond line at level: "<5>cordond: " or
 * "cordond: notice: ". */
static const char *prefix(int level, bool journal)
{
	static const char *const names[] = { "", "", "crit", "error", "warning", "notice", "info", "debug" };
	static char buf[64];

	if (journal)
		snprintf(buf, sizeof(buf), "<%d>cordond: ", level);
	else
		snprintf(buf, sizeof(buf), "cordond: %s: ", names[level]);
	return buf;
}

/* Asserts a line of event name (id) at level with the fields given (each
 * "key=value"), starting with the level's prefix. Waits up to 30 s for it
 * (the expiry sweep runs every 5 s). */
static void expect_event(bool journal, int level, const char *name, const char *id, const char *f1, const char *f2,
			 const char *f3)
{
	char head[160], *line = NULL;

	snprintf(head, sizeof(head), "%s[%s %s] ", prefix(level, journal), name, id);
	for (int i = 0; i < 300 && !line; i++) {
		char *all = read_log();

		line = find_line(all, head, f1 ? f1 : "", f2 ? f2 : "", f3 ? f3 : "", (const char *)NULL);
		free(all);
		if (!line)
			usleep(100 * 1000);
	}
	if (!line) {
		char *all = read_log();

		fail_msg("no line \"%s\" with %s %s %s in the log:\n%s", head, f1 ? f1 : "", f2 ? f2 : "", f3 ? f3 : "",
			 all);
	}
	/* The event is the line's whole text after the prefix. */
	assert_int_equal(strncmp(line, head, strlen(head)), 0);
	free(line);
}

/* The one requested approval of tool on connector: its id and display
 * code. */
static void pending(const char *connector, const char *tool, char *id, size_t id_size, char *code, size_t code_size)
{
	json_t *v = rcd_ctl_json(&C, "approvals", "list"), *a = rcd_first_array(v), *e;
	size_t i;
	int found = 0;

	json_array_foreach(a, i, e)
	{
		if (strcmp(json_string_value(json_object_get(e, "connector")), connector) != 0 ||
		    strcmp(json_string_value(json_object_get(e, "tool")), tool) != 0 ||
		    strcmp(json_string_value(json_object_get(e, "state")), "requested") != 0)
			continue;
		snprintf(id, id_size, "%s", json_string_value(json_object_get(e, "id")));
		snprintf(code, code_size, "%s", json_string_value(json_object_get(e, "display_code")));
		found++;
	}
	json_decref(v);
	assert_int_equal(found, 1);
}

/* A write call waits 1 s (--approval-wait) and comes back as an error. */
static void call_held(struct mcp_peer *p, const char *tool, const char *text)
{
	json_t *r = mcp_peer_call(p, tool, json_pack("{s:s}", "text", text), 20000);

	assert_non_null(r);
	if (!json_is_true(json_object_get(r, "isError"))) {
		char *s = json_dumps(r, JSON_COMPACT);

		fail_msg("held call answered %s", s);
	}
	json_decref(r);
}

static void scenario(bool journal)
{
	char cred[800], id[64], code[64], denied_id[64], expired_id[64], field[128], *all;
	struct mcp_peer p;
	json_t *r;

	if (C.dir) /* the other mode failed half-way */
		rcd_teardown(&C, true);
	rcd_setup(&C, journal ? "log-events-journal" : "log-events-plain");
	snprintf(cred, sizeof(cred), "%s/fake.token", C.dir);
	rcd_write(cred, CREDENTIAL "\n");
	assert_int_equal(chmod(cred, 0600), 0);
	rcd_fake_profile(&C, "fake", &(struct rcd_fake_options){ .credential_file = cred });
	rcd_fake_profile(&C, "fakettl", &(struct rcd_fake_options){ .ttl = "1s" });
	C.approval_wait = "1s";
	C.journal_stream = journal;
	rcd_start(&C);
	rcd_install(&C, "fake");
	rcd_install(&C, "fakettl");
	expect_event(journal, 5, "cordon.daemon.started", "c6b3e84842f78fdf96dd005715eded3f", "profiles=2",
		     "gateway=", NULL);
	expect_event(journal, 5, "cordon.connector.installed", "f17a43f78d40aefeeaab25a238abecbd", "connector=fake ",
		     "by=operator:0:", NULL);
	expect_event(journal, 6, "cordon.instance.started", "e6e67e2f48b77d380a252782232a9b2c", "connector=fakettl",
		     "purpose=inventory", NULL);
	expect_event(journal, 6, "cordon.instance.exited", "14b3f1b3eca61f84e4d097394ea51a15", "connector=fakettl",
		     "reason=\"inventory taken\"", "crashed=no");

	rcd_session(&C, &p);
	/* A read call with a secret-looking argument: runs, logs no value. */
	r = mcp_peer_call(&p, "fake__echo", json_pack("{s:s}", "text", SECRET_ARG), 20000);
	assert_non_null(r);
	assert_false(json_is_true(json_object_get(r, "isError")));
	json_decref(r);
	expect_event(journal, 6, "cordon.instance.started", "e6e67e2f48b77d380a252782232a9b2c", "connector=fake ",
		     "purpose=shared", NULL);

	/* Held, approved by the operator, run. */
	call_held(&p, "fake__append", SECRET_WRITE);
	pending("fake", "append", id, sizeof(id), code, sizeof(code));
	snprintf(field, sizeof(field), "approval=%s ", id);
	expect_event(journal, 5, "cordon.approval.requested", "ac21264b17ed7b5f7c054c08cf2aa966", field,
		     "connector=fake tool=append tier=write session=", NULL);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "approvals", "approve", id, (char *)NULL), 0);
	expect_event(journal, 5, "cordon.approval.decided", "2a28e7ad72f89aebbedb6c2cd7154b93", field,
		     "decision=approved connector=fake tool=append", "by=operator:0:");
	r = mcp_peer_call(&p, "fake__append", json_pack("{s:s}", "text", SECRET_WRITE), 20000);
	assert_false(json_is_true(json_object_get(r, "isError")));
	json_decref(r);

	/* Held and denied. */
	call_held(&p, "fake__append", SECRET_WRITE "-2");
	pending("fake", "append", denied_id, sizeof(denied_id), code, sizeof(code));
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "approvals", "deny", denied_id, (char *)NULL), 0);
	snprintf(field, sizeof(field), "approval=%s ", denied_id);
	expect_event(journal, 5, "cordon.approval.decided", "2a28e7ad72f89aebbedb6c2cd7154b93", field,
		     "decision=denied", NULL);

	/* Held and left to expire (ttl 1 s; the sweep runs every 5 s). */
	call_held(&p, "fakettl__append", SECRET_WRITE "-3");
	pending("fakettl", "append", expired_id, sizeof(expired_id), code, sizeof(code));
	snprintf(field, sizeof(field), "approval=%s ", expired_id);
	expect_event(journal, 5, "cordon.approval.decided", "2a28e7ad72f89aebbedb6c2cd7154b93", field,
		     "decision=expired connector=fakettl tool=append", "by=system");

	/* A tool that is not granted: refused, summarized. */
	r = rcd_req(&p, "tools/call",
		    json_pack("{s:s, s:{s:s}}", "name", "fake__garbage", "arguments", "text", SECRET_ARG));
	assert_int_equal(rcd_err_code(r), -32602);
	json_decref(r);
	expect_event(journal, 4, "cordon.denial.summary", "37bf101cce17ca0c55d2d2bffaf023e4", "connector=fake ",
		     "denied=1 last_reason=not-in-surface", NULL);

	/* A grant added, its tool crashing the instance, the grant revoked. */
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "grants", "add", "fake", "crash", (char *)NULL), 0);
	expect_event(journal, 5, "cordon.grant.changed", "dee4a92b0285906727f4469cd5cc895e",
		     "connector=fake tool=crash change=granted", "by=operator:0:", NULL);
	r = mcp_peer_call(&p, "fake__crash", json_object(), 20000);
	json_decref(r);
	/* With the helper's wait status: exit:3, or signal:KILL when cordond's
	 * kill of the cgroup (at the instance's end of output) came first. */
	expect_event(journal, 4, "cordon.instance.exited", "14b3f1b3eca61f84e4d097394ea51a15", "connector=fake ",
		     "reason=exited crashed=yes", " status=");
	all = read_log();
	assert_null(strstr(all, "status=- reason=exited"));
	assert_true(strstr(all, "status=exit:3 reason=exited crashed=yes") ||
		    strstr(all, "status=signal:KILL reason=exited crashed=yes"));
	free(all);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "grants", "remove", "fake", "crash", (char *)NULL), 0);
	expect_event(journal, 5, "cordon.grant.changed", "dee4a92b0285906727f4469cd5cc895e",
		     "connector=fake tool=crash change=revoked", NULL, NULL);

	/* Reload, removal, stop. */
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "reload", (char *)NULL), 0);
	expect_event(journal, 5, "cordon.reload.applied", "60465ed24399a799b5f0f25f1b13a313",
		     "by=operator:0:", "profiles=2 added=0 removed=0", NULL);
	assert_int_equal(rcd_ctl(&C, NULL, NULL, "connectors", "remove", "fakettl", (char *)NULL), 0);
	expect_event(journal, 5, "cordon.connector.removed", "18c1c2714a0b9150ff40ec54c02d2ccf", "connector=fakettl",
		     "by=operator:0:", NULL);
	mcp_peer_disconnect(&p);
	rcd_stop_clean(&C);
	expect_event(journal, 5, "cordon.daemon.stopping", "637e62fc6f5fcfb1cc60b9e9d79e0508", "reason=sigterm", NULL,
		     NULL);

	/* No secret anywhere in the log; every cordond line at a level. */
	all = read_log();
	assert_null(strstr(all, SECRET_ARG));
	assert_null(strstr(all, "ARGVALUE"));
	assert_null(strstr(all, SECRET_WRITE));
	assert_null(strstr(all, "WRITEVALUE"));
	assert_null(strstr(all, CREDENTIAL));
	assert_null(strstr(all, "T0KEN-VALUE"));
	assert_null(strstr(all, code)); /* the expired approval's display code */
	{
		regex_t re, helper;
		unsigned lines = 0, helper_lines = 0;

		assert_int_equal(regcomp(&helper, "^<[2-7]>cordon-launch: ", REG_EXTENDED | REG_NOSUB), 0);

		assert_int_equal(
			regcomp(&re,
				journal ? "^<[2-7]>cordond: " : "^cordond: (crit|error|warning|notice|info|debug): ",
				REG_EXTENDED | REG_NOSUB),
			0);
		for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
			/* The helper's own lines: under the journal they carry their
			 * priority too (verb-serve.c), else plain. */
			if (journal ? regexec(&helper, line, 0, NULL, 0) == 0
				    : strncmp(line, "cordon-launch", 13) == 0) {
				helper_lines++;
				continue;
			}
			if (journal && strstr(line, "cordon-launch:"))
				fail_msg("a helper line without its priority: %s", line);
			if (regexec(&re, line, 0, NULL, 0) != 0)
				fail_msg("a line of another form: %s", line);
			lines++;
		}
		regfree(&re);
		regfree(&helper);
		printf("  %s: %u cordond lines, every one prefixed; %u helper lines\n", journal ? "journal" : "plain",
		       lines, helper_lines);
	}
	free(all);
	rcd_teardown(&C, false);
}

static void test_events_plain(void **state)
{
	(void)state;
	scenario(false);
}

static void test_events_journal(void **state)
{
	(void)state;
	scenario(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_plain),
		cmocka_unit_test(test_events_journal),
	};
	int r;

	if (geteuid() != 0)
		cordon_test_skip("needs root (cordond drops to its private id; the launcher builds sandboxes)");
	if (!cordon_test_env("CORDON_BUILD_DIR", NULL))
		cordon_test_skip("CORDON_BUILD_DIR not set");
	r = cmocka_run_group_tests(tests, NULL, NULL);
	if (C.pid > 0)
		rcd_kill(&C, SIGKILL);
	if (r != 0 && C.dir)
		rcd_teardown(&C, true);
	return r;
}
