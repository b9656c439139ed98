/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: when Landlock is the only layer that checks TCP
 * destinations, TCP Fast Open cannot reach a denied port (issue 11,
 * finding 7).
 *
 * sendto/sendmsg/sendmmsg with MSG_FASTOPEN connect from inside the TCP
 * send path, which Landlock's LANDLOCK_ACCESS_NET_CONNECT_TCP hook does not
 * see (the review, and this machine's 6.18 kernel with Landlock alone,
 * delivered the data to a denied port). The eBPF egress policy does see
 * it; without it, seccomp refuses the flag. Real sandboxes whose capability
 * struct says the eBPF egress policy is missing (the kernel is otherwise
 * the real one), a listener on 127.0.0.2 on a port the profile does not
 * allow and one on a port it allows:
 *  - network.mode allowlist (127.0.0.2/32, the allowed port), eBPF
 *    missing: the report says network degraded and lists the seccomp plan
 *    rule "no-fastopen"; inside, sendto/sendmsg/sendmmsg with
 *    MSG_FASTOPEN to the denied port -> EOPNOTSUPP (also with garbage in
 *    the upper half of the flags register); setsockopt
 *    TCP_FASTOPEN_CONNECT works (0) but the deferred connect to the denied
 *    port -> EACCES (Landlock), and after one to the allowed port a sendto
 *    naming the denied port reaches the allowed peer; plain connect to the
 *    denied port -> EACCES; to the allowed port -> 0 and the data arrives;
 *  - network.mode none without a network namespace (eBPF missing too):
 *    the same EOPNOTSUPP for the flag, EACCES for connect;
 *  - host side, both runs: the denied listener never saw a connection; the
 *    allowed one got exactly what the sandbox sent.
 * With the eBPF policy present the rule is not added (the report lists no
 * plan rule), since the BPF connect hooks see Fast Open connects.
 * Layer: libcordon spawn + seccomp + Landlock, real kernel, loopback only. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>

#include "sec-sbx.h"

static int listen_tcp(uint16_t *ret_port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	assert_int_equal(inet_pton(AF_INET, "127.0.0.2", &sa.sin_addr), 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*ret_port = ntohs(sa.sin_port);
	return fd;
}

/* Everything the listener's pending connections carry, concatenated; the
 * sandbox has exited, so whatever it sent is already queued. Returns the
 * number of connections. */
static int drain(int lfd, char *buf, size_t size)
{
	size_t len = 0;
	int n = 0, c;

	buf[0] = '\0';
	while ((c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		struct pollfd pf = { .fd = c, .events = POLLIN };
		ssize_t k;

		n++;
		/* Data sent before the sandbox exited is in the socket (or
		 * the FIN is): never more than this wait. */
		while (poll(&pf, 1, 2000) > 0 && (k = read(c, buf + len, size - 1 - len)) > 0)
			len += (size_t)k;
		buf[len] = '\0';
		close(c);
	}
	assert_int_equal(errno, EAGAIN);
	return n;
}

static int printed(const char *out, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, name, n) == 0 && l[n] == ' ')
			return atoi(l + n + 1);
	return -1;
}

#define assert_printed(out, name, want)                                                                                \
	do {                                                                                                           \
		int _got = printed((out), (name));                                                                     \
		if (_got != (want))                                                                                    \
			fprintf(stderr, "%s: errno %d, want %d\n", (name), _got, (want));                              \
		assert_int_equal(_got, (want));                                                                        \
	} while (0)

static bool has_plan_rule(const json_t *report, const char *rule)
{
	const json_t *v,
		*rules = json_object_get(json_object_get(json_object_get(report, "controls"), "seccomp"), "plan_rules");
	size_t i;

	assert_true(json_is_array(rules));
	json_array_foreach(rules, i, v) if (strcmp(json_string_value(v), rule) == 0) return true;
	return false;
}

/* Spawns plant-probe fastopen under `network` with `caps`; checks the
 * errnos and the listeners. */
