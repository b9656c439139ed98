/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Approval notifications (issue 14) on the real cordond (its own privilege
 * drop, Landlock domain and seccomp filter), the real launcher helper and
 * the fake connector:
 *  - `cordonctl --json approvals watch` prints `requested` for a real held
 *    call, then `approved` after `approvals approve`, and never the call's
 *    argument value;
 *  - the approval webhook POSTs each event to a loopback receiver (a forked
 *    child of this test): the body carries no argument value, and
 *    X-Cordon-Signature verifies (HMAC-SHA-256 over timestamp "." body with
 *    the secret file's key, computed here with libsodium);
 *  - a receiver answering 500 gets exactly CORDON_WEBHOOK_ATTEMPTS
 *    attempts, the failure is counted in cordon_webhook_deliveries_total
 *    {result="failed"}, and the next event is delivered after it (deliveries
 *    are in order, so no later attempt of the failed body can follow). */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "cordond-runner.h"
#include "daemon-harness.h"
#include "test-support.h"
#include "webhook.h"

#define SECRET "test-webhook-secret-0123456789abcdef"

static struct rcd C;
static char config[700], secret_path[700], recv_dir[700], mode_path[800];
static pid_t receiver_pid = -1;
static uint16_t receiver_port;

/* ---- the receiver: a forked child on 127.0.0.1 ---------------------------- */

/* Reads one request (headers and Content-Length body) into buf; returns its
 * length or -1. */
static ssize_t read_request(int c, char *buf, size_t size)
{
	size_t len = 0;

	for (;;) {
		ssize_t k = read(c, buf + len, size - 1 - len);
		char *end;

		if (k <= 0)
			return -1;
		len += (size_t)k;
		buf[len] = 0;
		end = strstr(buf, "\r\n\r\n");
		if (end) {
			const char *cl = strcasestr(buf, "\r\nContent-Length: ");
			size_t want = cl ? strtoul(cl + 18, NULL, 10) : 0;

			if (len >= (size_t)(end + 4 - buf) + want)
				return (ssize_t)len;
		}
		if (len == size - 1)
			return -1;
	}
}

/* Records each request as recv_dir/req-N (written before the answer) and
 * answers with the status in mode_path (200 when absent). */
static _Noreturn void receiver_run(int lfd)
{
	static char buf[65536];

	for (unsigned n = 0;; n++) {
		char path[900], tmp[920], mode[8] = "200";
		int c = accept(lfd, NULL, NULL), m;
		ssize_t len;
		FILE *f;

		if (c < 0)
			_exit(errno == EINTR ? 0 : 1);
		len = read_request(c, buf, sizeof(buf));
		if (len < 0) {
			close(c);
			continue;
		}
		m = open(mode_path, O_RDONLY | O_CLOEXEC);
		if (m >= 0) {
			ssize_t k = read(m, mode, sizeof(mode) - 1);

			mode[k > 0 ? k : 0] = 0;
			close(m);
		}
		snprintf(tmp, sizeof(tmp), "%s/.tmp", recv_dir);
		snprintf(path, sizeof(path), "%s/req-%03u", recv_dir, n);
		f = fopen(tmp, "we");
		if (!f || fwrite(buf, 1, (size_t)len, f) != (size_t)len || fclose(f) != 0 || rename(tmp, path) != 0)
			_exit(1);
		dprintf(c, "HTTP/1.1 %.3s Test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", mode);
		close(c);
	}
}

static void receiver_start(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 16), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
	receiver_port = ntohs(sa.sin_port);
	receiver_pid = fork();
	assert_true(receiver_pid >= 0);
	if (receiver_pid == 0)
		receiver_run(lfd);
	close(lfd);
}

static void receiver_mode(const char *status)
{
	rcd_write(mode_path, status);
}

/* Requests recorded so far, in order: a new array of strings. */
static json_t *received(void)
{
	json_t *arr = json_array();
	struct dirent **ents = NULL;
	int n = scandir(recv_dir, &ents, NULL, alphasort);

	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		char path[1100];
		int fd;

		if (strncmp(ents[i]->d_name, "req-", 4) == 0) {
			snprintf(path, sizeof(path), "%s/%s", recv_dir, ents[i]->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			assert_true(fd >= 0);
			json_array_append_new(arr, json_string(rcd_slurp(fd)));
			close(fd);
		}
		free(ents[i]);
	}
	free(ents);
	return arr;
}

