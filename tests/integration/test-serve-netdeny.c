/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Egress denial events through the privileged helper to the broker: a real
 * `cordon-launch --serve` (started by cordon_launcher_client_start) runs a
 * connector under an allowlist profile (127.0.0.2:P only); the connector
 * tries 127.0.0.3:P, the eBPF policy refuses it with EPERM, and the broker
 * side receives exactly one NET_DENIED for that instance, with the event's
 * fields (hook, family, address, port, protocol, cgroup id of the
 * instance, comm). An allowed connect produces no event. Loopback only: the
 * listeners are this test's own, on 127.0.0.2 and 127.0.0.3. Root. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "cleanup.h"
#include "fd-util.h"
#include "launcher-client.h"
#include "profile.h"
#include "test-support.h"

static char *base;
static char profiles[4096], bin[4096], launch[4096];
static uint16_t port;
static int l_allowed = -1, l_denied = -1;

static struct {
	unsigned n_exited, n_denied;
	uint32_t exited_instance;
	int wait_status;
	uint32_t denied_instance;
	json_t *denied; /* the first event */
} ev;

static void on_exited(void *u, uint32_t instance, int wait_status, const json_t *report)
{
	(void)u;
	(void)report;
	ev.n_exited++;
	ev.exited_instance = instance;
	ev.wait_status = wait_status;
}

static void on_net_denied(void *u, uint32_t instance, const json_t *event)
{
	char *t = json_dumps(event, JSON_COMPACT);

	(void)u;
	printf("  NET_DENIED instance %u: %s\n", instance, t ? t : "?");
	free(t);
	if (ev.n_denied++ == 0) {
		ev.denied_instance = instance;
		ev.denied = json_deep_copy(event);
	}
}

static const struct cordon_launcher_handlers handlers = {
	.exited = on_exited,
	.net_denied = on_net_denied,
};

static void reset_events(void)
{
	json_decref(ev.denied);
	memset(&ev, 0, sizeof(ev));
}

static void write_file(const char *path, const char *content, mode_t mode)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	fputs(content, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static int listen_on(const char *addr, uint16_t want)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(want) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(inet_pton(AF_INET, addr, &sa.sin_addr), 1);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -errno;
	}
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	port = ntohs(sa.sin_port);
	return fd;
}

/* The profile: a shell that makes one attempt with sandbox-probe, prints
 * its exit code and then stays (cat) until stdin closes, so that the test
 * can look at the instance's cgroup while it lives. */
static void write_profile(const char *id, const char *target)
{
	char path[4096 + 64], body[8192];

	snprintf(body, sizeof(body),
		 "version: 1\n"
		 "connector:\n"
		 "  description: egress denial events\n"
		 "  command: [/bin/sh, -c, '/opt/cordon-test/sandbox-probe tcp-connect %s %u; echo rc=$?; exec cat']\n"
		 "sandbox:\n"
		 "  user: dynamic\n"
		 "  filesystem:\n"
		 "    system:\n"
		 "      - {path: /usr, access: read-exec}\n"
		 "      - {path: /lib, access: read-exec}\n"
		 "      - {path: /lib64, access: read-exec}\n"
		 "      - {path: /bin, access: read-exec}\n"
		 "      - {path: /etc/ld.so.cache, access: read}\n"
		 "    roots:\n"
		 "      - {path: %s, access: read-exec, at: /opt/cordon-test}\n"
		 "    tmp: 1M\n"
		 "  network:\n"
		 "    mode: allowlist\n"
		 "    allow:\n"
		 "      - {cidr: 127.0.0.2/32, ports: [%u]}\n"
		 "  limits: {memory: 64M, pids: 16}\n"
		 "  require: [landlock, seccomp, cgroup, namespaces, network]\n"
		 "tools:\n"
		 "  default_risk: read\n",
		 target, port, bin, port);
	snprintf(path, sizeof(path), "%s/%s.yaml", profiles, id);
	write_file(path, body, 0644);
}

static int setup(void **state)
{
	char src[4096 + 64], dst[4096 + 64], *data = NULL;
	size_t len = 0;
	int fd;

	(void)state;
	cordon_test_require_root();
	snprintf(launch, sizeof(launch), "%s", cordon_test_env("CORDON_LAUNCH", ""));
	if (!launch[0] || access(launch, X_OK) < 0)
		cordon_test_skip("CORDON_LAUNCH (cordon-launch) is not built");
	snprintf(src, sizeof(src), "%s/sandbox-probe", cordon_test_env("CORDON_HELPERS_DIR", "build/tests/helpers"));
	if (access(src, X_OK) < 0)
		cordon_test_skip("sandbox-probe helper not built at %s", src);
	base = cordon_test_mkdtemp("serve-netdeny");
	assert_int_equal(chmod(base, 0755), 0);
	snprintf(profiles, sizeof(profiles), "%s/profiles", base);
	snprintf(bin, sizeof(bin), "%s/bin", base);
	assert_int_equal(mkdir(profiles, 0755), 0);
	assert_int_equal(mkdir(bin, 0755), 0);
	/* A copy of the probe in the test's directory, mounted at a fixed
	 * sandbox path (wherever the build tree lives). */
	assert_int_equal(read_file_bounded(AT_FDCWD, src, 64 << 20, &data, &len), 0);
	snprintf(dst, sizeof(dst), "%s/sandbox-probe", bin);
	fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	free(data);

	/* The same port on both addresses: the refusal is the policy, never a
	 * missing listener. */
	for (int attempt = 0; attempt < 20; attempt++) {
		l_allowed = listen_on("127.0.0.2", 0);
		l_denied = listen_on("127.0.0.3", port);
		if (l_denied >= 0)
			break;
		close(l_allowed);
	}
	assert_true(l_denied >= 0);
	write_profile("denied", "127.0.0.3");
	write_profile("allowed", "127.0.0.2");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	reset_events();
	if (l_allowed >= 0)
		close(l_allowed);
	if (l_denied >= 0)
		close(l_denied);
	if (base) {
		(void)cordon_test_rm_rf(base);
		free(base);
	}
	return 0;
}