static void run_fastopen(struct sbx *s, const char *network, const char *require, const struct cordon_caps *caps,
			 bool allowlist)
{
	struct sbx_opts o = { .network = network, .require = require };
	struct cordon_profile *p;
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	char inside[PATH_MAX], net[256], dp[8], ap[8], got[256];
	uint16_t denied_port, allowed_port;
	int denied = listen_tcp(&denied_port), allowed = listen_tcp(&allowed_port), r;

	sec_sbx_install(s, "plant-probe", inside, sizeof(inside));
	snprintf(dp, sizeof(dp), "%u", denied_port);
	snprintf(ap, sizeof(ap), "%u", allowed_port);
	if (allowlist) {
		snprintf(net, sizeof(net), "mode: allowlist\n    allow: [{cidr: 127.0.0.2/32, ports: [%s]}]", ap);
		o.network = net;
	}
	p = sbx_profile(s, &o);

	char *argv[] = { inside, "fastopen", "127.0.0.2", dp, ap, NULL };
	r = sbx_spawn(p, caps, argv, &res, &d);
	if (r < 0)
		fprintf(stderr, "cordon_spawn: %s: %s\n", d.step, d.message);
	assert_int_equal(r, 0);
	assert_exited(res.status, 0);
	assert_string_equal(sbx_state(res.report, "network"), "degraded");
	assert_true(has_plan_rule(res.report, "no-fastopen"));

	assert_printed(res.out, "fastopen-sendto", EOPNOTSUPP);
	assert_printed(res.out, "fastopen-sendmsg", EOPNOTSUPP);
	assert_printed(res.out, "fastopen-sendmmsg", EOPNOTSUPP);
	assert_printed(res.out, "fastopen-sendto-high", EOPNOTSUPP);
	assert_printed(res.out, "fastopen-connect-opt", 0);
	assert_printed(res.out, "fastopen-connect-denied", EACCES);
	assert_printed(res.out, "connect-denied", EACCES);
	if (allowlist) {
		assert_printed(res.out, "fastopen-connect-allowed", 0);
		assert_printed(res.out, "fastopen-connected-sendto-denied", 0);
		assert_printed(res.out, "connect-allowed", 0);
		assert_printed(res.out, "send-allowed", 0);
	} else
		assert_printed(res.out, "connect-allowed", EACCES);

	/* Host side: nothing reached the denied port. */
	assert_int_equal(drain(denied, got, sizeof(got)), 0);
	if (allowlist) {
		assert_int_equal(drain(allowed, got, sizeof(got)), 2);
		assert_string_equal(got, "tfo-fine");
	} else
		assert_int_equal(drain(allowed, got, sizeof(got)), 0);

	close(denied);
	close(allowed);
	sbx_result_done(&res);
	cordon_profile_free(p);
}

static void test_allowlist_without_ebpf(void **state)
{
	struct sbx *s = sbx_new("tfo-allow");
	struct cordon_caps caps = s->caps;

	(void)state;
	if (s->caps.landlock_abi < 4)
		cordon_test_skip("Landlock ABI %d has no TCP rules", s->caps.landlock_abi);
	caps.bpf_cgroup_sock_addr = false;
	run_fastopen(s, NULL, NULL, &caps, true);
	sbx_free(s);
}

static void test_mode_none_without_netns(void **state)
{
	struct sbx *s = sbx_new("tfo-none");
	struct cordon_caps caps = s->caps;

	(void)state;
	if (s->caps.landlock_abi < 4)
		cordon_test_skip("Landlock ABI %d has no TCP rules", s->caps.landlock_abi);
	caps.bpf_cgroup_sock_addr = false;
	caps.namespaces &= ~(unsigned long)CLONE_NEWNET;
	run_fastopen(s, "mode: none", "[landlock, seccomp, cgroup]", &caps, false);
	sbx_free(s);
}

/* With the eBPF egress policy (which sees Fast Open connects) and with
 * mode none in its own network namespace, the rule is not added. */
static void test_rule_only_where_needed(void **state)
{
	struct sbx *s = sbx_new("tfo-ebpf");
	struct cordon_profile *p = sbx_profile(s, NULL);
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	char *argv[] = { (char *)"/opt/cordon-test/sandbox-probe", (char *)"exit", (char *)"0", NULL };

	(void)state;
	assert_int_equal(sbx_spawn(p, &s->caps, argv, &res, &d), 0);
	assert_false(has_plan_rule(res.report, "no-fastopen"));
	assert_true(has_plan_rule(res.report, "openat2-enosys")); /* /data is read-write */
	sbx_result_done(&res);
	/* Without a read-write root, openat2 stays. */
	for (size_t i = 0; i < p->n_fs_roots; i++)
		if (p->fs_roots[i].access == CORDON_ACCESS_READ_WRITE)
			p->fs_roots[i].access = CORDON_ACCESS_READ;
	if (sbx_spawn(p, &s->caps, argv, &res, &d) < 0)
		fail_msg("cordon_spawn: %s: %s", d.step, d.message);
	assert_exited(res.status, 0);
	assert_false(has_plan_rule(res.report, "openat2-enosys"));
	sbx_result_done(&res);
	cordon_profile_free(p);
	sbx_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowlist_without_ebpf),
		cmocka_unit_test(test_mode_none_without_netns),
		cmocka_unit_test(test_rule_only_where_needed),
	};

	cordon_test_require_root();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
