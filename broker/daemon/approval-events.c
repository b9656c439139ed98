/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Approval events for operators: see approval-events.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "approval-events.h"
#include "approvals.h"
#include "authz.h"
#include "audit.h"
#include "cleanup.h"
#include "clock.h"
#include "daemon.h"

bool approval_event_is(const char *event, bool with_consumed)
{
	static const char *const ev[] = { CORDON_AUDIT_APPROVAL_REQUESTED, CORDON_AUDIT_APPROVAL_APPROVED,
					  CORDON_AUDIT_APPROVAL_DENIED, CORDON_AUDIT_APPROVAL_EXPIRED,
					  CORDON_AUDIT_APPROVAL_REVOKED };

	if (!event)
		return false;
	if (with_consumed && !strcmp(event, CORDON_AUDIT_APPROVAL_CONSUMED))
		return true;
	for (size_t i = 0; i < ELEMENTSOF(ev); i++)
		if (!strcmp(event, ev[i]))
			return true;
	return false;
}

static int set_time(json_t *o, const char *key, uint64_t usec)
{
	char buf[CORDON_TIME_STRING_MAX];

	return json_object_set_new(o, key,
				   usec ? json_string(cordon_time_format(usec, buf, sizeof(buf))) : json_null());
}

/* The approval row's part: display code, expiry, state, where to look. */
static int add_info(struct cordon_daemon *d, json_t *o, const struct cordon_approval_info *info)
{
	char hint[96];
	long long uid = cordon_daemon_session_uid(d, info->session);

	snprintf(hint, sizeof(hint), "cordonctl approvals show %s", info->display_code);
	if (json_object_set_new(o, "display_code", json_string(info->display_code)) < 0 ||
	    set_time(o, "expires_at", info->expires_at) < 0 ||
	    json_object_set_new(o, "state", json_string(cordon_approval_state_to_string(info->state))) < 0 ||
	    json_object_set_new(o, "console_hint", json_string(hint)) < 0)
		return -ENOMEM;
	if (uid >= 0 && json_object_set_new(o, "session_uid", json_integer(uid)) < 0)
		return -ENOMEM;
	return 0;
}

json_t *approval_event_json(struct cordon_daemon *d, const json_t *rec)
{
	const json_t *f = json_object_get(rec, "fields"), *actor = json_object_get(rec, "actor");
	const char *id = json_string_value(json_object_get(f, "approval"));
	const char *ev = json_string_value(json_object_get(rec, "event"));
	struct cordon_approval_info info;
	json_t *o;

	if (!id || !ev)
		return NULL;
	if (!strncmp(ev, "approval.", 9))
		ev += 9;
	o = json_pack("{s:s, s:O, s:O, s:s, s:O?, s:O?, s:O?, s:O?, s:O?}", "event", ev, "seq",
		      json_object_get(rec, "seq"), "time", json_object_get(rec, "time"), "approval_id", id, "connector",
		      json_object_get(f, "connector"), "tool", json_object_get(f, "tool"), "tier",
		      json_object_get(f, "tier"), "session", json_object_get(f, "session"), "reason",
		      json_object_get(f, "reason"));
	if (!o)
		return NULL;
	/* The row may be gone (never: approvals are kept; but a log restored
	 * beside another database must not break the watcher). */
	if (cordon_approval_get(cordon_daemon_db(d), id, &info) == 0 && add_info(d, o, &info) < 0) {
		json_decref(o);
		return NULL;
	}
	/* Who decided: an operator's uid (a session, or the system for an
	 * expiry or a revocation by a change, decides nothing here). */
	if (!strcmp(json_string_value(json_object_get(actor, "kind")) ?: "", "operator") &&
	    json_is_integer(json_object_get(actor, "uid")) &&
	    json_object_set_new(o, "decided_by_uid", json_copy(json_object_get(actor, "uid"))) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

struct pending_walk {
	struct cordon_daemon *d;
	json_t *arr;
};

static int pending_one(const struct cordon_approval_info *info, void *userdata)
{
	struct pending_walk *w = userdata;
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "event", "pending", "approval_id", info->id,
			      "connector", info->connector, "tool", info->tool, "tier", cordon_risk_name(info->tier),
			      "session", info->session);

	if (!o || set_time(o, "time", info->created_at) < 0 || add_info(w->d, o, info) < 0 ||
	    json_array_append_new(w->arr, o) < 0) {
		json_decref(o);
		return -ENOMEM;
	}
	return 0;
}

json_t *approval_events_pending(struct cordon_daemon *d)
{
	struct pending_walk w = { .d = d, .arr = json_array() };
	struct cordon_list_filter f = { .states = CORDON_STATE_BIT(CORDON_APPROVAL_REQUESTED) |
						  CORDON_STATE_BIT(CORDON_APPROVAL_APPROVED) };

	if (!w.arr)
		return NULL;
	if (cordon_approvals_list(cordon_daemon_db(d), &f, pending_one, &w) < 0) {
		json_decref(w.arr);
		return NULL;
	}
	return w.arr;
}
