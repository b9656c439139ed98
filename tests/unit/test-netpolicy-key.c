/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Rule → trie key conversion and the denial-event line format; no kernel
 * needed (the kernel test attaches the real programs). */

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <cmocka.h>

#include "netpolicy.h"
#include "test-support.h"

static struct cordon_net_rule rule(int family, const char *addr, unsigned plen)
{
	struct cordon_net_rule r = { .family = family, .prefix_len = (uint8_t)plen, .protocols = CORDON_PROTO_TCP };

	assert_int_equal(inet_pton(family, addr, r.addr), 1);
	return r;
}

static void expect_key(const struct cordon_netpolicy_key *k, uint64_t cgid, int family, const char *addr, unsigned plen)
{
	uint8_t want[16] = { 0 };

	assert_int_equal(inet_pton(family, addr, want), 1);
	assert_int_equal(k->cgroup_id, cgid);
	assert_int_equal(k->family, family);
	assert_int_equal(k->prefixlen, 96 + plen);
	assert_memory_equal(k->addr, want, 16);
}

static void test_key_ipv4(void **state)
{
	struct cordon_netpolicy_key k;
	struct cordon_net_rule r;

	r = rule(AF_INET, "140.82.112.0", 20);
	assert_int_equal(cordon_netpolicy_rule_key(42, &r, &k), 0);
	expect_key(&k, 42, AF_INET, "140.82.112.0", 20);

	r = rule(AF_INET, "127.0.0.2", 32);
	assert_int_equal(cordon_netpolicy_rule_key(7, &r, &k), 0);
	expect_key(&k, 7, AF_INET, "127.0.0.2", 32);

	r = rule(AF_INET, "0.0.0.0", 0);
	assert_int_equal(cordon_netpolicy_rule_key(7, &r, &k), 0);
	expect_key(&k, 7, AF_INET, "0.0.0.0", 0);
}

static void test_key_ipv4_host_bits_cleared(void **state)
{
	struct cordon_netpolicy_key k;
	struct cordon_net_rule r = rule(AF_INET, "10.1.2.3", 8);

	assert_int_equal(cordon_netpolicy_rule_key(1, &r, &k), 0);
	expect_key(&k, 1, AF_INET, "10.0.0.0", 8);

	r = rule(AF_INET, "192.30.255.255", 22);
	assert_int_equal(cordon_netpolicy_rule_key(1, &r, &k), 0);
	expect_key(&k, 1, AF_INET, "192.30.252.0", 22);

	r = rule(AF_INET, "0.0.0.0", 0);
	r.addr[0] = 0xff; /* /0 ignores every bit */
	assert_int_equal(cordon_netpolicy_rule_key(1, &r, &k), 0);
	expect_key(&k, 1, AF_INET, "0.0.0.0", 0);
}

static void test_key_ipv6(void **state)
{
	struct cordon_netpolicy_key k;
	struct cordon_net_rule r;

	r = rule(AF_INET6, "2a0a:a440::", 29);
	assert_int_equal(cordon_netpolicy_rule_key(99, &r, &k), 0);
	expect_key(&k, 99, AF_INET6, "2a0a:a440::", 29);

	r = rule(AF_INET6, "2a0a:a447:ffff::1", 29); /* host bits beyond /29 */
	assert_int_equal(cordon_netpolicy_rule_key(99, &r, &k), 0);
	expect_key(&k, 99, AF_INET6, "2a0a:a440::", 29);

	r = rule(AF_INET6, "::1", 128);
	assert_int_equal(cordon_netpolicy_rule_key(99, &r, &k), 0);
	expect_key(&k, 99, AF_INET6, "::1", 128);

	r = rule(AF_INET6, "::", 0);
	assert_int_equal(cordon_netpolicy_rule_key(99, &r, &k), 0);
	expect_key(&k, 99, AF_INET6, "::", 0);
}

