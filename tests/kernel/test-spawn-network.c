/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* network.mode: allowlist keeps the host network namespace, so the layers
 * tested here are the ones that remain there: Landlock TCP connect rules
 * (only the listed ports), no TCP bind at all, and Landlock scoping of
 * abstract unix sockets, and the eBPF egress allowlist on the instance's
 * cgroup (which refuses other addresses, and stands alone when Landlock is
 * missing). Traffic stays on 127.0.0.1 (127.0.0.2 is only ever refused). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "spawn-test.h"

static struct sbx *S;
static int l_allowed = -1, l_denied = -1, l_unix = -1;
static char p_allowed[8], p_denied[8];
static const char abstract_name[] = "cordon-test-abstract-network";

static int listen_tcp(char port[8])
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	snprintf(port, 8, "%u", ntohs(sa.sin_port));
	return fd;
}

static int group_setup(void **state)
{
	struct sockaddr_un su = { .sun_family = AF_UNIX };

	(void)state;
	S = sbx_new("spawn-network");
	l_allowed = listen_tcp(p_allowed);
	l_denied = listen_tcp(p_denied);
	l_unix = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(l_unix >= 0);
	memcpy(su.sun_path + 1, abstract_name, strlen(abstract_name));
	assert_int_equal(bind(l_unix, (struct sockaddr *)&su,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(abstract_name))),
			 0);
	assert_int_equal(listen(l_unix, 8), 0);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	close(l_allowed);
	close(l_denied);
	close(l_unix);
	sbx_free(S);
	return 0;
}

static struct cordon_profile *allowlist_profile(void)
{
	char net[128];
	struct sbx_opts o = { .network = net };

	snprintf(net, sizeof(net), "mode: allowlist\n    allow: [{cidr: 127.0.0.1/32, ports: [%s]}]", p_allowed);
	return sbx_profile(S, &o);
}

static void test_allowed_port_connects(void **state)
{
	struct cordon_profile *p = allowlist_profile();

	(void)state;
	assert_exited(sbx_probe_with(p, &S->caps, "tcp-connect", "127.0.0.1", p_allowed), 0);
	cordon_profile_free(p);
}

static void test_other_port_refused(void **state)
{
	struct cordon_profile *p = allowlist_profile();

	(void)state;
	assert_exited(sbx_probe_with(p, &S->caps, "tcp-connect", "127.0.0.1", p_denied), EACCES);
	cordon_profile_free(p);
}

static void test_host_abstract_unix_scoped(void **state)
{
	struct cordon_profile *p = allowlist_profile();

	(void)state;
	/* Same network namespace as the host listener: Landlock's scoping
	 * (ABI 6) is what refuses it. */
	assert_exited(sbx_probe_with(p, &S->caps, "unix-abstract", abstract_name, NULL), EPERM);
	cordon_profile_free(p);
}

static void test_other_address_on_allowed_port_refused_by_ebpf(void **state)
{
	struct cordon_profile *p = allowlist_profile();

	(void)state;
	/* Landlock allows the port; the eBPF allowlist refuses the address. */
	assert_exited(sbx_probe_with(p, &S->caps, "tcp-connect", "127.0.0.2", p_allowed), EPERM);
	cordon_profile_free(p);
}

static void test_ebpf_alone_refuses_other_port(void **state)
{
	struct cordon_caps caps = S->caps;
	struct cordon_profile *p = allowlist_profile();

	(void)state;
	caps.landlock_abi = 0;
	cordon_profile_free(p);
	{
		char net[128];
		struct sbx_opts o = { .network = net, .require = "[seccomp, cgroup, namespaces, network]" };

		snprintf(net, sizeof(net), "mode: allowlist\n    allow: [{cidr: 127.0.0.1/32, ports: [%s]}]",
			 p_allowed);
		p = sbx_profile(S, &o);
	}
	assert_exited(sbx_probe_with(p, &caps, "tcp-connect", "127.0.0.1", p_denied), EPERM);
	assert_exited(sbx_probe_with(p, &caps, "tcp-connect", "127.0.0.1", p_allowed), 0);
	cordon_profile_free(p);
}

static void test_allowlist_report_enforced_with_ebpf(void **state)
{
	struct cordon_profile *p = allowlist_profile();
	char *argv[] = { p->command[0], (char *)"exit", (char *)"0", NULL };
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	json_t *net;

	(void)state;
	assert_int_equal(sbx_spawn(p, &S->caps, argv, &res, &d), 0);
	net = json_object_get(json_object_get(res.report, "controls"), "network");
	assert_string_equal(json_string_value(json_object_get(net, "state")), "enforced");
	assert_true(json_is_true(json_object_get(net, "ebpf")));
	assert_true(json_is_true(json_object_get(net, "landlock_tcp")));
	sbx_assert_degraded_only_by_root_guard(res.report, &S->caps);
	/* The programs are attached once, to this process's group; the
	 * instance's cgroup2 directory lives inside it. */
	assert_string_equal(json_string_value(json_object_get(net, "ebpf_attached")), "group");
	assert_non_null(strstr(json_string_value(json_object_get(
				       json_object_get(json_object_get(res.report, "controls"), "cgroup"), "path")),
			       "/cordon/g-"));
	sbx_result_done(&res);
	cordon_profile_free(p);
}

static void test_allowlist_report_says_degraded_without_ebpf(void **state)
{
	struct cordon_caps caps = S->caps;
	struct cordon_profile *p = allowlist_profile();
	char *argv[] = { p->command[0], (char *)"exit", (char *)"0", NULL };
	struct cordon_diag d = { 0 };
	struct sbx_result res;
	json_t *net;

	(void)state;
	caps.bpf_cgroup_sock_addr = false;
	assert_int_equal(sbx_spawn(p, &caps, argv, &res, &d), 0);
	net = json_object_get(json_object_get(res.report, "controls"), "network");
	assert_string_equal(json_string_value(json_object_get(net, "state")), "degraded");
	assert_true(json_is_false(json_object_get(net, "netns")));
	assert_true(json_is_false(json_object_get(net, "ebpf")));
	assert_true(json_is_true(json_object_get(net, "landlock_tcp")));
	assert_true(json_is_true(json_object_get(res.report, "degraded")));
	sbx_result_done(&res);
	cordon_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowed_port_connects),
		cmocka_unit_test(test_other_port_refused),
		cmocka_unit_test(test_host_abstract_unix_scoped),
		cmocka_unit_test(test_other_address_on_allowed_port_refused_by_ebpf),
		cmocka_unit_test(test_ebpf_alone_refuses_other_port),
		cmocka_unit_test(test_allowlist_report_enforced_with_ebpf),
		cmocka_unit_test(test_allowlist_report_says_degraded_without_ebpf),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
