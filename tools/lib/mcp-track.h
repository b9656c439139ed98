/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* mcp-track: which requests a stdio MCP client has sent that are not
 * answered yet, seen from a byte relay (`cordonctl mcp`) that passes every
 * byte through unchanged and only watches the lines go by. Client lines
 * that carry "method" and "id" are requests; a server line with "id" and
 * no "method" answers one; a client notifications/cancelled withdraws one.
 * Lines are scanned without building a tree (json-scan); a line that is
 * not a JSON object (or a batch array) is passed by. A line longer than
 * MCP_TRACK_LINE_MAX, or more than MCP_TRACK_IDS_MAX outstanding ids, makes
 * the tracker lose count (mcp_track_lost): the caller then cannot know when
 * every answer is in. Never logs. */

#include <stdbool.h>
#include <stddef.h>

#define MCP_TRACK_LINE_MAX (64u << 20)
#define MCP_TRACK_IDS_MAX  65536u

enum mcp_track_dir {
	MCP_TRACK_FROM_CLIENT = 0,
	MCP_TRACK_FROM_SERVER = 1,
};

struct mcp_track_line {
	char *p;
	size_t len, cap;
	bool skipping; /* inside a line beyond MCP_TRACK_LINE_MAX */
};

struct mcp_track {
	struct mcp_track_line line[2];
	char **ids; /* outstanding request ids: "s<decoded string>" or "n<number text>" */
	size_t n_ids, cap_ids;
	bool lost;
};

/* Watches n bytes that went from one side to the other. Returns 0, or
 * -ENOMEM (the tracker has then lost count; relaying may go on). */
int mcp_track_feed(struct mcp_track *t, enum mcp_track_dir dir, const char *buf, size_t n);
/* How many requests are outstanding. */
size_t mcp_track_pending(const struct mcp_track *t);
/* True once the tracker lost count (see above). */
bool mcp_track_lost(const struct mcp_track *t);
/* Frees what the tracker holds; it may be used again after. */
void mcp_track_done(struct mcp_track *t);