static void test_key_mapped_ipv6_is_ipv4(void **state)
{
	struct cordon_netpolicy_key k;
	struct cordon_net_rule r;

	r = rule(AF_INET6, "::ffff:127.0.0.3", 128);
	assert_int_equal(cordon_netpolicy_rule_key(5, &r, &k), 0);
	expect_key(&k, 5, AF_INET, "127.0.0.3", 32);

	r = rule(AF_INET6, "::ffff:192.0.2.77", 120);
	assert_int_equal(cordon_netpolicy_rule_key(5, &r, &k), 0);
	expect_key(&k, 5, AF_INET, "192.0.2.0", 24);

	/* The whole mapped range is all of IPv4. */
	r = rule(AF_INET6, "::ffff:0.0.0.0", 96);
	assert_int_equal(cordon_netpolicy_rule_key(5, &r, &k), 0);
	expect_key(&k, 5, AF_INET, "0.0.0.0", 0);

	/* Shorter than /96 it is an IPv6 prefix that merely contains the
	 * mapped range: it stays IPv6 (mapped destinations are judged by the
	 * IPv4 rules only). */
	r = rule(AF_INET6, "::ffff:0.0.0.0", 95);
	assert_int_equal(cordon_netpolicy_rule_key(5, &r, &k), 0);
	expect_key(&k, 5, AF_INET6, "::fffe:0:0", 95);

	/* IPv4-compatible (::a.b.c.d) is not mapped. */
	r = rule(AF_INET6, "::127.0.0.3", 128);
	assert_int_equal(cordon_netpolicy_rule_key(5, &r, &k), 0);
	expect_key(&k, 5, AF_INET6, "::127.0.0.3", 128);
}

static void test_key_invalid(void **state)
{
	struct cordon_netpolicy_key k = { .prefixlen = 12345 };
	struct cordon_net_rule r;

	r = rule(AF_INET, "10.0.0.0", 8);
	r.prefix_len = 33;
	assert_int_equal(cordon_netpolicy_rule_key(1, &r, &k), -EINVAL);
	r = rule(AF_INET6, "::1", 128);
	r.prefix_len = 129;
	assert_int_equal(cordon_netpolicy_rule_key(1, &r, &k), -EINVAL);
	r.family = AF_UNIX;
	r.prefix_len = 8;
	assert_int_equal(cordon_netpolicy_rule_key(1, &r, &k), -EINVAL);
	r.family = 0;
	assert_int_equal(cordon_netpolicy_rule_key(1, &r, &k), -EINVAL);
	assert_int_equal(k.prefixlen, 12345); /* ret_ untouched on failure */
}

static uint64_t mono_now(void)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void test_event_format(void **state)
{
	struct cordon_netpolicy_event ev = {
		.cgroup_id = 12345,
		.pid = 4242,
		.family = AF_INET,
		.port = 8443,
		.protocol = IPPROTO_TCP,
		.sock_type = SOCK_STREAM,
		.mapped = true,
		.hook = CORDON_NETPOLICY_HOOK_CONNECT6,
		.comm = "node",
	};
	char line[CORDON_NETPOLICY_EVENT_LINE_MAX];
	json_error_t err;
	json_t *o;
	int n;

	ev.time_ns = mono_now();
	assert_int_equal(inet_pton(AF_INET, "127.0.0.3", ev.addr), 1);
	n = cordon_netpolicy_event_format(&ev, line, sizeof(line));
	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(line));
	assert_null(strchr(line, '\n'));
	static const char prefix[] = "{\"event\":\"net-deny\",\"hook\":\"connect6\",\"cgroup_id\":12345,\"pid\":4242,"
				     "\"comm\":\"node\",\"family\":\"inet\",\"addr\":\"127.0.0.3\",\"port\":8443,"
				     "\"protocol\":\"tcp\",\"sock_type\":\"stream\",\"mapped\":true,\"time\":\"";
	assert_memory_equal(line, prefix, strlen(prefix));

	o = json_loads(line, 0, &err);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "addr")), "127.0.0.3");
	assert_int_equal(json_integer_value(json_object_get(o, "mono_ns")), (json_int_t)ev.time_ns);
	/* RFC 3339 UTC with nanoseconds: 2026-11-29T21:03:04.123456789Z */
	const char *when = json_string_value(json_object_get(o, "time"));
	assert_non_null(when);
	assert_int_equal(strlen(when), 30);
	assert_int_equal(when[10], 'T');
	assert_int_equal(when[29], 'Z');
	json_decref(o);
}

