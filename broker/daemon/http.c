/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /health, /health/detail and /metrics on libmicrohttpd, driven by
 * cordond's event loop (see http.h for why). */

#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"
#include "loop.h"

struct hconn {
	struct hconn *prev, *next;
	int fd;
	uint64_t deadline; /* loop ms; UINT64_MAX while a request is being answered */
};

struct listener {
	struct cordon_http *h;
	struct MHD_Daemon *mhd;
	struct cordon_watch *watch;
	bool detail; /* /health/detail allowed (Unix socket only) */
	bool tcp;
	struct hconn *conns;
};

enum endpoint { EP_HEALTH, EP_DETAIL, EP_METRICS, EP_OTHER, _EP_MAX };

struct cordon_http {
	struct cordon_daemon *d;
	struct cordon_loop *loop;
	struct cordon_http_options o;
	struct listener lis[2];
	unsigned n_lis;
	int tcp_fd;
	int tcp_port;
	struct cordon_timer *timer;
	bool rerun; /* a connection closed: run MHD once more (see schedule()) */
	uint64_t requests[_EP_MAX];
	uint64_t deadline_kills;
};

static void schedule(struct cordon_http *h);

static void kill_overdue(struct listener *l, uint64_t now)
{
	for (struct hconn *c = l->conns; c; c = c->next)
		if (c->deadline <= now && c->fd >= 0) {
			/* MHD has no call to drop one connection; shutting the
			 * socket down makes its next read fail and MHD cleans up
			 * (and calls our close notification). */
			(void)shutdown(c->fd, SHUT_RDWR);
			c->deadline = UINT64_MAX;
			l->h->deadline_kills++;
		}
}

static void run_all(struct cordon_http *h)
{
	uint64_t now = cordon_loop_now_ms();

	for (unsigned i = 0; i < h->n_lis; i++) {
		kill_overdue(&h->lis[i], now);
		(void)MHD_run(h->lis[i].mhd);
	}
	schedule(h);
}

static void timer_fired(struct cordon_loop *loop, void *userdata)
{
	struct cordon_http *h = userdata;

	(void)loop;
	h->timer = NULL; /* fired: the loop frees it */
	run_all(h);
}

static void schedule(struct cordon_http *h)
{
	uint64_t best = UINT64_MAX, now = cordon_loop_now_ms();

	for (unsigned i = 0; i < h->n_lis; i++) {
		MHD_UNSIGNED_LONG_LONG t;

		if (MHD_get_timeout(h->lis[i].mhd, &t) == MHD_YES && t < best)
			best = t;
		for (struct hconn *c = h->lis[i].conns; c; c = c->next)
			if (c->deadline != UINT64_MAX) {
				uint64_t left = c->deadline > now ? c->deadline - now : 0;

				if (left < best)
					best = left;
			}
	}
	/* At the connection limit MHD takes its listen socket out of its epoll
	 * set, and puts it back only at the start of a later MHD_run(). When a
	 * connection closed, run again right away so a client waiting in the
	 * backlog is accepted now, not at the next timeout. */
	if (h->rerun) {
		h->rerun = false;
		best = 0;
	}
	cordon_loop_timer_cancel(h->timer);
	h->timer = NULL;
	if (best != UINT64_MAX)
		(void)cordon_loop_timer(h->loop, best, timer_fired, h, &h->timer);
}

static void mhd_event(struct cordon_loop *loop, int fd, uint32_t revents, void *userdata)
{
	struct cordon_http *h = userdata;

	(void)loop;
	(void)fd;
	(void)revents;
	run_all(h);
}

static void notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
			      enum MHD_ConnectionNotificationCode toe)
{
	struct listener *l = cls;
	struct hconn *c = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);

		c = calloc(1, sizeof(*c));
		if (!c)
			return; /* untracked: still bounded by MHD's idle timeout */
		c->fd = ci ? ci->connect_fd : -1;
		c->deadline = cordon_loop_now_ms() + l->h->o.request_timeout_ms;
		c->next = l->conns;
		if (l->conns)
			l->conns->prev = c;
		l->conns = c;
		*socket_context = c;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && c) {
		l->h->rerun = true;
		if (c->prev)
			c->prev->next = c->next;
		else
			l->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		free(c);
		*socket_context = NULL;
	}
}

static struct hconn *conn_of(struct MHD_Connection *connection)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static void request_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
			      enum MHD_RequestTerminationCode toe)
{
	struct listener *l = cls;
	struct hconn *c = conn_of(connection);

	(void)toe;
	*con_cls = NULL;
	/* The next request on this keep-alive connection gets a fresh deadline. */
	if (c)
		c->deadline = cordon_loop_now_ms() + l->h->o.request_timeout_ms;
}

