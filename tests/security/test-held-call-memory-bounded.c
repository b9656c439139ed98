/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement (issue 11 finding 3): the memory that calls held by cordond
 * keep is bounded per uid and globally, a call beyond a budget gets a
 * JSON-RPC error naming that budget before it is held, another uid still
 * gets service within its own share, and the memory returns to the OS when
 * the sessions end.
 * Scenario (cordond's core in its own process, tests/e2e/daemon-harness.c,
 * a real fake-connector instance, real gateway connections): budgets of
 * 32 MiB per uid and 48 MiB in all. Three root sessions each send six
 * identical ~4 MB fake__append (write tier) calls, which wait for an
 * approval (identical calls coalesce into one approval per session, so the
 * approval caps never apply). Expected: exactly 8 calls (32 000 088 bytes
 * of canonical arguments) are held for uid 0; each further call gets
 * -32001 "... per-uid budget of 32 MiB (32000088 bytes held, 4000011 in
 * this call) ...". Then a child as uid 65534 gets a read call answered, and
 * 4 of its big calls are held before the 5th gets -32001 naming the global
 * budget of 48 MiB. cordond's VmRSS (/proc/<pid>/status) is read before,
 * while the calls are held, and after every session closed: it must grow
 * by at least 40 MiB while held and come back to within 3 MiB of the
 * start (polled, the daemon trims its heap once a large amount was freed).
 * The numbers are printed. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <grp.h>

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

#define MIB	  (1024ull * 1024)
#define TEXT_LEN  4000000u
#define ARGS_LEN  (TEXT_LEN + 11u) /* {"text":"…"} in canonical form */
#define PER_UID	  (32 * MIB)
#define GLOBAL	  (48 * MIB)
#define CALLS	  6
#define ROOT_SESS 3
#define NOBODY	  65534
/* After the sessions end, RSS must come back to within this much of the
 * start. Measured: +76 KiB with the daemon's malloc_trim, +4.3 MiB without
 * it (glibc keeps the freed 4 MB blocks in its heap), so the bound proves
 * the trim. ASan's allocator keeps freed memory in quarantine and ignores
 * malloc_trim: there only the RSS during the calls is checked. */
#define RETURN_BOUND_KIB 3072
#if defined(__SANITIZE_ADDRESS__)
#define RSS_RETURN_CHECKED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_RETURN_CHECKED 0
#endif
#endif
#ifndef RSS_RETURN_CHECKED
#define RSS_RETURN_CHECKED 1
#endif

static struct harness H;
static char *text;

/* Sends CALLS identical big write calls and a ping; collects every error
 * message up to the ping's answer. Returns the number of errors; each must
 * equal `want` (code -32001). Held calls get no answer yet. */
static int big_calls(struct mcp_peer *p, const char *want, char *got, size_t gotsz)
{
	size_t cap = TEXT_LEN + 256;
	char *line = malloc(cap);
	long ping;
	int errors = 0;

	if (!line)
		return -1;
	got[0] = 0;
	for (int i = 0; i < CALLS; i++) {
		int n = snprintf(line, cap,
				 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":"
				 "\"fake__append\",\"arguments\":{\"text\":\"%s\"}}}\n",
				 p->next_id++, text);

		if (mcp_peer_send_raw(p, line, (size_t)n) < 0) {
			free(line);
			return -1;
		}
	}
	free(line);
	ping = mcp_peer_send_request(p, "ping", NULL);
	for (;;) {
		json_t *v = mcp_peer_read(p, 60000);
		json_t *err;

		if (!v)
			return -1;
		if (json_is_integer(json_object_get(v, "id")) && json_integer_value(json_object_get(v, "id")) == ping) {
			json_decref(v);
			return errors;
		}
		err = json_object_get(v, "error");
		if (err) {
			const char *m = json_string_value(json_object_get(err, "message"));

			errors++;
			if (json_integer_value(json_object_get(err, "code")) != -32001 || !m || strcmp(m, want) != 0) {
				snprintf(got, gotsz, "code %lld: %s",
					 (long long)json_integer_value(json_object_get(err, "code")), m ? m : "(none)");
				errors = -1000;
			}
		} else if (json_object_get(v, "result") && !json_object_get(v, "method")) {
			/* A held call must not be answered (it waits for an approval). */
			snprintf(got, gotsz, "unexpected result: %s", result_text(json_object_get(v, "result")));
			errors = -1000;
		}
		json_decref(v);
	}
}

/* uid 65534: a read call is served, then 4 big calls are held and the 5th
 * and 6th are refused by the global budget. Holds its session until the
 * parent writes to `go`. */
static _Noreturn void other_uid(int ready, int go)
{
	struct mcp_peer p;
	char want[400], got[600];
	json_t *r;
	char c;
	int n;

	CHILD_CHECK(setgroups(0, NULL) == 0);
	CHILD_CHECK(setresgid(NOBODY, NOBODY, NOBODY) == 0);
	CHILD_CHECK(setresuid(NOBODY, NOBODY, NOBODY) == 0);
	CHILD_CHECK(mcp_peer_connect(&p, H.gateway) == 0);
	r = mcp_peer_initialize(&p, "2025-11-25");
	CHILD_CHECK(r != NULL);
	json_decref(r);
	r = mcp_peer_call(&p, "fake__echo", json_pack("{s:s}", "text", "still served"), 30000);
	CHILD_CHECK(r != NULL && !json_is_true(json_object_get(r, "isError")));
	json_decref(r);
	snprintf(want, sizeof(want),
		 "cordon: refused: the arguments held for all users would exceed the global budget of 48 MiB "
		 "(%llu bytes held, %u in this call); nothing was sent",
		 12ull * ARGS_LEN, ARGS_LEN);
	n = big_calls(&p, want, got, sizeof(got));
	if (n != 2)
		fprintf(stderr, "uid %d: %d errors; %s\n", NOBODY, n, got);
	CHILD_CHECK(n == 2);
	printf("  uid %d: echo served, 4 calls held, 2 refused: %s\n", NOBODY, want);
	fflush(stdout);
	CHILD_CHECK(write(ready, "R", 1) == 1);
	CHILD_CHECK(read(go, &c, 1) == 1);
	mcp_peer_disconnect(&p);
	_exit(0);
}

