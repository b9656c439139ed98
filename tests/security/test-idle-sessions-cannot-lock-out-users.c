/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement (issue 11 finding 6): connections of one local user that
 * never send `initialize` cannot lock other users out of cordond.
 * Scenario (cordond's core in its own process, tests/e2e/daemon-harness.c,
 * real gateway connections; max_sessions 16, sessions_per_uid 4,
 * initialize_timeout 2 s): a child as uid 65534 opens 4 connections that
 * never initialize (one of them sends pings, which keep nothing alive),
 * then 2 more. Expected: each excess connection reads exactly
 *   {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":
 *    "cordond: too many sessions for uid 65534 (at most 4 per uid); closing",
 *    "data":{"io.cordon/refused_by":"cordon"}}}
 * and then EOF, although the daemon has 12 free slots; meanwhile root
 * connects and initializes successfully (and can use its own 4 slots);
 * each idle connection gets -32000 "cordond: no initialize within 2 s;
 * closing" and EOF, not before 2 s after it connected (polled, never a
 * fixed sleep); afterwards uid 65534 can connect and initialize again (its
 * share came back). */
#include <grp.h>
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

#define NOBODY	   65534
#define SHARE	   4
#define TIMEOUT_MS 2000

static struct harness H;

static long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int connect_gateway(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", H.gateway);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* Reads one line (without its newline) within timeout_ms: its length, 0 on
 * EOF before any byte, -ETIMEDOUT, or -errno. Byte by byte: the peer sends
 * one short line at most before EOF. */
static ssize_t read_line(int fd, char *buf, size_t size, int timeout_ms)
{
	long deadline = mono_ms() + timeout_ms;
	size_t n = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left = deadline - mono_ms();
		ssize_t r;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return -ETIMEDOUT;
		r = read(fd, buf + n, 1);
		if (r < 0)
			return -errno;
		if (r == 0)
			return n ? -EPROTO : 0;
		if (buf[n] == '\n') {
			buf[n] = 0;
			return (ssize_t)n;
		}
		if (++n >= size - 1)
			return -E2BIG;
	}
}

/* The next thing on fd is EOF (within timeout_ms). */
static bool eof_next(int fd, int timeout_ms)
{
	char b[2];

	return read_line(fd, b, sizeof(b), timeout_ms) == 0;
}

/* The JSON-RPC error line a refused/closed connection gets. */
static bool is_error_line(const char *line, const char *want_message)
{
	json_t *v = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
	json_t *e = json_object_get(v, "error");
	bool ok = v && json_is_null(json_object_get(v, "id")) &&
		  !strcmp(json_string_value(json_object_get(v, "jsonrpc")) ?: "", "2.0") &&
		  json_integer_value(json_object_get(e, "code")) == -32000 &&
		  !strcmp(json_string_value(json_object_get(e, "message")) ?: "", want_message);

	if (!ok)
		fprintf(stderr, "got line: %s\nwant message: %s\n", line, want_message);
	json_decref(v);
	return ok;
}

