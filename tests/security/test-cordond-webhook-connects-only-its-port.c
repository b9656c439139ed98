/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requirement (issue 14, Notifications): the approval webhook opens the
 * least network access cordond can have. With `approval_webhook_url`
 * configured, cordond (after every start-up phase: drop, Landlock, seccomp)
 * can create an IPv4 TCP socket and connect to the webhook's port on the
 * loopback, and nothing else: another loopback port that listens -> EACCES
 * (Landlock ABI >= 4 connect rule), an AF_UNIX or AF_INET6 socket -> EPERM
 * (seccomp: socket() allowed for AF_INET only). Without a webhook, socket()
 * itself is refused (EPERM). Each check runs inside cordond's forked core,
 * exact errnos; the test runner stays unrestricted.
 * Layer: cordond core, real kernel. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon-core.h"
#include "landlock.h"
#include "paths.h"
#include "test-support.h"

static char base[256], state[300], runtime[300], profiles[300], secret[300];

static int s_spawn(void *userdata, const struct cordon_profile *p, const char *tag,
		   const struct cordon_serve_root *roots, size_t n_roots, struct cordon_worker_io *ret,
		   struct cordon_diag *diag)
{
	(void)userdata, (void)p, (void)tag, (void)roots, (void)n_roots, (void)ret;
	return cordon_diag_set(diag, ENOSYS, "spawn", "this test starts no connector");
}

static void s_kill(void *userdata, uint32_t instance)
{
	(void)userdata, (void)instance;
}

static int s_reap(void *userdata, uint32_t instance)
{
	(void)userdata, (void)instance;
	return -1;
}

/* A listening socket on 127.0.0.1 (an ephemeral port). */
static int listener(uint16_t *ret_port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	*ret_port = ntohs(sa.sin_port);
	return fd;
}

static int connect_to(int fd, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	return connect(fd, (struct sockaddr *)&sa, sizeof(sa));
}

/* cordond's core with (webhook_port != 0) or without a webhook, then the
 * checks; exits 0 when every one held. */
static _Noreturn void daemon_child(uint16_t webhook_port, uint16_t other_port)
{
	struct cordon_spawner sp = { .spawn = s_spawn, .kill = s_kill, .reap = s_reap };
	struct cordon_daemon_config cfg;
	struct cordon_daemon *d = NULL;
	struct cordon_diag diag = {};
	char url[64];
	int fd, r;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	cordon_daemon_config_init(&cfg);
	cfg.state_dir = strdup(state);
	cfg.runtime_dir = strdup(runtime);
	cfg.profiles_dir = strdup(profiles);
	if (webhook_port) {
		snprintf(url, sizeof(url), "http://127.0.0.1:%u/hook", (unsigned)webhook_port);
		cfg.approval_webhook_url = strdup(url);
		cfg.approval_webhook_secret_file = strdup(secret);
	}
	r = cordon_daemon_new(&cfg, &sp, &d, &diag);
	cordon_daemon_config_done(&cfg);
	if (r < 0) {
		fprintf(stderr, "daemon child: %s: %s\n", diag.step, diag.message);
		_exit(10);
	}
	if (!webhook_port) {
		CHILD_CHECK_ERRNO(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), EPERM);
		_exit(0);
	}
	/* The webhook's port: allowed. */
	CHILD_CHECK((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	CHILD_CHECK(connect_to(fd, webhook_port) == 0);
	close(fd);
	/* Another port that listens on the same address: Landlock says no. */
	CHILD_CHECK((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	CHILD_CHECK_ERRNO(connect_to(fd, other_port), EACCES);
	close(fd);
	/* Other families: seccomp says no. */
	CHILD_CHECK_ERRNO(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), EPERM);
	CHILD_CHECK_ERRNO(socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0), EPERM);
	fprintf(stderr, "daemon child: only the webhook's port is reachable\n");
	_exit(0);
}

static int run_daemon(uint16_t webhook_port, uint16_t other_port)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		daemon_child(webhook_port, other_port);
	st = cordon_test_wait(pid);
	assert_true(st >= 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
}

static int setup(void **state_)
{
	int fd;

	(void)state_;
	snprintf(base, sizeof(base), "/tmp/cordon-sec-webhook-XXXXXX");
	assert_non_null(mkdtemp(base));
	assert_int_equal(chmod(base, 0755), 0);
	snprintf(state, sizeof(state), "%s/state", base);
	snprintf(runtime, sizeof(runtime), "%s/run", base);
	snprintf(profiles, sizeof(profiles), "%s/profiles", base);
	snprintf(secret, sizeof(secret), "%s/webhook.secret", base);
	assert_int_equal(mkdir(profiles, 0755), 0);
	fd = open(secret, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789abcdef0123456789\n", 27), 27);
	close(fd);
	return 0;
}

static int teardown(void **state_)
{
	(void)state_;
	cordon_test_rm_rf(base);
	return 0;
}

static void test_webhook_port_only(void **state_)
{
	uint16_t a, b;
	int la, lb;

	(void)state_;
	la = listener(&a);
	lb = listener(&b);
	/* Both ports take connections from an unconfined process. */
	{
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		assert_int_equal(connect_to(fd, b), 0);
		close(fd);
	}
	assert_int_equal(run_daemon(a, b), 0);
	close(la);
	close(lb);
}

static void test_no_webhook_no_socket(void **state_)
{
	(void)state_;
	assert_int_equal(run_daemon(0, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_webhook_port_only),
		cmocka_unit_test(test_no_webhook_no_socket),
	};
	int abi;

	cordon_test_require_root();
	if (getpwuid(CORDON_BROKER_PRIVATE_ID) || getgrgid(CORDON_BROKER_PRIVATE_ID))
		cordon_test_skip("the private id %u is in the user database here", CORDON_BROKER_PRIVATE_ID);
	abi = cordon_landlock_abi();
	if (abi < 4)
		cordon_test_skip("Landlock ABI %d: TCP connect rules need ABI 4 (Linux 6.7)", abi);
	return cmocka_run_group_tests(tests, setup, teardown);
}
