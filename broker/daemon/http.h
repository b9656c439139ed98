/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* cordond's HTTP surface (libmicrohttpd) over the daemon.h contract
 * (started by daemon-core.c), with explicit limits for tests and
 * configuration.
 *
 *   GET /health          {"status":"ok|degraded|failing"} and nothing else
 *                        (200, or 503 when failing): safe to expose.
 *   GET /health/detail   the daemon's health detail (Unix socket only; 404
 *                        on TCP, so its existence is not even revealed).
 *   GET /metrics         Prometheus text exposition.
 *   anything else        404 (unknown path) or 405 (other method; Allow:
 *                        GET, HEAD). A request with a body gets 413.
 *
 * Integration: MHD runs in external-select mode with its epoll fd
 * registered in cordond's loop and a loop timer for MHD's timeouts. Every
 * handler therefore runs on the loop thread, like the rest of the daemon,
 * so the cordon_daemon_* functions need no locking (MHD's own thread plus a
 * mutex would put a second thread next to the daemon's state for no gain:
 * every response is computed in microseconds from memory).
 *
 * Slow clients: a per-connection idle timeout (MHD), a connection limit,
 * a per-connection memory limit that bounds the request line and headers,
 * and a request deadline: the headers of each request must arrive within
 * request_timeout_ms of the connection opening or of the previous response
 * (a client dripping one byte at a time below the idle timeout is cut off
 * at the deadline). */

#include <stddef.h>

#include "daemon.h"
#include "diag.h"

struct cordon_http;

/* Serves HTTP on an AF_UNIX listening socket (all endpoints) and optionally
 * on tcp_listen ("127.0.0.1:PORT": /health and /metrics only; never
 * /health/detail). */
int cordon_http_start(struct cordon_daemon *d, int unix_listen_fd, const char *tcp_listen, struct cordon_http **ret,
		      struct cordon_diag *diag);
void cordon_http_free(struct cordon_http *h);

struct cordon_http_options {
	unsigned max_connections;    /* per listener; 0: 32 */
	unsigned idle_timeout_sec;   /* MHD connection timeout; 0: 10 */
	unsigned request_timeout_ms; /* headers deadline; 0: 10000 */
	size_t memory_limit;	     /* per connection (request line + headers); 0: 16 KiB */
};

/* cordon_http_start() with explicit limits (o may be NULL for defaults).
 * unix_listen_fd stays owned by the caller; the TCP socket (when tcp_listen
 * is given) is created, bound and owned here. tcp_listen must name a
 * loopback address ("127.0.0.1:PORT", any 127.0.0.0/8, or "[::1]:PORT");
 * other addresses are refused (-EADDRNOTAVAIL): /metrics describes the
 * host's activity. unix_listen_fd may be -1 when only TCP is wanted. */
int cordon_http_start_opts(struct cordon_daemon *d, int unix_listen_fd, const char *tcp_listen,
			   const struct cordon_http_options *o, struct cordon_http **ret, struct cordon_diag *diag);

/* The bound TCP port (useful with port 0), or -ENOENT without TCP. */
int cordon_http_tcp_port(const struct cordon_http *h);

/* Parses "HOST:PORT" as above. Returns 0 and fills the address, or
 * -EINVAL/-EADDRNOTAVAIL with diag. */
struct sockaddr_storage;
int cordon_http_parse_listen(const char *s, struct sockaddr_storage *ret, unsigned *ret_len, struct cordon_diag *diag);
/* The same, any IP address (mcp_http_listen over TLS: the config has
 * refused a routable one without it). */
int cordon_http_parse_listen_any(const char *s, struct sockaddr_storage *ret, unsigned *ret_len,
				 struct cordon_diag *diag);
