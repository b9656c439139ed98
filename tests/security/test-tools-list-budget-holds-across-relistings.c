/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Issue 11 finding 4: the tools/list page budget reset on every re-listing.
 * A connector that sent notifications/tools/list_changed every 90 pages (and
 * abandoned the cursor chain) got 400-600 pages accepted against a limit of
 * 100, cordond grew to 850 MiB and its database to 1.15 GB.
 *
 * Requirement: the page, byte and tool budgets hold per instance across
 * re-listings and list_changed storms (one listing at a time, re-listings
 * rate-limited); beyond them the instance is stopped with a named reason.
 *
 * Real cordond core (tests/e2e/daemon-harness.c) with the real hostile
 * connector (tests/helpers/evil-connector):
 *  - list-storm-abandon: after the first call, an endless cursor chain with
 *    list_changed every 90 pages;
 *  - list-storm-complete: chains of 90 pages that end, each followed by
 *    list_changed (complete re-listings);
 *  - list-storm-wide: complete re-listings of 10 pages of 200 tools (tool
 *    budget 4096, across listings of 2000);
 *  - list-storm-heavy: the abandoned chain with a 3 MiB page (byte budget
 *    16 MiB).
 * Each asserts: the instance is stopped with the exact reason in the log and
 * in the connector's last_error (operator connectors.list), the connector
 * received exactly as many tools/list requests as the budget allows (its
 * first listing included: the budget is the instance's, not the listing's),
 * and cordond's RSS and database grew by bounded amounts (printed). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "sec-evil-daemon.h"

#define REASON_PAGES "stopped: tools/list budget exceeded (more than 100 pages within 60 s)"
#define REASON_TOOLS "stopped: tools/list budget exceeded (more than 4096 tools within 60 s)"
#define REASON_BYTES "stopped: tools/list budget exceeded (more than 16777216 bytes within 60 s)"

/* want_requests: the tools/list requests the budget lets through. */
static void storm(const char *mode, const char *reason, long want_requests, long rss_budget_kib,
		  long long db_budget_bytes)
{
	char lists[700];
	struct mcp_peer p;
	json_t *r, *conns, *c;
	long id, rss0, rss1, requests;
	long long db0, db1;
	size_t i;
	bool found = false;

	harness_setup(&H, "sec-listbudget");
	snprintf(lists, sizeof(lists), "%s/lists", H.data);
	evil_profile(mode, lists, NULL);
	harness_start(&H);
	evil_review_all();
	rss0 = cordon_test_rss_kib(H.daemon_pid);
	db0 = evil_db_bytes();

	evil_session(&p);
	id = mcp_peer_send_request(&p, "tools/call", json_pack("{s:s, s:{}}", "name", "fake__append", "arguments"));
	r = evil_response(&p, id, 30000, NULL);
	assert_non_null(r);
	assert_string_equal(result_text(json_object_get(r, "result")), "storm");
	json_decref(r);

	/* The storm runs until cordond stops the instance. */
	assert_true(evil_log_wait(reason, 60000));
	requests = evil_read_number(lists);
	rss1 = cordon_test_rss_kib(H.daemon_pid);
	db1 = evil_db_bytes();
	printf("  %s: %ld tools/list requests to the instance; cordond RSS %ld -> %ld KiB; db %lld -> %lld bytes\n",
	       mode, requests, rss0, rss1, db0, db1);
	assert_int_equal(requests, want_requests);
	assert_int_equal(evil_log_count(reason), 1);
	assert_true(rss1 - rss0 < rss_budget_kib);
	assert_true(db1 - db0 < db_budget_bytes);

	/* Reported: the connector's last error names the reason. */
	conns = evil_operator("connectors.list", json_object());
	json_array_foreach(json_object_get(conns, "result"), i,
			   c) if (!strcmp(json_string_value(json_object_get(c, "id")), "fake"))
	{
		found = true;
		printf("  last_error: %s\n", json_string_value(json_object_get(c, "last_error")));
		assert_non_null(strstr(json_string_value(json_object_get(c, "last_error")), reason));
	}
	assert_true(found);
	json_decref(conns);

	/* cordond still serves. */
	r = mcp_peer_request(&p, "ping", NULL, 5000);
	assert_non_null(r);
	assert_non_null(json_object_get(r, "result"));
	json_decref(r);
	mcp_peer_disconnect(&p);
}

static void test_abandoned_cursor_chains_share_one_budget(void **state)
{
	(void)state;
	/* The instance's first listing (1 page) plus 99 storm pages: the
	 * 100th page is the last one accepted, no 101st is ever requested. */
	storm("list-storm-abandon", REASON_PAGES, 100, 16 * 1024, 4ll << 20);
}

static void test_complete_relistings_share_one_budget(void **state)
{
	(void)state;
	storm("list-storm-complete", REASON_PAGES, 100, 16 * 1024, 4ll << 20);
}

static void test_tool_budget_holds(void **state)
{
	(void)state;
	/* 1 + 20 × 200 = 4001 tools accepted in two complete listings of
	 * 2000 (each within the per-listing limit); the 21st storm page (4201)
	 * is refused. */
	/* The database takes the 2000 tools of the one complete listing
	 * (their rows, audit records and WAL: ~3.5 MiB measured). */
	storm("list-storm-wide", REASON_TOOLS, 22, 32 * 1024, 16ll << 20);
}

static void test_byte_budget_holds(void **state)
{
	(void)state;
	/* 3 MiB pages: 5 fit in 16 MiB with the first listing, the 6th is
	 * refused. cordond holds at most one listing's pages (15 MiB). */
	storm("list-storm-heavy", REASON_BYTES, 7, 64 * 1024, 4ll << 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_abandoned_cursor_chains_share_one_budget, evil_teardown),
		cmocka_unit_test_teardown(test_complete_relistings_share_one_budget, evil_teardown),
		cmocka_unit_test_teardown(test_tool_budget_holds, evil_teardown),
		cmocka_unit_test_teardown(test_byte_budget_holds, evil_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
