/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The operator socket server on a real AF_UNIX socket: framing, ordering,
 * errors that keep the connection, oversized lines that end it, the
 * connection limit, idle timeouts (a dribbling partial line does not keep a
 * connection alive) and back-pressure. */

#include "operator-socket-test.h"

struct fx {
	struct bt *t;
	struct cordon_daemon *d;
	char *dir, *path;
	int lfd;
	struct cordon_operator *op;
};

static struct fx *start(struct cordon_operator_options *o)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->t = bt_new();
	f->d = test_daemon_new(f->t);
	f->dir = cordon_test_mkdtemp("opsock");
	assert_true(asprintf(&f->path, "%s/operator.sock", f->dir) > 0);
	f->lfd = sock_listen(f->path);
	/* getgid(): this test runs as any user; its own primary group is the
	 * operator group here (the unprivileged-peer case is
	 * tests/integration/test-operator-peer.c). */
	assert_int_equal(cordon_operator_start_opts(f->d, f->lfd, getgid(), o, &f->op), 0);
	return f;
}

static void stop(struct fx *f)
{
	cordon_operator_free(f->op);
	close(f->lfd);
	assert_int_equal(f->d->uncommitted, 0);
	test_daemon_free(f->d);
	bt_free(f->t);
	assert_int_equal(cordon_test_rm_rf(f->dir), 0);
	free(f->dir);
	free(f->path);
	free(f);
}

static void test_roundtrip_and_pipelining(void **state)
{
	struct fx *f = start(NULL);
	char buf[65536], code[64];
	int fd = sock_connect(f->path);

	(void)state;
	assert_true(fd >= 0);
	assert_true(roundtrip(f->d->loop, fd, "{\"v\":1,\"id\":1,\"op\":\"status\"}\n", buf, sizeof(buf)) > 0);
	assert_string_equal(response_code(buf, code, sizeof(code)), "ok");
	assert_non_null(strstr(buf, "\"id\":1,"));
	assert_non_null(strstr(buf, "\"health\":\"ok\""));

	/* three requests in one write: three answers, in order */
	assert_true(roundtrip(f->d->loop, fd,
			      "{\"v\":1,\"id\":10,\"op\":\"approvals.list\"}\n{\"v\":1,\"id\":11,\"op\":\"nope\"}\n"
			      "{\"v\":1,\"id\":12,\"op\":\"grants.show\",\"args\":{\"connector\":\"fs\"}}\n",
			      buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "\"id\":10,\"ok\":true"));
	assert_true(roundtrip(f->d->loop, fd, NULL, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "{\"v\":1,\"id\":11,\"ok\":false,\"error\":{\"code\":\"unknown-op\",\"message\":"
				 "\"unknown op \\\"nope\\\"\"}}");
	assert_true(roundtrip(f->d->loop, fd, NULL, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "\"id\":12,\"ok\":true"));

	/* garbage gets an error with id null; the connection stays usable */
	assert_true(roundtrip(f->d->loop, fd, "{{{\n", buf, sizeof(buf)) > 0);
	assert_string_equal(response_code(buf, code, sizeof(code)), "parse-error");
	assert_non_null(strstr(buf, "\"id\":null"));
	assert_true(roundtrip(f->d->loop, fd, "{\"v\":1,\"id\":2,\"op\":\"status\"}\n", buf, sizeof(buf)) > 0);
	assert_string_equal(response_code(buf, code, sizeof(code)), "ok");
	/* a request split across writes */
	assert_int_equal(write(fd, "{\"v\":1,\"id\":3,", 14), 14);
	pump_for(f->d->loop, 30);
	assert_true(roundtrip(f->d->loop, fd, "\"op\":\"status\"}\n", buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "\"id\":3,\"ok\":true"));
	close(fd);
	pump_for(f->d->loop, 20);
	stop(f);
}

static void test_oversized_line_closes(void **state)
{
	struct fx *f = start(NULL);
	size_t n = CORDON_OP_MAX_REQUEST + 4096;
	char *big = malloc(n), buf[4096], code[64];
	int fd = sock_connect(f->path);
	pid_t pid;
	int st;

	(void)state;
	assert_non_null(big);
	memset(big, 'x', n);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* the writer: it may be cut off (EPIPE/ECONNRESET) */
		signal(SIGPIPE, SIG_IGN);
		for (size_t off = 0; off < n;) {
			ssize_t w = write(fd, big + off, n - off);

			if (w <= 0)
				_exit(0);
			off += (size_t)w;
		}
		_exit(0);
	}
	st = pump_until_exit(f->d->loop, pid);
	assert_true(WIFEXITED(st));
	assert_true(roundtrip(f->d->loop, fd, NULL, buf, sizeof(buf)) > 0);
	assert_string_equal(response_code(buf, code, sizeof(code)), "request-too-large");
	assert_int_equal(roundtrip(f->d->loop, fd, NULL, buf, sizeof(buf)), 0); /* EOF */
	close(fd);
	free(big);
	stop(f);
}