/* Waits (up to 30 s) until at least n requests were recorded. */
static json_t *received_at_least(size_t n)
{
	for (int i = 0; i < 300; i++) {
		json_t *r = received();

		if (json_array_size(r) >= n)
			return r;
		json_decref(r);
		usleep(100 * 1000);
	}
	fail_msg("the webhook receiver got fewer than %zu requests", n);
	return NULL;
}

/* The value of header name in request req ("" when absent; static). */
static const char *header(const char *req, const char *name)
{
	static char v[200];
	char pat[80];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "\r\n%s: ", name);
	p = strcasestr(req, pat);
	if (!p)
		return "";
	p += strlen(pat);
	e = strstr(p, "\r\n");
	snprintf(v, sizeof(v), "%.*s", (int)(e - p), p);
	return v;
}

/* Checks request req's signature with the secret and returns its body,
 * parsed (a new reference). */
static json_t *verified_body(const char *req)
{
	const char *body = strstr(req, "\r\n\r\n") + 4;
	char ts[40], sig[200], want[80];
	uint8_t mac[crypto_auth_hmacsha256_BYTES];
	crypto_auth_hmacsha256_state st;
	json_t *v;

	assert_int_equal(strncmp(req, "POST /hook HTTP/1.1\r\n", 21), 0);
	snprintf(ts, sizeof(ts), "%s", header(req, "X-Cordon-Timestamp"));
	snprintf(sig, sizeof(sig), "%s", header(req, "X-Cordon-Signature"));
	assert_true(ts[0]);
	crypto_auth_hmacsha256_init(&st, (const uint8_t *)SECRET, strlen(SECRET));
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)ts, strlen(ts));
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)".", 1);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)body, strlen(body));
	crypto_auth_hmacsha256_final(&st, mac);
	memcpy(want, "sha256=", 7);
	sodium_bin2hex(want + 7, sizeof(want) - 7, mac, sizeof(mac));
	assert_string_equal(sig, want);
	assert_string_equal(header(req, "Content-Type"), "application/json");
	v = json_loads(body, 0, NULL);
	assert_non_null(v);
	return v;
}

/* ---- set-up ----------------------------------------------------------------- */

static int setup(void **state)
{
	char text[2000];
	int fd;

	(void)state;
	snprintf(recv_dir, sizeof(recv_dir), "%s/received", C.dir);
	snprintf(mode_path, sizeof(mode_path), "%s/mode", C.dir);
	assert_int_equal(mkdir(recv_dir, 0700), 0);
	receiver_start();
	/* The secret: root's file, 0600, read before cordond drops. */
	snprintf(secret_path, sizeof(secret_path), "%s/webhook.secret", C.dir);
	fd = open(secret_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, SECRET "\n", strlen(SECRET) + 1), (ssize_t)strlen(SECRET) + 1);
	close(fd);
	rcd_fake_profile(&C, "fake", NULL);
	snprintf(config, sizeof(config), "%s/cordond.yaml", C.dir);
	snprintf(text, sizeof(text),
		 "approval_wait: 60s\n"
		 "approval_webhook_url: http://127.0.0.1:%u/hook\n"
		 "approval_webhook_secret_file: %s\n",
		 (unsigned)receiver_port, secret_path);
	rcd_write(config, text);
	C.config = config;
	rcd_start(&C);
	rcd_install(&C, "fake");
	return 0;
}

/* ---- approvals watch ------------------------------------------------------ */

struct watcher {
	pid_t pid;
	int out;
	char buf[65536];
	size_t len;
	char all[262144]; /* everything it printed */
	size_t all_len;
};

