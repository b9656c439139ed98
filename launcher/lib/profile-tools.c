/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pass 3 of the profile loader (profile.c): the tools section (grant, risk,
 * replay) and the lookups of a tool's risk and replay class. */
#include "profile.h"
#include "profile-internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-util.h"
#include "parse-util.h"

static const char *const risk_names[] = {
    [CORDON_RISK_READ] = "read", [CORDON_RISK_WRITE] = "write",	      [CORDON_RISK_DESTRUCTIVE] = "destructive",
    [CORDON_RISK_HIGH] = "high", [CORDON_RISK_CRITICAL] = "critical",
};

int profile_parse_tools(struct ctx *c, const struct node *n, struct cordon_profile *p)
{
	static const char *const keys[] = {"default_risk", "risk", "replay", "grant"};
	static const char *const replays[] = {[CORDON_REPLAY_UNSAFE] = "unsafe", [CORDON_REPLAY_SAFE] = "safe"};
	const struct node *v[ELEMENTSOF(keys)];
	unsigned u;
	int r, acc;

	r = profile_expect(c, n, NODE_MAP);
	if (r < 0)
		return r;
	acc = profile_map_fields(c, n, keys, ELEMENTSOF(keys), v);
	p->default_risk = CORDON_RISK_HIGH;
	if (v[0]) {
		r = 0;
		WITH_KEY(c, "default_risk", &r, profile_get_enum(c, v[0], risk_names, ELEMENTSOF(risk_names), &u));
		if (r < 0)
			acc = r;
		else
			p->default_risk = (enum cordon_risk)u;
	}
	/* No table is a valid policy: every tool then gets default_risk. */
	if (v[1]) {
		size_t m = profile_path_push_key(c, "risk");
		const struct node *t = v[1];

		r = profile_expect(c, t, NODE_MAP);
		if (r >= 0 && profile_map_size(t) > MAX_LIST)
			r = profile_err(c, t, "must list at most %d entries", MAX_LIST);
		if (r >= 0 && profile_map_size(t) > 0) {
			p->risk = calloc(profile_map_size(t), sizeof(*p->risk));
			if (!p->risk)
				r = profile_err_at(c, ENOMEM, 0, 0, "out of memory");
		}
		if (r >= 0) {
			p->n_risk = profile_map_size(t);
			for (size_t i = 0; i < profile_map_size(t); i++) {
				const struct node *key = t->items[2 * i], *val = t->items[2 * i + 1];
				size_t mk;

				if (profile_expect(c, key, NODE_SCALAR) < 0) {
					acc = -EINVAL;
					continue;
				}
				mk = profile_path_push_key(c, key->value);
				if (profile_check_tool_name(c, key) < 0 ||
				    profile_get_string(c, key, MAX_TOOL_NAME, &p->risk[i].tool) < 0 ||
				    profile_get_enum(c, val, risk_names, ELEMENTSOF(risk_names), &u) < 0)
					acc = -EINVAL;
				else
					p->risk[i].risk = (enum cordon_risk)u;
				profile_path_pop(c, mk);
			}
			r = profile_check_unique(c, t, 2);
		}
		if (r < 0)
			acc = r;
		profile_path_pop(c, m);
	}
	if (v[2]) {
		size_t m = profile_path_push_key(c, "replay");
		const struct node *t = v[2];

		r = profile_expect(c, t, NODE_MAP);
		if (r >= 0 && profile_map_size(t) > MAX_LIST)
			r = profile_err(c, t, "must list at most %d entries", MAX_LIST);
		if (r >= 0 && profile_map_size(t) > 0) {
			p->replay = calloc(profile_map_size(t), sizeof(*p->replay));
			if (!p->replay)
				r = profile_err_at(c, ENOMEM, 0, 0, "out of memory");
		}
		if (r >= 0) {
			p->n_replay = profile_map_size(t);
			for (size_t i = 0; i < profile_map_size(t); i++) {
				const struct node *key = t->items[2 * i], *val = t->items[2 * i + 1];
				size_t mk;

				if (profile_expect(c, key, NODE_SCALAR) < 0) {
					acc = -EINVAL;
					continue;
				}
				mk = profile_path_push_key(c, key->value);
				if (profile_check_tool_name(c, key) < 0 ||
				    profile_get_string(c, key, MAX_TOOL_NAME, &p->replay[i].tool) < 0 ||
				    profile_get_enum(c, val, replays, ELEMENTSOF(replays), &u) < 0)
					acc = -EINVAL;
				else {
					p->replay[i].replay = (enum cordon_replay)u;
					/* A typo here would silently mean "unsafe". */
					if (!cordon_profile_tool_risk_named(p, key->value))
						acc = profile_err(c, key, "tool %s is not named in tools.risk", profile_quote(key).s);
				}
				profile_path_pop(c, mk);
			}
			r = profile_check_unique(c, t, 2);
		}
		if (r < 0)
			acc = r;
		profile_path_pop(c, m);
	}
	if (v[3]) {
		size_t m = profile_path_push_key(c, "grant");

		r = profile_get_string_list(c, v[3], 0, MAX_LIST, profile_check_tool_name, true, &p->grant, &p->n_grant);
		if (r < 0)
			acc = r;
		/* Granting a tool the risk table does not name is almost always a
		 * typo, and would grant it at default_risk. */
		for (size_t i = 0; r >= 0 && i < p->n_grant; i++) {
			size_t mi;

			if (cordon_profile_tool_risk_named(p, p->grant[i]))
				continue;
			mi = profile_path_push_index(c, i);
			acc = profile_err(c, v[3]->items[i], "tool %s is not named in tools.risk", profile_quote(v[3]->items[i]).s);
			profile_path_pop(c, mi);
		}
		profile_path_pop(c, m);
	}
	return acc;
}

static const struct cordon_tool_risk *find_risk(const struct cordon_profile *p, const char *tool)
{
	for (size_t i = 0; p->risk && i < p->n_risk; i++)
		if (p->risk[i].tool && strcmp(p->risk[i].tool, tool) == 0)
			return &p->risk[i];
	return NULL;
}

bool cordon_profile_tool_risk_named(const struct cordon_profile *p, const char *tool)
{
	return p && tool && find_risk(p, tool);
}

enum cordon_risk cordon_profile_tool_risk(const struct cordon_profile *p, const char *tool)
{
	const struct cordon_tool_risk *t = tool ? find_risk(p, tool) : NULL;

	return t ? t->risk : p->default_risk;
}

enum cordon_replay cordon_profile_tool_replay(const struct cordon_profile *p, const char *tool)
{
	for (size_t i = 0; tool && p->replay && i < p->n_replay; i++)
		if (p->replay[i].tool && strcmp(p->replay[i].tool, tool) == 0)
			return p->replay[i].replay;
	return CORDON_REPLAY_UNSAFE;
}
