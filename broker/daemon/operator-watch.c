/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* approvals.watch: what `cordonctl approvals watch` polls (issue 14).
 *
 * Stateless, like audit.export (the daemon keeps nothing per watcher): the
 * first call (no after_seq) answers the outstanding approvals and the
 * audit log's last seq, taken in the same turn of the single-threaded loop
 * so nothing falls between them; each later call passes the previous
 * next_seq back and gets the approval events recorded since, at most one
 * audit export page read per call. The audit log is the source, so a
 * watcher that reconnects with its last seq misses nothing, and an event is
 * rendered by approval_event_json(): no argument value ever. */
#include <errno.h>
#include <stdint.h>

#include "approval-events.h"
#include "audit.h"
#include "daemon.h"
#include "operator-watch.h"

#define NO_CURSOR UINT64_MAX

int op_approvals_watch(struct cordon_daemon *d, const struct cordon_op_request *req, json_t **ret,
		       struct cordon_op_error *err)
{
	struct cordon_db *db = cordon_daemon_db(d);
	uint64_t after = cordon_op_arg_uint(req, "after_seq", NO_CURSOR);
	json_t *page = NULL, *events = NULL, *rec, *out;
	size_t i;
	int r;

	if (after == NO_CURSOR) {
		int64_t last = 0, cps = 0, cpt = 0;

		r = cordon_audit_position(db, &last, &cps, &cpt);
		if (r < 0)
			return cordon_op_error_set(err, -r, CORDON_OP_E_FAILED,
						   "reading the audit log's position failed");
		events = approval_events_pending(d);
		if (!events)
			return cordon_op_error_set(err, ENOMEM, CORDON_OP_E_FAILED,
						   "listing the pending approvals failed");
		out = json_pack("{s:o, s:I, s:I}", "pending", events, "next_seq", (json_int_t)last, "last_seq",
				(json_int_t)last);
		if (!out)
			return cordon_op_error_set(err, ENOMEM, CORDON_OP_E_FAILED, "out of memory");
		*ret = out;
		return 0;
	}
	r = cordon_audit_export(db, &(struct cordon_audit_export_query){ .after_seq = after }, &page);
	if (r < 0)
		return cordon_op_error_set(err, -r, CORDON_OP_E_FAILED, "reading the audit log failed");
	events = json_array();
	if (!events) {
		json_decref(page);
		return cordon_op_error_set(err, ENOMEM, CORDON_OP_E_FAILED, "out of memory");
	}
	json_array_foreach(json_object_get(page, "records"), i, rec)
	{
		json_t *ev;

		if (!approval_event_is(json_string_value(json_object_get(rec, "event")), true))
			continue;
		ev = approval_event_json(d, rec);
		if (ev && json_array_append_new(events, ev) < 0)
			ev = NULL;
		if (!ev) {
			json_decref(events);
			json_decref(page);
			return cordon_op_error_set(err, ENOMEM, CORDON_OP_E_FAILED, "out of memory");
		}
	}
	out = json_pack("{s:o, s:O, s:O}", "events", events, "next_seq", json_object_get(page, "next_seq"), "last_seq",
			json_object_get(page, "last_seq"));
	json_decref(page);
	if (!out)
		return cordon_op_error_set(err, ENOMEM, CORDON_OP_E_FAILED, "out of memory");
	*ret = out;
	return 0;
}
