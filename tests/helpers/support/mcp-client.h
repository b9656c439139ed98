/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A minimal MCP client for tests: spawns a stdio MCP server and exchanges
 * newline-delimited JSON-RPC with it. */

#include <jansson.h>
#include <sys/types.h>

struct mcp_peer {
	pid_t pid;
	int to;	  /* its stdin */
	int from; /* its stdout */
	long next_id;
	char *buf;
	size_t len, cap;
	size_t scanned; /* bytes of buf known to hold no newline */
};

/* Starts argv[0] (absolute path) with argv; returns 0 or -errno. */
int mcp_peer_start(struct mcp_peer *p, char *const argv[]);

/* Sends a request and waits (up to timeout_ms) for the response with the same
 * id; notifications and other messages in between are skipped. Returns the
 * whole response object (new reference) or NULL on EOF/timeout/error. */
json_t *mcp_peer_request(struct mcp_peer *p, const char *method, json_t *params /* stolen */, int timeout_ms);

/* Sends raw bytes (for malformed-input tests). */
int mcp_peer_send_raw(struct mcp_peer *p, const char *data, size_t len);

/* Reads the next message, whatever it is (NULL on EOF/timeout). */
json_t *mcp_peer_read(struct mcp_peer *p, int timeout_ms);

/* initialize + notifications/initialized; returns the initialize result or NULL. */
json_t *mcp_peer_initialize(struct mcp_peer *p, const char *version);

/* tools/call convenience: returns the "result" object (new reference) or NULL. */
json_t *mcp_peer_call(struct mcp_peer *p, const char *tool, json_t *args /* stolen */, int timeout_ms);

/* Closes its stdin, waits for it (SIGKILL after timeout_ms); returns the wait
 * status or -errno. */
int mcp_peer_stop(struct mcp_peer *p, int timeout_ms);
