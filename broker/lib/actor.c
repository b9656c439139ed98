/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "actor.h"

#include <stdio.h>
#include <string.h>

struct cordon_actor cordon_actor_operator(uid_t uid, const char *channel)
{
	struct cordon_actor a = { .kind = CORDON_ACTOR_OPERATOR, .uid = uid };

	snprintf(a.channel, sizeof(a.channel), "%s", channel ? channel : "");
	return a;
}

struct cordon_actor cordon_actor_session(const char *session_id)
{
	struct cordon_actor a = { .kind = CORDON_ACTOR_SESSION };

	snprintf(a.session_id, sizeof(a.session_id), "%s", session_id ? session_id : "");
	return a;
}

struct cordon_actor cordon_actor_system(void)
{
	return (struct cordon_actor){ .kind = CORDON_ACTOR_SYSTEM };
}

bool cordon_actor_is_operator(const struct cordon_actor *a)
{
	return a && a->kind == CORDON_ACTOR_OPERATOR;
}

bool cordon_session_id_is_valid(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strlen(s);
	if (n == 0 || n >= CORDON_SESSION_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == ':' || c == '-'))
			return false;
	}
	return true;
}

const char *cordon_actor_kind_to_string(enum cordon_actor_kind k)
{
	switch (k) {
	case CORDON_ACTOR_OPERATOR:
		return "operator";
	case CORDON_ACTOR_SESSION:
		return "session";
	case CORDON_ACTOR_SYSTEM:
		return "system";
	}
	return "invalid";
}

void cordon_actor_describe(const struct cordon_actor *a, char *buf, size_t size)
{
	if (!a) {
		snprintf(buf, size, "system");
		return;
	}
	switch (a->kind) {
	case CORDON_ACTOR_OPERATOR:
		snprintf(buf, size, "operator:%u:%s", (unsigned)a->uid, a->channel);
		break;
	case CORDON_ACTOR_SESSION:
		snprintf(buf, size, "session:%s", a->session_id);
		break;
	default:
		snprintf(buf, size, "system");
	}
}
