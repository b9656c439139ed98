/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Approval events as operators are told of them (issue 14, Notifications):
 * `cordonctl approvals watch` (op approvals.watch) and the approval webhook
 * (webhook.h) both read the audit log's approval records and render each
 * with this one function, so both say the same thing and neither can carry
 * an argument value: the audit record has none, and the approval row adds
 * its display code and expiry only. */

#include <jansson.h>
#include <stdbool.h>

struct cordon_daemon;

/* Whether an audit record's event is an approval lifecycle event: requested,
 * approved, denied, expired, revoked, and consumed when with_consumed
 * (`approval.revealed` is an operator looking, not a lifecycle step). */
bool approval_event_is(const char *event, bool with_consumed);

/* One event from one exported audit record (cordon_audit_export's form):
 * {event (without the "approval." prefix), seq, time, approval_id,
 * display_code, connector, tool, tier, session, session_uid (while the
 * session is open), expires_at, state (now), reason, decided_by_uid (an
 * operator's approve, deny or revoke), console_hint}. Returns a new object,
 * or NULL (out of memory, or the record names no approval). */
json_t *approval_event_json(struct cordon_daemon *d, const json_t *rec);

/* The outstanding (requested or approved) approvals as the same objects
 * with event "pending", oldest first: a new array, or NULL. */
json_t *approval_events_pending(struct cordon_daemon *d);
