/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement: allowlist network mode without a network grant has no
 * egress.
 *
 * `network.mode: allowlist` keeps the host network namespace, so nothing
 * but the policy stands between the connector and the host's network. With
 * no destination granted (an empty allowlist) every way out is refused, by
 * each of the two independent layers:
 *  1. the eBPF egress policy (launcher/lib/netpolicy.c) attached to a
 *     cgroup2 directory the test creates, with zero rules: from a process in
 *     that cgroup, TCP connect to 127.0.0.2, 127.0.0.1 (loopback is not
 *     implicit), [::1] and the IPv4-mapped [::ffff:127.0.0.2] -> EPERM;
 *     MPTCP connect -> EPERM; UDP sendto -> EPERM and nothing arrives at the
 *     listener; a process outside the cgroup connects fine (the listeners
 *     are real); after detach no program is left on the cgroup;
 *  2. the profile loader refuses `mode: allowlist` with an empty allow list
 *     (-EINVAL, "needs at least one allow entry"), so an allowlist sandbox
 *     always has explicit grants; and cordon_spawn() with an allowlist that
 *     grants only another destination (127.0.0.3:9): the report says the
 *     network is enforced (eBPF allowlist + Landlock TCP port rules); from
 *     inside the sandbox TCP connect to the listener is refused with EACCES
 *     (Landlock, the first layer the connect meets) and a UDP datagram —
 *     which Landlock does not govern — with EPERM by the eBPF policy, and
 *     nothing arrives at the UDP listener.
 * Traffic stays on loopback addresses. Layer: libcordon (netpolicy, spawn),
 * real kernel, real sockets. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "sec-sbx.h"
#include "netpolicy.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

static int listen_on(int family, int type, const char *addr, uint16_t *port)
{
	struct sockaddr_storage ss = {};
	socklen_t len;
	int fd = socket(family, type | SOCK_CLOEXEC, 0), one = 1;

	assert_true(fd >= 0);
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(*port);
		assert_int_equal(inet_pton(AF_INET, addr, &s->sin_addr), 1);
		len = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

		assert_int_equal(setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)), 0);
		s->sin6_family = AF_INET6;
		s->sin6_port = htons(*port);
		assert_int_equal(inet_pton(AF_INET6, addr, &s->sin6_addr), 1);
		len = sizeof(*s);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		close(fd);
		return -errno;
	}
	if (type == SOCK_STREAM)
		assert_int_equal(listen(fd, 16), 0);
	len = sizeof(ss);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					: ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

static int try_connect(int family, int protocol, const char *addr, uint16_t port)
{
	struct sockaddr_storage ss = {};
	socklen_t len;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, protocol), r;

	if (fd < 0)
		return -errno;
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		inet_pton(AF_INET, addr, &s->sin_addr);
		len = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		inet_pton(AF_INET6, addr, &s->sin6_addr);
		len = sizeof(*s);
	}
	r = connect(fd, (struct sockaddr *)&ss, len) < 0 ? -errno : 0;
	close(fd);
	return r;
}

static int try_sendto(const char *addr, uint16_t port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -errno;
	inet_pton(AF_INET, addr, &s.sin_addr);
	r = sendto(fd, "leak", 4, 0, (struct sockaddr *)&s, sizeof(s)) < 0 ? -errno : 0;
	close(fd);
	return r;
}

