/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The egress policy attached once to a launcher's group directory
 * (cordon_netpolicy_group_setup) instead of to each instance: default deny
 * holds for the group itself and for every descendant without entries (a
 * sub-cgroup of the group, a sub-cgroup of an instance, an instance whose
 * entries were removed); an instance's entries allow exactly its list; a
 * process outside the group is unaffected; the programs sit on the group,
 * not on the instance; closing the policy removes them and the group.
 * Real kernel, root; traffic only to listeners this test opens on
 * 127.0.0.2. */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroup.h"
#include "cleanup.h"
#include "netpolicy.h"
#include "probe.h"
#include "spawn.h"
#include "test-support.h"

static int connect_to(const char *addr, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -errno;
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		close(fd);
		return -EINVAL;
	}
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	close(fd);
	return r;
}

static int listen_on(const char *addr, uint16_t *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(inet_pton(AF_INET, addr, &sa.sin_addr), 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 64), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

/* Forks a child that joins the cgroup2 directory dirfd and connects to
 * 127.0.0.2:port; returns the child's result: 0 or -errno of connect(), or
 * -1000 - errno when it could not join the cgroup. */
static int connect_from(int dirfd, uint16_t port)
{
	int st;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int procs = openat(dirfd, "cgroup.procs", O_WRONLY | O_CLOEXEC), r;

		alarm(30);
		if (procs < 0 || write(procs, "0", 1) != 1)
			_exit(200);
		r = connect_to("127.0.0.2", port);
		_exit(r == 0 ? 0 : r == -EPERM ? 1 : r == -ECONNREFUSED ? 2 : 3);
	}
	st = cordon_test_wait(pid);
	assert_true(WIFEXITED(st));
	switch (WEXITSTATUS(st)) {
	case 0:
		return 0;
	case 1:
		return -EPERM;
	case 2:
		return -ECONNREFUSED;
	case 200:
		return -1000;
	default:
		return -EIO;
	}
}

static uint32_t prog_count(int dirfd, enum bpf_attach_type type, bool effective)
{
	uint32_t ids[16], cnt = 16, flags = 0;

	assert_int_equal(bpf_prog_query(dirfd, type, effective ? BPF_F_QUERY_EFFECTIVE : 0, &flags, ids, &cnt), 0);
	return cnt;
}

