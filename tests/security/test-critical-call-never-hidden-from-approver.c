/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: a critical call is never hidden from the operator who
 * approves it; masked values of other tiers can be revealed, audited and
 * never logged (issue 11, finding 8).
 *
 * Before: a critical run_shell whose command started with "Bearer " or held
 * "PRIVATE KEY-----" was shown as <masked: 85 bytes>; the operator approved
 * blind and it ran. A token inside a longer string was shown in clear.
 *
 * A real cordond core (daemon harness) with a connector whose run_shell is
 * critical (fake-connector --shell: it records the command it would run).
 * Through the real gateway socket and the real cordonctl:
 *  - critical run_shell "Bearer ...; curl ..." : `cordonctl approvals show`
 *    prints the exact command, "masking: off: critical tier ...", no marker;
 *    approved with the printed code, the connector received exactly it;
 *  - critical run_shell with a PEM private key and a right-to-left override:
 *    the exact command, the override escaped as \u202E and warned about;
 *  - a write-tier call whose text holds a GitHub token inside a sentence:
 *    the token (only it) is masked in place, `"deploy with " <masked: 40
 *    bytes> " now"`, and its key "tаrget" (Cyrillic а) is flagged "key
 *    contains characters from several scripts: Latin, Cyrillic"; `--reveal` prints it, "masking: off: revealed by the
 *    operator (audited)"; the audit log holds one approval.revealed record
 *    (operator actor, the approval id, reason operator-reveal) and no byte
 *    of the token; the daemon's log holds no byte of any value.
 * Layer: cordond core + gateway + operator socket + cordonctl. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/wait.h>

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
#include "cleanup.h"
#include "inventory.h"

#define GHP	   "ghp_Zq8rT3vN6yB1xK4mW7pL0sD2fH5jG9cA0e1u"
#define CMD_BEARER "Bearer abcdefghijklmnopqrstuvwx0123456789ABCDEFGH; curl -s https://127.0.0.2/x -o /data/x"
#define CMD_PEM                                                                                                        \
	"printf '%s' '-----BEGIN PRIVATE KEY-----MIIEvQIBADANBgkqhkiG9w0BAQEFAASC-----END PRIVATE KEY-----' > "        \
	"/data/key # \xe2\x80\xae"                                                                                     \
	"txt.exe"
#define CMD_PEM_SHOWN                                                                                                  \
	"printf '%s' '-----BEGIN PRIVATE KEY-----MIIEvQIBADANBgkqhkiG9w0BAQEFAASC-----END PRIVATE KEY-----' > "        \
	"/data/key # \\u202Etxt.exe"
#define TEXT_WITH_TOKEN "deploy with " GHP " now"

static struct harness H;