static void test_event_format_v6_and_sock_create(void **state)
{
	struct cordon_netpolicy_event ev = {
		.family = AF_INET6,
		.port = 443,
		.protocol = IPPROTO_UDP,
		.sock_type = SOCK_DGRAM,
		.hook = CORDON_NETPOLICY_HOOK_SENDMSG6,
	};
	char line[CORDON_NETPOLICY_EVENT_LINE_MAX];

	ev.time_ns = mono_now();
	assert_int_equal(inet_pton(AF_INET6, "2606:50c0::1", ev.addr), 1);
	assert_true(cordon_netpolicy_event_format(&ev, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, "\"hook\":\"sendmsg6\""));
	assert_non_null(
		strstr(line, "\"family\":\"inet6\",\"addr\":\"2606:50c0::1\",\"port\":443,\"protocol\":\"udp\""));

	memset(&ev, 0, sizeof(ev));
	ev.time_ns = mono_now();
	ev.family = AF_PACKET;
	ev.protocol = 768; /* htons(ETH_P_ALL) as the socket stores it */
	ev.sock_type = SOCK_RAW;
	ev.hook = CORDON_NETPOLICY_HOOK_SOCK_CREATE;
	assert_true(cordon_netpolicy_event_format(&ev, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, "\"hook\":\"sock_create\""));
	assert_non_null(strstr(
		line, "\"family\":\"packet\",\"addr\":\"\",\"port\":0,\"protocol\":\"768\",\"sock_type\":\"raw\""));
}

static void test_event_format_hostile_comm(void **state)
{
	struct cordon_netpolicy_event ev = { .family = AF_INET, .hook = CORDON_NETPOLICY_HOOK_CONNECT4 };
	char line[CORDON_NETPOLICY_EVENT_LINE_MAX];

	ev.time_ns = mono_now();
	memcpy(ev.comm, "a\"b\n\\c\xff\x01z", 10);
	assert_true(cordon_netpolicy_event_format(&ev, line, sizeof(line)) > 0);
	assert_null(strchr(line, '\n'));
	assert_non_null(strstr(line, "\"comm\":\"a\\\"b?\\\\c??z\""));

	/* A comm without its NUL is cut at 15 bytes. */
	memset(ev.comm, 'x', sizeof(ev.comm));
	assert_true(cordon_netpolicy_event_format(&ev, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, "\"comm\":\"xxxxxxxxxxxxxxx\""));
}

static void test_event_format_small_buffer(void **state)
{
	struct cordon_netpolicy_event ev = { .family = AF_INET, .hook = CORDON_NETPOLICY_HOOK_BIND4 };
	char line[64];

	ev.time_ns = mono_now();
	assert_int_equal(cordon_netpolicy_event_format(&ev, line, sizeof(line)), -ENOBUFS);
}

static void test_hook_names(void **state)
{
	assert_string_equal(cordon_netpolicy_hook_to_string(CORDON_NETPOLICY_HOOK_CONNECT4), "connect4");
	assert_string_equal(cordon_netpolicy_hook_to_string(CORDON_NETPOLICY_HOOK_BIND6), "bind6");
	assert_string_equal(cordon_netpolicy_hook_to_string(CORDON_NETPOLICY_HOOK_SOCK_CREATE), "sock_create");
	assert_string_equal(cordon_netpolicy_hook_to_string(CORDON_NETPOLICY_HOOK_INGRESS_LISTEN), "ingress_listen");
	assert_string_equal(cordon_netpolicy_hook_to_string(CORDON_NETPOLICY_HOOK_INGRESS_UDP), "ingress_udp");
	assert_null(cordon_netpolicy_hook_to_string((enum cordon_netpolicy_hook)0));
	assert_null(cordon_netpolicy_hook_to_string((enum cordon_netpolicy_hook)99));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_ipv4),
		cmocka_unit_test(test_key_ipv4_host_bits_cleared),
		cmocka_unit_test(test_key_ipv6),
		cmocka_unit_test(test_key_mapped_ipv6_is_ipv4),
		cmocka_unit_test(test_key_invalid),
		cmocka_unit_test(test_event_format),
		cmocka_unit_test(test_event_format_v6_and_sock_create),
		cmocka_unit_test(test_event_format_hostile_comm),
		cmocka_unit_test(test_event_format_small_buffer),
		cmocka_unit_test(test_hook_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