static _Noreturn void child_main(int ready, int go)
{
	static const char refused_line[] = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32000,\"message\":"
					   "\"cordond: too many sessions for "
					   "uid 65534 (at most 4 per uid); closing\","
					   "\"data\":{\"io.cordon/refused_by\":\"cordon\"}}}";
	static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
	int idle[SHARE];
	long t_conn[SHARE];
	char line[512], c;
	struct mcp_peer p;
	json_t *r;

	CHILD_CHECK(setgroups(0, NULL) == 0);
	CHILD_CHECK(setresgid(NOBODY, NOBODY, NOBODY) == 0);
	CHILD_CHECK(setresuid(NOBODY, NOBODY, NOBODY) == 0);
	for (int i = 0; i < SHARE; i++) {
		t_conn[i] = mono_ms();
		idle[i] = connect_gateway();
		CHILD_CHECK(idle[i] >= 0);
	}
	/* A ping before initialize is answered, yet keeps nothing alive. */
	CHILD_CHECK(write(idle[0], ping, sizeof(ping) - 1) == (ssize_t)(sizeof(ping) - 1));
	CHILD_CHECK(read_line(idle[0], line, sizeof(line), 5000) > 0);
	CHILD_CHECK(strstr(line, "\"result\"") != NULL);
	/* Beyond the share: the exact refusal, then EOF. */
	for (int i = 0; i < 2; i++) {
		int fd = connect_gateway();

		CHILD_CHECK(fd >= 0);
		CHILD_CHECK(read_line(fd, line, sizeof(line), 5000) > 0);
		if (strcmp(line, refused_line) != 0)
			fprintf(stderr, "refusal: %s\n", line);
		CHILD_CHECK(strcmp(line, refused_line) == 0);
		CHILD_CHECK(eof_next(fd, 5000));
		close(fd);
	}
	printf("  uid %d: connection %d refused: %s\n", NOBODY, SHARE + 1, refused_line);
	fflush(stdout);
	/* Root's turn while the idle ones still hold the uid's share. */
	CHILD_CHECK(write(ready, "R", 1) == 1);
	CHILD_CHECK(read(go, &c, 1) == 1);
	/* The idle connections are closed after the timeout, not before. */
	for (int i = 0; i < SHARE; i++) {
		long el;

		CHILD_CHECK(read_line(idle[i], line, sizeof(line), TIMEOUT_MS + 10000) > 0);
		el = mono_ms() - t_conn[i];
		CHILD_CHECK(is_error_line(line, "cordond: no initialize within 2 s; closing"));
		CHILD_CHECK(eof_next(idle[i], 5000));
		CHILD_CHECK(el >= TIMEOUT_MS);
		printf("  idle connection %d closed %ld ms after connecting\n", i, el);
		close(idle[i]);
	}
	fflush(stdout);
	/* The share came back: this uid is served again. */
	CHILD_CHECK(mcp_peer_connect(&p, H.gateway) == 0);
	r = mcp_peer_initialize(&p, "2025-11-25");
	CHILD_CHECK(r != NULL && json_is_string(json_object_get(r, "protocolVersion")));
	json_decref(r);
	mcp_peer_disconnect(&p);
	_exit(0);
}

static void test_idle_sessions_cannot_lock_out_users(void **state)
{
	struct mcp_peer root[SHARE];
	int ready[2], go[2];
	pid_t child;
	char c;
	json_t *r;

	(void)state;
	cordon_test_require_root();
	harness_setup(&H, "sec-idle-sess");
	H.max_sessions = 16;
	H.sessions_per_uid = SHARE;
	H.initialize_timeout_ms = TIMEOUT_MS;
	/* uid 65534 must reach <dir>/run/gateway.sock (0666 in a 0755 dir). */
	assert_int_equal(chmod(H.dir, 0711), 0);
	harness_start(&H);

	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	fflush(NULL);
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		child_main(ready[1], go[0]);
	close(ready[1]);
	close(go[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);

	/* uid 65534 holds its whole share without initializing: root still
	 * initializes, up to its own share. */
	for (int i = 0; i < SHARE; i++) {
		assert_int_equal(mcp_peer_connect(&root[i], H.gateway), 0);
		r = mcp_peer_initialize(&root[i], "2025-11-25");
		assert_non_null(r);
		assert_string_equal(json_string_value(json_object_get(r, "protocolVersion")), "2025-11-25");
		json_decref(r);
	}
	print_message("root initialized %d sessions while uid %d held %d idle ones\n", SHARE, NOBODY, SHARE);
	assert_int_equal(write(go[1], "G", 1), 1);
	assert_int_equal(cordon_test_wait(child), 0);

	/* Initialized sessions are not subject to the timeout. */
	r = mcp_peer_request(&root[0], "ping", NULL, 5000);
	assert_non_null(r);
	assert_non_null(json_object_get(r, "result"));
	json_decref(r);
	for (int i = 0; i < SHARE; i++)
		mcp_peer_disconnect(&root[i]);
	close(ready[0]);
	close(go[1]);
	harness_teardown(&H);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_sessions_cannot_lock_out_users),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
