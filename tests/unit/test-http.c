/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The HTTP surface with a real libmicrohttpd server in the cordon loop, on a
 * temp Unix socket (driven by `curl --unix-socket`) and on 127.0.0.1:0:
 * /health, /health/detail (Unix only), /metrics, 404/405/413, oversized
 * headers, the connection limit and a slow (slowloris) client. */

#include <netinet/in.h>
#include <time.h>

#include "http.h"
#include "operator-socket-test.h"

struct fx {
	struct bt *t;
	struct cordon_daemon *d;
	char *dir, *path;
	int lfd;
	struct cordon_http *h;
};

static struct fx *start(const char *tcp, const struct cordon_http_options *o)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct cordon_diag diag = {};

	if (access("/usr/bin/curl", X_OK) != 0)
		cordon_test_skip("curl is not installed (tools/install-deps installs it)");
	f->t = bt_new();
	f->d = test_daemon_new(f->t);
	f->dir = cordon_test_mkdtemp("http");
	assert_true(asprintf(&f->path, "%s/http.sock", f->dir) > 0);
	f->lfd = sock_listen(f->path);
	if (cordon_http_start_opts(f->d, f->lfd, tcp, o, &f->h, &diag) < 0)
		fail_msg("http start: %s", diag.message);
	return f;
}

static void stop(struct fx *f)
{
	cordon_http_free(f->h);
	/* the caller's listening fd is still ours and still open */
	assert_int_equal(fcntl(f->lfd, F_GETFD), FD_CLOEXEC);
	close(f->lfd);
	test_daemon_free(f->d);
	bt_free(f->t);
	assert_int_equal(cordon_test_rm_rf(f->dir), 0);
	free(f->dir);
	free(f->path);
	free(f);
}

/* Runs curl with the given arguments (after `curl -sS`) while pumping the
 * loop; writes stdout to out and returns the HTTP status curl reports
 * (-w '%{http_code}' appended on its own last line), or -1. */
