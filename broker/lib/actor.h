/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Who asks for a state change. Every mutating broker function takes an actor
 * and records it in the audit log. Operator-only operations (review, grant,
 * approve, activate a delegation, resolve an action) refuse any other kind
 * with -EPERM: an agent's session can never authorise itself. */

#include <stdbool.h>
#include <sys/types.h>

enum cordon_actor_kind {
	CORDON_ACTOR_OPERATOR, /* a human through cordonctl / the operator socket */
	CORDON_ACTOR_SESSION,  /* an MCP client session (the agent) */
	CORDON_ACTOR_SYSTEM,   /* the broker itself: start-up recovery, expiry sweeps */
};

#define CORDON_ACTOR_CHANNEL_MAX 32
#define CORDON_SESSION_ID_MAX	 64

struct cordon_actor {
	enum cordon_actor_kind kind;
	uid_t uid;				/* operator: peer uid (SO_PEERCRED) */
	char channel[CORDON_ACTOR_CHANNEL_MAX]; /* operator: "cordonctl", "operator-socket", ... */
	char session_id[CORDON_SESSION_ID_MAX]; /* session: the MCP session id */
};

/* Constructors; strings longer than the fields are truncated, which is why
 * session ids are validated (cordon_session_id_is_valid) before use. */
struct cordon_actor cordon_actor_operator(uid_t uid, const char *channel);
struct cordon_actor cordon_actor_session(const char *session_id);
struct cordon_actor cordon_actor_system(void);

bool cordon_actor_is_operator(const struct cordon_actor *a);

/* A session id is 1..63 bytes of [A-Za-z0-9._:-]. */
bool cordon_session_id_is_valid(const char *s);

const char *cordon_actor_kind_to_string(enum cordon_actor_kind k);

/* An actor's audit-friendly text into buf ("operator:1000:cordonctl",
 * "session:s1", "system" also for NULL); truncated to size. */
void cordon_actor_describe(const struct cordon_actor *a, char *buf, size_t size);