static uint64_t elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
}

/* Dispatches the client's events for `ms`, or until cond holds. */
static void dispatch_for(struct cordon_launcher_client *lc, bool (*cond)(void), int ms)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!(cond && cond()) && elapsed_ms(&t0) < (uint64_t)ms) {
		struct pollfd p = { .fd = cordon_launcher_client_fd(lc), .events = POLLIN };

		if (poll(&p, 1, 50) > 0)
			(void)cordon_launcher_client_dispatch(lc);
	}
}

static bool got_exit(void)
{
	return ev.n_exited > 0;
}

/* Reads stdout until a line "rc=N" arrives (bounded) and returns N. */
static int read_rc(int fd)
{
	char buf[1024];
	size_t n = 0;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (n < sizeof(buf) - 1 && elapsed_ms(&t0) < 20000) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t k;
		char *rc;

		if (poll(&p, 1, 100) <= 0)
			continue;
		k = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
		buf[n] = 0;
		rc = strstr(buf, "rc=");
		if (rc && strchr(rc, '\n')) {
			printf("  [connector] %s", buf);
			return atoi(rc + 3);
		}
	}
	buf[n] = 0;
	fail_msg("no rc line from the connector: '%s'", buf);
	return -1;
}

static uint64_t cgroup_id_of(const json_t *report)
{
	const char *path = json_string_value(
		json_object_get(json_object_get(json_object_get(report, "controls"), "cgroup"), "path"));
	struct stat st;

	assert_non_null(path);
	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_ino;
}

static void run_one(struct cordon_launcher_client *lc, const char *id, int want_rc, uint64_t *ret_cgid,
		    uint32_t *ret_instance)
{
	struct cordon_launched l = { 0 };
	struct cordon_diag d = { 0 };
	int r;

	r = cordon_launcher_client_spawn(lc, id, "", NULL, 0, &l, &d);
	if (r < 0)
		fail_msg("spawn %s: %s: %s", id, d.step, d.message);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_object_get(l.report, "controls"), "network"), "state")),
			    "enforced");
	assert_int_equal(read_rc(l.stdout_fd), want_rc);
	*ret_cgid = cgroup_id_of(l.report);
	*ret_instance = l.instance;
	closep(&l.stdin_fd);
	dispatch_for(lc, got_exit, 10000);
	assert_int_equal(ev.exited_instance, l.instance);
	assert_true(WIFEXITED(ev.wait_status));
	closep(&l.stdout_fd);
	closep(&l.stderr_fd);
	json_decref(l.report);
}

static void test_denied_connect_one_event(void **state)
{
	struct cordon_launcher_client *lc = NULL;
	struct cordon_diag d = { 0 };
	uint64_t cgid = 0;
	uint32_t instance = 0;
	int r;

	(void)state;
	reset_events();
	r = cordon_launcher_client_start(launch, profiles, &handlers, &lc, &d);
	if (r < 0)
		fail_msg("start: %s: %s", d.step, d.message);
	/* Both profiles in force, as cordond puts them. */
	{
		struct cordon_profile *ps[2] = { NULL, NULL };
		char path[4200], failed[64];

		for (int i = 0; i < 2; i++) {
			snprintf(path, sizeof(path), "%s/%s.yaml", profiles, i ? "allowed" : "denied");
			assert_int_equal(cordon_profile_load(path, &ps[i], &d), 0);
		}
		r = cordon_launcher_client_profiles(lc, ps, 2, failed, sizeof(failed), &d);
		if (r < 0)
			fail_msg("profiles: %s: %s", d.step, d.message);
		cordon_profile_free(ps[0]);
		cordon_profile_free(ps[1]);
	}

	/* Allowed: connects, and no event. */
	run_one(lc, "allowed", 0, &cgid, &instance);
	dispatch_for(lc, NULL, 300);
	assert_int_equal(ev.n_denied, 0);

	/* Denied by the eBPF policy (Landlock allows the port): EPERM. */
	ev.n_exited = 0;
	run_one(lc, "denied", EPERM, &cgid, &instance);
	/* Anything else the helper might still send arrives within this. */
	dispatch_for(lc, NULL, 500);
	assert_int_equal(ev.n_denied, 1);
	assert_int_equal(ev.denied_instance, instance);
	assert_string_equal(json_string_value(json_object_get(ev.denied, "event")), "net-deny");
	assert_string_equal(json_string_value(json_object_get(ev.denied, "hook")), "connect4");
	assert_string_equal(json_string_value(json_object_get(ev.denied, "family")), "inet");
	assert_string_equal(json_string_value(json_object_get(ev.denied, "addr")), "127.0.0.3");
	assert_int_equal(json_integer_value(json_object_get(ev.denied, "port")), port);
	assert_string_equal(json_string_value(json_object_get(ev.denied, "protocol")), "tcp");
	assert_string_equal(json_string_value(json_object_get(ev.denied, "sock_type")), "stream");
	assert_true(json_is_false(json_object_get(ev.denied, "mapped")));
	assert_int_equal((uint64_t)json_integer_value(json_object_get(ev.denied, "cgroup_id")), cgid);
	assert_string_equal(json_string_value(json_object_get(ev.denied, "comm")), "sandbox-probe");
	assert_true(json_integer_value(json_object_get(ev.denied, "pid")) > 0);
	assert_non_null(json_string_value(json_object_get(ev.denied, "time")));

	cordon_launcher_client_free(lc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_denied_connect_one_event),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