static void test_held_call_memory_bounded(void **state)
{
	struct mcp_peer s[ROOT_SESS];
	char want[400], got[600];
	int ready[2], go[2];
	long before, held, after = -1;
	pid_t child;
	char c;
	json_t *r;
	int n;

	(void)state;
	cordon_test_require_root();
	text = malloc(TEXT_LEN + 1);
	assert_non_null(text);
	memset(text, 'a', TEXT_LEN);
	text[TEXT_LEN] = 0;

	harness_setup(&H, "sec-held-mem");
	H.approval_wait_s = 300; /* held for the whole test */
	H.held_per_uid = PER_UID;
	H.held_max = GLOBAL;
	/* uid 65534 must reach <dir>/run/gateway.sock (0666 in a 0755 dir). */
	assert_int_equal(chmod(H.dir, 0711), 0);
	harness_start(&H);
	harness_review_all(&H, "fake");

	/* Warm-up: a session, the shared instance, one small write held. */
	for (int i = 0; i < ROOT_SESS; i++) {
		assert_int_equal(mcp_peer_connect(&s[i], H.gateway), 0);
		r = mcp_peer_initialize(&s[i], "2025-11-25");
		assert_non_null(r);
		json_decref(r);
	}
	r = mcp_peer_call(&s[0], "fake__echo", json_pack("{s:s}", "text", "warm"), 30000);
	assert_non_null(r);
	assert_false(json_is_true(json_object_get(r, "isError")));
	json_decref(r);
	before = cordon_test_rss_kib(H.daemon_pid);
	assert_true(before > 0);

	/* Session 0: all 6 held (24 000 066 bytes). Session 1: 2 held (8 in
	 * all, 32 000 088 bytes), 4 refused. Session 2: all 6 refused. */
	snprintf(want, sizeof(want),
		 "cordon: refused: the arguments held for uid 0 would exceed the per-uid budget of 32 MiB "
		 "(%llu bytes held, %u in this call); nothing was sent",
		 8ull * ARGS_LEN, ARGS_LEN);
	n = big_calls(&s[0], want, got, sizeof(got));
	if (n != 0)
		print_message("session 0: %d errors: %s\n", n, got);
	assert_int_equal(n, 0);
	n = big_calls(&s[1], want, got, sizeof(got));
	if (n != 4)
		print_message("session 1: %d errors: %s\n", n, got);
	assert_int_equal(n, 4);
	n = big_calls(&s[2], want, got, sizeof(got));
	if (n != CALLS)
		print_message("session 2: %d errors: %s\n", n, got);
	assert_int_equal(n, CALLS);
	print_message("uid 0: 8 calls held, 10 refused: %s\n", want);

	/* Another uid, within its own share (and the global budget). */
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	fflush(NULL);
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		other_uid(ready[1], go[0]);
	close(ready[1]);
	close(go[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);

	/* Identical calls of one session coalesced: one approval each for
	 * sessions 0 and 1 and the child's (session 2 holds nothing). */
	assert_int_equal(harness_count_approvals(&H, 0), 3);
	held = cordon_test_rss_kib(H.daemon_pid);
	print_message("cordond VmRSS: before %ld KiB, with 12 calls (48 000 132 bytes) held %ld KiB\n", before, held);
	assert_true(held - before >= 40 * 1024);

	/* Every session ends: everything held is freed and given back. */
	for (int i = 0; i < ROOT_SESS; i++)
		mcp_peer_disconnect(&s[i]);
	assert_int_equal(write(go[1], "G", 1), 1);
	assert_int_equal(cordon_test_wait(child), 0);
	close(ready[0]);
	close(go[1]);
	for (int i = 0; i < 200; i++) {
		struct pollfd none = { .fd = -1 };

		after = cordon_test_rss_kib(H.daemon_pid);
		if (after >= 0 && after <= before + RETURN_BOUND_KIB)
			break;
		(void)poll(&none, 1, 100); /* poll-until, at most 20 s */
	}
	print_message("cordond VmRSS after the sessions ended: %ld KiB (start %ld KiB, peak %ld KiB)\n", after, before,
		      held);
	if (RSS_RETURN_CHECKED)
		assert_true(after >= 0 && after <= before + RETURN_BOUND_KIB);
	else
		print_message("ASan build: RSS return not asserted (freed memory stays in ASan's quarantine)\n");

	/* The budget is free again: a new root session's big call is held. */
	{
		struct mcp_peer p;

		assert_int_equal(mcp_peer_connect(&p, H.gateway), 0);
		r = mcp_peer_initialize(&p, "2025-11-25");
		assert_non_null(r);
		json_decref(r);
		n = big_calls(&p, want, got, sizeof(got));
		assert_int_equal(n, 0);
		mcp_peer_disconnect(&p);
	}
	assert_true(kill(H.daemon_pid, 0) == 0);
	harness_teardown(&H);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_held_call_memory_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
