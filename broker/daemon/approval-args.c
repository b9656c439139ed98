/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The canonical arguments of pending approvals (approval-args.h). A list:
 * its length is bounded by the pending-approval caps (256 in all by
 * default), and every lookup is an operator's request or the tick. */
#include "approval-args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway-session.h"

static struct dheld_args **find(struct cordon_daemon *d, const char *approval_id)
{
	for (struct dheld_args **p = &d->held_args; *p; p = &(*p)->next)
		if (strcmp((*p)->approval_id, approval_id) == 0)
			return p;
	return NULL;
}

static void unlink_free(struct cordon_daemon *d, struct dheld_args **p)
{
	struct dheld_args *e = *p;

	*p = e->next;
	held_release(d, e->subject, e->len);
	free(e->jcs);
	free(e);
	d->n_held_args -= d->n_held_args > 0;
}

int approval_args_take(struct cordon_daemon *d, const char *approval_id, const char *session, uint64_t subject,
		       char **jcs, size_t len)
{
	struct cordon_approval_info info;
	struct dheld_args *e;

	if (find(d, approval_id) || !d->db)
		return 0;
	/* Only an approval that can still be decided needs its arguments. */
	if (cordon_approval_get(d->db, approval_id, &info) < 0 || info.state != CORDON_APPROVAL_REQUESTED ||
	    cordon_db_now(d->db) >= info.expires_at)
		return 0;
	e = calloc(1, sizeof(*e));
	if (!e)
		return 0;
	e->jcs = *jcs;
	*jcs = NULL;
	e->len = len;
	e->subject = subject;
	e->expires_at = info.expires_at;
	snprintf(e->approval_id, sizeof(e->approval_id), "%s", approval_id);
	snprintf(e->session, sizeof(e->session), "%s", session);
	e->next = d->held_args;
	d->held_args = e;
	d->n_held_args++;
	return 1;
}

json_t *approval_args_get(struct cordon_daemon *d, const char *approval_id)
{
	struct dheld_args **p = find(d, approval_id);

	return p ? json_loadb((*p)->jcs, (*p)->len, JSON_REJECT_DUPLICATES, NULL) : NULL;
}

void approval_args_forget(struct cordon_daemon *d, const char *approval_id)
{
	struct dheld_args **p = find(d, approval_id);

	if (p)
		unlink_free(d, p);
}

void approval_args_session_ended(struct cordon_daemon *d, const char *session)
{
	for (struct dheld_args **p = &d->held_args; *p;)
		if (strcmp((*p)->session, session) == 0)
			unlink_free(d, p);
		else
			p = &(*p)->next;
}

void approval_args_sweep(struct cordon_daemon *d)
{
	uint64_t now = d->db ? cordon_db_now(d->db) : 0;

	for (struct dheld_args **p = &d->held_args; *p;) {
		struct cordon_approval_info info;
		int r;

		/* Past its expiry it can never be decided again; otherwise the
		 * table says whether it is still waiting (a revocation by a
		 * policy change or relaunch is only written there). A read that
		 * fails for another reason keeps the copy until the next tick. */
		if (now >= (*p)->expires_at) {
			unlink_free(d, p);
			continue;
		}
		r = cordon_approval_get(d->db, (*p)->approval_id, &info);
		if (r == -ENOENT || (r == 0 && info.state != CORDON_APPROVAL_REQUESTED)) {
			unlink_free(d, p);
			continue;
		}
		p = &(*p)->next;
	}
}

void approval_args_free_all(struct cordon_daemon *d)
{
	while (d->held_args)
		unlink_free(d, &d->held_args);
}
