/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Outstanding request ids of a relayed MCP stream (mcp-track.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json-scan.h"
#include "mcp-track.h"

#define TRACK_DEPTH 64

/* The key of an id's value: "s" + its decoded text for a string, "n" + its
 * text for a number; NULL for any other value or when out of memory. */
static char *id_key(const char *line, const struct json_span *sp)
{
	char *k;

	if (sp->first == '"') {
		ssize_t n;

		k = malloc(sp->len + 2);
		if (!k)
			return NULL;
		n = json_string_decode(line + sp->offset, sp->len, k + 1);
		if (n < 0 || memchr(k + 1, '\0', (size_t)n)) {
			free(k);
			return NULL;
		}
		k[0] = 's';
		k[n + 1] = '\0';
		return k;
	}
	if (sp->first != '-' && (sp->first < '0' || sp->first > '9'))
		return NULL;
	k = malloc(sp->len + 2);
	if (!k)
		return NULL;
	k[0] = 'n';
	memcpy(k + 1, line + sp->offset, sp->len);
	k[sp->len + 1] = '\0';
	return k;
}

static void ids_remove(struct mcp_track *t, const char *key)
{
	for (size_t i = 0; i < t->n_ids; i++)
		if (!strcmp(t->ids[i], key)) {
			free(t->ids[i]);
			t->ids[i] = t->ids[--t->n_ids];
			return;
		}
}

/* Takes key. */
static int ids_add(struct mcp_track *t, char *key)
{
	if (t->n_ids >= MCP_TRACK_IDS_MAX) {
		free(key);
		t->lost = true;
		return 0;
	}
	if (t->n_ids == t->cap_ids) {
		size_t cap = t->cap_ids ? t->cap_ids * 2 : 16;
		char **n = reallocarray(t->ids, cap, sizeof(*n));

		if (!n) {
			free(key);
			t->lost = true;
			return -ENOMEM;
		}
		t->ids = n;
		t->cap_ids = cap;
	}
	t->ids[t->n_ids++] = key;
	return 0;
}

static int track_line(struct mcp_track *t, enum mcp_track_dir dir, const char *line, size_t len)
{
	static const char *const p_id[] = { "id", NULL }, *const p_method[] = { "method", NULL },
				 *const p_req[] = { "params", "requestId", NULL };
	static const char *const *const paths[] = { p_id, p_method, p_req };
	struct json_span sp[3];
	char *key;

	if (json_scan_paths(line, len, paths, 3, TRACK_DEPTH, sp) < 0)
		return 0; /* not JSON: the server answers it (or not) with id null */
	if (dir == MCP_TRACK_FROM_CLIENT) {
		if (sp[1].first == '"' && sp[0].first) {
			key = id_key(line, &sp[0]);
			return key ? ids_add(t, key) : 0;
		}
		if (sp[1].first == '"' && !sp[0].first && sp[2].first &&
		    sp[1].len == strlen("notifications/cancelled") &&
		    !memcmp(line + sp[1].offset, "notifications/cancelled", sp[1].len)) {
			key = id_key(line, &sp[2]);
			if (key)
				ids_remove(t, key);
			free(key);
		}
		return 0;
	}
	if (!sp[1].first && sp[0].first) {
		key = id_key(line, &sp[0]);
		if (key)
			ids_remove(t, key);
		free(key);
	}
	return 0;
}

int mcp_track_feed(struct mcp_track *t, enum mcp_track_dir dir, const char *buf, size_t n)
{
	struct mcp_track_line *l = &t->line[dir];
	int r = 0;

	while (n > 0) {
		const char *nl = memchr(buf, '\n', n);
		size_t chunk = nl ? (size_t)(nl - buf) : n;

		if (!l->skipping && l->len + chunk > MCP_TRACK_LINE_MAX) {
			/* Too long to look at: its id (if any) is not seen. */
			l->skipping = true;
			l->len = 0;
			t->lost = true;
		}
		if (!l->skipping && chunk) {
			if (l->len + chunk > l->cap) {
				size_t cap = l->cap ? l->cap : 4096;
				char *p;

				while (cap < l->len + chunk)
					cap *= 2;
				p = realloc(l->p, cap);
				if (!p) {
					l->skipping = true;
					l->len = 0;
					t->lost = true;
					r = -ENOMEM;
				} else {
					l->p = p;
					l->cap = cap;
				}
			}
			if (!l->skipping) {
				memcpy(l->p + l->len, buf, chunk);
				l->len += chunk;
			}
		}
		if (!nl)
			break;
		if (!l->skipping && l->len) {
			int k = track_line(t, dir, l->p, l->len);

			if (k < 0)
				r = k;
		}
		l->skipping = false;
		l->len = 0;
		buf = nl + 1;
		n -= chunk + 1;
	}
	return r;
}

size_t mcp_track_pending(const struct mcp_track *t)
{
	return t->n_ids;
}

bool mcp_track_lost(const struct mcp_track *t)
{
	return t->lost;
}

void mcp_track_done(struct mcp_track *t)
{
	for (size_t i = 0; i < t->n_ids; i++)
		free(t->ids[i]);
	free(t->ids);
	free(t->line[0].p);
	free(t->line[1].p);
	*t = (struct mcp_track){};
}
