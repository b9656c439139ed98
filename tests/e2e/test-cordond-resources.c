/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Resources through the real cordond (issue 13, "Resources" and the
 * pagination of "Initialize"): the real binary and launcher helper, the fake
 * connector in real sandboxes as ra and rb (--resources: the same 252 URIs
 * each, a template, subscribe) and plain (one resource, no subscribe).
 * Reads need no listing in either view; the multiplexed view names URIs
 * cordon+<connector>:<uri>, so ra's and rb's fake://same stay apart; a
 * template expands and reads; lists come in pages of 100 with every item
 * exactly once and a bad cursor refused; resources.subscribe is announced
 * only when a connector the session sees has it; an update reaches only
 * the sessions subscribed to the URI, and the shared instance is
 * unsubscribed when the last of them unsubscribes or ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cordond-runner.h"
#include "daemon-harness.h"
#include "test-support.h"

static struct rcd C;

/* A session bound to connector (NULL: multiplexed); its initialize
 * capabilities in *caps (new reference) when caps is not NULL. */
static void session(struct mcp_peer *p, const char *connector, json_t **caps)
{
	json_t *r;

	assert_int_equal(mcp_peer_connect(p, C.gateway), 0);
	if (connector) {
		r = rcd_req(p, "cordon/bind", json_pack("{s:s}", "connector", connector));
		assert_non_null(json_object_get(r, "result"));
		json_decref(r);
	}
	r = mcp_peer_initialize(p, "2025-11-25");
	assert_non_null(r);
	if (caps)
		*caps = json_incref(json_object_get(r, "capabilities"));
	json_decref(r);
}

/* resources/read of uri: the text of its first content, which must name
 * want_uri. */
static void read_is(struct mcp_peer *p, const char *uri, const char *want_uri, const char *want_text)
{
	json_t *r = rcd_req(p, "resources/read", json_pack("{s:s}", "uri", uri));
	json_t *c = json_array_get(json_object_get(json_object_get(r, "result"), "contents"), 0);

	if (!c)
		fail_msg("read %s: %s", uri, rcd_err_message(r));
	assert_string_equal(json_string_value(json_object_get(c, "uri")), want_uri);
	assert_string_equal(json_string_value(json_object_get(c, "text")), want_text);
	json_decref(r);
}

static void refused(struct mcp_peer *p, const char *method, json_t *params, long code, const char *text)
{
	json_t *r = rcd_req(p, method, params);

	assert_int_equal(rcd_err_code(r), code);
	if (!strstr(rcd_err_message(r), text))
		fail_msg("%s: message '%s' lacks '%s'", method, rcd_err_message(r), text);
	json_decref(r);
}

/* How many updates (other than in a response's wake) p hears: pings once
 * and counts what came before the answer; the URI of the last in *last. */
static size_t updates_heard(struct mcp_peer *p, char *last, size_t size)
{
	json_t *u, *r = rcd_request_collecting(p, "ping", NULL, "notifications/resources/updated", &u);
	size_t n = json_array_size(u);

	if (last)
		snprintf(last, size, "%s",
			 n ? json_string_value(json_object_get(json_array_get(u, n - 1), "uri")) : "");
	json_decref(r);
	json_decref(u);
	return n;
}

/* touch (the fake connector's) through p as tool name: its text. */
static char *touch(struct mcp_peer *p, const char *tool, const char *uri, size_t *ret_updates)
{
	json_t *u, *r = rcd_request_collecting(p, "tools/call",
					       json_pack("{s:s, s:{s:s}}", "name", tool, "arguments", "text", uri),
					       "notifications/resources/updated", &u);
	const char *t = json_string_value(
		json_object_get(json_array_get(json_object_get(json_object_get(r, "result"), "content"), 0), "text"));
	char *out;

	assert_non_null(t);
	out = strdup(t);
	if (ret_updates)
		*ret_updates = json_array_size(u);
	json_decref(u);
	json_decref(r);
	return out;
}

static void test_capabilities(void **state)
{
	struct mcp_peer m, b;
	json_t *caps;

	(void)state;
	session(&m, NULL, &caps);
	assert_true(json_is_true(json_object_get(json_object_get(caps, "resources"), "subscribe")));
	assert_true(json_is_true(json_object_get(json_object_get(caps, "resources"), "listChanged")));
	json_decref(caps);
	session(&b, "plain", &caps);
	assert_true(json_is_object(json_object_get(caps, "resources")));
	assert_null(json_object_get(json_object_get(caps, "resources"), "subscribe"));
	assert_null(json_object_get(json_object_get(caps, "resources"), "listChanged"));
	json_decref(caps);
	refused(&b, "resources/subscribe", json_pack("{s:s}", "uri", "fake://note"), -32601, "does not offer");
	mcp_peer_disconnect(&b);
	mcp_peer_disconnect(&m);
}

