/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The MCP Streamable HTTP transport (gateway-http.c): the same gateway
 * sessions as gateway.sock, framed as HTTP by libmicrohttpd on cordond's
 * loop. Used by daemon-core.c; calls gateway.h's session functions.
 *
 *   POST   /mcp, /mcp/<connector>   one JSON-RPC message; a request is
 *          answered as application/json when its answer is ready at once
 *          and nothing else goes with it, else as text/event-stream; a
 *          notification or a response gets 202.
 *   GET    the session's server-to-client stream (text/event-stream), or
 *          with Last-Event-ID the rest of a stream that was cut.
 *   DELETE ends the session.
 *
 * The listener is a Unix socket (the peer's SO_PEERCRED uid is the
 * subject, as on gateway.sock) and, with mcp_http_listen, a TCP socket
 * (loopback, or any address over TLS: mcp_http_tls_cert and
 * mcp_http_tls_key) where every request carries "Authorization: Bearer <token>" of
 * an agent (cordonctl agents add): the agent is the subject. One
 * gateway_http_start() per listener; a session is found only on the
 * listener that created it. */

#include "daemon-state.h"
#include "diag.h"

struct gw_http;

struct gw_http_options {
	unsigned keepalive_sec;	   /* an SSE comment on a quiet stream; 0: 15 */
	unsigned conn_timeout_sec; /* MHD idle connection timeout; 0: 60 */
	unsigned max_connections;  /* 0: 2 * max_sessions + 16 */
	bool tcp;		   /* a TCP listener: bearer tokens, no SO_PEERCRED */
	/* TCP only: PEM certificate chain and key (gateway_http_tls_read();
	 * kept alive by the caller until gateway_http_free()), both NULL: no
	 * TLS; hosts: "name[,name...]" (mcp_http_hosts) the Host and Origin
	 * checks admit besides the loopback names, or NULL. */
	const char *tls_cert, *tls_key;
	const char *hosts;
};

/* Reads the PEM file path (what: its config key, for messages) into a
 * NUL-terminated sodium_malloc'd buffer, at most 64 KiB. secret (a key):
 * the file must be owned by root or the caller's euid and have no group
 * or other access. Returns 0 or -errno with diag. */
int gateway_http_tls_read(const char *path, const char *what, bool secret, char **ret, struct cordon_diag *diag);
/* Wipes and frees what gateway_http_tls_read() returned; NULL is fine. */
void gateway_http_tls_free(char *pem);

/* Binds and listens on addr (mcp_http_listen: a routable address only with tls, port 0 picks
 * one). Returns 0 with the socket and its port, or -errno with diag. */
int gateway_http_tcp_listen(const char *addr, bool tls, int *ret_fd, int *ret_port, struct cordon_diag *diag);

/* Serves MCP over HTTP on the listening Unix socket fd (stays the
 * caller's). o may be NULL (defaults). Returns 0 and *ret, or -errno with
 * diag. */
int gateway_http_start(struct cordon_daemon *d, int listen_fd, const struct gw_http_options *o, struct gw_http **ret,
		       struct cordon_diag *diag);
/* From the daemon's tick: idle sessions, keep-alives, cut streams nobody
 * resumed. */
void gateway_http_tick(struct gw_http *g);
/* Ends every HTTP session and stops serving. */
void gateway_http_free(struct gw_http *g);