static void test_ebpf_layer_empty_allowlist_no_egress(void **state)
{
	struct cordon_caps caps;
	struct cordon_netpolicy_state *np = NULL;
	struct cordon_netpolicy_attachment *att = NULL;
	struct cordon_diag d = {};
	char cg[PATH_MAX], buf[8];
	uint16_t p4 = 0, p6 = 0, pl = 0, pu = 0;
	int l4, l6, lloop, lu, cg_fd, st;
	pid_t pid;

	(void)state;
	cordon_test_require_root();
	assert_int_equal(cordon_probe(&caps), 0);
	assert_true(caps.cgroup2_mount[0]);
	l4 = listen_on(AF_INET, SOCK_STREAM, "127.0.0.2", &p4);
	l6 = listen_on(AF_INET6, SOCK_STREAM, "::1", &p6);
	lloop = listen_on(AF_INET, SOCK_STREAM, "127.0.0.1", &pl);
	lu = listen_on(AF_INET, SOCK_DGRAM, "127.0.0.2", &pu);
	assert_true(l4 >= 0 && l6 >= 0 && lloop >= 0 && lu >= 0);

	/* Unpoliced, the listeners answer: a refusal below is the policy. */
	assert_int_equal(try_connect(AF_INET, 0, "127.0.0.2", p4), 0);
	assert_int_equal(try_connect(AF_INET6, 0, "::1", p6), 0);

	snprintf(cg, sizeof(cg), "%s/cordon-sec-egress-%d", caps.cgroup2_mount, (int)getpid());
	assert_int_equal(mkdir(cg, 0755), 0);
	cg_fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(cg_fd >= 0);
	{
		int r = cordon_netpolicy_open(&np, &d);

		if (r == -EOPNOTSUPP) {
			(void)rmdir(cg);
			cordon_test_skip("built without the eBPF programs (CORDON_BPF=OFF)");
		}
		if (r < 0)
			fail_msg("netpolicy: %s", d.message);
	}
	assert_int_equal(cordon_netpolicy_attach(np, cg_fd, NULL, 0, &att, &d), 0);

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int procs = openat(cg_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);

		CHILD_CHECK(procs >= 0 && write(procs, "0", 1) == 1);
		CHILD_CHECK(try_connect(AF_INET, 0, "127.0.0.2", p4) == -EPERM);
		CHILD_CHECK(try_connect(AF_INET, 0, "127.0.0.1", pl) == -EPERM);
		CHILD_CHECK(try_connect(AF_INET6, 0, "::1", p6) == -EPERM);
		CHILD_CHECK(try_connect(AF_INET6, 0, "::ffff:127.0.0.2", p4) == -EPERM);
		CHILD_CHECK(try_connect(AF_INET, IPPROTO_MPTCP, "127.0.0.2", p4) == -EPERM);
		CHILD_CHECK(try_sendto("127.0.0.2", pu) == -EPERM);
		_exit(0);
	}
	st = cordon_test_wait(pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* Nothing arrived over UDP. */
	assert_int_equal(recv(lu, buf, sizeof(buf), MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	{
		int n = cordon_netpolicy_poll_events(np, NULL, NULL);

		printf("  denial events: %d\n", n);
	}

	assert_int_equal(cordon_netpolicy_detach(np, att), 0);
	{
		/* No program left attached to the cgroup. */
		char cmd[PATH_MAX + 64], out[4096] = "";
		FILE *f;
		size_t n;

		snprintf(cmd, sizeof(cmd), "/usr/sbin/bpftool cgroup show %s 2>&1", cg);
		f = popen(cmd, "re");
		assert_non_null(f);
		n = fread(out, 1, sizeof(out) - 1, f);
		out[n] = '\0';
		pclose(f);
		printf("  bpftool cgroup show after detach: '%s'\n", out);
		assert_null(strstr(out, "cordon"));
		assert_null(strstr(out, "connect4"));
	}
	cordon_netpolicy_close(np);
	close(cg_fd);
	assert_int_equal(rmdir(cg), 0);
	close(l4);
	close(l6);
	close(lloop);
	close(lu);
}

/* An allowlist with nothing in it is not a profile: the loader refuses it
 * (use mode: none), so "allowlist without a grant" cannot even be written. */
static void test_profile_empty_allowlist_refused(void **state)
{
	static const char text[] = "version: 1\n"
				   "connector:\n"
				   "  command: [/bin/true]\n"
				   "sandbox:\n"
				   "  filesystem:\n"
				   "    system:\n"
				   "      - {path: /usr, access: read-exec}\n"
				   "  network:\n"
				   "    mode: allowlist\n"
				   "    allow: []\n"
				   "tools:\n"
				   "  grant: []\n";
	struct cordon_profile *p = NULL;
	struct cordon_diag d = {};

	(void)state;
	assert_int_equal(cordon_profile_parse("egress", "egress.yaml", text, strlen(text), &p, &d), -EINVAL);
	printf("  loader: %u:%u %s\n", d.line, d.column, d.message);
	assert_non_null(strstr(d.message, "at least one allow entry"));
	assert_null(p);
}

/* The Landlock layer: a sandbox whose allowlist names another destination
 * has no TCP way to this one. */
static void test_sandbox_ungranted_destination_no_egress(void **state)
{
	struct sbx *s = sbx_new("sec-egress");
	struct sbx_opts o = { .network = "mode: allowlist\n    allow: [{cidr: 127.0.0.3/32, ports: [9]}]",
			      .require = "[landlock, seccomp, namespaces, network]" };
	struct cordon_profile *p;
	char probe[PATH_MAX], ports[8], uports[8], buf[8];
	uint16_t port = 0, uport = 0;
	int l, lu;

	(void)state;
	sec_sbx_install(s, "sec-probe", probe, sizeof(probe));
	l = listen_on(AF_INET, SOCK_STREAM, "127.0.0.2", &port);
	lu = listen_on(AF_INET, SOCK_DGRAM, "127.0.0.2", &uport);
	assert_true(l >= 0 && lu >= 0);
	snprintf(ports, sizeof(ports), "%u", port);
	snprintf(uports, sizeof(uports), "%u", uport);
	p = sbx_profile(s, &o);
	assert_int_equal(try_connect(AF_INET, 0, "127.0.0.2", port), 0);
	assert_exited(sbx_probe_with(p, &s->caps, "tcp-connect", "127.0.0.2", ports), EACCES);
	assert_exited(sbx_probe_with(p, &s->caps, "tcp-connect", "127.0.0.1", ports), EACCES);
	{
		char *argv[] = { probe, (char *)"udp-send", (char *)"127.0.0.2", uports, NULL };
		struct cordon_diag d = { 0 };
		struct sbx_result res;

		assert_int_equal(sbx_spawn(p, &s->caps, argv, &res, &d), 0);
		assert_string_equal(sbx_state(res.report, "network"), "enforced");
		assert_exited(res.status, EPERM);
		sbx_result_done(&res);
	}
	assert_int_equal(recv(lu, buf, sizeof(buf), MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	cordon_profile_free(p);
	close(l);
	close(lu);
	sbx_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ebpf_layer_empty_allowlist_no_egress),
		cmocka_unit_test(test_profile_empty_allowlist_refused),
		cmocka_unit_test(test_sandbox_ungranted_destination_no_egress),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