static void test_read_without_listing(void **state)
{
	struct mcp_peer m, b;
	char big[5000];

	(void)state;
	/* Bound: the connector's own URIs, a template expansion included. */
	session(&b, "ra", NULL);
	read_is(&b, "fake://tpl/x", "fake://tpl/x", "ra fake://tpl/x");
	read_is(&b, "fake://same", "fake://same", "ra fake://same");
	mcp_peer_disconnect(&b);
	/* Multiplexed: the same URI of two connectors, apart. */
	session(&m, NULL, NULL);
	read_is(&m, "cordon+rb:fake://same", "cordon+rb:fake://same", "rb fake://same");
	read_is(&m, "cordon+ra:fake://same", "cordon+ra:fake://same", "ra fake://same");
	read_is(&m, "cordon+plain:fake://note", "cordon+plain:fake://note", "a note");
	refused(&m, "resources/read", json_pack("{s:s}", "uri", "fake://same"), -32602, "several connectors");
	refused(&m, "resources/read", json_pack("{s:s}", "uri", "cordon+nope:fake://same"), -32602,
		"no connector 'nope'");
	refused(&m, "resources/read", json_pack("{s:s}", "uri", "cordon+RA:fake://same"), -32602, "no connector");
	refused(&m, "resources/read", json_pack("{s:s}", "uri", "cordon+ra:"), -32602, "cordon+<connector>:<uri>");
	refused(&m, "resources/read", json_pack("{s:i}", "uri", 3), -32602, "uri must be");
	memset(big, 'u', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	memcpy(big, "cordon+ra:", 10);
	refused(&m, "resources/read", json_pack("{s:s}", "uri", big), -32602, "longer than 4096");
	mcp_peer_disconnect(&m);
}

/* tools/call of tool (link) with uri: the URIs of its resource_link and
 * embedded resource items must both be want, and its text item uri. */
static void link_is(struct mcp_peer *p, const char *tool, const char *uri, const char *want)
{
	json_t *r = rcd_req(p, "tools/call", json_pack("{s:s, s:{s:s}}", "name", tool, "arguments", "text", uri));
	json_t *content = json_object_get(json_object_get(r, "result"), "content");

	if (json_array_size(content) != 3)
		fail_msg("%s: %s", tool, rcd_err_message(r));
	assert_string_equal(json_string_value(json_object_get(json_array_get(content, 0), "type")), "resource_link");
	assert_string_equal(json_string_value(json_object_get(json_array_get(content, 0), "uri")), want);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(json_array_get(content, 1), "resource"), "uri")),
		want);
	/* Text is the connector's own: never rewritten. */
	assert_string_equal(json_string_value(json_object_get(json_array_get(content, 2), "text")), uri);
	json_decref(r);
}

/* A resource_link a tool returned reads back from that connector: in the
 * multiplexed view its URI carries the connector's prefix (two connectors
 * linking the same URI stay apart); bound, it is the connector's own. */
static void test_resource_links(void **state)
{
	struct mcp_peer m, b;

	(void)state;
	session(&m, NULL, NULL);
	link_is(&m, "ra__link", "fake://same", "cordon+ra:fake://same");
	link_is(&m, "rb__link", "fake://same", "cordon+rb:fake://same");
	read_is(&m, "cordon+rb:fake://same", "cordon+rb:fake://same", "rb fake://same");
	mcp_peer_disconnect(&m);
	session(&b, "rb", NULL);
	link_is(&b, "link", "fake://tpl/y", "fake://tpl/y");
	read_is(&b, "fake://tpl/y", "fake://tpl/y", "rb fake://tpl/y");
	mcp_peer_disconnect(&b);
}

/* Every page of method's list (key) in p, each item's member field once
 * into *seen; returns the number of pages and the last cursor in *cur. */
