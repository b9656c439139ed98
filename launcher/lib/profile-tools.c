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

/* tools.risk and tools.replay: a mapping of tool name to one word of a
 * vocabulary, stored into the profile through the table's callbacks. */
struct tool_table {
	const char *key;
	const char *const *names; /* the vocabulary, indexed by enum value */
	size_t n_names;
	bool must_be_risk_named;			  /* every tool must also be named in tools.risk */
	int (*alloc)(struct cordon_profile *p, size_t n); /* the array and its count */
	char **(*tool)(struct cordon_profile *p, size_t i);
	void (*set)(struct cordon_profile *p, size_t i, unsigned value);
};

static int risk_alloc(struct cordon_profile *p, size_t n)
{
	p->risk = calloc(n, sizeof(*p->risk));
	if (!p->risk)
		return -ENOMEM;
	p->n_risk = n;
	return 0;
}

static char **risk_tool(struct cordon_profile *p, size_t i)
{
	return &p->risk[i].tool;
}

static void risk_set(struct cordon_profile *p, size_t i, unsigned value)
{
	p->risk[i].risk = (enum cordon_risk)value;
}

static int replay_alloc(struct cordon_profile *p, size_t n)
{
	p->replay = calloc(n, sizeof(*p->replay));
	if (!p->replay)
		return -ENOMEM;
	p->n_replay = n;
	return 0;
}

static char **replay_tool(struct cordon_profile *p, size_t i)
{
	return &p->replay[i].tool;
}

static void replay_set(struct cordon_profile *p, size_t i, unsigned value)
{
	p->replay[i].replay = (enum cordon_replay)value;
}

static const struct tool_table risk_table = {
	.key = "risk",
	.names = cordon_risk_names,
	.n_names = CORDON_RISK_COUNT,
	.alloc = risk_alloc,
	.tool = risk_tool,
	.set = risk_set,
};

static const struct tool_table replay_table = {
	.key = "replay",
	.names = cordon_replay_names,
	.n_names = CORDON_REPLAY_COUNT,
	/* A typo here would silently mean "unsafe". */
	.must_be_risk_named = true,
	.alloc = replay_alloc,
	.tool = replay_tool,
	.set = replay_set,
};

static int parse_tool_table(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *t, const struct tool_table *tt,
			    struct cordon_profile *p)
{
	size_t m = cordon_yaml_push_key(c, tt->key);
	unsigned u;
	int r, acc = 0;

	r = cordon_yaml_expect(c, t, CORDON_YAML_MAP);
	if (r >= 0 && cordon_yaml_map_size(t) > MAX_LIST)
		r = cordon_yaml_err(c, t, "must list at most %d entries", MAX_LIST);
	if (r >= 0 && cordon_yaml_map_size(t) > 0 && tt->alloc(p, cordon_yaml_map_size(t)) < 0)
		r = cordon_yaml_err_at(c, ENOMEM, 0, 0, "out of memory");
	if (r >= 0) {
		for (size_t i = 0; i < cordon_yaml_map_size(t); i++) {
			const struct cordon_yaml_node *key = t->items[2 * i], *val = t->items[2 * i + 1];
			size_t mk;

			if (cordon_yaml_expect(c, key, CORDON_YAML_SCALAR) < 0) {
				acc = -EINVAL;
				continue;
			}
			mk = cordon_yaml_push_key(c, key->value);
			if (profile_check_tool_name(c, key) < 0 ||
			    cordon_yaml_get_string(c, key, MAX_TOOL_NAME, tt->tool(p, i)) < 0 ||
			    cordon_yaml_get_enum(c, val, tt->names, tt->n_names, &u) < 0)
				acc = -EINVAL;
			else {
				tt->set(p, i, u);
				if (tt->must_be_risk_named && !cordon_profile_tool_risk_named(p, key->value))
					acc = cordon_yaml_err(c, key, "tool %s is not named in tools.risk",
							      cordon_yaml_quote(key).s);
			}
			cordon_yaml_pop(c, mk);
		}
		r = cordon_yaml_check_unique(c, t, 2);
	}
	if (r < 0)
		acc = r;
	cordon_yaml_pop(c, m);
	return acc;
}

int profile_parse_tools(struct cordon_yaml_ctx *c, const struct cordon_yaml_node *n, struct cordon_profile *p)
{
	static const char *const keys[] = { "default_risk", "risk", "replay", "grant" };
	const struct cordon_yaml_node *v[ELEMENTSOF(keys)];
	unsigned u;
	int r, acc;

	r = cordon_yaml_expect(c, n, CORDON_YAML_MAP);
	if (r < 0)
		return r;
	acc = cordon_yaml_map_fields(c, n, keys, ELEMENTSOF(keys), v);
	p->default_risk = CORDON_RISK_HIGH;
	if (v[0]) {
		r = 0;
		CORDON_YAML_WITH_KEY(c, "default_risk", &r,
				     cordon_yaml_get_enum(c, v[0], cordon_risk_names, CORDON_RISK_COUNT, &u));
		if (r < 0)
			acc = r;
		else
			p->default_risk = (enum cordon_risk)u;
	}
	/* No table is a valid policy: every tool then gets default_risk. */
	if (v[1]) {
		r = parse_tool_table(c, v[1], &risk_table, p);
		if (r < 0)
			acc = r;
	}
	if (v[2]) {
		r = parse_tool_table(c, v[2], &replay_table, p);
		if (r < 0)
			acc = r;
	}
	if (v[3]) {
		size_t m = cordon_yaml_push_key(c, "grant");

		r = cordon_yaml_get_string_list(c, v[3], 0, MAX_LIST, profile_check_tool_name, true, &p->grant,
						&p->n_grant);
		if (r < 0)
			acc = r;
		/* Granting a tool the risk table does not name is almost always a
		 * typo, and would grant it at default_risk. */
		for (size_t i = 0; r >= 0 && i < p->n_grant; i++) {
			size_t mi;

			if (cordon_profile_tool_risk_named(p, p->grant[i]))
				continue;
			mi = cordon_yaml_push_index(c, i);
			acc = cordon_yaml_err(c, v[3]->items[i], "tool %s is not named in tools.risk",
					      cordon_yaml_quote(v[3]->items[i]).s);
			cordon_yaml_pop(c, mi);
		}
		cordon_yaml_pop(c, m);
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