static enum MHD_Result respond(struct MHD_Connection *connection, unsigned status, const char *type, char *body,
			       size_t len)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result r;

	if (!resp) {
		free(body);
		return MHD_NO;
	}
	(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	(void)MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	r = MHD_queue_response(connection, status, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result respond_json(struct MHD_Connection *connection, unsigned status, json_t *v)
{
	char *s;

	if (!v)
		return MHD_NO;
	s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(v);
	if (!s)
		return MHD_NO;
	{
		size_t n = strlen(s);
		char *t = realloc(s, n + 2);

		if (!t) {
			free(s);
			return MHD_NO;
		}
		t[n] = '\n';
		t[n + 1] = 0;
		return respond(connection, status, "application/json", t, n + 1);
	}
}

static enum MHD_Result respond_text(struct MHD_Connection *connection, unsigned status, const char *text)
{
	char *s = strdup(text);

	if (!s)
		return MHD_NO;
	return respond(connection, status, "text/plain; charset=utf-8", s, strlen(s));
}

static enum MHD_Result metrics(struct listener *l, struct MHD_Connection *connection)
{
	struct cordon_http *h = l->h;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	static const char *const names[] = { "health", "health_detail", "metrics", "other" };

	if (!f)
		return MHD_NO;
	if (cordon_daemon_write_metrics(h->d, f) < 0) {
		fclose(f);
		free(buf);
		return respond_text(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, "metrics unavailable\n");
	}
	fprintf(f, "# HELP cordon_http_requests_total HTTP requests by endpoint.\n"
		   "# TYPE cordon_http_requests_total counter\n");
	for (unsigned i = 0; i < _EP_MAX; i++)
		fprintf(f, "cordon_http_requests_total{endpoint=\"%s\"} %llu\n", names[i],
			(unsigned long long)h->requests[i]);
	fprintf(f,
		"# HELP cordon_http_deadline_closes_total HTTP connections closed for missing the request deadline.\n"
		"# TYPE cordon_http_deadline_closes_total counter\n"
		"cordon_http_deadline_closes_total %llu\n",
		(unsigned long long)h->deadline_kills);
	if (fclose(f) != 0) {
		free(buf);
		return MHD_NO;
	}
	return respond(connection, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", buf, len);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
			       const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	static int marker;
	struct listener *l = cls;
	struct cordon_http *h = l->h;
	struct hconn *c;
	const char *cl;
	enum endpoint ep;

	(void)version;
	(void)upload_data;
	if (*con_cls && *upload_data_size) {
		/* A body we did not accept (the response is already queued):
		 * discard it; MHD closes the connection after the response. */
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*con_cls)
		return MHD_YES;
	*con_cls = &marker;
	c = conn_of(connection);
	if (c)
		c->deadline = UINT64_MAX; /* headers are in: answered right now */

	if (strcmp(url, "/health") == 0)
		ep = EP_HEALTH;
	else if (strcmp(url, "/health/detail") == 0 && l->detail)
		ep = EP_DETAIL;
	else if (strcmp(url, "/metrics") == 0)
		ep = EP_METRICS;
	else
		ep = EP_OTHER;
	h->requests[ep]++;

	if (ep == EP_OTHER)
		return respond_text(connection, MHD_HTTP_NOT_FOUND, "not found\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return respond_text(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	/* These endpoints take no body. Refuse one up front rather than read it. */
	cl = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if ((cl && strcmp(cl, "0") != 0) ||
	    MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
		return respond_text(connection, MHD_HTTP_CONTENT_TOO_LARGE, "request body not accepted\n");

	switch (ep) {
	case EP_HEALTH: {
		const char *s = cordon_daemon_health(h->d);
		json_t *v, *bad = cordon_daemon_profile_errors(h->d), *caps = cordon_daemon_capabilities(h->d);
		json_t *kernel = json_object_get(caps, "verdict");

		if (!s)
			s = "failing";
		v = json_pack("{s:s}", "status", s);
		/* A profile that did not load is named here, not only in a log
		 * line at start-up. */
		if (v && json_array_size(bad) > 0)
			json_object_set(v, "profiles_failed", bad);
		/* So is a control the kernel lacks (the probe's verdict). */
		if (v && json_is_object(kernel) &&
		    strcmp(json_string_value(json_object_get(kernel, "status")) ?: "", "ok") != 0)
			json_object_set(v, "kernel", kernel);
		json_decref(bad);
		json_decref(caps);
		return respond_json(connection, strcmp(s, "failing") == 0 ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK,
				    v);
	}
	case EP_DETAIL: {
		json_t *v = cordon_daemon_health_detail(h->d);

		if (!v)
			return respond_text(connection, MHD_HTTP_SERVICE_UNAVAILABLE, "health detail unavailable\n");
		return respond_json(connection, MHD_HTTP_OK, v);
	}
	case EP_METRICS:
		return metrics(l, connection);
	default:
		return respond_text(connection, MHD_HTTP_NOT_FOUND, "not found\n");
	}
}

static int parse_listen(const char *s, bool routable, struct sockaddr_storage *ret, unsigned *ret_len,
			struct cordon_diag *diag)
{
	char host[64];
	const char *colon, *p;
	unsigned long port = 0;
	size_t hl;

	if (!s)
		return cordon_diag_set(diag, EINVAL, "http", "no listen address");
	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':')
			return cordon_diag_set(diag, EINVAL, "http", "listen address \"%s\": expected [::1]:PORT", s);
		hl = (size_t)(end - s - 1);
		if (hl >= sizeof(host))
			return cordon_diag_set(diag, EINVAL, "http", "listen address \"%s\": host too long", s);
		memcpy(host, s + 1, hl);
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return cordon_diag_set(diag, EINVAL, "http", "listen address \"%s\": expected HOST:PORT", s);
		hl = (size_t)(colon - s);
		if (hl >= sizeof(host))
			return cordon_diag_set(diag, EINVAL, "http", "listen address \"%s\": host too long", s);
		memcpy(host, s, hl);
	}
	host[hl] = 0;
	p = colon + 1;
	if (!*p || strlen(p) > 5)
		return cordon_diag_set(diag, EINVAL, "http", "listen address \"%s\": invalid port", s);
	for (const char *q = p; *q; q++) {
		if (*q < '0' || *q > '9')
			return cordon_diag_set(diag, EINVAL, "http", "listen address \"%s\": invalid port", s);
		port = port * 10 + (unsigned long)(*q - '0');
	}
	if (port > 65535 || (p[0] == '0' && p[1]))
		return cordon_diag_set(diag, EINVAL, "http", "listen address \"%s\": invalid port", s);

	memset(ret, 0, sizeof(*ret));
	{
		struct sockaddr_in *in4 = (struct sockaddr_in *)ret;
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ret;

		if (s[0] != '[' && inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
			if (!routable && (ntohl(in4->sin_addr.s_addr) >> 24) != 127)
				return cordon_diag_set(diag, EADDRNOTAVAIL, "http",
						       "listen address \"%s\" is not loopback (127.0.0.0/8 or [::1])",
						       s);
			in4->sin_family = AF_INET;
			in4->sin_port = htons((uint16_t)port);
			*ret_len = sizeof(*in4);
			return 0;
		}
		if (s[0] == '[' && inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
			if (!routable && !IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
				return cordon_diag_set(diag, EADDRNOTAVAIL, "http",
						       "listen address \"%s\" is not loopback (127.0.0.0/8 or [::1])",
						       s);
			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons((uint16_t)port);
			*ret_len = sizeof(*in6);
			return 0;
		}
	}
	return cordon_diag_set(diag, EINVAL, "http", "listen address \"%s\": host must be an IP literal", s);
}

int cordon_http_parse_listen(const char *s, struct sockaddr_storage *ret, unsigned *ret_len, struct cordon_diag *diag)
{
	return parse_listen(s, false, ret, ret_len, diag);
}

int cordon_http_parse_listen_any(const char *s, struct sockaddr_storage *ret, unsigned *ret_len,
				 struct cordon_diag *diag)
{
	return parse_listen(s, true, ret, ret_len, diag);
}

static int listener_start(struct cordon_http *h, int fd, bool detail, bool tcp, struct cordon_diag *diag)
{
	struct listener *l = &h->lis[h->n_lis];
	const union MHD_DaemonInfo *info;
	int r;

	*l = (struct listener){ .h = h, .detail = detail, .tcp = tcp };
	/* MHD_USE_EPOLL without an internal thread: external event loop; we
	 * watch MHD's epoll fd. No MHD_USE_ERROR_LOG: libraries never log. */
	l->mhd = MHD_start_daemon(
		MHD_USE_EPOLL, 0, NULL, NULL, handler, l, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned)h->o.max_connections, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)h->o.idle_timeout_sec,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, h->o.memory_limit, MHD_OPTION_NOTIFY_CONNECTION, notify_connection,
		l, MHD_OPTION_NOTIFY_COMPLETED, request_completed, l, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		tcp ? (unsigned)(h->o.max_connections / 2 ? h->o.max_connections / 2 : 1) : 0u, MHD_OPTION_END);
	if (!l->mhd)
		return cordon_diag_set(diag, EINVAL, "http", "libmicrohttpd refused to start on %s",
				       tcp ? "the TCP socket" : "the Unix socket");
	info = MHD_get_daemon_info(l->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info) {
		MHD_stop_daemon(l->mhd);
		return cordon_diag_set(diag, EINVAL, "http", "libmicrohttpd has no epoll fd");
	}
	r = cordon_loop_watch(h->loop, info->epoll_fd, EPOLLIN, mhd_event, h, &l->watch);
	if (r < 0) {
		MHD_stop_daemon(l->mhd);
		return cordon_diag_set(diag, -r, "http", "watching the HTTP socket: %s", strerror(-r));
	}
	h->n_lis++;
	return 0;
}

static int tcp_socket(const char *listen_addr, int *ret_fd, int *ret_port, struct cordon_diag *diag)
{
	struct sockaddr_storage ss;
	unsigned len;
	_cleanup_close_ int fd = -EBADF;
	int one = 1, r;

	r = cordon_http_parse_listen(listen_addr, &ss, &len, diag);
	if (r < 0)
		return r;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return cordon_diag_set(diag, errno, "http", "socket: %s", strerror(errno));
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0)
		return cordon_diag_set(diag, errno, "http", "bind %s: %s", listen_addr, strerror(errno));
	if (listen(fd, 64) < 0)
		return cordon_diag_set(diag, errno, "http", "listen %s: %s", listen_addr, strerror(errno));
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, (socklen_t *)&len) < 0)
		return cordon_diag_set(diag, errno, "http", "getsockname: %s", strerror(errno));
	*ret_port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						  : ((struct sockaddr_in6 *)&ss)->sin6_port);
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int cordon_http_start_opts(struct cordon_daemon *d, int unix_listen_fd, const char *tcp_listen,
			   const struct cordon_http_options *o, struct cordon_http **ret, struct cordon_diag *diag)
{
	struct cordon_http *h;
	int r;

	if (!d || !ret || (unix_listen_fd < 0 && !tcp_listen))
		return cordon_diag_set(diag, EINVAL, "http", "nothing to listen on");
	h = calloc(1, sizeof(*h));
	if (!h)
		return cordon_diag_set(diag, ENOMEM, "http", "out of memory");
	h->d = d;
	h->loop = cordon_daemon_loop(d);
	h->tcp_fd = -EBADF;
	h->tcp_port = -ENOENT;
	if (o)
		h->o = *o;
	if (!h->o.max_connections)
		h->o.max_connections = 32;
	if (!h->o.idle_timeout_sec)
		h->o.idle_timeout_sec = 10;
	if (!h->o.request_timeout_ms)
		h->o.request_timeout_ms = 10000;
	if (!h->o.memory_limit)
		h->o.memory_limit = 16 * 1024;

	if (unix_listen_fd >= 0) {
		r = listener_start(h, unix_listen_fd, true, false, diag);
		if (r < 0)
			goto fail;
	}
	if (tcp_listen) {
		r = tcp_socket(tcp_listen, &h->tcp_fd, &h->tcp_port, diag);
		if (r < 0)
			goto fail;
		r = listener_start(h, h->tcp_fd, false, true, diag);
		if (r < 0)
			goto fail;
	}
	schedule(h);
	*ret = h;
	return 0;
fail:
	cordon_http_free(h);
	return r;
}

int cordon_http_start(struct cordon_daemon *d, int unix_listen_fd, const char *tcp_listen, struct cordon_http **ret,
		      struct cordon_diag *diag)
{
	return cordon_http_start_opts(d, unix_listen_fd, tcp_listen, NULL, ret, diag);
}

int cordon_http_tcp_port(const struct cordon_http *h)
{
	return h ? h->tcp_port : -ENOENT;
}

void cordon_http_free(struct cordon_http *h)
{
	if (!h)
		return;
	cordon_loop_timer_cancel(h->timer);
	for (unsigned i = 0; i < h->n_lis; i++) {
		cordon_loop_unwatch(h->lis[i].watch);
		/* MHD_stop_daemon closes the listen socket it was given unless
		 * told to quiesce first: take it back so the caller's fd stays
		 * the caller's. */
		if (MHD_quiesce_daemon(h->lis[i].mhd) == MHD_INVALID_SOCKET && h->lis[i].tcp)
			h->tcp_fd = -EBADF; /* MHD will close it */
		MHD_stop_daemon(h->lis[i].mhd);
	}
	closep(&h->tcp_fd);
	free(h);
}