static int curl(struct fx *f, char *out, size_t size, const char *const *args)
{
	const char *argv[32] = { "curl", "-sS", "--max-time", "10", "-w", "\n%{http_code}" };
	int p[2], argc = 6, st;
	size_t n = 0;
	pid_t pid;
	char *last;

	for (; *args; args++)
		argv[argc++] = *args;
	argv[argc] = NULL;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		execv("/usr/bin/curl", (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	for (;;) {
		ssize_t k = read(p[0], out + n, size - 1 - n);

		if (k > 0) {
			n += (size_t)k;
			continue;
		}
		if (k == 0)
			break;
		assert_int_equal(errno, EAGAIN);
		assert_true(cordon_loop_run_once(f->d->loop, 10) >= 0);
	}
	close(p[0]);
	st = pump_until_exit(f->d->loop, pid);
	out[n] = 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	last = strrchr(out, '\n');
	if (!last)
		return -1;
	*last = 0;
	return atoi(last + 1);
}

#define UNIX(f) "--unix-socket", (f)->path

static void test_health(void **state)
{
	struct fx *f = start(NULL, NULL);
	char out[65536];

	(void)state;
	assert_int_equal(curl(f, out, sizeof(out), (const char *[]){ UNIX(f), "http://localhost/health", NULL }), 200);
	assert_string_equal(out, "{\"status\":\"ok\"}\n");
	f->d->health = "degraded";
	assert_int_equal(curl(f, out, sizeof(out), (const char *[]){ UNIX(f), "http://localhost/health", NULL }), 200);
	assert_string_equal(out, "{\"status\":\"degraded\"}\n");
	f->d->health = "failing";
	assert_int_equal(curl(f, out, sizeof(out), (const char *[]){ UNIX(f), "http://localhost/health", NULL }), 503);
	assert_string_equal(out, "{\"status\":\"failing\"}\n");
	/* HEAD: headers only */
	assert_int_equal(curl(f, out, sizeof(out), (const char *[]){ UNIX(f), "-I", "http://localhost/health", NULL }),
			 503);
	assert_non_null(strstr(out, "Content-Type: application/json"));
	assert_non_null(strstr(out, "Cache-Control: no-store"));
	assert_null(strstr(out, "{\"status\""));
	/* a query string does not change the resource */
	f->d->health = "ok";
	assert_int_equal(curl(f, out, sizeof(out), (const char *[]){ UNIX(f), "http://localhost/health?x=1", NULL }),
			 200);
	stop(f);
}

static void test_detail_and_metrics(void **state)
{
	struct fx *f = start(NULL, NULL);
	char out[65536];
	json_t *v;
	json_error_t e;

	(void)state;
	assert_int_equal(curl(f, out, sizeof(out), (const char *[]){ UNIX(f), "http://localhost/health/detail", NULL }),
			 200);
	v = json_loads(out, 0, &e);
	assert_non_null(v);
	assert_true(json_equal(json_object_get(v, "capabilities"), f->d->caps));
	assert_string_equal(json_string_value(json_object_get(v, "status")), "ok");
	assert_non_null(json_object_get(json_object_get(v, "audit"), "last_seq"));
	json_decref(v);

	assert_int_equal(curl(f, out, sizeof(out), (const char *[]){ UNIX(f), "-i", "http://localhost/metrics", NULL }),
			 200);
	assert_non_null(strstr(out, "Content-Type: text/plain; version=0.0.4; charset=utf-8"));
	assert_non_null(strstr(out, "\ncordon_tool_calls_total{decision=\"allow\"} 3\n"));
	assert_non_null(strstr(out, "# TYPE cordon_http_requests_total counter\n"));
	assert_non_null(strstr(out, "cordon_http_requests_total{endpoint=\"health_detail\"} 1\n"));
	assert_non_null(strstr(out, "cordon_http_requests_total{endpoint=\"metrics\"} 1\n"));
	stop(f);
}

static void test_errors(void **state)
{
	struct fx *f = start(NULL, NULL);
	char out[65536], big[32768];

	(void)state;
	assert_int_equal(curl(f, out, sizeof(out), (const char *[]){ UNIX(f), "http://localhost/", NULL }), 404);
	assert_int_equal(curl(f, out, sizeof(out), (const char *[]){ UNIX(f), "http://localhost/health/", NULL }), 404);
	assert_int_equal(curl(f, out, sizeof(out), (const char *[]){ UNIX(f), "http://localhost/../etc/passwd", NULL }),
			 404);
	assert_int_equal(curl(f, out, sizeof(out),
			      (const char *[]){ UNIX(f), "-i", "-X", "POST", "http://localhost/health", NULL }),
			 405);
	assert_non_null(strstr(out, "Allow: GET, HEAD"));
	assert_int_equal(curl(f, out, sizeof(out),
			      (const char *[]){ UNIX(f), "-X", "DELETE", "http://localhost/metrics", NULL }),
			 405);
	/* a body is refused */
	assert_int_equal(
		curl(f, out, sizeof(out),
		     (const char *[]){ UNIX(f), "-X", "GET", "--data", "x=1", "http://localhost/health", NULL }),
		413);
	/* headers beyond the per-connection memory limit (16 KiB) */
	snprintf(big, sizeof(big), "X-Big: %0*d", 20000, 0);
	assert_int_equal(
		curl(f, out, sizeof(out), (const char *[]){ UNIX(f), "-H", big, "http://localhost/health", NULL }),
		431);
	/* and the server is fine afterwards */
	assert_int_equal(curl(f, out, sizeof(out), (const char *[]){ UNIX(f), "http://localhost/health", NULL }), 200);
	stop(f);
}

static void test_tcp(void **state)
{
	struct fx *f = start("127.0.0.1:0", NULL);
	char out[65536], url[128];
	int port = cordon_http_tcp_port(f->h);

	(void)state;
	assert_true(port > 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/health", port);
	assert_int_equal(curl(f, out, sizeof(out), (const char *[]){ url, NULL }), 200);
	assert_string_equal(out, "{\"status\":\"ok\"}\n");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", port);
	assert_int_equal(curl(f, out, sizeof(out), (const char *[]){ url, NULL }), 200);
	/* the detail is for the Unix socket only: not even its existence shows */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/health/detail", port);
	assert_int_equal(curl(f, out, sizeof(out), (const char *[]){ url, NULL }), 404);
	stop(f);
}

static void test_listen_addresses(void **state)
{
	struct sockaddr_storage ss;
	unsigned len;
	struct cordon_diag d = {};

	(void)state;
	assert_int_equal(cordon_http_parse_listen("127.0.0.1:9100", &ss, &len, &d), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9100);
	assert_int_equal(cordon_http_parse_listen("127.0.0.2:0", &ss, &len, &d), 0);
	assert_int_equal(cordon_http_parse_listen("[::1]:80", &ss, &len, &d), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(cordon_http_parse_listen("0.0.0.0:9100", &ss, &len, &d), -EADDRNOTAVAIL);
	assert_non_null(strstr(d.message, "not loopback"));
	assert_int_equal(cordon_http_parse_listen("10.1.2.3:9100", &ss, &len, &d), -EADDRNOTAVAIL);
	assert_int_equal(cordon_http_parse_listen("[::]:9100", &ss, &len, &d), -EADDRNOTAVAIL);
	assert_int_equal(cordon_http_parse_listen("localhost:9100", &ss, &len, &d), -EINVAL);
	assert_int_equal(cordon_http_parse_listen("127.0.0.1:99999", &ss, &len, &d), -EINVAL);
	assert_int_equal(cordon_http_parse_listen("127.0.0.1:", &ss, &len, &d), -EINVAL);
	assert_int_equal(cordon_http_parse_listen("127.0.0.1:080", &ss, &len, &d), -EINVAL);
	assert_int_equal(cordon_http_parse_listen("127.0.0.1:8a", &ss, &len, &d), -EINVAL);
	assert_int_equal(cordon_http_parse_listen("127.0.0.1", &ss, &len, &d), -EINVAL);
	assert_int_equal(cordon_http_parse_listen("::1:80", &ss, &len, &d), -EINVAL);
	assert_int_equal(cordon_http_parse_listen(NULL, &ss, &len, &d), -EINVAL);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Child: a slowloris. Sends a request line, then one header byte every
 * 100 ms (well within MHD's 5 s idle timeout). Exits 0 when the server cut
 * it off within 3 s, 1 if it was still connected. */
static void slow_client(const char *path)
{
	int fd = sock_connect(path);
	uint64_t t0 = mono_ms();
	const char *req = "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ";

	signal(SIGPIPE, SIG_IGN);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(write(fd, req, strlen(req)) == (ssize_t)strlen(req));
	while (mono_ms() - t0 < 3000) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char c;

		if (send(fd, "a", 1, MSG_NOSIGNAL) != 1)
			_exit(0);
		if (poll(&p, 1, 100) == 1 && read(fd, &c, 1) <= 0)
			_exit(0);
	}
	_exit(1);
}

static void test_slow_client_cut_off(void **state)
{
	struct cordon_http_options o = { .idle_timeout_sec = 5, .request_timeout_ms = 500 };
	struct fx *f = start(NULL, &o);
	char out[65536];
	pid_t pid;
	int st;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		slow_client(f->path);
	st = pump_until_exit(f->d->loop, pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(curl(f, out, sizeof(out), (const char *[]){ UNIX(f), "http://localhost/metrics", NULL }), 200);
	assert_non_null(strstr(out, "\ncordon_http_deadline_closes_total 1\n"));
	stop(f);
}

static void test_idle_connection_closed(void **state)
{
	struct cordon_http_options o = { .idle_timeout_sec = 1, .request_timeout_ms = 60000 };
	struct fx *f = start(NULL, &o);
	int fd = sock_connect(f->path);
	char c;

	(void)state;
	assert_true(fd >= 0);
	/* connected, silent: MHD's idle timeout (1 s) closes it */
	pump_for(f->d->loop, 2500);
	assert_int_equal(recv(fd, &c, 1, MSG_DONTWAIT), 0);
	close(fd);
	stop(f);
}

static void test_connection_limit(void **state)
{
	struct cordon_http_options o = { .max_connections = 2 };
	struct fx *f = start(NULL, &o);
	int a = sock_connect(f->path), b = sock_connect(f->path), c;
	const char *req = "GET /health HTTP/1.0\r\n\r\n";
	char buf[4096];
	ssize_t n;

	(void)state;
	assert_true(a >= 0 && b >= 0);
	pump_for(f->d->loop, 100);
	/* At the limit MHD stops accepting: a third client waits in the
	 * kernel's listen backlog and is not served... */
	c = sock_connect(f->path);
	assert_true(c >= 0);
	assert_int_equal(write(c, req, strlen(req)), (ssize_t)strlen(req));
	pump_for(f->d->loop, 300);
	assert_int_equal(recv(c, buf, sizeof(buf), MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	/* ...until a slot frees. */
	close(a);
	pump_for(f->d->loop, 300);
	n = recv(c, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	assert_true(n > 0);
	buf[n] = 0;
	assert_non_null(strstr(buf, "HTTP/1.0 200") ?: strstr(buf, "HTTP/1.1 200"));
	close(b);
	close(c);
	stop(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_health),
		cmocka_unit_test(test_detail_and_metrics),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_tcp),
		cmocka_unit_test(test_listen_addresses),
		cmocka_unit_test(test_slow_client_cut_off),
		cmocka_unit_test(test_idle_connection_closed),
		cmocka_unit_test(test_connection_limit),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