static void test_group_default_deny(void **state)
{
	static const enum bpf_attach_type types[] = {
		BPF_CGROUP_INET4_CONNECT,    BPF_CGROUP_INET6_CONNECT, BPF_CGROUP_UDP4_SENDMSG,
		BPF_CGROUP_UDP6_SENDMSG,     BPF_CGROUP_INET4_BIND,    BPF_CGROUP_INET6_BIND,
		BPF_CGROUP_INET_SOCK_CREATE, BPF_CGROUP_INET_INGRESS,
	};
	struct cordon_netpolicy_state *np = NULL;
	struct cordon_netpolicy_attachment *att = NULL, *att2 = NULL;
	struct cordon_cgroup *inst = NULL;
	struct cordon_cgroup_limits lim = { 0 };
	struct cordon_diag d = { 0 };
	struct cordon_caps caps;
	const struct cordon_cgroup_group *g;
	char *group_path;
	uint16_t p1 = 0, p2 = 0, ports[1];
	struct cordon_net_rule rule = { 0 };
	int l1, l2, gfd, ifd, sub, isub, r;

	(void)state;
	cordon_test_require_root();
	assert_int_equal(cordon_probe(&caps), 0);
	if (caps.cgroup_layout == CORDON_CGROUP_NONE || caps.cgroup_layout == CORDON_CGROUP_V1 ||
	    !caps.bpf_cgroup_sock_addr)
		cordon_test_skip("no cgroup2 hierarchy or no cgroup socket BPF hooks");
	l1 = listen_on("127.0.0.2", &p1);
	l2 = listen_on("127.0.0.2", &p2);

	r = cordon_netpolicy_open(&np, &d);
	if (r < 0)
		fail_msg("netpolicy_open: %s", d.message);
	assert_null(cordon_netpolicy_group(np));
	/* Entries without a group are refused: they would police nothing. */
	assert_int_equal(cordon_netpolicy_attach_entries(np, l1, NULL, 0, &att, NULL), -ENOENT);
	r = cordon_netpolicy_group_setup(np, &caps, &d);
	if (r < 0)
		fail_msg("group_setup: %s: %s", d.step, d.message);
	g = cordon_netpolicy_group(np);
	assert_non_null(g);
	/* Idempotent. */
	assert_int_equal(cordon_netpolicy_group_setup(np, &caps, NULL), 0);
	assert_ptr_equal(cordon_netpolicy_group(np), g);
	group_path = strdup(cordon_cgroup_group_path(g));
	printf("  group %s\n", group_path);
	assert_non_null(strstr(group_path, "/cordon/g-"));
	gfd = cordon_cgroup_group_fd(g);

	/* The programs are on the group. */
	for (size_t i = 0; i < ELEMENTSOF(types); i++)
		assert_int_equal(prog_count(gfd, types[i], false), 1);

	/* A process outside the group is unaffected. */
	assert_int_equal(connect_to("127.0.0.2", p1), 0);

	/* The group itself has no entries: denied. (On pure cgroup2 with
	 * controllers enabled below it, no process can even be there.) */
	r = connect_from(gfd, p1);
	if (r == -1000)
		printf("  the group cannot hold processes here (no-internal-process rule)\n");
	else
		assert_int_equal(r, -EPERM);
	assert_int_equal(cordon_netpolicy_attach_entries(np, gfd, NULL, 0, &att, &d), -EINVAL);

	/* A descendant of the group that nobody gave entries: denied. */
	assert_int_equal(mkdirat(gfd, "stray", 0755), 0);
	sub = openat(gfd, "stray", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	assert_true(sub >= 0);
	assert_int_equal(connect_from(sub, p1), -EPERM);
	/* Nothing is attached there; the group's programs are effective. */
	assert_int_equal(prog_count(sub, BPF_CGROUP_INET4_CONNECT, false), 0);
	assert_int_equal(prog_count(sub, BPF_CGROUP_INET4_CONNECT, true), 1);

	/* An instance in the group with an allowlist of 127.0.0.2:p1. */
	r = cordon_cgroup_create(
		&caps,
		&(struct cordon_cgroup_options){ .name = "grouptest-1", .limits = &lim, .required = 0, .group = g },
		&inst, NULL, &d);
	if (r < 0)
		fail_msg("create_in_group: %s", d.message);
	assert_non_null(strstr(cordon_cgroup_v2_path(inst), group_path));
	ifd = cordon_cgroup_v2_fd(inst);
	assert_true(ifd >= 0);
	/* Before its entries: denied (mode none is exactly this). */
	assert_int_equal(connect_from(ifd, p1), -EPERM);
	ports[0] = p1;
	rule.family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, "127.0.0.2", rule.addr), 1);
	rule.prefix_len = 32;
	rule.ports = ports;
	rule.n_ports = 1;
	r = cordon_netpolicy_attach_entries(np, ifd, &rule, 1, &att, &d);
	if (r < 0)
		fail_msg("attach_entries: %s", d.message);
	/* Once per cgroup. */
	assert_int_equal(cordon_netpolicy_attach_entries(np, ifd, &rule, 1, &att2, NULL), -EEXIST);
	assert_int_equal(cordon_netpolicy_count_entries(np, cordon_netpolicy_attachment_cgroup_id(att)), 1);
	assert_int_equal(connect_from(ifd, p1), 0);
	assert_int_equal(connect_from(ifd, p2), -EPERM);
	/* The stray sibling still has nothing. */
	assert_int_equal(connect_from(sub, p1), -EPERM);
	/* Nothing is attached to the instance itself. */
	for (size_t i = 0; i < ELEMENTSOF(types); i++) {
		assert_int_equal(prog_count(ifd, types[i], false), 0);
		assert_int_equal(prog_count(ifd, types[i], true), 1);
	}

	/* A cgroup the instance makes below itself (a delegated job) has no
	 * entries of its own: denied. */
	assert_int_equal(mkdirat(ifd, "job", 0755), 0);
	isub = openat(ifd, "job", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	assert_true(isub >= 0);
	assert_int_equal(connect_from(isub, p1), -EPERM);
	close(isub);
	assert_int_equal(unlinkat(ifd, "job", AT_REMOVEDIR), 0);

	/* Entries removed: the instance is back to deny-all. */
	assert_int_equal(cordon_netpolicy_detach(np, att), 0);
	assert_int_equal(connect_from(ifd, p1), -EPERM);
	assert_true(cordon_netpolicy_is_idle(np));

	assert_int_equal(cordon_cgroup_destroy(inst), 0);
	close(sub);
	assert_int_equal(unlinkat(gfd, "stray", AT_REMOVEDIR), 0);

	/* Closing the policy detaches the group's programs and removes it. */
	cordon_netpolicy_close(np);
	assert_int_equal(access(group_path, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(connect_to("127.0.0.2", p1), 0);
	free(group_path);
	close(l1);
	close(l2);
}

/* A stale group (its launcher is gone) is removed by the next launcher's
 * cleanup, with what is inside. Simulated by a group directory named after
 * a pid that does not exist. */
static void test_stale_group_cleaned(void **state)
{
	struct cordon_cgroup_group *g = NULL;
	struct cordon_diag d = { 0 };
	struct cordon_caps caps;
	char stale[PATH_MAX], *parent, *slash;
	int r;

	(void)state;
	cordon_test_require_root();
	assert_int_equal(cordon_probe(&caps), 0);
	if (caps.cgroup_layout == CORDON_CGROUP_NONE || caps.cgroup_layout == CORDON_CGROUP_V1)
		cordon_test_skip("no cgroup2 hierarchy");
	r = cordon_cgroup_group_new(&caps, &g, &d);
	if (r < 0)
		fail_msg("group_new: %s", d.message);
	parent = strdup(cordon_cgroup_group_path(g));
	slash = strrchr(parent, '/');
	*slash = 0;
	/* pid 2^22 + 7 is above pid_max's default maximum: never alive. */
	snprintf(stale, sizeof(stale), "%s/g-4194311-12345", parent);
	assert_int_equal(mkdir(stale, 0755), 0);
	strncat(stale, "/i-4194311-12345-x", sizeof(stale) - strlen(stale) - 1);
	assert_int_equal(mkdir(stale, 0755), 0);
	r = cordon_cgroup_cleanup_stale(&caps);
	assert_true(r >= 1);
	snprintf(stale, sizeof(stale), "%s/g-4194311-12345", parent);
	assert_int_equal(access(stale, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	/* A live launcher's group is left alone. */
	assert_int_equal(access(cordon_cgroup_group_path(g), F_OK), 0);
	cordon_cgroup_group_free(g);
	free(parent);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_default_deny),
		cmocka_unit_test(test_stale_group_cleaned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