static void test_connection_limit(void **state)
{
	struct cordon_operator_options o = { .max_connections = 2 };
	struct fx *f = start(&o);
	char buf[4096], code[64];
	int a = sock_connect(f->path), b = sock_connect(f->path), c;

	(void)state;
	assert_true(a >= 0 && b >= 0);
	pump_for(f->d->loop, 30);
	c = sock_connect(f->path);
	assert_true(c >= 0);
	assert_true(roundtrip(f->d->loop, c, NULL, buf, sizeof(buf)) > 0);
	assert_string_equal(response_code(buf, code, sizeof(code)), "busy");
	assert_int_equal(roundtrip(f->d->loop, c, NULL, buf, sizeof(buf)), 0);
	close(c);
	/* the two admitted ones still work; closing one frees a slot */
	assert_true(roundtrip(f->d->loop, a, "{\"v\":1,\"id\":1,\"op\":\"status\"}\n", buf, sizeof(buf)) > 0);
	assert_string_equal(response_code(buf, code, sizeof(code)), "ok");
	close(a);
	pump_for(f->d->loop, 30);
	c = sock_connect(f->path);
	assert_true(roundtrip(f->d->loop, c, "{\"v\":1,\"id\":1,\"op\":\"status\"}\n", buf, sizeof(buf)) > 0);
	assert_string_equal(response_code(buf, code, sizeof(code)), "ok");
	close(b);
	close(c);
	pump_for(f->d->loop, 20);
	stop(f);
}

static void test_idle_timeout(void **state)
{
	struct cordon_operator_options o = { .idle_timeout_ms = 200 };
	struct fx *f = start(&o);
	char buf[4096], code[64];
	int a = sock_connect(f->path), b = sock_connect(f->path);

	(void)state;
	assert_true(a >= 0 && b >= 0);
	/* a: a complete request resets the timer; then silence closes it */
	assert_true(roundtrip(f->d->loop, a, "{\"v\":1,\"id\":1,\"op\":\"status\"}\n", buf, sizeof(buf)) > 0);
	assert_string_equal(response_code(buf, code, sizeof(code)), "ok");
	/* b: one byte every 50 ms never completes a line: cut at the timeout */
	for (int i = 0; i < 12; i++) {
		if (send(b, "{", 1, MSG_NOSIGNAL) != 1)
			break;
		pump_for(f->d->loop, 50);
	}
	assert_int_equal(roundtrip(f->d->loop, a, NULL, buf, sizeof(buf)), 0);
	assert_int_equal(roundtrip(f->d->loop, b, NULL, buf, sizeof(buf)), 0);
	close(a);
	close(b);
	stop(f);
}

static void test_client_that_does_not_read(void **state)
{
	struct cordon_operator_options o = { .max_pending_output = 4096 };
	struct fx *f = start(&o);
	char buf[65536], code[64];
	int fd = sock_connect(f->path), one = 4096;

	(void)state;
	/* A response above the pending-output bound is refused, not buffered. */
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one)), 0);
	assert_true(roundtrip(f->d->loop, fd, "{\"v\":1,\"id\":1,\"op\":\"audit.tail\",\"args\":{\"count\":1000}}\n",
			      buf, sizeof(buf)) > 0);
	assert_string_equal(response_code(buf, code, sizeof(code)), "failed");
	assert_non_null(strstr(buf, "output limit"));
	close(fd);
	pump_for(f->d->loop, 20);
	stop(f);
}

static void test_peer_check_self(void **state)
{
	struct fx *f = start(NULL);
	int fd = sock_connect(f->path), sfd;
	struct cordon_op_error e = {};
	uid_t uid = 12345;

	(void)state;
	pump_for(f->d->loop, 20);
	/* the server side of our own connection: our uid, allowed (primary gid) */
	sfd = fd; /* SO_PEERCRED on the client end names the server: us too */
	assert_int_equal(cordon_operator_peer_check(sfd, getgid(), &uid, &e), 0);
	assert_int_equal(uid, getuid());
	if (getuid() != 0) {
		assert_int_equal(cordon_operator_peer_check(sfd, getgid() + 1, &uid, &e), -EPERM);
		assert_string_equal(e.code, CORDON_OP_E_DENIED);
	}
	/* not a socket */
	{
		int nfd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		assert_int_equal(cordon_operator_peer_check(nfd, getgid(), &uid, &e), -ENOTSOCK);
		assert_string_equal(e.code, CORDON_OP_E_DENIED);
		close(nfd);
	}
	close(fd);
	pump_for(f->d->loop, 20);
	stop(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_and_pipelining),  cmocka_unit_test(test_oversized_line_closes),
		cmocka_unit_test(test_connection_limit),	  cmocka_unit_test(test_idle_timeout),
		cmocka_unit_test(test_client_that_does_not_read), cmocka_unit_test(test_peer_check_self),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