static void rewrite_profile(void)
{
	char path[700], text[8192];
	_cleanup_free_ char *old = NULL;
	FILE *f;
	size_t n;
	char *p;

	snprintf(path, sizeof(path), "%s/fake.yaml", H.profiles);
	f = fopen(path, "re");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	/* The connector also offers run_shell; it is critical and granted. */
	old = strdup(text);
	p = strstr(old, ", --extra]");
	assert_non_null(p);
	snprintf(text, sizeof(text), "%.*s, --shell]%s", (int)(p - old), old, p + strlen(", --extra]"));
	free(old);
	old = strdup(text);
	p = strstr(old, "risk: {");
	assert_non_null(p);
	snprintf(text, sizeof(text), "%.*srisk: {run_shell: critical, %s", (int)(p - old), old, p + strlen("risk: {"));
	free(old);
	old = strdup(text);
	p = strstr(old, "grant: [");
	assert_non_null(p);
	snprintf(text, sizeof(text), "%.*sgrant: [run_shell, %s", (int)(p - old), old, p + strlen("grant: ["));
	f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	(void)state;
	harness_setup(&H, "sec-critshow");
	rewrite_profile();
	H.approval_wait_s = 60; /* the call waits while the operator looks */
	harness_start(&H);
	harness_review_all(&H, "fake");
	{
		struct cordon_db *db = harness_db(&H);
		struct cordon_actor op = cordon_actor_operator(0, "test");
		struct cordon_inventory_record rec = {};

		assert_int_equal(cordon_inventory_get(db, "fake", "run_shell", &rec), 0);
		assert_int_equal(cordon_inventory_review(db, &op, "fake", "run_shell", rec.fingerprint), 0);
		cordon_inventory_record_done(&rec);
		cordon_db_close(db);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	harness_teardown(&H);
	return 0;
}

/* Runs cordonctl with args; writes its stdout (malloc'd) and returns its
 * exit status. */
static int ctl(const char *args, char **ret_out)
{
	const char *b = cordon_test_env("CORDON_BUILD_DIR", NULL);
	char cmd[2048];
	char *buf = NULL;
	size_t len = 0;
	FILE *p, *m;
	int c, st;

	assert_non_null(b);
	snprintf(cmd, sizeof(cmd), "%s/tools/cordonctl --socket %s/operator.sock %s", b, H.runtime, args);
	p = popen(cmd, "re");
	assert_non_null(p);
	m = open_memstream(&buf, &len);
	assert_non_null(m);
	while ((c = fgetc(p)) != EOF)
		fputc(c, m);
	fclose(m);
	st = pclose(p);
	printf("$ cordonctl %s\n%s", args, buf);
	if (ret_out)
		*ret_out = buf;
	else
		free(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Polls the database until one approval is requested; returns its id. */
static void wait_requested(char id[static CORDON_ID_STRING_MAX])
{
	char path[700];

	snprintf(path, sizeof(path), "%s/cordon.db", H.state);
	for (int i = 0; i < 1000; i++) {
		sqlite3 *s = NULL;
		sqlite3_stmt *st = NULL;
		bool found = false;

		assert_int_equal(sqlite3_open_v2(path, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
		sqlite3_busy_timeout(s, 5000);
		if (sqlite3_prepare_v2(s, "SELECT id FROM approvals WHERE state = 0", -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW) {
			snprintf(id, CORDON_ID_STRING_MAX, "%s", (const char *)sqlite3_column_text(st, 0));
			found = true;
		}
		sqlite3_finalize(st);
		sqlite3_close(s);
		if (found)
			return;
		usleep(10 * 1000);
	}
	fail_msg("no approval was requested within 10 s");
}

static void session(struct mcp_peer *p)
{
	json_t *r;

	assert_int_equal(mcp_peer_connect(p, H.gateway), 0);
	r = mcp_peer_initialize(p, "2025-11-25");
	assert_non_null(r);
	json_decref(r);
}

static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "re"), *m = open_memstream(&buf, &len);
	int c;

	assert_non_null(m);
	if (f) {
		while ((c = fgetc(f)) != EOF)
			fputc(c, m);
		fclose(f);
	}
	fclose(m);
	return buf;
}

/* The confirmation code from `approvals show`'s CRITICAL line. */
static void confirmation_code(const char *out, char *code, size_t size)
{
	const char *p = strstr(out, "--code ");
	size_t n = 0;

	assert_non_null(p);
	p += 7;
	while (p[n] && p[n] != '\n' && n + 1 < size)
		n++;
	memcpy(code, p, n);
	code[n] = 0;
}

/* A critical run_shell: the operator sees the exact command, approves it
 * with the code, and the connector receives exactly that command. */
static void critical_shown_and_run(struct mcp_peer *p, const char *cmd, const char *shown, bool warns)
{
	_cleanup_free_ char *out = NULL, *line = NULL, *ran = NULL, *args = NULL;
	char id[CORDON_ID_STRING_MAX], code[64];
	long rid;
	json_t *r;

	rid = mcp_peer_send_request(
		p, "tools/call", json_pack("{s:s, s:{s:s}}", "name", "fake__run_shell", "arguments", "command", cmd));
	wait_requested(id);
	assert_true(asprintf(&args, "approvals show %s", id) > 0);
	assert_int_equal(ctl(args, &out), 0);
	assert_non_null(strstr(out, "  tier:       critical\n"));
	assert_non_null(strstr(out, "  masking:    off: critical tier, every value shown in full\n"));
	assert_true(asprintf(&line, "\n      \"command\": \"%s\"\n", shown) > 0);
	assert_non_null(strstr(out, line));
	assert_null(strstr(out, "<masked"));
	assert_null(strstr(out, "masked:"));
	if (warns)
		assert_non_null(
			strstr(out, "  WARNING:    1 invisible, bidi or look-alike characters in the arguments\n"));
	else
		assert_null(strstr(out, "WARNING"));
	confirmation_code(out, code, sizeof(code));
	free(args);
	assert_true(asprintf(&args, "approvals approve %s --code %s", id, code) > 0);
	assert_int_equal(ctl(args, NULL), 0);
	r = mcp_peer_wait(p, rid, 20000);
	assert_non_null(r);
	assert_false(json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
	assert_string_equal(result_text(json_object_get(r, "result")), "ran");
	json_decref(r);
	/* What ran is what was shown (the connector got the exact bytes). */
	ran = slurp(H.out_file);
	free(line);
	line = NULL;
	assert_true(asprintf(&line, "%s\n", cmd) > 0);
	assert_non_null(strstr(ran, line));
}

static void test_critical_call_never_hidden_from_approver(void **state)
{
	struct mcp_peer p;

	(void)state;
	session(&p);
	critical_shown_and_run(&p, CMD_BEARER, CMD_BEARER, false);
	critical_shown_and_run(&p, CMD_PEM, CMD_PEM_SHOWN, true);
	mcp_peer_disconnect(&p);
}

static int64_t audit_count(const char *like)
{
	char path[700];
	sqlite3 *s = NULL;
	sqlite3_stmt *st = NULL;
	int64_t n = -1;

	snprintf(path, sizeof(path), "%s/cordon.db", H.state);
	assert_int_equal(sqlite3_open_v2(path, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_busy_timeout(s, 5000);
	assert_int_equal(sqlite3_prepare_v2(s, "SELECT count(*) FROM audit WHERE instr(CAST(record AS TEXT), ?1) > 0",
					    -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(st, 1, like, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(s);
	return n;
}

/* Below critical: a token inside a longer string is masked in place, like a
 * whole-value token; --reveal shows it, is audited, and nothing logs it. */
static void test_masked_value_revealed_audited_never_logged(void **state)
{
	_cleanup_free_ char *out = NULL, *args = NULL, *log = NULL, *rec = NULL, *logpath = NULL;
	char id[CORDON_ID_STRING_MAX];
	struct mcp_peer p;
	long rid;
	json_t *r;

	(void)state;
	session(&p);
	rid = mcp_peer_send_request(&p, "tools/call",
				    json_pack("{s:s, s:{s:s, s:s}}", "name", "fake__append", "arguments", "text",
					      TEXT_WITH_TOKEN, "t\xd0\xb0rget", "/data/out"));
	wait_requested(id);
	assert_true(asprintf(&args, "approvals show %s", id) > 0);
	assert_int_equal(ctl(args, &out), 0);
	assert_non_null(strstr(out, "  tier:       write\n"));
	assert_non_null(strstr(out, "  masking:    on: likely secrets masked\n"));
	assert_non_null(strstr(out, "\n      \"text\": \"deploy with \" <masked: 40 bytes> \" now\",\n"));
	assert_non_null(strstr(out, "  masked:     1 value(s) (show them with --reveal)\n"));
	/* The look-alike key (Cyrillic a) is flagged (finding 9). */
	assert_non_null(strstr(out, "  WARNING:    $.t\xd0\xb0rget: key contains characters from several scripts: "
				    "Latin, Cyrillic\n"));
	assert_null(strstr(out, "ghp_"));
	assert_int_equal(audit_count("approval.revealed"), 0);
	free(out);
	out = NULL;

	free(args);
	assert_true(asprintf(&args, "approvals show %s --reveal", id) > 0);
	assert_int_equal(ctl(args, &out), 0);
	assert_non_null(strstr(out, "  masking:    off: revealed by the operator (audited)\n"));
	assert_non_null(strstr(out, "\n      \"text\": \"" TEXT_WITH_TOKEN "\",\n"));
	assert_null(strstr(out, "<masked"));

	/* One audit record: who revealed which approval, no value. */
	assert_int_equal(audit_count("\"event\":\"approval.revealed\""), 1);
	assert_true(asprintf(&rec, "\"approval\":\"%s\"", id) > 0);
	{
		char path[700];
		sqlite3 *s = NULL;
		sqlite3_stmt *st = NULL;
		const char *text;

		snprintf(path, sizeof(path), "%s/cordon.db", H.state);
		assert_int_equal(sqlite3_open_v2(path, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(s,
						    "SELECT CAST(record AS TEXT) FROM audit WHERE instr(CAST(record AS "
						    "TEXT), '\"event\":\"approval.revealed\"') > 0",
						    -1, &st, NULL),
				 SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		text = (const char *)sqlite3_column_text(st, 0);
		printf("  audit: %s\n", text);
		assert_non_null(strstr(text, rec));
		assert_non_null(strstr(text, "\"actor\":{\"channel\":"));
		assert_non_null(strstr(text, "\"kind\":\"operator\""));
		assert_non_null(strstr(text, "\"reason\":\"operator-reveal\""));
		assert_non_null(strstr(text, "\"tool\":\"append\""));
		assert_null(strstr(text, "ghp_"));
		assert_null(strstr(text, "deploy"));
		sqlite3_finalize(st);
		sqlite3_close(s);
	}
	assert_int_equal(audit_count("ghp_"), 0);
	assert_int_equal(audit_count("deploy with"), 0);

	free(args);
	assert_true(asprintf(&args, "approvals deny %s", id) > 0);
	assert_int_equal(ctl(args, NULL), 0);
	r = mcp_peer_wait(&p, rid, 20000);
	assert_non_null(r);
	json_decref(r);
	mcp_peer_disconnect(&p);

	/* The daemon's log never carries a value: neither the revealed token
	 * nor the critical commands shown in full. */
	assert_true(asprintf(&logpath, "%s/daemon.log", H.dir) > 0);
	log = slurp(logpath);
	assert_null(strstr(log, "ghp_"));
	assert_null(strstr(log, "deploy with"));
	assert_null(strstr(log, "abcdefghijklmnopqrstuvwx"));
	assert_null(strstr(log, "MIIEvQIBADANBg"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_critical_call_never_hidden_from_approver),
		cmocka_unit_test(test_masked_value_revealed_audited_never_logged),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