/* `cordonctl [--json] approvals watch [--after-seq AFTER]` (NULL: none). */
static void watch_start_as(struct watcher *w, const char *after, bool json)
{
	const char *argv[12];
	int p[2], n = 0;

	argv[n++] = "cordonctl";
	argv[n++] = "--socket";
	argv[n++] = C.opsock;
	if (json)
		argv[n++] = "--json";
	argv[n++] = "approvals";
	argv[n++] = "watch";
	if (after) {
		argv[n++] = "--after-seq";
		argv[n++] = after;
	}
	argv[n] = NULL;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	w->pid = fork();
	assert_true(w->pid >= 0);
	if (w->pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		execv(C.cordonctl, (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	w->out = p[0];
	w->len = w->all_len = 0;
}

static void watch_start(struct watcher *w, const char *after)
{
	watch_start_as(w, after, true);
}

/* The next raw line the watcher prints (within 30 s; static). */
static const char *watch_raw_line(struct watcher *w)
{
	static char line[4096];

	for (;;) {
		char *nl = memchr(w->buf, '\n', w->len);
		struct pollfd pfd = { .fd = w->out, .events = POLLIN };
		ssize_t k;

		if (nl) {
			snprintf(line, sizeof(line), "%.*s", (int)(nl - w->buf), w->buf);
			w->len -= (size_t)(nl + 1 - w->buf);
			memmove(w->buf, nl + 1, w->len);
			return line;
		}
		assert_int_equal(poll(&pfd, 1, 30000), 1);
		k = read(w->out, w->buf + w->len, sizeof(w->buf) - w->len);
		assert_true(k > 0);
		assert_true(w->all_len + (size_t)k < sizeof(w->all));
		memcpy(w->all + w->all_len, w->buf + w->len, (size_t)k);
		w->all_len += (size_t)k;
		w->all[w->all_len] = 0;
		w->len += (size_t)k;
	}
}

/* The next line the watcher prints (within 30 s), parsed. */
static json_t *watch_line(struct watcher *w)
{
	for (;;) {
		char *nl = memchr(w->buf, '\n', w->len);
		struct pollfd pfd = { .fd = w->out, .events = POLLIN };
		ssize_t k;

		if (nl) {
			json_t *v;

			*nl = 0;
			v = json_loads(w->buf, 0, NULL);
			if (!v)
				fail_msg("approvals watch printed a line that is not JSON: %s", w->buf);
			w->len -= (size_t)(nl + 1 - w->buf);
			memmove(w->buf, nl + 1, w->len);
			return v;
		}
		assert_int_equal(poll(&pfd, 1, 30000), 1);
		k = read(w->out, w->buf + w->len, sizeof(w->buf) - w->len);
		assert_true(k > 0);
		assert_true(w->all_len + (size_t)k < sizeof(w->all));
		memcpy(w->all + w->all_len, w->buf + w->len, (size_t)k);
		w->all_len += (size_t)k;
		w->all[w->all_len] = 0;
		w->len += (size_t)k;
	}
}

/* The next line whose event is `event` (skipping others). */
static json_t *watch_event(struct watcher *w, const char *event)
{
	for (;;) {
		json_t *v = watch_line(w);

		if (!strcmp(json_string_value(json_object_get(v, "event")), event))
			return v;
		json_decref(v);
	}
}

static void watch_stop(struct watcher *w)
{
	int st;

	kill(w->pid, SIGTERM);
	assert_int_equal(waitpid(w->pid, &st, 0), w->pid);
	close(w->out);
}

static void send_held_call(struct mcp_peer *p, int id, const char *text)
{
	char call[400];

	snprintf(call, sizeof(call),
		 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"fake__append\","
		 "\"arguments\":{\"text\":\"%s\"}}}\n",
		 id, text);
	assert_int_equal(mcp_peer_send_raw(p, call, strlen(call)), 0);
}

/* A held call shows as requested in `approvals watch --json` and as
 * approved once approved; the webhook got both events, signed, and no
 * output anywhere holds the argument value. */
static void test_watch_and_webhook_see_requested_then_approved(void **state)
{
	static const char value[] = "ARGVALUE-must-not-leak-7f3a";
	struct watcher *w = calloc(1, sizeof(*w));
	struct mcp_peer p;
	json_t *ev, *reqs, *r;
	char code[32], *err = NULL;
	size_t n_before;

	(void)state;
	assert_non_null(w);
	reqs = received();
	n_before = json_array_size(reqs);
	json_decref(reqs);
	watch_start(w, NULL);
	rcd_session(&C, &p);
	send_held_call(&p, 501, value);
	ev = watch_event(w, "requested");
	assert_string_equal(json_string_value(json_object_get(ev, "connector")), "fake");
	assert_string_equal(json_string_value(json_object_get(ev, "tool")), "append");
	assert_string_equal(json_string_value(json_object_get(ev, "tier")), "write");
	assert_true(json_is_string(json_object_get(ev, "expires_at")));
	assert_non_null(strchr(json_string_value(json_object_get(ev, "expires_at")), 'Z'));
	assert_int_equal(json_integer_value(json_object_get(ev, "session_uid")), 0);
	snprintf(code, sizeof(code), "%s", json_string_value(json_object_get(ev, "display_code")));
	assert_true(code[0]);
	json_decref(ev);

	assert_int_equal(rcd_ctl(&C, NULL, &err, "approvals", "approve", code, (char *)NULL), 0);
	free(err);
	ev = watch_event(w, "approved");
	assert_string_equal(json_string_value(json_object_get(ev, "display_code")), code);
	assert_int_equal(json_integer_value(json_object_get(ev, "decided_by_uid")), 0);
	json_decref(ev);
	/* The call ran with the approval: consumed. */
	ev = watch_event(w, "consumed");
	json_decref(ev);
	r = mcp_peer_wait(&p, 501, 20000);
	assert_non_null(r);
	json_decref(r);
	watch_stop(w);
	assert_null(strstr(w->all, value));

	/* Resuming from the audit log: --after-seq 0 replays the same
	 * approval's requested, approved and consumed, in that order. */
	watch_start(w, "0");
	for (const char *const *want = (const char *const[]){ "requested", "approved", "consumed", NULL }; *want;
	     want++) {
		for (;;) {
			ev = watch_line(w);
			if (!strcmp(json_string_value(json_object_get(ev, "display_code")) ?: "", code))
				break;
			json_decref(ev);
		}
		assert_string_equal(json_string_value(json_object_get(ev, "event")), *want);
		json_decref(ev);
	}
	watch_stop(w);
	assert_null(strstr(w->all, value));

	/* The human form: one line per event, code, connector/tool, tier,
	 * the session's uid, the expiry of a request, who approved. */
	watch_start_as(w, "0", false);
	for (const char *const *want = (const char *const[]){ " requested ", " approved  ", NULL }; *want; want++) {
		const char *line;

		do
			line = watch_raw_line(w);
		while (!strstr(line, code));
		fprintf(stderr, "approvals watch: %s\n", line);
		assert_non_null(strstr(line, *want));
		assert_non_null(strstr(line, "  fake/append  write  uid 0"));
		assert_non_null(strstr(line, **want == ' ' && want[0][1] == 'r' ? "  expires 20" : "  by uid 0"));
	}
	watch_stop(w);
	assert_null(strstr(w->all, value));

	/* The webhook: requested, then approved (consumed is not sent). */
	reqs = received_at_least(n_before + 2);
	for (size_t i = n_before; i < n_before + 2; i++) {
		const char *req = json_string_value(json_array_get(reqs, i));
		json_t *b = verified_body(req);

		assert_null(strstr(req, value));
		assert_string_equal(json_string_value(json_object_get(b, "event")),
				    i == n_before ? "requested" : "approved");
		assert_string_equal(header(req, "X-Cordon-Event"),
				    i == n_before ? "approval.requested" : "approval.approved");
		assert_string_equal(json_string_value(json_object_get(b, "display_code")), code);
		assert_string_equal(json_string_value(json_object_get(b, "connector")), "fake");
		assert_true(json_is_string(json_object_get(b, "console_hint")));
		json_decref(b);
	}
	json_decref(reqs);
	mcp_peer_disconnect(&p);
	free(w);
}

/* GET /metrics: the value of one sample. */
static double metric(const char *series)
{
	int status = 0;
	char *buf = rcd_http_get(&C, "/metrics", &status), *p;
	size_t n = strlen(series);
	double v = -1;

	assert_int_equal(status, 200);
	for (p = strstr(buf, "\r\n\r\n"); p; p = strchr(p + 1, '\n'))
		if (strncmp(p + 1, series, n) == 0 && p[1 + n] == ' ') {
			v = strtod(p + 1 + n + 1, NULL);
			break;
		}
	free(buf);
	if (v < 0)
		fail_msg("no sample %s", series);
	return v;
}

/* A receiver that answers 500: exactly CORDON_WEBHOOK_ATTEMPTS attempts of
 * the same body (same seq, each signed), then the failure is counted; the
 * next event (the deny, with the receiver healthy again) is delivered. */
static void test_webhook_retries_are_bounded(void **state)
{
	struct mcp_peer p;
	json_t *reqs, *b;
	size_t n_before, attempts = 0;
	double failed0 = metric("cordon_webhook_deliveries_total{result=\"failed\"}");
	double retries0 = metric("cordon_webhook_retries_total");
	json_int_t seq = -1;
	char code[32], *out = NULL;
	json_t *list;

	(void)state;
	reqs = received();
	n_before = json_array_size(reqs);
	json_decref(reqs);
	receiver_mode("500");
	rcd_session(&C, &p);
	send_held_call(&p, 502, "retry-me");
	for (int i = 0; i < 300 && metric("cordon_webhook_deliveries_total{result=\"failed\"}") == failed0; i++)
		usleep(100 * 1000);
	assert_true(metric("cordon_webhook_deliveries_total{result=\"failed\"}") == failed0 + 1);
	assert_true(metric("cordon_webhook_retries_total") == retries0 + CORDON_WEBHOOK_ATTEMPTS - 1);
	receiver_mode("200");

	/* Deny it: delivered after the failed body, so every attempt of that
	 * body is recorded by now. */
	list = rcd_ctl_json(&C, "approvals", "list");
	assert_int_equal(json_array_size(rcd_first_array(list)), 1);
	snprintf(code, sizeof(code), "%s",
		 json_string_value(json_object_get(json_array_get(rcd_first_array(list), 0), "display_code")));
	json_decref(list);
	assert_int_equal(rcd_ctl(&C, &out, NULL, "approvals", "deny", code, (char *)NULL), 0);
	free(out);
	for (int i = 0; i < 300; i++) {
		json_t *last;
		bool denied;

		reqs = received();
		last = json_array_size(reqs) > n_before
			       ? verified_body(json_string_value(json_array_get(reqs, json_array_size(reqs) - 1)))
			       : NULL;
		denied = last && !strcmp(json_string_value(json_object_get(last, "event")), "denied");
		json_decref(last);
		if (denied)
			break;
		json_decref(reqs);
		reqs = NULL;
		usleep(100 * 1000);
	}
	assert_non_null(reqs);
	for (size_t i = n_before; i < json_array_size(reqs); i++) {
		b = verified_body(json_string_value(json_array_get(reqs, i)));
		if (!strcmp(json_string_value(json_object_get(b, "event")), "requested")) {
			if (seq < 0)
				seq = json_integer_value(json_object_get(b, "seq"));
			assert_int_equal(json_integer_value(json_object_get(b, "seq")), seq);
			attempts++;
		}
		json_decref(b);
	}
	assert_int_equal(attempts, CORDON_WEBHOOK_ATTEMPTS);
	json_decref(reqs);
	mcp_peer_disconnect(&p);
}

/* Config errors name the problem: https, a non-loopback host, a URL
 * without a secret. */
static void test_webhook_config_refused(void **state)
{
	struct cordon_webhook_url u;
	char err[200];

	(void)state;
	assert_int_equal(cordon_webhook_url_parse("https://127.0.0.1/x", &u, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "https is not supported"));
	assert_int_equal(cordon_webhook_url_parse("http://10.0.0.1:80/x", &u, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not on the loopback"));
	assert_int_equal(cordon_webhook_url_parse("http://localhost/x", &u, err, sizeof(err)), -EINVAL);
	assert_int_equal(cordon_webhook_url_parse("http://127.0.0.1:99999/", &u, err, sizeof(err)), -EINVAL);
	assert_int_equal(cordon_webhook_url_parse("http://127.0.0.2:8080/a/b?c=d", &u, err, sizeof(err)), 0);
	assert_int_equal(u.port, 8080);
	assert_string_equal(u.path, "/a/b?c=d");
	assert_string_equal(u.host, "127.0.0.2:8080");
	assert_int_equal(cordon_webhook_url_parse("http://127.0.0.1", &u, err, sizeof(err)), 0);
	assert_int_equal(u.port, 80);
	assert_string_equal(u.path, "/");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_webhook_config_refused),
		cmocka_unit_test(test_watch_and_webhook_see_requested_then_approved),
		cmocka_unit_test(test_webhook_retries_are_bounded),
	};
	int r;

	if (geteuid() != 0)
		cordon_test_skip("needs root (cordond drops to its private id; the launcher builds sandboxes)");
	if (!cordon_test_env("CORDON_BUILD_DIR", NULL))
		cordon_test_skip("CORDON_BUILD_DIR not set");
	if (sodium_init() < 0)
		return 1;
	rcd_setup(&C, "cordond-webhook");
	r = cmocka_run_group_tests(tests, setup, NULL);
	if (C.pid > 0)
		rcd_kill(&C, SIGKILL);
	if (receiver_pid > 0) {
		kill(receiver_pid, SIGKILL);
		waitpid(receiver_pid, NULL, 0);
	}
	rcd_teardown(&C, r != 0);
	return r;
}
