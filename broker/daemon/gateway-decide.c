/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Group commit of tools/call decisions.
 *
 * A decision commits at synchronous=NORMAL, but its transaction still took
 * most of a read call's cost (8 WAL lock calls, ~3.4 WAL pages written,
 * BEGIN and COMMIT; docs/performance.md). Calls that arrive together (one
 * loop pass: up to 64 events) now share one: cordon_broker_decide_batched()
 * adds each decision and its audit record to the open batch, the call waits
 * here, and at the end of the pass the batch commits and the calls go on in
 * the order they were decided. Nothing is sent for a call (no dispatch, no
 * deny, no approval request) before its record has committed, so a crash of
 * cordond still loses no record of anything that went out; a durable
 * transaction that begins while the batch is open commits the batch first
 * (db_batch_flush()), so its fsync covers the batch as it did a lone
 * decision (docs/authorization.md §1). */
#include "gateway-decide.h"

#include <errno.h>

#include "decide.h"

void decide_batch_add(struct dcall *c, int r)
{
	struct dcall **p = &c->d->decided;

	while (*p)
		p = &(*p)->next_decided;
	c->decide_r = r;
	c->decided_pending = true;
	c->next_decided = NULL;
	*p = c;
}

void decide_batch_forget(struct dcall *c)
{
	if (!c->decided_pending)
		return;
	for (struct dcall **p = &c->d->decided; *p; p = &(*p)->next_decided)
		if (*p == c) {
			*p = c->next_decided;
			break;
		}
	c->next_decided = NULL;
	c->decided_pending = false;
}

void decide_batch_pass_end(struct cordon_loop *loop, void *userdata)
{
	struct cordon_daemon *d = userdata;
	struct dcall *c;

	(void)loop;
	/* One call at a time off the live queue: going on may free other
	 * waiting calls (a session that ends), which leave the queue, or
	 * decide new ones into a new batch, which commits in turn. */
	while ((c = d->decided)) {
		int br = c->decide_batch ? cordon_decide_batch_result(d->db, c->decide_batch) : 0;

		if (br == -EINPROGRESS) {
			(void)cordon_decide_batch_commit(d->db);
			continue;
		}
		d->decided = c->next_decided;
		c->next_decided = NULL;
		c->decided_pending = false;
		c->ops->decided(c, c->decide_r, br);
	}
}