static int all_pages(struct mcp_peer *p, const char *method, const char *key, const char *field, json_t *seen,
		     char *cur, size_t cur_size)
{
	json_t *params = NULL;
	int pages = 0;

	cur[0] = 0;
	for (;;) {
		json_t *r = rcd_req(p, method, params), *res = json_object_get(r, "result"), *x;
		const char *next;
		size_t i;

		assert_non_null(res);
		assert_true(json_array_size(json_object_get(res, key)) <= 100);
		json_array_foreach(json_object_get(res, key), i, x)
		{
			const char *v = json_string_value(json_object_get(x, field));

			assert_non_null(v);
			if (json_object_get(seen, v))
				fail_msg("%s: %s twice", method, v);
			json_object_set_new(seen, v, json_true());
		}
		pages++;
		next = json_string_value(json_object_get(res, "nextCursor"));
		if (!next) {
			json_decref(r);
			return pages;
		}
		assert_true(json_array_size(json_object_get(res, key)) == 100);
		snprintf(cur, cur_size, "%s", next);
		params = json_pack("{s:s}", "cursor", next);
		json_decref(r);
	}
}

static void test_pages_and_templates(void **state)
{
	struct mcp_peer m, b;
	json_t *seen = json_object(), *r, *t;
	char cur[128], uri[256];
	const char *tpl = NULL;
	size_t i;

	(void)state;
	session(&m, NULL, NULL);
	/* ra and rb: 252 each, over three upstream pages; plain: 1. */
	assert_int_equal(all_pages(&m, "resources/list", "resources", "uri", seen, cur, sizeof(cur)), 6);
	assert_int_equal(json_object_size(seen), 505);
	assert_non_null(json_object_get(seen, "cordon+ra:fake://same"));
	assert_non_null(json_object_get(seen, "cordon+rb:fake://same"));
	assert_non_null(json_object_get(seen, "cordon+rb:fake://item/249"));
	assert_non_null(json_object_get(seen, "cordon+plain:fake://note"));
	/* A cursor that is not one this session was given. */
	refused(&m, "resources/list", json_pack("{s:s}", "cursor", "x"), -32602, "Invalid params: unknown cursor");
	refused(&m, "resources/list", json_pack("{s:s}", "cursor", "99.100"), -32602, "unknown cursor");
	refused(&m, "resources/list", json_pack("{s:i}", "cursor", 100), -32602, "unknown cursor");
	refused(&m, "resources/templates/list", json_pack("{s:s}", "cursor", cur), -32602, "unknown cursor");
	refused(&m, "tools/list", json_pack("{s:s}", "cursor", cur), -32602, "unknown cursor");
	/* A new listing replaces the old one: its cursors are gone. */
	r = rcd_req(&m, "resources/list", NULL);
	assert_non_null(json_object_get(json_object_get(r, "result"), "nextCursor"));
	json_decref(r);
	refused(&m, "resources/list", json_pack("{s:s}", "cursor", cur), -32602, "unknown cursor");
	/* A list within one page has no cursor. */
	r = rcd_req(&m, "tools/list", NULL);
	assert_null(json_object_get(json_object_get(r, "result"), "nextCursor"));
	assert_true(json_array_size(json_object_get(json_object_get(r, "result"), "tools")) > 3);
	json_decref(r);
	/* Templates, namespaced by a prefix: they expand as they are. */
	r = rcd_req(&m, "resources/templates/list", NULL);
	json_array_foreach(json_object_get(json_object_get(r, "result"), "resourceTemplates"), i, t)
	{
		const char *v = json_string_value(json_object_get(t, "uriTemplate"));

		if (v && !strcmp(v, "cordon+rb:fake://tpl/{name}"))
			tpl = v;
	}
	assert_non_null(tpl);
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "resourceTemplates")), 2);
	snprintf(uri, sizeof(uri), "%.*shello", (int)(strlen(tpl) - strlen("{name}")), tpl);
	json_decref(r);
	read_is(&m, uri, "cordon+rb:fake://tpl/hello", "rb fake://tpl/hello");
	mcp_peer_disconnect(&m);
	/* The bound view pages too, with the connector's own URIs. */
	json_decref(seen);
	seen = json_object();
	session(&b, "rb", NULL);
	assert_int_equal(all_pages(&b, "resources/list", "resources", "uri", seen, cur, sizeof(cur)), 3);
	assert_int_equal(json_object_size(seen), 252);
	assert_non_null(json_object_get(seen, "fake://same"));
	mcp_peer_disconnect(&b);
	json_decref(seen);
}

