/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* cordond's operator-relevant events in its log (docs/cordond.md,
 * "Logging"): each is one line
 *
 *   [NAME MESSAGE_ID] key=value key="quoted value" ...
 *
 * at the event's level, through log.h (so with the "<N>" priority prefix
 * when stderr is the journal). NAME ("cordon.approval.requested") and
 * MESSAGE_ID (32 lower-case hex digits, 128 bits) never change once
 * released: operators grep and alert on them. Fields carry identifiers and
 * outcomes only, never an argument value, a credential, an approval's
 * confirmation code or display code, or a key. A value that is not plain
 * (letters, digits, . _ : / @ + , -) is quoted with \" \\ and \xNN escapes,
 * so no connector or tool name can forge a field or a line.
 *
 * The lowest module of the daemon beside daemon-state (which embeds struct
 * dlog_denials): it uses log.h and the broker library's actor and approval
 * types, nothing else of cordond. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actor.h"
#include "approvals.h"
#include "log.h"

enum dlog_event {
	DLOG_DAEMON_STARTED,
	DLOG_DAEMON_STOPPING,
	DLOG_DAEMON_FATAL,
	DLOG_RELOAD_APPLIED,
	DLOG_RELOAD_REFUSED,
	DLOG_APPROVAL_REQUESTED,
	DLOG_APPROVAL_DECIDED,
	DLOG_GRANT_CHANGED,
	DLOG_CONNECTOR_INSTALLED,
	DLOG_CONNECTOR_REMOVED,
	DLOG_INSTANCE_STARTED,
	DLOG_INSTANCE_EXITED,
	DLOG_DENIAL_SUMMARY,
	_DLOG_EVENT_MAX,
};

/* The event's name, its MESSAGE_ID and its default level. */
const char *dlog_event_name(enum dlog_event ev);
const char *dlog_event_id(enum dlog_event ev);
enum log_level dlog_event_level(enum dlog_event ev);

/* The most fields one event line carries, and the longest value shown
 * (longer ones are cut and end in "..."). */
#define DLOG_FIELDS_MAX 12
#define DLOG_VALUE_MAX	128

/* Formats the event's text ("[NAME ID] k=v ...", no program or level) from
 * n pairs kv[2i] (key: lower-case letters and _), kv[2i+1] (value; NULL:
 * the pair is left out) into buf (NUL-terminated; cut at size). Returns the
 * length written. */
size_t dlog_format(char *buf, size_t size, enum dlog_event ev, const char *const *kv, size_t n);

/* Logs the event at level (0: its default) with the key, value pairs that
 * follow, ended by a NULL key. */
void dlog_event_at(enum dlog_event ev, enum log_level level, ...) __attribute__((sentinel));
#define dlog_event(ev, ...) dlog_event_at((ev), 0, __VA_ARGS__, (const char *)NULL)

/* Who did it, for a "by" field (cordon_actor_describe():
 * "operator:1000:cordonctl", "session:ID", "system"; NULL: "system").
 * Returns buf. */
const char *dlog_actor(const struct cordon_actor *a, char *buf, size_t size);

/* The cordon.approval.decided line of approval a in its current state
 * (decision approved, denied, expired or revoked), decided by actor (NULL:
 * the system). */
void dlog_approval_decided(const struct cordon_approval_info *a, const struct cordon_actor *actor);

/* The cordon.instance.exited line (warning when crashed): status is the
 * wait status when have_status, pid 0 when unknown. */
void dlog_instance_exited(const char *connector, const char *tag, int pid, bool have_status, int status,
			  const char *reason, bool crashed);

/* Denial summaries: calls refused for a connector (not granted, not
 * reviewed, denied by the authorization core) are counted per connector;
 * the first after a quiet window is logged at once, the rest at most once
 * per DLOG_DENIAL_WINDOW_MS as one cordon.denial.summary line with the
 * count, so a client looping on a refused tool cannot flood the log. */
#define DLOG_DENIAL_WINDOW_MS 60000u
#define DLOG_DENIAL_SLOTS     256u /* DAEMON_CONNECTORS_MAX: every connector has one */
struct dlog_denials {
	struct dlog_denial_slot {
		char connector[33];
		char reason[32];  /* the latest one's */
		uint64_t pending; /* refused, not yet logged */
		uint64_t logged_ms;
	} slot[DLOG_DENIAL_SLOTS];
};

/* Counts one refused call of connector for reason at now (loop ms). */
void dlog_denial(struct dlog_denials *t, const char *connector, const char *reason, uint64_t now);
/* Logs the pending counts whose window is over (every pending one when
 * all: at shutdown). */
void dlog_denials_flush(struct dlog_denials *t, uint64_t now, bool all);
