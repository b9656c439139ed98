/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Issue 11 finding 10 (first part): a rotated credential file was picked up
 * by the next instance, but its new value was logged in clear when the
 * connector printed it on stderr: cordond masked only the value it had read
 * at start-up.
 *
 * Requirement: each time an instance starts, the values of the credential
 * files its profile names are read again (by the spawner, which can read
 * them; bounded) and every current value, old and new, is scrubbed from the
 * connector's stderr in cordond's log. (Scrubbing is log hygiene, not a
 * boundary: a connector that holds a credential can always encode it.)
 *
 * Real cordond core with the real evil-connector in mode print-env: each
 * instance writes EVIL_TOKEN=<value> to stderr at start and exits after its
 * first call. The credential file is rotated between two instances. Asserts:
 * the second instance really got the new value (its stderr line has the new
 * value's length), and the log never shows either value in clear, only
 * asterisks. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "sec-evil-daemon.h"

#define OLD "first-T0KEN-aaaa1111"
#define NEW "second-rotated-T0KEN-bbbb2222"

static void write_token(const char *path, const char *value)
{
	char tmp[800];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	assert_non_null(f);
	assert_true(fprintf(f, "%s\n", value) > 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, path), 0); /* how rotation tools replace it */
}

/* Calls append until an instance answers (a restart after the previous
 * instance exited is refused with a retry hint during the backoff). */
static void call_until_answered(struct mcp_peer *p)
{
	for (int i = 0; i < 200; i++) {
		long id = mcp_peer_send_request(p, "tools/call",
						json_pack("{s:s, s:{}}", "name", "fake__append", "arguments"));
		json_t *r = evil_response(p, id, 30000, NULL);
		bool ok;

		assert_non_null(r);
		ok = !strcmp(result_text(json_object_get(r, "result")), "bye");
		json_decref(r);
		if (ok)
			return;
		usleep(100 * 1000);
	}
	fail_msg("no instance answered");
}

static void test_rotated_credential_scrubbed(void **state)
{
	char token[700], masked_old[64], masked_new[64], *log;
	struct mcp_peer p;

	(void)state;
	harness_setup(&H, "sec-rotate");
	/* Beneath the profiles directory: the harness's test spawner runs in
	 * cordond's Landlock domain, which can read there (the launcher helper
	 * reads credential files with its own privileges). */
	snprintf(token, sizeof(token), "%s/evil.token", H.profiles);
	write_token(token, OLD);
	evil_profile("print-env", "EVIL_TOKEN", token);
	harness_start(&H);
	evil_review_all();
	snprintf(masked_old, sizeof(masked_old), "EVIL_TOKEN=%.*s", (int)strlen(OLD),
		 "********************************");
	snprintf(masked_new, sizeof(masked_new), "EVIL_TOKEN=%.*s", (int)strlen(NEW),
		 "********************************");

	evil_session(&p);
	call_until_answered(&p); /* instance 1: the start-up value */
	write_token(token, NEW);
	call_until_answered(&p); /* instance 2: the rotated value */
	assert_true(evil_log_wait(masked_new, 10000));

	log = evil_log();
	printf("  log lines with the old value masked: %u, with the new value masked: %u\n", evil_log_count(masked_old),
	       evil_log_count(masked_new));
	assert_null(strstr(log, OLD));
	assert_null(strstr(log, NEW));
	assert_null(strstr(log, "T0KEN-"));
	free(log);
	assert_true(evil_log_count(masked_old) >= 2); /* install instance and instance 1 */
	assert_int_equal(evil_log_count(masked_new), 1);
	mcp_peer_disconnect(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_rotated_credential_scrubbed, evil_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