static void test_subscribe(void **state)
{
	struct mcp_peer a, b, q;
	char last[256], *t;
	size_t n;
	json_t *r;

	(void)state;
	session(&a, NULL, NULL);
	session(&b, "ra", NULL);
	session(&q, NULL, NULL);
	r = rcd_req(&a, "resources/subscribe", json_pack("{s:s}", "uri", "cordon+ra:fake://same"));
	assert_int_equal(json_object_size(json_object_get(r, "result")), 0);
	json_decref(r);
	/* b (not subscribed) makes ra say fake://same changed: only a hears. */
	t = touch(&b, "touch", "fake://same", &n);
	assert_string_equal(t, "subs: fake://same");
	assert_int_equal(n, 0);
	free(t);
	assert_int_equal(updates_heard(&a, last, sizeof(last)), 1);
	assert_string_equal(last, "cordon+ra:fake://same");
	assert_int_equal(updates_heard(&q, NULL, 0), 0);
	/* Another URI, or rb's fake://same: nobody. */
	free(touch(&b, "touch", "fake://item/1", NULL));
	free(touch(&q, "rb__touch", "fake://same", NULL));
	assert_int_equal(updates_heard(&a, NULL, 0), 0);
	/* b subscribes as well; a unsubscribes: the connector keeps it for b. */
	r = rcd_req(&b, "resources/subscribe", json_pack("{s:s}", "uri", "fake://same"));
	assert_non_null(json_object_get(r, "result"));
	json_decref(r);
	r = rcd_req(&a, "resources/unsubscribe", json_pack("{s:s}", "uri", "cordon+ra:fake://same"));
	assert_non_null(json_object_get(r, "result"));
	json_decref(r);
	t = touch(&q, "ra__touch", "fake://same", NULL);
	assert_string_equal(t, "subs: fake://same");
	free(t);
	assert_int_equal(updates_heard(&a, NULL, 0), 0);
	assert_int_equal(updates_heard(&b, last, sizeof(last)), 1);
	assert_string_equal(last, "fake://same");
	/* b ends: nobody wants it, the connector is unsubscribed. */
	mcp_peer_disconnect(&b);
	for (int i = 0; i < 50; i++) {
		t = touch(&q, "ra__touch", "fake://item/2", NULL);
		if (!strcmp(t, "subs:"))
			break;
		free(t);
		t = NULL;
		usleep(100 * 1000);
	}
	assert_non_null(t);
	free(t);
	/* The bound: subscriptions per session. */
	refused(&a, "resources/subscribe", json_pack("{s:s}", "uri", "cordon+plain:fake://note"), -32601,
		"does not offer");
	for (int i = 0; i < 256; i++) {
		char u[64];

		snprintf(u, sizeof(u), "cordon+rb:fake://item/%d", i);
		r = rcd_req(&a, "resources/subscribe", json_pack("{s:s}", "uri", u));
		assert_non_null(json_object_get(r, "result"));
		json_decref(r);
	}
	refused(&a, "resources/subscribe", json_pack("{s:s}", "uri", "cordon+rb:fake://same"), -32000,
		"at most 256 resource subscriptions");
	mcp_peer_disconnect(&a);
	mcp_peer_disconnect(&q);
}

static int setup(void **state)
{
	static const char tools[] = "  risk: {echo: read, touch: read, link: read}\n  grant: [echo, touch, link]\n";

	(void)state;
	rcd_fake_profile(
		&C, "ra",
		&(struct rcd_fake_options){ .arg = "--resources=ra", .tools = tools, .tail = "resources: read\n" });
	rcd_fake_profile(
		&C, "rb",
		&(struct rcd_fake_options){ .arg = "--resources=rb", .tools = tools, .tail = "resources: read\n" });
	rcd_fake_profile(&C, "plain", &(struct rcd_fake_options){ .tail = "resources: read\n" });
	rcd_start(&C);
	rcd_install(&C, "ra");
	rcd_install(&C, "rb");
	rcd_install(&C, "plain");
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capabilities),   cmocka_unit_test(test_read_without_listing),
		cmocka_unit_test(test_resource_links), cmocka_unit_test(test_pages_and_templates),
		cmocka_unit_test(test_subscribe),
	};
	int r;

	if (geteuid() != 0)
		cordon_test_skip("needs root (cordond drops to nobody; the launcher builds sandboxes)");
	if (!cordon_test_env("CORDON_BUILD_DIR", NULL))
		cordon_test_skip("CORDON_BUILD_DIR not set");
	rcd_setup(&C, "resources");
	r = cmocka_run_group_tests(tests, setup, NULL);
	if (C.pid > 0)
		rcd_stop_clean(&C);
	rcd_teardown(&C, r != 0);
	return r;
}
