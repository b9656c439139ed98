/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Issue 11 finding 9 (first item): every re-listing made cordond send
 * notifications/tools/list_changed to every session, even when nothing had
 * changed (3000 of them, each a re-inventory transaction).
 *
 * Requirement: sessions get notifications/tools/list_changed only when the
 * connector's tools really changed (the re-inventory added, changed,
 * reverted or removed a tool), at most once a second per connector, and a
 * connector's list_changed storm coalesces into rate-limited re-listings.
 *
 * Real cordond core with the real evil-connector in mode list-changed-same:
 *  - first call: 50 list_changed with an identical list: the connector gets
 *    at most 2 re-listings, an observing session gets 0 notifications;
 *  - second call: the description of `append` changes, one list_changed:
 *    the observer gets exactly 1 notification, and the changed tool is
 *    `changed` in the inventory. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "sec-evil-daemon.h"

/* Polls the connector's tools/list count until it has reached at least
 * `min` and then not moved for 1.5 s (longer than the re-listing interval,
 * so a rate-limited re-listing would have started). */
static long settle(const char *lists, long min)
{
	long last = -1, now;
	int stable_ms = 0;

	for (int waited = 0; waited < 20000; waited += 50) {
		now = evil_read_number(lists);
		if (now == last && now >= min)
			stable_ms += 50;
		else
			stable_ms = 0;
		last = now;
		if (stable_ms >= 1500)
			return now;
		usleep(50 * 1000);
	}
	fail_msg("the connector's tools/list count did not settle (last %ld, want >= %ld)", last, min);
	return -1;
}

/* Counts list_changed notifications the observer has been sent so far (a
 * ping's answer marks the end of what is queued). */
static unsigned drain(struct mcp_peer *obs)
{
	unsigned n = 0;
	long id = mcp_peer_send_request(obs, "ping", NULL);
	json_t *r = evil_response(obs, id, 5000, &n);

	assert_non_null(r);
	json_decref(r);
	return n;
}

static void test_list_changed_only_on_real_change(void **state)
{
	char lists[700];
	struct mcp_peer obs, p;
	json_t *r;
	long id, base, after_storm, after_change;
	unsigned n;
	struct cordon_inventory_record rec = {};
	struct cordon_db *db;

	(void)state;
	harness_setup(&H, "sec-listchanged");
	snprintf(lists, sizeof(lists), "%s/lists", H.data);
	evil_profile("list-changed-same", lists, NULL);
	harness_start(&H);
	evil_review_all();
	evil_session(&obs);
	evil_session(&p);

	/* The call starts the shared instance (its first listing). */
	id = mcp_peer_send_request(&p, "tools/call", json_pack("{s:s, s:{}}", "name", "fake__append", "arguments"));
	r = evil_response(&p, id, 30000, NULL);
	assert_non_null(r);
	assert_string_equal(result_text(json_object_get(r, "result")), "ok");
	json_decref(r);
	/* The storm of 50 identical list_changed. */
	base = 1; /* the instance's first listing */
	after_storm = settle(lists, base + 1);
	printf("  50 list_changed with an identical list: %ld re-listing(s)\n", after_storm - base);
	assert_true(after_storm - base >= 1 && after_storm - base <= 2);
	n = drain(&obs);
	printf("  notifications to the observing session: %u\n", n);
	assert_int_equal(n, 0);

	/* One real change. */
	id = mcp_peer_send_request(&p, "tools/call", json_pack("{s:s, s:{}}", "name", "fake__append", "arguments"));
	r = evil_response(&p, id, 30000, NULL);
	assert_non_null(r);
	json_decref(r);
	after_change = settle(lists, after_storm + 1);
	assert_int_equal(after_change, after_storm + 1);
	n = drain(&obs);
	printf("  after one real change: %u notification(s)\n", n);
	assert_int_equal(n, 1);

	db = harness_db(&H);
	assert_int_equal(cordon_inventory_get(db, "fake", "append", &rec), 0);
	assert_int_equal(rec.state, CORDON_INVENTORY_CHANGED);
	cordon_inventory_record_done(&rec);
	cordon_db_close(db);
	mcp_peer_disconnect(&p);
	mcp_peer_disconnect(&obs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_list_changed_only_on_real_change, evil_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
